# lab: vms=2 nics=2 clnet=1 timeout=420
# Interoperation with Lustre's own LNet: VM 0 runs lnet-rs, VM 1 Lustre's
# C LNet, LNDs and lnetctl (a clnet lab: scripts/build-lustre.sh's build
# for our kernel). Each side is set up as its administrator
# would (tcp on eth0, tcp1 on eth1, default settings) and pings every NID
# of the other. Then the Lustre node discovers us: its `lnetctl discover`
# reads our ping buffer (Multi-Rail, discovery on) and pushes its own to
# us, which must be ACKed; its `peer show -v` must then list us as one
# Multi-Rail peer with both NIDs. Last, the Lustre node's eth1 goes down:
# our ping of its tcp1 NID times out, which costs that peer NI health, and
# the recovery pings that follow (sent into a socket nobody reads) must
# not bring it back up: only a REPLY may.
lab_interop_setup
lab_interop_ping_all
# Both sides are done pinging before the Lustre node cuts a rail.
if [ "$LAB_LUSTRE" = 1 ]; then
	nc -l -p 7003 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
else
	lab_tell "$(lab_addr "$peer" 0)" 7003
fi

if [ "$LAB_LUSTRE" = 1 ]; then
	t0=$(date +%s)
	lnetctl discover "$p0" >/tmp/disc 2>&1 || { cat /tmp/disc; lab_fail "Lustre: lnetctl discover $p0"; }
	lab_log "Lustre discovered $p0 in $(($(date +%s) - t0))s:"
	sed 's/^/  /' /tmp/disc
	grep -qi "Multi-Rail: true" /tmp/disc || lab_fail "Lustre: discover does not say Multi-Rail"
	lnetctl peer show -v >/tmp/peer || lab_fail "Lustre: peer show -v"
	awk -v p="$p0" '$0 ~ "primary nid: " p { found = 1 } END { exit !found }' /tmp/peer &&
		grep -qi "Multi-Rail: true" /tmp/peer && grep -q "nid: $p1" /tmp/peer ||
		{ cat /tmp/peer; lab_fail "Lustre: peer show lacks the Multi-Rail peer $p0 with $p1"; }
	ip link set eth1 down
	lab_server_done "$(lab_addr "$peer" 0)"
	# Until lnet-rs is done with the cut rail.
	nc -l -p 7002 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
	ip link set eth1 up
else
	# Until the Lustre node is done with us and has cut eth1.
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the Lustre node"
	# From our tcp1 NI: a ping of a Multi-Rail peer's NID without a
	# source goes by selection, over whichever rail is up (as Lustre's).
	lab_must_fail lnetctl ping --source "$me1" "$p1" --timeout 3
	# Its health, sampled for 10 s after the ping failed: a sample about
	# every 2 s (each `peer show` takes about one here; ten samples with a
	# second between them took about 18 s), the last at 10 s or more.
	max=0
	t0=$(now_ms)
	while :; do
		h=$(lab_peer_ni_health "$p1")
		[ "${h:-1000}" -le "$max" ] || max=${h:-1000}
		[ $(($(now_ms) - t0)) -lt 10000 ] || break
		sleep 1
	done
	[ "$max" -lt 1000 ] || { cat /tmp/peer3; lab_fail "$p1 back at health 1000 with its link down"; }
	lab_log "with the Lustre node's eth1 down, $p1 stayed at health $max or less"
	lab_tell "$(lab_addr "$peer" 0)" 7002
	# Its discovery push, and the one its link change sends, were taken.
	dmesg | grep -q "Bad push" && { dmesg | grep "Bad push"; lab_fail "a push from the Lustre node was refused"; }
fi
kill $ready
lab_interop_teardown
