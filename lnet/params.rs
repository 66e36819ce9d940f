// SPDX-License-Identifier: GPL-2.0

//! lnet.ko's numeric parameters: their live values, and the `.set`/`.get`
//! callbacks that /sys/module/lnet/parameters and insmod reach through
//! lnet_params.c. The rules themselves are lnet-core's.

use crate::kapi::param::{self, KernelParam, ParamPage, ParamValue};
use crate::lnet_core::params::{self as rules, Param, Tunables};
use core::fmt::Write;
use core::sync::atomic::{AtomicI32, AtomicU32, Ordering::Relaxed};
use kernel::ffi::c_int;
use kernel::prelude::*;

/// The live values, one atomic per field so readers on any path can load
/// them without a lock. Writers are serialised by the kernel: insmod parses
/// arguments on one thread before the module runs, and sysfs holds the
/// module's `kernel_param_lock` around every write (lnetctl's writes will
/// take the same lock).
struct Live {
    health_sensitivity: AtomicU32,
    recovery_interval: AtomicU32,
    recovery_limit: AtomicU32,
    max_recovery_ping_interval: AtomicU32,
    interfaces_max: AtomicI32,
    peer_discovery_disabled: AtomicU32,
    drop_asym_route: AtomicU32,
    transaction_timeout: AtomicU32,
    retry_count: AtomicU32,
    response_tracking: AtomicU32,
    numa_range: AtomicU32,
    lock_prim_nid: AtomicI32,
    rnet_htable_size: AtomicI32,
    use_tcp_bonding: AtomicI32,
    router_sensitivity_percentage: AtomicU32,
    tiny_router_buffers: AtomicI32,
    small_router_buffers: AtomicI32,
    large_router_buffers: AtomicI32,
    peer_buffer_credits: AtomicI32,
    check_routers_before_use: AtomicI32,
    avoid_asym_router_failure: AtomicI32,
    dead_router_check_interval: AtomicI32,
    live_router_check_interval: AtomicI32,
    alive_router_check_interval: AtomicI32,
    router_ping_timeout: AtomicI32,
    lnd_timeout: AtomicU32,
    max_recovery_ping_count: AtomicU32,
}

const D: Tunables = Tunables::DEFAULT;

static LIVE: Live = Live {
    health_sensitivity: AtomicU32::new(D.health_sensitivity),
    recovery_interval: AtomicU32::new(D.recovery_interval),
    recovery_limit: AtomicU32::new(D.recovery_limit),
    max_recovery_ping_interval: AtomicU32::new(D.max_recovery_ping_interval),
    interfaces_max: AtomicI32::new(D.interfaces_max),
    peer_discovery_disabled: AtomicU32::new(D.peer_discovery_disabled),
    drop_asym_route: AtomicU32::new(D.drop_asym_route),
    transaction_timeout: AtomicU32::new(D.transaction_timeout),
    retry_count: AtomicU32::new(D.retry_count),
    response_tracking: AtomicU32::new(D.response_tracking),
    numa_range: AtomicU32::new(D.numa_range),
    lock_prim_nid: AtomicI32::new(D.lock_prim_nid),
    rnet_htable_size: AtomicI32::new(D.rnet_htable_size),
    use_tcp_bonding: AtomicI32::new(D.use_tcp_bonding),
    router_sensitivity_percentage: AtomicU32::new(D.router_sensitivity_percentage),
    tiny_router_buffers: AtomicI32::new(D.tiny_router_buffers),
    small_router_buffers: AtomicI32::new(D.small_router_buffers),
    large_router_buffers: AtomicI32::new(D.large_router_buffers),
    peer_buffer_credits: AtomicI32::new(D.peer_buffer_credits),
    check_routers_before_use: AtomicI32::new(D.check_routers_before_use),
    avoid_asym_router_failure: AtomicI32::new(D.avoid_asym_router_failure),
    dead_router_check_interval: AtomicI32::new(D.dead_router_check_interval),
    live_router_check_interval: AtomicI32::new(D.live_router_check_interval),
    alive_router_check_interval: AtomicI32::new(D.alive_router_check_interval),
    router_ping_timeout: AtomicI32::new(D.router_ping_timeout),
    lnd_timeout: AtomicU32::new(D.lnd_timeout),
    max_recovery_ping_count: AtomicU32::new(D.max_recovery_ping_count),
};

/// The current values.
pub(crate) fn snapshot() -> Tunables {
    let l = &LIVE;
    Tunables {
        health_sensitivity: l.health_sensitivity.load(Relaxed),
        recovery_interval: l.recovery_interval.load(Relaxed),
        recovery_limit: l.recovery_limit.load(Relaxed),
        max_recovery_ping_interval: l.max_recovery_ping_interval.load(Relaxed),
        interfaces_max: l.interfaces_max.load(Relaxed),
        peer_discovery_disabled: l.peer_discovery_disabled.load(Relaxed),
        drop_asym_route: l.drop_asym_route.load(Relaxed),
        transaction_timeout: l.transaction_timeout.load(Relaxed),
        retry_count: l.retry_count.load(Relaxed),
        response_tracking: l.response_tracking.load(Relaxed),
        numa_range: l.numa_range.load(Relaxed),
        lock_prim_nid: l.lock_prim_nid.load(Relaxed),
        rnet_htable_size: l.rnet_htable_size.load(Relaxed),
        use_tcp_bonding: l.use_tcp_bonding.load(Relaxed),
        router_sensitivity_percentage: l.router_sensitivity_percentage.load(Relaxed),
        tiny_router_buffers: l.tiny_router_buffers.load(Relaxed),
        small_router_buffers: l.small_router_buffers.load(Relaxed),
        large_router_buffers: l.large_router_buffers.load(Relaxed),
        peer_buffer_credits: l.peer_buffer_credits.load(Relaxed),
        check_routers_before_use: l.check_routers_before_use.load(Relaxed),
        avoid_asym_router_failure: l.avoid_asym_router_failure.load(Relaxed),
        dead_router_check_interval: l.dead_router_check_interval.load(Relaxed),
        live_router_check_interval: l.live_router_check_interval.load(Relaxed),
        alive_router_check_interval: l.alive_router_check_interval.load(Relaxed),
        router_ping_timeout: l.router_ping_timeout.load(Relaxed),
        lnd_timeout: l.lnd_timeout.load(Relaxed),
        max_recovery_ping_count: l.max_recovery_ping_count.load(Relaxed),
    }
}

fn publish(t: &Tunables) {
    let l = &LIVE;
    l.health_sensitivity.store(t.health_sensitivity, Relaxed);
    l.recovery_interval.store(t.recovery_interval, Relaxed);
    l.recovery_limit.store(t.recovery_limit, Relaxed);
    l.max_recovery_ping_interval
        .store(t.max_recovery_ping_interval, Relaxed);
    l.interfaces_max.store(t.interfaces_max, Relaxed);
    l.peer_discovery_disabled
        .store(t.peer_discovery_disabled, Relaxed);
    l.drop_asym_route.store(t.drop_asym_route, Relaxed);
    l.transaction_timeout.store(t.transaction_timeout, Relaxed);
    l.retry_count.store(t.retry_count, Relaxed);
    l.response_tracking.store(t.response_tracking, Relaxed);
    l.numa_range.store(t.numa_range, Relaxed);
    l.lock_prim_nid.store(t.lock_prim_nid, Relaxed);
    l.rnet_htable_size.store(t.rnet_htable_size, Relaxed);
    l.use_tcp_bonding.store(t.use_tcp_bonding, Relaxed);
    l.router_sensitivity_percentage
        .store(t.router_sensitivity_percentage, Relaxed);
    l.tiny_router_buffers.store(t.tiny_router_buffers, Relaxed);
    l.small_router_buffers
        .store(t.small_router_buffers, Relaxed);
    l.large_router_buffers
        .store(t.large_router_buffers, Relaxed);
    l.peer_buffer_credits.store(t.peer_buffer_credits, Relaxed);
    l.check_routers_before_use
        .store(t.check_routers_before_use, Relaxed);
    l.avoid_asym_router_failure
        .store(t.avoid_asym_router_failure, Relaxed);
    l.dead_router_check_interval
        .store(t.dead_router_check_interval, Relaxed);
    l.live_router_check_interval
        .store(t.live_router_check_interval, Relaxed);
    l.alive_router_check_interval
        .store(t.alive_router_check_interval, Relaxed);
    l.router_ping_timeout.store(t.router_ping_timeout, Relaxed);
    l.lnd_timeout.store(t.lnd_timeout, Relaxed);
    l.max_recovery_ping_count
        .store(t.max_recovery_ping_count, Relaxed);
}

/// The router checker's parameters now (lnet-core `router_check`).
pub(crate) fn router_params() -> crate::lnet_core::router_check::RouterParams {
    snapshot().router_params()
}

/// `lnetctl set numa_range` (the parameter is read-only in sysfs, as in
/// Lustre, and set through /dev/lnet). Any value is valid.
pub(crate) fn set_numa_range(v: u32) {
    LIVE.numa_range.store(v, Relaxed);
}

/// A load-time string parameter, or a replacement character if it is not
/// UTF-8 (then it cannot name a network either, and validation says so).
fn load_time_str(p: Option<&'static kernel::str::CStr>) -> &'static str {
    p.map_or("", |s| s.to_str().unwrap_or("\u{fffd}"))
}

/// The `networks` parameter.
pub(crate) fn networks() -> &'static str {
    load_time_str(param::lnet_networks())
}

/// The `ip2nets` parameter.
pub(crate) fn ip2nets() -> &'static str {
    load_time_str(param::lnet_ip2nets())
}

/// The `routes` parameter.
pub(crate) fn routes() -> &'static str {
    load_time_str(param::lnet_routes())
}

/// The `forwarding` parameter.
pub(crate) fn forwarding() -> &'static str {
    load_time_str(param::lnet_forwarding())
}

/// `lnetctl set tiny_buffers|small_buffers|large_buffers` (Lustre's
/// `lnet_rtrpools_adjust_helper` stores the counts in its parameters,
/// read-only in sysfs): index 0, 1, 2 as lnet-core `rtr_buf`'s pools.
pub(crate) fn set_router_buffers(pool: usize, v: i32) {
    let cell = match pool {
        0 => &LIVE.tiny_router_buffers,
        1 => &LIVE.small_router_buffers,
        _ => &LIVE.large_router_buffers,
    };
    cell.store(v, Relaxed);
}

/// The derived LND timeout, for the read-only debugfs file Lustre also has.
pub(crate) fn lnd_timeout_cell() -> &'static AtomicU32 {
    &LIVE.lnd_timeout
}

/// `kernel_param_ops.set` for every numeric lnet parameter; called only
/// by the kernel's parameter code, with its own arguments.
#[no_mangle]
extern "C" fn lnet_param_set(val: ParamValue<'_>, kp: Option<&KernelParam>) -> c_int {
    let Some(kp) = kp else {
        return -(rules::EINVAL);
    };
    let req = val.request(kp);
    let Some(p) = Param::from_name(req.name) else {
        pr_err!("no rule for parameter {:?}\n", BStr(req.name));
        return -(rules::EINVAL);
    };
    match rules::set(&snapshot(), p, req.value) {
        Ok(change) => {
            // The caller holds this module's `kernel_param_lock` (sysfs
            // around every write; at load time LNet is not published yet),
            // and module exit unpublishes LNet under the same lock: the
            // state stays alive for this whole call.
            let lnet = crate::state::TheLnet::get().filter(|_| p == Param::PeerDiscoveryDisabled);
            // A ping buffer being rebuilt sees the value before or after
            // this change, never between it and the in-place update.
            let pings = lnet.map(|l| l.pings.lock());
            let was = snapshot().peer_discovery_disabled;
            let now = change.tunables.peer_discovery_disabled;
            if let (Some(lnet), true) = (lnet, was == 0 && now != 0) {
                // Turning discovery off is pushed to Multi-Rail peers
                // once (`discovery_set`), queued before the change.
                crate::discovery::push_update(lnet, true);
            }
            publish(&change.tunables);
            if let (Some(lnet), true) = (lnet, now != was) {
                // The posted ping buffer says so at once, as Lustre's
                // discovery_set does (no buffer posted: the next one is
                // built from the parameter).
                crate::ping::set_features(
                    lnet,
                    crate::lnet_core::ping::features::DISCOVERY,
                    now == 0,
                );
            }
            drop(pings);
            if let Some(notice) = change.notice {
                pr_warn!("{}\n", notice);
            }
            0
        }
        Err(e) => {
            pr_err!("{}\n", e);
            -e.errno()
        }
    }
}

/// `kernel_param_ops.set` of `libcfs_debug`: a number, or class names
/// with `+`/`-` (`lnet_core::debug::parse`); a refused text leaves the mask
/// as it was. Called only by the kernel's parameter code, with its own
/// arguments.
#[no_mangle]
extern "C" fn lnet_debug_param_set(val: ParamValue<'_>, _kp: Option<&KernelParam>) -> c_int {
    let Some(text) = val.get() else {
        pr_err!("libcfs_debug needs a value\n");
        return -(rules::EINVAL);
    };
    // Setters are serialised by the module's `kernel_param_lock`: the load
    // and the store are one update.
    let mask = crate::kapi::debug::cell();
    match crate::lnet_core::debug::parse(text, mask.load(Relaxed)) {
        Ok(m) => {
            mask.store(m, Relaxed);
            0
        }
        Err(e @ crate::lnet_core::debug::MaskError::Unknown(..)) => {
            pr_warn!(
                "unknown mask '{:?}'. mask usage: [+|-]<all|type> ...\n",
                BStr(e.token(text))
            );
            -(rules::EINVAL)
        }
        Err(crate::lnet_core::debug::MaskError::TrailingOperator) => {
            pr_warn!("libcfs_debug: '+' or '-' with no class after it\n");
            -(rules::EINVAL)
        }
    }
}

/// `kernel_param_ops.get` of `libcfs_debug`: the mask as an `int`, as
/// Lustre's parameter shows it (`all` reads -1). Called only by the
/// kernel's parameter code, with a page-sized buffer.
#[no_mangle]
extern "C" fn lnet_debug_param_get(buf: ParamPage<'_>, _kp: Option<&KernelParam>) -> c_int {
    let Some(mut out) = buf.writer() else {
        return -(rules::EINVAL);
    };
    let mask = crate::kapi::debug::cell().load(Relaxed);
    if writeln!(out, "{}", mask as i32).is_err() {
        return -(rules::EINVAL);
    }
    c_int::try_from(out.len()).unwrap_or(0)
}

/// `kernel_param_ops.get` for every numeric lnet parameter; called only
/// by the kernel's parameter code, with a page-sized buffer.
#[no_mangle]
extern "C" fn lnet_param_get(buf: ParamPage<'_>, kp: Option<&KernelParam>) -> c_int {
    let Some(p) = kp.and_then(|kp| Param::from_name(kp.name())) else {
        return -(rules::EINVAL);
    };
    let Some(mut out) = buf.writer() else {
        return -(rules::EINVAL);
    };
    if writeln!(out, "{}", p.value(&snapshot())).is_err() {
        return -(rules::EINVAL);
    }
    c_int::try_from(out.len()).unwrap_or(0)
}

/// Shows raw parameter names in messages without assuming UTF-8.
struct BStr<'a>(&'a [u8]);

impl core::fmt::Debug for BStr<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for &b in self.0 {
            if b.is_ascii_graphic() {
                f.write_char(char::from(b))?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}
