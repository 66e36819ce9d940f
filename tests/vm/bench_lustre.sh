# lab: vms=2 nics=2 lustrefs=1 timeout=3600
# Lustre through the mount (tests/vm/lib_lustre.sh), lnet-rs against
# Lustre's C LNet under the same Lustre modules, both nodes on the one or
# the other: streaming write and read of LFS_STREAM_MIB over one rail
# (tcp) and over two (tcp, tcp1), then the write across each rail cut of
# lfs_io_cuts (its stall against the uncut write, and what PtlRPC saw).
# Each figure is lnet-rs's against Lustre's C LNet's, measured in this run.
# The cuts' write lasts past its cut (made 2 s in) on the perf kernel.
LFS_BIG_MIB=${LFS_BIG_MIB:-128}
. /lab/lib_lustre.sh
rm -f /tmp/lfs_stream /tmp/lfs_cuts /tmp/lfs_events
for lnet in rs c; do
	LFS_NET1=none
	lfs_run "$lnet" "$lnet" stream
	LFS_NET1=tcp1
	lfs_run "$lnet" "$lnet" stream
	lfs_run "$lnet" "$lnet" cuts
done
[ "$LAB_VM" = 0 ] || exit 0
# MiB/s from milliseconds, one decimal.
rate() { awk -v mib="$LFS_STREAM_MIB" -v ms="$1" 'BEGIN { printf "%.1f", mib * 1000 / ms }'; }
for rails in 1 2; do
	# shellcheck disable=SC2046 # two times each
	set -- $(awk -v r="$rails" '$2 == r && $1 == "rs" { print $3, $4 }' /tmp/lfs_stream) \
		$(awk -v r="$rails" '$2 == r && $1 == "c" { print $3, $4 }' /tmp/lfs_stream)
	[ $# = 4 ] || lab_fail "no stream figures for $rails rail(s)"
	for what in write read; do
		if [ "$what" = write ]; then rs=$1 c=$3; else rs=$2 c=$4; fi
		lab_log "bench: Lustre streaming $what through the mount, $LFS_STREAM_MIB MiB, $rails rail(s): lnet-rs $(rate "$rs") MiB/s, C LNet $(rate "$c") MiB/s: $(awk -v a="$c" -v b="$rs" 'BEGIN { printf "%.2f", a / b }') x"
	done
done
# The cuts: the write's time across each, lnet-rs and C LNet side by side.
while IFS='|' read -r lnet what ms; do
	[ "$lnet" = rs ] || continue
	c=$(awk -F'|' -v w="$what" '$1 == "c" && $2 == w { print $3; exit }' /tmp/lfs_cuts)
	lab_log "bench: Lustre write of $LFS_BIG_MIB MiB across $what (cut for ${LFS_CUT_SECS} s): lnet-rs $ms ms, C LNet ${c:-?} ms"
done </tmp/lfs_cuts
for lnet in rs c; do
	name=lnet-rs
	[ "$lnet" = c ] && name="C LNet"
	# shellcheck disable=SC2046 # four counts
	set -- $(awk -v l="$lnet" '$1 == l && $2 == "cuts" { print $3, $4, $5, $6; exit }' /tmp/lfs_events)
	lab_log "bench: PtlRPC on the client across the cuts, $name: $1 lost connections, $2 reconnects, $3 evictions, $4 timed-out requests"
done
