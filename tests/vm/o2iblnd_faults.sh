# lab: vms=2 nics=2 timeout=600
# ko2iblnd Health when connections cannot be made or a rail goes silent,
# two VMs over rxe0/rxe1 with o2ib and o2ib1 (o2iblnd-events.md §2, §3.2):
# - a NID with no node behind it: address resolution fails (ADDR_ERROR),
#   the ping ends at once with NETWORK_TIMEOUT, and the peer NI is
#   reported down to LNet (debugfs ko2iblnd/peers_down);
# - the peer's o2ib1 deleted, nobody listens: the CM rejects with "invalid
#   service ID", NETWORK_TIMEOUT;
# - the peer's eth1 under another net: its LND refuses the request (FATAL),
#   REMOTE_DROPPED;
# - our eth1 silenced (netem) under a flood of 1 MiB PUTs: what was on
#   o2ib1 fails over, the ULP sees no failed PUT but those whose tx waited
#   for the peer's answer as its connection closed (not resent, as in
#   Lustre; ko2iblnd's aborted_final counts them), and every failure is
#   counted alike by `stats show`, `net show -v 3` and `peer show -v 3`;
# - the peer restarts its LND (ko2iblnd unloaded and loaded) under a
#   flood: every PUT ends. Its push of the change is lost with its NIs;
#   its next PUT to us pushes again, as Lustre's discovery does, and we
#   send on both rails again.
# A transaction timeout of 30 s (LND timeout 9 s) keeps what waits for a
# timeout short.
modprobe lnet lnet_max_recovery_ping_interval=4 lnet_transaction_timeout=30 ||
	lab_fail "lnet did not load"
lab_interop_setup o2ib1 o2ib
paddr=$(lab_addr "$peer" 0)

if [ "$LAB_VM" = 1 ]; then
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7000 -e /bin/true &
	up=$!
	# VM 0 says when; we say when it is done.
	step() {
		nc -l -p 7002 </dev/null >/dev/null || lab_fail "no word for: $1"
		shift
		"$@"
		lab_tell "$paddr" 7003
	}
	lnd_restart() {
		lnetctl net del --net o2ib1 || lab_fail "net del o2ib1"
		lnetctl net del --net o2ib || lab_fail "net del o2ib"
		lab_rmmod ko2iblnd
		modprobe ko2iblnd || lab_fail "ko2iblnd did not load again"
		lnetctl net add --net o2ib --if eth0 || lab_fail "net add o2ib again"
		lnetctl net add --net o2ib1 --if eth1 || lab_fail "net add o2ib1 again"
	}
	step "no listener" lnetctl net del --net o2ib1
	step "another net" lnetctl net add --net o2ib5 --if eth1
	step "o2ib1 again" sh -c 'lnetctl net del --net o2ib5 && lnetctl net add --net o2ib1 --if eth1'
	# A PUT to VM 0's server waits for discovery, which pushes our
	# buffer: VM 0 has not seen it. A push still in flight (its ACK lost
	# with our NIs) must end first, at its 30 s deadline: a message
	# waiting for discovery fails with it, as in Lustre.
	put_to_client() {
		i=0
		while :; do
			lnetctl peer show --nid "$paddr@o2ib" -v 3 >/tmp/peer || lab_fail "peer show"
			st=$(awk '$1 == "peer" && $2 == "state:" { print $3; exit }' /tmp/peer)
			[ $((st / 1024 % 2)) = 0 ] && break
			i=$((i + 1))
			[ $i -lt 45 ] || lab_fail "our push to $paddr@o2ib never ended (state $st)"
			sleep 1
		done
		lab_rmmod lnet_ulp
		dmesg -c >/dev/null
		modprobe lnet_ulp mode=burst peer="$paddr@o2ib" repeat=1 op_timeout=60 ||
			lab_fail "burst did not run"
		dmesg | grep -q 'burst of 1 PUTs: 1 ok, 0 failed' ||
			{ dmesg | grep lnet_ulp; lab_fail "our PUT to the client failed"; }
		lab_rmmod lnet_ulp
		modprobe lnet_ulp mode=server || lab_fail "server did not start again"
	}
	step "LND restart" lnd_restart
	step "PUT to the client" put_to_client
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the client"
	kill $up
	lab_rmmod lnet_ulp
	lab_interop_teardown
	exit 0
fi

# Asks VM 1 for its next step and waits until it is done.
ask() {
	lab_tell "$paddr" 7002
	nc -l -p 7003 </dev/null >/dev/null || lab_fail "no word from the server"
}
# The global counter $1 (lnetctl stats show).
stat() {
	lnetctl stats show >/tmp/stats || lab_fail "stats show"
	awk -v k="$1:" '$1 == k { print $2; exit }' /tmp/stats
}
# A ping from o2ib1 to $1 that must fail, fast (its send fails, no
# timeout is waited out), moving the counter $2 of `stats show`.
ping_fails() {
	c0=$(stat "$2")
	t=$(now_ms)
	lab_must_fail lnetctl ping --source "$me1" "$1" --timeout 30
	t=$(($(now_ms) - t))
	c=$(($(stat "$2") - c0))
	lab_log "ping $1: failed after $t ms, $2 +$c"
	[ "$c" -ge 1 ] || lab_fail "ping $1: $2 did not move"
	[ "$t" -lt 20000 ] || lab_fail "ping $1 waited out its timeout"
}
# Waits up to 60 s for our o2ib1 NI to be back at health 1000 after $1;
# prints the seconds it took (run in $(...): a failure goes to stderr).
me1_healed() {
	n=0
	until [ "$(lab_ni_health "$me1")" = 1000 ]; do
		n=$((n + 1))
		[ $n -lt 60 ] || lab_fail "$me1 at health $(lab_ni_health "$me1") 60 s after $1" >&2
		sleep 1
	done
	echo $n
}
# Every health status as `stats show` counts it, and the same summed over
# the "health stats" sections of our NIs (local statuses, from `net show
# -v 3`) or of the peer NIs (remote ones, from `peer show -v 3`): "name
# global elements" per line. One awk for all of them: forks are slow here.
hstatuses() {
	lnetctl stats show >/tmp/hs_stats || lab_fail "stats show"
	lnetctl net show -v 3 >/tmp/hs_nets || lab_fail "net show -v 3"
	lnetctl peer show -v 3 >/tmp/hs_peers || lab_fail "peer show -v 3"
	# name:n|p:key (n: our NIs, p: the peer NIs; _ in key is a space)
	awk -v list="local_interrupt:n:interrupts local_dropped:n:dropped
		local_aborted:n:aborted local_no_route:n:no_route
		local_timeout:n:timeouts local_error:n:error
		remote_dropped:p:dropped remote_error:p:error
		remote_timeout:p:timeout network_timeout:p:network_timeout" '
		BEGIN {
			n = split(list, ms)
			for (i = 1; i <= n; i++) {
				split(ms[i], p, ":")
				name[i] = p[1]
				from[i] = p[2] == "n" ? ARGV[2] : ARGV[3]
				key[i] = p[3] ":"
				gsub(/_/, " ", key[i])
			}
		}
		FNR == 1 { inh = 0 }
		FILENAME == ARGV[1] { if (!($1 in g)) g[$1] = $2; next }
		{ ind = match($0, /[^ ]/) }
		inh && ind <= hind { inh = 0 }
		/^ *health stats:$/ { inh = 1; hind = ind; next }
		inh {
			rest = substr($0, ind)
			for (i = 1; i <= n; i++)
				if (from[i] == FILENAME && index(rest, key[i]) == 1)
					sum[i] += substr(rest, 1 + length(key[i]))
		}
		END {
			for (i = 1; i <= n; i++) {
				c = g[name[i] "_count:"]
				print name[i], c == "" ? "missing" : c, sum[i] + 0
			}
		}' /tmp/hs_stats /tmp/hs_nets /tmp/hs_peers
}

lab_wait_server "$paddr"

# No node behind the NID: ARP finds nobody. The peer NI, its only
# attempt failed, is reported down to LNet (kiblnd_peer_notify).
down0=$(cat /sys/kernel/debug/ko2iblnd/peers_down)
ping_fails "$(lab_addr 9 1)@o2ib1" network_timeout_count
[ "$(cat /sys/kernel/debug/ko2iblnd/peers_down)" -gt "$down0" ] ||
	lab_fail "$(lab_addr 9 1)@o2ib1 not reported down"
dmesg | grep -q "$me1: can't reach $(lab_addr 9 1)@o2ib1" || lab_fail "no address error logged"
# Nobody listens on the peer's eth1.
ask
ping_fails "$p1" network_timeout_count
dmesg | grep -q "$me1: $p1 rejected the connection (CM status 8," || lab_fail "no invalid service ID reject"
# The peer's eth1 is o2ib5: its LND refuses a request for o2ib1.
ask
ping_fails "$p1" remote_dropped_count
dmesg | grep -q "$me1: $p1 rejected the connection (CM status 28, Some(Fatal))" ||
	lab_fail "no FATAL reject"
ask
lnetctl discover "$p0" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $p0"; }
grep -q "nid: $p1\$" /tmp/disc || { cat /tmp/disc; lab_fail "discovery did not learn $p1"; }
s=$(lab_wait_health "$p1" eq 1000 60)
lab_client_rails "$p0" 16
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "not both rails used ($d0, $d1)"

# Our eth1 silenced under a flood: o2ib1's txs never complete. The
# counters are read where nothing fails any more: before the flood, and
# once both ends of the rail are back to health 1000.
hstatuses >/tmp/hs0
final0=$(cat /sys/kernel/debug/ko2iblnd/aborted_final)
start1=$(lab_ni_sends "$me1")
# 512 KiB PUTs, 8 at a time: all 24 at once queue up to 12 MiB behind one
# rail once the other is silent, which rxe under TCG (0.6 MiB/s) may not
# move within a message's deadline (28 s: LND timeout 9 s, 2 retries), and
# a message past it fails, as in Lustre.
LAB_FLOOD_BYTES=524288 lab_flood 24 60 8
until [ "$(lab_ni_sends "$me1")" -gt $((start1 + 2)) ]; do
	kill -0 $flooding 2>/dev/null || lab_fail "the flood ended before o2ib1 carried it"
	sleep 0.1
done
tc qdisc add dev eth1 root netem loss 100% || lab_fail "netem on eth1"
t=$(now_ms)
lab_flood_end "flood with eth1 silent"
lab_log "flood with eth1 silent ended $(($(now_ms) - t)) ms after the silence"
final=$(($(cat /sys/kernel/debug/ko2iblnd/aborted_final) - final0))
[ $((ok + failed)) = 24 ] && [ "$failed" -le "$final" ] ||
	lab_fail "the flood over a silent rail lost PUTs: $line ($final txs aborted for good)"
[ "$failed" = 0 ] || lab_log "$failed PUT(s) failed, of $final txs that waited for the peer's answer when their connection closed"
tc qdisc del dev eth1 root || lab_fail "netem off eth1"
s=$(lab_wait_health "$p1" eq 1000 60)
i=$(me1_healed "eth1 spoke again")
lab_log "eth1 speaks again: $p1 at health 1000 after $s s, $me1 after $i s more"
hstatuses >/tmp/hs1
moved=0
while read -r name g e; do
	read -r _ g1 e1 <&3
	dg=$((g1 - g))
	de=$((e1 - e))
	[ "$dg" = 0 ] || lab_log "silent rail: $name +$dg"
	[ "$dg" = "$de" ] || lab_fail "$name: stats show +$dg, the NIs' or peer NIs' health stats +$de"
	moved=$((moved + dg))
done </tmp/hs0 3</tmp/hs1
[ "$moved" -gt 0 ] || lab_fail "nothing failed on the silent rail"

# The peer restarts its LND under a flood: PUTs may fail while it has no
# NI, but each one ends. Then it PUTs to our server: that pushes its NIs
# to us, the push of their removal having failed.
lab_flood 24 60
ask
lab_flood_end "flood while the peer restarted its LND"
[ $((ok + failed)) = 24 ] && [ "$unended" = 0 ] || lab_fail "not every PUT ended"
modprobe lnet_ulp mode=server || lab_fail "our server did not start"
ask
lab_rmmod lnet_ulp
lnetctl peer show --nid "$p0" >/tmp/peer || lab_fail "peer show $p0"
grep -q "nid: $p1\$" /tmp/peer || { cat /tmp/peer; lab_fail "$p1 not learnt from the peer's push"; }
s=$(lab_wait_health "$p1" eq 1000 60)
# A tx of ours caught on a connection the restart left behind may have
# waited out its timeout, charging our o2ib1 NI: selection leaves it until
# its recovery pings bring it back.
i=$(me1_healed "the restart")
lab_client_rails "$p0" 16
lab_log "after the peer's LND restart: sends on $me0: $d0, on $me1: $d1"
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "not both rails used after the restart ($d0, $d1)"
lab_expect_eq "$(cat /sys/kernel/debug/ko2iblnd/protocol_errors)" 0 "protocol errors"

lab_server_done "$paddr"
lab_interop_teardown
