#!/usr/bin/env bash
# Builds the lab kernel from Debian's linux-source-6.12 with kernel/lab.config
# on top of tinyconfig, in a cache directory outside the checkout. A second
# run with the same package version, config and toolchain does nothing.
set -euo pipefail
. "$(dirname "$0")/env.sh"

kdir=$(lnet_kdir)
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

mk() { make -s ARCH=x86_64 LLVM=-19 "$@"; }
mk tinyconfig
scripts/kconfig/merge_config.sh -m .config "$LNET_TOP/kernel/lab.config" >/dev/null
mk olddefconfig

# Every option of the fragment must have stuck.
bad=0
while IFS= read -r line; do
	case "$line" in CONFIG_*=*) ;; *) continue ;; esac
	opt=${line%%=*}
	val=${line#*=}
	if [ "$val" = n ]; then
		if grep -q "^$opt=" .config; then
			echo "kernel: $opt should be off but is $(grep "^$opt=" .config)" >&2
			bad=1
		fi
	elif ! grep -qx "$line" .config; then
		echo "kernel: $line did not stick (have: $(grep "^$opt=\|# $opt " .config || echo unset))" >&2
		bad=1
	fi
done <"$LNET_TOP/kernel/lab.config"
[ "$bad" = 0 ] || exit 1

mk -j"$(nproc)" bzImage modules
touch "$top/.built"
echo "kernel: built at $kdir"
# Trees built from an older config or toolchain are of no further use.
for old in "$LNET_CACHE"/kernel-*; do
	[ "$old" = "$top" ] || [ ! -d "$old" ] || { echo "kernel: removing stale $old"; rm -rf "$old"; }
done
