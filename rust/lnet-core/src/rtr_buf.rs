//! Router buffers (Lustre's router.c and lib-move.c): the three pools a
//! forwarding node receives messages for other nodes into, their sizes
//! and credits, the `forwarding` parameter, and the router credits each
//! peer NI has on this node (`peer_buffer_credits`).
//!
//! Lustre's rules followed here:
//! - A message to forward takes the smallest buffer its payload fits
//!   (`lnet_msg2bufpool`): tiny for none, small for one page, large for
//!   up to `LNET_MTU`.
//! - It first takes a router credit of the peer NI it came from, then a
//!   credit of its pool (`lnet_post_routed_recv_locked`); short of either
//!   it waits, in order, and the LND keeps its payload meanwhile.
//! - A buffer given back goes to the next waiter of its pool; beyond the
//!   number asked for (the administrator lowered it) it is freed instead,
//!   and with routing off every returning buffer is freed
//!   (`lnet_return_rx_credits_locked`).
//! - Pool sizes: the parameter if above 0 (below Lustre's minimum only
//!   warned about), else Lustre's default; negative refused; divided
//!   among CPU partitions, at least one each (`lnet_nrb_*_calculate`).
//! - A peer NI's router credits: the net's `peer_buffer_credits` tunable,
//!   else the module parameter, else its send credits
//!   (`lnet_peer_buffer_credits`).

use super::credits::TxCredits;

/// `LNET_MTU`: the largest payload a router forwards.
pub const LNET_MTU: u32 = 1 << 20;

/// The three pools, in size order (`LNET_TINY_BUF_IDX`...).
pub const TINY: usize = 0;
/// One page.
pub const SMALL: usize = 1;
/// `LNET_MTU`.
pub const LARGE: usize = 2;
/// `LNET_NRBPOOLS`.
pub const NPOOLS: usize = 3;

/// Default and minimum buffer counts of each pool (router.c's
/// `LNET_NRB_*`), for the whole node.
pub const TINY_MIN: i32 = 512;
/// Tiny default.
pub const TINY_DEFAULT: i32 = TINY_MIN * 4;
/// Small minimum.
pub const SMALL_MIN: i32 = 4096;
/// Small default.
pub const SMALL_DEFAULT: i32 = SMALL_MIN * 4;
/// Large minimum.
pub const LARGE_MIN: i32 = 256;
/// Large default.
pub const LARGE_DEFAULT: i32 = LARGE_MIN * 4;

/// Pages of each pool's buffers for a page size of `page_size` bytes.
pub const fn pool_pages(pool: usize, page_size: u32) -> u32 {
    match pool {
        TINY => 0,
        SMALL => 1,
        // A zero page size (no such machine) sizes nothing, without a
        // division's panic path.
        _ => match page_size {
            0 => 0,
            _ => LNET_MTU.div_ceil(page_size),
        },
    }
}

/// The pool a payload of `len` bytes is received into, None beyond
/// `LNET_MTU`.
pub fn pool_of(len: u32, page_size: u32) -> Option<usize> {
    (0..NPOOLS)
        .find(|&p| u64::from(len) <= u64::from(pool_pages(p, page_size)) * u64::from(page_size))
}

/// The `forwarding` parameter (`lnet_rtrpools_alloc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forwarding {
    /// Not set: off unless a `routes=` entry names one of our own NIDs as
    /// its gateway.
    Unset,
    /// "enabled".
    Enabled,
    /// "disabled".
    Disabled,
}

impl Forwarding {
    /// Lustre accepts exactly "", "enabled" and "disabled".
    pub fn parse(s: &[u8]) -> Option<Forwarding> {
        match s {
            b"" => Some(Forwarding::Unset),
            b"enabled" => Some(Forwarding::Enabled),
            b"disabled" => Some(Forwarding::Disabled),
            _ => None,
        }
    }

    /// Whether LNet starts with routing on.
    pub fn starts_routing(self, im_a_router: bool) -> bool {
        match self {
            Forwarding::Unset => im_a_router,
            Forwarding::Enabled => true,
            Forwarding::Disabled => false,
        }
    }
}

/// How many buffers a pool gets per CPU partition
/// (`lnet_nrb_{tiny,small,large}_calculate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizing {
    /// Buffers per partition.
    pub per_cpt: u32,
    /// The parameter was set below Lustre's recommended minimum.
    pub below_min: bool,
}

/// The sizing of pool `pool` from its parameter `param`, or None for a
/// negative parameter, which Lustre refuses when routing starts.
pub fn sizing(pool: usize, param: i32, ncpts: u32) -> Option<Sizing> {
    let (default, min) = match pool {
        TINY => (TINY_DEFAULT, TINY_MIN),
        SMALL => (SMALL_DEFAULT, SMALL_MIN),
        _ => (LARGE_DEFAULT, LARGE_MIN),
    };
    if param < 0 {
        return None;
    }
    let n = if param > 0 { param } else { default };
    let per = n.unsigned_abs() / ncpts.max(1);
    Some(Sizing {
        per_cpt: per.max(1),
        below_min: param > 0 && param < min,
    })
}

/// A peer NI's router credits (`lnet_peer_buffer_credits`): the net's
/// tunable, else the module parameter, else its send credits.
pub fn peer_buffer_credits(net_tunable: i32, param: i32, peer_tx_credits: i32) -> i32 {
    if net_tunable > 0 {
        net_tunable
    } else if param > 0 {
        param
    } else {
        peer_tx_credits.max(1)
    }
}

/// A pool's counts (`struct lnet_rtrbufpool` without its lists).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolCount {
    /// Buffers the pool holds, free or lent (`rbp_nbuffers`).
    pub nbuffers: u32,
    /// Buffers asked for (`rbp_req_nbuffers`).
    pub req_nbuffers: u32,
    /// Free buffers; below zero, messages waiting (`rbp_credits`).
    pub credits: i32,
    /// The lowest `credits` reached (`rbp_mincredits`).
    pub mincredits: i32,
}

/// What to do with a buffer coming back to its pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returned {
    /// Free it: routing is off, or the pool has more than asked for.
    Free,
    /// Keep it, free.
    Keep,
    /// Lend it at once to the first waiting message.
    Wake,
}

impl PoolCount {
    /// Takes a credit for a message. `true`: a buffer is free for it;
    /// `false`: it waits behind the others.
    pub fn take(&mut self) -> bool {
        self.credits = self.credits.saturating_sub(1);
        self.mincredits = self.mincredits.min(self.credits);
        self.credits >= 0
    }

    /// A buffer comes back (`lnet_return_rx_credits_locked`).
    pub fn give_back(&mut self, routing: bool) -> Returned {
        if !routing {
            return Returned::Free;
        }
        if self.nbuffers > self.req_nbuffers {
            self.nbuffers -= 1;
            return Returned::Free;
        }
        self.credits = self.credits.saturating_add(1);
        if self.credits <= 0 {
            Returned::Wake
        } else {
            Returned::Keep
        }
    }

    /// A message waiting on the pool is dropped instead: its place goes.
    pub fn cancel(&mut self) {
        if self.credits < 0 {
            self.credits += 1;
        }
    }

    /// A message granted a credit gives it back with no buffer taken
    /// (none was free for it: the counts were off). It counts again,
    /// unless messages wait: there is no buffer to wake one with.
    pub fn cancel_held(&mut self) {
        if self.credits >= 0 {
            self.credits = self.credits.saturating_add(1);
        }
    }

    /// The number asked for is now `n` (`lnet_rtrpool_adjust_bufs`): how
    /// many buffers to add; with none to add, only the number asked for
    /// changes, and buffers above it are freed as they come back.
    pub fn request(&mut self, n: u32) -> u32 {
        let add = n.saturating_sub(self.nbuffers);
        if n <= self.req_nbuffers || add == 0 {
            self.req_nbuffers = n;
            return 0;
        }
        self.req_nbuffers = n;
        add
    }

    /// `n` buffers were made for the pool; returns how many waiting
    /// messages now get one.
    pub fn added(&mut self, n: u32) -> u32 {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        let waiting = if self.credits < 0 {
            self.credits.unsigned_abs()
        } else {
            0
        };
        self.nbuffers = self.nbuffers.saturating_add(n.unsigned_abs());
        self.credits = self.credits.saturating_add(n);
        self.mincredits = self.credits;
        waiting.min(n.unsigned_abs())
    }

    /// Adding buffers failed: the number asked for goes back to `old`.
    pub fn request_failed(&mut self, old: u32) {
        self.req_nbuffers = old;
    }

    /// Routing stopped (`lnet_rtrpool_free_bufs`): the free buffers go,
    /// and the counts are zero; lent buffers are freed when they return.
    pub fn clear(&mut self) {
        *self = PoolCount::default();
    }
}

/// A peer NI's router credits: `TxCredits` counts them the same way
/// (`lpni_rtrcredits`, `lpni_minrtrcredits`).
pub type PeerRtrCredits = TxCredits;

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u32 = 4096;

    #[test]
    fn pools_by_payload() {
        assert_eq!(pool_of(0, PAGE), Some(TINY));
        assert_eq!(pool_of(1, PAGE), Some(SMALL));
        assert_eq!(pool_of(PAGE, PAGE), Some(SMALL));
        assert_eq!(pool_of(PAGE + 1, PAGE), Some(LARGE));
        assert_eq!(pool_of(LNET_MTU, PAGE), Some(LARGE));
        assert_eq!(pool_of(LNET_MTU + 1, PAGE), None);
        assert_eq!(pool_pages(LARGE, PAGE), 256);
        assert_eq!(pool_pages(LARGE, 65536), 16);
    }

    #[test]
    fn forwarding_values() {
        assert_eq!(Forwarding::parse(b""), Some(Forwarding::Unset));
        assert_eq!(Forwarding::parse(b"enabled"), Some(Forwarding::Enabled));
        assert_eq!(Forwarding::parse(b"disabled"), Some(Forwarding::Disabled));
        assert_eq!(Forwarding::parse(b"Enabled"), None);
        assert_eq!(Forwarding::parse(b"1"), None);
        assert!(!Forwarding::Unset.starts_routing(false));
        assert!(Forwarding::Unset.starts_routing(true));
        assert!(!Forwarding::Disabled.starts_routing(true));
        assert!(Forwarding::Enabled.starts_routing(false));
    }

    #[test]
    fn sizing_rules() {
        assert_eq!(
            sizing(TINY, 0, 1),
            Some(Sizing {
                per_cpt: 2048,
                below_min: false
            })
        );
        assert_eq!(sizing(SMALL, 0, 2).map(|s| s.per_cpt), Some(8192));
        assert_eq!(sizing(LARGE, 0, 1).map(|s| s.per_cpt), Some(1024));
        assert_eq!(
            sizing(LARGE, 8, 1),
            Some(Sizing {
                per_cpt: 8,
                below_min: true
            })
        );
        // At least one per partition.
        assert_eq!(sizing(TINY, 1, 4).map(|s| s.per_cpt), Some(1));
        assert_eq!(sizing(SMALL, -1, 1), None);
        assert_eq!(sizing(TINY, 512, 1).map(|s| s.below_min), Some(false));
        assert_eq!(
            sizing(TINY, i32::MAX, 0).map(|s| s.per_cpt),
            Some(i32::MAX as u32)
        );
    }

    #[test]
    fn peer_credits_order() {
        assert_eq!(peer_buffer_credits(16, 4, 8), 16);
        assert_eq!(peer_buffer_credits(0, 4, 8), 4);
        assert_eq!(peer_buffer_credits(0, 0, 8), 8);
        assert_eq!(peer_buffer_credits(-1, 0, 0), 1);
    }

    #[test]
    fn pool_credits_wait_and_wake() {
        let mut p = PoolCount::default();
        assert_eq!(p.request(2), 2);
        assert_eq!(p.added(2), 0);
        assert_eq!((p.nbuffers, p.credits, p.mincredits), (2, 2, 2));
        assert!(p.take());
        assert!(p.take());
        assert!(!p.take());
        assert_eq!(p.mincredits, -1);
        // The returning buffer goes to the waiter.
        assert_eq!(p.give_back(true), Returned::Wake);
        assert_eq!(p.give_back(true), Returned::Keep);
        assert_eq!(p.give_back(true), Returned::Keep);
        assert_eq!(p.credits, 2);
    }

    #[test]
    fn lowering_frees_as_they_return() {
        let mut p = PoolCount::default();
        p.request(3);
        p.added(3);
        assert!(p.take());
        assert!(p.take());
        assert_eq!(p.request(1), 0);
        assert_eq!(p.req_nbuffers, 1);
        assert_eq!(p.give_back(true), Returned::Free);
        assert_eq!(p.give_back(true), Returned::Free);
        assert_eq!(p.nbuffers, 1);
        assert_eq!(p.credits, 1);
        // Raising it again adds only what is missing.
        assert_eq!(p.request(4), 3);
        assert_eq!(p.added(3), 0);
        assert_eq!((p.nbuffers, p.credits), (4, 4));
    }

    #[test]
    fn added_buffers_wake_waiters() {
        let mut p = PoolCount::default();
        p.request(1);
        p.added(1);
        assert!(p.take());
        assert!(!p.take());
        assert!(!p.take());
        assert_eq!(p.request(2), 1);
        assert_eq!(p.added(1), 1);
        assert_eq!(p.credits, -1);
        let old = p.req_nbuffers;
        assert_eq!(p.request(5), 3);
        p.request_failed(old);
        assert_eq!(p.req_nbuffers, 2);
    }

    #[test]
    fn routing_off_frees_and_cancel() {
        let mut p = PoolCount::default();
        p.request(1);
        p.added(1);
        assert!(p.take());
        assert!(!p.take());
        p.cancel();
        assert_eq!(p.credits, 0);
        p.clear();
        assert_eq!(p.give_back(false), Returned::Free);
        assert_eq!(p, PoolCount::default());
    }

    #[test]
    fn granted_credit_without_buffer_comes_back() {
        let mut p = PoolCount::default();
        p.request(2);
        p.added(2);
        assert!(p.take());
        // A granted credit is not a waiter's place: `cancel` keeps it...
        p.cancel();
        assert_eq!(p.credits, 1);
        // ...`cancel_held` returns it.
        p.cancel_held();
        assert_eq!(p.credits, 2);
        // With messages waiting it stays taken: no buffer to wake one.
        assert!(p.take());
        assert!(p.take());
        assert!(!p.take());
        p.cancel_held();
        assert_eq!(p.credits, -1);
    }
}
