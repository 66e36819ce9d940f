// SPDX-License-Identifier: GPL-2.0

//! The tcp LND as LNet drives it ([`Lnd`]), and lnet.ko's LND interface
//! (include/linux/lnet/lnd.h) as this module calls it.

use crate::conn::Conn;
use crate::kapi::bindings::lnet_ni_tunables;
use crate::kapi::lnd::{Lnd, ModuleRefs, Refused, RxMsg, TxMsg};
use crate::lnet_core::lnd_ctl::IocData;
use crate::lnet_core::nid::lnd;
use crate::lnet_core::socklnd_params::SockParam;
use crate::ni::SockNi;
use crate::params;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

pub(crate) use crate::kapi::lnd::{LnetNi, Msg};

/// This module, for the references its running NIs hold on it.
static THIS: ModuleRefs = ModuleRefs::new();

/// ksocklnd (`the_ksocklnd`).
pub(crate) struct Socklnd;

impl Lnd for Socklnd {
    const TYPE: u32 = lnd::SOCK as u32;
    type Ni = SockNi;
    /// The connection a header came on, which reads its payload.
    type Rx = Arc<Conn>;

    fn refs() -> &'static ModuleRefs {
        &THIS
    }

    fn startup(ni: LnetNi) -> Result<Arc<SockNi>> {
        // The NI's tunables: what `lnetctl net add` gave, the rest from our
        // parameters.
        let mut t = lnet_ni_tunables {
            peer_timeout: params::get(SockParam::PeerTimeout),
            peer_credits: params::get(SockParam::PeerCredits),
            peer_buffer_credits: params::get(SockParam::PeerBufferCredits),
            credits: params::get(SockParam::Credits),
            conns_per_peer: 1,
            timeout: i32::try_from(params::timeout_secs()).unwrap_or(i32::MAX),
            tos: params::get(SockParam::Tos),
            ..crate::kapi::lnet_abi::NI_TUNABLES_UNSET
        };
        ni.default_tunables(&mut t);
        SockNi::start(ni)
    }

    fn shutdown(ni: Arc<SockNi>) {
        ni.stop();
    }

    fn send_tx(sni: ArcBorrow<'_, SockNi>, tx: TxMsg) -> Result<(), Refused> {
        // Selection avoids an NI whose link is down, but a message may still
        // name it (a recovery ping, a fixed source): fail it now rather than
        // leave it to a connect that cannot complete.
        if sni.link_down.load(core::sync::atomic::Ordering::Acquire) {
            return Err(tx.into_msg().refuse(crate::kapi::errno::ENETDOWN(), None));
        }
        crate::peer::send(&sni, tx)
    }

    fn recv_rx(conn: Arc<Conn>, r: RxMsg) -> Result<(), Refused> {
        conn.post_rx(r);
        Ok(())
    }

    /// `sock_timeout` as it is now, else LNet's (`ksocknal_timeout`).
    fn timeout() -> u32 {
        params::timeout_secs()
    }

    /// `lctl peer_list`, `conn_list` and `disconnect` (ctl.rs).
    fn ctl(sni: ArcBorrow<'_, SockNi>, cmd: u32, data: &mut IocData<'_>) -> Result {
        crate::ctl::ctl(&sni, cmd, data)
    }
}
