// SPDX-License-Identifier: GPL-2.0

//! Ping: the node answers GETs on the reserved portal with its ping buffer
//! (wire.md §3: features, pid, and each NI's NID and status), and can ping
//! another node (`lnetctl ping`, recovery pings).

use crate::api;
use crate::kapi::bindings::{lnet_event, lnet_handle_md, lnet_md, lnet_processid};
use crate::kapi::errno;
use crate::kapi::lnet_abi::nid_to_c;
use crate::lnet_core::hdr::{PING_MATCHBITS, RESERVED_PORTAL};
use crate::lnet_core::md::{options, EventKind, THRESH_INF};
use crate::lnet_core::nid::Nid;
use crate::lnet_core::ping::{self, features, NiStatus, PingInfo};
use crate::params;
use crate::state::TheLnet;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{CondVar, SpinLock};
use kernel::{new_condvar, new_spinlock};

/// `LNET_PID_LUSTRE`.
pub(crate) const PID_LUSTRE: u32 = 12345;

/// The buffer the node answers pings with, and the MD exposing it.
pub(crate) struct PingTarget {
    buf: KVec<u8>,
    md: u64,
}

/// The ping buffer for the NIs now up (loopback excluded, as Lustre).
fn build(lnet: &TheLnet, sequence: u32) -> Result<KVec<u8>> {
    let mut nis = KVec::new();
    {
        let list = lnet.nis.lock();
        nis.reserve(list.nis.len(), GFP_ATOMIC)?;
        for ni in list.nis.iter().filter(|n| n.nid != Nid::LO) {
            let status = if ni.reports_up() {
                ping::STATUS_UP
            } else {
                ping::STATUS_DOWN
            };
            nis.push(
                NiStatus {
                    nid: ni.nid,
                    status,
                },
                GFP_ATOMIC,
            )?;
        }
    }
    let t = params::snapshot();
    let mut feats = features::BASE | features::NI_STATUS | features::MULTI_RAIL;
    if t.peer_discovery_disabled == 0 {
        feats |= features::DISCOVERY;
    }
    let size = ping::HDR_LEN + (nis.len() + 1) * 40;
    let mut buf = KVec::from_elem(0u8, size.max(ping::MIN_SIZE), GFP_KERNEL)?;
    let pid = lnet.pid.load(Ordering::Relaxed);
    let n = ping::encode(buf.as_mut_slice(), feats, pid, sequence, &nis).ok_or(EINVAL)?;
    // SAFETY: shrinking: the first `n` bytes are initialized.
    unsafe { buf.set_len(n) };
    Ok(buf)
}

/// Posts the ping buffer on the reserved portal.
pub(crate) fn target_start(lnet: &TheLnet) -> Result<PingTarget> {
    let mut buf = build(lnet, 1)?;
    // SAFETY: arguments of the API's contract; NULL match id is "any".
    let me = unsafe {
        api::LNetMEAttach(
            RESERVED_PORTAL,
            core::ptr::null_mut(),
            PING_MATCHBITS,
            0,
            1,
            1,
        )
    };
    if (me as isize) < 0 && (me as isize) >= -4095 {
        return Err(Error::from_errno(me as isize as i32));
    }
    let md = lnet_md {
        start: buf.as_mut_ptr().cast(),
        length: buf.len() as u32,
        threshold: THRESH_INF,
        max_size: 0,
        options: options::OP_GET | options::TRUNCATE | options::MANAGE_REMOTE,
        user_ptr: core::ptr::null_mut(),
        handler: None,
        bulk_handle: lnet_handle_md { cookie: u64::MAX },
    };
    let mut h = lnet_handle_md::default();
    // SAFETY: the buffer outlives the MD: `target_stop` unlinks it first.
    let rc = unsafe { api::LNetMDAttach(me, &md, 0, &mut h) };
    kernel::error::to_result(rc)?;
    Ok(PingTarget { buf, md: h.cookie })
}

/// Makes `t` the current ping buffer, whose status words health changes
/// rewrite; returns the one it replaces.
pub(crate) fn install(
    lnet: &TheLnet,
    pings: &mut crate::state::Pings,
    mut t: PingTarget,
) -> Option<PingTarget> {
    {
        let mut w = lnet.ping_words.lock();
        w.buf = t.buf.as_mut_ptr();
        w.len = t.buf.len();
    }
    pings.current.replace(t)
}

/// Stops status rewrites into the current buffer, before buffers go.
pub(crate) fn uninstall(lnet: &TheLnet) {
    let mut w = lnet.ping_words.lock();
    w.buf = core::ptr::null_mut();
    w.len = 0;
}

/// Rewrites `nid`'s status word in the posted ping buffer: no new buffer,
/// no new sequence number, no push (health.md §1). Peers see it on their
/// next ping. False when no posted buffer lists `nid`.
pub(crate) fn set_ni_status(lnet: &TheLnet, nid: Nid, up: bool) -> bool {
    let w = lnet.ping_words.lock();
    if w.buf.is_null() {
        return false;
    }
    let at = {
        // `install` published a buffer of this length; it is freed only
        // after `uninstall`, which takes this lock, and status words are
        // written only under this lock, never while this view lives.
        // SAFETY: live, `w.len` bytes, not written meanwhile (above).
        let b = unsafe { core::slice::from_raw_parts(w.buf, w.len) };
        ping::status_offset(b, nid)
    };
    let Some(at) = at.filter(|a| a.checked_add(4).is_some_and(|e| e <= w.len)) else {
        return false;
    };
    let word = if up {
        ping::STATUS_UP
    } else {
        ping::STATUS_DOWN
    };
    // LNDs may be reading the word for a REPLY: one atomic store, as
    // Lustre's plain store of it.
    // SAFETY: in bounds (checked above); `at` is a multiple of 4 in a
    // kmalloc'd buffer, so aligned; live while this lock is held.
    let cell = unsafe { AtomicU32::from_ptr(w.buf.add(at).cast::<u32>()) };
    cell.store(word.to_le(), Ordering::Relaxed);
    true
}

/// Unlinks a ping buffer that a newer one replaces; the buffer itself stays
/// until [`target_stop`], as a REPLY may still be sending from it.
pub(crate) fn target_retire(lnet: &TheLnet, t: &PingTarget) {
    let _ = api::md_unlink(lnet, t.md, false, 0);
}

/// Whether a retired buffer can go: its MD is freed, so no REPLY is still
/// sending from it.
pub(crate) fn is_released(lnet: &TheLnet, t: &PingTarget) -> bool {
    lnet.res.lock().mds.get(&t.md).is_none()
}

/// Takes the ping buffer down. No message may still use it: called once
/// LNet has drained.
pub(crate) fn target_stop(lnet: &TheLnet, t: PingTarget) {
    let _ = api::md_unlink(lnet, t.md, false, 0);
    drop(t.buf);
}

/// Waits for a ping's final event.
#[pin_data]
struct Wait {
    #[pin]
    lock: SpinLock<()>,
    #[pin]
    cond: CondVar,
    done: AtomicBool,
    reply_status: AtomicI32,
    replied: AtomicBool,
    mlength: AtomicU32,
    send_status: AtomicI32,
}

/// # Safety
///
/// LNet calls this with events of the ping MD, whose user_ptr is a live
/// `Wait` until its final event.
unsafe extern "C" fn ping_handler(ev: *mut lnet_event) {
    // SAFETY: LNet passes a valid event.
    let ev = unsafe { &*ev };
    // SAFETY: by this function's contract.
    let w = unsafe { &*ev.md_user_ptr.cast_const().cast::<Wait>() };
    if ev.type_ == EventKind::Reply as _ {
        w.reply_status.store(ev.status, Ordering::Relaxed);
        w.mlength.store(ev.mlength, Ordering::Relaxed);
        w.replied.store(true, Ordering::Release);
    } else if ev.type_ == EventKind::Send as _ && ev.status != 0 {
        w.send_status.store(ev.status, Ordering::Relaxed);
    }
    if ev.unlinked != 0 {
        let _g = w.lock.lock();
        w.done.store(true, Ordering::Release);
        w.cond.notify_all();
    }
}

/// What a ping brought back.
pub(crate) struct Reply {
    pub(crate) entries: KVec<NiStatus>,
    pub(crate) primary: Nid,
    pub(crate) multi_rail: bool,
}

/// Pings `target` (from `src`, or any NI) and waits for the reply, at most
/// `timeout_s` seconds.
pub(crate) fn ping(lnet: &TheLnet, target: Nid, src: Nid, timeout_s: u32) -> Result<Reply> {
    let mut buf = KVec::from_elem(0u8, 4096, GFP_KERNEL)?;
    let w = KBox::pin_init(
        pin_init!(Wait {
            lock <- new_spinlock!((), "lnet_ping_wait"),
            cond <- new_condvar!("lnet_ping_wait"),
            done: AtomicBool::new(false),
            reply_status: AtomicI32::new(0),
            replied: AtomicBool::new(false),
            mlength: AtomicU32::new(0),
            send_status: AtomicI32::new(0),
        }),
        GFP_KERNEL,
    )?;
    let md = lnet_md {
        start: buf.as_mut_ptr().cast(),
        length: buf.len() as u32,
        threshold: 2,
        max_size: 0,
        options: options::TRUNCATE,
        user_ptr: (&*w as *const Wait).cast_mut().cast(),
        handler: Some(ping_handler),
        bulk_handle: lnet_handle_md { cookie: u64::MAX },
    };
    let mut h = lnet_handle_md::default();
    // SAFETY: `buf` and `w` outlive the MD: we wait for its final event.
    kernel::error::to_result(unsafe { api::LNetMDBind(&md, 1, &mut h) })?;
    let mut id = lnet_processid {
        nid: nid_to_c(&target),
        pid: PID_LUSTRE,
    };
    let mut src_c = nid_to_c(&src);
    let self_ptr = if src.is_any() {
        core::ptr::null_mut()
    } else {
        &mut src_c
    };
    let timeout = i32::try_from(timeout_s.max(1)).unwrap_or(i32::MAX);
    // SAFETY: valid arguments; the MD was just bound.
    let rc = unsafe {
        api::LNetGetTimeout(
            self_ptr,
            h,
            &mut id,
            RESERVED_PORTAL,
            PING_MATCHBITS,
            0,
            false,
            timeout,
        )
    };
    if rc != 0 {
        let _ = api::md_unlink(lnet, h.cookie, false, 0);
        // The UNLINK event (if any) has run by now: unlink delivers it
        // before returning when nothing is in flight.
        return Err(Error::from_errno(rc));
    }
    // The final event is due by the deadline (the tracker ends the MD).
    {
        let mut g = w.lock.lock();
        while !w.done.load(Ordering::Acquire) {
            let _ = w.cond.wait_interruptible_timeout(&mut g, 100);
        }
    }
    if !w.replied.load(Ordering::Acquire) {
        let s = w.send_status.load(Ordering::Relaxed);
        return Err(if s != 0 {
            Error::from_errno(s)
        } else {
            errno::ETIMEDOUT()
        });
    }
    let rs = w.reply_status.load(Ordering::Relaxed);
    if rs != 0 {
        return Err(Error::from_errno(rs));
    }
    let n = (w.mlength.load(Ordering::Relaxed) as usize).min(buf.len());
    let max = params::snapshot().interfaces_max.max(16) as u32;
    let info = PingInfo::parse(buf.get(..n).unwrap_or(&[]), max).map_err(|e| {
        pr_warn!("Bad ping reply from {}: {}\n", target, e);
        errno::EPROTO()
    })?;
    // The loopback entry first, as the ioctl ABI lists it.
    let mut entries = KVec::new();
    entries.push(
        NiStatus {
            nid: Nid::LO,
            status: ping::STATUS_UP,
        },
        GFP_KERNEL,
    )?;
    for e in info.nid4_entries() {
        entries.push(e, GFP_KERNEL)?;
    }
    for e in info.large_entries().flatten() {
        entries.push(e, GFP_KERNEL)?;
    }
    Ok(Reply {
        primary: info.primary().unwrap_or(target),
        multi_rail: info.features & features::MULTI_RAIL != 0,
        entries,
    })
}
