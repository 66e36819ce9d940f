// SPDX-License-Identifier: GPL-2.0
/*
 * kapi RDMA helpers (see rdma_helpers.h). Each wraps one RDMA CM or verbs
 * call that Rust cannot reach directly; none keeps state.
 */
#include <linux/bvec.h>
#include <linux/in.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include "rdma_helpers.h"

struct rdma_cm_id *kapi_rdma_create_id(kapi_cm_handler_t handler, void *ctx)
{
	return rdma_create_id(&init_net, handler, ctx, RDMA_PS_TCP, IB_QPT_RC);
}

/* A QP still on the id goes first: rdma_destroy_id leaves it behind. */
void kapi_rdma_destroy_id(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

void *kapi_rdma_id_context(struct rdma_cm_id *id)
{
	return READ_ONCE(id->context);
}

void kapi_rdma_id_set_context(struct rdma_cm_id *id, void *ctx)
{
	WRITE_ONCE(id->context, ctx);
}

/* Only from the id's own handler: the CM reads both under the id's
 * handler mutex, which is held there. */
void kapi_rdma_id_set_handler(struct rdma_cm_id *id, kapi_cm_handler_t handler,
			      void *ctx)
{
	id->event_handler = handler;
	WRITE_ONCE(id->context, ctx);
}

struct ib_device *kapi_rdma_id_device(struct rdma_cm_id *id)
{
	return id->device;
}

__u32 kapi_rdma_id_port(struct rdma_cm_id *id)
{
	return id->port_num;
}

static void kapi_sin(struct sockaddr_in *sin, __u32 addr, __u16 port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(addr);
	sin->sin_port = htons(port);
}

int kapi_rdma_bind4(struct rdma_cm_id *id, __u32 addr, __u16 port)
{
	struct sockaddr_in sin;

	kapi_sin(&sin, addr, port);
	return rdma_bind_addr(id, (struct sockaddr *)&sin);
}

int kapi_rdma_listen(struct rdma_cm_id *id, int backlog)
{
	return rdma_listen(id, backlog);
}

int kapi_rdma_resolve_addr4(struct rdma_cm_id *id, __u32 src, __u32 dst,
			    __u16 port, int timeout_ms)
{
	struct sockaddr_in s, d;

	kapi_sin(&s, src, 0);
	kapi_sin(&d, dst, port);
	return rdma_resolve_addr(id, (struct sockaddr *)&s,
				 (struct sockaddr *)&d, timeout_ms);
}

int kapi_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	return rdma_resolve_route(id, timeout_ms);
}

void kapi_rdma_set_tos(struct rdma_cm_id *id, int tos)
{
	rdma_set_service_type(id, tos);
}

/*
 * Sets the path MTU of a resolved (or requested) route to the IB MTU enum
 * @mtu unless it is 0, and returns the path's MTU in bytes (0: no path
 * record, as on iWARP).
 */
int kapi_rdma_path_mtu(struct rdma_cm_id *id, int mtu)
{
	struct sa_path_rec *rec = id->route.path_rec;

	if (!rec)
		return 0;
	if (mtu)
		rec->mtu = mtu;
	return ib_mtu_enum_to_int(rec->mtu);
}

/* The peer's IPv4 address and port, host order. */
int kapi_rdma_peer4(struct rdma_cm_id *id, __u32 *addr, __u16 *port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&id->route.addr.dst_addr;

	if (sin->sin_family != AF_INET)
		return -EAFNOSUPPORT;
	*addr = ntohl(sin->sin_addr.s_addr);
	*port = ntohs(sin->sin_port);
	return 0;
}

int kapi_rdma_connect(struct rdma_cm_id *id, const void *priv, __u8 len,
		      int retry_count, int rnr_retry_count)
{
	struct rdma_conn_param p = {
		.private_data = priv,
		.private_data_len = len,
		.flow_control = 1,
		.retry_count = retry_count,
		.rnr_retry_count = rnr_retry_count,
	};

	/* From the id's own handler, which holds its handler mutex. */
	return rdma_connect_locked(id, &p);
}

int kapi_rdma_accept(struct rdma_cm_id *id, const void *priv, __u8 len,
		     int rnr_retry_count)
{
	struct rdma_conn_param p = {
		.private_data = priv,
		.private_data_len = len,
		.flow_control = 1,
		.rnr_retry_count = rnr_retry_count,
	};

	return rdma_accept(id, &p);
}

int kapi_rdma_reject(struct rdma_cm_id *id, const void *priv, __u8 len)
{
	return rdma_reject(id, priv, len, IB_CM_REJ_CONSUMER_DEFINED);
}

int kapi_rdma_disconnect(struct rdma_cm_id *id)
{
	return rdma_disconnect(id);
}

int kapi_rdma_notify_established(struct rdma_cm_id *id)
{
	return rdma_notify(id, IB_EVENT_COMM_EST);
}

int kapi_cm_event_type(const struct rdma_cm_event *ev)
{
	return ev->event;
}

int kapi_cm_event_status(const struct rdma_cm_event *ev)
{
	return ev->status;
}

const void *kapi_cm_event_private(const struct rdma_cm_event *ev, __u8 *len)
{
	*len = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;
	return ev->param.conn.private_data;
}

const void *kapi_cm_reject_data(struct rdma_cm_id *id,
				struct rdma_cm_event *ev, __u8 *len)
{
	const void *p = rdma_consumer_reject_data(id, ev, len);

	if (!p)
		*len = 0;
	return p;
}

const char *kapi_ib_device_name(struct ib_device *dev)
{
	return dev_name(&dev->dev);
}

int kapi_ib_device_max_qp_wr(struct ib_device *dev)
{
	return dev->attrs.max_qp_wr;
}

struct ib_pd *kapi_ib_alloc_pd(struct ib_device *dev)
{
	return ib_alloc_pd(dev, 0);
}

void kapi_ib_dealloc_pd(struct ib_pd *pd)
{
	ib_dealloc_pd(pd);
}

__u32 kapi_ib_pd_lkey(struct ib_pd *pd)
{
	return pd->local_dma_lkey;
}

struct ib_cq *kapi_ib_create_cq(struct ib_device *dev, kapi_cq_comp_t comp,
				kapi_ib_event_t event, void *ctx, int cqe,
				int vector)
{
	struct ib_cq_init_attr attr = {
		.cqe = cqe,
		.comp_vector = vector,
	};

	return ib_create_cq(dev, comp, event, ctx, &attr);
}

/* Refused (-EBUSY) while a QP uses it: the core says so, once. */
int kapi_ib_destroy_cq(struct ib_cq *cq)
{
	int rc = ib_destroy_cq_user(cq, NULL);

	WARN_ONCE(rc, "Destroy of kernel CQ shouldn't fail");
	return rc;
}

/* Re-arms the CQ; > 0 when completions may have arrived unseen. */
int kapi_ib_req_notify_cq(struct ib_cq *cq)
{
	return ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				    IB_CQ_REPORT_MISSED_EVENTS);
}

int kapi_ib_poll_cq(struct ib_cq *cq, struct kapi_wc *out, int n)
{
	struct ib_wc wc[8];
	int i, rc;

	if (n > ARRAY_SIZE(wc))
		n = ARRAY_SIZE(wc);
	rc = ib_poll_cq(cq, n, wc);
	for (i = 0; i < rc; i++) {
		out[i].wr_id = wc[i].wr_id;
		out[i].status = wc[i].status;
		out[i].opcode = wc[i].opcode;
		out[i].byte_len = wc[i].byte_len;
		out[i].vendor_err = wc[i].vendor_err;
	}
	return rc;
}

int kapi_rdma_create_qp(struct rdma_cm_id *id, struct ib_pd *pd,
			struct ib_cq *cq, kapi_ib_event_t event, void *ctx,
			int *send_wr, int recv_wr, int send_sge)
{
	struct ib_qp_init_attr attr = {
		.event_handler = event,
		.qp_context = ctx,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = *send_wr,
			.max_recv_wr = recv_wr,
			.max_send_sge = send_sge,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	int rc;

	/* One QP per id, on the id's device (rdma_create_qp checks the PD's). */
	if (id->qp || cq->device != id->device)
		return -EINVAL;
	rc = rdma_create_qp(id, pd, &attr);

	if (!rc)
		*send_wr = attr.cap.max_send_wr;
	return rc;
}

/* Destroys the id's QP, if it has one. */
void kapi_rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
}

/* Moves the QP to the error state: every posted request is flushed. */
int kapi_ib_qp_error(struct rdma_cm_id *id)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (!id->qp)
		return -EINVAL;
	return ib_modify_qp(id->qp, &attr, IB_QP_STATE);
}

int kapi_ib_post_recv(struct rdma_cm_id *id, __u64 wr_id,
		      const struct kapi_sge *s)
{
	struct ib_sge sge = {
		.addr = s->addr,
		.length = s->length,
		.lkey = s->lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};

	if (!id->qp)
		return -EINVAL;
	return ib_post_recv(id->qp, &wr, NULL);
}

/* A signalled SEND of up to 4 gather elements. */
int kapi_ib_post_send(struct rdma_cm_id *id, __u64 wr_id,
		      const struct kapi_sge *s, int nsge)
{
	struct ib_sge sge[4];
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	int i;

	if (!id->qp || nsge < 1 || nsge > ARRAY_SIZE(sge))
		return -EINVAL;
	for (i = 0; i < nsge; i++) {
		sge[i].addr = s[i].addr;
		sge[i].length = s[i].length;
		sge[i].lkey = s[i].lkey;
	}
	return ib_post_send(id->qp, &wr, NULL);
}

struct kapi_rdma_map {
	struct ib_device *dev;
	struct ib_mr *mr;
	int max;
	int nents;	/* entries DMA-mapped, 0 when not mapped */
	int sg_nents;
	int remote_write;
	struct scatterlist sg[];
};

struct kapi_rdma_map *kapi_rdma_map_alloc(struct ib_pd *pd, int max_frags)
{
	struct kapi_rdma_map *m;

	m = kzalloc(struct_size(m, sg, max_frags), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max_frags);
	if (IS_ERR(m->mr)) {
		void *err = m->mr;

		kfree(m);
		return err;
	}
	m->dev = pd->device;
	m->max = max_frags;
	return m;
}

/*
 * Maps bytes [offset, offset + len) of kiov for DMA and lays them out in
 * the MR as one virtually contiguous region under a new key. Fast
 * registration needs every fragment but the first to start on a page and
 * every one but the last to end on one: -EINVAL otherwise.
 */
int kapi_rdma_map_kiov(struct kapi_rdma_map *m, const struct bio_vec *kiov,
		       int niov, __u32 offset, __u32 len, int remote_write)
{
	enum dma_data_direction dir = remote_write ? DMA_FROM_DEVICE :
						     DMA_TO_DEVICE;
	int i, n = 0, mapped, rc;

	if (m->nents || !len)
		return -EINVAL;
	sg_init_table(m->sg, m->max);
	for (i = 0; i < niov && len; i++) {
		__u32 take;

		if (offset >= kiov[i].bv_len) {
			offset -= kiov[i].bv_len;
			continue;
		}
		if (n == m->max)
			return -E2BIG;
		take = min(len, kiov[i].bv_len - offset);
		/*
		 * One fast registration maps whole pages in a row: only the
		 * first fragment may start mid-page and only the last may end
		 * mid-page. Anything else is a gap, which ib_map_mr_sg would
		 * map short; refuse it up front, as Lustre's ko2iblnd does.
		 */
		if ((n && ((kiov[i].bv_offset + offset) & ~PAGE_MASK)) ||
		    (len > take &&
		     ((kiov[i].bv_offset + offset + take) & ~PAGE_MASK)))
			return -EPROTONOSUPPORT;
		sg_set_page(&m->sg[n++], kiov[i].bv_page, take,
			    kiov[i].bv_offset + offset);
		len -= take;
		offset = 0;
	}
	if (len || !n)
		return -EINVAL;
	sg_mark_end(&m->sg[n - 1]);
	mapped = ib_dma_map_sg(m->dev, m->sg, n, dir);
	if (!mapped)
		return -EIO;
	rc = ib_map_mr_sg(m->mr, m->sg, mapped, NULL, PAGE_SIZE);
	if (rc != mapped) {
		ib_dma_unmap_sg(m->dev, m->sg, n, dir);
		return rc < 0 ? rc : -EINVAL;
	}
	ib_update_fast_reg_key(m->mr, ib_inc_rkey(m->mr->rkey) & 0xff);
	m->nents = n;
	m->sg_nents = n;
	m->remote_write = remote_write;
	return 0;
}

void kapi_rdma_map_unmap(struct kapi_rdma_map *m)
{
	if (!m->nents)
		return;
	ib_dma_unmap_sg(m->dev, m->sg, m->sg_nents,
			m->remote_write ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
	m->nents = 0;
}

/*
 * The MR goes before the DMA mapping: once ib_dereg_mr has returned, a
 * late RDMA from the peer fails on the key, so the unmap cannot pull an
 * IOVA or a bounce buffer from under a write. Our own work requests that
 * name the MR must have completed or been flushed before (a posted
 * registration holds the ib_mr itself). An MR the device would not
 * deregister may still reach the pages: they stay mapped and the map is
 * leaked, said once.
 */
void kapi_rdma_map_free(struct kapi_rdma_map *m)
{
	if (WARN_ON_ONCE(ib_dereg_mr(m->mr)))
		return;
	kapi_rdma_map_unmap(m);
	kfree(m);
}

__u32 kapi_rdma_map_rkey(const struct kapi_rdma_map *m)
{
	return m->mr->rkey;
}

__u64 kapi_rdma_map_iova(const struct kapi_rdma_map *m)
{
	return m->mr->iova;
}

static void kapi_reg_wr(struct ib_reg_wr *r, struct kapi_rdma_map *m,
			__u64 wr_id)
{
	r->wr.wr_id = wr_id;
	r->wr.opcode = IB_WR_REG_MR;
	r->mr = m->mr;
	r->key = m->mr->rkey;
	r->access = IB_ACCESS_LOCAL_WRITE |
		    (m->remote_write ? IB_ACCESS_REMOTE_WRITE : 0);
}

static void kapi_send_wr(struct ib_send_wr *wr, struct ib_sge *sge,
			 const struct kapi_sge *s, __u64 wr_id)
{
	sge->addr = s->addr;
	sge->length = s->length;
	sge->lkey = s->lkey;
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IB_WR_SEND;
	wr->send_flags = IB_SEND_SIGNALED;
}

/* Registers m (for the peer to write into) and sends, in order. */
int kapi_ib_post_reg_send(struct rdma_cm_id *id, __u64 wr_id,
			  struct kapi_rdma_map *m, const struct kapi_sge *send)
{
	struct ib_reg_wr reg = {};
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (!id->qp || !m->nents)
		return -EINVAL;
	kapi_reg_wr(&reg, m, wr_id);
	kapi_send_wr(&wr, &sge, send, wr_id);
	reg.wr.next = &wr;
	return ib_post_send(id->qp, &reg.wr, NULL);
}

/* Writes built on the stack; a chain of more (a sink offering up to the
 * connection's max_frags fragments, rare: fast-registered sinks offer one)
 * takes an array allocated for the post, which the verbs copy from. */
#define KAPI_STACK_WRITES 16
/* No connection offers more (IBLND_MAX_RDMA_FRAGS). */
#define KAPI_MAX_WRITES 257

/* Registers m, RDMA-writes its segments to the peer, then sends: the send
 * arrives after the data. Only the send is signalled; a failed write
 * completes in error with the same wr_id. Called under a spinlock. */
int kapi_ib_post_reg_write_send(struct rdma_cm_id *id, __u64 wr_id,
				struct kapi_rdma_map *m,
				const struct kapi_rdma_seg *seg, int nseg,
				const struct kapi_sge *send)
{
	struct ib_reg_wr reg = {};
	struct ib_rdma_wr stack_wr[KAPI_STACK_WRITES] = {};
	struct ib_sge stack_sge[KAPI_STACK_WRITES];
	struct ib_rdma_wr *wr = stack_wr;
	struct ib_sge *sge = stack_sge;
	struct ib_send_wr swr = {};
	struct ib_sge ssge;
	int i, rc;

	if (!id->qp || !m->nents || nseg < 1 || nseg > KAPI_MAX_WRITES)
		return -EINVAL;
	if (nseg > KAPI_STACK_WRITES) {
		wr = kcalloc(nseg, sizeof(*wr), GFP_ATOMIC);
		sge = kcalloc(nseg, sizeof(*sge), GFP_ATOMIC);
		if (!wr || !sge) {
			kfree(wr);
			kfree(sge);
			return -ENOMEM;
		}
	}
	kapi_reg_wr(&reg, m, wr_id);
	reg.wr.next = &wr[0].wr;
	for (i = 0; i < nseg; i++) {
		sge[i].addr = m->mr->iova + seg[i].loff;
		sge[i].length = seg[i].len;
		sge[i].lkey = m->mr->lkey;
		wr[i].wr.wr_id = wr_id;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].remote_addr = seg[i].raddr;
		wr[i].rkey = seg[i].rkey;
		wr[i].wr.next = i + 1 < nseg ? &wr[i + 1].wr : &swr;
	}
	kapi_send_wr(&swr, &ssge, send, wr_id);
	rc = ib_post_send(id->qp, &reg.wr, NULL);
	if (wr != stack_wr) {
		kfree(wr);
		kfree(sge);
	}
	return rc;
}

struct kapi_ib_evh {
	struct ib_event_handler h;
	kapi_ib_async_t fn;
	void *ctx;
};

static void kapi_ib_evh_call(struct ib_event_handler *h, struct ib_event *ev)
{
	struct kapi_ib_evh *e = container_of(h, struct kapi_ib_evh, h);
	__u32 port = 0;

	switch (ev->event) {
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_PKEY_CHANGE:
	case IB_EVENT_GID_CHANGE:
	case IB_EVENT_SM_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
		port = ev->element.port_num;
		break;
	default:
		break;
	}
	e->fn(e->ctx, ev->event, port);
}

struct kapi_ib_evh *kapi_ib_register_event_handler(struct ib_device *dev,
						   kapi_ib_async_t fn,
						   void *ctx)
{
	struct kapi_ib_evh *e = kzalloc(sizeof(*e), GFP_KERNEL);

	if (!e)
		return ERR_PTR(-ENOMEM);
	e->fn = fn;
	e->ctx = ctx;
	INIT_IB_EVENT_HANDLER(&e->h, dev, kapi_ib_evh_call);
	ib_register_event_handler(&e->h);
	return e;
}

/* Waits for a handler call that is running. */
void kapi_ib_unregister_event_handler(struct kapi_ib_evh *e)
{
	ib_unregister_event_handler(&e->h);
	kfree(e);
}

int kapi_ib_port_active(struct ib_device *dev, __u32 port)
{
	struct ib_port_attr attr;
	int rc = ib_query_port(dev, port, &attr);

	return rc ? rc : attr.state == IB_PORT_ACTIVE;
}

int kapi_ib_event_type(const struct ib_event *ev)
{
	return ev->event;
}

__u64 kapi_ib_dma_map(struct ib_device *dev, void *va, size_t len, int to_dev,
		      int *err)
{
	u64 a = ib_dma_map_single(dev, va, len,
				  to_dev ? DMA_TO_DEVICE : DMA_FROM_DEVICE);

	*err = ib_dma_mapping_error(dev, a) ? -ENOMEM : 0;
	return a;
}

void kapi_ib_dma_unmap(struct ib_device *dev, __u64 addr, size_t len,
		       int to_dev)
{
	ib_dma_unmap_single(dev, addr, len,
			    to_dev ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
}

void kapi_ib_dma_sync(struct ib_device *dev, __u64 addr, size_t len,
		      int for_dev, int to_dev)
{
	enum dma_data_direction dir = to_dev ? DMA_TO_DEVICE : DMA_FROM_DEVICE;

	if (for_dev)
		ib_dma_sync_single_for_device(dev, addr, len, dir);
	else
		ib_dma_sync_single_for_cpu(dev, addr, len, dir);
}
