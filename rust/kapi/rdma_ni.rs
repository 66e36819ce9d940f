// SPDX-License-Identifier: GPL-2.0

//! What an RDMA NI needs besides verbs: threads and a
//! scheduling stack that each hold a reference to what they serve, so
//! that what they hand C or park is an owned reference, released once no
//! call can use it; and plain reads of the kernel (CPU count, wall clock,
//! LNet's LND timeout).

use super::kthread::{self, Thread};
use core::ffi::{c_int, c_uint, c_void};
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, ArcBorrow};

pub use super::arcstack::{ArcStack, StackLink, Stackable, Taken};
pub use super::sys::nr_cpu_ids;

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
