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

# The userspace tools the lab's VMs run (lnetctl, lctl and the test
# programs), into target/$LNET_TOOLS_TARGET/release. Static and not
# position-independent: under TCG with the lab kernel's checkers, each page
# a process faults in is dear, and a dynamic binary's loader and libraries
# fault in hundreds (lnetctl took 0.5 s to start, busybox 0.2 s).
LNET_TOOLS_TARGET=x86_64-unknown-linux-gnu
lnet_build_tools() {
	CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" \
		cargo build --release -q -p lnetctl --bins --target "$LNET_TOOLS_TARGET"
}
