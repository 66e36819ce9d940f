// SPDX-License-Identifier: GPL-2.0
/*
 * lnet_cpt: lnet.ko's CPU partition exports, called as Lustre's modules
 * call them: PtlRPC's service threads binding to their partition, its
 * per-partition data (cfs_percpt_alloc/for_each/free), the MDT's and
 * OST's private I/O table built node by node, allocations spread over a
 * partition's nodes, and lnet_cpt_of_nid over the same table. Loading
 * fails (-EINVAL) if any check fails; "expect" is the partition count the
 * scenario asked lnet.ko for (0: not checked).
 */
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/lnet/lib-lnet.h>
#include <linux/lnet/lib-cpt.h>

static int expect;
module_param(expect, int, 0444);

static int failures;

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond)) {						\
			pr_err("lnet_cpt: FAIL " fmt "\n", ##__VA_ARGS__); \
			failures++;					\
		}							\
	} while (0)

struct binder {
	int cpt;
	int rc;
	int cpu;
	bool in_mask;
	struct completion done;
};

/* What a PtlRPC service thread does first: run on its partition. */
static int bind_thread(void *arg)
{
	struct binder *b = arg;
	cpumask_var_t *mask;

	b->rc = cfs_cpt_bind(cfs_cpt_tab, b->cpt);
	b->cpu = raw_smp_processor_id();
	mask = cfs_cpt_cpumask(cfs_cpt_tab, b->cpt);
	b->in_mask = mask && cpumask_test_cpu(b->cpu, *mask);
	complete(&b->done);
	return 0;
}

static void check_table(int n)
{
	int total = 0, cpu, cpt;

	CHECK(n >= 1, "cfs_cpt_number %d", n);
	if (expect)
		CHECK(n == expect, "%d partitions, expected %d", n, expect);
	for (cpt = 0; cpt < n; cpt++) {
		cpumask_var_t *cpus = cfs_cpt_cpumask(cfs_cpt_tab, cpt);
		nodemask_t *nodes = cfs_cpt_nodemask(cfs_cpt_tab, cpt);
		int w = cfs_cpt_weight(cfs_cpt_tab, cpt);

		CHECK(w > 0, "partition %d weight %d", cpt, w);
		CHECK(cfs_cpt_online(cfs_cpt_tab, cpt), "partition %d offline", cpt);
		CHECK(cpus && cpumask_weight(*cpus) == w,
		      "partition %d cpumask", cpt);
		CHECK(nodes && nodes_weight(*nodes) > 0,
		      "partition %d nodemask", cpt);
		CHECK(cfs_cpt_distance(cfs_cpt_tab, cpt, cpt) >= LOCAL_DISTANCE,
		      "partition %d distance %u", cpt,
		      cfs_cpt_distance(cfs_cpt_tab, cpt, cpt));
		total += w;
	}
	CHECK(total == cfs_cpt_weight(cfs_cpt_tab, CFS_CPT_ANY),
	      "weights add to %d, table %d", total,
	      cfs_cpt_weight(cfs_cpt_tab, CFS_CPT_ANY));
	CHECK(total == num_online_cpus(), "weights add to %d, %d CPUs online",
	      total, num_online_cpus());
	for_each_online_cpu(cpu) {
		cpt = cfs_cpt_of_cpu(cfs_cpt_tab, cpu);
		CHECK(cpt >= 0 && cpt < n &&
		      cpumask_test_cpu(cpu, *cfs_cpt_cpumask(cfs_cpt_tab, cpt)),
		      "cpu %d in partition %d", cpu, cpt);
	}
	cpt = cfs_cpt_current(cfs_cpt_tab, 1);
	CHECK(cpt >= 0 && cpt < n, "cfs_cpt_current %d", cpt);
	cpt = cfs_cpt_of_node(cfs_cpt_tab, numa_node_id());
	CHECK(cpt >= 0 && cpt < n, "cfs_cpt_of_node %d", cpt);
	CHECK(cfs_cpt_of_node(cfs_cpt_tab, -1) == CFS_CPT_ANY, "node -1");
	CHECK(cfs_cpt_distance(cfs_cpt_tab, CFS_CPT_ANY, 0) >= LOCAL_DISTANCE,
	      "table distance");
}

static void check_bind(int n)
{
	int cpt;

	for (cpt = 0; cpt < n; cpt++) {
		struct binder b = { .cpt = cpt };
		struct task_struct *t;

		init_completion(&b.done);
		t = kthread_run(bind_thread, &b, "lnet_cpt_%d", cpt);
		CHECK(!IS_ERR(t), "kthread for partition %d", cpt);
		if (IS_ERR(t))
			continue;
		wait_for_completion(&b.done);
		CHECK(b.rc == 0, "cfs_cpt_bind(%d) = %d", cpt, b.rc);
		CHECK(b.in_mask, "thread of partition %d ran on cpu %d", cpt,
		      b.cpu);
	}
}

struct stats {
	u64 count;
	char pad[100];
};

/* PtlRPC's per-partition service data. */
static void check_percpt(int n)
{
	struct stats **vars, *v;
	int i, count = 0;

	vars = cfs_percpt_alloc(cfs_cpt_tab, sizeof(struct stats));
	CHECK(vars, "cfs_percpt_alloc");
	if (!vars)
		return;
	CHECK(cfs_percpt_number(vars) == n, "cfs_percpt_number %d",
	      cfs_percpt_number(vars));
	cfs_percpt_for_each(v, i, vars) {
		CHECK(!v->count && !memchr_inv(v->pad, 0, sizeof(v->pad)),
		      "block %d not zeroed", i);
		CHECK(IS_ALIGNED((unsigned long)v, L1_CACHE_BYTES),
		      "block %d not cache aligned", i);
		v->count = i + 1;
		count++;
	}
	CHECK(count == n, "cfs_percpt_for_each saw %d blocks", count);
	cfs_percpt_free(vars);
}

/* The MDT's and OST's I/O table: one partition per node of the table. */
static void check_private_table(void)
{
	nodemask_t *mask = cfs_cpt_nodemask(cfs_cpt_tab, CFS_CPT_ANY);
	struct cfs_cpt_table *t;
	char buf[64];
	int cpt = 0, i, rc;

	t = cfs_cpt_table_alloc(nodes_weight(*mask));
	CHECK(t, "cfs_cpt_table_alloc");
	if (!t)
		return;
	for_each_node_mask(i, *mask)
		CHECK(cfs_cpt_set_node(t, cpt++, i) == 1, "set node %d", i);
	CHECK(cfs_cpt_number(t) == nodes_weight(*mask), "private number");
	CHECK(cfs_cpt_weight(t, 0) > 0, "private weight");
	CHECK(cfs_cpt_set_node(t, cpt, 0) == 0, "partition past the end");
	CHECK(cfs_cpt_set_node(t, 0, MAX_NUMNODES) == 0, "node past the end");
	i = cfs_cpt_spread_node(t, 0);
	CHECK(i >= 0 && node_isset(i, *cfs_cpt_nodemask(t, 0)),
	      "spread node %d", i);
	rc = cfs_cpt_table_print(t, buf, sizeof(buf));
	CHECK(rc > 3 && !strncmp(buf, "0\t:", 3), "table print %d", rc);
	CHECK(cfs_cpt_table_print(t, buf, 2) == -E2BIG, "print too small");
	cfs_cpt_table_free(t);

	/* One CPU set and unset again. */
	t = cfs_cpt_table_alloc(1);
	CHECK(t, "cfs_cpt_table_alloc(1)");
	if (!t)
		return;
	i = cpumask_first(cpu_online_mask);
	CHECK(cfs_cpt_set_cpu(t, 0, i) == 1, "set cpu %d", i);
	CHECK(cfs_cpt_set_cpu(t, 0, i) == 0, "cpu %d set twice", i);
	CHECK(cfs_cpt_set_cpu(t, 0, nr_cpu_ids) == 0, "cpu past the end");
	CHECK(cfs_cpt_of_cpu(t, i) == 0 && cfs_cpt_weight(t, 0) == 1,
	      "cpu %d in partition 0", i);
	CHECK(cfs_cpt_bind(t, 0) == 0, "bind to a private table");
	cfs_cpt_unset_cpu(t, CFS_CPT_ANY, i);
	CHECK(cfs_cpt_weight(t, 0) == 0 && cfs_cpt_of_cpu(t, i) == -1,
	      "cpu %d unset", i);
	CHECK(nodes_weight(*cfs_cpt_nodemask(t, 0)) == 0, "node unset");
	CHECK(cfs_cpt_bind(t, 0) == -ENODEV, "bind to an empty partition");
	cfs_cpt_table_free(t);
}

static void check_alloc_and_nid(int n)
{
	int cpt;

	for (cpt = 0; cpt < n; cpt++) {
		void *p = cfs_cpt_malloc(cfs_cpt_tab, cpt, 64, GFP_KERNEL);

		CHECK(p, "cfs_cpt_malloc(%d)", cpt);
		kfree(p);
	}
	cpt = lnet_cpt_of_nid(LNET_MKNID(LNET_MKNET(2, 0), 0x0a090001), NULL);
	CHECK(cpt >= 0 && cpt < n, "lnet_cpt_of_nid %d of %d", cpt, n);
	if (n == 1)
		CHECK(cpt == 0, "lnet_cpt_of_nid %d with one partition", cpt);
}

static int __init lnet_cpt_init(void)
{
	int n;

	if (!cfs_cpt_tab) {
		pr_err("lnet_cpt: FAIL no cfs_cpt_tab\n");
		return -EINVAL;
	}
	n = cfs_cpt_number(cfs_cpt_tab);
	check_table(n);
	check_bind(n);
	check_percpt(n);
	check_private_table();
	check_alloc_and_nid(n);
	if (failures) {
		pr_err("lnet_cpt: %d checks failed\n", failures);
		return -EINVAL;
	}
	pr_info("lnet_cpt: all checks passed, npartitions=%d\n", n);
	return 0;
}

static void __exit lnet_cpt_exit(void)
{
}

module_init(lnet_cpt_init);
module_exit(lnet_cpt_exit);
MODULE_DESCRIPTION("lnet-rs lab: CPU partition exports as Lustre calls them");
MODULE_LICENSE("GPL");
