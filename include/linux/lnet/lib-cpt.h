/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: CPU partitions, the part of Lustre's <linux/lnet/lib-cpt.h> that
 * lnet.ko exports (lnet/cpt.rs), with Lustre's signatures. A partition
 * table is opaque; cfs_cpt_cpumask() and cfs_cpt_nodemask() give masks the
 * caller may read, and cfs_percpt_alloc() an array of per-partition blocks
 * indexed by partition.
 *
 * cpu_npartitions and cpu_pattern are lnet.ko parameters here, not
 * exported variables: Lustre's libcfs.ko exports those.
 */
#ifndef __LNET_RS_LIB_CPT_H__
#define __LNET_RS_LIB_CPT_H__

#include <linux/cpumask.h>
#include <linux/nodemask.h>
#include <linux/slab.h>

#ifndef CFS_CPT_ANY
#define CFS_CPT_ANY	(-1)
#endif

struct cfs_cpt_table;

extern struct cfs_cpt_table *cfs_cpt_tab;

struct cfs_cpt_table *cfs_cpt_table_alloc(int ncpt);
void cfs_cpt_table_free(struct cfs_cpt_table *cptab);
int cfs_cpt_table_print(struct cfs_cpt_table *cptab, char *buf, int len);
int cfs_cpt_distance_print(struct cfs_cpt_table *cptab, char *buf, int len);
int cfs_cpt_number(struct cfs_cpt_table *cptab);
int cfs_cpt_weight(struct cfs_cpt_table *cptab, int cpt);
int cfs_cpt_online(struct cfs_cpt_table *cptab, int cpt);
cpumask_var_t *cfs_cpt_cpumask(struct cfs_cpt_table *cptab, int cpt);
nodemask_t *cfs_cpt_nodemask(struct cfs_cpt_table *cptab, int cpt);
int cfs_cpt_current(struct cfs_cpt_table *cptab, int remap);
int cfs_cpt_of_cpu(struct cfs_cpt_table *cptab, int cpu);
int cfs_cpt_of_node(struct cfs_cpt_table *cptab, int node);
unsigned int cfs_cpt_distance(struct cfs_cpt_table *cptab, int cpt1, int cpt2);
int cfs_cpt_bind(struct cfs_cpt_table *cptab, int cpt);
int cfs_cpt_set_cpu(struct cfs_cpt_table *cptab, int cpt, int cpu);
void cfs_cpt_unset_cpu(struct cfs_cpt_table *cptab, int cpt, int cpu);
int cfs_cpt_set_node(struct cfs_cpt_table *cptab, int cpt, int node);
void cfs_cpt_unset_node(struct cfs_cpt_table *cptab, int cpt, int node);
int cfs_cpt_spread_node(struct cfs_cpt_table *cptab, int cpt);

void *cfs_percpt_alloc(struct cfs_cpt_table *cptab, unsigned int size);
void cfs_percpt_free(void *vars);
int cfs_percpt_number(void *vars);

/* Each block of a cfs_percpt_alloc() array, with its partition. */
#define cfs_percpt_for_each(var, i, vars)		\
	for (i = 0; i < cfs_percpt_number(vars) &&	\
		((var) = (vars)[i]) != NULL; i++)

#define cfs_cpt_for_each(i, cptab)	\
	for (i = 0; i < cfs_cpt_number(cptab); i++)

/* Memory on (one of) a partition's nodes. */
static inline void *cfs_cpt_malloc(struct cfs_cpt_table *cptab, int cpt,
				   size_t nr_bytes, gfp_t flags)
{
	return kmalloc_node(nr_bytes, flags, cfs_cpt_spread_node(cptab, cpt));
}

#endif /* __LNET_RS_LIB_CPT_H__ */
