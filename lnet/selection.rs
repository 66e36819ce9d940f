// SPDX-License-Identifier: GPL-2.0

//! Path selection (`lnet_select_pathway`, selection.md): the local NI a
//! message leaves from and the peer NI it goes to, health first, then
//! UDSP priorities, NUMA distance, credits and round robin.

use crate::lnet_core::hdr::MsgBody;
use crate::lnet_core::msg_stats;
use crate::lnet_core::nid::{Net, Nid};
use crate::lnet_core::route::{Route, UNDEFINED_HOPS};
use crate::lnet_core::select::{
    self, LocalNiView, NetCandidate, NiCandidate, PeerNiCandidate, PeerNiView, RouteCandidate,
    RouteOption,
};
use crate::ni::Ni;
use crate::params;
use crate::peer::{PeerNi, Peers};
use crate::state::{Nis, TheLnet};
use core::sync::atomic::Ordering;
use kernel::sync::Arc;

/// Candidates compared at once; NIs or nets beyond this are not considered.
const MAX_CANDIDATES: usize = 16;

/// GPU device priority is not tracked (no GPU memory MDs): equal for
/// every candidate.
const NI_UNRANKED: NiCandidate = NiCandidate {
    fatal: false,
    health: 0,
    sel_priority: u32::MAX,
    dev_priority: u32::MAX,
    distance: 0,
    tx_credits: 0,
    seq: 0,
};
const NET_UNRANKED: NetCandidate = NetCandidate {
    peer_net_health: 0,
    peer_net_priority: u32::MAX,
    local_net_health: 0,
    local_net_priority: u32::MAX,
    peer_net_seq: 0,
    local_net_seq: 0,
};
const LPNI_UNRANKED: PeerNiCandidate = PeerNiCandidate {
    health: 0,
    sel_priority: u32::MAX,
    preferred: false,
    tx_credits: 0,
    seq: 0,
};

const ROUTE_UNRANKED: RouteOption = RouteOption {
    alive: false,
    reachable: false,
    route: RouteCandidate {
        preferred_gateway: false,
        priority: u32::MAX,
        hops: None,
        gateway_health: 0,
        gateway_queued: 0,
        gateway_credits: 0,
        seq: 0,
    },
};

/// Where selection sends a message.
pub(crate) struct Path {
    /// The local NI it leaves from.
    pub(crate) ni: Arc<Ni>,
    /// The peer NI the LND sends it to: its destination, or the gateway's
    /// NI for a routed message.
    pub(crate) to: Nid,
    /// The NID the header names as its source.
    pub(crate) from: Nid,
    /// The destination is on a remote net: the header keeps it, and `to`
    /// is a gateway.
    pub(crate) routed: bool,
}

/// The best active local NI of `net` (`lnet_get_best_ni`).
fn best_local_ni(nis: &Nis, net: Net, md_node: i32, numa_range: u32) -> Option<Arc<Ni>> {
    let cands = nis
        .nis
        .iter()
        .enumerate()
        .filter(|(_, ni)| ni.is_active() && ni.nid.net() == net)
        .map(|(i, ni)| {
            let c = NiCandidate {
                fatal: ni.is_fatal(),
                health: ni.health.load(Ordering::Relaxed),
                sel_priority: ni.sel_priority.load(Ordering::Relaxed),
                distance: crate::numa::distance(md_node, ni.dev_node.load(Ordering::Relaxed)),
                tx_credits: ni.tx_credits().available,
                seq: ni.seq.load(Ordering::Relaxed),
                ..NI_UNRANKED
            };
            (i, c)
        });
    let i = best_of(cands, (0, NI_UNRANKED), |c| {
        select::best_ni(c, numa_range, false)
    })?;
    nis.nis.get(i).cloned()
}

/// The path of a message to a net this node has no NI on
/// (`lnet_handle_find_routed_path`): the best alive route to the net
/// whose gateway has an NI on one of our nets (on the source's net when
/// a source is given), by lnet-core's `select_route` (priority, hops,
/// then the health, queued bytes and credits of the gateway's best peer
/// NI on that net); the message leaves from the best NI of that net to
/// that peer NI, and the route takes its turn in round robin. Routes
/// beyond `MAX_CANDIDATES` to one net are not considered; routes down
/// (router_check.rs) are skipped. Gateways are not discovered here when
/// the router checker is off (Lustre does), and UDSP router rules prefer
/// no gateway (udsp.rs).
fn select_routed(
    lnet: &TheLnet,
    nis: &Nis,
    peers: &mut Peers,
    dest: &Nid,
    src: &Nid,
    slot: usize,
    md_node: i32,
) -> Option<Path> {
    let net = dest.net();
    let src_ni = if src.is_any() {
        None
    } else {
        Some(
            nis.nis
                .iter()
                .find(|n| n.is_active() && n.nid == *src)?
                .clone(),
        )
    };
    let mut routes = [None::<Route>; MAX_CANDIDATES];
    for (e, r) in routes.iter_mut().zip(peers.routes.table.routes_to(net)) {
        *e = Some(*r);
    }
    // A gateway whose peer was deleted is a peer again, as a message to
    // it would make it.
    for r in routes.iter().flatten() {
        if peers.find(&r.gateway_peer).is_none() {
            peers.find_or_create(&r.gateway).ok()?;
        }
    }
    let routes = routes.map(|r| {
        r.and_then(|r| {
            let peer = peers
                .find(&r.gateway_peer)
                .or_else(|| peers.find(&r.gateway))
                .map(|(pi, _)| pi)?;
            Some((r, peer))
        })
    });
    // The gateway's best peer NI on the route's local net, if we can reach
    // it from there: (peer index, peer NI index, its NID).
    let tx = lnet.tx.lock();
    let gateway_ni = |r: &Route, pi: usize| -> Option<(usize, Nid, PeerNiCandidate, u64)> {
        let lnet_net = r.local_net();
        if src_ni.as_ref().is_some_and(|n| n.nid.net() != lnet_net)
            || !nis
                .nis
                .iter()
                .any(|n| n.is_active() && n.nid.net() == lnet_net)
        {
            return None;
        }
        let gw = peers.list.get(pi)?;
        let fresh = nis
            .nis
            .iter()
            .find(|n| n.nid.net() == lnet_net)
            .map_or(0, |n| n.tunables.peer_credits.load(Ordering::Relaxed));
        // A gateway NI as selection ranks it, and the bytes queued to it.
        let candidate = |p: &PeerNi| {
            let (credits, queued) = tx.peer_ni_credits(&p.nid, fresh);
            let c = PeerNiCandidate {
                health: p.health,
                sel_priority: p.sel_priority,
                preferred: false,
                tx_credits: credits.available,
                seq: p.seq,
            };
            (c, queued)
        };
        let lpnis = gw
            .nis
            .iter()
            .enumerate()
            .filter(|(_, p)| p.nid.net() == lnet_net)
            .map(|(i, p)| (i, candidate(p).0));
        let li = best_of(lpnis, (0, LPNI_UNRANKED), select::best_peer_ni)?;
        let p = gw.nis.get(li)?;
        let (c, queued) = candidate(p);
        Some((li, p.nid, c, queued))
    };
    let mut opts = [ROUTE_UNRANKED; MAX_CANDIDATES];
    let mut gws = [None; MAX_CANDIDATES];
    let mut n = 0;
    for ((o, g), e) in opts.iter_mut().zip(gws.iter_mut()).zip(routes.iter()) {
        let Some((r, pi)) = e else {
            break;
        };
        let alive = crate::route::route_up(peers, r);
        let best = gateway_ni(r, *pi);
        *o = RouteOption {
            alive,
            reachable: best.is_some(),
            route: RouteCandidate {
                preferred_gateway: false,
                priority: r.priority,
                hops: (r.hops != UNDEFINED_HOPS).then_some(r.hops),
                gateway_health: best.map_or(0, |b| b.2.health),
                gateway_queued: best.map_or(0, |b| b.3),
                gateway_credits: best.map_or(0, |b| b.2.tx_credits),
                seq: r.seq,
            },
        };
        *g = best.map(|b| (*pi, b.0, b.1, r.local_net()));
        n += 1;
    }
    drop(tx);
    let choice = select::select_route(opts.get(..n)?)?;
    let (pi, li, to, lnet_net) = (*gws.get(choice.index)?)?;
    if let Some(r) = peers.routes.table.routes_to_mut(net).get_mut(choice.index) {
        r.seq = choice.seq;
    }
    let ni = match src_ni {
        Some(ni) => ni,
        None => best_local_ni(nis, lnet_net, md_node, params::snapshot().numa_range)?,
    };
    peers.list.get_mut(pi)?.commit(li, slot);
    Some(Path {
        from: ni.nid,
        ni,
        to,
        routed: true,
    })
}

/// Ranks up to `MAX_CANDIDATES` tagged candidates with `rank` (one of
/// lnet-core's rankings) and returns the winner's tag.
fn best_of<K: Copy, T: Copy>(
    items: impl Iterator<Item = (K, T)>,
    fill: (K, T),
    rank: impl Fn(&[T]) -> Option<usize>,
) -> Option<K> {
    let mut tags = [fill.0; MAX_CANDIDATES];
    let mut cands = [fill.1; MAX_CANDIDATES];
    let mut n = 0;
    for (k, c) in items {
        let (Some(t), Some(d)) = (tags.get_mut(n), cands.get_mut(n)) else {
            break;
        };
        *t = k;
        *d = c;
        n += 1;
    }
    tags.get(rank(cands.get(..n)?)?).copied()
}

/// The local NI a message leaves from, the peer NID it goes to and the NID
/// it names as its source (`lnet_select_pathway`, selection.md §1-§3, §5):
/// a given source is used as is; a Multi-Rail peer gets the best net, NI
/// and peer NI by health then round robin, unless the message is a
/// recovery ping (`recovery`), which goes to the peer NI it names as to a
/// peer that is not Multi-Rail; another peer keeps one preferred NI per
/// peer net, set by its first message that is not a response (ACK or
/// REPLY), while portal-0 traffic takes the best NI of the net instead.
/// Only `0@lo` takes the loopback NI: one of our own NIDs
/// is a peer NI like any other, reached through an NI of its net and its
/// LND, so that a message to it (a local NI's recovery ping) tests that
/// NI.
pub(crate) fn select_path(
    lnet: &TheLnet,
    dest: &Nid,
    src: &Nid,
    body: &MsgBody,
    recovery: bool,
    md_node: i32,
) -> Option<Path> {
    let reserved = matches!(
        body,
        MsgBody::Get { ptl_index: 0, .. } | MsgBody::Put { ptl_index: 0, .. }
    );
    let response = matches!(body, MsgBody::Reply { .. } | MsgBody::Ack { .. });
    let slot = msg_stats::slot(body);
    let numa_range = params::snapshot().numa_range;
    let nis = lnet.nis.lock();
    if *dest == Nid::LO {
        let lo = nis.nis.iter().find(|n| n.nid == Nid::LO && n.is_active())?;
        return Some(Path {
            ni: lo.clone(),
            to: *dest,
            from: *dest,
            routed: false,
        });
    }
    let active = |n: &&Arc<Ni>| n.is_active();
    let mut peers = lnet.peers.lock();
    if !nis.nis.iter().any(|n| n.nid.net() == dest.net()) {
        // No NI on the destination's net: through a gateway, or not at
        // all. A response goes the same way, as its request came through
        // some gateway to this net (Lustre sends it back through the one
        // it came from; lnet-rs does not forward, so none comes).
        let path = select_routed(lnet, &nis, &mut peers, dest, src, slot, md_node)?;
        path.ni.seq.store(
            lnet.net_seq.fetch_add(1, Ordering::Relaxed).wrapping_add(1),
            Ordering::Relaxed,
        );
        return Some(path);
    }
    let (pi, li) = peers.find_or_create(dest).ok()?;
    let peer = peers.list.get_mut(pi)?;
    crate::udsp::apply_new_peer_nis(lnet, &nis, peer);

    let pick_ni = |net: Net| best_local_ni(&nis, net, md_node, numa_range);

    let (ni, lpni) = if !src.is_any() {
        // Source given (an upper layer's choice, or a response): exactly
        // that NI and the destination NID, which must be on its net (a
        // destination on a net of ours but another than the source's is
        // not routed, as in Lustre).
        let ni = nis
            .nis
            .iter()
            .filter(active)
            .find(|n| n.nid == *src && n.nid.net() == dest.net())?
            .clone();
        (ni, li)
    } else if peer.multi_rail && !recovery {
        // A net first (each of the peer's nets that is also ours), then
        // the NI and the peer NI on it.
        let locals = || {
            nis.nis.iter().map(|x| LocalNiView {
                net: x.nid.net(),
                active: x.is_active(),
                fatal: x.is_fatal(),
                health: x.health.load(Ordering::Relaxed),
                seq: x.seq.load(Ordering::Relaxed),
                net_priority: x.net_priority.load(Ordering::Relaxed),
            })
        };
        let peer_nis = || {
            peer.nis.iter().map(|q| PeerNiView {
                net: q.nid.net(),
                health: q.health,
                net_priority: q.net_priority,
                reported_down: q.reported_down(),
            })
        };
        let nets = select::net_candidates(locals, peer_nis, |net| peer.net_seq(net));
        let net = best_of(nets, (Net::ANY, NET_UNRANKED), select::best_net)?;
        let ni = pick_ni(net)?;
        let fresh = ni.tunables.peer_credits.load(Ordering::Relaxed);
        let tx = lnet.tx.lock();
        let with_down = !select::reported_up(peer_nis(), Some(net));
        let lpnis = peer
            .nis
            .iter()
            .enumerate()
            .filter(|(_, p)| p.nid.net() == net && (with_down || !p.reported_down()))
            .map(|(i, p)| {
                let c = PeerNiCandidate {
                    health: p.health,
                    sel_priority: p.sel_priority,
                    seq: p.seq,
                    preferred: p.prefers(&ni.nid),
                    tx_credits: tx.peer_ni_credits(&p.nid, fresh).0.available,
                };
                (i, c)
            });
        let lpni = best_of(lpnis, (0, LPNI_UNRANKED), select::best_peer_ni)?;
        drop(tx);
        (ni, lpni)
    } else {
        // Not Multi-Rail, or a recovery ping: the destination NID, from
        // the preferred NI. Portal-0 traffic (pings, pushes, recovery
        // pings) takes the best NI of the net instead, as Lustre's
        // reserved-portal exemption does.
        // The preference is the peer net's: the first of its peer NIs
        // that has one (`lnet_find_existing_preferred_best_ni`), so that
        // a node with several NIDs on one net sees one source from us. A
        // UDSP pair rule's NID counts as one, as in Lustre's `lpni_pref`.
        let net = peer.nis.get(li)?.nid.net();
        let pref = peer
            .nis
            .iter()
            .filter(|q| q.nid.net() == net)
            .find_map(|q| {
                q.pref_nid
                    .or_else(|| q.udsp_pref.as_slice().first().copied())
            })
            .filter(|_| !reserved)
            .and_then(|p| {
                nis.nis
                    .iter()
                    .filter(active)
                    .find(|n| n.nid == p && n.nid.net() == net)
                    .cloned()
            });
        let ni = match pref {
            Some(ni) => ni,
            None => pick_ni(net)?,
        };
        (ni, li)
    };
    // A peer that is not Multi-Rail keeps the NI first used for it, given
    // or picked, portal 0 included; a response does not set it
    // (`lnet_set_non_mr_pref_nid`).
    if !peer.multi_rail && !response {
        if let Some(lp) = peer.nis.get_mut(lpni) {
            if lp.pref_nid.is_none() && lp.udsp_pref.as_slice().is_empty() {
                lp.pref_nid = Some(ni.nid);
            }
        }
    }
    peer.commit(lpni, slot);
    let to = peer.nis.get(lpni)?.nid;
    ni.seq.store(
        lnet.net_seq.fetch_add(1, Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
    let from = ni.nid;
    Some(Path {
        ni,
        to,
        from,
        routed: false,
    })
}
