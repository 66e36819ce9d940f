// SPDX-License-Identifier: GPL-2.0

//! Opening the connections a peer lacks (Lustre's connd running
//! `ksocknal_connect`): one thread per peer at a time, which connects from
//! this NI's address and a privileged port, shakes hands for each missing
//! type in turn, and registers each connection as it comes up.
//!
//! A peer that answers NONE is connecting to us (and wins the race) or
//! already has the connection: after `min_reconnectms` the type is tried
//! again, up to [`RACE_RETRIES`] times, unless the peer's own connection
//! has arrived meanwhile. Any other failure ends the attempt and starts the
//! backoff (`peer::connect_done`).

use crate::conn::Conn;
use crate::handshake::{self, SetupError};
use crate::kapi::errno;
use crate::kapi::kthread::{self, Thread};
use crate::kapi::sock::Socket;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::socklnd::{ConnType, ACCEPTOR_PORT};
use crate::lnet_core::socklnd_conns::ACTIVE_TYPES;
use crate::lnet_core::socklnd_params::SockParam;
use crate::ni::SockNi;
use crate::{conn, params, peer};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, Mutex};
use kernel::{c_str, new_mutex};

/// Privileged source ports tried for active connections, high to low.
const RESERVED_PORTS: core::ops::RangeInclusive<u16> = 512..=1023;
/// Answers of NONE taken for one type before giving up on it.
const RACE_RETRIES: u32 = 3;

/// The thread opening the connections one peer lacks, in the NI's table
/// while it runs.
///
/// # Invariants
///
/// `sni` points to the NI that started this connector, which outlives it:
/// the NI's table holds the connector's `Arc` until its thread has ended
/// or been stopped, and the NI drops every connector of its table before
/// it goes. `current` is `None` or points to the socket `attempt` is
/// connecting with, on the connector thread's stack; it is cleared, under
/// its lock, before that socket moves or is dropped.
#[pin_data]
pub(crate) struct Connector {
    /// Holds a reference to the connector until stopped (`stop_thread`).
    #[pin]
    thread: Mutex<Option<Thread>>,
    sni: *const SockNi,
    peer: Nid,
    /// The socket being connected, for [`Connector::abort`]; it lives on
    /// the thread's stack and is cleared (under this lock) before it moves.
    #[pin]
    current: Mutex<Option<*const Socket>>,
    done: AtomicBool,
}

// SAFETY: by the type invariant `sni` outlives the connector and `current`
// names a live socket while set; it is only dereferenced under its lock.
unsafe impl Send for Connector {}
// SAFETY: shared use goes through `thread` and `current` (mutexes) and `done`
// (an atomic); `sni` outlives the connector (the type invariant) and is only
// read, as a `&SockNi`; `current` is dereferenced only under its lock, while
// it names a live socket.
unsafe impl Sync for Connector {}

impl Connector {
    /// Starts a connector for `peer`, whose `connecting` flag the caller
    /// has set. If none can start, the flag is cleared again.
    pub(crate) fn start(sni: &SockNi, peer: Nid) {
        if let Err(e) = Self::try_start(sni, peer) {
            crate::cerror!("{}: can't start connecting to {}: {:?}\n", sni.nid, peer, e);
            peer::connect_done(sni, &peer, Some(e.to_errno()), false);
        }
    }

    fn try_start(sni: &SockNi, peer: Nid) -> Result {
        // INVARIANT: `sni` is the caller's NI, and the connector enters its
        // table below (or is dropped at once); no socket yet.
        let c = Arc::pin_init(
            pin_init!(Connector {
                thread <- new_mutex!(None, "socklnd_connector_thread"),
                sni: sni as *const SockNi,
                peer,
                current <- new_mutex!(None, "socklnd_connector_sock"),
                done: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )?;
        {
            let mut t = sni.table.lock();
            if t.closed {
                return Err(errno::ESHUTDOWN());
            }
            t.connectors.push(c.clone(), GFP_ATOMIC)?;
        }
        // Held across the start: a reaper that takes the connector (its
        // thread may be done at once) waits for it in `stop_thread`.
        let mut slot = c.thread.lock();
        match Thread::spawn_arc(c_str!("socknal_cd"), c.clone(), connector_main) {
            Ok(t) => {
                *slot = Some(t);
                Ok(())
            }
            Err(e) => {
                // Never ran: let the reaper drop it.
                c.done.store(true, Ordering::Release);
                Err(e)
            }
        }
    }

    fn sni(&self) -> &SockNi {
        // SAFETY: the NI outlives its connectors (the type invariant); only
        // shared references are made to a `SockNi`.
        unsafe { &*self.sni }
    }

    /// Stops the thread (once it is done, or the NI stops), which releases
    /// its reference: whoever takes the connector out of the NI's table
    /// does this, or the connector and its thread keep each other.
    pub(crate) fn stop_thread(&self) {
        let t = self.thread.lock().take();
        drop(t);
    }

    /// The thread has finished and waits to be stopped.
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Makes a connect or handshake under way return at once (NI
    /// shutdown).
    pub(crate) fn abort(&self) {
        let cur = self.current.lock();
        if let Some(s) = *cur {
            // SAFETY: by the type invariant the socket stays alive until
            // cleared under this lock, which we hold.
            unsafe { (*s).shutdown() };
        }
    }

    fn stopping(&self) -> bool {
        self.sni().is_stopping() || kthread::should_stop()
    }

    /// Opens one connection of `ctype`.
    fn attempt(&self, ctype: ConnType) -> core::result::Result<(), SetupError> {
        let sni = self.sni();
        let addr = self
            .peer
            .addr4()
            .ok_or(SetupError::Refused("no IPv4 address"))?;
        let ms = u32::try_from(peer::timeout_ms()).unwrap_or(u32::MAX);
        // From this NI's address, so each NI is its own rail, and from a
        // privileged port, which Lustre's acceptor requires by default. A
        // port already joined to the peer's acceptor (another type's
        // connection) cannot connect again: the next one is tried, with a
        // fresh socket (`lnet_connect`).
        let in_use = |e: &Error| *e == errno::EADDRINUSE() || *e == errno::EADDRNOTAVAIL();
        for port in RESERVED_PORTS.rev() {
            let sock = Socket::tcp()?;
            sock.tune(&params::sock_opts());
            match sock.bind(sni.addr, port) {
                Err(e) if in_use(&e) => continue,
                r => r?,
            }
            sock.set_timeouts(ms, ms);
            // INVARIANT: `sock` stays on this stack until cleared below, on
            // every path out of this iteration.
            *self.current.lock() = Some(&sock as *const Socket);
            let r = if self.stopping() {
                Err(errno::ESHUTDOWN())
            } else {
                sock.connect(addr, ACCEPTOR_PORT)
            };
            let r = match r {
                Err(e) if in_use(&e) => {
                    // INVARIANT: cleared before `sock` is dropped.
                    *self.current.lock() = None;
                    continue;
                }
                r => r
                    .map_err(SetupError::from)
                    .and_then(|()| handshake::active(sni, &sock, self.peer, ctype)),
            };
            // INVARIANT: cleared before `sock` moves or is dropped.
            *self.current.lock() = None;
            let peer = r?;
            return Conn::start(sni, sock, peer, true).map_err(SetupError::Io);
        }
        Err(SetupError::Io(errno::EADDRINUSE()))
    }

    /// Connects every missing type; returns the error that stopped it and
    /// whether it was a lost race.
    fn run(&self) -> Option<(i32, bool)> {
        let sni = self.sni();
        for ctype in ACTIVE_TYPES {
            let mut races = 0;
            loop {
                if self.stopping() {
                    return Some((errno::ESHUTDOWN().to_errno(), false));
                }
                if sni.table.lock().count(&self.peer, ctype) > 0 {
                    break;
                }
                match self.attempt(ctype) {
                    Ok(()) => break,
                    Err(SetupError::Race) if races < RACE_RETRIES => {
                        races += 1;
                        self.pause(params::get(SockParam::MinReconnectMs));
                    }
                    Err(SetupError::Race) => {
                        return Some((errno::EALREADY().to_errno(), true));
                    }
                    Err(e) => {
                        let err = match &e {
                            SetupError::Io(e) => e.to_errno(),
                            _ => errno::ECONNREFUSED().to_errno(),
                        };
                        if matches!(e, SetupError::Proto(_)) {
                            sni.count_protocol_error();
                        }
                        // A peer that refuses, is unreachable or is slow
                        // is a network error; anything else an error,
                        // as Lustre's `lnet_connect_console_error`.
                        let class = if [
                            errno::ECONNREFUSED().to_errno(),
                            errno::EHOSTUNREACH().to_errno(),
                            errno::ENETUNREACH().to_errno(),
                            errno::ETIMEDOUT().to_errno(),
                        ]
                        .contains(&err)
                        {
                            crate::lnet_core::debug::D_NETERROR
                        } else {
                            crate::lnet_core::debug::D_ERROR
                        };
                        crate::cdebug_limit!(
                            class,
                            "can't open {} connection from {} to {}: {}\n",
                            conn::type_name(ctype),
                            sni.nid,
                            self.peer,
                            e
                        );
                        return Some((err, false));
                    }
                }
            }
        }
        None
    }

    /// Sleeps `ms`, waking early when the NI stops.
    fn pause(&self, ms: i32) {
        let mut left = u32::try_from(ms).unwrap_or(0);
        while left > 0 && !self.stopping() {
            let step = left.min(100);
            kthread::sleep_ms(step);
            left -= step;
        }
    }
}

/// The connector's thread, started by [`Connector::try_start`].
fn connector_main(c: ArcBorrow<'_, Connector>) {
    let r = c.run();
    let (err, raced) = match r {
        Some((e, raced)) => (Some(e), raced),
        None => (None, false),
    };
    peer::connect_done(c.sni(), &c.peer, err, raced);
    c.done.store(true, Ordering::Release);
    while !kthread::should_stop() {
        kthread::sleep_ms(200);
    }
}
