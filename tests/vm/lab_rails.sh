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
# Stay up until the other VM has pinged us too.
sleep 4
lab_rmmod lnet
