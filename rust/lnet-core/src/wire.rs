//! Field access shared by the wire codecs: bounds-checked reads of integers
//! in the sender's byte order (little-endian, or big-endian for a peer of
//! the other order, "flipped"), and bounds-checked writes. Nothing here
//! panics; running out of bytes is the caller's own error value.

/// A received structure, read in its sender's byte order. `short` is the
/// error a read past the end returns.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a, E> {
    b: &'a [u8],
    flip: bool,
    short: E,
}

impl<'a, E: Copy> Reader<'a, E> {
    /// Reads `b`, swapping every integer when `flip`.
    pub const fn new(b: &'a [u8], flip: bool, short: E) -> Self {
        Reader { b, flip, short }
    }

    /// The bytes read.
    pub fn bytes(&self) -> &'a [u8] {
        self.b
    }

    /// Whether integers are swapped.
    pub fn flip(&self) -> bool {
        self.flip
    }

    /// `N` bytes at `at`.
    pub fn array<const N: usize>(&self, at: usize) -> Result<[u8; N], E> {
        let end = at.checked_add(N).ok_or(self.short)?;
        self.b
            .get(at..end)
            .and_then(|s| s.try_into().ok())
            .ok_or(self.short)
    }

    /// Bytes `from..to`.
    pub fn slice(&self, from: usize, to: usize) -> Result<&'a [u8], E> {
        self.b.get(from..to).ok_or(self.short)
    }

    /// A byte.
    pub fn u8(&self, at: usize) -> Result<u8, E> {
        self.b.get(at).copied().ok_or(self.short)
    }

    /// A 16-bit integer in the sender's order.
    pub fn u16(&self, at: usize) -> Result<u16, E> {
        let a = self.array(at)?;
        Ok(if self.flip {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        })
    }

    /// A 32-bit integer in the sender's order.
    pub fn u32(&self, at: usize) -> Result<u32, E> {
        let a = self.array(at)?;
        Ok(if self.flip {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }

    /// A 64-bit integer in the sender's order.
    pub fn u64(&self, at: usize) -> Result<u64, E> {
        let a = self.array(at)?;
        Ok(if self.flip {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        })
    }

    /// An opaque 64-bit value (a cookie or handle) that is echoed, never
    /// swapped: read as we write our own, little-endian.
    pub fn raw_u64(&self, at: usize) -> Result<u64, E> {
        Ok(u64::from_le_bytes(self.array(at)?))
    }
}

/// Copies `bytes` into `out` at `at`; `None` if it does not fit.
pub fn put(out: &mut [u8], at: usize, bytes: &[u8]) -> Option<()> {
    out.get_mut(at..at.checked_add(bytes.len())?)?
        .copy_from_slice(bytes);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_in_either_order_and_never_past_the_end() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let le = Reader::new(&b, false, ());
        let be = Reader::new(&b, true, ());
        assert_eq!(le.u32(0), Ok(0x0403_0201));
        assert_eq!(be.u32(0), Ok(0x0102_0304));
        assert_eq!(le.u16(6), Ok(0x0807));
        assert_eq!(be.u64(0), Ok(0x0102_0304_0506_0708));
        assert_eq!(be.raw_u64(0), le.u64(0));
        assert_eq!(le.u32(5), Err(()));
        assert_eq!(le.u32(usize::MAX), Err(()));
        assert_eq!(le.u8(8), Err(()));
        assert_eq!(le.slice(2, 4), Ok(&b[2..4]));
        assert_eq!(le.slice(4, 9), Err(()));
        let mut out = [0u8; 4];
        assert_eq!(put(&mut out, 2, &[9, 9]), Some(()));
        assert_eq!(out, [0, 0, 9, 9]);
        assert_eq!(put(&mut out, 3, &[9, 9]), None);
        assert_eq!(put(&mut out, usize::MAX, &[9]), None);
    }
}
