// SPDX-License-Identifier: GPL-2.0

//! lnet.ko: LNet, the Lustre networking layer, with Health and Multi-Rail.
//!
//! The module holds `the_lnet` (state.rs), exports Lustre's API to upper
//! layers (api.rs, include/linux/lnet/api.h) and the LND interface
//! (include/linux/lnet/lnd.h), runs the loopback LND, and carries Lustre's core
//! parameters with their validation.

// pin_init! of `the_lnet`, with its many fields, nests deeper than the
// default limit.
#![recursion_limit = "512"]

#[allow(unused_attributes)]
#[path = "../rust/lnet-core/src/lib.rs"]
pub mod lnet_core;

#[path = "../rust/kapi/kapi.rs"]
pub mod kapi;

mod adler32;
mod api;
mod config;
mod counters;
mod cpt;
mod credits;
mod crypto;
mod dev;
mod discovery;
mod expr_list;
mod fault;
mod health;
mod lnd;
mod local_nids;
mod lolnd;
mod md;
mod monitor;
mod msg;
mod ni;
mod nid_update;
mod nidlist;
mod nidstr;
mod numa;
mod params;
mod peer;
mod ping;
mod push;
mod recovery;
mod startup;
mod state;
mod udsp;

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
    the_lnet: Pin<KBox<state::TheLnet>>,
    // The hash algorithms go after LNet itself, at exit.
    _crypto: crypto::Crypto,
    // Last: the partition table outlives everything that uses it.
    _cpt: cpt::Global,
}

impl kernel::Module for Lnet {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let cpt = cpt::init()?;
        config::check_networks()?;
        let crypto = crypto::Crypto::new()?;
        let the_lnet = state::TheLnet::new()?;
        state::TheLnet::publish(&the_lnet);
        if let Err(e) = dev::register() {
            let _params = kapi::param::ParamLock::lock(&THIS_MODULE);
            state::TheLnet::unpublish();
            pr_err!("can't register /dev/lnet: {:?}\n", e);
            return Err(e);
        }
        // Lustre shows the derived fallback LND timeout in debugfs as
        // lnet/lnet_lnd_timeout; lnetctl `global show` will report it too.
        // Diagnostics only: without debugfs, LNet still loads.
        let debugfs = Self::debugfs();

        let t = params::snapshot();
        pr_info!(
            "LNet loaded: health_sensitivity={} retry_count={} transaction_timeout={} lnd_timeout={}\n",
            t.health_sensitivity,
            t.retry_count,
            t.transaction_timeout,
            t.lnd_timeout
        );
        Ok(Lnet {
            _debugfs: debugfs,
            the_lnet,
            _crypto: crypto,
            _cpt: cpt,
        })
    }
}

impl Lnet {
    /// debugfs lnet/ with lnet_lnd_timeout, or nothing if debugfs refuses
    /// or lnet/ is libcfs's: Lustre's libcfs.ko, loaded first on a Lustre
    /// node, owns it and removes it with all it holds when it unloads,
    /// which it may do before us (we do not depend on it).
    fn debugfs() -> Option<kapi::debugfs::Dir> {
        if kapi::debugfs::Dir::exists(c_str!("lnet")) {
            pr_info!("debugfs lnet/ is libcfs's: lnet_lnd_timeout not shown there\n");
            return None;
        }
        match kapi::debugfs::Dir::new(c_str!("lnet")) {
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
        }
    }
}

impl Drop for Lnet {
    fn drop(&mut self) {
        // Upper layers and LNDs hold module references while they use LNet,
        // so only a caller that never called LNetNIFini leaves it up.
        let mut api = self.the_lnet.api.lock();
        if api.refcount > 0 {
            pr_warn!(
                "LNet still up at unload ({} users): shutting down\n",
                api.refcount
            );
            api.refcount = 0;
            startup::shutdown(&self.the_lnet, &mut api);
        }
        drop(api);
        dev::deregister();
        // A parameter setter may be running (sysfs stays until after
        // exit): it uses LNet's state under this lock, so it finishes
        // first, and later ones find nothing published.
        let params = kapi::param::ParamLock::lock(&THIS_MODULE);
        state::TheLnet::unpublish();
        drop(params);
        pr_info!("LNet unloaded\n");
    }
}
