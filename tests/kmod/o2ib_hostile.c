// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile o2ib peer for tests/vm/o2iblnd_hostile.sh: an RDMA CM client
 * that speaks o2iblnd's protocol badly on purpose. Each case connects to
 * the ko2iblnd listener at peer=IP (port 987):
 * - connection requests with malformed private data (short, bad magic,
 *   bad version, a queue depth beyond peer_credits, a destination NID the
 *   node does not have, too many fragments) must be REJECTED; one asking
 *   fewer fragments than 257 must be ESTABLISHED, its CONNACK echoing
 *   them, as Lustre accepts it with its fast-registration pool;
 * - after a valid CONNREQ and its CONNACK, malformed messages (more
 *   credits returned than the queue holds, an unknown type, a wrong
 *   checksum, a PUT_ACK with 300 fragments, a GET_DONE nobody waited for)
 *   must make the node DISCONNECT.
 * Prints "o2ib_hostile: <case>: <event>" per case and loads only if every
 * case got the answer it must. Loaded by nothing else.
 *
 * With races=N it is a listener instead, on port 987 of peer=IP (its own
 * address) for N seconds: every connection request is rejected as a lost
 * race (IBLND_REJECT_CONN_RACE), and when each came is printed, so that
 * the requesting node's reconnect pacing can be judged.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *peer = "";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "IPv4 address of the ko2iblnd NI to attack");
static int races;
module_param(races, int, 0444);
MODULE_PARM_DESC(races, "instead: listen on peer=IP for this many seconds, rejecting every request as a lost connection race; print when each came");
static char *net = "o2ib";
module_param(net, charp, 0444);
MODULE_PARM_DESC(net, "unused: the NID's net is o2ib (number 0)");

#define MAGIC		0x0be91b91
#define VERSION		0x12
#define HDR_LEN		48
#define T_CONNREQ	0xc0
#define T_CONNACK	0xc1
#define T_NOOP		0xd0
#define T_PUT_ACK	0xd4
#define T_GET_DONE	0xd7
#define O2IB_NET	(5u << 16)	/* LND type 5, net number 0 */

struct hostile {
	struct rdma_cm_id *id;
	struct completion done;
	int event;		/* the last event that completed `done` */
	int status;
	u64 peer_stamp;		/* the CONNACK's srcstamp */
	u16 ack_frags;		/* the CONNACK's max_frags */
	struct ib_pd *pd;
	struct ib_cq *cq;
	void *buf;
	u64 dma;
};

static u32 peer_addr;

static u64 nid4(u32 addr)
{
	return ((u64)O2IB_NET << 32) | addr;
}

/* A kib_msg header, little-endian, as a sender on x86 writes it. */
static void put_hdr(u8 *b, u8 type, u8 credits, u32 nob, u64 dst, u64 dststamp)
{
	memset(b, 0, HDR_LEN);
	*(__le32 *)b = cpu_to_le32(MAGIC);
	*(__le16 *)(b + 4) = cpu_to_le16(VERSION);
	b[6] = type;
	b[7] = credits;
	*(__le32 *)(b + 8) = cpu_to_le32(nob);
	*(__le64 *)(b + 16) = cpu_to_le64(nid4(0x0a0900fe));	/* 10.9.0.254 */
	*(__le64 *)(b + 24) = cpu_to_le64(0x1234);
	*(__le64 *)(b + 32) = cpu_to_le64(dst);
	*(__le64 *)(b + 40) = cpu_to_le64(dststamp);
}

static void put_connreq(u8 *b, u16 depth, u16 frags, u64 dst)
{
	put_hdr(b, T_CONNREQ, 0, HDR_LEN + 8, dst, 0);
	*(__le16 *)(b + 48) = cpu_to_le16(depth);
	*(__le16 *)(b + 50) = cpu_to_le16(frags);
	*(__le32 *)(b + 52) = cpu_to_le32(4096);
}

static int hostile_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct hostile *h = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		h->status = rdma_resolve_route(id, 5000);
		if (h->status)
			break;
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ev->param.conn.private_data_len >= HDR_LEN + 8) {
			const u8 *ack = ev->param.conn.private_data;

			h->peer_stamp = le64_to_cpu(*(__le64 *)(ack + 24));
			h->ack_frags = le16_to_cpu(*(__le16 *)(ack + 50));
		}
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		break;
	}
	h->event = ev->event;
	h->status = h->status ?: ev->status;
	complete(&h->done);
	return 0;
}

static int wait_event_type(struct hostile *h)
{
	if (!wait_for_completion_timeout(&h->done, 20 * HZ))
		return -ETIMEDOUT;
	reinit_completion(&h->done);
	return h->event;
}

static void hostile_free(struct hostile *h)
{
	if (h->id && h->id->qp)
		rdma_destroy_qp(h->id);
	if (h->id)
		rdma_destroy_id(h->id);
	if (h->buf && h->pd)
		ib_dma_unmap_single(h->pd->device, h->dma, 4096, DMA_TO_DEVICE);
	if (h->cq)
		ib_free_cq(h->cq);
	if (h->pd)
		ib_dealloc_pd(h->pd);
	kfree(h->buf);
	kfree(h);
}

/* Resolves the peer; with `qp`, builds a QP to send on. */
static struct hostile *hostile_open(bool qp)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct ib_qp_init_attr attr = {};
	struct hostile *h;
	int rc;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return ERR_PTR(-ENOMEM);
	init_completion(&h->done);
	h->id = rdma_create_id(&init_net, hostile_cm, h, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(h->id)) {
		rc = PTR_ERR(h->id);
		h->id = NULL;
		goto fail;
	}
	dst.sin_addr.s_addr = htonl(peer_addr);
	dst.sin_port = htons(987);
	rc = rdma_resolve_addr(h->id, NULL, (struct sockaddr *)&dst, 5000);
	if (rc)
		goto fail;
	rc = wait_event_type(h);
	if (rc != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		rc = rc < 0 ? rc : -EHOSTUNREACH;
		goto fail;
	}
	if (!qp)
		return h;
	h->pd = ib_alloc_pd(h->id->device, 0);
	if (IS_ERR(h->pd)) {
		rc = PTR_ERR(h->pd);
		h->pd = NULL;
		goto fail;
	}
	h->cq = ib_alloc_cq(h->id->device, NULL, 64, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(h->cq)) {
		rc = PTR_ERR(h->cq);
		h->cq = NULL;
		goto fail;
	}
	attr.send_cq = h->cq;
	attr.recv_cq = h->cq;
	attr.cap.max_send_wr = 16;
	attr.cap.max_recv_wr = 16;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	rc = rdma_create_qp(h->id, h->pd, &attr);
	if (rc)
		goto fail;
	h->buf = kzalloc(4096, GFP_KERNEL);
	if (!h->buf) {
		rc = -ENOMEM;
		goto fail;
	}
	h->dma = ib_dma_map_single(h->pd->device, h->buf, 4096, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(h->pd->device, h->dma)) {
		kfree(h->buf);
		h->buf = NULL;
		rc = -EIO;
		goto fail;
	}
	return h;
fail:
	hostile_free(h);
	return ERR_PTR(rc);
}

static int connect_with(struct hostile *h, const void *priv, u8 len)
{
	struct rdma_conn_param p = {
		.private_data = priv,
		.private_data_len = len,
		.flow_control = 1,
		.retry_count = 5,
		.rnr_retry_count = 6,
	};
	int rc = rdma_connect(h->id, &p);

	return rc ?: wait_event_type(h);
}

/* A connection request with bad private data must be rejected. */
static int bad_connreq(const char *name, const void *priv, u8 len)
{
	struct hostile *h = hostile_open(false);
	int ev;

	if (IS_ERR(h))
		return PTR_ERR(h);
	ev = connect_with(h, priv, len);
	pr_info("o2ib_hostile: %s: %s\n", name,
		ev < 0 ? "no answer" : rdma_event_msg(ev));
	hostile_free(h);
	return ev == RDMA_CM_EVENT_REJECTED ? 0 : -EPROTO;
}

/* A request for 32 fragments must be accepted, the CONNACK echoing 32. */
static int few_frags(void)
{
	struct hostile *h = hostile_open(true);
	u8 req[HDR_LEN + 8];
	int ev, frags;

	if (IS_ERR(h))
		return PTR_ERR(h);
	put_connreq(req, 8, 32, nid4(peer_addr));
	ev = connect_with(h, req, sizeof(req));
	frags = h->ack_frags;
	pr_info("o2ib_hostile: 32 fragments: %s, CONNACK max_frags %d\n",
		ev < 0 ? "no answer" : rdma_event_msg(ev), frags);
	hostile_free(h);
	return ev == RDMA_CM_EVENT_ESTABLISHED && frags == 32 ? 0 : -EPROTO;
}

static void send_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

static struct ib_cqe send_cqe = { .done = send_done };

/* After a good CONNREQ and its CONNACK, a bad message must make the
 * node disconnect. `fill` writes the message; returns its length. */
static int bad_message(const char *name,
		       int (*fill)(u8 *b, u64 dst, u64 stamp))
{
	struct hostile *h = hostile_open(true);
	const struct ib_send_wr *bad;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	u8 req[HDR_LEN + 8];
	int ev, len;

	if (IS_ERR(h))
		return PTR_ERR(h);
	put_connreq(req, 8, 257, nid4(peer_addr));
	ev = connect_with(h, req, sizeof(req));
	if (ev != RDMA_CM_EVENT_ESTABLISHED) {
		pr_info("o2ib_hostile: %s: a good CONNREQ got %d\n", name, ev);
		hostile_free(h);
		return -EPROTO;
	}
	len = fill(h->buf, nid4(peer_addr), h->peer_stamp);
	ib_dma_sync_single_for_device(h->pd->device, h->dma, 4096,
				      DMA_TO_DEVICE);
	sge.addr = h->dma;
	sge.length = len;
	sge.lkey = h->pd->local_dma_lkey;
	wr.wr_cqe = &send_cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (ib_post_send(h->id->qp, &wr, &bad)) {
		hostile_free(h);
		return -EIO;
	}
	ev = wait_event_type(h);
	pr_info("o2ib_hostile: %s: %s\n", name,
		ev < 0 ? "no answer" : rdma_event_msg(ev));
	hostile_free(h);
	return ev == RDMA_CM_EVENT_DISCONNECTED ? 0 : -EPROTO;
}

static int too_many_credits(u8 *b, u64 dst, u64 stamp)
{
	put_hdr(b, T_NOOP, 200, HDR_LEN, dst, stamp);
	return HDR_LEN;
}

/* A NOOP whose checksum (bytes 12..16) is not the message's. */
static int bad_checksum(u8 *b, u64 dst, u64 stamp)
{
	put_hdr(b, T_NOOP, 0, HDR_LEN, dst, stamp);
	*(__le32 *)(b + 12) = cpu_to_le32(0xdeadbeef);
	return HDR_LEN;
}

static int unknown_type(u8 *b, u64 dst, u64 stamp)
{
	put_hdr(b, 0xe7, 0, HDR_LEN, dst, stamp);
	return HDR_LEN;
}

static int put_ack_300_frags(u8 *b, u64 dst, u64 stamp)
{
	int nob = HDR_LEN + 16 + 8 + 300 * 12;

	put_hdr(b, T_PUT_ACK, 0, nob, dst, stamp);
	*(__le32 *)(b + HDR_LEN + 16 + 4) = cpu_to_le32(300);
	return nob;
}

static int stray_get_done(u8 *b, u64 dst, u64 stamp)
{
	put_hdr(b, T_GET_DONE, 0, HDR_LEN + 12, dst, stamp);
	*(__le64 *)(b + HDR_LEN) = cpu_to_le64(0xdeadbeef);
	return HDR_LEN + 12;
}

/* races=N: when each connection request came, in ms from the listen. */
#define MAX_RACES 64
static unsigned int race_ms[MAX_RACES];
static atomic_t nraces = ATOMIC_INIT(0);
static unsigned long race_start;

/* Every request is refused as IBLND_REJECT_CONN_RACE (a full V2 kib_rej). */
static int race_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	u8 rej[24] = {};
	int n;

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;
	n = atomic_inc_return(&nraces) - 1;
	if (n < MAX_RACES)
		race_ms[n] = jiffies_to_msecs(jiffies - race_start);
	*(__le32 *)rej = cpu_to_le32(MAGIC);
	*(__le16 *)(rej + 4) = cpu_to_le16(VERSION);
	rej[6] = 1;	/* IBLND_REJECT_CONN_RACE */
	*(__le64 *)(rej + 8) = cpu_to_le64(0x5678);
	*(__le16 *)(rej + 16) = cpu_to_le16(8);
	*(__le16 *)(rej + 18) = cpu_to_le16(256);
	*(__le32 *)(rej + 20) = cpu_to_le32(4096);
	rdma_reject(id, rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	return 1;	/* the CM destroys the new id */
}

/* Listens on port 987 of peer=IP for `races` seconds. */
static int race_listen(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct rdma_cm_id *id;
	int rc, i, n;
	char line[MAX_RACES * 7];
	int at = 0;

	id = rdma_create_id(&init_net, race_cm, NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	a.sin_addr.s_addr = htonl(peer_addr);
	a.sin_port = htons(987);
	rc = rdma_bind_addr(id, (struct sockaddr *)&a);
	if (!rc)
		rc = rdma_listen(id, 16);
	if (rc) {
		rdma_destroy_id(id);
		return rc;
	}
	race_start = jiffies;
	pr_info("o2ib_hostile: refusing every request as a race for %d s\n", races);
	msleep(races * 1000);
	rdma_destroy_id(id);
	n = min(atomic_read(&nraces), MAX_RACES);
	line[0] = 0;
	for (i = 0; i < n; i++)
		at += scnprintf(line + at, sizeof(line) - at, " %u", race_ms[i]);
	pr_info("o2ib_hostile: races: %d requests, at ms:%s\n",
		atomic_read(&nraces), line);
	return 0;
}

static int __init o2ib_hostile_init(void)
{
	u8 b[HDR_LEN + 8];
	u8 ip[4];
	int fails = 0;

	if (!in4_pton(peer, -1, ip, -1, NULL)) {
		pr_err("o2ib_hostile: peer=%s is not an IPv4 address\n", peer);
		return -EINVAL;
	}
	peer_addr = (ip[0] << 24) | (ip[1] << 16) | (ip[2] << 8) | ip[3];
	if (races > 0)
		return race_listen();

	put_connreq(b, 8, 257, nid4(peer_addr));
	fails += !!bad_connreq("short", b, 5);
	put_connreq(b, 8, 257, nid4(peer_addr));
	*(__le32 *)b = cpu_to_le32(0x12345678);
	fails += !!bad_connreq("bad magic", b, sizeof(b));
	put_connreq(b, 8, 257, nid4(peer_addr));
	*(__le16 *)(b + 4) = cpu_to_le16(0x13);
	fails += !!bad_connreq("bad version", b, sizeof(b));
	put_connreq(b, 1000, 257, nid4(peer_addr));
	fails += !!bad_connreq("queue depth 1000", b, sizeof(b));
	put_connreq(b, 8, 257, nid4(peer_addr + 1));
	fails += !!bad_connreq("wrong destination NID", b, sizeof(b));
	put_connreq(b, 8, 300, nid4(peer_addr));
	fails += !!bad_connreq("300 fragments", b, sizeof(b));
	fails += !!few_frags();

	fails += !!bad_message("credits beyond the queue", too_many_credits);
	fails += !!bad_message("unknown message type", unknown_type);
	fails += !!bad_message("bad checksum", bad_checksum);
	fails += !!bad_message("PUT_ACK with 300 fragments", put_ack_300_frags);
	fails += !!bad_message("GET_DONE for nothing", stray_get_done);

	pr_info("o2ib_hostile: %d cases answered wrongly\n", fails);
	return fails ? -EPROTO : 0;
}

static void __exit o2ib_hostile_exit(void)
{
}

module_init(o2ib_hostile_init);
module_exit(o2ib_hostile_exit);
MODULE_DESCRIPTION("lnet-rs lab: a hostile o2ib peer");
MODULE_LICENSE("GPL");
