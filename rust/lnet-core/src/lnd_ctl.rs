//! The LND commands of Lustre's /dev/lnet ioctls (Lustre's `lnd_ctl`):
//! `IOC_LIBCFS_GET_PEER`, `IOC_LIBCFS_GET_CONN` and
//! `IOC_LIBCFS_CLOSE_CONNECTION`, which `lctl --net NET peer_list`,
//! `conn_list` and `disconnect` send with a `struct libcfs_ioctl_data`.
//! LNet hands a command it does not know to the LND of the first NI on
//! the argument's `ioc_net`; the LND reads its request from the argument
//! and writes its answer into it, in the fields where `lctl` prints them
//! (Lustre's `ksocknal_ctl` and `kiblnd_ctl`). This is the argument as
//! an LND sees it ([`IocData`]), and each answer's layout.

use super::libcfs_ioctl::{get_u32, get_u64, off, put_u32, put_u64, DATA_LEN};

/// Command numbers (`_IOC_NR`) of the LND commands.
pub mod nr {
    /// `IOC_LIBCFS_CLOSE_CONNECTION`: `lctl disconnect [NID [IP]]`.
    pub const CLOSE_CONNECTION: u32 = 71;
    /// `IOC_LIBCFS_GET_CONN`: `lctl conn_list`, one connection per index.
    pub const GET_CONN: u32 = 73;
    /// `IOC_LIBCFS_GET_PEER`: `lctl peer_list`, one peer per index.
    pub const GET_PEER: u32 = 76;
}

/// `ioc_net`'s offset in `struct libcfs_ioctl_data`.
pub const NET: usize = 32;
/// `ioc_u32[0]`'s offset; `ioc_u32` has 7 entries.
pub const U32: usize = off::U32_0;
/// Entries of `ioc_u32`.
pub const NU32: usize = 7;

/// `LNET_NID_ANY` as a 64-bit NID: `lctl disconnect` without a NID.
pub const NID4_ANY: u64 = u64::MAX;
/// `LNET_PID_LUSTRE`, the pid of kernel LNet.
pub const PID_LUSTRE: u32 = 12345;

/// A checked `struct libcfs_ioctl_data` (its fixed part at least) that an
/// LND reads its request from and writes its answer into. Every field is
/// inside it, so reads and writes cannot fail.
pub struct IocData<'a> {
    buf: &'a mut [u8],
}

impl<'a> IocData<'a> {
    /// The argument, if it holds the whole structure.
    pub fn new(buf: &'a mut [u8]) -> Option<IocData<'a>> {
        (buf.len() >= DATA_LEN).then_some(IocData { buf })
    }

    fn u32_at(&self, at: usize) -> u32 {
        get_u32(self.buf, at).unwrap_or(0)
    }

    fn set_u32_at(&mut self, at: usize, v: u32) {
        // Inside the structure (checked in `new`).
        let _ = put_u32(self.buf, at, v);
    }

    /// `ioc_nid`.
    pub fn nid(&self) -> u64 {
        get_u64(self.buf, off::NID).unwrap_or(0)
    }

    /// `ioc_count`: the index a list asks for.
    pub fn count(&self) -> u32 {
        self.u32_at(off::COUNT)
    }

    /// `ioc_net`.
    pub fn net(&self) -> u32 {
        self.u32_at(NET)
    }

    /// `ioc_u32[i]`; 0 past the last.
    pub fn u32(&self, i: usize) -> u32 {
        if i < NU32 {
            self.u32_at(U32 + 4 * i)
        } else {
            0
        }
    }

    /// Sets `ioc_nid`.
    pub fn set_nid(&mut self, v: u64) {
        let _ = put_u64(self.buf, off::NID, v);
    }

    /// Sets `ioc_count`.
    pub fn set_count(&mut self, v: u32) {
        self.set_u32_at(off::COUNT, v);
    }

    /// Sets `ioc_flags`.
    pub fn set_flags(&mut self, v: u32) {
        self.set_u32_at(off::FLAGS, v);
    }

    /// Sets `ioc_u32[i]` (nothing past the last).
    pub fn set_u32(&mut self, i: usize, v: u32) {
        if i < NU32 {
            self.set_u32_at(U32 + 4 * i, v);
        }
    }
}

/// The net `buf`'s LND command is for (`ioc_net`), if it holds the
/// structure.
pub fn net_of(buf: &[u8]) -> Option<u32> {
    if buf.len() < DATA_LEN {
        return None;
    }
    get_u32(buf, NET)
}

/// A socklnd peer as `IOC_LIBCFS_GET_PEER` reports it
/// (`ksocknal_get_peer_info`): the address fields come from its
/// connection route, which only a peer we connect to has; one without a
/// route shows zeros there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SockPeer {
    /// Its NID.
    pub nid4: u64,
    /// Its pid.
    pub pid: u32,
    /// Our address towards it (host order).
    pub my_ip: u32,
    /// Its address (host order).
    pub peer_ip: u32,
    /// Its acceptor's port.
    pub port: u32,
    /// Live connections over the route.
    pub conn_count: u32,
    /// 1 with a route, else 0 (`lctl` prints it as `[n]`).
    pub share_count: u32,
}

impl SockPeer {
    /// Writes the answer where `jt_ptl_print_peers` reads it: `ioc_nid`,
    /// `ioc_count` the share count, `ioc_u32[0..5]` peer IP, port, my IP,
    /// connection count and pid.
    pub fn put(&self, d: &mut IocData<'_>) {
        d.set_nid(self.nid4);
        d.set_count(self.share_count);
        d.set_u32(0, self.peer_ip);
        d.set_u32(1, self.port);
        d.set_u32(2, self.my_ip);
        d.set_u32(3, self.conn_count);
        d.set_u32(4, self.pid);
    }
}

/// A socklnd connection as `IOC_LIBCFS_GET_CONN` reports it
/// (`ksocknal_ctl`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SockConn {
    /// Its peer's NID.
    pub nid4: u64,
    /// Its peer's pid.
    pub pid: u32,
    /// `SOCKLND_CONN_*`, as this side sees it.
    pub ctype: u32,
    /// The CPU partition of its scheduler.
    pub cpt: u32,
    /// Our address (host order).
    pub my_ip: u32,
    /// The peer's address and port (host order).
    pub peer_ip: u32,
    /// The peer's port.
    pub peer_port: u32,
    /// The socket's send and receive buffer sizes.
    pub tx_buf: u32,
    /// The receive buffer size.
    pub rx_buf: u32,
    /// Nagle's algorithm is on.
    pub nagle: bool,
}

impl SockConn {
    /// Writes the answer where `jt_ptl_print_connections` reads it:
    /// `ioc_nid`, `ioc_count` the send buffer, `ioc_flags` Nagle,
    /// `ioc_u32[0..7]` peer IP, peer port, my IP, type, CPT, receive
    /// buffer and pid.
    pub fn put(&self, d: &mut IocData<'_>) {
        d.set_nid(self.nid4);
        d.set_count(self.tx_buf);
        d.set_flags(u32::from(self.nagle));
        d.set_u32(0, self.peer_ip);
        d.set_u32(1, self.peer_port);
        d.set_u32(2, self.my_ip);
        d.set_u32(3, self.ctype);
        d.set_u32(4, self.cpt);
        d.set_u32(5, self.rx_buf);
        d.set_u32(6, self.pid);
    }
}

/// What `IOC_LIBCFS_CLOSE_CONNECTION` closes: the connections with a
/// NID (any with `LNET_NID_ANY`) and, for socklnd, a peer address (any
/// with 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Close {
    /// The peer's NID; None for every peer.
    pub nid4: Option<u64>,
    /// The peer's address (host order); None for any.
    pub ip: Option<u32>,
}

impl Close {
    /// The request in `d`: `ioc_nid` and `ioc_u32[0]`.
    pub fn of(d: &IocData<'_>) -> Close {
        let nid = d.nid();
        let ip = d.u32(0);
        Close {
            nid4: (nid != NID4_ANY).then_some(nid),
            ip: (ip != 0).then_some(ip),
        }
    }

    /// Whether it closes the connections of peer `nid4` whose far end
    /// is `ip` (`ksocknal_close_matching_conns`).
    pub fn matches(&self, nid4: Option<u64>, ip: u32) -> bool {
        self.nid4.map_or(true, |n| Some(n) == nid4) && self.ip.map_or(true, |i| i == ip)
    }

    /// ko2iblnd's answer once `closed` connections were closed
    /// (`kiblnd_close_matching_conns`): a NID that closed nothing is
    /// ENOENT; every peer always succeeds. socklnd always succeeds (its
    /// pid is always a wildcard).
    pub fn o2ib_result(&self, closed: usize) -> Result<(), i32> {
        if self.nid4.is_some() && closed == 0 {
            Err(ENOENT)
        } else {
            Ok(())
        }
    }
}

/// ENOENT: past the last peer or connection, or nothing to close.
pub const ENOENT: i32 = 2;

/// The `index`'th item of peers' lists walked in order (Lustre's
/// `index--` walk over its peer table): the index-th connection of the
/// NI for `GET_CONN`.
pub fn nth_of<P, C, I>(
    peers: impl Iterator<Item = P>,
    list: impl Fn(P) -> I,
    index: u32,
) -> Option<C>
where
    I: Iterator<Item = C>,
{
    let mut left = index;
    for p in peers {
        for c in list(p) {
            if left == 0 {
                return Some(c);
            }
            left -= 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn arg() -> Vec<u8> {
        vec![0u8; DATA_LEN]
    }

    #[test]
    fn fields() {
        assert!(IocData::new(&mut [0u8; DATA_LEN - 1]).is_none());
        let mut b = arg();
        b[NET..NET + 4].copy_from_slice(&0x0002_0001u32.to_ne_bytes());
        b[off::COUNT..off::COUNT + 4].copy_from_slice(&3u32.to_ne_bytes());
        b[U32 + 24..U32 + 28].copy_from_slice(&9u32.to_ne_bytes());
        assert_eq!(net_of(&b), Some(0x0002_0001));
        assert_eq!(net_of(&b[..DATA_LEN - 1]), None);
        let d = IocData::new(&mut b).unwrap();
        assert_eq!(d.net(), 0x0002_0001);
        assert_eq!(d.count(), 3);
        assert_eq!(d.u32(6), 9);
        assert_eq!(d.u32(7), 0);
        let mut d = d;
        // Past the last entry: nothing written (ioc_inllen1 follows).
        d.set_u32(7, 5);
        assert_eq!(get_u32(&b, off::INLLEN1), Some(0));
    }

    #[test]
    fn sock_peer_and_conn() {
        let mut b = arg();
        let mut d = IocData::new(&mut b).unwrap();
        let p = SockPeer {
            nid4: 0x2_0000_0a01_0002,
            pid: PID_LUSTRE,
            my_ip: 0x0a01_0001,
            peer_ip: 0x0a01_0002,
            port: 988,
            conn_count: 3,
            share_count: 1,
        };
        p.put(&mut d);
        assert_eq!(get_u64(&b, off::NID), Some(p.nid4));
        assert_eq!(get_u32(&b, off::COUNT), Some(1));
        let u = |i: usize| get_u32(&b, U32 + 4 * i);
        assert_eq!(
            [u(0), u(1), u(2), u(3), u(4)],
            [
                Some(0x0a01_0002),
                Some(988),
                Some(0x0a01_0001),
                Some(3),
                Some(12345)
            ]
        );

        let mut b = arg();
        let mut d = IocData::new(&mut b).unwrap();
        let c = SockConn {
            nid4: 7,
            pid: PID_LUSTRE,
            ctype: 3,
            cpt: 0,
            my_ip: 1,
            peer_ip: 2,
            peer_port: 1023,
            tx_buf: 4096,
            rx_buf: 8192,
            nagle: false,
        };
        c.put(&mut d);
        assert_eq!(get_u64(&b, off::NID), Some(7));
        assert_eq!(get_u32(&b, off::COUNT), Some(4096));
        assert_eq!(get_u32(&b, off::FLAGS), Some(0));
        let u = |i: usize| get_u32(&b, U32 + 4 * i).unwrap();
        assert_eq!(
            [u(0), u(1), u(2), u(3), u(4), u(5), u(6)],
            [2, 1023, 1, 3, 0, 8192, 12345]
        );
        let mut d = IocData::new(&mut b).unwrap();
        SockConn { nagle: true, ..c }.put(&mut d);
        assert_eq!(get_u32(&b, off::FLAGS), Some(1));
    }

    #[test]
    fn close() {
        let mut b = arg();
        b[off::NID..off::NID + 8].copy_from_slice(&u64::MAX.to_ne_bytes());
        let all = Close::of(&IocData::new(&mut b).unwrap());
        assert_eq!(
            all,
            Close {
                nid4: None,
                ip: None
            }
        );
        assert!(all.matches(Some(5), 1) && all.matches(None, 0));
        assert_eq!(all.o2ib_result(0), Ok(()));
        b[off::NID..off::NID + 8].copy_from_slice(&5u64.to_ne_bytes());
        b[U32..U32 + 4].copy_from_slice(&0x0a01_0002u32.to_ne_bytes());
        let one = Close::of(&IocData::new(&mut b).unwrap());
        assert_eq!(
            one,
            Close {
                nid4: Some(5),
                ip: Some(0x0a01_0002)
            }
        );
        assert!(one.matches(Some(5), 0x0a01_0002));
        assert!(!one.matches(Some(5), 0x0a01_0003));
        assert!(!one.matches(Some(6), 0x0a01_0002));
        assert!(!one.matches(None, 0x0a01_0002));
        assert_eq!(one.o2ib_result(0), Err(ENOENT));
        assert_eq!(one.o2ib_result(2), Ok(()));
    }

    #[test]
    fn index_walk() {
        let peers = [vec![1, 2], vec![], vec![3]];
        let nth = |i| nth_of(peers.iter(), |p| p.iter().copied(), i);
        assert_eq!(
            (0..4).map(nth).collect::<Vec<_>>(),
            [Some(1), Some(2), Some(3), None]
        );
        assert_eq!(nth(u32::MAX), None);
    }
}
