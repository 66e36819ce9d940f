# lab: vms=3 nics=2 timeout=300
# Routing's control plane and the routed send, before forwarding exists:
# vm0 is on tcp (eth0) only, vm2 on tcp1 (eth1) only, vm1 on both.
# vm0 loads lnet with routes= naming vm1 as its gateway to tcp1, and
# checks route show (-v), route add/del and the errno of bad routes. A
# PUT from vm0 to vm2's NID then leaves vm0 for vm1's tcp NI (the
# gateway's peer NI counts the send) with vm2's NID as the header's
# destination: vm1, which does not forward, drops it, counts it and says
# whom it was for. With the routes deleted the same PUT finds no path.
dmesg -c >/dev/null
gw=$(lab_addr 1 0)@tcp
far=$(lab_addr 2 1)@tcp1
case "$LAB_VM" in
0) modprobe lnet networks="tcp(eth0)" "routes=\"tcp1 $gw\"" || lab_fail "lnet did not load" ;;
1) modprobe lnet networks="tcp(eth0),tcp1(eth1)" || lab_fail "lnet did not load" ;;
*) modprobe lnet networks="tcp1(eth1)" || lab_fail "lnet did not load" ;;
esac
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"

# route_add_errno ARGS...: the errno lnetctl reports for a refused add.
route_add_errno() {
	if lnetctl route add "$@" 2>/tmp/route_err; then
		lab_fail "route add $* succeeded"
	fi
	awk '$1 == "errno:" { print $2; exit }' /tmp/route_err
}

if [ "$LAB_VM" = 0 ]; then
	dmesg | grep -q "routes=: 1 route(s) added, 0 skipped" || lab_fail "routes= not applied"
	lnetctl route show -v >/tmp/routes || lab_fail "route show -v"
	cat /tmp/routes
	printf 'route:\n    - net: tcp1\n      gateway: %s\n      hop: -1\n      priority: 0\n      state: up\n      type: multi-hop\n' "$gw" >/tmp/want
	cmp -s /tmp/routes /tmp/want || lab_fail "route show -v is not the routes= route"
	# The gateway is a peer, as Lustre's lnet_add_route makes it.
	lnetctl peer show | grep -q "primary nid: $gw" || lab_fail "the gateway is no peer"

	# lnet_add_route's refusals, in its order.
	lab_expect_eq "$(route_add_errno --net tcp --gateway "$(lab_addr 1 1)@tcp1")" -17 "route to a local net"
	lab_expect_eq "$(route_add_errno --net tcp2 --gateway 10.9.0.1@tcp9)" -113 "gateway on no local net"
	lab_expect_eq "$(route_add_errno --net tcp1 --gateway "$(lab_addr 1 1)@tcp1")" -22 "gateway on the remote net"
	lab_expect_eq "$(route_add_errno --net tcp1 --gateway "$gw")" -17 "the same route twice"

	lnetctl route add --net tcp5 --gateway "$gw" --hop 2 --priority 3 || lab_fail "route add tcp5"
	lnetctl route show --net tcp5 -v >/tmp/routes || lab_fail "route show --net tcp5"
	printf 'route:\n    - net: tcp5\n      gateway: %s\n      hop: 2\n      priority: 3\n      state: up\n      type: multi-hop\n' "$gw" >/tmp/want
	cmp -s /tmp/routes /tmp/want || { cat /tmp/routes; lab_fail "route show --net tcp5 -v"; }
	[ "$(lnetctl route show | grep -c 'net:')" = 2 ] || lab_fail "two routes expected"
	lnetctl route del --net tcp5 --gateway "$gw" || lab_fail "route del tcp5"
	[ -z "$(lnetctl route show --net tcp5)" ] || lab_fail "tcp5 still routed"
	if lnetctl route del --net tcp5 --gateway "$gw" 2>/tmp/route_err; then
		lab_fail "deleting a net with no route succeeded"
	fi
	grep -q "errno: -2" /tmp/route_err || lab_fail "route del of no route: $(cat /tmp/route_err)"
fi
lab_sync 1

# Drops counted by this node's LNet.
drops() { lnetctl stats show | awk '$1 == "drop_count:" { print $2; exit }'; }
if [ "$LAB_VM" = 1 ]; then
	drops >/tmp/drops0
	dmesg -c >/dev/null
fi
lab_sync 2

# flood_line: lnet_ulp's summary of one PUT to vm2's NID, without an ACK
# (vm1 drops it: none would come), done at its SEND event.
flood_line() {
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=flood peer="$far" repeat=1 noack=1 flood_bytes=4096 op_timeout=10 || true
	lab_rmmod lnet_ulp
	dmesg | grep "lnet_ulp: flood of"
}
if [ "$LAB_VM" = 0 ]; then
	s0=$(lab_peer_ni_sends "$gw")
	line=$(flood_line)
	lab_log "routed PUT: $line"
	case "$line" in
	*": 1 ok, 0 failed, 0 without a final event") ;;
	*) lab_fail "the PUT to $far did not go: $line" ;;
	esac
	s1=$(lab_peer_ni_sends "$gw")
	lab_log "sends to the gateway $gw: ${s0:-0} -> $s1"
	[ "${s1:-0}" -gt "${s0:-0}" ] || lab_fail "the PUT to $far did not go to the gateway $gw"
fi
lab_sync 3

if [ "$LAB_VM" = 1 ]; then
	read -r d0 </tmp/drops0
	tries=0
	while :; do
		d1=$(drops)
		[ "${d1:-0}" -gt "${d0:-0}" ] && break
		tries=$((tries + 1))
		[ "$tries" -lt 10 ] || lab_fail "the gateway counted no drop (${d0} -> ${d1})"
		sleep 1
	done
	me=$(lab_addr 1 0)@tcp
	dmesg | grep -q "Dropping PUT from $(lab_addr 0 0)@tcp to $far on $me: not for this NI" ||
		lab_fail "no drop of a PUT for $far on $me"
	lab_log "the gateway dropped the PUT for $far (drops $d0 -> $d1)"
fi
lab_sync 4

if [ "$LAB_VM" = 0 ]; then
	lnetctl route del --net tcp1 --gateway "$gw" || lab_fail "route del tcp1"
	[ -z "$(lnetctl route show)" ] || lab_fail "routes left"
	line=$(flood_line)
	case "$line" in
	*": 0 ok, 1 failed,"*) ;;
	*) lab_fail "a PUT to $far went with no route: $line" ;;
	esac
	dmesg | grep -q "No route to $far" || lab_fail "no 'No route' line"
fi
lab_sync 5
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
