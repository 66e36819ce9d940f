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
use crate::lnet_core::hdr::{PING_MATCHBITS, RESERVED_PORTAL};
use crate::lnet_core::md::PID_ANY;
use crate::lnet_core::nid::Nid;
use crate::md::LibMd;
use crate::send::Request;
use crate::state::TheLnet;
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// Heap memory an MD of LNet's own describes.
///
/// # Invariants
///
/// `ptr` is the start of `buf`'s `len` bytes, taken once when it was made;
/// `buf` is never resized or reallocated, so `ptr` stays valid for `len`
/// bytes for as long as this lives. Nothing here makes a reference to those
/// bytes but [`MdMemory::bytes`], whose callers vouch that LNet is not
/// writing them.
pub(crate) struct MdMemory {
    ptr: *mut u8,
    len: usize,
    /// Owns the bytes; only `ptr` is used to reach them.
    _buf: KVec<u8>,
}

// SAFETY: the bytes are plain heap memory, not tied to a thread; shared use
// goes through atomics or `bytes`, whose callers exclude writers (# Invariants).
unsafe impl Send for MdMemory {}
// SAFETY: as for Send.
unsafe impl Sync for MdMemory {}

impl MdMemory {
    /// Memory holding `buf`'s bytes.
    pub(crate) fn new(mut buf: KVec<u8>) -> Self {
        // INVARIANT: the start of `buf`'s bytes, which never moves: `buf`
        // is only kept, never resized.
        MdMemory {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
            _buf: buf,
        }
    }

    /// `len` zeroed bytes.
    pub(crate) fn zeroed(len: usize) -> Result<Self> {
        Ok(Self::new(KVec::from_elem(0u8, len, GFP_KERNEL)?))
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Where the bytes are, for an MD's fragments.
    pub(crate) fn region(&self) -> (*mut u8, usize) {
        (self.ptr, self.len)
    }

    /// The first `n` bytes (at most all of them).
    ///
    /// # Safety
    ///
    /// LNet must not be writing them meanwhile: the caller runs in the
    /// event that ended the MD's receive (a PUT or REPLY event with one
    /// receive allowed, or the final event), or after the final event.
    pub(crate) unsafe fn bytes(&self, n: usize) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` bytes while `self` lives (#
        // Invariants); no writer meanwhile (# Safety).
        unsafe { core::slice::from_raw_parts(self.ptr, n.min(self.len)) }
    }

    /// The 32-bit word at byte `at`, if in bounds and aligned.
    fn word(&self, at: usize) -> Option<&AtomicU32> {
        if at % 4 != 0 || !at.checked_add(4).is_some_and(|e| e <= self.len) {
            return None;
        }
        // `ptr` comes from kmalloc (aligned to 8 at least), so `at`, a
        // multiple of 4, is aligned too.
        // SAFETY: in bounds (checked) and aligned, valid while `self` lives
        // (# Invariants); accessed only atomically from Rust.
        Some(unsafe { AtomicU32::from_ptr(self.ptr.add(at).cast::<u32>()) })
    }

    /// Rewrites the word at byte `at` (little-endian on the wire) in place:
    /// an LND may be reading it for a REPLY, as with Lustre's plain store.
    /// False when out of bounds or unaligned.
    pub(crate) fn store_le32(&self, at: usize, v: u32) -> bool {
        self.word(at)
            .map(|w| w.store(v.to_le(), Ordering::Relaxed))
            .is_some()
    }

    /// The word at byte `at`, little-endian.
    pub(crate) fn load_le32(&self, at: usize) -> Option<u32> {
        self.word(at)
            .map(|w| u32::from_le(w.load(Ordering::Relaxed)))
    }

    /// Copies the bytes into `out` (as many as fit), a word at a time
    /// where they are words, so that rewrites of words race with nothing.
    pub(crate) fn copy_to(&self, out: &mut [u8]) {
        let n = out.len().min(self.len);
        let mut at = 0;
        while at < n {
            if let (Some(w), Some(dst)) = (self.word(at), out.get_mut(at..at + 4)) {
                dst.copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
                at += 4;
                continue;
            }
            // SAFETY: `at < len`: in bounds; bytes have no alignment;
            // valid while `self` lives (# Invariants).
            let b = unsafe { AtomicU8::from_ptr(self.ptr.add(at)) };
            if let Some(dst) = out.get_mut(at) {
                *dst = b.load(Ordering::Relaxed);
            }
            at += 1;
        }
    }
}

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
