# lab: vms=2 nics=2 timeout=900
# Benchmark (not a test: run by scripts/bench.sh): bulk PUT bandwidth over
# ko2iblnd on Soft-RoCE against perftest's ib_write_bw between the same two
# VMs over the same rxe device, measured in the same run; and over two
# rails (o2ib on rxe0, o2ib1 on rxe1, VM 1 a Multi-Rail peer) against one.
# ib_write_bw: RDMA CM (-R), 1 MiB writes, tx depth 16 (its default of 128
# runs a VM out of memory), its own average. LNet: lnet_ulp's flood of
# 1 MiB PUTs with ACKs, timed from the first post to the last ACK; one
# rail is VM 0 with its o2ib1 NI deleted, two rails VM 0 with it added
# back. Each is measured three times, alternating. The CPU cost is VM 0's:
# its busy time (/proc/stat, all but idle and iowait) per MiB moved.
# ib_write_bw polls its completion queue (it has no event mode), so its
# figure counts that spin, which on the VM's one CPU also takes time from
# Soft-RoCE's own work; ko2iblnd's schedulers sleep on completion events.
# Only correctness is checked (every PUT acknowledged, both rails used by
# the two-rail floods), never the speed.
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
me1=$(lab_addr "$LAB_VM" 1)@o2ib1
MIB=${BENCH_MIB:-32}
lab_rxe_links add
dmesg -c >/dev/null
modprobe lnet networks="o2ib(eth0),o2ib1(eth1)" || lab_fail "lnet did not load"
modprobe ko2iblnd || lab_fail "ko2iblnd did not load"
lnetctl lnet configure --all || lab_fail "configure"
ibbw() {
	ib_write_bw -R -F -d rxe0 -s 1048576 -n "$MIB" --tx-depth=16 --report_gbits "$@"
}

if [ "$LAB_VM" = 1 ]; then
	# An ib_write_bw server for each run of VM 0's, while LNet serves.
	(
		while :; do
			ibbw >/tmp/ibbw.srv 2>&1 || { cat /tmp/ibbw.srv; sleep 1; }
		done
	) &
	servers=$!
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7000 -e /bin/true &
	ready=$!
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the client"
	kill $ready $servers 2>/dev/null || true
	killall ib_write_bw 2>/dev/null || true
	lab_rmmod lnet_ulp
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ko2iblnd
	lab_rmmod lnet
	lab_rxe_links delete
	exit 0
fi

lab_wait_server "$paddr"
lnetctl discover "$paddr@o2ib" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $paddr@o2ib"; }
# CPU time (USER_HZ ticks) spent on anything but idle and iowait.
busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
# ms of busy CPU per MiB: ticks $1 to $2 (USER_HZ 100) for $MIB MiB.
cost() { awk -v a="$1" -v b="$2" -v m="$MIB" 'BEGIN { printf "%.1f", (b - a) * 10 / m }'; }
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
# raw: one ib_write_bw run against VM 1's server; MB/s to $rate, CPU to $cpu.
raw() {
	tries=0
	b0=$(busy)
	until ibbw "$paddr" >/tmp/ibbw 2>&1; do
		tries=$((tries + 1))
		[ "$tries" -lt 30 ] || { cat /tmp/ibbw; lab_fail "ib_write_bw to $paddr"; }
		sleep 1
		b0=$(busy)
	done
	cpu=$(cost "$b0" "$(busy)")
	# ib_write_bw turns TSC cycles into time by /proc/cpuinfo's MHz: with
	# no TSC rate known it prints 0.
	gbs=$(awk '$1 == 1048576 && $4 > 0 { print $4; exit }' /tmp/ibbw)
	[ -n "$gbs" ] || { cat /tmp/ibbw; lab_fail "no figure from ib_write_bw"; }
	rate=$(awk -v g="$gbs" 'BEGIN { printf "%.2f", g * 125 }')
}
# flood: $MIB 1 MiB PUTs to VM 1; MB/s to $rate, CPU to $cpu, and the
# sends of our o2ib1 NI to $rail1.
flood() {
	s1=$(lab_ni_sends "$me1")
	b0=$(busy)
	lab_bench_flood "$paddr@o2ib" "$MIB"
	cpu=$(cost "$b0" "$(busy)")
	rail1=$(($(lab_ni_sends "$me1") - ${s1:-0}))
}
raw_t=0 one_t=0 two_t=0 raw_c=0 one_c=0 two_c=0
for round in 1 2 3; do
	sleep 1
	raw
	raw_t=$(add "$raw_t" "$rate") raw_c=$(add "$raw_c" "$cpu")
	r=$rate c=$cpu
	lnetctl net del --net o2ib1 || lab_fail "net del o2ib1"
	flood
	one_t=$(add "$one_t" "$rate") one_c=$(add "$one_c" "$cpu")
	o=$rate oc=$cpu
	lnetctl net add --net o2ib1 --if eth1 || lab_fail "net add o2ib1"
	flood
	[ "$rail1" -gt 0 ] || lab_fail "the two-rail flood sent nothing on $me1"
	two_t=$(add "$two_t" "$rate") two_c=$(add "$two_c" "$cpu")
	lab_log "bench round $round: ib_write_bw $r MB/s ($c ms CPU/MiB), LNet PUT one rail $o MB/s ($oc), two rails $rate MB/s ($cpu, $rail1 sends on o2ib1) ($MIB MiB each)"
done
lab_log "$(awk -v r="$raw_t" -v o="$one_t" -v t="$two_t" -v rc="$raw_c" -v oc="$one_c" -v tc="$two_c" 'BEGIN {
	printf "bench: o2ib, mean of 3: LNet PUT over one rail %.2f MB/s against ib_write_bw %.2f MB/s (ratio %.2f); over two rails %.2f MB/s (%.2f x one rail); VM 0 CPU ms per MiB: ib_write_bw %.1f, LNet one rail %.1f, two rails %.1f",
		o / 3, r / 3, o / r, t / 3, t / o, rc / 3, oc / 3, tc / 3 }')"
lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ko2iblnd
lab_rmmod lnet
lab_rxe_links delete
