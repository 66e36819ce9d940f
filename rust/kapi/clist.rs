// SPDX-License-Identifier: GPL-2.0

//! C `struct list_head` lists whose heads C callers own (Lustre's NID and
//! expression lists), through the kernel's own list primitives, and the
//! no-file-system allocation scope Lustre's allocations of them use.

use core::marker::PhantomData;

pub use super::bindings::list_head;

extern "C" {
    fn kapi_list_init(head: *mut list_head);
    fn kapi_list_add_tail(entry: *mut list_head, head: *mut list_head);
    fn kapi_list_del(entry: *mut list_head);
    fn kapi_nofs_save() -> u32;
    fn kapi_nofs_restore(flags: u32);
}

/// Makes `head` an empty list (`INIT_LIST_HEAD`).
///
/// # Safety
///
/// `head` points to a writable `list_head` that is on no list.
pub unsafe fn init(head: *mut list_head) {
    // SAFETY: `head` points to a writable `list_head` on no list (# Safety),
    // which INIT_LIST_HEAD overwrites.
    unsafe { kapi_list_init(head) }
}

/// Links `entry` last on the list `head` (`list_add_tail`).
///
/// # Safety
///
/// `head` is a live list head and `entry` a writable `list_head` on no
/// list; nobody else walks or changes the list meanwhile.
pub unsafe fn add_tail(entry: *mut list_head, head: *mut list_head) {
    // SAFETY: `head` is a live list head, `entry` a writable `list_head` on no list, and nobody
    // else walks or changes the list meanwhile (# Safety): what list_add_tail needs.
    unsafe { kapi_list_add_tail(entry, head) }
}

/// Unlinks `entry` from its list (`list_del`; the links are poisoned).
///
/// # Safety
///
/// `entry` is on a live list that nobody else walks or changes meanwhile.
pub unsafe fn del(entry: *mut list_head) {
    // SAFETY: `entry` is on a live list that nobody else walks or changes
    // meanwhile (# Safety), so its neighbours are valid to relink.
    unsafe { kapi_list_del(entry) }
}

/// The first entry of the list `head`, if it is not empty.
///
/// # Safety
///
/// `head` is a live, initialized list head.
pub unsafe fn first(head: *const list_head) -> Option<*mut list_head> {
    // SAFETY: `head` is a live, initialized list head (# Safety), so its `next`
    // field is readable.
    let next = unsafe { (*head).next };
    if next.is_null() || core::ptr::eq(next, head) {
        None
    } else {
        Some(next)
    }
}

/// The entries of the list `head`, first to last.
///
/// # Safety
///
/// `head` is a live, initialized list head, and the list is neither
/// changed nor freed while the iterator is in use.
pub unsafe fn entries(head: *const list_head) -> Entries {
    Entries {
        head,
        // SAFETY: `head` is a live, initialized list head (# Safety), so its
        // `next` field is readable.
        next: unsafe { (*head).next },
    }
}

/// The iterator [`entries`] returns.
#[derive(Clone)]
pub struct Entries {
    head: *const list_head,
    next: *mut list_head,
}

impl Iterator for Entries {
    type Item = *mut list_head;

    fn next(&mut self) -> Option<*mut list_head> {
        let cur = self.next;
        if cur.is_null() || core::ptr::eq(cur, self.head) {
            return None;
        }
        // SAFETY: `cur` is an entry of the live list `entries` was called
        // on, which stays unchanged while this iterator is used.
        self.next = unsafe { (*cur).next };
        Some(cur)
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
