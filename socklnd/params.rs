// SPDX-License-Identifier: GPL-2.0

//! ksocklnd's parameters: their live values and the `.set`/`.get`
//! callbacks /sys/module/ksocklnd/parameters and modprobe reach through
//! socklnd_params.c. Names, defaults and ranges are lnet-core's.

use crate::kapi::param::{self, PageWriter};
use crate::kapi::sock::SockOpts;
use crate::lnet_core::lnd_params::LndParam;
use crate::lnet_core::socklnd_params::{self as rules, SockParam};
use core::fmt::Write;
use core::sync::atomic::{AtomicI32, Ordering::Relaxed};
use kernel::bindings::kernel_param;
use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;

const fn d(p: SockParam) -> AtomicI32 {
    AtomicI32::new(p.default_value())
}

/// One value per parameter, in `SockParam::ALL` order. Writers are
/// serialised by the kernel (module load, then sysfs under the module's
/// parameter lock); readers load without a lock.
static LIVE: [AtomicI32; 18] = [
    d(SockParam::SockTimeout),
    d(SockParam::Credits),
    d(SockParam::PeerCredits),
    d(SockParam::PeerBufferCredits),
    d(SockParam::PeerTimeout),
    d(SockParam::KeepaliveIdle),
    d(SockParam::KeepaliveCount),
    d(SockParam::KeepaliveIntvl),
    d(SockParam::Nagle),
    d(SockParam::TxBufferSize),
    d(SockParam::RxBufferSize),
    d(SockParam::Tos),
    d(SockParam::Keepalive),
    d(SockParam::MinReconnectMs),
    d(SockParam::MaxReconnectMs),
    d(SockParam::MinBulk),
    d(SockParam::TypedConns),
    d(SockParam::ZcMinPayload),
];

/// The current value of `p`.
pub(crate) fn get(p: SockParam) -> i32 {
    LIVE.get(p.index())
        .map_or(p.default_value(), |v| v.load(Relaxed))
}

extern "C" {
    fn lnet_get_lnd_timeout() -> core::ffi::c_uint;
}

/// Seconds a connect, handshake or stalled send may take: `sock_timeout`,
/// or LNet's LND timeout when it is 0.
pub(crate) fn timeout_secs() -> u32 {
    // SAFETY: a plain getter exported by lnet.ko.
    let lnet = unsafe { lnet_get_lnd_timeout() };
    rules::effective_timeout(get(SockParam::SockTimeout), lnet)
}

/// The options of a new connection's socket.
pub(crate) fn sock_opts() -> SockOpts {
    SockOpts {
        keepalive_idle: get(SockParam::KeepaliveIdle),
        keepalive_intvl: get(SockParam::KeepaliveIntvl),
        keepalive_count: get(SockParam::KeepaliveCount),
        nagle: get(SockParam::Nagle),
        tx_buffer_size: get(SockParam::TxBufferSize),
        rx_buffer_size: get(SockParam::RxBufferSize),
        tos: get(SockParam::Tos),
    }
}

/// `kernel_param_ops.set` for every ksocklnd parameter.
///
/// # Safety
///
/// Called only by the kernel's parameter code, with its own arguments.
#[no_mangle]
unsafe extern "C" fn ksocknal_param_set(val: *const c_char, kp: *const kernel_param) -> c_int {
    // SAFETY: the kernel passes a registered parameter and a NUL-terminated
    // value (or null), valid for this call.
    let req = unsafe { param::set_request(val, kp) };
    let Some(p) = SockParam::from_name(req.name) else {
        return -rules_einval();
    };
    match rules::parse(p, req.value) {
        Ok(v) => {
            if let Some(cell) = LIVE.get(p.index()) {
                cell.store(v, Relaxed);
            }
            0
        }
        Err(e) => {
            pr_err!("{}\n", e);
            -e.errno()
        }
    }
}

/// `kernel_param_ops.get` for every ksocklnd parameter.
///
/// # Safety
///
/// Called only by the kernel's parameter code, with a page-sized buffer.
#[no_mangle]
unsafe extern "C" fn ksocknal_param_get(buf: *mut c_char, kp: *const kernel_param) -> c_int {
    // SAFETY: the kernel passes a registered parameter, valid for this call.
    let name = unsafe { param::param_name(kp) };
    let Some(p) = SockParam::from_name(name) else {
        return -rules_einval();
    };
    // SAFETY: `.get` is handed a PAGE_SIZE buffer owned by the caller.
    let mut out = unsafe { PageWriter::new(buf) };
    if writeln!(out, "{}", get(p)).is_err() {
        return -rules_einval();
    }
    c_int::try_from(out.len()).unwrap_or(0)
}

fn rules_einval() -> c_int {
    crate::lnet_core::params::EINVAL
}
