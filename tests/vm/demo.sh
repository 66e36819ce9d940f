# lab: vms=2 nics=2 timeout=420 named=1
# The lab demo over ksocklnd (demo_o2ib.sh runs it over ko2iblnd, and
# scripts/demo.sh shows that one live). Run only when named: the test run
# has demo_o2ib, which runs this script, and the ksocklnd rails' failover
# is multirail's, health_fault's and socklnd_railcut's. Two Lustre nodes with two rails
# each (tcp on eth0, tcp1 on eth1, or o2ib and o2ib1 over Soft-RoCE on
# them). VM 0 discovers VM 1 (no `peer add`: a ping learns VM 1's second
# NID, a push tells VM 1 ours) and sends steady LNet traffic to it over
# both rails. Rail 1 fails on VM 0 (eth1 down): ksocklnd's netdev
# notifier, or the IB port's PORT_ERR, marks its NI down at once and
# traffic moves to rail 0; the link returns and rail 1 carries traffic
# again. Then rail 1 goes silent (a fault-injection rule fails every send
# on it as REMOTE_DROPPED): the peer NI's health falls with each failure,
# traffic leaves the rail, and once the rule goes recovery pings raise its
# health back to 1000 and traffic returns.
say() { echo "== vm$LAB_VM: $*"; }
lnd=${DEMO_LND:-tcp}
lndmod=ksocklnd
[ "$lnd" = o2ib ] && lndmod=ko2iblnd
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@$lnd
p1=$(lab_addr "$peer" 1)@${lnd}1
me0=$(lab_addr "$LAB_VM" 0)@$lnd
me1=$(lab_addr "$LAB_VM" 1)@${lnd}1

say "Soft-RoCE on every NIC"
for nic in 0 1; do
	rdma link add "rxe$nic" type rxe netdev "eth$nic"
done
sleep 1
for nic in 0 1; do
	rdma link show "rxe$nic/1" | grep -q "state ACTIVE" || lab_fail "rxe$nic not ACTIVE"
done
rdma link show | sed 's/^/    /'

say "loading lnet.ko and $lndmod.ko as a Lustre node would"
# A recovery ping lost after its send completed (written into a socket
# the peer had reset while the link was down) holds the peer NI's recovery
# until its response times out, as in Lustre: transaction_timeout bounds
# that wait. Recovery pings every second at most: the healed rail's health
# climbs back by 100 a ping, and the demo waits for it (with a 4 s cap,
# 700 took over 15 s to get back to 1000).
modprobe lnet networks="$lnd(eth0),${lnd}1(eth1)" lnet_health_sensitivity=100 lnet_retry_count=2 \
	lnet_max_recovery_ping_interval=1 lnet_transaction_timeout=30 ||
	lab_fail "lnet did not load"
# A PUT caught on the cut rail holds the sequential traffic until the LND
# gives up on that connection: sock_timeout (timeout for ko2iblnd) bounds
# it.
if [ "$lnd" = o2ib ]; then
	modprobe ko2iblnd timeout=10 || lab_fail "ko2iblnd did not load"
else
	modprobe ksocklnd sock_timeout=10 || lab_fail "ksocklnd did not load"
fi
say "LNet health parameters (/sys/module/lnet/parameters):"
for p in lnet_health_sensitivity lnet_retry_count lnet_transaction_timeout \
	lnet_recovery_limit lnet_max_recovery_ping_interval lnet_response_tracking networks; do
	printf '    %-34s %s\n' "$p" "$(cat /sys/module/lnet/parameters/$p)"
done
if ! echo 1001 >/sys/module/lnet/parameters/lnet_health_sensitivity 2>/dev/null; then
	say "    health_sensitivity=1001 refused; still $(cat /sys/module/lnet/parameters/lnet_health_sensitivity)"
fi
lnetctl lnet configure --all || lab_fail "configure"
say "lnetctl net show:"
lnetctl net show | sed 's/^/    /'

peer_health() {
	lnetctl peer show -v 3 >/tmp/peers3 || lab_fail "peer show -v 3"
	awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "health" && $2 == "value:" && cur == nid { print $3; exit }' /tmp/peers3
}

if [ "$LAB_VM" = 1 ]; then
	say "serving buffers for vm0's traffic"
	# An earlier scenario's "peer done" must not end this one.
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7000 -e /bin/true &
	ready=$!
	i=0
	while ! dmesg | grep -q 'lnet_ulp: peer done'; do
		i=$((i + 1))
		[ $i -lt 240 ] || lab_fail "vm0 never finished"
		sleep 1
	done
	kill $ready
	say "vm0 is done"
else
	i=0
	until nc -w 1 "$(lab_addr "$peer" 0)" 7000 </dev/null >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 60 ] || lab_fail "vm1 never got ready"
		sleep 1
	done
	say "lnetctl discover $p0 (no peer add anywhere):"
	lnetctl discover "$p0" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $p0"; }
	sed 's/^/    /' /tmp/disc
	grep -q "nid: $p1" /tmp/disc || lab_fail "discovery did not learn $p1"
	say "steady traffic to $p0 (a Multi-Rail peer: $p0, $p1), 2 s per PUT at most"
	# 130 s at most: the traffic is ended once rail 1 has healed.
	modprobe lnet_ulp mode=client peer="$p0" seconds=130 op_timeout=2 &
	client=$!
	# One `net show -v 3` a round: the NIs' sends, rail 1's PUTs (its
	# recovery pings are GETs, and a slow round holds more of them) and
	# its status.
	nis() {
		lnetctl net show -v 3 >/tmp/nets3 || lab_fail "net show -v 3"
		n0=$(lab_elem_stat /tmp/nets3 "$me0" statistics send_count)
		n1=$(lab_elem_stat /tmp/nets3 "$me1" statistics send_count)
		q1=$(lab_elem_stat /tmp/nets3 "$me1" sent_stats put)
	}
	nis
	s0=$n0 s1=$n1 sq1=$q1
	low=1000
	start=$(cut -d. -f1 /proc/uptime)
	phase=both
	cut=0
	moved=0
	fatal_seen=0
	returned=0
	steered=0
	recovered=0
	while :; do
		sleep 1
		t=$(($(cut -d. -f1 /proc/uptime) - start))
		nis
		d0=$((n0 - s0))
		d1=$((n1 - s1))
		dq1=$((q1 - sq1))
		h=$(peer_health "$p1")
		[ "$h" -lt "$low" ] && low=$h
		st=$(awk -v nid="$me1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "status:" && cur == nid { print $2; exit }' /tmp/nets3)
		# What the last interval showed, for the phase it belonged to.
		case $phase in
		down)
			[ "$st" = down ] && fatal_seen=1
			# Recovery pings may still name rail 1; PUTs do not.
			[ $d0 -gt 10 ] && [ $dq1 = 0 ] && moved=1
			;;
		# Failing recovery pings still go on rail 1; PUTs do not.
		silent) [ "$h" -lt 1000 ] && [ $d0 -gt 50 ] && [ $dq1 = 0 ] && steered=1 ;;
		healing)
			[ "$h" = 1000 ] && [ $d1 -gt 0 ] && recovered=1
			# Everything shown: the traffic ends.
			if [ $recovered = 1 ]; then
				echo 1 >/sys/module/lnet_ulp/parameters/stop_traffic
			fi
			if [ $recovered = 0 ] && [ $t -ge $((cut + 15)) ] && [ -z "$dumped" ]; then
				# Not healed yet: show the recovery state behind it.
				dumped=1
				say "rail 1 not healed after 15 s; uptime $(cut -d' ' -f1 /proc/uptime)"
				lnetctl debug recovery --peer | sed 's/^/    /'
				lnetctl peer show -v 4 | grep -E 'nid:|state|health value|ping|send_count|dropped|timeout' | sed 's/^/    /'
				lctl net_drop_list | sed 's/^/    /'
			fi
			;;
		esac
		was=$phase
		case "$phase:$t" in
		# Once a round has shown traffic over both rails (a round
		# lasts seconds under the traffic).
		both:[2-9] | both:[1-9][0-9])
			say "t=${t}s RAIL 1 FAILS: eth1 down (its IB port too)"
			ip link set eth1 down
			phase=down
			cut=$t
			;;
		down:*)
			# Stay down until traffic has been seen on rail 0 alone
			# (the PUT caught on rail 1 may hold it for sock_timeout).
			if { [ $moved = 1 ] && [ $t -ge $((cut + 8)) ]; } || [ $t -ge $((cut + 40)) ]; then
				say "t=${t}s rail 1 returns: eth1 up"
				ip link set eth1 up
				phase=up
				cut=$t
			fi
			;;
		up:*)
			# Rail 1 is back once its peer NI is healthy again (a
			# recovery ping got through) and carries traffic.
			if [ "$h" = 1000 ] && [ "$d1" -gt 0 ]; then
				returned=1
			fi
			if [ $returned = 1 ] || [ $t -ge $((cut + 40)) ]; then
				say "t=${t}s RAIL 1 GOES SILENT: every send on ${lnd}1 fails (lctl net_drop_add -e remote_dropped)"
				lctl net_drop_add -s "*@${lnd}1" -d "*@${lnd}1" -r 1 -e remote_dropped | sed 's/^/      /'
				phase=silent
				cut=$t
			fi
			;;
		silent:*)
			if [ $steered = 1 ] || [ $t -ge $((cut + 30)) ]; then
				say "t=${t}s rail 1 heals: lctl net_drop_del -a; recovery pings raise its health"
				lctl net_drop_del -a | sed 's/^/      /'
				phase=healing
				cut=$t
			fi
			;;
		esac
		say "t=${t}s  sends +$d0 on $me0, +$d1 on $me1 (of them $dq1 PUTs; $me1 $st)   health of $p1: $h"
		if [ "$was" != "$phase" ]; then
			# The next interval starts now, after the change.
			nis
		fi
		s0=$n0 s1=$n1 sq1=$q1
		kill -0 $client 2>/dev/null || break
	done
	wait $client || lab_fail "the client failed"
	# Recovery pings resume on rail 1 once TCP delivers again.
	i=0
	while [ "$(peer_health "$p1")" != 1000 ] && [ $i -lt 60 ]; do
		sleep 2
		i=$((i + 2))
	done
	say "after the traffic: health of $p1 $(peer_health "$p1") (recovery pings for ${i}s)"
	dmesg | grep 'lnet_ulp: traffic for' | sed 's/^/    /'
	say "peer NI $p1: lowest health $low, now $(peer_health "$p1")"
	[ $fatal_seen = 1 ] || lab_fail "eth1 down did not mark $me1 down"
	[ $moved = 1 ] || lab_fail "traffic did not move to rail 0 while eth1 was down"
	[ $returned = 1 ] || lab_fail "rail 1 carried no traffic after eth1 came back"
	[ "$low" -lt 1000 ] || lab_fail "the silent failure did not cost health"
	[ $steered = 1 ] || lab_fail "traffic did not leave the silent rail"
	[ $recovered = 1 ] || lab_fail "rail 1 did not recover and carry traffic again"
	lnetctl stats show | grep -E 'resend_count|response_timeout_count|remote_dropped|send_count' | sed 's/^/    /'
fi
lab_rmmod lnet_ulp
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod "$lndmod"
lab_rmmod lnet
for nic in 0 1; do
	rdma link delete "rxe$nic"
done
say "done"
