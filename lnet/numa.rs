// SPDX-License-Identifier: GPL-2.0

//! NUMA placement for local NI selection (selection.md §2, criterion 5):
//! Lustre compares the CPT distance from the MD's memory to the NI's
//! device. lnet-rs compares the NUMA nodes themselves: the node of the
//! payload's first page, that of the interface's device, and the kernel's
//! node distance between them. Unknown on either side
//! counts as the largest distance between online nodes, as a CPT distance
//! with `CFS_CPT_ANY` does; that one is found once, when LNet starts, as
//! Lustre's CPT table fixes it at load.

use crate::kapi::cpumask as mask;
use core::ffi::CStr;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// The node of the page holding byte `offset` of a payload, or
/// [`NO_NODE`] without one.
pub(crate) use mask::payload_node;

/// The largest distance between online nodes (10 until [`init`]).
static MAX_DISTANCE: AtomicU32 = AtomicU32::new(10);

/// Finds the largest node distance, for sends with a side unknown.
pub(crate) fn init() {
    let d = mask::max_node_distance();
    MAX_DISTANCE.store(u32::try_from(d).unwrap_or(u32::MAX), Relaxed);
}

/// No node known.
pub(crate) const NO_NODE: i32 = -1;

/// The node of interface `iface`'s device, or [`NO_NODE`].
pub(crate) fn netdev_node(iface: &str) -> i32 {
    let mut name = [0u8; 16];
    if iface.is_empty() || iface.len() >= name.len() {
        return NO_NODE;
    }
    for (d, s) in name.iter_mut().zip(iface.bytes()) {
        *d = s;
    }
    match CStr::from_bytes_until_nul(&name) {
        Ok(name) => mask::netdev_node(name),
        Err(_) => NO_NODE,
    }
}

/// The distance from node `a` to node `b` (10 for the same node).
pub(crate) fn distance(a: i32, b: i32) -> u32 {
    if a < 0 || b < 0 {
        return MAX_DISTANCE.load(Relaxed);
    }
    let d = mask::online_node_distance(a, b);
    u32::try_from(d).unwrap_or_else(|_| MAX_DISTANCE.load(Relaxed))
}
