# lab: vms=2 nics=2 lustre=1 timeout=900
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
# Lustre node's PUTs (its transaction_timeout set to 10 s for it, as
# Lustre's own tests do): it loses at most the PUTs in flight there, its
# health drops, and it uses our tcp1 again once the loss ends.
lab_interop_setup
if [ "$LAB_LUSTRE" = 1 ]; then
	modprobe lnet_ulp mode=server || lab_fail "Lustre: server did not start"
	nc -ll -p 7050 -e /bin/true &
	up=$!
	nc -l -p 7052 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
	ip link set eth1 down
	lab_tell "$(lab_addr "$peer" 0)" 7053
	nc -l -p 7051 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
	kill $up
	ip link set eth1 up
	lab_rmmod lnet_ulp

	us=$(lab_addr "$peer" 0)
	lab_wait_server "$us" 7054
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "Lustre: PUTs over both rails (ok failed)"
	a1=$(lab_peer_ni_sends "$p1")
	[ "${a1:-0}" -gt 0 ] || lab_fail "Lustre: $p1 not used"
	nc -l -p 7057 </dev/null >/dev/null &
	cut=$!
	lab_tell "$us" 7056
	wait $cut
	tries=0
	until [ "$(lab_peer_ni_health "$p1")" -lt 1000 ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 15 ] || { cat /tmp/peer3; lab_fail "Lustre: no push said $p1 is down"; }
		sleep 1
	done
	lab_log "Lustre: $p1 at health $(lab_peer_ni_health "$p1") ${tries}s after our eth1 went down, before any PUT"
	set -- $(lab_burst "$p0" PUT 20)
	lab_log "Lustre: with our eth1 down: $1 PUTs ACKed, $2 lost; $(dmesg | grep -o 'longest [0-9]* ms')"
	[ "$1 $2" = "20 0" ] || lab_fail "Lustre: $2 of 20 PUTs lost although we said $p1 was down"
	nc -l -p 7058 </dev/null >/dev/null &
	back=$!
	lab_tell "$us" 7055
	wait $back
	tries=0
	until [ "$(lab_peer_ni_health "$p1")" = 1000 ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 90 ] || { cat /tmp/peer3; lab_fail "Lustre: $p1 not back at 1000"; }
		sleep 1
	done
	lab_log "Lustre: $p1 back at health 1000 ${tries}s after our eth1 came up"
	a1=$(lab_peer_ni_sends "$p1")
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "Lustre: PUTs once our eth1 is back (ok failed)"
	d1=$(($(lab_peer_ni_sends "$p1") - a1))
	[ "$d1" -gt 0 ] || lab_fail "Lustre: $p1 unused after it came back"
	lab_tell "$us" 7059

	modprobe lnet_ulp mode=server || lab_fail "Lustre: server did not start"
	nc -ll -p 7060 -e /bin/true &
	up=$!
	nc -l -p 7062 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
	tc qdisc add dev eth1 root netem loss 100% || lab_fail "Lustre: netem"
	lab_tell "$us" 7063
	nc -l -p 7064 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
	tc qdisc del dev eth1 root
	lab_tell "$us" 7065
	nc -l -p 7061 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
	kill $up
	lab_rmmod lnet_ulp

	lab_wait_server "$us" 7066
	tries=0
	until [ "$(lab_peer_ni_health "$p1")" = 1000 ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 90 ] || { cat /tmp/peer3; lab_fail "Lustre: $p1 not at 1000"; }
		sleep 1
	done
	tt=$(lnetctl global show | awk '$1 == "transaction_timeout:" { print $2 }')
	lnetctl set transaction_timeout 10 || lab_fail "Lustre: set transaction_timeout"
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "Lustre: PUTs before our silence (ok failed)"
	nc -l -p 7069 </dev/null >/dev/null &
	cut=$!
	lab_tell "$us" 7068
	wait $cut
	set -- $(lab_burst "$p0" PUT 20)
	lab_log "Lustre: with our eth1 silent: $1 PUTs ACKed, $2 lost; $(dmesg | grep -o 'longest [0-9]* ms')"
	[ "$2" -le 2 ] || lab_fail "Lustre: $2 of 20 PUTs lost on the silent rail"
	h=$(lab_peer_ni_health "$p1")
	[ "${h:-1000}" -lt 1000 ] || lab_fail "Lustre: $p1 at health ${h:-?} while silent"
	nc -l -p 7071 </dev/null >/dev/null &
	back=$!
	lab_tell "$us" 7070
	wait $back
	tries=0
	until [ "$(lab_peer_ni_health "$p1")" = 1000 ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 120 ] || { cat /tmp/peer3; lab_fail "Lustre: $p1 not back at 1000"; }
		sleep 1
	done
	lab_log "Lustre: $p1 at health $h while silent, back at 1000 ${tries}s after the loss ended"
	a1=$(lab_peer_ni_sends "$p1")
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "Lustre: PUTs after our silence (ok failed)"
	[ $(($(lab_peer_ni_sends "$p1") - a1)) -gt 0 ] || lab_fail "Lustre: $p1 unused after the silence"
	lnetctl set transaction_timeout "${tt:-150}"
	lab_tell "$us" 7067
else
	lab_wait_server "$(lab_addr "$peer" 0)" 7050
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "PUTs over both rails (ok failed)"
	a0=$(lab_peer_ni_sends "$p0")
	a1=$(lab_peer_ni_sends "$p1")
	[ "$a0" -gt 0 ] && [ "$a1" -gt 0 ] || lab_fail "not both rails used ($a0, $a1)"
	nc -l -p 7053 </dev/null >/dev/null &
	cut=$!
	lab_tell "$(lab_addr "$peer" 0)" 7052
	wait $cut
	set -- $(lab_burst "$p0" PUT 20)
	lab_log "with the Lustre node's eth1 down: $1 PUTs ACKed, $2 lost"
	[ "$2" -le 2 ] || lab_fail "$2 of 20 PUTs lost after the rail died"
	h=$(lab_peer_ni_health "$p1")
	[ "${h:-1000}" -lt 1000 ] || lab_fail "$p1 at health ${h:-?} after its PUTs timed out"
	t0=$(date +%s)
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "PUTs once $p1 lost health (ok failed)"
	h2=$(lab_peer_ni_health "$p1")
	lab_log "$p1 at health $h, then $h2 after 10 more PUTs in $(($(date +%s) - t0))s"
	[ "${h2:-1000}" -lt 1000 ] || lab_fail "$p1 back at health 1000 with its link down"
	lab_tell "$(lab_addr "$peer" 0)" 7051

	lustre=$(lab_addr "$peer" 0)
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7054 -e /bin/true &
	up=$!
	nc -l -p 7056 </dev/null >/dev/null || lab_fail "no word from the Lustre node"
	ip link set eth1 down
	lab_tell "$lustre" 7057
	nc -l -p 7055 </dev/null >/dev/null || lab_fail "no word from the Lustre node"
	ip link set eth1 up
	lab_tell "$lustre" 7058
	nc -l -p 7059 </dev/null >/dev/null || lab_fail "no word from the Lustre node"
	kill $up
	lab_rmmod lnet_ulp

	# Wait until health is 1000 (≤ $2 s) of the peer NI $1; prints the seconds.
	healthy() {
		n=0
		until [ "$(lab_peer_ni_health "$1")" = 1000 ]; do
			n=$((n + 1))
			[ "$n" -lt "$2" ] || { cat /tmp/peer3; lab_fail "$1 not back at health 1000"; }
			sleep 1
		done
		echo "$n"
	}
	lab_wait_server "$lustre" 7060
	healthy "$p1" 90 >/dev/null
	a1=$(lab_peer_ni_sends "$p1")
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "PUTs over both rails before the silence (ok failed)"
	[ $(($(lab_peer_ni_sends "$p1") - a1)) -gt 0 ] || lab_fail "$p1 unused before the silence"
	nc -l -p 7063 </dev/null >/dev/null &
	cut=$!
	lab_tell "$lustre" 7062
	wait $cut
	set -- $(lab_burst "$p0" PUT 20)
	lab_log "with the Lustre node's eth1 silent: $1 PUTs ACKed, $2 lost; $(dmesg | grep -o 'longest [0-9]* ms')"
	[ "$2" -le 2 ] || lab_fail "$2 of 20 PUTs lost on the silent rail"
	h=$(lab_peer_ni_health "$p1")
	[ "${h:-1000}" -lt 1000 ] || lab_fail "$p1 at health ${h:-?} while silent"
	nc -l -p 7065 </dev/null >/dev/null &
	back=$!
	lab_tell "$lustre" 7064
	wait $back
	t=$(healthy "$p1" 120)
	lab_log "$p1 at health $h while silent, back at 1000 ${t}s after the loss ended"
	a1=$(lab_peer_ni_sends "$p1")
	lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "PUTs after the silence (ok failed)"
	[ $(($(lab_peer_ni_sends "$p1") - a1)) -gt 0 ] || lab_fail "$p1 unused after the silence"
	lab_tell "$lustre" 7061

	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7066 -e /bin/true &
	up=$!
	nc -l -p 7068 </dev/null >/dev/null || lab_fail "no word from the Lustre node"
	tc qdisc add dev eth1 root netem loss 100% || lab_fail "netem"
	lab_tell "$lustre" 7069
	nc -l -p 7070 </dev/null >/dev/null || lab_fail "no word from the Lustre node"
	tc qdisc del dev eth1 root
	lab_tell "$lustre" 7071
	nc -l -p 7067 </dev/null >/dev/null || lab_fail "no word from the Lustre node"
	kill $up
	lab_rmmod lnet_ulp
fi
lab_interop_teardown
