// SPDX-License-Identifier: GPL-2.0

//! What an RDMA NI needs besides verbs: threads and a
//! scheduling stack that each hold a reference to what they serve, so
//! that what they hand C or park is an owned reference, released once no
//! call can use it; and plain reads of the kernel (CPU count, wall clock,
//! LNet's LND timeout).

use super::kthread::{self, Thread};
use core::ffi::{c_int, c_uint, c_void};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, ArcBorrow};

extern "C" {
    fn lnet_get_lnd_timeout() -> c_uint;
}

/// What a thread started by [`NiThread::spawn`] runs, and on what.
struct Start<T> {
    run: fn(ArcBorrow<'_, T>) -> c_int,
    data: Arc<T>,
}

/// # Safety
///
/// Called by the kthread core only, with the `Start<T>` of an `NiThread<T>`.
unsafe extern "C" fn thread_main<T: Send + Sync>(data: *mut c_void) -> c_int {
    // SAFETY: the `Start<T>` its `NiThread` frees only after
    // `kthread_stop` returned, that is after this function did.
    let start = unsafe { &*data.cast_const().cast::<Start<T>>() };
    let rc = (start.run)(start.data.as_arc_borrow());
    // `kthread_stop` needs the task until it asks: a `run` that returned
    // early waits for it.
    while !kthread::should_stop() {
        kthread::sleep_ms(100);
    }
    rc
}

/// A kernel thread running `run(data)` until it is dropped, which stops it
/// and waits for it; it holds a reference to `data` until then. `run` loops
/// until [`kthread::should_stop`].
///
/// # Invariants
///
/// `start` is a `KBox<Start<T>>` given to the thread in `thread`, freed
/// only after the thread is stopped.
pub struct NiThread<T: Send + Sync> {
    thread: Option<Thread>,
    start: NonNull<Start<T>>,
}

// SAFETY: stopping a thread may be done from any thread; the data is an
// `Arc` of a `Send + Sync` type.
unsafe impl<T: Send + Sync> Send for NiThread<T> {}
// SAFETY: no method uses `&self`.
unsafe impl<T: Send + Sync> Sync for NiThread<T> {}

impl<T: Send + Sync> NiThread<T> {
    /// Starts `run(data)` in a thread named `name`.
    pub fn spawn(
        name: &CStr,
        run: fn(ArcBorrow<'_, T>) -> c_int,
        data: Arc<T>,
    ) -> Result<NiThread<T>> {
        let start = KBox::into_raw(KBox::new(Start { run, data }, GFP_KERNEL)?);
        // SAFETY: `thread_main::<T>` takes `start`, a `Start<T>` that
        // outlives the thread (freed in `drop` after stopping it), and only
        // reads it, from the thread; it returns only once asked to stop.
        match unsafe { Thread::spawn(name, thread_main::<T>, start.cast()) } {
            Ok(t) => Ok(NiThread {
                thread: Some(t),
                // INVARIANT: given to the thread just started.
                // SAFETY: `KBox::into_raw` never gives null.
                start: unsafe { NonNull::new_unchecked(start) },
            }),
            Err(e) => {
                // SAFETY: made above; no thread runs with it.
                drop(unsafe { KBox::from_raw(start) });
                Err(e)
            }
        }
    }
}

impl<T: Send + Sync> Drop for NiThread<T> {
    fn drop(&mut self) {
        // Stops the thread and waits for it.
        drop(self.thread.take());
        // SAFETY: the box `spawn` made (type invariant), which the stopped
        // thread no longer uses.
        drop(unsafe { KBox::from_raw(self.start.as_ptr()) });
    }
}

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

/// The number of possible CPUs (`nr_cpu_ids`).
pub fn nr_cpu_ids() -> u32 {
    // SAFETY: a plain read of a value set once at boot.
    unsafe { kernel::bindings::nr_cpu_ids }
}

/// Microseconds of wall-clock time.
pub fn real_time_us() -> u64 {
    let mut ts = kernel::bindings::timespec64::default();
    // SAFETY: fills the struct it is given.
    unsafe { kernel::bindings::ktime_get_real_ts64(&mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000)
        .saturating_add(ts.tv_nsec as u64 / 1000)
}

/// LNet's LND timeout, seconds (`lnet_get_lnd_timeout`).
pub fn lnd_timeout() -> u32 {
    // SAFETY: a plain getter exported by lnet.ko.
    unsafe { lnet_get_lnd_timeout() }
}
