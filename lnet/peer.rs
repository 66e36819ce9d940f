// SPDX-License-Identifier: GPL-2.0

//! Peers and their NIs (`struct lnet_peer`, `lnet_peer_ni`): created by
//! traffic (one NID, not Multi-Rail) or by `lnetctl peer add` (a primary
//! NID and more, Multi-Rail unless told otherwise). Selection reads them to
//! spread traffic over a Multi-Rail peer's NIs.

use crate::lnet_core::health::MAX_HEALTH;
use crate::lnet_core::msg_stats::MsgCounts;
use crate::lnet_core::nid::{Net, Nid};
use crate::lnet_core::nid_index::{self, NidSlot};
use kernel::prelude::*;

/// One NI of a peer.
#[derive(Clone, Copy)]
pub(crate) struct PeerNi {
    pub(crate) nid: Nid,
    pub(crate) health: u32,
    /// Round-robin sequence (`lpni_seq`).
    pub(crate) seq: u64,
    /// Non-Multi-Rail peers: the local NI that talks to this one.
    pub(crate) pref_nid: Option<Nid>,
    /// Messages by type (`lpni_stats`); `send_count`... are their sums.
    /// Sends count at selection, as the NI's do (`Ni::count_send`).
    pub(crate) sent: MsgCounts,
    pub(crate) received: MsgCounts,
    pub(crate) dropped: MsgCounts,
    pub(crate) hstats: crate::health::PeerNiStats,
    pub(crate) recovery: crate::recovery::Recovery,
    /// Monotonic seconds of the last message from this NID (0: never).
    pub(crate) last_alive: i64,
    /// UDSP priority (`lpni_sel_priority`; u32::MAX when unset).
    pub(crate) sel_priority: u32,
    /// UDSP priority of its peer net (`lpn_sel_priority`), kept on each
    /// peer NI of the net.
    pub(crate) net_priority: u32,
    /// Local NIDs a UDSP pair rule prefers for this peer NI (`lpni_pref`).
    pub(crate) udsp_pref: crate::udsp::PrefNids,
    /// The UDSP rules have been applied to it (they are applied to a new
    /// peer NI where the local NIs are at hand: its first send, or when an
    /// administrator adds or lists it).
    pub(crate) udsp_applied: bool,
    /// The status its node last reported for it in a ping buffer
    /// (`lpni_ns_status`): `STATUS_UP` until told otherwise.
    pub(crate) ns_status: u32,
    /// An LND reported it (`lnet_notify`): whether, and the date of the
    /// newest report applied (`lpni_notified`, `lpni_timestamp`).
    pub(crate) notified: bool,
    pub(crate) notify_time: i64,
}

impl PeerNi {
    pub(crate) fn new(nid: Nid) -> PeerNi {
        PeerNi {
            nid,
            health: MAX_HEALTH,
            seq: 0,
            pref_nid: None,
            sent: MsgCounts::default(),
            received: MsgCounts::default(),
            dropped: MsgCounts::default(),
            hstats: crate::health::PeerNiStats {
                dropped: 0,
                timeout: 0,
                error: 0,
                network_timeout: 0,
            },
            recovery: crate::recovery::Recovery::default(),
            last_alive: 0,
            sel_priority: u32::MAX,
            net_priority: u32::MAX,
            udsp_pref: crate::udsp::PrefNids::default(),
            udsp_applied: false,
            ns_status: crate::lnet_core::ping::STATUS_UP,
            notified: false,
            notify_time: 0,
        }
    }

    /// A remote failure (`lnet_handle_remote_failure_locked`): health
    /// down by `sensitivity`, and recovery if it may be recovered.
    pub(crate) fn remote_failure(&mut self, sensitivity: u32, now: i64) {
        self.health = crate::lnet_core::health::dec(self.health, sensitivity);
        self.offer_recovery(now);
    }

    /// Puts it on the recovery queue if it needs and may have recovery
    /// (`lnet_peer_ni_add_to_recoveryq_locked`): below full health and
    /// heard from, within `lnet_recovery_limit` of that. One aged out is
    /// left off with its ping count reset, so that if it comes back its
    /// first ping goes at once; one already queued stays until it heals.
    pub(crate) fn offer_recovery(&mut self, now: i64) {
        if self.recovery.queued || self.health >= crate::lnet_core::health::MAX_HEALTH {
            return;
        }
        if crate::recovery::peer_recoverable(self.last_alive, now) {
            self.recovery.queue(now);
        } else if self.last_alive != 0 {
            self.recovery.ping_count = 0;
        }
    }

    /// Whether its node reports it down.
    pub(crate) fn reported_down(&self) -> bool {
        self.ns_status == crate::lnet_core::ping::STATUS_DOWN
    }

    /// Whether the local NI `ni` is preferred for this peer NI: the NI it
    /// was first reached from, or one a UDSP pair rule names.
    pub(crate) fn prefers(&self, ni: &Nid) -> bool {
        self.pref_nid == Some(*ni) || self.udsp_pref.contains(ni)
    }
}

/// What [`Peers::ulp_add`] did.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum UlpAdd {
    /// A peer with the NID as its primary was made.
    Added,
    /// A peer already has it and stays as it is.
    Exists,
    /// It belongs to a peer whose primary, this one, is locked.
    Locked(Nid),
    /// A configured peer of the other Multi-Rail kind has it.
    Refused,
}

pub(crate) struct Peer {
    pub(crate) primary: Nid,
    pub(crate) multi_rail: bool,
    /// Configured by lnetctl (not created by traffic).
    pub(crate) configured: bool,
    pub(crate) lock_primary: bool,
    /// `lp_send_seq`.
    pub(crate) send_seq: u64,
    pub(crate) nis: KVec<PeerNi>,
    /// Sequence of each peer net (`lpn_seq`).
    pub(crate) net_seqs: KVec<(Net, u64)>,
    pub(crate) disc: crate::discovery::PeerDisc,
    /// What the router checker knows of it as a gateway.
    pub(crate) rtr: crate::router_check::PeerRtr,
}

impl Peer {
    pub(crate) fn net_seq(&self, net: Net) -> u64 {
        self.net_seqs
            .iter()
            .find(|(n, _)| *n == net)
            .map_or(0, |(_, s)| *s)
    }

    fn set_net_seq(&mut self, net: Net, seq: u64) {
        if let Some(e) = self.net_seqs.iter_mut().find(|(n, _)| *n == net) {
            e.1 = seq;
        } else {
            // Best effort: without room the net just keeps sequence 0.
            let _ = self.net_seqs.push((net, seq), GFP_ATOMIC);
        }
    }

    /// Records a send of a message of type `slot` to `lpni` (selection.md
    /// §6).
    pub(crate) fn commit(&mut self, lpni: usize, slot: usize) {
        self.send_seq = self.send_seq.wrapping_add(1);
        let seq = self.send_seq;
        if let Some(p) = self.nis.get_mut(lpni) {
            p.seq = seq;
            p.sent.add(slot);
            let net = p.nid.net();
            self.set_net_seq(net, seq);
        }
    }
}

/// All peers.
#[derive(Default)]
pub(crate) struct Peers {
    pub(crate) list: KVec<Peer>,
    /// Where each NID was last found in `list`, sorted by NID: a hint,
    /// checked on every use (lnet-core `nid_index`), so that code changing
    /// `list` need not keep it. Kept up to date by `locate`.
    index: KVec<NidSlot>,
    /// The route table: its gateways are peers of this table, and
    /// selection reads both under one lock.
    pub(crate) routes: crate::route::Routes,
}

impl Peers {
    /// The index's entry for `nid`, if it still tells the truth.
    fn hint(&self, nid: &Nid) -> Option<(usize, usize)> {
        let s = nid_index::lookup(&self.index, nid)?;
        let (pi, li) = (s.peer as usize, s.ni as usize);
        (self.list.get(pi)?.nis.get(li)?.nid == *nid).then_some((pi, li))
    }

    /// A walk of every peer NI.
    fn scan(&self, nid: &Nid) -> Option<(usize, usize)> {
        self.list
            .iter()
            .enumerate()
            .find_map(|(pi, p)| p.nis.iter().position(|n| n.nid == *nid).map(|ni| (pi, ni)))
    }

    /// The peer owning `nid` and the index of that NID in it.
    pub(crate) fn find(&self, nid: &Nid) -> Option<(usize, usize)> {
        self.hint(nid).or_else(|| self.scan(nid))
    }

    /// `find`, keeping the index: a NID the index lacks is added; a hint
    /// that lied (peers were removed or moved) rebuilds it.
    pub(crate) fn locate(&mut self, nid: &Nid) -> Option<(usize, usize)> {
        if let Some(f) = self.hint(nid) {
            return Some(f);
        }
        let stale = nid_index::lookup(&self.index, nid).is_some();
        let f = self.scan(nid);
        if stale {
            self.reindex();
        } else if let Some((pi, li)) = f {
            self.remember(*nid, pi, li);
        }
        f
    }

    /// Rebuilds the index from the table. Without memory for it the index
    /// is left empty: lookups walk the table, which is slower, not wrong.
    fn reindex(&mut self) {
        crate::kapi::vec::clear(&mut self.index);
        let total: usize = self.list.iter().map(|p| p.nis.len()).sum();
        if self.index.reserve(total, GFP_ATOMIC).is_err() {
            return;
        }
        for (pi, p) in self.list.iter().enumerate() {
            for (li, n) in p.nis.iter().enumerate() {
                let slot = NidSlot {
                    nid: n.nid,
                    peer: pi as u32,
                    ni: li as u32,
                };
                // Cannot fail: reserved above.
                let _ = self.index.push(slot, GFP_ATOMIC);
            }
        }
        nid_index::sort(&mut self.index);
    }

    /// Records that `nid` is NI `li` of peer `pi`.
    fn remember(&mut self, nid: Nid, pi: usize, li: usize) {
        let slot = NidSlot {
            nid,
            peer: pi as u32,
            ni: li as u32,
        };
        match nid_index::position(&self.index, &nid) {
            Ok(i) => {
                if let Some(s) = self.index.get_mut(i) {
                    *s = slot;
                }
            }
            Err(i) => {
                // Without memory the NID stays out: found by a walk.
                if self.index.push(slot, GFP_ATOMIC).is_ok() {
                    nid_index::settle_last(&mut self.index, i);
                }
            }
        }
    }

    /// The peer NI with NID `nid`, if known.
    pub(crate) fn peer_ni_mut(&mut self, nid: &Nid) -> Option<&mut PeerNi> {
        let (pi, li) = self.locate(nid)?;
        self.list.get_mut(pi)?.nis.get_mut(li)
    }

    /// The peer of `nid`, created (non-Multi-Rail, one NI) if unknown.
    pub(crate) fn find_or_create(&mut self, nid: &Nid) -> Result<(usize, usize)> {
        if let Some(f) = self.locate(nid) {
            return Ok(f);
        }
        let mut nis = KVec::new();
        nis.push(PeerNi::new(*nid), GFP_ATOMIC)?;
        self.list.push(
            Peer {
                primary: *nid,
                multi_rail: false,
                configured: false,
                lock_primary: false,
                send_seq: 0,
                nis,
                net_seqs: KVec::new(),
                disc: Default::default(),
                rtr: crate::router_check::PeerRtr::new(),
            },
            GFP_ATOMIC,
        )?;
        let pi = self.list.len() - 1;
        self.remember(*nid, pi, 0);
        Ok((pi, 0))
    }

    /// `lnetctl peer add`: creates the peer `primary` if needed and adds
    /// `nids` to it. A NID that belongs to another peer is refused, except
    /// a traffic-created peer of that one NID, which is merged in.
    pub(crate) fn add(
        &mut self,
        primary: &Nid,
        nids: &[Nid],
        multi_rail: bool,
        lock: bool,
    ) -> Result {
        for n in Iterator::chain(core::iter::once(primary), nids.iter()) {
            if let Some((pi, _)) = self.find(n) {
                let p = self.list.get(pi).ok_or(EINVAL)?;
                let mine = p.nis.iter().any(|x| x.nid == *primary);
                if !mine && (p.configured || p.nis.len() > 1) {
                    return Err(EEXIST);
                }
            }
        }
        // Traffic-created single-NID peers of these NIDs are folded in.
        for n in Iterator::chain(core::iter::once(primary), nids.iter()) {
            if let Some((pi, _)) = self.find(n) {
                let folded = self
                    .list
                    .get(pi)
                    .is_some_and(|p| !p.configured && p.nis.len() == 1 && p.primary != *primary);
                if folded {
                    crate::kapi::vec::remove(&mut self.list, pi);
                }
            }
        }
        let pi = match self.find(primary) {
            Some((pi, _)) => pi,
            None => self.find_or_create(primary)?.0,
        };
        let p = self.list.get_mut(pi).ok_or(EINVAL)?;
        p.configured = true;
        if multi_rail && !p.multi_rail {
            // Preferred NIs are for peers that are not Multi-Rail.
            for x in p.nis.iter_mut() {
                x.pref_nid = None;
            }
        }
        p.multi_rail = multi_rail;
        p.lock_primary |= lock;
        p.primary = *primary;
        for n in nids {
            if !p.nis.iter().any(|x| x.nid == *n) {
                p.nis.push(PeerNi::new(*n), GFP_ATOMIC)?;
            }
        }
        Ok(())
    }

    /// `LNetAddPeer`'s peer for `nid` (Lustre's `lnet_peer_add` without
    /// the configured flag): a new peer with `nid` as its primary, unless
    /// a configured peer, a peer with a locked primary, or (when not
    /// locking) a peer with this primary already has it. Another peer
    /// holding `nid` is replaced, as Lustre deletes and recreates it.
    pub(crate) fn ulp_add(&mut self, nid: &Nid, multi_rail: bool, lock: bool) -> Result<UlpAdd> {
        if let Some((pi, _)) = self.find(nid) {
            let p = self.list.get(pi).ok_or(EINVAL)?;
            if p.configured {
                // Lustre: -EPERM for a Multi-Rail mismatch, else -EEXIST or
                // 0; the peer is left as the administrator made it.
                return Ok(if p.primary == *nid && p.multi_rail != multi_rail {
                    UlpAdd::Refused
                } else {
                    UlpAdd::Exists
                });
            }
            if p.lock_primary {
                return Ok(if p.primary == *nid {
                    UlpAdd::Exists
                } else {
                    UlpAdd::Locked(p.primary)
                });
            }
            if !lock && p.primary == *nid {
                return Ok(UlpAdd::Exists);
            }
            crate::kapi::vec::remove(&mut self.list, pi);
        }
        let (pi, _) = self.find_or_create(nid)?;
        let p = self.list.get_mut(pi).ok_or(EINVAL)?;
        p.multi_rail = multi_rail;
        p.lock_primary = lock;
        Ok(UlpAdd::Added)
    }

    /// Moves `nid` into the Multi-Rail peer whose primary is `primary`, as
    /// Lustre's discovery does after `LNetAddPeer` asked it to merge them.
    /// A NID of a configured peer or of a peer with a locked primary stays
    /// where it is (Lustre's `lnet_peer_force_merge` leaves those), and so
    /// does one whose target is not Multi-Rail. Returns whether it moved.
    pub(crate) fn ulp_merge(&mut self, nid: &Nid, primary: &Nid) -> Result<bool> {
        let (ti, _) = self.find(primary).ok_or(ENOENT)?;
        if !self.list.get(ti).is_some_and(|t| t.multi_rail) {
            return Ok(false);
        }
        if let Some((pi, li)) = self.find(nid) {
            if pi == ti {
                return Ok(false);
            }
            let p = self.list.get_mut(pi).ok_or(EINVAL)?;
            if p.configured || p.lock_primary {
                return Ok(false);
            }
            crate::kapi::vec::remove(&mut p.nis, li);
            if p.nis.is_empty() {
                crate::kapi::vec::remove(&mut self.list, pi);
            } else if p.primary == *nid {
                if let Some(first) = p.nis.first() {
                    p.primary = first.nid;
                }
            }
        }
        // The target's index moved if a peer before it went.
        let (ti, _) = self.find(primary).ok_or(ENOENT)?;
        let t = self.list.get_mut(ti).ok_or(ENOENT)?;
        t.nis.push(PeerNi::new(*nid), GFP_ATOMIC)?;
        Ok(true)
    }

    /// Moves `nid` into peer `pi` out of another peer holding it
    /// (discovery learnt it belongs to `pi`'s node), unless an
    /// administrator configured or locked that peer. Returns `pi`'s index
    /// afterwards: a peer left empty is removed.
    pub(crate) fn take_nid(&mut self, pi: usize, nid: &Nid) -> usize {
        let Some((oi, li)) = self.find(nid).filter(|(oi, _)| *oi != pi) else {
            return pi;
        };
        let Some(o) = self.list.get_mut(oi) else {
            return pi;
        };
        if o.configured || o.lock_primary {
            return pi;
        }
        let Some(ni) = crate::kapi::vec::remove(&mut o.nis, li) else {
            return pi;
        };
        let mut pi = pi;
        if o.nis.is_empty() {
            crate::kapi::vec::remove(&mut self.list, oi);
            if oi < pi {
                pi -= 1;
            }
        } else if o.primary == *nid {
            if let Some(first) = o.nis.first() {
                o.primary = first.nid;
            }
        }
        if let Some(p) = self.list.get_mut(pi) {
            // Its counters and health come along.
            if p.nis.reserve(1, GFP_ATOMIC).is_ok() {
                let _ = p.nis.push(ni, GFP_ATOMIC);
            }
        }
        pi
    }

    /// `lnetctl peer del`: the listed NIDs of the peer, or the whole peer.
    pub(crate) fn del(&mut self, primary: &Nid, nids: &[Nid], force: bool) -> Result {
        let (pi, _) = self.find(primary).ok_or(ENOENT)?;
        if nids.is_empty() {
            crate::kapi::vec::remove(&mut self.list, pi);
            return Ok(());
        }
        let p = self.list.get_mut(pi).ok_or(ENOENT)?;
        for n in nids {
            if *n == p.primary && p.lock_primary && !force {
                return Err(EPERM);
            }
            let i = p.nis.iter().position(|x| x.nid == *n).ok_or(ENOENT)?;
            crate::kapi::vec::remove(&mut p.nis, i);
        }
        if p.nis.is_empty() {
            crate::kapi::vec::remove(&mut self.list, pi);
        } else if !p.nis.iter().any(|x| x.nid == p.primary) {
            if let Some(first) = p.nis.first() {
                p.primary = first.nid;
            }
        }
        Ok(())
    }
}
