//! `lnetctl set routing`, `set tiny_buffers|small_buffers|large_buffers`
//! and `routing show`, as Lustre's lnetctl runs them
//! (`lustre_lnet_config_routing`, `lustre_lnet_config_buffers`,
//! `lustre_lnet_show_routing`): its checks, its error blocks and cYAML's
//! layout of the pools.

use nix::errno::Errno;
use serde_yaml_ng::{Mapping, Value};

use crate::abi::{IocArg, LnetIocRouting, NRBPOOLS};
use crate::backend::Request;
use crate::cli::{self, SetCommand};
use crate::cmd::{neg, strerror, Run, RC_BAD_PARAM};
use crate::yaml::{self, YamlError};

/// `LUSTRE_CFG_RC_OUT_OF_RANGE_PARAM`.
const RC_OUT_OF_RANGE: i32 = -3;

/// The pools' names, in the kernel's order.
const POOLS: [&str; NRBPOOLS] = ["tiny", "small", "large"];

/// Runs the `set` sub-commands that are routing's; false for the others.
pub fn set(r: &mut Run, c: &SetCommand) -> bool {
    let (pool, v) = match c {
        SetCommand::Routing(v) => {
            set_routing(r, &v.value);
            return true;
        }
        SetCommand::TinyBuffers(v) => (0, v),
        SetCommand::SmallBuffers(v) => (1, v),
        SetCommand::LargeBuffers(v) => (2, v),
        _ => return false,
    };
    let Some(n) = cli::parse_long(&v.value) else {
        let descr = format!("cannot parse {}_buffers value", POOLS[pool]);
        r.fail(YamlError::new("parser", "set", RC_BAD_PARAM, descr));
        return true;
    };
    let mut counts = [-1i64; NRBPOOLS];
    counts[pool] = n;
    config_buffers(r, counts);
    true
}

/// `lustre_lnet_config_routing`.
fn set_routing(r: &mut Run, text: &str) {
    let v = match cli::parse_long(text) {
        Some(v @ (0 | 1)) => v,
        _ => {
            r.fail(YamlError::new(
                "parser",
                "set",
                RC_BAD_PARAM,
                "cannot parse routing value.\nmust be 0 for disable or 1 for enable",
            ));
            return;
        }
    };
    let mut a = LnetIocRouting::new();
    a.rtr_enable = v as u32;
    if let Err(e) = r.be.ioctl(Request::SetRouting(&mut a)) {
        let (cmd, verb) = if v == 1 {
            ("add", "enable")
        } else {
            ("del", "disable")
        };
        r.fail(YamlError::new(
            cmd,
            "routing",
            neg(e),
            format!("cannot {verb} routing {}", strerror(e)),
        ));
    }
}

/// `lustre_lnet_config_buffers`: -1 leaves a pool alone.
pub fn config_buffers(r: &mut Run, counts: [i64; NRBPOOLS]) -> bool {
    // Lustre's int arguments: the value as a C int.
    let counts = counts.map(|c| c as i32);
    if counts.iter().any(|&c| c < -1) {
        r.fail(YamlError::new(
            "add",
            "buf",
            RC_OUT_OF_RANGE,
            "tiny, small and large must be >= 0",
        ));
        return false;
    }
    let mut a = LnetIocRouting::new();
    a.rtr_buffers = counts.map(|c| c as u32);
    match r.be.ioctl(Request::SetBuffers(&mut a)) {
        Ok(()) => true,
        Err(e) => {
            r.fail(YamlError::new(
                "add",
                "buf",
                neg(e),
                format!("cannot configure buffers: {}", strerror(e)),
            ));
            false
        }
    }
}

/// The routing state and pools, None when the node never routed since
/// LNet came up (Lustre's GET_BUF finds no pools: `routing show` prints
/// nothing).
pub fn read(r: &mut Run) -> Result<Option<LnetIocRouting>, ()> {
    let mut a = LnetIocRouting::new();
    match r.be.ioctl(Request::GetRouting(&mut a)) {
        Ok(()) => Ok(Some(a)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => {
            r.fail(YamlError::new(
                "show",
                "routing",
                neg(e),
                format!("cannot get routing information: {}", strerror(e)),
            ));
            Err(())
        }
    }
}

fn num(v: i64) -> Value {
    Value::Number(v.into())
}

/// `routing show`'s tree: one `cpt[N]` item per CPU partition (lnet-rs
/// has one set of pools, shown as `cpt[0]`), then `enable`, and the
/// `buffers` totals that `import` reads back.
pub fn tree(a: &LnetIocRouting) -> Mapping {
    let mut cpt = Mapping::new();
    let mut totals = Mapping::new();
    for (name, p) in POOLS.iter().zip(a.rtr_pools.iter()) {
        let mut m = Mapping::new();
        m.insert("npages".into(), num(i64::from(p.rp_npages)));
        m.insert("nbuffers".into(), num(i64::from(p.rp_nbuffers)));
        m.insert("credits".into(), num(i64::from(p.rp_credits as i32)));
        m.insert("mincredits".into(), num(i64::from(p.rp_mincredits as i32)));
        cpt.insert((*name).into(), Value::Mapping(m));
        totals.insert((*name).into(), num(i64::from(p.rp_nbuffers)));
    }
    let mut item = Mapping::new();
    item.insert("cpt[0]".into(), Value::Mapping(cpt));
    let mut enable = Mapping::new();
    enable.insert("enable".into(), num(i64::from(a.rtr_enable)));
    let mut root = Mapping::new();
    root.insert(
        "routing".into(),
        Value::Sequence(vec![Value::Mapping(item), Value::Mapping(enable)]),
    );
    root.insert("buffers".into(), Value::Mapping(totals));
    root
}

/// `routing show`.
pub fn show(r: &mut Run) {
    if let Ok(Some(a)) = read(r) {
        r.out
            .push_str(&yaml::render_value(&Value::Mapping(tree(&a))));
    }
}
