//! A hostile socklnd peer: connects to a ksocklnd NI's acceptor (port 988)
//! from a privileged port and sends what a broken or malicious peer might:
//! bad acceptor requests, bad hellos (one from another net), and after a
//! good handshake bad frames (unknown types, ZC-ACKs for nothing, LNet
//! headers that do not decode, impossible lengths, a peer that hangs up
//! mid-message). Each case must end
//! with the NI closing the connection; the NI's counters and dmesg say why,
//! and the lab's kernel checks (KASAN, lockdep, kmemleak) judge the rest.
//!
//!   ksock_hostile ADDR      (the NI's IPv4 address; its NID is ADDR@tcp)
//!
//! Prints one line per case and exits non-zero if the NI left any
//! connection open.

#[path = "lab/ksock.rs"]
mod ksock;

use ksock::{hello, hello_bytes, ksock, put_header, request};
use lnet_core::nid::Nid;
use lnet_core::socklnd::{ConnType, MsgKind, ACCEPTOR_MAGIC, PROTO_MAGIC};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpStream};
use std::time::Duration;

/// What the NI does with a case's connection.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Closed it (EOF or reset), after sending this many bytes.
    Closed(usize),
    /// Still open after the wait.
    Open,
}

/// Reads until the NI closes the connection or `wait` passes.
fn outcome(s: &mut TcpStream, wait: Duration) -> Outcome {
    let _ = s.set_read_timeout(Some(wait));
    let mut got = 0;
    let mut buf = [0u8; 512];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Outcome::Closed(got),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Outcome::Open,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return Outcome::Open,
            // A reset is a close.
            Err(_) => return Outcome::Closed(got),
        }
    }
}

/// How a case is sent.
struct Case {
    name: &'static str,
    secure: bool,
    /// Do the handshake first (and expect the NI's reply).
    handshake: bool,
    bytes: Vec<u8>,
    /// Half-close after sending: a peer that hangs up.
    hang_up: bool,
}

impl Case {
    /// Bytes sent instead of (or as part of) the handshake.
    fn before_handshake(name: &'static str, bytes: Vec<u8>) -> Case {
        Case {
            name,
            secure: true,
            handshake: false,
            bytes,
            hang_up: false,
        }
    }

    /// Bytes sent once the handshake has succeeded.
    fn after_handshake(name: &'static str, bytes: Vec<u8>) -> Case {
        Case {
            handshake: true,
            ..Case::before_handshake(name, bytes)
        }
    }

    /// From an unprivileged source port.
    fn insecure(self) -> Case {
        Case {
            secure: false,
            ..self
        }
    }

    /// Half-closed after the bytes.
    fn hang_up(self) -> Case {
        Case {
            hang_up: true,
            ..self
        }
    }
}

fn main() {
    let Some(addr) = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<Ipv4Addr>().ok())
    else {
        eprintln!("usage: ksock_hostile ADDR");
        std::process::exit(2);
    };
    let target = Nid::parse(&format!("{addr}@tcp")).expect("NID");
    let me = Nid::parse("10.255.0.1@tcp").expect("NID");
    let good = hello(me, target, ConnType::Control);
    let mut bad_magic = hello_bytes(&good);
    bad_magic[..4].copy_from_slice(&0xdead_beefu32.to_le_bytes());
    let mut bad_version = hello_bytes(&good);
    bad_version[4..8].copy_from_slice(&7u32.to_le_bytes());
    let mut many_ips = hello_bytes(&good);
    many_ips[52..56].copy_from_slice(&1000u32.to_le_bytes());
    let mut bad_ctype = hello_bytes(&good);
    bad_ctype[48..52].copy_from_slice(&9u32.to_le_bytes());
    let req = request(target);
    let cat = |parts: &[&[u8]]| parts.concat();

    let cases = vec![
        Case::before_handshake("unprivileged source port", req.clone()).insecure(),
        Case::before_handshake("acceptor magic", vec![0x5a; 16]),
        Case::before_handshake(
            "acceptor version",
            cat(&[&ACCEPTOR_MAGIC.to_le_bytes(), &99u32.to_le_bytes()]),
        ),
        Case::before_handshake(
            "acceptor request for another NID",
            request(Nid::parse("10.254.254.254@tcp").expect("NID")),
        ),
        Case::before_handshake("hello magic", cat(&[&req, &bad_magic])),
        Case::before_handshake("hello version", cat(&[&req, &bad_version])),
        Case::before_handshake("hello with 1000 addresses", cat(&[&req, &many_ips])),
        Case::before_handshake("hello connection type 9", cat(&[&req, &bad_ctype])),
        Case::before_handshake(
            "untyped hello",
            cat(&[&req, &hello_bytes(&hello(me, target, ConnType::Any))]),
        ),
        Case::before_handshake("truncated hello", cat(&[&req, &hello_bytes(&good)[..20]]))
            .hang_up(),
        Case::before_handshake(
            "hello from another net",
            cat(&[
                &req,
                &hello_bytes(&hello(
                    Nid::parse("10.255.0.1@tcp1").expect("NID"),
                    target,
                    ConnType::Control,
                )),
            ]),
        ),
        Case::after_handshake(
            "frame of unknown type",
            cat(&[&0x1234u32.to_le_bytes(), &[0u8; 20]]),
        ),
        Case::after_handshake("ZC-ACK for nothing", ksock(MsgKind::Noop, [5, 7])),
        Case::after_handshake(
            "LNet header that does not decode",
            cat(&[&ksock(MsgKind::Lnet, [0, 0]), &[0xff; 72]]),
        ),
        Case::after_handshake(
            "impossible payload length",
            cat(&[
                &ksock(MsgKind::Lnet, [0, 0]),
                &put_header(me, target, 0x7fff_ffff),
            ]),
        ),
        Case::after_handshake(
            "hang-up mid-payload",
            cat(&[
                &ksock(MsgKind::Lnet, [0, 0]),
                &put_header(me, target, 4096),
                &[0u8; 100],
            ]),
        )
        .hang_up(),
    ];

    let mut open = 0;
    for case in cases {
        let ports: Vec<u16> = if case.secure {
            (512..=1023).rev().collect()
        } else {
            vec![0]
        };
        let mut s = match ksock::connect(Ipv4Addr::UNSPECIFIED, &ports, addr) {
            Ok(s) => s,
            Err(e) => {
                println!("{}: can't connect: {e}", case.name);
                open += 1;
                continue;
            }
        };
        let mut note = String::new();
        if case.handshake {
            let ok = s
                .write_all(&cat(&[&req, &hello_bytes(&good)]))
                .and_then(|()| {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                    let mut reply = [0u8; 56];
                    s.read_exact(&mut reply).map(|()| reply)
                });
            match ok {
                Ok(reply) => {
                    let magic = u32::from_le_bytes([reply[0], reply[1], reply[2], reply[3]]);
                    let ctype = i32::from_le_bytes([reply[48], reply[49], reply[50], reply[51]]);
                    if magic != PROTO_MAGIC || ctype != ConnType::Control.to_i32() {
                        note = format!(" (handshake answered magic {magic:#x} type {ctype})");
                    }
                }
                Err(e) => {
                    println!("{}: handshake failed: {e}", case.name);
                    open += 1;
                    continue;
                }
            }
        }
        let _ = s.write_all(&case.bytes);
        if case.hang_up {
            let _ = s.shutdown(Shutdown::Write);
        }
        let o = outcome(&mut s, Duration::from_secs(15));
        if o == Outcome::Open {
            open += 1;
        }
        println!("{}: {:?}{}", case.name, o, note);
    }
    if open > 0 {
        println!("{open} case(s) left open");
        std::process::exit(1);
    }
    println!("every hostile connection was closed");
}
