// SPDX-License-Identifier: GPL-2.0

//! A connection to a peer: a socket, a queue of messages to send, a send
//! thread and a receive thread.
//!
//! An active connection is created by the first send to a peer with none;
//! its send thread connects and shakes hands before sending. A passive one
//! comes from the acceptor. When either thread fails, the connection dies:
//! every queued message is finalized with the health status the failure
//! maps to (o2iblnd-events.md §4.1), both threads park, and the NI's reaper
//! frees it.

use crate::handshake::{self, Peer, SetupError};
use crate::kapi::bindings::lnet_tx_desc;
use crate::kapi::kiov::{self, BioVec};
use crate::kapi::kthread::{self, Thread};
use crate::kapi::sock::Socket;
use crate::kapi::{errno, vec};
use crate::lnd::Msg;
use crate::lnet_core::hdr::HDR_NID4_LEN;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::socklnd::{self, KsockMsg, MsgKind, ACCEPTOR_PORT, KSOCK_MSG_LEN};
use crate::ni::SockNi;
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar, Mutex, SpinLock};
use kernel::{c_str, new_condvar, new_mutex, new_spinlock};

/// `sock_timeout` in milliseconds: how long a connect, a handshake or a
/// stalled send may take before the peer counts as gone.
fn sock_timeout_ms() -> u32 {
    crate::params::timeout_secs().saturating_mul(1000)
}
/// Privileged source ports tried for active connections, high to low.
const RESERVED_PORTS: core::ops::RangeInclusive<u16> = 512..=1023;

const CONNECTING: u32 = 0;
const UP: u32 = 1;
const DEAD: u32 = 2;

/// A message waiting to be sent.
struct Tx {
    msg: Msg,
    desc: *const lnet_tx_desc,
}

// SAFETY: the descriptor lives in LNet's message until it is finalized.
unsafe impl Send for Tx {}

/// What LNet asked for a received header (its `lnd_recv` call).
pub(crate) struct RxReq {
    pub(crate) msg: Msg,
    pub(crate) kiov: *mut BioVec,
    pub(crate) niov: u32,
    pub(crate) offset: u32,
    pub(crate) mlen: u32,
    pub(crate) rlen: u32,
}

// SAFETY: the fragments belong to an MD the message holds.
unsafe impl Send for RxReq {}

#[pin_data]
pub(crate) struct Conn {
    /// The connection's threads; first, so they stop before the rest goes.
    #[pin]
    threads: Mutex<KVec<Thread>>,
    sni: *const SockNi,
    pub(crate) peer: Nid,
    sock: Socket,
    active: bool,
    state: AtomicU32,
    /// The peer writes `ksock_msg` headers in the other byte order.
    flip: AtomicBool,
    #[pin]
    txq: SpinLock<KVec<Tx>>,
    #[pin]
    tx_wake: CondVar,
    #[pin]
    rx: SpinLock<Option<RxReq>>,
    #[pin]
    rx_wake: CondVar,
    /// Threads that have finished and wait to be stopped.
    parked: AtomicU32,
    /// Threads started.
    started: AtomicU32,
}

// SAFETY: `sni` outlives every connection (the NI stops them first); the
// rest is synchronized.
unsafe impl Send for Conn {}
// SAFETY: as above.
unsafe impl Sync for Conn {}

fn new_conn(sni: &SockNi, peer: Nid, sock: Socket, active: bool, state: u32) -> Result<Arc<Conn>> {
    Arc::pin_init(
        pin_init!(Conn {
            threads <- new_mutex!(KVec::new(), "socklnd_conn_threads"),
            sni: sni as *const SockNi,
            peer,
            sock,
            active,
            state: AtomicU32::new(state),
            flip: AtomicBool::new(false),
            txq <- new_spinlock!(KVec::new(), "socklnd_txq"),
            tx_wake <- new_condvar!("socklnd_tx_wake"),
            rx <- new_spinlock!(None, "socklnd_rx"),
            rx_wake <- new_condvar!("socklnd_rx_wake"),
            parked: AtomicU32::new(0),
            started: AtomicU32::new(0),
        }),
        GFP_KERNEL,
    )
}

/// Queues a message LNet wants sent (`lnd_send`).
pub(crate) fn send(
    sni: &SockNi,
    msg: *mut crate::kapi::bindings::lnet_msg,
    tx: *const lnet_tx_desc,
) -> Result {
    if sni.is_stopping() {
        return Err(errno::ESHUTDOWN());
    }
    // SAFETY: LNet's descriptor, valid until the message is finalized.
    let desc = unsafe { &*tx };
    if desc.hdr_len as usize != HDR_NID4_LEN {
        // Hello V3 carries NID4 headers only.
        return Err(errno::EHOSTUNREACH());
    }
    let peer = crate::kapi::lnet_abi::nid_from_c(&desc.target.nid)?;
    let conn = match find(sni, &peer) {
        Some(c) => c,
        None => Conn::start_active(sni, peer)?,
    };
    conn.queue(Tx {
        msg: Msg(msg),
        desc: tx,
    })
}

fn find(sni: &SockNi, peer: &Nid) -> Option<Arc<Conn>> {
    let conns = sni.conns.lock();
    // Prefer a connection that is up to one still connecting.
    let live = |c: &&Arc<Conn>| c.peer == *peer && c.state.load(Ordering::Acquire) != DEAD;
    conns
        .iter()
        .filter(live)
        .find(|c| c.state.load(Ordering::Acquire) == UP)
        .or_else(|| conns.iter().find(live))
        .cloned()
}

impl Conn {
    fn sni(&self) -> &SockNi {
        // SAFETY: the NI outlives its connections (see the type).
        unsafe { &*self.sni }
    }

    fn queue(&self, tx: Tx) -> Result {
        let mut q = self.txq.lock();
        if self.state.load(Ordering::Acquire) == DEAD {
            return Err(errno::ECONNRESET());
        }
        q.push(tx, GFP_ATOMIC)?;
        drop(q);
        self.tx_wake.notify_all();
        Ok(())
    }

    /// A connection to `peer` whose send thread connects first.
    fn start_active(sni: &SockNi, peer: Nid) -> Result<Arc<Conn>> {
        if peer.addr4().is_none() {
            return Err(errno::EHOSTUNREACH());
        }
        let conn = new_conn(sni, peer, Socket::tcp()?, true, CONNECTING)?;
        {
            let mut conns = sni.conns.lock();
            // Another sender may have beaten us to it.
            if let Some(c) = conns
                .iter()
                .find(|c| c.peer == peer && c.state.load(Ordering::Acquire) != DEAD)
            {
                return Ok(c.clone());
            }
            conns.push(conn.clone(), GFP_ATOMIC)?;
        }
        if let Err(e) = conn.spawn(c_str!("socknal_tx"), tx_main) {
            conn.close(e.to_errno());
            return Err(e);
        }
        Ok(conn)
    }

    /// A connection the acceptor set up.
    pub(crate) fn start_passive(sni: &SockNi, sock: Socket, peer: Peer) -> Result {
        sock.set_timeouts(0, sock_timeout_ms());
        sock.tune(&crate::params::sock_opts());
        let conn = new_conn(sni, peer.nid, sock, false, UP)?;
        conn.flip.store(peer.flip, Ordering::Relaxed);
        sni.conns.lock().push(conn.clone(), GFP_ATOMIC)?;
        let r = conn
            .spawn(c_str!("socknal_rx"), rx_main)
            .and_then(|()| conn.spawn(c_str!("socknal_tx"), tx_main));
        if let Err(e) = r {
            conn.close(e.to_errno());
            return Err(e);
        }
        pr_info!("{} accepted connection from {}\n", sni.nid, peer.nid);
        Ok(())
    }

    fn spawn(
        self: &Arc<Self>,
        name: &CStr,
        f: unsafe extern "C" fn(*mut c_void) -> c_int,
    ) -> Result {
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
        self.state.load(Ordering::Acquire) == DEAD
            && self.parked.load(Ordering::Acquire) == self.started.load(Ordering::Acquire)
    }

    /// Kills the connection with `-err`: the socket is shut (blocked
    /// threads return) and every queued message is finalized with the
    /// status the error maps to.
    pub(crate) fn close(&self, err: i32) {
        let was = self.state.swap(DEAD, Ordering::AcqRel);
        if was != DEAD {
            self.sock.shutdown();
            if was == UP {
                pr_info!(
                    "{} closed connection to {}: {}\n",
                    self.sni().nid,
                    self.peer,
                    err
                );
            }
        }
        let hstatus = socklnd::txlist_status(err);
        loop {
            let tx = vec::pop(&mut self.txq.lock());
            let Some(tx) = tx else {
                break;
            };
            tx.msg.finalize(err, hstatus);
        }
        self.tx_wake.notify_all();
        self.rx_wake.notify_all();
        // A header LNet parsed but whose payload will never come.
        if let Some(req) = self.rx.lock().take() {
            req.msg.finalize(EIO.to_errno(), Status::RemoteError);
        }
    }

    /// LNet's answer for the header the receive thread passed it.
    ///
    /// # Safety
    ///
    /// `conn` is the connection whose receive thread called `lnet_parse`.
    pub(crate) unsafe fn post_rx(conn: *const Conn, req: RxReq) {
        // SAFETY: by this function's contract; the thread waits for this.
        let conn = unsafe { &*conn };
        *conn.rx.lock() = Some(req);
        conn.rx_wake.notify_all();
    }

    fn dead(&self) -> bool {
        self.state.load(Ordering::Acquire) == DEAD
    }

    /// Waits, in the thread that finished, to be stopped by the reaper.
    fn park(&self) {
        self.parked.fetch_add(1, Ordering::AcqRel);
        while !kthread::should_stop() {
            kthread::sleep_ms(200);
        }
    }

    fn connect(&self) -> core::result::Result<Peer, SetupError> {
        let sni = self.sni();
        let addr = self
            .peer
            .addr4()
            .ok_or(SetupError::Refused("no IPv4 address"))?;
        self.sock.tune(&crate::params::sock_opts());
        // From this NI's address, so each NI is its own rail, and from a
        // privileged port, which Lustre's acceptor requires by default.
        let mut bound = Err(errno::EADDRINUSE());
        for port in RESERVED_PORTS.rev() {
            bound = self.sock.bind(sni.addr, port);
            if !matches!(&bound, Err(e) if *e == errno::EADDRINUSE()) {
                break;
            }
        }
        bound?;
        self.sock.set_timeouts(sock_timeout_ms(), sock_timeout_ms());
        self.sock.connect(addr, ACCEPTOR_PORT)?;
        let peer = handshake::active(sni, &self.sock, self.peer)?;
        self.sock.set_timeouts(0, sock_timeout_ms());
        Ok(peer)
    }

    /// Sends one message: `ksock_msg`, the LNet header, the payload.
    fn transmit(&self, desc: &lnet_tx_desc) -> Result {
        let mut b = [0u8; KSOCK_MSG_LEN + HDR_NID4_LEN];
        let m = KsockMsg {
            kind: MsgKind::Lnet,
            csum: 0,
            zc_cookies: [0, 0],
        };
        m.encode(&mut b).ok_or(EINVAL)?;
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

/// The send thread: connects (active side), then sends what is queued.
///
/// # Safety
///
/// Started by [`Conn::spawn`].
unsafe extern "C" fn tx_main(data: *mut c_void) -> c_int {
    // SAFETY: by this function's contract.
    let conn = unsafe { &*data.cast_const().cast::<Conn>() };
    if conn.active {
        match conn.connect() {
            Ok(peer) => {
                conn.flip.store(peer.flip, Ordering::Relaxed);
                conn.state.store(UP, Ordering::Release);
                pr_info!("{} connected to {}\n", conn.sni().nid, conn.peer);
                let arc = conn_arc(conn);
                if let Some(Err(e)) = arc.map(|a| a.spawn(c_str!("socknal_rx"), rx_main)) {
                    conn.close(e.to_errno());
                }
            }
            Err(e) => {
                let err = match &e {
                    SetupError::Io(e) => e.to_errno(),
                    _ => errno::ECONNREFUSED().to_errno(),
                };
                if matches!(e, SetupError::Proto(_)) {
                    conn.sni().protocol_errors.fetch_add(1, Ordering::Relaxed);
                }
                pr_warn!("can't connect {} to {}: {}\n", conn.sni().nid, conn.peer, e);
                conn.close(err);
            }
        }
    }
    while !conn.dead() && !kthread::should_stop() {
        let next = {
            let mut q = conn.txq.lock();
            while q.is_empty() && !conn.dead() && !kthread::should_stop() {
                let _ = conn.tx_wake.wait_interruptible_timeout(&mut q, 100);
            }
            vec::remove(&mut q, 0)
        };
        let Some(tx) = next else {
            continue;
        };
        // SAFETY: LNet's descriptor, valid until the message is finalized.
        let desc = unsafe { &*tx.desc };
        match conn.transmit(desc) {
            Ok(()) => tx.msg.finalize(0, Status::Ok),
            Err(e) => {
                let err = if e == EAGAIN { errno::ETIMEDOUT() } else { e };
                tx.msg
                    .finalize(err.to_errno(), socklnd::send_error_status(err.to_errno()));
                conn.close(err.to_errno());
            }
        }
    }
    conn.park();
    0
}

/// The connection's `Arc`, from the NI's list.
fn conn_arc(conn: &Conn) -> Option<Arc<Conn>> {
    let conns = conn.sni().conns.lock();
    conns
        .iter()
        .find(|c| core::ptr::eq::<Conn>(&***c, conn))
        .cloned()
}

/// The receive thread: reads `ksock_msg` headers, hands LNet headers to
/// LNet and receives or discards the payload as LNet says.
///
/// # Safety
///
/// Started by [`Conn::spawn`].
unsafe extern "C" fn rx_main(data: *mut c_void) -> c_int {
    // SAFETY: by this function's contract.
    let conn = unsafe { &*data.cast_const().cast::<Conn>() };
    let private = data;
    while !conn.dead() && !kthread::should_stop() {
        if let Err(e) = rx_one(conn, private) {
            match e {
                RxError::Io(e) => conn.close(e.to_errno()),
                RxError::Proto(why) => {
                    conn.sni().protocol_errors.fetch_add(1, Ordering::Relaxed);
                    pr_warn!(
                        "protocol error from {} on {}: {}\n",
                        conn.peer,
                        conn.sni().nid,
                        why
                    );
                    conn.close(errno::EPROTO().to_errno());
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

fn rx_one(conn: &Conn, private: *mut c_void) -> core::result::Result<(), RxError> {
    let mut b = [0u8; KSOCK_MSG_LEN + HDR_NID4_LEN];
    let (head, rest) = b.split_at_mut(KSOCK_MSG_LEN);
    conn.sock.recv(head)?;
    let m = KsockMsg::decode(head, conn.flip.load(Ordering::Relaxed))
        .map_err(|_| RxError::Proto("bad ksock_msg header"))?;
    if m.kind == MsgKind::Noop {
        return Ok(());
    }
    conn.sock.recv(rest)?;
    let rc = conn.sni().ni.parse(rest, &conn.peer, private);
    if rc < 0 {
        return Err(RxError::Proto("LNet refused the header"));
    }
    // LNet answers with lnd_recv, usually before lnet_parse returns; on a
    // lazy portal only once an MD is posted.
    let req = {
        let mut rx = conn.rx.lock();
        while rx.is_none() && !conn.dead() && !kthread::should_stop() {
            let _ = conn.rx_wake.wait_interruptible_timeout(&mut rx, 100);
        }
        rx.take()
    };
    let Some(req) = req else {
        return Ok(());
    };
    if req.msg.0.is_null() {
        conn.sock.discard(req.rlen)?;
        return Ok(());
    }
    // SAFETY: the fragments belong to the MD LNet attached to the message.
    let r = unsafe {
        let v = kiov::slice(req.kiov, req.niov);
        conn.sock.recv_kiov(v, req.offset, req.mlen)
    }
    .and_then(|()| conn.sock.discard(req.rlen.saturating_sub(req.mlen)));
    match r {
        Ok(()) => {
            req.msg.finalize(0, Status::Ok);
            Ok(())
        }
        Err(e) => {
            req.msg.finalize(EIO.to_errno(), Status::RemoteError);
            Err(RxError::Io(e))
        }
    }
}
