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
use crate::kapi::clist::{ListHead, ListHeadSlot, NoFs};
use crate::kapi::ffi;
use crate::kapi::lnet_abi::nid_from_c;
use crate::lnet_core::nid::write_cstr;
use crate::lnet_core::nidlist::{single_mask, MaskBase, NidList, NoMem, Seq, Store};
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

/// A caller's list: one parsed list per entry.
type Lists = ListHead<NidList<KStore>>;

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

/// Parses a NID list into `list` (`cfs_parse_nidlist`): 0, or -EINVAL /
/// -ENOMEM with `list` left empty.
///
/// C passes `list` null or a writable list head of its own that holds no
/// entries (it is initialized here).
///
/// # Safety
///
/// `s` is null or a string of `len` bytes or NUL-terminated before.
#[no_mangle]
unsafe extern "C" fn cfs_parse_nidlist(
    s: *mut c_char,
    len: c_int,
    list: Option<&ListHeadSlot<NidList<KStore>>>,
) -> c_int {
    let Some(list) = list else {
        return EINVAL.to_errno();
    };
    let list = list.init();
    // SAFETY: `s` is null or has `len` readable bytes or a NUL before them,
    // unchanged during this call (# Safety), as ffi::text needs.
    let Some(text) = (unsafe { ffi::text(s, len) }) else {
        return EINVAL.to_errno();
    };
    let _nofs = NoFs::enter();
    let parsed = match NidList::<KStore>::parse(text) {
        Ok(l) => l,
        Err(e) => return e.to_errno(),
    };
    match list.push_back(parsed, GFP_KERNEL) {
        Ok(()) => 0,
        Err(_) => ENOMEM.to_errno(),
    }
}

/// Frees the entries of `list` (`cfs_free_nidlist`), leaving it empty.
///
/// C passes `list` null, zeroed, or a list made by [`cfs_parse_nidlist`]
/// that nobody else uses meanwhile.
#[no_mangle]
extern "C" fn cfs_free_nidlist(list: Option<Pin<&mut Lists>>) {
    if let Some(list) = list {
        list.clear();
    }
}

/// 1 if `nid` is in `list`, else 0 (`cfs_match_nid`).
///
/// C passes `nid` null or a NID, and `list` null or a list made by
/// [`cfs_parse_nidlist`], not changed meanwhile.
#[no_mangle]
extern "C" fn cfs_match_nid(nid: Option<&lnet_nid>, list: Option<&Lists>) -> c_int {
    let (Some(list), Some(nid)) = (list, nid.and_then(|c| nid_from_c(c).ok())) else {
        return 0;
    };
    c_int::from(list.iter().any(|l| l.matches(&nid)))
}

/// Writes `list` into `buffer` (`cfs_print_nidlist`): at most `count - 1`
/// characters and a NUL; returns the characters written.
///
/// C passes `list` null or a list made by [`cfs_parse_nidlist`], not
/// changed meanwhile.
///
/// # Safety
///
/// `buffer` is null or points to `count` writable bytes.
#[no_mangle]
unsafe extern "C" fn cfs_print_nidlist(
    buffer: *mut c_char,
    count: c_int,
    list: Option<&Lists>,
) -> c_int {
    // SAFETY: `buffer` is null or points to `count` writable bytes, used by
    // nothing else during this call (# Safety), as ffi::out_buf needs.
    let (Some(out), Some(list)) = (unsafe { ffi::out_buf(buffer, count) }, list) else {
        return 0;
    };
    let written = write_cstr(out, &Joined(list.iter()));
    // Less than `count`, a c_int.
    c_int::try_from(written).unwrap_or(0)
}

/// The prefix length of the one netmask of `list`, 0 if it has none or
/// several (`cfs_nidmask_get_length`).
///
/// C passes `list` null or a list made by [`cfs_parse_nidlist`], not
/// changed meanwhile.
#[no_mangle]
extern "C" fn cfs_nidmask_get_length(list: Option<&Lists>) -> u8 {
    let Some(list) = list else {
        return 0;
    };
    match single_mask(list.iter().flat_map(|l| l.masks())) {
        Ok(Some((m, _))) => m.prefix_len(),
        _ => 0,
    }
}

/// Writes the address and net of the one netmask of `list`, without its
/// prefix (`cfs_nidmask_get_base_nidstr`): 0 (the buffer untouched if
/// there is no netmask, as in Lustre), -EINVAL if there are several.
///
/// C passes `list` null or a list made by [`cfs_parse_nidlist`], not
/// changed meanwhile.
///
/// # Safety
///
/// `buf` is null or points to `count` writable bytes.
#[no_mangle]
unsafe extern "C" fn cfs_nidmask_get_base_nidstr(
    buf: *mut c_char,
    count: c_int,
    list: Option<&Lists>,
) -> c_int {
    let Some(list) = list else {
        return 0;
    };
    match single_mask(list.iter().flat_map(|l| l.masks())) {
        Err(e) => e.to_errno(),
        Ok(None) => 0,
        Ok(Some((m, net))) => {
            // SAFETY: `buf` is null or `count` writable bytes nothing else
            // uses during this call (# Safety), as ffi::out_buf needs.
            if let Some(out) = unsafe { ffi::out_buf(buf, count) } {
                write_cstr(out, &MaskBase(m, net));
            }
            0
        }
    }
}
