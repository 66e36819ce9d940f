// SPDX-License-Identifier: GPL-2.0

//! The tcp LND's operations table and lnet.ko's LND interface
//! (include/linux/lnet/lnd.h) as this module calls it.

use crate::conn::{Conn, RxReq};
use crate::kapi::bindings::{bio_vec, lnet_lnd, lnet_msg, lnet_ni, lnet_ni_tunables, lnet_tx_desc};
use crate::lnet_core::nid::lnd;
use crate::lnet_core::socklnd_params::SockParam;
use crate::ni::SockNi;
use crate::params;
use core::ffi::{c_int, c_uint, c_void};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::ForeignOwnable;

pub(crate) use crate::kapi::lnd::{LnetNi, Msg};

/// This module, for the references its running NIs hold on it.
static THIS: crate::kapi::lnd::ModuleRefs = crate::kapi::lnd::ModuleRefs::new();

static SOCKLND: lnet_lnd = lnet_lnd {
    lnd_type: lnd::SOCK as u32,
    lnd_startup: Some(socklnd_startup),
    lnd_shutdown: Some(socklnd_shutdown),
    lnd_send: Some(socklnd_send),
    lnd_recv: Some(socklnd_recv),
    lnd_get_timeout: Some(socklnd_get_timeout),
};

/// `sock_timeout` as it is now, else LNet's (`ksocknal_timeout`).
extern "C" fn socklnd_get_timeout() -> c_uint {
    params::timeout_secs()
}

pub(crate) fn register(module: &'static ThisModule) -> Result {
    THIS.set(module);
    crate::kapi::lnd::register(&SOCKLND)
}

pub(crate) fn unregister() {
    crate::kapi::lnd::unregister(&SOCKLND);
}

fn sock_ni<'a>(ni: *mut lnet_ni) -> Option<&'a SockNi> {
    // SAFETY: set by startup to a SockNi that lives until shutdown returns.
    unsafe { LnetNi(ni).data().cast::<SockNi>().cast_const().as_ref() }
}

/// # Safety
///
/// Called by LNet only.
unsafe extern "C" fn socklnd_startup(ni: *mut lnet_ni) -> c_int {
    if !THIS.get() {
        return ENODEV.to_errno();
    }
    // The NI's tunables: what `lnetctl net add` gave, the rest from our
    // parameters.
    let mut t = lnet_ni_tunables {
        peer_timeout: params::get(SockParam::PeerTimeout),
        peer_credits: params::get(SockParam::PeerCredits),
        peer_buffer_credits: params::get(SockParam::PeerBufferCredits),
        credits: params::get(SockParam::Credits),
        conns_per_peer: 1,
        timeout: i32::try_from(params::timeout_secs()).unwrap_or(i32::MAX),
        tos: params::get(SockParam::Tos),
        ..crate::kapi::lnet_abi::NI_TUNABLES_UNSET
    };
    LnetNi(ni).default_tunables(&mut t);
    match SockNi::start(LnetNi(ni)) {
        Ok(p) => {
            // SAFETY: the pointer stays valid until shutdown clears it.
            unsafe { LnetNi(ni).set_data(p.cast()) };
            0
        }
        Err(e) => {
            // SAFETY: taken above.
            unsafe { THIS.put() };
            e.to_errno()
        }
    }
}

/// # Safety
///
/// Called by LNet only, once per started NI.
unsafe extern "C" fn socklnd_shutdown(ni: *mut lnet_ni) {
    let p = LnetNi(ni).data().cast::<SockNi>();
    if p.is_null() {
        return;
    }
    // SAFETY: the SockNi `start` made; LNet calls nothing else for this NI
    // once shutdown begins, except through connections we now stop.
    unsafe { SockNi::stop(p) };
    // SAFETY: clearing it.
    unsafe { LnetNi(ni).set_data(core::ptr::null_mut()) };
    // SAFETY: the reference startup took.
    unsafe { THIS.put() };
}

/// # Safety
///
/// Called by LNet only, with a message and descriptor valid until the
/// message is finalized.
unsafe extern "C" fn socklnd_send(
    ni: *mut lnet_ni,
    msg: *mut lnet_msg,
    tx: *const lnet_tx_desc,
) -> c_int {
    let Some(sni) = sock_ni(ni) else {
        return crate::kapi::errno::ENETDOWN().to_errno();
    };
    // Selection avoids an NI whose link is down, but a message may still
    // name it (a recovery ping, a fixed source): fail it now rather than
    // leave it to a connect that cannot complete.
    if sni.link_down.load(core::sync::atomic::Ordering::Acquire) {
        return crate::kapi::errno::ENETDOWN().to_errno();
    }
    match crate::peer::send(sni, msg, tx) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by LNet only, for a header a connection passed to `lnet_parse`.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn socklnd_recv(
    _ni: *mut lnet_ni,
    private: *mut c_void,
    msg: *mut lnet_msg,
    _delayed: c_int,
    niov: c_uint,
    kiov: *mut bio_vec,
    offset: c_uint,
    mlen: c_uint,
    rlen: c_uint,
) -> c_int {
    let req = RxReq {
        msg: Msg(msg),
        kiov: kiov.cast(),
        niov,
        offset,
        mlen,
        rlen,
    };
    // `private` is the reference `LnetNi::parse` gave LNet with
    // `into_foreign`; LNet calls this exactly once per parsed header
    // (include/linux/lnet/lnd.h).
    // SAFETY: so it is taken back exactly once, here.
    let conn = unsafe { <Arc<Conn> as ForeignOwnable>::from_foreign(private.cast_const()) };
    conn.post_rx(req);
    0
}
