//! Adler-32 (RFC 1950), the checksum Lustre calls `adler32`: lnet.ko
//! registers it with the kernel crypto API because the kernel has no
//! adler32 hash of its own. Same results as zlib's `adler32()` for the
//! same starting value.

/// The largest prime below 2^16.
const BASE: u32 = 65521;

/// The most bytes that can be summed before `b` could overflow 32 bits
/// (with `a` and `b` both just below `BASE` at the start): zlib's NMAX.
const NMAX: usize = 5552;

/// The checksum of nothing, and the starting value of a fresh checksum.
pub const INIT: u32 = 1;

/// Continues the checksum `adler` over `data`, as the kernel's
/// `zlib_adler32()` does: no data leaves `adler` as it is.
pub fn update(adler: u32, data: &[u8]) -> u32 {
    if data.is_empty() {
        return adler;
    }
    // A seed that is not itself a checksum (a half >= BASE) gives zlib's
    // answer too: reducing both halves first changes nothing modulo BASE,
    // and keeps the sums of a full NMAX block within 32 bits.
    let mut a = (adler & 0xffff) % BASE;
    let mut b = (adler >> 16) % BASE;
    for chunk in data.chunks(NMAX) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= BASE;
        b %= BASE;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;

    /// The definition, reduced after every byte.
    fn naive(adler: u32, data: &[u8]) -> u32 {
        let mut a = u64::from(adler & 0xffff) % u64::from(BASE);
        let mut b = u64::from(adler >> 16) % u64::from(BASE);
        for &byte in data {
            a = (a + u64::from(byte)) % u64::from(BASE);
            b = (b + a) % u64::from(BASE);
        }
        ((b << 16) | a) as u32
    }

    #[test]
    fn known_vectors() {
        assert_eq!(update(INIT, b""), 1);
        // Nothing to add: the seed comes back untouched, even one that no
        // data could produce.
        assert_eq!(update(0xffff_ffff, b""), 0xffff_ffff);
        assert_eq!(update(INIT, b"a"), 0x0062_0062);
        assert_eq!(update(INIT, b"abc"), 0x024d_0127);
        assert_eq!(update(INIT, b"Wikipedia"), 0x11e6_0398);
        assert_eq!(update(INIT, b"123456789"), 0x091e_01de);
        assert_eq!(
            update(INIT, b"The quick brown fox jumps over the lazy dog"),
            0x5bdc_0fda
        );
    }

    #[test]
    fn long_runs_of_0xff_do_not_overflow() {
        // The worst case for the sums: every byte 255, over many NMAX blocks.
        let data = std::vec![0xffu8; 3 * NMAX + 17];
        assert_eq!(update(0xfff0_fff0, &data), naive(0xfff0_fff0, &data));
        assert_eq!(update(INIT, &data), naive(INIT, &data));
    }

    #[test]
    fn page_of_0xad() {
        // What the speed test hashes: one 4 KiB page of 0xAD bytes.
        let page = std::vec![0xadu8; 4096];
        assert_eq!(update(INIT, &page), naive(INIT, &page));
    }

    proptest! {
        #[test]
        fn agrees_with_the_definition(seed in any::<u32>(),
                                      data in proptest::collection::vec(any::<u8>(), 1..20000)) {
            prop_assert_eq!(update(seed, &data), naive(seed, &data));
        }

        #[test]
        fn pieces_give_the_whole(data in proptest::collection::vec(any::<u8>(), 0..12000),
                                 cut in any::<usize>()) {
            let cut = cut % (data.len() + 1);
            let (x, y) = data.split_at(cut);
            prop_assert_eq!(update(update(INIT, x), y), update(INIT, &data));
        }
    }
}
