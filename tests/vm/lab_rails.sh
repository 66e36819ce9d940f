# lab: vms=2 nics=2 timeout=90
# Both VMs see each other over both rails, with lnet.ko loaded on each.
modprobe lnet
lab_wait_peers
peer=$(lab_peer)
for nic in 0 1; do
	a=$(lab_addr "$peer" "$nic")
	ping -c 3 -W 2 -I "eth$nic" "$a" >/tmp/ping || lab_fail "no replies from $a over eth$nic"
	lab_log "eth$nic -> $a: $(grep -o '[0-9]* packets received' /tmp/ping)"
done
# The lab's own iproute2 (not busybox's) with the qdiscs tests rely on.
ip -V | grep -q iproute2 || lab_fail "ip is not iproute2's"
tc qdisc add dev eth1 root netem loss 0% delay 1ms
tc qdisc show dev eth1 | grep -q netem || lab_fail "netem qdisc missing"
tc qdisc del dev eth1 root
tc qdisc add dev eth1 root tbf rate 100mbit burst 32kbit latency 400ms
tc qdisc show dev eth1 | grep -q tbf || lab_fail "tbf qdisc missing"
tc qdisc del dev eth1 root
# Stay up until the other VM has pinged us too.
sleep 4
lab_rmmod lnet
