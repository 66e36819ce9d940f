//! The peer commands of Lustre's `lnet` generic netlink family (the codec
//! is [`lnet_nl`](super::lnet_nl)): `LNET_CMD_PEERS` as a dump (`lnetctl peer
//! show [--nid N] [-v N]`), as a request (`peer add|del|set`, [`peer_cmd`])
//! and `LNET_CMD_PING`, a dump for `lnetctl ping`
//! and a request for `lnetctl discover`. Requests are checked whole before
//! anything is done; the reply's attribute ids and key tables are those of
//! Lustre's `lnet_peer_ni_*` and `ping_*` lists.

use super::lnet_nl::{
    errno, key, keyf, lnkf, net_show, nla, scalar, top, validate, Attrs, Key, KeyTable, NlError,
};
use super::nid::Nid;

/// Longest NID string a request may hold (`LNET_NIDSTR_SIZE`, with its NUL).
const NIDSTR_SIZE: usize = 64;

/// Reply ids and key tables of `peer show` (`enum lnet_peer_ni_attrs`
/// and the lists under it in Lustre's lib-types.h).
pub mod show {
    use super::{key, keyf, lnkf, net_show, nla, KeyTable};

    /// `LNET_PEER_NI_ATTR_HDR`: `peer:` (first peer's message only).
    pub const ATTR_HDR: u16 = 1;
    /// `LNET_PEER_NI_ATTR_PRIMARY_NID`.
    pub const ATTR_PRIMARY_NID: u16 = 2;
    /// `LNET_PEER_NI_ATTR_MULTIRAIL`: a flag, absent when not.
    pub const ATTR_MULTIRAIL: u16 = 3;
    /// `LNET_PEER_NI_ATTR_STATE`: `lp_state` (version 3 and up).
    pub const ATTR_STATE: u16 = 4;
    /// `LNET_PEER_NI_ATTR_PEER_NI_LIST`.
    pub const ATTR_PEER_NI_LIST: u16 = 5;

    /// `enum lnet_peer_ni_list_attr`: one peer NI.
    pub mod ni {
        /// `nid`.
        pub const NID: u16 = 1;
        /// `udsp info` (version 4 and up).
        pub const UDSP_INFO: u16 = 2;
        /// `state`.
        pub const STATE: u16 = 3;
        /// `max_ni_tx_credits` (version 1 and up, as what follows).
        pub const MAX_TX_CREDITS: u16 = 4;
        /// `available_tx_credits`.
        pub const CUR_TX_CREDITS: u16 = 5;
        /// `min_tx_credits`.
        pub const MIN_TX_CREDITS: u16 = 6;
        /// `tx_q_num_of_buf`.
        pub const QUEUE_BUF_COUNT: u16 = 7;
        /// `available_rtr_credits`.
        pub const CUR_RTR_CREDITS: u16 = 8;
        /// `min_rtr_credits`.
        pub const MIN_RTR_CREDITS: u16 = 9;
        /// `refcount`.
        pub const REFCOUNT: u16 = 10;
        /// `statistics`.
        pub const STATS_COUNT: u16 = 11;
        /// `sent_stats` (version 2 and up, as what follows).
        pub const SENT_STATS: u16 = 12;
        /// `received_stats`.
        pub const RECV_STATS: u16 = 13;
        /// `dropped_stats`.
        pub const DROP_STATS: u16 = 14;
        /// `health stats`.
        pub const HEALTH_STATS: u16 = 15;
    }

    /// `enum lnet_udsp_info_attr`.
    pub mod udsp {
        /// `net priority`.
        pub const NET_PRIORITY: u16 = 1;
        /// `nid priority`.
        pub const NID_PRIORITY: u16 = 2;
    }

    /// `enum lnet_peer_ni_list_health_stats`.
    pub mod health {
        /// `health value`.
        pub const VALUE: u16 = 1;
        /// `dropped`.
        pub const DROPPED: u16 = 2;
        /// `timeout`.
        pub const TIMEOUT: u16 = 3;
        /// `error`.
        pub const ERROR: u16 = 4;
        /// `network timeout`.
        pub const NETWORK_TIMEOUT: u16 = 5;
        /// `ping_count`.
        pub const PING_COUNT: u16 = 6;
        /// `next_ping`.
        pub const NEXT_PING: u16 = 7;
    }

    /// `lnet_peer_ni_keys`.
    pub const PEER: KeyTable = &[
        keyf(c"peer", lnkf::SEQUENCE | lnkf::MAPPING, nla::NUL_STRING),
        key(c"primary nid", nla::STRING),
        key(c"Multi-Rail", nla::FLAG),
        key(c"peer state", nla::U32),
        keyf(c"peer ni", lnkf::SEQUENCE | lnkf::MAPPING, nla::NESTED),
    ];

    /// `lnet_peer_ni_list`.
    pub const PEER_NI: KeyTable = &[
        key(c"nid", nla::STRING),
        keyf(c"udsp info", lnkf::MAPPING, nla::NESTED),
        key(c"state", nla::STRING),
        key(c"max_ni_tx_credits", nla::U32),
        key(c"available_tx_credits", nla::U32),
        key(c"min_tx_credits", nla::U32),
        key(c"tx_q_num_of_buf", nla::U32),
        key(c"available_rtr_credits", nla::U32),
        key(c"min_rtr_credits", nla::U32),
        key(c"refcount", nla::U32),
        keyf(c"statistics", lnkf::MAPPING, nla::NESTED),
        keyf(c"sent_stats", lnkf::MAPPING, nla::NESTED),
        keyf(c"received_stats", lnkf::MAPPING, nla::NESTED),
        keyf(c"dropped_stats", lnkf::MAPPING, nla::NESTED),
        keyf(c"health stats", lnkf::MAPPING, nla::NESTED),
    ];

    /// `lnet_peer_ni_list_health`.
    pub const HEALTH: KeyTable = &[
        key(c"health value", nla::S32),
        key(c"dropped", nla::U32),
        key(c"timeout", nla::U32),
        key(c"error", nla::U32),
        key(c"network timeout", nla::U32),
        key(c"ping_count", nla::U32),
        key(c"next_ping", nla::S64),
    ];

    /// The tables of the key message, in the order their `NLA_NESTED`
    /// keys take them. The statistics, message counts and UDSP tables are
    /// the same keys as a local NI's (`net show`).
    pub fn tables() -> [Option<KeyTable>; 10] {
        [
            Some(PEER),
            Some(PEER_NI),
            Some(net_show::UDSP_INFO),
            Some(net_show::UDSP_PREF_NIDS),
            Some(net_show::UDSP_PREF_NIDS),
            Some(net_show::STATS),
            Some(net_show::MSG_STATS),
            Some(net_show::MSG_STATS),
            Some(net_show::MSG_STATS),
            Some(HEALTH),
        ]
    }
}

/// Reply ids and key tables of `ping` and `discover`.
pub mod ping {
    use super::{key, keyf, lnkf, nla, Key, KeyTable};

    /// `LNET_PING_ATTR_HDR`: `ping:` or `discover:` (first entry only).
    pub const ATTR_HDR: u16 = 1;
    /// `LNET_PING_ATTR_PRIMARY_NID`.
    pub const ATTR_PRIMARY_NID: u16 = 2;
    /// `LNET_PING_ATTR_MULTIRAIL`: a flag.
    pub const ATTR_MULTIRAIL: u16 = 4;
    /// `LNET_PING_ATTR_PEER_NI_LIST`: entries numbered from 1, each a
    /// `nid` ([`PEER_NI_NID`]).
    pub const ATTR_PEER_NI_LIST: u16 = 5;
    /// `LNET_PING_PEER_NI_ATTR_NID`.
    pub const PEER_NI_NID: u16 = 1;

    /// `enum lnet_err_attrs`: the entries of failed targets.
    pub mod err {
        /// `manage:` (first entry only).
        pub const HDR: u16 = 1;
        /// The command's key (`ping` or `discover`), given "\n".
        pub const TYPE: u16 = 2;
        /// `errno`.
        pub const ERRNO: u16 = 3;
        /// `descr`.
        pub const DESCR: u16 = 4;
    }

    const fn props(name: &'static core::ffi::CStr) -> [Key; 5] {
        [
            keyf(name, lnkf::SEQUENCE | lnkf::MAPPING, nla::NUL_STRING),
            key(c"primary nid", nla::STRING),
            key(c"errno", nla::S16),
            key(c"Multi-Rail", nla::FLAG),
            keyf(c"peer_ni", lnkf::SEQUENCE | lnkf::MAPPING, nla::NESTED),
        ]
    }

    const fn errs(name: &'static core::ffi::CStr) -> [Key; 4] {
        [
            keyf(c"manage", lnkf::SEQUENCE | lnkf::MAPPING, nla::NUL_STRING),
            key(name, nla::STRING),
            key(c"errno", nla::S16),
            key(c"descr", nla::STRING),
        ]
    }

    /// `ping_props_list`.
    pub const PING: KeyTable = &props(c"ping");
    /// `discover_props_list`.
    pub const DISCOVER: KeyTable = &props(c"discover");
    /// `ping_peer_ni_list`.
    pub const PEER_NI: KeyTable = &[key(c"nid", nla::STRING)];
    /// `ping_err_props_list`.
    pub const PING_ERR: KeyTable = &errs(c"ping");
    /// `discover_err_props_list`.
    pub const DISCOVER_ERR: KeyTable = &errs(c"discover");
}

/// A string value as Lustre copies it (`nla_strscpy` into a NID buffer,
/// then `strim`): `E2BIG` when it does not fit.
fn nid_str<'a>(a: &super::lnet_nl::Attr<'a>) -> Result<&'a str, i32> {
    let s = a.str().ok_or(errno::EINVAL)?;
    if s.len() >= NIDSTR_SIZE {
        return Err(errno::E2BIG);
    }
    Ok(s.trim())
}

/// The peers `peer show --nid` names: the values of every `primary nid`
/// key in the lists of the request's first attribute
/// (`lnet_peer_ni_show_start`); none when the request is empty (every
/// peer). Checked whole when made.
#[derive(Clone, Copy, Debug)]
pub struct PeerFilter<'a> {
    buf: &'a [u8],
}

impl<'a> PeerFilter<'a> {
    /// Checks a `peer show` request: `Ok(None)` for every peer.
    pub fn new(buf: &'a [u8]) -> Result<Option<Self>, NlError> {
        if buf.is_empty() {
            return Ok(None);
        }
        validate(buf)?;
        let f = PeerFilter { buf };
        f.walk(|_| true)?;
        Ok(Some(f))
    }

    /// Gives `f` each NID in order until it returns false.
    fn walk(&self, mut f: impl FnMut(Nid) -> bool) -> Result<(), NlError> {
        for list in top(self.buf)?.nested() {
            if list.kind != scalar::LIST {
                continue;
            }
            let mut it = list.nested();
            while let Some(k) = it.next() {
                if !k.is_key("primary nid") {
                    continue;
                }
                let v = it
                    .next()
                    .filter(|v| v.kind == scalar::VALUE)
                    .ok_or(NlError::new(errno::EINVAL, c"invalid primary nid param"))?;
                let s =
                    nid_str(&v).map_err(|e| NlError::new(e, c"failed to get primary nid param"))?;
                let nid = Nid::parse(s).map_err(|_| NlError::new(errno::EINVAL, c"invalid NID"))?;
                if !f(nid) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The `k`th NID named (from 0).
    pub fn nth(&self, k: usize) -> Option<Nid> {
        let mut seen = 0;
        let mut found = None;
        let _ = self.walk(|n| {
            if seen == k {
                found = Some(n);
                return false;
            }
            seen += 1;
            true
        });
        found
    }
}

/// Lustre's ping timeout when none (or one out of range) is given:
/// `DEFAULT_PEER_TIMEOUT`, 180 s.
pub const PING_DEFAULT_MS: u32 = 180_000;

/// A `ping` request (`lnet_ping_show_start`): `timeout` (ms) and `source`
/// keys and lists of target NIDs, all at the request's top level. Checked
/// whole when made.
#[derive(Clone, Copy, Debug)]
pub struct PingRequest<'a> {
    /// The wait for each reply, in milliseconds.
    pub timeout_ms: u32,
    /// The source NID asked for, if any.
    pub source: Option<Nid>,
    buf: &'a [u8],
}

/// One target of a `ping` or `discover` list as given: its NID, or the
/// string that did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target<'a> {
    /// A NID.
    Nid(Nid),
    /// Not a NID.
    Bad(&'a str),
}

/// The targets of a request's top-level lists, in order; a value too long
/// for a NID is an error (`failed to get NID`).
fn targets<'a>(buf: &'a [u8], mut f: impl FnMut(Target<'a>) -> bool) -> Result<(), NlError> {
    for list in Attrs::new(buf) {
        if list.kind != scalar::LIST {
            continue;
        }
        for v in list.nested() {
            if v.kind != scalar::VALUE {
                continue;
            }
            let s = nid_str(&v).map_err(|e| NlError::new(e, c"failed to get NID"))?;
            let t = match Nid::parse(s) {
                Ok(n) => Target::Nid(n),
                Err(_) => Target::Bad(s),
            };
            if !f(t) {
                return Ok(());
            }
        }
    }
    Ok(())
}

impl<'a> PingRequest<'a> {
    /// Checks a `ping` request. lnet-rs takes a target NID only (not
    /// Lustre's `pid-nid` form): anything else is refused with the request.
    pub fn new(buf: &'a [u8]) -> Result<Self, NlError> {
        if buf.is_empty() {
            return Err(NlError::new(errno::ENOENT, c"Ping needs NID targets"));
        }
        validate(buf)?;
        let mut req = PingRequest {
            timeout_ms: PING_DEFAULT_MS,
            source: None,
            buf,
        };
        let mut it = Attrs::new(buf);
        while let Some(a) = it.next() {
            if a.is_key("timeout") {
                let t = it
                    .next()
                    .and_then(|v| v.int())
                    .ok_or(NlError::new(errno::EINVAL, c"invalid timeout param"))?;
                if t > 0 && t < i64::from(PING_DEFAULT_MS) {
                    req.timeout_ms = t as u32;
                }
            } else if a.is_key("source") {
                let v = it
                    .next()
                    .filter(|v| v.kind == scalar::VALUE)
                    .ok_or(NlError::new(errno::EINVAL, c"invalid source param"))?;
                let s = nid_str(&v).map_err(|e| NlError::new(e, c"failed to parse source nid"))?;
                let n = Nid::parse(s)
                    .map_err(|_| NlError::new(errno::EINVAL, c"invalid source nid"))?;
                req.source = Some(n);
            }
        }
        let mut bad = false;
        targets(buf, |t| {
            bad = matches!(t, Target::Bad(_));
            !bad
        })?;
        if bad {
            return Err(NlError::new(errno::EINVAL, c"cannot parse NID"));
        }
        Ok(req)
    }

    /// The `k`th target (from 0).
    pub fn nth(&self, k: usize) -> Option<Nid> {
        let mut seen = 0;
        let mut found = None;
        let _ = targets(self.buf, |t| {
            if seen == k {
                if let Target::Nid(n) = t {
                    found = Some(n);
                }
                return false;
            }
            seen += 1;
            true
        });
        found
    }
}

/// Checks a `discover` request (`lnet_ping_cmd`): not empty, flagged
/// `NLM_F_CREATE`, every value fits a NID. Targets that do not parse are
/// not errors of the request: each is reported in the reply.
pub fn discover_check(buf: &[u8], flags: u16) -> Result<(), NlError> {
    if buf.is_empty() {
        return Err(NlError::new(errno::ENOMSG, c"no configuration"));
    }
    if flags & super::lnet_nl::nlm::CREATE == 0 {
        return Err(NlError::new(
            errno::EINVAL,
            c"only NLM_F_CREATE setting is allowed",
        ));
    }
    validate(buf)?;
    targets(buf, |_| true)
}

/// The `k`th target of a checked `discover` request (from 0).
pub fn discover_nth(buf: &[u8], k: usize) -> Option<Target<'_>> {
    let mut seen = 0;
    let mut found = None;
    let _ = targets(buf, |t| {
        if seen == k {
            found = Some(t);
            return false;
        }
        seen += 1;
        true
    });
    found
}

/// `LNET_CMD_PEER_DIST` (`lctl which_nid`): the reply's attributes and
/// key table (`peer_dist_props_list`).
pub mod dist {
    use super::{key, keyf, lnkf, nla, KeyTable};

    /// `LNET_PEER_DIST_ATTR_HDR`: the entry's header.
    pub const ATTR_HDR: u16 = 1;
    /// `LNET_PEER_DIST_ATTR_NID`.
    pub const ATTR_NID: u16 = 2;
    /// `LNET_PEER_DIST_ATTR_DIST`.
    pub const ATTR_DIST: u16 = 3;
    /// `LNET_PEER_DIST_ATTR_ORDER`.
    pub const ATTR_ORDER: u16 = 4;

    /// `peer_dist_props_list`.
    pub const PEER_DIST: KeyTable = &[
        keyf(c"peer", lnkf::SEQUENCE | lnkf::MAPPING, nla::NUL_STRING),
        key(c"nid", nla::STRING),
        key(c"distance", nla::U32),
        key(c"order", nla::U32),
    ];
}

/// A process id's NID as `libcfs_strid` reads it: a decimal pid and `-`
/// before the NID, or the NID alone (a prefix of `LNET_PID_ANY` before the
/// first `-` makes the whole string the NID, which then does not parse).
fn strid_nid(s: &str) -> Result<Nid, i32> {
    match s.split_once('-') {
        Some((pid, nid)) if !"LNET_PID_ANY-".starts_with(pid) => {
            pid.parse::<u32>().map_err(|e| match e.kind() {
                core::num::IntErrorKind::PosOverflow => errno::ERANGE,
                _ => errno::EINVAL,
            })?;
            Nid::parse(nid).map_err(|_| errno::EINVAL)
        }
        _ => Nid::parse(s).map_err(|_| errno::EINVAL),
    }
}

/// Checks a `PEER_DIST` request (`lnet_peer_dist_show_start`): NIDs or
/// process ids in the lists at its top level, every one readable.
pub fn dist_check(buf: &[u8]) -> Result<(), NlError> {
    if buf.is_empty() {
        return Err(NlError::new(errno::ENOENT, c"Missing NID argument(s)"));
    }
    validate(buf)?;
    let mut bad = None;
    targets(buf, |t| {
        if let Target::Bad(s) = t {
            bad = strid_nid(s).err();
        }
        bad.is_none()
    })?;
    match bad {
        Some(e) => Err(NlError::new(e, c"invalid NID")),
        None => Ok(()),
    }
}

/// The `k`th NID of a checked `PEER_DIST` request (from 0).
pub fn dist_nth(buf: &[u8], k: usize) -> Option<Nid> {
    match discover_nth(buf, k)? {
        Target::Nid(n) => Some(n),
        Target::Bad(s) => strid_nid(s).ok(),
    }
}

/// Lustre's largest health value (`LNET_MAX_HEALTH_VALUE`).
pub const MAX_HEALTH: i64 = 1000;

/// What one peer of a `peer add|del|set` request (`LNET_CMD_PEERS` sent
/// as a request, `lnet_peer_ni_cmd`) does, decided from the request's flags
/// (`NLM_F_CREATE`: add, `NLM_F_REPLACE`: set, neither: del; `NLM_F_EXCL`:
/// lock the primary on add, force on del) and its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerAction<'a> {
    /// `peer add`: the peer `prim` made (or kept) and configured, with the
    /// NIDs of [`PeerNids`] added.
    Add {
        /// The primary NID.
        prim: Nid,
        /// The NIDs to add besides the primary.
        nids: PeerNids<'a>,
        /// Multi-Rail unless `Multi-Rail: False` was given.
        multi_rail: bool,
        /// `--lock_prim`.
        lock: bool,
    },
    /// `peer del`: the NIDs of [`PeerNids`] taken from the peer `prim`, or
    /// the whole peer when none is named (or the primary, or `<?>`, is).
    Del {
        /// The primary NID.
        prim: Nid,
        /// The NIDs to delete; empty: the whole peer.
        nids: PeerNids<'a>,
        /// `--force`: a locked primary goes too.
        force: bool,
    },
    /// `peer set --health`: the health value of the peer NI `nid`, or of
    /// every peer NI (`--all`, `None`).
    Health {
        /// The peer NI; `None`: all of them.
        nid: Option<Nid>,
        /// 0..=[`MAX_HEALTH`].
        value: u32,
    },
}

/// The secondary NIDs of one peer of a checked request: the `nid` values
/// of its `peer ni` list, without `<?>` and the primary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerNids<'a> {
    list: Option<super::lnet_nl::Attr<'a>>,
    prim: Nid,
}

impl<'a> PeerNids<'a> {
    /// The NIDs in order.
    pub fn iter(&self) -> impl Iterator<Item = Nid> + 'a {
        let prim = self.prim;
        self.list
            .into_iter()
            .flat_map(|l| l.nested())
            .filter(|r| r.kind == scalar::LIST)
            .flat_map(|r| {
                let mut it = r.nested();
                core::iter::from_fn(move || loop {
                    let k = it.next()?;
                    if k.is_key("nid") {
                        return Some(it.next().and_then(|v| nid_str(&v).ok()));
                    }
                })
            })
            .filter_map(|s| s.and_then(|s| parse_nid(s).ok()))
            .filter(move |n| !n.is_any() && *n != prim)
    }

    /// Whether it names no NID.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

/// A NID as Lustre's `libcfs_strnid` reads it: `<?>` is `LNET_ANY_NID`.
fn parse_nid(s: &str) -> Result<Nid, ()> {
    if s == "<?>" {
        return Ok(Nid::ANY);
    }
    Nid::parse(s).map_err(|_| ())
}

/// The value after a key, which must be a string NID.
fn nid_after<'a>(
    it: &mut Attrs<'a>,
    kind: &'static core::ffi::CStr,
    copy: &'static core::ffi::CStr,
    parse: &'static core::ffi::CStr,
) -> Result<Nid, NlError> {
    let v = it
        .next()
        .filter(|v| v.kind == scalar::VALUE)
        .ok_or(NlError::new(errno::EINVAL, kind))?;
    let s = nid_str(&v).map_err(|e| NlError::new(e, copy))?;
    parse_nid(s).map_err(|()| NlError::new(errno::EINVAL, parse))
}

/// One peer's `peer ni` list checked (`lnet_parse_peer_nis`): whether it
/// names `<?>` or the primary, and its last health value (-1: none).
fn peer_nis(list: &super::lnet_nl::Attr<'_>, prim: Nid) -> Result<(bool, i64), NlError> {
    let mut whole = false;
    let mut health = -1;
    for r in list.nested().filter(|r| r.kind == scalar::LIST) {
        let mut it = r.nested();
        while let Some(k) = it.next() {
            if k.is_key("nid") {
                let n = nid_after(
                    &mut it,
                    c"invalid secondary NID",
                    c"failed to get secondary NID",
                    c"unsupported secondary NID",
                )?;
                whole |= n.is_any() || n == prim;
            } else if k.is_key("health stats") {
                let h = it
                    .next()
                    .filter(|h| h.kind == scalar::LIST)
                    .ok_or(NlError::new(errno::EINVAL, c"invalid health configuration"))?;
                let mut hit = h.nested();
                while let Some(hk) = hit.next() {
                    if !hk.is_key("health value") {
                        return Err(NlError::new(errno::EINVAL, c"wrong health config format"));
                    }
                    health = hit
                        .next()
                        .and_then(|v| v.int())
                        .ok_or(NlError::new(errno::EINVAL, c"invalid health config format"))?;
                }
            }
        }
    }
    Ok((whole, health))
}

/// Checks a `peer add|del|set` request whole and gives `f` what each peer
/// in it does, in order, stopping at `f`'s first error. Call it once with
/// an `f` that does nothing to check the request before anything changes.
///
/// Lustre's `lnet_peer_ni_cmd` acts as it parses; lnet-rs differs where
/// that is a slip rather than a rule, and says so here:
/// - `Multi-Rail: False` makes a non-Multi-Rail peer (Lustre resets the
///   flag for each key, so its netlink path never does);
/// - a peer's NIDs are added together, so a refused one leaves the peer as
///   it was (Lustre adds them one by one, then deletes the whole peer,
///   even one that existed before);
/// - a health value is clamped to 0..=1000 (Lustre drops its clamp's
///   result);
/// - a request naming no primary NID, or a `set` naming peer NIDs other
///   than `<?>`, is refused (EINVAL) where Lustre returns success having
///   done nothing, or deletes those NIDs;
/// - `peer state` (`lnetctl peer set --state`, a debugging knob that
///   overwrites the peer's state bits) is not settable: EOPNOTSUPP, on
///   which lnetctl tries its ioctl, which lnet-rs does not answer either.
pub fn peer_cmd<'a>(
    buf: &'a [u8],
    flags: u16,
    mut f: impl FnMut(PeerAction<'a>) -> Result<(), NlError>,
) -> Result<(), NlError> {
    use super::lnet_nl::{config_lists, nlm};
    let create = flags & nlm::CREATE != 0;
    let set = !create && flags & nlm::REPLACE != 0;
    let excl = flags & nlm::EXCL != 0;
    for entry in config_lists(buf)? {
        let mut prim = None;
        let mut multi_rail = true;
        let mut nis = None;
        let mut it = entry.nested();
        while let Some(k) = it.next() {
            if k.kind != scalar::VALUE {
                continue;
            }
            if k.is_key("primary nid") {
                prim = Some(nid_after(
                    &mut it,
                    c"invalid primary NID type",
                    c"failed to get primary NID",
                    c"unsupported primary NID",
                )?);
            } else if k.is_key("Multi-Rail") {
                let v = it
                    .next()
                    .and_then(|v| v.int())
                    .ok_or(NlError::new(errno::EINVAL, c"invalid MR flag param"))?;
                multi_rail = v != 0;
            } else if k.is_key("peer state") {
                it.next()
                    .and_then(|v| v.int())
                    .ok_or(NlError::new(errno::EINVAL, c"invalid peer state param"))?;
                return Err(NlError::new(
                    errno::EOPNOTSUPP,
                    c"peer state is not settable on lnet-rs",
                ));
            } else if k.is_key("peer ni") {
                let l = it
                    .next()
                    .filter(|l| l.kind == scalar::LIST)
                    .ok_or(NlError::new(errno::EINVAL, c"invalid NIDs list"))?;
                nis = Some(l);
            }
        }
        let prim = prim.unwrap_or(Nid::ANY);
        let (whole, health) = match &nis {
            Some(l) => peer_nis(l, prim)?,
            None => (false, -1),
        };
        let nids = PeerNids { list: nis, prim };
        if set {
            if !nids.is_empty() {
                return Err(NlError::new(errno::EINVAL, c"peer set takes no NIDs"));
            }
            if health == -1 {
                continue;
            }
            // `<?>` among the NIDs: every peer NI (`--all`).
            let all = whole;
            if !all && prim.is_any() {
                return Err(NlError::new(errno::EINVAL, c"missing primary NID"));
            }
            let value = health.clamp(0, MAX_HEALTH) as u32;
            f(PeerAction::Health {
                nid: (!all).then_some(prim),
                value,
            })?;
            continue;
        }
        if prim.is_any() {
            return Err(NlError::new(errno::EINVAL, c"missing primary NID"));
        }
        f(if create {
            PeerAction::Add {
                prim,
                nids,
                multi_rail,
                lock: excl,
            }
        } else {
            // Naming the primary or `<?>` deletes the whole peer.
            let nids = if whole {
                PeerNids { list: None, prim }
            } else {
                nids
            };
            PeerAction::Del {
                prim,
                nids,
                force: excl,
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::lnet_nl::{nlm, NlWriter};
    use super::*;
    use std::vec::Vec;

    fn attr(kind: u16, data: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((4 + data.len()) as u16).to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(data);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    fn s(v: &str) -> Vec<u8> {
        let mut b = v.as_bytes().to_vec();
        b.push(0);
        attr(scalar::VALUE, &b)
    }

    fn int(n: i64) -> Vec<u8> {
        attr(scalar::INT_VALUE, &n.to_ne_bytes())
    }

    fn list(parts: &[Vec<u8>]) -> Vec<u8> {
        attr(scalar::LIST, &parts.concat())
    }

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    /// `peer:\n- primary nid: 10.0.0.2@tcp` as lnetctl's emitter sends it.
    #[test]
    fn peer_filter_takes_primary_nids() {
        let req = list(&[list(&[s("primary nid"), s("10.0.0.2@tcp")])]);
        let f = PeerFilter::new(&req).unwrap().unwrap();
        assert_eq!(f.nth(0), Some(nid("10.0.0.2@tcp")));
        assert_eq!(f.nth(1), None);
        // `peer show` without --nid sends nothing: every peer.
        assert!(PeerFilter::new(&[]).unwrap().is_none());
        // Two lists, two NIDs, other keys ignored.
        let req = list(&[
            list(&[s("primary nid"), s(" 10.0.0.2@tcp ")]),
            s("Multi-Rail"),
            list(&[s("x"), s("y"), s("primary nid"), s("10.0.0.3@tcp1")]),
        ]);
        let f = PeerFilter::new(&req).unwrap().unwrap();
        assert_eq!(f.nth(0), Some(nid("10.0.0.2@tcp")));
        assert_eq!(f.nth(1), Some(nid("10.0.0.3@tcp1")));
    }

    #[test]
    fn peer_filter_refuses_bad_requests() {
        let e = |req: &[u8]| PeerFilter::new(req).unwrap_err();
        let req = list(&[list(&[s("primary nid"), s("nonsense")])]);
        assert_eq!(e(&req), NlError::new(errno::EINVAL, c"invalid NID"));
        let req = list(&[list(&[s("primary nid"), int(3)])]);
        assert_eq!(e(&req).errno, errno::EINVAL);
        let req = list(&[list(&[s("primary nid")])]);
        assert_eq!(e(&req).errno, errno::EINVAL);
        let long = "1".repeat(70);
        let req = list(&[list(&[s("primary nid"), s(&long)])]);
        assert_eq!(e(&req).errno, errno::E2BIG);
        // Lustre tests only the LIST bit of the first attribute: a value
        // passes and names no peer (the dump then finds none).
        let v = s("peer");
        assert_eq!(PeerFilter::new(&v).unwrap().unwrap().nth(0), None);
        assert_eq!(e(&int(1)).errno, errno::EINVAL);
        // A header running past the buffer.
        let mut req = list(&[list(&[s("primary nid"), s("10.0.0.2@tcp")])]);
        req[4] = 0xff;
        assert_eq!(e(&req).errno, errno::EINVAL);
    }

    /// `ping:\n  timeout: 2000\n  nids: [10.0.0.2@tcp, 10.0.0.3@tcp]`.
    #[test]
    fn ping_request_reads_keys_and_targets() {
        let req = [
            s("source"),
            s("10.0.0.1@tcp"),
            s("timeout"),
            int(2000),
            s("nids"),
            list(&[s("10.0.0.2@tcp"), s("10.0.0.3@tcp")]),
        ]
        .concat();
        let p = PingRequest::new(&req).unwrap();
        assert_eq!(p.timeout_ms, 2000);
        assert_eq!(p.source, Some(nid("10.0.0.1@tcp")));
        assert_eq!(p.nth(0), Some(nid("10.0.0.2@tcp")));
        assert_eq!(p.nth(1), Some(nid("10.0.0.3@tcp")));
        assert_eq!(p.nth(2), None);
        // Out of range: Lustre's default.
        let req = [s("timeout"), int(-5), s("nids"), list(&[s("0@lo")])].concat();
        assert_eq!(PingRequest::new(&req).unwrap().timeout_ms, PING_DEFAULT_MS);
        let req = [s("timeout"), int(1 << 40), s("nids"), list(&[s("0@lo")])].concat();
        assert_eq!(PingRequest::new(&req).unwrap().timeout_ms, PING_DEFAULT_MS);
    }

    #[test]
    fn ping_request_refuses_bad_requests() {
        let e = |req: &[u8]| PingRequest::new(req).unwrap_err();
        assert_eq!(e(&[]).errno, errno::ENOENT);
        let req = [s("nids"), list(&[s("10.0.0.2@tcp"), s("bogus")])].concat();
        assert_eq!(e(&req), NlError::new(errno::EINVAL, c"cannot parse NID"));
        let req = [s("timeout"), s("soon"), s("nids"), list(&[s("0@lo")])].concat();
        assert_eq!(e(&req).errno, errno::EINVAL);
        let req = [s("source"), s("x@y@z"), s("nids"), list(&[s("0@lo")])].concat();
        assert_eq!(e(&req), NlError::new(errno::EINVAL, c"invalid source nid"));
        let req = [s("source"), int(1)].concat();
        assert_eq!(e(&req).errno, errno::EINVAL);
        let mut req = [s("nids"), list(&[s("10.0.0.2@tcp")])].concat();
        let n = req.len();
        req.truncate(n - 2);
        assert_eq!(e(&req).errno, errno::EINVAL);
    }

    #[test]
    fn discover_reports_bad_targets_in_reply() {
        let req = [s("nids"), list(&[s("10.0.0.2@tcp"), s("bogus")])].concat();
        discover_check(&req, nlm::CREATE).unwrap();
        assert_eq!(
            discover_nth(&req, 0),
            Some(Target::Nid(nid("10.0.0.2@tcp")))
        );
        assert_eq!(discover_nth(&req, 1), Some(Target::Bad("bogus")));
        assert_eq!(discover_nth(&req, 2), None);
        assert_eq!(discover_check(&req, 0).unwrap_err().errno, errno::EINVAL);
        assert_eq!(
            discover_check(&[], nlm::CREATE).unwrap_err().errno,
            errno::ENOMSG
        );
        let long = "1".repeat(64);
        let req = [s("nids"), list(&[s(&long)])].concat();
        assert_eq!(
            discover_check(&req, nlm::CREATE).unwrap_err().errno,
            errno::E2BIG
        );
    }

    /// The key message of `peer show` as Lustre's walk writes it: the
    /// `peer ni` key holds the peer NI table, whose nested keys take the
    /// UDSP, statistics, three message-count and health tables in turn.
    #[test]
    fn peer_key_tables_nest_in_order() {
        let mut buf = std::vec![0u8; 16384];
        let mut w = NlWriter::new(&mut buf);
        w.put_key_tables(&show::tables()).unwrap();
        let out = w.written().to_vec();
        let top: Vec<_> = Attrs::new(&out).collect();
        assert_eq!(top.len(), 1);
        let keys: Vec<_> = top[0].nested().collect();
        assert_eq!(keys.len(), show::PEER.len());
        let peer_ni: Vec<_> = keys[4].nested().collect();
        assert!(peer_ni.iter().any(|a| a.is_key("peer ni")));
        let t = peer_ni.iter().find(|a| a.kind == scalar::LIST).unwrap();
        let ni_keys: Vec<_> = t.nested().collect();
        assert_eq!(ni_keys.len(), show::PEER_NI.len());
        let table_of = |i: usize| -> usize {
            let k: Vec<_> = ni_keys[i].nested().collect();
            k.iter()
                .find(|a| a.kind == scalar::LIST)
                .map_or(0, |l| l.nested().count())
        };
        assert_eq!(table_of(usize::from(show::ni::UDSP_INFO) - 1), 4);
        assert_eq!(table_of(usize::from(show::ni::STATS_COUNT) - 1), 15);
        assert_eq!(table_of(usize::from(show::ni::SENT_STATS) - 1), 5);
        assert_eq!(table_of(usize::from(show::ni::DROP_STATS) - 1), 5);
        assert_eq!(table_of(usize::from(show::ni::HEALTH_STATS) - 1), 7);
        // The health table's last key is an s64.
        let h: Vec<_> = ni_keys[14].nested().collect();
        let ht = h.iter().find(|a| a.kind == scalar::LIST).unwrap();
        let last: Vec<_> = ht.nested().last().unwrap().nested().collect();
        assert!(last.iter().any(|a| a.is_key("next_ping")));
        assert!(last
            .iter()
            .any(|a| a.kind == scalar::NLA_TYPE && a.data == nla::S64.to_ne_bytes()));
    }

    fn actions(req: &[u8], flags: u16) -> Result<Vec<(PeerAction<'_>, Vec<Nid>)>, NlError> {
        let mut out = Vec::new();
        peer_cmd(req, flags, |a| {
            let nids = match &a {
                PeerAction::Add { nids, .. } | PeerAction::Del { nids, .. } => {
                    nids.iter().collect()
                }
                PeerAction::Health { .. } => Vec::new(),
            };
            out.push((a, nids));
            Ok(())
        })?;
        Ok(out)
    }

    fn nid_map(n: &str) -> Vec<u8> {
        list(&[s("nid"), s(n)])
    }

    /// `peer add --prim_nid P --nid A,B [--lock_prim] [--non_mr]` as
    /// Lustre's lnetctl sends it.
    #[test]
    fn peer_add_and_del() {
        let req = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("peer ni"),
            list(&[
                nid_map("10.0.0.3@tcp"),
                nid_map("10.0.0.2@tcp"),
                nid_map("10.0.1.3@tcp1"),
            ]),
        ])]);
        let got = actions(&req, nlm::CREATE | nlm::EXCL).unwrap();
        assert_eq!(got.len(), 1);
        let PeerAction::Add {
            prim,
            multi_rail,
            lock,
            ..
        } = got[0].0
        else {
            panic!("{:?}", got[0].0)
        };
        assert_eq!((prim, multi_rail, lock), (nid("10.0.0.2@tcp"), true, true));
        // The primary named again is not a secondary NID.
        assert_eq!(got[0].1, [nid("10.0.0.3@tcp"), nid("10.0.1.3@tcp1")]);

        // Non-Multi-Rail, primary only.
        let req = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("Multi-Rail"),
            int(0),
        ])]);
        let got = actions(&req, nlm::CREATE).unwrap();
        assert!(matches!(
            got[0].0,
            PeerAction::Add {
                multi_rail: false,
                lock: false,
                ..
            }
        ));
        assert!(got[0].1.is_empty());

        // del: some NIDs; the whole peer when none, or the primary, is named.
        let some = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("peer ni"),
            list(&[nid_map("10.0.0.3@tcp")]),
        ])]);
        let got = actions(&some, 0).unwrap();
        assert!(matches!(got[0].0, PeerAction::Del { force: false, .. }));
        assert_eq!(got[0].1, [nid("10.0.0.3@tcp")]);
        let whole = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("peer ni"),
            list(&[nid_map("10.0.0.3@tcp"), nid_map("10.0.0.2@tcp")]),
        ])]);
        let got = actions(&whole, nlm::EXCL).unwrap();
        assert!(matches!(got[0].0, PeerAction::Del { force: true, .. }));
        assert!(got[0].1.is_empty());
        let bare = list(&[list(&[s("primary nid"), s("10.0.0.2@tcp")])]);
        assert!(actions(&bare, 0).unwrap()[0].1.is_empty());
    }

    /// `peer set --health V --nid N` and `--all`.
    #[test]
    fn peer_set_health() {
        let health = |v: i64| list(&[s("health stats"), list(&[s("health value"), int(v)])]);
        let one = list(&[list(&[
            s("primary nid"),
            s("10.0.0.3@tcp"),
            s("peer ni"),
            list(&[health(300)]),
        ])]);
        let got = actions(&one, nlm::REPLACE).unwrap();
        assert_eq!(
            got[0].0,
            PeerAction::Health {
                nid: Some(nid("10.0.0.3@tcp")),
                value: 300
            }
        );
        let all = list(&[list(&[
            s("primary nid"),
            s("<?>"),
            s("peer ni"),
            list(&[nid_map("<?>"), health(5000)]),
        ])]);
        let got = actions(&all, nlm::REPLACE).unwrap();
        assert_eq!(
            got[0].0,
            PeerAction::Health {
                nid: None,
                value: 1000
            }
        );
        // A NID other than `<?>` in a set, or no NID at all, is refused.
        let named = list(&[list(&[
            s("primary nid"),
            s("10.0.0.3@tcp"),
            s("peer ni"),
            list(&[nid_map("10.0.0.4@tcp"), health(0)]),
        ])]);
        assert_eq!(
            actions(&named, nlm::REPLACE).unwrap_err().errno,
            errno::EINVAL
        );
        let anon = list(&[list(&[s("peer ni"), list(&[health(0)])])]);
        assert_eq!(
            actions(&anon, nlm::REPLACE).unwrap_err(),
            NlError::new(errno::EINVAL, c"missing primary NID")
        );
    }

    #[test]
    fn peer_cmd_refuses_bad_requests() {
        let e = |req: &[u8], flags| actions(req, flags).unwrap_err();
        assert_eq!(
            e(&[], nlm::CREATE),
            NlError::new(errno::ENOMSG, c"no configuration")
        );
        let bad = list(&[list(&[s("primary nid"), s("nonsense")])]);
        assert_eq!(
            e(&bad, nlm::CREATE),
            NlError::new(errno::EINVAL, c"unsupported primary NID")
        );
        let bad = list(&[list(&[s("primary nid"), int(3)])]);
        assert_eq!(
            e(&bad, nlm::CREATE),
            NlError::new(errno::EINVAL, c"invalid primary NID type")
        );
        let long = "1".repeat(NIDSTR_SIZE);
        let bad = list(&[list(&[s("primary nid"), s(&long)])]);
        assert_eq!(e(&bad, nlm::CREATE).errno, errno::E2BIG);
        let bad = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("peer ni"),
            list(&[nid_map("10.0.0.3@tcp"), nid_map("x@y@z")]),
        ])]);
        assert_eq!(
            e(&bad, nlm::CREATE),
            NlError::new(errno::EINVAL, c"unsupported secondary NID")
        );
        let bad = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("peer ni"),
            s("x"),
        ])]);
        assert_eq!(
            e(&bad, nlm::CREATE),
            NlError::new(errno::EINVAL, c"invalid NIDs list")
        );
        let bad = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("Multi-Rail"),
            s("no"),
        ])]);
        assert_eq!(
            e(&bad, nlm::CREATE),
            NlError::new(errno::EINVAL, c"invalid MR flag param")
        );
        let bad = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("peer state"),
            int(1),
        ])]);
        assert_eq!(e(&bad, nlm::REPLACE).errno, errno::EOPNOTSUPP);
        let bad = list(&[list(&[
            s("primary nid"),
            s("10.0.0.2@tcp"),
            s("peer ni"),
            list(&[list(&[s("health stats"), list(&[s("x"), int(1)])])]),
        ])]);
        assert_eq!(
            e(&bad, nlm::REPLACE),
            NlError::new(errno::EINVAL, c"wrong health config format")
        );
        // No primary NID: refused, not silently accepted.
        let anon = list(&[list(&[s("peer ni"), list(&[nid_map("10.0.0.3@tcp")])])]);
        assert_eq!(
            e(&anon, nlm::CREATE),
            NlError::new(errno::EINVAL, c"missing primary NID")
        );
        // A bad second peer is found before the first is acted on, when
        // the caller checks first.
        let two = list(&[
            list(&[s("primary nid"), s("10.0.0.2@tcp")]),
            list(&[s("primary nid"), s("bad")]),
        ]);
        let mut n = 0;
        assert!(peer_cmd(&two, nlm::CREATE, |_| {
            n += 1;
            Ok(())
        })
        .is_err());
        assert_eq!(n, 1);
        // `f`'s error stops the walk.
        let mut n = 0;
        let stop = NlError::bare(errno::ENOENT);
        assert_eq!(
            peer_cmd(&two, nlm::CREATE, |_| {
                n += 1;
                Err(stop)
            }),
            Err(stop)
        );
        assert_eq!(n, 1);
    }

    #[test]
    fn peer_dist_requests() {
        let req = [
            s("peer"),
            list(&[s("10.1.0.2@tcp"), s("12345-10.2.0.2@tcp1"), s("0@lo")]),
        ]
        .concat();
        dist_check(&req).unwrap();
        assert_eq!(dist_nth(&req, 0), Some(Nid::parse("10.1.0.2@tcp").unwrap()));
        assert_eq!(
            dist_nth(&req, 1),
            Some(Nid::parse("10.2.0.2@tcp1").unwrap())
        );
        assert_eq!(dist_nth(&req, 2), Some(Nid::LO));
        assert_eq!(dist_nth(&req, 3), None);
        assert_eq!(dist_check(&[]).unwrap_err().errno, errno::ENOENT);
        for bad in [
            "nonsense",
            "x-10.1.0.2@tcp",
            "LNET_PID_ANY-10.1.0.2@tcp",
            "99999999999-0@lo",
        ] {
            let req = [s("peer"), list(&[s("10.1.0.2@tcp"), s(bad)])].concat();
            let e = dist_check(&req).unwrap_err();
            assert!(
                e.errno == errno::EINVAL || e.errno == errno::ERANGE,
                "{bad}"
            );
        }
    }
}
