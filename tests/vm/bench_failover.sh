# lab: vms=2 nics=2 timeout=600
# Benchmark (not a test: run by scripts/bench.sh): failover time after a
# rail cut under steady traffic. VM 0 sends 4 KiB PUTs one after another
# (lnet_ulp burst, op_timeout 30) to VM 1 over tcp (eth0) and tcp1 (eth1),
# Multi-Rail peers, ksocklnd sock_timeout 10, LNet defaults otherwise.
# Rail tcp1 is then cut, once by taking eth1 down (the netdev notifier marks
# the NI down) and once silently (netem 100% loss on eth1, nothing tells
# LNet). Figures: the failover time, from the cut until the PUTs flow
# again without a stall (sends over tcp, sampled every 0.5 s, resuming
# after their last gap of 3 s or more: a PUT caught on tcp1 holds the
# sequential traffic until it ends), and the PUTs the ULP saw fail (the
# goal is zero while tcp is healthy). Send counters cannot say more: tcp1's
# also count the recovery pings. Correctness only is checked: traffic must
# go on over tcp.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
dmesg -c >/dev/null
lab_two_rails "" sock_timeout=10

lab_serve_if_server

me0=$(lab_addr 0 0)@tcp
me1=$(lab_addr 0 1)@tcp1
# Monotonic time in tenths of a second.
now_ds() {
	lab_read /proc/uptime
	set -- ${LAB_V%% *}
	echo "${1%.*}$(echo "${1#*.}" | cut -c1)"
}
# Steady traffic until /tmp/stop exists; each burst's outcome is logged.
traffic() {
	while [ ! -e /tmp/stop ]; do
		modprobe lnet_ulp mode=burst peer="$p0" repeat=400 op_timeout=30 ||
			lab_fail "burst did not run"
		# A message caught on the cut rail keeps the module busy until
		# it ends.
		until rmmod lnet_ulp 2>/dev/null; do sleep 1; done
	done
}
# The failures the ULP saw since the last dmesg -c.
failures() {
	dmesg | sed -n 's/.*lnet_ulp: burst of [0-9]* PUTs: [0-9]* ok, \([0-9]*\) failed.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
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
	[ "$(lab_ni_sends "$me1")" -gt 0 ] || lab_fail "$name: tcp1 carries nothing before the cut"
	"$@" || lab_fail "$name: cut failed"
	t0=$(now_ds)
	last0=$(lab_ni_sends "$me0")
	inc_t=$t0
	end_t=$t0
	while [ $(($(now_ds) - t0)) -lt 450 ]; do
		s0=$(lab_ni_sends "$me0")
		t=$(now_ds)
		if [ "$s0" != "$last0" ]; then
			# Flowing again after a stall of 3 s or more (reloading
			# lnet_ulp between bursts pauses the traffic for less).
			[ $((t - inc_t)) -lt 30 ] || end_t=$t
			last0=$s0
			inc_t=$t
		fi
		sleep 0.5
	done
	s0=$(lab_ni_sends "$me0")
	sleep 5
	[ "$(lab_ni_sends "$me0")" -gt "$s0" ] || lab_fail "$name: tcp carries nothing after the cut"
	touch /tmp/stop
	wait $tr
	f=$(failures)
	lab_log "bench: failover after $name: traffic flowing over tcp alone $(awk -v d=$((end_t - t0)) 'BEGIN { printf "%.1f", d / 10 }') s after the cut, $f ULP-visible PUT failures"
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
