/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: the parts of Lustre's <linux/lnet/lib-types.h> that Lustre's
 * upper layers use: expression lists, which PtlRPC parses its CPU
 * partition patterns ("[0-3/2,7]") with. The structures are public in
 * Lustre's header, so they keep its layout; lnet.ko allocates and frees
 * them (cfs_expr_list_parse(), cfs_expr_list_free()).
 */
#ifndef __LNET_RS_LIB_TYPES_H__
#define __LNET_RS_LIB_TYPES_H__

#include <linux/types.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <uapi/linux/lnet/nidstr.h>

struct cfs_cpt_table;

/*
 * LNet's global, as far as Lustre's upper layers read it: the head of
 * Lustre's struct lnet, whose lnet_cpt_table(), LNET_CPT_NUMBER and
 * LNET_CPT_BITS (<linux/lnet/lib-lnet.h>) PtlRPC uses. The fields keep
 * Lustre's offsets; the rest of Lustre's structure is LNet's own state,
 * which lnet-rs keeps elsewhere, so the size differs.
 */
struct lnet {
	/* cfs_cpt_tab, once lnet.ko has built it */
	struct cfs_cpt_table	*ln_cpt_table;
	/* its partitions */
	unsigned int		ln_cpt_number;
	/* bits that number a partition */
	unsigned int		ln_cpt_bits;
};

extern struct lnet the_lnet;

/* One range: re_lo, re_lo + re_stride, ... up to re_hi. */
struct cfs_range_expr {
	/* On cfs_expr_list::el_exprs. */
	struct list_head	re_link;
	u32			re_lo;
	u32			re_hi;
	u32			re_stride;
};

struct cfs_expr_list {
	/* For the caller's own lists of expression lists. */
	struct list_head	el_link;
	/* The cfs_range_expr entries, in the order written. */
	struct list_head	el_exprs;
};

/*
 * Parses str (len bytes at most, or up to its NUL): a number, "*" (min to
 * max), or "[a,b-c,d-e/f]". Every value must lie in min..max. 0 and
 * *elpp set; -EINVAL (bad syntax, value out of bounds, stride 0) or
 * -ENOMEM. Free with cfs_expr_list_free().
 */
int cfs_expr_list_parse(char *str, int len, unsigned int min, unsigned int max,
			struct cfs_expr_list **elpp);

/*
 * Every value of the list, in the order written, in a new array: returns
 * how many (and sets *values), 0 for none, -EINVAL if more than max,
 * -ENOMEM. Free the array with cfs_expr_list_values_free().
 */
int cfs_expr_list_values(struct cfs_expr_list *expr_list,
			 int max, u32 **values);

/* Frees the list and its ranges. */
void cfs_expr_list_free(struct cfs_expr_list *expr_list);

/*
 * The array is kmalloc'ed up to two pages and vmalloc'ed beyond, so
 * Lustre's own macro (kfree or vfree by that size) and this one both
 * free it.
 */
#define cfs_expr_list_values_free(values, num)	kvfree(values)

#endif /* __LNET_RS_LIB_TYPES_H__ */
