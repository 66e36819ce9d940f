// SPDX-License-Identifier: GPL-2.0

//! Checksums and digests for upper layers, over the kernel crypto API
//! (include/linux/lnet/lnet_crypto.h): PtlRPC's bulk and message checksums,
//! GSS's keyed digests, and the algorithm speeds obdclass and the OSC pick
//! a checksum by.
//!
//! A hash in progress is the kernel's own `struct ahash_request` (callers
//! may feed it with the crypto API directly). Algorithm numbers, names,
//! default keys and sizes are lnet-core's (`crypto_hash.rs`).
//!
//! Speeds: adler32, crc32 and crc32c are measured when lnet.ko loads (the
//! node is idle then, unlike when the first of many clients connects), the
//! others when first asked for. Lustre measures at load in the loading
//! thread, about 0.75 s; lnet.ko measures in a thread of its own so loading
//! stays fast. `cfs_crypto_hash_speed()` waits for a measurement under
//! way, so callers see the same values either way; only a direct reader of
//! `cfs_crypto_hash_speeds[]` (obdclass's `checksum_speed` file) can find a
//! 0 there in the first second after the load.

use crate::kapi::bindings;
use crate::kapi::crypto::{Checksum32Registration, HashRequest};
use crate::kapi::kthread::{self, Thread};
use crate::kapi::waitq::WaitQueue;
use crate::lnet_core::crypto_hash::{self as ch, HashType};
use core::ffi::{c_int, c_uchar, c_uint, c_void, CStr};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};
use kernel::page::{Page, PAGE_SIZE};
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::Mutex;
use kernel::{c_str, fmt, new_mutex};

/// Each algorithm's speed in MB/s: 0 until measured, then the speed or the
/// negative errno that made it unavailable. Lustre's exported array (C:
/// `int cfs_crypto_hash_speeds[CFS_HASH_ALG_MAX]`; an `AtomicI32` is laid
/// out as an `int`).
#[no_mangle]
#[allow(non_upper_case_globals)]
pub(crate) static cfs_crypto_hash_speeds: [AtomicI32; ch::HASH_ALG_MAX as usize] = [
    AtomicI32::new(0),
    AtomicI32::new(0),
    AtomicI32::new(0),
    AtomicI32::new(0),
    AtomicI32::new(0),
    AtomicI32::new(0),
    AtomicI32::new(0),
    AtomicI32::new(0),
    AtomicI32::new(0),
];

/// What the speed measurements share.
#[pin_data]
struct Speeds {
    /// One measurement at a time, so that they do not slow each other down
    /// and each algorithm is measured once.
    #[pin]
    lock: Mutex<()>,
    /// lnet.ko is unloading: a measurement under way gives up.
    stopping: AtomicBool,
    /// Where the load-time thread waits for its stop, once done.
    #[pin]
    idle: WaitQueue,
}

static SPEEDS: AtomicPtr<Speeds> = AtomicPtr::new(core::ptr::null_mut());

/// The hash algorithms while lnet.ko is loaded: adler32 registered, the
/// load-time speed thread, the measurements' lock.
pub(crate) struct Crypto {
    speeds: Pin<KBox<Speeds>>,
    worker: Option<Thread>,
    adler32: Option<Checksum32Registration>,
}

impl Crypto {
    /// Registers adler32 and starts measuring speeds. Fails only without
    /// memory; an algorithm the kernel lacks is reported by its speed.
    pub(crate) fn new() -> Result<Crypto> {
        let speeds = KBox::pin_init(
            pin_init!(Speeds {
                lock <- new_mutex!((), "lnet_crypto_speed"),
                stopping: AtomicBool::new(false),
                idle <- WaitQueue::new(),
            }),
            GFP_KERNEL,
        )?;
        // The crypto API loads the module of any algorithm it is asked
        // for ("crypto-crc32c"), so nothing is loaded here in advance.
        let adler32 = crate::adler32::register();
        SPEEDS.store((&*speeds as *const Speeds).cast_mut(), Ordering::Release);
        let data = (&*speeds as *const Speeds).cast_mut().cast::<c_void>();
        // SAFETY: `data` is the pinned `Speeds`, which `Crypto` keeps alive until after it has
        // stopped the thread (drop), and the thread returns only once asked to stop.
        let worker = match unsafe { Thread::spawn(c_str!("lnet_crypto"), speed_worker, data) } {
            Ok(t) => Some(t),
            Err(e) => {
                // Each speed is then measured when first asked for.
                pr_warn!("no thread to measure checksum speeds: {:?}\n", e);
                None
            }
        };
        Ok(Crypto {
            speeds,
            worker,
            adler32,
        })
    }
}

impl Drop for Crypto {
    fn drop(&mut self) {
        self.speeds.stopping.store(true, Ordering::Relaxed);
        drop(self.worker.take());
        SPEEDS.store(core::ptr::null_mut(), Ordering::Release);
        // Nothing of ours hashes any more: adler32 can go.
        drop(self.adler32.take());
    }
}

/// The load-time measurements: the algorithms below
/// `CFS_HASH_ALG_SPEED_MAX`, then a wait for the module's exit.
///
/// # Safety
///
/// `data` is a pinned [`Speeds`] that outlives the thread.
unsafe extern "C" fn speed_worker(data: *mut c_void) -> c_int {
    // SAFETY: `data` is the pinned `Speeds` given by `Crypto::new`, alive
    // until this thread has been stopped.
    let speeds = unsafe { &*data.cast::<Speeds>() };
    for alg in ch::HASH_ALG_ADLER32..ch::HASH_ALG_SPEED_MAX {
        if speeds.stopping.load(Ordering::Relaxed) {
            break;
        }
        speed_of(alg, Some(speeds));
    }
    // Nobody wakes `idle`: kthread_stop() wakes the thread itself, and the
    // queue makes a stop between the check and the sleep not lost.
    while !kthread::should_stop() {
        speeds.idle.wait_timeout(60_000, kthread::should_stop);
    }
    0
}

/// The speed of `alg`, measured now if it has not been: under the lock
/// when lnet.ko's state is there (always, for callers from other modules).
fn speed_of(alg: u32, speeds: Option<&Speeds>) -> c_int {
    let Some(slot) = usize::try_from(alg)
        .ok()
        .and_then(|i| cfs_crypto_hash_speeds.get(i))
    else {
        return ENOENT.to_errno();
    };
    if slot.load(Ordering::Acquire) == 0 {
        let stopping = speeds.map(|s| &s.stopping);
        let _guard = speeds.map(|s| s.lock.lock());
        if slot.load(Ordering::Acquire) == 0 {
            if let Some(speed) = performance_test(alg, stopping) {
                slot.store(speed, Ordering::Release);
            }
        }
    }
    slot.load(Ordering::Acquire)
}

/// Hashes 1 MiB rounds, one page of 0xAD bytes at a time, from
/// `cfs_crypto_hash_init` to `cfs_crypto_hash_final` as a caller would,
/// for a quarter of a second; the speed in MB/s, or the errno that stopped
/// it. None if lnet.ko started unloading meanwhile.
fn performance_test(alg: u32, stopping: Option<&AtomicBool>) -> Option<c_int> {
    let stop = || stopping.is_some_and(|s| s.load(Ordering::Relaxed));
    let result = hash_rounds(alg, &stop);
    if stop() {
        return None;
    }
    let name = ch::hash_name(alg);
    Some(match result {
        Ok((rounds, ms)) => {
            let speed = ch::speed_mb_per_s(rounds.saturating_mul(ch::SPEED_TEST_BYTES), ms);
            crate::cdebug!(
                crate::lnet_core::debug::D_INFO,
                "crypto hash {} speed = {} MB/s\n",
                name,
                speed
            );
            speed
        }
        Err(e) => {
            crate::cdebug!(
                crate::lnet_core::debug::D_INFO,
                "crypto hash {} test error: rc = {}\n",
                name,
                e.to_errno()
            );
            e.to_errno()
        }
    })
}

/// The rounds of the speed test done in its time (or until `stop()`), and
/// the milliseconds they took.
fn hash_rounds(alg: u32, stop: &dyn Fn() -> bool) -> Result<(u64, u64)> {
    let page = Page::alloc_page(GFP_KERNEL)?;
    let fill = [0xadu8; 64];
    for off in (0..PAGE_SIZE).step_by(fill.len()) {
        // SAFETY: `fill` is 64 readable bytes; the page is ours alone.
        unsafe { page.write_raw(fill.as_ptr(), off, fill.len()) }?;
    }
    let pages_per_round = (ch::SPEED_TEST_BYTES / PAGE_SIZE as u64).max(1);
    let mut digest = [0u8; ch::DIGEST_SIZE_MAX];
    let mut rounds = 0u64;
    let start = kthread::now_ms();
    let mut now = start;
    while now.saturating_sub(start) < ch::SPEED_TEST_MS && !stop() {
        let mut hash = hash_new(alg, None)?;
        for _ in 0..pages_per_round {
            // SAFETY: a whole page we allocated and keep until the end.
            unsafe { hash.update_page(page.as_ptr().cast(), 0, PAGE_SIZE as u32) }?;
        }
        hash.finish(&mut digest)?;
        rounds += 1;
        // Nothing in the loop sleeps; let others run meanwhile.
        kthread::cond_resched();
        now = kthread::now_ms();
    }
    Ok((rounds, now.saturating_sub(start)))
}

/// A hash of algorithm `alg` ready for updates (`cfs_crypto_hash_alloc`):
/// with a key, the algorithm's HMAC keyed with it; without, the plain
/// algorithm, started from its default key if it has one. A key given
/// with length 0 goes to the plain algorithm's setkey, which refuses it.
fn hash_new(alg: u32, key: Option<&[u8]>) -> Result<HashRequest> {
    let Some(t) = ch::hash_type(alg) else {
        crate::cwarn!(
            "Unsupported hash algorithm id = {}, max id is {}\n",
            alg,
            ch::HASH_ALG_MAX
        );
        return Err(EINVAL);
    };
    match key {
        Some(k) if !k.is_empty() => {
            let hmac = hmac_name(t)?;
            let name = CStr::from_bytes_with_nul(hmac.as_bytes_with_nul()).map_err(|_| EINVAL)?;
            HashRequest::new(name, Some(k))
        }
        Some(k) => HashRequest::new(t.name, Some(k)),
        None => {
            let default = ch::default_key(t);
            HashRequest::new(t.name, default.as_ref().map(|k| &k[..]))
        }
    }
}

/// "hmac(NAME)".
fn hmac_name(t: &HashType) -> Result<CString> {
    let name = t.name.to_str().map_err(|_| EINVAL)?;
    CString::try_from_fmt(fmt!("hmac({})", name))
}

/// The caller's key: None for a null pointer.
///
/// # Safety
///
/// A non-null `key` points to `key_len` readable bytes.
unsafe fn key_slice<'a>(key: *const c_uchar, key_len: c_uint) -> Option<&'a [u8]> {
    if key.is_null() {
        None
    } else {
        // SAFETY: `key` is non-null here, so by # Safety it points to `key_len`
        // readable bytes.
        Some(unsafe { core::slice::from_raw_parts(key, key_len as usize) })
    }
}

/// A hash of `hash_alg` ready for updates, keyed (HMAC) if `key` is given
/// with a length; `ERR_PTR(-errno)` on failure. `cfs_crypto_hash_final`
/// frees it.
///
/// # Safety
///
/// A non-null `key` points to `key_len` readable bytes.
#[no_mangle]
unsafe extern "C" fn cfs_crypto_hash_init(
    hash_alg: c_uint,
    key: *mut c_uchar,
    key_len: c_uint,
) -> *mut bindings::ahash_request {
    // SAFETY: a non-null `key` points to `key_len` readable bytes (# Safety),
    // as key_slice needs; the slice is used only during this call.
    let key = unsafe { key_slice(key, key_len) };
    match hash_new(hash_alg, key) {
        Ok(hash) => hash.into_raw(),
        Err(e) => e.to_ptr(),
    }
}

/// Adds `len` bytes of `page` from `offset` (taken within the page, as
/// its low bits) to the hash. `-EINVAL` for a null request or page.
///
/// # Safety
///
/// `req` comes from `cfs_crypto_hash_init` and is not finalised, and no
/// other thread uses it meanwhile; the `len` bytes lie in `page` or the
/// pages of its compound page that follow.
#[no_mangle]
unsafe extern "C" fn cfs_crypto_hash_update_page(
    req: *mut bindings::ahash_request,
    page: *mut bindings::page,
    offset: c_uint,
    len: c_uint,
) -> c_int {
    if page.is_null() {
        return EINVAL.to_errno();
    }
    let offset = offset % PAGE_SIZE as c_uint;
    let update = |h: &mut HashRequest| {
        // SAFETY: the page range is the caller's promise.
        unsafe { h.update_page(page, offset, len) }
    };
    // SAFETY: the request is the caller's promise.
    let rc = unsafe { HashRequest::with_raw(req, update) };
    errno_of(rc)
}

/// Adds `buf_len` bytes at `buf` to the hash. `-EINVAL` for a null request,
/// or a null buffer with a length.
///
/// # Safety
///
/// `req` as for `cfs_crypto_hash_update_page`; a non-null `buf` points to
/// `buf_len` readable bytes of kernel memory.
#[no_mangle]
unsafe extern "C" fn cfs_crypto_hash_update(
    req: *mut bindings::ahash_request,
    buf: *const c_void,
    buf_len: c_uint,
) -> c_int {
    if buf_len == 0 {
        return 0;
    }
    if buf.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `buf` is non-null (checked above) and points to `buf_len`
    // readable bytes of kernel memory (# Safety).
    let data = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), buf_len as usize) };
    // SAFETY: the request is the caller's promise.
    let rc = unsafe { HashRequest::with_raw(req, |h| h.update(data)) };
    errno_of(rc)
}

/// 0, the error, or `-EINVAL` when there was no request.
fn errno_of(rc: Option<Result>) -> c_int {
    match rc {
        Some(Ok(())) => 0,
        Some(Err(e)) => e.to_errno(),
        None => EINVAL.to_errno(),
    }
}

/// Writes the digest to `hash` and its size to `*hash_len`, and frees the
/// hash whatever happens. With `hash` or `hash_len` null it only frees (0);
/// `-EOVERFLOW` if `*hash_len` is smaller than the digest.
///
/// # Safety
///
/// `req` comes from `cfs_crypto_hash_init`, is finalised once and not
/// used afterwards; non-null `hash` and `hash_len` point to `*hash_len`
/// writable bytes and a writable `unsigned int`.
#[no_mangle]
unsafe extern "C" fn cfs_crypto_hash_final(
    req: *mut bindings::ahash_request,
    hash: *mut c_uchar,
    hash_len: *mut c_uint,
) -> c_int {
    // SAFETY: `req` came from cfs_crypto_hash_init (HashRequest::into_raw) and is finalized once,
    // not used afterwards (# Safety), as from_raw needs; it is freed when `hash_req` goes.
    let Some(mut hash_req) = (unsafe { HashRequest::from_raw(req) }) else {
        return EINVAL.to_errno();
    };
    if hash.is_null() || hash_len.is_null() {
        return 0;
    }
    // SAFETY: `hash_len` is non-null (checked above) and points to a writable
    // `unsigned int` (# Safety).
    let room = unsafe { *hash_len };
    // SAFETY: `hash` is non-null (checked above) and points to `*hash_len`
    // (that is `room`) writable bytes (# Safety).
    let out = unsafe { core::slice::from_raw_parts_mut(hash, room as usize) };
    match hash_req.finish(out) {
        Ok(size) => {
            // SAFETY: `hash_len` is non-null (checked above) and points to a
            // writable `unsigned int` (# Safety).
            unsafe { *hash_len = size as c_uint };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// The digest of `buf_len` bytes at `buf` in one call, keyed (HMAC) if
/// `key` is given with a length. `-EINVAL` for a null `buf` or `hash_len`,
/// an empty buffer or an unknown algorithm number; `-ENOSPC` with the
/// digest size in `*hash_len` if `hash` is null or `*hash_len` too small
/// (the algorithm must exist for that: its errors come first).
///
/// # Safety
///
/// Non-null pointers point to what their lengths say (`buf`, `key`, and
/// `*hash_len` writable bytes at `hash`), kernel memory.
#[no_mangle]
unsafe extern "C" fn cfs_crypto_hash_digest(
    hash_alg: c_uint,
    buf: *const c_void,
    buf_len: c_uint,
    key: *mut c_uchar,
    key_len: c_uint,
    hash: *mut c_uchar,
    hash_len: *mut c_uint,
) -> c_int {
    if buf.is_null() || buf_len == 0 || hash_len.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: a non-null `key` points to `key_len` readable bytes (# Safety),
    // as key_slice needs; the slice is used only during this call.
    let key = unsafe { key_slice(key, key_len) };
    let mut req = match hash_new(hash_alg, key) {
        Ok(r) => r,
        Err(e) => return e.to_errno(),
    };
    // hash_new found the algorithm, so this is its table entry.
    let size = ch::hash_type(hash_alg).map_or(0, |t| t.size);
    // SAFETY: `hash_len` is non-null (checked above) and points to a writable
    // `unsigned int` (# Safety).
    let room = unsafe { *hash_len };
    if hash.is_null() || room < size {
        // SAFETY: `hash_len` is non-null (checked above) and points to a
        // writable `unsigned int` (# Safety).
        unsafe { *hash_len = size };
        return ENOSPC.to_errno();
    }
    // SAFETY: `buf` is non-null (checked above) with `buf_len` readable bytes, and `hash` is
    // non-null with `*hash_len` (that is `room`) writable bytes, both kernel memory (# Safety).
    let (data, out) = unsafe {
        (
            core::slice::from_raw_parts(buf.cast::<u8>(), buf_len as usize),
            core::slice::from_raw_parts_mut(hash, room as usize),
        )
    };
    match req.update(data).and_then(|()| req.finish(out)) {
        Ok(_) => 0,
        Err(e) => e.to_errno(),
    }
}

/// The speed of `hash_alg` in MB/s, measured on this first call if it was
/// not at load; a negative errno if the algorithm is unavailable, `-ENOENT`
/// past the last algorithm.
#[no_mangle]
extern "C" fn cfs_crypto_hash_speed(hash_alg: c_uint) -> c_int {
    let p = SPEEDS.load(Ordering::Acquire);
    // SAFETY: the pinned `Speeds` stays alive until `Crypto` is dropped at exit, after which only
    // lnet.ko's own exit path runs; callers are in modules that depend on lnet.ko.
    let speeds = unsafe { p.as_ref() };
    speed_of(hash_alg, speeds)
}
