//! The YAML documents lnetctl prints, as ordered serde structures: key
//! names, order, nesting and verbosity levels are those of lnetctl.md §2-3
//! (and health.md §6 for the counters). `None` fields are not printed.

use lnet_core::nid::{lnd, Nid};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::abi::{self, LnetIocLatency, LnetIocNi, LnetIocPeer, LnetIocPeerNi, LnetIocStats};

/// `net show`.
#[derive(Serialize, Debug)]
pub struct NetShow {
    pub net: Vec<NetEntry>,
}

#[derive(Serialize, Debug)]
pub struct NetEntry {
    #[serde(rename = "net type")]
    pub net_type: String,
    #[serde(rename = "local NI(s)")]
    pub local_nis: Vec<NiEntry>,
}

/// One local NI (lnetctl.md §2.1).
#[derive(Serialize, Debug, Default)]
pub struct NiEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "indexed_names"
    )]
    pub interfaces: Option<Vec<String>>,
    /// v1
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statistics: Option<Statistics>,
    /// v4
    #[serde(rename = "udsp info", skip_serializing_if = "Option::is_none")]
    pub udsp_info: Option<UdspInfo>,
    /// v2
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_stats: Option<MsgCounts>,
    /// v2
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received_stats: Option<MsgCounts>,
    /// v2
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_stats: Option<MsgCounts>,
    /// v2
    #[serde(rename = "health stats", skip_serializing_if = "Option::is_none")]
    pub health_stats: Option<NiHealthStats>,
    /// v1
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tunables: Option<Tunables>,
    /// v1, socklnd and o2iblnd only
    #[serde(rename = "lnd tunables", skip_serializing_if = "Option::is_none")]
    pub lnd_tunables: Option<LndTunables>,
    /// v1
    #[serde(rename = "dev cpt", skip_serializing_if = "Option::is_none")]
    pub dev_cpt: Option<i32>,
    /// v1, when the NI has CPTs
    #[serde(rename = "CPT", skip_serializing_if = "Option::is_none")]
    pub cpt: Option<String>,
}

/// `interfaces:` is a mapping from the index to the name (`0: eth0`).
fn indexed_names<S: Serializer>(v: &Option<Vec<String>>, s: S) -> Result<S::Ok, S::Error> {
    let names = v.as_deref().unwrap_or(&[]);
    let mut m = s.serialize_map(Some(names.len()))?;
    for (i, n) in names.iter().enumerate() {
        m.serialize_entry(&i, n)?;
    }
    m.end()
}

/// `statistics:` of an NI or peer NI.
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct Statistics {
    pub send_count: u32,
    pub recv_count: u32,
    pub drop_count: u32,
    pub put_egress_samples: u64,
    pub put_egress_min_nsec: u64,
    pub put_egress_max_nsec: u64,
    pub put_egress_avg_nsec: u64,
    pub get_rtt_samples: u64,
    pub get_rtt_min_nsec: u64,
    pub get_rtt_max_nsec: u64,
    pub get_rtt_avg_nsec: u64,
    pub put_ack_samples: u64,
    pub put_ack_min_nsec: u64,
    pub put_ack_max_nsec: u64,
    pub put_ack_avg_nsec: u64,
}

impl Statistics {
    fn new(counts: [u32; 3], lat: [&LnetIocLatency; 3]) -> Statistics {
        let [pe, gr, pa] = lat;
        Statistics {
            send_count: counts[0],
            recv_count: counts[1],
            drop_count: counts[2],
            put_egress_samples: pe.lat_samples,
            put_egress_min_nsec: pe.lat_min_nsec,
            put_egress_max_nsec: pe.lat_max_nsec,
            put_egress_avg_nsec: pe.lat_avg_nsec,
            get_rtt_samples: gr.lat_samples,
            get_rtt_min_nsec: gr.lat_min_nsec,
            get_rtt_max_nsec: gr.lat_max_nsec,
            get_rtt_avg_nsec: gr.lat_avg_nsec,
            put_ack_samples: pa.lat_samples,
            put_ack_min_nsec: pa.lat_min_nsec,
            put_ack_max_nsec: pa.lat_max_nsec,
            put_ack_avg_nsec: pa.lat_avg_nsec,
        }
    }
}

/// `sent_stats:` / `received_stats:` / `dropped_stats:`.
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct MsgCounts {
    pub put: u32,
    pub get: u32,
    pub reply: u32,
    pub ack: u32,
    pub hello: u32,
}

impl MsgCounts {
    fn new(a: &[u32; abi::MSG_TYPES]) -> MsgCounts {
        MsgCounts {
            put: a[0],
            get: a[1],
            reply: a[2],
            ack: a[3],
            hello: a[4],
        }
    }
}

/// `udsp info:` (v4). Lustre's `Preferred gateway NIDs` block is printed
/// only when the list is non-empty; without routes it never is. Like
/// Lustre's netlink path, which this output follows, peer NIs show no
/// `Preferred source NIDs` block (lnetctl.md §2.2).
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct UdspInfo {
    #[serde(rename = "net priority")]
    pub net_priority: i32,
    #[serde(rename = "nid priority")]
    pub nid_priority: i32,
}

/// `health stats:` of a local NI (health.md §6.1).
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct NiHealthStats {
    pub fatal_error: i32,
    #[serde(rename = "health value")]
    pub health_value: i32,
    pub interrupts: u32,
    pub dropped: u32,
    pub aborted: u32,
    #[serde(rename = "no route")]
    pub no_route: u32,
    pub timeouts: u32,
    pub error: u32,
    pub ping_count: u32,
    pub next_ping: i64,
}

/// `tunables:`.
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct Tunables {
    pub peer_timeout: i32,
    pub peer_credits: i32,
    pub peer_buffer_credits: i32,
    pub credits: i32,
}

/// `lnd tunables:` of the NI's LND.
#[derive(Serialize, Debug, PartialEq, Eq)]
#[serde(untagged)]
pub enum LndTunables {
    Sock(SockTunables),
    O2ib(O2ibTunables),
}

#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct SockTunables {
    pub conns_per_peer: i32,
    pub timeout: i32,
    pub tos: i32,
}

#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct O2ibTunables {
    pub peercredits_hiw: i32,
    pub map_on_demand: i32,
    pub concurrent_sends: i32,
    pub fmr_pool_size: i32,
    pub fmr_flush_trigger: i32,
    pub fmr_cache: i32,
    pub ntx: i32,
    pub conns_per_peer: i32,
    pub timeout: i32,
    pub tos: i32,
}

/// The s32 a u32 ABI field carries.
fn s32(v: u32) -> i32 {
    v as i32
}

/// One NI as `net show -v <detail>` prints it; `backup` is the filtered
/// form of `export --backup` (no NID, status, statistics or dev cpt).
pub fn ni_entry(a: &LnetIocNi, detail: i64, backup: bool) -> NiEntry {
    let intf = abi::get_str(&a.ni_intf);
    let lnd_type = a.ni_nid.nid_type;
    let mut e = NiEntry {
        nid: (!backup).then(|| a.ni_nid.text()),
        status: (!backup).then_some(if a.ni_status == abi::NI_STATUS_UP {
            "up"
        } else {
            "down"
        }),
        interfaces: (!intf.is_empty()).then(|| vec![intf]),
        ..NiEntry::default()
    };
    if detail < 1 {
        return e;
    }
    if !backup {
        e.statistics = Some(Statistics::new(
            [a.ni_send_count, a.ni_recv_count, a.ni_drop_count],
            [&a.ni_put_egress, &a.ni_get_rtt, &a.ni_put_ack],
        ));
        if detail >= 4 {
            e.udsp_info = Some(UdspInfo {
                net_priority: s32(a.ni_net_priority),
                nid_priority: s32(a.ni_nid_priority),
            });
        }
        if detail >= 2 {
            e.sent_stats = Some(MsgCounts::new(&a.ni_sent_stats));
            e.received_stats = Some(MsgCounts::new(&a.ni_received_stats));
            e.dropped_stats = Some(MsgCounts::new(&a.ni_dropped_stats));
            e.health_stats = Some(NiHealthStats {
                fatal_error: s32(a.ni_fatal_error),
                health_value: s32(a.ni_health_value),
                interrupts: a.ni_hs_interrupts,
                dropped: a.ni_hs_dropped,
                aborted: a.ni_hs_aborted,
                no_route: a.ni_hs_no_route,
                timeouts: a.ni_hs_timeouts,
                error: a.ni_hs_error,
                ping_count: a.ni_ping_count,
                next_ping: a.ni_next_ping as i64,
            });
        }
    }
    e.tunables = Some(Tunables {
        peer_timeout: s32(a.ni_peer_timeout),
        peer_credits: s32(a.ni_peer_credits),
        peer_buffer_credits: s32(a.ni_peer_buffer_credits),
        credits: s32(a.ni_credits),
    });
    e.lnd_tunables = match lnd_type {
        lnd::SOCK => Some(LndTunables::Sock(SockTunables {
            conns_per_peer: s32(a.ni_lnd_conns_per_peer),
            timeout: s32(a.ni_lnd_timeout),
            tos: s32(a.ni_lnd_tos),
        })),
        lnd::O2IB => Some(LndTunables::O2ib(O2ibTunables {
            peercredits_hiw: s32(a.ni_lnd_peercredits_hiw),
            map_on_demand: s32(a.ni_lnd_map_on_demand),
            concurrent_sends: s32(a.ni_lnd_concurrent_sends),
            fmr_pool_size: s32(a.ni_lnd_fmr_pool_size),
            fmr_flush_trigger: s32(a.ni_lnd_fmr_flush_trigger),
            fmr_cache: s32(a.ni_lnd_fmr_cache),
            ntx: s32(a.ni_lnd_ntx),
            conns_per_peer: s32(a.ni_lnd_conns_per_peer),
            timeout: s32(a.ni_lnd_timeout),
            tos: s32(a.ni_lnd_tos),
        })),
        _ => None,
    };
    if !backup {
        e.dev_cpt = Some(s32(a.ni_dev_cpt));
    }
    let n = (a.ni_ncpts as usize).min(abi::MAX_CPTS);
    if n > 0 {
        let cpts: Vec<String> = a.ni_cpts[..n].iter().map(u16::to_string).collect();
        e.cpt = Some(format!("[{}]", cpts.join(",")));
    }
    e
}

/// Groups NIs into `net:` entries: a new entry whenever the net changes
/// from the previous NI (the kernel lists a net's NIs together).
pub fn net_entries(nis: &[LnetIocNi], detail: i64, backup: bool) -> Vec<NetEntry> {
    let mut out: Vec<NetEntry> = Vec::new();
    let mut prev = None;
    for a in nis {
        let net = (a.ni_nid.nid_type, a.ni_nid.nid_num);
        if backup && a.ni_nid.nid_type == lnd::LO {
            continue;
        }
        let e = ni_entry(a, detail, backup);
        match out.last_mut() {
            Some(last) if prev == Some(net) => last.local_nis.push(e),
            _ => out.push(NetEntry {
                net_type: net_name(a),
                local_nis: vec![e],
            }),
        }
        prev = Some(net);
    }
    out
}

/// The NI's net as text (`tcp`, `o2ib1`, `lo`).
pub fn net_name(a: &LnetIocNi) -> String {
    match a.ni_nid.to_nid() {
        Ok(n) => n.net().to_string(),
        Err(_) => String::from("<bad net>"),
    }
}

/// `peer show`.
#[derive(Serialize, Debug)]
pub struct PeerShow {
    pub peer: Vec<PeerEntry>,
}

/// One peer (lnetctl.md §2.2).
#[derive(Serialize, Debug)]
pub struct PeerEntry {
    #[serde(rename = "primary nid")]
    pub primary_nid: String,
    /// Printed `true`/`false`, as the netlink path does.
    #[serde(rename = "Multi-Rail")]
    pub multi_rail: bool,
    /// v3
    #[serde(rename = "peer state", skip_serializing_if = "Option::is_none")]
    pub peer_state: Option<u32>,
    #[serde(rename = "peer ni")]
    pub peer_ni: Vec<PeerNiEntry>,
}

#[derive(Serialize, Debug, Default)]
pub struct PeerNiEntry {
    pub nid: String,
    /// v4
    #[serde(rename = "udsp info", skip_serializing_if = "Option::is_none")]
    pub udsp_info: Option<UdspInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'static str>,
    /// v1
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub credits: Option<PeerNiCredits>,
    /// v1
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statistics: Option<Statistics>,
    /// v2
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_stats: Option<MsgCounts>,
    /// v2
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received_stats: Option<MsgCounts>,
    /// v2
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_stats: Option<MsgCounts>,
    /// v2
    #[serde(rename = "health stats", skip_serializing_if = "Option::is_none")]
    pub health_stats: Option<PeerNiHealthStats>,
}

/// The credit keys of a peer NI (v1), inline in the peer NI's mapping.
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct PeerNiCredits {
    pub max_ni_tx_credits: u32,
    pub available_tx_credits: i32,
    pub min_tx_credits: i32,
    pub tx_q_num_of_buf: u32,
    pub available_rtr_credits: i32,
    pub min_rtr_credits: i32,
    pub refcount: u32,
}

/// `health stats:` of a peer NI (health.md §6.1).
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct PeerNiHealthStats {
    #[serde(rename = "health value")]
    pub health_value: i32,
    pub dropped: u32,
    pub timeout: u32,
    pub error: u32,
    #[serde(rename = "network timeout")]
    pub network_timeout: u32,
    pub ping_count: u32,
    pub next_ping: i64,
}

/// One peer as `peer show -v <detail>` prints it; `backup` is
/// `export --backup`'s form (NIDs only).
pub fn peer_entry(p: &LnetIocPeer, nis: &[LnetIocPeerNi], detail: i64, backup: bool) -> PeerEntry {
    PeerEntry {
        primary_nid: p.pr_prim_nid.text(),
        multi_rail: p.pr_multi_rail != 0,
        peer_state: (detail >= 3 && !backup).then_some(p.pr_state),
        peer_ni: nis
            .iter()
            .map(|n| peer_ni_entry(n, detail, backup))
            .collect(),
    }
}

fn peer_ni_entry(a: &LnetIocPeerNi, detail: i64, backup: bool) -> PeerNiEntry {
    let mut e = PeerNiEntry {
        nid: a.pn_nid.text(),
        ..PeerNiEntry::default()
    };
    if backup {
        return e;
    }
    if detail >= 4 {
        e.udsp_info = Some(UdspInfo {
            net_priority: s32(a.pn_net_priority),
            nid_priority: s32(a.pn_nid_priority),
        });
    }
    e.state = Some(match a.pn_state {
        abi::PEER_NI_STATE_UP => "up",
        abi::PEER_NI_STATE_DOWN => "down",
        _ => "NA",
    });
    if detail < 1 {
        return e;
    }
    e.credits = Some(PeerNiCredits {
        max_ni_tx_credits: a.pn_max_ni_tx_credits,
        available_tx_credits: s32(a.pn_available_tx_credits),
        min_tx_credits: s32(a.pn_min_tx_credits),
        tx_q_num_of_buf: a.pn_tx_q_num_of_buf,
        available_rtr_credits: s32(a.pn_available_rtr_credits),
        min_rtr_credits: s32(a.pn_min_rtr_credits),
        refcount: a.pn_refcount,
    });
    e.statistics = Some(Statistics::new(
        [a.pn_send_count, a.pn_recv_count, a.pn_drop_count],
        [&a.pn_put_egress, &a.pn_get_rtt, &a.pn_put_ack],
    ));
    if detail >= 2 {
        e.sent_stats = Some(MsgCounts::new(&a.pn_sent_stats));
        e.received_stats = Some(MsgCounts::new(&a.pn_received_stats));
        e.dropped_stats = Some(MsgCounts::new(&a.pn_dropped_stats));
        e.health_stats = Some(PeerNiHealthStats {
            health_value: s32(a.pn_health_value),
            dropped: a.pn_hs_dropped,
            timeout: a.pn_hs_timeout,
            error: a.pn_hs_error,
            network_timeout: a.pn_hs_network_timeout,
            ping_count: a.pn_ping_count,
            next_ping: a.pn_next_ping as i64,
        });
    }
    e
}

/// `stats show` (health.md §6.2: this key order).
#[derive(Serialize, Debug)]
pub struct StatsShow {
    pub statistics: Counters,
}

#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub msgs_alloc: u32,
    pub msgs_max: u32,
    pub rst_alloc: u32,
    pub errors: u32,
    pub send_count: u32,
    pub resend_count: u32,
    pub response_timeout_count: u32,
    pub local_interrupt_count: u32,
    pub local_dropped_count: u32,
    pub local_aborted_count: u32,
    pub local_no_route_count: u32,
    pub local_timeout_count: u32,
    pub local_error_count: u32,
    pub remote_dropped_count: u32,
    pub remote_error_count: u32,
    pub remote_timeout_count: u32,
    pub network_timeout_count: u32,
    pub failed_resends: u32,
    pub successful_resends: u32,
    pub recv_count: u32,
    pub route_count: u32,
    pub drop_count: u32,
    pub send_length: u64,
    pub recv_length: u64,
    pub route_length: u64,
    pub drop_length: u64,
}

impl Counters {
    pub fn new(s: &LnetIocStats) -> Counters {
        Counters {
            msgs_alloc: s.st_msgs_alloc,
            msgs_max: s.st_msgs_max,
            rst_alloc: s.st_rst_alloc,
            errors: s.st_errors,
            send_count: s.st_send_count,
            resend_count: s.st_resend_count,
            response_timeout_count: s.st_response_timeout_count,
            local_interrupt_count: s.st_local_interrupt_count,
            local_dropped_count: s.st_local_dropped_count,
            local_aborted_count: s.st_local_aborted_count,
            local_no_route_count: s.st_local_no_route_count,
            local_timeout_count: s.st_local_timeout_count,
            local_error_count: s.st_local_error_count,
            remote_dropped_count: s.st_remote_dropped_count,
            remote_error_count: s.st_remote_error_count,
            remote_timeout_count: s.st_remote_timeout_count,
            network_timeout_count: s.st_network_timeout_count,
            failed_resends: s.st_failed_resends,
            successful_resends: s.st_successful_resends,
            recv_count: s.st_recv_count,
            route_count: s.st_route_count,
            drop_count: s.st_drop_count,
            send_length: s.st_send_length,
            recv_length: s.st_recv_length,
            route_length: s.st_route_length,
            drop_length: s.st_drop_length,
        }
    }
}

/// `global show` (lnetctl.md §3.1), also the `global:` block of `export`.
#[derive(Serialize, Debug)]
pub struct GlobalShow {
    pub global: Globals,
}

#[derive(Serialize, Debug, Default, Clone, PartialEq, Eq)]
pub struct Globals {
    pub numa_range: i64,
    pub max_interfaces: i64,
    pub discovery: i64,
    pub drop_asym_route: i64,
    pub retry_count: i64,
    pub transaction_timeout: i64,
    pub health_sensitivity: i64,
    pub recovery_interval: i64,
    pub router_sensitivity: i64,
    pub lnd_timeout: i64,
    pub response_tracking: i64,
    pub recovery_limit: i64,
    pub max_recovery_ping_interval: i64,
}

/// `debug recovery`: `Local NI recovery:` / `Peer NI recovery:` with
/// `nid-<i>: <nid>` entries.
pub fn recovery_doc(peer: bool, nids: &[Nid]) -> serde_yaml_ng::Value {
    use serde_yaml_ng::{Mapping, Value};
    let mut list = Mapping::new();
    for (i, n) in nids.iter().enumerate() {
        list.insert(Value::from(format!("nid-{i}")), Value::from(n.to_string()));
    }
    let mut root = Mapping::new();
    let title = if peer {
        "Peer NI recovery"
    } else {
        "Local NI recovery"
    };
    root.insert(Value::from(title), Value::Mapping(list));
    Value::Mapping(root)
}

/// `ping` (lnetctl.md §2.3).
#[derive(Serialize, Debug)]
pub struct PingShow {
    pub ping: Vec<PingEntry>,
}

/// `discover` (lnetctl.md §2.3): the same shape under `discover:`.
#[derive(Serialize, Debug)]
pub struct DiscoverShow {
    pub discover: Vec<PingEntry>,
}

#[derive(Serialize, Debug)]
pub struct PingEntry {
    #[serde(rename = "primary nid")]
    pub primary_nid: String,
    #[serde(rename = "Multi-Rail")]
    pub multi_rail: bool,
    pub peer_ni: Vec<PingNi>,
}

#[derive(Serialize, Debug)]
pub struct PingNi {
    pub nid: String,
}
