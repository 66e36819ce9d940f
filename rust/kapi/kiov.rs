// SPDX-License-Identifier: GPL-2.0

//! Page fragments (`struct bio_vec`) as MDs and LNDs describe memory, and
//! copies between them through short-lived local mappings.

use crate::lnet_core::frag::{self, Step};
use kernel::bindings;
use kernel::prelude::*;

/// One page fragment, laid out as the kernel's `struct bio_vec`.
pub type BioVec = bindings::bio_vec;

/// The fragment lengths of `kiov`, as the copy planner wants them.
fn lens(kiov: &[BioVec]) -> impl Iterator<Item = u32> + Clone + '_ {
    kiov.iter().map(|v| v.bv_len)
}

/// Splits the kernel virtual range `start..start + len` into page
/// fragments appended to `out`.
///
/// # Safety
///
/// The range must be kernel memory (lowmem or vmalloc) that stays valid
/// while the fragments are used.
pub unsafe fn push_kvaddr_range(out: &mut KVec<BioVec>, start: usize, len: usize) -> Result {
    let page_size = kernel::page::PAGE_SIZE;
    let mut addr = start;
    let end = start.checked_add(len).ok_or(EINVAL)?;
    while addr < end {
        let in_page = addr % page_size;
        let n = (page_size - in_page).min(end - addr);
        // SAFETY: `addr` is inside the caller's kernel range.
        let page =
            unsafe { super::bindings::lnet_kvaddr_to_page(addr as _) }.cast::<bindings::page>();
        if page.is_null() {
            return Err(EFAULT);
        }
        out.push(
            BioVec {
                bv_page: page,
                bv_len: n as u32,
                bv_offset: in_page as u32,
            },
            GFP_KERNEL,
        )?;
        addr += n;
    }
    Ok(())
}

/// The fragment vector at `p`; empty when `p` is null.
///
/// # Safety
///
/// A non-null `p` points to `n` fragments valid for `'a`.
pub unsafe fn slice<'a>(p: *const BioVec, n: u32) -> &'a [BioVec] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: `p` is non-null and `n` positive here, so by # Safety `p`
        // points to `n` fragments valid for `'a`.
        unsafe { core::slice::from_raw_parts(p, n as usize) }
    }
}

/// Page fragments lent for reading: a message's payload as its MD holds it.
///
/// # Invariants
///
/// Every fragment names a valid page and lies within it, and the pages
/// stay valid for `'a`. Made only in kapi, from fragments LNet lent with a
/// message, for as long as that message is borrowed.
#[derive(Clone, Copy)]
pub struct Kiov<'a>(&'a [BioVec]);

impl<'a> Kiov<'a> {
    /// # Safety
    ///
    /// A non-null `p` points to `n` fragments that name valid pages and lie
    /// within them, all valid for `'a`.
    pub unsafe fn from_raw(p: *const BioVec, n: u32) -> Self {
        // INVARIANT: as the caller promises; null or none is empty.
        // SAFETY: `p` is null or points to `n` fragments valid for `'a`
        // (# Safety), what `slice` asks.
        Kiov(unsafe { slice(p, n) })
    }

    /// The fragments.
    pub fn frags(&self) -> &'a [BioVec] {
        self.0
    }
}

/// Page fragments lent for writing: where a received payload goes.
///
/// # Invariants
///
/// As [`Kiov`], and nothing else reads or writes the pages' bytes in the
/// fragments for `'a` (LNet gave them to be filled, until the message is
/// finalized).
pub struct KiovMut<'a>(&'a [BioVec]);

impl<'a> KiovMut<'a> {
    /// # Safety
    ///
    /// As [`Kiov::from_raw`], and nothing else reads or writes the
    /// fragments' bytes for `'a`.
    pub unsafe fn from_raw(p: *const BioVec, n: u32) -> Self {
        // INVARIANT: as the caller promises; null or none is empty.
        // SAFETY: `p` is null or points to `n` fragments valid for `'a`
        // (# Safety), what `slice` asks.
        KiovMut(unsafe { slice(p, n) })
    }

    /// The fragments.
    pub fn frags(&self) -> &[BioVec] {
        self.0
    }
}

/// Copies `len` bytes from `src` at byte `soff` to `dst` at byte `doff`.
/// Returns the bytes copied, which is less than `len` only if a vector ends
/// first.
///
/// # Safety
///
/// Every fragment must name a valid page and lie within it, and nothing
/// else may write the destination bytes during the copy.
pub unsafe fn copy(dst: &[BioVec], doff: u32, src: &[BioVec], soff: u32, len: u32) -> u32 {
    let mut done = 0u32;
    for Step {
        dst: (di, dpos),
        src: (si, spos),
        len: n,
    } in frag::plan(lens(dst), doff, lens(src), soff, len)
    {
        let (Some(d), Some(s)) = (dst.get(di), src.get(si)) else {
            break;
        };
        // The planner keeps `pos + n` within each fragment, and fragments
        // lie within their pages. Mappings are released in reverse order.
        // SAFETY: fragments are valid pages and the planner keeps `pos + n` within each (# Safety),
        // so both ranges are mapped; nothing else writes the destination.
        unsafe {
            let dmap = bindings::kmap_local_page(d.bv_page).cast::<u8>();
            let smap = bindings::kmap_local_page(s.bv_page).cast::<u8>();
            core::ptr::copy(
                smap.add((s.bv_offset + spos) as usize),
                dmap.add((d.bv_offset + dpos) as usize),
                n as usize,
            );
            bindings::kunmap_local(smap.cast());
            bindings::kunmap_local(dmap.cast());
        }
        done += n;
    }
    done
}
