# lab: vms=2 nics=2 timeout=600
# ko2iblnd Health under a rail cut, two VMs over rxe0/rxe1 with o2ib and
# o2ib1, the peer learnt by discovery (no `peer add`):
# - our eth1 goes down under a flood of 512 KiB PUTs to the peer's o2ib NID:
#   rxe1's PORT_ERR marks o2ib1 fatal (shown down within a second), what was
#   in flight on it fails over, the ULP sees no failed PUT but those whose
#   tx waited for the peer's answer as its connection closed (the peer may
#   have matched it: not resent, as in Lustre; ko2iblnd's aborted_final
#   counts them), and o2ib1 takes no new send; eth1 up: PORT_ACTIVE, and
#   o2ib1 carries traffic again;
# - a connection request in flight when our eth1 goes down: o2ib1 connects
#   again once the port is back;
# - the peer's eth1 goes down under a flood: its push reports its o2ib1 NI
#   down, what was in flight to it fails over, no PUT fails (but as
#   above), and a second
#   flood leaves that peer NI alone; its eth1 up: the NI is used again;
# - rxe1 deleted under a flood: o2ib1 is fatal at once, the flood goes on
#   over o2ib, and the removal completes once `net del` takes o2ib1.
for nic in 0 1; do
	rdma link add "rxe$nic" type rxe netdev "eth$nic" || lab_fail "rxe$nic"
done
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
me0=$(lab_addr "$LAB_VM" 0)@o2ib
me1=$(lab_addr "$LAB_VM" 1)@o2ib1
p0=$paddr@o2ib
p1=$(lab_addr "$peer" 1)@o2ib1
# Each PUT still moves by RDMA over many fragments; rxe under TCG moves
# about 0.6 MiB/s, and the floods last long enough for their cuts.
LAB_FLOOD_BYTES=524288
dmesg -c >/dev/null
# Recovery pings back off to 4 s at most, so a rail that comes back is
# found healthy again within seconds.
modprobe lnet lnet_max_recovery_ping_interval=4 || lab_fail "lnet did not load"
modprobe ko2iblnd || lab_fail "ko2iblnd did not load"
lnetctl lnet configure || lab_fail "configure"
lnetctl net add --net o2ib --if eth0 || lab_fail "net add o2ib"
lnetctl net add --net o2ib1 --if eth1 || lab_fail "net add o2ib1"

if [ "$LAB_VM" = 1 ]; then
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7000 -e /bin/true &
	up=$!
	# VM 0 says when to take eth1 down and when to bring it back.
	nc -l -p 7002 </dev/null >/dev/null || lab_fail "no word to cut eth1"
	ip link set eth1 down
	nc -l -p 7002 </dev/null >/dev/null || lab_fail "no word to restore eth1"
	ip link set eth1 up
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the client"
	kill $up
	lab_rmmod lnet_ulp
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ko2iblnd
	lab_rmmod lnet
	for nic in 0 1; do rdma link delete "rxe$nic"; done
	exit 0
fi

# The status of our NI $1 (lnetctl net show).
ni_status() {
	lnetctl net show >/tmp/nets || lab_fail "net show"
	awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "status:" && cur == nid { print $2; exit }' /tmp/nets
}
# Waits (600 tries) until command $1 prints $2; prints the milliseconds
# it took (run in $(...): a failure is told on stderr).
wait_for() {
	t=$(now_ms)
	i=0
	until [ "$($1)" = "$2" ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || lab_fail "$1 is $($1), not $2" >&2
		sleep 0.05
	done
	echo $(($(now_ms) - t))
}
me1_status() { ni_status "$me1"; }
me1_health() { lab_ni_health "$me1"; }
p1_health() { lab_peer_ni_health "$p1"; }
# Txs our closing connections failed to their ULP since the flood began.
aborted_final() { cat /sys/kernel/debug/ko2iblnd/aborted_final; }
# Waits for the flood; fails unless all $1 PUTs ended and each one that
# failed is one of those txs.
flood_done() {
	lab_flood_end "$2"
	final=$(($(aborted_final) - final0))
	[ $((ok + failed)) = "$1" ] && [ "$failed" -le "$final" ] && [ "$unended" = 0 ] ||
		lab_fail "$2: $line ($final txs aborted for good)"
	[ "$failed" = 0 ] || lab_log "$2: $failed PUT(s) failed, of $final txs that waited for the peer's answer when their connection closed"
}
# A flood of $1 PUTs, returning once our o2ib1 NI has carried 3 of them
# while it still runs: the moment to cut.
flood_both() {
	final0=$(aborted_final)
	start1=$(lab_ni_sends "$me1")
	lab_flood "$1" "$2"
	i=0
	while [ "$(lab_ni_sends "$me1")" -le $((start1 + 2)) ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || lab_fail "o2ib1 never carried the flood"
		sleep 0.1
	done
	kill -0 $flooding 2>/dev/null || lab_fail "the flood ended before the cut"
}
# "At once": the port or removal event, not a timeout (tens of seconds:
# the flood's PUTs would wait out lnd_timeout, 49 s here), marks the NI
# fatal: timed on the kernel's clock from the cut to ko2iblnd's line $2,
# so that lnetctl's own time under load does not count. The limit leaves
# room for the cut itself on a loaded machine (a second here, 6 s once on
# CI's for the removal, which the RDMA core's other clients go through
# first). $1: what was cut.
SHOWN_DOWN_MS=10000
marked_fatal() {
	ms=$(wait_for me1_status down)
	ev=$(lab_kmsg_ms "$1" "$2")
	[ -n "$ev" ] || lab_fail "$1: no \"$2\" in the kernel log"
	lab_log "$1: $me1 marked fatal $ev ms after the cut, shown down by lnetctl after $ms ms"
	[ "$ev" -le "$SHOWN_DOWN_MS" ] || lab_fail "$1: $me1 took $ev ms to be marked fatal"
}
# lnet_ulp's client checks, which must use both rails ($1: when).
rail1_used() {
	lab_client_rails "$p0" 16
	lab_log "$1: sends on $me0: $d0, on $me1: $d1"
	[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "not both rails used $1 ($d0, $d1)"
}

# PUTs sent on our o2ib1 NI (its sent_stats).
me1_puts() {
	lnetctl net show -v 3 >/tmp/nets3 || lab_fail "net show -v 3"
	lab_elem_stat /tmp/nets3 "$me1" sent_stats put
}

# PUTs sent to the peer's o2ib1 NI (its sent_stats).
p1_puts() {
	lnetctl peer show -v 3 >/tmp/peers3 || lab_fail "peer show -v 3"
	lab_elem_stat /tmp/peers3 "$p1" sent_stats put
}

lab_wait_server "$paddr"
lnetctl discover "$p0" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $p0"; }
grep -q "nid: $p1\$" /tmp/disc || { cat /tmp/disc; lab_fail "discovery did not learn $p1"; }
rail1_used "before the cuts"

# Our eth1 down mid-flood.
flood_both 24
lab_kmsg_mark "eth1 down"
ip link set eth1 down
marked_fatal "eth1 down" "ko2iblnd: .*@o2ib1: .*NI marked fatal"
cut1=$(lab_ni_sends "$me1")
cutp=$(me1_puts)
lab_log "eth1 down: after $((cut1 - start1)) sends on $me1"
flood_done 24 "flood with our eth1 cut"
end1=$(lab_ni_sends "$me1")
endp=$(me1_puts)
lab_log "while down: $((end1 - cut1)) sends on $me1, of them $((endp - cutp)) PUTs (the rest recovery pings)"
# PUTs: at most what was waiting for its credits when the port went down
# (peer_credits, 8). Recovery pings (GETs) keep trying the NI, as many as
# the flood's length allows.
[ "$endp" -le $((cutp + 8)) ] || lab_fail "o2ib1 kept being chosen for PUTs while down ($cutp -> $endp)"
ip link set eth1 up
ms=$(wait_for me1_status up)
lab_log "eth1 up: $me1 shown up in $ms ms"
# Recovery pings (of itself, through the rail, and of the peer's NI on
# it, which the resends charged) bring the health of both ends back.
ms=$(wait_for me1_health 1000)
lab_log "$me1 back to health 1000 in $ms ms"
ms=$(wait_for p1_health 1000)
lab_log "$p1 back to health 1000 in $ms ms"
rail1_used "after eth1 came back"

# A connection request in flight when the port goes down: the CM sends it
# again on the down port, where an HCA loses it. eth1 is silenced (netem)
# so that o2ib1's new connection waits for its reply, the port goes down
# for longer than the CM waits before sending again, and comes back: o2ib1
# must connect again.
# The peer's address stays resolved while eth1 is silent, so that the
# request goes out.
paddr1=$(lab_addr "$peer" 1)
ping -c 1 -W 2 "$paddr1" >/dev/null || lab_fail "ping $paddr1"
mac=$(ip neigh show "$paddr1" dev eth1 | awk '{ print $3; exit }')
ip neigh replace "$paddr1" lladdr "$mac" dev eth1 nud permanent || lab_fail "neighbour $paddr1 ($mac)"
tc qdisc add dev eth1 root netem loss 100% || lab_fail "netem on eth1"
lnetctl net del --net o2ib1 || lab_fail "net del o2ib1"
lnetctl net add --net o2ib1 --if eth1 || lab_fail "net add o2ib1 again"
# The ping's MD is unlinked after its second; its GET, failed by the
# connect's timeout, is then ended, not resent (lnet_post_send_locked).
lab_kmsg_mark "ping in flight"
lab_must_fail lnetctl ping --source "$me1" "$p1" --timeout 1
[ -z "$(lab_kmsg_ms "ping in flight" "Resending GET to $p1 .*attempt 2")" ] ||
	lab_fail "a GET of a ping whose MD was unlinked was resent twice"
ip link set eth1 down
ms=$(wait_for me1_status down)
sleep 8
ip link set eth1 up
tc qdisc del dev eth1 root || lab_fail "netem off eth1"
t=$(now_ms)
i=0
until lnetctl ping --source "$me1" "$p1" --timeout 5 >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 12 ] || lab_fail "o2ib1 cannot connect after the port came back"
done
lab_log "connect in flight as eth1 went down: o2ib1 pings $p1 $(($(now_ms) - t)) ms after eth1 came back"
ms=$(wait_for me1_health 1000)

# The peer's eth1 down mid-flood. Lustre shows no peer NI's reported
# status, so what we see is where the PUTs go.
flood_both 24
lab_tell "$paddr" 7002
cut1=$(lab_peer_ni_sends "$p1")
flood_done 24 "flood with the peer's eth1 cut"
end1=$(lab_peer_ni_sends "$p1")
endp=$(p1_puts)
lab_log "sends to $p1 after the cut: $((end1 - cut1)); its health $(lab_peer_ni_health "$p1")"
final0=$(aborted_final)
# All posted at once, so each is steered as it is posted: 8 show it as
# well as more would, each 512 KiB PUT costing about 1.5 s on one rail.
lab_flood 8
flood_done 8 "second flood, the peer's eth1 still down"
after1=$(lab_peer_ni_sends "$p1")
afterp=$(p1_puts)
lab_log "second flood: $((after1 - end1)) sends to $p1, of them $((afterp - endp)) PUTs"
# No PUT: only recovery pings (GETs), as many as the flood's length allows.
[ "$afterp" -eq "$endp" ] || lab_fail "$p1 kept being chosen for PUTs while down ($endp -> $afterp)"
lab_tell "$paddr" 7002
# Its push reports the NI up; our recovery pings bring its health back.
ms=$(wait_for p1_health 1000)
lab_log "peer's eth1 up: $p1 back to health 1000 in $ms ms"
# A tx of ours may have waited out its timeout on a connection that the
# peer dropped while its port came back (rxe on a loaded machine has shown
# that), charging our o2ib1 NI: selection leaves the rail until its own
# recovery pings bring it back too.
ms=$(wait_for me1_health 1000)
lab_log "and $me1 at health 1000 after $ms ms more"
rail1_used "after the peer's eth1 came back"

# rxe1 deleted under a flood (the device removed): o2ib1 is marked fatal
# at once, its connections close and what was on them fails over; the
# removal waits for the NI, which `net del` then takes away. A PUT whose
# bytes had all gone just before waits for an ACK with no NI left to come
# back to (the peer keeps a response's destination NI, as Lustre does):
# its response timeout (60 s here) ends it, as in Lustre; so does a PUT
# whose tx waited for the peer's answer as its connection closed (not
# resent, as in Lustre); any other failure fails the step. How many PUTs
# had all their bytes on o2ib1 at the cut is a matter of timing (2 and 3
# seen): at most the half of the flood that o2ib1 carries. 16 PUTs: about
# 13 s of traffic at least, where the deletion comes some 5 s into it.
flood_both 16 60
# The removal calls our CM handler from the deleting process: at real-time
# priority, so that the flood's threads do not delay it by seconds on a
# loaded machine (CI's took 5.8 s). Marked from within, so that
# starting the process does not count either.
chrt -f 50 sh -c 'echo "<6>lab-mark: rxe1 deleted" >/dev/kmsg; exec rdma link delete rxe1' &
deleting=$!
# Had this step failed, the removal would wait for the NI for ever.
trap '! kill -0 $deleting 2>/dev/null || lnetctl net del --net o2ib1' EXIT
marked_fatal "rxe1 deleted" "RDMA device going away: NI marked fatal"
lab_flood_end "flood with rxe1 deleted"
lost=$(dmesg | sed -n "s/.* \([0-9]*\) response(s) timed out, the last from $p1\$/\1/p" |
	awk '{ s += $1 } END { print s + 0 }')
final=$(($(aborted_final) - final0))
[ "$unended" = 0 ] && [ $((ok + failed)) = 16 ] && [ "$failed" -le $((lost + final)) ] &&
	[ "$lost" -le 8 ] ||
	lab_fail "flood with rxe1 deleted: $line ($lost responses from $p1 timed out, $final txs aborted for good)"
[ "$failed" = 0 ] || lab_log "$failed PUT(s) lost their ACK with rxe1 or waited for the peer's answer ($final)"
kill -0 $deleting 2>/dev/null || lab_fail "rxe1 went while its NI was still up"
lnetctl net del --net o2ib1 || lab_fail "net del o2ib1 after rxe1 went"
wait $deleting || lab_fail "rdma link delete rxe1"
trap - EXIT
lab_must_fail rdma link show rxe1/1
lab_client_rails "$p0" 8
lab_log "o2ib alone after rxe1 went: $d0 sends"
lab_expect_eq "$(cat /sys/kernel/debug/ko2iblnd/protocol_errors)" 0 "protocol errors"

lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ko2iblnd
lab_rmmod lnet
rdma link delete rxe0
