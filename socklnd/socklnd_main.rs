// SPDX-License-Identifier: GPL-2.0

//! ksocklnd.ko: the TCP LND, speaking Lustre's socklnd protocol (acceptor
//! preamble on port 988, hello V3, `ksock_msg` framing), one rail per
//! interface: every NI listens on and connects from its own address.
//!
//! # Lock order
//!
//! The one order of ksocklnd's locks, outermost first. No spinlock here is
//! held across a sleep or a call into LNet (`lnet_parse`, `lnet_finalize`:
//! messages are finalized outside the table lock), as lnet.ko's order
//! requires (lnet/state.rs).
//!
//! 1. Mutexes, each taken alone, never with another of these held: the
//!    NI's `threads` and `link` (ni.rs), a connector's `thread` and
//!    `current` (connector.rs). The
//!    NI's link events run under kapi's link watcher mutex and take none
//!    of ksocklnd's locks; the NI drops its watch outside `link`.
//! 2. The NI's `table` (ni.rs, peer.rs): peers, connections, connectors,
//!    waiting messages and zero-copy requests.
//! 3. A connection's `txq`, taken under `table` to queue
//!    (`Conn::queue_locked`) or alone.
//!
//! A connection's `rx` and `io` are leaves: held with no other lock, `io`
//! only to take its state out for a scheduler's turn or put it back (the
//! turn runs with no lock held). The socket callbacks (softirq) take no
//! lock of ours: they set atomics and push on a lock-free stack.

// `pin_init!` of `Conn`, with its many fields, expands deeper than the
// default 128.
#![recursion_limit = "256"]

#[allow(unused_attributes)]
#[path = "../rust/lnet-core/src/lib.rs"]
pub mod lnet_core;

#[path = "../rust/kapi/kapi.rs"]
pub mod kapi;

mod acceptor;
mod conn;
mod connector;
mod ctl;
mod handshake;
mod lnd;
mod ni;
mod params;
mod peer;
mod sched;
mod zc;

use kernel::prelude::*;

module! {
    type: Ksocklnd,
    name: "ksocklnd",
    author: "lnet-rs developers",
    description: "TCP LND for LNet, wire-compatible with Lustre's socklnd",
    license: "GPL",
}

struct Ksocklnd {
    /// LNet's table entry; gone before the notifiers (see `drop`).
    lnd: Option<kapi::lnd::Registration<lnd::Socklnd>>,
    _debugfs: Option<kapi::debugfs::Dir>,
    /// The link notifiers; unregistered after the LND (see `drop`).
    notifiers: Option<kapi::link::LinkNotifiers>,
}

impl kernel::Module for Ksocklnd {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let notifiers = kapi::link::LinkNotifiers::register()?;
        let reg = kapi::lnd::Registration::new(module)?;
        // The reject counters, for administrators and the hostile-peer
        // test; the LND works without them.
        let debugfs = kapi::debugfs::Dir::new(kernel::c_str!("ksocklnd"))
            .inspect(|d| {
                d.add_u32(
                    kernel::c_str!("protocol_errors"),
                    0o444,
                    &ni::PROTOCOL_ERRORS,
                );
                d.add_u32(kernel::c_str!("refused"), 0o444, &ni::REFUSED);
                d.add_u32(kernel::c_str!("zc_requests"), 0o444, &ni::ZC_REQUESTS);
                d.add_u32(kernel::c_str!("zc_acked"), 0o444, &ni::ZC_ACKED);
                d.add_u32(kernel::c_str!("zc_aborted"), 0o444, &ni::ZC_ABORTED);
            })
            .ok();
        Ok(Ksocklnd {
            lnd: Some(reg),
            _debugfs: debugfs,
            notifiers: Some(notifiers),
        })
    }
}

impl Drop for Ksocklnd {
    fn drop(&mut self) {
        drop(self.lnd.take());
        // No NI is watched any more (each held a reference on this module).
        drop(self.notifiers.take());
    }
}
