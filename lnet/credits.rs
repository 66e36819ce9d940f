// SPDX-License-Identifier: GPL-2.0

//! Send credits (`lnet_post_send_locked`, `lnet_return_tx_credits_locked`):
//! a message takes a credit of its peer NI (`peer_credits` of them) and
//! one of its local NI (`credits`) before its LND gets it; without one it
//! waits, in order. When the LND finalizes a message its credits come back
//! and the first message waiting on each goes. The counting is lnet-core's
//! `TxCredits`; this file keeps the counts and the waiting messages.
//!
//! Peer NI counts are kept by NID here, apart from the peer table, so a
//! message in flight gives its credit back to the right count whatever
//! `lnetctl peer add|del` did meanwhile. The loopback NI takes no credits.

use crate::kapi::{errno::*, vec};
use crate::lnet_core::credits::TxCredits;
use crate::lnet_core::hdr::HDR_NID4_LEN;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::md::flags;
use crate::msg::{self, Msg};
use crate::ni::Ni;
use crate::state::TheLnet;
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The credits of one peer NI and the bytes of the messages holding them
/// (`lpni_txcredits`, `lpni_txqnob`).
struct PeerTx {
    nid: Nid,
    credits: TxCredits,
    qnob: u64,
}

/// Which count a waiting message waits on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum On {
    PeerNi,
    Ni,
}

struct Waiter {
    msg: KBox<Msg>,
    on: On,
}

/// Everything under `TheLnet.tx`. Taken after `nis` and `peers`.
#[derive(Default)]
pub(crate) struct Tx {
    peer_nis: KVec<PeerTx>,
    /// Messages waiting for a credit, oldest first.
    waiting: KVec<Waiter>,
    /// Messages that got their credit back and wait to be handed on.
    ready: KVec<KBox<Msg>>,
    /// A thread is handing `ready` on: others leave theirs to it, so a
    /// chain of LND refusals never recurses.
    draining: bool,
}

impl Tx {
    fn peer_ni(&mut self, nid: &Nid) -> Option<&mut PeerTx> {
        self.peer_nis.iter_mut().find(|p| p.nid == *nid)
    }

    /// The count of peer NI `nid`, created full at `max` credits.
    fn peer_ni_or_new(&mut self, nid: &Nid, max: i32) -> Result<&mut PeerTx> {
        if let Some(i) = self.peer_nis.iter().position(|p| p.nid == *nid) {
            return self.peer_nis.get_mut(i).ok_or(EINVAL);
        }
        self.peer_nis.push(
            PeerTx {
                nid: *nid,
                credits: TxCredits::new(max),
                qnob: 0,
            },
            GFP_ATOMIC,
        )?;
        self.peer_nis.last_mut().ok_or(EINVAL)
    }

    /// Credits of peer NI `nid` and the bytes in flight to it; a peer NI
    /// no message went to yet has all `fresh` credits.
    pub(crate) fn peer_ni_credits(&self, nid: &Nid, fresh: i32) -> (TxCredits, u64) {
        self.peer_nis
            .iter()
            .find(|p| p.nid == *nid)
            .map_or((TxCredits::new(fresh), 0), |p| (p.credits, p.qnob))
    }
}

/// Forgets every peer NI's credits, with the peers at shutdown: nothing is
/// in flight or waiting any more.
pub(crate) fn forget_peer_nis(lnet: &TheLnet) {
    let old = core::mem::take(&mut lnet.tx.lock().peer_nis);
    drop(old);
}

/// Bytes a message counts for in `lpni_txqnob`.
fn nob(m: &Msg) -> u64 {
    u64::from(m.hdr.payload_length) + HDR_NID4_LEN as u64
}

enum Admit {
    Go(KBox<Msg>),
    Waits,
    Fail(KBox<Msg>, Error),
}

/// Takes the credits `m` still lacks, peer NI first; parks it if one is
/// short.
fn admit(tx: &mut Tx, mut m: KBox<Msg>) -> Admit {
    let Some((peer_credits, ni_credits)) =
        m.ni.as_ref()
            .map(|ni| (ni.tunables.peer_credits.load(Relaxed), ni.max_tx_credits()))
    else {
        return Admit::Go(m);
    };
    if tx.waiting.reserve(1, GFP_ATOMIC).is_err() {
        return Admit::Fail(m, ENOMEM);
    }
    // The loopback NI has neither kind of credit.
    if !m.peer_credit && peer_credits > 0 {
        let len = nob(&m);
        let p = match tx.peer_ni_or_new(&m.txpeer, peer_credits) {
            Ok(p) => p,
            Err(e) => return Admit::Fail(m, e),
        };
        m.peer_credit = true;
        p.qnob = p.qnob.saturating_add(len);
        if !p.credits.take() {
            // Cannot fail: reserved above.
            let _ = tx.waiting.push(
                Waiter {
                    msg: m,
                    on: On::PeerNi,
                },
                GFP_ATOMIC,
            );
            return Admit::Waits;
        }
    }
    if !m.ni_credit && ni_credits > 0 {
        m.ni_credit = true;
        let go = m.ni.as_ref().is_some_and(|ni| {
            let mut c = ni.tx_credits();
            let go = c.take();
            ni.set_tx_credits(c);
            go
        });
        if !go {
            let _ = tx.waiting.push(Waiter { msg: m, on: On::Ni }, GFP_ATOMIC);
            return Admit::Waits;
        }
    }
    Admit::Go(m)
}

/// Hands a selected, encoded message on to its LND once it has its
/// credits; until then it waits. Like a message that waited, it is ended
/// first if its deadline passed or its MD was unlinked (a resend after
/// `LNetMDUnlink`: `lnet_post_send_locked` checks every send).
pub(crate) fn post(lnet: &TheLnet, m: KBox<Msg>) {
    let Some(m) = gate(lnet, m) else {
        return;
    };
    let admitted = admit(&mut lnet.tx.lock(), m);
    match admitted {
        Admit::Go(m) => crate::send::lnd_send(lnet, m),
        Admit::Waits => {}
        Admit::Fail(m, e) => msg::finalize(lnet, m, e.to_errno(), Status::LocalError),
    }
}

/// The first waiter on `on` for this peer NI or NI, out of the queue.
fn first_waiter(tx: &mut Tx, on: On, ni: &Arc<Ni>, peer: &Nid) -> Option<KBox<Msg>> {
    let i = tx.waiting.iter().position(|w| {
        w.on == on
            && match on {
                On::PeerNi => w.msg.txpeer == *peer,
                On::Ni => w.msg.ni.as_ref().is_some_and(|n| Arc::ptr_eq(n, ni)),
            }
    })?;
    vec::remove(&mut tx.waiting, i).map(|w| w.msg)
}

/// Gives back the credits a finished message holds; the messages that
/// take them are handed on (`lnet_return_tx_credits_locked`).
pub(crate) fn give_back(lnet: &TheLnet, m: &mut Msg) {
    if !m.peer_credit && !m.ni_credit {
        return;
    }
    let len = nob(m);
    let Some(ni) = m.ni.as_ref() else {
        return;
    };
    let mut tx = lnet.tx.lock();
    let mut woken: [Option<KBox<Msg>>; 2] = [None, None];
    if m.ni_credit {
        m.ni_credit = false;
        let mut c = ni.tx_credits();
        let wakes = c.give();
        ni.set_tx_credits(c);
        if wakes {
            woken[0] = first_waiter(&mut tx, On::Ni, ni, &m.txpeer);
        }
    }
    if m.peer_credit {
        m.peer_credit = false;
        let wakes = match tx.peer_ni(&m.txpeer) {
            Some(p) => {
                p.qnob = p.qnob.saturating_sub(len);
                p.credits.give()
            }
            None => false,
        };
        if wakes {
            woken[1] = first_waiter(&mut tx, On::PeerNi, ni, &m.txpeer);
        }
    }
    for w in woken.into_iter().flatten() {
        if let Err(m) = push_ready(&mut tx, w) {
            drop(tx);
            msg::finalize(lnet, m, ENOMEM.to_errno(), Status::LocalError);
            tx = lnet.tx.lock();
        }
    }
    drop(tx);
    drain(lnet);
}

fn push_ready(tx: &mut Tx, m: KBox<Msg>) -> core::result::Result<(), KBox<Msg>> {
    if tx.ready.reserve(1, GFP_ATOMIC).is_err() {
        return Err(m);
    }
    let _ = tx.ready.push(m, GFP_ATOMIC);
    Ok(())
}

/// Hands on the messages that got credits back, unless another thread is
/// doing so already.
fn drain(lnet: &TheLnet) {
    let mut tx = lnet.tx.lock();
    if tx.draining {
        return;
    }
    tx.draining = true;
    while let Some(m) = vec::remove(&mut tx.ready, 0) {
        match admit(&mut tx, m) {
            Admit::Waits => continue,
            Admit::Go(m) => {
                drop(tx);
                dispatch(lnet, m);
            }
            Admit::Fail(m, e) => {
                drop(tx);
                msg::finalize(lnet, m, e.to_errno(), Status::LocalError);
            }
        }
        tx = lnet.tx.lock();
    }
    tx.draining = false;
}

/// Ends a message about to take credits or leave if Lustre's
/// `lnet_post_send_locked` would: past its deadline, or its MD unlinked
/// meanwhile (`-ECANCELED`, not resent). Gives it back otherwise, and
/// always for the loopback NI, which Lustre's `lnet_handle_lo_send` sends
/// on unchecked.
fn gate(lnet: &TheLnet, mut m: KBox<Msg>) -> Option<KBox<Msg>> {
    if m.ni.as_ref().is_some_and(|n| n.nid == Nid::LO) {
        return Some(m);
    }
    // Past its deadline (`lnet_check_message_drop`): counted, and ended
    // as a network timeout, which the deadline gate keeps from costing
    // health or being resent.
    if m.deadline != 0 && crate::kapi::kthread::now_secs() > m.deadline {
        msg::count_expired(lnet, &m);
        msg::finalize(lnet, m, ETIMEDOUT().to_errno(), Status::NetworkTimeout);
        return None;
    }
    let aborted = m.md.is_some_and(|cookie| {
        lnet.res
            .lock()
            .mds
            .get(&cookie)
            .is_some_and(|md| md.flags & flags::ABORTED != 0)
    });
    if aborted {
        m.no_resend = true;
        msg::finalize(lnet, m, ECANCELED().to_errno(), Status::Ok);
        return None;
    }
    Some(m)
}

/// A message that waited goes to its LND, unless [`gate`] ends it or its
/// NI is going away.
fn dispatch(lnet: &TheLnet, m: KBox<Msg>) {
    let Some(m) = gate(lnet, m) else {
        return;
    };
    if !m.ni.as_ref().is_some_and(|n| n.is_active()) {
        msg::finalize(lnet, m, ESHUTDOWN().to_errno(), Status::LocalDropped);
        return;
    }
    crate::send::lnd_send(lnet, m);
}

/// Ends every message waiting to leave through `ni`, which is going away:
/// `-ESHUTDOWN` as a local drop, so each may be resent through another NI.
pub(crate) fn drop_waiting(lnet: &TheLnet, ni: &Arc<Ni>) {
    loop {
        let mut tx = lnet.tx.lock();
        let on_ni = |m: &KBox<Msg>| m.ni.as_ref().is_some_and(|n| Arc::ptr_eq(n, ni));
        let found = if let Some(i) = tx.waiting.iter().position(|w| on_ni(&w.msg)) {
            vec::remove(&mut tx.waiting, i).map(|w| (w.msg, Some(w.on)))
        } else if let Some(i) = tx.ready.iter().position(on_ni) {
            vec::remove(&mut tx.ready, i).map(|m| (m, None))
        } else {
            None
        };
        let Some((mut m, on)) = found else {
            return;
        };
        // A waiter leaves the count it waits on without waking anyone:
        // no credit came back.
        match on {
            Some(On::PeerNi) => {
                m.peer_credit = false;
                let len = nob(&m);
                if let Some(p) = tx.peer_ni(&m.txpeer) {
                    p.qnob = p.qnob.saturating_sub(len);
                    p.credits.cancel();
                }
            }
            Some(On::Ni) => {
                m.ni_credit = false;
                let mut c = ni.tx_credits();
                c.cancel();
                ni.set_tx_credits(c);
            }
            None => {}
        }
        drop(tx);
        msg::finalize(lnet, m, ESHUTDOWN().to_errno(), Status::LocalDropped);
    }
}
