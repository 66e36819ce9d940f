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
pub fn connect_failed(err: i32) -> Status {
    match err.saturating_abs() {
        errno::EHOSTUNREACH | errno::ETIMEDOUT => Status::NetworkTimeout,
        errno::ECONNREFUSED => Status::RemoteDropped,
        _ => Status::LocalDropped,
    }
}

/// A tx on a connection closed with `comms_error` (0 for a clean
/// disconnect): status `-ECONNABORTED` with this health status.
///
/// A timeout is blamed as Lustre blames it. Any other close is a
/// decision: Lustre gives a queued tx LOCAL_ERROR (no resend) and leaves
/// a posted one OK, a status/health mismatch that neither resends nor
/// blames anyone until a flushed send completion makes a sending tx
/// REMOTE_DROPPED; a tx waiting for the peer's PUT_ACK or GET_DONE is
/// failed to its ULP. Here a rail cut (port down, device removed,
/// peer gone) costs the ULP nothing: a queued tx never left, so it is
/// LOCAL_DROPPED; a sending one is REMOTE_DROPPED at once, as its flush
/// would make it; and a waiting one is REMOTE_DROPPED too, for no payload
/// moves before PUT_ACK (and a GET's sink takes nothing more once the QP
/// is in error): all are resent on another path, as ksocklnd resends what
/// never left a closed connection.
pub fn aborted(place: TxPlace, comms_error: i32) -> Status {
    let timeout = comms_error.saturating_abs() == errno::ETIMEDOUT;
    match (place, timeout) {
        (TxPlace::Queued, true) => Status::LocalTimeout,
        (TxPlace::Queued, false) => Status::LocalDropped,
        (TxPlace::Waiting, true) => Status::RemoteTimeout,
        (TxPlace::Sending, true) => Status::NetworkTimeout,
        (TxPlace::Waiting | TxPlace::Sending, false) => Status::RemoteDropped,
    }
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
        assert_eq!(aborted(TxPlace::Queued, t), Status::LocalTimeout);
        assert_eq!(aborted(TxPlace::Waiting, t), Status::RemoteTimeout);
        assert_eq!(aborted(TxPlace::Sending, t), Status::NetworkTimeout);
    }

    #[test]
    fn aborted_txs_by_another_cause_are_resent() {
        // The decision in `aborted`: nothing a rail cut aborts fails its
        // ULP while another path is left.
        for e in [0, -errno::EIO, -errno::ENETDOWN, -errno::EPROTO] {
            assert_eq!(aborted(TxPlace::Queued, e), Status::LocalDropped, "{e}");
            assert_eq!(aborted(TxPlace::Waiting, e), Status::RemoteDropped, "{e}");
            assert_eq!(aborted(TxPlace::Sending, e), Status::RemoteDropped, "{e}");
        }
    }
}
