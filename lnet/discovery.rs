// SPDX-License-Identifier: GPL-2.0

//! Discovery (selection.md §8): a peer's NIDs are learnt from its ping
//! buffer, and our own buffer is pushed to Multi-Rail peers when it
//! changes.
//!
//! The first message to a peer that is not up to date waits here while
//! the `lnet_discovery` thread pings the peer, merges what the REPLY says
//! (NIDs, Multi-Rail, each NI's status) and, for a Multi-Rail peer, pushes
//! our buffer; then the message is sent again, or ended with discovery's
//! error. The decisions are lnet-core's (`discovery`); this file holds the
//! queues, the thread and the ping/push MDs.
//!
//! Locks: `peers`, then `discovery`. Event handlers take them in that
//! order too; nothing is sent or finalized under either.

use crate::kapi::bindings::lnet_event;
use crate::kapi::errno::{EALREADY, EHOSTUNREACH, ENETRESET, EPROTO, ESHUTDOWN, ETIMEDOUT};
use crate::kapi::kthread::{self, Thread};
use crate::lnet_core::discovery::{self as dc, state, Conflict, PushOutcome, Step, View};
use crate::lnet_core::hdr::MsgBody;
use crate::lnet_core::health::{self, Status};
use crate::lnet_core::md::{options, EventKind};
use crate::lnet_core::nid::Nid;
use crate::lnet_core::ping::{self, NiStatus, PingInfo};
use crate::msg::Msg;
use crate::own_md::{self, MdMemory, MdOwner};
use crate::params;
use crate::peer::{Peer, Peers};
use crate::state::TheLnet;
use core::ffi::c_int;
use core::sync::atomic::Ordering::Relaxed;
use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A peer's discovery state (the `lp_state` bits that are not kept as
/// [`Peer`] fields, and what discovery keeps beside them).
#[derive(Default)]
pub(crate) struct PeerDisc {
    /// `lp_state` without MULTI_RAIL, CONFIGURED and LOCK_PRIMARY.
    pub(crate) state: u32,
    /// Our buffer's sequence number the peer has seen (`lp_node_seqno`).
    pub(crate) node_seqno: u32,
    /// The peer's buffer's sequence number (`lp_peer_seqno`).
    pub(crate) peer_seqno: u32,
    /// Bytes the peer's buffer needs (`lp_data_bytes`).
    pub(crate) data_bytes: usize,
    /// A REPLY's or push's buffer not merged yet.
    pub(crate) data: Option<KVec<u8>>,
    /// Its sequence number.
    pub(crate) data_seq: u32,
    /// Why the last discovery failed (`lp_dc_error`).
    pub(crate) error: i32,
    ping_error: i32,
    push_error: i32,
    /// Names the ping or push out, so that events of an older one are
    /// ignored.
    gen: u64,
    ping_md: u64,
    push_md: u64,
}

/// Peers queued for the thread, and messages waiting for discovery.
#[derive(Default)]
pub(crate) struct Queue {
    /// Primary NIDs of peers to look at (`ln_dc_request`).
    request: KVec<Nid>,
    /// Messages whose peer is being discovered (`lp_dc_pendq`).
    pending: KVec<KBox<Msg>>,
}

impl Peer {
    /// `lp_state` as Lustre keeps it.
    pub(crate) fn lp_state(&self) -> u32 {
        let mut s = self.disc.state;
        if self.multi_rail {
            s |= state::MULTI_RAIL;
        }
        if self.configured {
            s |= state::CONFIGURED;
        }
        if self.lock_primary {
            s |= state::LOCK_PRIMARY;
        }
        s
    }

    /// Takes a new `lp_state`: MULTI_RAIL to `multi_rail` (clearing the
    /// preferred NIs a Multi-Rail peer does not use), the rest kept.
    fn set_lp_state(&mut self, s: u32) {
        let mr = s & state::MULTI_RAIL != 0;
        if mr && !self.multi_rail {
            for x in self.nis.iter_mut() {
                x.pref_nid = None;
            }
        }
        self.multi_rail = mr;
        self.disc.state = s & !(state::MULTI_RAIL | state::CONFIGURED | state::LOCK_PRIMARY);
    }

    fn view(&self, lnet: &TheLnet) -> View {
        View {
            state: self.lp_state(),
            node_seqno: self.disc.node_seqno,
            target_seqno: lnet.ping_seq.load(Relaxed),
            discovery_disabled: params::snapshot().peer_discovery_disabled != 0,
        }
    }
}

/// Queues `p` for the thread (`lnet_peer_queue_for_discovery`); false if
/// there was no room.
fn queue(p: &mut Peer, q: &mut Queue) -> bool {
    p.disc.state |= state::DISCOVERING;
    if q.request.contains(&p.primary) {
        return true;
    }
    q.request.push(p.primary, GFP_ATOMIC).is_ok()
}

/// Queues a router check of gateway `p` (`lnet_check_routers`): pinged
/// even if up to date. False if there was no room.
pub(crate) fn queue_router_check(lnet: &TheLnet, p: &mut Peer) -> bool {
    p.disc.state = (p.disc.state & !state::NIDS_UPTODATE) | state::FORCE_PING;
    p.disc.error = 0;
    let mut q = lnet.discovery.lock();
    queue(p, &mut q)
}

/// Wakes the discovery thread: a peer was queued, or a push used a push
/// buffer, which the thread posts again at once.
pub(crate) fn wake(lnet: &TheLnet) {
    lnet.dc_work.store(true, Relaxed);
    lnet.dc_wait.wake();
}

/// Whether `nid` is on a net of ours. A peer elsewhere is reached through
/// a gateway, if at all, and is not discovered (a decision: Lustre
/// discovers it through the gateway, and discovers the gateway first;
/// lnet-rs does not forward yet, so no gateway of ours would answer).
fn reachable(lnet: &TheLnet, nid: &Nid) -> bool {
    let nis = lnet.nis.lock();
    nis.nis
        .iter()
        .any(|n| n.is_active() && n.nid.net() == nid.net())
}

/// The discovery gate of `lnet_send` (selection.md §1 step 4): a message
/// to a peer that is not up to date waits for its discovery. Returns the
/// message if it goes on now.
pub(crate) fn gate(lnet: &TheLnet, m: KBox<Msg>) -> Option<KBox<Msg>> {
    let reserved = matches!(
        m.hdr.msg,
        MsgBody::Get { ptl_index: 0, .. } | MsgBody::Put { ptl_index: 0, .. }
    );
    let response = matches!(m.hdr.msg, MsgBody::Ack { .. } | MsgBody::Reply { .. });
    let dest = m.hdr.dest_nid;
    let running = lnet.is_running() && lnet.dc_running.load(Relaxed);
    if !dc::msg_waits(reserved, response) || dest == Nid::LO || !running {
        return Some(m);
    }
    // A NID on no net of ours is left for selection to refuse.
    if !reachable(lnet, &dest) {
        return Some(m);
    }
    let mut peers = lnet.peers.lock();
    let Ok((pi, _)) = peers.find_or_create(&dest) else {
        return Some(m);
    };
    let Some(p) = peers.list.get_mut(pi) else {
        return Some(m);
    };
    if dc::is_uptodate(&p.view(lnet)) {
        return Some(m);
    }
    // `lnet_discover_peer_locked`: a new attempt after a failed one.
    p.disc.error = 0;
    let mut q = lnet.discovery.lock();
    if q.pending.reserve(1, GFP_ATOMIC).is_err() || !queue(p, &mut q) {
        // No room to wait: sent as things stand.
        return Some(m);
    }
    // Cannot fail: reserved above.
    let _ = q.pending.push(m, GFP_ATOMIC);
    drop(q);
    drop(peers);
    crate::cnet!("Message to {} waits for discovery\n", dest);
    wake(lnet);
    None
}

/// Sends again, or ends with discovery's error, the waiting messages
/// whose peer is no longer being discovered (`lnet_peer_discovery_complete`).
/// A message whose peer went (deleted, merged) goes through the gate again.
fn release(lnet: &TheLnet) {
    loop {
        let next = {
            let peers = lnet.peers.lock();
            let mut q = lnet.discovery.lock();
            let found = q.pending.iter().enumerate().find_map(|(i, m)| {
                match peers
                    .find(&m.hdr.dest_nid)
                    .and_then(|(pi, _)| peers.list.get(pi))
                {
                    Some(p) if p.disc.state & state::DISCOVERING != 0 => None,
                    Some(p) => Some((i, p.disc.error)),
                    None => Some((i, 0)),
                }
            });
            found.and_then(|(i, e)| Some((crate::kapi::vec::remove(&mut q.pending, i)?, e)))
        };
        let Some((m, error)) = next else {
            return;
        };
        if error != 0 {
            crate::cnet!("Discovery of {} failed: {}\n", m.hdr.dest_nid, error);
            crate::msg::finalize(lnet, m, error, Status::Ok);
        } else {
            crate::send::send(lnet, m);
        }
    }
}

/// Entries a ping buffer may list (`lnet_interfaces_max`, at least 16).
fn interfaces_max() -> u32 {
    u32::try_from(params::snapshot().interfaces_max.max(16)).unwrap_or(16)
}

/// What a ping or push MD is for; its MD holds it until its final event.
struct DcMd {
    primary: Nid,
    push: bool,
    gen: u64,
    /// The push's sequence number.
    seq: u32,
    mem: MdMemory,
}

/// The peer a discovery MD's events are for, if it still exists and the
/// MD is its current one.
fn peer_of<'a>(peers: &'a mut Peers, d: &DcMd) -> Option<&'a mut Peer> {
    let (pi, _) = peers.find(&d.primary)?;
    peers.list.get_mut(pi).filter(|p| p.disc.gen == d.gen)
}

impl MdOwner for DcMd {
    fn memory(&self) -> &MdMemory {
        &self.mem
    }

    fn event(&self, lnet: &TheLnet, ev: &lnet_event) {
        let mut peers = lnet.peers.lock();
        let Some(p) = peer_of(&mut peers, self) else {
            return;
        };
        let kind = ev.type_;
        let before = p.disc.state;
        if self.push {
            push_event(p, self, kind, ev.status, ev.unlinked != 0);
        } else {
            ping_event(lnet, p, self, ev);
        }
        if p.disc.state != before {
            let mut q = lnet.discovery.lock();
            let _ = queue(p, &mut q);
            drop(q);
            drop(peers);
            wake(lnet);
        }
    }
}

fn push_event(p: &mut Peer, d: &DcMd, kind: u32, status: c_int, unlinked: bool) {
    if p.disc.state & state::PUSH_SENT == 0 {
        return;
    }
    let failed = if kind == EventKind::Ack as u32 && status == 0 {
        p.disc.node_seqno = p.disc.node_seqno.max(d.seq);
        p.disc.state &= !state::PUSH_SENT;
        return;
    } else if status != 0 {
        status
    } else if unlinked {
        // The tracker gave up waiting for the ACK.
        ETIMEDOUT().to_errno()
    } else {
        return;
    };
    p.disc.state = (p.disc.state & !state::PUSH_SENT) | state::PUSH_FAILED;
    p.disc.push_error = failed;
}

fn ping_failed(p: &mut Peer, error: i32) {
    p.disc.state = (p.disc.state & !state::PING_SENT) | state::PING_FAILED;
    p.disc.ping_error = error;
}

fn ping_event(lnet: &TheLnet, p: &mut Peer, d: &DcMd, ev: &lnet_event) {
    if p.disc.state & state::PING_SENT == 0 {
        return;
    }
    if ev.status != 0 {
        ping_failed(p, ev.status);
        return;
    }
    if ev.type_ != EventKind::Reply as u32 {
        if ev.unlinked != 0 {
            ping_failed(p, ETIMEDOUT().to_errno());
        }
        return;
    }
    let t = params::snapshot();
    // SAFETY: the REPLY event: its receive has ended, and no other comes
    // (a GET's MD takes one REPLY).
    let data = unsafe { d.mem.bytes(ev.mlength as usize) };
    let info = match PingInfo::parse(data, interfaces_max()) {
        Ok(info) => info,
        Err(e) => {
            // Lustre pings such a peer again and again; we end its
            // discovery (a decision: a peer that answers garbage once
            // will do it again).
            // Lustre's "Corrupted Ping Reply" (D_NET); the discovery
            // fails with EPROTO.
            crate::cdebug_limit!(
                crate::lnet_core::debug::D_NET,
                "Bad ping reply from {}: {}\n",
                p.primary,
                e
            );
            ping_failed(p, EPROTO().to_errno());
            return;
        }
    };
    let (s, conflict) =
        dc::apply_reply_features(p.lp_state(), info.features, t.peer_discovery_disabled != 0);
    match conflict {
        Some(Conflict::SaysMultiRail) => {
            crate::cwarn!("Reply says {} is Multi-Rail, DLC says not\n", p.primary)
        }
        Some(Conflict::SaysNotMultiRail) => {
            crate::cwarn!("DLC says {} is Multi-Rail, Reply says not\n", p.primary)
        }
        Some(Conflict::MultiRailVanished) => {
            crate::cerror!("Multi-Rail state vanished from {}\n", p.primary)
        }
        None => {}
    }
    p.set_lp_state(s);
    p.disc.data_bytes = p.disc.data_bytes.max(info.needed_len());
    if !info.is_complete() {
        // Pinged again with room for all of it; a push from it would not
        // fit either (`lnet_discovery_event_reply`).
        crate::push::grow(lnet, info.needed_len());
        ping_failed(p, 0);
        return;
    }
    if info.features & ping::features::MULTI_RAIL != 0 && info.primary() == Some(p.primary) {
        p.disc.peer_seqno = info.sequence();
    }
    let Ok(copy) = KVec::from_elem(0u8, data.len(), GFP_ATOMIC) else {
        ping_failed(p, ENOMEM.to_errno());
        return;
    };
    let mut copy = copy;
    copy.copy_from_slice(data);
    p.disc.data = Some(copy);
    p.disc.data_seq = info.sequence();
    p.disc.state = (p.disc.state & !state::PING_SENT) | state::DATA_PRESENT;
}

/// A push from `from` (`lnet_peer_push_event`), already validated or not
/// (`info`); `complete` says whether all of it arrived.
pub(crate) fn push_received(lnet: &TheLnet, from: Nid, data: &[u8], info: Option<PingInfo<'_>>) {
    let t = params::snapshot();
    let copy = info.and_then(|_| {
        let mut c = KVec::from_elem(0u8, data.len(), GFP_ATOMIC).ok()?;
        c.copy_from_slice(data);
        Some(c)
    });
    let mut peers = lnet.peers.lock();
    let Some((pi, _)) = peers.find(&from) else {
        crate::cnet!("Push from unknown {}: ignored\n", from);
        return;
    };
    let Some(p) = peers.list.get_mut(pi) else {
        return;
    };
    let mut stale = None;
    let (valid, complete, feats) = match info {
        Some(i) => (copy.is_some(), i.is_complete(), i.features),
        None => (false, false, 0),
    };
    if let Some(i) = info {
        p.disc.data_bytes = p.disc.data_bytes.max(i.needed_len());
    }
    match dc::apply_push(
        p.lp_state(),
        valid,
        complete,
        feats,
        t.peer_discovery_disabled != 0,
    ) {
        PushOutcome::NotMultiRail => {
            crate::cerror!("Push from non-Multi-Rail peer {} dropped\n", p.primary);
            return;
        }
        PushOutcome::Ping(s) => p.set_lp_state(s),
        PushOutcome::Store(s) => {
            p.set_lp_state(s);
            let seq = info.map_or(0, |i| i.sequence());
            p.disc.peer_seqno = seq;
            let pending = p.disc.data.as_ref().map(|_| p.disc.data_seq);
            if dc::push_replaces(pending, seq) {
                p.disc.data = copy;
                p.disc.data_seq = seq;
            } else {
                stale = Some((p.primary, seq, p.disc.data_seq));
            }
        }
    }
    let mut q = lnet.discovery.lock();
    let _ = queue(p, &mut q);
    drop(q);
    drop(peers);
    if let Some((primary, seq, pending)) = stale {
        let mut c = lnet.pushes.lock();
        c.stale = c.stale.wrapping_add(1);
        drop(c);
        crate::cnet!(
            "Stale push from {} dropped: sequence {}, {} waiting to be merged\n",
            primary,
            seq,
            pending
        );
    }
    wake(lnet);
}

/// Binds an MD over `d`'s memory and sends the ping (GET) or push (PUT
/// with ACK) to `d.primary`; the MD's cookie.
fn send_md(lnet: &TheLnet, d: DcMd) -> Result<u64> {
    let (push, target) = (d.push, d.primary);
    let d = Arc::new(d, GFP_KERNEL)?;
    // The request's SEND and the REPLY or ACK.
    let md = own_md::bind(lnet, d, 2, options::TRUNCATE | options::TRACK_RESPONSE)?;
    // Should it not go, the unlink's final event, with the error, fails
    // the ping or push.
    own_md::send_or_unlink(lnet, own_md::reserved_request(md, target, push), true)?;
    Ok(md)
}

/// Ends a peer's discovery (`lnet_peer_discovery_complete`); the waiting
/// messages go once `release` sees it.
fn complete(p: &mut Peer, error: i32) {
    p.disc.state &= !state::DISCOVERING;
    if error != 0 {
        p.disc.error = error;
        p.disc.state |= state::REDISCOVER;
    }
}

/// One step of a queued peer's discovery (`lnet_peer_discovery`'s loop).
fn step(lnet: &TheLnet, nid: Nid) {
    // Read before `peers`, which comes after `nis`.
    let local = crate::router_check::LocalNets::read(lnet);
    let mut peers = lnet.peers.lock();
    let Some(pi) = peers.find(&nid).map(|(pi, _)| pi) else {
        return;
    };
    let Some(p) = peers.list.get_mut(pi) else {
        return;
    };
    let view = p.view(lnet);
    let primary = p.primary;
    match dc::next_step(&view) {
        Step::Delete => {
            if p.configured {
                p.disc.state &= !state::MARK_DELETION;
                requeue(lnet, p);
            } else {
                crate::cnet!("Peer {} turned discovery off: deleted\n", primary);
                crate::kapi::vec::remove(&mut peers.list, pi);
            }
        }
        Step::Merge => {
            p.disc.state = (p.disc.state & !state::DATA_PRESENT) | state::NIDS_UPTODATE;
            let data = p.disc.data.take();
            drop(peers);
            if let Some(data) = data {
                merge(lnet, primary, &data);
            }
            let mut peers = lnet.peers.lock();
            if let Some(p) = peers
                .find(&primary)
                .and_then(|(pi, _)| peers.list.get_mut(pi))
            {
                requeue(lnet, p);
            }
        }
        Step::PingFailed | Step::PushFailed => {
            let ping = view.state & state::PING_FAILED != 0;
            let (error, md) = if ping {
                p.disc.state = (p.disc.state & !state::PING_FAILED) | state::FORCE_PING;
                (
                    core::mem::take(&mut p.disc.ping_error),
                    core::mem::take(&mut p.disc.ping_md),
                )
            } else {
                // The peer has not seen our buffer: its sequence stays,
                // so the next message to it that waits for discovery
                // pushes again (`lnet_peer_push_failed` leaves
                // `lp_node_seqno`), as when a peer lost our push while
                // it restarted its LND.
                p.disc.state &= !state::PUSH_FAILED;
                (
                    core::mem::take(&mut p.disc.push_error),
                    core::mem::take(&mut p.disc.push_md),
                )
            };
            if error != 0 {
                complete(p, error);
                crate::router_check::discovery_done(&mut peers, pi, error);
            } else {
                requeue(lnet, p);
            }
            drop(peers);
            if md != 0 {
                let _ = crate::api::md_unlink(lnet, md, false, 0);
            }
        }
        Step::Wait => {}
        Step::Ping | Step::Push => {
            let push = dc::next_step(&view) == Step::Push;
            let sent = if push {
                p.disc.state = (p.disc.state & !state::FORCE_PUSH) | state::PUSH_SENT;
                state::PUSH_SENT
            } else {
                p.disc.state = (p.disc.state & !state::FORCE_PING) | state::PING_SENT;
                state::PING_SENT
            };
            p.disc.gen = p.disc.gen.wrapping_add(1);
            let gen = p.disc.gen;
            // A gateway's primary NID may be on a net reached only
            // through it: it is pinged on a net we share.
            let target = crate::router_check::ping_target(p, &local);
            let bytes = dc::reply_bytes(p.disc.data_bytes);
            drop(peers);
            let buf = if push {
                crate::ping::current_buffer(lnet)
            } else {
                KVec::from_elem(0u8, bytes, GFP_KERNEL).map_err(Error::from)
            };
            let seq = buf
                .as_ref()
                .ok()
                .and_then(|b| PingInfo::parse(b, u32::MAX).ok())
                .map_or(0, |i| i.sequence());
            let sent_md = buf.and_then(|buf| {
                send_md(
                    lnet,
                    DcMd {
                        primary: target,
                        push,
                        gen,
                        seq,
                        mem: MdMemory::new(buf),
                    },
                )
            });
            let mut peers = lnet.peers.lock();
            let Some(p) = peers
                .find(&primary)
                .and_then(|(pi, _)| peers.list.get_mut(pi))
                .filter(|p| p.disc.gen == gen)
            else {
                return;
            };
            match sent_md {
                Ok(md) if push => p.disc.push_md = md,
                Ok(md) => p.disc.ping_md = md,
                // Still ours to settle only if no event did.
                Err(e) if p.disc.state & sent != 0 => {
                    p.disc.state &= !sent;
                    if push {
                        p.disc.state |= state::PUSH_FAILED;
                        p.disc.push_error = e.to_errno();
                    } else {
                        p.disc.state |= state::PING_FAILED;
                        p.disc.ping_error = e.to_errno();
                    }
                    requeue(lnet, p);
                }
                Err(_) => {}
            }
        }
        Step::Discovered => {
            p.disc.state = (p.disc.state | state::DISCOVERED) & !state::REDISCOVER;
            p.disc.error = 0;
            crate::cnet!("Peer {} discovered, state {:#x}\n", primary, p.lp_state());
            complete(p, 0);
            crate::router_check::discovery_done(&mut peers, pi, 0);
        }
    }
}

fn requeue(lnet: &TheLnet, p: &mut Peer) {
    let mut q = lnet.discovery.lock();
    let _ = queue(p, &mut q);
    lnet.dc_work.store(true, Relaxed);
}

/// Merges a peer's ping buffer into the peer (`lnet_peer_data_present`,
/// `lnet_peer_merge_data`): its primary NID, its NIDs (learnt only when
/// discovery is on here and at the peer, and the peer is Multi-Rail), and
/// each NID's status; with discovery off for the peer, a NID the buffer
/// does not list keeps the status it had.
fn merge(lnet: &TheLnet, primary: Nid, data: &[u8]) {
    let t = params::snapshot();
    let Ok(info) = PingInfo::parse(data, interfaces_max()) else {
        return;
    };
    // The entries, gathered before the lock.
    let mut entries: KVec<NiStatus> = KVec::new();
    let all = Iterator::chain(
        info.nid4_entries(),
        info.large_entries().map_while(|e| e.ok()),
    );
    for e in all {
        if entries.iter().any(|x| x.nid == e.nid) {
            continue;
        }
        if entries.push(e, GFP_KERNEL).is_err() {
            return;
        }
    }
    let Some(new_primary) = info.primary() else {
        return;
    };
    let now = kthread::now_secs();
    let sensitivity = t.health_sensitivity;
    let mut peers = lnet.peers.lock();
    let Some(pi) = peers.find(&primary).map(|(pi, _)| pi) else {
        return;
    };
    // Discovery is on for it, as `lnet_is_discovery_disabled_locked` has
    // it: on here and at the peer, and the peer is Multi-Rail.
    let learn = peers.list.get(pi).is_some_and(|p| {
        t.peer_discovery_disabled == 0 && p.disc.state & state::NO_DISCOVERY == 0 && p.multi_rail
    });
    let mut pi = pi;
    if learn {
        // NIDs it lists that other peers hold move here, unless an
        // administrator put them there.
        for e in entries.iter() {
            pi = peers.take_nid(pi, &e.nid);
        }
    }
    let Some(p) = peers.list.get_mut(pi) else {
        return;
    };
    if learn && p.primary != new_primary && !p.lock_primary && !p.configured {
        crate::cnet!("Peer {} has primary NID {}\n", p.primary, new_primary);
        p.primary = new_primary;
    }
    if learn {
        for e in entries.iter() {
            if !p.nis.iter().any(|x| x.nid == e.nid) {
                if p.nis.reserve(1, GFP_ATOMIC).is_err() {
                    break;
                }
                let _ = p.nis.push(crate::peer::PeerNi::new(e.nid), GFP_ATOMIC);
                crate::cnet!("Peer {} learnt NID {}\n", p.primary, e.nid);
            }
        }
        // NIDs it no longer lists go, except those of a configured peer,
        // which count as down (`lnet_peer_merge_data`'s refused delete).
        let configured = p.configured;
        let keep = p.primary;
        crate::kapi::vec::retain(&mut p.nis, |x| {
            configured || x.nid == keep || entries.iter().any(|e| e.nid == x.nid)
        });
    }
    for x in p.nis.iter_mut() {
        let listed = entries.iter().find(|e| e.nid == x.nid).map(|e| e.status);
        let Some(status) = dc::merged_status(listed, !learn) else {
            continue;
        };
        match dc::status_health(x.ns_status, status, x.last_alive != 0) {
            dc::StatusHealth::RemoteFailure => {
                crate::cnet!("Peer NI {} reported down by its node\n", x.nid);
                x.remote_failure(sensitivity, now);
            }
            dc::StatusHealth::Full => x.health = health::MAX_HEALTH,
            dc::StatusHealth::Unchanged => {}
        }
        x.ns_status = status;
    }
    // A gateway's routes follow what it said (`lnet_peer_data_present`).
    crate::router_check::ping_reply(&mut peers, pi, info.features, &entries);
}

/// Queues every Multi-Rail peer that has not seen our newest ping buffer
/// (`lnet_push_update_to_peers`); with `force`, every Multi-Rail peer.
pub(crate) fn push_update(lnet: &TheLnet, force: bool) {
    if params::snapshot().peer_discovery_disabled != 0 && force {
        return;
    }
    let mut n = 0u32;
    {
        let mut peers = lnet.peers.lock();
        let mut q = lnet.discovery.lock();
        for p in peers.list.iter_mut() {
            if force && p.multi_rail {
                p.disc.state |= state::FORCE_PUSH;
            }
            let v = p.view(lnet);
            if dc::needs_push(&v) && queue(p, &mut q) {
                n += 1;
            }
        }
    }
    if n > 0 {
        crate::cnet!("Pushing our ping buffer to {} peer(s)\n", n);
        wake(lnet);
    }
}

/// `lnetctl discover` (`lnet_discover`): discovers `nid`'s peer now and
/// waits until that ends, as Lustre's blocking discovery does: the ping's
/// and push's deadlines bound it (a cap beyond them guards the wait); a
/// signal ends the wait. The error that ended discovery, if any.
pub(crate) fn discover(lnet: &TheLnet, nid: Nid, force: bool) -> Result {
    let tt = u64::from(params::snapshot().transaction_timeout);
    let deadline = kthread::now_ms().saturating_add((3 * tt + 10) * 1000);
    {
        let mut peers = lnet.peers.lock();
        let (pi, _) = peers.find_or_create(&nid)?;
        let p = peers.list.get_mut(pi).ok_or(ENOENT)?;
        // Asked for, discovery pings the peer even if it is up to date,
        // as Lustre's `lnet_discover` does: what the peer has changed
        // since (a restarted LND whose push was lost) is learnt now.
        // `--force` pushes our buffer too.
        if params::snapshot().peer_discovery_disabled == 0 || force {
            p.disc.state &= !state::NIDS_UPTODATE;
        }
        if force {
            p.disc.state |= state::FORCE_PING | state::FORCE_PUSH;
        }
        if !force && dc::is_uptodate(&p.view(lnet)) {
            return Ok(());
        }
        p.disc.error = 0;
        let mut q = lnet.discovery.lock();
        if !queue(p, &mut q) {
            return Err(ENOMEM);
        }
    }
    wake(lnet);
    loop {
        {
            let peers = lnet.peers.lock();
            let p = peers
                .find(&nid)
                .and_then(|(pi, _)| peers.list.get(pi))
                .ok_or(ENOENT)?;
            if p.disc.state & state::DISCOVERING == 0 {
                return match p.disc.error {
                    0 => Ok(()),
                    e => Err(Error::from_errno(e)),
                };
            }
        }
        if kernel::current!().signal_pending() {
            return Err(EINTR);
        }
        if kthread::now_ms() >= deadline || !lnet.is_running() {
            return Err(ETIMEDOUT());
        }
        kthread::msleep(20);
    }
}

/// `LNetPeerDiscovered`: 1 once sends to `nid`'s peer need not wait for
/// discovery (discovered and up to date, or not discovering at all),
/// -EHOSTUNREACH after a failed discovery, -EALREADY while one runs;
/// otherwise discovery starts and the answer is -EAGAIN.
pub(crate) fn peer_discovered(lnet: &TheLnet, nid: &Nid) -> c_int {
    if !lnet.is_running() {
        return ENETRESET().to_errno();
    }
    let reachable = reachable(lnet, nid);
    let mut peers = lnet.peers.lock();
    let Some(p) = peers
        .find_or_create(nid)
        .ok()
        .and_then(|(pi, _)| peers.list.get_mut(pi))
    else {
        return ENETRESET().to_errno();
    };
    let s = p.lp_state();
    let done = state::DISCOVERED | state::NIDS_UPTODATE;
    if !reachable || s & state::NO_DISCOVERY != 0 || s & done == done {
        return 1;
    }
    if s & state::DISCOVERING != 0 {
        return EALREADY().to_errno();
    }
    if p.disc.error != 0 {
        return EHOSTUNREACH().to_errno();
    }
    let mut q = lnet.discovery.lock();
    let _ = queue(p, &mut q);
    drop(q);
    drop(peers);
    wake(lnet);
    EAGAIN.to_errno()
}

/// `LNetPrimaryNID`: the primary NID of `nid`'s peer, discovering the
/// peer first unless discovery is off or the peer is up to date. A peer
/// whose primary NID is locked is discovered in the background, as
/// Lustre does with `lock_prim_nid`; otherwise the caller waits (a failed
/// discovery leaves the primary NID as it was).
pub(crate) fn primary_nid(lnet: &TheLnet, nid: &Nid) -> Option<Nid> {
    if !lnet.is_running() {
        return None;
    }
    let reachable = reachable(lnet, nid);
    let block = {
        let mut peers = lnet.peers.lock();
        let (pi, _) = peers.find_or_create(nid).ok()?;
        let p = peers.list.get_mut(pi)?;
        if params::snapshot().peer_discovery_disabled != 0
            || !reachable
            || !lnet.dc_running.load(Relaxed)
            || dc::is_uptodate(&p.view(lnet))
        {
            return Some(p.primary);
        }
        let block = !(params::snapshot().lock_prim_nid != 0 && p.lock_primary);
        if !block {
            p.disc.error = 0;
            let mut q = lnet.discovery.lock();
            let _ = queue(p, &mut q);
        }
        block
    };
    if block {
        let _ = discover(lnet, *nid, false);
    } else {
        wake(lnet);
    }
    let peers = lnet.peers.lock();
    peers
        .find(nid)
        .and_then(|(pi, _)| peers.list.get(pi))
        .map(|p| p.primary)
}

/// Starts the discovery thread for `lnet`.
pub(crate) fn start(lnet: &'static TheLnet) -> Result<Thread> {
    let t = Thread::spawn_static(c_str!("lnet_discovery"), lnet, dc_main)?;
    lnet.dc_running.store(true, Relaxed);
    Ok(t)
}

/// The discovery thread.
fn dc_main(lnet: &'static TheLnet) {
    while !kthread::should_stop() {
        lnet.dc_wait.wait_timeout(1000, || {
            lnet.dc_work.load(Relaxed) || kthread::should_stop()
        });
        lnet.dc_work.store(false, Relaxed);
        crate::push::top_up(lnet);
        loop {
            let next = {
                let mut q = lnet.discovery.lock();
                if q.request.is_empty() {
                    None
                } else {
                    crate::kapi::vec::remove(&mut q.request, 0)
                }
            };
            let Some(nid) = next else {
                break;
            };
            step(lnet, nid);
            if kthread::should_stop() {
                break;
            }
        }
        release(lnet);
    }
}

/// Ends discovery at shutdown, after the thread stopped: waiting
/// messages end with -ESHUTDOWN and every peer is left undiscovered
/// (their MDs go with LNet's).
pub(crate) fn stop(lnet: &TheLnet) {
    lnet.dc_running.store(false, Relaxed);
    loop {
        let m = {
            let mut q = lnet.discovery.lock();
            while crate::kapi::vec::pop(&mut q.request).is_some() {}
            crate::kapi::vec::pop(&mut q.pending)
        };
        let Some(m) = m else {
            break;
        };
        crate::msg::finalize(lnet, m, ESHUTDOWN().to_errno(), Status::Ok);
    }
    // Undiscovered until shutdown deletes them (startup.rs).
    for p in lnet.peers.lock().list.iter_mut() {
        p.disc = PeerDisc::default();
    }
}
