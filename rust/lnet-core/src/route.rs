//! The route table of an end node: remote nets, each with the routes
//! (gateways) that reach it, as `lnet_add_route`, `lnet_del_route` and
//! `lnet_get_route` keep them.
//!
//! Lustre's rules followed here:
//! - A route is refused with `-EINVAL` when its gateway is `LNET_ANY_NID`
//!   or `0@lo`, its net is `LNET_NET_ANY` or a loopback net, the gateway is
//!   on the route's own net, or the hop count is neither 1..=255 nor
//!   undefined (`LNET_UNDEFINED_HOPS`, -1 as a signed number).
//! - A route to a net this node has an NI on is refused with `-EEXIST`;
//!   one whose gateway is on a net this node has no NI on, with
//!   `-EHOSTUNREACH`. The local-net test comes first.
//! - A second route to the same net through the same gateway *peer* (any
//!   of its NIDs) changes nothing and returns `-EEXIST`.
//! - A new route goes to a random place among the routes to its net, so
//!   that nodes given the same list of routers start preferring different
//!   ones.
//! - A new route starts down when `check_routers_before_use` is set, up
//!   otherwise, until the router checker or a notification says more.
//! - Deleting names a net or every net, and a gateway or every gateway; a
//!   net with no route left goes away. A named net that has no route is
//!   `-ENOENT`; otherwise deleting nothing is not an error.
//! - `route show` walks the remote-net hash table: nets in the order of
//!   their bucket (`(net number + LND type) & (2^bits - 1)`), nets of one
//!   bucket in the order they were added, and routes in table order.
//!
//! The table keeps nothing about gateways but their identity: whether a
//! gateway and the route through it are alive is router_check.rs's
//! matter, and the route chosen for a message select.rs's.

use super::nid::{lnd, Net, Nid};
use super::nidlist::{NoMem, Seq};

/// `EINVAL`.
pub const EINVAL: i32 = 22;
/// `EEXIST`.
pub const EEXIST: i32 = 17;
/// `EHOSTUNREACH`.
pub const EHOSTUNREACH: i32 = 113;
/// `ENOENT`.
pub const ENOENT: i32 = 2;
/// `ENOMEM`.
pub const ENOMEM: i32 = 12;

/// `LNET_UNDEFINED_HOPS`: the route was given no hop count.
pub const UNDEFINED_HOPS: u32 = u32::MAX;
/// The largest hop count a route may be given.
pub const MAX_HOPS: u32 = 255;

/// `rnet_htable_size`'s default (`LNET_REMOTE_NETS_HASH_DEFAULT`).
pub const RNET_HTABLE_SIZE_DEFAULT: i32 = 1 << 7;
/// `LNET_REMOTE_NETS_HASH_MAX`.
pub const RNET_HTABLE_SIZE_MAX: i32 = 1 << 16;

/// The bits of the remote-net hash for the `rnet_htable_size` parameter,
/// as LNet sizes the table at load: a size of 0 or less is the default,
/// a size above the maximum the maximum, and the table is half the size
/// rounded up to a power of two (at least 2 buckets).
pub fn rnet_hash_bits(rnet_htable_size: i32) -> u32 {
    let size = if rnet_htable_size <= 0 {
        RNET_HTABLE_SIZE_DEFAULT
    } else {
        rnet_htable_size.min(RNET_HTABLE_SIZE_MAX)
    };
    // order_base_2: the bits of the next power of two at or above.
    let size = size.unsigned_abs();
    let order = u32::BITS - size.saturating_sub(1).leading_zeros();
    order.saturating_sub(1).max(1)
}

/// Whether `hops` is a hop count a route may have.
pub const fn hops_valid(hops: u32) -> bool {
    hops == UNDEFINED_HOPS || (hops >= 1 && hops <= MAX_HOPS)
}

/// The hop count selection ranks a route by: an undefined count is 1.
pub const fn effective_hops(hops: u32) -> u32 {
    if hops == UNDEFINED_HOPS {
        1
    } else {
        hops
    }
}

/// The hop count as `route show -v` prints it (undefined is -1).
pub const fn hops_shown(hops: u32) -> i64 {
    if hops == UNDEFINED_HOPS {
        -1
    } else {
        hops as i64
    }
}

/// Whether `nid` is `0@lo`.
fn is_lo0(nid: &Nid) -> bool {
    nid.net().lnd() == lnd::LO && nid.addr_bytes().iter().all(|b| *b == 0)
}

/// What a route is made of, as `routes=`, `lnetctl route add` and the
/// route ioctls give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteSpec {
    /// The remote net (`lr_net`).
    pub net: Net,
    /// The gateway NID the route is added with (`lr_nid`).
    pub gateway: Nid,
    /// Hop count, 1..=255 or [`UNDEFINED_HOPS`].
    pub hops: u32,
    /// Priority: lower is preferred; 0 when not given.
    pub priority: u32,
    /// Health sensitivity given with the route, if any. The Lustre this
    /// follows names the key in its route YAML but keeps no value per
    /// route; it is kept here for `route show -v` only.
    pub sensitivity: Option<u32>,
}

impl RouteSpec {
    /// A route with no hop count, priority 0 and no sensitivity.
    pub const fn new(net: Net, gateway: Nid) -> RouteSpec {
        RouteSpec {
            net,
            gateway,
            hops: UNDEFINED_HOPS,
            priority: 0,
            sensitivity: None,
        }
    }

    /// The checks `lnet_add_route` makes before it looks at any table:
    /// `-EINVAL` for a route that can never be valid.
    pub fn check(&self) -> Result<(), RouteError> {
        let gw_net = self.gateway.net();
        if self.gateway.is_any()
            || is_lo0(&self.gateway)
            || self.net == Net::ANY
            || self.net.lnd() == lnd::LO
            || gw_net == self.net
            || !hops_valid(self.hops)
        {
            return Err(RouteError::Invalid);
        }
        Ok(())
    }
}

/// A route in the table (`struct lnet_route`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The remote net (`lr_net`).
    pub net: Net,
    /// The NID the route was added with (`lr_nid`); its net is the local
    /// net the gateway is reached on (`lr_lnet`).
    pub gateway: Nid,
    /// The primary NID of the gateway's peer: routes through one peer are
    /// one gateway whichever of its NIDs they were added with.
    pub gateway_peer: Nid,
    /// Hop count, 1..=255 or [`UNDEFINED_HOPS`].
    pub hops: u32,
    /// Priority: lower is preferred.
    pub priority: u32,
    /// Health sensitivity given with the route, if any.
    pub sensitivity: Option<u32>,
    /// Cached aliveness (`lr_alive`): what the last ping reply or
    /// notification said. Used as the route's state only where discovery
    /// is off for the gateway (router_check.rs).
    pub alive: bool,
    /// The gateway's last ping reply listed an NI on the remote net
    /// (`lr_single_hop`).
    pub single_hop: bool,
    /// Round-robin sequence (`lr_seq`).
    pub seq: u64,
}

impl Route {
    /// The local net the gateway is reached on (`lr_lnet`).
    pub const fn local_net(&self) -> Net {
        self.gateway.net()
    }
}

/// Why a route could not be added or deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// The route can never be valid (`-EINVAL`).
    Invalid,
    /// The remote net is local (`-EEXIST`).
    LocalNet,
    /// The same gateway already routes to the net (`-EEXIST`).
    Exists,
    /// No local NI is on the gateway's net (`-EHOSTUNREACH`).
    Unreachable,
    /// The named net has no route (`-ENOENT`).
    NoSuchNet,
    /// The table could not grow (`-ENOMEM`).
    NoMem,
}

impl RouteError {
    /// The negative errno LNet returns.
    pub const fn errno(self) -> i32 {
        match self {
            RouteError::Invalid => -EINVAL,
            RouteError::LocalNet | RouteError::Exists => -EEXIST,
            RouteError::Unreachable => -EHOSTUNREACH,
            RouteError::NoSuchNet => -ENOENT,
            RouteError::NoMem => -ENOMEM,
        }
    }

    /// The message `lnetctl` shows for the error of a route add (the
    /// netlink handler's words).
    pub const fn add_message(self) -> &'static str {
        match self {
            RouteError::Invalid => "invalid settings for route creation",
            RouteError::Unreachable => "No interface configured on the same net as gateway",
            RouteError::LocalNet | RouteError::Exists => {
                "Route already exists or the specified network is local"
            }
            RouteError::NoSuchNet | RouteError::NoMem => "failed to create route",
        }
    }
}

impl From<NoMem> for RouteError {
    fn from(_: NoMem) -> Self {
        RouteError::NoMem
    }
}

/// A growable sequence that can also shrink (`KVec` with
/// `kapi::vec::pop` in the kernel).
pub trait List<T>: Seq<T> {
    /// Removes and returns the last element.
    fn pop(&mut self) -> Option<T>;
}

/// What adding a route needs to know about the node.
#[derive(Clone, Copy)]
pub struct AddContext<'a> {
    /// Whether this node has an NI on a net (`lnet_islocalnet`).
    pub is_local_net: &'a dyn Fn(Net) -> bool,
    /// `check_routers_before_use`: new routes start down.
    pub start_down: bool,
    /// A random number that places the route among the others to its net.
    pub place: u32,
}

/// What an accepted route add did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Added {
    /// The gateway had no route before: it joins the routers the router
    /// checker pings, and should be pinged now.
    pub new_gateway: bool,
    /// The route is the first to its net.
    pub new_net: bool,
}

/// What a route delete removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deleted {
    /// Routes removed.
    pub routes: usize,
    /// Remote nets left without routes, removed with them.
    pub nets: usize,
}

/// What `route show` filters on; `None` matches anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShowFilter {
    /// The remote net.
    pub net: Option<Net>,
    /// The gateway NID the route was added with.
    pub gateway: Option<Nid>,
    /// The hop count ([`UNDEFINED_HOPS`] for undefined).
    pub hops: Option<u32>,
    /// The priority.
    pub priority: Option<u32>,
}

impl ShowFilter {
    /// Whether `r` passes.
    pub fn matches(&self, r: &Route) -> bool {
        self.net.map_or(true, |n| n == r.net)
            && self.gateway.map_or(true, |g| g == r.gateway)
            && self.hops.map_or(true, |h| h == r.hops)
            && self.priority.map_or(true, |p| p == r.priority)
    }
}

/// One route as `route show -v` prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteView {
    /// `net`.
    pub net: Net,
    /// `gateway`.
    pub gateway: Nid,
    /// `hop` (-1 when undefined).
    pub hop: i64,
    /// `priority`.
    pub priority: u32,
    /// `health_sensitivity`, when the route was given one.
    pub health_sensitivity: Option<u32>,
    /// `state`: `up` or `down`.
    pub up: bool,
    /// `type`: `multi-hop` unless the gateway's last ping reply listed
    /// the remote net (`single-hop`).
    pub multi_hop: bool,
}

impl RouteView {
    /// The view of `r`, with its state as router_check.rs decides it.
    pub fn of(r: &Route, up: bool) -> RouteView {
        RouteView {
            net: r.net,
            gateway: r.gateway,
            hop: hops_shown(r.hops),
            priority: r.priority,
            health_sensitivity: r.sensitivity,
            up,
            multi_hop: !r.single_hop,
        }
    }

    /// The `state` word.
    pub const fn state(&self) -> &'static str {
        if self.up {
            "up"
        } else {
            "down"
        }
    }

    /// The `type` word.
    pub const fn kind(&self) -> &'static str {
        if self.multi_hop {
            "multi-hop"
        } else {
            "single-hop"
        }
    }
}

/// The remote nets and their routes.
///
/// The routes of one net are contiguous, and nets are in `route show`
/// order (hash bucket, then age), so the routes to a net are a slice.
#[derive(Clone, Debug)]
pub struct RouteTable<L: List<Route>> {
    routes: L,
    hash_bits: u32,
    version: u64,
}

impl<L: List<Route>> RouteTable<L> {
    /// An empty table over `routes` (which must be empty), with a hash of
    /// `hash_bits` bits ([`rnet_hash_bits`]) deciding the show order.
    pub fn new(routes: L, hash_bits: u32) -> RouteTable<L> {
        RouteTable {
            routes,
            hash_bits: hash_bits.clamp(1, 16),
            version: 0,
        }
    }

    fn bucket(&self, net: Net) -> u32 {
        let mask = (1u32 << self.hash_bits) - 1;
        (u32::from(net.num()) + u32::from(net.lnd())) & mask
    }

    /// Bumped whenever a route is added or removed
    /// (`ln_remote_nets_version`).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Every route, in `route show` order.
    pub fn routes(&self) -> &[Route] {
        self.routes.items()
    }

    /// Every route, to update their state. Changing a route's `net` is
    /// not allowed (the table would lose its order); use
    /// [`RouteTable::del`] and [`RouteTable::add`].
    pub fn routes_mut(&mut self) -> &mut [Route] {
        self.routes.items_mut()
    }

    /// Where the routes to `net` are.
    fn span(&self, net: Net) -> core::ops::Range<usize> {
        let items = self.routes.items();
        let start = items.iter().position(|r| r.net == net);
        match start {
            Some(s) => {
                let len = items
                    .get(s..)
                    .unwrap_or(&[])
                    .iter()
                    .take_while(|r| r.net == net)
                    .count();
                s..s + len
            }
            None => 0..0,
        }
    }

    /// The routes to `net` (`lnet_find_rnet_locked`); empty when the net
    /// is not a remote net of the table.
    pub fn routes_to(&self, net: Net) -> &[Route] {
        let span = self.span(net);
        self.routes.items().get(span).unwrap_or(&[])
    }

    /// The routes to `net`, to update their state or sequence.
    pub fn routes_to_mut(&mut self, net: Net) -> &mut [Route] {
        let span = self.span(net);
        self.routes.items_mut().get_mut(span).unwrap_or(&mut [])
    }

    /// The place of `net` among the remote nets of its hash bucket, which
    /// are kept in the order they were added (`LNetDist`'s order).
    pub fn bucket_rank(&self, net: Net) -> u32 {
        let bucket = self.bucket(net);
        let items = self.routes.items();
        let before = items.iter().take_while(|r| r.net != net);
        let mut rank = 0u32;
        let mut last = None;
        for r in before {
            if self.bucket(r.net) == bucket && last != Some(r.net) {
                rank = rank.saturating_add(1);
                last = Some(r.net);
            }
        }
        rank
    }

    /// Whether `net` has a route.
    pub fn has_net(&self, net: Net) -> bool {
        !self.routes_to(net).is_empty()
    }

    /// The remote nets, in show order.
    pub fn nets(&self) -> impl Iterator<Item = Net> + '_ {
        let items = self.routes.items();
        items
            .iter()
            .enumerate()
            .filter(move |(i, r)| {
                i.checked_sub(1)
                    .and_then(|p| items.get(p))
                    .map_or(true, |prev| prev.net != r.net)
            })
            .map(|(_, r)| r.net)
    }

    /// Whether a route goes through the gateway peer `peer`
    /// (`lp_rtr_refcount` non-zero: the peer is a router).
    pub fn is_gateway(&self, peer: &Nid) -> bool {
        self.routes.items().iter().any(|r| r.gateway_peer == *peer)
    }

    /// The routes through the gateway peer `peer` (`lp_routes`).
    pub fn routes_via<'a>(&'a self, peer: &'a Nid) -> impl Iterator<Item = &'a Route> + 'a {
        self.routes
            .items()
            .iter()
            .filter(move |r| r.gateway_peer == *peer)
    }

    /// Adds a route (`lnet_add_route`). `gateway_peer` is the primary NID
    /// of the peer `spec.gateway` belongs to (the NID itself for a peer
    /// not yet known).
    pub fn add(
        &mut self,
        spec: &RouteSpec,
        gateway_peer: Nid,
        cx: &AddContext<'_>,
    ) -> Result<Added, RouteError> {
        spec.check()?;
        if (cx.is_local_net)(spec.net) {
            return Err(RouteError::LocalNet);
        }
        if !(cx.is_local_net)(spec.gateway.net()) {
            return Err(RouteError::Unreachable);
        }
        let span = self.span(spec.net);
        let same = self.routes.items().get(span.clone()).unwrap_or(&[]);
        if same.iter().any(|r| r.gateway_peer == gateway_peer) {
            return Err(RouteError::Exists);
        }
        let new_gateway = !self.is_gateway(&gateway_peer);
        let new_net = span.is_empty();
        let at = if new_net {
            // After every net of a bucket not after this net's.
            let bucket = self.bucket(spec.net);
            let items = self.routes.items();
            items
                .iter()
                .rposition(|r| self.bucket(r.net) <= bucket)
                .map_or(0, |i| i + 1)
        } else {
            // Lustre walks `place % (n + 1)` routes and links the new one
            // after the route it stopped at, or first when it walked
            // past the end.
            let n = u32::try_from(span.len()).unwrap_or(u32::MAX - 1);
            let slots = n.saturating_add(1);
            let pos = (cx.place % slots + 1) % slots;
            span.start + pos as usize
        };
        self.routes.try_push(Route {
            net: spec.net,
            gateway: spec.gateway,
            gateway_peer,
            hops: spec.hops,
            priority: spec.priority,
            sensitivity: spec.sensitivity,
            alive: !cx.start_down,
            single_hop: false,
            seq: 0,
        })?;
        if let Some(tail) = self.routes.items_mut().get_mut(at..) {
            tail.rotate_right(1);
        }
        self.version = self.version.wrapping_add(1);
        Ok(Added {
            new_gateway,
            new_net,
        })
    }

    /// Removes route `i`, keeping the order of the others.
    fn remove_at(&mut self, i: usize) -> Option<Route> {
        let tail = self.routes.items_mut().get_mut(i..)?;
        if tail.is_empty() {
            return None;
        }
        tail.rotate_left(1);
        self.routes.pop()
    }

    /// Deletes routes (`lnet_del_route`): to `net` or to every net, through
    /// the gateway peer whose primary NID is `gateway_peer` or through
    /// every gateway. The caller resolves a gateway NID to its peer's
    /// primary NID; a NID of no known peer is passed as it is.
    pub fn del(
        &mut self,
        net: Option<Net>,
        gateway_peer: Option<Nid>,
    ) -> Result<Deleted, RouteError> {
        if let Some(n) = net {
            if n != Net::ANY && !self.has_net(n) {
                return Err(RouteError::NoSuchNet);
            }
        }
        let net = net.filter(|n| *n != Net::ANY);
        let before: usize = self.nets().count();
        let mut d = Deleted::default();
        let mut i = 0;
        while let Some(r) = self.routes.items().get(i) {
            let hit = net.map_or(true, |n| n == r.net)
                && gateway_peer.map_or(true, |g| g == r.gateway_peer);
            if hit {
                if self.remove_at(i).is_some() {
                    d.routes += 1;
                    self.version = self.version.wrapping_add(1);
                }
            } else {
                i += 1;
            }
        }
        d.nets = before.saturating_sub(self.nets().count());
        Ok(d)
    }

    /// Moves routes to another gateway peer when discovery finds two
    /// peers are one node (`lnet_consolidate_routes_locked`): each route
    /// through `from` whose NID `still_in_from` no longer claims goes
    /// through `to`.
    pub fn move_gateway(&mut self, from: &Nid, to: Nid, still_in_from: impl Fn(&Nid) -> bool) {
        for r in self.routes.items_mut() {
            if r.gateway_peer == *from && !still_in_from(&r.gateway) {
                r.gateway_peer = to;
            }
        }
    }

    /// The routes `route show` lists for `filter`, in its order, each
    /// with its state from `up`.
    pub fn show<'a>(
        &'a self,
        filter: ShowFilter,
        up: impl Fn(&Route) -> bool + 'a,
    ) -> impl Iterator<Item = RouteView> + 'a {
        self.routes
            .items()
            .iter()
            .filter(move |r| filter.matches(r))
            .map(move |r| RouteView::of(r, up(r)))
    }

    /// The `idx`th route for the `IOC_LIBCFS_GET_ROUTE` ioctl, which
    /// walks the table in show order; `-ENOENT` past the end.
    pub fn get(&self, idx: usize) -> Result<&Route, RouteError> {
        self.routes.items().get(idx).ok_or(RouteError::NoSuchNet)
    }
}

/// `LNET_RT_ALIVE`: the route ioctl's flag for a route that is up.
pub const RT_ALIVE: u32 = 1 << 0;
/// `LNET_RT_MULTI_HOP`: the route ioctl's flag for a multi-hop route.
pub const RT_MULTI_HOP: u32 = 1 << 1;

/// The flags `IOC_LIBCFS_GET_ROUTE` returns for a route: the other bits
/// of `flags` as the caller passed them (Lustre only sets and clears its
/// two).
pub const fn route_flags(flags: u32, up: bool, single_hop: bool) -> u32 {
    let f = if up {
        flags | RT_ALIVE
    } else {
        flags & !RT_ALIVE
    };
    if single_hop {
        f & !RT_MULTI_HOP
    } else {
        f | RT_MULTI_HOP
    }
}

/// Whether `lnet_add_route` warns that the route should be given a hop
/// count: with `avoid_asym_router_failure`, a single-hop route with an
/// undefined count is not checked for its gateway's remote-net NI.
pub const fn warn_undefined_hops(avoid_asym_router_failure: bool, hops: u32) -> bool {
    avoid_asym_router_failure && hops == UNDEFINED_HOPS
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    impl<T> List<T> for Vec<T> {
        fn pop(&mut self) -> Option<T> {
            Vec::pop(self)
        }
    }

    fn net(s: &str) -> Net {
        Net::parse(s).unwrap()
    }

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    fn locals(n: Net) -> bool {
        n == Net::parse("tcp").unwrap() || n == Net::parse("o2ib").unwrap()
    }

    fn cx(place: u32) -> AddContext<'static> {
        AddContext {
            is_local_net: &locals,
            start_down: false,
            place,
        }
    }

    fn table() -> RouteTable<Vec<Route>> {
        RouteTable::new(Vec::new(), rnet_hash_bits(0))
    }

    fn add(t: &mut RouteTable<Vec<Route>>, n: &str, gw: &str) -> Result<Added, RouteError> {
        let g = nid(gw);
        t.add(&RouteSpec::new(net(n), g), g, &cx(0))
    }

    #[test]
    fn hash_bits_follow_the_table_size() {
        assert_eq!(rnet_hash_bits(0), 6);
        assert_eq!(rnet_hash_bits(-5), 6);
        assert_eq!(rnet_hash_bits(128), 6);
        assert_eq!(rnet_hash_bits(129), 7);
        assert_eq!(rnet_hash_bits(1), 1);
        assert_eq!(rnet_hash_bits(2), 1);
        assert_eq!(rnet_hash_bits(4), 1);
        assert_eq!(rnet_hash_bits(8), 2);
        assert_eq!(rnet_hash_bits(i32::MAX), 15);
    }

    #[test]
    fn hops() {
        assert!(hops_valid(1) && hops_valid(255) && hops_valid(UNDEFINED_HOPS));
        assert!(!hops_valid(0) && !hops_valid(256));
        assert_eq!(effective_hops(UNDEFINED_HOPS), 1);
        assert_eq!(effective_hops(3), 3);
        assert_eq!(hops_shown(UNDEFINED_HOPS), -1);
        assert_eq!(hops_shown(7), 7);
    }

    #[test]
    fn add_checks_in_lustre_order() {
        let mut t = table();
        let gw = nid("10.0.0.1@tcp");
        let bad = [
            RouteSpec::new(net("tcp1"), Nid::ANY),
            RouteSpec::new(net("tcp1"), nid("0@lo")),
            RouteSpec::new(Net::ANY, gw),
            RouteSpec::new(Net::LO, gw),
            RouteSpec::new(net("tcp"), gw),
            RouteSpec {
                hops: 0,
                ..RouteSpec::new(net("tcp1"), gw)
            },
            RouteSpec {
                hops: 256,
                ..RouteSpec::new(net("tcp1"), gw)
            },
        ];
        for s in bad {
            assert_eq!(t.add(&s, gw, &cx(0)), Err(RouteError::Invalid), "{s:?}");
        }
        // A local remote net is -EEXIST even with an unreachable gateway.
        assert_eq!(
            add(&mut t, "o2ib", "10.0.0.1@tcp2").map_err(RouteError::errno),
            Err(-EEXIST)
        );
        assert_eq!(
            add(&mut t, "o2ib5", "10.0.0.1@tcp2").map_err(RouteError::errno),
            Err(-EHOSTUNREACH)
        );
        assert_eq!(
            add(&mut t, "o2ib5", "10.0.0.1@tcp"),
            Ok(Added {
                new_gateway: true,
                new_net: true
            })
        );
        assert_eq!(
            add(&mut t, "o2ib5", "10.0.0.1@tcp").map_err(RouteError::errno),
            Err(-EEXIST)
        );
        assert_eq!(
            add(&mut t, "o2ib6", "10.0.0.1@tcp"),
            Ok(Added {
                new_gateway: false,
                new_net: true
            })
        );
        assert_eq!(t.routes().len(), 2);
        assert!(t.routes().iter().all(|r| r.alive && r.seq == 0));
    }

    #[test]
    fn one_peer_is_one_gateway_whatever_nid() {
        let mut t = table();
        let peer = nid("10.0.0.1@tcp");
        let spec = RouteSpec::new(net("tcp9"), nid("192.168.0.1@o2ib"));
        assert!(t.add(&spec, peer, &cx(0)).is_ok());
        let other = RouteSpec::new(net("tcp9"), peer);
        assert_eq!(t.add(&other, peer, &cx(0)), Err(RouteError::Exists));
        assert_eq!(t.routes_via(&peer).count(), 1);
        assert!(t.is_gateway(&peer));
    }

    #[test]
    fn check_routers_before_use_starts_routes_down() {
        let mut t = table();
        let g = nid("10.0.0.1@tcp");
        let c = AddContext {
            start_down: true,
            ..cx(0)
        };
        t.add(&RouteSpec::new(net("tcp3"), g), g, &c).unwrap();
        assert!(!t.routes()[0].alive);
    }

    #[test]
    fn new_routes_land_where_place_says() {
        let mut t = table();
        for (i, place) in [0u32, 0, 1, 7].iter().enumerate() {
            let g = Nid::new4(net("tcp"), 10 + i as u32);
            let c = cx(*place);
            t.add(&RouteSpec::new(net("tcp4"), g), g, &c).unwrap();
        }
        let order: Vec<u32> = t
            .routes_to(net("tcp4"))
            .iter()
            .map(|r| r.gateway.addr4().unwrap())
            .collect();
        // 10; 11 after the 1st -> [10,11]; 12 after the 2nd ->
        // [10,11,12]; 13 walks past the end (7 % 4 = 3) -> first.
        assert_eq!(order, [13, 10, 11, 12]);
    }

    #[test]
    fn show_order_is_bucket_then_age() {
        let mut t = table();
        // Buckets with 6 bits: tcp5 = 2+5 = 7, o2ib2 = 5+2 = 7,
        // tcp1 = 3, o2ib70 = 75 & 63 = 11.
        for n in ["tcp5", "o2ib70", "o2ib2", "tcp1"] {
            add(&mut t, n, "10.0.0.1@tcp").unwrap();
            add(&mut t, n, "10.0.0.2@tcp").unwrap();
        }
        let nets: Vec<Net> = t.nets().collect();
        assert_eq!(
            nets,
            [net("tcp1"), net("tcp5"), net("o2ib2"), net("o2ib70")]
        );
        for n in &nets {
            assert_eq!(t.routes_to(*n).len(), 2);
        }
        assert!(t.routes_to(net("tcp77")).is_empty());
        // LNetDist's order: a net's place in its bucket.
        assert_eq!(t.bucket_rank(net("tcp5")), 0);
        assert_eq!(t.bucket_rank(net("o2ib2")), 1);
        assert_eq!(t.bucket_rank(net("tcp1")), 0);
    }

    #[test]
    fn delete_by_net_gateway_or_both() {
        let mut t = table();
        for n in ["tcp5", "tcp6", "tcp7"] {
            add(&mut t, n, "10.0.0.1@tcp").unwrap();
            add(&mut t, n, "10.0.0.2@tcp").unwrap();
        }
        let v = t.version();
        assert_eq!(t.del(Some(net("tcp9")), None), Err(RouteError::NoSuchNet));
        assert_eq!(RouteError::NoSuchNet.errno(), -ENOENT);
        // A gateway with no route on a net: nothing, no error.
        assert_eq!(
            t.del(Some(net("tcp5")), Some(nid("10.0.0.3@tcp"))),
            Ok(Deleted::default())
        );
        assert_eq!(t.version(), v);
        assert_eq!(
            t.del(Some(net("tcp5")), Some(nid("10.0.0.1@tcp"))),
            Ok(Deleted { routes: 1, nets: 0 })
        );
        assert_eq!(
            t.del(None, Some(nid("10.0.0.2@tcp"))),
            Ok(Deleted { routes: 3, nets: 1 })
        );
        assert!(!t.has_net(net("tcp5")));
        assert!(!t.is_gateway(&nid("10.0.0.2@tcp")));
        assert_eq!(t.del(Some(net("tcp5")), None), Err(RouteError::NoSuchNet));
        assert_eq!(
            t.del(Some(Net::ANY), None),
            Ok(Deleted { routes: 2, nets: 2 })
        );
        assert!(t.routes().is_empty());
        assert!(t.version() > v);
    }

    #[test]
    fn consolidated_gateways_take_their_routes() {
        let mut t = table();
        let a = nid("10.0.0.1@tcp");
        let b = nid("10.0.0.2@tcp");
        t.add(&RouteSpec::new(net("tcp5"), a), a, &cx(0)).unwrap();
        t.add(&RouteSpec::new(net("tcp6"), b), a, &cx(0)).unwrap();
        // b's NID moved to peer c; a keeps its own NID.
        let c = nid("10.0.0.3@tcp");
        t.move_gateway(&a, c, |n| *n == a);
        assert_eq!(t.routes_via(&a).count(), 1);
        assert_eq!(t.routes_via(&c).next().map(|r| r.net), Some(net("tcp6")));
    }

    #[test]
    fn show_filters_and_views() {
        let mut t = table();
        let g = nid("10.0.0.1@tcp");
        let spec = RouteSpec {
            hops: 2,
            priority: 3,
            sensitivity: Some(100),
            ..RouteSpec::new(net("tcp5"), g)
        };
        t.add(&spec, g, &cx(0)).unwrap();
        add(&mut t, "tcp6", "10.0.0.2@tcp").unwrap();
        t.routes_to_mut(net("tcp6"))[0].single_hop = true;
        let all: Vec<RouteView> = t.show(ShowFilter::default(), |r| r.hops == 2).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(
            all[0],
            RouteView {
                net: net("tcp5"),
                gateway: g,
                hop: 2,
                priority: 3,
                health_sensitivity: Some(100),
                up: true,
                multi_hop: true,
            }
        );
        assert_eq!((all[0].state(), all[0].kind()), ("up", "multi-hop"));
        assert_eq!((all[1].state(), all[1].kind()), ("down", "single-hop"));
        assert_eq!(all[1].hop, -1);
        let f = ShowFilter {
            priority: Some(0),
            ..ShowFilter::default()
        };
        assert_eq!(t.show(f, |_| true).count(), 1);
        let f = ShowFilter {
            hops: Some(UNDEFINED_HOPS),
            gateway: Some(nid("10.0.0.2@tcp")),
            net: Some(net("tcp6")),
            ..ShowFilter::default()
        };
        assert_eq!(t.show(f, |_| true).count(), 1);
        assert_eq!(t.get(1).map(|r| r.net), Ok(net("tcp6")));
        assert_eq!(t.get(2).map_err(RouteError::errno), Err(-ENOENT));
    }

    #[test]
    fn ioctl_flags_and_warnings() {
        assert_eq!(route_flags(0, true, true), RT_ALIVE);
        assert_eq!(route_flags(RT_ALIVE, false, false), RT_MULTI_HOP);
        assert_eq!(
            route_flags(0x10, true, false),
            0x10 | RT_ALIVE | RT_MULTI_HOP
        );
        assert!(warn_undefined_hops(true, UNDEFINED_HOPS));
        assert!(!warn_undefined_hops(true, 1));
        assert!(!warn_undefined_hops(false, UNDEFINED_HOPS));
        assert_eq!(
            RouteError::Unreachable.add_message(),
            "No interface configured on the same net as gateway"
        );
    }
}
