// SPDX-License-Identifier: GPL-2.0

//! The route table of lnet.ko (`lnet_add_route`, `lnet_del_route`,
//! `lnet_get_route`, `lnet_parse_routes`): lnet-core's `RouteTable`, kept
//! in [`crate::peer::Peers`] under the `peers` lock, the lock selection
//! holds while it picks a route and its gateway's peer NI. Gateways are
//! peers: adding a route makes a peer of its gateway NID, as Lustre's
//! `lnet_add_route` does.
//!
//! A route's state is lnet-core `router_check::route_alive` over its
//! gateway peer as the router checker (router_check.rs) left it: the
//! gateway's aliveness, its NIs' statuses from its last ping reply, and
//! whether it routes; where discovery is off for the gateway, the state
//! its last reply (or its addition) cached in the route. The health of the
//! gateway's peer NIs still ranks the routes (select.rs).

use crate::kapi::sys::random_u32;
use crate::lnet_core::discovery::state;
use crate::lnet_core::nid::{Net, Nid};
use crate::lnet_core::nidlist::{NoMem, Seq};
use crate::lnet_core::route::{
    rnet_hash_bits, AddContext, Deleted, List, Route, RouteError, RouteSpec, RouteTable,
};
use crate::lnet_core::router_check::{self, Gateway};
use crate::lnet_core::routes_param;
use crate::peer::{Peer, Peers};
use crate::state::TheLnet;
use crate::{kapi, params};
use kernel::prelude::*;

/// The table's storage: grown under the `peers` spinlock, so without
/// sleeping (the `KVec` lists of nidlist.rs grow with `GFP_KERNEL`).
#[derive(Default)]
pub(crate) struct RouteVec(KVec<Route>);

impl Seq<Route> for RouteVec {
    fn try_push(&mut self, v: Route) -> Result<(), NoMem> {
        self.0.push(v, GFP_ATOMIC).map_err(|_| NoMem)
    }

    fn items(&self) -> &[Route] {
        &self.0
    }

    fn items_mut(&mut self) -> &mut [Route] {
        &mut self.0
    }
}

impl List<Route> for RouteVec {
    fn pop(&mut self) -> Option<Route> {
        kapi::vec::pop(&mut self.0)
    }
}

/// The remote nets and their routes.
pub(crate) struct Routes {
    pub(crate) table: RouteTable<RouteVec>,
}

impl Default for Routes {
    fn default() -> Routes {
        let bits = rnet_hash_bits(params::snapshot().rnet_htable_size);
        Routes {
            table: RouteTable::new(RouteVec::default(), bits),
        }
    }
}

/// A gateway peer as route aliveness sees it (`lnet_is_route_alive`).
pub(crate) struct GatewayView<'a>(pub(crate) Option<&'a Peer>);

impl Gateway for GatewayView<'_> {
    fn alive(&self) -> bool {
        self.0.map_or_else(
            || !params::router_params().check_routers_before_use,
            |p| p.rtr.state.alive,
        )
    }

    fn discovery_disabled(&self) -> bool {
        // `lnet_is_discovery_disabled_locked`.
        self.0.map_or(true, |p| {
            params::snapshot().peer_discovery_disabled != 0
                || !p.multi_rail
                || p.lp_state() & state::NO_DISCOVERY != 0
        })
    }

    fn router_enabled(&self) -> bool {
        self.0.map_or(true, |p| p.rtr.state.router_enabled)
    }

    fn net_up(&self, net: Net) -> Option<bool> {
        let p = self.0?;
        let mut on = p.nis.iter().filter(|n| n.nid.net() == net).peekable();
        on.peek()?;
        Some(on.any(|n| !n.reported_down()))
    }

    fn all_nets_up(&self) -> bool {
        self.0
            .is_some_and(|p| p.nis.iter().all(|n| self.net_up(n.nid.net()) == Some(true)))
    }
}

/// Whether route `r` is up, for selection and `route show`.
pub(crate) fn route_up(peers: &Peers, r: &Route) -> bool {
    let gw = peers
        .find(&r.gateway_peer)
        .and_then(|(pi, _)| peers.list.get(pi));
    let avoid_asym = params::router_params().avoid_asym_router_failure;
    router_check::route_alive(r, &GatewayView(gw), avoid_asym)
}

/// Whether this node has an NI on `net` (`lnet_islocalnet`).
fn is_local_net(lnet: &TheLnet, net: Net) -> bool {
    lnet.nis.lock().nis.iter().any(|n| n.nid.net() == net)
}

/// Adds a route (`lnet_add_route`), making a peer of its gateway.
pub(crate) fn add(lnet: &TheLnet, spec: &RouteSpec) -> Result<(), RouteError> {
    // The local nets are read first: `nis` comes before `peers`.
    let net_local = is_local_net(lnet, spec.net);
    let gw_local = is_local_net(lnet, spec.gateway.net());
    let local =
        |net: Net| (net == spec.net && net_local) || (net == spec.gateway.net() && gw_local);
    let cx = AddContext {
        is_local_net: &local,
        start_down: params::router_params().check_routers_before_use,
        place: random_u32(),
    };
    let mut peers = lnet.peers.lock();
    let existing = peers
        .find(&spec.gateway)
        .and_then(|(pi, _)| peers.list.get(pi))
        .map(|p| p.primary);
    let gateway_peer = existing.unwrap_or(spec.gateway);
    let added = peers.routes.table.add(spec, gateway_peer, &cx)?;
    if existing.is_none() && peers.find_or_create(&spec.gateway).is_err() {
        // No memory for the gateway's peer: the route goes again.
        let _ = peers.routes.table.del(Some(spec.net), Some(gateway_peer));
        return Err(RouteError::NoMem);
    }
    if let Some(p) = peers
        .find(&spec.gateway)
        .and_then(|(pi, _)| peers.list.get_mut(pi))
    {
        p.rtr.route_added(added.new_gateway);
    }
    drop(peers);
    crate::cnet!(
        "Added route to {} via {} (hops {}, priority {}){}\n",
        spec.net,
        spec.gateway,
        crate::lnet_core::route::hops_shown(spec.hops),
        spec.priority,
        if added.new_gateway {
            ", a new gateway"
        } else {
            ""
        }
    );
    Ok(())
}

/// Deletes the routes to `net` (all nets: `None`) through the gateway
/// peer of `gateway` (all gateways: `None`) (`lnet_del_route`).
pub(crate) fn del(
    lnet: &TheLnet,
    net: Option<Net>,
    gateway: Option<Nid>,
) -> Result<Deleted, RouteError> {
    let mut peers = lnet.peers.lock();
    let gateway_peer = gateway.map(|g| {
        peers
            .find(&g)
            .and_then(|(pi, _)| peers.list.get(pi))
            .map_or(g, |p| p.primary)
    });
    let d = peers.routes.table.del(net, gateway_peer)?;
    if d.routes > 0 {
        // Peers that are gateways no more keep nothing of their checks.
        let Peers { list, routes, .. } = &mut *peers;
        for p in list.iter_mut() {
            if p.rtr.state.last_net.is_some() && !crate::router_check::is_gateway(&routes.table, p)
            {
                p.rtr.routes_gone();
            }
        }
    }
    drop(peers);
    if d.routes > 0 {
        crate::cnet!("Deleted {} route(s)\n", d.routes);
    }
    Ok(d)
}

/// The `idx`th route in `route show` order and whether it is up
/// (`lnet_get_route`).
pub(crate) fn get(lnet: &TheLnet, idx: usize) -> Result<(Route, bool), RouteError> {
    let peers = lnet.peers.lock();
    let r = *peers.routes.table.get(idx)?;
    Ok((r, route_up(&peers, &r)))
}

/// Adds the routes of the `routes=` parameter (`lnet_parse_routes`, at
/// LNet startup once the NIs run). A syntax error or a route refused
/// other than as existing or unreachable fails the startup, as in
/// Lustre; the routes added before it stay until LNet goes down.
pub(crate) fn apply_param(lnet: &TheLnet) -> Result {
    let text = params::routes();
    if text.is_empty() {
        return Ok(());
    }
    let is_local_nid = |nid: &Nid| lnet.nis.lock().nis.iter().any(|n| n.nid == *nid);
    match routes_param::apply(text.as_bytes(), is_local_nid, |spec| add(lnet, spec)) {
        Ok(a) => {
            pr_info!(
                "routes=: {} route(s) added, {} skipped\n",
                a.added,
                a.skipped
            );
            if a.im_a_router {
                // Lustre starts its router buffers then; lnet-rs does
                // not forward yet.
                pr_warn!("routes= names this node as a gateway, but lnet-rs does not forward\n");
            }
            Ok(())
        }
        Err(e) => {
            pr_err!(
                "Invalid routes=\"{}\" at \"{}\": {}\n",
                text,
                e.word(text),
                e
            );
            Err(Error::from_errno(e.errno()))
        }
    }
}
