/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: the generic netlink schema of LNet's YAML tools, with the names,
 * values and layouts of Lustre's <uapi/linux/lnet/lnet-nl.h>. Lustre's
 * modules describe the keys of their own netlink replies with it
 * (lnet_genl_send_scalar_list(), <linux/lnet/lib-lnet.h>), and Lustre's
 * tools read those descriptions back, so every value here is ABI.
 */
#ifndef __LNET_RS_NL_H__
#define __LNET_RS_NL_H__

#include <linux/types.h>

/* How the YAML tools lay out a key: bit flags. */
enum lnet_nl_key_format {
	LNKF_FLOW		= 1,	/* flow style, else block style */
	LNKF_MAPPING		= 2,	/* a mapping ... */
	LNKF_SEQUENCE		= 4,	/* ... or a sequence */
};

/*
 * The attributes of a key table. A table is an LN_SCALAR_ATTR_LIST nest
 * holding one nest per key, numbered from 1; each key's nest holds:
 *   LN_SCALAR_ATTR_LIST_SIZE	u16, the number of keys (first key only)
 *   LN_SCALAR_ATTR_INDEX	u16, the key's netlink attribute number
 *   LN_SCALAR_ATTR_VALUE	string, the key's name (when it has one)
 *   LN_SCALAR_ATTR_KEY_FORMAT	u16, LNKF_* (when not 0)
 *   LN_SCALAR_ATTR_NLA_TYPE	u16, the NLA_* type of the key's values
 *   LN_SCALAR_ATTR_LIST	the nested table, for an NLA_NESTED key
 * LN_SCALAR_ATTR_INT_VALUE (s64) is a key's numeric value.
 */
enum lnet_nl_scalar_attrs {
	LN_SCALAR_ATTR_UNSPEC = 0,
	LN_SCALAR_ATTR_PAD = LN_SCALAR_ATTR_UNSPEC,

	LN_SCALAR_ATTR_LIST,		/* 1 */
	LN_SCALAR_ATTR_LIST_SIZE,	/* 2 */
	LN_SCALAR_ATTR_INDEX,		/* 3 */
	LN_SCALAR_ATTR_NLA_TYPE,	/* 4 */
	LN_SCALAR_ATTR_VALUE,		/* 5 */
	LN_SCALAR_ATTR_INT_VALUE,	/* 6 */
	LN_SCALAR_ATTR_KEY_FORMAT,	/* 7 */

	__LN_SCALAR_ATTR_MAX_PLUS_ONE,
};

#define LN_SCALAR_MAX (__LN_SCALAR_ATTR_MAX_PLUS_ONE - 1)

/* One key: its name, its LNKF_* format and the NLA_* type of its values. */
struct ln_key_props {
	char			*lkp_value;
	__u16			lkp_key_format;
	__u16			lkp_data_type;
};

/* A table of lkl_maxattr keys, in lkl_list[1..lkl_maxattr] (0 unused). */
struct ln_key_list {
	__u16			lkl_maxattr;
	struct ln_key_props	lkl_list[];
};

#endif /* __LNET_RS_NL_H__ */
