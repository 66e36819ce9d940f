// SPDX-License-Identifier: GPL-2.0

//! The RDMA CM event handler (`kiblnd_cm_callback`), one function per
//! event: address and route resolution, the active side's CONNREQ and its
//! check of the CONNACK, the passive side's checks and reject reasons
//! (wire.md §6.3), and the ends of a connection. Every event, known or
//! not, is handled without a crash.

use crate::conn::{Conn, State};
use crate::kapi::rdma::{CmEvent, CmEventType, CmEvents, CmIdRef, ConnectParams};
use crate::lnet_core::o2iblnd::{self as wire, MsgBody, Rej, RejParams, RejectReason};
use crate::lnet_core::o2iblnd_health::errno;
use crate::lnet_core::o2iblnd_params::IbParam;
use crate::lnet_core::o2iblnd_reject::{after_reject, AfterReject};
use crate::ni::{IbNi, Listening, RESOLVE_TIMEOUT_MS};
use crate::params;
use core::ffi::c_int;
use core::sync::atomic::Ordering;
use kernel::sync::{Arc, ArcBorrow};

/// The listener's events: connection requests, and its device going away.
/// A request's new id starts with the listener's handler and context;
/// `passive_connect` gives it to its connection.
impl CmEvents for Listening {
    fn event(l: ArcBorrow<'_, Listening>, id: &CmIdRef<'_>, ev: &CmEvent<'_>) -> c_int {
        let Some(ni) = l.ni() else {
            // The NI is stopping (or not listening yet): a request is
            // refused, its new id destroyed.
            return match ev.event() {
                CmEventType::ConnectRequest => CmIdRef::DESTROY,
                _ => 0,
            };
        };
        match ev.event() {
            CmEventType::ConnectRequest => passive_connect(&ni.as_arc_borrow(), id, ev),
            CmEventType::DeviceRemoval => {
                ni.device_removed();
                0
            }
            e => {
                crate::cnet!("{}: CM event {:?} for the listener\n", ni.nid, e);
                0
            }
        }
    }
}

/// The events of a connection's id, which holds a reference to it.
impl CmEvents for Conn {
    fn event(conn: ArcBorrow<'_, Conn>, id: &CmIdRef<'_>, ev: &CmEvent<'_>) -> c_int {
        cm_event(conn.into(), id, ev)
    }
}

fn cm_event(conn: Arc<Conn>, id: &CmIdRef<'_>, ev: &CmEvent<'_>) -> c_int {
    match ev.event() {
        CmEventType::AddrResolved => addr_resolved(&conn, id, ev),
        CmEventType::AddrError | CmEventType::RouteError => {
            crate::cneterr!(
                "{}: can't reach {}: {}\n",
                conn.ni.nid,
                conn.peer,
                ev.status()
            );
            conn.close(-errno::EHOSTUNREACH);
        }
        CmEventType::RouteResolved => route_resolved(&conn, id, ev),
        CmEventType::Unreachable => connect_failed(&conn, -errno::ENETDOWN, "unreachable"),
        CmEventType::ConnectError => connect_failed(&conn, -errno::ENOTCONN, "connect error"),
        CmEventType::Rejected => rejected(&conn, id, ev),
        CmEventType::Established => established(&conn, ev),
        CmEventType::Disconnected => {
            let connecting = conn.inner.lock().state == State::Connecting;
            conn.close(if connecting { -errno::ECONNRESET } else { 0 });
        }
        CmEventType::DeviceRemoval => {
            crate::cerror!(
                "{}: RDMA device going away under {}\n",
                conn.ni.nid,
                conn.peer
            );
            conn.close(-errno::ENETDOWN);
        }
        e => crate::cnet!("{}: CM event {:?} for {}\n", conn.ni.nid, e, conn.peer),
    }
    0
}

fn connect_failed(conn: &Arc<Conn>, err: i32, what: &str) {
    if conn.inner.lock().state == State::Connecting {
        crate::cneterr!("{}: {} connecting to {}\n", conn.ni.nid, what, conn.peer);
        conn.close(err);
    }
}

fn addr_resolved(conn: &Arc<Conn>, id: &CmIdRef<'_>, ev: &CmEvent<'_>) {
    if ev.status() != 0 {
        conn.close(ev.status());
        return;
    }
    // The NI's own, else the module parameter as the NI started.
    if let Some(tos) = conn.ni.tun.tos {
        id.set_tos(tos);
    }
    if let Err(e) = id.resolve_route(RESOLVE_TIMEOUT_MS) {
        conn.close(e.to_errno());
    }
}

/// The route is known: build the QP and send the CONNREQ
/// (`kiblnd_active_connect`).
fn route_resolved(conn: &Arc<Conn>, id: &CmIdRef<'_>, ev: &CmEvent<'_>) {
    if ev.status() != 0 {
        conn.close(ev.status());
        return;
    }
    let mut cp = conn.inner.lock().cp;
    if let Err(e) = conn.setup_qp(id, &mut cp) {
        crate::cerror!(
            "{}: can't set up a QP for {}: {:?}\n",
            conn.ni.nid,
            conn.peer,
            e
        );
        conn.close(e.to_errno());
        return;
    }
    let req = wire::Msg {
        version: wire::VERSION,
        credits: 0,
        cksum: conn.ni.cksum(),
        src_nid: conn.ni.nid,
        src_stamp: conn.ni.incarnation,
        dst_nid: conn.peer,
        dst_stamp: conn.inner.lock().peer_stamp,
        body: MsgBody::ConnReq(cp),
    };
    let mut buf = [0u8; wire::CONNREQ_LEN];
    let Some(n) = req.encode(&mut buf) else {
        conn.close(-errno::EPROTO);
        return;
    };
    let p = ConnectParams {
        retry_count: params::get(IbParam::RetryCount) as u8,
        rnr_retry_count: params::get(IbParam::RnrRetryCount) as u8,
    };
    if let Err(e) = id.connect(&buf[..n], p) {
        crate::cneterr!("{}: can't connect to {}: {:?}\n", conn.ni.nid, conn.peer, e);
        conn.close(e.to_errno());
    }
}

/// ESTABLISHED: the active side checks the CONNACK first
/// (`kiblnd_check_connreply`).
fn established(conn: &Arc<Conn>, ev: &CmEvent<'_>) {
    if conn.active {
        let sent = conn.inner.lock().cp;
        let ack = wire::Msg::decode(ev.private_data()).and_then(|m| {
            m.check_connack(wire::VERSION, &sent, conn.ni.nid, conn.ni.incarnation)
                .map(|cp| (cp, m.src_stamp, m.src_nid))
        });
        match ack {
            Ok((cp, stamp, src)) if src == conn.peer => {
                let mut g = conn.inner.lock();
                g.peer_stamp = stamp;
                g.cp = cp;
                g.credits = crate::lnet_core::o2iblnd_credits::Credits::new(
                    cp.queue_depth,
                    conn.ni.tun.concurrent_sends.min(cp.queue_depth),
                    conn.ni.tun.peer_credits,
                    conn.ni.tun.peer_credits_hiw,
                );
            }
            Ok((_, _, src)) => {
                crate::cneterr!("{}: CONNACK from {}, not {}\n", conn.ni.nid, src, conn.peer);
                crate::PROTOCOL_ERRORS.fetch_add(1, Ordering::Relaxed);
                conn.close(-errno::EPROTO);
                return;
            }
            Err(e) => {
                crate::cneterr!("{}: bad CONNACK from {}: {}\n", conn.ni.nid, conn.peer, e);
                crate::PROTOCOL_ERRORS.fetch_add(1, Ordering::Relaxed);
                conn.close(-errno::EPROTO);
                return;
            }
        }
    }
    conn.ni.conn_established(conn);
}

/// REJECTED: the passive side's reason decides (`kiblnd_rejected`). A
/// lost race keeps the peer's waiting txs for the winner's connection.
fn rejected(conn: &Arc<Conn>, id: &CmIdRef<'_>, ev: &CmEvent<'_>) {
    if conn.inner.lock().state != State::Connecting {
        // The peer gave up on a connection it never saw established
        // (its CM rejects what it destroys before the RTU): the CM has
        // already put the QP in error.
        crate::cneterr!(
            "{}: {} rejected an established connection (CM status {})\n",
            conn.ni.nid,
            conn.peer,
            ev.status()
        );
        conn.close(-errno::ECONNRESET);
        return;
    }
    if !conn.active {
        conn.close(-errno::ECONNRESET);
        return;
    }
    let rej = Rej::decode(ev.reject_data(id)).ok();
    let (sent, stamp) = {
        let g = conn.inner.lock();
        (g.cp, g.peer_stamp)
    };
    let what = after_reject(ev.status(), rej.as_ref(), &sent, stamp);
    crate::cneterr!(
        "{}: {} rejected the connection (CM status {}, {:?}): {:?}\n",
        conn.ni.nid,
        conn.peer,
        ev.status(),
        rej.map(|r| r.why),
        what
    );
    // -EALREADY: the txs keep waiting, for the peer's connection or our
    // next one. The next one is decided (or paced) first and this one
    // closed after, as Lustre's kiblnd_check_reconnect comes before
    // kiblnd_connreq_done: in between, the peer would look idle, and a
    // tx launched then would connect at once, past the pacing.
    match what {
        AfterReject::LostRace => {
            crate::ni::reconnect(conn.ni.as_arc_borrow(), conn.peer, None);
            conn.close(-errno::EALREADY);
        }
        AfterReject::Reconnect {
            queue_depth,
            max_frags,
            dst_stamp,
        } => {
            let ask = Some((queue_depth, max_frags, dst_stamp));
            crate::ni::reconnect(conn.ni.as_arc_borrow(), conn.peer, ask);
            conn.close(-errno::EALREADY);
        }
        AfterReject::GiveUp(e) => conn.close(e),
    }
}

/// A connection request (`kiblnd_passive_connect`): checked in Lustre's
/// order; refused with a `kib_rej` saying why, or accepted with a CONNACK.
fn passive_connect(ni: &ArcBorrow<'_, IbNi>, id: &CmIdRef<'_>, ev: &CmEvent<'_>) -> c_int {
    let data = ev.private_data();
    let req = match wire::Msg::decode(data) {
        Ok(m) => m,
        Err(e) => {
            crate::cneterr!("{}: bad connection request: {}\n", ni.nid, e);
            let version = wire::MsgHead::parse(data).map_or(wire::VERSION, |h| h.version);
            return refuse(ni, id, version, RejectReason::Fatal);
        }
    };
    let MsgBody::ConnReq(mut cp) = req.body else {
        crate::cneterr!(
            "{}: {} instead of a connection request\n",
            ni.nid,
            req.msg_type().name()
        );
        return refuse(ni, id, req.version, RejectReason::Fatal);
    };
    if req.dst_nid != ni.nid {
        crate::cneterr!(
            "{}: connection request from {} for {}\n",
            ni.nid,
            req.src_nid,
            req.dst_nid
        );
        return refuse(ni, id, req.version, RejectReason::Fatal);
    }
    if req.version != wire::VERSION {
        return refuse(ni, id, req.version, RejectReason::ConnUncompat);
    }
    if req.dst_stamp != 0 && req.dst_stamp != ni.incarnation {
        return refuse(ni, id, req.version, RejectReason::ConnStale);
    }
    // Every registration of ours is a fast registration, as with
    // Lustre's pool set (`ibn_fmr_ps`): a peer asking fewer fragments is
    // accepted, and its `max_frags` bounds what we offer and write.
    if let Err(e) = cp.check_connreq(ni.tun.peer_credits, true) {
        crate::cneterr!(
            "{}: connection request from {}: {}\n",
            ni.nid,
            req.src_nid,
            e
        );
        return refuse(ni, id, req.version, e.reject_reason(req.version));
    }
    if params::get(IbParam::RequirePrivilegedPort) != 0 {
        match id.peer() {
            Ok((_, port)) if port < 1024 => {}
            _ => {
                crate::cerror!(
                    "{}: {} connects from an unprivileged port\n",
                    ni.nid,
                    req.src_nid
                );
                return refuse(ni, id, req.version, RejectReason::Fatal);
            }
        }
    }
    // A restarted peer's old connections go, and a race goes to the
    // higher `nidhash` (`kiblnd_passive_connect`).
    if let Err(why) = ni.check_request(&req.src_nid, req.src_stamp) {
        return refuse(ni, id, req.version, why);
    }
    let conn = match Conn::new((*ni).into(), req.src_nid, false) {
        Ok(c) => c,
        Err(_) => return refuse(ni, id, req.version, RejectReason::NoResources),
    };
    if conn.ni.add_conn(&conn).is_err() {
        return refuse(ni, id, req.version, RejectReason::Early);
    }
    conn.inner.lock().peer_stamp = req.src_stamp;
    // The connection owns the id before a QP is made on it: from here its
    // teardown destroys both (the QP first), and the id holds a reference
    // to it, so the NI and its PD outlive the QP (`Conn::setup_qp_held`).
    // The CM no longer destroys the id whatever we return.
    let Some(owned) = id.adopt(conn.clone()) else {
        // Not a request's new id: cannot be.
        conn.close(-errno::EPROTO);
        return refuse(ni, id, req.version, RejectReason::Fatal);
    };
    let q = conn.qp_lock.lock();
    let setup = conn.setup_qp_held(&q, id, &mut cp);
    conn.inner.lock().cmid = Some(owned);
    if let Err(e) = setup {
        drop(q);
        crate::cerror!(
            "{}: can't set up a QP for {}: {:?}\n",
            ni.nid,
            req.src_nid,
            e
        );
        refuse(ni, id, req.version, RejectReason::NoResources);
        conn.close(e.to_errno());
        return 0;
    }
    let ack = wire::Msg {
        version: req.version,
        credits: 0,
        cksum: ni.cksum(),
        src_nid: ni.nid,
        src_stamp: ni.incarnation,
        dst_nid: req.src_nid,
        dst_stamp: req.src_stamp,
        body: MsgBody::ConnAck(cp),
    };
    let mut buf = [0u8; wire::CONNREQ_LEN];
    let rnr = params::get(IbParam::RnrRetryCount) as u8;
    // Accepted with `qp_lock` still held: a teardown now waits, so the
    // REP carries the number of a QP that exists.
    let accepted = match ack.encode(&mut buf) {
        Some(n) => id.accept(&buf[..n], rnr),
        None => Err(crate::kapi::errno::EPROTO()),
    };
    drop(q);
    if let Err(e) = accepted {
        crate::cneterr!("{}: can't accept {}: {:?}\n", ni.nid, req.src_nid, e);
        let _ = id.reject(&rej(ni, req.version, RejectReason::Fatal));
        conn.close(e.to_errno());
    }
    0
}

fn rej(ni: &IbNi, version: u16, why: RejectReason) -> [u8; wire::REJ_LEN] {
    let mut out = [0u8; wire::REJ_LEN];
    let r = Rej {
        version,
        why,
        params: Some(RejParams {
            incarnation: ni.incarnation,
            cp: wire::ConnParams {
                queue_depth: ni.tun.peer_credits,
                max_frags: wire::MAX_RDMA_FRAGS as u16,
                max_msg_size: wire::MSG_SIZE as u32,
            },
        }),
    };
    let _ = r.encode(&mut out);
    out
}

/// Rejects the request and has the CM destroy its id.
fn refuse(ni: &IbNi, id: &CmIdRef<'_>, version: u16, why: RejectReason) -> c_int {
    crate::REJECTED.fetch_add(1, Ordering::Relaxed);
    let _ = id.reject(&rej(ni, version, why));
    CmIdRef::DESTROY
}
