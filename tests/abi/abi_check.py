#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernel ABI check: lnet.ko's C API against Lustre's, byte for byte.

Lustre's modules are compiled against Lustre's headers, their static
inlines and macros included, and then call our lnet.ko. So everything our
headers declare for them must mean the same on both sides:

- every structure our headers define: its size, its alignment, and each
  field's offset and size;
- every enumerator and every integer constant macro: its value;
- every function and variable our headers declare: its type, checked by
  declaring ours after Lustre's headers (a C compiler refuses conflicting
  declarations).

The names come from our headers (include/), except the ones that are ours
alone (OURS_ONLY). A probe C file is generated from them and compiled twice
in the lab kernel's Kbuild, once against our include/ and once against
Lustre's tree configured for the same kernel (scripts/build-lustre.sh).
Each value becomes an absolute symbol of the object (`.set`), read back
with nm, so no code runs. A name Lustre does not have fails its compile
with the compiler's message; a value that differs is printed with both
values.

    abi_check.py KDIR LUSTRE_TREE [--work DIR] [--symvers Module.symvers]

With --symvers, also: every symbol that Lustre's own modules take from
Lustre's lnet.ko is exported by ours, and none of ours is one that
Lustre's libcfs.ko (loaded beside ours) exports too.
    abi_check.py --self-test       the parser and comparison on the host
"""

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
INCLUDE = TOP / "include"
# Our own headers that Lustre's callers never see: the LND ABI between our
# modules, lnet-rs's ioctl and tool interfaces, and (under lnet_rs/) what
# only our modules' C files include.
OURS_ONLY = {"linux/lnet/lnd.h", "linux/lnet/lnet-rs.h", "uapi/linux/lnet/lnet-rs-ioctl.h"}
OURS_ONLY_DIR = "lnet_rs/"
# Constants of ours that are not integers (a compound literal), or that
# exist only as our headers' own guards.
SKIP_MACROS = {"LNET_ANY_NID", "IOCTL_CONFIG_SIZE"}
# Structures of which ours is the head of Lustre's: only what callers read
# of them, so their fields are checked, not their size.
HEAD_ONLY = {"struct lnet"}
# Fields of anonymous records inside a structure, which the parser skips:
# checked by their path from the outer structure.
NESTED = {
    "struct lnet_ioctl_config_data": [
        "cfg_config_u.cfg_route.rtr_hop",
        "cfg_config_u.cfg_route.rtr_priority",
        "cfg_config_u.cfg_route.rtr_flags",
        "cfg_config_u.cfg_route.rtr_sensitivity",
        "cfg_config_u.cfg_buffers.buf_enable",
        "cfg_config_u.cfg_buffers.buf_tiny",
        "cfg_config_u.cfg_buffers.buf_small",
        "cfg_config_u.cfg_buffers.buf_large",
    ],
    "struct lnet_ioctl_pool_cfg": [
        "pl_pools[0].pl_npages",
        "pl_pools[0].pl_nbuffers",
        "pl_pools[0].pl_credits",
        "pl_pools[0].pl_mincredits",
        "pl_pools[2].pl_mincredits",
    ],
    # da_random and da_drop_all are bit-fields: lnet.ko's Rust reads them
    # as the bits of the u32 after da_health_error_mask.
    "struct lnet_fault_attr": [
        "u.drop.da_rate",
        "u.drop.da_interval",
        "u.drop.da_health_error_mask",
        "u.delay.la_rate",
        "u.delay.la_interval",
        "u.delay.la_latency",
    ],
    "struct lnet_fault_stat": ["u.drop.ds_dropped", "u.delay.ls_delayed"],
}

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def strip(text):
    text = COMMENT.sub(" ", text)
    # Join continued lines, so that each #define is one line.
    return text.replace("\\\n", " ")


def headers():
    """Our headers that Lustre's callers include, as include names."""
    out = []
    for p in sorted(INCLUDE.rglob("*.h")):
        name = p.relative_to(INCLUDE).as_posix()
        if name not in OURS_ONLY and not name.startswith(OURS_ONLY_DIR):
            out.append(name)
    return out


def brace_body(text, start):
    """The text between the brace at or after start and its match."""
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j], j + 1
    raise ValueError("unbalanced braces")


def fields(body):
    """Field names of a structure body; nested records are skipped whole
    (their own fields are checked where they are defined), bit-fields
    too (they have no offset)."""
    names = []
    depth = 0
    cur = ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0:
            decl = cur.strip()
            cur = ""
            if not decl or ":" in decl:
                continue
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)
            if fp:
                names.append(fp.group(1))
                continue
            # A flexible array has an offset but no size of its own.
            flex = re.search(r"\[\s*\]\s*$", decl) is not None
            decl = re.sub(r"\[[^\]]*\]", "", decl)
            decl = re.sub(r"__attribute__\s*\(\(.*\)\)", "", decl).strip()
            for part in decl.split(","):
                m = re.search(r"(\w+)\s*$", part.strip())
                if m:
                    names.append(m.group(1) + ("[]" if flex else ""))
            continue
        elif depth == 0:
            cur += ch
    return names


def parse(text):
    """(structs {name: [fields]}, enumerators, macros, declarations)."""
    text = strip(text)
    structs, enums, macros, decls = {}, [], [], []
    for m in re.finditer(r"^\s*#\s*define\s+(\w+)(\(?)[ \t]*([^\n]*)", text, re.M):
        name, fn, value = m.group(1), m.group(2), m.group(3).strip()
        if fn or not value or name in SKIP_MACROS or name.startswith("__") or "{" in value:
            continue
        macros.append(name)
    code = re.sub(r"^\s*#[^\n]*", "", text, flags=re.M)
    pos = 0
    while True:
        m = re.compile(r"\b(struct|union|enum)\s+(\w+)?\s*\{").search(code, pos)
        if not m:
            break
        body, end = brace_body(code, m.start())
        if m.group(1) == "enum":
            for item in body.split(","):
                e = re.match(r"\s*(\w+)", item)
                if e:
                    enums.append(e.group(1))
        elif m.group(2):
            structs[f"{m.group(1)} {m.group(2)}"] = fields(body)
        pos = end
    # Top-level declarations: what is left once each body is one \x02.
    flat = code
    while True:
        m = re.search(r"\{[^{}]*\}", flat)
        if not m:
            break
        flat = flat[:m.start()] + "\x02" + flat[m.end():]
    # Inline functions are the caller's own copy, not our ABI; records
    # were read above.
    flat = re.sub(r"\bstatic\s+(inline|__always_inline)\b[^;\x02]*\x02", ";", flat)
    flat = re.sub(r"\b(struct|union|enum)\s*\w*\s*\x02[^;]*;", ";", flat)
    for stmt in flat.split(";"):
        s = " ".join(stmt.split())
        # A static definition is each caller's own copy.
        if not s or s.startswith(("typedef", "static")):
            continue
        # A bare "struct x" is a forward declaration.
        if re.fullmatch(r"(struct|union|enum)\s+\w+", s):
            continue
        if "(" in s or s.startswith("extern"):
            decls.append(s + ";")
    return structs, enums, macros, decls


def ident(*parts):
    return "abi__" + "__".join(re.sub(r"\W", "_", p) for p in parts)


def probe_source(includes, structs, enums, macros):
    lines = [f"#include <{h}>" for h in includes]
    lines.append("#include <linux/stddef.h>")
    lines.append("void abi_probe(void);")
    lines.append("void abi_probe(void)\n{")

    def put(name, expr):
        lines.append(f'\tasm volatile(".globl {name}\\n\\t.set {name}, %c0" :: "i" ((long long)({expr})));')

    for s, fs in structs.items():
        if s not in HEAD_ONLY:
            put(ident("size", s), f"sizeof({s})")
            put(ident("align", s), f"__alignof__({s})")
        for f in fs + NESTED.get(s, []):
            name = f.removesuffix("[]")
            put(ident("offset", s, name), f"offsetof({s}, {name})")
            if not f.endswith("[]"):
                put(ident("fsize", s, name), f"sizeof((({s} *)0)->{name})")
    for e in enums:
        put(ident("enum", e), e)
    for m in macros:
        put(ident("macro", m), m)
    lines.append("}")
    return "\n".join(lines) + "\n"


def decl_source(includes, decls):
    """Lustre's headers, then our declarations: a conflicting type is a
    compile error."""
    lines = [f"#include <{h}>" for h in includes]
    lines += decls
    return "\n".join(lines) + "\n"


def build(kdir, work, name, source, kbuild_extra):
    d = work / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    (d / "probe.c").write_text(source)
    (d / "Kbuild").write_text("obj-m := probe.o\n" + kbuild_extra)
    r = subprocess.run(["make", "-s", "-C", str(kdir), f"M={d}", "LLVM=-19", "probe.o"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        errors = [l for l in (r.stdout + r.stderr).splitlines() if "error" in l]
        return None, "\n".join(errors[:40]) or (r.stdout + r.stderr)[-3000:]
    out = subprocess.run(["llvm-nm-19", "-t", "d", str(d / "probe.o")],
                         capture_output=True, text=True, check=True).stdout
    vals = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].startswith("abi__"):
            vals[parts[2]] = int(parts[0]) & 0xFFFFFFFFFFFFFFFF
    return vals, None


def compare(ours, theirs):
    """Lines describing every difference; empty when the ABIs agree."""
    diffs = []
    for k in sorted(ours):
        if k not in theirs:
            diffs.append(f"{k}: ours {ours[k]:#x}, Lustre has none")
        elif ours[k] != theirs[k]:
            diffs.append(f"{k}: ours {ours[k]:#x}, Lustre {theirs[k]:#x}")
    return diffs


def lustre_kbuild(tree):
    return (f"NOSTDINC_FLAGS += -I{tree}/lnet/include -I{tree}/lustre/include "
            f"-I{tree}/include/uapi -I{tree}/include\n"
            f"ccflags-y += -include {tree}/config.h\n")


def symvers(path):
    """{symbol: module} of a Module.symvers."""
    out = {}
    for line in Path(path).read_text().splitlines():
        parts = line.split("\t")
        if len(parts) >= 3:
            out[parts[1]] = parts[2]
    return out


def undefined(ko):
    out = subprocess.run(["llvm-nm-19", "-u", str(ko)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def symbol_check(tree, ours):
    """Every symbol Lustre's own modules take from Lustre's lnet.ko must be
    exported by ours, and ours must export nothing that Lustre's libcfs.ko
    (which stays loaded beside it) exports too."""
    theirs = symvers(tree / "Module.symvers")
    mine = {s for s, m in symvers(ours).items() if m.endswith("/lnet/lnet")}
    lnet = {s for s, m in theirs.items() if m.endswith("lnet/lnet/lnet")}
    libcfs = {s for s, m in theirs.items() if m.endswith("lnet/libcfs/libcfs")}
    users = [ko for ko in sorted(tree.glob("lustre/**/*.ko")) + sorted(tree.glob("ldiskfs/*.ko"))]
    need = {}
    for ko in users:
        for sym in undefined(ko) & lnet:
            need.setdefault(sym, []).append(ko.stem)
    problems = [f"Lustre's {', '.join(sorted(set(need[s])))} need {s}, which our lnet.ko does not export"
                for s in sorted(need) if s not in mine]
    problems += [f"our lnet.ko exports {s}, as Lustre's libcfs.ko does" for s in sorted(libcfs & set(mine))]
    print(f"abi: Lustre's {len(users)} modules take {len(need)} symbols from lnet.ko; "
          f"ours exports {len(set(need) & set(mine))} of them")
    return problems


def run(kdir, tree, work, ours_symvers=None):
    includes = headers()
    structs, enums, macros, decls = {}, [], [], []
    for h in includes:
        s, e, m, d = parse((INCLUDE / h).read_text())
        structs.update(s)
        enums += e
        macros += m
        decls += d
    # A constant both a header and its includer define is checked once.
    enums, macros = list(dict.fromkeys(enums)), list(dict.fromkeys(macros))
    probe = probe_source(includes, structs, enums, macros)
    ours, err = build(kdir, work, "ours", probe, f"NOSTDINC_FLAGS += -I{INCLUDE}\n")
    if err:
        print(f"abi: our headers do not build the probe:\n{err}")
        return 1
    theirs, err = build(kdir, work, "lustre", probe, lustre_kbuild(tree))
    if err:
        print(f"abi: Lustre's headers lack or differ from what ours declare:\n{err}")
        return 1
    diffs = compare(ours, theirs)
    if ours_symvers:
        diffs += symbol_check(tree, ours_symvers)
    _, err = build(kdir, work, "decls", decl_source(includes, decls), lustre_kbuild(tree))
    if err:
        diffs.append(f"declarations that differ from Lustre's:\n{err}")
    print(f"abi: {len(structs)} structures, {len(enums)} enumerators, {len(macros)} constants, "
          f"{len(decls)} declarations from {len(includes)} headers; {len(ours)} values compared")
    for d in diffs:
        print(f"abi: DIFFERS {d}")
    return 1 if diffs else 0


def self_test():
    src = """
#define A_GUARD_H__
#define LNET_X (1 << 3) /* c */
#define F(x) (x)
struct s { int a; char *b[4]; void (*cb)(int x); struct { int y; } in; unsigned z : 3; int f[]; };
enum e { E0 = 0, E1, /* c */ E2 = 5 };
int f(struct s *p, int n);
static inline int g(void) { return 1; }
extern int v;
struct fwd;
"""
    structs, enums, macros, decls = parse(src)
    assert structs == {"struct s": ["a", "b", "cb", "in", "f[]"]}, structs
    assert enums == ["E0", "E1", "E2"], enums
    assert macros == ["LNET_X"], macros
    assert decls == ["int f(struct s *p, int n);", "extern int v;"], decls
    assert compare({"a": 1, "b": 2}, {"a": 1, "b": 3}) == ["b: ours 0x2, Lustre 0x3"]
    assert compare({"a": 1}, {}) == ["a: ours 0x1, Lustre has none"]
    assert compare({"a": 1}, {"a": 1}) == []
    print("abi self-test: 1 passed, 0 failed")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kdir", nargs="?")
    ap.add_argument("tree", nargs="?")
    ap.add_argument("--work", default=None)
    ap.add_argument("--symvers", default=None,
                    help="our build's Module.symvers: also check the symbols Lustre's modules take")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.kdir or not a.tree:
        ap.error("KDIR and LUSTRE_TREE are needed")
    work = Path(a.work).resolve() if a.work else Path(tempfile.mkdtemp(prefix="abi-"))
    return run(Path(a.kdir), Path(a.tree), work, a.symvers)


if __name__ == "__main__":
    sys.exit(main())
