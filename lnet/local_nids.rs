// SPDX-License-Identifier: GPL-2.0

//! The node's own NIDs for upper layers: `LNetIsPeerLocal`,
//! `LNetHasLocalNet` and `LNetFetchNIDs` (include/linux/lnet/api.h). The
//! decisions are lnet-core's (`local_nids.rs`).
//!
//! An NI counts from the end of its start (active) until its removal
//! begins, as Lustre lists an NI on its net only then.

use crate::kapi::bindings::lnet_nid;
use crate::kapi::lnet_abi::{nid_from_c, nid_to_c};
use crate::lnet_core::local_nids;
use crate::lnet_core::nid::{Net, Nid};
use crate::state::TheLnet;
use core::ffi::{c_int, c_void};
use kernel::prelude::*;

/// `LNetFetchNIDs`' callback.
type FetchCb = unsafe extern "C" fn(*mut c_void, *mut lnet_nid) -> c_int;

/// The NIDs of the active NIs, in the order they started.
pub(crate) fn snapshot(lnet: &TheLnet) -> Result<KVec<Nid>> {
    let nis = lnet.nis.lock();
    let mut v = KVec::with_capacity(nis.nis.len(), GFP_ATOMIC)?;
    for ni in nis.nis.iter().filter(|ni| ni.is_active()) {
        v.push(ni.nid, GFP_ATOMIC)?;
    }
    Ok(v)
}

/// Whether `*nid` is the NID of one of our NIs, `0@lo` included. `nid` is
/// the C caller's pointer, null or a NID it does not write during the call.
#[no_mangle]
extern "C" fn LNetIsPeerLocal(nid: Option<&lnet_nid>) -> bool {
    let Some(Ok(nid)) = nid.map(nid_from_c) else {
        return false;
    };
    let Some(lnet) = TheLnet::get() else {
        return false;
    };
    let nis = lnet.nis.lock();
    local_nids::is_local(
        nis.nis.iter().filter(|ni| ni.is_active()).map(|ni| ni.nid),
        &nid,
    )
}

/// 1 when one of our NIs is on `net`; 0 otherwise, and for `LNET_NET_ANY`.
#[no_mangle]
extern "C" fn LNetHasLocalNet(net: u32) -> c_int {
    let Some(lnet) = TheLnet::get() else {
        return 0;
    };
    let nis = lnet.nis.lock();
    c_int::from(local_nids::has_net(
        nis.nis.iter().filter(|ni| ni.is_active()).map(|ni| ni.nid),
        Net::from_u32(net),
    ))
}

/// Calls `cb(data, nid)` for our NIDs (those of net `netid` unless it is
/// `LNET_NET_ANY`), grouped by net; the first negative value `cb` returns
/// ends the walk and is returned, otherwise the last value it returned
/// (0 with no NID), as Lustre's does.
///
/// Lustre holds its API mutex while it calls `cb`; here the NIDs are read
/// under it and `cb` runs with no lock of ours held, so it may call LNet
/// (DESIGN.md). That copy can fail: -ENOMEM. A NULL `cb` is refused with
/// -EINVAL.
///
/// # Safety
///
/// `cb` is null or a function that may be called with `data` and a NID.
#[no_mangle]
unsafe extern "C" fn LNetFetchNIDs(cb: Option<FetchCb>, netid: u32, data: *mut c_void) -> c_int {
    let Some(cb) = cb else {
        return EINVAL.to_errno();
    };
    let Some(lnet) = TheLnet::get() else {
        return 0;
    };
    // Under the API mutex: a net being added or removed is seen whole.
    let nids = {
        let _api = lnet.api.lock();
        snapshot(lnet)
    };
    let Ok(nids) = nids else {
        return ENOMEM.to_errno();
    };
    let mut rc = 0;
    for nid in local_nids::fetch_order(&nids, Net::from_u32(netid)) {
        let mut c = nid_to_c(nid);
        // SAFETY: the caller gave `cb` for `data`; `c` lives for the call.
        rc = unsafe { cb(data, &mut c) };
        if rc < 0 {
            break;
        }
    }
    rc
}
