//! Rust mirrors of `include/uapi/linux/lnet/lnet-rs-ioctl.h`: the argument
//! structures of the /dev/lnet ioctls, their request codes, and conversions
//! between the ABI's NID form and `lnet_core::nid::Nid`.
//!
//! Field names are the C names, so the two can be compared field by field
//! (the host test `abi_matches_c_header` compiles the header and checks every
//! size and offset below against it).

// The whole header is mirrored, including constants the tool never sends.
#![allow(dead_code)]

use core::mem::size_of;

use lnet_core::nid::{Nid, NidError, NID_WIRE_MAX};
use nix::sys::ioctl::ioctl_num_type;

/// `LNET_IOC_DEV_PATH`.
pub const DEV_PATH: &str = "/dev/lnet";
/// `LNET_IOC_VERSION`.
pub const VERSION: u32 = 1;
/// `LNET_IOC_MAGIC`.
pub const MAGIC: u8 = b'e';
/// `LNET_IOC_NAME_LEN`: interface and net names with their NUL.
pub const NAME_LEN: usize = 16;
/// `LNET_IOC_MAX_INTF`.
pub const MAX_INTF: usize = 16;
/// `LNET_IOC_MAX_CPTS`.
pub const MAX_CPTS: usize = 128;
/// `LNET_IOC_PEER_MAX_NIDS`.
pub const PEER_MAX_NIDS: usize = 32;
/// `LNET_IOC_RECOVERY_PAGE`.
pub const RECOVERY_PAGE: usize = 32;
/// `LNET_IOC_PING_PAGE`.
pub const PING_PAGE: usize = 32;
/// `LNET_IOC_TUNABLE_DEFAULT`.
pub const TUNABLE_DEFAULT: u32 = u32::MAX;
/// `LNET_IOC_PRIORITY_UNSET`.
pub const PRIORITY_UNSET: u32 = u32::MAX;
/// `LNET_IOC_MSG_TYPES`: put, get, reply, ack, hello.
pub const MSG_TYPES: usize = 5;

/// `LNET_IOC_CFG_LOAD_NETWORKS`.
pub const CFG_LOAD_NETWORKS: u32 = 1 << 0;
/// `LNET_IOC_NI_STATUS_DOWN`.
pub const NI_STATUS_DOWN: u32 = 0;
/// `LNET_IOC_NI_STATUS_UP`.
pub const NI_STATUS_UP: u32 = 1;
/// `LNET_IOC_HEALTH_ALL`.
pub const HEALTH_ALL: u32 = 1 << 0;
/// `LNET_IOC_PEER_NON_MR`.
pub const PEER_NON_MR: u32 = 1 << 0;
/// `LNET_IOC_PEER_LOCK_PRIM`.
pub const PEER_LOCK_PRIM: u32 = 1 << 1;
/// `LNET_IOC_PEER_FORCE`.
pub const PEER_FORCE: u32 = 1 << 2;
/// `LNET_IOC_PEER_NI_STATE_NA`.
pub const PEER_NI_STATE_NA: u32 = 0;
/// `LNET_IOC_PEER_NI_STATE_UP`.
pub const PEER_NI_STATE_UP: u32 = 1;
/// `LNET_IOC_PEER_NI_STATE_DOWN`.
pub const PEER_NI_STATE_DOWN: u32 = 2;
/// `LNET_IOC_RECOVERY_LOCAL`.
pub const RECOVERY_LOCAL: u32 = 0;
/// `LNET_IOC_RECOVERY_PEER`.
pub const RECOVERY_PEER: u32 = 1;
/// The ping-buffer status word of an NI that is up (`LNET_NI_STATUS_UP`).
pub const PING_STATUS_UP: u32 = 0x15aa_c0de;
/// The ping-buffer status word of an NI that is down.
pub const PING_STATUS_DOWN: u32 = 0xdead_face;
/// `LNET_IOC_FAULT_DROP`: a drop rule (`lctl net_drop_*`).
pub const FAULT_DROP: u32 = 0;
/// `LNET_IOC_FAULT_DELAY`: a delay rule (`lctl net_delay_*`).
pub const FAULT_DELAY: u32 = 1;
/// `LNET_IOC_FAULT_MSG_ACK`.
pub const FAULT_MSG_ACK: u32 = 1 << 0;
/// `LNET_IOC_FAULT_MSG_PUT`.
pub const FAULT_MSG_PUT: u32 = 1 << 1;
/// `LNET_IOC_FAULT_MSG_GET`.
pub const FAULT_MSG_GET: u32 = 1 << 2;
/// `LNET_IOC_FAULT_MSG_REPLY`.
pub const FAULT_MSG_REPLY: u32 = 1 << 3;
/// `LNET_IOC_FAULT_HEALTH_RANDOM`.
pub const FAULT_HEALTH_RANDOM: u32 = u32::MAX;
/// `LNET_IOC_FAULT_RANDOM`.
pub const FAULT_RANDOM: u32 = 1 << 0;
/// `LNET_IOC_FAULT_DROP_ALL`.
pub const FAULT_DROP_ALL: u32 = 1 << 1;
/// `LNET_IOC_UDSP_BULK_MAX`.
pub const UDSP_BULK_MAX: usize = 1536;
/// `LNET_IOC_UDSP_ACTION_PRIORITY`.
pub const UDSP_ACTION_PRIORITY: u32 = 1;
/// `LNET_IOC_UDSP_ACTION_PREFERRED`.
pub const UDSP_ACTION_PREFERRED: u32 = 2;

/// `struct lnet_ioc_hdr`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LnetIocHdr {
    pub ioc_len: u32,
    pub ioc_version: u32,
}

/// `struct lnet_ioc_nid`: the 20-byte large NID, big-endian fields kept in
/// memory order.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LnetIocNid {
    pub nid_size: u8,
    pub nid_type: u8,
    pub nid_num: u16,
    pub nid_addr: [u32; 4],
}

/// `struct lnet_ioc_latency`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LnetIocLatency {
    pub lat_samples: u64,
    pub lat_min_nsec: u64,
    pub lat_max_nsec: u64,
    pub lat_avg_nsec: u64,
}

/// `struct lnet_ioc_config` (CONFIGURE, UNCONFIGURE).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocConfig {
    pub cfg_hdr: LnetIocHdr,
    pub cfg_flags: u32,
    pub cfg_padding: u32,
}

/// `struct lnet_ioc_net_cfg` (NET_ADD, NET_DEL).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocNetCfg {
    pub nc_hdr: LnetIocHdr,
    pub nc_net: [u8; NAME_LEN],
    pub nc_nintf: u32,
    pub nc_peer_timeout: u32,
    pub nc_peer_credits: u32,
    pub nc_peer_buffer_credits: u32,
    pub nc_credits: u32,
    pub nc_conns_per_peer: u32,
    pub nc_intf: [[u8; NAME_LEN]; MAX_INTF],
}

/// `struct lnet_ioc_ni` (GET_NI).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocNi {
    pub ni_hdr: LnetIocHdr,
    pub ni_idx: u32,
    pub ni_status: u32,
    pub ni_nid: LnetIocNid,
    pub ni_fatal_error: u32,
    pub ni_health_value: u32,
    pub ni_intf: [u8; NAME_LEN],
    pub ni_send_count: u32,
    pub ni_recv_count: u32,
    pub ni_drop_count: u32,
    pub ni_put_egress: LnetIocLatency,
    pub ni_get_rtt: LnetIocLatency,
    pub ni_put_ack: LnetIocLatency,
    pub ni_sent_stats: [u32; MSG_TYPES],
    pub ni_received_stats: [u32; MSG_TYPES],
    pub ni_dropped_stats: [u32; MSG_TYPES],
    pub ni_hs_interrupts: u32,
    pub ni_hs_dropped: u32,
    pub ni_hs_aborted: u32,
    pub ni_hs_no_route: u32,
    pub ni_hs_timeouts: u32,
    pub ni_hs_error: u32,
    pub ni_ping_count: u32,
    pub ni_next_ping: u64,
    pub ni_peer_timeout: u32,
    pub ni_peer_credits: u32,
    pub ni_peer_buffer_credits: u32,
    pub ni_credits: u32,
    pub ni_lnd_peercredits_hiw: u32,
    pub ni_lnd_map_on_demand: u32,
    pub ni_lnd_concurrent_sends: u32,
    pub ni_lnd_fmr_pool_size: u32,
    pub ni_lnd_fmr_flush_trigger: u32,
    pub ni_lnd_fmr_cache: u32,
    pub ni_lnd_ntx: u32,
    pub ni_lnd_conns_per_peer: u32,
    pub ni_lnd_timeout: u32,
    pub ni_lnd_tos: u32,
    pub ni_net_priority: u32,
    pub ni_nid_priority: u32,
    pub ni_dev_cpt: u32,
    pub ni_ncpts: u32,
    pub ni_cpts: [u16; MAX_CPTS],
}

/// `struct lnet_ioc_health` (SET_NI_HEALTH, SET_PEER_NI_HEALTH).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocHealth {
    pub hv_hdr: LnetIocHdr,
    pub hv_nid: LnetIocNid,
    pub hv_flags: u32,
    pub hv_value: u32,
    pub hv_padding: u32,
}

/// `struct lnet_ioc_peer_cfg` (PEER_ADD, PEER_DEL).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocPeerCfg {
    pub pc_hdr: LnetIocHdr,
    pub pc_prim_nid: LnetIocNid,
    pub pc_flags: u32,
    pub pc_nnids: u32,
    pub pc_padding: u32,
    pub pc_nids: [LnetIocNid; PEER_MAX_NIDS],
}

/// `struct lnet_ioc_peer` (GET_PEER).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocPeer {
    pub pr_hdr: LnetIocHdr,
    pub pr_idx: u32,
    pub pr_nnis: u32,
    pub pr_prim_nid: LnetIocNid,
    pub pr_multi_rail: u32,
    pub pr_state: u32,
    pub pr_padding: u32,
}

/// `struct lnet_ioc_peer_ni` (GET_PEER_NI).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocPeerNi {
    pub pn_hdr: LnetIocHdr,
    pub pn_prim_nid: LnetIocNid,
    pub pn_idx: u32,
    pub pn_nid: LnetIocNid,
    pub pn_state: u32,
    pub pn_max_ni_tx_credits: u32,
    pub pn_available_tx_credits: u32,
    pub pn_min_tx_credits: u32,
    pub pn_tx_q_num_of_buf: u32,
    pub pn_available_rtr_credits: u32,
    pub pn_min_rtr_credits: u32,
    pub pn_refcount: u32,
    pub pn_send_count: u32,
    pub pn_recv_count: u32,
    pub pn_drop_count: u32,
    pub pn_put_egress: LnetIocLatency,
    pub pn_get_rtt: LnetIocLatency,
    pub pn_put_ack: LnetIocLatency,
    pub pn_sent_stats: [u32; MSG_TYPES],
    pub pn_received_stats: [u32; MSG_TYPES],
    pub pn_dropped_stats: [u32; MSG_TYPES],
    pub pn_health_value: u32,
    pub pn_hs_dropped: u32,
    pub pn_hs_timeout: u32,
    pub pn_hs_error: u32,
    pub pn_hs_network_timeout: u32,
    pub pn_ping_count: u32,
    pub pn_net_priority: u32,
    pub pn_nid_priority: u32,
    pub pn_padding: u32,
    pub pn_next_ping: u64,
}

/// `struct lnet_ioc_stats` (GET_STATS).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocStats {
    pub st_hdr: LnetIocHdr,
    pub st_msgs_alloc: u32,
    pub st_msgs_max: u32,
    pub st_errors: u32,
    pub st_send_count: u32,
    pub st_recv_count: u32,
    pub st_route_count: u32,
    pub st_drop_count: u32,
    pub st_padding0: u32,
    pub st_send_length: u64,
    pub st_recv_length: u64,
    pub st_route_length: u64,
    pub st_drop_length: u64,
    pub st_rst_alloc: u32,
    pub st_resend_count: u32,
    pub st_response_timeout_count: u32,
    pub st_local_interrupt_count: u32,
    pub st_local_dropped_count: u32,
    pub st_local_aborted_count: u32,
    pub st_local_no_route_count: u32,
    pub st_local_timeout_count: u32,
    pub st_local_error_count: u32,
    pub st_remote_dropped_count: u32,
    pub st_remote_error_count: u32,
    pub st_remote_timeout_count: u32,
    pub st_network_timeout_count: u32,
    pub st_failed_resends: u32,
    pub st_successful_resends: u32,
    pub st_padding1: u32,
}

/// `struct lnet_ioc_recovery` (GET_RECOVERY_QUEUE).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocRecovery {
    pub rq_hdr: LnetIocHdr,
    pub rq_type: u32,
    pub rq_start: u32,
    pub rq_count: u32,
    pub rq_total: u32,
    pub rq_nids: [LnetIocNid; RECOVERY_PAGE],
}

/// `struct lnet_ioc_ping_entry`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocPingEntry {
    pub pe_nid: LnetIocNid,
    pub pe_status: u32,
}

/// `struct lnet_ioc_ping` (PING).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocPing {
    pub pg_hdr: LnetIocHdr,
    pub pg_target: LnetIocNid,
    pub pg_source: LnetIocNid,
    pub pg_timeout_ms: u32,
    pub pg_start: u32,
    pub pg_count: u32,
    pub pg_total: u32,
    pub pg_primary: LnetIocNid,
    pub pg_multi_rail: u32,
    pub pg_entries: [LnetIocPingEntry; PING_PAGE],
}

/// `struct lnet_ioc_value` (SET_NUMA_RANGE).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocValue {
    pub val_hdr: LnetIocHdr,
    pub val_value: u32,
    pub val_padding: u32,
}

/// `struct lnet_ioc_globals` (GET_GLOBALS).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocGlobals {
    pub gl_hdr: LnetIocHdr,
    pub gl_numa_range: u32,
    pub gl_lnd_timeout: u32,
}

/// `struct lnet_ioc_fault` (FAULT_ADD, FAULT_DEL, FAULT_RESET, FAULT_LIST).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocFault {
    pub fr_hdr: LnetIocHdr,
    pub fr_kind: u32,
    pub fr_index: u32,
    pub fr_src: LnetIocNid,
    pub fr_dst: LnetIocNid,
    pub fr_local: LnetIocNid,
    pub fr_msg_mask: u32,
    pub fr_rate: u32,
    pub fr_interval: u32,
    pub fr_latency: u32,
    pub fr_health_mask: u32,
    pub fr_flags: u32,
    pub fr_padding: u32,
    pub fr_ptl_mask: u64,
    pub fr_count: u64,
    pub fr_put: u64,
    pub fr_ack: u64,
    pub fr_get: u64,
    pub fr_reply: u64,
    pub fr_hits: u64,
}

/// `struct lnet_ioc_udsp` (UDSP_ADD, UDSP_DEL, UDSP_GET).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocUdsp {
    pub ud_hdr: LnetIocHdr,
    pub ud_idx: u32,
    pub ud_action_type: u32,
    pub ud_priority: u32,
    pub ud_bulk_len: u32,
    pub ud_bulk: [u8; UDSP_BULK_MAX],
}

/// `struct lnet_ioc_route` (ROUTE_ADD, ROUTE_DEL, GET_ROUTE).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocRoute {
    pub rt_hdr: LnetIocHdr,
    pub rt_idx: u32,
    pub rt_net: u32,
    pub rt_gateway: LnetIocNid,
    pub rt_hops: u32,
    pub rt_priority: u32,
    pub rt_flags: u32,
}

/// `LNET_IOC_NRBPOOLS`: tiny, small and large router buffers.
pub const NRBPOOLS: usize = 3;

/// `struct lnet_ioc_rtr_pool`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LnetIocRtrPool {
    pub rp_npages: u32,
    pub rp_nbuffers: u32,
    pub rp_credits: u32,
    pub rp_mincredits: u32,
}

/// `struct lnet_ioc_routing` (SET_ROUTING, SET_BUFFERS, GET_ROUTING).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LnetIocRouting {
    pub rtr_hdr: LnetIocHdr,
    pub rtr_enable: u32,
    pub rtr_buffers: [u32; NRBPOOLS],
    pub rtr_pools: [LnetIocRtrPool; NRBPOOLS],
}

/// `LNET_IOC_NET_ANY`.
pub const NET_ANY: u32 = u32::MAX;
/// `LNET_IOC_ROUTE_HOPS_UNDEFINED`.
pub const ROUTE_HOPS_UNDEFINED: u32 = u32::MAX;
/// `LNET_IOC_ROUTE_ALIVE`.
pub const ROUTE_ALIVE: u32 = 1 << 0;
/// `LNET_IOC_ROUTE_MULTI_HOP`.
pub const ROUTE_MULTI_HOP: u32 = 1 << 1;

// The header's _Static_asserts, on the Rust side.
const _: () = assert!(size_of::<LnetIocHdr>() == 8);
const _: () = assert!(size_of::<LnetIocNid>() == 20);
const _: () = assert!(size_of::<LnetIocLatency>() == 32);
const _: () = assert!(size_of::<LnetIocConfig>() == 16);
const _: () = assert!(size_of::<LnetIocNetCfg>() == 304);
const _: () = assert!(size_of::<LnetIocNi>() == 592);
const _: () = assert!(size_of::<LnetIocHealth>() == 40);
const _: () = assert!(size_of::<LnetIocPeerCfg>() == 680);
const _: () = assert!(size_of::<LnetIocPeer>() == 48);
const _: () = assert!(size_of::<LnetIocPeerNi>() == 296);
const _: () = assert!(size_of::<LnetIocStats>() == 136);
const _: () = assert!(size_of::<LnetIocRecovery>() == 664);
const _: () = assert!(size_of::<LnetIocPingEntry>() == 24);
const _: () = assert!(size_of::<LnetIocPing>() == 856);
const _: () = assert!(size_of::<LnetIocValue>() == 16);
const _: () = assert!(size_of::<LnetIocGlobals>() == 16);
const _: () = assert!(size_of::<LnetIocFault>() == 160);
const _: () = assert!(size_of::<LnetIocUdsp>() == 1560);
const _: () = assert!(size_of::<LnetIocRoute>() == 48);
const _: () = assert!(size_of::<LnetIocRtrPool>() == 16);
const _: () = assert!(size_of::<LnetIocRouting>() == 72);
// The NID mirror is exactly the wire form's largest size.
const _: () = assert!(size_of::<LnetIocNid>() == NID_WIRE_MAX);

/// An ioctl argument: a plain-old-data `repr(C)` structure that starts with
/// `LnetIocHdr`.
///
/// # Safety
///
/// Implementors must be `repr(C)`, made only of integers and arrays or
/// structures of integers (so every bit pattern, all-zero included, is a
/// valid value), and have `LnetIocHdr` as their first field.
pub unsafe trait IocArg: Copy {
    /// An all-zero argument with its header filled in.
    fn new() -> Self {
        // SAFETY: implementors are repr(C) structs of integers and arrays or structs of integers
        // (IocArg's # Safety), so all-zero bytes are a valid `Self`.
        let mut a: Self = unsafe { core::mem::zeroed() };
        *a.hdr_mut() = LnetIocHdr {
            ioc_len: size_of::<Self>() as u32,
            ioc_version: VERSION,
        };
        a
    }

    /// The leading header.
    fn hdr(&self) -> &LnetIocHdr;

    /// The leading header, mutably.
    fn hdr_mut(&mut self) -> &mut LnetIocHdr;

    /// Whether the header is the one `new` writes (what the kernel checks).
    fn hdr_ok(&self) -> bool {
        *self.hdr()
            == LnetIocHdr {
                ioc_len: size_of::<Self>() as u32,
                ioc_version: VERSION,
            }
    }
}

macro_rules! ioc_arg {
    ($t:ty, $hdr:ident) => {
        // SAFETY: repr(C), integers only, header first (see the struct).
        unsafe impl IocArg for $t {
            fn hdr(&self) -> &LnetIocHdr {
                &self.$hdr
            }
            fn hdr_mut(&mut self) -> &mut LnetIocHdr {
                &mut self.$hdr
            }
        }
    };
}

ioc_arg!(LnetIocConfig, cfg_hdr);
ioc_arg!(LnetIocNetCfg, nc_hdr);
ioc_arg!(LnetIocNi, ni_hdr);
ioc_arg!(LnetIocHealth, hv_hdr);
ioc_arg!(LnetIocPeerCfg, pc_hdr);
ioc_arg!(LnetIocPeer, pr_hdr);
ioc_arg!(LnetIocPeerNi, pn_hdr);
ioc_arg!(LnetIocStats, st_hdr);
ioc_arg!(LnetIocRecovery, rq_hdr);
ioc_arg!(LnetIocPing, pg_hdr);
ioc_arg!(LnetIocValue, val_hdr);
ioc_arg!(LnetIocGlobals, gl_hdr);
ioc_arg!(LnetIocFault, fr_hdr);
ioc_arg!(LnetIocUdsp, ud_hdr);
ioc_arg!(LnetIocRoute, rt_hdr);
ioc_arg!(LnetIocRouting, rtr_hdr);

/// The ioctl commands, by their number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    Configure = 0xc0,
    Unconfigure = 0xc1,
    NetAdd = 0xc2,
    NetDel = 0xc3,
    GetNi = 0xc4,
    SetNiHealth = 0xc5,
    PeerAdd = 0xc6,
    PeerDel = 0xc7,
    GetPeer = 0xc8,
    GetPeerNi = 0xc9,
    SetPeerNiHealth = 0xca,
    GetStats = 0xcb,
    GetRecoveryQueue = 0xcc,
    Ping = 0xcd,
    SetNumaRange = 0xce,
    GetGlobals = 0xcf,
    FaultAdd = 0xd0,
    FaultDel = 0xd1,
    FaultReset = 0xd2,
    FaultList = 0xd3,
    UdspAdd = 0xd4,
    UdspDel = 0xd5,
    UdspGet = 0xd6,
    Discover = 0xd7,
    RouteAdd = 0xd8,
    RouteDel = 0xd9,
    GetRoute = 0xda,
    SetRouting = 0xdb,
    SetBuffers = 0xdc,
    GetRouting = 0xdd,
}

impl Cmd {
    /// Every command, in number order.
    pub const ALL: [Cmd; 30] = [
        Cmd::Configure,
        Cmd::Unconfigure,
        Cmd::NetAdd,
        Cmd::NetDel,
        Cmd::GetNi,
        Cmd::SetNiHealth,
        Cmd::PeerAdd,
        Cmd::PeerDel,
        Cmd::GetPeer,
        Cmd::GetPeerNi,
        Cmd::SetPeerNiHealth,
        Cmd::GetStats,
        Cmd::GetRecoveryQueue,
        Cmd::Ping,
        Cmd::SetNumaRange,
        Cmd::GetGlobals,
        Cmd::FaultAdd,
        Cmd::FaultDel,
        Cmd::FaultReset,
        Cmd::FaultList,
        Cmd::UdspAdd,
        Cmd::UdspDel,
        Cmd::UdspGet,
        Cmd::Discover,
        Cmd::RouteAdd,
        Cmd::RouteDel,
        Cmd::GetRoute,
        Cmd::SetRouting,
        Cmd::SetBuffers,
        Cmd::GetRouting,
    ];

    /// The command number (`_IOC_NR`).
    pub const fn nr(self) -> u8 {
        self as u8
    }

    /// The C macro name.
    pub const fn name(self) -> &'static str {
        match self {
            Cmd::Configure => "LNET_IOC_CONFIGURE",
            Cmd::Unconfigure => "LNET_IOC_UNCONFIGURE",
            Cmd::NetAdd => "LNET_IOC_NET_ADD",
            Cmd::NetDel => "LNET_IOC_NET_DEL",
            Cmd::GetNi => "LNET_IOC_GET_NI",
            Cmd::SetNiHealth => "LNET_IOC_SET_NI_HEALTH",
            Cmd::PeerAdd => "LNET_IOC_PEER_ADD",
            Cmd::PeerDel => "LNET_IOC_PEER_DEL",
            Cmd::GetPeer => "LNET_IOC_GET_PEER",
            Cmd::GetPeerNi => "LNET_IOC_GET_PEER_NI",
            Cmd::SetPeerNiHealth => "LNET_IOC_SET_PEER_NI_HEALTH",
            Cmd::GetStats => "LNET_IOC_GET_STATS",
            Cmd::GetRecoveryQueue => "LNET_IOC_GET_RECOVERY_QUEUE",
            Cmd::Ping => "LNET_IOC_PING",
            Cmd::Discover => "LNET_IOC_DISCOVER",
            Cmd::SetNumaRange => "LNET_IOC_SET_NUMA_RANGE",
            Cmd::GetGlobals => "LNET_IOC_GET_GLOBALS",
            Cmd::FaultAdd => "LNET_IOC_FAULT_ADD",
            Cmd::FaultDel => "LNET_IOC_FAULT_DEL",
            Cmd::FaultReset => "LNET_IOC_FAULT_RESET",
            Cmd::FaultList => "LNET_IOC_FAULT_LIST",
            Cmd::UdspAdd => "LNET_IOC_UDSP_ADD",
            Cmd::UdspDel => "LNET_IOC_UDSP_DEL",
            Cmd::UdspGet => "LNET_IOC_UDSP_GET",
            Cmd::RouteAdd => "LNET_IOC_ROUTE_ADD",
            Cmd::RouteDel => "LNET_IOC_ROUTE_DEL",
            Cmd::GetRoute => "LNET_IOC_GET_ROUTE",
            Cmd::SetRouting => "LNET_IOC_SET_ROUTING",
            Cmd::SetBuffers => "LNET_IOC_SET_BUFFERS",
            Cmd::GetRouting => "LNET_IOC_GET_ROUTING",
        }
    }

    /// The size of the command's argument (`_IOC_SIZE`).
    pub const fn arg_size(self) -> usize {
        match self {
            Cmd::Configure | Cmd::Unconfigure => size_of::<LnetIocConfig>(),
            Cmd::NetAdd | Cmd::NetDel => size_of::<LnetIocNetCfg>(),
            Cmd::GetNi => size_of::<LnetIocNi>(),
            Cmd::SetNiHealth | Cmd::SetPeerNiHealth => size_of::<LnetIocHealth>(),
            Cmd::PeerAdd | Cmd::PeerDel => size_of::<LnetIocPeerCfg>(),
            Cmd::GetPeer => size_of::<LnetIocPeer>(),
            Cmd::GetPeerNi => size_of::<LnetIocPeerNi>(),
            Cmd::GetStats => size_of::<LnetIocStats>(),
            Cmd::GetRecoveryQueue => size_of::<LnetIocRecovery>(),
            Cmd::Ping | Cmd::Discover => size_of::<LnetIocPing>(),
            Cmd::SetNumaRange => size_of::<LnetIocValue>(),
            Cmd::GetGlobals => size_of::<LnetIocGlobals>(),
            Cmd::FaultAdd | Cmd::FaultDel | Cmd::FaultReset | Cmd::FaultList => {
                size_of::<LnetIocFault>()
            }
            Cmd::UdspAdd | Cmd::UdspDel | Cmd::UdspGet => size_of::<LnetIocUdsp>(),
            Cmd::RouteAdd | Cmd::RouteDel | Cmd::GetRoute => size_of::<LnetIocRoute>(),
            Cmd::SetRouting | Cmd::SetBuffers | Cmd::GetRouting => size_of::<LnetIocRouting>(),
        }
    }

    /// The request code, `_IOWR(LNET_IOC_MAGIC, nr, struct ...)`, in this
    /// architecture's encoding.
    pub fn request(self) -> ioctl_num_type {
        nix::request_code_readwrite!(MAGIC, self.nr(), self.arg_size())
    }

    /// The request code as the unsigned number C prints (`ioctl_num_type`
    /// is `c_ulong` on glibc, `c_int` on musl).
    #[allow(clippy::unnecessary_cast)]
    pub fn request_u64(self) -> u64 {
        self.request() as u64 & 0xffff_ffff
    }
}

impl LnetIocNid {
    /// `LNET_ANY_NID`.
    pub fn any() -> LnetIocNid {
        LnetIocNid::from_nid(&Nid::ANY)
    }

    /// The ABI form of `nid`.
    pub fn from_nid(nid: &Nid) -> LnetIocNid {
        let mut b = [0u8; NID_WIRE_MAX];
        // A NID's wire form is at most NID_WIRE_MAX bytes.
        let _ = nid.encode(&mut b);
        LnetIocNid::from_bytes(&b)
    }

    /// From the 20 bytes as they lie in memory.
    pub fn from_bytes(b: &[u8; NID_WIRE_MAX]) -> LnetIocNid {
        let word = |i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        LnetIocNid {
            nid_size: b[0],
            nid_type: b[1],
            nid_num: u16::from_ne_bytes([b[2], b[3]]),
            nid_addr: [word(4), word(8), word(12), word(16)],
        }
    }

    /// The 20 bytes as they lie in memory.
    pub fn to_bytes(self) -> [u8; NID_WIRE_MAX] {
        let mut b = [0u8; NID_WIRE_MAX];
        b[0] = self.nid_size;
        b[1] = self.nid_type;
        b[2..4].copy_from_slice(&self.nid_num.to_ne_bytes());
        for (i, w) in self.nid_addr.iter().enumerate() {
            b[4 + 4 * i..8 + 4 * i].copy_from_slice(&w.to_ne_bytes());
        }
        b
    }

    /// The NID, if the bytes are a valid one.
    pub fn to_nid(self) -> Result<Nid, NidError> {
        Nid::decode(&self.to_bytes()).map(|(nid, _)| nid)
    }

    /// The NID's text form (`<bad nid>` if the kernel sent garbage).
    pub fn text(self) -> String {
        match self.to_nid() {
            Ok(nid) => nid.to_string(),
            Err(_) => String::from("<bad nid>"),
        }
    }
}

/// Copies `s` into a NUL-terminated fixed array; `None` if it does not fit
/// or contains a NUL.
pub fn put_str<const N: usize>(dst: &mut [u8; N], s: &str) -> Option<()> {
    let b = s.as_bytes();
    if b.len() >= N || b.contains(&0) {
        return None;
    }
    dst.fill(0);
    dst[..b.len()].copy_from_slice(b);
    Some(())
}

/// The string in a NUL-terminated fixed array (lossy for non-UTF-8).
pub fn get_str(src: &[u8]) -> String {
    let end = src.iter().position(|&c| c == 0).unwrap_or(src.len());
    String::from_utf8_lossy(&src[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::offset_of;
    use lnet_core::nid::Net;
    use std::fmt::Write as _;
    use std::net::Ipv6Addr;
    use std::process::Command;

    #[test]
    fn struct_sizes_match_header_asserts() {
        let sizes = [
            ("lnet_ioc_hdr", size_of::<LnetIocHdr>(), 8),
            ("lnet_ioc_nid", size_of::<LnetIocNid>(), 20),
            ("lnet_ioc_latency", size_of::<LnetIocLatency>(), 32),
            ("lnet_ioc_config", size_of::<LnetIocConfig>(), 16),
            ("lnet_ioc_net_cfg", size_of::<LnetIocNetCfg>(), 304),
            ("lnet_ioc_ni", size_of::<LnetIocNi>(), 592),
            ("lnet_ioc_health", size_of::<LnetIocHealth>(), 40),
            ("lnet_ioc_peer_cfg", size_of::<LnetIocPeerCfg>(), 680),
            ("lnet_ioc_peer", size_of::<LnetIocPeer>(), 48),
            ("lnet_ioc_peer_ni", size_of::<LnetIocPeerNi>(), 296),
            ("lnet_ioc_stats", size_of::<LnetIocStats>(), 136),
            ("lnet_ioc_recovery", size_of::<LnetIocRecovery>(), 664),
            ("lnet_ioc_ping_entry", size_of::<LnetIocPingEntry>(), 24),
            ("lnet_ioc_ping", size_of::<LnetIocPing>(), 856),
            ("lnet_ioc_value", size_of::<LnetIocValue>(), 16),
            ("lnet_ioc_globals", size_of::<LnetIocGlobals>(), 16),
            ("lnet_ioc_fault", size_of::<LnetIocFault>(), 160),
            ("lnet_ioc_udsp", size_of::<LnetIocUdsp>(), 1560),
            ("lnet_ioc_route", size_of::<LnetIocRoute>(), 48),
            ("lnet_ioc_rtr_pool", size_of::<LnetIocRtrPool>(), 16),
            ("lnet_ioc_routing", size_of::<LnetIocRouting>(), 72),
        ];
        for (name, got, want) in sizes {
            assert_eq!(got, want, "{name}");
            // Every argument is a multiple of 8 so arrays of them and 64-bit
            // fields never need compiler padding.
            if name != "lnet_ioc_nid"
                && name != "lnet_ioc_ping_entry"
                && name != "lnet_ioc_rtr_pool"
            {
                assert_eq!(got % 8, 0, "{name}");
            }
        }
    }

    #[test]
    fn new_fills_the_header() {
        let a = LnetIocNi::new();
        assert_eq!(a.ni_hdr.ioc_len, 592);
        assert_eq!(a.ni_hdr.ioc_version, VERSION);
        assert!(a.hdr_ok());
        let mut b = LnetIocPing::new();
        b.pg_hdr.ioc_version = 2;
        assert!(!b.hdr_ok());
    }

    #[test]
    fn request_codes_encode_magic_number_and_size() {
        for cmd in Cmd::ALL {
            let r = cmd.request_u64();
            assert_eq!((r & 0xff) as u8, cmd.nr(), "{cmd:?}");
            assert_eq!(((r >> 8) & 0xff) as u8, MAGIC, "{cmd:?}");
        }
        // x86_64 and arm64 use the generic encoding: dir 3, 14 size bits.
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        assert_eq!(Cmd::Ping.request_u64(), 0xc358_65cd);
    }

    #[test]
    fn nid_round_trips_through_the_abi_form() {
        let cases = [
            Nid::parse("192.168.1.2@tcp").unwrap(),
            Nid::parse("10.0.0.1@o2ib3").unwrap(),
            Nid::LO,
            Nid::ANY,
            Nid::new6(
                Net::parse("tcp1").unwrap(),
                "2001:db8::1".parse::<Ipv6Addr>().unwrap(),
            ),
        ];
        for nid in cases {
            let a = LnetIocNid::from_nid(&nid);
            assert_eq!(a.to_nid().unwrap(), nid);
        }
        // Memory layout is the wire form: size, type, BE net number, BE address.
        let a = LnetIocNid::from_nid(&Nid::parse("192.168.1.2@tcp7").unwrap());
        assert_eq!(
            a.to_bytes(),
            [0, 2, 0, 7, 192, 168, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(a.text(), "192.168.1.2@tcp7");
        let any = LnetIocNid::any();
        assert_eq!(any.nid_type, 0xff);
    }

    #[test]
    fn fixed_strings() {
        let mut a = [0u8; NAME_LEN];
        assert!(put_str(&mut a, "eth0").is_some());
        assert_eq!(get_str(&a), "eth0");
        assert!(put_str(&mut a, "0123456789abcdef").is_none());
        assert!(put_str(&mut a, "0123456789abcde").is_some());
        assert_eq!(get_str(&a), "0123456789abcde");
    }

    /// (C struct, C field, Rust offset, Rust field size) for every field.
    fn layout() -> Vec<(&'static str, &'static str, usize, usize)> {
        macro_rules! fields {
            ($v:ident, $t:ty, $c:literal, [$($f:ident),* $(,)?]) => {
                $(
                    $v.push(($c, stringify!($f), offset_of!($t, $f), {
                        let x = <$t as IocArgOrZero>::zero();
                        core::mem::size_of_val(&x.$f)
                    }));
                )*
            };
        }
        let mut v = Vec::new();
        fields!(v, LnetIocHdr, "lnet_ioc_hdr", [ioc_len, ioc_version]);
        fields!(
            v,
            LnetIocNid,
            "lnet_ioc_nid",
            [nid_size, nid_type, nid_num, nid_addr]
        );
        fields!(
            v,
            LnetIocLatency,
            "lnet_ioc_latency",
            [lat_samples, lat_min_nsec, lat_max_nsec, lat_avg_nsec]
        );
        fields!(
            v,
            LnetIocConfig,
            "lnet_ioc_config",
            [cfg_hdr, cfg_flags, cfg_padding]
        );
        fields!(
            v,
            LnetIocNetCfg,
            "lnet_ioc_net_cfg",
            [
                nc_hdr,
                nc_net,
                nc_nintf,
                nc_peer_timeout,
                nc_peer_credits,
                nc_peer_buffer_credits,
                nc_credits,
                nc_conns_per_peer,
                nc_intf
            ]
        );
        fields!(
            v,
            LnetIocNi,
            "lnet_ioc_ni",
            [
                ni_hdr,
                ni_idx,
                ni_status,
                ni_nid,
                ni_fatal_error,
                ni_health_value,
                ni_intf,
                ni_send_count,
                ni_recv_count,
                ni_drop_count,
                ni_put_egress,
                ni_get_rtt,
                ni_put_ack,
                ni_sent_stats,
                ni_received_stats,
                ni_dropped_stats,
                ni_hs_interrupts,
                ni_hs_dropped,
                ni_hs_aborted,
                ni_hs_no_route,
                ni_hs_timeouts,
                ni_hs_error,
                ni_ping_count,
                ni_next_ping,
                ni_peer_timeout,
                ni_peer_credits,
                ni_peer_buffer_credits,
                ni_credits,
                ni_lnd_peercredits_hiw,
                ni_lnd_map_on_demand,
                ni_lnd_concurrent_sends,
                ni_lnd_fmr_pool_size,
                ni_lnd_fmr_flush_trigger,
                ni_lnd_fmr_cache,
                ni_lnd_ntx,
                ni_lnd_conns_per_peer,
                ni_lnd_timeout,
                ni_lnd_tos,
                ni_net_priority,
                ni_nid_priority,
                ni_dev_cpt,
                ni_ncpts,
                ni_cpts
            ]
        );
        fields!(
            v,
            LnetIocHealth,
            "lnet_ioc_health",
            [hv_hdr, hv_nid, hv_flags, hv_value, hv_padding]
        );
        fields!(
            v,
            LnetIocPeerCfg,
            "lnet_ioc_peer_cfg",
            [pc_hdr, pc_prim_nid, pc_flags, pc_nnids, pc_padding, pc_nids]
        );
        fields!(
            v,
            LnetIocPeer,
            "lnet_ioc_peer",
            [
                pr_hdr,
                pr_idx,
                pr_nnis,
                pr_prim_nid,
                pr_multi_rail,
                pr_state,
                pr_padding
            ]
        );
        fields!(
            v,
            LnetIocPeerNi,
            "lnet_ioc_peer_ni",
            [
                pn_hdr,
                pn_prim_nid,
                pn_idx,
                pn_nid,
                pn_state,
                pn_max_ni_tx_credits,
                pn_available_tx_credits,
                pn_min_tx_credits,
                pn_tx_q_num_of_buf,
                pn_available_rtr_credits,
                pn_min_rtr_credits,
                pn_refcount,
                pn_send_count,
                pn_recv_count,
                pn_drop_count,
                pn_put_egress,
                pn_get_rtt,
                pn_put_ack,
                pn_sent_stats,
                pn_received_stats,
                pn_dropped_stats,
                pn_health_value,
                pn_hs_dropped,
                pn_hs_timeout,
                pn_hs_error,
                pn_hs_network_timeout,
                pn_ping_count,
                pn_net_priority,
                pn_nid_priority,
                pn_padding,
                pn_next_ping
            ]
        );
        fields!(
            v,
            LnetIocStats,
            "lnet_ioc_stats",
            [
                st_hdr,
                st_msgs_alloc,
                st_msgs_max,
                st_errors,
                st_send_count,
                st_recv_count,
                st_route_count,
                st_drop_count,
                st_padding0,
                st_send_length,
                st_recv_length,
                st_route_length,
                st_drop_length,
                st_rst_alloc,
                st_resend_count,
                st_response_timeout_count,
                st_local_interrupt_count,
                st_local_dropped_count,
                st_local_aborted_count,
                st_local_no_route_count,
                st_local_timeout_count,
                st_local_error_count,
                st_remote_dropped_count,
                st_remote_error_count,
                st_remote_timeout_count,
                st_network_timeout_count,
                st_failed_resends,
                st_successful_resends,
                st_padding1
            ]
        );
        fields!(
            v,
            LnetIocRecovery,
            "lnet_ioc_recovery",
            [rq_hdr, rq_type, rq_start, rq_count, rq_total, rq_nids]
        );
        fields!(
            v,
            LnetIocPingEntry,
            "lnet_ioc_ping_entry",
            [pe_nid, pe_status]
        );
        fields!(
            v,
            LnetIocPing,
            "lnet_ioc_ping",
            [
                pg_hdr,
                pg_target,
                pg_source,
                pg_timeout_ms,
                pg_start,
                pg_count,
                pg_total,
                pg_primary,
                pg_multi_rail,
                pg_entries
            ]
        );
        fields!(
            v,
            LnetIocValue,
            "lnet_ioc_value",
            [val_hdr, val_value, val_padding]
        );
        fields!(
            v,
            LnetIocGlobals,
            "lnet_ioc_globals",
            [gl_hdr, gl_numa_range, gl_lnd_timeout]
        );
        fields!(
            v,
            LnetIocFault,
            "lnet_ioc_fault",
            [
                fr_hdr,
                fr_kind,
                fr_index,
                fr_src,
                fr_dst,
                fr_local,
                fr_msg_mask,
                fr_rate,
                fr_interval,
                fr_latency,
                fr_health_mask,
                fr_flags,
                fr_padding,
                fr_ptl_mask,
                fr_count,
                fr_put,
                fr_ack,
                fr_get,
                fr_reply,
                fr_hits
            ]
        );
        fields!(
            v,
            LnetIocUdsp,
            "lnet_ioc_udsp",
            [
                ud_hdr,
                ud_idx,
                ud_action_type,
                ud_priority,
                ud_bulk_len,
                ud_bulk
            ]
        );
        fields!(
            v,
            LnetIocRoute,
            "lnet_ioc_route",
            [
                rt_hdr,
                rt_idx,
                rt_net,
                rt_gateway,
                rt_hops,
                rt_priority,
                rt_flags
            ]
        );
        fields!(
            v,
            LnetIocRtrPool,
            "lnet_ioc_rtr_pool",
            [rp_npages, rp_nbuffers, rp_credits, rp_mincredits]
        );
        fields!(
            v,
            LnetIocRouting,
            "lnet_ioc_routing",
            [rtr_hdr, rtr_enable, rtr_buffers, rtr_pools]
        );
        v
    }

    /// An all-zero value of any mirror, headers included (test only).
    trait IocArgOrZero: Copy {
        fn zero() -> Self {
            // SAFETY: every mirror is integers only; all-zero is valid.
            unsafe { core::mem::zeroed() }
        }
    }
    impl<T: Copy> IocArgOrZero for T {}

    #[test]
    fn layout_has_no_holes() {
        // Fields of each struct tile it exactly: explicit padding only.
        let v = layout();
        let mut by_struct: Vec<(&str, Vec<(usize, usize)>)> = Vec::new();
        for (s, _, off, len) in v {
            match by_struct.iter_mut().find(|(n, _)| *n == s) {
                Some((_, f)) => f.push((off, len)),
                None => by_struct.push((s, vec![(off, len)])),
            }
        }
        let total = |s: &str| match s {
            "lnet_ioc_hdr" => 8,
            "lnet_ioc_nid" => 20,
            "lnet_ioc_latency" => 32,
            "lnet_ioc_config" => 16,
            "lnet_ioc_net_cfg" => 304,
            "lnet_ioc_ni" => 592,
            "lnet_ioc_health" => 40,
            "lnet_ioc_peer_cfg" => 680,
            "lnet_ioc_peer" => 48,
            "lnet_ioc_peer_ni" => 296,
            "lnet_ioc_stats" => 136,
            "lnet_ioc_recovery" => 664,
            "lnet_ioc_ping_entry" => 24,
            "lnet_ioc_ping" => 856,
            "lnet_ioc_value" => 16,
            "lnet_ioc_globals" => 16,
            "lnet_ioc_fault" => 160,
            "lnet_ioc_udsp" => 1560,
            "lnet_ioc_route" => 48,
            "lnet_ioc_rtr_pool" => 16,
            "lnet_ioc_routing" => 72,
            _ => unreachable!(),
        };
        for (s, fields) in by_struct {
            let mut at = 0;
            for (off, len) in fields {
                assert_eq!(off, at, "{s}: hole before offset {off}");
                at = off + len;
            }
            assert_eq!(at, total(s), "{s}: tail padding");
        }
    }

    /// Compiles the C header with the host compiler and checks every size,
    /// offset and request code against the Rust mirrors. $CC, else the
    /// clang-19 scripts/setup.sh installs, else cc; no compiler is a failure.
    #[test]
    fn abi_matches_c_header() {
        let cc = std::env::var("CC")
            .ok()
            .into_iter()
            .chain(["clang-19".to_string(), "cc".to_string()])
            .find(|c| Command::new(c).arg("--version").output().is_ok())
            .expect("no C compiler: set CC or run scripts/setup.sh");
        let header = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../include/uapi/linux/lnet/lnet-rs-ioctl.h"
        );
        let mut prog = format!(
            "#include <stdio.h>\n#include <stddef.h>\n#include \"{header}\"\nint main(void) {{\n"
        );
        let v = layout();
        for (s, f, _, _) in &v {
            let _ = writeln!(
                prog,
                "printf(\"%zu %zu\\n\", offsetof(struct {s}, {f}), sizeof(((struct {s} *)0)->{f}));"
            );
        }
        for cmd in Cmd::ALL {
            let _ = writeln!(
                prog,
                "printf(\"%lu\\n\", (unsigned long)(unsigned int){});",
                cmd.name()
            );
        }
        let _ = writeln!(
            prog,
            "printf(\"%d %d %d\\n\", LNET_IOC_VERSION, LNET_IOC_MAGIC, LNET_IOC_NAME_LEN);"
        );
        let fault_consts = [
            ("LNET_IOC_FAULT_DROP", FAULT_DROP),
            ("LNET_IOC_FAULT_DELAY", FAULT_DELAY),
            ("LNET_IOC_FAULT_MSG_ACK", FAULT_MSG_ACK),
            ("LNET_IOC_FAULT_MSG_PUT", FAULT_MSG_PUT),
            ("LNET_IOC_FAULT_MSG_GET", FAULT_MSG_GET),
            ("LNET_IOC_FAULT_MSG_REPLY", FAULT_MSG_REPLY),
            ("LNET_IOC_FAULT_HEALTH_RANDOM", FAULT_HEALTH_RANDOM),
            ("LNET_IOC_FAULT_RANDOM", FAULT_RANDOM),
            ("LNET_IOC_FAULT_DROP_ALL", FAULT_DROP_ALL),
            ("LNET_IOC_UDSP_ACTION_PRIORITY", UDSP_ACTION_PRIORITY),
            ("LNET_IOC_UDSP_ACTION_PREFERRED", UDSP_ACTION_PREFERRED),
            ("LNET_IOC_UDSP_BULK_MAX", UDSP_BULK_MAX as u32),
        ];
        for (name, _) in fault_consts {
            let _ = writeln!(prog, "printf(\"%u\\n\", (unsigned int)({name}));");
        }
        let _ = writeln!(prog, "return 0;\n}}");
        let dir = std::env::temp_dir().join(format!("lnetctl-abi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("abi.c");
        let exe = dir.join("abi");
        std::fs::write(&src, prog).unwrap();
        let out = Command::new(&cc)
            .args(["-std=c11", "-Wall", "-Werror", "-Wpadded", "-o"])
            .arg(&exe)
            .arg(&src)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(&exe).output().unwrap();
        let text = String::from_utf8(run.stdout).unwrap();
        let mut lines = text.lines();
        for (s, f, off, len) in &v {
            let line = lines.next().unwrap();
            assert_eq!(line, format!("{off} {len}"), "struct {s}.{f}");
        }
        for cmd in Cmd::ALL {
            let line = lines.next().unwrap();
            assert_eq!(line, cmd.request_u64().to_string(), "{}", cmd.name());
        }
        assert_eq!(
            lines.next().unwrap(),
            format!("{VERSION} {MAGIC} {NAME_LEN}")
        );
        for (name, value) in fault_consts {
            assert_eq!(lines.next().unwrap(), value.to_string(), "{name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
