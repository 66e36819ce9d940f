/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: the LNet API for upper layers, with the signatures of Lustre's
 * current <lnet/api.h>, exported by lnet.ko with EXPORT_SYMBOL_GPL.
 *
 * Every LNetPut()/LNetGet() that returns 0 ends in exactly one event with
 * unlinked set on an MD whose last operation it was, including when LNet is
 * shut down: success, error or timeout.
 */
#ifndef __LNET_RS_API_H__
#define __LNET_RS_API_H__

#include <lnet/types.h>

int LNetNIInit(lnet_pid_t requested_pid);
int LNetNIFini(void);

/* The index'th local process id; -ENOENT past the last NI. */
int LNetGetId(unsigned int index, struct lnet_processid *id, bool large_nids);

/* ERR_PTR() on failure. */
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

int __LNetMDUnlink(struct lnet_handle_md md_in, bool discard);
#define LNetMDUnlink(handle) __LNetMDUnlink(handle, false)

int LNetPut(struct lnet_nid *self, struct lnet_handle_md md_in,
	    enum lnet_ack_req ack_req_in, struct lnet_processid *target_in,
	    unsigned int portal_in, __u64 match_bits_in,
	    unsigned int offset_in, __u64 hdr_data_in);

int LNetGet(struct lnet_nid *self, struct lnet_handle_md md_in,
	    struct lnet_processid *target_in, unsigned int portal_in,
	    __u64 match_bits_in, unsigned int offset_in, bool recovery);

/*
 * The caller's own transaction deadline (the trickle-down timeout of the
 * resend design): the ACK or REPLY is awaited for timeout seconds instead of
 * lnet_transaction_timeout, and tracked whatever lnet_response_tracking
 * says. timeout <= 0 behaves as LNetPut()/LNetGet().
 */
int LNetPutTimeout(struct lnet_nid *self, struct lnet_handle_md md_in,
		   enum lnet_ack_req ack_req_in,
		   struct lnet_processid *target_in, unsigned int portal_in,
		   __u64 match_bits_in, unsigned int offset_in,
		   __u64 hdr_data_in, int timeout);

int LNetGetTimeout(struct lnet_nid *self, struct lnet_handle_md md_in,
		   struct lnet_processid *target_in, unsigned int portal_in,
		   __u64 match_bits_in, unsigned int offset_in, bool recovery,
		   int timeout);

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

/* Parses a NID in its text form ("10.0.0.1@tcp", "0@lo"): 0 or -EINVAL. */
int libcfs_strnid(struct lnet_nid *nid, const char *str);

/* A snapshot of the node's message counters. */
void lnet_counters_get(struct lnet_counters *counters);

#endif /* __LNET_RS_API_H__ */
