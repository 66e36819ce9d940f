//! Match entries and memory descriptors: whether an incoming PUT or GET
//! matches an ME/MD pair, where in the MD it lands and how much of it, as
//! `lnet_try_match_md` decides. The kernel side holds the lists and locks;
//! this is the rule.
//!
//! Deliberate differences, both where a remote offset (`MANAGE_REMOTE`)
//! could otherwise reach past the MD: an offset beyond the MD's length is
//! dropped (Lustre computes the room left with unsigned arithmetic that
//! wraps), and with `MAX_SIZE` the room is also bounded by what is left of
//! the MD (Lustre checks that only for local offsets).

use super::nid::Nid;

/// MD option bits (`struct lnet_md::options`).
pub mod options {
    /// Accepts PUTs.
    pub const OP_PUT: u32 = 1 << 0;
    /// Accepts GETs.
    pub const OP_GET: u32 = 1 << 1;
    /// The initiator picks the offset.
    pub const MANAGE_REMOTE: u32 = 1 << 2;
    /// Longer requests are cut to fit rather than dropped.
    pub const TRUNCATE: u32 = 1 << 4;
    /// No ACK for PUTs into this MD.
    pub const ACK_DISABLE: u32 = 1 << 5;
    /// Each operation takes at most `max_size` bytes.
    pub const MAX_SIZE: u32 = 1 << 7;
    /// The MD is a page vector.
    pub const KIOV: u32 = 1 << 8;
    /// A bulk handle.
    pub const BULK_HANDLE: u32 = 1 << 9;
    /// Always track the response, whatever `lnet_response_tracking` says.
    pub const TRACK_RESPONSE: u32 = 1 << 10;
    /// Never track the response.
    pub const NO_TRACK_RESPONSE: u32 = 1 << 11;
    /// Every bit that means something.
    pub const ALL: u32 = OP_PUT
        | OP_GET
        | MANAGE_REMOTE
        | TRUNCATE
        | ACK_DISABLE
        | MAX_SIZE
        | KIOV
        | BULK_HANDLE
        | TRACK_RESPONSE
        | NO_TRACK_RESPONSE;
}

/// Threshold of an MD that never runs out (`LNET_MD_THRESH_INF`).
pub const THRESH_INF: i32 = -1;
/// Any process id (`LNET_PID_ANY`).
pub const PID_ANY: u32 = u32::MAX;

/// Event kinds delivered to an MD's handler (`enum lnet_event_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EventKind {
    /// An incoming GET completed on the MD.
    Get = 1,
    /// An incoming PUT completed on the MD.
    Put = 2,
    /// A REPLY arrived in the MD.
    Reply = 3,
    /// An ACK arrived.
    Ack = 4,
    /// An outgoing PUT or GET left.
    Send = 5,
    /// The MD was unlinked.
    Unlink = 6,
}

/// Whether the ACK of a PUT (`is_put`) or the REPLY of a GET is tracked
/// with a deadline (`lnet_response_tracking_enabled` plus the MD flags):
/// `NO_TRACK_RESPONSE` forbids it, even beside `TRACK_RESPONSE`, as
/// Lustre checks it first; then `TRACK_RESPONSE` or a caller-given timeout
/// (our `LNetPutTimeout`/`LNetGetTimeout`) forces it; otherwise
/// `lnet_response_tracking` decides (1 GET, 2 PUT, 3 both, 0 none).
pub fn response_tracked(
    md_options: u32,
    response_tracking: u32,
    is_put: bool,
    own_timeout: bool,
) -> bool {
    if md_options & options::NO_TRACK_RESPONSE != 0 {
        return false;
    }
    if own_timeout || md_options & options::TRACK_RESPONSE != 0 {
        return true;
    }
    match response_tracking {
        3 => true,
        2 => is_put,
        1 => !is_put,
        _ => false,
    }
}

/// What a match entry selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchEntry {
    /// Source NID to match, or `Nid::ANY`.
    pub nid: Nid,
    /// Source pid to match, or `PID_ANY`.
    pub pid: u32,
    /// Match bits.
    pub match_bits: u64,
    /// Bits ignored in the comparison.
    pub ignore_bits: u64,
}

/// The MD state matching reads and updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MdState {
    /// Option bits.
    pub options: u32,
    /// Bytes in the MD.
    pub length: u32,
    /// With `MAX_SIZE`: bytes per operation.
    pub max_size: u32,
    /// Next local offset (ignored with `MANAGE_REMOTE`).
    pub offset: u32,
    /// Operations left, or `THRESH_INF`.
    pub threshold: i32,
}

/// Why an MD description is unusable (`lnet_md_validate`-style checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MdError {
    /// An option bit that has no meaning.
    UnknownOptions(u32),
    /// `MAX_SIZE` larger than the MD, or zero.
    BadMaxSize,
    /// A threshold below `THRESH_INF`.
    BadThreshold,
}

impl MdState {
    /// A fresh MD of `length` bytes.
    pub fn new(
        options: u32,
        length: u32,
        max_size: u32,
        threshold: i32,
    ) -> Result<MdState, MdError> {
        if options & !options::ALL != 0 {
            return Err(MdError::UnknownOptions(options & !options::ALL));
        }
        if options & options::MAX_SIZE != 0 && (max_size == 0 || max_size > length) {
            return Err(MdError::BadMaxSize);
        }
        if threshold < THRESH_INF {
            return Err(MdError::BadThreshold);
        }
        Ok(MdState {
            options,
            length,
            max_size,
            offset: 0,
            threshold,
        })
    }

    /// No more operations fit (`lnet_md_exhausted`).
    pub fn exhausted(&self) -> bool {
        self.threshold == 0
            || (self.options & options::MAX_SIZE != 0
                && u64::from(self.offset) + u64::from(self.max_size) > u64::from(self.length))
    }

    /// Commits an operation of `mlength` bytes at `offset` (what
    /// `lnet_msg_attach_md` and the match do). Returns whether the MD is
    /// now exhausted, i.e. should be auto-unlinked.
    pub fn commit(&mut self, offset: u32, mlength: u32) -> bool {
        self.offset = offset.saturating_add(mlength);
        if self.threshold > 0 {
            self.threshold -= 1;
        }
        self.exhausted()
    }
}

/// The operation being matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// An incoming PUT.
    Put,
    /// An incoming GET.
    Get,
}

/// An incoming request, as matching sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Incoming {
    /// PUT or GET.
    pub op: Op,
    /// The initiator.
    pub src_nid: Nid,
    /// The initiator's pid.
    pub src_pid: u32,
    /// Match bits of the request.
    pub match_bits: u64,
    /// Bytes requested (PUT payload or GET sink length).
    pub rlength: u32,
    /// Offset the initiator asked for (used with `MANAGE_REMOTE`).
    pub roffset: u32,
}

/// The outcome of trying one ME/MD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    /// Not this one; keep looking.
    No,
    /// Not this one, and the MD has no operations left.
    Exhausted,
    /// This one, but the request does not fit and the MD does not
    /// truncate: the message is dropped.
    TooBig {
        /// Bytes requested.
        rlength: u32,
        /// Bytes the MD allows.
        room: u32,
    },
    /// This one, but the initiator's offset (`MANAGE_REMOTE`) is past the
    /// end of the MD: the message is dropped.
    OffsetBeyond {
        /// The offset asked for.
        offset: u32,
        /// The MD's length.
        length: u32,
    },
    /// This one, `mlength` bytes at `offset`.
    Yes {
        /// Offset in the MD.
        offset: u32,
        /// Bytes that will move (at most the request).
        mlength: u32,
    },
}

/// Decides whether `inc` matches `me`/`md`.
pub fn try_match(me: &MatchEntry, md: &MdState, inc: &Incoming) -> Match {
    if md.exhausted() {
        return Match::Exhausted;
    }
    let opc = match inc.op {
        Op::Put => options::OP_PUT,
        Op::Get => options::OP_GET,
    };
    if md.options & opc == 0 {
        return Match::No;
    }
    if !me.nid.is_any() && me.nid != inc.src_nid {
        return Match::No;
    }
    if me.pid != PID_ANY && me.pid != inc.src_pid {
        return Match::No;
    }
    if (me.match_bits ^ inc.match_bits) & !me.ignore_bits != 0 {
        return Match::No;
    }
    let offset = if md.options & options::MANAGE_REMOTE != 0 {
        inc.roffset
    } else {
        md.offset
    };
    let Some(left) = md.length.checked_sub(offset) else {
        return Match::OffsetBeyond {
            offset,
            length: md.length,
        };
    };
    let room = if md.options & options::MAX_SIZE != 0 {
        md.max_size.min(left)
    } else {
        left
    };
    if inc.rlength <= room {
        Match::Yes {
            offset,
            mlength: inc.rlength,
        }
    } else if md.options & options::TRUNCATE != 0 {
        Match::Yes {
            offset,
            mlength: room,
        }
    } else {
        Match::TooBig {
            rlength: inc.rlength,
            room,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const A: Nid = Nid::new4(crate_net(), 0x0a00_0001);
    const B: Nid = Nid::new4(crate_net(), 0x0a00_0002);

    const fn crate_net() -> super::super::nid::Net {
        super::super::nid::Net::new(super::super::nid::lnd::SOCK, 0)
    }

    fn me(bits: u64, ignore: u64) -> MatchEntry {
        MatchEntry {
            nid: Nid::ANY,
            pid: PID_ANY,
            match_bits: bits,
            ignore_bits: ignore,
        }
    }

    fn put(bits: u64, len: u32) -> Incoming {
        Incoming {
            op: Op::Put,
            src_nid: A,
            src_pid: 12345,
            match_bits: bits,
            rlength: len,
            roffset: 0,
        }
    }

    fn md(options: u32, length: u32, threshold: i32) -> MdState {
        MdState::new(options, length, 0, threshold).unwrap()
    }

    #[test]
    fn response_tracking_table() {
        use options::{NO_TRACK_RESPONSE as NO, TRACK_RESPONSE as YES};
        // (options, lnet_response_tracking, is_put, own timeout) -> tracked
        let table = [
            (0, 3, true, false, true),
            (0, 3, false, false, true),
            (0, 2, true, false, true),
            (0, 2, false, false, false),
            (0, 1, true, false, false),
            (0, 1, false, false, true),
            (0, 0, true, false, false),
            (0, 0, false, false, false),
            (YES, 0, true, false, true),
            (NO, 3, false, false, false),
            (NO, 3, false, true, false),
            (NO | YES, 3, true, false, false),
            (NO | YES, 0, false, true, false),
            (0, 0, true, true, true),
        ];
        for (o, rt, put, own, want) in table {
            assert_eq!(
                response_tracked(o, rt, put, own),
                want,
                "{o:#x} {rt} {put} {own}"
            );
        }
    }

    #[test]
    fn match_bits_and_ignore_bits() {
        let d = md(options::OP_PUT, 4096, 1);
        assert_eq!(
            try_match(&me(7, 0), &d, &put(7, 100)),
            Match::Yes {
                offset: 0,
                mlength: 100
            }
        );
        assert_eq!(try_match(&me(7, 0), &d, &put(6, 100)), Match::No);
        assert_eq!(
            try_match(&me(0xff00, 0xff), &d, &put(0xff42, 1)),
            Match::Yes {
                offset: 0,
                mlength: 1
            }
        );
        assert_eq!(try_match(&me(0xff00, 0xff), &d, &put(0xfe42, 1)), Match::No);
    }

    #[test]
    fn op_nid_and_pid() {
        let d = md(options::OP_GET, 4096, 1);
        assert_eq!(try_match(&me(1, 0), &d, &put(1, 1)), Match::No);
        let get = Incoming {
            op: Op::Get,
            ..put(1, 1)
        };
        assert!(matches!(try_match(&me(1, 0), &d, &get), Match::Yes { .. }));
        let only_b = MatchEntry { nid: B, ..me(1, 0) };
        assert_eq!(try_match(&only_b, &d, &get), Match::No);
        let only_pid = MatchEntry {
            pid: 99,
            ..me(1, 0)
        };
        assert_eq!(try_match(&only_pid, &d, &get), Match::No);
        let exact = MatchEntry {
            nid: A,
            pid: 12345,
            ..me(1, 0)
        };
        assert!(matches!(try_match(&exact, &d, &get), Match::Yes { .. }));
    }

    #[test]
    fn truncation_and_too_big() {
        let d = md(options::OP_PUT, 4096, THRESH_INF);
        assert_eq!(
            try_match(&me(0, 0), &d, &put(0, 5000)),
            Match::TooBig {
                rlength: 5000,
                room: 4096
            }
        );
        let t = md(options::OP_PUT | options::TRUNCATE, 4096, THRESH_INF);
        assert_eq!(
            try_match(&me(0, 0), &t, &put(0, 5000)),
            Match::Yes {
                offset: 0,
                mlength: 4096
            }
        );
    }

    #[test]
    fn local_offset_advances_and_threshold_runs_out() {
        let mut d = md(options::OP_PUT, 4096, 2);
        let Match::Yes { offset, mlength } = try_match(&me(0, 0), &d, &put(0, 1000)) else {
            panic!()
        };
        assert!(!d.commit(offset, mlength));
        assert_eq!(
            try_match(&me(0, 0), &d, &put(0, 1000)),
            Match::Yes {
                offset: 1000,
                mlength: 1000
            }
        );
        assert!(d.commit(1000, 1000));
        assert_eq!(try_match(&me(0, 0), &d, &put(0, 1)), Match::Exhausted);
    }

    #[test]
    fn max_size_exhausts_when_the_next_would_not_fit() {
        let mut d =
            MdState::new(options::OP_PUT | options::MAX_SIZE, 4096, 1024, THRESH_INF).unwrap();
        for i in 0..4 {
            let Match::Yes { offset, mlength } = try_match(&me(0, 0), &d, &put(0, 1024)) else {
                panic!()
            };
            assert_eq!(offset, i * 1024);
            assert_eq!(d.commit(offset, mlength), i == 3);
        }
        assert_eq!(try_match(&me(0, 0), &d, &put(0, 1)), Match::Exhausted);
        assert_eq!(
            MdState::new(options::MAX_SIZE, 10, 11, 1),
            Err(MdError::BadMaxSize)
        );
        assert_eq!(
            MdState::new(1 << 3, 10, 0, 1),
            Err(MdError::UnknownOptions(1 << 3))
        );
        assert_eq!(MdState::new(0, 10, 0, -2), Err(MdError::BadThreshold));
    }

    #[test]
    fn manage_remote_offsets() {
        let d = md(options::OP_PUT | options::MANAGE_REMOTE, 4096, THRESH_INF);
        let at = |roffset, len| Incoming {
            roffset,
            ..put(0, len)
        };
        assert_eq!(
            try_match(&me(0, 0), &d, &at(4000, 96)),
            Match::Yes {
                offset: 4000,
                mlength: 96
            }
        );
        assert_eq!(
            try_match(&me(0, 0), &d, &at(4000, 97)),
            Match::TooBig {
                rlength: 97,
                room: 96
            }
        );
        // Beyond the MD: dropped, where Lustre's unsigned room would wrap.
        assert_eq!(
            try_match(&me(0, 0), &d, &at(5000, 1)),
            Match::OffsetBeyond {
                offset: 5000,
                length: 4096
            }
        );
        // MAX_SIZE never reaches past the end either.
        let m = MdState::new(
            options::OP_PUT | options::MANAGE_REMOTE | options::MAX_SIZE,
            4096,
            1024,
            THRESH_INF,
        )
        .unwrap();
        assert_eq!(
            try_match(&me(0, 0), &m, &at(4000, 1024)),
            Match::TooBig {
                rlength: 1024,
                room: 96
            }
        );
    }

    proptest! {
        #[test]
        fn a_match_stays_inside_the_md(
            opts in 0u32..(1 << 12), length in 0u32..10_000, max in 0u32..10_000, thr in -1i32..5,
            bits: u64, ignore: u64, noise: u64, mismatch: bool, rlen in 0u32..20_000, roff in 0u32..20_000, commits in 0usize..4,
        ) {
            // Mostly requests that match (differing only in ignored bits),
            // or random matching would almost never reach the interesting cases.
            let rbits = if mismatch { bits ^ noise } else { bits ^ (noise & ignore) };
            let opts = (opts & options::ALL) | options::OP_PUT;
            let Ok(mut d) = MdState::new(opts, length, max, thr) else { return Ok(()) };
            let m = me(bits, ignore);
            let inc = Incoming { roffset: roff, ..put(rbits, rlen) };
            for _ in 0..=commits {
                match try_match(&m, &d, &inc) {
                    Match::Yes { offset, mlength } => {
                        prop_assert!(u64::from(offset) + u64::from(mlength) <= u64::from(d.length));
                        prop_assert!(mlength <= rlen);
                        prop_assert!((bits ^ rbits) & !ignore == 0);
                        d.commit(offset, mlength);
                    }
                    Match::Exhausted => prop_assert!(d.exhausted()),
                    Match::No => prop_assert!((bits ^ rbits) & !ignore != 0),
                    Match::TooBig { rlength, room } => {
                        prop_assert!(rlength > room);
                        prop_assert!(opts & options::TRUNCATE == 0);
                    }
                    Match::OffsetBeyond { offset, length } => {
                        prop_assert!(opts & options::MANAGE_REMOTE != 0 && offset > length);
                    }
                }
            }
        }
    }
}
