# lab: vms=2 nics=2 clnet=1 timeout=420
# Both NICs on one net, on both nodes: tcp on eth0 and on eth1, an NI
# each. Every NID is pinged both ways; the Lustre node discovers us and
# lists one Multi-Rail peer with both our NIDs; then lnet_ulp's bulk
# checks run both ways (the Lustre node serving first), and each client's
# two NIs both carry its traffic.
lab_interop_setup tcp
lab_interop_ping_all
if [ "$LAB_LUSTRE" = 1 ]; then
	lnetctl discover "$p0" >/tmp/disc 2>&1 || { cat /tmp/disc; lab_fail "Lustre: lnetctl discover $p0"; }
	lnetctl peer show -v >/tmp/peer || lab_fail "Lustre: peer show -v"
	grep -qi "Multi-Rail: true" /tmp/peer && grep -q "nid: $p1" /tmp/peer ||
		{ cat /tmp/peer; lab_fail "Lustre: peer show lacks the Multi-Rail peer $p0 with $p1"; }
	lab_interop_serve 7060 7061
	lab_interop_client 7070 7071
else
	lab_interop_client 7060 7061
	lab_interop_serve 7070 7071
fi
kill $ready
lab_interop_teardown
