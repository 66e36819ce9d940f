// SPDX-License-Identifier: GPL-2.0

//! The C entry points of lnet.ko: the API upper layers call
//! (include/linux/lnet/api.h) and the one LNDs call (include/linux/lnet/lnd.h). Each
//! checks and converts its arguments and calls into the rest of the module.

use crate::kapi::bindings::{
    bio_vec, lnet_counters, lnet_event, lnet_handle_md, lnet_lnd, lnet_md, lnet_ni_tunables,
    lnet_nid, lnet_processid,
};
use crate::kapi::errno::*;
use crate::lnd::{lnet_msg, lnet_ni, LndRef};
use crate::lnet_core::credits::NetTunables;
use crate::lnet_core::health::Status;
use crate::lnet_core::md::{options, EventKind, MatchEntry};
use crate::lnet_core::nid::Nid;
use crate::md::{flags, Handler, LibMd};
use crate::msg;
use crate::ni::Ni;
use crate::peer::UlpAdd;
use crate::send::Request;
use crate::startup;
use crate::state::{Me, TheLnet, MAX_PORTALS};
use core::ffi::{c_int, c_uint, c_void};
use core::sync::atomic::Ordering::Relaxed;
use kernel::prelude::*;
use kernel::rbtree::RBTreeNode;

/// `struct lnet_me`: callers hold pointers to it that are really cookies.
#[repr(C)]
pub(crate) struct lnet_me {
    _private: [u8; 0],
}

/// `enum lnet_unlink`, `enum lnet_ins_pos`, `enum lnet_ack_req` values.
const LNET_UNLINK: c_uint = 1;
const LNET_INS_BEFORE: c_uint = 0;
const LNET_ACK_REQ: c_uint = 0;

pub(crate) use crate::kapi::lnet_abi::{nid_from_c, nid_to_c};

/// An optional NID argument: NULL or a type-0xff NID mean "any".
///
/// # Safety
///
/// `p` is null or points to a `struct lnet_nid`.
unsafe fn opt_nid(p: *const lnet_nid) -> Result<Nid> {
    // SAFETY: `p` is null or points to a readable `struct lnet_nid` (# Safety).
    match unsafe { p.as_ref() } {
        None => Ok(Nid::ANY),
        Some(c) => nid_from_c(c),
    }
}

fn errno(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

fn lnet() -> Result<&'static TheLnet> {
    TheLnet::get().ok_or(ENETDOWN())
}

/// Brings LNet up on the first call; later calls only count.
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

/// # Safety
///
/// `id` points to writable memory for one `struct lnet_processid`.
#[no_mangle]
unsafe extern "C" fn LNetGetId(index: c_uint, id: *mut lnet_processid, large_nids: bool) -> c_int {
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
    // SAFETY: `id` points to writable memory for one `struct lnet_processid` (# Safety; null is
    // skipped), a struct of integers, so whatever it holds is a valid value to overwrite.
    if let Some(out) = unsafe { id.as_mut() } {
        out.nid = nid;
        out.pid = lnet.pid.load(core::sync::atomic::Ordering::Relaxed);
    }
    0
}

fn err_ptr<T>(e: Error) -> *mut T {
    e.to_errno() as isize as *mut T
}

/// Creates a match entry on `portal` (`LNetMEAttach`). The returned pointer
/// is a handle: it is only compared and passed back, never dereferenced.
///
/// # Safety
///
/// `match_id` is null or points to a `struct lnet_processid` (null is
/// refused: Lustre dereferences it).
#[no_mangle]
pub(crate) unsafe extern "C" fn LNetMEAttach(
    portal: c_uint,
    match_id: *mut lnet_processid,
    match_bits: u64,
    ignore_bits: u64,
    unlink: c_uint,
    pos: c_uint,
) -> *mut lnet_me {
    // SAFETY: me_attach needs what our # Safety promises, and the arguments go
    // on as given: `match_id` is null or points to a `struct lnet_processid`.
    match unsafe { me_attach(portal, match_id, match_bits, ignore_bits, unlink, pos) } {
        Ok(cookie) => cookie as usize as *mut lnet_me,
        Err(e) => err_ptr(e),
    }
}

/// # Safety
///
/// As [`LNetMEAttach`].
unsafe fn me_attach(
    portal: c_uint,
    match_id: *mut lnet_processid,
    match_bits: u64,
    ignore_bits: u64,
    unlink: c_uint,
    pos: c_uint,
) -> Result<u64> {
    let lnet = lnet()?;
    if portal >= MAX_PORTALS {
        pr_err!(
            "LNetMEAttach: portal {} out of range (max {})\n",
            portal,
            MAX_PORTALS - 1
        );
        return Err(EINVAL);
    }
    // SAFETY: `match_id` is null or points to a readable `struct lnet_processid` (# Safety, as
    // LNetMEAttach's); null is refused here.
    let Some(id) = (unsafe { match_id.as_ref() }) else {
        // Lustre's callers always pass one (LNET_ANY_NID and LNET_PID_ANY
        // for anyone); its LNetMEAttach would oops on NULL.
        pr_err!("LNetMEAttach: NULL match id\n");
        return Err(EINVAL);
    };
    let (nid, pid) = (nid_from_c(&id.nid)?, id.pid);
    let cookie = lnet.cookie();
    let position = lnet.me_pos(pos == LNET_INS_BEFORE);
    let me = Me {
        portal,
        pos: position,
        entry: MatchEntry {
            nid,
            pid,
            match_bits,
            ignore_bits,
        },
        unlink: unlink == LNET_UNLINK,
        md: None,
    };
    let me_node = RBTreeNode::new(cookie, me, GFP_KERNEL)?;
    let ptl_node = RBTreeNode::new((portal, position), cookie, GFP_KERNEL)?;
    let mut res = lnet.res.lock();
    if !lnet.is_running() {
        return Err(ESHUTDOWN());
    }
    res.mes.insert(me_node);
    res.ptl.insert(ptl_node);
    Ok(cookie)
}

/// # Safety
///
/// `umd` points to a valid `struct lnet_md` describing memory that stays
/// valid until the MD is unlinked; `handle` points to writable memory.
#[no_mangle]
pub(crate) unsafe extern "C" fn LNetMDAttach(
    me: *mut lnet_me,
    umd: *const lnet_md,
    unlink: c_uint,
    handle: *mut lnet_handle_md,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    let me_cookie = me as usize as u64;
    // SAFETY: `umd` points to a valid `struct lnet_md` whose memory stays valid
    // until the MD is unlinked (# Safety): build_md's contract.
    let built = unsafe { build_md(umd, unlink, true) };
    let node = built.and_then(|(cookie, mut md)| {
        md.me = Some(me_cookie);
        Ok((cookie, RBTreeNode::new(cookie, md, GFP_KERNEL)?))
    });
    let mut res = lnet.res.lock();
    let (cookie, node) = match node {
        Ok(x) => x,
        Err(e) => {
            // The ME goes with a failed attach, as in Lustre.
            res.me_remove(me_cookie);
            return e.to_errno();
        }
    };
    if !lnet.is_running() {
        res.me_remove(me_cookie);
        return ESHUTDOWN().to_errno();
    }
    let portal = match res.mes.get_mut(&me_cookie) {
        Some(m) if m.md.is_none() => {
            m.md = Some(cookie);
            m.portal
        }
        _ => {
            pr_err!("LNetMDAttach: no such ME, or it already has an MD\n");
            return EINVAL.to_errno();
        }
    };
    res.mds.insert(node);
    drop(res);
    // SAFETY: `handle` points to writable memory (# Safety; null is skipped) for one `struct
    // lnet_handle_md`, a lone u64, so any bytes there are a valid value.
    if let Some(h) = unsafe { handle.as_mut() } {
        h.cookie = cookie;
    }
    crate::portal::attach_delayed(lnet, portal, me_cookie, cookie);
    0
}

/// # Safety
///
/// As [`LNetMDAttach`].
#[no_mangle]
pub(crate) unsafe extern "C" fn LNetMDBind(
    umd: *const lnet_md,
    unlink: c_uint,
    handle: *mut lnet_handle_md,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    // SAFETY: `umd` points to a valid `struct lnet_md` whose memory stays valid until the MD is
    // unlinked (# Safety, as LNetMDAttach's): build_md's contract.
    let built = unsafe { build_md(umd, unlink, false) };
    let (cookie, md) = match built {
        Ok(x) => x,
        Err(e) => return e.to_errno(),
    };
    if md.state.length > crate::lnet_core::hdr::LNET_MTU {
        pr_err!(
            "Invalid length: too big transfer size {}, {} max\n",
            md.state.length,
            crate::lnet_core::hdr::LNET_MTU
        );
        return EINVAL.to_errno();
    }
    let node = match RBTreeNode::new(cookie, md, GFP_KERNEL) {
        Ok(n) => n,
        Err(e) => return e.to_errno(),
    };
    let mut res = lnet.res.lock();
    if !lnet.is_running() {
        return ESHUTDOWN().to_errno();
    }
    res.mds.insert(node);
    drop(res);
    // SAFETY: `handle` points to writable memory (# Safety, as LNetMDAttach's; null is skipped) for
    // one `struct lnet_handle_md`, a lone u64, so any bytes there are a valid value.
    if let Some(h) = unsafe { handle.as_mut() } {
        h.cookie = cookie;
    }
    0
}

/// # Safety
///
/// As [`LNetMDAttach`].
unsafe fn build_md(umd: *const lnet_md, unlink: c_uint, attach: bool) -> Result<(u64, LibMd)> {
    let lnet = lnet()?;
    // SAFETY: `umd` points to a valid `struct lnet_md` (# Safety, as
    // LNetMDAttach's); a null one is refused here.
    let umd = unsafe { umd.as_ref() }.ok_or(EINVAL)?;
    let ops = umd.umd_options & (options::OP_PUT | options::OP_GET);
    if attach && ops == 0 {
        pr_err!("Invalid option: no MD_OP set\n");
        return Err(EINVAL);
    }
    if !attach && ops != 0 {
        pr_err!("Invalid option: GET|PUT illegal on active MDs\n");
        return Err(EINVAL);
    }
    // SAFETY: `umd`'s start and length describe memory that stays valid until the MD is unlinked (#
    // Safety, as LNetMDAttach's): LibMd::build's contract.
    let md = unsafe { LibMd::build(umd, unlink == LNET_UNLINK)? };
    Ok((lnet.cookie(), md))
}

/// Unlinks an MD (`__LNetMDUnlink`); see include/linux/lnet/api.h.
#[no_mangle]
extern "C" fn __LNetMDUnlink(h: lnet_handle_md, discard: bool) -> c_int {
    errno(lnet().and_then(|l| md_unlink(l, h.cookie, discard, 0)))
}

/// Unlinks an MD (`LNetMDUnlink`, the form Lustre exports today).
#[no_mangle]
extern "C" fn LNetMDUnlink(h: lnet_handle_md) -> c_int {
    __LNetMDUnlink(h, false)
}

/// Logs an error, with how many, if MDs live or waiting for their last
/// message still have `handler` (`lnet_assert_handler_unused`): its owner
/// is about to go away. Lustre asserts; this does not panic.
#[no_mangle]
extern "C" fn lnet_assert_handler_unused(handler: Option<Handler>) {
    let (Some(h), Ok(lnet)) = (handler, lnet()) else {
        return;
    };
    let used = lnet
        .res
        .lock()
        .mds
        .iter()
        .filter(|(_, md)| md.handler.is_some_and(|x| x as usize == h as usize))
        .count();
    if used > 0 {
        pr_err!(
            "lnet_assert_handler_unused: the handler is still used by {} MD(s)\n",
            used
        );
    }
}

/// The body of `LNetMDUnlink`: with no message on the MD the handler gets
/// an UNLINK event now; otherwise the last message's event says unlinked.
/// The UNLINK event has `status`: 0 as in Lustre for every unlink an
/// owner or a response deadline or shutdown makes (the event's type tells
/// the owner the operation did not complete); LNet's own discovery passes
/// its send's error to its own handler.
pub(crate) fn md_unlink(lnet: &TheLnet, cookie: u64, discard: bool, status: i32) -> Result {
    let mut res = lnet.res.lock();
    loop {
        match res.md(cookie) {
            None => return Err(ENOENT),
            Some(md) if md.refcount == 0 && md.flags & flags::HANDLING != 0 => {
                lnet.handled.wait(&mut res)
            }
            Some(_) => break,
        }
    }
    let mut event = None;
    if let Some(md) = res.md(cookie) {
        md.flags |= flags::ABORTED;
        if discard {
            md.flags |= flags::DISCARD;
        }
        if let (Some(h), 0) = (md.handler, md.refcount) {
            let mut ev = lnet_event {
                type_: EventKind::Unlink as _,
                unlinked: 1,
                status,
                ..Default::default()
            };
            md.to_event(cookie, &mut ev);
            event = Some((h, ev));
        }
    }
    msg::detach_tracker(lnet, &mut res, cookie);
    res.md_unlink(cookie);
    drop(res);
    if let Some((h, mut ev)) = event {
        ev.sequence = lnet
            .event_seq
            .fetch_add(1, core::sync::atomic::Ordering::Relaxed) as _;
        // SAFETY: the caller's handler, called with no LNet lock held.
        unsafe { h(&mut ev) };
    }
    Ok(())
}

/// # Safety
///
/// As [`LNetPut`].
#[allow(clippy::too_many_arguments)]
unsafe fn request(
    self_: *mut lnet_nid,
    mdh: lnet_handle_md,
    target: *mut lnet_processid,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    put: Option<(u64, bool)>,
    timeout: c_int,
    recovery: bool,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    // SAFETY: `self_` is null or points to a NID and `target` to a process id (# Safety, as
    // LNetPut's), which opt_nid and as_ref need; a null `target` is refused.
    let (src, target) = match unsafe { (opt_nid(self_), target.as_ref()) } {
        (Ok(src), Some(t)) => match nid_from_c(&t.nid) {
            Ok(nid) if !nid.is_any() => (src, (nid, t.pid)),
            _ => return EINVAL.to_errno(),
        },
        _ => return EINVAL.to_errno(),
    };
    let r = Request {
        md: mdh.cookie,
        target: target.0,
        target_pid: target.1,
        src,
        portal,
        match_bits,
        offset,
        put: put.map(|(d, _)| d),
        ack: put.is_some_and(|(_, a)| a),
        timeout: u32::try_from(timeout).unwrap_or(0),
        recovery,
    };
    errno(crate::send::start(lnet, r))
}

/// # Safety
///
/// `self_` is null or a NID; `target` points to a process id.
#[no_mangle]
unsafe extern "C" fn LNetPut(
    self_: *mut lnet_nid,
    mdh: lnet_handle_md,
    ack: c_uint,
    target: *mut lnet_processid,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    hdr_data: u64,
) -> c_int {
    // SAFETY: the caller's pointers go on unchanged: `self_` is null or a NID
    // and `target` a process id (# Safety), LNetPutTimeout's contract.
    unsafe {
        LNetPutTimeout(
            self_, mdh, ack, target, portal, match_bits, offset, hdr_data, 0,
        )
    }
}

/// # Safety
///
/// As [`LNetPut`].
#[no_mangle]
unsafe extern "C" fn LNetPutTimeout(
    self_: *mut lnet_nid,
    mdh: lnet_handle_md,
    ack: c_uint,
    target: *mut lnet_processid,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    hdr_data: u64,
    timeout: c_int,
) -> c_int {
    let put = Some((hdr_data, ack == LNET_ACK_REQ));
    // SAFETY: `self_` is null or a NID and `target` a process id (# Safety, as
    // LNetPut's), request's contract.
    unsafe {
        request(
            self_, mdh, target, portal, match_bits, offset, put, timeout, false,
        )
    }
}

/// # Safety
///
/// As [`LNetPut`].
#[no_mangle]
unsafe extern "C" fn LNetGet(
    self_: *mut lnet_nid,
    mdh: lnet_handle_md,
    target: *mut lnet_processid,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    recovery: bool,
) -> c_int {
    // SAFETY: the caller's pointers go on unchanged: `self_` is null or a NID and `target` a
    // process id (# Safety, as LNetPut's), LNetGetTimeout's contract.
    unsafe { LNetGetTimeout(self_, mdh, target, portal, match_bits, offset, recovery, 0) }
}

/// # Safety
///
/// As [`LNetPut`].
#[no_mangle]
pub(crate) unsafe extern "C" fn LNetGetTimeout(
    self_: *mut lnet_nid,
    mdh: lnet_handle_md,
    target: *mut lnet_processid,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    recovery: bool,
    timeout: c_int,
) -> c_int {
    // SAFETY: `self_` is null or a NID and `target` a process id (# Safety, as
    // LNetPut's), request's contract.
    unsafe {
        request(
            self_, mdh, target, portal, match_bits, offset, None, timeout, recovery,
        )
    }
}

fn lazy_portal(portal: c_int, set: bool) -> Result {
    let lnet = lnet()?;
    let p = u32::try_from(portal)
        .ok()
        .filter(|p| *p < MAX_PORTALS)
        .ok_or(EINVAL)?;
    let mut res = lnet.res.lock();
    if set {
        res.lazy |= 1 << p;
    } else {
        res.lazy &= !(1 << p);
    }
    drop(res);
    if !set {
        crate::portal::drop_delayed(lnet, Some(p));
    }
    Ok(())
}

#[no_mangle]
extern "C" fn LNetSetLazyPortal(portal: c_int) -> c_int {
    errno(lazy_portal(portal, true))
}

#[no_mangle]
extern "C" fn LNetClearLazyPortal(portal: c_int) -> c_int {
    errno(lazy_portal(portal, false))
}

/// # Safety
///
/// `dst` points to a NID; `src` and `order` are null or writable.
#[no_mangle]
unsafe extern "C" fn LNetDist(dst: *mut lnet_nid, src: *mut lnet_nid, order: *mut u32) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    // SAFETY: `dst` points to a readable `struct lnet_nid` (# Safety); a null
    // one is refused.
    let Some(Ok(dst)) = (unsafe { dst.as_ref() }).map(nid_from_c) else {
        return EINVAL.to_errno();
    };
    let nis = lnet.nis.lock();
    let mut found = None;
    for (i, ni) in nis.nis.iter().enumerate() {
        if ni.nid == dst {
            // A local NID: local_nid_dist_zero (1, the default) makes it 0.
            found = Some((dst, i, 0));
            break;
        }
        if found.is_none() && ni.nid.net() == dst.net() && ni.is_active() {
            found = Some((ni.nid, i, 1));
        }
    }
    drop(nis);
    let Some((nid, i, hops)) = found else {
        return EHOSTUNREACH().to_errno();
    };
    // SAFETY: `src` and `order` are each null or writable (# Safety), a NID of
    // integers and a u32; the null ones are skipped.
    unsafe {
        if let Some(s) = src.as_mut() {
            *s = nid_to_c(&nid);
        }
        if let Some(o) = order.as_mut() {
            *o = i as u32;
        }
    }
    hops
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
/// stays.
///
/// # Safety
///
/// `nid` is null or points to a writable NID.
#[no_mangle]
unsafe extern "C" fn LNetPrimaryNID(nid: *mut lnet_nid) {
    // SAFETY: `nid` is null or points to a writable `struct lnet_nid`
    // (# Safety), a struct of integers.
    let Some(c) = (unsafe { nid.as_mut() }) else {
        return;
    };
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
/// `*nid` goes through `LNetPrimaryNID` as it is, as in Lustre.
///
/// # Safety
///
/// As [`LNetPrimaryNID`].
#[no_mangle]
unsafe extern "C" fn LNetLocalPrimaryNID(nid: *mut lnet_nid) {
    // SAFETY: `nid` is null or points to a writable `struct lnet_nid`
    // (# Safety, as LNetPrimaryNID's), a struct of integers.
    let Some(c) = (unsafe { nid.as_mut() }) else {
        return;
    };
    if let Ok(lnet) = lnet() {
        let nis = lnet.nis.lock();
        if let Some(ni) = nis.nis.iter().find(|ni| ni.nid != Nid::LO) {
            *c = nid_to_c(&ni.nid);
        }
    }
    // SAFETY: `nid` is still null or a writable NID (# Safety), LNetPrimaryNID's contract; `c`,
    // borrowed from it above, is not used again.
    unsafe { LNetPrimaryNID(nid) }
}

/// Whether sends to `nid` need wait no longer for discovery
/// (`LNetPeerDiscovered`, see discovery.rs), or -ENETRESET when its peer
/// cannot be had (LNet down). The peer is made as traffic would make it,
/// as in Lustre.
///
/// # Safety
///
/// `nid` is null or points to a NID.
#[no_mangle]
unsafe extern "C" fn LNetPeerDiscovered(nid: *mut lnet_nid) -> c_int {
    // SAFETY: `nid` is null or points to a readable `struct lnet_nid`
    // (# Safety).
    let Some(Ok(n)) = (unsafe { nid.as_ref() }).map(nid_from_c) else {
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
/// is made if unknown, as in Lustre.
///
/// # Safety
///
/// `id` is null or points to a process id.
#[no_mangle]
unsafe extern "C" fn LNetDebugPeer(id: *mut lnet_processid) {
    // SAFETY: `id` is null or points to a readable `struct lnet_processid`
    // (# Safety).
    let Some(id) = (unsafe { id.as_ref() }) else {
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
/// LNet is not running, as Lustre.
///
/// # Safety
///
/// `out` is null or points to writable memory for one
/// `struct lnet_counters`.
#[no_mangle]
unsafe extern "C" fn lnet_counters_get(out: *mut lnet_counters) -> c_int {
    // SAFETY: `out` is null or points to writable memory for one `struct lnet_counters` (# Safety),
    // integers only, so any bytes there are a valid value.
    let Some(o) = (unsafe { out.as_mut() }) else {
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

// ---- The LND interface ----

/// # Safety
///
/// `lnd` is a static operations table that stays registered until
/// `lnet_unregister_lnd`.
#[no_mangle]
unsafe extern "C" fn lnet_register_lnd(lnd: *const lnet_lnd) -> c_int {
    let (Ok(lnet), Some(r)) = (lnet(), LndRef::new(lnd)) else {
        return EINVAL.to_errno();
    };
    errno(startup::register_lnd(lnet, r))
}

/// # Safety
///
/// As [`lnet_register_lnd`].
#[no_mangle]
unsafe extern "C" fn lnet_unregister_lnd(lnd: *const lnet_lnd) {
    if let (Ok(lnet), Some(r)) = (lnet(), LndRef::new(lnd)) {
        startup::unregister_lnd(lnet, r);
    }
}

/// # Safety
///
/// `ni` is an NI LNet started and has not shut down.
unsafe fn ni_ref<'a>(ni: *mut lnet_ni) -> Option<&'a Ni> {
    // SAFETY: `ni` is null or a started NI (# Safety): LNDs only get NIs from Ni::as_c, the address
    // of an `Ni` that LNet's Arc keeps alive until shutdown; only shared references are made to it.
    unsafe { ni.cast::<Ni>().cast_const().as_ref() }
}

/// # Safety
///
/// `ni` is a started NI; `nid` points to writable memory.
#[no_mangle]
unsafe extern "C" fn lnet_ni_nid(ni: *mut lnet_ni, nid: *mut lnet_nid) {
    // SAFETY: `ni` is a started NI, as ni_ref needs, and `nid` points to
    // writable memory for a `struct lnet_nid` (# Safety; null is skipped).
    if let (Some(ni), Some(out)) = unsafe { (ni_ref(ni), nid.as_mut()) } {
        *out = nid_to_c(&ni.nid);
    }
}

/// # Safety
///
/// `ni` is a started NI.
#[no_mangle]
unsafe extern "C" fn lnet_ni_set_data(ni: *mut lnet_ni, data: *mut c_void) {
    // SAFETY: `ni` is a started NI (# Safety), as ni_ref needs.
    if let Some(ni) = unsafe { ni_ref(ni) } {
        ni.data.store(data, core::sync::atomic::Ordering::Release);
    }
}

/// # Safety
///
/// `ni` is a started NI.
#[no_mangle]
unsafe extern "C" fn lnet_ni_data(ni: *mut lnet_ni) -> *mut c_void {
    // SAFETY: `ni` is a started NI (# Safety), as ni_ref needs.
    match unsafe { ni_ref(ni) } {
        Some(ni) => ni.data.load(core::sync::atomic::Ordering::Acquire),
        None => core::ptr::null_mut(),
    }
}

/// # Safety
///
/// `ni` is a started NI.
#[no_mangle]
unsafe extern "C" fn lnet_ni_iface(ni: *mut lnet_ni) -> *const kernel::ffi::c_char {
    // SAFETY: `ni` is a started NI (# Safety), as ni_ref needs.
    match unsafe { ni_ref(ni) } {
        Some(ni) => ni.iface.as_ptr().cast(),
        None => c"".as_ptr().cast(),
    }
}

/// The LND's startup completes the NI's tunables with its defaults
/// (`lnet_ni_default_tunables`); `t` gets the values the NI runs with.
///
/// # Safety
///
/// `ni` is an NI being started; `t` points to a writable struct.
#[no_mangle]
pub(crate) unsafe extern "C" fn lnet_ni_default_tunables(
    ni: *mut lnet_ni,
    t: *mut lnet_ni_tunables,
) {
    // SAFETY: `ni` is the NI whose lnd_startup runs, an `Ni` LNet holds meanwhile (as ni_ref
    // needs), and `t` points to a writable `struct lnet_ni_tunables` (# Safety; null is refused).
    let (Some(ni), Some(t)) = (unsafe { ni_ref(ni) }, unsafe { t.as_mut() }) else {
        return;
    };
    let lnd = NetTunables {
        peer_timeout: t.peer_timeout,
        peer_credits: t.peer_credits,
        peer_buffer_credits: t.peer_buffer_credits,
        credits: t.credits,
    };
    let r = ni.net_tunables().with_defaults(&lnd);
    ni.set_net_tunables(&r);
    let own = &ni.tunables;
    own.conns_per_peer.store(t.conns_per_peer, Relaxed);
    own.lnd_timeout.store(t.timeout, Relaxed);
    own.tos.store(t.tos, Relaxed);
    let o2ib = [
        t.peercredits_hiw,
        t.map_on_demand,
        t.concurrent_sends,
        t.fmr_pool_size,
        t.fmr_flush_trigger,
        t.fmr_cache,
        t.ntx,
    ];
    for (cell, v) in own.o2ib.iter().zip(o2ib) {
        cell.store(v, Relaxed);
    }
    t.peer_timeout = r.peer_timeout;
    t.peer_credits = r.peer_credits;
    t.peer_buffer_credits = r.peer_buffer_credits;
    t.credits = r.credits;
}

/// LNet's derived LND timeout in seconds (`lnet_get_lnd_timeout`).
#[no_mangle]
extern "C" fn lnet_get_lnd_timeout() -> c_uint {
    crate::params::snapshot().lnd_timeout
}

/// The LND saw the NI's link fail (`fatal` non-zero) or come back
/// (`lnet_set_link_fatal_state`, health.md §8). Only an atomic store: LNDs
/// call it from notifiers and event handlers.
///
/// # Safety
///
/// `ni` is a started NI.
#[no_mangle]
unsafe extern "C" fn lnet_set_link_fatal_state(ni: *mut lnet_ni, fatal: c_uint) {
    // SAFETY: `ni` is a started NI (# Safety), as ni_ref needs.
    let Some(ni) = (unsafe { ni_ref(ni) }) else {
        return;
    };
    let fatal = fatal != 0;
    if ni.fatal.swap(fatal, core::sync::atomic::Ordering::Relaxed) == fatal {
        return;
    }
    pr_info!(
        "{}: link {}\n",
        ni.nid,
        if fatal { "down, NI marked fatal" } else { "up" }
    );
    if let Some(lnet) = TheLnet::get() {
        lnet.ping_update
            .store(true, core::sync::atomic::Ordering::Relaxed);
    }
}

/// # Safety
///
/// `ni` is a started NI, `hdr` points to `hdr_len` bytes, `from` to a NID.
#[no_mangle]
unsafe extern "C" fn lnet_parse(
    ni: *mut lnet_ni,
    hdr: *const c_void,
    hdr_len: c_uint,
    from: *const lnet_nid,
    private: *mut c_void,
    rdma_req: c_int,
) -> c_int {
    // lnd.h's contract: process context, no LND lock held.
    crate::kapi::kthread::might_sleep();
    if hdr.is_null() || from.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `hdr` and `from` are non-null (checked above), so by # Safety `hdr` points to
    // `hdr_len` readable bytes and `from` to a NID; `ni` is a started NI, as lnet_parse_rs needs.
    unsafe {
        let bytes = core::slice::from_raw_parts(hdr.cast::<u8>(), hdr_len as usize);
        lnet_parse_rs(ni, bytes, &*from, private, rdma_req != 0)
    }
}

/// `lnet_parse` with the header as a slice.
///
/// # Safety
///
/// `ni` is a started NI.
pub(crate) unsafe fn lnet_parse_rs(
    ni: *mut lnet_ni,
    hdr: &[u8],
    from: &lnet_nid,
    private: *mut c_void,
    rdma_req: bool,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    let Ok(from) = nid_from_c(from) else {
        return EINVAL.to_errno();
    };
    // SAFETY: `ni` is a started NI (# Safety), as ni_ref needs.
    let Some(ni) = (unsafe { ni_ref(ni) }) else {
        return EINVAL.to_errno();
    };
    let Some(ni) = startup::ni_arc(lnet, ni) else {
        return ENETDOWN().to_errno();
    };
    crate::parse::parse(lnet, &ni, hdr, from, private, rdma_req)
}

/// # Safety
///
/// `m` is a message LNet gave the LND (to send or to receive into) and it
/// has not been finalized yet.
#[no_mangle]
pub(crate) unsafe extern "C" fn lnet_finalize(m: *mut lnet_msg, status: c_int, hstatus: c_uint) {
    // lnd.h's contract, whatever the message (a discarded receive has none).
    crate::kapi::kthread::might_sleep();
    let Ok(lnet) = lnet() else {
        return;
    };
    if m.is_null() {
        return;
    }
    let hs = Status::from_u32(hstatus).unwrap_or(Status::LocalError);
    // SAFETY: `m` is non-null and a message LNet gave the LND through Msg::into_c, not yet
    // finalized (# Safety); the LND gives it up with this call, so the box is ours again.
    let m = unsafe { msg::Msg::from_c(m) };
    msg::finalize(lnet, m, status, hs);
}

/// # Safety
///
/// `get` is a GET message LNet handed the LND in `lnd_send`, not yet
/// finalized; the out pointers are valid for writes.
#[no_mangle]
unsafe extern "C" fn lnet_create_reply_msg(
    _ni: *mut lnet_ni,
    get: *mut lnet_msg,
    niov: *mut c_uint,
    kiov: *mut *mut bio_vec,
    len: *mut c_uint,
) -> *mut lnet_msg {
    let Ok(lnet) = lnet() else {
        return core::ptr::null_mut();
    };
    if get.is_null() || niov.is_null() || kiov.is_null() || len.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: `get` is non-null, a GET LNet handed the LND and not finalized (# Safety); LNet keeps
    // no reference, so the LND's is the only one.
    let g = unsafe { &mut *get.cast::<msg::Msg>() };
    let Some((m, k, n, l)) = crate::parse::create_reply(lnet, g) else {
        return core::ptr::null_mut();
    };
    // SAFETY: `niov`, `kiov` and `len` are non-null (checked above) and valid
    // for writes (# Safety).
    unsafe {
        *niov = n;
        *kiov = k.cast();
        *len = l;
    }
    msg::Msg::into_c(m)
}

/// # Safety
///
/// `reply` came from `lnet_create_reply_msg` and is not finalized yet.
#[no_mangle]
unsafe extern "C" fn lnet_set_reply_msg_len(
    _ni: *mut lnet_ni,
    reply: *mut lnet_msg,
    len: c_uint,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    if reply.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `reply` is non-null, from lnet_create_reply_msg and not finalized (# Safety); LNet
    // keeps no reference, so the LND's is the only one.
    let m = unsafe { &mut *reply.cast::<msg::Msg>() };
    if crate::parse::set_reply_len(lnet, m, len) {
        0
    } else {
        EPROTO().to_errno()
    }
}

/// The health status LNet gives a message whose `lnd_send` the LND is
/// about to refuse (Lustre's LNDs set `msg_health_status` the same way).
///
/// # Safety
///
/// `m` is a message LNet is handing the LND in `lnd_send`, not finalized.
#[no_mangle]
pub(crate) unsafe extern "C" fn lnet_msg_set_hstatus(m: *mut lnet_msg, hstatus: c_uint) {
    if m.is_null() {
        return;
    }
    let hs = Status::from_u32(hstatus).unwrap_or(Status::LocalError);
    // SAFETY: `m` is non-null, a message LNet hands the LND in lnd_send and not finalized (#
    // Safety); lnd_send reads `lnd_hstatus` only after the LND returns.
    unsafe { (*m.cast::<msg::Msg>()).lnd_hstatus = hs };
}
