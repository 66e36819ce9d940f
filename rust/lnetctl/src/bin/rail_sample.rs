//! Bytes sent on each rail of a lab VM, sampled for the failover
//! benchmarks (tests/vm/bench_failover.sh) at a steady interval that a
//! shell loop, which forks for every command, cannot keep under TCG.
//!
//!   rail_sample MS SECS IFACE...
//!
//! Every MS milliseconds for SECS seconds, prints a line: the boot-time
//! clock in ms (as /proc/uptime counts) and each interface's
//! `statistics/tx_bytes`. Works alike for LNet over either LND and for
//! MPTCP, since Soft-RoCE's frames go out through the same interfaces.

#[path = "lab/clock.rs"]
mod clock;

use clock::boot_ms;
use std::io::Write;
use std::time::{Duration, Instant};

/// A counter file's value; 0 while the interface cannot be read.
fn read_counter(path: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parse = |s: Option<&String>| s.and_then(|s| s.parse::<u64>().ok()).filter(|&v| v > 0);
    let (Some(ms), Some(secs)) = (parse(args.first()), parse(args.get(1))) else {
        eprintln!("usage: rail_sample MS SECS IFACE...");
        std::process::exit(2);
    };
    if args.len() < 3 {
        eprintln!("rail_sample: no interface named");
        std::process::exit(2);
    }
    let files: Vec<String> = args[2..]
        .iter()
        .map(|i| format!("/sys/class/net/{i}/statistics/tx_bytes"))
        .collect();
    let start = Instant::now();
    let step = Duration::from_millis(ms);
    let mut next = start;
    let mut out = std::io::stdout().lock();
    while start.elapsed() < Duration::from_secs(secs) {
        let mut line = boot_ms().to_string();
        for f in &files {
            line.push(' ');
            line.push_str(&read_counter(f).to_string());
        }
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            return;
        }
        // On a fixed grid: a late tick does not shift the ones after it.
        next += step;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}
