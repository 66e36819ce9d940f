//! Connection requests refused and made again (wire.md §6.3): what the
//! passive side refuses for the peer it knows (Lustre's
//! `kiblnd_passive_connect`: a stale incarnation, a race), and what the
//! active side does when refused (`kiblnd_rejected`,
//! `kiblnd_check_reconnect`): reconnect with what the peer asked for, or
//! give up with the errno the waiting txs fail with; and how often
//! reconnects may come (`kiblnd_connd`).

use super::o2iblnd::{ConnParams, Rej, RejectReason, VERSION};
use super::o2iblnd_health::errno;

/// `IB_CM_REJ_INVALID_SERVICE_ID`: nobody listens on the service.
pub const CM_REJ_INVALID_SERVICE_ID: i32 = 8;
/// `IB_CM_REJ_STALE_CONN`: the peer's CM still knows an older connection.
pub const CM_REJ_STALE_CONN: i32 = 10;
/// `IB_CM_REJ_CONSUMER_DEFINED`: the peer's LND refused, saying why.
pub const CM_REJ_CONSUMER_DEFINED: i32 = 28;
/// Reconnects in a row after which each waits for the next second
/// (`KIB_RECONN_HIGH_RACE`); Lustre never gives up on their count.
pub const RECONN_HIGH_RACE: u32 = 10;
/// Races refused in a row before the lower NID's request is let through,
/// in case the higher one's is stuck (`MAX_CONN_RACES_BEFORE_ABORT`).
pub const MAX_CONN_RACES: u32 = 20;

/// The passive side's decision on a request from a peer it knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passive {
    /// Accept; `past_races` when it wins only because races went on too
    /// long.
    Accept {
        /// Let through after `MAX_CONN_RACES` refusals.
        past_races: bool,
    },
    /// The peer restarted: close its old connections, refuse with
    /// CONN_STALE, learn its new incarnation.
    Stale,
    /// We are connecting too and win: refuse with CONN_RACE.
    Race,
}

/// Decides on a request of incarnation `stamp` from a peer last known as
/// `known` (0: not yet), while we are `connecting` to it or not, after
/// `races` refused in a row; the NIDs are compared by `nidhash`, as
/// Lustre does, so that both ends of a race agree on its winner.
pub fn passive_verdict(
    known: u64,
    stamp: u64,
    connecting: bool,
    races: u32,
    src_hash: u64,
    our_hash: u64,
) -> Passive {
    if known != 0 && known != stamp {
        return Passive::Stale;
    }
    if connecting && src_hash < our_hash && races < MAX_CONN_RACES {
        return Passive::Race;
    }
    Passive::Accept {
        past_races: races >= MAX_CONN_RACES,
    }
}

/// When a reconnect after `reconnected` in a row may start, at `now_ms`:
/// at once, or past `RECONN_HIGH_RACE` at the next whole second.
pub fn reconnect_at_ms(reconnected: u32, now_ms: u64) -> u64 {
    if reconnected < RECONN_HIGH_RACE {
        now_ms
    } else {
        (now_ms / 1000 + 1) * 1000
    }
}

/// The decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterReject {
    /// Connect again, with these parameters for the new request.
    Reconnect {
        /// The queue depth to ask for.
        queue_depth: u16,
        /// The fragments to offer.
        max_frags: u16,
        /// The peer's incarnation to name (`dststamp`).
        dst_stamp: u64,
    },
    /// We lost a connection race: connect again with the same
    /// parameters, unless the peer's connection is being accepted.
    LostRace,
    /// Fail the waiting txs with this errno (negative).
    GiveUp(i32),
}

/// Decides after a reject with CM status `cm_status` and, for a consumer
/// reject, the peer's `kib_rej`; `sent` is what the request asked,
/// `dst_stamp` the incarnation it named.
pub fn after_reject(
    cm_status: i32,
    rej: Option<&Rej>,
    sent: &ConnParams,
    dst_stamp: u64,
) -> AfterReject {
    let again = |queue_depth, max_frags, dst_stamp| AfterReject::Reconnect {
        queue_depth,
        max_frags,
        dst_stamp,
    };
    match cm_status {
        CM_REJ_INVALID_SERVICE_ID => return AfterReject::GiveUp(-errno::EHOSTUNREACH),
        CM_REJ_STALE_CONN => return again(sent.queue_depth, sent.max_frags, 0),
        CM_REJ_CONSUMER_DEFINED => {}
        _ => return AfterReject::GiveUp(-errno::ECONNREFUSED),
    }
    let Some(rej) = rej else {
        return AfterReject::GiveUp(-errno::ECONNREFUSED);
    };
    let params = rej.params;
    match rej.effective_why(VERSION) {
        RejectReason::ConnRace => AfterReject::LostRace,
        // The peer restarted: name the incarnation it reports.
        RejectReason::ConnStale => again(
            sent.queue_depth,
            sent.max_frags,
            params.map_or(0, |p| p.incarnation),
        ),
        RejectReason::MsgQueueSize => match params {
            Some(p) if p.cp.queue_depth > 0 && p.cp.queue_depth < sent.queue_depth => {
                again(p.cp.queue_depth, sent.max_frags, dst_stamp)
            }
            _ => AfterReject::GiveUp(-errno::ECONNREFUSED),
        },
        RejectReason::RdmaFrags => match params {
            Some(p) if p.cp.max_frags > 0 && p.cp.max_frags < sent.max_frags => {
                again(sent.queue_depth, p.cp.max_frags, dst_stamp)
            }
            _ => AfterReject::GiveUp(-errno::ECONNREFUSED),
        },
        // Only V2 is spoken here: a peer that wants V1 is given up on.
        _ => AfterReject::GiveUp(-errno::ECONNREFUSED),
    }
}

#[cfg(test)]
mod tests {
    use super::super::o2iblnd::{RejParams, MAX_RDMA_FRAGS, MSG_SIZE, VERSION_1};
    use super::*;

    fn cp(depth: u16, frags: u16) -> ConnParams {
        ConnParams {
            queue_depth: depth,
            max_frags: frags,
            max_msg_size: MSG_SIZE as u32,
        }
    }

    fn rej(why: RejectReason, depth: u16, frags: u16) -> Rej {
        Rej {
            version: VERSION,
            why,
            params: Some(RejParams {
                incarnation: 77,
                cp: cp(depth, frags),
            }),
        }
    }

    const F: u16 = MAX_RDMA_FRAGS as u16;

    #[test]
    fn a_smaller_queue_is_adopted() {
        let r = rej(RejectReason::MsgQueueSize, 8, F);
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(16, F), 0),
            AfterReject::Reconnect {
                queue_depth: 8,
                max_frags: F,
                dst_stamp: 0
            }
        );
        // Not smaller: nothing to adopt.
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(8, F), 0),
            AfterReject::GiveUp(-errno::ECONNREFUSED)
        );
    }

    #[test]
    fn fewer_frags_are_adopted() {
        let r = rej(RejectReason::RdmaFrags, 8, 32);
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(8, F), 5),
            AfterReject::Reconnect {
                queue_depth: 8,
                max_frags: 32,
                dst_stamp: 5
            }
        );
    }

    #[test]
    fn stale_names_the_new_incarnation() {
        let r = rej(RejectReason::ConnStale, 8, F);
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(8, F), 5),
            AfterReject::Reconnect {
                queue_depth: 8,
                max_frags: F,
                dst_stamp: 77
            }
        );
        assert!(matches!(
            after_reject(CM_REJ_STALE_CONN, None, &cp(8, F), 5),
            AfterReject::Reconnect { dst_stamp: 0, .. }
        ));
    }

    #[test]
    fn races_and_refusals() {
        let race = rej(RejectReason::ConnRace, 8, F);
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&race), &cp(8, F), 0),
            AfterReject::LostRace
        );
        for why in [
            RejectReason::NoResources,
            RejectReason::Fatal,
            RejectReason::Early,
        ] {
            let r = rej(why, 8, F);
            assert_eq!(
                after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(8, F), 0),
                AfterReject::GiveUp(-errno::ECONNREFUSED),
                "{why:?}"
            );
        }
        assert_eq!(
            after_reject(CM_REJ_INVALID_SERVICE_ID, None, &cp(8, F), 0),
            AfterReject::GiveUp(-errno::EHOSTUNREACH)
        );
        // A V1 peer's FATAL asks for V1, which is not spoken here.
        let v1 = Rej {
            version: VERSION_1,
            why: RejectReason::Fatal,
            params: None,
        };
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&v1), &cp(8, F), 0),
            AfterReject::GiveUp(-errno::ECONNREFUSED)
        );
    }

    #[test]
    fn reconnects_slow_down_but_go_on() {
        assert_eq!(reconnect_at_ms(0, 12_345), 12_345);
        assert_eq!(reconnect_at_ms(RECONN_HIGH_RACE - 1, 12_345), 12_345);
        assert_eq!(reconnect_at_ms(RECONN_HIGH_RACE, 12_345), 13_000);
        assert_eq!(reconnect_at_ms(1000, 13_000), 14_000);
    }

    #[test]
    fn the_passive_side_knows_its_peer() {
        // Unknown, or the same incarnation, and not racing: accepted.
        let ok = Passive::Accept { past_races: false };
        assert_eq!(passive_verdict(0, 5, false, 0, 1, 2), ok);
        assert_eq!(passive_verdict(5, 5, false, 0, 1, 2), ok);
        // A new incarnation: the old connections are stale.
        assert_eq!(passive_verdict(5, 6, false, 0, 1, 2), Passive::Stale);
        assert_eq!(passive_verdict(5, 6, true, 0, 3, 2), Passive::Stale);
        // Racing: the higher hash wins, whichever end it is.
        assert_eq!(passive_verdict(5, 5, true, 0, 1, 2), Passive::Race);
        assert_eq!(passive_verdict(5, 5, true, 0, 3, 2), ok);
        assert_eq!(passive_verdict(5, 5, true, 0, 2, 2), ok);
        // Until the lower one has lost too many in a row.
        assert_eq!(
            passive_verdict(5, 5, true, MAX_CONN_RACES - 1, 1, 2),
            Passive::Race
        );
        assert_eq!(
            passive_verdict(5, 5, true, MAX_CONN_RACES, 1, 2),
            Passive::Accept { past_races: true }
        );
    }
}
