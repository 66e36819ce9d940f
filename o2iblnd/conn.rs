// SPDX-License-Identifier: GPL-2.0

//! One RDMA connection to a peer NI (Lustre's `kib_conn`): its cm_id, QP
//! and CQ, its receive buffers, its send queues and credits, and what the
//! scheduler does with its completions.
//!
//! Ownership: the cm_id and the CQ each hold a reference to the
//! connection as their context, released once they are destroyed, which
//! [`teardown`] does. A received message lent to LNet is an [`RxCtx`]
//! holding a reference and the buffer. Txs are finalized only with no
//! lock held.

use crate::kapi::kthread;
use crate::kapi::rdma::{CmId, Cq, CqEvents, DmaBuf, Frags, Wc};
use crate::kapi::rdma_ni::{StackLink, Stackable};
use crate::lnd::Msg;
use crate::lnet_core::hdr::HDR_NID4_LEN;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::o2iblnd::{self as wire, MsgBody, MsgType};
use crate::lnet_core::o2iblnd_credits::{self as credits, Credits, Post, RxCredit};
use crate::lnet_core::o2iblnd_health::{self as health, errno, TxPlace};
use crate::lnet_core::o2iblnd_params::{ib_mtu_enum, IbParam};
use crate::ni::IbNi;
use crate::params;
use crate::tx::{Answered, PackHead, Tx};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, Mutex, SpinLock};
use kernel::{new_mutex, new_spinlock};

/// A hold of a connection's `qp_lock`.
pub(crate) type QpHeld<'a> =
    kernel::sync::lock::Guard<'a, (), kernel::sync::lock::mutex::MutexBackend>;

/// wr_id tags: receives carry their buffer index, sends their tx id.
const RX_TAG: u64 = 1 << 63;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum State {
    /// Resolving, connecting or accepting.
    Connecting,
    /// Messages flow.
    Established,
    /// Closed: waiting for posted work to flush, then torn down.
    Closing,
}

pub(crate) struct ConnInner {
    pub(crate) state: State,
    /// The id, once the connection owns it (taken by teardown).
    pub(crate) cmid: Option<CmId<Conn>>,
    cq: Option<Cq<Conn>>,
    /// Receive buffers by index: `None` while lent to LNet or handled.
    rx: KVec<Option<DmaBuf>>,
    rx_posted: u32,
    /// Messages posted and received.
    sent: u64,
    received: u64,
    /// Receives that completed before ESTABLISHED (index, bytes).
    early: KVec<(usize, u32)>,
    pub(crate) credits: Credits,
    /// Credited messages, then credit-free ones (NOOPs, answers).
    txq: KVec<Tx>,
    txq_nocred: KVec<Tx>,
    /// PUT_REQs and GET_REQs waiting for a reserved credit before they
    /// join `txq`.
    txq_rsrvd: KVec<Tx>,
    /// Posted sends.
    active: KVec<Tx>,
    next_tx_id: u64,
    /// Why the connection closed (0: a clean disconnect).
    pub(crate) comms_error: i32,
    /// The peer's incarnation (its CONNREQ's or CONNACK's srcstamp).
    pub(crate) peer_stamp: u64,
    /// Negotiated parameters.
    pub(crate) cp: wire::ConnParams,
    /// The path MTU its QP uses (bytes; 0 before the QP is made).
    pub(crate) path_mtu: u32,
    pub(crate) last_send_ms: u64,
    pub(crate) closed_ms: u64,
    /// connd must disconnect it (closing while connected or connecting).
    pub(crate) need_disconnect: bool,
}

#[pin_data]
pub(crate) struct Conn {
    pub(crate) ni: Arc<IbNi>,
    pub(crate) peer: Nid,
    pub(crate) active: bool,
    pub(crate) started_ms: u64,
    #[pin]
    pub(crate) inner: SpinLock<ConnInner>,
    /// Held while the QP is created and its id given to the connection,
    /// and while teardown takes and destroys them, so that teardown sees
    /// a QP with its id or neither, and nothing is built once it ran.
    #[pin]
    pub(crate) qp_lock: Mutex<()>,
    /// On the NI's scheduler list (or about to be).
    pub(crate) scheduled: AtomicBool,
    /// A QP event broke the QP: the errno its scheduler closes it with.
    qp_failed: AtomicI32,
    /// The QP's COMM_EST came: its scheduler tells the CM.
    comm_est: AtomicBool,
    /// When a message last arrived (monotonic s; 0: never), for the
    /// report of a peer gone down (`kiblnd_peer_alive`).
    last_alive: AtomicI64,
    /// Its place on the NI's scheduler stack.
    sched_link: StackLink<Conn>,
    /// Last, so dropped last: its NI counts it until then.
    _live: crate::ni::LiveConn,
}

impl Stackable for Conn {
    fn link(&self) -> &StackLink<Conn> {
        &self.sched_link
    }
}

impl Conn {
    pub(crate) fn new(ni: Arc<IbNi>, peer: Nid, active: bool) -> Result<Arc<Conn>> {
        let cp = wire::ConnParams {
            queue_depth: ni.tun.peer_credits,
            max_frags: wire::MAX_RDMA_FRAGS as u16,
            max_msg_size: wire::MSG_SIZE as u32,
        };
        let c = Credits::new(
            cp.queue_depth,
            ni.tun.concurrent_sends,
            ni.tun.peer_credits,
            ni.tun.peer_credits_hiw,
        );
        let live = crate::ni::LiveConn::new(&ni);
        Arc::pin_init(
            pin_init!(Conn {
                ni,
                peer,
                active,
                started_ms: kthread::now_ms(),
                inner <- new_spinlock!(ConnInner {
                    state: State::Connecting,
                    cmid: None,
                    cq: None,
                    rx: KVec::new(),
                    rx_posted: 0,
                    sent: 0,
                    received: 0,
                    early: KVec::new(),
                    credits: c,
                    txq: KVec::new(),
                    txq_nocred: KVec::new(),
                    txq_rsrvd: KVec::new(),
                    active: KVec::new(),
                    next_tx_id: 1,
                    comms_error: 0,
                    peer_stamp: 0,
                    cp,
                    path_mtu: 0,
                    last_send_ms: 0,
                    closed_ms: 0,
                    need_disconnect: false,
                }, "kiblnd_conn"),
                qp_lock <- new_mutex!((), "kiblnd_conn_qp"),
                scheduled: AtomicBool::new(false),
                qp_failed: AtomicI32::new(0),
                comm_est: AtomicBool::new(false),
                last_alive: AtomicI64::new(0),
                sched_link: StackLink::new(),
                _live: live,
            }),
            GFP_KERNEL,
        )
    }

    /// Creates the CQ and QP on `id` for `cp`, and posts every receive
    /// buffer (before the connection can carry anything). `cp.queue_depth`
    /// may be lowered to what the device allows.
    pub(crate) fn setup_qp(
        self: &Arc<Conn>,
        id: &crate::kapi::rdma::CmIdRef<'_>,
        cp: &mut wire::ConnParams,
    ) -> Result {
        let q = self.qp_lock.lock();
        self.setup_qp_held(&q, id, cp)
    }

    /// [`Self::setup_qp`] with `qp_lock` held, for a passive connect that
    /// must give the id to the connection in the same hold: teardown,
    /// which takes both under that lock, then finds the QP with its id.
    pub(crate) fn setup_qp_held(
        self: &Arc<Conn>,
        _held: &QpHeld<'_>,
        id: &crate::kapi::rdma::CmIdRef<'_>,
        cp: &mut wire::ConnParams,
    ) -> Result {
        if self.inner.lock().state == State::Closing {
            return Err(crate::kapi::errno::ECONNABORTED());
        }
        // `ib_mtu` (`kiblnd_setup_mtu_locked`): the active side's path
        // record goes into its connection request, and both QPs take their
        // MTU from that. Lustre also rewrites a passive id's record, where
        // it changes nothing but what is reported; ours reports the MTU
        // the QP uses.
        let mtu = if self.active {
            ib_mtu_enum(params::get(IbParam::IbMtu))
        } else {
            None
        };
        let path_mtu = id.path_mtu(mtu);
        let dev = self.ni.pd.device();
        let max_wr = dev.max_qp_wr().max(2);
        // Sends: each posted tx may chain a registration, an RDMA write
        // per fragment of the peer's sink (at most `max_frags`) and the
        // message; at most the queue depth are posted (concurrent sends
        // are capped by it). Where the device's send queue is too short
        // for that, the queue depth is lowered, as Lustre's
        // `kiblnd_send_wrs` does, so that a post never overflows it.
        let per_tx = i32::from(cp.max_frags) + 2;
        let depth = i32::from(cp.queue_depth)
            .min((max_wr - 2) / 2)
            .min((max_wr - 2) / per_tx)
            .max(1);
        cp.queue_depth = depth as u16;
        let nrx = credits::rx_msgs(cp.queue_depth) as i32;
        let mut send_wr = (per_tx * depth + 2).min(max_wr);
        // `teardown` destroys the QP, then the CQ, which releases its
        // reference.
        let cq = Cq::new(dev, self.clone(), nrx + send_wr)?;
        // `id` is this connection's own (made by `ni::connect`, or adopted
        // by `cm::passive_connect` before this), and holds the connection
        // as its context until it is destroyed, its QP first (teardown's
        // `destroy_qp`, or `kapi_rdma_destroy_id`): the connection, and the
        // NI and PD it holds, outlive the QP. Nothing else touches the QP
        // meanwhile: posts wait for ESTABLISHED, which comes after this
        // handler call, and connd's `qp_error` and teardown take `qp_lock`,
        // which `_held` proves we hold.
        // SAFETY: the PD outlives the QP and nothing else uses the QP until
        // the returned `NewQp` is dropped, both as said just above.
        let qp = unsafe { id.create_qp(&self.ni.pd, &cq, &mut send_wr, nrx)? };
        let mut bufs = KVec::new();
        let mut posted = 0;
        let r = (|| -> Result {
            bufs.reserve(nrx as usize, GFP_KERNEL)?;
            for _ in 0..nrx {
                bufs.push(
                    Some(DmaBuf::new(&self.ni.pd, wire::MSG_SIZE, false)?),
                    GFP_KERNEL,
                )?;
            }
            for (i, b) in bufs.iter().enumerate() {
                if let Some(b) = b {
                    // SAFETY: the buffers go to `rx`, dropped by teardown
                    // after the QP; on an error here, after `destroy`.
                    unsafe { qp.post_recv(RX_TAG | i as u64, b)? };
                    posted += 1;
                }
            }
            // The first completion must call us.
            cq.arm().map(|_| ())
        })();
        if let Err(e) = r {
            // The QP goes before the buffers posted on it and its CQ.
            qp.destroy();
            return Err(e);
        }
        let mut g = self.inner.lock();
        g.path_mtu = path_mtu;
        g.cq = Some(cq);
        g.rx = bufs;
        g.rx_posted = posted;
        g.cp = *cp;
        g.credits = Credits::new(
            cp.queue_depth,
            self.ni.tun.concurrent_sends.min(cp.queue_depth),
            self.ni.tun.peer_credits,
            self.ni.tun.peer_credits_hiw,
        );
        Ok(())
    }

    /// The connection is up: it takes `txs` (the peer's waiting ones) and
    /// starts sending. Early receives are handled now.
    pub(crate) fn established(self: &Arc<Conn>, txs: KVec<Tx>) {
        let early = {
            let mut g = self.inner.lock();
            if g.state != State::Connecting {
                // Closed before it was up: they never left.
                let err = g.comms_error;
                drop(g);
                for t in txs {
                    let hs = abort_status(TxPlace::Queued, t.header_sent(), err);
                    t.done(-errno::ECONNABORTED, hs);
                }
                return;
            }
            g.state = State::Established;
            g.last_send_ms = kthread::now_ms();
            let timeout = self.ni.lnd_timeout_ms();
            let mut txs = txs;
            while let Some(t) = crate::kapi::vec::pop(&mut txs) {
                if let Err(t) = queue_locked(&mut g, t, timeout) {
                    // Put back: ended below, with no lock held.
                    let _ = crate::kapi::vec::push_or_back(&mut txs, t, GFP_ATOMIC);
                    break;
                }
            }
            (core::mem::take(&mut g.early), txs)
        };
        let (early, unqueued) = early;
        for t in unqueued {
            t.done(-errno::ENOMEM, Status::LocalError);
        }
        for (idx, len) in early {
            self.handle_rx(idx, len);
        }
        self.check_sends();
    }

    /// Queues a tx for sending.
    pub(crate) fn queue(self: &Arc<Conn>, tx: Tx) {
        let mut g = self.inner.lock();
        if g.state == State::Closing {
            // Picked as it closed: it never left, so LNet may send it
            // again elsewhere, as it does the txs queued when it closed.
            let hs = abort_status(TxPlace::Queued, tx.header_sent(), g.comms_error);
            drop(g);
            tx.done(-errno::ECONNABORTED, hs);
            return;
        }
        let r = queue_locked(&mut g, tx, self.ni.lnd_timeout_ms());
        drop(g);
        match r {
            Ok(()) => self.check_sends(),
            Err(tx) => tx.done(-errno::ENOMEM, Status::LocalError),
        }
    }

    /// Posts what credits and `concurrent_sends` allow, adding a NOOP when
    /// owed credits or the keepalive call for one
    /// (`kiblnd_check_sends_locked`).
    pub(crate) fn check_sends(self: &Arc<Conn>) {
        let mut failed = KVec::new();
        let mut broke = 0;
        let noop_needed = {
            let mut g = self.inner.lock();
            self.post_locked(&mut g, &mut failed, &mut broke);
            g.state == State::Established && self.need_noop(&g)
        };
        if noop_needed {
            if let Ok(t) = Tx::noop(&self.ni, self.peer) {
                let mut g = self.inner.lock();
                // Queued as any tx, with a deadline from now: connd's scan
                // would take one from its creation for a timeout. Not
                // queued (dropped, which loses no message) if another
                // credit-free message came meanwhile, or on no memory.
                if g.state == State::Established && g.txq_nocred.is_empty() {
                    let _ = queue_locked(&mut g, t, self.ni.lnd_timeout_ms());
                }
                self.post_locked(&mut g, &mut failed, &mut broke);
            }
        }
        let err = failed
            .iter()
            .find_map(|(_, e)| (*e != 0).then_some(*e))
            .or((broke != 0).then_some(broke));
        for (t, e) in failed {
            // A NOOP dropped as redundant, or a failed post (closed below).
            t.done_post_failed(e);
        }
        if let Some(e) = err {
            self.close(e);
        }
    }

    fn keepalive_due(&self, g: &ConnInner) -> bool {
        let ka = self.ni.keepalive_ms();
        ka > 0 && kthread::now_ms() >= g.last_send_ms + ka
    }

    fn need_noop(&self, g: &ConnInner) -> bool {
        let due = self.keepalive_due(g);
        g.credits
            .need_noop(due, !g.txq_nocred.is_empty(), !g.txq.is_empty())
    }

    /// Posts what may go. A tx whose post failed goes to `failed`, or,
    /// if part of its chain may be on the send queue, stays among the
    /// posted with the error in `broke`: either way the caller closes.
    fn post_locked(&self, g: &mut ConnInner, failed: &mut KVec<(Tx, i32)>, broke: &mut i32) {
        if g.state != State::Established {
            return;
        }
        // Requests whose answer has a reserved buffer may queue for credits.
        while !g.txq_rsrvd.is_empty() && g.credits.reserved > 0 {
            if g.txq.reserve(1, GFP_ATOMIC).is_err() {
                break;
            }
            let Some(tx) = crate::kapi::vec::remove(&mut g.txq_rsrvd, 0) else {
                break;
            };
            g.credits.take_reserved();
            // Room was reserved: this cannot fail.
            let _ = g.txq.push(tx, GFP_ATOMIC);
        }
        loop {
            let nocred = !g.txq_nocred.is_empty();
            let Some(t) = (if nocred {
                g.txq_nocred.first()
            } else {
                g.txq.first()
            })
            .map(|t| t.msg_type()) else {
                return;
            };
            // A NOOP is only at the head of `txq_nocred`.
            let need = t == MsgType::Noop
                && g.credits.queued_noop_needed(
                    self.keepalive_due(g),
                    g.txq_nocred.len(),
                    !g.txq.is_empty(),
                );
            let decision = g.credits.post(t, need);
            let q = if nocred {
                &mut g.txq_nocred
            } else {
                &mut g.txq
            };
            match decision {
                Post::Wait => return,
                Post::Drop => {
                    // A NOOP: it carries no message, so a failed push
                    // loses nothing.
                    if let Some(tx) = crate::kapi::vec::remove(q, 0) {
                        let _ = failed.push((tx, 0), GFP_ATOMIC);
                    }
                }
                Post::Now { credits } => {
                    // Room first, so that no tx is dropped for lack of it.
                    if failed.reserve(1, GFP_ATOMIC).is_err() {
                        g.credits.unpost(t, credits);
                        return;
                    }
                    let q = if nocred {
                        &mut g.txq_nocred
                    } else {
                        &mut g.txq
                    };
                    let Some(mut tx) = crate::kapi::vec::remove(q, 0) else {
                        g.credits.unpost(t, credits);
                        return;
                    };
                    if g.active.reserve(1, GFP_ATOMIC).is_err() {
                        g.credits.unpost(t, credits);
                        let _ = failed.push((tx, -errno::ENOMEM), GFP_ATOMIC);
                        return;
                    }
                    tx.id = g.next_tx_id;
                    g.next_tx_id += 1;
                    let head = PackHead {
                        credits,
                        src_nid: self.ni.nid,
                        src_stamp: self.ni.incarnation,
                        dst_stamp: g.peer_stamp,
                        cksum: self.ni.cksum(),
                    };
                    let rc = tx.pack(&head).and_then(|len| match g.cmid.as_mut() {
                        // Posted or failed part way, the tx goes to
                        // `active` (room reserved above), which it leaves only
                        // at its completion or flush, or in teardown once the
                        // QP is destroyed; it ends at once only when its
                        // single SEND failed (no work request posted).
                        // SAFETY: `tx` stays in `active` (room reserved)
                        // until its completion, flush or teardown.
                        Some(id) => unsafe { tx.post(id, len) },
                        None => Err(crate::kapi::errno::ENOTCONN()),
                    });
                    match rc {
                        Ok(()) => {
                            g.last_send_ms = kthread::now_ms();
                            g.sent += 1;
                            // Within the capacity reserved above.
                            let _ = g.active.push(tx, GFP_ATOMIC);
                        }
                        Err(e) if tx.posts_chain() => {
                            crate::cerror!("{}: can't post a send: {:?}\n", self.peer, e);
                            // The device may hold the first of its work
                            // requests, naming its MR (a registration keeps
                            // the `ib_mr` itself): it ends as a posted tx
                            // does, at its flushed completion or once
                            // teardown destroyed the QP, never before.
                            // Lustre ends it at once: its MRs are pooled,
                            // never freed under the device.
                            tx.post_failed = e.to_errno();
                            *broke = e.to_errno();
                            // Within the capacity reserved above.
                            let _ = g.active.push(tx, GFP_ATOMIC);
                            return;
                        }
                        Err(e) => {
                            crate::cerror!("{}: can't post a send: {:?}\n", self.peer, e);
                            g.credits.unpost(t, credits);
                            let _ = failed.push((tx, e.to_errno()), GFP_ATOMIC);
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Closes the connection with `err` (`kiblnd_close_conn`): queued txs
    /// end now, posted ones when their flushed completions come, those
    /// waiting for the peer when connd has put the QP in error
    /// ([`disconnect`]); connd then tears it down.
    pub(crate) fn close(self: &Arc<Conn>, err: i32) {
        let queued = {
            let mut g = self.inner.lock();
            if g.state == State::Closing {
                return;
            }
            if err != 0 || g.state == State::Established {
                let class = if err == 0 {
                    crate::lnet_core::debug::D_NET
                } else {
                    crate::lnet_core::debug::D_NETERROR
                };
                crate::cdebug_limit!(
                    class,
                    "closing connection to {} ({}): {} ({} sent, {} received)\n",
                    self.peer,
                    self.ni.nid,
                    err,
                    g.sent,
                    g.received
                );
            }
            g.state = State::Closing;
            g.comms_error = err;
            g.closed_ms = kthread::now_ms();
            g.need_disconnect = true;
            // Txs waiting for the peer stay: the peer may still write into
            // the sinks they registered (a GET_REQ's, a PUT_ACK's) until
            // the QP is in error, which connd's `disconnect` does and then
            // ends them (`kiblnd_finalise_conn` before
            // `kiblnd_abort_txs`).
            (
                core::mem::take(&mut g.txq_rsrvd),
                core::mem::take(&mut g.txq),
                core::mem::take(&mut g.txq_nocred),
            )
        };
        self.ni.conn_closed(self);
        let (rsrvd, queued, nocred) = queued;
        for t in Iterator::chain(Iterator::chain(rsrvd.into_iter(), queued), nocred) {
            let hs = abort_status(TxPlace::Queued, t.header_sent(), err);
            t.done(-errno::ECONNABORTED, hs);
        }
    }

    /// Polls the CQ until it is empty and re-armed (a scheduler thread
    /// that took the connection off the NI's list). `scheduled` stays set
    /// while it polls, so one thread at a time handles a connection's
    /// completions, in order.
    pub(crate) fn poll(self: &Arc<Conn>) {
        let mut wc = [Wc::default(); 8];
        loop {
            self.qp_events();
            let n = {
                let g = self.inner.lock();
                let Some(cq) = g.cq.as_ref() else {
                    self.scheduled.store(false, Ordering::SeqCst);
                    return;
                };
                match cq.poll(&mut wc) {
                    Ok(0) => {
                        // Let the CQ and QP handlers queue us again from
                        // here on; a completion that slipped in before the
                        // re-arm, or a QP event that found us still
                        // scheduled, is ours only if no one queued us
                        // meanwhile. SeqCst against `qp_event`'s flag
                        // store and swap: either it sees `scheduled`
                        // clear, or we see its flag.
                        self.scheduled.store(false, Ordering::SeqCst);
                        let pending = self.qp_event_pending();
                        match cq.arm() {
                            Ok(more)
                                if (more || pending)
                                    && !self.scheduled.swap(true, Ordering::SeqCst) =>
                            {
                                continue
                            }
                            _ => return,
                        }
                    }
                    Ok(n) => n,
                    Err(_) => {
                        self.scheduled.store(false, Ordering::Release);
                        return;
                    }
                }
            };
            for w in &wc[..n] {
                self.complete(w);
            }
        }
    }

    fn qp_event_pending(&self) -> bool {
        self.comm_est.load(Ordering::SeqCst) || self.qp_failed.load(Ordering::SeqCst) != 0
    }

    /// Acts on what `qp_event` left for process context.
    fn qp_events(self: &Arc<Conn>) {
        if self.comm_est.swap(false, Ordering::SeqCst) {
            // A message came before ESTABLISHED. Without an id yet, the CM
            // learns it from the early receive instead (`complete`).
            let g = self.inner.lock();
            if g.state == State::Connecting {
                if let Some(Err(e)) = g.cmid.as_ref().map(|id| id.notify_established()) {
                    crate::cwarn!(
                        "{}: can't tell the CM that {} is connected: {:?}\n",
                        self.ni.nid,
                        self.peer,
                        e
                    );
                }
            }
        }
        let err = self.qp_failed.swap(0, Ordering::SeqCst);
        if err != 0 {
            // Its posted work flushes into the CQ, polled next.
            self.close(err);
        }
    }

    fn complete(self: &Arc<Conn>, w: &Wc) {
        if w.wr_id & RX_TAG != 0 {
            let idx = (w.wr_id & !RX_TAG) as usize;
            let early = {
                let mut g = self.inner.lock();
                g.rx_posted = g.rx_posted.saturating_sub(1);
                if !w.ok() {
                    if w.status != Wc::FLUSH_ERR {
                        crate::cneterr!("{}: receive failed: {}\n", self.peer, w.status);
                    } else if g.state == State::Established {
                        // Nothing of ours failed first: the CM, or an
                        // error the QP met as a responder, which gives
                        // no completion.
                        crate::cneterr!(
                            "{}: connection to {} flushed while up\n",
                            self.ni.nid,
                            self.peer
                        );
                    }
                    drop(g);
                    self.close(-errno::EIO);
                    self.ni.wake_connd();
                    return;
                }
                if g.state == State::Closing {
                    // What it held ended with it (`kiblnd_rx_complete`
                    // ignores it too): an answer to a tx it already
                    // failed is no protocol error.
                    drop(g);
                    self.ni.wake_connd();
                    return;
                }
                g.received += 1;
                if g.state == State::Connecting {
                    let _ = g.early.push((idx, w.byte_len), GFP_ATOMIC);
                    // A message before the RTU: the peer is established.
                    // Tell the CM as an HCA's COMM_EST would (see
                    // `qp_event`): Soft-RoCE raises none, and a lost RTU
                    // would hold these receives, and the credits they
                    // return, until the peer's txs time out.
                    if !self.active && g.early.len() == 1 {
                        if let Some(Err(e)) = g.cmid.as_ref().map(|id| id.notify_established()) {
                            crate::cwarn!(
                                "{}: can't tell the CM that {} is connected: {:?}\n",
                                self.ni.nid,
                                self.peer,
                                e
                            );
                        }
                    }
                    true
                } else {
                    false
                }
            };
            if !early {
                self.handle_rx(idx, w.byte_len);
            }
            return;
        }
        let (tx, closing) = {
            let mut g = self.inner.lock();
            let closing = g.state == State::Closing;
            let pos = g.active.iter().position(|t| t.id == w.wr_id && !t.waiting);
            let Some(i) = pos else {
                // A PUT_REQ or PUT_ACK the peer already answered, or a
                // flushed work request of a tx that ended; but a work
                // request that failed still broke the QP.
                drop(g);
                if !w.ok() && w.status != Wc::FLUSH_ERR {
                    crate::cneterr!(
                        "{}: send to {} failed after its tx: status {} opcode {} vendor 0x{:x}\n",
                        self.ni.nid,
                        self.peer,
                        w.status,
                        w.opcode,
                        w.vendor_err
                    );
                    self.close(-errno::EIO);
                } else if !closing {
                    self.check_sends();
                }
                return;
            };
            let t = g.active[i].msg_type();
            g.credits.send_done(t);
            let posted = &g.active[i];
            if w.ok()
                && posted.post_failed == 0
                && posted.answered.is_none()
                && posted.waits_for_peer()
            {
                // Sent; it ends when the peer answers (or times out).
                g.active[i].waiting = true;
                drop(g);
                self.check_sends();
                return;
            }
            (crate::kapi::vec::remove(&mut g.active, i), closing)
        };
        if let Some(mut tx) = tx {
            if tx.post_failed != 0 {
                // A part of a failed post: the connection is closing.
                let e = tx.post_failed;
                tx.done_post_failed(e);
            } else if w.ok() {
                // The peer may have answered before this completion came.
                match tx.answered.take() {
                    Some(a) => self.finish(tx, a),
                    None => tx.done(0, Status::Ok),
                }
            } else {
                if w.status != Wc::FLUSH_ERR {
                    crate::cneterr!(
                        "{}: send failed: status {} opcode {} vendor 0x{:x}\n",
                        self.peer,
                        w.status,
                        w.opcode,
                        w.vendor_err
                    );
                }
                tx.done(-errno::EIO, health::send_failed());
                self.close(-errno::EIO);
            }
        }
        if closing {
            self.ni.wake_connd();
        } else {
            self.check_sends();
        }
    }

    /// When a message last arrived (monotonic s; 0: never).
    pub(crate) fn last_alive(&self) -> i64 {
        self.last_alive.load(Ordering::Relaxed)
    }

    /// A message arrived in receive buffer `idx`.
    fn handle_rx(self: &Arc<Conn>, idx: usize, len: u32) {
        let Some(buf) = self.inner.lock().rx.get_mut(idx).and_then(Option::take) else {
            return;
        };
        self.last_alive
            .store(kthread::now_secs(), Ordering::Relaxed);
        buf.sync_for_cpu();
        let bytes = buf.as_slice().get(..len as usize).unwrap_or(&[]);
        let m = match wire::Msg::decode(bytes) {
            Ok(m) => m,
            Err(e) => {
                crate::cneterr!("{}: bad message from {}: {}\n", self.ni.nid, self.peer, e);
                crate::PROTOCOL_ERRORS.fetch_add(1, Ordering::Relaxed);
                self.close(-errno::EPROTO);
                return;
            }
        };
        let peer_stamp = self.inner.lock().peer_stamp;
        if m.src_nid != self.peer
            || m.dst_nid != self.ni.nid
            || m.src_stamp != peer_stamp
            || m.dst_stamp != self.ni.incarnation
        {
            crate::cneterr!(
                "{}: stale {} from {} (for {})\n",
                self.ni.nid,
                m.msg_type().name(),
                m.src_nid,
                m.dst_nid
            );
            self.close(-errno::ESTALE);
            return;
        }
        let t = m.msg_type();
        if m.credits > 0 {
            let r = self.inner.lock().credits.returned(m.credits);
            if let Err(o) = r {
                crate::cneterr!(
                    "{}: {} returned {} credits with {} of {}\n",
                    self.ni.nid,
                    self.peer,
                    o.returned,
                    o.credits,
                    o.queue_depth
                );
                crate::PROTOCOL_ERRORS.fetch_add(1, Ordering::Relaxed);
                self.close(-errno::EPROTO);
                return;
            }
        }
        match m.body {
            MsgBody::Noop => self.repost(idx, buf, credits::rx_credit(t)),
            MsgBody::Immediate { payload, .. } => {
                let len = payload.len();
                let off = wire::MSG_HDR_LEN + HDR_NID4_LEN;
                self.lend(idx, buf, RxKind::Immediate { off, len });
            }
            MsgBody::PutReq { cookie, .. } => self.lend(idx, buf, RxKind::PutReq { cookie }),
            MsgBody::PutAck {
                src_cookie,
                dst_cookie,
                rd,
            } => {
                let ok = self.put_acked(src_cookie, dst_cookie, &rd);
                self.repost(idx, buf, credits::rx_credit(t));
                if !ok {
                    self.protocol_error();
                }
            }
            MsgBody::PutNak(c) | MsgBody::PutDone(c) => {
                let waited = if t == MsgType::PutNak {
                    MsgType::PutReq
                } else {
                    MsgType::PutAck
                };
                let ok = self.peer_completed(waited, &c);
                self.repost(idx, buf, credits::rx_credit(t));
                if !ok {
                    self.protocol_error();
                }
            }
            MsgBody::GetReq { cookie, rd, .. } => {
                // The sink outlives this buffer, which goes back to the QP
                // as soon as LNet has matched the GET.
                let mut frags = KVec::new();
                let copied = rd.frags().try_for_each(|f| frags.push(f, GFP_KERNEL));
                if copied.is_err() {
                    self.repost(idx, buf, credits::rx_credit(t));
                    self.answer(MsgType::GetDone, cookie, -errno::ENOMEM);
                } else {
                    let kind = RxKind::GetReq {
                        cookie,
                        key: rd.key,
                        frags,
                    };
                    self.lend(idx, buf, kind);
                }
            }
            MsgBody::GetDone(c) => {
                let ok = self.get_done(&c);
                self.repost(idx, buf, credits::rx_credit(t));
                if !ok {
                    self.protocol_error();
                }
            }
            MsgBody::ConnReq(_) | MsgBody::ConnAck(_) => {
                crate::cneterr!(
                    "{}: unexpected {} from {}\n",
                    self.ni.nid,
                    t.name(),
                    self.peer
                );
                crate::PROTOCOL_ERRORS.fetch_add(1, Ordering::Relaxed);
                self.close(-errno::EPROTO);
            }
        }
        self.check_sends();
    }

    /// The peer's message broke the protocol: counted, and the
    /// connection closed.
    fn protocol_error(self: &Arc<Conn>) {
        crate::PROTOCOL_ERRORS.fetch_add(1, Ordering::Relaxed);
        self.close(-errno::EPROTO);
    }

    /// Lends a received LNet header and its buffer to LNet.
    fn lend(self: &Arc<Conn>, idx: usize, buf: DmaBuf, kind: RxKind) {
        let mut hdr = [0u8; HDR_NID4_LEN];
        hdr.copy_from_slice(&buf.as_slice()[wire::MSG_HDR_LEN..wire::MSG_HDR_LEN + HDR_NID4_LEN]);
        let rx = RxCtx {
            conn: self.clone(),
            idx,
            buf,
            kind,
        };
        let Ok(rx) = KBox::new(rx, GFP_KERNEL) else {
            self.close(-errno::ENOMEM);
            return;
        };
        let rdma_req = matches!(rx.kind, RxKind::GetReq { .. });
        let parsed = self
            .ni
            .ni
            .parse::<crate::lnd::O2iblnd>(&hdr, &self.peer, rx, rdma_req);
        if let Err((rc, rx)) = parsed {
            crate::cneterr!(
                "{}: LNet refused a header from {}: {}\n",
                self.ni.nid,
                self.peer,
                rc
            );
            drop(rx);
            self.close(-errno::EPROTO);
        }
    }

    /// Hands the tx the peer's message answers `a`: the one with `cookie`
    /// whose body is of type `t` and that no answer reached yet. If its
    /// send completed, it is taken out of the active list, to be finished
    /// with no lock held. Otherwise it keeps `a` and stays posted until its
    /// send completion finishes it (Lustre's `tx_sending`): its buffer,
    /// its registration and its send slot belong to its work requests
    /// until the device is done with them, whatever the peer has seen.
    fn take_answered(&self, t: MsgType, cookie: u64, a: Answered) -> Taken {
        let mut g = self.inner.lock();
        let Some(i) = g
            .active
            .iter()
            .position(|x| x.id == cookie && x.msg_type() == t && x.answered.is_none())
        else {
            return Taken::Nothing;
        };
        if !g.active[i].waiting {
            g.active[i].answered = Some(a);
            return Taken::Sending;
        }
        match crate::kapi::vec::remove(&mut g.active, i) {
            Some(tx) => Taken::Idle(tx, a),
            None => Taken::Nothing,
        }
    }

    /// Acts on the peer's answer `a` to `tx`, which is ours alone now: it
    /// ends, or (a PUT_ACK) goes on with its RDMA and PUT_DONE. With no
    /// lock held.
    fn finish(self: &Arc<Conn>, mut tx: Tx, a: Answered) {
        match a {
            Answered::End(status, hs) => tx.done(status, hs),
            Answered::ReplyLen(len) => {
                if tx.set_reply_len(&self.ni, len) {
                    tx.done(0, Status::Ok);
                } else {
                    crate::cneterr!(
                        "{}: GET_DONE from {} claims {} bytes, more than asked\n",
                        self.ni.nid,
                        self.peer,
                        len
                    );
                    tx.done(-errno::EPROTO, Status::RemoteError);
                    self.protocol_error();
                }
            }
            Answered::PutAck {
                dst_cookie,
                key,
                frags,
            } => {
                let rd = wire::RdmaDesc::new(key, &frags);
                let max_frags = self.inner.lock().cp.max_frags;
                match tx.start_rdma(&self.ni, dst_cookie, &rd, max_frags) {
                    Ok(()) => self.queue(tx),
                    Err(e) => {
                        // The sink learns it from a failed PUT_DONE. No
                        // health status: Lustre maps a PUT's source before
                        // its PUT_REQ and refuses one it cannot map with
                        // none (`kiblnd_send`), and sets none when its RDMA
                        // setup fails here (`kiblnd_init_rdma`). Lustre then
                        // ends that PUT with status 0 although no data
                        // moved; ours fails it (a decision: the ULP would
                        // otherwise wait for an ACK that never comes).
                        tx.done(e.to_errno(), Status::Ok);
                        self.answer(MsgType::PutDone, dst_cookie, e.to_errno());
                    }
                }
            }
        }
    }

    /// Hands a tx of ours the peer's answer: false if it answers nothing,
    /// said as `what` (the answer) `from` the peer `for` (what it would
    /// have answered).
    fn answered(
        self: &Arc<Conn>,
        t: MsgType,
        cookie: u64,
        a: Answered,
        (what, none): (&str, &str),
    ) -> bool {
        match self.take_answered(t, cookie, a) {
            Taken::Nothing => {
                crate::cneterr!(
                    "{}: {} from {} for {} (cookie {:#x})\n",
                    self.ni.nid,
                    what,
                    self.peer,
                    none,
                    cookie
                );
                false
            }
            Taken::Sending => true,
            Taken::Idle(tx, a) => {
                self.finish(tx, a);
                true
            }
        }
    }

    /// The sink's PUT_ACK: RDMA the payload into its buffer, then
    /// PUT_DONE (`kiblnd_handle_rx`). False if it answers nothing of ours.
    /// The sink's fragments are copied: the PUT_REQ's send completion may
    /// still be to come, after this receive buffer went back to the QP.
    fn put_acked(
        self: &Arc<Conn>,
        src_cookie: u64,
        dst_cookie: u64,
        rd: &wire::RdmaDesc<'_>,
    ) -> bool {
        let mut frags = KVec::new();
        if rd
            .frags()
            .try_for_each(|f| frags.push(f, GFP_KERNEL))
            .is_err()
        {
            self.close(-errno::ENOMEM);
            return true;
        }
        let a = Answered::PutAck {
            dst_cookie,
            key: rd.key,
            frags,
        };
        let what = ("PUT_ACK", "no PUT of ours");
        self.answered(MsgType::PutReq, src_cookie, a, what)
    }

    /// The peer ended a tx of ours: PUT_NAK for a PUT_REQ, PUT_DONE for
    /// a PUT_ACK. False if it answers nothing of ours.
    fn peer_completed(self: &Arc<Conn>, t: MsgType, c: &wire::Completion) -> bool {
        let a = if c.status < 0 {
            Answered::End(c.status, health::peer_failed())
        } else {
            Answered::End(0, Status::Ok)
        };
        let what = ("completion", "nothing of ours");
        self.answered(t, c.cookie, a, what)
    }

    /// The target's GET_DONE for a GET_REQ of ours: the REPLY's data is in
    /// place (its length the status), or the GET failed. False for a
    /// completion that answers nothing of ours; one that claims more bytes
    /// than the sink offered closes the connection when the tx is
    /// finished (`kiblnd_handle_completion`).
    fn get_done(self: &Arc<Conn>, c: &wire::Completion) -> bool {
        let a = match u32::try_from(c.status) {
            Ok(len) => Answered::ReplyLen(len),
            Err(_) => Answered::End(c.status, health::peer_failed()),
        };
        let what = ("GET_DONE", "no GET of ours");
        self.answered(MsgType::GetReq, c.cookie, a, what)
    }

    /// Sends a completion (PUT_NAK, PUT_DONE, GET_DONE) that ends nothing
    /// of ours.
    fn answer(self: &Arc<Conn>, t: MsgType, cookie: u64, status: i32) {
        match Tx::completion(&self.ni, self.peer, t, cookie, status) {
            Ok(tx) => self.queue(tx),
            Err(_) => self.close(-errno::ENOMEM),
        }
    }

    /// Gives a receive buffer back to the QP with the credit its message
    /// gives back.
    fn repost(self: &Arc<Conn>, idx: usize, buf: DmaBuf, c: RxCredit) {
        let mut g = self.inner.lock();
        if g.state == State::Closing {
            return;
        }
        let ConnInner {
            cmid,
            rx,
            credits,
            rx_posted,
            ..
        } = &mut *g;
        let Some(id) = cmid.as_mut() else {
            return;
        };
        // SAFETY: the buffer goes back to `rx`, which teardown drops only
        // after destroying the QP.
        let rc = unsafe { id.post_recv(RX_TAG | idx as u64, &buf) };
        if let Some(slot) = rx.get_mut(idx) {
            *slot = Some(buf);
        }
        match rc {
            Ok(()) => {
                *rx_posted += 1;
                credits.rx_done(c);
            }
            Err(e) => {
                drop(g);
                crate::cerror!("{}: can't post a receive: {:?}\n", self.peer, e);
                self.close(e.to_errno());
            }
        }
    }

    /// Whether connd may tear it down: closed, and its posted work flushed
    /// (or given up on after a while).
    pub(crate) fn drained(&self, now_ms: u64) -> bool {
        let g = self.inner.lock();
        g.state == State::Closing
            && !g.need_disconnect
            && ((g.rx_posted == 0 && g.active.is_empty()) || now_ms > g.closed_ms + 10_000)
    }

    /// The oldest deadline of its txs has passed (`kiblnd_conn_timed_out`).
    /// Logs where the txs of a connection that timed out stood: which
    /// queue, and the credits and sends that decide whether they move.
    pub(crate) fn log_timed_out(&self) {
        let g = self.inner.lock();
        let c = &g.credits;
        crate::cerror!(
            "{}: timed out tx for {} ({}, up {} ms, {} received): {} queued, {} without credit, {} for a reserved credit, {} posted or waiting for the peer; credits {} of {}, owed {}, sends posted {}, receives posted {}\n",
            self.ni.nid,
            self.peer,
            if self.active { "active" } else { "passive" },
            kthread::now_ms().saturating_sub(self.started_ms),
            g.received,
            g.txq.len(),
            g.txq_nocred.len(),
            g.txq_rsrvd.len(),
            g.active.len(),
            c.credits,
            c.queue_depth,
            c.outstanding,
            c.posted,
            g.rx_posted
        );
    }

    pub(crate) fn timed_out(&self, now_ms: u64) -> bool {
        let g = self.inner.lock();
        g.state == State::Established
            && Iterator::chain(
                Iterator::chain(
                    Iterator::chain(g.txq.iter(), g.txq_nocred.iter()),
                    g.txq_rsrvd.iter(),
                ),
                g.active.iter(),
            )
            .any(|t| t.deadline_ms != 0 && now_ms >= t.deadline_ms)
    }
}

/// [`health::aborted`], counting the txs it fails to their ULP.
fn abort_status(place: TxPlace, header_sent: bool, comms_error: i32) -> Status {
    let hs = health::aborted(place, header_sent, comms_error);
    if matches!(hs, Status::Ok | Status::LocalError) {
        crate::ABORTED_FINAL.fetch_add(1, Ordering::Relaxed);
    }
    hs
}

/// Queues `tx`, or gives it back when there is no memory for it (by
/// value: boxing it would allocate on the very path that has none).
#[allow(clippy::result_large_err)]
fn queue_locked(g: &mut ConnInner, mut tx: Tx, timeout_ms: u64) -> Result<(), Tx> {
    tx.deadline_ms = kthread::now_ms() + timeout_ms;
    let t = tx.msg_type();
    let q = if credits::needs_reserved(t) {
        &mut g.txq_rsrvd
    } else if credits::takes_credit(t) {
        &mut g.txq
    } else {
        &mut g.txq_nocred
    };
    crate::kapi::vec::push_or_back(q, tx, GFP_ATOMIC)
}

/// connd: disconnects a closed connection (may sleep), so that its posted
/// work flushes. With `hold` (the port is down) only the QP is put in
/// error, which sends nothing; the DREQ waits for a later pass.
pub(crate) fn disconnect(conn: &Arc<Conn>, hold: bool) {
    let id = {
        let mut g = conn.inner.lock();
        if !g.need_disconnect {
            return;
        }
        g.need_disconnect = hold;
        g.cmid.take()
    };
    if let Some(mut id) = id {
        if !hold {
            let _ = id.disconnect();
        }
        let in_error = {
            let _g = conn.qp_lock.lock();
            id.qp_error().is_ok()
        };
        let (waiting, err) = {
            let mut g = conn.inner.lock();
            g.cmid = Some(id);
            let mut waiting = KVec::new();
            // A QP in error takes no more RDMA from the peer: the sinks of
            // the txs waiting for it may go back to LNet. If the QP could
            // not be moved (or there is no room to take them out),
            // teardown ends them once it has destroyed the QP.
            let n = g.active.iter().filter(|t| t.waiting).count();
            if in_error && n > 0 && waiting.reserve(n, GFP_ATOMIC).is_ok() {
                let mut i = 0;
                while i < g.active.len() {
                    if g.active[i].waiting {
                        if let Some(t) = crate::kapi::vec::remove(&mut g.active, i) {
                            // Within the capacity reserved above.
                            let _ = waiting.push(t, GFP_ATOMIC);
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            (waiting, g.comms_error)
        };
        for t in waiting {
            let hs = abort_status(TxPlace::Waiting, true, err);
            t.done(-errno::ECONNABORTED, hs);
        }
    }
}

/// connd: frees what the connection holds on the device, in the order
/// the verbs want (QP, CQ, id), ends any tx whose completion never came,
/// and releases the cm_id's reference. Never from a CM handler.
pub(crate) fn teardown(conn: Arc<Conn>) {
    let (id, cq, rx, active, err) = {
        let _q = conn.qp_lock.lock();
        let (id, cq, rx, active, err) = {
            let mut g = conn.inner.lock();
            (
                g.cmid.take(),
                g.cq.take(),
                core::mem::take(&mut g.rx),
                core::mem::take(&mut g.active),
                g.comms_error,
            )
        };
        let id = id.map(|mut id| {
            id.destroy_qp();
            id
        });
        (id, cq, rx, active, err)
    };
    // Releases the CQ's reference to the connection (the QP is gone).
    drop(cq);
    // Waits for a handler running on the id (which may want `qp_lock`,
    // released above); none comes after. Releases the id's reference.
    drop(id);
    drop(rx);
    for t in active {
        if t.post_failed != 0 {
            let e = t.post_failed;
            t.done_post_failed(e);
            continue;
        }
        let place = if t.waiting {
            TxPlace::Waiting
        } else {
            TxPlace::Sending
        };
        let hs = abort_status(place, t.header_sent(), err);
        t.done(-errno::ECONNABORTED, hs);
    }
}

/// Where the tx a peer's answer names stood (`Conn::take_answered`).
/// Returned by value and at once consumed: boxing the tx would allocate
/// on the receive path.
#[allow(clippy::large_enum_variant)]
enum Taken {
    /// No tx of ours waits for that answer.
    Nothing,
    /// Its send completed: it is the caller's, with the answer.
    Idle(Tx, Answered),
    /// Its send completion is still to come, which will act on the
    /// answer.
    Sending,
}

/// What a lent receive carries.
enum RxKind {
    /// The payload, inline at `off`.
    Immediate { off: usize, len: usize },
    /// The payload waits at the source for our PUT_ACK.
    PutReq { cookie: u64 },
    /// The initiator's buffer for our REPLY's data, to be written by RDMA.
    GetReq {
        cookie: u64,
        key: u32,
        frags: KVec<wire::Frag>,
    },
}

/// A received message lent to LNet (`lnet_parse`'s private).
pub(crate) struct RxCtx {
    /// Before `conn`, so dropped first: a connection is counted by its
    /// NI until freed, and the buffer holds the NI's PD.
    buf: DmaBuf,
    conn: Arc<Conn>,
    idx: usize,
    kind: RxKind,
}

/// `lnd_recv`: an IMMEDIATE's payload is copied into LNet's buffer and
/// the message ends; a PUT_REQ's sink buffer is registered and offered to
/// the source by PUT_ACK (or refused by PUT_NAK); a GET_REQ's REPLY data
/// is written into the initiator's buffer, then GET_DONE (or GET_DONE
/// with -ENODATA when nothing matched). The receive buffer goes back to
/// the QP either way.
///
/// `kiov` are the bytes LNet wants; dropped before `msg` is finalized.
pub(crate) fn recv(rx: KBox<RxCtx>, msg: Msg, kiov: Frags, _rlen: u32) {
    let mlen = kiov.len();
    let RxCtx {
        conn,
        idx,
        buf,
        kind,
    } = KBox::into_inner(rx);
    match kind {
        RxKind::Immediate { off, len } => {
            let rc = copy_immediate(&conn, &buf, off, len, &msg, kiov);
            msg.finalize(
                rc,
                if rc == 0 {
                    Status::Ok
                } else {
                    Status::RemoteError
                },
            );
            conn.repost(idx, buf, RxCredit::Peer);
            if rc == -errno::EPROTO {
                conn.close(rc);
            }
        }
        RxKind::PutReq { cookie } => {
            if msg.is_none() || mlen == 0 {
                drop(kiov);
                // Dropped, or nothing to move (`kiblnd_recv`).
                conn.repost(idx, buf, RxCredit::Peer);
                msg.finalize(0, Status::Ok);
                conn.answer(MsgType::PutNak, cookie, 0);
            } else {
                // The PUT_ACK tx holds them until it finalizes `msg`.
                match Tx::put_ack(&conn.ni, msg, conn.peer, cookie, kiov) {
                    Ok(tx) => {
                        // The buffer waits for the PUT_DONE, which the peer
                        // sends without a credit and which returns this one.
                        conn.repost(idx, buf, RxCredit::No);
                        conn.queue(tx);
                    }
                    Err((msg, e)) => {
                        conn.repost(idx, buf, RxCredit::Peer);
                        crate::cerror!(
                            "{}: can't register {} bytes for a PUT from {}: {:?}\n",
                            conn.ni.nid,
                            mlen,
                            conn.peer,
                            e
                        );
                        msg.finalize(-errno::EIO, Status::LocalError);
                        conn.answer(MsgType::PutNak, cookie, e.to_errno());
                    }
                }
            }
        }
        RxKind::GetReq { cookie, key, frags } => {
            conn.repost(idx, buf, RxCredit::Peer);
            if msg.is_none() {
                drop(kiov);
                // No match (`kiblnd_recv`): the initiator's GET ends.
                conn.answer(MsgType::GetDone, cookie, -errno::ENODATA);
            } else {
                // The tx holds them until it finalizes `msg` (the REPLY).
                let rd = wire::RdmaDesc::new(key, &frags);
                let max_frags = conn.inner.lock().cp.max_frags;
                match Tx::get_reply(&conn.ni, msg, conn.peer, kiov, &rd, cookie, max_frags) {
                    Ok(tx) => conn.queue(tx),
                    Err((msg, e)) => {
                        crate::cerror!(
                            "{}: can't send {} bytes for a GET from {}: {:?}\n",
                            conn.ni.nid,
                            mlen,
                            conn.peer,
                            e
                        );
                        msg.finalize(-errno::EIO, Status::LocalError);
                        // Unlike Lustre, which lets the GET time out.
                        conn.answer(MsgType::GetDone, cookie, e.to_errno());
                    }
                }
            }
        }
    }
    conn.check_sends();
}

/// Copies an IMMEDIATE's payload into LNet's fragments: 0 or an errno.
fn copy_immediate(
    conn: &Conn,
    buf: &DmaBuf,
    off: usize,
    len: usize,
    msg: &Msg,
    kiov: Frags,
) -> i32 {
    let mlen = kiov.len();
    if msg.is_none() || mlen == 0 {
        return 0;
    }
    if mlen as usize > len {
        crate::cneterr!(
            "{}: payload of {} bytes from {} is {} long\n",
            conn.ni.nid,
            mlen,
            conn.peer,
            len
        );
        return -errno::EPROTO;
    }
    let copied = kiov.copy_from(buf, off, mlen as usize).unwrap_or(0);
    if copied == mlen {
        0
    } else {
        -errno::EIO
    }
}

/// The CQ's context, and its QP's, is its connection.
impl CqEvents for Conn {
    /// The CQ's completion handler: queues the connection on its NI's
    /// scheduler. Any context, IRQs included.
    fn completion(conn: ArcBorrow<'_, Conn>) {
        if !conn.scheduled.swap(true, Ordering::AcqRel) {
            conn.ni.schedule(Arc::from(conn));
        }
    }

    /// CQ events are only logged (`kiblnd_cq_event`).
    fn cq_event(_conn: ArcBorrow<'_, Conn>, t: i32) {
        crate::cerror!("CQ event {}\n", t);
    }

    /// QP events (`kiblnd_qp_event`): COMM_EST tells the CM a message
    /// arrived before ESTABLISHED. A QP gone to error (QP_FATAL, QP_REQ_ERR,
    /// QP_ACCESS_ERR), which Lustre only logs, closes the connection with
    /// -EIO here at once rather than at the next failed completion or
    /// timeout. The rest are logged.
    ///
    /// HCA drivers call this in hard IRQ (mlx4 from its EQ interrupt, mlx5
    /// from its EQ's notifier chain), where a lock that is taken elsewhere
    /// with interrupts on, as `inner` is, deadlocks when the interrupt
    /// lands on a CPU holding it. So it takes no lock: it sets an atomic
    /// flag and queues the connection on its scheduler (`IbNi::schedule`,
    /// a lock-free push and a wake-up, as the CQ handler does), whose
    /// thread acts on the flag in process context (`Conn::poll`).
    /// Soft-RoCE raises no COMM_EST and its other QP events from its work
    /// queue, so the lab cannot show the deadlock.
    fn qp_event(conn: ArcBorrow<'_, Conn>, t: i32) {
        use crate::kapi::rdma::{IB_EVENT_QP_ACCESS_ERR, IB_EVENT_QP_FATAL, IB_EVENT_QP_REQ_ERR};
        if t == crate::kapi::rdma::IB_EVENT_COMM_EST {
            conn.comm_est.store(true, Ordering::SeqCst);
            if !conn.scheduled.swap(true, Ordering::SeqCst) {
                conn.ni.schedule(Arc::from(conn));
            }
            return;
        }
        crate::cneterr!(
            "{}: QP event {} on connection to {}\n",
            conn.ni.nid,
            t,
            conn.peer
        );
        if matches!(
            t,
            IB_EVENT_QP_FATAL | IB_EVENT_QP_REQ_ERR | IB_EVENT_QP_ACCESS_ERR
        ) {
            conn.qp_failed.store(-errno::EIO, Ordering::SeqCst);
            if !conn.scheduled.swap(true, Ordering::SeqCst) {
                conn.ni.schedule(Arc::from(conn));
            }
        }
    }
}
