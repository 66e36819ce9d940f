//! LNet's send credits (`lnet_post_send_locked`,
//! `lnet_return_tx_credits_locked`) and the net tunables they come from.
//!
//! A message takes one credit of the peer NI it goes to, then one of the
//! local NI it leaves from. A count below zero means messages wait, in
//! order, for a credit to come back; the lowest count reached is kept for
//! `lnetctl peer show`. A message gives its credits back when its LND
//! completes it, and the first message waiting on that count takes them.

/// A credit count: `lpni_txcredits` / `tq_credits` with their minimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxCredits {
    /// The count with nothing in flight.
    pub max: i32,
    /// Credits left; below zero, the number of messages waiting.
    pub available: i32,
    /// The lowest `available` reached.
    pub min: i32,
}

impl TxCredits {
    /// A full count of `max` credits.
    pub const fn new(max: i32) -> Self {
        TxCredits {
            max,
            available: max,
            min: max,
        }
    }

    /// Takes a credit for a message. `true`: it may go now; `false`: it
    /// waits behind the others already waiting.
    pub fn take(&mut self) -> bool {
        self.available = self.available.saturating_sub(1);
        self.min = self.min.min(self.available);
        self.available >= 0
    }

    /// Gives a credit back. `true`: a waiting message now holds it and
    /// goes.
    pub fn give(&mut self) -> bool {
        if self.available >= self.max {
            // More returned than taken: nothing in flight is counted here
            // any more (the count was reset); never exceed the maximum.
            return false;
        }
        self.available += 1;
        self.available <= 0
    }

    /// A waiting message leaves without going (it is failed instead): its
    /// place in the count goes and nobody is woken.
    pub fn cancel(&mut self) {
        if self.available < self.max {
            self.available += 1;
        }
    }

    /// Messages waiting for a credit.
    pub fn waiting(&self) -> u32 {
        if self.available < 0 {
            self.available.unsigned_abs()
        } else {
            0
        }
    }
}

/// Not set by the administrator (`lnetctl net add` without the option).
pub const UNSET: i32 = -1;

/// Largest credit count accepted for an NI or a peer NI.
pub const MAX_CREDITS: i32 = 1 << 16;

/// A net's tunables (`struct lnet_ioctl_config_lnd_cmn_tunables`): what
/// `lnetctl net add` sets and `net show -v` prints under `tunables`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetTunables {
    /// Seconds without news before a peer counts as dead (routers only).
    pub peer_timeout: i32,
    /// Concurrent sends to one peer NI.
    pub peer_credits: i32,
    /// Router buffer credits per peer (routers only).
    pub peer_buffer_credits: i32,
    /// Concurrent sends through the NI.
    pub credits: i32,
}

/// Why a tunable given to `lnetctl net add` was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunableError {
    /// `peer_timeout` below -1.
    PeerTimeout(i32),
    /// `peer_credits` outside 1..=`MAX_CREDITS`.
    PeerCredits(i32),
    /// `peer_buffer_credits` outside 0..=`MAX_CREDITS`.
    PeerBufferCredits(i32),
    /// `credits` outside 1..=`MAX_CREDITS`.
    Credits(i32),
}

impl core::fmt::Display for TunableError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TunableError::PeerTimeout(v) => write!(f, "peer_timeout {v}: must be -1 or more"),
            TunableError::PeerCredits(v) => {
                write!(f, "peer_credits {v}: must be 1..{MAX_CREDITS}")
            }
            TunableError::PeerBufferCredits(v) => {
                write!(f, "peer_buffer_credits {v}: must be 0..{MAX_CREDITS}")
            }
            TunableError::Credits(v) => write!(f, "credits {v}: must be 1..{MAX_CREDITS}"),
        }
    }
}

impl NetTunables {
    /// Nothing set: the LND's defaults will apply.
    pub const UNSET: NetTunables = NetTunables {
        peer_timeout: UNSET,
        peer_credits: UNSET,
        peer_buffer_credits: UNSET,
        credits: UNSET,
    };

    /// Checks the values an administrator gave; `UNSET` is always valid.
    pub fn validate(&self) -> Result<(), TunableError> {
        let set = |v: i32| v != UNSET;
        if set(self.peer_timeout) && self.peer_timeout < -1 {
            return Err(TunableError::PeerTimeout(self.peer_timeout));
        }
        if set(self.peer_credits) && !(1..=MAX_CREDITS).contains(&self.peer_credits) {
            return Err(TunableError::PeerCredits(self.peer_credits));
        }
        if set(self.peer_buffer_credits) && !(0..=MAX_CREDITS).contains(&self.peer_buffer_credits) {
            return Err(TunableError::PeerBufferCredits(self.peer_buffer_credits));
        }
        if set(self.credits) && !(1..=MAX_CREDITS).contains(&self.credits) {
            return Err(TunableError::Credits(self.credits));
        }
        Ok(())
    }

    /// The LND's startup step: every value the administrator left unset
    /// takes the LND's default, and a peer may not have more credits than
    /// the whole NI (ksocklnd and ko2iblnd both clamp so).
    pub fn with_defaults(&self, lnd: &NetTunables) -> NetTunables {
        let pick = |mine: i32, theirs: i32| if mine == UNSET { theirs } else { mine };
        let mut t = NetTunables {
            peer_timeout: pick(self.peer_timeout, lnd.peer_timeout),
            peer_credits: pick(self.peer_credits, lnd.peer_credits),
            peer_buffer_credits: pick(self.peer_buffer_credits, lnd.peer_buffer_credits),
            credits: pick(self.credits, lnd.credits),
        };
        if t.peer_credits > t.credits {
            t.peer_credits = t.credits;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credits_queue_and_come_back_in_order() {
        let mut c = TxCredits::new(2);
        assert!(c.take());
        assert!(c.take());
        // Two more wait.
        assert!(!c.take());
        assert!(!c.take());
        assert_eq!((c.available, c.min, c.waiting()), (-2, -2, 2));
        // Each return hands the credit to the first waiter.
        assert!(c.give());
        assert!(c.give());
        assert_eq!(c.waiting(), 0);
        // The last two returns find nobody waiting.
        assert!(!c.give());
        assert!(!c.give());
        assert_eq!(
            c,
            TxCredits {
                max: 2,
                available: 2,
                min: -2
            }
        );
    }

    #[test]
    fn a_cancelled_waiter_wakes_nobody() {
        let mut c = TxCredits::new(1);
        assert!(c.take());
        assert!(!c.take());
        assert!(!c.take());
        c.cancel();
        assert_eq!(c.waiting(), 1);
        // The message in flight returns: the one waiter left goes.
        assert!(c.give());
        assert!(!c.give());
        assert_eq!(c.available, 1);
    }

    #[test]
    fn extra_returns_never_exceed_the_maximum() {
        let mut c = TxCredits::new(8);
        assert!(!c.give());
        assert_eq!(c.available, 8);
        let mut z = TxCredits::new(0);
        assert!(!z.give());
        assert_eq!(z.available, 0);
    }

    #[test]
    fn taking_saturates() {
        let mut c = TxCredits {
            max: 1,
            available: i32::MIN,
            min: i32::MIN,
        };
        assert!(!c.take());
        assert_eq!(c.available, i32::MIN);
        assert_eq!(c.waiting(), 1u32 << 31);
    }

    #[test]
    fn defaults_fill_only_unset_values_and_clamp_peer_credits() {
        let lnd = NetTunables {
            peer_timeout: 180,
            peer_credits: 8,
            peer_buffer_credits: 0,
            credits: 256,
        };
        assert_eq!(NetTunables::UNSET.with_defaults(&lnd), lnd);
        let mine = NetTunables {
            credits: 4,
            ..NetTunables::UNSET
        };
        let t = mine.with_defaults(&lnd);
        assert_eq!((t.credits, t.peer_credits, t.peer_timeout), (4, 4, 180));
        let mine = NetTunables {
            peer_credits: 32,
            peer_timeout: 0,
            ..NetTunables::UNSET
        };
        let t = mine.with_defaults(&lnd);
        assert_eq!((t.credits, t.peer_credits, t.peer_timeout), (256, 32, 0));
    }

    #[test]
    fn validation() {
        assert_eq!(NetTunables::UNSET.validate(), Ok(()));
        let bad = [
            (
                NetTunables {
                    peer_timeout: -2,
                    ..NetTunables::UNSET
                },
                TunableError::PeerTimeout(-2),
            ),
            (
                NetTunables {
                    peer_credits: 0,
                    ..NetTunables::UNSET
                },
                TunableError::PeerCredits(0),
            ),
            (
                NetTunables {
                    credits: MAX_CREDITS + 1,
                    ..NetTunables::UNSET
                },
                TunableError::Credits(MAX_CREDITS + 1),
            ),
            (
                NetTunables {
                    peer_buffer_credits: -5,
                    ..NetTunables::UNSET
                },
                TunableError::PeerBufferCredits(-5),
            ),
        ];
        for (t, e) in bad {
            assert_eq!(t.validate(), Err(e));
        }
        let ok = NetTunables {
            peer_timeout: 0,
            peer_credits: 1,
            peer_buffer_credits: 0,
            credits: MAX_CREDITS,
        };
        assert_eq!(ok.validate(), Ok(()));
    }
}
