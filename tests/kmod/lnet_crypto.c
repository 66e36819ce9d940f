// SPDX-License-Identifier: GPL-2.0
/*
 * lnet_crypto: lnet.ko's checksum and digest exports (cfs_crypto_hash_*)
 * used as Lustre's upper layers use them. At load it checks every
 * algorithm's digest of known data against published results, the page by
 * page hashing PtlRPC's bulk checksums do (init, update_page at offsets,
 * final), a handle fed with the crypto API directly (as GSS does), the
 * size query and short buffers of cfs_crypto_hash_digest, final's
 * -EOVERFLOW, unknown algorithms, the adler32 algorithm lnet.ko registers
 * (its key), HMAC when the kernel has it, and that every available
 * algorithm has a positive speed. Any failed check is logged and fails the
 * load; the lab's kmemleak scan after unloading finds any handle not freed.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/vmalloc.h>
#include <linux/err.h>
#include <linux/scatterlist.h>
#include <crypto/hash.h>
#include <linux/lnet/lnet_crypto.h>

static int failures;

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond)) {						\
			failures++;					\
			pr_err("lnet_crypto: FAIL %s:%d: " fmt "\n",	\
			       __func__, __LINE__, ##__VA_ARGS__);	\
		}							\
	} while (0)

/* "123456789", the usual check input. */
static const char check_input[] = "123456789";

/* The page data: byte i of three pages is (7 i + 3) mod 256; hashed are
 * page 0 from offset 100, page 1 whole and the first 1000 bytes of page 2,
 * as a bulk RPC's page vector with a partial first and last page. */
#define PAGE_OFF0	100
#define PAGE_LEN2	1000
#define PAGES_BYTES	(PAGE_SIZE - PAGE_OFF0 + PAGE_SIZE + PAGE_LEN2)

/* adler32 is a native-endian u32. */
static const u32 adler_check = 0x091e01de;
static const u32 adler_pages = 0xad07b066;

/*
 * The digests of the check input and of the page data, from independent
 * implementations (Python's zlib and hashlib). crc32 and crc32c are the
 * kernel's little-endian forms: crc32 starts at ~0 and is not inverted at
 * the end, crc32c is the standard CRC-32C.
 */
static const char *const known[CFS_HASH_ALG_MAX][2] = {
	[CFS_HASH_ALG_CRC32] = {
		"\xd9\xc6\x0b\x34",
		"\x2e\x47\xa7\x2d",
	},
	[CFS_HASH_ALG_CRC32C] = {
		"\x83\x92\x06\xe3",
		"\xff\x3f\x8d\xaa",
	},
	[CFS_HASH_ALG_MD5] = {
		"\x25\xf9\xe7\x94\x32\x3b\x45\x38\x85\xf5\x18\x1f\x1b\x62\x4d\x0b",
		"\xea\x33\x32\x4e\x6d\x27\x58\x0e\xbc\xfb\xef\xc2\xee\xa8\x8e\x5c",
	},
	[CFS_HASH_ALG_SHA1] = {
		"\xf7\xc3\xbc\x1d\x80\x8e\x04\x73\x2a\xdf\x67\x99\x65\xcc\xc3\x4c\xa7\xae\x34\x41",
		"\x0c\x43\x2b\x8a\xe3\xfc\x28\xb8\x25\xca\xd5\x51\x45\x07\xfb\x8b\x64\x37\x22\x0e",
	},
	[CFS_HASH_ALG_SHA256] = {
		"\x15\xe2\xb0\xd3\xc3\x38\x91\xeb\xb0\xf1\xef\x60\x9e\xc4\x19\x42\x0c\x20\xe3\x20\xce\x94\xc6\x5f\xbc\x8c\x33\x12\x44\x8e\xb2\x25",
		"\x59\xc1\x96\x3a\x51\x3a\xd8\xbc\xbf\x9c\x0f\xb0\x08\x98\x5b\x25\x9d\x4b\xa9\xe4\xfa\x0a\x32\x2d\x7e\xef\x0e\x67\xf9\x5a\xda\x1c",
	},
	[CFS_HASH_ALG_SHA384] = {
		"\xeb\x45\x5d\x56\xd2\xc1\xa6\x9d\xe6\x4e\x83\x20\x11\xf3\x39\x3d\x45\xf3\xfa\x31\xd6\x84\x2f\x21\xaf\x92\xd2\xfe\x46\x9c\x49\x9d\xa5\xe3\x17\x98\x47\x33\x4a\x18\x47\x9c\x8d\x1d\xed\xea\x1b\xe3",
		"\x27\x7f\xc1\xd1\x43\x2d\x30\xdb\x75\x28\x87\xe0\x75\x99\x90\x58\x18\x17\x45\x69\xf7\xfb\xf5\xba\x0e\xb4\x49\x6d\x80\xb2\x84\x6e\x1e\x56\x22\x87\xa4\xf9\xbb\xa4\xeb\x90\xf2\xfe\xef\x2c\x6d\x3a",
	},
	[CFS_HASH_ALG_SHA512] = {
		"\xd9\xe6\x76\x2d\xd1\xc8\xea\xf6\xd6\x1b\x3c\x61\x92\xfc\x40\x8d\x4d\x6d\x5f\x11\x76\xd0\xc2\x91\x69\xbc\x24\xe7\x1c\x3f\x27\x4a\xd2\x7f\xcd\x58\x11\xb3\x13\xd6\x81\xf7\xe5\x5e\xc0\x2d\x73\xd4\x99\xc9\x54\x55\xb6\xb5\xbb\x50\x3a\xcf\x57\x4f\xba\x8f\xfe\x85",
		"\x12\x71\xd4\x33\xba\x7d\x97\x99\x01\xc5\x24\xe5\x7a\x6c\x57\x73\x78\xdb\x0d\xea\xad\x91\x8f\x6e\xcf\x17\x93\x96\xe9\xec\x67\x53\x79\xd3\x74\xe1\x84\x7b\x53\x21\x45\xc7\xe3\xaa\x4f\x4b\x75\x3e\x48\xa9\x58\x13\x7a\x6f\x3f\x1b\xa9\xdc\x2c\xd3\xdd\x75\x5b\x83",
	},
};

static const unsigned int sizes[CFS_HASH_ALG_MAX] = {
	[CFS_HASH_ALG_ADLER32] = 4, [CFS_HASH_ALG_CRC32] = 4,
	[CFS_HASH_ALG_CRC32C] = 4, [CFS_HASH_ALG_MD5] = 16,
	[CFS_HASH_ALG_SHA1] = 20, [CFS_HASH_ALG_SHA256] = 32,
	[CFS_HASH_ALG_SHA384] = 48, [CFS_HASH_ALG_SHA512] = 64,
};

/* Whether out[] is the expected digest of data set which (0: check
 * input, 1: pages). */
static bool digest_is(int alg, int which, const unsigned char *out)
{
	if (alg == CFS_HASH_ALG_ADLER32) {
		u32 v;

		memcpy(&v, out, 4);
		return v == (which ? adler_pages : adler_check);
	}
	return memcmp(out, known[alg][which], sizes[alg]) == 0;
}

static void check_table(void)
{
	int alg;

	/* The header's inlines, as callers compile them. */
	CHECK(CFS_HASH_ALG_MAX == 9 && CFS_HASH_ALG_SPEED_MAX == 4,
	      "numbering");
	for (alg = CFS_HASH_ALG_ADLER32; alg < CFS_HASH_ALG_MAX; alg++) {
		CHECK(cfs_crypto_hash_digestsize(alg) == sizes[alg],
		      "%s size %u", cfs_crypto_hash_name(alg),
		      cfs_crypto_hash_digestsize(alg));
		CHECK(cfs_crypto_hash_alg(cfs_crypto_hash_name(alg)) == alg,
		      "name of %d", alg);
	}
	CHECK(!strcmp(cfs_crypto_hash_name(CFS_HASH_ALG_CRC32C), "crc32c"),
	      "crc32c name");
	CHECK(!strcmp(cfs_crypto_hash_name(CFS_HASH_ALG_MAX), "unknown"),
	      "unknown name");
}

/* One call over the check input: every algorithm's known digest. */
static void check_digest(void)
{
	unsigned char out[CFS_CRYPTO_HASH_DIGESTSIZE_MAX + 8];
	unsigned int len;
	int alg, rc;

	for (alg = CFS_HASH_ALG_ADLER32; alg < CFS_HASH_ALG_MAX; alg++) {
		const char *name = cfs_crypto_hash_name(alg);

		memset(out, 0, sizeof(out));
		len = sizeof(out);
		rc = cfs_crypto_hash_digest(alg, check_input, 9, NULL, 0,
					    out, &len);
		CHECK(rc == 0, "%s digest: rc = %d", name, rc);
		CHECK(rc || digest_is(alg, 0, out), "%s digest: wrong: %*phN",
		      name, (int)sizes[alg], out);
		/* The digest leaves the room given as it was. */
		CHECK(len == sizeof(out), "%s digest: len %u", name, len);

		/* A size query, and a buffer one byte short. */
		len = 0;
		rc = cfs_crypto_hash_digest(alg, check_input, 9, NULL, 0,
					    NULL, &len);
		CHECK(rc == -ENOSPC && len == sizes[alg],
		      "%s size query: rc = %d len %u", name, rc, len);
		len = sizes[alg] - 1;
		memset(out, 0x5a, sizeof(out));
		rc = cfs_crypto_hash_digest(alg, check_input, 9, NULL, 0,
					    out, &len);
		CHECK(rc == -ENOSPC && len == sizes[alg],
		      "%s short buffer: rc = %d len %u", name, rc, len);
		CHECK(out[0] == 0x5a, "%s short buffer written", name);
	}

	len = sizeof(out);
	rc = cfs_crypto_hash_digest(CFS_HASH_ALG_CRC32, NULL, 9, NULL, 0,
				    out, &len);
	CHECK(rc == -EINVAL, "NULL buffer: rc = %d", rc);
	rc = cfs_crypto_hash_digest(CFS_HASH_ALG_CRC32, check_input, 0, NULL,
				    0, out, &len);
	CHECK(rc == -EINVAL, "empty buffer: rc = %d", rc);
	rc = cfs_crypto_hash_digest(CFS_HASH_ALG_CRC32, check_input, 9, NULL,
				    0, out, NULL);
	CHECK(rc == -EINVAL, "NULL hash_len: rc = %d", rc);
	rc = cfs_crypto_hash_digest(CFS_HASH_ALG_MAX, check_input, 9, NULL,
				    0, out, &len);
	CHECK(rc == -EINVAL, "algorithm MAX: rc = %d", rc);
	rc = cfs_crypto_hash_digest(CFS_HASH_ALG_UNKNOWN, check_input, 9,
				    NULL, 0, NULL, &len);
	CHECK(rc == -EINVAL, "algorithm UNKNOWN size query: rc = %d", rc);
}

/* init, update_page over a page vector, final: how PtlRPC checksums bulk
 * pages; then the same bytes from one buffer with cfs_crypto_hash_update
 * in two pieces, from vmalloc space, and with the crypto API's own calls
 * on the handle (GSS). */
static void check_pages(struct page **pages, const unsigned char *flat,
			const unsigned char *vflat)
{
	unsigned char out[CFS_CRYPTO_HASH_DIGESTSIZE_MAX];
	struct ahash_request *req;
	struct scatterlist sg;
	unsigned int len;
	int alg, rc;

	for (alg = CFS_HASH_ALG_ADLER32; alg < CFS_HASH_ALG_MAX; alg++) {
		const char *name = cfs_crypto_hash_name(alg);

		req = cfs_crypto_hash_init(alg, NULL, 0);
		CHECK(!IS_ERR_OR_NULL(req), "%s init: %ld", name, PTR_ERR(req));
		if (IS_ERR_OR_NULL(req))
			continue;
		rc = cfs_crypto_hash_update_page(req, pages[0], PAGE_OFF0,
						 PAGE_SIZE - PAGE_OFF0);
		rc = rc ?: cfs_crypto_hash_update_page(req, pages[1], 0,
						       PAGE_SIZE);
		/* The offset counts within the page only: PAGE_SIZE is 0. */
		rc = rc ?: cfs_crypto_hash_update_page(req, pages[2], PAGE_SIZE,
						       PAGE_LEN2);
		CHECK(rc == 0, "%s update_page: rc = %d", name, rc);
		len = sizeof(out);
		rc = cfs_crypto_hash_final(req, out, &len);
		CHECK(rc == 0 && len == sizes[alg], "%s final: rc = %d len %u",
		      name, rc, len);
		CHECK(rc || digest_is(alg, 1, out), "%s pages: wrong: %*phN",
		      name, (int)sizes[alg], out);

		req = cfs_crypto_hash_init(alg, NULL, 0);
		if (IS_ERR(req))
			continue;
		rc = cfs_crypto_hash_update(req, flat, 777);
		rc = rc ?: cfs_crypto_hash_update(req, flat + 777, 0);
		rc = rc ?: cfs_crypto_hash_update(req, flat + 777,
						  PAGES_BYTES - 777);
		len = sizeof(out);
		rc = rc ?: cfs_crypto_hash_final(req, out, &len);
		CHECK(rc == 0 && digest_is(alg, 1, out),
		      "%s update: rc = %d %*phN", name, rc, (int)sizes[alg], out);

		req = cfs_crypto_hash_init(alg, NULL, 0);
		if (IS_ERR(req))
			continue;
		rc = cfs_crypto_hash_update(req, vflat, PAGES_BYTES);
		len = sizeof(out);
		rc = rc ?: cfs_crypto_hash_final(req, out, &len);
		CHECK(rc == 0 && digest_is(alg, 1, out),
		      "%s update from vmalloc: rc = %d", name, rc);

		req = cfs_crypto_hash_init(alg, NULL, 0);
		if (IS_ERR(req))
			continue;
		sg_init_one(&sg, flat, PAGES_BYTES);
		ahash_request_set_crypt(req, &sg, NULL, PAGES_BYTES);
		rc = crypto_ahash_update(req);
		len = sizeof(out);
		rc = rc ?: cfs_crypto_hash_final(req, out, &len);
		CHECK(rc == 0 && digest_is(alg, 1, out),
		      "%s crypto_ahash_update on the handle: rc = %d", name, rc);

		/* final frees the handle whatever it returns. */
		req = cfs_crypto_hash_init(alg, NULL, 0);
		if (IS_ERR(req))
			continue;
		len = sizes[alg] - 1;
		rc = cfs_crypto_hash_final(req, out, &len);
		CHECK(rc == -EOVERFLOW && len == sizes[alg] - 1,
		      "%s final short: rc = %d len %u", name, rc, len);
		req = cfs_crypto_hash_init(alg, NULL, 0);
		if (IS_ERR(req))
			continue;
		rc = cfs_crypto_hash_final(req, NULL, NULL);
		CHECK(rc == 0, "%s final to free: rc = %d", name, rc);
	}

	req = cfs_crypto_hash_init(CFS_HASH_ALG_MAX, NULL, 0);
	CHECK(IS_ERR(req) && PTR_ERR(req) == -EINVAL, "init MAX: %ld",
	      PTR_ERR(req));
	req = cfs_crypto_hash_init(CFS_HASH_ALG_UNKNOWN, NULL, 0);
	CHECK(IS_ERR(req) && PTR_ERR(req) == -EINVAL, "init UNKNOWN: %ld",
	      PTR_ERR(req));
}

/* The adler32 lnet.ko registers, through the crypto API: a key is its
 * starting value (4 bytes exactly), none means 1. */
static void check_adler32_alg(void)
{
	struct crypto_shash *tfm;
	u32 seed = 0x12345678, sum = 0;
	int rc;

	CHECK(crypto_has_ahash("adler32", 0, 0), "no adler32 algorithm");
	tfm = crypto_alloc_shash("adler32", 0, 0);
	CHECK(!IS_ERR(tfm), "adler32 shash: %ld", PTR_ERR(tfm));
	if (IS_ERR(tfm))
		return;
	rc = crypto_shash_tfm_digest(tfm, check_input, 9, (u8 *)&sum);
	CHECK(rc == 0 && sum == adler_check, "adler32 unkeyed: %d %08x", rc,
	      sum);
	rc = crypto_shash_setkey(tfm, (u8 *)&seed, 4);
	rc = rc ?: crypto_shash_tfm_digest(tfm, check_input, 9, (u8 *)&sum);
	CHECK(rc == 0 && sum == 0x25ae5855, "adler32 seeded: %d %08x", rc,
	      sum);
	rc = crypto_shash_setkey(tfm, (u8 *)&seed, 3);
	CHECK(rc == -EINVAL, "adler32 3-byte key: %d", rc);
	crypto_free_shash(tfm);
}

/* A key makes it HMAC (as GSS's shared-key flavour uses it): RFC 4231's
 * second case. The kernel may lack HMAC; then init says so. */
static void check_hmac(void)
{
	static const char want[] =
		"\x5b\xdc\xc1\x46\xbf\x60\x75\x4e\x6a\x04\x24\x26\x08\x95\x75\xc7"
		"\x5a\x00\x3f\x08\x9d\x27\x39\x83\x9d\xec\x58\xb9\x64\xec\x38\x43";
	static const char data[] = "what do ya want for nothing?";
	unsigned char key[] = "Jefe", out[32];
	struct ahash_request *req;
	unsigned int len = sizeof(out);
	int rc;

	req = cfs_crypto_hash_init(CFS_HASH_ALG_SHA256, key, 4);
	if (!crypto_has_ahash("hmac(sha256)", 0, 0)) {
		CHECK(IS_ERR(req) && PTR_ERR(req) == -ENOENT,
		      "hmac(sha256) absent, init gave %ld", PTR_ERR(req));
		pr_info("lnet_crypto: no hmac(sha256) in this kernel: init refused it (-ENOENT)\n");
		return;
	}
	CHECK(!IS_ERR(req), "hmac init: %ld", PTR_ERR(req));
	if (IS_ERR(req))
		return;
	rc = cfs_crypto_hash_update(req, data, sizeof(data) - 1);
	rc = rc ?: cfs_crypto_hash_final(req, out, &len);
	CHECK(rc == 0 && len == 32 && !memcmp(out, want, 32),
	      "hmac(sha256): rc = %d %*phN", rc, 32, out);
	pr_info("lnet_crypto: hmac(sha256) checked\n");
}

static void check_speeds(void)
{
	int alg, speed;

	for (alg = CFS_HASH_ALG_ADLER32; alg < CFS_HASH_ALG_MAX; alg++) {
		speed = cfs_crypto_hash_speed(alg);
		CHECK(speed > 0, "%s speed %d", cfs_crypto_hash_name(alg),
		      speed);
		CHECK(cfs_crypto_hash_speeds[alg] == speed,
		      "%s speeds[] %d", cfs_crypto_hash_name(alg),
		      cfs_crypto_hash_speeds[alg]);
		pr_info("lnet_crypto: speed %s %d MB/s\n",
			cfs_crypto_hash_name(alg), speed);
	}
	speed = cfs_crypto_hash_speed(CFS_HASH_ALG_MAX);
	CHECK(speed == -ENOENT, "speed of MAX %d", speed);
	speed = cfs_crypto_hash_speed(CFS_HASH_ALG_UNKNOWN);
	CHECK(speed == -ENOENT, "speed of UNKNOWN %d", speed);
}

static int __init lnet_crypto_init(void)
{
	struct page *pages[3] = {};
	unsigned char *flat, *vflat;
	int i, j, rc = -ENOMEM;

	flat = kmalloc(PAGES_BYTES, GFP_KERNEL);
	vflat = vmalloc(PAGES_BYTES);
	for (i = 0; i < 3; i++)
		pages[i] = alloc_page(GFP_KERNEL);
	if (!flat || !vflat || !pages[0] || !pages[1] || !pages[2])
		goto out;
	for (i = 0; i < 3; i++) {
		unsigned char *p = kmap_local_page(pages[i]);

		for (j = 0; j < PAGE_SIZE; j++)
			p[j] = (7 * (i * PAGE_SIZE + j) + 3) & 0xff;
		if (i == 0)
			memcpy(flat, p + PAGE_OFF0, PAGE_SIZE - PAGE_OFF0);
		else
			memcpy(flat + i * PAGE_SIZE - PAGE_OFF0, p,
			       i == 1 ? PAGE_SIZE : PAGE_LEN2);
		kunmap_local(p);
	}
	memcpy(vflat, flat, PAGES_BYTES);

	check_table();
	check_digest();
	check_pages(pages, flat, vflat);
	check_adler32_alg();
	check_hmac();
	check_speeds();
	rc = failures ? -EINVAL : 0;
	if (!failures)
		pr_info("lnet_crypto: all checks passed\n");
out:
	for (i = 0; i < 3; i++)
		if (pages[i])
			__free_page(pages[i]);
	vfree(vflat);
	kfree(flat);
	return rc;
}

static void __exit lnet_crypto_exit(void)
{
}

module_init(lnet_crypto_init);
module_exit(lnet_crypto_exit);
MODULE_DESCRIPTION("lnet.ko's checksum and digest exports, checked from C");
MODULE_LICENSE("GPL");
