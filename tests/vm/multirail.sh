# lab: vms=2 nics=2 timeout=240
# Multi-Rail over ksocklnd: tcp on eth0 and tcp1 on eth1. Each VM tells
# LNet the other is one Multi-Rail peer with a NID on each net
# (lnetctl peer add); VM 0 then sends 40 PUTs to the peer's primary NID
# without choosing a source, and both of its NIs must carry them (per-NI
# send counters from lnetctl net show -v). peer show lists the peer. Then
# health steers selection: with one peer NI at health 0 every send takes
# the other rail. Last, recovery pings bring an unhealthy peer NI and local
# NI back to 1000, seen through lnetctl debug recovery and show -v 3; the
# local NI's pings, and an lnetctl ping of our own NID, go through the NI
# and ksocklnd (its send and receive counts move), not over 0@lo. A
# discovery ping goes by selection: with our eth0 down, it takes tcp1.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
p1=$(lab_addr "$peer" 1)@tcp1
dmesg -c >/dev/null
modprobe lnet networks="tcp(eth0),tcp1(eth1)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"
lnetctl peer add --prim_nid "$p0" --nid "$p1" || lab_fail "peer add"
lnetctl peer show >/tmp/peers || lab_fail "peer show"
grep -q "primary nid: $p0" /tmp/peers && grep -q "nid: $p1" /tmp/peers || { cat /tmp/peers; lab_fail "peer show lacks the peer"; }
grep -q "Multi-Rail: [Tt]rue" /tmp/peers || { cat /tmp/peers; lab_fail "peer is not Multi-Rail"; }

me0=$(lab_addr "$LAB_VM" 0)@tcp
me1=$(lab_addr "$LAB_VM" 1)@tcp1
if [ "$LAB_VM" = 1 ]; then
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	# Tell the client we are ready, outside LNet: a failed first attempt
	# would cost a rail health that only recovery pings (not yet written)
	# give back.
	nc -ll -p 7000 -e /bin/true &
	ready=$!
	i=0
	while [ "$(dmesg | grep -c 'lnet_ulp: peer done')" -lt 2 ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || lab_fail "the client never finished"
		sleep 1
	done
	kill $ready
	# Stay up (answering recovery pings) until the client is done.
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the client"
else
	i=0
	until nc -w 1 "$(lab_addr "$peer" 0)" 7000 </dev/null >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 60 ] || lab_fail "the server never got ready"
		sleep 1
	done
	before0=$(lab_ni_sends "$me0")
	before1=$(lab_ni_sends "$me1")
	if ! modprobe lnet_ulp mode=client peer="$p0" repeat=40; then
		dmesg | grep -E 'lnet_ulp|ksocklnd|lnet:' | tail -n 30
		lab_fail "client checks failed"
	fi
	after0=$(lab_ni_sends "$me0")
	after1=$(lab_ni_sends "$me1")
	d0=$((after0 - before0))
	d1=$((after1 - before1))
	lab_log "sends over $me0: $d0, over $me1: $d1"
	[ "$d0" -ge 10 ] && [ "$d1" -ge 10 ] || { cat /tmp/nets; lab_fail "traffic did not use both rails ($d0, $d1)"; }
	lab_rmmod lnet_ulp

	# Health comes first: a peer NI at health 0 loses every comparison, so
	# the next sends all take the other rail. A recovery_limit of 1 s keeps
	# recovery pings from raising it meanwhile (the peer NI was last heard
	# from longer ago than that).
	peer_health() {
		lnetctl peer show -v 3 >/tmp/peers3 || lab_fail "peer show -v 3"
		awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "health" && $2 == "value:" && cur == nid { print $3; exit }' /tmp/peers3
	}
	ni_health() {
		lnetctl net show -v 3 >/tmp/nets3 || lab_fail "net show -v 3"
		awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "health" && $2 == "value:" && cur == nid { print $3; exit }' /tmp/nets3
	}
	lnetctl set recovery_limit 1 || lab_fail "set recovery_limit"
	sleep 2
	lnetctl peer set --nid "$p1" --health 0 || lab_fail "peer set --health 0"
	lab_expect_eq "$(peer_health "$p1")" 0 "health value of $p1"
	before0=$(lab_ni_sends "$me0")
	before1=$(lab_ni_sends "$me1")
	if ! modprobe lnet_ulp mode=client peer="$p0" repeat=20; then
		dmesg | grep -E 'lnet_ulp|ksocklnd|lnet:' | tail -n 30
		lab_fail "second client round failed"
	fi
	d0=$(($(lab_ni_sends "$me0") - before0))
	d1=$(($(lab_ni_sends "$me1") - before1))
	lab_log "with $p1 at health 0: sends over $me0: $d0, over $me1: $d1"
	[ "$d0" -ge 20 ] && [ "$d1" -eq 0 ] || { cat /tmp/nets; lab_fail "health did not steer traffic ($d0, $d1)"; }
	lnetctl set recovery_limit 0 || lab_fail "set recovery_limit 0"

	# Recovery: an unhealthy peer NI and local NI are queued and pinged
	# (1 s apart while the pings succeed) until their health is 1000. The
	# peer NI starts at 500: five pings (sensitivity 100), not nine.
	lnetctl peer set --nid "$p1" --health 500 || lab_fail "peer set --health"
	lnetctl debug recovery --peer >/tmp/rq || lab_fail "debug recovery --peer"
	grep -q "$p1" /tmp/rq || { cat /tmp/rq; lab_fail "$p1 not on the peer recovery queue"; }
	i=0
	while [ "$(peer_health "$p1")" != 1000 ]; do
		i=$((i + 1))
		[ $i -lt 30 ] || { cat /tmp/peers3; lab_fail "$p1 did not recover"; }
		sleep 1
	done
	lab_log "$p1 back to health 1000 after ${i}s of recovery pings"
	# A local NI's recovery pings go to its own NID through the NI itself
	# and ksocklnd (a connection to itself), never over 0@lo: its own
	# send and receive counts move, by a GET and a REPLY each way at least.
	s0=$(lab_ni_sends "$me1")
	r0=$(lab_ni_recvs "$me1")
	lnetctl net set --nid "$me1" --health 100 || lab_fail "net set --health 100"
	lnetctl debug recovery --local >/tmp/rq || lab_fail "debug recovery --local"
	grep -q "$me1" /tmp/rq || { cat /tmp/rq; lab_fail "$me1 not on the local recovery queue"; }
	i=0
	while [ "$(ni_health "$me1")" != 1000 ]; do
		i=$((i + 1))
		[ $i -lt 30 ] || { cat /tmp/nets3; lab_fail "$me1 did not recover"; }
		sleep 1
	done
	ds=$(($(lab_ni_sends "$me1") - s0))
	dr=$(($(lab_ni_recvs "$me1") - r0))
	lab_log "$me1 back to health 1000 after ${i}s of recovery pings ($ds sends, $dr receives on $me1)"
	[ "$ds" -ge 2 ] && [ "$dr" -ge 2 ] || { cat /tmp/nets; lab_fail "recovery pings of $me1 did not go through it ($ds sends, $dr receives)"; }
	# So does lnetctl ping of one of our own NIDs.
	s0=$(lab_ni_sends "$me0")
	r0=$(lab_ni_recvs "$me0")
	lnetctl ping "$me0" --timeout 10 >/tmp/pingme 2>&1 || { cat /tmp/pingme; lab_fail "ping of our own $me0"; }
	grep -q "nid: $me0" /tmp/pingme && grep -q "nid: $me1" /tmp/pingme || { cat /tmp/pingme; lab_fail "own ping reply lacks our NIs"; }
	ds=$(($(lab_ni_sends "$me0") - s0))
	dr=$(($(lab_ni_recvs "$me0") - r0))
	lab_log "lnetctl ping $me0: $ds sends, $dr receives on $me0"
	[ "$ds" -ge 2 ] && [ "$dr" -ge 2 ] || { cat /tmp/nets; lab_fail "ping of $me0 did not go through it ($ds sends, $dr receives)"; }
	# Discovery's ping goes by Multi-Rail selection, as any message does
	# but a recovery ping: with our eth0 down, discovering the peer by its
	# primary NID goes over tcp1.
	ip link set eth0 down
	s1=$(lab_ni_sends "$me1")
	if ! lnetctl discover "$p0" >/tmp/disc 2>&1; then
		ip link set eth0 up
		cat /tmp/disc
		lab_fail "discovery of $p0 with our eth0 down"
	fi
	ip link set eth0 up
	ds=$(($(lab_ni_sends "$me1") - s1))
	lab_log "discovery of $p0 with our eth0 down: $ds sends on $me1"
	[ "$ds" -ge 1 ] || lab_fail "discovery's ping did not take $me1"
	echo done | nc -w 5 "$(lab_addr "$peer" 0)" 7001 || lab_fail "could not release the server"
fi
lab_rmmod lnet_ulp
if [ "$LAB_VM" = 1 ]; then
	# The server's PUT events name the client by its primary NID, whichever
	# rail each PUT came over (lnet_build_msg_event's initiator).
	line=$(dmesg | grep 'lnet_ulp: server: ' | tail -n 1)
	lab_log "${line#*lnet_ulp: }"
	case "$line" in
	*" 0 from a NID other than their initiator"*) lab_fail "no PUT came over the other rail: $line" ;;
	*"initiator changed 0 times") ;;
	*) lab_fail "PUT events did not name the client's primary NID: $line" ;;
	esac
fi
lnetctl peer del --prim_nid "$p0" || lab_fail "peer del"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
