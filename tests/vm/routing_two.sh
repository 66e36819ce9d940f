# lab: vms=4 nics=2 timeout=300
# Two routers between ksocklnd and ko2iblnd: vm0 is on tcp (eth0) only,
# vm3 on o2ib1 (Soft-RoCE on eth1) only, vm1 and vm2 on both, forwarding.
# Each end node routes the other's net through both routers (routes=),
# and waits until the router checker has both routes up.
# vm0's lnet_ulp client PUTs and GETs 4 KiB and 1 MiB to vm3, then floods
# it with PUTs and with GETs: messages cross from TCP to RDMA and back,
# and both routers carry them (each counts what it routed and gets every
# router buffer back). Then vm1's LNet goes down in the middle of a
# flood: what was in flight through it may fail, and the next flood
# passes whole through vm2, the gateway whose health stays whole.
r1=$(lab_addr 1 0)@tcp
r2=$(lab_addr 2 0)@tcp
b1=$(lab_addr 1 1)@o2ib1
b2=$(lab_addr 2 1)@o2ib1
server=$(lab_addr 3 1)@o2ib1
# Lost responses time out in 10 s, not Lustre's 50, to keep the cut short;
# gateways are checked every second, not every 60 (an end node up before
# its routers finds them dead at first, and waits a check to use them).
common="lnet_transaction_timeout=10 alive_router_check_interval=1"
case "$LAB_VM" in
0)
	# shellcheck disable=SC2086 # a list of parameters
	modprobe lnet networks="tcp(eth0)" "routes=\"o2ib1 $r1 $r2\"" $common ||
		lab_fail "lnet did not load"
	modprobe ksocklnd || lab_fail "ksocklnd did not load"
	;;
1 | 2)
	rdma link add rxe1 type rxe netdev eth1 || lab_fail "rxe1"
	# shellcheck disable=SC2086
	modprobe lnet networks="tcp(eth0),o2ib1(eth1)" forwarding=enabled \
		tiny_router_buffers=32 small_router_buffers=32 large_router_buffers=4 \
		peer_buffer_credits=8 $common || lab_fail "lnet did not load"
	modprobe ksocklnd || lab_fail "ksocklnd did not load"
	modprobe ko2iblnd || lab_fail "ko2iblnd did not load"
	;;
*)
	rdma link add rxe1 type rxe netdev eth1 || lab_fail "rxe1"
	# shellcheck disable=SC2086
	modprobe lnet networks="o2ib1(eth1)" "routes=\"tcp $b1 $b2\"" $common ||
		lab_fail "lnet did not load"
	modprobe ko2iblnd || lab_fail "ko2iblnd did not load"
	;;
esac
lnetctl lnet configure --all || lab_fail "configure"
if [ "$LAB_VM" = 3 ]; then
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
fi
stat_of() { lnetctl stats show | awk -v k="$1:" '$1 == k { print $2; exit }'; }
# Every router buffer back (the last sends may still be ending: a few
# tries).
pools_back() {
	tries=0
	while :; do
		lnetctl routing show >/tmp/rshow || lab_fail "routing show"
		awk '$1 == "nbuffers:" { n = $2 } $1 == "credits:" && $2 != n { bad = 1 }
			END { exit bad }' /tmp/rshow && return 0
		tries=$((tries + 1))
		[ "$tries" -lt 20 ] || { cat /tmp/rshow; lab_fail "router buffers not all back"; }
		sleep 0.2
	done
}
# flood WHAT ARGS...: a flood from vm0 to the server; sets ok and failed.
flood() {
	what=$1
	shift
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=flood peer="$server" flood_bytes=65536 "$@" ||
		lab_fail "$what did not run"
	line=$(dmesg | grep 'lnet_ulp: flood of' | tail -n 1)
	lab_log "$what: $line"
	lab_rmmod lnet_ulp
	# shellcheck disable=SC2046 # three numbers
	set -- $(echo "$line" | sed -n 's/.*: \([0-9]*\) ok, \([0-9]*\) failed, \([0-9]*\) without a final event$/\1 \2 \3/p')
	ok=${1:?no flood result}
	failed=$2
	[ "$3" = 0 ] || lab_fail "$what: $3 PUTs without a final event"
}
lab_sync 1

# Both routes up, once the checker has seen both routers.
if [ "$LAB_VM" = 0 ] || [ "$LAB_VM" = 3 ]; then
	tries=0
	until [ "$(lnetctl route show -v | grep -c 'state: up')" = 2 ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 100 ] || { lnetctl route show -v; lab_fail "the routes through both routers are not up"; }
		sleep 0.2
	done
	lab_log "both routes up after $((tries / 5)) s"
fi
lab_sync 2

if [ "$LAB_VM" = 0 ]; then
	modprobe lnet_ulp mode=client peer="$server" op_timeout=30 ||
		{ dmesg | grep lnet_ulp; lab_fail "the client's checks through the routers failed"; }
	dmesg | grep -q "lnet_ulp: remote PUT/GET 4 KiB and 1 MiB with $server done" ||
		lab_fail "no PUT/GET round trips with $server"
	lab_rmmod lnet_ulp
	flood "16 PUTs" repeat=16 op_timeout=60
	lab_expect_eq "$ok/$failed" "16/0" "PUTs through the routers"
	flood "16 GETs" repeat=16 get=1 op_timeout=60
	lab_expect_eq "$ok/$failed" "16/0" "GETs through the routers"
	lnetctl route show -v | sed 's/^/  /'
fi
lab_sync 3

if [ "$LAB_VM" = 1 ] || [ "$LAB_VM" = 2 ]; then
	pools_back
	routed=$(stat_of route_count)
	lab_log "vm$LAB_VM routed ${routed:-0} messages; every router buffer is back"
	# Round robin between the two equal routes: each router had its share.
	[ "${routed:-0}" -ge 8 ] || lab_fail "vm$LAB_VM routed only ${routed:-0} messages"
	echo "${routed:-0}" >/tmp/routed0
fi
lab_sync 4

# vm1 goes down while vm0 floods, once it has routed some of the flood.
case "$LAB_VM" in
0)
	# Those it had forwarded may lose their ACK: each ends at its own
	# deadline (lnet_ulp's op_timeout), 20 s.
	flood "48 PUTs while vm1 goes down" repeat=48 window=4 op_timeout=20
	;;
1)
	read -r r0 </tmp/routed0
	tries=0
	while [ $(($(stat_of route_count) - r0)) -lt 10 ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 150 ] || lab_fail "vm1 routed none of the flood"
		sleep 0.2
	done
	n=$(($(stat_of route_count) - r0))
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_log "vm1's LNet went down after routing $n messages of the flood"
	;;
esac
lab_sync 5

if [ "$LAB_VM" = 0 ]; then
	flood "16 PUTs after the cut" repeat=16 op_timeout=60
	lab_expect_eq "$ok/$failed" "16/0" "PUTs through the router left"
fi
lab_sync 6

if [ "$LAB_VM" = 2 ]; then
	pools_back
	read -r r0 </tmp/routed0
	routed=$(stat_of route_count)
	lab_log "vm2 routed $((routed - r0)) messages since the cut began"
	# The 16 PUTs after the cut and their ACKs at least.
	[ $((routed - r0)) -ge 32 ] || lab_fail "vm2 did not take vm1's share ($r0 -> $routed)"
fi
lab_sync 7

[ "$LAB_VM" = 3 ] && lab_rmmod lnet_ulp
[ "$LAB_VM" = 1 ] || lnetctl lnet unconfigure || lab_fail "unconfigure"
lsmod | grep -q "^ksocklnd " && lab_rmmod ksocklnd
lsmod | grep -q "^ko2iblnd " && lab_rmmod ko2iblnd
lab_rmmod lnet
[ "$LAB_VM" = 0 ] || rdma link delete rxe1
