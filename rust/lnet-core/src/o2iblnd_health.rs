//! How an o2iblnd tx ends, as (status, health status) pairs
//! (o2iblnd-events.md §2 and §3.2). The LND gathers the facts (the error,
//! where the tx was) and calls these; they are the one place the mapping
//! lives.

use super::health::Status;

/// Errnos the mapping tells apart.
pub mod errno {
    /// `EIO`
    pub const EIO: i32 = 5;
    /// `ENODATA`
    pub const ENODATA: i32 = 61;
    /// `ENOMEM`
    pub const ENOMEM: i32 = 12;
    /// `EPROTO`
    pub const EPROTO: i32 = 71;
    /// `EOPNOTSUPP`
    pub const EOPNOTSUPP: i32 = 95;
    /// `EMSGSIZE`
    pub const EMSGSIZE: i32 = 90;
    /// `ENETDOWN`
    pub const ENETDOWN: i32 = 100;
    /// `ECONNABORTED`
    pub const ECONNABORTED: i32 = 103;
    /// `ECONNRESET`
    pub const ECONNRESET: i32 = 104;
    /// `ENOTCONN`
    pub const ENOTCONN: i32 = 107;
    /// `ESTALE`
    pub const ESTALE: i32 = 116;
    /// `ETIMEDOUT`
    pub const ETIMEDOUT: i32 = 110;
    /// `EALREADY`: a connection closed so that another may carry its txs.
    pub const EALREADY: i32 = 114;
    /// `ECONNREFUSED`
    pub const ECONNREFUSED: i32 = 111;
    /// `EHOSTUNREACH`
    pub const EHOSTUNREACH: i32 = 113;
}

/// Where a tx was when its connection was aborted (`kiblnd_abort_txs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxPlace {
    /// Queued on the connection, never posted.
    Queued,
    /// Posted, its send not yet complete.
    Sending,
    /// Sent, waiting only for the peer's PUT_ACK or GET_DONE.
    Waiting,
}

/// Txs waiting for a connection whose attempt failed with `err`
/// (`kiblnd_peer_connect_failed`): status `err`.
///
/// A bad CONNACK (`-EPROTO`) is LOCAL_DROPPED here. Lustre makes such a
/// connection established and closes it at once, so the txs it took end
/// as queued ones, LOCAL_ERROR; they never left, so they end as
/// [`aborted`] ends a queued tx that never left: resent.
pub fn connect_failed(err: i32) -> Status {
    match err.saturating_abs() {
        errno::EHOSTUNREACH | errno::ETIMEDOUT => Status::NetworkTimeout,
        errno::ECONNREFUSED => Status::RemoteDropped,
        _ => Status::LocalDropped,
    }
}

/// A tx on a connection closed with `comms_error` (0 for a clean
/// disconnect): status `-ECONNABORTED` with this health status
/// (`kiblnd_abort_txs`, `kiblnd_tx_complete`). `header_sent`: its LNet
/// message's header already reached the peer (a PUT's PUT_DONE after
/// the PUT_REQ, a REPLY's GET_DONE answering the GET_REQ, a sink's
/// PUT_ACK); false for an IMMEDIATE, PUT_REQ or GET_REQ not yet posted.
///
/// As Lustre: a timeout is blamed by where the tx was; a tx waiting for
/// the peer's answer (PUT_ACK, PUT_DONE, GET_DONE) ends with the error
/// and no health status, so it is neither resent nor blamed on anyone,
/// for the peer may already have matched it (a resent PUT or GET would
/// match a second time); a tx still sending ends REMOTE_DROPPED, as its
/// flushed completion makes it in Lustre (resent); a queued tx whose
/// header left ends LOCAL_ERROR (not resent).
///
/// A decision: a queued tx whose header never left ends LOCAL_DROPPED
/// where Lustre gives LOCAL_ERROR. Both charge the local NI, but it is
/// resent on another path: the peer never saw it, so a rail cut costs
/// the ULP nothing for it, as ksocklnd resends what never left a closed
/// connection.
pub fn aborted(place: TxPlace, header_sent: bool, comms_error: i32) -> Status {
    let timeout = comms_error.saturating_abs() == errno::ETIMEDOUT;
    match (place, timeout) {
        (TxPlace::Queued, true) => Status::LocalTimeout,
        (TxPlace::Waiting, true) => Status::RemoteTimeout,
        (TxPlace::Sending, true) => Status::NetworkTimeout,
        (TxPlace::Queued, false) if header_sent => Status::LocalError,
        (TxPlace::Queued, false) => Status::LocalDropped,
        (TxPlace::Waiting, false) => Status::Ok,
        (TxPlace::Sending, false) => Status::RemoteDropped,
    }
}

/// A tx whose posting failed (`ib_post_send`, or no room to track it):
/// the connection is closed with the error.
///
/// A decision: Lustre leaves its health status alone (OK), so the ULP
/// gets the error, nothing is resent and no one is blamed, though the
/// local NI failed. Its work requests never reached the device, so it
/// ends as a queued tx on a connection that closed ([`aborted`]):
/// LOCAL_DROPPED (resent) if its header never left, LOCAL_ERROR if it
/// did.
pub fn post_failed(header_sent: bool) -> Status {
    aborted(TxPlace::Queued, header_sent, 0)
}

/// The REPLY of a GET sent as GET_REQ, which the LND ends with the GET:
/// its error status only. Lustre's `kiblnd_tx_done` gives the health
/// status to the GET alone, so the path is charged once, not twice.
pub const fn optimized_reply() -> Status {
    Status::Ok
}

/// A send, RDMA or registration work request completed in error
/// (`kiblnd_tx_complete`): status `-EIO`.
pub const fn send_failed() -> Status {
    Status::RemoteDropped
}

/// The peer's completion message carried a failure (PUT_NAK, or
/// PUT_DONE/GET_DONE with a status below 0).
pub const fn peer_failed() -> Status {
    Status::RemoteError
}

/// A tx waited for a connection past its deadline: status `-ETIMEDOUT`.
pub const fn connect_wait_expired() -> Status {
    Status::NetworkTimeout
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_failures_as_the_spec_table() {
        assert_eq!(connect_failed(-errno::EHOSTUNREACH), Status::NetworkTimeout);
        assert_eq!(connect_failed(-errno::ETIMEDOUT), Status::NetworkTimeout);
        assert_eq!(connect_failed(-errno::ECONNREFUSED), Status::RemoteDropped);
        for e in [
            errno::ENETDOWN,
            errno::ENOTCONN,
            errno::ECONNRESET,
            errno::ENOMEM,
        ] {
            assert_eq!(connect_failed(-e), Status::LocalDropped, "{e}");
        }
    }

    #[test]
    fn aborted_txs_as_the_spec_table() {
        let t = -errno::ETIMEDOUT;
        for sent in [false, true] {
            assert_eq!(aborted(TxPlace::Queued, sent, t), Status::LocalTimeout);
            assert_eq!(aborted(TxPlace::Waiting, sent, t), Status::RemoteTimeout);
            assert_eq!(aborted(TxPlace::Sending, sent, t), Status::NetworkTimeout);
        }
    }

    #[test]
    fn aborted_txs_the_peer_may_have_matched_are_not_resent() {
        for e in [0, -errno::EIO, -errno::ENETDOWN, -errno::EPROTO] {
            // Waiting for the peer's answer: the error alone, as Lustre.
            for sent in [false, true] {
                assert_eq!(aborted(TxPlace::Waiting, sent, e), Status::Ok, "{e}");
                assert_eq!(
                    aborted(TxPlace::Sending, sent, e),
                    Status::RemoteDropped,
                    "{e}"
                );
            }
            // A PUT_DONE or GET_DONE still queued: its PUT or GET reached
            // the peer, so LOCAL_ERROR, as Lustre, which is not resent.
            assert_eq!(aborted(TxPlace::Queued, true, e), Status::LocalError, "{e}");
        }
    }

    #[test]
    fn aborted_txs_that_never_left_are_resent() {
        // The decision in `aborted`: what the peer never saw fails no ULP
        // while another path is left.
        for e in [0, -errno::EIO, -errno::ENETDOWN, -errno::EPROTO] {
            assert_eq!(
                aborted(TxPlace::Queued, false, e),
                Status::LocalDropped,
                "{e}"
            );
        }
        assert_eq!(connect_failed(-errno::EPROTO), Status::LocalDropped);
    }

    #[test]
    fn failed_posts_end_as_queued_txs() {
        assert_eq!(post_failed(false), Status::LocalDropped);
        assert_eq!(post_failed(true), Status::LocalError);
    }

    #[test]
    fn an_optimized_gets_reply_carries_no_health_status() {
        assert_eq!(optimized_reply(), Status::Ok);
    }
}
