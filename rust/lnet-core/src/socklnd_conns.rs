//! ksocklnd's connection rules (wire.md §5.4-5.6, o2iblnd-events.md §4.2):
//! the typed connections an active side opens, which of them carries a
//! message, what the passive side answers to a hello, and how long to wait
//! before connecting again after a failure.

use super::nid::Nid;
use super::socklnd::{ConnType, KSOCK_MSG_LEN};

/// The connections an active side opens to a peer, in order
/// (`typed_conns` = 1, one of each).
pub const ACTIVE_TYPES: [ConnType; 3] = [ConnType::Control, ConnType::BulkIn, ConnType::BulkOut];

/// Bytes `sizeof(struct ksock_msg)` counts for an LNET message: the
/// `ksock_msg` header and the NID4 LNet header in its union.
pub const LNET_FRAME_LEN: usize = KSOCK_MSG_LEN + 72;

/// How well a connection suits a message (`SOCKNAL_MATCH_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    /// Never on this connection.
    No,
    /// Acceptable when nothing better is up.
    May,
    /// The connection meant for it.
    Yes,
}

/// What is being sent, as connection choice sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// An LNET message with this many payload bytes.
    Lnet(usize),
    /// A NOOP (keepalive or zero-copy ACK) that must not wait behind bulk
    /// data (`nonblk`).
    NonBlockingNoop,
}

/// Whether a connection of type `ctype` (this side's view) may carry
/// `frame`, for hello V3/V4 (`ksocknal_match_tx_v3`).
pub fn match_frame(ctype: ConnType, frame: Frame, min_bulk: usize) -> Match {
    let nob = match frame {
        Frame::Lnet(len) => len.saturating_add(LNET_FRAME_LEN),
        Frame::NonBlockingNoop => {
            return if ctype == ConnType::BulkIn {
                Match::Yes
            } else {
                Match::No
            };
        }
    };
    let bulk = nob >= min_bulk;
    match ctype {
        ConnType::BulkOut if bulk => Match::Yes,
        ConnType::Control if !bulk => Match::Yes,
        ConnType::BulkOut | ConnType::Control => Match::May,
        // The ACK connection carries NOOPs only; V3 never sends on an
        // untyped one.
        ConnType::BulkIn | ConnType::Any | ConnType::None => Match::No,
    }
}

/// One candidate connection: its type and the bytes queued on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// This side's view of the type.
    pub ctype: ConnType,
    /// Bytes waiting to be sent on it.
    pub queued: usize,
}

/// The index of the connection that should carry `frame`: the best match,
/// then the least queued, then the first (`ksocknal_find_conn_locked`).
pub fn choose<I>(conns: I, frame: Frame, min_bulk: usize) -> Option<usize>
where
    I: IntoIterator<Item = Candidate>,
{
    choose_by(conns.into_iter().enumerate(), |(_, c)| *c, frame, min_bulk).map(|(i, _)| i)
}

/// As [`choose`], over any items described by `candidate`: the item itself.
/// Every item is visited, even after a perfect match.
pub fn choose_by<T, I>(
    items: I,
    candidate: impl Fn(&T) -> Candidate,
    frame: Frame,
    min_bulk: usize,
) -> Option<T>
where
    I: IntoIterator<Item = T>,
{
    let mut best: Option<(Match, usize, T)> = None;
    for item in items {
        let c = candidate(&item);
        let m = match_frame(c.ctype, frame, min_bulk);
        if m == Match::No {
            continue;
        }
        let better = match &best {
            None => true,
            Some((bm, bq, _)) => m > *bm || (m == *bm && c.queued < *bq),
        };
        if better {
            best = Some((m, c.queued, item));
        }
    }
    best.map(|(_, _, item)| item)
}

/// What the passive side knows when a hello arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Incoming {
    /// The peer's NID, from its hello.
    pub peer: Nid,
    /// This NI's NID.
    pub me: Nid,
    /// This side is itself connecting to the peer right now.
    pub connecting: bool,
    /// The incarnation the peer's live connections were made with, if any.
    pub known_incarnation: Option<u64>,
    /// The incarnation in this hello.
    pub incarnation: u64,
    /// A live connection of the same type already joins the same two
    /// addresses.
    pub duplicate: bool,
    /// The connection comes from this NI's own address: the NI connecting
    /// to itself, to reach its own NID.
    pub loopback: bool,
}

/// The passive side's answer to a hello (`ksocknal_create_conn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Reply with the inverted type and use the connection.
    Accept,
    /// Both sides are connecting and the peer's NID is the lower: its
    /// connection loses (`EALREADY`, reply NONE). The higher NID's
    /// connections win; an NI connecting to itself (equal NIDs) never
    /// races.
    LostRace,
    /// The peer restarted: its old connections are closed, and this one
    /// is refused too (`ESTALE`, reply NONE); it connects again.
    Stale,
    /// One connection of this type is enough (`EALREADY`, reply NONE).
    /// Never for a loopback connection: both ends of each type, the one
    /// this side opened and the one it accepted, belong to the one peer.
    Duplicate,
}

/// Decides on an incoming hello.
pub fn judge(i: &Incoming) -> Verdict {
    if i.peer < i.me && i.connecting {
        Verdict::LostRace
    } else if i.known_incarnation.is_some_and(|k| k != i.incarnation) {
        Verdict::Stale
    } else if i.duplicate && !i.loopback {
        Verdict::Duplicate
    } else {
        Verdict::Accept
    }
}

/// The first type an active side would still open to a peer whose live
/// connections (this side's view) are `live`, in [`ACTIVE_TYPES`] order;
/// `None` when every one is up. A connection the peer opened counts by
/// its mirrored type (`ksocknal_invert_type`): its BULK_IN is our
/// BULK_OUT, so a peer that opened its three gives us our three
/// (`ksocknal_associate_cb_conn_locked` counting passive connections
/// towards the route, `ksocknal_conn_cb_mask() & ~ksnr_connected`).
pub fn wanted<I: IntoIterator<Item = ConnType>>(live: I) -> Option<ConnType> {
    let mut up = [false; ACTIVE_TYPES.len()];
    for t in live {
        if let Some(i) = ACTIVE_TYPES.iter().position(|a| *a == t) {
            if let Some(u) = up.get_mut(i) {
                *u = true;
            }
        }
    }
    ACTIVE_TYPES
        .iter()
        .zip(up)
        .find(|(_, u)| !*u)
        .map(|(t, _)| *t)
}

/// What a send to a peer knows when deciding whether to connect
/// (`ksocknal_launch_packet`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerState {
    /// This side routes to the peer (Lustre's `ksnp_conn_cb`): it first
    /// sent to it with no connection up, rather than being connected to.
    pub route: bool,
    /// A live connection to the peer exists, either way.
    pub connected: bool,
    /// A handshake from the peer is under way.
    pub accepting: bool,
    /// Every type in [`ACTIVE_TYPES`] is up ([`wanted`] is `None`).
    pub complete: bool,
    /// A connector is already at work for the peer.
    pub connecting: bool,
    /// The reconnect backoff allows an attempt now.
    pub may_connect: bool,
}

/// Whether the send starts a connector, and whether the peer is one this
/// side routes to from now on.
///
/// As Lustre: a peer that connected to us has no route of ours, and we
/// never open connections to it, even for a type it has not opened yet
/// (it is opening them, and would refuse ours as a race or duplicate);
/// its messages go on what it opened, or wait while it connects. Only a
/// peer with no connection and no handshake under way gets a route (in
/// Lustre it was forgotten with its last connection and is added anew),
/// and a route connects only for the types not up, one connector at a
/// time, within the backoff.
pub fn launch(s: &PeerState) -> (bool, bool) {
    let route = s.route || (!s.connected && !s.accepting);
    let connect = route && !s.complete && !s.connecting && s.may_connect;
    (connect, route)
}

/// The wait between connection attempts to one peer (`ksnr_retry_interval`
/// and `ksnr_timeout`), in milliseconds of a monotonic clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backoff {
    /// 0 until an attempt fails; then doubles per failure.
    pub interval_ms: u64,
    /// No attempt before this time.
    pub next_ms: u64,
}

impl Backoff {
    /// Whether a new attempt may start at `now_ms`.
    pub fn may_connect(&self, now_ms: u64) -> bool {
        self.interval_ms == 0 || now_ms >= self.next_ms
    }

    /// An attempt failed at `now_ms`: wait twice as long as last time,
    /// within `[min_ms, max_ms]` (in either order).
    pub fn failed(&mut self, now_ms: u64, min_ms: u64, max_ms: u64) {
        let (lo, hi) = (min_ms.min(max_ms).max(1), min_ms.max(max_ms).max(1));
        self.interval_ms = self.interval_ms.saturating_mul(2).clamp(lo, hi);
        self.next_ms = now_ms.saturating_add(self.interval_ms);
    }

    /// The peer refused because it is connecting to us (or already has
    /// the connection): try again after the shortest wait, which is
    /// usually enough for its connection to arrive.
    pub fn raced(&mut self, now_ms: u64, min_ms: u64) {
        self.interval_ms = min_ms.max(1);
        self.next_ms = now_ms.saturating_add(self.interval_ms);
    }

    /// A connection came up: the next attempt, if any, starts at once.
    pub fn connected(&mut self) {
        *self = Backoff::default();
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    #[test]
    fn small_messages_prefer_control_large_ones_bulk_out() {
        let small = Frame::Lnet(0);
        let large = Frame::Lnet(1024 * 1024);
        assert_eq!(match_frame(ConnType::Control, small, 1024), Match::Yes);
        assert_eq!(match_frame(ConnType::BulkOut, small, 1024), Match::May);
        assert_eq!(match_frame(ConnType::BulkOut, large, 1024), Match::Yes);
        assert_eq!(match_frame(ConnType::Control, large, 1024), Match::May);
        assert_eq!(match_frame(ConnType::BulkIn, large, 1024), Match::No);
        assert_eq!(match_frame(ConnType::Any, small, 1024), Match::No);
        // The threshold counts the framing: 96 bytes of headers.
        assert_eq!(
            match_frame(ConnType::BulkOut, Frame::Lnet(927), 1024),
            Match::May
        );
        assert_eq!(
            match_frame(ConnType::BulkOut, Frame::Lnet(928), 1024),
            Match::Yes
        );
    }

    #[test]
    fn nonblocking_noops_use_the_ack_connection_only() {
        let f = Frame::NonBlockingNoop;
        assert_eq!(match_frame(ConnType::BulkIn, f, 1024), Match::Yes);
        assert_eq!(match_frame(ConnType::Control, f, 1024), Match::No);
        assert_eq!(match_frame(ConnType::BulkOut, f, 1024), Match::No);
    }

    #[test]
    fn choose_prefers_the_match_then_the_shorter_queue() {
        let c = |ctype, queued| Candidate { ctype, queued };
        let conns = [
            c(ConnType::Control, 0),
            c(ConnType::BulkIn, 0),
            c(ConnType::BulkOut, 5000),
        ];
        assert_eq!(choose(conns, Frame::Lnet(1 << 20), 1024), Some(2));
        assert_eq!(choose(conns, Frame::Lnet(8), 1024), Some(0));
        assert_eq!(choose(conns, Frame::NonBlockingNoop, 1024), Some(1));
        // Only a control connection up: bulk goes on it.
        assert_eq!(
            choose([c(ConnType::Control, 0)], Frame::Lnet(1 << 20), 1024),
            Some(0)
        );
        let two = [c(ConnType::BulkOut, 9), c(ConnType::BulkOut, 3)];
        assert_eq!(choose(two, Frame::Lnet(1 << 20), 1024), Some(1));
        assert_eq!(choose([c(ConnType::BulkIn, 0)], Frame::Lnet(1), 1024), None);
        assert_eq!(choose([], Frame::Lnet(1), 1024), None);
    }

    fn incoming(peer: &str, me: &str) -> Incoming {
        Incoming {
            peer: nid(peer),
            me: nid(me),
            connecting: false,
            known_incarnation: None,
            incarnation: 7,
            duplicate: false,
            loopback: false,
        }
    }

    #[test]
    fn an_ni_connecting_to_itself_is_accepted() {
        // Its own connector is at work and it knows its own incarnation:
        // equal NIDs are no race, and the passive end of a type it opened
        // is no duplicate.
        let mut i = incoming("10.0.0.2@tcp", "10.0.0.2@tcp");
        i.loopback = true;
        i.connecting = true;
        i.known_incarnation = Some(7);
        assert_eq!(judge(&i), Verdict::Accept);
        i.duplicate = true;
        assert_eq!(judge(&i), Verdict::Accept);
        // A restart is still a restart.
        i.known_incarnation = Some(8);
        assert_eq!(judge(&i), Verdict::Stale);
        // Another address: duplicates are refused as ever.
        let mut j = incoming("10.0.0.2@tcp", "10.0.0.2@tcp");
        j.duplicate = true;
        assert_eq!(judge(&j), Verdict::Duplicate);
    }

    #[test]
    fn a_loopback_route_completes_with_both_ends() {
        // Its control connection seen from both ends, then its bulk-in,
        // whose passive end is its bulk-out: every type is up.
        let live = [ConnType::Control, ConnType::Control, ConnType::BulkIn];
        assert_eq!(wanted(live), Some(ConnType::BulkOut));
        let live = [
            ConnType::Control,
            ConnType::Control,
            ConnType::BulkIn,
            ConnType::BulkIn.inverse(),
        ];
        assert_eq!(wanted(live), None);
    }

    #[test]
    fn the_higher_nid_wins_a_race() {
        let mut i = incoming("10.0.0.1@tcp", "10.0.0.2@tcp");
        assert_eq!(judge(&i), Verdict::Accept);
        i.connecting = true;
        assert_eq!(judge(&i), Verdict::LostRace);
        // Seen from the lower NID, the higher one's connection is taken.
        let mut j = incoming("10.0.0.2@tcp", "10.0.0.1@tcp");
        j.connecting = true;
        assert_eq!(judge(&j), Verdict::Accept);
    }

    #[test]
    fn a_restarted_peer_is_stale_and_a_second_conn_a_duplicate() {
        let mut i = incoming("10.0.0.9@tcp", "10.0.0.2@tcp");
        i.known_incarnation = Some(7);
        assert_eq!(judge(&i), Verdict::Accept);
        i.known_incarnation = Some(8);
        assert_eq!(judge(&i), Verdict::Stale);
        i.known_incarnation = Some(7);
        i.duplicate = true;
        assert_eq!(judge(&i), Verdict::Duplicate);
    }

    #[test]
    fn a_peer_that_opened_its_three_types_gives_us_ours() {
        let theirs = [ConnType::Control, ConnType::BulkIn, ConnType::BulkOut];
        assert_eq!(wanted(theirs.iter().map(|t| t.inverse())), None);
        // Its control and bulk-in so far: our control and bulk-out; the
        // bulk-in we would open is its bulk-out, still to come.
        let so_far = [ConnType::Control, ConnType::BulkIn];
        assert_eq!(
            wanted(so_far.iter().map(|t| t.inverse())),
            Some(ConnType::BulkIn)
        );
        assert_eq!(wanted([]), Some(ConnType::Control));
        assert_eq!(
            wanted([ConnType::Control, ConnType::BulkIn]),
            Some(ConnType::BulkOut)
        );
    }

    #[test]
    fn we_never_connect_to_a_peer_that_connects_to_us() {
        // It opened its control connection and is opening the rest: we
        // lack a type, but ask for none (Lustre refuses it as a race).
        let passive = PeerState {
            connected: true,
            may_connect: true,
            ..PeerState::default()
        };
        assert_eq!(launch(&passive), (false, false));
        // Its first handshake is under way: wait for it.
        let accepting = PeerState {
            accepting: true,
            may_connect: true,
            ..PeerState::default()
        };
        assert_eq!(launch(&accepting), (false, false));
        // Nothing up and nothing coming: route to it and connect.
        let fresh = PeerState {
            may_connect: true,
            ..PeerState::default()
        };
        assert_eq!(launch(&fresh), (true, true));
        // Our own route keeps connecting the types it lacks, its own or
        // the peer's mirrored ones counting as up...
        let ours = PeerState {
            route: true,
            connected: true,
            may_connect: true,
            ..PeerState::default()
        };
        assert_eq!(launch(&ours), (true, true));
        // ...but never a type it has, twice at once, or within backoff.
        for s in [
            PeerState {
                complete: true,
                ..ours
            },
            PeerState {
                connecting: true,
                ..ours
            },
            PeerState {
                may_connect: false,
                ..ours
            },
        ] {
            assert_eq!(launch(&s), (false, true));
        }
    }

    #[test]
    fn backoff_doubles_from_min_to_max_and_resets() {
        let mut b = Backoff::default();
        assert!(b.may_connect(0));
        b.failed(100, 1000, 60_000);
        assert_eq!(
            b,
            Backoff {
                interval_ms: 1000,
                next_ms: 1100
            }
        );
        assert!(!b.may_connect(1099));
        assert!(b.may_connect(1100));
        let mut waits = std::vec::Vec::new();
        for _ in 0..8 {
            b.failed(0, 1000, 60_000);
            waits.push(b.interval_ms);
        }
        assert_eq!(
            waits,
            [2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]
        );
        b.connected();
        assert!(b.may_connect(0));
        b.raced(10, 1000);
        assert_eq!(b.next_ms, 1010);
    }

    proptest! {
        #[test]
        fn backoff_stays_within_its_bounds(
            fails in 1usize..80,
            min in 0u64..100_000,
            max in 0u64..100_000,
            now in any::<u64>(),
        ) {
            let mut b = Backoff::default();
            for _ in 0..fails {
                b.failed(now, min, max);
                let lo = min.min(max).max(1);
                let hi = min.max(max).max(1);
                prop_assert!(b.interval_ms >= lo && b.interval_ms <= hi);
                prop_assert_eq!(b.next_ms, now.saturating_add(b.interval_ms));
            }
        }

        #[test]
        fn choose_never_picks_a_no_match(
            types in proptest::collection::vec(0i32..4, 0..8),
            queued in proptest::collection::vec(any::<usize>(), 8),
            len in any::<usize>(),
            min_bulk in any::<usize>(),
            noop in any::<bool>(),
        ) {
            let conns: std::vec::Vec<Candidate> = types
                .iter()
                .zip(queued.iter())
                .map(|(t, q)| Candidate { ctype: ConnType::from_i32(*t).unwrap(), queued: *q })
                .collect();
            let frame = if noop { Frame::NonBlockingNoop } else { Frame::Lnet(len) };
            match choose(conns.iter().copied(), frame, min_bulk) {
                Some(i) => {
                    let c = conns[i];
                    let m = match_frame(c.ctype, frame, min_bulk);
                    prop_assert!(m != Match::No);
                    for o in &conns {
                        prop_assert!(match_frame(o.ctype, frame, min_bulk) <= m);
                    }
                }
                None => {
                    for o in &conns {
                        prop_assert_eq!(match_frame(o.ctype, frame, min_bulk), Match::No);
                    }
                }
            }
        }
    }
}
