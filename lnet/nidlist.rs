// SPDX-License-Identifier: GPL-2.0

//! Lustre's NID lists for C callers (`<uapi/linux/lnet/nidstr.h>`):
//! nodemap ranges, root squash exceptions and NRS TBF rules parse their
//! NID sets with `cfs_parse_nidlist` into a `struct list_head` they own,
//! match NIDs with `cfs_match_nid`, print and free them.
//!
//! The parsing, matching and printing are lnet-core's (`nidlist.rs`).
//! Each successful parse links one entry into the caller's list (Lustre
//! links one per net; what entries there are is private to lnet.ko): the
//! caller's `list_empty()`, `list_splice()` and the like work on it, and
//! every function here walks all entries, so spliced lists act as one.

use crate::kapi::bindings::lnet_nid;
use crate::kapi::clist::{self, list_head, NoFs};
use crate::kapi::lnet_abi::nid_from_c;
use crate::lnet_core::nid::write_cstr;
use crate::lnet_core::nidlist::{single_mask, MaskBase, NidList, NoMem, Seq, Store};
use crate::nidstr::c_bytes;
use core::ffi::c_int;
use core::fmt;
use kernel::ffi::c_char;
use kernel::prelude::*;

/// Lists are built in `KVec`s.
pub(crate) struct KStore;

impl Store for KStore {
    type Seq<T> = KVec<T>;

    fn seq<T>() -> KVec<T> {
        KVec::new()
    }
}

impl<T> Seq<T> for KVec<T> {
    fn try_push(&mut self, v: T) -> Result<(), NoMem> {
        self.push(v, GFP_KERNEL).map_err(|_| NoMem)
    }

    fn items(&self) -> &[T] {
        self
    }

    fn items_mut(&mut self) -> &mut [T] {
        self
    }
}

/// One parsed list, as linked into the caller's list.
#[repr(C)]
struct Node {
    /// First, so that an entry of the caller's list is the node.
    link: list_head,
    list: NidList<KStore>,
}

/// The parsed lists linked on `head`.
///
/// # Safety
///
/// `head` is a live list head, initialized by [`cfs_parse_nidlist`] (or
/// made of such lists), whose entries stay unchanged and alive for `'a`.
unsafe fn lists<'a>(head: *const list_head) -> impl Iterator<Item = &'a NidList<KStore>> + Clone {
    // SAFETY: `head` is a live list head initialized by cfs_parse_nidlist whose entries stay
    // unchanged and alive for `'a` (# Safety), as clist::entries needs.
    let entries = unsafe { clist::entries(head) };
    entries.map(|link| {
        // SAFETY: every entry is the `link` (first field) of a live Node
        // that cfs_parse_nidlist linked there.
        unsafe { &(*link.cast::<Node>()).list }
    })
}

/// The lists of a caller's list, printed one after the other.
struct Joined<I>(I);

impl<'a, I: Iterator<Item = &'a NidList<KStore>> + Clone> fmt::Display for Joined<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, l) in self.0.clone().enumerate() {
            if i != 0 {
                f.write_str(" ")?;
            }
            write!(f, "{l}")?;
        }
        Ok(())
    }
}

/// The C buffer `buf` of `count` bytes, if there is one.
///
/// # Safety
///
/// `buf` is null or points to `count` writable bytes.
unsafe fn out_buf<'a>(buf: *mut c_char, count: c_int) -> Option<&'a mut [u8]> {
    let n = usize::try_from(count).ok().filter(|n| *n > 0)?;
    if buf.is_null() {
        return None;
    }
    // SAFETY: `buf` is non-null (checked above) and `count` (that is `n`) is
    // positive, so by # Safety `buf` points to `n` writable bytes.
    Some(unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), n) })
}

/// Parses a NID list into `list` (`cfs_parse_nidlist`): 0, or -EINVAL /
/// -ENOMEM with `list` left empty.
///
/// # Safety
///
/// `s` is null or a string of `len` bytes or NUL-terminated before;
/// `list` is null or a writable list head that holds no entries (it is
/// initialized here).
#[no_mangle]
unsafe extern "C" fn cfs_parse_nidlist(s: *mut c_char, len: c_int, list: *mut list_head) -> c_int {
    if list.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `list` is non-null (checked above) and a writable list head that
    // holds no entries (# Safety), as clist::init needs.
    unsafe { clist::init(list) };
    if s.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `s` is non-null (checked above) and has `len` readable bytes or a
    // NUL before them (# Safety), as c_bytes needs.
    let text = unsafe { c_bytes(s, len) };
    let _nofs = NoFs::enter();
    let parsed = match NidList::<KStore>::parse(text) {
        Ok(l) => l,
        Err(e) => return e.to_errno(),
    };
    let node = KBox::new(
        Node {
            link: list_head {
                next: core::ptr::null_mut(),
                prev: core::ptr::null_mut(),
            },
            list: parsed,
        },
        GFP_KERNEL,
    );
    let Ok(node) = node else {
        return ENOMEM.to_errno();
    };
    let node = KBox::into_raw(node);
    // SAFETY: `node` is a fresh allocation and `list` the caller's empty
    // head; cfs_free_nidlist unlinks and frees the node.
    unsafe { clist::add_tail(core::ptr::addr_of_mut!((*node).link), list) };
    0
}

/// Frees the entries of `list` (`cfs_free_nidlist`), leaving it empty.
///
/// # Safety
///
/// `list` is null, zeroed, or a list made by [`cfs_parse_nidlist`] that
/// nobody else uses meanwhile.
#[no_mangle]
unsafe extern "C" fn cfs_free_nidlist(list: *mut list_head) {
    if list.is_null() {
        return;
    }
    // SAFETY: `list` is non-null (checked above), so by # Safety zeroed or a list cfs_parse_nidlist
    // made that nobody else uses; clist::first reads a zeroed head's null `next` as empty.
    while let Some(link) = unsafe { clist::first(list) } {
        // SAFETY: `link` is an entry of the list, ours to unlink.
        unsafe { clist::del(link) };
        // SAFETY: each entry is the first field of a Node that
        // cfs_parse_nidlist leaked from a KBox; unlinked, it is freed once.
        drop(unsafe { KBox::from_raw(link.cast::<Node>()) });
    }
}

/// 1 if `nid` is in `list`, else 0 (`cfs_match_nid`).
///
/// # Safety
///
/// `nid` is null or a NID; `list` is null or a list made by
/// [`cfs_parse_nidlist`], not changed meanwhile.
#[no_mangle]
unsafe extern "C" fn cfs_match_nid(nid: *const lnet_nid, list: *mut list_head) -> c_int {
    if list.is_null() {
        return 0;
    }
    // SAFETY: `nid` is null or points to a readable `struct lnet_nid`
    // (# Safety).
    let Some(nid) = unsafe { nid.as_ref() }.and_then(|c| nid_from_c(c).ok()) else {
        return 0;
    };
    // SAFETY: `list` is non-null (checked above), so a list cfs_parse_nidlist
    // made that is not changed during this call (# Safety), as `lists` needs.
    c_int::from(unsafe { lists(list) }.any(|l| l.matches(&nid)))
}

/// Writes `list` into `buffer` (`cfs_print_nidlist`): at most `count - 1`
/// characters and a NUL; returns the characters written.
///
/// # Safety
///
/// `buffer` is null or points to `count` writable bytes; `list` is null or
/// a list made by [`cfs_parse_nidlist`], not changed meanwhile.
#[no_mangle]
unsafe extern "C" fn cfs_print_nidlist(
    buffer: *mut c_char,
    count: c_int,
    list: *mut list_head,
) -> c_int {
    // SAFETY: `buffer` is null or points to `count` writable bytes (# Safety),
    // as out_buf needs.
    let Some(out) = (unsafe { out_buf(buffer, count) }) else {
        return 0;
    };
    if list.is_null() {
        return 0;
    }
    // SAFETY: `list` is non-null (checked above), so a list cfs_parse_nidlist
    // made that is not changed during this call (# Safety), as `lists` needs.
    let written = write_cstr(out, &Joined(unsafe { lists(list) }));
    // Less than `count`, a c_int.
    c_int::try_from(written).unwrap_or(0)
}

/// The prefix length of the one netmask of `list`, 0 if it has none or
/// several (`cfs_nidmask_get_length`).
///
/// # Safety
///
/// `list` is null or a list made by [`cfs_parse_nidlist`], not changed
/// meanwhile.
#[no_mangle]
unsafe extern "C" fn cfs_nidmask_get_length(list: *mut list_head) -> u8 {
    if list.is_null() {
        return 0;
    }
    // SAFETY: `list` is non-null (checked above), so a list cfs_parse_nidlist
    // made that is not changed during this call (# Safety), as `lists` needs.
    let masks = unsafe { lists(list) }.flat_map(|l| l.masks());
    match single_mask(masks) {
        Ok(Some((m, _))) => m.prefix_len(),
        _ => 0,
    }
}

/// Writes the address and net of the one netmask of `list`, without its
/// prefix (`cfs_nidmask_get_base_nidstr`): 0 (the buffer untouched if
/// there is no netmask, as in Lustre), -EINVAL if there are several.
///
/// # Safety
///
/// `buf` is null or points to `count` writable bytes; `list` is null or a
/// list made by [`cfs_parse_nidlist`], not changed meanwhile.
#[no_mangle]
unsafe extern "C" fn cfs_nidmask_get_base_nidstr(
    buf: *mut c_char,
    count: c_int,
    list: *mut list_head,
) -> c_int {
    if list.is_null() {
        return 0;
    }
    // SAFETY: `list` is non-null (checked above), so a list cfs_parse_nidlist
    // made that is not changed during this call (# Safety), as `lists` needs.
    let masks = unsafe { lists(list) }.flat_map(|l| l.masks());
    match single_mask(masks) {
        Err(e) => e.to_errno(),
        Ok(None) => 0,
        Ok(Some((m, net))) => {
            // SAFETY: `buf` is null or points to `count` writable bytes
            // (# Safety), as out_buf needs.
            if let Some(out) = unsafe { out_buf(buf, count) } {
                write_cstr(out, &MaskBase(m, net));
            }
            0
        }
    }
}
