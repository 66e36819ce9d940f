// SPDX-License-Identifier: GPL-2.0

//! Lustre's `lnet` generic netlink family, the commands its lnetctl sends
//! before any ioctl: `LNET_CMD_CONFIGURE` (`lnet configure|unconfigure`)
//! and `LNET_CMD_NETS` (`net add|del|set`, and `net show` as a dump); the peer
//! and ping commands are genl_peer.rs's. They
//! call what the ioctls call (startup.rs, dev.rs), so both paths behave the
//! same. Requests and replies are lnet-core's `lnet_nl` codec; other
//! commands are unknown to the family and get -EOPNOTSUPP, on which
//! lnetctl falls back to its ioctls.

use crate::kapi::errno as kerrno;
use crate::kapi::genl::{Dump, Request};
use crate::lnet_core::credits::NetTunables;
use crate::lnet_core::lnd_tunables::LndTunables;
use crate::lnet_core::lnet_nl::{self, cmd, net_show as ns, nlm, KeyTable, NlError, NlWriter};
use crate::lnet_core::nid::{lnd, Net, Nid};
use crate::ni::Ni;
use crate::startup;
use crate::state::TheLnet;
use core::ffi::{c_int, CStr};
use kernel::fmt;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::Arc;

/// `NLM_F_DUMP_FILTERED`: `lnetctl export --backup` (no NIDs, no lo).
pub(crate) const NLM_F_DUMP_FILTERED: u16 = 0x20;
/// The whole-show buffer of one message; the key tables take about 4 KiB.
pub(crate) const MSG_BUF: usize = 16 * 1024;
/// The dump state meaning "every net".
const ALL_NETS: u64 = u64::MAX;

pub(crate) fn errno_of(e: Error) -> c_int {
    e.to_errno()
}

fn nl_errno(e: &NlError) -> c_int {
    -e.errno
}

/// A kernel error with the message lnetctl prints.
pub(crate) fn with_msg(e: Error, msg: &'static CStr) -> NlError {
    NlError::new(-e.to_errno(), msg)
}

/// `LNET_CMD_CONFIGURE`, `LNET_CMD_NETS` (add, del) and `LNET_CMD_PEERS`
/// (add, del, set).
#[no_mangle]
extern "C" fn lnet_genl_rs_cmd(req: Option<&mut Request>) -> c_int {
    let Some(req) = req else {
        return errno_of(EINVAL);
    };
    let Some(lnet) = TheLnet::get() else {
        return errno_of(ENODEV);
    };
    let r = match req.cmd() {
        cmd::CONFIGURE => configure(lnet, req.flags()),
        cmd::NETS => nets(lnet, req.flags(), req.attrs()),
        cmd::PEERS => crate::genl_peer::peer_cmd(lnet, req.flags(), req.attrs()),
        _ => Err(NlError::bare(-kerrno::EOPNOTSUPP().to_errno())),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            if let Some(m) = e.msg {
                req.set_err_msg(m);
            }
            nl_errno(&e)
        }
    }
}

/// `lnet configure [-a]` (`NLM_F_CREATE`; without `-a`, `NLM_F_EXCL`:
/// only 0@lo) and `lnet unconfigure` (no flag).
fn configure(lnet: &'static TheLnet, flags: u16) -> Result<(), NlError> {
    if flags & nlm::CREATE == 0 {
        return startup::dev_unconfigure(lnet).map_err(|e| NlError::bare(-e.to_errno()));
    }
    startup::dev_configure(lnet, flags & nlm::EXCL == 0).map_err(|e| {
        let msg = if e == kerrno::ENETDOWN() {
            Some(c"Network is down")
        } else if e == ENODEV {
            Some(c"LNET is currently not loaded")
        } else if e == EBUSY {
            Some(c"LNET busy")
        } else {
            None
        };
        NlError {
            errno: -e.to_errno(),
            msg,
        }
    })
}

fn parse_net(s: Option<&str>) -> Result<Net, NlError> {
    let net = s
        .and_then(|s| Net::parse(s).ok())
        .ok_or(NlError::new(-ENODEV.to_errno(), c"cannot parse net"))?;
    if net.lnd() == lnd::LO {
        return Err(NlError::new(-ENODEV.to_errno(), c"setting @lo not allowed"));
    }
    Ok(net)
}

fn to_i32(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// The LND tunables of `net add`. o2ib NIs take Lustre's o2iblnd keys
/// (`kiblnd_nl_set`), kept for the LND's startup. ksocklnd runs one
/// connection per peer, so its `conns_per_peer` is taken as 0 or 1 only
/// (as the ioctl takes it), its `tos` only unset. Keys the LND does not
/// take are ignored, as Lustre's LNDs ignore them.
fn lnd_tunables(net: Net, list: Option<lnet_nl::Attrs<'_>>) -> Result<LndTunables, NlError> {
    const BAD: NlError = NlError::new(lnet_nl::errno::EINVAL, c"failed to parse lnd tunables");
    let mut out = LndTunables::UNSET;
    let Some(mut it) = list else {
        return Ok(out);
    };
    let table: KeyTable = match net.lnd() {
        lnd::SOCK => ns::SOCK_LND,
        lnd::O2IB => ns::O2IB_LND,
        _ => return Ok(out),
    };
    while let Some(k) = it.next() {
        if k.kind != lnet_nl::scalar::VALUE {
            continue;
        }
        let Some(name) = k.str() else { continue };
        if !table
            .iter()
            .any(|t| t.name.and_then(|n| n.to_str().ok()) == Some(name))
        {
            continue;
        }
        let v = it.next().and_then(|v| v.int()).ok_or(BAD)?;
        if net.lnd() == lnd::O2IB {
            out.set_o2ib(name, v)
                .map_err(|e| NlError::new(e, c"lnd tunable out of range"))?;
            continue;
        }
        match name {
            // 0 asks the LND to choose: one, as it runs.
            "conns_per_peer" if v == 0 || v == 1 => {}
            "conns_per_peer" => return Err(BAD),
            // Lustre's lnetctl sends `tos: -1` with every `net add`
            // (its tunables' unset value); a TOS of the NI's own is not
            // supported: the LND's `tos` parameter sets it.
            "tos" if v == -1 => {}
            "tos" => {
                return Err(NlError::new(
                    lnet_nl::errno::EINVAL,
                    c"tos per NI not supported",
                ))
            }
            // Lustre's LNDs ignore the rest (lnd_timeout among them).
            _ => {}
        }
    }
    Ok(out)
}

/// Whether `net` has an NI, and one on `intf`.
fn net_has(lnet: &TheLnet, net: Net, intf: &str) -> (bool, bool) {
    let nis = lnet.nis.lock();
    let mut of_net = nis.nis.iter().filter(|n| n.nid.net() == net).peekable();
    let any = of_net.peek().is_some();
    let on = of_net.any(|n| n.iface() == intf);
    (any, on)
}

fn add_ni(lnet: &TheLnet, ni: &lnet_nl::LocalNi<'_>) -> Result<(), NlError> {
    let net = parse_net(ni.net)?;
    if ni.nid.is_some() && ni.intf.is_empty() {
        // lnet-rs makes an NI from an interface; lnetctl names one unless
        // given an address.
        return Err(NlError::new(lnet_nl::errno::EINVAL, c"unsupported NID"));
    }
    if ni.intf.is_empty() {
        return Err(NlError::new(
            lnet_nl::errno::EINVAL,
            c"interface / NID is missing",
        ));
    }
    let t = NetTunables {
        peer_timeout: to_i32(ni.tunables.peer_timeout),
        peer_credits: to_i32(ni.tunables.peer_credits),
        peer_buffer_credits: to_i32(ni.tunables.peer_buffer_credits),
        credits: to_i32(ni.tunables.credits),
    };
    if t.validate().is_err() {
        return Err(NlError::new(
            lnet_nl::errno::EINVAL,
            c"failed to parse tunables",
        ));
    }
    let lt = lnd_tunables(net, ni.lnd_tunables.clone())?;
    startup::net_add(lnet, net, &[ni.intf], &t, &lt).map_err(|e| {
        if e == ENOENT {
            with_msg(e, c"cannot parse net")
        } else if e == ERANGE {
            with_msg(e, c"invalid CPT set")
        } else if e == ENOSPC {
            with_msg(e, c"too many NIs, check lnet_interfaces_max")
        } else {
            with_msg(e, c"cannot add LNet NI")
        }
    })
}

fn del_ni(lnet: &TheLnet, ni: &lnet_nl::LocalNi<'_>) -> Result<(), NlError> {
    let net = parse_net(ni.net)?;
    let nodev = -ENODEV.to_errno();
    let intf = match (ni.intf, ni.nid) {
        ("", None) => return Err(NlError::new(nodev, c"interface / NID is missing")),
        ("", Some(nid)) => {
            // Delete by NID: the NI of that NID, by its interface.
            let nid = Nid::parse(nid)
                .map_err(|_| NlError::new(lnet_nl::errno::EINVAL, c"unsupported NID"))?;
            let nis = lnet.nis.lock();
            let found = nis.nis.iter().find(|n| n.nid == nid);
            match found {
                Some(n) if n.nid.net() == net => {
                    let mut b = [0u8; 16];
                    for (d, s) in b.iter_mut().zip(n.iface().bytes()) {
                        *d = s;
                    }
                    drop(nis);
                    return del_on(lnet, net, &b);
                }
                _ => return Err(NlError::new(nodev, c"cannot del LNet NI")),
            }
        }
        (i, _) => i,
    };
    match net_has(lnet, net, intf) {
        (false, _) => Err(NlError::new(nodev, c"LNet net doesn't exist")),
        (true, false) => Err(NlError::new(
            nodev,
            c"interface invalid for deleting LNet NI",
        )),
        (true, true) => {
            startup::net_del(lnet, net, &[intf]).map_err(|e| with_msg(e, c"cannot del LNet NI"))
        }
    }
}

/// Deletes the NI of `net` on the interface named in `b` (NUL-padded).
fn del_on(lnet: &TheLnet, net: Net, b: &[u8; 16]) -> Result<(), NlError> {
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let intf = b
        .get(..n)
        .and_then(|s| core::str::from_utf8(s).ok())
        .unwrap_or("");
    startup::net_del(lnet, net, &[intf]).map_err(|e| with_msg(e, c"cannot del LNet NI"))
}

/// `net add` (`NLM_F_CREATE`), `net del` (no flag) and `net set`
/// (`NLM_F_REPLACE`).
fn nets(lnet: &TheLnet, flags: u16, attrs: &[u8]) -> Result<(), NlError> {
    let create = flags & nlm::CREATE != 0;
    if !create && flags & nlm::REPLACE != 0 {
        return lnet_nl::net_cmd(attrs, true, |op| match op {
            lnet_nl::NetOp::Ni(ni) => set_ni(lnet, &ni),
            // An update never deletes a net.
            lnet_nl::NetOp::EndOfBlock { .. } => Ok(()),
        });
    }
    lnet_nl::net_cmd(attrs, false, |op| match op {
        lnet_nl::NetOp::Ni(ni) if create => add_ni(lnet, &ni),
        lnet_nl::NetOp::Ni(ni) => del_ni(lnet, &ni),
        lnet_nl::NetOp::EndOfBlock {
            net,
            ip2net,
            ni_list,
        } => {
            if create && ip2net.is_some() {
                return Err(NlError::new(
                    -kerrno::EOPNOTSUPP().to_errno(),
                    c"cannot setup ip2nets",
                ));
            }
            if create || ni_list {
                return Ok(());
            }
            // A net named without NIs: the whole net goes. A net that
            // does not exist is EINVAL, as Lustre's lnet_dyn_del_net.
            let net = parse_net(net)?;
            startup::net_del(lnet, net, &[]).map_err(|e| {
                let e = if e == ENOENT { EINVAL } else { e };
                with_msg(e, c"cannot del network")
            })
        }
    })
}

/// The net an update names: `LNET_NET_ANY` (lnetctl's `<255:65535>` for
/// `--all`, or none given) is None, every net.
fn update_net(s: Option<&str>) -> Result<Option<Net>, NlError> {
    match s {
        None | Some("<255:65535>") => Ok(None),
        s => parse_net(s).map(Some),
    }
}

/// `net set` (`lnet_genl_parse_local_ni` under `NLM_F_REPLACE`): the health
/// value of the entry's NI (`--nid`) or, with no net or NID named
/// (`--all`), of every NI; `conns_per_peer` in `lnd tunables`, which a
/// running NI of lnet-rs cannot change, taken only as the value the NIs
/// already have. Lustre ignores a NID on no local NI and stores a health
/// value out of range; both are refused here, with nothing changed.
fn set_ni(lnet: &TheLnet, ni: &lnet_nl::LocalNi<'_>) -> Result<(), NlError> {
    let net = update_net(ni.net)?;
    let inval = |m: &'static CStr| NlError::new(lnet_nl::errno::EINVAL, m);
    // lnetctl names "every NI" as the NID `<?>`; with any net the NID is
    // not read, as Lustre's.
    let nid = match (net, ni.nid) {
        (None, _) | (_, None) | (_, Some("<?>")) => None,
        (Some(net), Some(s)) => {
            let nid = Nid::parse(s).map_err(|_| inval(c"unsupported NID"))?;
            if nid.net() != net {
                return Err(inval(c"NID is not on the net"));
            }
            Some(nid)
        }
    };
    if let Some(list) = ni.lnd_tunables.clone() {
        check_conns_per_peer(lnet, net, nid, list)?;
    }
    let Some(v) = ni.health else {
        return Ok(());
    };
    let value = u32::try_from(v)
        .ok()
        .filter(|&v| v <= crate::lnet_core::health::MAX_HEALTH)
        .ok_or(inval(c"health value out of range"))?;
    // Without a NID every NI of the net: Lustre's is every NI there is.
    let target = match (net, nid) {
        (_, Some(n)) => Some(n),
        (None, None) => None,
        (Some(_), None) => return Err(inval(c"interface / NID is missing")),
    };
    crate::dev::set_ni_health(lnet, target, value).map_err(|e| {
        if e == ENOENT {
            NlError::new(-ENOENT.to_errno(), c"no local NI has that NID")
        } else {
            with_msg(e, c"cannot set NI health")
        }
    })
}

/// An update's `conns_per_peer`: every NI it names (0@lo aside) must
/// already run with that many connections per peer.
fn check_conns_per_peer(
    lnet: &TheLnet,
    net: Option<Net>,
    nid: Option<Nid>,
    mut list: lnet_nl::Attrs<'_>,
) -> Result<(), NlError> {
    use core::sync::atomic::Ordering::Relaxed;
    const BAD: NlError = NlError::new(lnet_nl::errno::EINVAL, c"failed to parse lnd tunables");
    while let Some(k) = list.next() {
        if k.kind != lnet_nl::scalar::VALUE || !k.is_key("conns_per_peer") {
            continue;
        }
        let v = list.next().and_then(|v| v.int()).ok_or(BAD)?;
        let nis = lnet.nis.lock();
        let differs = nis
            .nis
            .iter()
            .filter(|n| n.nid != Nid::LO)
            .filter(|n| net.map_or(true, |x| n.nid.net() == x) && nid.map_or(true, |x| n.nid == x))
            .any(|n| i64::from(n.tunables.conns_per_peer.load(Relaxed)) != v);
        if differs {
            return Err(NlError::new(
                lnet_nl::errno::EINVAL,
                c"conns_per_peer of a running NI cannot change",
            ));
        }
    }
    Ok(())
}

/// `route show` (`LNET_CMD_ROUTES`, a dump) as far as lnet-rs answers it:
/// with no route, Lustre's answer (an empty dump when nothing is asked,
/// else ENOENT "No routes found", which Lustre's lnetctl takes as no
/// route, so its `export` writes no error entry). Routes themselves are
/// not given over netlink (EOPNOTSUPP): Lustre's lnetctl reads them with
/// the route ioctls only when the family is missing (libcfs_ioctl.rs).
fn route_show(lnet: &TheLnet, dump: &Dump) -> Result<(), NlError> {
    if crate::route::get(lnet, 0).is_ok() {
        return Err(NlError::new(
            -kerrno::EOPNOTSUPP().to_errno(),
            c"route show is not answered over netlink",
        ));
    }
    if dump.attrs().is_empty() {
        Ok(())
    } else {
        Err(NlError::new(lnet_nl::errno::ENOENT, c"No routes found"))
    }
}

/// A dump's start: `net show`, `peer show`, `route show`, `ping`,
/// `which_nid`. Checks the request
/// and sets the dump's first state.
#[no_mangle]
extern "C" fn lnet_genl_rs_start(req: Option<&mut Request>, state: Option<&mut u64>) -> c_int {
    let (Some(req), Some(state)) = (req, state) else {
        return errno_of(EINVAL);
    };
    let r = match req.cmd() {
        cmd::NETS => show_start(req.attrs()),
        cmd::PEERS => crate::genl_peer::peer_show_start(req.attrs()),
        cmd::ROUTES => Ok(0),
        cmd::PING => crate::genl_peer::ping_start(req.attrs()),
        cmd::PEER_DIST => crate::genl_peer::dist_start(req.attrs()),
        _ => Err(NlError::bare(-kerrno::EOPNOTSUPP().to_errno())),
    };
    match r {
        Ok(s) => {
            *state = s;
            0
        }
        Err(e) => {
            if let Some(m) = e.msg {
                req.set_err_msg(m);
            }
            nl_errno(&e)
        }
    }
}

/// One call of a dump: 0 when done, 1 when there is more for the next
/// call (lnet_genl.c's contract), or a negative errno.
#[no_mangle]
extern "C" fn lnet_genl_rs_dump(dump: Option<&mut Dump>) -> c_int {
    let Some(dump) = dump else {
        return errno_of(EINVAL);
    };
    let Some(lnet) = TheLnet::get() else {
        return errno_of(ENODEV);
    };
    let r = match dump.cmd() {
        cmd::NETS => show(lnet, dump).map(|()| false),
        cmd::PEERS => crate::genl_peer::peer_show(lnet, dump),
        cmd::ROUTES => route_show(lnet, dump).map(|()| false),
        cmd::PING => crate::genl_peer::ping(lnet, dump).map(|()| false),
        cmd::PEER_DIST => crate::genl_peer::dist(lnet, dump).map(|()| false),
        _ => Err(NlError::bare(-kerrno::EOPNOTSUPP().to_errno())),
    };
    match r {
        Ok(more) => c_int::from(more),
        Err(e) => {
            if let Some(m) = e.msg {
                dump.set_err_msg(m);
            }
            nl_errno(&e)
        }
    }
}

/// A request answered with several messages (`discover`), written into
/// the reply lnet_genl.c sends.
#[no_mangle]
extern "C" fn lnet_genl_rs_reply(reply: Option<&mut Dump>) -> c_int {
    let Some(reply) = reply else {
        return errno_of(EINVAL);
    };
    let Some(lnet) = TheLnet::get() else {
        return errno_of(ENODEV);
    };
    let r = match reply.cmd() {
        cmd::PING => crate::genl_peer::discover(lnet, reply),
        _ => Err(NlError::bare(-kerrno::EOPNOTSUPP().to_errno())),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            if let Some(m) = e.msg {
                reply.set_err_msg(m);
            }
            nl_errno(&e)
        }
    }
}

fn show_start(attrs: &[u8]) -> Result<u64, NlError> {
    let up = TheLnet::get().is_some_and(|l| l.is_running());
    if !up {
        return Err(with_msg(kerrno::ENETDOWN(), c"LNet stack down"));
    }
    match lnet_nl::show_filter(attrs)? {
        None => Ok(ALL_NETS),
        Some(s) => Net::parse(s)
            .map(|n| u64::from(n.as_u32()))
            .map_err(|_| NlError::new(lnet_nl::errno::ENOENT, c"cannot parse net")),
    }
}

fn lnd_keys(net: Net) -> Option<KeyTable> {
    match net.lnd() {
        lnd::SOCK => Some(ns::SOCK_LND),
        lnd::O2IB => Some(ns::O2IB_LND),
        _ => None,
    }
}

/// `net show`: the whole show in one call (Lustre's does the same).
fn show(lnet: &TheLnet, dump: &mut Dump) -> Result<(), NlError> {
    const NOMEM: NlError = NlError::bare(lnet_nl::errno::ENOMEM);
    let state = dump.state();
    let backup = dump.flags() & NLM_F_DUMP_FILTERED != 0;
    let version = dump.version();
    let wanted = |n: &Ni| {
        let net = n.nid.net();
        (state == ALL_NETS || u64::from(net.as_u32()) == state) && !(backup && net == Net::LO)
    };
    // The NIs to show, taken under the lock and shown after it.
    let mut nis: KVec<Arc<Ni>> = KVec::new();
    {
        let all = lnet.nis.lock();
        for ni in all.nis.iter().filter(|n| wanted(n)) {
            nis.push(ni.clone(), GFP_ATOMIC).map_err(|_| NOMEM)?;
        }
    }
    if nis.is_empty() && !backup {
        return Err(NlError::new(lnet_nl::errno::ESRCH, c"Network is down"));
    }
    let mut buf = KVec::from_elem(0u8, MSG_BUF, GFP_KERNEL).map_err(|_| NOMEM)?;
    let mut lnd: Option<KeyTable> = None;
    let mut shown = 0usize;
    let mut rest: &[Arc<Ni>] = &nis;
    while let Some(first) = rest.first() {
        let net = first.nid.net();
        let n = rest.iter().take_while(|x| x.nid.net() == net).count();
        let (of_net, tail) = rest.split_at(n);
        rest = tail;

        let mut send_keys = shown == 0;
        if version > 0 && net.lnd() != lnd::LO {
            let keys = lnd_keys(net);
            if keys.map(|k| k.as_ptr()) != lnd.map(|k| k.as_ptr()) {
                send_keys = true;
                lnd = keys;
            }
        }
        let mut started = false;
        if send_keys {
            let mut flags = nlm::CREATE | nlm::MULTI;
            let mut first_table = ns::NET;
            if lnd.is_some() && shown > 0 {
                first_table = ns::NET_UPDATE;
                flags |= nlm::REPLACE;
            }
            let mut w = NlWriter::new(&mut buf);
            w.put_key_tables(&ns::tables(first_table, lnd))?;
            dump.put(flags, cmd::NETS, w.written())
                .map_err(|e| with_msg(e, c"failed to send key table"))?;
            started = true;
        }
        let mut w = NlWriter::new(&mut buf);
        if started {
            w.put_str(ns::ATTR_HDR, b"")?;
        }
        let name = CString::try_from_fmt(fmt!("{}", net)).map_err(|_| NOMEM)?;
        w.put_str(ns::ATTR_TYPE, name.as_bytes())?;
        let local = w.nest_start(ns::ATTR_LOCAL)?;
        for (dev, ni) in (0u16..).zip(of_net.iter()) {
            let nest = w.nest_start(dev)?;
            put_ni(&mut w, ni, version, backup, lnd.is_some())?;
            w.nest_end(nest)?;
            shown += 1;
        }
        w.nest_end(local)?;
        dump.put(nlm::MULTI, cmd::NETS, w.written())
            .map_err(|e| with_msg(e, c"failed to send values"))?;
    }
    Ok(())
}

/// One local NI's entry, from what the GET_NI ioctl reports of it.
fn put_ni(
    w: &mut NlWriter<'_>,
    ni: &Ni,
    version: u8,
    backup: bool,
    lnd_keys: bool,
) -> Result<(), NlError> {
    use crate::kapi::bindings::lnet_ioc_ni;
    let mut n: lnet_ioc_ni = crate::kapi::lnet_abi::zeroed();
    crate::dev::fill_ni(&mut n, ni);
    if !backup {
        let nid = CString::try_from_fmt(fmt!("{}", ni.nid))
            .map_err(|_| NlError::bare(lnet_nl::errno::ENOMEM))?;
        w.put_str(ns::ni::NID, nid.as_bytes())?;
        let up = ni.nid == Nid::LO || n.ni_status != 0;
        w.put_str(ns::ni::STATUS, if up { b"up" } else { b"down" })?;
    }
    let iface = ni.iface();
    if ni.nid != Nid::LO && !iface.is_empty() {
        let i = w.nest_start(ns::ni::INTERFACE)?;
        let e = w.nest_start(0)?;
        w.put_str(1, iface.as_bytes())?;
        w.nest_end(e)?;
        w.nest_end(i)?;
    }
    if version == 0 {
        return Ok(());
    }
    if !backup {
        let s = w.nest_start(ns::ni::STATS)?;
        let e = w.nest_start(0)?;
        w.put_u32(ns::stats::SEND_COUNT, n.ni_send_count)?;
        w.put_u32(ns::stats::RECV_COUNT, n.ni_recv_count)?;
        w.put_u32(ns::stats::DROP_COUNT, n.ni_drop_count)?;
        for (k, lat) in (0u16..).zip([&n.ni_put_egress, &n.ni_get_rtt, &n.ni_put_ack]) {
            let base = ns::stats::LATENCY + 4 * k;
            w.put_u32(base, u32::try_from(lat.lat_samples).unwrap_or(u32::MAX))?;
            w.put_u64(base + 1, lat.lat_min_nsec)?;
            w.put_u64(base + 2, lat.lat_max_nsec)?;
            w.put_u64(base + 3, lat.lat_avg_nsec)?;
        }
        w.nest_end(e)?;
        w.nest_end(s)?;
        if version >= 2 {
            use ns::msg_stats as m;
            for (attr, counts) in [
                (ns::ni::SEND_STATS, &n.ni_sent_stats),
                (ns::ni::RECV_STATS, &n.ni_received_stats),
                (ns::ni::DROPPED_STATS, &n.ni_dropped_stats),
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
            use ns::health as h;
            let s = w.nest_start(ns::ni::HEALTH_STATS)?;
            let e = w.nest_start(0)?;
            w.put_s32(h::FATAL_ERRORS, n.ni_fatal_error as i32)?;
            w.put_s32(h::LEVEL, n.ni_health_value as i32)?;
            w.put_u32(h::INTERRUPTS, n.ni_hs_interrupts)?;
            w.put_u32(h::DROPPED, n.ni_hs_dropped)?;
            w.put_u32(h::ABORTED, n.ni_hs_aborted)?;
            w.put_u32(h::NO_ROUTE, n.ni_hs_no_route)?;
            w.put_u32(h::TIMEOUTS, n.ni_hs_timeouts)?;
            w.put_u32(h::ERROR, n.ni_hs_error)?;
            w.put_u32(h::PING_COUNT, n.ni_ping_count)?;
            w.put_u64(h::NEXT_PING, n.ni_next_ping)?;
            w.nest_end(e)?;
            w.nest_end(s)?;
        }
    }
    {
        use ns::tunables as t;
        let s = w.nest_start(ns::ni::TUNABLES)?;
        let e = w.nest_start(0)?;
        w.put_s32(t::PEER_TIMEOUT, n.ni_peer_timeout as i32)?;
        w.put_s32(t::PEER_CREDITS, n.ni_peer_credits as i32)?;
        w.put_s32(t::PEER_BUFFER_CREDITS, n.ni_peer_buffer_credits as i32)?;
        w.put_s32(t::CREDITS, n.ni_credits as i32)?;
        w.nest_end(e)?;
        w.nest_end(s)?;
    }
    if lnd_keys && ni.nid.net().lnd() != lnd::LO {
        let s = w.nest_start(ns::ni::LND_TUNABLES)?;
        let e = w.nest_start(0)?;
        // The ioctl's "not applicable" marker shows as -1, as there.
        let u16v = |v: u32| v as i32 as i16 as u16;
        let s16v = |v: u32| v as i32 as i16;
        if ni.nid.net().lnd() == lnd::O2IB {
            use ns::o2ib as o;
            w.put_u32(o::HIW_PEER_CREDITS, n.ni_lnd_peercredits_hiw)?;
            w.put_flag(o::MAP_ON_DEMAND)?;
            w.put_u32(o::CONCURRENT_SENDS, n.ni_lnd_concurrent_sends)?;
            w.put_u32(o::FMR_POOL_SIZE, n.ni_lnd_fmr_pool_size)?;
            w.put_u32(o::FMR_FLUSH_TRIGGER, n.ni_lnd_fmr_flush_trigger)?;
            w.put_u32(o::FMR_CACHE, n.ni_lnd_fmr_cache)?;
            w.put_u16(o::NTX, u16v(n.ni_lnd_ntx))?;
            w.put_u16(o::CONNS_PER_PEER, u16v(n.ni_lnd_conns_per_peer))?;
            if !backup {
                w.put_u32(o::TIMEOUT, n.ni_lnd_timeout)?;
            }
            w.put_s16(o::TOS, s16v(n.ni_lnd_tos))?;
        } else {
            use ns::sock as k;
            w.put_u16(k::CONNS_PER_PEER, u16v(n.ni_lnd_conns_per_peer))?;
            if !backup {
                w.put_u32(k::TIMEOUT, n.ni_lnd_timeout)?;
            }
            w.put_s16(k::TOS, s16v(n.ni_lnd_tos))?;
        }
        w.nest_end(e)?;
        w.nest_end(s)?;
    }
    if !backup {
        w.put_s32(ns::ni::DEV_CPT, n.ni_dev_cpt as i32)?;
    }
    let mut cpts = [0u8; 520];
    let ncpts = n.ni_ncpts as usize;
    let s = lnet_nl::cpt_string(
        n.ni_cpts.iter().take(ncpts).map(|&c| u32::from(c)),
        &mut cpts,
    );
    w.put_str(ns::ni::CPTS, s)?;
    Ok(())
}
