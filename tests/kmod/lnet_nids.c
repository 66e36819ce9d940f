// SPDX-License-Identifier: GPL-2.0
/*
 * lnet_nids: calls lnet.ko's local NID exports as Lustre's targets, MGC
 * and netlink code do. At load, with LNet configured (tests/vm/lnet_nids.sh):
 * LNetIsPeerLocal and LNetHasLocalNet, true and false; LNetFetchNIDs over
 * every NID and per net, a callback that fills up (its error ends the
 * walk and is returned) and one returning a positive value;
 * lnet_genl_send_scalar_list's message parsed back attribute by attribute,
 * and refused whole (message untouched) at every size too small, without
 * data, with an empty table and with tables that nest in a loop. Then it
 * registers a NID update callback (twice with one key: the second
 * replaces the first) that logs each update and checks it against
 * LNetFetchNIDs, called from inside the callback.
 *
 * Parameters: expect= runs the LNetFetchNIDs checks against a list of NIDs
 * ("0@lo 10.1.0.1@tcp ..."; a write fails on a mismatch), unregister=1
 * unregisters the callback; updates and failures count.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/skbuff.h>
#include <net/genetlink.h>
#include <linux/lnet/api.h>
#include <linux/lnet/lib-lnet.h>

#define MAX_NIDS	16
#define LINE		(MAX_NIDS * LNET_NIDSTR_SIZE)

static char *me = "";
module_param(me, charp, 0444);
MODULE_PARM_DESC(me, "one of this node's NIDs");
static char *other = "";
module_param(other, charp, 0444);
MODULE_PARM_DESC(other, "a NID of another node, on a local net");
static char *notme = "";
module_param(notme, charp, 0444);
MODULE_PARM_DESC(notme, "a NID on a net this node does not have");
static int updates;
module_param(updates, int, 0444);
MODULE_PARM_DESC(updates, "NID updates received");
static int failures;
module_param(failures, int, 0444);
MODULE_PARM_DESC(failures, "checks failed after load");

static bool lnet_up;
static int reg_key;	/* the registration's cb_data */

#define FAIL(fmt, ...) do {						\
	pr_err("lnet_nids: FAIL " fmt "\n", ##__VA_ARGS__);		\
	failures++;							\
} while (0)

static __u32 nid_net(const struct lnet_nid *nid)
{
	return LNET_MKNET(nid->nid_type, be16_to_cpu(nid->nid_num));
}

/* What LNetFetchNIDs gave: up to max NIDs, then rc_full. */
struct collect {
	int max;
	int rc_full;
	int calls;
	int n;
	struct lnet_nid nids[MAX_NIDS];
};

static int collect_cb(void *data, struct lnet_nid *nid)
{
	struct collect *c = data;

	c->calls++;
	if (c->n >= c->max || c->n >= MAX_NIDS)
		return c->rc_full;
	c->nids[c->n++] = *nid;
	return 0;
}

static void join(char *line, const struct lnet_nid *nids, int n)
{
	char s[LNET_NIDSTR_SIZE];
	int i;

	line[0] = '\0';
	for (i = 0; i < n; i++) {
		libcfs_nidstr_r(&nids[i], s, sizeof(s));
		if (i)
			strlcat(line, " ", LINE);
		strlcat(line, s, LINE);
	}
}

/* The NIDs LNetFetchNIDs gives for net, as "a b c"; its rc. */
static int fetch(__u32 net, char *line)
{
	struct collect *c = kzalloc(sizeof(*c), GFP_KERNEL);
	int rc;

	if (!c)
		return -ENOMEM;
	c->max = MAX_NIDS;
	c->rc_full = -E2BIG;
	rc = LNetFetchNIDs(collect_cb, net, c);
	if (rc == 0 && c->calls != c->n)
		rc = -EPROTO;
	join(line, c->nids, c->n);
	kfree(c);
	return rc;
}

/*
 * Checks LNetFetchNIDs, LNetIsPeerLocal and LNetHasLocalNet against the
 * NIDs in want, in LNetFetchNIDs' order. 0 or -EINVAL.
 */
static int check_nids(const char *want)
{
	struct lnet_nid nids[MAX_NIDS];
	char *copy, *p, *tok, *got, *sub;
	int n = 0, i, j, rc, bad = 0;

	copy = kstrdup(want, GFP_KERNEL);
	got = kzalloc(LINE, GFP_KERNEL);
	sub = kzalloc(LINE, GFP_KERNEL);
	if (!copy || !got || !sub) {
		rc = -ENOMEM;
		goto out;
	}
	p = strim(copy);
	while ((tok = strsep(&p, " ")) && n < MAX_NIDS) {
		if (!*tok)
			continue;
		if (libcfs_strnid(&nids[n], tok)) {
			pr_err("lnet_nids: bad NID '%s'\n", tok);
			rc = -EINVAL;
			goto out;
		}
		n++;
	}
	join(sub, nids, n);
	rc = fetch(LNET_NET_ANY, got);
	if (rc || strcmp(got, sub)) {
		pr_err("lnet_nids: FAIL LNetFetchNIDs(any) = %d '%s', want '%s'\n",
		       rc, got, sub);
		bad++;
	}
	for (i = 0; i < n; i++) {
		struct lnet_nid sel[MAX_NIDS];
		int k = 0;

		if (!LNetIsPeerLocal(&nids[i])) {
			pr_err("lnet_nids: FAIL LNetIsPeerLocal(%s) false\n",
			       libcfs_nidstr(&nids[i]));
			bad++;
		}
		if (LNetHasLocalNet(nid_net(&nids[i])) != 1) {
			pr_err("lnet_nids: FAIL LNetHasLocalNet(net of %s) not 1\n",
			       libcfs_nidstr(&nids[i]));
			bad++;
		}
		/* Per net, the same NIDs in the same order. */
		for (j = 0; j < n; j++)
			if (nid_net(&nids[j]) == nid_net(&nids[i]))
				sel[k++] = nids[j];
		join(sub, sel, k);
		rc = fetch(nid_net(&nids[i]), got);
		if (rc || strcmp(got, sub)) {
			pr_err("lnet_nids: FAIL LNetFetchNIDs(net of %s) = %d '%s', want '%s'\n",
			       libcfs_nidstr(&nids[i]), rc, got, sub);
			bad++;
		}
	}
	rc = bad ? -EINVAL : 0;
	if (!bad)
		pr_info("lnet_nids: NIDs as expected: %s\n", want);
out:
	kfree(copy);
	kfree(got);
	kfree(sub);
	return rc;
}

static int expect_set(const char *val, const struct kernel_param *kp)
{
	int rc = check_nids(val);

	if (rc)
		failures++;
	return rc;
}

static const struct kernel_param_ops expect_ops = {
	.set = expect_set,
};
module_param_cb(expect, &expect_ops, NULL, 0200);
MODULE_PARM_DESC(expect, "check LNetFetchNIDs & co against these NIDs");

static int replaced_cb(void *data, struct nid_update_info *nui)
{
	FAIL("the callback a second registration replaced was called");
	return 0;
}

static int update_cb(void *data, struct nid_update_info *nui)
{
	char *line = kzalloc(LINE, GFP_KERNEL);
	char *fetched = kzalloc(LINE, GFP_KERNEL);
	struct lnet_nid nids[MAX_NIDS];
	struct lnet_nid net = { .nid_type = nui->nui_net >> 16,
				.nid_num = cpu_to_be16(nui->nui_net & 0xffff) };
	char netstr[LNET_NIDSTR_SIZE];
	unsigned int i;
	int rc;

	if (!line || !fetched) {
		FAIL("out of memory in the update callback");
		goto out;
	}
	if (data != &reg_key)
		FAIL("update callback with data %p, not %p", data, &reg_key);
	if (nui->nui_count > MAX_NIDS) {
		FAIL("update of %u NIDs", nui->nui_count);
		goto out;
	}
	for (i = 0; i < nui->nui_count; i++) {
		struct lnet_nid *nid = genradix_ptr(&nui->nui_rdx, i);

		if (!nid) {
			FAIL("update NID %u missing", i);
			goto out;
		}
		nids[i] = *nid;
		if (nid_net(nid) != nui->nui_net)
			FAIL("update NID %s not on its net",
			     libcfs_nidstr(nid));
	}
	join(line, nids, nui->nui_count);
	/*
	 * No LNet lock is held: LNetFetchNIDs gives the net's NIDs now,
	 * which the update must be (0@lo aside, never told).
	 */
	rc = fetch(nui->nui_net, fetched);
	if (rc || strcmp(line, fetched))
		FAIL("update '%s' but LNetFetchNIDs = %d '%s'", line, rc,
		     fetched);
	updates++;
	/* The net's name: what follows '@' in a NID of it. */
	libcfs_nidstr_r(&net, netstr, sizeof(netstr));
	pr_info("lnet_nids: update %d net=%s count=%u nids=%s\n", updates,
		strchr(netstr, '@') ? strchr(netstr, '@') + 1 : netstr,
		nui->nui_count, line);
out:
	kfree(line);
	kfree(fetched);
	return 0;
}

static int unregister_set(const char *val, const struct kernel_param *kp)
{
	LNetUnRegisterNIDUpdates(&reg_key);
	pr_info("lnet_nids: unregistered\n");
	return 0;
}

static const struct kernel_param_ops unregister_ops = {
	.set = unregister_set,
};
module_param_cb(unregister, &unregister_ops, NULL, 0200);
MODULE_PARM_DESC(unregister, "unregister the NID update callback");

static int check_local(void)
{
	struct lnet_nid nid;
	struct collect c;
	int rc;

	if (libcfs_strnid(&nid, me) || !LNetIsPeerLocal(&nid))
		FAIL("LNetIsPeerLocal(%s) false", me);
	if (LNetHasLocalNet(nid_net(&nid)) != 1)
		FAIL("LNetHasLocalNet(net of %s) not 1", me);
	if (libcfs_strnid(&nid, "0@lo") || !LNetIsPeerLocal(&nid))
		FAIL("LNetIsPeerLocal(0@lo) false");
	if (LNetHasLocalNet(nid_net(&nid)) != 1)
		FAIL("LNetHasLocalNet(lo) not 1");
	if (libcfs_strnid(&nid, other) || LNetIsPeerLocal(&nid))
		FAIL("LNetIsPeerLocal(%s) true", other);
	if (libcfs_strnid(&nid, notme) || LNetIsPeerLocal(&nid))
		FAIL("LNetIsPeerLocal(%s) true", notme);
	if (LNetHasLocalNet(nid_net(&nid)) != 0)
		FAIL("LNetHasLocalNet(net of %s) not 0", notme);
	if (LNetHasLocalNet(LNET_NET_ANY) != 0)
		FAIL("LNetHasLocalNet(LNET_NET_ANY) not 0");

	/* A collector that fills up: its error ends the walk. */
	memset(&c, 0, sizeof(c));
	c.max = 1;
	c.rc_full = -ENOSPC;
	rc = LNetFetchNIDs(collect_cb, LNET_NET_ANY, &c);
	if (rc != -ENOSPC || c.n != 1 || c.calls != 2)
		FAIL("LNetFetchNIDs, room for 1: rc %d, %d NIDs in %d calls",
		     rc, c.n, c.calls);
	/* A positive value does not stop it; the last one is returned. */
	memset(&c, 0, sizeof(c));
	c.max = 0;
	c.rc_full = 7;
	rc = LNetFetchNIDs(collect_cb, LNET_NET_ANY, &c);
	if (rc != 7 || c.calls < 2)
		FAIL("LNetFetchNIDs, callback returning 7: rc %d in %d calls",
		     rc, c.calls);
	/* A net we do not have: no call. */
	memset(&c, 0, sizeof(c));
	c.max = MAX_NIDS;
	rc = LNetFetchNIDs(collect_cb, nid_net(&nid), &c);
	if (rc != 0 || c.calls != 0)
		FAIL("LNetFetchNIDs(net of %s): rc %d in %d calls", notme, rc,
		     c.calls);
	return failures ? -EINVAL : 0;
}

/* lnet_genl_send_scalar_list: a top table with a nested one. */
static const struct ln_key_list nested_keys = {
	.lkl_maxattr = 2,
	.lkl_list = {
		[1] = { .lkp_value = "nid", .lkp_data_type = NLA_STRING },
		[2] = { .lkp_value = "status", .lkp_key_format = LNKF_FLOW,
			.lkp_data_type = NLA_U32 },
	},
};

static const struct ln_key_list top_keys = {
	.lkl_maxattr = 3,
	.lkl_list = {
		[1] = { .lkp_value = "name", .lkp_data_type = NLA_STRING },
		[2] = { .lkp_value = "nets",
			.lkp_key_format = LNKF_SEQUENCE | LNKF_MAPPING,
			.lkp_data_type = NLA_NESTED },
		[3] = { .lkp_data_type = NLA_U32 },	/* no name */
	},
};

/* Two tables whose nested keys lead back to the second, without end. */
static const struct ln_key_list loop_keys = {
	.lkl_maxattr = 2,
	.lkl_list = {
		[1] = { .lkp_value = "a", .lkp_data_type = NLA_NESTED },
		[2] = { .lkp_value = "b", .lkp_data_type = NLA_NESTED },
	},
};

static const struct ln_key_list empty_keys = { .lkl_maxattr = 0 };

static const struct nla_policy key_policy[LN_SCALAR_MAX + 1] = {
	[LN_SCALAR_ATTR_LIST]		= { .type = NLA_NESTED },
	[LN_SCALAR_ATTR_LIST_SIZE]	= { .type = NLA_U16 },
	[LN_SCALAR_ATTR_INDEX]		= { .type = NLA_U16 },
	[LN_SCALAR_ATTR_NLA_TYPE]	= { .type = NLA_U16 },
	[LN_SCALAR_ATTR_VALUE]		= { .type = NLA_NUL_STRING },
	[LN_SCALAR_ATTR_KEY_FORMAT]	= { .type = NLA_U16 },
};

static struct genl_family test_family = {
	.name		= "lnet_nids",
	.version	= 3,
	.hdrsize	= 0,
};

#define GENL_CMD	5
#define GENL_PORT	4242
#define GENL_SEQ	77

/*
 * Checks the LN_SCALAR_ATTR_LIST nest list against table keys; nested
 * keys take *next in turn. 0 or the number of differences.
 */
static int check_table(const struct nlattr *list, const struct ln_key_list *keys,
		       const struct ln_key_list **next)
{
	const struct nlattr *key;
	int rem, count = 0, bad = 0;

	nla_for_each_nested(key, list, rem) {
		struct nlattr *tb[LN_SCALAR_MAX + 1];
		const struct ln_key_props *p;

		count++;
		if (count > keys->lkl_maxattr || nla_type(key) != count) {
			pr_err("lnet_nids: FAIL key nest type %d at %d\n",
			       nla_type(key), count);
			return bad + 1;
		}
		p = &keys->lkl_list[count];
		if (nla_parse_nested(tb, LN_SCALAR_MAX, key, key_policy, NULL)) {
			pr_err("lnet_nids: FAIL key %d does not parse\n", count);
			return bad + 1;
		}
		if (!!tb[LN_SCALAR_ATTR_LIST_SIZE] != (count == 1) ||
		    (tb[LN_SCALAR_ATTR_LIST_SIZE] &&
		     nla_get_u16(tb[LN_SCALAR_ATTR_LIST_SIZE]) != keys->lkl_maxattr))
			bad++;
		if (!tb[LN_SCALAR_ATTR_INDEX] ||
		    nla_get_u16(tb[LN_SCALAR_ATTR_INDEX]) != count)
			bad++;
		if (!!tb[LN_SCALAR_ATTR_VALUE] != !!p->lkp_value ||
		    (p->lkp_value &&
		     strcmp(nla_data(tb[LN_SCALAR_ATTR_VALUE]), p->lkp_value)))
			bad++;
		if (!!tb[LN_SCALAR_ATTR_KEY_FORMAT] != !!p->lkp_key_format ||
		    (p->lkp_key_format &&
		     nla_get_u16(tb[LN_SCALAR_ATTR_KEY_FORMAT]) != p->lkp_key_format))
			bad++;
		if (!tb[LN_SCALAR_ATTR_NLA_TYPE] ||
		    nla_get_u16(tb[LN_SCALAR_ATTR_NLA_TYPE]) != p->lkp_data_type)
			bad++;
		if (tb[LN_SCALAR_ATTR_INT_VALUE])
			bad++;
		if (!!tb[LN_SCALAR_ATTR_LIST] != (p->lkp_data_type == NLA_NESTED)) {
			bad++;
		} else if (tb[LN_SCALAR_ATTR_LIST]) {
			const struct ln_key_list *sub = *next;

			if (!sub) {
				bad++;
			} else {
				(*next) = NULL;
				bad += check_table(tb[LN_SCALAR_ATTR_LIST], sub,
						   next);
			}
		}
		if (bad) {
			pr_err("lnet_nids: FAIL key %d of a %d-key table\n",
			       count, keys->lkl_maxattr);
			return bad;
		}
	}
	if (count != keys->lkl_maxattr || rem) {
		pr_err("lnet_nids: FAIL %d keys of %d, %d bytes left\n", count,
		       keys->lkl_maxattr, rem);
		bad++;
	}
	return bad;
}

/* Sends data into a message with room bytes free after pad bytes. */
static int send_in(int room, const struct ln_key_list **data,
		   struct sk_buff **out)
{
	struct sk_buff *skb = alloc_skb(4096, GFP_KERNEL);
	int pad, rc;

	*out = NULL;
	if (!skb)
		return -ENOMEM;
	pad = skb_tailroom(skb) - room;
	if (pad < 0) {
		kfree_skb(skb);
		return -ENOMEM;
	}
	skb_put_zero(skb, pad);
	rc = lnet_genl_send_scalar_list(skb, GENL_PORT, GENL_SEQ, &test_family,
					NLM_F_MULTI, GENL_CMD, data);
	if (rc < 0 && skb->len != pad) {
		pr_err("lnet_nids: FAIL refused message left %u bytes, not %d\n",
		       skb->len, pad);
		rc = -EFAULT;
	}
	skb_pull(skb, pad);
	*out = skb;
	return rc;
}

static int check_genl(void)
{
	const struct ln_key_list *all[] = { &top_keys, &nested_keys, NULL };
	const struct ln_key_list *none[] = { NULL };
	const struct ln_key_list *empty[] = { &empty_keys, NULL };
	const struct ln_key_list *loop[] = { &top_keys, &loop_keys, NULL };
	struct nlattr *tb[LN_SCALAR_MAX + 1];
	const struct ln_key_list *next;
	struct genlmsghdr *gnlh;
	struct nlmsghdr *nlh;
	struct sk_buff *skb;
	int len, room, rc, bad = 0;

	rc = send_in(2048, all, &skb);
	if (rc) {
		FAIL("lnet_genl_send_scalar_list: %d", rc);
		kfree_skb(skb);
		return -EINVAL;
	}
	len = skb->len;
	nlh = (struct nlmsghdr *)skb->data;
	gnlh = nlmsg_data(nlh);
	if (nlh->nlmsg_len != len || nlh->nlmsg_seq != GENL_SEQ ||
	    nlh->nlmsg_pid != GENL_PORT || nlh->nlmsg_flags != NLM_F_MULTI ||
	    gnlh->cmd != GENL_CMD || gnlh->version != test_family.version) {
		FAIL("netlink header: len %u of %d, seq %u, pid %u, flags %#x, cmd %u, version %u",
		     nlh->nlmsg_len, len, nlh->nlmsg_seq, nlh->nlmsg_pid,
		     nlh->nlmsg_flags, gnlh->cmd, gnlh->version);
		bad++;
	} else if (nla_parse(tb, LN_SCALAR_MAX, genlmsg_data(gnlh),
			     genlmsg_len(gnlh), key_policy, NULL) ||
		   !tb[LN_SCALAR_ATTR_LIST]) {
		FAIL("no key table in the message");
		bad++;
	} else {
		next = &nested_keys;
		if (check_table(tb[LN_SCALAR_ATTR_LIST], &top_keys, &next) ||
		    next) {
			FAIL("key table differs");
			bad++;
		}
	}
	kfree_skb(skb);

	/* Every size too small: refused whole, the message untouched. */
	for (room = 0; room < len; room++) {
		rc = send_in(room, all, &skb);
		kfree_skb(skb);
		if (rc != -EMSGSIZE) {
			FAIL("%d bytes of room for %d: rc %d", room, len, rc);
			bad++;
			break;
		}
	}
	rc = send_in(len, all, &skb);
	kfree_skb(skb);
	if (rc) {
		FAIL("exactly %d bytes of room: rc %d", len, rc);
		bad++;
	}

	rc = send_in(2048, none, &skb);
	kfree_skb(skb);
	if (rc != -EINVAL) {
		FAIL("no table: rc %d", rc);
		bad++;
	}
	rc = send_in(2048, empty, &skb);
	kfree_skb(skb);
	if (rc != -ERANGE) {
		FAIL("empty table: rc %d", rc);
		bad++;
	}
	rc = send_in(4000, loop, &skb);
	kfree_skb(skb);
	if (rc != -ELOOP) {
		FAIL("looping tables: rc %d", rc);
		bad++;
	}
	if (!bad)
		pr_info("lnet_genl_send_scalar_list: %d-byte message as expected\n",
			len);
	return bad ? -EINVAL : 0;
}

static int __init lnet_nids_init(void)
{
	int rc;

	rc = LNetNIInit(LNET_PID_LUSTRE);
	if (rc < 0) {
		pr_err("lnet_nids: LNetNIInit: %d\n", rc);
		return rc;
	}
	lnet_up = true;
	rc = check_local();
	if (!rc)
		rc = check_genl();
	if (!rc)
		rc = LNetRegisterNIDUpdates(replaced_cb, &reg_key);
	if (!rc)
		rc = LNetRegisterNIDUpdates(update_cb, &reg_key);
	if (rc || failures) {
		LNetUnRegisterNIDUpdates(&reg_key);
		LNetNIFini();
		return rc ?: -EINVAL;
	}
	pr_info("lnet_nids: all checks passed\n");
	return 0;
}

static void __exit lnet_nids_exit(void)
{
	LNetUnRegisterNIDUpdates(&reg_key);
	if (lnet_up)
		LNetNIFini();
	pr_info("lnet_nids: unloaded: updates=%d failures=%d\n", updates,
		failures);
}

module_init(lnet_nids_init);
module_exit(lnet_nids_exit);
MODULE_DESCRIPTION("lnet-rs test: local NIDs, NID updates and netlink key tables from C");
MODULE_LICENSE("GPL");
