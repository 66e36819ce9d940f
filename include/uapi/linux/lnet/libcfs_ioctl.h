/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Lustre's own /dev/lnet ABI, as far as lnet-rs answers it: the argument
 * header every IOC_LIBCFS_* command starts with, the old-style argument
 * (struct libcfs_ioctl_data, version LNET_IOCTL_VERSION) and the command
 * numbers. Lustre's lctl and lnetctl use these when the kernel has no
 * "lnet" generic netlink family. The layout is Lustre's, byte for byte
 * (tests/abi/abi_check.py compares it with Lustre's header).
 */
#ifndef __UAPI_LIBCFS_IOCTL_H__
#define __UAPI_LIBCFS_IOCTL_H__

#include <linux/types.h>
#include <linux/ioctl.h>

#ifndef __user
#define __user
#endif

#define LNET_IOCTL_VERSION	0x0001000a	/* struct libcfs_ioctl_data */
#define LNET_IOCTL_VERSION2	0x0001000b	/* the lnet-dlc.h structures */

struct libcfs_ioctl_hdr {
	__u32 ioc_len;		/* the whole argument, inline buffers included */
	__u32 ioc_version;
};

/* The largest argument the kernel copies in. */
#define LIBCFS_IOC_DATA_MAX	(128 * 1024)

struct libcfs_ioctl_data {
	struct libcfs_ioctl_hdr ioc_hdr;

	__u64 ioc_nid;
	__u64 ioc_u64[1];

	__u32 ioc_flags;
	__u32 ioc_count;
	__u32 ioc_net;
	__u32 ioc_u32[7];

	/* Two NUL-terminated strings packed in ioc_bulk, each padded to 8 */
	__u32 ioc_inllen1;
	char *ioc_inlbuf1;
	__u32 ioc_inllen2;
	char *ioc_inlbuf2;

	/* Two buffers in the caller's memory */
	__u32 ioc_plen1;
	void __user *ioc_pbuf1;
	__u32 ioc_plen2;
	void __user *ioc_pbuf2;

	char ioc_bulk[];
};

/* Commands are _IOWR('e', nr, long), nr from 30 to 112. */
#define IOC_LIBCFS_TYPE		('e')
#define IOC_LIBCFS_MIN_NR	30
#define IOC_LIBCFS_GET_NI	_IOWR('e', 50, long)
/* lnetctl.h's fault rules, in a struct libcfs_ioctl_data. */
#define IOC_LIBCFS_LNET_FAULT	_IOWR('e', 64, long)
#define IOC_LIBCFS_UNCONFIGURE	_IOWR('e', 56, long)
#define IOC_LIBCFS_CONFIGURE	_IOWR('e', 59, long)
/* Commands whose argument is struct lnet_ioctl_config_data (lnet-dlc.h). */
#define IOCTL_CONFIG_SIZE	struct lnet_ioctl_config_data
#define IOC_LIBCFS_ADD_ROUTE	_IOWR(IOC_LIBCFS_TYPE, 81, IOCTL_CONFIG_SIZE)
#define IOC_LIBCFS_DEL_ROUTE	_IOWR(IOC_LIBCFS_TYPE, 82, IOCTL_CONFIG_SIZE)
#define IOC_LIBCFS_GET_ROUTE	_IOWR(IOC_LIBCFS_TYPE, 83, IOCTL_CONFIG_SIZE)
#define IOC_LIBCFS_CONFIG_RTR	_IOWR(IOC_LIBCFS_TYPE, 87, IOCTL_CONFIG_SIZE)
#define IOC_LIBCFS_ADD_BUF	_IOWR(IOC_LIBCFS_TYPE, 88, IOCTL_CONFIG_SIZE)
#define IOC_LIBCFS_GET_BUF	_IOWR(IOC_LIBCFS_TYPE, 89, IOCTL_CONFIG_SIZE)
/*
 * Their argument is lnet-dlc.h's lnet_ioctl_lnet_stats and
 * lnet_ioctl_set_value; the size in the number is Lustre's, and the kernel
 * matches Lustre's commands by type and number only.
 */
#define IOC_LIBCFS_GET_LNET_STATS	_IOWR(IOC_LIBCFS_TYPE, 91, IOCTL_CONFIG_SIZE)
#define IOC_LIBCFS_GET_NUMA_RANGE	_IOWR(IOC_LIBCFS_TYPE, 99, IOCTL_CONFIG_SIZE)
/* Its argument is an empty struct libcfs_ioctl_data. */
#define IOC_LIBCFS_RESET_LNET_STATS	_IOWR(IOC_LIBCFS_TYPE, 110, IOCTL_CONFIG_SIZE)
#define IOC_LIBCFS_MAX_NR	112

#endif
