// SPDX-License-Identifier: GPL-2.0

//! lnet.ko: LNet, the Lustre networking layer, with Health and Multi-Rail.
//!
//! At this stage the module carries Lustre's core parameters with their
//! validation and the derived LND timeout; the message path, NIs and peers
//! follow.

#[allow(unused_attributes)]
#[path = "../rust/lnet-core/src/lib.rs"]
pub mod lnet_core;

#[path = "../rust/kapi/kapi.rs"]
pub mod kapi;

mod config;
mod params;

use kernel::{c_str, prelude::*};

module! {
    type: Lnet,
    name: "lnet",
    author: "lnet-rs developers",
    description: "LNet: the Lustre networking layer with Health and Multi-Rail",
    license: "GPL",
}

struct Lnet {
    _debugfs: Option<kapi::debugfs::Dir>,
}

impl kernel::Module for Lnet {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        config::check_networks()?;
        // Lustre shows the derived fallback LND timeout in debugfs as
        // lnet/lnet_lnd_timeout; lnetctl `global show` will report it too.
        // Diagnostics only: without debugfs, LNet still loads.
        let debugfs = match kapi::debugfs::Dir::new(c_str!("lnet")) {
            Ok(dir) => {
                dir.add_u32(
                    c_str!("lnet_lnd_timeout"),
                    0o444,
                    params::lnd_timeout_cell(),
                );
                Some(dir)
            }
            Err(e) => {
                pr_warn!(
                    "no debugfs directory ({:?}): lnet_lnd_timeout not shown\n",
                    e
                );
                None
            }
        };

        let t = params::snapshot();
        pr_info!(
            "LNet loaded: health_sensitivity={} retry_count={} transaction_timeout={} lnd_timeout={}\n",
            t.health_sensitivity,
            t.retry_count,
            t.transaction_timeout,
            t.lnd_timeout
        );
        Ok(Lnet { _debugfs: debugfs })
    }
}

impl Drop for Lnet {
    fn drop(&mut self) {
        pr_info!("LNet unloaded\n");
    }
}
