//! The `ip2nets=` module parameter (`lnet_match_networks`): entries
//! separated by `;` or newlines, `#` comments to the end of a line, each
//! entry a networks spec (`tcp(eth0),tcp1(eth1)`, no spaces) followed by
//! IPv4 address patterns. An entry whose patterns match one of this node's
//! addresses contributes its networks, unless one of its nets came from an
//! earlier entry; the networks string is those contributions joined by
//! commas.
//!
//! A pattern is four octets, each `*`, a range `a`, `a-b` or `a-b/stride`,
//! or a bracketed comma list of ranges: `192.168.[1-3,7].*`.
//!
//! Deliberate differences: an entry with a networks spec but no pattern is
//! an error (Lustre silently never matches it), and octets above 255 are
//! errors.

use super::kstrto;
use super::networks::{self, NiSpec};
use super::nid::Net;
use core::fmt;

/// What is wrong with an ip2nets string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The networks spec of an entry is not one `networks=` accepts.
    Networks(networks::ErrorKind),
    /// A net appears twice in one entry.
    DuplicateNet,
    /// An entry with no address pattern.
    NoPattern,
    /// An address pattern that does not parse.
    BadPattern,
    /// No entry matches this node's addresses.
    NoMatch,
    /// The networks string does not fit the buffer, or too many nets.
    TooLong,
}

/// An error and the byte offset in the ip2nets string it was found at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    /// Offset in the string.
    pub at: usize,
    /// What is wrong.
    pub kind: ErrorKind,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Networks(k) => {
                let e = networks::Error {
                    at: self.at,
                    kind: k,
                };
                return write!(f, "bad networks spec: {e}");
            }
            ErrorKind::DuplicateNet => "network named twice in one entry",
            ErrorKind::NoPattern => "entry without an address pattern",
            ErrorKind::BadPattern => "bad address pattern",
            ErrorKind::NoMatch => "ip2nets does not match any local IP interfaces",
            ErrorKind::TooLong => "too many matched networks",
        };
        write!(f, "{what} at offset {}", self.at)
    }
}

/// Most nets one ip2nets string may select.
const MAX_NETS: usize = 32;

/// One entry: where its text starts, its networks spec and its patterns.
struct Entry<'a> {
    at: usize,
    text: &'a str,
}

/// The entries of the string, comments and blank entries skipped.
fn entries(s: &str) -> impl Iterator<Item = Entry<'_>> {
    let b = s.as_bytes();
    let mut pos = 0usize;
    core::iter::from_fn(move || {
        while pos < b.len() {
            let start = pos;
            while b
                .get(pos)
                .is_some_and(|&c| c != b';' && c != b'\n' && c != b'#')
            {
                pos += 1;
            }
            let end = pos;
            if b.get(pos) == Some(&b'#') {
                while b.get(pos).is_some_and(|&c| c != b';' && c != b'\n') {
                    pos += 1;
                }
            }
            pos += 1;
            let text = s.get(start..end).unwrap_or("");
            let lead = text.len() - text.trim_start().len();
            if !text.trim().is_empty() {
                return Some(Entry {
                    at: start + lead,
                    text: text.trim(),
                });
            }
        }
        None
    })
}

/// The whitespace-separated tokens of an entry, with their offsets in it.
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_ascii_whitespace().map(move |t| {
        (
            (t.as_ptr() as usize).saturating_sub(text.as_ptr() as usize),
            t,
        )
    })
}

/// One octet range: `*`, `a`, `a-b` or `a-b/stride`.
fn range_matches(expr: &str, v: u32) -> Option<bool> {
    if expr == "*" {
        return Some(true);
    }
    let (range, stride) = match expr.split_once('/') {
        Some((r, s)) => (r, kstrto::parse_u32(s.as_bytes()).ok()?),
        None => (expr, 1),
    };
    let (lo, hi) = match range.split_once('-') {
        Some((a, b)) => (
            kstrto::parse_u32(a.as_bytes()).ok()?,
            kstrto::parse_u32(b.as_bytes()).ok()?,
        ),
        None => {
            let n = kstrto::parse_u32(range.as_bytes()).ok()?;
            (n, n)
        }
    };
    if lo > hi || hi > 255 || stride == 0 {
        return None;
    }
    Some(v >= lo && v <= hi && (v - lo) % stride == 0)
}

/// Whether address `addr` (host order) matches `pattern`; `None` if the
/// pattern does not parse.
pub fn pattern_matches(pattern: &str, addr: u32) -> Option<bool> {
    let mut octets = pattern.split('.');
    let mut all = true;
    for shift in [24u32, 16, 8, 0] {
        let o = octets.next()?;
        let v = (addr >> shift) & 0xff;
        let hit = match o.strip_prefix('[') {
            Some(inner) => {
                let inner = inner.strip_suffix(']')?;
                let mut hit = false;
                for item in inner.split(',') {
                    hit |= range_matches(item, v)?;
                }
                hit
            }
            None => range_matches(o, v)?,
        };
        all &= hit;
    }
    if octets.next().is_some() {
        return None;
    }
    Some(all)
}

/// The nets of a networks spec, checked; `at` is its offset for errors.
fn spec_nets(spec: &str, at: usize, nets: &mut [Net; MAX_NETS]) -> Result<usize, Error> {
    let shift = |e: networks::Error| Error {
        at: at + e.at,
        kind: ErrorKind::Networks(e.kind),
    };
    networks::validate(spec, u32::MAX).map_err(shift)?;
    let mut n = 0usize;
    let mut dup = false;
    let mut full = false;
    let walked = networks::for_each_ni(spec, u32::MAX, |ni: NiSpec<'_>| {
        let seen = nets.get(..n).is_some_and(|s| s.contains(&ni.net));
        // Several interfaces of one net are one net.
        let same_as_last = n > 0 && nets.get(n - 1) == Some(&ni.net) && ni.iface.is_some();
        if seen && !same_as_last {
            dup = true;
        } else if !seen {
            match nets.get_mut(n) {
                Some(slot) => {
                    *slot = ni.net;
                    n += 1;
                }
                None => full = true,
            }
        }
        Ok::<(), ()>(())
    });
    if walked.is_err() {
        return Err(Error {
            at,
            kind: ErrorKind::Networks(networks::ErrorKind::UnexpectedText),
        });
    }
    if dup {
        return Err(Error {
            at,
            kind: ErrorKind::DuplicateNet,
        });
    }
    if full {
        return Err(Error {
            at,
            kind: ErrorKind::TooLong,
        });
    }
    Ok(n)
}

/// Checks the syntax of every entry.
pub fn validate(ip2nets: &str) -> Result<(), Error> {
    for e in entries(ip2nets) {
        check_entry(&e, &[], &mut [Net::LO; MAX_NETS])?;
    }
    Ok(())
}

/// Checks all of an entry; if it matches one of `addrs`, returns its
/// networks spec and the number of its nets, which are put in `nets`.
fn check_entry<'a>(
    e: &Entry<'a>,
    addrs: &[u32],
    nets: &mut [Net; MAX_NETS],
) -> Result<Option<(&'a str, usize)>, Error> {
    let mut toks = tokens(e.text);
    let Some((spec_at, spec)) = toks.next() else {
        return Ok(None);
    };
    let n = spec_nets(spec, e.at + spec_at, nets)?;
    let mut any_pattern = false;
    let mut matched = false;
    for (at, p) in toks {
        any_pattern = true;
        let bad = Error {
            at: e.at + at,
            kind: ErrorKind::BadPattern,
        };
        pattern_matches(p, 0).ok_or(bad)?;
        for &a in addrs {
            matched |= pattern_matches(p, a).ok_or(bad)?;
        }
    }
    if !any_pattern {
        return Err(Error {
            at: e.at,
            kind: ErrorKind::NoPattern,
        });
    }
    Ok(matched.then_some((spec, n)))
}

/// The networks string ip2nets selects for a node with addresses `addrs`
/// (host order, loopback excluded), written into `out`; returns its
/// length. Every entry is checked, matching or not.
pub fn resolve(ip2nets: &str, addrs: &[u32], out: &mut [u8]) -> Result<usize, Error> {
    let mut chosen = [Net::LO; MAX_NETS];
    let mut nchosen = 0usize;
    let mut len = 0usize;
    for e in entries(ip2nets) {
        let mut nets = [Net::LO; MAX_NETS];
        let Some((spec, n)) = check_entry(&e, addrs, &mut nets)? else {
            continue;
        };
        let mine = nets.get(..n).unwrap_or(&[]);
        // An entry naming a net an earlier one gave is passed over whole.
        if mine
            .iter()
            .any(|x| chosen.get(..nchosen).is_some_and(|c| c.contains(x)))
        {
            continue;
        }
        let too_long = Error {
            at: e.at,
            kind: ErrorKind::TooLong,
        };
        for &x in mine {
            *chosen.get_mut(nchosen).ok_or(too_long)? = x;
            nchosen += 1;
        }
        let sep: &[u8] = if len == 0 { b"" } else { b"," };
        for part in [sep, spec.as_bytes()] {
            let end = len.checked_add(part.len()).ok_or(too_long)?;
            out.get_mut(len..end).ok_or(too_long)?.copy_from_slice(part);
            len = end;
        }
    }
    if len == 0 {
        return Err(Error {
            at: 0,
            kind: ErrorKind::NoMatch,
        });
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    const A: u32 = 0x0a01_0001; // 10.1.0.1
    const B: u32 = 0x0a02_0001; // 10.2.0.1

    fn run(s: &str, addrs: &[u32]) -> Result<std::string::String, Error> {
        let mut buf = [0u8; 256];
        let n = resolve(s, addrs, &mut buf)?;
        Ok(std::string::String::from_utf8(buf[..n].to_vec()).unwrap())
    }

    #[test]
    fn patterns() {
        assert_eq!(pattern_matches("10.1.0.1", A), Some(true));
        assert_eq!(pattern_matches("10.1.*.*", A), Some(true));
        assert_eq!(pattern_matches("10.[1-2].0.*", B), Some(true));
        assert_eq!(pattern_matches("10.[1,3].0.*", B), Some(false));
        assert_eq!(pattern_matches("10.1-2.0.[0-10/2]", A), Some(false));
        assert_eq!(pattern_matches("10.1-2.0.[1-9/2]", A), Some(true));
        assert_eq!(pattern_matches("10.1.0", A), None);
        assert_eq!(pattern_matches("10.1.0.1.5", A), None);
        assert_eq!(pattern_matches("10.1.0.256", A), None);
        assert_eq!(pattern_matches("10.1.0.[1", A), None);
        assert_eq!(pattern_matches("10.1.0.[5-1]", A), None);
        assert_eq!(pattern_matches("10.1.0.[1-5/0]", A), None);
        assert_eq!(pattern_matches("a.b.c.d", A), None);
    }

    #[test]
    fn entries_and_matching() {
        let s = "tcp(eth0) 10.1.0.*; tcp1(eth1) 10.2.0.* # rail 2\n o2ib 192.168.*.*";
        assert_eq!(run(s, &[A, B]).as_deref(), Ok("tcp(eth0),tcp1(eth1)"));
        assert_eq!(run(s, &[B]).as_deref(), Ok("tcp1(eth1)"));
        // First match of a net wins; a later entry naming it is skipped.
        let s = "tcp(eth0) 10.1.0.1; tcp(eth1),tcp2 10.2.0.1; tcp2 10.2.0.1";
        assert_eq!(run(s, &[A, B]).as_deref(), Ok("tcp(eth0),tcp2"));
        // Comments, blank entries, several patterns.
        let s = "#all\n;; tcp 1.2.3.4 10.1.0.[1-3] ;";
        assert_eq!(run(s, &[A]).as_deref(), Ok("tcp"));
        let e = run("tcp 1.2.3.4", &[A]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NoMatch);
        assert_eq!(
            std::format!("{e}"),
            "ip2nets does not match any local IP interfaces at offset 0"
        );
    }

    #[test]
    fn errors_carry_offsets() {
        let e = validate("tcp 10.1.0.*; tcpx(eth0) 10.*.*.*").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Networks(_)));
        assert_eq!(e.at, 14);
        let e = validate("tcp 10.1.0.*; tcp1 10.1.x.1").unwrap_err();
        assert_eq!((e.at, e.kind), (19, ErrorKind::BadPattern));
        let e = validate("  tcp(eth0)").unwrap_err();
        assert_eq!((e.at, e.kind), (2, ErrorKind::NoPattern));
        let e = validate("tcp,tcp 10.*.*.*").unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateNet);
        assert_eq!(validate("tcp(eth0,eth1) 10.*.*.*"), Ok(()));
        assert_eq!(validate(""), Ok(()));
    }

    #[test]
    fn output_that_does_not_fit_is_an_error() {
        let mut buf = [0u8; 4];
        let e = resolve("tcp(eth0) 10.*.*.*", &[A], &mut buf).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooLong);
    }
}
