//! Raw TCP throughput between two lab VMs, the baseline of the LNet
//! bandwidth benchmarks (tests/vm/bench_bandwidth.sh, bench_multirail.sh).
//!
//!   tcp_bench serve PORT [mptcp]                  serve connections until
//!                                                 killed, each in a thread
//!   tcp_bench put|get ADDR PORT MIB STREAMS [mptcp]
//!                                                 move MIB MiB to (put) or
//!                                                 from (get) the server over
//!                                                 STREAMS connections at
//!                                                 once; print MB/s (10^6
//!                                                 bytes)
//!
//!   tcp_bench steady ADDR PORT SECS [mptcp]      put over one stream for
//!                                                 SECS; print MB/s and the
//!                                                 longest time a write
//!                                                 waited (the flow's
//!                                                 stall), with when it
//!                                                 began (boot-time ms)
//!
//! A connection starts with a 9-byte request: `P` or `G` and a byte count
//! (u64, little-endian). For `P` the server reads to the end and closes;
//! for `G` it writes that many bytes and closes. The client's time runs
//! from the first connect until every stream has seen the server's close,
//! so data still in socket buffers is not counted as moved. With `mptcp`
//! the sockets are the kernel's Multipath TCP (IPPROTO_MPTCP): their
//! subflows over other paths are the path manager's (`ip mptcp`).

#[path = "lab/clock.rs"]
mod clock;

use clock::boot_ms;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// `IPPROTO_MPTCP` (linux/in.h).
const IPPROTO_MPTCP: libc::c_int = 262;

/// A new IPv4 stream socket, MPTCP when asked.
fn stream_socket(mptcp: bool) -> std::io::Result<OwnedFd> {
    let proto = if mptcp { IPPROTO_MPTCP } else { 0 };
    // SAFETY: plain socket(2); the descriptor is owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn sockaddr(addr: Ipv4Addr, port: u16) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data; all zeroes is valid.
    let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sin.sin_family = libc::AF_INET as libc::sa_family_t;
    sin.sin_port = port.to_be();
    sin.sin_addr.s_addr = u32::from(addr).to_be();
    sin
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn listen(port: u16, mptcp: bool) -> std::io::Result<TcpListener> {
    use std::os::fd::AsRawFd;
    let fd = stream_socket(mptcp)?;
    let one: libc::c_int = 1;
    let sin = sockaddr(Ipv4Addr::UNSPECIFIED, port);
    // SAFETY: a live socket and option and address buffers of the sizes
    // given.
    unsafe {
        check(libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ))?;
        check(libc::bind(
            fd.as_raw_fd(),
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ))?;
        check(libc::listen(fd.as_raw_fd(), 8))?;
    }
    Ok(TcpListener::from(fd))
}

fn connect(addr: &str, port: u16, mptcp: bool) -> std::io::Result<TcpStream> {
    use std::os::fd::AsRawFd;
    let ip: Ipv4Addr = addr.parse().map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "not an IPv4 address")
    })?;
    let fd = stream_socket(mptcp)?;
    let sin = sockaddr(ip, port);
    // SAFETY: a live socket and an address buffer of the size given.
    check(unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })?;
    Ok(TcpStream::from(fd))
}

fn usage() -> ! {
    eprintln!(
        "usage: tcp_bench serve PORT [mptcp] | tcp_bench put|get ADDR PORT MIB STREAMS [mptcp]\n       tcp_bench steady ADDR PORT SECS [mptcp]"
    );
    std::process::exit(2);
}

const CHUNK: usize = 1 << 20;

/// One connection of the server: a put is read to its end, a get is
/// answered with the bytes asked for.
fn serve_one(mut s: TcpStream) -> std::io::Result<()> {
    let mut req = [0u8; 9];
    s.read_exact(&mut req)?;
    let mut size = [0u8; 8];
    size.copy_from_slice(&req[1..]);
    let mut left = u64::from_le_bytes(size);
    let mut buf = vec![0x5au8; CHUNK];
    match req[0] {
        b'P' => while s.read(&mut buf)? > 0 {},
        b'G' => {
            while left > 0 {
                let n = left.min(CHUNK as u64) as usize;
                s.write_all(&buf[..n])?;
                left -= n as u64;
            }
        }
        _ => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "bad request",
            ))
        }
    }
    s.shutdown(Shutdown::Both)
}

fn serve(port: u16, mptcp: bool) -> std::io::Result<()> {
    let l = listen(port, mptcp)?;
    loop {
        let (s, _) = l.accept()?;
        std::thread::spawn(move || {
            if let Err(e) = serve_one(s) {
                eprintln!("tcp_bench: serve: {e}");
            }
        });
    }
}

/// A connection to the server that has asked to put or get `bytes`.
fn open(addr: &str, port: u16, put: bool, bytes: u64, mptcp: bool) -> std::io::Result<TcpStream> {
    let mut s = connect(addr, port, mptcp)?;
    let mut req = [0u8; 9];
    req[0] = if put { b'P' } else { b'G' };
    req[1..].copy_from_slice(&bytes.to_le_bytes());
    s.write_all(&req)?;
    Ok(s)
}

/// One stream of a client: `bytes` to (put) or from (get) the server,
/// until the server's close.
fn stream(addr: &str, port: u16, put: bool, bytes: u64, mptcp: bool) -> std::io::Result<u64> {
    let mut s = open(addr, port, put, bytes, mptcp)?;
    let mut buf = vec![0x5au8; CHUNK];
    let mut moved = 0u64;
    if put {
        while moved < bytes {
            let n = (bytes - moved).min(CHUNK as u64) as usize;
            s.write_all(&buf[..n])?;
            moved += n as u64;
        }
        s.shutdown(Shutdown::Write)?;
        // The server closes once it has read everything.
        while s.read(&mut buf)? > 0 {}
    } else {
        loop {
            match s.read(&mut buf)? {
                0 => break,
                n => moved += n as u64,
            }
        }
        if moved != bytes {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("got {moved} of {bytes} bytes"),
            ));
        }
    }
    Ok(moved)
}

fn client(
    put: bool,
    addr: &str,
    port: u16,
    mib: u64,
    streams: u64,
    mptcp: bool,
) -> std::io::Result<()> {
    if streams == 0 || streams > 256 {
        usage();
    }
    let total = mib << 20;
    let start = Instant::now();
    let handles: Vec<_> = (0..streams)
        .map(|i| {
            // The bytes shared out, the first streams taking the rest.
            let bytes = total / streams + u64::from(i < total % streams);
            let addr = addr.to_string();
            std::thread::spawn(move || stream(&addr, port, put, bytes, mptcp))
        })
        .collect();
    for h in handles {
        h.join()
            .map_err(|_| std::io::Error::other("a stream panicked"))??;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "tcp_bench: {} {} MiB over {} streams in {:.3} s: {:.2} MB/s",
        if put { "put" } else { "get" },
        mib,
        streams,
        secs,
        total as f64 / secs / 1e6
    );
    Ok(())
}

/// Steady traffic for the failover benchmark: writes for `secs` over one
/// connection (an MPTCP one has a subflow per rail), as long as the
/// server keeps reading.
fn steady(addr: &str, port: u16, secs: u64, mptcp: bool) -> std::io::Result<()> {
    // Small writes: one that waits is the flow standing still, not a
    // large buffer being copied.
    const WRITE: usize = 64 << 10;
    // The server reads until the close.
    let mut s = open(addr, port, true, u64::MAX, mptcp)?;
    let buf = vec![0x5au8; WRITE];
    let start = Instant::now();
    let (mut moved, mut stall, mut stall_from) = (0u64, 0u64, boot_ms());
    let mut last = (Instant::now(), boot_ms());
    while start.elapsed() < Duration::from_secs(secs) {
        s.write_all(&buf)?;
        moved += WRITE as u64;
        let waited = last.0.elapsed().as_millis() as u64;
        if waited > stall {
            (stall, stall_from) = (waited, last.1);
        }
        last = (Instant::now(), boot_ms());
    }
    s.shutdown(Shutdown::Write)?;
    let mut sink = [0u8; 64];
    while s.read(&mut sink)? > 0 {}
    let secs = start.elapsed().as_secs_f64();
    println!(
        "tcp_bench: steady{} put of {} MiB in {:.3} s: {:.2} MB/s, longest stall {} ms from {} ms",
        if mptcp { " MPTCP" } else { "" },
        moved >> 20,
        secs,
        moved as f64 / secs / 1e6,
        stall,
        stall_from
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
    let (mptcp, n) = match args.last().map(String::as_str) {
        Some("mptcp") => (true, args.len() - 1),
        _ => (false, args.len()),
    };
    let r = match args.first().map(String::as_str) {
        Some("serve") if n == 2 => serve(num(1) as u16, mptcp),
        Some(op @ ("put" | "get")) if n == 5 => {
            client(op == "put", &args[1], num(2) as u16, num(3), num(4), mptcp)
        }
        Some("steady") if n == 4 => steady(&args[1], num(2) as u16, num(3), mptcp),
        _ => usage(),
    };
    if let Err(e) = r {
        eprintln!("tcp_bench: {e}");
        std::process::exit(1);
    }
}
