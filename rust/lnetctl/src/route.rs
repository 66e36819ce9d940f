//! `lnetctl route add | del | show`, as Lustre's lnetctl runs them: the
//! gateway list expands as lnet-core's routes_param reads `--gateway`,
//! one request per gateway; errors carry the kernel's messages for a
//! route add (lnet-core route.rs), and `show` prints cYAML's layout.

use lnet_core::nid::{Net, Nid};
use lnet_core::route::{hops_shown, RouteError, UNDEFINED_HOPS};
use lnet_core::routes_param::for_each_gateway;
use nix::errno::Errno;
use serde_yaml_ng::{Mapping, Value};

use crate::abi::{self, IocArg, LnetIocNid, LnetIocRoute};
use crate::backend::Request;
use crate::cli::{self, RouteAddArgs, RouteDelArgs, RouteShowArgs};
use crate::cmd::{neg, strerror, Run, RC_BAD_PARAM, RC_MISSING_PARAM};
use crate::yaml::{self, YamlError};

/// `LUSTRE_CFG_RC_OUT_OF_RANGE_PARAM`.
const RC_OUT_OF_RANGE: i32 = -3;

fn fail(r: &mut Run, op: &str, errno: i32, descr: impl Into<String>) {
    r.fail(YamlError::new(op, "route", errno, descr));
}

/// A number option as Lustre's `parse_long` reads it.
fn number(r: &mut Run, op: &str, name: &str, text: Option<&str>) -> Option<Option<i64>> {
    match text {
        None => Some(None),
        Some(t) => match cli::parse_long(t) {
            Some(v) => Some(Some(v)),
            None => {
                fail(r, op, RC_BAD_PARAM, format!("bad {name} value '{t}'"));
                None
            }
        },
    }
}

fn net_arg(r: &mut Run, op: &str, net: Option<&str>) -> Option<Net> {
    let Some(s) = net else {
        fail(
            r,
            op,
            RC_MISSING_PARAM,
            "missing mandatory parameter: 'net'",
        );
        return None;
    };
    match Net::parse(s) {
        Ok(n) if n != Net::ANY => Some(n),
        _ => {
            fail(r, op, RC_BAD_PARAM, format!("cannot parse remote net {s}"));
            None
        }
    }
}

fn gateways(r: &mut Run, op: &str, list: Option<&str>) -> Option<Vec<Nid>> {
    let Some(s) = list else {
        fail(
            r,
            op,
            RC_MISSING_PARAM,
            "missing mandatory parameter: 'gateway'",
        );
        return None;
    };
    let mut out = Vec::new();
    match for_each_gateway(s.as_bytes(), |n| out.push(n)) {
        Ok(_) => Some(out),
        Err(e) => {
            fail(r, op, e.errno(), e.message());
            None
        }
    }
}

/// The words a failed route add is reported with, from its errno.
fn add_error(e: Errno) -> &'static str {
    let kind = match e {
        Errno::EINVAL => RouteError::Invalid,
        Errno::EHOSTUNREACH => RouteError::Unreachable,
        Errno::EEXIST => RouteError::Exists,
        _ => RouteError::NoMem,
    };
    kind.add_message()
}

/// `route add --net N --gateway G[,G...] [--hop H] [--priority P]
/// [--health_sensitivity S]`.
pub fn add(r: &mut Run, a: &RouteAddArgs) {
    let Some(net) = net_arg(r, "add", a.net.as_deref()) else {
        return;
    };
    let Some(gws) = gateways(r, "add", a.gateway.as_deref()) else {
        return;
    };
    let Some(hop) = number(r, "add", "hop", a.hop.as_deref()) else {
        return;
    };
    let Some(prio) = number(r, "add", "priority", a.priority.as_deref()) else {
        return;
    };
    let Some(sens) = number(r, "add", "health_sensitivity", a.sensitivity.as_deref()) else {
        return;
    };
    let hops = match hop {
        None | Some(-1) => UNDEFINED_HOPS,
        Some(h @ 1..=255) => h as u32,
        Some(h) => {
            let msg = format!("invalid hop count {h}, must be between 1 and 255");
            fail(r, "add", RC_OUT_OF_RANGE, msg);
            return;
        }
    };
    let priority = match prio {
        None => 0,
        Some(p) => match u32::try_from(p) {
            Ok(p) => p,
            Err(_) => {
                let msg = format!("invalid priority {p}, must be greater than 0");
                fail(r, "add", RC_OUT_OF_RANGE, msg);
                return;
            }
        },
    };
    // Accepted and checked as Lustre does, but kept by no route: the
    // kernel has no per-route sensitivity (lnet-core route.rs).
    if let Some(s) = sens {
        if !(0..=1000).contains(&s) {
            let msg = format!("invalid health sensitivity {s}");
            fail(r, "add", RC_OUT_OF_RANGE, msg);
            return;
        }
    }
    for gw in gws {
        let mut arg = LnetIocRoute::new();
        arg.rt_net = net.as_u32();
        arg.rt_gateway = LnetIocNid::from_nid(&gw);
        arg.rt_hops = hops;
        arg.rt_priority = priority;
        if let Err(e) = r.be.ioctl(Request::RouteAdd(&mut arg)) {
            fail(r, "add", neg(e), add_error(e));
            return;
        }
    }
}

/// `route del --net N --gateway G[,G...]`.
pub fn del(r: &mut Run, a: &RouteDelArgs) {
    let Some(net) = net_arg(r, "del", a.net.as_deref()) else {
        return;
    };
    let Some(gws) = gateways(r, "del", a.gateway.as_deref()) else {
        return;
    };
    for gw in gws {
        let mut arg = LnetIocRoute::new();
        arg.rt_net = net.as_u32();
        arg.rt_gateway = LnetIocNid::from_nid(&gw);
        if let Err(e) = r.be.ioctl(Request::RouteDel(&mut arg)) {
            let msg = format!("route operation failed: {}", strerror(e));
            fail(r, "del", neg(e), msg);
            return;
        }
    }
}

/// Every route, in the kernel's order.
pub fn collect(be: &mut dyn crate::backend::Backend) -> Result<Vec<LnetIocRoute>, Errno> {
    let mut out = Vec::new();
    loop {
        let mut arg = LnetIocRoute::new();
        arg.rt_idx = out.len() as u32;
        match be.ioctl(Request::GetRoute(&mut arg)) {
            Ok(()) => out.push(arg),
            Err(Errno::ENOENT) => return Ok(out),
            Err(e) => return Err(e),
        }
    }
}

/// The `route:` document of `routes` (with `detail`: hop, priority,
/// state and type), or `None` when there is none to show.
pub fn doc(routes: &[LnetIocRoute], detail: bool) -> Option<Value> {
    if routes.is_empty() {
        return None;
    }
    let items = routes
        .iter()
        .map(|a| {
            let mut m = Mapping::new();
            let net = Net::from_u32(a.rt_net).to_string();
            m.insert("net".into(), net.into());
            m.insert("gateway".into(), a.rt_gateway.text().into());
            if detail {
                m.insert("hop".into(), hops_shown(a.rt_hops).into());
                m.insert("priority".into(), a.rt_priority.into());
                let up = a.rt_flags & abi::ROUTE_ALIVE != 0;
                m.insert("state".into(), if up { "up" } else { "down" }.into());
                let multi = a.rt_flags & abi::ROUTE_MULTI_HOP != 0;
                let kind = if multi { "multi-hop" } else { "single-hop" };
                m.insert("type".into(), kind.into());
            }
            Value::Mapping(m)
        })
        .collect();
    let mut root = Mapping::new();
    root.insert("route".into(), Value::Sequence(items));
    Some(Value::Mapping(root))
}

/// Whether a `show` filter passes: an unset one passes everything.
fn passes<T>(filter: Option<T>, test: impl FnOnce(T) -> bool) -> bool {
    match filter {
        None => true,
        Some(v) => test(v),
    }
}

/// `route show [--net N] [--gateway G] [--hop H] [--priority P] [-v]`.
pub fn show(r: &mut Run, a: &RouteShowArgs) {
    let net = match a.net.as_deref() {
        None => None,
        Some(s) => match Net::parse(s) {
            Ok(n) => Some(n),
            Err(_) => {
                fail(r, "show", RC_BAD_PARAM, format!("cannot parse net '{s}'"));
                return;
            }
        },
    };
    let gw = match a.gateway.as_deref() {
        None => None,
        Some(s) => match Nid::parse(s) {
            Ok(n) => Some(n),
            Err(_) => {
                fail(
                    r,
                    "show",
                    RC_BAD_PARAM,
                    format!("cannot parse gateway NID '{s}'"),
                );
                return;
            }
        },
    };
    let Some(hop) = number(r, "show", "hop", a.hop.as_deref()) else {
        return;
    };
    let Some(prio) = number(r, "show", "priority", a.priority.as_deref()) else {
        return;
    };
    if let Some(h) = hop {
        if h != -1 && !(1..=255).contains(&h) {
            let msg = format!("invalid hop count {h}, must be between 0 and 256");
            fail(r, "show", RC_OUT_OF_RANGE, msg);
            return;
        }
    }
    let all = match collect(r.be) {
        Ok(v) => v,
        Err(e) => {
            fail(
                r,
                "show",
                neg(e),
                format!("cannot get routes: {}", strerror(e)),
            );
            return;
        }
    };
    let shown: Vec<LnetIocRoute> = all
        .into_iter()
        .filter(|x| passes(net, |n| n.as_u32() == x.rt_net))
        .filter(|x| passes(gw, |g| x.rt_gateway.to_nid() == Ok(g)))
        .filter(|x| passes(hop, |h| hops_shown(x.rt_hops) == h))
        .filter(|x| passes(prio, |p| i64::from(x.rt_priority) == p))
        .collect();
    if let Some(d) = doc(&shown, cli::verbosity(&a.verbose) > 0) {
        r.out.push_str(&yaml::render_value(&d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::fake::Fake;
    use clap::Parser;

    fn run(f: &mut Fake, args: &[&str]) -> crate::cmd::Outcome {
        let mut v = vec!["lnetctl"];
        v.extend_from_slice(args);
        let cli = Cli::try_parse_from(v).unwrap();
        let _: &Command = &cli.command;
        crate::cmd::run(&cli.command, f)
    }

    fn fake() -> Fake {
        let mut f = Fake::new();
        let o = run(&mut f, &["lnet", "configure"]);
        assert_eq!(o.rc, 0, "{o:?}");
        let o = run(&mut f, &["net", "add", "--net", "tcp", "--if", "eth0"]);
        assert_eq!(o.rc, 0, "{o:?}");
        f
    }

    #[test]
    fn add_show_del() {
        let mut f = fake();
        let o = run(
            &mut f,
            &[
                "route",
                "add",
                "--net",
                "tcp1",
                "--gateway",
                "10.0.0.[2-3]@tcp",
                "--hop",
                "2",
            ],
        );
        assert_eq!(o.rc, 0, "{o:?}");
        let o = run(&mut f, &["route", "show"]);
        assert_eq!(
            o.stdout,
            "route:\n    - net: tcp1\n      gateway: 10.0.0.2@tcp\n    - net: tcp1\n      gateway: 10.0.0.3@tcp\n"
        );
        let o = run(
            &mut f,
            &["route", "show", "-v", "--gateway", "10.0.0.2@tcp"],
        );
        assert_eq!(
            o.stdout,
            "route:\n    - net: tcp1\n      gateway: 10.0.0.2@tcp\n      hop: 2\n      priority: 0\n      state: up\n      type: multi-hop\n"
        );
        let o = run(
            &mut f,
            &["route", "del", "--net", "tcp1", "--gateway", "10.0.0.2@tcp"],
        );
        assert_eq!(o.rc, 0, "{o:?}");
        let o = run(&mut f, &["route", "show", "--priority", "0"]);
        assert_eq!(
            o.stdout,
            "route:\n    - net: tcp1\n      gateway: 10.0.0.3@tcp\n"
        );
        let o = run(
            &mut f,
            &["route", "del", "--net", "tcp1", "--gateway", "10.0.0.3@tcp"],
        );
        assert_eq!(o.rc, 0, "{o:?}");
        let o = run(&mut f, &["route", "show"]);
        assert_eq!(o.stdout, "");
        let o = run(
            &mut f,
            &["route", "del", "--net", "tcp1", "--gateway", "10.0.0.3@tcp"],
        );
        assert_eq!(o.rc, -2, "{o:?}");
    }

    #[test]
    fn bad_routes_carry_the_kernels_errno() {
        let mut f = fake();
        let cases: [(&[&str], i32, &str); 4] = [
            (
                &["--net", "tcp", "--gateway", "10.0.0.2@tcp2"],
                -17,
                "Route already exists",
            ),
            (
                &["--net", "tcp1", "--gateway", "10.0.0.2@tcp2"],
                -113,
                "No interface",
            ),
            (
                &["--net", "tcp1", "--gateway", "10.0.0.2@tcp1"],
                -22,
                "invalid settings",
            ),
            (
                &["--net", "tcp1", "--gateway", "10.0.0.2@tcp", "--hop", "256"],
                -3,
                "hop count",
            ),
        ];
        for (args, rc, words) in cases {
            let mut v = vec!["route", "add"];
            v.extend_from_slice(args);
            let o = run(&mut f, &v);
            assert_eq!(o.rc, rc, "{args:?}: {o:?}");
            assert!(o.stderr.contains(words), "{args:?}: {}", o.stderr);
            assert!(o.stderr.starts_with("add:\n"), "{}", o.stderr);
        }
        // The same gateway twice: -EEXIST.
        let ok = ["route", "add", "--net", "tcp1", "--gateway", "10.0.0.2@tcp"];
        assert_eq!(run(&mut f, &ok).rc, 0);
        assert_eq!(run(&mut f, &ok).rc, -17);
        let o = run(&mut f, &["route", "add", "--net", "tcp1"]);
        assert_eq!(o.rc, RC_MISSING_PARAM);
    }
}
