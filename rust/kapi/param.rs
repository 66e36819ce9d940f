// SPDX-License-Identifier: GPL-2.0

//! Module parameters. Only C can place entries in the `__param` section, so
//! each module registers its parameters in a small C file with one shared
//! `kernel_param_ops` whose `.set` and `.get` are Rust functions; this file
//! turns the raw callback arguments into safe values.

use core::fmt;
use core::marker::PhantomData;
use kernel::bindings::kernel_param;
use kernel::ffi::c_char;
use kernel::str::CStr;
use kernel::ThisModule;

/// The module's `kernel_param_lock`, held: sysfs holds the same lock around
/// every `.set` of the module's parameters, so while this guard lives no
/// setter runs, and a setter that runs afterwards sees what was done under
/// it. Module exit takes it to withdraw what setters may reach.
pub struct ParamLock {
    module: &'static ThisModule,
}

impl ParamLock {
    /// Waits for any setter of `module`'s parameters to finish and keeps
    /// others out until the guard is dropped. May sleep.
    pub fn lock(module: &'static ThisModule) -> Self {
        // SAFETY: `module` is the live module this code belongs to.
        unsafe { kernel::bindings::kernel_param_lock(module.as_ptr()) };
        // INVARIANT: the lock is held until `drop`.
        ParamLock { module }
    }
}

impl Drop for ParamLock {
    fn drop(&mut self) {
        // SAFETY: taken in `lock` by this guard, and not released since.
        unsafe { kernel::bindings::kernel_param_unlock(self.module.as_ptr()) };
    }
}

/// What a `.set` callback was asked to do.
pub struct SetRequest<'a> {
    /// The parameter's name, e.g. `lnet_retry_count`.
    pub name: &'a [u8],
    /// The text written; `None` when insmod named the parameter alone.
    pub value: Option<&'a [u8]>,
}

/// Reads the arguments of a `kernel_param_ops.set` callback.
///
/// # Safety
///
/// `val` is null or a NUL-terminated string and `kp` points to a registered
/// `kernel_param`; both stay valid for `'a` (the duration of the callback).
pub unsafe fn set_request<'a>(val: *const c_char, kp: *const kernel_param) -> SetRequest<'a> {
    // SAFETY: `kp` points to a registered `kernel_param`, valid for `'a`
    // (# Safety), as `param_name` asks.
    let name = unsafe { param_name(kp) };
    let value = if val.is_null() {
        None
    } else {
        // SAFETY: `val` is non-null here, so by # Safety a NUL-terminated
        // string valid for `'a`.
        Some(unsafe { CStr::from_char_ptr(val) }.as_bytes())
    };
    SetRequest { name, value }
}

/// The name of a registered parameter.
///
/// # Safety
///
/// `kp` points to a registered `kernel_param`, valid for `'a`.
pub unsafe fn param_name<'a>(kp: *const kernel_param) -> &'a [u8] {
    // SAFETY: a registered parameter has a non-null, NUL-terminated name in
    // the module's read-only data.
    unsafe { CStr::from_char_ptr((*kp).name) }.as_bytes()
}

/// A registered parameter, as the kernel hands it to `.set` and `.get`:
/// take it as `Option<&KernelParam>` in the callback's signature.
///
/// # Invariants
///
/// A `kernel_param` the kernel registered for this module: its name is a
/// non-null, NUL-terminated string in the module's read-only data. Rust
/// code cannot make one (the field is private); it only comes from C.
#[repr(transparent)]
pub struct KernelParam(kernel_param);

impl KernelParam {
    /// The parameter's name, e.g. `lnet_retry_count`.
    pub fn name(&self) -> &[u8] {
        // SAFETY: a registered parameter's name is non-null, NUL-terminated
        // and lives with the module (# Invariants), so as long as `self`.
        unsafe { CStr::from_char_ptr(self.0.name) }.as_bytes()
    }
}

/// The value a `.set` callback is given: take it as `ParamValue<'_>` in
/// the callback's signature (a `const char *` in C).
///
/// # Invariants
///
/// Null, or a NUL-terminated string valid for `'a`, the callback. Rust code
/// cannot make one (the fields are private); it only comes from C.
#[repr(transparent)]
pub struct ParamValue<'a>(*const c_char, PhantomData<&'a CStr>);

impl<'a> ParamValue<'a> {
    /// The text written; `None` when insmod named the parameter alone.
    pub fn get(&self) -> Option<&'a [u8]> {
        if self.0.is_null() {
            return None;
        }
        // SAFETY: non-null here, so a NUL-terminated string valid for `'a`
        // (# Invariants).
        Some(unsafe { CStr::from_char_ptr(self.0) }.as_bytes())
    }

    /// What the callback was asked to do for `kp`.
    pub fn request(&self, kp: &'a KernelParam) -> SetRequest<'a> {
        SetRequest {
            name: kp.name(),
            value: self.get(),
        }
    }
}

/// The buffer a `.get` callback fills: take it as `ParamPage<'_>` in the
/// callback's signature (a `char *` in C).
///
/// # Invariants
///
/// Points to `PAGE_BUF_LEN` writable bytes, valid and not otherwise
/// accessed for `'a`, the callback. Rust code cannot make one (the fields
/// are private); it only comes from C.
#[repr(transparent)]
pub struct ParamPage<'a>(*mut c_char, PhantomData<&'a mut [u8]>);

impl<'a> ParamPage<'a> {
    /// A writer over the page; `None` if the kernel passed no buffer.
    pub fn writer(self) -> Option<PageWriter<'a>> {
        if self.0.is_null() {
            return None;
        }
        // SAFETY: non-null here, so `PAGE_BUF_LEN` writable bytes, ours for
        // `'a` (# Invariants); `self` is consumed, so this is the only use.
        Some(unsafe { PageWriter::new(self.0) })
    }
}

/// Formats into the page a `kernel_param_ops.get` callback fills, keeping
/// the last byte for the NUL sysfs does not need but `show` callers expect.
pub struct PageWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

/// Size of the buffer handed to `.get`.
pub const PAGE_BUF_LEN: usize = 4096;

impl<'a> PageWriter<'a> {
    /// Wraps the buffer of a `.get` callback.
    ///
    /// # Safety
    ///
    /// `buf` points to `PAGE_BUF_LEN` writable bytes, valid and not otherwise
    /// accessed for `'a`.
    pub unsafe fn new(buf: *mut c_char) -> Self {
        // SAFETY: `buf` points to `PAGE_BUF_LEN` writable bytes, valid and
        // not otherwise accessed for `'a` (# Safety): the slice is their
        // only user.
        let buf = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), PAGE_BUF_LEN) };
        PageWriter { buf, len: 0 }
    }

    /// Bytes written so far, the return value of `.get`.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Write for PageWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        // Keep one byte for the terminating NUL.
        if end >= self.buf.len() {
            return Err(fmt::Error);
        }
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        if let Some(nul) = self.buf.get_mut(end) {
            *nul = 0;
        }
        self.len = end;
        Ok(())
    }
}

#[cfg(kapi_lnet)]
extern "C" {
    fn lnet_param_networks() -> *const c_char;
    fn lnet_param_ip2nets() -> *const c_char;
    fn lnet_param_routes() -> *const c_char;
    fn lnet_param_forwarding() -> *const c_char;
}

/// A charp parameter of lnet.ko's (lnet_params.c), null for unset.
///
/// # Safety
///
/// `p` is null or a charp parameter of mode 0444: NUL-terminated, set
/// before the module runs and never changed while it is loaded.
#[cfg(kapi_lnet)]
unsafe fn load_time_str(p: *const c_char) -> Option<&'static CStr> {
    // SAFETY: null, or a NUL-terminated string that stays as it is while
    // the module (and this code) is loaded (# Safety).
    (!p.is_null()).then(|| unsafe { CStr::from_char_ptr(p) })
}

/// lnet.ko's `networks` parameter, if set.
#[cfg(kapi_lnet)]
pub fn lnet_networks() -> Option<&'static CStr> {
    // SAFETY: lnet_params.c returns its `networks` charp, mode 0444.
    unsafe { load_time_str(lnet_param_networks()) }
}

/// lnet.ko's `ip2nets` parameter, if set.
#[cfg(kapi_lnet)]
pub fn lnet_ip2nets() -> Option<&'static CStr> {
    // SAFETY: lnet_params.c returns its `ip2nets` charp, mode 0444.
    unsafe { load_time_str(lnet_param_ip2nets()) }
}

/// lnet.ko's `routes` parameter, if set.
#[cfg(kapi_lnet)]
pub fn lnet_routes() -> Option<&'static CStr> {
    // SAFETY: lnet_params.c returns its `routes` charp, mode 0444.
    unsafe { load_time_str(lnet_param_routes()) }
}

/// lnet.ko's `forwarding` parameter, if set.
#[cfg(kapi_lnet)]
pub fn lnet_forwarding() -> Option<&'static CStr> {
    // SAFETY: lnet_params.c returns its `forwarding` charp, mode 0444.
    unsafe { load_time_str(lnet_param_forwarding()) }
}
