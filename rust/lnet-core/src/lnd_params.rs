//! What the LNDs' integer module parameters share (ksocklnd's,
//! `socklnd_params.rs`, and ko2iblnd's, `o2iblnd_params.rs`): each has a
//! name under /sys/module/<lnd>/parameters, a mode, Lustre's default and
//! the values it takes, and a write is one number among them, or refused
//! with a message naming what it takes and the old value kept.

use super::kstrto::{self, NumberError};
use super::params::EINVAL;
use core::fmt;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// One parameter as Lustre declares it, with the values it takes.
pub struct Spec {
    /// Its name under /sys/module/<lnd>/parameters.
    pub name: &'static str,
    /// Mode 0644 (changeable at runtime) rather than 0444 (set at load).
    pub writable: bool,
    /// Lustre's default.
    pub default: i32,
    /// The lowest value it takes.
    pub min: i32,
    /// The highest value it takes.
    pub max: i32,
}

impl Spec {
    /// A parameter from its row in an LND's table: name, writable,
    /// default, min, max.
    pub const fn row(
        (name, writable, default, min, max): (&'static str, bool, i32, i32, i32),
    ) -> Spec {
        Spec {
            name,
            writable,
            default,
            min,
            max,
        }
    }
}

/// What each LND's parameter enum `$t` (with its `ALL: [$t; $n]` table
/// and `const fn decl`) has alike: `DEFAULTS`, Lustre's values in `ALL`
/// order, and its [`LndParam`] impl, to which `$extra` adds the methods it
/// overrides. The caller has `LndParam` and `Spec` in scope.
macro_rules! lnd_param_table {
    ($t:ident, $n:literal, { $($extra:item)* }) => {
        impl $t {
            /// Lustre's default.
            pub const fn default_value(self) -> i32 {
                self.decl().default
            }

            /// Lustre's defaults, in `ALL` order.
            pub const DEFAULTS: [i32; $n] = {
                let mut out = [0; $n];
                let mut i = 0;
                while i < $n {
                    out[i] = $t::ALL[i].decl().default;
                    i += 1;
                }
                out
            };
        }

        impl LndParam for $t {
            const LIST: &'static [$t] = &$t::ALL;

            fn spec(self) -> Spec {
                self.decl()
            }

            fn index(self) -> usize {
                self as usize
            }

            $($extra)*
        }
    };
}
pub(crate) use lnd_param_table;

/// An LND's integer parameters.
pub trait LndParam: Copy + Sized + 'static {
    /// Every parameter, in declaration order.
    const LIST: &'static [Self];

    /// Its declaration.
    fn spec(self) -> Spec;

    /// Where it sits in [`Self::LIST`].
    fn index(self) -> usize;

    /// The only values it takes, for one that takes a set within its
    /// range.
    fn values(self) -> Option<&'static [i32]> {
        None
    }

    /// The errno a value it does not take gets.
    fn refusal_errno(self) -> i32 {
        EINVAL
    }

    /// Its name under /sys/module/<lnd>/parameters.
    fn name(self) -> &'static str {
        self.spec().name
    }

    /// The lowest and highest values it takes.
    fn range(self) -> (i32, i32) {
        let s = self.spec();
        (s.min, s.max)
    }

    /// Mode 0644 (changeable at runtime; read at each use) or 0444 (read
    /// when an NI or a connection starts; set at load time), as Lustre.
    fn mode(self) -> u16 {
        if self.spec().writable {
            0o644
        } else {
            0o444
        }
    }

    /// Whether `v` may be set.
    fn allows(self, v: i32) -> bool {
        let (lo, hi) = self.range();
        let listed = match self.values() {
            Some(set) => set.contains(&v),
            None => true,
        };
        lo <= v && v <= hi && listed
    }

    /// Looks a parameter up by its name.
    fn from_name(name: &[u8]) -> Option<Self> {
        Self::LIST
            .iter()
            .copied()
            .find(|p| p.name().as_bytes() == name)
    }
}

/// Why a write was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamError<P> {
    /// Not a number, or not one that fits an `int`.
    Number(P, NumberError),
    /// No value given (a bare name on the modprobe line).
    Missing(P),
    /// A number the parameter does not take.
    Range(P, i32),
}

impl<P: LndParam> ParamError<P> {
    /// The errno handed back to the writer.
    pub fn errno(&self) -> i32 {
        match self {
            ParamError::Number(_, e) => e.errno(),
            ParamError::Missing(_) => EINVAL,
            ParamError::Range(p, _) => p.refusal_errno(),
        }
    }
}

impl<P: LndParam> fmt::Display for ParamError<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Number(p, NumberError::Invalid) => {
                write!(f, "Invalid value for '{}': not a number", p.name())
            }
            ParamError::Number(p, NumberError::Overflow) => {
                write!(f, "Invalid value for '{}': out of range", p.name())
            }
            ParamError::Missing(p) => {
                write!(f, "Invalid value for '{}': no value given", p.name())
            }
            ParamError::Range(p, v) => {
                write!(f, "Invalid value {v} for '{}': must be ", p.name())?;
                match p.values() {
                    Some(set) => {
                        f.write_str("one of ")?;
                        for (i, x) in set.iter().enumerate() {
                            let sep = if i == 0 { "" } else { ", " };
                            write!(f, "{sep}{x}")?;
                        }
                        Ok(())
                    }
                    None => {
                        let (lo, hi) = p.range();
                        write!(f, "{lo}..{hi}")
                    }
                }
            }
        }
    }
}

/// The value a write of `input` to `p` sets.
pub fn parse<P: LndParam>(p: P, input: Option<&[u8]>) -> Result<i32, ParamError<P>> {
    let input = input.ok_or(ParamError::Missing(p))?;
    let v = kstrto::parse_i32(input).map_err(|e| ParamError::Number(p, e))?;
    if !p.allows(v) {
        return Err(ParamError::Range(p, v));
    }
    Ok(v)
}

/// The live values of an LND's integer parameters, one per entry of
/// `P::LIST` in its order, each starting at Lustre's default: what the LND
/// reads at each use and a write (modprobe, /sys/module) sets. The
/// kernel serialises writers (module load, then sysfs under the module's
/// parameter lock); readers load without a lock.
pub struct Live<P, const N: usize> {
    values: [AtomicI32; N],
    _p: PhantomData<fn() -> P>,
}

impl<P: LndParam, const N: usize> Live<P, N> {
    /// Values starting at `defaults`, in `P::LIST` order.
    pub const fn new(defaults: [i32; N]) -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const ZERO: AtomicI32 = AtomicI32::new(0);
        let mut values = [ZERO; N];
        let mut i = 0;
        while i < N {
            values[i] = AtomicI32::new(defaults[i]);
            i += 1;
        }
        Live {
            values,
            _p: PhantomData,
        }
    }

    /// The current value of `p`.
    pub fn get(&self, p: P) -> i32 {
        self.values
            .get(p.index())
            .map_or(p.spec().default, |v| v.load(Relaxed))
    }

    /// A write of `input` to the parameter named `name`, which keeps the
    /// old value when refused; `None` if `P` has no parameter so named.
    pub fn set(&self, name: &[u8], input: Option<&[u8]>) -> Option<Result<(), ParamError<P>>> {
        let p = P::from_name(name)?;
        Some(parse(p, input).map(|v| {
            if let Some(cell) = self.values.get(p.index()) {
                cell.store(v, Relaxed);
            }
        }))
    }

    /// The current value of the parameter named `name`, if `P` has one.
    pub fn show(&self, name: &[u8]) -> Option<i32> {
        P::from_name(name).map(|p| self.get(p))
    }
}

#[cfg(test)]
mod tests {
    use super::super::o2iblnd_params::IbParam;
    use super::super::socklnd_params::SockParam;
    use super::*;
    use core::fmt::Debug;

    /// `p` takes 0..=20 at least and not -1: what every LND's integer
    /// parameter does with a write.
    fn writes<P: LndParam + Debug + PartialEq>(p: P) {
        assert_eq!(parse(p, Some(b"20\n")), Ok(20));
        assert_eq!(parse(p, Some(b"0x10")), Ok(16));
        assert_eq!(parse(p, Some(b"0")), Ok(0));
        assert_eq!(parse(p, Some(b"-1")), Err(ParamError::Range(p, -1)));
        assert_eq!(
            parse(p, Some(b"ten")),
            Err(ParamError::Number(p, NumberError::Invalid))
        );
        assert_eq!(
            parse(p, Some(b"99999999999")),
            Err(ParamError::Number(p, NumberError::Overflow))
        );
        assert_eq!(parse(p, None), Err(ParamError::Missing(p)));
        assert_eq!(ParamError::Missing(p).errno(), EINVAL);
    }

    #[test]
    fn both_lnds_parse_alike() {
        writes(SockParam::SockTimeout);
        writes(IbParam::Timeout);
    }

    /// Live values start at Lustre's defaults; a write sets one by name
    /// and a refused one keeps the old value.
    #[test]
    fn live_values() {
        static LIVE: Live<SockParam, 20> = Live::new(SockParam::DEFAULTS);
        for p in SockParam::ALL {
            assert_eq!(LIVE.get(p), p.default_value());
        }
        assert_eq!(LIVE.set(b"sock_timeout", Some(b"30")), Some(Ok(())));
        assert_eq!(LIVE.get(SockParam::SockTimeout), 30);
        assert_eq!(LIVE.show(b"sock_timeout"), Some(30));
        assert_eq!(
            LIVE.set(b"sock_timeout", Some(b"-1")),
            Some(Err(ParamError::Range(SockParam::SockTimeout, -1)))
        );
        assert_eq!(LIVE.get(SockParam::SockTimeout), 30);
        assert_eq!(LIVE.set(b"no_such", Some(b"1")), None);
        assert_eq!(LIVE.show(b"no_such"), None);
        let ib: Live<IbParam, 26> = Live::new(IbParam::DEFAULTS);
        for p in IbParam::ALL {
            assert_eq!(ib.get(p), p.default_value());
        }
    }
}
