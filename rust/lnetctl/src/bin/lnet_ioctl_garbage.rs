//! Throws malformed ioctls at /dev/lnet: random command numbers (ours with
//! wrong sizes, and arbitrary ones), random lengths and bytes, headers that
//! are almost right, and bad pointers. Every call must be refused without
//! harm; the lab's kernel checks (KASAN, lockdep, kmemleak) judge the
//! kernel side. Prints how many calls each errno answered.
//!
//! With `--no-admin` it drops CAP_SYS_ADMIN once /dev/lnet is open, as a
//! root process confined without it would run: every call must then be
//! refused with EACCES, whatever it carries, or it fails.
//!
//!   lnet_ioctl_garbage [--no-admin] [ITERATIONS] [SEED]

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;

/// xorshift64*: enough randomness, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// `_IOC(dir, type, nr, size)` as Linux encodes it on x86_64.
fn ioc(dir: u64, nr: u64, size: u64) -> u64 {
    (dir << 30) | ((size & 0x3fff) << 16) | ((b'e' as u64) << 8) | (nr & 0xff)
}

const CAP_SYS_ADMIN: u32 = 21;
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Takes CAP_SYS_ADMIN out of this process's effective set.
fn drop_sys_admin() -> std::io::Result<()> {
    let mut hdr = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: a version 3 header and the two data words it asks for.
    if unsafe { nix::libc::syscall(nix::libc::SYS_capget, &mut hdr, data.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    data[0].effective &= !(1 << CAP_SYS_ADMIN);
    // SAFETY: the same version 3 header, and the two data words capget
    // filled, which capset only reads.
    if unsafe { nix::libc::syscall(nix::libc::SYS_capset, &mut hdr, data.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let no_admin = args.next_if(|a| a == "--no-admin").is_some();
    let iterations: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5000);
    let seed: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(0x05ee_d1e7);
    let dev = match OpenOptions::new().read(true).write(true).open("/dev/lnet") {
        Ok(f) => f,
        Err(e) => {
            eprintln!("lnet_ioctl_garbage: /dev/lnet: {e}");
            std::process::exit(1);
        }
    };
    if no_admin {
        if let Err(e) = drop_sys_admin() {
            eprintln!("lnet_ioctl_garbage: dropping CAP_SYS_ADMIN: {e}");
            std::process::exit(1);
        }
    }
    let fd = dev.as_raw_fd();
    let mut rng = Rng(seed | 1);
    // Lustre's commands (numbers 30 to 112) read and write back as many
    // bytes as their header says, up to LIBCFS_IOC_DATA_MAX.
    let mut buf = vec![0u8; 128 * 1024];
    let mut answers: BTreeMap<i32, u64> = BTreeMap::new();
    for _ in 0..iterations {
        let len = rng.below(1200) as usize;
        for b in buf.iter_mut().take(len) {
            *b = rng.next() as u8;
        }
        // LNET_IOC_CONFIGURE (0xc0) to LNET_IOC_FAULT_LIST (0xd3).
        let nr = 0xc0 + rng.below(20);
        let cmd = match rng.below(4) {
            // One of ours with a random size.
            0 => ioc(3, nr, rng.below(1200)),
            // One of ours with its right size, but a header that lies.
            1 => {
                let size =
                    [16u64, 304, 592, 40, 680, 48, 296, 136, 664, 856, 160][rng.below(11) as usize];
                let claimed = if rng.below(2) == 0 {
                    size
                } else {
                    rng.below(1200)
                };
                buf[0..4].copy_from_slice(&(claimed as u32).to_ne_bytes());
                buf[4..8].copy_from_slice(&(rng.below(3) as u32).to_ne_bytes());
                ioc(3, nr, size)
            }
            // Another direction, or another number.
            2 => ioc(rng.below(4), rng.below(256), rng.below(1200)),
            // Anything at all.
            _ => rng.next() & 0xffff_ffff,
        };
        let arg: usize = match rng.below(8) {
            0 => 0,
            1 => 0xdead_beef,
            2 => usize::MAX - 7,
            _ => buf.as_mut_ptr() as usize,
        };
        // SAFETY: the kernel reads and writes at most the encoded size at
        // `arg` (below 16 KiB), or for Lustre's commands the length in the
        // header, at most 128 KiB; every valid `arg` points to the start of
        // `buf`, 128 KiB long.
        let rc = unsafe { nix::libc::ioctl(fd, cmd as _, arg) };
        let errno = if rc < 0 {
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
        } else {
            0
        };
        *answers.entry(errno).or_default() += 1;
    }
    let summary: Vec<String> = answers
        .iter()
        .map(|(e, n)| format!("errno {e}: {n}"))
        .collect();
    println!(
        "lnet_ioctl_garbage: {iterations} calls{}; {}",
        if no_admin {
            " without CAP_SYS_ADMIN"
        } else {
            ""
        },
        summary.join(", ")
    );
    if no_admin && answers.keys().any(|&e| e != nix::libc::EACCES) {
        eprintln!("lnet_ioctl_garbage: a call without CAP_SYS_ADMIN was not refused with EACCES");
        std::process::exit(1);
    }
}
