//! Multi-Rail selection rankings (selection.md §2, §3, §4, §6): which local
//! NI, peer net, peer NI and route win among candidates. The kernel side
//! gathers the candidates under its locks and applies the choice; the order
//! of criteria lives here.
//!
//! Every ranking walks candidates in list order and replaces the current
//! best only with a strictly better one, so ties keep the earlier candidate
//! (routes differ at their last criterion; see `best_route`).

use super::nid::Net;
use core::cmp::{Ordering, Reverse};

/// A local NI as `lnet_get_best_ni` compares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NiCandidate {
    /// The LND marked the NI down (`ni_fatal_error_on`).
    pub fatal: bool,
    /// `ni_healthv`.
    pub health: u32,
    /// UDSP priority (`ni_sel_priority`; `u32::MAX` when unset).
    pub sel_priority: u32,
    /// GPU device priority (`u32::MAX` unless the MD is GPU memory).
    pub dev_priority: u32,
    /// NUMA distance from the MD's CPT to the NI's device.
    pub distance: u32,
    /// `ni_tx_credits` (negative while messages queue).
    pub tx_credits: i32,
    /// Round-robin sequence (`ni_seq`).
    pub seq: u64,
}

impl NiCandidate {
    /// Distances below `numa_range` compare equal unless the MD is GPU
    /// memory.
    fn key(&self, numa_range: u32, gpu: bool) -> impl Ord {
        let distance = if gpu {
            self.distance
        } else {
            self.distance.max(numa_range)
        };
        (
            !self.fatal,
            self.health,
            Reverse(self.sel_priority),
            Reverse(self.dev_priority),
            Reverse(distance),
            self.tx_credits,
            Reverse(self.seq),
        )
    }
}

/// A peer NI as `lnet_select_peer_ni` compares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerNiCandidate {
    /// `lpni_healthv`.
    pub health: u32,
    /// UDSP priority (`lpni_sel_priority`).
    pub sel_priority: u32,
    /// The chosen local NI is on this peer NI's preferred list.
    pub preferred: bool,
    /// `lpni_txcredits`.
    pub tx_credits: i32,
    /// Round-robin sequence (`lpni_seq`).
    pub seq: u64,
}

impl PeerNiCandidate {
    fn key(&self) -> impl Ord {
        (
            self.health,
            Reverse(self.sel_priority),
            self.preferred,
            self.tx_credits,
            Reverse(self.seq),
        )
    }
}

/// A peer net shared with a local net, as `lnet_find_best_ni_on_local_net`
/// compares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetCandidate {
    /// `lpn_healthv`: best peer-NI health in the peer net.
    pub peer_net_health: u32,
    /// UDSP priority of the peer net.
    pub peer_net_priority: u32,
    /// Health of the best non-fatal local NI of the net.
    pub local_net_health: u32,
    /// UDSP priority of the local net.
    pub local_net_priority: u32,
    /// `lpn_seq`.
    pub peer_net_seq: u64,
    /// `net_seq`.
    pub local_net_seq: u64,
}

impl NetCandidate {
    fn key(&self) -> impl Ord {
        (
            self.peer_net_health,
            Reverse(self.peer_net_priority),
            self.local_net_health,
            Reverse(self.local_net_priority),
            Reverse(self.peer_net_seq),
            Reverse(self.local_net_seq),
        )
    }
}

/// A route with its gateway, as `lnet_find_route_locked` compares them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteCandidate {
    /// The gateway is on the destination's UDSP preferred-router list.
    pub preferred_gateway: bool,
    /// `lr_priority`.
    pub priority: u32,
    /// Hop count; `None` (undefined) counts as 1.
    pub hops: Option<u32>,
    /// Health of the gateway's best peer NI on the source net.
    pub gateway_health: u32,
    /// Bytes queued to that peer NI (`lpni_txqnob`).
    pub gateway_queued: u64,
    /// Its `lpni_txcredits`.
    pub gateway_credits: i32,
    /// `lr_seq`.
    pub seq: u64,
}

impl RouteCandidate {
    fn key(&self) -> impl Ord {
        (
            self.preferred_gateway,
            Reverse(self.priority),
            Reverse(self.hops.unwrap_or(1)),
            self.gateway_health,
            Reverse(self.gateway_queued),
            self.gateway_credits,
        )
    }
}

/// Index of the best of `items` by `key`, strictly-better-replaces.
fn best_by<T, K: Ord>(items: impl IntoIterator<Item = T>, key: impl Fn(&T) -> K) -> Option<usize> {
    let mut best: Option<(usize, K)> = None;
    for (i, item) in items.into_iter().enumerate() {
        let k = key(&item);
        // Not `is_none_or`: the kernel's minimum Rust is 1.78.
        if best.as_ref().map_or(true, |(_, b)| k > *b) {
            best = Some((i, k));
        }
    }
    best.map(|(i, _)| i)
}

/// The local NI to send from (§2), as an index into `nis`.
pub fn best_ni(nis: &[NiCandidate], numa_range: u32, gpu: bool) -> Option<usize> {
    best_by(nis, |n| n.key(numa_range, gpu))
}

/// The peer NI to send to (§3.1), as an index into `lpnis`.
pub fn best_peer_ni(lpnis: &[PeerNiCandidate]) -> Option<usize> {
    best_by(lpnis, |p| p.key())
}

/// The net to use for a Multi-Rail peer (§3.1), as an index into `nets`.
pub fn best_net(nets: &[NetCandidate]) -> Option<usize> {
    best_by(nets, |n| n.key())
}

/// The route to use (§4), as an index into `routes` (alive routes whose
/// gateway has a peer NI on the source net). At the last criterion a
/// strictly higher `lr_seq` loses and an equal one replaces the best.
pub fn best_route(routes: &[RouteCandidate]) -> Option<usize> {
    choose_route(routes.iter().map(|r| (true, true, *r))).map(|c| c.index)
}

/// A route to the destination's net as `lnet_find_route_locked` walks
/// them, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteOption {
    /// The route is alive (router_check.rs `route_alive`); dead routes
    /// are skipped and do not count for round robin.
    pub alive: bool,
    /// The gateway has a peer NI on the source net; a route whose gateway
    /// has none is skipped but still counts for round robin.
    pub reachable: bool,
    /// The route ranked with that peer NI (its gateway fields are unused
    /// when not `reachable`; its `seq` always counts).
    pub route: RouteCandidate,
}

/// The route chosen for a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteChoice {
    /// Index of the route.
    pub index: usize,
    /// The sequence number the chosen route takes (`lr_seq`): one past
    /// the highest of the routes seen from the first usable one on, so
    /// that equal routes take turns.
    pub seq: u64,
}

/// The route for a message to a remote net (§4, `lnet_find_route_locked`
/// and its caller): among alive routes whose gateway has a peer NI on the
/// source net, the best by UDSP preference, priority, hops, then the
/// gateway NI's health, queued bytes and credits; ties go to the lower
/// `lr_seq` (an equal one to the later route). A message that names its
/// router (a reply or an ACK) does not go through here and takes no
/// sequence number.
pub fn select_route(routes: &[RouteOption]) -> Option<RouteChoice> {
    choose_route(routes.iter().map(|o| (o.alive, o.reachable, o.route)))
}

/// [`select_route`] over `(alive, reachable, route)`.
fn choose_route(routes: impl Iterator<Item = (bool, bool, RouteCandidate)>) -> Option<RouteChoice> {
    let mut best: Option<(usize, RouteCandidate)> = None;
    // The most recently used route, as Lustre tracks it: from the first
    // route chosen on, the alive route with the highest sequence.
    let mut last_seq: Option<u64> = None;
    for (i, (alive, reachable, c)) in routes.enumerate() {
        if !alive {
            continue;
        }
        if let Some(l) = last_seq {
            last_seq = Some(l.max(c.seq));
        }
        if !reachable {
            continue;
        }
        let replace = match best {
            None => true,
            Some((_, b)) => match c.key().cmp(&b.key()) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => c.seq <= b.seq,
            },
        };
        if replace {
            best = Some((i, c));
            if last_seq.is_none() {
                last_seq = Some(c.seq);
            }
        }
    }
    let (index, _) = best?;
    Some(RouteChoice {
        index,
        seq: last_seq.unwrap_or(0).wrapping_add(1),
    })
}

/// Round-robin state kept per peer and globally (§6): after each send the
/// chosen peer NI and its peer net take the peer's next sequence number,
/// and the chosen NI and its net take the next global one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sequencer {
    next: u64,
}

impl Sequencer {
    /// The sequence number for the next use.
    pub fn bump(&mut self) -> u64 {
        self.next = self.next.wrapping_add(1);
        self.next
    }
}

/// A local NI as the choice of a Multi-Rail peer's net sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalNiView {
    /// Its net.
    pub net: Net,
    /// It carries traffic (started, not being removed).
    pub active: bool,
    /// Its link is down (`lnet_set_link_fatal_state`).
    pub fatal: bool,
    /// Its health value.
    pub health: u32,
    /// Its round-robin sequence.
    pub seq: u64,
    /// UDSP priority of its net.
    pub net_priority: u32,
}

/// A peer NI as the choice of a Multi-Rail peer's net sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerNiView {
    /// Its net.
    pub net: Net,
    /// Its health value.
    pub health: u32,
    /// UDSP priority of its peer net.
    pub net_priority: u32,
    /// Its node reports it down in its ping buffer.
    pub reported_down: bool,
}

/// Whether one of the peer NIs (on `net`, or on any net) is not reported
/// down by its node.
pub fn reported_up<I: Iterator<Item = PeerNiView>>(peer_nis: I, net: Option<Net>) -> bool {
    peer_nis
        .filter(|q| net.map_or(true, |n| q.net == n))
        .any(|q| !q.reported_down)
}

/// The nets a Multi-Rail peer can be sent over, each with its ranking
/// candidate for [`best_net`], in the order of the peer's NIs (one per
/// net). A net needs an active local NI. Two decisions leave nets out
/// while another remains: a net whose local NIs are all fatal (Lustre
/// compares peer-net health first and keeps sending over a dead link
/// until the peer NI loses health; here a rail cut moves traffic at
/// once), and a net whose peer NIs the peer's node all reports down
/// (Lustre only charges health for the report). A net's local health is
/// its best non-fatal NI's.
pub fn net_candidates<LI, PI>(
    locals: impl Fn() -> LI + Copy,
    peer_nis: impl Fn() -> PI + Copy,
    peer_net_seq: impl Fn(Net) -> u64,
) -> impl Iterator<Item = (Net, NetCandidate)>
where
    LI: Iterator<Item = LocalNiView>,
    PI: Iterator<Item = PeerNiView>,
{
    let usable = move |net: Net, with_fatal: bool| {
        locals().any(|x| x.active && x.net == net && (with_fatal || !x.fatal))
    };
    let with_fatal = !peer_nis().any(|p| usable(p.net, false));
    let with_down = !reported_up(peer_nis(), None);
    let first_of_net = move |i: usize, net: Net| peer_nis().position(|q| q.net == net) == Some(i);
    peer_nis()
        .enumerate()
        .filter(move |(i, p)| first_of_net(*i, p.net))
        .filter(move |(_, p)| usable(p.net, with_fatal))
        .filter(move |(_, p)| with_down || reported_up(peer_nis(), Some(p.net)))
        .filter_map(move |(_, p)| {
            let net = p.net;
            let (mut health, mut seq, mut any) = (0, 0, false);
            let mut local_prio = u32::MAX;
            for x in locals().filter(|x| x.active && x.net == net) {
                any = true;
                // Fatal NIs do not count towards the net's health.
                if !x.fatal {
                    health = health.max(x.health);
                }
                seq = seq.max(x.seq);
                local_prio = local_prio.min(x.net_priority);
            }
            let on_net = || peer_nis().filter(move |q| q.net == net);
            let c = NetCandidate {
                peer_net_health: on_net().map(|q| q.health).max().unwrap_or(0),
                peer_net_priority: on_net().map(|q| q.net_priority).min().unwrap_or(u32::MAX),
                local_net_health: health,
                local_net_priority: local_prio,
                peer_net_seq: peer_net_seq(net),
                local_net_seq: seq,
            };
            any.then_some((net, c))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    const NI: NiCandidate = NiCandidate {
        fatal: false,
        health: 1000,
        sel_priority: u32::MAX,
        dev_priority: u32::MAX,
        distance: 0,
        tx_credits: 8,
        seq: 0,
    };

    // The spec's own words, written as a chain of "first criterion that
    // differs decides", to check the key orderings against.
    fn ni_better(c: &NiCandidate, b: &NiCandidate, numa: u32) -> bool {
        if c.fatal != b.fatal {
            return !c.fatal;
        }
        if c.health != b.health {
            return c.health > b.health;
        }
        if c.sel_priority != b.sel_priority {
            return c.sel_priority < b.sel_priority;
        }
        if c.dev_priority != b.dev_priority {
            return c.dev_priority < b.dev_priority;
        }
        let (cd, bd) = (c.distance.max(numa), b.distance.max(numa));
        if cd != bd {
            return cd < bd;
        }
        if c.tx_credits != b.tx_credits {
            return c.tx_credits > b.tx_credits;
        }
        c.seq < b.seq
    }

    fn reference<T>(items: &[T], better: impl Fn(&T, &T) -> bool) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, c) in items.iter().enumerate() {
            match best {
                Some(b) if !better(c, &items[b]) => {}
                _ => best = Some(i),
            }
        }
        best
    }

    fn ni_values() -> Vec<NiCandidate> {
        let mut v = Vec::new();
        for fatal in [false, true] {
            for health in [0, 900, 1000] {
                for sel_priority in [0, u32::MAX] {
                    for dev_priority in [1, u32::MAX] {
                        for distance in [0, 10, 20] {
                            for tx_credits in [-1, 8] {
                                for seq in [1, 2] {
                                    v.push(NiCandidate {
                                        fatal,
                                        health,
                                        sel_priority,
                                        dev_priority,
                                        distance,
                                        tx_credits,
                                        seq,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        v
    }

    #[test]
    fn ni_ranking_matches_the_spec_for_every_pair() {
        let all = ni_values();
        for numa in [0, 15] {
            for a in &all {
                for b in &all {
                    let pair = [*a, *b];
                    assert_eq!(
                        best_ni(&pair, numa, false),
                        reference(&pair, |c, x| ni_better(c, x, numa)),
                        "{a:?} {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn ni_ranking_matches_the_spec_for_triples() {
        let all: Vec<_> = ni_values().into_iter().step_by(7).collect();
        for a in &all {
            for b in &all {
                for c in &all {
                    let t = [*a, *b, *c];
                    assert_eq!(
                        best_ni(&t, 0, false),
                        reference(&t, |x, y| ni_better(x, y, 0))
                    );
                }
            }
        }
    }

    #[test]
    fn ni_scenarios() {
        // Any non-fatal NI beats any fatal one, whatever the health.
        let sick = NiCandidate { health: 0, ..NI };
        let fatal = NiCandidate { fatal: true, ..NI };
        assert_eq!(best_ni(&[fatal, sick], 0, false), Some(1));
        // Health 0 does not exclude: it is used when it is the only choice.
        assert_eq!(best_ni(&[sick], 0, false), Some(0));
        // Lower health loses to higher.
        assert_eq!(
            best_ni(&[NiCandidate { health: 900, ..NI }, NI], 0, false),
            Some(1)
        );
        // NUMA distances below the range compare equal; then credits decide.
        let near = NiCandidate {
            distance: 10,
            tx_credits: 1,
            ..NI
        };
        let far = NiCandidate {
            distance: 12,
            tx_credits: 5,
            ..NI
        };
        assert_eq!(best_ni(&[near, far], 0, false), Some(0));
        assert_eq!(best_ni(&[near, far], 15, false), Some(1));
        // ...but not for GPU memory.
        assert_eq!(best_ni(&[near, far], 15, true), Some(0));
        // Equal in everything: the earlier one.
        assert_eq!(best_ni(&[NI, NI], 0, false), Some(0));
        assert_eq!(best_ni(&[], 0, false), None);
    }

    #[test]
    fn round_robin_alternates_between_equal_rails() {
        let mut nis = [NiCandidate { seq: 0, ..NI }, NiCandidate { seq: 0, ..NI }];
        let mut global = Sequencer::default();
        let mut used = [0u32; 2];
        for _ in 0..10 {
            let i = best_ni(&nis, 0, false).unwrap();
            used[i] += 1;
            nis[i].seq = global.bump();
        }
        assert_eq!(used, [5, 5]);
        // A rail that lost health stops being used while the other is healthy.
        nis[1].health = 900;
        for _ in 0..4 {
            let i = best_ni(&nis, 0, false).unwrap();
            assert_eq!(i, 0);
            nis[i].seq = global.bump();
        }
    }

    #[test]
    fn peer_ni_ranking() {
        let p = PeerNiCandidate {
            health: 1000,
            sel_priority: u32::MAX,
            preferred: false,
            tx_credits: 8,
            seq: 5,
        };
        let better = |c: &PeerNiCandidate, b: &PeerNiCandidate| {
            if c.health != b.health {
                return c.health > b.health;
            }
            if c.sel_priority != b.sel_priority {
                return c.sel_priority < b.sel_priority;
            }
            if c.preferred != b.preferred {
                return c.preferred;
            }
            if c.tx_credits != b.tx_credits {
                return c.tx_credits > b.tx_credits;
            }
            c.seq < b.seq
        };
        let mut all = Vec::new();
        for health in [0, 1000] {
            for sel_priority in [1, u32::MAX] {
                for preferred in [false, true] {
                    for tx_credits in [0, 8] {
                        for seq in [1, 2] {
                            all.push(PeerNiCandidate {
                                health,
                                sel_priority,
                                preferred,
                                tx_credits,
                                seq,
                            });
                        }
                    }
                }
            }
        }
        for a in &all {
            for b in &all {
                for c in &all {
                    let t = [*a, *b, *c];
                    assert_eq!(best_peer_ni(&t), reference(&t, better));
                }
            }
        }
        // Preference only counts among equally healthy peer NIs.
        let pref = PeerNiCandidate {
            preferred: true,
            health: 900,
            ..p
        };
        assert_eq!(best_peer_ni(&[pref, p]), Some(1));
    }

    #[test]
    fn net_ranking() {
        let n = NetCandidate {
            peer_net_health: 1000,
            peer_net_priority: u32::MAX,
            local_net_health: 1000,
            local_net_priority: u32::MAX,
            peer_net_seq: 3,
            local_net_seq: 3,
        };
        // Peer-net health first, then local net health, then sequences.
        assert_eq!(
            best_net(&[
                NetCandidate {
                    peer_net_health: 900,
                    ..n
                },
                n
            ]),
            Some(1)
        );
        assert_eq!(
            best_net(&[
                n,
                NetCandidate {
                    local_net_health: 900,
                    peer_net_seq: 0,
                    ..n
                }
            ]),
            Some(0)
        );
        assert_eq!(
            best_net(&[
                n,
                NetCandidate {
                    peer_net_seq: 2,
                    ..n
                }
            ]),
            Some(1)
        );
        assert_eq!(
            best_net(&[
                n,
                NetCandidate {
                    local_net_seq: 2,
                    ..n
                }
            ]),
            Some(1)
        );
        assert_eq!(best_net(&[n, n]), Some(0));
        assert_eq!(
            best_net(&[
                n,
                NetCandidate {
                    peer_net_priority: 0,
                    peer_net_health: 999,
                    ..n
                }
            ]),
            Some(0)
        );
    }

    #[test]
    fn route_ranking() {
        let r = RouteCandidate {
            preferred_gateway: false,
            priority: 0,
            hops: None,
            gateway_health: 1000,
            gateway_queued: 0,
            gateway_credits: 8,
            seq: 5,
        };
        assert_eq!(
            best_route(&[
                r,
                RouteCandidate {
                    preferred_gateway: true,
                    priority: 9,
                    ..r
                }
            ]),
            Some(1)
        );
        assert_eq!(
            best_route(&[r, RouteCandidate { priority: 1, ..r }]),
            Some(0)
        );
        // An undefined hop count is 1.
        assert_eq!(
            best_route(&[RouteCandidate { hops: Some(2), ..r }, r]),
            Some(1)
        );
        assert_eq!(
            best_route(&[r, RouteCandidate { hops: Some(1), ..r }]),
            Some(1)
        );
        assert_eq!(
            best_route(&[
                r,
                RouteCandidate {
                    gateway_health: 900,
                    ..r
                }
            ]),
            Some(0)
        );
        assert_eq!(
            best_route(&[
                r,
                RouteCandidate {
                    gateway_queued: 10,
                    ..r
                }
            ]),
            Some(0)
        );
        // Last criterion: a higher lr_seq loses, an equal one replaces.
        assert_eq!(best_route(&[r, RouteCandidate { seq: 6, ..r }]), Some(0));
        assert_eq!(best_route(&[r, RouteCandidate { seq: 4, ..r }]), Some(1));
        assert_eq!(best_route(&[r, r, r]), Some(2));
        assert_eq!(best_route(&[]), None);
    }

    fn opt(alive: bool, reachable: bool, seq: u64) -> RouteOption {
        RouteOption {
            alive,
            reachable,
            route: RouteCandidate {
                preferred_gateway: false,
                priority: 0,
                hops: None,
                gateway_health: 1000,
                gateway_queued: 0,
                gateway_credits: 8,
                seq,
            },
        }
    }

    #[test]
    fn route_selection_skips_dead_and_unreachable() {
        assert_eq!(select_route(&[]), None);
        assert_eq!(
            select_route(&[opt(false, true, 0), opt(true, false, 0)]),
            None
        );
        let c = select_route(&[opt(false, true, 0), opt(true, true, 3), opt(true, true, 3)]);
        // Equal routes: the later replaces; the next sequence is 4.
        assert_eq!(c, Some(RouteChoice { index: 2, seq: 4 }));
        // A dead route's sequence does not count, an unreachable alive
        // one's does once a route was chosen, but not before.
        let c = select_route(&[opt(true, true, 1), opt(false, true, 9), opt(true, false, 7)]);
        assert_eq!(c, Some(RouteChoice { index: 0, seq: 8 }));
        let c = select_route(&[opt(true, false, 7), opt(true, true, 1)]);
        assert_eq!(c, Some(RouteChoice { index: 1, seq: 2 }));
        // Priority beats everything after it; hops 0 is not "undefined".
        let mut low = opt(true, true, 0);
        low.route.priority = 1;
        low.route.gateway_health = 1000;
        let mut worse = opt(true, true, 0);
        worse.route.gateway_health = 1;
        assert_eq!(select_route(&[worse, low]).map(|c| c.index), Some(0));
        let mut two = opt(true, true, 0);
        two.route.hops = Some(2);
        assert_eq!(
            select_route(&[two, opt(true, true, 5)]).map(|c| c.index),
            Some(1)
        );
    }

    #[test]
    fn equal_routes_take_turns() {
        let mut routes = [opt(true, true, 0), opt(true, true, 0), opt(true, true, 0)];
        let mut order = Vec::new();
        for _ in 0..6 {
            let c = select_route(&routes).unwrap();
            routes[c.index].route.seq = c.seq;
            order.push(c.index);
        }
        assert_eq!(order, [2, 1, 0, 2, 1, 0]);
        // A dead route drops out of the turns; back alive, it is first
        // (its sequence is the lowest).
        routes[1].alive = false;
        let mut order = Vec::new();
        for _ in 0..4 {
            let c = select_route(&routes).unwrap();
            routes[c.index].route.seq = c.seq;
            order.push(c.index);
        }
        assert_eq!(order, [2, 0, 2, 0]);
        routes[1].alive = true;
        assert_eq!(select_route(&routes).map(|c| c.index), Some(1));
    }

    fn net(s: &str) -> Net {
        Net::parse(s).unwrap()
    }

    fn local(n: &str, fatal: bool, health: u32, seq: u64) -> LocalNiView {
        LocalNiView {
            net: net(n),
            active: true,
            fatal,
            health,
            seq,
            net_priority: u32::MAX,
        }
    }

    fn lpni(n: &str, health: u32, down: bool) -> PeerNiView {
        PeerNiView {
            net: net(n),
            health,
            net_priority: u32::MAX,
            reported_down: down,
        }
    }

    fn nets_of(locals: &[LocalNiView], peers: &[PeerNiView]) -> std::vec::Vec<(Net, NetCandidate)> {
        net_candidates(|| locals.iter().copied(), || peers.iter().copied(), |_| 7).collect()
    }

    #[test]
    fn one_candidate_per_shared_net_in_peer_ni_order() {
        let locals = [
            local("tcp", false, 900, 3),
            local("tcp", true, 1000, 5),
            local("tcp1", false, 1000, 1),
        ];
        let peers = [
            lpni("tcp1", 1000, false),
            lpni("tcp", 500, false),
            lpni("tcp1", 800, false),
            lpni("o2ib", 1000, false),
        ];
        let c = nets_of(&locals, &peers);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].0, net("tcp1"));
        assert_eq!(c[1].0, net("tcp"));
        // A fatal NI's health does not count; its sequence does.
        assert_eq!(c[1].1.local_net_health, 900);
        assert_eq!(c[1].1.local_net_seq, 5);
        assert_eq!(c[0].1.peer_net_health, 1000);
        assert_eq!(c[1].1.peer_net_seq, 7);
    }

    #[test]
    fn nets_with_only_fatal_nis_wait_for_the_others() {
        let peers = [lpni("tcp", 1000, false), lpni("tcp1", 1000, false)];
        let one_fatal = [local("tcp", true, 1000, 0), local("tcp1", false, 1000, 0)];
        let c = nets_of(&one_fatal, &peers);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].0, net("tcp1"));
        let all_fatal = [local("tcp", true, 1000, 0), local("tcp1", true, 1000, 0)];
        assert_eq!(nets_of(&all_fatal, &peers).len(), 2);
    }

    #[test]
    fn nets_reported_down_wait_for_the_others() {
        let locals = [local("tcp", false, 1000, 0), local("tcp1", false, 1000, 0)];
        let one_down = [lpni("tcp", 1000, true), lpni("tcp1", 1000, false)];
        let c = nets_of(&locals, &one_down);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].0, net("tcp1"));
        let all_down = [lpni("tcp", 1000, true), lpni("tcp1", 1000, true)];
        assert_eq!(nets_of(&locals, &all_down).len(), 2);
        assert!(!reported_up(all_down.iter().copied(), None));
        assert!(reported_up(one_down.iter().copied(), Some(net("tcp1"))));
    }

    #[test]
    fn inactive_nis_and_nets_we_lack_give_no_candidate() {
        let mut idle = local("tcp", false, 1000, 0);
        idle.active = false;
        let peers = [lpni("tcp", 1000, false), lpni("o2ib", 1000, false)];
        assert!(nets_of(&[idle], &peers).is_empty());
    }
}
