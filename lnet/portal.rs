// SPDX-License-Identifier: GPL-2.0

//! Portals and matching (Lustre's lib-ptl.c): an incoming request against
//! a portal's match entries and MDs, and lazy portals' delayed messages,
//! which wait for an MD to be attached.

use crate::kapi::kiov::BioVec;
use crate::kapi::vec;
use crate::lnet_core::hdr::{Hdr, MsgBody};
use crate::lnet_core::md::{self as core_md, Incoming, Match, Op};
use crate::lnet_core::nid::Nid;
use crate::msg::Msg;
use crate::ni::Ni;
use crate::parse::{drop_incoming, receive_request};
use crate::state::{Res, TheLnet, MAX_PORTALS};
use core::ffi::c_void;
use kernel::alloc::KBox;
use kernel::sync::Arc;

/// Why an incoming request found no MD.
pub(crate) enum Miss {
    /// No ME/MD matched: on a lazy portal the message waits for one.
    NoMatch,
    /// The message is dropped, for this reason.
    Drop(&'static str),
}

/// The portal and the matching view of an incoming PUT or GET from
/// `initiator` (MEs match the peer's primary NID, not the rail's).
pub(crate) fn request_of(hdr: &Hdr, initiator: Nid) -> (u32, Incoming) {
    let (op, portal, match_bits, roffset, rlength) = match hdr.msg {
        MsgBody::Put {
            ptl_index,
            offset,
            match_bits,
            ..
        } => (Op::Put, ptl_index, match_bits, offset, hdr.payload_length),
        MsgBody::Get {
            ptl_index,
            src_offset,
            sink_length,
            match_bits,
            ..
        } => (Op::Get, ptl_index, match_bits, src_offset, sink_length),
        _ => (Op::Put, MAX_PORTALS, 0, 0, 0),
    };
    let inc = Incoming {
        op,
        src_nid: initiator,
        src_pid: hdr.src_pid,
        match_bits,
        rlength,
        roffset,
    };
    (portal, inc)
}

/// Matches an incoming request against the portal's MEs
/// (`lnet_ptl_match_md`) and commits it to the MD found. Returns the MD
/// cookie, offset and length.
pub(crate) fn match_request(
    res: &mut Res,
    portal: u32,
    inc: &Incoming,
) -> core::result::Result<(u64, u32, u32), Miss> {
    if portal >= MAX_PORTALS {
        return Err(Miss::Drop("invalid portal"));
    }
    let mut found = None;
    for (&(p, _), &me_cookie) in res.ptl.iter() {
        if p != portal {
            continue;
        }
        let Some(me) = res.mes.get(&me_cookie) else {
            continue;
        };
        let Some(md_cookie) = me.md else {
            continue;
        };
        match try_md(res, &me.entry, md_cookie, inc) {
            Match::No | Match::Exhausted => continue,
            Match::TooBig { .. } => return Err(Miss::Drop("request too long for the matching MD")),
            Match::OffsetBeyond { .. } => return Err(Miss::Drop("offset beyond the matching MD")),
            Match::Yes { offset, mlength } => {
                found = Some((md_cookie, offset, mlength));
                break;
            }
        }
    }
    let (cookie, offset, mlength) = found.ok_or(Miss::NoMatch)?;
    commit(res, cookie, offset, mlength);
    Ok((cookie, offset, mlength))
}

fn try_md(res: &Res, entry: &core_md::MatchEntry, md_cookie: u64, inc: &Incoming) -> Match {
    match res.mds.get(&md_cookie).filter(|md| !md.is_zombie()) {
        Some(md) => core_md::try_match(entry, &md.state, inc),
        None => Match::No,
    }
}

fn commit(res: &mut Res, cookie: u64, offset: u32, mlength: u32) {
    if let Some(md) = res.mds.get_mut(&cookie) {
        md.state.commit(offset, mlength);
        md.refcount += 1;
    }
}

/// An incoming request waiting on a lazy portal for an MD
/// (`LNetSetLazyPortal`). The LND holds its payload until asked for it.
///
/// `private` is the LND's receive context, which it may have given as an
/// owned reference (ksocklnd: its connection): it goes back through
/// exactly one `lnd_recv`, when an MD takes the message
/// ([`attach_delayed`]) or it is dropped ([`drop_delayed`],
/// [`drop_delayed_on`]); never by just freeing this.
///
/// # Invariants
///
/// `private` is the context `ni`'s LND gave `lnet_parse` with `msg`, not
/// yet handed back by `lnd_recv`.
pub(crate) struct Delayed {
    pub(crate) msg: KBox<Msg>,
    pub(crate) ni: Arc<Ni>,
    pub(crate) private: *mut c_void,
    pub(crate) from: Nid,
    pub(crate) portal: u32,
}

// SAFETY: the message is `Send`, and the LND's private pointer (the type
// invariant) is not tied to a thread: the LND expects lnd_recv from any
// thread.
unsafe impl Send for Delayed {}

impl Delayed {
    fn hdr(&self) -> &Hdr {
        &self.msg.hdr
    }

    fn initiator(&self) -> Nid {
        self.msg.initiator
    }
}

/// The parts of a matched MD a receive needs.
pub(crate) struct MdView {
    pub(crate) kiov: *mut BioVec,
    pub(crate) niov: u32,
    pub(crate) ack_disabled: bool,
}

pub(crate) fn md_view(res: &Res, cookie: u64) -> MdView {
    match res.mds.get(&cookie) {
        Some(md) => MdView {
            kiov: md.kiov.as_ptr().cast_mut(),
            niov: md.kiov.len() as u32,
            ack_disabled: md.state.options & core_md::options::ACK_DISABLE != 0,
        },
        None => MdView {
            kiov: core::ptr::null_mut(),
            niov: 0,
            ack_disabled: true,
        },
    }
}

/// A new MD on a lazy portal takes the messages waiting there that it
/// matches, in arrival order (`lnet_ptl_attach_md`).
pub(crate) fn attach_delayed(lnet: &TheLnet, portal: u32, me_cookie: u64, md_cookie: u64) {
    let mut i = 0;
    loop {
        let mut res = lnet.res.lock();
        let Some(entry) = res.mes.get(&me_cookie).map(|me| me.entry) else {
            return;
        };
        let mut action = None;
        while let Some(d) = res.delayed.as_slice().get(i) {
            if d.portal != portal {
                i += 1;
                continue;
            }
            let (_, inc) = request_of(d.hdr(), d.initiator());
            match try_md(&res, &entry, md_cookie, &inc) {
                Match::No => i += 1,
                Match::Exhausted => return,
                Match::Yes { offset, mlength } => {
                    action = Some(Some((offset, mlength)));
                    break;
                }
                Match::TooBig { .. } | Match::OffsetBeyond { .. } => {
                    action = Some(None);
                    break;
                }
            }
        }
        let Some(action) = action else {
            return;
        };
        let Some(d) = vec::remove(&mut res.delayed, i) else {
            return;
        };
        let m = d.msg;
        match action {
            Some((offset, mlength)) => {
                commit(&mut res, md_cookie, offset, mlength);
                let view = md_view(&res, md_cookie);
                drop(res);
                receive_request(
                    lnet, &d.ni, m, md_cookie, view, offset, mlength, d.from, d.private, true,
                );
            }
            None => {
                drop(res);
                let hdr = m.hdr;
                Msg::free(lnet, m);
                drop_incoming(
                    lnet,
                    &d.ni,
                    d.private,
                    hdr.payload_length,
                    "bad match",
                    &hdr,
                );
            }
        }
    }
}

/// Drops the messages waiting on `portal`, or on every portal.
pub(crate) fn drop_delayed(lnet: &TheLnet, portal: Option<u32>) {
    drop_delayed_where(lnet, "lazy portal cleared", |d| {
        portal.map_or(true, |p| d.portal == p)
    });
}

/// Drops the messages `ni` received that wait on a lazy portal, before
/// its LND stops: each goes back to the LND (`lnd_recv` with no message),
/// which releases what it holds for it (`lnet_clear_lazy_portal` of the
/// NI's messages, as Lustre's `lnet_shutdown_lndni`).
pub(crate) fn drop_delayed_on(lnet: &TheLnet, ni: &Arc<Ni>) {
    drop_delayed_where(lnet, "its NI is going away", |d| Arc::ptr_eq(&d.ni, ni));
}

fn drop_delayed_where(lnet: &TheLnet, why: &str, which: impl Fn(&Delayed) -> bool) {
    loop {
        let mut res = lnet.res.lock();
        let i = res.delayed.iter().position(&which);
        let Some(d) = i.and_then(|i| vec::remove(&mut res.delayed, i)) else {
            return;
        };
        drop(res);
        let m = d.msg;
        let hdr = m.hdr;
        Msg::free(lnet, m);
        drop_incoming(lnet, &d.ni, d.private, hdr.payload_length, why, &hdr);
    }
}
