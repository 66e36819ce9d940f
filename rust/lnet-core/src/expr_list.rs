//! Lustre's expression lists (`cfs_expr_list`): a number, `*`, or a
//! bracketed list of numbers and ranges with an optional stride, such as
//! `[0-3/2,7]`. PtlRPC reads CPU partition lists in this form; each octet
//! of a NID list's IPv4 ranges is one (`192.168.[1-2].[1-254/2]`).
//!
//! Parsing follows `cfs_expr_list_parse` (numbers as `kstrtouint(.., 0, ..)`
//! reads them, whitespace around tokens ignored), with one deliberate
//! difference: a stride of 0 is refused, where Lustre accepts it when the
//! minimum is 0 and then divides by it when matching or listing values.

use super::kstrto;
use core::fmt;

/// The only error of expression lists: the text does not fit the syntax
/// or the bounds (`-EINVAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadExpr;

/// One `<range_expr>`: the values `lo`, `lo + stride`, ... up to `hi`.
///
/// # Invariants
///
/// `lo <= hi` and `stride >= 1` for every value made by [`parse_range`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeExpr {
    /// The first value.
    pub lo: u32,
    /// The last value that may be reached.
    pub hi: u32,
    /// The step between values.
    pub stride: u32,
}

/// The blanks `strim` removes (the kernel's `isspace`).
pub(crate) fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `s` without leading and trailing blanks (the kernel's `strim`).
pub(crate) fn strim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|c| !is_blank(*c)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|c| !is_blank(*c))
        .map_or(start, |e| e + 1);
    s.get(start..end).unwrap_or(&[])
}

fn number(s: &[u8], min: u32, max: u32) -> Result<u32, BadExpr> {
    let n = kstrto::parse_u32(strim(s)).map_err(|_| BadExpr)?;
    if n < min || n > max {
        return Err(BadExpr);
    }
    Ok(n)
}

/// Parses one `<range_expr>` bounded by `min..=max`: `*` (the whole
/// span), a number, and, when `bracketed`, `lo-hi` or `lo-hi/stride`.
pub fn parse_range(src: &[u8], min: u32, max: u32, bracketed: bool) -> Result<RangeExpr, BadExpr> {
    let src = strim(src);
    let single = |v| RangeExpr {
        lo: v,
        hi: v,
        stride: 1,
    };
    let re = if src == b"*" {
        RangeExpr {
            lo: min,
            hi: max,
            stride: 1,
        }
    } else if let Ok(n) = kstrto::parse_u32(src) {
        if n < min || n > max {
            return Err(BadExpr);
        }
        single(n)
    } else {
        if !bracketed {
            return Err(BadExpr);
        }
        let dash = src.iter().position(|c| *c == b'-').ok_or(BadExpr)?;
        let lo = number(src.get(..dash).unwrap_or(&[]), min, max)?;
        let rest = src.get(dash + 1..).unwrap_or(&[]);
        if let Ok(hi) = kstrto::parse_u32(strim(rest)) {
            if hi < min || hi > max {
                return Err(BadExpr);
            }
            RangeExpr { lo, hi, stride: 1 }
        } else {
            let slash = rest.iter().position(|c| *c == b'/').ok_or(BadExpr)?;
            let hi = number(rest.get(..slash).unwrap_or(&[]), min, max)?;
            let stride = number(rest.get(slash + 1..).unwrap_or(&[]), min, max)?;
            // A stride of 0 would divide by zero when matching.
            if stride == 0 {
                return Err(BadExpr);
            }
            RangeExpr { lo, hi, stride }
        }
    };
    if re.lo > re.hi || re.stride == 0 {
        return Err(BadExpr);
    }
    Ok(re)
}

impl RangeExpr {
    /// Whether `v` is one of the values.
    pub fn matches(&self, v: u32) -> bool {
        v >= self.lo && v <= self.hi && (v - self.lo) % self.stride.max(1) == 0
    }

    /// How many values there are (at least 1).
    pub fn count(&self) -> u64 {
        u64::from(self.hi.saturating_sub(self.lo)) / u64::from(self.stride.max(1)) + 1
    }

    /// The values, in increasing order.
    pub fn values(&self) -> impl Iterator<Item = u32> {
        let (lo, hi, stride) = (self.lo, self.hi, self.stride.max(1));
        core::iter::successors(Some(lo), move |v| v.checked_add(stride))
            .take_while(move |v| *v <= hi)
    }

    /// This range as Lustre prints it: `5`, `[1-5]`, `[1-5/2]`; without
    /// the brackets inside a bracketed list.
    pub fn display(&self, bracketed: bool) -> impl fmt::Display + '_ {
        RangeDisplay {
            re: self,
            bracketed,
        }
    }
}

struct RangeDisplay<'a> {
    re: &'a RangeExpr,
    bracketed: bool,
}

impl fmt::Display for RangeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let re = self.re;
        if re.lo == re.hi {
            return write!(f, "{}", re.lo);
        }
        let (open, close) = if self.bracketed { ("", "") } else { ("[", "]") };
        if re.stride == 1 {
            write!(f, "{open}{}-{}{close}", re.lo, re.hi)
        } else {
            write!(f, "{open}{}-{}/{}{close}", re.lo, re.hi, re.stride)
        }
    }
}

/// The ranges of an expression list text, in order, as
/// `cfs_expr_list_parse` reads them: `[a,b-c,d-e/f]` or one `<range_expr>`
/// without brackets (a number or `*`). The caller stops at the first
/// error; a list with no range is never produced.
pub fn parse(s: &[u8], min: u32, max: u32) -> Ranges<'_> {
    match s {
        [b'[', inner @ .., b']'] => Ranges {
            rest: Some(inner),
            min,
            max,
            bracketed: true,
        },
        _ => Ranges {
            rest: Some(s),
            min,
            max,
            bracketed: false,
        },
    }
}

/// The iterator [`parse`] returns.
pub struct Ranges<'a> {
    rest: Option<&'a [u8]>,
    min: u32,
    max: u32,
    bracketed: bool,
}

impl Iterator for Ranges<'_> {
    type Item = Result<RangeExpr, BadExpr>;

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.rest.take()?;
        if !self.bracketed {
            return Some(parse_range(s, self.min, self.max, false));
        }
        let tok = match s.iter().position(|c| *c == b',') {
            Some(i) => {
                self.rest = s.get(i + 1..);
                s.get(..i).unwrap_or(&[])
            }
            None => s,
        };
        // An empty item ("[1,,2]", "[]") is an error; blanks are not empty.
        let r = if tok.is_empty() {
            Err(BadExpr)
        } else {
            parse_range(tok, self.min, self.max, true)
        };
        if r.is_err() {
            self.rest = None;
        }
        Some(r)
    }
}

/// The number of values of `exprs` (`cfs_expr_list_values`' count),
/// saturating.
pub fn count<'a>(exprs: impl IntoIterator<Item = &'a RangeExpr>) -> u64 {
    exprs
        .into_iter()
        .fold(0u64, |n, re| n.saturating_add(re.count()))
}

/// Whether `v` is a value of `exprs` (`cfs_expr_list_match`).
pub fn matches<'a>(exprs: impl IntoIterator<Item = &'a RangeExpr>, v: u32) -> bool {
    exprs.into_iter().any(|re| re.matches(v))
}

/// An expression list as `cfs_expr_list_print` writes it: one range alone,
/// several in brackets separated by commas.
pub struct ListDisplay<'a>(pub &'a [RangeExpr]);

impl fmt::Display for ListDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let several = self.0.len() > 1;
        if several {
            f.write_str("[")?;
        }
        for (i, re) in self.0.iter().enumerate() {
            if i != 0 {
                f.write_str(",")?;
            }
            write!(f, "{}", re.display(several))?;
        }
        if several {
            f.write_str("]")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use proptest::prelude::*;
    use std::string::ToString;
    use std::vec::Vec;

    fn list(s: &str, min: u32, max: u32) -> Result<Vec<RangeExpr>, BadExpr> {
        parse(s.as_bytes(), min, max).collect()
    }

    fn values(s: &str, min: u32, max: u32) -> Vec<u32> {
        list(s, min, max)
            .unwrap_or_else(|_| panic!("{s:?}"))
            .iter()
            .flat_map(|re| re.values())
            .collect()
    }

    fn re(lo: u32, hi: u32, stride: u32) -> RangeExpr {
        RangeExpr { lo, hi, stride }
    }

    #[test]
    fn cpt_patterns() {
        // PtlRPC's CPT patterns (ptlrpcd_cpts, a service's cc_pattern).
        assert_eq!(values("[0-3/2,7]", 0, 7), [0, 2, 7]);
        assert_eq!(values("[0-3]", 0, 3), [0, 1, 2, 3]);
        assert_eq!(values("2", 0, 3), [2]);
        assert_eq!(values("*", 0, 3), [0, 1, 2, 3]);
        assert_eq!(values("[*]", 1, 2), [1, 2]);
        assert_eq!(values("[ 1 , 3 - 5 / 2 ]", 0, 7), [1, 3, 5]);
        assert_eq!(values("0x3", 0, 7), [3]);
        assert_eq!(values("[010]", 0, 9), [8]);
        assert_eq!(values("[0-7/3]", 0, 7), [0, 3, 6]);
        assert_eq!(values("[1-1]", 0, 7), [1]);
        assert_eq!(values("[3,1,3]", 0, 7), [3, 1, 3]);
        assert_eq!(
            values("[0-4294967295/2147483648]", 0, u32::MAX),
            [0, 1 << 31]
        );
    }

    #[test]
    fn refused() {
        for bad in [
            "",
            "[]",
            "[ ]",
            "[1,]",
            "[,1]",
            "[1,,2]",
            "1-3",
            "[3-1]",
            "[1-]",
            "[-1]",
            "[1-3/]",
            "[1-3/0]",
            "[1-3/2/1]",
            "8",
            "[0-8]",
            "[0-3/8]",
            "x",
            "[x]",
            "1 2",
            "[1",
            "1]",
            "-1",
            "[1-3-4]",
        ] {
            assert_eq!(list(bad, 0, 7), Err(BadExpr), "{bad:?}");
        }
        assert_eq!(list("1", 2, 7), Err(BadExpr));
        assert_eq!(list("4294967296", 0, u32::MAX), Err(BadExpr));
    }

    #[test]
    fn matching_and_counting() {
        let l = list("[0-10/5,7]", 0, 255).unwrap_or_default();
        assert_eq!(l, [re(0, 10, 5), re(7, 7, 1)]);
        assert_eq!(count(&l), 4);
        for v in [0, 5, 10, 7] {
            assert!(matches(&l, v));
        }
        for v in [1, 6, 11, 255] {
            assert!(!matches(&l, v));
        }
        assert_eq!(count(&[re(0, u32::MAX, 1)]), 1 << 32);
    }

    #[test]
    fn printing() {
        let p = |s: &str| ListDisplay(&list(s, 0, 255).unwrap_or_default()).to_string();
        assert_eq!(p("7"), "7");
        assert_eq!(p("[1-5]"), "[1-5]");
        assert_eq!(p("[1-5/2]"), "[1-5/2]");
        assert_eq!(p("[1-5/2,9]"), "[1-5/2,9]");
        assert_eq!(p("[ 3 ]"), "3");
        assert_eq!(p("*"), "[0-255]");
        assert_eq!(p("[4-4/3]"), "4");
    }

    fn any_range(max: u32) -> impl Strategy<Value = RangeExpr> {
        (0..=max, 0..=max, 1..=max.max(1)).prop_map(|(a, b, s)| re(a.min(b), a.max(b), s))
    }

    proptest! {
        #[test]
        fn print_then_parse(l in proptest::collection::vec(any_range(300), 1..5)) {
            let text = ListDisplay(&l).to_string();
            let back = list(&text, 0, 300);
            // Printing drops the stride of single values only.
            let norm: Vec<_> = l.iter().map(|r| if r.lo == r.hi { re(r.lo, r.hi, 1) } else { *r }).collect();
            prop_assert_eq!(back, Ok(norm), "{}", text);
        }

        #[test]
        fn values_match_and_count(r in any_range(1000), v in 0u32..1100) {
            let vals: Vec<u32> = r.values().collect();
            prop_assert_eq!(vals.len() as u64, r.count());
            prop_assert_eq!(vals.contains(&v), r.matches(v));
        }

        #[test]
        fn never_panics(s in proptest::collection::vec(any::<u8>(), 0..24), min in 0u32..5, max in 0u32..300) {
            for r in parse(&s, min, max).flatten() {
                prop_assert!(r.lo <= r.hi && r.stride >= 1 && r.lo >= min && r.hi <= max);
            }
        }
    }
}
