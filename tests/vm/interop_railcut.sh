# lab: vms=2 nics=2 clnet=1 timeout=900
# A Lustre node's rail dies under our traffic. The Lustre node serves
# lnet_ulp's buffers; lnet-rs PUTs 4 KiB to it one at a time over both
# rails (a Multi-Rail peer learnt by discovery). Then the Lustre node takes
# eth1 down. Its push may say so (a reported-down peer NI costs one remote
# failure); a PUT sent on tcp1 before that is never ACKed and its response
# timeout (10 s) costs the same. Either way selection, health first, keeps
# every later PUT on tcp, and recovery pings sent into the dead rail's
# socket must not give the health back.
# Then the other way round: our rail dies under the Lustre node's PUTs to
# our server. Our push says so before any PUT is lost (Lustre charges a
# peer NI reported down one remote failure, so its selection leaves it),
# every PUT is ACKed, and once our eth1 is up again and pushed up, the
# Lustre node's recovery pings bring that peer NI back to 1000 and its
# PUTs use both rails again. Last, the Lustre node's eth1 goes silent
# (netem, 100% loss: no link event, no push): at most the PUTs in flight
# there are lost, their response timeouts cost that peer NI health, and
# once the loss ends our recovery pings bring it back to 1000 and both
# rails carry our PUTs again. And the same silence on our eth1 under the
# Lustre node's PUTs (its transaction_timeout 10 s for it, as Lustre's own
# tests load it): it loses at most the PUTs in flight there, its health
# drops, and it uses our tcp1 again once the loss ends.
# LAB_RAILCUT_NODE (by default the Lustre node: 1 there, else 0) picks who
# plays the Lustre node's part, so that two lnet-rs nodes can run the same
# choreography (railcut_mixed).
# Recovery pings back off to 4 s at most on both nodes (Lustre's default
# is 900), so that a rail back from a silence is found healthy within
# seconds, however long the silence backed its pings off.
LAB_LNET_ARGS=lnet_max_recovery_ping_interval=4
# Lustre's LNet ends the PUTs whose ACK is late in a monitor pass every
# transaction_timeout/2 s, each pass timing the next with the value it
# finds: 10 s set at run time would take effect only after the up to 75 s
# that the default (150 s) gave the pass before, and a PUT lost to the
# silence on our eth1 waited that long (that step took 70 s). So the
# Lustre node loads its LNet with 10 s, as Lustre's sanity-lnet does, and
# takes its default back after that silence. No step before it waits for
# a response timeout of the Lustre node, and its LND keeps its own
# timeout (ksocklnd's sock_timeout, ko2iblnd's timeout: 50 s).
[ "$LAB_LUSTRE" = 1 ] && LAB_LNET_ARGS="$LAB_LNET_ARGS lnet_transaction_timeout=10"
# shellcheck disable=SC2086 # the two nets, or none for tcp1 and tcp
lab_interop_setup ${LAB_RAIL_NETS:-}
other=$(lab_addr "$peer" 0)

# serve_start PORT: serves lnet_ulp's buffers, saying so on PORT;
# serve_stop PORT: once the client says it is done on PORT, stops.
serve_start() {
	modprobe lnet_ulp mode=server || lab_fail "$side: server did not start"
	nc -ll -p "$1" -e /bin/true &
	up=$!
}
serve_stop() {
	nc -l -p "$1" </dev/null >/dev/null || lab_fail "$side: no word from the client"
	kill $up
	lab_rmmod lnet_ulp
}

# serve_cut BASE CUT RESTORE: serves lnet_ulp's buffers (saying so on port
# BASE), runs CUT when the client asks (port BASE+2, answered on BASE+3)
# and RESTORE likewise (BASE+4, BASE+5), until the client is done (BASE+1).
serve_cut() {
	serve_start "$1"
	for step in 2 4; do
		nc -l -p $(($1 + step)) </dev/null >/dev/null || lab_fail "$side: no word from the client"
		if [ "$step" = 2 ]; then $2 || lab_fail "$side: $2"; else $3; fi
		lab_tell "$other" $(($1 + step + 1))
	done
	serve_stop $(($1 + 1))
}

# ask PORT: has the server go on (cut or restore), and waits until it has.
ask() {
	nc -l -p $(($1 + 1)) </dev/null >/dev/null &
	w=$!
	lab_tell "$other" "$1"
	wait $w
}

# used WHAT [SECONDS]: 10 PUTs, all ACKed (each given SECONDS, 10), some
# of them to the peer's tcp1 NID. After a silence, TCP on that rail may
# still wait out its backed-off retransmission timer (seconds) before the
# stream moves again: those get 60.
used() {
	a1=$(lab_peer_ni_sends "$p1")
	lab_expect_eq "$(lab_burst "$p0" PUT 10 "${2:-10}")" "10 0" "$side: PUTs $1 (ok failed)"
	[ $(($(lab_peer_ni_sends "$p1") - a1)) -gt 0 ] || lab_fail "$side: $p1 unused $1"
}

# lost WHAT MAX: 20 PUTs, at most MAX of them lost; sets h, the health of
# the peer's tcp1 NID after them, which must be below 1000.
lost() {
	set -- "$1" "$2" $(lab_burst "$p0" PUT 20)
	lab_log "$side: $1: $3 PUTs ACKed, $4 lost; $(dmesg | grep -o 'longest [0-9]* ms')"
	[ "$4" -le "$2" ] || lab_fail "$side: $4 of 20 PUTs lost $1"
	h=$(lab_peer_ni_health "$p1")
	[ "${h:-1000}" -lt 1000 ] || lab_fail "$side: $p1 at health ${h:-?} $1"
}

if [ "${LAB_RAILCUT_NODE:-$LAB_LUSTRE}" = 1 ]; then
	serve_cut 7050 "ip link set eth1 down" "ip link set eth1 up"

	lab_wait_server "$other" 7060
	used "over both rails"
	ask 7062
	t=$(lab_wait_health "$p1" lt 1000 15)
	lab_log "$side: $p1 at health $(lab_peer_ni_health "$p1") ${t}s after our eth1 went down, before any PUT"
	lost "with our eth1 down" 0
	ask 7064
	t=$(lab_wait_health "$p1" eq 1000 90)
	lab_log "$side: $p1 back at health 1000 ${t}s after our eth1 came up"
	used "once our eth1 is back"
	lab_tell "$other" 7061

	serve_cut 7070 "tc qdisc add dev eth1 root netem loss 100%" "tc qdisc del dev eth1 root"

	lab_wait_server "$other" 7080
	lab_wait_health "$p1" eq 1000 90 >/dev/null
	tt=$(lnetctl global show | awk '$1 == "transaction_timeout:" { print $2 }')
	# Loaded with 10 s (above): its default after the silence.
	[ "$LAB_LUSTRE" = 1 ] && tt=150
	lnetctl set transaction_timeout 10 || lab_fail "Lustre: set transaction_timeout"
	used "before our silence"
	ask 7082
	lost "with our eth1 silent" 2
	ask 7084
	t=$(lab_wait_health "$p1" eq 1000 120)
	lab_log "$side: $p1 at health $h while silent, back at 1000 ${t}s after the loss ended"
	# Its own timeout back first: with 10 s, a PUT queued behind its TCP
	# stream's backed-off retransmission timer on tcp1 fails before the
	# stream moves, however long `used` gives it.
	lnetctl set transaction_timeout "${tt:-150}"
	used "after our silence" 60
	lab_tell "$other" 7081

	# Our eth1 flaps under our own PUTs: our push says that NI is down.
	# Its health is below 1000 (900, set here: failovers this quick cost
	# it nothing) when the link returns, so the link's return pushes
	# nothing, and it heals through our recovery pings alone, which push
	# nothing either. Once it carries our PUTs again, the client must use
	# it too: it heard from it.
	lab_wait_server "$other" 7090
	lab_burst "$p0" PUT 30 3 >/tmp/flap &
	flap=$!
	sleep 1
	ip link set eth1 down
	wait $flap
	lab_log "$side: PUTs with our eth1 going down: $(cat /tmp/flap) (ok failed)"
	lnetctl net set --nid "$me1" --health 900 || lab_fail "$side: net set --health 900"
	ip link set eth1 up
	t=$(lab_wait_ni_health "$me1" 90)
	lab_log "$side: $me1 back at health 1000 ${t}s after our eth1 came up"
	used "once our own eth1 is back"
	lab_tell "$other" 7092
	serve_start 7095
	serve_stop 7096
	lab_tell "$other" 7091
else
	lab_wait_server "$other" 7050
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "PUTs over both rails (ok failed)"
	a0=$(lab_peer_ni_sends "$p0")
	a1=$(lab_peer_ni_sends "$p1")
	[ "$a0" -gt 0 ] && [ "$a1" -gt 0 ] || lab_fail "not both rails used ($a0, $a1)"
	ask 7052
	lost "with the Lustre node's eth1 down" 2
	t0=$(date +%s)
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "PUTs once $p1 lost health (ok failed)"
	h2=$(lab_peer_ni_health "$p1")
	lab_log "$p1 at health $h, then $h2 after 10 more PUTs in $(($(date +%s) - t0))s"
	[ "${h2:-1000}" -lt 1000 ] || lab_fail "$p1 back at health 1000 with its link down"
	ask 7054
	lab_tell "$other" 7051

	serve_cut 7060 "ip link set eth1 down" "ip link set eth1 up"

	lab_wait_server "$other" 7070
	lab_wait_health "$p1" eq 1000 90 >/dev/null
	used "over both rails before the silence"
	ask 7072
	lost "with the Lustre node's eth1 silent" 2
	ask 7074
	t=$(lab_wait_health "$p1" eq 1000 120)
	lab_log "$p1 at health $h while silent, back at 1000 ${t}s after the loss ended"
	used "after the silence" 60
	lab_tell "$other" 7071

	serve_cut 7080 "tc qdisc add dev eth1 root netem loss 100%" "tc qdisc del dev eth1 root"

	# The Lustre node's eth1 flaps under its own PUTs: its push reports its
	# tcp1 NI down, and none reports it up again (its health comes back
	# through its own recovery pings). Its PUTs from that NI say it is up
	# (lnet_parse): ours use it again, within a recovery interval.
	serve_start 7090
	serve_stop 7092
	lab_wait_server "$other" 7095
	used "once the Lustre node's own eth1 came back"
	lab_tell "$other" 7096
	nc -l -p 7091 </dev/null >/dev/null || lab_fail "no word from the Lustre node"
fi
lab_interop_teardown
