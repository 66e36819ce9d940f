# lab: vms=4 nics=2 timeout=120
# More than two VMs share a rail through the lab's hub: every VM reaches
# every other one over both rails.
lab_wait_peers
v=0
while [ "$v" -lt "$LAB_NVMS" ]; do
	if [ "$v" != "$LAB_VM" ]; then
		for nic in 0 1; do
			a=$(lab_addr "$v" "$nic")
			ping -c 2 -W 2 -I "eth$nic" "$a" >/dev/null || lab_fail "vm$v unreachable at $a over eth$nic"
		done
		lab_log "vm$v reachable over both rails"
	fi
	v=$((v + 1))
done
# Stay up until the others have pinged us too.
sleep 4
