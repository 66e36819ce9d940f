/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * lnet-rs: the ioctl ABI of the LNet misc device /dev/lnet, as used by
 * lnetctl (rust/lnetctl) to configure and inspect LNet.
 *
 * This is lnet-rs's own ABI, not Lustre's IOC_LIBCFS_* one: lnetctl prints
 * Lustre's YAML, but talks to the kernel only through the commands below.
 *
 * Rules, which the kernel enforces on every call:
 *
 *  - Every argument starts with struct lnet_ioc_hdr. ioc_len must equal
 *    sizeof() of the command's structure and ioc_version must equal
 *    LNET_IOC_VERSION; otherwise the call fails with EINVAL (length) or
 *    EPROTO (version) and nothing else is read. _IOC_SIZE of the command
 *    number also carries the size, so a mismatched build usually fails
 *    with ENOTTY before the header is even read.
 *  - Structures are fixed-size and explicitly laid out: only __u8, __u16,
 *    __u32, __u64, nested structures of those and fixed arrays; every hole
 *    is a named padding field. Padding fields and unused array slots must
 *    be zero on input (EINVAL otherwise), so that later versions can give
 *    them a meaning. The kernel zeroes them on output.
 *  - Fields documented as signed (s32/s64) carry a two's complement value
 *    in the unsigned field of the same size.
 *  - Strings are NUL-terminated within their array (EINVAL otherwise).
 *  - "in" fields are read by the kernel; "out" fields are written by it;
 *    every call copies the whole structure back.
 *  - Iterating commands (GET_NI, GET_PEER, GET_PEER_NI) fail with ENOENT
 *    once the index is past the last element.
 *  - Commands other than CONFIGURE, UNCONFIGURE, SET_NUMA_RANGE and
 *    GET_GLOBALS fail with ENETDOWN while LNet is not configured.
 *
 * Bumping LNET_IOC_VERSION is required for any change of layout or meaning.
 */
#ifndef __UAPI_LNET_RS_IOCTL_H__
#define __UAPI_LNET_RS_IOCTL_H__

#include <linux/types.h>
#include <linux/ioctl.h>

#define LNET_IOC_DEV_PATH	"/dev/lnet"
#define LNET_IOC_VERSION	1

/*
 * Lustre's own ioctls use 'e' with numbers below 0x80; lnet-rs uses the same
 * letter with numbers from 0xc0, so the two ABIs can never be confused.
 */
#define LNET_IOC_MAGIC		'e'

/* Common header of every argument. */
struct lnet_ioc_hdr {
	__u32	ioc_len;	/* sizeof(the command's structure) */
	__u32	ioc_version;	/* LNET_IOC_VERSION */
};

/*
 * A NID in the layout of the 20-byte large form, struct lnet_nid
 * (include/uapi/linux/lnet/lnet-types.h; wire.md §1.2): byte for byte the
 * same, but without the packed attribute (its fields are naturally aligned
 * anyway).
 * nid_num and nid_addr are big-endian. A 4-byte address uses nid_addr[0]
 * only (nid_size 0) and leaves the rest zero; an IPv6 address uses all four
 * words (nid_size 12). nid_type 0xff is LNET_ANY_NID, whatever the rest.
 */
struct lnet_ioc_nid {
	__u8	nid_size;	/* address bytes beyond 4: 0 or 12 */
	__u8	nid_type;	/* LND type, 0xff for "any" */
	__u16	nid_num;	/* network number, big-endian */
	__u32	nid_addr[4];	/* address, big-endian */
};

#define LNET_IOC_NID_TYPE_ANY	0xff

/* Interface and net names, including the terminating NUL (IFNAMSIZ). */
#define LNET_IOC_NAME_LEN	16
/* Interfaces per net add (Lustre's LNET_INTERFACES_NUM). */
#define LNET_IOC_MAX_INTF	16
/* CPTs reported per NI (Lustre's LNET_MAX_SHOW_NUM_CPT). */
#define LNET_IOC_MAX_CPTS	128
/* NIDs per peer add/del call; longer lists take several calls. */
#define LNET_IOC_PEER_MAX_NIDS	32
/* NIDs per page of a recovery queue. */
#define LNET_IOC_RECOVERY_PAGE	32
/* Entries per page of a ping reply. */
#define LNET_IOC_PING_PAGE	32

/* A tunable given as this value keeps its default (it is (__u32)-1). */
#define LNET_IOC_TUNABLE_DEFAULT	0xffffffffU
/* A UDSP priority that was never set (shown by lnetctl as -1). */
#define LNET_IOC_PRIORITY_UNSET		0xffffffffU

/* Index of each message type in the *_stats[] arrays. */
#define LNET_IOC_MSG_PUT	0
#define LNET_IOC_MSG_GET	1
#define LNET_IOC_MSG_REPLY	2
#define LNET_IOC_MSG_ACK	3
#define LNET_IOC_MSG_HELLO	4
#define LNET_IOC_MSG_TYPES	5

/* Latency statistics of one kind of exchange (all in nanoseconds). */
struct lnet_ioc_latency {
	__u64	lat_samples;
	__u64	lat_min_nsec;
	__u64	lat_max_nsec;
	__u64	lat_avg_nsec;
};

/*
 * LNET_IOC_CONFIGURE: bring LNet up (LNetNIInit). With
 * LNET_IOC_CFG_LOAD_NETWORKS the NIs of the networks=/ip2nets= module
 * parameters are started too (lnetctl lnet configure --all); without it
 * only the loopback NI exists. Configuring a configured LNet succeeds and
 * changes nothing.
 *
 * LNET_IOC_UNCONFIGURE: shut LNet down (LNetNIFini of the configure
 * reference). cfg_flags must be 0. EBUSY while other users (e.g. Lustre)
 * still hold LNet up.
 */
struct lnet_ioc_config {
	struct lnet_ioc_hdr cfg_hdr;
	__u32	cfg_flags;	/* in: LNET_IOC_CFG_* */
	__u32	cfg_padding;
};

#define LNET_IOC_CFG_LOAD_NETWORKS	(1U << 0)

/*
 * LNET_IOC_NET_ADD: add a net (lnetctl net add), one NI per interface, or
 * add NIs to an existing net. nc_net is the net's name ("tcp", "o2ib1").
 * With no interface the LND picks one, as Lustre does. The tunables are s32
 * values or LNET_IOC_TUNABLE_DEFAULT; conns_per_peer applies to socklnd and
 * o2iblnd nets only. EEXIST if an NI on one of the interfaces exists.
 *
 * LNET_IOC_NET_DEL: delete the NIs of nc_net on the listed interfaces, or
 * the whole net when nc_nintf is 0 (lnetctl net del). The tunables must be
 * LNET_IOC_TUNABLE_DEFAULT. ENOENT if the net or an NI does not exist.
 */
struct lnet_ioc_net_cfg {
	struct lnet_ioc_hdr nc_hdr;
	__u8	nc_net[LNET_IOC_NAME_LEN];			/* in */
	__u32	nc_nintf;					/* in */
	__u32	nc_peer_timeout;				/* in, s32 */
	__u32	nc_peer_credits;				/* in, s32 */
	__u32	nc_peer_buffer_credits;				/* in, s32 */
	__u32	nc_credits;					/* in, s32 */
	__u32	nc_conns_per_peer;				/* in, s32 */
	__u8	nc_intf[LNET_IOC_MAX_INTF][LNET_IOC_NAME_LEN];	/* in */
};

/*
 * LNET_IOC_GET_NI: the ni_idx'th local NI (0, 1, ... in the order of the
 * kernel's net list, the NIs of one net consecutive; 0@lo first). Everything
 * lnetctl net show prints at any verbosity.
 */
struct lnet_ioc_ni {
	struct lnet_ioc_hdr ni_hdr;
	__u32	ni_idx;			/* in */
	__u32	ni_status;		/* out: LNET_IOC_NI_STATUS_* */
	struct lnet_ioc_nid ni_nid;	/* out */
	__u32	ni_fatal_error;		/* out: ni_fatal_error_on, 0 or 1 */
	__u32	ni_health_value;	/* out, s32 */
	__u8	ni_intf[LNET_IOC_NAME_LEN];	/* out: "" if none */
	/* statistics */
	__u32	ni_send_count;
	__u32	ni_recv_count;
	__u32	ni_drop_count;
	struct lnet_ioc_latency ni_put_egress;
	struct lnet_ioc_latency ni_get_rtt;
	struct lnet_ioc_latency ni_put_ack;
	__u32	ni_sent_stats[LNET_IOC_MSG_TYPES];
	__u32	ni_received_stats[LNET_IOC_MSG_TYPES];
	__u32	ni_dropped_stats[LNET_IOC_MSG_TYPES];
	/* health stats (ni_hstats) */
	__u32	ni_hs_interrupts;	/* hlt_local_interrupt */
	__u32	ni_hs_dropped;		/* hlt_local_dropped */
	__u32	ni_hs_aborted;		/* hlt_local_aborted */
	__u32	ni_hs_no_route;		/* hlt_local_no_route */
	__u32	ni_hs_timeouts;		/* hlt_local_timeout */
	__u32	ni_hs_error;		/* hlt_local_error */
	__u32	ni_ping_count;
	__u64	ni_next_ping;		/* s64, absolute monotonic seconds */
	/* common tunables, s32 */
	__u32	ni_peer_timeout;
	__u32	ni_peer_credits;
	__u32	ni_peer_buffer_credits;
	__u32	ni_credits;
	/* LND tunables, s32; lnetctl prints those of the NI's LND only */
	__u32	ni_lnd_peercredits_hiw;		/* o2ib */
	__u32	ni_lnd_map_on_demand;		/* o2ib */
	__u32	ni_lnd_concurrent_sends;	/* o2ib */
	__u32	ni_lnd_fmr_pool_size;		/* o2ib */
	__u32	ni_lnd_fmr_flush_trigger;	/* o2ib */
	__u32	ni_lnd_fmr_cache;		/* o2ib */
	__u32	ni_lnd_ntx;			/* o2ib */
	__u32	ni_lnd_conns_per_peer;		/* o2ib, tcp */
	__u32	ni_lnd_timeout;			/* o2ib, tcp: lnd_get_timeout() */
	__u32	ni_lnd_tos;			/* o2ib, tcp */
	/* UDSP selection priorities, LNET_IOC_PRIORITY_UNSET if none */
	__u32	ni_net_priority;
	__u32	ni_nid_priority;
	__u32	ni_dev_cpt;		/* s32 */
	__u32	ni_ncpts;		/* valid entries of ni_cpts */
	__u16	ni_cpts[LNET_IOC_MAX_CPTS];
};

#define LNET_IOC_NI_STATUS_DOWN	0
#define LNET_IOC_NI_STATUS_UP	1

/*
 * LNET_IOC_SET_NI_HEALTH: set the health value of the local NI hv_nid, or of
 * every local NI with LNET_IOC_HEALTH_ALL (hv_nid is then ignored and
 * should be LNET_ANY_NID). lnetctl net set --health.
 *
 * LNET_IOC_SET_PEER_NI_HEALTH: the same for the peer NI hv_nid, or every
 * peer NI of every peer. lnetctl peer set --health.
 *
 * hv_value is s32 and passed as given: range checks are the kernel's
 * (health.md §9). ENOENT if hv_nid is not found.
 */
struct lnet_ioc_health {
	struct lnet_ioc_hdr hv_hdr;
	struct lnet_ioc_nid hv_nid;	/* in */
	__u32	hv_flags;		/* in: LNET_IOC_HEALTH_* */
	__u32	hv_value;		/* in, s32 */
	__u32	hv_padding;
};

#define LNET_IOC_HEALTH_ALL	(1U << 0)

/*
 * LNET_IOC_PEER_ADD: create the peer pc_prim_nid if needed, then add the
 * pc_nnids NIDs of pc_nids to it (lnetctl peer add). PEER_NON_MR creates
 * the peer as not Multi-Rail; PEER_LOCK_PRIM locks its primary NID.
 *
 * LNET_IOC_PEER_DEL: delete the listed NIDs from peer pc_prim_nid, or the
 * whole peer when pc_nnids is 0 (lnetctl peer del). PEER_FORCE allows
 * deleting a locked primary NID.
 */
struct lnet_ioc_peer_cfg {
	struct lnet_ioc_hdr pc_hdr;
	struct lnet_ioc_nid pc_prim_nid;	/* in */
	__u32	pc_flags;			/* in: LNET_IOC_PEER_* */
	__u32	pc_nnids;			/* in */
	__u32	pc_padding;
	struct lnet_ioc_nid pc_nids[LNET_IOC_PEER_MAX_NIDS];	/* in */
};

#define LNET_IOC_PEER_NON_MR	(1U << 0)
#define LNET_IOC_PEER_LOCK_PRIM	(1U << 1)
#define LNET_IOC_PEER_FORCE	(1U << 2)

/* LNET_IOC_GET_PEER: the pr_idx'th peer (lnetctl peer show). */
struct lnet_ioc_peer {
	struct lnet_ioc_hdr pr_hdr;
	__u32	pr_idx;				/* in */
	__u32	pr_nnis;			/* out: peer NIs */
	struct lnet_ioc_nid pr_prim_nid;	/* out */
	__u32	pr_multi_rail;			/* out: 0 or 1 */
	__u32	pr_state;			/* out: lp_state (lnetctl.md §2.2) */
	__u32	pr_padding;
};

/*
 * LNET_IOC_GET_PEER_NI: the pn_idx'th NI of the peer whose primary NID is
 * pn_prim_nid (ENOENT if no such peer or index). Everything lnetctl peer
 * show prints for one peer NI at any verbosity.
 */
struct lnet_ioc_peer_ni {
	struct lnet_ioc_hdr pn_hdr;
	struct lnet_ioc_nid pn_prim_nid;	/* in */
	__u32	pn_idx;				/* in */
	struct lnet_ioc_nid pn_nid;		/* out */
	__u32	pn_state;		/* LNET_IOC_PEER_NI_STATE_* */
	__u32	pn_max_ni_tx_credits;
	__u32	pn_available_tx_credits;	/* s32 */
	__u32	pn_min_tx_credits;		/* s32 */
	__u32	pn_tx_q_num_of_buf;
	__u32	pn_available_rtr_credits;	/* s32 */
	__u32	pn_min_rtr_credits;		/* s32 */
	__u32	pn_refcount;
	/* statistics */
	__u32	pn_send_count;
	__u32	pn_recv_count;
	__u32	pn_drop_count;
	struct lnet_ioc_latency pn_put_egress;
	struct lnet_ioc_latency pn_get_rtt;
	struct lnet_ioc_latency pn_put_ack;
	__u32	pn_sent_stats[LNET_IOC_MSG_TYPES];
	__u32	pn_received_stats[LNET_IOC_MSG_TYPES];
	__u32	pn_dropped_stats[LNET_IOC_MSG_TYPES];
	/* health stats (lpni_hstats) */
	__u32	pn_health_value;	/* s32 */
	__u32	pn_hs_dropped;		/* hlt_remote_dropped */
	__u32	pn_hs_timeout;		/* hlt_remote_timeout */
	__u32	pn_hs_error;		/* hlt_remote_error */
	__u32	pn_hs_network_timeout;	/* hlt_network_timeout */
	__u32	pn_ping_count;
	/* UDSP selection priorities, LNET_IOC_PRIORITY_UNSET if none */
	__u32	pn_net_priority;	/* lpn_sel_priority */
	__u32	pn_nid_priority;	/* lpni_sel_priority */
	__u32	pn_padding;
	__u64	pn_next_ping;		/* s64, absolute monotonic seconds */
};

/* Shown as "NA" unless the peer is a router or aliveness is tracked. */
#define LNET_IOC_PEER_NI_STATE_NA	0
#define LNET_IOC_PEER_NI_STATE_UP	1
#define LNET_IOC_PEER_NI_STATE_DOWN	2

/*
 * LNET_IOC_GET_STATS: the global counters (lnetctl stats show), summed over
 * CPTs: struct lnet_counters of include/uapi/linux/lnet/lnet-types.h field
 * by field (st_X is lcc_X or lch_X), laid out with natural alignment, followed by
 * the two resend counters stats show also prints.
 */
struct lnet_ioc_stats {
	struct lnet_ioc_hdr st_hdr;
	/* struct lnet_counters_common */
	__u32	st_msgs_alloc;
	__u32	st_msgs_max;
	__u32	st_errors;
	__u32	st_send_count;
	__u32	st_recv_count;
	__u32	st_route_count;
	__u32	st_drop_count;
	__u32	st_padding0;
	__u64	st_send_length;
	__u64	st_recv_length;
	__u64	st_route_length;
	__u64	st_drop_length;
	/* struct lnet_counters_health */
	__u32	st_rst_alloc;
	__u32	st_resend_count;
	__u32	st_response_timeout_count;
	__u32	st_local_interrupt_count;
	__u32	st_local_dropped_count;
	__u32	st_local_aborted_count;
	__u32	st_local_no_route_count;
	__u32	st_local_timeout_count;
	__u32	st_local_error_count;
	__u32	st_remote_dropped_count;
	__u32	st_remote_error_count;
	__u32	st_remote_timeout_count;
	__u32	st_network_timeout_count;
	/* lch_failed_resends, lch_successful_resends (health.md §6.1) */
	__u32	st_failed_resends;
	__u32	st_successful_resends;
	__u32	st_padding1;
};

/*
 * LNET_IOC_GET_RECOVERY_QUEUE: up to LNET_IOC_RECOVERY_PAGE NIDs of the
 * local NI (rq_type 0) or peer NI (rq_type 1) recovery queue, starting at
 * position rq_start. rq_total is the queue's length now; the caller asks
 * again with rq_start + rq_count until it has rq_total NIDs or a page comes
 * back empty (the queue may change between calls). lnetctl debug recovery.
 */
struct lnet_ioc_recovery {
	struct lnet_ioc_hdr rq_hdr;
	__u32	rq_type;	/* in: LNET_IOC_RECOVERY_* */
	__u32	rq_start;	/* in */
	__u32	rq_count;	/* out: valid entries of rq_nids */
	__u32	rq_total;	/* out */
	struct lnet_ioc_nid rq_nids[LNET_IOC_RECOVERY_PAGE];	/* out */
};

#define LNET_IOC_RECOVERY_LOCAL	0
#define LNET_IOC_RECOVERY_PEER	1

/* One NI of a ping reply: its NID and its status word as sent. */
struct lnet_ioc_ping_entry {
	struct lnet_ioc_nid pe_nid;
	__u32	pe_status;	/* LNET_NI_STATUS_UP 0x15aac0de, DOWN 0xdeadface */
};

/*
 * LNET_IOC_PING: ping pg_target (lnetctl ping) from pg_source (LNET_ANY_NID
 * lets LNet choose), waiting at most pg_timeout_ms. The reply's entries, in
 * reply order and including 0@lo, are returned from index pg_start, at most
 * LNET_IOC_PING_PAGE of them; pg_total is their number.
 *
 * Paging: a call with pg_start 0 sends a ping and keeps its reply with the
 * open file; a call with pg_start > 0 and the same target, source and
 * timeout returns entries from that kept reply without pinging again (it
 * pings afresh if the file has no reply for that target).
 */
/*
 * LNET_IOC_DISCOVER (lnetctl discover) takes the same structure: it
 * discovers pg_target's peer, waiting until discovery ends (its ping's and
 * push's deadlines bound it; pg_timeout_ms is checked but, as in Lustre's
 * lnet_discover, does not shorten the wait), and lists that
 * peer as discovery left it: its primary NID, Multi-Rail, and its NIDs
 * with the status their node reported. pg_source must be LNET_ANY_NID;
 * pg_multi_rail set to 1 on the first call (pg_start 0) forces a new
 * discovery (--force). Later pages only read the peer.
 */
struct lnet_ioc_ping {
	struct lnet_ioc_hdr pg_hdr;
	struct lnet_ioc_nid pg_target;	/* in */
	struct lnet_ioc_nid pg_source;	/* in */
	__u32	pg_timeout_ms;		/* in */
	__u32	pg_start;		/* in */
	__u32	pg_count;		/* out: valid entries of pg_entries */
	__u32	pg_total;		/* out */
	struct lnet_ioc_nid pg_primary;	/* out: the peer's primary NID */
	__u32	pg_multi_rail;		/* out: 0 or 1 (ping feature MULTI_RAIL) */
	struct lnet_ioc_ping_entry pg_entries[LNET_IOC_PING_PAGE];	/* out */
};

/*
 * LNET_IOC_SET_NUMA_RANGE: set lnet_numa_range (lnetctl set numa_range),
 * which sysfs shows read-only. Works while LNet is down.
 */
struct lnet_ioc_value {
	struct lnet_ioc_hdr val_hdr;
	__u32	val_value;	/* in */
	__u32	val_padding;
};

/*
 * LNET_IOC_GET_GLOBALS: the values lnetctl global show prints that are not
 * module parameters in /sys/module/lnet/parameters: numa_range (read there
 * by Lustre's lnetctl through an ioctl too) and the derived lnet_lnd_timeout
 * (health.md §5.1), which Lustre shows in debugfs. Works while LNet is down.
 */
struct lnet_ioc_globals {
	struct lnet_ioc_hdr gl_hdr;
	__u32	gl_numa_range;	/* out */
	__u32	gl_lnd_timeout;	/* out */
};

/*
 * LNET_IOC_FAULT_ADD / _DEL / _RESET / _LIST: fault injection rules, for
 * lctl net_drop_* (fr_kind LNET_IOC_FAULT_DROP) and net_delay_*
 * (LNET_IOC_FAULT_DELAY). Changes need CAP_NET_ADMIN; all work only while
 * LNet is up.
 *
 *  - ADD: a rule matching messages from fr_src to fr_dst (LNET_ANY_NID
 *    matches every NID, address 255.255.255.255 every NID of its net:
 *    lctl's "*" and "*@net"), of the types in fr_msg_mask (0: all) and,
 *    for PUT and GET, the portals in fr_ptl_mask (0: all). It fires once
 *    in every fr_rate matches or once per fr_interval seconds (exactly
 *    one of the two is non-zero). A drop rule with fr_health_mask set
 *    (1 << status, LNET_IOC_FAULT_HEALTH_RANDOM for any) fails sends with
 *    one of those health statuses; one without drops received messages
 *    silently (those arriving on fr_local only, unless it is ANY).
 *    LNET_IOC_FAULT_RANDOM (with an interval) drops about half the
 *    matches; LNET_IOC_FAULT_DROP_ALL drops every match on both paths. A
 *    delay rule holds messages for fr_latency seconds. EINVAL for a rule
 *    that cannot fire.
 *  - DEL: removes the rules whose source and destination are fr_src and
 *    fr_dst (ANY: any); fr_index returns how many. Messages a removed delay
 *    rule held go on at once.
 *  - RESET: zeroes the counters of every rule of the kind.
 *  - LIST: the rule at position fr_index (newest first) with its counters,
 *    or ENOENT past the last.
 */
struct lnet_ioc_fault {
	struct lnet_ioc_hdr fr_hdr;
	__u32	fr_kind;	/* in: LNET_IOC_FAULT_DROP or _DELAY */
	__u32	fr_index;	/* in (LIST) / out (DEL) */
	struct lnet_ioc_nid fr_src;	/* in (ADD, DEL) / out (LIST) */
	struct lnet_ioc_nid fr_dst;	/* in (ADD, DEL) / out (LIST) */
	struct lnet_ioc_nid fr_local;	/* in (ADD) / out (LIST) */
	__u32	fr_msg_mask;	/* LNET_IOC_FAULT_MSG_* bits */
	__u32	fr_rate;
	__u32	fr_interval;	/* seconds */
	__u32	fr_latency;	/* seconds, delay rules */
	__u32	fr_health_mask;	/* drop rules */
	__u32	fr_flags;	/* LNET_IOC_FAULT_RANDOM, _DROP_ALL */
	__u32	fr_padding;
	__u64	fr_ptl_mask;
	/* out (LIST): matches counted, drops or delays by type, and in all */
	__u64	fr_count;
	__u64	fr_put;
	__u64	fr_ack;
	__u64	fr_get;
	__u64	fr_reply;
	__u64	fr_hits;
};

#define LNET_IOC_FAULT_DROP	0
#define LNET_IOC_FAULT_DELAY	1

#define LNET_IOC_FAULT_MSG_ACK		(1U << 0)
#define LNET_IOC_FAULT_MSG_PUT		(1U << 1)
#define LNET_IOC_FAULT_MSG_GET		(1U << 2)
#define LNET_IOC_FAULT_MSG_REPLY	(1U << 3)

#define LNET_IOC_FAULT_HEALTH_RANDOM	0xffffffffU

#define LNET_IOC_FAULT_RANDOM	(1U << 0)
#define LNET_IOC_FAULT_DROP_ALL	(1U << 1)

/*
 * User Defined Selection Policies (lnetctl udsp; udsp.md).
 *
 *  - ADD: the rule whose SRC, DST and RTE descriptors are ud_bulk (Lustre's
 *    marshalled form, udsp.md §2.4, ud_bulk_len bytes), with
 *    ud_action_type (LNET_IOC_UDSP_ACTION_*) and ud_priority, goes before
 *    rule ud_idx (s32; -1 or past the end: last); then every rule is
 *    applied again. A rule with the same descriptors: EALREADY, unless both
 *    are priorities, when its priority is updated instead.
 *  - DEL: rule ud_idx (s32; -1: every rule) is removed and what it set is
 *    undone; ENOENT if there is no such rule.
 *  - GET: rule ud_idx with its bulk, or ENOENT past the last.
 */
#define LNET_IOC_UDSP_BULK_MAX	1536

struct lnet_ioc_udsp {
	struct lnet_ioc_hdr ud_hdr;
	__u32	ud_idx;		/* s32 */
	__u32	ud_action_type;	/* LNET_IOC_UDSP_ACTION_* */
	__u32	ud_priority;	/* PRIORITY rules */
	__u32	ud_bulk_len;	/* bytes of ud_bulk used */
	__u8	ud_bulk[LNET_IOC_UDSP_BULK_MAX];
};

#define LNET_IOC_UDSP_ACTION_PRIORITY	1
#define LNET_IOC_UDSP_ACTION_PREFERRED	2

/*
 * Routes to remote nets (lnetctl route add/del/show).
 *
 *  - ROUTE_ADD: a route to rt_net through rt_gateway, with rt_hops
 *    (1..255 or LNET_IOC_ROUTE_HOPS_UNDEFINED) and rt_priority; rt_flags
 *    and rt_idx must be 0. Errors are lnet_add_route's: EINVAL for a
 *    route that can never be valid, EEXIST for a local net or a route
 *    through the same gateway, EHOSTUNREACH for a gateway on no local net.
 *  - ROUTE_DEL: the routes to rt_net (LNET_IOC_NET_ANY: every net)
 *    through rt_gateway's peer (type LNET_IOC_NID_TYPE_ANY: every
 *    gateway); ENOENT if rt_net is named and has no route.
 *  - GET_ROUTE: the rt_idx'th route, in Lustre's route show order, with
 *    its state in rt_flags.
 *
 * rt_net is the 32-bit net number (LND type << 16 | number).
 */
struct lnet_ioc_route {
	struct lnet_ioc_hdr rt_hdr;
	__u32	rt_idx;				/* in: GET_ROUTE */
	__u32	rt_net;				/* in/out */
	struct lnet_ioc_nid rt_gateway;		/* in/out */
	__u32	rt_hops;			/* in/out */
	__u32	rt_priority;			/* in/out */
	__u32	rt_flags;			/* out: LNET_IOC_ROUTE_* */
};

#define LNET_IOC_NET_ANY		0xffffffffU
#define LNET_IOC_ROUTE_HOPS_UNDEFINED	0xffffffffU
#define LNET_IOC_ROUTE_ALIVE		(1U << 0)
#define LNET_IOC_ROUTE_MULTI_HOP	(1U << 1)

/*
 * Forwarding and the router buffer pools (lnetctl set routing, set
 * tiny_buffers|small_buffers|large_buffers, routing show). The pools are
 * tiny (no payload), small (one page) and large (LNET_MTU), in that order.
 *  - LNET_IOC_SET_ROUTING: forwarding on (rtr_enable 1) or off (0); the
 *    rest zero.
 *  - LNET_IOC_SET_BUFFERS: rtr_buffers[] buffers per pool (s32; -1 leaves
 *    a pool alone; no effect while forwarding is off, as in Lustre);
 *    rtr_enable and rtr_pools zero.
 *  - LNET_IOC_GET_ROUTING: out: rtr_enable and rtr_pools; ENOENT when
 *    forwarding never started since LNet came up. In: all zero.
 */
#define LNET_IOC_NRBPOOLS	3

struct lnet_ioc_rtr_pool {
	__u32	rp_npages;
	__u32	rp_nbuffers;
	__u32	rp_credits;			/* s32 */
	__u32	rp_mincredits;			/* s32 */
};

struct lnet_ioc_routing {
	struct lnet_ioc_hdr rtr_hdr;
	__u32	rtr_enable;			/* in: SET_ROUTING; out: GET_ROUTING */
	__u32	rtr_buffers[LNET_IOC_NRBPOOLS];	/* in: SET_BUFFERS (s32) */
	struct lnet_ioc_rtr_pool rtr_pools[LNET_IOC_NRBPOOLS]; /* out: GET_ROUTING */
};

#define LNET_IOC_CONFIGURE	_IOWR(LNET_IOC_MAGIC, 0xc0, struct lnet_ioc_config)
#define LNET_IOC_UNCONFIGURE	_IOWR(LNET_IOC_MAGIC, 0xc1, struct lnet_ioc_config)
#define LNET_IOC_NET_ADD	_IOWR(LNET_IOC_MAGIC, 0xc2, struct lnet_ioc_net_cfg)
#define LNET_IOC_NET_DEL	_IOWR(LNET_IOC_MAGIC, 0xc3, struct lnet_ioc_net_cfg)
#define LNET_IOC_GET_NI		_IOWR(LNET_IOC_MAGIC, 0xc4, struct lnet_ioc_ni)
#define LNET_IOC_SET_NI_HEALTH	_IOWR(LNET_IOC_MAGIC, 0xc5, struct lnet_ioc_health)
#define LNET_IOC_PEER_ADD	_IOWR(LNET_IOC_MAGIC, 0xc6, struct lnet_ioc_peer_cfg)
#define LNET_IOC_PEER_DEL	_IOWR(LNET_IOC_MAGIC, 0xc7, struct lnet_ioc_peer_cfg)
#define LNET_IOC_GET_PEER	_IOWR(LNET_IOC_MAGIC, 0xc8, struct lnet_ioc_peer)
#define LNET_IOC_GET_PEER_NI	_IOWR(LNET_IOC_MAGIC, 0xc9, struct lnet_ioc_peer_ni)
#define LNET_IOC_SET_PEER_NI_HEALTH \
				_IOWR(LNET_IOC_MAGIC, 0xca, struct lnet_ioc_health)
#define LNET_IOC_GET_STATS	_IOWR(LNET_IOC_MAGIC, 0xcb, struct lnet_ioc_stats)
#define LNET_IOC_GET_RECOVERY_QUEUE \
				_IOWR(LNET_IOC_MAGIC, 0xcc, struct lnet_ioc_recovery)
#define LNET_IOC_PING		_IOWR(LNET_IOC_MAGIC, 0xcd, struct lnet_ioc_ping)
#define LNET_IOC_SET_NUMA_RANGE	_IOWR(LNET_IOC_MAGIC, 0xce, struct lnet_ioc_value)
#define LNET_IOC_GET_GLOBALS	_IOWR(LNET_IOC_MAGIC, 0xcf, struct lnet_ioc_globals)
#define LNET_IOC_FAULT_ADD	_IOWR(LNET_IOC_MAGIC, 0xd0, struct lnet_ioc_fault)
#define LNET_IOC_FAULT_DEL	_IOWR(LNET_IOC_MAGIC, 0xd1, struct lnet_ioc_fault)
#define LNET_IOC_FAULT_RESET	_IOWR(LNET_IOC_MAGIC, 0xd2, struct lnet_ioc_fault)
#define LNET_IOC_FAULT_LIST	_IOWR(LNET_IOC_MAGIC, 0xd3, struct lnet_ioc_fault)
#define LNET_IOC_UDSP_ADD	_IOWR(LNET_IOC_MAGIC, 0xd4, struct lnet_ioc_udsp)
#define LNET_IOC_UDSP_DEL	_IOWR(LNET_IOC_MAGIC, 0xd5, struct lnet_ioc_udsp)
#define LNET_IOC_UDSP_GET	_IOWR(LNET_IOC_MAGIC, 0xd6, struct lnet_ioc_udsp)
#define LNET_IOC_DISCOVER	_IOWR(LNET_IOC_MAGIC, 0xd7, struct lnet_ioc_ping)
#define LNET_IOC_ROUTE_ADD	_IOWR(LNET_IOC_MAGIC, 0xd8, struct lnet_ioc_route)
#define LNET_IOC_ROUTE_DEL	_IOWR(LNET_IOC_MAGIC, 0xd9, struct lnet_ioc_route)
#define LNET_IOC_GET_ROUTE	_IOWR(LNET_IOC_MAGIC, 0xda, struct lnet_ioc_route)
#define LNET_IOC_SET_ROUTING	_IOWR(LNET_IOC_MAGIC, 0xdb, struct lnet_ioc_routing)
#define LNET_IOC_SET_BUFFERS	_IOWR(LNET_IOC_MAGIC, 0xdc, struct lnet_ioc_routing)
#define LNET_IOC_GET_ROUTING	_IOWR(LNET_IOC_MAGIC, 0xdd, struct lnet_ioc_routing)

/* Sizes are part of the ABI: a change here is a new LNET_IOC_VERSION. */
#ifdef __cplusplus
#define LNET_IOC_SIZE_CHECK static_assert
#else
#define LNET_IOC_SIZE_CHECK _Static_assert
#endif
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_hdr) == 8, "lnet_ioc_hdr");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_nid) == 20, "lnet_ioc_nid");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_latency) == 32, "lnet_ioc_latency");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_config) == 16, "lnet_ioc_config");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_net_cfg) == 304, "lnet_ioc_net_cfg");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_ni) == 592, "lnet_ioc_ni");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_health) == 40, "lnet_ioc_health");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_peer_cfg) == 680, "lnet_ioc_peer_cfg");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_peer) == 48, "lnet_ioc_peer");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_peer_ni) == 296, "lnet_ioc_peer_ni");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_stats) == 136, "lnet_ioc_stats");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_recovery) == 664, "lnet_ioc_recovery");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_ping_entry) == 24, "lnet_ioc_ping_entry");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_ping) == 856, "lnet_ioc_ping");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_value) == 16, "lnet_ioc_value");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_globals) == 16, "lnet_ioc_globals");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_fault) == 160, "lnet_ioc_fault");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_udsp) == 1560, "lnet_ioc_udsp");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_route) == 48, "lnet_ioc_route");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_rtr_pool) == 16, "lnet_ioc_rtr_pool");
LNET_IOC_SIZE_CHECK(sizeof(struct lnet_ioc_routing) == 72, "lnet_ioc_routing");

#endif /* __UAPI_LNET_RS_IOCTL_H__ */
