// SPDX-License-Identifier: GPL-2.0

//! C `struct list_head` lists that own their entries ([`ListHead`]), whose
//! heads C callers may hold (Lustre's NID and expression lists), through
//! the kernel's own list primitives, and the no-file-system allocation scope
//! Lustre's allocations of them use.

use core::marker::PhantomData;
use core::pin::Pin;
use kernel::alloc::{AllocError, Flags};
use kernel::init::PinInit;
use kernel::prelude::*;
use kernel::types::Opaque;

pub use super::bindings::list_head;

extern "C" {
    fn kapi_list_init(head: *mut list_head);
    fn kapi_list_add_tail(entry: *mut list_head, head: *mut list_head);
    fn kapi_list_del(entry: *mut list_head);
    fn kapi_nofs_save() -> u32;
    fn kapi_nofs_restore(flags: u32);
}

/// One entry of a [`ListHead<T>`]: `value` after its link, laid out as the
/// C structures that start with their `list_head` (Lustre's
/// `cfs_range_expr`).
#[repr(C)]
pub struct Entry<T> {
    link: Opaque<list_head>,
    value: T,
}

impl<T> Entry<T> {
    /// Where `value` lies, for callers that check the layout against a C
    /// structure's.
    pub const VALUE_OFFSET: usize = core::mem::offset_of!(Entry<T>, value);
}

/// A C `struct list_head` whose entries are `T`s that the list owns, each
/// in an [`Entry<T>`] allocated as a `KBox`.
///
/// The head may be inside a C structure or a C caller's own variable:
/// exported functions receive it as `&ListHead<T>` (or pinned `&mut` to
/// empty it), carrying the caller's promise below. C callers may splice such
/// lists together or test them with `list_empty()`.
///
/// # Invariants
///
/// The `list_head` is either all zeroes (an empty list never initialised:
/// C callers may hand over one so) or an initialised list whose every entry
/// is the `link` of an `Entry<T>` leaked from a `KBox`, owned by the list.
/// Once initialised, it does not move: Rust makes a `ListHead` only in
/// place ([`ListHead::new`]), and C hands over heads that stay where they
/// are for as long as the reference it passes.
#[repr(transparent)]
pub struct ListHead<T> {
    head: Opaque<list_head>,
    _entries: PhantomData<KBox<Entry<T>>>,
}

impl<T> ListHead<T> {
    /// An empty list, initialised where it is placed.
    pub fn new() -> impl PinInit<Self> {
        let init = |slot: *mut Self| {
            // `Self` is the `list_head` (transparent).
            // SAFETY: `slot` is valid for writes and stays put (PinInit).
            unsafe { kapi_list_init(slot.cast()) };
            Ok::<(), core::convert::Infallible>(())
        };
        // INVARIANT: an initialised empty head, made in place.
        // SAFETY: the closure initialises all of `Self` (the list_head; the
        // PhantomData has no bytes) and never fails.
        unsafe { kernel::init::pin_init_from_closure(init) }
    }

    fn raw(&self) -> *mut list_head {
        self.head.get()
    }

    /// Whether the list has no entries.
    pub fn is_empty(&self) -> bool {
        self.first().is_none()
    }

    fn first(&self) -> Option<*mut list_head> {
        let head = self.raw();
        // SAFETY: the head is readable (type invariant); a zeroed head has a
        // null `next`.
        let next = unsafe { (*head).next };
        (!next.is_null() && !core::ptr::eq(next, head)).then_some(next)
    }

    /// Adds `value` last; the list owns it from now on. Adding does not
    /// move or free any entry, so references from [`ListHead::iter`] stay
    /// valid; the list is not `Sync`, so nothing else changes it meanwhile.
    pub fn push_back(&self, value: T, flags: Flags) -> Result<(), AllocError> {
        let entry = KBox::new(
            Entry {
                link: Opaque::uninit(),
                value,
            },
            flags,
        )?;
        let entry = KBox::into_raw(entry);
        let head = self.raw();
        // INVARIANT: `entry`, leaked from its KBox, becomes the list's;
        // `clear` or drop takes it back.
        // The head is an initialised list or zeroed (type invariant),
        // which is initialised here first; it does not move. `entry` is a
        // fresh allocation on no list.
        // SAFETY: the head is initialised (here if zeroed) and does not
        // move; `entry` is a fresh allocation on no list.
        unsafe {
            if (*head).next.is_null() {
                kapi_list_init(head);
            }
            kapi_list_add_tail(Opaque::raw_get(core::ptr::addr_of!((*entry).link)), head);
        }
        Ok(())
    }

    /// The values, first to last.
    pub fn iter(&self) -> Iter<'_, T> {
        let head = self.raw();
        Iter {
            head,
            // SAFETY: the head is readable (type invariant).
            next: unsafe { (*head).next },
            _list: PhantomData,
        }
    }

    /// Frees every entry, leaving the list empty (a zeroed head stays so).
    pub fn clear(self: Pin<&mut Self>) {
        self.free_entries();
    }

    fn free_entries(&self) {
        while let Some(link) = self.first() {
            // `link` is an entry of the list (type invariant): the
            // `link` field, first, of an `Entry<T>` leaked from a KBox.
            // Unlinked, it is the list's no more and is freed once. Callers
            // hold the list exclusively (`Pin<&mut>` or drop), so no
            // reference from `iter` is left.
            // SAFETY: `link` is the first field of a leaked `Entry<T>` of
            // this exclusively held list, unlinked and freed once here.
            unsafe {
                kapi_list_del(link);
                drop(KBox::from_raw(link.cast::<Entry<T>>()));
            }
        }
    }
}

impl<T> Drop for ListHead<T> {
    fn drop(&mut self) {
        self.free_entries();
    }
}

/// The iterator [`ListHead::iter`] returns.
pub struct Iter<'a, T> {
    head: *const list_head,
    next: *mut list_head,
    _list: PhantomData<&'a ListHead<T>>,
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            head: self.head,
            next: self.next,
            _list: PhantomData,
        }
    }
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        let cur = self.next;
        if cur.is_null() || core::ptr::eq(cur, self.head) {
            return None;
        }
        // `cur` is an entry of the list borrowed for `'a` (the
        // `ListHead` invariant): the link, first field, of a live `Entry<T>`
        // that only `clear` or drop frees, which need the list exclusively.
        // Its link may change (by `push_back`), which is inside `Opaque`.
        // SAFETY: `cur` is the link, first field, of a live `Entry<T>` that
        // nothing frees while the list is borrowed for `'a`.
        let entry = unsafe { &*cur.cast::<Entry<T>>() };
        // `entry` is a live `Entry<T>` of the borrowed list (just above), so
        // its link is readable; the read goes through the `Opaque` raw
        // pointer, and nothing writes the link meanwhile (the list is not
        // `Sync`, and this thread is here, not in `push_back`).
        // SAFETY: a live entry's link, read through `Opaque`'s raw pointer
        // while no thread can write it.
        self.next = unsafe { (*entry.link.get()).next };
        Some(&entry.value)
    }
}

/// A `list_head` a C caller hands over to be made an empty
/// [`ListHead<T>`] (Lustre's `cfs_parse_nidlist` initialises the caller's
/// head): what it holds before is undefined.
///
/// # Invariants
///
/// Only received from C, by reference: no Rust code makes one. The C
/// caller's contract is that it is its own writable `list_head`, which
/// stays where it is for as long as the reference.
#[repr(transparent)]
pub struct ListHeadSlot<T> {
    head: Opaque<list_head>,
    _entries: PhantomData<KBox<Entry<T>>>,
}

impl<T> ListHeadSlot<T> {
    /// Makes the head an empty list (entries it may have had are not
    /// freed: the caller said it had none).
    pub fn init(&self) -> &ListHead<T> {
        let head = self.head.get();
        // SAFETY: a writable `list_head` that does not move (type
        // invariant); INIT_LIST_HEAD makes it point to itself.
        unsafe { kapi_list_init(head) };
        // INVARIANT: now an initialised empty list that does not move.
        // SAFETY: the same transparent layout (a `list_head`), borrowed as
        // long as `self`.
        unsafe { &*head.cast::<ListHead<T>>() }
    }
}

/// While alive, allocations of this task do not recurse into file
/// systems (`memalloc_nofs_save`): Lustre allocates NID and expression
/// lists with `GFP_NOFS`, which the 6.12 kernel crate does not offer.
///
/// Not `Send`: the flag belongs to the task that entered the scope.
pub struct NoFs(u32, PhantomData<*mut ()>);

impl NoFs {
    /// Enters the scope.
    pub fn enter() -> NoFs {
        // SAFETY: sets a flag of the current task; restored by drop.
        NoFs(unsafe { kapi_nofs_save() }, PhantomData)
    }
}

impl Drop for NoFs {
    fn drop(&mut self) {
        // SAFETY: restores what `enter` saved, in the task that saved it
        // (NoFs is not Send).
        unsafe { kapi_nofs_restore(self.0) }
    }
}
