#!/usr/bin/env bash
# Benchmarks: figures, not pass/fail on speed. Builds what the lab needs
# and runs the bench_* scenarios (tests/vm), which print ratios against a
# baseline measured in the same run. Set-up is scripts/setup.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
make -s CLIPPY=1 KRUSTFLAGS=-Dwarnings KCFLAGS=-Werror
cargo build --release -q -p lnetctl --bins
mapfile -t benches < <(cd tests/vm && ls bench_*.sh | sed 's/\.sh$//')
python3 tests/lab/lab.py "${benches[@]}" "$@"
grep -ah 'lab: bench' lab-out/boot-*/console-vm*.log | sed 's/^lab: //'
