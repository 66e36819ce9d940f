#!/usr/bin/env bash
# Runs every test: host tests of the no_std core, lint and format checks,
# the module build, and every lab scenario in VMs. Sets up whatever a fresh
# machine lacks first (scripts/setup.sh, scripts/build-kernel.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

bash scripts/setup.sh
bash scripts/build-kernel.sh

echo "== host: format, lint, unit and property tests"
cargo fmt --all -- --check
rustfmt --check --edition 2021 --config-path .rustfmt.toml lnet/lnet_main.rs
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

python3 tests/lab/test_lab.py
(cd fuzz && cargo fmt -- --check)

echo "== fuzz: each parser and codec under AFL++ for ${LNET_FUZZ_SECONDS:-10}s"
bash scripts/fuzz.sh

echo "== modules: build against $(lnet_kdir) (warnings are errors, clippy on)"
make -s CLIPPY=1 KRUSTFLAGS=-Dwarnings KCFLAGS=-Werror

echo "== lab: scenarios in VMs"
python3 tests/lab/lab.py "$@"
