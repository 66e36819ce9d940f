// SPDX-License-Identifier: GPL-2.0

//! `the_lnet`: the node's LNet state and its locks.
//!
//! # Lock order
//!
//! The one order of lnet.ko's locks, outermost first: a lock is only ever
//! taken while holding locks above it. Mutexes come first; no spinlock is
//! held across a sleep, `lnet_finalize`, a send, an MD unlink or a call
//! into an LND, and LNDs call into LNet with none of their own locks held
//! (but kapi's link watcher mutex, under which they call
//! `lnet_set_link_fatal_state`, which takes no lock).
//!
//! 1. `api` (mutex): LNetNIInit/LNetNIFini, /dev/lnet configuration, the
//!    monitor and discovery threads. LND startup and shutdown run under
//!    it, an LND's unregistration waits for it, and so do the handlers of
//!    MDs that shutdown or `net del` unlink (as in Lustre, a handler must
//!    not call LNetNIFini then). The
//!    module's `kernel_param_lock` sits at the same level, never nested
//!    with it. /dev/lnet's per-file `ping` mutex (dev.rs) is also
//!    outermost: a ping sends under it.
//! 2. `pings` (mutex): the posted ping buffers.
//! 3. `nid_updates` (mutex): NID update callbacks; takes nothing.
//! 4. `nis`: the LNDs and the running NIs.
//! 5. `peers`: peers and peer NIs, and the route table (route.rs), whose
//!    gateways are peers.
//! 6. `discovery`: peers queued for discovery.
//! 7. `udsp`: the UDSP rules.
//! 8. `tx`: send credits and the messages waiting for them; NI credits
//!    are written only under it.
//!    `rtr` (router.rs: router buffers, their credits and the messages
//!    waiting for them) sits here too and takes no other lock.
//! 9. `pushes`: the push target's buffers.
//! 10. `res`: MDs, MEs, portals and response trackers (with `handled`,
//!     the condvar an unlink waits on). Event handlers never run under it.
//! 11. `faults`: fault injection rules.
//! 12. `resends`: messages the monitor sends again.
//! 13. `ping_words`: the posted ping buffer's status words, rewritten in
//!     place from any context.
//! 14. A ping's own wait lock (ping.rs).
//!
//! The crypto speed lock (crypto.rs) is never held with another.
//!
//! Each LND's own locks have their order in its crate doc
//! (socklnd/socklnd_main.rs, o2iblnd/o2iblnd_main.rs).

use crate::counters::Counters;
use crate::kapi::kthread::Thread;
use crate::lnd::LndRef;
use crate::lnet_core::md::MatchEntry;
use crate::md::LibMd;
use crate::ni::Ni;
use core::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::rbtree::RBTree;
use kernel::sync::{Arc, CondVar, Mutex, SpinLock};
use kernel::{new_condvar, new_mutex, new_spinlock};

/// Portals in the table (`MAX_PORTALS`).
pub(crate) const MAX_PORTALS: u32 = 64;

/// A match entry (`struct lnet_me`).
pub(crate) struct Me {
    pub(crate) portal: u32,
    /// Position in the portal's list (see [`Res::ptl`]).
    pub(crate) pos: i64,
    pub(crate) entry: MatchEntry,
    pub(crate) unlink: bool,
    pub(crate) md: Option<u64>,
}

pub(crate) struct Res {
    /// MDs by handle cookie.
    pub(crate) mds: RBTree<u64, LibMd>,
    /// MEs by cookie (the `struct lnet_me *` callers hold is the cookie).
    pub(crate) mes: RBTree<u64, Me>,
    /// Match lists: (portal, position) -> ME cookie, in match order.
    pub(crate) ptl: RBTree<(u32, i64), u64>,
    /// Lazy portals, one bit each (`LNetSetLazyPortal`).
    pub(crate) lazy: u64,
    /// Requests waiting on lazy portals, in arrival order.
    pub(crate) delayed: KVec<crate::portal::Delayed>,
}

pub(crate) struct Nis {
    pub(crate) lnds: KVec<LndRef>,
    pub(crate) nis: KVec<Arc<Ni>>,
}

pub(crate) struct Api {
    /// LNetNIInit calls not yet matched by LNetNIFini.
    pub(crate) refcount: u32,
    pub(crate) monitor: Option<Thread>,
    /// The discovery thread (`lnet_discovery`).
    pub(crate) discovery: Option<Thread>,
    /// /dev/lnet's own reference (`lnetctl lnet configure`).
    pub(crate) dev_ref: bool,
}

/// The ping buffer, under its own lock so that the monitor thread can
/// post a new one while shutdown holds `api` and waits for that thread.
pub(crate) struct Pings {
    /// The ping buffer on the reserved portal while LNet is up. One it
    /// replaces lives on in its MD while a REPLY sends from it.
    pub(crate) current: Option<crate::ping::PingTarget>,
}

/// The posted ping buffer, whose NIs' status words are rewritten in place
/// from any context (health.md §1), only under the lock holding this.
pub(crate) struct PingWords {
    pub(crate) current: Option<Arc<crate::ping::PingBuffer>>,
}

#[pin_data]
pub(crate) struct TheLnet {
    #[pin]
    pub(crate) res: SpinLock<Res>,
    /// Signalled when an MD's handler returns (the HANDLING flag clears).
    #[pin]
    pub(crate) handled: CondVar,
    #[pin]
    pub(crate) nis: SpinLock<Nis>,
    #[pin]
    pub(crate) api: Mutex<Api>,
    /// Lock order 2 (see the module doc).
    #[pin]
    pub(crate) pings: Mutex<Pings>,
    /// NID update callbacks and the order of their deliveries
    /// (nid_update.rs); taken after `api`, with no other lock.
    #[pin]
    pub(crate) nid_updates: Mutex<crate::nid_update::NidUpdates>,
    /// Signalled when a NID update callback returns or a delivery ends.
    #[pin]
    pub(crate) nid_update_done: CondVar,
    /// The current ping buffer's bytes; a leaf lock, taken under any other.
    #[pin]
    pub(crate) ping_words: SpinLock<PingWords>,
    /// The push target's buffers and counts; `res` may be taken under it.
    #[pin]
    pub(crate) pushes: SpinLock<crate::push::Pushes>,
    /// Peers queued for discovery and the messages waiting for it; taken
    /// after `peers`.
    #[pin]
    pub(crate) discovery: SpinLock<crate::discovery::Queue>,
    /// Wakes the discovery thread; `dc_work` says there is work.
    #[pin]
    pub(crate) dc_wait: crate::kapi::waitq::WaitQueue,
    pub(crate) dc_work: AtomicBool,
    /// The discovery thread runs: messages may wait for it.
    pub(crate) dc_running: AtomicBool,
    /// Sequence number of the last ping buffer built
    /// (`ln_ping_target_seqno`).
    pub(crate) ping_seq: AtomicU32,
    /// Fault injection rules and the messages delay rules hold.
    #[pin]
    pub(crate) faults: SpinLock<crate::fault::Faults>,
    /// Number of fault rules: none means no lock on the message path.
    pub(crate) fault_rules: AtomicU32,
    /// Peers and peer NIs; taken after `nis` when both are held.
    #[pin]
    pub(crate) peers: SpinLock<crate::peer::Peers>,
    /// UDSP rules; taken after `nis` and `peers`.
    #[pin]
    pub(crate) udsp: SpinLock<crate::udsp::Rules>,
    /// Send credits and the messages waiting for them; taken after `nis`
    /// and `peers`.
    #[pin]
    pub(crate) tx: SpinLock<crate::credits::Tx>,
    /// Forwarding: the router buffer pools and the messages waiting for
    /// buffers or router credits; takes no other lock.
    #[pin]
    pub(crate) rtr: SpinLock<crate::router::Router>,
    /// Messages the monitor thread sends again; taken alone.
    #[pin]
    pub(crate) resends: SpinLock<crate::health::Resends>,
    pub(crate) late: crate::health::Late,
    /// Global net sequence (`ln_net_seq`).
    pub(crate) net_seq: AtomicU64,
    pub(crate) counters: Counters,
    /// Names this incarnation of LNet in wire handles.
    pub(crate) interface_cookie: u64,
    next_cookie: AtomicU64,
    me_head: AtomicI64,
    me_tail: AtomicI64,
    /// Sends and receives are accepted.
    pub(crate) running: AtomicBool,
    /// Our process id (`LNetNIInit`'s requested pid).
    pub(crate) pid: AtomicU32,
    /// Messages not yet finalized.
    pub(crate) msgs_in_flight: AtomicU32,
    /// Event sequence numbers.
    pub(crate) event_seq: AtomicU64,
    /// No response tracker is due before this (monotonic seconds).
    pub(crate) next_deadline: AtomicI64,
    /// An NI's fatal state changed: the monitor posts a new ping buffer.
    pub(crate) ping_update: AtomicBool,
}

static THE_LNET: AtomicPtr<TheLnet> = AtomicPtr::new(core::ptr::null_mut());

impl TheLnet {
    pub(crate) fn new() -> Result<Pin<KBox<TheLnet>>> {
        let mut cookie = [0u8; 8];
        crate::kapi::sys::random_bytes(&mut cookie);
        KBox::pin_init(
            pin_init!(TheLnet {
                res <- new_spinlock!(Res {
                    mds: RBTree::new(),
                    mes: RBTree::new(),
                    ptl: RBTree::new(),
                    lazy: 0,
                    delayed: KVec::new(),
                }, "lnet_res"),
                handled <- new_condvar!("lnet_md_handled"),
                nis <- new_spinlock!(Nis { lnds: KVec::new(), nis: KVec::new() }, "lnet_nis"),
                api <- new_mutex!(
                    Api {
                        refcount: 0,
                        monitor: None,
                        discovery: None,
                        dev_ref: false,
                    },
                    "lnet_api"
                ),
                nid_updates <- new_mutex!(crate::nid_update::NidUpdates::new(), "lnet_nid_updates"),
                nid_update_done <- new_condvar!("lnet_nid_update_done"),
                pushes <- new_spinlock!(crate::push::Pushes::default(), "lnet_pushes"),
                discovery <- new_spinlock!(crate::discovery::Queue::default(), "lnet_discovery"),
                dc_wait <- crate::kapi::waitq::WaitQueue::new(),
                dc_work: AtomicBool::new(false),
                dc_running: AtomicBool::new(false),
                ping_seq: AtomicU32::new(0),
                faults <- new_spinlock!(crate::fault::Faults::new(), "lnet_faults"),
                fault_rules: AtomicU32::new(0),
                pings <- new_mutex!(Pings { current: None }, "lnet_pings"),
                ping_words <- new_spinlock!(PingWords { current: None }, "lnet_ping_words"),
                peers <- new_spinlock!(crate::peer::Peers::default(), "lnet_peers"),
                udsp <- new_spinlock!(crate::udsp::Rules::default(), "lnet_udsp"),
                tx <- new_spinlock!(crate::credits::Tx::default(), "lnet_tx"),
                rtr <- new_spinlock!(crate::router::Router::default(), "lnet_rtr"),
                resends <- new_spinlock!(crate::health::Resends::new(), "lnet_resends"),
                late: crate::health::Late::default(),
                net_seq: AtomicU64::new(0),
                counters: Counters::default(),
                interface_cookie: u64::from_ne_bytes(cookie) & !1,
                next_cookie: AtomicU64::new(1),
                me_head: AtomicI64::new(0),
                me_tail: AtomicI64::new(1),
                running: AtomicBool::new(false),
                pid: AtomicU32::new(crate::lnet_core::md::PID_ANY),
                msgs_in_flight: AtomicU32::new(0),
                event_seq: AtomicU64::new(0),
                next_deadline: AtomicI64::new(i64::MAX),
                ping_update: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    /// Publishes `lnet` to the C entry points and the module's threads:
    /// [`TheLnet::get`] hands it out as `'static` from now on.
    ///
    /// # Safety
    ///
    /// `lnet` stays pinned and alive until [`TheLnet::unpublish`], and is
    /// freed only once nothing uses a reference [`TheLnet::get`] gave out:
    /// C callers are done (they hold module references while in LNet, the
    /// parameter setters are fenced by the parameter lock) and the threads
    /// started on it (monitor, discovery) have been stopped.
    pub(crate) unsafe fn publish(lnet: &TheLnet) {
        THE_LNET.store((lnet as *const TheLnet).cast_mut(), Ordering::Release);
    }

    pub(crate) fn unpublish() {
        THE_LNET.store(core::ptr::null_mut(), Ordering::Release);
    }

    /// The published state; None before module init finished or after exit
    /// began. `'static` for its users: it is freed only after all of them
    /// are done (`publish`'s contract).
    pub(crate) fn get() -> Option<&'static TheLnet> {
        let p = THE_LNET.load(Ordering::Acquire);
        // SAFETY: null, or a box `publish`ed, whose caller keeps it alive
        // until every reference handed out here is no longer used.
        unsafe { p.as_ref() }
    }

    /// A fresh cookie for an MD or ME: never 0 and never all ones.
    pub(crate) fn cookie(&self) -> u64 {
        self.next_cookie.fetch_add(1, Ordering::Relaxed)
    }

    /// A position at the head or tail of a portal's match list.
    pub(crate) fn me_pos(&self, head: bool) -> i64 {
        if head {
            self.me_head.fetch_sub(1, Ordering::Relaxed)
        } else {
            self.me_tail.fetch_add(1, Ordering::Relaxed)
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }
}

impl Res {
    /// A live (not unlinked) MD.
    pub(crate) fn md(&mut self, cookie: u64) -> Option<&mut LibMd> {
        self.mds.get_mut(&cookie).filter(|md| !md.is_zombie())
    }

    /// Unlinks an MD (`lnet_md_unlink`): from now on lookups fail; its ME is
    /// detached (and removed if it was attached with LNET_UNLINK); it is
    /// freed once no message holds it. Returns whether it was freed.
    pub(crate) fn md_unlink(&mut self, cookie: u64) -> bool {
        let Some(md) = self.mds.get_mut(&cookie) else {
            return false;
        };
        if !md.is_zombie() {
            md.flags |= crate::md::flags::ZOMBIE;
            if let Some(me_cookie) = md.me.take() {
                self.me_detach_md(me_cookie);
            }
        }
        let free = self.mds.get(&cookie).is_some_and(|md| md.refcount == 0);
        if free {
            self.mds.remove(&cookie);
        }
        free
    }

    fn me_detach_md(&mut self, me_cookie: u64) {
        let Some(me) = self.mes.get_mut(&me_cookie) else {
            return;
        };
        me.md = None;
        if me.unlink {
            self.me_remove(me_cookie);
        }
    }

    /// Removes an ME from its portal and frees it.
    pub(crate) fn me_remove(&mut self, me_cookie: u64) {
        if let Some(me) = self.mes.remove(&me_cookie) {
            self.ptl.remove(&(me.portal, me.pos));
        }
    }
}
