// SPDX-License-Identifier: GPL-2.0
/*
 * kapi C helpers for hashing through the kernel crypto API: request
 * allocation, scatterlists and context pointers are static inlines there.
 * A module that uses rust/kapi/crypto.rs includes this file from one of
 * its C files.
 */
#include <crypto/hash.h>
#include <crypto/internal/hash.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include "crypto_helpers.h"

/* A request on tfm with no completion callback: the hash runs synchronously
 * (tfm was allocated without CRYPTO_ALG_ASYNC). NULL without memory. */
struct ahash_request *kapi_ahash_request_new(struct crypto_ahash *tfm)
{
	struct ahash_request *req = ahash_request_alloc(tfm, GFP_KERNEL);

	if (req)
		ahash_request_set_callback(req, 0, NULL, NULL);
	return req;
}

/* Frees req and the transform it was made on. */
void kapi_ahash_request_free(struct ahash_request *req)
{
	struct crypto_ahash *tfm = crypto_ahash_reqtfm(req);

	ahash_request_free(req);
	crypto_free_ahash(tfm);
}

void kapi_crypto_free_ahash(struct crypto_ahash *tfm)
{
	crypto_free_ahash(tfm);
}

unsigned int kapi_ahash_digestsize(struct ahash_request *req)
{
	return crypto_ahash_digestsize(crypto_ahash_reqtfm(req));
}

/* Hashes len bytes of page from offset; they may run into the pages that
 * follow it (a compound page), as a scatterlist entry allows. */
int kapi_ahash_update_page(struct ahash_request *req, struct page *page,
			   unsigned int offset, unsigned int len)
{
	struct scatterlist sg;

	sg_init_table(&sg, 1);
	sg_set_page(&sg, page, len, offset);
	ahash_request_set_crypt(req, &sg, NULL, len);
	return crypto_ahash_update(req);
}

/* Writes the digest (kapi_ahash_digestsize() bytes) to out. */
int kapi_ahash_final(struct ahash_request *req, u8 *out)
{
	ahash_request_set_crypt(req, NULL, out, 0);
	return crypto_ahash_final(req);
}

void *kapi_shash_tfm_ctx(struct crypto_shash *tfm)
{
	return crypto_shash_ctx(tfm);
}

void *kapi_shash_desc_ctx(struct shash_desc *desc)
{
	return shash_desc_ctx(desc);
}

/* One hash speed test at a time (rust/kapi/crypto.rs SpeedTestGuard). */
static DEFINE_MUTEX(kapi_hash_speed_mutex);

void kapi_hash_speed_lock(void)
{
	mutex_lock(&kapi_hash_speed_mutex);
}

void kapi_hash_speed_unlock(void)
{
	mutex_unlock(&kapi_hash_speed_mutex);
}

/*
 * Sleeps until kthread_stop() asks the calling kernel thread to stop. The
 * state is set before the check, so a stop between them is not lost (it
 * wakes the thread). Any other task returns at once.
 */
void kapi_kthread_wait_stop(void)
{
	if (!(current->flags & PF_KTHREAD))
		return;
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}
