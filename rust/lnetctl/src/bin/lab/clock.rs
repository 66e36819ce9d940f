//! The lab's clock for lab tools whose times are matched with the
//! kernel's and the scenario scripts' (`now_ms` reads /proc/uptime).

/// Milliseconds on CLOCK_BOOTTIME, the clock of /proc/uptime and of the
/// kernel's ktime_get_boottime().
pub fn boot_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}
