//! What ksocklnd puts on a TCP connection before and around LNet messages
//! (wire.md §4, §5): the acceptor preamble, the hello, connection types, the
//! 24-byte `ksock_msg` header and its zero-copy acknowledgements.
//!
//! All of it is written in the sender's byte order; a byte-swapped magic
//! marks a peer of the other order ("flip"), and then every field is
//! swapped. Deliberate differences: on a flipped hello the NID4 fields are
//! swapped too (Lustre leaves them, which garbles them), and V1 hellos
//! (pre-2.0 Lustre) are answered as an unknown version.

use super::hdr::{HDR_NID16_LEN, HDR_NID4_LEN};
use super::health::Status;
use super::nid::{Nid, NidError};
use super::wire::{self, put};
use core::fmt;

/// `LNET_PROTO_ACCEPTOR_MAGIC`.
pub const ACCEPTOR_MAGIC: u32 = 0xacce_7100;
/// `LNET_PROTO_MAGIC`: the magic of V2-V4 hellos.
pub const PROTO_MAGIC: u32 = 0x4572_6963;
/// `LNET_PROTO_TCP_MAGIC`: V1 hellos.
pub const TCP_MAGIC: u32 = 0xeebc_0ded;
/// TCP port of the acceptor.
pub const ACCEPTOR_PORT: u16 = 988;
/// Most deprecated IP entries a hello may carry.
pub const HELLO_MAX_IPS: u32 = 16;
/// `SOCKNAL_KEEPALIVE_PING`: the cookie of a keepalive NOOP.
pub const KEEPALIVE_PING: u64 = 1;
/// Bytes of the `ksock_msg` header.
pub const KSOCK_MSG_LEN: usize = 24;

/// A protocol violation by the peer: the connection is closed, counted and
/// logged; nothing else is affected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtoError {
    /// Fewer bytes than the structure needs.
    Short,
    /// Not a magic this side knows.
    BadMagic(u32),
    /// A legacy V1 hello with no acceptor preamble.
    LegacyHello,
    /// An acceptor or hello version this side does not speak.
    BadVersion(u32),
    /// A NID that does not decode.
    BadNid(NidError),
    /// More deprecated IP entries than allowed.
    TooManyIps(u32),
    /// An unknown connection type.
    BadConnType(i32),
    /// An unknown `ksock_msg` type.
    BadMsgType(u32),
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtoError::Short => f.write_str("truncated"),
            ProtoError::BadMagic(m) => write!(f, "bad magic 0x{m:08x}"),
            ProtoError::LegacyHello => f.write_str("V1 hello without acceptor request"),
            ProtoError::BadVersion(v) => write!(f, "unknown protocol version {v}"),
            ProtoError::BadNid(e) => write!(f, "bad NID: {e}"),
            ProtoError::TooManyIps(n) => write!(f, "{n} IPs in hello (at most {HELLO_MAX_IPS})"),
            ProtoError::BadConnType(t) => write!(f, "bad connection type {t}"),
            ProtoError::BadMsgType(t) => write!(f, "bad message type 0x{t:x}"),
        }
    }
}

/// Reads fields in the sender's order (little-endian, or big when flipped).
type Fields<'a> = wire::Reader<'a, ProtoError>;

/// A large NID at `at`.
fn nid_at(f: &Fields<'_>, at: usize) -> Result<Nid, ProtoError> {
    let b = f.bytes().get(at..).ok_or(ProtoError::Short)?;
    Nid::decode(b).map(|(n, _)| n).map_err(ProtoError::BadNid)
}

/// The magic at the start of `b`, and whether the sender's order is the
/// other one.
fn magic(b: &[u8], want: u32) -> Result<bool, ProtoError> {
    let m = Fields::new(b, false, ProtoError::Short).u32(0)?;
    if m == want {
        Ok(false)
    } else if m == want.swap_bytes() {
        Ok(true)
    } else if m == TCP_MAGIC || m == TCP_MAGIC.swap_bytes() {
        Err(ProtoError::LegacyHello)
    } else {
        Err(ProtoError::BadMagic(m))
    }
}

/// The request an active side sends first to the acceptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcceptorRequest {
    /// 1 (NID4 target) or 2 (large-NID target).
    pub version: u32,
    /// The local NID the peer wants.
    pub target: Nid,
}

/// What the acceptor makes of the first bytes of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// A request this side serves.
    Request(AcceptorRequest),
    /// A newer protocol or unknown version: reply with `OLD_ACCEPTOR_REPLY`
    /// so the peer falls back, then close.
    TellOld,
}

impl AcceptorRequest {
    /// Bytes the request takes for `version` (16 or 28).
    pub fn len(version: u32) -> Option<usize> {
        match version {
            1 => Some(16),
            2 => Some(28),
            _ => None,
        }
    }

    /// Encodes the request (little-endian) into `out`; returns bytes used.
    pub fn encode(&self, out: &mut [u8]) -> Option<usize> {
        let n = Self::len(self.version)?;
        put(out, 0, &ACCEPTOR_MAGIC.to_le_bytes())?;
        put(out, 4, &self.version.to_le_bytes())?;
        if self.version == 1 {
            put(out, 8, &self.target.to_nid4()?.to_le_bytes())?;
        } else {
            self.target.encode(out.get_mut(8..)?)?;
        }
        Some(n)
    }

    /// Reads a request; `b` must hold at least the first 8 bytes, and the
    /// whole request for a known version.
    pub fn decode(b: &[u8]) -> Result<Accept, ProtoError> {
        let flip = match magic(b, ACCEPTOR_MAGIC) {
            Ok(flip) => flip,
            Err(ProtoError::BadMagic(m)) if m == PROTO_MAGIC || m == PROTO_MAGIC.swap_bytes() => {
                return Ok(Accept::TellOld)
            }
            Err(e) => return Err(e),
        };
        let f = Fields::new(b, flip, ProtoError::Short);
        let version = f.u32(4)?;
        let target = match version {
            1 => Nid::from_nid4(f.u64(8)?),
            2 => nid_at(&f, 8)?,
            _ => return Ok(Accept::TellOld),
        };
        Ok(Accept::Request(AcceptorRequest { version, target }))
    }
}

/// The acceptor's "I speak version 1" reply: magic, version 1, NID 0.
pub const OLD_ACCEPTOR_REPLY: [u8; 16] = {
    let m = ACCEPTOR_MAGIC.to_le_bytes();
    [m[0], m[1], m[2], m[3], 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
};

/// A socklnd connection type (`SOCKLND_CONN_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnType {
    /// Refusal in a hello reply.
    None,
    /// Untyped (V1/V2 only).
    Any,
    /// Small messages.
    Control,
    /// Bulk into the sender (also carries zero-copy ACKs).
    BulkIn,
    /// Bulk out of the sender.
    BulkOut,
}

impl ConnType {
    /// The wire value.
    pub fn to_i32(self) -> i32 {
        match self {
            ConnType::None => -1,
            ConnType::Any => 0,
            ConnType::Control => 1,
            ConnType::BulkIn => 2,
            ConnType::BulkOut => 3,
        }
    }

    /// From the wire value.
    pub fn from_i32(v: i32) -> Result<ConnType, ProtoError> {
        Ok(match v {
            -1 => ConnType::None,
            0 => ConnType::Any,
            1 => ConnType::Control,
            2 => ConnType::BulkIn,
            3 => ConnType::BulkOut,
            t => return Err(ProtoError::BadConnType(t)),
        })
    }

    /// The type as the other end sees it: the peer's bulk-in is my
    /// bulk-out.
    pub fn inverse(self) -> ConnType {
        match self {
            ConnType::BulkIn => ConnType::BulkOut,
            ConnType::BulkOut => ConnType::BulkIn,
            t => t,
        }
    }
}

/// A V2-V4 hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    /// 2, 3 or 4.
    pub version: u32,
    /// The sender's NI.
    pub src_nid: Nid,
    /// The NI it wants.
    pub dst_nid: Nid,
    /// The sender's pid.
    pub src_pid: u32,
    /// Ignored by receivers; 0 from Lustre.
    pub dst_pid: u32,
    /// The sender's incarnation (net start-up time).
    pub src_incarnation: u64,
    /// Ignored by receivers; 0 from Lustre.
    pub dst_incarnation: u64,
    /// The connection type from the sender's view.
    pub ctype: ConnType,
    /// Deprecated IP entries that follow (skipped by the reader).
    pub nips: u32,
}

/// How a hello starts: read the first 8 bytes, then `base_len` in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HelloHead {
    /// The hello's version.
    pub version: u32,
    /// The sender's byte order is not ours.
    pub flip: bool,
    /// Bytes of the fixed part (56 or 80).
    pub base_len: usize,
}

impl HelloHead {
    /// From the first 8 bytes.
    pub fn parse(b: &[u8]) -> Result<HelloHead, ProtoError> {
        let flip = magic(b, PROTO_MAGIC)?;
        let version = Fields::new(b, flip, ProtoError::Short).u32(4)?;
        let base_len = match version {
            2 | 3 => 56,
            4 => 80,
            v => return Err(ProtoError::BadVersion(v)),
        };
        Ok(HelloHead {
            version,
            flip,
            base_len,
        })
    }
}

impl Hello {
    /// Decodes the fixed part (`head.base_len` bytes of `b`). The caller
    /// then reads and discards `4 * nips` bytes.
    pub fn decode(head: &HelloHead, b: &[u8]) -> Result<Hello, ProtoError> {
        let f = Fields::new(
            b.get(..head.base_len).ok_or(ProtoError::Short)?,
            head.flip,
            ProtoError::Short,
        );
        let (src_nid, dst_nid, rest) = if head.version == 4 {
            (nid_at(&f, 8)?, nid_at(&f, 28)?, 48)
        } else {
            (Nid::from_nid4(f.u64(8)?), Nid::from_nid4(f.u64(16)?), 24)
        };
        let nips = f.u32(rest + 28)?;
        if nips > HELLO_MAX_IPS {
            return Err(ProtoError::TooManyIps(nips));
        }
        Ok(Hello {
            version: head.version,
            src_nid,
            dst_nid,
            src_pid: f.u32(rest)?,
            dst_pid: f.u32(rest + 4)?,
            src_incarnation: f.u64(rest + 8)?,
            dst_incarnation: f.u64(rest + 16)?,
            ctype: ConnType::from_i32(f.u32(rest + 24)? as i32)?,
            nips,
        })
    }

    /// Encodes the hello (little-endian, no IP entries) into `out`; returns
    /// the bytes used, or `None` if `out` is too small or a NID does not fit
    /// the version.
    pub fn encode(&self, out: &mut [u8]) -> Option<usize> {
        let (n, rest) = match self.version {
            2 | 3 => (56, 24),
            4 => (80, 48),
            _ => return None,
        };
        let out = out.get_mut(..n)?;
        out.fill(0);
        put(out, 0, &PROTO_MAGIC.to_le_bytes())?;
        put(out, 4, &self.version.to_le_bytes())?;
        if self.version == 4 {
            self.src_nid.encode(out.get_mut(8..28)?)?;
            self.dst_nid.encode(out.get_mut(28..48)?)?;
        } else {
            put(out, 8, &self.src_nid.to_nid4()?.to_le_bytes())?;
            put(out, 16, &self.dst_nid.to_nid4()?.to_le_bytes())?;
        }
        put(out, rest, &self.src_pid.to_le_bytes())?;
        put(out, rest + 4, &self.dst_pid.to_le_bytes())?;
        put(out, rest + 8, &self.src_incarnation.to_le_bytes())?;
        put(out, rest + 16, &self.dst_incarnation.to_le_bytes())?;
        put(out, rest + 24, &self.ctype.to_i32().to_le_bytes())?;
        Some(n)
    }
}

/// Bytes of the LNet header that follows an LNET `ksock_msg` of `version`.
pub fn lnet_hdr_len(version: u32) -> usize {
    if version >= 4 {
        HDR_NID16_LEN
    } else {
        HDR_NID4_LEN
    }
}

/// The kind of a `ksock_msg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKind {
    /// Header only: keepalive or zero-copy ACKs.
    Noop,
    /// An LNet header (and payload) follows.
    Lnet,
}

/// The 24-byte `ksock_msg` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KsockMsg {
    /// NOOP or LNET.
    pub kind: MsgKind,
    /// Checksum, 0 for none.
    pub csum: u32,
    /// `[0]`: zero-copy request cookie; `[1]`: acknowledgement.
    pub zc_cookies: [u64; 2],
}

impl KsockMsg {
    /// Decodes the header from the first 24 bytes of `b`.
    pub fn decode(b: &[u8], flip: bool) -> Result<KsockMsg, ProtoError> {
        let f = Fields::new(
            b.get(..KSOCK_MSG_LEN).ok_or(ProtoError::Short)?,
            flip,
            ProtoError::Short,
        );
        let kind = match f.u32(0)? {
            0xc0 => MsgKind::Noop,
            0xc1 => MsgKind::Lnet,
            t => return Err(ProtoError::BadMsgType(t)),
        };
        Ok(KsockMsg {
            kind,
            csum: f.u32(4)?,
            zc_cookies: [f.u64(8)?, f.u64(16)?],
        })
    }

    /// Encodes the header into the first 24 bytes of `out`.
    pub fn encode(&self, out: &mut [u8]) -> Option<()> {
        let t: u32 = match self.kind {
            MsgKind::Noop => 0xc0,
            MsgKind::Lnet => 0xc1,
        };
        put(out, 0, &t.to_le_bytes())?;
        put(out, 4, &self.csum.to_le_bytes())?;
        put(out, 8, &self.zc_cookies[0].to_le_bytes())?;
        put(out, 16, &self.zc_cookies[1].to_le_bytes())
    }

    /// The acknowledgements this header carries. On an LNET message
    /// `[0]` is the message's own request, so only `[1]` acknowledges.
    pub fn zc_acks(&self) -> ZcAcks {
        let [c0, c1] = self.zc_cookies;
        match (c0, c1) {
            (_, 0) => ZcAcks::None,
            (_, KEEPALIVE_PING) if self.kind == MsgKind::Lnet => ZcAcks::Keepalive,
            (_, c) if self.kind == MsgKind::Lnet => ZcAcks::One(c),
            (0, KEEPALIVE_PING) if self.kind == MsgKind::Noop => ZcAcks::Keepalive,
            (0, c) => ZcAcks::One(c),
            (a, b) if a > b => ZcAcks::Two(a, b),
            (a, b) => ZcAcks::Range(a, b),
        }
    }
}

/// Zero-copy acknowledgements in a `ksock_msg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZcAcks {
    /// None.
    None,
    /// A keepalive NOOP: nothing to acknowledge.
    Keepalive,
    /// One cookie.
    One(u64),
    /// Two separate cookies.
    Two(u64, u64),
    /// Every cookie in the inclusive range.
    Range(u64, u64),
}

impl ZcAcks {
    /// Whether `cookie` is acknowledged.
    pub fn covers(self, cookie: u64) -> bool {
        match self {
            ZcAcks::None | ZcAcks::Keepalive => false,
            ZcAcks::One(c) => cookie == c,
            ZcAcks::Two(a, b) => cookie == a || cookie == b,
            ZcAcks::Range(a, b) => a <= cookie && cookie <= b,
        }
    }

    /// How many requests it acknowledges.
    pub fn count(self) -> u64 {
        match self {
            ZcAcks::None | ZcAcks::Keepalive => 0,
            ZcAcks::One(_) => 1,
            ZcAcks::Two(..) => 2,
            ZcAcks::Range(a, b) => b.saturating_sub(a).saturating_add(1),
        }
    }
}

/// The first zero-copy cookie of a peer: cookies below it mean "none" and
/// "keepalive".
pub const FIRST_ZC_COOKIE: u64 = KEEPALIVE_PING + 1;

/// Takes the next zero-copy cookie from a peer's counter (which starts at
/// [`FIRST_ZC_COOKIE`]); a wrapped counter starts over there.
pub fn take_zc_cookie(next: &mut u64) -> u64 {
    if *next < FIRST_ZC_COOKIE {
        *next = FIRST_ZC_COOKIE;
    }
    let c = *next;
    *next = c.checked_add(1).unwrap_or(FIRST_ZC_COOKIE);
    c
}

/// Whether a message with `payload` bytes is sent as a zero-copy request
/// (`ksocknal_check_zc_req`): it is held until the peer acknowledges its
/// receipt, so a silent peer fails it instead of it completing unseen.
/// Lustre asks only on connections whose route has scatter-gather and
/// checksum offload (it then sends the pages themselves); the holding is
/// what matters to health, so `capable` is the same test.
pub fn zc_request_wanted(payload: u32, zc_min_payload: i32, capable: bool) -> bool {
    capable && payload > 0 && i64::from(payload) >= i64::from(zc_min_payload.max(2 << 10))
}

/// errno values the classification below distinguishes (Linux numbers).
pub mod errno {
    /// `ENOMEM`
    pub const ENOMEM: i32 = 12;
    /// `ENETDOWN`
    pub const ENETDOWN: i32 = 100;
    /// `ENETUNREACH`
    pub const ENETUNREACH: i32 = 101;
    /// `ECONNRESET`
    pub const ECONNRESET: i32 = 104;
    /// `ETIMEDOUT`
    pub const ETIMEDOUT: i32 = 110;
    /// `ECONNREFUSED`
    pub const ECONNREFUSED: i32 = 111;
    /// `EHOSTUNREACH`
    pub const EHOSTUNREACH: i32 = 113;
    /// `ESHUTDOWN`
    pub const ESHUTDOWN: i32 = 108;
    /// `EPIPE`
    pub const EPIPE: i32 = 32;
}

/// The health status of txs failed together with error `-err` (queued on a
/// connection or peer that went away: `ksocknal_txlist_done`).
pub fn txlist_status(err: i32) -> Status {
    match err.saturating_abs() {
        errno::ETIMEDOUT => Status::NetworkTimeout,
        errno::ENETDOWN
        | errno::EHOSTUNREACH
        | errno::ENETUNREACH
        | errno::ECONNREFUSED
        | errno::ECONNRESET => Status::RemoteDropped,
        _ => Status::LocalError,
    }
}

/// The health status of a message still queued (never put on the wire) on
/// a connection that closes with `-err`. This differs from Lustre.
///
/// Lustre leaves such txs on the connection for its scheduler to "send
/// to /dev/null": each ends `-ESHUTDOWN` with LOCAL_ERROR
/// ([`LUSTRE_CLOSED_CONN`], `ksocknal_process_transmit` on a closing
/// connection), so LNet charges the local NI and never resends it, and
/// the upper layer sees the failure. We classify them by why the
/// connection closed, as Lustre classifies the messages waiting for a
/// connection ([`txlist_status`]): a peer that reset or became unreachable
/// (or an NI whose link went down) gives REMOTE_DROPPED, which LNet
/// resends over another path and charges to the peer NI; a stalled
/// connection gives NETWORK_TIMEOUT; anything else LOCAL_ERROR, as
/// Lustre. A write that met the peer's close (`EPIPE`) is a reset too.
/// Why: these messages never left, so resending them is safe, and the
/// failure is the path's or the peer's, not the local NI's; charging a
/// healthy local NI for a peer's reset would steer a Multi-Rail node's
/// traffic off it.
pub fn closed_conn_status(err: i32) -> Status {
    match err.saturating_abs() {
        errno::EPIPE => Status::RemoteDropped,
        _ => txlist_status(err),
    }
}

/// The health status of a message sent with a zero-copy request that its
/// peer had not acknowledged when the connection closed with `-err`. This
/// differs from Lustre.
///
/// Lustre fails it `-EIO` with LOCAL_ERROR (a zero-copy abort in
/// `ksocknal_tx_done`), whatever closed the connection: only the local NI
/// pays, and its recovery ping, which goes to itself, restores it at once.
/// A rail gone silent then keeps its peer NI at full health and is chosen
/// again in its turn, every time holding what is sent on it for the LND
/// timeout (seen in bench_failover: the flow stood still for 10 s in
/// every 13). When the peer or the path closed the connection (it
/// stalled, the peer reset or closed it, a route went away) we give
/// NETWORK_TIMEOUT: the peer NI pays too, and its recovery pings, failing
/// while the rail is silent, keep it out of selection until it answers.
/// Still no resend, as in Lustre: the message was sent and the peer may
/// hold it, only its acknowledgement missing.
pub fn zc_aborted_status(err: i32) -> Status {
    match closed_conn_status(err) {
        Status::NetworkTimeout | Status::RemoteDropped => Status::NetworkTimeout,
        _ => Status::LocalError,
    }
}

/// What Lustre ends a message queued on a closing connection with,
/// whatever closed it: errno and health status.
pub const LUSTRE_CLOSED_CONN: (i32, Status) = (-errno::ESHUTDOWN, Status::LocalError);

/// The health status of a tx whose send on the socket failed with `-err`
/// (`ksocknal_process_transmit`).
pub fn send_error_status(err: i32) -> Status {
    match err.saturating_abs() {
        errno::ETIMEDOUT => Status::RemoteTimeout,
        _ => Status::LocalError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What LNet's health does with a message of a Multi-Rail node to a
    /// Multi-Rail peer that ends with `status` (its first attempt).
    fn health_of(status: Status) -> super::super::health::Decision {
        use super::super::health::{decide, first_send};
        decide(&first_send(status), 2)
    }

    #[test]
    fn queued_messages_of_a_closed_connection_ours_and_lustres() {
        use super::super::health::Change;
        // Lustre: whatever closed it, no resend, and the local NI pays.
        let (lerr, lstatus) = LUSTRE_CLOSED_CONN;
        assert_eq!(lerr, -108);
        let l = health_of(lstatus);
        assert!(!l.resend);
        assert_eq!((l.local, l.remote), (Change::Decrement, Change::None));
        // Ours: a reset peer, an unreachable one or a link gone down: the
        // message goes again over another path, and the peer NI pays.
        for err in [errno::ECONNRESET, errno::ENETDOWN, errno::EHOSTUNREACH] {
            let s = closed_conn_status(-err);
            assert_eq!(s, Status::RemoteDropped);
            let d = health_of(s);
            assert!(d.resend, "{err}");
            assert_eq!((d.local, d.remote), (Change::None, Change::Decrement));
        }
        // A stalled connection: no resend, as Lustre, but the path pays
        // on both sides.
        let d = health_of(closed_conn_status(-errno::ETIMEDOUT));
        assert!(!d.resend);
        assert_eq!((d.local, d.remote), (Change::Decrement, Change::Decrement));
        // Anything else (a stale peer, a protocol error) as Lustre.
        assert_eq!(closed_conn_status(-116), lstatus);
        assert_eq!(closed_conn_status(-71), lstatus);
        // A write that met the peer's close is a reset.
        assert_eq!(closed_conn_status(-errno::EPIPE), Status::RemoteDropped);
    }

    #[test]
    fn unacknowledged_zero_copy_requests_of_a_closed_connection() {
        use super::super::health::Change;
        // The peer or the path closed it: both ends of the path pay, so
        // that a silent rail's peer NI leaves selection; never resent.
        for err in [
            errno::ETIMEDOUT,
            errno::ECONNRESET,
            errno::EPIPE,
            errno::EHOSTUNREACH,
        ] {
            let s = zc_aborted_status(-err);
            assert_eq!(s, Status::NetworkTimeout, "{err}");
            let d = health_of(s);
            assert!(!d.resend, "{err}");
            assert_eq!((d.local, d.remote), (Change::Decrement, Change::Decrement));
        }
        // Closed here (the NI stopping, a protocol error): as Lustre.
        for err in [errno::ESHUTDOWN, 71, 5] {
            assert_eq!(zc_aborted_status(-err), Status::LocalError, "{err}");
        }
    }

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    fn hello(version: u32) -> Hello {
        Hello {
            version,
            src_nid: nid("10.1.0.1@tcp"),
            dst_nid: nid("10.1.0.2@tcp"),
            src_pid: 12345,
            dst_pid: 0,
            src_incarnation: 0x1122_3344_5566_7788,
            dst_incarnation: 0,
            ctype: ConnType::BulkIn,
            nips: 0,
        }
    }

    #[test]
    fn failure_classification() {
        use errno::*;
        for (e, txlist, send) in [
            (ETIMEDOUT, Status::NetworkTimeout, Status::RemoteTimeout),
            (ENETDOWN, Status::RemoteDropped, Status::LocalError),
            (EHOSTUNREACH, Status::RemoteDropped, Status::LocalError),
            (ENETUNREACH, Status::RemoteDropped, Status::LocalError),
            (ECONNREFUSED, Status::RemoteDropped, Status::LocalError),
            (ECONNRESET, Status::RemoteDropped, Status::LocalError),
            (ENOMEM, Status::LocalError, Status::LocalError),
            (5, Status::LocalError, Status::LocalError),
        ] {
            assert_eq!(txlist_status(-e), txlist, "txlist {e}");
            assert_eq!(send_error_status(-e), send, "send {e}");
        }
        assert_eq!(txlist_status(i32::MIN), Status::LocalError);
    }

    #[test]
    fn acceptor() {
        let mut b = [0u8; 28];
        let r1 = AcceptorRequest {
            version: 1,
            target: nid("10.1.0.2@tcp"),
        };
        assert_eq!(r1.encode(&mut b), Some(16));
        assert_eq!(&b[..4], &[0x00, 0x71, 0xce, 0xac]);
        assert_eq!(&b[8..16], &0x0002_0000_0a01_0002u64.to_le_bytes());
        assert_eq!(AcceptorRequest::decode(&b), Ok(Accept::Request(r1)));
        let r2 = AcceptorRequest {
            version: 2,
            target: nid("2001:db8::2@tcp"),
        };
        assert_eq!(r2.encode(&mut b), Some(28));
        assert_eq!(AcceptorRequest::decode(&b), Ok(Accept::Request(r2)));
        // A big-endian peer.
        let mut be = [0u8; 16];
        be[..4].copy_from_slice(&ACCEPTOR_MAGIC.to_be_bytes());
        be[4..8].copy_from_slice(&1u32.to_be_bytes());
        be[8..16].copy_from_slice(&0x0002_0000_0a01_0002u64.to_be_bytes());
        assert_eq!(AcceptorRequest::decode(&be), Ok(Accept::Request(r1)));
        // Newer protocol or version: tell it we are old.
        let mut v9 = b;
        v9[4] = 9;
        assert_eq!(AcceptorRequest::decode(&v9), Ok(Accept::TellOld));
        assert_eq!(
            AcceptorRequest::decode(&PROTO_MAGIC.to_le_bytes()),
            Ok(Accept::TellOld)
        );
        assert_eq!(
            AcceptorRequest::decode(&TCP_MAGIC.to_le_bytes()),
            Err(ProtoError::LegacyHello)
        );
        assert_eq!(
            AcceptorRequest::decode(&[1, 2, 3, 4, 0, 0, 0, 0]),
            Err(ProtoError::BadMagic(0x0403_0201))
        );
        assert_eq!(AcceptorRequest::decode(&b[..3]), Err(ProtoError::Short));
        assert_eq!(
            &OLD_ACCEPTOR_REPLY[..8],
            &[0x00, 0x71, 0xce, 0xac, 1, 0, 0, 0]
        );
    }

    #[test]
    fn hello_v3_layout() {
        let mut b = [0u8; 80];
        assert_eq!(hello(3).encode(&mut b), Some(56));
        assert_eq!(&b[..4], &PROTO_MAGIC.to_le_bytes());
        assert_eq!(&b[4..8], &3u32.to_le_bytes());
        assert_eq!(&b[8..16], &0x0002_0000_0a01_0001u64.to_le_bytes());
        assert_eq!(&b[24..28], &12345u32.to_le_bytes());
        assert_eq!(&b[32..40], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(&b[48..52], &2i32.to_le_bytes());
        let head = HelloHead::parse(&b).unwrap();
        assert_eq!(
            head,
            HelloHead {
                version: 3,
                flip: false,
                base_len: 56
            }
        );
        assert_eq!(Hello::decode(&head, &b), Ok(hello(3)));
    }

    #[test]
    fn hello_v4_layout() {
        let mut b = [0u8; 80];
        let h = Hello {
            src_nid: nid("2001:db8::1@tcp"),
            ..hello(4)
        };
        assert_eq!(h.encode(&mut b), Some(80));
        assert_eq!(b[8], 12);
        assert_eq!(&b[48..52], &12345u32.to_le_bytes());
        assert_eq!(&b[72..76], &2i32.to_le_bytes());
        let head = HelloHead::parse(&b).unwrap();
        assert_eq!(head.base_len, 80);
        assert_eq!(Hello::decode(&head, &b), Ok(h));
        // A large NID cannot go in a V3 hello.
        assert_eq!(Hello { version: 3, ..h }.encode(&mut b), None);
    }

    #[test]
    fn hello_rejects() {
        let mut b = [0u8; 56];
        hello(3).encode(&mut b).unwrap();
        let mut bad = b;
        bad[4] = 7;
        assert_eq!(HelloHead::parse(&bad), Err(ProtoError::BadVersion(7)));
        let mut ips = b;
        ips[52] = 17;
        let head = HelloHead::parse(&ips).unwrap();
        assert_eq!(Hello::decode(&head, &ips), Err(ProtoError::TooManyIps(17)));
        let mut ct = b;
        ct[48] = 9;
        assert_eq!(Hello::decode(&head, &ct), Err(ProtoError::BadConnType(9)));
        assert_eq!(Hello::decode(&head, &b[..55]), Err(ProtoError::Short));
        assert_eq!(
            HelloHead::parse(&TCP_MAGIC.to_le_bytes()),
            Err(ProtoError::LegacyHello)
        );
    }

    #[test]
    fn flipped_hello() {
        let h = hello(3);
        let mut b = [0u8; 56];
        b[..4].copy_from_slice(&PROTO_MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&3u32.to_be_bytes());
        b[8..16].copy_from_slice(&h.src_nid.to_nid4().unwrap().to_be_bytes());
        b[16..24].copy_from_slice(&h.dst_nid.to_nid4().unwrap().to_be_bytes());
        b[24..28].copy_from_slice(&12345u32.to_be_bytes());
        b[32..40].copy_from_slice(&h.src_incarnation.to_be_bytes());
        b[48..52].copy_from_slice(&2i32.to_be_bytes());
        let head = HelloHead::parse(&b).unwrap();
        assert!(head.flip);
        assert_eq!(Hello::decode(&head, &b), Ok(h));
    }

    #[test]
    fn conn_types() {
        assert_eq!(ConnType::BulkIn.inverse(), ConnType::BulkOut);
        assert_eq!(ConnType::BulkOut.inverse(), ConnType::BulkIn);
        assert_eq!(ConnType::Control.inverse(), ConnType::Control);
        for t in [
            ConnType::None,
            ConnType::Any,
            ConnType::Control,
            ConnType::BulkIn,
            ConnType::BulkOut,
        ] {
            assert_eq!(ConnType::from_i32(t.to_i32()), Ok(t));
        }
    }

    #[test]
    fn ksock_msg_and_zc_acks() {
        let m = KsockMsg {
            kind: MsgKind::Lnet,
            csum: 0,
            zc_cookies: [7, 0],
        };
        let mut b = [0u8; 24];
        m.encode(&mut b).unwrap();
        assert_eq!(&b[..4], &0xc1u32.to_le_bytes());
        assert_eq!(KsockMsg::decode(&b, false), Ok(m));
        assert_eq!(m.zc_acks(), ZcAcks::None);
        let noop = |c0, c1| KsockMsg {
            kind: MsgKind::Noop,
            csum: 0,
            zc_cookies: [c0, c1],
        };
        assert_eq!(noop(0, KEEPALIVE_PING).zc_acks(), ZcAcks::Keepalive);
        assert_eq!(noop(0, 9).zc_acks(), ZcAcks::One(9));
        assert_eq!(noop(9, 4).zc_acks(), ZcAcks::Two(9, 4));
        assert_eq!(noop(4, 9).zc_acks(), ZcAcks::Range(4, 9));
        b[0] = 0xc7;
        assert_eq!(
            KsockMsg::decode(&b, false),
            Err(ProtoError::BadMsgType(0xc7))
        );
        assert_eq!(KsockMsg::decode(&b[..23], false), Err(ProtoError::Short));
        assert_eq!(lnet_hdr_len(3), 72);
        assert_eq!(lnet_hdr_len(4), 96);
    }

    #[test]
    fn zc_acks_of_lnet_messages_and_ranges() {
        let lnet = |c0, c1| KsockMsg {
            kind: MsgKind::Lnet,
            csum: 0,
            zc_cookies: [c0, c1],
        };
        // Its own request in [0], a piggybacked ACK in [1].
        assert_eq!(lnet(9, 4).zc_acks(), ZcAcks::One(4));
        assert_eq!(lnet(0, 4).zc_acks(), ZcAcks::One(4));
        assert_eq!(lnet(0, KEEPALIVE_PING).zc_acks(), ZcAcks::Keepalive);
        let r = ZcAcks::Range(4, 9);
        assert!(r.covers(4) && r.covers(7) && r.covers(9));
        assert!(!r.covers(3) && !r.covers(10));
        assert_eq!(r.count(), 6);
        let two = ZcAcks::Two(9, 4);
        assert!(two.covers(9) && two.covers(4) && !two.covers(5));
        assert_eq!(two.count(), 2);
        assert!(!ZcAcks::Keepalive.covers(1));
        assert_eq!(ZcAcks::Keepalive.count(), 0);
        assert_eq!(ZcAcks::Range(0, u64::MAX).count(), u64::MAX);
    }

    #[test]
    fn zc_cookies_and_requests() {
        let mut next = 0;
        assert_eq!(take_zc_cookie(&mut next), 2);
        assert_eq!(take_zc_cookie(&mut next), 3);
        let mut next = u64::MAX;
        assert_eq!(take_zc_cookie(&mut next), u64::MAX);
        assert_eq!(take_zc_cookie(&mut next), 2);
        // Lustre's default threshold, its 2 KiB floor, and the route test.
        assert!(zc_request_wanted(16384, 16384, true));
        assert!(!zc_request_wanted(16383, 16384, true));
        assert!(!zc_request_wanted(1 << 20, 16384, false));
        assert!(!zc_request_wanted(1024, 0, true));
        assert!(zc_request_wanted(2048, 0, true));
        assert!(!zc_request_wanted(0, 2048, true));
    }

    proptest! {
        #[test]
        fn decoders_never_panic(b in proptest::collection::vec(any::<u8>(), 0..100), flip: bool) {
            let _ = AcceptorRequest::decode(&b);
            if let Ok(head) = HelloHead::parse(&b) {
                if let Ok(h) = Hello::decode(&head, &b) {
                    prop_assert!(h.nips <= HELLO_MAX_IPS);
                }
            }
            let _ = KsockMsg::decode(&b, flip);
        }

        #[test]
        fn hello_round_trip(version in 2u32..=4, pid: u32, inc: u64, ct in 0i32..4, a: u32, b4: u32) {
            let h = Hello {
                src_nid: Nid::new4(crate_tcp(), a),
                dst_nid: Nid::new4(crate_tcp(), b4),
                src_pid: pid,
                src_incarnation: inc,
                ctype: ConnType::from_i32(ct).unwrap(),
                ..hello(version)
            };
            let mut out = [0u8; 80];
            let n = h.encode(&mut out).unwrap();
            let head = HelloHead::parse(&out).unwrap();
            prop_assert_eq!(head.base_len, n);
            prop_assert_eq!(Hello::decode(&head, &out), Ok(h));
        }
    }

    fn crate_tcp() -> super::super::nid::Net {
        super::super::nid::Net::new(super::super::nid::lnd::SOCK, 0)
    }
}
