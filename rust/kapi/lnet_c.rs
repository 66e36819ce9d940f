// SPDX-License-Identifier: GPL-2.0

//! lnet.ko's own C helpers (lnet_exports.c, lnet_debugfs.c, lnet_dev.c,
//! lnet_nid_update.c) as safe Rust: the local IPv4 addresses, the
//! lnet_lnd_timeout debugfs file, the /dev/lnet misc device and NID
//! update records. Built into lnet.ko only (cfg `kapi_lnet`).

use super::bindings;
use core::ffi::{c_int, c_uint, CStr};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::error::{code::EBUSY, Result};

extern "C" {
    fn lnet_debugfs_init(lnd_timeout: *mut u32) -> c_int;
    fn lnet_debugfs_fini();
    fn lnet_dev_register() -> c_int;
    fn lnet_dev_deregister();
    fn lnet_nui_new(
        net: u32,
        nids: *const bindings::lnet_nid,
        count: c_uint,
    ) -> *mut nid_update_info;
    fn lnet_nui_free(nui: *mut nid_update_info);
}

/// The IPv4 address (host order) of interface `name`, or, with an empty
/// name, of the first interface that is up, not loopback and has one; that
/// interface's name goes to `found`, NUL-terminated and cut to fit
/// (`lnet_inet_addr`). `Err` holds the errno: -ENODEV (no such interface),
/// -ENETDOWN (none up), -EADDRNOTAVAIL (no address).
pub fn inet_addr(name: &CStr, found: &mut [u8]) -> core::result::Result<u32, c_int> {
    let mut addr = 0u32;
    // SAFETY: `name` is NUL-terminated; `found` is writable for its length,
    // which strscpy() does not exceed (writing nothing for 0); `addr` is a
    // live u32. All outlive the call, which keeps none of them.
    let rc = unsafe {
        bindings::lnet_inet_addr(
            name.as_ptr().cast(),
            found.as_mut_ptr().cast(),
            found.len(),
            &mut addr,
        )
    };
    match rc {
        0 => Ok(addr),
        e => Err(e),
    }
}

/// Fills `addrs` with the first IPv4 address (host order) of each
/// interface that is up and not loopback (`lnet_inet_addrs`), as many as
/// fit; returns how many it wrote.
pub fn inet_addrs(addrs: &mut [u32]) -> usize {
    let max = c_int::try_from(addrs.len()).unwrap_or(c_int::MAX);
    // SAFETY: `addrs` is writable for `max` (at most its length) addresses,
    // the most the call writes; it keeps no pointer.
    let n = unsafe { bindings::lnet_inet_addrs(addrs.as_mut_ptr(), max) };
    usize::try_from(n).unwrap_or(0).min(addrs.len())
}

/// Whether the lnet_lnd_timeout file ([`LndTimeoutFile`]) exists.
static LND_TIMEOUT_FILE: AtomicBool = AtomicBool::new(false);

/// debugfs lnet/lnet_lnd_timeout (lnet_debugfs.c), in libcfs's lnet/ when
/// Lustre's libcfs.ko is loaded, in our own otherwise; gone when dropped.
///
/// # Invariants
///
/// Exists only once `lnet_debugfs_init` has succeeded, and only one at a
/// time (`LND_TIMEOUT_FILE` is set while it lives).
pub struct LndTimeoutFile(());

impl LndTimeoutFile {
    /// Shows `value`. `Err` holds the errno of `lnet_debugfs_init`, or
    /// `-EBUSY` if the file exists already.
    pub fn new(value: &'static AtomicU32) -> core::result::Result<Self, c_int> {
        if LND_TIMEOUT_FILE.swap(true, Ordering::AcqRel) {
            return Err(EBUSY.to_errno());
        }
        // SAFETY: `value` is `'static`, so valid until `lnet_debugfs_fini`,
        // and `AtomicU32` has the layout of `u32`; only this instance calls
        // init (the flag is now ours).
        let rc = unsafe { lnet_debugfs_init(value.as_ptr()) };
        if rc != 0 {
            LND_TIMEOUT_FILE.store(false, Ordering::Release);
            return Err(rc);
        }
        // INVARIANT: `lnet_debugfs_init` succeeded; the flag is set.
        Ok(LndTimeoutFile(()))
    }
}

impl Drop for LndTimeoutFile {
    fn drop(&mut self) {
        // SAFETY: by the type invariant `lnet_debugfs_init` succeeded, and
        // this is the one instance, dropped once.
        unsafe { lnet_debugfs_fini() };
        LND_TIMEOUT_FILE.store(false, Ordering::Release);
    }
}

/// Whether /dev/lnet is registered ([`DevRegistration`]).
static DEV_REGISTERED: AtomicBool = AtomicBool::new(false);

/// /dev/lnet (lnet_dev.c's static misc device) registered while this
/// lives.
///
/// # Invariants
///
/// Exists only once `lnet_dev_register` has succeeded, and only one at a
/// time (`DEV_REGISTERED` is set while it lives).
pub struct DevRegistration(());

impl DevRegistration {
    /// Registers the device; `EBUSY` if it is registered already.
    pub fn new() -> Result<Self> {
        if DEV_REGISTERED.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        // SAFETY: registers the static misc device, which is not registered
        // (the flag was clear and is now ours).
        let r = kernel::error::to_result(unsafe { lnet_dev_register() });
        if let Err(e) = r {
            DEV_REGISTERED.store(false, Ordering::Release);
            return Err(e);
        }
        // INVARIANT: registered above; the flag is set.
        Ok(DevRegistration(()))
    }
}

impl Drop for DevRegistration {
    fn drop(&mut self) {
        // SAFETY: registered (the type invariant) by this one instance,
        // deregistered once.
        unsafe { lnet_dev_deregister() };
        DEV_REGISTERED.store(false, Ordering::Release);
    }
}

/// `struct nid_update_info` (include/linux/lnet/lib-lnet.h), made and
/// freed in C (lnet_nid_update.c).
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct nid_update_info {
    _private: [u8; 0],
}

/// One NID update for the upper layers' callbacks, owned.
///
/// # Invariants
///
/// `self.0` came from `lnet_nui_new` and is freed only by `drop`.
pub struct Nui(NonNull<nid_update_info>);

// SAFETY: a heap object only this owner reaches.
unsafe impl Send for Nui {}

impl Nui {
    /// The update for `net` with `nids` (none: the net is gone); `None`
    /// when out of memory or with more NIDs than a `c_uint` counts.
    pub fn new(net: u32, nids: &[bindings::lnet_nid]) -> Option<Nui> {
        let count = c_uint::try_from(nids.len()).ok()?;
        // SAFETY: `nids` holds `count` NIDs, which the call copies.
        let p = unsafe { lnet_nui_new(net, nids.as_ptr(), count) };
        // INVARIANT: from lnet_nui_new, freed only by `drop`.
        NonNull::new(p).map(Nui)
    }

    /// The record, to pass to a callback: valid while `self` lives.
    pub fn as_ptr(&self) -> *mut nid_update_info {
        self.0.as_ptr()
    }
}

impl Drop for Nui {
    fn drop(&mut self) {
        // SAFETY: from lnet_nui_new and not freed yet (the type invariant).
        unsafe { lnet_nui_free(self.0.as_ptr()) };
    }
}
