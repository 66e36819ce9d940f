// SPDX-License-Identifier: GPL-2.0

//! The network configuration given at load time (`networks=`, `ip2nets=`):
//! checked before anything is set up, so a bad one refuses the load with a
//! message saying what is wrong and where.

use crate::lnet_core::{ip2nets, networks};
use crate::params;
use kernel::prelude::*;

/// One CPU partition until CPTs are introduced.
pub(crate) const NCPTS: u32 = 1;

/// Longest networks string ip2nets may select.
const IP2NETS_OUT: usize = 1024;
/// Most local addresses ip2nets is matched against.
const MAX_ADDRS: usize = 64;

/// Calls `f` with the networks string in force: `networks=`, the one
/// `ip2nets=` selects for this node's addresses now, or Lustre's default
/// `tcp`.
pub(crate) fn with_networks<R>(f: impl FnOnce(&str) -> R) -> Result<R> {
    let rules = params::ip2nets();
    if rules.is_empty() {
        return Ok(f(match params::networks() {
            "" => "tcp",
            n => n,
        }));
    }
    let mut addrs = [0u32; MAX_ADDRS];
    let n = crate::kapi::lnet_c::inet_addrs(&mut addrs);
    let found = addrs.get(..n).unwrap_or(&[]);
    if found.is_empty() {
        pr_err!("No local IP interfaces for ip2nets to match\n");
        return Err(ENOENT);
    }
    let mut out = KVec::from_elem(0u8, IP2NETS_OUT, GFP_KERNEL)?;
    match ip2nets::resolve(rules, found, &mut out) {
        Ok(len) => {
            let nets = out
                .get(..len)
                .and_then(|b| core::str::from_utf8(b).ok())
                .ok_or(EINVAL)?;
            pr_info!("ip2nets selects networks=\"{}\"\n", nets);
            Ok(f(nets))
        }
        Err(e) => {
            pr_err!("ip2nets=\"{}\": {}\n", rules, e);
            Err(if e.kind == ip2nets::ErrorKind::NoMatch {
                ENOENT
            } else {
                EINVAL
            })
        }
    }
}

/// Refuses the load for a configuration Lustre would refuse; logs the NIs
/// a good `networks=` asks for. An `ip2nets=` is checked here and matched
/// against the interfaces when LNet starts, as Lustre does.
pub(crate) fn check_networks() -> Result {
    let given = params::networks();
    let rules = params::ip2nets();
    if !rules.is_empty() {
        if !given.is_empty() {
            pr_err!("Please specify EITHER 'networks' or 'ip2nets' but not both at once\n");
            return Err(EINVAL);
        }
        if let Err(e) = ip2nets::validate(rules) {
            pr_err!("Invalid ip2nets=\"{}\": {}\n", rules, e);
            return Err(EINVAL);
        }
        pr_info!("ip2nets=\"{}\"\n", rules);
        return Ok(());
    }
    let nets = if given.is_empty() { "tcp" } else { given };
    let count = match networks::validate(nets, NCPTS) {
        Ok(n) => n,
        Err(e) => {
            pr_err!("Invalid networks=\"{}\": {}\n", nets, e);
            return Err(EINVAL);
        }
    };
    pr_info!("networks=\"{}\": {} NI(s)\n", nets, count);
    let logged = networks::for_each_ni(nets, NCPTS, |ni| {
        match ni.iface {
            Some(iface) => pr_info!("  NI on {} over {}\n", ni.net, iface),
            None => pr_info!("  NI on {}\n", ni.net),
        }
        Ok::<(), ()>(())
    });
    // Validated above, so this cannot fail; if it did, refuse all the same.
    if !matches!(logged, Ok(Ok(_))) {
        return Err(EINVAL);
    }
    Ok(())
}
