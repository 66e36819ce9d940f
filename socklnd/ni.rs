// SPDX-License-Identifier: GPL-2.0

//! One socklnd NI: its address, its listening socket and acceptor thread,
//! its peers and connections (peer.rs), the scheduler threads that move
//! their bytes (sched.rs), and the reaper that frees dead connections and
//! runs the periodic peer checks.

use crate::kapi::kthread::{self, Thread};
use crate::kapi::link::{LinkEvents, LinkWatch};
use crate::kapi::sock::Socket;
use crate::kapi::vec;
use crate::lnd::LnetNi;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::socklnd::ACCEPTOR_PORT;
use crate::lnet_core::socklnd_params::SockParam;
use crate::lnet_core::socklnd_sched::sched_threads;
use crate::params;
use crate::peer::Table;
use crate::sched::{self, Sched};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, Mutex, SpinLock};
use kernel::{c_str, new_mutex, new_spinlock};

/// Connections closed for a protocol error by the peer, all NIs
/// (debugfs `ksocklnd/protocol_errors`).
pub(crate) static PROTOCOL_ERRORS: AtomicU32 = AtomicU32::new(0);
/// Incoming connections refused, all NIs (debugfs `ksocklnd/refused`).
pub(crate) static REFUSED: AtomicU32 = AtomicU32::new(0);
/// Zero-copy requests sent, completed by the peer's ACK, and failed with
/// their connection, all NIs (debugfs `ksocklnd/zc_*`).
pub(crate) static ZC_REQUESTS: AtomicU32 = AtomicU32::new(0);
pub(crate) static ZC_ACKED: AtomicU32 = AtomicU32::new(0);
pub(crate) static ZC_ABORTED: AtomicU32 = AtomicU32::new(0);

/// `accept_backlog`.
const ACCEPT_BACKLOG: i32 = 127;

#[pin_data]
pub(crate) struct SockNi {
    /// The acceptor, the reaper and the schedulers; stopped at shutdown
    /// once every connection is closed.
    #[pin]
    threads: Mutex<KVec<Thread>>,
    /// The schedulers' work, one per scheduler thread; fixed at start.
    pub(crate) scheds: KVec<Arc<Sched>>,
    pub(crate) ni: LnetNi,
    pub(crate) nid: Nid,
    /// IPv4 address (host order) of the interface.
    pub(crate) addr: u32,
    /// Names this start of the NI in hellos.
    pub(crate) incarnation: u64,
    pub(crate) listener: Socket,
    #[pin]
    pub(crate) table: SpinLock<Table>,
    pub(crate) stopping: AtomicBool,
    /// Connections closed for a protocol error by the peer.
    pub(crate) protocol_errors: AtomicU32,
    /// Incoming connections refused before the hello completed.
    pub(crate) refused: AtomicU32,
    /// The interface's link is down (from the netdev notifier).
    pub(crate) link_down: AtomicBool,
    /// The watch of the interface, which holds a reference to the NI
    /// until `stop` drops it.
    #[pin]
    link: Mutex<Option<LinkWatch<SockNi>>>,
}

impl SockNi {
    /// Starts the NI: listens on its address and starts its threads.
    /// Returns the reference LNet keeps as the NI's data.
    pub(crate) fn start(ni: LnetNi) -> Result<Arc<SockNi>> {
        let nid = ni.nid()?;
        let Some(addr) = nid.addr4().filter(|a| *a != 0) else {
            pr_err!("{} has no IPv4 address\n", nid);
            return Err(EINVAL);
        };
        let listener = Socket::tcp()?;
        listener.tune(&crate::kapi::sock::SockOpts::default());
        if let Err(e) = listener.bind(addr, ACCEPTOR_PORT) {
            pr_err!(
                "can't bind {}:{} for {}: {:?}\n",
                nid,
                ACCEPTOR_PORT,
                ni.iface(),
                e
            );
            return Err(e);
        }
        listener.listen(ACCEPT_BACKLOG)?;
        let mut inc = [0u8; 8];
        crate::kapi::sys::random_bytes(&mut inc);
        let nsched = sched_threads(
            params::get(SockParam::Nscheds),
            crate::kapi::sys::nr_cpu_ids(),
        );
        let mut scheds = KVec::with_capacity(nsched as usize, GFP_KERNEL)?;
        for _ in 0..nsched {
            scheds.push(Sched::new()?, GFP_KERNEL)?;
        }
        let sni = Arc::pin_init(
            pin_init!(SockNi {
                threads <- new_mutex!(KVec::new(), "socklnd_ni_threads"),
                scheds,
                ni,
                nid,
                addr,
                incarnation: u64::from_ne_bytes(inc),
                listener,
                table <- new_spinlock!(Table::new(), "socklnd_table"),
                stopping: AtomicBool::new(false),
                protocol_errors: AtomicU32::new(0),
                refused: AtomicU32::new(0),
                link_down: AtomicBool::new(false),
                link <- new_mutex!(None, "socklnd_ni_link"),
            }),
            GFP_KERNEL,
        )?;
        // The threads and the link watch hold references to the NI, which
        // `stop` releases by stopping them and unwatching.
        let r =
            Thread::spawn_arc(c_str!("socknal_accept"), sni.clone(), acceptor_main).and_then(|a| {
                let r = Thread::spawn_arc(c_str!("socknal_reaper"), sni.clone(), reaper_main)?;
                let mut t = sni.threads.lock();
                t.push(a, GFP_KERNEL)?;
                t.push(r, GFP_KERNEL)?;
                drop(t);
                for (i, s) in sni.scheds.iter().enumerate() {
                    // Lustre's names: CPT, then the thread's number.
                    let name =
                        kernel::str::CString::try_from_fmt(kernel::fmt!("socknal_sd00_{:02}", i))?;
                    let s = Thread::spawn_arc(&name, s.clone(), sched::sched_main)?;
                    sni.threads.lock().push(s, GFP_KERNEL)?;
                }
                Ok(())
            });
        let r = r.and_then(|()| {
            // Any address: the NI's is checked when it starts.
            let w = LinkWatch::new(sni.ni.iface(), 0, sni.clone())?;
            *sni.link.lock() = Some(w);
            Ok(())
        });
        if let Err(e) = r {
            sni.stop();
            return Err(e);
        }
        pr_info!(
            "{} listening on {} port {}, {} scheduler threads\n",
            nid,
            ni.iface(),
            ACCEPTOR_PORT,
            nsched
        );
        Ok(sni)
    }

    /// Stops the NI: no more connections, every queued message finalized
    /// with an error, every thread stopped and its link unwatched, so that
    /// nothing borrows it once its last reference goes.
    pub(crate) fn stop(&self) {
        // No link event refers to the NI once the watch is dropped (outside
        // the lock: unwatching waits for a running event).
        let watch = self.link.lock().take();
        drop(watch);
        let sni = self;
        sni.stopping.store(true, Ordering::Release);
        // Nothing joins the table from now on.
        sni.table.lock().closed = true;
        sni.listener.shutdown();
        // Every connection is closed before anything here waits, as
        // Lustre's shutdown deletes its peers before it stops threads: a
        // receive LNet has answered is then failed here, never read by a
        // scheduler that runs while we wait (socklnd_lazy relies on
        // it).
        loop {
            let open = sni.table.lock().any_open();
            let Some(c) = open else {
                break;
            };
            c.close(crate::kapi::errno::ENETDOWN().to_errno());
        }
        // Acceptor, reaper and schedulers exit now; no new connection
        // appears, and no turn runs.
        loop {
            let t = vec::pop(&mut sni.threads.lock());
            let Some(t) = t else {
                break;
            };
            drop(t);
        }
        // Connects under way return at once; each connector thread is
        // stopped, releasing its reference.
        sni.take_each(
            |t| vec::pop(&mut t.connectors),
            |c| {
                c.abort();
                c.stop_thread();
            },
        );
        sni.take_each(
            |t| t.take_conn(|_| true),
            |c| {
                c.close(crate::kapi::errno::ENETDOWN().to_errno());
                // What its scheduler had under way fails here.
                c.retire();
            },
        );
        // Connections pushed since their schedulers stopped.
        for s in sni.scheds.iter() {
            s.drain();
        }
        // Messages still waiting for a connection (ksocknal_del_peer).
        sni.take_each(
            |t| t.take_peer(),
            |p| p.fail_waiting(crate::kapi::errno::ENETDOWN().to_errno()),
        );
        pr_info!(
            "{} stopped ({} protocol errors, {} refused)\n",
            sni.nid,
            sni.protocol_errors.load(Ordering::Relaxed),
            sni.refused.load(Ordering::Relaxed)
        );
    }

    /// Takes items out of the table one at a time with `take` and hands
    /// each to `each` outside the lock, until none is left.
    fn take_each<T>(&self, take: impl Fn(&mut Table) -> Option<T>, mut each: impl FnMut(T)) {
        loop {
            let item = take(&mut self.table.lock());
            let Some(item) = item else {
                break;
            };
            each(item);
        }
    }

    pub(crate) fn count_protocol_error(&self) {
        self.protocol_errors.fetch_add(1, Ordering::Relaxed);
        PROTOCOL_ERRORS.fetch_add(1, Ordering::Relaxed);
    }

    /// Closes every connection with `nid` (Lustre's
    /// `ksocknal_close_peer_conns_locked`), taken from the table first:
    /// closing finalizes messages, which is never done under its lock.
    pub(crate) fn close_conns_of(&self, nid: &Nid, err: i32) {
        let conns = self.table.lock().conns_of(nid);
        for c in conns {
            c.close(err);
        }
    }

    pub(crate) fn count_refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
        REFUSED.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }
}

fn acceptor_main(sni: ArcBorrow<'_, SockNi>) {
    while !kthread::should_stop() && !sni.is_stopping() {
        match sni.listener.accept() {
            Ok(sock) => crate::acceptor::accept(&sni, sock),
            Err(_) if sni.is_stopping() => break,
            Err(e) => {
                crate::cerror!("accept on {}: {:?}\n", sni.nid, e);
                kthread::sleep_ms(100);
            }
        }
    }
    while !kthread::should_stop() {
        kthread::sleep_ms(100);
    }
}

/// The link under an NI went down or came back (from the netdev notifier).
/// Only flags change here: the notifier runs under RTNL, where no message
/// may be finalized.
impl LinkEvents for SockNi {
    fn link_event(sni: ArcBorrow<'_, SockNi>, down: bool) {
        if sni.link_down.swap(down, Ordering::AcqRel) == down {
            return;
        }
        // Connections stay: TCP carries what they hold once the link is
        // back (Lustre's socklnd does the same; its timeouts end them
        // otherwise).
        sni.ni.set_link_fatal(down);
    }
}

/// Frees dead connections once their schedulers have retired them.
fn reaper_main(sni: ArcBorrow<'_, SockNi>) {
    let mut next_tick = 0;
    while !kthread::should_stop() {
        let now = kthread::now_ms();
        if now >= next_tick {
            next_tick = now.saturating_add(1000);
            // Only connections their schedulers have retired leave the
            // table; the last reference frees them.
            sni.take_each(|t| t.take_conn(|c| c.reapable()), drop);
            sni.take_each(
                |t| {
                    let i = t.connectors.iter().position(|c| c.is_done())?;
                    vec::remove(&mut t.connectors, i)
                },
                |c| c.stop_thread(),
            );
            crate::peer::tick(&sni);
        }
        crate::peer::watch_paths(&sni);
        kthread::sleep_ms(crate::peer::PATH_WATCH_MS);
    }
}
