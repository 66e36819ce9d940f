// SPDX-License-Identifier: GPL-2.0

//! CPU and node masks and the CPU topology (cpumask_helpers.c), for lnet.ko's
//! CPU partition table.

use core::ffi::{c_int, c_uint, c_void};
use core::ptr::NonNull;
use kernel::error::{code::ENOMEM, Result};

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
