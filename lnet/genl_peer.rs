// SPDX-License-Identifier: GPL-2.0

//! The peer commands of Lustre's `lnet` generic netlink family, which
//! Lustre's lnetctl tries before its ioctls: `peer show` (a dump of
//! `LNET_CMD_PEERS`), `ping` (a dump of `LNET_CMD_PING`) and `discover`
//! (an `LNET_CMD_PING` request with a multi-part reply) and `lctl
//! which_nid` (a dump of `LNET_CMD_PEER_DIST`). The values are
//! those our own ioctls report (dev.rs `fill_peer`, `fill_peer_ni`;
//! ping.rs; discovery.rs), so both lnetctls print the same. Requests are
//! checked by lnet-core's `lnet_nl_peer` before anything is done.
//!
//! `peer add|del|set` (`LNET_CMD_PEERS` as a request) are checked whole
//! by lnet-core's `peer_cmd`, then applied peer by peer with the functions
//! our own ioctls use (dev.rs `peer_add`, `peer_del`, `set_peer_health`).

use crate::genl::{with_msg, MSG_BUF, NLM_F_DUMP_FILTERED};
use crate::kapi::bindings::{lnet_ioc_peer, lnet_ioc_peer_ni};
use crate::kapi::errno as kerrno;
use crate::kapi::genl::Dump;
use crate::lnet_core::lnet_nl::{self, cmd, nlm, NlError, NlWriter};
use crate::lnet_core::lnet_nl_peer::{
    self as np, show as ps, PeerAction, PeerFilter, PingRequest, Target,
};
use crate::lnet_core::nid::Nid;
use crate::state::TheLnet;
use kernel::fmt;
use kernel::prelude::*;
use kernel::str::CString;

const NOMEM: NlError = NlError::bare(lnet_nl::errno::ENOMEM);
/// The buffer of one `peer show` message: as large as a netlink attribute
/// (a peer NI at `-v 4` takes about 500 bytes).
const PEER_BUF: usize = u16::MAX as usize;

fn down() -> NlError {
    with_msg(kerrno::ENETDOWN(), c"Network is down")
}

fn is_up() -> bool {
    TheLnet::get().is_some_and(|l| l.is_running())
}

fn nid_text(n: &Nid) -> Result<CString, NlError> {
    CString::try_from_fmt(fmt!("{}", n)).map_err(|_| NOMEM)
}

/// `peer show`'s start: LNet must be up and any `--nid` must parse.
pub(crate) fn peer_show_start(attrs: &[u8]) -> Result<u64, NlError> {
    if !is_up() {
        return Err(down());
    }
    PeerFilter::new(attrs)?;
    Ok(0)
}

/// Which peer the dump shows `k`th (from 0): the `k`th in the list, or
/// the peer of the `k`th NID asked for; `Ok(None)` past the last.
fn peer_at(lnet: &TheLnet, dump: &Dump, k: usize) -> Result<Option<usize>, NlError> {
    match PeerFilter::new(dump.attrs())? {
        None => Ok(Some(k)),
        Some(f) => match f.nth(k) {
            None => Ok(None),
            Some(nid) => {
                let found = lnet.peers.lock().find(&nid).map(|(pi, _)| pi);
                match found {
                    Some(pi) => Ok(Some(pi)),
                    None => Err(NlError::new(lnet_nl::errno::ENOENT, c"cannot find peer")),
                }
            }
        },
    }
}

/// `peer show`: the key table, then a message per peer. The dump state is
/// the next peer's position plus one (0 before the key table). Returns
/// whether more is left for the next call.
pub(crate) fn peer_show(lnet: &TheLnet, dump: &mut Dump) -> Result<bool, NlError> {
    let mut k = usize::try_from(dump.state()).unwrap_or(usize::MAX);
    let mut wrote = false;
    // A message is written whole here, then appended: the largest one
    // netlink takes.
    let mut buf = KVVec::from_elem(0u8, PEER_BUF, GFP_KERNEL).map_err(|_| NOMEM)?;
    if k == 0 {
        let filtered = PeerFilter::new(dump.attrs())?.is_some();
        let first = peer_at(lnet, dump, 0);
        let none = match first {
            Ok(Some(pi)) => lnet.peers.lock().list.get(pi).is_none(),
            Ok(None) => true,
            // The named peer is missing: told below, after the keys.
            Err(_) => false,
        };
        if none {
            // lnetctl stays silent on this message when it asked for every
            // peer; a NID it named is an error.
            dump.set_err_msg(c"No peers found");
            return if filtered {
                Err(NlError::bare(lnet_nl::errno::ENOENT))
            } else {
                Ok(false)
            };
        }
        let mut w = NlWriter::new(&mut buf);
        w.put_key_tables(&ps::tables())?;
        dump.put(nlm::CREATE | nlm::MULTI, cmd::PEERS, w.written())
            .map_err(|e| with_msg(e, c"failed to send key table"))?;
        wrote = true;
        k = 1;
        dump.set_state(1);
    }
    if !lnet.is_running() {
        return Err(down());
    }
    loop {
        let idx = k.saturating_sub(1);
        let Some(pi) = peer_at(lnet, dump, idx)? else {
            return Ok(false);
        };
        let mut p: lnet_ioc_peer = crate::kapi::lnet_abi::zeroed();
        if crate::dev::fill_peer(lnet, pi, &mut p).is_err() {
            // The list ended (or the peer went) since the last call.
            return Ok(false);
        }
        let mut w = NlWriter::new(&mut buf);
        put_peer(lnet, &mut w, &p, idx == 0, dump.version(), dump.flags())?;
        match dump.put(nlm::MULTI, cmd::PEERS, w.written()) {
            Ok(()) => wrote = true,
            // Full: the rest goes in the next call, unless this call has
            // written nothing (the peer can never fit).
            Err(e) if e == kerrno::EMSGSIZE() && wrote => return Ok(true),
            Err(e) => return Err(with_msg(e, c"failed to send values")),
        }
        k = k.saturating_add(1);
        dump.set_state(k as u64);
    }
}

/// One peer's message, from what GET_PEER and GET_PEER_NI report.
fn put_peer(
    lnet: &TheLnet,
    w: &mut NlWriter<'_>,
    p: &lnet_ioc_peer,
    first: bool,
    version: u8,
    flags: u16,
) -> Result<(), NlError> {
    let prim = crate::dev::nid_from_ioc(&p.pr_prim_nid).map_err(|e| with_msg(e, c"invalid NID"))?;
    if first {
        w.put_str(ps::ATTR_HDR, b"")?;
    }
    w.put_str(ps::ATTR_PRIMARY_NID, nid_text(&prim)?.as_bytes())?;
    if p.pr_multi_rail != 0 {
        w.put_flag(ps::ATTR_MULTIRAIL)?;
    }
    if version >= 3 {
        w.put_u32(ps::ATTR_STATE, p.pr_state)?;
    }
    let list = w.nest_start(ps::ATTR_PEER_NI_LIST)?;
    for (j, count) in (0..p.pr_nnis as usize).zip(1..=u16::MAX) {
        let mut n: lnet_ioc_peer_ni = crate::kapi::lnet_abi::zeroed();
        if crate::dev::fill_peer_ni(lnet, &prim, j, &mut n).is_err() {
            // The peer lost NIs since GET_PEER: show those left.
            break;
        }
        let e = w.nest_start(count)?;
        put_peer_ni(w, &n, version, flags & NLM_F_DUMP_FILTERED != 0)?;
        w.nest_end(e)?;
    }
    w.nest_end(list)
}

fn put_peer_ni(
    w: &mut NlWriter<'_>,
    n: &lnet_ioc_peer_ni,
    version: u8,
    backup: bool,
) -> Result<(), NlError> {
    use lnet_nl::net_show::{msg_stats as m, stats as st};
    let nid = crate::dev::nid_from_ioc(&n.pn_nid).map_err(|e| with_msg(e, c"invalid NID"))?;
    w.put_str(ps::ni::NID, nid_text(&nid)?.as_bytes())?;
    if version >= 4 {
        let u = w.nest_start(ps::ni::UDSP_INFO)?;
        let e = w.nest_start(0)?;
        w.put_s32(ps::udsp::NET_PRIORITY, n.pn_net_priority as i32)?;
        w.put_s32(ps::udsp::NID_PRIORITY, n.pn_nid_priority as i32)?;
        w.nest_end(e)?;
        w.nest_end(u)?;
    }
    if !backup {
        // What our lnetctl shows of pn_state; "NA" unless the peer is a
        // gateway of ours (dev.rs).
        let state: &[u8] = match n.pn_state {
            1 => b"up",
            2 => b"down",
            _ => b"NA",
        };
        w.put_str(ps::ni::STATE, state)?;
    }
    if version == 0 {
        return Ok(());
    }
    w.put_u32(ps::ni::MAX_TX_CREDITS, n.pn_max_ni_tx_credits)?;
    w.put_u32(ps::ni::CUR_TX_CREDITS, n.pn_available_tx_credits)?;
    w.put_u32(ps::ni::MIN_TX_CREDITS, n.pn_min_tx_credits)?;
    w.put_u32(ps::ni::QUEUE_BUF_COUNT, n.pn_tx_q_num_of_buf)?;
    w.put_u32(ps::ni::CUR_RTR_CREDITS, n.pn_available_rtr_credits)?;
    w.put_u32(ps::ni::MIN_RTR_CREDITS, n.pn_min_rtr_credits)?;
    w.put_u32(ps::ni::REFCOUNT, n.pn_refcount)?;
    let s = w.nest_start(ps::ni::STATS_COUNT)?;
    let e = w.nest_start(0)?;
    w.put_u32(st::SEND_COUNT, n.pn_send_count)?;
    w.put_u32(st::RECV_COUNT, n.pn_recv_count)?;
    w.put_u32(st::DROP_COUNT, n.pn_drop_count)?;
    for (k, lat) in (0u16..).zip([&n.pn_put_egress, &n.pn_get_rtt, &n.pn_put_ack]) {
        let base = st::LATENCY + 4 * k;
        w.put_u32(base, u32::try_from(lat.lat_samples).unwrap_or(u32::MAX))?;
        w.put_u64(base + 1, lat.lat_min_nsec)?;
        w.put_u64(base + 2, lat.lat_max_nsec)?;
        w.put_u64(base + 3, lat.lat_avg_nsec)?;
    }
    w.nest_end(e)?;
    w.nest_end(s)?;
    if version < 2 {
        return Ok(());
    }
    for (attr, counts) in [
        (ps::ni::SENT_STATS, &n.pn_sent_stats),
        (ps::ni::RECV_STATS, &n.pn_received_stats),
        (ps::ni::DROP_STATS, &n.pn_dropped_stats),
    ] {
        let s = w.nest_start(attr)?;
        let e = w.nest_start(0)?;
        for (k, v) in [m::PUT, m::GET, m::REPLY, m::ACK, m::HELLO]
            .iter()
            .zip(counts.iter())
        {
            w.put_u32(*k, *v)?;
        }
        w.nest_end(e)?;
        w.nest_end(s)?;
    }
    use ps::health as h;
    let s = w.nest_start(ps::ni::HEALTH_STATS)?;
    let e = w.nest_start(0)?;
    w.put_s32(h::VALUE, n.pn_health_value as i32)?;
    w.put_u32(h::DROPPED, n.pn_hs_dropped)?;
    w.put_u32(h::TIMEOUT, n.pn_hs_timeout)?;
    w.put_u32(h::ERROR, n.pn_hs_error)?;
    w.put_u32(h::NETWORK_TIMEOUT, n.pn_hs_network_timeout)?;
    w.put_u32(h::PING_COUNT, n.pn_ping_count)?;
    w.put_s64(h::NEXT_PING, n.pn_next_ping as i64)?;
    w.nest_end(e)?;
    w.nest_end(s)
}

/// `ping`'s start: LNet must be up and the request whole.
pub(crate) fn ping_start(attrs: &[u8]) -> Result<u64, NlError> {
    if !is_up() {
        return Err(down());
    }
    PingRequest::new(attrs)?;
    Ok(0)
}

/// A target that failed, and its negative errno.
struct Failed {
    k: usize,
    errno: i32,
}

/// The list of NIDs of a ping or discover entry: numbered from 1 by their
/// place, 0@lo left out (as Lustre does).
fn put_nids<'a>(w: &mut NlWriter<'_>, nids: impl Iterator<Item = &'a Nid>) -> Result<(), NlError> {
    let list = w.nest_start(np::ping::ATTR_PEER_NI_LIST)?;
    for (nid, count) in nids.zip(1..=u16::MAX) {
        if *nid == Nid::LO {
            continue;
        }
        let e = w.nest_start(count)?;
        w.put_str(np::ping::PEER_NI_NID, nid_text(nid)?.as_bytes())?;
        w.nest_end(e)?;
    }
    w.nest_end(list)
}

/// The failures' key table and entries (`manage:`), after the successes.
fn put_failures(
    out: &mut Dump,
    buf: &mut [u8],
    table: lnet_nl::KeyTable,
    failed: &[Failed],
    descr: impl Fn(&Dump, &Failed) -> Result<CString, NlError>,
) -> Result<(), NlError> {
    if failed.is_empty() {
        return Ok(());
    }
    let mut w = NlWriter::new(buf);
    w.put_key_tables(&[Some(table)])?;
    out.put(
        nlm::CREATE | nlm::REPLACE | nlm::MULTI,
        cmd::PING,
        w.written(),
    )
    .map_err(|e| with_msg(e, c"failed to send new key table"))?;
    for (i, f) in failed.iter().enumerate() {
        let d = descr(out, f)?;
        let mut w = NlWriter::new(buf);
        if i == 0 {
            w.put_str(np::ping::err::HDR, b"")?;
        }
        w.put_str(np::ping::err::TYPE, b"\n")?;
        w.put_s16(
            np::ping::err::ERRNO,
            i16::try_from(f.errno).unwrap_or(i16::MIN),
        )?;
        w.put_str(np::ping::err::DESCR, d.as_bytes())?;
        out.put(nlm::MULTI, cmd::PING, w.written())
            .map_err(|e| with_msg(e, c"failed to send failed values"))?;
    }
    Ok(())
}

/// `ping`: each target in turn, in one call as Lustre's does (the whole
/// reply must fit the dump's buffer); a target that does not answer is an
/// entry of the failures that follow, not an error of the request.
pub(crate) fn ping(lnet: &TheLnet, dump: &mut Dump) -> Result<(), NlError> {
    let req = PingRequest::new(dump.attrs())?;
    let (timeout_ms, source) = (req.timeout_ms, req.source.unwrap_or(Nid::ANY));
    let mut buf = KVVec::from_elem(0u8, MSG_BUF, GFP_KERNEL).map_err(|_| NOMEM)?;
    let mut w = NlWriter::new(&mut buf);
    w.put_key_tables(&[Some(np::ping::PING), Some(np::ping::PEER_NI)])?;
    dump.put(nlm::CREATE | nlm::MULTI, cmd::PING, w.written())
        .map_err(|e| with_msg(e, c"failed to send key table"))?;
    let mut failed = KVec::new();
    let mut shown = 0usize;
    for k in 0..usize::MAX {
        let Some(target) = PingRequest::new(dump.attrs())?.nth(k) else {
            break;
        };
        let reply = match crate::ping::ping(lnet, target, source, timeout_ms.div_ceil(1000)) {
            Ok(r) => r,
            Err(e) => {
                failed
                    .push(
                        Failed {
                            k,
                            errno: e.to_errno(),
                        },
                        GFP_KERNEL,
                    )
                    .map_err(|_| NOMEM)?;
                continue;
            }
        };
        let mut w = NlWriter::new(&mut buf);
        if shown == 0 {
            w.put_str(np::ping::ATTR_HDR, b"")?;
        }
        w.put_str(
            np::ping::ATTR_PRIMARY_NID,
            nid_text(&reply.primary)?.as_bytes(),
        )?;
        if reply.multi_rail {
            w.put_flag(np::ping::ATTR_MULTIRAIL)?;
        }
        put_nids(&mut w, reply.entries.iter().map(|e| &e.nid))?;
        dump.put(nlm::MULTI, cmd::PING, w.written())
            .map_err(|e| with_msg(e, c"failed to send values"))?;
        shown += 1;
    }
    put_failures(dump, &mut buf, np::ping::PING_ERR, &failed, |d, f| {
        let nid = PingRequest::new(d.attrs())?.nth(f.k).unwrap_or(Nid::ANY);
        CString::try_from_fmt(fmt!("failed to ping {}", nid)).map_err(|_| NOMEM)
    })
}

/// `discover [--force]` (`NLM_F_EXCL`): each target discovered in turn,
/// then its peer's NIDs; a target that does not parse or whose discovery
/// fails is an entry of the failures that follow.
pub(crate) fn discover(lnet: &TheLnet, out: &mut Dump) -> Result<(), NlError> {
    np::discover_check(out.attrs(), out.flags())?;
    if !lnet.is_running() {
        return Err(down());
    }
    let force = out.flags() & nlm::EXCL != 0;
    let mut buf = KVVec::from_elem(0u8, MSG_BUF, GFP_KERNEL).map_err(|_| NOMEM)?;
    let mut w = NlWriter::new(&mut buf);
    w.put_key_tables(&[Some(np::ping::DISCOVER), Some(np::ping::PEER_NI)])?;
    out.put(nlm::CREATE | nlm::MULTI, cmd::PING, w.written())
        .map_err(|e| with_msg(e, c"failed to send key table"))?;
    let mut failed = KVec::new();
    let mut shown = 0usize;
    for k in 0..usize::MAX {
        let nid = match np::discover_nth(out.attrs(), k) {
            None => break,
            Some(Target::Bad(_)) => {
                failed
                    .push(
                        Failed {
                            k,
                            errno: -lnet_nl::errno::EINVAL,
                        },
                        GFP_KERNEL,
                    )
                    .map_err(|_| NOMEM)?;
                continue;
            }
            Some(Target::Nid(n)) if n.is_any() => continue,
            Some(Target::Nid(n)) => n,
        };
        if let Err(e) = crate::discovery::discover(lnet, nid, force) {
            failed
                .push(
                    Failed {
                        k,
                        errno: e.to_errno(),
                    },
                    GFP_KERNEL,
                )
                .map_err(|_| NOMEM)?;
            continue;
        }
        // The peer's NIDs, taken under the lock and written after it.
        let mut nids: KVec<Nid> = KVec::new();
        let (primary, mr) = {
            let peers = lnet.peers.lock();
            match peers.find(&nid).and_then(|(pi, _)| peers.list.get(pi)) {
                Some(p) => {
                    for n in p.nis.iter() {
                        nids.push(n.nid, GFP_ATOMIC).map_err(|_| NOMEM)?;
                    }
                    (Some(p.primary), p.multi_rail)
                }
                None => (None, false),
            }
        };
        let mut w = NlWriter::new(&mut buf);
        if shown == 0 {
            w.put_str(np::ping::ATTR_HDR, b"")?;
        }
        if let Some(p) = primary {
            w.put_str(np::ping::ATTR_PRIMARY_NID, nid_text(&p)?.as_bytes())?;
            if mr {
                w.put_flag(np::ping::ATTR_MULTIRAIL)?;
            }
        }
        put_nids(&mut w, nids.iter())?;
        out.put(nlm::MULTI, cmd::PING, w.written())
            .map_err(|e| with_msg(e, c"failed to allocate hdr"))?;
        shown += 1;
    }
    put_failures(out, &mut buf, np::ping::DISCOVER_ERR, &failed, |d, f| {
        match np::discover_nth(d.attrs(), f.k) {
            Some(Target::Bad(s)) => CString::try_from_fmt(fmt!("cannot parse NID '{}'", s)),
            Some(Target::Nid(n)) => CString::try_from_fmt(fmt!("failed to discover {}", n)),
            None => CString::try_from_fmt(fmt!("failed to discover")),
        }
        .map_err(|_| NOMEM)
    })
}

/// `peer add` (`NLM_F_CREATE`), `peer del` (no flag) and `peer set
/// --health` (`NLM_F_REPLACE`): LNet must be up; the request is checked
/// whole, then each peer in it is acted on in turn, stopping at the first
/// that fails (those before it stay done, as in Lustre).
pub(crate) fn peer_cmd(lnet: &TheLnet, flags: u16, attrs: &[u8]) -> Result<(), NlError> {
    if !lnet.is_running() {
        return Err(down());
    }
    np::peer_cmd(attrs, flags, |_| Ok(()))?;
    np::peer_cmd(attrs, flags, |a| match a {
        PeerAction::Add {
            prim,
            nids,
            multi_rail,
            lock,
        } => {
            let nids = collect(nids)?;
            crate::dev::peer_add(lnet, &prim, &nids, multi_rail, lock)
                .map_err(|e| with_msg(e, c"failed to add peer"))
        }
        PeerAction::Del { prim, nids, force } => {
            let msg = if nids.is_empty() {
                c"failed to del primary peer"
            } else {
                c"failed to del peer"
            };
            let nids = collect(nids)?;
            crate::dev::peer_del(lnet, &prim, &nids, force).map_err(|e| with_msg(e, msg))
        }
        PeerAction::Health { nid, value } => crate::dev::set_peer_health(lnet, nid, value)
            .map_err(|e| with_msg(e, c"failed to set peer health")),
    })
}

fn collect(nids: np::PeerNids<'_>) -> Result<KVec<Nid>, NlError> {
    let mut v = KVec::new();
    for n in nids.iter() {
        v.push(n, GFP_KERNEL).map_err(|_| NOMEM)?;
    }
    Ok(v)
}

/// `which_nid`'s start: LNet must be up and every NID readable.
pub(crate) fn dist_start(attrs: &[u8]) -> Result<u64, NlError> {
    if !is_up() {
        return Err(down());
    }
    np::dist_check(attrs)?;
    Ok(0)
}

/// `which_nid` (`lnet_peer_dist_show_dump`): each NID's distance and order
/// (api_ni.rs `distance`), in one call; `0@lo` and unreachable NIDs are
/// left out. As in Lustre, the `nid` of each entry is the local NID the
/// target is reached from (`LNetDist` writes its source over the target),
/// so Lustre's `lctl which_nid` prints a NID of this node, and the header
/// comes with the request's first NID only.
pub(crate) fn dist(lnet: &TheLnet, dump: &mut Dump) -> Result<(), NlError> {
    let mut buf = KVVec::from_elem(0u8, MSG_BUF, GFP_KERNEL).map_err(|_| NOMEM)?;
    let mut w = NlWriter::new(&mut buf);
    w.put_key_tables(&[Some(np::dist::PEER_DIST)])?;
    dump.put(nlm::CREATE | nlm::MULTI, cmd::PEER_DIST, w.written())
        .map_err(|e| with_msg(e, c"failed to send key table"))?;
    for k in 0..usize::MAX {
        let Some(nid) = np::dist_nth(dump.attrs(), k) else {
            break;
        };
        if nid == Nid::LO {
            continue;
        }
        let Some(d) = crate::api_ni::distance(lnet, &nid) else {
            continue;
        };
        let mut w = NlWriter::new(&mut buf);
        if k == 0 {
            w.put_str(np::dist::ATTR_HDR, b"")?;
        }
        w.put_str(np::dist::ATTR_NID, nid_text(&d.src)?.as_bytes())?;
        w.put_u32(np::dist::ATTR_DIST, d.dist)?;
        w.put_u32(np::dist::ATTR_ORDER, d.order)?;
        dump.put(nlm::MULTI, cmd::PEER_DIST, w.written())
            .map_err(|e| with_msg(e, c"failed to send values"))?;
    }
    Ok(())
}
