// SPDX-License-Identifier: GPL-2.0

//! The scheduler threads that move every connection's bytes, in place of a
//! send and a receive thread per connection (as Lustre's socklnd does with
//! its `ksocknal_scheduler` pool).
//!
//! # Design
//!
//! *Threads.* Each NI starts a pool of scheduler threads when it starts
//! (`socknal_sd00_NN`): `nscheds` of them if that parameter is set (at most
//! one per CPU), else half the CPUs, no fewer than 3 and no more than 6
//! (lnet-core `socklnd_sched::sched_threads`, Lustre's rule for one CPT;
//! the LND does not see LNet's CPT table, so the node is one CPT, and each
//! NI has its own pool, as ko2iblnd's schedulers are per NI). The NI stops
//! them, after closing its connections, before it goes.
//!
//! *Connections.* A connection is served by one scheduler for its whole
//! life, the one serving the fewest connections when it came up
//! (`socklnd_sched::least_loaded`; Lustre picks by the peer's CPT, here
//! all one). Its socket is watched ([`crate::kapi::sock::Socket::watch`]):
//! the data-ready, write-space and state-change callbacks, in softirq
//! context, only set the connection's `rx_ready` / `tx_ready` flags,
//! push it on its scheduler's lock-free stack (once: a connection already
//! there stays where it is) and wake the scheduler's wait queue; no lock,
//! no allocation, no sleep. Queueing a message, LNet's answer to a parsed
//! header and closing do the same.
//!
//! *A turn.* The scheduler takes its whole stack and gives each connection
//! a turn under the connection's `io` mutex (held by nobody else but the
//! reaper and the NI's stop). The flags are cleared before the socket is
//! tried, so an event that comes during the turn pushes the connection
//! again and nothing is lost. Sends and receives never block
//! (`MSG_DONTWAIT`): each goes as far as the socket allows and the
//! connection waits for its next callback when the socket has no data or
//! no room. A turn does a bounded amount of work ([`BUDGET`] socket calls
//! each way); a connection with more to do is pushed again behind the
//! others.
//!
//! *Receive.* A per-connection state machine (lnet-core
//! `socklnd_sched::RxFrame`) reads the `ksock_msg` header (zero-copy ACKs
//! and keepalives handled at once, a NOOP ends there), the LNet header,
//! hands it to `lnet_parse` and parks. LNet's `lnd_recv` usually comes
//! within `lnet_parse`; on a lazy portal or under a delay rule it comes
//! later, from another thread, and only then is the connection pushed
//! again: a parked connection reads nothing and costs its scheduler
//! nothing, while TCP's window holds the peer back (Lustre parks the
//! connection the same way). The payload then goes straight into the MD's
//! fragments, what LNet does not want is dropped, the message is
//! finalized and a zero-copy request acknowledged.
//!
//! *Send.* The message at the head of the queue is taken out, its headers
//! encoded once (with its zero-copy cookie), and sent with its payload
//! over as many turns as the socket needs (lnet-core
//! `socklnd_sched::TxProgress`); only then does the next one start.
//!
//! *Timeouts.* With no blocking call there is no socket timeout: the
//! reaper's path watch (peer.rs `watch_paths`, every 100 ms) closes a
//! connection whose frame has stopped arriving mid-way for `sock_timeout`
//! (what the receive timeout did), and the send stall it already watched
//! covers what the send timeout did. A connection between frames, or
//! parked, may be idle for ever, as before.
//!
//! *Close.* `close` (any thread) marks the connection dead, ends the watch,
//! shuts the socket, fails its queue and its zero-copy requests and pushes
//! it to its scheduler, which retires it: the message it was sending
//! fails (`ETIMEDOUT`/REMOTE_TIMEOUT after a send stall, else as a send
//! that met the shutdown, `EPIPE`/LOCAL_ERROR), the one it was receiving
//! fails `EIO`/REMOTE_ERROR, and its scheduler's count drops. The reaper
//! frees retired connections; the NI's stop retires what is left itself,
//! its schedulers stopped.

use crate::conn::Conn;
use crate::kapi::arcstack::ArcStack;
use crate::kapi::kthread;
use crate::kapi::waitq::WaitQueue;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

/// Socket calls a connection gets per turn in each direction before the
/// others get theirs.
pub(crate) const BUDGET: u32 = 16;

/// How long an idle scheduler sleeps before looking for a stop request
/// (ms); any push wakes it at once.
const IDLE_MS: u32 = 1000;

/// One scheduler thread's work: the connections ready for a turn.
#[pin_data]
pub(crate) struct Sched {
    /// Connections pushed by their callbacks, each at most once.
    ready: ArcStack<Conn>,
    #[pin]
    wq: WaitQueue,
    /// Connections it serves.
    nconns: AtomicU32,
}

impl Sched {
    pub(crate) fn new() -> Result<Arc<Sched>> {
        Arc::pin_init(
            pin_init!(Sched {
                ready: ArcStack::new(),
                wq <- WaitQueue::new(),
                nconns: AtomicU32::new(0),
            }),
            GFP_KERNEL,
        )
    }

    /// Connections it serves.
    pub(crate) fn load(&self) -> u32 {
        self.nconns.load(Ordering::Relaxed)
    }

    /// A connection is now served here.
    pub(crate) fn attach(&self) {
        self.nconns.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection it served is retired.
    pub(crate) fn detach(&self) {
        let _ = self
            .nconns
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(1))
            });
    }

    /// Gives `conn` a turn soon; any context (socket callbacks included).
    pub(crate) fn kick(&self, conn: Arc<Conn>) {
        if self.ready.push(conn) {
            self.wq.wake();
        }
    }

    /// Releases the connections still stacked (the NI stops, its threads
    /// stopped).
    pub(crate) fn drain(&self) {
        drop(self.ready.take());
    }
}

/// A scheduler thread: turns for the connections pushed, until stopped.
pub(crate) fn sched_main(s: ArcBorrow<'_, Sched>) {
    while !kthread::should_stop() {
        s.wq.wait_timeout(IDLE_MS, || !s.ready.is_empty() || kthread::should_stop());
        for conn in s.ready.take() {
            conn.turn();
            // A busy scheduler never sleeps otherwise.
            kthread::cond_resched();
        }
    }
}
