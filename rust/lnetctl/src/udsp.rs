//! `lnetctl udsp add | del | show` (udsp.md §2, §3.1): rules are parsed
//! and marshalled by lnet-core, sent with LNET_IOC_UDSP_*, and shown in
//! Lustre's YAML.

use lnet_core::udsp::{self, Action, AddError, Rule};
use nix::errno::Errno;
use serde_yaml_ng::{Mapping, Value};

use crate::abi::{self, IocArg};
use crate::backend::Request;
use crate::cli::{self, UdspAddArgs, UdspDelArgs};
use crate::cmd::{neg, strerror, Run};
use crate::yaml::{self, YamlError};

fn fail(r: &mut Run, op: &str, errno: i32, descr: String) {
    r.fail(YamlError::new(op, "udsp", errno, descr));
}

/// A number option as Lustre reads it; `None` (and an error) if it is not
/// one.
fn number(r: &mut Run, op: &str, name: &str, text: Option<&str>) -> Option<Option<i64>> {
    match text {
        None => Some(None),
        Some(t) => match cli::parse_long(t) {
            Some(v) => Some(Some(v)),
            None => {
                fail(r, op, neg(Errno::EINVAL), format!("bad {name} '{t}'"));
                None
            }
        },
    }
}

/// `udsp add --src | --dst | --rte [--priority p] [--idx n]`.
pub fn add(r: &mut Run, a: &UdspAddArgs) {
    let Some(priority) = number(r, "add", "priority", a.priority.as_deref()) else {
        return;
    };
    let Some(idx) = number(r, "add", "index", a.idx.as_deref()) else {
        return;
    };
    let priority = match priority.map(u32::try_from) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(_)) => {
            return fail(r, "add", neg(Errno::EINVAL), String::from("bad priority"));
        }
    };
    let idx = match idx.map(i32::try_from) {
        None => -1,
        Some(Ok(i)) if i >= 0 => i,
        Some(_) => return fail(r, "add", neg(Errno::EINVAL), String::from("bad index")),
    };
    let rule = match udsp::rule_from_args(
        a.src.as_deref(),
        a.dst.as_deref(),
        a.rte.as_deref(),
        priority,
    ) {
        Ok(rule) => rule,
        Err(e) => {
            let descr = match e {
                AddError::NoCriteria => String::from("specify --src, --dst or --rte"),
                AddError::SrcAndRte => String::from("src and rte cannot be combined"),
                AddError::AllThree => {
                    String::from("The combination of src, dst and rte is not supported")
                }
                AddError::Descr(d) => format!("bad network or NID descriptor: {d}"),
            };
            return fail(r, "add", neg(Errno::EINVAL), descr);
        }
    };
    let mut u = abi::LnetIocUdsp::new();
    let Some(n) = udsp::encode_bulk(&rule, &mut u.ud_bulk) else {
        return fail(r, "add", neg(Errno::E2BIG), String::from("rule too large"));
    };
    u.ud_bulk_len = n as u32;
    u.ud_idx = idx as u32;
    (u.ud_action_type, u.ud_priority) = udsp::action_to_ioctl(rule.action);
    if let Err(e) = r.be.ioctl(Request::UdspAdd(&mut u)) {
        let descr = match e {
            Errno::EALREADY => String::from("a rule with these criteria exists"),
            _ => format!("cannot add udsp: {}", strerror(e)),
        };
        fail(r, "add", neg(e), descr);
    }
}

/// `udsp del --idx n | --all`.
pub fn del(r: &mut Run, a: &UdspDelArgs) {
    let Some(idx) = number(r, "del", "index", a.idx.as_deref()) else {
        return;
    };
    let idx = match (idx, a.all) {
        (Some(_), true) => {
            return fail(
                r,
                "del",
                neg(Errno::EINVAL),
                String::from("cannot use --idx with --all"),
            );
        }
        (None, false) => {
            return fail(
                r,
                "del",
                neg(Errno::EINVAL),
                String::from("specify --idx or --all"),
            );
        }
        (None, true) => -1,
        (Some(i), false) => match i32::try_from(i) {
            Ok(i) if i >= 0 => i,
            _ => return fail(r, "del", neg(Errno::EINVAL), String::from("bad index")),
        },
    };
    let mut u = abi::LnetIocUdsp::new();
    u.ud_idx = idx as u32;
    if let Err(e) = r.be.ioctl(Request::UdspDel(&mut u)) {
        fail(
            r,
            "del",
            neg(e),
            format!("cannot delete udsp: {}", strerror(e)),
        );
    }
}

/// Rule `idx` from the kernel.
fn get(r: &mut Run, idx: u32) -> Result<Rule, Errno> {
    let mut u = abi::LnetIocUdsp::new();
    u.ud_idx = idx;
    r.be.ioctl(Request::UdspGet(&mut u))?;
    let bulk = u
        .ud_bulk
        .get(..u.ud_bulk_len as usize)
        .ok_or(Errno::EPROTO)?;
    udsp::rule_from_ioctl(bulk, u.ud_action_type, u.ud_priority).map_err(|_| Errno::EPROTO)
}

/// One rule as `udsp show` lists it: absent criteria omitted, `action`
/// only for priorities.
pub fn rule_value(idx: u32, rule: &Rule) -> Value {
    let mut m = Mapping::new();
    m.insert(Value::from("idx"), Value::from(idx));
    for (key, d) in [("src", &rule.src), ("dst", &rule.dst), ("rte", &rule.rte)] {
        if d.is_present() {
            m.insert(Value::from(key), Value::from(d.to_string()));
        }
    }
    if let Action::Priority(p) = rule.action {
        let mut act = Mapping::new();
        act.insert(Value::from("priority"), Value::from(p));
        m.insert(Value::from("action"), Value::Mapping(act));
    }
    Value::Mapping(m)
}

/// Every rule, by index, until ENOENT.
pub fn collect(r: &mut Run) -> Result<Vec<Rule>, Errno> {
    let mut rules = Vec::new();
    loop {
        match get(r, rules.len() as u32) {
            Ok(rule) => rules.push(rule),
            Err(Errno::ENOENT) => return Ok(rules),
            Err(e) => return Err(e),
        }
    }
}

/// `udsp show [--idx n]`.
pub fn show(r: &mut Run, idx: Option<&str>) {
    let Some(idx) = number(r, "show", "index", idx) else {
        return;
    };
    let listed: Result<Vec<(u32, Rule)>, Errno> = match idx {
        Some(i) => match u32::try_from(i) {
            Ok(i) => get(r, i).map(|rule| vec![(i, rule)]),
            Err(_) => Err(Errno::EINVAL),
        },
        None => collect(r).map(|v| (0u32..).zip(v).collect()),
    };
    match listed {
        Ok(v) if v.is_empty() => {}
        Ok(v) => {
            let mut root = Mapping::new();
            root.insert(
                Value::from("udsp"),
                Value::Sequence(v.iter().map(|(i, rule)| rule_value(*i, rule)).collect()),
            );
            r.out.push_str(&yaml::render_value(&Value::Mapping(root)));
        }
        Err(e) => fail(
            r,
            "show",
            neg(e),
            format!("cannot show udsp: {}", strerror(e)),
        ),
    }
}
