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
use crate::kapi::bindings::lnet_tx_desc;
use crate::kapi::kiov::{self, BioVec};
use crate::kapi::kthread::{self, Thread};
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
use crate::ni::SockNi;
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, CondVar, Mutex, SpinLock};
use kernel::{c_str, new_condvar, new_mutex, new_spinlock};

/// Something to send on a connection.
///
/// # Invariants
///
/// In `Tx::Lnet`, `desc` points to the descriptor LNet gave with `msg` in
/// `lnd_send` (inside LNet's message), valid until `msg` is finalized,
/// which takes `msg` out of the `Tx`; `len` is its `len`.
pub(crate) enum Tx {
    /// An LNet message; its descriptor lives in the message.
    Lnet {
        msg: Msg,
        desc: *const lnet_tx_desc,
        len: u32,
    },
    /// A NOOP carrying zero-copy ACK cookies (a keepalive carries
    /// `[0, KEEPALIVE_PING]`).
    Noop([u64; 2]),
}

// SAFETY: by the type invariant the descriptor lives in LNet's message, which
// may be used from any thread, until the message is finalized.
unsafe impl Send for Tx {}

impl Tx {
    pub(crate) fn lnet(msg: Msg, desc: *const lnet_tx_desc, len: u32) -> Tx {
        // INVARIANT: the caller (`peer::send`) passes the message and
        // descriptor of one `lnd_send`, and the descriptor's `len`.
        Tx::Lnet { msg, desc, len }
    }

    /// What connection choice sees of it.
    pub(crate) fn frame(&self) -> Frame {
        match self {
            Tx::Lnet { len, .. } => Frame::Lnet(*len as usize),
            Tx::Noop(_) => Frame::NonBlockingNoop,
        }
    }

    /// Bytes it puts on the wire.
    fn wire_len(&self) -> usize {
        match self {
            Tx::Lnet { len, .. } => (*len as usize).saturating_add(LNET_FRAME_LEN),
            Tx::Noop(_) => KSOCK_MSG_LEN,
        }
    }

    /// Its LNet message, handed back with a refusal (none for a NOOP).
    pub(crate) fn into_msg(self) -> Msg {
        match self {
            Tx::Lnet { msg, .. } => msg,
            Tx::Noop(_) => Msg::none(),
        }
    }

    /// Ends it unsent (a NOOP just goes).
    pub(crate) fn fail(self, err: i32, hstatus: Status) {
        if let Tx::Lnet { msg, .. } = self {
            msg.finalize(err, hstatus);
        }
    }
}

/// What LNet asked for a received header (its `lnd_recv` call).
///
/// # Invariants
///
/// `kiov` is null or points to the `niov` fragments LNet gave with `msg` in
/// `lnd_recv` (those of an MD the message holds), valid until `msg` is
/// finalized.
pub(crate) struct RxReq {
    pub(crate) msg: Msg,
    pub(crate) kiov: *mut BioVec,
    pub(crate) niov: u32,
    pub(crate) offset: u32,
    pub(crate) mlen: u32,
    pub(crate) rlen: u32,
}

// SAFETY: by the type invariant the fragments belong to an MD the message
// holds, and LNet's pages may be used from any thread until it is finalized.
unsafe impl Send for RxReq {}

/// Signs of life in each direction.
struct Progress {
    /// When the peer last sent us anything (ms).
    last_rx_ms: AtomicU64,
    /// The socket's acknowledged mark at the last check, and when it last
    /// moved or nothing was outstanding (ms): Lustre's tx deadline.
    last_acked: AtomicU32,
    tx_ms: AtomicU64,
}

impl Progress {
    fn new() -> Progress {
        let now = kthread::now_ms();
        Progress {
            last_rx_ms: AtomicU64::new(now),
            last_acked: AtomicU32::new(0),
            tx_ms: AtomicU64::new(now),
        }
    }
}

/// A connection, always in an `Arc`.
///
/// # Invariants
///
/// While either of its threads runs, the NI's table holds a reference to
/// it: it leaves the table only once its threads have parked (the reaper)
/// or been stopped (`SockNi::stop`). Its receive thread relies on this to
/// borrow the `Arc` from its own address.
#[pin_data]
pub(crate) struct Conn {
    /// The connection's threads; first, so they stop before the rest goes.
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
        let r = conn
            .spawn(c_str!("socknal_rx"), rx_main)
            .and_then(|()| conn.spawn(c_str!("socknal_tx"), tx_main));
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
        // SAFETY: the NI outlives its connections (see the type).
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

    /// Whether sending has stalled for `timeout_ms`
    /// (`ksocknal_find_timed_out_conn`): something is queued or
    /// unacknowledged, and the peer has acknowledged nothing since. A peer
    /// that stopped acknowledging (a silent link) is caught here even when
    /// no send blocks.
    pub(crate) fn tx_stalled(&self, now: u64, timeout_ms: u64) -> bool {
        let mark = self.sock.acked_mark();
        let moved = self.progress.last_acked.swap(mark, Ordering::Relaxed) != mark;
        let idle = self.sock.unacked() == 0 && self.queued() == 0;
        if moved || idle {
            self.progress.tx_ms.store(now, Ordering::Relaxed);
            return false;
        }
        now >= self
            .progress
            .tx_ms
            .load(Ordering::Relaxed)
            .saturating_add(timeout_ms)
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

    fn spawn(
        self: &Arc<Self>,
        name: &CStr,
        f: unsafe extern "C" fn(*mut c_void) -> c_int,
    ) -> Result {
        // The connection's address inside its `Arc`, as `Arc::into_raw`
        // gives it: the receive thread borrows the `Arc` from it.
        let data = (&**self as *const Conn).cast_mut().cast();
        // SAFETY: the thread is stopped (dropping `threads`) before the
        // connection is freed.
        let t = unsafe { Thread::spawn(name, f, data)? };
        self.started.fetch_add(1, Ordering::Relaxed);
        self.threads.lock().push(t, GFP_KERNEL)?;
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
            if !req.msg.is_none() {
                crate::cneterr!(
                    "{} fails the receive from {} with its connection\n",
                    self.sni().nid,
                    self.peer
                );
            }
            req.msg.finalize(EIO.to_errno(), Status::RemoteError);
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
            Some(req) => req.msg.finalize(EIO.to_errno(), Status::RemoteError),
            None => self.rx_wake.notify_all(),
        }
    }

    /// Stops both threads (after `close`): they see the connection dead,
    /// park and exit. The NI does this before letting go of a connection
    /// whose threads may still run, so that its table's reference outlives
    /// them (see `rx_main`).
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
        let Tx::Lnet { desc, .. } = tx else {
            return self.sock.send(b.get(..KSOCK_MSG_LEN).ok_or(EINVAL)?, false);
        };
        // SAFETY: LNet's descriptor, valid until the message is finalized
        // (the type invariant), which `tx` still holds.
        let desc = unsafe { &**desc };
        let hdr = desc.hdr.get(..HDR_NID4_LEN).ok_or(EINVAL)?;
        b.get_mut(KSOCK_MSG_LEN..)
            .ok_or(EINVAL)?
            .copy_from_slice(hdr);
        self.sock.send(&b, desc.len > 0)?;
        if desc.len > 0 {
            // SAFETY: the payload fragments belong to an MD the message
            // holds until it is finalized, after this.
            unsafe {
                let v = kiov::slice(desc.kiov.cast(), desc.niov);
                self.sock.send_kiov(v, desc.offset, desc.len)?;
            }
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
///
/// # Safety
///
/// Started by [`Conn::spawn`].
unsafe extern "C" fn tx_main(data: *mut c_void) -> c_int {
    // SAFETY: `data` is the address of the `Conn` Conn::spawn started this thread for (# Safety);
    // the thread is stopped (dropping `threads`) before the connection is freed.
    let conn = unsafe { &*data.cast_const().cast::<Conn>() };
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
            Tx::Lnet { len, .. } if crate::zc::wanted(conn, *len) => crate::zc::register(conn),
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
                if let Tx::Lnet { msg, .. } = tx {
                    match zc {
                        // Complete once the peer acknowledges it.
                        Some(cookie) => crate::zc::sent(conn, cookie, msg),
                        None => msg.finalize(0, Status::Ok),
                    }
                }
            }
            Err(e) => {
                if let Some(cookie) = zc {
                    crate::zc::unsent(conn, cookie);
                }
                tx.fail(e.to_errno(), socklnd::send_error_status(e.to_errno()));
                conn.close_with_siblings(e.to_errno());
            }
        }
    }
    conn.park();
    0
}

/// The receive thread: reads `ksock_msg` headers, hands LNet headers to
/// LNet and receives or discards the payload as LNet says.
///
/// # Safety
///
/// Started by [`Conn::spawn`].
unsafe extern "C" fn rx_main(data: *mut c_void) -> c_int {
    // The NI's table holds the connection's `Arc` until this thread has
    // stopped: the reaper takes only connections whose threads have
    // parked, and `SockNi::stop` stops them before dropping its reference.
    // SAFETY: `data` is `Arc::into_raw` of the connection (`Conn::spawn`), alive (above).
    let conn = unsafe { ArcBorrow::<Conn>::from_raw(data.cast_const().cast()) };
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
    0
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
    let Some(req) = req else {
        return Ok(());
    };
    // A zero-copy request: the sender holds its pages until we say we
    // have the whole message.
    let zc = m.zc_cookies[0];
    if req.msg.is_none() {
        conn.sock.discard(req.rlen)?;
        if zc != 0 {
            ack_zc(&conn, zc);
        }
        return Ok(());
    }
    // SAFETY: by the type invariant the fragments belong to the MD LNet
    // attached to the message, which `req` holds, not yet finalized.
    let r = unsafe {
        let v = kiov::slice(req.kiov, req.niov);
        conn.sock.recv_kiov(v, req.offset, req.mlen)
    }
    .and_then(|()| conn.sock.discard(req.rlen.saturating_sub(req.mlen)));
    conn.progress
        .last_rx_ms
        .store(kthread::now_ms(), Ordering::Relaxed);
    match r {
        Ok(()) => {
            req.msg.finalize(0, Status::Ok);
            if zc != 0 {
                ack_zc(&conn, zc);
            }
            Ok(())
        }
        Err(e) => {
            req.msg.finalize(EIO.to_errno(), Status::RemoteError);
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
