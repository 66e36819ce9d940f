# lab: vms=2 nics=2 timeout=300
# A hostile socklnd peer: VM 0 runs ksock_hostile against VM 1's tcp NI
# (bad acceptor requests and hellos, then bad frames after a good
# handshake, and a hang-up mid-payload). VM 1 must close every one of
# those connections, count them in /sys/kernel/debug/ksocklnd, say why in
# dmesg, and still carry LNet traffic afterwards (lnet_ulp's PUT/GET
# checks from VM 0). The lab's kernel checks catch any splat or leak.
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
dmesg -c >/dev/null
modprobe lnet networks="tcp(eth0)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"
DBG=/sys/kernel/debug/ksocklnd

if [ "$LAB_VM" = 1 ]; then
	# lab_serve_until_done, with the counters read before unloading.
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7000 -e /bin/true &
	ready=$!
	# Read once the hostile peer is done: the well-behaved traffic after
	# it may add a refusal of its own (a connection race, resolved).
	nc -l -p 7002 </dev/null >/dev/null || lab_fail "no word from the client"
	refused=$(cat $DBG/refused)
	proto=$(cat $DBG/protocol_errors)
	lab_log "ksocklnd counted $refused refused connections, $proto protocol errors"
	log=$(dmesg)
	echo "$log" | grep -E 'protocol error|refusing|not creating' | sed 's/^/  /'
	# Eleven cases end before the handshake completes (one a hello from
	# another net than the NI's); nine break the protocol (magics, hello
	# version, address count, type, frames, headers).
	lab_expect_eq "$refused" 11 "refused connections"
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the client"
	kill $ready
	lab_expect_eq "$proto" 9 "protocol errors"
	for why in 'insecure port' 'protocol error' \
		'untyped connection on hello V3' 'no matching NI' \
		'hello from 10.255.0.1@tcp1, on another net' \
		'bad ksock_msg header' 'unknown ZC-ACK cookie' \
		'LNet refused the header'; do
		echo "$log" | grep -q "$why" || lab_fail "no dmesg line for: $why"
	done
	lab_rmmod lnet_ulp
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ksocklnd
	lab_rmmod lnet
	exit 0
fi

lab_wait_server "$paddr"
lab_log "ksock_hostile against $paddr"
out=$(ksock_hostile "$paddr") || {
	echo "$out" | sed 's/^/  /'
	lab_fail "a hostile connection was left open"
}
echo "$out" | sed 's/^/  /'
echo hostile | nc -w 5 "$paddr" 7002 || lab_fail "cannot tell the server"
# The hostile connections are counted on VM 1; here only the traffic
# that follows matters: the NI must still serve a well-behaved peer.
lab_expect_eq "$(echo "$out" | grep -c 'Closed')" 16 "cases closed by the NI"
if ! modprobe lnet_ulp mode=client peer="$paddr@tcp"; then
	dmesg | grep -E 'lnet_ulp|ksocklnd|lnet:' | tail -n 30
	lab_fail "traffic after the hostile peer failed"
fi
lab_rmmod lnet_ulp
lab_server_done "$paddr"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
