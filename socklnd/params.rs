// SPDX-License-Identifier: GPL-2.0

//! ksocklnd's parameters: their live values and the `.set`/`.get`
//! callbacks /sys/module/ksocklnd/parameters and modprobe reach through
//! socklnd_params.c. Names, defaults and ranges are lnet-core's.

use crate::kapi::param::{KernelParam, ParamPage, ParamValue};
use crate::kapi::sock::SockOpts;
use crate::lnet_core::lnd_params::LndParam;
use crate::lnet_core::socklnd_params::{self as rules, SockParam};
use core::fmt::Write;
use core::sync::atomic::{AtomicI32, Ordering::Relaxed};
use kernel::ffi::c_int;
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

/// Seconds a connect, handshake or stalled send may take: `sock_timeout`,
/// or LNet's LND timeout when it is 0.
pub(crate) fn timeout_secs() -> u32 {
    let lnet = crate::kapi::lnd::lnet_lnd_timeout();
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

/// `kernel_param_ops.set` for every ksocklnd parameter; called only by
/// the kernel's parameter code, with its own arguments.
#[no_mangle]
extern "C" fn ksocknal_param_set(val: ParamValue<'_>, kp: Option<&KernelParam>) -> c_int {
    let Some(kp) = kp else {
        return -rules_einval();
    };
    let req = val.request(kp);
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

/// `kernel_param_ops.get` for every ksocklnd parameter; called only by
/// the kernel's parameter code, with a page-sized buffer.
#[no_mangle]
extern "C" fn ksocknal_param_get(buf: ParamPage<'_>, kp: Option<&KernelParam>) -> c_int {
    let Some(p) = kp.and_then(|kp| SockParam::from_name(kp.name())) else {
        return -rules_einval();
    };
    let Some(mut out) = buf.writer() else {
        return -rules_einval();
    };
    if writeln!(out, "{}", get(p)).is_err() {
        return -rules_einval();
    }
    c_int::try_from(out.len()).unwrap_or(0)
}

fn rules_einval() -> c_int {
    crate::lnet_core::params::EINVAL
}
