# lab: vms=2 nics=2 timeout=240
# Two NIs on one net: tcp over eth0 and over eth1 (networks="tcp(eth0,eth1)"),
# each its own ksocklnd rail. Each VM adds the other as a Multi-Rail peer
# with both NIDs; VM 0 then sends 40 PUTs and GETs to the peer's primary NID
# without choosing a source, and both of its NIs must carry them (per-NI
# send counters from lnetctl net show -v), each with its own connections.
# Then the peer is made non-Multi-Rail: PUTs keep to one preferred NI,
# to either of its NIDs, pings do not; made Multi-Rail again, PUTs leave
# from both NIs; with eth1 down, recovery pings leave from eth0's NI only.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
dmesg -c >/dev/null
lab_two_rails "" "" tcp
lab_serve_if_server

me0=$(lab_addr 0 0)@tcp
me1=$(lab_addr 0 1)@tcp
lab_wait_server "$(lab_addr "$peer" 0)"
# sends "$@": runs the command, sets d0 and d1 to the sends it added on
# $me0 and $me1.
sends() {
	s0=$(lab_ni_sends "$me0")
	s1=$(lab_ni_sends "$me1")
	"$@"
	d0=$(($(lab_ni_sends "$me0") - s0))
	d1=$(($(lab_ni_sends "$me1") - s1))
}
# burst10 WHAT [NID]: 10 PUTs to NID ($p0), all acknowledged.
burst10() {
	lab_expect_eq "$(lab_burst "${2:-$p0}" PUT 10)" "10 0" "$1 (ok failed)"
}
pings6() {
	for i in 1 2 3 4 5 6; do
		lnetctl ping "$p0" >/dev/null || lab_fail "ping $i of $p0"
	done
}
lab_client_rails "$p0" 40
lab_log "two NIs on tcp: sends over $me0: $d0, over $me1: $d1"
[ "$d0" -ge 10 ] && [ "$d1" -ge 10 ] || { cat /tmp/nets; lab_fail "traffic did not use both NIs ($d0, $d1)"; }
# Each rail connected from its own address.
for me in "$me0" "$me1"; do
	dmesg | grep -q "$me opened control connection to" ||
		dmesg | grep -q "$me accepted control connection from" ||
		lab_fail "no connection on $me"
done
# A peer that is not Multi-Rail: the NI of its first message becomes its
# preferred one and carries every PUT after it, as in Lustre; pings
# (portal 0) ignore that preference and take the best NI of the net.
lnetctl peer del --prim_nid "$p0" || lab_fail "peer del"
lnetctl peer add --prim_nid "$p0" --non_mr || lab_fail "peer add --non_mr"
sends burst10 "PUTs to a non-Multi-Rail peer"
lab_log "non-Multi-Rail peer: PUTs over $me0: $d0, over $me1: $d1"
[ "$d0" = 0 ] || [ "$d1" = 0 ] || lab_fail "PUTs to a non-Multi-Rail peer left from both NIs ($d0, $d1)"
pref0=$d0
sends pings6
lab_log "non-Multi-Rail peer: pings over $me0: $d0, over $me1: $d1"
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "pings of a non-Multi-Rail peer kept to its preferred NI ($d0, $d1)"
# Its second NID on the same net shares that preferred NI (Lustre keeps
# one per peer net): PUTs to it leave from the NI the first NID's did,
# not from the other, which round robin would pick next.
p1=$(lab_addr "$peer" 1)@tcp
lnetctl peer add --prim_nid "$p0" --nid "$p1" --non_mr || lab_fail "peer add --nid $p1 --non_mr"
sends burst10 "PUTs to a non-Multi-Rail peer's second NID" "$p1"
lab_log "non-Multi-Rail peer's second NID: PUTs over $me0: $d0, over $me1: $d1"
if [ "$pref0" -gt 0 ]; then
	[ "$d1" = 0 ] || lab_fail "PUTs to $p1 did not keep to $me0, the peer net's preferred NI ($d0, $d1)"
else
	[ "$d0" = 0 ] || lab_fail "PUTs to $p1 did not keep to $me1, the peer net's preferred NI ($d0, $d1)"
fi
# Made Multi-Rail again (peer add without --non_mr, with its second NID):
# the preferred NI goes with it, and PUTs leave from both NIs again.
lnetctl peer add --prim_nid "$p0" --nid "$p1" || lab_fail "peer add (Multi-Rail)"
sends burst10 "PUTs to the peer made Multi-Rail"
lab_log "peer made Multi-Rail: PUTs over $me0: $d0, over $me1: $d1"
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "PUTs kept to the old preferred NI ($d0, $d1)"
# Recovery pings take the best NI of the net, never a fatal one: with eth1
# down (its NI fatal), those of a peer NI put in recovery all leave from
# eth0's NI.
ip link set eth1 down
i=0
until lnetctl net show | grep -A 3 "nid: $me1\$" | grep -q "status: down"; do
	i=$((i + 1))
	[ $i -lt 40 ] || lab_fail "$me1 not shown down with eth1 down"
	sleep 0.25
done
recover6() {
	lnetctl peer set --nid "$p1" --health 500 || lab_fail "peer set --health 500"
	sleep 6
}
sends recover6
lab_log "recovery pings of $p1 with $me1 fatal: over $me0: $d0, over $me1: $d1"
[ "$d0" -ge 1 ] && [ "$d1" = 0 ] || lab_fail "recovery pings did not keep to $me0 ($d0, $d1)"
ip link set eth1 up
lnetctl peer set --nid "$p1" --health 1000 || lab_fail "peer set --health 1000"
lab_server_done "$(lab_addr "$peer" 0)"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
