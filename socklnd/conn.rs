// SPDX-License-Identifier: GPL-2.0

//! A connection to a peer: a socket whose handshake is done, its type, a
//! queue of frames to send, and the state of its non-blocking receive and
//! send, which its scheduler thread advances (sched.rs).
//!
//! Connections come from a connector (active) or the acceptor (passive)
//! and are registered in the NI's table already up. When a send or a
//! receive fails, the connection dies: every queued message is finalized
//! with the health status the failure maps to (o2iblnd-events.md §4.1),
//! its scheduler retires it, and the NI's reaper frees it.

use crate::handshake::Peer;
use crate::kapi::arcstack::{StackLink, Stackable};
use crate::kapi::kthread;
use crate::kapi::lnd::{RxMsg, TxMsg};
use crate::kapi::sock::{SockEvent, SockEvents, Socket};
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
use crate::lnet_core::socklnd_sched::{
    self as rules, RxEvent, RxFrame, RxWant, TxProgress, TxWant, FRAME_HDRS_LEN,
};
use crate::ni::SockNi;
use crate::sched::{Sched, BUDGET};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use kernel::new_spinlock;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, SpinLock};

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
    /// When the receive last moved (ms), and whether it is inside a frame:
    /// a frame stalled mid-way for the timeout closes the connection.
    rx_ms: AtomicU64,
    rx_mid: AtomicBool,
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
            rx_ms: AtomicU64::new(now),
            rx_mid: AtomicBool::new(false),
            last_acked: AtomicU32::new(0),
            tx_ms: AtomicU64::new(now),
            silent: AtomicBool::new(false),
        }
    }
}

/// The frame being sent: taken off the queue, its headers encoded, sent
/// over as many turns as the socket needs.
struct TxCur {
    tx: Tx,
    /// Its zero-copy request cookie.
    zc: Option<u64>,
    hdr: [u8; FRAME_HDRS_LEN],
    hdr_len: usize,
    prog: TxProgress,
}

impl TxCur {
    /// Encodes the frame's headers: `ksock_msg`, then for an LNET message
    /// its LNet header; `zc` is its zero-copy request cookie. On failure
    /// `tx` comes back.
    fn new(tx: Tx, zc: Option<u64>) -> core::result::Result<TxCur, (Tx, Error)> {
        let mut hdr = [0u8; FRAME_HDRS_LEN];
        let (kind, cookies) = match &tx {
            Tx::Lnet(_) => (MsgKind::Lnet, [zc.unwrap_or(0), 0]),
            Tx::Noop(c) => (MsgKind::Noop, *c),
        };
        let msg = KsockMsg {
            kind,
            csum: 0,
            zc_cookies: cookies,
        };
        if msg.encode(&mut hdr).is_none() {
            return Err((tx, EINVAL));
        }
        let (hdr_len, payload) = match &tx {
            Tx::Noop(_) => (KSOCK_MSG_LEN, 0),
            Tx::Lnet(t) => {
                let desc = t.desc();
                let (Some(from), Some(to)) = (
                    desc.hdr.get(..HDR_NID4_LEN),
                    hdr.get_mut(KSOCK_MSG_LEN..FRAME_HDRS_LEN),
                ) else {
                    return Err((tx, EINVAL));
                };
                to.copy_from_slice(from);
                (FRAME_HDRS_LEN, desc.len)
            }
        };
        Ok(TxCur {
            tx,
            zc,
            hdr,
            hdr_len,
            prog: TxProgress::new(hdr_len as u32, payload),
        })
    }
}

/// What only the connection's scheduler touches, taken out for a turn.
struct ConnIo {
    rx: RxFrame,
    /// LNet's answer for the header being received.
    req: Option<RxReq>,
    tx: Option<TxCur>,
}

/// A connection, always in an `Arc`.
///
/// # Invariants
///
/// While its socket is watched, the watch holds a reference to it; `close`
/// ends the watch, and whoever takes it out of the NI's table has closed
/// it. Its scheduler's stack holds a reference while it waits for a turn.
///
/// `sni` is the NI that made it, which outlives it: the NI's
/// [`SockNi::stop`] closes every connection, stops its schedulers and
/// takes each connection out of its table before the NI goes, and LNet
/// hands back each receive context (a connection reference) before the
/// NI's shutdown. `sched` indexes the NI's schedulers, fixed at its start.
#[pin_data]
pub(crate) struct Conn {
    sni: *const SockNi,
    /// Its scheduler, in `sni.scheds`.
    sched: usize,
    sched_link: StackLink<Conn>,
    pub(crate) peer: Nid,
    /// The peer's pid (from the handshake).
    pub(crate) pid: u32,
    /// The far end's IPv4 address and port (host order; 0 if the socket
    /// could not say), as Lustre keeps `ksnc_peeraddr`.
    pub(crate) peer_addr: (u32, u16),
    /// This side's view of the type.
    pub(crate) ctype: ConnType,
    sock: Socket,
    dead: AtomicBool,
    /// The errno it was closed with (0 until then).
    close_err: AtomicI32,
    /// Its scheduler is done with it: what it was sending and receiving
    /// has ended.
    retired: AtomicBool,
    /// The peer writes `ksock_msg` headers in the other byte order.
    flip: bool,
    #[pin]
    txq: SpinLock<KVec<Tx>>,
    /// Bytes queued and not yet sent.
    queued: AtomicUsize,
    /// The socket has data (or news) / room: a turn should try it.
    rx_ready: AtomicBool,
    tx_ready: AtomicBool,
    /// Its scheduler is in `lnet_parse` for it and takes LNet's answer
    /// right after, without being pushed.
    in_parse: AtomicBool,
    /// LNet's answer to the header it holds, until the scheduler takes it.
    #[pin]
    rx: SpinLock<Option<RxReq>>,
    /// The receive and send state; out while a turn runs, none once
    /// retired.
    #[pin]
    io: SpinLock<Option<ConnIo>>,
    progress: Progress,
}

// SAFETY: `sni` outlives every connection (the NI stops them first); the
// rest is synchronized.
unsafe impl Send for Conn {}
// SAFETY: `sni` outlives every connection (the NI stops them first) and is only
// read; every other field is an atomic, a lock, the stack link (atomics), the
// socket (itself Sync) or fixed at start, so shared use is synchronized.
unsafe impl Sync for Conn {}

impl Stackable for Conn {
    fn link(&self) -> &StackLink<Conn> {
        &self.sched_link
    }
}

/// The socket's callbacks (softirq): note what is ready and hand the
/// connection to its scheduler; nothing else.
impl SockEvents for Conn {
    fn sock_event(this: ArcBorrow<'_, Conn>, ev: SockEvent) {
        match ev {
            SockEvent::Readable => this.rx_ready.store(true, Ordering::Release),
            SockEvent::Writable => this.tx_ready.store(true, Ordering::Release),
            SockEvent::State => {
                this.rx_ready.store(true, Ordering::Release);
                this.tx_ready.store(true, Ordering::Release);
            }
        }
        if let Some(s) = this.sched() {
            s.kick(this.into());
        }
    }
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

impl Conn {
    /// Registers a connection whose handshake is done and hands it to the
    /// least loaded scheduler; it takes the messages waiting for its peer.
    pub(crate) fn start(sni: &SockNi, sock: Socket, hs: Peer, active: bool) -> Result {
        let sched = rules::least_loaded(sni.scheds.iter().map(|s| s.load())).ok_or(ENODEV)?;
        // Connected already: only `lctl conn_list` reads it.
        let peer_addr = sock.peer().unwrap_or((0, 0));
        // INVARIANT: not watched yet, in no table. `sni` is the NI starting
        // it, which stops it before going; `sched` indexes its schedulers.
        let conn = Arc::pin_init(
            pin_init!(Conn {
                sni: sni as *const SockNi,
                sched,
                sched_link: StackLink::new(),
                peer: hs.nid,
                pid: hs.pid,
                peer_addr,
                ctype: hs.ctype,
                sock,
                dead: AtomicBool::new(false),
                close_err: AtomicI32::new(0),
                retired: AtomicBool::new(false),
                flip: hs.flip,
                txq <- new_spinlock!(KVec::new(), "socklnd_txq"),
                queued: AtomicUsize::new(0),
                rx_ready: AtomicBool::new(false),
                tx_ready: AtomicBool::new(false),
                in_parse: AtomicBool::new(false),
                rx <- new_spinlock!(None, "socklnd_rx"),
                io <- new_spinlock!(
                    Some(ConnIo {
                        rx: RxFrame::new(),
                        req: None,
                        tx: None,
                    }),
                    "socklnd_conn_io"
                ),
                progress: Progress::new(),
            }),
            GFP_KERNEL,
        )?;
        // Counted before anything may retire it.
        if let Some(s) = conn.sched() {
            s.attach();
        }
        let mut stale = KVec::new();
        let registered = (|| -> Result {
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
            Ok(())
        })();
        for c in stale {
            c.close(errno::ESTALE().to_errno());
        }
        if let Err(e) = registered {
            // Never seen by anyone: nothing to fail.
            if let Some(s) = conn.sched() {
                s.detach();
            }
            return Err(e);
        }
        // Watched once registered, then tried both ways: what came or was
        // queued before the watch is not missed.
        if let Err(e) = conn.sock.watch(conn.clone()) {
            conn.close(e.to_errno());
            return Err(e);
        }
        conn.rx_ready.store(true, Ordering::Release);
        conn.tx_ready.store(true, Ordering::Release);
        conn.kick();
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

    fn sched(&self) -> Option<&Sched> {
        self.sni().scheds.get(self.sched).map(|s| &**s)
    }

    /// Gives it a turn on its scheduler soon.
    fn kick(self: &Arc<Self>) {
        if let Some(s) = self.sched() {
            s.kick(self.clone());
        }
    }

    /// Queues `tx`; the caller holds the NI's table lock (which orders
    /// this against a connection taking the peer's waiting messages) and
    /// wakes the sender after dropping it.
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

    /// Something was queued: its scheduler sends it.
    pub(crate) fn wake_tx(self: &Arc<Self>) {
        self.tx_ready.store(true, Ordering::Release);
        self.kick();
    }

    /// Its socket's send and receive buffer sizes and whether Nagle's
    /// algorithm is on (`lctl conn_list`).
    pub(crate) fn sock_buffers(&self) -> (i32, i32, bool) {
        self.sock.buffers()
    }

    /// Bytes waiting to be sent.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    fn sent_bytes(&self, n: usize) {
        let _ = self
            .queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| {
                Some(q.saturating_sub(n))
            });
    }

    pub(crate) fn last_rx_ms(&self) -> u64 {
        self.progress.last_rx_ms.load(Ordering::Relaxed)
    }

    /// Whether a frame has stopped arriving mid-way for `timeout_ms`
    /// (what the socket's receive timeout caught when receives blocked).
    pub(crate) fn rx_stalled(&self, now: u64, timeout_ms: u64) -> bool {
        self.progress.rx_mid.load(Ordering::Acquire)
            && now.saturating_sub(self.progress.rx_ms.load(Ordering::Relaxed)) >= timeout_ms
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
    /// to the socket (the scheduler takes each message out before it
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
        self.sent_bytes(bytes);
        taken
    }

    /// Queues a keepalive NOOP (`ksocknal_send_keepalive_locked`).
    pub(crate) fn send_keepalive(self: &Arc<Self>) {
        let queued = {
            let _t = self.sni().table.lock();
            self.queue_locked(Tx::Noop([0, KEEPALIVE_PING])).is_ok()
        };
        if queued {
            self.wake_tx();
        }
    }

    /// Its scheduler is done with it after it died: it can be freed.
    pub(crate) fn reapable(&self) -> bool {
        self.is_dead() && self.retired.load(Ordering::Acquire)
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
    pub(crate) fn close_with_siblings(self: &Arc<Self>, err: i32) {
        self.close(err);
        self.sni().close_conns_of(&self.peer, err);
    }

    /// Kills the connection with `-err`: its socket's callbacks end, the
    /// socket is shut, every queued message is finalized with the status
    /// the error maps to, and its scheduler retires it.
    pub(crate) fn close(self: &Arc<Self>, err: i32) {
        let _ = self
            .close_err
            .compare_exchange(0, err, Ordering::AcqRel, Ordering::Acquire);
        if !self.dead.swap(true, Ordering::AcqRel) {
            // The watch's reference goes; `self` is another.
            self.sock.unwatch();
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
        // What it was sending and receiving ends in its scheduler.
        self.kick();
    }

    /// LNet's answer for the header the scheduler passed it. It may come
    /// long after (a lazy portal, a delay rule), when the connection has
    /// died: LNet's reference kept it alive, but its payload went with the
    /// socket, so the message fails as `close` fails one.
    pub(crate) fn post_rx(self: &Arc<Self>, req: RxReq) {
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
            // Within `lnet_parse` its scheduler looks right after; else it
            // needs a turn. `in_parse` is cleared before the scheduler
            // takes `rx`, and read here after storing under it.
            None if !self.in_parse.load(Ordering::Acquire) => {
                self.rx_ready.store(true, Ordering::Release);
                self.kick();
            }
            None => {}
        }
    }

    /// A turn on its scheduler: receives and sends what the socket allows,
    /// without waiting; retires it once dead.
    pub(crate) fn turn(self: &Arc<Self>) {
        // Out of its lock for the turn: LNet and the ULPs are called with
        // no lock of ours held. Only this connection's scheduler takes it
        // (the NI's stop, after stopping the schedulers).
        let io = self.io.lock().take();
        let Some(mut io) = io else {
            return;
        };
        if !self.is_dead() && self.rx_ready.swap(false, Ordering::AcqRel) {
            self.rx_turn(&mut io);
        }
        if !self.is_dead() && self.tx_ready.swap(false, Ordering::AcqRel) {
            self.tx_turn(&mut io);
        }
        if self.is_dead() {
            self.retire_io(io);
        } else {
            *self.io.lock() = Some(io);
        }
    }

    /// Ends what its scheduler was sending and receiving, after `close`;
    /// for the NI's stop, its schedulers stopped.
    pub(crate) fn retire(&self) {
        let io = self.io.lock().take();
        if let Some(io) = io {
            self.retire_io(io);
        }
    }

    fn retire_io(&self, io: ConnIo) {
        if let Some(cur) = io.tx {
            // As a blocked send ended: by its own timeout if the close was
            // a send stall, else by the shutdown.
            let timedout = errno::ETIMEDOUT().to_errno();
            let e = if self.close_err.load(Ordering::Acquire) == timedout {
                timedout
            } else {
                kernel::error::code::EPIPE.to_errno()
            };
            self.sent_bytes(cur.tx.wire_len());
            if let Some(cookie) = cur.zc {
                crate::zc::unsent(self, cookie);
            }
            cur.tx.fail(e, socklnd::send_error_status(e));
        }
        if let Some(req) = io.req {
            req.finalize(EIO.to_errno(), Status::RemoteError);
        }
        self.progress.rx_mid.store(false, Ordering::Release);
        if let Some(s) = self.sched() {
            s.detach();
        }
        self.retired.store(true, Ordering::Release);
    }

    /// Receives for up to [`BUDGET`] socket calls; a connection with more
    /// waiting goes behind the others.
    fn rx_turn(self: &Arc<Self>, io: &mut ConnIo) {
        for _ in 0..BUDGET {
            let r = self.rx_step(io);
            self.progress
                .rx_mid
                .store(io.rx.mid_frame(), Ordering::Release);
            match r {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    self.rx_failed(e);
                    return;
                }
            }
        }
        self.rx_ready.store(true, Ordering::Release);
        self.kick();
    }

    /// One receive step: true if it moved and more may follow.
    fn rx_step(self: &Arc<Self>, io: &mut ConnIo) -> core::result::Result<bool, RxError> {
        let n = match io.rx.want() {
            RxWant::Parked => {
                // LNet's answer, if it has come.
                let req = self.rx.lock().take();
                let Some(req) = req else {
                    return Ok(false);
                };
                // The payload's wait starts now, not at the header.
                self.progress
                    .rx_ms
                    .store(kthread::now_ms(), Ordering::Relaxed);
                let ev = io.rx.recv(req.mlen(), req.rlen(), !req.msg().is_none());
                io.req = Some(req);
                self.rx_event(io, ev)?;
                return Ok(true);
            }
            RxWant::Buf(b) => self.sock.recv_some(b)?,
            RxWant::Payload { done, len } => {
                let Some(req) = io.req.as_mut() else {
                    return Err(RxError::Proto("payload without a receive"));
                };
                let offset = req.offset().saturating_add(done);
                self.sock.recv_frags_some(req.dest(), offset, len)?
            }
            RxWant::Discard(len) => self.sock.discard_some(len)?,
        };
        if n == 0 {
            // Nothing more now: its data-ready callback brings it back.
            return Ok(false);
        }
        self.progress
            .rx_ms
            .store(kthread::now_ms(), Ordering::Relaxed);
        let ev = io
            .rx
            .received(u32::try_from(n).unwrap_or(u32::MAX), self.flip)
            .map_err(|_| RxError::Proto("bad ksock_msg header"))?;
        self.rx_event(io, ev)?;
        Ok(true)
    }

    fn rx_event(
        self: &Arc<Self>,
        io: &mut ConnIo,
        ev: RxEvent,
    ) -> core::result::Result<(), RxError> {
        match ev {
            RxEvent::More => Ok(()),
            RxEvent::Header(m) => {
                self.progress
                    .last_rx_ms
                    .store(kthread::now_ms(), Ordering::Relaxed);
                // ACKs of our zero-copy requests, alone in a NOOP or
                // carried by an LNET message; a keepalive carries
                // [0, KEEPALIVE_PING].
                let acks = m.zc_acks();
                if !matches!(acks, ZcAcks::None | ZcAcks::Keepalive)
                    && crate::zc::acked(self.sni(), &self.peer, acks) > 0
                {
                    // As Lustre: the peer acknowledged a request we never
                    // made (or gave up on with its connection).
                    return Err(RxError::Proto("unknown ZC-ACK cookie"));
                }
                Ok(())
            }
            RxEvent::LnetHdr => {
                // LNet gets a reference of its own: a request it parks on
                // a lazy portal or under a delay rule keeps the connection
                // alive until its lnd_recv, however long after the
                // connection died. Its answer usually comes within
                // lnet_parse; the next step takes it.
                self.in_parse.store(true, Ordering::Release);
                let parsed = self.sni().ni.parse::<crate::lnd::Socklnd>(
                    io.rx.lnet_hdr(),
                    &self.peer,
                    self.clone(),
                    false,
                );
                self.in_parse.store(false, Ordering::Release);
                if parsed.is_err() {
                    return Err(RxError::Proto("LNet refused the header"));
                }
                Ok(())
            }
            RxEvent::Done { zc } => {
                self.progress
                    .last_rx_ms
                    .store(kthread::now_ms(), Ordering::Relaxed);
                if let Some(req) = io.req.take() {
                    req.finalize(0, Status::Ok);
                }
                // A zero-copy request: the sender holds its pages until we
                // say we have the whole message.
                if zc != 0 {
                    ack_zc(self, zc);
                }
                Ok(())
            }
        }
    }

    fn rx_failed(self: &Arc<Self>, e: RxError) {
        // Closed meanwhile by another thread: the error is its shutdown's,
        // no news of the peer's, and its siblings (a newer incarnation's,
        // perhaps) stay.
        if self.is_dead() {
            return;
        }
        match e {
            RxError::Io(e) => self.close_with_siblings(e.to_errno()),
            RxError::Proto(why) => {
                self.sni().count_protocol_error();
                crate::cneterr!(
                    "protocol error from {} on {}: {}\n",
                    self.peer,
                    self.sni().nid,
                    why
                );
                self.close_with_siblings(errno::EPROTO().to_errno());
            }
        }
    }

    /// Sends for up to [`BUDGET`] socket calls, in queue order; a
    /// connection with more to send goes behind the others.
    fn tx_turn(self: &Arc<Self>, io: &mut ConnIo) {
        for _ in 0..BUDGET {
            if !self.tx_step(io) {
                return;
            }
        }
        self.tx_ready.store(true, Ordering::Release);
        self.kick();
    }

    /// One send step: true if it moved and more may follow.
    fn tx_step(self: &Arc<Self>, io: &mut ConnIo) -> bool {
        if io.tx.is_none() {
            let next = vec::remove(&mut self.txq.lock(), 0);
            let Some(tx) = next else {
                return false;
            };
            let zc = match &tx {
                Tx::Lnet(t) if crate::zc::wanted(self, t.desc().len) => crate::zc::register(self),
                _ => None,
            };
            match TxCur::new(tx, zc) {
                Ok(cur) => io.tx = Some(cur),
                Err((tx, e)) => {
                    self.tx_failed(tx, zc, e);
                    return false;
                }
            }
        }
        let Some(cur) = io.tx.as_mut() else {
            return false;
        };
        let r = match (cur.prog.want(), &cur.tx) {
            (TxWant::Hdr { from, more }, _) => self
                .sock
                .send_some(cur.hdr.get(from..cur.hdr_len).unwrap_or(&[]), more),
            (TxWant::Payload { done, len }, Tx::Lnet(t)) => {
                let offset = t.desc().offset.saturating_add(done);
                self.sock.send_frags_some(t.payload(), offset, len)
            }
            (TxWant::Payload { .. }, Tx::Noop(_)) | (TxWant::Done, _) => Ok(0),
        };
        let n = match r {
            Ok(n) => n,
            Err(e) => {
                if let Some(cur) = io.tx.take() {
                    self.tx_failed(cur.tx, cur.zc, e);
                }
                return false;
            }
        };
        cur.prog.sent(u32::try_from(n).unwrap_or(u32::MAX));
        if cur.prog.want() != TxWant::Done {
            // No room (0): its write-space callback brings it back.
            return n > 0;
        }
        if let Some(cur) = io.tx.take() {
            self.tx_done(cur);
        }
        true
    }

    /// The frame is all on the socket.
    fn tx_done(&self, cur: TxCur) {
        self.sent_bytes(cur.tx.wire_len());
        if let Tx::Lnet(t) = cur.tx {
            match cur.zc {
                // Complete once the peer acknowledges it.
                Some(cookie) => crate::zc::sent(self, cookie, t.into_msg()),
                None => t.finalize(0, Status::Ok),
            }
        }
    }

    /// Sending `tx` failed with `e`: it fails, and the connection with its
    /// siblings closes.
    fn tx_failed(self: &Arc<Self>, tx: Tx, zc: Option<u64>, e: Error) {
        self.sent_bytes(tx.wire_len());
        if let Some(cookie) = zc {
            crate::zc::unsent(self, cookie);
        }
        tx.fail(e.to_errno(), socklnd::send_error_status(e.to_errno()));
        // As for a receive: an error after another thread closed it says
        // nothing of the peer.
        if !self.is_dead() {
            self.close_with_siblings(e.to_errno());
        }
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
