# lab: vms=2 nics=2 timeout=400
# A rail cut mid-traffic: tcp on eth0 and tcp1 on eth1, the VMs Multi-Rail
# peers of each other. VM 0 floods VM 1 with 1 MiB PUTs over both rails,
# then takes eth1 down while they are in flight. Every PUT must end with a
# final event (those caught on the cut rail fail over or fail once
# sock_timeout, 10 s here, ends their connection); tcp1 takes no new send
# once it is down, and a second flood (256 KiB PUTs) with eth1 still down
# succeeds entirely over tcp. Then eth1 is silenced under a flood of small PUTs:
# all of VM 0's connections with the peer's tcp1 NI close together.
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
p0=$paddr@tcp
dmesg -c >/dev/null
lab_two_rails "" sock_timeout=10

lab_serve_if_server

# The flood summary line of lnet_ulp, once it has printed it.
flood_line() {
	dmesg | grep 'lnet_ulp: flood' | tail -n 1
}
me0=$(lab_addr 0 0)@tcp
me1=$(lab_addr 0 1)@tcp1
lab_wait_server "$paddr"
dmesg -c >/dev/null
start1=$(lab_ni_sends "$me1")
modprobe lnet_ulp mode=flood peer="$p0" repeat=12 op_timeout=200 &
flood=$!
# Cut once tcp1 has carried some of the flood.
i=0
while [ "$(lab_ni_sends "$me1")" -le $((start1 + 2)) ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || lab_fail "tcp1 never carried the flood"
	sleep 0.2
done
ip link set eth1 down
cut0=$(lab_ni_sends "$me0")
cut1=$(lab_ni_sends "$me1")
lab_log "eth1 down with sends over tcp $cut0, tcp1 $cut1"
wait $flood || lab_fail "flood did not run"
line=$(flood_line)
lab_log "first flood: $line"
case "$line" in
*" 0 without a final event") ;;
*) lab_fail "PUTs left without a final event: $line" ;;
esac
lab_rmmod lnet_ulp
end0=$(lab_ni_sends "$me0")
end1=$(lab_ni_sends "$me1")
lab_log "after the first flood: sends over tcp $end0, tcp1 $end1"
# Sends counted on tcp1 after the cut are at most the ones that were
# waiting for its credits (peer_credits, 8).
[ "$end1" -le $((cut1 + 8)) ] || lab_fail "tcp1 kept being chosen while down"
dmesg -c >/dev/null
t0=$(cut -d. -f1 /proc/uptime)
tcp0=$(lab_peer_ni_sends "$p0")
base1=$(lab_ni_sends "$me1")
modprobe lnet_ulp mode=flood peer="$p0" repeat=6 flood_bytes=262144 op_timeout=200 ||
	lab_fail "second flood did not run"
line=$(flood_line)
lab_log "second flood, eth1 down: $line"
case "$line" in
*": 6 ok, 0 failed, 0 without a final event") ;;
*) lab_fail "second flood: $line" ;;
esac
lab_rmmod lnet_ulp
# Every PUT went to the peer's tcp NI at the first try, and tcp1 counts
# only recovery pings (of itself and of the peer's tcp1 NI, each at most
# one a second; a loaded machine stretches the time).
sent0=$(($(lab_peer_ni_sends "$p0") - tcp0))
sent1=$(($(lab_ni_sends "$me1") - base1))
secs=$(($(cut -d. -f1 /proc/uptime) - t0))
lab_log "second flood: $sent0 sends to $p0, $sent1 on tcp1 in ${secs}s"
[ "$sent0" -ge 6 ] || lab_fail "only $sent0 of the second flood's PUTs went to $p0"
[ "$sent1" -le $((2 * secs + 2)) ] || lab_fail "tcp1 carried the second flood ($sent1 sends in ${secs}s)"
after0=$(lab_ni_sends "$me0")
[ "$after0" -ge $((end0 + 6)) ] || lab_fail "tcp did not carry the second flood ($end0 -> $after0)"
# From here on the log counts the connections with the peer's tcp1 NI:
# a recovery ping may open them as soon as eth1 is up.
dmesg -c >/dev/null
ip link set eth1 up

# The rail goes silent: as soon as TCP's own retransmissions say so
# (lnet-core socklnd_path), what is queued behind the connection goes
# elsewhere; after sock_timeout it is closed together with every other one
# with that peer NI (Lustre's ksocknal_close_conn_and_siblings), so that no
# end keeps a connection the other has given up. 8 KiB PUTs (below zc_min_payload):
# a first flood opens the connections with the peer's tcp1 NI, a second
# one goes out with eth1 silenced. What TCP had taken can only fail at its
# ACK deadline (16 s: its connections close about 10 s into the silence,
# and the counts below are read once the flood is over); every PUT must
# still end.
p1=$(lab_addr "$peer" 1)@tcp1
lnetctl net set --nid "$me1" --health 1000 || lab_fail "net set --health"
lnetctl peer set --nid "$p1" --health 1000 || lab_fail "peer set --health"
small_flood() {
	modprobe lnet_ulp mode=flood peer="$p0" repeat=12 flood_bytes=8192 op_timeout=16 ||
		lab_fail "flood did not run"
	lab_rmmod lnet_ulp
	line=$(flood_line)
}
small_flood
case "$line" in
*": 12 ok, 0 failed, 0 without a final event") ;;
*) lab_fail "flood before the silence: $line" ;;
esac
lab_kmsg_mark "tcp1 silenced"
tc qdisc add dev eth1 root netem loss 100% || lab_fail "netem"
small_flood
silent_ms=$(lab_kmsg_ms "tcp1 silenced" "no progress sending to $p1 .*path silent")
# Counted while still silent: nothing with $p1 can open meanwhile.
# (grep -c says 0 and fails when nothing matches: the checks below say why.)
opened=$(dmesg | grep -cE "(opened .* connection to|accepted .* connection from) $p1" || true)
closed=$(dmesg | grep -c "closed .* connection with $p1: -110" || true)
timedout=$(dmesg | grep -c "no progress sending to $p1" || true)
tc qdisc del dev eth1 root
lab_log "flood with tcp1 silenced: $line"
case "$line" in
*" 0 without a final event") ;;
*) lab_fail "flood with tcp1 silenced: $line" ;;
esac
[ "$timedout" -ge 1 ] || lab_fail "no connection with $p1 timed out"
[ -n "$silent_ms" ] && [ "$silent_ms" -lt 10000 ] ||
	lab_fail "no connection with $p1 was found silent before sock_timeout (10 s): '$silent_ms'"
lab_log "tcp1's path found silent $silent_ms ms after the silence began"
lab_log "connections with $p1: $opened opened, $closed closed for no progress"
[ "$opened" -ge 1 ] && [ "$closed" -eq "$opened" ] ||
	lab_fail "$closed of $opened connections with $p1 closed when one made no progress"

# A slow but live rail is not silent: tcp1 at 200 ms of delay and 8 Mbit/s
# under a flood of 256 KiB PUTs over both rails (its queue, and so its RTT,
# grows with the load). Every PUT ends well and no connection is given up.
dmesg -c >/dev/null
lnetctl net set --nid "$me1" --health 1000 || lab_fail "net set --health"
lnetctl peer set --nid "$p1" --health 1000 || lab_fail "peer set --health"
tc qdisc add dev eth1 root netem delay 200ms rate 8mbit || lab_fail "netem delay"
b1=$(lab_ni_sends "$me1")
modprobe lnet_ulp mode=flood peer="$p0" repeat=12 flood_bytes=262144 op_timeout=60 ||
	lab_fail "flood over the slow rail did not run"
lab_rmmod lnet_ulp
line=$(flood_line)
s1=$(($(lab_ni_sends "$me1") - b1))
tc qdisc del dev eth1 root
lab_log "flood with tcp1 slow: $line; $s1 sends on tcp1"
[ "$s1" -gt 0 ] || lab_fail "the slow rail carried nothing"
case "$line" in
*": 12 ok, 0 failed, 0 without a final event") ;;
*) lab_fail "flood with tcp1 slow: $line" ;;
esac
if dmesg | grep "no progress sending to"; then
	lab_fail "a slow rail was given up"
fi
lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
