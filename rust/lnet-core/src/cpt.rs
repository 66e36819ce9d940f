//! CPU partitions (CPTs): how lnet.ko divides the machine's CPUs into the
//! partitions Lustre's threads, memory pools and NID hashing are spread
//! over, from the `cpu_npartitions` and `cpu_pattern` parameters.
//!
//! The decisions are made here, over two traits: [`Topology`] answers what
//! the machine has (online CPUs, NUMA nodes, cores and their hyperthreads)
//! and [`Table`] is the partition table being filled, with the semantics of
//! Lustre's `cfs_cpt_set_cpu`, `cfs_cpt_set_node` and `cfs_cpt_unset_cpu`.
//! lnet.ko implements both over the kernel's cpumasks; the tests below
//! implement them over a described machine.
//!
//! `cpu_pattern` has Lustre's syntax:
//! - `""`: the layout from `cpu_npartitions` alone (0: estimated from the
//!   number of cores, see [`estimate`]);
//! - `"N"` (the default): one partition per NUMA node with CPUs, or, with
//!   `cpu_npartitions` set, the layout from that number;
//! - `"0[0,1] 1[2-3]"`: partition ids, each with the CPUs in brackets;
//! - `"N 0[0] 1[1]"`: the same with NUMA node ids in brackets;
//! - `"X[2,5]"`, `"N X[2]"`: the default layout (from `cpu_npartitions`,
//!   or per node with `N`) without the CPUs in brackets;
//! - `"C[0-1]"`, `"N C[0-1]"`: the default layout without the first cores
//!   of each partition (or of each node with `N`), counted from the lowest
//!   CPU id of it.
//!
//! Bracket contents are Lustre's expression lists: `a`, `a-b`, `a-b/s` or
//! `*`, comma separated.

use super::kstrto;
use core::fmt;

/// `EPERM`, `ENODEV`, `ENOMEM`, `EINVAL`, `ERANGE`, `E2BIG`.
pub const EPERM: i32 = 1;
/// See [`EPERM`].
pub const ENOMEM: i32 = 12;
/// See [`EPERM`].
pub const ENODEV: i32 = 19;
/// See [`EPERM`].
pub const EINVAL: i32 = 22;
/// See [`EPERM`].
pub const ERANGE: i32 = 34;
/// See [`EPERM`].
pub const E2BIG: i32 = 7;

/// `CFS_CPT_ANY`: any partition, or the whole table.
pub const CPT_ANY: i32 = -1;

/// Why no table could be made; [`CptError::errno`] is Lustre's errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CptError {
    /// More partitions than online CPUs (or than nodes for a node pattern),
    /// or none at all.
    TooManyPartitions {
        /// Partitions asked for.
        ncpt: i64,
        /// Online CPUs (or nodes).
        limit: u32,
    },
    /// Text where a bracket was expected.
    BadPattern,
    /// A partition id that is not a number.
    BadPartitionId,
    /// A partition id out of `0..ncpt`.
    PartitionOutOfRange {
        /// The id.
        cpt: i64,
        /// Partitions in the table.
        ncpt: u32,
    },
    /// Fewer (or more) partitions given than the table has.
    PartitionCount {
        /// Partitions in the table.
        expected: u32,
        /// Partitions the pattern gave.
        found: u32,
    },
    /// A partition given twice.
    PartitionSet(u32),
    /// Something between a partition id and its `[`.
    NoBracket,
    /// A `[` without its `]`.
    MissingBracket,
    /// A bracket whose contents are not an expression list within range.
    BadRange,
    /// A CPU or node that cannot go in a partition (offline, absent, or
    /// already in one).
    Refused {
        /// The partition.
        cpt: u32,
        /// The CPU or node id.
        id: u32,
    },
    /// Every CPU of a partition was excluded.
    AllExcluded(u32),
    /// A partition has no online CPU.
    NoOnlineCpu(u32),
    /// A topology query or the table could not be allocated.
    NoMemory,
}

impl CptError {
    /// The errno Lustre's table creation returns for this error.
    pub fn errno(self) -> i32 {
        match self {
            CptError::PartitionSet(_) => EPERM,
            CptError::BadRange => ERANGE,
            CptError::AllExcluded(_) | CptError::NoOnlineCpu(_) => ENODEV,
            CptError::NoMemory => ENOMEM,
            _ => EINVAL,
        }
    }
}

impl fmt::Display for CptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CptError::TooManyPartitions { ncpt, limit } => {
                write!(f, "{ncpt} partitions asked for, {limit} possible")
            }
            CptError::BadPattern => write!(f, "text where a '[' was expected"),
            CptError::BadPartitionId => write!(f, "a partition id is not a number"),
            CptError::PartitionOutOfRange { cpt, ncpt } => {
                write!(f, "partition id {cpt} out of 0..{ncpt}")
            }
            CptError::PartitionCount { expected, found } => {
                write!(f, "expected {expected} partitions, found {found}")
            }
            CptError::PartitionSet(cpt) => write!(f, "partition {cpt} given twice"),
            CptError::NoBracket => write!(f, "a partition id not followed by '['"),
            CptError::MissingBracket => write!(f, "a '[' without its ']'"),
            CptError::BadRange => write!(f, "a bracket's number range is invalid"),
            CptError::Refused { cpt, id } => {
                write!(
                    f,
                    "{id} cannot go in partition {cpt} (offline, absent or taken)"
                )
            }
            CptError::AllExcluded(cpt) => write!(f, "every core of partition {cpt} is excluded"),
            CptError::NoOnlineCpu(cpt) => write!(f, "partition {cpt} has no online CPU"),
            CptError::NoMemory => write!(f, "out of memory"),
        }
    }
}

/// A set of CPU ids (a cpumask).
pub trait CpuSet {
    /// The lowest id in the set after `after` (from the start with `None`).
    fn next(&self, after: Option<u32>) -> Option<u32>;
    /// Removes `cpu`.
    fn clear(&mut self, cpu: u32);
    /// Whether `cpu` is in the set.
    fn test(&self, cpu: u32) -> bool;
    /// How many CPUs are in the set.
    fn weight(&self) -> u32;
}

/// What the machine has, as the kernel reports it.
pub trait Topology {
    /// The CPU set type of this topology.
    type Set: CpuSet;
    /// `nr_cpu_ids`: one past the largest possible CPU id.
    fn nr_cpu_ids(&self) -> u32;
    /// `nr_node_ids`: one past the largest possible node id.
    fn nr_node_ids(&self) -> u32;
    /// `num_possible_cpus()`.
    fn possible_cpus(&self) -> u32;
    /// `num_online_cpus()`.
    fn online_cpus(&self) -> u32;
    /// `num_online_nodes()`.
    fn online_nodes(&self) -> u32;
    /// Whether `cpu` is online.
    fn cpu_online(&self, cpu: u32) -> bool;
    /// The lowest online node after `after` (from the start with `None`).
    fn next_online_node(&self, after: Option<u32>) -> Option<u32>;
    /// A copy of `cpumask_of_node(node)`.
    fn node_cpus(&self, node: u32) -> Result<Self::Set, CptError>;
    /// `topology_core_cpumask(cpu) & within`, always holding `cpu` itself
    /// (`cpu` is in `within`): the CPUs of `cpu`'s socket still to place.
    fn socket_within(&self, cpu: u32, within: &Self::Set) -> Result<Self::Set, CptError>;
    /// `topology_sibling_cpumask(cpu) & within`, always holding `cpu`
    /// itself: the hyperthreads of `cpu`'s core still to place.
    fn core_within(&self, cpu: u32, within: &Self::Set) -> Result<Self::Set, CptError>;
    /// Hyperthreads per core, as seen from the CPU running the caller.
    fn threads_per_core(&self) -> u32;
}

/// A partition table being filled, with the semantics of Lustre's
/// `cfs_cpt_*` calls of the same names.
pub trait Table {
    /// Partitions in the table.
    fn nparts(&self) -> u32;
    /// `cfs_cpt_set_cpu`: puts online `cpu` in `cpt`; false if it is
    /// offline, absent or already in a partition.
    fn set_cpu(&mut self, cpt: u32, cpu: u32) -> bool;
    /// `cfs_cpt_set_node`: puts node `node` (and its CPUs) in `cpt`; false
    /// if there is no such node or partition.
    fn set_node(&mut self, cpt: u32, node: u32) -> bool;
    /// `cfs_cpt_unset_cpu`: takes `cpu` out of `cpt` ([`CPT_ANY`]: of its
    /// partition), and its node out of the partition if it was the node's
    /// last CPU there.
    fn unset_cpu(&mut self, cpt: i32, cpu: u32);
    /// Takes `cpu` out of `cpt` without touching the node masks (what
    /// Lustre's relative core exclusion does).
    fn del_cpu(&mut self, cpt: u32, cpu: u32);
    /// CPUs in `cpt`.
    fn weight(&self, cpt: u32) -> u32;
    /// Whether `cpt` has an online CPU.
    fn online(&self, cpt: u32) -> bool;
    /// The partition of `cpu`, or -1.
    fn cpt_of_cpu(&self, cpu: u32) -> i32;
    /// The lowest CPU of `cpt` after `after`.
    fn next_cpu(&self, cpt: u32, after: Option<u32>) -> Option<u32>;
}

/// Lustre's estimate of a good partition count: about two cores' worth of
/// hyperthreads per partition beyond 4 CPUs, rounded down to a divisor of
/// the CPU count.
pub fn estimate<P: Topology>(topo: &P) -> u32 {
    let ncpu = topo.online_cpus();
    // A CPU is at least its own thread: a zero here would never end.
    let nthr = topo.threads_per_core().max(1);
    let mut ncpt: u32 = 1;
    if ncpu > 4 {
        ncpt = 2;
        while u64::from(ncpu) > 2 * u64::from(nthr) * u64::from(ncpt) {
            ncpt += 1;
        }
    }
    if usize::BITS == 32 {
        // Many partitions cost too much memory on 32-bit machines.
        ncpt = ncpt.min(2);
    }
    while ncpt > 1 && ncpu % ncpt != 0 {
        ncpt -= 1;
    }
    ncpt
}

/// Whether `ncpt` partitions is more than 4 times [`estimate`], which
/// Lustre warns about (performance and memory pressure).
pub fn oversized<P: Topology>(topo: &P, ncpt: u32) -> bool {
    u64::from(ncpt) > 4 * u64::from(estimate(topo))
}

/// Builds the table for `cpu_npartitions` and `cpu_pattern`, allocating it
/// with `alloc(partitions)`, as Lustre's lnet.ko does at load.
///
/// A negative `npartitions` is read as 0 (automatic) everywhere: Lustre
/// does so without a pattern, and with one it would size a table with it.
pub fn build<P, T, A>(topo: &P, npartitions: i32, pattern: &str, alloc: A) -> Result<T, CptError>
where
    P: Topology,
    T: Table,
    A: FnOnce(u32) -> Result<T, CptError>,
{
    let n = u32::try_from(npartitions).unwrap_or(0);
    if pattern.is_empty() {
        create(topo, n, alloc)
    } else {
        create_pattern(topo, n, pattern.as_bytes(), alloc)
    }
}

/// `cfs_cpt_table_create`: `ncpt` partitions (0: [`estimate`]), filled
/// node by node with equal shares of the online CPUs, hyperthreads of one
/// core and cores of one socket kept together.
pub fn create<P, T, A>(topo: &P, ncpt: u32, alloc: A) -> Result<T, CptError>
where
    P: Topology,
    T: Table,
    A: FnOnce(u32) -> Result<T, CptError>,
{
    let ncpt = if ncpt == 0 { estimate(topo) } else { ncpt };
    let online = topo.online_cpus();
    if ncpt > online || ncpt == 0 {
        return Err(CptError::TooManyPartitions {
            ncpt: i64::from(ncpt),
            limit: online,
        });
    }
    let mut table = alloc(ncpt)?;
    let num = online / ncpt;
    let mut rem = i64::from(online % ncpt);
    let mut cpt = 0;
    let mut node = topo.next_online_node(None);
    while let Some(nd) = node {
        let mut mask = topo.node_cpus(nd)?;
        while cpt < ncpt && mask.weight() > 0 {
            let extra = u32::from(rem > 0);
            let want = (num + extra).saturating_sub(table.weight(cpt));
            choose_cpus(topo, &mut table, cpt, &mut mask, want)?;
            if table.weight(cpt) == num + extra {
                cpt += 1;
                rem -= 1;
            }
        }
        node = topo.next_online_node(Some(nd));
    }
    Ok(table)
}

/// `cfs_cpt_choose_ncpus`: moves up to `number` online CPUs of `mask` into
/// `cpt`, all of them if that is at least what `mask` holds, otherwise
/// whole cores of one socket first.
fn choose_cpus<P: Topology, T: Table>(
    topo: &P,
    table: &mut T,
    cpt: u32,
    mask: &mut P::Set,
    mut number: u32,
) -> Result<(), CptError> {
    if number == 0 {
        // Lustre asserts it never happens; taking nothing would not end.
        return Err(CptError::Refused { cpt, id: 0 });
    }
    if number >= mask.weight() {
        while let Some(cpu) = mask.next(None) {
            mask.clear(cpu);
            if topo.cpu_online(cpu) && !table.set_cpu(cpt, cpu) {
                return Err(CptError::Refused { cpt, id: cpu });
            }
        }
        return Ok(());
    }
    while let Some(first) = mask.next(None) {
        let mut cpu = Some(first);
        let mut socket = topo.socket_within(first, mask)?;
        while let Some(c) = cpu {
            let core = topo.core_within(c, mask)?;
            if !core.test(c) {
                // Each round must take `c` out of the masks to end.
                return Err(CptError::Refused { cpt, id: c });
            }
            let mut i = core.next(None);
            while let Some(t) = i {
                socket.clear(t);
                mask.clear(t);
                if topo.cpu_online(t) {
                    if !table.set_cpu(cpt, t) {
                        return Err(CptError::Refused { cpt, id: t });
                    }
                    number -= 1;
                    if number == 0 {
                        return Ok(());
                    }
                }
                i = core.next(Some(t));
            }
            cpu = socket.next(None);
        }
    }
    Ok(())
}

/// C's `isspace`.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn skip_spaces(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| is_space(**b)).count();
    s.get(n..).unwrap_or(&[])
}

/// The kernel's `strim`: without leading and trailing white space.
fn trim(s: &[u8]) -> &[u8] {
    let s = skip_spaces(s);
    let n = s.iter().rev().take_while(|b| is_space(**b)).count();
    s.get(..s.len() - n).unwrap_or(&[])
}

fn find(s: &[u8], c: u8) -> Option<usize> {
    s.iter().position(|b| *b == c)
}

/// `sscanf(s, "%d%n")` as the kernel's: a decimal after white space,
/// with a `-` only before a digit, and the bytes used. A number too large
/// for an int saturates (and is then refused as a partition id) where C
/// would wrap it.
fn scan_int(s: &[u8]) -> Option<(i64, usize)> {
    let start = s.len() - skip_spaces(s).len();
    let neg = s.get(start) == Some(&b'-');
    let i = start + usize::from(neg);
    let mut v: i64 = 0;
    let mut used = 0;
    for d in s.get(i..)?.iter().take_while(|b| b.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(i64::from(d - b'0'));
        used += 1;
    }
    if used == 0 {
        return None;
    }
    Some((if neg { -v } else { v }, i + used))
}

/// One range of an expression list (`cfs_range_expr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// Lowest value.
    pub lo: u32,
    /// Highest value.
    pub hi: u32,
    /// Step from `lo`.
    pub stride: u32,
}

fn number(s: &[u8], min: u32, max: u32) -> Option<u32> {
    kstrto::parse_u32(s).ok().filter(|v| *v >= min && *v <= max)
}

/// `cfs_range_expr_parse` of one bracketed item. A stride of 0 is refused:
/// Lustre would divide by it.
fn parse_range(s: &[u8], min: u32, max: u32) -> Option<Range> {
    let s = trim(s);
    if s == b"*" {
        return Some(Range {
            lo: min,
            hi: max,
            stride: 1,
        });
    }
    if kstrto::parse_u32(s).is_ok() {
        let v = number(s, min, max)?;
        return Some(Range {
            lo: v,
            hi: v,
            stride: 1,
        });
    }
    let dash = find(s, b'-')?;
    let lo = number(trim(s.get(..dash)?), min, max)?;
    let rest = s.get(dash + 1..)?;
    let r = if kstrto::parse_u32(trim(rest)).is_ok() {
        Range {
            lo,
            hi: number(trim(rest), min, max)?,
            stride: 1,
        }
    } else {
        let slash = find(rest, b'/')?;
        Range {
            lo,
            hi: number(trim(rest.get(..slash)?), min, max)?,
            stride: number(trim(rest.get(slash + 1..)?), min, max)?,
        }
    };
    (r.lo <= r.hi && r.stride > 0).then_some(r)
}

/// `cfs_expr_list_parse` of `[...]` (brackets included) with values in
/// `0..=max`: the list, once every item of it parses.
pub fn parse_expr_list(s: &[u8], max: u32) -> Option<ExprList<'_>> {
    let inner = s.strip_prefix(b"[")?.strip_suffix(b"]")?;
    let list = ExprList { inner, max };
    if list.iter().any(|r| r.is_none()) {
        return None;
    }
    Some(list)
}

/// A checked expression list, walked without allocating.
#[derive(Clone, Copy, Debug)]
pub struct ExprList<'a> {
    inner: &'a [u8],
    max: u32,
}

impl<'a> ExprList<'a> {
    fn iter(&self) -> impl Iterator<Item = Option<Range>> + 'a {
        let max = self.max;
        self.inner.split(|b| *b == b',').map(move |tok| {
            if tok.is_empty() {
                None
            } else {
                parse_range(tok, 0, max)
            }
        })
    }

    /// The ranges, in the order written.
    pub fn ranges(&self) -> impl Iterator<Item = Range> + 'a {
        self.iter().flatten()
    }
}

/// Node ids, relative core numbers or CPU ids in brackets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ids {
    Cpus,
    Nodes,
    /// The layout for `N` alone: one partition per node with CPUs.
    AllNodes,
}

/// `cfs_cpt_table_create_pattern`.
fn create_pattern<P, T, A>(
    topo: &P,
    npartitions: u32,
    pattern: &[u8],
    alloc: A,
) -> Result<T, CptError>
where
    P: Topology,
    T: Table,
    A: FnOnce(u32) -> Result<T, CptError>,
{
    let mut s = skip_spaces(pattern);
    let mut ids = Ids::Cpus;
    let mut ncpt = npartitions;
    if let Some(rest) = s.strip_prefix(b"N").or_else(|| s.strip_prefix(b"n")) {
        ids = Ids::Nodes;
        if rest.is_empty() {
            if npartitions != 0 {
                return create(topo, npartitions, alloc);
            }
            ids = Ids::AllNodes;
            ncpt = nodes_with_cpus(topo)?;
        }
        s = skip_spaces(rest);
    }
    let mut exclude = false;
    let mut relative = false;
    if let Some(rest) = s.strip_prefix(b"X").or_else(|| s.strip_prefix(b"x")) {
        exclude = true;
        s = skip_spaces(rest);
    }
    if let Some(rest) = s.strip_prefix(b"C").or_else(|| s.strip_prefix(b"c")) {
        exclude = true;
        relative = true;
        s = rest;
    }
    if ncpt == 0 {
        ncpt = if ids == Ids::Cpus {
            // One partition per bracket.
            u32::try_from(s.iter().filter(|b| **b == b'[').count()).unwrap_or(u32::MAX)
        } else {
            nodes_with_cpus(topo)?
        };
    }
    let limit = if ids == Ids::Cpus {
        topo.online_cpus()
    } else {
        topo.online_nodes()
    };
    if (ncpt == 0 && !exclude) || ncpt > limit {
        return Err(CptError::TooManyPartitions {
            ncpt: i64::from(ncpt),
            limit,
        });
    }

    let mut high = 0;
    let mut table = if exclude || ids == Ids::AllNodes {
        if ids == Ids::Cpus {
            create(topo, ncpt, alloc)?
        } else {
            let mut table = alloc(ncpt)?;
            let mut cpt = 0;
            let mut node = topo.next_online_node(None);
            while let Some(nd) = node {
                let count = topo.node_cpus(nd)?.weight();
                if count > 0 {
                    // A node more than the partitions is refused, where
                    // Lustre would write past its table.
                    if !table.set_node(cpt, nd) {
                        return Err(CptError::Refused { cpt, id: nd });
                    }
                    cpt += 1;
                    if relative && (high == 0 || count < high) {
                        high = count;
                    }
                }
                node = topo.next_online_node(Some(nd));
            }
            if ids == Ids::AllNodes {
                return Ok(table);
            }
            table
        }
    } else {
        alloc(ncpt)?
    };
    if exclude && !relative {
        high = topo.online_cpus().saturating_sub(1);
    }
    if !exclude {
        high = match ids {
            Ids::Cpus => topo.nr_cpu_ids(),
            _ => topo.nr_node_ids(),
        }
        .saturating_sub(1);
    }

    let mut cpt: u32 = 0;
    let mut c = 0;
    // Lustre's bound: there are never more brackets than possible CPUs.
    while c < topo.possible_cpus() {
        let Some(open) = find(s, b'[') else {
            if !s.is_empty() {
                return Err(CptError::BadPattern);
            }
            if !exclude && c != ncpt {
                return Err(CptError::PartitionCount {
                    expected: ncpt,
                    found: c,
                });
            }
            break;
        };
        if exclude {
            s = s.get(open..).unwrap_or(&[]);
        } else {
            let (id, used) = scan_int(s).ok_or(CptError::BadPartitionId)?;
            cpt = u32::try_from(id)
                .ok()
                .filter(|c| *c < ncpt)
                .ok_or(CptError::PartitionOutOfRange { cpt: id, ncpt })?;
            if table.weight(cpt) > 0 {
                return Err(CptError::PartitionSet(cpt));
            }
            s = trim(s.get(used..).unwrap_or(&[]));
            if s.first() != Some(&b'[') {
                return Err(CptError::NoBracket);
            }
        }
        let close = find(s, b']').ok_or(CptError::MissingBracket)?;
        let list =
            parse_expr_list(s.get(..=close).unwrap_or(&[]), high).ok_or(CptError::BadRange)?;
        for r in list.ranges() {
            if relative {
                if ids == Ids::Cpus {
                    unset_cpt_core(&mut table, r.lo, r.hi);
                } else {
                    unset_node_core(topo, &mut table, r.lo, r.hi)?;
                }
                continue;
            }
            let mut i = r.lo;
            loop {
                if exclude {
                    let of = table.cpt_of_cpu(i);
                    table.unset_cpu(of, i);
                } else {
                    let done = match ids {
                        Ids::Cpus => table.set_cpu(cpt, i),
                        _ => table.set_node(cpt, i),
                    };
                    if !done {
                        return Err(CptError::Refused { cpt, id: i });
                    }
                }
                match i.checked_add(r.stride) {
                    Some(n) if n <= r.hi => i = n,
                    _ => break,
                }
            }
        }
        if exclude {
            for p in 0..ncpt {
                if !table.online(p) {
                    return Err(CptError::AllExcluded(p));
                }
            }
        } else if !table.online(cpt) {
            return Err(CptError::NoOnlineCpu(cpt));
        }
        s = trim(s.get(close + 1..).unwrap_or(&[]));
        c += 1;
    }
    Ok(table)
}

/// Online nodes with at least one CPU.
fn nodes_with_cpus<P: Topology>(topo: &P) -> Result<u32, CptError> {
    let mut n = 0;
    let mut node = topo.next_online_node(None);
    while let Some(nd) = node {
        if topo.node_cpus(nd)?.weight() > 0 {
            n += 1;
        }
        node = topo.next_online_node(Some(nd));
    }
    Ok(n)
}

/// Whether `cpu` is within `lo..=hi` counted from `offset`.
fn within(cpu: u32, offset: u32, lo: u32, hi: u32) -> bool {
    let cpu = u64::from(cpu);
    let offset = u64::from(offset);
    u64::from(lo) + offset <= cpu && cpu <= u64::from(hi) + offset
}

/// `cfs_unset_cpt_core`: takes out of each partition its CPUs whose id,
/// less the partition's lowest CPU id, is within `lo..=hi`.
fn unset_cpt_core<T: Table>(table: &mut T, lo: u32, hi: u32) {
    for cpt in 0..table.nparts() {
        let Some(offset) = table.next_cpu(cpt, None) else {
            continue;
        };
        let mut cpu = Some(offset);
        while let Some(c) = cpu {
            let next = table.next_cpu(cpt, Some(c));
            if within(c, offset, lo, hi) {
                table.del_cpu(cpt, c);
            }
            cpu = next;
        }
    }
}

/// `cfs_unset_node_core`: the same per NUMA node, each CPU taken out of
/// whichever partition holds it (one in none is left alone, where Lustre
/// would index its table with -1).
fn unset_node_core<P: Topology, T: Table>(
    topo: &P,
    table: &mut T,
    lo: u32,
    hi: u32,
) -> Result<(), CptError> {
    let mut node = topo.next_online_node(None);
    while let Some(nd) = node {
        let mask = topo.node_cpus(nd)?;
        if let Some(offset) = mask.next(None) {
            let mut cpu = Some(offset);
            while let Some(c) = cpu {
                if within(c, offset, lo, hi) {
                    if let Ok(cpt) = u32::try_from(table.cpt_of_cpu(c)) {
                        table.del_cpu(cpt, c);
                    }
                }
                cpu = mask.next(Some(c));
            }
        }
        node = topo.next_online_node(Some(nd));
    }
    Ok(())
}

/// `cfs_cpt_table_print`: "`cpt`\t: `cpu` `cpu`...\n" per partition into
/// `buf`, given each partition's CPUs by `cpus(cpt, after)` (the next CPU
/// after `after`). Returns the length written, or `E2BIG` (negated) when
/// `buf` is too small, as Lustre does (its output needs one spare byte,
/// for snprintf's NUL).
pub fn print_table(
    nparts: u32,
    cpus: impl Fn(u32, Option<u32>) -> Option<u32>,
    buf: &mut [u8],
) -> i32 {
    let mut w = Cursor { buf, pos: 0 };
    for cpt in 0..nparts {
        if w.full() || w.put(format_args!("{cpt}\t:")).is_err() {
            return -E2BIG;
        }
        let mut cpu = cpus(cpt, None);
        while let Some(c) = cpu {
            if w.put(format_args!(" {c}")).is_err() {
                return -E2BIG;
            }
            cpu = cpus(cpt, Some(c));
        }
        w.newline();
    }
    i32::try_from(w.pos).unwrap_or(-E2BIG)
}

/// `cfs_cpt_distance_print`: "`cpt`\t: `cpt`:`distance`...\n" per
/// partition, with [`print_table`]'s rules.
pub fn print_distance(nparts: u32, distance: impl Fn(u32, u32) -> u32, buf: &mut [u8]) -> i32 {
    let mut w = Cursor { buf, pos: 0 };
    for cpt in 0..nparts {
        if w.full() || w.put(format_args!("{cpt}\t:")).is_err() {
            return -E2BIG;
        }
        for j in 0..nparts {
            // Lustre prints the unsigned distance with %d.
            let d = distance(cpt, j) as i32;
            if w.put(format_args!(" {j}:{d}")).is_err() {
                return -E2BIG;
            }
        }
        w.newline();
    }
    i32::try_from(w.pos).unwrap_or(-E2BIG)
}

/// Writes into a byte buffer as Lustre's printers do with snprintf: a
/// piece fails unless it fits with room for a NUL after it; a newline
/// replaces that NUL (so a full output is not NUL-terminated).
struct Cursor<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn full(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Only after a piece that fitted, so there is room.
    fn newline(&mut self) {
        if let Some(b) = self.buf.get_mut(self.pos) {
            *b = b'\n';
            self.pos += 1;
        }
    }

    fn put(&mut self, args: fmt::Arguments<'_>) -> Result<(), fmt::Error> {
        fmt::write(self, args)?;
        // The NUL snprintf leaves after each piece.
        *self.buf.get_mut(self.pos).ok_or(fmt::Error)? = 0;
        Ok(())
    }
}

impl fmt::Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.pos.checked_add(s.len()).ok_or(fmt::Error)?;
        self.buf
            .get_mut(self.pos..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.pos = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;
    use std::vec;
    use std::vec::Vec;

    /// A CPU of a described machine.
    #[derive(Clone, Copy, Debug)]
    struct Cpu {
        node: u32,
        socket: u32,
        core: u32,
        online: bool,
    }

    /// A machine: CPU `i` is `cpus[i]`; nodes `0..nodes` are online.
    #[derive(Clone, Debug)]
    struct Machine {
        cpus: Vec<Cpu>,
        nodes: u32,
    }

    #[derive(Clone, Debug, PartialEq)]
    struct Set(BTreeSet<u32>);

    impl CpuSet for Set {
        fn next(&self, after: Option<u32>) -> Option<u32> {
            match after {
                None => self.0.iter().next().copied(),
                Some(a) => self.0.range(a + 1..).next().copied(),
            }
        }
        fn clear(&mut self, cpu: u32) {
            self.0.remove(&cpu);
        }
        fn test(&self, cpu: u32) -> bool {
            self.0.contains(&cpu)
        }
        fn weight(&self) -> u32 {
            self.0.len() as u32
        }
    }

    impl Machine {
        /// `nodes` nodes of `cores` cores of `threads` hyperthreads, all
        /// online, numbered node by node, one socket per node.
        fn new(nodes: u32, cores: u32, threads: u32) -> Machine {
            let mut cpus = Vec::new();
            for node in 0..nodes {
                for core in 0..cores {
                    for _ in 0..threads {
                        cpus.push(Cpu {
                            node,
                            socket: node,
                            core,
                            online: true,
                        });
                    }
                }
            }
            Machine { cpus, nodes }
        }

        fn cpu(&self, cpu: u32) -> Option<&Cpu> {
            self.cpus.get(cpu as usize)
        }

        fn select(&self, f: impl Fn(&Cpu) -> bool) -> BTreeSet<u32> {
            (0..self.cpus.len() as u32)
                .filter(|i| f(&self.cpus[*i as usize]))
                .collect()
        }
    }

    impl Topology for Machine {
        type Set = Set;
        fn nr_cpu_ids(&self) -> u32 {
            self.cpus.len() as u32
        }
        fn nr_node_ids(&self) -> u32 {
            self.nodes
        }
        fn possible_cpus(&self) -> u32 {
            self.cpus.len() as u32
        }
        fn online_cpus(&self) -> u32 {
            self.cpus.iter().filter(|c| c.online).count() as u32
        }
        fn online_nodes(&self) -> u32 {
            self.nodes
        }
        fn cpu_online(&self, cpu: u32) -> bool {
            self.cpu(cpu).is_some_and(|c| c.online)
        }
        fn next_online_node(&self, after: Option<u32>) -> Option<u32> {
            let n = after.map_or(0, |a| a + 1);
            (n < self.nodes).then_some(n)
        }
        fn node_cpus(&self, node: u32) -> Result<Set, CptError> {
            Ok(Set(self.select(|c| c.node == node)))
        }
        fn socket_within(&self, cpu: u32, within: &Set) -> Result<Set, CptError> {
            let me = *self.cpu(cpu).unwrap();
            let mut s: BTreeSet<u32> = self
                .select(|c| c.socket == me.socket)
                .intersection(&within.0)
                .copied()
                .collect();
            s.insert(cpu);
            Ok(Set(s))
        }
        fn core_within(&self, cpu: u32, within: &Set) -> Result<Set, CptError> {
            let me = *self.cpu(cpu).unwrap();
            let mut s: BTreeSet<u32> = self
                .select(|c| c.socket == me.socket && c.core == me.core)
                .intersection(&within.0)
                .copied()
                .collect();
            s.insert(cpu);
            Ok(Set(s))
        }
        fn threads_per_core(&self) -> u32 {
            let me = self.cpus[0];
            self.select(|c| c.socket == me.socket && c.core == me.core)
                .len() as u32
        }
    }

    #[derive(Clone, Debug, Default)]
    struct Part {
        cpus: BTreeSet<u32>,
        nodes: BTreeSet<u32>,
    }

    /// Lustre's table, over sets.
    #[derive(Debug)]
    struct Model<'a> {
        m: &'a Machine,
        parts: Vec<Part>,
        cpu2cpt: Vec<i32>,
        node2cpt: Vec<i32>,
        all: Part,
    }

    impl<'a> Model<'a> {
        fn new(m: &'a Machine, n: u32) -> Model<'a> {
            Model {
                m,
                parts: vec![Part::default(); n as usize],
                cpu2cpt: vec![-1; m.cpus.len()],
                node2cpt: vec![-1; m.nodes as usize],
                all: Part::default(),
            }
        }

        fn cpus(&self) -> Vec<Vec<u32>> {
            self.parts
                .iter()
                .map(|p| p.cpus.iter().copied().collect())
                .collect()
        }

        fn add_cpu(&mut self, cpt: u32, cpu: u32) {
            self.cpu2cpt[cpu as usize] = cpt as i32;
            self.all.cpus.insert(cpu);
            self.parts[cpt as usize].cpus.insert(cpu);
        }

        fn add_node(&mut self, cpt: u32, node: u32) {
            if self.all.nodes.insert(node) {
                self.node2cpt[node as usize] = cpt as i32;
            }
            self.parts[cpt as usize].nodes.insert(node);
        }

        fn del_node(&mut self, cpt: u32, node: u32) {
            let m = self.m;
            let p = &mut self.parts[cpt as usize];
            if !p.cpus.iter().any(|c| m.cpus[*c as usize].node == node) && p.nodes.remove(&node) {
                for (i, p2) in self.parts.iter().enumerate() {
                    if p2.nodes.contains(&node) {
                        self.node2cpt[node as usize] = i as i32;
                    }
                }
            }
            if !self
                .all
                .cpus
                .iter()
                .any(|c| m.cpus[*c as usize].node == node)
                && self.all.nodes.remove(&node)
            {
                self.node2cpt[node as usize] = -1;
            }
        }
    }

    impl Table for Model<'_> {
        fn nparts(&self) -> u32 {
            self.parts.len() as u32
        }
        fn set_cpu(&mut self, cpt: u32, cpu: u32) -> bool {
            if !self.m.cpu_online(cpu) || self.cpu2cpt[cpu as usize] != -1 {
                return false;
            }
            self.add_cpu(cpt, cpu);
            self.add_node(cpt, self.m.cpus[cpu as usize].node);
            true
        }
        fn set_node(&mut self, cpt: u32, node: u32) -> bool {
            if node >= self.m.nodes || cpt >= self.nparts() {
                return false;
            }
            for c in self.m.select(|c| c.node == node) {
                self.add_cpu(cpt, c);
            }
            self.add_node(cpt, node);
            true
        }
        fn unset_cpu(&mut self, cpt: i32, cpu: u32) {
            let Some(&of) = self.cpu2cpt.get(cpu as usize) else {
                return;
            };
            if of < 0 || (cpt != CPT_ANY && cpt != of) {
                return;
            }
            self.del_cpu(of as u32, cpu);
            self.del_node(of as u32, self.m.cpus[cpu as usize].node);
        }
        fn del_cpu(&mut self, cpt: u32, cpu: u32) {
            self.parts[cpt as usize].cpus.remove(&cpu);
            self.all.cpus.remove(&cpu);
            self.cpu2cpt[cpu as usize] = -1;
        }
        fn weight(&self, cpt: u32) -> u32 {
            self.parts[cpt as usize].cpus.len() as u32
        }
        fn online(&self, cpt: u32) -> bool {
            self.parts[cpt as usize]
                .cpus
                .iter()
                .any(|c| self.m.cpu_online(*c))
        }
        fn cpt_of_cpu(&self, cpu: u32) -> i32 {
            self.cpu2cpt.get(cpu as usize).copied().unwrap_or(-1)
        }
        fn next_cpu(&self, cpt: u32, after: Option<u32>) -> Option<u32> {
            Set(self.parts[cpt as usize].cpus.clone()).next(after)
        }
    }

    fn run<'a>(m: &'a Machine, n: i32, pattern: &str) -> Result<Model<'a>, CptError> {
        build(m, n, pattern, |k| Ok(Model::new(m, k)))
    }

    fn layout(m: &Machine, n: i32, pattern: &str) -> Result<Vec<Vec<u32>>, i32> {
        run(m, n, pattern).map(|t| t.cpus()).map_err(|e| e.errno())
    }

    #[test]
    fn npartitions() {
        // lib-cpt.h's example: 8 cores, 4 partitions, two cores each.
        let m = Machine::new(1, 8, 1);
        assert_eq!(
            layout(&m, 4, ""),
            Ok(vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]])
        );
        assert_eq!(layout(&m, 1, ""), Ok(vec![(0..8).collect()]));
        // "N" with cpu_npartitions set is the same layout.
        assert_eq!(layout(&m, 4, "N"), layout(&m, 4, ""));
        assert_eq!(layout(&m, 9, ""), Err(EINVAL));
        // Uneven: the first partitions take one more.
        let m = Machine::new(1, 5, 1);
        assert_eq!(layout(&m, 2, ""), Ok(vec![vec![0, 1, 2], vec![3, 4]]));
    }

    #[test]
    fn hyperthreads_stay_together() {
        // 2 nodes x 2 cores x 2 threads; 4 partitions: one core each.
        let m = Machine::new(2, 2, 2);
        assert_eq!(
            layout(&m, 4, ""),
            Ok(vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]])
        );
        // Interleaved thread numbering: siblings 0,2 and 1,3.
        let mut m = Machine::new(1, 2, 2);
        m.cpus[1].core = 1;
        m.cpus[2].core = 0;
        assert_eq!(layout(&m, 2, ""), Ok(vec![vec![0, 2], vec![1, 3]]));
    }

    #[test]
    fn estimate_is_lustres() {
        assert_eq!(estimate(&Machine::new(1, 1, 1)), 1);
        assert_eq!(estimate(&Machine::new(1, 4, 1)), 1);
        assert_eq!(estimate(&Machine::new(1, 8, 1)), 4);
        assert_eq!(estimate(&Machine::new(1, 6, 1)), 3);
        assert_eq!(estimate(&Machine::new(1, 8, 2)), 4);
        assert_eq!(estimate(&Machine::new(1, 6, 2)), 3);
        assert_eq!(estimate(&Machine::new(1, 7, 1)), 1);
        assert_eq!(
            layout(&Machine::new(1, 8, 1), 0, "").map(|l| l.len()),
            Ok(4)
        );
        assert!(oversized(&Machine::new(1, 1, 1), 5));
        assert!(!oversized(&Machine::new(1, 1, 1), 4));
    }

    #[test]
    fn numa_default() {
        let m = Machine::new(2, 2, 1);
        let t = run(&m, 0, "N").unwrap();
        assert_eq!(t.cpus(), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(t.node2cpt, vec![0, 1]);
        // One CPU, one node: the lab's VMs.
        assert_eq!(layout(&Machine::new(1, 1, 1), 0, "N"), Ok(vec![vec![0]]));
        assert_eq!(layout(&Machine::new(1, 1, 1), 0, ""), Ok(vec![vec![0]]));
        // "N " is a node pattern without brackets: refused, as by Lustre.
        assert_eq!(layout(&m, 0, "N "), Err(EINVAL));
    }

    #[test]
    fn cpu_patterns() {
        let m = Machine::new(1, 4, 1);
        assert_eq!(
            layout(&m, 0, "0[0,1] 1[2,3]"),
            Ok(vec![vec![0, 1], vec![2, 3]])
        );
        assert_eq!(
            layout(&m, 0, " 1[0-2/2]  0 [1,3] "),
            Ok(vec![vec![1, 3], vec![0, 2]])
        );
        assert_eq!(layout(&m, 0, "0[*]"), Ok(vec![vec![0, 1, 2, 3]]));
        assert_eq!(layout(&m, 0, "0[0x1,02]"), Ok(vec![vec![1, 2]]));
        // cpu_npartitions sizes the table a pattern fills.
        assert_eq!(layout(&m, 2, "0[0]"), Err(EINVAL));
        assert_eq!(layout(&m, 2, "0[0] 1[1]"), Ok(vec![vec![0], vec![1]]));
    }

    #[test]
    fn node_patterns() {
        let m = Machine::new(2, 2, 1);
        let t = run(&m, 0, "N 0[1] 1[0]").unwrap();
        assert_eq!(t.cpus(), vec![vec![2, 3], vec![0, 1]]);
        assert_eq!(t.node2cpt, vec![1, 0]);
        assert_eq!(t.parts[0].nodes, BTreeSet::from([1]));
        assert_eq!(layout(&m, 0, "n 0[0-1]"), Err(EINVAL));
        assert_eq!(layout(&m, 1, "N 0[0-1]"), Ok(vec![vec![0, 1, 2, 3]]));
        assert_eq!(layout(&m, 0, "N 0[0] 1[2]"), Err(ERANGE));
        assert_eq!(layout(&m, 3, "N 0[0] 1[1] 2[0]"), Err(EINVAL));
    }

    #[test]
    fn exclusions() {
        let m = Machine::new(1, 4, 1);
        assert_eq!(layout(&m, 2, "X[1]"), Ok(vec![vec![0], vec![2, 3]]));
        assert_eq!(layout(&m, 2, "x [1,3]"), Ok(vec![vec![0], vec![2]]));
        assert_eq!(layout(&m, 2, "X[0-1]"), Err(ENODEV));
        // Without cpu_npartitions, X and C count their brackets.
        assert_eq!(layout(&m, 0, "X[1]"), Ok(vec![vec![0, 2, 3]]));
        assert_eq!(layout(&m, 2, "C[0]"), Ok(vec![vec![1], vec![3]]));
        // Lustre's bound for C without N is 0: C[0-1] is out of range.
        assert_eq!(layout(&m, 2, "C[0-1]"), Err(ERANGE));
        let m = Machine::new(2, 3, 1);
        let t = run(&m, 0, "N C[0-1]").unwrap();
        assert_eq!(t.cpus(), vec![vec![2], vec![5]]);
        // Relative exclusion keeps the nodes in the masks.
        assert_eq!(t.parts[0].nodes, BTreeSet::from([0]));
        let t = run(&m, 0, "N X[0,1,2]").unwrap_err();
        assert_eq!(t, CptError::AllExcluded(0));
        let t = run(&m, 0, "N X[0,1]").unwrap();
        assert_eq!(t.cpus(), vec![vec![2], vec![3, 4, 5]]);
        assert_eq!(layout(&m, 0, "N C[0-3]"), Err(ENODEV));
        assert_eq!(layout(&m, 0, "N C[0-4]"), Err(ERANGE));
    }

    #[test]
    fn bad_patterns() {
        let m = Machine::new(1, 4, 1);
        for (p, errno) in [
            ("0[0] 0[1]", EPERM),
            ("0[0", EINVAL),
            ("0 x[0]", EINVAL),
            ("a[0]", EINVAL),
            ("+0[0]", EINVAL),
            ("-1[0]", EINVAL),
            ("5[0]", EINVAL),
            ("99999999999[0]", EINVAL),
            ("foo", EINVAL),
            ("0[0] junk", EINVAL),
            ("0[]", ERANGE),
            ("0[0,]", ERANGE),
            ("0[3-1]", ERANGE),
            ("0[0-3/0]", ERANGE),
            ("0[4]", ERANGE),
            ("0[-1]", ERANGE),
            ("0[0] 1[0]", EINVAL),
            ("0[0][1]", EINVAL),
        ] {
            assert_eq!(layout(&m, 0, p), Err(errno), "{p:?}");
        }
        // An offline CPU is refused.
        let mut m = Machine::new(1, 2, 1);
        m.cpus[1].online = false;
        assert_eq!(layout(&m, 0, "0[0] 1[1]"), Err(EINVAL));
    }

    #[test]
    fn printing() {
        let m = Machine::new(1, 4, 1);
        let t = run(&m, 2, "").unwrap();
        let mut buf = [0u8; 64];
        let n = print_table(2, |c, a| t.next_cpu(c, a), &mut buf);
        assert_eq!(&buf[..n as usize], b"0\t: 0 1\n1\t: 2 3\n");
        // Exactly enough room: the last newline may take the last byte.
        let mut buf = [0u8; 16];
        assert_eq!(print_table(2, |c, a| t.next_cpu(c, a), &mut buf), 16);
        let mut buf = [0u8; 15];
        assert_eq!(print_table(2, |c, a| t.next_cpu(c, a), &mut buf), -E2BIG);
        let mut buf = [0u8; 64];
        let n = print_distance(2, |a, b| if a == b { 10 } else { 20 }, &mut buf);
        assert_eq!(&buf[..n as usize], b"0\t: 0:10 1:20\n1\t: 0:20 1:10\n");
        assert_eq!(print_distance(1, |_, _| u32::MAX, &mut buf), 9);
        assert_eq!(&buf[..9], b"0\t: 0:-1\n");
    }

    fn machine() -> impl Strategy<Value = Machine> {
        (1u32..4, 1u32..5, 1u32..3, any::<u64>()).prop_map(|(nodes, cores, threads, off)| {
            let mut m = Machine::new(nodes, cores, threads);
            // Some CPUs offline, never all of them.
            let n = m.cpus.len();
            for (i, c) in m.cpus.iter_mut().enumerate().skip(1) {
                c.online = off >> (i % 64) & 1 == 0 || i == n;
            }
            m
        })
    }

    /// Every online CPU in exactly one partition, the weights adding up to
    /// the online CPUs, no partition empty.
    fn check_cover(m: &Machine, t: &Model<'_>) -> Result<(), TestCaseError> {
        let mut seen = BTreeSet::new();
        let mut sum = 0;
        for (i, p) in t.parts.iter().enumerate() {
            prop_assert!(!p.cpus.is_empty(), "partition {} empty", i);
            sum += t.weight(i as u32);
            for c in &p.cpus {
                prop_assert!(seen.insert(*c), "cpu {} twice", c);
                prop_assert_eq!(t.cpt_of_cpu(*c), i as i32);
                prop_assert!(p.nodes.contains(&m.cpus[*c as usize].node));
            }
        }
        prop_assert_eq!(sum, m.online_cpus());
        prop_assert_eq!(seen.len() as u32, m.online_cpus());
        Ok(())
    }

    proptest! {
        #[test]
        fn npartitions_cover(m in machine(), n in 0i32..20) {
            match run(&m, n, "") {
                Ok(t) => {
                    check_cover(&m, &t)?;
                    let k = t.nparts();
                    let online = m.online_cpus();
                    // Shares differ by at most one CPU.
                    for p in 0..k {
                        let w = t.weight(p);
                        prop_assert!(w == online / k || w == online / k + 1);
                    }
                    if n > 0 {
                        prop_assert_eq!(k, n as u32);
                    } else {
                        prop_assert_eq!(k, estimate(&m));
                    }
                }
                Err(e) => prop_assert!(n as u32 > m.online_cpus(), "{:?}", e),
            }
        }

        #[test]
        fn numa_cover(m in machine()) {
            let t = run(&m, 0, "N").unwrap();
            prop_assert_eq!(t.nparts(), m.nodes);
            for (i, p) in t.parts.iter().enumerate() {
                prop_assert_eq!(&p.nodes, &BTreeSet::from([i as u32]));
                prop_assert_eq!(t.node2cpt[i], i as i32);
            }
            // Offline CPUs are in their node's partition too (as
            // cfs_cpt_set_node puts them); the online ones once each.
            let online: u32 = t.parts.iter().map(|p| p.cpus.iter().filter(|c| m.cpu_online(**c)).count() as u32).sum();
            prop_assert_eq!(online, m.online_cpus());
        }

        #[test]
        fn explicit_pattern_is_followed(m in machine(), seed in any::<u64>(), k in 1u32..5) {
            // Deal the online CPUs round robin over up to k partitions.
            let online: Vec<u32> = (0..m.cpus.len() as u32).filter(|c| m.cpu_online(*c)).collect();
            let k = k.min(online.len() as u32);
            let mut want = vec![Vec::new(); k as usize];
            for (i, c) in online.iter().enumerate() {
                want[(i + seed as usize) % k as usize].push(*c);
            }
            let mut pattern = std::string::String::new();
            for (i, cpus) in want.iter().enumerate().rev() {
                let list: Vec<std::string::String> = cpus.iter().map(|c| std::format!("{c}")).collect();
                pattern += &std::format!("{i}[{}] ", list.join(","));
            }
            let t = run(&m, 0, &pattern).unwrap();
            prop_assert_eq!(t.cpus(), want);
            check_cover(&m, &t)?;
        }

        #[test]
        fn any_pattern_is_safe(m in machine(), n in -2i32..6, p in "[ NnXxCc0-9\\[\\],*/-]{0,24}") {
            if let Ok(t) = run(&m, n, &p) {
                for (i, part) in t.parts.iter().enumerate() {
                    for c in &part.cpus {
                        prop_assert!((*c as usize) < m.cpus.len());
                        if m.cpu_online(*c) && !p.trim_start().starts_with(['N', 'n']) {
                            prop_assert_eq!(t.cpt_of_cpu(*c), i as i32);
                        }
                    }
                }
            }
        }
    }
}
