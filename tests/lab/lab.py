#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The lnet-rs lab: boots the lab kernel under qemu (TCG) as N VMs with M
virtio NICs each, NIC k of every VM on rail k: with two VMs the NICs are
joined directly by `-netdev socket` over UDP on 127.0.0.1; with more, each
rail is a small UDP hub on 127.0.0.1 in this process. It runs scenarios
(tests/vm/*.sh) inside the VMs and judges each console.

A scenario fails when it exits non-zero in any VM it ran in, when a VM does
not finish in time, or when any console shows a kernel BUG, WARNING, KASAN,
lockdep, kmemleak or panic report, or a module that will not unload. The
one exception is a report in Lustre's own code that its unmodified
modules make whatever LNet runs under them (LUSTRE_KNOWN): it is noted.
tests/vm/lib*.sh are the scenarios' libraries, not scenarios.

Scenarios declare their lab in a header line, `# lab: vms=2 nics=2`;
scenarios with the same lab share one boot. `lustrefs=1` boots our
kernel and modules with Lustre's own file system modules and tools on top
(scripts/build-lustre.sh, cached): Lustre on lnet-rs; Lustre's C LNet
from the same build waits in /opt/clnet for scenarios that compare
(lib.sh's lab_clnet_use). `clnet=1` boots that initramfs too, but its last
VM is Lustre's node throughout: it runs Lustre's C LNet, LNDs, lnetctl and
lnet_ulp (built against Lustre's headers) in place of ours, with
LAB_LUSTRE=1, for the interop scenarios. `lustre=N` makes the last N
VMs Lustre nodes: they boot the Lustre peer's kernel (built once by
../shared/peers/lustre/build.sh with o2ib added, tests/lab/lustre-peer.sh,
and cached) with an initramfs holding
Lustre's own modules and lnetctl instead of ours, and run the same
scenario with LAB_LUSTRE=1. `named=1` keeps a scenario out of the default
run (all of them): it runs only when named, as benchmarks (bench_*) do.
`debs=1` adds dpkg and the packages of scripts/build-deb.sh to the
initramfs (add_debs), when such a scenario is among those run.
`lustretests=1` (with lustrefs=1) adds what Lustre's own test scripts
need to the Lustre initramfs (add_lustre_tests): bash, python3 with its
yaml module, and Lustre's test framework and sanity-lnet.sh under
/opt/lustre.
"""

import argparse
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
# Where lnet_build_tools (scripts/env.sh) puts the VMs' userspace tools.
TOOLS_TARGET = "x86_64-unknown-linux-gnu"
# depmod and the qdisc/rdma tools live in sbin, which a trimmed PATH lacks.
os.environ["PATH"] = os.environ.get("PATH", "/usr/bin:/bin") + ":/usr/local/sbin:/usr/sbin:/sbin"
TESTS = TOP / "tests" / "vm"

# Kernel report lines (timestamped printk output) that fail a run.
SPLAT = re.compile(
    r"^\[\s*\d+\.\d+\]\s.*("
    r"BUG:|WARNING:|KASAN|UBSAN|Oops|Kernel panic|general protection fault|"
    r"possible circular locking|possible recursive locking|"
    r"inconsistent lock state|lock held when returning|"
    r"suspicious RCU usage|INFO: task .* blocked|"
    r"rust_panic|panicked at|unreferenced object|"
    r"Call Trace:|kmemleak: \d+ new suspected memory leaks|"
    # lnet_ulp: LNet broke its promise of a final event.
    r"lnet_ulp: FAIL .*never ended|"
    # An LND let go of a message without ending it (kapi lnd.rs, Msg).
    r"LND dropped an LNet message)"
)
# Userspace markers: a leak report from lib.sh and explicit failures.
LAB_FAIL = re.compile(r"^(LAB-FAIL|LAB-LEAK(?!-TRANSIENT))")
# Objects one scan reported and the next found referenced (lib.sh
# lab_kmemleak_report): noted, no failure, nor their scan's count line.
LEAK_TRANSIENT = re.compile(r"LAB-LEAK-TRANSIENT after ")
# How much of a kmemleak report a verdict carries: enough for the first
# objects' backtraces, which is what a CI log must show.
LEAK_LINES = 60


def log(msg):
    print(msg, flush=True)


def kdir():
    env = os.environ.get("KDIR")
    if env:
        return Path(env)
    out = subprocess.check_output(["bash", str(TOP / "scripts" / "kdir.sh")], text=True)
    return Path(out.strip())


def kernel_release(kd):
    return subprocess.check_output(
        ["make", "-s", "-C", str(kd), "LLVM=-19", "kernelrelease"], text=True
    ).strip()


def shared_libs(binary):
    """Libraries a dynamic binary loads, with the dynamic loader."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+)", line.split("=>")[-1])
        if m and os.path.exists(m.group(1)):
            libs.append(m.group(1))
    return libs


def copy_in(root, src, dst=None):
    dst = root / (dst or src).lstrip("/")
    dst.parent.mkdir(parents=True, exist_ok=True)
    # Never write through a link: it could point out of the tree.
    if dst.is_symlink() or dst.exists():
        dst.unlink()
    shutil.copy2(os.path.realpath(src), dst)
    return dst


def base_root(root):
    """What every VM's initramfs has: busybox and its applet links, ip, tc,
    rdma and chrt (busybox has none), kmod's modprobe and insmod, with
    their libraries, users."""
    if root.exists():
        shutil.rmtree(root)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "etc", "lab/tests", "root"):
        (root / d).mkdir(parents=True, exist_ok=True)
    copy_in(root, "/bin/busybox")
    for tool in ("ip", "tc", "rdma", "chrt"):
        path = shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin:/bin")
        if not path:
            sys.exit(f"lab: {tool} not found: run scripts/setup.sh")
        copy_in(root, path, f"/usr/sbin/{tool}")
        for lib in shared_libs(path):
            copy_in(root, lib)
    # busybox's modprobe and insmod load a module a second time when its
    # init fails (finit_module, then init_module): a failed lnet_ulp run
    # would be run again, and could pass unseen. kmod's load it once
    # (lib.sh calls them by path: busybox's shell prefers its applets).
    kmod = shutil.which("kmod", path="/usr/sbin:/usr/bin:/sbin:/bin")
    if not kmod:
        sys.exit("lab: kmod not found: run scripts/setup.sh")
    copy_in(root, kmod, "/sbin/kmod")
    for lib in shared_libs(kmod):
        copy_in(root, lib)
    # depmod and modinfo too, for the scenario that installs our Debian
    # packages (their maintainer scripts run /sbin/depmod): busybox's
    # depmod writes no modules.dep.bin, which kmod's modprobe reads first.
    for name in ("modprobe", "insmod", "depmod", "modinfo"):
        (root / "sbin" / name).symlink_to("kmod")
    # Applet links made here: `busybox --install` takes seconds under TCG.
    applets = subprocess.run(["/bin/busybox", "--list-full"], capture_output=True, text=True, check=True).stdout
    for applet in applets.split():
        link = root / applet
        if not link.exists() and not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to("/bin/busybox")
    (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\nlnetuser:x:1000:1000::/tmp:/bin/sh\n")
    (root / "etc/group").write_text("root:x:0:\nlnetuser:x:1000:\n")
    # Scenarios read connection and message events from the console: the
    # lab adds D_NET to the default debug mask (a scenario that checks the
    # default passes libcfs_debug itself, which comes after this).
    (root / "etc/modprobe.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/modprobe.d/lnet-lab.conf").write_text("options lnet libcfs_debug=+net\n")


def install_modules(root, release, kos, kd=None):
    """Modules under /lib/modules/<release>/extra, with depmod."""
    extra = root / "lib/modules" / release / "extra"
    extra.mkdir(parents=True)
    for ko in kos:
        shutil.copy2(ko, extra / Path(ko).name)
    for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        if kd and (kd / f).exists():
            shutil.copy2(kd / f, root / "lib/modules" / release / f)
    subprocess.run(["depmod", "-b", str(root), release], check=True)


def finish_initramfs(root, work, name):
    """The init, the scenarios and their helpers; packs `root` into
    work/name."""
    shutil.copy2(TOP / "tests/lab/init", root / "init")
    os.chmod(root / "init", 0o755)
    shutil.copy2(TESTS / "lib.sh", root / "lab/lib.sh")
    for t in TESTS.glob("*.sh"):
        if not t.name.startswith("lib"):
            shutil.copy2(t, root / "lab/tests" / t.name)
        elif t.name != "lib.sh":
            shutil.copy2(t, root / "lab" / t.name)

    cpio = work / name
    with open(cpio, "wb") as out:
        files = subprocess.run(["find", "."], cwd=root, capture_output=True, check=True).stdout
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files, stdout=out, check=True)
    return cpio


def add_perftest(root):
    """perftest's ib_write_bw with libibverbs' rxe provider (its
    dlopen'ed library and driver file), for the benchmarks."""
    bw = shutil.which("ib_write_bw")
    provider = Path("/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so")
    if not bw or not provider.exists():
        sys.exit("lab: ib_write_bw or the rxe verbs provider missing: run scripts/setup.sh bench")
    copy_in(root, bw, "/usr/bin/ib_write_bw")
    for f in (bw, str(provider)):
        for lib in shared_libs(f):
            copy_in(root, lib)
    copy_in(root, str(provider))
    copy_in(root, "/etc/libibverbs.d/rxe.driver")


# Where scripts/build-deb.sh puts the packages.
DEBS = TOP / "lab-out" / "deb"


def add_debs(root, release):
    """Real dpkg, for scenarios whose header says `debs=1`: dpkg and what
    it runs or looks for on PATH (dpkg-deb, dpkg-query, dpkg-split, GNU
    tar, to which dpkg-deb gives options busybox's lacks, ldconfig) with
    their libraries, an empty database that knows kmod (the VM's
    modprobe: the packages depend on it), and in /lab/debs the packages
    of scripts/build-deb.sh that a node installs for this kernel: the
    modules and the tools (DKMS cannot build in a VM without a
    compiler)."""
    for tool in ("/usr/bin/dpkg", "/usr/bin/dpkg-deb", "/usr/bin/dpkg-query", "/usr/bin/dpkg-split",
                 "/usr/bin/tar", "/usr/sbin/ldconfig"):
        copy_in(root, tool)
        for lib in shared_libs(tool):
            copy_in(root, lib)
    db = root / "var/lib/dpkg"
    for d in ("info", "updates", "triggers"):
        (db / d).mkdir(parents=True, exist_ok=True)
    (root / "var/log").mkdir(parents=True, exist_ok=True)
    # The host's kmod, without its dependencies: the database has none of
    # the packages they name.
    kmod = subprocess.run(
        ["dpkg-query", "-W", "-f", "Package: ${Package}\nStatus: ${Status}\nArchitecture: ${Architecture}\n"
         "Version: ${Version}\nMaintainer: ${Maintainer}\nDescription: ${binary:Summary}\n\n", "kmod"],
        capture_output=True, text=True, check=True).stdout
    (db / "status").write_text(kmod)
    (db / "info/kmod.list").write_text("")
    (db / "available").write_text("")
    debs = sorted(DEBS.glob(f"lnet-rs-modules-{release}_*.deb")) + sorted(DEBS.glob("lnet-rs-utils_*.deb"))
    if len(debs) != 2:
        sys.exit(f"lab: the modules and utils packages for {release} are not in {DEBS}: run scripts/build-deb.sh")
    (root / "lab/debs").mkdir(parents=True)
    for deb in debs:
        shutil.copy2(deb, root / "lab/debs" / deb.name)


def build_initramfs(kd, work, src=TOP, bench=False, debs=False):
    """The initramfs of lnet-rs VMs: our modules and userspace tools
    (with `bench`, perftest's too; with `debs`, dpkg and our packages)."""
    root = work / "root"
    base_root(root)
    if bench:
        add_perftest(root)
    if debs:
        add_debs(root, kernel_release(kd))
    # Our userspace tools, built static by scripts/env.sh's lnet_build_tools.
    for tool in ("lnetctl", "lnet_ioctl_garbage", "lctl", "ksock_hostile", "ksock_crowd",
                 "tcp_bench", "rail_sample"):
        path = TOP / "target" / TOOLS_TARGET / "release" / tool
        if not path.exists():
            sys.exit(f"lab: {path} missing: run scripts/env.sh's lnet_build_tools")
        copy_in(root, str(path), f"/usr/sbin/{tool}")
        for lib in shared_libs(str(path)):
            copy_in(root, lib)
    kos = sorted(p for p in src.glob("*/*.ko"))
    kos += sorted(p for p in (src / "tests").glob("**/*.ko"))
    if not kos:
        sys.exit("lab: no modules built: run make lab first")
    install_modules(root, kernel_release(kd), kos, kd)
    return finish_initramfs(root, work, "initramfs.cpio")


LUSTRE_SHARED = TOP.parent / "shared" / "peers" / "lustre"
# build.sh staged with o2ib added (tests/lab/lustre-peer.sh).
LUSTRE_BUILD = TOP / "tests" / "lab" / "lustre-peer.sh"


def lustre_peer_dir():
    """Where the peer is cached: keyed by what it is built from (the
    scripts' text, the kernel configs, the tarball's name), not by where
    shared/ happens to be checked out, so every clone finds the same
    bundle."""
    h = hashlib.sha256()
    for f in (LUSTRE_BUILD, LUSTRE_BUILD.parent / "lustre-o2ib.config",
              LUSTRE_SHARED / "build.sh", LUSTRE_SHARED / "kernel.config"):
        h.update(f.read_bytes())
    for t in sorted(LUSTRE_SHARED.glob("lustre-release-*.tar.xz")):
        h.update(t.name.encode())
    # Not lustre-*: scripts/build-lustre.sh prunes those of other versions.
    return Path.home() / ".cache/lnet-rs" / f"peer-lustre-{h.hexdigest()[:16]}"


def lustre_peer():
    """The Lustre peer's bundle directory, built on first use (cached)."""
    env = os.environ.get("LUSTRE_PEER")
    if env:
        return Path(env)
    if not (LUSTRE_SHARED / "build.sh").exists():
        sys.exit(f"lab: {LUSTRE_SHARED}/build.sh missing: the Lustre peer cannot be built")
    log("lab: building the Lustre peer (about 10 minutes the first time, then cached)")
    t0 = time.monotonic()
    out = subprocess.run(["bash", str(LUSTRE_BUILD), str(lustre_peer_dir())],
                         stdout=subprocess.PIPE, text=True)
    log(f"lab: Lustre peer ready in {time.monotonic() - t0:.0f}s")
    if out.returncode != 0:
        sys.exit("lab: the Lustre peer did not build")
    return Path(out.stdout.strip().splitlines()[-1])


def build_lustre_initramfs(bundle, work):
    """The initramfs of Lustre VMs: Lustre's modules, lnetctl and lst with
    their libraries (the bundle's and the host's), no module of ours."""
    root = work / "root-lustre"
    base_root(root)
    for tool in sorted((bundle / "bin").iterdir()):
        copy_in(root, str(tool), f"/usr/sbin/{tool.name}")
    for lib in sorted((bundle / "lib").iterdir()):
        copy_in(root, str(lib), f"/usr/lib/{lib.name}")
    env = dict(os.environ, LD_LIBRARY_PATH=str(bundle / "lib"))
    for tool in sorted((bundle / "bin").iterdir()):
        out = subprocess.run(["ldd", str(tool)], capture_output=True, text=True, env=env).stdout
        for line in out.splitlines():
            m = re.search(r"(/\S+)", line.split("=>")[-1])
            if m and os.path.exists(m.group(1)) and not m.group(1).startswith(str(bundle)):
                copy_in(root, m.group(1))
    release = (bundle / "release").read_text().strip()
    kos = sorted((bundle / "modules").glob("*.ko")) + [build_lustre_ulp(bundle / "lustre", bundle / "kdir", work)]
    install_modules(root, release, kos, bundle / "kdir")
    return finish_initramfs(root, work, "initramfs-lustre.cpio")


def build_lustre_ulp(lus, kdir, work):
    """tests/kmod/lnet_ulp.c built unchanged against Lustre's own headers
    and symbols (its configured tree `lus`) for the kernel in `kdir`, for
    a Lustre node (the peer bundle's README says how)."""
    src = (work / f"ulp-lustre-{lus.parent.name}").resolve()
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    shutil.copy2(TOP / "tests/kmod/lnet_ulp.c", src / "lnet_ulp.c")
    (src / "Kbuild").write_text(
        "obj-m := lnet_ulp.o\n"
        f"NOSTDINC_FLAGS += -I{lus}/lnet/include -I{lus}/lustre/include -I{lus}/include/uapi -I{lus}/include\n"
        f"ccflags-y += -include {lus}/config.h -Werror\n"
        f"KBUILD_EXTRA_SYMBOLS += {lus}/Module.symvers\n")
    # With the compiler the kernel was built with (the peer's build.sh uses
    # gcc unless LLVM is set, as our scripts set it).
    env = dict(os.environ)
    env.pop("LLVM", None)
    config = (kdir / ".config").read_text()
    if "CONFIG_CC_IS_CLANG=y" in config:
        env["LLVM"] = os.environ.get("LLVM", "-19")
    out = subprocess.run(["make", "-s", "-C", str(kdir), f"M={src}", "modules"],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0 or "warning" in (out.stdout + out.stderr).lower():
        sys.exit(f"lab: lnet_ulp.c does not build against Lustre's headers:\n{out.stdout}{out.stderr}")
    return src / "lnet_ulp.ko"


LUSTRE_FS_BUILD = TOP / "scripts" / "build-lustre.sh"
# Lustre's tools a file system node runs, where its build leaves them.
LUSTRE_TOOLS = {
    "lctl": "lustre/utils/.libs/lctl",
    "lfs": "lustre/utils/.libs/lfs",
    "mount.lustre": "lustre/utils/.libs/mount.lustre",
    "fsx": "lustre/tests/.libs/fsx",
}


def lustre_plugin_dir(tree):
    """Where mount.lustre looks for its OSD plugins (its PLUGIN_DIR, the
    configured pkglibdir)."""
    out = subprocess.run(["make", "-s", "-C", str(tree / "lustre/utils"), "-f", "Makefile", "-f", "-",
                          "lab-pkglibdir"], input="lab-pkglibdir:\n\t@echo $(pkglibdir)\n",
                         capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip().startswith("/"):
        sys.exit(f"lab: cannot tell Lustre's plugin directory: {out.stderr}")
    return out.stdout.strip()


def lustre_fs():
    """Lustre built against the lab kernel (scripts/build-lustre.sh), built
    on first use and cached."""
    env = os.environ.get("LUSTRE_FS")
    if env:
        return Path(env)
    log("lab: building Lustre for the lab kernel (cached after the first time)")
    t0 = time.monotonic()
    out = subprocess.run(["bash", str(LUSTRE_FS_BUILD)], stdout=subprocess.PIPE, text=True)
    log(f"lab: Lustre ready in {time.monotonic() - t0:.0f}s")
    if out.returncode != 0:
        sys.exit("lab: Lustre did not build for the lab kernel")
    return Path(out.stdout.strip().splitlines()[-1])


# Lustre's scripts a sanity-lnet.sh run reads or calls (its
# test-framework.sh finds them under $LUSTRE, /opt/lustre in the VM).
LUSTRE_TEST_FILES = ("tests/sanity-lnet.sh", "tests/test-framework.sh", "tests/functions.sh", "tests/yaml.sh",
                     "tests/rpc.sh", "tests/cfg/local.sh", "tests/cfg/ncli.sh", "scripts/lustre_rmmod",
                     "scripts/ksocklnd-config", "scripts/lnet-sysctl-config")
# The python3 that carries the yaml module test-framework.sh compares
# YAML with (Debian's python3-yaml).
LAB_PYTHON = "/usr/bin/python3"


def add_lustre_tests(root, tree):
    """What Lustre's own test scripts need beside busybox, for scenarios
    whose header says `lustretests=1`: bash (their interpreter), python3
    with only the modules `import yaml` and its use load (file by file:
    the whole library would be tens of MB of RAM), and Lustre's test
    framework, sanity-lnet.sh and the scripts they call, unchanged, under
    /opt/lustre."""
    bash = shutil.which("bash", path="/usr/bin:/bin")
    if not bash:
        sys.exit("lab: bash not found")
    for dst in ("/usr/bin/bash", "/bin/bash"):
        copy_in(root, bash, dst)
    for lib in shared_libs(bash):
        copy_in(root, lib)
    # What lnetctl's export looks like: mappings, sequences, numbers, bools.
    probe = ("import sys, yaml, importlib.util\n"
             "yaml.safe_load('net:\\n  - net type: lo\\n    local NI(s):\\n      - nid: 0@lo\\n'\n"
             "               '        tunables:\\n          peer_timeout: 0\\n'\n"
             "               'peer:\\n  - primary nid: 1.1.1.1@tcp\\n    Multi-Rail: True\\n')\n"
             "for m in list(sys.modules.values()):\n"
             "    f = getattr(m, '__file__', None)\n"
             "    if f:\n"
             "        print(f)\n"
             "        if f.endswith('.py'):\n"
             "            print(importlib.util.cache_from_source(f))\n")
    out = subprocess.run([LAB_PYTHON, "-c", probe], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"lab: {LAB_PYTHON} cannot load yaml (python3-yaml, scripts/setup.sh):\n{out.stderr}")
    real = os.path.realpath(LAB_PYTHON)
    copy_in(root, real)
    (root / LAB_PYTHON.lstrip("/")).unlink(missing_ok=True)
    (root / LAB_PYTHON.lstrip("/")).symlink_to(os.path.basename(real))
    for lib in shared_libs(real):
        copy_in(root, lib)
    for f in sorted(set(out.stdout.split())):
        if os.path.isfile(f):
            copy_in(root, f)
            if f.endswith(".so"):
                for lib in shared_libs(f):
                    copy_in(root, lib)
    # Where python3 looks for its extension modules: without it, it warns
    # on every start.
    (root / "usr/lib" / os.path.basename(real) / "lib-dynload").mkdir(parents=True, exist_ok=True)
    for rel in LUSTRE_TEST_FILES:
        path = tree / "lustre" / rel
        if not path.exists():
            sys.exit(f"lab: {path} missing from the Lustre build")
        os.chmod(copy_in(root, str(path), f"/opt/lustre/{rel}"), 0o755)
    # The framework reads each node's distribution, and stops without one.
    (root / "etc/os-release").write_text("ID=lnet-rs-lab\nVERSION_ID=1\n")


def build_lustre_fs_initramfs(kd, work, bundle, src=TOP, tests=False):
    """The initramfs of lnet-rs VMs that run Lustre itself: ours, plus
    Lustre's own modules but its LNet (libcfs.ko stays Lustre's), its
    tools with their libraries. Lustre's lctl takes the place of ours,
    which stays as lnet-rs-lctl (its packaged name), for comparisons."""
    root = work / "root-lfs"
    base_root(root)
    for tool, name in (("lnetctl", "lnetctl"), ("tcp_bench", "tcp_bench"),
                       ("rail_sample", "rail_sample"), ("lctl", "lnet-rs-lctl")):
        copy_in(root, str(TOP / "target" / TOOLS_TARGET / "release" / tool), f"/usr/sbin/{name}")
        for lib in shared_libs(str(TOP / "target" / TOOLS_TARGET / "release" / tool)):
            copy_in(root, lib)
    tree = bundle / "tree"
    libdirs = sorted({str(p.parent) for p in tree.glob("**/.libs/*.so*")})
    env = dict(os.environ, LD_LIBRARY_PATH=":".join(libdirs))
    tools = [(name, tree / rel) for name, rel in LUSTRE_TOOLS.items()]
    # Lustre's own lnetctl beside its LNet modules in /opt/clnet: the C
    # side of every comparison (lib.sh's lab_clnet_use puts it first on
    # PATH).
    tools.append(("/opt/clnet/lnetctl", tree / "lnet/utils/.libs/lnetctl"))
    # The servers' OSD, Lustre's memory-backed wbcfs (build-lustre.sh says
    # why not ldiskfs): mount.lustre loads its plugin by path.
    plugin = tree / "lustre/utils/mount_osd_wbcfs.so"
    tools.append((f"{lustre_plugin_dir(tree)}/{plugin.name}", plugin))
    for name, path in tools:
        if not path.exists():
            sys.exit(f"lab: {path} missing from the Lustre build")
        copy_in(root, str(path), name if name.startswith("/") else f"/usr/sbin/{name}")
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env).stdout
        for line in out.splitlines():
            m = re.search(r"(/\S+)", line.split("=>")[-1])
            if m and os.path.exists(m.group(1)):
                dst = f"/usr/lib/{Path(m.group(1)).name}" if m.group(1).startswith(str(tree)) else None
                copy_in(root, m.group(1), dst)
    (root / "sbin/mount.lustre").symlink_to("/usr/sbin/mount.lustre")
    # mount.lustre checks and records mounts in /etc/mtab, which busybox's
    # umount never updates: the kernel's own list, so that a target can be
    # mounted again in the same boot.
    (root / "etc/mtab").symlink_to("/proc/mounts")
    if tests:
        add_lustre_tests(root, tree)
    lnet = set((bundle / "lnet-modules.txt").read_text().split())
    kos = sorted(p for p in src.glob("*/*.ko")) + [src / "tests/kmod/lnet_ulp.ko"]
    kos += sorted(p for p in (bundle / "modules").glob("*.ko") if p.name not in lnet)
    install_modules(root, kernel_release(kd), kos, kd)
    # Lustre's LNet out of modprobe's sight, as its names are ours: loaded
    # by path when a scenario runs Lustre's C LNet in place of ours; with
    # it, lnet_ulp as the Lustre node of a clnet lab runs it.
    for name in sorted(lnet):
        copy_in(root, str(bundle / "modules" / name), f"/opt/clnet/{name}")
    copy_in(root, str(build_lustre_ulp(tree, kd, work)), "/opt/clnet/lnet_ulp.ko")
    return finish_initramfs(root, work, "initramfs-lfs.cpio")


def free_udp_ports(n):
    """n distinct free UDP ports on 127.0.0.1 (bound and released)."""
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def parse_header(path):
    lab = {"vms": 1, "nics": 2, "timeout": 240, "lustre": 0, "lustrefs": 0, "clnet": 0, "named": 0,
           "debs": 0, "lustretests": 0}
    for line in path.read_text().splitlines()[:10]:
        m = re.match(r"#\s*lab:\s*(.*)", line)
        if m:
            for kv in m.group(1).split():
                k, _, v = kv.partition("=")
                lab[k] = int(v)
    return lab


class Hub:
    """One rail of a lab with more than two VMs: every frame a VM sends to
    the hub's port on 127.0.0.1 is relayed to every other VM of the rail."""

    def __init__(self, vm_ports):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.vm_ports = vm_ports
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.relay, daemon=True)
        self.thread.start()

    def relay(self):
        while not self.stop.is_set():
            try:
                frame, (_, src) = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            for p in self.vm_ports:
                if p != src:
                    try:
                        self.sock.sendto(frame, ("127.0.0.1", p))
                    except OSError:
                        pass  # a VM that is not up yet drops it, as a NIC would

    def close(self):
        self.stop.set()
        self.thread.join()
        self.sock.close()


class Boot:
    """One boot of a lab: nvms VMs with nics NICs, running `scenarios`."""

    def __init__(self, kd, initrd, work, nvms, nics, scenarios, timeout, mem="384M", lustre=None,
                 perf=False, clnet=False):
        self.kd, self.initrd, self.work = kd, initrd, work
        self.nvms, self.nics, self.scenarios = nvms, nics, scenarios
        self.timeout, self.mem = timeout, mem
        # The perf kernel (no checkers): the VMs skip their leak scans.
        self.perf = perf
        # (count, bundle, initramfs): the last `count` VMs are Lustre nodes.
        self.lustre = lustre
        # Our kernel throughout, the last VM running Lustre's C LNet.
        self.clnet = clnet
        self.procs, self.consoles = [], []

    def is_lustre(self, vm):
        return bool(self.lustre) and vm >= self.nvms - self.lustre[0]

    def acpi(self, vm):
        """Our test kernel boots with ACPI off. Under KASAN and kmemleak, ACPI's
        interpreter takes about 25 s under TCG to enable each PCI interrupt
        link and stalls RCU; a test needs no more than the PIT's clock (its
        boot only warns when it gets jiffies). The perf kernel and Lustre's,
        which have no checkers, keep ACPI for their TSC calibration."""
        return [] if self.perf or self.is_lustre(vm) else ["acpi=off"]

    def qemu_cmd(self, vm, ports):
        kernel, initrd, mem = self.kd / "arch/x86/boot/bzImage", self.initrd, self.mem
        if self.is_lustre(vm):
            # Lustre's node needs more room than ours (its README).
            kernel, initrd, mem = self.lustre[1] / "bzImage", self.lustre[2], "512M"
        cmd = [
            "qemu-system-x86_64", "-machine", "pc", "-cpu", "max", "-m", mem, "-smp", "1",
            "-nodefaults", "-no-reboot", "-display", "none", "-monitor", "none",
            "-kernel", str(kernel), "-initrd", str(initrd),
            "-serial", f"file:{self.consoles[vm]}",
            "-append", " ".join([
                "console=ttyS0", "panic=-1", "oops=panic", "printk.time=1",
                f"lab.vm={vm}", f"lab.nvms={self.nvms}", f"lab.nics={self.nics}",
                f"lab.lustre={int(self.is_lustre(vm))}",
                f"lab.clnet={int(self.clnet and vm == self.nvms - 1)}",
                f"lab.perf={int(self.perf)}",
                "lab.run=" + ",".join(self.scenarios),
                *self.acpi(vm),
            ]),
        ]
        for nic in range(self.nics):
            mac = f"52:54:00:00:{vm:02x}:{nic:02x}"
            cmd += ["-device", f"virtio-net-pci,netdev=n{nic},mac={mac}"]
            if self.nvms == 2:
                mine, theirs = ports[nic][vm], ports[nic][1 - vm]
                cmd += ["-netdev", f"socket,id=n{nic},udp=127.0.0.1:{theirs},localaddr=127.0.0.1:{mine}"]
            elif self.nvms > 2:
                mine, hub = ports[nic][vm], self.hubs[nic].port
                cmd += ["-netdev", f"socket,id=n{nic},udp=127.0.0.1:{hub},localaddr=127.0.0.1:{mine}"]
            else:
                # A qemu hub with one port: the NIC comes up, nothing leaves.
                cmd += ["-netdev", f"hubport,id=n{nic},hubid={nic}"]
            if vm == 0 and (self.lustre or self.clnet):
                # Our node's side of each rail of a mixed lab, for the wire check.
                cmd += ["-object", f"filter-dump,id=dump{nic},netdev=n{nic},file={self.pcap(nic)}"]
        return cmd

    def pcap(self, nic):
        return self.work / f"rail{nic}.pcap"

    def follow(self, stop, kernel_filter):
        """Prints console lines as they arrive, prefixed with the VM."""
        pos = [0] * self.nvms
        partial = [""] * self.nvms
        while True:
            finished = stop.is_set()
            for vm, path in enumerate(self.consoles):
                try:
                    with open(path, errors="replace") as f:
                        f.seek(pos[vm])
                        chunk = f.read()
                        pos[vm] = f.tell()
                except FileNotFoundError:
                    continue
                lines = (partial[vm] + chunk).split("\n")
                partial[vm] = lines.pop()
                for line in lines:
                    line = line.rstrip("\r")
                    is_kernel = re.match(r"^\[\s*\d+\.\d+\]", line)
                    if is_kernel and kernel_filter and not kernel_filter.search(line) and not SPLAT.search(line):
                        continue
                    print(f"vm{vm}| {line}", flush=True)
            if finished:
                return
            time.sleep(0.2)

    def run(self, follow=False, kernel_filter=None):
        n = max(self.nvms, 2)
        flat = free_udp_ports(n * self.nics)
        ports = [flat[n * i: n * i + n] for i in range(self.nics)]
        self.hubs = [Hub(ports[nic]) for nic in range(self.nics)] if self.nvms > 2 else []
        self.consoles = [self.work / f"console-vm{vm}.log" for vm in range(self.nvms)]
        start = time.monotonic()
        stop = threading.Event()
        follower = None
        try:
            for vm in range(self.nvms):
                self.consoles[vm].write_text("")
                self.procs.append(subprocess.Popen(
                    self.qemu_cmd(vm, ports), stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=open(self.work / f"qemu-vm{vm}.err", "w")))
            if follow:
                follower = threading.Thread(target=self.follow, args=(stop, kernel_filter))
                follower.start()
            deadline = start + self.timeout
            while time.monotonic() < deadline and any(p.poll() is None for p in self.procs):
                time.sleep(0.2)
            timed_out = any(p.poll() is None for p in self.procs)
        finally:
            for p in self.procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
            stop.set()
            if follower:
                follower.join()
            for hub in self.hubs:
                hub.close()
        self.elapsed = time.monotonic() - start
        self.timed_out = timed_out
        return [c.read_text(errors="replace") for c in self.consoles]


# Console lines a failed scenario's verdict carries from each VM: what CI
# prints is all a failure there leaves to read.
TAIL_LINES = 30


def scenario_tail(text, name, n=TAIL_LINES):
    """The last `n` lines a VM printed in scenario `name`, up to its first
    LAB-FAIL (what followed is the clean-up's)."""
    out, inside = [], False
    for line in text.splitlines():
        line = line.rstrip("\r")
        if line.startswith(f"LAB-BEGIN {name}"):
            out, inside = [], True
            continue
        if not inside:
            continue
        if line.startswith(f"LAB-END {name} ") or line.startswith("LAB-DONE"):
            break
        out.append(line)
        if LAB_FAIL.search(line):
            break
    return out[-n:]


def durations(consoles):
    """Seconds each scenario took: the longest of its VMs' (LAB-END)."""
    secs = {}
    for text in consoles:
        for m in re.finditer(r"LAB-END (\S+) rc=\d+ secs=(\d+)", text):
            secs[m.group(1)] = max(secs.get(m.group(1), 0), int(m.group(2)))
    return secs


def cpu_shares(consoles):
    """Where each VM's CPU went in each scenario (LAB-END's cpu=), as
    "user/system/idle" percentages: {name: ["vm0 20/70/10", ...]}."""
    shares = {}
    for vm, text in enumerate(consoles):
        for m in re.finditer(r"LAB-END (\S+) rc=\d+ secs=\d+ cpu=user:(\d+),system:(\d+),idle:(\d+)", text):
            ticks = [int(x) for x in m.groups()[1:]]
            total = sum(ticks) or 1
            shares.setdefault(m.group(1), []).append(
                f"vm{vm} " + "/".join(str(round(100 * t / total)) for t in ticks))
    return shares


# Reports in Lustre's own code that its unmodified modules make on the lab
# kernel whatever LNet runs under them: (name, patterns a report's lines
# must all match). A report that names a module of LNet's is never one.
LUSTRE_KNOWN = [
    # osd-wbcfs writes its local objects with kernel_write(), which takes
    # sb_writers again under local_oid_storage_init's transaction: lockdep
    # flags the nested read of the same percpu rwsem at every target mount.
    ("osd-wbcfs sb_writers taken twice in local_oid_storage_init",
     [r"possible recursive locking detected", r"sb_writers", r"osd_write\+\S+ \[osd_wbcfs\]",
      r"local_oid_storage_init\+\S+ \[obdclass\]"]),
    # Lustre's own ko2iblnd (on the Lustre node of a clnet lab): its
    # kiblnd_startup calls lnet_get_link_status(), which takes rtnl_mutex,
    # under write_lock_irqsave(&kib_global_lock). A sleep in atomic context,
    # reported twice (DEBUG_ATOMIC_SLEEP, lockdep) at every o2ib net add.
    # Its frames are Lustre's lnet.ko and ko2iblnd.ko, which share our
    # modules' names: kiblnd_startup is a function of Lustre's ko2iblnd
    # only (ours has o2iblnd_startup).
    ("Lustre's ko2iblnd sleeps under kib_global_lock in kiblnd_startup",
     [r"BUG: (sleeping function called from invalid context|Invalid wait context)",
      r"lnet_get_link_status\+\S+ \[lnet\]", r"kiblnd_startup\+\S+ \[ko2iblnd\]"], True),
    # Lustre's own LNet (clnet): lnet_peer_data_present merges two peer
    # objects that turn out to be one node, taking both lp_locks with no
    # nesting annotation, in its discovery thread (lnet_peer_discovery is
    # a function of Lustre's lnet.ko only). Its discovery meets this when
    # a Multi-Rail node reached it from two NIDs before it knew they were
    # one node's, as a Lustre node's pushes do.
    ("Lustre's discovery nests two peers' lp_lock in lnet_peer_data_present",
     [r"possible recursive locking detected", r"&lp->lp_lock",
      r"lnet_peer_discovery\+\S+ \[lnet\]"], True),
]
# Leaks of Lustre's own code, reported once its module is gone (its frames
# are bare addresses): (name, patterns every object's backtrace matches).
LUSTRE_KNOWN_LEAKS = [
    # PtlRPC's ptlrpc_pending: percpu_ref_init() at load, percpu_ref_kill()
    # at unload, never percpu_ref_exit(), so its 64-byte data stays. No
    # module of LNet's uses a percpu_ref.
    ("ptlrpc_pending's percpu_ref data (no percpu_ref_exit)",
     [r"^\s*percpu_ref_init\+\S+\n\s*0xffffffff[0-9a-f]+\n", r"do_init_module"]),
]
KMEMLEAK_COUNT = re.compile(r"kmemleak: (\d+) new suspected memory leaks")
# The leak scan /init runs after scenarios (lib.sh lab_kmemleak_scan_idle).
LEAK_AFTER = re.compile(r"LAB-LEAK after scenarios ([^:]*):")
LNET_FRAME = re.compile(r"\[(lnet|ksocklnd|ko2iblnd|lnet_ulp)\]")
# Lines of one report, from its first line to the end of its backtrace.
REPORT_END = re.compile(r"</TASK>|---\[ end trace|^LAB-")


def lustre_known(lines):
    """Line indexes of reports in Lustre's own code (LUSTRE_KNOWN and
    LUSTRE_KNOWN_LEAKS), each with the report's name: {index: name}."""
    excused, i = {}, 0
    count = None  # the kernel's latest kmemleak count since a LAB- line
    while i < len(lines):
        if lines[i].startswith("LAB-LEAK") and not LEAK_TRANSIENT.match(lines[i]):
            end = i + 1
            while end < len(lines) and not lines[end].startswith("LAB-"):
                end += 1
            report = lines[i + 1:end]
            name = lustre_leak(report)
            if name:
                excused.update(dict.fromkeys(range(i, end), name))
                # That scan's count, printed before it: Lustre's too when it
                # counts these objects and no others.
                objects = sum(1 for r in report if r.startswith("unreferenced object"))
                if count is not None and int(KMEMLEAK_COUNT.search(lines[count]).group(1)) == objects:
                    excused[count] = name
            count, i = None, end
            continue
        if lines[i].startswith("LAB-"):
            count = None
        elif KMEMLEAK_COUNT.search(lines[i]):
            count = i
            i += 1
            continue
        if not SPLAT.search(lines[i]):
            i += 1
            continue
        end = i + 1
        while end < len(lines) and end - i < 200 and not REPORT_END.search(lines[end]):
            end += 1
        text = "\n".join(lines[i:end + 1])
        for name, pats, *own_lnet in LUSTRE_KNOWN:
            # Frames of Lustre's own LNet count when the patterns name a
            # function only it has.
            if (own_lnet or not LNET_FRAME.search(text)) and all(re.search(p, text) for p in pats):
                excused.update(dict.fromkeys(range(i, end + 1), name))
                break
        i = end + 1 if i in excused else i + 1
    return excused


def lustre_leak(report):
    """The LUSTRE_KNOWN_LEAKS name that every object of a kmemleak report
    (its lines) matches, or None."""
    text = "\n".join(report) + "\n"
    objects = re.split(r"^(?=unreferenced object)", text, flags=re.M)
    objects = [o for o in objects if o.startswith("unreferenced object")]
    if not objects or LNET_FRAME.search(text):
        return None
    for name, pats in LUSTRE_KNOWN_LEAKS:
        if all(all(re.search(p, o, re.M) for p in pats) for o in objects):
            return name
    return None


def judge(scenarios, consoles, timed_out, notes=None):
    """Per-scenario verdicts from the consoles: {name: [reasons]}. Reports
    of Lustre's own code (LUSTRE_KNOWN) fail nothing: `notes` gets a line
    for each, as lockdep checks nothing more on that VM after one."""
    verdict = {s: [] for s in scenarios}
    for vm, text in enumerate(consoles):
        current = None
        ended = set()
        done = False
        report = None  # a leak report's lines go into the verdict with it
        lines = [line.rstrip("\r") for line in text.splitlines()]
        excused = lustre_known(lines)
        for n, line in enumerate(lines):
            if n in excused:
                if KMEMLEAK_COUNT.search(line):
                    continue
                if notes is not None and line.startswith("LAB-LEAK"):
                    notes.append(f"vm{vm}: Lustre's own leak, not LNet's ({excused[n]}), {line}")
                elif notes is not None and (n - 1) not in excused:
                    notes.append(f"vm{vm}: Lustre's own report, not LNet's ({excused[n]}): "
                                 f"lockdep is off on vm{vm} from {line.split(']')[0].strip('[ ')} s")
                continue
            if report is not None:
                if not line.startswith("LAB-") and len(report) < LEAK_LINES:
                    report.append(f"vm{vm}:   {line.strip()}")
                    continue
                report = None
            m = re.match(r"LAB-BEGIN (\S+)", line)
            if m:
                current = m.group(1)
                continue
            m = re.match(r"LAB-END (\S+) rc=(\d+)", line)
            if m:
                ended.add(m.group(1))
                if m.group(2) != "0":
                    verdict.setdefault(m.group(1), []).append(f"vm{vm}: exit status {m.group(2)}")
                current = None
                continue
            if line.startswith("LAB-DONE"):
                done = True
            if LEAK_TRANSIENT.match(line):
                if notes is not None:
                    first = [x[2:].strip() for x in lines[n + 1:n + 40] if x.startswith("~ ")]
                    trace = [t for t in first if re.match(r"\w+\+0x", t)][:8]
                    notes.append(f"vm{vm}: kmemleak's transient, not a leak: {line.strip()} "
                                 + " < ".join(trace))
                continue
            if KMEMLEAK_COUNT.search(line):
                after = next((x for x in lines[n + 1:] if x.startswith("LAB-LEAK")), "")
                # The report that follows fails the scenarios it names: a
                # scan after a scenario prints its count in the next one.
                # A transient one fails nothing.
                if LEAK_AFTER.match(after) or LEAK_TRANSIENT.match(after):
                    continue
            bad = SPLAT.search(line) or LAB_FAIL.search(line)
            if bad:
                # A report outside any scenario (boot, final leak scan)
                # fails the last one that ran.
                who = [current or (scenarios[-1] if scenarios else "boot")]
                m = LEAK_AFTER.match(line)
                if m:
                    who = [w for w in m.group(1).split() if w in verdict] or who
                for w in who:
                    verdict.setdefault(w, []).append(f"vm{vm}: {line.strip()}")
                if line.startswith("LAB-LEAK"):
                    report = verdict[who[0]]
        for s in scenarios:
            if s not in ended:
                verdict[s].append(f"vm{vm}: did not finish" + (" (time limit)" if timed_out else ""))
        if not done and ended >= set(scenarios):
            verdict[scenarios[-1]].append(f"vm{vm}: VM did not reach the end" + (" (time limit)" if timed_out else ""))
    return verdict


# LNet message types (lnet.msg_type) and socklnd frame types (lnet.ksm_type).
LNET_MSG = {"0": "ACK", "1": "PUT", "2": "GET", "3": "REPLY", "4": "HELLO"}
KSOCK_MSG = {"0x000000c0": "NOOP", "0x000000c1": ""}


def frame_kind(ksm, msg, ib, expert):
    """The kind of an LNet frame's message that Wireshark's dissector
    complained about: the msg_type its complaint names, else the frame's
    last message."""
    m = re.search(r"msg_type:(\d+)", expert)
    last = lambda f: f.split(",")[-1] if f else ""
    t = m.group(1) if m else last(msg)
    kind = LNET_MSG.get(t, f"type {t}") if t else ""
    k = KSOCK_MSG.get(last(ksm), last(ksm))
    if last(ib):
        kind = f"o2ib {last(ib)} {kind}".strip()
    return " ".join(x for x in (k, kind) if x) or "?"


def judge_wire(rails):
    """Each rail's tshark rows ({nic: [ip.src|ksm_type|msg_type|ib.type|
    malformed|expert message]}): a summary line per rail, and the problems.
    Kinds are compared over all rails: a kind may cross one rail only."""
    counts = {}  # (ours?, kind) -> [frames, marked malformed]
    summary, problems = [], []
    for nic, rows in sorted(rails.items()):
        ours = f"10.{nic + 1}.0.1"
        frames, marked = {True: 0, False: 0}, {True: 0, False: 0}
        for row in rows:
            src, ksm, msg, ib, bad, expert = (row.split("|") + [""] * 6)[:6]
            side = src == ours
            c = counts.setdefault((side, frame_kind(ksm, msg, ib, expert)), [0, 0])
            c[0] += 1
            c[1] += bool(bad or expert)
            frames[side] += 1
            marked[side] += bool(bad or expert)
        summary.append(f"rail{nic}: {frames[True]} LNet frames of ours ({marked[True]} marked), "
                       f"{frames[False]} of Lustre's ({marked[False]} marked)")
        if frames[True] == 0 or frames[False] == 0:
            problems.append(f"rail{nic}: no LNet frames of {'ours' if not frames[True] else 'Lustre'} decoded")
    for (o, kind), (n, bad) in sorted(counts.items()):
        theirs = counts.get((False, kind), [0, 0])
        if o and bad and not theirs[1]:
            problems.append(f"{bad} of our {n} {kind} frames marked malformed, "
                            f"none of Lustre's {theirs[0]}")
    return summary, problems


def wire_check(boot):
    """Decodes our node's side of each rail of a mixed lab with Wireshark's
    LNet dissector. Returns (summary lines, problems): a problem is a kind
    of message of ours that it marks malformed while Lustre's own messages
    of that kind are never marked (it marks every PUT of either, alike)."""
    if not shutil.which("tshark"):
        return [], ["tshark not found (scripts/setup.sh installs it)"]
    rails, problems = {}, []
    for nic in range(boot.nics):
        path = boot.pcap(nic)
        if not path.exists():
            problems.append(f"rail{nic}: nothing captured")
            continue
        r = subprocess.run(
            ["tshark", "-r", str(path), "-Y", "lnet", "-T", "fields", "-E", "separator=|",
             "-e", "ip.src", "-e", "lnet.ksm_type", "-e", "lnet.msg_type", "-e", "lnet.ib.type",
             "-e", "_ws.malformed", "-e", "_ws.expert.message"],
            capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            problems.append(f"rail{nic}: tshark failed: {r.stderr.strip()[:200]}")
            continue
        rails[nic] = r.stdout.splitlines()
    summary, found = judge_wire(rails)
    return summary, problems + found


def boot_time(text):
    m = re.search(r"LAB-BOOTED vm=\d+ uptime=([\d.]+)", text)
    return float(m.group(1)) if m else None


def clock_of(text):
    """The clocksource a VM booted with (its LAB-BOOTED line), or None."""
    m = re.search(r"LAB-BOOTED vm=\d+ .*\bclock=(\S+)", text)
    return m.group(1) if m else None


def clock_problems(consoles):
    """A line for each VM whose clock is not the TSC: its hrtimers (tc tbf,
    netem, every timeout) then fire only on ticks, so its figures are not
    to be trusted. At init the TSC may still be tsc-early, before its
    refined calibration."""
    return [f"vm{vm}: clocksource {c}, not tsc: timers fire only on ticks"
            for vm, c in enumerate(map(clock_of, consoles)) if c not in (None, "tsc", "tsc-early")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", help="scenario names (tests/vm/NAME.sh); default: all")
    ap.add_argument("--out", default=str(TOP / "lab-out"), help="consoles and initramfs go here")
    ap.add_argument("--show", action="store_true", help="print each console when done")
    ap.add_argument("--follow", action="store_true", help="print consoles live, prefixed by VM")
    ap.add_argument("--perf", metavar="SRC", default=None,
                    help="boot the perf kernel (scripts/build-kernel.sh perf) with the modules built in SRC for it")
    ap.add_argument("--kernel-filter", default=None,
                    help="with --follow: show only kernel lines matching this regex (and any splat)")
    args = ap.parse_args()

    # Benchmarks (bench_*.sh) print figures and run only when named, as do
    # scenarios whose header says `named=1`.
    names = args.scenarios or sorted(
        p.stem for p in TESTS.glob("*.sh")
        if not p.name.startswith(("lib", "bench_")) and not parse_header(p)["named"])
    groups = {}
    debs = lustretests = False
    for n in names:
        path = TESTS / f"{n}.sh"
        if not path.exists():
            sys.exit(f"lab: no scenario {path}")
        lab = parse_header(path)
        key = (lab["vms"], lab["nics"], lab["lustre"], lab["lustrefs"], lab["clnet"])
        g = groups.setdefault(key, {"names": [], "timeout": 60})
        g["names"].append(n)
        g["timeout"] += lab["timeout"]
        debs = debs or bool(lab["debs"])
        lustretests = lustretests or bool(lab["lustretests"])

    kd = kdir()
    src = TOP
    if args.perf:
        kd = Path(subprocess.check_output(
            ["bash", "-c", ". scripts/env.sh && lnet_perf_kdir"], cwd=TOP, text=True).strip())
        src = Path(args.perf)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    initrd = build_initramfs(kd, out, src, bench=bool(args.perf), debs=debs)
    lustre_initrd = None
    if any(k[2] for k in groups):
        bundle = lustre_peer()
        lustre_initrd = (bundle, build_lustre_initramfs(bundle, out))
    lfs_initrd = None
    if any(k[3] or k[4] for k in groups):
        lfs_initrd = build_lustre_fs_initramfs(kd, out, lustre_fs(), src, tests=lustretests)

    passed = failed = 0
    for (nvms, nics, nlustre, lfs, clnet), g in sorted(groups.items()):
        name = (f"boot-{nvms}vm-{nics}nic" + (f"-{nlustre}lustre" if nlustre else "")
                + ("-lfs" if lfs else "") + ("-clnet" if clnet else ""))
        work = out / name
        work.mkdir(exist_ok=True)
        which = f" ({nlustre} of them Lustre)" if nlustre else ""
        which += " (the last on Lustre's C LNet)" if clnet else ""
        log(f"lab: booting {nvms} VM(s){which} x {nics} NIC(s) for: {' '.join(g['names'])}")
        lustre = (nlustre, *lustre_initrd) if nlustre else None
        # A Lustre file system node needs room for its servers' threads
        # and its targets' loop files.
        boot = Boot(kd, lfs_initrd if lfs or clnet else initrd, work, nvms, nics, g["names"], g["timeout"],
                    mem="2G" if lfs else "1G" if clnet else "384M", lustre=lustre, perf=bool(args.perf),
                    clnet=bool(clnet))
        kfilter = re.compile(args.kernel_filter) if args.kernel_filter else None
        consoles = boot.run(follow=args.follow, kernel_filter=kfilter)
        times = [boot_time(c) for c in consoles]
        log(f"lab: boot took {boot.elapsed:.1f}s wall; guest boot to init: "
            + ", ".join(f"vm{i} {t:.1f}s" if t is not None else f"vm{i} ?" for i, t in enumerate(times)))
        if args.show:
            for vm, c in enumerate(consoles):
                log(f"----- console vm{vm} -----\n{c}")
        secs = durations(consoles)
        notes = []
        verdicts = judge(g["names"], consoles, boot.timed_out, notes)
        for note in notes:
            log(f"lab: {note}")
        for p in clock_problems(consoles):
            # A benchmark's figures would be wrong; a test only runs slower.
            if args.perf:
                for reasons in verdicts.values():
                    reasons.append(p)
            else:
                log(f"lab: warning: {p}")
        cpu = cpu_shares(consoles)
        for name, reasons in verdicts.items():
            took = f" ({secs[name]} s)" if name in secs else ""
            if name in cpu:
                took += f" cpu user/system/idle %: {', '.join(cpu[name])}"
            if reasons:
                failed += 1
                log(f"FAIL {name}{took}")
                for r in reasons[:20]:
                    log(f"    {r}")
                for vm, c in enumerate(consoles):
                    for line in scenario_tail(c, name):
                        log(f"    vm{vm}| {line}")
                log(f"    consoles: {work}")
            else:
                passed += 1
                log(f"ok   {name}{took}")
        # A lab of Lustre nodes only (a benchmark's) has nothing of ours on the wire.
        if (nlustre and nlustre < nvms) or clnet:
            summary, problems = wire_check(boot)
            for line in summary:
                log(f"lab: wire: {line}")
            if problems:
                failed += 1
                log("FAIL wire check (Wireshark's LNet dissector)")
                for p in problems[:20]:
                    log(f"    {p}")
                log(f"    captures: {work}/rail*.pcap")
            else:
                passed += 1
                log("ok   wire check (Wireshark's LNet dissector)")
    log(f"lab: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
