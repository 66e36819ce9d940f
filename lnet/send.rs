// SPDX-License-Identifier: GPL-2.0

//! The send path (`lnet_send`, Lustre's lib-move.c): a message selected,
//! encoded and handed to its LND, sent again after a failure, and the
//! messages `LNetPut`/`LNetGet` start.

use crate::counters::Counters;
use crate::kapi::errno::*;
use crate::lnet_core::hdr::{Hdr, MsgBody, WireHandle, HDR_NID16_LEN, HDR_NID4_LEN};
use crate::lnet_core::health::Status;
use crate::lnet_core::md::{self as core_md, EventKind};
use crate::lnet_core::msg_stats;
use crate::lnet_core::nid::Nid;
use crate::msg::{finalize, set_payload, Msg};
use crate::ni::Ni;
use crate::selection::{select_path, Path};
use crate::state::TheLnet;
use crate::{api, kapi, params};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// Sends a message again after a failed attempt: selection runs afresh
/// from the sender's own source choice (selection.md §7).
/// `resend_count` counts the resends accepted for sending, as Lustre's
/// (`lnet_resend_pending_msgs_locked`): not one whose selection fails.
pub(crate) fn resend(lnet: &TheLnet, mut m: KBox<Msg>) {
    m.hdr.src_nid = m.src_param;
    m.ni = None;
    if send(lnet, m) {
        Counters::add(&lnet.counters.resend_count);
    }
}

/// Sends a message (`lnet_send`): picks the NI, encodes the header and hands
/// it to the LND. Any failure finalizes the message. Returns whether it was
/// accepted: waiting for discovery or past selection (`lnet_send`'s 0).
pub(crate) fn send(lnet: &TheLnet, mut m: KBox<Msg>) -> bool {
    if m.retry_count == 0 {
        m.src_param = m.hdr.src_nid;
    }
    let Some(mut m) = crate::discovery::gate(lnet, m) else {
        // Sent again once its peer is discovered.
        return true;
    };
    // SAFETY: the payload belongs to the MD the message holds, or to the
    // router buffer of a forwarded one.
    let md_node = unsafe { crate::numa::payload_node(&m.desc) };
    // A forwarded message's source is another node's: selection picks
    // our NI freely, and the header keeps it (`lnet_handle_send`).
    let forwarded = m.fwd.is_some();
    let src_choice = if forwarded { Nid::ANY } else { m.hdr.src_nid };
    let Some(Path {
        ni,
        to,
        from: src,
        routed,
    }) = select_path(
        lnet,
        &m.hdr.dest_nid,
        &src_choice,
        &m.hdr.msg,
        m.recovery,
        md_node,
    )
    else {
        crate::cneterr!(
            "No route to {} (no local NI on its net and no alive route to it)\n",
            m.hdr.dest_nid
        );
        // A remote error, as Lustre's `lnet_send`. Only a REPLY is still
        // committed (for receive, as the GET it answers): its health check
        // charges the peer NI the GET came from, on the NI it came in on.
        // Any other message is committed to nothing and charges nobody
        // (`lnet_is_health_check`).
        finalize(lnet, m, EHOSTUNREACH().to_errno(), Status::RemoteError);
        return false;
    };
    // Committed for send from here: a REPLY leaves its GET's receive side.
    m.rx = false;
    m.ni = None;
    // A routed message keeps its final destination in the header; the
    // LND takes it to the gateway (`to`).
    if !routed {
        m.hdr.dest_nid = to;
    }
    m.txpeer = to;
    if !forwarded {
        m.hdr.src_nid = src;
        // A fresh deadline for each attempt, from the NI it goes out on;
        // a router has none (`lnet_check_message_drop`).
        m.deadline = commit_deadline(&ni);
        m.hdr.src_pid = lnet.pid.load(Ordering::Relaxed);
    }
    // The response tracker blames the peer NI actually used (its next hop).
    if let (Some(cookie), MsgBody::Put { .. } | MsgBody::Get { .. }) = (m.md, m.hdr.msg) {
        if let Some(r) = lnet
            .res
            .lock()
            .mds
            .get_mut(&cookie)
            .and_then(|md| md.rspt.as_mut())
        {
            r.1 = to;
        }
    }
    let hdr = m.hdr;
    let d = &mut m.desc;
    d.type_ = hdr.msg.type_code();
    d.target.nid = api::nid_to_c(&to);
    d.target.pid = hdr.dest_pid;
    let encoded = match hdr.encode_nid4(&mut d.hdr[..HDR_NID4_LEN]) {
        Ok(()) => Ok(HDR_NID4_LEN),
        Err(_) => hdr
            .encode_nid16(&mut d.hdr[..HDR_NID16_LEN])
            .map(|()| HDR_NID16_LEN),
    };
    match encoded {
        Ok(n) => d.hdr_len = n as u32,
        Err(e) => {
            crate::cerror!("Cannot encode header to {}: {}\n", hdr.dest_nid, e);
            finalize(lnet, m, EPROTO().to_errno(), Status::LocalError);
            return false;
        }
    }
    ni.count_send(hdr.payload_length, msg_stats::slot(&hdr.msg));
    // A forwarded message counts in `route_count` once sent instead.
    if !forwarded {
        Counters::add(&lnet.counters.send_count);
        Counters::add_len(&lnet.counters.send_length, hdr.payload_length);
    }
    m.ni = Some(ni);
    match crate::fault::on_send(lnet, &hdr) {
        crate::fault::Verdict::Pass => crate::credits::post(lnet, m),
        crate::fault::Verdict::Drop(hstatus) => {
            crate::cdebug_limit!(
                crate::lnet_core::debug::D_NET,
                "Dropping {} to {} to simulate {}\n",
                hdr.msg.type_name(),
                hdr.dest_nid,
                hstatus.name()
            );
            // As an LND that failed to post it: the health machinery
            // takes it from here.
            finalize(lnet, m, EINVAL.to_errno(), hstatus);
        }
        crate::fault::Verdict::Delay { at, rule } => {
            if let Err(m) = crate::fault::hold_send(lnet, m, at, rule) {
                crate::credits::post(lnet, m);
            }
        }
    }
    true
}

/// Hands a selected, encoded message that has its credits to its NI's
/// LND; finalizes it if the LND refuses it.
pub(crate) fn lnd_send(lnet: &TheLnet, m: KBox<Msg>) {
    let Some(ni) = m.ni.clone() else {
        finalize(lnet, m, EHOSTUNREACH().to_errno(), Status::LocalError);
        return;
    };
    // An NI whose shutdown has begun takes no more sends: the message may
    // go another way (`lnet_ni_send` on an NI being deleted).
    let Some(pass) = ni.lnd_gate.enter() else {
        finalize(lnet, m, ESHUTDOWN().to_errno(), Status::LocalDropped);
        return;
    };
    let p = Msg::into_c(m);
    // SAFETY: `p` is a live message until finalized; the descriptor is
    // inside it.
    let desc = unsafe { core::ptr::addr_of!((*p.cast::<Msg>()).desc) };
    let sent = ni.lnd.send(&ni, p, desc);
    drop(pass);
    if let Err(e) = sent {
        // SAFETY: the LND refused the message, so it is still ours.
        let m = unsafe { Msg::from_c(p) };
        // The health status is the one the LND set, if any; with none (OK
        // beside an error) health is left alone and the message fails, as
        // in Lustre. Unlike Lustre's lnet_ni_send, one with a status stays
        // resendable: our LNDs set one when the peer is in reconnect backoff
        // or the device refused the work, and another path is then exactly
        // what health should try.
        let hs = m.lnd_hstatus;
        finalize(lnet, m, e.to_errno(), hs);
    }
}

/// The deadline of a message committed now on `ni`, for send or receive
/// (`get_msg_deadline`, health.md §5.1).
pub(crate) fn commit_deadline(ni: &Ni) -> i64 {
    let t = params::snapshot();
    // Asked at each commit: the administrator may change the LND's timeout.
    // An NI being shut down has none (LNet's is used).
    let lnd_timeout = ni
        .lnd_gate
        .enter()
        .and_then(|_pass| ni.lnd.timeout())
        .map_or(-1, |s| i32::try_from(s).unwrap_or(i32::MAX));
    let secs = crate::lnet_core::health::msg_deadline_secs(
        lnd_timeout,
        t.retry_count,
        t.transaction_timeout,
    );
    kapi::kthread::now_secs().saturating_add(i64::from(secs))
}

/// Starts a PUT or GET from a bound MD (the body of `LNetPut`/`LNetGet`).
pub(crate) struct Request {
    pub(crate) md: u64,
    pub(crate) target: Nid,
    pub(crate) target_pid: u32,
    pub(crate) src: Nid,
    pub(crate) portal: u32,
    pub(crate) match_bits: u64,
    pub(crate) offset: u32,
    /// PUT: Some(hdr_data); GET: None.
    pub(crate) put: Option<u64>,
    pub(crate) ack: bool,
    /// Seconds for the ACK/REPLY; 0 for `lnet_transaction_timeout`.
    pub(crate) timeout: u32,
    /// A recovery ping: never resent, no Multi-Rail selection.
    pub(crate) recovery: bool,
}

pub(crate) fn start(lnet: &TheLnet, r: Request) -> Result {
    let is_put = r.put.is_some();
    let placeholder = Hdr {
        dest_nid: r.target,
        src_nid: r.src,
        dest_pid: r.target_pid,
        src_pid: 0,
        payload_length: 0,
        msg: MsgBody::Reply {
            dst_wmd: WireHandle::NONE,
        },
    };
    let mut m = Msg::new(lnet, placeholder)?;
    let t = params::snapshot();
    let mut res = lnet.res.lock();
    if !lnet.is_running() {
        drop(res);
        Msg::free(lnet, m);
        return Err(ESHUTDOWN());
    }
    let Some(md) = res
        .md(r.md)
        .filter(|md| md.state.threshold != 0 && md.me.is_none())
    else {
        drop(res);
        Msg::free(lnet, m);
        return Err(ENOENT);
    };
    md.refcount += 1;
    md.take_op();
    let len = md.state.length;
    let wmd = WireHandle {
        interface_cookie: lnet.interface_cookie,
        object_cookie: r.md,
    };
    let tracked = (!is_put || r.ack)
        && core_md::response_tracked(md.state.options, t.response_tracking, is_put, r.timeout > 0);
    if tracked {
        let secs = if r.timeout > 0 {
            r.timeout
        } else {
            t.transaction_timeout
        };
        let deadline = kapi::kthread::now_secs().saturating_add(i64::from(secs));
        if md.rspt.replace((deadline, r.target)).is_none() {
            lnet.counters.rst_alloc.fetch_add(1, Ordering::Relaxed);
        }
        lnet.next_deadline.fetch_min(deadline, Ordering::Relaxed);
    }
    if is_put {
        set_payload(&mut m, &md.kiov, 0, len);
    }
    m.md = Some(r.md);
    m.no_resend = r.recovery;
    m.recovery = r.recovery;
    drop(res);

    m.hdr.msg = match r.put {
        Some(hdr_data) => MsgBody::Put {
            ack_wmd: if r.ack { wmd } else { WireHandle::NONE },
            match_bits: r.match_bits,
            hdr_data,
            ptl_index: r.portal,
            offset: r.offset,
        },
        None => MsgBody::Get {
            return_wmd: wmd,
            match_bits: r.match_bits,
            ptl_index: r.portal,
            src_offset: r.offset,
            sink_length: len,
        },
    };
    m.hdr.payload_length = if is_put { len } else { 0 };
    m.hdr.src_pid = lnet.pid.load(Ordering::Relaxed);
    m.build_event(lnet, EventKind::Send, Nid::ANY);
    m.ev.mlength = len;
    m.ev.rlength = len;
    m.ev.offset = r.offset;
    send(lnet, m);
    Ok(())
}
