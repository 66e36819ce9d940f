// SPDX-License-Identifier: GPL-2.0

//! Conversions between lnet-core types and our C ABI's
//! (include/linux/lnet/, include/uapi/linux/lnet/), shared by lnet.ko and
//! the LNDs.

use super::bindings::lnet_nid;
use crate::lnet_core::nid::{Nid, NID_WIRE_MAX};
use kernel::prelude::*;

/// A NID from its C form, which is also its wire form. Any NID of type
/// 0xff is `LNET_ANY_NID`, whatever its other bytes, as Lustre's
/// `LNET_NID_IS_ANY` reads it (the C macro sets the size byte to 0xff too).
pub fn nid_from_c(c: &lnet_nid) -> Result<Nid> {
    if c.nid_type == crate::lnet_core::nid::lnd::ANY {
        return Ok(Nid::ANY);
    }
    let mut b = [0u8; NID_WIRE_MAX];
    b[0] = c.nid_size;
    b[1] = c.nid_type;
    let num = c.nid_num;
    b[2..4].copy_from_slice(&num.to_ne_bytes());
    let addr = c.nid_addr;
    for (i, w) in addr.iter().enumerate() {
        if let Some(d) = b.get_mut(4 + 4 * i..8 + 4 * i) {
            d.copy_from_slice(&w.to_ne_bytes());
        }
    }
    Nid::decode(&b).map(|(n, _)| n).map_err(|_| EINVAL)
}

/// The C form of a NID.
pub fn nid_to_c(n: &Nid) -> lnet_nid {
    let mut b = [0u8; NID_WIRE_MAX];
    let _ = n.encode(&mut b);
    let w = |i: usize| {
        let mut x = [0u8; 4];
        x.copy_from_slice(b.get(i..i + 4).unwrap_or(&[0; 4]));
        u32::from_ne_bytes(x)
    };
    lnet_nid {
        nid_size: b[0],
        nid_type: b[1],
        nid_num: u16::from_ne_bytes([b[2], b[3]]),
        nid_addr: [w(4), w(8), w(12), w(16)],
    }
}

/// NI tunables none of which is set (`lnet_ni_tunables`, -1 each): an LND
/// fills in its own.
pub const NI_TUNABLES_UNSET: super::bindings::lnet_ni_tunables =
    super::bindings::lnet_ni_tunables {
        peer_timeout: -1,
        peer_credits: -1,
        peer_buffer_credits: -1,
        credits: -1,
        conns_per_peer: -1,
        timeout: -1,
        tos: -1,
        peercredits_hiw: -1,
        map_on_demand: -1,
        concurrent_sends: -1,
        fmr_pool_size: -1,
        fmr_flush_trigger: -1,
        fmr_cache: -1,
        ntx: -1,
    };
