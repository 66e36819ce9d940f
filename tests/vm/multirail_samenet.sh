# lab: vms=2 nics=2 timeout=240
# Two NIs on one net: tcp over eth0 and over eth1 (networks="tcp(eth0,eth1)"),
# each its own ksocklnd rail. Each VM adds the other as a Multi-Rail peer
# with both NIDs; VM 0 then sends 40 PUTs and GETs to the peer's primary NID
# without choosing a source, and both of its NIs must carry them (per-NI
# send counters from lnetctl net show -v), each with its own connections.
# Then the peer is made non-Multi-Rail: PUTs keep to one preferred NI,
# pings do not.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
dmesg -c >/dev/null
lab_two_rails "" "" tcp
lab_serve_if_server

me0=$(lab_addr 0 0)@tcp
me1=$(lab_addr 0 1)@tcp
lab_wait_server "$(lab_addr "$peer" 0)"
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
s0=$(lab_ni_sends "$me0")
s1=$(lab_ni_sends "$me1")
lab_expect_eq "$(lab_burst "$p0" PUT 10)" "10 0" "PUTs to a non-Multi-Rail peer (ok failed)"
d0=$(($(lab_ni_sends "$me0") - s0))
d1=$(($(lab_ni_sends "$me1") - s1))
lab_log "non-Multi-Rail peer: PUTs over $me0: $d0, over $me1: $d1"
[ "$d0" = 0 ] || [ "$d1" = 0 ] || lab_fail "PUTs to a non-Multi-Rail peer left from both NIs ($d0, $d1)"
s0=$(lab_ni_sends "$me0")
s1=$(lab_ni_sends "$me1")
for i in 1 2 3 4 5 6; do
	lnetctl ping "$p0" >/dev/null || lab_fail "ping $i of $p0"
done
d0=$(($(lab_ni_sends "$me0") - s0))
d1=$(($(lab_ni_sends "$me1") - s1))
lab_log "non-Multi-Rail peer: pings over $me0: $d0, over $me1: $d1"
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "pings of a non-Multi-Rail peer kept to its preferred NI ($d0, $d1)"
lab_server_done "$(lab_addr "$peer" 0)"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
