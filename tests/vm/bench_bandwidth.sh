# lab: vms=2 nics=2 timeout=1200
# Benchmark (not a test: run by scripts/bench.sh): bulk bandwidth over one
# rail (tcp on eth0) against raw TCP between the same two VMs over the
# same NIC, measured in the same run. LNet: lnet_ulp's flood of 1 MiB PUTs
# (with ACKs) or GETs from VM 0 to VM 1, with 1, 8 and 32 in flight (a
# new one as the oldest ends), timed from the first post to the last
# ACK/REPLY. Raw TCP: tcp_bench moving the same bytes the same way (put:
# to VM 1, get: from it) over as many streams as LNet has in flight, timed
# until the far end has read everything. PUT at 32 in flight is measured
# once more without ksocklnd's zero-copy requests (zc_min_payload at its
# maximum). Each figure is the mean of three rounds, measured
# alternately. Only correctness is checked (every PUT acknowledged, every
# GET replied to), never the speed.
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
MIB=${BENCH_MIB:-32}
dmesg -c >/dev/null
lab_one_rail

if [ "$LAB_VM" = 1 ]; then
	tcp_bench serve 7100 &
	server=$!
	lab_serve_until_done
	kill $server 2>/dev/null || true
	exit 0
fi

lab_wait_server "$paddr"
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
zc=/sys/module/ksocklnd/parameters/zc_min_payload
zc_default=$(cat $zc)
for round in 1 2 3; do
	sleep 1
	for op in put get; do
		for depth in 1 8 32; do
			out=$(tcp_bench "$op" "$paddr" 7100 "$MIB" "$depth") ||
				lab_fail "raw TCP $op over $depth streams"
			raw=$(echo "$out" | awk '{ print $(NF - 1) }')
			get=0
			[ $op = get ] && get=1
			lab_bench_flood "$paddr@tcp" "$MIB" window="$depth" get=$get
			lab_log "bench round $round: $op, $depth in flight: raw TCP $raw MB/s, LNet $rate MB/s ($MIB MiB each)"
			eval "raw_${op}_$depth=\$(add \"\${raw_${op}_$depth:-0}\" \"$raw\")"
			eval "lnet_${op}_$depth=\$(add \"\${lnet_${op}_$depth:-0}\" \"$rate\")"
		done
	done
	echo 2147483647 >$zc
	lab_bench_flood "$paddr@tcp" "$MIB" window=32
	echo "$zc_default" >$zc
	lab_log "bench round $round: put, 32 in flight, without zero-copy requests: $rate MB/s"
	nozc=$(add "${nozc:-0}" "$rate")
done
for op in put get; do
	for depth in 1 8 32; do
		eval "r=\$raw_${op}_$depth l=\$lnet_${op}_$depth"
		lab_bench_point "bandwidth-$op" "raw-TCP" "$depth" "$(awk -v r="$r" 'BEGIN { printf "%.2f", r / 3 }')"
		lab_bench_point "bandwidth-$op" "LNet" "$depth" "$(awk -v l="$l" 'BEGIN { printf "%.2f", l / 3 }')"
		lab_log "$(awk -v o="$op" -v d="$depth" -v r="$r" -v l="$l" 'BEGIN {
			printf "bench: one rail, %s of 1 MiB, %d in flight, mean of 3: LNet %.2f MB/s, raw TCP %.2f MB/s over %d streams: ratio %.2f (goal >= 0.95)",
				toupper(o), d, l / 3, r / 3, d, l / r }')"
	done
done
lab_log "$(awk -v n="$nozc" -v l="$lnet_put_32" 'BEGIN { printf "bench: one rail, PUT of 1 MiB, 32 in flight, without zero-copy requests, mean of 3: %.2f MB/s, %.2f x with them", n / 3, n / l }')"
lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
