// SPDX-License-Identifier: GPL-2.0

//! Conversions between lnet-core types and our C ABI's
//! (include/linux/lnet/, include/uapi/linux/lnet/), shared by lnet.ko and
//! the LNDs.

use super::bindings::{
    lnet_counters, lnet_ioc_config, lnet_ioc_fault, lnet_ioc_globals, lnet_ioc_health,
    lnet_ioc_net_cfg, lnet_ioc_ni, lnet_ioc_peer, lnet_ioc_peer_cfg, lnet_ioc_peer_ni,
    lnet_ioc_ping, lnet_ioc_recovery, lnet_ioc_route, lnet_ioc_routing, lnet_ioc_stats,
    lnet_ioc_udsp, lnet_ioc_value, lnet_nid,
};
use crate::lnet_core::nid::{Nid, NID_WIRE_MAX};
use kernel::prelude::*;
use kernel::types::{AsBytes, FromBytes};

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

// The structures of lnet.ko's ioctl ABI (include/lnet_rs/lnet-rs-ioctl.h),
// copied to and from user space whole.
// SAFETY: `lnet_ioc_config` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_config {}
// SAFETY: `lnet_ioc_config` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_config {}
// SAFETY: `lnet_ioc_ni` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_ni {}
// SAFETY: `lnet_ioc_ni` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_ni {}
// SAFETY: `lnet_ioc_stats` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_stats {}
// SAFETY: `lnet_ioc_stats` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_stats {}
// SAFETY: `lnet_ioc_ping` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_ping {}
// SAFETY: `lnet_ioc_ping` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_ping {}
// SAFETY: `lnet_ioc_value` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_value {}
// SAFETY: `lnet_ioc_value` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_value {}
// SAFETY: `lnet_ioc_globals` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_globals {}
// SAFETY: `lnet_ioc_globals` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_globals {}
// SAFETY: `lnet_ioc_health` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_health {}
// SAFETY: `lnet_ioc_health` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_health {}
// SAFETY: `lnet_ioc_recovery` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_recovery {}
// SAFETY: `lnet_ioc_recovery` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_recovery {}
// SAFETY: `lnet_ioc_net_cfg` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_net_cfg {}
// SAFETY: `lnet_ioc_net_cfg` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_net_cfg {}
// SAFETY: `lnet_ioc_peer_cfg` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_peer_cfg {}
// SAFETY: `lnet_ioc_peer_cfg` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_peer_cfg {}
// SAFETY: `lnet_ioc_peer` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_peer {}
// SAFETY: `lnet_ioc_peer` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_peer {}
// SAFETY: `lnet_ioc_peer_ni` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_peer_ni {}
// SAFETY: `lnet_ioc_peer_ni` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_peer_ni {}
// SAFETY: `lnet_ioc_fault` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_fault {}
// SAFETY: `lnet_ioc_fault` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_fault {}
// SAFETY: `lnet_ioc_udsp` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_udsp {}
// SAFETY: `lnet_ioc_udsp` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_udsp {}
// SAFETY: `lnet_ioc_route` is bindgen's #[repr(C)] copy of a uapi struct of
// __u8..__u64 fields, arrays and structs of them: any bytes are a value.
unsafe impl FromBytes for lnet_ioc_route {}
// SAFETY: `lnet_ioc_route` names every hole as a field (lnet-rs-ioctl.h), so it
// has no padding: every byte of a value is initialized.
unsafe impl AsBytes for lnet_ioc_route {}
// SAFETY: `lnet_ioc_routing` is bindgen's #[repr(C)] copy of a uapi struct of
// integers and arrays of integer structures: any bit pattern is valid.
unsafe impl FromBytes for lnet_ioc_routing {}
// SAFETY: `lnet_ioc_routing` names every hole as a field (lnet-rs-ioctl.h:
// u32s and 16-byte structs of u32s, 72 bytes), so it has no padding bytes.
unsafe impl AsBytes for lnet_ioc_routing {}

// `lnet_counters` has no padding: its common part is packed (7 `u32`s then
// 4 `u64`s, 60 bytes), its health part 15 `u32`s from a 4-aligned offset.
const _: () = assert!(
    core::mem::size_of::<lnet_counters>() == 120
        && core::mem::offset_of!(lnet_counters, lct_health) == 60
        && core::mem::size_of::<super::bindings::lnet_counters_health>() == 60
);
// SAFETY: `lnet_counters` is bindgen's #[repr(C)] copy of integer fields
// with no hole (the sizes asserted above add up), so every byte is set.
unsafe impl AsBytes for lnet_counters {}

/// The bytes of `v`, e.g. to read an ioctl structure's header.
pub fn bytes_of<T: AsBytes>(v: &T) -> &[u8] {
    // SAFETY: `AsBytes` types have no padding, so all `size_of::<T>()`
    // bytes of `v` are initialized; the slice borrows `v`.
    unsafe { core::slice::from_raw_parts((v as *const T).cast::<u8>(), core::mem::size_of::<T>()) }
}

/// An all-zero `T` (a request or reply argument before it is filled).
pub fn zeroed<T: FromBytes>() -> T {
    // SAFETY: `T: FromBytes` is valid for every bit pattern, all zeros too.
    unsafe { core::mem::zeroed() }
}
