//! LNet Health policy (health.md §1, §3, §4, §6, §7.1): health values, what
//! each completion status does to health, counters and resends, and the
//! recovery-ping backoff. The kernel side applies the decisions; here they
//! are made.

/// Highest health value.
pub const MAX_HEALTH: u32 = 1000;

/// Decrements a health value by `sensitivity` (to 0 at the bottom).
pub const fn dec(health: u32, sensitivity: u32) -> u32 {
    health.saturating_sub(sensitivity)
}

/// Increments a health value by `sensitivity`, capped at `MAX_HEALTH`.
pub const fn inc(health: u32, sensitivity: u32) -> u32 {
    let h = health.saturating_add(sensitivity);
    if h > MAX_HEALTH {
        MAX_HEALTH
    } else {
        h
    }
}

/// What a local NI's health change does to its status word in the ping
/// buffer (health.md §1): reaching 0 marks it down, reaching the maximum
/// marks it up again; anything in between leaves the word as it was.
/// `Some(true)` is up, `Some(false)` down.
pub const fn ni_status_edge(old: u32, new: u32) -> Option<bool> {
    if new == 0 && old != 0 {
        Some(false)
    } else if new >= MAX_HEALTH && old < MAX_HEALTH {
        Some(true)
    } else {
        None
    }
}

/// How a message completed (`enum lnet_msg_hstatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// Local send interrupted.
    LocalInterrupt = 1,
    /// Dropped locally before reaching the wire.
    LocalDropped = 2,
    /// Aborted locally.
    LocalAborted = 3,
    /// No local route.
    LocalNoRoute = 4,
    /// Local error.
    LocalError = 5,
    /// Timed out locally (e.g. queued on a connection that died).
    LocalTimeout = 6,
    /// The remote side reported an error.
    RemoteError = 7,
    /// Dropped by the remote (connection reset).
    RemoteDropped = 8,
    /// Sent, but the remote never completed it.
    RemoteTimeout = 9,
    /// Timed out, and whether local or remote cannot be told.
    NetworkTimeout = 10,
}

impl Status {
    /// Every status, in value order.
    pub const ALL: [Status; 11] = [
        Status::Ok,
        Status::LocalInterrupt,
        Status::LocalDropped,
        Status::LocalAborted,
        Status::LocalNoRoute,
        Status::LocalError,
        Status::LocalTimeout,
        Status::RemoteError,
        Status::RemoteDropped,
        Status::RemoteTimeout,
        Status::NetworkTimeout,
    ];

    /// From the wire/ABI value.
    pub fn from_u32(v: u32) -> Option<Status> {
        Status::ALL.into_iter().find(|s| *s as u32 == v)
    }

    /// The name used by logs and `--health_error` (`local_dropped`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::LocalInterrupt => "local_interrupt",
            Status::LocalDropped => "local_dropped",
            Status::LocalAborted => "local_aborted",
            Status::LocalNoRoute => "local_no_route",
            Status::LocalError => "local_error",
            Status::LocalTimeout => "local_timeout",
            Status::RemoteError => "remote_error",
            Status::RemoteDropped => "remote_dropped",
            Status::RemoteTimeout => "remote_timeout",
            Status::NetworkTimeout => "network_timeout",
        }
    }

    /// From a name as `lctl net_drop_add --health_error` takes it.
    pub fn from_name(name: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }
}

/// What the message was committed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Committed {
    /// Never committed: no health processing.
    No,
    /// Sent: tx NI and tx peer NI.
    Tx,
    /// Received only: rx NI and rx peer NI; never resent.
    Rx,
    /// Received, then sent back on the same message: the REPLY to a GET.
    /// Handled as sent (tx NI and peer NI, resendable), but its success
    /// raises the peer NI's health as a receive does.
    TxRx,
}

/// For host tests: the first attempt of a send from a Multi-Rail node to a
/// Multi-Rail peer, ending with `status`.
#[cfg(test)]
pub(crate) const fn first_send(status: Status) -> Completion {
    Completion {
        status,
        errno_ok: matches!(status, Status::Ok),
        committed: Committed::Tx,
        has_peer_ni: true,
        late: false,
        monitor_running: true,
        local_multi_rail: true,
        peer_multi_rail: true,
        peer_is_router_or_routing: false,
        peer_is_local: false,
        no_resend: false,
        retry_count: 0,
    }
}

/// The facts about one completion that health processing depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The LND's (or LNet's) health status.
    pub status: Status,
    /// Whether the errno handed to finalize was 0. A disagreement with
    /// `status` skips health processing entirely.
    pub errno_ok: bool,
    /// What the message was committed for.
    pub committed: Committed,
    /// Whether it has the peer NI of its direction (loopback sends and
    /// optimized GET REPLYs do not).
    pub has_peer_ni: bool,
    /// Completion came after the message's deadline.
    pub late: bool,
    /// The monitor thread is running (not shutting down).
    pub monitor_running: bool,
    /// This node has more than one non-loopback NI.
    pub local_multi_rail: bool,
    /// The peer has more than one NI.
    pub peer_multi_rail: bool,
    /// The peer NI belongs to a router, or this node routes.
    pub peer_is_router_or_routing: bool,
    /// The peer NI's NID is one of this node's own NIs.
    pub peer_is_local: bool,
    /// A recovery ping, or a message flagged never to be resent.
    pub no_resend: bool,
    /// Resends already made of this message.
    pub retry_count: u32,
}

/// A change to a health value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Unchanged.
    None,
    /// Lower by sensitivity and queue for recovery.
    Decrement,
    /// Raise by sensitivity.
    Increment,
    /// Peer NI only: raise by sensitivity, reset its ping count and offer
    /// it to the recovery queue again (health.md §3, OK row).
    IncrementAndRequeue,
    /// Peer NI only: set to the maximum (routers, or when routing).
    SetMax,
}

/// Which per-NI / per-peer-NI / global counters a completion moves
/// (health.md §6.1). The status itself says which counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// Nothing counted.
    Nothing,
    /// The local NI's counter for the status, and the global one.
    Local,
    /// The peer NI's counter for the status, and the global one.
    Remote,
    /// The global `successful_resends`.
    SuccessfulResend,
}

/// What health processing decided for one completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Processing ran at all (committed, peer known, statuses agree, not a
    /// late failure, monitor running).
    pub processed: bool,
    /// The local NI's health.
    pub local: Change,
    /// The peer NI's health.
    pub remote: Change,
    /// Counters to move.
    pub counted: Counted,
    /// Resend the message.
    pub resend: bool,
    /// The message hit the retry limit (counts `failed_resends`).
    pub retries_exhausted: bool,
    /// A successful receive: the rx NI's and the peer NI's recovery ping
    /// counts go back to 0, restarting their backoff.
    pub reset_ping_counts: bool,
}

const NOTHING: Decision = Decision {
    processed: false,
    local: Change::None,
    remote: Change::None,
    counted: Counted::Nothing,
    resend: false,
    retries_exhausted: false,
    reset_ping_counts: false,
};

/// Decides what one completion does (`lnet_health_check`, with
/// `lnet_attempt_msg_resend`'s retry limit), given the configured
/// `lnet_retry_count`.
pub fn decide(c: &Completion, lnet_retry_count: u32) -> Decision {
    if c.committed == Committed::No || !c.has_peer_ni {
        return NOTHING;
    }
    if c.errno_ok != (c.status == Status::Ok) {
        return NOTHING;
    }
    // A failure after the deadline is just finalized: no counters, no
    // health, no resend.
    if c.late && c.status != Status::Ok {
        return NOTHING;
    }
    if !c.monitor_running {
        return NOTHING;
    }
    let tx = matches!(c.committed, Committed::Tx | Committed::TxRx);
    let local_resend = tx && c.local_multi_rail;
    let remote_resend = tx && c.peer_multi_rail;
    let remote_health = (c.peer_multi_rail || c.peer_is_router_or_routing) && !c.peer_is_local;
    let remote = if remote_health {
        Change::Decrement
    } else {
        Change::None
    };

    let mut d = Decision {
        processed: true,
        ..NOTHING
    };
    let wants_resend = match c.status {
        Status::Ok => {
            d.local = Change::Increment;
            if matches!(c.committed, Committed::Rx | Committed::TxRx) {
                d.reset_ping_counts = true;
                d.remote = if c.peer_is_router_or_routing {
                    Change::SetMax
                } else {
                    Change::IncrementAndRequeue
                };
            }
            if c.retry_count > 0 {
                d.counted = Counted::SuccessfulResend;
            }
            return d;
        }
        Status::LocalInterrupt
        | Status::LocalDropped
        | Status::LocalAborted
        | Status::LocalNoRoute
        | Status::LocalTimeout => {
            d.local = Change::Decrement;
            d.counted = Counted::Local;
            local_resend
        }
        Status::LocalError => {
            d.local = Change::Decrement;
            d.counted = Counted::Local;
            false
        }
        Status::RemoteDropped => {
            d.remote = remote;
            d.counted = Counted::Remote;
            remote_resend
        }
        Status::RemoteError | Status::RemoteTimeout => {
            d.remote = remote;
            d.counted = Counted::Remote;
            false
        }
        Status::NetworkTimeout => {
            d.local = Change::Decrement;
            d.remote = remote;
            d.counted = Counted::Remote;
            false
        }
    };
    if wants_resend && !c.no_resend {
        if c.retry_count >= lnet_retry_count {
            d.retries_exhausted = lnet_retry_count != 0;
        } else {
            d.resend = true;
        }
    }
    d
}

/// Seconds from its commit on an NI to a message's deadline (health.md
/// §5.1, LU-18566): with an LND timeout `lnd_timeout × (retry_count + 1) +
/// 1`, else `transaction_timeout` (the loopback LND has none). Every
/// attempt of a resent message gets a fresh one.
pub fn msg_deadline_secs(lnd_timeout: i32, retry_count: u32, transaction_timeout: u32) -> u32 {
    match u32::try_from(lnd_timeout) {
        Ok(t) if t > 0 => t
            .saturating_mul(retry_count.saturating_add(1))
            .saturating_add(1),
        _ => transaction_timeout,
    }
}

/// Seconds to the next recovery ping of an NI or peer NI that has been
/// pinged `ping_count` times: 1, 2, 4, ... doubling up to `2^max_count`,
/// then `max_interval` (health.md §7.1).
pub fn recovery_interval(ping_count: u32, max_count: u32, max_interval: u32) -> u32 {
    if ping_count <= max_count {
        1u32.checked_shl(ping_count).unwrap_or(max_interval)
    } else {
        max_interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FAIL: Completion = Completion {
        errno_ok: false,
        ..first_send(Status::Ok)
    };

    #[test]
    fn ni_status_edges() {
        // (old, new, edge): only crossings onto 0 or onto the maximum.
        let table = [
            (100, 0, Some(false)),
            (1000, 0, Some(false)),
            (0, 0, None),
            (500, 400, None),
            (900, 1000, Some(true)),
            (0, 1000, Some(true)),
            (1000, 1000, None),
            (0, 100, None),
            (1000, 900, None),
        ];
        for (old, new, edge) in table {
            assert_eq!(ni_status_edge(old, new), edge, "{old} -> {new}");
        }
    }

    #[test]
    fn decrements_reach_zero_once() {
        // Sensitivity 100 from the maximum: the tenth failure marks the NI
        // down, none before or after it does.
        let mut h = MAX_HEALTH;
        let mut downs = 0;
        for i in 1..=15 {
            let n = dec(h, 100);
            if ni_status_edge(h, n) == Some(false) {
                downs += 1;
                assert_eq!(i, 10);
            }
            h = n;
        }
        assert_eq!(downs, 1);
    }

    fn tx(status: Status) -> Completion {
        Completion {
            status,
            errno_ok: status == Status::Ok,
            ..FAIL
        }
    }

    #[test]
    fn health_arithmetic() {
        assert_eq!(dec(1000, 100), 900);
        assert_eq!(dec(50, 100), 0);
        assert_eq!(dec(0, 100), 0);
        assert_eq!(dec(700, 0), 700);
        assert_eq!(inc(950, 100), 1000);
        assert_eq!(inc(1000, 100), 1000);
        assert_eq!(inc(0, 100), 100);
        assert_eq!(inc(700, 0), 700);
    }

    #[test]
    fn names() {
        for s in Status::ALL {
            assert_eq!(Status::from_name(s.name()), Some(s));
            assert_eq!(Status::from_u32(s as u32), Some(s));
        }
        assert_eq!(Status::from_u32(11), None);
        assert_eq!(Status::from_name("remote"), None);
    }

    // health.md §3, per status, on a multi-rail node talking to a
    // multi-rail peer: (status, local, remote, counted, resend).
    #[test]
    fn the_status_table() {
        use Change::{Decrement as D, Increment as I, None as N};
        let table = [
            (Status::Ok, I, N, Counted::Nothing, false),
            (Status::LocalInterrupt, D, N, Counted::Local, true),
            (Status::LocalDropped, D, N, Counted::Local, true),
            (Status::LocalAborted, D, N, Counted::Local, true),
            (Status::LocalNoRoute, D, N, Counted::Local, true),
            (Status::LocalTimeout, D, N, Counted::Local, true),
            (Status::LocalError, D, N, Counted::Local, false),
            (Status::RemoteDropped, N, D, Counted::Remote, true),
            (Status::RemoteError, N, D, Counted::Remote, false),
            (Status::RemoteTimeout, N, D, Counted::Remote, false),
            (Status::NetworkTimeout, D, D, Counted::Remote, false),
        ];
        for (status, local, remote, counted, resend) in table {
            let d = decide(&tx(status), 2);
            assert!(d.processed, "{status:?}");
            assert_eq!(
                (d.local, d.remote, d.counted, d.resend),
                (local, remote, counted, resend),
                "{status:?}"
            );
            assert!(!d.retries_exhausted);
        }
    }

    #[test]
    fn single_rail_exemptions() {
        // A single-NI node still loses local health but never resends a
        // local failure.
        let one_ni = Completion {
            local_multi_rail: false,
            ..tx(Status::LocalDropped)
        };
        let d = decide(&one_ni, 2);
        assert_eq!((d.local, d.resend), (Change::Decrement, false));
        // A single-NI peer: no remote health and no resend...
        let one_peer_ni = Completion {
            peer_multi_rail: false,
            ..tx(Status::RemoteDropped)
        };
        let d = decide(&one_peer_ni, 2);
        assert_eq!(
            (d.remote, d.resend, d.counted),
            (Change::None, false, Counted::Remote)
        );
        // ...unless it is a router.
        let router = Completion {
            peer_is_router_or_routing: true,
            ..one_peer_ni
        };
        assert_eq!(decide(&router, 2).remote, Change::Decrement);
        // NETWORK_TIMEOUT always costs local health.
        let nt = Completion {
            peer_multi_rail: false,
            local_multi_rail: false,
            ..tx(Status::NetworkTimeout)
        };
        assert_eq!(
            (decide(&nt, 2).local, decide(&nt, 2).remote),
            (Change::Decrement, Change::None)
        );
        // A peer NI that is one of our own NIs goes through local recovery.
        let own = Completion {
            peer_is_local: true,
            ..tx(Status::RemoteTimeout)
        };
        assert_eq!(decide(&own, 2).remote, Change::None);
    }

    #[test]
    fn gates() {
        let late = Completion {
            late: true,
            ..tx(Status::LocalDropped)
        };
        assert_eq!(decide(&late, 2), NOTHING);
        let late_ok = Completion {
            late: true,
            ..tx(Status::Ok)
        };
        assert!(decide(&late_ok, 2).processed);
        let mismatch = Completion {
            errno_ok: true,
            ..tx(Status::LocalDropped)
        };
        assert_eq!(decide(&mismatch, 2), NOTHING);
        let mismatch = Completion {
            errno_ok: false,
            ..tx(Status::Ok)
        };
        assert_eq!(decide(&mismatch, 2), NOTHING);
        assert_eq!(
            decide(
                &Completion {
                    committed: Committed::No,
                    ..tx(Status::LocalDropped)
                },
                2
            ),
            NOTHING
        );
        assert_eq!(
            decide(
                &Completion {
                    has_peer_ni: false,
                    ..tx(Status::LocalDropped)
                },
                2
            ),
            NOTHING
        );
        assert_eq!(
            decide(
                &Completion {
                    monitor_running: false,
                    ..tx(Status::LocalDropped)
                },
                2
            ),
            NOTHING
        );
    }

    #[test]
    fn received_messages() {
        let rx = |s| Completion {
            committed: Committed::Rx,
            ..tx(s)
        };
        let d = decide(&rx(Status::Ok), 2);
        assert_eq!(
            (d.local, d.remote),
            (Change::Increment, Change::IncrementAndRequeue)
        );
        assert!(d.reset_ping_counts);
        assert!(!decide(&tx(Status::Ok), 2).reset_ping_counts);
        let from_router = Completion {
            peer_is_router_or_routing: true,
            ..rx(Status::Ok)
        };
        assert_eq!(decide(&from_router, 2).remote, Change::SetMax);
        // A successful send never raises peer health.
        assert_eq!(decide(&tx(Status::Ok), 2).remote, Change::None);
        // Received-only messages are never resent.
        assert!(!decide(&rx(Status::LocalDropped), 2).resend);
        assert!(!decide(&rx(Status::RemoteDropped), 2).resend);
    }

    #[test]
    fn reply_to_a_get() {
        // Committed for receive (the GET) and for send (its REPLY): a
        // success raises the peer NI as a receive does, a failure is a
        // send's failure and may be resent.
        let reply = |s| Completion {
            committed: Committed::TxRx,
            ..tx(s)
        };
        let d = decide(&reply(Status::Ok), 2);
        assert_eq!(
            (d.local, d.remote),
            (Change::Increment, Change::IncrementAndRequeue)
        );
        assert!(d.reset_ping_counts);
        assert!(decide(&reply(Status::RemoteDropped), 2).resend);
        assert!(decide(&reply(Status::LocalDropped), 2).resend);
        assert_eq!(
            decide(&reply(Status::RemoteError), 2).remote,
            Change::Decrement
        );
    }

    #[test]
    fn retry_limit() {
        // retry_count 2: the original and two resends, three sends at most.
        let at = |n| Completion {
            retry_count: n,
            ..tx(Status::LocalTimeout)
        };
        assert!(decide(&at(0), 2).resend);
        assert!(decide(&at(1), 2).resend);
        let d = decide(&at(2), 2);
        assert_eq!((d.resend, d.retries_exhausted), (false, true));
        // retry_count 0: no resends, and none counted as failed.
        let d = decide(&at(0), 0);
        assert_eq!((d.resend, d.retries_exhausted), (false, false));
        // Recovery pings and no-resend messages are never resent.
        let ping = Completion {
            no_resend: true,
            ..at(0)
        };
        assert_eq!(
            (decide(&ping, 2).resend, decide(&ping, 2).retries_exhausted),
            (false, false)
        );
        // A success after a resend counts as a successful resend.
        let ok = Completion {
            retry_count: 1,
            ..tx(Status::Ok)
        };
        assert_eq!(decide(&ok, 2).counted, Counted::SuccessfulResend);
    }

    #[test]
    fn message_deadlines() {
        // socklnd and o2iblnd defaults: 50 x 3 + 1.
        assert_eq!(msg_deadline_secs(50, 2, 150), 151);
        assert_eq!(msg_deadline_secs(10, 0, 150), 11);
        // No LND timeout (loopback, or not reported): transaction_timeout.
        assert_eq!(msg_deadline_secs(0, 2, 150), 150);
        assert_eq!(msg_deadline_secs(-1, 2, 150), 150);
        assert_eq!(msg_deadline_secs(i32::MAX, u32::MAX, 1), u32::MAX);
    }

    #[test]
    fn backoff_schedule() {
        // Defaults: interval 900, count floor(log2(900)) = 9.
        let waits: std::vec::Vec<u32> = (0..13).map(|n| recovery_interval(n, 9, 900)).collect();
        assert_eq!(
            waits,
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]
        );
        // A small cap: max interval 10 -> count 3.
        let waits: std::vec::Vec<u32> = (0..6).map(|n| recovery_interval(n, 3, 10)).collect();
        assert_eq!(waits, [1, 2, 4, 8, 10, 10]);
        assert_eq!(recovery_interval(0, 0, 1), 1);
        assert_eq!(recovery_interval(40, 40, 7), 7);
    }

    extern crate std;

    proptest! {
        #[test]
        fn health_stays_in_range(h in 0u32..=1000, s in 0u32..=1000, ops in proptest::collection::vec(any::<bool>(), 0..50)) {
            let mut v = h;
            for up in ops {
                v = if up { inc(v, s) } else { dec(v, s) };
                prop_assert!(v <= MAX_HEALTH);
            }
        }

        #[test]
        fn never_resend_past_the_limit(status in 0usize..11, retries in 0u32..10, limit in 0u32..10,
                                       lmr: bool, pmr: bool, rx: bool, no_resend: bool) {
            let s = Status::ALL[status];
            let c = Completion {
                status: s, errno_ok: s == Status::Ok,
                committed: if rx { Committed::Rx } else { Committed::Tx },
                local_multi_rail: lmr, peer_multi_rail: pmr, no_resend, retry_count: retries, ..FAIL
            };
            let d = decide(&c, limit);
            prop_assert!(!d.resend || (retries < limit && !rx && !no_resend));
            prop_assert!(!(d.resend && d.retries_exhausted));
        }
    }
}
