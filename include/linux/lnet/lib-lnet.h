/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: the few functions of Lustre's <linux/lnet/lib-lnet.h> (LNet's
 * internal header) that Lustre's upper layers and LNDs call, exported by
 * lnet.ko.
 */
#ifndef __LNET_RS_LIB_LNET_H__
#define __LNET_RS_LIB_LNET_H__

#include <linux/lnet/api.h>
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
 * Not exported: lnet_genl_send_scalar_list(msg, portid, seq, family,
 * flags, cmd, data). Lustre's modules use it to describe the keys of their
 * own generic netlink replies to Lustre's YAML netlink tools (lnetctl,
 * lctl over liblnetconfig). Its argument, struct ln_key_list, and the
 * attributes it writes (LN_SCALAR_ATTR_*) are that netlink schema, from
 * Lustre's <uapi/linux/lnet/lnet-nl.h>. lnet-rs has no generic netlink
 * interface (its tools use the /dev/lnet ioctls), so it carries neither;
 * the function comes with that schema when lnet-rs speaks netlink.
 */

#endif /* __LNET_RS_LIB_LNET_H__ */
