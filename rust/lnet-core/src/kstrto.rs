//! Number parsing with the kernel's `kstrtoul`/`kstrtoint` rules, so a value
//! written to a parameter is read the same way as by Lustre's setters:
//! base prefix `0x` (hex) or `0` (octal), an optional `+` (and `-` for signed
//! types), and one optional trailing newline (what `echo` adds).

/// Why a string is not a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberError {
    /// Not a number at all (empty, stray characters, missing value).
    Invalid,
    /// A number, but too large for the type.
    Overflow,
}

impl NumberError {
    /// The errno the kernel's parsers return for this error.
    pub fn errno(self) -> i32 {
        match self {
            NumberError::Invalid => super::params::EINVAL,
            NumberError::Overflow => super::params::ERANGE,
        }
    }
}

fn radix_and_digits(s: &[u8]) -> (u32, &[u8]) {
    match s {
        [b'0', x, d, ..] if (*x == b'x' || *x == b'X') && d.is_ascii_hexdigit() => (16, &s[2..]),
        [b'0', ..] => (8, s),
        _ => (10, s),
    }
}

/// Parses an unsigned 64-bit value as `kstrtoull(s, 0, ..)` does.
pub fn parse_u64(s: &[u8]) -> Result<u64, NumberError> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let (radix, digits) = radix_and_digits(s);
    let mut value: u64 = 0;
    let mut used = 0;
    let mut overflow = false;
    for &c in digits {
        let Some(d) = (c as char).to_digit(radix) else {
            break;
        };
        match value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        used += 1;
    }
    if used == 0 {
        return Err(NumberError::Invalid);
    }
    let rest = digits.get(used..).unwrap_or(&[]);
    let rest = rest.strip_prefix(b"\n").unwrap_or(rest);
    if !rest.is_empty() {
        return Err(NumberError::Invalid);
    }
    if overflow {
        return Err(NumberError::Overflow);
    }
    Ok(value)
}

/// Parses an unsigned 32-bit value as `kstrtouint(s, 0, ..)` does.
pub fn parse_u32(s: &[u8]) -> Result<u32, NumberError> {
    u32::try_from(parse_u64(s)?).map_err(|_| NumberError::Overflow)
}

/// Parses a signed 32-bit value as `kstrtoint(s, 0, ..)` does.
pub fn parse_i32(s: &[u8]) -> Result<i32, NumberError> {
    if let Some(rest) = s.strip_prefix(b"-") {
        // As in the kernel, the magnitude may carry its own '+' ("-+1").
        let magnitude = parse_u64(rest)?;
        return 0i64
            .checked_sub_unsigned(magnitude)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or(NumberError::Overflow);
    }
    i32::try_from(parse_u64(s)?).map_err(|_| NumberError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_and_newline() {
        assert_eq!(parse_u64(b"150"), Ok(150));
        assert_eq!(parse_u64(b"150\n"), Ok(150));
        assert_eq!(parse_u64(b"+7"), Ok(7));
        assert_eq!(parse_u64(b"0x10"), Ok(16));
        assert_eq!(parse_u64(b"0X1f\n"), Ok(31));
        assert_eq!(parse_u64(b"010"), Ok(8));
        assert_eq!(parse_u64(b"0"), Ok(0));
    }

    #[test]
    fn garbage_is_invalid() {
        for s in [
            &b""[..],
            b"\n",
            b"abc",
            b"12a",
            b"1 2",
            b"-1",
            b"08",
            b"0x",
            b"1\n\n",
            b"++1",
            b" 1",
        ] {
            assert_eq!(parse_u64(s), Err(NumberError::Invalid), "{:?}", s);
        }
    }

    #[test]
    fn overflow() {
        assert_eq!(
            parse_u64(b"18446744073709551616"),
            Err(NumberError::Overflow)
        );
        assert_eq!(parse_u64(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_u32(b"4294967296"), Err(NumberError::Overflow));
        assert_eq!(parse_u32(b"4294967295"), Ok(u32::MAX));
    }

    #[test]
    fn signed() {
        assert_eq!(parse_i32(b"-5"), Ok(-5));
        assert_eq!(parse_i32(b"-2147483648"), Ok(i32::MIN));
        assert_eq!(parse_i32(b"-2147483649"), Err(NumberError::Overflow));
        assert_eq!(parse_i32(b"2147483648"), Err(NumberError::Overflow));
        assert_eq!(parse_i32(b"--1"), Err(NumberError::Invalid));
        assert_eq!(parse_i32(b"-+1"), Ok(-1));
        assert_eq!(parse_i32(b"-"), Err(NumberError::Invalid));
    }

    proptest::proptest! {
        #[test]
        fn decimal_round_trip(v: u64) {
            let s = alloc_fmt(v);
            proptest::prop_assert_eq!(parse_u64(s.as_bytes()), Ok(v));
        }

        #[test]
        fn never_panics(s: Vec<u8>) {
            let _ = parse_u64(&s);
            let _ = parse_i32(&s);
        }
    }

    extern crate std;
    use std::{string::String, vec::Vec};
    fn alloc_fmt(v: u64) -> String {
        std::format!("{v}\n")
    }
}
