//! What the active side does when its connection request is rejected
//! (Lustre's `kiblnd_rejected` and `kiblnd_check_reconnect`, wire.md
//! §6.3): reconnect with what the peer asked for, leave the txs to the
//! peer's own connection (a lost race), or give up with the errno the
//! waiting txs fail with.

use super::o2iblnd::{ConnParams, Rej, RejectReason, VERSION};
use super::o2iblnd_health::errno;

/// `IB_CM_REJ_INVALID_SERVICE_ID`: nobody listens on the service.
pub const CM_REJ_INVALID_SERVICE_ID: i32 = 8;
/// `IB_CM_REJ_STALE_CONN`: the peer's CM still knows an older connection.
pub const CM_REJ_STALE_CONN: i32 = 10;
/// `IB_CM_REJ_CONSUMER_DEFINED`: the peer's LND refused, saying why.
pub const CM_REJ_CONSUMER_DEFINED: i32 = 28;
/// Reconnects in a row before giving up (`KIB_RECONN_HIGH_RACE`).
pub const MAX_RECONNECTS: u32 = 10;

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
    /// We lost a connection race: the peer's connection carries the txs.
    LostRace,
    /// Fail the waiting txs with this errno (negative).
    GiveUp(i32),
}

/// Decides after a reject with CM status `cm_status` and, for a consumer
/// reject, the peer's `kib_rej`; `sent` is what the request asked,
/// `dst_stamp` the incarnation it named, `tries` the reconnects already
/// made in a row.
pub fn after_reject(
    cm_status: i32,
    rej: Option<&Rej>,
    sent: &ConnParams,
    dst_stamp: u64,
    tries: u32,
) -> AfterReject {
    let again = |queue_depth, max_frags, dst_stamp| {
        if tries >= MAX_RECONNECTS {
            AfterReject::GiveUp(-errno::ECONNREFUSED)
        } else {
            AfterReject::Reconnect {
                queue_depth,
                max_frags,
                dst_stamp,
            }
        }
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
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(16, F), 0, 0),
            AfterReject::Reconnect {
                queue_depth: 8,
                max_frags: F,
                dst_stamp: 0
            }
        );
        // Not smaller: nothing to adopt.
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(8, F), 0, 0),
            AfterReject::GiveUp(-errno::ECONNREFUSED)
        );
    }

    #[test]
    fn fewer_frags_are_adopted() {
        let r = rej(RejectReason::RdmaFrags, 8, 32);
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(8, F), 5, 0),
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
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(8, F), 5, 0),
            AfterReject::Reconnect {
                queue_depth: 8,
                max_frags: F,
                dst_stamp: 77
            }
        );
        assert!(matches!(
            after_reject(CM_REJ_STALE_CONN, None, &cp(8, F), 5, 0),
            AfterReject::Reconnect { dst_stamp: 0, .. }
        ));
    }

    #[test]
    fn races_and_refusals() {
        let race = rej(RejectReason::ConnRace, 8, F);
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&race), &cp(8, F), 0, 0),
            AfterReject::LostRace
        );
        for why in [
            RejectReason::NoResources,
            RejectReason::Fatal,
            RejectReason::Early,
        ] {
            let r = rej(why, 8, F);
            assert_eq!(
                after_reject(CM_REJ_CONSUMER_DEFINED, Some(&r), &cp(8, F), 0, 0),
                AfterReject::GiveUp(-errno::ECONNREFUSED),
                "{why:?}"
            );
        }
        assert_eq!(
            after_reject(CM_REJ_INVALID_SERVICE_ID, None, &cp(8, F), 0, 0),
            AfterReject::GiveUp(-errno::EHOSTUNREACH)
        );
        // A V1 peer's FATAL asks for V1, which is not spoken here.
        let v1 = Rej {
            version: VERSION_1,
            why: RejectReason::Fatal,
            params: None,
        };
        assert_eq!(
            after_reject(CM_REJ_CONSUMER_DEFINED, Some(&v1), &cp(8, F), 0, 0),
            AfterReject::GiveUp(-errno::ECONNREFUSED)
        );
    }

    #[test]
    fn reconnects_are_bounded() {
        let r = rej(RejectReason::ConnStale, 8, F);
        assert_eq!(
            after_reject(
                CM_REJ_CONSUMER_DEFINED,
                Some(&r),
                &cp(8, F),
                0,
                MAX_RECONNECTS
            ),
            AfterReject::GiveUp(-errno::ECONNREFUSED)
        );
    }
}
