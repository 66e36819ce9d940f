//! The checksum and digest algorithms lnet.ko offers upper layers
//! (`cfs_crypto_hash_*`, include/uapi/linux/lnet/lnet-crypto.h): their
//! numbers, kernel crypto API names, default keys and digest sizes, and the
//! arithmetic of the speed test.
//!
//! The numbering is `enum cfs_crypto_hash_alg`. Callers compile that enum
//! and the header's table lookups into their own code and pass the numbers
//! to lnet.ko, so the two must agree exactly.

use core::ffi::CStr;

/// `CFS_HASH_ALG_NULL` ... `CFS_HASH_ALG_SHA512`.
pub const HASH_ALG_NULL: u32 = 0;
/// Adler-32, which lnet.ko registers itself.
pub const HASH_ALG_ADLER32: u32 = 1;
/// CRC-32 (IEEE), without the final inversion.
pub const HASH_ALG_CRC32: u32 = 2;
/// CRC-32C (Castagnoli).
pub const HASH_ALG_CRC32C: u32 = 3;
/// MD5.
pub const HASH_ALG_MD5: u32 = 4;
/// SHA-1.
pub const HASH_ALG_SHA1: u32 = 5;
/// SHA-256.
pub const HASH_ALG_SHA256: u32 = 6;
/// SHA-384.
pub const HASH_ALG_SHA384: u32 = 7;
/// SHA-512.
pub const HASH_ALG_SHA512: u32 = 8;
/// `CFS_HASH_ALG_MAX`: one past the last algorithm.
pub const HASH_ALG_MAX: u32 = 9;
/// `CFS_HASH_ALG_SPEED_MAX`: the algorithms below it (from adler32) are
/// speed-tested when lnet.ko loads, the others when first asked.
pub const HASH_ALG_SPEED_MAX: u32 = HASH_ALG_MD5;
/// `CFS_HASH_ALG_UNKNOWN`: what a name lookup gives for a name not listed.
pub const HASH_ALG_UNKNOWN: u32 = 0xff;

/// `CFS_CRYPTO_HASH_DIGESTSIZE_MAX`: the largest digest (SHA-512's).
pub const DIGEST_SIZE_MAX: usize = 64;

/// One algorithm (`struct cfs_crypto_hash_type`).
#[derive(Debug, PartialEq, Eq)]
pub struct HashType {
    /// The kernel crypto API's name for it.
    pub name: &'static CStr,
    /// The key a fresh hash starts from when the caller gives none (the
    /// initial value of the 32-bit checksums); 0 for none.
    pub key: u32,
    /// Digest size in bytes.
    pub size: u32,
}

/// Indexed by algorithm number.
static HASH_TYPES: [HashType; HASH_ALG_MAX as usize] = [
    HashType {
        name: c"null",
        key: 0,
        size: 0,
    },
    HashType {
        name: c"adler32",
        key: 1,
        size: 4,
    },
    HashType {
        name: c"crc32",
        key: !0,
        size: 4,
    },
    HashType {
        name: c"crc32c",
        key: !0,
        size: 4,
    },
    HashType {
        name: c"md5",
        key: 0,
        size: 16,
    },
    HashType {
        name: c"sha1",
        key: 0,
        size: 20,
    },
    HashType {
        name: c"sha256",
        key: 0,
        size: 32,
    },
    HashType {
        name: c"sha384",
        key: 0,
        size: 48,
    },
    HashType {
        name: c"sha512",
        key: 0,
        size: 64,
    },
];

/// The algorithm numbered `alg` (`cfs_crypto_hash_type`), None past the
/// last one.
pub fn hash_type(alg: u32) -> Option<&'static HashType> {
    HASH_TYPES.get(usize::try_from(alg).ok()?)
}

/// The number of the algorithm the kernel crypto API calls `name`
/// (`cfs_crypto_hash_alg`), or [`HASH_ALG_UNKNOWN`].
pub fn hash_alg(name: &[u8]) -> u32 {
    HASH_TYPES
        .iter()
        .position(|t| t.name.to_bytes() == name)
        .and_then(|i| u32::try_from(i).ok())
        .unwrap_or(HASH_ALG_UNKNOWN)
}

/// The name of algorithm `alg` for messages (`cfs_crypto_hash_name`).
pub fn hash_name(alg: u32) -> &'static str {
    hash_type(alg)
        .and_then(|t| t.name.to_str().ok())
        .unwrap_or("unknown")
}

/// The key the speed test and a keyless caller start a hash from: the
/// algorithm's default initial value as the 4 bytes of a native `u32`, or
/// None when it has none.
pub fn default_key(t: &HashType) -> Option<[u8; 4]> {
    (t.key != 0).then(|| t.key.to_ne_bytes())
}

/// Each speed test round hashes this much (1 MiB, one page at a time: a
/// typical bulk RPC), as `obd_t10_performance_test` does, so that the
/// speeds of checksums and of T10-PI guards compare.
pub const SPEED_TEST_BYTES: u64 = 1 << 20;

/// How long a speed test runs, in milliseconds.
pub const SPEED_TEST_MS: u64 = 250;

/// The speed in MB/s (2^20 bytes per second) of `bytes` hashed in `ms`
/// milliseconds, with the test's rounding (bytes per millisecond first).
///
/// Never 0: a speed of 0 would read as "not measured yet" and be measured
/// again at every query, so an algorithm slower than 1 MB/s is 1 MB/s. An
/// elapsed time of 0 counts as 1 ms.
pub fn speed_mb_per_s(bytes: u64, ms: u64) -> i32 {
    let per_ms = bytes / ms.max(1);
    let mb = per_ms.saturating_mul(1000) / (1 << 20);
    i32::try_from(mb).unwrap_or(i32::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_and_sizes() {
        let expect: [(&str, u32, u32); 9] = [
            ("null", 0, 0),
            ("adler32", 1, 4),
            ("crc32", !0, 4),
            ("crc32c", !0, 4),
            ("md5", 0, 16),
            ("sha1", 0, 20),
            ("sha256", 0, 32),
            ("sha384", 0, 48),
            ("sha512", 0, 64),
        ];
        let mut alg = 0;
        for (name, key, size) in expect {
            let t = hash_type(alg).unwrap();
            assert_eq!(t.name.to_str().unwrap(), name);
            assert_eq!((t.key, t.size), (key, size));
            assert_eq!(hash_alg(name.as_bytes()), alg);
            assert_eq!(hash_name(alg), name);
            alg += 1;
        }
        assert_eq!(alg, HASH_ALG_MAX);
        assert!(HASH_TYPES
            .iter()
            .all(|t| t.size as usize <= DIGEST_SIZE_MAX));
        assert_eq!(
            hash_type(HASH_ALG_SHA512).unwrap().size as usize,
            DIGEST_SIZE_MAX
        );
    }

    #[test]
    fn unknown_algorithms() {
        assert!(hash_type(HASH_ALG_MAX).is_none());
        assert!(hash_type(HASH_ALG_UNKNOWN).is_none());
        assert!(hash_type(u32::MAX).is_none());
        assert_eq!(hash_name(HASH_ALG_MAX), "unknown");
        assert_eq!(hash_alg(b"sha3-256"), HASH_ALG_UNKNOWN);
        assert_eq!(hash_alg(b""), HASH_ALG_UNKNOWN);
        assert_eq!(hash_alg(b"crc32c\0"), HASH_ALG_UNKNOWN);
    }

    #[test]
    fn default_keys() {
        let key = |alg| default_key(hash_type(alg).unwrap());
        assert_eq!(key(HASH_ALG_ADLER32), Some(1u32.to_ne_bytes()));
        assert_eq!(key(HASH_ALG_CRC32), Some([0xff; 4]));
        assert_eq!(key(HASH_ALG_CRC32C), Some([0xff; 4]));
        assert_eq!(key(HASH_ALG_MD5), None);
        assert_eq!(key(HASH_ALG_NULL), None);
    }

    #[test]
    fn speeds() {
        // 40 rounds of 1 MiB in 256 ms: 156.25 MB/s.
        assert_eq!(speed_mb_per_s(40 * SPEED_TEST_BYTES, 256), 156);
        // Bytes per millisecond are rounded down first: 40 MiB in 250 ms
        // is 167772.16 bytes/ms, then 159.99 MB/s.
        assert_eq!(speed_mb_per_s(40 * SPEED_TEST_BYTES, 250), 159);
        // Slower than 1 MB/s, or nothing at all, still reads as measured.
        assert_eq!(speed_mb_per_s(SPEED_TEST_BYTES, 2000), 1);
        assert_eq!(speed_mb_per_s(0, 250), 1);
        assert_eq!(speed_mb_per_s(SPEED_TEST_BYTES, 0), 1000);
        assert_eq!(speed_mb_per_s(u64::MAX, 1), i32::MAX);
    }
}
