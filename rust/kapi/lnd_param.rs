// SPDX-License-Identifier: GPL-2.0

//! The `kernel_param_ops` callbacks of an LND's integer parameters, over
//! their live values (lnet-core's `lnd_params::Live`): each LND's C table
//! (include/lnet_rs/param_table.h) points its parameters at two
//! `#[no_mangle]` functions that call these.

use super::param::{KernelParam, ParamPage, ParamValue};
use crate::lnet_core::lnd_params::{Live, LndParam};
use crate::lnet_core::params::EINVAL;
use core::fmt::Write;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// `.set`: a write of `val` to `kp`, one of `live`'s; refused with a
/// console line and the errno Lustre gives, the old value kept.
pub fn set<P: LndParam, const N: usize>(
    live: &Live<P, N>,
    val: ParamValue<'_>,
    kp: Option<&KernelParam>,
) -> c_int {
    let Some(kp) = kp else {
        return -EINVAL;
    };
    match live.set(kp.name(), val.get()) {
        Some(Ok(())) => 0,
        Some(Err(e)) => {
            pr_err!("{}\n", e);
            -e.errno()
        }
        None => -EINVAL,
    }
}

/// `.get`: the value of `kp`, one of `live`'s, and a newline, into the
/// page; the bytes written.
pub fn get<P: LndParam, const N: usize>(
    live: &Live<P, N>,
    buf: ParamPage<'_>,
    kp: Option<&KernelParam>,
) -> c_int {
    let Some(v) = kp.and_then(|kp| live.show(kp.name())) else {
        return -EINVAL;
    };
    show(buf, format_args!("{v}"))
}

/// Writes `what` and a newline into a `.get` callback's page: the bytes
/// written.
pub fn show(buf: ParamPage<'_>, what: core::fmt::Arguments<'_>) -> c_int {
    let Some(mut out) = buf.writer() else {
        return -EINVAL;
    };
    if writeln!(out, "{what}").is_err() {
        return -EINVAL;
    }
    c_int::try_from(out.len()).unwrap_or(0)
}
