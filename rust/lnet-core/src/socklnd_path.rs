//! When ksocklnd stops trusting a TCP connection that sends and hears
//! nothing back. Lustre closes it after `sock_timeout` (tens of seconds)
//! without an acknowledgement (`ksocknal_find_timed_out_conn`); so does
//! lnet-rs, and it also calls the path silent much sooner, and sends what
//! is still queued on it elsewhere, on TCP's own evidence: data has
//! gone unacknowledged past a bound drawn from the connection's smoothed
//! RTT, and TCP's retransmission timer has fired on it more than once in a
//! row. A slow path still acknowledges something every RTT, which resets
//! both; a receiver that stops reading closes its window, which TCP probes
//! without counting retransmissions. Either way the path is not silent.

/// Retransmission timeouts in a row, nothing acknowledged meanwhile
/// (`icsk_retransmits`), before a path may be called silent: one may be a
/// spike of delay, two are about three RTOs (600 ms at Linux's least RTO).
pub const SILENT_RTOS: u32 = 2;
/// The least time without an acknowledgement before a path is called
/// silent (ms).
pub const SILENT_FLOOR_MS: u64 = 500;
/// Smoothed RTTs without an acknowledgement before a path is called silent.
pub const SILENT_RTTS: u64 = 4;

/// Why a connection is given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stall {
    /// Nothing acknowledged for `sock_timeout`: Lustre's rule.
    TimedOut,
    /// TCP's evidence says the path went silent (see the module doc).
    Silent,
}

/// What TCP knows of a connection's sending, read from its socket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpTiming {
    /// Retransmission timeouts in a row since the last acknowledgement.
    pub rto_retransmits: u32,
    /// Smoothed round-trip time (µs); 0 before the first sample.
    pub srtt_us: u32,
}

/// How long data may wait for an acknowledgement before the path is
/// called silent (ms): [`SILENT_RTTS`] smoothed RTTs, at least
/// [`SILENT_FLOOR_MS`], never more than `timeout_ms` (`sock_timeout`).
pub fn silent_bound_ms(srtt_us: u32, timeout_ms: u64) -> u64 {
    let rtt_ms = u64::from(srtt_us).div_ceil(1000);
    rtt_ms
        .saturating_mul(SILENT_RTTS)
        .max(SILENT_FLOOR_MS)
        .min(timeout_ms)
}

/// Whether a connection with data outstanding and nothing acknowledged
/// for `stalled_ms` is given up, and why; `silent_path` off (ksocklnd's
/// parameter) leaves `timeout_ms` alone to decide, as in Lustre.
pub fn tx_stall(
    stalled_ms: u64,
    tcp: TcpTiming,
    timeout_ms: u64,
    silent_path: bool,
) -> Option<Stall> {
    if stalled_ms >= timeout_ms {
        return Some(Stall::TimedOut);
    }
    if silent_path
        && tcp.rto_retransmits >= SILENT_RTOS
        && stalled_ms >= silent_bound_ms(tcp.srtt_us, timeout_ms)
    {
        return Some(Stall::Silent);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 10_000;

    fn tcp(rto_retransmits: u32, srtt_us: u32) -> TcpTiming {
        TcpTiming {
            rto_retransmits,
            srtt_us,
        }
    }

    #[test]
    fn bound_follows_rtt_within_floor_and_timeout() {
        assert_eq!(silent_bound_ms(0, T), SILENT_FLOOR_MS);
        assert_eq!(silent_bound_ms(300, T), SILENT_FLOOR_MS);
        assert_eq!(silent_bound_ms(200_000, T), 800);
        assert_eq!(silent_bound_ms(200_001, T), 804);
        assert_eq!(silent_bound_ms(u32::MAX, T), T);
        assert_eq!(silent_bound_ms(200_000, 300), 300);
    }

    #[test]
    fn silent_needs_both_time_and_retransmissions() {
        // A LAN path after two RTOs and the floor.
        assert_eq!(tx_stall(499, tcp(2, 500), T, true), None);
        assert_eq!(tx_stall(500, tcp(2, 500), T, true), Some(Stall::Silent));
        // Time alone is not enough: a closed window (a receiver that does
        // not read) is probed, not retransmitted.
        assert_eq!(tx_stall(5_000, tcp(0, 500), T, true), None);
        assert_eq!(tx_stall(5_000, tcp(1, 500), T, true), None);
        // A path at 200 ms of delay: four RTTs.
        assert_eq!(tx_stall(700, tcp(3, 200_000), T, true), None);
        assert_eq!(tx_stall(800, tcp(3, 200_000), T, true), Some(Stall::Silent));
    }

    #[test]
    fn sock_timeout_still_ends_any_stall() {
        assert_eq!(tx_stall(T, tcp(0, 0), T, true), Some(Stall::TimedOut));
        assert_eq!(tx_stall(T, tcp(5, 500), T, true), Some(Stall::TimedOut));
        // A timeout of 0 gives up at once, as before.
        assert_eq!(tx_stall(0, tcp(0, 0), 0, true), Some(Stall::TimedOut));
        // Off, only the timeout counts.
        assert_eq!(tx_stall(T - 1, tcp(9, 500), T, false), None);
        assert_eq!(tx_stall(T, tcp(9, 500), T, false), Some(Stall::TimedOut));
    }
}
