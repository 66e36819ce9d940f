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
failed=0
for corpus in fuzz/corpus/*/; do
	t=$(basename "$corpus")
	out=lab-out/fuzz/$t
	rm -rf "$out"
	mkdir -p "$out"
	cargo afl fuzz -i "$corpus" -o "$out" -V "$secs" "fuzz/target/release/$t" >"$out/afl.log" 2>&1 || {
		echo "fuzz $t: afl did not run (see $out/afl.log)"
		tail -n 5 "$out/afl.log"
		failed=1
		continue
	}
	stats=$out/default/fuzzer_stats
	execs=$(awk '/^execs_done/ {print $3}' "$stats")
	paths=$(awk '/^corpus_count/ {print $3}' "$stats")
	crashes=$(find "$out/default/crashes" -type f ! -name README.txt | wc -l)
	echo "fuzz $t: ${secs}s, $execs execs, corpus $paths, crashes $crashes"
	[ "$crashes" = 0 ] || failed=1
done
exit "$failed"
