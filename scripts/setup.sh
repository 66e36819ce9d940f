#!/usr/bin/env bash
# Installs everything the build, the lab and the tests need on a fresh
# Debian bookworm machine (with `bench`, what the benchmarks need too).
# Idempotent: a second run installs nothing.
set -euo pipefail

APT_PKGS=(
	linux-source-6.12 clang-19 lld-19 llvm-19 libclang-19-dev
	bc bison flex libelf-dev libssl-dev cpio kmod make xz-utils patch
	# libc.a: the lab tools are linked static (lnet_build_tools).
	libc6-dev
	qemu-system-x86 busybox-static iproute2 util-linux python3 tshark
	# yaml for Lustre's test framework in the lab (sanity_lnet.sh).
	python3-yaml
)
# `setup.sh bench` (scripts/bench.sh): the benchmarks' plots, and
# perftest's ib_write_bw with the rxe verbs provider for the o2ib baseline.
if [ "${1:-}" = bench ]; then
	APT_PKGS+=(gnuplot-nox perftest ibverbs-providers)
fi

missing=()
for p in "${APT_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

. "$(dirname "$0")/env.sh"
if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
	echo "setup: adding rust-src"
	rustup component add rust-src
fi
for c in rustfmt clippy; do
	rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
done
if ! command -v bindgen >/dev/null 2>&1; then
	echo "setup: installing bindgen-cli"
	cargo install --locked bindgen-cli
fi
# AFL++ for the fuzz targets (scripts/fuzz.sh); its runtime is built per
# rustc version.
if ! command -v cargo-afl >/dev/null 2>&1; then
	echo "setup: installing cargo-afl"
	cargo install --locked cargo-afl
fi
if ! out=$(cargo afl config --build 2>&1) && ! grep -q "already built" <<<"$out"; then
	echo "$out" >&2
	exit 1
fi
echo "setup: toolchain ready"
