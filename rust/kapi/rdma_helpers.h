/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kapi RDMA helpers: RDMA CM and verbs calls that are macros or static
 * inlines, or take structures the Rust side need not lay out. The Rust
 * types over them are in rust/kapi/rdma.rs; a module that uses them
 * includes rdma_helpers.c from one of its C files.
 */
#ifndef __KAPI_RDMA_HELPERS_H__
#define __KAPI_RDMA_HELPERS_H__

#include <linux/types.h>

struct rdma_cm_id;
struct rdma_cm_event;
struct ib_device;
struct ib_pd;
struct ib_cq;
struct ib_event;

typedef int (*kapi_cm_handler_t)(struct rdma_cm_id *id,
				 struct rdma_cm_event *ev);
typedef void (*kapi_cq_comp_t)(struct ib_cq *cq, void *ctx);
typedef void (*kapi_ib_event_t)(struct ib_event *ev, void *ctx);

/* A work completion, flattened (mirrored by Wc in rdma.rs). */
struct kapi_wc {
	__u64 wr_id;
	__u32 status;	/* enum ib_wc_status; 0 is success */
	__u32 opcode;	/* enum ib_wc_opcode */
	__u32 byte_len;
	__u32 vendor_err;
};

/* One gather element of a send (mirrored by Sge in rdma.rs). */
struct kapi_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

struct rdma_cm_id *kapi_rdma_create_id(kapi_cm_handler_t handler, void *ctx);
void kapi_rdma_destroy_id(struct rdma_cm_id *id);
void *kapi_rdma_id_context(struct rdma_cm_id *id);
void kapi_rdma_id_set_context(struct rdma_cm_id *id, void *ctx);
void kapi_rdma_id_set_handler(struct rdma_cm_id *id, kapi_cm_handler_t handler,
			      void *ctx);
struct ib_device *kapi_rdma_id_device(struct rdma_cm_id *id);
__u32 kapi_rdma_id_port(struct rdma_cm_id *id);
int kapi_rdma_bind4(struct rdma_cm_id *id, __u32 addr, __u16 port);
int kapi_rdma_listen(struct rdma_cm_id *id, int backlog);
int kapi_rdma_resolve_addr4(struct rdma_cm_id *id, __u32 src, __u32 dst,
			    __u16 port, int timeout_ms);
int kapi_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);
void kapi_rdma_set_tos(struct rdma_cm_id *id, int tos);
int kapi_rdma_path_mtu(struct rdma_cm_id *id, int mtu);
int kapi_rdma_peer4(struct rdma_cm_id *id, __u32 *addr, __u16 *port);
int kapi_rdma_connect(struct rdma_cm_id *id, const void *priv, __u8 len,
		      int retry_count, int rnr_retry_count);
int kapi_rdma_accept(struct rdma_cm_id *id, const void *priv, __u8 len,
		     int rnr_retry_count);
int kapi_rdma_reject(struct rdma_cm_id *id, const void *priv, __u8 len);
int kapi_rdma_disconnect(struct rdma_cm_id *id);
int kapi_rdma_notify_established(struct rdma_cm_id *id);

int kapi_cm_event_type(const struct rdma_cm_event *ev);
int kapi_cm_event_status(const struct rdma_cm_event *ev);
const void *kapi_cm_event_private(const struct rdma_cm_event *ev, __u8 *len);
const void *kapi_cm_reject_data(struct rdma_cm_id *id,
				struct rdma_cm_event *ev, __u8 *len);

const char *kapi_ib_device_name(struct ib_device *dev);
int kapi_ib_device_max_qp_wr(struct ib_device *dev);
struct ib_pd *kapi_ib_alloc_pd(struct ib_device *dev);
void kapi_ib_dealloc_pd(struct ib_pd *pd);
__u32 kapi_ib_pd_lkey(struct ib_pd *pd);

struct ib_cq *kapi_ib_create_cq(struct ib_device *dev, kapi_cq_comp_t comp,
				kapi_ib_event_t event, void *ctx, int cqe,
				int vector);
int kapi_ib_destroy_cq(struct ib_cq *cq);
int kapi_ib_req_notify_cq(struct ib_cq *cq);
int kapi_ib_poll_cq(struct ib_cq *cq, struct kapi_wc *wc, int n);

int kapi_rdma_create_qp(struct rdma_cm_id *id, struct ib_pd *pd,
			struct ib_cq *cq, kapi_ib_event_t event, void *ctx,
			int *send_wr, int recv_wr, int send_sge);
void kapi_rdma_destroy_qp(struct rdma_cm_id *id);
int kapi_ib_qp_error(struct rdma_cm_id *id);
int kapi_ib_post_recv(struct rdma_cm_id *id, __u64 wr_id,
		      const struct kapi_sge *sge);
int kapi_ib_post_send(struct rdma_cm_id *id, __u64 wr_id,
		      const struct kapi_sge *sge, int nsge);

/* A registration of pages for RDMA (a fast-registration MR). */
struct kapi_rdma_map;
struct bio_vec;

/* One RDMA WRITE: bytes [loff, loff + len) of the local registration to
 * raddr under rkey (mirrored by RdmaSeg in rdma.rs). */
struct kapi_rdma_seg {
	__u64 raddr;
	__u32 rkey;
	__u32 loff;
	__u32 len;
	__u32 pad;
};

struct kapi_rdma_map *kapi_rdma_map_alloc(struct ib_pd *pd, int max_frags);
int kapi_rdma_map_kiov(struct kapi_rdma_map *m, const struct bio_vec *kiov,
		       int niov, __u32 offset, __u32 len, int remote_write);
void kapi_rdma_map_unmap(struct kapi_rdma_map *m);
void kapi_rdma_map_free(struct kapi_rdma_map *m);
__u32 kapi_rdma_map_rkey(const struct kapi_rdma_map *m);
__u64 kapi_rdma_map_iova(const struct kapi_rdma_map *m);
int kapi_ib_post_reg_send(struct rdma_cm_id *id, __u64 wr_id,
			  struct kapi_rdma_map *m, const struct kapi_sge *send);
int kapi_ib_post_reg_write_send(struct rdma_cm_id *id, __u64 wr_id,
				struct kapi_rdma_map *m,
				const struct kapi_rdma_seg *seg, int nseg,
				const struct kapi_sge *send);

int kapi_ib_event_type(const struct ib_event *ev);

/* A device's asynchronous events, to fn(ctx, event, port). */
struct kapi_ib_evh;
typedef void (*kapi_ib_async_t)(void *ctx, int event, __u32 port);
struct kapi_ib_evh *kapi_ib_register_event_handler(struct ib_device *dev,
						   kapi_ib_async_t fn,
						   void *ctx);
void kapi_ib_unregister_event_handler(struct kapi_ib_evh *e);
int kapi_ib_port_active(struct ib_device *dev, __u32 port);

__u64 kapi_ib_dma_map(struct ib_device *dev, void *va, size_t len, int to_dev,
		      int *err);
void kapi_ib_dma_unmap(struct ib_device *dev, __u64 addr, size_t len,
		       int to_dev);
void kapi_ib_dma_sync(struct ib_device *dev, __u64 addr, size_t len,
		      int for_dev, int to_dev);

#endif
