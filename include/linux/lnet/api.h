/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: the LNet API for upper layers, with the signatures of Lustre's
 * current <linux/lnet/api.h>, exported by lnet.ko with EXPORT_SYMBOL_GPL.
 * What lnet-rs adds is apart, in <linux/lnet/lnet-rs.h>, so that a caller
 * that keeps to this header builds against Lustre's unchanged.
 *
 * Every LNetPut()/LNetGet() that returns 0 ends in exactly one event with
 * unlinked set on an MD whose last operation it was, including when LNet is
 * shut down: success, error or timeout.
 */
#ifndef __LNET_RS_API_H__
#define __LNET_RS_API_H__

#include <uapi/linux/lnet/lnet-types.h>

int LNetNIInit(lnet_pid_t requested_pid);
int LNetNIFini(void);

/* The index'th local process id; -ENOENT past the last NI. */
int LNetGetId(unsigned int index, struct lnet_processid *id, bool large_nids);

/*
 * ERR_PTR() on failure. match_id_in may not be NULL (Lustre dereferences
 * it; lnet-rs refuses it with -EINVAL): LNET_ANY_NID and LNET_PID_ANY
 * match anyone.
 */
struct lnet_me *LNetMEAttach(unsigned int portal,
			     struct lnet_processid *match_id_in,
			     __u64 match_bits_in, __u64 ignore_bits_in,
			     enum lnet_unlink unlink_in,
			     enum lnet_ins_pos pos_in);

/* On failure the ME is unlinked. */
int LNetMDAttach(struct lnet_me *current_in, const struct lnet_md *md_in,
		 enum lnet_unlink unlink_in,
		 struct lnet_handle_md *md_handle_out);

int LNetMDBind(const struct lnet_md *md_in, enum lnet_unlink unlink_in,
	       struct lnet_handle_md *md_handle_out);

/*
 * -ENOENT for a handle of no MD. With no operation on the MD its handler
 * gets an UNLINK event before this returns; otherwise the event of the
 * last operation says unlinked.
 */
int LNetMDUnlink(struct lnet_handle_md md_in);

/*
 * Logs an error, with how many, if MDs live or waiting for their last
 * operation still use handler: its owner is about to go away (Lustre
 * asserts).
 */
void lnet_assert_handler_unused(lnet_handler_t handler);

int LNetPut(struct lnet_nid *self, struct lnet_handle_md md_in,
	    enum lnet_ack_req ack_req_in, struct lnet_processid *target_in,
	    unsigned int portal_in, __u64 match_bits_in,
	    unsigned int offset_in, __u64 hdr_data_in);

int LNetGet(struct lnet_nid *self, struct lnet_handle_md md_in,
	    struct lnet_processid *target_in, unsigned int portal_in,
	    __u64 match_bits_in, unsigned int offset_in, bool recovery);

/*
 * Messages that match nothing on a lazy portal wait there for an MD to be
 * attached, instead of being dropped; clearing the attribute drops them.
 */
int LNetSetLazyPortal(int portal);
int LNetClearLazyPortal(int portal);

/*
 * How far dstnid is: 0 for this node, 1 for a node on a local net (srcnid
 * is then the local NID that reaches it, order its NI's rank); -EHOSTUNREACH
 * otherwise.
 */
int LNetDist(struct lnet_nid *dstnid, struct lnet_nid *srcnid, __u32 *order);

/*
 * The node's own NIDs. An NI is local from the end of its start until the
 * start of its removal, as Lustre lists it.
 */

/* true when nid is the NID of one of this node's NIs (0@lo included). */
bool LNetIsPeerLocal(struct lnet_nid *nid);

/* 1 when this node has an NI on net, 0 otherwise and for LNET_NET_ANY. */
int LNetHasLocalNet(__u32 net);

/*
 * Calls cb(data, nid) for each local NID, 0@lo included, grouped by net
 * (nets in the order their first NI started), or for those of net netid
 * only unless it is LNET_NET_ANY. Stops at the first negative value cb
 * returns and returns it; 0 otherwise. cb runs with no LNet lock held (a
 * snapshot taken when the call starts): it may call LNet. -ENOMEM when
 * that snapshot cannot be had.
 */
int LNetFetchNIDs(int (*cb)(void *private, struct lnet_nid *nid),
		  __u32 netid, void *data);

/*
 * Registers nid_update_cb, keyed by cb_data (a second registration with
 * the same cb_data replaces the callback), to be called as
 * nid_update_cb(cb_data, nui) each time `lnetctl net add` or `net del`
 * changes a net's NIs (struct nid_update_info, <linux/lnet/lib-lnet.h>):
 * nui is valid during the call only. Callbacks are called one at a time,
 * in the order of the changes, after the change and with no LNet lock
 * held (a callback may call LNet). 0 or -ENOMEM.
 */
struct nid_update_info;
int LNetRegisterNIDUpdates(int (*nid_update_cb)(void *private,
						struct nid_update_info *nui),
			   void *cb_data);

/*
 * Unregisters cb_data's callback: once this returns it runs no more, and
 * is not running.
 */
void LNetUnRegisterNIDUpdates(void *cb_data);

/*
 * Peers. lnet-rs has no discovery yet: a peer's primary NID is the one
 * LNetAddPeer or lnetctl gave it, or the NID that made it; the calls that
 * look a NID up make its peer if unknown, as traffic would (as in Lustre).
 */

/* Replaces *nid by its peer's primary NID; 0@lo stays. */
void LNetPrimaryNID(struct lnet_nid *nid);

/* *nid becomes the first local NID other than 0@lo, then LNetPrimaryNID(). */
void LNetLocalPrimaryNID(struct lnet_nid *nid);

/*
 * 1 when sends to nid need wait no longer for discovery: always, without
 * discovery; -ENETRESET when no peer can be had (LNet down).
 */
int LNetPeerDiscovered(struct lnet_nid *nid);

/* 1 unless lnet_peer_discovery_disabled is set, then 0. */
int LNetGetPeerDiscoveryStatus(void);

/* Logs id's peer NI: NID, references, aliveness, credits, bytes queued. */
void LNetDebugPeer(struct lnet_processid *id);

/*
 * Adds the peer of a server's NIDs, skipping 0@lo. With discovery enabled:
 * one Multi-Rail peer, the first NID that can be its primary (locked with
 * lock_prim_nid), the others merged into it. With discovery disabled: a
 * non-Multi-Rail peer for each NID on a local net.
 */
void LNetAddPeer(struct lnet_nid *nids, int num_nids);

#endif /* __LNET_RS_API_H__ */
