// SPDX-License-Identifier: GPL-2.0
/*
 * lnet_ulp: an upper layer that uses LNet as PtlRPC does, to prove C callers
 * can. At load it initializes LNet, posts receive buffers (ME + MD) and
 * sends to itself over 0@lo: PUT with ACK and GET with REPLY, 4 KiB from a
 * kmalloc buffer and 1 MiB from a page vector, plus match misses,
 * truncation, explicit unlink, responses that never come, and bad
 * arguments. Every check that fails is logged and fails the load.
 *
 * With inflight=N it leaves N GETs waiting for a REPLY that never comes;
 * unloading the module then calls LNetNIFini with them in flight, and each
 * must end with an UNLINK event, of status 0 as Lustre's unlink events.
 *
 * Invariant checked throughout and at unload: every LNetPut/LNetGet that
 * returned 0 got exactly one event with "unlinked" set on its MD.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/nodemask.h>
#include <linux/lnet/api.h>
#include <linux/lnet/lib-lnet.h>
#include <linux/lnet/lnet_rdma.h>
/*
 * Built against lnet-rs's headers or, unchanged, against Lustre's: only
 * lnet-rs has <linux/lnet/lnet-rs.h> and the self tests of its own API.
 */
#if __has_include(<linux/lnet/lnet-rs.h>)
#include <linux/lnet/lnet-rs.h>
#define ULP_LNET_RS 1
#else
/*
 * Lustre's LNet has no per-call deadline: its lnet_transaction_timeout
 * bounds the wait for an ACK or REPLY instead.
 */
static int LNetPutTimeout(struct lnet_nid *self, struct lnet_handle_md md,
			  enum lnet_ack_req ack, struct lnet_processid *target,
			  unsigned int portal, __u64 bits, unsigned int offset,
			  __u64 hdr_data, int timeout)
{
	return LNetPut(self, md, ack, target, portal, bits, offset, hdr_data);
}

static int LNetGetTimeout(struct lnet_nid *self, struct lnet_handle_md md,
			  struct lnet_processid *target, unsigned int portal,
			  __u64 bits, unsigned int offset, bool recovery,
			  int timeout)
{
	return LNetGet(self, md, target, portal, bits, offset, recovery);
}
#endif

static int inflight;
module_param(inflight, int, 0444);
MODULE_PARM_DESC(inflight, "GETs left waiting for a REPLY at unload");
static char *mode = "self";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "self (over 0@lo), traffic (only traffic=1's thread), server, client, burst, flood, steady, pinginfo or pushes (with peer=)");
static char *peer = "";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "NID of the server, for mode=client");
static int seconds;
module_param(seconds, int, 0444);
MODULE_PARM_DESC(seconds, "mode=client: keep PUTting for this long after the checks; mode=steady: how long");
static bool stop_traffic;
module_param(stop_traffic, bool, 0644);
MODULE_PARM_DESC(stop_traffic, "mode=client and steady: set to end the seconds= traffic now (it is read while init runs)");
static int op_timeout = 20;
module_param(op_timeout, int, 0444);
MODULE_PARM_DESC(op_timeout, "mode=client: seconds each operation may wait for its ACK");
static int repeat;
module_param(repeat, int, 0444);
MODULE_PARM_DESC(repeat, "mode=client: extra 4 KiB PUTs after the checks");
static int sweep;
module_param(sweep, int, 0444);
MODULE_PARM_DESC(sweep, "mode=client: PUT/GET round trips of 0 B to 1 MiB at offsets, and a 4 MiB MD refused; 2: without the small one across a page of the server's MD (Lustre's ko2iblnd sends that REPLY wrong)");
static int gaps;
module_param(gaps, int, 0444);
MODULE_PARM_DESC(gaps, "mode=client: PUT from and GET into a page vector with a gap (its middle fragment starts and ends mid-page); 1: the LND must carry the data, 2: it must refuse it (fast registration maps no gaps)");
static bool traffic;
static bool get;
module_param(get, bool, 0444);
MODULE_PARM_DESC(get, "mode=burst, flood and flood_to: GETs instead of PUTs (flood: from the server's 1 MiB source)");

module_param(traffic, bool, 0444);
MODULE_PARM_DESC(traffic, "keep a thread sending until (and during) unload");
static bool lazy;
module_param(lazy, bool, 0444);
MODULE_PARM_DESC(lazy, "mode=server: the portal is lazy (buffer for the lazy bits posted by writing attach); mode=burst: PUT to the lazy bits");

#define ULP_PORTAL	10
#define MAX_EV		4
#define BIG		(1 << 20)
#define BIG_PAGES	(BIG / PAGE_SIZE)

static atomic_t sends = ATOMIC_INIT(0);	/* LNetPut/LNetGet returning 0 */
static atomic_t finals = ATOMIC_INIT(0); /* client events with unlinked */
static int failures;

struct op {
	struct completion done;
	struct completion sent;	/* the SEND event came */
	int send_status;
	bool client;		/* counts toward the invariant */
	int nev;
	enum lnet_event_kind type[MAX_EV];
	int status[MAX_EV];
	int unlinked[MAX_EV];
	unsigned int mlength[MAX_EV];
	unsigned int rlength[MAX_EV];
	__u64 hdr_data[MAX_EV];
};

static void op_init(struct op *op, bool client)
{
	memset(op, 0, sizeof(*op));
	init_completion(&op->done);
	init_completion(&op->sent);
	op->client = client;
}

/* Bumped on every event: mode=steady waits on it for any operation. */
static atomic_t events = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(events_wq);

static void ulp_handler(struct lnet_event *ev)
{
	struct op *op = ev->md_user_ptr;

	if (op->nev < MAX_EV) {
		op->type[op->nev] = ev->type;
		op->status[op->nev] = ev->status;
		op->unlinked[op->nev] = ev->unlinked;
		op->mlength[op->nev] = ev->mlength;
		op->rlength[op->nev] = ev->rlength;
		op->hdr_data[op->nev] = ev->hdr_data;
	}
	op->nev++;
	if (ev->type == LNET_EVENT_SEND) {
		op->send_status = ev->status;
		complete(&op->sent);
	}
	if (ev->unlinked) {
		if (op->client)
			atomic_inc(&finals);
		complete(&op->done);
	}
	atomic_inc(&events);
	wake_up(&events_wq);
}

#define CHECK(cond, fmt, ...) do {					\
	if (!(cond)) {							\
		pr_err("lnet_ulp: FAIL %s:%d: " fmt "\n", __func__,	\
		       __LINE__, ##__VA_ARGS__);			\
		failures++;						\
	}								\
} while (0)

/*
 * The initiator's two events: SEND and the response "kind", in either order
 * (LNet does not order them), both successful, the last one unlinked.
 * Returns the index of the response event, or -1.
 */
static int pair(struct op *op, enum lnet_event_kind kind)
{
	int r;

	if (op->nev != 2 || op->unlinked[0] || !op->unlinked[1] ||
	    op->status[0] || op->status[1])
		return -1;
	if (op->type[0] == LNET_EVENT_SEND && op->type[1] == kind)
		r = 1;
	else if (op->type[1] == LNET_EVENT_SEND && op->type[0] == kind)
		r = 0;
	else
		return -1;
	return r;
}

static bool wait_op(struct op *op, int secs)
{
	return wait_for_completion_timeout(&op->done, secs * HZ) != 0;
}

/*
 * Set once an operation never got its final event even after an unlink:
 * LNet may still write into its buffer or call its handler, so from then
 * on nothing is freed and the module is pinned (rmmod fails cleanly
 * instead of LNet jumping into unloaded code).
 */
static bool abandoned;

static void abandon(const char *what)
{
	if (!abandoned) {
		abandoned = true;
		__module_get(THIS_MODULE);
	}
	pr_err("lnet_ulp: FAIL %s never ended: module pinned, memory kept\n",
	       what);
	failures++;
}

/*
 * Waits for the final event of the operation on MD "h". True when it came
 * by itself within "secs"; otherwise the MD is unlinked, which LNet must
 * answer with a final event, and the operation is abandoned if even that
 * does not come.
 */
static bool op_settle(struct op *op, struct lnet_handle_md h, int secs)
{
	if (wait_op(op, secs))
		return true;
	if (LNetMDHandleIsInvalid(h))
		return false;	/* never attached: no event can come */
	LNetMDUnlink(h);
	if (!wait_op(op, 30))
		abandon("an operation");
	return false;
}

#define INVALID_MDH { .cookie = LNET_WIRE_HANDLE_COOKIE_NONE }

static struct op *op_new(bool client)
{
	struct op *op = kmalloc(sizeof(*op), GFP_KERNEL);

	if (op)
		op_init(op, client);
	return op;
}

static void op_free(struct op *op)
{
	if (!abandoned)
		kfree(op);
}

static struct lnet_processid self;
/* The match id of buffers anyone may reach (set at load): LNetMEAttach
 * takes no NULL. */
static struct lnet_processid anyone;

/* A buffer: contiguous (kmalloc) or a page vector. */
struct buf {
	void *start;		/* what the MD gets */
	unsigned int length;	/* what the MD gets */
	unsigned int options;	/* LNET_MD_KIOV or 0 */
	unsigned int bytes;
	char *flat;		/* contiguous buffer */
	struct bio_vec *kiov;	/* page vector */
};

static int buf_alloc(struct buf *b, unsigned int bytes, bool pages)
{
	unsigned int i, n = DIV_ROUND_UP(bytes, PAGE_SIZE);

	memset(b, 0, sizeof(*b));
	b->bytes = bytes;
	if (!pages) {
		b->flat = kzalloc(bytes, GFP_KERNEL);
		b->start = b->flat;
		b->length = bytes;
		return b->flat ? 0 : -ENOMEM;
	}
	b->kiov = kcalloc(n, sizeof(*b->kiov), GFP_KERNEL);
	if (!b->kiov)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct page *p = alloc_page(GFP_KERNEL | __GFP_ZERO);

		if (!p)
			return -ENOMEM;
		bvec_set_page(&b->kiov[i], p,
			      min_t(unsigned int, PAGE_SIZE, bytes - i * PAGE_SIZE), 0);
	}
	b->start = b->kiov;
	b->length = n;
	b->options = LNET_MD_KIOV;
	return 0;
}

static void buf_free(struct buf *b)
{
	unsigned int i;

	if (abandoned)
		return;
	kfree(b->flat);
	if (b->kiov) {
		for (i = 0; i < b->length; i++)
			if (b->kiov[i].bv_page)
				__free_page(b->kiov[i].bv_page);
		kfree(b->kiov);
	}
}

static u8 *byte_at(struct buf *b, unsigned int off)
{
	/* Test pages are lowmem: page_address() is fine. */
	if (b->flat)
		return (u8 *)b->flat + off;
	return (u8 *)page_address(b->kiov[off / PAGE_SIZE].bv_page) +
	       off % PAGE_SIZE;
}

static void buf_fill(struct buf *b, u8 seed)
{
	unsigned int i;

	for (i = 0; i < b->bytes; i++)
		*byte_at(b, i) = (u8)(seed + i * 7 + i / 251);
}

static bool buf_same(struct buf *a, struct buf *b, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (*byte_at(a, i) != *byte_at(b, i))
			return false;
	return true;
}

/* Posts a receive buffer: an ME on ULP_PORTAL and an MD on it. */
static int post(struct buf *b, __u64 bits, unsigned int ops, int threshold,
		struct op *op, struct lnet_handle_md *mdh)
{
	struct lnet_md md = {
		.umd_start = b->start,
		.umd_length = b->length,
		.umd_threshold = threshold,
		.umd_options = ops | b->options,
		.umd_user_ptr = op,
		.umd_handler = ulp_handler,
	};
	struct lnet_me *me;

	me = LNetMEAttach(ULP_PORTAL, &anyone, bits, 0, LNET_UNLINK,
			  LNET_INS_AFTER);
	if (IS_ERR(me))
		return PTR_ERR(me);
	return LNetMDAttach(me, &md, LNET_UNLINK, mdh);
}

static int bind(struct buf *b, int threshold, unsigned int opts, struct op *op,
		struct lnet_handle_md *mdh)
{
	struct lnet_md md = {
		.umd_start = b->start,
		.umd_length = b->length,
		.umd_threshold = threshold,
		.umd_options = b->options | opts,
		.umd_user_ptr = op,
		.umd_handler = ulp_handler,
	};

	return LNetMDBind(&md, LNET_UNLINK, mdh);
}

static void counters(struct lnet_counters *c)
{
#ifdef ULP_LNET_RS
	lnet_counters_get(c);
#else
	memset(c, 0, sizeof(*c));	/* Lustre does not export it */
#endif
}

/* PUT with ACK of "bytes" into a posted buffer, checking both sides. */
static void test_put(unsigned int bytes, bool pages)
{
	struct buf src = {}, dst = {};
	struct op *cop = op_new(true), *sop = op_new(false);
	struct lnet_handle_md cmd = INVALID_MDH, smd = INVALID_MDH;
	__u64 bits = 0x100 + bytes;
	int rc, i;

	if (!cop || !sop || buf_alloc(&src, bytes, pages) ||
	    buf_alloc(&dst, bytes, pages)) {
		CHECK(0, "no memory");
		goto out;
	}
	buf_fill(&src, bytes & 0xff);
	rc = post(&dst, bits, LNET_MD_OP_PUT, 1, sop, &smd);
	CHECK(rc == 0, "post %d", rc);
	rc = bind(&src, 2, 0, cop, &cmd);
	CHECK(rc == 0, "bind %d", rc);
	rc = LNetPut(NULL, cmd, LNET_ACK_REQ, &self, ULP_PORTAL, bits, 0,
		     0xfeedULL + bytes);
	CHECK(rc == 0, "LNetPut %d", rc);
	if (rc == 0)
		atomic_inc(&sends);
	CHECK(op_settle(cop, cmd, 10), "PUT %u: no final event", bytes);
	CHECK(op_settle(sop, smd, 10), "PUT %u: target saw nothing", bytes);
	i = pair(cop, LNET_EVENT_ACK);
	CHECK(i >= 0 && cop->mlength[i] == bytes,
	      "PUT: events n=%d %d/%d/%d %d/%d/%d", cop->nev, cop->type[0],
	      cop->status[0], cop->unlinked[0], cop->type[1], cop->status[1],
	      cop->unlinked[1]);
	CHECK(sop->nev == 1 && sop->type[0] == LNET_EVENT_PUT &&
	      sop->status[0] == 0 && sop->unlinked[0] &&
	      sop->mlength[0] == bytes && sop->hdr_data[0] == 0xfeedULL + bytes,
	      "PUT: target event n=%d type=%d mlen=%u", sop->nev, sop->type[0],
	      sop->mlength[0]);
	CHECK(buf_same(&src, &dst, bytes), "PUT %u: data differs", bytes);
	pr_info("lnet_ulp: PUT+ACK %u bytes (%s) ok\n", bytes,
		pages ? "kiov" : "kmalloc");
out:
	buf_free(&src);
	buf_free(&dst);
	op_free(cop);
	op_free(sop);
}

/* GET with REPLY of "bytes" from a posted buffer. */
static void test_get(unsigned int bytes, bool pages)
{
	struct buf src = {}, dst = {};
	struct op *cop = op_new(true), *sop = op_new(false);
	struct lnet_handle_md cmd = INVALID_MDH, smd = INVALID_MDH;
	__u64 bits = 0x200 + bytes;
	int rc, i;

	if (!cop || !sop || buf_alloc(&src, bytes, pages) ||
	    buf_alloc(&dst, bytes, pages)) {
		CHECK(0, "no memory");
		goto out;
	}
	buf_fill(&src, 3);
	rc = post(&src, bits, LNET_MD_OP_GET, 1, sop, &smd);
	CHECK(rc == 0, "post %d", rc);
	rc = bind(&dst, 2, 0, cop, &cmd);
	CHECK(rc == 0, "bind %d", rc);
	rc = LNetGet(NULL, cmd, &self, ULP_PORTAL, bits, 0, false);
	CHECK(rc == 0, "LNetGet %d", rc);
	if (rc == 0)
		atomic_inc(&sends);
	CHECK(op_settle(cop, cmd, 10), "GET %u: no final event", bytes);
	CHECK(op_settle(sop, smd, 10), "GET %u: target saw nothing", bytes);
	i = pair(cop, LNET_EVENT_REPLY);
	CHECK(i >= 0 && cop->mlength[i] == bytes,
	      "GET: events n=%d %d,%d status %d,%d", cop->nev, cop->type[0],
	      cop->type[1], cop->status[0], cop->status[1]);
	CHECK(sop->nev == 1 && sop->type[0] == LNET_EVENT_GET &&
	      sop->status[0] == 0 && sop->unlinked[0] &&
	      sop->mlength[0] == bytes, "GET: target event n=%d type=%d",
	      sop->nev, sop->type[0]);
	CHECK(buf_same(&src, &dst, bytes), "GET %u: data differs", bytes);
	pr_info("lnet_ulp: GET+REPLY %u bytes (%s) ok\n", bytes,
		pages ? "kiov" : "kmalloc");
out:
	buf_free(&src);
	buf_free(&dst);
	op_free(cop);
	op_free(sop);
}

/* A PUT larger than a truncating buffer lands cut to size. */
static void test_truncate(void)
{
	struct buf src = {}, dst = {};
	struct op *cop = op_new(true), *sop = op_new(false);
	struct lnet_handle_md cmd = INVALID_MDH, smd = INVALID_MDH;
	int rc, i;

	if (!cop || !sop || buf_alloc(&src, 4096, false) || buf_alloc(&dst, 1000, false)) {
		CHECK(0, "no memory");
		goto out;
	}
	buf_fill(&src, 9);
	rc = post(&dst, 0x300, LNET_MD_OP_PUT | LNET_MD_TRUNCATE, 1, sop,
		  &smd);
	CHECK(rc == 0, "post %d", rc);
	rc = bind(&src, 2, 0, cop, &cmd);
	CHECK(rc == 0, "bind %d", rc);
	rc = LNetPut(NULL, cmd, LNET_ACK_REQ, &self, ULP_PORTAL, 0x300, 0, 0);
	CHECK(rc == 0, "LNetPut %d", rc);
	if (rc == 0)
		atomic_inc(&sends);
	CHECK(op_settle(cop, cmd, 10) & op_settle(sop, smd, 10),
	      "truncate: no events");
	CHECK(sop->mlength[0] == 1000 && sop->rlength[0] == 4096,
	      "truncate: target mlength %u rlength %u", sop->mlength[0],
	      sop->rlength[0]);
	i = pair(cop, LNET_EVENT_ACK);
	CHECK(i >= 0 && cop->mlength[i] == 1000, "truncate: ACK event %d", i);
	CHECK(buf_same(&src, &dst, 1000), "truncate: data differs");
	pr_info("lnet_ulp: truncated PUT ok\n");
out:
	buf_free(&src);
	buf_free(&dst);
	op_free(cop);
	op_free(sop);
}

/*
 * A request nothing matches: the target drops it, no ACK or REPLY comes,
 * and the response tracker ends the operation with an UNLINK event.
 */
static void test_no_response(bool get, int timeout)
{
	struct lnet_counters before, after;
	struct buf b = {};
	struct op *cop = op_new(true);
	struct lnet_handle_md cmd = INVALID_MDH;
	int rc;

	if (!cop || buf_alloc(&b, 4096, false)) {
		CHECK(0, "no memory");
		goto out;
	}
	counters(&before);
	rc = bind(&b, 2, 0, cop, &cmd);
	CHECK(rc == 0, "bind %d", rc);
	if (get)
		rc = timeout ? LNetGetTimeout(NULL, cmd, &self, ULP_PORTAL,
					      0xdead, 0, false, timeout)
			     : LNetGet(NULL, cmd, &self, ULP_PORTAL, 0xdead, 0,
				       false);
	else
		rc = LNetPutTimeout(NULL, cmd, LNET_ACK_REQ, &self, ULP_PORTAL,
				    0xdead, 0, 0, timeout);
	CHECK(rc == 0, "send %d", rc);
	if (rc == 0)
		atomic_inc(&sends);
	CHECK(op_settle(cop, cmd, 60), "%s miss: no final event",
	      get ? "GET" : "PUT");
	counters(&after);
	CHECK(cop->nev == 2 && cop->type[0] == LNET_EVENT_SEND &&
	      cop->status[0] == 0 && cop->type[1] == LNET_EVENT_UNLINK &&
	      cop->unlinked[1], "miss: events n=%d %d,%d", cop->nev,
	      cop->type[0], cop->type[1]);
	CHECK(after.lct_health.lch_response_timeout_count ==
	      before.lct_health.lch_response_timeout_count + 1,
	      "response_timeout_count %u -> %u",
	      before.lct_health.lch_response_timeout_count,
	      after.lct_health.lch_response_timeout_count);
	CHECK(after.lct_common.lcc_drop_count ==
	      before.lct_common.lcc_drop_count + 1, "drop_count %u -> %u",
	      before.lct_common.lcc_drop_count,
	      after.lct_common.lcc_drop_count);
	pr_info("lnet_ulp: %s match miss timed out (%s timeout) ok\n",
		get ? "GET" : "PUT", timeout ? "own" : "transaction");
out:
	buf_free(&b);
	op_free(cop);
}

/* Unlinking an idle posted buffer gives UNLINK and removes its ME. */
static void test_unlink(void)
{
	struct buf b = {};
	struct op *sop = op_new(false);
	struct lnet_handle_md smd = INVALID_MDH;
	int rc;

	if (!sop || buf_alloc(&b, 512, false)) {
		CHECK(0, "no memory");
		goto out;
	}
	rc = post(&b, 0x400, LNET_MD_OP_PUT, LNET_MD_THRESH_INF, sop, &smd);
	CHECK(rc == 0, "post %d", rc);
	rc = LNetMDUnlink(smd);
	CHECK(rc == 0, "unlink %d", rc);
	CHECK(op_settle(sop, smd, 5) && sop->nev == 1 &&
	      sop->type[0] == LNET_EVENT_UNLINK && sop->unlinked[0],
	      "unlink: events n=%d type=%d", sop->nev, sop->type[0]);
	CHECK(LNetMDUnlink(smd) == -ENOENT, "second unlink not ENOENT");
	pr_info("lnet_ulp: explicit unlink ok\n");
out:
	buf_free(&b);
	op_free(sop);
}

static void test_bad_args(void)
{
	struct lnet_handle_md h = { .cookie = 0x7777777 };
	struct lnet_md md = { .umd_start = NULL, .umd_length = 16 };
	struct bio_vec bad = { .bv_page = NULL, .bv_len = 10 };
	struct lnet_me *me;
	char c[8];

	me = LNetMEAttach(64, &anyone, 0, 0, LNET_UNLINK, LNET_INS_AFTER);
	CHECK(IS_ERR(me) && PTR_ERR(me) == -EINVAL, "portal 64 accepted");
	me = LNetMEAttach(ULP_PORTAL, NULL, 0, 0, LNET_UNLINK, LNET_INS_AFTER);
	CHECK(IS_ERR(me) && PTR_ERR(me) == -EINVAL, "NULL match id accepted");
	CHECK(LNetMDBind(&md, LNET_UNLINK, &h) == -EINVAL, "NULL start bound");
	md.umd_start = c;
	md.umd_length = sizeof(c);
	md.umd_options = LNET_MD_OP_PUT;
	CHECK(LNetMDBind(&md, LNET_UNLINK, &h) == -EINVAL,
	      "active MD bound");
	md.umd_options = LNET_MD_KIOV;
	md.umd_start = &bad;
	md.umd_length = 1;
	CHECK(LNetMDBind(&md, LNET_UNLINK, &h) == -EINVAL, "bad kiov bound");
	md.umd_options = 0x10000;
	md.umd_start = c;
	md.umd_length = sizeof(c);
	CHECK(LNetMDBind(&md, LNET_UNLINK, &h) == -EINVAL,
	      "unknown option bound");
	h.cookie = 0x7777777;
	CHECK(LNetPut(NULL, h, LNET_ACK_REQ, &self, ULP_PORTAL, 0, 0, 0) ==
	      -ENOENT, "PUT on a bad handle");
	CHECK(LNetMDUnlink(h) == -ENOENT, "unlink of a bad handle");
	pr_info("lnet_ulp: bad arguments refused ok\n");
}

/*
 * A lazy portal holds a request that matches nothing until a buffer is
 * posted; clearing the attribute drops what waits.
 */
#define LAZY_PORTAL 11
static void test_lazy(void)
{
	struct lnet_counters before, after;
	struct buf src = {}, dst = {}, src2 = {};
	struct op *cop = op_new(true), *sop = op_new(false);
	struct op *cop2 = op_new(true);
	struct lnet_handle_md cmd = INVALID_MDH, smd = INVALID_MDH;
	struct lnet_handle_md cmd2 = INVALID_MDH;
	struct lnet_md md;
	struct lnet_me *me;
	int rc, i;

	if (!cop || !sop || !cop2 || buf_alloc(&src, 8192, true) ||
	    buf_alloc(&dst, 8192, false) || buf_alloc(&src2, 100, false)) {
		CHECK(0, "no memory");
		goto out;
	}
	buf_fill(&src, 21);
	CHECK(LNetSetLazyPortal(64) == -EINVAL, "lazy portal 64 accepted");
	CHECK(LNetSetLazyPortal(LAZY_PORTAL) == 0, "set lazy");
	rc = bind(&src, 2, 0, cop, &cmd);
	CHECK(rc == 0, "bind %d", rc);
	rc = LNetPut(NULL, cmd, LNET_ACK_REQ, &self, LAZY_PORTAL, 0x500, 0, 7);
	CHECK(rc == 0, "LNetPut %d", rc);
	if (rc == 0)
		atomic_inc(&sends);
	CHECK(cop->nev == 0, "lazy: %d events before a buffer", cop->nev);
	/* Posting the buffer lets the waiting PUT in. */
	memset(&md, 0, sizeof(md));
	md.umd_start = dst.start;
	md.umd_length = dst.length;
	md.umd_threshold = 1;
	md.umd_options = LNET_MD_OP_PUT;
	md.umd_user_ptr = sop;
	md.umd_handler = ulp_handler;
	me = LNetMEAttach(LAZY_PORTAL, &anyone, 0x500, 0, LNET_UNLINK,
			  LNET_INS_AFTER);
	CHECK(!IS_ERR(me), "ME");
	if (!IS_ERR(me))
		CHECK(LNetMDAttach(me, &md, LNET_UNLINK, &smd) == 0, "MD");
	CHECK(op_settle(cop, cmd, 10) & op_settle(sop, smd, 10),
	      "lazy: no events");
	i = pair(cop, LNET_EVENT_ACK);
	CHECK(i >= 0 && sop->type[0] == LNET_EVENT_PUT &&
	      sop->mlength[0] == 8192, "lazy: events %d, target %d/%u", i,
	      sop->type[0], sop->mlength[0]);
	CHECK(buf_same(&src, &dst, 8192), "lazy: data differs");

	/* A waiting request is dropped when the portal stops being lazy. */
	counters(&before);
	rc = bind(&src2, 2, 0, cop2, &cmd2);
	CHECK(rc == 0, "bind %d", rc);
	rc = LNetPutTimeout(NULL, cmd2, LNET_ACK_REQ, &self, LAZY_PORTAL,
			    0x501, 0, 0, 2);
	CHECK(rc == 0, "LNetPut %d", rc);
	if (rc == 0)
		atomic_inc(&sends);
	CHECK(LNetClearLazyPortal(LAZY_PORTAL) == 0, "clear lazy");
	CHECK(op_settle(cop2, cmd2, 30), "lazy drop: no final event");
	counters(&after);
	CHECK(cop2->nev == 2 && cop2->type[1] == LNET_EVENT_UNLINK,
	      "lazy drop: events n=%d", cop2->nev);
	CHECK(after.lct_common.lcc_drop_count ==
	      before.lct_common.lcc_drop_count + 1, "lazy drop not counted");
	pr_info("lnet_ulp: lazy portal ok\n");
out:
	buf_free(&src);
	buf_free(&dst);
	buf_free(&src2);
	op_free(cop);
	op_free(sop);
	op_free(cop2);
}

/*
 * A discovery push, as a Lustre peer sends one: our own ping buffer (GET
 * from the reserved portal) PUT back to the reserved portal with the ping
 * match bits and an ACK wanted. LNet must take it and ACK it; a push that
 * is not a ping buffer is ACKed too (it arrived) and refused afterwards.
 */
#define PING_PORTAL	0
#define PING_BITS	0x8000000000000000ULL

static void test_push(void)
{
	struct buf info = {};
	struct op *gop = op_new(true), *pop = op_new(true);
	struct lnet_handle_md gmd = INVALID_MDH, pmd = INVALID_MDH;
	unsigned int len = 0;
	int rc, i, round;

	if (!gop || !pop || buf_alloc(&info, 4096, false)) {
		CHECK(0, "no memory");
		goto out;
	}
	rc = bind(&info, 2, LNET_MD_TRUNCATE, gop, &gmd);
	CHECK(rc == 0, "bind %d", rc);
	rc = LNetGet(NULL, gmd, &self, PING_PORTAL, PING_BITS, 0, false);
	CHECK(rc == 0, "ping GET %d", rc);
	if (rc == 0)
		atomic_inc(&sends);
	CHECK(op_settle(gop, gmd, 10), "ping GET: no final event");
	i = pair(gop, LNET_EVENT_REPLY);
	CHECK(i >= 0 && gop->mlength[i] >= 16, "ping GET: events n=%d", gop->nev);
	if (i >= 0)
		len = gop->mlength[i];
	for (round = 0; round < 2 && len; round++) {
		struct buf push = info;

		push.length = len;
		if (round == 1)
			memset(info.start, 0x5a, 8);	/* no ping magic */
		op_init(pop, true);
		rc = bind(&push, 2, 0, pop, &pmd);
		CHECK(rc == 0, "bind %d", rc);
		rc = LNetPut(NULL, pmd, LNET_ACK_REQ, &self, PING_PORTAL,
			     PING_BITS, 0, 0);
		CHECK(rc == 0, "push PUT %d", rc);
		if (rc == 0)
			atomic_inc(&sends);
		CHECK(op_settle(pop, pmd, 10), "push %d: no final event", round);
		i = pair(pop, LNET_EVENT_ACK);
		CHECK(i >= 0 && pop->mlength[i] == len,
		      "push %d: not ACKed: events n=%d %d/%d %d/%d", round,
		      pop->nev, pop->type[0], pop->status[0], pop->type[1],
		      pop->status[1]);
	}
	pr_info("lnet_ulp: push of a %u-byte ping buffer ACKed\n", len);
out:
	buf_free(&info);
	op_free(gop);
	op_free(pop);
}

/*
 * GETs the ping buffer of @target into @info (bound with @op); its length
 * in @len. 0 or a negative errno.
 */
static int get_ping_info(struct lnet_processid *target, struct buf *info,
			 struct op *op, unsigned int *len)
{
	struct lnet_handle_md h = INVALID_MDH;
	int rc, i;

	rc = bind(info, 2, LNET_MD_TRUNCATE, op, &h);
	if (rc)
		return rc;
	rc = LNetGet(NULL, h, target, PING_PORTAL, PING_BITS, 0, false);
	if (rc)
		return rc;
	atomic_inc(&sends);
	if (!op_settle(op, h, 20))
		return -EIO;
	i = pair(op, LNET_EVENT_REPLY);
	if (i < 0)
		return -EIO;
	*len = op->mlength[i];
	return 0;
}

/*
 * mode=pinginfo: GETs the ping buffer of peer= (or of this node) and logs
 * its header: features, sequence number (the loopback entry's status
 * word) and entry count.
 */
static int pinginfo_run(void)
{
	struct lnet_processid target = self;
	struct buf info = {};
	struct op *op = op_new(true);
	unsigned int len;
	__le32 *w;
	int rc;

	if (*peer && libcfs_strnid(&target.nid, peer)) {
		pr_err("lnet_ulp: bad peer NID '%s'\n", peer);
		op_free(op);
		return -EINVAL;
	}
	target.pid = LNET_PID_LUSTRE;
	if (!op || buf_alloc(&info, 4096, false)) {
		rc = -ENOMEM;
		goto out;
	}
	rc = get_ping_info(&target, &info, op, &len);
	if (!rc && len < 28)
		rc = -EIO;
	if (rc)
		goto out;
	w = (__le32 *)info.flat;
	pr_info("lnet_ulp: ping info: features 0x%x sequence %u nnis %u\n",
		le32_to_cpu(w[1]), le32_to_cpu(w[6]), le32_to_cpu(w[3]));
	rc = 0;
out:
	if (rc)
		pr_err("lnet_ulp: pinginfo: %d\n", rc);
	buf_free(&info);
	op_free(op);
	return rc;
}

/*
 * mode=pushes: pushes to peer= this node's own ping buffer spoilt one field
 * at a time (wire.md §3), then one that is whole but not Multi-Rail, then
 * the buffer as it is. The push target ACKs each; what the peer made of
 * them is in its console.
 */
static int pushes_run(void)
{
	struct lnet_processid target = { .pid = LNET_PID_LUSTRE };
	struct buf own = {}, push = {};
	struct op *op = op_new(true);
	struct lnet_handle_md h = INVALID_MDH;
	unsigned int len = 0;
	int rc = -ENOMEM, i, acked = 0;
	/* (word, value) spoilt; word -1: cut to 8 bytes, -2: left whole. */
	static const struct { int word; u32 value; const char *what; } bad[] = {
		{ 0, 0x5a5a5a5a, "bad magic" },
		{ 1, 0x10a, "unknown feature" },
		{ 1, 0x18, "no NI status" },
		{ 3, 0, "no NIs" },
		{ 3, 100000, "too many NIs" },
		{ 4, 0x0a000001, "first entry not 0@lo" },
		{ -1, 0, "truncated" },
		{ 1, 0x12, "not Multi-Rail" },
		{ -2, 0, "as it is" },
	};

	if (libcfs_strnid(&target.nid, peer)) {
		pr_err("lnet_ulp: bad peer NID '%s'\n", peer);
		op_free(op);
		return -EINVAL;
	}
	if (!op || buf_alloc(&own, 4096, false) || buf_alloc(&push, 4096, false))
		goto out;
	rc = get_ping_info(&self, &own, op, &len);
	if (!rc && len < 48)
		rc = -EIO;
	if (rc)
		goto out;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		__le32 *w = (__le32 *)push.flat;

		memcpy(push.flat, own.flat, len);
		push.length = len;
		if (bad[i].word >= 0)
			w[bad[i].word] = cpu_to_le32(bad[i].value);
		else if (bad[i].word == -1)
			push.length = 8;
		op_init(op, true);
		h = (struct lnet_handle_md)INVALID_MDH;
		rc = bind(&push, 2, 0, op, &h);
		if (rc)
			goto out;
		rc = LNetPut(NULL, h, LNET_ACK_REQ, &target, PING_PORTAL,
			     PING_BITS, 0, 0);
		if (rc)
			goto out;
		atomic_inc(&sends);
		rc = -EIO;
		if (!op_settle(op, h, 20) || pair(op, LNET_EVENT_ACK) < 0) {
			pr_err("lnet_ulp: push %s: not ACKed\n", bad[i].what);
			goto out;
		}
		acked++;
		/* The peer reposts each push buffer a push used (Lustre's
		 * push target takes one push at a time). */
		msleep(200);
	}
	rc = 0;
	pr_info("lnet_ulp: %d pushes to %s ACKed\n", acked, peer);
out:
	if (rc)
		pr_err("lnet_ulp: pushes: %d\n", rc);
	buf_free(&own);
	buf_free(&push);
	op_free(op);
	return rc;
}

static void test_dist(void)
{
	struct lnet_nid src, far = self.nid;
	__u32 order = 99;

	CHECK(LNetDist(&self.nid, &src, &order) == 0 &&
	      !memcmp(&src, &self.nid, sizeof(src)) && order == 0,
	      "LNetDist to self");
	far.nid_type = 2;	/* tcp: no local NI, no route */
	far.nid_addr[0] = cpu_to_be32(0x01020304);
	CHECK(LNetDist(&far, &src, &order) == -EHOSTUNREACH,
	      "LNetDist to an unreachable net");
	pr_info("lnet_ulp: LNetDist ok\n");
}

/* The NID "s", which the test expects to parse. */
static struct lnet_nid nid_of(const char *s)
{
	struct lnet_nid n = {};

	CHECK(libcfs_strnid(&n, s) == 0, "libcfs_strnid(\"%s\")", s);
	return n;
}

static bool nid_is(const struct lnet_nid *n, const char *s)
{
	struct lnet_nid m = nid_of(s);

	return !memcmp(n, &m, sizeof(m));
}

/* NIDs, nets and process ids as text, as Lustre's callers log them. */
static void test_nidstr(void)
{
	char buf[LNET_NIDSTR_SIZE], small[8];
	lnet_nid_t nid4 = LNET_MKNID(LNET_MKNET(2, 1), 0xc0a80102);
	struct lnet_processid id = { .nid = nid_of("0@lo"), .pid = 12345 };
	struct lnet_nid n6 = nid_of("2001:db8::1@tcp"), bad = {};
	char *s;

	s = libcfs_nid2str_r(nid4, buf, sizeof(buf));
	CHECK(s == buf && !strcmp(buf, "192.168.1.2@tcp1"),
	      "libcfs_nid2str_r: %s", buf);
	libcfs_nid2str_r(nid4, small, sizeof(small));
	CHECK(!strcmp(small, "192.168"), "libcfs_nid2str_r cut: %s", small);
	libcfs_nid2str_r(LNET_NID_ANY, buf, sizeof(buf));
	CHECK(!strcmp(buf, "<?>"), "libcfs_nid2str_r(ANY): %s", buf);
	CHECK(!strcmp(libcfs_nid2str(LNET_MKNID(LNET_MKNET(5, 0), 0x0a000001)),
		      "10.0.0.1@o2ib"), "libcfs_nid2str");

	s = libcfs_nidstr_r(&n6, buf, sizeof(buf));
	CHECK(s == buf && !strcmp(buf, "2001:db8::1@tcp"),
	      "libcfs_nidstr_r: %s", buf);
	CHECK(!strcmp(libcfs_nidstr(&self.nid), "0@lo"), "libcfs_nidstr: %s",
	      libcfs_nidstr(&self.nid));
	bad.nid_size = 3;	/* address bytes beyond 4: only 0 or 12 */
	CHECK(!strcmp(libcfs_nidstr(&bad), "<?>"), "libcfs_nidstr(bad)");

	CHECK(!strcmp(libcfs_idstr(&id), "12345-0@lo"), "libcfs_idstr: %s",
	      libcfs_idstr(&id));
	id.pid = LNET_PID_ANY;
	CHECK(!strcmp(libcfs_idstr(&id), "LNET_PID_ANY-0@lo"),
	      "libcfs_idstr(ANY): %s", libcfs_idstr(&id));
	id.pid = LNET_PID_USERFLAG | 7;
	CHECK(!strcmp(libcfs_idstr(&id), "U7-0@lo"), "libcfs_idstr(user): %s",
	      libcfs_idstr(&id));
	/* The ring: a string survives the ones made after it. */
	s = libcfs_nidstr(&n6);
	libcfs_idstr(&id);
	CHECK(!strcmp(s, "2001:db8::1@tcp"), "ring overwrote a string: %s", s);

	CHECK(libcfs_str2net("tcp1") == LNET_MKNET(2, 1), "libcfs_str2net(tcp1)");
	CHECK(libcfs_str2net("o2ib") == LNET_MKNET(5, 0), "libcfs_str2net(o2ib)");
	CHECK(libcfs_str2net("lo") == LNET_MKNET(9, 0), "libcfs_str2net(lo)");
	CHECK(libcfs_str2net("eth0") == LNET_NET_ANY, "libcfs_str2net(eth0)");
	CHECK(libcfs_str2net("tcp1x") == LNET_NET_ANY, "libcfs_str2net(tcp1x)");
	CHECK(libcfs_strnid(&bad, "1.2.3@tcp") == -EINVAL, "libcfs_strnid bad");
	pr_info("lnet_ulp: NID strings ok\n");
}

/*
 * Peers as PtlRPC makes them (LNetAddPeer with a server's NIDs) and asks
 * about them, with discovery enabled (the default) and only 0@lo local.
 */
static void test_peers(void)
{
	struct lnet_nid nids[3] = {
		nid_of("10.9.0.1@tcp"), nid_of("0@lo"), nid_of("10.9.0.2@tcp1"),
	};
	struct lnet_nid more[2] = {
		nid_of("10.9.0.2@tcp1"), nid_of("10.9.0.3@tcp"),
	};
	struct lnet_processid id = { .pid = LNET_PID_LUSTRE };
	struct lnet_nid n;

	CHECK(LNetGetPeerDiscoveryStatus() == 1, "discovery status %d",
	      LNetGetPeerDiscoveryStatus());

	/* A NID of no peer is its own primary (its peer is made). */
	n = nid_of("10.9.9.9@tcp");
	LNetPrimaryNID(&n);
	CHECK(nid_is(&n, "10.9.9.9@tcp"), "primary of a new NID: %s",
	      libcfs_nidstr(&n));
	n = self.nid;
	LNetPrimaryNID(&n);
	CHECK(nid_is(&n, "0@lo"), "primary of 0@lo: %s", libcfs_nidstr(&n));
	/* No NI but 0@lo: the NID given stays, as in Lustre. */
	n = nid_of("10.9.9.8@tcp");
	LNetLocalPrimaryNID(&n);
	CHECK(nid_is(&n, "10.9.9.8@tcp"), "local primary: %s",
	      libcfs_nidstr(&n));

	/* One Multi-Rail peer, 10.9.0.1@tcp its primary; 0@lo skipped. */
	LNetAddPeer(nids, 3);
	n = nids[2];
	LNetPrimaryNID(&n);
	CHECK(nid_is(&n, "10.9.0.1@tcp"), "primary of the second NID: %s",
	      libcfs_nidstr(&n));
	n = nids[0];
	LNetPrimaryNID(&n);
	CHECK(nid_is(&n, "10.9.0.1@tcp"), "primary of the primary: %s",
	      libcfs_nidstr(&n));
	/* A NID of that locked peer leads more NIDs to it. */
	LNetAddPeer(more, 2);
	n = more[1];
	LNetPrimaryNID(&n);
	CHECK(nid_is(&n, "10.9.0.1@tcp"), "primary of a later NID: %s",
	      libcfs_nidstr(&n));
	/* Nothing to add: no harm. */
	LNetAddPeer(NULL, 1);
	LNetAddPeer(nids, 0);

	CHECK(LNetPeerDiscovered(&nids[2]) == 1, "discovered: %d",
	      LNetPeerDiscovered(&nids[2]));
	CHECK(LNetPeerDiscovered(&self.nid) == 1, "0@lo discovered");
	id.nid = nids[0];
	LNetDebugPeer(&id);
	pr_info("lnet_ulp: peers ok\n");
}

static void unused_handler(struct lnet_event *ev)
{
}

/* The rest of what PtlRPC, LDLM and the clients call. */
static void test_misc(void)
{
	struct page *page = alloc_page(GFP_KERNEL);
	int cpt = lnet_cpt_of_nid(LNET_MKNID(LNET_MKNET(2, 0), 0x0a090001),
				  NULL);

	if (num_online_nodes() == 1)
		CHECK(cpt == 0, "lnet_cpt_of_nid %d on one node", cpt);
	else
		CHECK(cpt == CFS_CPT_ANY || node_online(cpt),
		      "lnet_cpt_of_nid %d", cpt);
	if (num_online_nodes() == 1)
		CHECK(lnet_cpt_of_nid(LNET_NID_ANY, NULL) == 0,
		      "lnet_cpt_of_nid(ANY) on one node");
	if (page) {
		CHECK(!lnet_is_rdma_only_page(page), "an RDMA-only page");
		__free_page(page);
	}
	/* No MD uses it: nothing is logged. */
	lnet_assert_handler_unused(unused_handler);
	lnet_assert_handler_unused(NULL);
	pr_info("lnet_ulp: cpt, rdma pages, handler check ok\n");
}

/*
 * Traffic during shutdown: a thread sends PUTs (answered) and GETs (never
 * answered) in a loop while the module's exit calls LNetNIFini. Every send
 * that LNet accepted must still end in exactly one final event.
 */
#define TRAFFIC_PORTAL 12
static struct task_struct *traffic_task;
static atomic_t traffic_sends = ATOMIC_INIT(0);
static atomic_t traffic_finals = ATOMIC_INIT(0);
static char traffic_src[4096], traffic_dst[4096], traffic_sink[4096];
static struct lnet_handle_md traffic_post;

static int slow_ms;
module_param(slow_ms, int, 0444);
MODULE_PARM_DESC(slow_ms, "traffic: each ACK's handler sleeps this long (a ULP slow in its callback while LNet shuts down)");
static bool unloading;

static void traffic_handler(struct lnet_event *ev)
{
	if (slow_ms > 0 && ev->type == LNET_EVENT_ACK) {
		/* Its message is in flight until the handler returns. */
		msleep(slow_ms);
		if (READ_ONCE(unloading))
			pr_info("lnet_ulp: a slow handler returned during unload\n");
	}
	if (ev->md_user_ptr == traffic_src && ev->unlinked)
		atomic_inc(&traffic_finals);
}

static int traffic_main(void *unused)
{
	struct lnet_md md = {
		.umd_start = traffic_src,
		.umd_length = sizeof(traffic_src),
		.umd_threshold = 2,
		.umd_user_ptr = traffic_src,
		.umd_handler = traffic_handler,
	};
	struct lnet_handle_md h;
	unsigned long n = 0;
	int rc;

	while (!kthread_should_stop()) {
		rc = LNetMDBind(&md, LNET_UNLINK, &h);
		if (rc) {
			/* LNet is going or gone. */
			msleep(20);
			continue;
		}
		if (n++ & 1)
			rc = LNetPut(NULL, h, LNET_ACK_REQ, &self,
				     TRAFFIC_PORTAL, 0x600, 0, n);
		else
			rc = LNetGetTimeout(NULL, h, &self, TRAFFIC_PORTAL,
					    0x601, 0, false, 3600);
		if (rc == 0)
			atomic_inc(&traffic_sends);
		else
			LNetMDUnlink(h);
		usleep_range(200, 400);
	}
	return 0;
}

static void start_traffic(void)
{
	struct lnet_md md = {
		.umd_start = traffic_dst,
		.umd_length = sizeof(traffic_dst),
		.umd_threshold = LNET_MD_THRESH_INF,
		.umd_options = LNET_MD_OP_PUT | LNET_MD_MANAGE_REMOTE,
		.umd_user_ptr = traffic_dst,
		.umd_handler = traffic_handler,
	};
	struct lnet_me *me;

	(void)traffic_sink;
	me = LNetMEAttach(TRAFFIC_PORTAL, &anyone, 0x600, 0, LNET_UNLINK,
			  LNET_INS_AFTER);
	CHECK(!IS_ERR(me), "traffic ME");
	if (IS_ERR(me) || LNetMDAttach(me, &md, LNET_RETAIN, &traffic_post)) {
		CHECK(0, "traffic MD");
		return;
	}
	traffic_task = kthread_run(traffic_main, NULL, "lnet_ulp_traffic");
	CHECK(!IS_ERR(traffic_task), "traffic thread");
	if (IS_ERR(traffic_task))
		traffic_task = NULL;
	else
		msleep(500);
	pr_info("lnet_ulp: traffic running: %d sends so far\n",
		atomic_read(&traffic_sends));
}

static struct op *pending;
static struct buf *pending_bufs;

static void start_inflight(void)
{
	struct lnet_handle_md h;
	int i, rc;

	pending = kcalloc(inflight, sizeof(*pending), GFP_KERNEL);
	pending_bufs = kcalloc(inflight, sizeof(*pending_bufs), GFP_KERNEL);
	if (!pending || !pending_bufs) {
		CHECK(0, "no memory");
		return;
	}
	for (i = 0; i < inflight; i++) {
		op_init(&pending[i], true);
		if (buf_alloc(&pending_bufs[i], 4096, i & 1)) {
			CHECK(0, "no memory");
			return;
		}
		rc = bind(&pending_bufs[i], 2, 0, &pending[i], &h);
		CHECK(rc == 0, "bind %d", rc);
		/* Nothing will answer for an hour. */
		rc = LNetGetTimeout(NULL, h, &self, ULP_PORTAL, 0xbad0 + i, 0,
				    false, 3600);
		CHECK(rc == 0, "GET %d", rc);
		if (rc == 0)
			atomic_inc(&sends);
	}
	pr_info("lnet_ulp: %d GETs in flight\n", inflight);
}

static void free_inflight(void)
{
	int i;

	/* Unloading anyway: at least keep what LNet may still write. */
	for (i = 0; pending && i < inflight; i++)
		if (!completion_done(&pending[i].done))
			abandoned = true;
	if (abandoned)
		return;
	for (i = 0; pending_bufs && i < inflight; i++)
		buf_free(&pending_bufs[i]);
	kfree(pending);
	kfree(pending_bufs);
	pending = NULL;
	pending_bufs = NULL;
}

/*
 * Between two nodes: the server posts buffers on REMOTE_PORTAL and waits;
 * the client waits until the server answers, then PUTs and GETs 4 KiB and
 * 1 MiB, checks the data GETs bring back, and tells the server it is done.
 */
#define REMOTE_PORTAL	20
#define BITS_SINK	0x7000
#define BITS_SOURCE	0x7001
#define BITS_DONE	0x7002
#define BITS_LAZY	0x7003	/* no buffer until "attach" is written */
#define PATTERN		77

static struct buf srv_sink, srv_source, srv_done, srv_lazy;
static struct op srv_sink_op, srv_source_op, srv_done_op, srv_lazy_op;
static struct lnet_handle_md srv_mds[4] = {
	{ LNET_WIRE_HANDLE_COOKIE_NONE }, { LNET_WIRE_HANDLE_COOKIE_NONE },
	{ LNET_WIRE_HANDLE_COOKIE_NONE }, { LNET_WIRE_HANDLE_COOKIE_NONE },
};
static bool srv_ready;

static void lazy_handler(struct lnet_event *ev)
{
	if (ev->type == LNET_EVENT_PUT)
		pr_info("lnet_ulp: lazy PUT ended: status %d, mlength %u\n",
			ev->status, ev->mlength);
	/* Used up: attach may post another. */
	if (ev->unlinked)
		LNetInvalidateMDHandle(&srv_mds[3]);
	ulp_handler(ev);
}

/*
 * Writing attach (mode=server lazy=1) posts the buffer for BITS_LAZY, as
 * PtlRPC posts request buffers late: a PUT waiting on the lazy portal is
 * received into it now, however long ago, and over whatever connection,
 * it arrived.
 */
static int lazy_attach_set(const char *val, const struct kernel_param *kp)
{
	struct lnet_md md = { .umd_handler = lazy_handler };
	struct lnet_me *me;

	if (!srv_ready || !lazy || !LNetMDHandleIsInvalid(srv_mds[3]))
		return -EINVAL;
	me = LNetMEAttach(REMOTE_PORTAL, &anyone, BITS_LAZY, 0, LNET_UNLINK,
			  LNET_INS_AFTER);
	if (IS_ERR(me))
		return PTR_ERR(me);
	md.umd_start = srv_lazy.start;
	md.umd_length = srv_lazy.length;
	md.umd_threshold = 1;
	md.umd_options = LNET_MD_OP_PUT;
	md.umd_user_ptr = &srv_lazy_op;
	pr_info("lnet_ulp: posting the lazy buffer\n");
	return LNetMDAttach(me, &md, LNET_UNLINK, &srv_mds[3]);
}

static const struct kernel_param_ops lazy_attach_ops = {
	.set = lazy_attach_set,
};
module_param_cb(attach, &lazy_attach_ops, NULL, 0200);
MODULE_PARM_DESC(attach, "mode=server lazy=1: write to post the lazy buffer (again once used)");

/*
 * What the server's PUT events say of their initiator: PtlRPC takes it as
 * the request's peer, so it must be the client's primary NID whichever
 * rail a PUT came over; the source is the NID it came from.
 */
static struct lnet_nid srv_initiator;
static int srv_puts, srv_initiator_changes, srv_other_source;

static bool nid_eq(const struct lnet_nid *a, const struct lnet_nid *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void sink_handler(struct lnet_event *ev)
{
	if (ev->type == LNET_EVENT_PUT) {
		if (srv_puts++ == 0)
			srv_initiator = ev->initiator.nid;
		else if (!nid_eq(&srv_initiator, &ev->initiator.nid))
			srv_initiator_changes++;
		if (!nid_eq(&ev->initiator.nid, &ev->source.nid))
			srv_other_source++;
	}
	ulp_handler(ev);
}

static void done_handler(struct lnet_event *ev)
{
	if (ev->type == LNET_EVENT_PUT)
		pr_info("lnet_ulp: peer done\n");
	ulp_handler(ev);
}

static int server_start(void)
{
	struct lnet_md md = { .umd_handler = ulp_handler };
	struct lnet_me *me;
	int rc;

	op_init(&srv_sink_op, false);
	op_init(&srv_source_op, false);
	op_init(&srv_done_op, false);
	op_init(&srv_lazy_op, false);
	if (buf_alloc(&srv_sink, BIG, true) || buf_alloc(&srv_source, BIG, true) ||
	    buf_alloc(&srv_done, 64, false) || buf_alloc(&srv_lazy, 4096, false))
		return -ENOMEM;
	buf_fill(&srv_source, PATTERN);

	me = LNetMEAttach(REMOTE_PORTAL, &anyone, BITS_SINK, 0, LNET_UNLINK,
			  LNET_INS_AFTER);
	if (IS_ERR(me))
		return PTR_ERR(me);
	md.umd_start = srv_sink.start;
	md.umd_length = srv_sink.length;
	md.umd_threshold = LNET_MD_THRESH_INF;
	/* GETs read back what PUTs wrote (the client's round trips). */
	md.umd_options = LNET_MD_OP_PUT | LNET_MD_OP_GET | LNET_MD_MANAGE_REMOTE |
			 LNET_MD_KIOV;
	md.umd_user_ptr = &srv_sink_op;
	md.umd_handler = sink_handler;
	rc = LNetMDAttach(me, &md, LNET_RETAIN, &srv_mds[0]);
	md.umd_handler = ulp_handler;
	if (rc)
		return rc;

	me = LNetMEAttach(REMOTE_PORTAL, &anyone, BITS_SOURCE, 0, LNET_UNLINK,
			  LNET_INS_AFTER);
	if (IS_ERR(me))
		return PTR_ERR(me);
	md.umd_start = srv_source.start;
	md.umd_length = srv_source.length;
	md.umd_options = LNET_MD_OP_GET | LNET_MD_MANAGE_REMOTE | LNET_MD_KIOV;
	md.umd_user_ptr = &srv_source_op;
	rc = LNetMDAttach(me, &md, LNET_RETAIN, &srv_mds[1]);
	if (rc)
		return rc;

	me = LNetMEAttach(REMOTE_PORTAL, &anyone, BITS_DONE, 0, LNET_UNLINK,
			  LNET_INS_AFTER);
	if (IS_ERR(me))
		return PTR_ERR(me);
	md.umd_start = srv_done.start;
	md.umd_length = srv_done.length;
	/* Several clients may say they are done, one after another. */
	md.umd_threshold = LNET_MD_THRESH_INF;
	md.umd_options = LNET_MD_OP_PUT | LNET_MD_MANAGE_REMOTE;
	md.umd_user_ptr = &srv_done_op;
	md.umd_handler = done_handler;
	rc = LNetMDAttach(me, &md, LNET_UNLINK, &srv_mds[2]);
	if (rc)
		return rc;
	if (lazy) {
		rc = LNetSetLazyPortal(REMOTE_PORTAL);
		if (rc)
			return rc;
	}
	srv_ready = true;
	pr_info("lnet_ulp: server ready\n");
	return 0;
}

/*
 * LNet may stay up after we go (lnetctl holds it): unlink what we posted,
 * so no event reaches this module once it is gone, before the buffers go.
 */
static void server_stop(void)
{
	struct op *ops[4] = { &srv_sink_op, &srv_source_op, &srv_done_op,
			      &srv_lazy_op };
	int i;

	/* What still waits there is dropped. */
	if (lazy && srv_ready)
		LNetClearLazyPortal(REMOTE_PORTAL);
	srv_ready = false;
	for (i = 0; i < 4; i++) {
		if (LNetMDHandleIsInvalid(srv_mds[i]))
			continue;
		/* ENOENT: already unlinked (the done MD after its PUT). */
		if (LNetMDUnlink(srv_mds[i]) != 0)
			continue;
		/*
		 * The module cannot stay behind from here (its init failed or
		 * its exit runs), so it waits as PtlRPC does for its MDs: a
		 * message still on the MD ends when its LND ends it, at the
		 * latest at the LND's timeout (a peer gone silent).
		 */
		while (!wait_op(ops[i], 30))
			pr_warn("lnet_ulp: a server MD still busy 30 s after its unlink\n");
		LNetInvalidateMDHandle(&srv_mds[i]);
	}
	buf_free(&srv_sink);
	buf_free(&srv_source);
	buf_free(&srv_done);
	buf_free(&srv_lazy);
	if (srv_puts)
		pr_info("lnet_ulp: server: %d PUTs, %d from a NID other than their initiator, initiator changed %d times\n",
			srv_puts, srv_other_source, srv_initiator_changes);
}

/*
 * One PUT (with ACK) or GET to the server at offset off of its MD; 0 when
 * it completed.
 */
static int remote_op_at(struct lnet_processid *srv, bool get, struct buf *b,
			__u64 bits, unsigned int off, int timeout, bool quiet)
{
	struct op *opp = kzalloc(sizeof(*opp), GFP_KERNEL);
	struct lnet_handle_md h;
	int rc, i;

	if (!opp)
		return -ENOMEM;
	op_init(opp, true);
	rc = bind(b, 2, 0, opp, &h);
	if (rc) {
		kfree(opp);
		return rc;
	}
	if (get)
		rc = LNetGetTimeout(NULL, h, srv, REMOTE_PORTAL, bits, off,
				    false, timeout);
	else
		rc = LNetPutTimeout(NULL, h, LNET_ACK_REQ, srv, REMOTE_PORTAL,
				    bits, off, 0, timeout);
	if (rc) {
		LNetMDUnlink(h);
		kfree(opp);
		return rc;
	}
	atomic_inc(&sends);
	/*
	 * As PtlRPC does: a send that failed gets no response, so the MD is
	 * unlinked rather than left to its response deadline.
	 */
	if (wait_for_completion_timeout(&opp->sent, (timeout + 30) * HZ) &&
	    opp->send_status && !completion_done(&opp->done))
		LNetMDUnlink(h);
	/* LNet promises a final event by the deadline; allow it slack. */
	if (!op_settle(opp, h, timeout + 30)) {
		CHECK(0, "no final event");
		op_free(opp);
		return -ETIMEDOUT;
	}
	i = pair(opp, get ? LNET_EVENT_REPLY : LNET_EVENT_ACK);
	rc = 0;
	if (i < 0) {
		if (!quiet)
			CHECK(0, "%s %u: events n=%d %d/%d %d/%d",
			      get ? "GET" : "PUT", b->bytes, opp->nev,
			      opp->type[0], opp->status[0], opp->type[1],
			      opp->status[1]);
		rc = -EIO;
	} else if (opp->mlength[i] != b->bytes) {
		CHECK(0, "mlength %u of %u", opp->mlength[i], b->bytes);
		rc = -EIO;
	}
	op_free(opp);
	return rc;
}

static int remote_op(struct lnet_processid *srv, bool get, struct buf *b,
		     __u64 bits, int timeout, bool quiet)
{
	return remote_op_at(srv, get, b, bits, 0, timeout, quiet);
}

/*
 * PUT n bytes at offset off of the server's sink, then GET them back: they
 * must return as sent. From 4 KiB up both ends are page vectors, and an
 * offset puts the data across the server's page boundaries.
 */
static void round_trip(struct lnet_processid *srv, unsigned int n,
		       unsigned int off, u8 seed)
{
	bool pages = n >= 4096;
	struct buf out, in;

	if (buf_alloc(&out, n, pages) || buf_alloc(&in, n, pages)) {
		CHECK(0, "no memory for %u bytes", n);
		goto out;
	}
	buf_fill(&out, seed);
	CHECK(remote_op_at(srv, false, &out, BITS_SINK, off, 20, false) == 0,
	      "PUT %u at %u", n, off);
	CHECK(remote_op_at(srv, true, &in, BITS_SINK, off, 20, false) == 0,
	      "GET %u at %u", n, off);
	CHECK(buf_same(&out, &in, n), "%u bytes at %u came back changed", n,
	      off);
out:
	buf_free(&out);
	buf_free(&in);
}

/* A page vector of 9192 bytes whose middle fragment is 1000 bytes at 100. */
static int buf_alloc_gappy(struct buf *b)
{
	static const unsigned int frag[3][2] = {
		{ 0, PAGE_SIZE }, { 100, 1000 }, { 0, PAGE_SIZE },
	};
	unsigned int i;

	memset(b, 0, sizeof(*b));
	b->kiov = kcalloc(3, sizeof(*b->kiov), GFP_KERNEL);
	if (!b->kiov)
		return -ENOMEM;
	b->start = b->kiov;
	b->length = 3;
	b->options = LNET_MD_KIOV;
	for (i = 0; i < 3; i++) {
		struct page *p = alloc_page(GFP_KERNEL | __GFP_ZERO);

		if (!p)
			return -ENOMEM;
		bvec_set_page(&b->kiov[i], p, frag[i][1], frag[i][0]);
		b->bytes += frag[i][1];
	}
	return 0;
}

/* Byte off of a gappy buffer (byte_at assumes whole pages). */
static u8 *gappy_byte(struct buf *b, unsigned int off)
{
	unsigned int i = 0;

	while (off >= b->kiov[i].bv_len)
		off -= b->kiov[i++].bv_len;
	return (u8 *)page_address(b->kiov[i].bv_page) + b->kiov[i].bv_offset +
	       off;
}

/*
 * PUT from a gappy page vector into the server's sink, then GET back into
 * another: gaps=1 wants the bytes back as sent, gaps=2 wants both refused
 * (each ends with a failure event, nothing hangs).
 */
static void gappy(struct lnet_processid *srv)
{
	struct buf out, in;
	int put, got;
	unsigned int i;

	if (buf_alloc_gappy(&out) || buf_alloc_gappy(&in)) {
		CHECK(0, "no memory for gappy buffers");
		goto out;
	}
	for (i = 0; i < out.bytes; i++)
		*gappy_byte(&out, i) = (u8)(i * 13 + 5);
	put = remote_op(srv, false, &out, BITS_SINK, 20, true);
	got = remote_op(srv, true, &in, BITS_SINK, 20, true);
	pr_info("lnet_ulp: %u bytes with a gap: PUT %d, GET %d\n", out.bytes,
		put, got);
	if (gaps == 1) {
		CHECK(put == 0 && got == 0, "gappy PUT %d, GET %d", put, got);
		for (i = 0; i < out.bytes; i++)
			if (*gappy_byte(&out, i) != *gappy_byte(&in, i))
				break;
		CHECK(i == out.bytes, "gappy bytes came back changed at %u", i);
	} else {
		CHECK(put && got, "gappy PUT %d, GET %d: not refused", put, got);
	}
out:
	buf_free(&out);
	buf_free(&in);
}

/* Above LNET_MTU (256 pages): refused at once, as Lustre's LNetMDBind does. */
static void too_big(void)
{
	struct lnet_handle_md h;
	struct buf huge;
	struct op *opp = kzalloc(sizeof(*opp), GFP_KERNEL);

	if (!opp || buf_alloc(&huge, 4 * BIG, true)) {
		CHECK(0, "no memory for 4 MiB");
	} else {
		op_init(opp, true);
		CHECK(bind(&huge, 2, 0, opp, &h) == -EINVAL,
		      "a 4 MiB MD was not refused");
	}
	kfree(opp);
	buf_free(&huge);
}

static int client_run(void)
{
	struct lnet_processid srv = { .pid = LNET_PID_LUSTRE };
	struct buf small, big, expect, note;
	int rc, tries;

	if (libcfs_strnid(&srv.nid, peer)) {
		pr_err("lnet_ulp: bad peer NID '%s'\n", peer);
		return -EINVAL;
	}
	if (buf_alloc(&small, 4096, false) || buf_alloc(&big, BIG, true) ||
	    buf_alloc(&expect, BIG, true) || buf_alloc(&note, 16, false)) {
		rc = -ENOMEM;
		goto out;
	}
	/* Until the server has posted its buffers, PUTs go unanswered. */
	for (tries = 0; tries < 60; tries++) {
		rc = remote_op(&srv, false, &small, BITS_SINK, 2, true);
		if (rc == 0)
			break;
		msleep(1000);
	}
	CHECK(rc == 0, "server %s never answered: %d", peer, rc);
	if (rc)
		goto out;
	pr_info("lnet_ulp: server %s answers\n", peer);
	buf_fill(&small, 1);
	buf_fill(&big, 2);
	CHECK(remote_op(&srv, false, &small, BITS_SINK, 20, false) == 0,
	      "PUT 4 KiB");
	CHECK(remote_op(&srv, false, &big, BITS_SINK, 20, false) == 0,
	      "PUT 1 MiB");
	CHECK(remote_op(&srv, true, &small, BITS_SOURCE, 20, false) == 0,
	      "GET 4 KiB");
	buf_fill(&expect, PATTERN);
	CHECK(buf_same(&small, &expect, 4096), "GET 4 KiB: data differs");
	CHECK(remote_op(&srv, true, &big, BITS_SOURCE, 20, false) == 0,
	      "GET 1 MiB");
	CHECK(buf_same(&big, &expect, BIG), "GET 1 MiB: data differs");
	if (sweep) {
		static const unsigned int at[][2] = {
			{ 0, 0 }, { 100, 0 }, { 100, 4050 }, { 4096, 0 },
			{ 4096, 6000 }, { 12345, 777 }, { BIG - 8192, 8192 },
			{ BIG, 0 },
		};
		unsigned int i;

		for (i = 0; i < ARRAY_SIZE(at); i++) {
			/*
			 * Lustre's ko2iblnd sends an IMMEDIATE straight from
			 * the MD's pages through their fast-registered
			 * address, which is not a local DMA address: across a
			 * page, the REPLY carries the wrong bytes.
			 */
			if (sweep == 2 && at[i][0] < 4096 &&
			    at[i][1] / PAGE_SIZE != (at[i][1] + at[i][0]) / PAGE_SIZE)
				continue;
			round_trip(&srv, at[i][0], at[i][1], i + 3);
		}
		too_big();
		pr_info("lnet_ulp: %zu PUT/GET round trips of 0 B to 1 MiB done\n",
			ARRAY_SIZE(at));
	}
	if (gaps)
		gappy(&srv);
	if (seconds > 0) {
		unsigned long start = jiffies, end = start + seconds * HZ;
		int ok = 0, failed = 0;

		/* Steady traffic; PUTs lost with a rail are allowed to fail. */
		while (time_before(jiffies, end) && !READ_ONCE(stop_traffic)) {
			if (remote_op(&srv, false, &small, BITS_SINK, op_timeout,
				      true) == 0)
				ok++;
			else
				failed++;
		}
		pr_info("lnet_ulp: traffic for %us: %d PUTs acknowledged, %d lost\n",
			jiffies_to_msecs(jiffies - start) / 1000, ok, failed);
		CHECK(ok > 0, "no PUT got through");
	}
	for (tries = 0; tries < repeat; tries++)
		CHECK(remote_op(&srv, false, &small, BITS_SINK, 20, false) == 0,
		      "PUT %d of %d", tries, repeat);
	CHECK(remote_op(&srv, false, &note, BITS_DONE, 20, false) == 0,
	      "done PUT");
	rc = 0;
	pr_info("lnet_ulp: remote PUT/GET 4 KiB and 1 MiB with %s done\n", peer);
out:
	buf_free(&small);
	buf_free(&big);
	buf_free(&expect);
	buf_free(&note);
	return rc;
}

/*
 * mode=burst: repeat= 4 KiB PUTs (or GETs) to the server, one at a time,
 * each allowed op_timeout seconds; failures are counted, not checks, so a
 * test can inject faults around it and read the outcome from dmesg.
 */
static int burst_run(void)
{
	struct lnet_processid srv = { .pid = LNET_PID_LUSTRE };
	struct buf small;
	int i, ok = 0, failed = 0;
	s64 longest = 0;

	if (libcfs_strnid(&srv.nid, peer)) {
		pr_err("lnet_ulp: bad peer NID '%s'\n", peer);
		return -EINVAL;
	}
	if (buf_alloc(&small, 4096, false))
		return -ENOMEM;
	buf_fill(&small, 1);
	for (i = 0; i < repeat; i++) {
		ktime_t t = ktime_get();

		if (remote_op(&srv, get, &small,
			      get ? BITS_SOURCE : lazy ? BITS_LAZY : BITS_SINK,
			      op_timeout, true) == 0)
			ok++;
		else
			failed++;
		/* One at a time: the longest is the longest stall. */
		longest = max(longest, ktime_ms_delta(ktime_get(), t));
	}
	buf_free(&small);
	pr_info("lnet_ulp: burst of %d %ss: %d ok, %d failed, longest %lld ms\n",
		repeat, get ? "GET" : "PUT", ok, failed, longest);
	return 0;
}

/*
 * mode=flood (peer=) and writes of flood_to (a comma-separated list of
 * NIDs, mode=server): repeat= PUTs (GETs with get=1) of flood_bytes to each
 * destination from one buffer, all posted at once so that more are in
 * flight than a peer has credits, or at most window= at a time (a new one
 * as the oldest ends, as a bulk client with a fixed depth does); then
 * every one must end with its ACK (REPLY), or with noack=1 its SEND event.
 * Reports the count of each outcome per destination.
 */
#define FLOOD_MAX_DST	4

static int flood_bytes = BIG;
module_param(flood_bytes, int, 0444);
MODULE_PARM_DESC(flood_bytes, "mode=flood, flood_to and steady: bytes of each PUT (1 to 1 MiB)");
static bool noack;
module_param(noack, bool, 0444);
MODULE_PARM_DESC(noack, "mode=flood: PUTs without an ACK (LNET_NOACK_REQ), each done at its SEND event: a one-way stream, whose credits come back only in the LND's own messages");
static int window;
module_param(window, int, 0444);
MODULE_PARM_DESC(window, "mode=flood and flood_to: at most this many in flight (0: all at once); mode=steady: this many (1 to 64) all the time");

/*
 * One client operation of mode=flood or steady on op: a PUT (a GET with
 * get=1) of b to dst from a new MD. 0 once it is sent; otherwise op is no
 * client operation, and its MD, if it had one, is unlinked and done with,
 * so op may be used again.
 */
static int bulk_post(struct buf *b, struct lnet_processid *dst, struct op *op,
		     struct lnet_handle_md *h)
{
	int rc;

	bool oneway = noack && !get;

	op_init(op, true);
	/* Without an ACK the SEND event is the only, and final, one. */
	rc = bind(b, oneway ? 1 : 2, 0, op, h);
	if (rc) {
		op->client = false;
		return rc;
	}
	if (get)
		rc = LNetGetTimeout(NULL, *h, dst, REMOTE_PORTAL, BITS_SOURCE, 0,
				    false, op_timeout);
	else
		rc = LNetPutTimeout(NULL, *h,
				    oneway ? LNET_NOACK_REQ : LNET_ACK_REQ, dst,
				    REMOTE_PORTAL, BITS_SINK, 0, 0, op_timeout);
	if (rc) {
		/* Not a send: its unlink event is not a final one. */
		op->client = false;
		LNetMDUnlink(*h);
		wait_op(op, 30);
		return rc;
	}
	atomic_inc(&sends);
	return 0;
}

struct flood_state {
	char *const *nids;
	int ndst;
	struct op *ops;
	struct lnet_handle_md *h;
	int ok[FLOOD_MAX_DST], failed[FLOOD_MAX_DST], lost[FLOOD_MAX_DST];
};

/* Waits for flood operation i to end and counts how it did. */
static void flood_settle(struct flood_state *f, int i)
{
	struct op *op = &f->ops[i];
	int d = i % f->ndst;

	if (!op->client)
		return;
	/* As PtlRPC does: a failed send gets no response, so unlink. */
	if (wait_for_completion_timeout(&op->sent, (op_timeout + 30) * HZ) &&
	    op->send_status && !completion_done(&op->done))
		LNetMDUnlink(f->h[i]);
	if (!op_settle(op, f->h[i], op_timeout + 30)) {
		f->lost[d]++;
		return;
	}
	if (noack && !get ? op->nev == 1 && op->type[0] == LNET_EVENT_SEND &&
			    !op->status[0] && op->unlinked[0] :
			    pair(op, get ? LNET_EVENT_REPLY : LNET_EVENT_ACK) >= 0) {
		f->ok[d]++;
	} else if (f->failed[d]++ < 4) {
		pr_info("lnet_ulp: flood %s %d to %s failed: send status %d, %d events, last status %d\n",
			get ? "GET" : "PUT", i / f->ndst, f->nids[d], op->send_status,
			op->nev, op->nev ? op->status[op->nev - 1] : 0);
	}
}

static int flood(char *const *nids, int ndst)
{
	struct lnet_processid dst[FLOOD_MAX_DST];
	struct flood_state f = { .nids = nids, .ndst = ndst };
	struct buf big;
	int i, d, n, settled = 0;
	ktime_t start;

	if (ndst < 1 || ndst > FLOOD_MAX_DST)
		return -EINVAL;
	for (d = 0; d < ndst; d++) {
		dst[d].pid = LNET_PID_LUSTRE;
		if (libcfs_strnid(&dst[d].nid, nids[d])) {
			pr_err("lnet_ulp: bad peer NID '%s'\n", nids[d]);
			return -EINVAL;
		}
	}
	if (repeat <= 0 || repeat > 1024 || flood_bytes <= 0 || flood_bytes > BIG ||
	    window < 0)
		return -EINVAL;
	n = repeat * ndst;
	if (buf_alloc(&big, flood_bytes, true))
		return -ENOMEM;
	buf_fill(&big, 3);
	f.ops = kvcalloc(n, sizeof(*f.ops), GFP_KERNEL);
	f.h = kvcalloc(n, sizeof(*f.h), GFP_KERNEL);
	if (!f.ops || !f.h) {
		kvfree(f.ops);
		kvfree(f.h);
		buf_free(&big);
		return -ENOMEM;
	}
	start = ktime_get();
	/* Destinations in turn: each sees its operations come from the start. */
	for (i = 0; i < n; i++) {
		d = i % ndst;
		while (window && i - settled >= window * ndst)
			flood_settle(&f, settled++);
		if (bulk_post(&big, &dst[d], &f.ops[i], &f.h[i]))
			f.failed[d]++;
	}
	while (settled < n)
		flood_settle(&f, settled++);
	for (d = 0; d < ndst; d++)
		pr_info("lnet_ulp: flood of %d %ss of %u bytes to %s in %lld us: %d ok, %d failed, %d without a final event\n",
			repeat, get ? "GET" : "PUT", big.bytes, nids[d],
			ktime_us_delta(ktime_get(), start), f.ok[d], f.failed[d],
			f.lost[d]);
	if (!abandoned) {
		kvfree(f.ops);
		kvfree(f.h);
		buf_free(&big);
	}
	return 0;
}

static int flood_run(void)
{
	return flood(&peer, 1);
}

/*
 * mode=steady (peer=): PUTs (GETs with get=1) of flood_bytes, window= of
 * them in flight all the time (a new one as soon as any ends, as PtlRPC
 * keeps its RPCs going), for seconds= or until stop_traffic is set; each
 * allowed op_timeout. For failover benchmarks: reports how many ended well
 * or failed, the longest operation, and the flow's longest stall: the
 * longest time without one ending well, with when it began (boot-time ms,
 * the clock of /proc/uptime).
 */
#define STEADY_MAX	64

struct steady_slot {
	struct op op;
	struct lnet_handle_md h;
	ktime_t posted;
	bool busy;
	bool unlinked;	/* its send failed: unlinked, as PtlRPC does */
};

static int steady_run(void)
{
	struct lnet_processid srv = { .pid = LNET_PID_LUSTRE };
	struct steady_slot *slots;
	struct buf b;
	int i, live, seen, ok = 0, failed = 0, lost = 0;
	s64 longest = 0, stall = 0, stall_from = 0;
	ktime_t start, end, last, now;
	bool going;

	if (libcfs_strnid(&srv.nid, peer)) {
		pr_err("lnet_ulp: bad peer NID '%s'\n", peer);
		return -EINVAL;
	}
	if (window < 1 || window > STEADY_MAX || seconds < 1 ||
	    flood_bytes <= 0 || flood_bytes > BIG || op_timeout < 1)
		return -EINVAL;
	slots = kvcalloc(window, sizeof(*slots), GFP_KERNEL);
	if (!slots)
		return -ENOMEM;
	if (buf_alloc(&b, flood_bytes, true)) {
		kvfree(slots);
		return -ENOMEM;
	}
	buf_fill(&b, 5);
	start = last = ktime_get_boottime();
	end = ktime_add_ms(start, seconds * 1000LL);
	do {
		seen = atomic_read(&events);
		now = ktime_get_boottime();
		going = ktime_before(now, end) && !READ_ONCE(stop_traffic);
		live = 0;
		for (i = 0; i < window; i++) {
			struct steady_slot *sl = &slots[i];

			if (sl->busy && !completion_done(&sl->op.done)) {
				/* A failed send gets no response: unlink. */
				if (!sl->unlinked && completion_done(&sl->op.sent) &&
				    sl->op.send_status) {
					sl->unlinked = true;
					LNetMDUnlink(sl->h);
				}
				/* LNet must end it by op_timeout; past that, unlink. */
				if (!sl->unlinked &&
				    ktime_ms_delta(now, sl->posted) > (op_timeout + 30) * 1000LL) {
					sl->unlinked = true;
					LNetMDUnlink(sl->h);
				}
				if (ktime_ms_delta(now, sl->posted) > (op_timeout + 60) * 1000LL) {
					/* Its buffer is LNet's for good: stop. */
					sl->busy = false;
					lost++;
					abandon("a steady operation");
					WRITE_ONCE(stop_traffic, true);
					continue;
				}
				live++;
				continue;
			}
			if (sl->busy) {
				sl->busy = false;
				longest = max(longest, ktime_ms_delta(now, sl->posted));
				if (pair(&sl->op, get ? LNET_EVENT_REPLY : LNET_EVENT_ACK) >= 0) {
					ok++;
					if (ktime_ms_delta(now, last) > stall) {
						stall = ktime_ms_delta(now, last);
						stall_from = ktime_to_ms(last);
					}
					last = now;
				} else if (failed++ < 4) {
					pr_info("lnet_ulp: steady %s failed at %lld ms after %lld ms: send status %d, %d events, last status %d\n",
						get ? "GET" : "PUT", ktime_to_ms(now),
						ktime_ms_delta(now, sl->posted),
						sl->op.send_status, sl->op.nev,
						sl->op.nev ? sl->op.status[min(sl->op.nev, MAX_EV) - 1] : 0);
				}
			}
			if (!going)
				continue;
			sl->unlinked = false;
			sl->posted = ktime_get_boottime();
			if (bulk_post(&b, &srv, &sl->op, &sl->h)) {
				failed++;
				continue;
			}
			sl->busy = true;
			live++;
		}
		if (live)
			wait_event_timeout(events_wq, atomic_read(&events) != seen,
					   HZ / 10);
	} while (live || going);
	pr_info("lnet_ulp: steady %ss of %u bytes to %s, %d in flight, for %lld ms: %d ok, %d failed, %d lost, longest %lld ms, longest stall %lld ms from %lld ms\n",
		get ? "GET" : "PUT", b.bytes, peer, window,
		ktime_ms_delta(ktime_get_boottime(), start), ok, failed, lost,
		longest, stall, stall_from);
	if (!abandoned) {
		kvfree(slots);
		buf_free(&b);
	}
	return 0;
}

/*
 * Writing flood_to (mode=server) floods the NIDs listed, in the writer's
 * context, while this node's server buffers take others' floods.
 */
static int flood_to_set(const char *val, const struct kernel_param *kp)
{
	char *nids[FLOOD_MAX_DST];
	char *list, *rest, *nid;
	int n = 0, rc;

	if (!srv_ready)
		return -EINVAL;
	list = kstrdup(val, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	rest = strim(list);
	while ((nid = strsep(&rest, ",")) != NULL) {
		if (n == FLOOD_MAX_DST) {
			kfree(list);
			return -E2BIG;
		}
		nids[n++] = nid;
	}
	rc = flood(nids, n);
	kfree(list);
	return rc;
}

static const struct kernel_param_ops flood_to_ops = {
	.set = flood_to_set,
};
module_param_cb(flood_to, &flood_to_ops, NULL, 0200);
MODULE_PARM_DESC(flood_to, "mode=server: write NID[,NID...] to flood each with repeat= PUTs of flood_bytes");

/*
 * A failed init frees the module whatever its reference count: with an
 * abandoned operation LNet may still call into it, so it must load.
 */
static int keep_if_abandoned(int rc)
{
	if (rc && abandoned) {
		pr_err("lnet_ulp: FAIL init error %d kept loaded: an operation never ended\n",
		       rc);
		return 0;
	}
	return rc;
}

static int ulp_start(void)
{
	int rc;

	rc = LNetNIInit(LNET_PID_LUSTRE);
	if (rc < 0) {
		pr_err("lnet_ulp: LNetNIInit: %d\n", rc);
		return rc;
	}
	rc = LNetGetId(0, &self, true);
	if (rc) {
		pr_err("lnet_ulp: LNetGetId: %d\n", rc);
		LNetNIFini();
		return rc;
	}
	anyone.nid = LNET_ANY_NID;
	anyone.pid = LNET_PID_ANY;
	if (!strcmp(mode, "server")) {
		rc = server_start();
		if (rc) {
			pr_err("lnet_ulp: server: %d\n", rc);
			server_stop();
			LNetNIFini();
		}
		return rc;
	}
	if (!strcmp(mode, "flood")) {
		rc = flood_run();
		if (rc)
			LNetNIFini();
		return rc;
	}
	if (!strcmp(mode, "steady")) {
		rc = steady_run();
		if (rc)
			LNetNIFini();
		return rc;
	}
	if (!strcmp(mode, "pinginfo")) {
		rc = pinginfo_run();
		if (rc)
			LNetNIFini();
		return rc;
	}
	if (!strcmp(mode, "pushes")) {
		rc = pushes_run();
		if (rc)
			LNetNIFini();
		return rc;
	}
	if (!strcmp(mode, "traffic")) {
		/* Only the traffic thread, for unload under traffic. */
		start_traffic();
		if (failures) {
			LNetNIFini();
			if (traffic_task)
				kthread_stop(traffic_task);
			return -EIO;
		}
		return 0;
	}
	if (!strcmp(mode, "burst")) {
		rc = burst_run();
		if (rc)
			LNetNIFini();
		return rc;
	}
	if (!strcmp(mode, "client")) {
		rc = client_run();
		if (rc || failures) {
			pr_err("lnet_ulp: client: rc %d, %d check(s) failed\n",
			       rc, failures);
			LNetNIFini();
			return rc ? rc : -EIO;
		}
		return 0;
	}
#ifndef ULP_LNET_RS
	pr_err("lnet_ulp: mode=%s checks lnet-rs's own API: not on Lustre's\n",
	       mode);
	LNetNIFini();
	return -EOPNOTSUPP;
#endif
	test_bad_args();
	test_put(4096, false);
	test_get(4096, false);
	test_put(BIG, true);
	test_get(BIG, true);
	test_truncate();
	test_unlink();
	test_lazy();
	test_push();
	test_dist();
	test_nidstr();
	test_peers();
	test_misc();
	test_no_response(false, 2);
	test_no_response(true, 2);
	test_no_response(true, 0);
	if (inflight > 0)
		start_inflight();
	if (traffic)
		start_traffic();
	CHECK(atomic_read(&sends) == atomic_read(&finals) + (inflight > 0 ? inflight : 0),
	      "sends %d finals %d", atomic_read(&sends), atomic_read(&finals));
	if (failures) {
		pr_err("lnet_ulp: %d check(s) failed\n", failures);
		LNetNIFini();
		if (traffic_task)
			kthread_stop(traffic_task);
		free_inflight();
		return -EIO;
	}
	pr_info("lnet_ulp: all checks passed, sends=%d finals=%d\n",
		atomic_read(&sends), atomic_read(&finals));
	return 0;
}

static int __init lnet_ulp_init(void)
{
	return keep_if_abandoned(ulp_start());
}

static void __exit lnet_ulp_exit(void)
{
	int i;

	WRITE_ONCE(unloading, true);
	server_stop();
	/* LNet goes down under the traffic thread's feet. */
	LNetNIFini();
	if (traffic_task)
		kthread_stop(traffic_task);
	CHECK(atomic_read(&traffic_sends) == atomic_read(&traffic_finals),
	      "traffic: sends %d finals %d", atomic_read(&traffic_sends),
	      atomic_read(&traffic_finals));
	pr_info("lnet_ulp: traffic at unload: sends=%d finals=%d\n",
		atomic_read(&traffic_sends), atomic_read(&traffic_finals));
	/* Every in-flight GET must have ended, as an UNLINK. */
	for (i = 0; pending && i < inflight; i++)
		CHECK(pending[i].nev == 2 &&
		      pending[i].type[1] == LNET_EVENT_UNLINK &&
		      pending[i].status[1] == 0,
		      "in-flight GET %d: %d events, status %d", i,
		      pending[i].nev, pending[i].status[1]);
	if (atomic_read(&sends) != atomic_read(&finals))
		CHECK(0, "sends %d finals %d", atomic_read(&sends),
		      atomic_read(&finals));
	free_inflight();
	pr_info("lnet_ulp: unloaded: sends=%d finals=%d failures=%d\n",
		atomic_read(&sends), atomic_read(&finals), failures);
}

module_init(lnet_ulp_init);
module_exit(lnet_ulp_exit);
MODULE_DESCRIPTION("LNet upper-layer test: PtlRPC-style use of the LNet API");
MODULE_LICENSE("GPL");
