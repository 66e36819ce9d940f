// SPDX-License-Identifier: GPL-2.0
/*
 * lnet_genl_send_scalar_list(): the key tables Lustre's modules send ahead
 * of their generic netlink replies (<uapi/linux/lnet/lnet-nl.h>). In C
 * because genlmsg_put(), nla_nest_start() and nla_put_*() are inlines.
 */
#include <linux/export.h>
#include <linux/module.h>
#include <net/genetlink.h>
#include <linux/lnet/lib-lnet.h>

/*
 * Tables nest this deep at most. Lustre's own are two or three deep; a
 * bound keeps a table array whose NLA_NESTED keys come back round to an
 * earlier table (see below) from recursing without end.
 */
#define LNET_GENL_MAX_DEPTH	16

/*
 * Writes table data[idx] and, depth first, the tables its NLA_NESTED keys
 * take. Returns the index of the last table written (a key after a nested
 * one takes the table after that), or a negative errno. A NLA_NESTED key
 * past the array's NULL end writes no table and returns 0, so that the
 * next one takes data[1] again: Lustre's callers see the same walk.
 */
static int lnet_genl_put_table(struct sk_buff *msg,
			       const struct ln_key_list *data[], u16 idx,
			       unsigned int depth)
{
	const struct ln_key_list *list = data[idx];
	const struct ln_key_props *props;
	struct nlattr *table;
	u16 key;

	if (!list)
		return 0;
	if (!list->lkl_maxattr)
		return -ERANGE;
	if (depth > LNET_GENL_MAX_DEPTH)
		return -ELOOP;
	props = list->lkl_list;

	table = nla_nest_start(msg, LN_SCALAR_ATTR_LIST);
	if (!table)
		return -EMSGSIZE;

	/* Keys are numbered from 1: props[0] is not a key. */
	for (key = 1; key <= list->lkl_maxattr; key++) {
		const struct ln_key_props *p = &props[key];
		struct nlattr *nest = nla_nest_start(msg, key);

		/*
		 * Lustre ignores a failed nla_put_*() and may end with a
		 * message missing attributes; every one is checked here, so
		 * a message is either whole or refused with -EMSGSIZE.
		 */
		if (!nest)
			return -EMSGSIZE;
		if (key == 1 &&
		    nla_put_u16(msg, LN_SCALAR_ATTR_LIST_SIZE,
				list->lkl_maxattr))
			return -EMSGSIZE;
		if (nla_put_u16(msg, LN_SCALAR_ATTR_INDEX, key))
			return -EMSGSIZE;
		if (p->lkp_value &&
		    nla_put_string(msg, LN_SCALAR_ATTR_VALUE, p->lkp_value))
			return -EMSGSIZE;
		if (p->lkp_key_format &&
		    nla_put_u16(msg, LN_SCALAR_ATTR_KEY_FORMAT,
				p->lkp_key_format))
			return -EMSGSIZE;
		if (nla_put_u16(msg, LN_SCALAR_ATTR_NLA_TYPE, p->lkp_data_type))
			return -EMSGSIZE;
		if (p->lkp_data_type == NLA_NESTED) {
			int rc;

			idx++;
			rc = lnet_genl_put_table(msg, data, idx, depth + 1);
			if (rc < 0)
				return rc;
			idx = rc;
		}
		nla_nest_end(msg, nest);
	}
	nla_nest_end(msg, table);
	return idx;
}

int lnet_genl_send_scalar_list(struct sk_buff *msg, u32 portid, u32 seq,
			       const struct genl_family *family, int flags,
			       u8 cmd, const struct ln_key_list *data[])
{
	void *hdr;
	int rc;

	if (!msg || !family || !data || !data[0])
		return -EINVAL;

	hdr = genlmsg_put(msg, portid, seq, family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;

	rc = lnet_genl_put_table(msg, data, 0, 0);
	if (rc < 0) {
		/* The message goes, whatever part of it was written. */
		genlmsg_cancel(msg, hdr);
		return rc;
	}
	genlmsg_end(msg, hdr);
	return 0;
}
EXPORT_SYMBOL_GPL(lnet_genl_send_scalar_list);

/*
 * Lustre's "lnet" generic netlink family, as lnet-rs answers it: the
 * family, its commands and multicast groups are static C data; genl.rs
 * handles LNET_CMD_CONFIGURE, LNET_CMD_NETS, LNET_CMD_PEERS,
 * LNET_CMD_PING (ping, discover) and LNET_CMD_PEER_DIST (which_nid). Any
 * other command finds no operation and gets -EOPNOTSUPP from the netlink
 * core, so Lustre's lnetctl falls back to its ioctls.
 */

/* A request as genl.rs reads it (kapi/genl.rs `Request`). */
struct lnet_genl_req {
	const void	*lgr_attrs;	/* the attributes after the header */
	u32		 lgr_len;
	u16		 lgr_flags;	/* nlmsg_flags */
	u8		 lgr_cmd;
	u8		 lgr_version;	/* the request's genl version */
	const char	*lgr_errmsg;	/* out: a static message, or NULL */
};

/*
 * One call of a dump, or the reply of a request that answers with
 * several messages (kapi/genl.rs `Dump`).
 */
struct lnet_genl_dump {
	struct sk_buff	*lgd_skb;
	const void	*lgd_attrs;	/* the request's attributes */
	u32		 lgd_len;
	u32		 lgd_portid;
	u32		 lgd_seq;
	u32		 lgd_pad0;
	u64		 lgd_state;	/* genl.rs's, kept in cb->args[0] */
	const char	*lgd_errmsg;	/* out: a static message, or NULL */
	u16		 lgd_flags;	/* the request's nlmsg_flags */
	u8		 lgd_version;	/* the request's genl version */
	u8		 lgd_cmd;
	u8		 lgd_pad[4];
};

int lnet_genl_rs_cmd(struct lnet_genl_req *req);
int lnet_genl_rs_start(struct lnet_genl_req *req, u64 *state);
int lnet_genl_rs_dump(struct lnet_genl_dump *dump);
int lnet_genl_rs_reply(struct lnet_genl_dump *dump);
int lnet_genl_register(void);
void lnet_genl_unregister(void);
int lnet_genl_dump_put(struct lnet_genl_dump *dump, int flags, u8 cmd,
		       const void *data, u32 len);

static struct genl_family lnet_family;

static void lnet_genl_req_init(struct lnet_genl_req *req,
			       const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *gnlh = nlmsg_data(nlh);

	req->lgr_attrs = genlmsg_data(gnlh);
	req->lgr_len = genlmsg_len(gnlh);
	req->lgr_flags = nlh->nlmsg_flags;
	req->lgr_cmd = gnlh->cmd;
	req->lgr_version = gnlh->version;
	req->lgr_errmsg = NULL;
}

static void lnet_genl_dump_init(struct lnet_genl_dump *dump,
				struct sk_buff *skb,
				const struct nlmsghdr *nlh, u32 portid)
{
	const struct genlmsghdr *gnlh = nlmsg_data(nlh);

	memset(dump, 0, sizeof(*dump));
	dump->lgd_skb = skb;
	dump->lgd_attrs = genlmsg_data(gnlh);
	dump->lgd_len = genlmsg_len(gnlh);
	dump->lgd_portid = portid;
	dump->lgd_seq = nlh->nlmsg_seq;
	dump->lgd_flags = nlh->nlmsg_flags;
	dump->lgd_version = gnlh->version;
	dump->lgd_cmd = gnlh->cmd;
}

static void lnet_genl_set_msg(struct netlink_ext_ack *extack, const char *msg)
{
	/* msg is a static string (genl.rs gives &'static CStr). */
	if (extack && msg)
		extack->_msg = msg;
}

static int lnet_genl_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct lnet_genl_req req;
	int rc;

	lnet_genl_req_init(&req, info->nlhdr);
	rc = lnet_genl_rs_cmd(&req);
	lnet_genl_set_msg(info->extack, req.lgr_errmsg);
	return rc;
}

/*
 * A request answered with a multi-part reply (discover): genl.rs writes
 * its messages, which end with NLMSG_DONE as Lustre's do.
 */
static int lnet_genl_reply_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct lnet_genl_dump dump;
	struct sk_buff *reply;
	struct nlmsghdr *nlh;
	int rc;

	reply = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!reply) {
		GENL_SET_ERR_MSG(info, "fail to allocate reply");
		return -ENOMEM;
	}
	lnet_genl_dump_init(&dump, reply, info->nlhdr, info->snd_portid);
	rc = lnet_genl_rs_reply(&dump);
	lnet_genl_set_msg(info->extack, dump.lgd_errmsg);
	if (rc < 0) {
		nlmsg_free(reply);
		return rc;
	}
	nlh = nlmsg_put(reply, info->snd_portid, info->snd_seq, NLMSG_DONE, 0,
			NLM_F_MULTI);
	if (!nlh) {
		nlmsg_free(reply);
		GENL_SET_ERR_MSG(info, "failed to finish message");
		return -EMSGSIZE;
	}
	return genlmsg_reply(reply, info);
}

static int lnet_genl_start(struct netlink_callback *cb)
{
	struct lnet_genl_req req;
	u64 state = 0;
	int rc;

	lnet_genl_req_init(&req, cb->nlh);
	rc = lnet_genl_rs_start(&req, &state);
	lnet_genl_set_msg(cb->extack, req.lgr_errmsg);
	if (rc < 0)
		return rc;
	cb->args[0] = state;
	/* A show's messages go in buffers this big, as Lustre's do. */
	cb->min_dump_alloc = U16_MAX;
	return 0;
}

/*
 * genl.rs returns 0 when the dump is done, 1 when it has more for the next
 * call (it stops only after it wrote something), or a negative errno.
 */
static int lnet_genl_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct lnet_genl_dump dump;
	int rc;

	lnet_genl_dump_init(&dump, skb, cb->nlh, NETLINK_CB(cb->skb).portid);
	dump.lgd_state = cb->args[0];
	rc = lnet_genl_rs_dump(&dump);
	lnet_genl_set_msg(cb->extack, dump.lgd_errmsg);
	cb->args[0] = dump.lgd_state;
	if (rc > 0)
		return skb->len;
	return rc;
}

int lnet_genl_dump_put(struct lnet_genl_dump *dump, int flags, u8 cmd,
		       const void *data, u32 len)
{
	struct sk_buff *skb = dump->lgd_skb;
	void *hdr;

	hdr = genlmsg_put(skb, dump->lgd_portid, dump->lgd_seq, &lnet_family,
			  flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (skb_tailroom(skb) < len) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	skb_put_data(skb, data, len);
	genlmsg_end(skb, hdr);
	return 0;
}

/* Lustre's groups, in its order: lnetctl resolves them by name. */
static const struct genl_multicast_group lnet_mcast_grps[] = {
	{ .name = "ip2net", },
	{ .name = "net", },
	{ .name = "peer", },
	{ .name = "route", },
	{ .name = "ping", },
	{ .name = "discover", },
	{ .name = "cpt-of-nid", },
	{ .name = "dbg-recov", },
	{ .name = "fault", },
	{ .name = "routing", },
	{ .name = "buffers", },
	{ .name = "numa", },
	{ .name = "stats", },
};

static const struct genl_ops lnet_genl_ops[] = {
	{
		.cmd	= 1,	/* LNET_CMD_CONFIGURE */
		.flags	= GENL_ADMIN_PERM,
		.doit	= lnet_genl_doit,
	},
	{
		.cmd	= 2,	/* LNET_CMD_NETS */
		.flags	= GENL_ADMIN_PERM,
		.start	= lnet_genl_start,
		.dumpit	= lnet_genl_dumpit,
		.doit	= lnet_genl_doit,
	},
	{
		.cmd	= 3,	/* LNET_CMD_PEERS: show; add, del, set */
		.flags	= GENL_ADMIN_PERM,
		.start	= lnet_genl_start,
		.dumpit	= lnet_genl_dumpit,
		.doit	= lnet_genl_doit,
	},
	{
		.cmd	= 4,	/* LNET_CMD_ROUTES: show while there is no route */
		.flags	= GENL_ADMIN_PERM,
		.start	= lnet_genl_start,
		.dumpit	= lnet_genl_dumpit,
	},
	{
		.cmd	= 6,	/* LNET_CMD_PING */
		.flags	= GENL_ADMIN_PERM,
		.start	= lnet_genl_start,
		.dumpit	= lnet_genl_dumpit,
		.doit	= lnet_genl_reply_doit,
	},
	{
		.cmd	= 8,	/* LNET_CMD_PEER_DIST */
		.start	= lnet_genl_start,
		.dumpit	= lnet_genl_dumpit,
	},
};

static struct genl_family lnet_family = {
	.name		= "lnet",
	.version	= 5,
	.module		= THIS_MODULE,
	.parallel_ops	= true,
	.netnsok	= true,
	.ops		= lnet_genl_ops,
	.n_ops		= ARRAY_SIZE(lnet_genl_ops),
	.mcgrps		= lnet_mcast_grps,
	.n_mcgrps	= ARRAY_SIZE(lnet_mcast_grps),
	.resv_start_op	= 17,	/* __LNET_CMD_MAX_PLUS_ONE */
};

int lnet_genl_register(void)
{
	BUILD_BUG_ON(sizeof(struct lnet_genl_req) != 24);
	BUILD_BUG_ON(sizeof(struct lnet_genl_dump) != 56);
	return genl_register_family(&lnet_family);
}

void lnet_genl_unregister(void)
{
	genl_unregister_family(&lnet_family);
}
