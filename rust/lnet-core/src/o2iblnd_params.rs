//! ko2iblnd's module parameters (`/sys/module/ko2iblnd/parameters`): every
//! parameter of Lustre's o2iblnd, with Lustre's names, modes and defaults
//! and a range each, and the NI tunables Lustre derives from them when an
//! NI starts (`kiblnd_tunables_init`, `kiblnd_tunables_setup`).
//!
//! Lustre takes any `int` and fixes some values up later; these refuse a
//! value that could never be used (a port above 65535, a retry count that
//! does not fit the CM's 3-bit field, credits the `u8` of `ibm_credits`
//! cannot carry) with `EINVAL` and a message naming the allowed values,
//! and keep the old value. `tos` answers `ERANGE`, as Lustre's own setter
//! does. A refused value on the modprobe line fails the load, so ranges
//! are wide enough for the tunings in use, such as the OPA one Lustre
//! ships in `ko2iblnd.conf` (`peer_credits=32 peer_credits_hiw=16
//! credits=1024 concurrent_sends=64 ntx=2048 map_on_demand=256
//! fmr_pool_size=2048 fmr_flush_trigger=512 fmr_cache=1
//! conns_per_peer=4`). Values Lustre
//! silently adjusts at NI start (`peer_credits` below 8, a
//! `peer_credits_hiw` or `concurrent_sends` out of proportion,
//! `map_on_demand` 0) are accepted and adjusted the same way by
//! [`tunables_setup`]. `ib_mtu` takes one of its six values only: Lustre
//! would refuse any other when the NI starts.
//!
//! Accepted and shown, but without effect in lnet-rs's ko2iblnd:
//! - `fmr_pool_size`, `fmr_flush_trigger`, `fmr_cache`: FMR pools. Linux
//!   removed FMR in 5.8, so 6.12 has none; lnet-rs registers memory by
//!   fast registration only.
//! - `use_fastreg_gaps`: lnet-rs does not allocate gappy (SG_GAPS) fast
//!   registration regions.
//! - `dev_failover`: HCA failover between bonded IPoIB ports. lnet-rs has
//!   one NI per interface and moves traffic off a failed one through LNet
//!   Health and Multi-Rail instead.
//! - `map_on_demand`: obsolete in Lustre too; every connection offers 257
//!   fragments.
//! - `ntx`: the size of Lustre's pools of txs with mapped message
//!   buffers, which grow past it anyway. lnet-rs allocates and maps each
//!   tx's buffer as it is made.
//!
//! They stay declared so that existing modprobe configurations load.
//! `pmr_pool_size` and `skip_mr_reg` are not parameters of the Lustre
//! o2iblnd lnet-rs matches; the kernel ignores them with a warning, as any
//! unknown parameter.
//!
//! `ipif_name`, the interface an `o2ib` net without one uses, is Lustre's
//! only string parameter. It is not an [`IbParam`]: [`IfName`] and
//! [`parse_ipif_name`] hold its rules.

use super::credits::{NetTunables, MAX_CREDITS, UNSET};
use super::lnd_params::{lnd_param_table, LndParam, ParamError, Spec};
use super::o2iblnd::{MAX_RDMA_FRAGS, VERSION_1};
use super::params::{EINVAL, ERANGE};
use core::fmt;

/// Lowest peer credits an NI runs with (`IBLND_CREDITS_DEFAULT`): a
/// smaller `peer_credits` is raised to it.
pub const PEER_CREDITS_MIN: i32 = 8;
/// Highest peer credits (`IBLND_CREDITS_MAX`): what `ibm_credits`, a `u8`,
/// can return at once.
pub const PEER_CREDITS_MAX: i32 = u8::MAX as i32;
/// Queue depth of a V1 connection (`IBLND_MSG_QUEUE_SIZE_V1`), whatever
/// `peer_credits` says.
pub const MSG_QUEUE_SIZE_V1: i32 = 8;
/// The values `ib_mtu` takes; 0 keeps the path's MTU.
pub const IB_MTUS: [i32; 6] = [0, 256, 512, 1024, 2048, 4096];
/// Smallest transmit pool per CPT (`IBLND_TX_POOL`).
pub const TX_POOL_MIN: i32 = 256;
/// Scheduler threads per CPT when `nscheds` is 0: at least this many...
const N_SCHED: u32 = 2;
/// ...and, when the first NI starts, at most this many.
const N_SCHED_HIGH: u32 = 4;

/// A ko2iblnd parameter other than `ipif_name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IbParam {
    /// `service`: the RDMA CM port (TCP port space) to listen on and
    /// connect to.
    Service,
    /// `cksum`: 1 checksums every message sent (not the RDMA payloads).
    Cksum,
    /// `timeout`: seconds a connection attempt or a transmit may take; 0
    /// takes LNet's LND timeout.
    Timeout,
    /// `nscheds`: scheduler threads per CPT (0: from the CPT's CPUs).
    Nscheds,
    /// `conns_per_peer`: connections to each peer NI (0: 1).
    ConnsPerPeer,
    /// `ntx`: transmit descriptors of an NI, shared by its CPTs.
    Ntx,
    /// `credits`: concurrent sends through one NI.
    Credits,
    /// `peer_credits`: concurrent sends to one peer NI, the queue depth a
    /// connection asks for.
    PeerCredits,
    /// `peer_credits_hiw`: credits owed to a peer that make a NOOP worth
    /// sending to return them (0: half of `peer_credits`).
    PeerCreditsHiw,
    /// `peer_buffer_credits`: router buffer credits per peer.
    PeerBufferCredits,
    /// `peer_timeout`: seconds without news before a peer is dead (<= 0:
    /// never), used by routers.
    PeerTimeout,
    /// `retry_count`: transport retries of the RDMA CM and the QP.
    RetryCount,
    /// `rnr_retry_count`: retries when the peer has no receive posted (7:
    /// without end).
    RnrRetryCount,
    /// `keepalive`: idle seconds before a NOOP goes to the peer (0: never).
    Keepalive,
    /// `ib_mtu`: the path MTU connections use (0: the path's own).
    IbMtu,
    /// `concurrent_sends`: work requests posted at once on a connection
    /// (0: `peer_credits`).
    ConcurrentSends,
    /// `use_fastreg_gaps`: no effect (see the module doc).
    UseFastregGaps,
    /// `map_on_demand`: no effect (see the module doc).
    MapOnDemand,
    /// `fmr_pool_size`: no effect (see the module doc).
    FmrPoolSize,
    /// `fmr_flush_trigger`: no effect (see the module doc).
    FmrFlushTrigger,
    /// `fmr_cache`: no effect (see the module doc).
    FmrCache,
    /// `dev_failover`: no effect (see the module doc).
    DevFailover,
    /// `require_privileged_port`: 1 refuses connections from a port above
    /// 1023.
    RequirePrivilegedPort,
    /// `use_privileged_port`: 1 connects from a port below 1024.
    UsePrivilegedPort,
    /// `wrq_sge`: scatter/gather entries per RDMA work request.
    WrqSge,
    /// `tos`: type of service of the connections (-1: the system's).
    Tos,
}

impl IbParam {
    /// Every parameter, in Lustre's declaration order.
    pub const ALL: [IbParam; 26] = [
        IbParam::Service,
        IbParam::Cksum,
        IbParam::Timeout,
        IbParam::Nscheds,
        IbParam::ConnsPerPeer,
        IbParam::Ntx,
        IbParam::Credits,
        IbParam::PeerCredits,
        IbParam::PeerCreditsHiw,
        IbParam::PeerBufferCredits,
        IbParam::PeerTimeout,
        IbParam::RetryCount,
        IbParam::RnrRetryCount,
        IbParam::Keepalive,
        IbParam::IbMtu,
        IbParam::ConcurrentSends,
        IbParam::UseFastregGaps,
        IbParam::MapOnDemand,
        IbParam::FmrPoolSize,
        IbParam::FmrFlushTrigger,
        IbParam::FmrCache,
        IbParam::DevFailover,
        IbParam::RequirePrivilegedPort,
        IbParam::UsePrivilegedPort,
        IbParam::WrqSge,
        IbParam::Tos,
    ];

    const fn decl(self) -> Spec {
        Spec::row(match self {
            IbParam::Service => ("service", false, 987, 1, 65_535),
            IbParam::Cksum => ("cksum", true, 0, 0, 1),
            IbParam::Timeout => ("timeout", true, 50, 0, 86_400),
            // A CPT never has more CPUs than x86_64's largest NR_CPUS.
            IbParam::Nscheds => ("nscheds", false, 0, 0, 8192),
            // Lustre's own bound when lnetctl sets it.
            IbParam::ConnsPerPeer => ("conns_per_peer", false, 1, 0, 127),
            // The NI tunable is a u16.
            IbParam::Ntx => ("ntx", false, 512, 1, 65_535),
            IbParam::Credits => ("credits", false, 256, 1, MAX_CREDITS),
            IbParam::PeerCredits => ("peer_credits", false, 8, 1, PEER_CREDITS_MAX),
            IbParam::PeerCreditsHiw => ("peer_credits_hiw", false, 0, 0, PEER_CREDITS_MAX),
            IbParam::PeerBufferCredits => ("peer_buffer_credits", false, 0, 0, MAX_CREDITS),
            IbParam::PeerTimeout => ("peer_timeout", false, 180, -1, 86_400),
            // 3-bit fields of the CM REQ and the QP attributes.
            IbParam::RetryCount => ("retry_count", true, 5, 0, 7),
            IbParam::RnrRetryCount => ("rnr_retry_count", true, 6, 0, 7),
            IbParam::Keepalive => ("keepalive", true, 100, 0, 86_400),
            IbParam::IbMtu => ("ib_mtu", false, 0, 0, 4096),
            // Anything above twice the largest peer_credits is cut to it.
            IbParam::ConcurrentSends => ("concurrent_sends", false, 0, 0, 2 * PEER_CREDITS_MAX),
            IbParam::UseFastregGaps => ("use_fastreg_gaps", false, 0, 0, 1),
            IbParam::MapOnDemand => ("map_on_demand", false, 1, 0, MAX_RDMA_FRAGS as i32),
            // Lustre fails an NI whose pool is below ntx / 4, so never 0;
            // the flush trigger has a floor of its own.
            IbParam::FmrPoolSize => ("fmr_pool_size", false, 512, 1, 1 << 20),
            IbParam::FmrFlushTrigger => ("fmr_flush_trigger", false, 384, 0, 1 << 20),
            IbParam::FmrCache => ("fmr_cache", false, 1, 0, 1),
            // 2 forces a failover, for Lustre's debugging.
            IbParam::DevFailover => ("dev_failover", false, 0, 0, 2),
            IbParam::RequirePrivilegedPort => ("require_privileged_port", true, 0, 0, 1),
            IbParam::UsePrivilegedPort => ("use_privileged_port", true, 1, 0, 1),
            // No HCA offers more send SGEs (rxe: 32).
            IbParam::WrqSge => ("wrq_sge", false, 2, 1, 32),
            IbParam::Tos => ("tos", false, -1, -1, 255),
        })
    }

    /// Whether lnet-rs's ko2iblnd honours the parameter (see the module
    /// doc for those it only shows).
    pub const fn has_effect(self) -> bool {
        !matches!(
            self,
            IbParam::UseFastregGaps
                | IbParam::MapOnDemand
                | IbParam::FmrPoolSize
                | IbParam::FmrFlushTrigger
                | IbParam::FmrCache
                | IbParam::DevFailover
        )
    }
}

lnd_param_table!(IbParam, 26, {
    /// `ib_mtu` takes one of its six values only.
    fn values(self) -> Option<&'static [i32]> {
        match self {
            IbParam::IbMtu => Some(&IB_MTUS),
            _ => None,
        }
    }

    /// Lustre's tos setter answers ERANGE.
    fn refusal_errno(self) -> i32 {
        match self {
            IbParam::Tos => ERANGE,
            _ => EINVAL,
        }
    }
});

/// Why a write was refused.
pub type IbParamError = ParamError<IbParam>;

/// The value a write of `input` to `p` sets.
pub fn parse(p: IbParam, input: Option<&[u8]>) -> Result<i32, IbParamError> {
    super::lnd_params::parse(p, input)
}

/// The timeout connections use (`kiblnd_timeout`): `timeout`, or LNet's
/// LND timeout when it is 0. The same rule as ksocklnd's `sock_timeout`.
pub fn effective_timeout(timeout: i32, lnet_lnd_timeout: u32) -> u32 {
    super::socklnd_params::effective_timeout(timeout, lnet_lnd_timeout)
}

/// The IB MTU enum (`IB_MTU_256` = 1 ... `IB_MTU_4096` = 5) a path record
/// takes for `ib_mtu`; `None` for 0 (keep the path's) or a value it does
/// not take.
pub fn ib_mtu_enum(ib_mtu: i32) -> Option<u8> {
    match ib_mtu {
        256 => Some(1),
        512 => Some(2),
        1024 => Some(3),
        2048 => Some(4),
        4096 => Some(5),
        _ => None,
    }
}

/// Bytes of an interface name with its NUL (`IFNAMSIZ`).
pub const IFNAMSIZ: usize = 16;
/// The name of the string parameter.
pub const IPIF_NAME: &str = "ipif_name";

/// An interface name as `ipif_name` holds it: 1 to 15 printable ASCII
/// bytes, without `/`, `:` or spaces, and not `.` or `..` (the kernel's
/// `dev_valid_name`, narrowed to what sysfs can print back).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct IfName {
    bytes: [u8; IFNAMSIZ],
    len: usize,
}

impl IfName {
    /// Lustre's default, `ib0`.
    pub const DEFAULT: IfName = IfName {
        bytes: *b"ib0\0\0\0\0\0\0\0\0\0\0\0\0\0",
        len: 3,
    };

    /// Checks and copies `name`.
    pub fn new(name: &[u8]) -> Result<IfName, IpifNameError> {
        if name.is_empty() {
            return Err(IpifNameError::Empty);
        }
        if name.len() >= IFNAMSIZ {
            return Err(IpifNameError::TooLong(name.len()));
        }
        let bad = |c: &u8| !c.is_ascii_graphic() || *c == b'/' || *c == b':';
        if name.iter().any(bad) || name == b"." || name == b".." {
            return Err(IpifNameError::BadName);
        }
        let mut bytes = [0; IFNAMSIZ];
        let dst = bytes
            .get_mut(..name.len())
            .ok_or(IpifNameError::TooLong(name.len()))?;
        dst.copy_from_slice(name);
        Ok(IfName {
            bytes,
            len: name.len(),
        })
    }

    /// The name, without a NUL.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }

    /// The name as text; always valid, as only ASCII is accepted.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }
}

impl fmt::Debug for IfName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IfName({:?})", self.as_str())
    }
}

/// Why an `ipif_name` was refused (`EINVAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpifNameError {
    /// A bare name on the modprobe line.
    Missing,
    /// An empty name.
    Empty,
    /// Longer than 15 bytes (Lustre fails the NI with `E2BIG` later).
    TooLong(usize),
    /// A byte an interface name cannot hold, or `.`/`..`.
    BadName,
}

impl IpifNameError {
    /// The errno handed back to the writer.
    pub fn errno(&self) -> i32 {
        EINVAL
    }
}

impl fmt::Display for IpifNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Invalid value for 'ipif_name': ")?;
        match self {
            IpifNameError::Missing => f.write_str("no value given"),
            IpifNameError::Empty => f.write_str("empty"),
            IpifNameError::TooLong(n) => {
                write!(f, "{n} bytes, must be 1..{}", IFNAMSIZ - 1)
            }
            IpifNameError::BadName => f.write_str("not an interface name"),
        }
    }
}

/// The name a write of `input` to `ipif_name` sets (one trailing newline,
/// as `echo` adds, is dropped).
pub fn parse_ipif_name(input: Option<&[u8]>) -> Result<IfName, IpifNameError> {
    let input = input.ok_or(IpifNameError::Missing)?;
    IfName::new(input.strip_suffix(b"\n").unwrap_or(input))
}

/// An NI's o2iblnd tunables (`lnet_ioctl_config_o2iblnd_tunables`), what
/// `lnetctl net show -v` prints under `lnd tunables`. Lustre's fields are
/// unsigned; here `i32`, as lnet-rs's ioctls carry them, with `0` (or
/// [`UNSET`] for `map_on_demand`, a negative `tos`) meaning "take the
/// module parameter" as in Lustre.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IbTunables {
    /// Owed credits that make a NOOP worth sending.
    pub peercredits_hiw: i32,
    /// Obsolete; at least 1.
    pub map_on_demand: i32,
    /// Work requests posted at once on a connection.
    pub concurrent_sends: i32,
    /// No effect.
    pub fmr_pool_size: i32,
    /// No effect.
    pub fmr_flush_trigger: i32,
    /// No effect.
    pub fmr_cache: i32,
    /// Transmit descriptors of the NI.
    pub ntx: i32,
    /// Connections to each peer NI.
    pub conns_per_peer: i32,
    /// Type of service (-1: the system's).
    pub tos: i32,
    /// Seconds, [`effective_timeout`] when the NI started.
    pub timeout: u32,
}

impl IbTunables {
    /// Nothing set: every value comes from the module parameters.
    pub const UNSET: IbTunables = IbTunables {
        peercredits_hiw: 0,
        map_on_demand: UNSET,
        concurrent_sends: 0,
        fmr_pool_size: 0,
        fmr_flush_trigger: 0,
        fmr_cache: 0,
        ntx: 0,
        conns_per_peer: 0,
        tos: -1,
        timeout: 0,
    };

    /// `kiblnd_tunables_init`: the tunables of an NI configured without
    /// any, copied from the module parameters `get` reads (`timeout` is
    /// filled in by [`tunables_setup`]).
    pub fn defaults(get: impl Fn(IbParam) -> i32) -> IbTunables {
        IbTunables {
            peercredits_hiw: get(IbParam::PeerCreditsHiw),
            map_on_demand: get(IbParam::MapOnDemand),
            concurrent_sends: get(IbParam::ConcurrentSends),
            fmr_pool_size: get(IbParam::FmrPoolSize),
            fmr_flush_trigger: get(IbParam::FmrFlushTrigger),
            fmr_cache: get(IbParam::FmrCache),
            ntx: get(IbParam::Ntx),
            conns_per_peer: get(IbParam::ConnsPerPeer),
            tos: get(IbParam::Tos),
            timeout: 0,
        }
    }

    /// What an administrator gave one NI (`lnet_ni_tunables`, -1 where
    /// not given) as these tunables: unset counts become 0 and an unset
    /// `tos` -1, which [`tunables_setup`] fills from the module parameters.
    pub fn given(
        peercredits_hiw: i32,
        map_on_demand: i32,
        concurrent_sends: i32,
        [fmr_pool_size, fmr_flush_trigger, fmr_cache]: [i32; 3],
        ntx: i32,
        conns_per_peer: i32,
        tos: i32,
    ) -> IbTunables {
        let count = |v: i32| v.max(0);
        IbTunables {
            peercredits_hiw: count(peercredits_hiw),
            map_on_demand: if map_on_demand < 0 {
                UNSET
            } else {
                map_on_demand
            },
            concurrent_sends: count(concurrent_sends),
            fmr_pool_size: count(fmr_pool_size),
            fmr_flush_trigger: count(fmr_flush_trigger),
            fmr_cache: count(fmr_cache),
            ntx: count(ntx),
            conns_per_peer: count(conns_per_peer),
            tos: tos.max(-1),
            timeout: 0,
        }
    }

    /// Whether `concurrent_sends` is below the queue depth, which Lustre
    /// warns may cost a little performance.
    pub fn sends_below_queue(&self, net: &NetTunables) -> bool {
        self.concurrent_sends < net.peer_credits
    }
}

/// An NI's tunables once [`tunables_setup`] has filled them in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NiTunables {
    /// The net's common tunables.
    pub net: NetTunables,
    /// The o2iblnd ones.
    pub lnd: IbTunables,
}

/// The common tunables of an o2ib NI (first half of
/// `kiblnd_tunables_setup`): unset values take the module parameters,
/// then peer credits are brought into `PEER_CREDITS_MIN..=PEER_CREDITS_MAX`
/// and, last, to at most the NI's credits, in Lustre's order (so with
/// `credits` below 8, `peer_credits` ends at `credits`).
pub fn net_tunables(net: &NetTunables, get: impl Fn(IbParam) -> i32) -> NetTunables {
    let pick = |mine: i32, p: IbParam| if mine == UNSET { get(p) } else { mine };
    let credits = pick(net.credits, IbParam::Credits);
    NetTunables {
        peer_timeout: pick(net.peer_timeout, IbParam::PeerTimeout),
        peer_credits: peer_credits(pick(net.peer_credits, IbParam::PeerCredits), credits),
        peer_buffer_credits: pick(net.peer_buffer_credits, IbParam::PeerBufferCredits),
        credits,
    }
}

/// The peer credits an NI runs with, from those asked for and the NI's
/// credits.
pub fn peer_credits(asked: i32, credits: i32) -> i32 {
    // Constant bounds, in order: `clamp` cannot panic here.
    asked.clamp(PEER_CREDITS_MIN, PEER_CREDITS_MAX).min(credits)
}

/// `map_on_demand`: unset takes the module parameter, and 0 (global memory
/// regions, which kernels after 4.9 lack) becomes 1.
pub fn map_on_demand(asked: i32, module: i32) -> i32 {
    let v = if asked == UNSET { module } else { asked };
    if v == 0 {
        1
    } else {
        v
    }
}

/// `peer_credits_hiw`: 0 takes the module parameter; the result is at
/// least half of `peer_credits` and below it.
pub fn peercredits_hiw(asked: i32, module: i32, peer_credits: i32) -> i32 {
    let v = if asked == 0 { module } else { asked };
    let v = v.max(peer_credits / 2);
    if v >= peer_credits {
        peer_credits - 1
    } else {
        v
    }
}

/// `concurrent_sends`: 0 takes `peer_credits`; the result is at most twice
/// `peer_credits` and at least half of it. The module parameter is not
/// looked at again: Lustre copies it into the defaults only.
pub fn concurrent_sends(asked: i32, peer_credits: i32) -> i32 {
    let v = if asked == 0 { peer_credits } else { asked };
    v.min(peer_credits.saturating_mul(2)).max(peer_credits / 2)
}

/// `kiblnd_tunables_setup`: an NI's tunables as it starts, from what
/// `lnetctl` set (`net`, `lnd`; [`IbTunables::defaults`] when it set no
/// o2iblnd ones), the module parameters `get` reads and LNet's LND
/// timeout. Fails, as Lustre does, if `ib_mtu` is not one of its values.
pub fn tunables_setup(
    net: &NetTunables,
    lnd: &IbTunables,
    get: impl Fn(IbParam) -> i32,
    lnet_lnd_timeout: u32,
) -> Result<NiTunables, IbParamError> {
    let mtu = get(IbParam::IbMtu);
    if !IbParam::IbMtu.allows(mtu) {
        return Err(IbParamError::Range(IbParam::IbMtu, mtu));
    }
    let net = net_tunables(net, &get);
    let pc = net.peer_credits;
    let or_module = |mine: i32, p: IbParam| if mine == 0 { get(p) } else { mine };
    let conns = or_module(lnd.conns_per_peer, IbParam::ConnsPerPeer);
    let lnd = IbTunables {
        peercredits_hiw: peercredits_hiw(lnd.peercredits_hiw, get(IbParam::PeerCreditsHiw), pc),
        map_on_demand: map_on_demand(lnd.map_on_demand, get(IbParam::MapOnDemand)),
        concurrent_sends: concurrent_sends(lnd.concurrent_sends, pc),
        fmr_pool_size: or_module(lnd.fmr_pool_size, IbParam::FmrPoolSize),
        fmr_flush_trigger: or_module(lnd.fmr_flush_trigger, IbParam::FmrFlushTrigger),
        fmr_cache: or_module(lnd.fmr_cache, IbParam::FmrCache),
        ntx: or_module(lnd.ntx, IbParam::Ntx),
        conns_per_peer: if conns == 0 { 1 } else { conns },
        tos: if lnd.tos < 0 {
            get(IbParam::Tos)
        } else {
            lnd.tos
        },
        timeout: effective_timeout(get(IbParam::Timeout), lnet_lnd_timeout),
    };
    Ok(NiTunables { net, lnd })
}

/// The queue depth a connection of `version` asks for
/// (`kiblnd_msg_queue_size`): 8 for V1, else the NI's peer credits.
pub fn msg_queue_size(version: u16, peer_credits: i32) -> i32 {
    if version == VERSION_1 {
        MSG_QUEUE_SIZE_V1
    } else {
        peer_credits
    }
}

/// The sends a connection of `version` posts at once
/// (`kiblnd_concurrent_sends`): a V1 connection keeps to 4..=16 around its
/// fixed depth of 8; V2 takes the NI's value.
pub fn conn_concurrent_sends(version: u16, concurrent_sends: i32) -> i32 {
    if version == VERSION_1 {
        concurrent_sends.clamp(MSG_QUEUE_SIZE_V1 / 2, MSG_QUEUE_SIZE_V1 * 2)
    } else {
        concurrent_sends
    }
}

/// Scheduler threads of a CPT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedThreads {
    /// The most the CPT will run.
    pub max: u32,
    /// How many the first NI starts; each later NI adds one up to `max`.
    pub first: u32,
}

/// Scheduler threads of a CPT of `cpt_cpus` CPUs: `nscheds` (at most one
/// per CPU), or with `nscheds` 0 half the CPUs, the other half left to
/// the layers above, at least 2, and at first no more than 4.
pub fn sched_threads(nscheds: i32, cpt_cpus: u32) -> SchedThreads {
    match u32::try_from(nscheds) {
        Ok(n) if n > 0 => {
            let max = n.min(cpt_cpus);
            SchedThreads { max, first: max }
        }
        _ => {
            let max = (cpt_cpus / 2).max(N_SCHED).min(cpt_cpus);
            SchedThreads {
                max,
                first: max.min(N_SCHED_HIGH),
            }
        }
    }
}

/// Transmit descriptors each CPT's pool starts with: an even share of
/// `ntx`, and no fewer than [`TX_POOL_MIN`]. Pools grow when they run out.
pub fn tx_pool_size(ntx: i32, ncpts: u32) -> i32 {
    let ncpts = i32::try_from(ncpts).unwrap_or(i32::MAX).max(1);
    (ntx / ncpts).max(TX_POOL_MIN)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;

    fn defaults(p: IbParam) -> i32 {
        p.default_value()
    }

    #[test]
    fn names_modes_defaults() {
        for (i, p) in IbParam::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(IbParam::from_name(p.name().as_bytes()), Some(p));
            assert!(p.allows(p.default_value()), "{p:?}");
        }
        assert_eq!(IbParam::from_name(b"ipif_name"), None);
        assert_eq!(IbParam::from_name(b"pmr_pool_size"), None);
        let writable: std::vec::Vec<&str> = IbParam::ALL
            .into_iter()
            .filter(|p| p.mode() == 0o644)
            .map(|p| p.name())
            .collect();
        // Exactly Lustre's 0644 parameters.
        assert_eq!(
            writable,
            [
                "cksum",
                "timeout",
                "retry_count",
                "rnr_retry_count",
                "keepalive",
                "require_privileged_port",
                "use_privileged_port"
            ]
        );
        let d = |p: IbParam| p.default_value();
        assert_eq!(d(IbParam::Service), 987);
        assert_eq!(
            d(IbParam::Service),
            i32::from(super::super::o2iblnd::SERVICE_PORT)
        );
        assert_eq!(d(IbParam::Timeout), 50);
        assert_eq!(d(IbParam::ConnsPerPeer), 1);
        assert_eq!(d(IbParam::Ntx), 512);
        assert_eq!(d(IbParam::Credits), 256);
        assert_eq!(d(IbParam::PeerCredits), 8);
        assert_eq!(d(IbParam::PeerTimeout), 180);
        assert_eq!(d(IbParam::RetryCount), 5);
        assert_eq!(d(IbParam::RnrRetryCount), 6);
        assert_eq!(d(IbParam::Keepalive), 100);
        assert_eq!(d(IbParam::MapOnDemand), 1);
        assert_eq!(d(IbParam::FmrPoolSize), 512);
        assert_eq!(d(IbParam::FmrFlushTrigger), 384);
        assert_eq!(d(IbParam::FmrCache), 1);
        assert_eq!(d(IbParam::UsePrivilegedPort), 1);
        assert_eq!(d(IbParam::WrqSge), 2);
        assert_eq!(d(IbParam::Tos), -1);
        let inert: std::vec::Vec<&str> = IbParam::ALL
            .into_iter()
            .filter(|p| !p.has_effect())
            .map(|p| p.name())
            .collect();
        assert_eq!(
            inert,
            [
                "use_fastreg_gaps",
                "map_on_demand",
                "fmr_pool_size",
                "fmr_flush_trigger",
                "fmr_cache",
                "dev_failover"
            ]
        );
    }

    #[test]
    fn parsing() {
        assert_eq!(
            parse(IbParam::Service, Some(b"0")).map_err(|e| e.errno()),
            Err(EINVAL)
        );
        assert_eq!(parse(IbParam::Service, Some(b"65535")), Ok(65_535));
        assert_eq!(parse(IbParam::RetryCount, Some(b"7")), Ok(7));
        assert_eq!(
            parse(IbParam::RetryCount, Some(b"8")),
            Err(IbParamError::Range(IbParam::RetryCount, 8))
        );
        assert_eq!(
            parse(IbParam::RnrRetryCount, Some(b"8")),
            Err(IbParamError::Range(IbParam::RnrRetryCount, 8))
        );
        assert_eq!(parse(IbParam::PeerCredits, Some(b"255")), Ok(255));
        assert_eq!(
            parse(IbParam::PeerCredits, Some(b"256")),
            Err(IbParamError::Range(IbParam::PeerCredits, 256))
        );
        // Accepted: Lustre raises it to 8 when the NI starts.
        assert_eq!(parse(IbParam::PeerCredits, Some(b"4")), Ok(4));
        assert_eq!(parse(IbParam::ConcurrentSends, Some(b"510")), Ok(510));
        assert!(parse(IbParam::ConcurrentSends, Some(b"511")).is_err());
        assert_eq!(parse(IbParam::MapOnDemand, Some(b"257")), Ok(257));
        assert!(parse(IbParam::ConnsPerPeer, Some(b"128")).is_err());
        assert!(parse(IbParam::Ntx, Some(b"65536")).is_err());
        // tos answers ERANGE, as Lustre's param_set_tos.
        assert_eq!(parse(IbParam::Tos, Some(b"-1")), Ok(-1));
        assert_eq!(parse(IbParam::Tos, Some(b"255")), Ok(255));
        assert_eq!(
            parse(IbParam::Tos, Some(b"256")).map_err(|e| e.errno()),
            Err(ERANGE)
        );
        assert_eq!(
            parse(IbParam::Tos, Some(b"-2")).map_err(|e| e.errno()),
            Err(ERANGE)
        );
        assert_eq!(
            format!("{}", IbParamError::Range(IbParam::Tos, 256)),
            "Invalid value 256 for 'tos': must be -1..255"
        );
    }

    #[test]
    fn ib_mtu_takes_a_set() {
        for v in IB_MTUS {
            assert_eq!(
                parse(IbParam::IbMtu, Some(format!("{v}").as_bytes())),
                Ok(v)
            );
        }
        for v in [1, 255, 300, 1500, 4095, 8192, -1] {
            let e = parse(IbParam::IbMtu, Some(format!("{v}").as_bytes()));
            assert_eq!(e, Err(IbParamError::Range(IbParam::IbMtu, v)));
        }
        assert_eq!(
            format!("{}", IbParamError::Range(IbParam::IbMtu, 1500)),
            "Invalid value 1500 for 'ib_mtu': must be one of 0, 256, 512, 1024, 2048, 4096"
        );
        assert_eq!(ib_mtu_enum(0), None);
        assert_eq!(ib_mtu_enum(256), Some(1));
        assert_eq!(ib_mtu_enum(4096), Some(5));
        assert_eq!(ib_mtu_enum(1500), None);
    }

    #[test]
    fn lustres_tunings_load() {
        // Lustre's ko2iblnd.conf (OPA), and a common tuning for large
        // clusters: neither may fail modprobe.
        let opa = "peer_credits=32 peer_credits_hiw=16 credits=1024 concurrent_sends=64 \
                   ntx=2048 map_on_demand=256 fmr_pool_size=2048 fmr_flush_trigger=512 \
                   fmr_cache=1 conns_per_peer=4";
        let big = "peer_credits=128 peer_credits_hiw=64 credits=1024 concurrent_sends=256 \
                   ntx=2048 map_on_demand=32 fmr_pool_size=2048 fmr_flush_trigger=512 \
                   fmr_cache=1 conns_per_peer=4 ib_mtu=4096 tos=106";
        for kv in opa.split_whitespace().chain(big.split_whitespace()) {
            let (k, v) = kv.split_once('=').unwrap();
            let p = IbParam::from_name(k.as_bytes()).unwrap();
            assert!(parse(p, Some(v.as_bytes())).is_ok(), "{kv}");
        }
    }

    #[test]
    fn ipif_name_rules() {
        assert_eq!(IfName::DEFAULT.as_bytes(), b"ib0");
        assert_eq!(
            parse_ipif_name(Some(b"ib1\n")).map(|n| n.as_bytes() == b"ib1"),
            Ok(true)
        );
        assert_eq!(
            parse_ipif_name(Some(b"ib0.8001")).map(|n| n.as_str().len()),
            Ok(8)
        );
        assert!(parse_ipif_name(Some(b"0123456789abcde")).is_ok());
        assert_eq!(
            parse_ipif_name(Some(b"0123456789abcdef")),
            Err(IpifNameError::TooLong(16))
        );
        assert_eq!(parse_ipif_name(Some(b"")), Err(IpifNameError::Empty));
        assert_eq!(parse_ipif_name(Some(b"\n")), Err(IpifNameError::Empty));
        assert_eq!(parse_ipif_name(None), Err(IpifNameError::Missing));
        for bad in [&b"ib 0"[..], b"ib/0", b"ib:0", b".", b"..", b"ib\x800"] {
            assert_eq!(parse_ipif_name(Some(bad)), Err(IpifNameError::BadName));
        }
        assert_eq!(IpifNameError::Empty.errno(), EINVAL);
        assert_eq!(
            format!("{}", IpifNameError::TooLong(16)),
            "Invalid value for 'ipif_name': 16 bytes, must be 1..15"
        );
        assert_eq!(format!("{:?}", IfName::DEFAULT), "IfName(\"ib0\")");
    }

    #[test]
    fn given_tunables_win_over_module_parameters() {
        // lnetctl set conns_per_peer, concurrent_sends, peercredits_hiw
        // and tos; the rest are unset (-1) and take the parameters.
        let mods = |p: IbParam| match p {
            IbParam::ConnsPerPeer => 1,
            IbParam::Tos => 10,
            IbParam::Ntx => 512,
            IbParam::PeerCredits => 32,
            _ => p.default_value(),
        };
        let net = NetTunables::UNSET;
        let lnd = IbTunables::given(20, -1, 40, [-1, -1, -1], -1, 4, 106);
        let t = tunables_setup(&net, &lnd, mods, 49).unwrap();
        assert_eq!(t.lnd.conns_per_peer, 4);
        assert_eq!(t.lnd.concurrent_sends, 40);
        assert_eq!(t.lnd.peercredits_hiw, 20);
        assert_eq!(t.lnd.tos, 106);
        assert_eq!(t.lnd.ntx, 512);
        // Nothing given: every value is the module parameter's.
        let none = IbTunables::given(-1, -1, -1, [-1, -1, -1], -1, -1, -1);
        let t = tunables_setup(&net, &none, mods, 49).unwrap();
        assert_eq!(
            t.lnd,
            tunables_setup(&net, &IbTunables::defaults(mods), mods, 49)
                .unwrap()
                .lnd
        );
        assert_eq!(t.lnd.tos, 10);
        assert_eq!(t.lnd.conns_per_peer, 1);
    }

    #[test]
    fn timeout_falls_back_to_lnet() {
        // kiblnd_timeout: `timeout ?: lnet_get_lnd_timeout()`.
        assert_eq!(effective_timeout(50, 49), 50);
        assert_eq!(effective_timeout(0, 49), 49);
    }

    #[test]
    fn peer_credits_clamps() {
        // kiblnd_tunables_setup: raised to IBLND_CREDITS_DEFAULT, cut to
        // IBLND_CREDITS_MAX, then to the NI's credits, in that order.
        assert_eq!(peer_credits(4, 256), 8);
        assert_eq!(peer_credits(8, 256), 8);
        assert_eq!(peer_credits(128, 256), 128);
        assert_eq!(peer_credits(1000, 4096), 255);
        assert_eq!(peer_credits(128, 64), 64);
        assert_eq!(peer_credits(16, 4), 4);
    }

    #[test]
    fn net_tunables_take_module_values() {
        let t = net_tunables(&NetTunables::UNSET, defaults);
        assert_eq!(
            t,
            NetTunables {
                peer_timeout: 180,
                peer_credits: 8,
                peer_buffer_credits: 0,
                credits: 256
            }
        );
        let asked = NetTunables {
            peer_timeout: 0,
            peer_credits: 2,
            peer_buffer_credits: 16,
            credits: UNSET,
        };
        let t = net_tunables(&asked, |p| match p {
            IbParam::Credits => 6,
            p => p.default_value(),
        });
        // 2 is raised to 8, then cut to the NI's 6 credits.
        assert_eq!(
            (
                t.peer_timeout,
                t.peer_credits,
                t.peer_buffer_credits,
                t.credits
            ),
            (0, 6, 16, 6)
        );
    }

    #[test]
    fn map_on_demand_rules() {
        // Unset takes the module value; 0 (global MRs) becomes 1.
        assert_eq!(map_on_demand(UNSET, 1), 1);
        assert_eq!(map_on_demand(UNSET, 0), 1);
        assert_eq!(map_on_demand(UNSET, 32), 32);
        assert_eq!(map_on_demand(0, 32), 1);
        assert_eq!(map_on_demand(256, 1), 256);
    }

    #[test]
    fn hiw_rules() {
        // 0 takes the module value, then at least peer_credits / 2 ...
        assert_eq!(peercredits_hiw(0, 0, 8), 4);
        assert_eq!(peercredits_hiw(0, 64, 128), 64);
        assert_eq!(peercredits_hiw(0, 10, 128), 64);
        assert_eq!(peercredits_hiw(100, 0, 128), 100);
        // ... and below peer_credits.
        assert_eq!(peercredits_hiw(8, 0, 8), 7);
        assert_eq!(peercredits_hiw(0, 255, 8), 7);
        assert_eq!(peercredits_hiw(0, 0, 1), 0);
    }

    #[test]
    fn concurrent_sends_rules() {
        // 0 takes peer_credits; kept within [pc / 2, pc * 2].
        assert_eq!(concurrent_sends(0, 8), 8);
        assert_eq!(concurrent_sends(256, 128), 256);
        assert_eq!(concurrent_sends(510, 128), 256);
        assert_eq!(concurrent_sends(1, 8), 4);
        assert_eq!(concurrent_sends(6, 8), 6);
        let lnd = IbTunables {
            concurrent_sends: 6,
            ..IbTunables::UNSET
        };
        let net = net_tunables(&NetTunables::UNSET, defaults);
        assert!(lnd.sends_below_queue(&net));
    }

    #[test]
    fn setup_from_defaults() {
        let lnd = IbTunables::defaults(defaults);
        let t = tunables_setup(&NetTunables::UNSET, &lnd, defaults, 10).unwrap();
        assert_eq!(t.net.peer_credits, 8);
        assert_eq!(
            t.lnd,
            IbTunables {
                peercredits_hiw: 4,
                map_on_demand: 1,
                concurrent_sends: 8,
                fmr_pool_size: 512,
                fmr_flush_trigger: 384,
                fmr_cache: 1,
                ntx: 512,
                conns_per_peer: 1,
                tos: -1,
                timeout: 50,
            }
        );
        assert!(!t.lnd.sends_below_queue(&t.net));
    }

    #[test]
    fn setup_from_tuned_module() {
        let get = |p: IbParam| match p {
            IbParam::PeerCredits => 128,
            IbParam::PeerCreditsHiw => 64,
            IbParam::Credits => 1024,
            IbParam::ConcurrentSends => 256,
            IbParam::Ntx => 2048,
            IbParam::MapOnDemand => 32,
            IbParam::ConnsPerPeer => 0,
            IbParam::Tos => 106,
            IbParam::Timeout => 0,
            p => p.default_value(),
        };
        let t = tunables_setup(&NetTunables::UNSET, &IbTunables::defaults(get), get, 33).unwrap();
        assert_eq!((t.net.peer_credits, t.net.credits), (128, 1024));
        assert_eq!(t.lnd.peercredits_hiw, 64);
        assert_eq!(t.lnd.concurrent_sends, 256);
        assert_eq!(t.lnd.map_on_demand, 32);
        assert_eq!(t.lnd.ntx, 2048);
        // conns_per_peer 0 means 1.
        assert_eq!(t.lnd.conns_per_peer, 1);
        assert_eq!(t.lnd.tos, 106);
        assert_eq!(t.lnd.timeout, 33);
    }

    #[test]
    fn setup_from_lnetctl() {
        // An NI's own values win; its unset ones take the module's.
        let net = NetTunables {
            peer_credits: 32,
            ..NetTunables::UNSET
        };
        let lnd = IbTunables {
            peercredits_hiw: 31,
            conns_per_peer: 2,
            tos: 0,
            ..IbTunables::UNSET
        };
        let t = tunables_setup(&net, &lnd, defaults, 10).unwrap();
        assert_eq!(t.net.peer_credits, 32);
        assert_eq!(t.lnd.peercredits_hiw, 31);
        assert_eq!(t.lnd.concurrent_sends, 32);
        assert_eq!(t.lnd.map_on_demand, 1);
        assert_eq!(t.lnd.conns_per_peer, 2);
        assert_eq!(t.lnd.tos, 0);
        assert_eq!(t.lnd.ntx, 512);
    }

    #[test]
    fn setup_refuses_a_bad_mtu() {
        let get = |p: IbParam| {
            if p == IbParam::IbMtu {
                1500
            } else {
                p.default_value()
            }
        };
        assert_eq!(
            tunables_setup(&NetTunables::UNSET, &IbTunables::UNSET, get, 10),
            Err(IbParamError::Range(IbParam::IbMtu, 1500))
        );
    }

    #[test]
    fn connection_version_rules() {
        use super::super::o2iblnd::VERSION_2;
        assert_eq!(msg_queue_size(VERSION_1, 128), 8);
        assert_eq!(msg_queue_size(VERSION_2, 128), 128);
        assert_eq!(conn_concurrent_sends(VERSION_1, 256), 16);
        assert_eq!(conn_concurrent_sends(VERSION_1, 2), 4);
        assert_eq!(conn_concurrent_sends(VERSION_1, 8), 8);
        assert_eq!(conn_concurrent_sends(VERSION_2, 256), 256);
    }

    #[test]
    fn scheduler_threads() {
        // nscheds set: that many, at most one per CPU.
        assert_eq!(sched_threads(3, 8), SchedThreads { max: 3, first: 3 });
        assert_eq!(sched_threads(16, 8), SchedThreads { max: 8, first: 8 });
        // 0: half the CPUs, at least 2, at first at most 4.
        assert_eq!(sched_threads(0, 16), SchedThreads { max: 8, first: 4 });
        assert_eq!(sched_threads(0, 6), SchedThreads { max: 3, first: 3 });
        assert_eq!(sched_threads(0, 2), SchedThreads { max: 2, first: 2 });
        assert_eq!(sched_threads(0, 1), SchedThreads { max: 1, first: 1 });
    }

    #[test]
    fn tx_pools() {
        assert_eq!(tx_pool_size(512, 1), 512);
        assert_eq!(tx_pool_size(512, 4), 256);
        assert_eq!(tx_pool_size(4096, 4), 1024);
        assert_eq!(tx_pool_size(512, 0), 512);
    }
}
