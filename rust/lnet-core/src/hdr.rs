//! The LNet message header (wire.md §2): the 72-byte NID4 form carried by
//! socklnd V1-V3 and o2iblnd, and the 96-byte large-NID form of socklnd V4.
//! Encoding and decoding are bounds-checked and never panic; `check` applies
//! the rules `lnet_parse` applies before a message is accepted.

use super::nid::{Nid, NidError};
use super::wire;

/// Bytes of a NID4 header.
pub const HDR_NID4_LEN: usize = 72;
/// Bytes of a large-NID header.
pub const HDR_NID16_LEN: usize = 96;
/// Largest PUT or REPLY payload (`LNET_MTU`, 1 MiB).
pub const LNET_MTU: u32 = 1 << 20;
/// The reserved portal of pings, pushes and discovery.
pub const RESERVED_PORTAL: u32 = 0;
/// Match bits of a ping GET (`LNET_PROTO_PING_MATCHBITS`).
pub const PING_MATCHBITS: u64 = 0x8000_0000_0000_0000;

const BODY_LEN: usize = 40;

/// A wire handle: opaque cookies the creator echoes back unconverted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WireHandle {
    /// `wh_interface_cookie`
    pub interface_cookie: u64,
    /// `wh_object_cookie`
    pub object_cookie: u64,
}

impl WireHandle {
    /// The NONE handle (all ones): for a PUT's ack_wmd, no ACK is wanted.
    pub const NONE: WireHandle = WireHandle {
        interface_cookie: u64::MAX,
        object_cookie: u64::MAX,
    };

    /// Whether this is the NONE handle.
    pub fn is_none(&self) -> bool {
        *self == WireHandle::NONE
    }
}

/// The type-specific part of a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgBody {
    /// ACK of a PUT.
    Ack {
        /// The PUT's ack_wmd, echoed.
        dst_wmd: WireHandle,
        /// The match bits the PUT matched with.
        match_bits: u64,
        /// Bytes the target accepted.
        mlength: u32,
    },
    /// PUT: payload into a remote MD.
    Put {
        /// Where the ACK goes; NONE for no ACK.
        ack_wmd: WireHandle,
        /// Match bits at the target.
        match_bits: u64,
        /// 64 bits for the target's event, in the sender's byte order.
        hdr_data: u64,
        /// Portal index at the target.
        ptl_index: u32,
        /// Offset into the target MD.
        offset: u32,
    },
    /// GET: ask for a REPLY carrying the target MD's data.
    Get {
        /// Where the REPLY goes.
        return_wmd: WireHandle,
        /// Match bits at the target.
        match_bits: u64,
        /// Portal index at the target.
        ptl_index: u32,
        /// Offset into the target MD.
        src_offset: u32,
        /// Bytes the sender can take.
        sink_length: u32,
    },
    /// REPLY to a GET.
    Reply {
        /// The GET's return_wmd, echoed.
        dst_wmd: WireHandle,
    },
    /// socklnd V1 HELLO (never valid as an LNet message).
    Hello {
        /// The sender's incarnation.
        incarnation: u64,
        /// Connection type.
        conn_type: u32,
    },
}

impl MsgBody {
    /// The wire type number (`enum lnet_msg_type`).
    pub fn type_code(&self) -> u32 {
        match self {
            MsgBody::Ack { .. } => 0,
            MsgBody::Put { .. } => 1,
            MsgBody::Get { .. } => 2,
            MsgBody::Reply { .. } => 3,
            MsgBody::Hello { .. } => 4,
        }
    }

    /// The name Lustre logs for the type.
    pub fn type_name(&self) -> &'static str {
        match self {
            MsgBody::Ack { .. } => "ACK",
            MsgBody::Put { .. } => "PUT",
            MsgBody::Get { .. } => "GET",
            MsgBody::Reply { .. } => "REPLY",
            MsgBody::Hello { .. } => "HELLO",
        }
    }
}

/// An LNet header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hdr {
    /// Final destination.
    pub dest_nid: Nid,
    /// Original source.
    pub src_nid: Nid,
    /// Destination process id.
    pub dest_pid: u32,
    /// Source process id.
    pub src_pid: u32,
    /// Bytes of payload following the header.
    pub payload_length: u32,
    /// The type and its fields.
    pub msg: MsgBody,
}

/// Why a header could not be encoded, decoded or accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HdrError {
    /// Fewer bytes than a header.
    Short,
    /// A NID that does not decode, or one too large for a NID4 header.
    Nid(NidError),
    /// A large-address NID in a NID4 header.
    NidNotNid4,
    /// An unknown message type.
    BadType(u32),
    /// HELLO outside the socklnd V1 handshake.
    UnexpectedHello,
    /// An ACK or GET with a payload.
    PayloadNotExpected {
        /// The type's name.
        msg_type: &'static str,
        /// The length claimed.
        length: u32,
    },
    /// A PUT or REPLY payload above `LNET_MTU`.
    PayloadTooLong(u32),
}

impl core::fmt::Display for HdrError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            HdrError::Short => f.write_str("header truncated"),
            HdrError::Nid(e) => write!(f, "bad NID in header: {e}"),
            HdrError::NidNotNid4 => f.write_str("large-address NID in a NID4 header"),
            HdrError::BadType(t) => write!(f, "bad message type 0x{t:x}"),
            HdrError::UnexpectedHello => f.write_str("HELLO outside the handshake"),
            HdrError::PayloadNotExpected { msg_type, length } => {
                write!(f, "bad {msg_type} payload {length} (0 expected)")
            }
            HdrError::PayloadTooLong(l) => write!(f, "payload {l} above LNET_MTU {LNET_MTU}"),
        }
    }
}

/// Header fields: always little-endian (the header has no magic to tell
/// a flipped sender by).
type Le<'a> = wire::Reader<'a, HdrError>;

fn le(b: &[u8]) -> Le<'_> {
    Le::new(b, false, HdrError::Short)
}

fn handle_at(r: &Le<'_>, at: usize) -> Result<WireHandle, HdrError> {
    Ok(WireHandle {
        interface_cookie: r.u64(at)?,
        object_cookie: r.u64(at.saturating_add(8))?,
    })
}

fn put(out: &mut [u8], at: usize, bytes: &[u8]) -> Result<(), HdrError> {
    wire::put(out, at, bytes).ok_or(HdrError::Short)
}

fn put_handle(out: &mut [u8], at: usize, h: &WireHandle) -> Result<(), HdrError> {
    put(out, at, &h.interface_cookie.to_le_bytes())?;
    put(out, at.saturating_add(8), &h.object_cookie.to_le_bytes())
}

fn decode_body(b: &[u8], type_code: u32) -> Result<MsgBody, HdrError> {
    let r = le(b);
    Ok(match type_code {
        0 => MsgBody::Ack {
            dst_wmd: handle_at(&r, 0)?,
            match_bits: r.u64(16)?,
            mlength: r.u32(24)?,
        },
        1 => MsgBody::Put {
            ack_wmd: handle_at(&r, 0)?,
            match_bits: r.u64(16)?,
            hdr_data: r.u64(24)?,
            ptl_index: r.u32(32)?,
            offset: r.u32(36)?,
        },
        2 => MsgBody::Get {
            return_wmd: handle_at(&r, 0)?,
            match_bits: r.u64(16)?,
            ptl_index: r.u32(24)?,
            src_offset: r.u32(28)?,
            sink_length: r.u32(32)?,
        },
        3 => MsgBody::Reply {
            dst_wmd: handle_at(&r, 0)?,
        },
        4 => MsgBody::Hello {
            incarnation: r.u64(0)?,
            conn_type: r.u32(8)?,
        },
        t => return Err(HdrError::BadType(t)),
    })
}

fn encode_body(out: &mut [u8], msg: &MsgBody) -> Result<(), HdrError> {
    out.get_mut(..BODY_LEN).ok_or(HdrError::Short)?.fill(0);
    match msg {
        MsgBody::Ack {
            dst_wmd,
            match_bits,
            mlength,
        } => {
            put_handle(out, 0, dst_wmd)?;
            put(out, 16, &match_bits.to_le_bytes())?;
            put(out, 24, &mlength.to_le_bytes())
        }
        MsgBody::Put {
            ack_wmd,
            match_bits,
            hdr_data,
            ptl_index,
            offset,
        } => {
            put_handle(out, 0, ack_wmd)?;
            put(out, 16, &match_bits.to_le_bytes())?;
            // Lustre copies hdr_data raw in the sender's order; on the
            // little-endian hosts we run on that is this encoding.
            put(out, 24, &hdr_data.to_le_bytes())?;
            put(out, 32, &ptl_index.to_le_bytes())?;
            put(out, 36, &offset.to_le_bytes())
        }
        MsgBody::Get {
            return_wmd,
            match_bits,
            ptl_index,
            src_offset,
            sink_length,
        } => {
            put_handle(out, 0, return_wmd)?;
            put(out, 16, &match_bits.to_le_bytes())?;
            put(out, 24, &ptl_index.to_le_bytes())?;
            put(out, 28, &src_offset.to_le_bytes())?;
            put(out, 32, &sink_length.to_le_bytes())
        }
        MsgBody::Reply { dst_wmd } => put_handle(out, 0, dst_wmd),
        MsgBody::Hello {
            incarnation,
            conn_type,
        } => {
            put(out, 0, &incarnation.to_le_bytes())?;
            put(out, 8, &conn_type.to_le_bytes())
        }
    }
}

impl Hdr {
    /// Decodes a NID4 header from the first 72 bytes of `b`.
    pub fn decode_nid4(b: &[u8]) -> Result<Hdr, HdrError> {
        let b = b.get(..HDR_NID4_LEN).ok_or(HdrError::Short)?;
        let r = le(b);
        Ok(Hdr {
            dest_nid: Nid::from_nid4(r.u64(0)?),
            src_nid: Nid::from_nid4(r.u64(8)?),
            dest_pid: r.u32(16)?,
            src_pid: r.u32(20)?,
            payload_length: r.u32(28)?,
            msg: decode_body(b.get(32..).ok_or(HdrError::Short)?, r.u32(24)?)?,
        })
    }

    /// Encodes a NID4 header into the first 72 bytes of `out`.
    pub fn encode_nid4(&self, out: &mut [u8]) -> Result<(), HdrError> {
        let out = out.get_mut(..HDR_NID4_LEN).ok_or(HdrError::Short)?;
        let dest = self.dest_nid.to_nid4().ok_or(HdrError::NidNotNid4)?;
        let src = self.src_nid.to_nid4().ok_or(HdrError::NidNotNid4)?;
        put(out, 0, &dest.to_le_bytes())?;
        put(out, 8, &src.to_le_bytes())?;
        self.encode_common(out, 16)
    }

    /// Decodes a large-NID header from the first 96 bytes of `b`.
    pub fn decode_nid16(b: &[u8]) -> Result<Hdr, HdrError> {
        let b = b.get(..HDR_NID16_LEN).ok_or(HdrError::Short)?;
        let (dest_nid, _) =
            Nid::decode(b.get(0..20).ok_or(HdrError::Short)?).map_err(HdrError::Nid)?;
        let (src_nid, _) =
            Nid::decode(b.get(20..40).ok_or(HdrError::Short)?).map_err(HdrError::Nid)?;
        let r = le(b);
        Ok(Hdr {
            dest_nid,
            src_nid,
            dest_pid: r.u32(40)?,
            src_pid: r.u32(44)?,
            payload_length: r.u32(52)?,
            msg: decode_body(b.get(56..).ok_or(HdrError::Short)?, r.u32(48)?)?,
        })
    }

    /// Encodes a large-NID header into the first 96 bytes of `out`.
    pub fn encode_nid16(&self, out: &mut [u8]) -> Result<(), HdrError> {
        let out = out.get_mut(..HDR_NID16_LEN).ok_or(HdrError::Short)?;
        out.fill(0);
        let (dest, src) = out.split_at_mut(20);
        self.dest_nid.encode(dest).ok_or(HdrError::Short)?;
        self.src_nid.encode(src).ok_or(HdrError::Short)?;
        self.encode_common(out, 40)
    }

    fn encode_common(&self, out: &mut [u8], at: usize) -> Result<(), HdrError> {
        put(out, at, &self.dest_pid.to_le_bytes())?;
        put(out, at.saturating_add(4), &self.src_pid.to_le_bytes())?;
        put(
            out,
            at.saturating_add(8),
            &self.msg.type_code().to_le_bytes(),
        )?;
        put(
            out,
            at.saturating_add(12),
            &self.payload_length.to_le_bytes(),
        )?;
        encode_body(
            out.get_mut(at.saturating_add(16)..)
                .ok_or(HdrError::Short)?,
            &self.msg,
        )
    }

    /// The checks `lnet_parse` makes before accepting a message: a known
    /// type other than HELLO, no payload on ACK and GET, at most
    /// `LNET_MTU` on PUT and REPLY.
    pub fn check(&self) -> Result<(), HdrError> {
        let length = self.payload_length;
        match self.msg {
            MsgBody::Ack { .. } | MsgBody::Get { .. } if length > 0 => {
                Err(HdrError::PayloadNotExpected {
                    msg_type: self.msg.type_name(),
                    length,
                })
            }
            MsgBody::Put { .. } | MsgBody::Reply { .. } if length > LNET_MTU => {
                Err(HdrError::PayloadTooLong(length))
            }
            MsgBody::Hello { .. } => Err(HdrError::UnexpectedHello),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    fn put_hdr() -> Hdr {
        Hdr {
            dest_nid: nid("192.168.1.2@tcp"),
            src_nid: nid("192.168.1.1@tcp"),
            dest_pid: 12345,
            src_pid: 12345,
            payload_length: 4096,
            msg: MsgBody::Put {
                ack_wmd: WireHandle {
                    interface_cookie: 0x1122,
                    object_cookie: 0x3344,
                },
                match_bits: 0x0102_0304_0506_0708,
                hdr_data: 0xdead_beef,
                ptl_index: 4,
                offset: 16,
            },
        }
    }

    #[test]
    fn nid4_put_layout() {
        let mut b = [0xaau8; HDR_NID4_LEN];
        put_hdr().encode_nid4(&mut b).unwrap();
        assert_eq!(&b[0..8], &0x0002_0000_c0a8_0102u64.to_le_bytes());
        assert_eq!(&b[8..16], &0x0002_0000_c0a8_0101u64.to_le_bytes());
        assert_eq!(&b[16..20], &12345u32.to_le_bytes());
        assert_eq!(&b[24..28], &1u32.to_le_bytes());
        assert_eq!(&b[28..32], &4096u32.to_le_bytes());
        assert_eq!(&b[32..40], &0x1122u64.to_le_bytes());
        assert_eq!(&b[48..56], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(&b[56..64], &0xdead_beefu64.to_le_bytes());
        assert_eq!(&b[64..68], &4u32.to_le_bytes());
        assert_eq!(&b[68..72], &16u32.to_le_bytes());
        assert_eq!(Hdr::decode_nid4(&b), Ok(put_hdr()));
    }

    #[test]
    fn get_and_ack_layout() {
        let h = Hdr {
            msg: MsgBody::Get {
                return_wmd: WireHandle::NONE,
                match_bits: PING_MATCHBITS,
                ptl_index: RESERVED_PORTAL,
                src_offset: 8,
                sink_length: 272,
            },
            payload_length: 0,
            ..put_hdr()
        };
        let mut b = [0u8; HDR_NID4_LEN];
        h.encode_nid4(&mut b).unwrap();
        assert_eq!(&b[24..28], &2u32.to_le_bytes());
        assert_eq!(&b[48..56], &PING_MATCHBITS.to_le_bytes());
        assert_eq!(&b[60..64], &8u32.to_le_bytes());
        assert_eq!(&b[64..68], &272u32.to_le_bytes());
        assert_eq!(Hdr::decode_nid4(&b), Ok(h));
        let ack = Hdr {
            msg: MsgBody::Ack {
                dst_wmd: WireHandle::NONE,
                match_bits: 7,
                mlength: 4096,
            },
            payload_length: 0,
            ..put_hdr()
        };
        ack.encode_nid4(&mut b).unwrap();
        assert_eq!(&b[56..60], &4096u32.to_le_bytes());
        assert_eq!(Hdr::decode_nid4(&b), Ok(ack));
    }

    #[test]
    fn nid16_layout() {
        let h = Hdr {
            dest_nid: nid("2001:db8::2@tcp"),
            ..put_hdr()
        };
        let mut b = [0u8; HDR_NID16_LEN];
        h.encode_nid16(&mut b).unwrap();
        assert_eq!(b[0], 12);
        assert_eq!(b[1], 2);
        assert_eq!(&b[40..44], &12345u32.to_le_bytes());
        assert_eq!(&b[48..52], &1u32.to_le_bytes());
        assert_eq!(&b[52..56], &4096u32.to_le_bytes());
        assert_eq!(Hdr::decode_nid16(&b), Ok(h));
        assert_eq!(
            h.encode_nid4(&mut [0u8; HDR_NID4_LEN]),
            Err(HdrError::NidNotNid4)
        );
    }

    #[test]
    fn rejects() {
        let mut b = [0u8; HDR_NID4_LEN];
        put_hdr().encode_nid4(&mut b).unwrap();
        assert_eq!(Hdr::decode_nid4(&b[..71]), Err(HdrError::Short));
        b[24] = 9;
        assert_eq!(Hdr::decode_nid4(&b), Err(HdrError::BadType(9)));
        let get = Hdr {
            msg: MsgBody::Get {
                return_wmd: WireHandle::NONE,
                match_bits: 0,
                ptl_index: 0,
                src_offset: 0,
                sink_length: 0,
            },
            payload_length: 1,
            ..put_hdr()
        };
        assert!(matches!(
            get.check(),
            Err(HdrError::PayloadNotExpected {
                msg_type: "GET",
                length: 1
            })
        ));
        let big = Hdr {
            payload_length: LNET_MTU + 1,
            ..put_hdr()
        };
        assert_eq!(big.check(), Err(HdrError::PayloadTooLong(LNET_MTU + 1)));
        assert_eq!(
            Hdr {
                payload_length: LNET_MTU,
                ..put_hdr()
            }
            .check(),
            Ok(())
        );
        let hello = Hdr {
            msg: MsgBody::Hello {
                incarnation: 1,
                conn_type: 0,
            },
            ..put_hdr()
        };
        assert_eq!(hello.check(), Err(HdrError::UnexpectedHello));
        assert!(WireHandle::NONE.is_none());
    }

    proptest! {
        #[test]
        fn nid4_decode_never_panics_and_round_trips(b in proptest::collection::vec(any::<u8>(), 0..100)) {
            if let Ok(h) = Hdr::decode_nid4(&b) {
                let mut out = [0u8; HDR_NID4_LEN];
                h.encode_nid4(&mut out).unwrap();
                prop_assert_eq!(Hdr::decode_nid4(&out), Ok(h));
            }
        }

        #[test]
        fn nid16_decode_never_panics_and_round_trips(b in proptest::collection::vec(any::<u8>(), 0..120)) {
            if let Ok(h) = Hdr::decode_nid16(&b) {
                let mut out = [0u8; HDR_NID16_LEN];
                h.encode_nid16(&mut out).unwrap();
                prop_assert_eq!(Hdr::decode_nid16(&out), Ok(h));
            }
        }

        #[test]
        fn put_round_trip(mb: u64, data: u64, ptl: u32, off: u32, len in 0..=LNET_MTU, ic: u64, oc: u64) {
            let h = Hdr {
                payload_length: len,
                msg: MsgBody::Put { ack_wmd: WireHandle { interface_cookie: ic, object_cookie: oc }, match_bits: mb, hdr_data: data, ptl_index: ptl, offset: off },
                ..put_hdr()
            };
            let mut b4 = [0u8; HDR_NID4_LEN];
            let mut b16 = [0u8; HDR_NID16_LEN];
            h.encode_nid4(&mut b4).unwrap();
            h.encode_nid16(&mut b16).unwrap();
            prop_assert_eq!(Hdr::decode_nid4(&b4), Ok(h));
            prop_assert_eq!(Hdr::decode_nid16(&b16), Ok(h));
            prop_assert_eq!(h.check(), Ok(()));
        }
    }
}
