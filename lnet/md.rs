// SPDX-License-Identifier: GPL-2.0

//! Memory descriptors as LNet holds them (`struct lnet_libmd`): the
//! caller's MD turned into page fragments, its matching state, its event
//! handler, and the flags and reference count that decide when it is
//! unlinked and which event says so.

use crate::kapi::bindings::lnet_event;
use crate::kapi::ffi::MdArg;
use crate::kapi::kiov::BioVec;
use crate::lnet_core::md::{options, MdState, THRESH_INF};
use crate::lnet_core::nid::Nid;
use crate::own_md::MdOwner;
use crate::state::TheLnet;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Handler type of `struct lnet_md` (`lnet_handler_t`).
pub(crate) type Handler = unsafe extern "C" fn(*mut lnet_event);

/// Most fragments an MD may have (`LNET_MAX_IOV`).
pub(crate) const MAX_IOV: u32 = 256;

pub(crate) mod flags {
    /// Unlinked once exhausted.
    pub(crate) const AUTO_UNLINK: u32 = 1 << 0;
    /// Unlinked: handle lookups fail, freed when the last message detaches.
    pub(crate) const ZOMBIE: u32 = 1 << 1;
    /// Explicitly unlinked; a later successful completion reports a timeout.
    pub(crate) const ABORTED: u32 = 1 << 2;
    /// A handler is running outside the lock for this MD.
    pub(crate) const HANDLING: u32 = 1 << 3;
    /// Unlinked with discard: incoming data may be dropped.
    pub(crate) const DISCARD: u32 = 1 << 4;
}

/// An MD as LNet holds it (`struct lnet_libmd`), in [`crate::state::Res`].
///
/// # Invariants
///
/// Each fragment of `kiov` names `bv_len` bytes at `bv_offset` of the
/// non-null page `bv_page`, within that page: the caller's memory, which
/// it keeps valid until the MD is unlinked, or `owner`'s, which lives as
/// long as this holds it. `kiov` is not changed after it is built, so its
/// buffer stays where messages holding a reference on the MD point.
pub(crate) struct LibMd {
    pub(crate) state: MdState,
    pub(crate) kiov: KVec<BioVec>,
    /// The caller's `start` and `user_ptr`, echoed in events.
    pub(crate) start: usize,
    pub(crate) user_ptr: usize,
    pub(crate) handler: Option<Handler>,
    /// An MD of LNet's own: who holds its memory and gets its events.
    pub(crate) owner: Option<Arc<dyn MdOwner>>,
    pub(crate) flags: u32,
    /// Messages attached to this MD.
    pub(crate) refcount: u32,
    /// The ME cookie when attached to one.
    pub(crate) me: Option<u64>,
    /// Response tracker: seconds (monotonic) by which the ACK or REPLY is
    /// due, and where the request went.
    pub(crate) rspt: Option<(i64, Nid)>,
}

// SAFETY: the raw pointers inside (the pages of `kiov`, valid until the MD
// is unlinked by the type invariant) are not tied to a thread; they are only
// used under LNet's locks or while a message holds a reference on the MD.
// `start` and `user_ptr` are plain addresses, echoed back and never read.
unsafe impl Send for LibMd {}

impl LibMd {
    /// Builds an MD from the caller's description, as `lnet_md_build`.
    pub(crate) fn build(arg: &MdArg<'_>, unlink: bool) -> Result<LibMd> {
        let umd = arg.get().ok_or(EINVAL)?;
        if umd.umd_start.is_null() && umd.umd_length != 0 {
            crate::cerror!(
                "MD start pointer can not be NULL with length {}\n",
                umd.umd_length
            );
            return Err(EINVAL);
        }
        let mut v = KVec::new();
        let length = if umd.umd_options & options::KIOV != 0 {
            if umd.umd_length > MAX_IOV {
                crate::cerror!(
                    "Invalid option: too many fragments {}, {} max\n",
                    umd.umd_length,
                    MAX_IOV
                );
                return Err(EINVAL);
            }
            let page_size = kernel::page::PAGE_SIZE as u64;
            let mut total: u32 = 0;
            for (i, f) in arg.kiov().ok_or(EINVAL)?.iter().enumerate() {
                let f = *f;
                if f.bv_page.is_null() || u64::from(f.bv_offset) + u64::from(f.bv_len) > page_size {
                    crate::cerror!("MD fragment {} is not within one page\n", i);
                    return Err(EINVAL);
                }
                total = total.checked_add(f.bv_len).ok_or(EINVAL)?;
                v.push(f, GFP_KERNEL)?;
            }
            total
        } else {
            arg.push_kvaddr(&mut v)?;
            umd.umd_length
        };
        let max_size = if umd.umd_options & options::MAX_SIZE != 0 {
            u32::try_from(umd.umd_max_size).map_err(|_| EINVAL)?
        } else {
            0
        };
        let state = MdState::new(
            umd.umd_options | options::KIOV,
            length,
            max_size,
            umd.umd_threshold,
        )
        .map_err(|e| {
            crate::cerror!("Invalid MD: {:?}\n", e);
            EINVAL
        })?;
        // INVARIANT: each KIOV fragment was checked non-null and within its
        // page above; push_kvaddr_range splits kernel memory by page; the
        // caller keeps either valid until the MD is unlinked (MdArg's
        // invariant).
        Ok(Self::assemble(
            state,
            v,
            (umd.umd_start as usize, umd.umd_user_ptr as usize),
            (umd.umd_handler, None),
            unlink,
        ))
    }

    /// An MD of LNet's own over `owner`'s memory (own_md.rs).
    pub(crate) fn owned(
        owner: Arc<dyn MdOwner>,
        threshold: i32,
        opts: u32,
        unlink: bool,
    ) -> Result<LibMd> {
        let mem = owner.memory();
        let start = mem.start();
        let length = u32::try_from(mem.len()).map_err(|_| EINVAL)?;
        let mut v = KVec::new();
        mem.push_frags(&mut v)?;
        let state = MdState::new(opts | options::KIOV, length, 0, threshold).map_err(|e| {
            crate::cerror!("Invalid MD: {:?}\n", e);
            EINVAL
        })?;
        // INVARIANT: push_frags splits the owner's memory by page; it
        // lives as long as this MD holds `owner`.
        Ok(Self::assemble(
            state,
            v,
            (start, 0),
            (None, Some(owner)),
            unlink,
        ))
    }

    /// A new MD, on no ME, held by no message; `(start, user_ptr)` echoed
    /// in events, which go to `(handler, owner)`.
    fn assemble(
        state: MdState,
        kiov: KVec<BioVec>,
        (start, user_ptr): (usize, usize),
        (handler, owner): (Option<Handler>, Option<Arc<dyn MdOwner>>),
        unlink: bool,
    ) -> LibMd {
        LibMd {
            state,
            kiov,
            start,
            user_ptr,
            handler,
            owner,
            flags: if unlink { flags::AUTO_UNLINK } else { 0 },
            refcount: 0,
            me: None,
            rspt: None,
        }
    }

    /// Where its events go, if anywhere: taken under `res`, delivered
    /// after it is released.
    pub(crate) fn sink(&self) -> Option<Sink> {
        if let Some(h) = self.handler {
            return Some(Sink::C(h));
        }
        let o = self.owner.as_ref().filter(|o| o.wants_events())?;
        Some(Sink::Own(o.clone()))
    }

    pub(crate) fn is_zombie(&self) -> bool {
        self.flags & flags::ZOMBIE != 0
    }

    /// Whether it can go now (`lnet_md_unlinkable`).
    pub(crate) fn unlinkable(&self) -> bool {
        self.refcount == 0
            && (self.is_zombie()
                || (self.flags & flags::AUTO_UNLINK != 0 && self.state.exhausted()))
    }

    /// Takes one operation from the threshold for an outgoing message.
    pub(crate) fn take_op(&mut self) {
        if self.state.threshold != THRESH_INF && self.state.threshold > 0 {
            self.state.threshold -= 1;
        }
    }

    /// Fills the MD part of an event (`lnet_md_deconstruct`).
    pub(crate) fn to_event(&self, cookie: u64, ev: &mut lnet_event) {
        ev.md_handle.cookie = cookie;
        ev.md_start = self.start as *mut _;
        ev.md_user_ptr = self.user_ptr as *mut _;
        ev.md_options = self.state.options;
    }
}

/// Where an MD's events go: the handler its ULP gave, or LNet's own owner
/// (a reference, so that it outlives the MD's freeing by the final event).
pub(crate) enum Sink {
    C(Handler),
    Own(Arc<dyn MdOwner>),
}

impl Sink {
    /// Delivers `ev`. No LNet spinlock may be held, and an MD's events go
    /// one at a time (its HANDLING flag), as the API promises handlers.
    pub(crate) fn deliver(&self, lnet: &TheLnet, ev: &mut lnet_event) {
        match self {
            // SAFETY: the handler the MD's owner gave for its events, called
            // as the API promises: a valid event, no LNet lock held.
            Sink::C(h) => unsafe { h(ev) },
            Sink::Own(o) => o.event(lnet, ev),
        }
    }
}
