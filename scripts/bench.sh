#!/usr/bin/env bash
# Benchmarks: figures, not pass/fail on speed. Sets up what is missing,
# builds the perf lab kernel once (kernel/perf.config: no checkers) and the
# modules for it apart from the checkout's, and runs the bench_* scenarios
# (tests/vm) on it; each prints ratios against a baseline measured in the
# same run. Arguments go to tests/lab/lab.py.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
bash scripts/setup.sh bench
bash scripts/build-kernel.sh perf
# Host: selection cost (criterion), each figure beside its baseline.
cargo bench -q -p lnet-core --bench select -- --noplot >/dev/null
# A report holds this run's figures only.
rm -rf lab-out/perf lab-out/bench
mkdir -p lab-out/bench
python3 - <<'PY' | tee lab-out/bench/host.txt
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
lnet_build_tools
# The sources (tracked and new, no build output) built for the perf kernel
# in a tree of their own: the checkout keeps the test kernel's modules.
src=lab-out/perf-src
rm -rf "$src"
mkdir -p "$src"
git ls-files -co --exclude-standard -z | tar -c --null -T - | tar -x -C "$src"
make -s -C "$src" KDIR="$(lnet_perf_kdir)" KRUSTFLAGS=-Dwarnings KCFLAGS=-Werror lab
# LNET_BENCHES="bench_scale bench_bandwidth" runs only those (before and
# after a change, say); by default every bench_* scenario.
if [ -n "${LNET_BENCHES:-}" ]; then
	read -ra benches <<<"$LNET_BENCHES"
else
	mapfile -t benches < <(cd tests/vm && ls bench_*.sh | sed 's/\.sh$//')
fi
# Lustre for the perf kernel (bench_lustre), by build-lustre.sh in a cache
# of its own: that script prunes every other build in its cache.
# Only when a chosen bench boots Lustre's modules.
lustre_benches=$(for b in "${benches[@]}"; do
	grep -lE '^# lab:.*(lustrefs|clnet)=1' "tests/vm/$b.sh" || true
done)
if [ -n "$lustre_benches" ]; then
	perf_kdir=$(lnet_perf_kdir)
	lkey=$({
		echo "$perf_kdir"
		sha256sum <scripts/build-lustre.sh
		ls ../shared/peers/lustre/lustre-release-*.tar.xz
	} | sha256sum | cut -c1-16)
	pcache=$LNET_CACHE/perf-lustre
	LUSTRE_FS=$(LNET_KDIR=$perf_kdir LNET_CACHE=$pcache LUSTRE_OUT=$pcache/lustre-$lkey \
		bash scripts/build-lustre.sh | tail -n 1)
	export LUSTRE_FS
fi
python3 tests/lab/lab.py --perf "$src" --out lab-out/perf "${benches[@]}" "$@"
grep -ah 'lab: bench:' lab-out/perf/boot-*/console-vm*.log | sed 's/^lab: //'
python3 scripts/bench_report.py lab-out/perf lab-out/bench
