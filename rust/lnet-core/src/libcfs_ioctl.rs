//! Lustre's own /dev/lnet ioctls (`IOC_LIBCFS_*`, its
//! `uapi/linux/lnet/libcfs_ioctl.h`), which Lustre's `lctl` and `lnetctl`
//! fall back to where the `lnet` generic netlink family fails them: the
//! command numbers, the argument's header and the old-style argument
//! `struct libcfs_ioctl_data`, checked as Lustre's `lnet_psdev_ioctl`
//! checks them before any command sees it.
//!
//! The argument is a byte buffer of the length its header says, read at
//! fixed offsets: the structure has holes and user pointers, so it is
//! never taken as a Rust value. The offsets are Lustre's x86_64 layout;
//! lnet.ko asserts them against its C header at build time and the ABI
//! check compares that header with Lustre's.

/// `LNET_IOCTL_VERSION`: the argument is a `struct libcfs_ioctl_data`.
pub const VERSION: u32 = 0x0001_000a;
/// `LNET_IOCTL_VERSION2`: the argument is a newer structure (lnet-dlc.h).
pub const VERSION2: u32 = 0x0001_000b;
/// `sizeof(struct libcfs_ioctl_hdr)`.
pub const HDR_LEN: usize = 8;
/// `LIBCFS_IOC_DATA_MAX`: the largest argument.
pub const DATA_MAX: usize = 128 * 1024;
/// `sizeof(struct libcfs_ioctl_data)`, up to its inline buffers.
pub const DATA_LEN: usize = 128;

/// Field offsets in `struct libcfs_ioctl_data`.
pub mod off {
    /// `ioc_nid`.
    pub const NID: usize = 8;
    /// `ioc_flags`.
    pub const FLAGS: usize = 24;
    /// `ioc_count`.
    pub const COUNT: usize = 28;
    /// `ioc_u32[0]`.
    pub const U32_0: usize = 36;
    /// `ioc_u32[1]`.
    pub const U32_1: usize = 40;
    /// `ioc_inllen1`.
    pub const INLLEN1: usize = 64;
    /// `ioc_inlbuf1`.
    pub const INLBUF1: usize = 72;
    /// `ioc_inllen2`.
    pub const INLLEN2: usize = 80;
    /// `ioc_inlbuf2`.
    pub const INLBUF2: usize = 88;
    /// `ioc_plen1`.
    pub const PLEN1: usize = 96;
    /// `ioc_pbuf1`.
    pub const PBUF1: usize = 104;
    /// `ioc_plen2`.
    pub const PLEN2: usize = 112;
    /// `ioc_pbuf2`.
    pub const PBUF2: usize = 120;
}

/// `IOC_LIBCFS_TYPE`.
pub const TYPE: u32 = b'e' as u32;
/// `IOC_LIBCFS_MIN_NR`.
pub const MIN_NR: u32 = 30;
/// `IOC_LIBCFS_MAX_NR`.
pub const MAX_NR: u32 = 112;

/// Command numbers (`_IOC_NR`) lnet-rs answers.
pub mod nr {
    /// `IOC_LIBCFS_GET_NI`: the `ioc_count`'th local NID.
    pub const GET_NI: u32 = 50;
    /// `IOC_LIBCFS_LNET_FAULT`: lctl's `net_drop_*` and `net_delay_*`
    /// (a [`VERSION`] argument; see [`fault`]).
    pub const LNET_FAULT: u32 = 64;
    /// `IOC_LIBCFS_LNET_DIST`: `lctl which_nid` where the netlink family
    /// has no `LNET_CMD_PEER_DIST`.
    pub const LNET_DIST: u32 = 58;
    /// `IOC_LIBCFS_UNCONFIGURE`: `lctl network down`.
    pub const UNCONFIGURE: u32 = 56;
    /// `IOC_LIBCFS_CONFIGURE`: `lctl network up`.
    pub const CONFIGURE: u32 = 59;
    /// `IOC_LIBCFS_ADD_ROUTE` (a [`cfg`] argument).
    pub const ADD_ROUTE: u32 = 81;
    /// `IOC_LIBCFS_DEL_ROUTE` (a [`cfg`] argument).
    pub const DEL_ROUTE: u32 = 82;
    /// `IOC_LIBCFS_GET_ROUTE` (a [`cfg`] argument).
    pub const GET_ROUTE: u32 = 83;
    /// `IOC_LIBCFS_CONFIG_RTR`: `lnetctl set routing` (a [`cfg`] argument).
    pub const CONFIG_RTR: u32 = 87;
    /// `IOC_LIBCFS_ADD_BUF`: `lnetctl set tiny_buffers`... (a [`cfg`] argument).
    pub const ADD_BUF: u32 = 88;
    /// `IOC_LIBCFS_GET_BUF`: `lnetctl routing show` (a [`cfg`] argument
    /// followed by a [`pool_cfg`]).
    pub const GET_BUF: u32 = 89;
    /// `IOC_LIBCFS_GET_LNET_STATS`: `lnetctl stats show`.
    pub const GET_LNET_STATS: u32 = 91;
    /// `IOC_LIBCFS_SET_NUMA_RANGE`: `lnetctl set numa_range`, and
    /// `numa_range` in what `lnetctl import` reads.
    pub const SET_NUMA_RANGE: u32 = 98;
    /// `IOC_LIBCFS_GET_NUMA_RANGE`: `lnetctl global show`'s `numa_range`.
    pub const GET_NUMA_RANGE: u32 = 99;
    /// `IOC_LIBCFS_GET_UDSP_SIZE`: the size of the UDSP rule at an index
    /// (a [`udsp`] argument); `lnetctl udsp show` and `export` walk the
    /// rules with it until ENOENT.
    pub const GET_UDSP_SIZE: u32 = 107;
    /// `IOC_LIBCFS_GET_UDSP`: the UDSP rule at an index (a [`udsp`]
    /// argument).
    pub const GET_UDSP: u32 = 108;
    /// `IOC_LIBCFS_RESET_LNET_STATS`: `lnetctl stats reset` (a
    /// [`VERSION`] argument with nothing in it).
    pub const RESET_LNET_STATS: u32 = 110;
}

/// `struct lnet_ioctl_udsp` (lnet-dlc.h), the argument of the UDSP
/// commands.
pub mod udsp {
    /// `iou_idx`: the rule's index.
    pub const IDX: usize = 8;
    /// `sizeof(struct lnet_ioctl_udsp)`: the shortest argument accepted.
    pub const LEN: usize = 32;
}

/// Field offsets in `struct lnet_ioctl_config_data` (lnet-dlc.h), the
/// [`VERSION2`] argument of the route commands.
pub mod cfg {
    /// `cfg_net`.
    pub const NET: usize = 8;
    /// `cfg_count`.
    pub const COUNT: usize = 12;
    /// `cfg_nid`.
    pub const NID: usize = 16;
    /// `cfg_config_u.cfg_route.rtr_hop`.
    pub const RTR_HOP: usize = 28;
    /// `cfg_config_u.cfg_route.rtr_priority`.
    pub const RTR_PRIORITY: usize = 32;
    /// `cfg_config_u.cfg_route.rtr_flags`.
    pub const RTR_FLAGS: usize = 36;
    /// `cfg_config_u.cfg_buffers.buf_enable`.
    pub const BUF_ENABLE: usize = 28;
    /// `cfg_config_u.cfg_buffers.buf_tiny`, then `buf_small`, `buf_large`.
    pub const BUF_TINY: usize = 32;
    /// `cfg_bulk`: where GET_BUF writes its [`super::pool_cfg`].
    pub const BULK: usize = 180;
    /// `sizeof(struct lnet_ioctl_config_data)`: the shortest argument
    /// the commands accept.
    pub const LEN: usize = 184;
}

/// `struct lnet_ioctl_pool_cfg` (lnet-dlc.h): GET_BUF's reply, one entry
/// per router buffer pool (tiny, small, large) and whether the node
/// routes.
pub mod pool_cfg {
    /// One pool's entry: `pl_npages`, `pl_nbuffers`, `pl_credits`,
    /// `pl_mincredits`, each a `u32`.
    pub const POOL_LEN: usize = 16;
    /// `pl_routing`.
    pub const ROUTING: usize = 48;
    /// Its size.
    pub const LEN: usize = 52;
}

/// A router buffer command's argument (`cfg_buffers`): `buf_enable`
/// and the three pools' counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuffersArg {
    /// `cfg_count`: GET_BUF's CPU partition.
    pub count: u32,
    /// `buf_enable`: CONFIG_RTR turns routing on when non-zero.
    pub enable: u32,
    /// `buf_tiny`, `buf_small`, `buf_large`: ADD_BUF's counts; a negative
    /// one leaves its pool alone.
    pub pools: [i32; 3],
}

/// Reads a router buffer command's argument: at least [`cfg::LEN`] long
/// (GET_BUF: with room for its reply), else EINVAL, as Lustre checks
/// `ioc_len`; Lustre reads it whatever its version says.
pub fn buffers_arg(buf: &[u8], get: bool) -> Result<BuffersArg, i32> {
    let need = if get {
        cfg::LEN + pool_cfg::LEN
    } else {
        cfg::LEN
    };
    if buf.len() < need {
        return Err(EINVAL);
    }
    let u = |at| get_u32(buf, at).ok_or(EINVAL);
    let i = |n: usize| u(cfg::BUF_TINY + 4 * n).map(|v| v as i32);
    Ok(BuffersArg {
        count: u(cfg::COUNT)?,
        enable: u(cfg::BUF_ENABLE)?,
        pools: [i(0)?, i(1)?, i(2)?],
    })
}

/// One pool as GET_BUF reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolEntry {
    /// `pl_npages`.
    pub npages: u32,
    /// `pl_nbuffers`.
    pub nbuffers: u32,
    /// `pl_credits`.
    pub credits: i32,
    /// `pl_mincredits`.
    pub mincredits: i32,
}

/// Writes GET_BUF's reply after the argument's header part; false if the
/// argument is too short.
pub fn put_pools(buf: &mut [u8], pools: &[PoolEntry; 3], routing: u32) -> bool {
    let mut ok = true;
    for (n, p) in pools.iter().enumerate() {
        let at = cfg::BULK + n * pool_cfg::POOL_LEN;
        ok &= put_u32(buf, at, p.npages)
            && put_u32(buf, at + 4, p.nbuffers)
            && put_u32(buf, at + 8, p.credits as u32)
            && put_u32(buf, at + 12, p.mincredits as u32);
    }
    ok && put_u32(buf, cfg::BULK + pool_cfg::ROUTING, routing)
}

/// `struct lnet_ioctl_set_value` (lnet-dlc.h): the header and one `u32`.
pub mod set_value {
    /// Its size, which `IOC_LIBCFS_GET_NUMA_RANGE` needs exactly.
    pub const LEN: usize = 12;
    /// `sv_value`.
    pub const VALUE: usize = 8;
}

/// `struct lnet_ioctl_lnet_stats` (lnet-dlc.h): the header and the node's
/// `struct lnet_counters`.
pub mod lnet_stats {
    /// `st_cntrs`.
    pub const CNTRS: usize = 8;
    /// `sizeof(struct lnet_counters)`: the packed common part (60 bytes)
    /// then the health part (15 `u32`s).
    pub const CNTRS_LEN: usize = 120;
    /// Its size, the least `IOC_LIBCFS_GET_LNET_STATS` takes.
    pub const LEN: usize = CNTRS + CNTRS_LEN;
}

/// A route command's argument as Lustre's `LNetCtl` reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteArg {
    /// `cfg_net`: the remote net (`LNET_NET_ANY` for every net).
    pub net: u32,
    /// `cfg_count`: GET_ROUTE's index.
    pub count: u32,
    /// `cfg_nid`: the gateway (`LNET_NID_ANY` for every gateway).
    pub nid4: u64,
    /// `rtr_hop`.
    pub hop: u32,
    /// `rtr_priority`.
    pub priority: u32,
    /// `rtr_flags`.
    pub flags: u32,
}

/// Reads a route command's argument: a [`VERSION2`] argument at least
/// [`cfg::LEN`] long, else EINVAL (Lustre's check of `ioc_len`). Errors are
/// errnos, positive as every check here gives them.
pub fn route_arg(buf: &[u8], version: u32) -> Result<RouteArg, i32> {
    if version != VERSION2 || buf.len() < cfg::LEN {
        return Err(EINVAL);
    }
    let u = |at| get_u32(buf, at).ok_or(EINVAL);
    Ok(RouteArg {
        net: u(cfg::NET)?,
        count: u(cfg::COUNT)?,
        nid4: get_u64(buf, cfg::NID).ok_or(EINVAL)?,
        hop: u(cfg::RTR_HOP)?,
        priority: u(cfg::RTR_PRIORITY)?,
        flags: u(cfg::RTR_FLAGS)?,
    })
}

/// Writes GET_ROUTE's answer into its argument: net, gateway, hop count,
/// flags and priority; false if the argument is too short.
pub fn put_route(buf: &mut [u8], r: &RouteArg) -> bool {
    put_u32(buf, cfg::NET, r.net)
        && put_u64(buf, cfg::NID, r.nid4)
        && put_u32(buf, cfg::RTR_HOP, r.hop)
        && put_u32(buf, cfg::RTR_FLAGS, r.flags)
        && put_u32(buf, cfg::RTR_PRIORITY, r.priority)
}

/// `IOC_LIBCFS_LNET_FAULT` (Lustre's `lnet_fault_ctl`): the operation is
/// `ioc_flags`, the rule a `struct lnet_fault_attr` in the first inline
/// buffer, a listed rule's counters a `struct lnet_fault_stat` in the
/// second; `ioc_count` is the index a list reads and the number a delete
/// removed. NIDs are 64-bit: 0 and `LNET_NID_ANY` stand for any NID.
pub mod fault {
    use super::super::fault::{Action, Attr, Pace, Stats};
    use super::super::nid::Nid;
    use super::{get_u32, get_u64, off, put_u32, put_u64, DATA_LEN, EINVAL};

    /// `LNET_CTL_*`, the operations (`ioc_flags`).
    pub mod opc {
        /// `LNET_CTL_DROP_ADD`.
        pub const DROP_ADD: u32 = 0;
        /// `LNET_CTL_DROP_DEL`.
        pub const DROP_DEL: u32 = 1;
        /// `LNET_CTL_DROP_RESET`.
        pub const DROP_RESET: u32 = 2;
        /// `LNET_CTL_DROP_LIST`.
        pub const DROP_LIST: u32 = 3;
        /// `LNET_CTL_DELAY_ADD`.
        pub const DELAY_ADD: u32 = 4;
        /// `LNET_CTL_DELAY_DEL`.
        pub const DELAY_DEL: u32 = 5;
        /// `LNET_CTL_DELAY_RESET`.
        pub const DELAY_RESET: u32 = 6;
        /// `LNET_CTL_DELAY_LIST`.
        pub const DELAY_LIST: u32 = 7;
    }

    /// Field offsets in `struct lnet_fault_attr`.
    pub mod attr {
        /// `fa_src`.
        pub const SRC: usize = 0;
        /// `fa_dst`.
        pub const DST: usize = 8;
        /// `fa_local_nid`.
        pub const LOCAL_NID: usize = 16;
        /// `fa_ptl_mask`.
        pub const PTL_MASK: usize = 24;
        /// `fa_msg_mask`.
        pub const MSG_MASK: usize = 32;
        /// `u`: `u.drop.da_rate` and `u.delay.la_rate`.
        pub const RATE: usize = 40;
        /// `u.drop.da_interval`, `u.delay.la_interval`.
        pub const INTERVAL: usize = 44;
        /// `u.drop.da_health_error_mask`.
        pub const HEALTH_MASK: usize = 48;
        /// `u.delay.la_latency`.
        pub const LATENCY: usize = 48;
        /// The `u32` of `u.drop`'s bit-fields: `da_random` is bit 0,
        /// `da_drop_all` bit 1 (x86_64's bit-field order).
        pub const DROP_BITS: usize = 52;
        /// `sizeof(struct lnet_fault_attr)`.
        pub const LEN: usize = 104;
    }

    /// `da_random`'s bit.
    pub const RANDOM_BIT: u32 = 1;
    /// `da_drop_all`'s bit.
    pub const DROP_ALL_BIT: u32 = 2;

    /// Field offsets in `struct lnet_fault_stat`.
    pub mod stat {
        /// `fs_count`.
        pub const COUNT: usize = 0;
        /// `fs_put`.
        pub const PUT: usize = 8;
        /// `fs_ack`.
        pub const ACK: usize = 16;
        /// `fs_get`.
        pub const GET: usize = 24;
        /// `fs_reply`.
        pub const REPLY: usize = 32;
        /// `u.drop.ds_dropped` and `u.delay.ls_delayed`.
        pub const HITS: usize = 40;
        /// `sizeof(struct lnet_fault_stat)`.
        pub const LEN: usize = 104;
    }

    /// Which rules an operation is about.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kind {
        /// `net_drop_*`.
        Drop,
        /// `net_delay_*`.
        Delay,
    }

    /// What an operation does.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Op {
        /// Adds the rule of the first buffer.
        Add,
        /// Removes the rules its source and destination select.
        Del,
        /// Zeroes every rule's counters.
        Reset,
        /// Reads the `ioc_count`'th rule, newest first.
        List,
    }

    /// The operation `ioc_flags` names; EINVAL for another, as Lustre.
    pub fn op(opc: u32) -> Result<(Kind, Op), i32> {
        let kind = if opc < opc::DELAY_ADD {
            Kind::Drop
        } else {
            Kind::Delay
        };
        let op = match opc {
            opc::DROP_ADD | opc::DELAY_ADD => Op::Add,
            opc::DROP_DEL | opc::DELAY_DEL => Op::Del,
            opc::DROP_RESET | opc::DELAY_RESET => Op::Reset,
            opc::DROP_LIST | opc::DELAY_LIST => Op::List,
            _ => return Err(EINVAL),
        };
        Ok((kind, op))
    }

    /// A rule's NID from its 64-bit form: 0 is any NID, as Lustre reads it.
    fn nid_of(nid4: u64) -> Nid {
        if nid4 == 0 {
            Nid::ANY
        } else {
            Nid::from_nid4(nid4)
        }
    }

    /// A rule's NID in its 64-bit form; a NID with a larger address (set
    /// through lnet-rs's own ioctl) has none and reads as any NID.
    fn nid4_of(nid: &Nid) -> u64 {
        nid.to_nid4().unwrap_or(u64::MAX)
    }

    /// The inline buffer `n` (1 or 2) of a checked [`super::VERSION`]
    /// argument, if it holds at least `len` bytes. Lustre reads the
    /// structures without checking their length; a short one is EINVAL.
    fn inline(buf: &[u8], n: u32, len: usize) -> Result<core::ops::Range<usize>, i32> {
        let l1 = get_u32(buf, off::INLLEN1).ok_or(EINVAL)? as usize;
        let l2 = get_u32(buf, off::INLLEN2).ok_or(EINVAL)? as usize;
        let (start, have) = if n == 1 {
            (DATA_LEN, l1)
        } else {
            let r1 = l1.checked_add(7).ok_or(EINVAL)? & !7;
            (DATA_LEN.checked_add(r1).ok_or(EINVAL)?, l2)
        };
        let end = start.checked_add(len).ok_or(EINVAL)?;
        if have < len || end > buf.len() {
            return Err(EINVAL);
        }
        Ok(start..end)
    }

    /// The `len` bytes of inline buffer `n`.
    fn inline_ref(buf: &[u8], n: u32, len: usize) -> Result<&[u8], i32> {
        let r = inline(buf, n, len)?;
        buf.get(r).ok_or(EINVAL)
    }

    /// The rule source and destination a delete selects.
    pub fn selector(buf: &[u8]) -> Result<(Nid, Nid), i32> {
        let a = inline_ref(buf, 1, attr::LEN)?;
        let at = |o: usize| get_u64(a, o).ok_or(EINVAL);
        Ok((nid_of(at(attr::SRC)?), nid_of(at(attr::DST)?)))
    }

    /// The rule an add asks for, as lnet-core's fault rules take it; the
    /// rule's own checks (`Rule::new`) follow. Both or neither of rate and
    /// interval is EINVAL, as Lustre's `lnet_drop_rule_add`.
    pub fn rule(buf: &[u8], kind: Kind) -> Result<(Attr, Pace, Action), i32> {
        let a = inline_ref(buf, 1, attr::LEN)?;
        let u64_at = |o: usize| get_u64(a, o).ok_or(EINVAL);
        let u32_at = |o: usize| get_u32(a, o).ok_or(EINVAL);
        let fa = Attr {
            src: nid_of(u64_at(attr::SRC)?),
            dst: nid_of(u64_at(attr::DST)?),
            local: nid_of(u64_at(attr::LOCAL_NID)?),
            ptl_mask: u64_at(attr::PTL_MASK)?,
            msg_mask: u32_at(attr::MSG_MASK)?,
        };
        let pace = match (u32_at(attr::RATE)?, u32_at(attr::INTERVAL)?) {
            (r, 0) if r != 0 => Pace::Rate(r),
            (0, i) if i != 0 => Pace::Interval(i),
            _ => return Err(EINVAL),
        };
        let action = match kind {
            Kind::Drop => {
                let bits = u32_at(attr::DROP_BITS)?;
                Action::Drop {
                    health_mask: u32_at(attr::HEALTH_MASK)?,
                    random: bits & RANDOM_BIT != 0,
                    all: bits & DROP_ALL_BIT != 0,
                }
            }
            Kind::Delay => Action::Delay {
                latency: u32_at(attr::LATENCY)?,
            },
        };
        Ok((fa, pace, action))
    }

    /// Checks a list's two buffers are there (EINVAL, as Lustre).
    pub fn check_list(buf: &[u8]) -> Result<(), i32> {
        inline(buf, 1, attr::LEN)?;
        inline(buf, 2, stat::LEN)?;
        Ok(())
    }

    /// Writes a listed rule and its counters into the two buffers (the
    /// union's other half and the bit-fields' spare bits left zero).
    pub fn put_rule(
        buf: &mut [u8],
        a: &Attr,
        pace: Pace,
        action: Action,
        st: &Stats,
    ) -> Result<(), i32> {
        let ar = inline(buf, 1, attr::LEN)?;
        let sr = inline(buf, 2, stat::LEN)?;
        let (rate, interval) = match pace {
            Pace::Rate(r) => (r, 0),
            Pace::Interval(i) => (0, i),
        };
        let (third, bits) = match action {
            Action::Drop {
                health_mask,
                random,
                all,
            } => (
                health_mask,
                (u32::from(random) * RANDOM_BIT) | (u32::from(all) * DROP_ALL_BIT),
            ),
            Action::Delay { latency } => (latency, 0),
        };
        let b = buf.get_mut(ar).ok_or(EINVAL)?;
        b.fill(0);
        let ok = put_u64(b, attr::SRC, nid4_of(&a.src))
            && put_u64(b, attr::DST, nid4_of(&a.dst))
            && put_u64(b, attr::LOCAL_NID, nid4_of(&a.local))
            && put_u64(b, attr::PTL_MASK, a.ptl_mask)
            && put_u32(b, attr::MSG_MASK, a.msg_mask)
            && put_u32(b, attr::RATE, rate)
            && put_u32(b, attr::INTERVAL, interval)
            && put_u32(b, attr::HEALTH_MASK, third)
            && put_u32(b, attr::DROP_BITS, bits);
        let b = buf.get_mut(sr).ok_or(EINVAL)?;
        b.fill(0);
        let ok = ok
            && put_u64(b, stat::COUNT, st.count)
            && put_u64(b, stat::PUT, st.put)
            && put_u64(b, stat::ACK, st.ack)
            && put_u64(b, stat::GET, st.get)
            && put_u64(b, stat::REPLY, st.reply)
            && put_u64(b, stat::HITS, st.hits);
        if ok {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }
}

/// EINVAL, Lustre's answer to any malformed argument.
const EINVAL: i32 = 22;
/// ENODEV, Lustre's answer to a command that needs LNet up.
const ENODEV: i32 = 19;

/// Whether `cmd` is one of Lustre's /dev/lnet commands (its type and
/// number range, whatever its size field says, as Lustre checks).
pub fn is_libcfs(cmd: u32) -> bool {
    let nr = cmd & 0xff;
    (cmd >> 8) & 0xff == TYPE && (MIN_NR..=MAX_NR).contains(&nr)
}

/// The command number of a Lustre command.
pub fn cmd_nr(cmd: u32) -> u32 {
    cmd & 0xff
}

/// The `u32` at `at` in `buf`, if it is there.
pub fn get_u32(buf: &[u8], at: usize) -> Option<u32> {
    let b = buf.get(at..at.checked_add(4)?)?;
    Some(u32::from_ne_bytes(b.try_into().ok()?))
}

/// The `u64` at `at` in `buf`, if it is there.
pub fn get_u64(buf: &[u8], at: usize) -> Option<u64> {
    let b = buf.get(at..at.checked_add(8)?)?;
    Some(u64::from_ne_bytes(b.try_into().ok()?))
}

/// Writes `v` at `at` in `buf`; false if it does not fit.
pub fn put_u64(buf: &mut [u8], at: usize, v: u64) -> bool {
    put_bytes(buf, at, &v.to_ne_bytes())
}

/// Writes `v` at `at` in `buf`; false if it does not fit.
pub fn put_u32(buf: &mut [u8], at: usize, v: u32) -> bool {
    put_bytes(buf, at, &v.to_ne_bytes())
}

/// Writes `bytes` at `at` in `buf`; false if they do not fit.
pub fn put_bytes(buf: &mut [u8], at: usize, bytes: &[u8]) -> bool {
    match at
        .checked_add(bytes.len())
        .and_then(|end| buf.get_mut(at..end))
    {
        Some(b) => {
            b.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// Checks `IOC_LIBCFS_GET_NUMA_RANGE`'s argument as Lustre's `lnet_ioctl`
/// does: exactly a `struct lnet_ioctl_set_value`, of either version (Lustre
/// reads no more of the header). Needs no running LNet.
pub fn check_get_numa_range(buf: &[u8]) -> Result<(), i32> {
    if buf.len() == set_value::LEN {
        Ok(())
    } else {
        Err(EINVAL)
    }
}

/// The index `IOC_LIBCFS_GET_UDSP_SIZE` and `IOC_LIBCFS_GET_UDSP` ask
/// for, their argument checked as Lustre's `LNetCtl` does: at least a
/// `struct lnet_ioctl_udsp` (EINVAL).
pub fn udsp_idx(buf: &[u8]) -> Result<i32, i32> {
    if buf.len() < udsp::LEN {
        return Err(EINVAL);
    }
    get_u32(buf, udsp::IDX).map(|v| v as i32).ok_or(EINVAL)
}

/// Checks `IOC_LIBCFS_GET_LNET_STATS`'s argument as Lustre's `lnet_ioctl`
/// and `lnet_counters_get` do: at least a `struct lnet_ioctl_lnet_stats`
/// (its length first, EINVAL), then LNet up (ENODEV).
pub fn check_get_lnet_stats(buf: &[u8], running: bool) -> Result<(), i32> {
    if buf.len() < lnet_stats::LEN {
        return Err(EINVAL);
    }
    if !running {
        return Err(ENODEV);
    }
    Ok(())
}

/// The argument's length and version from its header, checked as Lustre's
/// `lnet_ioctl_getdata` does: a known version and a length from the header's
/// own to [`DATA_MAX`]. Errors are errnos.
pub fn check_hdr(hdr: &[u8]) -> Result<(usize, u32), i32> {
    let len = get_u32(hdr, 0).ok_or(EINVAL)?;
    let version = get_u32(hdr, 4).ok_or(EINVAL)?;
    if version != VERSION && version != VERSION2 {
        return Err(EINVAL);
    }
    let len = len as usize;
    if !(HDR_LEN..=DATA_MAX).contains(&len) {
        return Err(EINVAL);
    }
    Ok((len, version))
}

/// Checks a whole [`VERSION`] argument as Lustre's `lnet_ioctl_is_invalid`
/// does: its length is the structure plus its two inline buffers (each
/// rounded up to 8 bytes), a user pointer comes with a length and a length
/// with a pointer, and the inline strings end in NUL. Unlike Lustre, an
/// argument shorter than the structure is refused before any field is read.
pub fn check_data(buf: &[u8]) -> Result<(), i32> {
    if buf.len() < DATA_LEN {
        return Err(EINVAL);
    }
    let u32_at = |at| get_u32(buf, at).ok_or(EINVAL);
    let ptr_at = |at| get_u64(buf, at).ok_or(EINVAL);
    let inllen1 = u32_at(off::INLLEN1)? as usize;
    let inllen2 = u32_at(off::INLLEN2)? as usize;
    // A pointer without its length, or a user buffer's length without
    // its pointer (an inline buffer's pointer is the kernel's to set).
    let pairs = [
        (ptr_at(off::INLBUF1)?, inllen1 as u64, false),
        (ptr_at(off::INLBUF2)?, inllen2 as u64, false),
        (ptr_at(off::PBUF1)?, u64::from(u32_at(off::PLEN1)?), true),
        (ptr_at(off::PBUF2)?, u64::from(u32_at(off::PLEN2)?), true),
    ];
    for (ptr, len, both_ways) in pairs {
        if (ptr != 0 && len == 0) || (both_ways && len != 0 && ptr == 0) {
            return Err(EINVAL);
        }
    }
    let round8 = |n: usize| n.checked_add(7).map(|n| n & !7);
    let packed = round8(inllen1)
        .and_then(|a| DATA_LEN.checked_add(a))
        .and_then(|a| round8(inllen2).and_then(|b| a.checked_add(b)))
        .ok_or(EINVAL)?;
    if packed != buf.len() {
        return Err(EINVAL);
    }
    // Lustre checks one byte, and only with a first string: the last of
    // the second, or with none the last of the first's 8-byte rounding.
    if inllen1 != 0 {
        let last = round8(inllen1)
            .and_then(|a| a.checked_add(inllen2))
            .and_then(|a| a.checked_sub(1))
            .and_then(|a| DATA_LEN.checked_add(a))
            .and_then(|at| buf.get(at));
        if last != Some(&0) {
            return Err(EINVAL);
        }
    }
    Ok(())
}

/// The local NID Lustre's `IOC_LIBCFS_GET_NI` answers for `index`
/// (`LNetGetId`): the NIs net by net, each net's in the order they were
/// added, nets in the order of their first NI; only 4-byte NIDs count.
/// `nids` are the local NIDs in the order they were added.
pub fn nth_nid4<'a, I>(nids: I, index: u32) -> Option<u64>
where
    I: Iterator<Item = &'a super::nid::Nid> + Clone,
{
    let mut left = index;
    for (i, first) in nids.clone().enumerate() {
        // Each net once, at its first NI.
        if nids.clone().take(i).any(|n| n.net() == first.net()) {
            continue;
        }
        for nid4 in nids
            .clone()
            .filter(|n| n.net() == first.net())
            .filter_map(|n| n.to_nid4())
        {
            if left == 0 {
                return Some(nid4);
            }
            left -= 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::nid::Nid;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn data(inl1: &[u8], inl2: &[u8]) -> Vec<u8> {
        let r8 = |n: usize| (n + 7) & !7;
        let len = DATA_LEN + r8(inl1.len()) + r8(inl2.len());
        let mut b = vec![0u8; len];
        b[0..4].copy_from_slice(&(len as u32).to_ne_bytes());
        b[4..8].copy_from_slice(&VERSION.to_ne_bytes());
        b[off::INLLEN1..off::INLLEN1 + 4].copy_from_slice(&(inl1.len() as u32).to_ne_bytes());
        b[off::INLLEN2..off::INLLEN2 + 4].copy_from_slice(&(inl2.len() as u32).to_ne_bytes());
        b[DATA_LEN..DATA_LEN + inl1.len()].copy_from_slice(inl1);
        let at2 = DATA_LEN + r8(inl1.len());
        b[at2..at2 + inl2.len()].copy_from_slice(inl2);
        b
    }

    #[test]
    fn commands() {
        // _IOWR('e', 50, long) and _IOWR('e', 59, long).
        assert!(is_libcfs(0xc008_6532));
        assert_eq!(cmd_nr(0xc008_6532), nr::GET_NI);
        assert!(is_libcfs(0xc008_653b));
        assert_eq!(cmd_nr(0xc008_653b), nr::CONFIGURE);
        // lnet-rs's own numbers (0xc0 on) and other types are not Lustre's.
        assert!(!is_libcfs(0xc010_65c0));
        assert!(!is_libcfs(0xc008_6632));
        assert!(!is_libcfs(0xc008_651d));
        assert!(!is_libcfs(0xc008_6571));
    }

    #[test]
    fn route_arguments() {
        let mut b = vec![0u8; cfg::LEN];
        b[0..4].copy_from_slice(&(cfg::LEN as u32).to_ne_bytes());
        b[4..8].copy_from_slice(&VERSION2.to_ne_bytes());
        b[cfg::NET..cfg::NET + 4].copy_from_slice(&0x0002_0001u32.to_ne_bytes());
        b[cfg::COUNT..cfg::COUNT + 4].copy_from_slice(&3u32.to_ne_bytes());
        b[cfg::NID..cfg::NID + 8].copy_from_slice(&0x0002_0000_0a00_0001u64.to_ne_bytes());
        b[cfg::RTR_HOP..cfg::RTR_HOP + 4].copy_from_slice(&u32::MAX.to_ne_bytes());
        b[cfg::RTR_PRIORITY..cfg::RTR_PRIORITY + 4].copy_from_slice(&7u32.to_ne_bytes());
        let a = route_arg(&b, VERSION2).unwrap();
        assert_eq!(
            a,
            RouteArg {
                net: 0x0002_0001,
                count: 3,
                nid4: 0x0002_0000_0a00_0001,
                hop: u32::MAX,
                priority: 7,
                flags: 0,
            }
        );
        // The old version, or an argument shorter than the structure.
        assert_eq!(route_arg(&b, VERSION), Err(EINVAL));
        assert_eq!(route_arg(&b[..cfg::LEN - 1], VERSION2), Err(EINVAL));
        let out = RouteArg {
            net: 0x0002_0005,
            flags: 3,
            hop: 2,
            ..a
        };
        assert!(put_route(&mut b, &out));
        assert_eq!(route_arg(&b, VERSION2), Ok(out));
        assert!(!put_route(&mut b[..20], &out));
    }

    #[test]
    fn header() {
        let mut h = [0u8; 8];
        h[0..4].copy_from_slice(&128u32.to_ne_bytes());
        h[4..8].copy_from_slice(&VERSION.to_ne_bytes());
        assert_eq!(check_hdr(&h), Ok((128, VERSION)));
        h[4..8].copy_from_slice(&VERSION2.to_ne_bytes());
        assert_eq!(check_hdr(&h), Ok((128, VERSION2)));
        h[4..8].copy_from_slice(&1u32.to_ne_bytes());
        assert_eq!(check_hdr(&h), Err(EINVAL));
        h[4..8].copy_from_slice(&VERSION.to_ne_bytes());
        for bad in [0u32, 7, (DATA_MAX + 1) as u32, u32::MAX] {
            h[0..4].copy_from_slice(&bad.to_ne_bytes());
            assert_eq!(check_hdr(&h), Err(EINVAL), "{bad}");
        }
        assert_eq!(check_hdr(&h[..5]), Err(EINVAL));
    }

    #[test]
    fn data_checks() {
        assert_eq!(check_data(&data(b"", b"")), Ok(()));
        assert_eq!(check_data(&data(b"tcp\0", b"")), Ok(()));
        assert_eq!(check_data(&data(b"ab\0", b"cdef\0")), Ok(()));
        // The second string unterminated.
        assert_eq!(check_data(&data(b"ab\0", b"cdef")), Err(EINVAL));
        // With the first alone, Lustre checks the last byte of its 8-byte
        // rounding, padding for a short string.
        assert_eq!(check_data(&data(b"tcp", b"")), Ok(()));
        assert_eq!(check_data(&data(b"abcdefgh", b"")), Err(EINVAL));
        // Shorter than the structure, or a length the buffers do not add to.
        assert_eq!(check_data(&data(b"", b"")[..DATA_LEN - 1]), Err(EINVAL));
        let mut b = data(b"tcp\0", b"");
        b.push(0);
        assert_eq!(check_data(&b), Err(EINVAL));
        let mut b = data(b"", b"");
        b[off::INLLEN1..off::INLLEN1 + 4].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(check_data(&b), Err(EINVAL));
        // A user buffer's length without its pointer, a pointer without
        // its length.
        let mut b = data(b"", b"");
        b[off::PLEN1..off::PLEN1 + 4].copy_from_slice(&8u32.to_ne_bytes());
        assert_eq!(check_data(&b), Err(EINVAL));
        b[off::PBUF1..off::PBUF1 + 8].copy_from_slice(&0x1000u64.to_ne_bytes());
        assert_eq!(check_data(&b), Ok(()));
        let mut b = data(b"", b"");
        b[off::INLBUF2..off::INLBUF2 + 8].copy_from_slice(&0x1000u64.to_ne_bytes());
        assert_eq!(check_data(&b), Err(EINVAL));
    }

    #[test]
    fn fields() {
        let mut b = data(b"", b"");
        assert!(put_u64(&mut b, off::NID, 0x2_0000_0a01_0001));
        assert_eq!(get_u64(&b, off::NID), Some(0x2_0000_0a01_0001));
        assert!(!put_u64(&mut b, DATA_LEN - 4, 1));
        assert_eq!(get_u32(&b, usize::MAX - 1), None);
    }

    fn v2(len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[0..4].copy_from_slice(&(len as u32).to_ne_bytes());
        b[4..8].copy_from_slice(&VERSION2.to_ne_bytes());
        b
    }

    #[test]
    fn udsp_index() {
        // _IOWR('e', 107, ...) and _IOWR('e', 108, ...), as lnetctl's
        // IOCTL_CONFIG_SIZE gives them.
        assert_eq!(cmd_nr(0xc0a8_656b), nr::GET_UDSP_SIZE);
        assert_eq!(cmd_nr(0xc0a8_656c), nr::GET_UDSP);
        let mut b = v2(udsp::LEN);
        assert_eq!(udsp_idx(&b), Ok(0));
        assert!(put_u32(&mut b, udsp::IDX, (-1i32) as u32));
        assert_eq!(udsp_idx(&b), Ok(-1));
        assert!(put_u32(&mut b, udsp::IDX, 3));
        assert_eq!(udsp_idx(&b), Ok(3));
        assert_eq!(udsp_idx(&v2(udsp::LEN - 1)), Err(EINVAL));
    }

    #[test]
    fn numa_range_and_stats() {
        // _IOWR('e', 91, ...) and _IOWR('e', 99, ...): any size field.
        assert!(is_libcfs(0xc0a8_655b));
        assert_eq!(cmd_nr(0xc0a8_655b), nr::GET_LNET_STATS);
        assert_eq!(cmd_nr(0xc0a8_6563), nr::GET_NUMA_RANGE);
        assert_eq!(cmd_nr(0xc0a8_6562), nr::SET_NUMA_RANGE);
        // lnetctl's LIBCFS_IOC_INIT_V2 sizes: exactly 12 for the value.
        assert_eq!(check_get_numa_range(&v2(12)), Ok(()));
        assert_eq!(check_get_numa_range(&v2(16)), Err(EINVAL));
        assert_eq!(check_get_numa_range(&v2(8)), Err(EINVAL));
        let mut b = v2(12);
        assert!(put_u32(&mut b, set_value::VALUE, 7));
        assert_eq!(get_u32(&b, set_value::VALUE), Some(7));
        // The counters: 128 or more; too short is EINVAL even when down.
        assert_eq!(check_get_lnet_stats(&v2(128), true), Ok(()));
        assert_eq!(check_get_lnet_stats(&v2(256), true), Ok(()));
        assert_eq!(check_get_lnet_stats(&v2(127), true), Err(EINVAL));
        assert_eq!(check_get_lnet_stats(&v2(127), false), Err(EINVAL));
        assert_eq!(check_get_lnet_stats(&v2(128), false), Err(ENODEV));
        let mut b = v2(128);
        assert!(put_bytes(
            &mut b,
            lnet_stats::CNTRS,
            &[1u8; lnet_stats::CNTRS_LEN]
        ));
        assert!(b[8..].iter().all(|&x| x == 1));
        assert!(!put_bytes(
            &mut b,
            lnet_stats::CNTRS + 1,
            &[1u8; lnet_stats::CNTRS_LEN]
        ));
        assert!(!put_bytes(&mut b, usize::MAX, &[1u8]));
    }

    /// A fault argument as lctl packs it: the attribute, then for a list
    /// the counters.
    fn fault_arg(opc: u32, a: &[u8], stat: Option<usize>) -> Vec<u8> {
        let st = vec![0u8; stat.unwrap_or(0)];
        let mut b = data(a, &st);
        b[off::FLAGS..off::FLAGS + 4].copy_from_slice(&opc.to_ne_bytes());
        b
    }

    fn attr4(src: u64, dst: u64, rate: u32, interval: u32, third: u32, bits: u32) -> Vec<u8> {
        use fault::attr;
        let mut a = vec![0u8; attr::LEN];
        a[attr::SRC..attr::SRC + 8].copy_from_slice(&src.to_ne_bytes());
        a[attr::DST..attr::DST + 8].copy_from_slice(&dst.to_ne_bytes());
        a[attr::RATE..attr::RATE + 4].copy_from_slice(&rate.to_ne_bytes());
        a[attr::INTERVAL..attr::INTERVAL + 4].copy_from_slice(&interval.to_ne_bytes());
        a[attr::HEALTH_MASK..attr::HEALTH_MASK + 4].copy_from_slice(&third.to_ne_bytes());
        a[attr::DROP_BITS..attr::DROP_BITS + 4].copy_from_slice(&bits.to_ne_bytes());
        a
    }

    #[test]
    fn fault_rules() {
        use super::super::fault::{Action, Pace, Stats};
        use fault::{op, opc, Kind, Op};
        // _IOWR('e', 64, long) and _IOWR('e', 110, ...).
        assert_eq!(cmd_nr(0xc008_6540), nr::LNET_FAULT);
        assert!(is_libcfs(0xc0b8_656e));
        assert_eq!(cmd_nr(0xc0b8_656e), nr::RESET_LNET_STATS);
        assert_eq!(op(opc::DROP_ADD), Ok((Kind::Drop, Op::Add)));
        assert_eq!(op(opc::DELAY_LIST), Ok((Kind::Delay, Op::List)));
        assert_eq!(op(opc::DELAY_RESET), Ok((Kind::Delay, Op::Reset)));
        assert_eq!(op(8), Err(EINVAL));
        assert_eq!(op(u32::MAX), Err(EINVAL));

        let n = |s: &str| Nid::parse(s).unwrap();
        let src = n("10.1.0.1@tcp").to_nid4().unwrap();
        // A drop rule 1/4 from one NID to any (0), dropping everything.
        let b = fault_arg(opc::DROP_ADD, &attr4(src, 0, 4, 0, 0, 2), None);
        assert_eq!(check_data(&b), Ok(()));
        let (a, pace, action) = fault::rule(&b, Kind::Drop).unwrap();
        assert_eq!(a.src, n("10.1.0.1@tcp"));
        assert!(a.dst.is_any() && a.local.is_any());
        assert_eq!(pace, Pace::Rate(4));
        assert_eq!(
            action,
            Action::Drop {
                health_mask: 0,
                random: false,
                all: true
            }
        );
        // A delay rule every 5 s with latency 3; LNET_NID_ANY is any too.
        let b = fault_arg(opc::DELAY_ADD, &attr4(u64::MAX, src, 0, 5, 3, 0), None);
        let (a, pace, action) = fault::rule(&b, Kind::Delay).unwrap();
        assert!(a.src.is_any());
        assert_eq!(pace, Pace::Interval(5));
        assert_eq!(action, Action::Delay { latency: 3 });
        assert_eq!(fault::selector(&b), Ok((Nid::ANY, n("10.1.0.1@tcp"))));
        // Both or neither of rate and interval; no attribute, or a short one.
        let b = fault_arg(opc::DROP_ADD, &attr4(src, 0, 4, 5, 0, 0), None);
        assert_eq!(fault::rule(&b, Kind::Drop), Err(EINVAL));
        let b = fault_arg(opc::DROP_ADD, &attr4(src, 0, 0, 0, 0, 0), None);
        assert_eq!(fault::rule(&b, Kind::Drop), Err(EINVAL));
        let b = fault_arg(opc::DROP_ADD, &[], None);
        assert_eq!(fault::rule(&b, Kind::Drop), Err(EINVAL));
        assert_eq!(fault::selector(&b), Err(EINVAL));
        let short = attr4(src, 0, 4, 0, 0, 0);
        let b = fault_arg(opc::DROP_ADD, &short[..fault::attr::LEN - 8], None);
        assert_eq!(fault::rule(&b, Kind::Drop), Err(EINVAL));

        // A list: both buffers, written back whole.
        let mut b = fault_arg(
            opc::DROP_LIST,
            &[0u8; fault::attr::LEN],
            Some(fault::stat::LEN),
        );
        assert_eq!(check_data(&b), Ok(()));
        assert_eq!(fault::check_list(&b), Ok(()));
        let st = Stats {
            count: 9,
            put: 1,
            ack: 2,
            get: 3,
            reply: 4,
            hits: 10,
        };
        let drop = Action::Drop {
            health_mask: 1 << 3,
            random: true,
            all: false,
        };
        let (a, _, _) = fault::rule(
            &fault_arg(opc::DROP_ADD, &attr4(src, 0, 4, 0, 0, 0), None),
            Kind::Drop,
        )
        .unwrap();
        assert_eq!(
            fault::put_rule(&mut b, &a, Pace::Interval(7), drop, &st),
            Ok(())
        );
        let at = DATA_LEN;
        assert_eq!(get_u64(&b, at + fault::attr::SRC), Some(src));
        assert_eq!(get_u64(&b, at + fault::attr::DST), Some(u64::MAX));
        assert_eq!(get_u32(&b, at + fault::attr::RATE), Some(0));
        assert_eq!(get_u32(&b, at + fault::attr::INTERVAL), Some(7));
        assert_eq!(get_u32(&b, at + fault::attr::HEALTH_MASK), Some(8));
        assert_eq!(get_u32(&b, at + fault::attr::DROP_BITS), Some(1));
        let st_at = DATA_LEN + fault::attr::LEN;
        assert_eq!(get_u64(&b, st_at + fault::stat::COUNT), Some(9));
        assert_eq!(get_u64(&b, st_at + fault::stat::REPLY), Some(4));
        assert_eq!(get_u64(&b, st_at + fault::stat::HITS), Some(10));
        // Without the counters' buffer, or with a short one.
        let b = fault_arg(opc::DROP_LIST, &[0u8; fault::attr::LEN], None);
        assert_eq!(fault::check_list(&b), Err(EINVAL));
        let mut b = fault_arg(opc::DROP_LIST, &[0u8; fault::attr::LEN], Some(16));
        assert_eq!(fault::check_list(&b), Err(EINVAL));
        assert_eq!(
            fault::put_rule(&mut b, &a, Pace::Rate(2), drop, &st),
            Err(EINVAL)
        );
    }

    #[test]
    fn nids_net_by_net() {
        let n = |s: &str| Nid::parse(s).unwrap();
        let nids = [
            n("0@lo"),
            n("10.1.0.1@tcp"),
            n("10.2.0.1@tcp1"),
            n("10.3.0.1@tcp"),
        ];
        let got: Vec<u64> = (0..5).map_while(|i| nth_nid4(nids.iter(), i)).collect();
        let want: Vec<u64> = [0, 1, 3, 2]
            .iter()
            .map(|&i| nids[i].to_nid4().unwrap())
            .collect();
        assert_eq!(got, want);
        assert_eq!(nth_nid4(nids.iter(), 4), None);
        assert_eq!(nth_nid4([].iter(), 0), None);
    }

    #[test]
    fn buffer_commands() {
        let mut b = std::vec![0u8; cfg::LEN];
        b[cfg::COUNT..cfg::COUNT + 4].copy_from_slice(&2u32.to_ne_bytes());
        b[cfg::BUF_ENABLE..cfg::BUF_ENABLE + 4].copy_from_slice(&1u32.to_ne_bytes());
        b[cfg::BUF_TINY..cfg::BUF_TINY + 4].copy_from_slice(&512i32.to_ne_bytes());
        b[cfg::BUF_TINY + 4..cfg::BUF_TINY + 8].copy_from_slice(&(-1i32).to_ne_bytes());
        b[cfg::BUF_TINY + 8..cfg::BUF_TINY + 12].copy_from_slice(&8i32.to_ne_bytes());
        assert_eq!(
            buffers_arg(&b, false),
            Ok(BuffersArg {
                count: 2,
                enable: 1,
                pools: [512, -1, 8]
            })
        );
        // GET_BUF needs room for its reply.
        assert_eq!(buffers_arg(&b, true), Err(EINVAL));
        assert_eq!(buffers_arg(&b[..cfg::LEN - 1], false), Err(EINVAL));
        let mut g = std::vec![0u8; cfg::LEN + pool_cfg::LEN];
        assert!(buffers_arg(&g, true).is_ok());
        let e = PoolEntry {
            npages: 256,
            nbuffers: 8,
            credits: -2,
            mincredits: -3,
        };
        assert!(put_pools(
            &mut g,
            &[PoolEntry::default(), PoolEntry::default(), e],
            1
        ));
        let at = cfg::BULK + 2 * pool_cfg::POOL_LEN;
        assert_eq!(get_u32(&g, at), Some(256));
        assert_eq!(get_u32(&g, at + 8), Some((-2i32) as u32));
        assert_eq!(get_u32(&g, cfg::BULK + pool_cfg::ROUTING), Some(1));
        assert!(!put_pools(&mut b, &[e; 3], 1));
    }
}
