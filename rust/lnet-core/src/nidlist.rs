//! Lustre's NID lists (`cfs_parse_nidlist` and friends): the sets of NIDs
//! that nodemap ranges, root squash exceptions (`nosquash_nids`) and NRS
//! TBF rules are written in.
//!
//! ```text
//! <nidlist>   :== <nidrange> [ ' ' <nidrange> ]
//! <nidrange>  :== <addrrange> '@' <net>
//! <addrrange> :== '*' | <netmask> | <ipv6 address> | <ipv4 range> | <numbers>
//! <netmask>   :== an IPv4 or IPv6 address with a prefix length: 10.0.0.0/8
//! <ipv4 range>:== <numbers> '.' <numbers> '.' <numbers> '.' <numbers>
//! <numbers>   :== an expression list (expr_list.rs): 7, *, [1-5/2,9]
//! <net>       :== an LND name with an optional number: tcp, o2ib1, 0x2 too
//! ```
//!
//! Examples: `192.168.[1-2].[1-254/2]@tcp`, `*@o2ib1`,
//! `10.0.0.[1,3]@tcp 0@lo`, `[1-5]@gni`, `10.1.0.0/16@tcp`,
//! `2001:db8::/32@tcp`. An IPv6 address without a prefix is a /128 mask.
//!
//! Ranges on the same net are gathered under one entry, and a list prints
//! back per net as Lustre's `cfs_print_nidlist` does. Deliberate
//! differences from Lustre, each tested below:
//! - a net number above 65535 is refused (Lustre keeps it, and it can
//!   never match a NID);
//! - an IPv4 or number range matches only NIDs with a 4-byte address
//!   (Lustre tests the first 4 bytes of an IPv6 NID against it);
//! - `*@net` together with ranges on that net prints as `*@net` (Lustre
//!   asserts there are none and stops the node);
//! - a stride of 0 is refused (expr_list.rs).
//!
//! The lists are built in a caller-chosen [`Store`], so the kernel keeps
//! them in `KVec`s (allocation can fail: [`NidListError::NoMem`]) and the
//! host tests in `Vec`s.

use super::expr_list::{self, strim, ListDisplay, RangeExpr};
use super::kstrto;
use super::nid::{lnd, lnd_name, lnd_prefix, Net, Nid};
use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

/// Allocation failed while building a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoMem;

/// A growable sequence the lists are built from.
pub trait Seq<T> {
    /// Appends `v`, or fails without memory.
    fn try_push(&mut self, v: T) -> Result<(), NoMem>;
    /// The elements.
    fn items(&self) -> &[T];
    /// The elements, mutable.
    fn items_mut(&mut self) -> &mut [T];
}

/// Where lists keep their parts (`KVec` in the kernel).
pub trait Store {
    /// The sequence type.
    type Seq<T>: Seq<T>;
    /// An empty sequence (allocates nothing).
    fn seq<T>() -> Self::Seq<T>;
}

/// Why a NID list was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NidListError {
    /// The text does not fit the syntax (`-EINVAL`).
    Invalid,
    /// Allocation failed (`-ENOMEM`).
    NoMem,
}

impl From<NoMem> for NidListError {
    fn from(_: NoMem) -> Self {
        NidListError::NoMem
    }
}

impl From<expr_list::BadExpr> for NidListError {
    fn from(_: expr_list::BadExpr) -> Self {
        NidListError::Invalid
    }
}

/// The errno values of [`NidListError`].
pub const EINVAL: i32 = 22;
/// `ENOMEM`.
pub const ENOMEM: i32 = 12;

impl NidListError {
    /// The negative errno Lustre's functions return.
    pub fn to_errno(self) -> i32 {
        match self {
            NidListError::Invalid => -EINVAL,
            NidListError::NoMem => -ENOMEM,
        }
    }
}

/// A network and prefix length (`<netmask>`), kept with the address as
/// written so that it prints back the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NidMask {
    v6: bool,
    prefix: u8,
    addr: [u8; 16],
    mask: [u8; 16],
}

impl NidMask {
    fn parse(s: &[u8]) -> Result<NidMask, NidListError> {
        let text = core::str::from_utf8(s).map_err(|_| NidListError::Invalid)?;
        let v6 = text.contains(':');
        let max: u32 = if v6 { 128 } else { 32 };
        let (addr_text, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, decimal(p.as_bytes()).ok_or(NidListError::Invalid)?),
            // An IPv6 address alone is one address; IPv4 needs a prefix.
            None if v6 => (text, 128),
            None => return Err(NidListError::Invalid),
        };
        if prefix < 1 || prefix > max {
            return Err(NidListError::Invalid);
        }
        let mut addr = [0u8; 16];
        if v6 {
            let a: Ipv6Addr = addr_text.parse().map_err(|_| NidListError::Invalid)?;
            addr = a.octets();
        } else {
            let a = super::nid::parse_ipv4(addr_text).map_err(|_| NidListError::Invalid)?;
            if let Some(d) = addr.get_mut(..4) {
                d.copy_from_slice(&a.to_be_bytes());
            }
        }
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            let bits = prefix.saturating_sub(8 * i as u32).min(8);
            *m = (0xff00u16 >> bits) as u8;
        }
        Ok(NidMask {
            v6,
            // At most 128 (checked above).
            prefix: prefix as u8,
            addr,
            mask,
        })
    }

    fn len(&self) -> usize {
        if self.v6 {
            16
        } else {
            4
        }
    }

    /// The prefix length.
    pub fn prefix_len(&self) -> u8 {
        self.prefix
    }

    /// Whether the address `a` (4 or 16 bytes, big-endian) is in the
    /// network.
    fn contains(&self, a: &[u8]) -> bool {
        a.len() == self.len()
            && a.iter()
                .zip(self.addr.iter().zip(self.mask.iter()))
                .all(|(x, (y, m))| x & m == y & m)
    }

    fn fmt_addr(&self, f: &mut fmt::Formatter<'_>, with_prefix: bool) -> fmt::Result {
        if self.v6 {
            write!(f, "{}", Ipv6Addr::from(self.addr))?;
        } else {
            let [a, b, c, d, ..] = self.addr;
            write!(f, "{}", Ipv4Addr::new(a, b, c, d))?;
        }
        let max = if self.v6 { 128 } else { 32 };
        if with_prefix && self.prefix < max {
            write!(f, "/{}", self.prefix)?;
        }
        Ok(())
    }
}

/// `kstrtouint(s, 10, ..)`: decimal, an optional `+` and trailing newline.
fn decimal(s: &[u8]) -> Option<u32> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let s = s.strip_suffix(b"\n").unwrap_or(s);
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    core::str::from_utf8(s).ok()?.parse().ok()
}

/// An `<ipv4 range>` (four groups) or `<numbers>` (one group): the
/// expressions of every group, one after the other.
pub struct AddrRange<S: Store> {
    exprs: S::Seq<RangeExpr>,
    /// Where each group's expressions end in `exprs`.
    ends: [usize; 4],
    groups: usize,
}

impl<S: Store> AddrRange<S> {
    fn group(&self, g: usize) -> &[RangeExpr] {
        let start = match g.checked_sub(1) {
            Some(p) => self.ends.get(p).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(g).copied().unwrap_or(0);
        self.exprs.items().get(start..end).unwrap_or(&[])
    }

    fn add_group(&mut self, text: &[u8], max: u32) -> Result<(), NidListError> {
        let g = self.groups;
        if g >= self.ends.len() {
            return Err(NidListError::Invalid);
        }
        for re in expr_list::parse(text, 0, max) {
            self.exprs.try_push(re?)?;
        }
        if let Some(e) = self.ends.get_mut(g) {
            *e = self.exprs.items().len();
        }
        self.groups = g + 1;
        Ok(())
    }

    fn matches(&self, addr: u32, ip: bool) -> bool {
        if ip {
            self.groups == 4
                && addr
                    .to_be_bytes()
                    .iter()
                    .enumerate()
                    .all(|(g, b)| expr_list::matches(self.group(g), u32::from(*b)))
        } else {
            self.groups == 1 && expr_list::matches(self.group(0), addr)
        }
    }
}

impl<S: Store> fmt::Display for AddrRange<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for g in 0..self.groups {
            if g != 0 {
                f.write_str(".")?;
            }
            write!(f, "{}", ListDisplay(self.group(g)))?;
        }
        Ok(())
    }
}

/// Everything a list says about one net (Lustre's `struct nidrange`).
pub struct NidRange<S: Store> {
    net: Net,
    ip: bool,
    all: bool,
    masks: S::Seq<NidMask>,
    addrs: S::Seq<AddrRange<S>>,
}

impl<S: Store> NidRange<S> {
    fn matches(&self, nid: &Nid) -> bool {
        if nid.is_any() || nid.net() != self.net {
            return false;
        }
        if self.all {
            return true;
        }
        // Lustre tests netmasks only on its socklnd and o2iblnd nets.
        let masks_apply = matches!(self.net.lnd(), lnd::SOCK | lnd::O2IB);
        if masks_apply
            && self
                .masks
                .items()
                .iter()
                .any(|m| m.contains(nid.addr_bytes()))
        {
            return true;
        }
        match nid.addr4() {
            Some(a) => self.addrs.items().iter().any(|r| r.matches(a, self.ip)),
            None => false,
        }
    }
}

impl<S: Store> fmt::Display for NidRange<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let net = self.net;
        if self.all {
            return write!(f, "*@{net}");
        }
        let mut first = true;
        for m in self.masks.items() {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            m.fmt_addr(f, true)?;
            write!(f, "@{net}")?;
        }
        for a in self.addrs.items() {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write!(f, "{a}@{net}")?;
        }
        Ok(())
    }
}

/// A parsed NID list.
pub struct NidList<S: Store> {
    ranges: S::Seq<NidRange<S>>,
}

/// The net of a `<net>` text: an LND name, then nothing or a number as
/// `kstrtouint(.., 0, ..)` reads it.
fn parse_net(s: &[u8]) -> Result<(Net, bool), NidListError> {
    let text = core::str::from_utf8(s).map_err(|_| NidListError::Invalid)?;
    let (lnd_type, name_len, ip) = lnd_prefix(text).ok_or(NidListError::Invalid)?;
    let rest = s.get(name_len..).unwrap_or(&[]);
    let num = if rest.is_empty() {
        0
    } else {
        kstrto::parse_u32(rest).map_err(|_| NidListError::Invalid)?
    };
    let num = u16::try_from(num).map_err(|_| NidListError::Invalid)?;
    Ok((Net::new(lnd_type, num), ip))
}

impl<S: Store> NidList<S> {
    /// Parses a NID list (`cfs_parse_nidlist`): nidranges separated by
    /// spaces; at least one.
    pub fn parse(s: &[u8]) -> Result<NidList<S>, NidListError> {
        let mut list: NidList<S> = NidList { ranges: S::seq() };
        for tok in s.split(|c| *c == b' ').filter(|t| !t.is_empty()) {
            list.add_range(tok)?;
        }
        if list.ranges.items().is_empty() {
            return Err(NidListError::Invalid);
        }
        Ok(list)
    }

    fn add_range(&mut self, tok: &[u8]) -> Result<(), NidListError> {
        let at = tok
            .iter()
            .position(|c| *c == b'@')
            .ok_or(NidListError::Invalid)?;
        let addr = strim(tok.get(..at).unwrap_or(&[]));
        let net = strim(tok.get(at + 1..).unwrap_or(&[]));
        if net.is_empty() || net.contains(&b'@') {
            return Err(NidListError::Invalid);
        }
        let (net, ip) = parse_net(net)?;
        let i = match self.ranges.items().iter().position(|r| r.net == net) {
            Some(i) => i,
            None => {
                self.ranges.try_push(NidRange {
                    net,
                    ip,
                    all: false,
                    masks: S::seq(),
                    addrs: S::seq(),
                })?;
                self.ranges.items().len().saturating_sub(1)
            }
        };
        let nr = self
            .ranges
            .items_mut()
            .get_mut(i)
            .ok_or(NidListError::Invalid)?;
        // A '/' outside brackets, or a ':', makes a netmask; a '/' in
        // brackets is a stride.
        let slash = addr.iter().position(|c| *c == b'/');
        let bracket_after = slash.is_some_and(|p| addr.get(p..).unwrap_or(&[]).contains(&b']'));
        if addr.contains(&b':') || (slash.is_some() && !bracket_after) {
            return Ok(nr.masks.try_push(NidMask::parse(addr)?)?);
        }
        if addr == b"*" {
            nr.all = true;
            return Ok(());
        }
        let mut ar = AddrRange {
            exprs: S::seq(),
            ends: [0; 4],
            groups: 0,
        };
        if ip {
            for octet in addr.split(|c| *c == b'.') {
                let octet = strim(octet);
                if octet.is_empty() {
                    return Err(NidListError::Invalid);
                }
                ar.add_group(octet, 255)?;
            }
            if ar.groups != 4 {
                return Err(NidListError::Invalid);
            }
        } else {
            ar.add_group(addr, u32::MAX)?;
        }
        Ok(nr.addrs.try_push(ar)?)
    }

    /// Whether `nid` is in the list (`cfs_match_nid`).
    pub fn matches(&self, nid: &Nid) -> bool {
        self.ranges.items().iter().any(|r| r.matches(nid))
    }

    /// The netmasks, each with its net.
    pub fn masks(&self) -> impl Iterator<Item = (&NidMask, Net)> {
        self.ranges
            .items()
            .iter()
            .flat_map(|r| r.masks.items().iter().map(move |m| (m, r.net)))
    }
}

impl<S: Store> fmt::Display for NidList<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.ranges.items().iter().enumerate() {
            if i != 0 {
                f.write_str(" ")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// A netmask's address and net without the prefix, as
/// `cfs_nidmask_get_base_nidstr` writes it: `10.1.2.3@tcp`.
pub struct MaskBase<'a>(pub &'a NidMask, pub Net);

impl fmt::Display for MaskBase<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_addr(f, false)?;
        write!(f, "@{}", self.1)
    }
}

/// The only netmask among `masks`: `Ok(None)` if there is none, `Err` if
/// there are several (what `cfs_nidmask_get_length` and
/// `cfs_nidmask_get_base_nidstr` require of their list).
pub fn single_mask<'a>(
    mut masks: impl Iterator<Item = (&'a NidMask, Net)>,
) -> Result<Option<(&'a NidMask, Net)>, NidListError> {
    let first = masks.next();
    if first.is_some() && masks.next().is_some() {
        return Err(NidListError::Invalid);
    }
    Ok(first)
}

/// The name of `net`'s LND, for callers printing nets.
pub fn net_name(net: Net) -> Option<&'static str> {
    lnd_name(net.lnd())
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use proptest::prelude::*;
    use std::string::{String, ToString};
    use std::vec::Vec;

    impl<T> Seq<T> for Vec<T> {
        fn try_push(&mut self, v: T) -> Result<(), NoMem> {
            self.push(v);
            Ok(())
        }
        fn items(&self) -> &[T] {
            self
        }
        fn items_mut(&mut self) -> &mut [T] {
            self
        }
    }

    struct Host;
    impl Store for Host {
        type Seq<T> = Vec<T>;
        fn seq<T>() -> Vec<T> {
            Vec::new()
        }
    }

    type List = NidList<Host>;

    fn list(s: &str) -> List {
        List::parse(s.as_bytes()).unwrap_or_else(|e| panic!("{s:?}: {e:?}"))
    }

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn yes(l: &List, nids: &[&str]) {
        for n in nids {
            assert!(l.matches(&nid(n)), "{l} should match {n}");
        }
    }

    fn no(l: &List, nids: &[&str]) {
        for n in nids {
            assert!(!l.matches(&nid(n)), "{l} should not match {n}");
        }
    }

    #[test]
    fn ipv4_ranges() {
        let l = list("192.168.[1-2].[1-254/2]@tcp");
        yes(
            &l,
            &["192.168.1.1@tcp", "192.168.2.253@tcp", "192.168.2.3@tcp"],
        );
        no(
            &l,
            &[
                "192.168.1.2@tcp",
                "192.168.3.1@tcp",
                "192.168.1.1@tcp1",
                "192.168.1.1@o2ib",
                "192.168.1.255@tcp",
            ],
        );
        assert_eq!(l.to_string(), "192.168.[1-2].[1-254/2]@tcp");
        let l = list("10.0.0.[1,3]@tcp 0@lo");
        yes(&l, &["10.0.0.1@tcp", "10.0.0.3@tcp", "0@lo"]);
        no(&l, &["10.0.0.2@tcp"]);
        assert_eq!(l.to_string(), "10.0.0.[1,3]@tcp 0@lo");
        let l = list("10.*.*.1@o2ib2");
        yes(&l, &["10.7.200.1@o2ib2"]);
        assert_eq!(l.to_string(), "10.[0-255].[0-255].1@o2ib2");
    }

    #[test]
    fn whole_nets() {
        let l = list("*@o2ib1");
        yes(&l, &["1.2.3.4@o2ib1", "10.0.0.1@o2ib1"]);
        no(&l, &["1.2.3.4@o2ib", "1.2.3.4@tcp1", "<?>"]);
        assert_eq!(l.to_string(), "*@o2ib1");
        let l = list("*@tcp 1.2.3.4@tcp");
        assert_eq!(l.to_string(), "*@tcp");
        yes(&l, &["2001:db8::1@tcp"]);
    }

    #[test]
    fn numeric_nets() {
        let l = list("[1-5]@gni");
        yes(&l, &["1@gni", "5@gni"]);
        no(&l, &["6@gni", "0@gni", "3@gni1", "3@kfi"]);
        assert_eq!(l.to_string(), "[1-5]@gni");
        let l = list("[0x10-0x20/8,7]@kfi3 42@ptlf");
        yes(&l, &["16@kfi3", "24@kfi3", "32@kfi3", "7@kfi3", "42@ptlf"]);
        no(&l, &["17@kfi3", "42@kfi3"]);
        assert_eq!(l.to_string(), "[16-32/8,7]@kfi3 42@ptlf");
        assert_eq!(list("*@gni").to_string(), "*@gni");
    }

    #[test]
    fn netmasks() {
        let l = list("1.2.3.4/24@tcp");
        yes(&l, &["1.2.3.0@tcp", "1.2.3.255@tcp"]);
        no(&l, &["1.2.4.4@tcp", "1.2.3.4@tcp1", "16909060@gni"]);
        assert_eq!(l.to_string(), "1.2.3.4/24@tcp");
        assert_eq!(
            single_mask(l.masks()).map(|m| m.map(|(m, _)| m.prefix_len())),
            Ok(Some(24))
        );
        let (m, net) = single_mask(l.masks())
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!());
        assert_eq!(MaskBase(m, net).to_string(), "1.2.3.4@tcp");
        let l = list("10.0.0.0/8@o2ib");
        yes(&l, &["10.255.1.2@o2ib"]);
        assert_eq!(list("1.2.3.4/32@tcp").to_string(), "1.2.3.4@tcp");
        // IPv6: a prefix, or none for one address.
        let l = list("2001:db8::/32@tcp");
        yes(&l, &["2001:db8:ffff::1@tcp"]);
        no(&l, &["2001:db9::1@tcp", "1.2.3.4@tcp"]);
        assert_eq!(l.to_string(), "2001:db8::/32@tcp");
        let l = list("2001:db8::1@tcp1");
        yes(&l, &["2001:db8::1@tcp1"]);
        no(&l, &["2001:db8::2@tcp1"]);
        assert_eq!(l.to_string(), "2001:db8::1@tcp1");
        // An IPv4 mask never matches an IPv6 NID, nor the reverse.
        no(&list("0.0.0.0/1@tcp"), &["::1@tcp"]);
        // Masks on a net whose LND Lustre does not test them on parse,
        // print, and match nothing.
        let l = list("1.2.3.4/24@gip");
        no(&l, &["1.2.3.4@gip"]);
        assert_eq!(l.to_string(), "1.2.3.4/24@gip");
        // Several masks: no single one.
        let l = list("1.2.3.4/24@tcp 10.0.0.0/8@o2ib");
        assert_eq!(
            single_mask(l.masks()).map(|_| ()),
            Err(NidListError::Invalid)
        );
        assert!(single_mask(list("*@tcp").masks()).is_ok_and(|m| m.is_none()));
    }

    #[test]
    fn gathered_per_net() {
        let l = list("1.2.3.4@tcp 5@gni 10.0.0.0/8@tcp 5.6.7.8@tcp");
        assert_eq!(
            l.to_string(),
            "10.0.0.0/8@tcp 1.2.3.4@tcp 5.6.7.8@tcp 5@gni"
        );
        yes(&l, &["5.6.7.8@tcp", "10.1.1.1@tcp", "5@gni"]);
        // Net numbers as kstrtouint reads them.
        assert_eq!(list("1.2.3.4@tcp0x10").to_string(), "1.2.3.4@tcp16");
        assert_eq!(list("1.2.3.4@tcp0").to_string(), "1.2.3.4@tcp");
        // Blanks around parts (a line written to a proc file).
        let l = list("  1.2.3.4@tcp\n  0@lo\n");
        assert_eq!(l.to_string(), "1.2.3.4@tcp 0@lo");
        assert_eq!(list("1.\t2.3.4@tcp").to_string(), "1.2.3.4@tcp");
    }

    #[test]
    fn refused() {
        for bad in [
            "",
            "   ",
            "1.2.3.4",
            "1.2.3.4@",
            "@tcp",
            "1.2.3.4@tcp@tcp",
            "1.2.3@tcp",
            "1.2.3.4.5@tcp",
            "1.2..4@tcp",
            "1.2.3.256@tcp",
            "1.2.3.[1-256]@tcp",
            "1.2.3.[5-1]@tcp",
            "1.2.3.[1-5/0]@tcp",
            "1.2.3.1-5@tcp",
            "1.2.3.4@eth",
            "1.2.3.4@tcpx",
            "1.2.3.4@tcp65536",
            "1.2.3.4/0@tcp",
            "1.2.3.4/33@tcp",
            "1.2.3.4/24/1@tcp",
            "1.2.3/24@tcp",
            "2001:db8::/129@tcp",
            "2001:db8::g@tcp",
            "fe80::1%eth0@tcp",
            "x@gni",
            "[1-5@gni",
            "1.2.3.4@tcp 1.2.3@tcp",
        ] {
            assert!(List::parse(bad.as_bytes()).is_err(), "{bad:?} accepted");
        }
        assert_eq!(List::parse(b"").err(), Some(NidListError::Invalid));
    }

    #[test]
    fn large_nids_and_ranges() {
        // A range of 4-byte addresses matches no IPv6 NID (a decision:
        // Lustre compares the first 4 bytes).
        no(&list("32.1.13.184@tcp"), &["2001:db8::1@tcp"]);
    }

    fn octet() -> impl Strategy<Value = (String, Vec<u8>)> {
        prop_oneof![
            (0u8..=255).prop_map(|v| (v.to_string(), std::vec![v])),
            Just(("*".to_string(), (0..=255).collect())),
            (0u8..=255, 0u8..=255, 1u8..=8).prop_map(|(a, b, s)| {
                let (lo, hi) = (a.min(b), a.max(b));
                let vals = (lo..=hi).step_by(usize::from(s)).collect();
                (std::format!("[{lo}-{hi}/{s}]"), vals)
            }),
        ]
    }

    fn net() -> impl Strategy<Value = (String, u16)> {
        prop_oneof![Just(("tcp", 0)), Just(("tcp", 3)), Just(("o2ib", 1))]
            .prop_map(|(n, k)| (n.to_string(), k))
    }

    proptest! {
        #[test]
        fn member_matches(o in proptest::collection::vec(octet(), 4), (name, num) in net(), pick in any::<[usize; 4]>()) {
            let text = std::format!("{}.{}.{}.{}@{name}{num}", o[0].0, o[1].0, o[2].0, o[3].0);
            let l = list(&text);
            let a: Vec<u8> = (0..4).map(|i| o[i].1[pick[i] % o[i].1.len()]).collect();
            let n = std::format!("{}.{}.{}.{}@{name}{num}", a[0], a[1], a[2], a[3]);
            prop_assert!(l.matches(&nid(&n)), "{} {}", text, n);
            // One octet off the set: no match.
            if o[3].1.len() < 256 {
                let out = (0..=255u8).find(|v| !o[3].1.contains(v)).unwrap_or(0);
                let n = std::format!("{}.{}.{}.{out}@{name}{num}", a[0], a[1], a[2]);
                prop_assert!(!l.matches(&nid(&n)), "{} {}", text, n);
            }
        }

        #[test]
        fn print_then_parse(items in proptest::collection::vec((proptest::collection::vec(octet(), 4), net(), 0u8..33, any::<bool>()), 1..4)) {
            let text: Vec<String> = items.iter().map(|(o, (name, num), p, mask)| {
                if *mask && *p > 0 {
                    std::format!("{}.{}.{}.{}/{p}@{name}{num}", o[0].1[0], o[1].1[0], o[2].1[0], o[3].1[0])
                } else {
                    std::format!("{}.{}.{}.{}@{name}{num}", o[0].0, o[1].0, o[2].0, o[3].0)
                }
            }).collect();
            let l = list(&text.join(" "));
            let printed = l.to_string();
            // A /32 mask prints as an address: the text settles after one
            // round, and the set of NIDs never changes.
            let again = list(&printed);
            let settled = again.to_string();
            prop_assert_eq!(list(&settled).to_string(), settled.clone());
            for a in 0..=255u8 {
                let n = nid(&std::format!("{}.{}.{}.{a}@tcp3", items[0].0[0].1[0], items[0].0[1].1[0], items[0].0[2].1[0]));
                prop_assert_eq!(l.matches(&n), again.matches(&n), "{}", printed);
            }
        }

        #[test]
        fn never_panics(s in "[0-9a-z.@*/:\\[\\], -]{0,40}") {
            if let Ok(l) = List::parse(s.as_bytes()) {
                let printed = l.to_string();
                let again = List::parse(printed.as_bytes());
                prop_assert!(again.is_ok(), "{} -> {}", s, printed);
            }
        }
    }
}
