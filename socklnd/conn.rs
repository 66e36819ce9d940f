// SPDX-License-Identifier: GPL-2.0

//! A connection to a peer: a socket whose handshake is done, its type, a
//! queue of frames to send, a send thread and a receive thread.
//!
//! Connections come from a connector (active) or the acceptor (passive)
//! and are registered in the NI's table already up. When either thread
//! fails, the connection dies: every queued message is finalized with the
//! health status the failure maps to (o2iblnd-events.md §4.1), both
//! threads park, and the NI's reaper frees it.

use crate::handshake::Peer;
use crate::kapi::kthread::{self, Thread};
use crate::kapi::lnd::{RxMsg, TxMsg};
use crate::kapi::sock::Socket;
use crate::kapi::{errno, vec};
use crate::lnd::Msg;
use crate::lnet_core::hdr::HDR_NID4_LEN;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::socklnd::{
    self, ConnType, KsockMsg, MsgKind, ZcAcks, KEEPALIVE_PING, KSOCK_MSG_LEN,
};
use crate::lnet_core::socklnd_conns::{Frame, LNET_FRAME_LEN};
use crate::lnet_core::socklnd_path::{self, Stall, TcpTiming};
use crate::ni::SockNi;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, CondVar, Mutex, SpinLock};
use kernel::{c_str, new_condvar, new_mutex, new_spinlock};

/// Something to send on a connection.
pub(crate) enum Tx {
    /// An LNet message with its descriptor.
    Lnet(TxMsg),
    /// A NOOP carrying zero-copy ACK cookies (a keepalive carries
    /// `[0, KEEPALIVE_PING]`).
    Noop([u64; 2]),
}

impl Tx {
    /// What connection choice sees of it.
    pub(crate) fn frame(&self) -> Frame {
        match self {
            Tx::Lnet(t) => Frame::Lnet(t.desc().len as usize),
            Tx::Noop(_) => Frame::NonBlockingNoop,
        }
    }

    /// Bytes it puts on the wire.
    fn wire_len(&self) -> usize {
        match self {
            Tx::Lnet(t) => (t.desc().len as usize).saturating_add(LNET_FRAME_LEN),
            Tx::Noop(_) => KSOCK_MSG_LEN,
        }
    }

    /// Its LNet message, handed back with a refusal (none for a NOOP).
    pub(crate) fn into_msg(self) -> Msg {
        match self {
            Tx::Lnet(t) => t.into_msg(),
            Tx::Noop(_) => Msg::none(),
        }
    }

    /// Ends it unsent (a NOOP just goes).
    pub(crate) fn fail(self, err: i32, hstatus: Status) {
        if let Tx::Lnet(t) = self {
            t.finalize(err, hstatus);
        }
    }
}

/// What LNet asked for a received header (its `lnd_recv` call): the
/// message and the fragments its payload goes to.
pub(crate) type RxReq = RxMsg;

/// Signs of life in each direction.
struct Progress {
    /// When the peer last sent us anything (ms).
    last_rx_ms: AtomicU64,
    /// The socket's acknowledged mark at the last check, and when it last
    /// moved or nothing was outstanding (ms): Lustre's tx deadline.
    last_acked: AtomicU32,
    tx_ms: AtomicU64,
    /// The path was called silent and has made no progress since.
    silent: AtomicBool,
}

impl Progress {
    fn new() -> Progress {
        let now = kthread::now_ms();
        Progress {
            last_rx_ms: AtomicU64::new(now),
            last_acked: AtomicU32::new(0),
            tx_ms: AtomicU64::new(now),
            silent: AtomicBool::new(false),
        }
    }
}

/// A connection, always in an `Arc`.
///
/// # Invariants
///
/// Each of its threads holds a reference to it (its `Thread`), released
/// once the thread is stopped: whoever takes it out of the NI's table stops
/// its threads (`stop_threads`), or the connection and its threads keep
/// each other.
///
/// `sni` is the NI that made it, which outlives it: the NI's
/// [`SockNi::stop`] closes every connection, takes each out of its table
/// and stops its threads before the NI goes, and LNet hands back each
/// receive context (a connection reference) before the NI's shutdown.
#[pin_data]
pub(crate) struct Conn {
    /// The connection's threads, each holding a reference to it.
    #[pin]
    threads: Mutex<KVec<Thread>>,
    sni: *const SockNi,
    pub(crate) peer: Nid,
    /// This side's view of the type.
    pub(crate) ctype: ConnType,
    sock: Socket,
    dead: AtomicBool,
    /// The peer writes `ksock_msg` headers in the other byte order.
    flip: bool,
    #[pin]
    txq: SpinLock<KVec<Tx>>,
    /// Bytes queued and not yet sent.
    queued: AtomicUsize,
    #[pin]
    tx_wake: CondVar,
    #[pin]
    rx: SpinLock<Option<RxReq>>,
    #[pin]
    rx_wake: CondVar,
    progress: Progress,
    /// Threads that have finished and wait to be stopped.
    parked: AtomicU32,
    /// Threads started.
    started: AtomicU32,
}

// SAFETY: `sni` outlives every connection (the NI stops them first); the
// rest is synchronized.
unsafe impl Send for Conn {}
// SAFETY: `sni` outlives every connection (the NI stops them first) and is only
// read; every other field is an atomic, a lock, a condition variable, the
// socket (itself Sync) or fixed at start, so shared use is synchronized.
unsafe impl Sync for Conn {}

impl Conn {
    /// Registers a connection whose handshake is done and starts its
    /// threads; it takes the messages waiting for its peer.
    pub(crate) fn start(sni: &SockNi, sock: Socket, hs: Peer, active: bool) -> Result {
        let timeout = crate::peer::timeout_ms();
        let ms = u32::try_from(timeout).unwrap_or(u32::MAX);
        // Every wait on the socket is bounded: a stalled peer mid-message
        // or mid-send closes the connection (an idle one does not: see
        // `rx_main`).
        sock.set_timeouts(ms, ms);
        // INVARIANT: no thread yet; each `spawn` below keeps its thread's
        // reference in `threads`. `sni` is the NI starting it, which
        // stops it before going.
        let conn = Arc::pin_init(
            pin_init!(Conn {
                threads <- new_mutex!(KVec::new(), "socklnd_conn_threads"),
                sni: sni as *const SockNi,
                peer: hs.nid,
                ctype: hs.ctype,
                sock,
                dead: AtomicBool::new(false),
                flip: hs.flip,
                txq <- new_spinlock!(KVec::new(), "socklnd_txq"),
                queued: AtomicUsize::new(0),
                tx_wake <- new_condvar!("socklnd_tx_wake"),
                rx <- new_spinlock!(None, "socklnd_rx"),
                rx_wake <- new_condvar!("socklnd_rx_wake"),
                progress: Progress::new(),
                parked: AtomicU32::new(0),
                started: AtomicU32::new(0),
            }),
            GFP_KERNEL,
        );
        let mut stale = KVec::new();
        let registered = conn.and_then(|conn| {
            let mut t = sni.table.lock();
            if t.closed {
                return Err(errno::ESHUTDOWN());
            }
            // A new incarnation: the peer restarted, and what we had with
            // it is gone.
            let known = t.peer_mut(&hs.nid).and_then(|p| p.incarnation);
            if known.is_some_and(|k| k != hs.incarnation) {
                stale = t.conns_of(&hs.nid);
            }
            let p = t.peer_or_insert(hs.nid)?;
            p.incarnation = Some(hs.incarnation);
            p.backoff.connected();
            t.add_conn(&conn)?;
            // What it cannot take waits for the next connection.
            let _ = t.adopt_waiting(&conn);
            Ok(conn)
        });
        for c in stale {
            c.close(errno::ESTALE().to_errno());
        }
        let conn = registered?;
        let r = {
            // Held across both starts: a reaper that takes the connection
            // (its first thread may park at once) waits for it in
            // `stop_threads`, and stops both threads, not just the first.
            let mut threads = conn.threads.lock();
            conn.spawn(&mut threads, c_str!("socknal_rx"), rx_main)
                .and_then(|()| conn.spawn(&mut threads, c_str!("socknal_tx"), tx_main))
        };
        if let Err(e) = r {
            conn.close(e.to_errno());
            return Err(e);
        }
        crate::cnet!(
            "{} {} {} connection {} {}\n",
            sni.nid,
            if active { "opened" } else { "accepted" },
            type_name(conn.ctype),
            if active { "to" } else { "from" },
            conn.peer
        );
        Ok(())
    }

    /// Its route can carry zero-copy requests (see `zc`); read each time,
    /// as the route may change.
    pub(crate) fn zc_capable(&self) -> bool {
        self.sock.zc_capable()
    }

    pub(crate) fn sni(&self) -> &SockNi {
        // SAFETY: the NI outlives its connections (# Invariants).
        unsafe { &*self.sni }
    }

    /// Queues `tx`; the caller holds the NI's table lock (which orders
    /// this against a connection taking the peer's waiting messages) and
    /// wakes the send thread after dropping it.
    /// On failure `tx` comes back, unsent.
    pub(crate) fn queue_locked(&self, tx: Tx) -> core::result::Result<(), (Tx, Error)> {
        let mut q = self.txq.lock();
        if self.is_dead() {
            return Err((tx, errno::ECONNRESET()));
        }
        if let Err(e) = q.reserve(1, GFP_ATOMIC) {
            return Err((tx, e.into()));
        }
        let n = tx.wire_len();
        // Cannot fail: the room is reserved.
        let _ = q.push(tx, GFP_ATOMIC);
        self.queued.fetch_add(n, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn wake_tx(&self) {
        self.tx_wake.notify_all();
    }

    /// Bytes waiting to be sent.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    pub(crate) fn last_rx_ms(&self) -> u64 {
        self.progress.last_rx_ms.load(Ordering::Relaxed)
    }

    /// Whether sending has stalled, and why: something is queued or
    /// unacknowledged and the peer has acknowledged nothing since, for
    /// `timeout_ms` (`ksocknal_find_timed_out_conn`) or for long enough
    /// that TCP's own retransmissions say the path is silent
    /// (lnet-core `socklnd_path`). A peer that stopped acknowledging is
    /// caught here even when no send blocks. With the stall: how long
    /// nothing was acknowledged (ms) and what TCP said.
    pub(crate) fn tx_stall(
        &self,
        now: u64,
        timeout_ms: u64,
        silent_path: bool,
    ) -> Option<(Stall, u64, TcpTiming)> {
        let mark = self.sock.acked_mark();
        let moved = self.progress.last_acked.swap(mark, Ordering::Relaxed) != mark;
        let idle = self.sock.unacked() == 0 && self.queued() == 0;
        if moved || idle {
            self.progress.tx_ms.store(now, Ordering::Relaxed);
            self.progress.silent.store(false, Ordering::Relaxed);
            return None;
        }
        let stalled_ms = now.saturating_sub(self.progress.tx_ms.load(Ordering::Relaxed));
        let (rto_retransmits, srtt_us) = self.sock.tcp_timing();
        let tcp = TcpTiming {
            rto_retransmits,
            srtt_us,
        };
        socklnd_path::tx_stall(stalled_ms, tcp, timeout_ms, silent_path)
            .map(|s| (s, stalled_ms, tcp))
    }

    /// Records that the path was called silent; true the first time since
    /// it last made progress.
    pub(crate) fn mark_silent(&self) -> bool {
        !self.progress.silent.swap(true, Ordering::Relaxed)
    }

    /// Takes out the LNet messages that wait in the queue, not yet handed
    /// to the socket (the transmit thread takes each message out before it
    /// writes it). NOOPs stay: one may carry the ACK of a peer's zero-copy
    /// send, which the peer waits for until its connection times out.
    /// Without room to sort the queue, nothing moves.
    pub(crate) fn take_unsent(&self) -> KVec<Tx> {
        let mut q = self.txq.lock();
        let lnet = q.iter().filter(|t| matches!(t, Tx::Lnet(_))).count();
        let mut taken = KVec::new();
        let mut kept = KVec::new();
        if lnet == 0
            || taken.reserve(lnet, GFP_ATOMIC).is_err()
            || kept
                .reserve(q.len().saturating_sub(lnet), GFP_ATOMIC)
                .is_err()
        {
            return KVec::new();
        }
        for tx in core::mem::take(&mut *q) {
            let to = if matches!(tx, Tx::Lnet(_)) {
                &mut taken
            } else {
                &mut kept
            };
            // Cannot fail: the room is reserved.
            let _ = to.push(tx, GFP_ATOMIC);
        }
        *q = kept;
        drop(q);
        let bytes = taken
            .iter()
            .fold(0usize, |n, t| n.saturating_add(t.wire_len()));
        let _ = self
            .queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| {
                Some(q.saturating_sub(bytes))
            });
        taken
    }

    /// Queues a keepalive NOOP (`ksocknal_send_keepalive_locked`).
    pub(crate) fn send_keepalive(&self) {
        let queued = {
            let _t = self.sni().table.lock();
            self.queue_locked(Tx::Noop([0, KEEPALIVE_PING])).is_ok()
        };
        if queued {
            self.wake_tx();
        }
    }

    /// Starts a thread of the connection; `threads` is its locked list.
    fn spawn(
        self: &Arc<Self>,
        threads: &mut KVec<Thread>,
        name: &CStr,
        f: fn(ArcBorrow<'_, Conn>),
    ) -> Result {
        let t = Thread::spawn_arc(name, self.clone(), f)?;
        self.started.fetch_add(1, Ordering::Relaxed);
        // INVARIANT: the thread's reference is kept in `threads`, released
        // only when `stop_threads` stops it; if the push fails, dropping
        // `t` stops the thread and releases it at once.
        threads.push(t, GFP_KERNEL)?;
        Ok(())
    }

    /// Both threads have parked after the connection died: it can be freed
    /// without any thread of its own holding it.
    pub(crate) fn reapable(&self) -> bool {
        self.is_dead()
            && self.parked.load(Ordering::Acquire) == self.started.load(Ordering::Acquire)
    }

    pub(crate) fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    /// Kills the connection and every other connection with its peer NI
    /// (Lustre's `ksocknal_close_conn_and_siblings`, on a send or receive
    /// error or a send making no progress): a peer that stopped answering
    /// on one connection is given up on all of them, so that neither end
    /// keeps one the other has dropped. A connection kept after its far
    /// end was closed unseen (the FIN lost on a silent rail) would carry
    /// the next reply into a reset.
    pub(crate) fn close_with_siblings(&self, err: i32) {
        self.close(err);
        self.sni().close_conns_of(&self.peer, err);
    }

    /// Kills the connection with `-err`: the socket is shut (blocked
    /// threads return) and every queued message is finalized with the
    /// status the error maps to.
    pub(crate) fn close(&self, err: i32) {
        if !self.dead.swap(true, Ordering::AcqRel) {
            self.sock.shutdown();
            // One line per connection: a clean close is traffic (the
            // peer's EOF, its reboot, our NI stopping: Lustre closes those
            // with 0), a failed one a network error; rate-limited, as a
            // peer can cause either.
            let clean = [
                0,
                kernel::error::code::EPIPE.to_errno(),
                crate::kapi::errno::ESTALE().to_errno(),
                crate::kapi::errno::ENETDOWN().to_errno(),
            ];
            let class = if clean.contains(&err) {
                crate::lnet_core::debug::D_NET
            } else {
                crate::lnet_core::debug::D_NETERROR
            };
            crate::cdebug_limit!(
                class,
                "{} closed {} connection with {}: {}\n",
                self.sni().nid,
                type_name(self.ctype),
                self.peer,
                err
            );
        }
        // Not Lustre's -ESHUTDOWN / LOCAL_ERROR: by the close's cause, so
        // that what never left is resent elsewhere (see
        // `closed_conn_status`).
        let hstatus = socklnd::closed_conn_status(err);
        loop {
            let tx = vec::pop(&mut self.txq.lock());
            let Some(tx) = tx else {
                break;
            };
            tx.fail(err, hstatus);
        }
        self.queued.store(0, Ordering::Relaxed);
        crate::zc::abort(self, err);
        self.tx_wake.notify_all();
        self.rx_wake.notify_all();
        // A header LNet parsed but whose payload will never come. Taken
        // out first: finalizing runs the ULP's handler and may sleep, so
        // the receive lock is not held across it.
        let req = self.rx.lock().take();
        if let Some(req) = req {
            if !req.msg().is_none() {
                crate::cneterr!(
                    "{} fails the receive from {} with its connection\n",
                    self.sni().nid,
                    self.peer
                );
            }
            req.finalize(EIO.to_errno(), Status::RemoteError);
        }
    }

    /// LNet's answer for the header the receive thread passed it. It may
    /// come long after (a lazy portal, a delay rule), when the connection
    /// has died: LNet's reference kept it alive, but its payload went with
    /// the socket, so the message fails as `close` fails one.
    pub(crate) fn post_rx(&self, req: RxReq) {
        let late = {
            let mut rx = self.rx.lock();
            // Under the lock `close` takes after marking the connection
            // dead: either it finds the request, or we see it dead.
            if self.is_dead() {
                Some(req)
            } else {
                *rx = Some(req);
                None
            }
        };
        match late {
            Some(req) => req.finalize(EIO.to_errno(), Status::RemoteError),
            None => self.rx_wake.notify_all(),
        }
    }

    /// Stops both threads (after `close`): they see the connection dead,
    /// park and exit, and release their references to it. The NI does
    /// this as it takes a connection out of its table (see the type).
    pub(crate) fn stop_threads(&self) {
        loop {
            let t = vec::pop(&mut self.threads.lock());
            let Some(t) = t else {
                break;
            };
            drop(t);
        }
    }

    /// Waits, in the thread that finished, to be stopped by the reaper.
    fn park(&self) {
        self.parked.fetch_add(1, Ordering::AcqRel);
        while !kthread::should_stop() {
            kthread::sleep_ms(200);
        }
    }

    /// Sends one frame: `ksock_msg`, then for an LNET message its header
    /// and payload; `zc` is its zero-copy request cookie (0: none).
    fn transmit(&self, tx: &Tx, zc: u64) -> Result {
        let mut b = [0u8; KSOCK_MSG_LEN + HDR_NID4_LEN];
        let (kind, cookies) = match tx {
            Tx::Lnet { .. } => (MsgKind::Lnet, [zc, 0]),
            Tx::Noop(c) => (MsgKind::Noop, *c),
        };
        KsockMsg {
            kind,
            csum: 0,
            zc_cookies: cookies,
        }
        .encode(&mut b)
        .ok_or(EINVAL)?;
        let Tx::Lnet(t) = tx else {
            return self.sock.send(b.get(..KSOCK_MSG_LEN).ok_or(EINVAL)?, false);
        };
        let desc = t.desc();
        let hdr = desc.hdr.get(..HDR_NID4_LEN).ok_or(EINVAL)?;
        b.get_mut(KSOCK_MSG_LEN..)
            .ok_or(EINVAL)?
            .copy_from_slice(hdr);
        self.sock.send(&b, desc.len > 0)?;
        if desc.len > 0 {
            self.sock.send_frags(t.payload(), desc.offset, desc.len)?;
        }
        Ok(())
    }
}

/// Lustre's names, as its logs print them.
pub(crate) fn type_name(t: ConnType) -> &'static str {
    match t {
        ConnType::Control => "control",
        ConnType::BulkIn => "bulk-in",
        ConnType::BulkOut => "bulk-out",
        ConnType::Any => "untyped",
        ConnType::None => "refused",
    }
}

/// The send thread: sends what is queued, in order.
fn tx_main(conn: ArcBorrow<'_, Conn>) {
    while !conn.is_dead() && !kthread::should_stop() {
        let next = {
            let mut q = conn.txq.lock();
            while q.is_empty() && !conn.is_dead() && !kthread::should_stop() {
                let _ = conn.tx_wake.wait_interruptible_timeout(&mut q, 100);
            }
            vec::remove(&mut q, 0)
        };
        let Some(tx) = next else {
            continue;
        };
        // Between frames, the receive thread (an ACK waiting to be read)
        // gets its turn even when the queue never empties.
        kthread::cond_resched();
        let zc = match &tx {
            Tx::Lnet(t) if crate::zc::wanted(&conn, t.desc().len) => crate::zc::register(&conn),
            _ => None,
        };
        let r = conn.transmit(&tx, zc.unwrap_or(0));
        let _ = conn
            .queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| {
                Some(q.saturating_sub(tx.wire_len()))
            });
        match r {
            Ok(()) => {
                if let Tx::Lnet(t) = tx {
                    match zc {
                        // Complete once the peer acknowledges it.
                        Some(cookie) => crate::zc::sent(&conn, cookie, t.into_msg()),
                        None => t.finalize(0, Status::Ok),
                    }
                }
            }
            Err(e) => {
                if let Some(cookie) = zc {
                    crate::zc::unsent(&conn, cookie);
                }
                tx.fail(e.to_errno(), socklnd::send_error_status(e.to_errno()));
                conn.close_with_siblings(e.to_errno());
            }
        }
    }
    conn.park();
}

/// The receive thread: reads `ksock_msg` headers, hands LNet headers to
/// LNet and receives or discards the payload as LNet says.
fn rx_main(conn: ArcBorrow<'_, Conn>) {
    while !conn.is_dead() && !kthread::should_stop() {
        kthread::cond_resched();
        if let Err(e) = rx_one(conn) {
            match e {
                RxError::Io(e) => conn.close_with_siblings(e.to_errno()),
                RxError::Proto(why) => {
                    conn.sni().count_protocol_error();
                    crate::cneterr!(
                        "protocol error from {} on {}: {}\n",
                        conn.peer,
                        conn.sni().nid,
                        why
                    );
                    conn.close_with_siblings(errno::EPROTO().to_errno());
                }
            }
        }
    }
    conn.park();
}

enum RxError {
    Io(Error),
    Proto(&'static str),
}

impl From<Error> for RxError {
    fn from(e: Error) -> Self {
        RxError::Io(e)
    }
}

fn rx_one(conn: ArcBorrow<'_, Conn>) -> core::result::Result<(), RxError> {
    let mut b = [0u8; KSOCK_MSG_LEN + HDR_NID4_LEN];
    let (head, rest) = b.split_at_mut(KSOCK_MSG_LEN);
    // Idle between frames is fine (keepalives probe the peer); once a
    // frame starts, each wait is bounded by the socket's timeout.
    if !conn.sock.recv_start(head)? {
        return Ok(());
    }
    conn.progress
        .last_rx_ms
        .store(kthread::now_ms(), Ordering::Relaxed);
    let m =
        KsockMsg::decode(head, conn.flip).map_err(|_| RxError::Proto("bad ksock_msg header"))?;
    // ACKs of our zero-copy requests, alone in a NOOP or carried by an
    // LNET message; a keepalive carries [0, KEEPALIVE_PING].
    let acks = m.zc_acks();
    if !matches!(acks, ZcAcks::None | ZcAcks::Keepalive)
        && crate::zc::acked(conn.sni(), &conn.peer, acks) > 0
    {
        // As Lustre: the peer acknowledged a request we never made (or
        // gave up on with its connection).
        return Err(RxError::Proto("unknown ZC-ACK cookie"));
    }
    if m.kind == MsgKind::Noop {
        return Ok(());
    }
    conn.sock.recv(rest)?;
    // LNet gets a reference of its own: a request it parks on a lazy
    // portal or under a delay rule keeps the connection alive until its
    // lnd_recv, however long after the connection died.
    let mine: Arc<Conn> = conn.into();
    let parsed = conn
        .sni()
        .ni
        .parse::<crate::lnd::Socklnd>(rest, &conn.peer, mine, false);
    if parsed.is_err() {
        return Err(RxError::Proto("LNet refused the header"));
    }
    // LNet answers with lnd_recv, usually before lnet_parse returns; on a
    // lazy portal only once an MD is posted.
    let req = {
        let mut rx = conn.rx.lock();
        while rx.is_none() && !conn.is_dead() && !kthread::should_stop() {
            let _ = conn.rx_wake.wait_interruptible_timeout(&mut rx, 100);
        }
        rx.take()
    };
    let Some(mut req) = req else {
        return Ok(());
    };
    // A zero-copy request: the sender holds its pages until we say we
    // have the whole message.
    let zc = m.zc_cookies[0];
    if req.msg().is_none() {
        conn.sock.discard(req.rlen())?;
        if zc != 0 {
            ack_zc(&conn, zc);
        }
        return Ok(());
    }
    let (offset, mlen, rlen) = (req.offset(), req.mlen(), req.rlen());
    let r = conn
        .sock
        .recv_frags(req.dest(), offset, mlen)
        .and_then(|()| conn.sock.discard(rlen.saturating_sub(mlen)));
    conn.progress
        .last_rx_ms
        .store(kthread::now_ms(), Ordering::Relaxed);
    match r {
        Ok(()) => {
            req.finalize(0, Status::Ok);
            if zc != 0 {
                ack_zc(&conn, zc);
            }
            Ok(())
        }
        Err(e) => {
            req.finalize(EIO.to_errno(), Status::RemoteError);
            Err(RxError::Io(e))
        }
    }
}

/// Acknowledges a zero-copy request with a NOOP on the peer's ACK
/// connection (or any that may carry it), as `ksocknal_handle_zcreq`.
fn ack_zc(conn: &Conn, cookie: u64) {
    let sni = conn.sni();
    let target = {
        let t = sni.table.lock();
        let c = t
            .choose(&conn.peer, Frame::NonBlockingNoop)
            .or_else(|| t.choose(&conn.peer, Frame::Lnet(0)));
        match c {
            Some(c) if c.queue_locked(Tx::Noop([0, cookie])).is_ok() => Some(c),
            _ => None,
        }
    };
    match target {
        Some(c) => c.wake_tx(),
        None => crate::cneterr!(
            "{}: no connection to acknowledge {}'s zero-copy send\n",
            sni.nid,
            conn.peer
        ),
    }
}
