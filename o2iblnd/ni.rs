// SPDX-License-Identifier: GPL-2.0

//! One o2ib NI (Lustre's `kib_net` on its `kib_dev`): the RDMA device
//! that owns the interface's address, its protection domain, the listener
//! on `service`, its peers and connections, the scheduler thread that
//! handles completions, and connd, which disconnects, tears down, times
//! out and keeps alive.
//!
//! Every peer and connection of an NI sits in its [`Table`], under one
//! lock, taken before a connection's own lock and never the other way.
//! Messages are finalized only outside both.

use crate::conn::{self, Conn, State};
use crate::kapi::kthread;
use crate::kapi::link::{LinkEvents, LinkWatch};
use crate::kapi::rdma::{self, AsyncEvents, CmId, IbAsyncEvents, Pd};
use crate::kapi::rdma_ni::{self, ArcStack, NiThread, Taken};
use crate::kapi::vec;
use crate::kapi::waitq::WaitQueue;
use crate::lnd::LnetNi;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::o2iblnd::RejectReason;
use crate::lnet_core::o2iblnd_health::{self as health, errno};
use crate::lnet_core::o2iblnd_params::{sched_threads, IbParam, IbTunables};
use crate::lnet_core::o2iblnd_reject::{passive_verdict, reconnect_at_ms, Passive, MAX_CONN_RACES};
use crate::params;
use crate::tx::Tx;
use core::ffi::c_int;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::rbtree::{RBTree, RBTreeNode};
use kernel::sync::{Arc, ArcBorrow, Mutex, SpinLock};
use kernel::{c_str, new_mutex, new_spinlock};

/// The listener's context: the NI it accepts connections for, until
/// `IbNi::stop` lets go of it. A connection request that comes while the
/// NI goes finds no NI, never a freed one.
#[pin_data]
pub(crate) struct Listening {
    #[pin]
    ni: SpinLock<Option<Arc<IbNi>>>,
}

impl Listening {
    /// The NI, while it takes connections.
    pub(crate) fn ni(&self) -> Option<Arc<IbNi>> {
        self.ni.lock().clone()
    }
}

/// The listening id, which holds its context until it is destroyed (the
/// CM waits for a handler call that is running and makes no more).
pub(crate) struct Listener {
    id: CmId<Listening>,
}

/// Address and route resolution time limit (`RDMA_RESOLVE_TIMEOUT`).
pub(crate) const RESOLVE_TIMEOUT_MS: i32 = 5000;
/// Connection requests the listener queues.
const LISTEN_BACKLOG: i32 = 256;

/// The NI's connection tunables, as negotiated from.
pub(crate) struct Tun {
    pub(crate) peer_credits: u16,
    pub(crate) peer_credits_hiw: u16,
    pub(crate) concurrent_sends: u16,
    /// Connections made to a peer that has none (1 to 127).
    pub(crate) conns_per_peer: u16,
    /// Type of service of the connections it makes (None: the system's).
    pub(crate) tos: Option<u8>,
}

/// Connections taken off an NI's scheduler list ([`IbNi::sched_take`]),
/// each handed out once.
pub(crate) struct Scheduled(Taken<Conn>);

impl Iterator for Scheduled {
    type Item = Arc<Conn>;

    fn next(&mut self) -> Option<Arc<Conn>> {
        self.0.next()
    }
}

impl Drop for Scheduled {
    fn drop(&mut self) {
        // Not walked to the end: the rest may be queued again.
        for c in self.by_ref() {
            c.scheduled.store(false, Ordering::Release);
        }
    }
}

/// How many connections of an NI are not yet freed ([`LiveConn`]).
pub(crate) struct LiveConns(AtomicU32);

/// A connection's place in its NI's [`LiveConns`]: its last field, so
/// given back once every other field (its NI reference, its buffers and
/// txs with their PD references) is dropped.
pub(crate) struct LiveConn(Arc<LiveConns>);

impl LiveConn {
    pub(crate) fn new(ni: &IbNi) -> LiveConn {
        ni.live.0.fetch_add(1, Ordering::AcqRel);
        LiveConn(ni.live.clone())
    }
}

impl Drop for LiveConn {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One peer NI of this NI (Lustre's `kib_peer_ni`).
pub(crate) struct IbPeer {
    pub(crate) nid: Nid,
    /// Established connections, taken in turn (`ibp_conns`): up to
    /// `conns_per_peer` of ours, and those the peer made.
    conns: KVec<Arc<Conn>>,
    next_conn: usize,
    /// Our own connection attempts (`ibp_connecting`).
    connecting: KVec<Arc<Conn>>,
    /// Txs waiting for a connection, each with its deadline.
    waiting: KVec<Tx>,
    /// What its rejects asked the next request for: a smaller queue
    /// depth or fewer fragments (0: ours).
    depth: u16,
    frags: u16,
    /// The peer's incarnation as last learnt (`ibp_incarnation`; 0: not
    /// yet), named in our requests.
    stamp: u64,
    /// Reconnects after rejects since a connection last came up
    /// (`ibp_reconnected`).
    reconnects: u32,
    /// Reconnects held back until this time (ms; 0: none), once
    /// `reconnects` reached `RECONN_HIGH_RACE`, and how many.
    reconnect_at_ms: u64,
    reconnect_pending: u16,
    /// Requests refused as races in a row (`ibp_races`).
    races: u32,
    /// Why its last connection or attempt failed, until LNet is told
    /// (`ibp_error`; 0: nothing to tell).
    error: i32,
    /// When a message last came from it over a connection now closed
    /// (monotonic s; 0: never), the date of the report (`ibp_last_alive`).
    last_alive: i64,
}

impl IbPeer {
    fn new(nid: Nid) -> IbPeer {
        IbPeer {
            nid,
            conns: KVec::new(),
            next_conn: 0,
            connecting: KVec::new(),
            waiting: KVec::new(),
            depth: 0,
            frags: 0,
            stamp: 0,
            reconnects: 0,
            reconnect_at_ms: 0,
            reconnect_pending: 0,
            races: 0,
            error: 0,
            last_alive: 0,
        }
    }

    /// Its established connections (`ibp_conns`).
    pub(crate) fn conns(&self) -> &[Arc<Conn>] {
        &self.conns
    }

    /// Its references as Lustre counts them (`ibp_kref`, `lctl
    /// peer_list`): the table's, and one per connection established or
    /// being made.
    pub(crate) fn refcount(&self) -> u32 {
        let n = self.conns.len().saturating_add(self.connecting.len());
        u32::try_from(n).unwrap_or(u32::MAX).saturating_add(1)
    }

    /// The next established connection in turn (`kiblnd_get_conn_locked`).
    fn next_conn(&mut self) -> Option<Arc<Conn>> {
        let n = self.conns.len();
        if n == 0 {
            return None;
        }
        let i = self.next_conn % n;
        self.next_conn = (i + 1) % n;
        Some(self.conns[i].clone())
    }

    fn forget(list: &mut KVec<Arc<Conn>>, c: &Arc<Conn>) -> bool {
        match list.iter().position(|x| Arc::ptr_eq(x, c)) {
            Some(i) => {
                drop(vec::remove(list, i));
                true
            }
            None => false,
        }
    }
}

pub(crate) struct Table {
    /// The peer NIs, by NID.
    pub(crate) peers: RBTree<Nid, IbPeer>,
    /// Every connection not yet torn down.
    pub(crate) conns: KVec<Arc<Conn>>,
    /// Set when the NI stops: nothing is added after.
    pub(crate) closed: bool,
}

impl Table {
    fn peer(&mut self, nid: &Nid) -> Option<&mut IbPeer> {
        self.peers.get_mut(nid)
    }

    /// The peer NI `nid`, made if needed.
    fn peer_or_insert(&mut self, nid: Nid) -> Result<&mut IbPeer> {
        if self.peers.get(&nid).is_none() {
            self.peers
                .insert(RBTreeNode::new(nid, IbPeer::new(nid), GFP_ATOMIC)?);
        }
        self.peers.get_mut(&nid).ok_or(ENOMEM)
    }

    /// Whether a connection from `nid` is being accepted
    /// (`ibp_accepting`).
    fn accepting(&self, nid: &Nid) -> bool {
        self.conns
            .iter()
            .any(|c| c.peer == *nid && !c.active && c.inner.lock().state == State::Connecting)
    }
}

#[pin_data]
pub(crate) struct IbNi {
    pub(crate) ni: LnetNi,
    pub(crate) nid: Nid,
    pub(crate) addr: u32,
    /// µs of wall-clock time at start-up (`ibn_incarnation`).
    pub(crate) incarnation: u64,
    pub(crate) tun: Tun,
    pub(crate) pd: Arc<Pd>,
    /// Its connections not yet freed: `stop` waits for none, so that the
    /// NI holds the last reference to the PD when it is dropped.
    live: Arc<LiveConns>,
    /// The device port under the NI's address.
    port: u32,
    /// The port is down (PORT_ERR, DEVICE_FATAL): connd holds back what
    /// would send a CM message (see `connd_pass`).
    port_down: AtomicBool,
    /// Why the NI is fatal (`lnet_set_link_fatal_state`), `FATAL_*` bits:
    /// fatal while any is set.
    fatal: AtomicU32,
    /// The device's async events (port error and active, device fatal),
    /// until `stop` takes them.
    #[pin]
    events: Mutex<Option<AsyncEvents<IbNi>>>,
    /// The watch of its interface, until `stop` takes it.
    #[pin]
    link: Mutex<Option<LinkWatch<IbNi>>>,
    /// Taken by `stop`, after every connection is gone, and destroyed
    /// once the NI is dropped.
    #[pin]
    listener: Mutex<Option<Listener>>,
    #[pin]
    pub(crate) table: SpinLock<Table>,
    /// Connections with completions to handle, pushed from the CQ handler.
    sched: ArcStack<Conn>,
    #[pin]
    sched_wq: WaitQueue,
    #[pin]
    connd_wq: WaitQueue,
    connd_kick: AtomicBool,
    #[pin]
    threads: Mutex<KVec<NiThread<IbNi>>>,
}

impl IbNi {
    /// Starts the NI on the RDMA device that owns its address.
    pub(crate) fn start(
        ni: LnetNi,
        t: &mut crate::kapi::bindings::lnet_ni_tunables,
    ) -> Result<Arc<IbNi>> {
        let nid = ni.nid()?;
        let Some(addr) = nid.addr4().filter(|a| *a != 0) else {
            pr_err!("{} has no IPv4 address\n", nid);
            return Err(EINVAL);
        };
        let net = crate::lnet_core::credits::NetTunables {
            peer_timeout: t.peer_timeout,
            peer_credits: t.peer_credits,
            peer_buffer_credits: t.peer_buffer_credits,
            credits: t.credits,
        };
        let lnd = IbTunables::given(
            t.peercredits_hiw,
            t.map_on_demand,
            t.concurrent_sends,
            [t.fmr_pool_size, t.fmr_flush_trigger, t.fmr_cache],
            t.ntx,
            t.conns_per_peer,
            t.tos,
        );
        let tun = params::ni_tunables(&net, &lnd).map_err(|e| {
            pr_err!("{}: {}\n", nid, e);
            EINVAL
        })?;
        let l = &tun.lnd;
        t.peercredits_hiw = l.peercredits_hiw;
        t.map_on_demand = l.map_on_demand;
        t.concurrent_sends = l.concurrent_sends;
        t.fmr_pool_size = l.fmr_pool_size;
        t.fmr_flush_trigger = l.fmr_flush_trigger;
        t.fmr_cache = l.fmr_cache;
        t.ntx = l.ntx;
        t.conns_per_peer = l.conns_per_peer;
        t.tos = l.tos;
        let pc = tun.net.peer_credits.clamp(1, 255);
        let tun = Tun {
            peer_credits: pc as u16,
            peer_credits_hiw: tun.lnd.peercredits_hiw.clamp(0, pc) as u16,
            concurrent_sends: tun.lnd.concurrent_sends.clamp(1, 2 * pc) as u16,
            conns_per_peer: tun.lnd.conns_per_peer.clamp(1, 127) as u16,
            tos: u8::try_from(tun.lnd.tos).ok(),
        };
        let service = params::get(IbParam::Service) as u16;
        // Without its NI yet, its handler ignores events until `listen`.
        let ctx = Arc::pin_init(
            pin_init!(Listening {
                ni <- new_spinlock!(None, "kiblnd_listening"),
            }),
            GFP_KERNEL,
        )?;
        let listener = CmId::new(ctx)?;
        if let Err(e) = listener.bind(addr, service) {
            pr_err!(
                "{}: no RDMA device has the address of {}, or port {} is taken: {:?}\n",
                nid,
                ni.iface(),
                service,
                e
            );
            return Err(e);
        }
        let Some(dev) = listener.device() else {
            pr_err!("{}: {} is on no RDMA device\n", nid, ni.iface());
            return Err(ENODEV);
        };
        let pd = Arc::new(Pd::new(dev)?, GFP_KERNEL)?;
        let live = Arc::new(LiveConns(AtomicU32::new(0)), GFP_KERNEL)?;
        let port = listener.port_num();
        let n = Arc::pin_init(
            pin_init!(IbNi {
                ni,
                nid,
                addr,
                incarnation: rdma_ni::real_time_us(),
                tun,
                pd,
                live,
                port,
                port_down: AtomicBool::new(false),
                fatal: AtomicU32::new(0),
                events <- new_mutex!(None, "kiblnd_events"),
                link <- new_mutex!(None, "kiblnd_link"),
                listener <- new_mutex!(None, "kiblnd_listener"),
                table <- new_spinlock!(Table {
                    peers: RBTree::new(),
                    conns: KVec::new(),
                    closed: false,
                }, "kiblnd_table"),
                sched: ArcStack::new(),
                sched_wq <- WaitQueue::new(),
                connd_wq <- WaitQueue::new(),
                connd_kick: AtomicBool::new(false),
                threads <- new_mutex!(KVec::new(), "kiblnd_threads"),
            }),
            GFP_KERNEL,
        )?;
        // The listener's context holds the NI until `stop` takes it back
        // (breaking the cycle through `n.listener`).
        *listener.context().ni.lock() = Some(n.clone());
        let listener = Listener { id: listener };
        // A port already down starts the NI fatal (`kiblnd_startup`); its
        // events keep the state from then on.
        if !dev.port_active(n.port).unwrap_or(true) {
            pr_warn!("{}: port {} of {} is down\n", nid, n.port, dev.name());
            n.port_down.store(true, Ordering::Release);
            n.set_fatal(FATAL_PORT, true);
        }
        // The handler, the watch and the threads hold the NI until `stop`
        // takes them.
        match AsyncEvents::new(dev, n.clone()) {
            Ok(e) => *n.events.lock() = Some(e),
            Err(e) => pr_warn!("{}: no IB async events: {:?}\n", nid, e),
        }
        // Its interface's state now, and its changes from then on: an
        // interface already down starts the NI fatal, as its port does.
        match LinkWatch::new(n.ni.iface(), addr, n.clone()) {
            Ok(w) => *n.link.lock() = Some(w),
            Err(e) => pr_warn!("{}: can't watch {}: {}\n", nid, n.ni.iface(), e.to_errno()),
        }
        // Schedulers as Lustre sizes them per CPT (`nscheds`, else from
        // the CPUs), here per NI.
        let cpus = rdma_ni::nr_cpu_ids();
        let nsched = sched_threads(params::get(IbParam::Nscheds), cpus)
            .first
            .max(1);
        let threads =
            NiThread::spawn(c_str!("kiblnd_connd"), connd_main, n.clone()).and_then(|c| {
                n.threads.lock().push(c, GFP_KERNEL)?;
                for _ in 0..nsched {
                    let s = NiThread::spawn(c_str!("kiblnd_sd"), sched_main, n.clone())?;
                    n.threads.lock().push(s, GFP_KERNEL)?;
                }
                Ok(())
            });
        let r = threads.and_then(|()| listener.id.listen(LISTEN_BACKLOG));
        *n.listener.lock() = Some(listener);
        if let Err(e) = r {
            let listener = n.stop();
            drop(n);
            drop(listener);
            return Err(e);
        }
        pr_info!(
            "{}: started on {} ({}), peer_credits {}, scheduler threads {}\n",
            nid,
            dev.name(),
            n.ni.iface(),
            n.tun.peer_credits,
            nsched
        );
        Ok(n)
    }

    /// The RDMA device is being removed (`rdma link delete`, a driver
    /// unbinding): the NI is marked fatal, fails what waits for a
    /// connection, closes its connections and takes no new one, so LNet
    /// resends elsewhere at once. Lustre ignores this event. The device's
    /// removal waits for the listener, which `stop` (`lnetctl net del`)
    /// destroys after everything else the NI holds on the device.
    pub(crate) fn device_removed(&self) {
        pr_err!(
            "{}: RDMA device going away: NI marked fatal, down until its net is deleted\n",
            self.nid
        );
        self.set_fatal(FATAL_GONE, true);
        self.close_all();
    }

    /// Fails what waits for connections and closes every connection;
    /// none is accepted or made after this.
    fn close_all(&self) {
        let mut peers = {
            let mut g = self.table.lock();
            g.closed = true;
            core::mem::take(&mut g.peers)
        };
        loop {
            let Some(nid) = peers.keys().next().copied() else {
                break;
            };
            for t in peers.remove(&nid).map(|p| p.waiting).into_iter().flatten() {
                t.done(-errno::ENETDOWN, health::connect_failed(-errno::ENETDOWN));
            }
        }
        // One at a time, with no allocation: each close takes the lock.
        loop {
            let open = {
                let g = self.table.lock();
                g.conns
                    .iter()
                    .find(|c| c.inner.lock().state != State::Closing)
                    .cloned()
            };
            match open {
                Some(c) => c.close(0),
                None => break,
            }
        }
    }

    /// Stops the NI: fails what waits for connections, closes every
    /// connection and waits until each is torn down, then stops the
    /// threads (`kiblnd_shutdown`). Returns the listener, which no longer
    /// holds the NI: the caller destroys it once the NI is dropped, for
    /// the device's removal waits for it and nothing of the NI may
    /// outlive the device.
    pub(crate) fn stop(&self) -> Option<Listener> {
        self.close_all();
        let mut waited = 0u32;
        loop {
            let left = self.table.lock().conns.len();
            if left == 0 || self.threads.lock().is_empty() {
                break;
            }
            self.wake_connd();
            kthread::msleep(100);
            waited += 1;
            if waited % 50 == 0 {
                pr_warn!("{}: waiting for {} connections to close\n", self.nid, left);
            }
        }
        drop(core::mem::take(&mut *self.threads.lock()));
        // Torn down, a connection is freed once nothing holds it: a
        // received message LNet keeps holds its connection (and buffer)
        // until LNet lets it go. Until every one is, the NI is not the last
        // holder of its PD, and the PD must go before the listener (which
        // keeps the device): wait, as Lustre's `kiblnd_shutdown` waits for
        // its peers.
        let mut waited = 0u32;
        loop {
            let left = self.live.0.load(Ordering::Acquire);
            if left == 0 {
                break;
            }
            kthread::msleep(100);
            waited += 1;
            if waited % 50 == 0 {
                pr_warn!(
                    "{}: waiting for {} connections to be freed\n",
                    self.nid,
                    left
                );
            }
        }
        // Completions queued after the scheduler stopped.
        for c in self.sched_take() {
            c.scheduled.store(false, Ordering::Release);
        }
        // Waits for a handler call that is running.
        drop(self.events.lock().take());
        // No report for it runs once this returns.
        drop(self.link.lock().take());
        let l = self.listener.lock().take();
        // Taken out under the lock, dropped after: our caller's reference
        // keeps the NI.
        let held = l.as_ref().and_then(|l| l.id.context().ni.lock().take());
        drop(held);
        l
    }

    /// Sets or clears one reason for the NI's fatal state, which LNet
    /// sees while any is set. Only atomics: called from the notifiers
    /// (under RTNL) and event handlers.
    fn set_fatal(&self, why: u32, on: bool) {
        if on {
            self.fatal.fetch_or(why, Ordering::AcqRel);
        } else {
            self.fatal.fetch_and(!why, Ordering::AcqRel);
        }
        // Two callers' reports may cross: the last one to look tells LNet
        // what the bits say now.
        loop {
            let fatal = self.fatal.load(Ordering::Acquire) != 0;
            self.ni.set_link_fatal(fatal);
            if (self.fatal.load(Ordering::Acquire) != 0) == fatal {
                break;
            }
        }
    }

    pub(crate) fn lnd_timeout_ms(&self) -> u64 {
        u64::from(params::timeout_secs()) * 1000
    }

    pub(crate) fn keepalive_ms(&self) -> u64 {
        u64::try_from(params::get(IbParam::Keepalive)).unwrap_or(0) * 1000
    }

    pub(crate) fn cksum(&self) -> bool {
        params::get(IbParam::Cksum) != 0
    }

    /// A connect request may take this long (`kiblnd_connreq_timeout`).
    fn connreq_timeout_ms(&self) -> u64 {
        (self.lnd_timeout_ms() / 4).max(5000)
    }

    /// Queues `conn` for the scheduler; any context.
    pub(crate) fn schedule(&self, conn: Arc<Conn>) {
        // Never on it already: only the caller that set `scheduled` pushes.
        // Were it refused, the connection would never be polled again: say
        // so (the caller's own reference keeps this drop from being the
        // last, here in interrupt context).
        if !self.sched.push(conn) {
            crate::cerror!("{}: a connection could not be scheduled\n", self.nid);
            return;
        }
        self.sched_wq.wake();
    }

    /// Takes every connection `schedule` queued, newest first. Walking
    /// the list allocates nothing: a connection dropped for lack of
    /// memory would stay `scheduled` and never be polled again.
    fn sched_take(&self) -> Scheduled {
        Scheduled(self.sched.take())
    }

    pub(crate) fn wake_connd(&self) {
        self.connd_kick.store(true, Ordering::Release);
        self.connd_wq.wake();
    }

    /// A connection came up (`kiblnd_connreq_done`): it joins the
    /// peer's connections, those of another incarnation close as stale,
    /// and it takes the txs waiting for a connection.
    pub(crate) fn conn_established(&self, c: &Arc<Conn>) {
        let stamp = c.inner.lock().peer_stamp;
        let (stale, n, waiting) = {
            let mut g = self.table.lock();
            if g.closed {
                drop(g);
                c.close(-errno::ENETDOWN);
                return;
            }
            let Some(p) = g.peer(&c.peer) else {
                drop(g);
                c.close(-errno::ENETDOWN);
                return;
            };
            // Closed since the CM said it was up: its teardown
            // (`conn_closed`) decides for the waiting txs; carrying
            // nothing, it must not join the peer's connections.
            if c.inner.lock().state == State::Closing {
                return;
            }
            IbPeer::forget(&mut p.connecting, c);
            p.reconnects = 0;
            p.reconnect_at_ms = 0;
            p.reconnect_pending = 0;
            // Only another incarnation's connections are stale
            // (`kiblnd_close_stale_conns_locked`): those of the same one
            // stay and carry in turn, as when we connect to ourselves (a
            // local NI's recovery ping), where both ends of a connection
            // are ours and carry the peer's NID.
            // Room first: a stale connection taken off the list must be
            // closed, not dropped. Without it, the new one goes instead
            // and the peer connects again.
            let mut stale = KVec::new();
            let n = p
                .conns
                .iter()
                .filter(|o| o.inner.lock().peer_stamp != stamp)
                .count();
            if stale.reserve(n, GFP_ATOMIC).is_err() {
                drop(g);
                c.close(-errno::ENOMEM);
                return;
            }
            let mut i = 0;
            while i < p.conns.len() {
                if p.conns[i].inner.lock().peer_stamp != stamp {
                    if let Some(o) = vec::remove(&mut p.conns, i) {
                        // Within the capacity reserved above.
                        let _ = stale.push(o, GFP_ATOMIC);
                    }
                } else {
                    i += 1;
                }
            }
            p.stamp = stamp;
            if p.conns.push(c.clone(), GFP_ATOMIC).is_err() {
                drop(g);
                c.close(-errno::ENOMEM);
                return;
            }
            (stale, p.conns.len(), core::mem::take(&mut p.waiting))
        };
        let mtu = c.inner.lock().path_mtu;
        crate::cnet!(
            "{}: connected to {} ({}, path MTU {}, {} of the peer's)\n",
            self.nid,
            c.peer,
            if c.active { "active" } else { "passive" },
            mtu,
            n
        );
        c.established(waiting);
        for o in stale {
            o.close(-errno::ESTALE);
        }
    }

    /// A connection closed: the peer forgets it; if it was the last
    /// attempt and no connection is left, the peer's waiting txs fail as
    /// the error says (`kiblnd_peer_connect_failed`), unless it lost a
    /// connection race or is connecting again.
    pub(crate) fn conn_closed(&self, c: &Arc<Conn>) {
        let err = c.inner.lock().comms_error;
        let (failed, notify) = {
            let mut g = self.table.lock();
            let accepting = g.accepting(&c.peer);
            match g.peer(&c.peer) {
                None => (KVec::new(), None),
                Some(p) => {
                    let was_up = IbPeer::forget(&mut p.conns, c);
                    p.last_alive = p.last_alive.max(c.last_alive());
                    if was_up && p.conns.is_empty() {
                        // Set, or cleared by a clean close, by the last
                        // connection (`kiblnd_close_conn_locked`).
                        p.error = err;
                    }
                    // One of our attempts, or a request being accepted.
                    let attempt = IbPeer::forget(&mut p.connecting, c) || (!c.active && !was_up);
                    let failed = if attempt
                        && p.conns.is_empty()
                        && p.connecting.is_empty()
                        && p.reconnect_at_ms == 0
                        && err != -errno::EALREADY
                    {
                        p.reconnects = 0;
                        p.error = err;
                        core::mem::take(&mut p.waiting)
                    } else {
                        KVec::new()
                    };
                    // An idle peer with an error is reported down, once
                    // (`kiblnd_peer_notify`).
                    let idle = p.conns.is_empty()
                        && p.connecting.is_empty()
                        && p.reconnect_at_ms == 0
                        && !accepting;
                    let notify = (idle && p.error != 0).then(|| {
                        p.error = 0;
                        p.last_alive
                    });
                    (failed, notify)
                }
            }
        };
        if let Some(last_alive) = notify {
            crate::cdebug_limit!(
                crate::lnet_core::debug::D_NET,
                "{}: {} reported down ({})\n",
                self.nid,
                c.peer,
                err
            );
            crate::PEERS_DOWN.fetch_add(1, Ordering::Relaxed);
            self.ni.notify_peer_down(&c.peer, last_alive);
        }
        let hs = health::connect_failed(err);
        for t in failed {
            t.done(err, hs);
        }
        self.wake_connd();
    }

    /// Registers a new connection (refused once the NI stops).
    pub(crate) fn add_conn(&self, c: &Arc<Conn>) -> Result {
        let mut g = self.table.lock();
        if g.closed {
            return Err(crate::kapi::errno::ENETDOWN());
        }
        g.conns.push(c.clone(), GFP_ATOMIC)?;
        g.peer_or_insert(c.peer)?;
        Ok(())
    }

    /// Decides on a connection request from `src` of incarnation
    /// `stamp` before a connection is made for it (the peer checks of
    /// `kiblnd_passive_connect`).
    pub(crate) fn check_request(&self, src: &Nid, stamp: u64) -> Result<(), RejectReason> {
        let (stale, verdict) = {
            let mut g = self.table.lock();
            let Some(p) = g.peer(src) else {
                return Ok(());
            };
            let verdict = passive_verdict(
                p.stamp,
                stamp,
                !p.connecting.is_empty(),
                p.races,
                src.nidhash(),
                self.nid.nidhash(),
            );
            let stale = match verdict {
                Passive::Stale => {
                    // Every connection of the old incarnation goes; the
                    // request is refused and comes again.
                    p.stamp = stamp;
                    core::mem::take(&mut p.conns)
                }
                Passive::Race => {
                    p.races += 1;
                    KVec::new()
                }
                Passive::Accept { .. } => {
                    p.races = 0;
                    KVec::new()
                }
            };
            (stale, verdict)
        };
        for c in stale {
            c.close(-errno::ESTALE);
        }
        match verdict {
            Passive::Stale => {
                crate::cwarn!("{}: stale connections of {} closed\n", self.nid, src);
                Err(RejectReason::ConnStale)
            }
            Passive::Race => Err(RejectReason::ConnRace),
            Passive::Accept { past_races } => {
                if past_races {
                    crate::cneterr!(
                        "{}: connection race with {} unresolved after {} tries, letting it win\n",
                        self.nid,
                        src,
                        MAX_CONN_RACES
                    );
                }
                Ok(())
            }
        }
    }

    /// connd's pass: disconnect closed connections, tear down drained
    /// ones, close those whose txs ran out of time or whose connect took
    /// too long, fail txs that waited too long for a connection, and let
    /// established ones send keepalive NOOPs.
    fn connd_pass(&self) {
        let now = kthread::now_ms();
        let connreq = self.connreq_timeout_ms();
        let mut all = KVec::new();
        // While the port is down, a closed connection's QP is flushed but
        // its DREQ (and the id's destruction, which may send one) waits
        // for the port: a CM message sent on a down port is lost anyway,
        // and an unpatched Soft-RoCE breaks its QP1 for good on it
        // (kernel/patches), so that no connection could be made once the
        // port is back.
        // Stopping the NI does not wait.
        let hold = {
            let mut g = self.table.lock();
            let hold = self.port_down.load(Ordering::Acquire) && !g.closed;
            for c in g.conns.iter() {
                let _ = all.push(c.clone(), GFP_ATOMIC);
            }
            // A peer with a connection still being accepted stays
            // (`ibp_accepting`): its ESTABLISHED needs it.
            let t = &mut *g;
            let conns = &t.conns;
            let mut idle = KVec::new();
            for (nid, p) in t.peers.iter() {
                let used = !p.conns.is_empty()
                    || !p.connecting.is_empty()
                    || !p.waiting.is_empty()
                    || p.reconnect_at_ms != 0
                    || conns.iter().any(|c| c.peer == *nid);
                // Without room for the list, the next pass forgets them.
                if !used && idle.push(*nid, GFP_ATOMIC).is_err() {
                    break;
                }
            }
            for nid in idle {
                drop(t.peers.remove(&nid));
            }
            hold
        };
        for c in all {
            conn::disconnect(&c, hold);
            if !hold && c.drained(now) {
                let gone = {
                    let mut g = self.table.lock();
                    let i = g.conns.iter().position(|x| Arc::ptr_eq(x, &c));
                    i.and_then(|i| vec::remove(&mut g.conns, i))
                };
                drop(gone);
                conn::teardown(c);
                continue;
            }
            let state = c.inner.lock().state;
            match state {
                State::Connecting if now > c.started_ms + connreq => {
                    crate::cneterr!("{}: connecting to {} timed out\n", self.nid, c.peer);
                    c.close(-errno::ENETDOWN);
                }
                State::Established if c.timed_out(now) => {
                    c.log_timed_out();
                    c.close(-errno::ETIMEDOUT);
                }
                State::Established => c.check_sends(),
                _ => {}
            }
        }
    }

    /// Starts the reconnects held back to this second, where still
    /// needed.
    fn reconnect_due(ni: ArcBorrow<'_, IbNi>) {
        let now = kthread::now_ms();
        let mut due = KVec::new();
        {
            let mut g = ni.table.lock();
            for (_, p) in g.peers.iter_mut() {
                if p.reconnect_at_ms == 0 || now < p.reconnect_at_ms {
                    continue;
                }
                p.reconnect_at_ms = 0;
                // One per connection the peer may have at most: each
                // pending one stands for an attempt the peer refused, and
                // no more than `conns_per_peer` are made at once.
                let n = core::mem::take(&mut p.reconnect_pending).min(ni.tun.conns_per_peer.max(1));
                if !p.waiting.is_empty() && p.conns.is_empty() {
                    p.reconnects += 1;
                    let _ = due.push((p.nid, n), GFP_ATOMIC);
                }
            }
        }
        for (nid, n) in due {
            for _ in 0..n {
                connect(ni, nid, false);
            }
        }
    }

    /// Fails the txs that have waited for a connection past their
    /// deadline (`-ETIMEDOUT`, NETWORK_TIMEOUT).
    fn expire_waiting(&self) {
        let now = kthread::now_ms();
        let expired = |t: &Tx| t.deadline_ms != 0 && now >= t.deadline_ms;
        let mut out = KVec::new();
        {
            let mut g = self.table.lock();
            let n = g
                .peers
                .iter()
                .map(|(_, p)| p.waiting.iter().filter(|t| expired(t)).count())
                .sum();
            // Room first: a tx taken out is never dropped. Without it,
            // the next pass tries again.
            if n == 0 || out.reserve(n, GFP_ATOMIC).is_err() {
                return;
            }
            for (_, p) in g.peers.iter_mut() {
                let mut i = 0;
                while i < p.waiting.len() {
                    if expired(&p.waiting[i]) {
                        if let Some(t) = vec::remove(&mut p.waiting, i) {
                            let _ = out.push(t, GFP_ATOMIC);
                        }
                    } else {
                        i += 1;
                    }
                }
            }
        }
        for t in out {
            t.done(-errno::ETIMEDOUT, health::connect_wait_expired());
        }
    }
}

/// Sends `tx` to its peer: on the peer's next connection, or waiting for
/// one; a peer with none and no attempt under way gets `conns_per_peer`
/// of them started (`kiblnd_launch_tx`).
pub(crate) fn launch(ni: ArcBorrow<'_, IbNi>, mut tx: Tx) {
    let target = tx.target;
    {
        let mut g = ni.table.lock();
        if g.closed {
            drop(g);
            tx.done(-errno::ENETDOWN, Status::LocalDropped);
            return;
        }
        let Ok(p) = g.peer_or_insert(target) else {
            drop(g);
            tx.done(-errno::EHOSTUNREACH, Status::LocalError);
            return;
        };
        if let Some(c) = p.next_conn() {
            drop(g);
            c.queue(tx);
            return;
        }
        tx.deadline_ms = kthread::now_ms() + ni.connreq_timeout_ms() + 10_000;
        if let Err(tx) = vec::push_or_back(&mut p.waiting, tx, GFP_ATOMIC) {
            drop(g);
            tx.done(-errno::ENOMEM, Status::LocalError);
            return;
        }
        let busy = !p.connecting.is_empty() || p.reconnect_at_ms != 0;
        // Only a peer without a connection pays for the walk.
        if busy || g.accepting(&target) {
            return;
        }
    }
    for i in 0..ni.tun.conns_per_peer {
        if !connect(ni, target, i == 0) {
            break;
        }
    }
}

/// The peer rejected a connection: connect again, with what its reject
/// asked for (`depth`, `frags`, its incarnation) if it asked, when txs
/// still wait and no request of the peer's is being accepted
/// (`kiblnd_check_reconnect`): each refused attempt is made again, so
/// that `conns_per_peer` of them come up. Past `RECONN_HIGH_RACE` in a
/// row, connd starts them at the next second (`kiblnd_connd`'s reconnect
/// list).
pub(crate) fn reconnect(ni: ArcBorrow<'_, IbNi>, peer: Nid, ask: Option<(u16, u16, u64)>) {
    let now = kthread::now_ms();
    let go = {
        let mut g = ni.table.lock();
        let accepting = g.accepting(&peer);
        match g.peer(&peer) {
            Some(p) => {
                if let Some((depth, frags, stamp)) = ask {
                    p.depth = depth;
                    p.frags = frags;
                    if stamp != 0 {
                        p.stamp = stamp;
                    }
                }
                // Txs wait only while the peer has no connection.
                let needed = !p.waiting.is_empty() && !accepting;
                let at = reconnect_at_ms(p.reconnects, now);
                if !needed {
                    false
                } else if at > now {
                    if p.reconnect_at_ms == 0 {
                        p.reconnect_at_ms = at;
                    }
                    p.reconnect_pending += 1;
                    false
                } else {
                    p.reconnects += 1;
                    true
                }
            }
            None => false,
        }
    };
    if go {
        connect(ni, peer, false);
    }
}

/// Starts an active connection to `peer` (`kiblnd_connect_peer`); with
/// `first`, only if it has no connection and none under way. Whether one
/// was started.
fn connect(ni: ArcBorrow<'_, IbNi>, peer: Nid, first: bool) -> bool {
    let c = match Conn::new(ni.into(), peer, true) {
        Ok(c) => c,
        Err(e) => {
            if first {
                fail_waiting(&ni, &peer, e.to_errno());
            }
            return false;
        }
    };
    {
        let mut g = ni.table.lock();
        let Some(p) = g.peer(&peer) else {
            return false;
        };
        if first && (!p.connecting.is_empty() || !p.conns.is_empty()) {
            return false;
        }
        if p.connecting.push(c.clone(), GFP_ATOMIC).is_err() {
            drop(g);
            if first {
                fail_waiting(&ni, &peer, -(kernel::bindings::ENOMEM as i32));
            }
            return false;
        }
        {
            // What the peer's rejects asked for.
            let mut ci = c.inner.lock();
            if p.depth > 0 {
                ci.cp.queue_depth = ci.cp.queue_depth.min(p.depth);
            }
            if p.frags > 0 {
                ci.cp.max_frags = ci.cp.max_frags.min(p.frags);
            }
            ci.peer_stamp = p.stamp;
        }
        if g.conns.push(c.clone(), GFP_ATOMIC).is_err() {
            let fail = g.peer(&peer).is_some_and(|p| {
                IbPeer::forget(&mut p.connecting, &c);
                p.connecting.is_empty() && p.conns.is_empty()
            });
            drop(g);
            if fail {
                fail_waiting(&ni, &peer, -(kernel::bindings::ENOMEM as i32));
            }
            return false;
        }
    }
    let Some(dst) = peer.addr4() else {
        c.close(-errno::EHOSTUNREACH);
        return true;
    };
    let service = params::get(IbParam::Service) as u16;
    let r = {
        let _q = c.qp_lock.lock();
        // Published above, so it may have been closed, and torn down,
        // already: an id made now would be nobody's to destroy.
        if c.inner.lock().state == State::Closing {
            return true;
        }
        // The id holds a reference until `conn::teardown` destroys it.
        CmId::new(c.clone()).and_then(|id| {
            let r = bind_source(&ni, &id)
                .and_then(|()| id.resolve_addr(ni.addr, (dst, service), RESOLVE_TIMEOUT_MS));
            c.inner.lock().cmid = Some(id);
            r
        })
    };
    if let Err(e) = r {
        crate::cneterr!("{}: can't connect to {}: {:?}\n", ni.nid, peer, e);
        c.close(e.to_errno());
    }
    true
}

/// With `use_privileged_port`, binds the source to the first free port
/// from 1023 down to 512, as Lustre's `kiblnd_resolve_addr` does, so that
/// a peer with `require_privileged_port` accepts us; else the CM picks.
fn bind_source(ni: &IbNi, id: &CmId<Conn>) -> Result {
    if params::get(IbParam::UsePrivilegedPort) == 0 {
        return Ok(());
    }
    for port in (512..1024u16).rev() {
        match id.bind(ni.addr, port) {
            Ok(()) => return Ok(()),
            Err(e) if e == crate::kapi::errno::EADDRINUSE() => continue,
            Err(e) => return Err(e),
        }
    }
    crate::cerror!("{}: no privileged port left to connect from\n", ni.nid);
    Err(crate::kapi::errno::EADDRINUSE())
}

fn fail_waiting(ni: &IbNi, peer: &Nid, err: i32) {
    let w = ni
        .table
        .lock()
        .peer(peer)
        .map(|p| core::mem::take(&mut p.waiting))
        .unwrap_or_default();
    for t in w {
        t.done(err, health::connect_failed(err));
    }
}

/// Reasons for an NI's fatal state ([`IbNi::set_fatal`]): its port is
/// down or its device failed; its interface is down, without carrier or
/// without the NI's address; its device is being removed (for good).
const FATAL_PORT: u32 = 1;
const FATAL_LINK: u32 = 2;
const FATAL_GONE: u32 = 4;

/// The interface under a started NI changed, or its watch began
/// (`link_watch.c`): `down` when it is not running, has no carrier or lacks
/// the NI's address (Lustre's `kiblnd_handle_link_state_change` and
/// `kiblnd_inetaddr_event`). Only flags change: the notifiers run under
/// RTNL, where no message may be finalized.
impl LinkEvents for IbNi {
    fn link_event(ni: ArcBorrow<'_, IbNi>, down: bool) {
        link_event(&ni, down)
    }
}

fn link_event(ni: &IbNi, down: bool) {
    let was = ni.fatal.load(Ordering::Acquire) & FATAL_LINK != 0;
    if was == down {
        return;
    }
    if down {
        crate::cwarn!(
            "{}: {} is down or lost the NI's address: NI marked fatal\n",
            ni.nid,
            ni.ni.iface()
        );
    } else {
        crate::cdebug_limit!(
            crate::lnet_core::debug::D_HA,
            "{}: {} is up with the NI's address\n",
            ni.nid,
            ni.ni.iface()
        );
    }
    ni.set_fatal(FATAL_LINK, down);
}

/// The device's asynchronous events (`kiblnd_event_handler`): the NI's
/// port going down or up, or the device failing, sets or clears its fatal
/// state at once; connections fail by their own errors and timeouts.
impl IbAsyncEvents for IbNi {
    fn async_event(ni: ArcBorrow<'_, IbNi>, event: i32, port: u32) {
        async_event(&ni, event, port)
    }
}

fn async_event(ni: &IbNi, event: i32, port: u32) {
    match event {
        rdma::IB_EVENT_PORT_ERR if port == ni.port => {
            crate::cwarn!("{}: port {} down: NI marked fatal\n", ni.nid, port);
            ni.port_down.store(true, Ordering::Release);
            ni.set_fatal(FATAL_PORT, true);
        }
        rdma::IB_EVENT_PORT_ACTIVE if port == ni.port => {
            crate::cdebug_limit!(
                crate::lnet_core::debug::D_HA,
                "{}: port {} active again\n",
                ni.nid,
                port
            );
            ni.port_down.store(false, Ordering::Release);
            ni.set_fatal(FATAL_PORT, false);
            // What connd held back while the port was down.
            ni.wake_connd();
        }
        rdma::IB_EVENT_DEVICE_FATAL => {
            crate::cerror!("{}: RDMA device failed: NI marked fatal\n", ni.nid);
            ni.port_down.store(true, Ordering::Release);
            ni.set_fatal(FATAL_PORT, true);
        }
        _ => {}
    }
}

/// The scheduler (`kiblnd_scheduler`): handles the completions of the
/// connections the CQ handler queued.
fn sched_main(ni: ArcBorrow<'_, IbNi>) -> c_int {
    while !kthread::should_stop() {
        ni.sched_wq
            .wait_timeout(1000, || kthread::should_stop() || !ni.sched.is_empty());
        for c in ni.sched_take() {
            c.poll();
            kthread::cond_resched();
        }
    }
    0
}

/// connd (`kiblnd_connd`): wakes every second or when kicked.
fn connd_main(ni: ArcBorrow<'_, IbNi>) -> c_int {
    while !kthread::should_stop() {
        ni.connd_wq.wait_timeout(1000, || {
            kthread::should_stop() || ni.connd_kick.load(Ordering::Acquire)
        });
        ni.connd_kick.store(false, Ordering::Release);
        ni.expire_waiting();
        IbNi::reconnect_due(ni);
        ni.connd_pass();
    }
    0
}
