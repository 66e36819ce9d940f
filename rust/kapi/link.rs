// SPDX-License-Identifier: GPL-2.0

//! The netdev and inetaddr notifiers that report the link under an LND's
//! NIs (link_watch.c, which each LND's C file includes), and the watches
//! that hold a reference to what they report to.

use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, ArcBorrow};

extern "C" {
    fn kapi_link_notifiers_register() -> c_int;
    fn kapi_link_notifiers_unregister();
    fn kapi_link_watch(name: *const c_char, addr: u32, data: *mut c_void) -> c_int;
    fn kapi_link_unwatch(data: *mut c_void);
}

/// The link notifiers, registered while this lives. link_watch.c counts
/// registrations, so that each value pairs its register with one
/// unregister however many there are.
pub struct LinkNotifiers(());

impl LinkNotifiers {
    /// Registers the notifiers (the first registration does).
    pub fn register() -> Result<Self> {
        // SAFETY: registers static notifier blocks, counted in C; `drop`
        // drops this registration.
        kernel::error::to_result(unsafe { kapi_link_notifiers_register() })?;
        Ok(LinkNotifiers(()))
    }
}

impl Drop for LinkNotifiers {
    fn drop(&mut self) {
        // SAFETY: pairs with the registration `register` made (the last
        // one unregisters the static blocks).
        unsafe { kapi_link_notifiers_unregister() };
    }
}

/// What a watched interface's changes go to ([`LinkWatch`]).
pub trait LinkEvents: Send + Sync + Sized {
    /// The interface is `down` (not running, no carrier, or without the
    /// address watched) or up. Called under RTNL or the inetaddr chain's
    /// lock, and under the watch lock: only flags may change.
    fn link_event(this: ArcBorrow<'_, Self>, down: bool);
}

/// The context `kapi_link_watch` is given: the function that knows `T`
/// first, so that [`kapi_link_event`] can call it without knowing `T`.
#[repr(C)]
struct Watch<T> {
    call: unsafe fn(*const c_void, bool),
    data: Arc<T>,
}

/// # Safety
///
/// `w` is the `Watch<T>` of a live [`LinkWatch<T>`].
unsafe fn watch_call<T: LinkEvents>(w: *const c_void, down: bool) {
    // SAFETY: a live `Watch<T>` (# Safety).
    let w = unsafe { &*w.cast::<Watch<T>>() };
    T::link_event(w.data.as_arc_borrow(), down);
}

/// The link under a watch changed, or its watch began (link_watch.c).
///
/// # Safety
///
/// `data` is the context of a watch of `kapi_link_watch`, called with the
/// watch lock held, which `kapi_link_unwatch` takes.
#[no_mangle]
unsafe extern "C" fn kapi_link_event(data: *mut c_void, down: c_int) {
    if data.is_null() {
        return;
    }
    // SAFETY: every watch's context is a `Watch<T>` of a `LinkWatch<T>`
    // (only `LinkWatch::new` watches), `repr(C)` with `call` first, which
    // frees it only after `kapi_link_unwatch`, which waits for this call;
    // `call` is `watch_call::<T>`, given that `Watch<T>`.
    unsafe {
        let call = data
            .cast_const()
            .cast::<unsafe fn(*const c_void, bool)>()
            .read();
        call(data.cast_const(), down != 0)
    }
}

/// A watch of an interface (by name) and of its address for `T`'s
/// [`LinkEvents`], which holds a reference to it until dropped.
///
/// # Invariants
///
/// `w` is a `KBox<Watch<T>>` watched by `kapi_link_watch`, freed in `drop`
/// after `kapi_link_unwatch`.
pub struct LinkWatch<T: LinkEvents> {
    w: NonNull<Watch<T>>,
}

// SAFETY: unwatching may be done from any thread; the data is an `Arc` of a
// `Send + Sync` type.
unsafe impl<T: LinkEvents> Send for LinkWatch<T> {}
// SAFETY: no method uses `&self`.
unsafe impl<T: LinkEvents> Sync for LinkWatch<T> {}

impl<T: LinkEvents> LinkWatch<T> {
    /// Watches interface `name`, which should carry `addr` (host order; 0
    /// for any), for `data`, whose [`LinkEvents::link_event`] learns its
    /// state now (before this returns) and its changes from then on.
    pub fn new(name: &CStr, addr: u32, data: Arc<T>) -> Result<LinkWatch<T>> {
        let w = KBox::into_raw(KBox::new(
            Watch {
                call: watch_call::<T>,
                data,
            },
            GFP_KERNEL,
        )?);
        // SAFETY: a NUL-terminated name, copied; `w` is a `Watch<T>` that
        // stays until the watch is removed (`drop`).
        let rc = unsafe { kapi_link_watch(name.as_char_ptr(), addr, w.cast()) };
        if rc != 0 {
            // SAFETY: made above; not watched (the watch failed first).
            drop(unsafe { KBox::from_raw(w) });
            return Err(Error::from_errno(rc));
        }
        // INVARIANT: watched just now.
        Ok(LinkWatch {
            // SAFETY: `KBox::into_raw` never gives null.
            w: unsafe { NonNull::new_unchecked(w) },
        })
    }
}

impl<T: LinkEvents> Drop for LinkWatch<T> {
    fn drop(&mut self) {
        // SAFETY: the context of a watch (type invariant); no report for it
        // runs once this returns.
        unsafe { kapi_link_unwatch(self.w.as_ptr().cast()) };
        // SAFETY: the box `new` made, used by no report any more.
        drop(unsafe { KBox::from_raw(self.w.as_ptr()) });
    }
}
