// SPDX-License-Identifier: GPL-2.0
/*
 * kapi C helpers for rust/kapi/cpumask.rs: cpumasks, nodemasks and the CPU
 * topology are macros and static inlines. A module that uses cpumask.rs
 * includes this file from one of its C files.
 *
 * A cpumask is kept as a cpumask_var_t in an allocation of its own, so its
 * address can be handed to C callers that take a cpumask_var_t * (Lustre's
 * cfs_cpt_cpumask) whether or not CONFIG_CPUMASK_OFFSTACK is set. Ids are
 * range-checked by the Rust side (kapi_nr_cpu_ids, kapi_nr_node_ids).
 */
#include <linux/cpu.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <net/net_namespace.h>
#include <linux/cpumask.h>
#include <linux/cpuset.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include "cpumask_helpers.h"

cpumask_var_t *kapi_cpumask_new(void)
{
	cpumask_var_t *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (m && !zalloc_cpumask_var(m, GFP_KERNEL)) {
		kfree(m);
		m = NULL;
	}
	return m;
}

void kapi_cpumask_free(cpumask_var_t *m)
{
	free_cpumask_var(*m);
	kfree(m);
}

void kapi_cpumask_set(cpumask_var_t *m, unsigned int cpu)
{
	cpumask_set_cpu(cpu, *m);
}

void kapi_cpumask_clear(cpumask_var_t *m, unsigned int cpu)
{
	cpumask_clear_cpu(cpu, *m);
}

bool kapi_cpumask_test(cpumask_var_t *m, unsigned int cpu)
{
	return cpumask_test_cpu(cpu, *m);
}

unsigned int kapi_cpumask_weight(cpumask_var_t *m)
{
	return cpumask_weight(*m);
}

/* The first CPU after "after" (-1: the first), or nr_cpu_ids. */
unsigned int kapi_cpumask_next(cpumask_var_t *m, int after)
{
	return cpumask_next(after, *m);
}

bool kapi_cpumask_any_online(cpumask_var_t *m)
{
	return cpumask_intersects(*m, cpu_online_mask);
}

/* Whether every online CPU is in the mask. */
bool kapi_cpumask_has_all_online(cpumask_var_t *m)
{
	return cpumask_subset(cpu_online_mask, *m);
}

void kapi_cpumask_copy_node(cpumask_var_t *m, int node)
{
	cpumask_copy(*m, cpumask_of_node(node));
}

/* dst = the CPUs of cpu's socket (core: of its core) in within, and cpu. */
void kapi_cpumask_socket_within(cpumask_var_t *dst, unsigned int cpu,
				cpumask_var_t *within)
{
	cpumask_and(*dst, topology_core_cpumask(cpu), *within);
	cpumask_set_cpu(cpu, *dst);
}

void kapi_cpumask_core_within(cpumask_var_t *dst, unsigned int cpu,
			      cpumask_var_t *within)
{
	cpumask_and(*dst, topology_sibling_cpumask(cpu), *within);
	cpumask_set_cpu(cpu, *dst);
}

nodemask_t *kapi_nodemask_new(void)
{
	return kzalloc(sizeof(nodemask_t), GFP_KERNEL);
}

void kapi_nodemask_set(nodemask_t *m, unsigned int node)
{
	node_set(node, *m);
}

void kapi_nodemask_clear(nodemask_t *m, unsigned int node)
{
	node_clear(node, *m);
}

bool kapi_nodemask_test(const nodemask_t *m, unsigned int node)
{
	return node_isset(node, *m);
}

unsigned int kapi_nodemask_weight(const nodemask_t *m)
{
	return nodes_weight(*m);
}

/* The first node after "after" (-1: the first), or -1. */
int kapi_nodemask_next(const nodemask_t *m, int after)
{
	int node = after < 0 ? first_node(*m) : next_node(after, *m);

	return node < MAX_NUMNODES ? node : -1;
}

unsigned int kapi_nr_cpu_ids(void)
{
	return nr_cpu_ids;
}

unsigned int kapi_nr_node_ids(void)
{
	return nr_node_ids;
}

unsigned int kapi_possible_cpus(void)
{
	return num_possible_cpus();
}

unsigned int kapi_online_cpus(void)
{
	return num_online_cpus();
}

unsigned int kapi_online_nodes(void)
{
	return num_online_nodes();
}

bool kapi_cpu_online(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_online(cpu);
}

int kapi_cpu_to_node(unsigned int cpu)
{
	return cpu_to_node(cpu);
}

/* The first online node after "after" (-1: the first), or -1. */
int kapi_next_online_node(int after)
{
	int node = after < 0 ? first_online_node : next_online_node(after);

	return node < MAX_NUMNODES ? node : -1;
}

int kapi_node_distance(unsigned int a, unsigned int b)
{
	return node_distance(a, b);
}

/* Hyperthreads of the core running the caller. */
unsigned int kapi_threads_per_core(void)
{
	unsigned int n;

	preempt_disable();
	n = cpumask_weight(topology_sibling_cpumask(smp_processor_id()));
	preempt_enable();
	return n;
}

/* The CPU running the caller (it may move right after). */
unsigned int kapi_current_cpu(void)
{
	return raw_smp_processor_id();
}

/*
 * Restricts the calling thread to the CPUs and memory nodes given, and
 * moves it onto one of those CPUs now.
 */
int kapi_bind_current(cpumask_var_t *cpus, nodemask_t *nodes)
{
	int rc = set_cpus_allowed_ptr(current, *cpus);

	set_mems_allowed(*nodes);
	if (!rc)
		schedule();
	return rc;
}

void kapi_cpus_read_lock(void)
{
	cpus_read_lock();
}

void kapi_cpus_read_unlock(void)
{
	cpus_read_unlock();
}

/* Zeroed memory on a node (NUMA_NO_NODE: anywhere), for per-CPT data. */
void *kapi_kzalloc_node(size_t size, int node)
{
	return kzalloc_node(size, GFP_NOFS, node);
}

void kapi_kfree(const void *p)
{
	kfree(p);
}

size_t kapi_l1_cache_align(size_t size)
{
	return L1_CACHE_ALIGN(size);
}

/*
 * lnet.ko's (lnet_exports.c): the exported table pointer, and the copy of
 * it in the_lnet that PtlRPC reads.
 */
struct cfs_cpt_table;
extern struct cfs_cpt_table *cfs_cpt_tab;
void lnet_publish_cpt_table(struct cfs_cpt_table *table, unsigned int number);

/* Publishes table (at load), or NULL, 0 (at unload, before it is freed). */
void kapi_cpt_publish(void *table, unsigned int number)
{
	if (table) {
		WRITE_ONCE(cfs_cpt_tab, table);
		lnet_publish_cpt_table(table, number);
	} else {
		lnet_publish_cpt_table(NULL, 0);
		WRITE_ONCE(cfs_cpt_tab, NULL);
	}
}

/*
 * NUMA placement for local NI selection (selection.md §2, criterion 5):
 * the node of an interface's device and of a payload page, and the
 * distance between two nodes; dev_to_node(), page_to_nid() and
 * node_distance() are inlines or macros.
 */
int kapi_netdev_node(const char *name)
{
	struct net_device *dev;
	int node = NUMA_NO_NODE;

	rcu_read_lock();
	dev = dev_get_by_name_rcu(&init_net, name);
	if (dev)
		node = dev_to_node(&dev->dev);
	rcu_read_unlock();
	return node;
}

int kapi_page_node(struct page *page)
{
	return page_to_nid(page);
}

/* node_distance(a, b), or -1 unless both nodes are online. */
int kapi_online_node_distance(int a, int b)
{
	if (a >= 0 && b >= 0 && a < MAX_NUMNODES && b < MAX_NUMNODES &&
	    node_online(a) && node_online(b))
		return node_distance(a, b);
	return -1;
}

/* The largest distance between online nodes. */
int kapi_max_node_distance(void)
{
	int i, j, max = LOCAL_DISTANCE;

	for_each_online_node(i)
		for_each_online_node(j)
			max = max(max, node_distance(i, j));
	return max;
}
