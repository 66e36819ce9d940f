/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Lustre's "DLC" ioctl arguments (version LNET_IOCTL_VERSION2), as far as
 * lnet-rs answers them: the route commands of libcfs_ioctl.h
 * (IOC_LIBCFS_ADD_ROUTE, DEL_ROUTE, GET_ROUTE), which Lustre's lnetctl uses
 * when the kernel's "lnet" netlink family does not answer its route
 * requests; the NUMA range Lustre's lnetctl global show reads with
 * IOC_LIBCFS_GET_NUMA_RANGE, and the message counters its stats show reads
 * with IOC_LIBCFS_GET_LNET_STATS; the router buffer commands
 * (IOC_LIBCFS_CONFIG_RTR, ADD_BUF, GET_BUF) of its set routing, set
 * tiny_buffers... and routing show. The layout is Lustre's, byte for byte
 * (tests/abi/abi_check.py compares it with Lustre's header, the fields of
 * the union's route member included).
 */
#ifndef __UAPI_LNET_DLC_H_
#define __UAPI_LNET_DLC_H_

#include <linux/types.h>
#include <uapi/linux/lnet/libcfs_ioctl.h>
#include <uapi/linux/lnet/lnet-types.h>

/* The longest string field of the argument (the net member's interface). */
#define LNET_MAX_STR_LEN	128
/* A route given no hop count. */
#define LNET_UNDEFINED_HOPS	((__u32) -1)

/* rtr_flags of IOC_LIBCFS_GET_ROUTE. */
#define LNET_RT_ALIVE		(1 << 0)
#define LNET_RT_MULTI_HOP	(1 << 1)

/*
 * The argument of the route commands, with ioc_version
 * LNET_IOCTL_VERSION2. cfg_nid is the gateway as a 64-bit NID, cfg_net
 * the remote net as a 32-bit net number. GET_ROUTE returns the
 * cfg_count'th route (ENOENT past the last). Only the route member of the
 * union is read or written by lnet-rs; the others keep Lustre's layout.
 */
struct lnet_ioctl_config_data {
	struct libcfs_ioctl_hdr cfg_hdr;

	__u32 cfg_net;
	__u32 cfg_count;
	__u64 cfg_nid;
	__u32 cfg_ncpts;

	union {
		struct {
			__u32 rtr_hop;
			__u32 rtr_priority;
			__u32 rtr_flags;
			__u32 rtr_sensitivity;
		} cfg_route;
		struct {
			char net_intf[LNET_MAX_STR_LEN];
			__s32 net_peer_timeout;
			__s32 net_peer_tx_credits;
			__s32 net_peer_rtr_credits;
			__s32 net_max_tx_credits;
			__u32 net_cksum_algo;
			__u32 net_interface_count;
		} cfg_net;
		struct {
			__u32 buf_enable;
			__s32 buf_tiny;
			__s32 buf_small;
			__s32 buf_large;
		} cfg_buffers;
	} cfg_config_u;

	char cfg_bulk[];
};

/*
 * Router buffer pools (IOC_LIBCFS_CONFIG_RTR, ADD_BUF, GET_BUF, with the
 * cfg_buffers member of the argument above): GET_BUF writes a struct
 * lnet_ioctl_pool_cfg at cfg_bulk, for CPU partition cfg_count.
 */
#define LNET_TINY_BUF_IDX	0
#define LNET_SMALL_BUF_IDX	1
#define LNET_LARGE_BUF_IDX	2

/* # different router buffer pools */
#define LNET_NRBPOOLS		(LNET_LARGE_BUF_IDX + 1)

struct lnet_ioctl_pool_cfg {
	struct {
		__u32 pl_npages;
		__u32 pl_nbuffers;
		__u32 pl_credits;
		__u32 pl_mincredits;
	} pl_pools[LNET_NRBPOOLS];
	__u32 pl_routing;
};

/* One value: IOC_LIBCFS_GET_NUMA_RANGE's reply (ioc_len exactly this). */
struct lnet_ioctl_set_value {
	struct libcfs_ioctl_hdr sv_hdr;
	__u32 sv_value;
};

/* IOC_LIBCFS_GET_LNET_STATS's reply (ioc_len at least this). */
struct lnet_ioctl_lnet_stats {
	struct libcfs_ioctl_hdr st_hdr;
	struct lnet_counters st_cntrs;
};

#endif
