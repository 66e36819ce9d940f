# lab: vms=2 nics=2 clnet=1 timeout=420
# Bulk data between lnet-rs and Lustre's own LNet, both ways, over two
# rails. tests/kmod/lnet_ulp.c is built unchanged against each side's
# headers (Lustre's own for the Lustre node): one node serves its buffers,
# the other PUTs and GETs 4 KiB and 1 MiB to them and checks the data that
# comes back, round-trips 0 B to 1 MiB at offsets into the server's pages
# (sweep=1), has its own 4 MiB MD refused (LNet's MTU is 1 MiB on both),
# PUTs for 1 s, then sends 24 more 4 KiB PUTs. First the Lustre node serves
# and lnet-rs is the client, then lnet-rs serves and the Lustre node is
# the client. Neither is told of the other's second NID: each discovers
# the other on its first send (and pushes its own buffer). Each client's
# two NIs both carry its traffic.
lab_interop_setup

if [ "$LAB_LUSTRE" = 1 ]; then
	lab_interop_serve 7010 7011
	lab_interop_client 7020 7021 "sweep=1 seconds=1"
else
	lab_interop_client 7010 7011 "sweep=1 seconds=1"
	lab_interop_serve 7020 7021
	lnetctl peer show -v 3 >/tmp/peer || lab_fail "peer show -v 3"
	grep -q "nid: $p1" /tmp/peer || { cat /tmp/peer; lab_fail "the Lustre node's tcp1 NID is not in its peer"; }
	state=$(awk -v nid="$p0" '$2 == "primary" && $3 == "nid:" { cur = $4 } $1 == "peer" && $2 == "state:" && cur == nid { print $3; exit }' /tmp/peer)
	[ $((state & 17)) -eq 17 ] || { cat /tmp/peer; lab_fail "the Lustre node is not a discovered Multi-Rail peer (state $state)"; }
	lab_log "lnet-rs discovered the Lustre node: state $state"
	dmesg | grep -q "Bad push" && { dmesg | grep "Bad push"; lab_fail "a push from the Lustre node was refused"; }
fi
lab_interop_teardown
