// SPDX-License-Identifier: GPL-2.0

//! Messages: the send path, the receive path (`lnet_parse`) for the four
//! message types, and `lnet_finalize`, through which every message ends and
//! every event reaches the MD's handler.

use crate::counters::Counters;
use crate::kapi::bindings::{lnet_event, lnet_tx_desc};
use crate::kapi::errno::*;
use crate::kapi::kiov::BioVec;
use crate::kapi::vec;
use crate::lnd::lnet_msg;
use crate::lnet_core::hdr::{Hdr, MsgBody, WireHandle, HDR_NID16_LEN, HDR_NID4_LEN};
use crate::lnet_core::health::Status;
use crate::lnet_core::md::{self as core_md, EventKind, Incoming, Match, Op};
use crate::lnet_core::msg_stats;
use crate::lnet_core::nid::{Net, Nid};
use crate::lnet_core::select::{self, NetCandidate, NiCandidate, PeerNiCandidate};
use crate::md::flags;
use crate::ni::Ni;
use crate::state::{Res, TheLnet, MAX_PORTALS};
use crate::{api, kapi, params};
use core::ffi::c_void;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A message in flight (`struct lnet_msg`).
pub(crate) struct Msg {
    pub(crate) hdr: Hdr,
    /// What the LND sends; also the payload source the loopback LND reads.
    pub(crate) desc: lnet_tx_desc,
    /// The MD this message holds a reference on.
    pub(crate) md: Option<u64>,
    /// The event the MD's handler gets when this message ends.
    pub(crate) ev: lnet_event,
    pub(crate) ni: Option<Arc<Ni>>,
    /// An incoming PUT whose initiator wants an ACK once it is delivered.
    pub(crate) ack: Option<(WireHandle, Nid, u32)>,
    /// Received (counted on the receive side) rather than sent.
    pub(crate) rx: bool,
    /// The peer NID a received message came from.
    pub(crate) from: Nid,
    /// A received message's initiator: its peer's primary NID
    /// (`msg_initiator`); what MEs match and events name.
    pub(crate) initiator: Nid,
    /// Committed for receive: an incoming message, and the REPLY it turns
    /// into (`msg_rx_committed`), whose success raises the peer NI's health.
    pub(crate) rx_committed: bool,
    /// The source the sender asked for (ANY to let selection choose);
    /// resends select again from it.
    pub(crate) src_param: Nid,
    /// Resends made so far.
    pub(crate) retry_count: u32,
    /// Never resend (recovery pings, unroutable messages).
    pub(crate) no_resend: bool,
    /// No resend after this (monotonic seconds).
    pub(crate) deadline: i64,
    /// Holds a send credit of its peer NI / of its NI (counted, perhaps
    /// still waiting for it).
    pub(crate) peer_credit: bool,
    pub(crate) ni_credit: bool,
    /// The status an LND gave a send it refused (`lnet_msg_set_hstatus`);
    /// OK unless it set one, as Lustre's `msg_health_status` starts.
    pub(crate) lnd_hstatus: Status,
    /// An incoming GET whose LND writes the REPLY's data itself
    /// (`lnet_parse`'s rdma_req): the REPLY goes to `lnd_recv`, not out
    /// through selection.
    pub(crate) rdma_get: bool,
    /// A recovery ping (`msg_recovery`): selection treats its peer as not
    /// Multi-Rail, so that it tests the peer NI it names.
    pub(crate) recovery: bool,
    /// A REPLY made by [`create_reply`]: like Lustre's, it has no peer NI
    /// of its own, so health never checks it (`lnet_is_health_check`);
    /// its GET carries the outcome.
    pub(crate) no_rx_peer: bool,
}

// SAFETY: the raw pointers inside (fragment vectors of referenced MDs, the
// caller's pointers echoed in events) are not tied to a thread.
unsafe impl Send for Msg {}

impl Msg {
    fn new(lnet: &TheLnet, hdr: Hdr) -> Result<KBox<Msg>> {
        let m = KBox::new(
            Msg {
                hdr,
                desc: lnet_tx_desc::default(),
                md: None,
                ev: lnet_event::default(),
                ni: None,
                ack: None,
                rx: false,
                from: Nid::ANY,
                initiator: Nid::ANY,
                rx_committed: false,
                src_param: Nid::ANY,
                retry_count: 0,
                no_resend: false,
                deadline: 0,
                peer_credit: false,
                ni_credit: false,
                lnd_hstatus: Status::Ok,
                rdma_get: false,
                recovery: false,
                no_rx_peer: false,
            },
            GFP_KERNEL,
        )?;
        lnet.counters.msg_alloc();
        lnet.msgs_in_flight.fetch_add(1, Ordering::Relaxed);
        Ok(m)
    }

    fn free(lnet: &TheLnet, m: KBox<Msg>) {
        drop(m);
        lnet.counters.msg_free();
        lnet.msgs_in_flight.fetch_sub(1, Ordering::Release);
    }

    /// Fills the message part of the event (`lnet_build_msg_event`). A
    /// passive event names the initiator by its peer's primary NID, which
    /// stays the same whichever rail the message came over, and the NID it
    /// came from as the source.
    fn build_event(&mut self, lnet: &TheLnet, kind: EventKind, from: Nid) {
        let h = &self.hdr;
        let ev = &mut self.ev;
        ev.type_ = kind as _;
        ev.msg_type = h.msg.type_code();
        ev.target.nid = api::nid_to_c(&h.dest_nid);
        ev.target.pid = h.dest_pid;
        if kind == EventKind::Send {
            let pid = lnet.pid.load(Ordering::Relaxed);
            ev.initiator.nid = api::nid_to_c(&Nid::ANY);
            ev.initiator.pid = pid;
            ev.source = ev.initiator;
            ev.sender = api::nid_to_c(&Nid::ANY);
        } else {
            ev.initiator.nid = api::nid_to_c(&self.initiator);
            ev.initiator.pid = h.src_pid;
            ev.source.nid = api::nid_to_c(&h.src_nid);
            ev.source.pid = h.src_pid;
            ev.sender = api::nid_to_c(&from);
        }
        match h.msg {
            MsgBody::Put {
                match_bits,
                hdr_data,
                ptl_index,
                ..
            } => {
                ev.pt_index = ptl_index;
                ev.match_bits = match_bits;
                ev.hdr_data = hdr_data;
                ev.rlength = h.payload_length;
            }
            MsgBody::Get {
                match_bits,
                ptl_index,
                sink_length,
                ..
            } => {
                ev.pt_index = ptl_index;
                ev.match_bits = match_bits;
                ev.rlength = sink_length;
            }
            MsgBody::Ack {
                match_bits,
                mlength,
                ..
            } => {
                ev.match_bits = match_bits;
                ev.mlength = mlength;
            }
            _ => ev.rlength = h.payload_length,
        }
        ev.sequence = lnet.event_seq.fetch_add(1, Ordering::Relaxed) as _;
    }

    /// The pointer LNDs know this message by.
    pub(crate) fn into_c(m: KBox<Msg>) -> *mut lnet_msg {
        KBox::into_raw(m).cast()
    }

    /// # Safety
    ///
    /// `p` came from [`Msg::into_c`] and is not used again.
    pub(crate) unsafe fn from_c(p: *mut lnet_msg) -> KBox<Msg> {
        // SAFETY: `p` came from Msg::into_c, KBox::into_raw of a `Msg`, and is
        // not used again (# Safety): the box is taken back once.
        unsafe { KBox::from_raw(p.cast()) }
    }

    /// The send description of a message an LND holds.
    ///
    /// # Safety
    ///
    /// `p` is a message handed to an LND and not yet finalized.
    pub(crate) unsafe fn desc_of<'a>(p: *mut lnet_msg) -> &'a lnet_tx_desc {
        // SAFETY: `p` is a message handed to an LND and not yet finalized (# Safety), so the `Msg`
        // Msg::into_c leaked is alive; only a shared reference to its `desc` is made.
        unsafe { &(*p.cast::<Msg>()).desc }
    }
}

/// Sets the payload of an outgoing message to `len` bytes of `kiov` from
/// `offset`.
fn set_payload(m: &mut Msg, kiov: &KVec<BioVec>, offset: u32, len: u32) {
    m.desc.kiov = kiov.as_ptr().cast_mut().cast();
    m.desc.niov = kiov.len() as u32;
    m.desc.offset = offset;
    m.desc.len = len;
}

/// Candidates compared at once; NIs or nets beyond this are not considered.
const MAX_CANDIDATES: usize = 16;

/// GPU device priority is not tracked (no GPU memory MDs): equal for
/// every candidate.
const NI_UNRANKED: NiCandidate = NiCandidate {
    fatal: false,
    health: 0,
    sel_priority: u32::MAX,
    dev_priority: u32::MAX,
    distance: 0,
    tx_credits: 0,
    seq: 0,
};
const NET_UNRANKED: NetCandidate = NetCandidate {
    peer_net_health: 0,
    peer_net_priority: u32::MAX,
    local_net_health: 0,
    local_net_priority: u32::MAX,
    peer_net_seq: 0,
    local_net_seq: 0,
};
const LPNI_UNRANKED: PeerNiCandidate = PeerNiCandidate {
    health: 0,
    sel_priority: u32::MAX,
    preferred: false,
    tx_credits: 0,
    seq: 0,
};

/// Ranks up to `MAX_CANDIDATES` tagged candidates with `rank` (one of
/// lnet-core's rankings) and returns the winner's tag.
fn best_of<K: Copy, T: Copy>(
    items: impl Iterator<Item = (K, T)>,
    fill: (K, T),
    rank: impl Fn(&[T]) -> Option<usize>,
) -> Option<K> {
    let mut tags = [fill.0; MAX_CANDIDATES];
    let mut cands = [fill.1; MAX_CANDIDATES];
    let mut n = 0;
    for (k, c) in items {
        let (Some(t), Some(d)) = (tags.get_mut(n), cands.get_mut(n)) else {
            break;
        };
        *t = k;
        *d = c;
        n += 1;
    }
    tags.get(rank(cands.get(..n)?)?).copied()
}

/// The local NI a message leaves from, the peer NID it goes to and the NID
/// it names as its source (`lnet_select_pathway`, selection.md §1-§3, §5):
/// a given source is used as is; a Multi-Rail peer gets the best net, NI
/// and peer NI by health then round robin, unless the message is a
/// recovery ping (`recovery`), which goes to the peer NI it names as to a
/// peer that is not Multi-Rail; another peer keeps one preferred NI per
/// peer net, set by its first message that is not a response (ACK or
/// REPLY), while portal-0 traffic takes the best NI of the net instead.
/// Only `0@lo` takes the loopback NI: one of our own NIDs
/// is a peer NI like any other, reached through an NI of its net and its
/// LND, so that a message to it (a local NI's recovery ping) tests that
/// NI.
fn select_path(
    lnet: &TheLnet,
    dest: &Nid,
    src: &Nid,
    body: &MsgBody,
    recovery: bool,
    md_node: i32,
) -> Option<(Arc<Ni>, Nid, Nid)> {
    let reserved = matches!(
        body,
        MsgBody::Get { ptl_index: 0, .. } | MsgBody::Put { ptl_index: 0, .. }
    );
    let response = matches!(body, MsgBody::Reply { .. } | MsgBody::Ack { .. });
    let slot = msg_stats::slot(body);
    let numa_range = params::snapshot().numa_range;
    let nis = lnet.nis.lock();
    if *dest == Nid::LO {
        let lo = nis.nis.iter().find(|n| n.nid == Nid::LO && n.is_active())?;
        return Some((lo.clone(), *dest, *dest));
    }
    let active = |n: &&Arc<Ni>| n.is_active();
    let mut peers = lnet.peers.lock();
    let (pi, li) = peers.find_or_create(dest).ok()?;
    let peer = peers.list.get_mut(pi)?;
    crate::udsp::apply_new_peer_nis(lnet, &nis, peer);

    let pick_ni = |net: Net| -> Option<Arc<Ni>> {
        let cands = nis
            .nis
            .iter()
            .enumerate()
            .filter(|(_, ni)| ni.is_active() && ni.nid.net() == net)
            .map(|(i, ni)| {
                let c = NiCandidate {
                    fatal: ni.is_fatal(),
                    health: ni.health.load(Ordering::Relaxed),
                    sel_priority: ni.sel_priority.load(Ordering::Relaxed),
                    distance: crate::numa::distance(md_node, ni.dev_node.load(Ordering::Relaxed)),
                    tx_credits: ni.tx_credits().available,
                    seq: ni.seq.load(Ordering::Relaxed),
                    ..NI_UNRANKED
                };
                (i, c)
            });
        let i = best_of(cands, (0, NI_UNRANKED), |c| {
            select::best_ni(c, numa_range, false)
        })?;
        nis.nis.get(i).cloned()
    };

    let (ni, lpni) = if !src.is_any() {
        // Source given (an upper layer's choice, or a response): exactly
        // that NI and the destination NID, which must be on its net: a
        // destination on another net needs a route, and we do not route.
        let ni = nis
            .nis
            .iter()
            .filter(active)
            .find(|n| n.nid == *src && n.nid.net() == dest.net())?
            .clone();
        (ni, li)
    } else if peer.multi_rail && !recovery {
        // A net first (each of the peer's nets that is also ours), then
        // the NI and the peer NI on it.
        let first_of_net =
            |i: usize, net: Net| peer.nis.iter().position(|q| q.nid.net() == net) == Some(i);
        // A net whose local NIs are all marked fatal is left out while
        // another net has a usable NI: Lustre compares peer-net health
        // first and would keep sending over a dead link until the peer NI
        // lost health (a decision: a rail cut moves traffic at once).
        let usable = |net: Net, with_fatal: bool| {
            nis.nis
                .iter()
                .any(|x| x.is_active() && x.nid.net() == net && (with_fatal || !x.is_fatal()))
        };
        let with_fatal = !peer.nis.iter().any(|p| usable(p.nid.net(), false));
        // Peer NIs their node reports down are left out while another is
        // up (a decision: Lustre only charges health for the report and
        // may pick them until it runs low; discovery.rs).
        let reported_up = |net: Option<Net>| {
            peer.nis
                .iter()
                .any(|q| !q.reported_down() && net.map_or(true, |n| q.nid.net() == n))
        };
        let with_down = !reported_up(None);
        let nets = peer
            .nis
            .iter()
            .enumerate()
            .filter(|(i, p)| first_of_net(*i, p.nid.net()))
            .filter(|(_, p)| usable(p.nid.net(), with_fatal))
            .filter(|(_, p)| with_down || reported_up(Some(p.nid.net())))
            .filter_map(|(_, p)| {
                let net = p.nid.net();
                let local = nis
                    .nis
                    .iter()
                    .filter(|x| x.is_active() && x.nid.net() == net);
                let (mut health, mut seq, mut any) = (0, 0, false);
                let mut local_prio = u32::MAX;
                for x in local {
                    any = true;
                    // Fatal NIs do not count towards the net's health.
                    if !x.is_fatal() {
                        health = health.max(x.health.load(Ordering::Relaxed));
                    }
                    seq = seq.max(x.seq.load(Ordering::Relaxed));
                    local_prio = local_prio.min(x.net_priority.load(Ordering::Relaxed));
                }
                let on_net = || peer.nis.iter().filter(|q| q.nid.net() == net);
                let peer_health = on_net().map(|q| q.health).max().unwrap_or(0);
                let peer_prio = on_net().map(|q| q.net_priority).min().unwrap_or(u32::MAX);
                let c = NetCandidate {
                    peer_net_health: peer_health,
                    peer_net_priority: peer_prio,
                    local_net_health: health,
                    local_net_priority: local_prio,
                    peer_net_seq: peer.net_seq(net),
                    local_net_seq: seq,
                };
                any.then_some((net, c))
            });
        let net = best_of(nets, (Net::ANY, NET_UNRANKED), select::best_net)?;
        let ni = pick_ni(net)?;
        let fresh = ni.tunables.peer_credits.load(Ordering::Relaxed);
        let tx = lnet.tx.lock();
        let with_down = !reported_up(Some(net));
        let lpnis = peer
            .nis
            .iter()
            .enumerate()
            .filter(|(_, p)| p.nid.net() == net && (with_down || !p.reported_down()))
            .map(|(i, p)| {
                let c = PeerNiCandidate {
                    health: p.health,
                    sel_priority: p.sel_priority,
                    seq: p.seq,
                    preferred: p.prefers(&ni.nid),
                    tx_credits: tx.peer_ni_credits(&p.nid, fresh).0.available,
                };
                (i, c)
            });
        let lpni = best_of(lpnis, (0, LPNI_UNRANKED), select::best_peer_ni)?;
        drop(tx);
        (ni, lpni)
    } else {
        // Not Multi-Rail, or a recovery ping: the destination NID, from
        // the preferred NI. Portal-0 traffic (pings, pushes, recovery
        // pings) takes the best NI of the net instead, as Lustre's
        // reserved-portal exemption does.
        // The preference is the peer net's: the first of its peer NIs
        // that has one (`lnet_find_existing_preferred_best_ni`), so that
        // a node with several NIDs on one net sees one source from us.
        let net = peer.nis.get(li)?.nid.net();
        let pref = peer
            .nis
            .iter()
            .filter(|q| q.nid.net() == net)
            .find_map(|q| q.pref_nid)
            .filter(|_| !reserved)
            .and_then(|p| {
                nis.nis
                    .iter()
                    .filter(active)
                    .find(|n| n.nid == p && n.nid.net() == net)
                    .cloned()
            });
        let ni = match pref {
            Some(ni) => ni,
            None => pick_ni(net)?,
        };
        (ni, li)
    };
    // A peer that is not Multi-Rail keeps the NI first used for it, given
    // or picked, portal 0 included; a response does not set it
    // (`lnet_set_non_mr_pref_nid`).
    if !peer.multi_rail && !response {
        if let Some(lp) = peer.nis.get_mut(lpni) {
            if lp.pref_nid.is_none() && lp.udsp_pref.as_slice().is_empty() {
                lp.pref_nid = Some(ni.nid);
            }
        }
    }
    peer.commit(lpni, slot);
    let to = peer.nis.get(lpni)?.nid;
    ni.seq.store(
        lnet.net_seq.fetch_add(1, Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
    let from = ni.nid;
    Some((ni, to, from))
}

/// Counts a message received from `from` on `ni` (creating its peer; a
/// peer that is not Multi-Rail gets the receiving NI as its preferred one,
/// as Lustre does). A message parsed from it (`parsed`) also marks the
/// peer NI up, whatever its node last reported (`lnet_parse`): a node
/// whose NI comes back through health alone does not push that. Returns
/// the primary NID of `src`'s peer, the message's initiator
/// (`lnet_peer_primary_nid_locked`).
fn count_rx(lnet: &TheLnet, ni: &Ni, from: &Nid, src: &Nid, slot: usize, parsed: bool) -> Nid {
    if ni.nid == Nid::LO {
        return *src;
    }
    let mut peers = lnet.peers.lock();
    if let Ok((pi, li)) = peers.find_or_create(from) {
        if let Some(peer) = peers.list.get_mut(pi) {
            let multi_rail = peer.multi_rail;
            if let Some(p) = peer.nis.get_mut(li) {
                p.received.add(slot);
                if !multi_rail {
                    p.pref_nid.get_or_insert(ni.nid);
                }
                p.last_alive = kapi::kthread::now_secs();
                if parsed {
                    p.ns_status = crate::lnet_core::ping::STATUS_UP;
                }
            }
        }
    }
    let found = peers.locate(src);
    found
        .and_then(|(pi, _)| peers.list.get(pi))
        .map_or(*src, |p| p.primary)
}

/// Sends a message again after a failed attempt: selection runs afresh
/// from the sender's own source choice (selection.md §7).
/// `resend_count` counts the resends accepted for sending, as Lustre's
/// (`lnet_resend_pending_msgs_locked`): not one whose selection fails.
pub(crate) fn resend(lnet: &TheLnet, mut m: KBox<Msg>) {
    m.hdr.src_nid = m.src_param;
    m.ni = None;
    if send(lnet, m) {
        Counters::add(&lnet.counters.resend_count);
    }
}

/// Sends a message (`lnet_send`): picks the NI, encodes the header and hands
/// it to the LND. Any failure finalizes the message. Returns whether it was
/// accepted: waiting for discovery or past selection (`lnet_send`'s 0).
pub(crate) fn send(lnet: &TheLnet, mut m: KBox<Msg>) -> bool {
    if m.retry_count == 0 {
        m.src_param = m.hdr.src_nid;
    }
    let Some(mut m) = crate::discovery::gate(lnet, m) else {
        // Sent again once its peer is discovered.
        return true;
    };
    // SAFETY: the payload belongs to the MD the message holds.
    let md_node = unsafe { crate::numa::payload_node(&m.desc) };
    let Some((ni, to, src)) = select_path(
        lnet,
        &m.hdr.dest_nid,
        &m.hdr.src_nid,
        &m.hdr.msg,
        m.recovery,
        md_node,
    ) else {
        if log_allowed(lnet) {
            pr_warn!("No route to {} (no local NI on its net)\n", m.hdr.dest_nid);
        }
        // No health status: nobody is charged, as in Lustre, where a
        // message that fails selection is not health-checked
        // (`lnet_is_health_check`; a REPLY's status then disagrees).
        finalize(lnet, m, EHOSTUNREACH().to_errno(), Status::Ok);
        return false;
    };
    m.hdr.dest_nid = to;
    m.hdr.src_nid = src;
    // A fresh deadline for each attempt, from the NI it goes out on.
    m.deadline = commit_deadline(&ni);
    // The response tracker blames the peer NI actually used (its next hop).
    if let (Some(cookie), MsgBody::Put { .. } | MsgBody::Get { .. }) = (m.md, m.hdr.msg) {
        if let Some(r) = lnet
            .res
            .lock()
            .mds
            .get_mut(&cookie)
            .and_then(|md| md.rspt.as_mut())
        {
            r.1 = to;
        }
    }
    m.hdr.src_pid = lnet.pid.load(Ordering::Relaxed);
    let hdr = m.hdr;
    let d = &mut m.desc;
    d.type_ = hdr.msg.type_code();
    d.target.nid = api::nid_to_c(&hdr.dest_nid);
    d.target.pid = hdr.dest_pid;
    let encoded = match hdr.encode_nid4(&mut d.hdr[..HDR_NID4_LEN]) {
        Ok(()) => Ok(HDR_NID4_LEN),
        Err(_) => hdr
            .encode_nid16(&mut d.hdr[..HDR_NID16_LEN])
            .map(|()| HDR_NID16_LEN),
    };
    match encoded {
        Ok(n) => d.hdr_len = n as u32,
        Err(e) => {
            pr_err!("Cannot encode header to {}: {}\n", hdr.dest_nid, e);
            finalize(lnet, m, EPROTO().to_errno(), Status::LocalError);
            return false;
        }
    }
    ni.count_send(hdr.payload_length, msg_stats::slot(&hdr.msg));
    Counters::add(&lnet.counters.send_count);
    Counters::add_len(&lnet.counters.send_length, hdr.payload_length);
    m.ni = Some(ni);
    match crate::fault::on_send(lnet, &hdr) {
        crate::fault::Verdict::Pass => crate::credits::post(lnet, m),
        crate::fault::Verdict::Drop(hstatus) => {
            if log_allowed(lnet) {
                pr_info!(
                    "Dropping {} to {} to simulate {}\n",
                    hdr.msg.type_name(),
                    hdr.dest_nid,
                    hstatus.name()
                );
            }
            // As an LND that failed to post it: the health machinery
            // takes it from here.
            finalize(lnet, m, EINVAL.to_errno(), hstatus);
        }
        crate::fault::Verdict::Delay { at, rule } => {
            if let Err(m) = crate::fault::hold_send(lnet, m, at, rule) {
                crate::credits::post(lnet, m);
            }
        }
    }
    true
}

/// Hands a selected, encoded message that has its credits to its NI's
/// LND; finalizes it if the LND refuses it.
pub(crate) fn lnd_send(lnet: &TheLnet, m: KBox<Msg>) {
    let Some(ni) = m.ni.clone() else {
        finalize(lnet, m, EHOSTUNREACH().to_errno(), Status::LocalError);
        return;
    };
    let p = Msg::into_c(m);
    // SAFETY: `p` is a live message until finalized; the descriptor is
    // inside it.
    let desc = unsafe { core::ptr::addr_of!((*p.cast::<Msg>()).desc) };
    if let Err(e) = ni.lnd.send(&ni, p, desc) {
        // SAFETY: the LND refused the message, so it is still ours.
        let m = unsafe { Msg::from_c(p) };
        // The health status is the one the LND set, if any; with none (OK
        // beside an error) health is left alone and the message fails, as
        // in Lustre. Unlike Lustre's lnet_ni_send, one with a status stays
        // resendable: our LNDs set one when the peer is in reconnect backoff
        // or the device refused the work, and another path is then exactly
        // what health should try.
        let hs = m.lnd_hstatus;
        finalize(lnet, m, e.to_errno(), hs);
    }
}

/// Ends a message (`lnet_finalize`): delivers its event, sends the ACK an
/// incoming PUT asked for, and frees it.
pub(crate) fn finalize(lnet: &TheLnet, mut m: KBox<Msg>, status: i32, hstatus: Status) {
    // lnd.h's contract, checked on every call (the lab kernel reports a
    // caller holding a spinlock even when nothing here sleeps).
    crate::kapi::kthread::might_sleep();
    // A resend takes credits afresh on its new path.
    crate::credits::give_back(lnet, &mut m);
    let Some(mut m) = crate::health::check(lnet, m, status, hstatus) else {
        return;
    };
    if m.md.is_some() {
        detach_md(lnet, &mut m, status);
    }
    if let Some((wmd, initiator, mlength)) = m.ack.take() {
        if status == 0 && lnet.is_running() {
            let match_bits = m.ev.match_bits;
            m.hdr = Hdr {
                dest_nid: initiator,
                src_nid: m.hdr.dest_nid,
                dest_pid: m.hdr.src_pid,
                src_pid: m.hdr.dest_pid,
                payload_length: 0,
                msg: MsgBody::Ack {
                    dst_wmd: wmd,
                    match_bits,
                    mlength,
                },
            };
            m.rx = false;
            // Lustre decommits the PUT before sending its ACK: the ACK is
            // committed for send only.
            m.rx_committed = false;
            m.ni = None;
            m.retry_count = 0;
            m.desc = lnet_tx_desc::default();
            send(lnet, m);
            return;
        }
    }
    Msg::free(lnet, m);
}

/// Drops the message's MD reference and delivers its event outside the lock
/// (`lnet_msg_detach_md`). While one handler of an MD runs, others wait, so
/// an MD's events arrive one at a time and the unlinked one last.
fn detach_md(lnet: &TheLnet, m: &mut Msg, status: i32) {
    let Some(cookie) = m.md.take() else {
        return;
    };
    let mut res = lnet.res.lock();
    loop {
        match res.mds.get(&cookie) {
            Some(md) if md.flags & flags::HANDLING != 0 => lnet.handled.wait(&mut res),
            _ => break,
        }
    }
    let Some(md) = res.mds.get_mut(&cookie) else {
        pr_err!("message held an MD that is gone\n");
        return;
    };
    md.refcount = md.refcount.saturating_sub(1);
    let unlink = md.unlinkable();
    let handler = md.handler;
    if handler.is_some() {
        m.ev.status = if md.flags & flags::ABORTED != 0 && status == 0 {
            ETIMEDOUT().to_errno()
        } else {
            status
        };
        m.ev.unlinked = unlink as i32;
        md.to_event(cookie, &mut m.ev);
        if !unlink {
            md.flags |= flags::HANDLING;
        }
    }
    if unlink || (md.refcount == 0 && md.state.threshold == core_md::THRESH_INF) {
        detach_tracker(lnet, &mut res, cookie);
    }
    if unlink {
        res.md_unlink(cookie);
    }
    drop(res);
    if let Some(h) = handler {
        let mut ev = m.ev;
        // SAFETY: the caller's handler, called as the API promises: no LNet
        // lock held, one event at a time per MD.
        unsafe { h(&mut ev) };
        if !unlink {
            let mut res = lnet.res.lock();
            if let Some(md) = res.mds.get_mut(&cookie) {
                md.flags &= !flags::HANDLING;
            }
            drop(res);
            lnet.handled.notify_all();
        }
    }
}

/// Drops an MD's response tracker, if it has one.
pub(crate) fn detach_tracker(lnet: &TheLnet, res: &mut Res, cookie: u64) {
    if let Some(md) = res.mds.get_mut(&cookie) {
        if md.rspt.take().is_some() {
            lnet.counters.rst_alloc.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// At most ten drop messages a second reach the console.
fn log_allowed(lnet: &TheLnet) -> bool {
    let now = kapi::kthread::now_secs();
    if lnet.log_second.swap(now, Ordering::Relaxed) != now {
        lnet.log_count.store(0, Ordering::Relaxed);
    }
    lnet.log_count.fetch_add(1, Ordering::Relaxed) < 10
}

/// Hands a received message to its LND to take `mlen` of `rlen` payload
/// bytes into `sink` (fragments, count, offset); the LND finalizes it, or
/// it is finalized here if the LND refuses.
#[allow(clippy::too_many_arguments)]
fn recv(
    lnet: &TheLnet,
    ni: &Ni,
    private: *mut c_void,
    m: KBox<Msg>,
    delayed: bool,
    sink: (*mut BioVec, u32, u32),
    mlen: u32,
    rlen: u32,
) {
    let (kiov, niov, offset) = sink;
    let p = Msg::into_c(m);
    let r = ni
        .lnd
        .recv(ni, private, p, delayed, kiov, niov, offset, mlen, rlen);
    if let Err(e) = r {
        // SAFETY: the LND refused the message, so it is still ours.
        let m = unsafe { Msg::from_c(p) };
        // No health status, as Lustre's lnet_ni_recv leaves it: a refused
        // receive costs no NI its health.
        finalize(lnet, m, e.to_errno(), Status::Ok);
    }
}

/// Counts a dropped message of `len` bytes on LNet, its NI and the peer
/// NI it came from or was going to.
fn count_dropped(lnet: &TheLnet, ni: &Ni, peer: &Nid, len: u32, body: &MsgBody) {
    let slot = msg_stats::slot(body);
    Counters::add(&lnet.counters.drop_count);
    Counters::add_len(&lnet.counters.drop_length, len);
    ni.dropped.add(slot);
    if let Some(p) = lnet.peers.lock().peer_ni_mut(peer) {
        p.dropped.add(slot);
    }
}

/// Counts an outgoing message dropped past its deadline before its LND got
/// it.
pub(crate) fn count_expired(lnet: &TheLnet, m: &Msg) {
    if let Some(ni) = m.ni.as_ref() {
        count_dropped(lnet, ni, &m.hdr.dest_nid, m.hdr.payload_length, &m.hdr.msg);
    }
    if log_allowed(lnet) {
        pr_warn!(
            "Dropping {} to {}: exceeded message deadline\n",
            m.hdr.msg.type_name(),
            m.hdr.dest_nid
        );
    }
}

/// Discards an incoming message's payload (`lnet_drop_message`).
fn drop_incoming(lnet: &TheLnet, ni: &Ni, private: *mut c_void, rlen: u32, why: &str, hdr: &Hdr) {
    if log_allowed(lnet) {
        pr_warn!(
            "Dropping {} from {} on {}: {}\n",
            hdr.msg.type_name(),
            hdr.src_nid,
            ni.nid,
            why
        );
    }
    discard_incoming(lnet, ni, private, rlen, hdr);
}

/// Drops a message as `drop_incoming` does, counted but not logged: one
/// that is expected.
fn discard_incoming(lnet: &TheLnet, ni: &Ni, private: *mut c_void, rlen: u32, hdr: &Hdr) {
    count_dropped(lnet, ni, &hdr.src_nid, rlen, &hdr.msg);
    let null = core::ptr::null_mut();
    let _ = ni
        .lnd
        .recv(ni, private, null, false, null.cast(), 0, 0, 0, rlen);
}

/// A header arrived on `ni` (`lnet_parse`). Returns 0 once the LND has been
/// (or will be) asked to receive or discard the payload, or a negative
/// errno for a header the LND should treat as a protocol error.
pub(crate) fn parse(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    bytes: &[u8],
    from: Nid,
    private: *mut c_void,
    rdma_req: bool,
) -> i32 {
    let decoded = match bytes.len() {
        HDR_NID4_LEN => Hdr::decode_nid4(bytes),
        HDR_NID16_LEN => Hdr::decode_nid16(bytes),
        n => {
            pr_err!("Bad header length {} from {}\n", n, from);
            return EPROTO().to_errno();
        }
    };
    let hdr = match decoded.and_then(|h| h.check().map(|()| h)) {
        Ok(h) => h,
        Err(e) => {
            pr_err!("Bad header from {}: {}\n", from, e);
            return EPROTO().to_errno();
        }
    };
    let rlen = hdr.payload_length;
    if !lnet.is_running() {
        drop_incoming(lnet, ni, private, rlen, "LNet is shutting down", &hdr);
        return 0;
    }
    // Only for the NI it came in on: nothing reaches our other NIDs over
    // 0@lo.
    if hdr.dest_nid != ni.nid {
        drop_incoming(
            lnet,
            ni,
            private,
            rlen,
            "not for this NI and routing is off",
            &hdr,
        );
        return 0;
    }
    if hdr.dest_pid != lnet.pid.load(Ordering::Relaxed) {
        drop_incoming(lnet, ni, private, rlen, "wrong pid", &hdr);
        return 0;
    }
    let delay = match crate::fault::on_recv(lnet, &hdr, &ni.nid) {
        crate::fault::Verdict::Pass => None,
        crate::fault::Verdict::Drop(_) => {
            drop_incoming(
                lnet,
                ni,
                private,
                rlen,
                "simulating silent message loss",
                &hdr,
            );
            return 0;
        }
        crate::fault::Verdict::Delay { at, rule } => Some((at, rule)),
    };
    Counters::add(&lnet.counters.recv_count);
    Counters::add_len(&lnet.counters.recv_length, rlen);
    let slot = msg_stats::slot(&hdr.msg);
    ni.count_recv(rlen, slot);
    let initiator = count_rx(lnet, ni, &from, &hdr.src_nid, slot, true);
    let Ok(mut m) = Msg::new(lnet, hdr) else {
        drop_incoming(lnet, ni, private, rlen, "out of memory", &hdr);
        return 0;
    };
    m.rx = true;
    m.rx_committed = true;
    m.rdma_get = rdma_req && matches!(hdr.msg, MsgBody::Get { .. });
    m.from = from;
    m.initiator = initiator;
    // Committed for receive on this NI (health.md §5.1), before any delay
    // rule holds it, as Lustre commits before its delay check.
    m.deadline = commit_deadline(ni);
    m.ni = Some(ni.clone());
    if let Some((at, rule)) = delay {
        match crate::fault::hold_recv(lnet, m, ni, private, at, rule) {
            Ok(()) => return 0,
            Err(back) => m = back,
        }
    }
    deliver(lnet, ni, m, from, private)
}

/// The deadline of a message committed now on `ni`, for send or receive
/// (`get_msg_deadline`, health.md §5.1).
fn commit_deadline(ni: &Ni) -> i64 {
    let t = params::snapshot();
    // Asked at each commit: the administrator may change the LND's timeout.
    let lnd_timeout = ni
        .lnd
        .timeout()
        .map_or(-1, |s| i32::try_from(s).unwrap_or(i32::MAX));
    let secs = crate::lnet_core::health::msg_deadline_secs(
        lnd_timeout,
        t.retry_count,
        t.transaction_timeout,
    );
    kapi::kthread::now_secs().saturating_add(i64::from(secs))
}

/// Matches a received message and has its LND receive it (the part of
/// `lnet_parse` a delay rule postpones).
pub(crate) fn deliver(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    m: KBox<Msg>,
    from: Nid,
    private: *mut c_void,
) -> i32 {
    match m.hdr.msg {
        MsgBody::Put { .. } | MsgBody::Get { .. } => parse_request(lnet, ni, m, from, private),
        MsgBody::Ack { dst_wmd, .. } | MsgBody::Reply { dst_wmd } => {
            parse_response(lnet, ni, m, dst_wmd, from, private)
        }
        MsgBody::Hello { .. } => {
            Msg::free(lnet, m);
            EPROTO().to_errno()
        }
    }
}

/// Why an incoming request found no MD.
pub(crate) enum Miss {
    /// No ME/MD matched: on a lazy portal the message waits for one.
    NoMatch,
    /// The message is dropped, for this reason.
    Drop(&'static str),
}

/// The portal and the matching view of an incoming PUT or GET from
/// `initiator` (MEs match the peer's primary NID, not the rail's).
fn request_of(hdr: &Hdr, initiator: Nid) -> (u32, Incoming) {
    let (op, portal, match_bits, roffset, rlength) = match hdr.msg {
        MsgBody::Put {
            ptl_index,
            offset,
            match_bits,
            ..
        } => (Op::Put, ptl_index, match_bits, offset, hdr.payload_length),
        MsgBody::Get {
            ptl_index,
            src_offset,
            sink_length,
            match_bits,
            ..
        } => (Op::Get, ptl_index, match_bits, src_offset, sink_length),
        _ => (Op::Put, MAX_PORTALS, 0, 0, 0),
    };
    let inc = Incoming {
        op,
        src_nid: initiator,
        src_pid: hdr.src_pid,
        match_bits,
        rlength,
        roffset,
    };
    (portal, inc)
}

/// Matches an incoming request against the portal's MEs
/// (`lnet_ptl_match_md`) and commits it to the MD found. Returns the MD
/// cookie, offset and length.
fn match_request(
    res: &mut Res,
    portal: u32,
    inc: &Incoming,
) -> core::result::Result<(u64, u32, u32), Miss> {
    if portal >= MAX_PORTALS {
        return Err(Miss::Drop("invalid portal"));
    }
    let mut found = None;
    for (&(p, _), &me_cookie) in res.ptl.iter() {
        if p != portal {
            continue;
        }
        let Some(me) = res.mes.get(&me_cookie) else {
            continue;
        };
        let Some(md_cookie) = me.md else {
            continue;
        };
        match try_md(res, &me.entry, md_cookie, inc) {
            Match::No | Match::Exhausted => continue,
            Match::TooBig { .. } => return Err(Miss::Drop("request too long for the matching MD")),
            Match::OffsetBeyond { .. } => return Err(Miss::Drop("offset beyond the matching MD")),
            Match::Yes { offset, mlength } => {
                found = Some((md_cookie, offset, mlength));
                break;
            }
        }
    }
    let (cookie, offset, mlength) = found.ok_or(Miss::NoMatch)?;
    commit(res, cookie, offset, mlength);
    Ok((cookie, offset, mlength))
}

fn try_md(res: &Res, entry: &core_md::MatchEntry, md_cookie: u64, inc: &Incoming) -> Match {
    match res.mds.get(&md_cookie).filter(|md| !md.is_zombie()) {
        Some(md) => core_md::try_match(entry, &md.state, inc),
        None => Match::No,
    }
}

fn commit(res: &mut Res, cookie: u64, offset: u32, mlength: u32) {
    if let Some(md) = res.mds.get_mut(&cookie) {
        md.state.commit(offset, mlength);
        md.refcount += 1;
    }
}

/// An incoming request waiting on a lazy portal for an MD
/// (`LNetSetLazyPortal`). The LND holds its payload until asked for it.
///
/// `private` is the LND's receive context, which it may have given as an
/// owned reference (ksocklnd: its connection): it goes back through
/// exactly one `lnd_recv`, when an MD takes the message
/// ([`attach_delayed`]) or it is dropped ([`drop_delayed`],
/// [`drop_delayed_on`]); never by just freeing this.
pub(crate) struct Delayed {
    msg: *mut lnet_msg,
    ni: Arc<Ni>,
    private: *mut c_void,
    from: Nid,
    portal: u32,
}

// SAFETY: the message and the LND's private pointer are not tied to a
// thread; the LND expects lnd_recv from any thread.
unsafe impl Send for Delayed {}

impl Delayed {
    fn hdr(&self) -> &Hdr {
        // SAFETY: a delayed message is alive until it is received or dropped.
        unsafe { &(*self.msg.cast::<Msg>()).hdr }
    }

    fn initiator(&self) -> Nid {
        // SAFETY: a delayed message is alive until it is received or dropped.
        unsafe { (*self.msg.cast::<Msg>()).initiator }
    }
}

/// The parts of a matched MD a receive needs.
struct MdView {
    kiov: *mut BioVec,
    niov: u32,
    ack_disabled: bool,
}

fn md_view(res: &Res, cookie: u64) -> MdView {
    match res.mds.get(&cookie) {
        Some(md) => MdView {
            kiov: md.kiov.as_ptr().cast_mut(),
            niov: md.kiov.len() as u32,
            ack_disabled: md.state.options & core_md::options::ACK_DISABLE != 0,
        },
        None => MdView {
            kiov: core::ptr::null_mut(),
            niov: 0,
            ack_disabled: true,
        },
    }
}

fn parse_request(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    m: KBox<Msg>,
    from: Nid,
    private: *mut c_void,
) -> i32 {
    let hdr = m.hdr;
    let (portal, inc) = request_of(&hdr, m.initiator);
    let mut res = lnet.res.lock();
    let why = match match_request(&mut res, portal, &inc) {
        Ok((cookie, offset, mlength)) => {
            let view = md_view(&res, cookie);
            drop(res);
            receive_request(
                lnet, ni, m, cookie, view, offset, mlength, from, private, false,
            );
            return 0;
        }
        Err(Miss::NoMatch) if res.lazy & (1u64 << (portal % 64)) != 0 => {
            // Checked under the resource lock, which LNet's shutdown and
            // `drop_delayed_on` take before dropping what waits: nothing
            // parks behind them (an NI going away, or LNet, would never
            // hand the LND its reference back).
            let going = ni.state.load(Ordering::Relaxed) == crate::ni::NiState::Deleting as u32;
            if !lnet.is_running() || going {
                "shutting down"
            } else if res.delayed.reserve(1, GFP_ATOMIC).is_ok() {
                let d = Delayed {
                    msg: Msg::into_c(m),
                    ni: ni.clone(),
                    private,
                    from,
                    portal,
                };
                // Room was reserved: this cannot fail.
                let _ = res.delayed.push(d, GFP_ATOMIC);
                return 0;
            } else {
                "no memory to wait on the lazy portal"
            }
        }
        Err(Miss::NoMatch) => "no matching ME",
        Err(Miss::Drop(why)) => why,
    };
    drop(res);
    Msg::free(lnet, m);
    drop_incoming(lnet, ni, private, hdr.payload_length, why, &hdr);
    0
}

/// Receives a matched request: a PUT's payload goes into the MD and its
/// end delivers the PUT event (and sends the ACK); a GET turns into the
/// REPLY carrying the MD's data, whose end delivers the GET event.
#[allow(clippy::too_many_arguments)]
fn receive_request(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    mut m: KBox<Msg>,
    cookie: u64,
    view: MdView,
    offset: u32,
    mlength: u32,
    from: Nid,
    private: *mut c_void,
    delayed: bool,
) {
    let hdr = m.hdr;
    m.md = Some(cookie);
    match hdr.msg {
        MsgBody::Put { ack_wmd, .. } => {
            m.build_event(lnet, EventKind::Put, from);
            m.ev.mlength = mlength;
            m.ev.offset = offset;
            if !ack_wmd.is_none() && !view.ack_disabled {
                m.ack = Some((ack_wmd, hdr.src_nid, mlength));
            }
            let rlen = hdr.payload_length;
            let sink = (view.kiov, view.niov, offset);
            recv(lnet, ni, private, m, delayed, sink, mlength, rlen);
        }
        MsgBody::Get { return_wmd, .. } => {
            m.build_event(lnet, EventKind::Get, from);
            m.ev.mlength = mlength;
            m.ev.offset = offset;
            let reply = Hdr {
                dest_nid: hdr.src_nid,
                src_nid: hdr.dest_nid,
                dest_pid: hdr.src_pid,
                src_pid: hdr.dest_pid,
                payload_length: mlength,
                msg: MsgBody::Reply {
                    dst_wmd: return_wmd,
                },
            };
            m.hdr = reply;
            if m.rdma_get {
                // The LND writes the MD's data into the initiator's buffer
                // and finalizes the REPLY; it stays committed for receive on
                // this NI, as Lustre's does (`lnet_parse_get`).
                let src = (view.kiov, view.niov, offset);
                recv(lnet, ni, private, m, delayed, src, mlength, mlength);
                return;
            }
            // The GET has no payload: let the LND finish with it, then the
            // same message goes back as the REPLY.
            let null = core::ptr::null_mut();
            let _ = ni
                .lnd
                .recv(ni, private, null, delayed, null.cast(), 0, 0, 0, 0);
            m.rx = false;
            m.ni = None;
            m.desc.kiov = view.kiov.cast();
            m.desc.niov = view.niov;
            m.desc.offset = offset;
            m.desc.len = mlength;
            send(lnet, m);
        }
        // Only requests get here; anything else still hands the LND its
        // context back.
        _ => {
            Msg::free(lnet, m);
            drop_incoming(lnet, ni, private, hdr.payload_length, "not a request", &hdr);
        }
    }
}

/// A new MD on a lazy portal takes the messages waiting there that it
/// matches, in arrival order (`lnet_ptl_attach_md`).
pub(crate) fn attach_delayed(lnet: &TheLnet, portal: u32, me_cookie: u64, md_cookie: u64) {
    let mut i = 0;
    loop {
        let mut res = lnet.res.lock();
        let Some(entry) = res.mes.get(&me_cookie).map(|me| me.entry) else {
            return;
        };
        let mut action = None;
        while let Some(d) = res.delayed.as_slice().get(i) {
            if d.portal != portal {
                i += 1;
                continue;
            }
            let (_, inc) = request_of(d.hdr(), d.initiator());
            match try_md(&res, &entry, md_cookie, &inc) {
                Match::No => i += 1,
                Match::Exhausted => return,
                Match::Yes { offset, mlength } => {
                    action = Some(Some((offset, mlength)));
                    break;
                }
                Match::TooBig { .. } | Match::OffsetBeyond { .. } => {
                    action = Some(None);
                    break;
                }
            }
        }
        let Some(action) = action else {
            return;
        };
        let Some(d) = vec::remove(&mut res.delayed, i) else {
            return;
        };
        // SAFETY: a delayed message is ours until received or dropped.
        let m = unsafe { Msg::from_c(d.msg) };
        match action {
            Some((offset, mlength)) => {
                commit(&mut res, md_cookie, offset, mlength);
                let view = md_view(&res, md_cookie);
                drop(res);
                receive_request(
                    lnet, &d.ni, m, md_cookie, view, offset, mlength, d.from, d.private, true,
                );
            }
            None => {
                drop(res);
                let hdr = m.hdr;
                Msg::free(lnet, m);
                drop_incoming(
                    lnet,
                    &d.ni,
                    d.private,
                    hdr.payload_length,
                    "bad match",
                    &hdr,
                );
            }
        }
    }
}

/// Drops the messages waiting on `portal`, or on every portal.
pub(crate) fn drop_delayed(lnet: &TheLnet, portal: Option<u32>) {
    drop_delayed_where(lnet, "lazy portal cleared", |d| {
        portal.map_or(true, |p| d.portal == p)
    });
}

/// Drops the messages `ni` received that wait on a lazy portal, before
/// its LND stops: each goes back to the LND (`lnd_recv` with no message),
/// which releases what it holds for it (`lnet_clear_lazy_portal` of the
/// NI's messages, as Lustre's `lnet_shutdown_lndni`).
pub(crate) fn drop_delayed_on(lnet: &TheLnet, ni: &Arc<Ni>) {
    drop_delayed_where(lnet, "its NI is going away", |d| Arc::ptr_eq(&d.ni, ni));
}

fn drop_delayed_where(lnet: &TheLnet, why: &str, which: impl Fn(&Delayed) -> bool) {
    loop {
        let mut res = lnet.res.lock();
        let i = res.delayed.iter().position(&which);
        let Some(d) = i.and_then(|i| vec::remove(&mut res.delayed, i)) else {
            return;
        };
        drop(res);
        // SAFETY: a delayed message is ours until received or dropped.
        let m = unsafe { Msg::from_c(d.msg) };
        let hdr = m.hdr;
        Msg::free(lnet, m);
        drop_incoming(lnet, &d.ni, d.private, hdr.payload_length, why, &hdr);
    }
}

fn parse_response(
    lnet: &TheLnet,
    ni: &Arc<Ni>,
    mut m: KBox<Msg>,
    wmd: WireHandle,
    from: Nid,
    private: *mut c_void,
) -> i32 {
    let hdr = m.hdr;
    let is_reply = matches!(hdr.msg, MsgBody::Reply { .. });
    let rlength = hdr.payload_length;
    let mut res = lnet.res.lock();
    let found = if wmd.interface_cookie == lnet.interface_cookie {
        res.md(wmd.object_cookie).map(|md| md.state.length)
    } else {
        None
    };
    let why = match found {
        None => Some(if is_reply {
            "REPLY to an MD that is gone"
        } else {
            "ACK to an MD that is gone"
        }),
        Some(len) if is_reply && rlength > len && !truncates(&mut res, wmd.object_cookie) => {
            Some("REPLY longer than its MD")
        }
        _ => None,
    };
    if let Some(why) = why {
        drop(res);
        Msg::free(lnet, m);
        // An ACK may well come after its MD went: PtlRPC unlinks a
        // difficult reply's MD once it has handled the reply, ACKed or not.
        // Lustre drops those silently (debug log only), and so do we: a
        // Lustre server would log one for many of its replies.
        if is_reply {
            drop_incoming(lnet, ni, private, rlength, why, &hdr);
        } else {
            discard_incoming(lnet, ni, private, rlength, &hdr);
        }
        return 0;
    }
    let cookie = wmd.object_cookie;
    let (kiov, niov, mlength) = match res.mds.get_mut(&cookie) {
        Some(md) => {
            md.refcount += 1;
            md.take_op();
            (
                md.kiov.as_ptr().cast_mut(),
                md.kiov.len() as u32,
                rlength.min(md.state.length),
            )
        }
        None => (core::ptr::null_mut(), 0, 0),
    };
    detach_tracker(lnet, &mut res, cookie);
    drop(res);
    m.md = Some(cookie);
    if is_reply {
        m.build_event(lnet, EventKind::Reply, from);
        m.ev.mlength = mlength;
        m.ev.offset = 0;
        recv(
            lnet,
            ni,
            private,
            m,
            false,
            (kiov, niov, 0),
            mlength,
            rlength,
        );
    } else {
        m.build_event(lnet, EventKind::Ack, from);
        let none = (core::ptr::null_mut(), 0, 0);
        recv(lnet, ni, private, m, false, none, 0, 0);
    }
    0
}

/// The REPLY of a GET being sent whose target writes the data straight
/// into the GET's MD (`lnet_create_reply_msg`, for o2iblnd's GET_REQ):
/// committed for receive on the GET's NI, holding the MD, with the MD's
/// fragments (`kiov`, count, length) for the LND to offer as the sink.
/// None when the MD is spent or there is no memory: the GET is then sent
/// as usual.
///
/// The GET is no longer resent: its REPLY belongs to this attempt and
/// ends with it, so a resend's data would find the MD spent (Lustre resends
/// it all the same, and drops that REPLY).
pub(crate) fn create_reply(
    lnet: &TheLnet,
    get: &mut Msg,
) -> Option<(KBox<Msg>, *mut BioVec, u32, u32)> {
    let ni = get.ni.clone()?;
    let cookie = get.md?;
    let MsgBody::Get { return_wmd, .. } = get.hdr.msg else {
        return None;
    };
    let from = get.hdr.dest_nid;
    let hdr = Hdr {
        dest_nid: get.hdr.src_nid,
        src_nid: from,
        dest_pid: get.hdr.src_pid,
        src_pid: get.hdr.dest_pid,
        payload_length: 0,
        msg: MsgBody::Reply {
            dst_wmd: return_wmd,
        },
    };
    let mut m = Msg::new(lnet, hdr).ok()?;
    let initiator = {
        let peers = lnet.peers.lock();
        peers
            .find(&from)
            .and_then(|(pi, _)| peers.list.get(pi))
            .map_or(from, |p| p.primary)
    };
    let mut res = lnet.res.lock();
    let sink = match res.mds.get_mut(&cookie) {
        Some(md) if md.state.threshold != 0 && !md.is_zombie() => {
            md.refcount += 1;
            md.take_op();
            let len = md.state.length;
            Some((md.kiov.as_ptr().cast_mut(), md.kiov.len() as u32, len))
        }
        _ => None,
    };
    drop(res);
    let Some((kiov, niov, len)) = sink else {
        Msg::free(lnet, m);
        return None;
    };
    m.hdr.payload_length = len;
    m.md = Some(cookie);
    m.rx = true;
    m.rx_committed = true;
    m.no_rx_peer = true;
    m.from = from;
    m.initiator = initiator;
    m.deadline = commit_deadline(&ni);
    m.ni = Some(ni);
    m.build_event(lnet, EventKind::Reply, from);
    m.ev.mlength = len;
    m.ev.offset = 0;
    get.no_resend = true;
    Some((m, kiov, niov, len))
}

/// The target has written `len` bytes of a REPLY made by [`create_reply`]
/// (`lnet_set_reply_msg_len`): the REPLY has arrived. False, changing
/// nothing, if that is more than the sink offered.
pub(crate) fn set_reply_len(lnet: &TheLnet, m: &mut Msg, len: u32) -> bool {
    if len > m.ev.mlength || !m.rx || !matches!(m.hdr.msg, MsgBody::Reply { .. }) {
        return false;
    }
    m.ev.mlength = len;
    Counters::add(&lnet.counters.recv_count);
    Counters::add_len(&lnet.counters.recv_length, len);
    if let Some(ni) = m.ni.as_ref() {
        let slot = msg_stats::slot(&m.hdr.msg);
        ni.count_recv(len, slot);
        // Lustre's REPLY written by RDMA has no peer NI to mark up.
        count_rx(lnet, ni, &m.from, &m.hdr.src_nid, slot, false);
    }
    if let Some(cookie) = m.md {
        detach_tracker(lnet, &mut lnet.res.lock(), cookie);
    }
    true
}

fn truncates(res: &mut Res, cookie: u64) -> bool {
    res.md(cookie)
        .is_some_and(|md| md.state.options & core_md::options::TRUNCATE != 0)
}

/// Starts a PUT or GET from a bound MD (the body of `LNetPut`/`LNetGet`).
pub(crate) struct Request {
    pub(crate) md: u64,
    pub(crate) target: Nid,
    pub(crate) target_pid: u32,
    pub(crate) src: Nid,
    pub(crate) portal: u32,
    pub(crate) match_bits: u64,
    pub(crate) offset: u32,
    /// PUT: Some(hdr_data); GET: None.
    pub(crate) put: Option<u64>,
    pub(crate) ack: bool,
    /// Seconds for the ACK/REPLY; 0 for `lnet_transaction_timeout`.
    pub(crate) timeout: u32,
    /// A recovery ping: never resent, no Multi-Rail selection.
    pub(crate) recovery: bool,
}

pub(crate) fn start(lnet: &TheLnet, r: Request) -> Result {
    let is_put = r.put.is_some();
    let placeholder = Hdr {
        dest_nid: r.target,
        src_nid: r.src,
        dest_pid: r.target_pid,
        src_pid: 0,
        payload_length: 0,
        msg: MsgBody::Reply {
            dst_wmd: WireHandle::NONE,
        },
    };
    let mut m = Msg::new(lnet, placeholder)?;
    let t = params::snapshot();
    let mut res = lnet.res.lock();
    if !lnet.is_running() {
        drop(res);
        Msg::free(lnet, m);
        return Err(ESHUTDOWN());
    }
    let Some(md) = res
        .md(r.md)
        .filter(|md| md.state.threshold != 0 && md.me.is_none())
    else {
        drop(res);
        Msg::free(lnet, m);
        return Err(ENOENT);
    };
    md.refcount += 1;
    md.take_op();
    let len = md.state.length;
    let wmd = WireHandle {
        interface_cookie: lnet.interface_cookie,
        object_cookie: r.md,
    };
    let tracked = (!is_put || r.ack)
        && core_md::response_tracked(md.state.options, t.response_tracking, is_put, r.timeout > 0);
    if tracked {
        let secs = if r.timeout > 0 {
            r.timeout
        } else {
            t.transaction_timeout
        };
        let deadline = kapi::kthread::now_secs().saturating_add(i64::from(secs));
        if md.rspt.replace((deadline, r.target)).is_none() {
            lnet.counters.rst_alloc.fetch_add(1, Ordering::Relaxed);
        }
        lnet.next_deadline.fetch_min(deadline, Ordering::Relaxed);
    }
    if is_put {
        set_payload(&mut m, &md.kiov, 0, len);
    }
    m.md = Some(r.md);
    m.no_resend = r.recovery;
    m.recovery = r.recovery;
    drop(res);

    m.hdr.msg = match r.put {
        Some(hdr_data) => MsgBody::Put {
            ack_wmd: if r.ack { wmd } else { WireHandle::NONE },
            match_bits: r.match_bits,
            hdr_data,
            ptl_index: r.portal,
            offset: r.offset,
        },
        None => MsgBody::Get {
            return_wmd: wmd,
            match_bits: r.match_bits,
            ptl_index: r.portal,
            src_offset: r.offset,
            sink_length: len,
        },
    };
    m.hdr.payload_length = if is_put { len } else { 0 };
    m.hdr.src_pid = lnet.pid.load(Ordering::Relaxed);
    m.build_event(lnet, EventKind::Send, Nid::ANY);
    m.ev.mlength = len;
    m.ev.rlength = len;
    m.ev.offset = r.offset;
    send(lnet, m);
    Ok(())
}
