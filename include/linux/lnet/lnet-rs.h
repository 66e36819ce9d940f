/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: what lnet.ko exports beyond Lustre's API. Lustre's LNet has none
 * of these; a caller that must also build against Lustre tests for this
 * header (__has_include) and does without them there.
 */
#ifndef __LNET_RS_EXT_H__
#define __LNET_RS_EXT_H__

#include <linux/lnet/api.h>

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

/* The older form of LNetMDUnlink: with discard, data still arriving may be
 * dropped. */
int __LNetMDUnlink(struct lnet_handle_md md_in, bool discard);

#endif /* __LNET_RS_EXT_H__ */
