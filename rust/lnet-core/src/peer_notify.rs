//! An LND's word that a peer NI is down or up (`lnet_notify`): o2iblnd
//! reports a peer whose last connection failed (`kiblnd_peer_notify`).
//! What it changes on the peer NI is decided here; lnet.ko applies it.
//!
//! lnet-rs does not route, so Lustre's gateway and route updates have no
//! place here; what stays is the peer NI's cached status
//! (`lpni_ns_status`), which selection reads (a peer NI reported down is
//! not chosen while another is up), and, for a reset to alive, its health.
//! Lustre's `auto_down` (default 1) is not a parameter of ours: an LND's
//! report of a death always counts.

use super::ping::{STATUS_DOWN, STATUS_UP};

/// `EINVAL`.
pub const EINVAL: i32 = 22;

/// What the peer NI knows of earlier reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notified {
    /// Its status word (`lpni_ns_status`).
    pub status: u32,
    /// Whether a report reached it before (`lpni_notified`).
    pub notified: bool,
    /// The time of the newest report applied (`lpni_timestamp`, s).
    pub timestamp: i64,
    /// When a message last came from it (`lpni_last_alive`, s; 0: never).
    pub last_alive: i64,
}

/// What a report does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Refused with this errno (a report dated in the future).
    Refuse(i32),
    /// Older than one applied already, or no change: nothing happens.
    Ignore,
    /// The peer NI takes `status` and `timestamp`; with `full_health`
    /// its health goes back to the maximum.
    Apply {
        /// The new status word.
        status: u32,
        /// The new `lpni_timestamp`.
        timestamp: i64,
        /// Health back to full (`alive` with `reset`).
        full_health: bool,
    },
}

/// A report from an LND (`from_lnd`; else an administrator) that the peer
/// NI is `alive` or not, as of `when` (monotonic s), at `now`.
pub fn notify(
    old: &Notified,
    from_lnd: bool,
    alive: bool,
    reset: bool,
    when: i64,
    now: i64,
) -> Verdict {
    // No predictions.
    if when > now {
        return Verdict::Refuse(EINVAL);
    }
    // An LND dates a death no earlier than the last message it saw.
    let when = if from_lnd && !alive {
        when.max(old.last_alive)
    } else {
        when
    };
    if old.timestamp > when {
        return Verdict::Ignore;
    }
    let status = if alive { STATUS_UP } else { STATUS_DOWN };
    // The first report counts even if it says what the status says.
    if old.notified && old.status == status {
        // Out of date only for the status; the time still moves on, as
        // Lustre stores it before it looks for old news.
        return Verdict::Apply {
            status,
            timestamp: when,
            full_health: false,
        };
    }
    Verdict::Apply {
        status,
        timestamp: when,
        full_health: alive && reset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRESH: Notified = Notified {
        status: STATUS_UP,
        notified: false,
        timestamp: 0,
        last_alive: 0,
    };

    #[test]
    fn future_refused() {
        assert_eq!(
            notify(&FRESH, true, false, false, 11, 10),
            Verdict::Refuse(EINVAL)
        );
    }

    #[test]
    fn death_marks_down_dated_by_last_message() {
        let old = Notified {
            last_alive: 7,
            ..FRESH
        };
        // o2iblnd reports with its own last-alive time, which may be 0.
        assert_eq!(
            notify(&old, true, false, false, 0, 10),
            Verdict::Apply {
                status: STATUS_DOWN,
                timestamp: 7,
                full_health: false
            }
        );
        // An administrator's report keeps its date.
        assert_eq!(
            notify(&old, false, false, false, 3, 10),
            Verdict::Apply {
                status: STATUS_DOWN,
                timestamp: 3,
                full_health: false
            }
        );
    }

    #[test]
    fn out_of_date_ignored() {
        let old = Notified {
            status: STATUS_DOWN,
            notified: true,
            timestamp: 9,
            last_alive: 0,
        };
        assert_eq!(notify(&old, true, true, true, 8, 10), Verdict::Ignore);
    }

    #[test]
    fn revival_with_reset_heals() {
        let old = Notified {
            status: STATUS_DOWN,
            notified: true,
            timestamp: 5,
            last_alive: 0,
        };
        assert_eq!(
            notify(&old, true, true, true, 6, 10),
            Verdict::Apply {
                status: STATUS_UP,
                timestamp: 6,
                full_health: true
            }
        );
        assert_eq!(
            notify(&old, true, true, false, 6, 10),
            Verdict::Apply {
                status: STATUS_UP,
                timestamp: 6,
                full_health: false
            }
        );
        // Old news: the same status again changes no health.
        let up = Notified {
            status: STATUS_UP,
            ..old
        };
        assert_eq!(
            notify(&up, true, true, true, 6, 10),
            Verdict::Apply {
                status: STATUS_UP,
                timestamp: 6,
                full_health: false
            }
        );
    }
}
