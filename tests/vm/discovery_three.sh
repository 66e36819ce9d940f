# lab: vms=4 nics=2 timeout=300
# Three nodes discover each other at once while traffic runs, with no
# `peer add`: tcp on eth0, tcp1 on eth1 everywhere. Each node serves
# lnet_ulp's buffers; once all do, each floods the other two at the same
# time through their primary NIDs (16 PUTs of 64 KiB each, all posted at
# once: twice a peer's 8 credits), so every node's first PUTs wait for
# discovery of two peers while it is being discovered by both and pushed
# to. Every PUT ends with its ACK, each node lists both others as
# Multi-Rail and discovered with both NIDs, and both rails carried PUTs to
# each of them. Then VM 0's eth1 flaps six times in a row: as Lustre's
# monitor does, the twelve status changes are folded into at most one new
# ping buffer (and push) a second, and after the last push both peers
# send over VM 0's tcp1 NI again.
# The fourth VM of the lab's boot (routing_two's) sits this one out.
[ "$LAB_VM" -ge 3 ] && exit 0
dmesg -c >/dev/null
modprobe lnet networks="tcp(eth0),tcp1(eth1)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"
# Each flood 16 PUTs: 48 took 37 to 48 s here and once 71 s on a slower
# machine, past op_timeout; 16 still queue behind discovery and credits.
modprobe lnet_ulp mode=server repeat=16 flood_bytes=65536 op_timeout=60 ||
	lab_fail "server did not start"
others=""
v=0
while [ "$v" -lt 3 ]; do
	[ "$v" = "$LAB_VM" ] || others="$others $v"
	v=$((v + 1))
done
lnetctl peer show >/tmp/peers || lab_fail "peer show"
grep -q "@tcp1" /tmp/peers && { cat /tmp/peers; lab_fail "a tcp1 NID known before any traffic"; }
lab_sync 1

list=""
for v in $others; do
	list="$list${list:+,}$(lab_addr "$v" 0)@tcp"
done
echo "$list" >/sys/module/lnet_ulp/parameters/flood_to || lab_fail "flood of $list did not run"
for v in $others; do
	p0=$(lab_addr "$v" 0)@tcp
	line=$(dmesg | grep "lnet_ulp: flood of .* to $p0 ")
	lab_log "$line"
	case "$line" in
	*": 16 ok, 0 failed, 0 without a final event") ;;
	*) lab_fail "flood of $p0: $line" ;;
	esac
done
lab_sync 2

# sends_in FILE NID: the send count of the peer NI NID in FILE, a `peer
# show -v 2` or more.
sends_in() {
	awk -v nid="$2" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "send_count:" && cur == nid { print $2; exit }' "$1"
}
for v in $others; do
	p0=$(lab_addr "$v" 0)@tcp
	p1=$(lab_addr "$v" 1)@tcp1
	lab_check_learnt "$p0" "$p1"
	# Its NIs' send counts, from the `peer show -v 3` that
	# lab_check_learnt wrote (no traffic since).
	s0=$(sends_in /tmp/peer3 "$p0")
	s1=$(sends_in /tmp/peer3 "$p1")
	lab_log "sends to $p0: $s0, to $p1: $s1"
	[ "${s0:-0}" -ge 2 ] && [ "${s1:-0}" -ge 2 ] || lab_fail "PUTs to vm$v did not use both rails ($s0, $s1)"
done
lab_rmmod lnet_ulp
lab_sync 3

# The sequence number of this node's ping buffer.
ping_seq() {
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=pinginfo || lab_fail "pinginfo"
	lab_rmmod lnet_ulp
	dmesg | sed -n 's/.*lnet_ulp: ping info: .* sequence \([0-9]*\) .*/\1/p'
}
if [ "$LAB_VM" = 0 ]; then
	seq0=$(ping_seq)
	t0=$(cut -d' ' -f1 /proc/uptime)
	for i in 1 2 3 4 5 6; do
		ip link set eth1 down
		ip link set eth1 up
	done
	t1=$(cut -d' ' -f1 /proc/uptime)
	sleep 3
	seq1=$(ping_seq)
	# One monitor pass a second; the last change is taken up to a second
	# after the loop, and sleep 3 gives it that time.
	allowed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { d = b - a; n = int(d); if (n < d) n++; print n + 2 }')
	lab_log "12 status changes in $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s: ping buffer $seq0 -> $seq1 (at most $allowed new ones)"
	[ -n "$seq0" ] && [ -n "$seq1" ] || lab_fail "no ping buffer sequence"
	[ "$seq1" -gt "$seq0" ] || lab_fail "the status changes built no new ping buffer"
	[ $((seq1 - seq0)) -le "$allowed" ] || lab_fail "$((seq1 - seq0)) ping buffers for 12 changes"
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
fi
lab_sync 4
if [ "$LAB_VM" != 0 ]; then
	# The flaps' pushes said tcp1 went down; recovery brings the peer NI's
	# health back, and the last push said it is up: PUTs use it again.
	n0=$(lab_addr 0 0)@tcp
	n1=$(lab_addr 0 1)@tcp1
	tries=$(lab_wait_health "$n1" eq 1000 30)
	s0=$(lab_peer_ni_sends "$n0")
	s1=$(lab_peer_ni_sends "$n1")
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=flood peer="$n0" repeat=16 flood_bytes=65536 || lab_fail "flood of $n0 did not run"
	lab_rmmod lnet_ulp
	line=$(dmesg | grep "lnet_ulp: flood of")
	case "$line" in
	*": 16 ok, 0 failed, 0 without a final event") ;;
	*) lab_fail "flood of $n0 after the flaps: $line" ;;
	esac
	d0=$(($(lab_peer_ni_sends "$n0") - s0))
	d1=$(($(lab_peer_ni_sends "$n1") - s1))
	lab_log "after the flaps, healthy in ${tries} s: sends to $n0: $d0, to $n1: $d1"
	[ "$d1" -ge 2 ] || lab_fail "$n1 unused after the flaps ($d0, $d1)"
fi
# Nobody leaves while another may still look at it.
lab_sync 5
if [ "$LAB_VM" = 0 ]; then lab_rmmod lnet_ulp; fi
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
