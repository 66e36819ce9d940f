//! Raw TCP throughput between two lab VMs, the baseline of the LNet
//! bandwidth benchmark (tests/vm/bench_bandwidth.sh).
//!
//!   tcp_bench sink PORT COUNT      accept COUNT connections, one after the
//!                                  other; read each to its end, then close
//!   tcp_bench send ADDR PORT MIB   send MIB MiB, wait for the sink to
//!                                  close, print MB/s (10^6 bytes)
//!
//! The sender's time runs from connect until the sink has read everything
//! (its close), so data still in socket buffers is not counted as sent.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::Instant;

fn usage() -> ! {
    eprintln!("usage: tcp_bench sink PORT COUNT | tcp_bench send ADDR PORT MIB");
    std::process::exit(2);
}

fn sink(port: u16, count: u32) -> std::io::Result<()> {
    let l = TcpListener::bind(("0.0.0.0", port))?;
    let mut buf = vec![0u8; 1 << 20];
    for _ in 0..count {
        let (mut s, _) = l.accept()?;
        let mut total = 0u64;
        loop {
            match s.read(&mut buf)? {
                0 => break,
                n => total += n as u64,
            }
        }
        println!("sink: {total} bytes");
    }
    Ok(())
}

fn send(addr: &str, port: u16, mib: u64) -> std::io::Result<()> {
    let buf = vec![0x5au8; 1 << 20];
    let start = Instant::now();
    let mut s = TcpStream::connect((addr, port))?;
    for _ in 0..mib {
        s.write_all(&buf)?;
    }
    s.shutdown(Shutdown::Write)?;
    // The sink closes once it has read everything.
    let mut rest = [0u8; 64];
    while s.read(&mut rest)? > 0 {}
    let secs = start.elapsed().as_secs_f64();
    println!(
        "tcp_bench: {} MiB in {:.3} s: {:.1} MB/s",
        mib,
        secs,
        (mib << 20) as f64 / secs / 1e6
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> u64 {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| usage())
    };
    let r = match args.first().map(String::as_str) {
        Some("sink") if args.len() == 3 => sink(num(1) as u16, num(2) as u32),
        Some("send") if args.len() == 4 => send(&args[1], num(2) as u16, num(3)),
        _ => usage(),
    };
    if let Err(e) = r {
        eprintln!("tcp_bench: {e}");
        std::process::exit(1);
    }
}
