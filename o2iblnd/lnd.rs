// SPDX-License-Identifier: GPL-2.0

//! The o2ib LND's operations table and lnet.ko's LND interface
//! (include/linux/lnet/lnd.h) as this module calls it.

use crate::conn::RxCtx;
use crate::kapi::bindings::{
    bio_vec, lnet_lnd, lnet_msg, lnet_ni, lnet_ni_tunables, lnet_nid, lnet_tx_desc,
};
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::{lnd, Nid};
use crate::lnet_core::o2iblnd_params::IbParam;
use crate::ni::IbNi;
use crate::params;
use core::ffi::{c_char, c_int, c_uint, c_void};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

extern "C" {
    fn lnet_register_lnd(lnd: *const lnet_lnd) -> c_int;
    fn lnet_unregister_lnd(lnd: *const lnet_lnd);
    fn lnet_ni_nid(ni: *mut lnet_ni, nid: *mut lnet_nid);
    fn lnet_ni_set_data(ni: *mut lnet_ni, data: *mut c_void);
    fn lnet_ni_data(ni: *mut lnet_ni) -> *mut c_void;
    fn lnet_ni_iface(ni: *mut lnet_ni) -> *const c_char;
    fn lnet_ni_default_tunables(ni: *mut lnet_ni, t: *mut lnet_ni_tunables);
    fn lnet_parse(
        ni: *mut lnet_ni,
        hdr: *const c_void,
        hdr_len: c_uint,
        from: *const lnet_nid,
        private: *mut c_void,
        rdma_req: c_int,
    ) -> c_int;
    fn lnet_finalize(msg: *mut lnet_msg, status: c_int, hstatus: c_uint);
    fn lnet_msg_set_hstatus(msg: *mut lnet_msg, hstatus: c_uint);
    fn try_module_get(module: *mut kernel::bindings::module) -> bool;
    fn module_put(module: *mut kernel::bindings::module);
}

/// This module, for the references its running NIs hold on it.
static THIS: AtomicPtr<kernel::bindings::module> = AtomicPtr::new(core::ptr::null_mut());

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
    THIS.store(module.as_ptr(), Ordering::Relaxed);
    // SAFETY: a static table, unregistered before the module goes.
    kernel::error::to_result(unsafe { lnet_register_lnd(&O2IBLND) })
}

pub(crate) fn unregister() {
    // SAFETY: registered by `register`.
    unsafe { lnet_unregister_lnd(&O2IBLND) };
}

/// An NI as LNet knows it.
#[derive(Clone, Copy)]
pub(crate) struct LnetNi(pub(crate) *mut lnet_ni);

// SAFETY: LNet's NI may be used from any thread while it runs.
unsafe impl Send for LnetNi {}
// SAFETY: as above.
unsafe impl Sync for LnetNi {}

impl LnetNi {
    pub(crate) fn nid(&self) -> Result<Nid> {
        let mut c = lnet_nid::default();
        // SAFETY: a started NI and an out-parameter.
        unsafe { lnet_ni_nid(self.0, &mut c) };
        crate::kapi::lnet_abi::nid_from_c(&c)
    }

    pub(crate) fn iface(&self) -> &CStr {
        // SAFETY: LNet returns a NUL-terminated name that lives with the NI.
        unsafe { CStr::from_char_ptr(lnet_ni_iface(self.0).cast()) }
    }

    /// Hands a received header to LNet with `rx` as its receive context.
    /// On success LNet gives `rx` back through exactly one `o2iblnd_recv`;
    /// on error it never took it and it is returned.
    pub(crate) fn parse(
        &self,
        hdr: &[u8],
        from: &Nid,
        rx: KBox<RxCtx>,
    ) -> core::result::Result<(), (c_int, KBox<RxCtx>)> {
        let from = crate::kapi::lnet_abi::nid_to_c(from);
        let private = KBox::into_raw(rx);
        // SAFETY: a started NI; the header and NID outlive the call.
        let rc = unsafe {
            lnet_parse(
                self.0,
                hdr.as_ptr().cast(),
                hdr.len() as c_uint,
                &from,
                private.cast(),
                0,
            )
        };
        if rc < 0 {
            // SAFETY: from `KBox::into_raw` above, and LNet refused the
            // header without calling `o2iblnd_recv`: the box is ours.
            return Err((rc, unsafe { KBox::from_raw(private) }));
        }
        Ok(())
    }
}

/// A message LNet gave us (or null for a NOOP); it goes back through
/// [`Msg::finalize`] once.
pub(crate) struct Msg(pub(crate) *mut lnet_msg);

// SAFETY: LNet's messages may be finalized from any thread.
unsafe impl Send for Msg {}

impl Msg {
    pub(crate) fn finalize(self, status: i32, hstatus: Status) {
        if !self.0.is_null() {
            // SAFETY: LNet gave us the message and it is finalized only here.
            unsafe { lnet_finalize(self.0, status, hstatus as c_uint) };
        }
    }
}

fn ib_ni<'a>(ni: *mut lnet_ni) -> Option<ArcBorrow<'a, IbNi>> {
    // SAFETY: set by startup to `Arc::into_raw` of the NI, which holds it
    // until shutdown clears it.
    let p = unsafe { lnet_ni_data(ni) }.cast::<IbNi>().cast_const();
    // SAFETY: as above: the reference is live while LNet runs the NI.
    (!p.is_null()).then(|| unsafe { ArcBorrow::from_raw(p) })
}

/// # Safety
///
/// Called by LNet only.
unsafe extern "C" fn o2iblnd_startup(ni: *mut lnet_ni) -> c_int {
    let module = THIS.load(Ordering::Relaxed);
    // SAFETY: our own module, loaded while its init or LNet runs this.
    if !unsafe { try_module_get(module) } {
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
    // SAFETY: an NI being started, and a live struct.
    unsafe { lnet_ni_default_tunables(ni, &mut t) };
    match IbNi::start(LnetNi(ni), &mut t) {
        Ok(n) => {
            // Our own tunables follow the net's: shown as derived.
            // SAFETY: as above.
            unsafe { lnet_ni_default_tunables(ni, &mut t) };
            // SAFETY: a started NI; the reference is taken back at shutdown.
            unsafe { lnet_ni_set_data(ni, Arc::into_raw(n).cast_mut().cast()) };
            0
        }
        Err(e) => {
            // SAFETY: taken above.
            unsafe { module_put(module) };
            e.to_errno()
        }
    }
}

/// # Safety
///
/// Called by LNet only, once per started NI.
unsafe extern "C" fn o2iblnd_shutdown(ni: *mut lnet_ni) {
    // SAFETY: a started NI.
    let p = unsafe { lnet_ni_data(ni) }.cast::<IbNi>().cast_const();
    if p.is_null() {
        return;
    }
    // SAFETY: the reference startup gave LNet; LNet sends nothing more on
    // this NI once shutdown begins.
    let n = unsafe { Arc::from_raw(p) };
    n.stop();
    drop(n);
    // SAFETY: a started NI; then the module reference startup took.
    unsafe {
        lnet_ni_set_data(ni, core::ptr::null_mut());
        module_put(THIS.load(Ordering::Relaxed));
    }
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
            // SAFETY: from lnd_send, before refusing the message.
            unsafe { lnet_msg_set_hstatus(msg, hstatus as c_uint) };
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
    let rx = unsafe { KBox::from_raw(private.cast::<RxCtx>()) };
    // SAFETY: LNet's fragments, valid until the message is finalized.
    let kiov = unsafe { crate::kapi::kiov::slice(kiov.cast_const().cast(), niov) };
    crate::conn::recv(rx, Msg(msg), kiov, offset, mlen, rlen)
}
