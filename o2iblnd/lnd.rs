// SPDX-License-Identifier: GPL-2.0

//! The o2ib LND as LNet drives it ([`Lnd`]), and lnet.ko's LND interface
//! (include/linux/lnet/lnd.h) as this module calls it.

use crate::conn::RxCtx;
use crate::kapi::bindings::{lnet_ni_tunables, lnet_tx_desc};
use crate::kapi::lnd::{Lnd, ModuleRefs, Recv, Refused};
use crate::lnet_core::lnd_ctl::IocData;
use crate::lnet_core::nid::lnd;
use crate::lnet_core::o2iblnd_params::IbParam;
use crate::ni::IbNi;
use crate::params;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

pub(crate) use crate::kapi::lnd::{LnetNi, Msg};

/// This module, for the references its running NIs hold on it.
static THIS: ModuleRefs = ModuleRefs::new();

/// ko2iblnd (`the_o2iblnd`).
pub(crate) struct O2iblnd;

impl Lnd for O2iblnd {
    const TYPE: u32 = lnd::O2IB as u32;
    type Ni = IbNi;
    /// The receive buffer a header came in, and its connection.
    type Rx = KBox<RxCtx>;

    fn refs() -> &'static ModuleRefs {
        &THIS
    }

    fn startup(ni: LnetNi) -> Result<Arc<IbNi>> {
        let mut t = lnet_ni_tunables {
            peer_timeout: params::get(IbParam::PeerTimeout),
            peer_credits: params::get(IbParam::PeerCredits),
            peer_buffer_credits: params::get(IbParam::PeerBufferCredits),
            credits: params::get(IbParam::Credits),
            timeout: i32::try_from(params::timeout_secs()).unwrap_or(i32::MAX),
            ..crate::kapi::lnet_abi::NI_TUNABLES_UNSET
        };
        // The administrator's per-NI values win; the module parameters
        // fill in the rest in `IbNi::start` (`kiblnd_tunables_setup`).
        ni.lnd_tunables(&mut t);
        ni.default_tunables(&mut t);
        let n = IbNi::start(ni, &mut t)?;
        // Our own tunables follow the net's: shown as derived.
        ni.default_tunables(&mut t);
        Ok(n)
    }

    fn shutdown(n: Arc<IbNi>) {
        let listener = n.stop();
        // The PD and buffers go first: the listener holds the device.
        drop(n);
        drop(listener);
    }

    fn send(n: ArcBorrow<'_, IbNi>, msg: Msg, desc: &lnet_tx_desc) -> Result<(), Refused> {
        let tx = crate::tx::Tx::from_lnet(&n, msg, desc)?;
        crate::ni::launch(n, tx);
        Ok(())
    }

    fn recv(rx: KBox<RxCtx>, r: Recv) -> Result<(), Refused> {
        // SAFETY: LNet's fragments of `r.msg`, valid until it is finalized,
        // which `recv` (or the tx it makes) does after dropping them.
        let kiov = unsafe {
            crate::kapi::rdma::Frags::new(r.kiov.cast_const().cast(), r.niov, r.offset, r.mlen)
        };
        crate::conn::recv(rx, r.msg, kiov, r.rlen);
        Ok(())
    }

    /// `timeout` as it is now, else LNet's (`kiblnd_timeout`).
    fn timeout() -> u32 {
        params::timeout_secs()
    }

    /// `lctl peer_list`, `conn_list` and `disconnect` (ctl.rs).
    fn ctl(n: ArcBorrow<'_, IbNi>, cmd: u32, data: &mut IocData<'_>) -> Result {
        crate::ctl::ctl(&n, cmd, data)
    }
}
