# Sourced by the project's scripts: toolchain paths and the lab kernel's
# cache location, keyed by kernel package version, patches, config and
# toolchain.
# shellcheck shell=bash
# CI may run with a trimmed environment: do not rely on HOME being set.
: "${HOME:=$(getent passwd "$(id -u)" | cut -d: -f6)}"
export HOME
export PATH="$HOME/.cargo/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin"
LNET_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LNET_CACHE=${LNET_CACHE:-$HOME/.cache/lnet-rs}
export LLVM=-19

lnet_kernel_key() {
	{
		dpkg-query -W -f='${Version}\n' linux-source-6.12
		cat "$LNET_TOP/kernel/lab.config"
		# None, while there are none.
		cat "$LNET_TOP"/kernel/patches/*.patch 2>/dev/null
		rustc -V
		bindgen --version 2>/dev/null | head -n 1
		clang-19 --version | head -n 1
	} | sha256sum | cut -c1-16
}

# The lab kernel's build tree (also the KDIR for out-of-tree modules);
# LNET_KDIR names another (bench.sh builds Lustre for the perf kernel so).
lnet_kdir() {
	echo "${LNET_KDIR:-$LNET_CACHE/kernel-$(lnet_kernel_key)/linux}"
}

# The perf lab kernel (kernel/perf.config on top, for scripts/bench.sh).
lnet_perf_kdir() {
	key=$({
		lnet_kernel_key
		cat "$LNET_TOP/kernel/perf.config"
	} | sha256sum | cut -c1-16)
	echo "$LNET_CACHE/perf-kernel-$key/linux"
}
