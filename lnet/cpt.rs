// SPDX-License-Identifier: GPL-2.0

//! CPU partitions (Lustre's lib-cpt.c, include/linux/lnet/lib-cpt.h): the
//! partition table `cfs_cpt_tab` built at load from `cpu_npartitions` and
//! `cpu_pattern` (layout decided by lnet-core's `cpt.rs`), and the
//! `cfs_cpt_*`/`cfs_percpt_*` calls Lustre's modules make on it.
//!
//! `struct cfs_cpt_table` is opaque to callers: it is a [`CptTable`]. What
//! they dereference is Lustre's: the `cpumask_var_t *` of
//! `cfs_cpt_cpumask`, the `nodemask_t *` of `cfs_cpt_nodemask`, and the
//! pointer array of `cfs_percpt_alloc`.
//!
//! As in Lustre, a table is changed (`cfs_cpt_set_*`, `cfs_cpt_unset_*`)
//! only by whoever built it, before sharing it (the MDT and OST build their
//! I/O tables so at setup); readers never lock. Where Lustre asserts on a
//! partition number out of range, these calls answer for the whole table
//! (`CFS_CPT_ANY`) or do nothing, rather than crash.

use crate::kapi::cpumask::{
    self as mask, CptTableType, CpuMask, NodeMask, PerCptArg, PerCptArray, PublishedCptTable,
};
use crate::kapi::ffi;
use crate::lnet_core::cpt::{self as rules, CptError, CPT_ANY};
use core::ffi::{c_char, c_int, c_uint, c_void};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;

/// One partition (`struct cfs_cpu_partition`).
struct Part {
    cpus: CpuMask,
    nodes: NodeMask,
    /// Largest node distance to each partition; `u32::MAX` until known.
    distance: KVec<u32>,
    /// Rotor of `cfs_cpt_spread_node`; Lustre's starts at all ones.
    rotor: AtomicU32,
}

/// A partition table (`struct cfs_cpt_table`).
pub(crate) struct CptTable {
    parts: KVec<Part>,
    /// Largest node distance within the table.
    distance: u32,
    rotor: AtomicU32,
    /// Partition of each CPU id, -1 for none.
    cpu2cpt: KVec<i32>,
    /// Partition of each node id (the first it was put in), -1 for none.
    node2cpt: KVec<i32>,
    cpus: CpuMask,
    nodes: NodeMask,
}

fn filled<T: Copy>(v: T, n: u32) -> Result<KVec<T>> {
    KVec::from_elem(v, n as usize, GFP_KERNEL).map_err(|_| ENOMEM)
}

impl CptTable {
    /// An empty table of `ncpt` partitions (`cfs_cpt_table_alloc`).
    fn new(ncpt: u32) -> Result<KBox<Self>> {
        let mut parts = KVec::with_capacity(ncpt as usize, GFP_KERNEL)?;
        for _ in 0..ncpt {
            parts.push(
                Part {
                    cpus: CpuMask::new()?,
                    nodes: NodeMask::new()?,
                    distance: filled(u32::MAX, ncpt)?,
                    rotor: AtomicU32::new(u32::MAX),
                },
                GFP_KERNEL,
            )?;
        }
        Ok(KBox::new(
            CptTable {
                parts,
                distance: 0,
                rotor: AtomicU32::new(0),
                cpu2cpt: filled(-1, mask::nr_cpu_ids())?,
                node2cpt: filled(-1, mask::nr_node_ids())?,
                cpus: CpuMask::new()?,
                nodes: NodeMask::new()?,
            },
            GFP_KERNEL,
        )?)
    }

    fn nparts(&self) -> u32 {
        u32::try_from(self.parts.len()).unwrap_or(0)
    }

    fn part(&self, cpt: c_int) -> Option<&Part> {
        self.parts.get(usize::try_from(cpt).ok()?)
    }

    /// The masks of `cpt`, or of the whole table for `CFS_CPT_ANY` and
    /// any other number out of range.
    fn masks(&self, cpt: c_int) -> (&CpuMask, &NodeMask) {
        match self.part(cpt) {
            Some(p) => (&p.cpus, &p.nodes),
            None => (&self.cpus, &self.nodes),
        }
    }

    fn cpt_of_cpu(&self, cpu: u32) -> i32 {
        self.cpu2cpt.get(cpu as usize).copied().unwrap_or(-1)
    }

    fn add_cpu(&mut self, cpt: u32, cpu: u32) {
        let (Some(p), Some(slot)) = (
            self.parts.get_mut(cpt as usize),
            self.cpu2cpt.get_mut(cpu as usize),
        ) else {
            return;
        };
        *slot = cpt as i32;
        p.cpus.set(cpu);
        self.cpus.set(cpu);
    }

    fn del_cpu(&mut self, cpt: u32, cpu: u32) {
        if let Some(p) = self.parts.get_mut(cpt as usize) {
            p.cpus.clear(cpu);
        }
        self.cpus.clear(cpu);
        if let Some(slot) = self.cpu2cpt.get_mut(cpu as usize) {
            *slot = -1;
        }
    }

    /// Largest distance from a node of `a` to a node of `b` (0 if either
    /// is empty).
    fn span(a: &NodeMask, b: &NodeMask) -> u32 {
        let mut max = 0;
        let mut i = a.next(None);
        while let Some(x) = i {
            let mut j = b.next(None);
            while let Some(y) = j {
                max = max.max(mask::node_distance(x, y));
                j = b.next(Some(y));
            }
            i = a.next(Some(x));
        }
        max
    }

    /// Recomputes the distances between partition `cpt` and every other.
    fn update_distances(&mut self, cpt: usize) {
        for other in 0..self.parts.len() {
            let (Some(p), Some(q)) = (self.parts.get(cpt), self.parts.get(other)) else {
                continue;
            };
            let there = Self::span(&p.nodes, &q.nodes);
            let back = Self::span(&q.nodes, &p.nodes);
            if let Some(d) = self
                .parts
                .get_mut(cpt)
                .and_then(|p| p.distance.get_mut(other))
            {
                *d = there;
            }
            if let Some(d) = self
                .parts
                .get_mut(other)
                .and_then(|q| q.distance.get_mut(cpt))
            {
                *d = back;
            }
        }
    }

    fn add_node(&mut self, cpt: u32, node: u32) {
        if node >= mask::nr_node_ids() || cpt >= self.nparts() {
            return;
        }
        if !self.nodes.test(node) {
            self.nodes.set(node);
            if let Some(slot) = self.node2cpt.get_mut(node as usize) {
                *slot = cpt as i32;
            }
            self.distance = Self::span(&self.nodes, &self.nodes);
        }
        let Some(p) = self.parts.get_mut(cpt as usize) else {
            return;
        };
        if !p.nodes.test(node) {
            p.nodes.set(node);
            self.update_distances(cpt as usize);
        }
    }

    fn has_cpu_of_node(m: &CpuMask, node: u32) -> bool {
        let mut c = m.next(None);
        while let Some(cpu) = c {
            if i64::from(mask::cpu_to_node(cpu)) == i64::from(node) {
                return true;
            }
            c = m.next(Some(cpu));
        }
        false
    }

    /// Takes `node` out of partition `cpt`, and out of the table, where no
    /// CPU of it is left.
    fn del_node(&mut self, cpt: u32, node: u32) {
        let Some(p) = self.parts.get_mut(cpt as usize) else {
            return;
        };
        if !Self::has_cpu_of_node(&p.cpus, node) && p.nodes.test(node) {
            p.nodes.clear(node);
            for (i, q) in self.parts.iter().enumerate() {
                if q.nodes.test(node) {
                    if let Some(slot) = self.node2cpt.get_mut(node as usize) {
                        *slot = i as i32;
                    }
                }
            }
            self.update_distances(cpt as usize);
        }
        if !Self::has_cpu_of_node(&self.cpus, node) && self.nodes.test(node) {
            self.nodes.clear(node);
            if let Some(slot) = self.node2cpt.get_mut(node as usize) {
                *slot = -1;
            }
            self.distance = Self::span(&self.nodes, &self.nodes);
        }
    }
}

impl rules::CpuSet for CpuMask {
    fn next(&self, after: Option<u32>) -> Option<u32> {
        CpuMask::next(self, after)
    }
    fn clear(&mut self, cpu: u32) {
        CpuMask::clear(self, cpu)
    }
    fn test(&self, cpu: u32) -> bool {
        CpuMask::test(self, cpu)
    }
    fn weight(&self) -> u32 {
        CpuMask::weight(self)
    }
}

/// This machine, as the kernel sees it.
struct Machine;

impl rules::Topology for Machine {
    type Set = CpuMask;
    fn nr_cpu_ids(&self) -> u32 {
        mask::nr_cpu_ids()
    }
    fn nr_node_ids(&self) -> u32 {
        mask::nr_node_ids()
    }
    fn possible_cpus(&self) -> u32 {
        mask::possible_cpus()
    }
    fn online_cpus(&self) -> u32 {
        mask::online_cpus()
    }
    fn online_nodes(&self) -> u32 {
        mask::online_nodes()
    }
    fn cpu_online(&self, cpu: u32) -> bool {
        mask::cpu_online(cpu)
    }
    fn next_online_node(&self, after: Option<u32>) -> Option<u32> {
        mask::next_online_node(after)
    }
    fn node_cpus(&self, node: u32) -> Result<CpuMask, CptError> {
        CpuMask::of_node(node).map_err(|_| CptError::NoMemory)
    }
    fn socket_within(&self, cpu: u32, within: &CpuMask) -> Result<CpuMask, CptError> {
        CpuMask::socket_within(cpu, within).map_err(|_| CptError::NoMemory)
    }
    fn core_within(&self, cpu: u32, within: &CpuMask) -> Result<CpuMask, CptError> {
        CpuMask::core_within(cpu, within).map_err(|_| CptError::NoMemory)
    }
    fn threads_per_core(&self) -> u32 {
        mask::threads_per_core()
    }
}

impl rules::Table for KBox<CptTable> {
    fn nparts(&self) -> u32 {
        CptTable::nparts(self)
    }
    fn set_cpu(&mut self, cpt: u32, cpu: u32) -> bool {
        set_cpu(self, cpt, cpu)
    }
    fn set_node(&mut self, cpt: u32, node: u32) -> bool {
        set_node(self, cpt, node)
    }
    fn unset_cpu(&mut self, cpt: i32, cpu: u32) {
        unset_cpu(self, cpt, cpu)
    }
    fn del_cpu(&mut self, cpt: u32, cpu: u32) {
        CptTable::del_cpu(self, cpt, cpu)
    }
    fn weight(&self, cpt: u32) -> u32 {
        self.part(cpt as c_int).map_or(0, |p| p.cpus.weight())
    }
    fn online(&self, cpt: u32) -> bool {
        self.part(cpt as c_int).is_some_and(|p| p.cpus.any_online())
    }
    fn cpt_of_cpu(&self, cpu: u32) -> i32 {
        CptTable::cpt_of_cpu(self, cpu)
    }
    fn next_cpu(&self, cpt: u32, after: Option<u32>) -> Option<u32> {
        self.part(cpt as c_int)?.cpus.next(after)
    }
}

/// `cfs_cpt_set_cpu`.
fn set_cpu(t: &mut CptTable, cpt: u32, cpu: u32) -> bool {
    if cpt >= t.nparts() || !mask::cpu_online(cpu) || t.cpt_of_cpu(cpu) != -1 || t.cpus.test(cpu) {
        return false;
    }
    t.add_cpu(cpt, cpu);
    t.add_node(cpt, mask::cpu_to_node(cpu) as u32);
    true
}

/// `cfs_cpt_set_node`: every CPU of the node, online or not, as Lustre.
fn set_node(t: &mut CptTable, cpt: u32, node: u32) -> bool {
    if node >= mask::nr_node_ids() || cpt >= t.nparts() {
        return false;
    }
    if let Ok(cpus) = CpuMask::of_node(node) {
        let mut c = cpus.next(None);
        while let Some(cpu) = c {
            t.add_cpu(cpt, cpu);
            c = cpus.next(Some(cpu));
        }
    } else {
        return false;
    }
    t.add_node(cpt, node);
    true
}

/// `cfs_cpt_unset_cpu`.
fn unset_cpu(t: &mut CptTable, cpt: i32, cpu: u32) {
    let of = t.cpt_of_cpu(cpu);
    if of < 0 || (cpt != CPT_ANY && cpt != of) {
        return;
    }
    t.del_cpu(of as u32, cpu);
    t.del_node(of as u32, mask::cpu_to_node(cpu) as u32);
}

// SAFETY: lnet.ko's `cfs_cpt_*` functions, which C callers pass
// `cfs_cpt_tab` to, take their table as `Option<&CptTable>`.
unsafe impl CptTableType for CptTable {}

/// Partitions of the global table, 1 before it exists (`cfs_cpt_number`
/// of `cfs_cpt_tab`).
static NUMBER: AtomicU32 = AtomicU32::new(1);

/// Partitions of the global table (1 before it exists).
pub(crate) fn number() -> u32 {
    NUMBER.load(Relaxed)
}

/// Owns `cfs_cpt_tab` for the module's life: dropping it frees the table.
pub(crate) struct Global {
    _table: PublishedCptTable<CptTable>,
}

impl Drop for Global {
    fn drop(&mut self) {
        // The table itself goes with the field, once unpublished.
        NUMBER.store(1, Relaxed);
    }
}

/// Builds `cfs_cpt_tab` from `cpu_npartitions` and `cpu_pattern`.
///
/// lnet.ko carries these two parameters itself, with Lustre's names,
/// types, defaults (0 and "N") and meaning, but does not export them: in
/// Lustre they are libcfs.ko's exported variables, and Lustre's libcfs.ko
/// is loaded next to lnet.ko, so exporting them again would stop one of
/// the two modules from loading (lnet_params.c says why it cannot read
/// libcfs.ko's either).
pub(crate) fn init() -> Result<Global> {
    let n = mask::cpu_npartitions();
    let Ok(pattern) = mask::cpu_pattern().to_str() else {
        pr_err!("cpu_pattern is not text\n");
        return Err(EINVAL);
    };
    let built = {
        let _hotplug = mask::CpusReadGuard::lock();
        rules::build(&Machine, n, pattern, |k| {
            CptTable::new(k).map_err(|_| CptError::NoMemory)
        })
    };
    let table = match built {
        Ok(t) => t,
        Err(e) => {
            pr_err!(
                "can't build the CPU partition table (cpu_npartitions={} cpu_pattern=\"{}\"): {}: rc = -{}\n",
                n,
                pattern,
                e,
                e.errno()
            );
            return Err(Error::from_errno(-e.errno()));
        }
    };
    if rules::oversized(&Machine, table.nparts()) {
        pr_warn!(
            "CPU partition number {} is larger than suggested value ({}), your system may have performance issue or run out of memory while under pressure\n",
            table.nparts(),
            rules::estimate(&Machine)
        );
    }
    pr_info!(
        "HW NUMA nodes: {}, HW CPU cores: {}, npartitions: {}\n",
        mask::online_nodes(),
        mask::online_cpus(),
        table.nparts()
    );
    let nparts = table.nparts();
    let global = Global {
        _table: PublishedCptTable::new(table, nparts),
    };
    NUMBER.store(nparts, Relaxed);
    Ok(global)
}

/// `cfs_cpt_table_alloc`: an empty table of `ncpt` partitions, or null.
#[no_mangle]
extern "C" fn cfs_cpt_table_alloc(ncpt: c_int) -> Option<KBox<CptTable>> {
    let n = u32::try_from(ncpt).ok()?;
    // Targets build their tables while mounting: no reclaim may re-enter
    // the file system (Lustre allocates with GFP_NOFS).
    let _nofs = crate::kapi::clist::NoFs::enter();
    CptTable::new(n).ok()
}

/// `cfs_cpt_table_free`: C gives back null or a table from
/// `cfs_cpt_table_alloc`, and uses it no more.
#[no_mangle]
extern "C" fn cfs_cpt_table_free(t: Option<KBox<CptTable>>) {
    drop(t);
}

/// `cfs_cpt_table_print`: each partition and its CPUs; the length, or
/// -E2BIG.
///
/// C passes `t` null or a live table of ours.
///
/// # Safety
///
/// `buf` is null or has `len` writable bytes.
#[no_mangle]
unsafe extern "C" fn cfs_cpt_table_print(
    t: Option<&CptTable>,
    buf: *mut c_char,
    len: c_int,
) -> c_int {
    // SAFETY: `buf` is null or has `len` writable bytes, used by nothing
    // else during this call (# Safety), as ffi::out_buf needs.
    let b = unsafe { ffi::out_buf(buf.cast(), len) }.unwrap_or_default();
    let Some(t) = t else {
        return -rules::E2BIG;
    };
    rules::print_table(t.nparts(), |c, a| t.part(c as c_int)?.cpus.next(a), b)
}

/// `cfs_cpt_distance_print`: each partition's distance to every other.
///
/// C passes `t` null or a live table of ours.
///
/// # Safety
///
/// `buf` is null or has `len` writable bytes.
#[no_mangle]
unsafe extern "C" fn cfs_cpt_distance_print(
    t: Option<&CptTable>,
    buf: *mut c_char,
    len: c_int,
) -> c_int {
    // SAFETY: `buf` is null or has `len` writable bytes, used by nothing
    // else during this call (# Safety), as ffi::out_buf needs.
    let b = unsafe { ffi::out_buf(buf.cast(), len) }.unwrap_or_default();
    let Some(t) = t else {
        return -rules::E2BIG;
    };
    let d = |i: u32, j: u32| {
        t.part(i as c_int)
            .and_then(|p| p.distance.get(j as usize).copied())
            .unwrap_or(u32::MAX)
    };
    rules::print_distance(t.nparts(), d, b)
}

/// `cfs_cpt_number`.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_number(t: Option<&CptTable>) -> c_int {
    t.map_or(1, |t| t.nparts() as c_int)
}

/// `cfs_cpt_weight`: CPUs in `cpt` (`CFS_CPT_ANY`: in the table).
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_weight(t: Option<&CptTable>, cpt: c_int) -> c_int {
    t.map_or(0, |t| t.masks(cpt).0.weight() as c_int)
}

/// `cfs_cpt_online`: whether `cpt` has an online CPU.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_online(t: Option<&CptTable>, cpt: c_int) -> c_int {
    t.map_or(0, |t| c_int::from(t.masks(cpt).0.any_online()))
}

/// `cfs_cpt_cpumask`: the `cpumask_var_t *` of `cpt`.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_cpumask(t: Option<&CptTable>, cpt: c_int) -> *mut c_void {
    t.map_or(core::ptr::null_mut(), |t| t.masks(cpt).0.as_ptr())
}

/// `cfs_cpt_nodemask`: the `nodemask_t *` of `cpt`.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_nodemask(t: Option<&CptTable>, cpt: c_int) -> *mut c_void {
    t.map_or(core::ptr::null_mut(), |t| t.masks(cpt).1.as_ptr())
}

/// `cfs_cpt_distance`: the largest node distance between two partitions
/// (`CFS_CPT_ANY` on either side: within the table).
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_distance(t: Option<&CptTable>, a: c_int, b: c_int) -> c_uint {
    let Some(t) = t else {
        return 0;
    };
    match (
        t.part(a),
        usize::try_from(b).ok().filter(|b| *b < t.parts.len()),
    ) {
        (Some(p), Some(b)) => p.distance.get(b).copied().unwrap_or(t.distance),
        _ => t.distance,
    }
}

/// `cfs_cpt_current`: the partition of the running CPU; one outside the
/// table is mapped to `cpu % partitions` with `remap`, else -1.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_current(t: Option<&CptTable>, remap: c_int) -> c_int {
    let Some(t) = t else {
        return 0;
    };
    let cpu = mask::current_cpu();
    let cpt = t.cpt_of_cpu(cpu);
    if cpt < 0 && remap != 0 && t.nparts() > 0 {
        return (cpu % t.nparts()) as c_int;
    }
    cpt
}

/// `cfs_cpt_of_cpu`: the partition of `cpu`, or -1.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_of_cpu(t: Option<&CptTable>, cpu: c_int) -> c_int {
    let Some(t) = t else {
        return CPT_ANY;
    };
    u32::try_from(cpu).map_or(CPT_ANY, |c| t.cpt_of_cpu(c))
}

/// `cfs_cpt_of_node`: the partition of `node`, or `CFS_CPT_ANY`.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_of_node(t: Option<&CptTable>, node: c_int) -> c_int {
    let Some(t) = t else {
        return CPT_ANY;
    };
    usize::try_from(node)
        .ok()
        .and_then(|n| t.node2cpt.get(n).copied())
        .unwrap_or(CPT_ANY)
}

/// `cfs_cpt_bind`: runs the calling thread on `cpt`'s CPUs (and memory
/// nodes); -ENODEV if none of them is online, 0 without a change when
/// they cover every online CPU.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_bind(t: Option<&CptTable>, cpt: c_int) -> c_int {
    let Some(t) = t else {
        return ENODEV.to_errno();
    };
    let (cpus, nodes) = t.masks(cpt);
    if !cpus.any_online() {
        crate::cdebug!(crate::lnet_core::debug::D_INFO, "no online CPU in CPU partition {}: was a CPU unplugged? Reload the Lustre modules to use the ones left\n", cpt);
        return ENODEV.to_errno();
    }
    if cpus.has_all_online() {
        return 0;
    }
    mask::bind_current(cpus, nodes)
}

/// `cfs_cpt_set_cpu`: 1 if `cpu` was put in `cpt`, 0 if it is offline,
/// absent or already in a partition.
///
/// C passes null or a table it alone is building (only its builder
/// changes a table, as in Lustre).
#[no_mangle]
extern "C" fn cfs_cpt_set_cpu(t: Option<&mut CptTable>, cpt: c_int, cpu: c_int) -> c_int {
    let Some(t) = t else {
        return 0;
    };
    match (u32::try_from(cpt), u32::try_from(cpu)) {
        (Ok(cpt), Ok(cpu)) => c_int::from(set_cpu(t, cpt, cpu)),
        _ => 0,
    }
}

/// `cfs_cpt_unset_cpu`: takes `cpu` out of `cpt` (`CFS_CPT_ANY`: of its
/// partition).
///
/// C passes null or a table it alone is building (only its builder
/// changes a table, as in Lustre).
#[no_mangle]
extern "C" fn cfs_cpt_unset_cpu(t: Option<&mut CptTable>, cpt: c_int, cpu: c_int) {
    if let (Some(t), Ok(cpu)) = (t, u32::try_from(cpu)) {
        unset_cpu(t, cpt, cpu);
    }
}

/// `cfs_cpt_set_node`: puts node `node` and its CPUs in `cpt`; 1, or 0
/// for a node or partition that does not exist.
///
/// C passes null or a table it alone is building (only its builder
/// changes a table, as in Lustre).
#[no_mangle]
extern "C" fn cfs_cpt_set_node(t: Option<&mut CptTable>, cpt: c_int, node: c_int) -> c_int {
    let Some(t) = t else {
        return 0;
    };
    match (u32::try_from(cpt), u32::try_from(node)) {
        (Ok(cpt), Ok(node)) => c_int::from(set_node(t, cpt, node)),
        _ => 0,
    }
}

/// `cfs_cpt_unset_node`: takes node `node`'s CPUs out of `cpt`.
///
/// C passes null or a table it alone is building (only its builder
/// changes a table, as in Lustre).
#[no_mangle]
extern "C" fn cfs_cpt_unset_node(t: Option<&mut CptTable>, cpt: c_int, node: c_int) {
    let (Some(t), Ok(cpt), Ok(node)) = (t, u32::try_from(cpt), u32::try_from(node)) else {
        return;
    };
    if node >= mask::nr_node_ids() || cpt >= t.nparts() {
        return;
    }
    if let Ok(cpus) = CpuMask::of_node(node) {
        let mut c = cpus.next(None);
        while let Some(cpu) = c {
            t.del_cpu(cpt, cpu);
            c = cpus.next(Some(cpu));
        }
    }
    t.del_node(cpt, node);
}

/// `cfs_cpt_spread_node`: a node of `cpt` (any other number: of the
/// table), each call the next one, for spreading allocations; a
/// partition without nodes gives `NUMA_NO_NODE` (-1), the table 0.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_cpt_spread_node(t: Option<&CptTable>, cpt: c_int) -> c_int {
    let Some(t) = t else {
        return 0;
    };
    spread_node(t, cpt)
}

fn spread_node(t: &CptTable, cpt: c_int) -> c_int {
    let (nodes, rotor, none) = match t.part(cpt) {
        Some(p) => (&p.nodes, p.rotor.fetch_add(1, Relaxed), -1),
        None => (&t.nodes, t.rotor.fetch_add(1, Relaxed), 0),
    };
    let weight = nodes.weight();
    if weight == 0 {
        return none;
    }
    let mut k = rotor % weight;
    let mut n = nodes.next(None);
    while let Some(node) = n {
        if k == 0 {
            return node as c_int;
        }
        k -= 1;
        n = nodes.next(Some(node));
    }
    none
}

/// `cfs_percpt_alloc`: an array of one zeroed, cache-aligned block of
/// `size` bytes per partition, each on its partition's node; callers index
/// it by partition and free it with `cfs_percpt_free`.
///
/// C passes null or a live table of ours.
#[no_mangle]
extern "C" fn cfs_percpt_alloc(t: Option<&CptTable>, size: c_uint) -> Option<PerCptArray> {
    let t = t?;
    let size = mask::l1_cache_align(size as usize).and_then(|s| c_uint::try_from(s).ok())?;
    let cptab = core::ptr::from_ref(t).cast::<c_void>();
    PerCptArray::new(t.nparts(), size, cptab, |i| spread_node(t, i as c_int))
}

/// `cfs_percpt_free`: C gives back null or an array from
/// `cfs_percpt_alloc`, and uses it no more.
#[no_mangle]
extern "C" fn cfs_percpt_free(vars: Option<PerCptArray>) {
    drop(vars);
}

/// `cfs_percpt_number`: the blocks of a `cfs_percpt_alloc` array.
///
/// C passes null or a live array from `cfs_percpt_alloc`.
#[no_mangle]
extern "C" fn cfs_percpt_number(vars: Option<PerCptArg<'_>>) -> c_int {
    vars.map_or(0, |v| v.count() as c_int)
}
