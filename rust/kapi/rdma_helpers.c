// SPDX-License-Identifier: GPL-2.0
/*
 * kapi RDMA helpers (see rdma_helpers.h). Each wraps one RDMA CM or verbs
 * call that Rust cannot reach directly; none keeps state.
 */
#include <linux/in.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include "rdma_helpers.h"

struct rdma_cm_id *kapi_rdma_create_id(kapi_cm_handler_t handler, void *ctx)
{
	return rdma_create_id(&init_net, handler, ctx, RDMA_PS_TCP, IB_QPT_RC);
}

void kapi_rdma_destroy_id(struct rdma_cm_id *id)
{
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

void kapi_ib_destroy_cq(struct ib_cq *cq)
{
	ib_destroy_cq(cq);
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
	int rc = rdma_create_qp(id, pd, &attr);

	if (!rc)
		*send_wr = attr.cap.max_send_wr;
	return rc;
}

void kapi_rdma_destroy_qp(struct rdma_cm_id *id)
{
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
