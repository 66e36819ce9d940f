// SPDX-License-Identifier: GPL-2.0

//! The loopback LND (`0@lo`): a message to this node is parsed as if it had
//! just arrived, and its payload is copied straight into the matching MD.
//! It goes through the same LND operations table as the network LNDs.

use crate::kapi::bindings::{lnet_lnd, lnet_ni_tunables, lnet_tx_desc};
use crate::kapi::kiov;
use crate::lnd::{lnet_msg, lnet_ni};
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::lnd;
use crate::ni::Ni;
use core::ffi::{c_int, c_uint, c_void};
use kernel::error::code::EINVAL;

/// The NI LNet calls the loopback LND for.
///
/// # Safety
///
/// `ni` is null or the NI an entry point of the LND was called with: an
/// `Ni` of ours (`Ni::as_c`), alive during the call.
unsafe fn ni_ref<'a>(ni: *mut lnet_ni) -> Option<&'a Ni> {
    // SAFETY: null or a live `Ni` (# Safety), to which LNet makes only
    // shared references.
    unsafe { ni.cast::<Ni>().cast_const().as_ref() }
}

/// # Safety
///
/// Called by LNet only.
unsafe extern "C" fn lolnd_startup(ni: *mut lnet_ni) -> c_int {
    // No credits and no peers: zero tunables, no LND tunables.
    let mut t = lnet_ni_tunables {
        peer_timeout: 0,
        peer_credits: 0,
        peer_buffer_credits: 0,
        credits: 0,
        conns_per_peer: -1,
        timeout: -1,
        tos: -1,
        ..crate::kapi::lnet_abi::NI_TUNABLES_UNSET
    };
    // SAFETY: the NI this startup is called for.
    if let Some(ni) = unsafe { ni_ref(ni) } {
        crate::lnd::default_tunables(ni, &mut t);
    }
    0
}

/// # Safety
///
/// Called by LNet only.
unsafe extern "C" fn lolnd_shutdown(_ni: *mut lnet_ni) {}

/// # Safety
///
/// Called by LNet only, with a message it has not finalized.
unsafe extern "C" fn lolnd_send(
    ni: *mut lnet_ni,
    msg: *mut lnet_msg,
    tx: *const lnet_tx_desc,
) -> c_int {
    // SAFETY: LNet passes a live descriptor of `msg`.
    let tx = unsafe { &*tx };
    let from = tx.target.nid;
    let len = (tx.hdr_len as usize).min(tx.hdr.len());
    let hdr = tx.hdr.get(..len).unwrap_or(&[]);
    // SAFETY: the NI this send is called for.
    let Some(ni) = (unsafe { ni_ref(ni) }) else {
        return EINVAL.to_errno();
    };
    // The message is its own private: lolnd_recv copies from it.
    crate::lnd::lnet_parse_rs(ni, hdr, &from, msg.cast(), false)
}

/// # Safety
///
/// Called by LNet only, for a header lolnd_send parsed.
unsafe extern "C" fn lolnd_recv(
    _ni: *mut lnet_ni,
    private: *mut c_void,
    rx: *mut lnet_msg,
    _delayed: c_int,
    niov: c_uint,
    kiov: *mut crate::kapi::bindings::bio_vec,
    offset: c_uint,
    mlen: c_uint,
    _rlen: c_uint,
) -> c_int {
    let tx: *mut lnet_msg = private.cast();
    if !rx.is_null() && mlen > 0 {
        // SAFETY: `tx` is the message lolnd_send parsed, alive until we
        // finalize it below; `kiov` is the matched MD's, held by `rx`.
        unsafe {
            let src = crate::msg::Msg::desc_of(tx);
            let src_v = kiov::slice(src.kiov.cast(), src.niov);
            let dst_v = kiov::slice(kiov.cast(), niov);
            kiov::copy(dst_v, offset, src_v, src.offset, mlen);
        }
    }
    // Both messages are LNet's, from Msg::into_c: `tx` as lolnd_send's
    // private, `rx` given to this call.
    // SAFETY: neither is finalized yet; each is taken back once, here.
    let (rx, tx) = unsafe {
        (
            (!rx.is_null()).then(|| crate::msg::Msg::from_c(rx)),
            crate::msg::Msg::from_c(tx),
        )
    };
    if let Some(rx) = rx {
        crate::lnd::finalize_held(rx, 0, Status::Ok);
    }
    crate::lnd::finalize_held(tx, 0, Status::Ok);
    0
}

/// The loopback LND's operations.
pub(crate) static LOLND: lnet_lnd = lnet_lnd {
    lnd_type: lnd::LO as u32,
    lnd_startup: Some(lolnd_startup),
    lnd_shutdown: Some(lolnd_shutdown),
    lnd_send: Some(lolnd_send),
    lnd_recv: Some(lolnd_recv),
    // Deadlines from transaction_timeout, as Lustre's lolnd.
    lnd_get_timeout: None,
    // Nothing to list or close, as Lustre's lolnd.
    lnd_ctl: None,
};
