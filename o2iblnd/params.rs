// SPDX-License-Identifier: GPL-2.0

//! ko2iblnd's parameters: their live values and the `.set`/`.get`
//! callbacks /sys/module/ko2iblnd/parameters and modprobe reach through
//! o2iblnd_params.c. Names, defaults, ranges and the NI tunables derived
//! from them are lnet-core's.

use crate::kapi::param::{self, PageWriter};
use crate::lnet_core::credits::NetTunables;
use crate::lnet_core::lnd_params::LndParam;
use crate::lnet_core::o2iblnd_params::{
    self as rules, IbParam, IbParamError, IbTunables, IfName, NiTunables, IFNAMSIZ,
};
use core::fmt::Write;
use core::sync::atomic::{AtomicI32, AtomicU8, Ordering::Relaxed};
use kernel::bindings::kernel_param;
use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;

const N: usize = IbParam::ALL.len();

/// One value per parameter, in `IbParam::ALL` order, each starting at its
/// default. Writers are serialised by the kernel (module load, then sysfs
/// under the module's parameter lock); readers load without a lock.
static LIVE: [AtomicI32; N] = {
    // Built from `ALL` so that an entry can never sit at another
    // parameter's index. Runs at compile time.
    #[allow(clippy::declare_interior_mutable_const)]
    const UNSET: AtomicI32 = AtomicI32::new(0);
    let mut live = [UNSET; N];
    let mut i = 0;
    while i < N {
        live[i] = AtomicI32::new(IbParam::ALL[i].default_value());
        i += 1;
    }
    live
};

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
    LIVE.get(p.index())
        .map_or(p.default_value(), |v| v.load(Relaxed))
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

/// A starting NI's tunables (`kiblnd_tunables_setup`): `net` as lnetctl
/// set it, o2iblnd ones from the module parameters (lnetctl sets none).
pub(crate) fn ni_tunables(net: &NetTunables) -> Result<NiTunables, IbParamError> {
    let lnet = crate::kapi::rdma_ni::lnd_timeout();
    rules::tunables_setup(net, &IbTunables::defaults(get), get, lnet)
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

/// `kernel_param_ops.set` for every ko2iblnd parameter.
///
/// # Safety
///
/// Called only by the kernel's parameter code, with its own arguments.
#[no_mangle]
unsafe extern "C" fn kiblnd_param_set(val: *const c_char, kp: *const kernel_param) -> c_int {
    // SAFETY: the kernel passes a registered parameter and a NUL-terminated
    // value (or null), valid for this call.
    let req = unsafe { param::set_request(val, kp) };
    if req.name == rules::IPIF_NAME.as_bytes() {
        return set_ipif_name(req.value);
    }
    let Some(p) = IbParam::from_name(req.name) else {
        return -rules_einval();
    };
    match rules::parse(p, req.value) {
        Ok(v) => {
            if let Some(cell) = LIVE.get(p.index()) {
                cell.store(v, Relaxed);
            }
            0
        }
        Err(e) => {
            pr_err!("{}\n", e);
            -e.errno()
        }
    }
}

/// `kernel_param_ops.get` for every ko2iblnd parameter.
///
/// # Safety
///
/// Called only by the kernel's parameter code, with a page-sized buffer.
#[no_mangle]
unsafe extern "C" fn kiblnd_param_get(buf: *mut c_char, kp: *const kernel_param) -> c_int {
    // SAFETY: the kernel passes a registered parameter, valid for this call.
    let name = unsafe { param::param_name(kp) };
    // SAFETY: `.get` is handed a PAGE_SIZE buffer owned by the caller.
    let mut out = unsafe { PageWriter::new(buf) };
    let written = if name == rules::IPIF_NAME.as_bytes() {
        writeln!(out, "{}", ipif_name().as_str())
    } else if let Some(p) = IbParam::from_name(name) {
        writeln!(out, "{}", get(p))
    } else {
        return -rules_einval();
    };
    if written.is_err() {
        return -rules_einval();
    }
    c_int::try_from(out.len()).unwrap_or(0)
}

fn rules_einval() -> c_int {
    crate::lnet_core::params::EINVAL
}
