// SPDX-License-Identifier: GPL-2.0

//! Heap memory an MD of lnet.ko's own describes (its ping, push and
//! discovery buffers): LNDs write it through the MD's page fragments while
//! LNet reads and rewrites words of it, so Rust reaches it only through
//! atomics, or as bytes once the caller knows no write is under way.

use super::kiov::BioVec;
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use kernel::alloc::{flags::GFP_KERNEL, KVec};
use kernel::error::Result;

/// Heap memory an MD of LNet's own describes.
///
/// # Invariants
///
/// `ptr` is the start of `buf`'s `len` bytes, taken once when it was made;
/// `buf` is never resized or reallocated, so `ptr` stays valid for `len`
/// bytes for as long as this lives. Nothing here makes a reference to those
/// bytes but [`MdMemory::bytes`], whose callers vouch that LNet is not
/// writing them.
pub struct MdMemory {
    ptr: *mut u8,
    len: usize,
    /// Owns the bytes; only `ptr` is used to reach them.
    _buf: KVec<u8>,
}

// SAFETY: the bytes are plain heap memory, not tied to a thread; shared use
// goes through atomics or `bytes`, whose callers exclude writers (# Invariants).
unsafe impl Send for MdMemory {}
// SAFETY: shared use reads `ptr` and `len`, fixed at creation, and reaches
// the bytes only through atomics or `bytes`, whose callers exclude writers
// (# Invariants).
unsafe impl Sync for MdMemory {}

impl MdMemory {
    /// Memory holding `buf`'s bytes.
    pub fn new(mut buf: KVec<u8>) -> Self {
        // INVARIANT: the start of `buf`'s bytes, which never moves: `buf`
        // is only kept, never resized.
        MdMemory {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
            _buf: buf,
        }
    }

    /// `len` zeroed bytes.
    pub fn zeroed(len: usize) -> Result<Self> {
        Ok(Self::new(KVec::from_elem(0u8, len, GFP_KERNEL)?))
    }

    /// How many bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the bytes start, echoed in events as the MD's start.
    pub fn start(&self) -> usize {
        self.ptr as usize
    }

    /// Appends the bytes' page fragments to `out`, for an MD's `kiov`:
    /// they name this memory, valid while `self` lives.
    pub fn push_frags(&self, out: &mut KVec<BioVec>) -> Result {
        // SAFETY: `ptr` is the start of `len` bytes of a `KVec`'s kmalloc
        // buffer (# Invariants): lowmem kernel memory, valid while `self`
        // lives, which is as long as the fragments name anything.
        unsafe { super::kiov::push_kvaddr_range(out, self.ptr as usize, self.len) }
    }

    /// The first `n` bytes (at most all of them).
    ///
    /// # Safety
    ///
    /// LNet must not be writing them meanwhile: the caller runs in the
    /// event that ended the MD's receive (a PUT or REPLY event with one
    /// receive allowed, or the final event), or after the final event.
    pub unsafe fn bytes(&self, n: usize) -> &[u8] {
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
    pub fn store_le32(&self, at: usize, v: u32) -> bool {
        self.word(at)
            .map(|w| w.store(v.to_le(), Ordering::Relaxed))
            .is_some()
    }

    /// The word at byte `at`, little-endian.
    pub fn load_le32(&self, at: usize) -> Option<u32> {
        self.word(at)
            .map(|w| u32::from_le(w.load(Ordering::Relaxed)))
    }

    /// Copies the bytes into `out` (as many as fit), a word at a time
    /// where they are words, so that rewrites of words race with nothing.
    pub fn copy_to(&self, out: &mut [u8]) {
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
