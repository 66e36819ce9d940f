// SPDX-License-Identifier: GPL-2.0

//! Lustre's expression lists for C callers (`<linux/lnet/lib-types.h>`):
//! PtlRPC parses its CPU partition patterns with `cfs_expr_list_parse` and
//! reads their values with `cfs_expr_list_values`. The syntax is
//! lnet-core's (`expr_list.rs`); here the ranges are built as the C
//! structures Lustre's header makes public, linked on their list_heads.

use crate::kapi::bindings::{cfs_expr_list, cfs_range_expr};
use crate::kapi::clist::{Entry, ListHead, NoFs};
use crate::kapi::ffi;
use crate::lnet_core::expr_list::{self, RangeExpr};
use core::ffi::c_int;
use core::mem::{offset_of, size_of, MaybeUninit};
use kernel::alloc::allocator::{Kmalloc, Vmalloc};
use kernel::alloc::Allocator;
use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::types::ForeignOwnable;

/// One range (`struct cfs_range_expr` after its `re_link`).
#[repr(C)]
struct Range {
    lo: u32,
    hi: u32,
    stride: u32,
}

/// An expression list (`struct cfs_expr_list`), as Lustre's header lays it
/// out: C callers hold it by pointer only.
#[pin_data]
#[repr(C)]
pub(crate) struct ExprList {
    /// `el_link`: for callers' own lists of expression lists.
    #[pin]
    link: ListHead<()>,
    /// `el_exprs`: the ranges, in the order written.
    #[pin]
    exprs: ListHead<Range>,
}

// The header's layout: callers compiled against it see these fields.
const _: () = {
    assert!(size_of::<ExprList>() == size_of::<cfs_expr_list>());
    assert!(offset_of!(ExprList, exprs) == offset_of!(cfs_expr_list, el_exprs));
    assert!(size_of::<Entry<Range>>() == size_of::<cfs_range_expr>());
    assert!(Entry::<Range>::VALUE_OFFSET == offset_of!(cfs_range_expr, re_lo));
    assert!(
        offset_of!(Range, hi) + Entry::<Range>::VALUE_OFFSET == offset_of!(cfs_range_expr, re_hi)
    );
    assert!(
        offset_of!(Range, stride) + Entry::<Range>::VALUE_OFFSET
            == offset_of!(cfs_range_expr, re_stride)
    );
};

impl ExprList {
    /// The ranges, first to last.
    fn ranges(&self) -> impl Iterator<Item = RangeExpr> + '_ {
        self.exprs.iter().map(|re| RangeExpr {
            lo: re.lo,
            hi: re.hi,
            stride: re.stride,
        })
    }
}

/// Parses an expression list (`cfs_expr_list_parse`): 0 and `*elpp` set,
/// or -EINVAL / -ENOMEM.
///
/// C passes `elpp` null or writable, and gives the list back to
/// [`cfs_expr_list_free`] only.
///
/// # Safety
///
/// `s` is null or a string of `len` bytes or NUL-terminated before.
#[no_mangle]
unsafe extern "C" fn cfs_expr_list_parse(
    s: *mut c_char,
    len: c_int,
    min: u32,
    max: u32,
    elpp: Option<&mut MaybeUninit<*mut ExprList>>,
) -> c_int {
    // SAFETY: `s` is null or has `len` readable bytes or a NUL before them,
    // unchanged during this call (# Safety), as ffi::text needs.
    let (Some(text), Some(elpp)) = (unsafe { ffi::text(s, len) }, elpp) else {
        return EINVAL.to_errno();
    };
    let _nofs = NoFs::enter();
    let init = pin_init!(ExprList {
        link <- ListHead::new(),
        exprs <- ListHead::new(),
    });
    let Ok(el) = KBox::pin_init(init, GFP_KERNEL) else {
        return ENOMEM.to_errno();
    };
    for re in expr_list::parse(text, min, max) {
        let Ok(re) = re else {
            return EINVAL.to_errno();
        };
        let range = Range {
            lo: re.lo,
            hi: re.hi,
            stride: re.stride,
        };
        if el.exprs.push_back(range, GFP_KERNEL).is_err() {
            return ENOMEM.to_errno();
        }
    }
    elpp.write(el.into_foreign().cast_mut().cast());
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
/// C passes `el` null or a list from [`cfs_expr_list_parse`], and `valpp`
/// null or writable.
#[no_mangle]
extern "C" fn cfs_expr_list_values(
    el: Option<&ExprList>,
    max: c_int,
    valpp: Option<&mut MaybeUninit<*mut u32>>,
) -> c_int {
    let (Some(el), Some(valpp)) = (el, valpp) else {
        return EINVAL.to_errno();
    };
    let count = el.ranges().fold(0u64, |n, re| n.saturating_add(re.count()));
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
    let values = el.ranges().flat_map(|re| re.values());
    let filled = if vmalloc {
        fill::<Vmalloc>(n, values)
    } else {
        fill::<Kmalloc>(n, values)
    };
    let Some(ptr) = filled else {
        return ENOMEM.to_errno();
    };
    valpp.write(ptr);
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

/// Frees an expression list and its ranges (`cfs_expr_list_free`).
///
/// C passes null or a list from [`cfs_expr_list_parse`] that nobody uses
/// any more.
#[no_mangle]
extern "C" fn cfs_expr_list_free(el: Option<Pin<KBox<ExprList>>>) {
    drop(el);
}
