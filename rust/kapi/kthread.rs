// SPDX-License-Identifier: GPL-2.0

//! A kernel thread that runs one function until it is asked to stop.

use kernel::bindings;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, ArcBorrow};

/// What a `Thread` frees once its thread has exited: a function and its
/// argument.
type Owned = (unsafe fn(*mut c_void), *mut c_void);

/// A running kernel thread; dropping it stops the thread, waits for it
/// and then drops what it was started with.
///
/// # Invariants
///
/// `task` is a kthread this value holds a task reference on, so that
/// `kthread_stop_put` may be called whether or not the thread has already
/// returned. `owned`, if set, is freed by its function only after the
/// thread has exited: the thread reads it until then.
pub struct Thread {
    task: *mut bindings::task_struct,
    owned: Option<Owned>,
}

// SAFETY: the task pointer is only passed to kthread_stop_put(), which may be
// called from any thread; `owned` is an `Arc` of a `Send + Sync` type (see
// `spawn_arc`) or a `'static` reference to a `Sync` one (`spawn_static`),
// either of which may be dropped from any thread.
unsafe impl Send for Thread {}
// SAFETY: no method reads or writes through `&Thread`.
unsafe impl Sync for Thread {}

/// What a thread of [`Thread::spawn_arc`] runs.
struct Start<T: Send + Sync + 'static> {
    data: Arc<T>,
    run: fn(ArcBorrow<'_, T>),
}

/// The entry point of a thread of [`Thread::spawn_arc`].
///
/// # Safety
///
/// `p` is the `Start<T>` its `Thread` owns, freed only once this thread
/// has exited.
unsafe extern "C" fn start_arc<T: Send + Sync + 'static>(p: *mut c_void) -> c_int {
    // SAFETY: the `Start<T>` the `Thread` owns and frees only after this
    // thread has exited (# Safety); only shared references are made to it.
    let s = unsafe { &*p.cast_const().cast::<Start<T>>() };
    (s.run)(s.data.as_arc_borrow());
    0
}

/// Frees a `Start<T>` of [`Thread::spawn_arc`].
///
/// # Safety
///
/// `p` came from `KBox::into_raw` of a `Start<T>` in `spawn_arc`, and no
/// thread uses it any more.
unsafe fn free_start<T: Send + Sync + 'static>(p: *mut c_void) {
    // SAFETY: from `KBox::into_raw` and no longer used (# Safety).
    drop(unsafe { KBox::from_raw(p.cast::<Start<T>>()) });
}

/// What a thread of [`Thread::spawn_static`] runs.
struct StaticStart<T: Sync + 'static> {
    data: &'static T,
    run: fn(&'static T),
}

/// The entry point of a thread of [`Thread::spawn_static`].
///
/// # Safety
///
/// `p` is the `StaticStart<T>` its `Thread` owns, freed only once this
/// thread has exited.
unsafe extern "C" fn start_static<T: Sync + 'static>(p: *mut c_void) -> c_int {
    // SAFETY: the `StaticStart<T>` the `Thread` owns and frees only after
    // this thread has exited (# Safety); only shared references are made.
    let s = unsafe { &*p.cast_const().cast::<StaticStart<T>>() };
    (s.run)(s.data);
    0
}

/// Frees a `StaticStart<T>` of [`Thread::spawn_static`].
///
/// # Safety
///
/// `p` came from `KBox::into_raw` of a `StaticStart<T>` in `spawn_static`,
/// and no thread uses it any more.
unsafe fn free_static<T: Sync + 'static>(p: *mut c_void) {
    // SAFETY: from `KBox::into_raw` and no longer used (# Safety).
    drop(unsafe { KBox::from_raw(p.cast::<StaticStart<T>>()) });
}

impl Thread {
    /// Starts `run(data)` in a thread named `name`. `run` must return only
    /// once [`should_stop`] is true, and `data` must stay valid until the
    /// `Thread` is dropped.
    ///
    /// # Safety
    ///
    /// As above: `data` outlives the thread and `run` may use it from
    /// another thread.
    pub unsafe fn spawn(
        name: &CStr,
        run: unsafe extern "C" fn(*mut c_void) -> c_int,
        data: *mut c_void,
    ) -> Result<Thread> {
        // SAFETY: `data` outlives the thread and `run` may use it from
        // another thread (# Safety).
        unsafe { Self::create(name, run, data, None) }
    }

    /// Starts `run` in a thread named `name`, over a reference to `data`
    /// that the `Thread` holds: it is released once the thread has been
    /// stopped (or has returned) and the `Thread` is dropped. `run` should
    /// return once [`should_stop`] is true; an object that keeps its own
    /// `Thread` must drop it explicitly, or the two keep each other.
    pub fn spawn_arc<T: Send + Sync + 'static>(
        name: &CStr,
        data: Arc<T>,
        run: fn(ArcBorrow<'_, T>),
    ) -> Result<Thread> {
        let p = KBox::into_raw(KBox::new(Start { data, run }, GFP_KERNEL)?).cast::<c_void>();
        // SAFETY: `start_arc::<T>` gets the `Start<T>` just boxed, which the
        // new `Thread` owns and frees (`free_start::<T>`) only after the
        // thread has exited; `T` is `Sync`, so the thread may share it.
        unsafe { Self::create(name, start_arc::<T>, p, Some((free_start::<T>, p))) }
    }

    /// Starts `run(data)` in a thread named `name`, for data that lives as
    /// long as the module (a `'static` reference). `run` should return once
    /// [`should_stop`] is true.
    pub fn spawn_static<T: Sync + 'static>(
        name: &CStr,
        data: &'static T,
        run: fn(&'static T),
    ) -> Result<Thread> {
        let start = KBox::new(StaticStart { data, run }, GFP_KERNEL)?;
        let p = KBox::into_raw(start).cast::<c_void>();
        // SAFETY: `start_static::<T>` gets the `StaticStart<T>` just boxed,
        // which the new `Thread` owns and frees (`free_static::<T>`) only
        // after the thread has exited; `T` is `Sync` and `data` is
        // `'static`, so the thread may share it for as long as it runs.
        unsafe { Self::create(name, start_static::<T>, p, Some((free_static::<T>, p))) }
    }

    /// # Safety
    ///
    /// `run` may use `data` from another thread until the thread exits, and
    /// `owned`'s function frees its pointer once nothing uses it (or, on
    /// error, at once).
    unsafe fn create(
        name: &CStr,
        run: unsafe extern "C" fn(*mut c_void) -> c_int,
        data: *mut c_void,
        owned: Option<Owned>,
    ) -> Result<Thread> {
        // SAFETY: "%s" takes the NUL-terminated `name`; `run` may use `data`
        // from another thread until it exits (# Safety).
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(run),
                data,
                bindings::NUMA_NO_NODE,
                c"%s".as_ptr().cast(),
                name.as_char_ptr(),
            )
        };
        let task = match kernel::error::from_err_ptr(task) {
            Ok(t) => t,
            Err(e) => {
                if let Some((free, p)) = owned {
                    // SAFETY: no thread was created, so nothing uses `p`.
                    unsafe { free(p) };
                }
                return Err(e);
            }
        };
        // SAFETY: a freshly created kthread, not yet woken: it cannot have
        // exited, so its task is valid; the reference is dropped by
        // kthread_stop_put() in `drop`.
        unsafe {
            bindings::get_task_struct(task);
            bindings::wake_up_process(task);
        }
        // INVARIANT: the task reference is taken above; `owned` is freed
        // in `drop`, after the thread has exited.
        Ok(Thread { task, owned })
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        // SAFETY: a kthread we hold a task reference on (# Invariants),
        // valid even if it has returned; the call drops that reference.
        unsafe { bindings::kthread_stop_put(self.task) };
        if let Some((free, p)) = self.owned.take() {
            // SAFETY: kthread_stop_put() returned once the thread exited,
            // so nothing uses `p` any more (# Invariants).
            unsafe { free(p) };
        }
    }
}

/// Whether the current kernel thread has been asked to stop.
pub fn should_stop() -> bool {
    // SAFETY: called from a kthread started by `Thread::spawn`.
    unsafe { bindings::kthread_should_stop() }
}

/// Sleeps up to `ms` milliseconds; a stop request or a signal ends it early.
pub fn sleep_ms(ms: u32) {
    // SAFETY: plain conversions and a sleep in process context.
    unsafe {
        let j = bindings::__msecs_to_jiffies(ms);
        bindings::schedule_timeout_interruptible(j as _);
    }
}

/// Sleeps `ms` milliseconds whatever signals arrive: for waits that must
/// end only when what they wait for is done.
pub fn msleep(ms: u32) {
    // SAFETY: a sleep in process context.
    unsafe { bindings::msleep(ms) };
}

extern "C" {
    fn kapi_cond_resched();
    fn kapi_might_sleep();
}

/// Declares that the caller may sleep: with `CONFIG_DEBUG_ATOMIC_SLEEP`,
/// a call from atomic context (a spinlock held, interrupts off) is
/// reported at once, whether or not this call would have slept.
pub fn might_sleep() {
    // SAFETY: a C wrapper around might_sleep(), which only checks.
    unsafe { kapi_might_sleep() };
}

/// Lets another thread run if one is waiting for this CPU; for loops that
/// may not sleep otherwise (the kernel may be built without preemption).
pub fn cond_resched() {
    // SAFETY: a C wrapper around cond_resched(), called in process context
    // without locks held.
    unsafe { kapi_cond_resched() };
}

/// Milliseconds on the monotonic clock.
pub fn now_ms() -> u64 {
    // SAFETY: reads a clock; callable in any context.
    let ns = unsafe { bindings::ktime_get() };
    u64::try_from(ns / 1_000_000).unwrap_or(0)
}

/// Seconds on the monotonic clock.
pub fn now_secs() -> i64 {
    // SAFETY: reads a clock; callable in any context.
    unsafe { bindings::ktime_get_seconds() }
}
