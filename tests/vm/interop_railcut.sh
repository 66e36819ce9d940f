# lab: vms=2 nics=2 lustre=1 timeout=420
# A Lustre node's rail dies under our traffic. The Lustre node serves
# lnet_ulp's buffers; lnet-rs PUTs 4 KiB to it one at a time over both
# rails (a Multi-Rail peer learnt by discovery). Then the Lustre node takes
# eth1 down without a word on the wire: a PUT sent on tcp1 is never
# ACKed, so its response timeout (10 s) costs that peer NI health, and
# selection, health first, keeps every later PUT on tcp. Recovery pings
# sent into the dead rail's socket must not give the health back.
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
fi
lab_interop_teardown
