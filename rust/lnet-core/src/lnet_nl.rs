//! The codec of Lustre's `lnet` generic netlink family
//! (include/uapi/linux/lnet/lnet-nl.h, lnet-dlc.h): requests arrive as
//! lnetctl's YAML turned into nested `LN_SCALAR_ATTR_*` attributes (a key
//! as a `VALUE` string, its value as the next attribute: a string, an
//! `INT_VALUE` or a nested `LIST`); replies are a key table message
//! (`LN_SCALAR_ATTR_LIST` tables of names, formats and types) followed by
//! messages whose attribute ids index those tables.
//!
//! Requests are checked whole ([`validate`]) before any of them is acted
//! on, so a malformed one changes nothing; replies are written into a
//! caller's buffer ([`NlWriter`]), which refuses what does not fit.

use core::ffi::CStr;

/// `enum lnet_commands` (lnet-dlc.h), the commands lnet-rs answers.
pub mod cmd {
    /// `lnetctl lnet configure|unconfigure`.
    pub const CONFIGURE: u8 = 1;
    /// `lnetctl net add|del|show`.
    pub const NETS: u8 = 2;
    /// `lnetctl peer show` (a dump; add, del and set are not answered).
    pub const PEERS: u8 = 3;
    /// `lnetctl route show` (a dump, answered only while there is no
    /// route: see lnet/genl.rs).
    pub const ROUTES: u8 = 4;
    /// `lnetctl ping` (a dump) and `lnetctl discover` (a request).
    pub const PING: u8 = 6;
    /// `lctl which_nid` (a dump).
    pub const PEER_DIST: u8 = 8;
}

/// The family's name and version (`LNET_GENL_NAME`, `LNET_GENL_VERSION`).
pub const FAMILY_NAME: &CStr = c"lnet";
/// See [`FAMILY_NAME`].
pub const FAMILY_VERSION: u8 = 5;

/// `enum lnet_nl_scalar_attrs`.
pub mod scalar {
    /// A nested table or list.
    pub const LIST: u16 = 1;
    /// A table's number of keys (on its first key).
    pub const LIST_SIZE: u16 = 2;
    /// A key's number.
    pub const INDEX: u16 = 3;
    /// A key's value type (`NLA_*`).
    pub const NLA_TYPE: u16 = 4;
    /// A string: a key's name, or a string value.
    pub const VALUE: u16 = 5;
    /// An integer value (s64).
    pub const INT_VALUE: u16 = 6;
    /// A key's YAML format (`LNKF_*`).
    pub const KEY_FORMAT: u16 = 7;
}

/// `enum lnet_nl_key_format`.
pub mod lnkf {
    /// A flow (inline) collection.
    pub const FLOW: u16 = 1;
    /// A mapping.
    pub const MAPPING: u16 = 2;
    /// A sequence.
    pub const SEQUENCE: u16 = 4;
}

/// The kernel's netlink attribute types (`NLA_*`, net/netlink.h) that the
/// key tables name.
pub mod nla {
    /// `NLA_U16`.
    pub const U16: u16 = 2;
    /// `NLA_U32`.
    pub const U32: u16 = 3;
    /// `NLA_U64`.
    pub const U64: u16 = 4;
    /// `NLA_STRING`.
    pub const STRING: u16 = 5;
    /// `NLA_FLAG`.
    pub const FLAG: u16 = 6;
    /// `NLA_NESTED`.
    pub const NESTED: u16 = 8;
    /// `NLA_NUL_STRING`.
    pub const NUL_STRING: u16 = 10;
    /// `NLA_S16`.
    pub const S16: u16 = 13;
    /// `NLA_S32`.
    pub const S32: u16 = 14;
    /// `NLA_S64`.
    pub const S64: u16 = 15;
}

/// `NLA_F_NESTED`, which the kernel's `nla_nest_start` sets.
pub const NLA_F_NESTED: u16 = 1 << 15;
/// The type bits of an attribute header (`NLA_TYPE_MASK`).
pub const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | (1 << 14));
/// An attribute header's size (`NLA_HDRLEN`).
pub const NLA_HDRLEN: usize = 4;

/// Netlink message flags the commands read (`NLM_F_*`).
pub mod nlm {
    /// Drop old configuration (an update).
    pub const REPLACE: u16 = 0x100;
    /// Ignore module parameters (configure) / exclusive.
    pub const EXCL: u16 = 0x200;
    /// Create (configure, add).
    pub const CREATE: u16 = 0x400;
    /// Large NIDs (configure).
    pub const APPEND: u16 = 0x800;
    /// Part of a multi-part reply.
    pub const MULTI: u16 = 0x2;
}

/// How deep a request's lists may nest; lnetctl's go four deep.
const MAX_DEPTH: usize = 16;

/// Attribute lengths are padded to four bytes (`NLA_ALIGN`).
const fn align(n: usize) -> usize {
    (n + 3) & !3
}

/// A failed command: the errno (positive) and the message for the
/// netlink extended ack, as Lustre's `GENL_SET_ERR_MSG` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NlError {
    /// Positive errno.
    pub errno: i32,
    /// The message lnetctl prints, if any.
    pub msg: Option<&'static CStr>,
}

impl NlError {
    /// An error with a message.
    pub const fn new(errno: i32, msg: &'static CStr) -> Self {
        NlError {
            errno,
            msg: Some(msg),
        }
    }

    /// An error without one.
    pub const fn bare(errno: i32) -> Self {
        NlError { errno, msg: None }
    }
}

/// The errnos this module gives.
pub mod errno {
    /// `ENOENT`.
    pub const ENOENT: i32 = 2;
    /// `ESRCH`.
    pub const ESRCH: i32 = 3;
    /// `ENOMEM`.
    pub const ENOMEM: i32 = 12;
    /// `ENODEV`.
    pub const ENODEV: i32 = 19;
    /// `EINVAL`.
    pub const EINVAL: i32 = 22;
    /// `ERANGE`.
    pub const ERANGE: i32 = 34;
    /// `ENOMSG`.
    pub const ENOMSG: i32 = 42;
    /// `EMSGSIZE`.
    pub const EMSGSIZE: i32 = 90;
    /// `E2BIG`.
    pub const E2BIG: i32 = 7;
    /// `EOPNOTSUPP`.
    pub const EOPNOTSUPP: i32 = 95;
    /// `ENETDOWN`.
    pub const ENETDOWN: i32 = 100;
}

/// One attribute of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr<'a> {
    /// Its type, flags masked off (`nla_type`).
    pub kind: u16,
    /// Its payload.
    pub data: &'a [u8],
}

impl<'a> Attr<'a> {
    /// The payload as a string, without the NUL lnetctl puts after it.
    pub fn str(&self) -> Option<&'a str> {
        let d = match self.data.split_last() {
            Some((0, rest)) => rest,
            _ => self.data,
        };
        core::str::from_utf8(d).ok()
    }

    /// Whether this is the key `key` (`nla_strcmp(attr, key) == 0` on a
    /// `VALUE`).
    pub fn is_key(&self, key: &str) -> bool {
        self.kind == scalar::VALUE && self.str() == Some(key)
    }

    /// An `INT_VALUE`'s number.
    pub fn int(&self) -> Option<i64> {
        if self.kind != scalar::INT_VALUE {
            return None;
        }
        let b: [u8; 8] = self.data.get(..8)?.try_into().ok()?;
        Some(i64::from_ne_bytes(b))
    }

    /// The attributes nested in this one.
    pub fn nested(&self) -> Attrs<'a> {
        Attrs { rest: self.data }
    }
}

/// The attributes of a buffer in order (`nla_for_each_attr`); stops at
/// the first that does not fit, which [`validate`] refuses beforehand.
#[derive(Clone, Debug)]
pub struct Attrs<'a> {
    rest: &'a [u8],
}

impl<'a> Attrs<'a> {
    /// The attributes of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Attrs { rest: buf }
    }
}

/// The header of the attribute at the start of `b`: (type, whole length).
fn header(b: &[u8]) -> Option<(u16, usize)> {
    let len = u16::from_ne_bytes([*b.first()?, *b.get(1)?]) as usize;
    let kind = u16::from_ne_bytes([*b.get(2)?, *b.get(3)?]);
    if len < NLA_HDRLEN || len > b.len() {
        return None;
    }
    Some((kind & NLA_TYPE_MASK, len))
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Attr<'a>;

    fn next(&mut self) -> Option<Attr<'a>> {
        let (kind, len) = header(self.rest)?;
        let data = self.rest.get(NLA_HDRLEN..len)?;
        self.rest = self.rest.get(align(len)..).unwrap_or(&[]);
        Some(Attr { kind, data })
    }
}

/// Checks a request's attributes: each header whole, each length within
/// its container, nothing left over but padding, lists nested at most
/// [`MAX_DEPTH`] deep. A request that fails is refused whole (`EINVAL`).
pub fn validate(buf: &[u8]) -> Result<(), NlError> {
    validate_at(buf, 0)
}

fn validate_at(mut buf: &[u8], depth: usize) -> Result<(), NlError> {
    const BAD: NlError = NlError::new(errno::EINVAL, c"malformed request");
    if depth > MAX_DEPTH {
        return Err(BAD);
    }
    while !buf.is_empty() {
        let (kind, len) = header(buf).ok_or(BAD)?;
        let data = buf.get(NLA_HDRLEN..len).ok_or(BAD)?;
        if kind == scalar::LIST {
            validate_at(data, depth + 1)?;
        }
        buf = buf.get(align(len)..).unwrap_or(&[]);
    }
    Ok(())
}

/// The first attribute of a request, which holds the rest; it must be a
/// list (Lustre tests the `LIST` bit of its type).
pub(crate) fn top(buf: &[u8]) -> Result<Attr<'_>, NlError> {
    Attrs::new(buf)
        .next()
        .filter(|a| a.kind & scalar::LIST != 0)
        .ok_or(NlError::new(errno::EINVAL, c"invalid configuration"))
}

/// The lists in a configuration request's top list (`LNET_CMD_NETS`,
/// `LNET_CMD_PEERS`), each a block of keys and values; other attributes
/// there are passed over, as Lustre's handlers do. An empty request is
/// ENOMSG; the whole request is validated before any list is given.
pub(crate) fn config_lists(buf: &[u8]) -> Result<impl Iterator<Item = Attr<'_>>, NlError> {
    if buf.is_empty() {
        return Err(NlError::new(errno::ENOMSG, c"no configuration"));
    }
    validate(buf)?;
    Ok(top(buf)?.nested().filter(|a| a.kind == scalar::LIST))
}

/// The net `net show --net` asks for, if any (`lnet_net_show_start`):
/// the value after a `"net type"` key in any top-level list.
pub fn show_filter(buf: &[u8]) -> Result<Option<&str>, NlError> {
    if buf.is_empty() {
        return Ok(None);
    }
    validate(buf)?;
    let mut filter = None;
    for top in top(buf)?.nested() {
        let mut it = top.nested();
        while let Some(a) = it.next() {
            if !a.is_key("net type") {
                continue;
            }
            let v = it
                .next()
                .filter(|v| v.kind == scalar::VALUE)
                .and_then(|v| v.str())
                .ok_or(NlError::new(errno::EINVAL, c"invalid config param"))?;
            filter = Some(v);
        }
    }
    Ok(filter)
}

/// The common tunables of a local NI entry; -1: not given
/// (`lnet_genl_parse_tunables` keeps -1 for a value out of range too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmnTunables {
    /// `peer_timeout` (taken when >= 0).
    pub peer_timeout: i64,
    /// `peer_credits` (taken when > 0).
    pub peer_credits: i64,
    /// `peer_buffer_credits` (taken when > 0).
    pub peer_buffer_credits: i64,
    /// `credits` (taken when > 0).
    pub credits: i64,
}

impl CmnTunables {
    /// None given.
    pub const UNSET: CmnTunables = CmnTunables {
        peer_timeout: -1,
        peer_credits: -1,
        peer_buffer_credits: -1,
        credits: -1,
    };
}

/// One local NI entry of `net add|del` (an element of `local NI(s)`).
#[derive(Clone, Debug)]
pub struct LocalNi<'a> {
    /// The block's `net type`, if it came before the entry.
    pub net: Option<&'a str>,
    /// The last of its `interfaces`; empty if none.
    pub intf: &'a str,
    /// Its `nid`, if given.
    pub nid: Option<&'a str>,
    /// Its `tunables`.
    pub tunables: CmnTunables,
    /// Its `lnd tunables` list, as given (key, value pairs).
    pub lnd_tunables: Option<Attrs<'a>>,
    /// Its `CPT` list, as given.
    pub cpts: Option<Attrs<'a>>,
    /// The `health value` of its `health stats`, in an update
    /// (`NLM_F_REPLACE`) only: `net set --health`.
    pub health: Option<i64>,
}

/// What one block of a `net add|del` request asks, in request order.
#[derive(Clone, Debug)]
pub enum NetOp<'a> {
    /// A local NI entry.
    Ni(LocalNi<'a>),
    /// The end of a block (one `net type` with its NIs): its net and
    /// whether it had any NI entry or ip2net, which decide whether a
    /// delete takes the whole net.
    EndOfBlock {
        /// The block's net, if any.
        net: Option<&'a str>,
        /// Its `ip2net`, if any.
        ip2net: Option<&'a str>,
        /// Whether it listed a local NI (an interface or a NID).
        ni_list: bool,
    },
}

/// The string value after a key, or `err`.
fn value_str<'a>(it: &mut Attrs<'a>, err: NlError) -> Result<&'a str, NlError> {
    it.next()
        .filter(|v| v.kind == scalar::VALUE)
        .and_then(|v| v.str())
        .ok_or(err)
}

/// The nested list after a key, or `err`.
fn value_list<'a>(it: &mut Attrs<'a>, err: NlError) -> Result<Attrs<'a>, NlError> {
    it.next()
        .filter(|v| v.kind == scalar::LIST)
        .map(|v| v.nested())
        .ok_or(err)
}

fn parse_tunables(list: Attrs<'_>, t: &mut CmnTunables) -> Result<(), NlError> {
    const BAD: NlError = NlError::new(errno::EINVAL, c"failed to parse tunables");
    let mut it = list;
    while let Some(k) = it.next() {
        if k.kind != scalar::VALUE {
            continue;
        }
        let n = it.next().and_then(|v| v.int()).ok_or(BAD)?;
        match k.str() {
            Some("peer_timeout") if n >= 0 => t.peer_timeout = n,
            Some("peer_credits") if n > 0 => t.peer_credits = n,
            Some("peer_buffer_credits") if n > 0 => t.peer_buffer_credits = n,
            Some("credits") if n > 0 => t.credits = n,
            Some("peer_timeout" | "peer_credits" | "peer_buffer_credits" | "credits") => {}
            _ => return Err(BAD),
        }
    }
    Ok(())
}

/// Reads one local NI entry (`lnet_genl_parse_local_ni`'s parsing part).
fn parse_local_ni<'a>(
    entry: Attr<'a>,
    net: Option<&'a str>,
    ni_list: &mut bool,
    replace: bool,
) -> Result<LocalNi<'a>, NlError> {
    let mut ni = LocalNi {
        net,
        intf: "",
        nid: None,
        tunables: CmnTunables::UNSET,
        lnd_tunables: None,
        cpts: None,
        health: None,
    };
    let mut it = entry.nested();
    while let Some(k) = it.next() {
        if k.kind != scalar::VALUE {
            continue;
        }
        match k.str() {
            Some("interfaces") => {
                let mut l =
                    value_list(&mut it, NlError::new(errno::EINVAL, c"invalid interfaces"))?;
                // Each interface is an index key ("0") and its name.
                while l.next().is_some() {
                    ni.intf = value_str(
                        &mut l,
                        NlError::new(errno::EINVAL, c"cannot parse interface"),
                    )?;
                }
                *ni_list = true;
            }
            Some("nid") if net.is_some() => {
                let s = value_str(&mut it, NlError::new(errno::EINVAL, c"cannot parse NID"))?;
                ni.nid = Some(s.trim());
                *ni_list = true;
            }
            Some("health stats") if replace => {
                let mut l = value_list(
                    &mut it,
                    NlError::new(errno::EINVAL, c"cannot parse health stats"),
                )?;
                while let Some(k) = l.next() {
                    if k.kind != scalar::VALUE || !k.is_key("health value") {
                        return Err(NlError::new(errno::EINVAL, c"wrong health config format"));
                    }
                    let v = l
                        .next()
                        .and_then(|v| v.int())
                        .ok_or(NlError::new(errno::EINVAL, c"invalid health config format"))?;
                    ni.health = Some(v);
                }
            }
            Some("tunables") => {
                let l = value_list(&mut it, NlError::new(errno::EINVAL, c"invalid tunables"))?;
                parse_tunables(l, &mut ni.tunables)?;
            }
            Some("lnd tunables") => {
                let l = value_list(
                    &mut it,
                    NlError::new(errno::EINVAL, c"lnd tunables should be list"),
                )?;
                ni.lnd_tunables = Some(l);
            }
            Some("CPT") => {
                let l = value_list(&mut it, NlError::new(errno::EINVAL, c"CPT should be list"))?;
                if l.clone().any(|c| c.int().is_none()) {
                    return Err(NlError::new(errno::EINVAL, c"invalid CPT config"));
                }
                ni.cpts = Some(l);
            }
            // Other keys (those of updates, or of later versions) take no
            // part in add and del.
            _ => {}
        }
    }
    Ok(ni)
}

/// Walks a `LNET_CMD_NETS` request (`lnet_net_cmd`), giving `op` each
/// local NI entry and each block's end in order; the first error stops
/// the walk. The whole request is validated first. `replace`: an update
/// (`NLM_F_REPLACE`, `net set`), whose entries may carry `health stats`.
pub fn net_cmd<'a>(
    buf: &'a [u8],
    replace: bool,
    mut op: impl FnMut(NetOp<'a>) -> Result<(), NlError>,
) -> Result<(), NlError> {
    for block in config_lists(buf)? {
        let mut net = None;
        let mut ip2net = None;
        let mut ni_list = false;
        let mut it = block.nested();
        while let Some(e) = it.next() {
            match e.kind {
                scalar::VALUE => {
                    if e.is_key("ip2net") {
                        let s = value_str(
                            &mut it,
                            NlError::new(errno::EINVAL, c"ip2net has invalid key"),
                        )?;
                        ip2net = Some(s);
                        ni_list = true;
                    } else if e.is_key("net type") {
                        let s = value_str(
                            &mut it,
                            NlError::new(errno::EINVAL, c"net type has invalid key"),
                        )?;
                        net = Some(s);
                        ip2net = None;
                        ni_list = false;
                    }
                }
                scalar::LIST => {
                    ip2net = None;
                    for entry in e.nested() {
                        op(NetOp::Ni(parse_local_ni(
                            entry,
                            net,
                            &mut ni_list,
                            replace,
                        )?))?;
                    }
                }
                // Keys of later lnetctl versions are ignored.
                _ => {}
            }
        }
        op(NetOp::EndOfBlock {
            net,
            ip2net,
            ni_list,
        })?;
    }
    Ok(())
}

/// One key of a reply's key table (`struct ln_key_props`).
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// Its name; `None` for a key without one.
    pub name: Option<&'static CStr>,
    /// Its YAML format (`LNKF_*`), 0 for none.
    pub format: u16,
    /// Its value type (`NLA_*`).
    pub nla_type: u16,
}

pub(crate) const fn key(name: &'static CStr, nla_type: u16) -> Key {
    Key {
        name: Some(name),
        format: 0,
        nla_type,
    }
}

pub(crate) const fn keyf(name: &'static CStr, format: u16, nla_type: u16) -> Key {
    Key {
        name: Some(name),
        format,
        nla_type,
    }
}

/// A key table: key `i` (from 1) is `table[i - 1]`.
pub type KeyTable = &'static [Key];

/// Reply attribute ids and key tables of `net show`
/// (`enum lnet_net_attrs` and `lnet_net_local_ni_*` in Lustre's lib-types.h).
pub mod net_show {
    use super::{key, keyf, lnkf, nla, KeyTable};

    /// `LNET_NET_ATTR_HDR`: a net's header (first message only).
    pub const ATTR_HDR: u16 = 1;
    /// `LNET_NET_ATTR_TYPE`: the net's name.
    pub const ATTR_TYPE: u16 = 2;
    /// `LNET_NET_ATTR_LOCAL`: its local NIs.
    pub const ATTR_LOCAL: u16 = 3;

    /// `lnet_net_local_ni_attrs`.
    pub mod ni {
        /// `nid`.
        pub const NID: u16 = 1;
        /// `status`.
        pub const STATUS: u16 = 2;
        /// `interfaces`.
        pub const INTERFACE: u16 = 3;
        /// `statistics`.
        pub const STATS: u16 = 4;
        /// `udsp info`.
        pub const UDSP_INFO: u16 = 5;
        /// `sent_stats`.
        pub const SEND_STATS: u16 = 6;
        /// `received_stats`.
        pub const RECV_STATS: u16 = 7;
        /// `dropped_stats`.
        pub const DROPPED_STATS: u16 = 8;
        /// `health stats`.
        pub const HEALTH_STATS: u16 = 9;
        /// `tunables`.
        pub const TUNABLES: u16 = 10;
        /// `lnd tunables`.
        pub const LND_TUNABLES: u16 = 11;
        /// `dev cpt`.
        pub const DEV_CPT: u16 = 12;
        /// `CPT`.
        pub const CPTS: u16 = 13;
    }

    /// `statistics`: counts, then samples/min/max/avg of put egress, get
    /// RTT and put-ack RTT.
    pub mod stats {
        /// `send_count`.
        pub const SEND_COUNT: u16 = 1;
        /// `recv_count`.
        pub const RECV_COUNT: u16 = 2;
        /// `drop_count`.
        pub const DROP_COUNT: u16 = 3;
        /// The first latency key (`put_egress_samples`); each kind has four.
        pub const LATENCY: u16 = 4;
    }

    /// `sent_stats`, `received_stats`, `dropped_stats`.
    pub mod msg_stats {
        /// `put`.
        pub const PUT: u16 = 1;
        /// `get`.
        pub const GET: u16 = 2;
        /// `reply`.
        pub const REPLY: u16 = 3;
        /// `ack`.
        pub const ACK: u16 = 4;
        /// `hello`.
        pub const HELLO: u16 = 5;
    }

    /// `health stats`.
    pub mod health {
        /// `fatal_error`.
        pub const FATAL_ERRORS: u16 = 1;
        /// `health value`.
        pub const LEVEL: u16 = 2;
        /// `interrupts`.
        pub const INTERRUPTS: u16 = 3;
        /// `dropped`.
        pub const DROPPED: u16 = 4;
        /// `aborted`.
        pub const ABORTED: u16 = 5;
        /// `no route`.
        pub const NO_ROUTE: u16 = 6;
        /// `timeouts`.
        pub const TIMEOUTS: u16 = 7;
        /// `error`.
        pub const ERROR: u16 = 8;
        /// `ping_count`.
        pub const PING_COUNT: u16 = 9;
        /// `next_ping`.
        pub const NEXT_PING: u16 = 10;
    }

    /// `tunables`.
    pub mod tunables {
        /// `peer_timeout`.
        pub const PEER_TIMEOUT: u16 = 1;
        /// `peer_credits`.
        pub const PEER_CREDITS: u16 = 2;
        /// `peer_buffer_credits`.
        pub const PEER_BUFFER_CREDITS: u16 = 3;
        /// `credits`.
        pub const CREDITS: u16 = 4;
    }

    /// ksocklnd's `lnd tunables`.
    pub mod sock {
        /// `conns_per_peer`.
        pub const CONNS_PER_PEER: u16 = 1;
        /// `timeout`.
        pub const TIMEOUT: u16 = 2;
        /// `tos`.
        pub const TOS: u16 = 3;
    }

    /// ko2iblnd's `lnd tunables`.
    pub mod o2ib {
        /// `peercredits_hiw`.
        pub const HIW_PEER_CREDITS: u16 = 1;
        /// `concurrent_sends`.
        pub const CONCURRENT_SENDS: u16 = 2;
        /// `map_on_demand`.
        pub const MAP_ON_DEMAND: u16 = 3;
        /// `fmr_pool_size`.
        pub const FMR_POOL_SIZE: u16 = 4;
        /// `fmr_flush_trigger`.
        pub const FMR_FLUSH_TRIGGER: u16 = 5;
        /// `fmr_cache`.
        pub const FMR_CACHE: u16 = 6;
        /// `ntx`.
        pub const NTX: u16 = 7;
        /// `conns_per_peer`.
        pub const CONNS_PER_PEER: u16 = 8;
        /// `timeout`.
        pub const TIMEOUT: u16 = 9;
        /// `tos`.
        pub const TOS: u16 = 10;
    }

    /// `net_props_list`.
    pub const NET: KeyTable = &[
        keyf(c"net", lnkf::SEQUENCE | lnkf::MAPPING, nla::NUL_STRING),
        key(c"net type", nla::STRING),
        keyf(c"local NI(s)", lnkf::SEQUENCE | lnkf::MAPPING, nla::NESTED),
    ];

    /// `net_update_props_list`: the table again when the LND changes.
    pub const NET_UPDATE: KeyTable = &[
        keyf(c"", lnkf::SEQUENCE | lnkf::MAPPING, nla::NUL_STRING),
        key(c"net type", nla::STRING),
        keyf(c"local NI(s)", lnkf::SEQUENCE | lnkf::MAPPING, nla::NESTED),
    ];

    /// `local_ni_list`.
    pub const LOCAL_NI: KeyTable = &[
        key(c"nid", nla::STRING),
        key(c"status", nla::STRING),
        keyf(c"interfaces", lnkf::MAPPING, nla::NESTED),
        keyf(c"statistics", lnkf::MAPPING, nla::NESTED),
        keyf(c"udsp info", lnkf::MAPPING, nla::NESTED),
        keyf(c"sent_stats", lnkf::MAPPING, nla::NESTED),
        keyf(c"received_stats", lnkf::MAPPING, nla::NESTED),
        keyf(c"dropped_stats", lnkf::MAPPING, nla::NESTED),
        keyf(c"health stats", lnkf::MAPPING, nla::NESTED),
        keyf(c"tunables", lnkf::MAPPING, nla::NESTED),
        keyf(c"lnd tunables", lnkf::MAPPING, nla::NESTED),
        key(c"dev cpt", nla::S32),
        key(c"CPT", nla::STRING),
    ];

    /// `local_ni_interfaces_list`.
    pub const INTERFACES: KeyTable = &[key(c"0", nla::STRING)];

    /// `local_ni_stats_list`.
    pub const STATS: KeyTable = &[
        key(c"send_count", nla::U32),
        key(c"recv_count", nla::U32),
        key(c"drop_count", nla::U32),
        key(c"put_egress_samples", nla::U32),
        key(c"put_egress_min_nsec", nla::U64),
        key(c"put_egress_max_nsec", nla::U64),
        key(c"put_egress_avg_nsec", nla::U64),
        key(c"get_rtt_samples", nla::U32),
        key(c"get_rtt_min_nsec", nla::U64),
        key(c"get_rtt_max_nsec", nla::U64),
        key(c"get_rtt_avg_nsec", nla::U64),
        key(c"put_ack_samples", nla::U32),
        key(c"put_ack_min_nsec", nla::U64),
        key(c"put_ack_max_nsec", nla::U64),
        key(c"put_ack_avg_nsec", nla::U64),
    ];

    /// `udsp_info_list`.
    pub const UDSP_INFO: KeyTable = &[
        key(c"net priority", nla::S32),
        key(c"nid priority", nla::S32),
        keyf(c"Preferred gateway NIDs", lnkf::MAPPING, nla::NESTED),
        keyf(c"Preferred source NIDs", lnkf::MAPPING, nla::NESTED),
    ];

    /// `udsp_info_pref_nids_list`.
    pub const UDSP_PREF_NIDS: KeyTable =
        &[key(c"NID-0", nla::NUL_STRING), key(c"0@lo", nla::STRING)];

    /// `local_ni_msg_stats_list`.
    pub const MSG_STATS: KeyTable = &[
        key(c"put", nla::U32),
        key(c"get", nla::U32),
        key(c"reply", nla::U32),
        key(c"ack", nla::U32),
        key(c"hello", nla::U32),
    ];

    /// `local_ni_health_stats_list`.
    pub const HEALTH_STATS: KeyTable = &[
        key(c"fatal_error", nla::S32),
        key(c"health value", nla::S32),
        key(c"interrupts", nla::U32),
        key(c"dropped", nla::U32),
        key(c"aborted", nla::U32),
        key(c"no route", nla::U32),
        key(c"timeouts", nla::U32),
        key(c"error", nla::U32),
        key(c"ping_count", nla::U32),
        key(c"next_ping", nla::U64),
    ];

    /// `local_ni_tunables_list`.
    pub const TUNABLES: KeyTable = &[
        key(c"peer_timeout", nla::S32),
        key(c"peer_credits", nla::S32),
        key(c"peer_buffer_credits", nla::S32),
        key(c"credits", nla::S32),
    ];

    /// ksocklnd's `lnd_keys`.
    pub const SOCK_LND: KeyTable = &[
        key(c"conns_per_peer", nla::U16),
        key(c"timeout", nla::U32),
        key(c"tos", nla::S16),
    ];

    /// ko2iblnd's `lnd_keys` (keyed by name, in the order Lustre lists
    /// them; their ids are [`o2ib`]'s).
    pub const O2IB_LND: KeyTable = &[
        key(c"peercredits_hiw", nla::U32),
        key(c"map_on_demand", nla::FLAG),
        key(c"concurrent_sends", nla::U32),
        key(c"fmr_pool_size", nla::U32),
        key(c"fmr_flush_trigger", nla::U32),
        key(c"fmr_cache", nla::U32),
        key(c"ntx", nla::U16),
        key(c"conns_per_peer", nla::U16),
        key(c"timeout", nla::U32),
        key(c"tos", nla::S16),
    ];

    /// The tables of a `net show` key message, in the order their
    /// `NLA_NESTED` keys take them; `lnd` is the LND's table, if any.
    pub fn tables(first: KeyTable, lnd: Option<KeyTable>) -> [Option<KeyTable>; 13] {
        [
            Some(first),
            Some(LOCAL_NI),
            Some(INTERFACES),
            Some(STATS),
            Some(UDSP_INFO),
            Some(UDSP_PREF_NIDS),
            Some(UDSP_PREF_NIDS),
            Some(MSG_STATS),
            Some(MSG_STATS),
            Some(MSG_STATS),
            Some(HEALTH_STATS),
            Some(TUNABLES),
            lnd,
        ]
    }
}

/// Writes netlink attributes into a buffer; every write is checked, so a
/// message is whole or refused with `EMSGSIZE`.
pub struct NlWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
}

/// An open nest: where its header is.
#[must_use]
pub struct Nest(usize);

/// The `EMSGSIZE` of a message that does not fit.
pub const TOO_BIG: NlError = NlError::bare(errno::EMSGSIZE);

impl<'b> NlWriter<'b> {
    /// A writer filling `buf` from its start.
    pub fn new(buf: &'b mut [u8]) -> Self {
        NlWriter { buf, len: 0 }
    }

    /// The bytes written.
    pub fn written(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Number of bytes written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn put_header(&mut self, kind: u16, len: usize) -> Result<(), NlError> {
        let l = u16::try_from(len).map_err(|_| TOO_BIG)?;
        let end = self.len.checked_add(align(len)).ok_or(TOO_BIG)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(TOO_BIG)?;
        dst.fill(0);
        let hdr = dst.get_mut(..NLA_HDRLEN).ok_or(TOO_BIG)?;
        hdr.copy_from_slice(&[l.to_ne_bytes(), kind.to_ne_bytes()].concat_array());
        Ok(())
    }

    /// One attribute with payload `data` (`nla_put`).
    pub fn put(&mut self, kind: u16, data: &[u8]) -> Result<(), NlError> {
        let len = NLA_HDRLEN.checked_add(data.len()).ok_or(TOO_BIG)?;
        self.put_header(kind, len)?;
        let start = self.len + NLA_HDRLEN;
        self.buf
            .get_mut(start..start + data.len())
            .ok_or(TOO_BIG)?
            .copy_from_slice(data);
        self.len += align(len);
        Ok(())
    }

    /// A NUL-terminated string (`nla_put_string`).
    pub fn put_str(&mut self, kind: u16, s: &[u8]) -> Result<(), NlError> {
        let len = NLA_HDRLEN
            .checked_add(s.len())
            .and_then(|n| n.checked_add(1))
            .ok_or(TOO_BIG)?;
        self.put_header(kind, len)?;
        let start = self.len + NLA_HDRLEN;
        self.buf
            .get_mut(start..start + s.len())
            .ok_or(TOO_BIG)?
            .copy_from_slice(s);
        // The NUL and padding are the zeros put_header wrote.
        self.len += align(len);
        Ok(())
    }

    /// A u16.
    pub fn put_u16(&mut self, kind: u16, v: u16) -> Result<(), NlError> {
        self.put(kind, &v.to_ne_bytes())
    }

    /// An s16.
    pub fn put_s16(&mut self, kind: u16, v: i16) -> Result<(), NlError> {
        self.put(kind, &v.to_ne_bytes())
    }

    /// A u32.
    pub fn put_u32(&mut self, kind: u16, v: u32) -> Result<(), NlError> {
        self.put(kind, &v.to_ne_bytes())
    }

    /// An s32.
    pub fn put_s32(&mut self, kind: u16, v: i32) -> Result<(), NlError> {
        self.put(kind, &v.to_ne_bytes())
    }

    /// An s64 (no pad attribute, as [`Self::put_u64`]).
    pub fn put_s64(&mut self, kind: u16, v: i64) -> Result<(), NlError> {
        self.put(kind, &v.to_ne_bytes())
    }

    /// A u64 (no pad attribute: the architectures lnet-rs builds for read
    /// unaligned words, where the kernel's `nla_put_u64_64bit` adds none).
    pub fn put_u64(&mut self, kind: u16, v: u64) -> Result<(), NlError> {
        self.put(kind, &v.to_ne_bytes())
    }

    /// A flag (no payload).
    pub fn put_flag(&mut self, kind: u16) -> Result<(), NlError> {
        self.put(kind, &[])
    }

    /// Opens a nest (`nla_nest_start`, which marks it `NLA_F_NESTED`).
    pub fn nest_start(&mut self, kind: u16) -> Result<Nest, NlError> {
        self.put_header(kind | NLA_F_NESTED, NLA_HDRLEN)?;
        let at = self.len;
        self.len += NLA_HDRLEN;
        Ok(Nest(at))
    }

    /// Closes a nest: its length covers what was written since.
    pub fn nest_end(&mut self, nest: Nest) -> Result<(), NlError> {
        let len = u16::try_from(self.len - nest.0).map_err(|_| TOO_BIG)?;
        self.buf
            .get_mut(nest.0..nest.0 + 2)
            .ok_or(TOO_BIG)?
            .copy_from_slice(&len.to_ne_bytes());
        Ok(())
    }

    /// The key tables `tables` as `lnet_genl_send_scalar_list` writes
    /// them: depth first, each `NLA_NESTED` key taking the next table; a
    /// missing table is written as nothing and restarts the count.
    pub fn put_key_tables(&mut self, tables: &[Option<KeyTable>]) -> Result<(), NlError> {
        self.put_table(tables, 0, 0).map(|_| ())
    }

    fn put_table(
        &mut self,
        tables: &[Option<KeyTable>],
        mut idx: usize,
        depth: usize,
    ) -> Result<usize, NlError> {
        let Some(Some(table)) = tables.get(idx) else {
            return Ok(0);
        };
        let einval = NlError::bare(errno::EINVAL);
        let n = u16::try_from(table.len()).map_err(|_| einval)?;
        if n == 0 {
            return Err(NlError::bare(errno::ERANGE));
        }
        if depth > MAX_DEPTH {
            return Err(einval);
        }
        let list = self.nest_start(scalar::LIST)?;
        for (i, k) in (1..=n).zip(table.iter()) {
            let nest = self.nest_start(i)?;
            if i == 1 {
                self.put_u16(scalar::LIST_SIZE, n)?;
            }
            self.put_u16(scalar::INDEX, i)?;
            if let Some(name) = k.name {
                self.put_str(scalar::VALUE, name.to_bytes())?;
            }
            if k.format != 0 {
                self.put_u16(scalar::KEY_FORMAT, k.format)?;
            }
            self.put_u16(scalar::NLA_TYPE, k.nla_type)?;
            if k.nla_type == nla::NESTED {
                idx = self.put_table(tables, idx + 1, depth + 1)?;
            }
            self.nest_end(nest)?;
        }
        self.nest_end(list)?;
        Ok(idx)
    }
}

/// Joins two byte pairs into a header without indexing.
trait ConcatArray {
    fn concat_array(&self) -> [u8; 4];
}

impl ConcatArray for [[u8; 2]; 2] {
    fn concat_array(&self) -> [u8; 4] {
        let [[a, b], [c, d]] = *self;
        [a, b, c, d]
    }
}

/// The `CPT` string of `net show -v`: `"[0,1]"` with its quotes.
pub fn cpt_string(cpts: impl Iterator<Item = u32>, out: &mut [u8; 520]) -> &[u8] {
    let mut len = 0;
    let mut push = |b: u8, out: &mut [u8; 520]| {
        if let Some(d) = out.get_mut(len) {
            *d = b;
            len += 1;
        }
    };
    push(b'"', out);
    push(b'[', out);
    let mut any = false;
    for c in cpts {
        if any {
            push(b',', out);
        }
        any = true;
        let mut digits = [0u8; 10];
        let mut n = c;
        let mut k = 0;
        loop {
            if let Some(d) = digits.get_mut(k) {
                *d = b'0' + (n % 10) as u8;
            }
            k += 1;
            n /= 10;
            if n == 0 || k >= digits.len() {
                break;
            }
        }
        for d in digits.iter().take(k).rev() {
            push(*d, out);
        }
    }
    push(b']', out);
    push(b'"', out);
    out.get(..len).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    extern crate std;
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

    /// `net: [{net type: tcp, local NI(s): [{interfaces: {0: eth0},
    /// tunables: {peer_credits: 16}}]}]` as lnetctl sends it.
    fn net_add_req() -> Vec<u8> {
        list(&[list(&[
            s("net type"),
            s("tcp"),
            s("local NI(s)"),
            list(&[list(&[
                s("interfaces"),
                list(&[int(0), s("eth0")]),
                s("tunables"),
                list(&[s("peer_credits"), int(16)]),
            ])]),
        ])])
    }

    #[test]
    fn net_add_parses_interface_and_tunables() {
        let req = net_add_req();
        let mut ops = Vec::new();
        net_cmd(&req, false, |op| {
            ops.push(op);
            Ok(())
        })
        .unwrap();
        assert_eq!(ops.len(), 2);
        match &ops[0] {
            NetOp::Ni(ni) => {
                assert_eq!(ni.net, Some("tcp"));
                assert_eq!(ni.intf, "eth0");
                assert_eq!(ni.tunables.peer_credits, 16);
                assert_eq!(ni.tunables.credits, -1);
            }
            _ => panic!(),
        }
        match &ops[1] {
            NetOp::EndOfBlock { net, ni_list, .. } => {
                assert_eq!(*net, Some("tcp"));
                assert!(*ni_list);
            }
            _ => panic!(),
        }
    }

    #[test]
    fn net_del_without_nis_ends_block_empty() {
        let req = list(&[list(&[s("net type"), s("tcp1")])]);
        let mut ends = Vec::new();
        net_cmd(&req, false, |op| {
            if let NetOp::EndOfBlock { net, ni_list, .. } = op {
                ends.push((net, ni_list));
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(ends, [(Some("tcp1"), false)]);
    }

    /// `net set --health V --nid N` as lnetctl sends it (`NLM_F_REPLACE`).
    fn net_set_req(net: &str, nid: &str, health: Vec<u8>) -> Vec<u8> {
        list(&[list(&[
            s("net type"),
            s(net),
            s("local NI(s)"),
            list(&[list(&[s("nid"), s(nid), s("health stats"), health])]),
        ])])
    }

    #[test]
    fn net_set_reads_the_health_value() {
        type Got<'a> = Option<(Option<&'a str>, Option<i64>)>;
        fn one(req: &[u8], replace: bool) -> Result<Got<'_>, NlError> {
            let mut got = None;
            net_cmd(req, replace, |op| {
                if let NetOp::Ni(ni) = op {
                    got = Some((ni.nid, ni.health));
                }
                Ok(())
            })?;
            Ok(got)
        }
        let req = net_set_req("tcp", "10.0.0.1@tcp", list(&[s("health value"), int(300)]));
        assert_eq!(one(&req, true), Ok(Some((Some("10.0.0.1@tcp"), Some(300)))));
        // Outside an update the key is not read.
        assert_eq!(one(&req, false), Ok(Some((Some("10.0.0.1@tcp"), None))));
        // Another key, or a value that is no integer.
        let bad = net_set_req("tcp", "10.0.0.1@tcp", list(&[s("health"), int(3)]));
        let e = one(&bad, true).unwrap_err();
        assert_eq!(
            (e.errno, e.msg),
            (errno::EINVAL, Some(c"wrong health config format"))
        );
        let bad = net_set_req("tcp", "10.0.0.1@tcp", list(&[s("health value"), s("3")]));
        let e = one(&bad, true).unwrap_err();
        assert_eq!(
            (e.errno, e.msg),
            (errno::EINVAL, Some(c"invalid health config format"))
        );
        let bad = net_set_req("tcp", "10.0.0.1@tcp", s("300"));
        assert_eq!(one(&bad, true).unwrap_err().errno, errno::EINVAL);
        assert!(one(&bad, false).is_ok());
    }

    #[test]
    fn malformed_requests_are_refused_before_any_op() {
        let mut req = net_add_req();
        // A nested length running past its container: the header of the
        // block's first key, after the two list headers.
        req[8] = 0xff;
        let mut called = false;
        let r = net_cmd(&req, false, |_| {
            called = true;
            Ok(())
        });
        assert_eq!(r.unwrap_err().errno, errno::EINVAL);
        assert!(!called);
        // Trailing bytes that are no attribute.
        let mut req = net_add_req();
        req.extend_from_slice(&[1, 0]);
        assert!(net_cmd(&req, false, |_| Ok(())).is_err());
        // Empty: no configuration.
        assert_eq!(
            net_cmd(&[], false, |_| Ok(())).unwrap_err().errno,
            errno::ENOMSG
        );
        // A key without its value.
        let req = list(&[list(&[s("net type")])]);
        assert_eq!(
            net_cmd(&req, false, |_| Ok(())).unwrap_err().errno,
            errno::EINVAL
        );
        // An unknown tunable.
        let req = list(&[list(&[
            s("net type"),
            s("tcp"),
            s("local NI(s)"),
            list(&[list(&[s("tunables"), list(&[s("bogus"), int(1)])])]),
        ])]);
        assert_eq!(
            net_cmd(&req, false, |_| Ok(())).unwrap_err().errno,
            errno::EINVAL
        );
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut v = s("x");
        for _ in 0..40 {
            v = list(&[v]);
        }
        assert!(validate(&v).is_err());
    }

    #[test]
    fn show_filter_finds_net_type() {
        let req = list(&[list(&[s("net type"), s("tcp")])]);
        assert_eq!(show_filter(&req).unwrap(), Some("tcp"));
        assert_eq!(show_filter(&[]).unwrap(), None);
        // lnetctl's unfiltered show: `net: ""`.
        let req = s("net");
        assert!(show_filter(&req).is_err() || show_filter(&req).unwrap().is_none());
    }

    #[test]
    fn writer_nests_and_refuses_overflow() {
        let mut buf = [0u8; 64];
        let mut w = NlWriter::new(&mut buf);
        let n = w.nest_start(3).unwrap();
        w.put_str(1, b"tcp").unwrap();
        w.put_u32(2, 7).unwrap();
        w.nest_end(n).unwrap();
        let out = w.written().to_vec();
        assert_eq!(out.len(), 4 + 8 + 8);
        let a: Vec<_> = Attrs::new(&out).collect();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].kind, 3);
        let inner: Vec<_> = a[0].nested().collect();
        assert_eq!(inner[0].data, b"tcp\0");
        assert_eq!(inner[1].data, 7u32.to_ne_bytes());
        assert_eq!(u16::from_ne_bytes([out[2], out[3]]), 3 | NLA_F_NESTED);

        let mut small = [0u8; 6];
        let mut w = NlWriter::new(&mut small);
        assert_eq!(w.put_u32(1, 1), Err(TOO_BIG));
    }

    /// The walk of lnet_genl_put_table: a nested key takes the next table,
    /// and a key after it the table after that one's.
    #[test]
    fn key_tables_walk_depth_first() {
        let mut buf = std::vec![0u8; 8192];
        let mut w = NlWriter::new(&mut buf);
        let t = net_show::tables(net_show::NET, Some(net_show::SOCK_LND));
        w.put_key_tables(&t).unwrap();
        let out = w.written().to_vec();
        let top: Vec<_> = Attrs::new(&out).collect();
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].kind, scalar::LIST);
        let keys: Vec<_> = top[0].nested().collect();
        assert_eq!(keys.len(), 3);
        // Key 3 of the net table ("local NI(s)") holds local_ni_list.
        let k3: Vec<_> = keys[2].nested().collect();
        let nested = k3.iter().find(|a| a.kind == scalar::LIST).unwrap();
        let ni_keys: Vec<_> = nested.nested().collect();
        assert_eq!(ni_keys.len(), net_show::LOCAL_NI.len());
        // Its "lnd tunables" key (11) holds the LND's three keys.
        let lnd: Vec<_> = ni_keys[10].nested().collect();
        assert!(lnd.iter().any(|a| a.is_key("lnd tunables")));
        let lnd_table = lnd.iter().find(|a| a.kind == scalar::LIST).unwrap();
        assert_eq!(lnd_table.nested().count(), 3);
        // "udsp info" (5) took udsp_info_list, whose two nested keys took
        // the two NID tables.
        let udsp: Vec<_> = ni_keys[4].nested().collect();
        let udsp_table = udsp.iter().find(|a| a.kind == scalar::LIST).unwrap();
        assert_eq!(udsp_table.nested().count(), 4);
        // The first key carries the table's size.
        let first: Vec<_> = keys[0].nested().collect();
        assert_eq!(first[0].kind, scalar::LIST_SIZE);
        assert_eq!(first[0].data, 3u16.to_ne_bytes());
        // Without an LND table, "lnd tunables" has no nested table.
        let mut buf2 = std::vec![0u8; 8192];
        let mut w = NlWriter::new(&mut buf2);
        w.put_key_tables(&net_show::tables(net_show::NET, None))
            .unwrap();
        assert!(w.len() < out.len());
    }

    #[test]
    fn cpt_string_is_quoted_list() {
        let mut b = [0u8; 520];
        assert_eq!(cpt_string([0u32, 12].into_iter(), &mut b), b"\"[0,12]\"");
        let mut b = [0u8; 520];
        assert_eq!(cpt_string(core::iter::empty(), &mut b), b"\"[]\"");
    }
}
