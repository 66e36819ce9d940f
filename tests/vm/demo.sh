# lab: vms=2 nics=2 timeout=120
# The lab demo (scripts/demo.sh shows it live). Two nodes with two rails
# each: lnet.ko loaded with Lustre's parameters, both rails up, Soft-RoCE on
# every NIC. Later stages add LNet traffic, a rail failure and recovery.
say() { echo "== vm$LAB_VM: $*"; }

say "loading lnet.ko as a Lustre node would"
modprobe lnet networks="tcp(eth0,eth1)" lnet_health_sensitivity=100 lnet_retry_count=2
say "LNet health parameters (/sys/module/lnet/parameters):"
for p in lnet_health_sensitivity lnet_retry_count lnet_transaction_timeout \
	lnet_recovery_limit lnet_max_recovery_ping_interval lnet_response_tracking networks; do
	printf '    %-34s %s\n' "$p" "$(cat /sys/module/lnet/parameters/$p)"
done
printf '    %-34s %s\n' "lnd timeout (derived)" "$(cat /sys/kernel/debug/lnet/lnet_lnd_timeout)"

say "an administrator tightens the transaction timeout at runtime"
echo 60 >/sys/module/lnet/parameters/lnet_transaction_timeout
say "    transaction_timeout=60 -> lnd timeout $(cat /sys/kernel/debug/lnet/lnet_lnd_timeout)"
if ! echo 1001 >/sys/module/lnet/parameters/lnet_health_sensitivity 2>/dev/null; then
	say "    health_sensitivity=1001 refused; still $(cat /sys/module/lnet/parameters/lnet_health_sensitivity)"
fi

say "rails"
lab_wait_peers
peer=$(lab_peer)
for nic in 0 1; do
	a=$(lab_addr "$peer" "$nic")
	ping -c 2 -W 2 -I "eth$nic" "$a" >/tmp/ping || lab_fail "rail $nic to vm$peer is down"
	say "    rail $nic: eth$nic $(lab_addr "$LAB_VM" "$nic") -> vm$peer $a: $(grep -o '[0-9]* packets received' /tmp/ping)"
done

say "Soft-RoCE on every NIC"
for nic in 0 1; do
	rdma link add "rxe$nic" type rxe netdev "eth$nic"
done
sleep 1
rdma link show | sed 's/^/    /'
for nic in 0 1; do
	rdma link show "rxe$nic/1" | grep -q "state ACTIVE" || lab_fail "rxe$nic not ACTIVE"
done
if [ "$LAB_VM" = 1 ]; then
	say "rail 1 fails: eth1 goes down, and its IB port with it"
	ip link set eth1 down
	sleep 1
	rdma link show rxe1/1 | sed 's/^/    /'
	ip link set eth1 up
	sleep 1
	say "eth1 back up"
	rdma link show rxe1/1 | sed 's/^/    /'
	rdma link show rxe1/1 | grep -q "state ACTIVE" || lab_fail "rxe1 did not come back"
else
	sleep 3
fi
for nic in 0 1; do
	rdma link delete "rxe$nic"
done
lab_rmmod lnet
say "done"
