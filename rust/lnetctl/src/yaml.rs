//! YAML output in the layout Lustre's lnetctl prints, and its error block.
//!
//! Output is built as ordered serde structures, turned into a
//! `serde_yaml_ng::Value` tree (whose mappings keep insertion order), and
//! printed here: four spaces per level, and a sequence item's `- ` placed
//! inside its parent's indentation with the item's other keys two columns
//! further in (cYAML's `print_object`/`print_array`), e.g.
//!
//! ```text
//! net:
//!     - net type: tcp
//!       local NI(s):
//!         - nid: 192.168.1.2@tcp
//!           status: up
//!           interfaces:
//!               0: eth0
//! ```
//!
//! What Lustre's lnetctl reads over netlink (`net show`, `peer show`, and
//! those sections of `export`) it prints through libyaml instead, in
//! another layout, which [`render_netlink`] follows: six columns per level,
//! a sequence's dashes in its key's column, and an item's keys six columns
//! right of its dash:
//!
//! ```text
//! net:
//! -     net type: tcp
//!       local NI(s):
//!       -     nid: 192.168.1.2@tcp
//!             status: up
//!             interfaces:
//!                   0: eth0
//! ```
//!
//! Strings are printed plain unless YAML would read them back as something
//! else (then double-quoted, as `CPT: "[0,1]"`); `Quoted` forces double
//! quotes (the error block's `descr`).

use serde::Serialize;
use serde_yaml_ng::value::{Tag, TaggedValue};
use serde_yaml_ng::{Mapping, Value};

const QUOTED_TAG: &str = "lnetctl-quoted";

/// A string always printed double-quoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quoted(pub String);

impl Serialize for Quoted {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TaggedValue {
            tag: Tag::new(QUOTED_TAG),
            value: Value::String(self.0.clone()),
        }
        .serialize(s)
    }
}

/// Renders `doc` (a mapping at the top) as Lustre prints it.
pub fn render<T: Serialize>(doc: &T) -> String {
    match serde_yaml_ng::to_value(doc) {
        Ok(v) => render_value(&v),
        // Only non-string map keys can fail, and lnetctl builds none.
        Err(e) => format!("# internal error: {e}\n"),
    }
}

/// Renders a value tree.
pub fn render_value(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Mapping(m) => emit_map(m, 0, false, false, &mut out),
        Value::Sequence(s) => {
            for item in s {
                emit_item(item, 0, &mut out);
            }
        }
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

/// Renders `doc` (a mapping at the top) as Lustre's lnetctl prints what it
/// reads over netlink (libyaml's emitter, indentation 6).
pub fn render_netlink<T: Serialize>(doc: &T) -> String {
    render_libyaml(doc, 6)
}

/// Renders `doc` as libyaml's emitter does with indentation `indent`
/// (Lustre's lnetctl leaves ping and discover replies at libyaml's default,
/// 2): a sequence under a key starts at the key's column, a mapping in a
/// sequence item follows its dash.
pub fn render_libyaml<T: Serialize>(doc: &T, indent: usize) -> String {
    let mut out = String::new();
    match serde_yaml_ng::to_value(doc) {
        Ok(v) => nl_node(&v, 0, indent, &mut out),
        Err(e) => out = format!("# internal error: {e}\n"),
    }
    out
}

/// A mapping's entries with their keys at `col`; the first one follows
/// whatever the line already holds (a sequence item's dash).
fn nl_map(m: &Mapping, col: usize, ind: usize, mut first_inline: bool, out: &mut String) {
    for (k, v) in m {
        if !first_inline {
            pad(out, col);
        }
        first_inline = false;
        out.push_str(&key(k));
        out.push(':');
        match untag(v) {
            Value::Mapping(mm) if !mm.is_empty() => {
                out.push('\n');
                nl_map(mm, col + ind, ind, false, out);
            }
            Value::Sequence(s) if !s.is_empty() => {
                out.push('\n');
                nl_seq(s, col, ind, out);
            }
            Value::Mapping(_) => out.push_str(" {}\n"),
            Value::Sequence(_) => out.push_str(" []\n"),
            _ => {
                out.push(' ');
                out.push_str(&scalar(v));
                out.push('\n');
            }
        }
    }
}

/// A sequence's items with their dashes at `col`.
fn nl_seq(s: &[Value], col: usize, ind: usize, out: &mut String) {
    for item in s {
        pad(out, col);
        match untag(item) {
            Value::Mapping(m) if !m.is_empty() => {
                out.push('-');
                pad(out, ind - 1);
                nl_map(m, col + ind, ind, true, out);
            }
            Value::Sequence(inner) if !inner.is_empty() => {
                out.push('-');
                out.push('\n');
                nl_seq(inner, col + ind, ind, out);
            }
            other => {
                out.push_str("- ");
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

/// A top-level value in the libyaml layout.
fn nl_node(v: &Value, col: usize, ind: usize, out: &mut String) {
    match untag(v) {
        Value::Mapping(m) => nl_map(m, col, ind, false, out),
        Value::Sequence(s) => nl_seq(s, col, ind, out),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A mapping's entries at `level`. Inside a sequence item keys sit two
/// columns right of the item's dash; `first_dash` puts the dash before the
/// first key.
fn emit_map(m: &Mapping, level: usize, in_seq: bool, first_dash: bool, out: &mut String) {
    for (i, (k, v)) in m.iter().enumerate() {
        if i == 0 && first_dash {
            pad(out, 4 * level);
            out.push_str("- ");
        } else {
            pad(out, 4 * level + if in_seq { 2 } else { 0 });
        }
        out.push_str(&key(k));
        out.push(':');
        match untag(v) {
            Value::Mapping(mm) => {
                out.push('\n');
                emit_map(mm, level + 1, in_seq, false, out);
            }
            Value::Sequence(s) => {
                out.push('\n');
                for item in s {
                    emit_item(item, level + 1, out);
                }
            }
            _ => {
                out.push(' ');
                out.push_str(&scalar(v));
                out.push('\n');
            }
        }
    }
}

/// One sequence item at `level`: its dash at `4 * level`.
fn emit_item(v: &Value, level: usize, out: &mut String) {
    match untag(v) {
        Value::Mapping(m) if !m.is_empty() => emit_map(m, level, true, true, out),
        Value::Sequence(s) => {
            for item in s {
                emit_item(item, level + 1, out);
            }
        }
        Value::Mapping(_) => {
            pad(out, 4 * level);
            out.push_str("- {}\n");
        }
        _ => {
            pad(out, 4 * level);
            out.push_str("- ");
            out.push_str(&scalar(v));
            out.push('\n');
        }
    }
}

fn untag(v: &Value) -> &Value {
    match v {
        Value::Tagged(t) if t.tag == Tag::new(QUOTED_TAG) => &t.value,
        other => other,
    }
}

/// Keys are printed as they are (lnetctl's keys are fixed names and
/// numbers).
fn key(k: &Value) -> String {
    match k {
        Value::String(s) => s.clone(),
        other => scalar(other),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => String::from("~"),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            if plain_ok(s) {
                s.clone()
            } else {
                double_quoted(s)
            }
        }
        Value::Tagged(t) if t.tag == Tag::new(QUOTED_TAG) => match &t.value {
            Value::String(s) => double_quoted(s),
            other => scalar(other),
        },
        Value::Tagged(t) => scalar(&t.value),
        Value::Sequence(_) | Value::Mapping(_) => String::from("~"),
    }
}

/// Whether `s` printed plain reads back as the same string.
fn plain_ok(s: &str) -> bool {
    if s.is_empty() || s.trim() != s || s.chars().any(char::is_control) {
        return false;
    }
    matches!(serde_yaml_ng::from_str::<Value>(s), Ok(Value::String(ref r)) if r == s)
}

fn double_quoted(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c if c.is_control() => o.push_str(&format!("\\x{:02x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// One error, as `cYAML_build_error` records it: under `cmd`, a sequence
/// item `op` holding `errno` and `descr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    pub cmd: String,
    pub op: String,
    pub errno: i32,
    pub descr: String,
}

impl YamlError {
    pub fn new(cmd: &str, op: &str, errno: i32, descr: impl Into<String>) -> YamlError {
        YamlError {
            cmd: cmd.to_string(),
            op: op.to_string(),
            errno,
            descr: descr.into(),
        }
    }
}

#[derive(Serialize)]
struct ErrorBody {
    errno: i32,
    descr: Quoted,
}

/// The error block for `errors` (the shape lnetctl prints on stderr):
///
/// ```text
/// <cmd>:
///     - <op>:
///           errno: <n>
///           descr: "<text>"
/// ```
///
/// Errors under the same `cmd` share its sequence, in order.
pub fn render_errors(errors: &[YamlError]) -> String {
    let mut root = Mapping::new();
    for e in errors {
        let mut item = Mapping::new();
        let body = ErrorBody {
            errno: e.errno,
            descr: Quoted(e.descr.clone()),
        };
        let body = serde_yaml_ng::to_value(&body).unwrap_or(Value::Null);
        item.insert(Value::String(e.op.clone()), body);
        let k = Value::String(e.cmd.clone());
        match root.get_mut(&k) {
            Some(Value::Sequence(s)) => s.push(Value::Mapping(item)),
            _ => {
                root.insert(k, Value::Sequence(vec![Value::Mapping(item)]));
            }
        }
    }
    render_value(&Value::Mapping(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netlink_layout_as_lustres_lnetctl_prints_it() {
        let v: Value = serde_yaml_ng::from_str(
            "net:\n- net type: lo\n  local NI(s):\n  - nid: 0@lo\n    status: up\n    statistics:\n      send_count: 0\n    CPT: \"[0]\"\n- net type: tcp\n  local NI(s):\n  - nid: 1.2.3.4@tcp\n    interfaces:\n      0: eth0\n  - nid: 1.2.3.5@tcp\nlist:\n- a\n- b\nempty: {}\nnone: []\n",
        )
        .unwrap();
        // Lustre's lnetctl net show (libyaml, indentation 6), column for
        // column; scalar items and empty collections as libyaml writes them.
        assert_eq!(
            render_netlink(&v),
            "net:\n-     net type: lo\n      local NI(s):\n      -     nid: 0@lo\n            status: up\n            statistics:\n                  send_count: 0\n            CPT: \"[0]\"\n-     net type: tcp\n      local NI(s):\n      -     nid: 1.2.3.4@tcp\n            interfaces:\n                  0: eth0\n      -     nid: 1.2.3.5@tcp\nlist:\n- a\n- b\nempty: {}\nnone: []\n"
        );
    }

    #[test]
    fn layout_of_nested_sequences_and_maps() {
        let v: Value = serde_yaml_ng::from_str(
            "net:\n- net type: tcp\n  local NI(s):\n  - nid: 1.2.3.4@tcp\n    status: up\n    interfaces:\n      0: eth0\n    tunables:\n      peer_timeout: 180\n",
        )
        .unwrap();
        assert_eq!(
            render_value(&v),
            "net:\n    - net type: tcp\n      local NI(s):\n        - nid: 1.2.3.4@tcp\n          status: up\n          interfaces:\n              0: eth0\n          tunables:\n              peer_timeout: 180\n"
        );
    }

    #[test]
    fn top_level_mapping() {
        let v: Value =
            serde_yaml_ng::from_str("global:\n  numa_range: 0\n  discovery: 1\n").unwrap();
        assert_eq!(
            render_value(&v),
            "global:\n    numa_range: 0\n    discovery: 1\n"
        );
    }

    #[test]
    fn error_block_shape() {
        let s = render_errors(&[
            YamlError::new("add", "net", -22, "cannot add network: Invalid argument"),
            YamlError::new("add", "peer_ni", -17, "x"),
            YamlError::new("parser", "set", -1, "cannot parse retry_count value"),
        ]);
        assert_eq!(
            s,
            "add:\n    - net:\n          errno: -22\n          descr: \"cannot add network: Invalid argument\"\n    - peer_ni:\n          errno: -17\n          descr: \"x\"\nparser:\n    - set:\n          errno: -1\n          descr: \"cannot parse retry_count value\"\n"
        );
        // And it is YAML that reads back as what it says.
        let v: Value = serde_yaml_ng::from_str(&s).unwrap();
        assert_eq!(v["add"][0]["net"]["errno"], Value::from(-22));
        assert_eq!(
            v["parser"][0]["set"]["descr"],
            Value::from("cannot parse retry_count value")
        );
    }

    #[test]
    fn quoting() {
        assert!(plain_ok("192.168.1.2@tcp"));
        assert!(plain_ok("0@lo"));
        assert!(plain_ok("<?>"));
        assert!(plain_ok("NA"));
        assert!(!plain_ok("[0,1]"));
        assert!(!plain_ok("true"));
        assert!(!plain_ok("12"));
        assert!(!plain_ok(""));
        assert!(!plain_ok("a: b"));
        assert_eq!(double_quoted("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
        #[derive(Serialize)]
        struct S {
            #[serde(rename = "CPT")]
            cpt: String,
            q: Quoted,
        }
        let out = render(&S {
            cpt: "[0,1]".into(),
            q: Quoted("up".into()),
        });
        assert_eq!(out, "CPT: \"[0,1]\"\nq: \"up\"\n");
    }
}
