// SPDX-License-Identifier: GPL-2.0

//! Argument types of the C functions our modules export: what a C caller
//! promises about a pointer it passes, carried by the type, so that the
//! exported function's body can stay safe.
//!
//! A type here has no Rust constructor: a value is only ever received from
//! C, as an argument, and is borrowed for that call (its lifetime is the
//! call's). Buffers that come with a separate length cannot be one
//! argument type; [`bytes`], [`bytes_mut`] and [`text`] turn such a pair
//! into a slice, in one `unsafe` block at the export that receives it.

use core::ffi::CStr;
use core::marker::PhantomData;
use kernel::ffi::c_char;

/// A C string argument (`const char *`).
///
/// # Invariants
///
/// The pointer is null or points to a NUL-terminated string that stays
/// readable and unchanged for `'a` (the call that received it): that is the
/// C caller's contract for every exported function taking this type. No
/// Rust code makes one; it is neither `Copy` nor `Clone`, nor `Send`.
#[repr(transparent)]
pub struct CStrArg<'a>(*const c_char, PhantomData<&'a CStr>);

impl<'a> CStrArg<'a> {
    /// The string, or `None` for a null pointer.
    pub fn get(&self) -> Option<&'a CStr> {
        if self.0.is_null() {
            return None;
        }
        // SAFETY: non-null, so by the type invariant a NUL-terminated string
        // readable and unchanged for `'a`.
        Some(unsafe { CStr::from_ptr(self.0.cast()) })
    }

    /// The string as UTF-8, or `None` for a null pointer or other bytes.
    pub fn to_str(&self) -> Option<&'a str> {
        self.get()?.to_str().ok()
    }
}

/// The `len` bytes at `p`, or `None` for a null `p`.
///
/// # Safety
///
/// A non-null `p` points to `len` readable bytes that stay unchanged for
/// `'a`.
pub unsafe fn bytes<'a>(p: *const u8, len: usize) -> Option<&'a [u8]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is non-null, so by # Safety it points to `len` readable
    // bytes that stay unchanged for `'a`.
    Some(unsafe { core::slice::from_raw_parts(p, len) })
}

/// The `len` bytes at `p` to write, or `None` for a null `p`.
///
/// # Safety
///
/// A non-null `p` points to `len` writable bytes that nothing else reads or
/// writes during `'a`.
pub unsafe fn bytes_mut<'a>(p: *mut u8, len: usize) -> Option<&'a mut [u8]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is non-null, so by # Safety it points to `len` writable
    // bytes that only the returned slice uses during `'a`.
    Some(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// A C output buffer of `len` bytes, or `None` if `buf` is null or `len`
/// is not positive.
///
/// # Safety
///
/// A non-null `buf` with a positive `len` points to `len` writable bytes
/// that nothing else reads or writes during `'a`.
pub unsafe fn out_buf<'a, L: TryInto<usize>>(buf: *mut c_char, len: L) -> Option<&'a mut [u8]> {
    let n = len.try_into().ok().filter(|n| *n > 0)?;
    // SAFETY: a positive `len` (that is `n`): by # Safety a non-null `buf`
    // points to `n` writable bytes that only the slice uses during `'a`.
    unsafe { bytes_mut(buf.cast(), n) }
}

/// The bytes of a C string argument with a length, as `kstrndup` reads
/// them: up to `len` (all of it when `len` is negative, as `kstrndup` reads
/// a huge size) or up to its NUL, whichever comes first; `None` for null.
///
/// # Safety
///
/// A non-null `s` points to `len` readable bytes, or to fewer followed by a
/// NUL, that stay unchanged for `'a`.
pub unsafe fn text<'a>(s: *const c_char, len: i32) -> Option<&'a [u8]> {
    if s.is_null() {
        return None;
    }
    let s = s.cast::<u8>();
    let max = usize::try_from(len).unwrap_or(usize::MAX);
    let mut n = 0;
    // SAFETY: by # Safety `s` has `len` readable bytes or a NUL before them,
    // and the loop stops at the first NUL or at `len`: every byte it reads
    // is readable.
    while n < max && unsafe { s.add(n).read() } != 0 {
        n += 1;
    }
    // SAFETY: the `n` bytes read above are readable and stay unchanged for
    // `'a` (# Safety).
    Some(unsafe { core::slice::from_raw_parts(s, n) })
}

/// An MD description argument (`const struct lnet_md *`) of `LNetMDAttach`
/// and `LNetMDBind`.
///
/// # Invariants
///
/// The pointer is null or points to a `struct lnet_md` readable and
/// unchanged for `'a` (the call that received it), whose `umd_start` is
/// null or, when `umd_length` is not zero:
/// - without `LNET_MD_KIOV` in `umd_options`, points to `umd_length` bytes
///   of kernel memory (lowmem or vmalloc);
/// - with `LNET_MD_KIOV`, points to an array of `umd_length` aligned,
///   initialised `struct bio_vec`, unchanged for `'a`, whose pages stay
///   valid until the MD made from it is unlinked;
///
/// that memory staying valid until the MD made from it is unlinked: the C
/// caller's contract, as in Lustre's `LNetMDAttach`. No Rust code makes
/// one (the fields are private and there is no constructor); it is neither
/// `Copy` nor `Clone`, nor `Send`.
#[cfg(kapi_lnet)]
#[repr(transparent)]
pub struct MdArg<'a>(
    *const crate::kapi::bindings::lnet_md,
    PhantomData<&'a crate::kapi::bindings::lnet_md>,
);

#[cfg(kapi_lnet)]
impl<'a> MdArg<'a> {
    /// The description, or `None` for a null pointer.
    pub fn get(&self) -> Option<&'a crate::kapi::bindings::lnet_md> {
        // SAFETY: by the type invariant the pointer is null or points to a
        // `struct lnet_md` readable and unchanged for `'a`.
        unsafe { self.0.as_ref() }
    }

    /// The caller's fragments of a `LNET_MD_KIOV` MD: its `umd_length`
    /// `struct bio_vec` at `umd_start`. `None` for a null description, one
    /// without `LNET_MD_KIOV`, or a null start with a non-zero length.
    pub fn kiov(&self) -> Option<&'a [crate::kapi::kiov::BioVec]> {
        let umd = self.get()?;
        if umd.umd_options & crate::kapi::bindings::LNET_MD_KIOV == 0 {
            return None;
        }
        let n = umd.umd_length as usize;
        if n == 0 {
            return Some(&[]);
        }
        let p = umd.umd_start.cast::<crate::kapi::kiov::BioVec>();
        if p.is_null() {
            return None;
        }
        // SAFETY: with LNET_MD_KIOV, a non-null `umd_start` points to
        // `umd_length` (`n`, positive) `struct bio_vec` valid for longer than
        // `'a` (the type invariant); `n` fragments of 16 bytes fit `isize`.
        Some(unsafe { core::slice::from_raw_parts(p, n) })
    }

    /// Appends the page fragments of a plain MD's memory, the `umd_length`
    /// bytes at `umd_start`, to `out`. `EINVAL` for a null description, one
    /// with `LNET_MD_KIOV`, or a null start with a non-zero length.
    pub fn push_kvaddr(
        &self,
        out: &mut kernel::alloc::KVec<crate::kapi::kiov::BioVec>,
    ) -> kernel::error::Result {
        use kernel::error::code::EINVAL;
        let umd = self.get().ok_or(EINVAL)?;
        if umd.umd_options & crate::kapi::bindings::LNET_MD_KIOV != 0
            || (umd.umd_start.is_null() && umd.umd_length != 0)
        {
            return Err(EINVAL);
        }
        // SAFETY: without LNET_MD_KIOV, `umd_start` names `umd_length` bytes
        // of kernel memory valid until the MD is unlinked (the type
        // invariant), which is as long as the fragments are used.
        unsafe {
            crate::kapi::kiov::push_kvaddr_range(
                out,
                umd.umd_start as usize,
                umd.umd_length as usize,
            )
        }
    }
}

/// An LND's operations table argument (`const struct lnet_lnd *`) of
/// `lnet_register_lnd` and `lnet_unregister_lnd`.
///
/// # Invariants
///
/// The pointer is null or points to a `struct lnet_lnd` that its LND keeps
/// at that address, unwritten, from its registration until
/// `lnet_unregister_lnd` for it has returned (an LND's module unregisters
/// it as it unloads, and holds a reference on itself for each NI it runs),
/// and whose operations follow include/linux/lnet/lnd.h: callable from any
/// thread, with an NI LNet started on it and the messages, descriptors and
/// fragments LNet gives them. That is the C caller's contract. No Rust code
/// makes one; it is neither `Copy` nor `Clone`, nor `Send`.
#[cfg(kapi_lnet)]
#[repr(transparent)]
pub struct LndArg(*const crate::kapi::bindings::lnet_lnd);

#[cfg(kapi_lnet)]
impl LndArg {
    /// The table's address, null or as the type invariant says.
    pub fn as_ptr(&self) -> *const crate::kapi::bindings::lnet_lnd {
        self.0
    }
}
