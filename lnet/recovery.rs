// SPDX-License-Identifier: GPL-2.0

//! Recovery queues (health.md §7): unhealthy local NIs and peer NIs are
//! pinged by the monitor thread with exponential backoff (1, 2, 4 ... s up
//! to `lnet_max_recovery_ping_interval`) until their health is back at
//! 1000. Peer NIs are recovered only if they were ever heard from, and not
//! longer than `lnet_recovery_limit` after that (0: forever).
//!
//! A ping's MD is remembered until the next pass: after a failed send the
//! pass unlinks it, so its response tracker cannot expire later and cost
//! health a second time; leaving the queue unlinks it too.
//!
//! A local NI is pinged at its own NID, through an NI of its net and that
//! NI's LND (never over `0@lo`): the GET arrives on the NI under recovery,
//! and that receive raises its health and restarts its backoff, as any
//! successful receive does (health.md §7.2).

use crate::api;
use crate::kapi::bindings::lnet_event;
use crate::kapi::kthread;
use crate::lnet_core::health::{self, MAX_HEALTH};
use crate::lnet_core::md::{options, EventKind};
use crate::lnet_core::nid::Nid;
use crate::lnet_core::ping::MIN_SIZE;
use crate::own_md::{self, MdMemory, MdOwner};
use crate::params;
use crate::state::TheLnet;
use core::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::sync::Arc;

/// Recovery state of one NI or peer NI.
#[derive(Clone, Copy, Default)]
pub(crate) struct Recovery {
    pub(crate) queued: bool,
    /// A ping is out.
    pub(crate) pending: bool,
    /// The last ping failed: its MD is unlinked by the next pass.
    pub(crate) failed: bool,
    /// Cookie of the last ping's MD (0: none).
    pub(crate) ping_md: u64,
    pub(crate) ping_count: u32,
    /// Monotonic seconds of the next ping.
    pub(crate) next_ping: i64,
    /// Left the queue aged out after its last ping, whose MD is left to
    /// its REPLY or its deadline as Lustre leaves it.
    pub(crate) aged: bool,
}

impl Recovery {
    /// Queues for recovery (no-op if queued): the first ping after the
    /// current backoff step.
    pub(crate) fn queue(&mut self, now: i64) {
        if !self.queued {
            self.queued = true;
            self.aged = false;
            self.next_ping = now.saturating_add(i64::from(interval(self.ping_count)));
        }
    }

    /// Leaves the queue; the next pass unlinks a ping still out.
    pub(crate) fn dequeue(&mut self) {
        self.queued = false;
        self.failed = false;
    }
}

/// A local NI's recovery state: atomics, since NIs are shared without a
/// lock of their own.
#[derive(Default)]
pub(crate) struct NiRecovery {
    pub(crate) queued: AtomicBool,
    pub(crate) pending: AtomicBool,
    pub(crate) failed: AtomicBool,
    pub(crate) ping_md: AtomicU64,
    pub(crate) ping_count: AtomicU32,
    pub(crate) next_ping: AtomicI64,
}

impl NiRecovery {
    /// Queues the NI (no-op if queued); `at` is the first ping's time.
    /// Whether it was queued now.
    pub(crate) fn queue_at(&self, at: i64) -> bool {
        let newly = !self.queued.swap(true, Relaxed);
        if newly {
            self.next_ping.store(at, Relaxed);
        }
        newly
    }

    /// Queues the NI with the current backoff step.
    pub(crate) fn queue(&self, now: i64) {
        let at = now.saturating_add(i64::from(interval(self.ping_count.load(Relaxed))));
        self.queue_at(at);
    }
}

fn interval(ping_count: u32) -> u32 {
    let t = params::snapshot();
    health::recovery_interval(
        ping_count,
        t.max_recovery_ping_count,
        t.max_recovery_ping_interval,
    )
}

/// What a recovery ping is for; its MD holds it until its final event.
struct Ping {
    local: bool,
    nid: Nid,
    mem: MdMemory,
}

/// Whether a peer NI heard from at `last_alive` may be recovered now.
pub(crate) fn peer_recoverable(last_alive: i64, now: i64) -> bool {
    let limit = params::snapshot().recovery_limit;
    last_alive != 0 && (limit == 0 || now <= last_alive.saturating_add(i64::from(limit)))
}

impl MdOwner for Ping {
    fn memory(&self) -> &MdMemory {
        &self.mem
    }

    fn event(&self, lnet: &TheLnet, ev: &lnet_event) {
        let (local, nid) = (self.local, self.nid);
        let ok = ev.status == 0;
        let kind = ev.type_;
        let done = ev.unlinked != 0 || kind == EventKind::Reply as _ || !ok;
        let s = params::snapshot().health_sensitivity;
        let up = ok && (kind == EventKind::Send as _ || kind == EventKind::Reply as _);
        if local {
            let nis = lnet.nis.lock();
            if let Some(ni) = nis.nis.iter().find(|n| n.nid == nid) {
                // On top of what the GET's and REPLY's completions give
                // (health.md §7.2).
                if up {
                    crate::health::ni_health(lnet, ni, |h| health::inc(h, s));
                }
                if done {
                    ni.recovery.pending.store(false, Relaxed);
                }
                if !ok {
                    ni.recovery.failed.store(true, Relaxed);
                }
            }
        } else {
            // A peer NI gains health only through the REPLY's receive
            // (health.md §3): a SEND event says only that the data left,
            // and a peer NI that takes it but never answers stays low.
            // health.md §7.3 says the event handler raises it too; Lustre's
            // lnet_handle_recovery_reply does not, and we follow the code.
            let mut peers = lnet.peers.lock();
            if let Some(lp) = peers.peer_ni_mut(&nid) {
                if done {
                    lp.recovery.pending = false;
                }
                if !ok {
                    lp.recovery.failed = true;
                }
            }
        }
    }
}

/// Sends one recovery ping to `nid`; its MD's cookie, or None if it could
/// not be sent.
fn send_ping(lnet: &TheLnet, nid: Nid, local: bool) -> Option<u64> {
    let mem = MdMemory::zeroed(MIN_SIZE).ok()?;
    let p = Arc::new(Ping { local, nid, mem }, GFP_KERNEL).ok()?;
    let md = own_md::bind(lnet, p, 2, options::TRUNCATE | options::TRACK_RESPONSE).ok()?;
    let mut r = own_md::reserved_request(md, nid, false);
    r.timeout = params::snapshot().transaction_timeout;
    // Never resent, and no Multi-Rail selection.
    r.recovery = true;
    own_md::send_or_unlink(lnet, r, false).ok()?;
    Some(md)
}

/// MDs of earlier pings that one pass unlinks once its locks are dropped.
struct StaleMds {
    cookies: [u64; 32],
    n: usize,
}

impl StaleMds {
    /// Takes the cookie in `md` if there is room; otherwise it stays for a
    /// later pass, which looks at every NI and peer NI again.
    fn take(&mut self, md: &mut u64) {
        if *md == 0 {
            return;
        }
        if let Some(slot) = self.cookies.get_mut(self.n) {
            *slot = core::mem::take(md);
            self.n += 1;
        }
    }

    fn take_atomic(&mut self, md: &AtomicU64) {
        let mut v = md.load(Relaxed);
        self.take(&mut v);
        md.store(v, Relaxed);
    }
}

/// One pass of both queues (`lnet_recover_local_nis`,
/// `lnet_recover_peer_nis`), from the monitor thread. A ping's MD is
/// unlinked once the ping failed, before the next ping, and when its NI
/// leaves the queue.
pub(crate) fn run(lnet: &TheLnet) {
    // At most BATCH pings a pass, a pass a second: the NIs due are listed
    // on the stack under the locks and pinged after. Lustre pings every NI
    // due in a pass, so a queue of thousands sends thousands at once; here
    // it is worked through BATCH a second, the first in the table first
    // (bench_scale measures a queue of 10000).
    const BATCH: usize = 16;
    let now = kthread::now_secs();
    let mut due = [(Nid::ANY, true); BATCH];
    let mut n = 0;
    let mut stale = StaleMds {
        cookies: [0; 32],
        n: 0,
    };
    // Local NIs.
    {
        let nis = lnet.nis.lock();
        for ni in nis.nis.iter().filter(|x| x.nid != Nid::LO) {
            let r = &ni.recovery;
            if r.queued.load(Relaxed) && (!ni.is_active() || ni.health.load(Relaxed) >= MAX_HEALTH)
            {
                r.queued.store(false, Relaxed);
                r.failed.store(false, Relaxed);
            }
            if !r.queued.load(Relaxed) {
                stale.take_atomic(&r.ping_md);
                continue;
            }
            let ping = now >= r.next_ping.load(Relaxed) && !r.pending.load(Relaxed) && n < BATCH;
            if r.failed.swap(false, Relaxed) || ping {
                stale.take_atomic(&r.ping_md);
            }
            if let (true, Some(slot)) = (ping, due.get_mut(n)) {
                *slot = (ni.nid, true);
                n += 1;
                r.pending.store(true, Relaxed);
                let count = r.ping_count.load(Relaxed).saturating_add(1);
                r.ping_count.store(count, Relaxed);
                r.next_ping
                    .store(now.saturating_add(i64::from(interval(count))), Relaxed);
            }
        }
    }
    // Peer NIs.
    {
        let mut peers = lnet.peers.lock();
        for lp in peers.list.iter_mut().flat_map(|p| p.nis.iter_mut()) {
            let r = &mut lp.recovery;
            if r.queued && lp.health >= MAX_HEALTH {
                r.dequeue();
            }
            let ping = r.queued && now >= r.next_ping && !r.pending && n < BATCH;
            if !r.queued {
                if !r.aged {
                    stale.take(&mut r.ping_md);
                }
                continue;
            }
            if core::mem::take(&mut r.failed) || ping {
                stale.take(&mut r.ping_md);
            }
            if let Some(slot) = due.get_mut(n).filter(|_| ping) {
                *slot = (lp.nid, false);
                n += 1;
                r.pending = true;
                r.ping_count = r.ping_count.saturating_add(1);
                r.next_ping = now.saturating_add(i64::from(interval(r.ping_count)));
                // Queued again after each ping only while recoverable
                // (lnet_peer_ni_add_to_recoveryq_locked): an aged one
                // leaves after this last ping, its count reset.
                if !peer_recoverable(lp.last_alive, now) {
                    r.dequeue();
                    r.aged = true;
                    r.ping_count = 0;
                }
            }
        }
    }
    for &cookie in stale.cookies.iter().take(stale.n) {
        // Gone already if it completed; its tracker goes with it.
        let _ = api::md_unlink(lnet, cookie, false, 0);
    }
    for &(nid, local) in due.iter().take(n) {
        let md = send_ping(lnet, nid, local);
        record_ping(lnet, &nid, local, md);
    }
}

/// Records the MD of the ping just sent, or clears `pending` if none went.
fn record_ping(lnet: &TheLnet, nid: &Nid, local: bool, md: Option<u64>) {
    if local {
        let nis = lnet.nis.lock();
        if let Some(ni) = nis.nis.iter().find(|n| n.nid == *nid) {
            match md {
                Some(cookie) => ni.recovery.ping_md.store(cookie, Relaxed),
                None => ni.recovery.pending.store(false, Relaxed),
            }
        }
    } else {
        let mut peers = lnet.peers.lock();
        if let Some(lp) = peers.peer_ni_mut(nid) {
            match md {
                Some(cookie) => lp.recovery.ping_md = cookie,
                None => lp.recovery.pending = false,
            }
        }
    }
}
