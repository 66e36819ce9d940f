// SPDX-License-Identifier: GPL-2.0

//! A lock-free stack of `Arc`s for schedulers fed from any context (a CQ's
//! completion handler, a socket callback): what is pushed is an owned
//! reference, released once taken and dropped.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use kernel::sync::Arc;

/// The link of an [`ArcStack`], inside what it stacks.
pub struct StackLink<T> {
    next: AtomicPtr<T>,
    queued: AtomicBool,
}

impl<T> StackLink<T> {
    /// A link on no stack.
    pub const fn new() -> StackLink<T> {
        StackLink {
            next: AtomicPtr::new(core::ptr::null_mut()),
            queued: AtomicBool::new(false),
        }
    }
}

impl<T> Default for StackLink<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// What an [`ArcStack`] stacks.
pub trait Stackable: Send + Sync + Sized {
    /// The link of `self` ([`ArcStack::push`] refuses an object whose link
    /// is not a field of it at the same place as the first one pushed).
    fn link(&self) -> &StackLink<Self>;
}

/// A lock-free stack of `Arc`s, pushed from any context (hard IRQ
/// included) and taken whole; an object is on it at most once.
///
/// # Invariants
///
/// `head` is null or the newest of a list of `Arc::into_raw` references,
/// each object on it once, linked through the [`StackLink`] at byte `off`
/// of each (inside it), whose `queued` is set while it is on the list.
/// `off` is `usize::MAX` until the first push.
pub struct ArcStack<T: Stackable> {
    head: AtomicPtr<T>,
    off: AtomicUsize,
}

impl<T: Stackable> Default for ArcStack<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Stackable> ArcStack<T> {
    /// An empty stack.
    pub const fn new() -> ArcStack<T> {
        // INVARIANT: empty, with no link place fixed yet.
        ArcStack {
            head: AtomicPtr::new(core::ptr::null_mut()),
            off: AtomicUsize::new(usize::MAX),
        }
    }

    /// The byte offset of `x`'s link if it lies inside `x` and where the
    /// stack's other objects have theirs.
    fn link_off(&self, x: &T) -> Option<usize> {
        let base = x as *const T as usize;
        let link = x.link() as *const StackLink<T> as usize;
        let off = link.checked_sub(base)?;
        if off.checked_add(core::mem::size_of::<StackLink<T>>())? > core::mem::size_of::<T>() {
            return None;
        }
        match self
            .off
            .compare_exchange(usize::MAX, off, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Some(off),
            Err(o) if o == off => Some(off),
            Err(_) => None,
        }
    }

    /// Pushes `x`; false (and `x` dropped) if it is on the stack already,
    /// or its link is not where the stack's objects have theirs.
    pub fn push(&self, x: Arc<T>) -> bool {
        let Some(off) = self.link_off(&x) else {
            return false;
        };
        let p = Arc::into_raw(x).cast_mut();
        // SAFETY: `link_off` found `x`'s link at byte `off` inside it, a
        // field of an object kept alive by the reference `p`.
        let link = unsafe { &*p.cast::<u8>().add(off).cast::<StackLink<T>>() };
        if link.queued.swap(true, Ordering::AcqRel) {
            // SAFETY: the reference made above, which nothing took.
            drop(unsafe { Arc::from_raw(p) });
            return false;
        }
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            link.next.store(head, Ordering::Relaxed);
            // INVARIANT: `p` is an owned reference, queued once, whose link
            // is at `off` inside it.
            match self
                .head
                .compare_exchange(head, p, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(h) => head = h,
            }
        }
    }

    /// Whether nothing is stacked.
    pub fn is_empty(&self) -> bool {
        self.head.load(Ordering::Acquire).is_null()
    }

    /// Takes every object pushed, newest first.
    pub fn take(&self) -> Taken<T> {
        // INVARIANT: the list, swapped out whole, is the taker's alone.
        Taken {
            next: self.head.swap(core::ptr::null_mut(), Ordering::AcqRel),
            off: self.off.load(Ordering::Acquire),
        }
    }
}

impl<T: Stackable> Drop for ArcStack<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// What [`ArcStack::take`] took, each object handed out once; those not
/// walked to are released when it drops.
///
/// # Invariants
///
/// `next` is null or the first of a list as the stack's (its invariant),
/// linked at byte `off`, owned by this alone.
pub struct Taken<T: Stackable> {
    next: *mut T,
    off: usize,
}

// SAFETY: owned references to `Send + Sync` objects.
unsafe impl<T: Stackable> Send for Taken<T> {}

impl<T: Stackable> Iterator for Taken<T> {
    type Item = Arc<T>;

    fn next(&mut self) -> Option<Arc<T>> {
        if self.next.is_null() {
            return None;
        }
        let p = self.next;
        // SAFETY: `p` is on the list (type invariant), alive by the
        // reference it holds, with its link at byte `off` inside it.
        let link = unsafe { &*p.cast::<u8>().add(self.off).cast::<StackLink<T>>() };
        self.next = link.next.load(Ordering::Relaxed);
        // Read before it may be pushed again.
        link.queued.store(false, Ordering::Release);
        // SAFETY: the reference `push` made, handed out once: the list is
        // walked by this alone.
        Some(unsafe { Arc::from_raw(p) })
    }
}

impl<T: Stackable> Drop for Taken<T> {
    fn drop(&mut self) {
        for x in self.by_ref() {
            drop(x);
        }
    }
}
