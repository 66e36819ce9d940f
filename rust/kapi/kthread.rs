// SPDX-License-Identifier: GPL-2.0

//! A kernel thread that runs one function until it is asked to stop.

use kernel::bindings;
use kernel::prelude::*;
use kernel::str::CStr;

/// A running kernel thread; dropping it stops the thread and waits for it.
pub struct Thread {
    task: *mut bindings::task_struct,
}

// SAFETY: the task pointer is only passed to kthread_stop(), which may be
// called from any thread.
unsafe impl Send for Thread {}
// SAFETY: no method reads or writes through `&Thread`.
unsafe impl Sync for Thread {}

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
        run: unsafe extern "C" fn(*mut kernel::ffi::c_void) -> kernel::ffi::c_int,
        data: *mut kernel::ffi::c_void,
    ) -> Result<Thread> {
        // SAFETY: "%s" takes the NUL-terminated `name`; `data` outlives the
        // thread and `run` may use it from another thread (# Safety).
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(run),
                data,
                bindings::NUMA_NO_NODE,
                c"%s".as_ptr().cast(),
                name.as_char_ptr(),
            )
        };
        let task = kernel::error::from_err_ptr(task)?;
        // SAFETY: a freshly created, not yet running kthread.
        unsafe { bindings::wake_up_process(task) };
        Ok(Thread { task })
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        // SAFETY: the thread runs until kthread_should_stop(), so it has not
        // exited and the task is still valid.
        unsafe { bindings::kthread_stop(self.task) };
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
