// SPDX-License-Identifier: GPL-2.0

//! The network configuration given at load time (`networks=`, `ip2nets=`):
//! checked before anything is set up, so a bad one refuses the load with a
//! message saying what is wrong and where.

use crate::lnet_core::networks;
use crate::params;
use kernel::prelude::*;

/// One CPU partition until CPTs are introduced.
pub(crate) const NCPTS: u32 = 1;

/// The networks string in force: `networks=`, or Lustre's default `tcp`.
pub(crate) fn networks() -> &'static str {
    match params::networks() {
        "" => "tcp",
        n => n,
    }
}

/// Refuses the load for a configuration Lustre would refuse, or one we
/// cannot honour yet; logs the NIs a good one asks for.
pub(crate) fn check_networks() -> Result {
    let given = params::networks();
    let ip2nets = params::ip2nets();
    if !ip2nets.is_empty() {
        if !given.is_empty() {
            pr_err!("Please specify EITHER 'networks' or 'ip2nets' but not both at once\n");
        } else {
            pr_err!("ip2nets is not supported yet: use networks=\n");
        }
        return Err(EINVAL);
    }
    let nets = networks();
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
