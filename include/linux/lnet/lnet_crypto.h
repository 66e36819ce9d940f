/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lnet-rs: hashing data piece by piece through the kernel crypto API, with
 * the signatures of Lustre's <linux/lnet/lnet_crypto.h>, exported by lnet.ko
 * (lnet/crypto.rs). The handle is the kernel's own struct ahash_request, so
 * a caller may also feed it with ahash_request_set_crypt() and
 * crypto_ahash_update() itself.
 */
#ifndef __LNET_RS_LNET_CRYPTO_H__
#define __LNET_RS_LNET_CRYPTO_H__

#include <asm/page.h>
#include <uapi/linux/lnet/lnet-crypto.h>

struct ahash_request;
struct page;

/*
 * A hash of algorithm hash_alg, keyed (HMAC) when key and key_len are
 * given, ready for updates; ERR_PTR(-errno) on failure. It must be ended
 * with cfs_crypto_hash_final().
 */
struct ahash_request *
cfs_crypto_hash_init(enum cfs_crypto_hash_alg hash_alg,
		     unsigned char *key, unsigned int key_len);
/* Adds len bytes of page from offset (taken within the page). */
int cfs_crypto_hash_update_page(struct ahash_request *req,
				struct page *page, unsigned int offset,
				unsigned int len);
/* Adds buf_len bytes at buf. */
int cfs_crypto_hash_update(struct ahash_request *req, const void *buf,
			   unsigned int buf_len);
/*
 * Writes the digest to hash and its size to *hash_len, and frees req in
 * every case. hash or hash_len NULL: only frees, 0. *hash_len smaller
 * than the digest: -EOVERFLOW.
 */
int cfs_crypto_hash_final(struct ahash_request *req,
			  unsigned char *hash, unsigned int *hash_len);
/*
 * The speed of hash_alg in MB/s, measured when lnet.ko loaded (adler32,
 * crc32, crc32c) or on this first call (the others); a negative errno if
 * the algorithm is unavailable, -ENOENT past the last number.
 */
int cfs_crypto_hash_speed(enum cfs_crypto_hash_alg hash_alg);

#endif
