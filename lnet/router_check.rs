// SPDX-License-Identifier: GPL-2.0

//! The router checker (Lustre's `lnet_check_routers` and the router side
//! of discovery, router.c and peer.c): the monitor thread pings each
//! gateway of our routes every `alive_router_check_interval` seconds with
//! a discovery round on one of the nets we share with it, in turn; the
//! reply gives the gateway's NI statuses and says whether it routes, and
//! decides the state of each route through it; a failed round marks the
//! gateway dead, its NIs and routes down. On a router the same thread
//! reports a net down in our ping buffer when no node pinged us on it for
//! the interval plus `router_ping_timeout`. The rules are lnet-core's
//! `router_check`; this file applies them to the peers and NIs.
//!
//! Lustre's rules followed here beyond lnet-core's:
//! - Every discovery of a gateway, not only the checker's, applies its
//!   reply to the routes and its end to the gateway's aliveness
//!   (`lnet_peer_data_present`, `lnet_peer_discovery_complete`); a push
//!   from it is a reply too.
//! - A message received through a gateway thought dead revives it and
//!   marks its NIs on the source's net up (`lnet_parse`).
//! - Only a GET on the reserved portal (a ping) from another node keeps a
//!   router's net alive, so the router's own traffic cannot.
//!
//! Differences, deliberate: a check whose round outlives
//! `router_ping_timeout` counts as failed then (Lustre waits for the
//! round's own deadline, the transaction timeout); the round goes on, and
//! the next ping waits for its end; the next check of a
//! net is due the current interval after the last one, so a shortened
//! interval applies at once (Lustre keeps the date set at the last check);
//! the router checker does not push our buffer to the gateway each time
//! (`LNET_PEER_FORCE_PUSH`): discovery pushes it when the gateway has not
//! seen it.
//!
//! Locks: `nis` before `peers` before `discovery`; the ping buffer's words
//! are written with none of them held. Nothing here sends or finalizes.

use crate::kapi::kthread;
use crate::lnet_core::nid::{Net, Nid};
use crate::lnet_core::ping::{self, NiStatus};
use crate::lnet_core::route::{Route, RouteTable};
use crate::lnet_core::router_check::{
    self as rc, CheckStep, GatewayState, PeerNetCheck, Received, RouterParams,
};
use crate::params;
use crate::peer::{Peer, Peers};
use crate::route::{GatewayView, RouteVec};
use crate::state::TheLnet;
use core::sync::atomic::Ordering::Relaxed;

/// Nets of a node or a gateway the checker looks at; more are ignored
/// (an LNet node has a handful).
const MAX_NETS: usize = 16;

/// A gateway's router-check state, kept in its peer.
pub(crate) struct PeerRtr {
    pub(crate) state: GatewayState,
    /// When each of its nets was last checked, ms (`lpn_next_ping` less
    /// the interval).
    pinged: [Option<(Net, u64)>; MAX_NETS],
}

impl PeerRtr {
    /// A new peer: alive unless `check_routers_before_use`.
    pub(crate) fn new() -> PeerRtr {
        PeerRtr {
            state: GatewayState::new(&params::router_params()),
            pinged: [None; MAX_NETS],
        }
    }

    fn last_ping(&self, net: Net) -> Option<u64> {
        self.pinged
            .iter()
            .flatten()
            .find(|(n, _)| *n == net)
            .map(|(_, t)| *t)
    }

    /// A route through this peer was added (`lnet_add_route`): every net
    /// due at once; a new gateway keeps no check of an earlier spell as
    /// one.
    pub(crate) fn route_added(&mut self, new_gateway: bool) {
        if new_gateway {
            self.state.checking_since_ms = None;
        }
        self.pinged = [None; MAX_NETS];
    }

    /// The last route through this peer went: nothing of its checks kept
    /// (`lnet_del_route` resets `lp_disc_net_id`).
    pub(crate) fn routes_gone(&mut self) {
        self.state.checking_since_ms = None;
        self.state.routes_gone();
    }

    fn set_pinged(&mut self, net: Net, now: u64) {
        let slot = self
            .pinged
            .iter()
            .position(|e| e.is_some_and(|(n, _)| n == net))
            .or_else(|| self.pinged.iter().position(|e| e.is_none()));
        if let Some(e) = slot.and_then(|i| self.pinged.get_mut(i)) {
            *e = Some((net, now));
        }
    }
}

/// The local nets, read under `nis` before `peers` is taken.
pub(crate) struct LocalNets([Option<Net>; MAX_NETS]);

impl LocalNets {
    pub(crate) fn read(lnet: &TheLnet) -> LocalNets {
        let mut nets = [None; MAX_NETS];
        let nis = lnet.nis.lock();
        let mut n = 0;
        for ni in nis.nis.iter().filter(|n| n.nid != Nid::LO && n.is_active()) {
            let net = ni.nid.net();
            if nets.iter().flatten().any(|x| *x == net) {
                continue;
            }
            if let Some(slot) = nets.get_mut(n) {
                *slot = Some(net);
                n += 1;
            }
        }
        LocalNets(nets)
    }

    pub(crate) fn contains(&self, net: Net) -> bool {
        self.0.iter().flatten().any(|n| *n == net)
    }
}

/// Whether `p` is the gateway of a route (`lp_rtr_refcount`): a route
/// names one of its NIDs as its gateway peer (discovery may have given
/// the peer another primary NID since).
pub(crate) fn is_gateway(table: &RouteTable<RouteVec>, p: &Peer) -> bool {
    table
        .routes()
        .iter()
        .any(|r| p.nis.iter().any(|n| n.nid == r.gateway_peer))
}

/// The routes through `p`.
fn routes_via<'a>(
    table: &'a mut RouteTable<RouteVec>,
    p: &'a Peer,
) -> impl Iterator<Item = &'a mut Route> + 'a {
    table
        .routes_mut()
        .iter_mut()
        .filter(move |r| p.nis.iter().any(|n| n.nid == r.gateway_peer))
}

fn log_change(r: &Route, up: bool) {
    crate::cnet!(
        "Route to {} via {} {}\n",
        r.net,
        r.gateway,
        if up { "up" } else { "down" }
    );
}

/// The NID a discovery round of `p` pings: its primary NID if we share
/// its net; else its NID on the net of its last router check, or on any
/// net we share (a gateway's primary NID may be on a net we reach only
/// through it).
pub(crate) fn ping_target(p: &Peer, local: &LocalNets) -> Nid {
    rc::ping_nid(
        p.primary,
        p.nis.iter().map(|n| n.nid),
        p.rtr.state.last_net,
        |n| local.contains(n),
    )
}

/// A discovery round of peer `pi` ended with `error` (0 or a negative
/// errno): for a gateway, `lnet_router_discovery_complete`.
pub(crate) fn discovery_done(peers: &mut Peers, pi: usize, error: i32) {
    let Peers { list, routes, .. } = peers;
    let Some(p) = list.get_mut(pi) else {
        return;
    };
    if !is_gateway(&routes.table, p) {
        // Its last route went while the check ran: nothing to decide, but
        // the check is over.
        p.rtr.state.checking_since_ms = None;
        return;
    }
    let was = p.rtr.state.alive;
    p.rtr.state.check_done(error);
    if error == 0 {
        if !was {
            crate::cnet!("Gateway {} alive\n", p.primary);
        }
        return;
    }
    gateway_failed(&mut routes.table, p, error, was);
}

/// A gateway's check failed: dead, its NIs down (we learn their status
/// only from its pings), its routes down.
fn gateway_failed(table: &mut RouteTable<RouteVec>, p: &mut Peer, error: i32, was_alive: bool) {
    for n in p.nis.iter_mut() {
        n.ns_status = ping::STATUS_DOWN;
    }
    rc::discovery_failed(routes_via(table, p), &mut log_change);
    if was_alive {
        crate::cnet!(
            "Gateway {} dead: router check failed ({})\n",
            p.primary,
            error
        );
    }
}

/// A gateway's ping reply or push was merged into peer `pi`: its feature
/// word and NI statuses decide its routes
/// (`lnet_router_discovery_ping_reply`).
pub(crate) fn ping_reply(peers: &mut Peers, pi: usize, features: u32, entries: &[NiStatus]) {
    let Peers { list, routes, .. } = peers;
    let Some(p) = list.get_mut(pi) else {
        return;
    };
    if !is_gateway(&routes.table, p) {
        return;
    }
    p.rtr.state.ping_reply(features);
    if features & ping::features::RTE_DISABLED != 0 {
        crate::cerror!(
            "Peer {} is being used as a gateway but routing feature is not turned on\n",
            p.primary
        );
    }
    let avoid_asym = params::router_params().avoid_asym_router_failure;
    let p: &Peer = p;
    let view = GatewayView(Some(p));
    rc::ping_reply(
        routes_via(&mut routes.table, p),
        features,
        || entries.iter().copied(),
        &view,
        avoid_asym,
        &mut log_change,
    );
    for r in routes.table.routes().iter() {
        if p.nis.iter().any(|n| n.nid == r.gateway_peer) && rc::route_inconsistent(r, avoid_asym) {
            crate::cnet!(
                "route {}->{} is detected to be multi-hop but hop count is set to {}\n",
                r.net,
                p.primary,
                r.hops
            );
        }
    }
}

/// A message from `src` arrived from peer NI `li` of peer `pi`
/// (`lnet_parse`): one routed to us through a gateway thought dead
/// revives it.
pub(crate) fn received(peers: &mut Peers, pi: usize, from: &Nid, src: &Nid) {
    let (src_net, from_net) = (src.net(), from.net());
    if src_net == from_net {
        return;
    }
    let Peers { list, routes, .. } = peers;
    let Some(p) = list.get_mut(pi) else {
        return;
    };
    if p.rtr.state.alive || !is_gateway(&routes.table, p) {
        return;
    }
    let has_route = routes_via(&mut routes.table, p).any(|r| r.net == src_net);
    let discovery_disabled = rc::Gateway::discovery_disabled(&GatewayView(Some(&*p)));
    // Dropping asymmetric messages (`lnet_drop_asym_route`) is not done
    // here: the receive path keeps them.
    let Received::Accept { revive, routes_up } = rc::received(
        false,
        false,
        false,
        discovery_disabled,
        src_net,
        from_net,
        has_route,
    ) else {
        return;
    };
    if revive {
        p.rtr.state.alive = true;
        for n in p.nis.iter_mut().filter(|n| n.nid.net() == src_net) {
            n.ns_status = ping::STATUS_UP;
        }
        crate::cnet!(
            "Gateway {} alive: a message from {} came through it\n",
            p.primary,
            src
        );
    }
    if routes_up {
        for r in routes_via(&mut routes.table, p).filter(|r| r.net == src_net) {
            if !r.alive {
                r.alive = true;
                log_change(r, true);
            }
        }
    }
}

/// How long a check may run before it counts as failed, ms.
fn check_timeout_ms(p: &RouterParams) -> u64 {
    u64::try_from(p.router_ping_timeout)
        .unwrap_or(0)
        .max(1)
        .saturating_mul(1000)
}

/// The monitor thread's router check, once a second (`lnet_check_routers`).
pub(crate) fn check(lnet: &TheLnet) {
    let p = params::router_params();
    if crate::router::routing(lnet) {
        update_ni_status(lnet, &p);
    }
    let Some(interval) = p.interval_ms() else {
        return;
    };
    // Nothing is queued while LNet shuts down (discovery's flag clears
    // only once its threads are gone).
    if !lnet.is_running() || !lnet.dc_running.load(Relaxed) {
        return;
    }
    let now = kthread::now_ms();
    let timeout = check_timeout_ms(&p);
    let local = LocalNets::read(lnet);
    let mut queued = false;
    {
        let mut guard = lnet.peers.lock();
        let Peers { list, routes, .. } = &mut *guard;
        let table = &mut routes.table;
        if table.routes().is_empty() {
            return;
        }
        for pe in list.iter_mut() {
            if !is_gateway(table, pe) {
                continue;
            }
            if pe.rtr.state.check_expired(now, timeout) {
                let was = pe.rtr.state.alive;
                pe.rtr
                    .state
                    .check_done(crate::kapi::errno::ETIMEDOUT().to_errno());
                gateway_failed(table, pe, crate::kapi::errno::ETIMEDOUT().to_errno(), was);
                continue;
            }
            let mut nets = [PeerNetCheck {
                net: Net::LO,
                local: false,
                next_ping_ms: 0,
            }; MAX_NETS];
            let mut n = 0;
            for ni in pe.nis.iter() {
                let net = ni.nid.net();
                if nets.iter().take(n).any(|c| c.net == net) {
                    continue;
                }
                let Some(slot) = nets.get_mut(n) else {
                    break;
                };
                *slot = PeerNetCheck {
                    net,
                    local: local.contains(net),
                    next_ping_ms: rc::next_ping_ms(pe.rtr.last_ping(net), interval),
                };
                n += 1;
            }
            let nets = nets.get(..n).unwrap_or(&[]);
            let checking = pe.rtr.state.checking_since_ms.is_some();
            match rc::next_check(checking, nets, pe.rtr.state.last_net, now) {
                CheckStep::Ping { index } => {
                    let Some(net) = nets.get(index).map(|c| c.net) else {
                        continue;
                    };
                    // The check and its net are recorded only once it is
                    // queued (Lustre sets lpn_next_ping on success): one
                    // that could not be is tried again next second.
                    let last_net = pe.rtr.state.last_net;
                    pe.rtr.state.start_check(net, now);
                    if crate::discovery::queue_router_check(lnet, pe) {
                        pe.rtr.set_pinged(net, now);
                        queued = true;
                    } else {
                        pe.rtr.state.checking_since_ms = None;
                        pe.rtr.state.last_net = last_net;
                    }
                }
                CheckStep::NoLocalNet => {
                    crate::cnet!("no local network found for gateway {}\n", pe.primary);
                }
                CheckStep::Busy | CheckStep::NotDue => {}
            }
        }
    }
    if queued {
        crate::discovery::wake(lnet);
    }
}

/// On a router: a net no node pinged us on for the interval plus
/// `router_ping_timeout` is reported down in our ping buffer, and up again
/// by the next ping on it (`lnet_update_ni_status_locked`).
fn update_ni_status(lnet: &TheLnet, p: &RouterParams) {
    let now = kthread::now_ms();
    let mut changed = [None::<Nid>; MAX_NETS];
    let mut n = 0;
    {
        let nis = lnet.nis.lock();
        for ni in nis.nis.iter().filter(|n| n.nid != Nid::LO) {
            let net = ni.nid.net();
            let last = nis
                .nis
                .iter()
                .filter(|x| x.nid.net() == net)
                .map(|x| x.last_ping_ms.load(Relaxed))
                .max()
                .unwrap_or(0);
            if rc::net_silent(p, last, now) && !ni.silent.swap(true, Relaxed) {
                // Written under `nis` (ping_words is a leaf lock), so that
                // a ping heard meanwhile cannot be overwritten.
                crate::ping::set_ni_status(lnet, ni.nid, false);
                if let Some(slot) = changed.get_mut(n) {
                    *slot = Some(ni.nid);
                    n += 1;
                }
            }
        }
    }
    for nid in changed.iter().flatten() {
        crate::cnet!(
            "{}: no ping on its net for {} ms: reported down\n",
            nid,
            p.check_span_ms()
        );
    }
    if n > 0 {
        // A new buffer, pushed to Multi-Rail peers, as Lustre's checker
        // pushes after a status change.
        lnet.ping_update.store(true, Relaxed);
    }
}

/// A message arrived on `ni` from `src`: on a router, a ping from another
/// node keeps `ni`'s net alive, and brings it back up if it was silent.
pub(crate) fn heard(lnet: &TheLnet, ni: &crate::ni::Ni, src: &Nid, is_ping: bool) {
    if !is_ping || ni.nid == Nid::LO || !crate::router::routing(lnet) {
        return;
    }
    let now = kthread::now_ms();
    let net = ni.nid.net();
    let mut back = [None::<(Nid, bool)>; MAX_NETS];
    {
        let nis = lnet.nis.lock();
        if nis.nis.iter().any(|n| n.nid == *src) {
            return;
        }
        ni.last_ping_ms.store(now, Relaxed);
        let mut n = 0;
        for x in nis.nis.iter().filter(|x| x.nid.net() == net) {
            if x.silent.swap(false, Relaxed) {
                // Under `nis`, as update_ni_status writes it.
                crate::ping::set_ni_status(lnet, x.nid, x.reports_up());
                if let Some(slot) = back.get_mut(n) {
                    *slot = Some((x.nid, x.reports_up()));
                    n += 1;
                }
            }
        }
    }
    let mut any = false;
    for (nid, _) in back.iter().flatten() {
        crate::cnet!("{}: pinged by {}: reported up\n", nid, src);
        any = true;
    }
    if any {
        lnet.ping_update.store(true, Relaxed);
    }
}

/// Routing starts or stops: the nets start alive (none is reported down
/// for silence before a full span passed), and with routing off none is.
pub(crate) fn routing_changed(lnet: &TheLnet) {
    let now = kthread::now_ms();
    let mut back = [None::<(Nid, bool)>; MAX_NETS];
    {
        let nis = lnet.nis.lock();
        let mut n = 0;
        for x in nis.nis.iter() {
            x.last_ping_ms.store(now, Relaxed);
            if x.silent.swap(false, Relaxed) {
                if let Some(slot) = back.get_mut(n) {
                    *slot = Some((x.nid, x.reports_up()));
                    n += 1;
                }
            }
        }
    }
    for (nid, up) in back.iter().flatten() {
        crate::ping::set_ni_status(lnet, *nid, *up);
    }
}

/// `check_routers_before_use`: waits until every gateway was checked
/// once (`lnet_wait_known_routerstate`), at most one check's timeout and
/// two monitor rounds: a gateway that does not answer by then is dead and
/// its routes down, as a failed check leaves them. Called without locks
/// once LNet is up.
pub(crate) fn wait_known_routerstate(lnet: &TheLnet) {
    let p = params::router_params();
    if !p.check_routers_before_use {
        return;
    }
    if p.interval_ms().is_none() {
        crate::cwarn!(
            "check_routers_before_use with alive_router_check_interval {}: no router checker to wait for\n",
            p.alive_router_check_interval
        );
        return;
    }
    let deadline = kthread::now_ms()
        .saturating_add(check_timeout_ms(&p))
        .saturating_add(2000);
    loop {
        let known = {
            let guard = lnet.peers.lock();
            let table = &guard.routes.table;
            rc::startup_may_proceed(
                &p,
                guard
                    .list
                    .iter()
                    .filter(|x| is_gateway(table, x))
                    .map(|x| x.rtr.state),
            )
        };
        if known {
            return;
        }
        if kthread::now_ms() >= deadline || !lnet.is_running() {
            crate::cwarn!("Not every gateway was checked before startup went on\n");
            return;
        }
        kthread::msleep(100);
    }
}
