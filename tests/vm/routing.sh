# lab: vms=4 nics=2 timeout=300
# Routing: the route table of end nodes and forwarding on a router.
# vm0 is on tcp (eth0) only, vm2 on tcp1 (eth1) only, vm1 on both and
# forwards (forwarding=enabled, small router buffer pools). vm0 loads
# lnet with routes= naming vm1 as its gateway to tcp1, vm2 with the way
# back, and vm0 checks route show (-v), route add/del and the errno of
# bad routes. vm1's routing show is checked as Lustre prints it. vm0's
# lnet_ulp client PUTs and GETs 4 KiB and 1 MiB to vm2's server through
# vm1 (tiny, small and large router buffers, both ways), vm1 counts them
# as routed and gets every buffer back; its ping buffer says it routes.
# With `lnetctl set routing 0` on vm1, a PUT from vm0 to vm2 leaves vm0
# for vm1's tcp NI with vm2's NID as the header's destination and vm1
# drops it, counts it and says whom it was for; the ping buffer says
# RTE_DISABLED again. Then every node checks its gateways each second:
# vm1's far link cut takes vm0's route down (a PUT to tcp1 fails for want
# of a route) and back up; vm1's LNet down makes its gateway dead, back up
# alive. With the routes deleted the same PUT finds no path; loaded again
# with check_routers_before_use, vm0's configure returns with the route
# checked and up.
# The fourth VM of the lab's boot (routing_two's) sits this one out.
[ "$LAB_VM" -ge 3 ] && exit 0
dmesg -c >/dev/null
gw=$(lab_addr 1 0)@tcp
far=$(lab_addr 2 1)@tcp1
back=$(lab_addr 1 1)@tcp1
near=$(lab_addr 0 0)@tcp
case "$LAB_VM" in
0) modprobe lnet networks="tcp(eth0)" "routes=\"tcp1 $gw\"" alive_router_check_interval=0 ||
	lab_fail "lnet did not load" ;;
# Pools far below Lustre's defaults (1 GiB of large buffers): the VM's
# memory is small. Below Lustre's minimums, so warned about.
1) modprobe lnet networks="tcp(eth0),tcp1(eth1)" forwarding=enabled \
	tiny_router_buffers=32 small_router_buffers=32 large_router_buffers=4 \
	peer_buffer_credits=8 || lab_fail "lnet did not load" ;;
*) modprobe lnet networks="tcp1(eth1)" "routes=\"tcp $back\"" || lab_fail "lnet did not load" ;;
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
# routing_show_is TINY SMALL LARGE: routing show's YAML, routing on,
# with these buffers and every pool full (credits and mincredits as many
# as its buffers).
pool_yaml() {
	printf '          %s:\n              npages: %s\n              nbuffers: %s\n' "$1" "$2" "$3"
	printf '              credits: %s\n              mincredits: %s\n' "$3" "$3"
}
routing_show_is() {
	lnetctl routing show >/tmp/rshow || lab_fail "routing show"
	{
		printf 'routing:\n    - cpt[0]:\n'
		pool_yaml tiny 0 "$1"
		pool_yaml small 1 "$2"
		pool_yaml large 256 "$3"
		printf '    - enable: 1\nbuffers:\n    tiny: %s\n    small: %s\n    large: %s\n' "$1" "$2" "$3"
	} >/tmp/want
	cmp -s /tmp/rshow /tmp/want || { cat /tmp/rshow; lab_fail "routing show"; }
}
if [ "$LAB_VM" = 1 ]; then
	dmesg | grep -q "Message forwarding enabled" || lab_fail "forwarding= did not start routing"
	dmesg | grep -q "large_router_buffers=4 less than recommended minimum" ||
		lab_fail "no warning for large_router_buffers below Lustre's minimum"
	routing_show_is 32 32 4
	lab_log "routing show as Lustre prints it: 32 tiny, 32 small, 4 large buffers"
fi
if [ "$LAB_VM" = 2 ]; then
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
fi
lab_sync 1

# features: the feature word of vm1's ping buffer, as vm0 gets it.
features() {
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=pinginfo peer="$gw" || lab_fail "pinginfo of $gw"
	lab_rmmod lnet_ulp
	dmesg | sed -n 's/.*lnet_ulp: ping info: features \(0x[0-9a-f]*\).*/\1/p'
}
if [ "$LAB_VM" = 0 ]; then
	f=$(features)
	lab_log "the router's ping features: $f"
	[ -n "$f" ] || lab_fail "no ping info of $gw"
	[ $((f & 4)) = 0 ] || lab_fail "the router's ping buffer says RTE_DISABLED ($f)"
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=client peer="$far" op_timeout=20 ||
		{ dmesg | grep lnet_ulp; lab_fail "the client's checks through the router failed"; }
	dmesg | grep -q "lnet_ulp: remote PUT/GET 4 KiB and 1 MiB with $far done" ||
		lab_fail "no PUT/GET round trips with $far"
	lab_rmmod lnet_ulp
	lab_log "PUT and GET of 4 KiB and 1 MiB with $far through $gw: done"
fi
lab_sync 2

# Drops and routed messages counted by this node's LNet.
stat_of() { lnetctl stats show | awk -v k="$1:" '$1 == k { print $2; exit }'; }
pools_back() {
	lnetctl routing show >/tmp/rshow || lab_fail "routing show"
	awk '$1 ~ /^(tiny|small|large):$/ { p = $1 } $1 == "nbuffers:" { n = $2 }
		$1 == "credits:" && $2 != n { bad = 1 }
		$1 == "mincredits:" && $2 >= n && p != "" { bad = 1 }
		END { exit bad }' /tmp/rshow
}
if [ "$LAB_VM" = 2 ]; then
	lab_rmmod lnet_ulp
fi
if [ "$LAB_VM" = 1 ]; then
	# Every buffer back (the last ACK's send may still be ending: a few
	# tries); the lowest credits show each pool was used.
	tries=0
	until pools_back; do
		tries=$((tries + 1))
		[ "$tries" -lt 10 ] || { cat /tmp/rshow; lab_fail "router buffers not all back, or a pool unused"; }
		sleep 0.2
	done
	routed=$(stat_of route_count)
	[ "${routed:-0}" -ge 10 ] || lab_fail "route_count ${routed:-none}"
	# vm0's router credits (peer_buffer_credits=8): used, and all back.
	lnetctl peer show -v --nid "$near" >/tmp/peer || lab_fail "peer show -v $near"
	rc_now=$(awk '$1 == "available_rtr_credits:" { print $2; exit }' /tmp/peer)
	rc_min=$(awk '$1 == "min_rtr_credits:" { print $2; exit }' /tmp/peer)
	lab_expect_eq "$rc_now" 8 "router credits of $near"
	[ "${rc_min:-8}" -lt 8 ] || { cat /tmp/peer; lab_fail "no router credit of $near used"; }
	lab_log "vm1 routed $routed messages; every router buffer is back; $near's router credits 8 (min $rc_min)"
	lnetctl set routing 0 || lab_fail "set routing 0"
	dmesg | grep -q "Message forwarding disabled" || lab_fail "no 'forwarding disabled'"
	lnetctl routing show >/tmp/rshow || lab_fail "routing show with routing off"
	grep -q "^    - enable: 0$" /tmp/rshow || { cat /tmp/rshow; lab_fail "routing show: enable"; }
	grep -q "^    large: 0$" /tmp/rshow || { cat /tmp/rshow; lab_fail "routing off kept buffers"; }
	stat_of drop_count >/tmp/drops0
	dmesg -c >/dev/null
fi
lab_sync 3

# flood_line: lnet_ulp's summary of one PUT to vm2's NID, without an ACK
# (vm1 drops it: none would come), done at its SEND event.
flood_line() {
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=flood peer="$far" repeat=1 noack=1 flood_bytes=4096 op_timeout=10 || true
	lab_rmmod lnet_ulp
	dmesg | grep "lnet_ulp: flood of"
}
if [ "$LAB_VM" = 0 ]; then
	f=$(features)
	[ -n "$f" ] || lab_fail "no ping info of $gw"
	[ $((f & 4)) = 4 ] || lab_fail "the router's ping buffer lacks RTE_DISABLED with routing off ($f)"
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
lab_sync 4

if [ "$LAB_VM" = 1 ]; then
	read -r d0 </tmp/drops0
	tries=0
	while :; do
		d1=$(stat_of drop_count)
		[ "${d1:-0}" -gt "${d0:-0}" ] && break
		tries=$((tries + 1))
		[ "$tries" -lt 10 ] || lab_fail "the gateway counted no drop (${d0} -> ${d1})"
		sleep 1
	done
	me=$(lab_addr 1 0)@tcp
	dmesg | grep -q "Dropping PUT from $near to $far on $me: not for this NI and routing is off" ||
		lab_fail "no drop of a PUT for $far on $me"
	lab_log "the gateway dropped the PUT for $far (drops $d0 -> $d1)"
	# Routing comes back with the parameters' pools; set large_buffers
	# grows one.
	lnetctl set routing 1 || lab_fail "set routing 1"
	lnetctl set large_buffers 6 || lab_fail "set large_buffers 6"
	routing_show_is 32 32 6
	lab_log "routing on again; large_buffers 6"
fi
lab_sync 5

# Route health. Until here no node checks its gateways
# (alive_router_check_interval=0 on vm0: a check would take vm0's route
# down while vm1 does not route, above). Now every node checks each
# second and vm1 reports a net down after 1 + 3 s without a ping on it;
# checks that take over 5 s fail.
P=/sys/module/lnet/parameters
echo 1 >$P/alive_router_check_interval || lab_fail "alive_router_check_interval"
if [ "$LAB_VM" = 1 ]; then
	echo 3 >$P/router_ping_timeout || lab_fail "router_ping_timeout"
else
	echo 5 >$P/router_ping_timeout || lab_fail "router_ping_timeout"
fi
# wait_route STATE BOUND: waits until vm0's route to tcp1 is STATE (route
# show -v), at most BOUND seconds; prints how long it took.
route_state() { lnetctl route show -v --net tcp1 | awk '$1 == "state:" { print $2; exit }'; }
wait_route() {
	t0=$(date +%s)
	while [ "$(route_state)" != "$1" ]; do
		[ $(($(date +%s) - t0)) -lt "$2" ] || { lnetctl route show -v; lab_fail "route to tcp1 not $1 after $2 s"; }
		sleep 0.5
	done
	echo $(($(date +%s) - t0))
}
gw_states() { lnetctl peer show --nid "$gw" | awk '$1 == "state:" { printf "%s ", $2 }'; }
if [ "$LAB_VM" = 0 ]; then
	t=$(wait_route up 15)
	lnetctl route show -v --net tcp1 | grep -q "type: single-hop" ||
		{ lnetctl route show -v; lab_fail "the gateway's reply lists tcp1: single-hop expected"; }
	lab_log "router checker on: route to tcp1 up, single-hop, in ${t}s; gateway NIs: $(gw_states)"
fi
lab_sync 6
# (a) The router's far link cut: its ping buffer says tcp1 down, vm0's
# next check takes the route down (bound: 15 s, 1 s interval and a
# check's round trip; vm1 reports the link at once, or after 4 s of
# silence at worst), and a PUT to tcp1 fails at once for want of a route.
if [ "$LAB_VM" = 1 ]; then
	ip link set eth1 down || lab_fail "eth1 down"
fi
lab_sync 7
if [ "$LAB_VM" = 0 ]; then
	t=$(wait_route down 15)
	lab_log "vm1's eth1 down: route to tcp1 down in ${t}s; gateway NIs: $(gw_states)"
	case "$(gw_states)" in
	*down*) ;;
	*) lab_fail "no NI of the gateway shown down: $(gw_states)" ;;
	esac
	line=$(flood_line)
	case "$line" in
	*": 0 ok, 1 failed,"*) ;;
	*) lab_fail "a PUT to $far went with its route down: $line" ;;
	esac
	dmesg | grep -q "No route to $far" || lab_fail "no 'No route' line with the route down"
fi
lab_sync 8
if [ "$LAB_VM" = 1 ]; then
	ip link set eth1 up || lab_fail "eth1 up"
fi
lab_sync 9
if [ "$LAB_VM" = 0 ]; then
	t=$(wait_route up 20)
	lab_log "vm1's eth1 up: route to tcp1 up in ${t}s"
	s0=$(lab_peer_ni_sends "$gw")
	line=$(flood_line)
	case "$line" in
	*": 1 ok, 0 failed, 0 without a final event") ;;
	*) lab_fail "the PUT to $far did not go with the route up: $line" ;;
	esac
	s1=$(lab_peer_ni_sends "$gw")
	[ "${s1:-0}" -gt "${s0:-0}" ] || lab_fail "the PUT to $far did not go to the gateway $gw"
fi
lab_sync 10
# (b) The router's LNet down: vm0's checks fail, the gateway is dead
# (all its NIs down) and the route down; LNet back: route up.
if [ "$LAB_VM" = 1 ]; then
	lnetctl lnet unconfigure || lab_fail "unconfigure vm1"
fi
lab_sync 11
if [ "$LAB_VM" = 0 ]; then
	t=$(wait_route down 15)
	states=$(gw_states)
	lab_log "vm1's LNet down: route to tcp1 down in ${t}s; gateway NIs: $states"
	case "$states" in
	*up* | "") lab_fail "the gateway is not dead: $states" ;;
	esac
	dmesg | grep -q "Gateway $gw dead" || lab_fail "no 'Gateway $gw dead' line"
fi
lab_sync 12
if [ "$LAB_VM" = 1 ]; then
	lnetctl lnet configure --all || lab_fail "configure vm1 again"
fi
lab_sync 13
if [ "$LAB_VM" = 0 ]; then
	t=$(wait_route up 20)
	lab_log "vm1's LNet up again: route to tcp1 up in ${t}s; gateway NIs: $(gw_states)"
fi
lab_sync 14

if [ "$LAB_VM" = 0 ]; then
	lnetctl route del --net tcp1 --gateway "$gw" || lab_fail "route del tcp1"
	[ -z "$(lnetctl route show)" ] || lab_fail "routes left"
	line=$(flood_line)
	case "$line" in
	*": 0 ok, 1 failed,"*) ;;
	*) lab_fail "a PUT to $far went with no route: $line" ;;
	esac
	dmesg | grep -q "No route to $far" || lab_fail "no 'No route' line"
	# check_routers_before_use: the route starts down, and configure
	# returns only once the gateway was checked (its route then up).
	lnetctl lnet unconfigure || lab_fail "unconfigure before check_routers_before_use"
	lab_rmmod ksocklnd
	lab_rmmod lnet
	modprobe lnet networks="tcp(eth0)" "routes=\"tcp1 $gw\"" check_routers_before_use=1 \
		alive_router_check_interval=1 router_ping_timeout=5 || lab_fail "lnet did not load again"
	modprobe ksocklnd || lab_fail "ksocklnd did not load again"
	lnetctl lnet configure --all || lab_fail "configure with check_routers_before_use"
	lab_expect_eq "$(route_state)" up "route state once configure returned (check_routers_before_use)"
	lab_log "check_routers_before_use: route to tcp1 up when configure returned"
fi
lab_sync 15
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
