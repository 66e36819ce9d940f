/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * lnet-rs: the checksum and digest algorithms of lnet.ko's cfs_crypto_hash_*
 * functions, with the numbering, names and layouts of Lustre's
 * <uapi/linux/lnet/lnet-crypto.h>. Callers compile the table lookups below
 * into their own code and hand lnet.ko the numbers, so both sides must agree
 * (rust/lnet-core/src/crypto_hash.rs holds lnet.ko's copy and its tests).
 */
#ifndef __LNET_RS_LNET_CRYPTO_UAPI_H__
#define __LNET_RS_LNET_CRYPTO_UAPI_H__

#include <linux/types.h>
#include <linux/string.h>

/* One hash: its kernel crypto API name, default key, digest bytes. */
struct cfs_crypto_hash_type {
	char		*cht_name;
	/* initial value of the 32-bit checksums when no key is given; 0: none */
	unsigned int	cht_key;
	unsigned int	cht_size;
};

/* One cipher: its kernel crypto API name and key bytes. */
struct cfs_crypto_crypt_type {
	char		*cct_name;
	unsigned int	cct_size;
};

enum cfs_crypto_hash_alg {
	CFS_HASH_ALG_NULL	= 0,
	CFS_HASH_ALG_ADLER32	= 1,
	CFS_HASH_ALG_CRC32	= 2,
	CFS_HASH_ALG_CRC32C	= 3,
	CFS_HASH_ALG_MD5	= 4,
	CFS_HASH_ALG_SHA1	= 5,
	CFS_HASH_ALG_SHA256	= 6,
	CFS_HASH_ALG_SHA384	= 7,
	CFS_HASH_ALG_SHA512	= 8,
	CFS_HASH_ALG_MAX	= 9,
	/* 1 .. SPEED_MAX - 1 are speed-tested when lnet.ko loads */
	CFS_HASH_ALG_SPEED_MAX	= CFS_HASH_ALG_MD5,
	CFS_HASH_ALG_UNKNOWN	= 0xff
};

enum cfs_crypto_crypt_alg {
	CFS_CRYPT_ALG_NULL		= 0,
	CFS_CRYPT_ALG_AES256_CTR	= 1,
	CFS_CRYPT_ALG_MAX		= 2,
	CFS_CRYPT_ALG_UNKNOWN		= 0xff
};

/* Indexed by enum cfs_crypto_hash_alg; the entry at MAX ends name walks. */
static struct cfs_crypto_hash_type hash_types[] __attribute__((unused)) = {
	[CFS_HASH_ALG_NULL]	= { "null",	0,	0 },
	[CFS_HASH_ALG_ADLER32]	= { "adler32",	1,	4 },
	[CFS_HASH_ALG_CRC32]	= { "crc32",	~0,	4 },
	[CFS_HASH_ALG_CRC32C]	= { "crc32c",	~0,	4 },
	[CFS_HASH_ALG_MD5]	= { "md5",	0,	16 },
	[CFS_HASH_ALG_SHA1]	= { "sha1",	0,	20 },
	[CFS_HASH_ALG_SHA256]	= { "sha256",	0,	32 },
	[CFS_HASH_ALG_SHA384]	= { "sha384",	0,	48 },
	[CFS_HASH_ALG_SHA512]	= { "sha512",	0,	64 },
	[CFS_HASH_ALG_MAX]	= { NULL,	0,	64 },
};

static struct cfs_crypto_crypt_type crypt_types[] __attribute__((unused)) = {
	[CFS_CRYPT_ALG_NULL]		= { "null",	0 },
	[CFS_CRYPT_ALG_AES256_CTR]	= { "ctr(aes)",	32 },
};

/* The largest cht_size. */
#define CFS_CRYPTO_HASH_DIGESTSIZE_MAX 64

/*
 * Each algorithm's speed in MB/s as lnet.ko measured it; 0 while not yet
 * measured, a negative errno if the algorithm is unavailable. Read it
 * through cfs_crypto_hash_speed(), which measures on demand.
 */
extern int cfs_crypto_hash_speeds[CFS_HASH_ALG_MAX];

/* The algorithm numbered hash_alg, or NULL. */
static inline const struct cfs_crypto_hash_type *
cfs_crypto_hash_type(enum cfs_crypto_hash_alg hash_alg)
{
	if (hash_alg < CFS_HASH_ALG_MAX && hash_types[hash_alg].cht_name)
		return &hash_types[hash_alg];
	return NULL;
}

/* Its name, or "unknown". */
static inline const char *
cfs_crypto_hash_name(enum cfs_crypto_hash_alg hash_alg)
{
	const struct cfs_crypto_hash_type *ht = cfs_crypto_hash_type(hash_alg);

	return ht ? ht->cht_name : "unknown";
}

/* Its digest size in bytes, or 0 for an unknown number. */
static inline unsigned int
cfs_crypto_hash_digestsize(enum cfs_crypto_hash_alg hash_alg)
{
	const struct cfs_crypto_hash_type *ht = cfs_crypto_hash_type(hash_alg);

	return ht ? ht->cht_size : 0;
}

/* The number of the hash named algname, or CFS_HASH_ALG_UNKNOWN. */
static inline unsigned char cfs_crypto_hash_alg(const char *algname)
{
	unsigned int i;

	for (i = 0; i < CFS_HASH_ALG_MAX; i++)
		if (strcmp(hash_types[i].cht_name, algname) == 0)
			return i;
	return CFS_HASH_ALG_UNKNOWN;
}

/* The cipher numbered crypt_alg, or NULL. */
static inline const struct cfs_crypto_crypt_type *
cfs_crypto_crypt_type(enum cfs_crypto_crypt_alg crypt_alg)
{
	if (crypt_alg < CFS_CRYPT_ALG_MAX && crypt_types[crypt_alg].cct_name)
		return &crypt_types[crypt_alg];
	return NULL;
}

/* Its name, or "unknown". */
static inline const char *
cfs_crypto_crypt_name(enum cfs_crypto_crypt_alg crypt_alg)
{
	const struct cfs_crypto_crypt_type *ct = cfs_crypto_crypt_type(crypt_alg);

	return ct ? ct->cct_name : "unknown";
}

/* Its key size in bytes, or 0 for an unknown number. */
static inline unsigned int
cfs_crypto_crypt_keysize(enum cfs_crypto_crypt_alg crypt_alg)
{
	const struct cfs_crypto_crypt_type *ct = cfs_crypto_crypt_type(crypt_alg);

	return ct ? ct->cct_size : 0;
}

/* The number of the cipher named algname, or CFS_CRYPT_ALG_UNKNOWN. */
static inline unsigned char cfs_crypto_crypt_alg(const char *algname)
{
	unsigned int i;

	for (i = 0; i < CFS_CRYPT_ALG_MAX; i++)
		if (strcmp(crypt_types[i].cct_name, algname) == 0)
			return i;
	return CFS_CRYPT_ALG_UNKNOWN;
}

/*
 * The digest of buf_len bytes at buf (buf_len > 0), keyed (HMAC) when key
 * and key_len are given. hash == NULL or *hash_len too small: -ENOSPC with
 * the digest size in *hash_len. -EINVAL for a bad argument or algorithm
 * number, another negative errno if the kernel lacks the algorithm.
 */
int cfs_crypto_hash_digest(enum cfs_crypto_hash_alg hash_alg,
			   const void *buf, unsigned int buf_len,
			   unsigned char *key, unsigned int key_len,
			   unsigned char *hash, unsigned int *hash_len);

#endif
