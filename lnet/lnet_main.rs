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
mod api_ni;
mod config;
mod counters;
mod cpt;
mod credits;
mod crypto;
mod dev;
mod discovery;
mod expr_list;
mod fault;
mod genl;
mod genl_peer;
mod health;
mod libcfs_ioctl;
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
mod own_md;
mod params;
mod parse;
mod peer;
mod ping;
mod portal;
mod push;
mod recovery;
mod route;
mod router;
mod router_check;
mod selection;
mod send;
mod startup;
mod state;
mod udsp;

use kapi::genl::GenlRegistration;
use kapi::lnet_c::{DevRegistration, LndTimeoutFile};
use kernel::prelude::*;

module! {
    type: Lnet,
    name: "lnet",
    author: "lnet-rs developers",
    description: "LNet: the Lustre networking layer with Health and Multi-Rail",
    license: "GPL",
}

struct Lnet {
    _debugfs: Option<LndTimeoutFile>,
    // Taken in drop, before the state is unpublished.
    dev: Option<DevRegistration>,
    // Lustre's lnet netlink family; taken in drop with /dev/lnet.
    genl: Option<GenlRegistration>,
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
        // The box outlives every user of `get()`: `Lnet` keeps the
        // pinned box until its drop, which first shuts LNet down (stopping
        // the monitor and discovery threads), deregisters /dev/lnet and
        // unpublishes under the parameter lock (fencing the parameter
        // setters); the upper layers, the LNDs and open /dev/lnet files hold
        // module references while they call in, so none is in LNet by then.
        // The error path below unpublishes under the same lock.
        // SAFETY: `the_lnet` is kept and unpublished by `Lnet`'s drop only
        // after every user has stopped (the order just described).
        unsafe { state::TheLnet::publish(&the_lnet) };
        let dev = match DevRegistration::new() {
            Ok(d) => d,
            Err(e) => {
                let _params = kapi::param::ParamLock::lock(&THIS_MODULE);
                state::TheLnet::unpublish();
                pr_err!("can't register /dev/lnet: {:?}\n", e);
                return Err(e);
            }
        };
        let genl = match GenlRegistration::new() {
            Ok(g) => g,
            Err(e) => {
                drop(dev);
                let _params = kapi::param::ParamLock::lock(&THIS_MODULE);
                state::TheLnet::unpublish();
                pr_err!("can't register the lnet netlink family: {:?}\n", e);
                return Err(e);
            }
        };
        // Lustre shows the derived fallback LND timeout in debugfs as
        // lnet/lnet_lnd_timeout; without it, LNet still loads.
        let debugfs = match LndTimeoutFile::new(params::lnd_timeout_cell()) {
            Ok(f) => Some(f),
            Err(rc) => {
                pr_warn!("no module notifier ({}): lnet_lnd_timeout not shown\n", rc);
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
        Ok(Lnet {
            _debugfs: debugfs,
            dev: Some(dev),
            genl: Some(genl),
            the_lnet,
            _crypto: crypto,
            _cpt: cpt,
        })
    }
}

impl Drop for Lnet {
    fn drop(&mut self) {
        // No netlink command may bring LNet up again after the shutdown
        // below: the core waits for running ones before it returns.
        drop(self.genl.take());
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
        drop(self.dev.take());
        // A parameter setter may be running (sysfs stays until after
        // exit): it uses LNet's state under this lock, so it finishes
        // first, and later ones find nothing published.
        let params = kapi::param::ParamLock::lock(&THIS_MODULE);
        state::TheLnet::unpublish();
        drop(params);
        pr_info!("LNet unloaded\n");
    }
}
