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
use crate::kapi::crypto::{
    self as kcrypto, Checksum32Registration, Hash, HashRequest, SpeedTestGuard,
};
use crate::kapi::ffi;
use crate::kapi::kthread::{self, Thread};
use crate::lnet_core::crypto_hash::{self as ch, HashType};
use core::ffi::{c_int, c_uchar, c_uint, c_void, CStr};
use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use kernel::page::PAGE_SIZE;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::{c_str, fmt};

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

/// lnet.ko is unloading: a measurement under way gives up.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// The hash algorithms while lnet.ko is loaded: adler32 registered and the
/// load-time speed thread.
pub(crate) struct Crypto {
    worker: Option<Thread>,
    adler32: Option<Checksum32Registration>,
}

impl Crypto {
    /// Registers adler32 and starts measuring speeds. Fails only without
    /// memory; an algorithm the kernel lacks is reported by its speed.
    pub(crate) fn new() -> Result<Crypto> {
        // The crypto API loads the module of any algorithm it is asked
        // for ("crypto-crc32c"), so nothing is loaded here in advance.
        let adler32 = crate::adler32::register();
        let spawned = Thread::spawn_static(c_str!("lnet_crypto"), &(), speed_worker);
        let worker = match spawned {
            Ok(t) => Some(t),
            Err(e) => {
                // Each speed is then measured when first asked for.
                pr_warn!("no thread to measure checksum speeds: {:?}\n", e);
                None
            }
        };
        Ok(Crypto { worker, adler32 })
    }
}

impl Drop for Crypto {
    fn drop(&mut self) {
        STOPPING.store(true, Ordering::Relaxed);
        drop(self.worker.take());
        // Nothing of ours hashes any more: adler32 can go.
        drop(self.adler32.take());
    }
}

/// The load-time measurements: the algorithms below
/// `CFS_HASH_ALG_SPEED_MAX`, then a wait for the module's exit.
fn speed_worker(_: &'static ()) {
    for alg in ch::HASH_ALG_ADLER32..ch::HASH_ALG_SPEED_MAX {
        if STOPPING.load(Ordering::Relaxed) {
            break;
        }
        speed_of(alg);
    }
    kcrypto::wait_for_stop();
}

/// The speed of `alg`, measured now if it has not been, one measurement
/// at a time.
fn speed_of(alg: u32) -> c_int {
    let Some(slot) = usize::try_from(alg)
        .ok()
        .and_then(|i| cfs_crypto_hash_speeds.get(i))
    else {
        return ENOENT.to_errno();
    };
    if slot.load(Ordering::Acquire) == 0 {
        let _guard = SpeedTestGuard::lock();
        if slot.load(Ordering::Acquire) == 0 {
            if let Some(speed) = performance_test(alg) {
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
fn performance_test(alg: u32) -> Option<c_int> {
    let stop = || STOPPING.load(Ordering::Relaxed);
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
    // A page-sized kmalloc is a whole page (kmalloc aligns a power of two
    // to its size): each update hashes one page.
    let page = KVec::from_elem(0xadu8, PAGE_SIZE, GFP_KERNEL)?;
    let pages_per_round = (ch::SPEED_TEST_BYTES / PAGE_SIZE as u64).max(1);
    let mut digest = [0u8; ch::DIGEST_SIZE_MAX];
    let mut rounds = 0u64;
    let start = kthread::now_ms();
    let mut now = start;
    while now.saturating_sub(start) < ch::SPEED_TEST_MS && !stop() {
        let hash = hash_new(alg, None)?;
        for _ in 0..pages_per_round {
            hash.update(&page)?;
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
    // unchanged during this call, which is as long as the slice is used.
    let key = unsafe { ffi::bytes(key, key_len as usize) };
    match hash_new(hash_alg, key) {
        Ok(hash) => hash.into_raw(),
        Err(e) => e.to_ptr(),
    }
}

/// Adds `len` bytes of `page` from `offset` (taken within the page, as
/// its low bits) to the hash. `-EINVAL` for a null request or page.
///
/// C passes `req` null or a request from `cfs_crypto_hash_init` not yet
/// finalised, which no other thread uses meanwhile.
///
/// # Safety
///
/// The `len` bytes lie in `page` or the pages of its compound page that
/// follow.
#[no_mangle]
unsafe extern "C" fn cfs_crypto_hash_update_page(
    req: Option<&Hash>,
    page: *mut bindings::page,
    offset: c_uint,
    len: c_uint,
) -> c_int {
    let Some(req) = req else {
        return EINVAL.to_errno();
    };
    if page.is_null() {
        return EINVAL.to_errno();
    }
    let offset = offset % PAGE_SIZE as c_uint;
    // SAFETY: `page` is non-null (checked above), so a page whose compound
    // page holds the `len` bytes from `offset` (# Safety).
    errno_of(unsafe { req.update_page(page, offset, len) })
}

/// Adds `buf_len` bytes at `buf` to the hash. `-EINVAL` for a null request,
/// or a null buffer with a length.
///
/// C passes `req` as for `cfs_crypto_hash_update_page`.
///
/// # Safety
///
/// A non-null `buf` points to `buf_len` readable bytes of kernel memory.
#[no_mangle]
unsafe extern "C" fn cfs_crypto_hash_update(
    req: Option<&Hash>,
    buf: *const c_void,
    buf_len: c_uint,
) -> c_int {
    if buf_len == 0 {
        return 0;
    }
    // SAFETY: a non-null `buf` points to `buf_len` readable bytes of kernel
    // memory (# Safety), unchanged during this call.
    let data = unsafe { ffi::bytes(buf.cast(), buf_len as usize) };
    match (req, data) {
        (Some(req), Some(data)) => errno_of(req.update(data)),
        _ => EINVAL.to_errno(),
    }
}

/// 0 or the error.
fn errno_of(rc: Result) -> c_int {
    match rc {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// Writes the digest to `hash` and its size to `*hash_len`, and frees the
/// hash whatever happens. With `hash` or `hash_len` null it only frees (0);
/// `-EOVERFLOW` if `*hash_len` is smaller than the digest.
///
/// C passes `req` null or a request from `cfs_crypto_hash_init`, finalised
/// once and not used afterwards, and `hash_len` null or writable.
///
/// # Safety
///
/// A non-null `hash` points to `*hash_len` writable bytes.
#[no_mangle]
unsafe extern "C" fn cfs_crypto_hash_final(
    req: Option<HashRequest>,
    hash: *mut c_uchar,
    hash_len: Option<&mut c_uint>,
) -> c_int {
    let Some(req) = req else {
        return EINVAL.to_errno();
    };
    let Some(hash_len) = hash_len else {
        return 0;
    };
    // SAFETY: a non-null `hash` points to `*hash_len` writable bytes (#
    // Safety), which only this slice uses during the call.
    let Some(out) = (unsafe { ffi::bytes_mut(hash, *hash_len as usize) }) else {
        return 0;
    };
    match req.finish(out) {
        Ok(size) => {
            *hash_len = size as c_uint;
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
/// C passes `hash_len` null or writable.
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
    hash_len: Option<&mut c_uint>,
) -> c_int {
    let Some(hash_len) = hash_len else {
        return EINVAL.to_errno();
    };
    let room = *hash_len;
    // The C caller passes non-null `buf` and `key` pointing to
    // `buf_len` and `key_len` readable bytes and a non-null `hash` to
    // `*hash_len` (`room`) writable bytes of kernel memory, unchanged
    // meanwhile and used only by these slices during this call; `ffi::bytes`
    // maps a null pointer to `None`.
    // SAFETY: `buf`, `key` readable and `hash` writable for their lengths
    // during this call, by the C caller (said just above).
    let (data, key, out) = unsafe {
        (
            ffi::bytes(buf.cast(), buf_len as usize),
            ffi::bytes(key, key_len as usize),
            ffi::bytes_mut(hash, room as usize),
        )
    };
    let Some(data) = data.filter(|d| !d.is_empty()) else {
        return EINVAL.to_errno();
    };
    let req = match hash_new(hash_alg, key) {
        Ok(r) => r,
        Err(e) => return e.to_errno(),
    };
    // hash_new found the algorithm, so this is its table entry.
    let size = ch::hash_type(hash_alg).map_or(0, |t| t.size);
    let Some(out) = out.filter(|_| room >= size) else {
        *hash_len = size;
        return ENOSPC.to_errno();
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
    speed_of(hash_alg)
}
