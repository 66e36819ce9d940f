// SPDX-License-Identifier: GPL-2.0

//! NUMA placement for local NI selection (selection.md §2, criterion 5):
//! Lustre compares the CPT distance from the MD's memory to the NI's
//! device. lnet-rs compares the NUMA nodes themselves: the node of the
//! payload's first page, that of the interface's device, and the kernel's
//! node distance between them. Unknown on either side
//! counts as the largest distance between online nodes, as a CPT distance
//! with `CFS_CPT_ANY` does; that one is found once, when LNet starts, as
//! Lustre's CPT table fixes it at load.

use crate::kapi::bindings::lnet_tx_desc;
use crate::kapi::kiov::{self, BioVec};
use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

extern "C" {
    fn lnet_netdev_node(name: *const c_char) -> c_int;
    fn lnet_page_node(page: *mut c_void) -> c_int;
    fn lnet_node_distance(a: c_int, b: c_int) -> c_int;
    fn lnet_max_node_distance() -> c_int;
}

/// The largest distance between online nodes (10 until [`init`]).
static MAX_DISTANCE: AtomicU32 = AtomicU32::new(10);

/// Finds the largest node distance, for sends with a side unknown.
pub(crate) fn init() {
    // SAFETY: plain arithmetic over the online node map.
    let d = unsafe { lnet_max_node_distance() };
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
    // SAFETY: a NUL-terminated name, read during the call only.
    unsafe { lnet_netdev_node(name.as_ptr().cast()) }
}

/// The node of the page holding byte `offset` of a payload, or
/// [`NO_NODE`] without one.
///
/// # Safety
///
/// `desc` describes fragments that stay valid during the call (those of
/// an MD its message holds).
pub(crate) unsafe fn payload_node(desc: &lnet_tx_desc) -> i32 {
    if desc.len == 0 {
        return NO_NODE;
    }
    // SAFETY: `desc.kiov` is null or points to `desc.niov` fragments that stay
    // valid during this call (# Safety), which is as long as the slice is used.
    let v: &[BioVec] = unsafe { kiov::slice(desc.kiov.cast(), desc.niov) };
    let mut off = desc.offset;
    for f in v {
        if off < f.bv_len {
            // SAFETY: a page of the MD, pinned while the message holds it.
            return unsafe { lnet_page_node(f.bv_page.cast()) };
        }
        off -= f.bv_len;
    }
    NO_NODE
}

/// The distance from node `a` to node `b` (10 for the same node).
pub(crate) fn distance(a: i32, b: i32) -> u32 {
    if a < 0 || b < 0 {
        return MAX_DISTANCE.load(Relaxed);
    }
    // SAFETY: plain arithmetic over the online node map.
    let d = unsafe { lnet_node_distance(a, b) };
    u32::try_from(d).unwrap_or_else(|_| MAX_DISTANCE.load(Relaxed))
}
