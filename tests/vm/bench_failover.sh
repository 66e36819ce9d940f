# lab: vms=2 nics=2 timeout=2400
# Benchmark (not a test: run by scripts/bench.sh): failover time after a
# rail cut under steady traffic, over ksocklnd then over ko2iblnd
# (Soft-RoCE). VM 0 sends 4 KiB PUTs one after another (lnet_ulp bursts
# of 50, op_timeout 30) to VM 1, a Multi-Rail peer on two rails: tcp
# (eth0) and tcp1 (eth1) with ksocklnd sock_timeout 10, then o2ib and
# o2ib1 with LNet's defaults (ko2iblnd's timeout is lnet_lnd_timeout,
# 50 s). Rail 1 is then cut, once by taking eth1 down (the netdev notifier
# or the port event marks the NI down), once silently (netem 100% loss on
# eth1, nothing tells LNet), and once by VM 1 taking its own eth1 down
# (VM 0 learns it only from failures and the peer's push). Figures: how
# long the sequential traffic stood still: the longest single PUT of the
# bursts running across the cut (a PUT caught on rail 1 holds it until it
# ends), and the longest burst from loading lnet_ulp to unloading it,
# which also counts what holds its init or its unload (50 to 100 ms with
# no cut); and the PUTs the ULP saw fail (the goal is zero while rail 0 is
# healthy). Each cut's series (sends per rail, health of our rail-1 NI
# and of the peer's) is plotted by bench.sh. Correctness only is
# checked: traffic must go on over rail 0.
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)

# The cuts of one LND's rails, named by TAG; rails back to health after.
cuts() {
	cut=$1
	lab_bench_cut "$cut-link-down" "$cut link down (ip link set eth1 down)" ip link set eth1 down
	ip link set eth1 up
	# Back to health on both sides before the next cut.
	sleep 20
	lnetctl net set --nid "$me1" --health 1000
	lnetctl peer set --nid "$p1" --health 1000
	lab_bench_cut "$cut-silent" "$cut silent loss (netem loss 100% on eth1)" \
		tc qdisc add dev eth1 root netem loss 100%
	tc qdisc del dev eth1 root
	sleep 20
	lnetctl net set --nid "$me1" --health 1000
	lnetctl peer set --nid "$p1" --health 1000
	lab_bench_cut "$cut-peer-link-down" "$cut the peer's link down (its eth1)" peer_link down
	peer_link up
}
# peer_link down|up: VM 1 takes its eth1 down or up (its /tmp/linkctl).
peer_link() {
	echo "$1" | nc -w 5 "$paddr" 7020
}

dmesg -c >/dev/null
lab_two_rails "" sock_timeout=10
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
	kill $linkctl
	lab_interop_teardown
	exit 0
fi

me0=$(lab_addr 0 0)@tcp
me1=$(lab_addr 0 1)@tcp1
p0=$paddr@tcp
p1=$(lab_addr "$peer" 1)@tcp1
lab_wait_server "$paddr"
cuts tcp
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
cuts o2ib
lab_server_done "$paddr"
lab_interop_teardown
