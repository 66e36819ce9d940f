// SPDX-License-Identifier: GPL-2.0

//! CPU and node masks and the CPU topology (cpumask_helpers.c), for lnet.ko's
//! CPU partition table: the table's parameters, its publication as
//! `cfs_cpt_tab`, the per-partition arrays of `cfs_percpt_alloc`, and the
//! NUMA nodes of devices and pages that local NI selection compares.
//!
//! Only lnet.ko builds this file (its Kbuild sets `kapi_cpumask`): besides
//! the kernel's, it calls lnet.ko's own C (lnet_params.c, lnet_exports.c).

use super::bindings;
use super::kiov::{self, BioVec};
use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::error::{code::ENOMEM, Result};
use kernel::prelude::KBox;

extern "C" {
    fn kapi_cpumask_new() -> *mut c_void;
    fn kapi_cpumask_free(m: *mut c_void);
    fn kapi_cpumask_set(m: *mut c_void, cpu: c_uint);
    fn kapi_cpumask_clear(m: *mut c_void, cpu: c_uint);
    fn kapi_cpumask_test(m: *mut c_void, cpu: c_uint) -> bool;
    fn kapi_cpumask_weight(m: *mut c_void) -> c_uint;
    fn kapi_cpumask_next(m: *mut c_void, after: c_int) -> c_uint;
    fn kapi_cpumask_any_online(m: *mut c_void) -> bool;
    fn kapi_cpumask_has_all_online(m: *mut c_void) -> bool;
    fn kapi_cpumask_copy_node(m: *mut c_void, node: c_int);
    fn kapi_cpumask_socket_within(dst: *mut c_void, cpu: c_uint, within: *mut c_void);
    fn kapi_cpumask_core_within(dst: *mut c_void, cpu: c_uint, within: *mut c_void);
    fn kapi_nodemask_new() -> *mut c_void;
    fn kapi_nodemask_set(m: *mut c_void, node: c_uint);
    fn kapi_nodemask_clear(m: *mut c_void, node: c_uint);
    fn kapi_nodemask_test(m: *const c_void, node: c_uint) -> bool;
    fn kapi_nodemask_weight(m: *const c_void) -> c_uint;
    fn kapi_nodemask_next(m: *const c_void, after: c_int) -> c_int;
    fn kapi_nr_cpu_ids() -> c_uint;
    fn kapi_nr_node_ids() -> c_uint;
    fn kapi_possible_cpus() -> c_uint;
    fn kapi_online_cpus() -> c_uint;
    fn kapi_online_nodes() -> c_uint;
    fn kapi_cpu_online(cpu: c_uint) -> bool;
    fn kapi_cpu_to_node(cpu: c_uint) -> c_int;
    fn kapi_next_online_node(after: c_int) -> c_int;
    fn kapi_node_distance(a: c_uint, b: c_uint) -> c_int;
    fn kapi_threads_per_core() -> c_uint;
    fn kapi_current_cpu() -> c_uint;
    fn kapi_bind_current(cpus: *mut c_void, nodes: *mut c_void) -> c_int;
    fn kapi_cpus_read_lock();
    fn kapi_cpus_read_unlock();
    fn kapi_kzalloc_node(size: usize, node: c_int) -> *mut c_void;
    fn kapi_kfree(p: *const c_void);
    fn kapi_l1_cache_align(size: usize) -> usize;
    fn kapi_cpt_publish(table: *mut c_void, number: c_uint);
    fn kapi_netdev_node(name: *const c_char) -> c_int;
    fn kapi_page_node(page: *mut c_void) -> c_int;
    fn kapi_online_node_distance(a: c_int, b: c_int) -> c_int;
    fn kapi_max_node_distance() -> c_int;
    // lnet_params.c: the values of two 0444 parameters.
    fn lnet_param_cpu_npartitions() -> c_int;
    fn lnet_param_cpu_pattern() -> *const c_char;
}

/// `nr_cpu_ids`.
pub fn nr_cpu_ids() -> u32 {
    // SAFETY: reads a variable fixed at boot.
    unsafe { kapi_nr_cpu_ids() }
}

/// `nr_node_ids`.
pub fn nr_node_ids() -> u32 {
    // SAFETY: reads a variable fixed at boot.
    unsafe { kapi_nr_node_ids() }
}

/// `num_possible_cpus()`.
pub fn possible_cpus() -> u32 {
    // SAFETY: reads the possible CPU map.
    unsafe { kapi_possible_cpus() }
}

/// `num_online_cpus()`.
pub fn online_cpus() -> u32 {
    // SAFETY: reads the online CPU map.
    unsafe { kapi_online_cpus() }
}

/// `num_online_nodes()`.
pub fn online_nodes() -> u32 {
    // SAFETY: reads the online node map.
    unsafe { kapi_online_nodes() }
}

/// Whether `cpu` exists and is online.
pub fn cpu_online(cpu: u32) -> bool {
    // SAFETY: the helper checks `cpu` against nr_cpu_ids.
    unsafe { kapi_cpu_online(cpu) }
}

/// The node of `cpu` (0 past `nr_cpu_ids`).
pub fn cpu_to_node(cpu: u32) -> i32 {
    if cpu >= nr_cpu_ids() {
        return 0;
    }
    // SAFETY: `cpu` is a possible CPU id.
    unsafe { kapi_cpu_to_node(cpu) }
}

/// The lowest online node after `after` (`None`: from the start).
pub fn next_online_node(after: Option<u32>) -> Option<u32> {
    let after = after.map_or(Ok(-1), c_int::try_from).ok()?;
    // SAFETY: reads the online node map.
    u32::try_from(unsafe { kapi_next_online_node(after) }).ok()
}

/// `node_distance(a, b)` of two node ids below `nr_node_ids`.
pub fn node_distance(a: u32, b: u32) -> u32 {
    let n = nr_node_ids();
    if a >= n || b >= n {
        return 0;
    }
    // SAFETY: both are valid node ids.
    u32::try_from(unsafe { kapi_node_distance(a, b) }).unwrap_or(0)
}

/// Hyperthreads of the core running the caller.
pub fn threads_per_core() -> u32 {
    // SAFETY: reads the topology with preemption disabled inside.
    unsafe { kapi_threads_per_core() }
}

/// The CPU running the caller; it may be another one by the time this
/// returns, as with Lustre's own reading of it.
pub fn current_cpu() -> u32 {
    // SAFETY: no requirement.
    unsafe { kapi_current_cpu() }
}

/// Holds CPU hotplug off while alive (`cpus_read_lock`).
pub struct CpusReadGuard(());

impl CpusReadGuard {
    /// Takes the lock; it may sleep.
    pub fn lock() -> Self {
        // SAFETY: released by Drop, on this thread.
        unsafe { kapi_cpus_read_lock() };
        CpusReadGuard(())
    }
}

impl Drop for CpusReadGuard {
    fn drop(&mut self) {
        // SAFETY: taken by `lock`.
        unsafe { kapi_cpus_read_unlock() };
    }
}

/// A `cpumask_var_t` in an allocation of its own.
///
/// # Invariants
///
/// `self.0` came from `kapi_cpumask_new` and is freed only by Drop.
pub struct CpuMask(NonNull<c_void>);

// SAFETY: plain memory; changes need `&mut self`.
unsafe impl Send for CpuMask {}
// SAFETY: shared access only reads.
unsafe impl Sync for CpuMask {}

impl CpuMask {
    /// An empty mask.
    pub fn new() -> Result<Self> {
        // SAFETY: allocates; null on failure.
        let p = unsafe { kapi_cpumask_new() };
        // INVARIANT: from kapi_cpumask_new.
        NonNull::new(p).map(CpuMask).ok_or(ENOMEM)
    }

    /// The mask of `node`'s CPUs (`cpumask_of_node`).
    pub fn of_node(node: u32) -> Result<Self> {
        let m = Self::new()?;
        if node < nr_node_ids() {
            let node = c_int::try_from(node).map_err(|_| ENOMEM)?;
            // SAFETY: a valid mask and node id.
            unsafe { kapi_cpumask_copy_node(m.0.as_ptr(), node) };
        }
        Ok(m)
    }

    /// The `cpumask_var_t *` C callers take; valid while `self` is.
    pub fn as_ptr(&self) -> *mut c_void {
        self.0.as_ptr()
    }

    /// Adds `cpu` (ignored past `nr_cpu_ids`).
    pub fn set(&mut self, cpu: u32) {
        if cpu < nr_cpu_ids() {
            // SAFETY: a valid mask, an id in range, changed under `&mut`.
            unsafe { kapi_cpumask_set(self.0.as_ptr(), cpu) };
        }
    }

    /// Removes `cpu`.
    pub fn clear(&mut self, cpu: u32) {
        if cpu < nr_cpu_ids() {
            // SAFETY: a valid mask, an id in range, changed under `&mut`.
            unsafe { kapi_cpumask_clear(self.0.as_ptr(), cpu) };
        }
    }

    /// Whether `cpu` is in the mask.
    pub fn test(&self, cpu: u32) -> bool {
        // SAFETY: a valid mask and an id in range.
        cpu < nr_cpu_ids() && unsafe { kapi_cpumask_test(self.0.as_ptr(), cpu) }
    }

    /// CPUs in the mask.
    pub fn weight(&self) -> u32 {
        // SAFETY: a valid mask.
        unsafe { kapi_cpumask_weight(self.0.as_ptr()) }
    }

    /// The lowest CPU after `after` (`None`: the first).
    pub fn next(&self, after: Option<u32>) -> Option<u32> {
        let after = after.map_or(Ok(-1), c_int::try_from).ok()?;
        // SAFETY: a valid mask; the helper stops at nr_cpu_ids.
        let c = unsafe { kapi_cpumask_next(self.0.as_ptr(), after) };
        (c < nr_cpu_ids()).then_some(c)
    }

    /// Whether an online CPU is in the mask.
    pub fn any_online(&self) -> bool {
        // SAFETY: a valid mask.
        unsafe { kapi_cpumask_any_online(self.0.as_ptr()) }
    }

    /// Whether every online CPU is in the mask.
    pub fn has_all_online(&self) -> bool {
        // SAFETY: a valid mask.
        unsafe { kapi_cpumask_has_all_online(self.0.as_ptr()) }
    }

    /// The CPUs of `cpu`'s socket in `within`, and `cpu`.
    pub fn socket_within(cpu: u32, within: &CpuMask) -> Result<Self> {
        let m = Self::new()?;
        if cpu < nr_cpu_ids() {
            // SAFETY: valid masks and id; `m` is not shared yet.
            unsafe { kapi_cpumask_socket_within(m.0.as_ptr(), cpu, within.0.as_ptr()) };
        }
        Ok(m)
    }

    /// The hyperthreads of `cpu`'s core in `within`, and `cpu`.
    pub fn core_within(cpu: u32, within: &CpuMask) -> Result<Self> {
        let m = Self::new()?;
        if cpu < nr_cpu_ids() {
            // SAFETY: valid masks and id; `m` is not shared yet.
            unsafe { kapi_cpumask_core_within(m.0.as_ptr(), cpu, within.0.as_ptr()) };
        }
        Ok(m)
    }
}

impl Drop for CpuMask {
    fn drop(&mut self) {
        // SAFETY: by the type invariant, freed once, here.
        unsafe { kapi_cpumask_free(self.0.as_ptr()) };
    }
}

/// A `nodemask_t` in an allocation of its own.
///
/// # Invariants
///
/// `self.0` came from `kapi_nodemask_new` and is freed only by Drop.
pub struct NodeMask(NonNull<c_void>);

// SAFETY: plain memory; changes need `&mut self`.
unsafe impl Send for NodeMask {}
// SAFETY: shared access only reads.
unsafe impl Sync for NodeMask {}

impl NodeMask {
    /// An empty mask.
    pub fn new() -> Result<Self> {
        // SAFETY: allocates; null on failure.
        let p = unsafe { kapi_nodemask_new() };
        // INVARIANT: from kapi_nodemask_new.
        NonNull::new(p).map(NodeMask).ok_or(ENOMEM)
    }

    /// The `nodemask_t *` C callers take; valid while `self` is.
    pub fn as_ptr(&self) -> *mut c_void {
        self.0.as_ptr()
    }

    /// Adds `node` (ignored past `nr_node_ids`).
    pub fn set(&mut self, node: u32) {
        if node < nr_node_ids() {
            // SAFETY: a valid mask, an id in range, changed under `&mut`.
            unsafe { kapi_nodemask_set(self.0.as_ptr(), node) };
        }
    }

    /// Removes `node`.
    pub fn clear(&mut self, node: u32) {
        if node < nr_node_ids() {
            // SAFETY: a valid mask, an id in range, changed under `&mut`.
            unsafe { kapi_nodemask_clear(self.0.as_ptr(), node) };
        }
    }

    /// Whether `node` is in the mask.
    pub fn test(&self, node: u32) -> bool {
        // SAFETY: a valid mask and an id in range.
        node < nr_node_ids() && unsafe { kapi_nodemask_test(self.0.as_ptr(), node) }
    }

    /// Nodes in the mask.
    pub fn weight(&self) -> u32 {
        // SAFETY: a valid mask.
        unsafe { kapi_nodemask_weight(self.0.as_ptr()) }
    }

    /// The lowest node after `after` (`None`: the first).
    pub fn next(&self, after: Option<u32>) -> Option<u32> {
        let after = after.map_or(Ok(-1), c_int::try_from).ok()?;
        // SAFETY: a valid mask.
        u32::try_from(unsafe { kapi_nodemask_next(self.0.as_ptr(), after) }).ok()
    }
}

impl Drop for NodeMask {
    fn drop(&mut self) {
        // SAFETY: by the type invariant, freed once, here (kzalloc'd).
        unsafe { kapi_kfree(self.0.as_ptr()) };
    }
}

/// Restricts the calling thread to `cpus` and `nodes` and moves it onto
/// one of those CPUs; the kernel's errno on failure.
pub fn bind_current(cpus: &CpuMask, nodes: &NodeMask) -> i32 {
    // SAFETY: valid masks, only read by the kernel during the call.
    unsafe { kapi_bind_current(cpus.as_ptr(), nodes.as_ptr()) }
}

/// `size` zeroed bytes on `node` (negative: anywhere), or null; freed with
/// [`kfree`].
pub fn kzalloc_node(size: usize, node: i32) -> *mut c_void {
    // SAFETY: allocates; null on failure.
    unsafe { kapi_kzalloc_node(size, node) }
}

/// Frees what [`kzalloc_node`] gave.
///
/// # Safety
///
/// `p` is null or from [`kzalloc_node`], and not used afterwards.
pub unsafe fn kfree(p: *const c_void) {
    // SAFETY: `p` is null or from kzalloc_node, so kmalloc'ed, and not used
    // afterwards (# Safety); kfree takes null too.
    unsafe { kapi_kfree(p) }
}

/// `L1_CACHE_ALIGN(size)`, or `None` if it overflows.
pub fn l1_cache_align(size: usize) -> Option<usize> {
    // Room for the rounding up: L1 lines are far smaller than 4 KiB.
    if size > usize::MAX - 4096 {
        return None;
    }
    // SAFETY: arithmetic only.
    Some(unsafe { kapi_l1_cache_align(size) })
}

/// The `cpu_npartitions` parameter (lnet_params.c): fixed at load (0444).
pub fn cpu_npartitions() -> i32 {
    // SAFETY: reads an int that nothing writes after the module's load.
    unsafe { lnet_param_cpu_npartitions() }
}

/// The `cpu_pattern` parameter (lnet_params.c), "" if unset.
pub fn cpu_pattern() -> &'static CStr {
    // SAFETY: reads a pointer that nothing writes after the module's load
    // (0444).
    let p = unsafe { lnet_param_cpu_pattern() };
    if p.is_null() {
        return c"";
    }
    // A charp parameter is a NUL-terminated string that the kernel
    // frees only after the module has gone (and 0444: never replaced), so
    // it outlives every user in the module.
    // SAFETY: `p` is non-null, NUL-terminated and outlives the module's
    // users (a 0444 charp parameter, freed after the module).
    unsafe { CStr::from_ptr(p) }
}

/// A type that C code handed `cfs_cpt_tab` passes back to lnet.ko's
/// exported `cfs_cpt_*` functions.
///
/// # Safety
///
/// Those functions (Lustre's lib-cpt.h, for callers that read
/// `cfs_cpt_tab`) take their table argument as `&Self`.
pub unsafe trait CptTableType: Sync {}

/// A table published as lnet.ko's `cfs_cpt_tab` (and `the_lnet`'s
/// `ln_cpt_table`, `ln_cpt_number`) while this object lives; dropping it
/// unpublishes and then frees the table.
///
/// # Invariants
///
/// `table` is the pointer published; it is freed only after it has been
/// unpublished. C readers of `cfs_cpt_tab` (Lustre's modules) depend on
/// lnet.ko, so none is left when lnet.ko's exit drops this.
pub struct PublishedCptTable<T: CptTableType> {
    table: NonNull<T>,
}

// SAFETY: owns a `KBox<T>` (with `T: Sync`); the table is only read, through
// `&T`.
unsafe impl<T: CptTableType + Send> Send for PublishedCptTable<T> {}
// SAFETY: `&PublishedCptTable` gives nothing.
unsafe impl<T: CptTableType> Sync for PublishedCptTable<T> {}

impl<T: CptTableType> PublishedCptTable<T> {
    /// Publishes `table` of `number` partitions.
    pub fn new(table: KBox<T>, number: u32) -> Self {
        let table = NonNull::from(KBox::leak(table));
        // SAFETY: stores a pointer into lnet.ko's two variables
        // (WRITE_ONCE); C readers take it as a `T` (CptTableType).
        unsafe { kapi_cpt_publish(table.as_ptr().cast(), number) };
        // INVARIANT: `table` is what was published, leaked from its KBox.
        PublishedCptTable { table }
    }
}

impl<T: CptTableType> Drop for PublishedCptTable<T> {
    fn drop(&mut self) {
        // SAFETY: stores null into lnet.ko's two variables.
        unsafe { kapi_cpt_publish(core::ptr::null_mut(), 0) };
        // SAFETY: leaked from a KBox in `new`, now unpublished, freed once.
        drop(unsafe { KBox::from_raw(self.table.as_ptr()) });
    }
}

/// The header before the pointers of a [`PerCptArray`] (Lustre's
/// `struct cfs_var_array`).
#[repr(C)]
struct VarArray {
    count: c_uint,
    size: c_uint,
    cptab: *const c_void,
    ptrs: [*mut c_void; 0],
}

const PTRS: usize = core::mem::offset_of!(VarArray, ptrs);

/// An array of one zeroed block per CPU partition (`cfs_percpt_alloc`):
/// what C callers hold is the pointer to its block pointers, which they
/// index by partition.
///
/// # Invariants
///
/// `ptrs` is the `ptrs` field of a [`VarArray`] from `kapi_kzalloc_node`
/// with room for `count` pointers after it, each null or a block from
/// `kapi_kzalloc_node`; this object owns them all.
#[repr(transparent)]
pub struct PerCptArray {
    ptrs: NonNull<*mut c_void>,
}

impl PerCptArray {
    /// `count` zeroed blocks of `size` bytes, block `i` on node
    /// `node_of(i)`; `cptab` is kept in the header, as Lustre does. None
    /// without memory.
    pub fn new(
        count: u32,
        size: u32,
        cptab: *const c_void,
        mut node_of: impl FnMut(u32) -> i32,
    ) -> Option<Self> {
        let head = (count as usize)
            .checked_mul(core::mem::size_of::<*mut c_void>())?
            .checked_add(PTRS)?;
        let arr = kzalloc_node(head, -1).cast::<VarArray>();
        if arr.is_null() {
            return None;
        }
        // SAFETY: a fresh zeroed allocation of `head` bytes: the header and
        // `count` pointers, all null, so that drop frees a partial array.
        let ptrs = unsafe {
            (*arr).count = count;
            (*arr).size = size;
            (*arr).cptab = cptab;
            core::ptr::addr_of_mut!((*arr).ptrs).cast::<*mut c_void>()
        };
        // INVARIANT: the header's pointers, all null so far.
        let this = PerCptArray {
            ptrs: NonNull::new(ptrs)?,
        };
        for i in 0..count {
            let block = kzalloc_node(size as usize, node_of(i));
            // SAFETY: slot `i` < `count` is within the allocation; a block of
            // kzalloc_node or null, as the invariant has it.
            unsafe { this.ptrs.as_ptr().add(i as usize).write(block) };
            if block.is_null() {
                return None;
            }
        }
        Some(this)
    }
}

impl Drop for PerCptArray {
    fn drop(&mut self) {
        let ptrs = self.ptrs.as_ptr();
        // SAFETY: `ptrs` is the `ptrs` field of a live VarArray (type
        // invariant), so the header is just before it (container_of).
        let arr = unsafe { ptrs.cast::<u8>().sub(PTRS) }.cast::<VarArray>();
        // SAFETY: a live header of ours.
        let count = unsafe { (*arr).count };
        for i in 0..count as usize {
            // SAFETY: slot `i` < `count`: null or a block of kzalloc_node
            // that this array owns, freed once.
            unsafe { kapi_kfree(ptrs.add(i).read()) };
        }
        // SAFETY: the header, from kzalloc_node, freed once.
        unsafe { kapi_kfree(arr.cast()) };
    }
}

/// A [`PerCptArray`] a C caller passes back for reading
/// (`cfs_percpt_number`).
///
/// # Invariants
///
/// Only received from C: no Rust code makes one. The pointer is the block
/// pointers of a live `PerCptArray`, which stays alive for `'a`.
#[repr(transparent)]
pub struct PerCptArg<'a> {
    ptrs: NonNull<*mut c_void>,
    _array: PhantomData<&'a PerCptArray>,
}

impl PerCptArg<'_> {
    /// The number of blocks.
    pub fn count(&self) -> u32 {
        // SAFETY: the block pointers of a live PerCptArray (type invariant),
        // so a VarArray header just before them.
        let arr = unsafe { self.ptrs.as_ptr().cast::<u8>().sub(PTRS) }.cast::<VarArray>();
        // SAFETY: a live header.
        unsafe { (*arr).count }
    }
}

/// The node of network device `name` (`dev_to_node`), or -1 (no such
/// device or no node).
pub fn netdev_node(name: &CStr) -> i32 {
    // SAFETY: a NUL-terminated name, read during the call only.
    unsafe { kapi_netdev_node(name.as_ptr()) }
}

/// `node_distance(a, b)` if both nodes are online, else -1.
pub fn online_node_distance(a: i32, b: i32) -> i32 {
    // SAFETY: the helper checks both ids against MAX_NUMNODES and the online
    // node map.
    unsafe { kapi_online_node_distance(a, b) }
}

/// The largest distance between online nodes.
pub fn max_node_distance() -> i32 {
    // SAFETY: arithmetic over the online node map.
    unsafe { kapi_max_node_distance() }
}

/// The node of the page holding byte `offset` of the payload `desc`
/// describes, or -1 without one.
///
/// # Safety
///
/// `desc` describes fragments (`kiov`, `niov`) that stay valid during the
/// call (those of an MD its message holds).
pub unsafe fn payload_node(desc: &bindings::lnet_tx_desc) -> i32 {
    if desc.len == 0 {
        return -1;
    }
    // SAFETY: `desc.kiov` is null or points to `desc.niov` fragments that stay
    // valid during this call (# Safety), which is as long as the slice is used.
    let v: &[BioVec] = unsafe { kiov::slice(desc.kiov.cast(), desc.niov) };
    let mut off = desc.offset;
    for f in v {
        if off < f.bv_len {
            // SAFETY: a valid page of the payload (# Safety).
            return unsafe { kapi_page_node(f.bv_page.cast()) };
        }
        off -= f.bv_len;
    }
    -1
}
