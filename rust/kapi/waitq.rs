// SPDX-License-Identifier: GPL-2.0

//! A wait queue with no lock of its own: the condition is whatever the
//! waiter checks (atomics, a lock-free list), and the waker may run in any
//! context, IRQs included (a CQ's completion handler). Unlike a `CondVar`
//! woken without its lock, a wake between the check and the sleep is not
//! lost: the waiter is on the queue before it checks.

use kernel::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

/// The lockdep class of every wait queue's internal lock: it is only ever
/// held inside the kernel's wait-queue calls, so one class is enough.
struct Key(Opaque<bindings::lock_class_key>);
// SAFETY: lockdep owns the key; we only pass its address.
unsafe impl Sync for Key {}
static KEY: Key = Key(Opaque::uninit());

/// A `struct wait_queue_head`.
#[pin_data]
pub struct WaitQueue {
    #[pin]
    wq: Opaque<bindings::wait_queue_head>,
}

// SAFETY: a wait queue is used by many threads at once by design.
unsafe impl Send for WaitQueue {}
// SAFETY: the `&self` methods only pass the queue's address to the kernel's
// wait-queue calls (__wake_up, prepare_to_wait_event, finish_wait), which take
// the queue's own lock: callable from any thread at once, IRQs included.
unsafe impl Sync for WaitQueue {}

impl WaitQueue {
    /// A new wait queue.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(WaitQueue {
            // SAFETY: `slot` is valid while the closure runs; the name
            // and key are static.
            wq <- Opaque::ffi_init(|slot| unsafe {
                bindings::__init_waitqueue_head(slot, c"kapi_waitq".as_ptr().cast(), KEY.0.get())
            }),
        })
    }

    /// Wakes every waiter; callable from any context.
    pub fn wake(&self) {
        // SAFETY: an initialised wait queue.
        unsafe {
            bindings::__wake_up(
                self.wq.get(),
                bindings::TASK_NORMAL,
                0,
                core::ptr::null_mut(),
            )
        };
    }

    /// Sleeps until `cond()` holds or `ms` milliseconds pass (a kernel
    /// thread is not woken by signals).
    pub fn wait_timeout(&self, ms: u32, mut cond: impl FnMut() -> bool) {
        let mut entry = core::mem::MaybeUninit::<bindings::wait_queue_entry>::zeroed();
        // SAFETY: `entry` lives on this stack frame until finish_wait.
        unsafe { bindings::init_wait_entry(entry.as_mut_ptr(), 0) };
        // SAFETY: a plain conversion.
        let mut left = unsafe { bindings::__msecs_to_jiffies(ms) } as isize;
        loop {
            // SAFETY: an initialised queue and entry; queued before the
            // check so a wake after it is seen.
            unsafe {
                bindings::prepare_to_wait_event(
                    self.wq.get(),
                    entry.as_mut_ptr(),
                    bindings::TASK_INTERRUPTIBLE as i32,
                )
            };
            if cond() || left <= 0 {
                break;
            }
            // SAFETY: sleeping in TASK_INTERRUPTIBLE, set above.
            left = unsafe { bindings::schedule_timeout(left) };
        }
        // SAFETY: the entry was queued by prepare_to_wait_event.
        unsafe { bindings::finish_wait(self.wq.get(), entry.as_mut_ptr()) };
    }
}
