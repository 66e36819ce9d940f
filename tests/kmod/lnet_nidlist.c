// SPDX-License-Identifier: GPL-2.0
/*
 * lnet_nidlist: calls lnet.ko's expression list, NID list and NID string
 * exports as Lustre's modules do, and checks every result:
 * - PtlRPC's CPU partition patterns (ptlrpc/service.c, ptlrpcd.c):
 *   cfs_expr_list_parse, cfs_expr_list_values, cfs_expr_list_free,
 *   cfs_expr_list_values_free, and the public layout of the ranges;
 * - nodemap ranges, nosquash_nids and NRS TBF rules: cfs_parse_nidlist
 *   into a caller's list_head, cfs_match_nid, cfs_print_nidlist,
 *   cfs_free_nidlist, cfs_nidmask_get_length, cfs_nidmask_get_base_nidstr;
 * - libcfs_str2nid, libcfs_str2anynid, libcfs_net2str(_r), libcfs_id2str.
 * Every check that fails is logged and fails the load. The lists are
 * parsed and freed many times over, so a free that frees nothing leaves
 * thousands of objects for the lab's kmemleak scan.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/list.h>
#include <linux/string.h>
#include <linux/lnet/lib-types.h>
#include <uapi/linux/lnet/nidstr.h>

static int failures;

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond)) {						\
			failures++;					\
			pr_err("lnet_nidlist: FAIL " fmt "\n", ##__VA_ARGS__); \
		}							\
	} while (0)

/* A CPT pattern as PtlRPC reads it, against the values expected. */
static void check_pattern(const char *pattern, unsigned int max_cpt,
			  const u32 *want, int nwant)
{
	struct cfs_expr_list *el;
	u32 *cpts = NULL;
	int rc, i;

	rc = cfs_expr_list_parse((char *)pattern, strlen(pattern), 0, max_cpt,
				 &el);
	CHECK(rc == 0, "cfs_expr_list_parse(\"%s\"): %d", pattern, rc);
	if (rc)
		return;
	rc = cfs_expr_list_values(el, max_cpt + 1, &cpts);
	cfs_expr_list_free(el);
	CHECK(rc == nwant, "cfs_expr_list_values(\"%s\"): %d, want %d",
	      pattern, rc, nwant);
	for (i = 0; rc == nwant && i < nwant; i++)
		CHECK(cpts[i] == want[i], "\"%s\" value %d: %u, want %u",
		      pattern, i, cpts[i], want[i]);
	if (rc > 0)
		cfs_expr_list_values_free(cpts, rc);
}

static void check_bad_pattern(const char *pattern, unsigned int max_cpt)
{
	struct cfs_expr_list *el = NULL;
	int rc;

	rc = cfs_expr_list_parse((char *)pattern, strlen(pattern), 0, max_cpt,
				 &el);
	CHECK(rc == -EINVAL, "cfs_expr_list_parse(\"%s\", max %u): %d",
	      pattern, max_cpt, rc);
	if (!rc)
		cfs_expr_list_free(el);
}

static void test_expr_lists(void)
{
	static const u32 v1[] = { 0, 2, 7 };
	static const u32 v2[] = { 1, 2, 3 };
	static const u32 v3[] = { 5 };
	static const u32 v4[] = { 0, 1, 2, 3 };
	struct cfs_expr_list *el;
	struct cfs_range_expr *re;
	u32 *vals = NULL;
	int rc, n = 0;

	check_pattern("[0-3/2,7]", 7, v1, 3);
	check_pattern("[1-3]", 3, v2, 3);
	check_pattern("5", 7, v3, 1);
	check_pattern("*", 3, v4, 4);
	check_pattern("[ 1 , 2-3 ]", 3, v2, 3);
	check_bad_pattern("[0-8]", 7);
	check_bad_pattern("[1-3/0]", 7);
	check_bad_pattern("1-3", 7);
	check_bad_pattern("[]", 7);
	check_bad_pattern("", 7);

	/* Only len bytes are read: "5" of "57". */
	rc = cfs_expr_list_parse("57", 1, 0, 99, &el);
	CHECK(rc == 0, "cfs_expr_list_parse(len 1): %d", rc);
	if (!rc) {
		rc = cfs_expr_list_values(el, 100, &vals);
		CHECK(rc == 1 && vals[0] == 5, "len 1: %d values", rc);
		if (rc > 0)
			cfs_expr_list_values_free(vals, rc);
		cfs_expr_list_free(el);
	}

	/* The public layout: the ranges on el_exprs, in order. */
	rc = cfs_expr_list_parse("[1-9/4,20]", 10, 0, 31, &el);
	CHECK(rc == 0, "cfs_expr_list_parse([1-9/4,20]): %d", rc);
	if (rc)
		return;
	list_for_each_entry(re, &el->el_exprs, re_link) {
		if (n == 0)
			CHECK(re->re_lo == 1 && re->re_hi == 9 &&
			      re->re_stride == 4, "range 0: %u-%u/%u",
			      re->re_lo, re->re_hi, re->re_stride);
		else
			CHECK(re->re_lo == 20 && re->re_hi == 20 &&
			      re->re_stride == 1, "range 1: %u-%u/%u",
			      re->re_lo, re->re_hi, re->re_stride);
		n++;
	}
	CHECK(n == 2, "%d ranges on el_exprs", n);
	/* More values than max: -EINVAL, nothing allocated. */
	vals = NULL;
	rc = cfs_expr_list_values(el, 3, &vals);
	CHECK(rc == -EINVAL && !vals, "4 values, max 3: %d", rc);
	cfs_expr_list_free(el);

	/*
	 * Lustre's callers free the array with kfree up to two pages and
	 * vfree beyond: it must be allocated so.
	 */
	rc = cfs_expr_list_parse("[0-4095]", 8, 0, 4095, &el);
	CHECK(rc == 0, "cfs_expr_list_parse([0-4095]): %d", rc);
	if (rc)
		return;
	rc = cfs_expr_list_values(el, 4096, &vals);
	CHECK(rc == 4096 && vals[4095] == 4095, "[0-4095]: %d values", rc);
	CHECK(rc <= 0 || is_vmalloc_addr(vals) ==
	      (4096 * sizeof(u32) > 2 * PAGE_SIZE),
	      "16 KiB of values: vmalloc %d", rc > 0 && is_vmalloc_addr(vals));
	if (rc > 0)
		cfs_expr_list_values_free(vals, rc);
	cfs_expr_list_free(el);
	rc = cfs_expr_list_parse("[0-15]", 6, 0, 15, &el);
	if (!rc) {
		rc = cfs_expr_list_values(el, 16, &vals);
		CHECK(rc == 16 && !is_vmalloc_addr(vals),
		      "64 bytes of values: %d, vmalloc %d", rc,
		      rc > 0 && is_vmalloc_addr(vals));
		if (rc > 0)
			kfree(vals);	/* as Lustre's LIBCFS_FREE does */
		cfs_expr_list_free(el);
	}
}

static struct lnet_nid nid_of(const char *s)
{
	struct lnet_nid n = LNET_ANY_NID;
	int rc = libcfs_strnid(&n, s);

	CHECK(rc == 0, "libcfs_strnid(\"%s\"): %d", s, rc);
	return n;
}

/*
 * Parses text into a list_head the caller owns (not initialized first, as
 * Lustre's callers leave it), checks its printed form and which NIDs
 * match, then frees it.
 */
static void check_nidlist(const char *text, const char *printed,
			  const char * const *in, const char * const *out)
{
	struct list_head list;
	char buf[256];
	int rc, len;

	memset(&list, 0x5a, sizeof(list));
	rc = cfs_parse_nidlist((char *)text, strlen(text), &list);
	CHECK(rc == 0, "cfs_parse_nidlist(\"%s\"): %d", text, rc);
	if (rc)
		return;
	CHECK(!list_empty(&list), "\"%s\": empty list", text);
	len = cfs_print_nidlist(buf, sizeof(buf), &list);
	CHECK(len == strlen(printed) && !strcmp(buf, printed),
	      "cfs_print_nidlist(\"%s\"): \"%s\" (%d)", text, buf, len);
	for (; in && *in; in++) {
		struct lnet_nid n = nid_of(*in);

		CHECK(cfs_match_nid(&n, &list) == 1, "\"%s\" should match %s",
		      text, *in);
	}
	for (; out && *out; out++) {
		struct lnet_nid n = nid_of(*out);

		CHECK(cfs_match_nid(&n, &list) == 0,
		      "\"%s\" should not match %s", text, *out);
	}
	cfs_free_nidlist(&list);
	CHECK(list_empty(&list), "\"%s\": not empty after free", text);
}

static void check_bad_nidlist(const char *text)
{
	struct list_head list;
	int rc;

	rc = cfs_parse_nidlist((char *)text, strlen(text), &list);
	CHECK(rc == -EINVAL, "cfs_parse_nidlist(\"%s\"): %d", text, rc);
	CHECK(list_empty(&list), "\"%s\": list not empty after error", text);
	if (!rc)
		cfs_free_nidlist(&list);
}

static void test_nidlists(void)
{
	static const char * const in1[] = { "192.168.1.1@tcp",
		"192.168.2.253@tcp", NULL };
	static const char * const out1[] = { "192.168.1.2@tcp",
		"192.168.3.1@tcp", "192.168.1.1@tcp1", "192.168.1.1@o2ib",
		NULL };
	static const char * const in2[] = { "10.0.0.1@o2ib1", NULL };
	static const char * const out2[] = { "10.0.0.1@o2ib", NULL };
	static const char * const in3[] = { "10.0.0.1@tcp", "10.0.0.3@tcp",
		"0@lo", NULL };
	static const char * const out3[] = { "10.0.0.2@tcp", NULL };
	static const char * const in4[] = { "1@gni", "5@gni", NULL };
	static const char * const out4[] = { "6@gni", "3@gni1", NULL };
	static const char * const in5[] = { "2001:db8::5@tcp",
		"192.168.7.7@tcp", NULL };
	static const char * const out5[] = { "2001:db9::5@tcp",
		"192.168.8.7@tcp", NULL };
	struct list_head a, b;
	struct lnet_nid n;
	char buf[64];
	int rc, i;

	check_nidlist("192.168.[1-2].[1-254/2]@tcp",
		      "192.168.[1-2].[1-254/2]@tcp", in1, out1);
	check_nidlist("*@o2ib1", "*@o2ib1", in2, out2);
	check_nidlist("10.0.0.[1,3]@tcp 0@lo", "10.0.0.[1,3]@tcp 0@lo",
		      in3, out3);
	check_nidlist("[1-5]@gni", "[1-5]@gni", in4, out4);
	check_nidlist("2001:db8::/32@tcp 192.168.7.0/24@tcp\n",
		      "2001:db8::/32@tcp 192.168.7.0/24@tcp", in5, out5);
	check_bad_nidlist("");
	check_bad_nidlist("1.2.3@tcp");
	check_bad_nidlist("1.2.3.4@nonet");
	check_bad_nidlist("1.2.3.[1-5/0]@tcp");

	/* Only len bytes: the second range is not read. */
	rc = cfs_parse_nidlist("1.2.3.4@tcp junk", 11, &a);
	CHECK(rc == 0, "cfs_parse_nidlist(len 11): %d", rc);
	if (!rc)
		cfs_free_nidlist(&a);

	/* The nodemap's netmask: its length and base NID. */
	rc = cfs_parse_nidlist("192.168.1.0/24@tcp",
			       strlen("192.168.1.0/24@tcp"), &a);
	CHECK(rc == 0, "cfs_parse_nidlist(netmask): %d", rc);
	if (!rc) {
		CHECK(cfs_nidmask_get_length(&a) == 24,
		      "cfs_nidmask_get_length: %u", cfs_nidmask_get_length(&a));
		rc = cfs_nidmask_get_base_nidstr(buf, sizeof(buf), &a);
		CHECK(rc == 0 && !strcmp(buf, "192.168.1.0@tcp"),
		      "cfs_nidmask_get_base_nidstr: %d \"%s\"", rc, buf);
		/* Cut as snprintf cuts. */
		rc = cfs_print_nidlist(buf, 8, &a);
		CHECK(rc == 7 && !strcmp(buf, "192.168"),
		      "cfs_print_nidlist(8): %d \"%s\"", rc, buf);
		cfs_free_nidlist(&a);
	}
	rc = cfs_parse_nidlist("10.0.0.0/8@tcp 10.1.0.0/16@o2ib",
			       strlen("10.0.0.0/8@tcp 10.1.0.0/16@o2ib"), &a);
	CHECK(rc == 0, "cfs_parse_nidlist(two netmasks): %d", rc);
	if (!rc) {
		CHECK(cfs_nidmask_get_length(&a) == 0,
		      "two netmasks: length %u", cfs_nidmask_get_length(&a));
		rc = cfs_nidmask_get_base_nidstr(buf, sizeof(buf), &a);
		CHECK(rc == -EINVAL, "two netmasks: base %d", rc);
		cfs_free_nidlist(&a);
	}

	/* Lists spliced together act as one, and free as one. */
	rc = cfs_parse_nidlist("10.0.0.1@tcp", strlen("10.0.0.1@tcp"), &a);
	rc |= cfs_parse_nidlist("[7-9]@kfi", strlen("[7-9]@kfi"), &b);
	CHECK(rc == 0, "cfs_parse_nidlist for splice: %d", rc);
	if (!rc) {
		list_splice_init(&b, &a);
		CHECK(list_empty(&b), "spliced list not empty");
		n = nid_of("8@kfi");
		CHECK(cfs_match_nid(&n, &a) == 1, "spliced: 8@kfi");
		n = nid_of("10.0.0.1@tcp");
		CHECK(cfs_match_nid(&n, &a) == 1, "spliced: 10.0.0.1@tcp");
		rc = cfs_print_nidlist(buf, sizeof(buf), &a);
		CHECK(!strcmp(buf, "[7-9]@kfi 10.0.0.1@tcp") ||
		      !strcmp(buf, "10.0.0.1@tcp [7-9]@kfi"),
		      "spliced: \"%s\"", buf);
		cfs_free_nidlist(&a);
		CHECK(list_empty(&a), "spliced: not empty after free");
	}

	/*
	 * Many times over: a free that frees nothing shows in kmemleak. The
	 * kernel does not preempt: yield between rounds, or a slow VM starves
	 * RCU's kthread (a stall report).
	 */
	for (i = 0; i < 200; i++) {
		struct cfs_expr_list *el;

		static char text[] =
			"192.168.[1-2].[1-254/2]@tcp 1.2.3.4/24@tcp *@o2ib [1-5]@gni";

		if (cfs_parse_nidlist(text, strlen(text), &a) == 0)
			cfs_free_nidlist(&a);
		if (cfs_expr_list_parse("[0-3/2,7]", 9, 0, 7, &el) == 0)
			cfs_expr_list_free(el);
		cond_resched();
	}
}

static void test_nidstrs(void)
{
	struct lnet_process_id id;
	lnet_nid_t nid;
	char buf[LNET_NIDSTR_SIZE];
	char *s;

	nid = libcfs_str2nid("192.168.1.2@tcp1");
	CHECK(nid == 0x00020001c0a80102ULL, "libcfs_str2nid: %llx", nid);
	CHECK(libcfs_str2nid("10.0.0.1") == LNET_MKNID(LNET_MKNET(2, 0),
						       0x0a000001),
	      "libcfs_str2nid without a net");
	CHECK(libcfs_str2nid("7@kfi2") == LNET_MKNID(LNET_MKNET(16, 2), 7),
	      "libcfs_str2nid(7@kfi2)");
	CHECK(libcfs_str2nid("1.2.3@tcp") == LNET_NID_ANY, "bad NID4 text");
	CHECK(libcfs_str2nid("2001:db8::1@tcp") == LNET_NID_ANY,
	      "IPv6 has no NID4");

	nid = 0;
	CHECK(libcfs_str2anynid(&nid, "*") == 1 && nid == LNET_NID_ANY,
	      "libcfs_str2anynid(*)");
	CHECK(libcfs_str2anynid(&nid, "10.0.0.1@tcp") == 1 &&
	      nid == LNET_MKNID(LNET_MKNET(2, 0), 0x0a000001),
	      "libcfs_str2anynid(NID)");
	CHECK(libcfs_str2anynid(&nid, "nonsense") == 0 && nid == LNET_NID_ANY,
	      "libcfs_str2anynid(nonsense)");

	s = libcfs_net2str_r(LNET_MKNET(5, 3), buf, sizeof(buf));
	CHECK(s == buf && !strcmp(buf, "o2ib3"), "libcfs_net2str_r: %s", buf);
	CHECK(!strcmp(libcfs_net2str(LNET_MKNET(2, 0)), "tcp"),
	      "libcfs_net2str(tcp)");
	CHECK(!strcmp(libcfs_net2str(LNET_NET_ANY), "<65535:65535>"),
	      "libcfs_net2str(ANY): %s", libcfs_net2str(LNET_NET_ANY));
	libcfs_net2str_r(LNET_MKNET(5, 3), buf, 3);
	CHECK(!strcmp(buf, "o2"), "libcfs_net2str_r cut: %s", buf);

	id.nid = 0x00020001c0a80102ULL;
	id.pid = LNET_PID_LUSTRE;
	s = libcfs_id2str(id);
	CHECK(!strcmp(s, "12345-192.168.1.2@tcp1"), "libcfs_id2str: %s", s);
	id.pid = LNET_PID_ANY;
	s = libcfs_id2str(id);
	CHECK(!strcmp(s, "LNET_PID_ANY-192.168.1.2@tcp1"),
	      "libcfs_id2str(ANY): %s", s);
	id.pid = LNET_PID_USERFLAG | 7;
	id.nid = LNET_NID_ANY;
	s = libcfs_id2str(id);
	CHECK(!strcmp(s, "U7-<?>"), "libcfs_id2str(user): %s", s);
}

static int __init lnet_nidlist_init(void)
{
	test_expr_lists();
	test_nidlists();
	test_nidstrs();
	if (failures) {
		pr_err("lnet_nidlist: %d checks failed\n", failures);
		return -EINVAL;
	}
	pr_info("lnet_nidlist: all checks passed\n");
	return 0;
}

static void __exit lnet_nidlist_exit(void)
{
}

module_init(lnet_nidlist_init);
module_exit(lnet_nidlist_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lnet-rs: expression lists, NID lists and NID strings from C");
