// SPDX-License-Identifier: GPL-2.0

//! The receive path (`lnet_parse`, Lustre's lib-move.c): an incoming
//! message counted, checked and delivered to the MD it matches, for the
//! four message types, and the REPLY an LND makes for an optimized GET.

use crate::counters::Counters;
use crate::kapi;
use crate::kapi::errno::*;
use crate::kapi::kiov::BioVec;
use crate::lnet_core::hdr::{Hdr, MsgBody, WireHandle, HDR_NID16_LEN, HDR_NID4_LEN};
use crate::lnet_core::health::Status;
use crate::lnet_core::md::{self as core_md, EventKind};
use crate::lnet_core::msg_stats;
use crate::lnet_core::nid::Nid;
use crate::msg::{detach_tracker, finalize, Msg};
use crate::ni::Ni;
use crate::portal::{match_request, md_view, request_of, Delayed, MdView, Miss};
use crate::send::{commit_deadline, send};
use crate::state::{Res, TheLnet};
use core::ffi::c_void;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Counts a message received from `from` on `ni` (creating its peer, which
/// gets the receiving NI as its preferred one, as Lustre does). A message parsed from it (`parsed`) also marks the
/// peer NI up, whatever its node last reported (`lnet_parse`): a node
/// whose NI comes back through health alone does not push that. Returns
/// the primary NID of `src`'s peer, the message's initiator
/// (`lnet_peer_primary_nid_locked`).
fn count_rx(lnet: &TheLnet, ni: &Ni, from: &Nid, src: &Nid, slot: usize, parsed: bool) -> Nid {
    if ni.nid == Nid::LO {
        return *src;
    }
    let mut peers = lnet.peers.lock();
    // One lookup on this hot path; creation only for a NID never seen.
    let (found, known) = match peers.locate(from) {
        Some(f) => (Ok(f), true),
        None => (peers.find_or_create(from), false),
    };
    if let Ok((pi, li)) = found {
        if let Some(peer) = peers.list.get_mut(pi) {
            let multi_rail = peer.multi_rail;
            if let Some(p) = peer.nis.get_mut(li) {
                p.received.add(slot);
                // Only a peer NI this receive creates takes the receiving
                // NI as its preferred one (`lnet_peer_ni_traffic_add`).
                if !multi_rail && !known {
                    p.pref_nid = Some(ni.nid);
                }
                p.last_alive = kapi::kthread::now_secs();
                if parsed {
                    p.ns_status = crate::lnet_core::ping::STATUS_UP;
                }
            }
        }
        if parsed {
            crate::router_check::received(&mut peers, pi, from, src);
        }
    }
    let found = peers.locate(src);
    found
        .and_then(|(pi, _)| peers.list.get(pi))
        .map_or(*src, |p| p.primary)
}

/// Hands a received message to its LND to take `mlen` of `rlen` payload
/// bytes into `sink` (fragments, count, offset); the LND finalizes it, or
/// it is finalized here if the LND refuses.
#[allow(clippy::too_many_arguments)]
pub(crate) fn recv(
    lnet: &TheLnet,
    ni: &Ni,
    private: *mut c_void,
    m: KBox<Msg>,
    delayed: bool,
    sink: (*mut BioVec, u32, u32),
    mlen: u32,
    rlen: u32,
) {
    let (kiov, niov, offset) = sink;
    let p = Msg::into_c(m);
    let r = ni
        .lnd
        .recv(ni, private, p, delayed, kiov, niov, offset, mlen, rlen);
    if let Err(e) = r {
        // SAFETY: the LND refused the message, so it is still ours.
        let m = unsafe { Msg::from_c(p) };
        // No health status, as Lustre's lnet_ni_recv leaves it: a refused
        // receive costs no NI its health.
        finalize(lnet, m, e.to_errno(), Status::Ok);
    }
}

/// Counts a dropped message of `len` bytes on LNet, its NI and the peer
/// NI it came from or was going to.
pub(crate) fn count_dropped(lnet: &TheLnet, ni: &Ni, peer: &Nid, len: u32, body: &MsgBody) {
    let slot = msg_stats::slot(body);
    Counters::add(&lnet.counters.drop_count);
    Counters::add_len(&lnet.counters.drop_length, len);
    ni.dropped.add(slot);
    let mut peers = lnet.peers.lock();
    if let Some(p) = peers.peer_ni_mut(peer) {
        p.dropped.add(slot);
    }
}

/// Discards an incoming message's payload (`lnet_drop_message`).
pub(crate) fn drop_incoming(
    lnet: &TheLnet,
    ni: &Ni,
    private: *mut c_void,
    rlen: u32,
    why: &str,
    hdr: &Hdr,
) {
    crate::cneterr!(
        "Dropping {} from {} to {} on {}: {}\n",
        hdr.msg.type_name(),
        hdr.src_nid,
        hdr.dest_nid,
        ni.nid,
        why
    );
    discard_incoming(lnet, ni, private, rlen, hdr);
}

/// Drops a message as `drop_incoming` does, counted but not logged: one
/// that is expected.
fn discard_incoming(lnet: &TheLnet, ni: &Ni, private: *mut c_void, rlen: u32, hdr: &Hdr) {
    count_dropped(lnet, ni, &hdr.src_nid, rlen, &hdr.msg);
    let null = core::ptr::null_mut();
    let _ = ni
        .lnd
        .recv(ni, private, null, false, null.cast(), 0, 0, 0, rlen);
}

/// A header arrived on `ni` (`lnet_parse`). Returns 0 once the LND has been
/// (or will be) asked to receive or discard the payload, or a negative
/// errno for a header the LND should treat as a protocol error.
pub(crate) fn parse(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    bytes: &[u8],
    from: Nid,
    private: *mut c_void,
    rdma_req: bool,
) -> i32 {
    let decoded = match bytes.len() {
        HDR_NID4_LEN => Hdr::decode_nid4(bytes),
        HDR_NID16_LEN => Hdr::decode_nid16(bytes),
        n => {
            crate::cerror!("Bad header length {} from {}\n", n, from);
            return EPROTO().to_errno();
        }
    };
    let hdr = match decoded.and_then(|h| h.check().map(|()| h)) {
        Ok(h) => h,
        Err(e) => {
            crate::cerror!("Bad header from {}: {}\n", from, e);
            return EPROTO().to_errno();
        }
    };
    let rlen = hdr.payload_length;
    if !lnet.is_running() {
        drop_incoming(lnet, ni, private, rlen, "LNet is shutting down", &hdr);
        return 0;
    }
    // A ping keeps a router's net alive (`net_last_alive`).
    let is_ping = matches!(hdr.msg, MsgBody::Get { ptl_index: 0, .. });
    crate::router_check::heard(lnet, ni, &hdr.src_nid, is_ping);
    // Only for the NI it came in on: nothing reaches our other NIDs over
    // 0@lo. Anything else is another node's, to forward or drop.
    if hdr.dest_nid != ni.nid {
        parse_forward(lnet, ni, &hdr, from, private, rdma_req);
        return 0;
    }
    if hdr.dest_pid != lnet.pid.load(Ordering::Relaxed) {
        drop_incoming(lnet, ni, private, rlen, "wrong pid", &hdr);
        return 0;
    }
    let delay = match crate::fault::on_recv(lnet, &hdr, &ni.nid) {
        crate::fault::Verdict::Pass => None,
        crate::fault::Verdict::Drop(_) => {
            drop_incoming(
                lnet,
                ni,
                private,
                rlen,
                "simulating silent message loss",
                &hdr,
            );
            return 0;
        }
        crate::fault::Verdict::Delay { at, rule } => Some((at, rule)),
    };
    Counters::add(&lnet.counters.recv_count);
    Counters::add_len(&lnet.counters.recv_length, rlen);
    let slot = msg_stats::slot(&hdr.msg);
    ni.count_recv(rlen, slot);
    let initiator = count_rx(lnet, ni, &from, &hdr.src_nid, slot, true);
    let Ok(mut m) = Msg::new(lnet, hdr) else {
        drop_incoming(lnet, ni, private, rlen, "out of memory", &hdr);
        return 0;
    };
    m.rx = true;
    m.rx_committed = true;
    m.rdma_get = rdma_req && matches!(hdr.msg, MsgBody::Get { .. });
    m.from = from;
    m.initiator = initiator;
    // Committed for receive on this NI (health.md §5.1), before any delay
    // rule holds it, as Lustre commits before its delay check.
    m.deadline = commit_deadline(ni);
    m.ni = Some(ni.clone());
    if let Some((at, rule)) = delay {
        match crate::fault::hold_recv(lnet, m, ni, private, at, rule) {
            Ok(()) => return 0,
            Err(back) => m = back,
        }
    }
    deliver(lnet, ni, m, from, private)
}

/// A message for another node arrived on `ni` (`lnet_parse` when not
/// `for_me`): forwarded when routing is on, else dropped.
///
/// Lustre answers a destination on the receiving NI's own net, or one of
/// our own NIDs on another net, or an optimized GET to forward, with
/// `-EPROTO`, and its LND closes the connection; lnet-rs drops the
/// message, counted and logged, and keeps the connection, as it did
/// before forwarding.
fn parse_forward(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    hdr: &Hdr,
    from: Nid,
    private: *mut c_void,
    rdma_req: bool,
) {
    let rlen = hdr.payload_length;
    let local = || lnet.nis.lock().nis.iter().any(|n| n.nid == hdr.dest_nid);
    let why = if hdr.dest_nid.net() == ni.nid.net() {
        Some("not for this NI (it should have been sent direct)")
    } else if local() {
        Some("not for this NI (my NID on another net)")
    } else if rdma_req && matches!(hdr.msg, MsgBody::Get { .. }) {
        Some("not for this NI (an optimized GET must be for me)")
    } else if !crate::router::routing(lnet) {
        Some("not for this NI and routing is off")
    } else {
        None
    };
    if let Some(why) = why {
        drop_incoming(lnet, ni, private, rlen, why, hdr);
        return;
    }
    // Drop rules apply to forwarded messages; delay rules do not (they
    // hold only messages for this node here).
    if let crate::fault::Verdict::Drop(_) = crate::fault::on_recv(lnet, hdr, &ni.nid) {
        drop_incoming(
            lnet,
            ni,
            private,
            rlen,
            "simulating silent message loss",
            hdr,
        );
        return;
    }
    // Counted on the NI and the peer NI, not in the node's receive count:
    // Lustre counts it as routed once sent on.
    let slot = msg_stats::slot(&hdr.msg);
    ni.count_recv(rlen, slot);
    let initiator = count_rx(lnet, ni, &from, &hdr.src_nid, slot, true);
    let Ok(mut m) = Msg::new(lnet, *hdr) else {
        drop_incoming(lnet, ni, private, rlen, "out of memory", hdr);
        return;
    };
    m.rx = true;
    m.rx_committed = true;
    m.from = from;
    m.initiator = initiator;
    // No deadline: a router always tries to deliver.
    m.deadline = 0;
    m.ni = Some(ni.clone());
    crate::router::forward(lnet, ni, m, private);
}

/// Matches a received message and has its LND receive it (the part of
/// `lnet_parse` a delay rule postpones).
pub(crate) fn deliver(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    m: KBox<Msg>,
    from: Nid,
    private: *mut c_void,
) -> i32 {
    match m.hdr.msg {
        MsgBody::Put { .. } | MsgBody::Get { .. } => parse_request(lnet, ni, m, from, private),
        MsgBody::Ack { dst_wmd, .. } | MsgBody::Reply { dst_wmd } => {
            parse_response(lnet, ni, m, dst_wmd, from, private)
        }
        MsgBody::Hello { .. } => {
            Msg::free(lnet, m);
            EPROTO().to_errno()
        }
    }
}

fn parse_request(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    m: KBox<Msg>,
    from: Nid,
    private: *mut c_void,
) -> i32 {
    let hdr = m.hdr;
    let (portal, inc) = request_of(&hdr, m.initiator);
    let mut res = lnet.res.lock();
    let why = match match_request(&mut res, portal, &inc) {
        Ok((cookie, offset, mlength)) => {
            let view = md_view(&res, cookie);
            drop(res);
            receive_request(
                lnet, ni, m, cookie, view, offset, mlength, from, private, false,
            );
            return 0;
        }
        Err(Miss::NoMatch) if res.lazy & (1u64 << (portal % 64)) != 0 => {
            // Checked under the resource lock, which LNet's shutdown and
            // `drop_delayed_on` take before dropping what waits: nothing
            // parks behind them (an NI going away, or LNet, would never
            // hand the LND its reference back).
            let going = ni.state.load(Ordering::Relaxed) == crate::ni::NiState::Deleting as u32;
            if !lnet.is_running() || going {
                "shutting down"
            } else if res.delayed.reserve(1, GFP_ATOMIC).is_ok() {
                // INVARIANT: the LND's `private` goes with its message to
                // `d`; nothing here has handed it back.
                let d = Delayed {
                    msg: m,
                    ni: ni.clone(),
                    private,
                    from,
                    portal,
                };
                // Room was reserved: this cannot fail.
                let _ = res.delayed.push(d, GFP_ATOMIC);
                return 0;
            } else {
                "no memory to wait on the lazy portal"
            }
        }
        Err(Miss::NoMatch) => "no matching ME",
        Err(Miss::Drop(why)) => why,
    };
    drop(res);
    Msg::free(lnet, m);
    drop_incoming(lnet, ni, private, hdr.payload_length, why, &hdr);
    0
}

/// Receives a matched request: a PUT's payload goes into the MD and its
/// end delivers the PUT event (and sends the ACK); a GET turns into the
/// REPLY carrying the MD's data, whose end delivers the GET event.
#[allow(clippy::too_many_arguments)]
pub(crate) fn receive_request(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    mut m: KBox<Msg>,
    cookie: u64,
    view: MdView,
    offset: u32,
    mlength: u32,
    from: Nid,
    private: *mut c_void,
    delayed: bool,
) {
    let hdr = m.hdr;
    m.md = Some(cookie);
    match hdr.msg {
        MsgBody::Put { ack_wmd, .. } => {
            m.build_event(lnet, EventKind::Put, from);
            m.ev.mlength = mlength;
            m.ev.offset = offset;
            if !ack_wmd.is_none() && !view.ack_disabled {
                m.ack = Some((ack_wmd, hdr.src_nid, mlength));
            }
            let rlen = hdr.payload_length;
            let sink = (view.kiov, view.niov, offset);
            recv(lnet, ni, private, m, delayed, sink, mlength, rlen);
        }
        MsgBody::Get { return_wmd, .. } => {
            m.build_event(lnet, EventKind::Get, from);
            m.ev.mlength = mlength;
            m.ev.offset = offset;
            let reply = Hdr {
                dest_nid: hdr.src_nid,
                src_nid: hdr.dest_nid,
                dest_pid: hdr.src_pid,
                src_pid: hdr.dest_pid,
                payload_length: mlength,
                msg: MsgBody::Reply {
                    dst_wmd: return_wmd,
                },
            };
            m.hdr = reply;
            if m.rdma_get {
                // The LND writes the MD's data into the initiator's buffer
                // and finalizes the REPLY; it stays committed for receive on
                // this NI, as Lustre's does (`lnet_parse_get`).
                let src = (view.kiov, view.niov, offset);
                recv(lnet, ni, private, m, delayed, src, mlength, mlength);
                return;
            }
            // The GET has no payload: let the LND finish with it, then the
            // same message goes back as the REPLY, still committed for
            // receive on this NI until `send` commits it for send.
            let null = core::ptr::null_mut();
            let _ = ni
                .lnd
                .recv(ni, private, null, delayed, null.cast(), 0, 0, 0, 0);
            // INVARIANT: `view` is the MD `m.md` names, which `commit`
            // counted `m`'s reference on.
            m.desc.kiov = view.kiov.cast();
            m.desc.niov = view.niov;
            m.desc.offset = offset;
            m.desc.len = mlength;
            send(lnet, m);
        }
        // Only requests get here; anything else still hands the LND its
        // context back.
        _ => {
            Msg::free(lnet, m);
            drop_incoming(lnet, ni, private, hdr.payload_length, "not a request", &hdr);
        }
    }
}

fn parse_response(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    mut m: KBox<Msg>,
    wmd: WireHandle,
    from: Nid,
    private: *mut c_void,
) -> i32 {
    let hdr = m.hdr;
    let is_reply = matches!(hdr.msg, MsgBody::Reply { .. });
    let rlength = hdr.payload_length;
    let mut res = lnet.res.lock();
    let found = if wmd.interface_cookie == lnet.interface_cookie {
        res.md(wmd.object_cookie).map(|md| md.state.length)
    } else {
        None
    };
    let why = match found {
        None => Some(if is_reply {
            "REPLY to an MD that is gone"
        } else {
            "ACK to an MD that is gone"
        }),
        Some(len) if is_reply && rlength > len && !truncates(&mut res, wmd.object_cookie) => {
            Some("REPLY longer than its MD")
        }
        _ => None,
    };
    if let Some(why) = why {
        drop(res);
        Msg::free(lnet, m);
        // An ACK may well come after its MD went: PtlRPC unlinks a
        // difficult reply's MD once it has handled the reply, ACKed or not.
        // Lustre drops those silently (debug log only), and so do we: a
        // Lustre server would log one for many of its replies.
        if is_reply {
            drop_incoming(lnet, ni, private, rlength, why, &hdr);
        } else {
            discard_incoming(lnet, ni, private, rlength, &hdr);
        }
        return 0;
    }
    let cookie = wmd.object_cookie;
    let (kiov, niov, mlength) = match res.mds.get_mut(&cookie) {
        Some(md) => {
            md.refcount += 1;
            md.take_op();
            (
                md.kiov.as_ptr().cast_mut(),
                md.kiov.len() as u32,
                rlength.min(md.state.length),
            )
        }
        None => (core::ptr::null_mut(), 0, 0),
    };
    detach_tracker(lnet, &mut res, cookie);
    drop(res);
    m.md = Some(cookie);
    if is_reply {
        m.build_event(lnet, EventKind::Reply, from);
        m.ev.mlength = mlength;
        m.ev.offset = 0;
        recv(
            lnet,
            ni,
            private,
            m,
            false,
            (kiov, niov, 0),
            mlength,
            rlength,
        );
    } else {
        m.build_event(lnet, EventKind::Ack, from);
        let none = (core::ptr::null_mut(), 0, 0);
        recv(lnet, ni, private, m, false, none, 0, 0);
    }
    0
}

/// The REPLY of a GET being sent whose target writes the data straight
/// into the GET's MD (`lnet_create_reply_msg`, for o2iblnd's GET_REQ):
/// committed for receive on the GET's NI, holding the MD, with the MD's
/// fragments (`kiov`, count, length) for the LND to offer as the sink.
/// None when the MD is spent or there is no memory: the GET is then sent
/// as usual.
///
/// The GET is no longer resent: its REPLY belongs to this attempt and
/// ends with it, so a resend's data would find the MD spent (Lustre resends
/// it all the same, and drops that REPLY).
pub(crate) fn create_reply(
    lnet: &TheLnet,
    get: &mut Msg,
) -> Option<(KBox<Msg>, *mut BioVec, u32, u32)> {
    let ni = get.ni.clone()?;
    let cookie = get.md?;
    let MsgBody::Get { return_wmd, .. } = get.hdr.msg else {
        return None;
    };
    let from = get.hdr.dest_nid;
    let hdr = Hdr {
        dest_nid: get.hdr.src_nid,
        src_nid: from,
        dest_pid: get.hdr.src_pid,
        src_pid: get.hdr.dest_pid,
        payload_length: 0,
        msg: MsgBody::Reply {
            dst_wmd: return_wmd,
        },
    };
    let mut m = Msg::new(lnet, hdr).ok()?;
    let initiator = {
        let peers = lnet.peers.lock();
        peers
            .find(&from)
            .and_then(|(pi, _)| peers.list.get(pi))
            .map_or(from, |p| p.primary)
    };
    let mut res = lnet.res.lock();
    let sink = match res.mds.get_mut(&cookie) {
        Some(md) if md.state.threshold != 0 && !md.is_zombie() => {
            md.refcount += 1;
            md.take_op();
            let len = md.state.length;
            Some((md.kiov.as_ptr().cast_mut(), md.kiov.len() as u32, len))
        }
        _ => None,
    };
    drop(res);
    let Some((kiov, niov, len)) = sink else {
        Msg::free(lnet, m);
        return None;
    };
    m.hdr.payload_length = len;
    m.md = Some(cookie);
    m.rx = true;
    m.rx_committed = true;
    m.no_rx_peer = true;
    m.from = from;
    m.initiator = initiator;
    m.deadline = commit_deadline(&ni);
    m.ni = Some(ni);
    m.build_event(lnet, EventKind::Reply, from);
    m.ev.mlength = len;
    m.ev.offset = 0;
    get.no_resend = true;
    Some((m, kiov, niov, len))
}

/// The target has written `len` bytes of a REPLY made by [`create_reply`]
/// (`lnet_set_reply_msg_len`): the REPLY has arrived. False, changing
/// nothing, if that is more than the sink offered.
pub(crate) fn set_reply_len(lnet: &TheLnet, m: &mut Msg, len: u32) -> bool {
    if len > m.ev.mlength || !m.rx || !matches!(m.hdr.msg, MsgBody::Reply { .. }) {
        return false;
    }
    m.ev.mlength = len;
    Counters::add(&lnet.counters.recv_count);
    Counters::add_len(&lnet.counters.recv_length, len);
    if let Some(ni) = m.ni.as_ref() {
        let slot = msg_stats::slot(&m.hdr.msg);
        ni.count_recv(len, slot);
        // Lustre's REPLY written by RDMA has no peer NI to mark up.
        count_rx(lnet, ni, &m.from, &m.hdr.src_nid, slot, false);
    }
    if let Some(cookie) = m.md {
        detach_tracker(lnet, &mut lnet.res.lock(), cookie);
    }
    true
}

fn truncates(res: &mut Res, cookie: u64) -> bool {
    res.md(cookie)
        .is_some_and(|md| md.state.options & core_md::options::TRUNCATE != 0)
}
