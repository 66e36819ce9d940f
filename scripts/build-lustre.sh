#!/usr/bin/env bash
# Builds Lustre, unmodified, from ../shared/peers/lustre's tarball against
# the lab kernel (scripts/build-kernel.sh) with the kernel's own toolchain
# (LLVM=-19: Lustre's configure honours it as Kbuild does): its client and
# server modules (on Lustre's memory-backed OSD, osd-wbcfs),
# its own libcfs.ko, lnet.ko and LNDs (the C side of every comparison), and
# its tools. Cached outside the checkout under a key of the kernel, the
# tarball and this script; a second run prints the bundle at once.
#
#   build-lustre.sh        prints the bundle's directory last:
#   modules/               every .ko Lustre built, plus sunrpc_addr.ko
#   lnet-modules.txt       which of them are Lustre's LNet (libcfs.ko stays
#                          Lustre's on lnet-rs too)
#   tree                   the configured tree (headers, config.h,
#                          Module.symvers, tools under lustre/utils ...)
set -euo pipefail
# Progress and errors on stderr: stdout is the bundle's path alone.
exec 3>&1 1>&2
. "$(dirname "$0")/env.sh"
SHARED=$(cd "$LNET_TOP/../shared/peers/lustre" && pwd)
TARBALL=$(ls "$SHARED"/lustre-release-*.tar.xz | head -n1)
KDIR=$(lnet_kdir)
JOBS=${JOBS:-$(nproc)}

deps() {
	local want=(autoconf automake libtool pkg-config m4 libyaml-dev libnl-3-dev
		libnl-genl-3-dev libkeyutils-dev libmount-dev libjson-c-dev
		libblkid-dev libselinux1-dev libssl-dev zlib1g-dev uuid-dev)
	local miss=()
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || miss+=("$p")
	done
	if [ ${#miss[@]} -gt 0 ]; then
		echo "lustre: installing ${miss[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null
	fi
}

key=$({
	lnet_kernel_key
	sha256sum <"$0"
	basename "$TARBALL"
} | sha256sum | cut -c1-16)
OUT=${LUSTRE_OUT:-$LNET_CACHE/lustre-$key}
if [ -f "$OUT/.done" ]; then
	echo "$OUT" >&3
	exit 0
fi
[ -f "$KDIR/arch/x86/boot/bzImage" ] || { echo "lustre: build the lab kernel first (scripts/build-kernel.sh)" >&2; exit 1; }
deps
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9
LT=$OUT/tree

# Lustre's own lnet.ko calls rpc_pton/rpc_ntop (net/sunrpc/addr.c); the lab
# kernel has no SUNRPC, so that one file is built as a module of its own,
# as the Lustre peer does. lnet-rs needs none of it.
sunrpc_addr() {
	local d=$OUT/sunrpc_addr
	[ -f "$d/sunrpc_addr.ko" ] && return
	mkdir -p "$d"
	{
		echo '#include <linux/module.h>'
		cat "$KDIR/net/sunrpc/addr.c"
		echo 'MODULE_LICENSE("GPL");'
		echo 'MODULE_DESCRIPTION("net/sunrpc/addr.c, for Lustre lnet.ko");'
	} >"$d/sunrpc_addr.c"
	echo 'obj-m := sunrpc_addr.o' >"$d/Kbuild"
	make -s -C "$KDIR" M="$d" LLVM=-19 modules
}

# Each stage leaves a mark, so that a run cut short resumes where it was.
lustre() {
	[ -f "$LT/.built" ] && return
	local t0=$SECONDS
	echo "lustre: building Lustre against $KDIR in $LT"
	if [ ! -f "$LT/.autogen" ]; then
		rm -rf "$LT" && mkdir -p "$LT"
		tar -xf "$TARBALL" -C "$LT" --strip-components=1
		(cd "$LT" && sh autogen.sh >autogen.out 2>&1) || { tail -20 "$LT/autogen.out"; exit 1; }
		touch "$LT/.autogen"
	fi
	cd "$LT"
	if [ ! -f .configured ]; then
		# Warnings are not errors: under clang Lustre's ko2iblnd warns of
		# LBUG()'s fall-throughs, and -Werror would stop the build there.
		# No ldiskfs: its 6.12 series is made for 6.12.0 and two of its
		# patches (ext4-filename-encode, ext4-add-IGET_NO_CHECKS-flag) no
		# longer apply to Debian's 6.12 stable source; Lustre's sources
		# are not ours to patch. The servers run on Lustre's own
		# memory-backed OSD, osd-wbcfs, as Lustre's tests do with
		# FSTYPE=wbcfs.
		./configure --with-linux="$KDIR" --enable-server --disable-ldiskfs \
			--with-o2ib=yes --disable-strict-errors --disable-gss --disable-gss-keyring \
			--disable-doc --disable-manpages --disable-iokit --disable-snmp \
			--disable-dist >configure.out 2>&1 || { tail -40 configure.out; exit 1; }
		touch .configured
		echo "lustre: configured in $((SECONDS - t0)) s"
	fi
	# The kernel modules, the libraries and tools a node runs, and fsx:
	# not lustre/tests as a whole, which wants the test disk images the
	# tarball leaves out.
	{
		make -j"$JOBS" modules KBUILD_EXTRA_SYMBOLS="$OUT/sunrpc_addr/Module.symvers" &&
			make -j"$JOBS" -C lib && make -j"$JOBS" -C lnet/utils &&
			make -j"$JOBS" -C lustre/utils && make -C lustre/tests fsx
	} >make.out 2>&1 || { grep -E "error|Error" make.out | head -40; tail -20 make.out; exit 1; }
	echo "lustre: built in $((SECONDS - t0)) s"
	touch .built
}

bundle() {
	rm -rf "$OUT/modules" && mkdir -p "$OUT/modules"
	find "$LT/lnet" "$LT/lustre" -name '*.ko' -exec cp {} "$OUT/modules/" \;
	cp "$OUT/sunrpc_addr/sunrpc_addr.ko" "$OUT/modules/"
	# Everything of Lustre's LNet but libcfs.ko, which stays on lnet-rs.
	{
		find "$LT/lnet" -name '*.ko' ! -name libcfs.ko -printf '%f\n'
		echo sunrpc_addr.ko
	} | sort >"$OUT/lnet-modules.txt"
	touch "$OUT/.done"
}

sunrpc_addr
lustre
bundle
# Builds for another kernel or another version of this script are of no
# further use.
for old in "$LNET_CACHE"/lustre-*; do
	[ "$old" = "$OUT" ] || { echo "lustre: removing stale $old"; rm -rf "$old"; }
done
echo "$OUT" >&3
