# lab: vms=2 nics=2 timeout=240
# ko2iblnd between two VMs over Soft-RoCE (rxe0 on eth0, rxe1 on eth1),
# nets o2ib and o2ib1, configured as an administrator would: each VM
# pings both NIDs of the other, so both sides connect actively and
# passively over RDMA CM (CONNREQ/CONNACK) and carry IMMEDIATE messages
# with credits, all at path MTU 512 (ib_mtu). Then VM 0 runs lnet_ulp's
# client checks against VM 1's server: PUT and GET of 4 KiB and 1 MiB
# with the data checked (PUT_REQ, PUT_ACK over a fast-registered sink,
# RDMA WRITE, PUT_DONE; a GET's 1 MiB REPLY the same way back), then 16
# more PUTs. A PUT from and a GET into pages with a gap (a middle fragment
# starting and ending mid-page) are refused, as Lustre's ko2iblnd refuses
# them: one fast registration cannot map them, and those refusals cost no
# health; five good 4 KiB GETs (GET_REQ) give the peer NI no health either,
# as their REPLYs came by RDMA. VM 0 then takes eth1 down and up: rxe1's
# port events set and clear the o2ib1 NI's fatal state at once; eth1's
# address removed and added back does the same (the inetaddr notifier).
# Then each unloads with no leak and no splat.
for nic in 0 1; do
	rdma link add "rxe$nic" type rxe netdev "eth$nic" || lab_fail "rxe$nic"
done
peer=$(lab_peer)
me0=$(lab_addr "$LAB_VM" 0)@o2ib
me1=$(lab_addr "$LAB_VM" 1)@o2ib1
p0=$(lab_addr "$peer" 0)@o2ib
p1=$(lab_addr "$peer" 1)@o2ib1
dmesg -c >/dev/null
modprobe lnet || lab_fail "lnet did not load"
# ib_mtu below the ports' 1024: every connection, active or passive,
# must run at 512, the MTU the active side's request carries.
modprobe ko2iblnd ib_mtu=512 || lab_fail "ko2iblnd did not load"
lnetctl lnet configure || lab_fail "configure"
lnetctl net add --net o2ib --if eth0 || lab_fail "net add o2ib"
lnetctl net add --net o2ib1 --if eth1 || lab_fail "net add o2ib1"
lnetctl net show | grep -q "nid: $me1" || { lnetctl net show; lab_fail "no $me1"; }
dmesg | grep ko2iblnd | sed 's/^/  /'
# The o2ib block of net show -v, with Lustre's keys and defaults.
lnetctl net show -v >/tmp/net || lab_fail "net show -v"
sed -n '/lnd tunables:/,/dev cpt:/p' /tmp/net | head -n 12
for kv in peercredits_hiw=4 map_on_demand=1 concurrent_sends=8 fmr_pool_size=512 \
	fmr_flush_trigger=384 fmr_cache=1 ntx=512 conns_per_peer=1 timeout=50 tos=-1; do
	v=$(awk -v k="${kv%%=*}:" '$1 == k { print $2; exit }' /tmp/net)
	lab_expect_eq "$v" "${kv#*=}" "o2ib lnd tunable ${kv%%=*}"
done

nc -ll -p 7000 -e /bin/true &
ready=$!
lab_wait_server "$(lab_addr "$peer" 0)"
for n in "$p0" "$p1"; do
	i=0
	until lnetctl ping "$n" --timeout 10 >/tmp/ping 2>&1; do
		i=$((i + 1))
		[ $i -lt 5 ] || { cat /tmp/ping; dmesg | tail -n 30; lab_fail "no ping reply from $n"; }
		sleep 2
	done
	grep -q "nid: $p0" /tmp/ping && grep -q "nid: $p1" /tmp/ping ||
		{ cat /tmp/ping; lab_fail "ping reply from $n lacks the peer's NIDs"; }
done
for n in "$p0" "$p1" "$p0" "$p1" "$p0" "$p1" "$p0" "$p1" "$p0" "$p1"; do
	lnetctl ping "$n" --timeout 10 >/dev/null || lab_fail "ping of $n"
done
lab_log "pinged $p0 and $p1 over RDMA"
dmesg | grep ko2iblnd | sed 's/^/  /'
lab_expect_eq "$(cat /sys/kernel/debug/ko2iblnd/protocol_errors)" 0 "protocol errors"
: >/tmp/conns

if [ "$LAB_VM" = 1 ]; then
	served=$(cat /sys/kernel/debug/ko2iblnd/gets_served)
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7002 -e /bin/true &
	up=$!
	nc -l -p 7003 </dev/null >/dev/null || lab_fail "no word from the client"
	kill $up
	dmesg | grep -q 'lnet_ulp: peer done' || lab_fail "the client's last PUT never came"
	lab_rmmod lnet_ulp
	# At least the client's twelve (pings, whose sink is larger than an
	# IMMEDIATE, may still come too).
	served=$(($(cat /sys/kernel/debug/ko2iblnd/gets_served) - served))
	[ "$served" -ge 12 ] || lab_fail "$served GET_REQs answered by RDMA, expected 12 or more"
else
	lab_wait_server "$(lab_addr "$peer" 0)" 7002
	t0=$(date +%s)
	reqs=$(cat /sys/kernel/debug/ko2iblnd/get_reqs)
	if ! modprobe lnet_ulp mode=client peer="$p0" repeat=16 sweep=1 gaps=2; then
		dmesg | grep -E 'lnet_ulp|ko2iblnd|lnet:' | tail -n 30
		lab_fail "client checks over o2ib failed"
	fi
	lab_log "PUT/GET 4 KiB and 1 MiB, round trips of 0 B to 1 MiB, 16 PUTs over o2ib in $(($(date +%s) - t0))s"
	lab_log "$(dmesg | grep -m1 'lnet_ulp: .* with a gap')"
	dmesg | grep -q 'ko2iblnd: .* bytes in 3 fragments have gaps' || lab_fail "no console line for the gappy pages"
	lab_rmmod lnet_ulp
	# ko2iblnd's refusals of the gappy pages set no health status, so
	# they cost no health and count as no error (lnet_ni_send).
	lnetctl stats show >/tmp/stats || lab_fail "stats show"
	lab_expect_eq "$(awk '$1 == "local_error_count:" { print $2 }' /tmp/stats)" 0 \
		"local_error_count after the LND refused the gappy pages"
	# An optimized GET's REPLY has no peer NI (its data came by RDMA): it is
	# not health-checked, so good GETs give the peer NI no health
	# (lnet_is_health_check); only a message received from it does.
	# Recovery pings wait in a delay rule meanwhile. (lab_burst clears the
	# console: the connections are kept for the checks below.)
	dmesg | grep 'ko2iblnd: .* connected to ' >/tmp/conns || true
	lctl net_delay_add -s "$me0" -d '*' -p 0 -m GET -r 1 -l 3600 || lab_fail "net_delay_add"
	lnetctl peer set --nid "$p0" --health 500 || lab_fail "peer set --health 500"
	lab_expect_eq "$(lab_burst "$p0" GET 5)" "5 0" "4 KiB GETs, sent as GET_REQ (ok failed)"
	lab_expect_eq "$(lab_peer_ni_health "$p0")" 500 "$p0's health after 5 good optimized GETs"
	lctl net_delay_del -a >/dev/null || lab_fail "net_delay_del"
	lnetctl peer set --nid "$p0" --health 1000 || lab_fail "peer set --health 1000"
	lab_log "refused sends cost no health; good optimized GETs gave $p0 none"
	# GETs above an IMMEDIATE went as GET_REQ: 4 KiB, 1 MiB and the
	# sweep's five from 4 KiB up, and the five 4 KiB GETs above.
	lab_expect_eq "$(($(cat /sys/kernel/debug/ko2iblnd/get_reqs) - reqs))" 12 "GETs sent as GET_REQ"
	lab_tell "$(lab_addr "$peer" 0)" 7003
fi
lab_expect_eq "$(cat /sys/kernel/debug/ko2iblnd/protocol_errors)" 0 "protocol errors after bulk"
dmesg | grep 'ko2iblnd: .* connected to ' >>/tmp/conns || true
grep -qE 'path MTU 512[,)]' /tmp/conns || { cat /tmp/conns; lab_fail "no connection at ib_mtu 512"; }
! grep -vE 'path MTU 512[,)]' /tmp/conns || lab_fail "a connection not at ib_mtu 512"
lab_log "$(wc -l </tmp/conns) connections, all at path MTU 512"

# eth1 down takes rxe1's port down: its PORT_ERR marks the o2ib1 NI fatal
# at once, and PORT_ACTIVE clears it when eth1 comes back.
if [ "$LAB_VM" = 0 ]; then
	fatal() {
		lnetctl net show -v 2 >/tmp/nets || lab_fail "net show -v 2"
		awk -v nid="$me1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "fatal_error:" && cur == nid { print $2; exit }' /tmp/nets
	}
	wait_fatal() {
		i=0
		until [ "$(fatal)" = "$1" ]; do
			i=$((i + 1))
			[ $i -lt 40 ] || lab_fail "$me1 fatal_error is $(fatal), expected $1 ($2)"
			sleep 0.25
		done
	}
	lab_expect_eq "$(fatal)" 0 "$me1 fatal_error with eth1 up"
	ip link set eth1 down
	wait_fatal 1 "eth1 down"
	ip link set eth1 up
	wait_fatal 0 "eth1 up"
	dmesg | grep -E "ko2iblnd: .*port 1 (down|active)" | sed 's/^/  /'
	i=0
	until lnetctl ping "$p1" --timeout 10 >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 3 ] || lab_fail "no ping of $p1 after eth1 came back"
	done
	lab_log "port down and up on rxe1 set and cleared $me1's fatal state"
	# Its interface losing the NI's address makes the NI fatal too (the
	# inetaddr notifier; rxe's port stays active), and getting it back
	# clears it.
	cidr=$(ip -o -4 addr show dev eth1 | awk '{ print $4; exit }')
	[ -n "$cidr" ] || lab_fail "no address on eth1"
	ip addr del "$cidr" dev eth1 || lab_fail "ip addr del $cidr"
	wait_fatal 1 "eth1's address removed"
	ip addr add "$cidr" dev eth1 || lab_fail "ip addr add $cidr"
	wait_fatal 0 "eth1's address back"
	dmesg | grep -q "ko2iblnd: $me1: eth1 is down or lost the NI's address" ||
		lab_fail "no console line for eth1's address"
	i=0
	until lnetctl ping "$p1" --timeout 10 >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 3 ] || lab_fail "no ping of $p1 after eth1's address came back"
	done
	lab_log "eth1's address removed and added set and cleared $me1's fatal state"
fi

# Both stay up until both are done.
nc -l -p 7001 </dev/null >/dev/null &
done_wait=$!
lab_tell "$(lab_addr "$peer" 0)" 7001
wait $done_wait
kill $ready
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ko2iblnd
lab_rmmod lnet
for nic in 0 1; do
	rdma link delete "rxe$nic"
done
