// SPDX-License-Identifier: GPL-2.0

//! Hashing through the kernel crypto API: a hash in progress
//! ([`HashRequest`], the kernel's `struct ahash_request` with its
//! transform, which C callers use as a [`Hash`]), the lock and idle wait of
//! lnet.ko's speed tests, and a 32-bit checksum of ours registered as a kernel hash
//! algorithm ([`Checksum32Registration`]).
//!
//! The C helpers are in crypto_helpers.c, which the module includes from
//! one of its C files.

use super::bindings;
use core::ffi::{c_int, c_uint, CStr};
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::types::Opaque;

// crypto_helpers.c, not in the generated bindings.
extern "C" {
    fn kapi_hash_speed_lock();
    fn kapi_hash_speed_unlock();
    fn kapi_kthread_wait_stop();
}

/// A hash in progress: a synchronous `ahash_request` and the transform it
/// was made on. C callers hold it as the request's pointer, and give it back
/// as an argument of this type to be freed (Lustre's
/// `cfs_crypto_hash_final`).
///
/// # Invariants
///
/// `req` was returned by `kapi_ahash_request_new` on a transform that
/// nothing else frees; this object owns both and frees them when dropped.
#[repr(transparent)]
pub struct HashRequest {
    req: NonNull<Hash>,
}

// SAFETY: a request belongs to whoever holds it; the crypto API keeps no
// reference to the thread that made it.
unsafe impl Send for HashRequest {}

impl HashRequest {
    /// A hash of the algorithm the crypto API calls `name`, keyed with
    /// `key` if given, initialised and ready for updates.
    pub fn new(name: &CStr, key: Option<&[u8]>) -> Result<Self> {
        // Synchronous implementations only: the caller's thread computes
        // the hash before each call returns.
        // SAFETY: a NUL-terminated name; may sleep, as callers may.
        let tfm = unsafe {
            bindings::crypto_alloc_ahash(name.as_ptr().cast(), 0, bindings::CRYPTO_ALG_ASYNC)
        };
        let tfm = kernel::error::from_err_ptr(tfm)?;
        // SAFETY: `tfm` is the transform just allocated.
        let req = unsafe { bindings::kapi_ahash_request_new(tfm) };
        let Some(req) = NonNull::new(req) else {
            // SAFETY: nothing else holds `tfm`.
            unsafe { bindings::kapi_crypto_free_ahash(tfm) };
            return Err(ENOMEM);
        };
        // INVARIANT: a new request on a transform only it uses.
        let hash = HashRequest { req: req.cast() };
        if let Some(key) = key {
            let len = u32::try_from(key.len()).map_err(|_| EINVAL)?;
            // SAFETY: `key` is `len` readable bytes; the transform is ours
            // and no hash is running on it.
            kernel::error::to_result(unsafe {
                bindings::crypto_ahash_setkey(tfm, key.as_ptr(), len)
            })?;
        }
        // SAFETY: a live request (type invariant).
        kernel::error::to_result(unsafe { bindings::crypto_ahash_init(hash.raw()) })?;
        Ok(hash)
    }

    /// Hands the request to a C caller, who uses it as a [`Hash`] and gives
    /// it back as a `HashRequest` argument.
    pub fn into_raw(self) -> *mut bindings::ahash_request {
        ManuallyDrop::new(self).raw()
    }
}

impl core::ops::Deref for HashRequest {
    type Target = Hash;

    fn deref(&self) -> &Hash {
        // SAFETY: a live request (type invariant), borrowed no longer than
        // `self`, which frees it.
        unsafe { self.req.as_ref() }
    }
}

impl Drop for HashRequest {
    fn drop(&mut self) {
        // SAFETY: the request and its transform are ours (type invariant)
        // and no longer used.
        unsafe { bindings::kapi_ahash_request_free(self.raw()) };
    }
}

/// The request of a [`HashRequest`], to hash with: what C callers pass to
/// update a hash they hold (Lustre's `cfs_crypto_hash_update`).
///
/// # Invariants
///
/// Only exists as the request of a live `HashRequest`: borrowed from one,
/// or received by reference from C, which holds one from
/// [`HashRequest::into_raw`] and has not given it back. No Rust code makes
/// one. Not `Sync`: one thread at a time hashes with it.
#[repr(transparent)]
pub struct Hash(Opaque<bindings::ahash_request>);

impl Hash {
    fn raw(&self) -> *mut bindings::ahash_request {
        self.0.get()
    }

    /// The digest size in bytes.
    pub fn digest_size(&self) -> usize {
        // SAFETY: a live request (type invariant).
        unsafe { bindings::kapi_ahash_digestsize(self.raw()) as usize }
    }

    /// Adds `len` bytes of `page` from `offset` to the hash.
    ///
    /// # Safety
    ///
    /// `page` is a valid page, and the `len` bytes from `offset` lie in it
    /// or in the pages of its compound page that follow it.
    pub unsafe fn update_page(&self, page: *mut bindings::page, offset: u32, len: u32) -> Result {
        // SAFETY: a live request (type invariant), used by this thread only
        // (not Sync); the page range is the caller's promise. The hash is
        // synchronous: the scatterlist on the helper's stack is done with
        // when it returns.
        kernel::error::to_result(unsafe {
            bindings::kapi_ahash_update_page(self.raw(), page, offset, len)
        })
    }

    /// Adds `data` to the hash. It may be anywhere in kernel memory (the
    /// linear map, vmalloc space, a module, a stack): it is fed page by
    /// page, which a single scatterlist entry could not do.
    pub fn update(&self, data: &[u8]) -> Result {
        let page_size = kernel::page::PAGE_SIZE;
        let mut addr = data.as_ptr() as usize;
        let mut left = data.len();
        while left > 0 {
            let offset = addr % page_size;
            let n = (page_size - offset).min(left);
            // SAFETY: `addr` is inside `data`, which is kernel memory.
            let page = unsafe { bindings::lnet_kvaddr_to_page(addr as _) };
            if page.is_null() {
                return Err(EFAULT);
            }
            // SAFETY: `n` bytes from `offset` are the part of `data` that
            // lies in this page, borrowed for the whole call.
            unsafe { self.update_page(page, offset as u32, n as u32) }?;
            addr += n;
            left -= n;
        }
        Ok(())
    }

    /// Writes the digest to the start of `out`; returns its size.
    /// `EOVERFLOW` if `out` is shorter than the digest.
    pub fn finish(&self, out: &mut [u8]) -> Result<usize> {
        let size = self.digest_size();
        if out.len() < size {
            return Err(eoverflow());
        }
        // SAFETY: a live request (type invariant), used by this thread only;
        // `out` holds the `size` bytes the digest takes.
        kernel::error::to_result(unsafe {
            bindings::kapi_ahash_final(self.raw(), out.as_mut_ptr())
        })?;
        Ok(size)
    }
}

/// Held while a hash speed test runs, so that tests run one at a time: a
/// mutex of crypto_helpers.c, which lives as long as the module.
///
/// Not `Send`: a mutex is released by the task that took it.
pub struct SpeedTestGuard(PhantomData<*mut ()>);

impl SpeedTestGuard {
    /// Takes the lock; it may sleep.
    pub fn lock() -> Self {
        // SAFETY: a static mutex; released by drop, in this task.
        unsafe { kapi_hash_speed_lock() };
        SpeedTestGuard(PhantomData)
    }
}

impl Drop for SpeedTestGuard {
    fn drop(&mut self) {
        // SAFETY: taken by `lock`, in this task (not Send).
        unsafe { kapi_hash_speed_unlock() };
    }
}

/// Sleeps until the calling kernel thread is asked to stop
/// (`kthread_stop`); returns at once in any other task. For a speed test
/// thread done with its work.
pub fn wait_for_stop() {
    // SAFETY: the helper checks that the caller is a kernel thread.
    unsafe { kapi_kthread_wait_stop() };
}

/// `-EOVERFLOW`, which the 6.12 kernel crate does not name.
fn eoverflow() -> Error {
    Error::from_errno(-(kernel::bindings::EOVERFLOW as i32))
}

/// A 32-bit checksum with a 32-bit key (its starting value), as the
/// kernel crypto API offers crc32 and crc32c: the key and the digest are
/// the 4 bytes of a native-endian `u32`.
pub trait Checksum32 {
    /// The algorithm's name, which callers allocate it by.
    const NAME: &'static CStr;
    /// The implementation's name.
    const DRIVER_NAME: &'static CStr;
    /// Among implementations of one name, the highest priority wins.
    const PRIORITY: i32;
    /// The starting value when no key is set.
    const INIT: u32;
    /// Continues the checksum `sum` over `data`.
    fn update(sum: u32, data: &[u8]) -> u32;
}

/// The key of a transform (its context).
///
/// # Safety
///
/// `tfm` is a transform of an algorithm registered by
/// [`Checksum32Registration`], whose context is one `u32`.
unsafe fn tfm_key(tfm: *mut bindings::crypto_shash) -> *mut u32 {
    // SAFETY: `tfm` is a transform of an algorithm Checksum32Registration
    // registered (# Safety), so a live transform whose context is one u32.
    unsafe { bindings::kapi_shash_tfm_ctx(tfm) }.cast()
}

/// The running checksum of a descriptor (its context).
///
/// # Safety
///
/// `desc` is a descriptor of an algorithm registered by
/// [`Checksum32Registration`], whose descriptor context is one `u32`.
unsafe fn desc_sum(desc: *mut bindings::shash_desc) -> *mut u32 {
    // SAFETY: `desc` is a descriptor of an algorithm Checksum32Registration
    // registered (# Safety), so a live descriptor whose context is one u32.
    unsafe { bindings::kapi_shash_desc_ctx(desc) }.cast()
}

/// A new transform starts from the algorithm's own starting value.
///
/// # Safety
///
/// Called by the crypto API with a transform of the algorithm
/// [`Checksum32Registration`] registered for `T`; so are the callbacks
/// below, with its transforms and descriptors.
unsafe extern "C" fn cksum_init_tfm<T: Checksum32>(tfm: *mut bindings::crypto_shash) -> c_int {
    // SAFETY: the crypto API passes a transform of our algorithm; its
    // context is one suitably aligned u32 (cra_ctxsize).
    unsafe { tfm_key(tfm).write(T::INIT) };
    0
}

/// Sets the starting value: exactly 4 bytes, a native-endian `u32`.
///
/// # Safety
///
/// As for [`cksum_init_tfm`]; `key` points to `keylen` bytes.
unsafe extern "C" fn cksum_setkey(
    tfm: *mut bindings::crypto_shash,
    key: *const u8,
    keylen: c_uint,
) -> c_int {
    if keylen != 4 || key.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: the crypto API passes `keylen` (4) readable bytes, with no
    // alignment promised, and a transform of our algorithm.
    unsafe {
        let k = key.cast::<[u8; 4]>().read_unaligned();
        tfm_key(tfm).write(u32::from_ne_bytes(k));
    }
    0
}

/// A new checksum starts from the transform's key.
///
/// # Safety
///
/// As for [`cksum_init_tfm`].
unsafe extern "C" fn cksum_init(desc: *mut bindings::shash_desc) -> c_int {
    // SAFETY: the crypto API passes a descriptor of our algorithm, bound
    // to one of its transforms.
    unsafe { desc_sum(desc).write(tfm_key((*desc).tfm).read()) };
    0
}

/// Continues the checksum over `len` bytes at `data`.
///
/// # Safety
///
/// As for [`cksum_init_tfm`]; `data` points to `len` bytes.
unsafe extern "C" fn cksum_update<T: Checksum32>(
    desc: *mut bindings::shash_desc,
    data: *const u8,
    len: c_uint,
) -> c_int {
    if len == 0 || data.is_null() {
        return 0;
    }
    // SAFETY: the crypto API passes `len` readable bytes at `data` (mapped
    // for the call) and a descriptor of our algorithm.
    unsafe {
        let data = core::slice::from_raw_parts(data, len as usize);
        let sum = desc_sum(desc);
        sum.write(T::update(sum.read(), data));
    }
    0
}

/// Writes the checksum to `out`, as a native-endian `u32`.
///
/// # Safety
///
/// As for [`cksum_init_tfm`]; `out` has room for 4 bytes.
unsafe extern "C" fn cksum_final(desc: *mut bindings::shash_desc, out: *mut u8) -> c_int {
    // SAFETY: the crypto API passes a descriptor of our algorithm and
    // room for the digest (4 bytes, maybe unaligned) at `out`.
    unsafe {
        let sum = desc_sum(desc).read();
        out.cast::<[u8; 4]>().write_unaligned(sum.to_ne_bytes());
    }
    0
}

/// Copies `name` into a crypto API name field, NUL-terminated.
fn set_name(field: &mut [kernel::ffi::c_char], name: &CStr) -> Result {
    let bytes = name.to_bytes_with_nul();
    // The kernel's `char` is unsigned (-funsigned-char): bytes as they are.
    let dst = field.get_mut(..bytes.len()).ok_or(EINVAL)?;
    dst.copy_from_slice(bytes);
    Ok(())
}

/// A [`Checksum32`] registered as a kernel hash algorithm ("shash"),
/// unregistered when dropped. Callers reach it by name through the crypto
/// API (`crypto_alloc_ahash`).
///
/// Its transforms hold no reference on the module that registered it (as
/// for Lustre's adler32): one taken by the module's own speed test would
/// make an `rmmod` that comes at that moment fail with `EBUSY`. The
/// module's users are the modules that link against it, which are gone
/// before it unloads; what they allocated they have freed.
///
/// # Invariants
///
/// `alg` is registered with the crypto API for this object's whole life.
pub struct Checksum32Registration {
    alg: Pin<KBox<Opaque<bindings::shash_alg>>>,
}

// SAFETY: the registration is only unregistered, from whichever thread
// drops it; the crypto API serialises its own use of `alg`.
unsafe impl Send for Checksum32Registration {}
// SAFETY: no method reads or writes `alg` through a shared reference.
unsafe impl Sync for Checksum32Registration {}

impl Checksum32Registration {
    /// Registers `T`.
    pub fn register<T: Checksum32>() -> Result<Self> {
        // All else zero (bindgen's default): finup, digest, export and
        // import are the crypto API's generic ones; no other flag.
        let mut alg = bindings::shash_alg {
            init: Some(cksum_init),
            update: Some(cksum_update::<T>),
            final_: Some(cksum_final),
            setkey: Some(cksum_setkey),
            init_tfm: Some(cksum_init_tfm::<T>),
            descsize: 4,
            ..Default::default()
        };
        let mut halg = bindings::hash_alg_common {
            digestsize: 4,
            ..Default::default()
        };
        let base = &mut halg.base;
        set_name(&mut base.cra_name, T::NAME)?;
        set_name(&mut base.cra_driver_name, T::DRIVER_NAME)?;
        base.cra_priority = T::PRIORITY;
        // Keyed, but a key is optional: without one a hash starts at INIT.
        base.cra_flags = bindings::CRYPTO_ALG_OPTIONAL_KEY;
        base.cra_blocksize = 1;
        base.cra_ctxsize = 4;
        alg.__bindgen_anon_1.halg = halg;
        let alg = KBox::pin(Opaque::new(alg), GFP_KERNEL)?;
        // SAFETY: a complete algorithm in memory that stays put (pinned)
        // until it is unregistered in drop; the crypto API may write to it.
        kernel::error::to_result(unsafe { bindings::crypto_register_shash(alg.get()) })?;
        // INVARIANT: registered just now.
        Ok(Checksum32Registration { alg })
    }
}

impl Drop for Checksum32Registration {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant), unregistered once.
        unsafe { bindings::crypto_unregister_shash(self.alg.get()) };
    }
}
