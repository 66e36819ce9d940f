//! ksocklnd's module parameters (`/sys/module/ksocklnd/parameters`,
//! health.md §11.4): names, modes and defaults as Lustre declares them,
//! with a range each. Lustre takes any `int`; these refuse a value that
//! would make no sense (negative credits, a TOS above 255) with `EINVAL`
//! and a message naming the range, and keep the old value.
//!
//! Only the parameters ksocklnd honours are declared; the others of
//! Lustre's list (`nconnds`, `zc_recv`, `enable_csum`, ...) have no effect
//! here and are not offered. `typed_conns` is offered read-only
//! at 1: hello V3 requires typed connections.

use super::lnd_params::{lnd_param_table, LndParam, ParamError, Spec};

/// A ksocklnd parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SockParam {
    /// `sock_timeout`: seconds a send may stall, a connect or handshake
    /// may take, before the connection is closed; 0 takes LNet's LND
    /// timeout.
    SockTimeout,
    /// `credits`: concurrent sends through one NI.
    Credits,
    /// `peer_credits`: concurrent sends to one peer NI.
    PeerCredits,
    /// `peer_buffer_credits`: router buffer credits per peer.
    PeerBufferCredits,
    /// `peer_timeout`: seconds without news before a peer is dead (<= 0:
    /// never), used by routers.
    PeerTimeout,
    /// `keepalive_idle`: idle seconds before TCP keepalive probes (0: off).
    KeepaliveIdle,
    /// `keepalive_count`: unanswered probes before TCP gives up.
    KeepaliveCount,
    /// `keepalive_intvl`: seconds between probes.
    KeepaliveIntvl,
    /// `nagle`: 1 leaves Nagle's algorithm on.
    Nagle,
    /// `tx_buffer_size`: socket send buffer in bytes (0: system default).
    TxBufferSize,
    /// `rx_buffer_size`: socket receive buffer in bytes (0: system default).
    RxBufferSize,
    /// `tos`: IP type of service of the connections (-1: system default).
    Tos,
    /// `keepalive`: seconds without hearing from a peer before a NOOP is
    /// sent to it (0: never).
    Keepalive,
    /// `min_reconnectms`: first wait after a failed connect.
    MinReconnectMs,
    /// `max_reconnectms`: the longest wait, doubling from the first.
    MaxReconnectMs,
    /// `min_bulk`: messages of this many bytes or more (framing included)
    /// go on the bulk connection.
    MinBulk,
    /// `typed_conns`: control, bulk-in and bulk-out connections apart.
    TypedConns,
    /// `zc_min_payload`: payloads of this many bytes or more are sent as
    /// zero-copy requests, held until the peer acknowledges them. Lustre
    /// raises a value below 2 KiB to 2 KiB at load; it is refused here.
    ZcMinPayload,
    /// `silent_path` (lnet-rs's own): 1 sends what is queued on a
    /// connection elsewhere as soon as TCP's retransmissions say its path
    /// is silent (`socklnd_path.rs`); 0 waits for `sock_timeout` alone, as
    /// Lustre does.
    SilentPath,
    /// `nscheds`: scheduler threads of an NI (0: from the CPUs,
    /// `socklnd_sched::sched_threads`).
    Nscheds,
}

impl SockParam {
    /// Every parameter, in declaration order.
    pub const ALL: [SockParam; 20] = [
        SockParam::SockTimeout,
        SockParam::Credits,
        SockParam::PeerCredits,
        SockParam::PeerBufferCredits,
        SockParam::PeerTimeout,
        SockParam::KeepaliveIdle,
        SockParam::KeepaliveCount,
        SockParam::KeepaliveIntvl,
        SockParam::Nagle,
        SockParam::TxBufferSize,
        SockParam::RxBufferSize,
        SockParam::Tos,
        SockParam::Keepalive,
        SockParam::MinReconnectMs,
        SockParam::MaxReconnectMs,
        SockParam::MinBulk,
        SockParam::TypedConns,
        SockParam::ZcMinPayload,
        SockParam::SilentPath,
        SockParam::Nscheds,
    ];

    const fn decl(self) -> Spec {
        Spec::row(match self {
            SockParam::SockTimeout => ("sock_timeout", true, 50, 0, 86_400),
            SockParam::Credits => ("credits", false, 256, 1, super::credits::MAX_CREDITS),
            SockParam::PeerCredits => ("peer_credits", false, 8, 1, super::credits::MAX_CREDITS),
            SockParam::PeerBufferCredits => (
                "peer_buffer_credits",
                false,
                0,
                0,
                super::credits::MAX_CREDITS,
            ),
            SockParam::PeerTimeout => ("peer_timeout", false, 180, -1, 86_400),
            // The kernel's own limits for TCP_KEEPIDLE, TCP_KEEPCNT and
            // TCP_KEEPINTVL.
            SockParam::KeepaliveIdle => ("keepalive_idle", true, 30, 0, 32_767),
            SockParam::KeepaliveCount => ("keepalive_count", true, 5, 0, 127),
            SockParam::KeepaliveIntvl => ("keepalive_intvl", true, 5, 0, 32_767),
            SockParam::Nagle => ("nagle", true, 0, 0, 1),
            SockParam::TxBufferSize => ("tx_buffer_size", true, 0, 0, 1 << 30),
            SockParam::RxBufferSize => ("rx_buffer_size", true, 0, 0, 1 << 30),
            SockParam::Tos => ("tos", false, -1, -1, 255),
            SockParam::Keepalive => ("keepalive", true, 30, 0, 86_400),
            SockParam::MinReconnectMs => ("min_reconnectms", true, 1000, 1, 3_600_000),
            SockParam::MaxReconnectMs => ("max_reconnectms", true, 60_000, 1, 3_600_000),
            SockParam::MinBulk => ("min_bulk", true, 1024, 0, 1 << 30),
            SockParam::TypedConns => ("typed_conns", false, 1, 1, 1),
            SockParam::ZcMinPayload => ("zc_min_payload", true, 16 << 10, 2 << 10, i32::MAX),
            SockParam::SilentPath => ("silent_path", true, 1, 0, 1),
            // A CPT never has more CPUs than x86_64's largest NR_CPUS.
            SockParam::Nscheds => ("nscheds", false, 0, 0, 8192),
        })
    }
}

lnd_param_table!(SockParam, 20, {});

/// Why a write was refused.
pub type SockParamError = ParamError<SockParam>;

/// The value a write of `input` to `p` sets.
pub fn parse(p: SockParam, input: Option<&[u8]>) -> Result<i32, SockParamError> {
    super::lnd_params::parse(p, input)
}

/// The timeout a connection uses: `sock_timeout`, or LNet's LND timeout
/// when it is 0.
pub fn effective_timeout(sock_timeout: i32, lnet_lnd_timeout: u32) -> u32 {
    match u32::try_from(sock_timeout) {
        Ok(0) | Err(_) => lnet_lnd_timeout.max(1),
        Ok(t) => t,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::params::EINVAL;
    use super::*;
    use std::format;

    #[test]
    fn names_modes_defaults() {
        for (i, p) in SockParam::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(SockParam::from_name(p.name().as_bytes()), Some(p));
            let (lo, hi) = p.range();
            assert!(lo <= p.default_value() && p.default_value() <= hi, "{p:?}");
        }
        assert_eq!(SockParam::from_name(b"nconnds"), None);
        assert_eq!(SockParam::SockTimeout.mode(), 0o644);
        assert_eq!(SockParam::PeerCredits.mode(), 0o444);
        assert_eq!(SockParam::Credits.default_value(), 256);
        assert_eq!(SockParam::PeerCredits.default_value(), 8);
        assert_eq!(SockParam::PeerTimeout.default_value(), 180);
        assert_eq!(SockParam::Tos.default_value(), -1);
        assert_eq!(SockParam::ZcMinPayload.default_value(), 16384);
        assert_eq!(SockParam::ZcMinPayload.mode(), 0o644);
        assert_eq!(
            parse(SockParam::ZcMinPayload, Some(b"1024")),
            Err(SockParamError::Range(SockParam::ZcMinPayload, 1024))
        );
        assert_eq!(parse(SockParam::ZcMinPayload, Some(b"2048")), Ok(2048));
    }

    #[test]
    fn parsing() {
        assert_eq!(parse(SockParam::Tos, Some(b"-1")), Ok(-1));
        assert_eq!(
            parse(SockParam::Tos, Some(b"256")),
            Err(SockParamError::Range(SockParam::Tos, 256))
        );
        assert_eq!(
            parse(SockParam::PeerCredits, Some(b"0")),
            Err(SockParamError::Range(SockParam::PeerCredits, 0))
        );
        assert_eq!(
            parse(SockParam::Nagle, Some(b"2")).map_err(|e| e.errno()),
            Err(EINVAL)
        );
        let msg = format!("{}", SockParamError::Range(SockParam::Tos, 256));
        assert_eq!(msg, "Invalid value 256 for 'tos': must be -1..255");
    }

    #[test]
    fn timeout_falls_back_to_lnet() {
        assert_eq!(effective_timeout(50, 49), 50);
        assert_eq!(effective_timeout(0, 49), 49);
        assert_eq!(effective_timeout(0, 0), 1);
        assert_eq!(effective_timeout(-3, 10), 10);
    }
}
