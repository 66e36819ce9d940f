// SPDX-License-Identifier: GPL-2.0

//! Kernel TCP sockets over IPv4: create, bind, listen, accept, connect,
//! and whole-buffer sends and receives to and from plain buffers and page
//! fragments. Calls block; the caller is a kernel thread.

use super::kiov::{BioVec, Kiov, KiovMut};
use kernel::bindings;
use kernel::prelude::*;

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
    fn kapi_sock_peer4(sock: RawSock, addr: *mut u32, port: *mut u16) -> i32;
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
pub struct Socket {
    sock: *mut bindings::socket,
}

// SAFETY: the kernel serializes socket operations with the socket lock; one
// thread may send while another receives and a third shuts it down.
unsafe impl Send for Socket {}
// SAFETY: the `&self` methods are socket calls the kernel serializes with the
// socket lock: one thread may send while another receives and a third shuts the
// socket down.
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
        Ok(Socket { sock: sock.cast() })
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
        Ok(Socket { sock: new })
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
        // SAFETY: we own the socket; nothing uses it after this.
        unsafe { bindings::sock_release(self.sock) };
    }
}
