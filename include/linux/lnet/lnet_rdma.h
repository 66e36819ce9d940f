/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: what upper layers use of Lustre's <linux/lnet/lnet_rdma.h>,
 * exported by lnet.ko.
 */
#ifndef __LNET_RS_LNET_RDMA_H__
#define __LNET_RS_LNET_RDMA_H__

#include <linux/types.h>

struct page;

/*
 * Whether a page can only be reached by RDMA (GPU memory with NVIDIA GPU
 * Direct Storage). lnet-rs does not support GDS: always false, as Lustre
 * answers when no GDS driver is registered.
 */
bool lnet_is_rdma_only_page(struct page *page);

#endif /* __LNET_RS_LNET_RDMA_H__ */
