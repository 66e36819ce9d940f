// SPDX-License-Identifier: GPL-2.0

//! The LND interface (include/linux/lnet/lnd.h): the registry of LNDs, the
//! calls LNet makes into an LND through its operations table, and the C
//! entry points an LND calls (registering, its NIs, `lnet_parse`,
//! `lnet_finalize` and the REPLY of an optimized GET).

use crate::api::{errno, lnet, nid_from_c, nid_to_c};
use crate::kapi::bindings::{bio_vec, lnet_lnd, lnet_ni_tunables, lnet_nid, lnet_tx_desc};
use crate::kapi::errno::*;
use crate::kapi::ffi::LndArg;
use crate::kapi::kiov::BioVec;
use crate::lnet_core::credits::NetTunables;
use crate::lnet_core::health::Status;
use crate::msg;
use crate::ni::Ni;
use crate::startup;
use crate::state::TheLnet;
use core::ffi::{c_int, c_uint, c_void};
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;

/// `struct lnet_ni` and `struct lnet_msg` as LNDs see them: opaque; really
/// an [`Ni`] and a [`crate::msg::Msg`].
pub(crate) use crate::kapi::bindings::{lnet_msg, lnet_ni};

/// A registered LND's operations table. It lives in the LND's module, which
/// unregisters it before unloading, and LNet stops every NI of an LND
/// before the LND can be unregistered.
///
/// # Invariants
///
/// `self.0` is non-null and points to an LND's `struct lnet_lnd` (or to
/// the loopback LND's static `LOLND`), which nothing writes while it is
/// registered and which stays valid while LNet may call it: the LND
/// unregisters it only as its module unloads, and its module holds a
/// reference on itself for each NI it runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct LndRef(*const lnet_lnd);

// SAFETY: by the type invariant the table is not written while registered,
// and its operations may be called from any thread (an LND requirement, as
// in Lustre).
unsafe impl Send for LndRef {}
// SAFETY: `&LndRef` only reads the pointer and calls the table's operations,
// which LNDs must allow from any thread at once; by the type invariant
// nothing writes the table meanwhile.
unsafe impl Sync for LndRef {}

impl LndRef {
    /// The table an LND registers or unregisters, or None for null.
    pub(crate) fn from_arg(lnd: &LndArg) -> Option<LndRef> {
        let p = lnd.as_ptr();
        if p.is_null() {
            None
        } else {
            // INVARIANT: non-null (checked above), and by `LndArg`'s
            // invariant a table its LND keeps, unwritten, while it is
            // registered, and LNet stops the LND's NIs before it can be
            // unregistered (its module holds a reference for each).
            Some(LndRef(p))
        }
    }

    /// The loopback LND's table.
    pub(crate) fn loopback() -> LndRef {
        // INVARIANT: a non-null `static` without interior mutability,
        // never written; its operations (lolnd.rs) are LNet's own and
        // follow lnd.h.
        LndRef(&crate::lolnd::LOLND)
    }

    fn ops(&self) -> &lnet_lnd {
        // SAFETY: non-null, and valid and unwritten while LNet may call it
        // (the type invariant); only a shared reference is made.
        unsafe { &*self.0 }
    }

    pub(crate) fn lnd_type(&self) -> u32 {
        self.ops().lnd_type
    }

    /// The LND's timeout now, if it has one (`lnd_get_timeout`).
    pub(crate) fn timeout(&self) -> Option<u32> {
        let f = self.ops().lnd_get_timeout?;
        // SAFETY: a getter of the registered table, callable anywhere.
        Some(unsafe { f() })
    }

    pub(crate) fn startup(&self, ni: &Ni) -> Result {
        let Some(f) = self.ops().lnd_startup else {
            return Err(EINVAL);
        };
        // SAFETY: `ni` outlives the call and stays valid until shutdown.
        kernel::error::to_result(unsafe { f(ni.as_c().cast()) })
    }

    pub(crate) fn shutdown(&self, ni: &Ni) {
        if let Some(f) = self.ops().lnd_shutdown {
            // SAFETY: the NI was started by this LND.
            unsafe { f(ni.as_c().cast()) };
        }
    }

    /// Hands `msg` to the LND; on error the caller finalizes it.
    pub(crate) fn send(&self, ni: &Ni, msg: *mut lnet_msg, tx: *const lnet_tx_desc) -> Result {
        let Some(f) = self.ops().lnd_send else {
            return Err(EINVAL);
        };
        // SAFETY: `msg` and `tx` stay valid until the message is finalized.
        kernel::error::to_result(unsafe { f(ni.as_c().cast(), msg.cast(), tx) })
    }

    /// Hands one of Lustre's /dev/lnet commands to the LND of `ni`
    /// (`lnd_ctl`), with the checked argument `arg`: EINVAL from an LND
    /// without the operation, as Lustre's `LNetCtl`. The caller keeps the
    /// NI started for the call and holds no lock of LNet's.
    pub(crate) fn ctl(&self, ni: &Ni, cmd: u32, arg: &mut [u8]) -> Result {
        let Some(f) = self.ops().lnd_ctl else {
            return Err(EINVAL);
        };
        let len = c_uint::try_from(arg.len()).map_err(|_| EINVAL)?;
        // SAFETY: `ni` is started and stays so for the call (the caller's
        // promise); `arg` is `len` writable bytes, borrowed for the call.
        let rc = unsafe { f(ni.as_c().cast(), cmd, arg.as_mut_ptr().cast(), len) };
        // Lustre's LNetCtl: a positive answer is success.
        kernel::error::to_result(rc.min(0))
    }

    /// Asks the LND to receive (or, with a null `msg`, discard) a payload.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn recv(
        &self,
        ni: &Ni,
        private: *mut core::ffi::c_void,
        msg: *mut lnet_msg,
        delayed: bool,
        kiov: *mut BioVec,
        niov: u32,
        offset: u32,
        mlen: u32,
        rlen: u32,
    ) -> Result {
        let Some(f) = self.ops().lnd_recv else {
            return Err(EINVAL);
        };
        // SAFETY: the LND gave `private` to lnet_parse; `kiov` belongs to an
        // MD the message holds a reference on or to its router buffer.
        kernel::error::to_result(unsafe {
            f(
                ni.as_c().cast(),
                private,
                msg.cast(),
                delayed.into(),
                niov,
                kiov.cast(),
                offset,
                mlen,
                rlen,
            )
        })
    }
}

// ---- The calls an LND makes into LNet ----

/// Registers an LND: `lnd` is its operations table ([`LndArg`]).
#[no_mangle]
extern "C" fn lnet_register_lnd(lnd: LndArg) -> c_int {
    let (Ok(lnet), Some(r)) = (lnet(), LndRef::from_arg(&lnd)) else {
        return EINVAL.to_errno();
    };
    errno(startup::register_lnd(lnet, r))
}

/// Unregisters an LND: `lnd` is the table it registered ([`LndArg`]).
#[no_mangle]
extern "C" fn lnet_unregister_lnd(lnd: LndArg) {
    if let (Ok(lnet), Some(r)) = (lnet(), LndRef::from_arg(&lnd)) {
        startup::unregister_lnd(lnet, r);
    }
}

/// The NI's NID. The LND passes a started NI (an `Ni` of ours, from
/// `Ni::as_c`, alive until its shutdown) and a writable NID, as to every
/// NI entry point below.
#[no_mangle]
extern "C" fn lnet_ni_nid(ni: Option<&Ni>, nid: Option<&mut lnet_nid>) {
    if let (Some(ni), Some(out)) = (ni, nid) {
        *out = nid_to_c(&ni.nid);
    }
}

/// Keeps the LND's data for the NI (only stored, never read by LNet).
#[no_mangle]
extern "C" fn lnet_ni_set_data(ni: Option<&Ni>, data: *mut c_void) {
    if let Some(ni) = ni {
        ni.data.store(data, core::sync::atomic::Ordering::Release);
    }
}

/// The LND's data for the NI.
#[no_mangle]
extern "C" fn lnet_ni_data(ni: Option<&Ni>) -> *mut c_void {
    match ni {
        Some(ni) => ni.data.load(core::sync::atomic::Ordering::Acquire),
        None => core::ptr::null_mut(),
    }
}

/// The NI's interface name, NUL-terminated, "" for none.
#[no_mangle]
extern "C" fn lnet_ni_iface(ni: Option<&Ni>) -> *const kernel::ffi::c_char {
    match ni {
        Some(ni) => ni.iface.as_ptr().cast(),
        None => c"".as_ptr().cast(),
    }
}

/// The LND's startup completes the NI's tunables with its defaults
/// (`lnet_ni_default_tunables`); `t` gets the values the NI runs with.
/// The LND passes the NI its startup runs for.
#[no_mangle]
extern "C" fn lnet_ni_default_tunables(ni: Option<&Ni>, t: Option<&mut lnet_ni_tunables>) {
    if let (Some(ni), Some(t)) = (ni, t) {
        default_tunables(ni, t);
    }
}

/// The LND tunables an administrator gave the NI (`lnetctl net add`),
/// -1 where not given, into `t`'s LND fields (`conns_per_peer`, `tos` and
/// o2ib's), for the LND's startup to complete: `lnet_ni_lnd_tunables`.
#[no_mangle]
extern "C" fn lnet_ni_lnd_tunables(ni: Option<&Ni>, t: Option<&mut lnet_ni_tunables>) {
    let (Some(ni), Some(t)) = (ni, t) else {
        return;
    };
    let own = &ni.tunables;
    t.conns_per_peer = own.conns_per_peer.load(Relaxed);
    t.tos = own.tos.load(Relaxed);
    let [hiw, mod_, sends, pool, flush, cache, ntx] =
        [0, 1, 2, 3, 4, 5, 6].map(|i| own.o2ib.get(i).map_or(-1, |c| c.load(Relaxed)));
    t.peercredits_hiw = hiw;
    t.map_on_demand = mod_;
    t.concurrent_sends = sends;
    t.fmr_pool_size = pool;
    t.fmr_flush_trigger = flush;
    t.fmr_cache = cache;
    t.ntx = ntx;
}

/// The body of [`lnet_ni_default_tunables`], which the loopback LND, inside
/// lnet.ko, calls directly.
pub(crate) fn default_tunables(ni: &Ni, t: &mut lnet_ni_tunables) {
    let lnd = NetTunables {
        peer_timeout: t.peer_timeout,
        peer_credits: t.peer_credits,
        peer_buffer_credits: t.peer_buffer_credits,
        credits: t.credits,
    };
    let r = ni.net_tunables().with_defaults(&lnd);
    ni.set_net_tunables(&r);
    let own = &ni.tunables;
    own.conns_per_peer.store(t.conns_per_peer, Relaxed);
    own.lnd_timeout.store(t.timeout, Relaxed);
    own.tos.store(t.tos, Relaxed);
    let o2ib = [
        t.peercredits_hiw,
        t.map_on_demand,
        t.concurrent_sends,
        t.fmr_pool_size,
        t.fmr_flush_trigger,
        t.fmr_cache,
        t.ntx,
    ];
    for (cell, v) in own.o2ib.iter().zip(o2ib) {
        cell.store(v, Relaxed);
    }
    t.peer_timeout = r.peer_timeout;
    t.peer_credits = r.peer_credits;
    t.peer_buffer_credits = r.peer_buffer_credits;
    t.credits = r.credits;
}

/// LNet's derived LND timeout in seconds (`lnet_get_lnd_timeout`).
#[no_mangle]
extern "C" fn lnet_get_lnd_timeout() -> c_uint {
    crate::params::snapshot().lnd_timeout
}

/// The LND saw the NI's link fail (`fatal` non-zero) or come back
/// (`lnet_set_link_fatal_state`, health.md §8). Only an atomic store: LNDs
/// call it from notifiers and event handlers.
#[no_mangle]
extern "C" fn lnet_set_link_fatal_state(ni: Option<&Ni>, fatal: c_uint) {
    let Some(ni) = ni else {
        return;
    };
    let fatal = fatal != 0;
    if ni.fatal.swap(fatal, core::sync::atomic::Ordering::Relaxed) == fatal {
        return;
    }
    crate::cdebug_limit!(
        crate::lnet_core::debug::D_NET,
        "{}: link {}\n",
        ni.nid,
        if fatal { "down, NI marked fatal" } else { "up" }
    );
    if let Some(lnet) = TheLnet::get() {
        lnet.ping_update
            .store(true, core::sync::atomic::Ordering::Relaxed);
    }
}

/// An LND's report that the peer NI `nid` is down or up as of `when`
/// (monotonic seconds), `lnet_notify` (Lustre's signature): its cached
/// status follows, so selection prefers its other NIs while it is down,
/// until a message from it or its node's ping buffer says it is up.
/// -EINVAL for a peer on another net or a report dated in the future,
/// -ESHUTDOWN while LNet is not running; 0 otherwise (an unknown NID
/// included). Process context, no lock of the caller's held.
#[no_mangle]
extern "C" fn lnet_notify(
    ni: Option<&Ni>,
    nid: Option<&lnet_nid>,
    alive: bool,
    reset: bool,
    when: i64,
) -> c_int {
    use crate::lnet_core::peer_notify::{self as pn, Verdict};
    let Some(nid) = nid.and_then(|n| nid_from_c(n).ok()) else {
        return EINVAL.to_errno();
    };
    if let Some(ni) = ni {
        if ni.nid.net() != nid.net() {
            crate::cwarn!(
                "Ignoring notification of {} {} by {} (different net)\n",
                nid,
                if alive { "birth" } else { "death" },
                ni.nid
            );
            return EINVAL.to_errno();
        }
    }
    let Some(lnet) = TheLnet::get().filter(|l| l.is_running()) else {
        return ESHUTDOWN().to_errno();
    };
    let now = crate::kapi::kthread::now_secs();
    let mut peers = lnet.peers.lock();
    let Some(p) = peers.peer_ni_mut(&nid) else {
        return 0;
    };
    let old = pn::Notified {
        status: p.ns_status,
        notified: p.notified,
        timestamp: p.notify_time,
        last_alive: p.last_alive,
    };
    match pn::notify(&old, ni.is_some(), alive, reset, when, now) {
        Verdict::Refuse(e) => {
            drop(peers);
            crate::cwarn!(
                "Ignoring prediction of {} {} {} s in the future\n",
                nid,
                if alive { "up" } else { "down" },
                when - now
            );
            -e
        }
        Verdict::Ignore => 0,
        Verdict::Apply {
            status,
            timestamp,
            full_health,
        } => {
            let changed = p.ns_status != status;
            p.notified = true;
            p.notify_time = timestamp;
            p.ns_status = status;
            if full_health {
                p.health = crate::lnet_core::health::MAX_HEALTH;
            }
            drop(peers);
            if changed {
                crate::cdebug_limit!(
                    crate::lnet_core::debug::D_NET,
                    "{} reported {}\n",
                    nid,
                    if alive { "up" } else { "down" }
                );
            }
            0
        }
    }
}

/// # Safety
///
/// `ni` is a started NI, `hdr` points to `hdr_len` bytes, `from` to a NID.
#[no_mangle]
unsafe extern "C" fn lnet_parse(
    ni: Option<&Ni>,
    hdr: *const c_void,
    hdr_len: c_uint,
    from: Option<&lnet_nid>,
    private: *mut c_void,
    rdma_req: c_int,
) -> c_int {
    // lnd.h's contract: process context, no LND lock held.
    crate::kapi::kthread::might_sleep();
    let (Some(ni), Some(from)) = (ni, from) else {
        return EINVAL.to_errno();
    };
    if hdr.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `hdr` is non-null (checked above), so by # Safety it points to `hdr_len` readable
    // bytes.
    let bytes = unsafe { core::slice::from_raw_parts(hdr.cast::<u8>(), hdr_len as usize) };
    lnet_parse_rs(ni, bytes, from, private, rdma_req != 0)
}

/// `lnet_parse` with the header as a slice.
pub(crate) fn lnet_parse_rs(
    ni: &Ni,
    hdr: &[u8],
    from: &lnet_nid,
    private: *mut c_void,
    rdma_req: bool,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    let Ok(from) = nid_from_c(from) else {
        return EINVAL.to_errno();
    };
    let Some(ni) = startup::ni_arc(lnet, ni) else {
        return ENETDOWN().to_errno();
    };
    crate::parse::parse(lnet, &ni, hdr, from, private, rdma_req)
}

/// Ends a message an LND holds (`lnet_finalize`). `m` is null or a message
/// LNet gave the LND (to send or to receive into, the box of
/// [`msg::Msg::into_c`]) and that it has not finalized yet: the LND gives
/// it back with this call, which is lnd.h's contract.
#[no_mangle]
extern "C" fn lnet_finalize(m: Option<KBox<msg::Msg>>, status: c_int, hstatus: c_uint) {
    let Some(m) = m else {
        // lnd.h's contract, even with no message (a discarded receive).
        crate::kapi::kthread::might_sleep();
        return;
    };
    let hs = Status::from_u32(hstatus).unwrap_or(Status::LocalError);
    finalize_held(m, status, hs);
}

/// The body of [`lnet_finalize`] for a message: the loopback LND, inside
/// lnet.ko, calls it directly.
pub(crate) fn finalize_held(m: KBox<msg::Msg>, status: c_int, hs: Status) {
    // lnd.h's contract.
    crate::kapi::kthread::might_sleep();
    let Ok(lnet) = lnet() else {
        // Unreachable while an LND holds messages (it holds lnet.ko); left
        // alone, as before, rather than freed without its accounting.
        core::mem::forget(m);
        return;
    };
    msg::finalize(lnet, m, status, hs);
}

/// The REPLY of a GET the LND is sending (`lnet_create_reply_msg`), for
/// the target to write straight into the GET's MD. The LND passes the GET
/// LNet handed it in `lnd_send`, not yet finalized (LNet keeps no other
/// reference meanwhile), and writable out values.
#[no_mangle]
extern "C" fn lnet_create_reply_msg(
    _ni: *mut lnet_ni,
    get: Option<&mut msg::Msg>,
    niov: Option<&mut c_uint>,
    kiov: Option<&mut *mut bio_vec>,
    len: Option<&mut c_uint>,
) -> *mut lnet_msg {
    let Ok(lnet) = lnet() else {
        return core::ptr::null_mut();
    };
    let (Some(g), Some(niov), Some(kiov), Some(len)) = (get, niov, kiov, len) else {
        return core::ptr::null_mut();
    };
    let Some((m, k, n, l)) = crate::parse::create_reply(lnet, g) else {
        return core::ptr::null_mut();
    };
    *niov = n;
    *kiov = k.cast();
    *len = l;
    msg::Msg::into_c(m)
}

/// The length the target wrote into a REPLY from `lnet_create_reply_msg`,
/// which the LND passes not yet finalized.
#[no_mangle]
extern "C" fn lnet_set_reply_msg_len(
    _ni: *mut lnet_ni,
    reply: Option<&mut msg::Msg>,
    len: c_uint,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    let Some(m) = reply else {
        return EINVAL.to_errno();
    };
    if crate::parse::set_reply_len(lnet, m, len) {
        0
    } else {
        EPROTO().to_errno()
    }
}

/// The health status LNet gives a message whose `lnd_send` the LND is
/// about to refuse (Lustre's LNDs set `msg_health_status` the same way).
/// The LND passes the message LNet is handing it in `lnd_send`, not
/// finalized; lnd_send reads `lnd_hstatus` only after the LND returns.
#[no_mangle]
pub(crate) extern "C" fn lnet_msg_set_hstatus(m: Option<&mut msg::Msg>, hstatus: c_uint) {
    if let Some(m) = m {
        m.lnd_hstatus = Status::from_u32(hstatus).unwrap_or(Status::LocalError);
    }
}
