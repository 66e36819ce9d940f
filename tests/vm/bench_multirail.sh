# lab: vms=2 nics=2 timeout=1000
# Benchmark (not a test: run by scripts/bench.sh): Multi-Rail aggregate
# bandwidth. Both rails (tcp on eth0, tcp1 on eth1) are limited on VM 0's
# egress by tc tbf to the same rate (BENCH_RATE_MBIT, 160 Mbit/s: well
# below what one CPU drives), and VM 0 floods 1 MiB PUTs (lnet_ulp, with
# ACKs) to VM 1, a Multi-Rail peer learnt by discovery: over both rails,
# against one rail (VM 0 with its tcp1 NI deleted), and against the
# kernel's Multipath TCP (tcp_bench over IPPROTO_MPTCP, with a second
# subflow to the address VM 1 announces on eth1). Then again with eth1 at
# half the rate: does selection still fill both? Each case twice: with
# every PUT posted at once, and with 8 in flight (as a Lustre client's
# max_rpcs_in_flight), where credits can steer new PUTs to the rail that
# returns them first. Each figure is the mean of three rounds, measured
# alternately; only correctness is checked (every PUT acknowledged, both
# rails used), never the speed. Last, the unequal rails once more with
# both in one net (tcp(eth0,eth1) on each VM): between nets selection
# goes by health and round robin, within a net by the NIs' and peer NIs'
# credits, which the slow rail holds longer (a zero-copy PUT's come back
# with the peer's acknowledgement).
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
me0=$(lab_addr "$LAB_VM" 0)@tcp
me1=$(lab_addr "$LAB_VM" 1)@tcp1
MIB=${BENCH_MIB:-32}
RATE=${BENCH_RATE_MBIT:-160}
dmesg -c >/dev/null
modprobe lnet networks="tcp(eth0),tcp1(eth1)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"
# MPTCP's in-kernel path manager: one more subflow, to an announced address.
ip mptcp limits set subflows 1 add_addr_accepted 1 || lab_fail "ip mptcp limits"

# Both rails in one net, tcp.
lab_one_net() {
	modprobe lnet networks="tcp(eth0,eth1)" || lab_fail "lnet did not load"
	modprobe ksocklnd || lab_fail "ksocklnd did not load"
	lnetctl lnet configure --all || lab_fail "configure"
}
if [ "$LAB_VM" = 1 ]; then
	ip mptcp endpoint add "$(lab_addr "$LAB_VM" 1)" dev eth1 signal || lab_fail "ip mptcp endpoint"
	tcp_bench serve 7100 mptcp &
	sinks=$!
	lab_serve_until_done
	kill $sinks 2>/dev/null || true
	ip mptcp endpoint flush
	lab_one_net
	lab_serve_ulp 7010 7011
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ksocklnd
	lab_rmmod lnet
	exit 0
fi

lab_wait_server "$paddr"
lnetctl discover "$paddr@tcp" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $paddr@tcp"; }
grep -q "nid: $(lab_addr "$peer" 1)@tcp1\$" /tmp/disc || { cat /tmp/disc; lab_fail "discovery did not learn the peer's tcp1 NID"; }
shape() { # eth rate_mbit
	tc qdisc replace dev "$1" root tbf rate "$2mbit" burst 32kb latency 100ms ||
		lab_fail "tc tbf on $1"
}
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
# flood [ARG...]: $MIB 1 MiB PUTs to VM 1 (ARGs to lnet_ulp); MB/s to
# $rate, our NIs' sends to s0, s1.
flood() {
	a0=$(lab_ni_sends "$me0")
	a1=$(lab_ni_sends "$me1")
	lab_bench_flood "$paddr@tcp" "$MIB" "$@"
	s0=$(($(lab_ni_sends "$me0") - a0))
	s1=$(($(lab_ni_sends "$me1") - ${a1:-0}))
}
mptcp() {
	out=$(tcp_bench put "$paddr" 7100 "$MIB" 1 mptcp) || lab_fail "MPTCP transfer"
	rate=$(echo "$out" | awk '{ print $(NF - 1) }')
}
# rounds LABEL [ARG...]: three rounds of one rail, two rails and MPTCP
# (ARGs to lnet_ulp's floods); logs means.
rounds() {
	label=$1
	shift
	one_t=0 two_t=0 mp_t=0 sh_t=0
	for round in 1 2 3; do
		sleep 1
		lnetctl net del --net tcp1 || lab_fail "net del tcp1"
		flood "$@"
		one=$rate
		lnetctl net add --net tcp1 --if eth1 || lab_fail "net add tcp1"
		flood "$@"
		[ "$s1" -gt 0 ] || lab_fail "the two-rail flood sent nothing on $me1"
		two=$rate
		share=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.2f", b / (a + b) }')
		mptcp
		mp=$rate
		lab_log "bench round $round ($label): LNet one rail $one MB/s, two rails $two MB/s (tcp1's share of sends $share), MPTCP $mp MB/s ($MIB MiB each)"
		one_t=$(add "$one_t" "$one") two_t=$(add "$two_t" "$two") mp_t=$(add "$mp_t" "$mp") sh_t=$(add "$sh_t" "$share")
	done
	lab_log "$(awk -v l="$label" -v o="$one_t" -v t="$two_t" -v m="$mp_t" -v s="$sh_t" 'BEGIN {
		printf "bench: Multi-Rail, %s, mean of 3: LNet over two rails %.2f MB/s, %.2f x one rail (%.2f MB/s), %.2f x MPTCP (%.2f MB/s); tcp1 took %.0f%% of the sends",
			l, t / 3, t / o, o / 3, t / m, m / 3, s / 3 * 100 }')"
}
shape eth0 "$RATE"
shape eth1 "$RATE"
rounds "both rails at $RATE Mbit/s, all PUTs at once"
rounds "both rails at $RATE Mbit/s, 8 PUTs in flight" window=8
shape eth1 $((RATE / 2))
rounds "eth0 at $RATE Mbit/s, eth1 at $((RATE / 2)), all PUTs at once"
rounds "eth0 at $RATE Mbit/s, eth1 at $((RATE / 2)), 8 PUTs in flight" window=8
lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet

# One net over the unequal rails.
lab_one_net
me1=$(lab_addr "$LAB_VM" 1)@tcp
lab_wait_server "$paddr" 7010
lnetctl discover "$paddr@tcp" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $paddr@tcp"; }
grep -q "nid: $(lab_addr "$peer" 1)@tcp\$" /tmp/disc || { cat /tmp/disc; lab_fail "discovery did not learn the peer's eth1 NID"; }
# In one net an NI's sends are no rail's: a connection goes out of the
# interface that routes to the peer NI's address, whatever its source.
# The rails' shares are their interfaces' bytes.
tx() { cat "/sys/class/net/$1/statistics/tx_bytes"; }
for args in "" window=8; do
	rate_t=0 sh_t=0
	for round in 1 2 3; do
		sleep 1
		b0=$(tx eth0) b1=$(tx eth1)
		# shellcheck disable=SC2086 # no argument, or one
		flood $args
		b0=$(($(tx eth0) - b0)) b1=$(($(tx eth1) - b1))
		[ "$b1" -gt 1000000 ] || lab_fail "the one-net flood sent nothing on eth1"
		share=$(awk -v a="$b0" -v b="$b1" 'BEGIN { printf "%.2f", b / (a + b) }')
		lab_log "bench round $round (one net, ${args:-all at once}): $rate MB/s, eth1's share of the bytes $share"
		rate_t=$(add "$rate_t" "$rate") sh_t=$(add "$sh_t" "$share")
	done
	lab_log "$(awk -v r="$rate_t" -v s="$sh_t" -v c="$RATE" -v l="${args:-all PUTs at once}" 'BEGIN {
		cap = c * 1.5 / 8
		printf "bench: Multi-Rail, one net over eth0 at %d Mbit/s and eth1 at %d, %s, mean of 3: %.2f MB/s, %.2f x the rails'"'"' %.1f MB/s; eth1 carried %.0f%% of the bytes (its share of the rate: 33%%)",
			c, c / 2, l, r / 3, r / 3 / cap, cap, s / 3 * 100 }')"
done
for nic in 0 1; do
	tc qdisc del dev "eth$nic" root
done
lab_tell "$paddr" 7011
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
