# lab: vms=2 nics=2 timeout=240
# ksocklnd between two VMs over eth0: VM 1 serves buffers, VM 0 PUTs and
# GETs 4 KiB and 1 MiB to it through lnet_ulp.ko and checks the data that
# comes back. The 1 MiB payloads go as zero-copy requests both ways (the
# PUT from VM 0, the GET's REPLY from VM 1): each must be completed by
# the peer's ZC-ACK, none aborted. A PUT from and a GET into pages with a
# gap (a middle fragment starting and ending mid-page) carry their bytes:
# ksocklnd copies fragment by fragment. VM 1 never connects back. Both sides
# then unload with no leak and no splat.
dmesg -c >/dev/null
# VM 0 runs at Lustre's default debug mask, VM 1 with the lab's D_NET.
mask=
[ "$LAB_VM" = 0 ] && mask=libcfs_debug=default
modprobe lnet networks="tcp(eth0)" $mask || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
if [ "$LAB_VM" = 1 ]; then
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	i=0
	while ! dmesg | grep -q 'lnet_ulp: peer done'; do
		i=$((i + 1))
		[ $i -lt 150 ] || lab_fail "the client never finished"
		sleep 1
	done
else
	if ! modprobe lnet_ulp mode=client peer="$(lab_addr 1 0)@tcp" gaps=1; then
		dmesg | grep -E 'lnet_ulp|ksocklnd|lnet:' | tail -n 30
		lab_fail "client checks failed"
	fi
fi
dmesg | grep -E 'lnet_ulp|ksocklnd' | sed 's/^/  /'
# VM 0 connects to VM 1, which only answers: as in Lustre, VM 1 never
# connects back while VM 0 has a connection (not even for a type VM 0 is
# still opening, which a Lustre peer would refuse as a race).
if [ "$LAB_VM" = 1 ] && dmesg | grep -q 'opened [a-z-]* connection to'; then
	lab_fail "connected back to a peer that connected to us"
fi
# Connections are D_NET events: on the console with it, never without.
if [ "$LAB_VM" = 0 ] && dmesg | grep -E '(opened|accepted|closed) [a-z-]* connection'; then
	lab_fail "connection lines at the default debug mask"
fi
if [ "$LAB_VM" = 1 ] && ! dmesg | grep -q 'accepted [a-z-]* connection from'; then
	lab_fail "no connection line with D_NET in the mask"
fi
zc=/sys/kernel/debug/ksocklnd
lab_log "zero-copy requests $(cat $zc/zc_requests), acknowledged $(cat $zc/zc_acked), aborted $(cat $zc/zc_aborted)"
[ "$(cat $zc/zc_requests)" -gt 0 ] || lab_fail "no 1 MiB payload went as a zero-copy request"
# The last ACK may still be on its way when the peer says it is done.
i=0
while [ "$(cat $zc/zc_acked)" != "$(cat $zc/zc_requests)" ] && [ $i -lt 10 ]; do
	sleep 1
	i=$((i + 1))
done
lab_expect_eq "$(cat $zc/zc_acked)" "$(cat $zc/zc_requests)" "zero-copy requests acknowledged"
lab_expect_eq "$(cat $zc/zc_aborted)" 0 "zero-copy requests aborted"
lab_rmmod lnet_ulp
lab_rmmod ksocklnd
lab_rmmod lnet
