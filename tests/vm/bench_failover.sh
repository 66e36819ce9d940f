# lab: vms=2 nics=2 timeout=2400
# Benchmark (not a test: run by scripts/bench.sh): failover under steady
# traffic, over ksocklnd, over ko2iblnd (Soft-RoCE), and over the kernel's
# Multipath TCP for comparison. VM 0 keeps 8 PUTs of 64 KiB in flight
# (lnet_ulp mode=steady, a new one as any ends, op_timeout 30) to VM 1, a
# Multi-Rail peer on two rails: tcp (eth0) and tcp1 (eth1) with ksocklnd
# sock_timeout 10, then o2ib and o2ib1 with LNet's defaults (ko2iblnd's
# timeout is lnet_lnd_timeout, 50 s); then one MPTCP stream (tcp_bench
# steady) with a subflow on each rail. Rail 1 is cut 5 s in, once by
# taking eth1 down (the netdev notifier or the port event marks the NI
# down), once silently (netem 100% loss on eth1, nothing tells LNet), and
# once by VM 1 taking its own eth1 down (VM 0 learns it only from
# failures and the peer's push). Figures: the flow's longest stall (the
# longest time no PUT ended well, or a write of the stream waited), the
# longest PUT, and the PUTs the ULP saw fail (the goal is zero while rail
# 0 is healthy). Each cut's series (bytes sent per rail every 100 ms, the
# health of our rail-1 NI and of the peer's every 0.5 s) is plotted by
# bench.sh. Correctness only is checked: traffic must go on over rail 0.
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)

# The cuts of one LND's rails (HOW lnet) or of MPTCP's subflows (HOW
# mptcp), named by TAG; rails back to health after each.
cuts() {
	cut=$1 how=$2
	lab_bench_cut "$cut-link-down" "$cut link down (ip link set eth1 down)" "$how" \
		ip link set eth1 down
	ip link set eth1 up
	healed
	lab_bench_cut "$cut-silent" "$cut silent loss (netem loss 100% on eth1)" "$how" \
		tc qdisc add dev eth1 root netem loss 100%
	tc qdisc del dev eth1 root
	healed
	lab_bench_cut "$cut-peer-link-down" "$cut the peer's link down (its eth1)" "$how" \
		peer_link down
	peer_link up
}
# Back to health on both sides before the next cut.
healed() {
	sleep 20
	[ "$how" = lnet ] || return 0
	lnetctl net set --nid "$me1" --health 1000
	lnetctl peer set --nid "$p1" --health 1000
}
# peer_link down|up: VM 1 takes its eth1 down or up (its /tmp/linkctl).
peer_link() {
	echo "$1" | nc -w 5 "$paddr" 7020
}

dmesg -c >/dev/null
lab_two_rails "" sock_timeout=10
# MPTCP's in-kernel path manager: a subflow to the address VM 1 announces
# on eth1.
ip mptcp limits set subflows 1 add_addr_accepted 1 || lab_fail "ip mptcp limits"
if [ "$LAB_VM" = 1 ]; then
	# VM 0's peer_link: a word, down or up, for eth1.
	printf '#!/bin/sh\nread -r what\nip link set eth1 "$what"\n' >/tmp/linkctl
	chmod +x /tmp/linkctl
	nc -ll -p 7020 -e /tmp/linkctl &
	linkctl=$!
	lab_serve_until_done
	lab_interop_setup o2ib1 o2ib
	# Not 7000, which may still answer for ksocklnd's server.
	lab_serve_ulp 7010
	lab_interop_teardown
	# MPTCP last, once the rxe links are gone.
	ip mptcp endpoint add "$(lab_addr "$LAB_VM" 1)" dev eth1 signal || lab_fail "ip mptcp endpoint"
	tcp_bench serve 7100 mptcp &
	sink=$!
	nc -l -p 7021 </dev/null >/dev/null || lab_fail "no word from VM 0 after MPTCP"
	kill $sink $linkctl
	ip mptcp endpoint flush
	exit 0
fi

me0=$(lab_addr 0 0)@tcp
me1=$(lab_addr 0 1)@tcp1
p0=$paddr@tcp
p1=$(lab_addr "$peer" 1)@tcp1
lab_wait_server "$paddr"
cuts tcp lnet
lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet

# The same over o2ib, once VM 1 serves there.
lab_interop_setup o2ib1 o2ib
LAB_DISCOVER=
lab_wait_server "$paddr" 7010
lnetctl discover "$p0" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $p0"; }
grep -q "nid: $p1\$" /tmp/disc || { cat /tmp/disc; lab_fail "discovery did not learn $p1"; }
cuts o2ib lnet
lab_server_done "$paddr"
lab_interop_teardown

# The same cuts under one MPTCP stream, for comparison.
lab_wait_server "$paddr" 7100
cuts mptcp mptcp
lab_tell "$paddr" 7021
