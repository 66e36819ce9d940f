//! A socklnd peer's side of the acceptor request, the hello and the
//! framing, for the lab's tools that speak to a ksocklnd NI from
//! userspace (`ksock_hostile`, `ksock_crowd`).

use lnet_core::hdr::{Hdr, MsgBody, WireHandle};
use lnet_core::nid::Nid;
use lnet_core::socklnd::{
    AcceptorRequest, ConnType, Hello, KsockMsg, MsgKind, ACCEPTOR_PORT, KSOCK_MSG_LEN,
};
use std::net::{Ipv4Addr, TcpStream};
use std::os::fd::FromRawFd;

type AddrCall =
    unsafe extern "C" fn(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> libc::c_int;

/// `bind` or `connect` of `fd` to an IPv4 address and port.
fn addr_call(f: AddrCall, fd: libc::c_int, addr: Ipv4Addr, port: u16) -> std::io::Result<()> {
    // SAFETY: an all-zero sockaddr_in is valid; the fields are set below.
    let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sin.sin_family = libc::AF_INET as libc::sa_family_t;
    sin.sin_port = port.to_be();
    sin.sin_addr.s_addr = u32::from(addr).to_be();
    // SAFETY: `sin` is a valid sockaddr_in for the length given.
    let rc = unsafe {
        f(
            fd,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A TCP connection to `addr:988` from `src` and the first of `ports`
/// free for it (the NI refuses source ports of 1024 and above unless
/// `accept=all`; port 0 lets the kernel pick).
pub fn connect(src: Ipv4Addr, ports: &[u16], addr: Ipv4Addr) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::from(std::io::ErrorKind::AddrInUse);
    for &port in ports {
        // SAFETY: a plain socket call.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is ours, so the stream owns and closes it.
        let stream = unsafe { TcpStream::from_raw_fd(fd) };
        let one: libc::c_int = 1;
        // SAFETY: a valid option value of the size given.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        let r = addr_call(libc::bind, fd, src, port)
            .and_then(|()| addr_call(libc::connect, fd, addr, ACCEPTOR_PORT));
        match r {
            Ok(()) => return Ok(stream),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EADDRINUSE | libc::EADDRNOTAVAIL)
                ) =>
            {
                last = e;
            }
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// The acceptor's request for the NI `target`.
pub fn request(target: Nid) -> Vec<u8> {
    let mut b = [0u8; 28];
    let n = AcceptorRequest { version: 1, target }
        .encode(&mut b)
        .expect("NID4 target");
    b[..n].to_vec()
}

/// A V3 hello from `me` to `target` for a connection of type `ctype`.
pub fn hello(me: Nid, target: Nid, ctype: ConnType) -> Hello {
    Hello {
        version: 3,
        src_nid: me,
        dst_nid: target,
        src_pid: 12345,
        dst_pid: 0,
        src_incarnation: 0x5eed,
        dst_incarnation: 0,
        ctype,
        nips: 0,
    }
}

/// `h` on the wire.
pub fn hello_bytes(h: &Hello) -> Vec<u8> {
    let mut b = [0u8; 80];
    let n = h.encode(&mut b).expect("hello V3");
    b[..n].to_vec()
}

/// A ksock_msg frame header.
pub fn ksock(kind: MsgKind, cookies: [u64; 2]) -> Vec<u8> {
    let mut b = [0u8; KSOCK_MSG_LEN];
    KsockMsg {
        kind,
        csum: 0,
        zc_cookies: cookies,
    }
    .encode(&mut b)
    .expect("ksock_msg");
    b.to_vec()
}

/// The LNet header of a PUT from `me` to `target` on portal 63, no ACK.
pub fn put_header(me: Nid, target: Nid, payload_length: u32) -> Vec<u8> {
    let h = Hdr {
        dest_nid: target,
        src_nid: me,
        dest_pid: 12345,
        src_pid: 12345,
        payload_length,
        msg: MsgBody::Put {
            ack_wmd: WireHandle::NONE,
            match_bits: 0,
            hdr_data: 0,
            ptl_index: 63,
            offset: 0,
        },
    };
    let mut b = [0u8; 72];
    h.encode_nid4(&mut b).expect("header");
    b.to_vec()
}
