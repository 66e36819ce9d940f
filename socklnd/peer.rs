// SPDX-License-Identifier: GPL-2.0

//! The peers of one NI and the path of a message to them (Lustre's
//! `ksock_peer_ni` with its connection route): which connection carries
//! it, starting the connections a peer lacks, holding messages while they
//! come up, the reconnect backoff, and the keepalive NOOPs.
//!
//! Every peer, connection and connector of an NI sits in its [`Table`],
//! under one lock, so that "no connection yet, queue on the peer" and "a
//! connection came up, take the peer's queue" cannot miss each other.
//! Messages are finalized only outside that lock.

use crate::conn::{Conn, Tx};
use crate::connector::Connector;
use crate::kapi::errno;
use crate::kapi::kthread;
use crate::kapi::lnd::Refused;
use crate::kapi::lnd::TxMsg;
use crate::kapi::vec;
use crate::lnet_core::hdr::HDR_NID4_LEN;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::socklnd::{self, ConnType};
use crate::lnet_core::socklnd_conns::{self as rules, Backoff, Candidate, Frame};
use crate::lnet_core::socklnd_params::SockParam;
use crate::lnet_core::socklnd_path::{Stall, TcpTiming};
use crate::ni::SockNi;
use crate::params;
use kernel::prelude::*;
use kernel::rbtree::{RBTree, RBTreeNode};
use kernel::sync::Arc;

/// Live connections of one type a peer may open to us; Lustre's own limit
/// is its `conns_per_peer` (at most 127), which we do not know.
const MAX_CONNS_PER_TYPE: usize = 127;
/// Seconds before an unsent keepalive NOOP is tried again.
const KEEPALIVE_RETRY_MS: u64 = 10_000;

/// One peer NID of this NI (its key in [`Table`]).
pub(crate) struct SockPeer {
    /// The incarnation its live connections were made with.
    pub(crate) incarnation: Option<u64>,
    /// A connector is opening connections to it.
    pub(crate) connecting: bool,
    /// Handshakes from it accepted but not yet running.
    pub(crate) accepting: u32,
    /// We route to it (Lustre's `ksnp_conn_cb`): only then do we open
    /// connections to it (`socklnd_conns::launch`).
    route: bool,
    pub(crate) backoff: Backoff,
    /// Messages waiting for a connection, each with its deadline (ms).
    waiting: KVec<(Tx, u64)>,
    /// No keepalive NOOP before this time (ms).
    next_keepalive_ms: u64,
    /// Zero-copy requests it has not acknowledged, oldest first.
    pub(crate) zc: KVec<crate::zc::ZcReq>,
    /// The next zero-copy cookie.
    pub(crate) zc_next: u64,
    /// Its connections, the dead ones until the reaper takes them (each
    /// one retired by its scheduler before this reference goes).
    conns: KVec<Arc<Conn>>,
}

impl SockPeer {
    /// Whether we route to it: we open its connections.
    pub(crate) fn routed(&self) -> bool {
        self.route
    }

    /// Its connections not yet closed.
    pub(crate) fn live_conns(&self) -> impl Iterator<Item = &Arc<Conn>> + '_ {
        self.conns.iter().filter(|c| !c.is_dead())
    }

    /// Fails the messages waiting for a connection (the NI stops).
    pub(crate) fn fail_waiting(mut self, err: i32) {
        while let Some((tx, _)) = vec::pop(&mut self.waiting) {
            tx.fail(err, socklnd::txlist_status(err));
        }
        crate::zc::fail_all(&mut self.zc, err);
    }
}

/// An NI's peers, by NID, with their connections, and its connectors.
pub(crate) struct Table {
    peers: RBTree<Nid, SockPeer>,
    pub(crate) connectors: KVec<Arc<Connector>>,
    /// Set (under the lock) when the NI stops: nothing is added after.
    pub(crate) closed: bool,
}

impl Table {
    pub(crate) fn new() -> Table {
        Table {
            peers: RBTree::new(),
            connectors: KVec::new(),
            closed: false,
        }
    }

    /// The peers, in NID order.
    pub(crate) fn peers(&self) -> impl Iterator<Item = (&Nid, &SockPeer)> + '_ {
        self.peers.iter()
    }

    pub(crate) fn peer_mut(&mut self, nid: &Nid) -> Option<&mut SockPeer> {
        self.peers.get_mut(nid)
    }

    /// The peer's entry, made if needed.
    pub(crate) fn peer_or_insert(&mut self, nid: Nid) -> Result<&mut SockPeer> {
        if self.peers.get(&nid).is_none() {
            let p = SockPeer {
                incarnation: None,
                connecting: false,
                accepting: 0,
                route: false,
                backoff: Backoff::default(),
                waiting: KVec::new(),
                next_keepalive_ms: 0,
                zc: KVec::new(),
                zc_next: socklnd::FIRST_ZC_COOKIE,
                conns: KVec::new(),
            };
            self.peers.insert(RBTreeNode::new(nid, p, GFP_ATOMIC)?);
        }
        self.peers.get_mut(&nid).ok_or(ENOMEM)
    }

    /// Registers a connection with its peer.
    pub(crate) fn add_conn(&mut self, conn: &Arc<Conn>) -> Result {
        let p = self.peer_or_insert(conn.peer)?;
        p.conns.push(conn.clone(), GFP_ATOMIC)?;
        Ok(())
    }

    /// Takes out the first connection `pick` chooses, of any peer.
    pub(crate) fn take_conn(&mut self, pick: impl Fn(&Arc<Conn>) -> bool) -> Option<Arc<Conn>> {
        self.peers.iter_mut().find_map(|(_, p)| {
            let i = p.conns.iter().position(&pick)?;
            vec::remove(&mut p.conns, i)
        })
    }

    /// A connection not yet closed, of any peer.
    pub(crate) fn any_open(&self) -> Option<Arc<Conn>> {
        self.peers
            .iter()
            .find_map(|(_, p)| p.conns.iter().find(|c| !c.is_dead()))
            .cloned()
    }

    /// Takes out a peer (the NI stops): once its connections are gone.
    pub(crate) fn take_peer(&mut self) -> Option<SockPeer> {
        let nid = self
            .peers
            .iter()
            .find(|(_, p)| p.conns.is_empty())
            .map(|(n, _)| *n)?;
        self.peers.remove(&nid)
    }

    fn live(&self, nid: &Nid) -> impl Iterator<Item = &Arc<Conn>> + '_ {
        self.peers
            .get(nid)
            .into_iter()
            .flat_map(|p| p.conns.iter())
            .filter(|c| !c.is_dead())
    }

    /// Every connection to `nid`, dead or alive.
    pub(crate) fn conns_of(&self, nid: &Nid) -> KVec<Arc<Conn>> {
        let mut out = KVec::new();
        for c in self.peers.get(nid).into_iter().flat_map(|p| p.conns.iter()) {
            if out.push(c.clone(), GFP_ATOMIC).is_err() {
                break;
            }
        }
        out
    }

    /// Live connections of `ctype` to `nid`.
    pub(crate) fn count(&self, nid: &Nid, ctype: ConnType) -> usize {
        self.live(nid).filter(|c| c.ctype == ctype).count()
    }

    /// A live connection to `nid` exists.
    pub(crate) fn connected(&self, nid: &Nid) -> bool {
        self.live(nid).next().is_some()
    }

    /// The connection that should carry `frame` to `nid`, and whether
    /// every type an active side opens is up, the peer's own connections
    /// counting by their mirrored type (`rules::wanted` is `None`).
    fn route(&self, nid: &Nid, frame: Frame) -> (Option<Arc<Conn>>, bool) {
        let min_bulk = usize::try_from(params::get(SockParam::MinBulk)).unwrap_or(0);
        let best = rules::choose_by(
            self.live(nid),
            |c| Candidate {
                ctype: c.ctype,
                queued: c.queued(),
            },
            frame,
            min_bulk,
        );
        let complete = rules::wanted(self.live(nid).map(|c| c.ctype)).is_none();
        (best.cloned(), complete)
    }

    /// The connection that should carry `frame` to `nid`.
    pub(crate) fn choose(&self, nid: &Nid, frame: Frame) -> Option<Arc<Conn>> {
        self.route(nid, frame).0
    }

    /// Whether a passive connection of `ctype` from `nid` would be one
    /// too many.
    pub(crate) fn duplicate(&self, nid: &Nid, ctype: ConnType) -> bool {
        self.count(nid, ctype) >= MAX_CONNS_PER_TYPE
    }

    /// A connection to the peer came up: it takes every message waiting
    /// for the peer that it may carry.
    pub(crate) fn adopt_waiting(&mut self, conn: &Arc<Conn>) -> Result {
        let Some(p) = self.peer_mut(&conn.peer) else {
            return Ok(());
        };
        let mut i = 0;
        while let Some((tx, _)) = p.waiting.get(i) {
            if rules::match_frame(conn.ctype, tx.frame(), 0) == rules::Match::No {
                i += 1;
                continue;
            }
            let Some((tx, deadline)) = vec::remove(&mut p.waiting, i) else {
                break;
            };
            if let Err((tx, e)) = conn.queue_locked(tx) {
                // Back where it was; it waits for another connection.
                let _ = p.waiting.push((tx, deadline), GFP_ATOMIC);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Takes every waiting message of `nid` if nothing could carry them
    /// any more: no live connection, none being made or accepted.
    pub(crate) fn orphans(&mut self, nid: &Nid) -> KVec<Tx> {
        let stranded = !self.connected(nid);
        let Some(p) = self.peer_mut(nid) else {
            return KVec::new();
        };
        if !stranded || p.connecting || p.accepting > 0 {
            return KVec::new();
        }
        let mut out = KVec::new();
        if out.reserve(p.waiting.len(), GFP_ATOMIC).is_err() {
            // Left to their deadlines.
            return out;
        }
        while let Some((tx, _)) = vec::pop(&mut p.waiting) {
            // Cannot fail: the room is reserved.
            let _ = out.push(tx, GFP_ATOMIC);
        }
        out
    }
}

/// Milliseconds of `sock_timeout`.
pub(crate) fn timeout_ms() -> u64 {
    u64::from(params::timeout_secs()).saturating_mul(1000)
}

fn reconnect_bounds() -> (u64, u64) {
    let ms = |p| u64::try_from(params::get(p)).unwrap_or(1);
    (ms(SockParam::MinReconnectMs), ms(SockParam::MaxReconnectMs))
}

/// Finalizes messages that will not be sent, outside the table lock.
pub(crate) fn fail_all(txs: KVec<Tx>, err: i32, hstatus: Status) {
    for tx in txs {
        tx.fail(err, hstatus);
    }
}

/// What happened to a message handed to [`send`].
enum Placed {
    Queued(Arc<Conn>),
    Waiting,
    NoRoute(Tx),
}

/// Sends a message LNet handed us (`lnd_send`, `ksocknal_launch_packet`):
/// on a connection to the peer if one is up, else held for the ones being
/// made. With none up and none coming (a recent connect failed and the
/// backoff has not run out), it is refused with `EHOSTUNREACH` and
/// REMOTE_ERROR, at once.
pub(crate) fn send(sni: &SockNi, t: TxMsg) -> Result<(), Refused> {
    let desc = t.desc();
    if desc.hdr_len as usize != HDR_NID4_LEN {
        // Hello V3 carries NID4 headers only.
        return Err(t.into_msg().refuse(errno::EHOSTUNREACH(), None));
    }
    let peer = match crate::kapi::lnet_abi::nid_from_c(&desc.target.nid) {
        Ok(p) if p.addr4().is_some() => p,
        Ok(_) => return Err(t.into_msg().refuse(errno::EHOSTUNREACH(), None)),
        Err(e) => return Err(t.into_msg().refuse(e, None)),
    };
    let tx = Tx::Lnet(t);
    let frame = tx.frame();
    let now = kthread::now_ms();
    let mut start = false;
    let placed = {
        let mut t = sni.table.lock();
        if t.closed {
            return Err(tx.into_msg().refuse(errno::ESHUTDOWN(), None));
        }
        let (chosen, complete) = t.route(&peer, frame);
        let connected = t.connected(&peer);
        let p = match t.peer_or_insert(peer) {
            Ok(p) => p,
            Err(e) => return Err(tx.into_msg().refuse(e, None)),
        };
        let (connect, route) = rules::launch(&rules::PeerState {
            route: p.route,
            connected,
            accepting: p.accepting > 0,
            complete,
            connecting: p.connecting,
            may_connect: p.backoff.may_connect(now),
        });
        p.route = route;
        if connect {
            p.connecting = true;
            start = true;
        }
        // A refused message goes back to LNet with the error, but only
        // once a connector marked as started has been started.
        if let Some(c) = chosen {
            c.queue_locked(tx)
                .map(|()| Placed::Queued(c))
                .map_err(|(tx, e)| tx.into_msg().refuse(e, None))
        } else if p.connecting || p.accepting > 0 {
            let deadline = now.saturating_add(timeout_ms());
            crate::kapi::vec::push_or_back(&mut p.waiting, (tx, deadline), GFP_ATOMIC)
                .map(|()| Placed::Waiting)
                .map_err(|(tx, _)| tx.into_msg().refuse(ENOMEM, None))
        } else {
            Ok(Placed::NoRoute(tx))
        }
    };
    if start {
        Connector::start(sni, peer);
    }
    match placed? {
        Placed::Queued(c) => {
            c.wake_tx();
            Ok(())
        }
        Placed::Waiting => Ok(()),
        Placed::NoRoute(tx) => Err(tx
            .into_msg()
            .refuse(errno::EHOSTUNREACH(), Some(Status::RemoteError))),
    }
}

/// A connector finished with `nid`: the backoff moves on, and if nothing
/// can carry the peer's waiting messages, they fail, with its error or, if
/// it connected, ECONNRESET.
pub(crate) fn connect_done(sni: &SockNi, nid: &Nid, err: Option<i32>, raced: bool) {
    let now = kthread::now_ms();
    let (min, max) = reconnect_bounds();
    let orphans = {
        let mut t = sni.table.lock();
        let connected = t.connected(nid);
        let Some(p) = t.peer_mut(nid) else {
            return;
        };
        p.connecting = false;
        match err {
            None => p.backoff.connected(),
            Some(_) if raced => p.backoff.raced(now, min),
            Some(_) => p.backoff.failed(now, min, max),
        }
        if connected {
            p.backoff.connected();
        }
        if raced {
            // The peer's own connections are coming; the messages wait for
            // them until their deadline.
            KVec::new()
        } else {
            t.orphans(nid)
        }
    };
    // Orphans after a connect that worked: its connections died already
    // (the peer reset them), and what waited for them fails as their own
    // queues did (Lustre hands them to the last, dying connection).
    let e = err.unwrap_or_else(|| errno::ECONNRESET().to_errno());
    fail_all(orphans, e, socklnd::txlist_status(e));
}

/// Acts on each connection whose sending has stalled. Past
/// `sock_timeout` (`ksocknal_find_timed_out_conn`) it is closed with every
/// other connection to the same peer NI, and what was queued on them fails
/// over. A path TCP's evidence calls silent (lnet-core `socklnd_path`)
/// keeps its connection, for TCP to deliver what it holds should the path
/// come back (the peer, which may not hear a close, keeps its end too); the
/// messages still queued behind it, never on the wire, end REMOTE_DROPPED:
/// the peer NI's health falls, and LNet sends them again over another
/// path. A connection whose incoming frame has stopped mid-way for
/// `sock_timeout` is closed with its siblings too. Run by the reaper every
/// [`PATH_WATCH_MS`], so that a silent path is left within about a second.
pub(crate) fn watch_paths(sni: &SockNi) {
    let now = kthread::now_ms();
    let timeout = timeout_ms();
    let silent_path = params::get(SockParam::SilentPath) != 0;
    let mut stalled: KVec<(Arc<Conn>, Stall, u64, TcpTiming)> = KVec::new();
    let mut rx_stalled: KVec<Arc<Conn>> = KVec::new();
    {
        let t = sni.table.lock();
        for p in t.peers.values() {
            for c in p.conns.iter().filter(|c| !c.is_dead()) {
                if c.rx_stalled(now, timeout) {
                    // Without room, the next watch finds it again.
                    let _ = rx_stalled.push(c.clone(), GFP_ATOMIC);
                    continue;
                }
                if let Some((why, ms, tcp)) = c.tx_stall(now, timeout, silent_path) {
                    // Without room, the next watch finds it again.
                    let _ = stalled.push((c.clone(), why, ms, tcp), GFP_ATOMIC);
                }
            }
        }
    }
    // A frame stopped mid-way: what a receive's socket timeout did when
    // receives blocked.
    for c in rx_stalled {
        c.close_with_siblings(errno::ETIMEDOUT().to_errno());
    }
    for (c, why, ms, tcp) in stalled {
        match why {
            Stall::TimedOut => {
                crate::cneterr!(
                    "{}: no progress sending to {} for {} s: closing its connections\n",
                    sni.nid,
                    c.peer,
                    timeout / 1000
                );
                c.close_with_siblings(errno::ETIMEDOUT().to_errno());
            }
            Stall::Silent => {
                let unsent = c.take_unsent();
                // Said once per silence, and whenever it holds messages back.
                if c.mark_silent() || !unsent.is_empty() {
                    crate::cneterr!(
                        "{}: no progress sending to {} for {} ms, {} retransmission timeouts (RTT {} us): path silent, {} queued message(s) go elsewhere\n",
                        sni.nid,
                        c.peer,
                        ms,
                        tcp.rto_retransmits,
                        tcp.srtt_us,
                        unsent.len()
                    );
                }
                for tx in unsent {
                    tx.fail(errno::ETIMEDOUT().to_errno(), Status::RemoteDropped);
                }
            }
        }
    }
}

/// How often the reaper looks for stalled connections (ms).
pub(crate) const PATH_WATCH_MS: u32 = 100;

/// The reaper's periodic work on the peers (every second or so): messages
/// waiting past their deadline fail with `ETIMEDOUT` (NETWORK_TIMEOUT,
/// `ksocknal_flush_stale_txs`); peers not heard from for `keepalive`
/// seconds get a NOOP; peers with nothing left are forgotten.
pub(crate) fn tick(sni: &SockNi) {
    let now = kthread::now_ms();
    let keepalive_ms = u64::try_from(params::get(SockParam::Keepalive))
        .unwrap_or(0)
        .saturating_mul(1000);
    let (_, max_reconnect) = reconnect_bounds();
    let mut stale = KVec::new();
    let mut pings: KVec<Arc<Conn>> = KVec::new();
    let mut stale_zc: KVec<(Nid, usize, u64)> = KVec::new();
    {
        let mut t = sni.table.lock();
        let mut nids = KVec::new();
        for nid in t.peers.keys() {
            // Without room for the list, the peers wait for the next tick.
            if nids.push(*nid, GFP_ATOMIC).is_err() {
                break;
            }
        }
        for nid in nids {
            let last_alive = t.live(&nid).map(|c| c.last_rx_ms()).max();
            let ping = match (last_alive, t.peers.get(&nid)) {
                (Some(alive), Some(p)) => {
                    keepalive_ms > 0
                        && now >= alive.saturating_add(keepalive_ms)
                        && now >= p.next_keepalive_ms
                }
                _ => false,
            };
            if ping {
                // The ACK connection; a NOOP already queued is enough.
                if let Some(c) = t.choose(&nid, Frame::NonBlockingNoop) {
                    if c.queued() == 0 {
                        let _ = pings.push(c, GFP_ATOMIC);
                    }
                }
            }
            let connected = last_alive.is_some();
            let Some(p) = t.peers.get_mut(&nid) else {
                continue;
            };
            if ping {
                p.next_keepalive_ms = now.saturating_add(KEEPALIVE_RETRY_MS);
            }
            if let Some((n, late)) = crate::zc::stale(&p.zc, now) {
                let _ = stale_zc.push((nid, n, late), GFP_ATOMIC);
            }
            let mut j = 0;
            while let Some((_, deadline)) = p.waiting.get(j) {
                if now < *deadline {
                    j += 1;
                    continue;
                }
                if stale.reserve(1, GFP_ATOMIC).is_err() {
                    // No room to fail it now: the next tick will.
                    break;
                }
                if let Some((tx, _)) = vec::remove(&mut p.waiting, j) {
                    // Cannot fail: the room is reserved.
                    let _ = stale.push(tx, GFP_ATOMIC);
                }
            }
            // A peer whose connects failed is kept (with its backoff, which
            // must go on doubling) until a full `max_reconnectms` has passed
            // since its next attempt was due.
            let forgotten =
                p.backoff.interval_ms == 0 || now > p.backoff.next_ms.saturating_add(max_reconnect);
            let idle = !connected
                && !p.connecting
                && p.accepting == 0
                && p.waiting.is_empty()
                && p.zc.is_empty()
                && p.conns.is_empty()
                && forgotten;
            if idle {
                drop(t.peers.remove(&nid));
            }
        }
    }
    for (nid, n, late) in stale_zc {
        // The peer never acknowledged them: its connections are closed,
        // which fails them (`ksocknal_check_peer_timeouts`).
        crate::cerror!(
            "{}: {} stale ZC_REQs for peer {} detected; the oldest timed out {} s ago\n",
            sni.nid,
            n,
            nid,
            late / 1000
        );
        sni.close_conns_of(&nid, errno::ETIMEDOUT().to_errno());
    }
    for c in pings {
        c.send_keepalive();
    }
    fail_all(stale, errno::ETIMEDOUT().to_errno(), Status::NetworkTimeout);
}
