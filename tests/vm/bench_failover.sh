# lab: vms=2 nics=2 timeout=1500
# Benchmark (not a test: run by scripts/bench.sh): failover time after a
# rail cut under steady traffic. VM 0 sends 4 KiB PUTs one after another
# (lnet_ulp bursts of 50, op_timeout 30) to VM 1 over tcp (eth0) and tcp1
# (eth1), Multi-Rail peers, ksocklnd sock_timeout 10, LNet defaults
# otherwise. Rail tcp1 is then cut, once by taking eth1 down (the netdev
# notifier marks the NI down) and once silently (netem 100% loss on eth1,
# nothing tells LNet). Figures: the failover time, as the longest single
# PUT of the bursts running across the cut (the traffic is sequential, so
# that is how long it stood still: a PUT caught on tcp1 holds it until it
# ends), and the PUTs the ULP saw fail (the goal is zero while tcp is
# healthy). Correctness only is checked: traffic must go on over tcp.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
dmesg -c >/dev/null
lab_two_rails "" sock_timeout=10

lab_serve_if_server

me0=$(lab_addr 0 0)@tcp
me1=$(lab_addr 0 1)@tcp1
# Steady traffic until /tmp/stop exists; each burst's outcome is logged.
traffic() {
	while [ ! -e /tmp/stop ]; do
		modprobe lnet_ulp mode=burst peer="$p0" repeat=50 op_timeout=30 ||
			lab_fail "burst did not run"
		# A message caught on the cut rail keeps the module busy until
		# it ends.
		until rmmod lnet_ulp 2>/dev/null; do sleep 1; done
	done
}
# From the bursts since the last dmesg -c: PUTs that failed, and the
# longest PUT in ms.
failures() {
	dmesg | sed -n 's/.*lnet_ulp: burst of [0-9]* PUTs: [0-9]* ok, \([0-9]*\) failed.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}
longest() {
	dmesg | sed -n 's/.*lnet_ulp: burst of .* longest \([0-9]*\) ms.*/\1/p' |
		awk '$1 > m { m = $1 } END { print m + 0 }'
}
# sends NID: the NI's send count; a hung lnetctl is reported, not waited on.
sends() {
	timeout 30 lnetctl net show -v >/tmp/nets || lab_fail "lnetctl net show -v failed or hung"
	awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "send_count:" && cur == nid { print $2; exit }' /tmp/nets
}
# cut NAME COMMAND...: runs COMMAND under traffic and reports the figures.
cut() {
	name=$1
	shift
	rm -f /tmp/stop
	dmesg -c >/dev/null
	traffic &
	tr=$!
	sleep 5
	[ "$(sends "$me1")" -gt 0 ] || lab_fail "$name: tcp1 carries nothing before the cut"
	"$@" || lab_fail "$name: cut failed"
	lab_log "bench: $name: cut"
	# Long enough for a PUT caught on tcp1 to end: sock_timeout 10, then
	# its resend or its own deadline.
	for i in 1 2 3 4 5 6; do
		sleep 10
		lab_log "bench: $name: +$((i * 10)) s, tcp sends $(sends "$me0"), tcp1 sends $(sends "$me1")"
	done
	s0=$(sends "$me0")
	sleep 5
	[ "$(sends "$me0")" -gt "$s0" ] || lab_fail "$name: tcp carries nothing after the cut"
	touch /tmp/stop
	wait $tr
	lab_log "bench: failover after $name: traffic stood still at most $(longest) ms (longest single PUT), $(failures) ULP-visible PUT failures"
}
lab_wait_server "$(lab_addr "$peer" 0)"
cut "link down (ip link set eth1 down)" ip link set eth1 down
ip link set eth1 up
# Back to health on both sides before the next cut.
sleep 20
lnetctl net set --nid "$me1" --health 1000
lnetctl peer set --nid "$(lab_addr "$peer" 1)@tcp1" --health 1000
cut "silent loss (netem loss 100% on eth1)" tc qdisc add dev eth1 root netem loss 100%
tc qdisc del dev eth1 root
lab_server_done "$(lab_addr "$peer" 0)"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
