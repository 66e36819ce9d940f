#!/usr/bin/env bash
# Builds the lab kernel from Debian's linux-source-6.12, with kernel/patches
# applied and kernel/lab.config on top of tinyconfig, in a cache directory
# outside the checkout. A second run with the same package version, patches,
# config and toolchain does nothing.
# `build-kernel.sh perf` builds the perf lab kernel instead (kernel/perf.config
# on top: no checkers), for scripts/bench.sh.
set -euo pipefail
. "$(dirname "$0")/env.sh"

fragments=("$LNET_TOP/kernel/lab.config")
kdir=$(lnet_kdir)
kind=kernel
if [ "${1:-}" = perf ]; then
	fragments+=("$LNET_TOP/kernel/perf.config")
	kdir=$(lnet_perf_kdir)
	kind=perf-kernel
fi
top=$(dirname "$kdir")
if [ -f "$top/.built" ] && [ -f "$kdir/arch/x86/boot/bzImage" ]; then
	echo "kernel: cached at $kdir"
	exit 0
fi

mkdir -p "$LNET_CACHE"
exec 9>"$LNET_CACHE/kernel.lock"
flock 9
if [ -f "$top/.built" ]; then
	echo "kernel: cached at $kdir"
	exit 0
fi

echo "kernel: building in $top (takes a while the first time)"
rm -rf "$top"
mkdir -p "$top"
tar -xf /usr/src/linux-source-6.12.tar.xz -C "$top"
mv "$top/linux-source-6.12" "$kdir"
cd "$kdir"
# The lab's fixes to the kernel (each patch says why).
shopt -s nullglob
for p in "$LNET_TOP"/kernel/patches/*.patch; do
	patch -s -p1 <"$p"
done

mk() { make -s ARCH=x86_64 LLVM=-19 "$@"; }
mk tinyconfig
# "is not set" lines only say what the check below expects unset: options
# that go with one turned off, some of them not booleans.
grep -hv '^# CONFIG_.* is not set$' "${fragments[@]}" >"$top/fragment.config"
scripts/kconfig/merge_config.sh -m .config "$top/fragment.config" >/dev/null
mk olddefconfig

# Every option of the fragments must have stuck, a later fragment's value
# (or "is not set") replacing an earlier one's.
declare -A want
order=()
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) opt=${line%%=*} val=${line#*=} ;;
	"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} val=n ;;
	*) continue ;;
	esac
	[ -n "${want[$opt]+set}" ] || order+=("$opt")
	want[$opt]=$val
done < <(cat "${fragments[@]}")
bad=0
for opt in "${order[@]}"; do
	val=${want[$opt]}
	if [ "$val" = n ]; then
		if grep -q "^$opt=" .config; then
			echo "kernel: $opt should be off but is $(grep "^$opt=" .config)" >&2
			bad=1
		fi
	elif ! grep -qx "$opt=$val" .config; then
		echo "kernel: $opt=$val did not stick (have: $(grep "^$opt=\|# $opt " .config || echo unset))" >&2
		bad=1
	fi
done
[ "$bad" = 0 ] || exit 1

mk -j"$(nproc)" bzImage modules
touch "$top/.built"
echo "kernel: built at $kdir"
# Trees built from an older config or toolchain are of no further use.
for old in "$LNET_CACHE/$kind"-*; do
	[ "$old" = "$top" ] || [ ! -d "$old" ] || { echo "kernel: removing stale $old"; rm -rf "$old"; }
done
