// SPDX-License-Identifier: GPL-2.0
/*
 * lnet_genl_send_scalar_list(): the key tables Lustre's modules send ahead
 * of their generic netlink replies (<uapi/linux/lnet/lnet-nl.h>). In C
 * because genlmsg_put(), nla_nest_start() and nla_put_*() are inlines.
 */
#include <linux/export.h>
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
