#!/usr/bin/env bash
# Says whether a kernel build tree can build lnet-rs's modules, and what it
# lacks when it cannot: Rust support, the rustc and bindgen it was built
# with (a module's Rust must come from the same compiler as the kernel's
# crate), and for ko2iblnd the RDMA stack with RDMA CM.
# Usage: kernel-check.sh KDIR
set -uo pipefail
kdir=${1:?usage: kernel-check.sh KDIR}
config=$kdir/.config
fail() {
	echo "lnet-rs: $kdir: $*" >&2
	exit 1
}
[ -f "$config" ] || fail "no .config: not a configured kernel build tree (install its headers package, or build it)"
grep -q '^CONFIG_RUST=y' "$config" ||
	fail "CONFIG_RUST is not set: lnet-rs's modules are Rust; a kernel built with Rust support is needed (see README, \"Kernels\")"
want=$(sed -n 's/^CONFIG_RUSTC_VERSION_TEXT="\(.*\)"/\1/p' "$config")
have=$(rustc -V 2>/dev/null) || fail "no rustc on PATH; the kernel was built with: $want"
[ "$want" = "$have" ] ||
	fail "the kernel was built with $want, but rustc on PATH is $have: Rust modules need the same compiler"
command -v bindgen >/dev/null || fail "no bindgen on PATH (the kernel was built with $(sed -n 's/^CONFIG_BINDGEN_VERSION_TEXT="\(.*\)"/\1/p' "$config"))"
sysroot=$(rustc --print sysroot)
[ -d "$sysroot/lib/rustlib/src/rust/library/core" ] ||
	fail "rustc's rust-src component is missing (rustup component add rust-src)"
if ! grep -q '^CONFIG_INFINIBAND=[ym]' "$config" || ! grep -q '^CONFIG_INFINIBAND_ADDR_TRANS=y' "$config"; then
	echo "lnet-rs: $kdir: no InfiniBand with RDMA CM (CONFIG_INFINIBAND, CONFIG_INFINIBAND_ADDR_TRANS): ko2iblnd.ko is not built" >&2
fi
exit 0
