/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The version-2 arguments (LNET_IOCTL_VERSION2) of Lustre's /dev/lnet
 * commands that lnet-rs answers: Lustre's lnetctl global show reads the
 * NUMA range with IOC_LIBCFS_GET_NUMA_RANGE, and stats show the message
 * counters with IOC_LIBCFS_GET_LNET_STATS. The layout is Lustre's, byte for
 * byte (tests/abi/abi_check.py compares it with Lustre's header).
 */
#ifndef __UAPI_LNET_DLC_H_
#define __UAPI_LNET_DLC_H_

#include <linux/types.h>
#include <uapi/linux/lnet/libcfs_ioctl.h>
#include <uapi/linux/lnet/lnet-types.h>

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
