/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kapi C helpers for the kernel crypto API's static inlines (hash requests,
 * transform and descriptor contexts); see crypto_helpers.c and
 * rust/kapi/crypto.rs.
 */
#ifndef __KAPI_CRYPTO_HELPERS_H__
#define __KAPI_CRYPTO_HELPERS_H__

#include <linux/types.h>

struct ahash_request;
struct crypto_ahash;
struct crypto_shash;
struct shash_desc;
struct page;

struct ahash_request *kapi_ahash_request_new(struct crypto_ahash *tfm);
void kapi_ahash_request_free(struct ahash_request *req);
void kapi_crypto_free_ahash(struct crypto_ahash *tfm);
unsigned int kapi_ahash_digestsize(struct ahash_request *req);
int kapi_ahash_update_page(struct ahash_request *req, struct page *page,
			   unsigned int offset, unsigned int len);
int kapi_ahash_final(struct ahash_request *req, u8 *out);
void *kapi_shash_tfm_ctx(struct crypto_shash *tfm);
void *kapi_shash_desc_ctx(struct shash_desc *desc);
void kapi_hash_speed_lock(void);
void kapi_hash_speed_unlock(void);
void kapi_kthread_wait_stop(void);

#endif
