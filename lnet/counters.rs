// SPDX-License-Identifier: GPL-2.0

//! The node's message counters (`lnetctl stats show`), kept as atomics so
//! the hot path takes no lock for them.

use crate::kapi::bindings::lnet_counters;
use crate::state::TheLnet;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) msgs_alloc: AtomicU32,
    pub(crate) msgs_max: AtomicU32,
    pub(crate) errors: AtomicU32,
    pub(crate) send_count: AtomicU32,
    pub(crate) recv_count: AtomicU32,
    pub(crate) drop_count: AtomicU32,
    pub(crate) send_length: AtomicU64,
    pub(crate) recv_length: AtomicU64,
    pub(crate) drop_length: AtomicU64,
    /// Messages this router forwarded, and their bytes.
    pub(crate) route_count: AtomicU32,
    pub(crate) route_length: AtomicU64,
    pub(crate) rst_alloc: AtomicU32,
    pub(crate) response_timeout_count: AtomicU32,
    pub(crate) resend_count: AtomicU32,
    pub(crate) failed_resends: AtomicU32,
    pub(crate) successful_resends: AtomicU32,
    /// Per health status 1..=10 (`lch_local_interrupt_count`...).
    pub(crate) hstatus: [AtomicU32; 10],
}

impl Counters {
    pub(crate) fn msg_alloc(&self) {
        let n = self.msgs_alloc.fetch_add(1, Relaxed).wrapping_add(1);
        self.msgs_max.fetch_max(n, Relaxed);
    }

    pub(crate) fn msg_free(&self) {
        self.msgs_alloc.fetch_sub(1, Relaxed);
    }

    pub(crate) fn add(c: &AtomicU32) {
        c.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_len(c: &AtomicU64, n: u32) {
        c.fetch_add(u64::from(n), Relaxed);
    }

    /// Counts a failure by its health status (1..=10); OK is not counted.
    pub(crate) fn hstatus(&self, status: u32) {
        if let Some(c) = status
            .checked_sub(1)
            .and_then(|i| self.hstatus.get(i as usize))
        {
            c.fetch_add(1, Relaxed);
        }
    }

    /// Zeroes the counters (`lnetctl stats reset`). `msgs_alloc` and
    /// `rst_alloc` count the messages and response trackers alive now, so
    /// they stay and the maximum restarts from the first (Lustre zeroes
    /// them all, and its live counts then wrap below zero as those are
    /// freed).
    pub(crate) fn reset(&self) {
        let all32 = [
            &self.errors,
            &self.send_count,
            &self.recv_count,
            &self.drop_count,
            &self.route_count,
            &self.response_timeout_count,
            &self.resend_count,
            &self.failed_resends,
            &self.successful_resends,
        ];
        for c in all32.into_iter().chain(self.hstatus.iter()) {
            c.store(0, Relaxed);
        }
        for c in [
            &self.send_length,
            &self.recv_length,
            &self.drop_length,
            &self.route_length,
        ] {
            c.store(0, Relaxed);
        }
        self.msgs_max.store(self.msgs_alloc.load(Relaxed), Relaxed);
    }

    pub(crate) fn snapshot(&self) -> lnet_counters {
        let mut c = lnet_counters::default();
        let m = &mut c.lct_common;
        m.lcc_msgs_alloc = self.msgs_alloc.load(Relaxed);
        m.lcc_msgs_max = self.msgs_max.load(Relaxed);
        m.lcc_errors = self.errors.load(Relaxed);
        m.lcc_send_count = self.send_count.load(Relaxed);
        m.lcc_recv_count = self.recv_count.load(Relaxed);
        m.lcc_drop_count = self.drop_count.load(Relaxed);
        m.lcc_send_length = self.send_length.load(Relaxed);
        m.lcc_recv_length = self.recv_length.load(Relaxed);
        m.lcc_drop_length = self.drop_length.load(Relaxed);
        m.lcc_route_count = self.route_count.load(Relaxed);
        m.lcc_route_length = self.route_length.load(Relaxed);
        let h = &mut c.lct_health;
        h.lch_rst_alloc = self.rst_alloc.load(Relaxed);
        h.lch_response_timeout_count = self.response_timeout_count.load(Relaxed);
        h.lch_resend_count = self.resend_count.load(Relaxed);
        h.lch_failed_resends = self.failed_resends.load(Relaxed);
        h.lch_successful_resends = self.successful_resends.load(Relaxed);
        let s = |i: usize| self.hstatus.get(i).map_or(0, |a| a.load(Relaxed));
        h.lch_local_interrupt_count = s(0);
        h.lch_local_dropped_count = s(1);
        h.lch_local_aborted_count = s(2);
        h.lch_local_no_route_count = s(3);
        h.lch_local_error_count = s(4);
        h.lch_local_timeout_count = s(5);
        h.lch_remote_error_count = s(6);
        h.lch_remote_dropped_count = s(7);
        h.lch_remote_timeout_count = s(8);
        h.lch_network_timeout_count = s(9);
        c
    }
}

/// `lnetctl stats reset` (Lustre's `lnet_counters_reset` and
/// `lnet_iface_stats_reset`): the node's counters and each local and peer
/// NI's message counts by type; health counters stay. With LNet down there
/// is nothing to reset but the node's counters.
pub(crate) fn reset_all(lnet: &TheLnet) {
    lnet.counters.reset();
    for ni in lnet.nis.lock().nis.iter() {
        ni.sent.reset();
        ni.received.reset();
        ni.dropped.reset();
    }
    let mut peers = lnet.peers.lock();
    for p in peers.list.iter_mut().flat_map(|p| p.nis.iter_mut()) {
        p.sent = Default::default();
        p.received = Default::default();
        p.dropped = Default::default();
    }
}
