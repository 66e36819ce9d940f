// SPDX-License-Identifier: GPL-2.0

//! Lustre's NID and net strings for C callers (include/uapi/linux/lnet/nidstr.h):
//! thin wrappers over lnet-core's parsing and formatting (`nid.rs`).
//!
//! `libcfs_idstr` and the header's `libcfs_nidstr`/`libcfs_nid2str` write
//! into a ring of `LNET_NIDSTR_COUNT` buffers, as Lustre's do: a string
//! stays valid until that many more have been made, which is what lets
//! callers use them inside one log line without freeing anything.

use crate::kapi::bindings::{lnet_nid, lnet_process_id, lnet_processid};
use crate::kapi::lnet_abi::{nid_from_c, nid_to_c};
use crate::lnet_core::nid::{str2nid4, write_cstr, Net, Net32, Nid, ProcessId};
use core::cell::UnsafeCell;
use core::ffi::c_int;
use core::fmt::Display;
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use kernel::ffi::c_char;
use kernel::prelude::*;

/// `LNET_NIDSTR_SIZE` and `LNET_NIDSTR_COUNT`.
const NIDSTR_SIZE: usize = 64;
const NIDSTR_COUNT: usize = 1024;

/// The ring of string buffers (64 KiB, in the module's data).
///
/// # Invariants
///
/// The array is reached only through `next_slot`, as a raw pointer to one
/// buffer: no reference to the whole ring is made. Each call takes the
/// next buffer by an atomic counter, so a buffer is handed out again only
/// after `NIDSTR_COUNT` newer ones.
struct Ring(UnsafeCell<[[u8; NIDSTR_SIZE]; NIDSTR_COUNT]>);

// SAFETY: by the type invariant, callers at the same time get different
// buffers until the ring wraps; a caller keeping a string past NIDSTR_COUNT
// newer ones sees it overwritten, Lustre's documented limit.
unsafe impl Sync for Ring {}

// INVARIANT: nothing but `next_slot` names `RING`.
static RING: Ring = Ring(UnsafeCell::new([[0; NIDSTR_SIZE]; NIDSTR_COUNT]));
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The next buffer of the ring (`libcfs_next_nidstring`).
fn next_slot() -> *mut c_char {
    let i = NEXT.fetch_add(1, Relaxed) % NIDSTR_COUNT;
    RING.0
        .get()
        .cast::<[u8; NIDSTR_SIZE]>()
        .wrapping_add(i)
        .cast()
}

/// Formats `v` into the C buffer `buf` of `size` bytes, cut short and
/// NUL-terminated as snprintf does; returns `buf`.
///
/// # Safety
///
/// `buf` is null or points to `size` writable bytes.
unsafe fn write_c(buf: *mut c_char, size: usize, v: &dyn Display) -> *mut c_char {
    if !buf.is_null() && size > 0 {
        // SAFETY: `buf` is non-null and `size` positive (checked above), so by
        // # Safety `buf` points to `size` writable bytes.
        let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), size) };
        write_cstr(out, v);
    }
    buf
}

/// A string of the ring, `LNET_NIDSTR_SIZE` bytes (`libcfs_next_nidstring`).
#[no_mangle]
extern "C" fn libcfs_next_nidstring() -> *mut c_char {
    next_slot()
}

/// The text of a NID4 (`libcfs_nid2str_r`); `LNET_NID_ANY` is `<?>`.
///
/// # Safety
///
/// `buf` is null or points to `size` writable bytes.
#[no_mangle]
unsafe extern "C" fn libcfs_nid2str_r(nid: u64, buf: *mut c_char, size: usize) -> *mut c_char {
    // SAFETY: `buf` is null or points to `size` writable bytes (# Safety), as
    // write_c needs.
    unsafe { write_c(buf, size, &Nid::from_nid4(nid)) }
}

/// The text of a NID (`libcfs_nidstr_r`); `LNET_ANY_NID`, and a NID whose
/// size is neither 0 nor 12, are `<?>`.
///
/// # Safety
///
/// `nid` is null or points to a NID (its type says so); `buf` is null or
/// points to `size` writable bytes.
#[no_mangle]
unsafe extern "C" fn libcfs_nidstr_r(
    nid: Option<&lnet_nid>,
    buf: *mut c_char,
    size: usize,
) -> *mut c_char {
    let n = nid.and_then(|c| nid_from_c(c).ok());
    // SAFETY: `buf` is null or points to `size` writable bytes (# Safety), as
    // write_c needs.
    unsafe { write_c(buf, size, &n.unwrap_or(Nid::ANY)) }
}

/// `pid-nid` in a ring buffer (`libcfs_idstr`); C passes null or a
/// process id.
#[no_mangle]
extern "C" fn libcfs_idstr(id: Option<&lnet_processid>) -> *mut c_char {
    let id = id.map_or(
        ProcessId {
            nid: Nid::ANY,
            pid: crate::lnet_core::md::PID_ANY,
        },
        |c| ProcessId {
            nid: nid_from_c(&c.nid).unwrap_or(Nid::ANY),
            pid: c.pid,
        },
    );
    // SAFETY: a ring buffer is NIDSTR_SIZE writable bytes.
    unsafe { write_c(next_slot(), NIDSTR_SIZE, &id) }
}

/// The C string `s`, if it is one and UTF-8.
///
/// # Safety
///
/// `s` is null or a NUL-terminated string.
unsafe fn text<'a>(s: *const c_char) -> Option<&'a str> {
    if s.is_null() {
        return None;
    }
    // SAFETY: `s` is non-null (checked above) and NUL-terminated (# Safety);
    // callers use the text only during their own call.
    unsafe { CStr::from_char_ptr(s) }.to_str().ok()
}

/// A net from its text (`libcfs_str2net`): `LNET_NET_ANY` if it is not one.
///
/// # Safety
///
/// `s` is null or a NUL-terminated string.
#[no_mangle]
unsafe extern "C" fn libcfs_str2net(s: *const c_char) -> u32 {
    // SAFETY: `s` is null or a NUL-terminated string (# Safety), as `text`
    // needs; the text is used only during this call.
    let net = unsafe { text(s) }.and_then(|t| Net::parse(t).ok());
    net.unwrap_or(Net::ANY).as_u32()
}

/// Parses a NID in its text form (`libcfs_strnid`): 0 or -EINVAL.
///
/// # Safety
///
/// `nid` is null or writable (its type says so); `s` is null or a
/// NUL-terminated string.
#[no_mangle]
unsafe extern "C" fn libcfs_strnid(nid: Option<&mut lnet_nid>, s: *const c_char) -> c_int {
    // SAFETY: `s` is null or a NUL-terminated string (# Safety), as `text`
    // needs; the text is used only during this call.
    let parsed = unsafe { text(s) }.and_then(|t| Nid::parse(t.trim()).ok());
    match (parsed, nid) {
        (Some(n), Some(out)) => {
            *out = nid_to_c(&n);
            0
        }
        _ => EINVAL.to_errno(),
    }
}

/// The text of a 32-bit net (`libcfs_net2str_r`): `tcp1`, `<17:3>`.
///
/// # Safety
///
/// `buf` is null or points to `size` writable bytes.
#[no_mangle]
unsafe extern "C" fn libcfs_net2str_r(net: u32, buf: *mut c_char, size: usize) -> *mut c_char {
    // SAFETY: `buf` is null or points to `size` writable bytes (# Safety), as
    // write_c needs.
    unsafe { write_c(buf, size, &Net32(net)) }
}

/// A NID4 from its text (`libcfs_str2nid`): `LNET_NID_ANY` if the text is
/// not a NID with a 4-byte address. Stricter than Lustre as nid.rs says
/// (no blanks; only `0@lo`).
///
/// # Safety
///
/// `s` is null or a NUL-terminated string.
#[no_mangle]
unsafe extern "C" fn libcfs_str2nid(s: *const c_char) -> u64 {
    // SAFETY: `s` is null or a NUL-terminated string (# Safety), as `text`
    // needs; the text is used only during this call.
    unsafe { text(s) }.map_or(u64::MAX, str2nid4)
}

/// As `libcfs_str2nid`, with `*` for `LNET_NID_ANY` (`libcfs_str2anynid`):
/// 1 if `*nid` was set to a NID or to ANY by `*`, 0 otherwise (`*nid` is
/// then `LNET_NID_ANY`).
///
/// # Safety
///
/// `nid` is null or writable (its type says so); `s` is null or a
/// NUL-terminated string.
#[no_mangle]
unsafe extern "C" fn libcfs_str2anynid(nid: Option<&mut u64>, s: *const c_char) -> c_int {
    // SAFETY: `s` is null or a NUL-terminated string (# Safety), as `text`
    // needs; the text is used only during this call.
    let (value, ok) = match unsafe { text(s) } {
        Some("*") => (u64::MAX, true),
        Some(t) => {
            let n = str2nid4(t);
            (n, n != u64::MAX)
        }
        None => (u64::MAX, false),
    };
    if let Some(out) = nid {
        *out = value;
    }
    c_int::from(ok)
}

/// `pid-nid` of a NID4 process id in a ring buffer (`libcfs_id2str`).
#[no_mangle]
extern "C" fn libcfs_id2str(id: lnet_process_id) -> *mut c_char {
    let id = ProcessId {
        nid: Nid::from_nid4(id.nid),
        pid: id.pid,
    };
    // SAFETY: a ring buffer is NIDSTR_SIZE writable bytes.
    unsafe { write_c(next_slot(), NIDSTR_SIZE, &id) }
}

/// The bytes of a C string argument: up to `len` (all of it when `len` is
/// negative, as `kstrndup` reads a huge size) or up to its NUL.
///
/// # Safety
///
/// `s` points to `len` readable bytes, or to fewer followed by a NUL.
pub(crate) unsafe fn c_bytes<'a>(s: *const c_char, len: c_int) -> &'a [u8] {
    let max = usize::try_from(len).unwrap_or(usize::MAX);
    let mut n = 0;
    // SAFETY: by # Safety `s` has `len` readable bytes or a NUL before them, and the loop stops at
    // the first NUL or at `len`: every byte it reads is readable.
    while n < max && unsafe { *s.add(n) } != 0 {
        n += 1;
    }
    // SAFETY: the `n` bytes read above are readable and stay so for the
    // call that reads them.
    unsafe { core::slice::from_raw_parts(s.cast::<u8>(), n) }
}
