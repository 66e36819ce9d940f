#!/usr/bin/env bash
# Benchmarks: figures, not pass/fail on speed. Builds what the lab needs
# and runs the bench_* scenarios (tests/vm), which print ratios against a
# baseline measured in the same run. Set-up is scripts/setup.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
# Host: selection cost (criterion), each figure beside its baseline.
cargo bench -q -p lnet-core --bench select -- --noplot >/dev/null
python3 - <<'PY'
import json, pathlib
root = pathlib.Path("target/criterion")
def ns(group, bench):
    return json.loads((root / group / bench / "new" / "estimates.json").read_text())["mean"]["point_estimate"]
picks = ", ".join(f"{n}x{n} {ns('pick_nis', f'{n}x{n}'):.0f} ns" for n in (1, 4, 16))
print(f"bench: selection, one pick (lookup and rankings), local x peer NIs: {picks} (goal: 4x4 <= 50 ns)")
for peers in (1, 1000, 100000):
    i, w = ns("pick_4x4_peers", f"index/{peers}"), ns("pick_4x4_peers", f"walk/{peers}")
    print(f"bench: selection, 4x4 pick with {peers} peers known: {i:.0f} ns by the NID index, "
          f"{w:.0f} ns by a walk of every peer NI (baseline): {i / w:.3f} x")
PY
make -s CLIPPY=1 KRUSTFLAGS=-Dwarnings KCFLAGS=-Werror
cargo build --release -q -p lnetctl --bins
mapfile -t benches < <(cd tests/vm && ls bench_*.sh | sed 's/\.sh$//')
python3 tests/lab/lab.py "${benches[@]}" "$@"
grep -ah 'lab: bench' lab-out/boot-*/console-vm*.log | sed 's/^lab: //'
