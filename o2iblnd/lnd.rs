// SPDX-License-Identifier: GPL-2.0

//! The o2ib LND's operations table and lnet.ko's LND interface
//! (include/linux/lnet/lnd.h) as this module calls it.

use crate::conn::RxCtx;
use crate::kapi::bindings::{bio_vec, lnet_lnd, lnet_msg, lnet_ni, lnet_ni_tunables, lnet_tx_desc};
use crate::lnet_core::nid::lnd;
use crate::lnet_core::o2iblnd_params::IbParam;
use crate::ni::IbNi;
use crate::params;
use core::ffi::{c_int, c_uint, c_void};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::ForeignOwnable;

pub(crate) use crate::kapi::lnd::{LnetNi, Msg};

/// This module, for the references its running NIs hold on it.
static THIS: crate::kapi::lnd::ModuleRefs = crate::kapi::lnd::ModuleRefs::new();

static O2IBLND: lnet_lnd = lnet_lnd {
    lnd_type: lnd::O2IB as u32,
    lnd_startup: Some(o2iblnd_startup),
    lnd_shutdown: Some(o2iblnd_shutdown),
    lnd_send: Some(o2iblnd_send),
    lnd_recv: Some(o2iblnd_recv),
    lnd_get_timeout: Some(o2iblnd_get_timeout),
};

/// `timeout` as it is now, else LNet's (`kiblnd_timeout`).
extern "C" fn o2iblnd_get_timeout() -> c_uint {
    params::timeout_secs()
}

pub(crate) fn register(module: &'static ThisModule) -> Result {
    THIS.set(module);
    crate::kapi::lnd::register(&O2IBLND)
}

pub(crate) fn unregister() {
    crate::kapi::lnd::unregister(&O2IBLND);
}

fn ib_ni<'a>(ni: *mut lnet_ni) -> Option<ArcBorrow<'a, IbNi>> {
    // Set by startup to `Arc::into_raw` of the NI, which holds it until
    // shutdown clears it.
    let p = LnetNi(ni).data().cast::<IbNi>().cast_const();
    // SAFETY: as just said: the reference is live while LNet runs the NI.
    (!p.is_null()).then(|| unsafe { ArcBorrow::from_raw(p) })
}

/// # Safety
///
/// Called by LNet only.
unsafe extern "C" fn o2iblnd_startup(ni: *mut lnet_ni) -> c_int {
    if !THIS.get() {
        return ENODEV.to_errno();
    }
    let mut t = lnet_ni_tunables {
        peer_timeout: params::get(IbParam::PeerTimeout),
        peer_credits: params::get(IbParam::PeerCredits),
        peer_buffer_credits: params::get(IbParam::PeerBufferCredits),
        credits: params::get(IbParam::Credits),
        conns_per_peer: params::get(IbParam::ConnsPerPeer),
        timeout: i32::try_from(params::timeout_secs()).unwrap_or(i32::MAX),
        tos: params::get(IbParam::Tos),
        ..crate::kapi::lnet_abi::NI_TUNABLES_UNSET
    };
    LnetNi(ni).default_tunables(&mut t);
    match IbNi::start(LnetNi(ni), &mut t) {
        Ok(n) => {
            // Our own tunables follow the net's: shown as derived.
            LnetNi(ni).default_tunables(&mut t);
            // SAFETY: the reference is taken back at shutdown.
            unsafe { LnetNi(ni).set_data(Arc::into_raw(n).cast_mut().cast()) };
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
unsafe extern "C" fn o2iblnd_shutdown(ni: *mut lnet_ni) {
    let p = LnetNi(ni).data().cast::<IbNi>().cast_const();
    if p.is_null() {
        return;
    }
    // SAFETY: the reference startup gave LNet; LNet sends nothing more on
    // this NI once shutdown begins.
    let n = unsafe { Arc::from_raw(p) };
    let listener = n.stop();
    // The PD and buffers go first: the listener holds the device.
    drop(n);
    drop(listener);
    // SAFETY: clearing it.
    unsafe { LnetNi(ni).set_data(core::ptr::null_mut()) };
    // SAFETY: the module reference startup took.
    unsafe { THIS.put() };
}

/// # Safety
///
/// Called by LNet only, with a message and descriptor valid until the
/// message is finalized.
unsafe extern "C" fn o2iblnd_send(
    ni: *mut lnet_ni,
    msg: *mut lnet_msg,
    tx: *const lnet_tx_desc,
) -> c_int {
    let Some(n) = ib_ni(ni) else {
        return crate::kapi::errno::ENETDOWN().to_errno();
    };
    // SAFETY: LNet's descriptor, valid for this call.
    let desc = unsafe { &*tx };
    match crate::tx::Tx::from_lnet(&n, Msg(msg), desc) {
        Ok(tx) => {
            crate::ni::launch(&n, tx);
            0
        }
        Err((e, hstatus)) => {
            Msg(msg).set_hstatus(hstatus);
            e.to_errno()
        }
    }
}

/// # Safety
///
/// Called by LNet only, for a header passed to `lnet_parse`.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn o2iblnd_recv(
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
    // `private` is the box `LnetNi::parse` gave LNet; LNet calls this
    // exactly once per parsed header (include/linux/lnet/lnd.h).
    // SAFETY: so it is taken back exactly once, here.
    let rx = unsafe { <KBox<RxCtx> as ForeignOwnable>::from_foreign(private.cast_const()) };
    // SAFETY: LNet's fragments, valid until the message is finalized.
    let kiov = unsafe { crate::kapi::kiov::slice(kiov.cast_const().cast(), niov) };
    crate::conn::recv(rx, Msg(msg), kiov, offset, mlen, rlen)
}
