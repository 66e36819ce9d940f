//! Host tests: command lines, YAML shapes at every verbosity, error blocks,
//! export/import, over the in-memory `Fake` backend.

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use lnet_core::nid::Nid;
use serde_yaml_ng::Value;

use crate::abi::{self, Cmd, IocArg};
use crate::cli::{self, Cli, Command, NetCommand, PeerCommand};
use crate::cmd::{self, Outcome};
use crate::fake::{Fake, PingReply};
use crate::transfer::{self, Mode};

fn argv(args: &str) -> Vec<OsString> {
    std::iter::once("lnetctl")
        .chain(args.split_whitespace())
        .map(OsString::from)
        .collect()
}

fn parse(args: &str) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(cli::preprocess(argv(args)))
}

/// Runs an lnetctl command line (without the program name) on `f`.
fn lnetctl(f: &mut Fake, args: &str) -> Outcome {
    let parsed = parse(args).unwrap_or_else(|e| panic!("{args}: {e}"));
    cmd::run(&parsed.command, f)
}

/// Runs a command that must succeed; its stdout.
fn ok(f: &mut Fake, args: &str) -> String {
    let o = lnetctl(f, args);
    assert_eq!(o.rc, 0, "{args}: {}", o.stderr);
    assert_eq!(o.stderr, "", "{args}");
    o.stdout
}

fn nid(s: &str) -> Nid {
    Nid::parse(s).unwrap()
}

/// Up, with tcp on eth0 and eth1, o2ib on ib0, and two peers.
fn populated() -> Fake {
    let mut f = Fake::up();
    for c in [
        "net add --net tcp --if eth0,eth1",
        "net add --net o2ib --if ib0 --peer-credits 16",
        "peer add --prim_nid 192.168.1.20@tcp --nid 192.168.2.20@tcp",
        "peer add --prim_nid 10.0.0.30@o2ib --non_mr",
    ] {
        ok(&mut f, c);
    }
    f
}

fn yaml(s: &str) -> Value {
    serde_yaml_ng::from_str(s).unwrap_or_else(|e| panic!("{e}:\n{s}"))
}

fn keys(v: &Value) -> Vec<String> {
    match v {
        Value::Mapping(m) => m
            .keys()
            .map(|k| match k {
                Value::String(s) => s.clone(),
                other => serde_yaml_ng::to_string(other).unwrap().trim().to_string(),
            })
            .collect(),
        other => panic!("not a mapping: {other:?}"),
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------
// Command lines

#[test]
fn every_command_parses() {
    let lines = [
        "lnet configure",
        "lnet configure --all",
        "lnet configure -a",
        "lnet unconfigure",
        "net add --net tcp --if eth0,eth1",
        "net add -n tcp1 -i eth0 --peer-timeout 180 --peer-credits 8 --peer-buffer-credits 0 --credits 256 --conns-per-peer 2",
        "net del --net tcp",
        "net del --net tcp --if eth1",
        "net show",
        "net show --net tcp -v 2",
        "net set --health 0 --nid 192.168.1.10@tcp",
        "net set --health 1000 --all",
        "peer add --prim_nid 1.2.3.4@tcp --nid 1.2.3.5@tcp,1.2.3.6@tcp",
        "peer add --prim_nid 1.2.3.4@tcp --non_mr --lock_prim",
        "peer add -k 1.2.3.4@tcp -n 1.2.3.5@tcp -m -l",
        "peer del --prim_nid 1.2.3.4@tcp",
        "peer del --prim_nid 1.2.3.4@tcp --nid 1.2.3.5@tcp --force",
        "peer show",
        "peer show --nid 1.2.3.4@tcp -v 4",
        "peer set --health 500 --nid 1.2.3.4@tcp",
        "peer set --health 500 --all",
        "set health_sensitivity 100",
        "set retry_count 3",
        "set transaction_timeout 50",
        "set recovery_interval 1",
        "set recovery_limit 0",
        "set max_recovery_ping_interval 900",
        "set response_tracking 3",
        "set discovery 0",
        "set drop_asym_route 1",
        "set numa_range 2",
        "set max_interfaces 200",
        "set router_sensitivity 100",
        "global show",
        "stats show",
        "debug recovery --local",
        "debug recovery --peer",
        "ping 1.2.3.4@tcp",
        "ping 1.2.3.4@tcp,1.2.3.5@tcp 1.2.3.6@tcp --source 1.2.3.1@tcp --timeout 3",
        "export",
        "export --backup /tmp/x.yaml",
        "import",
        "import --del /tmp/x.yaml",
        "import --show /tmp/x.yaml",
        "import --exec /tmp/x.yaml",
    ];
    for l in lines {
        if let Err(e) = parse(l) {
            panic!("{l}: {e}");
        }
    }
}

#[test]
fn parsed_fields() {
    let c = parse("net add -n tcp1 -i eth0,eth1 -t 90 -c 16 -b 4 -r 512 -m 2").unwrap();
    let Command::Net {
        command: NetCommand::Add(a),
    } = c.command
    else {
        panic!()
    };
    assert_eq!(a.net.as_deref(), Some("tcp1"));
    assert_eq!(a.intf.as_deref(), Some("eth0,eth1"));
    assert_eq!(a.peer_timeout.as_deref(), Some("90"));
    assert_eq!(a.peer_credits.as_deref(), Some("16"));
    assert_eq!(a.peer_buffer_credits.as_deref(), Some("4"));
    assert_eq!(a.credits.as_deref(), Some("512"));
    assert_eq!(a.conns_per_peer.as_deref(), Some("2"));

    let c = parse("peer del -k 1.2.3.4@tcp -n 1.2.3.5@tcp -f").unwrap();
    let Command::Peer {
        command: PeerCommand::Del(a),
    } = c.command
    else {
        panic!()
    };
    assert_eq!(a.prim_nid.as_deref(), Some("1.2.3.4@tcp"));
    assert_eq!(a.nid.as_deref(), Some("1.2.3.5@tcp"));
    assert!(a.force);

    let c = parse("ping 1.2.3.4@tcp 1.2.3.5@tcp -s 1.2.3.1@tcp -t 2").unwrap();
    let Command::Ping(a) = c.command else {
        panic!()
    };
    assert_eq!(a.nids, strs(&["1.2.3.4@tcp", "1.2.3.5@tcp"]));
    assert_eq!(a.source.as_deref(), Some("1.2.3.1@tcp"));
    assert_eq!(a.timeout.as_deref(), Some("2"));

    let c = parse("set recovery_limit -1").unwrap();
    let Command::Set { param } = c.command else {
        panic!()
    };
    assert_eq!(
        cmd::GlobalParam::of(&param),
        (cmd::GlobalParam::RecoveryLimit, "-1")
    );
}

#[test]
fn options_outside_lustres_tables_are_rejected() {
    for l in [
        "peer del --prim_nid 1.2.3.4@tcp --non_mr",
        "peer add --prim_nid 1.2.3.4@tcp --force",
        "net show --nid 1.2.3.4@tcp",
        "import --add --del",
        "ping",
        "set",
        "set no_such_param 1",
        "net",
    ] {
        assert!(parse(l).is_err(), "{l}");
    }
}

#[test]
fn long_options_abbreviate_like_getopt() {
    let c = parse("peer add --prim 1.2.3.4@tcp --ni 1.2.3.5@tcp").unwrap();
    let Command::Peer {
        command: PeerCommand::Add(a),
    } = c.command
    else {
        panic!()
    };
    assert_eq!(a.prim_nid.as_deref(), Some("1.2.3.4@tcp"));
    assert_eq!(a.nid.as_deref(), Some("1.2.3.5@tcp"));
    // Ambiguous: --peer-timeout, --peer-credits, --peer-buffer-credits.
    assert!(parse("net add --net tcp --peer- 5").is_err());
    assert!(parse("net add --net tcp --peer-t 5").is_ok());
}

fn net_show_level(args: &str) -> i64 {
    match parse(args)
        .unwrap_or_else(|e| panic!("{args}: {e}"))
        .command
    {
        Command::Net {
            command: NetCommand::Show(a),
        } => cli::verbosity(&a.verbose),
        _ => panic!(),
    }
}

fn peer_show_level(args: &str) -> i64 {
    match parse(args)
        .unwrap_or_else(|e| panic!("{args}: {e}"))
        .command
    {
        Command::Peer {
            command: PeerCommand::Show(a),
        } => cli::verbosity(&a.verbose),
        _ => panic!(),
    }
}

/// lnetctl.md §1.5: a separate number is the level, `-v` alone is 1, an
/// attached argument is always 1.
#[test]
fn verbosity_quirk_net_show() {
    assert_eq!(net_show_level("net show"), 0);
    assert_eq!(net_show_level("net show -v"), 1);
    assert_eq!(net_show_level("net show -v 0"), 0);
    assert_eq!(net_show_level("net show -v 2"), 2);
    assert_eq!(net_show_level("net show --verbose 3"), 3);
    assert_eq!(net_show_level("net show -v 4"), 4);
    assert_eq!(net_show_level("net show --verbose=3"), 1);
    assert_eq!(net_show_level("net show --verb=4"), 1);
    assert_eq!(net_show_level("net show --verbose"), 1);
    // A following option is not a level.
    assert_eq!(net_show_level("net show -v --net tcp"), 1);
    // A word that is not a number is taken and means 1.
    assert_eq!(net_show_level("net show -v abc"), 1);
    // strtol base 0.
    assert_eq!(net_show_level("net show -v 0x2"), 2);
    // net show's short option takes no argument: -v3 is -v then -3,
    // which getopt rejects.
    assert!(parse("net show -v3").is_err());
    let Command::Net {
        command: NetCommand::Show(a),
    } = parse("net show -v -n tcp1").unwrap().command
    else {
        panic!()
    };
    assert_eq!(a.net.as_deref(), Some("tcp1"));
}

#[test]
fn verbosity_quirk_peer_show() {
    assert_eq!(peer_show_level("peer show"), 0);
    assert_eq!(peer_show_level("peer show -v"), 1);
    assert_eq!(peer_show_level("peer show -v 3"), 3);
    assert_eq!(peer_show_level("peer show --verbose 2"), 2);
    // v:: — the attached argument is seen by getopt but ignored: 1.
    assert_eq!(peer_show_level("peer show -v3"), 1);
    assert_eq!(peer_show_level("peer show -v4"), 1);
    assert_eq!(peer_show_level("peer show --verbose=4"), 1);
    assert_eq!(peer_show_level("peer show --nid 1.2.3.4@tcp -v 4"), 4);
}

#[test]
fn verbosity_rewrite_touches_only_show() {
    // Other commands' arguments pass through unchanged.
    let a = argv("ping -v3 --verbose=2");
    assert_eq!(cli::preprocess(a.clone()), a);
    let a = argv("net add --net tcp");
    assert_eq!(cli::preprocess(a.clone()), a);
}

#[test]
fn help_on_every_command() {
    fn walk(cmd: &clap::Command, path: &mut Vec<String>, all: &mut Vec<Vec<String>>) {
        all.push(path.clone());
        for sub in cmd.get_subcommands() {
            path.push(sub.get_name().to_string());
            walk(sub, path, all);
            path.pop();
        }
    }
    let mut all = Vec::new();
    walk(&Cli::command(), &mut Vec::new(), &mut all);
    // The root; lnet(2) net(4) peer(4) set(16) global(1) stats(1) debug(1)
    // udsp(3) route(3) routing(1) with their parents; ping, discover,
    // export, import.
    assert_eq!(all.len(), 51);
    for path in all {
        for flag in ["--help", "-h"] {
            let mut args = vec![String::from("lnetctl")];
            args.extend(path.iter().cloned());
            args.push(flag.into());
            let e = Cli::try_parse_from(&args).expect_err(&args.join(" "));
            assert_eq!(e.kind(), ErrorKind::DisplayHelp, "{}", args.join(" "));
            assert!(!e.to_string().is_empty());
        }
    }
    let help = Cli::try_parse_from(["lnetctl", "net", "show", "--help"])
        .unwrap_err()
        .to_string();
    assert!(
        help.contains("--verbose") && help.contains("--net"),
        "{help}"
    );
}

#[test]
fn debug_recovery_last_flag_wins() {
    let mut f = Fake::up();
    f.recovery = [vec![nid("1.1.1.1@tcp")], vec![nid("2.2.2.2@tcp")]];
    assert!(ok(&mut f, "debug recovery --local --peer").starts_with("Peer NI recovery:"));
    assert!(ok(&mut f, "debug recovery --peer --local").starts_with("Local NI recovery:"));
}

#[test]
fn parse_long_is_strtol_base_0() {
    use cli::parse_long;
    assert_eq!(parse_long("10"), Some(10));
    assert_eq!(parse_long("-3"), Some(-3));
    assert_eq!(parse_long("+7"), Some(7));
    assert_eq!(parse_long("0x10"), Some(16));
    assert_eq!(parse_long("0X1f"), Some(31));
    assert_eq!(parse_long("010"), Some(8));
    assert_eq!(parse_long("0"), Some(0));
    assert_eq!(parse_long(" 5"), Some(5));
    assert_eq!(parse_long(""), Some(0));
    assert_eq!(parse_long("5 "), None);
    assert_eq!(parse_long("08"), None);
    assert_eq!(parse_long("abc"), None);
    assert_eq!(parse_long("0x"), None);
    assert_eq!(parse_long("-"), None);
    assert_eq!(parse_long("99999999999999999999"), Some(i64::MAX));
    assert_eq!(cli::atol("12abc"), 12);
    assert_eq!(cli::atol("x"), 0);
    assert_eq!(cli::atol(" -4"), -4);
}

#[test]
fn exit_code_is_lnetctls_return_code() {
    let o = |rc| Outcome {
        rc,
        ..Outcome::default()
    };
    assert_eq!(o(0).exit_code(), 0);
    assert_eq!(o(-1).exit_code(), 255);
    assert_eq!(o(-22).exit_code(), 234);
    assert_eq!(o(-256).exit_code(), 1);
}

// ---------------------------------------------------------------------
// net show

const NET_SHOW_V0: &str = "\
net:
-     net type: lo
      local NI(s):
      -     nid: 0@lo
            status: up
-     net type: tcp
      local NI(s):
      -     nid: 192.168.1.10@tcp
            status: up
            interfaces:
                  0: eth0
      -     nid: 192.168.2.10@tcp
            status: up
            interfaces:
                  0: eth1
-     net type: o2ib
      local NI(s):
      -     nid: 10.0.0.10@o2ib
            status: up
            interfaces:
                  0: ib0
";

const TCP_NI_V1: &str = "\
net:
-     net type: tcp
      local NI(s):
      -     nid: 192.168.1.10@tcp
            status: up
            interfaces:
                  0: eth0
            statistics:
                  send_count: 101
                  recv_count: 201
                  drop_count: 1
                  put_egress_samples: 3
                  put_egress_min_nsec: 1000
                  put_egress_max_nsec: 3000
                  put_egress_avg_nsec: 2000
                  get_rtt_samples: 2
                  get_rtt_min_nsec: 5000
                  get_rtt_max_nsec: 7000
                  get_rtt_avg_nsec: 6000
                  put_ack_samples: 0
                  put_ack_min_nsec: 0
                  put_ack_max_nsec: 0
                  put_ack_avg_nsec: 0
            tunables:
                  peer_timeout: 180
                  peer_credits: 8
                  peer_buffer_credits: 0
                  credits: 256
            lnd tunables:
                  conns_per_peer: 1
                  timeout: 50
                  tos: -1
            dev cpt: -1
            CPT: \"[0,1]\"
";

const STATISTICS_KEYS: [&str; 15] = [
    "send_count",
    "recv_count",
    "drop_count",
    "put_egress_samples",
    "put_egress_min_nsec",
    "put_egress_max_nsec",
    "put_egress_avg_nsec",
    "get_rtt_samples",
    "get_rtt_min_nsec",
    "get_rtt_max_nsec",
    "get_rtt_avg_nsec",
    "put_ack_samples",
    "put_ack_min_nsec",
    "put_ack_max_nsec",
    "put_ack_avg_nsec",
];
const MSG_KEYS: [&str; 5] = ["put", "get", "reply", "ack", "hello"];
const NI_HEALTH_KEYS: [&str; 10] = [
    "fatal_error",
    "health value",
    "interrupts",
    "dropped",
    "aborted",
    "no route",
    "timeouts",
    "error",
    "ping_count",
    "next_ping",
];
const TUNABLE_KEYS: [&str; 4] = [
    "peer_timeout",
    "peer_credits",
    "peer_buffer_credits",
    "credits",
];
const TCP_LND_KEYS: [&str; 3] = ["conns_per_peer", "timeout", "tos"];
const O2IB_LND_KEYS: [&str; 10] = [
    "peercredits_hiw",
    "map_on_demand",
    "concurrent_sends",
    "fmr_pool_size",
    "fmr_flush_trigger",
    "fmr_cache",
    "ntx",
    "conns_per_peer",
    "timeout",
    "tos",
];
const UDSP_KEYS: [&str; 2] = ["net priority", "nid priority"];

/// The keys of a tcp NI at each level (lnetctl.md §2.1).
fn ni_keys(level: i64) -> Vec<String> {
    let mut k = vec!["nid", "status", "interfaces"];
    if level >= 1 {
        k.push("statistics");
    }
    if level >= 4 {
        k.push("udsp info");
    }
    if level >= 2 {
        k.extend([
            "sent_stats",
            "received_stats",
            "dropped_stats",
            "health stats",
        ]);
    }
    if level >= 1 {
        k.extend(["tunables", "lnd tunables", "dev cpt", "CPT"]);
    }
    strs(&k)
}

#[test]
fn net_show_v0_exact() {
    let mut f = populated();
    assert_eq!(ok(&mut f, "net show"), NET_SHOW_V0);
    assert_eq!(ok(&mut f, "net show -v 0"), NET_SHOW_V0);
}

#[test]
fn net_show_v1_exact() {
    let mut f = populated();
    let out = ok(&mut f, "net show --net tcp -v");
    // The tcp net's first NI, as printed.
    let first_ni_end = out.find("      -     nid: 192.168.2.10@tcp").unwrap();
    assert_eq!(&out[..first_ni_end], TCP_NI_V1);
}

#[test]
fn net_show_keys_at_each_level() {
    let mut f = populated();
    for level in 0..=5 {
        let v = yaml(&ok(&mut f, &format!("net show -v {level}")));
        assert_eq!(keys(&v), strs(&["net"]));
        let nets = v["net"].as_sequence().unwrap();
        assert_eq!(nets.len(), 3, "lo, tcp, o2ib");
        for n in nets {
            assert_eq!(keys(n), strs(&["net type", "local NI(s)"]));
        }
        let tcp = &nets[1]["local NI(s)"][0];
        assert_eq!(keys(tcp), ni_keys(level), "level {level}");
        assert_eq!(keys(&tcp["interfaces"]), strs(&["0"]));
        if level >= 1 {
            assert_eq!(keys(&tcp["statistics"]), strs(&STATISTICS_KEYS));
            assert_eq!(keys(&tcp["tunables"]), strs(&TUNABLE_KEYS));
            assert_eq!(keys(&tcp["lnd tunables"]), strs(&TCP_LND_KEYS));
            let ib = &nets[2]["local NI(s)"][0];
            assert_eq!(keys(&ib["lnd tunables"]), strs(&O2IB_LND_KEYS));
            assert_eq!(ib["tunables"]["peer_credits"], Value::from(16));
            // The loopback NI has no interface and no LND tunables.
            let lo = &nets[0]["local NI(s)"][0];
            let mut lo_keys = ni_keys(level);
            lo_keys.retain(|k| k != "interfaces" && k != "lnd tunables");
            assert_eq!(keys(lo), lo_keys);
        }
        if level >= 2 {
            for k in ["sent_stats", "received_stats", "dropped_stats"] {
                assert_eq!(keys(&tcp[k]), strs(&MSG_KEYS));
            }
            assert_eq!(keys(&tcp["health stats"]), strs(&NI_HEALTH_KEYS));
            assert_eq!(tcp["health stats"]["no route"], Value::from(4));
        }
        if level >= 4 {
            assert_eq!(keys(&tcp["udsp info"]), strs(&UDSP_KEYS));
            assert_eq!(tcp["udsp info"]["net priority"], Value::from(-1));
        }
    }
    // Level 3 adds nothing to net show.
    assert_eq!(ok(&mut f, "net show -v 3"), ok(&mut f, "net show -v 2"));
}

#[test]
fn net_show_v2_v4_layout() {
    let mut f = populated();
    let out = ok(&mut f, "net show --net o2ib -v 4");
    let expect_fragment = "\
            udsp info:
                  net priority: -1
                  nid priority: -1
            sent_stats:
                  put: 10
                  get: 11
                  reply: 12
                  ack: 13
                  hello: 14
";
    assert!(out.contains(expect_fragment), "{out}");
    let health = "\
            health stats:
                  fatal_error: 0
                  health value: 1000
                  interrupts: 1
                  dropped: 2
                  aborted: 3
                  no route: 4
                  timeouts: 5
                  error: 6
                  ping_count: 7
                  next_ping: 12345
";
    assert!(out.contains(health), "{out}");
}

#[test]
fn net_show_filters_and_empties() {
    let mut f = populated();
    let v = yaml(&ok(&mut f, "net show --net o2ib"));
    assert_eq!(v["net"].as_sequence().unwrap().len(), 1);
    assert_eq!(v["net"][0]["net type"], Value::from("o2ib"));
    // No NI on that net: nothing printed.
    assert_eq!(ok(&mut f, "net show --net tcp5"), "");
    let o = lnetctl(&mut f, "net show --net bogus");
    assert_eq!(
        o.stderr,
        "show:\n    - net:\n          errno: -1\n          descr: \"cannot parse net 'bogus'\"\n"
    );
}

#[test]
fn net_add_del_and_errors() {
    let mut f = Fake::up();
    ok(&mut f, "net add --net tcp1 --if eth0");
    assert!(ok(&mut f, "net show").contains("192.168.1.10@tcp1"));
    // Same interface again: the kernel's EEXIST as Lustre's error block.
    let o = lnetctl(&mut f, "net add --net tcp1 --if eth0");
    assert_eq!(o.rc, -17);
    assert_eq!(
        o.stderr,
        "add:\n    - net:\n          errno: -17\n          descr: \"cannot add network: File exists\"\n"
    );
    assert_eq!(o.exit_code(), 239);
    let o = lnetctl(&mut f, "net add --net tcp1 --if eth0[0,1]");
    assert_eq!(
        o.stderr,
        "ni:\n    - add:\n          errno: -1\n          descr: \"bad interface list\"\n"
    );
    let o = lnetctl(&mut f, "net add --if eth0");
    assert_eq!(o.rc, cmd::RC_MISSING_PARAM);
    // Tunables that do not parse are ignored, as Lustre does.
    ok(
        &mut f,
        "net add --net tcp1 --if eth1 --credits lots --peer-timeout 90",
    );
    assert_eq!(f.nis[2].tun[3], abi::TUNABLE_DEFAULT);
    assert_eq!(f.nis[2].tun[0], 90);
    ok(&mut f, "net del --net tcp1 --if eth0");
    assert_eq!(f.nis.len(), 2);
    ok(&mut f, "net del --net tcp1");
    assert_eq!(f.nis.len(), 1);
    let o = lnetctl(&mut f, "net del --net tcp1");
    assert_eq!(o.rc, -2);
    assert!(o.stderr.starts_with("del:\n    - net:\n"), "{}", o.stderr);
}

#[test]
fn lnet_down_is_an_error_block() {
    let mut f = Fake::new();
    let o = lnetctl(&mut f, "net show");
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr,
        "show:\n    - net:\n          errno: -100\n          descr: \"cannot get networks: Network is down\"\n"
    );
    assert_ne!(o.exit_code(), 0);
}

#[test]
fn configure_and_unconfigure() {
    let mut f = Fake::new();
    f.boot_nets = vec![(
        lnet_core::nid::Net::parse("tcp").unwrap(),
        vec!["eth1".into()],
    )];
    ok(&mut f, "lnet configure");
    assert_eq!(f.nis.len(), 1, "only 0@lo without --all");
    ok(&mut f, "lnet unconfigure");
    assert!(!f.up);
    ok(&mut f, "lnet configure --all");
    assert_eq!(f.nis[1].nid, nid("192.168.2.10@tcp"));
    f.fail.push((Cmd::Unconfigure, nix::errno::Errno::EBUSY));
    let o = lnetctl(&mut f, "lnet unconfigure");
    assert_eq!(
        o.stderr,
        "unconfigure:\n    - lnet:\n          errno: -16\n          descr: \"LNet unconfigure error: Device or resource busy\"\n"
    );
}

#[test]
fn net_and_peer_health_set() {
    let mut f = populated();
    ok(&mut f, "net set --health 0 --nid 192.168.1.10@tcp");
    assert_eq!(f.nis[1].health, 0);
    let v = yaml(&ok(&mut f, "net show --net tcp -v 2"));
    assert_eq!(v["net"][0]["local NI(s)"][0]["status"], Value::from("down"));
    assert_eq!(
        v["net"][0]["local NI(s)"][0]["health stats"]["health value"],
        Value::from(0)
    );
    ok(&mut f, "net set --health 1000 --all");
    assert!(f.nis.iter().all(|n| n.health == 1000));
    ok(&mut f, "peer set --health 300 --nid 192.168.2.20@tcp");
    assert_eq!(f.peers[0].health, vec![1000, 300]);
    ok(&mut f, "peer set --health 10 --all");
    assert!(f.peers.iter().all(|p| p.health.iter().all(|&h| h == 10)));
    // Lustre: a health value that does not parse is "not given": no-op.
    let before = f.log.len();
    ok(&mut f, "net set --health x --all");
    assert_eq!(f.log.len(), before);
    let o = lnetctl(&mut f, "net set --health 5 --all --nid 192.168.1.10@tcp");
    assert_eq!(o.rc, -22);
    assert!(o.stderr.starts_with("net:\n    - set:\n"), "{}", o.stderr);
    let o = lnetctl(&mut f, "peer set --health 5 --nid 9.9.9.9@tcp");
    assert_eq!(o.rc, -2);
    assert!(
        o.stderr.contains("No such file or directory"),
        "{}",
        o.stderr
    );
}

// ---------------------------------------------------------------------
// peer show

const PEER_SHOW_V0: &str = "\
peer:
-     primary nid: 192.168.1.20@tcp
      Multi-Rail: true
      peer ni:
      -     nid: 192.168.1.20@tcp
            state: NA
      -     nid: 192.168.2.20@tcp
            state: NA
-     primary nid: 10.0.0.30@o2ib
      Multi-Rail: false
      peer ni:
      -     nid: 10.0.0.30@o2ib
            state: NA
";

fn peer_ni_keys(level: i64) -> Vec<String> {
    let mut k = vec!["nid"];
    if level >= 4 {
        k.push("udsp info");
    }
    k.push("state");
    if level >= 1 {
        k.extend([
            "max_ni_tx_credits",
            "available_tx_credits",
            "min_tx_credits",
            "tx_q_num_of_buf",
            "available_rtr_credits",
            "min_rtr_credits",
            "refcount",
            "statistics",
        ]);
    }
    if level >= 2 {
        k.extend([
            "sent_stats",
            "received_stats",
            "dropped_stats",
            "health stats",
        ]);
    }
    strs(&k)
}

#[test]
fn peer_show_v0_exact() {
    let mut f = populated();
    assert_eq!(ok(&mut f, "peer show"), PEER_SHOW_V0);
}

#[test]
fn peer_show_keys_at_each_level() {
    let mut f = populated();
    for level in 0..=4 {
        let v = yaml(&ok(&mut f, &format!("peer show -v {level}")));
        let peers = v["peer"].as_sequence().unwrap();
        assert_eq!(peers.len(), 2);
        let mut pk = vec!["primary nid", "Multi-Rail"];
        if level >= 3 {
            pk.push("peer state");
        }
        pk.push("peer ni");
        assert_eq!(keys(&peers[0]), strs(&pk), "level {level}");
        let ni = &peers[0]["peer ni"][1];
        assert_eq!(keys(ni), peer_ni_keys(level), "level {level}");
        if level >= 1 {
            assert_eq!(keys(&ni["statistics"]), strs(&STATISTICS_KEYS));
        }
        if level >= 2 {
            assert_eq!(
                keys(&ni["health stats"]),
                strs(&[
                    "health value",
                    "dropped",
                    "timeout",
                    "error",
                    "network timeout",
                    "ping_count",
                    "next_ping"
                ])
            );
            assert_eq!(keys(&ni["received_stats"]), strs(&MSG_KEYS));
        }
        if level >= 3 {
            // MULTI_RAIL | CONFIGURED, and CONFIGURED alone.
            assert_eq!(peers[0]["peer state"], Value::from(9));
            assert_eq!(peers[1]["peer state"], Value::from(8));
        }
        if level >= 4 {
            assert_eq!(keys(&ni["udsp info"]), strs(&UDSP_KEYS));
        }
    }
}

#[test]
fn peer_show_v3_layout() {
    let mut f = populated();
    let out = ok(&mut f, "peer show --nid 10.0.0.30@o2ib -v 3");
    assert!(
        out.starts_with(
            "peer:\n-     primary nid: 10.0.0.30@o2ib\n      Multi-Rail: false\n      peer state: 8\n      peer ni:\n      -     nid: 10.0.0.30@o2ib\n            state: NA\n            max_ni_tx_credits: 8\n"
        ),
        "{out}"
    );
    assert!(out.contains(
        "            health stats:\n                  health value: 1000\n                  dropped: 1\n                  timeout: 2\n                  error: 3\n                  network timeout: 4\n                  ping_count: 0\n                  next_ping: 0\n"
    ));
}

#[test]
fn peer_add_del_and_filters() {
    let mut f = populated();
    // --nid matches any NID of the peer.
    let v = yaml(&ok(&mut f, "peer show --nid 192.168.2.20@tcp"));
    assert_eq!(v["peer"].as_sequence().unwrap().len(), 1);
    assert_eq!(v["peer"][0]["primary nid"], Value::from("192.168.1.20@tcp"));
    let o = lnetctl(&mut f, "peer show --nid 7.7.7.7@tcp");
    assert_eq!(
        o.stderr,
        "show:\n    - peer:\n          errno: -2\n          descr: \"cannot get peer information: No such file or directory\"\n"
    );
    ok(
        &mut f,
        "peer del --prim_nid 192.168.1.20@tcp --nid 192.168.2.20@tcp",
    );
    assert_eq!(f.peers[0].nids, vec![nid("192.168.1.20@tcp")]);
    ok(&mut f, "peer del --prim_nid 192.168.1.20@tcp");
    assert_eq!(f.peers.len(), 1);
    let o = lnetctl(&mut f, "peer add --nid 1.2.3.4@tcp");
    assert_eq!(
        o.stderr,
        "peer:\n    - add:\n          errno: -1\n          descr: \"--prim_nid must be specified\"\n"
    );
    let o = lnetctl(&mut f, "peer add --prim_nid 1.2.3.4@tcp --nid 1.2.3@tcp");
    assert_eq!(o.rc, -1);
    assert!(o.stderr.contains("Unable to parse nidlist from: 1.2.3@tcp"));
    // A locked primary needs --force.
    ok(&mut f, "peer add --prim_nid 5.5.5.5@tcp --lock_prim");
    let o = lnetctl(&mut f, "peer del --prim_nid 5.5.5.5@tcp");
    assert_eq!(o.rc, -1);
    assert!(o
        .stderr
        .contains("del peer ni operation failed: Operation not permitted"));
    ok(&mut f, "peer del --prim_nid 5.5.5.5@tcp --force");
    // No peers: nothing printed.
    ok(&mut f, "peer del --prim_nid 10.0.0.30@o2ib");
    assert_eq!(ok(&mut f, "peer show -v 4"), "");
}

#[test]
fn peer_add_splits_long_nid_lists() {
    let mut f = Fake::up();
    let list: Vec<String> = (1..=40).map(|i| format!("10.1.0.{i}@tcp")).collect();
    ok(
        &mut f,
        &format!("peer add --prim_nid 10.1.1.1@tcp --nid {}", list.join(",")),
    );
    assert_eq!(f.log.iter().filter(|c| **c == Cmd::PeerAdd).count(), 2);
    assert_eq!(f.peers[0].nids.len(), 41);
    let v = yaml(&ok(&mut f, "peer show"));
    assert_eq!(v["peer"][0]["peer ni"].as_sequence().unwrap().len(), 41);
}

// ---------------------------------------------------------------------
// stats, global, recovery, ping

#[test]
fn stats_show_key_order_and_sources() {
    let mut f = Fake::up();
    let s = &mut f.stats;
    s.st_msgs_alloc = 1;
    s.st_msgs_max = 2;
    s.st_rst_alloc = 3;
    s.st_errors = 4;
    s.st_send_count = 5;
    s.st_resend_count = 6;
    s.st_response_timeout_count = 7;
    s.st_local_interrupt_count = 8;
    s.st_local_dropped_count = 9;
    s.st_local_aborted_count = 10;
    s.st_local_no_route_count = 11;
    s.st_local_timeout_count = 12;
    s.st_local_error_count = 13;
    s.st_remote_dropped_count = 14;
    s.st_remote_error_count = 15;
    s.st_remote_timeout_count = 16;
    s.st_network_timeout_count = 17;
    s.st_failed_resends = 18;
    s.st_successful_resends = 19;
    s.st_recv_count = 20;
    s.st_route_count = 21;
    s.st_drop_count = 22;
    s.st_send_length = 23;
    s.st_recv_length = 24;
    s.st_route_length = 25;
    s.st_drop_length = 1 << 40;
    // health.md §6.2, in this order, each from its own counter.
    let expect = "\
statistics:
    msgs_alloc: 1
    msgs_max: 2
    rst_alloc: 3
    errors: 4
    send_count: 5
    resend_count: 6
    response_timeout_count: 7
    local_interrupt_count: 8
    local_dropped_count: 9
    local_aborted_count: 10
    local_no_route_count: 11
    local_timeout_count: 12
    local_error_count: 13
    remote_dropped_count: 14
    remote_error_count: 15
    remote_timeout_count: 16
    network_timeout_count: 17
    failed_resends: 18
    successful_resends: 19
    recv_count: 20
    route_count: 21
    drop_count: 22
    send_length: 23
    recv_length: 24
    route_length: 25
    drop_length: 1099511627776
";
    assert_eq!(ok(&mut f, "stats show"), expect);
    f.fail.push((Cmd::GetStats, nix::errno::Errno::EFAULT));
    let o = lnetctl(&mut f, "stats show");
    assert_eq!(
        o.stderr,
        "show:\n    - statistics:\n          errno: -14\n          descr: \"cannot get lnet statistics: Bad address\"\n"
    );
}

#[test]
fn global_show_exact() {
    let mut f = Fake::up();
    ok(&mut f, "set numa_range 3");
    ok(&mut f, "set discovery 0");
    ok(&mut f, "set transaction_timeout 61");
    ok(&mut f, "set retry_count 4");
    ok(&mut f, "set max_interfaces 300");
    ok(&mut f, "set drop_asym_route 1");
    ok(&mut f, "set health_sensitivity 20");
    ok(&mut f, "set response_tracking 1");
    ok(&mut f, "set recovery_limit 60");
    ok(&mut f, "set max_recovery_ping_interval 100");
    let expect = "\
global:
    numa_range: 3
    max_interfaces: 300
    discovery: 0
    drop_asym_route: 1
    retry_count: 4
    transaction_timeout: 61
    health_sensitivity: 20
    recovery_interval: 1
    router_sensitivity: 100
    lnd_timeout: 12
    response_tracking: 1
    recovery_limit: 60
    max_recovery_ping_interval: 100
";
    assert_eq!(ok(&mut f, "global show"), expect);
    // Module parameters written: discovery inverted, numa_range by ioctl.
    assert_eq!(f.tun.peer_discovery_disabled, 1);
    assert_eq!(f.tun.numa_range, 3);
    assert!(f.log.contains(&Cmd::SetNumaRange));
    // global show and set work while LNet is down (sysfs, GET_GLOBALS,
    // SET_NUMA_RANGE).
    ok(&mut f, "lnet unconfigure");
    assert_eq!(ok(&mut f, "global show"), expect);
    ok(&mut f, "set numa_range 3");
}

/// lnet-rs difference: without `router_sensitivity_percentage` (lnet-rs has
/// no router), router_sensitivity is Lustre's fixed default, 100.
#[test]
fn lnet_rs_difference_router_sensitivity_without_router() {
    let mut f = Fake::up();
    assert!(ok(&mut f, "global show").contains("    router_sensitivity: 100\n"));
    ok(&mut f, "set router_sensitivity 100");
    let o = lnetctl(&mut f, "set router_sensitivity 50");
    assert_eq!(
        o.stderr,
        "add:\n    - router_sensitivity:\n          errno: -6\n          descr: \"cannot configure router health sensitivity: No such file or directory\"\n"
    );
    // With the parameter, it is read and written like the others.
    f.router_sensitivity = Some(100);
    ok(&mut f, "set router_sensitivity 50");
    assert!(ok(&mut f, "global show").contains("    router_sensitivity: 50\n"));
}

#[test]
fn set_errors_are_lustres() {
    let mut f = Fake::up();
    let o = lnetctl(&mut f, "set retry_count abc");
    assert_eq!(
        o.stderr,
        "parser:\n    - set:\n          errno: -1\n          descr: \"cannot parse retry_count value\"\n"
    );
    assert_eq!(o.exit_code(), 255);
    let o = lnetctl(&mut f, "set response_tracking 4");
    assert_eq!(
        o.stderr,
        "add:\n    - response_tracking:\n          errno: -1\n          descr: \"Valid values are: 0, 1, 2, or 3\"\n"
    );
    let o = lnetctl(&mut f, "set recovery_limit -1");
    assert!(o.stderr.contains("Must be greater than or equal to 0"));
    let o = lnetctl(&mut f, "set max_recovery_ping_interval 0");
    assert!(o
        .stderr
        .starts_with("add:\n    - max_recovery_ping_interval:\n"));
    // The kernel's setter refuses: write(2) fails, LUSTRE_CFG_RC_GENERIC_ERR.
    let o = lnetctl(&mut f, "set transaction_timeout 2");
    assert_eq!(
        o.stderr,
        "add:\n    - transaction_timeout:\n          errno: -5\n          descr: \"cannot configure transaction timeout: Invalid argument\"\n"
    );
    let o = lnetctl(&mut f, "set health_sensitivity 1001");
    assert_eq!(o.rc, cmd::RC_GENERIC_ERR);
    // Accepted and adjusted by the kernel, as Lustre's: < 16 becomes 4096.
    ok(&mut f, "set max_interfaces 8");
    assert_eq!(f.tun.interfaces_max, 4096);
    // strtol base 0.
    ok(&mut f, "set recovery_limit 0x10");
    assert_eq!(f.tun.recovery_limit, 16);
    f.fail.push((Cmd::SetNumaRange, nix::errno::Errno::EPERM));
    let o = lnetctl(&mut f, "set numa_range 2");
    assert_eq!(
        o.stderr,
        "add:\n    - numa_range:\n          errno: -1\n          descr: \"cannot configure numa_range to 2: Operation not permitted\"\n"
    );
}

#[test]
fn debug_recovery_pages_and_shapes() {
    let mut f = Fake::up();
    f.recovery[0] = (1..=5)
        .map(|i| nid(&format!("192.168.1.{i}@tcp")))
        .collect();
    let out = ok(&mut f, "debug recovery --local");
    assert_eq!(
        out,
        "Local NI recovery:\n    nid-0: 192.168.1.1@tcp\n    nid-1: 192.168.1.2@tcp\n    nid-2: 192.168.1.3@tcp\n    nid-3: 192.168.1.4@tcp\n    nid-4: 192.168.1.5@tcp\n"
    );
    // Page size 2: three calls.
    assert_eq!(
        f.log
            .iter()
            .filter(|c| **c == Cmd::GetRecoveryQueue)
            .count(),
        3
    );
    // Empty queue: nothing.
    assert_eq!(ok(&mut f, "debug recovery --peer"), "");
    f.recovery[1] = vec![nid("10.0.0.9@o2ib")];
    assert_eq!(
        ok(&mut f, "debug recovery --peer"),
        "Peer NI recovery:\n    nid-0: 10.0.0.9@o2ib\n"
    );
    // Neither flag: -EINVAL, silently.
    let o = lnetctl(&mut f, "debug recovery");
    assert_eq!((o.rc, o.stdout.as_str(), o.stderr.as_str()), (-22, "", ""));
}

#[test]
fn ping_pages_skips_loopback_and_reports_errors() {
    let mut f = Fake::up();
    let up = abi::PING_STATUS_UP;
    f.pings.push(PingReply {
        target: nid("192.168.1.20@tcp"),
        primary: nid("192.168.1.20@tcp"),
        mr: true,
        entries: vec![
            (Nid::LO, up),
            (nid("192.168.1.20@tcp"), up),
            (nid("192.168.2.20@tcp"), up),
            (nid("10.0.0.20@o2ib"), abi::PING_STATUS_DOWN),
        ],
    });
    let o = lnetctl(
        &mut f,
        "ping 192.168.1.20@tcp,192.168.9.9@tcp --timeout 3 --source 192.168.1.10@tcp",
    );
    // libyaml's default layout, as a Lustre node printed it in the lab.
    assert_eq!(
        o.stdout,
        "ping:\n- primary nid: 192.168.1.20@tcp\n  Multi-Rail: true\n  peer_ni:\n  - nid: 192.168.1.20@tcp\n  - nid: 192.168.2.20@tcp\n  - nid: 10.0.0.20@o2ib\n"
    );
    assert_eq!(
        o.stderr,
        "manage:\n    - ping:\n          errno: -113\n          descr: \"192.168.9.9@tcp: No route to host\"\n"
    );
    assert_ne!(o.exit_code(), 0);
    // Two pages of the first reply, one ping sent; then the failed one.
    assert_eq!(f.pings_sent, 2);
    assert_eq!(f.log.iter().filter(|c| **c == Cmd::Ping).count(), 3);
    assert_eq!(f.last_ping, Some((3000, nid("192.168.1.10@tcp"))));
    // Default timeout 1000 ms, source ANY.
    ok(&mut f, "ping 192.168.1.20@tcp");
    assert_eq!(f.last_ping, Some((1000, Nid::ANY)));
    let o = lnetctl(&mut f, "ping 1.2.3@tcp");
    assert!(o.stderr.contains("descr: \"1.2.3@tcp: cannot parse NID\""));
}

#[test]
fn discover_lists_the_peer_and_reports_errors() {
    let mut f = Fake::up();
    let up = abi::PING_STATUS_UP;
    f.pings.push(PingReply {
        target: nid("192.168.2.20@tcp1"),
        primary: nid("192.168.1.20@tcp"),
        mr: true,
        entries: vec![
            (nid("192.168.1.20@tcp"), up),
            (nid("192.168.2.20@tcp1"), up),
        ],
    });
    let o = lnetctl(&mut f, "discover 192.168.2.20@tcp1 192.168.9.9@tcp");
    assert_eq!(
        o.stdout,
        "discover:\n- primary nid: 192.168.1.20@tcp\n  Multi-Rail: true\n  peer_ni:\n  - nid: 192.168.1.20@tcp\n  - nid: 192.168.2.20@tcp1\n"
    );
    assert_eq!(
        o.stderr,
        "manage:\n    - discover:\n          errno: -113\n          descr: \"192.168.9.9@tcp: No route to host\"\n"
    );
    assert_ne!(o.exit_code(), 0);
    // One call each: a page holds both NIDs.
    assert_eq!(f.log.iter().filter(|c| **c == Cmd::Discover).count(), 2);
    // Lustre's fixed 1000 ms, source ANY.
    assert_eq!(f.last_ping, Some((1000, Nid::ANY)));
    let o = lnetctl(&mut f, "discover --force 1.2.3@tcp");
    assert!(o.stderr.contains("descr: \"1.2.3@tcp: cannot parse NID\""));
}

// ---------------------------------------------------------------------
// Error block

#[test]
fn error_block_shape() {
    let mut f = Fake::up();
    let o = lnetctl(&mut f, "net add --net tcp --if eth9");
    assert_eq!(o.rc, -19);
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr,
        "add:\n    - net:\n          errno: -19\n          descr: \"cannot add network: No such device\"\n"
    );
    // It is YAML: <cmd> -> [ { <op> -> { errno, descr } } ].
    let v = yaml(&o.stderr);
    assert_eq!(keys(&v), strs(&["add"]));
    assert_eq!(keys(&v["add"][0]), strs(&["net"]));
    assert_eq!(keys(&v["add"][0]["net"]), strs(&["errno", "descr"]));
}

#[test]
fn every_ioctl_carries_a_valid_header() {
    // The fake refuses a bad header with EINVAL, like the kernel; a full
    // session of commands must never hit that.
    let mut f = populated();
    f.recovery = [vec![nid("1.1.1.1@tcp")], vec![nid("2.2.2.2@tcp")]];
    for c in [
        "net show -v 4",
        "peer show -v 4",
        "stats show",
        "global show",
        "debug recovery --local",
        "debug recovery --peer",
        "net set --health 10 --all",
        "peer set --health 10 --all",
        "set numa_range 1",
        "export",
    ] {
        ok(&mut f, c);
    }
    let mut bad = abi::LnetIocStats::new();
    bad.st_hdr.ioc_len = 8;
    use crate::backend::{Backend, Request};
    assert_eq!(
        f.ioctl(Request::GetStats(&mut bad)),
        Err(nix::errno::Errno::EINVAL)
    );
}

// ---------------------------------------------------------------------
// Export and import

fn configured_a() -> Fake {
    let mut f = populated();
    for c in [
        "net add --net tcp1 --if eth0 --peer-timeout 90 --credits 512 --conns-per-peer 4",
        "peer add --prim_nid 192.168.1.50@tcp1 --nid 192.168.2.50@tcp1,10.0.0.50@o2ib",
        "set numa_range 5",
        "set discovery 0",
        "set drop_asym_route 1",
        "set transaction_timeout 100",
        "set retry_count 3",
        "set health_sensitivity 50",
        "set response_tracking 1",
        "set recovery_limit 30",
        "set max_recovery_ping_interval 600",
        "set max_interfaces 200",
    ] {
        ok(&mut f, c);
    }
    f
}

fn import(f: &mut Fake, mode: Mode, text: &str) -> Outcome {
    let mut r = cmd::Run::new(f);
    transfer::import_yaml(&mut r, mode, text);
    r.finish()
}

#[test]
fn export_sections_in_order() {
    let mut f = configured_a();
    let v = yaml(&ok(&mut f, "export"));
    assert_eq!(keys(&v), strs(&["net", "peer", "global"]));
    // Full export: net at -v 2, peers at -v 3.
    assert_eq!(keys(&v["net"][1]["local NI(s)"][0]), ni_keys(2));
    assert_eq!(
        keys(&v["peer"][0]),
        strs(&["primary nid", "Multi-Rail", "peer state", "peer ni"])
    );
    assert_eq!(
        keys(&v["global"]),
        strs(&[
            "numa_range",
            "max_interfaces",
            "discovery",
            "drop_asym_route",
            "retry_count",
            "transaction_timeout",
            "health_sensitivity",
            "recovery_interval",
            "router_sensitivity",
            "lnd_timeout",
            "response_tracking",
            "recovery_limit",
            "max_recovery_ping_interval"
        ])
    );
    // Backup: no loopback, no NIDs/status/statistics, peers' NIDs only.
    let b = yaml(&ok(&mut f, "export --backup"));
    assert_eq!(b["net"][0]["net type"], Value::from("tcp"));
    assert_eq!(
        keys(&b["net"][0]["local NI(s)"][0]),
        strs(&["interfaces", "tunables", "lnd tunables", "CPT"])
    );
    assert_eq!(
        keys(&b["peer"][0]),
        strs(&["primary nid", "Multi-Rail", "peer ni"])
    );
    assert_eq!(keys(&b["peer"][0]["peer ni"][0]), strs(&["nid"]));
}

#[test]
fn export_import_round_trip() {
    for backup in [true, false] {
        let mut a = configured_a();
        let exported = ok(&mut a, if backup { "export --backup" } else { "export" });
        let mut b = Fake::up();
        let o = import(&mut b, Mode::Add, &exported);
        assert_eq!((o.rc, o.stderr.as_str()), (0, ""), "backup={backup}");
        // Same nets, peers and globals.
        assert_eq!(ok(&mut b, "export --backup"), ok(&mut a, "export --backup"));
        assert_eq!(ok(&mut b, "export"), ok(&mut a, "export"));
        assert_eq!(b.tun, a.tun);
        let prims = |f: &Fake| {
            f.peers
                .iter()
                .map(|p| (p.prim, p.nids.clone(), p.mr))
                .collect::<Vec<_>>()
        };
        assert_eq!(prims(&b), prims(&a));
        let nis = |f: &Fake| {
            f.nis
                .iter()
                .map(|n| (n.nid, n.intf.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(nis(&b), nis(&a));
    }
}

#[test]
fn routes_and_routing_export_and_import() {
    let mut a = configured_a();
    ok(
        &mut a,
        "route add --net tcp5 --gateway 192.168.1.99@tcp --hop 2 --priority 3",
    );
    ok(&mut a, "set routing 1");
    ok(&mut a, "set small_buffers 4096");
    let full = yaml(&ok(&mut a, "export"));
    assert_eq!(
        keys(&full),
        strs(&["net", "route", "routing", "buffers", "peer", "global"])
    );
    assert_eq!(
        keys(&full["route"][0]),
        strs(&["net", "gateway", "hop", "priority", "state", "type"])
    );
    assert_eq!(full["route"][0]["hop"], Value::from(2));
    assert_eq!(full["buffers"]["small"], Value::from(4096));
    let backup = ok(&mut a, "export --backup");
    let b = yaml(&backup);
    assert_eq!(
        keys(&b["route"][0]),
        strs(&["net", "gateway", "hop", "priority"])
    );
    assert_eq!(b["routing"]["enable"], Value::from(1));
    for text in [backup.as_str(), &ok(&mut a, "export")] {
        let mut c = Fake::up();
        let o = import(&mut c, Mode::Add, text);
        assert_eq!((o.rc, o.stderr.as_str()), (0, ""));
        assert_eq!(ok(&mut c, "route show -v"), ok(&mut a, "route show -v"));
        assert_eq!(ok(&mut c, "routing show"), ok(&mut a, "routing show"));
    }
    // --show prints them, --del takes the routes away and stops routing.
    let o = import(&mut a, Mode::Show, &backup);
    let v = yaml(&o.stdout);
    assert_eq!(v["route"][0]["net"], Value::from("tcp5"));
    assert_eq!(v["routing"][1]["enable"], Value::from(1));
    let o = import(&mut a, Mode::Del, &backup);
    assert_eq!((o.rc, o.stderr.as_str()), (0, ""));
    assert!(a.routes.routes().is_empty());
    assert_eq!(a.routing.map(|r| r.0), Some(false));
    // A bad route is refused as route add refuses it.
    let o = import(
        &mut a,
        Mode::Add,
        "route:\n    - net: tcp6\n      gateway: 10.9.9.9@tcp9\n",
    );
    assert_ne!(o.rc, 0);
    assert!(o.stderr.contains("route"), "{}", o.stderr);
}

#[test]
fn export_to_file_and_import_from_file() {
    let dir = std::env::temp_dir().join(format!("lnetctl-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lnet.yaml");
    let path = file.to_str().unwrap();
    let mut a = configured_a();
    assert_eq!(ok(&mut a, &format!("export --backup {path}")), "");
    let mut b = Fake::up();
    assert_eq!(ok(&mut b, &format!("import {path}")), "");
    assert_eq!(
        ok(&mut b, "export --backup"),
        std::fs::read_to_string(&file).unwrap()
    );
    // import --del undoes it: nets and peers gone, three globals reset.
    ok(&mut b, &format!("import --del {path}"));
    assert_eq!(b.nis.len(), 1);
    assert!(b.peers.is_empty());
    assert_eq!(b.tun.numa_range, 0);
    assert_eq!(b.tun.interfaces_max, 4096);
    assert_eq!(b.tun.peer_discovery_disabled, 0);
    assert_eq!(b.tun.retry_count, 3, "others are kept");
    let o = lnetctl(
        &mut b,
        &format!("import {}", dir.join("missing.yaml").display()),
    );
    assert_eq!(o.rc, -2);
    assert!(
        o.stderr.starts_with("yaml:\n    - builder:\n"),
        "{}",
        o.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_show_and_exec() {
    let mut f = populated();
    let doc = "\
net:
    - net type: o2ib
peer:
    - primary nid: 10.0.0.30@o2ib
global:
    numa_range: 7
ping:
    nids: [192.168.1.20@tcp]
";
    let o = import(&mut f, Mode::Show, doc);
    assert_eq!(o.rc, 0, "{}", o.stderr);
    let v = yaml(&o.stdout);
    assert_eq!(keys(&v), strs(&["net", "peer", "global"]));
    assert_eq!(
        v["net"][0]["local NI(s)"][0]["nid"],
        Value::from("10.0.0.10@o2ib")
    );
    assert_eq!(v["peer"][0]["primary nid"], Value::from("10.0.0.30@o2ib"));
    assert_eq!(
        v["global"]["numa_range"],
        Value::from(0),
        "shows, does not set"
    );
    // --exec runs the ping items only.
    f.pings.push(PingReply {
        target: nid("192.168.1.20@tcp"),
        primary: nid("192.168.1.20@tcp"),
        mr: false,
        entries: vec![(nid("192.168.1.20@tcp"), abi::PING_STATUS_UP)],
    });
    let o = import(&mut f, Mode::Exec, doc);
    assert_eq!(o.rc, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout,
        "ping:\n    - primary nid: 192.168.1.20@tcp\n      Multi-Rail: false\n      peer_ni:\n        - nid: 192.168.1.20@tcp\n"
    );
    assert_eq!(f.tun.numa_range, 0);
}

#[test]
fn import_accepts_lustre_forms_and_rejects_the_unknown() {
    let mut f = Fake::up();
    // Lustre's own export bits: routing off, buffers, legacy max_intf,
    // top-level parameters, True/False Multi-Rail, quoted numbers.
    let doc = "\
net:
    - net type: tcp
      local NI(s):
        - nid: 192.168.1.10@tcp
          status: up
          interfaces:
              0: eth0
routing:
    - cpt[0]:
          tiny:
              npages: 0
    - enable: 0
buffers:
    tiny: 0
    small: 0
    large: 0
peer:
    - primary nid: 192.168.1.99@tcp
      Multi-Rail: False
      peer ni:
        - nid: 192.168.1.99@tcp
max_intf: 300
retry_count: \"1\"
numa:
    range: 2
";
    let o = import(&mut f, Mode::Add, doc);
    assert_eq!((o.rc, o.stderr.as_str()), (0, ""));
    assert_eq!(f.nis[1].nid, nid("192.168.1.10@tcp"));
    assert!(!f.peers[0].mr);
    assert_eq!(f.tun.interfaces_max, 300);
    assert_eq!(f.tun.retry_count, 1);
    assert_eq!(f.tun.numa_range, 2);

    let o = import(
        &mut f,
        Mode::Add,
        "bogus: 1\nroute:\n    - net: tcp5\n      gateway: 1.2.3.4@tcp\nglobal:\n    retry_count: many\n",
    );
    assert_eq!(
        o.stderr,
        "add:\n    - import:\n          errno: -22\n          descr: \"invalid key 'bogus'\"\n    - import:\n          errno: -22\n          descr: \"invalid value 'many' for key 'retry_count'\"\n"
    );
    // The route between them was added.
    assert_eq!(f.routes.routes().len(), 1);
    let o = import(&mut f, Mode::Add, "net: [unclosed\n");
    assert_eq!(o.rc, -22);
    assert!(o.stderr.starts_with("add:\n    - import:\n"));
}

#[test]
fn fake_backend_failure_injection_reaches_export() {
    let mut f = populated();
    f.fail.push((Cmd::GetPeer, nix::errno::Errno::ENOMEM));
    let o = lnetctl(&mut f, "export --backup");
    // The other sections are still written; the failure is reported.
    let v = yaml(&o.stdout);
    assert_eq!(keys(&v), strs(&["net", "global"]));
    assert_eq!(
        o.stderr,
        "show:\n    - peer:\n          errno: -12\n          descr: \"cannot get peer information: Cannot allocate memory\"\n"
    );
    assert_eq!(o.rc, -12);
    let _ = abi::LnetIocPeer::new();
}

#[test]
fn udsp_add_show_del() {
    let mut f = Fake::up();
    assert_eq!(ok(&mut f, "udsp show"), "");
    ok(&mut f, "udsp add --src tcp1 --priority 1");
    // One criterion without --priority: priority 0.
    ok(&mut f, "udsp add --dst 10.0.0.[2-9]@tcp");
    // A pair rule, inserted first.
    ok(&mut f, "udsp add --src *.*.*.*@tcp --dst o2ib[1-2] --idx 0");
    ok(&mut f, "udsp add -d tcp2 -r 10.0.0.[5-6]@tcp");
    assert_eq!(
        ok(&mut f, "udsp show"),
        // A leading `*` would be a YAML alias: quoted.
        "udsp:\n    - idx: 0\n      src: \"*.*.*.*@tcp\"\n      dst: o2ib[1-2]\n    - idx: 1\n      src: tcp1\n      action:\n          priority: 1\n    - idx: 2\n      dst: 10.0.0.[2-9]@tcp\n      action:\n          priority: 0\n    - idx: 3\n      dst: tcp2\n      rte: 10.0.0.[5-6]@tcp\n"
    );
    assert_eq!(
        ok(&mut f, "udsp show --idx 1"),
        "udsp:\n    - idx: 1\n      src: tcp1\n      action:\n          priority: 1\n"
    );
    // Same criteria: a new priority replaces the old, the same is refused.
    ok(&mut f, "udsp add --src tcp1 --priority 4");
    assert!(ok(&mut f, "udsp show --idx 1").contains("priority: 4"));
    let o = lnetctl(&mut f, "udsp add --src tcp1 --priority 4");
    assert_eq!(o.rc, -114, "{}", o.stderr);
    assert!(o.stderr.contains("a rule with these criteria exists"));
    ok(&mut f, "udsp del --idx 0");
    assert!(ok(&mut f, "udsp show --idx 0").contains("src: tcp1"));
    let o = lnetctl(&mut f, "udsp del --idx 9");
    assert_eq!(o.rc, -2);
    ok(&mut f, "udsp del --all");
    assert_eq!(ok(&mut f, "udsp show"), "");
    let o = lnetctl(&mut f, "udsp show --idx 0");
    assert_eq!(o.rc, -2);
}

#[test]
fn udsp_bad_arguments() {
    let mut f = Fake::up();
    for (args, descr) in [
        ("udsp add", "specify --src, --dst or --rte"),
        (
            "udsp add --src tcp --rte tcp1",
            "src and rte cannot be combined",
        ),
        (
            "udsp add --src tcp --dst tcp1 --rte tcp2",
            "The combination of src, dst and rte is not supported",
        ),
        ("udsp add --src nonsense", "bad network or NID descriptor"),
        ("udsp add --src 10.0.0@tcp", "bad network or NID descriptor"),
        ("udsp add --src tcp --priority -1", "bad priority"),
        ("udsp add --src tcp --priority x", "bad priority 'x'"),
        ("udsp add --src tcp --idx -2", "bad index"),
        ("udsp del", "specify --idx or --all"),
        ("udsp del --idx 0 --all", "cannot use --idx with --all"),
    ] {
        let o = lnetctl(&mut f, args);
        assert_eq!(o.rc, -22, "{args}");
        assert!(o.stderr.contains(descr), "{args}: {}", o.stderr);
    }
    // Nothing was added, and no ioctl was sent for the refusals.
    assert!(!f.log.contains(&Cmd::UdspAdd));
    assert!(f.udsp.is_empty());
    // A bulk with junk past its length is refused by the kernel's check.
    let mut u = abi::LnetIocUdsp::new();
    u.ud_bulk[10] = 1;
    use crate::backend::{Backend, Request};
    assert_eq!(
        f.ioctl(Request::UdspDel(&mut u)),
        Err(nix::errno::Errno::EINVAL)
    );
}

#[test]
fn udsp_export_import() {
    let mut f = Fake::up();
    ok(&mut f, "udsp add --src tcp1 --priority 1");
    ok(&mut f, "udsp add --src *.*.*.*@tcp --dst o2ib[1-2]");
    let mut r = cmd::Run::new(&mut f);
    let text = transfer::export_yaml(&mut r, false);
    assert!(r.errors.is_empty());
    let doc = yaml(&text);
    assert_eq!(doc["udsp"][0]["src"], Value::from("tcp1"));
    assert_eq!(doc["udsp"][0]["action"]["priority"], Value::from(1));
    assert_eq!(doc["udsp"][1]["dst"], Value::from("o2ib[1-2]"));
    // Into an empty LNet: the same rules, in the same order.
    let mut g = Fake::up();
    let mut r = cmd::Run::new(&mut g);
    transfer::import_yaml(&mut r, Mode::Add, &text);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(g.udsp, f.udsp);
    // Show by index, then delete without one: every rule goes.
    let mut r = cmd::Run::new(&mut g);
    transfer::import_yaml(&mut r, Mode::Show, "udsp:\n    - idx: 1\n");
    let shown = r.finish().stdout;
    assert!(
        shown.contains("dst: o2ib[1-2]") && !shown.contains("tcp1"),
        "{shown}"
    );
    let mut r = cmd::Run::new(&mut g);
    transfer::import_yaml(&mut r, Mode::Del, "udsp:\n    - src: tcp1\n");
    assert!(r.errors.is_empty());
    assert!(g.udsp.is_empty());
    // Items without an index are not added.
    let mut r = cmd::Run::new(&mut g);
    transfer::import_yaml(&mut r, Mode::Add, "udsp:\n    - src: tcp1\n");
    assert!(g.udsp.is_empty());
}

/// The /etc/lnet.conf lnet-rs-utils installs (lnet.service imports it):
/// as shipped, comments only, it imports as nothing; its example,
/// uncommented, starts a tcp NI on eth0.
#[test]
fn packaged_lnet_conf_imports() {
    let conf = include_str!("../../../packaging/lnet.conf");
    let mut f = Fake::up();
    let o = import(&mut f, Mode::Add, conf);
    assert_eq!((o.rc, o.stderr.as_str()), (0, ""));
    assert_eq!(f.nis.len(), 1, "only the loopback NI");

    let example: String = conf
        .lines()
        .skip_while(|l| *l != "# net:")
        .map(|l| format!("{}\n", l.strip_prefix("# ").unwrap_or("")))
        .collect();
    assert!(example.starts_with("net:\n"), "{example}");
    let o = import(&mut f, Mode::Add, &example);
    assert_eq!((o.rc, o.stderr.as_str()), (0, ""));
    assert_eq!(f.nis[1].nid, nid("192.168.1.10@tcp"));
}

#[test]
fn routing_show_set_and_buffers() {
    let mut f = Fake::up();
    // Never routed: no pools, nothing printed (Lustre's GET_BUF ENOENT).
    assert_eq!(ok(&mut f, "routing show"), "");
    ok(&mut f, "set routing 1");
    ok(&mut f, "set large_buffers 8");
    ok(&mut f, "set tiny_buffers 600");
    let want = "routing:
    - cpt[0]:
          tiny:
              npages: 0
              nbuffers: 600
              credits: 600
              mincredits: 600
          small:
              npages: 1
              nbuffers: 16384
              credits: 16384
              mincredits: 16384
          large:
              npages: 256
              nbuffers: 8
              credits: 8
              mincredits: 8
    - enable: 1
buffers:
    tiny: 600
    small: 16384
    large: 8
";
    assert_eq!(ok(&mut f, "routing show"), want);
    ok(&mut f, "set routing 0");
    let off = ok(&mut f, "routing show");
    assert!(off.contains("    - enable: 0\n"), "{off}");
    assert!(off.contains("    large: 0\n"), "{off}");

    let o = lnetctl(&mut f, "set routing 2");
    assert_ne!(o.rc, 0);
    assert!(
        o.stderr.contains("cannot parse routing value."),
        "{}",
        o.stderr
    );
    let o = lnetctl(&mut f, "set small_buffers -2");
    assert_eq!(o.rc, -3);
    assert!(
        o.stderr.contains("tiny, small and large must be >= 0"),
        "{}",
        o.stderr
    );
    let o = lnetctl(&mut f, "set large_buffers x");
    assert!(
        o.stderr.contains("cannot parse large_buffers value"),
        "{}",
        o.stderr
    );
    f.fail.push((Cmd::SetRouting, nix::errno::Errno::ENOMEM));
    let o = lnetctl(&mut f, "set routing 1");
    assert!(
        o.stderr.contains("- routing:") && o.stderr.contains("cannot enable routing"),
        "{}",
        o.stderr
    );
}
