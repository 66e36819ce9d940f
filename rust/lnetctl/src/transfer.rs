//! `export` and `import` (lnetctl.md §4).
//!
//! `export` prints, in Lustre's order, the nets (as `net show -v 2`; with
//! `--backup` the filtered `-v 1` form: no NIDs, status, statistics, dev cpt
//! or loopback), the routes (hop and priority; state and type unless
//! `--backup`), the routing state and buffers (as `routing show`; with
//! `--backup` only `enable` and the buffer counts), the peers (`peer show
//! -v 3`; `--backup`: NIDs only), the global values (`global:`, as `global
//! show`) and the UDSPs.
//!
//! `import` reads such a document (Lustre's or lnet-rs's) and adds, deletes,
//! shows or (`--exec`) pings what it describes. Keys that only describe
//! state (statistics, credits, status, ...) are ignored, so importing a
//! non-backup export works too.

use std::io::Read;
use std::path::Path;

use lnet_core::nid::{lnd, Net, Nid};
use nix::errno::Errno;
use serde::Serialize;
use serde_yaml_ng::{Mapping, Value};

use crate::abi;
use crate::cli;
use crate::cmd::{self, GlobalParam, NetSpec, Run};
use crate::show;
use crate::yaml::{self, YamlError};

/// What `import` does with the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Add,
    Del,
    Show,
    Exec,
}

impl Mode {
    /// The operation name of import's error blocks.
    fn op(self) -> &'static str {
        match self {
            Mode::Add => "add",
            Mode::Del => "del",
            Mode::Show => "show",
            Mode::Exec => "manage",
        }
    }
}

#[derive(Serialize)]
struct ExportDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    net: Option<Vec<show::NetEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer: Option<Vec<show::PeerEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    global: Option<show::Globals>,
    #[serde(skip_serializing_if = "Option::is_none")]
    udsp: Option<Vec<Value>>,
}

/// The export document. Sections that cannot be read are left out and
/// their errors recorded.
pub fn export_yaml(r: &mut Run, backup: bool) -> String {
    let net = match cmd::net_doc(r.be, None, if backup { 1 } else { 2 }, backup) {
        Ok(v) => Some(v).filter(|v| !v.is_empty()),
        Err(e) => {
            r.fail(e);
            None
        }
    };
    let peer = match cmd::peer_doc(r.be, None, if backup { 0 } else { 3 }, backup) {
        Ok(v) => Some(v).filter(|v| !v.is_empty()),
        Err(e) => {
            r.fail(e);
            None
        }
    };
    let route = match crate::route::collect(r.be) {
        // Lustre's netlink dump: hop and priority always, the state and
        // type only in a full export.
        Ok(v) => crate::route::doc(&v, true).map(|mut d| {
            if backup {
                strip_route_state(&mut d);
            }
            d
        }),
        Err(e) => {
            r.fail(YamlError::new(
                "show",
                "route",
                cmd::neg(e),
                format!("cannot get routes: {}", cmd::strerror(e)),
            ));
            None
        }
    };
    // Nothing when the node has no router buffer pools (Lustre's GET_BUF
    // finds none).
    let routing = match crate::routing::read(r) {
        Ok(Some(a)) => Some(routing_doc(&a, backup)),
        _ => None,
    };
    let global = match cmd::read_globals(r.be) {
        Ok(g) => Some(g),
        Err(e) => {
            r.fail(e);
            None
        }
    };
    let udsp = match crate::udsp::collect(r) {
        Ok(v) => Some(
            (0u32..)
                .zip(&v)
                .map(|(i, rule)| crate::udsp::rule_value(i, rule)),
        )
        .map(|it| it.collect::<Vec<_>>())
        .filter(|v| !v.is_empty()),
        Err(e) => {
            r.fail(YamlError::new(
                "show",
                "udsp",
                cmd::neg(e),
                format!("cannot show udsp: {}", cmd::strerror(e)),
            ));
            None
        }
    };
    // As Lustre's export: the sections it reads over netlink in libyaml's
    // layout, the others in cYAML's.
    let mut text = yaml::render_netlink(&ExportDoc {
        net,
        peer: None,
        global: None,
        udsp: None,
    });
    if let Some(d) = route {
        text.push_str(&yaml::render_netlink(&d));
    }
    if let Some(d) = routing {
        text.push_str(&yaml::render_value(&Value::Mapping(d)));
    }
    text.push_str(&yaml::render_netlink(&ExportDoc {
        net: None,
        peer,
        global: None,
        udsp: None,
    }));
    text.push_str(&yaml::render(&ExportDoc {
        net: None,
        peer: None,
        global,
        udsp,
    }));
    text
}

/// A `route:` document without each route's `state` and `type`.
fn strip_route_state(doc: &mut Value) {
    if let Some(Value::Sequence(items)) = doc.get_mut("route") {
        for item in items {
            if let Value::Mapping(m) = item {
                m.remove("state");
                m.remove("type");
            }
        }
    }
}

/// The `routing:` and `buffers:` sections (`lustre_lnet_show_routing`):
/// `routing show`'s tree, or with `backup` only `enable` and the counts.
fn routing_doc(a: &abi::LnetIocRouting, backup: bool) -> Mapping {
    let full = crate::routing::tree(a);
    if !backup {
        return full;
    }
    let mut enable = Mapping::new();
    enable.insert(
        "enable".into(),
        Value::Number(i64::from(a.rtr_enable).into()),
    );
    let mut root = Mapping::new();
    root.insert("routing".into(), Value::Mapping(enable));
    if let Some(b) = full.get("buffers") {
        root.insert("buffers".into(), b.clone());
    }
    root
}

/// `export [--backup] [FILE]`.
pub fn export_cmd(r: &mut Run, backup: bool, file: Option<&Path>) {
    let text = export_yaml(r, backup);
    match file {
        None => r.out.push_str(&text),
        Some(p) => {
            if let Err(e) = std::fs::write(p, text) {
                let errno = Errno::from_raw(e.raw_os_error().unwrap_or(nix::libc::EIO));
                r.fail(YamlError::new(
                    "export",
                    "file",
                    cmd::neg(errno),
                    format!("cannot write '{}': {}", p.display(), cmd::strerror(errno)),
                ));
            }
        }
    }
}

/// `import [--add|--del|--show|--exec] [FILE]` (standard input if no FILE).
pub fn import_cmd(r: &mut Run, mode: Mode, file: Option<&Path>) {
    let text = match file {
        Some(p) => std::fs::read_to_string(p).map_err(|e| (e, p.display().to_string())),
        None => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map(|_| s)
                .map_err(|e| (e, String::from("<stdin>")))
        }
    };
    match text {
        Ok(t) => import_yaml(r, mode, &t),
        Err((e, name)) => {
            let errno = Errno::from_raw(e.raw_os_error().unwrap_or(nix::libc::EIO));
            r.fail(YamlError::new(
                "yaml",
                "builder",
                cmd::neg(errno),
                format!("cannot read '{name}': {}", cmd::strerror(errno)),
            ));
        }
    }
}

/// What `import --show` and `--exec` print, gathered over the document.
#[derive(Default)]
struct Shown {
    net: Vec<show::NetEntry>,
    peer: Vec<show::PeerEntry>,
    global: Mapping,
    ping: Vec<show::PingEntry>,
    discover: Vec<show::PingEntry>,
    udsp: Vec<Value>,
    route: Vec<Value>,
    routing: Option<Mapping>,
}

impl Shown {
    fn render(self) -> String {
        let mut root = Mapping::new();
        let mut put = |k: &str, v: Result<Value, serde_yaml_ng::Error>| {
            if let Ok(v) = v {
                root.insert(Value::from(k), v);
            }
        };
        if !self.net.is_empty() {
            put("net", serde_yaml_ng::to_value(&self.net));
        }
        if !self.peer.is_empty() {
            put("peer", serde_yaml_ng::to_value(&self.peer));
        }
        if !self.global.is_empty() {
            put("global", Ok(Value::Mapping(self.global)));
        }
        if !self.ping.is_empty() {
            put("ping", serde_yaml_ng::to_value(&self.ping));
        }
        if !self.discover.is_empty() {
            put("discover", serde_yaml_ng::to_value(&self.discover));
        }
        if !self.udsp.is_empty() {
            put("udsp", Ok(Value::Sequence(self.udsp)));
        }
        if !self.route.is_empty() {
            put("route", Ok(Value::Sequence(self.route)));
        }
        for (k, v) in self.routing.unwrap_or_default() {
            put(&text_of(&k), Ok(v));
        }
        if root.is_empty() {
            String::new()
        } else {
            yaml::render_value(&Value::Mapping(root))
        }
    }
}

struct Importer<'r, 'b> {
    r: &'r mut Run<'b>,
    mode: Mode,
    shown: Shown,
}

/// Imports a YAML document.
pub fn import_yaml(r: &mut Run, mode: Mode, text: &str) {
    let doc: Value = match serde_yaml_ng::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            r.fail(YamlError::new(
                mode.op(),
                "import",
                cmd::neg(Errno::EINVAL),
                format!("cannot parse YAML: {e}"),
            ));
            return;
        }
    };
    let top = match doc {
        Value::Mapping(m) => m,
        Value::Null => return,
        _ => {
            r.fail(YamlError::new(
                mode.op(),
                "import",
                cmd::neg(Errno::EINVAL),
                "the document is not a mapping",
            ));
            return;
        }
    };
    let mut imp = Importer {
        r,
        mode,
        shown: Shown::default(),
    };
    for (k, v) in &top {
        let key = text_of(k);
        imp.section(&key, v);
    }
    let out = imp.shown.render();
    imp.r.out.push_str(&out);
}

/// A scalar as text (`None` for collections and null).
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(t) => scalar_text(&t.value),
        _ => None,
    }
}

fn text_of(v: &Value) -> String {
    scalar_text(v).unwrap_or_default()
}

/// A sequence's items (a lone mapping counts as one item).
fn items(v: &Value) -> Vec<&Value> {
    match v {
        Value::Sequence(s) => s.iter().collect(),
        Value::Null => Vec::new(),
        other => vec![other],
    }
}

fn get<'v>(m: &'v Value, key: &str) -> Option<&'v Value> {
    match m {
        Value::Mapping(map) => map.get(key),
        _ => None,
    }
}

impl Importer<'_, '_> {
    fn err(&mut self, errno: i32, descr: String) {
        self.r
            .fail(YamlError::new(self.mode.op(), "import", errno, descr));
    }

    fn section(&mut self, key: &str, v: &Value) {
        match key {
            "net" => items(v).into_iter().for_each(|n| self.net(n)),
            "peer" => items(v).into_iter().for_each(|p| self.peer(p)),
            "global" => {
                if let Value::Mapping(m) = v {
                    for (k, val) in m {
                        self.global(&text_of(k), val);
                    }
                } else if !v.is_null() {
                    self.err(
                        cmd::neg(Errno::EINVAL),
                        String::from("invalid 'global' block"),
                    );
                }
            }
            "numa" => match get(v, "range") {
                Some(val) => self.global("numa_range", val),
                None => self.err(
                    cmd::neg(Errno::EINVAL),
                    String::from("invalid 'numa' block"),
                ),
            },
            "ping" => {
                if self.mode == Mode::Exec {
                    self.ping(v);
                }
            }
            "discover" => {
                if self.mode == Mode::Exec {
                    self.discover(v);
                }
            }
            "route" => items(v).into_iter().for_each(|i| self.route(i)),
            "routing" => self.routing(v),
            "buffers" => self.buffers(v),
            "udsp" => items(v).into_iter().for_each(|u| self.udsp(u)),
            "ip2nets" => {
                if !is_empty(v) && self.mode != Mode::Exec {
                    self.err(
                        cmd::neg(Errno::EOPNOTSUPP),
                        format!("'{key}' is not supported by lnet-rs"),
                    );
                }
            }
            k if GlobalParam::from_key(k).is_some() => self.global(k, v),
            k => self.err(cmd::neg(Errno::EINVAL), format!("invalid key '{k}'")),
        }
    }

    /// One `route:` item (`handle_yaml_config_route`, `_del_route`,
    /// `_show_route`): its net, gateway, hop and priority.
    fn route(&mut self, item: &Value) {
        let field = |k: &str| get(item, k).and_then(scalar_text);
        match self.mode {
            Mode::Add => crate::route::add(
                self.r,
                &cli::RouteAddArgs {
                    net: field("net"),
                    gateway: field("gateway"),
                    hop: field("hop"),
                    priority: field("priority"),
                    sensitivity: field("health_sensitivity"),
                },
            ),
            Mode::Del => crate::route::del(
                self.r,
                &cli::RouteDelArgs {
                    net: field("net"),
                    gateway: field("gateway"),
                },
            ),
            Mode::Show => {
                let detail = field("detail").is_some_and(|d| d != "0");
                let routes = match crate::route::collect(self.r.be) {
                    Ok(v) => v,
                    Err(e) => {
                        return self.err(
                            cmd::neg(e),
                            format!("cannot get routes: {}", cmd::strerror(e)),
                        );
                    }
                };
                let net = field("net").and_then(|n| Net::parse(&n).ok().map(|n| n.as_u32()));
                let gw = field("gateway").and_then(|g| Nid::parse(&g).ok());
                let picked: Vec<_> = routes
                    .into_iter()
                    .filter(|a| net.is_none_or(|n| a.rt_net == n))
                    .filter(|a| gw.is_none_or(|g| a.rt_gateway.to_nid() == Ok(g)))
                    .collect();
                if let Some(Value::Sequence(v)) = crate::route::doc(&picked, detail)
                    .as_ref()
                    .and_then(|d| d.get("route"))
                {
                    self.shown.route.extend(v.iter().cloned());
                }
            }
            Mode::Exec => {}
        }
    }

    /// The `routing:` section: `enable` (a mapping, or an item of the
    /// sequence `routing show` prints) turns forwarding on or off;
    /// `import --del` turns it off (`handle_yaml_del_routing`).
    fn routing(&mut self, v: &Value) {
        let enable = items(v)
            .into_iter()
            .find_map(|i| get(i, "enable"))
            .and_then(scalar_text);
        match self.mode {
            Mode::Add => {
                if let Some(e) = enable {
                    crate::routing::set(
                        self.r,
                        &cli::SetCommand::Routing(cli::SetValue { value: e }),
                    );
                }
            }
            Mode::Del => {
                crate::routing::set(
                    self.r,
                    &cli::SetCommand::Routing(cli::SetValue {
                        value: String::from("0"),
                    }),
                );
            }
            Mode::Show => self.show_routing(),
            Mode::Exec => {}
        }
    }

    /// The `buffers:` section: the tiny, small and large counts given
    /// (`handle_yaml_config_buffers`); nothing to delete.
    fn buffers(&mut self, v: &Value) {
        match self.mode {
            Mode::Add => {
                let count = |k: &str| -> i64 {
                    get(v, k)
                        .and_then(scalar_text)
                        .and_then(|t| cli::parse_long(&t))
                        .unwrap_or(-1)
                };
                crate::routing::config_buffers(
                    self.r,
                    [count("tiny"), count("small"), count("large")],
                );
            }
            Mode::Show => self.show_routing(),
            Mode::Del | Mode::Exec => {}
        }
    }

    fn show_routing(&mut self) {
        if let Ok(Some(a)) = crate::routing::read(self.r) {
            self.shown.routing = Some(crate::routing::tree(&a));
        }
    }

    /// One `net:` item: `net type` and its `local NI(s)`.
    fn net(&mut self, item: &Value) {
        let name = get(item, "net type").map(text_of).unwrap_or_default();
        let net = match Net::parse(&name) {
            Ok(n) => n,
            Err(_) => {
                return self.err(cmd::RC_BAD_PARAM, format!("cannot parse net '{name}'"));
            }
        };
        // The loopback net always exists and cannot be added or deleted.
        if net.lnd() == lnd::LO {
            return;
        }
        let mut spec = NetSpec::new(net);
        let mut tunables_seen = false;
        for ni in items(get(item, "local NI(s)").unwrap_or(&Value::Null)) {
            if let Some(Value::Mapping(ifs)) = get(ni, "interfaces") {
                spec.intfs.extend(ifs.values().map(text_of));
            }
            if tunables_seen {
                continue;
            }
            if let Some(t) = get(ni, "tunables") {
                tunables_seen = true;
                let num = |k: &str| match get(t, k).and_then(long_of) {
                    Some(v) if v >= 0 => v as i32 as u32,
                    _ => abi::TUNABLE_DEFAULT,
                };
                spec.peer_timeout = num("peer_timeout");
                spec.peer_credits = num("peer_credits");
                spec.peer_buffer_credits = num("peer_buffer_credits");
                spec.credits = num("credits");
            }
            if let Some(v) = get(ni, "lnd tunables")
                .and_then(|t| get(t, "conns_per_peer"))
                .and_then(long_of)
            {
                spec.conns_per_peer = v as i32 as u32;
            }
        }
        match self.mode {
            Mode::Add => {
                cmd::net_add_spec(self.r, &spec);
            }
            Mode::Del => {
                cmd::net_del_spec(self.r, net, &spec.intfs);
            }
            Mode::Show => match cmd::net_doc(self.r.be, Some(net), 0, false) {
                Ok(v) => self.shown.net.extend(v),
                Err(e) => self.r.fail(e),
            },
            Mode::Exec => {}
        }
    }

    /// One `peer:` item: `primary nid`, `Multi-Rail` and `peer ni`.
    fn peer(&mut self, item: &Value) {
        let prim_text = get(item, "primary nid").map(text_of).unwrap_or_default();
        let Ok(prim) = Nid::parse(&prim_text) else {
            return self.err(
                cmd::RC_BAD_PARAM,
                format!("badly formatted primary NID: {prim_text}"),
            );
        };
        let mr = match get(item, "Multi-Rail") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(v) => !text_of(v).eq_ignore_ascii_case("false"),
        };
        let mut nids = Vec::new();
        for ni in items(get(item, "peer ni").unwrap_or(&Value::Null)) {
            let t = get(ni, "nid").map(text_of).unwrap_or_default();
            match Nid::parse(&t) {
                Ok(n) if n == prim => {}
                Ok(n) => nids.push(n),
                Err(_) => {
                    return self.err(
                        cmd::RC_BAD_PARAM,
                        format!("Unable to parse nidlist from: {t}"),
                    );
                }
            }
        }
        match self.mode {
            Mode::Add => {
                let flags = if mr { 0 } else { abi::PEER_NON_MR };
                cmd::peer_modify_nids(self.r, true, prim, &nids, flags);
            }
            // The whole peer goes, whatever NIs the file lists.
            Mode::Del => {
                cmd::peer_modify_nids(self.r, false, prim, &[], 0);
            }
            Mode::Show => match cmd::peer_doc(self.r.be, Some(prim), 0, false) {
                Ok(v) => self.shown.peer.extend(v),
                Err(e) => self.r.fail(e),
            },
            Mode::Exec => {}
        }
    }

    /// One `udsp:` item (udsp.md §3.3). Adding needs its `idx` (items
    /// without one are skipped, as Lustre does); deleting without one
    /// deletes every rule. Unlike Lustre's importer, an item without a
    /// priority does not inherit the previous item's.
    fn udsp(&mut self, item: &Value) {
        let idx = get(item, "idx").and_then(long_of);
        let text = |k: &str| get(item, k).map(text_of);
        let priority = get(item, "priority")
            .or_else(|| get(item, "action").and_then(|a| get(a, "priority")))
            .and_then(long_of);
        match self.mode {
            Mode::Add => {
                let Some(idx) = idx else {
                    return;
                };
                let a = cli::UdspAddArgs {
                    src: text("src"),
                    dst: text("dst"),
                    rte: text("rte"),
                    priority: priority.map(|p| p.to_string()),
                    idx: Some(idx.to_string()),
                };
                crate::udsp::add(self.r, &a);
            }
            Mode::Del => {
                let a = cli::UdspDelArgs {
                    idx: idx.map(|i| i.to_string()),
                    all: idx.is_none(),
                };
                crate::udsp::del(self.r, &a);
            }
            Mode::Show => {
                let rules = match idx.map(u32::try_from) {
                    Some(Ok(i)) => crate::udsp::collect(self.r)
                        .map(|v| v.get(i as usize).map(|r| vec![(i, *r)]).unwrap_or_default()),
                    Some(Err(_)) => Ok(Vec::new()),
                    None => crate::udsp::collect(self.r).map(|v| (0u32..).zip(v).collect()),
                };
                match rules {
                    Ok(v) => self
                        .shown
                        .udsp
                        .extend(v.iter().map(|(i, rule)| crate::udsp::rule_value(*i, rule))),
                    Err(e) => self.err(
                        cmd::neg(e),
                        format!("cannot show udsp: {}", cmd::strerror(e)),
                    ),
                }
            }
            Mode::Exec => {}
        }
    }

    /// A global value (`global:` entry or a top-level parameter key).
    fn global(&mut self, key: &str, v: &Value) {
        let Some(p) = GlobalParam::from_key(key) else {
            return self.err(cmd::neg(Errno::EINVAL), format!("invalid key '{key}'"));
        };
        let value = match v {
            Value::Null => {
                return self.err(
                    cmd::neg(Errno::EINVAL),
                    format!("no value specified for key '{key}'"),
                );
            }
            other => match long_of(other) {
                Some(x) => x,
                None => {
                    return self.err(
                        cmd::neg(Errno::EINVAL),
                        format!("invalid value '{}' for key '{key}'", text_of(other)),
                    );
                }
            },
        };
        match self.mode {
            Mode::Add => {
                cmd::set_global(self.r, p, value);
            }
            // Lustre resets these three and leaves the others.
            Mode::Del => {
                let reset = match p {
                    GlobalParam::NumaRange => Some(0),
                    GlobalParam::MaxInterfaces => {
                        Some(i64::from(lnet_core::params::INTERFACES_MAX_DEFAULT))
                    }
                    GlobalParam::Discovery => Some(1),
                    _ => None,
                };
                if let Some(x) = reset {
                    cmd::set_global(self.r, p, x);
                }
            }
            Mode::Show => {
                let mut ioc = None;
                match cmd::read_global(self.r.be, p, &mut ioc) {
                    Ok(x) => {
                        self.shown
                            .global
                            .insert(Value::from(p.key()), Value::from(x));
                    }
                    Err(e) => self.r.fail(e),
                }
            }
            Mode::Exec => {}
        }
    }

    /// `ping:` (with --exec): Lustre's request form `{nids: [...], timeout:
    /// ms, source: nid}`, or items with `primary nid` (and `timeout`).
    fn ping(&mut self, v: &Value) {
        let mut targets: Vec<(String, u32, Option<String>)> = Vec::new();
        let timeout_of = |m: &Value| {
            get(m, "timeout")
                .and_then(long_of)
                .map(|t| t.clamp(0, i64::from(u32::MAX)) as u32)
                .unwrap_or(1000)
        };
        for it in items(v) {
            let timeout = timeout_of(it);
            let source = get(it, "source").map(text_of);
            if let Some(n) = get(it, "nids") {
                for t in items(n) {
                    for s in cmd::split_list(&text_of(t)) {
                        targets.push((s.to_string(), timeout, source.clone()));
                    }
                }
            }
            if let Some(n) = get(it, "primary nid") {
                targets.push((text_of(n), timeout, source.clone()));
            }
        }
        for (t, timeout, source) in targets {
            let (Ok(target), Ok(src)) = (
                Nid::parse(&t),
                source.as_deref().map(Nid::parse).transpose(),
            ) else {
                self.r.fail(YamlError::new(
                    "manage",
                    "ping",
                    cmd::neg(Errno::EINVAL),
                    format!("{t}: cannot parse NID"),
                ));
                continue;
            };
            match cmd::ping_one(self.r.be, target, src, timeout) {
                Ok(e) => self.shown.ping.push(e),
                Err(e) => self.r.fail(YamlError::new(
                    "manage",
                    "ping",
                    cmd::neg(e),
                    format!("{t}: {}", cmd::strerror(e)),
                )),
            }
        }
    }
}

impl Importer<'_, '_> {
    /// `discover` items (`handle_yaml_discover`): each `primary nid`,
    /// with `force`.
    fn discover(&mut self, v: &Value) {
        for it in items(v) {
            let Some(t) = get(it, "primary nid").map(text_of) else {
                continue;
            };
            let force = get(it, "force").and_then(long_of).unwrap_or(0) != 0;
            let result = Nid::parse(&t)
                .map_err(|_| (Errno::EINVAL, format!("{t}: cannot parse NID")))
                .and_then(|n| {
                    cmd::discover_one(self.r.be, n, force)
                        .map_err(|e| (e, format!("{t}: {}", cmd::strerror(e))))
                });
            match result {
                Ok(e) => self.shown.discover.push(e),
                Err((e, descr)) => {
                    self.r
                        .fail(YamlError::new("manage", "discover", cmd::neg(e), descr))
                }
            }
        }
    }
}

/// A number in an imported document (numbers, or text `parse_long` takes).
fn long_of(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => cli::parse_long(s),
        Value::Tagged(t) => long_of(&t.value),
        _ => None,
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Sequence(s) => s.is_empty(),
        Value::Mapping(m) => m.is_empty(),
        _ => false,
    }
}
