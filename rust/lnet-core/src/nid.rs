//! NIDs and nets: Lustre's text forms (`192.168.1.2@tcp`, `10.0.0.1@tcp1`,
//! `2001:db8::1@tcp`, `0@lo`, `5@kfi`), the 64-bit NID4 and the 20-byte large
//! NID of wire.md §1.
//!
//! Parsing follows the kernel's `libcfs_strnid`/`libcfs_str2net`, with these
//! deliberate differences (each tested below):
//! - net numbers above 65535 are refused (Lustre lets them spill into the
//!   type bits);
//! - no whitespace anywhere (`tcp 1` and ` 1.2.3.4@tcp` are refused);
//! - `lo` takes only the address `0` (Lustre maps any text to `0@lo`);
//! - IPv6 scope suffixes (`%eth0`) are refused.

use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

/// LND type numbers (`nidstr.h`).
pub mod lnd {
    /// socklnd, `tcp`
    pub const SOCK: u8 = 2;
    /// o2iblnd, `o2ib`
    pub const O2IB: u8 = 5;
    /// loopback, `lo`
    pub const LO: u8 = 9;
    /// gnilnd, `gni`
    pub const GNI: u8 = 13;
    /// gnilnd over IP, `gip`
    pub const GNIIP: u8 = 14;
    /// Portals 4, `ptlf`
    pub const PTL4: u8 = 15;
    /// kfilnd, `kfi`
    pub const KFI: u8 = 16;
    /// efalnd, `efa`
    pub const EFA: u8 = 18;
    /// bxi3lnd, `bxi3f`
    pub const BXI3: u8 = 19;
    /// The type of `LNET_ANY_NID`.
    pub const ANY: u8 = 0xff;
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum AddrSyntax {
    /// Dotted quad; IPv6 too when `large`.
    Ip { large: bool },
    /// Decimal or 0x hex.
    Number,
    /// Always 0.
    Lo,
}

struct LndName {
    name: &'static str,
    lnd: u8,
    syntax: AddrSyntax,
}

// Lustre's table order: the first name that prefixes the text wins.
const LNDS: [LndName; 9] = [
    LndName {
        name: "lo",
        lnd: lnd::LO,
        syntax: AddrSyntax::Lo,
    },
    LndName {
        name: "tcp",
        lnd: lnd::SOCK,
        syntax: AddrSyntax::Ip { large: true },
    },
    LndName {
        name: "o2ib",
        lnd: lnd::O2IB,
        syntax: AddrSyntax::Ip { large: false },
    },
    LndName {
        name: "gni",
        lnd: lnd::GNI,
        syntax: AddrSyntax::Number,
    },
    LndName {
        name: "gip",
        lnd: lnd::GNIIP,
        syntax: AddrSyntax::Ip { large: false },
    },
    LndName {
        name: "ptlf",
        lnd: lnd::PTL4,
        syntax: AddrSyntax::Number,
    },
    LndName {
        name: "kfi",
        lnd: lnd::KFI,
        syntax: AddrSyntax::Number,
    },
    LndName {
        name: "efa",
        lnd: lnd::EFA,
        syntax: AddrSyntax::Ip { large: true },
    },
    LndName {
        name: "bxi3f",
        lnd: lnd::BXI3,
        syntax: AddrSyntax::Number,
    },
];

fn lnd_info(lnd: u8) -> Option<&'static LndName> {
    LNDS.iter().find(|l| l.lnd == lnd)
}

/// The name of an LND type in NIDs and nets, if it has one.
pub fn lnd_name(lnd: u8) -> Option<&'static str> {
    lnd_info(lnd).map(|l| l.name)
}

/// The LND whose name starts `s`, found as [`Net::parse`] finds it: its
/// type, the length of its name, and whether its addresses are IP
/// addresses (dotted quads) rather than numbers.
pub fn lnd_prefix(s: &str) -> Option<(u8, usize, bool)> {
    let l = LNDS.iter().find(|l| s.starts_with(l.name))?;
    Some((
        l.lnd,
        l.name.len(),
        matches!(l.syntax, AddrSyntax::Ip { .. }),
    ))
}

/// Why a NID or net text was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NidError {
    /// No LND name starts the net text.
    UnknownNet,
    /// The net number is not a decimal number.
    BadNetNumber,
    /// The net number is above 65535.
    NetNumberTooLarge,
    /// `lo` takes no net number.
    LoNumbered,
    /// The address does not fit the net's address syntax.
    BadAddress,
    /// An IPv6 address on a net whose LND has only 4-byte addresses.
    LargeAddressNotSupported,
}

impl fmt::Display for NidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NidError::UnknownNet => "unknown network type",
            NidError::BadNetNumber => "bad network number",
            NidError::NetNumberTooLarge => "network number above 65535",
            NidError::LoNumbered => "the loopback network has no number",
            NidError::BadAddress => "bad address for this network",
            NidError::LargeAddressNotSupported => "this network takes IPv4 addresses only",
        })
    }
}

/// A net: LND type and net number (`LNET_MKNET`), as `tcp1` or `o2ib`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Net(u32);

impl Net {
    /// `LNET_NET_ANY`.
    pub const ANY: Net = Net(u32::MAX);
    /// The loopback net, `lo`.
    pub const LO: Net = Net::new(lnd::LO, 0);

    /// The net of LND type `lnd` with number `num`.
    pub const fn new(lnd: u8, num: u16) -> Net {
        Net(((lnd as u32) << 16) | num as u32)
    }

    /// From the 32-bit form used in NID4s and ioctls.
    pub const fn from_u32(v: u32) -> Net {
        Net(v)
    }

    /// The 32-bit form.
    pub const fn as_u32(self) -> u32 {
        self.0
    }

    /// The LND type (`LNET_NETTYP`).
    pub const fn lnd(self) -> u8 {
        (self.0 >> 16) as u8
    }

    /// The net number (`LNET_NETNUM`).
    pub const fn num(self) -> u16 {
        self.0 as u16
    }

    /// Parses `tcp`, `tcp1`, `o2ib3`, `lo`.
    pub fn parse(s: &str) -> Result<Net, NidError> {
        let l = LNDS
            .iter()
            .find(|l| s.starts_with(l.name))
            .ok_or(NidError::UnknownNet)?;
        let rest = s.get(l.name.len()..).unwrap_or("");
        if rest.is_empty() {
            return Ok(Net::new(l.lnd, 0));
        }
        if l.lnd == lnd::LO {
            return Err(NidError::LoNumbered);
        }
        if !rest.bytes().all(|b| b.is_ascii_digit()) {
            return Err(NidError::BadNetNumber);
        }
        let num: u32 = rest.parse().map_err(|_| NidError::NetNumberTooLarge)?;
        let num = u16::try_from(num).map_err(|_| NidError::NetNumberTooLarge)?;
        Ok(Net::new(l.lnd, num))
    }
}

impl fmt::Display for Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match lnd_name(self.lnd()) {
            Some(name) if self.num() == 0 => f.write_str(name),
            Some(name) => write!(f, "{name}{}", self.num()),
            None => write!(f, "<{}:{}>", self.lnd(), self.num()),
        }
    }
}

/// A 32-bit net as `libcfs_net2str_r` prints it: the LND type is all 16
/// upper bits, so `LNET_NET_ANY` is `<65535:65535>` (where [`Net`]'s
/// `Display` keeps the 8 bits a large NID has room for).
pub struct Net32(pub u32);

impl fmt::Display for Net32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lnd, num) = (self.0 >> 16, self.0 & 0xffff);
        match u8::try_from(lnd).ok().and_then(lnd_name) {
            Some(name) if num == 0 => f.write_str(name),
            Some(name) => write!(f, "{name}{num}"),
            None => write!(f, "<{lnd}:{num}>"),
        }
    }
}

/// The NID4 of a NID text (`libcfs_str2nid`): `LNET_NID_ANY` if the text
/// is not a NID, or is one whose address does not fit in 4 bytes.
pub fn str2nid4(s: &str) -> u64 {
    Nid::parse(s)
        .ok()
        .and_then(|n| n.to_nid4())
        .unwrap_or(u64::MAX)
}

/// A NID in its large form (`struct lnet_nid`): an address of 4 to 16 bytes
/// on a net. 4-byte NIDs convert to and from the 64-bit NID4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Nid {
    /// Address bytes beyond 4 (0 or 12).
    size: u8,
    lnd: u8,
    num: u16,
    /// Big-endian address; bytes past `size + 4` are zero.
    addr: [u8; 16],
}

/// Bytes of a large NID on the wire (`sizeof(struct lnet_nid)`).
pub const NID_WIRE_MAX: usize = 20;

impl Nid {
    /// `LNET_ANY_NID`.
    pub const ANY: Nid = Nid {
        size: 0,
        lnd: lnd::ANY,
        num: 0xffff,
        addr: [0xff; 16],
    };
    /// `0@lo`.
    pub const LO: Nid = Nid {
        size: 0,
        lnd: lnd::LO,
        num: 0,
        addr: [0; 16],
    };

    /// A NID with a 4-byte address (IPv4 in host order, or a number).
    ///
    /// Type 0xff is reserved for ANY: a NID of that type is `ANY` whatever
    /// its address, so every decoder gives one canonical value (a fuzzer
    /// found NID4s like `0x00ff_ffff_0d01_011d` otherwise failing to round
    /// trip).
    pub const fn new4(net: Net, addr: u32) -> Nid {
        if net.lnd() == lnd::ANY {
            return Nid::ANY;
        }
        let b = addr.to_be_bytes();
        Nid {
            size: 0,
            lnd: net.lnd(),
            num: net.num(),
            addr: [b[0], b[1], b[2], b[3], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        }
    }

    /// A NID with an IPv6 address (`ANY` for type 0xff, as `new4`).
    pub const fn new6(net: Net, addr: Ipv6Addr) -> Nid {
        if net.lnd() == lnd::ANY {
            return Nid::ANY;
        }
        Nid {
            size: 12,
            lnd: net.lnd(),
            num: net.num(),
            addr: addr.octets(),
        }
    }

    /// Whether this is `LNET_ANY_NID`.
    pub const fn is_any(&self) -> bool {
        self.lnd == lnd::ANY
    }

    /// The net.
    pub const fn net(&self) -> Net {
        Net::new(self.lnd, self.num)
    }

    /// The significant address bytes, big-endian.
    pub fn addr_bytes(&self) -> &[u8] {
        self.addr
            .get(..usize::from(self.size) + 4)
            .unwrap_or(&self.addr)
    }

    /// Lustre's `nidhash`: the net XORed with each 32-bit word of the
    /// address as the host loads it (the words are big-endian in memory).
    /// o2iblnd breaks a connection race by it, so both ends of a race,
    /// ours or Lustre's, must agree on it.
    pub fn nidhash(&self) -> u64 {
        self.addr
            .chunks_exact(4)
            .fold(u64::from(self.net().as_u32()), |h, w| {
                h ^ u64::from(u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            })
    }

    /// The 4-byte address, if the address is 4 bytes.
    pub fn addr4(&self) -> Option<u32> {
        match self.addr_bytes() {
            &[a, b, c, d] => Some(u32::from_be_bytes([a, b, c, d])),
            _ => None,
        }
    }

    /// From a NID4 (`lnet_nid4_to_nid`); `LNET_NID_ANY` gives `ANY`.
    pub const fn from_nid4(nid4: u64) -> Nid {
        if nid4 == u64::MAX {
            return Nid::ANY;
        }
        Nid::new4(Net::from_u32((nid4 >> 32) as u32), nid4 as u32)
    }

    /// The NID4, if the address is 4 bytes (`lnet_nid_to_nid4`).
    pub fn to_nid4(&self) -> Option<u64> {
        if self.is_any() {
            return Some(u64::MAX);
        }
        Some((u64::from(self.net().as_u32()) << 32) | u64::from(self.addr4()?))
    }

    /// Bytes this NID takes on the wire (`NID_BYTES`).
    pub fn wire_len(&self) -> usize {
        usize::from(self.size) + 8
    }

    /// Writes the wire form (wire.md §1.2) into `out`, returning the bytes
    /// used, or `None` if `out` is too small.
    pub fn encode(&self, out: &mut [u8]) -> Option<usize> {
        let n = self.wire_len();
        let out = out.get_mut(..n)?;
        let (head, addr) = out.split_at_mut(4);
        head.copy_from_slice(&[self.size, self.lnd, (self.num >> 8) as u8, self.num as u8]);
        addr.copy_from_slice(self.addr_bytes());
        Some(n)
    }

    /// Reads a wire-form NID from the start of `b`, returning it and the
    /// bytes it took.
    pub fn decode(b: &[u8]) -> Result<(Nid, usize), NidError> {
        let (&size, rest) = b.split_first().ok_or(NidError::BadAddress)?;
        if size != 0 && size != 12 {
            return Err(NidError::BadAddress);
        }
        // size is 0 or 12: n is 8 or 20.
        let n = usize::from(size) + 8;
        let rest = rest.get(..n - 1).ok_or(NidError::BadAddress)?;
        let (lnd, rest) = rest.split_first().ok_or(NidError::BadAddress)?;
        let (num, addr) = rest.split_first_chunk::<2>().ok_or(NidError::BadAddress)?;
        let mut nid = Nid {
            size,
            lnd: *lnd,
            num: u16::from_be_bytes(*num),
            addr: [0; 16],
        };
        if nid.lnd == lnd::ANY {
            return Ok((Nid::ANY, n));
        }
        nid.addr
            .get_mut(..addr.len())
            .ok_or(NidError::BadAddress)?
            .copy_from_slice(addr);
        Ok((nid, n))
    }

    /// Parses a NID: `addr@net`, `addr` alone (net `tcp`), or `<?>` (ANY).
    pub fn parse(s: &str) -> Result<Nid, NidError> {
        let (addr, net) = match s.split_once('@') {
            Some((a, n)) => (a, Net::parse(n)?),
            None if s == "<?>" => return Ok(Nid::ANY),
            None => (s, Net::new(lnd::SOCK, 0)),
        };
        let syntax = lnd_info(net.lnd())
            .map(|l| l.syntax)
            .ok_or(NidError::UnknownNet)?;
        match syntax {
            AddrSyntax::Lo if addr == "0" => Ok(Nid::LO),
            AddrSyntax::Lo => Err(NidError::BadAddress),
            AddrSyntax::Number => Ok(Nid::new4(net, parse_number(addr)?)),
            AddrSyntax::Ip { large } => {
                if addr.contains(':') {
                    if !large {
                        return Err(NidError::LargeAddressNotSupported);
                    }
                    let a: Ipv6Addr = addr.parse().map_err(|_| NidError::BadAddress)?;
                    Ok(Nid::new6(net, a))
                } else {
                    Ok(Nid::new4(net, parse_ipv4(addr)?))
                }
            }
        }
    }
}

/// Four decimal parts of 0..=255; leading zeros are decimal (`in4_pton`).
pub(crate) fn parse_ipv4(s: &str) -> Result<u32, NidError> {
    let mut v: u32 = 0;
    let mut parts = 0;
    for part in s.split('.') {
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(NidError::BadAddress);
        }
        let p: u32 = part.parse().map_err(|_| NidError::BadAddress)?;
        if p > 255 {
            return Err(NidError::BadAddress);
        }
        v = (v << 8) | p;
        parts += 1;
    }
    if parts != 4 {
        return Err(NidError::BadAddress);
    }
    Ok(v)
}

/// Decimal or `0x`/`0X` hex, 32 bits.
fn parse_number(s: &str) -> Result<u32, NidError> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(NidError::BadAddress);
    }
    u32::from_str_radix(digits, radix).map_err(|_| NidError::BadAddress)
}

impl fmt::Display for Nid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_any() {
            return f.write_str("<?>");
        }
        let net = self.net();
        match (lnd_info(self.lnd).map(|l| l.syntax), self.addr_bytes()) {
            (Some(AddrSyntax::Ip { .. }), &[a, b, c, d]) => {
                write!(f, "{}", Ipv4Addr::new(a, b, c, d))?
            }
            (Some(AddrSyntax::Ip { large: true }), _) => {
                write!(f, "{}", Ipv6Addr::from(self.addr))?
            }
            (Some(_), _) => write!(f, "{}", self.addr4().unwrap_or(0))?,
            (None, bytes) => {
                for (i, w) in bytes.chunks(4).enumerate() {
                    let mut word = [0u8; 4];
                    word.get_mut(..w.len())
                        .unwrap_or(&mut [])
                        .copy_from_slice(w);
                    write!(
                        f,
                        "{}{:x}",
                        if i == 0 { "" } else { ":" },
                        u32::from_be_bytes(word)
                    )?;
                }
            }
        }
        write!(f, "@{net}")
    }
}

/// A process id in Lustre's text form (`libcfs_idstr`): `12345-0@lo`,
/// `U7-10.0.0.1@tcp` for a user-space pid, `LNET_PID_ANY-<nid>` for any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessId {
    /// The NID.
    pub nid: Nid,
    /// The pid, with [`PID_USERFLAG`] for a user-space process, or
    /// `LNET_PID_ANY`.
    pub pid: u32,
}

/// `LNET_PID_USERFLAG`: the pid is a user-space process's.
pub const PID_USERFLAG: u32 = 0x8000_0000;

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pid == super::md::PID_ANY {
            return write!(f, "LNET_PID_ANY-{}", self.nid);
        }
        let user = if self.pid & PID_USERFLAG != 0 {
            "U"
        } else {
            ""
        };
        write!(f, "{user}{}-{}", self.pid & !PID_USERFLAG, self.nid)
    }
}

/// Writes `v` into `out` as C's `snprintf` does: cut short to leave room
/// for the terminating NUL, which is always written unless `out` is empty.
/// Returns the bytes written before the NUL.
pub fn write_cstr(out: &mut [u8], v: &dyn fmt::Display) -> usize {
    struct Cut<'a> {
        out: &'a mut [u8],
        len: usize,
    }
    impl fmt::Write for Cut<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            // Room for the text, less one byte for the NUL.
            let room = self.out.len().saturating_sub(1).saturating_sub(self.len);
            let n = s.len().min(room);
            if let (Some(d), Some(src)) = (
                self.out.get_mut(self.len..self.len + n),
                s.as_bytes().get(..n),
            ) {
                d.copy_from_slice(src);
                self.len += n;
            }
            Ok(())
        }
    }
    let mut w = Cut { out, len: 0 };
    let _ = fmt::Write::write_fmt(&mut w, format_args!("{v}"));
    let len = w.len;
    if let Some(b) = out.get_mut(len) {
        *b = 0;
    }
    len
}

/// The CPU partition of a NID4 among `number` partitions, as Lustre's
/// `lnet_nid4_cpt_hash` gives it for IP and number NIDs: the sum of the
/// NID4's eight bytes, modulo `number` (0 when there is one partition or
/// none). Lustre hashes `kfi` NIDs differently; lnet-rs has no kfilnd.
pub fn cpt_of_nid4(nid4: u64, number: u32) -> u32 {
    if number <= 1 {
        return 0;
    }
    let sum: u32 = nid4.to_be_bytes().iter().map(|b| u32::from(*b)).sum();
    sum % number
}

#[cfg(test)]
mod tests {
    #[test]
    fn nidhash_is_lustres() {
        let h = |s: &str| super::Nid::parse(s).unwrap().nidhash();
        // o2ib is LND type 5: the net of o2ib1 is 0x50001.
        let net = 0x5_0001u64;
        let word = |a: [u8; 4]| u64::from(u32::from_ne_bytes(a));
        assert_eq!(h("10.2.0.1@o2ib1"), net ^ word([10, 2, 0, 1]));
        // Unlike the NID's own order, the hash orders 10.1.0.2 after
        // 10.2.0.1 on a little-endian host (the last octet weighs most).
        #[cfg(target_endian = "little")]
        {
            assert!(h("10.1.0.2@o2ib") > h("10.2.0.1@o2ib"));
            assert!(h("10.2.0.1@o2ib") < h("10.2.0.2@o2ib"));
        }
        assert_eq!(h("0@lo"), 0x9_0000);
    }

    use super::*;
    extern crate std;
    use proptest::prelude::*;
    use std::string::ToString;

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn nets() {
        assert_eq!(Net::parse("tcp"), Ok(Net(0x0002_0000)));
        assert_eq!(Net::parse("tcp0"), Ok(Net(0x0002_0000)));
        assert_eq!(Net::parse("tcp1"), Ok(Net(0x0002_0001)));
        assert_eq!(Net::parse("o2ib3"), Ok(Net(0x0005_0003)));
        assert_eq!(Net::parse("tcp01"), Ok(Net(0x0002_0001)));
        assert_eq!(Net::parse("lo"), Ok(Net::LO));
        assert_eq!(Net::parse("tcp65535").map(|n| n.num()), Ok(65535));
        assert_eq!(Net::parse("tcp65536"), Err(NidError::NetNumberTooLarge));
        assert_eq!(
            Net::parse("tcp99999999999"),
            Err(NidError::NetNumberTooLarge)
        );
        assert_eq!(Net::parse("lo0"), Err(NidError::LoNumbered));
        for bad in [
            "", "TCP", "Tcp1", " tcp", "tcp 1", "tcp1 ", "tcp0x1", "tcpx", "tcp-", "tcp\n",
            "tcp+1", "eth",
        ] {
            assert!(Net::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Net::parse("tcp0").map(|n| n.to_string()).as_deref(),
            Ok("tcp")
        );
        assert_eq!(
            Net::parse("o2ib3").map(|n| n.to_string()).as_deref(),
            Ok("o2ib3")
        );
        assert_eq!(Net::new(17, 0).to_string(), "<17:0>");
        assert_eq!(Net::ANY.to_string(), "<255:65535>");
    }

    #[test]
    fn nid_forms() {
        let n = nid("192.168.1.2@tcp");
        assert_eq!(n.to_nid4(), Some(0x0002_0000_c0a8_0102));
        assert_eq!(n.to_string(), "192.168.1.2@tcp");
        assert_eq!(nid("10.0.0.1@tcp1").to_string(), "10.0.0.1@tcp1");
        assert_eq!(nid("10.0.0.1@o2ib").net(), Net::new(lnd::O2IB, 0));
        assert_eq!(nid("0@lo"), Nid::LO);
        assert_eq!(Nid::LO.to_string(), "0@lo");
        assert_eq!(nid("010.001.1.1@tcp").to_string(), "10.1.1.1@tcp");
        assert_eq!(nid("10.0.0.1"), nid("10.0.0.1@tcp"));
        assert_eq!(nid("0x1f@gni").to_string(), "31@gni");
        assert_eq!(nid("017@kfi").to_string(), "17@kfi");
        assert_eq!(nid("7@kfi2").to_string(), "7@kfi2");
        assert_eq!(nid("<?>"), Nid::ANY);
        assert_eq!(Nid::ANY.to_string(), "<?>");
        assert_eq!(Nid::from_nid4(u64::MAX), Nid::ANY);
    }

    #[test]
    fn ipv6() {
        let n = nid("2001:db8::1@tcp1");
        assert_eq!(n.to_string(), "2001:db8::1@tcp1");
        assert_eq!(n.wire_len(), 20);
        assert_eq!(n.to_nid4(), None);
        assert_eq!(
            nid("2001:DB8:0:0:0:0:0:1@efa").to_string(),
            "2001:db8::1@efa"
        );
        assert_eq!(
            Nid::parse("2001:db8::1@o2ib"),
            Err(NidError::LargeAddressNotSupported)
        );
        assert_eq!(Nid::parse("[2001:db8::1]@tcp"), Err(NidError::BadAddress));
        assert_eq!(Nid::parse("fe80::1%eth0@tcp"), Err(NidError::BadAddress));
    }

    #[test]
    fn refused() {
        for bad in [
            "",
            "@tcp",
            "1.2.3@tcp",
            "1.2.3.4.5@tcp",
            "256.1.1.1@tcp",
            " 1.2.3.4@tcp",
            "1. 2.3.4@tcp",
            "1.2.3.4x@tcp",
            "1.2.3.4@tcp@x",
            "1.2.3.4@",
            "1.2.3.4@nope",
            "foo@lo",
            "@lo",
            "x@gni",
            "0x@gni",
            "4294967296@kfi",
            "-1@kfi",
            "0001.2.3.4@tcp",
            "<?>@tcp",
        ] {
            assert!(Nid::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn type_any_is_canonical() {
        // Found by fuzzing the header decoder: a NID4 of type 0xff that is
        // not all ones must still be ANY, and round-trip as ANY.
        let n = Nid::from_nid4(0x00ff_ffff_0d01_011d);
        assert_eq!(n, Nid::ANY);
        assert_eq!(n.to_nid4(), Some(u64::MAX));
        assert_eq!(Nid::from_nid4(u64::MAX), Nid::ANY);
        assert_eq!(
            Nid::new6(Net::new(lnd::ANY, 3), Ipv6Addr::LOCALHOST),
            Nid::ANY
        );
    }

    #[test]
    fn wire() {
        let mut b = [0u8; NID_WIRE_MAX];
        let n = nid("192.168.1.2@tcp");
        assert_eq!(n.encode(&mut b), Some(8));
        // The first 8 bytes of a 4-byte NID are the big-endian NID4.
        assert_eq!(&b[..8], &0x0002_0000_c0a8_0102u64.to_be_bytes());
        assert_eq!(Nid::decode(&b), Ok((n, 8)));
        let v6 = nid("2001:db8::1@tcp");
        assert_eq!(v6.encode(&mut b), Some(20));
        assert_eq!(Nid::decode(&b), Ok((v6, 20)));
        assert_eq!(v6.encode(&mut [0u8; 19]), None);
        assert!(Nid::decode(&b[..19]).is_err());
        assert!(Nid::decode(&[5, 2, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 0]).is_err());
        assert!(Nid::decode(&[]).is_err());
    }

    fn any_nid() -> impl Strategy<Value = Nid> {
        let idx = 0..LNDS.len();
        (
            idx,
            any::<u16>(),
            any::<u32>(),
            any::<[u8; 16]>(),
            any::<bool>(),
        )
            .prop_map(|(i, num, a4, a16, v6)| {
                let l = &LNDS[i];
                match l.syntax {
                    AddrSyntax::Lo => Nid::LO,
                    AddrSyntax::Ip { large: true } if v6 => {
                        Nid::new6(Net::new(l.lnd, num), Ipv6Addr::from(a16))
                    }
                    _ => Nid::new4(Net::new(l.lnd, num), a4),
                }
            })
    }

    proptest! {
        #[test]
        fn text_round_trip(n in any_nid()) {
            prop_assert_eq!(Nid::parse(&n.to_string()), Ok(n));
        }

        #[test]
        fn wire_round_trip(n in any_nid()) {
            let mut b = [0u8; NID_WIRE_MAX];
            let used = n.encode(&mut b);
            prop_assert_eq!(used, Some(n.wire_len()));
            prop_assert_eq!(Nid::decode(&b), Ok((n, n.wire_len())));
            if let Some(nid4) = n.to_nid4() {
                prop_assert_eq!(Nid::from_nid4(nid4), n);
            }
        }

        #[test]
        fn parsers_never_panic(s in "\\PC{0,40}") {
            let _ = Nid::parse(&s);
            let _ = Net::parse(&s);
        }

        #[test]
        fn decode_never_panics(b in proptest::collection::vec(any::<u8>(), 0..24)) {
            if let Ok((n, used)) = Nid::decode(&b) {
                prop_assert!(used <= b.len());
                prop_assert!(n.wire_len() == used || n.is_any());
            }
        }
    }
    #[test]
    fn process_ids() {
        let id = |pid, s: &str| ProcessId { nid: nid(s), pid }.to_string();
        assert_eq!(id(12345, "0@lo"), "12345-0@lo");
        assert_eq!(
            id(super::super::md::PID_ANY, "10.0.0.1@tcp"),
            "LNET_PID_ANY-10.0.0.1@tcp"
        );
        assert_eq!(id(PID_USERFLAG | 7, "10.0.0.1@tcp1"), "U7-10.0.0.1@tcp1");
        assert_eq!(id(0, "<?>"), "0-<?>");
    }

    #[test]
    fn cstr_writes() {
        let n = nid("192.168.1.2@tcp1");
        let mut b = [0xaau8; 64];
        assert_eq!(write_cstr(&mut b, &n), 16);
        assert_eq!(&b[..17], b"192.168.1.2@tcp1\0");
        let mut b = [0xaau8; 8];
        assert_eq!(write_cstr(&mut b, &n), 7);
        assert_eq!(&b, b"192.168\0");
        let mut b = [0xaau8; 1];
        assert_eq!(write_cstr(&mut b, &n), 0);
        assert_eq!(b, [0]);
        assert_eq!(write_cstr(&mut [], &n), 0);
        let mut b = [0xaau8; 4];
        assert_eq!(write_cstr(&mut b, &Nid::ANY), 3);
        assert_eq!(&b, b"<?>\0");
    }

    #[test]
    fn nid4_strings() {
        // libcfs_nid2str_r's cases: a NID4 of each address syntax, ANY,
        // and an LND with no name.
        let s = |n: u64| Nid::from_nid4(n).to_string();
        assert_eq!(s(0x0002_0001_c0a8_0102), "192.168.1.2@tcp1");
        assert_eq!(s(0x0009_0000_0000_0000), "0@lo");
        assert_eq!(s(0x0010_0002_0000_0005), "5@kfi2");
        assert_eq!(s(u64::MAX), "<?>");
        assert_eq!(s(0x0011_0003_0000_00ff), "ff@<17:3>");
    }

    #[test]
    fn net32_and_str2nid4() {
        assert_eq!(Net32(0x0002_0000).to_string(), "tcp");
        assert_eq!(Net32(0x0005_0003).to_string(), "o2ib3");
        assert_eq!(Net32(u32::MAX).to_string(), "<65535:65535>");
        assert_eq!(Net32(0x0011_0002).to_string(), "<17:2>");
        assert_eq!(Net32(0x0109_0000).to_string(), "<265:0>");
        assert_eq!(str2nid4("192.168.1.2@tcp1"), 0x0002_0001_c0a8_0102);
        assert_eq!(str2nid4("192.168.1.2"), 0x0002_0000_c0a8_0102);
        assert_eq!(str2nid4("0@lo"), 0x0009_0000_0000_0000);
        assert_eq!(str2nid4("0x10@kfi"), 0x0010_0000_0000_0010);
        for bad in ["", "1.2.3@tcp", "1.2.3.4@nope", "2001:db8::1@tcp", "<?>"] {
            assert_eq!(str2nid4(bad), u64::MAX, "{bad:?}");
        }
    }

    #[test]
    fn cpt_hash() {
        let n = nid("192.168.1.2@tcp").to_nid4().unwrap_or(0);
        // 192 + 168 + 1 + 2 + 2 (the tcp type byte) = 365.
        assert_eq!(cpt_of_nid4(n, 2), 1);
        assert_eq!(cpt_of_nid4(n, 3), 2);
        assert_eq!(cpt_of_nid4(n, 1), 0);
        assert_eq!(cpt_of_nid4(n, 0), 0);
        assert_eq!(cpt_of_nid4(u64::MAX, 4), (255 * 8) % 4);
    }

    proptest! {
        #[test]
        fn cpt_in_range(n in any::<u64>(), number in 1u32..64) {
            prop_assert!(cpt_of_nid4(n, number) < number);
        }

        #[test]
        fn cstr_never_overflows(n in any::<u64>(), len in 0usize..40) {
            let mut b = std::vec![0xaau8; len];
            let w = write_cstr(&mut b, &Nid::from_nid4(n));
            if len > 0 {
                prop_assert!(w < len);
                prop_assert_eq!(b[w], 0);
                let full = Nid::from_nid4(n).to_string();
                prop_assert_eq!(&b[..w], &full.as_bytes()[..w]);
            } else {
                prop_assert_eq!(w, 0);
            }
        }
    }
}
