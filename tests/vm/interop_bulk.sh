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

# serve READY DONE: serves buffers, says so on port READY until the
# client says it is done on port DONE.
serve() {
	modprobe lnet_ulp mode=server || lab_fail "$side: server did not start"
	nc -ll -p "$1" -e /bin/true &
	up=$!
	nc -l -p "$2" </dev/null >/dev/null || lab_fail "$side: no word from the client"
	kill $up
	dmesg | grep -q 'lnet_ulp: peer done' || lab_fail "$side: the client's last PUT never came"
	lab_rmmod lnet_ulp
}

# client READY DONE: waits for the server, runs the checks, tells it.
client() {
	lab_wait_server "$(lab_addr "$peer" 0)" "$1"
	t0=$(date +%s)
	lab_client_rails "$p0" 24
	lab_log "$side client: PUT/GET 4 KiB and 1 MiB and 24 PUTs in $(($(date +%s) - t0))s; sends on $me0: $d0, on $me1: $d1"
	[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "$side client: not both rails used ($d0, $d1)"
	lab_tell "$(lab_addr "$peer" 0)" "$2"
}

if [ "$LAB_LUSTRE" = 1 ]; then
	serve 7010 7011
	client 7020 7021
else
	client 7010 7011
	serve 7020 7021
	lnetctl peer show -v >/tmp/peer || lab_fail "peer show -v"
	grep -q "nid: $p1" /tmp/peer || { cat /tmp/peer; lab_fail "the Lustre node's tcp1 NID is not in its peer"; }
	dmesg | grep -q "Bad push" && { dmesg | grep "Bad push"; lab_fail "a push from the Lustre node was refused"; }
fi
lab_interop_teardown
