//! User Defined Selection Policies (udsp.md): the NID descriptors rules are
//! made of, parsed from `lnetctl udsp add` text, matched against nets and
//! NIDs as Lustre's `cfs_match_net` / `cfs_match_nid_net` do, written back
//! as `udsp show` prints them, and carried in the ioctl bulk (§2.4). Also
//! which kind a rule is and whether its action fits that kind (§1.1).
//!
//! Deliberate difference: a large (IPv6) NID matches no address pattern
//! (Lustre folds it to a NID4 first, which its source calls a FIXME).

use super::kstrto;
use super::nid::{self, Net, Nid};
use super::wire;
use core::fmt;

/// Most range expressions in one list.
pub const MAX_EXPRS: usize = 8;

/// `lnet_range_expr`: `lo..=hi` every `stride`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range {
    /// First value.
    pub lo: u32,
    /// Last value.
    pub hi: u32,
    /// Step, at least 1.
    pub stride: u32,
}

impl Range {
    /// `*`: any value.
    pub const ANY: Range = Range {
        lo: 0,
        hi: u32::MAX,
        stride: 1,
    };

    fn matches(&self, v: u32) -> bool {
        v >= self.lo && v <= self.hi && (v - self.lo) % self.stride.max(1) == 0
    }

    fn valid(&self) -> bool {
        self.lo <= self.hi && self.stride >= 1
    }
}

/// A list of range expressions (`cfs_expr_list`); empty matches nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExprList {
    n: u8,
    r: [Range; MAX_EXPRS],
}

impl ExprList {
    /// The ranges.
    pub fn ranges(&self) -> &[Range] {
        self.r.get(..usize::from(self.n)).unwrap_or(&[])
    }

    /// Whether the list has no range.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn push(&mut self, r: Range) -> Result<(), UdspError> {
        let slot = self
            .r
            .get_mut(usize::from(self.n))
            .ok_or(UdspError::TooManyRanges)?;
        *slot = r;
        self.n += 1;
        Ok(())
    }

    /// Whether a value is in one of the ranges.
    pub fn matches(&self, v: u32) -> bool {
        self.ranges().iter().any(|r| r.matches(v))
    }

    /// Parses `*`, `a`, `a-b`, `a-b/s` or a bracketed comma list of them;
    /// values above `max` are refused.
    fn parse(s: &str, max: u32) -> Result<ExprList, UdspError> {
        let mut l = ExprList::default();
        let inner = match s.strip_prefix('[') {
            Some(rest) => rest.strip_suffix(']').ok_or(UdspError::BadExpr)?,
            None => s,
        };
        if inner.is_empty() {
            return Err(UdspError::BadExpr);
        }
        for part in inner.split(',') {
            l.push(parse_range(part, max)?)?;
        }
        Ok(l)
    }
}

fn number(s: &str, max: u32) -> Result<u32, UdspError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UdspError::BadExpr);
    }
    let v = kstrto::parse_u32(s.as_bytes()).map_err(|_| UdspError::BadExpr)?;
    if v > max {
        return Err(UdspError::BadExpr);
    }
    Ok(v)
}

fn parse_range(s: &str, max: u32) -> Result<Range, UdspError> {
    if s == "*" {
        return Ok(Range {
            lo: 0,
            hi: max,
            stride: 1,
        });
    }
    let (range, stride) = match s.split_once('/') {
        Some((r, st)) => (r, number(st, u32::MAX)?),
        None => (s, 1),
    };
    let (lo, hi) = match range.split_once('-') {
        Some((a, b)) => (number(a, max)?, number(b, max)?),
        None => {
            let v = number(range, max)?;
            (v, v)
        }
    };
    // A single value has no stride to speak of (printed as the value).
    let stride = if lo == hi { 1 } else { stride };
    let r = Range { lo, hi, stride };
    if !r.valid() {
        return Err(UdspError::BadExpr);
    }
    Ok(r)
}

/// Why a descriptor or a marshalled rule was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdspError {
    /// No known LND name starts the net part.
    UnknownNet,
    /// A range expression that does not parse, or is out of range.
    BadExpr,
    /// More than [`MAX_EXPRS`] ranges in a list.
    TooManyRanges,
    /// The address has the wrong number of parts for its LND.
    BadAddress,
    /// The marshalled form is short, long or inconsistent.
    BadBulk,
}

impl fmt::Display for UdspError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UdspError::UnknownNet => "unknown network type",
            UdspError::BadExpr => "bad range expression",
            UdspError::TooManyRanges => "too many ranges in one expression",
            UdspError::BadAddress => "bad address pattern",
            UdspError::BadBulk => "malformed rule",
        })
    }
}

/// A NID descriptor (`lnet_ud_nid_descr`): a net type, net-number ranges
/// and address ranges (four lists for IP addresses, one for numbers).
/// Absent when the net type is 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Descr {
    /// The LND type; 0: the descriptor is absent.
    pub net_type: u32,
    /// Net numbers; empty: net number 0 only.
    pub net_num: ExprList,
    addr: [ExprList; 4],
    naddr: u8,
}

impl Descr {
    /// Whether the rule has this criterion.
    pub fn is_present(&self) -> bool {
        self.net_type != 0
    }

    /// A net rule: no address patterns.
    pub fn is_net_rule(&self) -> bool {
        self.naddr == 0
    }

    /// The address lists.
    pub fn addr(&self) -> &[ExprList] {
        self.addr.get(..usize::from(self.naddr)).unwrap_or(&[])
    }

    /// Parses `addr@net` or `net` (`cfs_parse_nid_parts`): `tcp`, `tcp1`,
    /// `o2ib[0-3]`, `o2ib*`, `10.0.0.[2-9]@tcp`, `*.*.*.*@tcp1`, `5@gni`.
    pub fn parse(s: &str) -> Result<Descr, UdspError> {
        let (addr, net) = match s.rsplit_once('@') {
            Some((a, n)) => (Some(a), n),
            None => (None, s),
        };
        let (lnd, name_len, ip) = nid::lnd_prefix(net).ok_or(UdspError::UnknownNet)?;
        let mut d = Descr {
            net_type: u32::from(lnd),
            ..Descr::default()
        };
        let num = net.get(name_len..).unwrap_or("");
        if !num.is_empty() {
            d.net_num = ExprList::parse(num, u32::from(u16::MAX))?;
        }
        let Some(addr) = addr else {
            return Ok(d);
        };
        if ip {
            let mut parts = addr.split('.');
            for slot in d.addr.iter_mut() {
                *slot = ExprList::parse(parts.next().ok_or(UdspError::BadAddress)?, 255)?;
            }
            if parts.next().is_some() {
                return Err(UdspError::BadAddress);
            }
            d.naddr = 4;
        } else {
            let slot = d.addr.get_mut(0).ok_or(UdspError::BadAddress)?;
            *slot = ExprList::parse(addr, u32::MAX)?;
            d.naddr = 1;
        }
        Ok(d)
    }

    /// `cfs_match_net`: same type; no net-number ranges means net 0.
    pub fn matches_net(&self, net: Net) -> bool {
        if self.net_type != u32::from(net.lnd()) {
            return false;
        }
        if self.net_num.is_empty() {
            net.num() == 0
        } else {
            self.net_num.matches(u32::from(net.num()))
        }
    }

    /// `cfs_match_nid_net`: a net rule never matches a NID; otherwise the
    /// net and each address part must match.
    pub fn matches_nid(&self, nid: &Nid) -> bool {
        if self.naddr == 0 || !self.matches_net(nid.net()) {
            return false;
        }
        let Some(a) = nid.addr4() else {
            return false;
        };
        match self.addr() {
            [one] => one.matches(a),
            parts => parts
                .iter()
                .zip([24u32, 16, 8, 0])
                .all(|(l, shift)| l.matches((a >> shift) & 0xff)),
        }
    }
}

/// One list as `cfs_expr2str` prints it: `*`, `7`, `[1-10]`, `[1,5-7/2]`.
fn write_list(f: &mut fmt::Formatter<'_>, l: &ExprList, max: u32) -> fmt::Result {
    if let [r] = l.ranges() {
        if r.lo == 0 && r.hi == max && r.stride == 1 {
            return f.write_str("*");
        }
        if r.lo == r.hi {
            return write!(f, "{}", r.lo);
        }
    }
    f.write_str("[")?;
    for (i, r) in l.ranges().iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        if r.lo == r.hi {
            write!(f, "{}", r.lo)?;
        } else if r.stride == 1 {
            write!(f, "{}-{}", r.lo, r.hi)?;
        } else {
            write!(f, "{}-{}/{}", r.lo, r.hi, r.stride)?;
        }
    }
    f.write_str("]")
}

impl fmt::Display for Descr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ip = self.naddr == 4;
        for (i, l) in self.addr().iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write_list(f, l, if ip { 255 } else { u32::MAX })?;
        }
        if self.naddr > 0 {
            f.write_str("@")?;
        }
        let lnd = u8::try_from(self.net_type).ok();
        match lnd.and_then(nid::lnd_name) {
            Some(n) => f.write_str(n)?,
            None => write!(f, "<{}>", self.net_type)?,
        }
        if !self.net_num.is_empty() {
            write_list(f, &self.net_num, u32::from(u16::MAX))?;
        }
        Ok(())
    }
}

/// What a rule does (`udsp_action_type` and its value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `EN_LNET_UDSP_ACTION_PRIORITY`: lower is preferred.
    Priority(u32),
    /// `EN_LNET_UDSP_ACTION_PREFERRED_LIST`.
    Preferred,
}

/// Action type numbers on the wire (`lnet-types.h`).
pub mod action_type {
    /// No action.
    pub const NONE: u32 = 0;
    /// Priority.
    pub const PRIORITY: u32 = 1;
    /// Preferred list.
    pub const PREFERRED_LIST: u32 = 2;
}

/// Which objects a rule applies to, by the criteria it has (§1.1, in the
/// order the kernel tests them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// src + dst: the peer NIs matching dst prefer the local NIs matching
    /// src.
    Pair,
    /// dst + rte: the peer NIs matching dst prefer the matching gateways.
    Router,
    /// dst only: peer net or peer NI priority.
    DstPriority,
    /// src only: local net or NI priority.
    SrcPriority,
    /// Anything else ("Bad UDSP policy").
    Invalid,
}

/// A rule's criteria and action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Local NIs or nets.
    pub src: Descr,
    /// Peer NIs or nets.
    pub dst: Descr,
    /// Gateways.
    pub rte: Descr,
    /// What it does.
    pub action: Action,
}

impl Rule {
    /// The rule's kind.
    pub fn kind(&self) -> Kind {
        match (
            self.src.is_present(),
            self.dst.is_present(),
            self.rte.is_present(),
        ) {
            (true, true, _) => Kind::Pair,
            (false, true, true) => Kind::Router,
            (false, true, false) => Kind::DstPriority,
            (true, false, false) => Kind::SrcPriority,
            _ => Kind::Invalid,
        }
    }

    /// Whether the action is the one the kind needs; a rule whose action
    /// does not fit is kept but does nothing ("Bad action type").
    pub fn effective(&self) -> bool {
        match self.kind() {
            Kind::Pair | Kind::Router => self.action == Action::Preferred,
            Kind::DstPriority | Kind::SrcPriority => matches!(self.action, Action::Priority(_)),
            Kind::Invalid => false,
        }
    }

    /// Same criteria (`lnet_udsp_add_policy`'s duplicate test).
    pub fn same_criteria(&self, other: &Rule) -> bool {
        self.src == other.src && self.dst == other.dst && self.rte == other.rte
    }
}

/// Why `lnetctl udsp add` refuses its arguments (`jt_add_udsp`,
/// `lustre_lnet_add_udsp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// None of src, dst, rte.
    NoCriteria,
    /// src with rte.
    SrcAndRte,
    /// All three.
    AllThree,
    /// A descriptor that does not parse.
    Descr(UdspError),
}

/// The rule `lnetctl udsp add` sends: the default action is a preferred
/// list, `--priority` makes it a priority; a rule with just one of src or
/// dst (no rte) is a priority, 0 unless given.
pub fn rule_from_args(
    src: Option<&str>,
    dst: Option<&str>,
    rte: Option<&str>,
    priority: Option<u32>,
) -> Result<Rule, AddError> {
    let parse = |s: Option<&str>| match s {
        Some(t) => Descr::parse(t).map_err(AddError::Descr),
        None => Ok(Descr::default()),
    };
    match (src.is_some(), dst.is_some(), rte.is_some()) {
        (false, false, false) => return Err(AddError::NoCriteria),
        (true, true, true) => return Err(AddError::AllThree),
        (true, false, true) => return Err(AddError::SrcAndRte),
        _ => {}
    }
    let single = src.is_some() != dst.is_some() && rte.is_none();
    let action = match (priority, single) {
        (Some(p), _) => Action::Priority(p),
        (None, true) => Action::Priority(0),
        (None, false) => Action::Preferred,
    };
    Ok(Rule {
        src: parse(src)?,
        dst: parse(dst)?,
        rte: parse(rte)?,
        action,
    })
}

/// A rule as an ADD ioctl carries it: the bulk, the action type and the
/// priority (0 for a preferred list). Refuses a rule of no kind.
pub fn rule_from_ioctl(bulk: &[u8], action: u32, priority: u32) -> Result<Rule, UdspError> {
    let [src, dst, rte] = decode_bulk(bulk)?;
    let action = match action {
        action_type::PRIORITY => Action::Priority(priority),
        action_type::PREFERRED_LIST if priority == 0 => Action::Preferred,
        _ => return Err(UdspError::BadBulk),
    };
    let rule = Rule {
        src,
        dst,
        rte,
        action,
    };
    if rule.kind() == Kind::Invalid {
        return Err(UdspError::BadBulk);
    }
    Ok(rule)
}

/// The action type and priority a GET ioctl reports for a rule.
pub fn action_to_ioctl(a: Action) -> (u32, u32) {
    match a {
        Action::Priority(p) => (action_type::PRIORITY, p),
        Action::Preferred => (action_type::PREFERRED_LIST, 0),
    }
}

/// What adding a rule does to the list (`lnet_udsp_add_policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddPlan {
    /// A rule with the same criteria exists and both are priorities: its
    /// priority becomes the new one.
    Update(usize),
    /// The rule goes at this position (later rules move up one).
    Insert(usize),
    /// A rule with the same criteria exists (EALREADY).
    Exists,
}

/// Where `rule` goes in `list` when added with index `idx` (-1 or past the
/// end: last).
pub fn plan_add(list: &[Rule], rule: &Rule, idx: i32) -> AddPlan {
    if let Some(i) = list.iter().position(|r| r.same_criteria(rule)) {
        return match (list.get(i).map(|r| r.action), rule.action) {
            (Some(Action::Priority(a)), Action::Priority(b)) if a != b => AddPlan::Update(i),
            _ => AddPlan::Exists,
        };
    }
    match usize::try_from(idx) {
        Ok(i) if i < list.len() => AddPlan::Insert(i),
        _ => AddPlan::Insert(list.len()),
    }
}

/// The descriptor tags of the bulk: "SRC", "DST", "RTE" read as host u32.
const TAGS: [[u8; 4]; 3] = [*b"SRC\0", *b"DST\0", *b"RTE\0"];

struct Writer<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn u32(&mut self, v: u32) -> Option<()> {
        wire::put(self.out, self.at, &v.to_ne_bytes())?;
        self.at = self.at.checked_add(4)?;
        Some(())
    }

    fn list(&mut self, l: &ExprList) -> Option<()> {
        self.u32(u32::from(l.n))?;
        for r in l.ranges() {
            self.u32(r.lo)?;
            self.u32(r.hi)?;
            self.u32(r.stride)?;
        }
        Some(())
    }
}

/// The bulk is in the host's order: `wire::Reader` reads little-endian,
/// flipped on a big-endian host.
struct Reader<'a> {
    r: wire::Reader<'a, UdspError>,
    at: usize,
}

impl Reader<'_> {
    fn u32(&mut self) -> Result<u32, UdspError> {
        let v = self.r.u32(self.at)?;
        self.at = self.at.checked_add(4).ok_or(UdspError::BadBulk)?;
        Ok(v)
    }

    fn list(&mut self) -> Result<ExprList, UdspError> {
        let n = self.u32()?;
        if n as usize > MAX_EXPRS {
            return Err(UdspError::BadBulk);
        }
        let mut l = ExprList::default();
        for _ in 0..n {
            let r = Range {
                lo: self.u32()?,
                hi: self.u32()?,
                stride: self.u32()?,
            };
            if !r.valid() {
                return Err(UdspError::BadBulk);
            }
            l.push(r)?;
        }
        Ok(l)
    }
}

/// Bytes [`encode_bulk`] needs for a rule.
pub fn bulk_len(r: &Rule) -> usize {
    [&r.src, &r.dst, &r.rte]
        .iter()
        .map(|d| {
            16 + 12 * d.net_num.ranges().len()
                + d.addr()
                    .iter()
                    .map(|l| 4 + 12 * l.ranges().len())
                    .sum::<usize>()
        })
        .sum()
}

/// Writes the three descriptors of `r` (SRC, DST, RTE) as the ioctl bulk;
/// returns the bytes used, `None` if `out` is too small.
pub fn encode_bulk(r: &Rule, out: &mut [u8]) -> Option<usize> {
    let mut w = Writer { out, at: 0 };
    for (tag, d) in TAGS.iter().zip([&r.src, &r.dst, &r.rte]) {
        w.u32(u32::from_ne_bytes(*tag))?;
        w.u32(u32::from(d.naddr))?;
        w.u32(d.net_type)?;
        w.list(&d.net_num)?;
        for l in d.addr() {
            w.list(l)?;
        }
    }
    Some(w.at)
}

/// Reads the bulk [`encode_bulk`] writes: (src, dst, rte). Every count,
/// range and tag is checked, and the bulk must be used exactly.
pub fn decode_bulk(b: &[u8]) -> Result<[Descr; 3], UdspError> {
    let mut rd = Reader {
        r: wire::Reader::new(b, cfg!(target_endian = "big"), UdspError::BadBulk),
        at: 0,
    };
    let mut out = [Descr::default(); 3];
    for (tag, d) in TAGS.iter().zip(out.iter_mut()) {
        if rd.u32()? != u32::from_ne_bytes(*tag) {
            return Err(UdspError::BadBulk);
        }
        let naddr = rd.u32()?;
        if !matches!(naddr, 0 | 1 | 4) {
            return Err(UdspError::BadBulk);
        }
        d.net_type = rd.u32()?;
        d.net_num = rd.list()?;
        for slot in d.addr.iter_mut().take(naddr as usize) {
            *slot = rd.list()?;
            if slot.is_empty() {
                return Err(UdspError::BadBulk);
            }
        }
        d.naddr = naddr as u8;
        let known = u8::try_from(d.net_type)
            .ok()
            .and_then(nid::lnd_name)
            .is_some();
        let stray = d.net_type == 0 && (naddr != 0 || !d.net_num.is_empty());
        if stray || (d.net_type != 0 && !known) {
            return Err(UdspError::BadBulk);
        }
    }
    if rd.at != b.len() {
        return Err(UdspError::BadBulk);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    extern crate std;
    use std::string::ToString;

    fn d(s: &str) -> Descr {
        Descr::parse(s).unwrap()
    }

    fn net(s: &str) -> Net {
        Net::parse(s).unwrap()
    }

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    #[test]
    fn net_matching() {
        // (descriptor, net, matches): a net without a number is net 0 only.
        let table = [
            ("tcp", "tcp", true),
            ("tcp", "tcp1", false),
            ("tcp0", "tcp", true),
            ("tcp1", "tcp1", true),
            ("tcp[1-3]", "tcp2", true),
            ("tcp[1-3]", "tcp4", false),
            ("tcp[0-8/2]", "tcp6", true),
            ("tcp[0-8/2]", "tcp5", false),
            ("tcp[1,3]", "tcp3", true),
            ("o2ib*", "o2ib7", true),
            ("o2ib*", "tcp", false),
        ];
        for (descr, n, want) in table {
            assert_eq!(d(descr).matches_net(net(n)), want, "{descr} ~ {n}");
        }
    }

    #[test]
    fn nid_matching() {
        let table = [
            ("10.0.0.[2-9]@tcp", "10.0.0.5@tcp", true),
            ("10.0.0.[2-9]@tcp", "10.0.0.1@tcp", false),
            ("10.0.0.[2-9]@tcp", "10.0.0.5@tcp1", false),
            ("*.*.*.*@tcp1", "10.2.0.1@tcp1", true),
            ("192.168.1.[1-100/2]@o2ib[0-1]", "192.168.1.3@o2ib1", true),
            ("192.168.1.[1-100/2]@o2ib[0-1]", "192.168.1.4@o2ib1", false),
            ("10.[1,3].0.1@tcp", "10.3.0.1@tcp", true),
            ("10.[1,3].0.1@tcp", "10.2.0.1@tcp", false),
            // A net rule matches no NID.
            ("tcp", "10.0.0.1@tcp", false),
            ("5@gni", "5@gni", true),
            ("[1-4]@gni", "7@gni", false),
            ("*.*.*.*@tcp", "2001:db8::1@tcp", false),
        ];
        for (descr, n, want) in table {
            assert_eq!(d(descr).matches_nid(&nid(n)), want, "{descr} ~ {n}");
        }
    }

    #[test]
    fn text_round_trip() {
        for s in [
            "tcp",
            "tcp1",
            "o2ib[1-2]",
            "o2ib*",
            "192.168.1.[1-10]@tcp",
            "10.0.0.1@tcp1",
            "*.*.*.*@tcp",
            "10.[1,3-5/2].0.*@o2ib[0,2]",
            "[1-4]@gni",
        ] {
            assert_eq!(d(s).to_string(), s);
        }
        // Other spellings print in cfs_expr2str's form.
        assert_eq!(d("10.0.0.2-9@tcp").to_string(), "10.0.0.[2-9]@tcp");
        assert_eq!(d("10.0.0.[7]@tcp").to_string(), "10.0.0.7@tcp");
    }

    #[test]
    fn bad_descriptors() {
        let table = [
            ("", UdspError::UnknownNet),
            ("nonsense", UdspError::UnknownNet),
            ("tcpx", UdspError::BadExpr),
            ("tcp[3-1]", UdspError::BadExpr),
            ("tcp70000", UdspError::BadExpr),
            ("10.0.0@tcp", UdspError::BadAddress),
            ("10.0.0.0.1@tcp", UdspError::BadAddress),
            ("10.0.0.256@tcp", UdspError::BadExpr),
            ("10.0.0.[1-2@tcp", UdspError::BadExpr),
            ("10.0.0.[]@tcp", UdspError::BadExpr),
            ("10.0.0.[1-9/0]@tcp", UdspError::BadExpr),
            ("10.0.0.[1,2,3,4,5,6,7,8,9]@tcp", UdspError::TooManyRanges),
        ];
        for (s, e) in table {
            assert_eq!(Descr::parse(s), Err(e), "{s:?}");
        }
    }

    #[test]
    fn kinds_and_actions() {
        use Kind::*;
        // (src, dst, rte, priority, kind, effective)
        let table = [
            (Some("tcp1"), None, None, Some(1), SrcPriority, true),
            (Some("10.0.0.1@tcp"), None, None, None, SrcPriority, true),
            (
                None,
                Some("10.0.0.[2-9]@tcp"),
                None,
                Some(3),
                DstPriority,
                true,
            ),
            (
                Some("10.0.0.1@tcp"),
                Some("10.0.1.*@tcp"),
                None,
                None,
                Pair,
                true,
            ),
            // Stored, never effective: a pair rule with a priority.
            (Some("tcp"), Some("tcp"), None, Some(1), Pair, false),
            (
                None,
                Some("tcp2"),
                Some("10.0.0.[5-6]@tcp"),
                None,
                Router,
                true,
            ),
            (None, Some("tcp2"), Some("tcp"), Some(2), Router, false),
        ];
        for (src, dst, rte, p, kind, eff) in table {
            let r = rule_from_args(src, dst, rte, p).unwrap();
            assert_eq!(
                (r.kind(), r.effective()),
                (kind, eff),
                "{src:?} {dst:?} {rte:?} {p:?}"
            );
        }
        // A single criterion without --priority gets priority 0.
        let r = rule_from_args(Some("10.0.0.1@tcp"), None, None, None).unwrap();
        assert_eq!(r.action, Action::Priority(0));
        assert_eq!(
            rule_from_args(None, None, None, None),
            Err(AddError::NoCriteria)
        );
        assert_eq!(
            rule_from_args(Some("tcp"), None, Some("tcp"), None),
            Err(AddError::SrcAndRte)
        );
        assert_eq!(
            rule_from_args(Some("tcp"), Some("tcp"), Some("tcp"), None),
            Err(AddError::AllThree)
        );
        assert_eq!(
            rule_from_args(Some("bad"), None, None, None),
            Err(AddError::Descr(UdspError::UnknownNet))
        );
    }

    #[test]
    fn bulk_layout() {
        let r = rule_from_args(Some("10.0.0.[1-3]@tcp1"), None, None, Some(4)).unwrap();
        let mut b = [0u8; 512];
        let n = encode_bulk(&r, &mut b).unwrap();
        assert_eq!(n, bulk_len(&r));
        // SRC: header, net (type 2, one range 1-1), four address lists.
        let w = |i: usize| u32::from_ne_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(w(0), u32::from_ne_bytes(*b"SRC\0"));
        assert_eq!((w(1), w(2), w(3)), (4, 2, 1));
        assert_eq!((w(4), w(5), w(6)), (1, 1, 1));
        assert_eq!((w(7), w(8), w(9), w(10)), (1, 10, 10, 1));
        // Absent DST and RTE: header and an empty net part.
        let tail = n - 32;
        assert_eq!(&b[tail..tail + 4], b"DST\0");
        assert_eq!(&b[tail + 4..tail + 16], &[0u8; 12]);
        assert_eq!(&b[tail + 16..tail + 20], b"RTE\0");
        let [s, dd, rt] = decode_bulk(&b[..n]).unwrap();
        assert_eq!((s, dd, rt), (r.src, r.dst, r.rte));
        assert!(encode_bulk(&r, &mut b[..n - 1]).is_none());
        assert_eq!(decode_bulk(&b[..n - 4]), Err(UdspError::BadBulk));
        let mut long = [0u8; 513];
        long[..n].copy_from_slice(&b[..n]);
        assert_eq!(decode_bulk(&long[..n + 4]), Err(UdspError::BadBulk));
    }

    #[test]
    fn add_plans() {
        let r = |src: &str, p: Option<u32>| rule_from_args(Some(src), None, None, p).unwrap();
        let list = [r("tcp", Some(1)), r("tcp1", Some(2))];
        assert_eq!(plan_add(&list, &r("o2ib", Some(0)), -1), AddPlan::Insert(2));
        assert_eq!(plan_add(&list, &r("o2ib", Some(0)), 0), AddPlan::Insert(0));
        assert_eq!(plan_add(&list, &r("o2ib", Some(0)), 1), AddPlan::Insert(1));
        assert_eq!(plan_add(&list, &r("o2ib", Some(0)), 7), AddPlan::Insert(2));
        // Same criteria: a new priority updates, the same one is refused.
        assert_eq!(plan_add(&list, &r("tcp1", Some(5)), -1), AddPlan::Update(1));
        assert_eq!(plan_add(&list, &r("tcp1", Some(2)), 0), AddPlan::Exists);
        let pair = rule_from_args(Some("*.*.*.*@tcp"), Some("tcp1"), None, None).unwrap();
        assert_eq!(plan_add(&[pair], &pair, -1), AddPlan::Exists);
    }

    #[test]
    fn ioctl_form() {
        let rule = rule_from_args(Some("10.0.0.1@tcp"), Some("10.0.1.*@tcp"), None, None).unwrap();
        let mut b = [0u8; 1536];
        let n = encode_bulk(&rule, &mut b).unwrap();
        let (t, p) = action_to_ioctl(rule.action);
        assert_eq!((t, p), (action_type::PREFERRED_LIST, 0));
        assert_eq!(rule_from_ioctl(&b[..n], t, p), Ok(rule));
        // A preferred list with a priority, an unknown action, no criteria.
        assert_eq!(rule_from_ioctl(&b[..n], t, 3), Err(UdspError::BadBulk));
        assert_eq!(rule_from_ioctl(&b[..n], 0, 0), Err(UdspError::BadBulk));
        let none = Rule {
            src: Descr::default(),
            dst: Descr::default(),
            rte: Descr::default(),
            action: Action::Priority(1),
        };
        let n = encode_bulk(&none, &mut b).unwrap();
        assert_eq!(
            rule_from_ioctl(&b[..n], action_type::PRIORITY, 1),
            Err(UdspError::BadBulk)
        );
    }

    proptest! {
        #[test]
        fn decode_never_panics(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode_bulk(&b);
        }

        #[test]
        fn bulk_round_trip(a in 0u32..256, b in 0u32..256, s in 1u32..5, num in 0u32..4, no_dst: bool) {
            let (lo, hi) = (a.min(b), a.max(b));
            let text = std::format!("10.{lo}.[{lo}-{hi}/{s}].*@tcp{num}");
            let dst = if no_dst { None } else { Some("o2ib[1-3]") };
            let r = rule_from_args(Some(&text), dst, None, None).unwrap();
            let mut buf = [0u8; 1024];
            let n = encode_bulk(&r, &mut buf).unwrap();
            let [src, dst2, rte] = decode_bulk(&buf[..n]).unwrap();
            prop_assert_eq!(src, r.src);
            prop_assert_eq!(dst2, r.dst);
            prop_assert_eq!(rte, r.rte);
            prop_assert_eq!(Descr::parse(&src.to_string()).unwrap(), src);
        }
    }
}
