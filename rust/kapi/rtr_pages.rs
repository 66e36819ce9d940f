// SPDX-License-Identifier: GPL-2.0

//! A router buffer (`struct lnet_rtrbuf`): whole pages a forwarded
//! message is received into and sent on from, described to the LNDs as
//! page fragments.

use super::kiov::BioVec;
use kernel::alloc::flags::{__GFP_ZERO, GFP_KERNEL};
use kernel::page::{Page, PAGE_SIZE};
use kernel::prelude::*;

/// A router buffer of whole pages.
///
/// # Invariants
///
/// `kiov` has one fragment per page of `pages`, in order, each naming the
/// whole page; the pages live as long as `self`, and neither vector is
/// resized after creation, so a pointer to `kiov`'s fragments stays valid
/// while `self` lives, wherever `self` is moved.
pub struct RtrPages {
    kiov: KVec<BioVec>,
    _pages: KVec<Page>,
}

// SAFETY: the fragments' page pointers name pages this buffer owns
// (`_pages`, # Invariants), which are not tied to a thread: the buffer may
// be freed or lent to an LND from any thread.
unsafe impl Send for RtrPages {}

impl RtrPages {
    /// A buffer of `npages` zeroed pages (none for the tiny pool).
    pub fn new(npages: u32) -> Result<Self> {
        let n = npages as usize;
        let mut pages = KVec::with_capacity(n, GFP_KERNEL)?;
        let mut kiov = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            let page = Page::alloc_page(GFP_KERNEL | __GFP_ZERO)?;
            kiov.push(
                BioVec {
                    bv_page: page.as_ptr(),
                    bv_len: PAGE_SIZE as u32,
                    bv_offset: 0,
                },
                GFP_KERNEL,
            )?;
            pages.push(page, GFP_KERNEL)?;
        }
        // INVARIANT: one whole-page fragment per page, in order; neither
        // vector changes after this.
        Ok(RtrPages {
            kiov,
            _pages: pages,
        })
    }

    /// The fragments, valid while `self` lives, for an LND to receive
    /// into or send from (null with no pages).
    pub fn kiov(&self) -> *mut BioVec {
        if self.kiov.is_empty() {
            core::ptr::null_mut()
        } else {
            self.kiov.as_ptr().cast_mut()
        }
    }

    /// How many fragments.
    pub fn niov(&self) -> u32 {
        self.kiov.len() as u32
    }
}
