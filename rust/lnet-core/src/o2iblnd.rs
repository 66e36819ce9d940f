//! What o2iblnd sends (wire.md §6): the 48-byte `kib_msg` header, its ten
//! message types and their bodies, RDMA descriptors, the checksum, the
//! connection parameters a CONNREQ or CONNACK carries as RDMA CM private
//! data, and the `kib_rej` private data of a reject.
//!
//! A message is written in the sender's byte order. A byte-swapped magic
//! marks a peer of the other order ("flip"); then every numeric field is
//! swapped except the cookies, which are opaque and echoed raw. The LNet
//! header inside IMMEDIATE, PUT_REQ and GET_REQ is always little-endian
//! (wire.md §2.1). [`Msg::decode`] makes the checks of `kiblnd_unpack_msg`
//! in its order. [`ConnParams::check_connreq`] and [`Msg::check_connack`]
//! make the parameter checks of `kiblnd_passive_connect` and
//! `kiblnd_check_connreply`. [`Rej::decode`] reads a reject as
//! `kiblnd_rejected` does. Decoding borrows the received bytes: an
//! IMMEDIATE payload and an RDMA descriptor's fragments are views, not
//! copies.
//!
//! Deliberate differences from Lustre:
//! - the LNet header is decoded here, so a header with an unknown LNet type
//!   fails [`Msg::decode`]. Lustre finds this later in `lnet_parse`, and
//!   the connection is closed with `-EPROTO` either way;
//! - a source NID on LND type 0xff (ANY) is refused, not only
//!   `LNET_NID_ANY` itself, because [`Nid`] keeps no other NID4 of that
//!   type;
//! - the encoders refuse to build what the decoder would refuse: an unknown
//!   version, an RDMA descriptor with 0 or more than 257 fragments, or a
//!   message above 4096 bytes. Lustre's senders never build them either.

use super::hdr::{Hdr, HdrError, HDR_NID4_LEN};
use super::nid::Nid;
use super::socklnd::PROTO_MAGIC;
use super::wire::{self, put};
use core::fmt;

/// `IBLND_MSG_MAGIC` (`LNET_PROTO_IB_MAGIC`).
pub const MSG_MAGIC: u32 = 0x0be9_1b91;
/// `IBLND_MSG_VERSION_1`.
pub const VERSION_1: u16 = 0x11;
/// `IBLND_MSG_VERSION_2`: the current version.
pub const VERSION_2: u16 = 0x12;
/// `IBLND_MSG_VERSION`: the version this side proposes.
pub const VERSION: u16 = VERSION_2;
/// Bytes of the `kib_msg` header; the body starts here.
pub const MSG_HDR_LEN: usize = 48;
/// `IBLND_MSG_SIZE`: the largest message, and the RX buffer size.
pub const MSG_SIZE: usize = 4096;
/// The most payload an IMMEDIATE carries (4096 − 48 − 72).
pub const IMMEDIATE_MAX_PAYLOAD: usize = MSG_SIZE - MSG_HDR_LEN - HDR_NID4_LEN;
/// `IBLND_MAX_RDMA_FRAGS`: the most fragments in an RDMA descriptor.
pub const MAX_RDMA_FRAGS: u32 = 257;
/// Bytes of `kib_connparams`.
pub const CONNPARAMS_LEN: usize = 8;
/// Bytes of a CONNREQ or CONNACK (the RDMA CM private data), 48 + 8.
pub const CONNREQ_LEN: usize = MSG_HDR_LEN + CONNPARAMS_LEN;
/// Bytes of one RDMA fragment (`kib_rdma_frag`, packed).
pub const FRAG_LEN: usize = 12;
/// Bytes of a completion body.
pub const COMPLETION_LEN: usize = 12;
/// Bytes of `kib_rej`.
pub const REJ_LEN: usize = 24;
/// The shortest reject this side reads: magic, version and reason.
pub const REJ_MIN_LEN: usize = 7;
/// The RDMA CM port (`service` parameter) in the TCP port space.
pub const SERVICE_PORT: u16 = 987;

const B: usize = MSG_HDR_LEN;
/// Offset of the descriptor in a PUT_ACK body.
const PUT_ACK_RD: usize = 16;
/// Offset of the descriptor in a GET_REQ body.
const GET_REQ_RD: usize = HDR_NID4_LEN + 8;
/// Bytes of a descriptor before its fragments.
const RD_HDR_LEN: usize = 8;

/// A protocol violation by the peer: the message or connection attempt is
/// refused, counted and logged; nothing else is affected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtoError {
    /// Fewer bytes than the structure needs.
    Short,
    /// Not the o2iblnd magic in either order.
    BadMagic(u32),
    /// `LNET_PROTO_MAGIC`: a peer speaking a newer protocol. The passive
    /// side answers with a FATAL reject, which tells it this side is old.
    ProtoMagic,
    /// A version other than V1 and V2.
    BadVersion(u16),
    /// `ibm_nob` claims more bytes than arrived.
    NobTooLarge {
        /// The `ibm_nob` field.
        nob: u32,
        /// The bytes received.
        got: usize,
    },
    /// A non-zero checksum that does not match the message.
    BadChecksum {
        /// The checksum the sender wrote.
        sent: u32,
        /// The checksum of the bytes received.
        computed: u32,
    },
    /// The source NID is ANY.
    BadSrcNid,
    /// An unknown message type.
    BadType(u8),
    /// `ibm_nob` is smaller than the type (or its descriptor) needs.
    TooShort {
        /// The message type.
        msg_type: MsgType,
        /// The `ibm_nob` field.
        nob: u32,
        /// The bytes the type needs.
        want: usize,
    },
    /// An RDMA descriptor with 0 or more than 257 fragments.
    BadNfrags(u32),
    /// The LNet header inside the message does not decode.
    Hdr(HdrError),
    /// A queue depth above this side's.
    QueueDepth {
        /// The peer's depth.
        got: u16,
        /// The most this side takes.
        max: u16,
    },
    /// More fragments than this side takes.
    TooManyFrags {
        /// The peer's `max_frags`.
        got: u16,
        /// The most this side takes.
        max: u16,
    },
    /// Fewer than 257 fragments, which only an FMR pool can serve.
    FragsNeedFmr(u16),
    /// A `max_msg_size` above 4096.
    MsgSize(u32),
    /// A message of the wrong type for this point of the protocol.
    UnexpectedType(MsgType),
    /// A CONNACK of another version than the CONNREQ.
    VersionMismatch {
        /// The CONNACK's version.
        got: u16,
        /// The CONNREQ's version.
        want: u16,
    },
    /// The message is for another NID or an earlier incarnation of this
    /// side (`-ESTALE`).
    Stale,
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtoError::Short => f.write_str("truncated"),
            ProtoError::BadMagic(m) => write!(f, "bad magic 0x{m:08x}"),
            ProtoError::ProtoMagic => f.write_str("newer LNet protocol magic"),
            ProtoError::BadVersion(v) => write!(f, "bad version 0x{v:x}"),
            ProtoError::NobTooLarge { nob, got } => {
                write!(f, "short message: got {got}, wanted {nob}")
            }
            ProtoError::BadChecksum { sent, computed } => {
                write!(f, "bad checksum 0x{sent:08x} (0x{computed:08x} computed)")
            }
            ProtoError::BadSrcNid => f.write_str("bad source NID"),
            ProtoError::BadType(t) => write!(f, "unknown message type 0x{t:x}"),
            ProtoError::TooShort {
                msg_type,
                nob,
                want,
            } => write!(f, "short {}: {nob}({want})", msg_type.name()),
            ProtoError::BadNfrags(n) => {
                write!(f, "bad nfrags {n}, should be 0 < n <= {MAX_RDMA_FRAGS}")
            }
            ProtoError::Hdr(e) => write!(f, "{e}"),
            ProtoError::QueueDepth { got, max } => {
                write!(f, "queue depth {got} too large (<= {max} wanted)")
            }
            ProtoError::TooManyFrags { got, max } => {
                write!(f, "max frags {got} too large (<= {max} wanted)")
            }
            ProtoError::FragsNeedFmr(n) => {
                write!(f, "max frags {n} below {MAX_RDMA_FRAGS} without FMR pool")
            }
            ProtoError::MsgSize(s) => write!(f, "max msg size {s} too large (<= {MSG_SIZE})"),
            ProtoError::UnexpectedType(t) => write!(f, "unexpected {}", t.name()),
            ProtoError::VersionMismatch { got, want } => {
                write!(f, "version 0x{got:x} (0x{want:x} expected)")
            }
            ProtoError::Stale => f.write_str("stale connection"),
        }
    }
}

impl ProtoError {
    /// The reason `kiblnd_passive_connect` puts in its reject when a
    /// CONNREQ fails this check; `version` is the CONNREQ's. V1 peers know
    /// only FATAL, so they get it for everything.
    pub fn reject_reason(&self, version: u16) -> RejectReason {
        match self {
            ProtoError::Stale => RejectReason::ConnStale,
            ProtoError::QueueDepth { .. } if version == VERSION_2 => RejectReason::MsgQueueSize,
            ProtoError::TooManyFrags { .. } | ProtoError::FragsNeedFmr(_)
                if version == VERSION_2 =>
            {
                RejectReason::RdmaFrags
            }
            _ => RejectReason::Fatal,
        }
    }
}

/// Reads fields in the sender's order (little-endian, or big when flipped).
type Fields<'a> = wire::Reader<'a, ProtoError>;

/// The checksum of a message (`kiblnd_cksum`): `msg` is its `ibm_nob`
/// bytes, and the checksum field (bytes 12..16) counts as zero. Each byte
/// is added after rotating the sum left by 1; a sum of 0 gives 1, since 0
/// means "no checksum".
///
/// Lustre adds each byte as a C `char`, so its sum depends on the kernel
/// it was built for: since Linux 6.2 the kernel is built with
/// `-funsigned-char` and the bytes are added as they are (this function,
/// what Lustre on our 6.12 kernel sends, checked against it in the lab);
/// before, x86's signed `char` sign-extended bytes of 0x80 and more
/// ([`cksum_signed_char`]). We send this one and accept either.
pub fn cksum(msg: &[u8]) -> u32 {
    sum(msg, u32::from)
}

/// [`cksum`] as Lustre built for an x86 kernel before 6.2 computes it:
/// each byte sign-extended, as a signed `char`.
pub fn cksum_signed_char(msg: &[u8]) -> u32 {
    // Sign-extend, then reinterpret: `*c++` of a signed char.
    sum(msg, |c| i32::from(c as i8) as u32)
}

fn sum(msg: &[u8], widen: impl Fn(u8) -> u32) -> u32 {
    let sum = msg.iter().enumerate().fold(0u32, |sum, (i, &c)| {
        let c = if (12..16).contains(&i) { 0 } else { c };
        sum.rotate_left(1).wrapping_add(widen(c))
    });
    if sum == 0 {
        1
    } else {
        sum
    }
}

/// A message type (`IBLND_MSG_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgType {
    /// Connection request: the private data of `rdma_connect`.
    ConnReq,
    /// Connection acknowledgement: the private data of `rdma_accept`.
    ConnAck,
    /// Nothing: returns credits, or keeps the connection alive.
    Noop,
    /// An LNet message with its payload inline.
    Immediate,
    /// A PUT whose payload goes by RDMA: asks the sink for a descriptor.
    PutReq,
    /// The sink cannot take the PUT (sink to source).
    PutNak,
    /// The sink's descriptor for a PUT (sink to source).
    PutAck,
    /// The source finished writing a PUT (source to sink).
    PutDone,
    /// A GET carrying the sink's descriptor.
    GetReq,
    /// The target finished writing a GET's reply (or could not).
    GetDone,
}

impl MsgType {
    /// Every type, in wire-value order.
    pub const ALL: [MsgType; 10] = [
        MsgType::ConnReq,
        MsgType::ConnAck,
        MsgType::Noop,
        MsgType::Immediate,
        MsgType::PutReq,
        MsgType::PutNak,
        MsgType::PutAck,
        MsgType::PutDone,
        MsgType::GetReq,
        MsgType::GetDone,
    ];

    /// The wire value.
    pub fn to_u8(self) -> u8 {
        match self {
            MsgType::ConnReq => 0xc0,
            MsgType::ConnAck => 0xc1,
            MsgType::Noop => 0xd0,
            MsgType::Immediate => 0xd1,
            MsgType::PutReq => 0xd2,
            MsgType::PutNak => 0xd3,
            MsgType::PutAck => 0xd4,
            MsgType::PutDone => 0xd5,
            MsgType::GetReq => 0xd6,
            MsgType::GetDone => 0xd7,
        }
    }

    /// From the wire value.
    pub fn from_u8(v: u8) -> Option<MsgType> {
        MsgType::ALL.into_iter().find(|t| t.to_u8() == v)
    }

    /// The name Lustre logs (`kiblnd_msgtype2str`).
    pub fn name(self) -> &'static str {
        match self {
            MsgType::ConnReq => "CONNREQ",
            MsgType::ConnAck => "CONNACK",
            MsgType::Noop => "NOOP",
            MsgType::Immediate => "IMMEDIATE",
            MsgType::PutReq => "PUT_REQ",
            MsgType::PutNak => "PUT_NAK",
            MsgType::PutAck => "PUT_ACK",
            MsgType::PutDone => "PUT_DONE",
            MsgType::GetReq => "GET_REQ",
            MsgType::GetDone => "GET_DONE",
        }
    }

    /// The fewest bytes a whole message of this type takes, header
    /// included (`kiblnd_msgtype2size`). PUT_ACK and GET_REQ need 12 more
    /// per fragment.
    pub fn min_len(self) -> usize {
        let body = match self {
            MsgType::ConnReq | MsgType::ConnAck => CONNPARAMS_LEN,
            MsgType::Noop => 0,
            MsgType::Immediate => HDR_NID4_LEN,
            MsgType::PutReq => HDR_NID4_LEN + 8,
            MsgType::PutAck => PUT_ACK_RD + RD_HDR_LEN,
            MsgType::GetReq => GET_REQ_RD + RD_HDR_LEN,
            MsgType::PutNak | MsgType::PutDone | MsgType::GetDone => COMPLETION_LEN,
        };
        MSG_HDR_LEN + body
    }
}

/// Connection parameters (`kib_connparams`), in a CONNREQ, a CONNACK and a
/// reject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnParams {
    /// Credits each side starts with (at most `peer_credits`).
    pub queue_depth: u16,
    /// Most fragments in an RDMA descriptor.
    pub max_frags: u16,
    /// Largest message (4096).
    pub max_msg_size: u32,
}

impl ConnParams {
    fn read(f: &Fields<'_>, at: usize) -> Result<ConnParams, ProtoError> {
        Ok(ConnParams {
            queue_depth: f.u16(at)?,
            max_frags: f.u16(at.checked_add(2).ok_or(ProtoError::Short)?)?,
            max_msg_size: f.u32(at.checked_add(4).ok_or(ProtoError::Short)?)?,
        })
    }

    fn write(&self, out: &mut [u8], at: usize) -> Option<()> {
        put(out, at, &self.queue_depth.to_le_bytes())?;
        put(out, at.checked_add(2)?, &self.max_frags.to_le_bytes())?;
        put(out, at.checked_add(4)?, &self.max_msg_size.to_le_bytes())
    }

    /// The passive side's checks on a CONNREQ's parameters (wire.md §6.3
    /// steps 8-10): depth at most `max_depth` (my `peer_credits`), at most
    /// 257 fragments and exactly 257 unless `have_fmr`, messages of at
    /// most 4096 bytes. [`ProtoError::reject_reason`] gives the reject.
    pub fn check_connreq(&self, max_depth: u16, have_fmr: bool) -> Result<(), ProtoError> {
        if self.queue_depth > max_depth {
            return Err(ProtoError::QueueDepth {
                got: self.queue_depth,
                max: max_depth,
            });
        }
        let max = MAX_RDMA_FRAGS as u16;
        if self.max_frags > max {
            return Err(ProtoError::TooManyFrags {
                got: self.max_frags,
                max,
            });
        }
        if self.max_frags < max && !have_fmr {
            return Err(ProtoError::FragsNeedFmr(self.max_frags));
        }
        if self.max_msg_size > MSG_SIZE as u32 {
            return Err(ProtoError::MsgSize(self.max_msg_size));
        }
        Ok(())
    }
}

/// A completion (PUT_NAK, PUT_DONE, GET_DONE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The receiver's cookie, echoed (opaque).
    pub cookie: u64,
    /// Below 0: an errno (e.g. `-ENODATA` for a GET that matched nothing);
    /// else the bytes transferred.
    pub status: i32,
}

/// One RDMA fragment (`kib_rdma_frag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frag {
    /// Bytes in the fragment.
    pub nob: u32,
    /// Its address for the remote key.
    pub addr: u64,
}

#[derive(Clone, Copy, Debug)]
enum Frags<'a> {
    /// Received: `nfrags × 12` bytes in the sender's order.
    Wire { raw: &'a [u8], flip: bool },
    /// To send.
    Slice(&'a [Frag]),
}

/// An RDMA descriptor (`kib_rdma_desc`): a memory key and the buffer's
/// fragments. A received one is a view over the message.
#[derive(Clone, Copy, Debug)]
pub struct RdmaDesc<'a> {
    /// The local or remote key (`rd_key`).
    pub key: u32,
    frags: Frags<'a>,
}

impl<'a> RdmaDesc<'a> {
    /// A descriptor to send.
    pub fn new(key: u32, frags: &'a [Frag]) -> RdmaDesc<'a> {
        RdmaDesc {
            key,
            frags: Frags::Slice(frags),
        }
    }

    /// The number of fragments.
    pub fn nfrags(&self) -> usize {
        match self.frags {
            Frags::Wire { raw, .. } => raw.len() / FRAG_LEN,
            Frags::Slice(s) => s.len(),
        }
    }

    /// Fragment `i`.
    pub fn frag(&self, i: usize) -> Option<Frag> {
        match self.frags {
            Frags::Wire { raw, flip } => {
                let at = i.checked_mul(FRAG_LEN)?;
                let f = Fields::new(
                    raw.get(at..at.checked_add(FRAG_LEN)?)?,
                    flip,
                    ProtoError::Short,
                );
                Some(Frag {
                    nob: f.u32(0).ok()?,
                    addr: f.u64(4).ok()?,
                })
            }
            Frags::Slice(s) => s.get(i).copied(),
        }
    }

    /// The fragments in order.
    pub fn frags(&self) -> impl Iterator<Item = Frag> + 'a {
        let d = *self;
        (0..d.nfrags()).map_while(move |i| d.frag(i))
    }

    /// The bytes the fragments cover (`kiblnd_rd_size`).
    pub fn total_nob(&self) -> u64 {
        self.frags()
            .fold(0u64, |n, f| n.saturating_add(u64::from(f.nob)))
    }

    /// Bytes on the wire: 8 + 12 per fragment.
    pub fn wire_len(&self) -> Option<usize> {
        FRAG_LEN.checked_mul(self.nfrags())?.checked_add(RD_HDR_LEN)
    }

    fn read(
        f: &Fields<'a>,
        at: usize,
        msg_type: MsgType,
        nob: u32,
    ) -> Result<RdmaDesc<'a>, ProtoError> {
        let key = f.u32(at)?;
        let n = f.u32(at.checked_add(4).ok_or(ProtoError::Short)?)?;
        if n == 0 || n > MAX_RDMA_FRAGS {
            return Err(ProtoError::BadNfrags(n));
        }
        let from = at.checked_add(RD_HDR_LEN).ok_or(ProtoError::Short)?;
        let end = (n as usize)
            .checked_mul(FRAG_LEN)
            .and_then(|l| l.checked_add(from))
            .ok_or(ProtoError::BadNfrags(n))?;
        if (nob as usize) < end {
            return Err(ProtoError::TooShort {
                msg_type,
                nob,
                want: end,
            });
        }
        Ok(RdmaDesc {
            key,
            frags: Frags::Wire {
                raw: f.slice(from, end)?,
                flip: f.flip(),
            },
        })
    }

    fn write(&self, out: &mut [u8], at: usize) -> Option<()> {
        let n = self.nfrags();
        if n == 0 || n > MAX_RDMA_FRAGS as usize {
            return None;
        }
        put(out, at, &self.key.to_le_bytes())?;
        put(
            out,
            at.checked_add(4)?,
            &u32::try_from(n).ok()?.to_le_bytes(),
        )?;
        let mut p = at.checked_add(RD_HDR_LEN)?;
        for f in self.frags() {
            put(out, p, &f.nob.to_le_bytes())?;
            put(out, p.checked_add(4)?, &f.addr.to_le_bytes())?;
            p = p.checked_add(FRAG_LEN)?;
        }
        Some(())
    }
}

/// Why a local buffer cannot be written into a peer's RDMA descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdmaPlanError {
    /// The peer's fragments hold fewer bytes than are to be written.
    SinkTooSmall {
        /// Bytes to write.
        nob: u32,
        /// Bytes the fragments hold.
        room: u64,
    },
    /// More writes than one completion may carry.
    TooManyWrites {
        /// Writes needed.
        need: usize,
        /// At most this many.
        max: usize,
    },
}

impl core::fmt::Display for RdmaPlanError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RdmaPlanError::SinkTooSmall { nob, room } => {
                write!(f, "{nob} bytes for a sink of {room}")
            }
            RdmaPlanError::TooManyWrites { need, max } => {
                write!(f, "{need} RDMA writes needed, at most {max}")
            }
        }
    }
}

/// One RDMA write: `len` bytes at local offset `loff` to the peer's
/// `raddr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdmaWrite {
    /// The peer's address.
    pub raddr: u64,
    /// Offset in the local (registered, contiguous) buffer.
    pub loff: u32,
    /// Bytes.
    pub len: u32,
}

impl<'a> RdmaDesc<'a> {
    /// The writes that move the first `nob` bytes of a contiguous local
    /// registration into these fragments, in order (`kiblnd_init_rdma`:
    /// the sink's fragments are filled one after another; a PUT writes
    /// what the sink offered, a GET's REPLY what the source holds). Empty
    /// fragments take no write.
    pub fn writes(&self, nob: u32, max: usize) -> Result<RdmaWrites<'a>, RdmaPlanError> {
        let room = self.total_nob();
        if u64::from(nob) > room {
            return Err(RdmaPlanError::SinkTooSmall { nob, room });
        }
        let plan = RdmaWrites {
            rd: *self,
            next: 0,
            done: 0,
            nob,
        };
        let need = plan.clone().count();
        if need > max {
            return Err(RdmaPlanError::TooManyWrites { need, max });
        }
        Ok(plan)
    }
}

/// The writes of [`RdmaDesc::writes`].
#[derive(Clone, Debug)]
pub struct RdmaWrites<'a> {
    rd: RdmaDesc<'a>,
    next: usize,
    done: u32,
    nob: u32,
}

impl Iterator for RdmaWrites<'_> {
    type Item = RdmaWrite;

    fn next(&mut self) -> Option<RdmaWrite> {
        while self.done < self.nob {
            let f = self.rd.frag(self.next)?;
            self.next += 1;
            if f.nob == 0 {
                continue;
            }
            let len = f.nob.min(self.nob - self.done);
            let w = RdmaWrite {
                raddr: f.addr,
                loff: self.done,
                len,
            };
            self.done += len;
            return Some(w);
        }
        None
    }
}

impl PartialEq for RdmaDesc<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.nfrags() == other.nfrags() && self.frags().eq(other.frags())
    }
}

impl Eq for RdmaDesc<'_> {}

/// A message type and its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgBody<'a> {
    /// Connection request.
    ConnReq(ConnParams),
    /// Connection acknowledgement.
    ConnAck(ConnParams),
    /// Credits and keepalive only.
    Noop,
    /// An LNet message with its payload inline. The receiver checks that
    /// the header's `payload_length` fits `payload` (`kiblnd_recv`).
    Immediate {
        /// The LNet header.
        hdr: Hdr,
        /// Every byte after the header up to `ibm_nob`.
        payload: &'a [u8],
    },
    /// A PUT whose payload will be written by RDMA.
    PutReq {
        /// The LNet header.
        hdr: Hdr,
        /// The source's cookie, echoed in PUT_ACK or PUT_NAK.
        cookie: u64,
    },
    /// The sink cannot take the PUT.
    PutNak(Completion),
    /// The sink's buffer for a PUT.
    PutAck {
        /// The PUT_REQ's cookie, echoed.
        src_cookie: u64,
        /// The sink's cookie, echoed in PUT_DONE.
        dst_cookie: u64,
        /// The sink buffer.
        rd: RdmaDesc<'a>,
    },
    /// The source wrote the PUT's payload.
    PutDone(Completion),
    /// A GET whose reply will be written by RDMA.
    GetReq {
        /// The LNet header.
        hdr: Hdr,
        /// The sink's cookie, echoed in GET_DONE.
        cookie: u64,
        /// The sink buffer.
        rd: RdmaDesc<'a>,
    },
    /// The target wrote the reply, or could not.
    GetDone(Completion),
}

impl MsgBody<'_> {
    /// The message type.
    pub fn msg_type(&self) -> MsgType {
        match self {
            MsgBody::ConnReq(_) => MsgType::ConnReq,
            MsgBody::ConnAck(_) => MsgType::ConnAck,
            MsgBody::Noop => MsgType::Noop,
            MsgBody::Immediate { .. } => MsgType::Immediate,
            MsgBody::PutReq { .. } => MsgType::PutReq,
            MsgBody::PutNak(_) => MsgType::PutNak,
            MsgBody::PutAck { .. } => MsgType::PutAck,
            MsgBody::PutDone(_) => MsgType::PutDone,
            MsgBody::GetReq { .. } => MsgType::GetReq,
            MsgBody::GetDone(_) => MsgType::GetDone,
        }
    }
}

/// The start of a message or of CONNREQ private data: magic and version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgHead {
    /// V1 or V2.
    pub version: u16,
    /// The sender's byte order is not ours.
    pub flip: bool,
}

impl MsgHead {
    /// From the first 6 bytes: the passive side's first checks (wire.md
    /// §6.3 steps 1-3) and the start of `kiblnd_unpack_msg`.
    pub fn parse(b: &[u8]) -> Result<MsgHead, ProtoError> {
        let f = Fields::new(
            b.get(..6).ok_or(ProtoError::Short)?,
            false,
            ProtoError::Short,
        );
        let m = f.u32(0)?;
        let flip = if m == MSG_MAGIC {
            false
        } else if m == MSG_MAGIC.swap_bytes() {
            true
        } else if m == PROTO_MAGIC || m == PROTO_MAGIC.swap_bytes() {
            return Err(ProtoError::ProtoMagic);
        } else {
            return Err(ProtoError::BadMagic(m));
        };
        let version = Fields::new(f.bytes(), flip, ProtoError::Short).u16(4)?;
        if version != VERSION_1 && version != VERSION_2 {
            return Err(ProtoError::BadVersion(version));
        }
        Ok(MsgHead { version, flip })
    }
}

/// An o2iblnd message (`kib_msg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg<'a> {
    /// V1 or V2.
    pub version: u16,
    /// Credits returned to the receiver.
    pub credits: u8,
    /// On decode: the sender wrote a checksum (it matched). On encode:
    /// write one (the `cksum` parameter).
    pub cksum: bool,
    /// The sender's NI.
    pub src_nid: Nid,
    /// The sender's incarnation (µs at net start-up).
    pub src_stamp: u64,
    /// The NI it is for.
    pub dst_nid: Nid,
    /// The receiver's incarnation the sender knows, or 0.
    pub dst_stamp: u64,
    /// Type and body.
    pub body: MsgBody<'a>,
}

impl<'a> Msg<'a> {
    /// The message type.
    pub fn msg_type(&self) -> MsgType {
        self.body.msg_type()
    }

    /// Bytes the message takes (`ibm_nob`).
    pub fn wire_len(&self) -> Option<usize> {
        let body = match &self.body {
            MsgBody::ConnReq(_) | MsgBody::ConnAck(_) => CONNPARAMS_LEN,
            MsgBody::Noop => 0,
            MsgBody::Immediate { payload, .. } => HDR_NID4_LEN.checked_add(payload.len())?,
            MsgBody::PutReq { .. } => HDR_NID4_LEN + 8,
            MsgBody::PutNak(_) | MsgBody::PutDone(_) | MsgBody::GetDone(_) => COMPLETION_LEN,
            MsgBody::PutAck { rd, .. } => PUT_ACK_RD.checked_add(rd.wire_len()?)?,
            MsgBody::GetReq { rd, .. } => GET_REQ_RD.checked_add(rd.wire_len()?)?,
        };
        MSG_HDR_LEN.checked_add(body)
    }

    /// Encodes the message (little-endian) into `out`; returns the bytes
    /// used, or `None` if `out` is too small, the version is unknown, a
    /// NID is not a NID4, a descriptor has 0 or more than 257 fragments,
    /// or the message would exceed 4096 bytes.
    pub fn encode(&self, out: &mut [u8]) -> Option<usize> {
        if self.version != VERSION_1 && self.version != VERSION_2 {
            return None;
        }
        let nob = self.wire_len()?;
        if nob > MSG_SIZE {
            return None;
        }
        let out = out.get_mut(..nob)?;
        out.fill(0);
        put(out, 0, &MSG_MAGIC.to_le_bytes())?;
        put(out, 4, &self.version.to_le_bytes())?;
        put(out, 6, &[self.msg_type().to_u8(), self.credits])?;
        put(out, 8, &u32::try_from(nob).ok()?.to_le_bytes())?;
        put(out, 16, &self.src_nid.to_nid4()?.to_le_bytes())?;
        put(out, 24, &self.src_stamp.to_le_bytes())?;
        put(out, 32, &self.dst_nid.to_nid4()?.to_le_bytes())?;
        put(out, 40, &self.dst_stamp.to_le_bytes())?;
        let completion = |out: &mut [u8], c: &Completion| {
            put(out, B, &c.cookie.to_le_bytes())?;
            put(out, B + 8, &c.status.to_le_bytes())
        };
        match &self.body {
            MsgBody::ConnReq(cp) | MsgBody::ConnAck(cp) => cp.write(out, B)?,
            MsgBody::Noop => {}
            MsgBody::Immediate { hdr, payload } => {
                hdr.encode_nid4(out.get_mut(B..)?).ok()?;
                put(out, B + HDR_NID4_LEN, payload)?;
            }
            MsgBody::PutReq { hdr, cookie } => {
                hdr.encode_nid4(out.get_mut(B..)?).ok()?;
                put(out, B + HDR_NID4_LEN, &cookie.to_le_bytes())?;
            }
            MsgBody::PutNak(c) | MsgBody::PutDone(c) | MsgBody::GetDone(c) => completion(out, c)?,
            MsgBody::PutAck {
                src_cookie,
                dst_cookie,
                rd,
            } => {
                put(out, B, &src_cookie.to_le_bytes())?;
                put(out, B + 8, &dst_cookie.to_le_bytes())?;
                rd.write(out, B + PUT_ACK_RD)?;
            }
            MsgBody::GetReq { hdr, cookie, rd } => {
                hdr.encode_nid4(out.get_mut(B..)?).ok()?;
                put(out, B + HDR_NID4_LEN, &cookie.to_le_bytes())?;
                rd.write(out, B + GET_REQ_RD)?;
            }
        }
        if self.cksum {
            let c = cksum(out);
            put(out, 12, &c.to_le_bytes())?;
        }
        Some(nob)
    }

    /// Decodes and validates a received message (`kiblnd_unpack_msg`):
    /// magic and version, at least a header, `ibm_nob` within the bytes
    /// received, the checksum if non-zero (before anything is swapped), a
    /// source NID other than ANY, a known type, `ibm_nob` at least the
    /// type's size, and for PUT_ACK and GET_REQ 1 to 257 fragments that
    /// fit `ibm_nob`. Bytes past `ibm_nob` are ignored. The LNet header is
    /// decoded but not checked (`Hdr::check` is `lnet_parse`'s job).
    pub fn decode(b: &'a [u8]) -> Result<Msg<'a>, ProtoError> {
        let head = MsgHead::parse(b)?;
        if b.len() < MSG_HDR_LEN {
            return Err(ProtoError::Short);
        }
        let f = Fields::new(b, head.flip, ProtoError::Short);
        let nob = f.u32(8)?;
        let msg = usize::try_from(nob)
            .ok()
            .and_then(|n| b.get(..n))
            .ok_or(ProtoError::NobTooLarge { nob, got: b.len() })?;
        let sent = f.u32(12)?;
        if sent != 0 {
            let computed = cksum(msg);
            if computed != sent && cksum_signed_char(msg) != sent {
                return Err(ProtoError::BadChecksum { sent, computed });
            }
        }
        let src_nid = Nid::from_nid4(f.u64(16)?);
        if src_nid.is_any() {
            return Err(ProtoError::BadSrcNid);
        }
        let t = f.u8(6)?;
        let msg_type = MsgType::from_u8(t).ok_or(ProtoError::BadType(t))?;
        let want = msg_type.min_len();
        if msg.len() < want {
            return Err(ProtoError::TooShort {
                msg_type,
                nob,
                want,
            });
        }
        let m = Fields::new(msg, head.flip, ProtoError::Short);
        let hdr = || Hdr::decode_nid4(m.slice(B, B + HDR_NID4_LEN)?).map_err(ProtoError::Hdr);
        let completion = || -> Result<Completion, ProtoError> {
            Ok(Completion {
                cookie: m.raw_u64(B)?,
                status: m.u32(B + 8)? as i32,
            })
        };
        let body = match msg_type {
            MsgType::ConnReq => MsgBody::ConnReq(ConnParams::read(&m, B)?),
            MsgType::ConnAck => MsgBody::ConnAck(ConnParams::read(&m, B)?),
            MsgType::Noop => MsgBody::Noop,
            MsgType::Immediate => MsgBody::Immediate {
                hdr: hdr()?,
                payload: m.slice(B + HDR_NID4_LEN, msg.len())?,
            },
            MsgType::PutReq => MsgBody::PutReq {
                hdr: hdr()?,
                cookie: m.raw_u64(B + HDR_NID4_LEN)?,
            },
            MsgType::PutNak => MsgBody::PutNak(completion()?),
            MsgType::PutAck => MsgBody::PutAck {
                src_cookie: m.raw_u64(B)?,
                dst_cookie: m.raw_u64(B + 8)?,
                rd: RdmaDesc::read(&m, B + PUT_ACK_RD, msg_type, nob)?,
            },
            MsgType::PutDone => MsgBody::PutDone(completion()?),
            MsgType::GetReq => {
                let rd = RdmaDesc::read(&m, B + GET_REQ_RD, msg_type, nob)?;
                MsgBody::GetReq {
                    hdr: hdr()?,
                    cookie: m.raw_u64(B + HDR_NID4_LEN)?,
                    rd,
                }
            }
            MsgType::GetDone => MsgBody::GetDone(completion()?),
        };
        Ok(Msg {
            version: head.version,
            credits: f.u8(7)?,
            cksum: sent != 0,
            src_nid,
            src_stamp: f.u64(24)?,
            dst_nid: Nid::from_nid4(f.u64(32)?),
            dst_stamp: f.u64(40)?,
            body,
        })
    }

    /// The active side's checks on the CONNACK in `rdma_accept`'s private
    /// data (`kiblnd_check_connreply`): a CONNACK, of the CONNREQ's
    /// `version`, asking no more depth or fragments than `mine` (the
    /// CONNREQ's parameters), at most 4096-byte messages, and for this
    /// side's `nid` and `incarnation`. Returns the parameters to adopt.
    pub fn check_connack(
        &self,
        version: u16,
        mine: &ConnParams,
        nid: Nid,
        incarnation: u64,
    ) -> Result<ConnParams, ProtoError> {
        let MsgBody::ConnAck(cp) = self.body else {
            return Err(ProtoError::UnexpectedType(self.msg_type()));
        };
        if self.version != version {
            return Err(ProtoError::VersionMismatch {
                got: self.version,
                want: version,
            });
        }
        if cp.queue_depth > mine.queue_depth {
            return Err(ProtoError::QueueDepth {
                got: cp.queue_depth,
                max: mine.queue_depth,
            });
        }
        if cp.max_frags > mine.max_frags {
            return Err(ProtoError::TooManyFrags {
                got: cp.max_frags,
                max: mine.max_frags,
            });
        }
        if cp.max_msg_size > MSG_SIZE as u32 {
            return Err(ProtoError::MsgSize(cp.max_msg_size));
        }
        if self.dst_nid != nid || self.dst_stamp != incarnation {
            return Err(ProtoError::Stale);
        }
        Ok(cp)
    }
}

/// Why a connection request was rejected (`IBLND_REJECT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// Lost a connection race: reconnect.
    ConnRace,
    /// Out of resources: give up.
    NoResources,
    /// Anything else: give up (from a V1 peer: see [`Rej::effective_why`]).
    Fatal,
    /// Incompatible version: reconnect with the peer's.
    ConnUncompat,
    /// Stale incarnation: reconnect, adopting the reported one.
    ConnStale,
    /// Fragment count mismatch: adopt a smaller `max_frags` or give up.
    RdmaFrags,
    /// Queue depth too large: adopt a smaller depth or give up.
    MsgQueueSize,
    /// Invalid service id: give up.
    InvalidSrvId,
    /// The NI is not ready yet: give up.
    Early,
    /// A value this side does not know: give up.
    Unknown(u8),
}

impl RejectReason {
    /// The wire value.
    pub fn to_u8(self) -> u8 {
        match self {
            RejectReason::ConnRace => 1,
            RejectReason::NoResources => 2,
            RejectReason::Fatal => 3,
            RejectReason::ConnUncompat => 4,
            RejectReason::ConnStale => 5,
            RejectReason::RdmaFrags => 6,
            RejectReason::MsgQueueSize => 7,
            RejectReason::InvalidSrvId => 8,
            RejectReason::Early => 9,
            RejectReason::Unknown(v) => v,
        }
    }

    /// From the wire value.
    pub fn from_u8(v: u8) -> RejectReason {
        match v {
            1 => RejectReason::ConnRace,
            2 => RejectReason::NoResources,
            3 => RejectReason::Fatal,
            4 => RejectReason::ConnUncompat,
            5 => RejectReason::ConnStale,
            6 => RejectReason::RdmaFrags,
            7 => RejectReason::MsgQueueSize,
            8 => RejectReason::InvalidSrvId,
            9 => RejectReason::Early,
            v => RejectReason::Unknown(v),
        }
    }
}

/// The rejecter's incarnation and limits in a full V2 reject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RejParams {
    /// The rejecter's incarnation (`ibr_incarnation`).
    pub incarnation: u64,
    /// Its queue depth and max frags, so the peer can renegotiate.
    pub cp: ConnParams,
}

/// The private data of a reject (`kib_rej`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rej {
    /// The rejecter's version (the request's once it was read).
    pub version: u16,
    /// The reason.
    pub why: RejectReason,
    /// Incarnation and parameters: read only from a full 24-byte reject of
    /// a version above V1, as `kiblnd_rejected` does; zero when encoded
    /// as `None`.
    pub params: Option<RejParams>,
}

impl Rej {
    /// Encodes the 24-byte reject (little-endian) into `out`; returns the
    /// bytes used.
    pub fn encode(&self, out: &mut [u8]) -> Option<usize> {
        let out = out.get_mut(..REJ_LEN)?;
        out.fill(0);
        put(out, 0, &MSG_MAGIC.to_le_bytes())?;
        put(out, 4, &self.version.to_le_bytes())?;
        put(out, 6, &[self.why.to_u8(), 0])?;
        if let Some(p) = &self.params {
            put(out, 8, &p.incarnation.to_le_bytes())?;
            p.cp.write(out, 16)?;
        }
        Some(REJ_LEN)
    }

    /// Reads a consumer-defined reject as `kiblnd_rejected` does: at least
    /// magic, version and reason; the o2iblnd magic or `LNET_PROTO_MAGIC`
    /// in either order; V1 or V2. Anything else means the peer gave a
    /// fatal error.
    pub fn decode(b: &[u8]) -> Result<Rej, ProtoError> {
        if b.len() < REJ_MIN_LEN {
            return Err(ProtoError::Short);
        }
        let m = Fields::new(b, false, ProtoError::Short).u32(0)?;
        let flip = m == MSG_MAGIC.swap_bytes() || m == PROTO_MAGIC.swap_bytes();
        let magic = if flip { m.swap_bytes() } else { m };
        if magic != MSG_MAGIC && magic != PROTO_MAGIC {
            return Err(ProtoError::BadMagic(m));
        }
        let f = Fields::new(b, flip, ProtoError::Short);
        let version = f.u16(4)?;
        if version != VERSION_1 && version != VERSION_2 {
            return Err(ProtoError::BadVersion(version));
        }
        let params = if b.len() >= REJ_LEN && version > VERSION_1 {
            Some(RejParams {
                incarnation: f.u64(8)?,
                cp: ConnParams::read(&f, 16)?,
            })
        } else {
            None
        };
        Ok(Rej {
            version,
            why: RejectReason::from_u8(f.u8(6)?),
            params,
        })
    }

    /// The reason to act on, for a connection attempt of `conn_version`: a
    /// V1 peer's FATAL means it does not speak my newer version, so it is
    /// taken as CONN_UNCOMPAT (reconnect with V1).
    pub fn effective_why(&self, conn_version: u16) -> RejectReason {
        if self.why == RejectReason::Fatal && self.version == VERSION_1 && conn_version != VERSION_1
        {
            RejectReason::ConnUncompat
        } else {
            self.why
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::hdr::{MsgBody as LBody, WireHandle};
    use super::super::nid::{lnd, Net};
    use super::*;
    use proptest::prelude::*;
    extern crate std;
    use std::vec::Vec;

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    fn lhdr(len: u32) -> Hdr {
        Hdr {
            dest_nid: nid("192.168.1.2@o2ib"),
            src_nid: nid("192.168.1.1@o2ib"),
            dest_pid: 12345,
            src_pid: 12345,
            payload_length: len,
            msg: LBody::Put {
                ack_wmd: WireHandle::NONE,
                match_bits: 0x0102_0304_0506_0708,
                hdr_data: 7,
                ptl_index: 4,
                offset: 0,
            },
        }
    }

    fn msg(body: MsgBody<'_>) -> Msg<'_> {
        Msg {
            version: VERSION_2,
            credits: 3,
            cksum: false,
            src_nid: nid("192.168.1.1@o2ib"),
            src_stamp: 0x1122_3344_5566_7788,
            dst_nid: nid("192.168.1.2@o2ib"),
            dst_stamp: 0x99aa_bbcc_ddee_ff00,
            body,
        }
    }

    const CP: ConnParams = ConnParams {
        queue_depth: 8,
        max_frags: 257,
        max_msg_size: 4096,
    };

    fn enc(m: &Msg<'_>) -> Vec<u8> {
        let mut b = [0u8; MSG_SIZE];
        let n = m.encode(&mut b).unwrap();
        assert_eq!(Some(n), m.wire_len());
        b[..n].to_vec()
    }

    fn le_u16(b: &[u8], at: usize) -> u16 {
        u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
    }
    fn le_u32(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }
    fn le_u64(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }

    #[test]
    fn header_layout() {
        let b = enc(&msg(MsgBody::Noop));
        assert_eq!(b.len(), 48);
        assert_eq!(&b[0..4], &[0x91, 0x1b, 0xe9, 0x0b]);
        assert_eq!(le_u16(&b, 4), 0x12);
        assert_eq!(b[6], 0xd0);
        assert_eq!(b[7], 3);
        assert_eq!(le_u32(&b, 8), 48);
        assert_eq!(le_u32(&b, 12), 0);
        assert_eq!(le_u64(&b, 16), 0x0005_0000_c0a8_0101);
        assert_eq!(le_u64(&b, 24), 0x1122_3344_5566_7788);
        assert_eq!(le_u64(&b, 32), 0x0005_0000_c0a8_0102);
        assert_eq!(le_u64(&b, 40), 0x99aa_bbcc_ddee_ff00);
        assert_eq!(Msg::decode(&b), Ok(msg(MsgBody::Noop)));
        assert_eq!(
            MsgHead::parse(&b),
            Ok(MsgHead {
                version: VERSION_2,
                flip: false
            })
        );
    }

    #[test]
    fn connparams_layout() {
        for (body, t) in [(MsgBody::ConnReq(CP), 0xc0), (MsgBody::ConnAck(CP), 0xc1)] {
            let b = enc(&msg(body));
            assert_eq!(b.len(), CONNREQ_LEN);
            assert_eq!(b.len(), 56);
            assert_eq!(b[6], t);
            assert_eq!(le_u32(&b, 8), 56);
            assert_eq!(le_u16(&b, 48), 8);
            assert_eq!(le_u16(&b, 50), 257);
            assert_eq!(le_u32(&b, 52), 4096);
            assert_eq!(Msg::decode(&b), Ok(msg(body)));
        }
    }

    #[test]
    fn immediate_layout() {
        let payload = [0x5au8; 100];
        let m = msg(MsgBody::Immediate {
            hdr: lhdr(100),
            payload: &payload,
        });
        let b = enc(&m);
        assert_eq!(b.len(), 48 + 72 + 100);
        assert_eq!(b[6], 0xd1);
        assert_eq!(le_u32(&b, 8), 220);
        let mut h = [0u8; 72];
        lhdr(100).encode_nid4(&mut h).unwrap();
        assert_eq!(&b[48..120], &h);
        assert_eq!(&b[120..], &payload);
        assert_eq!(Msg::decode(&b), Ok(m));
        // A header-only IMMEDIATE (a GET) is 120 bytes.
        let get = msg(MsgBody::Immediate {
            hdr: lhdr(0),
            payload: &[],
        });
        assert_eq!(get.wire_len(), Some(120));
        assert_eq!(MsgType::Immediate.min_len(), 120);
        // The largest payload fits 4096 exactly; one more byte does not.
        let big = [0u8; IMMEDIATE_MAX_PAYLOAD + 1];
        assert_eq!(IMMEDIATE_MAX_PAYLOAD, 3976);
        let full = msg(MsgBody::Immediate {
            hdr: lhdr(3976),
            payload: &big[..3976],
        });
        assert_eq!(enc(&full).len(), 4096);
        let over = msg(MsgBody::Immediate {
            hdr: lhdr(3977),
            payload: &big,
        });
        assert_eq!(over.encode(&mut [0u8; 8192]), None);
    }

    #[test]
    fn put_req_layout() {
        let m = msg(MsgBody::PutReq {
            hdr: lhdr(1 << 20),
            cookie: 0xc001_c0de_0000_0001,
        });
        let b = enc(&m);
        assert_eq!(b.len(), 128);
        assert_eq!(b[6], 0xd2);
        assert_eq!(le_u32(&b, 28 + 48), 1 << 20);
        assert_eq!(le_u64(&b, 120), 0xc001_c0de_0000_0001);
        assert_eq!(Msg::decode(&b), Ok(m));
    }

    #[test]
    fn put_ack_layout() {
        let frags = [
            Frag {
                nob: 4096,
                addr: 0x1000_2000_3000_4000,
            },
            Frag {
                nob: 512,
                addr: 0xffff_8800_0000_0000,
            },
        ];
        let m = msg(MsgBody::PutAck {
            src_cookie: 0x1111,
            dst_cookie: 0x2222,
            rd: RdmaDesc::new(0xabcd_ef01, &frags),
        });
        let b = enc(&m);
        assert_eq!(b.len(), 48 + 24 + 24);
        assert_eq!(b[6], 0xd4);
        assert_eq!(le_u32(&b, 8), 96);
        assert_eq!(le_u64(&b, 48), 0x1111);
        assert_eq!(le_u64(&b, 56), 0x2222);
        assert_eq!(le_u32(&b, 64), 0xabcd_ef01);
        assert_eq!(le_u32(&b, 68), 2);
        assert_eq!(le_u32(&b, 72), 4096);
        assert_eq!(le_u64(&b, 76), 0x1000_2000_3000_4000);
        assert_eq!(le_u32(&b, 84), 512);
        assert_eq!(le_u64(&b, 88), 0xffff_8800_0000_0000);
        let d = Msg::decode(&b).unwrap();
        assert_eq!(d, m);
        let MsgBody::PutAck { rd, .. } = d.body else {
            panic!()
        };
        assert_eq!(rd.nfrags(), 2);
        assert_eq!(rd.frag(1), Some(frags[1]));
        assert_eq!(rd.frag(2), None);
        assert_eq!(rd.total_nob(), 4608);
        assert_eq!(rd.frags().collect::<Vec<_>>(), frags);
        assert_eq!(MsgType::PutAck.min_len(), 72);
    }

    #[test]
    fn get_req_layout() {
        let frags = [Frag {
            nob: 272,
            addr: 0xdead_0000_beef,
        }];
        let h = Hdr {
            payload_length: 0,
            msg: LBody::Get {
                return_wmd: WireHandle {
                    interface_cookie: 1,
                    object_cookie: 2,
                },
                match_bits: 0x8000_0000_0000_0000,
                ptl_index: 0,
                src_offset: 0,
                sink_length: 272,
            },
            ..lhdr(0)
        };
        let m = msg(MsgBody::GetReq {
            hdr: h,
            cookie: 0x3333,
            rd: RdmaDesc::new(77, &frags),
        });
        let b = enc(&m);
        assert_eq!(b.len(), 48 + 88 + 12);
        assert_eq!(b[6], 0xd6);
        assert_eq!(le_u32(&b, 48 + 24), 2);
        assert_eq!(le_u64(&b, 120), 0x3333);
        assert_eq!(le_u32(&b, 128), 77);
        assert_eq!(le_u32(&b, 132), 1);
        assert_eq!(le_u32(&b, 136), 272);
        assert_eq!(le_u64(&b, 140), 0xdead_0000_beef);
        assert_eq!(Msg::decode(&b), Ok(m));
        assert_eq!(MsgType::GetReq.min_len(), 136);
    }

    #[test]
    fn completion_layout() {
        let c = Completion {
            cookie: 0x4444_5555,
            status: -61, // -ENODATA
        };
        for (body, t) in [
            (MsgBody::PutNak(c), 0xd3),
            (MsgBody::PutDone(c), 0xd5),
            (MsgBody::GetDone(c), 0xd7),
        ] {
            let b = enc(&msg(body));
            assert_eq!(b.len(), 60);
            assert_eq!(b[6], t);
            assert_eq!(le_u64(&b, 48), 0x4444_5555);
            assert_eq!(&b[56..60], &(-61i32).to_le_bytes());
            assert_eq!(Msg::decode(&b), Ok(msg(body)));
            assert_eq!(MsgType::from_u8(t).unwrap().min_len(), 60);
        }
    }

    #[test]
    fn msg_types() {
        let names = [
            "CONNREQ",
            "CONNACK",
            "NOOP",
            "IMMEDIATE",
            "PUT_REQ",
            "PUT_NAK",
            "PUT_ACK",
            "PUT_DONE",
            "GET_REQ",
            "GET_DONE",
        ];
        let values = [0xc0, 0xc1, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7];
        let sizes = [56, 56, 48, 120, 128, 60, 72, 60, 136, 60];
        for (i, t) in MsgType::ALL.into_iter().enumerate() {
            assert_eq!(t.name(), names[i]);
            assert_eq!(t.to_u8(), values[i]);
            assert_eq!(MsgType::from_u8(values[i]), Some(t));
            assert_eq!(t.min_len(), sizes[i]);
        }
        assert_eq!(MsgType::from_u8(0xd8), None);
    }

    #[test]
    fn checksum() {
        assert_eq!(cksum(&[1, 2]), 4);
        // Bytes >= 0x80 are added as they are (unsigned char, Linux >=
        // 6.2), or sign-extended (signed char on x86 before).
        assert_eq!(cksum(&[0x80]), 0x80);
        assert_eq!(cksum(&[0xff, 0x01]), 0x1ff);
        assert_eq!(cksum_signed_char(&[0x80]), 0xffff_ff80);
        assert_eq!(cksum_signed_char(&[0xff]), 0xffff_ffff);
        assert_eq!(cksum(&[1, 0x80]), cksum_signed_char(&[1, 0x7f]) + 1);
        // A zero sum becomes 1.
        assert_eq!(cksum_signed_char(&[0xff, 0x01]), 1);
        assert_eq!(cksum(&[]), 1);
        assert_eq!(cksum_signed_char(&[]), 1);
        // The checksum field counts as zero.
        let mut b = [0u8; 16];
        b[0] = 9;
        let c = cksum(&b);
        b[12..16].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(cksum(&b), c);

        let m = Msg {
            cksum: true,
            ..msg(MsgBody::ConnReq(CP))
        };
        let b = enc(&m);
        let sent = le_u32(&b, 12);
        assert_ne!(sent, 0);
        assert_eq!(sent, cksum(&b));
        assert_eq!(Msg::decode(&b), Ok(m));
        let mut bad = b.clone();
        bad[50] ^= 1;
        assert!(matches!(
            Msg::decode(&bad),
            Err(ProtoError::BadChecksum { sent: s, .. }) if s == sent
        ));
        // Trailing bytes past ibm_nob are not summed.
        let mut long = b.clone();
        long.extend_from_slice(&[1, 2, 3]);
        assert_eq!(Msg::decode(&long), Ok(m));
        // An older kernel's Lustre sums signed chars: accepted too. The
        // message has bytes >= 0x80 (its stamps), so the sums differ.
        let mut old = b.clone();
        old[12..16].copy_from_slice(&[0; 4]);
        let signed = cksum_signed_char(&old);
        assert_ne!(signed, sent);
        old[12..16].copy_from_slice(&signed.to_le_bytes());
        assert_eq!(Msg::decode(&old), Ok(m));
    }

    /// Known answers of Lustre's `kiblnd_cksum`, compiled from its C with
    /// gcc on x86-64 with `-funsigned-char` (as Linux >= 6.2 builds it)
    /// and with `-fsigned-char`, over bytes `i * 37 + 11` for i in 0..256
    /// with bytes 12..16 zero. `interop_o2ib` checks the first against
    /// Lustre's own ko2iblnd with `cksum=1` at both ends.
    #[test]
    fn checksum_is_lustres() {
        let b: Vec<u8> = (0..256u32)
            .map(|i| {
                if (12..16).contains(&i) {
                    0
                } else {
                    (i * 37 + 11) as u8
                }
            })
            .collect();
        assert_eq!(cksum(&b), 0xd53e_fbf7);
        assert_eq!(cksum_signed_char(&b), 0xe13e_fbf7);
    }

    /// Reverses the bytes of each (offset, size) field: what a peer of the
    /// other byte order would have written.
    fn swap_fields(b: &mut [u8], fields: &[(usize, usize)]) {
        for &(at, n) in fields {
            b[at..at + n].reverse();
        }
    }

    const HDR_FIELDS: [(usize, usize); 7] =
        [(0, 4), (4, 2), (8, 4), (16, 8), (24, 8), (32, 8), (40, 8)];

    #[test]
    fn flipped_peer() {
        let frags = [
            Frag {
                nob: 100,
                addr: 0x0102_0304_0506_0708,
            },
            Frag {
                nob: 200,
                addr: 0x1112_1314_1516_1718,
            },
        ];
        let c = Completion {
            cookie: 0x0102_0304_0506_0708,
            status: -5,
        };
        let cases: [(MsgBody<'_>, &[(usize, usize)]); 5] = [
            (MsgBody::ConnReq(CP), &[(48, 2), (50, 2), (52, 4)]),
            // The cookie stays as sent; the LNet header is always LE.
            (
                MsgBody::PutReq {
                    hdr: lhdr(10),
                    cookie: 0x0102_0304_0506_0708,
                },
                &[],
            ),
            (MsgBody::GetDone(c), &[(56, 4)]),
            (
                MsgBody::PutAck {
                    src_cookie: 0xaabb,
                    dst_cookie: 0xccdd,
                    rd: RdmaDesc::new(0x0a0b_0c0d, &frags),
                },
                &[(64, 4), (68, 4), (72, 4), (76, 8), (84, 4), (88, 8)],
            ),
            (
                MsgBody::GetReq {
                    hdr: lhdr(0),
                    cookie: 9,
                    rd: RdmaDesc::new(0x0a0b_0c0d, &frags[..1]),
                },
                &[(128, 4), (132, 4), (136, 4), (140, 8)],
            ),
        ];
        for (body, fields) in cases {
            for with_cksum in [false, true] {
                let m = Msg {
                    cksum: with_cksum,
                    ..msg(body)
                };
                let mut b = enc(&Msg { cksum: false, ..m });
                swap_fields(&mut b, &HDR_FIELDS);
                swap_fields(&mut b, fields);
                assert_eq!(&b[0..4], &MSG_MAGIC.to_be_bytes());
                if with_cksum {
                    let c = cksum(&b);
                    b[12..16].copy_from_slice(&c.to_be_bytes());
                }
                assert_eq!(
                    MsgHead::parse(&b),
                    Ok(MsgHead {
                        version: VERSION_2,
                        flip: true
                    })
                );
                assert_eq!(Msg::decode(&b), Ok(m), "{:?}", m.msg_type());
            }
        }
    }

    #[test]
    fn rejects() {
        let b = enc(&msg(MsgBody::ConnReq(CP)));
        assert_eq!(Msg::decode(&b[..5]), Err(ProtoError::Short));
        assert_eq!(Msg::decode(&b[..47]), Err(ProtoError::Short));
        let mut m = b.clone();
        m[0] = 0;
        assert!(matches!(Msg::decode(&m), Err(ProtoError::BadMagic(_))));
        for magic in [PROTO_MAGIC, PROTO_MAGIC.swap_bytes()] {
            m[0..4].copy_from_slice(&magic.to_le_bytes());
            assert_eq!(Msg::decode(&m), Err(ProtoError::ProtoMagic));
            assert_eq!(MsgHead::parse(&m[..6]), Err(ProtoError::ProtoMagic));
        }
        let mut m = b.clone();
        m[4] = 0x13;
        assert_eq!(Msg::decode(&m), Err(ProtoError::BadVersion(0x13)));
        m[4] = 0x11;
        assert_eq!(Msg::decode(&m).unwrap().version, VERSION_1);
        // ibm_nob above the bytes received.
        assert_eq!(
            Msg::decode(&b[..55]),
            Err(ProtoError::NobTooLarge { nob: 56, got: 55 })
        );
        let mut m = b.clone();
        m[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Msg::decode(&m), Err(ProtoError::BadSrcNid));
        let mut m = b.clone();
        m[6] = 0xc2;
        assert_eq!(Msg::decode(&m), Err(ProtoError::BadType(0xc2)));
        // ibm_nob below each type's size.
        for t in MsgType::ALL {
            let want = t.min_len();
            let mut m = [0u8; 200];
            m[..48].copy_from_slice(&b[..48]);
            m[6] = t.to_u8();
            let nob = want as u32 - 1;
            m[8..12].copy_from_slice(&nob.to_le_bytes());
            assert_eq!(
                Msg::decode(&m),
                Err(ProtoError::TooShort {
                    msg_type: t,
                    nob,
                    want
                })
            );
        }
        // Fragment counts.
        let frags = [Frag { nob: 1, addr: 2 }; 3];
        let ack = enc(&msg(MsgBody::PutAck {
            src_cookie: 1,
            dst_cookie: 2,
            rd: RdmaDesc::new(3, &frags),
        }));
        for n in [0u32, 258, u32::MAX] {
            let mut m = ack.clone();
            m[68..72].copy_from_slice(&n.to_le_bytes());
            assert_eq!(Msg::decode(&m), Err(ProtoError::BadNfrags(n)));
        }
        let mut m = ack.clone();
        m[68..72].copy_from_slice(&4u32.to_le_bytes());
        m.extend_from_slice(&[0; 12]);
        assert_eq!(
            Msg::decode(&m),
            Err(ProtoError::TooShort {
                msg_type: MsgType::PutAck,
                nob: 108,
                want: 120
            })
        );
        // A bad LNet header.
        let mut m = enc(&msg(MsgBody::PutReq {
            hdr: lhdr(1),
            cookie: 1,
        }));
        m[48 + 24] = 9;
        assert_eq!(Msg::decode(&m), Err(ProtoError::Hdr(HdrError::BadType(9))));
        // Encoders refuse what decoders refuse.
        let none = RdmaDesc::new(1, &[]);
        let many = [Frag { nob: 1, addr: 1 }; 258];
        for rd in [none, RdmaDesc::new(1, &many)] {
            let m = msg(MsgBody::PutAck {
                src_cookie: 0,
                dst_cookie: 0,
                rd,
            });
            assert_eq!(m.encode(&mut [0u8; MSG_SIZE]), None);
        }
        let v3 = Msg {
            version: 0x13,
            ..msg(MsgBody::Noop)
        };
        assert_eq!(v3.encode(&mut [0u8; 64]), None);
        let v6 = Msg {
            src_nid: nid("2001:db8::1@tcp"),
            ..msg(MsgBody::Noop)
        };
        assert_eq!(v6.encode(&mut [0u8; 64]), None);
        assert_eq!(msg(MsgBody::Noop).encode(&mut [0u8; 47]), None);
    }

    #[test]
    fn differences_from_lustre() {
        let b = enc(&msg(MsgBody::Noop));
        // Lustre refuses only LNET_NID_ANY as the source; we refuse every
        // NID4 on LND type 0xff.
        let mut m = b.clone();
        m[16..24].copy_from_slice(&0x00ff_0000_0a00_0001u64.to_le_bytes());
        assert_eq!(Msg::decode(&m), Err(ProtoError::BadSrcNid));
        // Lustre finds an unknown LNet type in lnet_parse; we in decode.
        let mut m = enc(&msg(MsgBody::Immediate {
            hdr: lhdr(0),
            payload: &[],
        }));
        m[48 + 24] = 5;
        assert_eq!(Msg::decode(&m), Err(ProtoError::Hdr(HdrError::BadType(5))));
        // We do not build a message larger than IBLND_MSG_SIZE.
        let payload = [0u8; IMMEDIATE_MAX_PAYLOAD + 1];
        let big = msg(MsgBody::Immediate {
            hdr: lhdr(0),
            payload: &payload,
        });
        assert_eq!(big.encode(&mut [0u8; 2 * MSG_SIZE]), None);
    }

    #[test]
    fn display() {
        let errs = [
            ProtoError::Short,
            ProtoError::BadVersion(0x13),
            ProtoError::TooShort {
                msg_type: MsgType::PutAck,
                nob: 60,
                want: 72,
            },
            ProtoError::Hdr(HdrError::BadType(9)),
            ProtoError::Stale,
        ];
        let mut s = std::string::String::new();
        for e in errs {
            use core::fmt::Write;
            s.clear();
            write!(s, "{e}").unwrap();
            assert!(!s.is_empty());
        }
        assert_eq!(
            std::format!(
                "{}",
                ProtoError::TooShort {
                    msg_type: MsgType::PutAck,
                    nob: 60,
                    want: 72
                }
            ),
            "short PUT_ACK: 60(72)"
        );
    }

    #[test]
    fn connreq_checks() {
        assert_eq!(CP.check_connreq(8, false), Ok(()));
        let deep = ConnParams {
            queue_depth: 9,
            ..CP
        };
        let e = deep.check_connreq(8, true).unwrap_err();
        assert_eq!(e, ProtoError::QueueDepth { got: 9, max: 8 });
        assert_eq!(e.reject_reason(VERSION_2), RejectReason::MsgQueueSize);
        assert_eq!(e.reject_reason(VERSION_1), RejectReason::Fatal);
        let many = ConnParams {
            max_frags: 258,
            ..CP
        };
        let e = many.check_connreq(8, true).unwrap_err();
        assert_eq!(e, ProtoError::TooManyFrags { got: 258, max: 257 });
        assert_eq!(e.reject_reason(VERSION_2), RejectReason::RdmaFrags);
        let few = ConnParams {
            max_frags: 256,
            ..CP
        };
        assert_eq!(few.check_connreq(8, true), Ok(()));
        let e = few.check_connreq(8, false).unwrap_err();
        assert_eq!(e, ProtoError::FragsNeedFmr(256));
        assert_eq!(e.reject_reason(VERSION_2), RejectReason::RdmaFrags);
        let big = ConnParams {
            max_msg_size: 4097,
            ..CP
        };
        let e = big.check_connreq(8, false).unwrap_err();
        assert_eq!(e, ProtoError::MsgSize(4097));
        assert_eq!(e.reject_reason(VERSION_2), RejectReason::Fatal);
        assert_eq!(
            ProtoError::Stale.reject_reason(VERSION_2),
            RejectReason::ConnStale
        );
        assert_eq!(
            ProtoError::ProtoMagic.reject_reason(VERSION_2),
            RejectReason::Fatal
        );
    }

    #[test]
    fn connack_checks() {
        let me = nid("192.168.1.2@o2ib");
        let inc = 0x99aa_bbcc_ddee_ff00;
        let ack = |cp| msg(MsgBody::ConnAck(cp));
        let reduced = ConnParams {
            queue_depth: 4,
            ..CP
        };
        assert_eq!(
            ack(reduced).check_connack(VERSION_2, &CP, me, inc),
            Ok(reduced)
        );
        assert_eq!(
            msg(MsgBody::ConnReq(CP)).check_connack(VERSION_2, &CP, me, inc),
            Err(ProtoError::UnexpectedType(MsgType::ConnReq))
        );
        assert_eq!(
            ack(CP).check_connack(VERSION_1, &CP, me, inc),
            Err(ProtoError::VersionMismatch {
                got: VERSION_2,
                want: VERSION_1
            })
        );
        assert_eq!(
            ack(CP).check_connack(VERSION_2, &reduced, me, inc),
            Err(ProtoError::QueueDepth { got: 8, max: 4 })
        );
        let fewer = ConnParams {
            max_frags: 32,
            ..CP
        };
        assert_eq!(
            ack(CP).check_connack(VERSION_2, &fewer, me, inc),
            Err(ProtoError::TooManyFrags { got: 257, max: 32 })
        );
        let big = ConnParams {
            max_msg_size: 8192,
            ..CP
        };
        assert_eq!(
            ack(big).check_connack(VERSION_2, &CP, me, inc),
            Err(ProtoError::MsgSize(8192))
        );
        assert_eq!(
            ack(CP).check_connack(VERSION_2, &CP, me, inc + 1),
            Err(ProtoError::Stale)
        );
        assert_eq!(
            ack(CP).check_connack(VERSION_2, &CP, nid("192.168.1.3@o2ib"), inc),
            Err(ProtoError::Stale)
        );
    }

    #[test]
    fn rej_layout() {
        let r = Rej {
            version: VERSION_2,
            why: RejectReason::ConnStale,
            params: Some(RejParams {
                incarnation: 0x0102_0304_0506_0708,
                cp: CP,
            }),
        };
        let mut b = [0xffu8; 24];
        assert_eq!(r.encode(&mut b), Some(REJ_LEN));
        assert_eq!(le_u32(&b, 0), MSG_MAGIC);
        assert_eq!(le_u16(&b, 4), 0x12);
        assert_eq!(b[6], 5);
        assert_eq!(b[7], 0);
        assert_eq!(le_u64(&b, 8), 0x0102_0304_0506_0708);
        assert_eq!(le_u16(&b, 16), 8);
        assert_eq!(le_u16(&b, 18), 257);
        assert_eq!(le_u32(&b, 20), 4096);
        assert_eq!(Rej::decode(&b), Ok(r));
        // Only magic, version and reason: no parameters.
        assert_eq!(Rej::decode(&b[..7]), Ok(Rej { params: None, ..r }));
        assert_eq!(Rej::decode(&b[..23]).unwrap().params, None);
        assert_eq!(Rej::decode(&b[..6]), Err(ProtoError::Short));
        // A V1 reject's tail is not read.
        let mut v1 = b;
        v1[4] = 0x11;
        assert_eq!(Rej::decode(&v1).unwrap().params, None);
        let mut bad = b;
        bad[4] = 0x20;
        assert_eq!(Rej::decode(&bad), Err(ProtoError::BadVersion(0x20)));
        bad[0] = 0;
        assert!(matches!(Rej::decode(&bad), Err(ProtoError::BadMagic(_))));
        // A flipped reject, and one with LNET_PROTO_MAGIC.
        let mut be = b;
        swap_fields(
            &mut be,
            &[(0, 4), (4, 2), (8, 8), (16, 2), (18, 2), (20, 4)],
        );
        assert_eq!(Rej::decode(&be), Ok(r));
        let mut pm = b;
        pm[0..4].copy_from_slice(&PROTO_MAGIC.to_be_bytes());
        assert_eq!(
            Rej::decode(&pm),
            Err(ProtoError::BadVersion(0x1200)),
            "a flipped magic flips the version"
        );
        pm[0..4].copy_from_slice(&PROTO_MAGIC.to_le_bytes());
        assert_eq!(Rej::decode(&pm), Ok(r));
        // Reasons.
        for v in 0..=255u8 {
            assert_eq!(RejectReason::from_u8(v).to_u8(), v);
        }
        assert_eq!(RejectReason::from_u8(9), RejectReason::Early);
        assert_eq!(RejectReason::from_u8(10), RejectReason::Unknown(10));
    }

    #[test]
    fn v1_fatal_is_uncompat() {
        let r = Rej {
            version: VERSION_1,
            why: RejectReason::Fatal,
            params: None,
        };
        assert_eq!(r.effective_why(VERSION_2), RejectReason::ConnUncompat);
        assert_eq!(r.effective_why(VERSION_1), RejectReason::Fatal);
        let r2 = Rej {
            version: VERSION_2,
            ..r
        };
        assert_eq!(r2.effective_why(VERSION_2), RejectReason::Fatal);
    }

    fn o2ib_nid() -> impl Strategy<Value = Nid> {
        (any::<u16>(), any::<u32>()).prop_map(|(n, a)| Nid::new4(Net::new(lnd::O2IB, n), a))
    }

    fn lnet_hdr() -> impl Strategy<Value = Hdr> {
        (
            o2ib_nid(),
            o2ib_nid(),
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            any::<u32>(),
        )
            .prop_map(|(d, s, pid, mb, data, len)| Hdr {
                dest_nid: d,
                src_nid: s,
                dest_pid: pid,
                src_pid: pid ^ 1,
                payload_length: len,
                msg: LBody::Put {
                    ack_wmd: WireHandle {
                        interface_cookie: mb ^ data,
                        object_cookie: data,
                    },
                    match_bits: mb,
                    hdr_data: data,
                    ptl_index: pid >> 8,
                    offset: len >> 1,
                },
            })
    }

    fn conn_params() -> impl Strategy<Value = ConnParams> {
        (any::<u16>(), any::<u16>(), any::<u32>()).prop_map(|(q, f, s)| ConnParams {
            queue_depth: q,
            max_frags: f,
            max_msg_size: s,
        })
    }

    proptest! {
        #[test]
        fn round_trip(
            kind in 0usize..10,
            v1: bool,
            credits: u8,
            with_cksum: bool,
            src in o2ib_nid(),
            dst in o2ib_nid(),
            stamps: (u64, u64),
            cp in conn_params(),
            hdr in lnet_hdr(),
            cookies: (u64, u64),
            status: i32,
            key: u32,
            payload in proptest::collection::vec(any::<u8>(), 0..=IMMEDIATE_MAX_PAYLOAD),
            frags in proptest::collection::vec((any::<u32>(), any::<u64>()), 1..=257),
        ) {
            let frags: Vec<Frag> = frags.into_iter().map(|(nob, addr)| Frag { nob, addr }).collect();
            let rd = RdmaDesc::new(key, &frags);
            let c = Completion { cookie: cookies.0, status };
            let body = match kind {
                0 => MsgBody::ConnReq(cp),
                1 => MsgBody::ConnAck(cp),
                2 => MsgBody::Noop,
                3 => MsgBody::Immediate { hdr, payload: &payload },
                4 => MsgBody::PutReq { hdr, cookie: cookies.0 },
                5 => MsgBody::PutNak(c),
                6 => MsgBody::PutAck { src_cookie: cookies.0, dst_cookie: cookies.1, rd },
                7 => MsgBody::PutDone(c),
                8 => MsgBody::GetReq { hdr, cookie: cookies.1, rd },
                _ => MsgBody::GetDone(c),
            };
            let m = Msg {
                version: if v1 { VERSION_1 } else { VERSION_2 },
                credits,
                cksum: with_cksum,
                src_nid: src,
                src_stamp: stamps.0,
                dst_nid: dst,
                dst_stamp: stamps.1,
                body,
            };
            let mut out = [0u8; MSG_SIZE];
            let n = m.encode(&mut out).unwrap();
            prop_assert_eq!(Some(n), m.wire_len());
            prop_assert!(n >= m.msg_type().min_len());
            prop_assert_eq!(Msg::decode(&out[..n]), Ok(m));
            // Trailing bytes do not matter, except to IMMEDIATE's payload
            // which ends at ibm_nob anyway.
            prop_assert_eq!(Msg::decode(&out), Ok(m));
        }

        #[test]
        fn rej_round_trip(
            why: u8,
            inc: u64,
            cp in conn_params(),
            full: bool,
        ) {
            let r = Rej {
                version: VERSION_2,
                why: RejectReason::from_u8(why),
                params: full.then_some(RejParams { incarnation: inc, cp }),
            };
            let mut b = [0u8; REJ_LEN];
            prop_assert_eq!(r.encode(&mut b), Some(REJ_LEN));
            let n = if full { REJ_LEN } else { REJ_MIN_LEN };
            prop_assert_eq!(Rej::decode(&b[..n]), Ok(r));
            let v1 = Rej { version: VERSION_1, params: None, ..r };
            v1.encode(&mut b).unwrap();
            prop_assert_eq!(Rej::decode(&b), Ok(v1));
        }

        #[test]
        fn decoders_never_panic(
            mut b in proptest::collection::vec(any::<u8>(), 0..700),
            fix: bool,
            kind in 0usize..10,
            nfrags in 0u32..300,
        ) {
            if fix && b.len() >= 48 {
                // A plausible header, so decoding gets to the bodies.
                let len = b.len() as u32;
                b[0..4].copy_from_slice(&MSG_MAGIC.to_le_bytes());
                b[4..6].copy_from_slice(&VERSION_2.to_le_bytes());
                b[6] = MsgType::ALL[kind].to_u8();
                b[8..12].copy_from_slice(&len.to_le_bytes());
                b[12..16].fill(0);
                for at in [68, 132] {
                    if b.len() >= at + 4 {
                        b[at..at + 4].copy_from_slice(&nfrags.to_le_bytes());
                    }
                }
                // A known LNet type in the embedded header.
                if b.len() >= 76 && kind != 6 {
                    b[72..76].copy_from_slice(&(nfrags % 4).to_le_bytes());
                }
            }
            let _ = MsgHead::parse(&b);
            let _ = Rej::decode(&b);
            if let Ok(m) = Msg::decode(&b) {
                let n = m.wire_len().unwrap();
                prop_assert!(n <= b.len());
                prop_assert!(n >= m.msg_type().min_len());
                // Encoding is idempotent after one pass (a NID4 on net
                // type 0xff becomes LNET_NID_ANY).
                let mut e1 = [0u8; MSG_SIZE];
                let n1 = m.encode(&mut e1).unwrap();
                let m1 = Msg::decode(&e1[..n1]).unwrap();
                let mut e2 = [0u8; MSG_SIZE];
                let n2 = m1.encode(&mut e2).unwrap();
                prop_assert_eq!(&e1[..n1], &e2[..n2]);
            }
        }
    }

    #[test]
    fn rdma_writes_fill_the_sink_in_order() {
        let frags = [
            Frag {
                nob: 4096,
                addr: 0x1000,
            },
            Frag {
                nob: 0,
                addr: 0x9000,
            },
            Frag {
                nob: 512,
                addr: 0x5000,
            },
            Frag {
                nob: 8192,
                addr: 0x8000,
            },
        ];
        let rd = RdmaDesc::new(7, &frags);
        let w: Vec<_> = rd.writes(5000, 16).unwrap().collect();
        assert_eq!(
            w,
            [
                RdmaWrite {
                    raddr: 0x1000,
                    loff: 0,
                    len: 4096
                },
                RdmaWrite {
                    raddr: 0x5000,
                    loff: 4096,
                    len: 512
                },
                RdmaWrite {
                    raddr: 0x8000,
                    loff: 4608,
                    len: 392
                },
            ]
        );
        assert_eq!(rd.writes(0, 16).unwrap().count(), 0);
        assert_eq!(rd.writes(12800, 16).unwrap().count(), 3);
        assert_eq!(
            rd.writes(12801, 16).err(),
            Some(RdmaPlanError::SinkTooSmall {
                nob: 12801,
                room: 12800
            })
        );
        assert_eq!(
            rd.writes(5000, 2).err(),
            Some(RdmaPlanError::TooManyWrites { need: 3, max: 2 })
        );
    }

    proptest! {
        #[test]
        fn rdma_writes_cover_exactly_nob(
            lens in proptest::collection::vec(0u32..10_000, 1..20),
            nob in 0u32..200_000,
        ) {
            let frags: Vec<Frag> = lens
                .iter()
                .enumerate()
                .map(|(i, &n)| Frag { nob: n, addr: (i as u64) << 20 })
                .collect();
            let rd = RdmaDesc::new(1, &frags);
            let plan: Result<Vec<_>, _> = rd.writes(nob, 64).map(Iterator::collect);
            match plan {
                Ok(w) => {
                    let mut at = 0u32;
                    for x in &w {
                        prop_assert_eq!(x.loff, at);
                        prop_assert!(x.len > 0);
                        at += x.len;
                    }
                    prop_assert_eq!(at, nob);
                }
                Err(RdmaPlanError::SinkTooSmall { room, .. }) => {
                    prop_assert!(u64::from(nob) > room)
                }
                Err(e) => prop_assert!(false, "{:?}", e),
            }
        }
    }
}
