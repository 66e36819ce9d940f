// SPDX-License-Identifier: GPL-2.0

//! Local network interfaces (NIs): one per interface an LND drives, each
//! with its NID, the LND that drives it and that LND's private data.

use crate::counters::Counters;
use crate::lnd::LndRef;
use crate::lnet_core::credits::{NetTunables, TxCredits, UNSET};
use crate::lnet_core::lnd_tunables::LndTunables;
use crate::lnet_core::msg_stats::AtomicMsgCounts;
use crate::lnet_core::nid::Nid;
use core::ffi::c_void;
use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering, Ordering::Relaxed,
};

/// The tunables an NI runs with (`struct lnet_ni_tunables`): set when it
/// is configured and completed by its LND at startup; -1 where unset.
pub(crate) struct Tunables {
    pub(crate) peer_timeout: AtomicI32,
    pub(crate) peer_credits: AtomicI32,
    pub(crate) peer_buffer_credits: AtomicI32,
    pub(crate) credits: AtomicI32,
    /// The LND's own, shown under `lnd tunables`.
    pub(crate) conns_per_peer: AtomicI32,
    pub(crate) lnd_timeout: AtomicI32,
    pub(crate) tos: AtomicI32,
    /// o2ib's own, in `lnet_ni_tunables` order from `peercredits_hiw`.
    pub(crate) o2ib: [AtomicI32; 7],
}

impl Tunables {
    /// The LND tunables an administrator gave, before the LND's startup
    /// completes them.
    pub(crate) fn set_lnd(&self, t: &LndTunables) {
        self.conns_per_peer.store(t.conns_per_peer, Relaxed);
        self.tos.store(t.tos, Relaxed);
        for (cell, v) in self.o2ib.iter().zip(t.o2ib) {
            cell.store(v, Relaxed);
        }
    }

    fn new(t: &NetTunables) -> Tunables {
        Tunables {
            peer_timeout: AtomicI32::new(t.peer_timeout),
            peer_credits: AtomicI32::new(t.peer_credits),
            peer_buffer_credits: AtomicI32::new(t.peer_buffer_credits),
            credits: AtomicI32::new(t.credits),
            conns_per_peer: AtomicI32::new(UNSET),
            lnd_timeout: AtomicI32::new(UNSET),
            tos: AtomicI32::new(UNSET),
            o2ib: [const { AtomicI32::new(UNSET) }; 7],
        }
    }
}

/// NI states (`enum lnet_ni_state`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub(crate) enum NiState {
    Init = 0,
    Active = 1,
    Deleting = 2,
}

/// The way into an NI's LND for senders (`lnd_send`, `lnd_get_timeout`),
/// closed before its shutdown: a sender that picked the NI while it was
/// active may reach `lnd_send` after `net del` began; shutdown closes the
/// gate and waits for those inside, so the LND never sees a send once its
/// shutdown has begun (Lustre holds a reference on the NI, `ni_refs`).
#[derive(Default)]
pub(crate) struct LndGate {
    users: AtomicU32,
    closed: AtomicBool,
}

/// A sender inside an [`LndGate`].
pub(crate) struct LndPass<'a>(&'a LndGate);

impl LndGate {
    /// Enters, unless the gate is closed.
    pub(crate) fn enter(&self) -> Option<LndPass<'_>> {
        // With `close`, SeqCst orders the two counts: either the sender
        // sees the gate closed, or `close` sees the sender inside.
        self.users.fetch_add(1, Ordering::SeqCst);
        if self.closed.load(Ordering::SeqCst) {
            self.users.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(LndPass(self))
    }

    /// Closes it and waits for the senders inside to leave. May sleep; a
    /// sender is inside for one `lnd_send` call.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        while self.users.load(Ordering::SeqCst) != 0 {
            crate::kapi::kthread::sleep_ms(1);
        }
    }
}

impl Drop for LndPass<'_> {
    fn drop(&mut self) {
        self.0.users.fetch_sub(1, Ordering::SeqCst);
    }
}

pub(crate) struct Ni {
    pub(crate) nid: Nid,
    /// The interface name from `networks=`, if one was given.
    pub(crate) iface: [u8; 16],
    pub(crate) lnd: LndRef,
    /// Senders' way into `lnd`, closed before its shutdown.
    pub(crate) lnd_gate: LndGate,
    /// The LND's own data (`lnet_ni_set_data`).
    pub(crate) data: AtomicPtr<c_void>,
    pub(crate) state: AtomicU32,
    /// The LND saw the link fail (`ni_fatal_error_on`, health.md §8):
    /// selection prefers any other NI; health itself is untouched.
    pub(crate) fatal: AtomicBool,
    /// `ni_healthv`.
    pub(crate) health: AtomicU32,
    /// The NI's status word says DOWN: set when health reached 0, cleared
    /// when it reached the maximum again (health.md §1). Kept apart from
    /// the ping buffer so that a rebuilt buffer carries it over.
    pub(crate) status_down: AtomicBool,
    /// On a router: its net heard no ping for the check interval plus
    /// `router_ping_timeout`, so its status word says DOWN
    /// (`lnet_update_ni_status_locked`, router_check.rs).
    pub(crate) silent: AtomicBool,
    /// Monotonic ms of the last ping received on it from another node
    /// (`net_last_alive`, kept per NI and read per net).
    pub(crate) last_ping_ms: AtomicU64,
    /// Round-robin sequence (`ni_seq`).
    pub(crate) seq: AtomicU64,
    /// NUMA node of its interface's device (`ni_dev_cpt`; negative:
    /// unknown), set when it starts.
    pub(crate) dev_node: AtomicI32,
    /// UDSP priority of this NI (`ni_sel_priority`; lower wins, u32::MAX
    /// when unset).
    pub(crate) sel_priority: AtomicU32,
    /// UDSP priority of its net (`net_sel_priority`), kept on each NI of
    /// the net.
    pub(crate) net_priority: AtomicU32,
    pub(crate) hstats: crate::health::NiStats,
    pub(crate) recovery: crate::recovery::NiRecovery,
    /// Messages by type (`ni_stats`); `send_count`... are their sums.
    pub(crate) sent: AtomicMsgCounts,
    pub(crate) received: AtomicMsgCounts,
    pub(crate) dropped: AtomicMsgCounts,
    pub(crate) send_length: AtomicU64,
    pub(crate) recv_length: AtomicU64,
    pub(crate) tunables: Tunables,
    /// Send credits (`tq_credits`, its maximum and minimum): written under
    /// `TheLnet.tx` only, read anywhere. A maximum of 0: no credits kept.
    tx_credits: AtomicI32,
    max_tx_credits: AtomicI32,
    min_tx_credits: AtomicI32,
}

impl Ni {
    pub(crate) fn new(nid: Nid, iface: Option<&str>, lnd: LndRef, t: &NetTunables) -> Ni {
        let mut name = [0u8; 16];
        if let Some(i) = iface {
            for (d, s) in name.iter_mut().take(15).zip(i.bytes()) {
                *d = s;
            }
        }
        Ni {
            nid,
            iface: name,
            lnd,
            lnd_gate: LndGate::default(),
            data: AtomicPtr::new(core::ptr::null_mut()),
            state: AtomicU32::new(NiState::Init as u32),
            fatal: AtomicBool::new(false),
            health: AtomicU32::new(crate::lnet_core::health::MAX_HEALTH),
            status_down: AtomicBool::new(false),
            silent: AtomicBool::new(false),
            last_ping_ms: AtomicU64::new(crate::kapi::kthread::now_ms()),
            seq: AtomicU64::new(0),
            dev_node: AtomicI32::new(-1),
            sel_priority: AtomicU32::new(u32::MAX),
            net_priority: AtomicU32::new(u32::MAX),
            hstats: crate::health::NiStats::default(),
            recovery: crate::recovery::NiRecovery::default(),
            sent: AtomicMsgCounts::default(),
            received: AtomicMsgCounts::default(),
            dropped: AtomicMsgCounts::default(),
            send_length: AtomicU64::new(0),
            recv_length: AtomicU64::new(0),
            tunables: Tunables::new(t),
            tx_credits: AtomicI32::new(0),
            max_tx_credits: AtomicI32::new(0),
            min_tx_credits: AtomicI32::new(0),
        }
    }

    /// LNet's part of the tunables.
    pub(crate) fn net_tunables(&self) -> NetTunables {
        let t = &self.tunables;
        NetTunables {
            peer_timeout: t.peer_timeout.load(Relaxed),
            peer_credits: t.peer_credits.load(Relaxed),
            peer_buffer_credits: t.peer_buffer_credits.load(Relaxed),
            credits: t.credits.load(Relaxed),
        }
    }

    /// Sets LNet's part of the tunables (at LND startup, before the NI
    /// carries traffic) and fills the NI's credits from them.
    pub(crate) fn set_net_tunables(&self, n: &NetTunables) {
        let t = &self.tunables;
        t.peer_timeout.store(n.peer_timeout, Relaxed);
        t.peer_credits.store(n.peer_credits, Relaxed);
        t.peer_buffer_credits.store(n.peer_buffer_credits, Relaxed);
        t.credits.store(n.credits, Relaxed);
        self.set_tx_credits(TxCredits::new(n.credits.max(0)));
    }

    pub(crate) fn max_tx_credits(&self) -> i32 {
        self.max_tx_credits.load(Relaxed)
    }

    pub(crate) fn tx_credits(&self) -> TxCredits {
        TxCredits {
            max: self.max_tx_credits.load(Relaxed),
            available: self.tx_credits.load(Relaxed),
            min: self.min_tx_credits.load(Relaxed),
        }
    }

    /// Under `TheLnet.tx`, or before the NI carries traffic.
    pub(crate) fn set_tx_credits(&self, c: TxCredits) {
        self.max_tx_credits.store(c.max, Relaxed);
        self.tx_credits.store(c.available, Relaxed);
        self.min_tx_credits.store(c.min, Relaxed);
    }

    /// The interface name given in `networks=`, or "".
    pub(crate) fn iface(&self) -> &str {
        let n = self
            .iface
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.iface.len());
        core::str::from_utf8(self.iface.get(..n).unwrap_or(&[])).unwrap_or("")
    }

    pub(crate) fn is_active(&self) -> bool {
        self.state.load(Relaxed) == NiState::Active as u32
    }

    pub(crate) fn is_fatal(&self) -> bool {
        self.fatal.load(Relaxed)
    }

    /// Up for selection: running and not marked fatal.
    pub(crate) fn is_up(&self) -> bool {
        self.is_active() && !self.is_fatal()
    }

    /// Up as peers (the ping buffer) and `net show` see it
    /// (`lnet_ni_get_status_locked`): also not brought to health 0, nor,
    /// on a router, silent.
    pub(crate) fn reports_up(&self) -> bool {
        self.is_up() && !self.status_down.load(Relaxed) && !self.silent.load(Relaxed)
    }

    pub(crate) fn set_state(&self, s: NiState) {
        self.state.store(s as u32, Relaxed);
    }

    /// Counts a message of type `slot` handed to the LND. Not at its
    /// successful end, as Lustre's `lnet_msg_decommit_tx` counts: a send
    /// that then fails still counts on the NI that tried it, so that
    /// `net show` tells where traffic went, failures and resends included.
    pub(crate) fn count_send(&self, len: u32, slot: usize) {
        self.sent.add(slot);
        Counters::add_len(&self.send_length, len);
    }

    /// Counts a message of type `slot` received (when parsed).
    pub(crate) fn count_recv(&self, len: u32, slot: usize) {
        self.received.add(slot);
        Counters::add_len(&self.recv_length, len);
    }

    /// The pointer LNDs know this NI by.
    pub(crate) fn as_c(&self) -> *mut crate::lnd::lnet_ni {
        (self as *const Ni).cast_mut().cast()
    }
}
