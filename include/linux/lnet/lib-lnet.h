/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: the few functions of Lustre's <linux/lnet/lib-lnet.h> (LNet's
 * internal header) that Lustre's upper layers and LNDs call, exported by
 * lnet.ko.
 */
#ifndef __LNET_RS_LIB_LNET_H__
#define __LNET_RS_LIB_LNET_H__

#include <linux/generic-radix-tree.h>
#include <net/genetlink.h>
#include <linux/lnet/api.h>
#include <uapi/linux/lnet/lnet-nl.h>
#include <uapi/linux/lnet/lnet-types.h>
#include <uapi/linux/lnet/nidstr.h>

struct lnet_ni;

#ifndef CFS_CPT_ANY
#define CFS_CPT_ANY	(-1)
#endif

/*
 * The CPU partition that serves a NID. lnet-rs has one partition per
 * online NUMA node, numbered as the node: an LND's ni answers its device's
 * node; otherwise the NID is hashed over the online nodes as Lustre hashes
 * over its partitions. 0 on a single node; CFS_CPT_ANY if the node map
 * changed during the call.
 */
int lnet_cpt_of_nid(lnet_nid_t nid, struct lnet_ni *ni);

/*
 * The node's message counters, summed; -ENODEV (counters zeroed) while
 * LNet is not running. Lustre does not export it; lnet.ko does.
 */
int lnet_counters_get(struct lnet_counters *counters);

/*
 * Writes, as one generic netlink message of family's command cmd, the key
 * tables that describe the attributes of the replies that follow it, for
 * Lustre's YAML netlink tools (lnetctl, lctl over liblnetconfig). data is
 * an array of tables ended by NULL: data[0] is the top table, and each
 * NLA_NESTED key takes the next table of the array as its own, depth
 * first. 0 or a negative errno: -EINVAL without data[0], -ERANGE for a
 * table of no keys, -EMSGSIZE when msg is too small; on error msg is left
 * as it was. The layout is in <uapi/linux/lnet/lnet-nl.h>.
 */
int lnet_genl_send_scalar_list(struct sk_buff *msg, u32 portid, u32 seq,
			       const struct genl_family *family, int flags,
			       u8 cmd, const struct ln_key_list *data[]);

/*
 * What a callback of LNetRegisterNIDUpdates() is told when the NIs of a
 * net change: the local NIDs of net nui_net now (nui_count of them, 0@lo
 * left out, read with genradix_ptr(&nui->nui_rdx, i)), or nui_count 0
 * when the net has no NI left. Lustre's layout.
 */
struct nid_update_info {
	GENRADIX(struct lnet_nid) nui_rdx;
	unsigned int		  nui_count;
	__u32			  nui_net;
};

#endif /* __LNET_RS_LIB_LNET_H__ */
