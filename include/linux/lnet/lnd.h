/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: the interface between lnet.ko and the LNDs (ksocklnd, ko2iblnd,
 * and the loopback LND inside lnet.ko).
 *
 * An LND registers a struct lnet_lnd. LNet starts one NI per configured
 * interface with lnd_startup(), hands it messages with lnd_send(), and
 * passes it every message it receives through lnet_parse(). Every message
 * LNet gave the LND, and every one the LND delivered with lnd_recv(), comes
 * back exactly once through lnet_finalize(), with an errno and the health
 * status that says what went wrong; Health and resends hang off that call.
 */
#ifndef __LNET_RS_LND_H__
#define __LNET_RS_LND_H__

#include <uapi/linux/lnet/lnet-types.h>

struct bio_vec;
struct lnet_ni;		/* a local interface; LNet's */
struct lnet_msg;	/* a message in flight; LNet's */

/* What went wrong with a message, as the LND saw it. */
enum lnet_msg_hstatus {
	LNET_MSG_STATUS_OK = 0,
	LNET_MSG_STATUS_LOCAL_INTERRUPT,
	LNET_MSG_STATUS_LOCAL_DROPPED,
	LNET_MSG_STATUS_LOCAL_ABORTED,
	LNET_MSG_STATUS_LOCAL_NO_ROUTE,
	LNET_MSG_STATUS_LOCAL_ERROR,
	LNET_MSG_STATUS_LOCAL_TIMEOUT,
	LNET_MSG_STATUS_REMOTE_ERROR,
	LNET_MSG_STATUS_REMOTE_DROPPED,
	LNET_MSG_STATUS_REMOTE_TIMEOUT,
	LNET_MSG_STATUS_NETWORK_TIMEOUT,
	LNET_MSG_STATUS_END,
};

/* Bytes of the LNet header in its NID4 and large-NID wire forms. */
#define LNET_HDR_NID4_SIZE	72
#define LNET_HDR_NID16_SIZE	96

/* A message to send, valid until the message is finalized. */
struct lnet_tx_desc {
	struct lnet_processid	target;	/* next hop */
	__u32			type;	/* enum lnet_msg_type */
	__u32			hdr_len; /* LNET_HDR_NID4_SIZE */
	__u8			hdr[LNET_HDR_NID16_SIZE]; /* little-endian */
	unsigned int		niov;	/* payload fragments */
	struct bio_vec		*kiov;
	unsigned int		offset;	/* payload start within kiov */
	unsigned int		len;	/* payload bytes */
};

struct lnet_lnd {
	__u32 lnd_type;		/* e.g. SOCKLND 2, O2IBLND 5 */
	/* Bring up / take down one NI. */
	int (*lnd_startup)(struct lnet_ni *ni);
	void (*lnd_shutdown)(struct lnet_ni *ni);
	/*
	 * Start sending; 0 means the message will be finalized later, an
	 * error that LNet finalizes it now with that error.
	 */
	int (*lnd_send)(struct lnet_ni *ni, struct lnet_msg *msg,
			const struct lnet_tx_desc *tx);
	/*
	 * Receive the payload of a message passed to lnet_parse() into kiov
	 * (mlen bytes from offset; the remaining rlen - mlen are discarded),
	 * then finalize msg. With msg NULL, discard all rlen bytes. Called
	 * exactly once per header lnet_parse() took, with its private, which
	 * the LND owns again from here (see lnet_parse()); delayed != 0
	 * when the message waited on a lazy portal.
	 */
	int (*lnd_recv)(struct lnet_ni *ni, void *private, struct lnet_msg *msg,
			int delayed, unsigned int niov, struct bio_vec *kiov,
			unsigned int offset, unsigned int mlen,
			unsigned int rlen);
	/*
	 * Optional: the LND's timeout in seconds now (its own parameter, or
	 * lnet_get_lnd_timeout() when that is 0). Each message committed on
	 * one of its NIs gets a deadline from it; without it, or at 0, the
	 * deadline is lnet_transaction_timeout.
	 */
	unsigned int (*lnd_get_timeout)(void);
	/*
	 * Optional: one of Lustre's /dev/lnet commands LNet does not answer
	 * itself (IOC_LIBCFS_GET_PEER, GET_CONN, CLOSE_CONNECTION of lctl's
	 * peer_list, conn_list and disconnect), for ni, the first NI on the
	 * argument's ioc_net: Lustre's lnd_ctl. cmd is the command's number
	 * (_IOC_NR); arg is the caller's checked struct libcfs_ioctl_data,
	 * len bytes (at least the structure), copied back to the caller
	 * whatever the result. Process context, no LNet lock held; ni stays
	 * started until it returns. 0 or a negative errno: -EINVAL for a
	 * command the LND does not know.
	 */
	int (*lnd_ctl)(struct lnet_ni *ni, unsigned int cmd, void *arg,
		       unsigned int len);
};

int lnet_register_lnd(const struct lnet_lnd *lnd);
void lnet_unregister_lnd(const struct lnet_lnd *lnd);

/* This NI's NID and the LND's own data for it. */
void lnet_ni_nid(struct lnet_ni *ni, struct lnet_nid *nid);
void lnet_ni_set_data(struct lnet_ni *ni, void *data);
void *lnet_ni_data(struct lnet_ni *ni);
/* The NI's interface name (NUL-terminated), "" for 0@lo. */
const char *lnet_ni_iface(struct lnet_ni *ni);

/*
 * An NI's tunables: LNet's (credits, peer timeout; "tunables" in
 * "lnetctl net show -v") and the LND's own that net show prints under
 * "lnd tunables". -1: not set, or not the LND's.
 */
struct lnet_ni_tunables {
	int peer_timeout;
	int peer_credits;
	int peer_buffer_credits;
	int credits;
	int conns_per_peer;
	int timeout;
	int tos;
	/* o2ib only */
	int peercredits_hiw;
	int map_on_demand;
	int concurrent_sends;
	int fmr_pool_size;
	int fmr_flush_trigger;
	int fmr_cache;
	int ntx;
};

/*
 * Called by lnd_startup(): the values the administrator did not give
 * ("lnetctl net add --credits ..."), -1 in the NI, take the LND's defaults
 * from *t; peer_credits is clamped to credits. *t gets the values the NI
 * runs with, LNet sends within its credits from then on. The LND's own
 * tunables in *t are stored as given, for net show; an LND whose own
 * follow the net's (ko2iblnd: peercredits_hiw and concurrent_sends from
 * peer_credits) calls it again with them once derived.
 */
void lnet_ni_default_tunables(struct lnet_ni *ni, struct lnet_ni_tunables *t);

/*
 * The LND tunables the administrator gave ni ("lnetctl net add ...
 * --lnd-tunables"): conns_per_peer, tos and o2ib's own into *t, -1 where
 * not given, for lnd_startup() to complete (with its module parameters)
 * before it calls lnet_ni_default_tunables().
 */
void lnet_ni_lnd_tunables(struct lnet_ni *ni, struct lnet_ni_tunables *t);

/* LNet's LND timeout in seconds (from lnet_transaction_timeout and
 * lnet_retry_count), for LNDs whose own timeout parameter is 0. */
unsigned int lnet_get_lnd_timeout(void);

/*
 * The LND saw the link under ni go down (fatal != 0) or come back: while
 * marked, selection prefers every other NI and pings report it DOWN; its
 * health is not changed. Only sets a flag: callable from notifiers and
 * event handlers.
 */
void lnet_set_link_fatal_state(struct lnet_ni *ni, unsigned int fatal);

/*
 * The LND's word that the peer NI *peer is down (!alive) or up as of
 * when (ktime_get_seconds()), Lustre's lnet_notify(): ko2iblnd reports a
 * peer whose last connection failed. Its cached status follows (selection
 * prefers its other NIs while it is down, until it is heard from); reset
 * with alive brings its health back to full. -EINVAL for a peer on another
 * net than ni's or a date in the future, -ESHUTDOWN while LNet is not
 * running, else 0. Process context, no LND lock held.
 */
int lnet_notify(struct lnet_ni *ni, struct lnet_nid *peer, bool alive,
		bool reset, time64_t when);

/*
 * Contexts. lnet_parse() and lnet_finalize() are called from process
 * context, with no lock of the LND held, and may sleep: they match MDs,
 * run the upper layer's event handler, send ACKs and REPLYs (calling
 * lnd_send() again) and may call lnd_recv() or lnd_send() of this very
 * connection. An LND takes what it must finalize out of its locked state
 * first, drops the lock, then calls LNet. Both begin with might_sleep(),
 * so a kernel with CONFIG_DEBUG_ATOMIC_SLEEP (the lab's) reports a caller
 * in atomic context on every call, not only when it happens to sleep.
 */

/*
 * A header arrived on ni from the peer "from". 0: LNet calls lnd_recv()
 * exactly once for it (possibly before returning); < 0: the header is bad
 * and the LND should drop the connection.
 *
 * private is the LND's receive context, and LNet's until it is handed back:
 * on 0, LNet passes it to exactly one lnd_recv() (with the message, or
 * with msg NULL when the message is dropped: no MD, a drop rule, a lazy
 * portal cleared, the NI or LNet going away), on every path including
 * delay rules and lazy portals, where that call may come long after the
 * connection is gone; on < 0, LNet never calls lnd_recv() and private
 * stays the LND's. So an LND passes an owned reference (ksocklnd: its
 * connection's Arc::into_raw) and takes it back in lnd_recv() (there
 * Arc::from_raw), also when lnd_recv() fails. LNet drops the messages an
 * NI received that wait on lazy portals before its lnd_shutdown(), so no
 * context outlives the NI.
 *
 * rdma_req != 0 says the LND moves a GET's reply data itself (o2iblnd's
 * GET_REQ): a matched GET then comes to lnd_recv() as its REPLY message,
 * with the MD's fragments to send from (mlen == rlen, the bytes to
 * send), and the LND finalizes that message once the data is written; a
 * GET with no match comes with msg NULL as any drop does.
 */
int lnet_parse(struct lnet_ni *ni, const void *hdr, unsigned int hdr_len,
	       const struct lnet_nid *from, void *private, int rdma_req);

/* IPv4 address (host order) of an interface, or of the first up one. */
int lnet_inet_addr(const char *name, char *found, size_t found_len,
		   __u32 *addr);

/* The first IPv4 address of each up, non-loopback interface (at most max). */
int lnet_inet_addrs(__u32 *addrs, int max);

/* The page under a kernel virtual address (lowmem or vmalloc). */
struct page *lnet_kvaddr_to_page(unsigned long vaddr);

/* Every completion, successful or not (process context, no LND lock
 * held; see "Contexts" above). */
void lnet_finalize(struct lnet_msg *msg, int status,
		   enum lnet_msg_hstatus hstatus);

/*
 * From lnd_send() only, before refusing the message: the health status
 * LNet finalizes it with (LOCAL_ERROR otherwise). Health may resend it
 * over another path.
 */
void lnet_msg_set_hstatus(struct lnet_msg *msg, enum lnet_msg_hstatus hstatus);

/*
 * From lnd_send() of a GET whose target will write the REPLY's data
 * straight into the GET's MD (o2iblnd's GET_REQ, as Lustre's
 * lnet_create_reply_msg()): the REPLY message, holding the MD, and the
 * MD's fragments (*kiov, *niov, *len bytes from offset 0) to offer as the
 * sink. NULL when the MD is spent or there is no memory: send the GET as
 * usual then. The LND finalizes the REPLY as it does the GET, after
 * lnet_set_reply_msg_len() with the bytes written when the data came
 * (-EPROTO, changing nothing, if that is more than the sink).
 */
struct lnet_msg *lnet_create_reply_msg(struct lnet_ni *ni,
				       struct lnet_msg *get,
				       unsigned int *niov,
				       struct bio_vec **kiov,
				       unsigned int *len);
int lnet_set_reply_msg_len(struct lnet_ni *ni, struct lnet_msg *reply,
			   unsigned int len);

#endif /* __LNET_RS_LND_H__ */
