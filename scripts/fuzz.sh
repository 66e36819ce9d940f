#!/usr/bin/env bash
# Coverage-guided fuzzing (AFL++ via cargo-afl) of lnet-core's parsers and
# codecs, each target for a bounded time (first argument, seconds; default
# 10). Fails if any target finds a crash; crashing inputs are kept under
# lab-out/fuzz/<target>/crashes. Seeds are in fuzz/corpus/<target>.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
secs=${1:-${LNET_FUZZ_SECONDS:-10}}

command -v cargo-afl >/dev/null || { echo "fuzz: cargo-afl missing: run scripts/setup.sh"; exit 1; }
(cd fuzz && cargo afl build --release -q)

export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_BENCH_UNTIL_CRASH=1
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
# One target per CPU at a time: each is a single process, and CI's step
# time halves on two cores.
fuzz_one() { # target corpus
	out=lab-out/fuzz/$1
	rm -rf "$out"
	mkdir -p "$out"
	cargo afl fuzz -i "$2" -o "$out" -V "$secs" "fuzz/target/release/$1" >"$out/afl.log" 2>&1 || {
		echo "fuzz $1: afl did not run (see $out/afl.log)"
		tail -n 5 "$out/afl.log"
		return 1
	}
	stats=$out/default/fuzzer_stats
	execs=$(awk '/^execs_done/ {print $3}' "$stats")
	paths=$(awk '/^corpus_count/ {print $3}' "$stats")
	crashes=$(find "$out/default/crashes" -type f ! -name README.txt | wc -l)
	echo "fuzz $1: ${secs}s, $execs execs, corpus $paths, crashes $crashes"
	[ "$crashes" = 0 ]
}

jobs_max=$(nproc)
mkdir -p lab-out/fuzz
targets=()
for corpus in fuzz/corpus/*/; do
	t=$(basename "$corpus")
	targets+=("$t")
	# Its verdict in its output's last line: the exit status of a job
	# that `wait -n` reaped is not kept.
	if fuzz_one "$t" "$corpus"; then echo rc=0; else echo rc=1; fi >"lab-out/fuzz/$t.out" 2>&1 &
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n || true
	done
done
wait
failed=0
for t in "${targets[@]}"; do
	sed '$d' "lab-out/fuzz/$t.out"
	[ "$(tail -n 1 "lab-out/fuzz/$t.out")" = rc=0 ] || failed=1
done
exit "$failed"
