# lab: vms=2 nics=2 timeout=1500
# Benchmark (not a test: run by scripts/bench.sh): failover time after a
# rail cut under steady traffic. VM 0 sends 4 KiB PUTs one after another
# (lnet_ulp bursts of 50, op_timeout 30) to VM 1 over tcp (eth0) and tcp1
# (eth1), Multi-Rail peers, ksocklnd sock_timeout 10, LNet defaults
# otherwise. Rail tcp1 is then cut, once by taking eth1 down (the netdev
# notifier marks the NI down) and once silently (netem 100% loss on eth1,
# nothing tells LNet). Figures: how long the sequential traffic stood
# still: the longest single PUT of the bursts running across the cut (a
# PUT caught on tcp1 holds it until it ends), and the longest burst from
# loading lnet_ulp to unloading it, which also counts what holds its init
# or its unload (50 to 100 ms with no cut); and the PUTs the
# ULP saw fail (the goal is zero while tcp is healthy). Correctness only
# is checked: traffic must go on over tcp.
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
		# it ends; the traffic stands still meanwhile.
		until rmmod lnet_ulp 2>/dev/null; do sleep 1; done
		# Taken out of the kernel's log at once: over a minute of
		# bursts it wraps, and the figures would lose what they are for.
		dmesg -c | grep 'lnet_ulp: burst of' >>/tmp/bursts || true
		echo "burst done at $(now_ms) ms" >>/tmp/bursts
	done
}
# From the bursts of this cut (/tmp/bursts): PUTs that failed, and the
# longest PUT in ms.
failures() {
	sed -n 's/.*lnet_ulp: burst of [0-9]* PUTs: [0-9]* ok, \([0-9]*\) failed.*/\1/p' /tmp/bursts |
		awk '{ s += $1 } END { print s + 0 }'
}
longest() {
	sed -n 's/.*lnet_ulp: burst of .* longest \([0-9]*\) ms.*/\1/p' /tmp/bursts |
		awk '$1 > m { m = $1 } END { print m + 0 }'
}
# The longest time from the end of one burst to the end of the next, in
# ms: loading lnet_ulp, its 50 PUTs and unloading it.
longest_burst() {
	sed -n 's/^burst done at \([0-9]*\) ms$/\1/p' /tmp/bursts |
		awk 'NR > 1 && $1 - p > m { m = $1 - p } { p = $1 } END { print m + 0 }'
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
	rm -f /tmp/stop /tmp/bursts
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
	lab_log "bench: failover after $name: longest single PUT $(longest) ms, longest burst of 50 PUTs (load to unload) $(longest_burst) ms, $(failures) ULP-visible PUT failures"
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
