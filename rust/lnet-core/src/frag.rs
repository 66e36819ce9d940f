//! Copy plans between two fragment lists (MD page vectors): which piece of
//! which source fragment goes to which piece of which destination fragment.
//! The kernel side maps the pages and moves the bytes; where the bytes go is
//! decided here, so it is tested on the host.

/// One contiguous copy: `len` bytes from fragment `src.0` at `src.1` to
/// fragment `dst.0` at `dst.1` (positions are within the fragment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Destination fragment index and position in it.
    pub dst: (usize, u32),
    /// Source fragment index and position in it.
    pub src: (usize, u32),
    /// Bytes.
    pub len: u32,
}

/// A cursor over a fragment list.
#[derive(Clone)]
struct Cursor<I> {
    lens: I,
    idx: usize,
    /// Bytes consumed of the current fragment.
    pos: u32,
    /// Length of the current fragment (None once past the end).
    cur: Option<u32>,
}

impl<I: Iterator<Item = u32>> Cursor<I> {
    /// Positioned at byte `off` of the list; past the end if it is shorter.
    fn new(mut lens: I, mut off: u32) -> Self {
        let mut idx = 0;
        let mut cur = lens.next();
        while let Some(l) = cur {
            if off < l {
                break;
            }
            off -= l;
            idx += 1;
            cur = lens.next();
        }
        Cursor {
            lens,
            idx,
            pos: off,
            cur,
        }
    }

    /// Bytes left in the current fragment, skipping empty fragments.
    fn room(&mut self) -> Option<u32> {
        loop {
            let l = self.cur?;
            if self.pos < l {
                return Some(l - self.pos);
            }
            self.idx += 1;
            self.pos = 0;
            self.cur = self.lens.next();
        }
    }

    fn advance(&mut self, n: u32) {
        self.pos += n;
    }
}

/// The copy plan of `len` bytes from byte `soff` of the source list to
/// byte `doff` of the destination list. It stops early where either list
/// ends.
pub fn plan<D, S>(dst: D, doff: u32, src: S, soff: u32, len: u32) -> Plan<D, S>
where
    D: Iterator<Item = u32>,
    S: Iterator<Item = u32>,
{
    Plan {
        dst: Cursor::new(dst, doff),
        src: Cursor::new(src, soff),
        left: len,
    }
}

/// Iterator returned by [`plan`].
pub struct Plan<D, S> {
    dst: Cursor<D>,
    src: Cursor<S>,
    left: u32,
}

impl<D: Iterator<Item = u32>, S: Iterator<Item = u32>> Iterator for Plan<D, S> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        if self.left == 0 {
            return None;
        }
        let d = self.dst.room()?;
        let s = self.src.room()?;
        let n = d.min(s).min(self.left);
        let step = Step {
            dst: (self.dst.idx, self.dst.pos),
            src: (self.src.idx, self.src.pos),
            len: n,
        };
        self.dst.advance(n);
        self.src.advance(n);
        self.left -= n;
        Some(step)
    }
}

/// Total bytes of a fragment list, or None if it overflows 32 bits.
pub fn total(lens: impl Iterator<Item = u32>) -> Option<u32> {
    lens.into_iter().try_fold(0u32, |acc, l| acc.checked_add(l))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    fn steps(d: &[u32], doff: u32, s: &[u32], soff: u32, len: u32) -> Vec<Step> {
        plan(d.iter().copied(), doff, s.iter().copied(), soff, len).collect()
    }

    #[test]
    fn page_to_page() {
        assert_eq!(
            steps(&[4096, 4096], 0, &[4096, 4096], 0, 8192),
            [
                Step {
                    dst: (0, 0),
                    src: (0, 0),
                    len: 4096
                },
                Step {
                    dst: (1, 0),
                    src: (1, 0),
                    len: 4096
                },
            ]
        );
    }

    #[test]
    fn offsets_and_misaligned_fragments() {
        assert_eq!(
            steps(&[10, 10], 5, &[3, 20], 2, 9),
            [
                Step {
                    dst: (0, 5),
                    src: (0, 2),
                    len: 1
                },
                Step {
                    dst: (0, 6),
                    src: (1, 0),
                    len: 4
                },
                Step {
                    dst: (1, 0),
                    src: (1, 4),
                    len: 4
                },
            ]
        );
    }

    #[test]
    fn stops_where_a_list_ends() {
        assert_eq!(
            steps(&[4], 0, &[10], 0, 10)
                .iter()
                .map(|s| s.len)
                .sum::<u32>(),
            4
        );
        assert!(steps(&[4], 4, &[10], 0, 10).is_empty());
        assert!(steps(&[4], 0, &[10], 11, 1).is_empty());
        assert!(steps(&[0, 0, 4], 0, &[0, 4], 0, 4).len() == 1);
    }

    proptest! {
        /// Byte for byte the plan equals a flat copy, and it never names a
        /// position outside a fragment.
        #[test]
        fn equals_flat_copy(
            d in proptest::collection::vec(0u32..40, 0..8),
            s in proptest::collection::vec(0u32..40, 0..8),
            doff in 0u32..120, soff in 0u32..120, len in 0u32..200,
        ) {
            let dt: u32 = d.iter().sum();
            let st: u32 = s.iter().sum();
            let expect = len.min(dt.saturating_sub(doff)).min(st.saturating_sub(soff));
            let mut flat_d = std::vec![0u32; dt as usize];
            let mut got = 0;
            let dstart: Vec<u32> = d.iter().scan(0, |a, l| { let o = *a; *a += l; Some(o) }).collect();
            let sstart: Vec<u32> = s.iter().scan(0, |a, l| { let o = *a; *a += l; Some(o) }).collect();
            for st in steps(&d, doff, &s, soff, len) {
                prop_assert!(st.len > 0);
                prop_assert!(st.dst.1 + st.len <= d[st.dst.0]);
                prop_assert!(st.src.1 + st.len <= s[st.src.0]);
                for k in 0..st.len {
                    // Source byte value = its flat position + 1.
                    let sv = sstart[st.src.0] + st.src.1 + k + 1;
                    flat_d[(dstart[st.dst.0] + st.dst.1 + k) as usize] = sv;
                }
                got += st.len;
            }
            prop_assert_eq!(got, expect);
            for k in 0..expect {
                prop_assert_eq!(flat_d[(doff + k) as usize], soff + k + 1);
            }
        }
    }
}
