// SPDX-License-Identifier: GPL-2.0

//! The monitor thread (`lnet_monitor_thread`): it sends failed messages
//! again (health.md §4) within a tenth of a second, and once a second looks
//! for response trackers past their deadline and ends them (§5.3), runs
//! the recovery queues, checks gateways (router_check.rs), releases
//! messages fault rules held, posts a new ping buffer after a link change
//! and summarises late messages.

use crate::api;
use crate::kapi::kthread::{self, Thread};
use crate::state::TheLnet;
use core::sync::atomic::Ordering;
use kernel::c_str;
use kernel::prelude::*;

/// Starts the monitor thread for `lnet`.
pub(crate) fn start(lnet: &'static TheLnet) -> Result<Thread> {
    Thread::spawn_static(c_str!("monitor_thread"), lnet, monitor_main)
}

/// The monitor thread.
fn monitor_main(lnet: &'static TheLnet) {
    let mut next_second = 0;
    while !kthread::should_stop() {
        // Resends wait at most one step.
        crate::health::run_resends(lnet);
        // Push buffers that pushes used are posted again.
        crate::push::top_up(lnet);
        let now = kthread::now_ms();
        if now >= next_second {
            next_second = now.saturating_add(1000);
            // Lustre scans every transaction_timeout / 2 seconds; callers
            // may set their own, shorter deadlines (LNetPutTimeout), so
            // trackers are ended within a second of their deadline instead.
            let secs = kthread::now_secs();
            if secs >= lnet.next_deadline.load(Ordering::Relaxed) {
                expire_responses(lnet, false);
            }
            crate::recovery::run(lnet);
            crate::router_check::check(lnet);
            crate::fault::release_due(lnet);
            if lnet.ping_update.swap(false, Ordering::Relaxed) {
                crate::startup::refresh_ping(lnet);
            }
            lnet.late.report(secs);
        }
        kthread::sleep_ms(100);
    }
}

/// Ends the response trackers past their deadline, or all of them when
/// LNet is shutting down (`lnet_finalize_expired_responses`): each MD is
/// unlinked, which gives its owner the final event, and
/// `response_timeout_count` counts it.
pub(crate) fn expire_responses(lnet: &TheLnet, all: bool) {
    const BATCH: usize = 16;
    let mut total = 0u32;
    let mut last = crate::lnet_core::nid::Nid::ANY;
    let now = kthread::now_secs();
    // Recomputed below from the trackers left; a tracker attached meanwhile
    // lowers it again.
    lnet.next_deadline.store(i64::MAX, Ordering::Relaxed);
    loop {
        let mut batch = [(0u64, crate::lnet_core::nid::Nid::ANY); BATCH];
        let mut n = 0;
        {
            let res = lnet.res.lock();
            for (&cookie, md) in res.mds.iter() {
                let Some((deadline, nid)) = md.rspt.filter(|_| !md.is_zombie()) else {
                    continue;
                };
                if all || deadline <= now {
                    let Some(slot) = batch.get_mut(n) else {
                        // Not ended in this batch: due now.
                        lnet.next_deadline.fetch_min(deadline, Ordering::Relaxed);
                        break;
                    };
                    *slot = (cookie, nid);
                    n += 1;
                    last = nid;
                } else {
                    lnet.next_deadline.fetch_min(deadline, Ordering::Relaxed);
                }
            }
        }
        for &(cookie, nid) in batch.iter().take(n) {
            // The MD may have been unlinked meanwhile; then nothing is due.
            if lnet.res.lock().md(cookie).is_none() {
                continue;
            }
            // At shutdown the trackers are only cleaned up: no count, no
            // health, and the unlink's status is 0, as Lustre's.
            if !all {
                lnet.counters
                    .response_timeout_count
                    .fetch_add(1, Ordering::Relaxed);
                // Health before the unlink: its event may send the owner's
                // next message at once, and that selection must see the
                // loss (Lustre's order is the reverse, with PtlRPC
                // resending later).
                crate::health::remote_failure(lnet, &nid);
            }
            let _ = api::md_unlink(lnet, cookie, false, 0);
        }
        total = total.saturating_add(n as u32);
        if n < BATCH {
            break;
        }
    }
    if total > 0 && all {
        crate::cneterr!("{} response(s) abandoned at shutdown\n", total);
    } else if total > 0 {
        crate::cneterr!("{} response(s) timed out, the last from {}\n", total, last);
    }
}
