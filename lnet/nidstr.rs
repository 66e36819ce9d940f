// SPDX-License-Identifier: GPL-2.0

//! Lustre's NID and net strings for C callers (include/uapi/linux/lnet/nidstr.h):
//! thin wrappers over lnet-core's parsing and formatting (`nid.rs`).
//!
//! `libcfs_idstr` and the header's `libcfs_nidstr`/`libcfs_nid2str` write
//! into a ring of `LNET_NIDSTR_COUNT` buffers, as Lustre's do: a string
//! stays valid until that many more have been made, which is what lets
//! callers use them inside one log line without freeing anything.

use crate::kapi::bindings::{lnet_nid, lnet_process_id, lnet_processid};
use crate::kapi::ffi::{self, CStrArg};
use crate::kapi::lnet_abi::{nid_from_c, nid_to_c};
use crate::lnet_core::nid::{str2nid4, write_cstr, Net, Net32, Nid, ProcessId};
use core::ffi::c_int;
use core::fmt::Display;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};
use kernel::ffi::c_char;
use kernel::prelude::*;

/// `LNET_NIDSTR_SIZE` and `LNET_NIDSTR_COUNT`.
const NIDSTR_SIZE: usize = 64;
const NIDSTR_COUNT: usize = 1024;

/// The ring of string buffers (64 KiB, in the module's data). A buffer is
/// handed out again only after `NIDSTR_COUNT` newer ones; a caller keeping
/// a string longer sees it overwritten, Lustre's documented limit. Its
/// bytes are atomics, so that two writers of one buffer (the ring wrapped
/// under them) are no data race, only a garbled string, as in Lustre.
#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU8 = AtomicU8::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: [AtomicU8; NIDSTR_SIZE] = [ZERO; NIDSTR_SIZE];
static RING: [[AtomicU8; NIDSTR_SIZE]; NIDSTR_COUNT] = [EMPTY; NIDSTR_COUNT];
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The next buffer of the ring (`libcfs_next_nidstring`).
fn next_slot() -> &'static [AtomicU8; NIDSTR_SIZE] {
    let i = NEXT.fetch_add(1, Relaxed) % NIDSTR_COUNT;
    let [first, ..] = &RING;
    // `i` < NIDSTR_COUNT: always there.
    RING.get(i).unwrap_or(first)
}

/// Formats `v` into a ring buffer, cut short and NUL-terminated as
/// snprintf does; returns the buffer.
fn write_ring(v: &dyn Display) -> *mut c_char {
    let mut text = [0u8; NIDSTR_SIZE];
    let n = write_cstr(&mut text, v);
    let slot = next_slot();
    // The text and its NUL.
    for (d, s) in slot.iter().zip(text.iter().take(n.saturating_add(1))) {
        d.store(*s, Relaxed);
    }
    slot.as_ptr().cast::<c_char>().cast_mut()
}

/// A string of the ring, `LNET_NIDSTR_SIZE` bytes (`libcfs_next_nidstring`).
#[no_mangle]
extern "C" fn libcfs_next_nidstring() -> *mut c_char {
    next_slot().as_ptr().cast::<c_char>().cast_mut()
}

/// Formats `v` into `out` if there is one, as snprintf does; returns `buf`.
fn write_c(buf: *mut c_char, out: Option<&mut [u8]>, v: &dyn Display) -> *mut c_char {
    if let Some(out) = out {
        write_cstr(out, v);
    }
    buf
}

/// The text of a NID4 (`libcfs_nid2str_r`); `LNET_NID_ANY` is `<?>`.
///
/// # Safety
///
/// `buf` is null or points to `size` writable bytes.
#[no_mangle]
unsafe extern "C" fn libcfs_nid2str_r(nid: u64, buf: *mut c_char, size: usize) -> *mut c_char {
    // SAFETY: `buf` is null or points to `size` writable bytes, used by
    // nothing else during this call (# Safety), as ffi::out_buf needs.
    let out = unsafe { ffi::out_buf(buf, size) };
    write_c(buf, out, &Nid::from_nid4(nid))
}

/// The text of a NID (`libcfs_nidstr_r`); `LNET_ANY_NID`, and a NID whose
/// size is neither 0 nor 12, are `<?>`.
///
/// C passes `nid` null or a NID.
///
/// # Safety
///
/// `buf` is null or points to `size` writable bytes.
#[no_mangle]
unsafe extern "C" fn libcfs_nidstr_r(
    nid: Option<&lnet_nid>,
    buf: *mut c_char,
    size: usize,
) -> *mut c_char {
    let n = nid.and_then(|c| nid_from_c(c).ok());
    // SAFETY: `buf` is null or points to `size` writable bytes, used by
    // nothing else during this call (# Safety), as ffi::out_buf needs.
    let out = unsafe { ffi::out_buf(buf, size) };
    write_c(buf, out, &n.unwrap_or(Nid::ANY))
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
    write_ring(&id)
}

/// A net from its text (`libcfs_str2net`): `LNET_NET_ANY` if it is not one.
#[no_mangle]
extern "C" fn libcfs_str2net(s: CStrArg<'_>) -> u32 {
    let net = s.to_str().and_then(|t| Net::parse(t).ok());
    net.unwrap_or(Net::ANY).as_u32()
}

/// Parses a NID in its text form (`libcfs_strnid`): 0 or -EINVAL.
///
/// C passes `nid` null or writable.
#[no_mangle]
extern "C" fn libcfs_strnid(nid: Option<&mut lnet_nid>, s: CStrArg<'_>) -> c_int {
    let parsed = s.to_str().and_then(|t| Nid::parse(t.trim()).ok());
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
    // SAFETY: `buf` is null or points to `size` writable bytes, used by
    // nothing else during this call (# Safety), as ffi::out_buf needs.
    let out = unsafe { ffi::out_buf(buf, size) };
    write_c(buf, out, &Net32(net))
}

/// A NID4 from its text (`libcfs_str2nid`): `LNET_NID_ANY` if the text is
/// not a NID with a 4-byte address. Stricter than Lustre as nid.rs says
/// (no blanks; only `0@lo`).
#[no_mangle]
extern "C" fn libcfs_str2nid(s: CStrArg<'_>) -> u64 {
    s.to_str().map_or(u64::MAX, str2nid4)
}

/// As `libcfs_str2nid`, with `*` for `LNET_NID_ANY` (`libcfs_str2anynid`):
/// 1 if `*nid` was set to a NID or to ANY by `*`, 0 otherwise (`*nid` is
/// then `LNET_NID_ANY`).
///
/// C passes `nid` null or writable.
#[no_mangle]
extern "C" fn libcfs_str2anynid(nid: Option<&mut u64>, s: CStrArg<'_>) -> c_int {
    let (value, ok) = match s.to_str() {
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
    write_ring(&id)
}
