// SPDX-License-Identifier: GPL-2.0

//! Ping: the node answers GETs on the reserved portal with its ping buffer
//! (wire.md §3: features, pid, and each NI's NID and status), and can ping
//! another node (`lnetctl ping`, recovery pings).

use crate::api;
use crate::kapi::bindings::lnet_event;
use crate::kapi::errno;
use crate::lnet_core::md::{options, EventKind, THRESH_INF};
use crate::lnet_core::nid::Nid;
use crate::lnet_core::ping::{self, features, NiStatus, PingInfo};
use crate::own_md::{self, MdMemory, MdOwner};
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

/// A ping buffer (`struct lnet_ping_buffer`): what the node answers pings
/// with, held by its MD while a REPLY may send from it. Its NIs' status
/// words and its feature word are rewritten in place (health.md §1).
pub(crate) struct PingBuffer {
    mem: MdMemory,
    /// Where each NI's status word is.
    status_at: KVec<(Nid, usize)>,
    features_at: Option<usize>,
}

impl MdOwner for PingBuffer {
    fn memory(&self) -> &MdMemory {
        &self.mem
    }

    fn wants_events(&self) -> bool {
        false
    }

    fn event(&self, _lnet: &TheLnet, _ev: &lnet_event) {}
}

/// The posted ping buffer and its MD.
pub(crate) struct PingTarget {
    buf: Arc<PingBuffer>,
    md: u64,
}

/// The ping buffer for the NIs now up (loopback excluded, as Lustre).
fn build(lnet: &TheLnet) -> Result<PingBuffer> {
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
    // RTE_DISABLED unless this node forwards (`lnet_ping_target_setup`);
    // router.rs flips it in the posted buffer when routing changes.
    // No BASE: Lustre never sets it (wire.md §3.2).
    let mut feats = features::NI_STATUS | features::MULTI_RAIL;
    if !crate::router::routing(lnet) {
        feats |= features::RTE_DISABLED;
    }
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
    crate::kapi::vec::truncate(&mut buf, n);
    let mut status_at = KVec::with_capacity(nis.len(), GFP_KERNEL)?;
    for e in nis.iter() {
        if let Some(at) = ping::status_offset(&buf, e.nid) {
            status_at.push((e.nid, at), GFP_KERNEL)?;
        }
    }
    Ok(PingBuffer {
        features_at: ping::features_offset(&buf),
        status_at,
        mem: MdMemory::new(buf),
    })
}

/// Posts the ping buffer on the reserved portal.
pub(crate) fn target_start(lnet: &TheLnet) -> Result<PingTarget> {
    let buf = Arc::new(build(lnet)?, GFP_KERNEL)?;
    let md = own_md::post_reserved(
        lnet,
        buf.clone(),
        THRESH_INF,
        options::OP_GET | options::TRUNCATE | options::MANAGE_REMOTE,
        false,
    )?;
    Ok(PingTarget { buf, md })
}

/// Makes `t` the current ping buffer, whose status words health changes
/// rewrite; returns the one it replaces.
pub(crate) fn install(
    lnet: &TheLnet,
    pings: &mut crate::state::Pings,
    t: PingTarget,
) -> Option<PingTarget> {
    lnet.ping_words.lock().current = Some(t.buf.clone());
    pings.current.replace(t)
}

/// A copy of the posted ping buffer, as a push sends it. Its status words
/// are read one at a time, each as it was at some moment: as a REPLY sends
/// them.
pub(crate) fn current_buffer(lnet: &TheLnet) -> Result<KVec<u8>> {
    let b = lnet
        .ping_words
        .lock()
        .current
        .clone()
        .ok_or(errno::ENETDOWN())?;
    let mut copy = KVec::from_elem(0u8, b.mem.len(), GFP_KERNEL)?;
    b.mem.copy_to(&mut copy);
    Ok(copy)
}

/// Stops status rewrites into the current buffer, before buffers go.
pub(crate) fn uninstall(lnet: &TheLnet) {
    lnet.ping_words.lock().current = None;
}

/// Rewrites `nid`'s status word in the posted ping buffer: no new buffer,
/// no new sequence number, no push (health.md §1). Peers see it on their
/// next ping. False when no posted buffer lists `nid`.
pub(crate) fn set_ni_status(lnet: &TheLnet, nid: Nid, up: bool) -> bool {
    let w = lnet.ping_words.lock();
    let Some(b) = w.current.as_ref() else {
        return false;
    };
    let Some(&(_, at)) = b.status_at.iter().find(|(n, _)| *n == nid) else {
        return false;
    };
    let word = if up {
        ping::STATUS_UP
    } else {
        ping::STATUS_DOWN
    };
    b.mem.store_le32(at, word)
}

/// Sets or clears feature bits of the posted ping buffer in place, as
/// `discovery_set` does: peers see it on their next ping. False when no
/// buffer is posted.
pub(crate) fn set_features(lnet: &TheLnet, bits: u32, on: bool) -> bool {
    let w = lnet.ping_words.lock();
    let Some((b, at)) = w.current.as_ref().and_then(|b| Some((b, b.features_at?))) else {
        return false;
    };
    let Some(old) = b.mem.load_le32(at) else {
        return false;
    };
    let new = if on { old | bits } else { old & !bits };
    b.mem.store_le32(at, new)
}

/// Unlinks a ping buffer, replaced or LNet stopping: its MD keeps it until
/// no REPLY sends from it.
pub(crate) fn target_stop(lnet: &TheLnet, t: PingTarget) {
    let _ = api::md_unlink(lnet, t.md, false, 0);
}

/// A ping in flight: shared by the caller and its MD, which holds a
/// reference until its final event, so a caller that gives up early (a
/// signal) leaves nothing LNet uses.
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
    mem: MdMemory,
}

impl MdOwner for Wait {
    fn memory(&self) -> &MdMemory {
        &self.mem
    }

    fn event(&self, _lnet: &TheLnet, ev: &lnet_event) {
        if ev.type_ == EventKind::Reply as _ {
            self.reply_status.store(ev.status, Ordering::Relaxed);
            self.mlength.store(ev.mlength, Ordering::Relaxed);
            self.replied.store(true, Ordering::Release);
        } else if ev.type_ == EventKind::Send as _ && ev.status != 0 {
            // The send failed, so no REPLY will come: the waiter unlinks
            // the MD at once rather than wait for its deadline.
            let _g = self.lock.lock();
            self.send_status.store(ev.status, Ordering::Relaxed);
            self.cond.notify_all();
        }
        if ev.unlinked != 0 {
            let _g = self.lock.lock();
            self.done.store(true, Ordering::Release);
            self.cond.notify_all();
        }
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
    let mem = MdMemory::zeroed(size)?;
    let w = Arc::pin_init(
        pin_init!(Wait {
            lock <- new_spinlock!((), "lnet_ping_wait"),
            cond <- new_condvar!("lnet_ping_wait"),
            done: AtomicBool::new(false),
            reply_status: AtomicI32::new(0),
            replied: AtomicBool::new(false),
            mlength: AtomicU32::new(0),
            send_status: AtomicI32::new(0),
            mem,
        }),
        GFP_KERNEL,
    )?;
    let md = own_md::bind(lnet, w.clone(), 2, options::TRUNCATE)?;
    let mut r = own_md::reserved_request(md, target, false);
    r.src = src;
    r.timeout = timeout_s.max(1);
    own_md::send_or_unlink(lnet, r, false)?;
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
                let _ = api::md_unlink(lnet, md, false, 0);
                g = w.lock.lock();
                continue;
            }
            if let CondVarTimeoutResult::Signal { .. } =
                w.cond.wait_interruptible_timeout(&mut g, MAX_JIFFY_WAIT)
            {
                drop(g);
                let _ = api::md_unlink(lnet, md, false, 0);
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
    // SAFETY: the MD's final event has run: LNet writes the bytes no more.
    let data = unsafe { w.mem.bytes(w.mlength.load(Ordering::Relaxed) as usize) };
    let max = params::snapshot().interfaces_max.max(16) as u32;
    let info = PingInfo::parse(data, max).map_err(|e| {
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
