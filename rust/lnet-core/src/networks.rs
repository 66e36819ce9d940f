//! The `networks=` module parameter: `tcp(eth0,eth1),tcp1(eth2)`, with
//! optional CPT lists (`o2ib[0,1]`, `tcp(eth0[0],eth1[1])`), as
//! `lnet_parse_networks` reads it. Each interface in parentheses is its own
//! NI on that net (one rail each); a net with no interface list is one NI.
//! `lo` is implicit and skipped.
//!
//! Deliberate differences: text after a net spec that is not a `,` is an
//! error (Lustre ignores it silently up to the next comma), and an empty net
//! (`tcp,,o2ib`, a trailing comma) is an error.
//!
//! The parser allocates nothing: it hands each NI to a callback.

use super::kstrto;
use super::nid::{Net, NidError};
use core::fmt;

/// One NI a networks string asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NiSpec<'a> {
    /// Its net.
    pub net: Net,
    /// Its interface, if one was named.
    pub iface: Option<&'a str>,
    /// Its CPT expression (the interface's, else the net's), if any.
    pub cpts: Option<&'a str>,
}

/// What is wrong with a networks string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Not a network name Lustre knows.
    UnknownNet(NidError),
    /// A net spec with no name.
    EmptyNet,
    /// `(` with no `)`.
    UnclosedParen,
    /// `[` with no `]`.
    UnclosedBracket,
    /// An empty interface name: `tcp()`, `tcp(,eth0)`, `tcp(eth0,)`.
    EmptyInterface,
    /// Something other than `,` after a spec or an interface.
    UnexpectedText,
    /// A bad CPT expression.
    BadCpt,
    /// The same interface twice on one net.
    DuplicateInterface,
}

/// A syntax error and the byte offset it was found at.
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
            ErrorKind::UnknownNet(e) => return write!(f, "{e} at offset {}", self.at),
            ErrorKind::EmptyNet => "empty network",
            ErrorKind::UnclosedParen => "'(' without ')'",
            ErrorKind::UnclosedBracket => "'[' without ']'",
            ErrorKind::EmptyInterface => "empty interface name",
            ErrorKind::UnexpectedText => "unexpected text",
            ErrorKind::BadCpt => "bad CPT list",
            ErrorKind::DuplicateInterface => "interface named twice on one network",
        };
        write!(f, "{what} at offset {}", self.at)
    }
}

const SPACE: &[u8] = b" \t\x0b\r\n";

struct Scan<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| SPACE.contains(&c)) {
            self.pos += 1;
        }
    }

    fn err(&self, kind: ErrorKind) -> Error {
        Error { at: self.pos, kind }
    }

    /// Text up to (not including) any byte of `stop`.
    fn until(&mut self, stop: &[u8]) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|c| !stop.contains(&c)) {
            self.pos += 1;
        }
        self.s.get(start..self.pos).unwrap_or("")
    }

    /// A `[...]` CPT list if one starts here, checked against `ncpts`.
    fn cpts(&mut self, ncpts: u32) -> Result<Option<&'a str>, Error> {
        if self.peek() != Some(b'[') {
            return Ok(None);
        }
        self.pos += 1;
        let start = self.pos;
        let inner = self.until(b"]");
        if self.peek() != Some(b']') {
            return Err(self.err(ErrorKind::UnclosedBracket));
        }
        if !cpt_list_valid(inner, ncpts) {
            return Err(Error {
                at: start,
                kind: ErrorKind::BadCpt,
            });
        }
        self.pos += 1;
        self.skip_ws();
        Ok(Some(inner))
    }
}

/// Whether a CPT expression (`0`, `0-3`, `0-7/2`, `*`, comma-separated,
/// numbers as kstrtouint reads them) is valid for `ncpts` partitions.
pub fn cpt_list_valid(expr: &str, ncpts: u32) -> bool {
    let max = ncpts.saturating_sub(1);
    let num = |t: &str| {
        kstrto::parse_u32(
            t.trim_matches(|c: char| SPACE.contains(&(c as u8)))
                .as_bytes(),
        )
        .ok()
    };
    let mut count: u64 = 0;
    for item in expr.split(',') {
        let item = item.trim_matches(|c: char| SPACE.contains(&(c as u8)));
        if item == "*" {
            count += u64::from(ncpts);
            continue;
        }
        let (range, stride) = match item.split_once('/') {
            Some((r, s)) => match num(s) {
                Some(s) if s > 0 => (r, s),
                _ => return false,
            },
            None => (item, 1),
        };
        let (lo, hi) = match range.split_once('-') {
            Some((a, b)) => (num(a), num(b)),
            None => (num(range), num(range)),
        };
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return false;
        };
        if lo > hi || hi > max {
            return false;
        }
        count += u64::from((hi - lo) / stride + 1);
    }
    count <= u64::from(ncpts)
}

/// Parses `networks`, calling `ni` for each NI it asks for, in order.
/// Returns the number of NIs. `ncpts` bounds the CPT lists.
pub fn for_each_ni<'a, E>(
    networks: &'a str,
    ncpts: u32,
    mut ni: impl FnMut(NiSpec<'a>) -> Result<(), E>,
) -> Result<Result<usize, E>, Error> {
    let mut sc = Scan {
        s: networks,
        pos: 0,
    };
    let mut n = 0usize;
    loop {
        sc.skip_ws();
        let name_at = sc.pos;
        let name = sc.until(b" \t\x0b\r\n:()[],");
        if name.is_empty() {
            return Err(sc.err(ErrorKind::EmptyNet));
        }
        let net = Net::parse(name).map_err(|e| Error {
            at: name_at,
            kind: ErrorKind::UnknownNet(e),
        })?;
        sc.skip_ws();
        let mut ifaces = None;
        if sc.peek() == Some(b'(') {
            sc.pos += 1;
            let start = sc.pos;
            sc.until(b")");
            if sc.peek() != Some(b')') {
                return Err(Error {
                    at: start - 1,
                    kind: ErrorKind::UnclosedParen,
                });
            }
            ifaces = Some((start, sc.pos));
            sc.pos += 1;
            sc.skip_ws();
        }
        let net_cpts = sc.cpts(ncpts)?;
        match sc.peek() {
            None | Some(b',') => {}
            Some(_) => return Err(sc.err(ErrorKind::UnexpectedText)),
        }
        let next = sc.pos + 1;
        if net != Net::LO {
            match ifaces {
                None => {
                    if let Err(e) = ni(NiSpec {
                        net,
                        iface: None,
                        cpts: net_cpts,
                    }) {
                        return Ok(Err(e));
                    }
                    n += 1;
                }
                Some((start, end)) => {
                    let mut il = Scan {
                        s: networks.get(..end).unwrap_or(""),
                        pos: start,
                    };
                    loop {
                        il.skip_ws();
                        let iface = il.until(b" \t\x0b\r\n[],");
                        if iface.is_empty() {
                            return Err(il.err(ErrorKind::EmptyInterface));
                        }
                        il.skip_ws();
                        let cpts = il.cpts(ncpts)?.or(net_cpts);
                        if let Err(e) = ni(NiSpec {
                            net,
                            iface: Some(iface),
                            cpts,
                        }) {
                            return Ok(Err(e));
                        }
                        n += 1;
                        match il.peek() {
                            None => break,
                            Some(b',') => il.pos += 1,
                            Some(_) => return Err(il.err(ErrorKind::UnexpectedText)),
                        }
                    }
                }
            }
        }
        if sc.peek().is_none() {
            return Ok(Ok(n));
        }
        sc.pos = next;
    }
}

/// Checks a whole networks string, including that no interface is named
/// twice on one net; returns the number of NIs.
pub fn validate(networks: &str, ncpts: u32) -> Result<usize, Error> {
    let mut index = 0usize;
    let r = for_each_ni(networks, ncpts, |spec| {
        let this = index;
        index += 1;
        let mut j = 0usize;
        let mut dup = false;
        // Small lists: compare with every earlier NI by parsing again.
        let _ = for_each_ni(networks, ncpts, |other| {
            if j < this
                && other.iface.is_some()
                && other.net == spec.net
                && other.iface == spec.iface
            {
                dup = true;
            }
            j += 1;
            Ok::<(), ()>(())
        });
        match (dup, spec.iface) {
            // The name is a slice of `networks`: its offset is the distance
            // between the two starts.
            (true, Some(name)) => {
                Err((name.as_ptr() as usize).saturating_sub(networks.as_ptr() as usize))
            }
            _ => Ok(()),
        }
    })?;
    r.map_err(|at| Error {
        at,
        kind: ErrorKind::DuplicateInterface,
    })
}

#[cfg(test)]
mod tests {
    use super::super::nid::lnd;
    use super::*;
    extern crate std;
    use std::vec::Vec;

    fn nis(s: &str) -> Vec<(std::string::String, Option<&str>, Option<&str>)> {
        let mut v = Vec::new();
        for_each_ni(s, 4, |n| {
            v.push((std::format!("{}", n.net), n.iface, n.cpts));
            Ok::<(), ()>(())
        })
        .unwrap_or_else(|e| panic!("{s:?}: {e}"))
        .unwrap();
        v
    }

    fn err(s: &str) -> ErrorKind {
        match validate(s, 4) {
            Err(e) => e.kind,
            Ok(n) => panic!("{s:?} accepted with {n} NIs"),
        }
    }

    #[test]
    fn lustre_forms() {
        assert_eq!(nis("tcp"), [("tcp".into(), None, None)]);
        assert_eq!(
            nis("tcp(eth0,eth1),tcp1(eth2)"),
            [
                ("tcp".into(), Some("eth0"), None),
                ("tcp".into(), Some("eth1"), None),
                ("tcp1".into(), Some("eth2"), None)
            ]
        );
        assert_eq!(
            nis(" tcp ( eth0 , eth1 ) , o2ib "),
            [
                ("tcp".into(), Some("eth0"), None),
                ("tcp".into(), Some("eth1"), None),
                ("o2ib".into(), None, None)
            ]
        );
        assert_eq!(nis("o2ib[0,1]"), [("o2ib".into(), None, Some("0,1"))]);
        assert_eq!(
            nis("tcp(eth0[0],eth1)[1-2]"),
            [
                ("tcp".into(), Some("eth0"), Some("0")),
                ("tcp".into(), Some("eth1"), Some("1-2"))
            ]
        );
        assert_eq!(nis("lo,tcp"), [("tcp".into(), None, None)]);
        assert_eq!(nis("lo(eth9)[0],tcp"), [("tcp".into(), None, None)]);
        assert_eq!(validate("tcp(eth0,eth1),tcp1(eth0)", 1), Ok(3));
        assert_eq!(Net::parse("tcp").map(|n| n.lnd()), Ok(lnd::SOCK));
    }

    #[test]
    fn syntax_errors() {
        assert!(matches!(err("tcpx"), ErrorKind::UnknownNet(_)));
        assert!(matches!(err("eth0"), ErrorKind::UnknownNet(_)));
        assert_eq!(err(""), ErrorKind::EmptyNet);
        assert_eq!(err("tcp,"), ErrorKind::EmptyNet);
        assert_eq!(err("tcp,,o2ib"), ErrorKind::EmptyNet);
        assert_eq!(err("tcp(eth0"), ErrorKind::UnclosedParen);
        assert_eq!(err("tcp[0"), ErrorKind::UnclosedBracket);
        assert_eq!(err("tcp()"), ErrorKind::EmptyInterface);
        assert_eq!(err("tcp(,eth0)"), ErrorKind::EmptyInterface);
        assert_eq!(err("tcp(eth0,)"), ErrorKind::EmptyInterface);
        assert_eq!(err("tcp(eth0 eth1)"), ErrorKind::UnexpectedText);
        assert_eq!(err("tcp:1"), ErrorKind::UnexpectedText);
        assert_eq!(err("tcp(eth0))"), ErrorKind::UnexpectedText);
        assert_eq!(err("tcp(eth0) foo,o2ib"), ErrorKind::UnexpectedText);
        assert_eq!(err("tcp[9]"), ErrorKind::BadCpt);
        assert_eq!(err("tcp[2-1]"), ErrorKind::BadCpt);
        assert_eq!(err("tcp[]"), ErrorKind::BadCpt);
        assert_eq!(err("tcp(eth0,eth0)"), ErrorKind::DuplicateInterface);
        assert_eq!(
            validate("tcp(eth0), tcp1, tcp(eth0)", 4).map_err(|e| e.at),
            Err(21)
        );
        assert_eq!(err("tcp(eth0),tcp(eth0)"), ErrorKind::DuplicateInterface);
        let e = validate("tcp(eth0),bogus", 4).unwrap_err();
        assert_eq!(e.at, 10);
        assert_eq!(std::format!("{e}"), "unknown network type at offset 10");
    }

    #[test]
    fn cpt_lists() {
        assert!(cpt_list_valid("0", 1));
        assert!(cpt_list_valid("*", 4));
        assert!(cpt_list_valid("0-3", 4));
        assert!(cpt_list_valid("0-3/2", 4));
        assert!(cpt_list_valid(" 0 , 1 ", 2));
        assert!(cpt_list_valid("0x1", 2));
        assert!(!cpt_list_valid("0-4", 4));
        assert!(!cpt_list_valid("0-3/0", 4));
        assert!(!cpt_list_valid("a", 4));
        assert!(!cpt_list_valid("", 4));
        assert!(!cpt_list_valid("0,1,0", 2));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "[ a-z0-9(),\\[\\]*/:-]{0,40}") {
            let _ = validate(&s, 4);
        }
    }
}
