/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Fault injection through Lustre's IOC_LIBCFS_LNET_FAULT, as Lustre's lctl
 * (net_drop_* and net_delay_*) sends it when the kernel's "lnet" family has
 * no LNET_CMD_FAULT: the operation in ioc_flags, a struct lnet_fault_attr
 * in the first inline buffer, and for a list a struct lnet_fault_stat in
 * the second. The layout is Lustre's, byte for byte (tests/abi/abi_check.py
 * compares it with Lustre's header). NIDs are 64-bit: 0 or LNET_NID_ANY is
 * any NID, address 255.255.255.255 any NID of the net.
 */
#ifndef __UAPI_LNETCTL_H_
#define __UAPI_LNETCTL_H_

#include <linux/types.h>
#include <uapi/linux/lnet/lnet-types.h>

enum {
	LNET_CTL_DROP_ADD = 0,
	LNET_CTL_DROP_DEL = 1,
	LNET_CTL_DROP_RESET = 2,
	LNET_CTL_DROP_LIST = 3,
	LNET_CTL_DELAY_ADD = 4,
	LNET_CTL_DELAY_DEL = 5,
	LNET_CTL_DELAY_RESET = 6,
	LNET_CTL_DELAY_LIST = 7,
};

/* fa_msg_mask: message types (0: all). */
enum {
	LNET_ACK_BIT = (1 << 0),
	LNET_PUT_BIT = (1 << 1),
	LNET_GET_BIT = (1 << 2),
	LNET_REPLY_BIT = (1 << 3),
};

/* da_health_error_mask: 1 << health status, or HSTATUS_RANDOM. */
enum {
	HSTATUS_END = 11,
	HSTATUS_LOCAL_INTERRUPT_BIT = (1 << 1),
	HSTATUS_LOCAL_DROPPED_BIT = (1 << 2),
	HSTATUS_LOCAL_ABORTED_BIT = (1 << 3),
	HSTATUS_LOCAL_NO_ROUTE_BIT = (1 << 4),
	HSTATUS_LOCAL_ERROR_BIT = (1 << 5),
	HSTATUS_LOCAL_TIMEOUT_BIT = (1 << 6),
	HSTATUS_REMOTE_ERROR_BIT = (1 << 7),
	HSTATUS_REMOTE_DROPPED_BIT = (1 << 8),
	HSTATUS_REMOTE_TIMEOUT_BIT = (1 << 9),
	HSTATUS_NETWORK_TIMEOUT_BIT = (1 << 10),
	HSTATUS_RANDOM = 0xffffffff,
};

struct lnet_fault_attr {
	lnet_nid_t	fa_src;		/* the message's source */
	lnet_nid_t	fa_dst;		/* its final destination */
	lnet_nid_t	fa_local_nid;	/* the NI it arrived on */
	__u64		fa_ptl_mask;	/* portals of PUT and GET; 0: all */
	__u32		fa_msg_mask;	/* LNET_*_BIT; 0: all */
	union {
		struct {
			__u32	da_rate;	/* one in da_rate, or */
			__u32	da_interval;	/* once per da_interval s */
			__u32	da_health_error_mask;
			__u32	da_random:1,	/* about half of each interval */
				da_drop_all:1;	/* every match */
		} drop;
		struct {
			__u32	la_rate;
			__u32	la_interval;
			__u32	la_latency;	/* seconds held */
		} delay;
		__u64	space[8];
	} u;
};

struct lnet_fault_stat {
	__u64		fs_count;	/* matches the rate or interval saw */
	__u64		fs_put;		/* dropped or delayed, by type */
	__u64		fs_ack;
	__u64		fs_get;
	__u64		fs_reply;
	union {
		struct {
			__u64	ds_dropped;
		} drop;
		struct {
			__u64	ls_delayed;
		} delay;
		__u64	space[8];
	} u;
};

#endif
