// SPDX-License-Identifier: GPL-2.0

//! Local network interfaces (NIs): one per interface an LND drives, each
//! with its NID, the LND that drives it and that LND's private data.

use crate::counters::Counters;
use crate::lnd::LndRef;
use crate::lnet_core::nid::Nid;
use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering::Relaxed};

/// NI states (`enum lnet_ni_state`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub(crate) enum NiState {
    Init = 0,
    Active = 1,
    Deleting = 2,
}

pub(crate) struct Ni {
    pub(crate) nid: Nid,
    /// The interface name from `networks=`, if one was given.
    pub(crate) iface: [u8; 16],
    pub(crate) lnd: LndRef,
    /// The LND's own data (`lnet_ni_set_data`).
    pub(crate) data: AtomicPtr<c_void>,
    pub(crate) state: AtomicU32,
    /// The LND saw the link fail (`ni_fatal_error_on`, health.md §8):
    /// selection prefers any other NI; health itself is untouched.
    pub(crate) fatal: AtomicBool,
    /// `ni_healthv`.
    pub(crate) health: AtomicU32,
    /// Round-robin sequence (`ni_seq`).
    pub(crate) seq: AtomicU64,
    pub(crate) hstats: crate::health::NiStats,
    pub(crate) recovery: crate::recovery::NiRecovery,
    pub(crate) send_count: AtomicU32,
    pub(crate) recv_count: AtomicU32,
    pub(crate) drop_count: AtomicU32,
    pub(crate) send_length: AtomicU64,
    pub(crate) recv_length: AtomicU64,
}

impl Ni {
    pub(crate) fn new(nid: Nid, iface: Option<&str>, lnd: LndRef) -> Ni {
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
            data: AtomicPtr::new(core::ptr::null_mut()),
            state: AtomicU32::new(NiState::Init as u32),
            fatal: AtomicBool::new(false),
            health: AtomicU32::new(crate::lnet_core::health::MAX_HEALTH),
            seq: AtomicU64::new(0),
            hstats: crate::health::NiStats::default(),
            recovery: crate::recovery::NiRecovery::default(),
            send_count: AtomicU32::new(0),
            recv_count: AtomicU32::new(0),
            drop_count: AtomicU32::new(0),
            send_length: AtomicU64::new(0),
            recv_length: AtomicU64::new(0),
        }
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

    /// Up as peers and `net show` see it: running and not marked fatal.
    pub(crate) fn is_up(&self) -> bool {
        self.is_active() && !self.is_fatal()
    }

    pub(crate) fn set_state(&self, s: NiState) {
        self.state.store(s as u32, Relaxed);
    }

    pub(crate) fn count_send(&self, len: u32) {
        Counters::add(&self.send_count);
        Counters::add_len(&self.send_length, len);
    }

    pub(crate) fn count_recv(&self, len: u32) {
        Counters::add(&self.recv_count);
        Counters::add_len(&self.recv_length, len);
    }

    /// The pointer LNDs know this NI by.
    pub(crate) fn as_c(&self) -> *mut crate::lnd::lnet_ni {
        (self as *const Ni).cast_mut().cast()
    }
}
