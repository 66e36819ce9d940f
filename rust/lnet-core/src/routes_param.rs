//! The `routes=` module parameter (`lnet_parse_routes`) and the gateway
//! list of `lnetctl route add --gateway`.
//!
//! `routes=` is a list of entries separated by `;` or line breaks, `#`
//! starting a comment that runs to the next separator. An entry is
//! blank-separated words:
//!
//! ```text
//! <entry>    :== <nets> [<hops>] <gateway> [<gateway> ...]
//! <hops>     :== a decimal number 1..=255 (a word that is not one is a
//!                gateway)
//! <gateway>  :== <nid>[:<priority>]
//! ```
//!
//! and each word (nets and gateways) may hold bracket groups that expand
//! it into several: `[a,b]` gives each text item, `[lo-hi]` and
//! `[lo-hi/stride]` each number (decimal, `hi - lo` a multiple of the
//! stride). `o2ib[1-2] 192.168.0.[1-3]@tcp` is six routes; `tcp1 2
//! 10.0.0.1@o2ib:1` one with 2 hops and priority 1. Every expansion of an
//! entry is checked before any of its routes is added: nets must parse and
//! be neither `lo` nor `LNET_NET_ANY`, gateways must parse and not be
//! `0@lo`. A gateway that is one of this node's NIDs makes the node a
//! router and adds no route; a route the table refuses as existing or
//! unreachable is skipped; any other refusal fails the parameter.
//!
//! Deliberate differences from Lustre, each tested below:
//! - each gateway has its own priority (Lustre gives every route of an
//!   entry the priority of the entry's last gateway word);
//! - a stride of 0 is refused (Lustre divides by it);
//! - numbers that overflow (hop count, priority, range bounds) are
//!   refused (Lustre's `sscanf` wraps them);
//! - a bracket group holding `[` is refused (Lustre expands its text and
//!   then fails or expands the remains differently);
//! - an expanded word longer than [`WORD_MAX`] bytes is refused (no NID
//!   or net is that long; Lustre's bound is 4 KiB), and an entry whose
//!   expansions take more than 64 KiB counted as Lustre counts its text
//!   buffers (each word plus [`TEXT_BUF_OVERHEAD`] bytes) is refused.

use super::expr_list;
use super::nid::{lnd, Net, Nid};
use super::route::{RouteError, RouteSpec, MAX_HOPS, UNDEFINED_HOPS};
use core::fmt;

/// The longest word an expansion may produce.
pub const WORD_MAX: usize = 128;
/// The bytes Lustre's `lnet_text_buf` adds to each word it holds.
pub const TEXT_BUF_OVERHEAD: usize = 21;
/// What the expanded words of one entry may take (`LNET_MAX_TEXTBUF_NOB`).
pub const TEXT_BUF_TOTAL: usize = 64 << 10;
/// The most bracket groups one word may have.
pub const MAX_GROUPS: usize = 8;

/// What is wrong with a `routes=` string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// An entry with a net and no gateway.
    MissingGateway,
    /// A word that does not fit the syntax or does not expand.
    BadExpansion,
    /// A net that does not parse, or is `lo`.
    BadNet,
    /// A gateway NID that does not parse, or is `0@lo`.
    BadGateway,
    /// A priority after `:` that is not a decimal number.
    BadPriority,
    /// An expanded word longer than [`WORD_MAX`].
    TooLong,
    /// The expansions of an entry exceed [`TEXT_BUF_TOTAL`].
    TooMany,
    /// The route table refused a route (other than as existing or
    /// unreachable).
    Route(RouteError),
}

/// An error in a `routes=` string: the word at byte `at`, `len` bytes
/// long (Lustre's `lnet_syntax` marks it under the entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    /// Offset of the word in the parameter.
    pub at: usize,
    /// Its length.
    pub len: usize,
    /// What is wrong.
    pub kind: ErrorKind,
}

impl Error {
    /// The negative errno `lnet_parse_routes` returns: always `-EINVAL`.
    pub const fn errno(&self) -> i32 {
        -super::route::EINVAL
    }

    /// The word the error is about, out of the parameter `s`.
    pub fn word<'a>(&self, s: &'a str) -> &'a str {
        s.get(self.at..self.at.saturating_add(self.len))
            .unwrap_or("")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::MissingGateway => "route without a gateway",
            ErrorKind::BadExpansion => "bad range expression",
            ErrorKind::BadNet => "bad remote network",
            ErrorKind::BadGateway => "bad gateway NID",
            ErrorKind::BadPriority => "bad route priority",
            ErrorKind::TooLong => "expanded word too long",
            ErrorKind::TooMany => "too many routes in one entry",
            ErrorKind::Route(e) => {
                return write!(
                    f,
                    "cannot create route ({}) at offset {}",
                    e.errno(),
                    self.at
                )
            }
        };
        write!(f, "{what} at offset {}", self.at)
    }
}

/// The blanks the kernel's `isspace` knows.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `lnet_issep`.
fn is_sep(c: u8) -> bool {
    matches!(c, b'\n' | b'\r' | b';')
}

/// The entries of a `routes=` string with their offsets, comments and
/// empty entries left out (`lnet_str2tbs_sep`).
pub fn entries(s: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut pos = 0usize;
    core::iter::from_fn(move || loop {
        let rest = s.get(pos..)?;
        if rest.is_empty() {
            return None;
        }
        let lead = rest.iter().take_while(|c| is_space(**c)).count();
        let start = pos + lead;
        let body = s.get(start..).unwrap_or(&[]);
        let end = body
            .iter()
            .position(|c| is_sep(*c) || *c == b'#')
            .unwrap_or(body.len());
        let text = body.get(..end).unwrap_or(&[]);
        let mut next = start + end;
        if s.get(next) == Some(&b'#') {
            let after = s.get(next..).unwrap_or(&[]);
            next += after.iter().position(|c| is_sep(*c)).unwrap_or(after.len());
        }
        // Past the separator.
        pos = next.saturating_add(1);
        if !text.is_empty() {
            return Some((start, text));
        }
        if next >= s.len() {
            return None;
        }
    })
}

/// The blank-separated words of `s` with their offsets.
fn words(s: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut pos = 0usize;
    core::iter::from_fn(move || {
        let rest = s.get(pos..)?;
        let lead = rest.iter().take_while(|c| is_space(**c)).count();
        let start = pos + lead;
        let body = s.get(start..)?;
        let len = body.iter().take_while(|c| !is_space(**c)).count();
        pos = start + len;
        (len > 0).then(|| (start, body.get(..len).unwrap_or(&[])))
    })
}

/// An unsigned decimal number that is all of `s` (`sscanf("%u%n")` with
/// the length check), refusing overflow.
fn whole_u32(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |n, d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

/// The hop-count word: a whole number 1..=255 (`lnet_parse_hops`).
fn parse_hops(w: &[u8]) -> Option<u32> {
    whole_u32(w).filter(|h| (1..=MAX_HOPS).contains(h))
}

/// A signed decimal `%d` reads at the start of `s`: the value and the
/// bytes used; `None` when `%d` would match nothing. An overflowing
/// number is `Some(None, used)`.
fn scan_int(s: &[u8]) -> Option<(Option<i64>, usize)> {
    let neg = s.first() == Some(&b'-');
    let digits_at = usize::from(neg);
    let digits = s
        .get(digits_at..)?
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 {
        return None;
    }
    let text = s.get(digits_at..digits_at + digits)?;
    let v = text.iter().try_fold(0i64, |n, d| {
        let n = n.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
        (n <= i64::from(i32::MAX) + 1).then_some(n)
    });
    let v = v.map(|n| if neg { -n } else { n });
    let v = v.filter(|n| i32::try_from(*n).is_ok());
    Some((v, digits_at + digits))
}

/// One item of a `routes=` bracket group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item<'a> {
    /// Text put in as it is.
    Text(&'a [u8]),
    /// The numbers `lo, lo + stride, ..., hi`.
    Range { lo: u32, hi: u32, stride: u32 },
}

/// Reads an item as `lnet_str2tbs_expand` does: `lo-hi/stride` or
/// `lo-hi` when two numbers read, with nothing after; text otherwise.
fn parse_item(item: &[u8]) -> Result<Item<'_>, ErrorKind> {
    let bad = ErrorKind::BadExpansion;
    let Some((lo, n1)) = scan_int(item) else {
        return Ok(Item::Text(item));
    };
    if item.get(n1) != Some(&b'-') {
        return Ok(Item::Text(item));
    }
    let Some((hi, n2)) = item.get(n1 + 1..).and_then(scan_int) else {
        return Ok(Item::Text(item));
    };
    let end_hi = n1 + 1 + n2;
    let (stride, end) = match item.get(end_hi) {
        Some(b'/') => match item.get(end_hi + 1..).and_then(scan_int) {
            Some((s, n3)) => (s, end_hi + 1 + n3),
            // "%d-%d%n" then reads up to `hi`, and `/` is trailing junk.
            None => return Err(bad),
        },
        _ => (Some(1), end_hi),
    };
    if end != item.len() {
        return Err(bad);
    }
    let (Some(lo), Some(hi), Some(stride)) = (lo, hi, stride) else {
        return Err(bad);
    };
    let (Ok(lo), Ok(hi), Ok(stride)) =
        (u32::try_from(lo), u32::try_from(hi), u32::try_from(stride))
    else {
        return Err(bad);
    };
    if hi < lo || stride == 0 || (hi - lo) % stride != 0 {
        return Err(bad);
    }
    Ok(Item::Range { lo, hi, stride })
}

/// How the items of a bracket group read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Groups {
    /// `routes=`: text items and `lo-hi[/stride]` ranges.
    Routes,
    /// `lnetctl --gateway`: expression lists of numbers.
    ExprList,
}

/// A word being built.
struct Word {
    b: [u8; WORD_MAX],
    len: usize,
}

impl Word {
    fn push(&mut self, s: &[u8]) -> Result<(), ErrorKind> {
        let end = self.len.checked_add(s.len()).ok_or(ErrorKind::TooLong)?;
        self.b
            .get_mut(self.len..end)
            .ok_or(ErrorKind::TooLong)?
            .copy_from_slice(s);
        self.len = end;
        Ok(())
    }

    fn push_num(&mut self, mut v: u32) -> Result<(), ErrorKind> {
        let mut digits = [0u8; 10];
        let mut i = digits.len();
        loop {
            i -= 1;
            if let Some(d) = digits.get_mut(i) {
                *d = b'0' + (v % 10) as u8;
            }
            v /= 10;
            if v == 0 || i == 0 {
                break;
            }
        }
        self.push(digits.get(i..).unwrap_or(&[]))
    }

    fn text(&self) -> &[u8] {
        self.b.get(..self.len).unwrap_or(&[])
    }
}

/// Why an expansion stopped.
enum Stop<E> {
    Syntax(ErrorKind),
    Callback(E),
}

/// Calls `f` with every expansion of `rest` appended to `w`, the first
/// group varying slowest (the order Lustre's expansion lists them in).
fn expand_rec<E>(
    rest: &[u8],
    groups: Groups,
    depth: usize,
    w: &mut Word,
    f: &mut dyn FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), Stop<E>> {
    let syntax = |k| Stop::Syntax(k);
    let Some(open) = rest.iter().position(|c| *c == b'[') else {
        w.push(rest).map_err(syntax)?;
        return f(w.text()).map_err(Stop::Callback);
    };
    if depth >= MAX_GROUPS {
        return Err(syntax(ErrorKind::BadExpansion));
    }
    let after_open = rest.get(open + 1..).unwrap_or(&[]);
    let close = after_open
        .iter()
        .position(|c| *c == b']')
        .ok_or(syntax(ErrorKind::BadExpansion))?;
    let inner = after_open.get(..close).unwrap_or(&[]);
    let tail = after_open.get(close + 1..).unwrap_or(&[]);
    if inner.contains(&b'[') {
        return Err(syntax(ErrorKind::BadExpansion));
    }
    w.push(rest.get(..open).unwrap_or(&[])).map_err(syntax)?;
    let mark = w.len;
    let mut one = |w: &mut Word, put: &dyn Fn(&mut Word) -> Result<(), ErrorKind>| {
        w.len = mark;
        put(w).map_err(syntax)?;
        expand_rec(tail, groups, depth + 1, w, f)
    };
    match groups {
        Groups::Routes => {
            // Empty items ("[]", "[a,,b]", "[a,]") are errors.
            for item in inner.split(|c| *c == b',') {
                if item.is_empty() {
                    return Err(syntax(ErrorKind::BadExpansion));
                }
                match parse_item(item).map_err(syntax)? {
                    Item::Text(t) => one(w, &|w| w.push(t))?,
                    Item::Range { lo, hi, stride } => {
                        let values = core::iter::successors(Some(lo), |v| v.checked_add(stride))
                            .take_while(|v| *v <= hi);
                        for v in values {
                            one(w, &|w| w.push_num(v))?;
                        }
                    }
                }
            }
        }
        Groups::ExprList => {
            let bracketed = rest.get(open..open + close + 2).unwrap_or(&[]);
            for re in expr_list::parse(bracketed, 0, u32::MAX) {
                let re = re.map_err(|_| syntax(ErrorKind::BadExpansion))?;
                for v in re.values() {
                    one(w, &|w| w.push_num(v))?;
                }
            }
        }
    }
    Ok(())
}

/// Calls `f` with each word `word` expands to; an error in the word's
/// syntax, or `f`'s error.
fn expand<E>(
    word: &[u8],
    groups: Groups,
    mut f: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<Result<(), E>, ErrorKind> {
    let mut w = Word {
        b: [0; WORD_MAX],
        len: 0,
    };
    match expand_rec(word, groups, 0, &mut w, &mut f) {
        Ok(()) => Ok(Ok(())),
        Err(Stop::Syntax(k)) => Err(k),
        Err(Stop::Callback(e)) => Ok(Err(e)),
    }
}

/// A remote net word: parses, not `lo`, not `LNET_NET_ANY`.
fn parse_net(w: &[u8]) -> Option<Net> {
    let net = Net::parse(core::str::from_utf8(w).ok()?).ok()?;
    (net != Net::ANY && net.lnd() != lnd::LO).then_some(net)
}

/// A gateway word: `<nid>[:<priority>]` (`lnet_parse_priority` then
/// `libcfs_strnid`). The error's offset is relative to the word.
fn parse_gateway(w: &[u8]) -> Result<(Nid, u32), (usize, ErrorKind)> {
    let (nid_text, priority) = match w.iter().position(|c| *c == b':') {
        Some(colon) => {
            let p = w.get(colon + 1..).unwrap_or(&[]);
            let prio = whole_u32(p).ok_or((colon + 1, ErrorKind::BadPriority))?;
            (w.get(..colon).unwrap_or(&[]), prio)
        }
        None => (w, 0),
    };
    let bad = (0, ErrorKind::BadGateway);
    let nid = core::str::from_utf8(nid_text)
        .ok()
        .and_then(|s| Nid::parse(s).ok())
        .ok_or(bad)?;
    let lo0 = nid.net().lnd() == lnd::LO && nid.addr_bytes().iter().all(|b| *b == 0);
    if lo0 {
        return Err(bad);
    }
    Ok((nid, priority))
}

/// Calls `route` with every route of one `routes=` entry (nets outer,
/// gateways inner), after checking all of them. `at` is the entry's
/// offset in the parameter.
fn parse_entry<E>(
    at: usize,
    entry: &[u8],
    route: &mut dyn FnMut(RouteSpec) -> Result<(), E>,
) -> Result<Result<(), E>, Error> {
    let err = |off: usize, len: usize, kind| Error {
        at: at + off,
        len,
        kind,
    };
    let mut ws = words(entry);
    let Some((net_at, nets)) = ws.next() else {
        return Ok(Ok(()));
    };
    let mut hops = UNDEFINED_HOPS;
    let mut first_gw = None;
    if let Some((o, w)) = ws.next() {
        match parse_hops(w) {
            Some(h) => hops = h,
            None => first_gw = Some((o, w)),
        }
    }
    let gws = || first_gw.into_iter().chain(words(entry).skip(2));
    let last = entry.len();
    if gws().next().is_none() {
        return Err(err(last, 0, ErrorKind::MissingGateway));
    }
    // Check pass: every expansion, and the text budget.
    let mut budget = TEXT_BUF_TOTAL;
    let mut spend = |n: usize| -> Result<(), ()> {
        budget = budget
            .checked_sub(n.saturating_add(TEXT_BUF_OVERHEAD))
            .ok_or(())?;
        Ok(())
    };
    let mut check = |o: usize, w: &[u8], is_net: bool| -> Result<(), Error> {
        let r = expand(w, Groups::Routes, |x| {
            spend(x.len()).map_err(|()| (0, ErrorKind::TooMany))?;
            if is_net {
                parse_net(x).map(|_| ()).ok_or((0, ErrorKind::BadNet))
            } else {
                parse_gateway(x).map(|_| ())
            }
        });
        match r {
            Err(k) => Err(err(o, w.len(), k)),
            Ok(Err((0, k))) => Err(err(o, w.len(), k)),
            // A bad priority: the text after the colon (of the original
            // word when it has one there).
            Ok(Err((_, k))) => {
                let colon = w.iter().rposition(|c| *c == b':').map_or(0, |c| c + 1);
                Err(err(o + colon, w.len() - colon, k))
            }
            Ok(Ok(())) => Ok(()),
        }
    };
    check(net_at, nets, true)?;
    for (o, w) in gws() {
        check(o, w, false)?;
    }
    // Emit pass: the checks above cannot fail again.
    let r = expand(nets, Groups::Routes, |n| {
        let net = parse_net(n).ok_or(None)?;
        for (_, w) in gws() {
            let r = expand(w, Groups::Routes, |g| {
                let (gateway, priority) = parse_gateway(g).map_err(|_| None)?;
                route(RouteSpec {
                    net,
                    gateway,
                    hops,
                    priority,
                    sensitivity: None,
                })
                .map_err(Some)
            });
            r.map_err(|_| None)??;
        }
        Ok::<(), Option<E>>(())
    });
    match r {
        Ok(Ok(())) => Ok(Ok(())),
        Ok(Err(Some(e))) => Ok(Err(e)),
        Ok(Err(None)) | Err(_) => Err(err(net_at, nets.len(), ErrorKind::BadExpansion)),
    }
}

/// Parses `routes=`, calling `route` with each route in order; stops at
/// the first syntax error (routes of earlier entries were given) or the
/// first error of `route`.
pub fn for_each_route<E>(
    routes: &[u8],
    mut route: impl FnMut(RouteSpec) -> Result<(), E>,
) -> Result<Result<(), E>, Error> {
    for (at, entry) in entries(routes) {
        if let Err(e) = parse_entry(at, entry, &mut route)? {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}

/// Checks `routes=` without adding anything: the number of routes it
/// names.
pub fn validate(routes: &[u8]) -> Result<usize, Error> {
    let mut n = 0usize;
    for_each_route(routes, |_| {
        n = n.saturating_add(1);
        Ok::<(), ()>(())
    })?
    .map_err(|()| Error {
        at: 0,
        len: 0,
        kind: ErrorKind::TooMany,
    })?;
    Ok(n)
}

/// What adding the routes of `routes=` did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Routes added.
    pub added: usize,
    /// Routes skipped as existing or with an unreachable gateway.
    pub skipped: usize,
    /// A gateway is one of this node's NIDs: the node is a router
    /// (`im_a_router`).
    pub im_a_router: bool,
}

/// Adds the routes of `routes=` as LNet does at startup: `is_local_nid`
/// says which gateways are this node's own NIDs (no route; the node
/// routes), and `add` adds one route to the table. `-EEXIST` and
/// `-EHOSTUNREACH` from `add` are skipped; any other error stops with the
/// offending entry's net word.
pub fn apply(
    routes: &[u8],
    is_local_nid: impl Fn(&Nid) -> bool,
    mut add: impl FnMut(&RouteSpec) -> Result<(), RouteError>,
) -> Result<Applied, Error> {
    let mut a = Applied::default();
    for (at, entry) in entries(routes) {
        let r = parse_entry(at, entry, &mut |spec: RouteSpec| {
            if is_local_nid(&spec.gateway) {
                a.im_a_router = true;
                return Ok(());
            }
            match add(&spec) {
                Ok(()) => a.added += 1,
                Err(RouteError::Exists | RouteError::LocalNet | RouteError::Unreachable) => {
                    a.skipped += 1
                }
                Err(e) => return Err(e),
            }
            Ok(())
        })?;
        if let Err(e) = r {
            let (o, w) = words(entry).next().unwrap_or((0, &[]));
            return Err(Error {
                at: at + o,
                len: w.len(),
                kind: ErrorKind::Route(e),
            });
        }
    }
    Ok(a)
}

/// Why `lnetctl route add --gateway` refused its list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GatewayListError {
    /// `*` in the list.
    Asterisk,
    /// `<?>` (`LNET_ANY_NID`) in the list.
    AnyNid,
    /// No `@` in the list.
    NoNid,
    /// A NID that does not parse, or an empty item.
    BadNid,
    /// A range that does not parse or is in the wrong order.
    BadRange,
    /// An expanded NID too long for a NID.
    TooLong,
    /// More than [`MAX_GATEWAYS`] NIDs.
    TooMany,
}

/// The most NIDs one `--gateway` list may give.
pub const MAX_GATEWAYS: usize = 1 << 16;

impl GatewayListError {
    /// lnetctl's message.
    pub const fn message(self) -> &'static str {
        match self {
            GatewayListError::Asterisk => "asterisk not allowed in nidstring",
            GatewayListError::AnyNid => "Unable to parse nidlist: LNET_ANY_NID is unsupported",
            GatewayListError::NoNid => "Unable to parse nidlist: no valid NIDs in string",
            GatewayListError::BadNid => "Unable to parse nidlist: invalid NID in nidstr",
            GatewayListError::BadRange => "Unable to parse nidlist: invalid character in range",
            GatewayListError::TooLong => "Unable to parse nidlist: NID too long",
            GatewayListError::TooMany => "Unable to parse nidlist: too many NIDs",
        }
    }

    /// The negative errno lnetctl returns.
    pub const fn errno(self) -> i32 {
        -super::route::EINVAL
    }
}

impl fmt::Display for GatewayListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// The NIDs of a `--gateway` list (`lustre_lnet_parse_nid_range`): NIDs
/// separated by commas outside brackets, each address part holding
/// bracket groups that are expression lists (expr_list.rs):
/// `192.168.1.[1-3,7]@tcp,10.0.0.1@tcp`. Deliberate differences from
/// lnetctl: numbers are decimal only (lnetctl reads hex when the address
/// has a `:`; ranges in IPv6 or GUID addresses are refused here), a range
/// of only 0 gives 0 (lnetctl gives nothing), and host names are not
/// looked up.
pub fn for_each_gateway(list: &[u8], mut f: impl FnMut(Nid)) -> Result<usize, GatewayListError> {
    if list.contains(&b'*') {
        return Err(GatewayListError::Asterisk);
    }
    if list.windows(3).any(|w| w == b"<?>") {
        return Err(GatewayListError::AnyNid);
    }
    if !list.contains(&b'@') {
        return Err(GatewayListError::NoNid);
    }
    let mut n = 0usize;
    let mut depth = 0u32;
    let mut start = 0usize;
    for i in 0..=list.len() {
        let c = list.get(i).copied();
        match c {
            Some(b'[') => depth = depth.saturating_add(1),
            Some(b']') => depth = depth.saturating_sub(1),
            Some(b',') if depth > 0 => {}
            Some(b',') | None => {
                let item = list.get(start..i).unwrap_or(&[]);
                start = i + 1;
                let r = expand(item, Groups::ExprList, |w| {
                    let nid = core::str::from_utf8(w)
                        .ok()
                        .and_then(|s| Nid::parse(s).ok())
                        .filter(|n| !n.is_any())
                        .ok_or(GatewayListError::BadNid)?;
                    if n >= MAX_GATEWAYS {
                        return Err(GatewayListError::TooMany);
                    }
                    f(nid);
                    n = n.saturating_add(1);
                    Ok(())
                });
                match r {
                    Ok(r) => r?,
                    Err(ErrorKind::TooLong) => return Err(GatewayListError::TooLong),
                    Err(_) => return Err(GatewayListError::BadRange),
                }
            }
            Some(_) => {}
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use proptest::prelude::*;
    use std::string::{String, ToString};
    use std::vec::Vec;

    pub(super) fn routes(s: &str) -> Result<Vec<String>, Error> {
        let mut v = Vec::new();
        for_each_route(s.as_bytes(), |r| {
            let mut t = std::format!("{} {}", r.net, r.gateway);
            if r.hops != UNDEFINED_HOPS {
                t += &std::format!(" hops={}", r.hops);
            }
            if r.priority != 0 {
                t += &std::format!(" prio={}", r.priority);
            }
            v.push(t);
            Ok::<(), ()>(())
        })?
        .unwrap();
        Ok(v)
    }

    fn kind(s: &str) -> ErrorKind {
        routes(s).unwrap_err().kind
    }

    #[test]
    fn plain_routes() {
        assert_eq!(routes("").unwrap(), Vec::<String>::new());
        assert_eq!(routes(" ; \n# nothing\n").unwrap(), Vec::<String>::new());
        assert_eq!(
            routes("tcp1 192.168.0.1@o2ib").unwrap(),
            ["tcp1 192.168.0.1@o2ib"]
        );
        assert_eq!(
            routes("tcp1 2 192.168.0.1@o2ib 192.168.0.2@o2ib:3").unwrap(),
            [
                "tcp1 192.168.0.1@o2ib hops=2",
                "tcp1 192.168.0.2@o2ib hops=2 prio=3"
            ]
        );
        assert_eq!(
            routes("tcp1 10.0.0.1@o2ib # comment; o2ib2 10.0.0.2@tcp\r\n o2ib3\t10.0.0.3@tcp")
                .unwrap(),
            // A comment runs to the next separator, `;` included.
            [
                "tcp1 10.0.0.1@o2ib",
                "o2ib2 10.0.0.2@tcp",
                "o2ib3 10.0.0.3@tcp"
            ]
        );
    }

    #[test]
    fn hop_word_or_gateway() {
        // 1..=255 is a hop count; anything else in second place is a
        // gateway, which then fails to parse.
        assert_eq!(
            routes("tcp1 255 1.2.3.4@o2ib").unwrap(),
            ["tcp1 1.2.3.4@o2ib hops=255"]
        );
        for bad in [
            "tcp1 0 1.2.3.4@o2ib",
            "tcp1 256 1.2.3.4@o2ib",
            "tcp1 +1 1.2.3.4@o2ib",
        ] {
            let e = routes(bad).unwrap_err();
            let second = bad.split(' ').nth(1).unwrap();
            assert_eq!(
                (e.kind, e.at, e.len),
                (ErrorKind::BadGateway, 5, second.len()),
                "{bad}"
            );
        }
        // A hop count needs a gateway after it.
        assert_eq!(kind("tcp1 3"), ErrorKind::MissingGateway);
        assert_eq!(kind("tcp1"), ErrorKind::MissingGateway);
        assert_eq!(kind("tcp1 4294967297 1.2.3.4@o2ib"), ErrorKind::BadGateway);
    }

    #[test]
    fn expansions_in_lustre_order() {
        assert_eq!(
            routes("o2ib[1-2] 10.0.0.[1,5-9/4]@tcp").unwrap(),
            [
                "o2ib1 10.0.0.1@tcp",
                "o2ib1 10.0.0.5@tcp",
                "o2ib1 10.0.0.9@tcp",
                "o2ib2 10.0.0.1@tcp",
                "o2ib2 10.0.0.5@tcp",
                "o2ib2 10.0.0.9@tcp"
            ]
        );
        // Text items, several groups, first group slowest.
        assert_eq!(
            routes("[tcp,o2ib]1 10.[1-2].0.[3,4]@tcp2").unwrap(),
            [
                "tcp1 10.1.0.3@tcp2",
                "tcp1 10.1.0.4@tcp2",
                "tcp1 10.2.0.3@tcp2",
                "tcp1 10.2.0.4@tcp2",
                "o2ib1 10.1.0.3@tcp2",
                "o2ib1 10.1.0.4@tcp2",
                "o2ib1 10.2.0.3@tcp2",
                "o2ib1 10.2.0.4@tcp2"
            ]
        );
        // Priorities expand with their gateways; leading zeros go.
        assert_eq!(
            routes("tcp1 10.0.0.[01-02]@o2ib:7").unwrap(),
            ["tcp1 10.0.0.1@o2ib prio=7", "tcp1 10.0.0.2@o2ib prio=7"]
        );
        // "1-" is text to sscanf, and then not a number in a NID.
        assert_eq!(kind("tcp1 10.0.0.[1-]@o2ib"), ErrorKind::BadGateway);
    }

    #[test]
    fn per_gateway_priority() {
        // Lustre would give both routes priority 0 (the last word's).
        assert_eq!(
            routes("tcp1 1.2.3.4@o2ib:1 1.2.3.5@o2ib").unwrap(),
            ["tcp1 1.2.3.4@o2ib prio=1", "tcp1 1.2.3.5@o2ib"]
        );
    }

    #[test]
    fn bad_expansions() {
        for bad in [
            "tcp[1 1.2.3.4@o2ib",
            "tcp[] 1.2.3.4@o2ib",
            "tcp[1,] 1.2.3.4@o2ib",
            "tcp[,1] 1.2.3.4@o2ib",
            "tcp[1-3x] 1.2.3.4@o2ib",
            "tcp[3-1] 1.2.3.4@o2ib",
            "tcp[1-4/2] 1.2.3.4@o2ib",
            "tcp[1-3/0] 1.2.3.4@o2ib",
            "tcp[1-3/] 1.2.3.4@o2ib",
            "tcp[-1-3] 1.2.3.4@o2ib",
            "tcp[1-99999999999] 1.2.3.4@o2ib",
            "tcp[a[1]] 1.2.3.4@o2ib",
        ] {
            let e = routes(bad).unwrap_err();
            assert_eq!((e.kind, e.at), (ErrorKind::BadExpansion, 0), "{bad}");
            assert_eq!(e.word(bad), bad.split(' ').next().unwrap());
        }
        assert_eq!(kind("t[x]p1 1.2.3.4@o2ib"), ErrorKind::BadNet);
        let nine = "tcp[1][1][1][1][1][1][1][1][1] 1.2.3.4@o2ib";
        assert_eq!(kind(nine), ErrorKind::BadExpansion);
        assert_eq!(
            routes("[t][c][p][1] [1].[2].[3].[4]@o2ib").unwrap(),
            ["tcp1 1.2.3.4@o2ib"]
        );
        assert_eq!(
            kind("tcp1 [1].[2].[3].[4]@[o][2][i][b][1]"),
            ErrorKind::BadExpansion
        );
        let too_long = std::format!("tcp1 1.2.3.4@o2ib{}", "x".repeat(WORD_MAX));
        assert_eq!(kind(&too_long), ErrorKind::TooLong);
    }

    #[test]
    fn nets_and_gateways_checked() {
        assert_eq!(kind("lo 1.2.3.4@o2ib"), ErrorKind::BadNet);
        assert_eq!(kind("foo1 1.2.3.4@o2ib"), ErrorKind::BadNet);
        assert_eq!(kind("tcp1 0@lo"), ErrorKind::BadGateway);
        assert_eq!(kind("tcp1 1.2.3.4@o2ib:"), ErrorKind::BadPriority);
        let e = routes("tcp1 1.2.3.4@o2ib:x").unwrap_err();
        assert_eq!((e.kind, e.at, e.len), (ErrorKind::BadPriority, 18, 1));
        assert_eq!(kind("tcp1 1.2.3.4@o2ib:-1"), ErrorKind::BadPriority);
        assert_eq!(kind("tcp1 1.2.3.4@o2ib:4294967296"), ErrorKind::BadPriority);
        // A NID without a net is on tcp, as libcfs_str2nid reads it.
        assert_eq!(routes("tcp1 1.2.3.4").unwrap(), ["tcp1 1.2.3.4@tcp"]);
        // An entry is checked whole before any of its routes is given.
        let mut got = 0;
        let r = for_each_route(b"tcp1 1.2.3.4@o2ib; tcp2 1.2.3.4@o2ib bad", |_| {
            got += 1;
            Ok::<(), ()>(())
        });
        assert_eq!(r.unwrap_err().at, 37);
        assert_eq!(got, 1);
    }

    #[test]
    fn budget_bounds_an_entry() {
        // 256 * 256 gateways of 15+ bytes: far past 64 KiB.
        assert_eq!(kind("tcp1 10.0.[0-255].[0-255]@o2ib"), ErrorKind::TooMany);
        // 1000 gateways: (about 16 + 21) * 1000 < 64 KiB.
        assert_eq!(validate(b"tcp1 10.0.[0-9].[0-99]@o2ib"), Ok(1000));
        assert_eq!(kind("tcp1 [0-2147483647]@gni"), ErrorKind::TooMany);
    }

    #[test]
    fn apply_skips_what_lustre_skips() {
        let me = Nid::parse("1.2.3.9@o2ib").unwrap();
        let mut added = Vec::new();
        let a = apply(
            b"tcp1 1.2.3.[4-5]@o2ib 1.2.3.9@o2ib; tcp2 1.2.3.4@o2ib",
            |n| *n == me,
            |s| {
                if s.net == Net::parse("tcp2").unwrap() {
                    return Err(RouteError::Unreachable);
                }
                if added.contains(&s.gateway) {
                    return Err(RouteError::Exists);
                }
                added.push(s.gateway);
                Ok(())
            },
        );
        assert_eq!(
            a,
            Ok(Applied {
                added: 2,
                skipped: 1,
                im_a_router: true
            })
        );
        let e = apply(
            b"tcp1 1.2.3.4@o2ib;  tcp3 1.2.3.4@o2ib",
            |_| false,
            |s| {
                if s.net == Net::parse("tcp3").unwrap() {
                    Err(RouteError::Invalid)
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert_eq!(
            (e.at, e.len, e.kind),
            (20, 4, ErrorKind::Route(RouteError::Invalid))
        );
        assert_eq!(e.errno(), -22);
        assert!(e.to_string().contains("-22"));
    }

    fn gateways(s: &str) -> Result<Vec<String>, GatewayListError> {
        let mut v = Vec::new();
        for_each_gateway(s.as_bytes(), |n| v.push(n.to_string()))?;
        Ok(v)
    }

    #[test]
    fn gateway_lists() {
        assert_eq!(gateways("10.0.0.1@tcp").unwrap(), ["10.0.0.1@tcp"]);
        assert_eq!(
            gateways("10.0.0.[1-3/2,7]@tcp,10.0.1.[0]@tcp1").unwrap(),
            [
                "10.0.0.1@tcp",
                "10.0.0.3@tcp",
                "10.0.0.7@tcp",
                "10.0.1.0@tcp1"
            ]
        );
        assert_eq!(
            gateways("10.[1-2].0.[1,2]@o2ib").unwrap(),
            [
                "10.1.0.1@o2ib",
                "10.1.0.2@o2ib",
                "10.2.0.1@o2ib",
                "10.2.0.2@o2ib"
            ]
        );
        assert_eq!(gateways("10.0.0.*@tcp"), Err(GatewayListError::Asterisk));
        assert_eq!(gateways("<?>"), Err(GatewayListError::AnyNid));
        assert_eq!(gateways("10.0.0.1"), Err(GatewayListError::NoNid));
        assert_eq!(gateways("10.0.0.1@tcp,"), Err(GatewayListError::BadNid));
        assert_eq!(gateways("10.0.0.1@foo"), Err(GatewayListError::BadNid));
        assert_eq!(
            gateways("10.0.0.[3-1]@tcp"),
            Err(GatewayListError::BadRange)
        );
        assert_eq!(gateways("10.0.0.[1@tcp"), Err(GatewayListError::BadRange));
        assert_eq!(
            gateways("10.0.0.[1,x]@tcp"),
            Err(GatewayListError::BadRange)
        );
        assert_eq!(gateways("10.0.0.[256]@tcp"), Err(GatewayListError::BadNid));
        assert_eq!(
            gateways("[0-4294967295]@gni"),
            Err(GatewayListError::TooMany)
        );
        assert_eq!(
            GatewayListError::Asterisk.to_string(),
            "asterisk not allowed in nidstring"
        );
        assert_eq!(GatewayListError::BadNid.errno(), -22);
    }

    proptest! {
        #[test]
        fn routes_never_panic(s in "[ -~\n;#\\[\\]]{0,80}") {
            let _ = validate(s.as_bytes());
            let _ = for_each_gateway(s.as_bytes(), |_| {});
        }

        #[test]
        fn routes_near_the_syntax(
            s in "(tcp|o2ib|lo|\\[tcp,o2ib\\])[0-9\\[\\]\\-/,]{0,6} ([0-9]{1,3} )?([0-9\\[\\]\\-/,.]{1,12}@(tcp|o2ib)[0-9]?(:[0-9]{0,3})? ?){1,3}"
        ) {
            if let Ok(n) = validate(s.as_bytes()) {
                prop_assert!(n >= 1);
                // Every route given is one the table's own check accepts
                // apart from the net relations.
                for_each_route(s.as_bytes(), |r| {
                    assert!(r.net != Net::ANY && r.net.lnd() != lnd::LO);
                    assert!(super::super::route::hops_valid(r.hops));
                    Ok::<(), ()>(())
                }).unwrap().unwrap();
            }
        }
    }
}
