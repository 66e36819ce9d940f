# lab: vms=2 nics=2 timeout=300
# A hostile o2ib peer (tests/kmod/o2ib_hostile.ko, an RDMA CM client in
# VM 0) against VM 1's ko2iblnd on o2ib over rxe0: six connection
# requests with malformed private data (short, bad magic, bad version,
# queue depth 1000, a NID VM 1 does not have, 300 fragments) are each
# rejected, one asking 32 fragments is accepted with a CONNACK of 32 (as
# Lustre accepts it), and five malformed messages on a connection made with a good
# request (credits beyond the queue, an unknown type, a wrong checksum, a
# PUT_ACK of 300 fragments, a GET_DONE for nothing) each close it; VM 1
# says why on its console and counts them. VM 1 checksums its own
# messages (cksum=1). Then VM 0 loads LNet and pings VM 1: a good
# peer is served as before. Last, VM 0 refuses each of VM 1's connection
# requests as a lost race for 12 s (o2ib_hostile races=12): VM 1
# reconnects at once ten times, then at most once a second.
rdma link add rxe0 type rxe netdev eth0 || lab_fail "rxe0"
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@o2ib
dmesg -c >/dev/null
if [ "$LAB_VM" = 1 ]; then
	modprobe lnet || lab_fail "lnet did not load"
	modprobe ko2iblnd cksum=1 || lab_fail "ko2iblnd did not load"
	lnetctl lnet configure || lab_fail "configure"
	lnetctl net add --net o2ib --if eth0 || lab_fail "net add o2ib"
	nc -ll -p 7000 -e /bin/true &
	up=$!
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the hostile peer"
	kill $up
	dmesg | grep ko2iblnd | sed 's/^/  /'
	d=/sys/kernel/debug/ko2iblnd
	lab_log "rejected $(cat $d/rejected), protocol errors $(cat $d/protocol_errors)"
	lab_expect_eq "$(cat $d/rejected)" 6 "connection requests rejected"
	lab_expect_eq "$(cat $d/protocol_errors)" 5 "connections closed for a protocol error"
	for why in "bad connection request" "queue depth 1000 too large" "connection request from .* for" \
		"max frags 300 too large" "returned 200 credits" "unknown message type 0xe7" \
		"bad checksum 0xdeadbeef" \
		"bad nfrags 300" "GET_DONE from .* for no GET of ours"; do
		dmesg | grep -q "ko2iblnd: .*$why" || lab_fail "no console line saying \"$why\""
	done
	# VM 0 now refuses every request of ours as a lost race.
	nc -l -p 7002 </dev/null >/dev/null || lab_fail "no word from the race refuser"
	dmesg -c >/dev/null
	lab_must_fail lnetctl ping "$(lab_addr "$peer" 0)@o2ib" --timeout 10
	lab_log "$(dmesg | grep -c 'rejected the connection .*ConnRace') requests refused as races"
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ko2iblnd
	lab_rmmod lnet
	rdma link delete rxe0
	exit 0
fi

lab_wait_server "$(lab_addr "$peer" 0)"
if ! modprobe o2ib_hostile peer="$(lab_addr "$peer" 0)"; then
	dmesg | grep o2ib_hostile
	lab_fail "a hostile case was not answered as it must be"
fi
dmesg | grep o2ib_hostile | sed 's/^/  /'
lab_rmmod o2ib_hostile
modprobe lnet || lab_fail "lnet did not load"
modprobe ko2iblnd || lab_fail "ko2iblnd did not load"
lnetctl lnet configure || lab_fail "configure"
lnetctl net add --net o2ib --if eth0 || lab_fail "net add o2ib"
lnetctl ping "$p0" --timeout 10 >/tmp/ping 2>&1 || { cat /tmp/ping; lab_fail "a good peer is not served"; }
lab_log "pinged $p0 after the hostile cases"
lab_tell "$(lab_addr "$peer" 0)" 7001
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ko2iblnd
lab_rmmod lnet

# Lost races: VM 0 listens where its NI was and refuses each request of
# VM 1's ping as a race. VM 1 reconnects at once ten times in a row, then
# once a second at most (kiblnd_connd's reconn_wait list), until its tx
# ends. Without that pacing there would be hundreds in 12 s.
dmesg -c >/dev/null
modprobe o2ib_hostile peer="$(lab_addr "$LAB_VM" 0)" races=12 &
refuser=$!
sleep 1
lab_tell "$(lab_addr "$peer" 0)" 7002
wait $refuser || lab_fail "the race refuser did not run"
lab_rmmod o2ib_hostile
line=$(dmesg | grep 'o2ib_hostile: races:')
lab_log "$line"
# shellcheck disable=SC2046 # the request times, in ms
set -- $(echo "$line" | sed 's/.*at ms://')
[ $# -ge 13 ] || lab_fail "only $# requests: the ten quick reconnects and two paced ones expected"
# The times are arrivals here: on a loaded host one request can reach us
# late and the next on time, so the paced ones (from the 12th) are judged
# by their mean gap, and no gap may be as short as the quick ones'.
first=$1 i=0 prev=0 paced=
for t in "$@"; do
	i=$((i + 1))
	[ $i = 11 ] && [ $((t - first)) -ge 6000 ] && lab_fail "the first ten reconnects took $((t - first)) ms"
	[ $i = 12 ] && paced=$t
	[ $i -ge 13 ] && [ $((t - prev)) -lt 300 ] && lab_fail "request $i came $((t - prev)) ms after the one before"
	prev=$t
done
[ $((($prev - paced) / ($# - 12))) -ge 800 ] ||
	lab_fail "requests 12 to $# came $((($prev - paced) / ($# - 12))) ms apart on average: not paced at one a second"
[ $# -le 30 ] || lab_fail "$# requests in 12 s: reconnects not paced"
rdma link delete rxe0
