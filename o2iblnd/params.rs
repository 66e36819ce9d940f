// SPDX-License-Identifier: GPL-2.0

//! ko2iblnd's parameters: their live values and the `.set`/`.get`
//! callbacks /sys/module/ko2iblnd/parameters and modprobe reach through
//! o2iblnd_params.c. Names, defaults, ranges and the NI tunables derived
//! from them are lnet-core's.

use crate::kapi::lnd_param;
use crate::kapi::param::{KernelParam, ParamPage, ParamValue};
use crate::lnet_core::credits::NetTunables;
use crate::lnet_core::lnd_params::Live;
use crate::lnet_core::o2iblnd_params::{
    self as rules, IbParam, IbParamError, IbTunables, IfName, NiTunables, IFNAMSIZ,
};
use core::sync::atomic::{AtomicU8, Ordering::Relaxed};
use kernel::ffi::c_int;
use kernel::prelude::*;

/// One value per parameter, starting at Lustre's defaults.
static LIVE: Live<IbParam, 26> = Live::new(IbParam::DEFAULTS);

/// `ipif_name`, NUL-padded; all zeroes until modprobe sets it, meaning
/// Lustre's default. It is 0444, so only module load writes it, before
/// any NI starts: a reader never sees a name half written.
static IPIF_NAME: [AtomicU8; IFNAMSIZ] = {
    #[allow(clippy::declare_interior_mutable_const)]
    const NUL: AtomicU8 = AtomicU8::new(0);
    [NUL; IFNAMSIZ]
};

/// The current value of `p`.
pub(crate) fn get(p: IbParam) -> i32 {
    LIVE.get(p)
}

/// Seconds a connection attempt or a transmit may take: `timeout`, or
/// LNet's LND timeout when it is 0.
pub(crate) fn timeout_secs() -> u32 {
    let lnet = crate::kapi::rdma_ni::lnd_timeout();
    rules::effective_timeout(get(IbParam::Timeout), lnet)
}

/// The interface an `o2ib` net given none uses.
pub(crate) fn ipif_name() -> IfName {
    let mut buf = [0u8; IFNAMSIZ];
    for (b, cell) in buf.iter_mut().zip(IPIF_NAME.iter()) {
        *b = cell.load(Relaxed);
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(IFNAMSIZ);
    // Empty until modprobe sets it: Lustre's default.
    IfName::new(buf.get(..len).unwrap_or(&[])).unwrap_or(IfName::DEFAULT)
}

/// A starting NI's tunables (`kiblnd_tunables_setup`): `net` and `lnd` as
/// lnetctl set them, what it left unset from the module parameters.
pub(crate) fn ni_tunables(net: &NetTunables, lnd: &IbTunables) -> Result<NiTunables, IbParamError> {
    let lnet = crate::kapi::rdma_ni::lnd_timeout();
    rules::tunables_setup(net, lnd, get, lnet)
}

fn set_ipif_name(value: Option<&[u8]>) -> c_int {
    match rules::parse_ipif_name(value) {
        Ok(name) => {
            let bytes = name.as_bytes();
            for (i, cell) in IPIF_NAME.iter().enumerate() {
                cell.store(bytes.get(i).copied().unwrap_or(0), Relaxed);
            }
            0
        }
        Err(e) => {
            pr_err!("{}\n", e);
            -e.errno()
        }
    }
}

/// `kernel_param_ops.set` for every ko2iblnd parameter; called only by
/// the kernel's parameter code, with its own arguments.
#[no_mangle]
extern "C" fn kiblnd_param_set(val: ParamValue<'_>, kp: Option<&KernelParam>) -> c_int {
    if kp.is_some_and(|kp| kp.name() == rules::IPIF_NAME.as_bytes()) {
        return set_ipif_name(val.get());
    }
    lnd_param::set(&LIVE, val, kp)
}

/// `kernel_param_ops.get` for every ko2iblnd parameter; called only by
/// the kernel's parameter code, with a page-sized buffer.
#[no_mangle]
extern "C" fn kiblnd_param_get(buf: ParamPage<'_>, kp: Option<&KernelParam>) -> c_int {
    if kp.is_some_and(|kp| kp.name() == rules::IPIF_NAME.as_bytes()) {
        return lnd_param::show(buf, format_args!("{}", ipif_name().as_str()));
    }
    lnd_param::get(&LIVE, buf, kp)
}
