#!/usr/bin/env bash
# Runs every test: host tests of the no_std core, lint and format checks,
# the module build, and every lab scenario in VMs. Sets up whatever a fresh
# machine lacks first (scripts/setup.sh, scripts/build-kernel.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

# Each step's wall time, said again at the end (CI shows the output's tail).
steps='' step_name='' step_t0=$SECONDS
step() {
	[ -z "$step_name" ] || steps="$steps $step_name $((SECONDS - step_t0))s,"
	step_name=$1 step_t0=$SECONDS
	[ "$1" = end ] || echo "== $1: $2"
}
trap 'step end; echo "== step times:${steps%,} (${SECONDS}s in all)"' EXIT

step setup "packages, toolchains, the lab kernel (cached)"
bash scripts/setup.sh
bash scripts/build-kernel.sh

step host "format, lint, unit and property tests"
cargo fmt --all -- --check
rustfmt --check --edition 2021 --config-path .rustfmt.toml lnet/lnet_main.rs socklnd/socklnd_main.rs o2iblnd/o2iblnd_main.rs
# lnet-core is also compiled as a module of each kernel crate: paths inside
# it must be relative (super::), never crate::.
if grep -rn 'crate::' rust/lnet-core/src; then echo "lnet-core must not use crate:: paths"; exit 1; fi
cargo clippy --workspace --all-targets -q -- -D warnings
# cargo's own exit status decides: a build error prints no "FAILED".
log=$(mktemp)
if ! cargo test --workspace -q >"$log" 2>&1; then
	cat "$log"
	echo "host tests failed"
	exit 1
fi
grep -E '^test result' "$log"
rm -f "$log"
# The host benchmarks still start (each runs once; figures: scripts/bench.sh).
cargo test -q -p lnet-core --benches >/dev/null

python3 tests/lab/test_lab.py
python3 tests/abi/abi_check.py --self-test
(cd fuzz && cargo fmt -- --check)

step fuzz "each parser and codec under AFL++ for ${LNET_FUZZ_SECONDS:-10}s"
bash scripts/fuzz.sh

step modules "build against $(lnet_kdir) (warnings are errors, clippy on)"
# objtool and modpost only warn; a warning of theirs fails the build too.
make -s clean >/dev/null
mkdir -p lab-out
# What a node installs first (make), staged by make modules_install, then
# the lab's test modules on top (make lab); the same flags, so nothing is
# rebuilt. depmod warns that a staging tree has no kernel of its own: its
# output is not the build's.
kflags=(CLIPPY=1 KRUSTFLAGS=-Dwarnings KCFLAGS=-Werror)
make -s "${kflags[@]}" 2>&1 | tee lab-out/build.log
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
rm -rf lab-out/install
if ! make -s "${kflags[@]}" modules_install INSTALL_MOD_PATH="$PWD/lab-out/install" >lab-out/install.log 2>&1; then
	cat lab-out/install.log
	exit 1
fi
installed=$(cd lab-out/install && find . -name '*.ko' | sort | tr '\n' ' ')
want="./lib/modules/$(cat "$(lnet_kdir)/include/config/kernel.release")/updates/kernel/net/lustre/"
want="${want}ko2iblnd.ko ${want}ksocklnd.ko ${want}lnet.ko "
if [ "$installed" != "$want" ]; then
	echo "make modules_install installed: $installed; expected: $want" >&2
	exit 1
fi
# depmod saw ksocklnd's need of lnet.ko where both were installed.
grep -q '^updates/kernel/net/lustre/ksocklnd.ko: updates/kernel/net/lustre/lnet.ko' \
	lab-out/install/lib/modules/*/modules.dep || { echo "modules.dep lacks ksocklnd -> lnet" >&2; exit 1; }
make -s "${kflags[@]}" lab 2>&1 | tee -a lab-out/build.log
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
if grep -i "warning" lab-out/build.log; then
	echo "module build printed warnings" >&2
	exit 1
fi
rm -f lab-out/build.log

step lustre "its own tree, unmodified, built against the lab kernel (cached)"
lustre=$(bash scripts/build-lustre.sh | tail -n 1)

step abi "our lnet.ko's C API against Lustre's headers and modules"
python3 tests/abi/abi_check.py "$(lnet_kdir)" "$lustre/tree" --work lab-out/abi \
	--symvers Module.symvers

step tools "userspace tools for the lab"
lnet_build_tools

step debs "the modules just built and the tools as Debian packages, for install_deb"
bash scripts/build-deb.sh

step lab "scenarios in VMs"
python3 tests/lab/lab.py "$@"
