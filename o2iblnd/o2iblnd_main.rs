// SPDX-License-Identifier: GPL-2.0

//! ko2iblnd.ko: the o2ib LND over RDMA (verbs and RDMA CM), speaking
//! Lustre's o2iblnd protocol (wire.md §6): CONNREQ/CONNACK in the RDMA CM
//! private data, `kib_msg` framing, credits returned in every message and
//! by NOOPs. One NI per RDMA-capable interface; each NI listens on
//! `service` at its own address.
//!
//! # Lock order
//!
//! The one order of ko2iblnd's locks, outermost first. No spinlock here is
//! held across a sleep or a call into LNet (`lnet_parse`, `lnet_finalize`:
//! txs end once their locks are dropped), as lnet.ko's order requires
//! (lnet/state.rs).
//!
//! 1. Mutexes. A connection's `qp_lock` (conn.rs), held while its QP and
//!    id are built, put in error or destroyed, also in CM event handlers;
//!    the id itself is destroyed only after it is released, as destroying
//!    waits for a running handler. The NI's `threads`, `events`, `link` and
//!    `listener` (ni.rs), each taken alone; the NI's link events run under
//!    kapi's link watcher mutex and only change flags.
//! 2. The NI's `table` (ni.rs): peers, connections, waiting txs. Never
//!    taken with `qp_lock` or `inner` held.
//! 3. A connection's `inner` (conn.rs), taken under `table` or `qp_lock`
//!    or alone; `Conn::close` drops it before the NI's `conn_closed` takes
//!    the table.
//!
//! The listener's `ni` (`Listening`, ni.rs) is a leaf. Completions reach
//! the schedulers through a lock-free stack (`ArcStack`).

// `pin_init!` of `IbNi`, with its many fields, expands deeper than the
// default 128.
#![recursion_limit = "256"]

#[allow(unused_attributes)]
#[path = "../rust/lnet-core/src/lib.rs"]
pub mod lnet_core;

#[path = "../rust/kapi/kapi.rs"]
pub mod kapi;

mod cm;
mod conn;
mod ctl;
mod lnd;
mod ni;
mod params;
mod tx;

use core::sync::atomic::AtomicU32;
use kernel::prelude::*;

module! {
    type: Ko2iblnd,
    name: "ko2iblnd",
    author: "lnet-rs developers",
    description: "o2ib (RDMA) LND for LNet, wire-compatible with Lustre's o2iblnd",
    license: "GPL",
}

/// Connection requests refused and connections closed for a protocol
/// error by the peer, all NIs (debugfs `ko2iblnd/*`).
pub(crate) static REJECTED: AtomicU32 = AtomicU32::new(0);
pub(crate) static PROTOCOL_ERRORS: AtomicU32 = AtomicU32::new(0);
/// GETs sent as GET_REQ, and peers' GET_REQs answered by RDMA.
pub(crate) static GET_REQS: AtomicU32 = AtomicU32::new(0);
pub(crate) static GETS_SERVED: AtomicU32 = AtomicU32::new(0);
/// Txs a closing connection ended with a status LNet does not resend
/// (the peer may have seen them: waiting for its answer, or a PUT_DONE
/// or GET_DONE still queued): their ULP sees the failure.
pub(crate) static ABORTED_FINAL: AtomicU32 = AtomicU32::new(0);
/// Peer NIs reported down to LNet when their last connection failed.
pub(crate) static PEERS_DOWN: AtomicU32 = AtomicU32::new(0);

struct Ko2iblnd {
    /// LNet's table entry; gone before the notifiers (see `drop`).
    lnd: Option<kapi::lnd::Registration<lnd::O2iblnd>>,
    /// Netdev and inetaddr events for the NIs' interfaces (`ni.rs`,
    /// `LinkEvents for IbNi`).
    notifiers: Option<kapi::link::LinkNotifiers>,
    _debugfs: Option<kapi::debugfs::Dir>,
}

impl kernel::Module for Ko2iblnd {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let notifiers = kapi::link::LinkNotifiers::register()?;
        // On an error, the notifiers go.
        let reg = kapi::lnd::Registration::new(module)?;
        // For administrators and the hostile-peer test; the LND works
        // without them.
        let debugfs = kapi::debugfs::Dir::new(kernel::c_str!("ko2iblnd"))
            .inspect(|d| {
                d.add_u32(kernel::c_str!("rejected"), 0o444, &REJECTED);
                d.add_u32(kernel::c_str!("protocol_errors"), 0o444, &PROTOCOL_ERRORS);
                d.add_u32(kernel::c_str!("get_reqs"), 0o444, &GET_REQS);
                d.add_u32(kernel::c_str!("gets_served"), 0o444, &GETS_SERVED);
                d.add_u32(kernel::c_str!("aborted_final"), 0o444, &ABORTED_FINAL);
                d.add_u32(kernel::c_str!("peers_down"), 0o444, &PEERS_DOWN);
            })
            .ok();
        Ok(Ko2iblnd {
            lnd: Some(reg),
            notifiers: Some(notifiers),
            _debugfs: debugfs,
        })
    }
}

impl Drop for Ko2iblnd {
    fn drop(&mut self) {
        drop(self.lnd.take());
        // No NI is watched any more (each held a reference on this module,
        // and `stop` unwatches it).
        drop(self.notifiers.take());
    }
}
