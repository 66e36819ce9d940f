//! How far a NID is from this node (`LNetDist`): the distance and order
//! PtlRPC ranks a server's NIDs by (`ptlrpc_uuid_to_peer`), and what
//! `lctl which_nid` prints.
//!
//! Lustre's rules followed here:
//! - The NIs are walked in order, `0@lo` first; the walk's order counter
//!   starts at 2 and counts every NI passed.
//! - A local NID is distance 0 (1 with `local_nid_dist_zero` off), order
//!   0 for `0@lo` and 1 for any other, and is its own source.
//! - Else the first NI on the NID's net: distance 1, the counter's value
//!   at that NI as order, that NI's NID as source (a later exact match
//!   still wins).
//! - Else a remote net with routes: distance the shortest route's hops
//!   plus one (a route given no hop count counts 1; the first of equal
//!   routes wins), the source the first NI on that route's local net, and
//!   as order the counter after every NI plus the net's place among the
//!   remote nets of its hash bucket.
//! - Else the NID is unreachable (`-EHOSTUNREACH`).
//!
//! lnet-rs has no per-NI network namespace, so Lustre's order offset for
//! an NI of another namespace never applies.

use super::nid::{Net, Nid};
use super::route::{Route, UNDEFINED_HOPS};

/// What `LNetDist` returns for a reachable NID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Distance {
    /// Hops: 0 (or 1) local, 1 on a local net, routes' hops + 1 beyond.
    pub dist: u32,
    /// The rank among NIDs of the same distance: lower is preferred.
    pub order: u32,
    /// The local NID the NID is reached from.
    pub src: Nid,
}

/// The shortest of `routes` (the routes to one remote net, in table
/// order): its hop count (undefined counted as 1) and its local net.
pub fn shortest_route(routes: &[Route]) -> Option<(u32, Net)> {
    let mut best: Option<(u32, Net)> = None;
    for r in routes {
        let hops = if r.hops == UNDEFINED_HOPS { 1 } else { r.hops };
        if best.map_or(true, |(h, _)| hops < h) {
            best = Some((hops, r.local_net()));
        }
    }
    best
}

/// The distance to `dst` from a node whose NIs have the NIDs `nis` (in
/// NI order, `0@lo` first). `route` is the shortest route to `dst`'s net
/// ([`shortest_route`]) and the net's place in its hash bucket, if it is
/// a remote net. `None`: unreachable.
pub fn distance<I>(
    nis: I,
    dst: &Nid,
    dist_zero: bool,
    route: Option<(u32, Net, u32)>,
) -> Option<Distance>
where
    I: Iterator<Item = Nid> + Clone,
{
    let mut order: u32 = 2;
    let mut on_net = None;
    for nid in nis.clone() {
        if nid == *dst {
            return Some(Distance {
                dist: u32::from(!dist_zero),
                order: u32::from(*dst != Nid::LO),
                src: *dst,
            });
        }
        if on_net.is_none() && nid.net() == dst.net() {
            on_net = Some((nid, order));
        }
        order = order.saturating_add(1);
    }
    if let Some((src, order)) = on_net {
        return Some(Distance {
            dist: 1,
            order,
            src,
        });
    }
    let (hops, local, rank) = route?;
    // A route's local net always has an NI (routes to nets without one are
    // refused and go when their net does).
    let src = nis.into_iter().find(|n| n.net() == local)?;
    Some(Distance {
        dist: hops.saturating_add(1),
        order: order.saturating_add(rank),
        src,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    fn nis() -> [Nid; 3] {
        [Nid::LO, nid("10.1.0.1@tcp"), nid("10.2.0.1@tcp1")]
    }

    #[test]
    fn local_nids() {
        let d = distance(nis().into_iter(), &nid("10.2.0.1@tcp1"), true, None).unwrap();
        assert_eq!(
            d,
            Distance {
                dist: 0,
                order: 1,
                src: nid("10.2.0.1@tcp1")
            }
        );
        let d = distance(nis().into_iter(), &Nid::LO, false, None).unwrap();
        assert_eq!((d.dist, d.order), (1, 0));
    }

    #[test]
    fn local_nets_rank_by_ni_order() {
        // 0@lo is order 2, the tcp NI 3, the tcp1 NI 4.
        let d = distance(nis().into_iter(), &nid("10.1.0.9@tcp"), true, None).unwrap();
        assert_eq!(
            d,
            Distance {
                dist: 1,
                order: 3,
                src: nid("10.1.0.1@tcp")
            }
        );
        let d = distance(nis().into_iter(), &nid("10.2.0.9@tcp1"), true, None).unwrap();
        assert_eq!((d.dist, d.order, d.src), (1, 4, nid("10.2.0.1@tcp1")));
        // The first NI of a net is the source.
        let two = [Nid::LO, nid("10.1.0.1@tcp"), nid("10.1.0.2@tcp")];
        let d = distance(two.into_iter(), &nid("10.1.0.9@tcp"), true, None).unwrap();
        assert_eq!((d.order, d.src), (3, nid("10.1.0.1@tcp")));
        // An exact match later in the walk wins over the net.
        let d = distance(two.into_iter(), &nid("10.1.0.2@tcp"), true, None).unwrap();
        assert_eq!((d.dist, d.order), (0, 1));
    }

    #[test]
    fn remote_nets_through_routes() {
        let tcp1 = nid("10.2.0.1@tcp1").net();
        let d = distance(
            nis().into_iter(),
            &nid("10.9.0.1@tcp9"),
            true,
            Some((2, tcp1, 1)),
        )
        .unwrap();
        // Three NIs passed (2 + 3) and the second net of its bucket.
        assert_eq!(
            d,
            Distance {
                dist: 3,
                order: 6,
                src: nid("10.2.0.1@tcp1")
            }
        );
        assert_eq!(
            distance(nis().into_iter(), &nid("10.9.0.1@tcp9"), true, None),
            None
        );
    }

    #[test]
    fn shortest_of_routes() {
        let r = |gw: &str, hops| Route {
            net: nid("1.1.1.1@tcp9").net(),
            gateway: nid(gw),
            gateway_peer: nid(gw),
            hops,
            priority: 0,
            sensitivity: None,
            alive: true,
            single_hop: false,
            seq: 0,
        };
        let routes = [
            r("10.1.0.5@tcp", 3),
            r("10.2.0.5@tcp1", UNDEFINED_HOPS),
            r("10.1.0.6@tcp", 1),
        ];
        assert_eq!(
            shortest_route(&routes),
            Some((1, nid("10.2.0.5@tcp1").net()))
        );
        assert_eq!(shortest_route(&[]), None);
    }
}
