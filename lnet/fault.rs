// SPDX-License-Identifier: GPL-2.0

//! Fault injection (`lctl net_drop_*` / `net_delay_*`, Lustre's
//! net_fault.c): drop rules that fail sends with a chosen health status or
//! lose received messages silently, and delay rules that hold messages.
//! When a rule fires is lnet-core's `fault` policy; this file keeps the
//! rules and the held messages, which the monitor thread releases.

use crate::kapi::kthread;
use crate::lnet_core::fault::{self, Action, Attr, Pace, Rule, HEALTH_RANDOM};
use crate::lnet_core::hdr::{Hdr, MsgBody};
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::msg::Msg;
use crate::ni::{Ni, NiState};
use crate::state::TheLnet;
use core::ffi::c_void;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The two kinds of rule, as the ioctl names them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Drop,
    Delay,
}

/// A message a delay rule holds.
enum HeldMsg {
    /// Selected and encoded; goes to its LND when released.
    Send(KBox<Msg>),
    /// Received on `ni`; the LND waits for LNet's receive call. `private`
    /// may be an owned reference of the LND's: released messages always
    /// go through `parse::deliver`, which hands it back with one `lnd_recv`.
    Recv {
        m: KBox<Msg>,
        ni: Arc<Ni>,
        private: *mut c_void,
    },
}

impl HeldMsg {
    fn into_msg(self) -> KBox<Msg> {
        match self {
            HeldMsg::Send(m) | HeldMsg::Recv { m, .. } => m,
        }
    }
}

struct Held {
    at: i64,
    rule: u64,
    msg: HeldMsg,
}

/// Rules (oldest first; newest are tried first) and held messages.
///
/// # Invariants
///
/// The `private` of each held receive is the context its NI's LND gave
/// `lnet_parse` with that message, not yet handed back: it goes back
/// through one `lnd_recv` when the message is released.
pub(crate) struct Faults {
    drops: KVec<(u64, Rule)>,
    delays: KVec<(u64, Rule)>,
    held: KVec<Held>,
    next_id: u64,
}

// SAFETY: the LND's `private` of a held receive (the type invariant) is only
// handed back to that LND, from whichever thread releases it, as LNet's API
// allows.
unsafe impl Send for Faults {}

impl Faults {
    pub(crate) const fn new() -> Faults {
        // INVARIANT: nothing is held.
        Faults {
            drops: KVec::new(),
            delays: KVec::new(),
            held: KVec::new(),
            next_id: 0,
        }
    }

    fn rules(&mut self, kind: Kind) -> &mut KVec<(u64, Rule)> {
        match kind {
            Kind::Drop => &mut self.drops,
            Kind::Delay => &mut self.delays,
        }
    }
}

/// A random number in `0..n` (0 when `n` is 0).
pub(crate) fn random(n: u32) -> u32 {
    let r = crate::kapi::sys::random_u32();
    r.checked_rem(n).unwrap_or(0)
}

/// What a rule decided for a message.
pub(crate) enum Verdict {
    Pass,
    /// Fail the send with this status, or drop the received message.
    Drop(Status),
    /// Hold it until `at` (monotonic seconds), for rule `rule`.
    Delay {
        at: i64,
        rule: u64,
    },
}

fn portal(hdr: &Hdr) -> Option<u32> {
    match hdr.msg {
        MsgBody::Put { ptl_index, .. } | MsgBody::Get { ptl_index, .. } => Some(ptl_index),
        _ => None,
    }
}

/// Runs the rules on a message about to go to its LND (`local` None) or
/// just received on NI `local`: drop rules first, newest first, then delay
/// rules; the first rule that fires decides.
fn check(lnet: &TheLnet, hdr: &Hdr, local: Option<&Nid>) -> Verdict {
    if lnet.fault_rules.load(Ordering::Relaxed) == 0 {
        return Verdict::Pass;
    }
    let send = local.is_none();
    let code = hdr.msg.type_code();
    let ptl = portal(hdr);
    let now = kthread::now_secs();
    let mut r = random;
    let mut f = lnet.faults.lock();
    for (_, rule) in f.drops.iter_mut().rev() {
        if rule.applies(send)
            && rule
                .attr
                .matches(&hdr.src_nid, local, &hdr.dest_nid, code, ptl)
            && rule.fire(code, now, &mut r)
        {
            let status = match rule.action {
                Action::Drop { health_mask, .. } if send => fault::pick_health(health_mask, &mut r),
                _ => Status::Ok,
            };
            return Verdict::Drop(status);
        }
    }
    for (id, rule) in f.delays.iter_mut().rev() {
        if rule
            .attr
            .matches(&hdr.src_nid, None, &hdr.dest_nid, code, ptl)
            && rule.fire(code, now, &mut r)
        {
            let latency = match rule.action {
                Action::Delay { latency } => latency,
                Action::Drop { .. } => 0,
            };
            return Verdict::Delay {
                at: now.saturating_add(i64::from(latency)),
                rule: *id,
            };
        }
    }
    Verdict::Pass
}

/// The rules' verdict on a message about to be sent.
pub(crate) fn on_send(lnet: &TheLnet, hdr: &Hdr) -> Verdict {
    check(lnet, hdr, None)
}

/// The rules' verdict on a message received on `ni`.
pub(crate) fn on_recv(lnet: &TheLnet, hdr: &Hdr, ni: &Nid) -> Verdict {
    check(lnet, hdr, Some(ni))
}

/// Holds a message a delay rule caught until `at`; gives it back if it
/// cannot be held (it then goes on undelayed).
fn hold(lnet: &TheLnet, at: i64, rule: u64, msg: HeldMsg) -> core::result::Result<(), KBox<Msg>> {
    let mut f = lnet.faults.lock();
    // Nothing is held once LNet or a received message's NI is going away:
    // their last release (under this lock) has run or is about to, and a
    // receive held after it would keep the LND's context past the NI.
    let going = match &msg {
        HeldMsg::Recv { ni, .. } => ni.state.load(Ordering::Relaxed) == NiState::Deleting as u32,
        HeldMsg::Send(_) => false,
    };
    // Room first: a failed push would lose the message.
    if !lnet.is_running() || going || f.held.reserve(1, GFP_ATOMIC).is_err() {
        return Err(msg.into_msg());
    }
    // Cannot fail: the room is reserved.
    // INVARIANT: a receive's `private` comes from `lnet_parse` by way of
    // `hold_recv`, with its message; neither has gone back to the LND.
    let _ = f.held.push(Held { at, rule, msg }, GFP_ATOMIC);
    Ok(())
}

/// Holds a message caught on the send path.
pub(crate) fn hold_send(
    lnet: &TheLnet,
    m: KBox<Msg>,
    at: i64,
    rule: u64,
) -> core::result::Result<(), KBox<Msg>> {
    hold(lnet, at, rule, HeldMsg::Send(m))
}

/// Holds a message received on `ni`.
pub(crate) fn hold_recv(
    lnet: &TheLnet,
    m: KBox<Msg>,
    ni: &Arc<Ni>,
    private: *mut c_void,
    at: i64,
    rule: u64,
) -> core::result::Result<(), KBox<Msg>> {
    let ni = ni.clone();
    hold(lnet, at, rule, HeldMsg::Recv { m, ni, private })
}

/// Lets held messages go on: those due by `now`, those of rule `rule`, or
/// all (`now` = i64::MAX). Sends go to their LND, receives to matching.
fn release(lnet: &TheLnet, now: i64, rule: Option<u64>) {
    loop {
        let next = {
            let mut f = lnet.faults.lock();
            let due = f
                .held
                .iter()
                .position(|h| h.at <= now || rule == Some(h.rule));
            due.and_then(|i| crate::kapi::vec::remove(&mut f.held, i))
        };
        let Some(h) = next else {
            break;
        };
        match h.msg {
            HeldMsg::Send(m) => crate::credits::post(lnet, m),
            HeldMsg::Recv { m, ni, private } => {
                let from = m.from;
                let _ = crate::parse::deliver(lnet, &ni, m, from, private);
            }
        }
    }
}

/// The monitor thread's pass: releases what is due.
pub(crate) fn release_due(lnet: &TheLnet) {
    release(lnet, kthread::now_secs(), None);
}

/// Releases every held message, before NIs stop (their LNDs wait for
/// them) or LNet shuts down.
pub(crate) fn release_all(lnet: &TheLnet) {
    release(lnet, i64::MAX, None);
}

/// Adds a rule (lctl net_drop_add / net_delay_add).
pub(crate) fn add(lnet: &TheLnet, kind: Kind, rule: Rule) -> Result {
    let mut f = lnet.faults.lock();
    let id = f.next_id;
    f.next_id = id.wrapping_add(1);
    f.rules(kind).push((id, rule), GFP_ATOMIC)?;
    lnet.fault_rules.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Makes and adds a rule, for either ioctl (lnet-rs's or Lustre's):
/// a rule lnet-core refuses is EINVAL, its reason logged.
pub(crate) fn add_rule(
    lnet: &TheLnet,
    kind: Kind,
    attr: Attr,
    pace: Pace,
    action: Action,
) -> Result {
    let mut r = random;
    let rule = Rule::new(attr, pace, action, kthread::now_secs(), &mut r).map_err(|e| {
        pr_info!("fault rule refused: {}\n", e.describe());
        EINVAL
    })?;
    add(lnet, kind, rule)?;
    let what = if kind == Kind::Drop { "drop" } else { "delay" };
    let health = match action {
        Action::Drop { health_mask, .. } if health_mask == HEALTH_RANDOM => {
            " (random health error)"
        }
        Action::Drop { health_mask, .. } if health_mask != 0 => " (health error)",
        _ => "",
    };
    // D_NET, as Lustre's "Added drop rule"; lctl prints the rule.
    crate::cnet!("Added {} rule {}->{}{}\n", what, attr.src, attr.dst, health);
    Ok(())
}

/// Removes the rules `src` -> `dst` selects; returns how many. Messages a
/// removed delay rule held go on at once.
pub(crate) fn del(lnet: &TheLnet, kind: Kind, src: &Nid, dst: &Nid) -> u32 {
    let mut removed = 0u32;
    loop {
        let gone = {
            let mut f = lnet.faults.lock();
            let rules = f.rules(kind);
            let i = rules.iter().position(|(_, r)| r.selected_by(src, dst));
            i.and_then(|i| crate::kapi::vec::remove(rules, i))
        };
        let Some((id, _)) = gone else {
            break;
        };
        lnet.fault_rules.fetch_sub(1, Ordering::Relaxed);
        removed = removed.saturating_add(1);
        if kind == Kind::Delay {
            release(lnet, i64::MIN, Some(id));
        }
    }
    removed
}

/// Zeroes every rule's counters (lctl net_drop_reset / net_delay_reset).
pub(crate) fn reset(lnet: &TheLnet, kind: Kind) {
    let now = kthread::now_secs();
    let mut r = random;
    for (_, rule) in lnet.faults.lock().rules(kind).iter_mut() {
        rule.reset(now, &mut r);
    }
}

/// The rule at `index`, newest first.
pub(crate) fn get(lnet: &TheLnet, kind: Kind, index: u32) -> Option<Rule> {
    let mut f = lnet.faults.lock();
    let rules = f.rules(kind);
    let i = rules.len().checked_sub(1)?.checked_sub(index as usize)?;
    rules.get(i).map(|(_, r)| *r)
}

/// Drops every rule and lets held messages go on (LNet shutting down).
pub(crate) fn fini(lnet: &TheLnet) {
    {
        let mut f = lnet.faults.lock();
        while crate::kapi::vec::pop(&mut f.drops).is_some() {}
        while crate::kapi::vec::pop(&mut f.delays).is_some() {}
    }
    lnet.fault_rules.store(0, Ordering::Relaxed);
    release_all(lnet);
}
