// SPDX-License-Identifier: GPL-2.0

//! /dev/lnet: the ioctls lnetctl uses (include/uapi/linux/lnet/
//! lnet-rs-ioctl.h). Every argument is checked before anything changes: its
//! length and version, its padding, its strings and values. Every ioctl,
//! a read as much as a change, needs CAP_SYS_ADMIN (-EACCES), as Lustre's
//! `lnet_psdev_ioctl` does: a ping or a discovery makes the kernel create
//! peers and open connections from privileged ports, which Lustre servers
//! trust as root's.

use crate::kapi::bindings::{
    lnet_ioc_config, lnet_ioc_fault, lnet_ioc_globals, lnet_ioc_health, lnet_ioc_net_cfg,
    lnet_ioc_ni, lnet_ioc_nid, lnet_ioc_peer, lnet_ioc_peer_cfg, lnet_ioc_peer_ni, lnet_ioc_ping,
    lnet_ioc_recovery, lnet_ioc_route, lnet_ioc_routing, lnet_ioc_stats, lnet_ioc_udsp,
    lnet_ioc_value, LNET_IOC_VERSION,
};
use crate::kapi::errno;
use crate::kapi::lnet_abi::bytes_of;
use crate::lnet_core::credits::{NetTunables, TxCredits};
use crate::lnet_core::lnd_tunables::LndTunables;
use crate::lnet_core::nid::Nid;
use crate::ni::Ni;
use crate::state::TheLnet;
use crate::{params, ping, startup};
use core::ffi::{c_long, c_uint, c_ulong};
use core::mem::size_of;
use kernel::prelude::*;
use kernel::sync::Mutex;
use kernel::types::{AsBytes, FromBytes};
use kernel::uaccess::UserSlice;

/// `_IOWR('e', nr, size)`.
const fn iowr(nr: u32, size: usize) -> u32 {
    (3 << 30) | ((size as u32 & 0x3fff) << 16) | ((b'e' as u32) << 8) | nr
}

const CONFIGURE: u32 = iowr(0xc0, size_of::<lnet_ioc_config>());
const UNCONFIGURE: u32 = iowr(0xc1, size_of::<lnet_ioc_config>());
const NET_ADD: u32 = iowr(0xc2, size_of::<lnet_ioc_net_cfg>());
const NET_DEL: u32 = iowr(0xc3, size_of::<lnet_ioc_net_cfg>());
const GET_NI: u32 = iowr(0xc4, size_of::<lnet_ioc_ni>());
const SET_NI_HEALTH: u32 = iowr(0xc5, size_of::<lnet_ioc_health>());
const PEER_ADD: u32 = iowr(0xc6, size_of::<lnet_ioc_peer_cfg>());
const PEER_DEL: u32 = iowr(0xc7, size_of::<lnet_ioc_peer_cfg>());
const GET_PEER: u32 = iowr(0xc8, size_of::<lnet_ioc_peer>());
const GET_PEER_NI: u32 = iowr(0xc9, size_of::<lnet_ioc_peer_ni>());
const SET_PEER_NI_HEALTH: u32 = iowr(0xca, size_of::<lnet_ioc_health>());
const GET_STATS: u32 = iowr(0xcb, size_of::<lnet_ioc_stats>());
const GET_RECOVERY_QUEUE: u32 = iowr(0xcc, size_of::<lnet_ioc_recovery>());
const PING: u32 = iowr(0xcd, size_of::<lnet_ioc_ping>());
const SET_NUMA_RANGE: u32 = iowr(0xce, size_of::<lnet_ioc_value>());
const GET_GLOBALS: u32 = iowr(0xcf, size_of::<lnet_ioc_globals>());
const FAULT_ADD: u32 = iowr(0xd0, size_of::<lnet_ioc_fault>());
const FAULT_DEL: u32 = iowr(0xd1, size_of::<lnet_ioc_fault>());
const FAULT_RESET: u32 = iowr(0xd2, size_of::<lnet_ioc_fault>());
const FAULT_LIST: u32 = iowr(0xd3, size_of::<lnet_ioc_fault>());
const UDSP_ADD: u32 = iowr(0xd4, size_of::<lnet_ioc_udsp>());
const UDSP_DEL: u32 = iowr(0xd5, size_of::<lnet_ioc_udsp>());
const UDSP_GET: u32 = iowr(0xd6, size_of::<lnet_ioc_udsp>());
const DISCOVER: u32 = iowr(0xd7, size_of::<lnet_ioc_ping>());
const ROUTE_ADD: u32 = iowr(0xd8, size_of::<lnet_ioc_route>());
const ROUTE_DEL: u32 = iowr(0xd9, size_of::<lnet_ioc_route>());
const GET_ROUTE: u32 = iowr(0xda, size_of::<lnet_ioc_route>());
const SET_ROUTING: u32 = iowr(0xdb, size_of::<lnet_ioc_routing>());
const SET_BUFFERS: u32 = iowr(0xdc, size_of::<lnet_ioc_routing>());
const GET_ROUTING: u32 = iowr(0xdd, size_of::<lnet_ioc_routing>());

const CFG_LOAD_NETWORKS: u32 = 1;
const TUNABLE_DEFAULT: u32 = u32::MAX;
/// Largest wait a ping may ask for.
const PING_MAX_MS: u32 = 600_000;

/// A structure of the ioctl ABI: only integers and arrays of them, with
/// every hole a named field (kapi::lnet_abi implements the byte traits).
trait Ioc: Default + FromBytes + AsBytes {}
impl<T: Default + FromBytes + AsBytes> Ioc for T {}

/// Copies the argument in and checks its header (length, then version).
fn read<T: Ioc>(arg: usize) -> Result<T> {
    let v: T = UserSlice::new(arg, size_of::<T>()).reader().read()?;
    check_hdr(bytes_of(&v), size_of::<T>())?;
    Ok(v)
}

fn check_hdr(b: &[u8], size: usize) -> Result {
    let word = |at: usize| {
        b.get(at..at + 4)
            .and_then(|w| w.try_into().ok())
            .map(u32::from_ne_bytes)
            .ok_or(EINVAL)
    };
    if word(0)? as usize != size {
        return Err(EINVAL);
    }
    if word(4)? != LNET_IOC_VERSION {
        return Err(errno::EPROTO());
    }
    Ok(())
}

fn write<T: Ioc>(arg: usize, v: &T) -> Result {
    UserSlice::new(arg, size_of::<T>()).writer().write(v)
}

fn need_admin() -> Result {
    if crate::kapi::sys::capable_sys_admin() {
        Ok(())
    } else {
        Err(EACCES)
    }
}

fn need_up(lnet: &TheLnet) -> Result {
    if lnet.is_running() {
        Ok(())
    } else {
        Err(errno::ENETDOWN())
    }
}

fn nid_to_ioc(n: &Nid) -> lnet_ioc_nid {
    let c = crate::kapi::lnet_abi::nid_to_c(n);
    lnet_ioc_nid {
        nid_size: c.nid_size,
        nid_type: c.nid_type,
        nid_num: c.nid_num,
        nid_addr: c.nid_addr,
    }
}

pub(crate) fn nid_from_ioc(n: &lnet_ioc_nid) -> Result<Nid> {
    let c = crate::kapi::bindings::lnet_nid {
        nid_size: n.nid_size,
        nid_type: n.nid_type,
        nid_num: n.nid_num,
        nid_addr: n.nid_addr,
    };
    crate::kapi::lnet_abi::nid_from_c(&c)
}

/// What an open /dev/lnet keeps: the last ping reply, for paging.
#[pin_data]
struct FileState {
    #[pin]
    ping: Mutex<Option<PingCache>>,
}

struct PingCache {
    target: Nid,
    source: Nid,
    timeout_ms: u32,
    reply: ping::Reply,
}

/// The state of an open /dev/lnet, made by lnet_dev.c's open (which keeps
/// it as the file's private data); `None` (null) when out of memory, which
/// open answers with -ENOMEM.
#[no_mangle]
extern "C" fn lnet_dev_state_new() -> Option<Pin<KBox<FileState>>> {
    KBox::pin_init(
        pin_init!(FileState {
            ping <- kernel::new_mutex!(None, "lnet_dev_ping"),
        }),
        GFP_KERNEL,
    )
    .ok()
}

/// Frees an open file's state: lnet_dev.c's release passes what
/// [`lnet_dev_state_new`] made for it, once, after the file's last ioctl.
#[no_mangle]
extern "C" fn lnet_dev_state_free(state: Option<Pin<KBox<FileState>>>) {
    drop(state);
}

/// An ioctl on an open /dev/lnet: lnet_dev.c passes the state
/// [`lnet_dev_state_new`] made for the file, which release frees only after
/// the file's last ioctl.
#[no_mangle]
extern "C" fn lnet_dev_state_ioctl(state: Option<&FileState>, cmd: c_uint, arg: c_ulong) -> c_long {
    let r = match (TheLnet::get(), state) {
        (Some(lnet), Some(st)) => dispatch(lnet, st, cmd, arg as usize),
        _ => Err(ENODEV),
    };
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno() as c_long,
    }
}

fn dispatch(lnet: &'static TheLnet, st: &FileState, cmd: u32, arg: usize) -> Result {
    need_admin()?;
    if crate::lnet_core::libcfs_ioctl::is_libcfs(cmd) {
        return crate::libcfs_ioctl::ioctl(lnet, cmd, arg);
    }
    match cmd {
        CONFIGURE => {
            let c: lnet_ioc_config = read(arg)?;
            if c.cfg_padding != 0 || c.cfg_flags & !CFG_LOAD_NETWORKS != 0 {
                return Err(EINVAL);
            }
            startup::dev_configure(lnet, c.cfg_flags & CFG_LOAD_NETWORKS != 0)
        }
        UNCONFIGURE => {
            let c: lnet_ioc_config = read(arg)?;
            if c.cfg_padding != 0 || c.cfg_flags != 0 {
                return Err(EINVAL);
            }
            startup::dev_unconfigure(lnet)
        }
        GET_NI => {
            let mut n: lnet_ioc_ni = read(arg)?;
            need_up(lnet)?;
            let ni = lnet.nis.lock().nis.get(n.ni_idx as usize).cloned();
            let ni = ni.ok_or(ENOENT)?;
            fill_ni(&mut n, &ni);
            write(arg, &n)
        }
        GET_STATS => {
            let mut s: lnet_ioc_stats = read(arg)?;
            need_up(lnet)?;
            fill_stats(&mut s, lnet);
            write(arg, &s)
        }
        PING => {
            let mut p: lnet_ioc_ping = read(arg)?;
            need_up(lnet)?;
            do_ping(lnet, st, &mut p)?;
            write(arg, &p)
        }
        DISCOVER => {
            let mut p: lnet_ioc_ping = read(arg)?;
            need_up(lnet)?;
            do_discover(lnet, &mut p)?;
            write(arg, &p)
        }
        SET_NUMA_RANGE => {
            let v: lnet_ioc_value = read(arg)?;
            if v.val_padding != 0 {
                return Err(EINVAL);
            }
            params::set_numa_range(v.val_value);
            Ok(())
        }
        GET_GLOBALS => {
            let mut g: lnet_ioc_globals = read(arg)?;
            let t = params::snapshot();
            g.gl_numa_range = t.numa_range;
            g.gl_lnd_timeout = t.lnd_timeout;
            write(arg, &g)
        }
        FAULT_ADD | FAULT_DEL | FAULT_RESET | FAULT_LIST => {
            let mut f: lnet_ioc_fault = read(arg)?;
            need_up(lnet)?;
            fault_cmd(lnet, cmd, &mut f)?;
            write(arg, &f)
        }
        PEER_ADD | PEER_DEL => {
            let c: lnet_ioc_peer_cfg = read(arg)?;
            need_up(lnet)?;
            peer_cfg(lnet, &c, cmd == PEER_ADD)
        }
        GET_PEER => {
            let mut p: lnet_ioc_peer = read(arg)?;
            need_up(lnet)?;
            if p.pr_padding != 0 {
                return Err(EINVAL);
            }
            fill_peer(lnet, p.pr_idx as usize, &mut p)?;
            write(arg, &p)
        }
        GET_PEER_NI => {
            let mut p: lnet_ioc_peer_ni = read(arg)?;
            need_up(lnet)?;
            let prim = nid_from_ioc(&p.pn_prim_nid)?;
            fill_peer_ni(lnet, &prim, p.pn_idx as usize, &mut p)?;
            write(arg, &p)
        }
        SET_NI_HEALTH | SET_PEER_NI_HEALTH => {
            let h: lnet_ioc_health = read(arg)?;
            need_up(lnet)?;
            set_health(lnet, &h, cmd == SET_NI_HEALTH)
        }
        NET_ADD | NET_DEL => {
            let c: lnet_ioc_net_cfg = read(arg)?;
            need_up(lnet)?;
            net_cfg(lnet, &c, cmd == NET_ADD)
        }
        UDSP_ADD | UDSP_DEL | UDSP_GET => {
            let op = match cmd {
                UDSP_ADD => crate::udsp::Op::Add,
                UDSP_DEL => crate::udsp::Op::Del,
                _ => crate::udsp::Op::Get,
            };
            // 1.5 KiB: on the heap, not the ioctl's stack.
            let mut u = KBox::new(read::<lnet_ioc_udsp>(arg)?, GFP_KERNEL)?;
            need_up(lnet)?;
            crate::udsp::ioctl(lnet, op, &mut u)?;
            write(arg, &*u)
        }
        ROUTE_ADD | ROUTE_DEL | GET_ROUTE => {
            need_up(lnet)?;
            let mut r: lnet_ioc_route = read(arg)?;
            route_cmd(lnet, cmd, &mut r)?;
            write(arg, &r)
        }
        SET_ROUTING | SET_BUFFERS | GET_ROUTING => {
            let mut r: lnet_ioc_routing = read(arg)?;
            need_up(lnet)?;
            routing_cmd(lnet, cmd, &mut r)?;
            write(arg, &r)
        }
        GET_RECOVERY_QUEUE => {
            let mut q: lnet_ioc_recovery = read(arg)?;
            need_up(lnet)?;
            recovery_queue(lnet, &mut q)?;
            write(arg, &q)
        }
        _ => Err(ENOTTY),
    }
}

pub(crate) fn fill_ni(n: &mut lnet_ioc_ni, ni: &Ni) {
    use core::sync::atomic::Ordering::Relaxed;
    n.ni_status = u32::from(ni.reports_up());
    n.ni_nid = nid_to_ioc(&ni.nid);
    n.ni_fatal_error = u32::from(ni.is_fatal());
    // Lustre never sets the loopback NI's health (lnet_startup_lndni returns
    // before it does), so its lnetctl shows 0 there; ours is never used.
    n.ni_health_value = if ni.nid == Nid::LO {
        0
    } else {
        ni.health.load(Relaxed)
    };
    n.ni_hs_interrupts = ni.hstats.interrupts.load(Relaxed);
    n.ni_hs_dropped = ni.hstats.dropped.load(Relaxed);
    n.ni_hs_aborted = ni.hstats.aborted.load(Relaxed);
    n.ni_hs_no_route = ni.hstats.no_route.load(Relaxed);
    n.ni_hs_timeouts = ni.hstats.timeouts.load(Relaxed);
    n.ni_hs_error = ni.hstats.error.load(Relaxed);
    n.ni_ping_count = ni.recovery.ping_count.load(Relaxed);
    n.ni_next_ping = ni.recovery.next_ping.load(Relaxed) as u64;
    n.ni_intf = [0; 16];
    for (d, s) in n.ni_intf.iter_mut().zip(ni.iface().bytes()) {
        *d = s;
    }
    let (sent, received, dropped) = (
        ni.sent.snapshot(),
        ni.received.snapshot(),
        ni.dropped.snapshot(),
    );
    n.ni_send_count = sent.sum();
    n.ni_recv_count = received.sum();
    n.ni_drop_count = dropped.sum();
    n.ni_sent_stats = sent.0;
    n.ni_received_stats = received.0;
    n.ni_dropped_stats = dropped.0;
    // As configured and completed by the LND; -1 (not applicable) shows
    // as the ioctl's "default" marker.
    let shown = |v: i32| if v < 0 { TUNABLE_DEFAULT } else { v as u32 };
    let t = ni.net_tunables();
    n.ni_peer_timeout = t.peer_timeout.max(0) as u32;
    n.ni_peer_credits = t.peer_credits.max(0) as u32;
    n.ni_peer_buffer_credits = t.peer_buffer_credits.max(0) as u32;
    n.ni_credits = t.credits.max(0) as u32;
    let own = &ni.tunables;
    for (x, v) in [
        &mut n.ni_lnd_peercredits_hiw,
        &mut n.ni_lnd_map_on_demand,
        &mut n.ni_lnd_concurrent_sends,
        &mut n.ni_lnd_fmr_pool_size,
        &mut n.ni_lnd_fmr_flush_trigger,
        &mut n.ni_lnd_fmr_cache,
        &mut n.ni_lnd_ntx,
    ]
    .into_iter()
    .zip(own.o2ib.iter())
    {
        *x = shown(v.load(Relaxed));
    }
    n.ni_lnd_conns_per_peer = shown(own.conns_per_peer.load(Relaxed));
    n.ni_lnd_timeout = shown(own.lnd_timeout.load(Relaxed));
    // TOS -1 ("system default") and "not applicable" share the marker,
    // which lnetctl prints as -1.
    n.ni_lnd_tos = shown(own.tos.load(Relaxed));
    n.ni_net_priority = ni.net_priority.load(Relaxed);
    n.ni_nid_priority = ni.sel_priority.load(Relaxed);
    // A CPT is a NUMA node here (numa.rs); -1: unknown.
    n.ni_dev_cpt = ni.dev_node.load(Relaxed) as u32;
    n.ni_ncpts = 1;
    n.ni_cpts = [0; 128];
}

/// A NUL-terminated name in a fixed array, as UTF-8.
fn name(b: &[u8]) -> Result<&str> {
    let n = b.iter().position(|&c| c == 0).ok_or(EINVAL)?;
    // Bytes after the NUL must be zero too, for later versions.
    if b.iter().skip(n).any(|&c| c != 0) {
        return Err(EINVAL);
    }
    core::str::from_utf8(b.get(..n).ok_or(EINVAL)?).map_err(|_| EINVAL)
}

/// `lnetctl net add|del`. The tunables given to add apply to the new NIs
/// (per NI: each is its own rail); those left out take the LND's values.
/// `conns_per_peer` is accepted only as the 1 connection per peer ksocklnd
/// runs with, so an exported configuration imports back.
fn net_cfg(lnet: &TheLnet, c: &lnet_ioc_net_cfg, add: bool) -> Result {
    let net = crate::lnet_core::nid::Net::parse(name(&c.nc_net)?).map_err(|_| EINVAL)?;
    let n = c.nc_nintf as usize;
    if n > c.nc_intf.len() {
        return Err(EINVAL);
    }
    let mut ifaces: KVec<&str> = KVec::with_capacity(n, GFP_KERNEL)?;
    for (i, raw) in c.nc_intf.iter().enumerate() {
        if i < n {
            let s = name(raw)?;
            if s.is_empty() {
                return Err(EINVAL);
            }
            ifaces.push(s, GFP_KERNEL)?;
        } else if raw.iter().any(|&b| b != 0) {
            return Err(EINVAL);
        }
    }
    let tunables = NetTunables {
        peer_timeout: c.nc_peer_timeout as i32,
        peer_credits: c.nc_peer_credits as i32,
        peer_buffer_credits: c.nc_peer_buffer_credits as i32,
        credits: c.nc_credits as i32,
    };
    let conns_ok = c.nc_conns_per_peer == TUNABLE_DEFAULT || (add && c.nc_conns_per_peer == 1);
    let unset = tunables == NetTunables::UNSET;
    if let Err(e) = tunables.validate() {
        pr_warn!("net {}: {}\n", net, e);
        return Err(EINVAL);
    }
    if !conns_ok || (!add && !unset) {
        pr_warn!("net {}: tunables cannot be applied here\n", net);
        return Err(EINVAL);
    }
    if add {
        startup::net_add(lnet, net, &ifaces, &tunables, &LndTunables::UNSET)
    } else {
        startup::net_del(lnet, net, &ifaces)
    }
}

/// `lnetctl route add|del|show` (lnet-rs-ioctl.h's route commands).
/// `lnetctl set routing`, `set tiny_buffers`... and `routing show`
/// (router.rs), serialised with configuration as Lustre's are.
fn routing_cmd(lnet: &TheLnet, cmd: u32, r: &mut lnet_ioc_routing) -> Result {
    let pools_zero = r.rtr_pools.iter().all(|p| {
        p.rp_npages == 0 && p.rp_nbuffers == 0 && p.rp_credits == 0 && p.rp_mincredits == 0
    });
    let buffers_zero = r.rtr_buffers.iter().all(|&b| b == 0);
    let _api = lnet.api.lock();
    match cmd {
        SET_ROUTING => {
            if r.rtr_enable > 1 || !buffers_zero || !pools_zero {
                return Err(EINVAL);
            }
            if r.rtr_enable == 1 {
                // Checked under `api`: a shutdown between need_up and here
                // would leave routing on for the next start.
                need_up(lnet)?;
                crate::router::enable(lnet)
            } else {
                crate::router::disable(lnet);
                Ok(())
            }
        }
        SET_BUFFERS => {
            if r.rtr_enable != 0 || !pools_zero {
                return Err(EINVAL);
            }
            // s32 values in u32 fields (the ABI's rule).
            let counts = r.rtr_buffers.map(|b| b as i32);
            crate::router::adjust_buffers(lnet, counts)
        }
        _ => {
            if r.rtr_enable != 0 || !buffers_zero || !pools_zero {
                return Err(EINVAL);
            }
            let (pools, routing) = crate::router::show(lnet).ok_or(ENOENT)?;
            r.rtr_enable = u32::from(routing);
            for (o, p) in r.rtr_pools.iter_mut().zip(pools.iter()) {
                o.rp_npages = p.npages;
                o.rp_nbuffers = p.nbuffers;
                o.rp_credits = p.credits as u32;
                o.rp_mincredits = p.mincredits as u32;
            }
            Ok(())
        }
    }
}

fn route_cmd(lnet: &TheLnet, cmd: u32, r: &mut lnet_ioc_route) -> Result {
    use crate::lnet_core::nid::Net;
    use crate::lnet_core::route::{route_flags, RouteSpec};
    let err = |e: crate::lnet_core::route::RouteError| Error::from_errno(e.errno());
    match cmd {
        ROUTE_ADD => {
            if r.rt_idx != 0 || r.rt_flags != 0 {
                return Err(EINVAL);
            }
            let spec = RouteSpec {
                hops: r.rt_hops,
                priority: r.rt_priority,
                ..RouteSpec::new(Net::from_u32(r.rt_net), nid_from_ioc(&r.rt_gateway)?)
            };
            let _api = lnet.api.lock();
            crate::route::add(lnet, &spec).map_err(err)
        }
        ROUTE_DEL => {
            if r.rt_idx != 0 || r.rt_flags != 0 || r.rt_hops != 0 || r.rt_priority != 0 {
                return Err(EINVAL);
            }
            let net = (r.rt_net != u32::MAX).then(|| Net::from_u32(r.rt_net));
            let gw = nid_from_ioc(&r.rt_gateway)?;
            let gw = (!gw.is_any()).then_some(gw);
            let _api = lnet.api.lock();
            crate::route::del(lnet, net, gw).map(|_| ()).map_err(err)
        }
        _ => {
            let (route, up) = crate::route::get(lnet, r.rt_idx as usize).map_err(err)?;
            r.rt_net = route.net.as_u32();
            r.rt_gateway = nid_to_ioc(&route.gateway);
            r.rt_hops = route.hops;
            r.rt_priority = route.priority;
            r.rt_flags = route_flags(0, up, route.single_hop);
            Ok(())
        }
    }
}

/// `lnetctl debug recovery --local|--peer`: a page of the queue.
fn recovery_queue(lnet: &TheLnet, q: &mut lnet_ioc_recovery) -> Result {
    use core::sync::atomic::Ordering::Relaxed;
    let mut all = KVec::new();
    match q.rq_type {
        0 => {
            let nis = lnet.nis.lock();
            for ni in nis.nis.iter().filter(|n| n.recovery.queued.load(Relaxed)) {
                all.push(ni.nid, GFP_ATOMIC)?;
            }
        }
        1 => {
            let peers = lnet.peers.lock();
            for p in peers.list.iter().flat_map(|p| p.nis.iter()) {
                if p.recovery.queued {
                    all.push(p.nid, GFP_ATOMIC)?;
                }
            }
        }
        _ => return Err(EINVAL),
    }
    q.rq_total = all.len() as u32;
    q.rq_count = 0;
    q.rq_nids = [lnet_ioc_nid::default(); 32];
    for (slot, nid) in q
        .rq_nids
        .iter_mut()
        .zip(all.iter().skip(q.rq_start as usize))
    {
        *slot = nid_to_ioc(nid);
        q.rq_count += 1;
    }
    Ok(())
}

const HEALTH_ALL: u32 = 1;

/// `lnetctl net|peer set --health` (health.md §9). Lustre's ioctl path
/// turns a value outside 0..=1000 into 1000 and its netlink path stores it
/// unclamped; we refuse it with EINVAL and change nothing, as every
/// out-of-range argument of this ABI is refused.
fn set_health(lnet: &TheLnet, h: &lnet_ioc_health, local: bool) -> Result {
    if h.hv_padding != 0 || h.hv_flags & !HEALTH_ALL != 0 {
        return Err(EINVAL);
    }
    let all = h.hv_flags & HEALTH_ALL != 0;
    let value = h.hv_value;
    if value > crate::lnet_core::health::MAX_HEALTH {
        return Err(EINVAL);
    }
    let nid = if all {
        None
    } else {
        Some(nid_from_ioc(&h.hv_nid)?)
    };
    if local {
        set_ni_health(lnet, nid, value)
    } else {
        set_peer_health(lnet, nid, value)
    }
}

/// `net set --health`, by ioctl or netlink: the health value (at most
/// `MAX_HEALTH`) of the local NI `nid`, or of every NI but 0@lo (`None`).
/// A NID that is no local NI is ENOENT (Lustre changes nothing and
/// succeeds).
pub(crate) fn set_ni_health(lnet: &TheLnet, nid: Option<Nid>, value: u32) -> Result {
    use core::sync::atomic::Ordering::Relaxed;
    if value > crate::lnet_core::health::MAX_HEALTH {
        return Err(EINVAL);
    }
    let mut found = false;
    let nis = lnet.nis.lock();
    for ni in nis
        .nis
        .iter()
        .filter(|n| n.nid != Nid::LO && nid.map_or(true, |x| n.nid == x))
    {
        ni.health.store(value, Relaxed);
        // Queued with no wait: the next monitor pass pings it. Said on the
        // console as Lustre's `lnet_ni_set_healthv` says it.
        if value < crate::lnet_core::health::MAX_HEALTH && ni.recovery.queue_at(0) {
            crate::cerror!("manually adding local NI {} to recovery\n", ni.nid);
        }
        // The status follows a value set by hand at either end
        // (`lnet_ni_set_healthv`): 0 reports the NI down, 1000 up.
        if value == 0 || value == crate::lnet_core::health::MAX_HEALTH {
            crate::health::ni_set_status(lnet, ni, value != 0, value);
        }
        found = true;
    }
    if found || nid.is_none() {
        Ok(())
    } else {
        Err(ENOENT)
    }
}

/// `peer set --health`, by ioctl or netlink: the health value (at most
/// `MAX_HEALTH`) of the peer NI `nid`, or of every peer NI (`None`).
pub(crate) fn set_peer_health(lnet: &TheLnet, nid: Option<Nid>, value: u32) -> Result {
    if value > crate::lnet_core::health::MAX_HEALTH {
        return Err(EINVAL);
    }
    let mut found = false;
    let mut peers = lnet.peers.lock();
    for p in peers.list.iter_mut().flat_map(|p| p.nis.iter_mut()) {
        if nid.is_none() || nid == Some(p.nid) {
            p.health = value;
            p.offer_recovery(crate::kapi::kthread::now_secs());
            found = true;
        }
    }
    if found || nid.is_none() {
        Ok(())
    } else {
        Err(ENOENT)
    }
}

const PEER_NON_MR: u32 = 1;
const PEER_LOCK_PRIM: u32 = 2;
const PEER_FORCE: u32 = 4;

fn peer_cfg(lnet: &TheLnet, c: &lnet_ioc_peer_cfg, add: bool) -> Result {
    if c.pc_padding != 0 || c.pc_flags & !(PEER_NON_MR | PEER_LOCK_PRIM | PEER_FORCE) != 0 {
        return Err(EINVAL);
    }
    let n = c.pc_nnids as usize;
    if n > c.pc_nids.len() {
        return Err(EINVAL);
    }
    // Unused slots must be zero, for later versions.
    let zero = |x: &lnet_ioc_nid| {
        x.nid_size == 0 && x.nid_type == 0 && x.nid_num == 0 && x.nid_addr == [0; 4]
    };
    if !c.pc_nids.iter().skip(n).all(zero) {
        return Err(EINVAL);
    }
    let prim = nid_from_ioc(&c.pc_prim_nid)?;
    let mut nids = KVec::with_capacity(n, GFP_KERNEL)?;
    for x in c.pc_nids.iter().take(n) {
        nids.push(nid_from_ioc(x)?, GFP_KERNEL)?;
    }
    if add {
        peer_add(
            lnet,
            &prim,
            &nids,
            c.pc_flags & PEER_NON_MR == 0,
            c.pc_flags & PEER_LOCK_PRIM != 0,
        )
    } else {
        peer_del(lnet, &prim, &nids, c.pc_flags & PEER_FORCE != 0)
    }
}

/// `peer add`, by ioctl or netlink: the peer `prim` configured with `nids`
/// added (lnet/peer.rs `add`); neither may be the any NID or 0@lo.
pub(crate) fn peer_add(
    lnet: &TheLnet,
    prim: &Nid,
    nids: &[Nid],
    multi_rail: bool,
    lock: bool,
) -> Result {
    if Iterator::chain(core::iter::once(prim), nids).any(|n| n.is_any() || *n == Nid::LO) {
        return Err(EINVAL);
    }
    lnet.peers.lock().add(prim, nids, multi_rail, lock)?;
    crate::udsp::apply_new_peers(lnet);
    Ok(())
}

/// `peer del`, by ioctl or netlink: `nids` taken from the peer `prim`, or
/// the whole peer when `nids` is empty.
pub(crate) fn peer_del(lnet: &TheLnet, prim: &Nid, nids: &[Nid], force: bool) -> Result {
    if Iterator::chain(core::iter::once(prim), nids).any(|n| n.is_any() || *n == Nid::LO) {
        return Err(EINVAL);
    }
    lnet.peers.lock().del(prim, nids, force)
}

/// The `idx`th peer as GET_PEER reports it (ENOENT past the last); the
/// `lnet` netlink family's `peer show` reports the same.
pub(crate) fn fill_peer(lnet: &TheLnet, idx: usize, p: &mut lnet_ioc_peer) -> Result {
    let peers = lnet.peers.lock();
    let peer = peers.list.get(idx).ok_or(ENOENT)?;
    p.pr_nnis = peer.nis.len() as u32;
    p.pr_prim_nid = nid_to_ioc(&peer.primary);
    p.pr_multi_rail = u32::from(peer.multi_rail);
    p.pr_state = peer.lp_state();
    Ok(())
}

/// The `idx`th NI of the peer whose primary NID is `prim`, as GET_PEER_NI
/// reports it (ENOENT if no such peer or NI); the netlink `peer show`
/// reports the same.
pub(crate) fn fill_peer_ni(
    lnet: &TheLnet,
    prim: &Nid,
    idx: usize,
    p: &mut lnet_ioc_peer_ni,
) -> Result {
    // Peer NIs traffic created show the rules' effect too.
    crate::udsp::apply_new_peers(lnet);
    let nis = lnet.nis.lock();
    let peers = lnet.peers.lock();
    let peer = peers
        .list
        .iter()
        .find(|x| x.primary == *prim)
        .ok_or(ENOENT)?;
    let ni = peer.nis.get(idx).ok_or(ENOENT)?;
    // Until a message goes to it, a peer NI has the full peer_credits of
    // its net's first NI.
    let local = nis.nis.iter().find(|x| x.nid.net() == ni.nid.net());
    let fresh = local.map_or(0, |x| x.net_tunables().peer_credits.max(0));
    // And the router credits a router would give it (Lustre's
    // `lnet_peer_buffer_credits`), until it sends us one to forward.
    let fresh_rtr = local.map_or(0, |x| {
        crate::lnet_core::rtr_buf::peer_buffer_credits(
            x.net_tunables().peer_buffer_credits,
            crate::params::snapshot().peer_buffer_credits,
            x.tunables
                .peer_credits
                .load(core::sync::atomic::Ordering::Relaxed),
        )
    });
    let (credits, qnob) = lnet.tx.lock().peer_ni_credits(&ni.nid, fresh);
    let rtr = crate::router::peer_credits(lnet, &ni.nid);
    put_peer_ni(p, ni, &credits, qnob, rtr, fresh_rtr);
    // A gateway's NIs show the status its pings report (Lustre's
    // `lnet_isrouter` case of `lnet_get_peer_ni_info`); other peers' "NA".
    if crate::router_check::is_gateway(&peers.routes.table, peer) {
        p.pn_state = if ni.reported_down() { 2 } else { 1 };
    }
    Ok(())
}

fn put_peer_ni(
    p: &mut lnet_ioc_peer_ni,
    ni: &crate::peer::PeerNi,
    credits: &TxCredits,
    qnob: u64,
    rtr: Option<TxCredits>,
    fresh_rtr: i32,
) {
    p.pn_nid = nid_to_ioc(&ni.nid);
    p.pn_state = 0;
    p.pn_max_ni_tx_credits = credits.max as u32;
    p.pn_available_tx_credits = credits.available as u32;
    p.pn_min_tx_credits = credits.min as u32;
    p.pn_tx_q_num_of_buf = u32::try_from(qnob).unwrap_or(u32::MAX);
    // The router credits it used on this node; full for one that never
    // sent us a message to forward.
    let (avail, min) = rtr.map_or((fresh_rtr, fresh_rtr), |c| (c.available, c.min));
    p.pn_available_rtr_credits = avail as u32;
    p.pn_min_rtr_credits = min as u32;
    p.pn_refcount = 1;
    p.pn_send_count = ni.sent.sum();
    p.pn_recv_count = ni.received.sum();
    p.pn_drop_count = ni.dropped.sum();
    p.pn_sent_stats = ni.sent.0;
    p.pn_received_stats = ni.received.0;
    p.pn_dropped_stats = ni.dropped.0;
    p.pn_health_value = ni.health;
    p.pn_hs_dropped = ni.hstats.dropped;
    p.pn_hs_timeout = ni.hstats.timeout;
    p.pn_hs_error = ni.hstats.error;
    p.pn_hs_network_timeout = ni.hstats.network_timeout;
    p.pn_ping_count = ni.recovery.ping_count;
    p.pn_next_ping = ni.recovery.next_ping as u64;
    p.pn_net_priority = ni.net_priority;
    p.pn_nid_priority = ni.sel_priority;
}

fn fill_stats(s: &mut lnet_ioc_stats, lnet: &TheLnet) {
    let c = lnet.counters.snapshot();
    let m = c.lct_common;
    s.st_msgs_alloc = m.lcc_msgs_alloc;
    s.st_msgs_max = m.lcc_msgs_max;
    s.st_errors = m.lcc_errors;
    s.st_send_count = m.lcc_send_count;
    s.st_recv_count = m.lcc_recv_count;
    s.st_route_count = m.lcc_route_count;
    s.st_drop_count = m.lcc_drop_count;
    s.st_send_length = m.lcc_send_length;
    s.st_recv_length = m.lcc_recv_length;
    s.st_route_length = m.lcc_route_length;
    s.st_drop_length = m.lcc_drop_length;
    let h = c.lct_health;
    s.st_rst_alloc = h.lch_rst_alloc;
    s.st_resend_count = h.lch_resend_count;
    s.st_response_timeout_count = h.lch_response_timeout_count;
    s.st_local_interrupt_count = h.lch_local_interrupt_count;
    s.st_local_dropped_count = h.lch_local_dropped_count;
    s.st_local_aborted_count = h.lch_local_aborted_count;
    s.st_local_no_route_count = h.lch_local_no_route_count;
    s.st_local_timeout_count = h.lch_local_timeout_count;
    s.st_local_error_count = h.lch_local_error_count;
    s.st_remote_dropped_count = h.lch_remote_dropped_count;
    s.st_remote_error_count = h.lch_remote_error_count;
    s.st_remote_timeout_count = h.lch_remote_timeout_count;
    s.st_network_timeout_count = h.lch_network_timeout_count;
    s.st_failed_resends = lnet
        .counters
        .failed_resends
        .load(core::sync::atomic::Ordering::Relaxed);
    s.st_successful_resends = lnet
        .counters
        .successful_resends
        .load(core::sync::atomic::Ordering::Relaxed);
}

fn do_ping(lnet: &TheLnet, st: &FileState, p: &mut lnet_ioc_ping) -> Result {
    let target = nid_from_ioc(&p.pg_target)?;
    let source = nid_from_ioc(&p.pg_source)?;
    if target.is_any() || p.pg_timeout_ms == 0 || p.pg_timeout_ms > PING_MAX_MS {
        return Err(EINVAL);
    }
    let mut cache = st.ping.lock();
    let fresh = p.pg_start == 0
        || !matches!(&*cache, Some(c) if c.target == target && c.source == source
            && c.timeout_ms == p.pg_timeout_ms);
    if fresh {
        *cache = None;
        let secs = p.pg_timeout_ms.div_ceil(1000);
        let reply = ping::ping(lnet, target, source, secs)?;
        *cache = Some(PingCache {
            target,
            source,
            timeout_ms: p.pg_timeout_ms,
            reply,
        });
    }
    let Some(c) = cache.as_ref() else {
        return Err(EINVAL);
    };
    let entries = &c.reply.entries;
    p.pg_total = entries.len() as u32;
    p.pg_primary = nid_to_ioc(&c.reply.primary);
    p.pg_multi_rail = u32::from(c.reply.multi_rail);
    p.pg_count = 0;
    let start = p.pg_start as usize;
    for (slot, e) in p.pg_entries.iter_mut().zip(entries.iter().skip(start)) {
        slot.pe_nid = nid_to_ioc(&e.nid);
        slot.pe_status = e.status;
        p.pg_count += 1;
    }
    Ok(())
}

/// `lnetctl discover`: discovers the target's peer on the first page,
/// then lists the peer's NIDs from `pg_start`.
fn do_discover(lnet: &TheLnet, p: &mut lnet_ioc_ping) -> Result {
    let target = nid_from_ioc(&p.pg_target)?;
    let source = nid_from_ioc(&p.pg_source)?;
    if target.is_any()
        || !source.is_any()
        || p.pg_timeout_ms == 0
        || p.pg_timeout_ms > PING_MAX_MS
        || p.pg_multi_rail > 1
    {
        return Err(EINVAL);
    }
    if p.pg_start == 0 {
        let force = p.pg_multi_rail == 1;
        crate::discovery::discover(lnet, target, force)?;
    }
    let peers = lnet.peers.lock();
    let peer = peers
        .find(&target)
        .and_then(|(pi, _)| peers.list.get(pi))
        .ok_or(ENOENT)?;
    p.pg_total = peer.nis.len() as u32;
    p.pg_primary = nid_to_ioc(&peer.primary);
    p.pg_multi_rail = u32::from(peer.multi_rail);
    p.pg_count = 0;
    let start = p.pg_start as usize;
    for (slot, n) in p.pg_entries.iter_mut().zip(peer.nis.iter().skip(start)) {
        slot.pe_nid = nid_to_ioc(&n.nid);
        slot.pe_status = n.ns_status;
        p.pg_count += 1;
    }
    Ok(())
}

/// lctl's fault rules: add, del, reset, list (the ABI's comment on
/// `struct lnet_ioc_fault` is the contract).
fn fault_cmd(lnet: &TheLnet, cmd: u32, f: &mut lnet_ioc_fault) -> Result {
    use crate::fault::{self, Kind};
    use crate::lnet_core::fault::{Action, Attr, Pace};
    const RANDOM: u32 = 1;
    const DROP_ALL: u32 = 2;
    let kind = match f.fr_kind {
        0 => Kind::Drop,
        1 => Kind::Delay,
        _ => return Err(EINVAL),
    };
    if f.fr_padding != 0 {
        return Err(EINVAL);
    }
    match cmd {
        FAULT_ADD => {
            if f.fr_index != 0 || f.fr_flags & !(RANDOM | DROP_ALL) != 0 {
                return Err(EINVAL);
            }
            let attr = Attr {
                src: nid_from_ioc(&f.fr_src)?,
                dst: nid_from_ioc(&f.fr_dst)?,
                local: nid_from_ioc(&f.fr_local)?,
                ptl_mask: f.fr_ptl_mask,
                msg_mask: f.fr_msg_mask,
            };
            let pace = match (f.fr_rate, f.fr_interval) {
                (0, 0) => return Err(EINVAL),
                (r, 0) => Pace::Rate(r),
                (0, i) => Pace::Interval(i),
                _ => return Err(EINVAL),
            };
            let action = match kind {
                Kind::Drop if f.fr_latency != 0 => return Err(EINVAL),
                Kind::Drop => Action::Drop {
                    health_mask: f.fr_health_mask,
                    random: f.fr_flags & RANDOM != 0,
                    all: f.fr_flags & DROP_ALL != 0,
                },
                Kind::Delay if f.fr_health_mask != 0 || f.fr_flags != 0 => return Err(EINVAL),
                Kind::Delay => Action::Delay {
                    latency: f.fr_latency,
                },
            };
            fault::add_rule(lnet, kind, attr, pace, action)
        }
        FAULT_DEL => {
            let src = nid_from_ioc(&f.fr_src)?;
            let dst = nid_from_ioc(&f.fr_dst)?;
            f.fr_index = fault::del(lnet, kind, &src, &dst);
            Ok(())
        }
        FAULT_RESET => {
            fault::reset(lnet, kind);
            Ok(())
        }
        _ => {
            let rule = fault::get(lnet, kind, f.fr_index).ok_or(ENOENT)?;
            f.fr_src = nid_to_ioc(&rule.attr.src);
            f.fr_dst = nid_to_ioc(&rule.attr.dst);
            f.fr_local = nid_to_ioc(&rule.attr.local);
            f.fr_msg_mask = rule.attr.msg_mask;
            f.fr_ptl_mask = rule.attr.ptl_mask;
            (f.fr_rate, f.fr_interval) = match rule.pace {
                Pace::Rate(r) => (r, 0),
                Pace::Interval(i) => (0, i),
            };
            (f.fr_latency, f.fr_health_mask, f.fr_flags) = match rule.action {
                Action::Delay { latency } => (latency, 0, 0),
                Action::Drop {
                    health_mask,
                    random,
                    all,
                } => (
                    0,
                    health_mask,
                    (u32::from(random) * RANDOM) | (u32::from(all) * DROP_ALL),
                ),
            };
            let st = rule.stats;
            f.fr_count = st.count;
            f.fr_put = st.put;
            f.fr_ack = st.ack;
            f.fr_get = st.get;
            f.fr_reply = st.reply;
            f.fr_hits = st.hits;
            Ok(())
        }
    }
}
