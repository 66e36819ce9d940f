// SPDX-License-Identifier: GPL-2.0

//! Lustre's own /dev/lnet ioctls (`IOC_LIBCFS_*`,
//! include/uapi/linux/lnet/libcfs_ioctl.h), beside lnet-rs's (dev.rs), for
//! Lustre's `lctl` and `lnetctl`: `lctl list_nids` falls back to
//! `IOC_LIBCFS_GET_NI` when the kernel has no `lnet` netlink family; their
//! configure and unconfigure fall back to theirs only on an error that
//! family gives. The argument is copied in whole and checked as Lustre's
//! `lnet_psdev_ioctl` checks it (lnet-core's libcfs_ioctl), and copied back
//! whole after the command, as Lustre does even when it fails. A command
//! LNet does not answer goes to the LND of the NI on its `ioc_net`, as in
//! Lustre (`lctl peer_list`, `conn_list`, `disconnect`); one no LND
//! answers gets Lustre's answer to an unclaimed one, EINVAL.
//! Lustre's `lnetctl global show`, `set numa_range`, `import`, `stats show`
//! and `stats reset` read or set the NUMA range and read or zero the
//! message counters here (they have no netlink command); the values are
//! those lnet-rs's own ioctls give its `lnetctl`. Lustre's `lctl
//! net_drop_*` and `net_delay_*` come here when the family refuses their
//! `LNET_CMD_FAULT`, onto the rules lnet-rs's own fault ioctl keeps
//! (fault.rs). Lustre's UDSP walk (`lnetctl export`,
//! `udsp show`) ends at once where there is no rule; a rule there is not
//! given in Lustre's form (EOPNOTSUPP). lnet-rs's `lctl` keeps its own
//! ioctl: its NIDs may be large, Lustre's `struct lnet_fault_attr` has
//! 64-bit ones.

use crate::kapi::bindings::LNET_IOCTL_VERSION2;
use crate::kapi::bindings::{
    libcfs_ioctl_data, lnet_counters, lnet_fault_attr, lnet_fault_stat, lnet_ioctl_config_data,
    lnet_ioctl_lnet_stats, lnet_ioctl_pool_cfg, lnet_ioctl_set_value, LIBCFS_IOC_DATA_MAX,
    LNET_IOCTL_VERSION,
};
use crate::kapi::errno;
use crate::kapi::lnet_abi::bytes_of;
use crate::lnet_core::libcfs_ioctl::fault::{attr as fattr, stat as fstat};
use crate::lnet_core::libcfs_ioctl::{
    self as abi, cfg, lnet_stats, nr, off, pool_cfg, set_value, PoolEntry, RouteArg,
};
use crate::lnet_core::lnd_ctl;
use crate::lnet_core::nid::{Net, Nid};
use crate::lnet_core::route::{self as core_route, RouteSpec};
use crate::state::TheLnet;
use crate::{params, startup};
use core::mem::{offset_of, size_of};
use kernel::prelude::*;
use kernel::uaccess::UserSlice;

// lnet-core reads the argument at its own offsets: they are the C header's.
const _: () = {
    assert!(abi::VERSION == LNET_IOCTL_VERSION && abi::VERSION2 == LNET_IOCTL_VERSION2);
    assert!(abi::DATA_MAX == LIBCFS_IOC_DATA_MAX as usize);
    assert!(abi::DATA_LEN == size_of::<libcfs_ioctl_data>());
    assert!(off::NID == offset_of!(libcfs_ioctl_data, ioc_nid));
    assert!(off::FLAGS == offset_of!(libcfs_ioctl_data, ioc_flags));
    assert!(off::COUNT == offset_of!(libcfs_ioctl_data, ioc_count));
    assert!(off::U32_0 == offset_of!(libcfs_ioctl_data, ioc_u32));
    assert!(off::U32_1 == off::U32_0 + 4);
    assert!(lnd_ctl::NET == offset_of!(libcfs_ioctl_data, ioc_net));
    assert!(lnd_ctl::U32 == offset_of!(libcfs_ioctl_data, ioc_u32));
    assert!(lnd_ctl::NU32 * 4 == offset_of!(libcfs_ioctl_data, ioc_inllen1) - lnd_ctl::U32);
    assert!(off::INLLEN1 == offset_of!(libcfs_ioctl_data, ioc_inllen1));
    assert!(off::INLBUF1 == offset_of!(libcfs_ioctl_data, ioc_inlbuf1));
    assert!(off::INLLEN2 == offset_of!(libcfs_ioctl_data, ioc_inllen2));
    assert!(off::INLBUF2 == offset_of!(libcfs_ioctl_data, ioc_inlbuf2));
    assert!(off::PLEN1 == offset_of!(libcfs_ioctl_data, ioc_plen1));
    assert!(off::PBUF1 == offset_of!(libcfs_ioctl_data, ioc_pbuf1));
    assert!(off::PLEN2 == offset_of!(libcfs_ioctl_data, ioc_plen2));
    assert!(off::PBUF2 == offset_of!(libcfs_ioctl_data, ioc_pbuf2));
    assert!(cfg::LEN == size_of::<lnet_ioctl_config_data>());
    assert!(cfg::NET == offset_of!(lnet_ioctl_config_data, cfg_net));
    assert!(cfg::COUNT == offset_of!(lnet_ioctl_config_data, cfg_count));
    assert!(cfg::NID == offset_of!(lnet_ioctl_config_data, cfg_nid));
    assert!(cfg::RTR_HOP == offset_of!(lnet_ioctl_config_data, cfg_config_u));
    assert!(cfg::BUF_ENABLE == offset_of!(lnet_ioctl_config_data, cfg_config_u));
    assert!(cfg::BULK == offset_of!(lnet_ioctl_config_data, cfg_bulk));
    assert!(pool_cfg::LEN == size_of::<lnet_ioctl_pool_cfg>());
    assert!(pool_cfg::ROUTING == offset_of!(lnet_ioctl_pool_cfg, pl_routing));
    assert!(set_value::LEN == size_of::<lnet_ioctl_set_value>());
    assert!(set_value::VALUE == offset_of!(lnet_ioctl_set_value, sv_value));
    assert!(lnet_stats::LEN == size_of::<lnet_ioctl_lnet_stats>());
    assert!(lnet_stats::CNTRS == offset_of!(lnet_ioctl_lnet_stats, st_cntrs));
    assert!(lnet_stats::CNTRS_LEN == size_of::<lnet_counters>());
    assert!(fattr::LEN == size_of::<lnet_fault_attr>());
    assert!(fattr::SRC == offset_of!(lnet_fault_attr, fa_src));
    assert!(fattr::DST == offset_of!(lnet_fault_attr, fa_dst));
    assert!(fattr::LOCAL_NID == offset_of!(lnet_fault_attr, fa_local_nid));
    assert!(fattr::PTL_MASK == offset_of!(lnet_fault_attr, fa_ptl_mask));
    assert!(fattr::MSG_MASK == offset_of!(lnet_fault_attr, fa_msg_mask));
    assert!(fattr::RATE == offset_of!(lnet_fault_attr, u));
    assert!(fstat::LEN == size_of::<lnet_fault_stat>());
    assert!(fstat::COUNT == offset_of!(lnet_fault_stat, fs_count));
    assert!(fstat::PUT == offset_of!(lnet_fault_stat, fs_put));
    assert!(fstat::ACK == offset_of!(lnet_fault_stat, fs_ack));
    assert!(fstat::GET == offset_of!(lnet_fault_stat, fs_get));
    assert!(fstat::REPLY == offset_of!(lnet_fault_stat, fs_reply));
    assert!(fstat::HITS == offset_of!(lnet_fault_stat, u));
};

/// A positive errno of lnet-core's checks as a kernel error.
fn errno_of(e: i32) -> Error {
    // Saturating: no overflow path, whatever the value (a bad one is EINVAL).
    Error::from_errno(e.saturating_neg())
}

/// Lustre's command `cmd` (lnet-core's `is_libcfs`) with its argument at
/// user address `arg`. The caller has checked CAP_SYS_ADMIN.
pub(crate) fn ioctl(lnet: &'static TheLnet, cmd: u32, arg: usize) -> Result {
    let mut hdr = [0u8; abi::HDR_LEN];
    UserSlice::new(arg, hdr.len())
        .reader()
        .read_slice(&mut hdr)?;
    let (len, version) = abi::check_hdr(&hdr).map_err(errno_of)?;
    let mut buf = KVec::with_capacity(len, GFP_KERNEL)?;
    UserSlice::new(arg, len)
        .reader()
        .read_all(&mut buf, GFP_KERNEL)?;
    // The caller may have changed the header since it was first read.
    if abi::check_hdr(&buf) != Ok((len, version)) {
        return Err(EINVAL);
    }
    if version == abi::VERSION {
        abi::check_data(&buf).map_err(errno_of)?;
    }
    let r = command(lnet, abi::cmd_nr(cmd), version, &mut buf);
    let copied = UserSlice::new(arg, len).writer().write_slice(&buf);
    r.and(copied)
}

fn command(lnet: &'static TheLnet, nr: u32, version: u32, buf: &mut [u8]) -> Result {
    // Each command here takes the old-style argument.
    let old = version == abi::VERSION;
    match nr {
        nr::CONFIGURE if old => {
            let flags = abi::get_u32(buf, off::FLAGS).ok_or(EINVAL)?;
            startup::dev_configure(lnet, flags != 0)
        }
        nr::UNCONFIGURE => startup::dev_unconfigure(lnet),
        nr::LNET_DIST if old => {
            if !lnet.is_running() {
                return Err(errno::ENETDOWN());
            }
            // An unreachable NID is an answer (-EHOSTUNREACH in ioc_u32[0],
            // the NID and order as they were), not an error.
            let nid4 = abi::get_u64(buf, off::NID).ok_or(EINVAL)?;
            let nid = Nid::from_nid4(nid4);
            let (dist, nid4, order) = match crate::api_ni::distance(lnet, &nid) {
                Some(d) => (d.dist, d.src.to_nid4().unwrap_or(nid4), Some(d.order)),
                None => (errno::EHOSTUNREACH().to_errno() as u32, nid4, None),
            };
            let ok = abi::put_u64(buf, off::NID, nid4)
                && abi::put_u32(buf, off::U32_0, dist)
                && order.map_or(true, |o| abi::put_u32(buf, off::U32_1, o));
            if ok {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
        nr::GET_NI if old => {
            if !lnet.is_running() {
                return Err(errno::ENETDOWN());
            }
            let index = abi::get_u32(buf, off::COUNT).ok_or(EINVAL)?;
            let nid4 = {
                let nis = lnet.nis.lock();
                abi::nth_nid4(nis.nis.iter().map(|ni| &ni.nid), index)
            };
            let nid4 = nid4.ok_or(ENOENT)?;
            if abi::put_u64(buf, off::NID, nid4) {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
        nr::ADD_ROUTE | nr::DEL_ROUTE | nr::GET_ROUTE => {
            let a = abi::route_arg(buf, version).map_err(errno_of)?;
            if !lnet.is_running() {
                return Err(errno::ENETDOWN());
            }
            // Serialised with configuration, as Lustre's `ln_api_mutex`.
            let _api = lnet.api.lock();
            route_command(lnet, nr, &a, buf)
        }
        nr::CONFIG_RTR | nr::ADD_BUF | nr::GET_BUF => {
            let a = abi::buffers_arg(buf, nr == nr::GET_BUF).map_err(errno_of)?;
            // Serialised with configuration, as Lustre's `ln_api_mutex`.
            let _api = lnet.api.lock();
            match nr {
                nr::CONFIG_RTR if a.enable != 0 => {
                    if !lnet.is_running() {
                        return Err(errno::ENETDOWN());
                    }
                    crate::router::enable(lnet)
                }
                nr::CONFIG_RTR => {
                    crate::router::disable(lnet);
                    Ok(())
                }
                nr::ADD_BUF => crate::router::adjust_buffers(lnet, a.pools),
                _ => {
                    // One set of pools, shown as CPU partition 0's
                    // (router.rs); ENOENT past it, as past Lustre's last.
                    let (pools, routing) = crate::router::show(lnet).ok_or(ENOENT)?;
                    if a.count != 0 {
                        return Err(ENOENT);
                    }
                    let e = pools.map(|p| PoolEntry {
                        npages: p.npages,
                        nbuffers: p.nbuffers,
                        credits: p.credits,
                        mincredits: p.mincredits,
                    });
                    if abi::put_pools(buf, &e, u32::from(routing)) {
                        Ok(())
                    } else {
                        Err(EINVAL)
                    }
                }
            }
        }
        nr::SET_NUMA_RANGE => {
            // The same argument as GET's, checked alike (Lustre: exactly
            // a `struct lnet_ioctl_set_value`).
            abi::check_get_numa_range(buf).map_err(errno_of)?;
            let range = abi::get_u32(buf, set_value::VALUE).ok_or(EINVAL)?;
            params::set_numa_range(range);
            Ok(())
        }
        nr::GET_NUMA_RANGE => {
            abi::check_get_numa_range(buf).map_err(errno_of)?;
            let range = params::snapshot().numa_range;
            if abi::put_u32(buf, set_value::VALUE, range) {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
        nr::GET_LNET_STATS => {
            abi::check_get_lnet_stats(buf, lnet.is_running()).map_err(errno_of)?;
            // The snapshot our own GET_STATS reports.
            let c = lnet.counters.snapshot();
            if abi::put_bytes(buf, lnet_stats::CNTRS, bytes_of(&c)) {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
        nr::RESET_LNET_STATS if old => {
            // Serialised with configuration, as Lustre's `ln_api_mutex`.
            let _api = lnet.api.lock();
            crate::counters::reset_all(lnet);
            Ok(())
        }
        nr::LNET_FAULT if old => fault_command(lnet, buf),
        nr::GET_UDSP_SIZE | nr::GET_UDSP => {
            let idx = abi::udsp_idx(buf).map_err(errno_of)?;
            // ENOENT past the last rule ends lnetctl's walk (its `export`
            // and `udsp show`), as Lustre's. A rule in Lustre's
            // marshalled form (lnet_udsp_marshal) is not made: our
            // lnetctl reads rules with lnet-rs's own ioctl (udsp.rs).
            if crate::udsp::has_rule(lnet, idx) {
                Err(errno::EOPNOTSUPP())
            } else {
                Err(ENOENT)
            }
        }
        // The rest is the LNDs' (Lustre's LNetCtl default); theirs take
        // the old-style argument.
        _ if old => lnd_command(lnet, nr, buf),
        _ => Err(EINVAL),
    }
}

/// A command LNet does not answer goes to the LND of the first running
/// NI on the argument's `ioc_net` (Lustre's `LNetCtl` default:
/// `lnet_net2ni_addref`, then `lnd_ctl`): EINVAL without such an NI, or
/// from an LND that does not know the command; ENETDOWN while LNet is
/// down, as Lustre's `LNetNIInit(LNET_PID_ANY)` refuses then. The NI is
/// held as a send holds it (its `Arc`, and a pass through its LND gate,
/// which its shutdown waits for), and no lock of LNet's is held during
/// the call.
fn lnd_command(lnet: &TheLnet, nr: u32, buf: &mut [u8]) -> Result {
    if !lnet.is_running() {
        return Err(errno::ENETDOWN());
    }
    let net = Net::from_u32(lnd_ctl::net_of(buf).ok_or(EINVAL)?);
    let ni = {
        let nis = lnet.nis.lock();
        nis.nis
            .iter()
            .find(|ni| ni.nid.net() == net && ni.is_active())
            .cloned()
    };
    let ni = ni.ok_or(EINVAL)?;
    let Some(_pass) = ni.lnd_gate.enter() else {
        // Its shutdown has begun: as gone from its net.
        return Err(EINVAL);
    };
    ni.lnd.ctl(&ni, nr, buf)
}

/// Lustre's `lnet_fault_ctl` over lnet-rs's rules (fault.rs), which lnet-rs's
/// own fault ioctl reaches too. Lustre brings LNet up for the call when it
/// is down, so a rule added then is gone when the call ends; here that is
/// ENETDOWN.
fn fault_command(lnet: &TheLnet, buf: &mut [u8]) -> Result {
    use crate::fault::{self as rules, Kind};
    use abi::fault::{self as f, Op};
    let opc = abi::get_u32(buf, off::FLAGS).ok_or(EINVAL)?;
    let (fkind, op) = f::op(opc).map_err(errno_of)?;
    let kind = match fkind {
        f::Kind::Drop => Kind::Drop,
        f::Kind::Delay => Kind::Delay,
    };
    if !lnet.is_running() {
        return Err(errno::ENETDOWN());
    }
    match op {
        Op::Add => {
            let (attr, pace, action) = f::rule(buf, fkind).map_err(errno_of)?;
            rules::add_rule(lnet, kind, attr, pace, action)
        }
        Op::Del => {
            let (src, dst) = f::selector(buf).map_err(errno_of)?;
            let n = rules::del(lnet, kind, &src, &dst);
            if abi::put_u32(buf, off::COUNT, n) {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
        Op::Reset => {
            rules::reset(lnet, kind);
            Ok(())
        }
        Op::List => {
            f::check_list(buf).map_err(errno_of)?;
            let index = abi::get_u32(buf, off::COUNT).ok_or(EINVAL)?;
            // ENOENT past the last rule ends lctl's walk, as Lustre's.
            let r = rules::get(lnet, kind, index).ok_or(ENOENT)?;
            f::put_rule(buf, &r.attr, r.pace, r.action, &r.stats).map_err(errno_of)
        }
    }
}

/// `LNET_NET_ANY` as the 32-bit net of the route commands.
const NET_ANY: u32 = u32::MAX;
/// `LNET_NID_ANY` as their 64-bit NID.
const NID4_ANY: u64 = u64::MAX;

/// The route commands over Lustre's argument (`LNetCtl`'s cases).
fn route_command(lnet: &TheLnet, nr: u32, a: &RouteArg, buf: &mut [u8]) -> Result {
    let err = |e: core_route::RouteError| Error::from_errno(e.errno());
    match nr {
        nr::ADD_ROUTE => {
            let spec = RouteSpec {
                hops: a.hop,
                priority: a.priority,
                ..RouteSpec::new(Net::from_u32(a.net), Nid::from_nid4(a.nid4))
            };
            crate::route::add(lnet, &spec).map_err(err)
        }
        nr::DEL_ROUTE => {
            let net = (a.net != NET_ANY).then(|| Net::from_u32(a.net));
            let gw = (a.nid4 != NID4_ANY).then(|| Nid::from_nid4(a.nid4));
            crate::route::del(lnet, net, gw).map(|_| ()).map_err(err)
        }
        _ => {
            let (r, up) = crate::route::get(lnet, a.count as usize).map_err(err)?;
            // A gateway with a large address has no 64-bit NID: the walk
            // of an old tool stops there.
            let nid4 = r.gateway.to_nid4().ok_or(EINVAL)?;
            let out = RouteArg {
                net: r.net.as_u32(),
                nid4,
                hop: r.hops,
                priority: r.priority,
                flags: core_route::route_flags(a.flags, up, r.single_hop),
                ..*a
            };
            if abi::put_route(buf, &out) {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
    }
}
