//! Whether gateways and the routes through them are alive, as LNet's
//! router checker (`router.c`) and its receive path decide it.
//!
//! Lustre's rules followed here:
//! - A gateway peer is pinged (a discovery round) on one of its local
//!   nets every `alive_router_check_interval` seconds; the nets take turns.
//!   A new route makes its gateway due at once. With the interval at 0 or
//!   less there is no checker for end nodes: gateways are discovered when
//!   a message needs them.
//! - A failed router discovery marks the gateway dead, all its NIs down
//!   and all its routes down; a successful one marks it alive.
//! - A ping reply with `RTE_DISABLED` (the gateway does not route) takes
//!   every route through it down. Otherwise each route is down if the
//!   gateway has no NI up on the route's local net; if the reply lists
//!   an NI on the remote net the route is single-hop; and with
//!   `avoid_asym_router_failure` a single-hop route (or one given 1 hop)
//!   is up only if one of those NIs is up. Other routes are up.
//! - A route is alive (`lnet_is_route_alive`) only if its gateway peer is
//!   alive; then, where discovery is off for the gateway, by what the last
//!   ping reply or notification cached; else if the gateway has an NI up
//!   on the local net, (for single-hop routes with
//!   `avoid_asym_router_failure`) one up on the remote net, and still
//!   says it routes.
//! - `check_routers_before_use` starts gateways, their NIs and routes
//!   down until a check says otherwise, and holds startup until every
//!   gateway was checked once.
//! - A message forwarded to this node by a gateway that has no route to
//!   the message's source net is asymmetric; with `lnet_drop_asym_route`
//!   it is dropped when it is for this node. A message through a gateway
//!   thought dead revives the gateway and its NIs on the source net.
//! - `router_ping_timeout`, with the check interval, bounds how long a
//!   router's net may stay silent before the router reports its NIs down
//!   in its own ping buffer, and how long routing takes to start or stop.
//! - `router_sensitivity_percentage` is deprecated: accepted (0..=100)
//!   and ignored by selection.
//!
//! Time is in milliseconds from any fixed origin.

use super::nid::{Net, Nid};
use super::ping::{features, NiStatus};
use super::route::Route;

/// The router parameters (`router.c`, `api-ni.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouterParams {
    /// Seconds between checks of a live gateway; 0 or less: no checker.
    pub alive_router_check_interval: i32,
    /// Seconds a router's net may be silent before it is reported down
    /// (added to the interval).
    pub router_ping_timeout: i32,
    /// Gateways start dead and are checked before use.
    pub check_routers_before_use: bool,
    /// Single-hop routes need their gateway's remote-net NI up.
    pub avoid_asym_router_failure: bool,
    /// Deprecated; 0..=100.
    pub router_sensitivity_percentage: u32,
    /// Drop messages for this node that arrive by an asymmetric route.
    pub drop_asym_route: bool,
}

impl RouterParams {
    /// Lustre's defaults.
    pub const DEFAULT: RouterParams = RouterParams {
        alive_router_check_interval: 60,
        router_ping_timeout: 50,
        check_routers_before_use: false,
        avoid_asym_router_failure: true,
        router_sensitivity_percentage: 100,
        drop_asym_route: false,
    };

    /// The check interval in ms, or `None` when there is no checker.
    pub fn interval_ms(&self) -> Option<u64> {
        let s = u64::try_from(self.alive_router_check_interval).ok()?;
        (s > 0).then(|| s.saturating_mul(1000))
    }

    /// `alive_router_check_interval + router_ping_timeout` in ms (0 when
    /// negative), the span `router_ping_timeout` is used in.
    pub fn check_span_ms(&self) -> u64 {
        let s = i64::from(self.alive_router_check_interval)
            .saturating_add(i64::from(self.router_ping_timeout));
        u64::try_from(s).unwrap_or(0).saturating_mul(1000)
    }
}

impl Default for RouterParams {
    fn default() -> Self {
        RouterParams::DEFAULT
    }
}

/// What route aliveness needs to know about a gateway peer. The kernel
/// implements it over its peer, under its lock.
pub trait Gateway {
    /// The peer is alive (`lp_alive`).
    fn alive(&self) -> bool;
    /// Discovery is off for it, here or on its side: route states are the
    /// cached ones.
    fn discovery_disabled(&self) -> bool;
    /// Its last ping reply did not say `RTE_DISABLED`
    /// (`LNET_PEER_ROUTER_ENABLED`).
    fn router_enabled(&self) -> bool;
    /// Whether the gateway has NIs on `net` (`None` if none) and one of
    /// them is up (cached status `LNET_NI_STATUS_UP`).
    fn net_up(&self, net: Net) -> Option<bool>;
    /// Every net of the gateway has an NI up.
    fn all_nets_up(&self) -> bool;
}

/// Whether single-hop checks apply to `r`: `avoid_asym_router_failure`
/// and a route given 1 hop or found single-hop.
fn asym_applies(r: &Route, avoid_asym: bool) -> bool {
    avoid_asym && (r.hops == 1 || r.single_hop)
}

/// `lnet_is_route_alive`: the route's state for selection and `route
/// show`.
pub fn route_alive(r: &Route, gw: &impl Gateway, avoid_asym: bool) -> bool {
    if !gw.alive() {
        return false;
    }
    if gw.discovery_disabled() {
        return r.alive;
    }
    if gw.net_up(r.local_net()) != Some(true) {
        return false;
    }
    if asym_applies(r, avoid_asym) && gw.net_up(r.net) != Some(true) {
        return false;
    }
    gw.router_enabled()
}

/// `lnet_is_gateway_alive`: the peer alive and every net of it up.
pub fn gateway_alive(gw: &impl Gateway) -> bool {
    gw.alive() && gw.all_nets_up()
}

/// A route whose cached state changed: `(route, now up)`.
pub type Changed<'a> = &'a mut dyn FnMut(&Route, bool);

fn set_alive(r: &mut Route, up: bool, changed: Changed<'_>) {
    if r.alive != up {
        r.alive = up;
        changed(r, up);
    }
}

/// Applies a gateway's ping reply to the routes through it
/// (`lnet_router_discovery_ping_reply`). `features` is the reply's
/// feature word, `entries` its NIs, `gw` the gateway as the reply left it.
pub fn ping_reply<'r, I>(
    routes: impl Iterator<Item = &'r mut Route>,
    features_word: u32,
    entries: impl Fn() -> I,
    gw: &impl Gateway,
    avoid_asym: bool,
    changed: Changed<'_>,
) where
    I: Iterator<Item = NiStatus>,
{
    let disabled = features_word & features::RTE_DISABLED != 0;
    for r in routes {
        if disabled || gw.net_up(r.local_net()) != Some(true) {
            set_alive(r, false, changed);
            continue;
        }
        let mut on_net = entries().filter(|e| e.nid.net() == r.net).peekable();
        let single_hop = on_net.peek().is_some();
        let net_up = on_net.any(|e| e.is_up());
        r.single_hop = single_hop;
        let up = !asym_applies(r, avoid_asym) || net_up;
        set_alive(r, up, changed);
    }
}

/// Whether `lnet_check_route_inconsistency` warns about `r`: given 1 hop
/// but found multi-hop while `avoid_asym_router_failure` is on.
pub const fn route_inconsistent(r: &Route, avoid_asym: bool) -> bool {
    !r.single_hop && r.hops == 1 && avoid_asym
}

/// Applies a failed router discovery to the routes through the gateway
/// (`lnet_router_discovery_complete` with an error): all go down. The
/// kernel also marks the gateway dead and its NIs down.
pub fn discovery_failed<'r>(routes: impl Iterator<Item = &'r mut Route>, changed: Changed<'_>) {
    for r in routes {
        set_alive(r, false, changed);
    }
}

/// A notification about a gateway's NI (`lnet_notify` on a router peer):
/// what the gateway peer's aliveness becomes, and whether the routes
/// added with that NID take `alive` as their cached state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notified {
    /// The gateway peer's new `lp_alive`.
    pub gateway_alive: bool,
    /// Set the cached state of routes added with the NID to `alive`.
    pub set_routes: bool,
}

/// `lnet_notify` for an NI of a gateway: `reset` (the LND says the peer
/// itself came or went) sets the peer's aliveness; where discovery is off
/// the routes added with the NID follow `alive`, except that a death
/// reported by a local NI that path selection would not use anyway
/// (`local_superseded`) leaves them, so they do not flap.
pub const fn notify(
    gateway_alive: bool,
    reset: bool,
    alive: bool,
    discovery_disabled: bool,
    local_superseded: bool,
) -> Notified {
    Notified {
        gateway_alive: if reset { alive } else { gateway_alive },
        set_routes: discovery_disabled && (alive || !local_superseded),
    }
}

/// What to do with a message received from a peer through which it may
/// have been routed (`lnet_parse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// Keep it. `revive`: the sending gateway was thought dead and is now
    /// alive, its NIs on the source net up; `routes_up`: where discovery
    /// is off, routes through it to the source net become up.
    Accept {
        /// Mark the gateway alive and its NIs on the source net up.
        revive: bool,
        /// Set the cached state of its routes to the source net to up.
        routes_up: bool,
    },
    /// Drop it: asymmetric route and `lnet_drop_asym_route` set.
    DropAsymmetric,
}

/// The receive-side check: `src_net` is the net of the message's source,
/// `from_net` the net of the peer NI that sent it, `gw_alive` and
/// `discovery_disabled` that peer's, and `has_route_to_src` whether the
/// peer is a gateway of one of our routes to `src_net`.
pub const fn received(
    drop_asym_route: bool,
    for_me: bool,
    gw_alive: bool,
    discovery_disabled: bool,
    src_net: Net,
    from_net: Net,
    has_route_to_src: bool,
) -> Received {
    let routed = src_net.as_u32() != from_net.as_u32();
    if !routed || !((drop_asym_route && for_me) || !gw_alive) {
        return Received::Accept {
            revive: false,
            routes_up: false,
        };
    }
    if drop_asym_route && for_me && !has_route_to_src {
        return Received::DropAsymmetric;
    }
    Received::Accept {
        revive: !gw_alive,
        routes_up: !gw_alive && discovery_disabled && has_route_to_src,
    }
}

/// One net of a gateway peer as the router checker walks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerNetCheck {
    /// The net.
    pub net: Net,
    /// This node has an NI on it.
    pub local: bool,
    /// When the gateway is next due on it (`lpn_next_ping`).
    pub next_ping_ms: u64,
}

/// The router checker's step for one gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckStep {
    /// A check of it is under way.
    Busy,
    /// It has no net we share (an error Lustre logs).
    NoLocalNet,
    /// No shared net is due.
    NotDue,
    /// Ping it on `nets[index]` now; on success it is next due on that
    /// net at `now + interval`.
    Ping {
        /// Index into the nets.
        index: usize,
    },
}

/// The gateway's next check (`lnet_check_routers` for one router): the
/// shared nets are tried in turn starting after `last_net` (the net of the
/// last check), wrapping, and the first due is pinged. Where `last_net`
/// is no longer a net of the gateway the walk starts from the first net
/// (Lustre stops checking such a gateway until its routes are deleted).
pub fn next_check(
    checking: bool,
    nets: &[PeerNetCheck],
    last_net: Option<Net>,
    now_ms: u64,
) -> CheckStep {
    if checking {
        return CheckStep::Busy;
    }
    let start = last_net
        .and_then(|n| nets.iter().position(|p| p.net == n))
        .map_or(0, |i| i + 1);
    let len = nets.len();
    let mut found = false;
    for k in 0..len {
        let i = (start + k) % len;
        let Some(p) = nets.get(i) else {
            continue;
        };
        if !p.local {
            continue;
        }
        found = true;
        if now_ms >= p.next_ping_ms {
            return CheckStep::Ping { index: i };
        }
    }
    if found {
        CheckStep::NotDue
    } else {
        CheckStep::NoLocalNet
    }
}

/// When a gateway's net last checked at `last_ms` (never: `None`) is due
/// again: the current interval after that check, so that a shortened
/// interval applies at once (Lustre keeps the date it set at the check).
pub fn next_ping_ms(last_ms: Option<u64>, interval_ms: u64) -> u64 {
    last_ms.map_or(0, |t| t.saturating_add(interval_ms))
}

/// The NID a discovery round of a gateway pings: its primary NID if that
/// is on a net of ours; else its NID on the net of its last check, else
/// its first NID on a net of ours. A gateway's primary NID may be on a
/// net we reach only through it, where a ping would be routed through the
/// gateway to itself (Lustre's discovery picks an NI on `lp_disc_net_id`).
pub fn ping_nid(
    primary: Nid,
    nids: impl Iterator<Item = Nid> + Clone,
    last_net: Option<Net>,
    is_local: impl Fn(Net) -> bool,
) -> Nid {
    if is_local(primary.net()) {
        return primary;
    }
    let on = |net: Net| nids.clone().find(|n| n.net() == net);
    last_net
        .and_then(on)
        .or_else(|| nids.clone().find(|n| is_local(n.net())))
        .unwrap_or(primary)
}

/// Whether the router checker runs (`lnet_router_checker_active`): always
/// on a router (it keeps the node's own NI statuses), else while there are
/// gateways and a positive interval.
pub const fn checker_active(routing_enabled: bool, have_gateways: bool, interval_s: i32) -> bool {
    routing_enabled || (have_gateways && interval_s > 0)
}

/// Whether a gateway chosen for a message is discovered there and then
/// (no checker keeps it current).
pub const fn discover_at_send(interval_s: i32) -> bool {
    interval_s <= 0
}

/// On a router: whether a net that last heard anything at
/// `last_alive_ms` is reported down in our ping buffer
/// (`lnet_update_ni_status_locked`).
pub fn net_silent(p: &RouterParams, last_alive_ms: u64, now_ms: u64) -> bool {
    now_ms >= last_alive_ms.saturating_add(p.check_span_ms())
}

/// When routing asked to start (or stop) at `asked_ms` may do so: the
/// earliest time, and for stopping the latest (`lnet_check_routers`
/// waits for the router buffers to drain between the two).
pub fn routing_change_window(p: &RouterParams, asked_ms: u64) -> (u64, u64) {
    let span = p.check_span_ms();
    (
        asked_ms.saturating_add(span),
        asked_ms.saturating_add(span.saturating_mul(3)),
    )
}

/// A gateway peer's router-check state, kept beside the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GatewayState {
    /// `lp_alive`.
    pub alive: bool,
    /// `LNET_PEER_ROUTER_ENABLED`: the last reply did not say
    /// `RTE_DISABLED`.
    pub router_enabled: bool,
    /// A check is under way (`LNET_PEER_RTR_DISCOVERY`), since this time.
    pub checking_since_ms: Option<u64>,
    /// At least one check finished (`LNET_PEER_RTR_DISCOVERED`).
    pub checked: bool,
    /// The net of the last check (`lp_disc_net_id`).
    pub last_net: Option<Net>,
}

impl GatewayState {
    /// A new gateway: dead until checked with `check_routers_before_use`,
    /// alive otherwise.
    pub const fn new(p: &RouterParams) -> GatewayState {
        GatewayState {
            alive: !p.check_routers_before_use,
            router_enabled: true,
            checking_since_ms: None,
            checked: false,
            last_net: None,
        }
    }

    /// A check starts on `net`.
    pub fn start_check(&mut self, net: Net, now_ms: u64) {
        self.checking_since_ms = Some(now_ms);
        self.last_net = Some(net);
    }

    /// A ping reply arrived with feature word `features_word`.
    pub fn ping_reply(&mut self, features_word: u32) {
        self.router_enabled = features_word & features::RTE_DISABLED == 0;
    }

    /// The check ended, with a negative errno or 0
    /// (`lnet_router_discovery_complete`).
    pub fn check_done(&mut self, error: i32) {
        self.checking_since_ms = None;
        self.checked = true;
        self.alive = error == 0;
    }

    /// Whether a check under way has outlived `timeout_ms` at `now_ms`
    /// and should end as failed.
    pub fn check_expired(&self, now_ms: u64, timeout_ms: u64) -> bool {
        self.checking_since_ms
            .is_some_and(|t| now_ms >= t.saturating_add(timeout_ms))
    }

    /// The routes were all deleted: the next check starts from the first
    /// net again.
    pub fn routes_gone(&mut self) {
        self.last_net = None;
    }
}

/// Whether startup waits for every gateway to be checked once
/// (`lnet_wait_router_start`), and whether it may go on now.
pub fn startup_may_proceed(
    p: &RouterParams,
    mut gateways: impl Iterator<Item = GatewayState>,
) -> bool {
    !p.check_routers_before_use || gateways.all(|g| g.checked)
}

/// The cached status an NI of the gateway takes from a reply entry, and
/// whether its health is to be lowered (`handle_disc_lpni_health`): a
/// change to down counts as a remote failure.
pub fn ni_status_from_reply(old_up: bool, e: &NiStatus) -> (bool, bool) {
    let up = e.is_up();
    (up, old_up && !up)
}

#[cfg(test)]
mod tests {
    use super::super::ping::{STATUS_DOWN, STATUS_UP};
    use super::*;
    extern crate std;
    use std::vec::Vec;

    fn net(s: &str) -> Net {
        Net::parse(s).unwrap()
    }

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    /// A gateway as plain data: its NIs with their cached status.
    struct Gw {
        alive: bool,
        no_discovery: bool,
        enabled: bool,
        nis: Vec<(Net, bool)>,
    }

    impl Gateway for Gw {
        fn alive(&self) -> bool {
            self.alive
        }
        fn discovery_disabled(&self) -> bool {
            self.no_discovery
        }
        fn router_enabled(&self) -> bool {
            self.enabled
        }
        fn net_up(&self, net: Net) -> Option<bool> {
            let mut on = self.nis.iter().filter(|(n, _)| *n == net).peekable();
            on.peek()?;
            Some(on.any(|(_, up)| *up))
        }
        fn all_nets_up(&self) -> bool {
            self.nis.iter().all(|(n, _)| self.net_up(*n) == Some(true))
        }
    }

    fn gw() -> Gw {
        Gw {
            alive: true,
            no_discovery: false,
            enabled: true,
            nis: std::vec![(net("tcp"), true), (net("o2ib"), true)],
        }
    }

    fn route(hops: u32) -> Route {
        Route {
            net: net("o2ib"),
            gateway: nid("10.0.0.1@tcp"),
            gateway_peer: nid("10.0.0.1@tcp"),
            hops,
            priority: 0,
            sensitivity: None,
            alive: true,
            single_hop: false,
            seq: 0,
        }
    }

    #[test]
    fn params() {
        let p = RouterParams::default();
        assert_eq!(p.interval_ms(), Some(60_000));
        assert_eq!(p.check_span_ms(), 110_000);
        let off = RouterParams {
            alive_router_check_interval: 0,
            router_ping_timeout: -200,
            ..p
        };
        assert_eq!(off.interval_ms(), None);
        assert_eq!(off.check_span_ms(), 0);
    }

    #[test]
    fn route_aliveness() {
        let mut g = gw();
        let r = route(UNDEFINED);
        assert!(route_alive(&r, &g, true));
        // Remote net down: only single-hop routes care.
        g.nis[1].1 = false;
        assert!(route_alive(&r, &g, true));
        assert!(!route_alive(&route(1), &g, true));
        assert!(route_alive(&route(1), &g, false));
        let single = Route {
            single_hop: true,
            ..r
        };
        assert!(!route_alive(&single, &g, true));
        // No NI on the remote net at all.
        g.nis.truncate(1);
        assert!(!route_alive(&route(1), &g, true));
        assert!(route_alive(&route(2), &g, true));
        // Local net down, router disabled, gateway dead.
        let mut g = gw();
        g.nis[0].1 = false;
        assert!(!route_alive(&r, &g, false));
        let g = Gw {
            enabled: false,
            ..gw()
        };
        assert!(!route_alive(&r, &g, false));
        let g = Gw {
            alive: false,
            ..gw()
        };
        assert!(!route_alive(&r, &g, false));
        // Discovery off: the cached state, when the peer is alive.
        let g = Gw {
            no_discovery: true,
            enabled: false,
            nis: Vec::new(),
            ..gw()
        };
        assert!(route_alive(&r, &g, true));
        assert!(!route_alive(&Route { alive: false, ..r }, &g, true));
        assert!(gateway_alive(&gw()));
        let mut g = gw();
        g.nis.push((net("o2ib"), false));
        assert!(gateway_alive(&g));
        g.nis[1].1 = false;
        assert!(!gateway_alive(&g));
    }

    const UNDEFINED: u32 = super::super::route::UNDEFINED_HOPS;

    fn entry(s: &str, up: bool) -> NiStatus {
        NiStatus {
            nid: nid(s),
            status: if up { STATUS_UP } else { STATUS_DOWN },
        }
    }

    #[test]
    fn ping_replies() {
        let g = gw();
        let mut rs = [route(UNDEFINED), route(1), route(2)];
        rs[2].net = net("tcp7");
        let mut log = Vec::new();
        let reply = [
            entry("10.0.0.1@tcp", true),
            entry("192.168.0.1@o2ib", false),
        ];
        ping_reply(
            rs.iter_mut(),
            features::NI_STATUS,
            || reply.iter().copied(),
            &g,
            true,
            &mut |r, up| log.push((r.net, r.hops, up)),
        );
        // The o2ib routes are single-hop and their NI is down.
        assert_eq!(
            (rs[0].alive, rs[0].single_hop, rs[1].alive, rs[1].single_hop),
            (false, true, false, true)
        );
        // tcp7 is not in the reply: multi-hop, up.
        assert!(rs[2].alive && !rs[2].single_hop);
        assert_eq!(
            log,
            [(net("o2ib"), UNDEFINED, false), (net("o2ib"), 1, false)]
        );
        assert!(!route_inconsistent(&rs[1], true));
        let reply = [
            entry("192.168.0.1@o2ib", false),
            entry("192.168.0.2@o2ib", true),
        ];
        log.clear();
        ping_reply(
            rs.iter_mut(),
            0,
            || reply.iter().copied(),
            &g,
            true,
            &mut |r, up| log.push((r.net, r.hops, up)),
        );
        assert!(rs[0].alive && rs[1].alive);
        assert_eq!(log.len(), 2);
        // Without avoid_asym_router_failure a down remote NI is fine.
        let reply = [entry("192.168.0.1@o2ib", false)];
        ping_reply(
            rs.iter_mut(),
            0,
            || reply.iter().copied(),
            &g,
            false,
            &mut |_, _| {},
        );
        assert!(rs.iter().all(|r| r.alive));
        // RTE_DISABLED: all down.
        ping_reply(
            rs.iter_mut(),
            features::RTE_DISABLED,
            || reply.iter().copied(),
            &g,
            false,
            &mut |_, _| {},
        );
        assert!(rs.iter().all(|r| !r.alive));
        // Gateway's local-net NIs down: down whatever the reply says.
        let mut g2 = gw();
        g2.nis[0].1 = false;
        let reply = [entry("192.168.0.2@o2ib", true)];
        rs[0].alive = true;
        ping_reply(
            rs.iter_mut().take(1),
            0,
            || reply.iter().copied(),
            &g2,
            true,
            &mut |_, _| {},
        );
        assert!(!rs[0].alive);
        // Given 1 hop but found multi-hop.
        let r = Route {
            single_hop: false,
            ..route(1)
        };
        assert!(route_inconsistent(&r, true) && !route_inconsistent(&r, false));
        discovery_failed(rs.iter_mut(), &mut |_, _| panic!("already down"));
    }

    #[test]
    fn notifications() {
        assert_eq!(
            notify(true, true, false, false, false),
            Notified {
                gateway_alive: false,
                set_routes: false
            }
        );
        assert_eq!(
            notify(false, false, true, true, true),
            Notified {
                gateway_alive: false,
                set_routes: true
            }
        );
        assert!(!notify(true, false, false, true, true).set_routes);
        assert!(notify(true, false, false, true, false).set_routes);
    }

    #[test]
    fn asymmetric_routes() {
        let (tcp, o2ib) = (net("tcp"), net("o2ib"));
        let plain = Received::Accept {
            revive: false,
            routes_up: false,
        };
        // Not routed: nothing to check.
        assert_eq!(received(true, true, false, false, tcp, tcp, false), plain);
        // Routed to me without a route back: dropped only when asked.
        assert_eq!(
            received(true, true, true, false, o2ib, tcp, false),
            Received::DropAsymmetric
        );
        assert_eq!(received(false, true, true, false, o2ib, tcp, false), plain);
        assert_eq!(received(true, false, true, false, o2ib, tcp, false), plain);
        assert_eq!(received(true, true, true, false, o2ib, tcp, true), plain);
        // Through a gateway thought dead: revived.
        assert_eq!(
            received(false, false, false, true, o2ib, tcp, true),
            Received::Accept {
                revive: true,
                routes_up: true
            }
        );
        assert_eq!(
            received(false, false, false, false, o2ib, tcp, true),
            Received::Accept {
                revive: true,
                routes_up: false
            }
        );
        assert_eq!(
            received(true, true, false, false, o2ib, tcp, false),
            Received::DropAsymmetric
        );
    }

    #[test]
    fn checker_walks_nets_in_turn() {
        let n = |s: &str, local: bool, at: u64| PeerNetCheck {
            net: net(s),
            local,
            next_ping_ms: at,
        };
        let nets = [n("tcp", true, 0), n("o2ib9", false, 0), n("o2ib", true, 0)];
        assert_eq!(next_check(true, &nets, None, 5), CheckStep::Busy);
        assert_eq!(
            next_check(false, &nets, None, 5),
            CheckStep::Ping { index: 0 }
        );
        assert_eq!(
            next_check(false, &nets, Some(net("tcp")), 5),
            CheckStep::Ping { index: 2 }
        );
        assert_eq!(
            next_check(false, &nets, Some(net("o2ib")), 5),
            CheckStep::Ping { index: 0 }
        );
        // A vanished net: from the first.
        assert_eq!(
            next_check(false, &nets, Some(net("tcp5")), 5),
            CheckStep::Ping { index: 0 }
        );
        let later = [n("tcp", true, 100), n("o2ib", true, 50)];
        assert_eq!(next_check(false, &later, None, 49), CheckStep::NotDue);
        assert_eq!(
            next_check(false, &later, None, 50),
            CheckStep::Ping { index: 1 }
        );
        assert_eq!(
            next_check(false, &[n("o2ib9", false, 0)], None, 5),
            CheckStep::NoLocalNet
        );
        assert_eq!(next_check(false, &[], None, 5), CheckStep::NoLocalNet);
        assert!(checker_active(true, false, 0));
        assert!(checker_active(false, true, 1));
        assert!(!checker_active(false, true, 0));
        assert!(!checker_active(false, false, 60));
        assert!(discover_at_send(0) && !discover_at_send(60));
    }

    #[test]
    fn what_a_check_pings_and_when() {
        let (tcp, tcp1) = (net("tcp"), net("tcp1"));
        let nids = [
            nid("10.0.0.1@tcp"),
            nid("10.1.0.1@tcp1"),
            nid("10.1.0.2@tcp1"),
        ];
        let it = || nids.iter().copied();
        // The primary on a net of ours.
        assert_eq!(
            ping_nid(nids[0], it(), Some(tcp1), |n| n == tcp || n == tcp1),
            nids[0]
        );
        // Primary on tcp, which we reach only through the gateway.
        assert_eq!(ping_nid(nids[0], it(), None, |n| n == tcp1), nids[1]);
        assert_eq!(ping_nid(nids[0], it(), Some(tcp1), |n| n == tcp1), nids[1]);
        // The last net vanished from the gateway: any net of ours.
        assert_eq!(
            ping_nid(nids[0], it(), Some(net("o2ib")), |n| n == tcp1),
            nids[1]
        );
        // Nothing shared: the primary, for the send to refuse.
        assert_eq!(ping_nid(nids[0], it(), None, |_| false), nids[0]);
        assert_eq!(next_ping_ms(None, 60_000), 0);
        assert_eq!(next_ping_ms(Some(5_000), 1_000), 6_000);
        assert_eq!(next_ping_ms(Some(u64::MAX), 1_000), u64::MAX);
    }

    #[test]
    fn gateway_state() {
        let p = RouterParams::default();
        let mut g = GatewayState::new(&p);
        assert!(g.alive && !g.checked);
        let strict = RouterParams {
            check_routers_before_use: true,
            ..p
        };
        assert!(!GatewayState::new(&strict).alive);
        assert!(startup_may_proceed(&p, [g].into_iter()));
        assert!(!startup_may_proceed(&strict, [g].into_iter()));
        g.start_check(net("tcp"), 1000);
        assert!(!g.check_expired(50_999, 50_000));
        assert!(g.check_expired(51_000, 50_000));
        g.ping_reply(features::RTE_DISABLED | features::NI_STATUS);
        assert!(!g.router_enabled);
        g.check_done(-110);
        assert!(!g.alive && g.checked && g.checking_since_ms.is_none());
        assert!(!g.check_expired(u64::MAX, 0));
        assert!(startup_may_proceed(&strict, [g].into_iter()));
        g.ping_reply(0);
        g.check_done(0);
        assert!(g.alive && g.router_enabled);
        assert_eq!(g.last_net, Some(net("tcp")));
        g.routes_gone();
        assert_eq!(g.last_net, None);
    }

    #[test]
    fn router_side_timing() {
        let p = RouterParams::default();
        assert!(!net_silent(&p, 1000, 110_999));
        assert!(net_silent(&p, 1000, 111_000));
        assert!(!net_silent(&p, u64::MAX, u64::MAX - 1));
        assert_eq!(routing_change_window(&p, 5), (110_005, 330_005));
        assert_eq!(routing_change_window(&p, u64::MAX), (u64::MAX, u64::MAX));
        assert_eq!(
            ni_status_from_reply(true, &entry("10.0.0.1@tcp", false)),
            (false, true)
        );
        assert_eq!(
            ni_status_from_reply(false, &entry("10.0.0.1@tcp", false)),
            (false, false)
        );
        assert_eq!(
            ni_status_from_reply(false, &entry("10.0.0.1@tcp", true)),
            (true, false)
        );
    }
}
