# lab: vms=2 nics=1 timeout=1800
# Benchmark (not a test: run by scripts/bench.sh): LNet at scale in the
# kernel. VM 0 sends one PUT after another to VM 1 (lnet_ulp bursts over
# tcp) while 0, 100, 1000 and 10000 other peers are configured (one NI
# each, 10.60.X.Y@tcp: addresses no VM has, added by `lnetctl import`):
# the message rate at each count against the rate with none (after a
# first burst that sets up the connection). The slab memory the kernel
# reports (/proc/meminfo) before and after adding them gives the memory
# per peer NI. Then VM 0 hears once from each of the 10000 (`ksock_crowd`
# connects to its own NI as each of them and sends one PUT): LNet recovers
# only peer NIs it has heard from (Lustre's
# lnet_peer_ni_add_to_recoveryq_locked). Every peer NI's health is then
# set to 0 (`peer set --all --health 0`), which puts them on the recovery
# queue (`debug recovery --peer` counts it), and the pings LNet sends per
# second are counted (stats show) in two windows: the first 20 s and 20 s
# from the third minute. Each ping fails at once (no route to 10.60/16).
# Goals (issue 20): a flat rate, at most 1 KiB per peer NI, at most 20
# pings/s in steady state.
# Only correctness is checked (every PUT acknowledged).
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
PUTS=${BENCH_PUTS:-500}
dmesg -c >/dev/null
lab_one_rail
lab_serve_if_server
lab_wait_server "$paddr"

# rate: $PUTS sequential PUTs to VM 1; PUTs per second to $rate.
rate() {
	dmesg -c >/dev/null
	t0=$(now_ms)
	modprobe lnet_ulp mode=burst peer="$paddr@tcp" repeat="$PUTS" op_timeout=30 ||
		lab_fail "burst did not run"
	t1=$(now_ms)
	lab_rmmod lnet_ulp
	line=$(dmesg | grep 'lnet_ulp: burst of' | tail -n 1)
	case "$line" in
	*": $PUTS ok, 0 failed"*) ;;
	*) lab_fail "burst: $line" ;;
	esac
	rate=$(awk -v n="$PUTS" -v ms=$((t1 - t0)) 'BEGIN { printf "%.0f", n * 1000 / ms }')
}
slab_kb() { awk '$1 == "Slab:" { print $2 }' /proc/meminfo; }
# add_peers FROM TO: peers FROM..TO-1, each 10.60.X.Y@tcp, in one import.
add_peers() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		print "peer:"
		for (i = a; i < b; i++) {
			nid = sprintf("10.60.%d.%d@tcp", int(i / 250), i % 250 + 1)
			print "    - primary nid: " nid
			print "      Multi-Rail: True"
			print "      peer ni:"
			print "        - nid: " nid
		}
	}' >/tmp/peers.yaml
	lnetctl import --add /tmp/peers.yaml || lab_fail "import of peers $1..$2"
}
sends() { lnetctl stats show | awk '$1 == "send_count:" { print $2; exit }'; }

rate
rate
base=$rate
have=0
for n in 100 1000 10000; do
	sync
	s0=$(slab_kb)
	t0=$(now_ms)
	add_peers "$have" "$n"
	took=$(($(now_ms) - t0))
	s1=$(slab_kb)
	per=$(awk -v d=$((s1 - s0)) -v k=$((n - have)) 'BEGIN { printf "%.0f", d * 1024 / k }')
	have=$n
	rate
	lab_bench_point scale-rate "with-them" "$n" "$rate"
	lab_bench_point scale-rate "none-(baseline)" "$n" "$base"
	lab_log "bench: scale, $n other peers: $rate PUTs/s against $base with none ($(awk -v r="$rate" -v b="$base" 'BEGIN { printf "%.2f", r / b }') x); $per bytes of slab per peer NI added; import took $took ms"
done
known=$(lnetctl peer show | grep -c 'primary nid:')
[ "$known" -ge 10001 ] || lab_fail "only $known peers known"

t0=$(now_ms)
ksock_crowd "$(lab_addr "$LAB_VM" 0)" 0 10000 || lab_fail "ksock_crowd"
lab_log "bench: scale, heard once from each of the 10000 in $(($(now_ms) - t0)) ms"
lnetctl peer set --all --health 0 || lab_fail "peer set --all --health 0"
queued=$(lnetctl debug recovery --peer | grep -c "nid-" || true)
[ "$queued" -ge 10000 ] || lab_fail "only $queued peer NIs on the recovery queue"
window() { # label
	a=$(sends)
	sleep 20
	b=$(sends)
	lab_log "bench: scale, $queued unreachable peer NIs on the recovery queue, $1: $(awk -v d=$((b - a)) 'BEGIN { printf "%.1f", d / 20 }') pings/s"
}
window "first 20 s"
sleep 100
window "from 120 s to 140 s"
rate
lab_log "bench: scale, with $queued peer NIs on the recovery queue: $rate PUTs/s against $base with none"
lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
