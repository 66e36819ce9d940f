//! LNet's core module parameters (`/sys/module/lnet/parameters`): names,
//! permissions, defaults and the validation Lustre's setters apply, with the
//! values derived from them (the LND timeout, the recovery ping count).
//!
//! Deliberate differences from Lustre, each tested below:
//! - a value that does not fit the parameter's 32-bit type is refused with
//!   `ERANGE` where Lustre silently truncates it;
//! - `lnet_drop_asym_route` accepts only 0 or 1 where Lustre stores any number;
//! - `lnet_recovery_interval` refuses a non-number (Lustre accepts anything)
//!   before warning that it is deprecated; its value stays 1 either way;
//! - a parameter given with no value (`insmod lnet.ko lnet_retry_count`) is
//!   refused with `EINVAL`.

use super::kstrto::{self, NumberError};
use core::fmt;

/// `EINVAL`, as returned to the writer of a parameter.
pub const EINVAL: i32 = 22;
/// `ERANGE`, as returned for a number too large for its parameter.
pub const ERANGE: i32 = 34;

/// Highest health value of an NI or peer NI.
pub const MAX_HEALTH_VALUE: u32 = 1000;
/// `lnet_interfaces_max` below this is replaced by the default.
pub const INTERFACES_MIN: i32 = 16;
/// Default of `lnet_interfaces_max`.
pub const INTERFACES_MAX_DEFAULT: i32 = 4096;

/// The tunable state behind the numeric parameters, with derived values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    /// `lnet_health_sensitivity`: health lost per failure, gained per success.
    pub health_sensitivity: u32,
    /// `lnet_recovery_interval`: deprecated, always 1.
    pub recovery_interval: u32,
    /// `lnet_recovery_limit`: seconds a peer NI is recovered (0: forever).
    pub recovery_limit: u32,
    /// `lnet_max_recovery_ping_interval`: cap of the recovery backoff (s).
    pub max_recovery_ping_interval: u32,
    /// `lnet_interfaces_max`: NIs in a ping or push buffer.
    pub interfaces_max: i32,
    /// `lnet_peer_discovery_disabled`: 0 or 1.
    pub peer_discovery_disabled: u32,
    /// `lnet_drop_asym_route`: 0 or 1.
    pub drop_asym_route: u32,
    /// `lnet_transaction_timeout`: response deadline (s).
    pub transaction_timeout: u32,
    /// `lnet_retry_count`: resends after the first attempt.
    pub retry_count: u32,
    /// `lnet_response_tracking`: 0 none, 1 GET, 2 PUT, 3 both.
    pub response_tracking: u32,
    /// `lnet_numa_range`: NUMA distances below this count as equal.
    pub numa_range: u32,
    /// `lock_prim_nid`: the primary NID given by Lustre is locked.
    pub lock_prim_nid: i32,
    /// `rnet_htable_size`: remote-net hash size.
    pub rnet_htable_size: i32,
    /// `use_tcp_bonding`: removed from Lustre; accepted so old configs load.
    pub use_tcp_bonding: i32,
    /// `router_sensitivity_percentage`: deprecated in Lustre (0..=100, its
    /// selection ignores it); kept so `lnetctl global show` and `set
    /// router_sensitivity` find it. lnet-rs routes by the health of the
    /// gateway's NIs alone, as Lustre does.
    pub router_sensitivity_percentage: u32,
    /// `tiny_router_buffers`: 0-payload router buffers (0: Lustre's
    /// default; checked when routing starts, lnet-core `rtr_buf.rs`).
    pub tiny_router_buffers: i32,
    /// `small_router_buffers`: one-page router buffers.
    pub small_router_buffers: i32,
    /// `large_router_buffers`: `LNET_MTU` router buffers.
    pub large_router_buffers: i32,
    /// `peer_buffer_credits`: router buffer credits per peer NI (0: the
    /// net's tunable, else its send credits).
    pub peer_buffer_credits: i32,
    /// `check_routers_before_use` (router.c): non-zero: gateways start
    /// dead and startup waits until each was checked once. Load time.
    pub check_routers_before_use: i32,
    /// `avoid_asym_router_failure`: non-zero: a single-hop route needs its
    /// gateway's NI on the remote net up.
    pub avoid_asym_router_failure: i32,
    /// `dead_router_check_interval`: deprecated, ignored (`INT_MIN`).
    pub dead_router_check_interval: i32,
    /// `live_router_check_interval`: deprecated, ignored (`INT_MIN`).
    pub live_router_check_interval: i32,
    /// `alive_router_check_interval`: seconds between gateway checks
    /// (0 or less: no router checker on end nodes).
    pub alive_router_check_interval: i32,
    /// `router_ping_timeout`: seconds, added to the check interval, a
    /// router's net may be silent before its NIs are reported down, and
    /// a gateway check may take.
    pub router_ping_timeout: i32,
    /// Derived: `max((transaction_timeout - 1) / (retry_count + 1), 1)`.
    pub lnd_timeout: u32,
    /// Derived: `floor(log2(max_recovery_ping_interval))`.
    pub max_recovery_ping_count: u32,
}

impl Tunables {
    /// Lustre's defaults.
    pub const DEFAULT: Tunables = Tunables {
        health_sensitivity: 100,
        recovery_interval: 1,
        recovery_limit: 0,
        max_recovery_ping_interval: 900,
        interfaces_max: INTERFACES_MAX_DEFAULT,
        peer_discovery_disabled: 0,
        drop_asym_route: 0,
        transaction_timeout: 150,
        retry_count: 2,
        response_tracking: 3,
        numa_range: 0,
        lock_prim_nid: 1,
        rnet_htable_size: 128,
        use_tcp_bonding: 0,
        router_sensitivity_percentage: 100,
        tiny_router_buffers: 0,
        small_router_buffers: 0,
        large_router_buffers: 0,
        peer_buffer_credits: 0,
        check_routers_before_use: 0,
        avoid_asym_router_failure: 1,
        dead_router_check_interval: i32::MIN,
        live_router_check_interval: i32::MIN,
        alive_router_check_interval: 60,
        router_ping_timeout: 50,
        lnd_timeout: lnd_timeout(150, 2),
        max_recovery_ping_count: max_recovery_ping_count(900),
    };
}

impl Tunables {
    /// The router checker's parameters (lnet-core `router_check`).
    pub const fn router_params(&self) -> super::router_check::RouterParams {
        super::router_check::RouterParams {
            alive_router_check_interval: self.alive_router_check_interval,
            router_ping_timeout: self.router_ping_timeout,
            check_routers_before_use: self.check_routers_before_use != 0,
            avoid_asym_router_failure: self.avoid_asym_router_failure != 0,
            router_sensitivity_percentage: self.router_sensitivity_percentage,
            drop_asym_route: self.drop_asym_route != 0,
        }
    }
}

impl Default for Tunables {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The fallback LND timeout derived from the transaction timeout and the
/// retry count (health.md §5.1).
pub const fn lnd_timeout(transaction_timeout: u32, retry_count: u32) -> u32 {
    let t = transaction_timeout.saturating_sub(1) / retry_count.saturating_add(1);
    if t < 1 {
        1
    } else {
        t
    }
}

/// Number of doubling steps before the recovery backoff reaches its cap
/// (health.md §7.1).
pub const fn max_recovery_ping_count(interval: u32) -> u32 {
    if interval == 0 {
        0
    } else {
        interval.ilog2()
    }
}

/// A numeric parameter of lnet.ko.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// `lnet_health_sensitivity`
    HealthSensitivity,
    /// `lnet_recovery_interval`
    RecoveryInterval,
    /// `lnet_recovery_limit`
    RecoveryLimit,
    /// `lnet_max_recovery_ping_interval`
    MaxRecoveryPingInterval,
    /// `lnet_interfaces_max`
    InterfacesMax,
    /// `lnet_peer_discovery_disabled`
    PeerDiscoveryDisabled,
    /// `lnet_drop_asym_route`
    DropAsymRoute,
    /// `lnet_transaction_timeout`
    TransactionTimeout,
    /// `lnet_retry_count`
    RetryCount,
    /// `lnet_response_tracking`
    ResponseTracking,
    /// `lnet_numa_range`
    NumaRange,
    /// `lock_prim_nid`
    LockPrimNid,
    /// `rnet_htable_size`
    RnetHtableSize,
    /// `use_tcp_bonding`
    UseTcpBonding,
    /// `router_sensitivity_percentage` (router.c in Lustre)
    RouterSensitivity,
    /// `tiny_router_buffers` (router.c)
    TinyRouterBuffers,
    /// `small_router_buffers` (router.c)
    SmallRouterBuffers,
    /// `large_router_buffers` (router.c)
    LargeRouterBuffers,
    /// `peer_buffer_credits` (router.c)
    PeerBufferCredits,
    /// `check_routers_before_use` (router.c)
    CheckRoutersBeforeUse,
    /// `avoid_asym_router_failure` (router.c)
    AvoidAsymRouterFailure,
    /// `dead_router_check_interval` (router.c, deprecated)
    DeadRouterCheckInterval,
    /// `live_router_check_interval` (router.c, deprecated)
    LiveRouterCheckInterval,
    /// `alive_router_check_interval` (router.c)
    AliveRouterCheckInterval,
    /// `router_ping_timeout` (router.c)
    RouterPingTimeout,
}

impl Param {
    /// Every numeric parameter, in the order Lustre declares them.
    pub const ALL: [Param; 25] = [
        Param::RnetHtableSize,
        Param::UseTcpBonding,
        Param::NumaRange,
        Param::HealthSensitivity,
        Param::RecoveryInterval,
        Param::RecoveryLimit,
        Param::MaxRecoveryPingInterval,
        Param::InterfacesMax,
        Param::PeerDiscoveryDisabled,
        Param::DropAsymRoute,
        Param::TransactionTimeout,
        Param::RetryCount,
        Param::ResponseTracking,
        Param::LockPrimNid,
        Param::RouterSensitivity,
        Param::TinyRouterBuffers,
        Param::SmallRouterBuffers,
        Param::LargeRouterBuffers,
        Param::PeerBufferCredits,
        Param::CheckRoutersBeforeUse,
        Param::AvoidAsymRouterFailure,
        Param::DeadRouterCheckInterval,
        Param::LiveRouterCheckInterval,
        Param::AliveRouterCheckInterval,
        Param::RouterPingTimeout,
    ];

    /// The name under /sys/module/lnet/parameters.
    pub const fn name(self) -> &'static str {
        match self {
            Param::HealthSensitivity => "lnet_health_sensitivity",
            Param::RecoveryInterval => "lnet_recovery_interval",
            Param::RecoveryLimit => "lnet_recovery_limit",
            Param::MaxRecoveryPingInterval => "lnet_max_recovery_ping_interval",
            Param::InterfacesMax => "lnet_interfaces_max",
            Param::PeerDiscoveryDisabled => "lnet_peer_discovery_disabled",
            Param::DropAsymRoute => "lnet_drop_asym_route",
            Param::TransactionTimeout => "lnet_transaction_timeout",
            Param::RetryCount => "lnet_retry_count",
            Param::ResponseTracking => "lnet_response_tracking",
            Param::NumaRange => "lnet_numa_range",
            Param::LockPrimNid => "lock_prim_nid",
            Param::RnetHtableSize => "rnet_htable_size",
            Param::UseTcpBonding => "use_tcp_bonding",
            Param::RouterSensitivity => "router_sensitivity_percentage",
            Param::TinyRouterBuffers => "tiny_router_buffers",
            Param::SmallRouterBuffers => "small_router_buffers",
            Param::LargeRouterBuffers => "large_router_buffers",
            Param::PeerBufferCredits => "peer_buffer_credits",
            Param::CheckRoutersBeforeUse => "check_routers_before_use",
            Param::AvoidAsymRouterFailure => "avoid_asym_router_failure",
            Param::DeadRouterCheckInterval => "dead_router_check_interval",
            Param::LiveRouterCheckInterval => "live_router_check_interval",
            Param::AliveRouterCheckInterval => "alive_router_check_interval",
            Param::RouterPingTimeout => "router_ping_timeout",
        }
    }

    /// Looks a parameter up by its sysfs name.
    pub fn from_name(name: &[u8]) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.name().as_bytes() == name)
    }

    /// Whether the parameter can be changed at runtime (mode 0644) or only
    /// when the module is loaded (0444).
    pub const fn runtime_writable(self) -> bool {
        !matches!(
            self,
            Param::NumaRange
                | Param::LockPrimNid
                | Param::RnetHtableSize
                | Param::UseTcpBonding
                | Param::TinyRouterBuffers
                | Param::SmallRouterBuffers
                | Param::LargeRouterBuffers
                | Param::PeerBufferCredits
                | Param::CheckRoutersBeforeUse
                | Param::DeadRouterCheckInterval
                | Param::LiveRouterCheckInterval
        )
    }

    /// The sysfs permission bits, as Lustre declares them.
    pub const fn mode(self) -> u16 {
        if self.runtime_writable() {
            0o644
        } else {
            0o444
        }
    }

    /// The parameter's current value, as sysfs prints it.
    pub const fn value(self, t: &Tunables) -> i64 {
        match self {
            Param::HealthSensitivity => t.health_sensitivity as i64,
            Param::RecoveryInterval => t.recovery_interval as i64,
            Param::RecoveryLimit => t.recovery_limit as i64,
            Param::MaxRecoveryPingInterval => t.max_recovery_ping_interval as i64,
            Param::InterfacesMax => t.interfaces_max as i64,
            Param::PeerDiscoveryDisabled => t.peer_discovery_disabled as i64,
            Param::DropAsymRoute => t.drop_asym_route as i64,
            Param::TransactionTimeout => t.transaction_timeout as i64,
            Param::RetryCount => t.retry_count as i64,
            Param::ResponseTracking => t.response_tracking as i64,
            Param::NumaRange => t.numa_range as i64,
            Param::LockPrimNid => t.lock_prim_nid as i64,
            Param::RnetHtableSize => t.rnet_htable_size as i64,
            Param::UseTcpBonding => t.use_tcp_bonding as i64,
            Param::RouterSensitivity => t.router_sensitivity_percentage as i64,
            Param::TinyRouterBuffers => t.tiny_router_buffers as i64,
            Param::SmallRouterBuffers => t.small_router_buffers as i64,
            Param::LargeRouterBuffers => t.large_router_buffers as i64,
            Param::PeerBufferCredits => t.peer_buffer_credits as i64,
            Param::CheckRoutersBeforeUse => t.check_routers_before_use as i64,
            Param::AvoidAsymRouterFailure => t.avoid_asym_router_failure as i64,
            Param::DeadRouterCheckInterval => t.dead_router_check_interval as i64,
            Param::LiveRouterCheckInterval => t.live_router_check_interval as i64,
            Param::AliveRouterCheckInterval => t.alive_router_check_interval as i64,
            Param::RouterPingTimeout => t.router_ping_timeout as i64,
        }
    }
}

/// Something worth telling the administrator about an accepted write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Health was turned off, which turns resends off too.
    RetryCountForcedToZero,
    /// `lnet_recovery_interval` is ignored.
    RecoveryIntervalDeprecated,
    /// `lnet_interfaces_max` was too small and was replaced by the default.
    InterfacesMaxReset {
        /// The value that was written.
        requested: i32,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::RetryCountForcedToZero => {
                f.write_str("health sensitivity 0 turns health off: lnet_retry_count set to 0")
            }
            Notice::RecoveryIntervalDeprecated => {
                f.write_str("'lnet_recovery_interval' has been deprecated and is ignored")
            }
            Notice::InterfacesMaxReset { requested } => write!(
                f,
                "lnet_interfaces_max {requested} is below {INTERFACES_MIN}: set to {INTERFACES_MAX_DEFAULT}"
            ),
        }
    }
}

/// Why a write to a parameter was refused. The old value is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// The text is not a number, or not one that fits.
    Number {
        /// The parameter written.
        param: Param,
        /// What was wrong with the text.
        error: NumberError,
    },
    /// No value was given (a bare name on the insmod command line).
    Missing {
        /// The parameter named.
        param: Param,
    },
    /// `lnet_health_sensitivity` above the maximum health value.
    SensitivityAboveMax {
        /// The value written.
        value: u64,
    },
    /// Resends need health: `lnet_retry_count` > 0 with sensitivity 0.
    RetryCountWithoutHealth,
    /// `lnet_retry_count` above `lnet_transaction_timeout`.
    RetryCountAboveTransactionTimeout {
        /// The value written.
        value: u64,
        /// The current transaction timeout.
        transaction_timeout: u32,
    },
    /// `lnet_transaction_timeout` zero or not above `lnet_retry_count`.
    TransactionTimeoutTooSmall {
        /// The value written.
        value: u64,
        /// The current retry count.
        retry_count: u32,
    },
    /// `lnet_max_recovery_ping_interval` of zero.
    MaxRecoveryPingIntervalZero,
    /// `lnet_response_tracking` outside 0..=3.
    ResponseTrackingRange {
        /// The value written.
        value: u64,
    },
    /// `router_sensitivity_percentage` above 100.
    PercentageAbove100 {
        /// The value written.
        value: u64,
    },
    /// A 0/1 parameter given another number.
    NotBoolean {
        /// The parameter written.
        param: Param,
        /// The value written.
        value: u64,
    },
}

impl ParamError {
    /// The errno handed back to the writer.
    pub fn errno(&self) -> i32 {
        match self {
            ParamError::Number { error, .. } => error.errno(),
            _ => EINVAL,
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Number { param, error: NumberError::Invalid } => {
                write!(f, "Invalid module parameter value for '{}': not a number", param.name())
            }
            ParamError::Number { param, error: NumberError::Overflow } => {
                write!(f, "Invalid module parameter value for '{}': out of range", param.name())
            }
            ParamError::Missing { param } => {
                write!(f, "Invalid module parameter value for '{}': no value given", param.name())
            }
            ParamError::PercentageAbove100 { value } => write!(
                f,
                "Invalid value: {value} for 'router_sensitivity_percentage'"
            ),
            ParamError::SensitivityAboveMax { value } => write!(
                f,
                "Invalid health value. Maximum: {MAX_HEALTH_VALUE} value = {value}"
            ),
            ParamError::RetryCountWithoutHealth => {
                f.write_str("Can not set lnet_retry_count when health feature is turned off")
            }
            ParamError::RetryCountAboveTransactionTimeout { value, transaction_timeout } => write!(
                f,
                "Invalid value for lnet_retry_count ({value}). Has to be smaller than lnet_transaction_timeout ({transaction_timeout})"
            ),
            ParamError::TransactionTimeoutTooSmall { value, retry_count } => write!(
                f,
                "Invalid value for lnet_transaction_timeout ({value}). Has to be greater than lnet_retry_count ({retry_count})"
            ),
            ParamError::MaxRecoveryPingIntervalZero => {
                f.write_str("Invalid max ping timeout. Must be strictly positive")
            }
            ParamError::ResponseTrackingRange { value } => {
                write!(f, "Invalid value ({value}) for 'lnet_response_tracking': must be 0..3")
            }
            ParamError::NotBoolean { param, value } => {
                write!(f, "Invalid value ({value}) for '{}': must be 0 or 1", param.name())
            }
        }
    }
}

/// An accepted write: the new state, and what to tell the administrator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// The tunables after the write, derived values recomputed.
    pub tunables: Tunables,
    /// A warning to log, if any.
    pub notice: Option<Notice>,
}

fn fit_u32(param: Param, v: u64) -> Result<u32, ParamError> {
    u32::try_from(v).map_err(|_| ParamError::Number {
        param,
        error: NumberError::Overflow,
    })
}

/// Applies a write of `input` to `param` on top of `current`, as Lustre's
/// setter for that parameter does. `None` is a name given with no value.
pub fn set(current: &Tunables, param: Param, input: Option<&[u8]>) -> Result<Change, ParamError> {
    let input = input.ok_or(ParamError::Missing { param })?;
    let number = |error| ParamError::Number { param, error };
    let ulong = || kstrto::parse_u64(input).map_err(number);
    let uint = || kstrto::parse_u32(input).map_err(number);
    let int = || kstrto::parse_i32(input).map_err(number);

    let mut t = *current;
    let mut notice = None;
    match param {
        Param::HealthSensitivity => {
            let v = ulong()?;
            if v > u64::from(MAX_HEALTH_VALUE) {
                return Err(ParamError::SensitivityAboveMax { value: v });
            }
            let v = fit_u32(param, v)?;
            // Resends without health would never steer away from a bad path.
            if t.health_sensitivity != 0 && v == 0 && t.retry_count != 0 {
                t.retry_count = 0;
                notice = Some(Notice::RetryCountForcedToZero);
            }
            t.health_sensitivity = v;
        }
        Param::RecoveryInterval => {
            ulong()?;
            notice = Some(Notice::RecoveryIntervalDeprecated);
        }
        Param::RecoveryLimit => t.recovery_limit = uint()?,
        Param::RouterSensitivity => {
            let v = ulong()?;
            if v > 100 {
                return Err(ParamError::PercentageAbove100 { value: v });
            }
            t.router_sensitivity_percentage = fit_u32(param, v)?;
        }
        Param::MaxRecoveryPingInterval => {
            let v = ulong()?;
            if v == 0 {
                return Err(ParamError::MaxRecoveryPingIntervalZero);
            }
            t.max_recovery_ping_interval = fit_u32(param, v)?;
        }
        Param::InterfacesMax => {
            let v = int()?;
            if v < INTERFACES_MIN {
                t.interfaces_max = INTERFACES_MAX_DEFAULT;
                notice = Some(Notice::InterfacesMaxReset { requested: v });
            } else {
                t.interfaces_max = v;
            }
        }
        Param::PeerDiscoveryDisabled => t.peer_discovery_disabled = u32::from(ulong()? != 0),
        Param::DropAsymRoute => {
            let v = ulong()?;
            if v > 1 {
                return Err(ParamError::NotBoolean { param, value: v });
            }
            t.drop_asym_route = u32::from(v == 1);
        }
        Param::TransactionTimeout => {
            let v = ulong()?;
            if v == 0 || v <= u64::from(t.retry_count) {
                return Err(ParamError::TransactionTimeoutTooSmall {
                    value: v,
                    retry_count: t.retry_count,
                });
            }
            t.transaction_timeout = fit_u32(param, v)?;
        }
        Param::RetryCount => {
            let v = ulong()?;
            if t.health_sensitivity == 0 && v > 0 {
                return Err(ParamError::RetryCountWithoutHealth);
            }
            if v > u64::from(t.transaction_timeout) {
                return Err(ParamError::RetryCountAboveTransactionTimeout {
                    value: v,
                    transaction_timeout: t.transaction_timeout,
                });
            }
            t.retry_count = fit_u32(param, v)?;
        }
        Param::ResponseTracking => {
            let v = ulong()?;
            if v > 3 {
                return Err(ParamError::ResponseTrackingRange { value: v });
            }
            t.response_tracking = fit_u32(param, v)?;
        }
        Param::NumaRange => t.numa_range = uint()?,
        Param::LockPrimNid => t.lock_prim_nid = int()?,
        Param::RnetHtableSize => t.rnet_htable_size = int()?,
        Param::UseTcpBonding => t.use_tcp_bonding = int()?,
        // Plain ints, as Lustre's: a negative count is refused when routing
        // starts, not here.
        Param::TinyRouterBuffers => t.tiny_router_buffers = int()?,
        Param::SmallRouterBuffers => t.small_router_buffers = int()?,
        Param::LargeRouterBuffers => t.large_router_buffers = int()?,
        Param::PeerBufferCredits => t.peer_buffer_credits = int()?,
        // Plain ints too (`module_param(..., int, ...)`): any value, its
        // sign read as router_check.rs says (0 or less: no checker).
        Param::CheckRoutersBeforeUse => t.check_routers_before_use = int()?,
        Param::AvoidAsymRouterFailure => t.avoid_asym_router_failure = int()?,
        Param::DeadRouterCheckInterval => t.dead_router_check_interval = int()?,
        Param::LiveRouterCheckInterval => t.live_router_check_interval = int()?,
        Param::AliveRouterCheckInterval => t.alive_router_check_interval = int()?,
        Param::RouterPingTimeout => t.router_ping_timeout = int()?,
    }
    t.lnd_timeout = lnd_timeout(t.transaction_timeout, t.retry_count);
    t.max_recovery_ping_count = max_recovery_ping_count(t.max_recovery_ping_interval);
    Ok(Change {
        tunables: t,
        notice,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn write(t: &Tunables, p: Param, s: &str) -> Result<Change, ParamError> {
        set(t, p, Some(s.as_bytes()))
    }

    fn ok(t: &Tunables, p: Param, s: &str) -> Tunables {
        match write(t, p, s) {
            Ok(c) => c.tunables,
            Err(e) => panic!("{} = {s:?} refused: {e}", p.name()),
        }
    }

    #[test]
    fn defaults_match_lustre() {
        let t = Tunables::DEFAULT;
        assert_eq!(t.health_sensitivity, 100);
        assert_eq!(t.retry_count, 2);
        assert_eq!(t.transaction_timeout, 150);
        assert_eq!(t.lnd_timeout, 49);
        assert_eq!(t.max_recovery_ping_interval, 900);
        assert_eq!(t.max_recovery_ping_count, 9);
        assert_eq!(t.response_tracking, 3);
        assert_eq!(t.interfaces_max, 4096);
        assert_eq!(t.recovery_interval, 1);
        assert_eq!(t.lock_prim_nid, 1);
        assert_eq!(t.rnet_htable_size, 128);
    }

    #[test]
    fn names_round_trip_and_modes() {
        for p in Param::ALL {
            assert_eq!(Param::from_name(p.name().as_bytes()), Some(p));
        }
        assert_eq!(Param::from_name(b"lnet_nope"), None);
        assert_eq!(Param::HealthSensitivity.mode(), 0o644);
        assert_eq!(Param::NumaRange.mode(), 0o444);
        assert_eq!(Param::LockPrimNid.mode(), 0o444);
    }

    #[test]
    fn router_buffer_params_are_load_time_ints() {
        let t = Tunables::DEFAULT;
        for p in [
            Param::TinyRouterBuffers,
            Param::SmallRouterBuffers,
            Param::LargeRouterBuffers,
            Param::PeerBufferCredits,
        ] {
            assert_eq!(p.mode(), 0o444);
            assert_eq!(p.value(&t), 0);
            // Any int, as Lustre's `module_param(..., int, 0444)`; a
            // negative buffer count is refused when routing starts.
            assert_eq!(p.value(&ok(&t, p, "-3")), -3);
            assert_eq!(p.value(&ok(&t, p, "64")), 64);
            assert!(write(&t, p, "x").is_err());
            assert!(write(&t, p, "4294967296").is_err());
        }
    }

    #[test]
    fn router_check_params() {
        let t = Tunables::DEFAULT;
        assert_eq!(
            t.router_params(),
            super::super::router_check::RouterParams::DEFAULT
        );
        assert_eq!(
            Param::DeadRouterCheckInterval.value(&t),
            i64::from(i32::MIN)
        );
        assert_eq!(
            Param::LiveRouterCheckInterval.value(&t),
            i64::from(i32::MIN)
        );
        for (p, mode) in [
            (Param::CheckRoutersBeforeUse, 0o444),
            (Param::AvoidAsymRouterFailure, 0o644),
            (Param::DeadRouterCheckInterval, 0o444),
            (Param::LiveRouterCheckInterval, 0o444),
            (Param::AliveRouterCheckInterval, 0o644),
            (Param::RouterPingTimeout, 0o644),
        ] {
            assert_eq!(p.mode(), mode, "{}", p.name());
            assert_eq!(p.value(&ok(&t, p, "-5")), -5);
            assert_eq!(p.value(&ok(&t, p, "0x10")), 16);
            assert!(matches!(
                write(&t, p, "soon"),
                Err(ParamError::Number {
                    error: NumberError::Invalid,
                    ..
                })
            ));
            assert_eq!(write(&t, p, "2147483648").unwrap_err().errno(), ERANGE);
        }
        let r = ok(&t, Param::AliveRouterCheckInterval, "2");
        let r = ok(&r, Param::RouterPingTimeout, "3");
        let r = ok(&r, Param::AvoidAsymRouterFailure, "0");
        let r = ok(&r, Param::CheckRoutersBeforeUse, "7").router_params();
        assert_eq!(r.interval_ms(), Some(2000));
        assert_eq!(r.check_span_ms(), 5000);
        assert!(r.check_routers_before_use && !r.avoid_asym_router_failure);
        assert_eq!(
            ok(&t, Param::AliveRouterCheckInterval, "0")
                .router_params()
                .interval_ms(),
            None
        );
    }

    #[test]
    fn sensitivity_limits() {
        let t = Tunables::DEFAULT;
        assert_eq!(
            ok(&t, Param::HealthSensitivity, "1000").health_sensitivity,
            1000
        );
        let e = write(&t, Param::HealthSensitivity, "1001").unwrap_err();
        assert_eq!(e, ParamError::SensitivityAboveMax { value: 1001 });
        assert_eq!(e.errno(), EINVAL);
        assert_eq!(
            write(&t, Param::HealthSensitivity, "x")
                .unwrap_err()
                .errno(),
            EINVAL
        );
        assert_eq!(
            write(&t, Param::HealthSensitivity, "-1")
                .unwrap_err()
                .errno(),
            EINVAL
        );
        assert_eq!(
            write(&t, Param::HealthSensitivity, "99999999999999999999")
                .unwrap_err()
                .errno(),
            ERANGE
        );
    }

    #[test]
    fn sensitivity_zero_turns_resends_off() {
        let c = write(&Tunables::DEFAULT, Param::HealthSensitivity, "0\n").unwrap();
        assert_eq!(c.tunables.retry_count, 0);
        assert_eq!(c.tunables.lnd_timeout, 149);
        assert_eq!(c.notice, Some(Notice::RetryCountForcedToZero));
        // With health off, resends cannot be turned back on...
        let e = write(&c.tunables, Param::RetryCount, "1").unwrap_err();
        assert_eq!(e, ParamError::RetryCountWithoutHealth);
        // ...but zero is fine, and health can come back.
        assert_eq!(ok(&c.tunables, Param::RetryCount, "0").retry_count, 0);
        let back = ok(&c.tunables, Param::HealthSensitivity, "100");
        assert_eq!(ok(&back, Param::RetryCount, "3").retry_count, 3);
    }

    #[test]
    fn retry_count_against_transaction_timeout() {
        let t = ok(&Tunables::DEFAULT, Param::TransactionTimeout, "10");
        // Lustre allows retry_count == transaction_timeout (only ">" is refused).
        assert_eq!(ok(&t, Param::RetryCount, "10").retry_count, 10);
        assert_eq!(ok(&t, Param::RetryCount, "10").lnd_timeout, 1);
        let e = write(&t, Param::RetryCount, "11").unwrap_err();
        assert_eq!(
            e,
            ParamError::RetryCountAboveTransactionTimeout {
                value: 11,
                transaction_timeout: 10
            }
        );
    }

    #[test]
    fn transaction_timeout_must_exceed_retry_count() {
        let t = Tunables::DEFAULT;
        for bad in ["0", "1", "2"] {
            let e = write(&t, Param::TransactionTimeout, bad).unwrap_err();
            assert!(matches!(
                e,
                ParamError::TransactionTimeoutTooSmall { retry_count: 2, .. }
            ));
        }
        let t3 = ok(&t, Param::TransactionTimeout, "3");
        assert_eq!(t3.lnd_timeout, 1);
        assert_eq!(
            write(&t, Param::TransactionTimeout, "4294967296")
                .unwrap_err()
                .errno(),
            ERANGE
        );
    }

    #[test]
    fn lnd_timeout_follows_its_inputs() {
        let t = ok(&Tunables::DEFAULT, Param::TransactionTimeout, "61");
        assert_eq!(t.lnd_timeout, 20);
        let t = ok(&t, Param::RetryCount, "0");
        assert_eq!(t.lnd_timeout, 60);
        let t = ok(&t, Param::RetryCount, "5");
        assert_eq!(t.lnd_timeout, 10);
    }

    #[test]
    fn recovery_ping_interval() {
        let t = Tunables::DEFAULT;
        assert_eq!(
            write(&t, Param::MaxRecoveryPingInterval, "0").unwrap_err(),
            ParamError::MaxRecoveryPingIntervalZero
        );
        let t = ok(&t, Param::MaxRecoveryPingInterval, "8");
        assert_eq!(t.max_recovery_ping_count, 3);
        assert_eq!(
            ok(&t, Param::MaxRecoveryPingInterval, "1").max_recovery_ping_count,
            0
        );
        assert_eq!(
            ok(&t, Param::MaxRecoveryPingInterval, "0x400").max_recovery_ping_count,
            10
        );
    }

    #[test]
    fn router_sensitivity_is_a_percentage() {
        let t = Tunables::DEFAULT;
        assert_eq!(t.router_sensitivity_percentage, 100);
        assert_eq!(Param::RouterSensitivity.mode(), 0o644);
        assert_eq!(
            ok(&t, Param::RouterSensitivity, "0x32").router_sensitivity_percentage,
            50
        );
        let e = write(&t, Param::RouterSensitivity, "101").unwrap_err();
        assert_eq!(e, ParamError::PercentageAbove100 { value: 101 });
        assert_eq!(e.errno(), EINVAL);
        assert_eq!(
            write(&t, Param::RouterSensitivity, "-1")
                .unwrap_err()
                .errno(),
            EINVAL
        );
    }

    #[test]
    fn small_and_odd_parameters() {
        let t = Tunables::DEFAULT;
        let c = write(&t, Param::InterfacesMax, "15").unwrap();
        assert_eq!(c.tunables.interfaces_max, INTERFACES_MAX_DEFAULT);
        assert_eq!(c.notice, Some(Notice::InterfacesMaxReset { requested: 15 }));
        assert_eq!(ok(&t, Param::InterfacesMax, "16").interfaces_max, 16);
        assert_eq!(
            ok(&t, Param::InterfacesMax, "-3").interfaces_max,
            INTERFACES_MAX_DEFAULT
        );
        assert_eq!(
            ok(&t, Param::PeerDiscoveryDisabled, "7").peer_discovery_disabled,
            1
        );
        assert_eq!(ok(&t, Param::DropAsymRoute, "1").drop_asym_route, 1);
        assert!(matches!(
            write(&t, Param::DropAsymRoute, "2"),
            Err(ParamError::NotBoolean { .. })
        ));
        assert_eq!(ok(&t, Param::ResponseTracking, "0").response_tracking, 0);
        assert!(matches!(
            write(&t, Param::ResponseTracking, "4"),
            Err(ParamError::ResponseTrackingRange { value: 4 })
        ));
        let c = write(&t, Param::RecoveryInterval, "5").unwrap();
        assert_eq!(
            (c.tunables.recovery_interval, c.notice),
            (1, Some(Notice::RecoveryIntervalDeprecated))
        );
        assert!(write(&t, Param::RecoveryInterval, "five").is_err());
        assert_eq!(
            ok(&t, Param::RecoveryLimit, "4294967295").recovery_limit,
            u32::MAX
        );
        assert_eq!(
            write(&t, Param::RecoveryLimit, "4294967296")
                .unwrap_err()
                .errno(),
            ERANGE
        );
        assert_eq!(ok(&t, Param::LockPrimNid, "0").lock_prim_nid, 0);
        assert_eq!(
            set(&t, Param::RetryCount, None).unwrap_err(),
            ParamError::Missing {
                param: Param::RetryCount
            }
        );
    }

    fn any_param() -> impl Strategy<Value = Param> {
        (0..Param::ALL.len()).prop_map(|i| Param::ALL[i])
    }

    fn any_tunables() -> impl Strategy<Value = Tunables> {
        // Reach states only through accepted writes, as the module does.
        proptest::collection::vec((any_param(), 0u64..2000), 0..12).prop_map(|writes| {
            let mut t = Tunables::DEFAULT;
            for (p, v) in writes {
                if let Ok(c) = set(&t, p, Some(std::format!("{v}").as_bytes())) {
                    t = c.tunables;
                }
            }
            t
        })
    }

    extern crate std;

    proptest! {
        #[test]
        fn invariants_hold_after_any_write(t in any_tunables(), p in any_param(), input in proptest::collection::vec(any::<u8>(), 0..24)) {
            let r = set(&t, p, Some(&input));
            let after = match r { Ok(c) => c.tunables, Err(e) => { prop_assert!(e.errno() == EINVAL || e.errno() == ERANGE); t } };
            prop_assert!(after.health_sensitivity <= MAX_HEALTH_VALUE);
            prop_assert!(after.transaction_timeout > 0);
            prop_assert!(after.retry_count <= after.transaction_timeout);
            prop_assert!(after.health_sensitivity != 0 || after.retry_count == 0);
            prop_assert!(after.response_tracking <= 3);
            prop_assert!(after.max_recovery_ping_interval > 0);
            prop_assert!(after.interfaces_max >= INTERFACES_MIN);
            prop_assert!(after.peer_discovery_disabled <= 1 && after.drop_asym_route <= 1);
            prop_assert_eq!(after.lnd_timeout, lnd_timeout(after.transaction_timeout, after.retry_count));
            prop_assert!(after.lnd_timeout >= 1);
        }

        #[test]
        fn sensitivity_range(v in 0u64..5000) {
            let r = set(&Tunables::DEFAULT, Param::HealthSensitivity, Some(std::format!("{v}").as_bytes()));
            prop_assert_eq!(r.is_ok(), v <= 1000);
        }

        #[test]
        fn transaction_timeout_range(rc in 0u32..50, v in 0u64..200) {
            let t = Tunables { retry_count: rc, ..Tunables::DEFAULT };
            let r = set(&t, Param::TransactionTimeout, Some(std::format!("{v}").as_bytes()));
            prop_assert_eq!(r.is_ok(), v > u64::from(rc));
            if let Ok(c) = r {
                prop_assert_eq!(c.tunables.lnd_timeout, core::cmp::max((v as u32 - 1) / (rc + 1), 1));
            }
        }
    }
}
