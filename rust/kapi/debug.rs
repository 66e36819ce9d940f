// SPDX-License-Identifier: GPL-2.0

//! The debug mask that decides which of LNet's and the LNDs' lines reach
//! the console: lnet.ko's `libcfs_debug` parameter, with Lustre's classes
//! (`lnet_core::debug`). lnet-rs keeps no trace buffer (`lctl dk`), so a
//! class in the mask prints and one out of it is dropped.
//!
//! Lines go through the macros: `cdebug!(class, ...)` for events an
//! administrator may want to follow (`D_NET`: one line per message or
//! connection event, off by default), and the rate-limited `cneterr!`,
//! `cerror!` and `cwarn!` for failures a peer can cause at will.

use super::kthread;
use crate::lnet_core::debug::{self as classes, D_EMERG, D_ERROR, D_WARNING};
use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;

// lnet.ko owns the mask; lnet_params.c exports it to the LNDs and gives it
// its parameter.
#[cfg(not(kapi_lnd))]
#[allow(non_upper_case_globals)]
#[no_mangle]
static lnet_debug_mask: AtomicU32 = AtomicU32::new(classes::DEFAULT);

#[cfg(kapi_lnd)]
extern "C" {
    #[allow(non_upper_case_globals)]
    static lnet_debug_mask: AtomicU32;
}

/// The live mask.
#[cfg(kapi_lnd)]
pub fn cell() -> &'static AtomicU32 {
    // SAFETY: lnet.ko exports the static, an `AtomicU32` (a `u32`'s layout),
    // and lives as long as this module, which depends on it.
    unsafe { &*core::ptr::addr_of!(lnet_debug_mask) }
}

/// The live mask.
#[cfg(not(kapi_lnd))]
pub fn cell() -> &'static AtomicU32 {
    &lnet_debug_mask
}

/// Whether a line of `class` prints now.
pub fn shows(class: u32) -> bool {
    classes::shows(cell().load(Relaxed), class)
}

/// Prints one line at the log level its class calls for.
pub fn print(class: u32, args: fmt::Arguments<'_>) {
    if class & (D_EMERG | D_ERROR) != 0 {
        pr_err!("{}", args);
    } else if class & D_WARNING != 0 {
        pr_warn!("{}", args);
    } else {
        pr_info!("{}", args);
    }
}

/// One call site's rate limit (lnet-core's, on the kernel's clock).
pub struct RateLimit(classes::RateLimit);

impl RateLimit {
    /// A limit no line has gone through yet.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        RateLimit(classes::RateLimit::new())
    }

    /// Whether a line of `class` from call site `site` may print now;
    /// what the site dropped in the last window is told first.
    pub fn allow(&self, class: u32, site: &str) -> bool {
        let a = self.0.allow(kthread::now_ms());
        if a.missed > 0 {
            print(
                class,
                format_args!("{}: {} similar line(s) suppressed\n", site, a.missed),
            );
        }
        a.print
    }
}

/// A line of a class (a `lnet_core::debug::D_*` bit), printed when the
/// debug mask shows it (Lustre's `CDEBUG`).
#[macro_export]
macro_rules! cdebug {
    ($class:expr, $($arg:tt)*) => {{
        let class: u32 = $class;
        if $crate::kapi::debug::shows(class) {
            $crate::kapi::debug::print(class, format_args!($($arg)*));
        }
    }};
}

/// As `cdebug!`, at most 10 lines per 5 s from this call site (Lustre's
/// `CDEBUG_LIMIT`): for anything a peer can trigger. One budget per site,
/// whichever peer or class (a site may pick its class per line) uses it.
#[macro_export]
macro_rules! cdebug_limit {
    ($class:expr, $($arg:tt)*) => {{
        static CDEBUG_SITE_LIMIT: $crate::kapi::debug::RateLimit =
            $crate::kapi::debug::RateLimit::new();
        let class: u32 = $class;
        if $crate::kapi::debug::shows(class)
            && CDEBUG_SITE_LIMIT.allow(class, concat!(module_path!(), ":", line!()))
        {
            $crate::kapi::debug::print(class, format_args!($($arg)*));
        }
    }};
}

/// A line per message or connection event (`CDEBUG(D_NET, ...)`): off by
/// default.
#[macro_export]
macro_rules! cnet {
    ($($arg:tt)*) => {
        $crate::cdebug!($crate::lnet_core::debug::D_NET, $($arg)*)
    };
}

/// A network error (`CNETERR`): shown by default, rate-limited.
#[macro_export]
macro_rules! cneterr {
    ($($arg:tt)*) => {
        $crate::cdebug_limit!($crate::lnet_core::debug::D_NETERROR, $($arg)*)
    };
}

/// An error (`CERROR`): always shown, rate-limited.
#[macro_export]
macro_rules! cerror {
    ($($arg:tt)*) => {
        $crate::cdebug_limit!($crate::lnet_core::debug::D_ERROR, $($arg)*)
    };
}

/// A warning (`CWARN`): always shown, rate-limited.
#[macro_export]
macro_rules! cwarn {
    ($($arg:tt)*) => {
        $crate::cdebug_limit!($crate::lnet_core::debug::D_WARNING, $($arg)*)
    };
}
