/* SPDX-License-Identifier: GPL-2.0 */
/* Prototypes of rust/kapi/cpumask_helpers.c (see there). */
#ifndef KAPI_CPUMASK_HELPERS_H
#define KAPI_CPUMASK_HELPERS_H

#include <linux/cpumask.h>
#include <linux/nodemask.h>

cpumask_var_t *kapi_cpumask_new(void);
void kapi_cpumask_free(cpumask_var_t *m);
void kapi_cpumask_set(cpumask_var_t *m, unsigned int cpu);
void kapi_cpumask_clear(cpumask_var_t *m, unsigned int cpu);
bool kapi_cpumask_test(cpumask_var_t *m, unsigned int cpu);
unsigned int kapi_cpumask_weight(cpumask_var_t *m);
unsigned int kapi_cpumask_next(cpumask_var_t *m, int after);
bool kapi_cpumask_any_online(cpumask_var_t *m);
bool kapi_cpumask_has_all_online(cpumask_var_t *m);
void kapi_cpumask_copy_node(cpumask_var_t *m, int node);
void kapi_cpumask_socket_within(cpumask_var_t *dst, unsigned int cpu,
				cpumask_var_t *within);
void kapi_cpumask_core_within(cpumask_var_t *dst, unsigned int cpu,
			      cpumask_var_t *within);
nodemask_t *kapi_nodemask_new(void);
void kapi_nodemask_set(nodemask_t *m, unsigned int node);
void kapi_nodemask_clear(nodemask_t *m, unsigned int node);
bool kapi_nodemask_test(const nodemask_t *m, unsigned int node);
unsigned int kapi_nodemask_weight(const nodemask_t *m);
int kapi_nodemask_next(const nodemask_t *m, int after);
unsigned int kapi_nr_cpu_ids(void);
unsigned int kapi_nr_node_ids(void);
unsigned int kapi_possible_cpus(void);
unsigned int kapi_online_cpus(void);
unsigned int kapi_online_nodes(void);
bool kapi_cpu_online(unsigned int cpu);
int kapi_cpu_to_node(unsigned int cpu);
int kapi_next_online_node(int after);
int kapi_node_distance(unsigned int a, unsigned int b);
unsigned int kapi_threads_per_core(void);
unsigned int kapi_current_cpu(void);
int kapi_bind_current(cpumask_var_t *cpus, nodemask_t *nodes);
void kapi_cpus_read_lock(void);
void kapi_cpus_read_unlock(void);
void *kapi_kzalloc_node(size_t size, int node);
void kapi_kfree(const void *p);
size_t kapi_l1_cache_align(size_t size);
void kapi_cpt_publish(void *table, unsigned int number);
int kapi_netdev_node(const char *name);
struct page;
int kapi_page_node(struct page *page);
int kapi_online_node_distance(int a, int b);
int kapi_max_node_distance(void);

#endif
