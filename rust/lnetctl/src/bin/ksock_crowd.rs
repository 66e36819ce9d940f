//! A crowd of socklnd peers, each heard from once. For every NID
//! 10.60.X.Y@tcp of a range (X = i / 250, Y = i % 250 + 1: the peers that
//! `bench_scale` imports), a connection to the ksocklnd NI at ADDR that
//! completes the handshake as that NID, sends one PUT (no payload, no
//! ACK, to portal 63, where nothing is attached: LNet drops it, having
//! counted its sender alive) and hangs up. LNet recovers only the peer
//! NIs it has heard from (`lnet_peer_ni_add_to_recoveryq_locked`): this
//! fills the recovery queue with thousands of peer NIs, none reachable
//! (no VM has those addresses), without thousands of nodes.
//!
//!   ksock_crowd ADDR FIRST COUNT
//!
//! ADDR is this VM's own NI: each connection comes over loopback from an
//! address 127.0.1.K and a privileged port of its own (500 per address,
//! each used once, since a closed connection's port waits in TIME_WAIT).
//! Prints how many were heard and exits non-zero if any was not.

#[path = "lab/ksock.rs"]
mod ksock;

use ksock::{hello, hello_bytes, put_header, request};
use lnet_core::nid::Nid;
use lnet_core::socklnd::{ConnType, MsgKind, PROTO_MAGIC};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Source ports per source address.
const PORTS: u32 = 500;
/// Connections in progress at once.
const WORKERS: u32 = 8;

/// The crowd's `i`th NID.
fn crowd_nid(i: u32) -> Nid {
    let addr = Ipv4Addr::new(10, 60, (i / 250) as u8, (i % 250 + 1) as u8);
    Nid::parse(&format!("{addr}@tcp")).expect("NID")
}

/// One peer: handshake as `me`, one PUT, hang up, and wait for the NI to
/// close its end (so the PUT was parsed before the crowd is done).
fn heard_once(i: u32, me: Nid, addr: Ipv4Addr, target: Nid) -> Result<(), String> {
    let src = Ipv4Addr::new(127, 0, 1, (1 + i / PORTS) as u8);
    let port = (1023 - i % PORTS) as u16;
    let mut s = ksock::connect(src, &[port], addr).map_err(|e| format!("connect: {e}"))?;
    let wait = Some(Duration::from_secs(30));
    let _ = s.set_read_timeout(wait);
    let _ = s.set_write_timeout(wait);
    let hello = [
        request(target),
        hello_bytes(&hello(me, target, ConnType::Control)),
    ]
    .concat();
    s.write_all(&hello).map_err(|e| format!("hello: {e}"))?;
    let mut reply = [0u8; 56];
    s.read_exact(&mut reply)
        .map_err(|e| format!("hello reply: {e}"))?;
    let magic = u32::from_le_bytes([reply[0], reply[1], reply[2], reply[3]]);
    if magic != PROTO_MAGIC {
        return Err(format!("hello reply magic {magic:#x}"));
    }
    let put = [
        ksock::ksock(MsgKind::Lnet, [0, 0]),
        put_header(me, target, 0),
    ]
    .concat();
    s.write_all(&put).map_err(|e| format!("PUT: {e}"))?;
    let _ = s.shutdown(Shutdown::Write);
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(format!("waiting for the NI's close: {e}")),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let parsed = (
        args.get(1).and_then(|a| a.parse::<Ipv4Addr>().ok()),
        args.get(2).and_then(|a| a.parse::<u32>().ok()),
        args.get(3).and_then(|a| a.parse::<u32>().ok()),
    );
    let (Some(addr), Some(first), Some(count)) = parsed else {
        eprintln!("usage: ksock_crowd ADDR FIRST COUNT");
        std::process::exit(2);
    };
    // 250 peers per 10.60.X, X at most 255 (and 128 source addresses).
    if first.checked_add(count).is_none_or(|end| end > 64_000) {
        eprintln!("ksock_crowd: the crowd is 10.60.0.1 to 10.60.255.250: FIRST + COUNT <= 64000");
        std::process::exit(2);
    }
    let target = Nid::parse(&format!("{addr}@tcp")).expect("NID");
    let next = AtomicUsize::new(0);
    let heard = AtomicUsize::new(0);
    let first_error = Mutex::new(None::<String>);
    let t0 = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed) as u32;
                if k >= count {
                    return;
                }
                let i = first + k;
                match heard_once(i, crowd_nid(i), addr, target) {
                    Ok(()) => {
                        heard.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        let mut f = first_error.lock().unwrap_or_else(|p| p.into_inner());
                        f.get_or_insert(format!("{}: {e}", crowd_nid(i)));
                    }
                }
            });
        }
    });
    let heard = heard.into_inner();
    println!(
        "ksock_crowd: {heard} of {count} peers heard from once, in {} ms",
        t0.elapsed().as_millis()
    );
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        println!("ksock_crowd: first failure: {e}");
    }
    if heard as u32 != count {
        std::process::exit(1);
    }
}
