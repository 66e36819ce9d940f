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
mod selection;
mod send;
mod startup;
mod state;
mod udsp;

use core::ffi::c_int;
use kernel::prelude::*;

module! {
    type: Lnet,
    name: "lnet",
    author: "lnet-rs developers",
    description: "LNet: the Lustre networking layer with Health and Multi-Rail",
    license: "GPL",
}

struct Lnet {
    _debugfs: Option<Debugfs>,
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
        // SAFETY: `Lnet` keeps the pinned box until its drop, which first
        // shuts LNet down (stopping the monitor and discovery threads),
        // deregisters /dev/lnet and unpublishes under the parameter lock;
        // the upper layers and LNDs hold module references while they call
        // in, so none is in LNet by then. The error path below unpublishes
        // before anything could have used it.
        unsafe { state::TheLnet::publish(&the_lnet) };
        if let Err(e) = dev::register() {
            let _params = kapi::param::ParamLock::lock(&THIS_MODULE);
            state::TheLnet::unpublish();
            pr_err!("can't register /dev/lnet: {:?}\n", e);
            return Err(e);
        }
        // Lustre shows the derived fallback LND timeout in debugfs as
        // lnet/lnet_lnd_timeout.
        let debugfs = Debugfs::new();

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

/// debugfs lnet/lnet_lnd_timeout (lnet_debugfs.c), in libcfs's lnet/ when
/// Lustre's libcfs.ko is loaded, in our own otherwise; gone when dropped.
///
/// # Invariants
///
/// Exists only once `lnet_debugfs_init` has succeeded.
struct Debugfs;

extern "C" {
    fn lnet_debugfs_init(lnd_timeout: *mut u32) -> c_int;
    fn lnet_debugfs_fini();
}

impl Debugfs {
    /// Diagnostics only: without it, LNet still loads.
    fn new() -> Option<Self> {
        // SAFETY: the cell is a static, valid for as long as the module and
        // so until `lnet_debugfs_fini`; `AtomicU32` has the layout of `u32`.
        let rc = unsafe { lnet_debugfs_init(params::lnd_timeout_cell().as_ptr()) };
        if rc != 0 {
            pr_warn!("no module notifier ({}): lnet_lnd_timeout not shown\n", rc);
            return None;
        }
        // INVARIANT: `lnet_debugfs_init` succeeded.
        Some(Debugfs)
    }
}

impl Drop for Debugfs {
    fn drop(&mut self) {
        // SAFETY: by the type invariant, `lnet_debugfs_init` succeeded, and
        // this is the one drop.
        unsafe { lnet_debugfs_fini() };
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
