#!/usr/bin/env bash
# Builds lnet-rs's Debian packages with dpkg-deb alone into lab-out/deb/:
#
#   lnet-rs-modules-REL_VER_amd64.deb  lnet.ko, ksocklnd.ko (and ko2iblnd.ko
#       where the kernel has RDMA CM) built for KDIR (default: the lab
#       kernel), under /lib/modules/REL/updates/kernel/net/lustre
#   lnet-rs-dkms_VER_all.deb  the sources `make modules` needs, in
#       /usr/src/lnet-rs-VER, built by DKMS for each kernel that can
#   lnet-rs-utils_VER_amd64.deb  lnetctl, lnet-rs-lctl (Lustre's lctl
#       fault injection commands only), lnet.service, /etc/lnet.conf, man
#       pages and bash completions
#
# VER is the workspace's version (Cargo.toml). The modules are the ones
# already built in the tree when they are for KDIR's release (make, or
# scripts/test.sh), else built from the dkms package's own file list in
# lab-out/deb/build (which --from-source forces: it checks that list).
# The tools are lnet_build_tools's (static), built if missing.
# Re-runnable: each run starts its staging afresh.
#
# Usage: [KDIR=...] build-deb.sh [--from-source]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

from_source=0
case "${1:-}" in
--from-source) from_source=1 ;;
'') ;;
*)
	echo "usage: [KDIR=...] $0 [--from-source]" >&2
	exit 2
	;;
esac

KDIR=${KDIR:-$(lnet_kdir)}
top=$PWD
out=$top/lab-out/deb
work=$out/build
ver=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
[ -n "$ver" ] || { echo "build-deb: no version in Cargo.toml's [workspace.package]" >&2; exit 1; }
[ -f "$KDIR/include/config/kernel.release" ] || { echo "build-deb: $KDIR: not a built kernel tree" >&2; exit 1; }
rel=$(cat "$KDIR/include/config/kernel.release")
arch=$(dpkg --print-architecture)
maint="lnet-rs developers <lnet-rs@invalid>"
tools=$top/target/$LNET_TOOLS_TARGET/release

rm -rf "$work"
mkdir -p "$work" "$out"
# Packages of an older version or another kernel's from an earlier run
# stay; this run's are rebuilt.
rm -f "$out"/lnet-rs-modules-"$rel"_*.deb "$out"/lnet-rs-dkms_*.deb "$out"/lnet-rs-utils_*.deb

# control FILE FIELD...: a control file; Installed-Size is its tree's.
control() {
	local dir=$1
	shift
	mkdir -p "$dir/DEBIAN"
	{
		printf '%s\n' "$@"
		echo "Installed-Size: $(du -sk --exclude=DEBIAN "$dir" | cut -f1)"
		echo "Maintainer: $maint"
	} >"$dir/DEBIAN/control"
}

# script DIR NAME SRC: maintainer script NAME from packaging/deb/SRC.
script() {
	sed -e "s/@VERSION@/$ver/g" -e "s/@KRELEASE@/$rel/g" "packaging/deb/$3" >"$1/DEBIAN/$2"
	chmod 755 "$1/DEBIAN/$2"
}

# copyright DIR PACKAGE: the package's copyright file.
copyright() {
	mkdir -p "$1/usr/share/doc/$2"
	cat >"$1/usr/share/doc/$2/copyright" <<-EOF
		lnet-rs: LNet, Lustre's networking layer, as Rust-for-Linux modules.
		License: GPL-2.0-only (/usr/share/common-licenses/GPL-2).
	EOF
}

pack() {
	dpkg-deb --root-owner-group -Zxz --build "$1" "$out/$2" >/dev/null
	echo "build-deb: $out/$2"
}

# The sources DKMS builds: what `make modules` reads, tracked files only.
src_files() {
	git ls-files -- lnet socklnd o2iblnd rust/kapi rust/lnet-core include \
		scripts/kernel-check.sh scripts/gen-bindings.sh Makefile Kbuild dkms.conf
}

# --- lnet-rs-dkms
pkg=$work/dkms
srcdir=$pkg/usr/src/lnet-rs-$ver
mkdir -p "$srcdir"
src_files | tar -cf - -T - | tar -xf - -C "$srcdir"
grep -q "^PACKAGE_VERSION=\"$ver\"\$" "$srcdir/dkms.conf" ||
	{ echo "build-deb: dkms.conf's PACKAGE_VERSION is not $ver" >&2; exit 1; }
copyright "$pkg" lnet-rs-dkms
control "$pkg" \
	"Package: lnet-rs-dkms" \
	"Version: $ver" \
	"Architecture: all" \
	"Section: kernel" \
	"Priority: optional" \
	"Depends: dkms, make" \
	"Provides: lnet-rs-modules" \
	"Description: LNet (Lustre networking) as Rust-for-Linux modules, DKMS sources" \
	" lnet-rs's lnet.ko, ksocklnd.ko and ko2iblnd.ko, built by DKMS for each" \
	" installed kernel that can take them: Linux 6.12 with Rust support, and" \
	" the rustc, rust-src, bindgen and clang that kernel was built with." \
	" A kernel that cannot is skipped, with the reason."
script "$pkg" postinst dkms.postinst
script "$pkg" prerm dkms.prerm
pack "$pkg" "lnet-rs-dkms_${ver}_all.deb"

# --- the modules for KDIR: the tree's, or built from the dkms sources
kos=()
vermagic_ok() {
	[ -f "$1" ] && [ "$(modinfo -F vermagic "$1" | cut -d' ' -f1)" = "$rel" ]
}
if [ "$from_source" = 0 ] && vermagic_ok lnet/lnet.ko && vermagic_ok socklnd/ksocklnd.ko; then
	moddir=$top
else
	echo "build-deb: building the modules for $rel from the dkms package's sources"
	moddir=$work/modsrc
	cp -a "$srcdir" "$moddir"
	nice -n 19 make -s -C "$moddir" KDIR="$KDIR" modules
fi
for ko in lnet/lnet.ko socklnd/ksocklnd.ko o2iblnd/ko2iblnd.ko; do
	if [ -f "$moddir/$ko" ]; then
		vermagic_ok "$moddir/$ko" || { echo "build-deb: $moddir/$ko is not for $rel" >&2; exit 1; }
		kos+=("$moddir/$ko")
	fi
done
if grep -q '^CONFIG_INFINIBAND_ADDR_TRANS=y' "$KDIR/.config" && [ ${#kos[@]} != 3 ]; then
	echo "build-deb: ko2iblnd.ko missing, but $KDIR has RDMA CM" >&2
	exit 1
fi

pkg=$work/modules
dest=$pkg/lib/modules/$rel/updates/kernel/net/lustre
mkdir -p "$dest"
for ko in "${kos[@]}"; do
	# What kbuild's INSTALL_MOD_STRIP=1 does.
	"llvm-strip$LLVM" --strip-debug -o "$dest/$(basename "$ko")" "$ko"
done
copyright "$pkg" "lnet-rs-modules-$rel"
# Lustre's module packages put the same files at the same paths.
control "$pkg" \
	"Package: lnet-rs-modules-$rel" \
	"Version: $ver" \
	"Architecture: $arch" \
	"Section: kernel" \
	"Priority: optional" \
	"Depends: kmod" \
	"Provides: lnet-rs-modules" \
	"Conflicts: lustre-client-modules-$rel, lustre-server-modules-$rel" \
	"Description: LNet (Lustre networking) as Rust-for-Linux modules, for Linux $rel" \
	" lnet-rs's lnet.ko, ksocklnd.ko and, where the kernel has RDMA CM," \
	" ko2iblnd.ko, built for Linux $rel, where Lustre's packages put LNet's."
script "$pkg" postinst modules.postinst
script "$pkg" postrm modules.postrm
pack "$pkg" "lnet-rs-modules-${rel}_${ver}_$arch.deb"

# --- lnet-rs-utils
if [ ! -x "$tools/lnetctl" ] || [ ! -x "$tools/lctl" ] || [ ! -x "$tools/gen_docs" ]; then
	lnet_build_tools
fi
pkg=$work/utils
install -D -m 755 "$tools/lnetctl" "$pkg/usr/sbin/lnetctl"
# Our lctl does only fault injection: Lustre's lctl keeps its name.
install -D -m 755 "$tools/lctl" "$pkg/usr/sbin/lnet-rs-lctl"
install -D -m 644 packaging/lnet.service "$pkg/lib/systemd/system/lnet.service"
install -D -m 644 packaging/lnet.conf "$pkg/etc/lnet.conf"
"$tools/gen_docs" "$work/docs"
mkdir -p "$pkg/usr/share/man/man8" "$pkg/usr/share/bash-completion/completions"
for page in "$work"/docs/man8/*.8; do
	gz=$pkg/usr/share/man/man8/${page##*/}.gz
	gzip -9n <"$page" >"$gz"
done
install -m 644 "$work"/docs/bash-completion/* "$pkg/usr/share/bash-completion/completions/"
copyright "$pkg" lnet-rs-utils
control "$pkg" \
	"Package: lnet-rs-utils" \
	"Version: $ver" \
	"Architecture: $arch" \
	"Section: net" \
	"Priority: optional" \
	"Depends: kmod" \
	"Recommends: lnet-rs-modules" \
	"Conflicts: lustre-client-utils" \
	"Description: LNet (Lustre networking) tools for lnet-rs" \
	" lnetctl with Lustre's command lines and YAML, lnet-rs-lctl (the LNet" \
	" fault injection commands of Lustre's lctl), and lnet.service, which" \
	" brings LNet up from /etc/lnet.conf as Lustre's does."
printf '%s\n' /etc/lnet.conf >"$pkg/DEBIAN/conffiles"
script "$pkg" postinst utils.postinst
script "$pkg" postrm utils.postrm
pack "$pkg" "lnet-rs-utils_${ver}_$arch.deb"
