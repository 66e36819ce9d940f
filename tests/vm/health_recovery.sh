# lab: vms=2 nics=2 timeout=300
# Recovery pings of a peer NI (health.md §7), watched through its
# ping_count in lnetctl peer show -v 3. VM 0 makes every ping to the peer's
# tcp1 NID fail at once (a drop rule on portal 0 GETs with -e
# remote_dropped) and lowers its health: the pings must come 2, 4, 4 s
# apart with lnet_max_recovery_ping_interval=4 (a doubling, then the cap),
# as the peer NI's next_ping
# shows (the monitor sends each within a second of it). Without the rule they succeed and health climbs back to
# 1000 (sensitivity 500: two pings), and stays there: a failed ping's MD is unlinked by the next pass,
# so no response tracker of it expires later (with transaction_timeout
# 6, retry_count 1: the LND's timeout stays 3 s) to cost health again. Then with lnet_recovery_limit=5 the failing peer NI ages out: it
# leaves the recovery queue and is pinged no more.
peer=$(lab_peer)
p1=$(lab_addr "$peer" 1)@tcp1
dmesg -c >/dev/null
lab_two_rails "lnet_max_recovery_ping_interval=4 lnet_health_sensitivity=500 lnet_transaction_timeout=6 lnet_retry_count=1" ""

lab_serve_if_server

# peer_field FIELD [noload]: the peer NI $p1's FIELD from peer show -v 3
# (with noload, from the last one).
peer_field() {
	[ "$2" = noload ] || lnetctl peer show -v 3 >/tmp/show3 || lab_fail "peer show -v 3"
	awk -v nid="$p1" -v f="$1:" '$1 == "-" && $2 == "nid:" { cur = $3 }
		cur == nid && ($1 == f || $1 " " $2 == f) { print $NF; exit }' /tmp/show3
}
in_recovery() {
	lnetctl debug recovery --peer >/tmp/rq || lab_fail "debug recovery --peer"
	grep -q "$p1" /tmp/rq
}
# leaves_recovery SECONDS WHY: waits until $p1 is off the recovery queue;
# $i is the seconds it took.
leaves_recovery() {
	i=0
	while in_recovery; do
		i=$((i + 1))
		[ $i -lt "$1" ] || lab_fail "$2"
		sleep 1
	done
}
# Every recovery ping to $p1 fails at once; its health drops to 500, which
# puts it on the recovery queue (each failed ping takes 500 more).
fail_pings() {
	lctl net_drop_add -s '*' -d "$p1" -p 0 -m GET -r 1 -e remote_dropped >/dev/null ||
		lab_fail "net_drop_add"
	lnetctl peer set --nid "$p1" --health 500 || lab_fail "peer set --health 500"
}

lab_wait_server "$(lab_addr "$peer" 0)"
lnetctl ping "$p1" >/dev/null || lab_fail "ping $p1"
fail_pings
in_recovery || { cat /tmp/rq; lab_fail "$p1 not in the recovery queue"; }

# Each ping sets next_ping (monotonic seconds) to its own time plus the
# interval, and the monitor sends the next one within a second of it: so
# from one ping to the next, next_ping moves by the new interval (+1).
# Three pings are watched (ping_count 1 to 3 at least): steps of 2 and
# 4 s, a doubling, then 4 s where the doubling would give 8: the cap.
last=""
marks=""
i=0
while :; do
	i=$((i + 1))
	[ $i -lt 120 ] || lab_fail "pings stopped: next_ping marks${marks:- none}"
	# Both from one snapshot.
	c=$(peer_field ping_count)
	np=$(peer_field next_ping noload)
	if [ "$c" != "$last" ]; then
		marks="$marks $c:$np"
		last=$c
	fi
	[ "${c:-0}" -ge 3 ] && break
	sleep 0.5
done
lab_log "recovery pings, ping_count:next_ping$marks"
# Consecutive counts k, k+1: the step must be interval(k+1) = 2^(k+1),
# capped at 4.
steps=$(echo $marks | tr ' ' '\n' | awk -F: '
	NR > 1 && $1 == pc + 1 {
		want = 1; for (j = 0; j < $1; j++) want *= 2
		if (want > 4) want = 4
		d = $2 - pn
		printf "%d:%d/%d ", $1, d, want
		if (d < want || d > want + 1) bad = 1
		n++
	}
	{ pc = $1; pn = $2 }
	END { if (n < 2) bad = 1; print (bad ? "BAD" : "OK") }')
lab_log "steps (ping:seconds/expected): $steps"
case "$steps" in
*OK) ;;
*) lab_fail "recovery ping intervals are not 2, 4, 4: $steps" ;;
esac
health=$(peer_field "health value")
[ "$health" -lt 500 ] || lab_fail "failed pings left health at $health"

# Pings that get through bring health back.
lctl net_drop_del -a >/dev/null || lab_fail "net_drop_del"
# No ping fails after this: the last failed one was sent before it.
t_del=$(now_ms)
i=0
until [ "$(peer_field "health value")" = 1000 ]; do
	i=$((i + 1))
	[ $i -lt 90 ] || lab_fail "health stuck at $(peer_field "health value")"
	sleep 1
done
lab_log "recovery pings brought $p1 from $health to 1000 in ${i}s"
# The monitor takes it off the queue on its next pass.
leaves_recovery 5 "$p1 still queued at health 1000"
# Longer than transaction_timeout since the last failed ping: 8 s after
# the drop rule went (the climb back above took some of them).
rest=$((8000 - ($(now_ms) - t_del)))
[ "$rest" -le 0 ] || sleep "$((rest / 1000)).$(printf %03d $((rest % 1000)))"
lnetctl stats show >/tmp/stats || lab_fail "stats show"
lab_expect_eq "$(awk '$1 == "response_timeout_count:" { print $2 }' /tmp/stats)" 0 \
	"response timeouts after failed recovery pings"
lab_expect_eq "$(peer_field "health value")" 1000 "health a transaction timeout later"

# A peer NI that takes our pings but never answers stays low (health.md
# §7.3): its REPLYs are lost on receipt, so each recovery ping is sent (a
# SEND event of status 0) and then expires. Only a REPLY's receive raises
# a peer NI's health, never the ping's SEND event. Watched until the
# first unanswered ping has expired and the next one has been sent (14 s
# at most).
lctl net_drop_add -s "$p1" -d '*' -m REPLY -r 1 >/dev/null || lab_fail "net_drop_add REPLY"
lnetctl peer set --nid "$p1" --health 500 || lab_fail "peer set --health 500"
c0=$(peer_field ping_count)
max=0
i=0
while [ $i -lt 14 ]; do
	h=$(peer_field "health value")
	c1=$(peer_field ping_count noload)
	[ "$h" -le "$max" ] || max=$h
	[ "$c1" -lt $((c0 + 2)) ] || break
	i=$((i + 1))
	sleep 1
done
[ "$c1" -gt "$c0" ] || lab_fail "no recovery ping to $p1 while its REPLYs were dropped"
[ "$max" -le 500 ] || lab_fail "pings that were never answered raised $p1 to $max"
lab_log "$p1 pinged $((c1 - c0)) time(s) without an answer: health stayed at or below 500 (now $h)"
lctl net_drop_del -a >/dev/null || lab_fail "net_drop_del"
lnetctl peer set --nid "$p1" --health 1000 || lab_fail "peer set --health 1000"
# Heard from again, for the age-out below.
lnetctl ping "$p1" >/dev/null || lab_fail "ping $p1"

# Aging out: the peer NI was last heard from by those pings; five seconds
# later its failing recovery stops.
echo 5 >/sys/module/lnet/parameters/lnet_recovery_limit || lab_fail "set recovery_limit"
fail_pings
leaves_recovery 30 "$p1 never aged out"
count=$(peer_field ping_count)
# A ping still due would come within the longest interval (4 s) and the
# monitor's second.
sleep 6
lab_expect_eq "$(peer_field ping_count)" "$count" "pings after aging out"
lab_log "$p1 aged out of recovery after ${i}s (recovery_limit 5), no pings since"
echo 0 >/sys/module/lnet/parameters/lnet_recovery_limit
lctl net_drop_del -a >/dev/null || lab_fail "net_drop_del"
lnetctl peer set --nid "$p1" --health 1000 || lab_fail "peer set --health 1000"
lab_server_done "$(lab_addr "$peer" 0)"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
