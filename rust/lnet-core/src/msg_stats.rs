// SPDX-License-Identifier: GPL-2.0

//! Message statistics by type (`struct lnet_element_stats`): the
//! `sent_stats`, `received_stats` and `dropped_stats` of `lnetctl net show
//! -v 3` and `peer show -v 3`. The totals (`send_count`, `recv_count`,
//! `drop_count`) are their sums, as Lustre's `lnet_sum_stats` makes them,
//! so that the two can never disagree.

use super::hdr::MsgBody;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Types counted, in the order of the ioctl's arrays
/// (`LNET_IOC_MSG_PUT`...) and of lnetctl's output.
pub const MSG_TYPES: usize = 5;

/// The slot counting messages of `body`'s type.
pub fn slot(body: &MsgBody) -> usize {
    match body {
        MsgBody::Put { .. } => 0,
        MsgBody::Get { .. } => 1,
        MsgBody::Reply { .. } => 2,
        MsgBody::Ack { .. } => 3,
        MsgBody::Hello { .. } => 4,
    }
}

/// Counts of one element kept under its owner's lock.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct MsgCounts(pub [u32; MSG_TYPES]);

impl MsgCounts {
    /// Counts one message in `slot` (from [`slot`]; others are ignored).
    pub fn add(&mut self, slot: usize) {
        if let Some(c) = self.0.get_mut(slot) {
            *c = c.wrapping_add(1);
        }
    }

    /// All types together, wrapping as the counters do.
    pub fn sum(&self) -> u32 {
        self.0.iter().fold(0u32, |a, c| a.wrapping_add(*c))
    }
}

/// Counts of one element updated without a lock.
#[derive(Default)]
pub struct AtomicMsgCounts([AtomicU32; MSG_TYPES]);

impl AtomicMsgCounts {
    /// Counts one message in `slot` (from [`slot`]; others are ignored).
    pub fn add(&self, slot: usize) {
        if let Some(c) = self.0.get(slot) {
            c.fetch_add(1, Relaxed);
        }
    }

    /// The counts now (each read on its own).
    pub fn snapshot(&self) -> MsgCounts {
        let mut m = MsgCounts::default();
        for (d, s) in m.0.iter_mut().zip(self.0.iter()) {
            *d = s.load(Relaxed);
        }
        m
    }

    /// Zeroes the counts (`lnetctl stats reset`); a message counted while
    /// this runs may be kept or lost, as Lustre's reset races too.
    pub fn reset(&self) {
        for c in self.0.iter() {
            c.store(0, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::hdr::WireHandle;
    use super::*;

    #[test]
    fn slots_follow_the_ioctl_order() {
        let h = WireHandle::NONE;
        let put = MsgBody::Put {
            ack_wmd: h,
            match_bits: 0,
            hdr_data: 0,
            ptl_index: 0,
            offset: 0,
        };
        let get = MsgBody::Get {
            return_wmd: h,
            match_bits: 0,
            ptl_index: 0,
            src_offset: 0,
            sink_length: 0,
        };
        let reply = MsgBody::Reply { dst_wmd: h };
        let ack = MsgBody::Ack {
            dst_wmd: h,
            match_bits: 0,
            mlength: 0,
        };
        let hello = MsgBody::Hello {
            incarnation: 0,
            conn_type: 0,
        };
        let slots = [put, get, reply, ack, hello].map(|b| slot(&b));
        assert_eq!(slots, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn totals_are_sums_and_wrap() {
        let a = AtomicMsgCounts::default();
        a.add(0);
        a.add(1);
        a.add(1);
        a.add(MSG_TYPES);
        let s = a.snapshot();
        assert_eq!(s, MsgCounts([1, 2, 0, 0, 0]));
        assert_eq!(s.sum(), 3);
        let mut m = MsgCounts([u32::MAX, 0, 0, 0, 1]);
        m.add(4);
        assert_eq!(m.sum(), 1);
        m.add(7);
        assert_eq!(m, MsgCounts([u32::MAX, 0, 0, 0, 2]));
    }
}
