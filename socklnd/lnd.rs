// SPDX-License-Identifier: GPL-2.0

//! The tcp LND's operations table and lnet.ko's LND interface
//! (include/linux/lnet/lnd.h) as this module calls it.

use crate::conn::{Conn, RxReq};
use crate::kapi::bindings::{
    bio_vec, lnet_lnd, lnet_msg, lnet_ni, lnet_ni_tunables, lnet_nid, lnet_tx_desc,
};
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::{lnd, Nid};
use crate::lnet_core::socklnd_params::SockParam;
use crate::ni::SockNi;
use crate::params;
use core::ffi::{c_char, c_int, c_uint, c_void};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

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
    fn try_module_get(module: *mut kernel::bindings::module) -> bool;
    fn module_put(module: *mut kernel::bindings::module);
}

/// This module, for the references its running NIs hold on it.
static THIS: AtomicPtr<kernel::bindings::module> = AtomicPtr::new(core::ptr::null_mut());

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
    THIS.store(module.as_ptr(), Ordering::Relaxed);
    // SAFETY: a static table, unregistered before the module goes.
    kernel::error::to_result(unsafe { lnet_register_lnd(&SOCKLND) })
}

pub(crate) fn unregister() {
    // SAFETY: registered by `register`.
    unsafe { lnet_unregister_lnd(&SOCKLND) };
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

    /// Hands a received header from `conn` to LNet. On success LNet owns
    /// the reference `conn` as its receive context and gives it back
    /// through exactly one `socklnd_recv` (include/linux/lnet/lnd.h); on error
    /// it never took it.
    pub(crate) fn parse(&self, hdr: &[u8], from: &Nid, conn: Arc<Conn>) -> c_int {
        let from = crate::kapi::lnet_abi::nid_to_c(from);
        let private = Arc::into_raw(conn);
        // SAFETY: a started NI; the header and NID outlive the call.
        let rc = unsafe {
            lnet_parse(
                self.0,
                hdr.as_ptr().cast(),
                hdr.len() as c_uint,
                &from,
                private.cast_mut().cast(),
                0,
            )
        };
        if rc < 0 {
            // SAFETY: from `Arc::into_raw` above, and LNet refused the
            // header without calling `socklnd_recv`: the reference is ours.
            drop(unsafe { Arc::from_raw(private) });
        }
        rc
    }
}

/// A message LNet gave us; it goes back through [`Msg::finalize`] once.
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

fn sock_ni<'a>(ni: *mut lnet_ni) -> Option<&'a SockNi> {
    // SAFETY: set by startup to a SockNi that lives until shutdown returns.
    unsafe { lnet_ni_data(ni).cast::<SockNi>().cast_const().as_ref() }
}

/// # Safety
///
/// Called by LNet only.
unsafe extern "C" fn socklnd_startup(ni: *mut lnet_ni) -> c_int {
    let module = THIS.load(Ordering::Relaxed);
    // SAFETY: our own module, loaded while its init or LNet runs this.
    if !unsafe { try_module_get(module) } {
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
    // SAFETY: an NI being started, and a live struct.
    unsafe { lnet_ni_default_tunables(ni, &mut t) };
    match SockNi::start(LnetNi(ni)) {
        Ok(p) => {
            // SAFETY: a started NI; the pointer stays valid until shutdown.
            unsafe { lnet_ni_set_data(ni, p.cast()) };
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
unsafe extern "C" fn socklnd_shutdown(ni: *mut lnet_ni) {
    // SAFETY: a started NI.
    let p = unsafe { lnet_ni_data(ni) }.cast::<SockNi>();
    if p.is_null() {
        return;
    }
    // SAFETY: the SockNi `start` made; LNet calls nothing else for this NI
    // once shutdown begins, except through connections we now stop.
    unsafe {
        SockNi::stop(p);
        lnet_ni_set_data(ni, core::ptr::null_mut());
        module_put(THIS.load(Ordering::Relaxed));
    }
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
    // `Arc::into_raw`; LNet calls this exactly once per parsed header
    // (include/linux/lnet/lnd.h).
    // SAFETY: so it is taken back exactly once, here.
    let conn = unsafe { Arc::<Conn>::from_raw(private.cast_const().cast()) };
    conn.post_rx(req);
    0
}
