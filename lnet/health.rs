// SPDX-License-Identifier: GPL-2.0

//! LNet Health in lnet.ko: applies lnet-core's decision for each completion
//! (health.md §3) to the NI and peer NI involved, moves the counters of §6,
//! and resends (§4) through selection again, so that the path that failed
//! now ranks lower.

use crate::counters::Counters;
use crate::kapi::kthread;
use crate::lnet_core::health::{self, Change, Committed, Completion, Counted, Status};
use crate::lnet_core::nid::Nid;
use crate::msg::{self, Msg};
use crate::ni::Ni;
use crate::params;
use crate::state::TheLnet;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;

/// Per-NI health counters (`ni_hstats`), by local status.
#[derive(Default)]
pub(crate) struct NiStats {
    pub(crate) interrupts: AtomicU32,
    pub(crate) dropped: AtomicU32,
    pub(crate) aborted: AtomicU32,
    pub(crate) no_route: AtomicU32,
    pub(crate) timeouts: AtomicU32,
    pub(crate) error: AtomicU32,
}

impl NiStats {
    fn count(&self, s: Status) {
        let c = match s {
            Status::LocalInterrupt => &self.interrupts,
            Status::LocalDropped => &self.dropped,
            Status::LocalAborted => &self.aborted,
            Status::LocalNoRoute => &self.no_route,
            Status::LocalTimeout => &self.timeouts,
            Status::LocalError => &self.error,
            _ => return,
        };
        Counters::add(c);
    }
}

/// Per-peer-NI health counters (`lpni_hstats`), by remote status.
#[derive(Default, Clone, Copy)]
pub(crate) struct PeerNiStats {
    pub(crate) dropped: u32,
    pub(crate) timeout: u32,
    pub(crate) error: u32,
    pub(crate) network_timeout: u32,
}

impl PeerNiStats {
    fn count(&mut self, s: Status) {
        let c = match s {
            Status::RemoteDropped => &mut self.dropped,
            Status::RemoteTimeout => &mut self.timeout,
            Status::RemoteError => &mut self.error,
            Status::NetworkTimeout => &mut self.network_timeout,
            _ => return,
        };
        *c = c.wrapping_add(1);
    }
}

/// Moves a local NI's health by `f`; reaching 0 or the maximum flips its
/// status word (health.md §1).
pub(crate) fn ni_health(lnet: &TheLnet, ni: &Ni, f: impl Fn(u32) -> u32) {
    let Ok(old) = ni.health.fetch_update(Relaxed, Relaxed, |h| Some(f(h))) else {
        return;
    };
    if let Some(up) = health::ni_status_edge(old, f(old)) {
        ni_set_status(lnet, ni, up, f(old));
    }
}

/// Sets a local NI's status word (`lnet_ni_set_status`), in the posted
/// ping buffer too; `health` is for the console line. Lustre stops there
/// (health.md §1); here the monitor also posts a new buffer within a
/// second and pushes it to Multi-Rail peers, as for a fatal link: they
/// leave a peer NI reported down alone (selection, discovery.rs), so
/// they must hear when it is up again.
pub(crate) fn ni_set_status(lnet: &TheLnet, ni: &Ni, up: bool, health: u32) {
    if ni.status_down.swap(!up, Relaxed) == up {
        lnet.ping_update.store(true, Relaxed);
        let rewritten = crate::ping::set_ni_status(lnet, ni.nid, up);
        crate::cdebug_limit!(
            crate::lnet_core::debug::D_HA,
            "{}: health {}, status {}{}\n",
            ni.nid,
            health,
            if up { "up" } else { "down" },
            if rewritten { " in the ping buffer" } else { "" }
        );
    }
}

fn apply(h: u32, change: Change, sensitivity: u32) -> u32 {
    match change {
        Change::None => h,
        Change::Decrement => health::dec(h, sensitivity),
        Change::Increment | Change::IncrementAndRequeue => health::inc(h, sensitivity),
        Change::SetMax => health::MAX_HEALTH,
    }
}

/// Health processing for a message about to be finalized. Returns the
/// message back, or `None` when it was resent (it will be finalized again
/// when that attempt ends).
pub(crate) fn check(
    lnet: &TheLnet,
    mut m: KBox<Msg>,
    status: i32,
    hstatus: Status,
) -> Option<KBox<Msg>> {
    // An optimized GET's REPLY has no peer NI: Lustre's health check
    // skips it whole (`lnet_is_health_check`), lateness included.
    if m.no_rx_peer {
        return Some(m);
    }
    let Some(ni) = m.ni.clone() else {
        return Some(m);
    };
    let committed = match (m.rx, m.rx_committed) {
        (true, _) => Committed::Rx,
        (false, true) => Committed::TxRx,
        (false, false) => Committed::Tx,
    };
    let peer_nid = if m.rx { m.from } else { m.txpeer };
    let t = params::snapshot();
    let (local_multi_rail, peer_is_local) = {
        let nis = lnet.nis.lock();
        let mut own = nis.nis.iter().filter(|n| n.nid != Nid::LO);
        let peer_is_local = own.clone().any(|n| n.nid == peer_nid);
        (own.nth(1).is_some(), peer_is_local)
    };
    // Taken before `peers`, whose hold needs nothing else.
    let routing = crate::router::routing(lnet);
    // Held from the peer's shape to its health update: one lookup.
    let mut peers = lnet.peers.lock();
    let found = peers.locate(&peer_nid);
    let peer = found.and_then(|(pi, _)| peers.list.get(pi));
    let peer_multi_rail = peer.is_some_and(|p| p.nis.len() > 1);
    // A gateway of one of our routes (`lnet_isrouter`): its health keeps
    // the routes through it ranked even when it has one NI.
    let peer_is_router = peer.is_some_and(|p| peers.routes.table.is_gateway(&p.primary));
    // The deadline gate: a failure after the attempt's deadline changes
    // nothing (health.md §3 step 2); the lateness is counted either way.
    let now = kthread::now_secs();
    let late = m.deadline != 0 && now > m.deadline;
    if late {
        lnet.late.count(now.saturating_sub(m.deadline));
    }
    let c = Completion {
        status: hstatus,
        errno_ok: status == 0,
        committed,
        has_peer_ni: ni.nid != Nid::LO,
        late,
        monitor_running: lnet.is_running(),
        local_multi_rail,
        peer_multi_rail,
        peer_is_router_or_routing: peer_is_router || routing,
        // Our own NIDs are recovered as local NIs (health.md §3).
        peer_is_local,
        no_resend: m.no_resend,
        retry_count: m.retry_count,
    };
    let d = health::decide(&c, t.retry_count);
    if !d.processed {
        return Some(m);
    }
    let s = t.health_sensitivity;
    if d.local != Change::None {
        ni_health(lnet, &ni, |h| apply(h, d.local, s));
        if d.local == Change::Decrement {
            ni.recovery.queue(now);
        }
    }
    if d.reset_ping_counts {
        ni.recovery.ping_count.store(0, Relaxed);
    }
    if let Some((pi, li)) = found {
        if let Some(p) = peers.list.get_mut(pi).and_then(|p| p.nis.get_mut(li)) {
            p.health = apply(p.health, d.remote, s);
            if d.counted == Counted::Remote {
                p.hstats.count(hstatus);
            }
            if d.reset_ping_counts {
                p.recovery.ping_count = 0;
            }
            if matches!(d.remote, Change::Decrement | Change::IncrementAndRequeue) {
                p.offer_recovery(now);
            }
        }
    }
    drop(peers);
    match d.counted {
        Counted::Local => {
            ni.hstats.count(hstatus);
            lnet.counters.hstatus(hstatus as u32);
        }
        Counted::Remote => lnet.counters.hstatus(hstatus as u32),
        Counted::SuccessfulResend => Counters::add(&lnet.counters.successful_resends),
        Counted::Nothing => {}
    }
    if d.retries_exhausted {
        Counters::add(&lnet.counters.failed_resends);
    }
    if d.resend && now <= m.deadline && lnet.is_running() {
        m.retry_count += 1;
        crate::cnet!(
            "Resending {} to {} ({} after {}), attempt {}\n",
            m.hdr.msg.type_name(),
            m.hdr.dest_nid,
            hstatus.name(),
            ni.nid,
            m.retry_count
        );
        // The monitor thread sends it: never from inside a completion.
        // Counted once sent (`send::resend`).
        match queue_resend(lnet, m) {
            Ok(()) => return None,
            Err(back) => {
                m = back;
                m.retry_count -= 1;
                m.no_resend = true;
            }
        }
    }
    Some(m)
}

/// Messages waiting for the monitor thread to send them again (Lustre's
/// `ln_mt_resendqs`), and whether it takes any.
pub(crate) struct Resends {
    q: KVec<KBox<Msg>>,
    open: bool,
}

impl Resends {
    pub(crate) fn new() -> Resends {
        Resends {
            q: KVec::new(),
            open: false,
        }
    }
}

/// Queues `m` for the monitor thread; gives it back if the queue is closed
/// (LNet stopping) or has no room.
fn queue_resend(lnet: &TheLnet, m: KBox<Msg>) -> Result<(), KBox<Msg>> {
    let mut r = lnet.resends.lock();
    if !r.open || r.q.reserve(1, GFP_ATOMIC).is_err() {
        return Err(m);
    }
    // Cannot fail: the room is reserved.
    let _ = r.q.push(m, GFP_ATOMIC);
    Ok(())
}

/// From the monitor thread: sends the queued messages again, selection
/// running afresh for each (`lnet_resend_pending_msgs`).
pub(crate) fn run_resends(lnet: &TheLnet) {
    loop {
        let m = crate::kapi::vec::remove(&mut lnet.resends.lock().q, 0);
        let Some(m) = m else {
            break;
        };
        crate::send::resend(lnet, m);
    }
}

/// Opens the resend queue (the monitor thread runs) or closes it (LNet
/// stops, the monitor thread has ended): what is still queued ends with
/// `-ESHUTDOWN` and no resend.
pub(crate) fn resends_open(lnet: &TheLnet, open: bool) {
    lnet.resends.lock().open = open;
    if open {
        return;
    }
    loop {
        let m = crate::kapi::vec::pop(&mut lnet.resends.lock().q);
        let Some(mut m) = m else {
            break;
        };
        m.no_resend = true;
        msg::finalize(
            lnet,
            m,
            crate::kapi::errno::ESHUTDOWN().to_errno(),
            Status::LocalDropped,
        );
    }
}

/// Messages whose completion came after their deadline
/// (`ln_late_msg_count`, `ln_late_msg_nsecs`), summarised on the console
/// by the monitor thread.
#[derive(Default)]
pub(crate) struct Late {
    count: AtomicU32,
    secs: core::sync::atomic::AtomicU64,
    /// Count at the last summary, and when it was printed.
    reported: AtomicU32,
    next_report: core::sync::atomic::AtomicI64,
}

impl Late {
    fn count(&self, secs_late: i64) {
        self.count.fetch_add(1, Relaxed);
        self.secs
            .fetch_add(u64::try_from(secs_late).unwrap_or(0), Relaxed);
    }

    /// Prints how many messages completed late since the last summary, at
    /// most every 60 s, when they were more than a second late on average
    /// (`lnet_health_update_console`; Lustre also backs off to 300 s).
    pub(crate) fn report(&self, now: i64) {
        if now < self.next_report.load(Relaxed) {
            return;
        }
        let count = self.count.load(Relaxed);
        let new = count.wrapping_sub(self.reported.load(Relaxed));
        if new == 0 {
            return;
        }
        let secs = self.secs.swap(0, Relaxed);
        self.reported.store(count, Relaxed);
        self.next_report.store(now.saturating_add(60), Relaxed);
        let avg = secs / u64::from(new);
        if avg >= 1 {
            crate::cwarn!(
                "{} message(s) completed after their deadline, {} s late on average\n",
                new,
                avg
            );
        }
    }
}

/// A response that never came (`lnet_handle_remote_failure_locked`, for
/// expired trackers: health.md §5.3): the next-hop peer NI loses health and
/// is offered to recovery. No single-rail exemption applies here.
pub(crate) fn remote_failure(lnet: &TheLnet, nid: &Nid) {
    let s = params::snapshot().health_sensitivity;
    let now = kthread::now_secs();
    let mut peers = lnet.peers.lock();
    if let Some(p) = peers.peer_ni_mut(nid) {
        p.remote_failure(s, now);
    }
}
