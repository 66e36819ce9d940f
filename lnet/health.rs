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
    let Some(ni) = m.ni.clone() else {
        return Some(m);
    };
    let committed = if m.rx { Committed::Rx } else { Committed::Tx };
    let peer_nid = if m.rx { m.from } else { m.hdr.dest_nid };
    let t = params::snapshot();
    let local_multi_rail = lnet
        .nis
        .lock()
        .nis
        .iter()
        .filter(|n| n.nid != Nid::LO)
        .count()
        > 1;
    // Held from the peer's shape to its health update: one lookup.
    let mut peers = lnet.peers.lock();
    let found = peers.find(&peer_nid);
    let peer_multi_rail = found
        .and_then(|(pi, _)| peers.list.get(pi))
        .is_some_and(|p| p.nis.len() > 1);
    let c = Completion {
        status: hstatus,
        errno_ok: status == 0,
        committed,
        has_peer_ni: ni.nid != Nid::LO,
        late: false,
        monitor_running: lnet.is_running(),
        local_multi_rail,
        peer_multi_rail,
        peer_is_router_or_routing: false,
        peer_is_local: false,
        no_resend: m.no_resend,
        retry_count: m.retry_count,
    };
    let d = health::decide(&c, t.retry_count);
    if !d.processed {
        return Some(m);
    }
    let s = t.health_sensitivity;
    let now = kthread::now_secs();
    if d.local != Change::None {
        let _ = ni
            .health
            .fetch_update(Relaxed, Relaxed, |h| Some(apply(h, d.local, s)));
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
            let offer = matches!(d.remote, Change::Decrement | Change::IncrementAndRequeue);
            if offer
                && p.health < crate::lnet_core::health::MAX_HEALTH
                && crate::recovery::peer_recoverable(p.last_alive, now)
            {
                p.recovery.queue(now);
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
    if d.resend && kthread::now_secs() < m.deadline && lnet.is_running() {
        m.retry_count += 1;
        Counters::add(&lnet.counters.resend_count);
        pr_info!(
            "Resending {} to {} ({} after {}), attempt {}\n",
            m.hdr.msg.type_name(),
            m.hdr.dest_nid,
            hstatus.name(),
            ni.nid,
            m.retry_count
        );
        msg::resend(lnet, m);
        return None;
    }
    Some(m)
}

/// A response that never came (`lnet_handle_remote_failure_locked`, for
/// expired trackers: health.md §5.3): the next-hop peer NI loses health and
/// is offered to recovery. No single-rail exemption applies here.
pub(crate) fn remote_failure(lnet: &TheLnet, nid: &Nid) {
    let s = params::snapshot().health_sensitivity;
    let now = kthread::now_secs();
    if let Some(p) = lnet.peers.lock().peer_ni_mut(nid) {
        p.health = health::dec(p.health, s);
        if crate::recovery::peer_recoverable(p.last_alive, now) {
            p.recovery.queue(now);
        }
    }
}
