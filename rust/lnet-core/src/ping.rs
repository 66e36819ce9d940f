//! The ping buffer (wire.md §3): what a node says about its NIs in a ping
//! REPLY or a discovery push — features, pid, a sequence number, and each
//! NI's NID and status. Written in the sender's byte order.
//!
//! Reading is a view over the received bytes (no allocation). A buffer cut
//! short by the receiver's MD (pings use 272 bytes) is not an error: the
//! view says how many bytes the whole info needs, so discovery can ask
//! again with a larger buffer. The metadata block (EFA) is not interpreted.

use super::nid::{Nid, NidError};
use super::wire;
use core::fmt;

/// `LNET_PROTO_PING_MAGIC` ("ping").
pub const PING_MAGIC: u32 = 0x7069_6e67;
/// An NI that is up.
pub const STATUS_UP: u32 = 0x15aa_c0de;
/// An NI that is down (fatal, or health 0).
pub const STATUS_DOWN: u32 = 0xdead_face;
/// Bytes of the header.
pub const HDR_LEN: usize = 16;
/// Largest reply buffer a ping offers (`LNET_PING_BUFFER_MAX`).
pub const PING_BUFFER_MAX: usize = 3960;
/// Bytes of a NID4 entry.
pub const NID4_ENTRY_LEN: usize = 16;
/// Initial buffer size of pings and pushes (`LNET_PING_INFO_MIN_SIZE`).
pub const MIN_SIZE: usize = 272;

/// Feature bits (`LNET_PING_FEAT_*`).
pub mod features {
    /// Original format.
    pub const BASE: u32 = 1 << 0;
    /// Entries carry a status word.
    pub const NI_STATUS: u32 = 1 << 1;
    /// The node does not route.
    pub const RTE_DISABLED: u32 = 1 << 2;
    /// The node is Multi-Rail.
    pub const MULTI_RAIL: u32 = 1 << 3;
    /// Discovery is enabled.
    pub const DISCOVERY: u32 = 1 << 4;
    /// Large-address entries follow the NID4 entries.
    pub const LARGE_ADDR: u32 = 1 << 5;
    /// The primary NID is the first large entry.
    pub const PRIMARY_LARGE: u32 = 1 << 6;
    /// A metadata block follows.
    pub const METADATA: u32 = 1 << 7;
    /// Every defined bit.
    pub const ALL: u32 = 0xff;
}

const LO_NID4: u64 = 0x0009_0000_0000_0000;

/// Why a ping buffer is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PingError {
    /// Shorter than header and loopback entry.
    Short,
    /// Not the ping magic, in either order.
    BadMagic(u32),
    /// A feature bit that is not defined.
    UnknownFeatures(u32),
    /// No NI_STATUS feature.
    NoStatus,
    /// `pi_nnis` of 0 or above `lnet_interfaces_max`.
    BadCount(u32),
    /// Entry 0 is not `0@lo`.
    NoLoopback,
    /// A total size (LARGE_ADDR) smaller than the NID4 part or not a
    /// multiple of 4.
    BadSize(u32),
    /// A large entry whose NID does not decode.
    BadNid(NidError),
}

impl fmt::Display for PingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PingError::Short => f.write_str("ping info truncated before its first entry"),
            PingError::BadMagic(m) => write!(f, "bad ping magic 0x{m:08x}"),
            PingError::UnknownFeatures(x) => write!(f, "unknown ping features 0x{x:x}"),
            PingError::NoStatus => f.write_str("ping info without NI status"),
            PingError::BadCount(n) => write!(f, "bad NI count {n}"),
            PingError::NoLoopback => f.write_str("first ping entry is not 0@lo"),
            PingError::BadSize(s) => write!(f, "bad ping info size {s}"),
            PingError::BadNid(e) => write!(f, "bad NID in ping info: {e}"),
        }
    }
}

/// One NI as a ping buffer lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NiStatus {
    /// Its NID.
    pub nid: Nid,
    /// `STATUS_UP`, `STATUS_DOWN`, or another word (treated as not up).
    pub status: u32,
}

impl NiStatus {
    /// Whether the sender says the NI is up.
    pub fn is_up(&self) -> bool {
        self.status == STATUS_UP
    }
}

/// A validated view over a received ping buffer.
#[derive(Clone, Copy, Debug)]
pub struct PingInfo<'a> {
    b: &'a [u8],
    flip: bool,
    /// Feature bits.
    pub features: u32,
    /// The sender's pid.
    pub pid: u32,
    nnis: usize,
    total: usize,
}

fn u32_at(b: &[u8], at: usize, flip: bool) -> Option<u32> {
    wire::Reader::new(b, flip, ()).u32(at).ok()
}

fn u64_at(b: &[u8], at: usize, flip: bool) -> Option<u64> {
    wire::Reader::new(b, flip, ()).u64(at).ok()
}

impl<'a> PingInfo<'a> {
    /// Validates a received buffer as `lnet_ping_info_validate` does.
    pub fn parse(b: &'a [u8], interfaces_max: u32) -> Result<PingInfo<'a>, PingError> {
        let m = u32_at(b, 0, false).ok_or(PingError::Short)?;
        let flip = if m == PING_MAGIC {
            false
        } else if m == PING_MAGIC.swap_bytes() {
            true
        } else {
            return Err(PingError::BadMagic(m));
        };
        let field = |at| u32_at(b, at, flip).ok_or(PingError::Short);
        let features = field(4)?;
        if features & !features::ALL != 0 {
            return Err(PingError::UnknownFeatures(features & !features::ALL));
        }
        if features & features::NI_STATUS == 0 {
            return Err(PingError::NoStatus);
        }
        let pid = field(8)?;
        let count = field(12)?;
        if count == 0 || count > interfaces_max {
            return Err(PingError::BadCount(count));
        }
        if u64_at(b, HDR_LEN, flip).ok_or(PingError::Short)? != LO_NID4 {
            return Err(PingError::NoLoopback);
        }
        let nnis = count as usize;
        let nid4_part = NID4_ENTRY_LEN
            .checked_mul(nnis)
            .and_then(|n| n.checked_add(HDR_LEN))
            .ok_or(PingError::BadCount(count))?;
        let total = if features & features::LARGE_ADDR != 0 {
            let size = field(HDR_LEN + 12)?;
            let s = (size & !3) as usize;
            if s < nid4_part {
                return Err(PingError::BadSize(size));
            }
            s
        } else {
            nid4_part
        };
        Ok(PingInfo {
            b,
            flip,
            features,
            pid,
            nnis,
            total,
        })
    }

    /// The sender's ping-buffer sequence number (entry 0's status word).
    pub fn sequence(&self) -> u32 {
        u32_at(self.b, HDR_LEN + 8, self.flip).unwrap_or(0)
    }

    /// Bytes the whole info takes; more than were received means the
    /// buffer was cut short.
    pub fn needed_len(&self) -> usize {
        self.total
    }

    /// Whether every byte of the info arrived.
    pub fn is_complete(&self) -> bool {
        self.b.len() >= self.total
    }

    /// The NID4 entries after the loopback one, as far as they arrived.
    pub fn nid4_entries(&self) -> impl Iterator<Item = NiStatus> + 'a {
        let (b, flip) = (self.b, self.flip);
        (1..self.nnis).map_while(move |i| {
            let at = HDR_LEN + NID4_ENTRY_LEN * i;
            Some(NiStatus {
                nid: Nid::from_nid4(u64_at(b, at, flip)?),
                status: u32_at(b, at + 8, flip)?,
            })
        })
    }

    /// The large-address entries, as far as they arrived. A NID that does
    /// not decode ends the list with an error.
    pub fn large_entries(&self) -> impl Iterator<Item = Result<NiStatus, PingError>> + 'a {
        let (b, flip) = (self.b, self.flip);
        let end = self.total.min(b.len());
        let mut at = if self.features & features::LARGE_ADDR != 0 {
            HDR_LEN + NID4_ENTRY_LEN * self.nnis
        } else {
            end
        };
        let mut failed = false;
        core::iter::from_fn(move || {
            if failed || at >= end {
                return None;
            }
            let status = u32_at(b, at, flip)?;
            match Nid::decode(b.get(at + 4..end)?) {
                Ok((nid, used)) => {
                    at = at.checked_add((4 + used + 3) & !3)?;
                    Some(Ok(NiStatus { nid, status }))
                }
                Err(e) => {
                    failed = true;
                    Some(Err(PingError::BadNid(e)))
                }
            }
        })
    }

    /// The sender's primary NID: the first large entry with PRIMARY_LARGE,
    /// else the first NID4 entry after loopback.
    pub fn primary(&self) -> Option<Nid> {
        if self.features & features::PRIMARY_LARGE != 0 {
            self.large_entries().next()?.ok().map(|e| e.nid)
        } else {
            self.nid4_entries().next().map(|e| e.nid)
        }
    }
}

/// Writes a ping buffer for `nis` (the primary first, loopback not
/// included) into `out`; returns the bytes used, or `None` if `out` is too
/// small or there are too many NIs. LARGE_ADDR and PRIMARY_LARGE are set
/// as the NIs require; NI_STATUS is always set.
pub fn encode(
    out: &mut [u8],
    features: u32,
    pid: u32,
    sequence: u32,
    nis: &[NiStatus],
) -> Option<usize> {
    let small = nis.iter().filter(|n| n.nid.to_nid4().is_some()).count();
    let large_len: usize = nis
        .iter()
        .filter(|n| n.nid.to_nid4().is_none())
        .map(|n| (4 + n.nid.wire_len() + 3) & !3)
        .sum();
    let mut features = (features & features::ALL) | features::NI_STATUS;
    features &= !(features::LARGE_ADDR | features::PRIMARY_LARGE);
    if large_len > 0 {
        features |= features::LARGE_ADDR;
        if nis.first().is_some_and(|n| n.nid.to_nid4().is_none()) {
            features |= features::PRIMARY_LARGE;
        }
    }
    let nnis = small.checked_add(1)?;
    let nid4_end = HDR_LEN.checked_add(NID4_ENTRY_LEN.checked_mul(nnis)?)?;
    let total = nid4_end.checked_add(large_len)?;
    let out = out.get_mut(..total)?;
    out.fill(0);
    let mut put = |at: usize, bytes: &[u8]| wire::put(out, at, bytes);
    put(0, &PING_MAGIC.to_le_bytes())?;
    put(4, &features.to_le_bytes())?;
    put(8, &pid.to_le_bytes())?;
    put(12, &u32::try_from(nnis).ok()?.to_le_bytes())?;
    put(HDR_LEN, &LO_NID4.to_le_bytes())?;
    put(HDR_LEN + 8, &sequence.to_le_bytes())?;
    if large_len > 0 {
        put(HDR_LEN + 12, &u32::try_from(total).ok()?.to_le_bytes())?;
    }
    let mut at4 = HDR_LEN + NID4_ENTRY_LEN;
    let mut atl = nid4_end;
    for ni in nis {
        if let Some(n4) = ni.nid.to_nid4() {
            put(at4, &n4.to_le_bytes())?;
            put(at4 + 8, &ni.status.to_le_bytes())?;
            at4 += NID4_ENTRY_LEN;
        } else {
            put(atl, &ni.status.to_le_bytes())?;
            let mut nid = [0u8; super::nid::NID_WIRE_MAX];
            let used = ni.nid.encode(&mut nid)?;
            put(atl + 4, nid.get(..used)?)?;
            atl += (4 + used + 3) & !3;
        }
    }
    Some(total)
}

/// Where the feature word sits in a ping buffer this node encoded, so a
/// feature can be switched in place (`discovery_set`); a multiple of 4.
/// `None` for a buffer that is not one of ours.
pub fn features_offset(b: &[u8]) -> Option<usize> {
    let info = PingInfo::parse(b, u32::MAX).ok()?;
    (!info.flip).then_some(4)
}

/// Where `nid`'s status word sits in a ping buffer this node encoded, so
/// it can be rewritten in place (health.md §1: no new sequence, no push).
/// The offset is a multiple of 4.
pub fn status_offset(b: &[u8], nid: Nid) -> Option<usize> {
    let info = PingInfo::parse(b, u32::MAX).ok()?;
    if info.flip {
        return None;
    }
    if let Some(n4) = nid.to_nid4() {
        return (1..info.nnis).find_map(|i| {
            let at = HDR_LEN.checked_add(NID4_ENTRY_LEN.checked_mul(i)?)?;
            (u64_at(b, at, false)? == n4).then_some(at + 8)
        });
    }
    if info.features & features::LARGE_ADDR == 0 {
        return None;
    }
    let end = info.total.min(b.len());
    let mut at = HDR_LEN.checked_add(NID4_ENTRY_LEN.checked_mul(info.nnis)?)?;
    while at < end {
        let (found, used) = Nid::decode(b.get(at.checked_add(4)?..end)?).ok()?;
        if found == nid {
            return Some(at);
        }
        at = at.checked_add((4 + used + 3) & !3)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    extern crate std;
    use std::vec::Vec;

    #[test]
    fn feature_word_in_place() {
        let mut b = [0u8; MIN_SIZE];
        let nis = [ni("10.1.0.1@tcp", true)];
        let feats = features::BASE | features::DISCOVERY | features::RTE_DISABLED;
        let n = encode(&mut b, feats, 12345, 3, &nis).unwrap();
        let at = features_offset(&b[..n]).unwrap();
        let w = u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) & !features::DISCOVERY;
        b[at..at + 4].copy_from_slice(&w.to_le_bytes());
        let p = PingInfo::parse(&b[..n], 16).unwrap();
        assert_eq!(p.features & features::DISCOVERY, 0);
        assert_ne!(p.features & features::RTE_DISABLED, 0);
        // Nothing else moved.
        assert_eq!(p.sequence(), 3);
        assert_eq!(p.nid4_entries().next().unwrap().nid, nis[0].nid);
        assert_eq!(features_offset(&[0u8; 8]), None);
    }

    fn ni(s: &str, up: bool) -> NiStatus {
        NiStatus {
            nid: Nid::parse(s).unwrap(),
            status: if up { STATUS_UP } else { STATUS_DOWN },
        }
    }

    const FEAT: u32 = features::MULTI_RAIL | features::DISCOVERY;

    #[test]
    fn nid4_only_layout() {
        let nis = [ni("10.1.0.1@tcp", true), ni("10.2.0.1@tcp", false)];
        let mut b = [0u8; MIN_SIZE];
        let n = encode(&mut b, FEAT, 12345, 7, &nis).unwrap();
        assert_eq!(n, 16 + 16 * 3);
        assert_eq!(&b[..4], &PING_MAGIC.to_le_bytes());
        assert_eq!(&b[4..8], &(FEAT | features::NI_STATUS).to_le_bytes());
        assert_eq!(&b[12..16], &3u32.to_le_bytes());
        assert_eq!(&b[16..24], &LO_NID4.to_le_bytes());
        assert_eq!(&b[24..28], &7u32.to_le_bytes());
        assert_eq!(&b[32..40], &0x0002_0000_0a01_0001u64.to_le_bytes());
        assert_eq!(&b[40..44], &STATUS_UP.to_le_bytes());
        assert_eq!(&b[56..60], &STATUS_DOWN.to_le_bytes());
        let p = PingInfo::parse(&b[..n], 4096).unwrap();
        assert_eq!(p.pid, 12345);
        assert_eq!(p.sequence(), 7);
        assert!(p.is_complete());
        assert_eq!(p.nid4_entries().collect::<Vec<_>>(), nis);
        assert_eq!(p.large_entries().count(), 0);
        assert_eq!(p.primary(), Some(nis[0].nid));
    }

    #[test]
    fn large_entries() {
        let nis = [
            ni("2001:db8::1@tcp", true),
            ni("10.1.0.1@tcp", true),
            ni("2001:db8::2@tcp1", false),
        ];
        let mut b = [0u8; 512];
        let n = encode(&mut b, FEAT, 12345, 1, &nis).unwrap();
        assert_eq!(n, 16 + 16 * 2 + 24 * 2);
        let p = PingInfo::parse(&b[..n], 4096).unwrap();
        assert_ne!(p.features & features::LARGE_ADDR, 0);
        assert_ne!(p.features & features::PRIMARY_LARGE, 0);
        assert_eq!(p.needed_len(), n);
        assert_eq!(p.nid4_entries().collect::<Vec<_>>(), [nis[1]]);
        let large: Vec<_> = p.large_entries().map(|e| e.unwrap()).collect();
        assert_eq!(large, [nis[0], nis[2]]);
        assert_eq!(p.primary(), Some(nis[0].nid));
    }

    /// Rewrites `nid`'s status word in place, as lnet.ko does.
    fn rewrite(b: &mut [u8], nid: Nid, status: u32) -> Option<usize> {
        let at = status_offset(b, nid)?;
        b[at..at + 4].copy_from_slice(&status.to_le_bytes());
        Some(at)
    }

    #[test]
    fn status_rewritten_in_place() {
        let mut nis = [
            ni("2001:db8::1@tcp", true),
            ni("10.1.0.1@tcp", true),
            ni("10.2.0.1@tcp1", true),
            ni("2001:db8::2@tcp1", false),
        ];
        let mut b = [0u8; 512];
        let n = encode(&mut b, FEAT, 12345, 9, &nis).unwrap();
        let before = b;
        for (i, up) in [(2, false), (0, false), (3, true)] {
            let at = rewrite(
                &mut b[..n],
                nis[i].nid,
                if up { STATUS_UP } else { STATUS_DOWN },
            );
            assert_eq!(at.map(|a| a % 4), Some(0));
            nis[i].status = if up { STATUS_UP } else { STATUS_DOWN };
        }
        let p = PingInfo::parse(&b[..n], 4096).unwrap();
        // Only status words changed: same sequence, same NIDs.
        assert_eq!(p.sequence(), 9);
        assert_eq!(p.nid4_entries().collect::<Vec<_>>(), [nis[1], nis[2]]);
        let large: Vec<_> = p.large_entries().map(|e| e.unwrap()).collect();
        assert_eq!(large, [nis[0], nis[3]]);
        let changed = (0..n).filter(|&i| b[i] != before[i]).count();
        assert!(changed <= 12, "{changed} bytes changed");
        // Loopback and unknown NIDs have no word to rewrite.
        assert_eq!(status_offset(&b[..n], Nid::LO), None);
        assert_eq!(
            status_offset(&b[..n], Nid::parse("10.9.9.9@tcp").unwrap()),
            None
        );
        assert_eq!(status_offset(&b[..8], nis[1].nid), None);
    }

    #[test]
    fn truncated_reply_says_how_much_it_needs() {
        let nis: Vec<_> = (1..=20)
            .map(|i| ni(&std::format!("10.1.0.{i}@tcp"), true))
            .collect();
        let mut b = [0u8; 1024];
        let n = encode(&mut b, FEAT, 12345, 1, &nis).unwrap();
        let p = PingInfo::parse(&b[..MIN_SIZE], 4096).unwrap();
        assert!(!p.is_complete());
        assert_eq!(p.needed_len(), n);
        assert_eq!(p.nid4_entries().count(), 15);
    }

    #[test]
    fn validation() {
        let mut b = [0u8; MIN_SIZE];
        let n = encode(&mut b, FEAT, 12345, 1, &[ni("10.1.0.1@tcp", true)]).unwrap();
        assert!(PingInfo::parse(&b[..n], 4096).is_ok());
        assert_eq!(
            PingInfo::parse(&b[..n], 1).map(|_| ()),
            Err(PingError::BadCount(2))
        );
        let mut x = b;
        x[0] = 0;
        assert!(matches!(
            PingInfo::parse(&x, 4096),
            Err(PingError::BadMagic(_))
        ));
        let mut x = b;
        x[4] = features::MULTI_RAIL as u8;
        assert_eq!(
            PingInfo::parse(&x, 4096).map(|_| ()),
            Err(PingError::NoStatus)
        );
        let mut x = b;
        x[5] = 1;
        assert_eq!(
            PingInfo::parse(&x, 4096).map(|_| ()),
            Err(PingError::UnknownFeatures(0x100))
        );
        let mut x = b;
        x[12..16].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(
            PingInfo::parse(&x, 4096).map(|_| ()),
            Err(PingError::BadCount(0))
        );
        let mut x = b;
        x[16] = 1;
        assert_eq!(
            PingInfo::parse(&x, 4096).map(|_| ()),
            Err(PingError::NoLoopback)
        );
        assert_eq!(
            PingInfo::parse(&b[..20], 4096).map(|_| ()),
            Err(PingError::Short)
        );
    }

    #[test]
    fn big_endian_sender() {
        let mut b = [0u8; 48];
        b[0..4].copy_from_slice(&PING_MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&features::NI_STATUS.to_be_bytes());
        b[8..12].copy_from_slice(&12345u32.to_be_bytes());
        b[12..16].copy_from_slice(&2u32.to_be_bytes());
        b[16..24].copy_from_slice(&LO_NID4.to_be_bytes());
        b[24..28].copy_from_slice(&9u32.to_be_bytes());
        b[32..40].copy_from_slice(&0x0002_0000_0a01_0001u64.to_be_bytes());
        b[40..44].copy_from_slice(&STATUS_UP.to_be_bytes());
        let p = PingInfo::parse(&b, 4096).unwrap();
        assert_eq!((p.pid, p.sequence()), (12345, 9));
        assert_eq!(
            p.nid4_entries().collect::<Vec<_>>(),
            [ni("10.1.0.1@tcp", true)]
        );
    }

    proptest! {
        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(p) = PingInfo::parse(&b, 4096) {
                let _ = p.nid4_entries().count();
                let _ = p.large_entries().count();
                let _ = p.primary();
            }
        }

        #[test]
        fn round_trip(addrs in proptest::collection::vec((any::<u32>(), any::<[u8; 16]>(), any::<bool>(), any::<bool>()), 0..12), seq: u32) {
            let tcp = super::super::nid::Net::new(super::super::nid::lnd::SOCK, 0);
            let nis: Vec<NiStatus> = addrs.iter().map(|(a4, a16, v6, up)| NiStatus {
                nid: if *v6 { Nid::new6(tcp, (*a16).into()) } else { Nid::new4(tcp, *a4) },
                status: if *up { STATUS_UP } else { STATUS_DOWN },
            }).collect();
            let mut b = [0u8; 1024];
            let n = encode(&mut b, FEAT, 12345, seq, &nis).unwrap();
            let p = PingInfo::parse(&b[..n], 4096).unwrap();
            prop_assert!(p.is_complete());
            prop_assert_eq!(p.sequence(), seq);
            let small: Vec<_> = nis.iter().copied().filter(|n| n.nid.to_nid4().is_some()).collect();
            let large: Vec<_> = nis.iter().copied().filter(|n| n.nid.to_nid4().is_none()).collect();
            prop_assert_eq!(p.nid4_entries().collect::<Vec<_>>(), small);
            prop_assert_eq!(p.large_entries().map(|e| e.unwrap()).collect::<Vec<_>>(), large);
            prop_assert_eq!(p.primary(), nis.first().map(|n| n.nid));
            // Each NI's word is found where its status is, and nowhere
            // else changes when it is flipped (duplicate NIDs: the first).
            for (i, x) in nis.iter().enumerate() {
                if nis[..i].iter().any(|y| y.nid == x.nid) {
                    continue;
                }
                let mut c = b;
                let at = status_offset(&c[..n], x.nid).unwrap();
                prop_assert_eq!(at % 4, 0);
                prop_assert_eq!(&c[at..at + 4], &x.status.to_le_bytes()[..]);
                c[at..at + 4].copy_from_slice(&(!x.status).to_le_bytes());
                let q = PingInfo::parse(&c[..n], 4096).unwrap();
                prop_assert_eq!(q.sequence(), seq);
                let flipped = q.nid4_entries().chain(q.large_entries().map(|e| e.unwrap()))
                    .filter(|e| e.nid == x.nid && e.status == !x.status).count();
                prop_assert_eq!(flipped, 1);
            }
        }

        #[test]
        fn status_offset_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200), a: u32) {
            let tcp = super::super::nid::Net::new(super::super::nid::lnd::SOCK, 0);
            let _ = status_offset(&b, Nid::new4(tcp, a));
            let _ = status_offset(&b, Nid::new6(tcp, [a as u8; 16].into()));
        }
    }
}
