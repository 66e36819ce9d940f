// SPDX-License-Identifier: GPL-2.0

//! The MDs LNet posts for itself: the ping target, the push targets, and
//! the buffers of pings, recovery pings and discovery's pings and pushes.
//! Each has an owner (an [`MdOwner`] behind an `Arc`) holding its memory;
//! the MD holds a reference on it, so the memory lives as long as any
//! message uses the MD, and the owner gets the MD's events as Rust calls.
//! Lustre's internal callers go through the exported C API with a handler
//! and a user pointer; here nothing of LNet's own calls it.

use crate::api;
use crate::kapi::bindings::lnet_event;
pub(crate) use crate::kapi::md_memory::MdMemory;
use crate::lnet_core::hdr::{PING_MATCHBITS, RESERVED_PORTAL};
use crate::lnet_core::md::PID_ANY;
use crate::lnet_core::nid::Nid;
use crate::md::LibMd;
use crate::send::Request;
use crate::state::TheLnet;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The owner of an MD of LNet's own.
pub(crate) trait MdOwner: Send + Sync {
    /// The memory the MD describes.
    fn memory(&self) -> &MdMemory;

    /// Whether the owner gets the MD's events; without, the MD only keeps
    /// it alive.
    fn wants_events(&self) -> bool {
        true
    }

    /// One event of the MD, the last with `unlinked` set: delivered one at
    /// a time, with no LNet spinlock held.
    fn event(&self, lnet: &TheLnet, ev: &lnet_event);
}

/// Binds an MD over `owner`'s memory for a GET or PUT of ours
/// (`LNetMDBind`), unlinked once `threshold` operations have ended; its
/// cookie.
pub(crate) fn bind(
    lnet: &TheLnet,
    owner: Arc<dyn MdOwner>,
    threshold: i32,
    options: u32,
) -> Result<u64> {
    api::md_bind(lnet, LibMd::owned(owner, threshold, options, true)?)
}

/// Posts `owner`'s memory on the reserved portal for the ping match bits
/// from anyone, after what is already posted there (`LNetMEAttach` and
/// `LNetMDAttach`): where the ping target and push targets wait. The ME
/// goes with the MD. `unlink`: once `threshold` operations have ended.
pub(crate) fn post_reserved(
    lnet: &TheLnet,
    owner: Arc<dyn MdOwner>,
    threshold: i32,
    options: u32,
    unlink: bool,
) -> Result<u64> {
    let md = LibMd::owned(owner, threshold, options, unlink)?;
    let me = api::me_attach(
        lnet,
        RESERVED_PORTAL,
        (Nid::ANY, PID_ANY),
        PING_MATCHBITS,
        0,
        true,
        false,
    )?;
    // The reserved portal is never lazy: no message waits to match it.
    api::md_attach(lnet, me, md, |_| {})
}

/// A GET (or PUT, with `put`) of the reserved portal's ping match bits
/// from MD `md` to `target`'s LNet: a ping, or a push.
pub(crate) fn reserved_request(md: u64, target: Nid, push: bool) -> Request {
    Request {
        md,
        target,
        target_pid: crate::ping::PID_LUSTRE,
        src: Nid::ANY,
        portal: RESERVED_PORTAL,
        match_bits: PING_MATCHBITS,
        offset: 0,
        put: push.then_some(0),
        ack: push,
        timeout: 0,
        recovery: false,
    }
}

/// Sends `r`; if it cannot go, unlinks its MD, whose final event goes to
/// the owner: an UNLINK with status 0, as every unlink event in Lustre, or
/// with `error_to_owner` the send's error (discovery's own convention).
pub(crate) fn send_or_unlink(lnet: &TheLnet, r: Request, error_to_owner: bool) -> Result {
    let md = r.md;
    crate::send::start(lnet, r).inspect_err(|e| {
        let status = if error_to_owner { e.to_errno() } else { 0 };
        let _ = api::md_unlink(lnet, md, false, status);
    })
}
