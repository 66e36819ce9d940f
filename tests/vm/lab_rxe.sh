# lab: vms=2 nics=2 timeout=90
# Soft-RoCE gives an ACTIVE IB port on every NIC; taking the NIC down takes
# the port DOWN (a real IB port error), and up again makes it ACTIVE.
port_state() {
	cut -d' ' -f2 "/sys/class/infiniband/rxe$1/ports/1/state"
}

wait_state() {
	tries=0
	until [ "$(port_state "$1")" = "$2" ]; do
		tries=$((tries + 1))
		[ "$tries" -lt 50 ] || lab_fail "rxe$1 port is $(port_state "$1"), expected $2"
		sleep 0.2
	done
}

for nic in 0 1; do
	rdma link add "rxe$nic" type rxe netdev "eth$nic"
done
rdma link show
for nic in 0 1; do
	wait_state "$nic" ACTIVE
	rdma link show "rxe$nic/1" | grep -q "state ACTIVE" || lab_fail "rdma tool does not show rxe$nic ACTIVE"
done

for nic in 0 1; do
	ip link set "eth$nic" down
	wait_state "$nic" DOWN
	lab_log "eth$nic down: rxe$nic $(rdma link show "rxe$nic/1")"
	ip link set "eth$nic" up
	wait_state "$nic" ACTIVE
	lab_log "eth$nic up: rxe$nic ACTIVE again"
done

# Leaks of the links' setup and removal are found by the leak scan that
# follows every scenario (lab_kmemleak_scan_idle), which names this one.
for nic in 0 1; do
	rdma link delete "rxe$nic"
done
