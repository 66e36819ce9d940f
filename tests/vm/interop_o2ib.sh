# lab: vms=2 nics=2 clnet=1 timeout=420
# lnet-rs and Lustre's own LNet over o2ib: both nodes run their ko2iblnd on
# Soft-RoCE (rxe0 on eth0 for o2ib, rxe1 on eth1 for o2ib1), set up as an
# administrator would, and ping every NID of the other (RDMA CM connects
# with Lustre's CONNREQ/CONNACK both ways), which Lustre's lctl then lists
# on our side (peer_list, conn_list). Then bulk data both ways with
# lnet_ulp built unchanged on each side: first the Lustre node serves and
# lnet-rs is the client, then the reverse. Each client PUTs and GETs 4 KiB
# and 1 MiB and makes PUT-then-GET round trips of 0 B to 1 MiB at offsets
# into the server's page vector (sweep=1): PUT_REQ/PUT_ACK/PUT_DONE and
# GET_REQ/GET_DONE with RDMA WRITEs into the other side's fast
# registrations, in both directions. lnet-rs counts the GET_REQs it sent
# and served; neither side may see a protocol error. Two defects of
# Lustre's ko2iblnd shape it: a GET_REQ answered with fewer bytes than its
# sink gets no RDMA WRITE at all (so our pings size their sink as Lustre's
# do, and go inline), and an IMMEDIATE sent from a page-vector MD across a
# page carries wrong bytes (so our GETs from Lustre skip that case).
# No `peer add`: each side learns the other's second NID by discovery.
# We checksum our messages (cksum=1) and Lustre checks every one; a bad
# one would close the connection. Lustre's own checksums cannot be
# checked here: on a fast-registration device (rxe) its IMMEDIATE with a
# payload sends the payload from the MD's pages in a second SGE but sums
# ibm_nob bytes of its message buffer, where the payload is not, so no
# receiver (Lustre's or ours) accepts it.
[ "$LAB_LUSTRE" = 1 ] || LAB_LND_ARGS=cksum=1
lab_interop_setup o2ib1 o2ib
lab_interop_ping_all

if [ "$LAB_LUSTRE" = 1 ]; then
	lab_interop_serve 7030 7031
	lab_interop_client 7040 7041 sweep=1
else
	# Lustre's lctl peer_list and conn_list (IOC_LIBCFS_GET_PEER and
	# GET_CONN, which LNet hands to ko2iblnd): the peer NI with its
	# reference count, and its connection with the path MTU.
	lctl --net o2ib peer_list >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl peer_list"; }
	grep -q "^$p0 *\[[1-9][0-9]*\]$" /tmp/c.out || { cat /tmp/c.out; lab_fail "peer_list: no $p0"; }
	lctl --net o2ib conn_list >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl conn_list"; }
	lab_log "Lustre's lctl --net o2ib conn_list: $(tr '\n' ' ' </tmp/c.out)"
	grep -q "^$p0 mtu [1-9][0-9]*$" /tmp/c.out || { cat /tmp/c.out; lab_fail "conn_list: no connection to $p0"; }
	d=/sys/kernel/debug/ko2iblnd
	reqs=$(cat $d/get_reqs)
	# sweep=2: not the 100 bytes across a page of Lustre's MD, whose
	# REPLY Lustre's ko2iblnd sends from the wrong address (lnet_ulp.c).
	lab_interop_client 7030 7031 sweep=2
	reqs=$(($(cat $d/get_reqs) - reqs))
	served=$(cat $d/gets_served)
	lab_interop_serve 7040 7041
	served=$(($(cat $d/gets_served) - served))
	lab_log "lnet-rs sent $reqs GET_REQs to Lustre and served $served of its"
	[ "$reqs" -ge 7 ] || lab_fail "only $reqs GETs to Lustre went as GET_REQ"
	[ "$served" -ge 7 ] || lab_fail "only $served of Lustre's GETs came as GET_REQ"
	lab_expect_eq "$(cat $d/protocol_errors)" 0 "protocol errors"
fi
if [ "$LAB_LUSTRE" = 1 ]; then
	# Its own client's sweep logs two: the 4 MiB MD refused, and its
	# 0-byte MD ("offset 0 goes beyond kiov", which it then sends).
	dmesg | grep -E "LNetError|LustreError" | grep -vE "too many fragments 1024|offset 0 goes beyond kiov" &&
		lab_fail "Lustre logged errors"
fi
kill $ready
lab_interop_teardown
