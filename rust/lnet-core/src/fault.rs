// SPDX-License-Identifier: GPL-2.0

//! Fault injection rules (`lctl net_drop_*` / `net_delay_*`): which
//! messages a rule matches, when it fires (one in every `rate` matches at
//! a random position, or once per `interval` seconds at a random moment),
//! and which health status a drop simulates. The kernel holds the rules;
//! the randomness is passed in so the schedule is tested here.

use super::health::Status;
use super::nid::Nid;

/// Message-type bits of a rule's message mask (`LNET_*_BIT`): one per
/// header type code (ACK 0, PUT 1, GET 2, REPLY 3).
pub mod msg_bit {
    /// ACK.
    pub const ACK: u32 = 1;
    /// PUT.
    pub const PUT: u32 = 2;
    /// GET.
    pub const GET: u32 = 4;
    /// REPLY.
    pub const REPLY: u32 = 8;
    /// The four of them.
    pub const ALL: u32 = ACK | PUT | GET | REPLY;
}

/// A health mask asking for a random status on every drop.
pub const HEALTH_RANDOM: u32 = u32::MAX;
/// The health statuses a mask may name (bits 1..=10).
const HEALTH_VALID: u32 = 0x7fe;

/// Why a rule was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultError {
    /// Both or neither of rate and interval.
    RateOrInterval,
    /// `random` needs an interval.
    RandomNeedsInterval,
    /// A delay rule with latency 0.
    ZeroLatency,
    /// A portal mask leaves no PUT or GET to match.
    NoMessageType,
    /// Unknown message-type bits.
    BadMessageMask,
    /// Health bits that name no status.
    BadHealthMask,
    /// An option of the other kind of rule (e.g. a latency on a drop).
    WrongKind,
}

impl FaultError {
    /// The reason, for logs and error messages.
    pub const fn describe(self) -> &'static str {
        match self {
            FaultError::RateOrInterval => "give either a rate or an interval, not both",
            FaultError::RandomNeedsInterval => "random drops need an interval",
            FaultError::ZeroLatency => "latency cannot be zero",
            FaultError::NoMessageType => "a portal rule matches only PUT and GET",
            FaultError::BadMessageMask => "unknown message type bits",
            FaultError::BadHealthMask => "unknown health status bits",
            FaultError::WrongKind => "option does not apply to this kind of rule",
        }
    }
}

/// Whether a rule's NID matches a message's: ANY matches every NID,
/// `*@net` (address all ones) every NID of that net.
pub fn nid_matches(rule: &Nid, msg: &Nid) -> bool {
    if rule.is_any() || rule == msg {
        return true;
    }
    rule.net() == msg.net() && rule.addr4() == Some(u32::MAX)
}

/// The NID `*@net` stands for in a rule.
pub const fn net_wildcard(net: super::nid::Net) -> Nid {
    Nid::new4(net, u32::MAX)
}

/// What a rule matches (`lnet_fault_attr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    /// The sender (header source NID).
    pub src: Nid,
    /// The final destination (header destination NID).
    pub dst: Nid,
    /// The NI a message arrived on (receive-path drops only).
    pub local: Nid,
    /// Portals of PUT and GET; 0 for all.
    pub ptl_mask: u64,
    /// `msg_bit`s; 0 for all.
    pub msg_mask: u32,
}

impl Attr {
    /// Completes and checks the attributes (`lnet_fault_attr_validate`):
    /// no types means all; a portal mask keeps only PUT and GET.
    pub fn validate(&mut self) -> Result<(), FaultError> {
        if self.msg_mask & !msg_bit::ALL != 0 {
            return Err(FaultError::BadMessageMask);
        }
        if self.msg_mask == 0 {
            self.msg_mask = msg_bit::ALL;
        }
        if self.ptl_mask != 0 {
            self.msg_mask &= msg_bit::PUT | msg_bit::GET;
            if self.msg_mask == 0 {
                return Err(FaultError::NoMessageType);
            }
        }
        Ok(())
    }

    /// Whether a message matches: `local` is the receiving NI (None on the
    /// send path), `type_code` the header's, `portal` that of a PUT or GET.
    pub fn matches(
        &self,
        src: &Nid,
        local: Option<&Nid>,
        dst: &Nid,
        type_code: u32,
        portal: Option<u32>,
    ) -> bool {
        let local_ok = match local {
            Some(l) => nid_matches(&self.local, l),
            None => self.local.is_any(),
        };
        let bit = 1u32.checked_shl(type_code).unwrap_or(0);
        let ptl_ok = self.ptl_mask == 0
            || portal
                .and_then(|p| 1u64.checked_shl(p))
                .is_some_and(|b| self.ptl_mask & b != 0);
        local_ok
            && nid_matches(&self.src, src)
            && nid_matches(&self.dst, dst)
            && self.msg_mask & bit != 0
            && ptl_ok
    }
}

/// How often a rule fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Once in every `n` matching messages.
    Rate(u32),
    /// Once every `n` seconds.
    Interval(u32),
}

/// What a rule does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Drop the message. With a health mask, on the send path, as a
    /// failure with one of the mask's statuses; without one, silently on
    /// receipt. `random` drops about half the matches in each interval;
    /// `all` drops every match on both paths.
    Drop {
        /// `1 << status` bits, or [`HEALTH_RANDOM`]; 0 for none.
        health_mask: u32,
        /// About half the matches of each interval.
        random: bool,
        /// Every match.
        all: bool,
    },
    /// Hold the message for `latency` seconds.
    Delay {
        /// Seconds.
        latency: u32,
    },
}

/// Counters of a rule (`lnet_fault_stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Matches the pace was applied to.
    pub count: u64,
    /// PUTs dropped or delayed.
    pub put: u64,
    /// ACKs dropped or delayed.
    pub ack: u64,
    /// GETs dropped or delayed.
    pub get: u64,
    /// REPLYs dropped or delayed.
    pub reply: u64,
    /// Messages dropped or delayed.
    pub hits: u64,
}

/// A rule and its schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// What it matches.
    pub attr: Attr,
    /// How often it fires.
    pub pace: Pace,
    /// What it does.
    pub action: Action,
    /// Its counters.
    pub stats: Stats,
    /// Rate: the match count that fires next.
    fire_at: u64,
    /// Interval: the moment that fires next, and the window's end.
    fire_time: i64,
    window_end: i64,
}

impl Rule {
    /// A new rule; `rand(n)` returns a value in `0..n` (n > 0).
    pub fn new(
        mut attr: Attr,
        pace: Pace,
        action: Action,
        now: i64,
        rand: &mut impl FnMut(u32) -> u32,
    ) -> Result<Rule, FaultError> {
        let n = match pace {
            Pace::Rate(n) | Pace::Interval(n) => n,
        };
        if n == 0 {
            return Err(FaultError::RateOrInterval);
        }
        match action {
            Action::Drop { random: true, .. } if !matches!(pace, Pace::Interval(_)) => {
                return Err(FaultError::RandomNeedsInterval)
            }
            Action::Drop { health_mask, .. }
                if health_mask != HEALTH_RANDOM && health_mask & !HEALTH_VALID != 0 =>
            {
                return Err(FaultError::BadHealthMask)
            }
            Action::Delay { latency: 0 } => return Err(FaultError::ZeroLatency),
            _ => {}
        }
        attr.validate()?;
        let mut r = Rule {
            attr,
            pace,
            action,
            stats: Stats::default(),
            fire_at: 0,
            fire_time: 0,
            window_end: 0,
        };
        r.reset(now, rand);
        Ok(r)
    }

    /// Zeroes the counters and draws the next firing point afresh.
    pub fn reset(&mut self, now: i64, rand: &mut impl FnMut(u32) -> u32) {
        self.stats = Stats::default();
        match self.pace {
            Pace::Rate(n) => self.fire_at = u64::from(rand(n)),
            Pace::Interval(n) => {
                self.window_end = now.saturating_add(i64::from(n));
                self.fire_time = now.saturating_add(i64::from(rand(n)));
            }
        }
    }

    /// A drop rule with a health mask acts on the send path only; one
    /// without, on the receive path only (`drop_all` on both).
    pub fn applies(&self, send_path: bool) -> bool {
        match self.action {
            Action::Drop { all: true, .. } => true,
            Action::Drop { health_mask, .. } => (health_mask != 0) == send_path,
            Action::Delay { .. } => true,
        }
    }

    /// Applies the rule's pace to a message it matches (already checked
    /// with [`Attr::matches`] and [`Rule::applies`]); true if the rule
    /// fires for it. Counts the hit by `type_code`.
    pub fn fire(&mut self, type_code: u32, now: i64, rand: &mut impl FnMut(u32) -> u32) -> bool {
        let hit = match (self.action, self.pace) {
            (Action::Drop { all: true, .. }, _) => true,
            (Action::Drop { random: true, .. }, Pace::Interval(n)) => rand(n) >= n / 2,
            (_, Pace::Interval(n)) => {
                self.stats.count = self.stats.count.wrapping_add(1);
                let hit = now >= self.fire_time;
                if hit {
                    if now > self.window_end {
                        self.window_end = now;
                    }
                    self.fire_time = self.window_end.saturating_add(i64::from(rand(n)));
                    self.window_end = self.window_end.saturating_add(i64::from(n));
                }
                hit
            }
            (_, Pace::Rate(n)) => {
                let hit = self.stats.count == self.fire_at;
                self.stats.count = self.stats.count.wrapping_add(1);
                if self.stats.count % u64::from(n.max(1)) == 0 {
                    // The next block of n matches gets its own position.
                    self.fire_at = self.stats.count.saturating_add(u64::from(rand(n)));
                }
                hit
            }
        };
        if hit {
            let c = match type_code {
                0 => &mut self.stats.ack,
                1 => &mut self.stats.put,
                2 => &mut self.stats.get,
                _ => &mut self.stats.reply,
            };
            *c = c.wrapping_add(1);
            self.stats.hits = self.stats.hits.wrapping_add(1);
        }
        hit
    }

    /// Whether `del` with these NIDs removes the rule: ANY removes all,
    /// otherwise the rule's own NIDs must be the same (not a wildcard
    /// match), as Lustre's del does.
    pub fn selected_by(&self, src: &Nid, dst: &Nid) -> bool {
        (src.is_any() || *src == self.attr.src) && (dst.is_any() || *dst == self.attr.dst)
    }
}

/// The status a health-mask drop simulates (`lnet_fault_match_health`): a
/// random status if the mask asks for one or includes the random pick,
/// otherwise the mask's status nearest to the pick (the higher on a tie).
pub fn pick_health(mask: u32, rand: &mut impl FnMut(u32) -> u32) -> Status {
    let choice = rand(11).max(1);
    let pick = if mask == HEALTH_RANDOM || mask & (1 << choice) != 0 || mask & HEALTH_VALID == 0 {
        choice
    } else {
        let mut best = choice;
        let mut best_d = u32::MAX;
        for i in (1..=10u32).rev() {
            if mask & (1 << i) != 0 && i.abs_diff(choice) < best_d {
                best = i;
                best_d = i.abs_diff(choice);
            }
        }
        best
    };
    Status::from_u32(pick).unwrap_or(Status::LocalError)
}

/// A health mask from status names, as `-e` takes them (`random` for any).
pub fn health_bit(name: &str) -> Option<u32> {
    if name.eq_ignore_ascii_case("random") {
        return Some(HEALTH_RANDOM);
    }
    Status::from_name(name)
        .filter(|s| *s != Status::Ok)
        .map(|s| 1u32 << (s as u32))
}

#[cfg(test)]
mod tests {
    use super::super::nid::Net;
    use super::*;

    fn nid(s: &str) -> Nid {
        Nid::parse(s).unwrap()
    }

    fn attr(src: Nid, dst: Nid) -> Attr {
        Attr {
            src,
            dst,
            local: Nid::ANY,
            ptl_mask: 0,
            msg_mask: 0,
        }
    }

    const DROP: Action = Action::Drop {
        health_mask: 0,
        random: false,
        all: false,
    };

    /// A deterministic "random" source cycling through `seq`.
    fn seq(v: &'static [u32]) -> impl FnMut(u32) -> u32 {
        let mut i = 0;
        move |n| {
            let x = v[i % v.len()] % n;
            i += 1;
            x
        }
    }

    #[test]
    fn wildcards_match() {
        let any_tcp = net_wildcard(Net::parse("tcp").unwrap());
        assert!(nid_matches(&Nid::ANY, &nid("10.0.0.1@tcp")));
        assert!(nid_matches(&any_tcp, &nid("10.0.0.1@tcp")));
        assert!(!nid_matches(&any_tcp, &nid("10.0.0.1@tcp1")));
        assert!(nid_matches(&nid("10.0.0.1@tcp"), &nid("10.0.0.1@tcp")));
        assert!(!nid_matches(&nid("10.0.0.1@tcp"), &nid("10.0.0.2@tcp")));
    }

    #[test]
    fn attr_types_and_portals() {
        let mut a = attr(Nid::ANY, Nid::ANY);
        a.validate().unwrap();
        assert_eq!(a.msg_mask, msg_bit::ALL);
        let (s, d) = (nid("1.1.1.1@tcp"), nid("1.1.1.2@tcp"));
        for t in 0..4 {
            assert!(a.matches(&s, None, &d, t, None));
        }
        assert!(!a.matches(&s, None, &d, 4, None), "HELLO never matches");
        let mut p = attr(Nid::ANY, Nid::ANY);
        p.ptl_mask = 1 << 4;
        p.validate().unwrap();
        assert_eq!(p.msg_mask, msg_bit::PUT | msg_bit::GET);
        assert!(p.matches(&s, None, &d, 1, Some(4)));
        assert!(!p.matches(&s, None, &d, 1, Some(5)));
        assert!(!p.matches(&s, None, &d, 0, None));
        let mut bad = attr(Nid::ANY, Nid::ANY);
        bad.ptl_mask = 1;
        bad.msg_mask = msg_bit::ACK;
        assert_eq!(bad.validate(), Err(FaultError::NoMessageType));
        bad.msg_mask = 0x10;
        assert_eq!(bad.validate(), Err(FaultError::BadMessageMask));
        // Portal numbers past 63 never match a mask.
        assert!(!p.matches(&s, None, &d, 1, Some(64)));
    }

    #[test]
    fn local_nid_only_on_receive() {
        let mut a = attr(Nid::ANY, Nid::ANY);
        a.local = nid("1.1.1.9@tcp");
        a.validate().unwrap();
        let (s, d) = (nid("1.1.1.1@tcp"), nid("1.1.1.2@tcp"));
        assert!(a.matches(&s, Some(&nid("1.1.1.9@tcp")), &d, 1, None));
        assert!(!a.matches(&s, Some(&nid("1.1.1.8@tcp")), &d, 1, None));
        assert!(!a.matches(&s, None, &d, 1, None));
    }

    #[test]
    fn rate_fires_once_per_block() {
        let mut rand = seq(&[3, 0, 7, 5, 1]);
        let mut r = Rule::new(attr(Nid::ANY, Nid::ANY), Pace::Rate(8), DROP, 0, &mut rand).unwrap();
        let mut rng = seq(&[2, 6, 4, 1, 3, 0, 5, 7]);
        for block in 0..20 {
            let hits = (0..8).filter(|_| r.fire(1, 0, &mut rng)).count();
            assert_eq!(hits, 1, "block {block}");
        }
        assert_eq!(r.stats.count, 160);
        assert_eq!(r.stats.hits, 20);
        assert_eq!(r.stats.put, 20);
        let mut all =
            Rule::new(attr(Nid::ANY, Nid::ANY), Pace::Rate(1), DROP, 0, &mut rand).unwrap();
        assert!((0..50).all(|_| all.fire(2, 0, &mut rng)));
        assert_eq!(all.stats.get, 50);
    }

    #[test]
    fn interval_fires_once_per_window() {
        let mut rand = seq(&[4, 9, 0, 2, 5]);
        let mut r = Rule::new(
            attr(Nid::ANY, Nid::ANY),
            Pace::Interval(10),
            DROP,
            100,
            &mut rand,
        )
        .unwrap();
        let mut hits = [0u32; 10];
        for t in 100..200i64 {
            for _ in 0..3 {
                if r.fire(1, t, &mut rand) {
                    hits[((t - 100) / 10) as usize] += 1;
                }
            }
        }
        assert_eq!(hits, [1; 10]);
        // Idle for a long time: one fire, then the window restarts.
        assert!(r.fire(1, 1000, &mut rand));
        let later = (1000..1010).filter(|t| r.fire(1, *t, &mut rand)).count();
        assert_eq!(later, 1);
    }

    #[test]
    fn reset_zeroes_and_redraws() {
        let mut rand = seq(&[1]);
        let mut r = Rule::new(attr(Nid::ANY, Nid::ANY), Pace::Rate(4), DROP, 0, &mut rand).unwrap();
        for _ in 0..6 {
            r.fire(1, 0, &mut rand);
        }
        r.reset(0, &mut rand);
        assert_eq!(r.stats, Stats::default());
        let hits = (0..4).filter(|_| r.fire(1, 0, &mut rand)).count();
        assert_eq!(hits, 1);
    }

    #[test]
    fn random_and_all() {
        let mut rand = seq(&[0, 9, 4, 5]);
        let random = Action::Drop {
            health_mask: 0,
            random: true,
            all: false,
        };
        assert_eq!(
            Rule::new(
                attr(Nid::ANY, Nid::ANY),
                Pace::Rate(2),
                random,
                0,
                &mut rand
            ),
            Err(FaultError::RandomNeedsInterval)
        );
        let mut r = Rule::new(
            attr(Nid::ANY, Nid::ANY),
            Pace::Interval(10),
            random,
            0,
            &mut rand,
        )
        .unwrap();
        let hits = [0; 4].map(|_| r.fire(1, 0, &mut rand));
        // The draws after the one `new` took: 9, 4, 5, 0 (fires at >= 5).
        assert_eq!(hits, [true, false, true, false]);
        let all = Action::Drop {
            health_mask: 0,
            random: false,
            all: true,
        };
        let mut r =
            Rule::new(attr(Nid::ANY, Nid::ANY), Pace::Rate(100), all, 0, &mut rand).unwrap();
        assert!(r.applies(true) && r.applies(false));
        assert!((0..10).all(|_| r.fire(3, 0, &mut rand)));
        assert_eq!(r.stats.reply, 10);
    }

    #[test]
    fn health_rules_act_on_send_only() {
        let mut rand = seq(&[0]);
        let h = Action::Drop {
            health_mask: 1 << Status::RemoteDropped as u32,
            random: false,
            all: false,
        };
        let r = Rule::new(attr(Nid::ANY, Nid::ANY), Pace::Rate(1), h, 0, &mut rand).unwrap();
        assert!(r.applies(true) && !r.applies(false));
        let r = Rule::new(attr(Nid::ANY, Nid::ANY), Pace::Rate(1), DROP, 0, &mut rand).unwrap();
        assert!(!r.applies(true) && r.applies(false));
    }

    #[test]
    fn bad_rules_refused() {
        let mut rand = seq(&[0]);
        let a = attr(Nid::ANY, Nid::ANY);
        assert_eq!(
            Rule::new(a, Pace::Rate(0), DROP, 0, &mut rand),
            Err(FaultError::RateOrInterval)
        );
        assert_eq!(
            Rule::new(a, Pace::Rate(1), Action::Delay { latency: 0 }, 0, &mut rand),
            Err(FaultError::ZeroLatency)
        );
        let bad = Action::Drop {
            health_mask: 1,
            random: false,
            all: false,
        };
        assert_eq!(
            Rule::new(a, Pace::Rate(1), bad, 0, &mut rand),
            Err(FaultError::BadHealthMask)
        );
    }

    #[test]
    fn health_pick() {
        // Every single-status mask yields that status whatever the draw.
        for s in Status::ALL.iter().filter(|s| **s as u32 != 0) {
            let mask = 1 << (*s as u32);
            for draw in 0..11 {
                let mut r = move |_| draw;
                assert_eq!(pick_health(mask, &mut r), *s);
            }
        }
        // Random: the draw itself, never OK.
        for draw in 0..11 {
            let mut r = move |_| draw;
            assert_ne!(pick_health(HEALTH_RANDOM, &mut r) as u32, 0);
        }
        // Two statuses: the nearer one, the higher on a tie.
        let mask = (1 << 2) | (1 << 8);
        let mut r = |_| 4;
        assert_eq!(pick_health(mask, &mut r), Status::LocalDropped);
        let mut r = |_| 5;
        assert_eq!(pick_health(mask, &mut r), Status::RemoteDropped);
        let mut r = |_| 6;
        assert_eq!(pick_health(mask, &mut r), Status::RemoteDropped);
        let mut r = |_| 9;
        assert_eq!(pick_health(mask, &mut r), Status::RemoteDropped);
    }

    #[test]
    fn health_names() {
        assert_eq!(health_bit("remote_timeout"), Some(1 << 9));
        assert_eq!(health_bit("LOCAL_ERROR"), Some(1 << 5));
        assert_eq!(health_bit("random"), Some(HEALTH_RANDOM));
        assert_eq!(health_bit("ok"), None);
        assert_eq!(health_bit("nonsense"), None);
    }

    #[test]
    fn del_selects_exact() {
        let mut rand = seq(&[0]);
        let tcp = net_wildcard(Net::parse("tcp").unwrap());
        let r = Rule::new(attr(tcp, Nid::ANY), Pace::Rate(1), DROP, 0, &mut rand).unwrap();
        assert!(r.selected_by(&Nid::ANY, &Nid::ANY));
        assert!(r.selected_by(&tcp, &Nid::ANY));
        assert!(!r.selected_by(&nid("1.1.1.1@tcp"), &Nid::ANY));
    }
}
