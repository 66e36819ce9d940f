#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lab's Lustre peer: ../shared/peers/lustre/build.sh run from a staging
# directory where it also builds o2ib: its kernel fragment plus
# lustre-o2ib.config (RDMA core, RDMA CM, Soft-RoCE), Lustre configured
# with the kernel's own verbs, and ko2iblnd.ko in the bundle's modules/.
# Arguments and output are build.sh's. Idempotent: build.sh caches the
# bundle under a key of what it builds from, staged files included.
set -euo pipefail
# The peer is the gcc build build.sh describes: our scripts export LLVM for
# our own kernel, and with it Lustre's ko2iblnd does not build (clang
# refuses its LBUG() fall-throughs under Lustre's -Werror).
unset LLVM
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=$(cd "$HERE/../../../shared/peers/lustre" && pwd)
STAGE=$HOME/.cache/lnet-rs/lustre-peer-stage
mkdir -p "$STAGE"
sed -e 's/--without-o2ib/--with-o2ib=yes/' \
	-e 's/for ko in libcfs lnet ksocklnd lnet_selftest; do/for ko in libcfs lnet ksocklnd ko2iblnd lnet_selftest; do/' \
	"$SHARED/build.sh" >"$STAGE/build.sh.new"
# Should build.sh change shape, stop here rather than build without o2ib.
for want in '--with-o2ib=yes' 'ksocklnd ko2iblnd lnet_selftest'; do
	grep -qF -- "$want" "$STAGE/build.sh.new" ||
		{ echo "lustre-peer.sh: $SHARED/build.sh changed: cannot stage o2ib ($want)" >&2; exit 1; }
done
cat "$SHARED/kernel.config" "$HERE/lustre-o2ib.config" >"$STAGE/kernel.config.new"
# Rewritten only when they change, so the cache key stays put.
for f in build.sh kernel.config; do
	cmp -s "$STAGE/$f.new" "$STAGE/$f" 2>/dev/null && rm "$STAGE/$f.new" || mv "$STAGE/$f.new" "$STAGE/$f"
done
for t in "$SHARED"/lustre-release-*.tar.xz; do
	ln -sfn "$t" "$STAGE/$(basename "$t")"
done
exec bash "$STAGE/build.sh" "$@"
