# lab: vms=2 nics=2 timeout=420
# Benchmark (not a test: run by scripts/bench.sh): bulk PUT bandwidth over
# one rail (tcp on eth0) against raw TCP between the same two VMs over the
# same NIC, measured in the same run. Raw TCP is tcp_bench (1 MiB writes,
# timed from connect until the sink has read everything); LNet is
# lnet_ulp's flood of 1 MiB PUTs with ACKs, timed from the first post to
# the last ACK, once with ksocklnd's zero-copy requests (1 MiB payloads
# held until the peer's ZC-ACK, the default) and once without them
# (zc_min_payload at its maximum). Each is measured three times,
# alternating; the figures and their ratios are printed. Only correctness
# is checked (every PUT acknowledged), never the speed.
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
MIB=${BENCH_MIB:-16}
dmesg -c >/dev/null
modprobe lnet networks="tcp(eth0)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"

if [ "$LAB_VM" = 1 ]; then
	# One raw TCP sink per measurement.
	tcp_bench sink 7100 3 &
	sinks=$!
	lab_serve_until_done
	kill $sinks 2>/dev/null || true
	exit 0
fi

lab_wait_server "$paddr"
# MB/s (10^6 bytes) of a transfer of $1 bytes in $2 seconds.
mbs() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / s / 1e6 }'; }
# flood: one flood of $MIB 1 MiB PUTs; its MB/s goes to $rate (not a
# command substitution: lab_fail and leak reports must reach the console).
flood() {
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=flood peer="$paddr@tcp" repeat="$MIB" op_timeout=300 ||
		lab_fail "flood did not run"
	lab_rmmod lnet_ulp
	line=$(dmesg | grep 'lnet_ulp: flood' | tail -n 1)
	case "$line" in
	*": $MIB ok, 0 failed, 0 without a final event") ;;
	*) lab_fail "flood: $line" ;;
	esac
	us=$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "us:") print $(i - 1) }')
	rate=$(mbs $((MIB * 1048576)) "$(awk -v u="$us" 'BEGIN { print u / 1e6 }')")
}
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
zc=/sys/module/ksocklnd/parameters/zc_min_payload
zc_default=$(cat $zc)
raw_total=0
lnet_total=0
nozc_total=0
for round in 1 2 3; do
	sleep 1
	out=$(tcp_bench send "$paddr" 7100 "$MIB") || lab_fail "raw TCP transfer"
	raw=$(echo "$out" | awk '{ print $(NF - 1) }')
	echo "$zc_default" >$zc
	flood
	lnet=$rate
	echo 2147483647 >$zc
	flood
	nozc=$rate
	lab_log "bench round $round: raw TCP $raw MB/s, LNet PUT $lnet MB/s, without zero-copy requests $nozc MB/s ($MIB MiB each)"
	raw_total=$(add "$raw_total" "$raw")
	lnet_total=$(add "$lnet_total" "$lnet")
	nozc_total=$(add "$nozc_total" "$nozc")
done
echo "$zc_default" >$zc
lab_log "$(awk -v r="$raw_total" -v l="$lnet_total" -v n="$nozc_total" 'BEGIN { printf "bench: one rail, mean of 3: raw TCP %.1f MB/s, LNet PUT %.1f MB/s (ratio %.2f), without zero-copy requests %.1f MB/s (ratio %.2f)", r / 3, l / 3, l / r, n / 3, n / r }')"
lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
