// SPDX-License-Identifier: GPL-2.0

//! Bringing LNet up and down (`LNetNIInit`, `LNetNIFini`) and the LND
//! registry.
//!
//! Shutdown keeps the API's promise that every PUT and GET ends in one
//! final event: sends stop being accepted, every response tracker is
//! expired (its MD is unlinked and the owner told), the LNDs stop their NIs
//! and finalize what they hold, and only then are leftover MDs unlinked.

use crate::config;
use crate::kapi::errno::*;
use crate::kapi::vec;
use crate::lnd::LndRef;
use crate::lnet_core::credits::NetTunables;
use crate::lnet_core::lnd_tunables::LndTunables;
use crate::lnet_core::networks;
use crate::lnet_core::nid::{lnd, Net, Nid};
use crate::monitor;
use crate::ni::{Ni, NiState};
use crate::state::TheLnet;
use core::sync::atomic::Ordering;
use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Seconds between warnings while LNDs finalize their messages at shutdown.
const DRAIN_SECS: u32 = 30;

pub(crate) fn register_lnd(lnet: &TheLnet, lnd: LndRef) -> Result {
    let mut nis = lnet.nis.lock();
    if nis.lnds.iter().any(|l| l.lnd_type() == lnd.lnd_type()) {
        pr_err!("LND type {} is already registered\n", lnd.lnd_type());
        return Err(EEXIST);
    }
    nis.lnds.push(lnd, GFP_ATOMIC)?;
    pr_info!("LND type {} registered\n", lnd.lnd_type());
    Ok(())
}

/// Takes an LND out of the table as its module unloads. Under `api`, so
/// that it waits for a configuration that found the LND and may be
/// starting an NI on it (as Lustre's `ln_lnd_mutex`): the LND's code and
/// table stay until that returns, and its startup, seeing its module
/// going, refuses the NI.
pub(crate) fn unregister_lnd(lnet: &TheLnet, lnd: LndRef) {
    let _api = lnet.api.lock();
    let mut nis = lnet.nis.lock();
    if nis.nis.iter().any(|ni| ni.lnd == lnd) {
        // The LND's module cannot unload while LNet runs its NIs.
        pr_err!(
            "LND type {} unregistered with NIs running\n",
            lnd.lnd_type()
        );
    }
    vec::retain(&mut nis.lnds, |l| *l != lnd);
}

/// The counted reference of a started NI.
pub(crate) fn ni_arc(lnet: &TheLnet, ni: &Ni) -> Option<Arc<Ni>> {
    let nis = lnet.nis.lock();
    nis.nis
        .iter()
        .find(|n| core::ptr::eq::<Ni>(&***n, ni))
        .cloned()
}

/// `LNetNIInit`: the first call starts the NIs and the monitor thread.
/// Returns how many earlier calls are still counted.
pub(crate) fn ni_init(lnet: &'static TheLnet, pid: u32) -> Result<u32> {
    let mut api = lnet.api.lock();
    let n = ni_init_locked(lnet, &mut api, pid, true)?;
    drop(api);
    if n == 0 {
        // `lnet_wait_router_start`, once LNet is up and unlocked.
        crate::router_check::wait_known_routerstate(lnet);
    }
    Ok(n)
}

/// `lnetctl lnet configure [--all]`: /dev/lnet's reference; with
/// `load_networks` the NIs of `networks=` start too, otherwise only
/// `0@lo`. A second configure changes nothing.
pub(crate) fn dev_configure(lnet: &'static TheLnet, load_networks: bool) -> Result {
    let mut api = lnet.api.lock();
    if api.dev_ref {
        return Ok(());
    }
    let n = ni_init_locked(lnet, &mut api, crate::ping::PID_LUSTRE, load_networks)?;
    api.dev_ref = true;
    drop(api);
    if n == 0 {
        crate::router_check::wait_known_routerstate(lnet);
    }
    Ok(())
}

/// `lnetctl lnet unconfigure`: drops /dev/lnet's reference; EBUSY while
/// another user (an upper layer) holds LNet up.
pub(crate) fn dev_unconfigure(lnet: &TheLnet) -> Result {
    let mut api = lnet.api.lock();
    if !api.dev_ref {
        return if api.refcount > 0 { Err(EBUSY) } else { Ok(()) };
    }
    if api.refcount > 1 {
        return Err(EBUSY);
    }
    api.dev_ref = false;
    api.refcount = 0;
    shutdown(lnet, &mut api);
    Ok(())
}

fn ni_init_locked(
    lnet: &'static TheLnet,
    api: &mut crate::state::Api,
    pid: u32,
    load_networks: bool,
) -> Result<u32> {
    if api.refcount > 0 {
        api.refcount += 1;
        return Ok(api.refcount - 1);
    }
    lnet.pid.store(pid, Ordering::Relaxed);
    crate::health::resends_open(lnet, true);
    let monitor = start_nis(lnet, load_networks)
        .and_then(|()| crate::router::start(lnet))
        .and_then(|()| monitor::start(lnet));
    let monitor = match monitor {
        Ok(t) => t,
        Err(e) => {
            crate::health::resends_open(lnet, false);
            crate::router::shutdown(lnet);
            stop_nis(lnet);
            forget_nis(lnet);
            return Err(e);
        }
    };
    api.monitor = Some(monitor);
    lnet.running.store(true, Ordering::Release);
    api.refcount = 1;
    match crate::ping::target_start(lnet) {
        Ok(t) => {
            let _ = crate::ping::install(lnet, &mut lnet.pings.lock(), t);
            crate::push::top_up(lnet);
            match crate::discovery::start(lnet) {
                Ok(t) => api.discovery = Some(t),
                // Messages then go without waiting (the gate lets them
                // through when nothing runs discovery).
                Err(e) => pr_err!("Can't start the discovery thread: {:?}\n", e),
            }
        }
        Err(e) => {
            pr_err!("Can't post the ping buffer: {:?}\n", e);
            api.refcount = 0;
            shutdown(lnet, api);
            return Err(e);
        }
    }
    pr_info!("LNet up, pid {}\n", pid);
    Ok(0)
}

/// Starts `0@lo` and the NIs of `networks=`, then adds `routes=`.
fn start_nis(lnet: &TheLnet, load_networks: bool) -> Result {
    crate::numa::init();
    let lo = LndRef::loopback();
    start_ni(
        lnet,
        Nid::LO,
        None,
        lo,
        &NetTunables::UNSET,
        &LndTunables::UNSET,
    )?;
    if !load_networks {
        return Ok(());
    }
    let mut failed = Ok(());
    let r = config::with_networks(|nets| {
        networks::for_each_ni(nets, config::NCPTS, |spec| {
            match add_ni(
                lnet,
                spec.net,
                spec.iface.unwrap_or(""),
                &NetTunables::UNSET,
                &LndTunables::UNSET,
            ) {
                Ok(()) => Ok(()),
                Err(e) => {
                    failed = Err(e);
                    Err(())
                }
            }
        })
    })?;
    failed?;
    if !matches!(r, Ok(Ok(_))) {
        return Err(EINVAL);
    }
    // With the NIs of the parameters, their routes (`lnet_parse_routes`):
    // a bad one fails the startup, and takes the others with it.
    crate::route::apply_param(lnet).inspect_err(|_| {
        let _ = crate::route::del(lnet, None, None);
    })
}

/// Starts an NI of `net` on interface `iface` ("" lets LNet pick the first
/// interface that is up): its NID is the interface's IPv4 address.
fn add_ni(
    lnet: &TheLnet,
    net: Net,
    iface: &str,
    tunables: &NetTunables,
    lnd_tun: &LndTunables,
) -> Result {
    let find = || {
        let nis = lnet.nis.lock();
        nis.lnds
            .iter()
            .find(|l| l.lnd_type() == u32::from(net.lnd()))
            .copied()
    };
    let module = match net.lnd() {
        lnd::SOCK => Some(c_str!("ksocklnd")),
        lnd::O2IB => Some(c_str!("ko2iblnd")),
        _ => None,
    };
    // As Lustre's LNet, the LND of a net is loaded when the net is first
    // configured (no lock held: the LND's init registers it).
    let mut loaded = Ok(());
    let found = match (find(), module) {
        (None, Some(m)) => {
            loaded = crate::kapi::sys::request_module(m);
            find()
        }
        (f, _) => f,
    };
    let Some(l) = found else {
        let name = module.map_or("(none)", |m| m.to_str().unwrap_or("?"));
        match loaded {
            Err(rc) => pr_err!("Can't load LND {}, module {}, rc={}\n", net, name, rc),
            Ok(()) => pr_err!("Can't load LND {}, module {}: not registered\n", net, name),
        }
        return Err(ENODEV);
    };
    let mut found = [0u8; 16];
    let mut name = [0u8; 16];
    for (d, s) in name.iter_mut().take(15).zip(iface.bytes()) {
        *d = s;
    }
    // `name[15]` stays 0: always NUL-terminated.
    let name = core::ffi::CStr::from_bytes_until_nul(&name).map_err(|_| EINVAL)?;
    let addr = match crate::kapi::lnet_c::inet_addr(name, &mut found) {
        Ok(addr) => addr,
        Err(rc) => {
            let shown = if iface.is_empty() { "(any)" } else { iface };
            pr_err!("No usable IPv4 interface {} for {}: {}\n", shown, net, rc);
            return Err(Error::from_errno(rc));
        }
    };
    let n = found.iter().position(|&b| b == 0).unwrap_or(found.len());
    let iface = core::str::from_utf8(found.get(..n).unwrap_or(&[])).unwrap_or("");
    let nid = Nid::new4(net, addr);
    if lnet.nis.lock().nis.iter().any(|x| x.nid == nid) {
        pr_err!("{} on {} exists already\n", nid, iface);
        return Err(EEXIST);
    }
    start_ni(lnet, nid, Some(iface), l, tunables, lnd_tun)
}

/// `lnetctl net add`: NIs of `net` on each of `ifaces` (or on the first
/// interface that is up when none is named), with the tunables given (the
/// LND fills in the rest). Nothing is added if one fails.
pub(crate) fn net_add(
    lnet: &TheLnet,
    net: Net,
    ifaces: &[&str],
    tunables: &NetTunables,
    lnd_tun: &LndTunables,
) -> Result {
    let api = lnet.api.lock();
    if api.refcount == 0 {
        return Err(ENETDOWN());
    }
    let any: [&str; 1] = [""];
    let list = if ifaces.is_empty() { &any[..] } else { ifaces };
    let before = lnet.nis.lock().nis.len();
    for iface in list {
        if let Err(e) = add_ni(lnet, net, iface, tunables, lnd_tun) {
            // Undo this call's NIs.
            loop {
                let last = {
                    let nis = lnet.nis.lock();
                    if nis.nis.len() <= before {
                        None
                    } else {
                        nis.nis.last().cloned()
                    }
                };
                let Some(ni) = last else {
                    break;
                };
                remove_ni(lnet, &ni);
            }
            return Err(e);
        }
    }
    refresh_ping(lnet);
    // Told after the API mutex is dropped, in the order of the changes.
    let update = crate::nid_update::prepare(lnet, net, false);
    drop(api);
    crate::nid_update::deliver(lnet, update);
    Ok(())
}

/// `lnetctl net del`: the NIs of `net` on `ifaces`, or all of the net's.
pub(crate) fn net_del(lnet: &TheLnet, net: Net, ifaces: &[&str]) -> Result {
    let api = lnet.api.lock();
    if api.refcount == 0 {
        return Err(ENETDOWN());
    }
    if net == Net::LO {
        return Err(EINVAL);
    }
    let mut removed = 0;
    loop {
        let next = {
            let nis = lnet.nis.lock();
            nis.nis
                .iter()
                .find(|n| {
                    n.nid.net() == net
                        && (ifaces.is_empty() || ifaces.iter().any(|i| *i == n.iface()))
                })
                .cloned()
        };
        let Some(ni) = next else {
            break;
        };
        remove_ni(lnet, &ni);
        removed += 1;
    }
    let mut update = None;
    if removed > 0 {
        refresh_ping(lnet);
        update = crate::nid_update::prepare(lnet, net, true);
    }
    drop(api);
    crate::nid_update::deliver(lnet, update);
    if removed == 0 || (!ifaces.is_empty() && removed < ifaces.len()) {
        return Err(ENOENT);
    }
    Ok(())
}

/// Stops one NI (its LND finalizes what it holds) and forgets it.
fn remove_ni(lnet: &TheLnet, ni: &Arc<Ni>) {
    if ni.state.load(Ordering::Relaxed) != NiState::Deleting as u32 {
        let was_active = ni.is_active();
        ni.set_state(NiState::Deleting);
        // Its LND may wait for a receive a delay rule holds.
        crate::fault::release_all(lnet);
        // Requests it received that wait on lazy portals: their LND
        // context must go back to the LND before it stops.
        crate::portal::drop_delayed_on(lnet, ni);
        crate::router::drop_waiting_on(lnet, ni);
        crate::credits::drop_waiting(lnet, ni);
        ni.lnd_gate.close();
        if was_active {
            ni.lnd.shutdown(ni);
        }
    }
    vec::retain(&mut lnet.nis.lock().nis, |n| !Arc::ptr_eq(n, ni));
    pr_info!("Removed LNI {}\n", ni.nid);
}

/// Posts a new ping buffer listing the NIs now up, after NIs were added or
/// removed or one's fatal state changed, and pushes it to the Multi-Rail
/// peers (`lnet_push_update_to_peers`). The old one's MD keeps it while
/// it still sends a REPLY.
pub(crate) fn refresh_ping(lnet: &TheLnet) {
    let mut pings = lnet.pings.lock();
    if pings.current.is_none() {
        // LNet is down or coming up; startup posts the first buffer.
        return;
    }
    match crate::ping::target_start(lnet) {
        Ok(t) => {
            if let Some(old) = crate::ping::install(lnet, &mut pings, t) {
                crate::ping::target_stop(lnet, old);
            }
            drop(pings);
            crate::discovery::push_update(lnet, false);
        }
        Err(e) => pr_err!("Can't post the new ping buffer: {:?}\n", e),
    }
}

fn start_ni(
    lnet: &TheLnet,
    nid: Nid,
    iface: Option<&str>,
    lnd: LndRef,
    tunables: &NetTunables,
    lnd_tun: &LndTunables,
) -> Result {
    let ni = Arc::new(Ni::new(nid, iface, lnd, tunables), GFP_KERNEL)?;
    // For the LND's startup to read (`lnet_ni_lnd_tunables`).
    ni.tunables.set_lnd(lnd_tun);
    let mut nis = lnet.nis.lock();
    nis.nis.push(ni.clone(), GFP_ATOMIC)?;
    drop(nis);
    if let Err(e) = lnd.startup(&ni) {
        pr_err!("Failed to start {}: {:?}\n", nid, e);
        vec::retain(&mut lnet.nis.lock().nis, |n| !Arc::ptr_eq(n, &ni));
        return Err(e);
    }
    crate::udsp::apply_new_ni(lnet, &ni);
    ni.dev_node.store(
        crate::numa::netdev_node(ni.iface()),
        core::sync::atomic::Ordering::Relaxed,
    );
    ni.set_state(NiState::Active);
    pr_info!("Added LNI {} {}\n", nid, ni.iface());
    Ok(())
}

/// Stops every NI: the LND finalizes what it holds. The NIs stay listed
/// until [`forget_nis`], so messages inside LNDs can still end normally.
fn stop_nis(lnet: &TheLnet) {
    let mut i = 0;
    loop {
        let ni = lnet.nis.lock().nis.get(i).cloned();
        let Some(ni) = ni else {
            break;
        };
        i += 1;
        if ni.state.load(Ordering::Relaxed) != NiState::Deleting as u32 {
            let was_active = ni.is_active();
            ni.set_state(NiState::Deleting);
            crate::router::drop_waiting_on(lnet, &ni);
            crate::credits::drop_waiting(lnet, &ni);
            ni.lnd_gate.close();
            if was_active {
                ni.lnd.shutdown(&ni);
                pr_info!("Removed LNI {}\n", ni.nid);
            }
        }
    }
}

fn forget_nis(lnet: &TheLnet) {
    // Each taken out before it is dropped, never under the lock.
    loop {
        let ni = vec::pop(&mut lnet.nis.lock().nis);
        let Some(ni) = ni else {
            break;
        };
        drop(ni);
    }
}

/// `LNetNIFini`.
pub(crate) fn ni_fini(lnet: &TheLnet) -> Result {
    let mut api = lnet.api.lock();
    if api.refcount == 0 {
        return Err(ENETDOWN());
    }
    api.refcount -= 1;
    if api.refcount == 0 {
        api.dev_ref = false;
        shutdown(lnet, &mut api);
    }
    Ok(())
}

/// Takes LNet down, ending every message with an event.
pub(crate) fn shutdown(lnet: &TheLnet, api: &mut crate::state::Api) {
    {
        // Under the resource lock, so no send attaches to an MD after this.
        let _res = lnet.res.lock();
        lnet.running.store(false, Ordering::Release);
    }
    drop(api.monitor.take());
    drop(api.discovery.take());
    // Messages waiting for discovery end now.
    crate::discovery::stop(lnet);
    // Resends queued for the monitor thread end now.
    crate::health::resends_open(lnet, false);
    // Held messages go on, while their NIs can still take them.
    crate::fault::fini(lnet);
    // Requests waiting on lazy portals will not be matched now.
    crate::portal::drop_delayed(lnet, None);
    // Nothing more is forwarded; what waits for a router buffer goes.
    crate::router::shutdown(lnet);
    // No ACK or REPLY can come any more.
    monitor::expire_responses(lnet, true);
    stop_nis(lnet);
    // Until every message has ended, however long an LND takes and
    // whatever signal the caller gets: the ping buffers and MDs freed
    // below may still be in use by a message. A warning every DRAIN_SECS.
    let start = crate::kapi::kthread::now_secs();
    let mut warn_at = start.saturating_add(i64::from(DRAIN_SECS));
    while lnet.msgs_in_flight.load(Ordering::Acquire) != 0 {
        let now = crate::kapi::kthread::now_secs();
        if now >= warn_at {
            pr_warn!(
                "Waiting for LNDs to end {} message(s) ({}s so far)\n",
                lnet.msgs_in_flight.load(Ordering::Acquire),
                now.saturating_sub(start)
            );
            warn_at = now.saturating_add(i64::from(DRAIN_SECS));
        }
        crate::kapi::kthread::msleep(100);
    }
    forget_nis(lnet);
    // Nothing is in flight: the push and ping buffers can go.
    crate::push::stop(lnet);
    let mut pings = lnet.pings.lock();
    crate::ping::uninstall(lnet);
    if let Some(t) = pings.current.take() {
        crate::ping::target_stop(lnet, t);
    }
    drop(pings);
    unlink_all(lnet);
    // Every peer goes with LNet, as Lustre's lnet_peer_tables_cleanup
    // deletes them: a restarted LNet learns them afresh, at full health
    // and with no preferred NI, and `peer show` lists what it made since.
    let peers = core::mem::take(&mut *lnet.peers.lock());
    crate::credits::forget_peer_nis(lnet);
    drop(peers);
    // Rules go with the LNet they were added to.
    crate::udsp::clear(lnet);
    pr_info!("LNet down\n");
}

/// Unlinks what the caller left behind: MDs (their owners get UNLINK
/// events) and MEs.
fn unlink_all(lnet: &TheLnet) {
    let mut count = 0u32;
    loop {
        let first = lnet
            .res
            .lock()
            .mds
            .iter()
            .find(|(_, md)| !md.is_zombie())
            .map(|(c, _)| *c);
        let Some(cookie) = first else {
            break;
        };
        let _ = crate::api::md_unlink(lnet, cookie, false, ESHUTDOWN().to_errno());
        count += 1;
    }
    let mut res = lnet.res.lock();
    let mes = res.mes.iter().count();
    while let Some(c) = res.mes.iter().next().map(|(c, _)| *c) {
        res.me_remove(c);
    }
    let zombies = res.mds.iter().count();
    drop(res);
    if count > 0 || mes > 0 {
        pr_warn!(
            "Unlinked {} MD(s) and {} ME(s) left at shutdown\n",
            count,
            mes
        );
    }
    if zombies > 0 {
        pr_err!("{} MD(s) still referenced at shutdown\n", zombies);
    }
}
