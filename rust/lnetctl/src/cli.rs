//! lnetctl's command line, as Lustre's lnetctl accepts it (lnetctl.md §1).
//!
//! Option names, short letters and argument forms are Lustre's (its
//! getopt tables in `lnetctl.c`), including unique-prefix abbreviation of
//! long options. Numbers are parsed as Lustre parses them (`parse_long`:
//! `strtol` base 0 over the whole string), after clap, so that bad values
//! produce Lustre's error blocks rather than clap's.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

/// lnetctl: configure and inspect LNet (lnet-rs).
#[derive(Parser, Debug)]
#[command(
    name = "lnetctl",
    version,
    infer_long_args = true,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// lnet {configure | unconfigure} [--all]
    Lnet {
        #[command(subcommand)]
        command: LnetCommand,
    },
    /// net {add | del | show | set}
    Net {
        #[command(subcommand)]
        command: NetCommand,
    },
    /// peer {add | del | show | set}
    Peer {
        #[command(subcommand)]
        command: PeerCommand,
    },
    /// route {add | del | show}
    Route {
        #[command(subcommand)]
        command: RouteCommand,
    },
    /// routing {show}
    Routing {
        #[command(subcommand)]
        command: ShowOnly,
    },
    /// set a global parameter
    Set {
        #[command(subcommand)]
        param: SetCommand,
    },
    /// global {show}
    Global {
        #[command(subcommand)]
        command: ShowOnly,
    },
    /// stats {show}
    Stats {
        #[command(subcommand)]
        command: ShowOnly,
    },
    /// debug recovery {--local | --peer}
    Debug {
        #[command(subcommand)]
        command: DebugCommand,
    },
    /// udsp {add | del | show}: user defined selection policies
    Udsp {
        #[command(subcommand)]
        command: UdspCommand,
    },
    /// ping nid[,nid,...] [nid ...]
    Ping(PingArgs),
    /// discover [--force] nid[,nid,...] [nid ...]
    Discover(DiscoverArgs),
    /// export [--backup] [FILE.yaml]: export the configuration as YAML
    Export(ExportArgs),
    /// import [--add|--del|--show|--exec] [FILE.yaml]
    Import(ImportArgs),
}

#[derive(Subcommand, Debug)]
pub enum LnetCommand {
    /// configure lnet
    Configure {
        /// load NI configuration from module parameters
        #[arg(short = 'a', long)]
        all: bool,
    },
    /// unconfigure lnet
    Unconfigure,
}

#[derive(Subcommand, Debug)]
pub enum NetCommand {
    /// add a network
    Add(NetAddArgs),
    /// delete a network
    Del(NetDelArgs),
    /// show networks
    Show(NetShowArgs),
    /// set local NI specific parameter
    Set(HealthArgs),
}

#[derive(Args, Debug, Default)]
pub struct NetAddArgs {
    /// net name (e.g. tcp0)
    #[arg(short = 'n', long)]
    pub net: Option<String>,
    /// physical interface (e.g. eth0[,eth1])
    #[arg(short = 'i', long = "if")]
    pub intf: Option<String>,
    /// time to wait before declaring a peer dead
    #[arg(short = 't', long = "peer-timeout", allow_hyphen_values = true)]
    pub peer_timeout: Option<String>,
    /// define the max number of inflight messages
    #[arg(short = 'c', long = "peer-credits", allow_hyphen_values = true)]
    pub peer_credits: Option<String>,
    /// the number of buffer credits per peer
    #[arg(short = 'b', long = "peer-buffer-credits", allow_hyphen_values = true)]
    pub peer_buffer_credits: Option<String>,
    /// Network Interface credits
    #[arg(short = 'r', long, allow_hyphen_values = true)]
    pub credits: Option<String>,
    /// number of connections per peer
    #[arg(short = 'm', long = "conns-per-peer", allow_hyphen_values = true)]
    pub conns_per_peer: Option<String>,
}

#[derive(Args, Debug, Default)]
pub struct NetDelArgs {
    /// net name (e.g. tcp0)
    #[arg(short = 'n', long)]
    pub net: Option<String>,
    /// physical interface (e.g. eth0)
    #[arg(short = 'i', long = "if")]
    pub intf: Option<String>,
}

#[derive(Args, Debug, Default)]
pub struct NetShowArgs {
    /// net name (e.g. tcp0) to filter on
    #[arg(short = 'n', long)]
    pub net: Option<String>,
    /// display detailed output per network; optional level 0..4
    #[arg(
        short = 'v',
        long,
        num_args = 0..=1,
        default_missing_value = "1",
        value_name = "LEVEL"
    )]
    pub verbose: Option<String>,
}

/// `net set` and `peer set`.
#[derive(Args, Debug, Default)]
pub struct HealthArgs {
    /// NID to set the value on
    #[arg(short = 'n', long)]
    pub nid: Option<String>,
    /// set all NIs' value to the one specified
    #[arg(short = 'a', long)]
    pub all: bool,
    /// health value to set
    #[arg(short = 't', long, allow_hyphen_values = true)]
    pub health: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum PeerCommand {
    /// add a peer NID
    Add(PeerAddArgs),
    /// delete a peer NID
    Del(PeerDelArgs),
    /// show peer information
    Show(PeerShowArgs),
    /// set peer ni specific parameter
    Set(HealthArgs),
}

#[derive(Args, Debug, Default)]
pub struct PeerAddArgs {
    /// Primary NID of the peer
    #[arg(short = 'k', long = "prim_nid")]
    pub prim_nid: Option<String>,
    /// one or more peer NIDs (comma separated)
    #[arg(short = 'n', long)]
    pub nid: Option<String>,
    /// create this peer as not Multi-Rail capable
    #[arg(short = 'm', long = "non_mr")]
    pub non_mr: bool,
    /// lock primary nid
    #[arg(short = 'l', long = "lock_prim")]
    pub lock_prim: bool,
}

#[derive(Args, Debug, Default)]
pub struct PeerDelArgs {
    /// Primary NID of the peer
    #[arg(short = 'k', long = "prim_nid")]
    pub prim_nid: Option<String>,
    /// list of NIDs to remove; if none, the peer is deleted
    #[arg(short = 'n', long)]
    pub nid: Option<String>,
    /// force-delete a locked primary NID
    #[arg(short = 'f', long)]
    pub force: bool,
}

#[derive(Args, Debug, Default)]
pub struct PeerShowArgs {
    /// NID of peer to filter on
    #[arg(short = 'n', long)]
    pub nid: Option<String>,
    /// display detailed output per peer; optional level 0..4
    #[arg(
        short = 'v',
        long,
        num_args = 0..=1,
        default_missing_value = "1",
        value_name = "LEVEL"
    )]
    pub verbose: Option<String>,
}

/// The value of a `set` sub-command.
#[derive(Args, Debug)]
pub struct SetValue {
    /// the value
    #[arg(allow_hyphen_values = true)]
    pub value: String,
}

#[derive(Subcommand, Debug)]
pub enum SetCommand {
    /// sensitivity to failure (0 turns health off; at most 1000)
    #[command(name = "health_sensitivity")]
    HealthSensitivity(SetValue),
    /// number of retries (0 turns retries off)
    #[command(name = "retry_count")]
    RetryCount(SetValue),
    /// Message/Response timeout in seconds (> 0)
    #[command(name = "transaction_timeout")]
    TransactionTimeout(SetValue),
    /// interval to ping in seconds (deprecated)
    #[command(name = "recovery_interval")]
    RecoveryInterval(SetValue),
    /// how long to recover unhealthy peer interfaces (0: indefinitely)
    #[command(name = "recovery_limit")]
    RecoveryLimit(SetValue),
    /// maximum recovery ping interval in seconds (> 0)
    #[command(name = "max_recovery_ping_interval")]
    MaxRecoveryPingInterval(SetValue),
    /// response tracking: 0 none, 1 GET, 2 PUT, 3 both (default)
    #[command(name = "response_tracking")]
    ResponseTracking(SetValue),
    /// enable (1) or disable (0) peer discovery
    #[command(name = "discovery")]
    Discovery(SetValue),
    /// drop (1) or accept (0) asymmetrical route messages
    #[command(name = "drop_asym_route")]
    DropAsymRoute(SetValue),
    /// NUMA range for NI selection (>= 0)
    #[command(name = "numa_range")]
    NumaRange(SetValue),
    /// the default value for max interfaces
    #[command(name = "max_interfaces")]
    MaxInterfaces(SetValue),
    /// router sensitivity % (deprecated)
    #[command(name = "router_sensitivity")]
    RouterSensitivity(SetValue),
    /// set tiny routing buffers (VALUE must be greater than 0)
    #[command(name = "tiny_buffers")]
    TinyBuffers(SetValue),
    /// set small routing buffers (VALUE must be greater than 0)
    #[command(name = "small_buffers")]
    SmallBuffers(SetValue),
    /// set large routing buffers (VALUE must be greater than 0)
    #[command(name = "large_buffers")]
    LargeBuffers(SetValue),
    /// enable/disable routing (0 - disable routing, 1 - enable routing)
    #[command(name = "routing")]
    Routing(SetValue),
}

#[derive(Subcommand, Debug)]
pub enum ShowOnly {
    /// show the values
    Show,
}

#[derive(Subcommand, Debug)]
pub enum DebugCommand {
    /// list recovery queues
    Recovery(RecoveryArgs),
}

#[derive(Args, Debug, Default)]
pub struct RecoveryArgs {
    /// list local recovery queue
    #[arg(short = 'l', long, overrides_with = "peer")]
    pub local: bool,
    /// list peer recovery queue
    #[arg(short = 'p', long, overrides_with = "local")]
    pub peer: bool,
}

#[derive(Subcommand, Debug)]
pub enum RouteCommand {
    /// add a route
    Add(RouteAddArgs),
    /// delete a route
    Del(RouteDelArgs),
    /// show routes
    Show(RouteShowArgs),
}

#[derive(Args, Debug, Default)]
pub struct RouteAddArgs {
    /// network (e.g. tcp1)
    #[arg(short = 'n', long)]
    pub net: Option<String>,
    /// gateway NID (e.g. 10.1.1.2@tcp) or a list of them
    #[arg(short = 'g', long)]
    pub gateway: Option<String>,
    /// number of hops to final destination (1 < hops < 255)
    #[arg(
        short = 'c',
        long = "hop",
        visible_alias = "hop-count",
        allow_hyphen_values = true
    )]
    pub hop: Option<String>,
    /// priority of route (0 - highest prio)
    #[arg(short = 'p', long, allow_hyphen_values = true)]
    pub priority: Option<String>,
    /// gateway health sensitivity (>= 0, default 1)
    #[arg(short = 's', long = "health_sensitivity", allow_hyphen_values = true)]
    pub sensitivity: Option<String>,
}

#[derive(Args, Debug, Default)]
pub struct RouteDelArgs {
    /// network (e.g. tcp1)
    #[arg(short = 'n', long)]
    pub net: Option<String>,
    /// gateway NID (e.g. 10.1.1.2@tcp) or a list of them
    #[arg(short = 'g', long)]
    pub gateway: Option<String>,
}

#[derive(Args, Debug, Default)]
pub struct RouteShowArgs {
    /// network (e.g. tcp1)
    #[arg(short = 'n', long)]
    pub net: Option<String>,
    /// gateway NID (e.g. 10.1.1.2@tcp)
    #[arg(short = 'g', long)]
    pub gateway: Option<String>,
    /// number of hops to final destination
    #[arg(
        short = 'c',
        long = "hop",
        visible_alias = "hop-count",
        allow_hyphen_values = true
    )]
    pub hop: Option<String>,
    /// priority of route (0 - highest prio)
    #[arg(short = 'p', long, allow_hyphen_values = true)]
    pub priority: Option<String>,
    /// display detailed output per route
    #[arg(
        short = 'v',
        long,
        num_args = 0..=1,
        default_missing_value = "1",
        value_name = "LEVEL"
    )]
    pub verbose: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum UdspCommand {
    /// add a udsp
    Add(UdspAddArgs),
    /// delete a udsp
    Del(UdspDelArgs),
    /// show udsps
    Show(UdspIdxArgs),
}

#[derive(Args, Debug, Default)]
pub struct UdspAddArgs {
    /// source NID or net (local NIs)
    #[arg(short = 's', long)]
    pub src: Option<String>,
    /// destination NID or net (peer NIs)
    #[arg(short = 'd', long)]
    pub dst: Option<String>,
    /// router NID or net
    #[arg(short = 'r', long)]
    pub rte: Option<String>,
    /// priority (lower is preferred); without it the rule is a preferred list
    #[arg(short = 'p', long, allow_hyphen_values = true)]
    pub priority: Option<String>,
    /// insert before this rule (default: last)
    #[arg(short = 'i', long, allow_hyphen_values = true)]
    pub idx: Option<String>,
}

#[derive(Args, Debug, Default)]
pub struct UdspDelArgs {
    /// index of the rule to delete
    #[arg(short = 'i', long, allow_hyphen_values = true)]
    pub idx: Option<String>,
    /// delete every rule
    #[arg(short = 'a', long)]
    pub all: bool,
}

#[derive(Args, Debug, Default)]
pub struct UdspIdxArgs {
    /// index of the rule to show (default: all)
    #[arg(short = 'i', long, allow_hyphen_values = true)]
    pub idx: Option<String>,
}

#[derive(Args, Debug, Default)]
pub struct PingArgs {
    /// NIDs to ping (comma-separated lists allowed)
    #[arg(required = true, value_name = "NID")]
    pub nids: Vec<String>,
    /// source nid
    #[arg(short = 's', long)]
    pub source: Option<String>,
    /// ping timeout in seconds
    #[arg(short = 't', long, allow_hyphen_values = true)]
    pub timeout: Option<String>,
}

#[derive(Args, Debug, Default)]
pub struct DiscoverArgs {
    /// NIDs to discover (comma-separated lists allowed)
    #[arg(required = true, value_name = "NID")]
    pub nids: Vec<String>,
    /// force discovery even if the peer is up to date
    #[arg(short = 'f', long)]
    pub force: bool,
}

#[derive(Args, Debug, Default)]
pub struct ExportArgs {
    /// export only what's necessary for reconfig
    #[arg(short = 'b', long)]
    pub backup: bool,
    /// file to write (standard output if absent)
    pub file: Option<PathBuf>,
}

#[derive(Args, Debug, Default)]
#[command(group(ArgGroup::new("mode").args(["add", "del", "show", "exec"])))]
pub struct ImportArgs {
    /// configure what the file describes (default)
    #[arg(short = 'a', long)]
    pub add: bool,
    /// delete what the file describes
    #[arg(short = 'd', long)]
    pub del: bool,
    /// show what the file describes
    #[arg(short = 's', long)]
    pub show: bool,
    /// run the file's ping items
    #[arg(short = 'e', long)]
    pub exec: bool,
    /// file to read (standard input if absent)
    pub file: Option<PathBuf>,
}

/// Rewrites the verbosity options of `net show` and `peer show` the way
/// Lustre's getopt loop reads them (lnetctl.md §1.5) before clap sees them:
///
/// * `--verbose=N` (or an abbreviation, `--verb=N`) always means 1: the
///   code only looks at a *separate* next argument;
/// * `peer show -vN` (short option `v::`, attached argument) means 1;
/// * `net show -vN` (short option `v`, no argument) is `-v` followed by the
///   option `-N`, which getopt rejects; here clap rejects it too.
///
/// `-v N` and `--verbose N` are left for clap, which takes `N` as the level
/// (and `-v` alone as 1).
pub fn preprocess(args: Vec<OsString>) -> Vec<OsString> {
    let word = |i: usize| args.get(i).and_then(|a| a.to_str());
    let which = match (word(1), word(2)) {
        (Some("net"), Some("show")) => Some(false),
        (Some("peer"), Some("show")) => Some(true),
        _ => None,
    };
    let Some(peer) = which else {
        return args;
    };
    let mut out = Vec::with_capacity(args.len() + 1);
    let mut rest = false;
    for (i, a) in args.into_iter().enumerate() {
        let s = match a.to_str() {
            Some(s) if i > 2 && !rest => s.to_string(),
            _ => {
                out.push(a);
                continue;
            }
        };
        if s == "--" {
            rest = true;
            out.push(a);
        } else if let Some((name, _)) = s.strip_prefix("--").and_then(|l| l.split_once('=')) {
            if !name.is_empty() && "verbose".starts_with(name) {
                out.push(OsString::from("--verbose=1"));
            } else {
                out.push(a);
            }
        } else if let Some(tail) = s.strip_prefix("-v").filter(|t| !t.is_empty()) {
            if peer {
                out.push(OsString::from("--verbose=1"));
            } else {
                out.push(OsString::from("-v"));
                out.push(OsString::from(format!("-{tail}")));
            }
        } else {
            out.push(a);
        }
    }
    out
}

/// Lustre's `parse_long`: `strtol(s, &end, 0)` that must consume the whole
/// string. Like it, the empty string is 0 and overflow saturates.
pub fn parse_long(s: &str) -> Option<i64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if s.is_empty() {
        return Some(0);
    }
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let mag = u128::from_str_radix(digits, radix).unwrap_or(u128::MAX);
    Some(if neg {
        i64::try_from(mag).map(|v| -v).unwrap_or(i64::MIN)
    } else {
        i64::try_from(mag).unwrap_or(i64::MAX)
    })
}

/// C's `atol`: an optional sign and the leading decimal digits; 0 if none.
pub fn atol(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for c in t.chars().map_while(|c| c.to_digit(10)) {
        v = v.saturating_mul(10).saturating_add(i64::from(c));
    }
    if neg {
        -v
    } else {
        v
    }
}

/// The verbosity level of `net show` / `peer show`: absent is 0; a value
/// that does not parse is 1 (Lustre consumes it and uses the default).
pub fn verbosity(v: &Option<String>) -> i64 {
    match v {
        None => 0,
        Some(s) => parse_long(s).unwrap_or(1),
    }
}
