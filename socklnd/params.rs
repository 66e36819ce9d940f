// SPDX-License-Identifier: GPL-2.0

//! ksocklnd's parameters: their live values and the `.set`/`.get`
//! callbacks /sys/module/ksocklnd/parameters and modprobe reach through
//! socklnd_params.c. Names, defaults and ranges are lnet-core's.

use crate::kapi::lnd_param;
use crate::kapi::param::{KernelParam, ParamPage, ParamValue};
use crate::kapi::sock::SockOpts;
use crate::lnet_core::lnd_params::Live;
use crate::lnet_core::socklnd_params::{self as rules, SockParam};
use kernel::ffi::c_int;

/// One value per parameter, starting at Lustre's defaults.
static LIVE: Live<SockParam, 20> = Live::new(SockParam::DEFAULTS);

/// The current value of `p`.
pub(crate) fn get(p: SockParam) -> i32 {
    LIVE.get(p)
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
    lnd_param::set(&LIVE, val, kp)
}

/// `kernel_param_ops.get` for every ksocklnd parameter; called only by
/// the kernel's parameter code, with a page-sized buffer.
#[no_mangle]
extern "C" fn ksocknal_param_get(buf: ParamPage<'_>, kp: Option<&KernelParam>) -> c_int {
    lnd_param::get(&LIVE, buf, kp)
}
