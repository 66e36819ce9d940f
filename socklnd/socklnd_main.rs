// SPDX-License-Identifier: GPL-2.0

//! ksocklnd.ko: the TCP LND, speaking Lustre's socklnd protocol (acceptor
//! preamble on port 988, hello V3, `ksock_msg` framing), one rail per
//! interface: every NI listens on and connects from its own address.

#[allow(unused_attributes)]
#[path = "../rust/lnet-core/src/lib.rs"]
pub mod lnet_core;

#[path = "../rust/kapi/kapi.rs"]
pub mod kapi;

mod acceptor;
mod conn;
mod handshake;
mod lnd;
mod ni;

use kernel::prelude::*;

module! {
    type: Ksocklnd,
    name: "ksocklnd",
    author: "lnet-rs developers",
    description: "TCP LND for LNet, wire-compatible with Lustre's socklnd",
    license: "GPL",
}

struct Ksocklnd;

impl kernel::Module for Ksocklnd {
    fn init(module: &'static ThisModule) -> Result<Self> {
        lnd::register(module)?;
        Ok(Ksocklnd)
    }
}

impl Drop for Ksocklnd {
    fn drop(&mut self) {
        lnd::unregister();
    }
}
