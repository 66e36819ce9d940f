// SPDX-License-Identifier: GPL-2.0

//! Lustre's expression lists for C callers (`<linux/lnet/lib-types.h>`):
//! PtlRPC parses its CPU partition patterns with `cfs_expr_list_parse` and
//! reads their values with `cfs_expr_list_values`. The syntax is
//! lnet-core's (`expr_list.rs`); here the ranges are built as the C
//! structures Lustre's header makes public, linked on their list_heads.

use crate::kapi::bindings::{cfs_expr_list, cfs_range_expr};
use crate::kapi::clist::{self, list_head, NoFs};
use crate::lnet_core::expr_list::{self, RangeExpr};
use crate::nidstr::c_bytes;
use core::ffi::c_int;
use kernel::alloc::allocator::{Kmalloc, Vmalloc};
use kernel::alloc::Allocator;
use kernel::ffi::c_char;
use kernel::prelude::*;

/// An empty list head, to be initialized where it lives.
const NO_LINK: list_head = list_head {
    next: core::ptr::null_mut(),
    prev: core::ptr::null_mut(),
};

/// The ranges of `el`, first to last.
///
/// # Safety
///
/// `el` points to a list made by [`cfs_expr_list_parse`] and not freed;
/// the list is not changed while the iterator is used.
unsafe fn ranges(el: *const cfs_expr_list) -> impl Iterator<Item = RangeExpr> {
    // SAFETY: `el` points to a list cfs_expr_list_parse made, not freed and not changed while the
    // iterator is used (# Safety); that function initialized `el_exprs`.
    let entries = unsafe { clist::entries(core::ptr::addr_of!((*el).el_exprs)) };
    entries.map(|link| {
        // `re_link` is the first field: the entry is the range.
        let re = link.cast::<cfs_range_expr>();
        // SAFETY: every entry of `el_exprs` is the `re_link` of a live
        // cfs_range_expr that cfs_expr_list_parse linked there.
        let re = unsafe { &*re };
        RangeExpr {
            lo: re.re_lo,
            hi: re.re_hi,
            stride: re.re_stride,
        }
    })
}

/// Frees `el` and its ranges.
///
/// # Safety
///
/// `el` was made by [`cfs_expr_list_parse`] (or is being made by it) and
/// nobody else uses it.
unsafe fn free(el: *mut cfs_expr_list) {
    // SAFETY: `el` is a live list cfs_expr_list_parse made (or is making) that
    // nobody else uses (# Safety); only its field's address is taken.
    let head = unsafe { core::ptr::addr_of_mut!((*el).el_exprs) };
    // SAFETY: `el_exprs` is initialized and ours.
    while let Some(link) = unsafe { clist::first(head) } {
        // SAFETY: `link` is on our list; unlinking it before freeing.
        unsafe { clist::del(link) };
        // SAFETY: each entry is the first field of a cfs_range_expr that cfs_expr_list_parse
        // allocated as a KBox and leaked; now unlinked, it is freed once.
        drop(unsafe { KBox::from_raw(link.cast::<cfs_range_expr>()) });
    }
    // SAFETY: `el` was allocated as a KBox by cfs_expr_list_parse, and its
    // ranges are gone.
    drop(unsafe { KBox::from_raw(el) });
}

/// Parses an expression list (`cfs_expr_list_parse`): 0 and `*elpp` set,
/// or -EINVAL / -ENOMEM.
///
/// # Safety
///
/// `s` is null or a string of `len` bytes or NUL-terminated before;
/// `elpp` is null or writable.
#[no_mangle]
unsafe extern "C" fn cfs_expr_list_parse(
    s: *mut c_char,
    len: c_int,
    min: u32,
    max: u32,
    elpp: *mut *mut cfs_expr_list,
) -> c_int {
    if s.is_null() || elpp.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `s` is non-null (checked above) and has `len` readable bytes or a
    // NUL before them (# Safety), as c_bytes needs.
    let text = unsafe { c_bytes(s, len) };
    let _nofs = NoFs::enter();
    let Ok(el) = KBox::new(
        cfs_expr_list {
            el_link: NO_LINK,
            el_exprs: NO_LINK,
        },
        GFP_KERNEL,
    ) else {
        return ENOMEM.to_errno();
    };
    let el = KBox::into_raw(el);
    // SAFETY: `el` is a fresh allocation of ours: its heads are set empty
    // where they live.
    unsafe {
        clist::init(core::ptr::addr_of_mut!((*el).el_link));
        clist::init(core::ptr::addr_of_mut!((*el).el_exprs));
    }
    let mut rc = 0;
    for re in expr_list::parse(text, min, max) {
        let Ok(re) = re else {
            rc = EINVAL.to_errno();
            break;
        };
        let node = KBox::new(
            cfs_range_expr {
                re_link: NO_LINK,
                re_lo: re.lo,
                re_hi: re.hi,
                re_stride: re.stride,
            },
            GFP_KERNEL,
        );
        let Ok(node) = node else {
            rc = ENOMEM.to_errno();
            break;
        };
        let node = KBox::into_raw(node);
        // SAFETY: `node` is a fresh allocation and `el` our live list: the
        // node is linked last; `free` takes it back.
        unsafe {
            clist::add_tail(
                core::ptr::addr_of_mut!((*node).re_link),
                core::ptr::addr_of_mut!((*el).el_exprs),
            )
        };
    }
    if rc != 0 {
        // SAFETY: `el` is ours and nobody else has seen it.
        unsafe { free(el) };
        return rc;
    }
    // SAFETY: `elpp` is non-null (checked above) and writable (# Safety).
    unsafe { *elpp = el };
    0
}

/// Every value of `el` in a new array (`cfs_expr_list_values`): how many,
/// 0 for none, -EINVAL beyond `max`, -ENOMEM.
///
/// Lustre counts the array in libcfs's `libcfs_kmem`, and its callers'
/// inline `cfs_expr_list_values_free` takes it off again. lnet.ko does not
/// depend on libcfs and cannot reach that counter (libcfs exports it
/// without _GPL, which `symbol_get` refuses), so the array is not counted:
/// only PtlRPC given a CPT pattern (`ptlrpcd_cpts`, a service's `*_cpts`)
/// calls this, and then libcfs's unload reports the freed bytes as a
/// negative "Portals memory leaked".
///
/// # Safety
///
/// `el` is null or a list made by [`cfs_expr_list_parse`]; `valpp` is null
/// or writable.
#[no_mangle]
unsafe extern "C" fn cfs_expr_list_values(
    el: *mut cfs_expr_list,
    max: c_int,
    valpp: *mut *mut u32,
) -> c_int {
    if el.is_null() || valpp.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `el` is non-null (checked above), a list cfs_expr_list_parse made and not freed (#
    // Safety); only cfs_expr_list_free changes it.
    let count = unsafe { ranges(el) }.fold(0u64, |n, re| n.saturating_add(re.count()));
    if count == 0 {
        return 0;
    }
    let Some(n) = usize::try_from(count)
        .ok()
        .filter(|n| u64::try_from(max).is_ok_and(|m| count <= m) && *n > 0)
    else {
        crate::cerror!("expression list has {count} values, more than the {max} allowed\n");
        return EINVAL.to_errno();
    };
    // The array is kmalloc'ed up to two pages and vmalloc'ed beyond, as
    // Lustre's callers free it by its size (kfree or vfree). Their free
    // also takes its size off libcfs's "memused" counter (a debugging
    // figure only, when libcfs is built with LIBCFS_DEBUG), which lnet.ko
    // does not add to: lnet.ko does not depend on libcfs.ko.
    let vmalloc = match n.checked_mul(core::mem::size_of::<u32>()) {
        Some(bytes) => bytes > 2 * kernel::page::PAGE_SIZE,
        None => true,
    };
    let _nofs = NoFs::enter();
    // SAFETY: `el` is non-null (checked above), a list cfs_expr_list_parse made and not freed (#
    // Safety); only cfs_expr_list_free changes it.
    let values = unsafe { ranges(el) }.flat_map(|re| re.values());
    let filled = if vmalloc {
        fill::<Vmalloc>(n, values)
    } else {
        fill::<Kmalloc>(n, values)
    };
    let Some(ptr) = filled else {
        return ENOMEM.to_errno();
    };
    // SAFETY: `valpp` is non-null (checked above) and writable (# Safety).
    unsafe { *valpp = ptr };
    // n <= max, which is a c_int.
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// Up to `n` values in an array of exactly `n` allocated by `A`, leaked
/// for the C caller to free.
fn fill<A: Allocator>(n: usize, values: impl Iterator<Item = u32>) -> Option<*mut u32> {
    let mut v = kernel::alloc::Vec::<u32, A>::with_capacity(n, GFP_KERNEL).ok()?;
    for x in values.take(n) {
        // Within the capacity: cannot fail.
        v.push(x, GFP_KERNEL).ok()?;
    }
    let (ptr, _len, _cap) = v.into_raw_parts();
    Some(ptr)
}

/// Frees an expression list (`cfs_expr_list_free`).
///
/// # Safety
///
/// `el` is null or a list made by [`cfs_expr_list_parse`] that nobody uses
/// any more.
#[no_mangle]
unsafe extern "C" fn cfs_expr_list_free(el: *mut cfs_expr_list) {
    if !el.is_null() {
        // SAFETY: `el` is non-null here, made by cfs_expr_list_parse and used
        // by nobody any more (# Safety), as `free` needs.
        unsafe { free(el) };
    }
}
