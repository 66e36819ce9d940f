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
use kernel::sync::{Arc, CondVar, CondVarTimeoutResult, SpinLock};
use kernel::{new_condvar, new_spinlock};

/// Longest single wait for a ping's events; the deadline is the tracker's.
const MAX_JIFFY_WAIT: kernel::time::Jiffies = 1000;

/// `LNET_PID_LUSTRE`.
pub(crate) const PID_LUSTRE: u32 = 12345;

/// The buffer the node answers pings with, and the MD exposing it.
pub(crate) struct PingTarget {
    buf: KVec<u8>,
    md: u64,
}

/// The ping buffer for the NIs now up (loopback excluded, as Lustre).
fn build(lnet: &TheLnet) -> Result<KVec<u8>> {
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
    // We do not route (`lnet_ping_target_setup`: RTE_DISABLED unless
    // routing is on).
    // No BASE: Lustre never sets it (wire.md §3.2).
    let mut feats = features::NI_STATUS | features::MULTI_RAIL | features::RTE_DISABLED;
    if t.peer_discovery_disabled == 0 {
        feats |= features::DISCOVERY;
    }
    let size = ping::HDR_LEN + (nis.len() + 1) * 40;
    let mut buf = KVec::from_elem(0u8, size.max(ping::MIN_SIZE), GFP_KERNEL)?;
    let pid = lnet.pid.load(Ordering::Relaxed);
    // Each buffer built gets the next sequence number: peers tell a newer
    // buffer from an older one by it.
    let sequence = lnet
        .ping_seq
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_add(1);
    let n = ping::encode(buf.as_mut_slice(), feats, pid, sequence, &nis).ok_or(EINVAL)?;
    // SAFETY: shrinking: the first `n` bytes are initialized.
    unsafe { buf.set_len(n) };
    Ok(buf)
}

/// An ME on the reserved portal for the ping match bits from anyone,
/// after those already there and unlinked with its MD: where the ping
/// target and the push target are posted.
pub(crate) fn reserved_me() -> Result<*mut api::lnet_me> {
    let mut anyone = lnet_processid {
        nid: nid_to_c(&Nid::ANY),
        pid: crate::lnet_core::md::PID_ANY,
    };
    // SAFETY: `&mut anyone` is a live local `struct lnet_processid`, the one pointer LNetMEAttach's
    // # Safety asks about; it is read during the call only.
    let me = unsafe { api::LNetMEAttach(RESERVED_PORTAL, &mut anyone, PING_MATCHBITS, 0, 1, 1) };
    if (me as isize) < 0 && (me as isize) >= -4095 {
        return Err(Error::from_errno(me as isize as i32));
    }
    Ok(me)
}

/// Posts the ping buffer on the reserved portal.
pub(crate) fn target_start(lnet: &TheLnet) -> Result<PingTarget> {
    let mut buf = build(lnet)?;
    let me = reserved_me()?;
    let md = lnet_md {
        umd_start: buf.as_mut_ptr().cast(),
        umd_length: buf.len() as u32,
        umd_threshold: THRESH_INF,
        umd_max_size: 0,
        umd_options: options::OP_GET | options::TRUNCATE | options::MANAGE_REMOTE,
        umd_user_ptr: core::ptr::null_mut(),
        umd_handler: None,
        umd_bulk_handle: lnet_handle_md { cookie: u64::MAX },
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
        // INVARIANT: `t` becomes `pings.current` below, under the `pings`
        // lock the caller holds, and moving it does not move its heap
        // buffer; `buf` stops naming the buffer it replaces first.
        w.buf = t.buf.as_mut_ptr();
        w.len = t.buf.len();
    }
    pings.current.replace(t)
}

/// A copy of the posted ping buffer, as a push sends it.
pub(crate) fn current_buffer(lnet: &TheLnet) -> Result<KVec<u8>> {
    // The buffer is replaced only under `pings`, and its status words are
    // rewritten only under `ping_words`.
    let pings = lnet.pings.lock();
    let len = pings.current.as_ref().ok_or(errno::ENETDOWN())?.buf.len();
    let mut copy = KVec::from_elem(0u8, len, GFP_KERNEL)?;
    let w = lnet.ping_words.lock();
    if w.buf.is_null() || w.len != len {
        return Err(errno::ENETDOWN());
    }
    // SAFETY: the installed buffer of `len` bytes, live while `pings` is
    // held; not written while `ping_words` is held.
    let b = unsafe { core::slice::from_raw_parts(w.buf, w.len) };
    copy.copy_from_slice(b);
    Ok(copy)
}

/// Stops status rewrites into the current buffer, before buffers go.
pub(crate) fn uninstall(lnet: &TheLnet) {
    let mut w = lnet.ping_words.lock();
    // INVARIANT: null: the buffers may go once this lock is released.
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

/// Sets or clears feature bits of the posted ping buffer in place, as
/// `discovery_set` does: peers see it on their next ping. False when no
/// buffer is posted.
pub(crate) fn set_features(lnet: &TheLnet, bits: u32, on: bool) -> bool {
    let w = lnet.ping_words.lock();
    if w.buf.is_null() {
        return false;
    }
    let at = {
        // SAFETY: `install` published `w.buf` with `w.len` bytes, freed only after `uninstall`,
        // which takes the lock held here; its words change only under it.
        let b = unsafe { core::slice::from_raw_parts(w.buf, w.len) };
        ping::features_offset(b)
    };
    let Some(at) = at.filter(|a| a.checked_add(4).is_some_and(|e| e <= w.len)) else {
        return false;
    };
    // SAFETY: in bounds and aligned (checked above; a multiple of 4 in a
    // kmalloc'd buffer); live while this lock is held.
    let cell = unsafe { AtomicU32::from_ptr(w.buf.add(at).cast::<u32>()) };
    let old = u32::from_le(cell.load(Ordering::Relaxed));
    let new = if on { old | bits } else { old & !bits };
    cell.store(new.to_le(), Ordering::Relaxed);
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

/// A ping in flight: shared by the caller and the MD, which holds a
/// reference (`Arc::into_raw` as the MD's user_ptr) until its final event,
/// so a caller that gives up early (a signal) leaves nothing LNet uses.
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
    /// Where the REPLY lands; LNet writes it until the final event.
    buf: KVec<u8>,
}

/// # Safety
///
/// LNet calls this with events of the ping MD, whose user_ptr is an
/// `Arc<Wait>` reference from `Arc::into_raw`, released at the final event.
unsafe extern "C" fn ping_handler(ev: *mut lnet_event) {
    // SAFETY: LNet passes a valid event.
    let ev = unsafe { &*ev };
    let p = ev.md_user_ptr.cast_const().cast::<Wait>();
    // SAFETY: the MD's reference keeps it alive until the final event.
    let w = unsafe { &*p };
    if ev.type_ == EventKind::Reply as _ {
        w.reply_status.store(ev.status, Ordering::Relaxed);
        w.mlength.store(ev.mlength, Ordering::Relaxed);
        w.replied.store(true, Ordering::Release);
    } else if ev.type_ == EventKind::Send as _ && ev.status != 0 {
        // The send failed, so no REPLY will come: the waiter unlinks the
        // MD at once rather than wait for its deadline.
        let _g = w.lock.lock();
        w.send_status.store(ev.status, Ordering::Relaxed);
        w.cond.notify_all();
    }
    if ev.unlinked != 0 {
        {
            let _g = w.lock.lock();
            w.done.store(true, Ordering::Release);
            w.cond.notify_all();
        }
        // SAFETY: the MD's reference, given back once, at its final event.
        drop(unsafe { Arc::from_raw(p) });
    }
}

/// What a ping brought back.
pub(crate) struct Reply {
    pub(crate) entries: KVec<NiStatus>,
    pub(crate) primary: Nid,
    pub(crate) multi_rail: bool,
}

/// Pings `target` (from `src`, or any NI) and waits for the reply, at most
/// `timeout_s` seconds. A failed send ends it at once; a signal ends the
/// wait with `EINTR`.
pub(crate) fn ping(lnet: &TheLnet, target: Nid, src: Nid, timeout_s: u32) -> Result<Reply> {
    // Sized as Lustre's `lnet_ping` sizes it: the header and one status
    // per NI up to `lnet_interfaces_max`, at most `LNET_PING_BUFFER_MAX`.
    // That fits an o2ib IMMEDIATE, so the GET goes inline: a Lustre target
    // RDMA-writing a REPLY shorter than a GET_REQ's sink posts no write at
    // all (its `kiblnd_init_rdma` only counts a write that ends a sink
    // fragment), and a larger sink would read back zeros.
    let max = params::snapshot().interfaces_max.max(16) as usize;
    let size = ping::NID4_ENTRY_LEN
        .saturating_mul(max)
        .saturating_add(ping::HDR_LEN)
        .min(ping::PING_BUFFER_MAX);
    let mut buf = KVec::from_elem(0u8, size, GFP_KERNEL)?;
    // The heap bytes stay where they are when `buf` moves into `Wait`.
    let start = buf.as_mut_ptr();
    let len = buf.len() as u32;
    let w = Arc::pin_init(
        pin_init!(Wait {
            lock <- new_spinlock!((), "lnet_ping_wait"),
            cond <- new_condvar!("lnet_ping_wait"),
            done: AtomicBool::new(false),
            reply_status: AtomicI32::new(0),
            replied: AtomicBool::new(false),
            mlength: AtomicU32::new(0),
            send_status: AtomicI32::new(0),
            buf,
        }),
        GFP_KERNEL,
    )?;
    let md_ref = Arc::into_raw(w.clone());
    let md = lnet_md {
        umd_start: start.cast(),
        umd_length: len,
        umd_threshold: 2,
        umd_max_size: 0,
        umd_options: options::TRUNCATE,
        umd_user_ptr: md_ref.cast_mut().cast(),
        umd_handler: Some(ping_handler),
        umd_bulk_handle: lnet_handle_md { cookie: u64::MAX },
    };
    let mut h = lnet_handle_md::default();
    // SAFETY: the buffer lives in `Wait`, which the MD holds a reference
    // on until its final event.
    let rc = unsafe { api::LNetMDBind(&md, 1, &mut h) };
    if rc != 0 {
        // SAFETY: no MD was made: the reference is still ours.
        drop(unsafe { Arc::from_raw(md_ref) });
        return Err(Error::from_errno(rc));
    }
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
        // Nothing in flight: the unlink delivers the final event, which
        // releases the MD's reference.
        let _ = api::md_unlink(lnet, h.cookie, false, 0);
        return Err(Error::from_errno(rc));
    }
    // The final event is due by the deadline (the tracker ends the MD). A
    // failed send ends the ping at once (`lnet_ping`): the MD is unlinked
    // and its final event follows. A signal ends the wait: the MD is
    // unlinked and keeps what it uses until its final event.
    let mut unlinked = false;
    {
        let mut g = w.lock.lock();
        while !w.done.load(Ordering::Acquire) {
            if w.send_status.load(Ordering::Relaxed) != 0 && !unlinked {
                unlinked = true;
                drop(g);
                let _ = api::md_unlink(lnet, h.cookie, false, 0);
                g = w.lock.lock();
                continue;
            }
            if let CondVarTimeoutResult::Signal { .. } =
                w.cond.wait_interruptible_timeout(&mut g, MAX_JIFFY_WAIT)
            {
                drop(g);
                let _ = api::md_unlink(lnet, h.cookie, false, 0);
                return Err(EINTR);
            }
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
    // The final event has run: LNet writes the buffer no more.
    let buf = &w.buf;
    let n = (w.mlength.load(Ordering::Relaxed) as usize).min(buf.len());
    let max = params::snapshot().interfaces_max.max(16) as u32;
    let info = PingInfo::parse(buf.get(..n).unwrap_or(&[]), max).map_err(|e| {
        crate::cneterr!("Bad ping reply from {}: {}\n", target, e);
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
