// SPDX-License-Identifier: GPL-2.0

//! What the 6.12 `KVec` lacks: removing elements, and pushing without
//! losing the element.

use kernel::alloc::Allocator;
use kernel::prelude::*;

/// Removes and returns the last element.
pub fn pop<T, A: Allocator>(v: &mut Vec<T, A>) -> Option<T> {
    let len = v.len();
    let last = len.checked_sub(1)?;
    // SAFETY: element `last` is initialized; shrinking the length first
    // hands its ownership to the read.
    unsafe {
        v.set_len(last);
        Some(core::ptr::read(v.as_ptr().add(last)))
    }
}

/// Removes and returns element `i`, keeping the order of the others.
pub fn remove<T, A: Allocator>(v: &mut Vec<T, A>, i: usize) -> Option<T> {
    let tail = v.as_mut_slice().get_mut(i..).filter(|t| !t.is_empty())?;
    tail.rotate_left(1);
    pop(v)
}

/// Removes every element for which `keep` is false.
pub fn retain<T>(v: &mut KVec<T>, mut keep: impl FnMut(&T) -> bool) {
    let mut i = 0;
    while let Some(x) = v.as_slice().get(i) {
        if keep(x) {
            i += 1;
        } else {
            drop(remove(v, i));
        }
    }
}

/// Appends `x`, or gives it back when there is no memory: an element
/// that must not be lost (a message) is never dropped by a failed push.
pub fn push_or_back<T>(v: &mut KVec<T>, x: T, flags: kernel::alloc::Flags) -> Result<(), T> {
    if v.reserve(1, flags).is_err() {
        return Err(x);
    }
    // Within the capacity reserved above: cannot fail.
    let _ = v.push(x, flags);
    Ok(())
}

/// Removes every element.
pub fn clear<T>(v: &mut KVec<T>) {
    while pop(v).is_some() {}
}

/// Keeps the first `n` elements (all, if there are fewer).
pub fn truncate<T>(v: &mut KVec<T>, n: usize) {
    while v.len() > n {
        drop(pop(v));
    }
}
