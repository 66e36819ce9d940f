// SPDX-License-Identifier: GPL-2.0

//! The C entry points of the node and its peers (include/linux/lnet/api.h),
//! as Lustre's api-ni.c and peer.c export them: bringing LNet up and down,
//! the local NIDs and distances, peers' primary NIDs and discovery, and the
//! counters.

use crate::api::{errno, lnet, nid_from_c, nid_to_c};
use crate::kapi::bindings::{lnet_counters, lnet_nid, lnet_processid};
use crate::kapi::errno::*;
use crate::lnd::lnet_ni;
use crate::lnet_core::dist::{self, Distance};
use crate::lnet_core::nid::Nid;
use crate::peer::UlpAdd;
use crate::startup;
use crate::state::TheLnet;
use core::ffi::{c_int, c_uint, c_void};
use kernel::prelude::*;

#[no_mangle]
extern "C" fn LNetNIInit(requested_pid: u32) -> c_int {
    match lnet().and_then(|l| startup::ni_init(l, requested_pid)) {
        Ok(n) => n as c_int,
        Err(e) => e.to_errno(),
    }
}

/// Undoes one LNetNIInit; the last one shuts LNet down, ending every
/// message still in flight.
#[no_mangle]
extern "C" fn LNetNIFini() -> c_int {
    errno(lnet().and_then(startup::ni_fini))
}

/// The `index`th local NID and our pid (`LNetGetId`), into `id` (C
/// passes null or one writable `struct lnet_processid`).
#[no_mangle]
extern "C" fn LNetGetId(index: c_uint, id: Option<&mut lnet_processid>, large_nids: bool) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    let nis = lnet.nis.lock();
    // Small-NID callers are not shown large-address NIs.
    let Some(ni) = nis
        .nis
        .iter()
        .filter(|ni| large_nids || ni.nid.to_nid4().is_some())
        .nth(index as usize)
    else {
        return ENOENT.to_errno();
    };
    let nid = nid_to_c(&ni.nid);
    drop(nis);
    if let Some(out) = id {
        out.nid = nid;
        out.pid = lnet.pid.load(core::sync::atomic::Ordering::Relaxed);
    }
    0
}

/// How far `dst` is (`LNetDist`, lnet-core dist.rs): C passes a NID, and
/// null or writable `src` and `order`; `src` may be `dst` itself, written
/// last.
#[no_mangle]
extern "C" fn LNetDist(
    dst: Option<&lnet_nid>,
    src: Option<&mut lnet_nid>,
    order: Option<&mut u32>,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    let Some(Ok(dst)) = dst.map(nid_from_c) else {
        return EINVAL.to_errno();
    };
    let Some(d) = distance(lnet, &dst) else {
        return EHOSTUNREACH().to_errno();
    };
    if let Some(s) = src {
        *s = nid_to_c(&d.src);
    }
    if let Some(o) = order {
        *o = d.order;
    }
    c_int::try_from(d.dist).unwrap_or(c_int::MAX)
}

/// The distance to `dst` (`LNetDist`), or None when it is unreachable.
/// The peers lock (routes) and the NI lock are taken one after the other.
pub(crate) fn distance(lnet: &TheLnet, dst: &Nid) -> Option<Distance> {
    let route = {
        let peers = lnet.peers.lock();
        let table = &peers.routes.table;
        dist::shortest_route(table.routes_to(dst.net()))
            .map(|(hops, local)| (hops, local, table.bucket_rank(dst.net())))
    };
    let nis = lnet.nis.lock();
    // A NI being started or deleted is not on Lustre's lists.
    let nids = nis.nis.iter().filter(|ni| ni.is_active()).map(|ni| ni.nid);
    dist::distance(nids, dst, true, route)
}

/// The primary NID of the peer of `nid`, the peer made as traffic makes
/// one if there is none (Lustre's `lnet_peerni_by_nid_locked`); None while
/// LNet is down or out of memory.
fn peer_primary(lnet: &TheLnet, nid: &Nid) -> Option<Nid> {
    if !lnet.is_running() {
        return None;
    }
    let mut peers = lnet.peers.lock();
    let (pi, _) = peers.find_or_create(nid).ok()?;
    peers.list.get(pi).map(|p| p.primary)
}

/// Replaces `*nid` by the primary NID of its peer (`LNetPrimaryNID`),
/// discovering the peer first as discovery.rs says (it may sleep). `0@lo`
/// stays. C passes null or a writable NID.
#[no_mangle]
extern "C" fn LNetPrimaryNID(nid: Option<&mut lnet_nid>) {
    if let Some(c) = nid {
        make_primary(c);
    }
}

/// The body of [`LNetPrimaryNID`] for a NID it was given.
fn make_primary(c: &mut lnet_nid) {
    let (Ok(lnet), Ok(n)) = (lnet(), nid_from_c(c)) else {
        return;
    };
    if n == Nid::LO || n.is_any() {
        return;
    }
    if let Some(p) = crate::discovery::primary_nid(lnet, &n) {
        *c = nid_to_c(&p);
    }
}

/// The first local NID other than `0@lo`, made primary as
/// [`LNetPrimaryNID`] does (`LNetLocalPrimaryNID`); with no such NI,
/// `*nid` goes through `LNetPrimaryNID` as it is, as in Lustre. C
/// passes null or a writable NID.
#[no_mangle]
extern "C" fn LNetLocalPrimaryNID(nid: Option<&mut lnet_nid>) {
    let Some(c) = nid else {
        return;
    };
    if let Ok(lnet) = lnet() {
        let nis = lnet.nis.lock();
        if let Some(ni) = nis.nis.iter().find(|ni| ni.nid != Nid::LO) {
            *c = nid_to_c(&ni.nid);
        }
    }
    make_primary(c)
}

/// Whether sends to `nid` need wait no longer for discovery
/// (`LNetPeerDiscovered`, see discovery.rs), or -ENETRESET when its peer
/// cannot be had (LNet down). The peer is made as traffic would make it,
/// as in Lustre. C passes null or a NID.
#[no_mangle]
extern "C" fn LNetPeerDiscovered(nid: Option<&lnet_nid>) -> c_int {
    let Some(Ok(n)) = nid.map(nid_from_c) else {
        return EINVAL.to_errno();
    };
    if n == Nid::LO {
        return 1;
    }
    match lnet() {
        Ok(l) => crate::discovery::peer_discovered(l, &n),
        Err(_) => ENETRESET().to_errno(),
    }
}

/// 1 if peer discovery is enabled (`lnet_peer_discovery_disabled` is 0),
/// else 0 (`LNetGetPeerDiscoveryStatus`).
#[no_mangle]
extern "C" fn LNetGetPeerDiscoveryStatus() -> c_int {
    c_int::from(crate::params::snapshot().peer_discovery_disabled == 0)
}

/// Logs the peer NI of `id`'s NID as Lustre does (`LNetDebugPeer`): NID,
/// references, aliveness, the net's peer credits, router credits and
/// their minimum, send credits and their minimum, bytes queued. The peer
/// is made if unknown, as in Lustre. C passes null or a process id.
#[no_mangle]
extern "C" fn LNetDebugPeer(id: Option<&lnet_processid>) {
    let Some(id) = id else {
        return;
    };
    let (Ok(lnet), Ok(nid)) = (lnet(), nid_from_c(&id.nid)) else {
        return;
    };
    let mut text = [0u8; 64];
    let len = crate::lnet_core::nid::write_cstr(&mut text, &nid);
    let name = text
        .get(..len)
        .and_then(|t| core::str::from_utf8(t).ok())
        .unwrap_or("");
    if peer_primary(lnet, &nid).is_none() {
        pr_warn!("No peer {}\n", name);
        return;
    }
    // Until a message goes to it, a peer NI has the full peer_credits of
    // its net's first NI.
    let fresh = lnet
        .nis
        .lock()
        .nis
        .iter()
        .find(|x| x.nid.net() == nid.net())
        .map_or(0, |x| x.net_tunables().peer_credits.max(0));
    let (c, qnob) = lnet.tx.lock().peer_ni_credits(&nid, fresh);
    // Not a router: router credits stay full; no aliveness is tracked.
    pr_warn!(
        "{:<24} {:>4} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {}\n",
        name,
        1,
        "NA",
        c.max,
        c.max,
        c.max,
        c.available,
        c.min,
        qnob
    );
}

/// Adds the peers of a Lustre server's NIDs (`LNetAddPeer`), as Lustre
/// does: `0@lo` is skipped. With discovery enabled (the default) the first
/// NID that can be is the primary of a Multi-Rail peer, its primary locked
/// when `lock_prim_nid` is set, and the other NIDs join it: Lustre asks
/// discovery to merge them, lnet-rs merges them at once. With discovery
/// disabled, each NID on a local net gets a non-Multi-Rail peer of its own.
/// Peers made here are not "configured": `lnetctl peer add` may redo them.
///
/// # Safety
///
/// `nids` is null or points to `num_nids` NIDs.
#[no_mangle]
unsafe extern "C" fn LNetAddPeer(nids: *mut lnet_nid, num_nids: c_int) {
    let Ok(n) = usize::try_from(num_nids) else {
        return;
    };
    let Ok(lnet) = lnet() else {
        return;
    };
    if nids.is_null() || n == 0 {
        return;
    }
    // SAFETY: `nids` is non-null (checked above) and points to `num_nids` (that
    // is `n`) NIDs (# Safety), only read during this call.
    let given = unsafe { core::slice::from_raw_parts(nids.cast_const(), n) };
    let t = crate::params::snapshot();
    let discovery = t.peer_discovery_disabled == 0;
    let lock = t.lock_prim_nid != 0;
    // Held as Lustre holds ln_api_mutex: LNet stays up meanwhile.
    let api = lnet.api.lock();
    if api.refcount == 0 || !lnet.is_running() {
        return;
    }
    let Ok(mut list) = KVec::with_capacity(n, GFP_KERNEL) else {
        return;
    };
    {
        let nis = lnet.nis.lock();
        for nid in given.iter().filter_map(|c| nid_from_c(c).ok()) {
            let local = nis.nis.iter().any(|ni| ni.nid.net() == nid.net());
            if nid == Nid::LO || nid.is_any() || (!discovery && !local) {
                continue;
            }
            // Cannot fail: the capacity is there.
            let _ = list.push(nid, GFP_ATOMIC);
        }
    }
    let mut peers = lnet.peers.lock();
    let mut primary: Option<Nid> = None;
    for nid in list.iter() {
        match primary {
            None => {
                primary = match peers.ulp_add(nid, discovery, lock) {
                    Ok(UlpAdd::Added | UlpAdd::Exists) => Some(*nid),
                    Ok(UlpAdd::Locked(p)) => Some(p),
                    Ok(UlpAdd::Refused) | Err(_) => None,
                };
            }
            Some(_) if !discovery => {
                let _ = peers.ulp_add(nid, false, lock);
            }
            Some(p) if p == *nid => {}
            Some(p) => {
                let _ = peers.ulp_merge(nid, &p);
            }
        }
    }
    drop(peers);
    drop(api);
    crate::udsp::apply_new_peers(lnet);
}

/// The CPU partition of a NID4 (`lnet_cpt_of_nid`): the NID hashed over
/// the partitions of `cfs_cpt_tab` as Lustre hashes it; 0 with a single
/// partition. lnet-rs keeps no CPT list per NI (networks="tcp(eth0)[0,1]"
/// is checked, not kept), so an NI given makes no difference, as in
/// Lustre for an NI without one.
///
/// # Safety
///
/// `ni` is null or an NI LNet started and has not shut down.
#[no_mangle]
unsafe extern "C" fn lnet_cpt_of_nid(nid: u64, _ni: *mut lnet_ni) -> c_int {
    let number = crate::cpt::number();
    if number <= 1 {
        return 0;
    }
    let k = crate::lnet_core::nid::cpt_of_nid4(nid, number);
    c_int::try_from(k).unwrap_or(CFS_CPT_ANY)
}

/// `CFS_CPT_ANY`: no particular partition.
const CFS_CPT_ANY: c_int = -1;

/// Whether a page can only be reached by RDMA, as GPU memory is
/// (`lnet_is_rdma_only_page`). lnet-rs has no GPU Direct Storage support,
/// so no page is: false, as Lustre answers without it.
#[no_mangle]
extern "C" fn lnet_is_rdma_only_page(_page: *mut c_void) -> bool {
    false
}

/// The node's counters (`lnet_counters_get`): zeroed and -ENODEV while
/// LNet is not running, as Lustre. C passes null or one writable
/// `struct lnet_counters`.
#[no_mangle]
extern "C" fn lnet_counters_get(out: Option<&mut lnet_counters>) -> c_int {
    let Some(o) = out else {
        return EINVAL.to_errno();
    };
    *o = lnet_counters::default();
    match lnet() {
        Ok(lnet) if lnet.is_running() => {
            *o = lnet.counters.snapshot();
            0
        }
        _ => ENODEV.to_errno(),
    }
}
