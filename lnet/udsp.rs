// SPDX-License-Identifier: GPL-2.0

//! User Defined Selection Policies (udsp.md): the ordered rule list, and
//! what applying a rule writes into NIs and peer NIs, where selection reads
//! it (rules are never consulted at send time). Descriptors, matching and
//! the marshalled form are lnet-core's (`lnet_core::udsp`).
//!
//! Router rules are kept and shown but prefer nothing: without routes there
//! is no gateway to prefer (as in Lustre on a node with no routes).

use crate::kapi::bindings::lnet_ioc_udsp;
use crate::kapi::errno;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::udsp::{self, Action, AddPlan, Kind, Rule};
use crate::ni::Ni;
use crate::peer::{Peer, PeerNi};
use crate::state::{Nis, TheLnet};
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;

/// No priority: every object starts with it (`LNET_MAX_SELECTION_PRIORITY`).
const UNSET: u32 = u32::MAX;
/// Most local NIDs one peer NI keeps as preferred.
const MAX_PREF: usize = 8;
/// Most local NIs a pair rule is matched against at once.
const MAX_LOCAL: usize = 32;

/// A peer NI's preferred local NIDs from a pair rule (`lpni_pref`).
#[derive(Clone, Copy)]
pub(crate) struct PrefNids {
    n: usize,
    nids: [Nid; MAX_PREF],
}

impl Default for PrefNids {
    fn default() -> Self {
        PrefNids {
            n: 0,
            nids: [Nid::ANY; MAX_PREF],
        }
    }
}

impl PrefNids {
    pub(crate) fn as_slice(&self) -> &[Nid] {
        self.nids.get(..self.n).unwrap_or(&[])
    }

    pub(crate) fn contains(&self, nid: &Nid) -> bool {
        self.as_slice().contains(nid)
    }

    fn clear(&mut self) {
        self.n = 0;
    }

    /// Past `MAX_PREF` NIDs the rest are left out.
    fn push(&mut self, nid: Nid) {
        if let Some(slot) = self.nids.get_mut(self.n) {
            *slot = nid;
            self.n += 1;
        }
    }
}

/// The rules, in index order (`ln_udsp_list`). A leaf lock: taken after
/// `nis` and `peers` when they are held.
#[derive(Default)]
pub(crate) struct Rules {
    list: KVec<Rule>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Apply,
    Revert,
}

fn priority_value(rule: &Rule, mode: Mode) -> Option<u32> {
    match (rule.action, mode) {
        (Action::Priority(p), Mode::Apply) => Some(p),
        (Action::Priority(_), Mode::Revert) => Some(UNSET),
        (Action::Preferred, _) => None,
    }
}

/// A source-priority rule on a local NI (its net or itself).
fn on_ni(rule: &Rule, ni: &Ni, mode: Mode) {
    if !rule.effective() || rule.kind() != Kind::SrcPriority {
        return;
    }
    let Some(v) = priority_value(rule, mode) else {
        return;
    };
    if rule.src.is_net_rule() {
        if rule.src.matches_net(ni.nid.net()) {
            ni.net_priority.store(v, Relaxed);
        }
    } else if rule.src.matches_nid(&ni.nid) {
        ni.sel_priority.store(v, Relaxed);
    }
}

/// A destination rule on a peer NI. `new`: the peer NI was just created,
/// which net-only pair rules do not reach (udsp.md §1.3).
fn on_peer_ni(rule: &Rule, lp: &mut PeerNi, local: &[Nid], mode: Mode, new: bool) {
    if !rule.effective() {
        return;
    }
    match rule.kind() {
        Kind::DstPriority => {
            let Some(v) = priority_value(rule, mode) else {
                return;
            };
            if rule.dst.is_net_rule() {
                if rule.dst.matches_net(lp.nid.net()) {
                    lp.net_priority = v;
                }
            } else if rule.dst.matches_nid(&lp.nid) {
                lp.sel_priority = v;
            }
        }
        Kind::Pair => {
            let hit = if rule.dst.is_net_rule() {
                !new && rule.dst.matches_net(lp.nid.net())
            } else {
                rule.dst.matches_nid(&lp.nid)
            };
            if !hit {
                return;
            }
            // A pair rule replaces every preference, the one traffic set
            // included (`lnet_peer_clr_pref_nids`).
            lp.udsp_pref.clear();
            lp.pref_nid = None;
            if mode == Mode::Apply {
                // A net-only src matches no NID, so it prefers none.
                for n in local.iter().filter(|n| rule.src.matches_nid(n)) {
                    lp.udsp_pref.push(*n);
                }
            }
        }
        Kind::Router | Kind::SrcPriority | Kind::Invalid => {}
    }
}

/// The NIDs of the local NIs (loopback aside), and how many.
fn local_nids(nis: &Nis) -> ([Nid; MAX_LOCAL], usize) {
    let mut out = [Nid::ANY; MAX_LOCAL];
    let mut n = 0;
    for ni in nis.nis.iter().filter(|ni| ni.nid != Nid::LO) {
        if let Some(slot) = out.get_mut(n) {
            *slot = ni.nid;
            n += 1;
        }
    }
    (out, n)
}

/// Every rule, last index first so that the first one wins, on every NI
/// and peer NI (`lnet_udsp_apply_policies`).
fn apply_all(lnet: &TheLnet) {
    let nis = lnet.nis.lock();
    let mut peers = lnet.peers.lock();
    let rules = lnet.udsp.lock();
    let (local, n) = local_nids(&nis);
    let local = local.get(..n).unwrap_or(&[]);
    for r in rules.list.iter().rev() {
        for ni in nis.nis.iter() {
            on_ni(r, ni, Mode::Apply);
        }
        for lp in peers.list.iter_mut().flat_map(|p| p.nis.iter_mut()) {
            on_peer_ni(r, lp, local, Mode::Apply, false);
        }
    }
    for lp in peers.list.iter_mut().flat_map(|p| p.nis.iter_mut()) {
        lp.udsp_applied = true;
    }
}

/// Undoes what `rule` set (`lnet_udsp_del_policy`): its priorities go back
/// to unset and the preferred lists it matched are cleared; other rules
/// are not applied again.
fn revert(nis: &Nis, peers: &mut crate::peer::Peers, rule: &Rule) {
    for ni in nis.nis.iter() {
        on_ni(rule, ni, Mode::Revert);
    }
    for lp in peers.list.iter_mut().flat_map(|p| p.nis.iter_mut()) {
        on_peer_ni(rule, lp, &[], Mode::Revert, false);
    }
}

/// A local NI that just started gets the source rules.
pub(crate) fn apply_new_ni(lnet: &TheLnet, ni: &Ni) {
    let rules = lnet.udsp.lock();
    for r in rules.list.iter().rev() {
        on_ni(r, ni, Mode::Apply);
    }
}

/// Peer NIs of `peer` created since the rules were last applied get the
/// destination rules; called with `nis` and `peers` held.
pub(crate) fn apply_new_peer_nis(lnet: &TheLnet, nis: &Nis, peer: &mut Peer) {
    if peer.nis.iter().all(|lp| lp.udsp_applied) {
        return;
    }
    let rules = lnet.udsp.lock();
    let (local, n) = local_nids(nis);
    let local = local.get(..n).unwrap_or(&[]);
    for lp in peer.nis.iter_mut().filter(|lp| !lp.udsp_applied) {
        for r in rules.list.iter().rev() {
            on_peer_ni(r, lp, local, Mode::Apply, true);
        }
        lp.udsp_applied = true;
    }
}

/// Every peer's new peer NIs (before showing them).
pub(crate) fn apply_new_peers(lnet: &TheLnet) {
    let nis = lnet.nis.lock();
    let mut peers = lnet.peers.lock();
    for p in peers.list.iter_mut() {
        apply_new_peer_nis(lnet, &nis, p);
    }
}

/// Forgets every rule (LNet shutdown).
pub(crate) fn clear(lnet: &TheLnet) {
    let old = core::mem::take(&mut lnet.udsp.lock().list);
    drop(old);
}

/// Whether there is a rule at `idx` (Lustre's UDSP ioctls, libcfs_ioctl.rs).
pub(crate) fn has_rule(lnet: &TheLnet, idx: i32) -> bool {
    usize::try_from(idx).is_ok_and(|i| i < lnet.udsp.lock().list.len())
}

/// What a UDSP ioctl asks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Del,
    Get,
}

fn idx_of(u: &lnet_ioc_udsp) -> i32 {
    u.ud_idx as i32
}

fn add(lnet: &TheLnet, rule: Rule, idx: i32) -> Result {
    {
        let mut rules = lnet.udsp.lock();
        match udsp::plan_add(&rules.list, &rule, idx) {
            AddPlan::Exists => return Err(errno::EALREADY()),
            AddPlan::Update(i) => {
                if let Some(old) = rules.list.get_mut(i) {
                    old.action = rule.action;
                }
            }
            AddPlan::Insert(at) => {
                // Under a spinlock: an atomic allocation for one rule.
                rules.list.push(rule, GFP_ATOMIC)?;
                if let Some(tail) = rules.list.as_mut_slice().get_mut(at..) {
                    tail.rotate_right(1);
                }
            }
        }
    }
    apply_all(lnet);
    Ok(())
}

fn del(lnet: &TheLnet, idx: i32) -> Result {
    let nis = lnet.nis.lock();
    let mut peers = lnet.peers.lock();
    let mut rules = lnet.udsp.lock();
    if idx < 0 {
        while let Some(r) = crate::kapi::vec::pop(&mut rules.list) {
            revert(&nis, &mut peers, &r);
        }
        return Ok(());
    }
    let i = usize::try_from(idx).map_err(|_| EINVAL)?;
    if i >= rules.list.len() {
        return Err(ENOENT);
    }
    if let Some(r) = crate::kapi::vec::remove(&mut rules.list, i) {
        revert(&nis, &mut peers, &r);
    }
    Ok(())
}

/// Handles LNET_IOC_UDSP_{ADD,DEL,GET} on an argument already read.
pub(crate) fn ioctl(lnet: &TheLnet, op: Op, u: &mut lnet_ioc_udsp) -> Result {
    let len = u.ud_bulk_len as usize;
    let bulk = u.ud_bulk.get(..len).ok_or(EINVAL)?;
    // Bytes past the bulk are zero, as every unused slot of the ABI.
    if u.ud_bulk
        .get(len..)
        .is_some_and(|t| t.iter().any(|&b| b != 0))
    {
        return Err(EINVAL);
    }
    match op {
        Op::Add => {
            let rule =
                udsp::rule_from_ioctl(bulk, u.ud_action_type, u.ud_priority).map_err(|_| EINVAL)?;
            if !rule.effective() {
                // Kept, as Lustre keeps it, but it will do nothing.
                pr_warn!("UDSP rule kept with an action its kind ignores\n");
            }
            add(lnet, rule, idx_of(u))
        }
        Op::Del => {
            if len != 0 || u.ud_action_type != 0 || u.ud_priority != 0 {
                return Err(EINVAL);
            }
            del(lnet, idx_of(u))
        }
        Op::Get => {
            if len != 0 || u.ud_action_type != 0 || u.ud_priority != 0 {
                return Err(EINVAL);
            }
            let i = usize::try_from(idx_of(u)).map_err(|_| ENOENT)?;
            let rule = *lnet.udsp.lock().list.get(i).ok_or(ENOENT)?;
            let n = udsp::encode_bulk(&rule, &mut u.ud_bulk).ok_or(EINVAL)?;
            u.ud_bulk_len = n as u32;
            (u.ud_action_type, u.ud_priority) = udsp::action_to_ioctl(rule.action);
            Ok(())
        }
    }
}
