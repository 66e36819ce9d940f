// SPDX-License-Identifier: GPL-2.0

//! The C entry points upper layers call to move data (include/linux/lnet/api.h):
//! match entries and memory descriptors, LNetPut and LNetGet, lazy portals,
//! as Lustre's lib-me.c, lib-md.c and lib-move.c export them. The node and
//! peer queries are `api_ni.rs`, the LND side `lnd.rs`. Each entry point
//! checks and converts its arguments and calls into the rest of the module.

use crate::kapi::bindings::{lnet_event, lnet_handle_md, lnet_nid, lnet_processid};
use crate::kapi::errno::*;
use crate::kapi::ffi::MdArg;
use crate::lnet_core::md::{options, EventKind, MatchEntry};
use crate::lnet_core::nid::Nid;
use crate::md::{flags, Handler, LibMd};
use crate::msg;
use crate::send::Request;
use crate::state::{Me, TheLnet, MAX_PORTALS};
use core::ffi::{c_int, c_uint};
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
pub(crate) fn opt_nid(p: Option<&lnet_nid>) -> Result<Nid> {
    match p {
        None => Ok(Nid::ANY),
        Some(c) => nid_from_c(c),
    }
}

pub(crate) fn errno(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

pub(crate) fn lnet() -> Result<&'static TheLnet> {
    TheLnet::get().ok_or(ENETDOWN())
}

/// Brings LNet up on the first call; later calls only count.
fn err_ptr<T>(e: Error) -> *mut T {
    e.to_errno() as isize as *mut T
}

/// Creates a match entry on `portal` (`LNetMEAttach`). The returned pointer
/// is a handle: it is only compared and passed back, never dereferenced.
/// `match_id` is the C caller's pointer, null or a process id it does not
/// write during the call (null is refused: Lustre dereferences it).
#[no_mangle]
pub(crate) extern "C" fn LNetMEAttach(
    portal: c_uint,
    match_id: Option<&lnet_processid>,
    match_bits: u64,
    ignore_bits: u64,
    unlink: c_uint,
    pos: c_uint,
) -> *mut lnet_me {
    let attached = lnet().and_then(|lnet| {
        let Some(id) = match_id else {
            // Lustre's callers always pass one (LNET_ANY_NID and
            // LNET_PID_ANY for anyone); its LNetMEAttach would oops on NULL.
            crate::cerror!("LNetMEAttach: NULL match id\n");
            return Err(EINVAL);
        };
        let id = (nid_from_c(&id.nid)?, id.pid);
        me_attach(
            lnet,
            portal,
            id,
            match_bits,
            ignore_bits,
            unlink == LNET_UNLINK,
            pos == LNET_INS_BEFORE,
        )
    });
    match attached {
        Ok(cookie) => cookie as usize as *mut lnet_me,
        Err(e) => err_ptr(e),
    }
}

/// Creates a match entry for `(nid, pid)` on `portal`, first or last
/// (`before`); `unlink`: it goes with its MD. Its cookie.
pub(crate) fn me_attach(
    lnet: &TheLnet,
    portal: c_uint,
    (nid, pid): (Nid, u32),
    match_bits: u64,
    ignore_bits: u64,
    unlink: bool,
    before: bool,
) -> Result<u64> {
    if portal >= MAX_PORTALS {
        crate::cerror!(
            "LNetMEAttach: portal {} out of range (max {})\n",
            portal,
            MAX_PORTALS - 1
        );
        return Err(EINVAL);
    }
    let cookie = lnet.cookie();
    let position = lnet.me_pos(before);
    let me = Me {
        portal,
        pos: position,
        entry: MatchEntry {
            nid,
            pid,
            match_bits,
            ignore_bits,
        },
        unlink,
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

/// Attaches an MD to a match entry (`LNetMDAttach`). `umd` is the C
/// caller's description ([`MdArg`]); `handle`, null or the caller's
/// writable `struct lnet_handle_md`, gets the MD's handle. A raw pointer,
/// not `&mut`: the caller's event handler may read the handle before this
/// returns (a delayed message matching the MD), which a reference held for
/// the whole call would forbid.
///
/// # Safety
///
/// `handle` is null or points to a `struct lnet_handle_md` the caller
/// lets this call write.
#[no_mangle]
pub(crate) unsafe extern "C" fn LNetMDAttach(
    me: *mut lnet_me,
    umd: MdArg<'_>,
    unlink: c_uint,
    handle: *mut lnet_handle_md,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    let me_cookie = me as usize as u64;
    let attached = match build_md(&umd, unlink, true) {
        // The handle is the caller's before a delayed message may match
        // the MD: its events may come before this returns.
        Ok(md) => md_attach(lnet, me_cookie, md, |cookie| {
            // SAFETY: `handle` is null or writable (# Safety); the reference
            // lives for this one store.
            if let Some(h) = unsafe { handle.as_mut() } {
                h.cookie = cookie;
            }
        }),
        Err(e) => {
            // The ME goes with a failed attach, as in Lustre.
            lnet.res.lock().me_remove(me_cookie);
            Err(e)
        }
    };
    errno(attached.map(|_| ()))
}

/// Attaches `md` to the match entry `me_cookie` (`LNetMDAttach`); its
/// cookie, which `published` gets first, before messages waiting on a
/// lazy portal may match the MD (and end it). A failed attach takes the
/// ME away, as in Lustre.
pub(crate) fn md_attach(
    lnet: &TheLnet,
    me_cookie: u64,
    mut md: LibMd,
    published: impl FnOnce(u64),
) -> Result<u64> {
    let cookie = lnet.cookie();
    md.me = Some(me_cookie);
    let node = RBTreeNode::new(cookie, md, GFP_KERNEL);
    let mut res = lnet.res.lock();
    let node = match node {
        Ok(n) => n,
        Err(e) => {
            res.me_remove(me_cookie);
            return Err(e);
        }
    };
    if !lnet.is_running() {
        res.me_remove(me_cookie);
        return Err(ESHUTDOWN());
    }
    let portal = match res.mes.get_mut(&me_cookie) {
        Some(m) if m.md.is_none() => {
            m.md = Some(cookie);
            m.portal
        }
        _ => {
            crate::cerror!("LNetMDAttach: no such ME, or it already has an MD\n");
            return Err(EINVAL);
        }
    };
    res.mds.insert(node);
    drop(res);
    published(cookie);
    crate::portal::attach_delayed(lnet, portal, me_cookie, cookie);
    Ok(cookie)
}

/// Makes a free-standing MD (`LNetMDBind`); the arguments as
/// [`LNetMDAttach`]'s.
#[no_mangle]
pub(crate) extern "C" fn LNetMDBind(
    umd: MdArg<'_>,
    unlink: c_uint,
    handle: Option<&mut lnet_handle_md>,
) -> c_int {
    let Ok(lnet) = lnet() else {
        return ENETDOWN().to_errno();
    };
    match build_md(&umd, unlink, false).and_then(|md| md_bind(lnet, md)) {
        Ok(cookie) => {
            if let Some(h) = handle {
                h.cookie = cookie;
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Makes `md` a free-standing MD for a GET or PUT (`LNetMDBind`); its
/// cookie.
pub(crate) fn md_bind(lnet: &TheLnet, md: LibMd) -> Result<u64> {
    if md.state.length > crate::lnet_core::hdr::LNET_MTU {
        crate::cerror!(
            "Invalid length: too big transfer size {}, {} max\n",
            md.state.length,
            crate::lnet_core::hdr::LNET_MTU
        );
        return Err(EINVAL);
    }
    let cookie = lnet.cookie();
    let node = RBTreeNode::new(cookie, md, GFP_KERNEL)?;
    let mut res = lnet.res.lock();
    if !lnet.is_running() {
        return Err(ESHUTDOWN());
    }
    res.mds.insert(node);
    Ok(cookie)
}

/// The MD `arg` describes; a null one is refused.
fn build_md(arg: &MdArg<'_>, unlink: c_uint, attach: bool) -> Result<LibMd> {
    let umd = arg.get().ok_or(EINVAL)?;
    let ops = umd.umd_options & (options::OP_PUT | options::OP_GET);
    if attach && ops == 0 {
        crate::cerror!("Invalid option: no MD_OP set\n");
        return Err(EINVAL);
    }
    if !attach && ops != 0 {
        crate::cerror!("Invalid option: GET|PUT illegal on active MDs\n");
        return Err(EINVAL);
    }
    LibMd::build(arg, unlink == LNET_UNLINK)
}

/// Unlinks an MD (`__LNetMDUnlink`); see include/linux/lnet/api.h.
#[no_mangle]
extern "C" fn __LNetMDUnlink(h: lnet_handle_md, discard: bool) -> c_int {
    errno(lnet().and_then(|l| md_unlink(l, h.cookie, discard, 0)))
}

/// Unlinks an MD (`LNetMDUnlink`, the form Lustre exports today).
#[no_mangle]
extern "C" fn LNetMDUnlink(h: lnet_handle_md) -> c_int {
    errno(lnet().and_then(|l| md_unlink(l, h.cookie, false, 0)))
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
        if let (Some(sink), 0) = (md.sink(), md.refcount) {
            let mut ev = lnet_event {
                type_: EventKind::Unlink as _,
                unlinked: 1,
                status,
                ..Default::default()
            };
            md.to_event(cookie, &mut ev);
            event = Some((sink, ev));
        }
    }
    msg::detach_tracker(lnet, &mut res, cookie);
    res.md_unlink(cookie);
    drop(res);
    if let Some((sink, mut ev)) = event {
        ev.sequence = lnet
            .event_seq
            .fetch_add(1, core::sync::atomic::Ordering::Relaxed) as _;
        // No LNet spinlock held (shutdown and `net del` hold the `api`
        // mutex: see state.rs).
        sink.deliver(lnet, &mut ev);
    }
    Ok(())
}

/// The body of LNetPut and LNetGet; a null `target` is refused.
#[allow(clippy::too_many_arguments)]
fn request(
    self_: Option<&lnet_nid>,
    mdh: lnet_handle_md,
    target: Option<&lnet_processid>,
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
    let (src, target) = match (opt_nid(self_), target) {
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

/// Starts a PUT (`LNetPut`). `self_` and `target` are the C caller's
/// pointers, each null or a value it does not write during the call.
#[no_mangle]
extern "C" fn LNetPut(
    self_: Option<&lnet_nid>,
    mdh: lnet_handle_md,
    ack: c_uint,
    target: Option<&lnet_processid>,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    hdr_data: u64,
) -> c_int {
    let put = Some((hdr_data, ack == LNET_ACK_REQ));
    request(
        self_, mdh, target, portal, match_bits, offset, put, 0, false,
    )
}

/// [`LNetPut`] with a response deadline (`timeout` seconds).
#[no_mangle]
extern "C" fn LNetPutTimeout(
    self_: Option<&lnet_nid>,
    mdh: lnet_handle_md,
    ack: c_uint,
    target: Option<&lnet_processid>,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    hdr_data: u64,
    timeout: c_int,
) -> c_int {
    let put = Some((hdr_data, ack == LNET_ACK_REQ));
    request(
        self_, mdh, target, portal, match_bits, offset, put, timeout, false,
    )
}

/// Starts a GET (`LNetGet`); the arguments as [`LNetPut`]'s.
#[no_mangle]
extern "C" fn LNetGet(
    self_: Option<&lnet_nid>,
    mdh: lnet_handle_md,
    target: Option<&lnet_processid>,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    recovery: bool,
) -> c_int {
    request(
        self_, mdh, target, portal, match_bits, offset, None, 0, recovery,
    )
}

/// [`LNetGet`] with a response deadline (`timeout` seconds).
#[no_mangle]
extern "C" fn LNetGetTimeout(
    self_: Option<&lnet_nid>,
    mdh: lnet_handle_md,
    target: Option<&lnet_processid>,
    portal: c_uint,
    match_bits: u64,
    offset: c_uint,
    recovery: bool,
    timeout: c_int,
) -> c_int {
    request(
        self_, mdh, target, portal, match_bits, offset, None, timeout, recovery,
    )
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
