/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: the types of the LNet API that upper layers (PtlRPC) use, with
 * the names, layouts and values of Lustre's <uapi/linux/lnet/lnet-types.h>
 * and <uapi/linux/lnet/lnet-idl.h>, so that an unmodified caller compiles against them.
 */
#ifndef __LNET_RS_TYPES_H__
#define __LNET_RS_TYPES_H__

#include <linux/types.h>

typedef __u64 lnet_nid_t;
typedef __u32 lnet_pid_t;

/* A NID in its large form; also its wire form (20 bytes at most). */
struct lnet_nid {
	__u8	nid_size;	/* address bytes beyond 4: 0 or 12 */
	__u8	nid_type;	/* LND type, 0xff for "any" */
	__be16	nid_num;	/* network number */
	__be32	nid_addr[4];	/* big-endian address */
} __attribute__((packed));

#define LNET_NID_ANY	(~(lnet_nid_t)0)
#define LNET_NET_ANY	(~(__u32)0)

/* A net is (LND type << 16 | number); a NID4 is (net << 32 | address). */
static inline __u32 LNET_MKNET(__u32 type, __u32 num)
{
	return (type << 16) | num;
}

static inline lnet_nid_t LNET_MKNID(__u32 net, __u32 addr)
{
	return ((lnet_nid_t)net << 32) | addr;
}

static inline __u32 LNET_NIDNET(lnet_nid_t nid)
{
	return (__u32)(nid >> 32);
}
#define LNET_PID_ANY	(~(lnet_pid_t)0)
#define LNET_PID_RESERVED 0xf0000000
#define LNET_PID_USERFLAG 0x80000000
#define LNET_PID_LUSTRE	12345
#define LNET_ANY_NID	((struct lnet_nid){ 0xff, 0xff, (__be16)~0, \
				{ ~0U, ~0U, ~0U, ~0U } })

#define LNET_RESERVED_PORTAL	0
#define LNET_MTU_BITS	20
#define LNET_MTU	(1u << LNET_MTU_BITS)
#define LNET_MAX_IOV	256

struct lnet_process_id {
	lnet_nid_t nid;
	lnet_pid_t pid;
};

struct lnet_processid {
	struct lnet_nid nid;
	lnet_pid_t pid;
};

#define LNET_WIRE_HANDLE_COOKIE_NONE (~0ULL)

struct lnet_handle_md {
	__u64 cookie;
};

static inline void LNetInvalidateMDHandle(struct lnet_handle_md *h)
{
	h->cookie = LNET_WIRE_HANDLE_COOKIE_NONE;
}

static inline int LNetMDHandleIsInvalid(struct lnet_handle_md h)
{
	return h.cookie == LNET_WIRE_HANDLE_COOKIE_NONE;
}

/* A match entry; callers only hold pointers to it. */
struct lnet_me;

enum lnet_unlink {
	LNET_RETAIN = 0,
	LNET_UNLINK
};

enum lnet_ins_pos {
	LNET_INS_BEFORE,
	LNET_INS_AFTER,
	LNET_INS_LOCAL
};

struct lnet_event;
/* Runs for each event on an MD; must not sleep. */
typedef void (*lnet_handler_t)(struct lnet_event *event);

struct lnet_md {
	void		*umd_start;	/* buffer, or struct bio_vec[] with KIOV */
	unsigned int	 umd_length;	/* bytes, or entries with KIOV */
	int		 umd_threshold;	/* operations left, LNET_MD_THRESH_INF */
	int		 umd_max_size;	/* with LNET_MD_MAX_SIZE */
	unsigned int	 umd_options;	/* LNET_MD_* */
	void		*umd_user_ptr;	/* echoed in events */
	lnet_handler_t	 umd_handler;	/* NULL: no events */
	struct lnet_handle_md umd_bulk_handle; /* with LNET_MD_BULK_HANDLE */
};

#define LNET_MD_OP_PUT			(1 << 0)
#define LNET_MD_OP_GET			(1 << 1)
#define LNET_MD_MANAGE_REMOTE		(1 << 2)
#define LNET_MD_TRUNCATE		(1 << 4)
#define LNET_MD_ACK_DISABLE		(1 << 5)
#define LNET_MD_MAX_SIZE		(1 << 7)
#define LNET_MD_KIOV			(1 << 8)
#define LNET_MD_BULK_HANDLE		(1 << 9)
#define LNET_MD_TRACK_RESPONSE		(1 << 10)
#define LNET_MD_NO_TRACK_RESPONSE	(1 << 11)

#define LNET_MD_THRESH_INF	(-1)

enum lnet_event_kind {
	LNET_EVENT_GET = 1,
	LNET_EVENT_PUT,
	LNET_EVENT_REPLY,
	LNET_EVENT_ACK,
	LNET_EVENT_SEND,
	LNET_EVENT_UNLINK,
};

/* Wire message types, as in lnet_hdr. */
enum lnet_msg_type {
	LNET_MSG_ACK = 0,
	LNET_MSG_PUT,
	LNET_MSG_GET,
	LNET_MSG_REPLY,
	LNET_MSG_HELLO,
};

struct lnet_event {
	struct lnet_processid	target;
	struct lnet_processid	initiator;
	struct lnet_processid	source;
	struct lnet_nid		sender;
	enum lnet_event_kind	type;
	unsigned int		pt_index;
	__u64			match_bits;
	unsigned int		rlength;
	unsigned int		mlength;
	struct lnet_handle_md	md_handle;
	void			*md_start;
	void			*md_user_ptr;
	unsigned int		md_options;
	__u64			hdr_data;
	__u32			msg_type;
	int			status;
	int			unlinked;	/* last event of this MD */
	unsigned int		offset;
	volatile unsigned long	sequence;
};

enum lnet_ack_req {
	LNET_ACK_REQ,
	LNET_NOACK_REQ
};

/* Message counters, summed over the node (as lnetctl stats show). */
struct lnet_counters_common {
	__u32	lcc_msgs_alloc;
	__u32	lcc_msgs_max;
	__u32	lcc_errors;
	__u32	lcc_send_count;
	__u32	lcc_recv_count;
	__u32	lcc_route_count;
	__u32	lcc_drop_count;
	__u64	lcc_send_length;
	__u64	lcc_recv_length;
	__u64	lcc_route_length;
	__u64	lcc_drop_length;
} __attribute__((packed));

struct lnet_counters_health {
	__u32	lch_rst_alloc;
	__u32	lch_resend_count;
	__u32	lch_response_timeout_count;
	__u32	lch_local_interrupt_count;
	__u32	lch_local_dropped_count;
	__u32	lch_local_aborted_count;
	__u32	lch_local_no_route_count;
	__u32	lch_local_timeout_count;
	__u32	lch_local_error_count;
	__u32	lch_remote_dropped_count;
	__u32	lch_remote_error_count;
	__u32	lch_remote_timeout_count;
	__u32	lch_network_timeout_count;
	__u32	lch_failed_resends;	/* messages that hit the retry limit */
	__u32	lch_successful_resends;	/* resent messages that then went */
};

struct lnet_counters {
	struct lnet_counters_common lct_common;
	struct lnet_counters_health lct_health;
};

#endif /* __LNET_RS_TYPES_H__ */
