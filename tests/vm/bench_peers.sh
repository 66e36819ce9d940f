# lab: vms=2 nics=2 timeout=900
# Benchmark (not a test: run by scripts/bench.sh): lnet-rs against Lustre's
# own LNet. Two nodes of one kind, tcp on eth0 and tcp1 on eth1: here two
# lnet-rs nodes on the perf kernel, in bench_peers_lustre (this script,
# lustre=2) two Lustre nodes on the Lustre peer's kernel, which has no
# debug checkers either, on the same VMs and links. tests/kmod/lnet_ulp.c
# is built unchanged against each one's headers. VM 0 floods VM 1, a
# Multi-Rail peer it discovers, with 1 MiB PUTs (ACKed), 8 in flight, over
# one rail (VM 0's tcp1 NI deleted) and over two; three rounds each,
# alternating. scripts/bench_report.py divides the lnet-rs figures by
# Lustre's. Only correctness is checked (every PUT acknowledged, both
# rails used by the two-rail floods), never the speed.
lab_interop_setup
MIB=${BENCH_MIB:-32}
if [ "$LAB_VM" = 1 ]; then
	lab_serve_ulp
	lab_interop_teardown
	exit 0
fi

lab_wait_server "$(lab_addr "$peer" 0)"
lnetctl discover "$p0" >/tmp/disc || { cat /tmp/disc; lab_fail "$side: discover $p0"; }
grep -q "nid: $p1" /tmp/disc || { cat /tmp/disc; lab_fail "$side: discovery did not learn $p1"; }
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
one_t=0 two_t=0
for round in 1 2 3; do
	sleep 1
	lnetctl net del --net tcp1 || lab_fail "$side: net del tcp1"
	lab_bench_flood "$p0" "$MIB" window=8
	one=$rate
	lnetctl net add --net tcp1 --if eth1 || lab_fail "$side: net add tcp1"
	a1=$(lab_ni_sends "$me1")
	lab_bench_flood "$p0" "$MIB" window=8
	s1=$(($(lab_ni_sends "$me1") - ${a1:-0}))
	[ "$s1" -gt 0 ] || lab_fail "$side: the two-rail flood sent nothing on $me1"
	lab_log "bench round $round ($side): PUT one rail $one MB/s, two rails $rate MB/s ($s1 sends on tcp1) ($MIB MiB each)"
	one_t=$(add "$one_t" "$one") two_t=$(add "$two_t" "$rate")
done
one=$(awk -v t="$one_t" 'BEGIN { printf "%.2f", t / 3 }')
two=$(awk -v t="$two_t" 'BEGIN { printf "%.2f", t / 3 }')
lab_bench_point peers-put "$side" 1 "$one"
lab_bench_point peers-put "$side" 2 "$two"
lab_log "bench: $side to $side, PUT of 1 MiB, 8 in flight, mean of 3: one rail $one MB/s, two rails $two MB/s"
lab_tell "$(lab_addr "$peer" 0)" 7001
lab_interop_teardown
