// SPDX-License-Identifier: GPL-2.0
/*
 * Lab self-test: loses allocations on purpose, so tests/vm/lab_selftest.sh
 * can prove that kmemleak in the lab kernel reports leaks. Loaded by nothing
 * else. Several objects, because a stale copy of the last pointer (in a
 * register or a stack slot that is scanned) can keep one of them referenced.
 */
#include <linux/module.h>
#include <linux/slab.h>

static void *lab_leak_ptr;

/* Not __init: the leak report must be able to name the allocator. */
static noinline int lab_leak_lose(void)
{
	int i;

	for (i = 0; i < 16; i++) {
		WRITE_ONCE(lab_leak_ptr, kmalloc(200, GFP_KERNEL));
		if (!READ_ONCE(lab_leak_ptr))
			return -ENOMEM;
		/* Drop the only reference: the object is now a leak. */
		WRITE_ONCE(lab_leak_ptr, NULL);
	}
	return 0;
}

static int __init lab_leak_init(void)
{
	return lab_leak_lose();
}

static void __exit lab_leak_exit(void)
{
}

module_init(lab_leak_init);
module_exit(lab_leak_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lnet-rs lab self-test: a deliberate memory leak");
