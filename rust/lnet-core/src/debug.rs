//! The debug mask: Lustre's `libcfs_debug` bits and the text forms
//! `lctl set_param debug=` and its module parameter accept
//! (`libcfs_debug_str2mask`): a number, or names with `+`/`-`, where an
//! absolute list always keeps the classes no mask can silence; and the
//! rate limit of lines a peer can trigger.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// General information.
pub const D_INFO: u32 = 0x0000_0040;
/// Network errors (`CNETERR`).
pub const D_NETERROR: u32 = 0x0000_0100;
/// Network communications: one line per message or connection event.
pub const D_NET: u32 = 0x0000_0200;
/// Warnings (`CWARN`).
pub const D_WARNING: u32 = 0x0000_0400;
/// Errors (`CERROR`).
pub const D_ERROR: u32 = 0x0002_0000;
/// Emergencies (`CEMERG`).
pub const D_EMERG: u32 = 0x0004_0000;
/// Recovery and failover.
pub const D_HA: u32 = 0x0008_0000;
/// Configuration.
pub const D_CONFIG: u32 = 0x0100_0000;
/// Console messages (`LCONSOLE_*`).
pub const D_CONSOLE: u32 = 0x0200_0000;

/// The classes every mask keeps (`D_CANTMASK`).
pub const CANTMASK: u32 = D_ERROR | D_EMERG | D_WARNING | D_CONSOLE;

/// Lustre's default (`LIBCFS_D_DEFAULT`): errors, network errors, failover
/// and configuration, not per-message traffic.
pub const DEFAULT: u32 = CANTMASK | D_NETERROR | D_HA | D_CONFIG | 0x0000_0080 | 0x1000_0000;

/// Each bit's name, bit 0 first (`LIBCFS_DEBUG_MASKS_NAMES`).
pub const NAMES: [&str; 32] = [
    "trace", "inode", "super", "iotrace", "malloc", "cache", "info", "ioctl", "neterror", "net",
    "warning", "buffs", "other", "dentry", "nettrace", "page", "dlmtrace", "error", "emerg", "ha",
    "rpctrace", "vfstrace", "reada", "mmap", "config", "console", "quota", "sec", "lfsck", "hsm",
    "snapshot", "layout",
];

/// Whether a line of class `class` is shown under `mask`
/// (`cfs_cdebug_show`, one subsystem).
pub fn shows(mask: u32, class: u32) -> bool {
    class & CANTMASK != 0 || mask & class != 0
}

/// Lines one call site may print per window.
pub const BURST: u32 = 10;
/// The window, as the kernel's `printk_ratelimited` (`DEFAULT_RATELIMIT_*`).
pub const INTERVAL_MS: u64 = 5000;

/// One call site's rate limit: `BURST` lines per `INTERVAL_MS`, then a
/// count of what was dropped when the next window opens. Lock-free, for
/// any context: racing callers may let a line or two more through a
/// window, which nothing depends on.
pub struct RateLimit {
    /// When the current window opened (ms; 0: never).
    begin: AtomicU64,
    printed: AtomicU32,
    missed: AtomicU32,
}

/// What [`RateLimit::allow`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allow {
    /// The line may print.
    pub print: bool,
    /// Lines dropped in the window that just closed, to be told first.
    pub missed: u32,
}

impl RateLimit {
    /// A limit no line has gone through yet.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        RateLimit {
            begin: AtomicU64::new(0),
            printed: AtomicU32::new(0),
            missed: AtomicU32::new(0),
        }
    }

    /// Whether a line may print at `now_ms` (a monotonic clock).
    pub fn allow(&self, now_ms: u64) -> Allow {
        let now = now_ms.max(1);
        let begin = self.begin.load(Relaxed);
        let mut missed = 0;
        if (begin == 0 || now.saturating_sub(begin) >= INTERVAL_MS)
            && self
                .begin
                .compare_exchange(begin, now, Relaxed, Relaxed)
                .is_ok()
        {
            self.printed.store(0, Relaxed);
            missed = self.missed.swap(0, Relaxed);
        }
        let print = self.printed.fetch_add(1, Relaxed) < BURST;
        if !print {
            self.missed.fetch_add(1, Relaxed);
        }
        Allow { print, missed }
    }
}

/// Why a mask text is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskError {
    /// A token that names no class (its byte range in the text).
    Unknown(usize, usize),
    /// `+` or `-` with nothing after it.
    TrailingOperator,
}

impl MaskError {
    /// The text of the unknown token, for the message.
    pub fn token<'a>(&self, text: &'a [u8]) -> &'a [u8] {
        match *self {
            MaskError::Unknown(from, to) => text.get(from..to).unwrap_or(&[]),
            MaskError::TrailingOperator => &[],
        }
    }
}

/// The kernel's `isspace`: ASCII blanks, `\v`, and Latin-1's no-break
/// space.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0xa0)
}

/// A whole-text number as the kernel's `sscanf("%i")` reads one: a `-`
/// (not a `+`), then a base prefix; its bits as an `int`'s.
fn number(text: &[u8]) -> Option<u32> {
    let (neg, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, text),
    };
    let (radix, digits) = match digits {
        [b'0', x, rest @ ..] if (*x == b'x' || *x == b'X') && !rest.is_empty() => (16, rest),
        [b'0', rest @ ..] if !rest.is_empty() => (8, rest),
        _ => (10, digits),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u32 = 0;
    for &c in digits {
        let d = (c as char).to_digit(radix)?;
        // `%i` into an int wraps rather than failing; keep the low bits.
        v = v.wrapping_mul(radix).wrapping_add(d);
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// The new mask a text sets, from the current one (`libcfs_debug_str2mask`).
///
/// A number sets the mask as it is. Otherwise the text is tokens separated
/// by blanks or commas, each a class name, `all` or `none` (any case), and
/// `default` only as the last token; a `+` or `-` applies to the one token
/// right after it (Lustre's code, whatever its comment says). A text that
/// starts with a name is absolute (from the classes no mask silences), one
/// that starts with an operator is relative to `old`.
pub fn parse(text: &[u8], old: u32) -> Result<u32, MaskError> {
    let end = text
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(0, |i| i + 1);
    let start = text.iter().position(|&c| !is_space(c)).unwrap_or(end);
    let trimmed = text.get(start..end).unwrap_or(&[]);
    if let Some(n) = number(trimmed) {
        return Ok(n);
    }
    let mut mask = old;
    let mut found = false;
    let mut i = 0;
    while i < text.len() {
        let mut op = 0u8;
        while text.get(i).is_some_and(|&c| is_space(c) || c == b',') {
            i += 1;
        }
        let Some(&c) = text.get(i) else {
            break;
        };
        if c == b'+' || c == b'-' {
            op = c;
            i += 1;
            while text.get(i).is_some_and(|&c| is_space(c)) {
                i += 1;
            }
            if i >= text.len() {
                return Err(MaskError::TrailingOperator);
            }
        } else if !found {
            mask = CANTMASK;
        }
        let start = i;
        while text
            .get(i)
            .is_some_and(|&c| !is_space(c) && c != b'+' && c != b'-' && c != b',')
        {
            i += 1;
        }
        let token = text.get(start..i).unwrap_or(&[]);
        if token.is_empty() {
            // An operator right before another ("+-net"): Lustre matches
            // nothing there and refuses it.
            return Err(MaskError::Unknown(start, i));
        }
        let named = NAMES
            .iter()
            .position(|n| n.as_bytes().eq_ignore_ascii_case(token));
        if let Some(bit) = named {
            if op == b'-' {
                mask &= !(1 << bit);
            } else {
                mask |= 1 << bit;
            }
        } else if token.eq_ignore_ascii_case(b"all") {
            mask = if op == b'-' { CANTMASK } else { u32::MAX };
        } else if token.eq_ignore_ascii_case(b"none") {
            if op != b'-' {
                mask = CANTMASK;
            }
        } else if text
            .get(start..)
            .is_some_and(|rest| trim_end(rest).eq_ignore_ascii_case(b"default"))
        {
            // Lustre compares the rest of the text, so `default` ends it
            // (a trailing newline from `echo` aside).
            mask = match op {
                b'-' => (mask & !DEFAULT) | CANTMASK,
                b'+' => mask | DEFAULT,
                _ => DEFAULT,
            };
        } else {
            return Err(MaskError::Unknown(start, i));
        }
        found = true;
    }
    Ok(mask)
}

fn trim_end(text: &[u8]) -> &[u8] {
    let end = text
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(0, |i| i + 1);
    text.get(..end).unwrap_or(&[])
}

/// Writes a mask as its class names, blank-separated (`cfs_mask2str`), or
/// `0`.
pub fn write_names(w: &mut impl core::fmt::Write, mask: u32) -> core::fmt::Result {
    if mask == 0 {
        return w.write_str("0");
    }
    let mut first = true;
    for (bit, name) in NAMES.iter().enumerate() {
        if mask & (1 << bit) != 0 {
            if !first {
                w.write_str(" ")?;
            }
            w.write_str(name)?;
            first = false;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::string::String;

    #[test]
    fn default_is_lustres() {
        // LIBCFS_D_DEFAULT as Lustre's header computes it.
        assert_eq!(DEFAULT, 0x130e_0580);
        assert!(!shows(DEFAULT, D_NET));
        assert!(shows(DEFAULT, D_NETERROR));
        assert!(shows(0, D_ERROR) && shows(0, D_WARNING) && shows(0, D_CONSOLE));
        assert!(!shows(0, D_NETERROR));
    }

    #[test]
    fn numbers_set_the_mask_as_written() {
        assert_eq!(parse(b"0", DEFAULT), Ok(0));
        assert_eq!(parse(b"-1\n", 0), Ok(u32::MAX));
        assert_eq!(parse(b"0x200", 0), Ok(D_NET));
        assert_eq!(parse(b"512", 0), Ok(D_NET));
        assert_eq!(parse(b"010", 0), Ok(8));
        assert_eq!(parse(b" 7 ", 0), Ok(7));
    }

    #[test]
    fn names_are_absolute_unless_an_operator_comes_first() {
        assert_eq!(parse(b"net", DEFAULT), Ok(CANTMASK | D_NET));
        assert_eq!(parse(b"+net", DEFAULT), Ok(DEFAULT | D_NET));
        assert_eq!(parse(b"-neterror", DEFAULT), Ok(DEFAULT & !D_NETERROR));
        assert_eq!(
            parse(b"net,neterror\n", 0),
            Ok(CANTMASK | D_NET | D_NETERROR)
        );
        assert_eq!(parse(b"+net -ha", DEFAULT), Ok((DEFAULT | D_NET) & !D_HA));
        assert_eq!(parse(b"NET", 0), Ok(CANTMASK | D_NET));
        // An operator applies to the one token after it.
        assert_eq!(parse(b"-net neterror", DEFAULT), Ok(DEFAULT));
        assert_eq!(parse(b"-net,ha", DEFAULT), Ok(DEFAULT));
        assert_eq!(parse(b"-net none", DEFAULT), Ok(CANTMASK));
        assert_eq!(parse(b"-all net", u32::MAX), Ok(CANTMASK | D_NET));
        assert_eq!(parse(b"net\x0bha", 0), Ok(CANTMASK | D_NET | D_HA));
    }

    #[test]
    fn all_none_and_default() {
        assert_eq!(parse(b"all", 0), Ok(u32::MAX));
        assert_eq!(parse(b"-all", u32::MAX), Ok(CANTMASK));
        assert_eq!(parse(b"none", DEFAULT), Ok(CANTMASK));
        assert_eq!(parse(b"default", 0), Ok(DEFAULT));
        assert_eq!(parse(b"+default", D_NET), Ok(D_NET | DEFAULT));
        assert_eq!(parse(b"-default", u32::MAX), Ok(!DEFAULT | CANTMASK));
        assert_eq!(parse(b"net default\n", 0), Ok(DEFAULT));
        // Only as the last token.
        assert!(parse(b"default net", 0).is_err());
        assert!(parse(b"+default -net", 0).is_err());
    }

    #[test]
    fn bad_text_is_refused() {
        assert_eq!(parse(b"netz", 0), Err(MaskError::Unknown(0, 4)));
        assert_eq!(MaskError::Unknown(1, 5).token(b"+netz"), b"netz");
        assert_eq!(parse(b"+net +", 0), Err(MaskError::TrailingOperator));
        assert_eq!(parse(b"+-net", 0), Err(MaskError::Unknown(1, 1)));
        assert!(parse(b"0x", 0).is_err());
        assert!(parse(b"12ab", 0).is_err());
        // `%i` takes a `-`, not a `+`; `+5` is a name, and none.
        assert!(parse(b"+5", 0).is_err());
    }

    #[test]
    fn empty_text_keeps_the_mask() {
        assert_eq!(parse(b"", DEFAULT), Ok(DEFAULT));
        assert_eq!(parse(b" \n", D_NET), Ok(D_NET));
    }

    #[test]
    fn a_site_prints_a_burst_per_window_then_tells_what_it_dropped() {
        let l = RateLimit::new();
        let t0 = 1_000;
        for i in 0..BURST {
            assert_eq!(
                l.allow(t0 + u64::from(i)),
                Allow {
                    print: true,
                    missed: 0
                }
            );
        }
        for _ in 0..3 {
            assert!(!l.allow(t0 + 100).print);
        }
        // Still the same window just before it ends.
        assert!(!l.allow(t0 + INTERVAL_MS - 1).print);
        let next = l.allow(t0 + INTERVAL_MS);
        assert_eq!(
            next,
            Allow {
                print: true,
                missed: 4
            }
        );
        // The count was told once.
        assert_eq!(l.allow(t0 + INTERVAL_MS + 1).missed, 0);
        // A clock at 0 still opens a window.
        assert!(RateLimit::new().allow(0).print);
    }

    #[test]
    fn names_print_back() {
        let mut s = String::new();
        write_names(&mut s, CANTMASK | D_NET).unwrap();
        assert_eq!(s, "net warning error emerg console");
        assert_eq!(parse(s.as_bytes(), 0), Ok(CANTMASK | D_NET));
        let mut z = String::new();
        write_names(&mut z, 0).unwrap();
        assert_eq!(z, "0");
    }
}
