// SPDX-License-Identifier: GPL-2.0

//! Messages (`struct lnet_msg`) and how they end: `lnet_finalize`, through
//! which every message ends and every event reaches the MD's handler
//! (Lustre's lib-msg.c).

use crate::api;
use crate::kapi::bindings::{lnet_event, lnet_tx_desc};
use crate::kapi::errno::*;
use crate::kapi::kiov::BioVec;
use crate::lnd::lnet_msg;
use crate::lnet_core::hdr::{Hdr, MsgBody, WireHandle};
use crate::lnet_core::health::Status;
use crate::lnet_core::md::{self as core_md, EventKind};
use crate::lnet_core::nid::Nid;
use crate::md::flags;
use crate::ni::Ni;
use crate::parse::count_dropped;
use crate::send::send;
use crate::state::{Res, TheLnet};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A message in flight (`struct lnet_msg`).
///
/// # Invariants
///
/// `desc.kiov` is null, or points to the `desc.niov` fragments of the MD
/// named by `md`, which this message holds a reference on, or of the
/// router buffer it owns in `fwd`: they stay valid while it does. `ev.md_start` and `ev.md_user_ptr` are the MD
/// owner's values, echoed to its handler and never read by LNet.
pub(crate) struct Msg {
    pub(crate) hdr: Hdr,
    /// What the LND sends; also the payload source the loopback LND reads.
    pub(crate) desc: lnet_tx_desc,
    /// The MD this message holds a reference on.
    pub(crate) md: Option<u64>,
    /// The event the MD's handler gets when this message ends.
    pub(crate) ev: lnet_event,
    pub(crate) ni: Option<Arc<Ni>>,
    /// An incoming PUT whose initiator wants an ACK once it is delivered.
    pub(crate) ack: Option<(WireHandle, Nid, u32)>,
    /// Received (counted on the receive side) rather than sent.
    pub(crate) rx: bool,
    /// The peer NID a received message came from.
    pub(crate) from: Nid,
    /// A received message's initiator: its peer's primary NID
    /// (`msg_initiator`); what MEs match and events name.
    pub(crate) initiator: Nid,
    /// Committed for receive: an incoming message, and the REPLY it turns
    /// into (`msg_rx_committed`), whose success raises the peer NI's health.
    pub(crate) rx_committed: bool,
    /// The source the sender asked for (ANY to let selection choose);
    /// resends select again from it.
    pub(crate) src_param: Nid,
    /// Resends made so far.
    pub(crate) retry_count: u32,
    /// Never resend (recovery pings, unroutable messages).
    pub(crate) no_resend: bool,
    /// No resend after this (monotonic seconds).
    pub(crate) deadline: i64,
    /// Holds a send credit of its peer NI / of its NI (counted, perhaps
    /// still waiting for it).
    pub(crate) peer_credit: bool,
    pub(crate) ni_credit: bool,
    /// The status an LND gave a send it refused (`lnet_msg_set_hstatus`);
    /// OK unless it set one, as Lustre's `msg_health_status` starts.
    pub(crate) lnd_hstatus: Status,
    /// An incoming GET whose LND writes the REPLY's data itself
    /// (`lnet_parse`'s rdma_req): the REPLY goes to `lnd_recv`, not out
    /// through selection.
    pub(crate) rdma_get: bool,
    /// A recovery ping (`msg_recovery`): selection treats its peer as not
    /// Multi-Rail, so that it tests the peer NI it names.
    pub(crate) recovery: bool,
    /// A REPLY made by [`create_reply`]: like Lustre's, it has no peer NI
    /// of its own, so health never checks it (`lnet_is_health_check`);
    /// its GET carries the outcome.
    pub(crate) no_rx_peer: bool,
    /// The peer NI a sent message goes to (`msg_txpeer`): its destination,
    /// or for a message to a remote net the gateway's NI, while the
    /// header names the final destination. Credits, health and drop
    /// counts are that peer NI's.
    pub(crate) txpeer: Nid,
    /// A message this node forwards (`msg_routing`): its router buffer
    /// and credits (router.rs). Its header keeps the original source.
    pub(crate) fwd: Option<crate::router::Fwd>,
}

// SAFETY: the raw pointers inside (by the type invariant, the fragments of
// an MD this message holds, and the caller's pointers echoed in events) are
// not tied to a thread.
unsafe impl Send for Msg {}

impl Msg {
    pub(crate) fn new(lnet: &TheLnet, hdr: Hdr) -> Result<KBox<Msg>> {
        // INVARIANT: no payload yet (`desc.kiov` null) and no event.
        let m = KBox::new(
            Msg {
                hdr,
                desc: lnet_tx_desc::default(),
                md: None,
                ev: lnet_event::default(),
                ni: None,
                ack: None,
                rx: false,
                from: Nid::ANY,
                initiator: Nid::ANY,
                rx_committed: false,
                src_param: Nid::ANY,
                retry_count: 0,
                no_resend: false,
                deadline: 0,
                peer_credit: false,
                ni_credit: false,
                lnd_hstatus: Status::Ok,
                rdma_get: false,
                recovery: false,
                no_rx_peer: false,
                txpeer: hdr.dest_nid,
                fwd: None,
            },
            GFP_KERNEL,
        )?;
        lnet.counters.msg_alloc();
        lnet.msgs_in_flight.fetch_add(1, Ordering::Relaxed);
        Ok(m)
    }

    pub(crate) fn free(lnet: &TheLnet, m: KBox<Msg>) {
        drop(m);
        lnet.counters.msg_free();
        lnet.msgs_in_flight.fetch_sub(1, Ordering::Release);
    }

    /// Fills the message part of the event (`lnet_build_msg_event`). A
    /// passive event names the initiator by its peer's primary NID, which
    /// stays the same whichever rail the message came over, and the NID it
    /// came from as the source.
    pub(crate) fn build_event(&mut self, lnet: &TheLnet, kind: EventKind, from: Nid) {
        let h = &self.hdr;
        let ev = &mut self.ev;
        ev.type_ = kind as _;
        ev.msg_type = h.msg.type_code();
        ev.target.nid = api::nid_to_c(&h.dest_nid);
        ev.target.pid = h.dest_pid;
        if kind == EventKind::Send {
            let pid = lnet.pid.load(Ordering::Relaxed);
            ev.initiator.nid = api::nid_to_c(&Nid::ANY);
            ev.initiator.pid = pid;
            ev.source = ev.initiator;
            ev.sender = api::nid_to_c(&Nid::ANY);
        } else {
            ev.initiator.nid = api::nid_to_c(&self.initiator);
            ev.initiator.pid = h.src_pid;
            ev.source.nid = api::nid_to_c(&h.src_nid);
            ev.source.pid = h.src_pid;
            ev.sender = api::nid_to_c(&from);
        }
        match h.msg {
            MsgBody::Put {
                match_bits,
                hdr_data,
                ptl_index,
                ..
            } => {
                ev.pt_index = ptl_index;
                ev.match_bits = match_bits;
                ev.hdr_data = hdr_data;
                ev.rlength = h.payload_length;
            }
            MsgBody::Get {
                match_bits,
                ptl_index,
                sink_length,
                ..
            } => {
                ev.pt_index = ptl_index;
                ev.match_bits = match_bits;
                ev.rlength = sink_length;
            }
            MsgBody::Ack {
                match_bits,
                mlength,
                ..
            } => {
                ev.match_bits = match_bits;
                ev.mlength = mlength;
            }
            _ => ev.rlength = h.payload_length,
        }
        ev.sequence = lnet.event_seq.fetch_add(1, Ordering::Relaxed) as _;
    }

    /// The pointer LNDs know this message by.
    pub(crate) fn into_c(m: KBox<Msg>) -> *mut lnet_msg {
        KBox::into_raw(m).cast()
    }

    /// # Safety
    ///
    /// `p` came from [`Msg::into_c`] and is not used again.
    pub(crate) unsafe fn from_c(p: *mut lnet_msg) -> KBox<Msg> {
        // SAFETY: `p` came from Msg::into_c, KBox::into_raw of a `Msg`, and is
        // not used again (# Safety): the box is taken back once.
        unsafe { KBox::from_raw(p.cast()) }
    }

    /// The send description of a message an LND holds.
    ///
    /// # Safety
    ///
    /// `p` is a message handed to an LND and not yet finalized.
    pub(crate) unsafe fn desc_of<'a>(p: *mut lnet_msg) -> &'a lnet_tx_desc {
        // SAFETY: `p` is a message handed to an LND and not yet finalized (# Safety), so the `Msg`
        // Msg::into_c leaked is alive; only a shared reference to its `desc` is made.
        unsafe { &(*p.cast::<Msg>()).desc }
    }
}

/// Sets the payload of an outgoing message to `len` bytes of `kiov` from
/// `offset`.
pub(crate) fn set_payload(m: &mut Msg, kiov: &KVec<BioVec>, offset: u32, len: u32) {
    // INVARIANT: the caller passes the `kiov` of the MD it attaches `m` to
    // (`m.md`), under the resource lock, having counted `m`'s reference.
    m.desc.kiov = kiov.as_ptr().cast_mut().cast();
    m.desc.niov = kiov.len() as u32;
    m.desc.offset = offset;
    m.desc.len = len;
}

/// Ends a message (`lnet_finalize`): delivers its event, sends the ACK an
/// incoming PUT asked for, and frees it.
pub(crate) fn finalize(lnet: &TheLnet, mut m: KBox<Msg>, status: i32, hstatus: Status) {
    // lnd.h's contract, checked on every call (the lab kernel reports a
    // caller holding a spinlock even when nothing here sleeps).
    crate::kapi::kthread::might_sleep();
    // A resend takes credits afresh on its new path.
    crate::credits::give_back(lnet, &mut m);
    let Some(mut m) = crate::health::check(lnet, m, status, hstatus) else {
        return;
    };
    if m.fwd.is_some() {
        // Received: sent on; sent or failed: its buffer goes back.
        crate::router::finished(lnet, m, status);
        return;
    }
    if m.md.is_some() {
        detach_md(lnet, &mut m, status);
    }
    if let Some((wmd, initiator, mlength)) = m.ack.take() {
        if status == 0 && lnet.is_running() {
            let match_bits = m.ev.match_bits;
            m.hdr = Hdr {
                dest_nid: initiator,
                src_nid: m.hdr.dest_nid,
                dest_pid: m.hdr.src_pid,
                src_pid: m.hdr.dest_pid,
                payload_length: 0,
                msg: MsgBody::Ack {
                    dst_wmd: wmd,
                    match_bits,
                    mlength,
                },
            };
            m.rx = false;
            // Lustre decommits the PUT before sending its ACK: the ACK is
            // committed for send only.
            m.rx_committed = false;
            m.ni = None;
            m.retry_count = 0;
            // INVARIANT: the ACK has no payload; the PUT's MD was detached.
            m.desc = lnet_tx_desc::default();
            send(lnet, m);
            return;
        }
    }
    Msg::free(lnet, m);
}

/// Drops the message's MD reference and delivers its event outside the lock
/// (`lnet_msg_detach_md`). While one handler of an MD runs, others wait, so
/// an MD's events arrive one at a time and the unlinked one last.
fn detach_md(lnet: &TheLnet, m: &mut Msg, status: i32) {
    let Some(cookie) = m.md.take() else {
        return;
    };
    let mut res = lnet.res.lock();
    loop {
        match res.mds.get(&cookie) {
            Some(md) if md.flags & flags::HANDLING != 0 => lnet.handled.wait(&mut res),
            _ => break,
        }
    }
    let Some(md) = res.mds.get_mut(&cookie) else {
        crate::cerror!("message held an MD that is gone\n");
        return;
    };
    md.refcount = md.refcount.saturating_sub(1);
    let unlink = md.unlinkable();
    let sink = md.sink();
    if sink.is_some() {
        m.ev.status = if md.flags & flags::ABORTED != 0 && status == 0 {
            ETIMEDOUT().to_errno()
        } else {
            status
        };
        m.ev.unlinked = unlink as i32;
        md.to_event(cookie, &mut m.ev);
        if !unlink {
            md.flags |= flags::HANDLING;
        }
    }
    if unlink || (md.refcount == 0 && md.state.threshold == core_md::THRESH_INF) {
        detach_tracker(lnet, &mut res, cookie);
    }
    if unlink {
        res.md_unlink(cookie);
    }
    drop(res);
    if let Some(sink) = sink {
        let mut ev = m.ev;
        sink.deliver(lnet, &mut ev);
        if !unlink {
            let mut res = lnet.res.lock();
            if let Some(md) = res.mds.get_mut(&cookie) {
                md.flags &= !flags::HANDLING;
            }
            drop(res);
            lnet.handled.notify_all();
        }
    }
}

/// Drops an MD's response tracker, if it has one.
pub(crate) fn detach_tracker(lnet: &TheLnet, res: &mut Res, cookie: u64) {
    if let Some(md) = res.mds.get_mut(&cookie) {
        if md.rspt.take().is_some() {
            lnet.counters.rst_alloc.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Counts an outgoing message dropped past its deadline before its LND got
/// it.
pub(crate) fn count_expired(lnet: &TheLnet, m: &Msg) {
    if let Some(ni) = m.ni.as_ref() {
        count_dropped(lnet, ni, &m.txpeer, m.hdr.payload_length, &m.hdr.msg);
    }
    crate::cneterr!(
        "Dropping {} to {}: exceeded message deadline\n",
        m.hdr.msg.type_name(),
        m.hdr.dest_nid
    );
}
