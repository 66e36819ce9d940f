//! lctl for lnet-rs: the LNet fault-injection commands of Lustre's `lctl`
//! (`net_drop_*`, `net_delay_*`), with Lustre's options, messages and list
//! format, over the FAULT_* ioctls of /dev/lnet
//! (`include/uapi/linux/lnet/lnet-rs-ioctl.h`).
//!
//!   lctl net_drop_add -s NID -d NID (-r RATE | -i SECONDS) [-p PORTAL]...
//!        [-m PUT|ACK|GET|REPLY]... [-e ERROR]... [-n] [-x] [-o NID]
//!   lctl net_delay_add -s NID -d NID (-r RATE | -i SECONDS) -l SECONDS
//!        [-p PORTAL]... [-m TYPE]... [-o NID]
//!   lctl net_{drop,delay}_del (-a | -s NID -d NID)
//!   lctl net_{drop,delay}_reset | net_{drop,delay}_list
//!
//! Where Lustre's lctl is lax, this one refuses with a message instead:
//! numbers must be numbers (Lustre reads "abc" as 0), an unknown `-e` name
//! is reported (Lustre fails silently), options of the other kind of rule
//! (`--latency` on a drop rule, `--health_error`, `--random`, `--drop_all`
//! on a delay rule) are refused (Lustre ignores them or, for `--latency`,
//! corrupts the drop rule's health mask), and stray arguments are errors.
//! `-i` works for delay rules too, and listing exits 0 when it reaches the
//! end of the list.
//!
//! The ioctl ABI and the backend are lnetctl's (shared source files), so
//! the host tests below run every command against lnetctl's in-memory
//! kernel.

#[path = "../abi.rs"]
mod abi;
// lctl issues only the fault commands of the shared backend.
#[allow(dead_code)]
#[path = "../backend.rs"]
mod backend;
#[cfg(test)]
#[allow(dead_code)]
#[path = "../fake.rs"]
mod fake;

use std::io::Write;

use lnet_core::fault::{self, msg_bit};
use lnet_core::nid::{Net, Nid};
use nix::errno::Errno;

use abi::{IocArg, LnetIocFault, LnetIocNid};
use backend::{strerror, Backend, DevLnet, Request};

// lnet-core's rule bits are the ABI's.
const _: () = assert!(abi::FAULT_MSG_ACK == msg_bit::ACK);
const _: () = assert!(abi::FAULT_MSG_PUT == msg_bit::PUT);
const _: () = assert!(abi::FAULT_MSG_GET == msg_bit::GET);
const _: () = assert!(abi::FAULT_MSG_REPLY == msg_bit::REPLY);
const _: () = assert!(abi::FAULT_HEALTH_RANDOM == fault::HEALTH_RANDOM);

// Shared with gen_docs, which makes the man page and completions of it.
const USAGE: &str = include_str!("lctl_usage.txt");

/// What a command printed, and the process exit status.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Outcome {
    stdout: String,
    stderr: String,
    code: i32,
}

impl Outcome {
    /// A failure with `msg` (one or more complete lines) on stderr.
    fn fail(mut self, msg: &str) -> Outcome {
        self.stderr.push_str(msg);
        self.code = 1;
        self
    }
}

/// A failure's stderr text.
type Failed = String;

/// The kind of rule a command works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Drop,
    Delay,
}

impl Kind {
    /// The word Lustre's messages use.
    fn name(self) -> &'static str {
        match self {
            Kind::Drop => "drop",
            Kind::Delay => "delay",
        }
    }

    fn abi(self) -> u32 {
        match self {
            Kind::Drop => abi::FAULT_DROP,
            Kind::Delay => abi::FAULT_DELAY,
        }
    }
}

/// What a command does to the rules of its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verb {
    Add,
    Del,
    Reset,
    List,
}

/// Runs one command line (without the program name).
fn run(args: &[String], be: &mut dyn Backend) -> Outcome {
    let Some((cmd, rest)) = args.split_first() else {
        return Outcome::default().fail(USAGE);
    };
    let (kind, verb) = match cmd.as_str() {
        "net_drop_add" => (Kind::Drop, Verb::Add),
        "net_drop_del" => (Kind::Drop, Verb::Del),
        "net_drop_reset" => (Kind::Drop, Verb::Reset),
        "net_drop_list" => (Kind::Drop, Verb::List),
        "net_delay_add" => (Kind::Delay, Verb::Add),
        "net_delay_del" => (Kind::Delay, Verb::Del),
        "net_delay_reset" => (Kind::Delay, Verb::Reset),
        "net_delay_list" => (Kind::Delay, Verb::List),
        _ => return Outcome::default().fail(&format!("lctl: unknown command '{cmd}'\n{USAGE}")),
    };
    let result = match verb {
        Verb::Add => add(kind, cmd, rest, be),
        Verb::Del => del(kind, cmd, rest, be),
        Verb::Reset => reset(kind, cmd, rest, be),
        Verb::List => return list(kind, cmd, rest, be),
    };
    match result {
        Ok(stdout) => Outcome {
            stdout,
            ..Outcome::default()
        },
        Err(msg) => Outcome::default().fail(&msg),
    }
}

/// The options of the commands (the `val`s of Lustre's option tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    Source,
    Dest,
    Rate,
    Interval,
    Random,
    Latency,
    Portal,
    Message,
    HealthError,
    LocalNid,
    DropAll,
    All,
}

/// A long option: name, whether it takes an argument, which option.
type LongOpt = (&'static str, bool, Opt);
/// A short option: letter, whether it takes an argument, which option.
type ShortOpt = (char, bool, Opt);

/// Lustre's one long-option table for both kinds of add.
const ADD_LONG: &[LongOpt] = &[
    ("source", true, Opt::Source),
    ("dest", true, Opt::Dest),
    ("rate", true, Opt::Rate),
    ("interval", true, Opt::Interval),
    ("random", false, Opt::Random),
    ("latency", true, Opt::Latency),
    ("portal", true, Opt::Portal),
    ("message", true, Opt::Message),
    ("health_error", true, Opt::HealthError),
    ("local_nid", true, Opt::LocalNid),
    ("drop_all", false, Opt::DropAll),
];
/// `s:d:o:r:i:p:m:e:nx`.
const DROP_ADD_SHORT: &[ShortOpt] = &[
    ('s', true, Opt::Source),
    ('d', true, Opt::Dest),
    ('o', true, Opt::LocalNid),
    ('r', true, Opt::Rate),
    ('i', true, Opt::Interval),
    ('p', true, Opt::Portal),
    ('m', true, Opt::Message),
    ('e', true, Opt::HealthError),
    ('n', false, Opt::Random),
    ('x', false, Opt::DropAll),
];
/// Lustre's `s:d:o:r:l:p:m:`, plus `i:` (Lustre lacks it by mistake).
const DELAY_ADD_SHORT: &[ShortOpt] = &[
    ('s', true, Opt::Source),
    ('d', true, Opt::Dest),
    ('o', true, Opt::LocalNid),
    ('r', true, Opt::Rate),
    ('i', true, Opt::Interval),
    ('l', true, Opt::Latency),
    ('p', true, Opt::Portal),
    ('m', true, Opt::Message),
];
const DEL_LONG: &[LongOpt] = &[
    ("source", true, Opt::Source),
    ("dest", true, Opt::Dest),
    ("all", false, Opt::All),
];
/// `s:d:a`.
const DEL_SHORT: &[ShortOpt] = &[
    ('s', true, Opt::Source),
    ('d', true, Opt::Dest),
    ('a', false, Opt::All),
];

/// One option from the command line: which, its argument, and the word it
/// was in (for messages).
#[derive(Debug, PartialEq, Eq)]
struct Got<'a> {
    opt: Opt,
    arg: Option<&'a str>,
    word: &'a str,
}

/// `getopt_long` over a command's arguments, with GNU's syntax: clustered
/// short options (`-nx`), arguments attached (`-r10`, `--rate=10`) or in
/// the next word, unambiguous prefixes of long options, `--` ending the
/// options. Errors carry getopt's message and lctl's `option '...'
/// unrecognized` line. Unlike GNU's, a word that is not an option is an
/// error, not silently skipped.
struct Getopt<'a> {
    cmd: &'a str,
    args: &'a [String],
    shorts: &'static [ShortOpt],
    longs: &'static [LongOpt],
    /// The next word.
    next: usize,
    /// Byte offset of the next letter in a cluster of short options, 0
    /// when not inside one.
    at: usize,
    /// After `--`: only operands remain.
    operands: bool,
}

impl<'a> Getopt<'a> {
    fn new(
        cmd: &'a str,
        args: &'a [String],
        shorts: &'static [ShortOpt],
        longs: &'static [LongOpt],
    ) -> Getopt<'a> {
        Getopt {
            cmd,
            args,
            shorts,
            longs,
            next: 0,
            at: 0,
            operands: false,
        }
    }

    /// getopt's own message followed by lctl's.
    fn unrecognized(&self, getopt_msg: &str, word: &str) -> Failed {
        format!(
            "{}: {getopt_msg}\nerror: {}: option '{word}' unrecognized\n",
            self.cmd, self.cmd
        )
    }

    /// The word after the current one, as an option's argument.
    fn take_word(&mut self) -> Option<&'a str> {
        let w = self.args.get(self.next)?;
        self.next += 1;
        Some(w.as_str())
    }

    fn long(&mut self, word: &'a str, body: &'a str) -> Result<Got<'a>, Failed> {
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let found = match self.longs.iter().find(|l| l.0 == name) {
            Some(l) => *l,
            None => {
                let cands: Vec<&LongOpt> = self
                    .longs
                    .iter()
                    .filter(|l| l.0.starts_with(name))
                    .collect();
                match cands.as_slice() {
                    [one] => **one,
                    [] => {
                        return Err(
                            self.unrecognized(&format!("unrecognized option '{word}'"), word)
                        )
                    }
                    many => {
                        let names: Vec<String> =
                            many.iter().map(|l| format!("'--{}'", l.0)).collect();
                        let msg = format!(
                            "option '--{name}' is ambiguous; possibilities: {}",
                            names.join(" ")
                        );
                        return Err(self.unrecognized(&msg, word));
                    }
                }
            }
        };
        let (long, takes_arg, opt) = found;
        let arg = match (takes_arg, value) {
            (true, Some(v)) => Some(v),
            (true, None) => match self.take_word() {
                Some(v) => Some(v),
                None => {
                    let msg = format!("option '--{long}' requires an argument");
                    return Err(self.unrecognized(&msg, word));
                }
            },
            (false, Some(_)) => {
                let msg = format!("option '--{long}' doesn't allow an argument");
                return Err(self.unrecognized(&msg, word));
            }
            (false, None) => None,
        };
        Ok(Got { opt, arg, word })
    }

    /// The next letter of the current cluster of short options.
    fn short(&mut self, word: &'a str) -> Option<Result<Got<'a>, Failed>> {
        let rest = word.get(self.at..)?;
        let c = rest.chars().next()?;
        self.at += c.len_utf8();
        let after = word.get(self.at..).unwrap_or("");
        if after.is_empty() {
            // The cluster is done: the next word is the next one.
            self.at = 0;
            self.next += 1;
        }
        let Some(&(_, takes_arg, opt)) = self.shorts.iter().find(|s| s.0 == c) else {
            return Some(Err(
                self.unrecognized(&format!("invalid option -- '{c}'"), word)
            ));
        };
        if !takes_arg {
            return Some(Ok(Got {
                opt,
                arg: None,
                word,
            }));
        }
        let arg = if after.is_empty() {
            match self.take_word() {
                Some(v) => v,
                None => {
                    let msg = format!("option requires an argument -- '{c}'");
                    return Some(Err(self.unrecognized(&msg, word)));
                }
            }
        } else {
            // The rest of the word is the argument.
            self.at = 0;
            self.next += 1;
            after
        };
        Some(Ok(Got {
            opt,
            arg: Some(arg),
            word,
        }))
    }
}

impl<'a> Iterator for Getopt<'a> {
    type Item = Result<Got<'a>, Failed>;

    fn next(&mut self) -> Option<Self::Item> {
        let word: &'a str = self.args.get(self.next)?.as_str();
        if self.at > 0 {
            return self.short(word);
        }
        if word == "--" && !self.operands {
            self.operands = true;
            self.next += 1;
            return self.next();
        }
        if self.operands || word == "-" || !word.starts_with('-') {
            self.next += 1;
            return Some(Err(format!(
                "error: {}: unexpected argument '{word}'\n",
                self.cmd
            )));
        }
        if let Some(body) = word.strip_prefix("--") {
            self.next += 1;
            return Some(self.long(word, body));
        }
        self.at = 1;
        self.short(word)
    }
}

/// The long name of an option, for messages.
fn long_name(opt: Opt) -> &'static str {
    ADD_LONG
        .iter()
        .chain(DEL_LONG)
        .find(|l| l.2 == opt)
        .map_or("?", |l| l.0)
}

/// A number as `strtoul(s, NULL, 0)` reads one (decimal, `0x` hex,
/// leading-`0` octal), but all of `s` must be the number.
fn parse_number(s: &str) -> Option<u64> {
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// A rate, interval or latency: a 32-bit number.
fn parse_u32(what: &str, s: &str) -> Result<u32, Failed> {
    parse_number(s)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("invalid {what}: {s}\n"))
}

/// A portal number's bit (`fault_attr_ptl_parse`).
fn parse_portal(s: &str) -> Result<u64, Failed> {
    match parse_number(s) {
        Some(p) if p < 64 => Ok(1 << p),
        Some(p) => Err(format!("invalid portal: {p}\n")),
        None => Err(format!("invalid portal: {s}\n")),
    }
}

/// A message type's bit (`fault_attr_msg_parse`).
fn parse_msg(s: &str) -> Result<u32, Failed> {
    let bits = [
        ("put", msg_bit::PUT),
        ("ack", msg_bit::ACK),
        ("get", msg_bit::GET),
        ("reply", msg_bit::REPLY),
    ];
    bits.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(s))
        .map(|(_, b)| *b)
        .ok_or_else(|| format!("unknown message type {s}\n"))
}

/// A health error's bit, `random` for all (`fault_attr_health_error_parse`).
fn parse_health(s: &str) -> Result<u32, Failed> {
    fault::health_bit(s).ok_or_else(|| format!("unknown health error {s}\n"))
}

/// A rule's NID (`fault_attr_nid_parse`): `*` for any NID, `*@net` for
/// every NID of a net, or a NID.
fn parse_nid(s: &str) -> Result<Nid, Failed> {
    let nid = if s == "*" {
        Some(Nid::ANY)
    } else if let Some(net) = s.strip_prefix("*@") {
        Net::parse(net).ok().map(fault::net_wildcard)
    } else {
        Nid::parse(s).ok()
    };
    nid.ok_or_else(|| format!("Invalid NID : {s}\n"))
}

/// `net_{drop,delay}_add` (`fault_simul_rule_add`).
fn add(kind: Kind, cmd: &str, args: &[String], be: &mut dyn Backend) -> Result<String, Failed> {
    if args.is_empty() {
        return Err("Failed, please provide source, destination and rate of rule\n".into());
    }
    let shorts = match kind {
        Kind::Drop => DROP_ADD_SHORT,
        Kind::Delay => DELAY_ADD_SHORT,
    };
    let mut a = LnetIocFault::new();
    a.fr_kind = kind.abi();
    let (mut src, mut dst, mut local) = (None, None, None);
    for got in Getopt::new(cmd, args, shorts, ADD_LONG) {
        let got = got?;
        let arg = got.arg.unwrap_or("");
        // Options of the other kind: Lustre's long table accepts them.
        let wrong_kind = match got.opt {
            Opt::Latency => kind == Kind::Drop,
            Opt::HealthError | Opt::Random | Opt::DropAll => kind == Kind::Delay,
            _ => false,
        };
        if wrong_kind {
            let other = match kind {
                Kind::Drop => Kind::Delay,
                Kind::Delay => Kind::Drop,
            };
            return Err(format!(
                "error: {cmd}: option '--{}' is for {} rules only\n",
                long_name(got.opt),
                other.name()
            ));
        }
        match got.opt {
            Opt::Source => src = Some(arg),
            Opt::Dest => dst = Some(arg),
            Opt::LocalNid => local = Some(arg),
            Opt::Rate => a.fr_rate = parse_u32("rate", arg)?,
            Opt::Interval => a.fr_interval = parse_u32("interval", arg)?,
            Opt::Latency => a.fr_latency = parse_u32("latency", arg)?,
            Opt::Portal => a.fr_ptl_mask |= parse_portal(arg)?,
            Opt::Message => a.fr_msg_mask |= parse_msg(arg)?,
            Opt::HealthError => a.fr_health_mask |= parse_health(arg)?,
            Opt::Random => a.fr_flags |= abi::FAULT_RANDOM,
            Opt::DropAll => a.fr_flags |= abi::FAULT_DROP_ALL,
            Opt::All => {
                return Err(format!(
                    "error: {cmd}: option '{}' unrecognized\n",
                    got.word
                ))
            }
        }
    }
    if (a.fr_rate == 0) == (a.fr_interval == 0) {
        return Err(format!(
            "please provide either {} rate or interval but not both at the same time.\n",
            kind.name()
        ));
    }
    match kind {
        Kind::Drop if a.fr_flags & abi::FAULT_RANDOM != 0 && a.fr_interval == 0 => {
            return Err("please provide an interval to randomize\n".into());
        }
        Kind::Delay if a.fr_latency == 0 => return Err("latency cannot be zero\n".into()),
        _ => {}
    }
    let (Some(src), Some(dst)) = (src, dst) else {
        return Err(format!(
            "Please provide both source and destination of {} rule\n",
            kind.name()
        ));
    };
    let src = parse_nid(src)?;
    let dst = parse_nid(dst)?;
    let local = match local {
        Some(l) => parse_nid(l)?,
        None => Nid::ANY,
    };
    a.fr_src = LnetIocNid::from_nid(&src);
    a.fr_dst = LnetIocNid::from_nid(&dst);
    a.fr_local = LnetIocNid::from_nid(&local);
    let name = kind.name();
    be.ioctl(Request::FaultAdd(&mut a))
        .map_err(|e| format!("add {name} rule {src}->{dst} failed: {}\n", strerror(e)))?;
    Ok(format!(
        "Added {name} rule {src}->{dst} (1/{})\n",
        a.fr_rate
    ))
}

/// `net_{drop,delay}_del` (`fault_simul_rule_del`).
fn del(kind: Kind, cmd: &str, args: &[String], be: &mut dyn Backend) -> Result<String, Failed> {
    const NEED_BOTH: &str = "Failed, please provide source and destination of rule\n";
    if args.is_empty() {
        return Err(NEED_BOTH.into());
    }
    let (mut src, mut dst, mut all) = (None, None, false);
    for got in Getopt::new(cmd, args, DEL_SHORT, DEL_LONG) {
        let got = got?;
        match got.opt {
            Opt::Source => src = got.arg,
            Opt::Dest => dst = got.arg,
            Opt::All => all = true,
            _ => {
                return Err(format!(
                    "error: {cmd}: option '{}' unrecognized\n",
                    got.word
                ))
            }
        }
        // As Lustre's: whatever follows -a is not looked at.
        if all {
            break;
        }
    }
    let (src, dst) = match (all, src, dst) {
        (true, None, None) => (Nid::ANY, Nid::ANY),
        (true, _, _) => return Err("'-s' or '-d' cannot be combined with '-a'\n".into()),
        (false, Some(s), Some(d)) => (parse_nid(s)?, parse_nid(d)?),
        (false, _, _) => return Err(NEED_BOTH.into()),
    };
    let mut a = LnetIocFault::new();
    a.fr_kind = kind.abi();
    a.fr_src = LnetIocNid::from_nid(&src);
    a.fr_dst = LnetIocNid::from_nid(&dst);
    let name = kind.name();
    be.ioctl(Request::FaultDel(&mut a)).map_err(|e| {
        let (s, d) = if all {
            ("all".to_string(), "all".to_string())
        } else {
            (src.to_string(), dst.to_string())
        };
        format!("remove {name} rule {s}->{d} failed: {}\n", strerror(e))
    })?;
    Ok(format!("Removed {} {name} rules\n", a.fr_index))
}

/// Refuses arguments to a command that takes none.
fn no_args(cmd: &str, args: &[String]) -> Result<(), Failed> {
    match args.first() {
        Some(w) => Err(format!("error: {cmd}: unexpected argument '{w}'\n")),
        None => Ok(()),
    }
}

/// `net_{drop,delay}_reset` (`fault_simul_rule_reset`): prints nothing.
fn reset(kind: Kind, cmd: &str, args: &[String], be: &mut dyn Backend) -> Result<String, Failed> {
    no_args(cmd, args)?;
    let mut a = LnetIocFault::new();
    a.fr_kind = kind.abi();
    be.ioctl(Request::FaultReset(&mut a))
        .map_err(|e| format!("failed to reset {} stats: {}\n", kind.name(), strerror(e)))?;
    Ok(String::new())
}

/// One rule as `print_fault_rules` prints it.
fn rule_line(kind: Kind, a: &LnetIocFault) -> String {
    let pace = match kind {
        Kind::Drop => format!("(1/{} | {})", a.fr_rate, a.fr_interval),
        Kind::Delay => format!(
            "(1/{} | {}, latency {})",
            a.fr_rate, a.fr_interval, a.fr_latency
        ),
    };
    // printf's %#jx: no 0x for zero.
    let ptl = match a.fr_ptl_mask {
        0 => "0".to_string(),
        m => format!("{m:#x}"),
    };
    format!(
        "{}->{} {pace} ptl {ptl}, msg {:x}, {}/{}, PUT {}, ACK {}, GET {}, REP {}\n",
        a.fr_src.text(),
        a.fr_dst.text(),
        a.fr_msg_mask,
        a.fr_hits,
        a.fr_count,
        a.fr_put,
        a.fr_ack,
        a.fr_get,
        a.fr_reply
    )
}

/// `net_{drop,delay}_list` (`fault_simul_rule_list`): every rule, newest
/// first, until the kernel answers ENOENT.
fn list(kind: Kind, cmd: &str, args: &[String], be: &mut dyn Backend) -> Outcome {
    if let Err(msg) = no_args(cmd, args) {
        return Outcome::default().fail(&msg);
    }
    let mut o = Outcome {
        stdout: format!("LNet {} rules:\n", kind.name()),
        ..Outcome::default()
    };
    let mut failed = None;
    let mut total: u64 = 0;
    for index in 0..=u32::MAX {
        let mut a = LnetIocFault::new();
        a.fr_kind = kind.abi();
        a.fr_index = index;
        match be.ioctl(Request::FaultList(&mut a)) {
            Ok(()) => {
                o.stdout.push_str(&rule_line(kind, &a));
                total += 1;
            }
            Err(Errno::ENOENT) => break,
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    o.stdout.push_str(&format!("found total {total}\n"));
    match failed {
        Some(e) => o.fail(&format!(
            "failed to list {} rules: {}\n",
            kind.name(),
            strerror(e)
        )),
        None => o,
    }
}

fn main() {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut be = DevLnet::new();
    let out = run(&args, &mut be);
    let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    std::process::exit(out.code);
}

#[cfg(test)]
mod tests {
    use super::*;
    use fake::Fake;
    use std::path::Path;

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    /// Runs an lctl command line (without "lctl") on `f`.
    fn lctl(f: &mut Fake, line: &str) -> Outcome {
        run(&argv(line), f)
    }

    /// A command that must succeed: its stdout.
    fn ok(f: &mut Fake, line: &str) -> String {
        let o = lctl(f, line);
        assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{line}");
        o.stdout
    }

    /// A command that must fail without touching the kernel: its stderr.
    fn err(line: &str) -> String {
        let mut f = Fake::up();
        let o = lctl(&mut f, line);
        assert_eq!(o.code, 1, "{line}");
        assert_eq!(o.stdout, "", "{line}");
        assert!(f.log.is_empty(), "{line}: issued {:?}", f.log);
        o.stderr
    }

    #[test]
    fn add_list_del_round_trip() {
        let mut f = Fake::up();
        assert_eq!(
            ok(&mut f, "net_drop_add -s 192.168.1.2@tcp -d * -r 10"),
            "Added drop rule 192.168.1.2@tcp-><?> (1/10)\n"
        );
        assert_eq!(
            ok(
                &mut f,
                "net_drop_add --source *@tcp --dest=10.0.0.1@o2ib --interval 5 -p 4 -m put"
            ),
            "Added drop rule 255.255.255.255@tcp->10.0.0.1@o2ib (1/0)\n"
        );
        // Counters come from the kernel as they are.
        let s = &mut f.faults[0][1].stats;
        (s.count, s.hits, s.put, s.ack, s.get, s.reply) = (30, 3, 1, 2, 0, 0);
        assert_eq!(
            ok(&mut f, "net_drop_list"),
            "LNet drop rules:\n\
             255.255.255.255@tcp->10.0.0.1@o2ib (1/0 | 5) ptl 0x10, msg 2, 0/0, PUT 0, ACK 0, GET 0, REP 0\n\
             192.168.1.2@tcp-><?> (1/10 | 0) ptl 0, msg f, 3/30, PUT 1, ACK 2, GET 0, REP 0\n\
             found total 2\n"
        );
        // Delay rules are a list of their own.
        assert_eq!(
            ok(&mut f, "net_delay_list"),
            "LNet delay rules:\nfound total 0\n"
        );
        // del matches NIDs exactly: 192.168.1.2@tcp is not *@tcp's.
        assert_eq!(
            ok(&mut f, "net_drop_del -s 192.168.1.9@tcp -d *"),
            "Removed 0 drop rules\n"
        );
        assert_eq!(
            ok(&mut f, "net_drop_del -s *@tcp -d 10.0.0.1@o2ib"),
            "Removed 1 drop rules\n"
        );
        assert_eq!(
            ok(&mut f, "net_drop_list"),
            "LNet drop rules:\n\
             192.168.1.2@tcp-><?> (1/10 | 0) ptl 0, msg f, 3/30, PUT 1, ACK 2, GET 0, REP 0\n\
             found total 1\n"
        );
        assert_eq!(ok(&mut f, "net_drop_reset"), "");
        assert!(ok(&mut f, "net_drop_list").contains(" msg f, 0/0, PUT 0, ACK 0, GET 0, REP 0\n"));
        assert_eq!(ok(&mut f, "net_drop_del -a"), "Removed 1 drop rules\n");
        assert_eq!(ok(&mut f, "net_drop_del --all"), "Removed 0 drop rules\n");
        assert_eq!(
            ok(&mut f, "net_drop_list"),
            "LNet drop rules:\nfound total 0\n"
        );
    }

    #[test]
    fn delay_rules() {
        let mut f = Fake::up();
        assert_eq!(
            ok(
                &mut f,
                "net_delay_add -s * -d 10.0.0.1@tcp1 -r 4 -l 2 -m GET -m Reply"
            ),
            "Added delay rule <?>->10.0.0.1@tcp1 (1/4)\n"
        );
        // -i works for delay (Lustre's short options lack it).
        assert_eq!(
            ok(&mut f, "net_delay_add -s * -d * -i 0x10 --latency=010"),
            "Added delay rule <?>-><?> (1/0)\n"
        );
        f.faults[1][1].stats.count = 8;
        f.faults[1][1].stats.hits = 2;
        f.faults[1][1].stats.get = 2;
        assert_eq!(
            ok(&mut f, "net_delay_list"),
            "LNet delay rules:\n\
             <?>-><?> (1/0 | 16, latency 8) ptl 0, msg f, 0/0, PUT 0, ACK 0, GET 0, REP 0\n\
             <?>->10.0.0.1@tcp1 (1/4 | 0, latency 2) ptl 0, msg c, 2/8, PUT 0, ACK 0, GET 2, REP 0\n\
             found total 2\n"
        );
        assert_eq!(
            ok(&mut f, "net_delay_del -s * -d *"),
            "Removed 2 delay rules\n"
        );
    }

    #[test]
    fn add_sends_every_field() {
        let mut f = Fake::up();
        ok(
            &mut f,
            "net_drop_add -s 1.2.3.4@tcp -d *@o2ib1 -o 1.2.3.5@tcp -i 7 -n -x \
             -p 0 -p 63 --portal=4 -m put -m GET -e local_error -e REMOTE_TIMEOUT",
        );
        let r = f.faults[0][0];
        assert_eq!(r.attr.src, Nid::parse("1.2.3.4@tcp").unwrap());
        assert_eq!(
            r.attr.dst,
            fault::net_wildcard(Net::parse("o2ib1").unwrap())
        );
        assert_eq!(r.attr.local, Nid::parse("1.2.3.5@tcp").unwrap());
        assert_eq!(r.attr.ptl_mask, 1 | 1 << 63 | 1 << 4);
        assert_eq!(r.attr.msg_mask, msg_bit::PUT | msg_bit::GET);
        assert_eq!(r.pace, fault::Pace::Interval(7));
        assert_eq!(
            r.action,
            fault::Action::Drop {
                health_mask: 1 << 5 | 1 << 9,
                random: true,
                all: true
            }
        );
        // random takes over the whole mask; no -o is any local NID.
        ok(
            &mut f,
            "net_drop_add -s * -d * -r 1 -e remote_error -e random",
        );
        let r = f.faults[0][0];
        assert_eq!(r.attr.local, Nid::ANY);
        assert_eq!(
            r.action,
            fault::Action::Drop {
                health_mask: u32::MAX,
                random: false,
                all: false
            }
        );
        assert_eq!(r.pace, fault::Pace::Rate(1));
    }

    #[test]
    fn getopt_syntax() {
        let mut f = Fake::up();
        // Clusters, attached arguments, prefixes of long options.
        ok(&mut f, "net_drop_add -s* -d* -i3 -nx");
        ok(&mut f, "net_drop_add --sour * --de * --rat 2 --mess=ack");
        ok(&mut f, "net_drop_add -s * -d * -r 1 --");
        let r = &f.faults[0];
        assert_eq!(r.len(), 3);
        assert_eq!(r[1].attr.msg_mask, msg_bit::ACK);
        assert_eq!(
            r[2].action,
            fault::Action::Drop {
                health_mask: 0,
                random: true,
                all: true
            }
        );
        // An option's argument may start with '-'.
        assert_eq!(
            err("net_drop_add -s -d -r 1"),
            "Please provide both source and destination of drop rule\n"
        );
    }

    #[test]
    fn add_errors_in_lustre_order() {
        let cases: &[(&str, &str)] = &[
            ("net_drop_add", "Failed, please provide source, destination and rate of rule\n"),
            ("net_delay_add", "Failed, please provide source, destination and rate of rule\n"),
            // Options first, in command-line order.
            ("net_drop_add -s bad -p 64", "invalid portal: 64\n"),
            ("net_drop_add -p 0x40", "invalid portal: 64\n"),
            ("net_drop_add -p four", "invalid portal: four\n"),
            ("net_drop_add -m hello -p 99", "unknown message type hello\n"),
            ("net_drop_add -e remote_oops", "unknown health error remote_oops\n"),
            ("net_drop_add -e ok", "unknown health error ok\n"),
            ("net_drop_add -r ten", "invalid rate: ten\n"),
            ("net_drop_add -r 10x", "invalid rate: 10x\n"),
            ("net_drop_add -r -1", "invalid rate: -1\n"),
            ("net_drop_add -r 08", "invalid rate: 08\n"),
            ("net_drop_add -r 4294967296", "invalid rate: 4294967296\n"),
            ("net_drop_add -i ''", "invalid interval: ''\n"),
            ("net_delay_add -l 1s", "invalid latency: 1s\n"),
            // Then rate and interval.
            (
                "net_drop_add -s bad -d bad",
                "please provide either drop rate or interval but not both at the same time.\n",
            ),
            (
                "net_drop_add -r 1 -i 1",
                "please provide either drop rate or interval but not both at the same time.\n",
            ),
            (
                "net_drop_add -r 0 -s * -d *",
                "please provide either drop rate or interval but not both at the same time.\n",
            ),
            ("net_drop_add -r 5 -n -s * -d *", "please provide an interval to randomize\n"),
            (
                "net_delay_add -l 1 -s * -d *",
                "please provide either delay rate or interval but not both at the same time.\n",
            ),
            ("net_delay_add -r 1 -s * -d *", "latency cannot be zero\n"),
            ("net_delay_add -r 1 -l 0 -s * -d *", "latency cannot be zero\n"),
            // Then both NIDs, then their syntax.
            ("net_drop_add -r 1 -s *", "Please provide both source and destination of drop rule\n"),
            ("net_delay_add -r 1 -l 1 -d *", "Please provide both source and destination of delay rule\n"),
            ("net_drop_add -r 1 -s bad -d bad2", "Invalid NID : bad\n"),
            ("net_drop_add -r 1 -s * -d 1.2.3.4@nonet", "Invalid NID : 1.2.3.4@nonet\n"),
            ("net_drop_add -r 1 -s *@ -d *", "Invalid NID : *@\n"),
            ("net_drop_add -r 1 -s *@nonet -d *", "Invalid NID : *@nonet\n"),
            ("net_drop_add -r 1 -s * -d * -o 1.2.3", "Invalid NID : 1.2.3\n"),
            // Options of the other kind are refused, not ignored.
            ("net_drop_add --latency 5", "error: net_drop_add: option '--latency' is for delay rules only\n"),
            ("net_delay_add --random", "error: net_delay_add: option '--random' is for drop rules only\n"),
            ("net_delay_add --drop_all", "error: net_delay_add: option '--drop_all' is for drop rules only\n"),
            (
                "net_delay_add --health_error=random",
                "error: net_delay_add: option '--health_error' is for drop rules only\n",
            ),
            // getopt's messages, then lctl's.
            (
                "net_drop_add -l 5",
                "net_drop_add: invalid option -- 'l'\nerror: net_drop_add: option '-l' unrecognized\n",
            ),
            (
                "net_delay_add -r 1 -nx",
                "net_delay_add: invalid option -- 'n'\nerror: net_delay_add: option '-nx' unrecognized\n",
            ),
            (
                "net_drop_add --bogus 1",
                "net_drop_add: unrecognized option '--bogus'\nerror: net_drop_add: option '--bogus' unrecognized\n",
            ),
            (
                "net_drop_add --d *",
                "net_drop_add: option '--d' is ambiguous; possibilities: '--dest' '--drop_all'\n\
                 error: net_drop_add: option '--d' unrecognized\n",
            ),
            (
                "net_drop_add -s * -d * -r",
                "net_drop_add: option requires an argument -- 'r'\nerror: net_drop_add: option '-r' unrecognized\n",
            ),
            (
                "net_drop_add --rate",
                "net_drop_add: option '--rate' requires an argument\nerror: net_drop_add: option '--rate' unrecognized\n",
            ),
            (
                "net_drop_add --random=1",
                "net_drop_add: option '--random' doesn't allow an argument\n\
                 error: net_drop_add: option '--random=1' unrecognized\n",
            ),
            ("net_drop_add -r 1 stray", "error: net_drop_add: unexpected argument 'stray'\n"),
            ("net_drop_add -r 1 -- -s", "error: net_drop_add: unexpected argument '-s'\n"),
            ("net_drop_add -", "error: net_drop_add: unexpected argument '-'\n"),
        ];
        for (line, want) in cases {
            // '' stands for an empty argument.
            let args: Vec<String> = argv(line)
                .into_iter()
                .map(|a| if a == "''" { String::new() } else { a })
                .collect();
            let want = want.replace("''", "");
            let mut f = Fake::up();
            let o = run(&args, &mut f);
            assert_eq!(o.stderr, want, "{line}");
            assert_eq!((o.code, o.stdout.as_str()), (1, ""), "{line}");
            assert!(f.log.is_empty(), "{line}");
        }
    }

    #[test]
    fn kernel_refusals() {
        let mut f = Fake::up();
        // A portal rule matching no PUT or GET cannot fire.
        let o = lctl(&mut f, "net_drop_add -s * -d 1.1.1.1@tcp -r 1 -p 4 -m ack");
        assert_eq!(
            o.stderr,
            "add drop rule <?>->1.1.1.1@tcp failed: Invalid argument\n"
        );
        assert_eq!((o.code, o.stdout.as_str()), (1, ""));
        // LNet down.
        let mut down = Fake::new();
        let o = lctl(&mut down, "net_delay_add -s * -d * -r 1 -l 1");
        assert_eq!(
            o.stderr,
            "add delay rule <?>-><?> failed: Network is down\n"
        );
        let o = lctl(&mut down, "net_drop_del -a");
        assert_eq!(
            o.stderr,
            "remove drop rule all->all failed: Network is down\n"
        );
        let o = lctl(&mut down, "net_delay_del -s 1.2.3.4@tcp -d *@tcp");
        assert_eq!(
            o.stderr,
            "remove delay rule 1.2.3.4@tcp->255.255.255.255@tcp failed: Network is down\n"
        );
        assert_eq!(o.code, 1);
        let o = lctl(&mut down, "net_drop_reset");
        assert_eq!(o.stderr, "failed to reset drop stats: Network is down\n");
        assert_eq!(o.code, 1);
        // A listing that fails part way shows what it got.
        ok(&mut f, "net_drop_add -s * -d * -r 3");
        f.fail.push((abi::Cmd::FaultList, Errno::EIO));
        let o = lctl(&mut f, "net_drop_list");
        assert_eq!(o.stdout, "LNet drop rules:\nfound total 0\n");
        assert_eq!(o.stderr, "failed to list drop rules: Input/output error\n");
        assert_eq!(o.code, 1);
    }

    #[test]
    fn del_options() {
        for (line, want) in [
            ("net_drop_del", "Failed, please provide source and destination of rule\n"),
            ("net_drop_del -s *", "Failed, please provide source and destination of rule\n"),
            ("net_delay_del --dest *", "Failed, please provide source and destination of rule\n"),
            ("net_drop_del -s * -a", "'-s' or '-d' cannot be combined with '-a'\n"),
            ("net_drop_del --dest=* --all", "'-s' or '-d' cannot be combined with '-a'\n"),
            ("net_drop_del -s x -d *", "Invalid NID : x\n"),
            (
                "net_drop_del -r 1",
                "net_drop_del: invalid option -- 'r'\nerror: net_drop_del: option '-r' unrecognized\n",
            ),
            ("net_drop_del stray", "error: net_drop_del: unexpected argument 'stray'\n"),
        ] {
            assert_eq!(err(line), want, "{line}");
        }
        // Whatever follows -a is ignored, as Lustre does.
        let mut f = Fake::up();
        ok(&mut f, "net_drop_add -s * -d * -r 3");
        assert_eq!(
            ok(&mut f, "net_drop_del -a -s x --bogus"),
            "Removed 1 drop rules\n"
        );
    }

    #[test]
    fn del_counts_exact_matches() {
        let mut f = Fake::up();
        for line in [
            "net_drop_add -s 1.1.1.1@tcp -d 2.2.2.2@tcp -r 2",
            "net_drop_add -s 1.1.1.1@tcp -d 2.2.2.2@tcp -i 2",
            "net_drop_add -s 1.1.1.1@tcp -d *@tcp -r 2",
            "net_drop_add -s * -d 2.2.2.2@tcp -r 2",
            "net_delay_add -s 1.1.1.1@tcp -d 2.2.2.2@tcp -r 2 -l 1",
        ] {
            ok(&mut f, line);
        }
        // ANY in the request selects every rule; a NID only its own.
        assert_eq!(
            ok(&mut f, "net_drop_del -s 1.1.1.1@tcp -d 2.2.2.2@tcp"),
            "Removed 2 drop rules\n"
        );
        assert_eq!(
            ok(&mut f, "net_drop_del -s * -d *@tcp"),
            "Removed 1 drop rules\n"
        );
        assert_eq!(ok(&mut f, "net_drop_list").lines().count(), 3);
        assert_eq!(
            ok(&mut f, "net_drop_del -s * -d *"),
            "Removed 1 drop rules\n"
        );
        // The delay rule was never in question.
        assert_eq!(f.faults[1].len(), 1);
    }

    #[test]
    fn list_is_newest_first_and_stops_at_enoent() {
        let mut f = Fake::up();
        for r in 1..=4 {
            ok(&mut f, &format!("net_drop_add -s * -d * -r {r}"));
        }
        f.log.clear();
        let out = ok(&mut f, "net_drop_list");
        let rates: Vec<&str> = out
            .lines()
            .filter_map(|l| l.split(" (1/").nth(1))
            .map(|l| &l[..1])
            .collect();
        assert_eq!(rates, ["4", "3", "2", "1"]);
        assert!(out.ends_with("found total 4\n"));
        // Positions 0..=4, the last answered with ENOENT.
        assert_eq!(f.log, vec![abi::Cmd::FaultList; 5]);
    }

    #[test]
    fn list_and_reset_take_no_arguments() {
        assert_eq!(
            err("net_drop_list -v"),
            "error: net_drop_list: unexpected argument '-v'\n"
        );
        assert_eq!(
            err("net_delay_reset all"),
            "error: net_delay_reset: unexpected argument 'all'\n"
        );
    }

    #[test]
    fn unknown_commands_print_usage() {
        for line in [
            "",
            "net_drop_show",
            "net_delay",
            "ping",
            "--help",
            "net_drop_add_x",
            "net_drop_foo_add",
            "NET_DROP_ADD",
        ] {
            let o = lctl(&mut Fake::up(), line);
            assert_eq!(o.code, 1, "{line}");
            assert_eq!(o.stdout, "", "{line}");
            assert!(o.stderr.ends_with(USAGE), "{line}");
        }
        for c in [
            "net_drop_add",
            "net_drop_del",
            "net_drop_reset",
            "net_drop_list",
            "net_delay_add",
            "net_delay_del",
            "net_delay_reset",
            "net_delay_list",
        ] {
            assert!(
                USAGE.contains(&format!("\t{c} ")) || USAGE.contains(&format!("\t{c}\n")),
                "{c}"
            );
        }
        assert_eq!(
            lctl(&mut Fake::up(), "ping").stderr,
            format!("lctl: unknown command 'ping'\n{USAGE}")
        );
    }

    #[test]
    fn rule_line_formats() {
        let mut a = LnetIocFault::new();
        a.fr_src = LnetIocNid::from_nid(&Nid::parse("192.168.1.2@tcp").unwrap());
        a.fr_dst = LnetIocNid::any();
        a.fr_rate = 10;
        a.fr_msg_mask = 0xf;
        a.fr_count = 30;
        a.fr_hits = 3;
        a.fr_put = 3;
        assert_eq!(
            rule_line(Kind::Drop, &a),
            "192.168.1.2@tcp-><?> (1/10 | 0) ptl 0, msg f, 3/30, PUT 3, ACK 0, GET 0, REP 0\n"
        );
        a.fr_ptl_mask = 0xffff_0000_0000_0001;
        a.fr_latency = 9;
        a.fr_msg_mask = 0xa;
        assert_eq!(
            rule_line(Kind::Delay, &a),
            "192.168.1.2@tcp-><?> (1/10 | 0, latency 9) ptl 0xffff000000000001, msg a, \
             3/30, PUT 3, ACK 0, GET 0, REP 0\n"
        );
        // IPv6 NIDs fit the ABI's large form.
        a.fr_src = LnetIocNid::from_nid(&Nid::parse("2001:db8::1@tcp").unwrap());
        assert!(rule_line(Kind::Drop, &a).starts_with("2001:db8::1@tcp-><?> "));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0"), Some(0));
        assert_eq!(parse_number("10"), Some(10));
        assert_eq!(parse_number("0x1f"), Some(31));
        assert_eq!(parse_number("0X1F"), Some(31));
        assert_eq!(parse_number("017"), Some(15));
        for bad in ["", "0x", "+1", "-1", " 1", "1 ", "09", "1e3", "abc"] {
            assert_eq!(parse_number(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn real_device_errors() {
        let dir = std::env::temp_dir().join(format!("lctl-dev-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // /dev/null does not know the command; a missing device is ENODEV.
        let mut null = DevLnet::with_paths(Path::new("/dev/null"), &dir);
        let o = run(&argv("net_drop_list"), &mut null);
        assert_eq!(o.stdout, "LNet drop rules:\nfound total 0\n");
        assert_eq!(
            o.stderr,
            "failed to list drop rules: Inappropriate ioctl for device\n"
        );
        let mut gone = DevLnet::with_paths(&dir.join("no-such-dev"), &dir);
        let o = run(&argv("net_delay_add -s * -d * -r 1 -l 1"), &mut gone);
        assert_eq!(o.stderr, "add delay rule <?>-><?> failed: No such device\n");
        assert_eq!(o.code, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
