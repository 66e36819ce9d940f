# lab: vms=2 nics=2 timeout=240
# lnetctl over /dev/lnet with ksocklnd on two nets, one per rail
# (tcp on eth0, tcp1 on eth1): configure, net show, ping the other VM over
# each rail (the reply lists both its NIs), stats, counts by message type
# (`-v 3`: sent_stats... summing to send_count...), bad ioctls refused,
# unconfigure. A ping with a source on another net than its target fails
# (no route), and unpinned pings of a tcp NID leave from tcp. A ping that
# would wait 60 s for a silenced rail returns at once when SIGINT comes. VM 1 then takes its LNet down
# first, and VM 0's ping of it fails as soon as the connection is refused,
# not at the end of its timeout.
peer=$(lab_peer)
modprobe lnet networks="tcp(eth0),tcp1(eth1)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"
lnetctl net show >/tmp/nets || lab_fail "net show"
me0=$(lab_addr "$LAB_VM" 0)@tcp
me1=$(lab_addr "$LAB_VM" 1)@tcp1
grep -q "nid: $me0" /tmp/nets || { cat /tmp/nets; lab_fail "net show lacks $me0"; }
grep -q "nid: $me1" /tmp/nets || { cat /tmp/nets; lab_fail "net show lacks $me1"; }
p0=$(lab_addr "$peer" 0)@tcp
p1=$(lab_addr "$peer" 1)@tcp1
# Both VMs up to here before any ping: the other one may still be in the
# previous scenario, taking its LNet down and up.
nc -ll -p 7000 -e /bin/true &
ready=$!
lab_wait_server "$(lab_addr "$peer" 0)"
# The other VM may still be starting: retry the first ping for a while.
i=0
until lnetctl ping "$p0" >/tmp/ping0 2>&1; do
	i=$((i + 1))
	[ $i -lt 30 ] || { cat /tmp/ping0; lab_fail "no ping reply from $p0"; }
	sleep 2
done
lnetctl ping "$p1" --timeout 10 >/tmp/ping1 2>&1 || { cat /tmp/ping1; lab_fail "no ping reply from $p1"; }
for f in /tmp/ping0 /tmp/ping1; do
	grep -q "nid: $p0" $f && grep -q "nid: $p1" $f || { cat $f; lab_fail "ping reply lacks the peer's NIs"; }
done
lab_log "ping over both rails:"
sed 's/^/  /' /tmp/ping1
lnetctl stats show >/tmp/stats || lab_fail "stats show"
grep -q "send_count: [1-9]" /tmp/stats || { cat /tmp/stats; lab_fail "no sends counted"; }
# A ping to nobody fails with Lustre's error block, not a hang.
if lnetctl ping 10.1.0.99@tcp --timeout 2 >/tmp/noping 2>&1; then
	lab_fail "ping to nobody succeeded"
fi
grep -q "errno:" /tmp/noping || { cat /tmp/noping; lab_fail "no error block"; }
# Sends across nets: a source on another net is no route, never a
# connection from tcp1 to a tcp NID.
lnetctl discover "$p0" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $p0"; }
grep -q "nid: $p1" /tmp/disc || { cat /tmp/disc; lab_fail "discovery did not learn $p1"; }
lab_must_fail lnetctl ping --source "$me1" "$p0" --timeout 5
lab_must_fail lnetctl ping --source "$me0" "$p1" --timeout 5
# A ping of a Multi-Rail peer goes by selection, as Lustre's lnet_ping
# (only recovery pings name their peer NI): either rail, each to the
# peer's NID on that rail's net.
before0=$(lab_ni_sends "$me0")
before1=$(lab_ni_sends "$me1")
for i in 1 2 3 4 5 6; do
	lnetctl ping "$p0" --timeout 10 >/dev/null || lab_fail "ping $p0"
done
d0=$(($(lab_ni_sends "$me0") - before0))
d1=$(($(lab_ni_sends "$me1") - before1))
lab_log "6 pings of $p0: $d0 sends on $me0, $d1 on $me1"
[ $((d0 + d1)) -ge 6 ] || lab_fail "6 pings of $p0 made $d0 + $d1 sends"
# Counts by message type, as Lustre's lnet_element_stats: each total is
# the sum of its types; the pings are GETs out and REPLYs in.
lnetctl net show -v 3 >/tmp/nets3 || lab_fail "net show -v 3"
lnetctl peer show -v 3 --nid "$p0" >/tmp/peer3 || lab_fail "peer show -v 3"
# elem_sums FILE NID: for the NI or peer NI NID in FILE (as lab_elem_stat
# reads it), in one awk instead of one per value: for sent:send,
# received:recv and dropped:drop, the sum of put, get, reply, ack and hello
# in its SECTION_stats and its statistics COUNT_count ("none" if absent),
# then the GETs in sent_stats and the REPLYs in received_stats (0 if absent).
elem_sums() {
	awk -v nid="$2" '
		$1 == "-" && $2 == "nid:" { cur = $3; s = "" }
		NF == 1 && $1 ~ /:$/ { s = substr($1, 1, length($1) - 1) }
		cur == nid && s != "" && !((s, $1) in v) { v[s, $1] = $2 }
		END {
			split("put get reply ack hello", ks, " ")
			split("sent:send received:recv dropped:drop", ds, " ")
			for (i = 1; i <= 3; i++) {
				split(ds[i], p, ":")
				sum = 0
				for (j = 1; j <= 5; j++) sum += v[p[1] "_stats", ks[j] ":"]
				c = v["statistics", p[2] "_count:"]
				printf "%s %s %d %s ", p[2], p[1], sum, (c == "" ? "none" : c)
			}
			printf "%d %d\n", v["sent_stats", "get:"], v["received_stats", "reply:"]
		}' "$1"
}
# Over either rail: GETs and REPLYs are summed over both NIs (and both
# peer NIs) of the pings' paths.
gets_ni=0 gets_peer=0 replies=0
for f in /tmp/nets3:$me0 /tmp/nets3:$me1 /tmp/peer3:$p0 /tmp/peer3:$p1; do
	# shellcheck disable=SC2046 # fourteen words
	set -- $(elem_sums "${f%%:*}" "${f#*:}")
	while [ $# -gt 2 ]; do
		lab_expect_eq "$3" "$4" "${f#*:}: ${1}_count against its ${2}_stats"
		shift 4
	done
	case $f in
	/tmp/nets3:*)
		gets_ni=$((gets_ni + $1))
		replies=$((replies + $2))
		;;
	*) gets_peer=$((gets_peer + $1)) ;;
	esac
done
[ "$gets_ni" -ge 6 ] && [ "$gets_peer" -ge 6 ] && [ "$replies" -ge 6 ] ||
	{ cat /tmp/nets3 /tmp/peer3; lab_fail "6 pings: $gets_ni GETs from our NIs, $gets_peer to the peer's, $replies REPLYs"; }
v=$(awk -v nid="$me0" '
	$1 == "-" && $2 == "nid:" { cur = $3; s = "" }
	NF == 1 && $1 ~ /:$/ { s = substr($1, 1, length($1) - 1) }
	cur == nid && s != "" && !((s, $1) in v) { v[s, $1] = $2 }
	END {
		split("put get reply ack", ks, " ")
		for (j = 1; j <= 4; j++)
			printf " %s %s/%s", ks[j], v["sent_stats", ks[j] ":"], v["received_stats", ks[j] ":"]
	}' /tmp/nets3)
lab_log "$me0 sent/received by type:$v"
lnetctl peer del --prim_nid "$p0" || lab_fail "peer del"
# SIGINT ends at once a ping that would wait its whole 60 s: eth1 is
# silenced, so nothing answers on tcp1. From timeout(1), in the
# foreground: a background job of a script has SIGINT ignored.
tc qdisc add dev eth1 root netem loss 100% || lab_fail "netem"
t0=$(date +%s)
timeout -s INT 2 lnetctl ping "$p1" --timeout 60 >/dev/null 2>&1 && lab_fail "interrupted ping succeeded"
t=$(($(date +%s) - t0))
tc qdisc del dev eth1 root
[ "$t" -le 5 ] || lab_fail "an interrupted ping took ${t}s to return"
lab_log "ping interrupted after 2 s returned after ${t}s"
# Unprivileged users are refused everything, as by Lustre (/dev/lnet is
# root's), and make nothing: no peer for a NID they name.
for cmd in "net show" "peer show" "stats show" "lnet unconfigure" \
	"ping 10.1.0.98@tcp --timeout 2" "discover 10.1.0.98@tcp"; do
	if su lnetuser -s /bin/sh -c "lnetctl $cmd" >/dev/null 2>&1; then
		lab_fail "a user ran lnetctl $cmd"
	fi
done
lnetctl peer show >/tmp/peers || lab_fail "peer show"
! grep -q "10.1.0.98@tcp" /tmp/peers || lab_fail "a user's lnetctl made a peer for 10.1.0.98@tcp"
kill $ready
if [ "$LAB_VM" = 1 ]; then
	# Go down first, once VM 0 is done with its pings of us.
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from VM 0"
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ksocklnd
	lab_rmmod lnet
	exit 0
fi
# The other VM listens once it is done with its pings of us, and goes
# down then: lab_server_done retries until it listens.
lab_server_done "$(lab_addr "$peer" 0)"
i=0
while lnetctl ping "$p0" --timeout 3 >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 30 ] || lab_fail "$p0 never went down"
	sleep 1
done
# A refused connection ends the ping (its send failed), with a resend or
# two, well inside the timeout.
t0=$(date +%s)
lab_must_fail lnetctl ping "$p0" --timeout 20
t=$(($(date +%s) - t0))
[ "$t" -le 8 ] || lab_fail "a ping of a node without LNet took ${t}s"
lab_log "ping of a node without LNet failed after ${t}s (timeout 20)"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
