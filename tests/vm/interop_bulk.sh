# lab: vms=2 nics=2 lustre=1 timeout=420
# Bulk data between lnet-rs and Lustre's own LNet, both ways, over two
# rails. tests/kmod/lnet_ulp.c is built unchanged against each side's
# headers (Lustre's own for the Lustre node): one node serves its buffers,
# the other PUTs and GETs 4 KiB and 1 MiB to them and checks the data that
# comes back, then sends 24 more 4 KiB PUTs. First the Lustre node serves
# and lnet-rs is the client (its peer made Multi-Rail by `peer add`:
# lnet-rs does not discover yet), then lnet-rs serves and the Lustre node
# is the client (it discovers us on its first send). Each client's two
# NIs both carry its traffic.
lab_interop_setup
if [ "$LAB_LUSTRE" != 1 ]; then
	lnetctl peer add --prim_nid "$p0" --nid "$p1" || lab_fail "peer add"
fi

if [ "$LAB_LUSTRE" = 1 ]; then
	lab_interop_serve 7010 7011
	lab_interop_client 7020 7021
else
	lab_interop_client 7010 7011
	lab_interop_serve 7020 7021
	lnetctl peer show -v >/tmp/peer || lab_fail "peer show -v"
	grep -q "nid: $p1" /tmp/peer || { cat /tmp/peer; lab_fail "the Lustre node's tcp1 NID is not in its peer"; }
	dmesg | grep -q "Bad push" && { dmesg | grep "Bad push"; lab_fail "a push from the Lustre node was refused"; }
fi
lab_interop_teardown
