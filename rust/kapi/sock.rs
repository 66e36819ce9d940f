// SPDX-License-Identifier: GPL-2.0

//! Kernel TCP sockets over IPv4: create, bind, listen, accept, connect,
//! and whole-buffer sends and receives to and from plain buffers and page
//! fragments, which block (the caller is a kernel thread); and, for a
//! scheduler serving many sockets, non-blocking sends and receives of what
//! the socket takes or holds at once, with the socket's readiness
//! callbacks delivered to a [`SockEvents`] ([`Socket::watch`]).

use super::kiov::{BioVec, Kiov, KiovMut};
use core::ffi::{c_uint, c_void};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

// The helpers take `struct socket *` as an untyped pointer: bindgen's
// `socket` contains types the FFI lint rejects.
type RawSock = *mut kernel::ffi::c_void;

extern "C" {
    fn kapi_sock_create_tcp(res: *mut RawSock) -> i32;
    fn kapi_sock_set_timeouts(sock: RawSock, rcv_ms: u32, snd_ms: u32);
    fn kapi_sock_tune(sock: RawSock, opts: *const SockOpts);
    fn kapi_sock_bind4(sock: RawSock, addr: u32, port: u16) -> i32;
    fn kapi_sock_connect4(sock: RawSock, addr: u32, port: u16) -> i32;
    fn kapi_sock_wmem_queued(sock: RawSock) -> i32;
    fn kapi_sock_snd_una(sock: RawSock) -> u32;
    fn kapi_sock_tcp_timing(sock: RawSock, rto_retransmits: *mut u32, srtt_us: *mut u32);
    fn kapi_sock_zc_capable(sock: RawSock) -> i32;
    fn kapi_sock_bufs(sock: RawSock, txmem: *mut i32, rxmem: *mut i32, nagle: *mut i32);
    fn kapi_sock_peer4(sock: RawSock, addr: *mut u32, port: *mut u16) -> i32;
    fn kapi_sock_watch(sock: RawSock, w: *mut Watch) -> i32;
    fn kapi_sock_unwatch(sock: RawSock, w: *mut Watch);
}

/// What a watched socket reports (`KAPI_SOCK_*` in kapi_helpers.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SockEvent {
    /// Data (or the peer's close) has arrived.
    Readable,
    /// Send buffer space has freed up after a send found none.
    Writable,
    /// The connection's state changed (closed, reset).
    State,
}

/// What receives a watched socket's events.
pub trait SockEvents: Send + Sync + 'static {
    /// Called from the socket's callbacks: in softirq context, or in
    /// process context with the socket's lock held. It must not sleep,
    /// take a lock also taken outside such context without blocking
    /// softirqs, nor call into the socket; it should note the event and
    /// wake whoever serves the socket. `this` lives as long as the watch.
    fn sock_event(this: ArcBorrow<'_, Self>, ev: SockEvent);
}

/// `struct kapi_sock_watch`: what the socket's user data points to while
/// watched. C reads `event` and `data` in the callbacks and keeps the
/// socket's own callbacks in `saved`.
#[repr(C)]
struct Watch {
    event: unsafe extern "C" fn(data: *const c_void, what: c_uint),
    data: *const c_void,
    saved: [*mut c_void; 3],
}

/// A [`Watch`] with what releases its data (kept apart from the C part).
#[repr(C)]
struct Watched {
    c: Watch,
    release: unsafe fn(*const c_void),
}

/// The C callbacks' entry for a watch of `T`.
///
/// # Safety
///
/// `data` is the `Arc<T>::into_raw` of a live watch: C calls this under
/// the socket's callback lock, which `unwatch` takes before releasing it.
unsafe extern "C" fn watch_event<T: SockEvents>(data: *const c_void, what: c_uint) {
    let ev = match what {
        1 => SockEvent::Readable,
        2 => SockEvent::Writable,
        _ => SockEvent::State,
    };
    // SAFETY: the reference the watch holds (# Safety), alive until
    // `unwatch` has released it, which it does only after no callback
    // can be running with it.
    let this = unsafe { ArcBorrow::from_raw(data.cast::<T>()) };
    T::sock_event(this, ev);
}

/// Releases the reference a watch of `T` holds.
///
/// # Safety
///
/// `data` is the `Arc<T>::into_raw` the watch was made with, no longer
/// reachable from the socket's callbacks, released once.
unsafe fn watch_release<T: SockEvents>(data: *const c_void) {
    // SAFETY: from `Arc::into_raw` in `watch`, released once (# Safety).
    drop(unsafe { Arc::<T>::from_raw(data.cast::<T>()) });
}

const SHUT_RDWR: u32 = 2;

/// Socket options (`struct kapi_sock_opts`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct SockOpts {
    /// TCP keepalive: idle seconds, probe interval, probes; all three > 0
    /// turn it on.
    pub keepalive_idle: i32,
    /// Seconds between probes.
    pub keepalive_intvl: i32,
    /// Unanswered probes before the connection is reset.
    pub keepalive_count: i32,
    /// Non-zero leaves Nagle's algorithm on.
    pub nagle: i32,
    /// Send buffer bytes (> 0), as SO_SNDBUF.
    pub tx_buffer_size: i32,
    /// Receive buffer bytes (> 0), as SO_RCVBUF.
    pub rx_buffer_size: i32,
    /// IP type of service (>= 0).
    pub tos: i32,
}

/// An owned kernel socket.
///
/// # Invariants
///
/// `watch` is null or a `KBox<Watched>` (from `into_raw`) that the socket's
/// user data points to and whose callbacks are installed; its `data` is an
/// `Arc::into_raw` reference of the type its functions were made for.
pub struct Socket {
    sock: *mut bindings::socket,
    watch: AtomicPtr<Watched>,
}

// SAFETY: the kernel serializes socket operations with the socket lock; one
// thread may send while another receives and a third shuts it down. A watch's
// data is an `Arc` of a `Send + Sync` type (`SockEvents`), which any thread
// may release.
unsafe impl Send for Socket {}
// SAFETY: the `&self` methods are socket calls the kernel serializes with the
// socket lock: one thread may send while another receives and a third shuts the
// socket down; the watch slot is an atomic, installed and removed under the
// socket's callback lock.
unsafe impl Sync for Socket {}

/// The error of a failed socket call. A wait that ran into the socket's
/// timeout (`-EAGAIN` from a blocking call) is `ETIMEDOUT`.
fn error(rc: i32) -> Error {
    if rc == EAGAIN.to_errno() {
        super::errno::ETIMEDOUT()
    } else {
        Error::from_errno(rc)
    }
}

fn check(rc: i32) -> Result {
    if rc < 0 {
        Err(error(rc))
    } else {
        Ok(())
    }
}

impl Socket {
    /// A new TCP socket in the initial network namespace.
    pub fn tcp() -> Result<Socket> {
        let mut sock: RawSock = core::ptr::null_mut();
        // SAFETY: `sock` receives the new socket.
        check(unsafe { kapi_sock_create_tcp(&mut sock) })?;
        // INVARIANT: not watched.
        Ok(Socket {
            sock: sock.cast(),
            watch: AtomicPtr::new(core::ptr::null_mut()),
        })
    }

    /// Address reuse and the given options.
    pub fn tune(&self, opts: &SockOpts) {
        // SAFETY: a live socket and a live options struct.
        unsafe { kapi_sock_tune(self.sock.cast(), opts) }
    }

    /// Receive and send timeouts in milliseconds; 0 waits forever.
    pub fn set_timeouts(&self, rcv_ms: u32, snd_ms: u32) {
        // SAFETY: a live socket.
        unsafe { kapi_sock_set_timeouts(self.sock.cast(), rcv_ms, snd_ms) }
    }

    /// Binds to an IPv4 address and port (host order).
    pub fn bind(&self, addr: u32, port: u16) -> Result {
        // SAFETY: a live socket.
        check(unsafe { kapi_sock_bind4(self.sock.cast(), addr, port) })
    }

    /// Starts listening with room for `backlog` pending connections.
    pub fn listen(&self, backlog: i32) -> Result {
        // SAFETY: a live socket.
        check(unsafe { bindings::kernel_listen(self.sock, backlog) })
    }

    /// Waits for a connection (or for `shutdown`).
    pub fn accept(&self) -> Result<Socket> {
        let mut new = core::ptr::null_mut();
        // SAFETY: a live listening socket; `new` receives the connection.
        check(unsafe { bindings::kernel_accept(self.sock, &mut new, 0) })?;
        // INVARIANT: not watched.
        Ok(Socket {
            sock: new,
            watch: AtomicPtr::new(core::ptr::null_mut()),
        })
    }

    /// Connects to an IPv4 address and port (host order); the send
    /// timeout bounds the wait.
    pub fn connect(&self, addr: u32, port: u16) -> Result {
        // SAFETY: a live socket.
        check(unsafe { kapi_sock_connect4(self.sock.cast(), addr, port) })
    }

    /// The peer's IPv4 address and port (host order).
    pub fn peer(&self) -> Result<(u32, u16)> {
        let (mut a, mut p) = (0u32, 0u16);
        // SAFETY: a live socket and two out-parameters.
        check(unsafe { kapi_sock_peer4(self.sock.cast(), &mut a, &mut p) })?;
        Ok((a, p))
    }

    /// Bytes sent into the socket that the peer has not acknowledged yet;
    /// a lock-free snapshot.
    pub fn unacked(&self) -> usize {
        // SAFETY: a live socket; the helper only reads one field.
        let n = unsafe { kapi_sock_wmem_queued(self.sock.cast()) };
        usize::try_from(n).unwrap_or(0)
    }

    /// The sequence number of the oldest unacknowledged byte: it moves
    /// whenever the peer acknowledges data. A lock-free snapshot.
    pub fn acked_mark(&self) -> u32 {
        // SAFETY: a live TCP socket; the helper only reads one field.
        unsafe { kapi_sock_snd_una(self.sock.cast()) }
    }

    /// Retransmission timeouts in a row since the peer last acknowledged
    /// anything, and the smoothed RTT (µs, 0 before a sample). A
    /// lock-free snapshot.
    pub fn tcp_timing(&self) -> (u32, u32) {
        let (mut retransmits, mut srtt_us) = (0, 0);
        // SAFETY: a live TCP socket; the helper reads two fields and writes
        // the two integers it is given.
        unsafe { kapi_sock_tcp_timing(self.sock.cast(), &mut retransmits, &mut srtt_us) };
        (retransmits, srtt_us)
    }

    /// Whether the route has scatter-gather and checksum offload, Lustre's
    /// condition for zero-copy requests.
    pub fn zc_capable(&self) -> bool {
        // SAFETY: a live socket; the helper only reads one field.
        unsafe { kapi_sock_zc_capable(self.sock.cast()) != 0 }
    }

    /// The send and receive buffer sizes in bytes, and whether Nagle's
    /// algorithm is on. A lock-free snapshot.
    pub fn buffers(&self) -> (i32, i32, bool) {
        let (mut tx, mut rx, mut nagle) = (0, 0, 0);
        // SAFETY: a live socket; the helper reads three fields and writes
        // the three integers it is given.
        unsafe { kapi_sock_bufs(self.sock.cast(), &mut tx, &mut rx, &mut nagle) };
        (tx, rx, nagle != 0)
    }

    /// Ends both directions: blocked senders and receivers return.
    pub fn shutdown(&self) {
        // SAFETY: a live socket.
        unsafe { bindings::kernel_sock_shutdown(self.sock, SHUT_RDWR) };
    }

    /// Sends all of `buf`; `more` says more bytes follow at once.
    pub fn send(&self, buf: &[u8], more: bool) -> Result {
        let mut done = 0;
        while let Some(rest) = buf.get(done..).filter(|r| !r.is_empty()) {
            let mut iov = bindings::kvec {
                iov_base: rest.as_ptr().cast_mut().cast(),
                iov_len: rest.len(),
            };
            let mut msg = bindings::msghdr {
                msg_flags: bindings::MSG_NOSIGNAL | if more { bindings::MSG_MORE } else { 0 },
                ..Default::default()
            };
            // SAFETY: `iov` describes `rest`, valid for the call.
            let n =
                unsafe { bindings::kernel_sendmsg(self.sock, &mut msg, &mut iov, 1, rest.len()) };
            done += Self::progress(n)?;
        }
        Ok(())
    }

    /// Sends `len` bytes of the fragments `kiov` from byte `offset`.
    ///
    /// # Safety
    ///
    /// The fragments name valid pages and stay valid during the call.
    pub unsafe fn send_kiov(&self, kiov: &[BioVec], offset: u32, len: u32) -> Result {
        // SAFETY: the fragments name valid pages that stay valid during the call (# Safety); a send
        // only reads them, which is all kiov_io asks of ITER_SOURCE.
        unsafe { self.kiov_io(bindings::ITER_SOURCE, kiov, offset, len) }
    }

    /// Sends `len` bytes of the lent fragments `kiov` from byte `offset`.
    pub fn send_frags(&self, kiov: Kiov<'_>, offset: u32, len: u32) -> Result {
        // SAFETY: a `Kiov` names valid pages that stay valid while it is
        // borrowed (its invariant), so during this call; a send only reads.
        unsafe { self.kiov_io(bindings::ITER_SOURCE, kiov.frags(), offset, len) }
    }

    /// Receives `len` bytes into the lent fragments `kiov` from byte
    /// `offset`.
    pub fn recv_frags(&self, kiov: KiovMut<'_>, offset: u32, len: u32) -> Result {
        // SAFETY: a `KiovMut` names valid pages that nothing else reads or
        // writes while it is borrowed (its invariant), so during this call.
        unsafe { self.kiov_io(bindings::ITER_DEST, kiov.frags(), offset, len) }
    }

    /// Moves `len` bytes between the socket and `kiov` from byte `offset`:
    /// sends with `ITER_SOURCE`, receives with `ITER_DEST`.
    ///
    /// # Safety
    ///
    /// The fragments name valid pages that stay valid during the call and,
    /// when receiving, that nothing else writes meanwhile.
    unsafe fn kiov_io(&self, dir: u32, kiov: &[BioVec], offset: u32, len: u32) -> Result {
        let send = dir == bindings::ITER_SOURCE;
        let mut left = len as usize;
        let mut msg = bindings::msghdr {
            msg_flags: if send { bindings::MSG_NOSIGNAL } else { 0 },
            ..Default::default()
        };
        let total = (offset as usize).saturating_add(left);
        // The socket walks the fragments for `total` bytes whatever their
        // number: a range beyond them would run off the array.
        let room: usize = kiov.iter().map(|v| v.bv_len as usize).sum();
        if total > room {
            return Err(EINVAL);
        }
        // SAFETY: `kiov` names valid pages for the whole call (# Safety) and the iterator gets its
        // `kiov.len()` entries, which hold the `total` bytes it may move (checked above).
        unsafe {
            bindings::iov_iter_bvec(
                &mut msg.msg_iter,
                dir,
                kiov.as_ptr(),
                kiov.len() as _,
                total,
            );
            bindings::iov_iter_advance(&mut msg.msg_iter, offset as usize);
        }
        while left > 0 {
            // SAFETY: `msg` iterates over the caller's pages.
            let n = unsafe {
                if send {
                    bindings::sock_sendmsg(self.sock, &mut msg)
                } else {
                    bindings::sock_recvmsg(self.sock, &mut msg, bindings::MSG_WAITALL as i32)
                }
            };
            left = left.saturating_sub(Self::progress(n)?);
            // A stream that never runs dry never sleeps in the socket.
            super::kthread::cond_resched();
        }
        Ok(())
    }

    /// One `recvmsg` waiting for all of `buf`: bytes received, or a
    /// negative errno.
    fn recv_once(&self, buf: &mut [u8]) -> i32 {
        let len = buf.len();
        let mut iov = bindings::kvec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        let mut msg = bindings::msghdr::default();
        // SAFETY: `iov` describes `buf`, valid for the call.
        unsafe {
            bindings::kernel_recvmsg(
                self.sock,
                &mut msg,
                &mut iov,
                1,
                len,
                bindings::MSG_WAITALL as i32,
            )
        }
    }

    /// Fills all of `buf`.
    pub fn recv(&self, buf: &mut [u8]) -> Result {
        let mut done = 0;
        while let Some(rest) = buf.get_mut(done..).filter(|r| !r.is_empty()) {
            done += Self::progress(self.recv_once(rest))?;
        }
        Ok(())
    }

    /// Fills all of `buf` like [`Socket::recv`], except that a receive
    /// timeout before the first byte is not an error: it returns false,
    /// nothing read. Only the rest of `buf` is bound by the timeout.
    pub fn recv_start(&self, buf: &mut [u8]) -> Result<bool> {
        let n = self.recv_once(buf);
        if n == EAGAIN.to_errno() {
            return Ok(false);
        }
        let done = Self::progress(n)?;
        self.recv(buf.get_mut(done..).unwrap_or(&mut []))?;
        Ok(true)
    }

    /// Receives `len` bytes into the fragments `kiov` from byte `offset`.
    ///
    /// # Safety
    ///
    /// The fragments name valid pages that nothing else writes meanwhile.
    pub unsafe fn recv_kiov(&self, kiov: &[BioVec], offset: u32, len: u32) -> Result {
        // SAFETY: the fragments name valid pages that nothing else writes
        // meanwhile (# Safety), what kiov_io asks of a receive (ITER_DEST).
        unsafe { self.kiov_io(bindings::ITER_DEST, kiov, offset, len) }
    }

    /// Reads and drops `len` bytes.
    pub fn discard(&self, mut len: u32) -> Result {
        let mut scratch = [0u8; 256];
        while len > 0 {
            let n = (len as usize).min(scratch.len());
            self.recv(scratch.get_mut(..n).unwrap_or(&mut []))?;
            len -= n as u32;
        }
        Ok(())
    }

    /// Sends the socket's readiness callbacks (data arrived, send space
    /// freed, state changed) to `T::sock_event` with `data`, which the
    /// socket holds until [`Socket::unwatch`] or its drop. `EBUSY` if it is
    /// watched already. The socket's own waiters are no longer woken by
    /// those events: a blocking call on a watched socket ends only with its
    /// timeout; use the non-blocking calls.
    pub fn watch<T: SockEvents>(&self, data: Arc<T>) -> Result {
        let data = Arc::into_raw(data).cast::<c_void>();
        let w = KBox::new(
            Watched {
                c: Watch {
                    event: watch_event::<T>,
                    data,
                    saved: [core::ptr::null_mut(); 3],
                },
                release: watch_release::<T>,
            },
            GFP_KERNEL,
        );
        let w = match w {
            Ok(w) => KBox::into_raw(w),
            Err(e) => {
                // SAFETY: made by `into_raw` above and never handed out.
                unsafe { watch_release::<T>(data) };
                return Err(e.into());
            }
        };
        // SAFETY: a live socket and a watch that stays allocated until it
        // is unwatched (`Watched` starts with the C struct); C installs it
        // only if no other user data is set.
        let rc = unsafe { kapi_sock_watch(self.sock.cast(), w.cast()) };
        if rc < 0 {
            // SAFETY: refused, so C never saw it: ours, from `into_raw`.
            let w = unsafe { KBox::from_raw(w) };
            // SAFETY: the reference made above, never reachable from C.
            unsafe { (w.release)(w.c.data) };
            return Err(Error::from_errno(rc));
        }
        // INVARIANT: installed just above, with `data` of `T`. Only the
        // user data's one watch is installed at a time (C refused any
        // other), so the slot was null.
        self.watch.store(w, Ordering::Release);
        Ok(())
    }

    /// Ends the watch, if any: once this returns no callback runs with it,
    /// and its data's reference is released. The socket's own callbacks
    /// are back.
    pub fn unwatch(&self) {
        let w = self.watch.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if w.is_null() {
            return;
        }
        // SAFETY: a live socket and the watch installed on it (#
        // Invariants); C restores the callbacks under the callback lock,
        // so none runs with `w` after it returns.
        unsafe { kapi_sock_unwatch(self.sock.cast(), w.cast()) };
        // SAFETY: from `KBox::into_raw` in `watch` (# Invariants), taken
        // out of the slot once (the swap above) and no longer reachable
        // from the callbacks.
        let w = unsafe { KBox::from_raw(w) };
        // SAFETY: the watch's data reference, made for `release`'s type in
        // `watch`, now unreachable from C, released once here.
        unsafe { (w.release)(w.c.data) };
    }

    /// Sends what the socket takes of `buf` now, without waiting: the
    /// bytes sent, 0 if there is no room; `more` says more bytes follow.
    pub fn send_some(&self, buf: &[u8], more: bool) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut iov = bindings::kvec {
            iov_base: buf.as_ptr().cast_mut().cast(),
            iov_len: buf.len(),
        };
        let mut msg = bindings::msghdr {
            msg_flags: bindings::MSG_NOSIGNAL
                | bindings::MSG_DONTWAIT
                | if more { bindings::MSG_MORE } else { 0 },
            ..Default::default()
        };
        // SAFETY: `iov` describes `buf`, valid for the call; a send only
        // reads it.
        let n = unsafe { bindings::kernel_sendmsg(self.sock, &mut msg, &mut iov, 1, buf.len()) };
        Self::some(n)
    }

    /// Receives what the socket holds, up to all of `buf`, without
    /// waiting: the bytes received, 0 if none has come; `EPIPE` once the
    /// peer has closed.
    pub fn recv_some(&self, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let len = buf.len();
        let mut iov = bindings::kvec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        let mut msg = bindings::msghdr::default();
        // SAFETY: `iov` describes `buf`, borrowed mutably for the call.
        let n = unsafe {
            bindings::kernel_recvmsg(
                self.sock,
                &mut msg,
                &mut iov,
                1,
                len,
                bindings::MSG_DONTWAIT as i32,
            )
        };
        Self::some(n)
    }

    /// Drops up to `len` received bytes without waiting: how many, 0 if
    /// none has come.
    pub fn discard_some(&self, len: u32) -> Result<usize> {
        let mut scratch = [0u8; 256];
        let n = (len as usize).min(scratch.len());
        self.recv_some(scratch.get_mut(..n).unwrap_or(&mut []))
    }

    /// Sends what the socket takes now of `len` bytes of the lent
    /// fragments `kiov` from byte `offset`: the bytes sent, 0 if no room.
    pub fn send_frags_some(&self, kiov: Kiov<'_>, offset: u32, len: u32) -> Result<usize> {
        // SAFETY: a `Kiov` names valid pages that stay valid while it is
        // borrowed (its invariant), so during this call; a send only reads.
        unsafe { self.kiov_once(bindings::ITER_SOURCE, kiov.frags(), offset, len) }
    }

    /// Receives what the socket holds, up to `len` bytes, into the lent
    /// fragments `kiov` from byte `offset`: the bytes received, 0 if none
    /// has come; `EPIPE` once the peer has closed.
    pub fn recv_frags_some(&self, kiov: KiovMut<'_>, offset: u32, len: u32) -> Result<usize> {
        // SAFETY: a `KiovMut` names valid pages that nothing else reads or
        // writes while it is borrowed (its invariant), so during this call.
        unsafe { self.kiov_once(bindings::ITER_DEST, kiov.frags(), offset, len) }
    }

    /// One non-blocking `sendmsg` (`ITER_SOURCE`) or `recvmsg`
    /// (`ITER_DEST`) of up to `len` bytes of `kiov` from byte `offset`.
    ///
    /// # Safety
    ///
    /// As [`Socket::kiov_io`].
    unsafe fn kiov_once(&self, dir: u32, kiov: &[BioVec], offset: u32, len: u32) -> Result<usize> {
        if len == 0 {
            return Ok(0);
        }
        let send = dir == bindings::ITER_SOURCE;
        let mut msg = bindings::msghdr {
            msg_flags: bindings::MSG_DONTWAIT | if send { bindings::MSG_NOSIGNAL } else { 0 },
            ..Default::default()
        };
        let total = (offset as usize).saturating_add(len as usize);
        // As in `kiov_io`: the iterator must stay within the fragments.
        let room: usize = kiov.iter().map(|v| v.bv_len as usize).sum();
        if total > room {
            return Err(EINVAL);
        }
        // SAFETY: `kiov` names valid pages for the whole call (# Safety) and
        // the iterator gets its `kiov.len()` entries, which hold the `total`
        // bytes it may move (checked above).
        let n = unsafe {
            bindings::iov_iter_bvec(
                &mut msg.msg_iter,
                dir,
                kiov.as_ptr(),
                kiov.len() as _,
                total,
            );
            bindings::iov_iter_advance(&mut msg.msg_iter, offset as usize);
            if send {
                bindings::sock_sendmsg(self.sock, &mut msg)
            } else {
                bindings::sock_recvmsg(self.sock, &mut msg, bindings::MSG_DONTWAIT as i32)
            }
        };
        Self::some(n)
    }

    /// What one non-blocking call moved: 0 when it would have waited;
    /// `EPIPE` when the peer closed.
    fn some(n: i32) -> Result<usize> {
        if n == EAGAIN.to_errno() {
            return Ok(0);
        }
        Self::progress(n)
    }

    /// Bytes moved by one call, or why none: 0 means the peer closed.
    fn progress(n: i32) -> Result<usize> {
        match n {
            0 => Err(kernel::error::code::EPIPE),
            n if n < 0 => Err(error(n)),
            n => Ok(n as usize),
        }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // The socket may outlive its release (an orphan in TIME_WAIT): its
        // callbacks must no longer reach the watch.
        self.unwatch();
        // SAFETY: we own the socket; nothing uses it after this.
        unsafe { bindings::sock_release(self.sock) };
    }
}
