# lab: vms=2 nics=2 timeout=420
# LNet Health driven by fault injection (lctl net_drop_* / net_delay_*).
# Two Multi-Rail nodes, tcp on eth0 and tcp1 on eth1, retry_count 2,
# sensitivity 100. VM 0 sends PUTs on portal 20 while a drop rule fails
# every send with one health status; for each of the ten statuses the
# test checks the resends, the resend counters, the status counter and
# how much local and peer NI health was lost, against health.md §3-§4.
# Delay rules hold our recovery pings (portal 0) meanwhile, so health stays
# where the failures put it; deleting the rules releases them and the
# recovery pings bring every NI back to 1000. Then: a single-NI node loses
# local health but never resends a local failure; a GET that fails on one
# rail succeeds through exactly one resend on the other; a silent receive
# drop rule makes a PUT's ACK time out, which costs the peer NI health that
# unanswered recovery pings do not give back.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
p1=$(lab_addr "$peer" 1)@tcp1
me0=$(lab_addr "$LAB_VM" 0)@tcp
me1=$(lab_addr "$LAB_VM" 1)@tcp1
dmesg -c >/dev/null
lab_two_rails "lnet_retry_count=2 lnet_health_sensitivity=100" ""

lab_serve_if_server

stat() {
	lnetctl stats show >/tmp/stats || lab_fail "stats show"
	awk -v k="$1:" '$1 == k { print $2; exit }' /tmp/stats
}
health_of() { # show-command nid
	lnetctl "$1" show -v 3 >/tmp/show3 || lab_fail "$1 show -v 3"
	awk -v nid="$2" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "health" && $2 == "value:" && cur == nid { print $3; exit }' /tmp/show3
}
# sum_in FILE NID NID: the sum of the health values of the two NIDs in
# FILE (net or peer show -v 3); "none" unless both are there.
sum_in() {
	awk -v a="$2" -v b="$3" '$1 == "-" && $2 == "nid:" { cur = $3 }
		$1 == "health" && $2 == "value:" && (cur == a || cur == b) && !seen[cur]++ { s += $3; n++ }
		END { print (n == 2 ? s : "none") }' "$1"
}
# One lnetctl run each (a fork and an exec cost under TCG).
local_sum() {
	lnetctl net show -v 3 >/tmp/show3 || lab_fail "net show -v 3"
	sum_in /tmp/show3 "$me0" "$me1"
}
peer_sum() {
	lnetctl peer show -v 3 >/tmp/show3 || lab_fail "peer show -v 3"
	sum_in /tmp/show3 "$p0" "$p1"
}
# readings STATUS: from the last snap (/tmp/stats, /tmp/net3 and
# /tmp/peer3), in one awk (each fork and exec costs under TCG): resends,
# failed resends, STATUS's counter ("?" for one not listed), the health
# sums of our two NIs and of the peer's two (each "none" unless both are
# listed, as sum_in), then
# net:NID or peer:NID for each of the four below 1000.
readings() {
	awk -v k="$1_count:" -v a="$me0" -v b="$me1" -v c="$p0" -v d="$p1" '
		function sum(x, y) { return ((x in h) && (y in h)) ? h[x] + h[y] : "none" }
		function v(x) { return x == "" ? "?" : x }
		FNR == 1 { f++; cur = "" }
		f == 1 && $1 == "resend_count:" { r = $2 }
		f == 1 && $1 == "failed_resends:" { fr = $2 }
		f == 1 && $1 == k { cnt = $2 }
		f > 1 && $1 == "-" && $2 == "nid:" { cur = $3 }
		f > 1 && $1 == "health" && $2 == "value:" && !((f ":" cur) in h) { h[f ":" cur] = $3 }
		END {
			printf "%s %s %s %s %s", v(r), v(fr), v(cnt), sum("2:" a, "2:" b), sum("3:" c, "3:" d)
			if (h["2:" a] != 1000) printf " net:%s", a
			if (h["2:" b] != 1000) printf " net:%s", b
			if (h["3:" c] != 1000) printf " peer:%s", c
			if (h["3:" d] != 1000) printf " peer:%s", d
			print ""
		}' /tmp/stats /tmp/net3 /tmp/peer3
}
# snap STATUS: one reading of the counters the loop below checks and of
# the health sums (three lnetctl runs, not ten: each costs a fork and an
# exec under TCG): sets resends, failed, count, lsum and psum, and keeps
# the readings in /tmp/stats, /tmp/net3 and /tmp/peer3.
snap() {
	lnetctl stats show >/tmp/stats || lab_fail "stats show"
	lnetctl net show -v 3 >/tmp/net3 || lab_fail "net show -v 3"
	lnetctl peer show -v 3 >/tmp/peer3 || lab_fail "peer show -v 3"
	# shellcheck disable=SC2046 # five words
	set -- $(readings "$1")
	resends=$1 failed=$2 count=$3 lsum=$4 psum=$5
}
# before STATUS: sets r0, f0 and c0 (resends, failed resends and STATUS's
# counter) from the last snap, and sets back to 1000 the NIs it found
# below (the others were at 1000 then, and nothing lowers health between
# cases: the recovery pings are held).
before() {
	# shellcheck disable=SC2046 # words
	set -- $(readings "$1")
	r0=$1 f0=$2 c0=$3
	shift 5
	for n; do
		lnetctl "${n%%:*}" set --nid "${n#*:}" --health 1000 || lab_fail "${n%%:*} set ${n#*:}"
	done
}
all_healthy() {
	for n in "$me0" "$me1"; do lnetctl net set --nid "$n" --health 1000 || lab_fail "net set $n"; done
	for n in "$p0" "$p1"; do lnetctl peer set --nid "$n" --health 1000 || lab_fail "peer set $n"; done
}
# burst OP COUNT: COUNT PUTs (or GETs) to the server; prints "ok failed".
burst() { lab_burst "$p0" "$1" "$2"; }

lab_wait_server "$(lab_addr "$peer" 0)"
lab_expect_eq "$(burst PUT 4)" "4 0" "warm-up PUTs (ok failed)"

# Recovery pings (GETs on portal 0) wait in a delay rule until it goes;
# pushes (PUTs on portal 0) do not, or discovery would wait with them.
# Only what we send waits: a message held on receipt holds the connection
# it came on (its LND waits for it to be received), and what the peer sent
# after it, such as the ACK of a push, would wait an hour with it.
for n in "$me0" "$me1"; do
	lctl net_delay_add -s "$n" -d '*' -p 0 -m GET -r 1 -l 3600 || lab_fail "net_delay_add -s $n"
	lctl net_delay_list | grep -q -- "$n-><?> (1/1 | 0, latency 3600) ptl 0x1" ||
		{ lctl net_delay_list; lab_fail "net_delay_list lacks the rule for $n"; }
done

# Each case starts from the readings of the last snap (the one before the
# first, or the one that ended the case before), its lowered NIs set back
# to 1000: the losses are counted from 2000 on each side, and the counters
# from that snap (setting health sends nothing and counts nothing).
snap local_interrupt
# status resends failed_resends counter local_loss peer_loss
expectations="
local_interrupt 2 1 3 300 0
local_dropped 2 1 3 300 0
local_aborted 2 1 3 300 0
local_no_route 2 1 3 300 0
local_timeout 2 1 3 300 0
local_error 0 0 1 100 0
remote_dropped 2 1 3 0 300
remote_error 0 0 1 0 100
remote_timeout 0 0 1 0 100
network_timeout 0 0 1 100 100
"
# One lnet_ulp for the ten cases (each load costs about a second under
# TCG): loaded as a server (its buffers here take nothing), it sends each
# case's PUT, 4 KiB given 10 s as lab_burst's, when flood_to is written.
modprobe lnet_ulp mode=server repeat=1 flood_bytes=4096 op_timeout=10 || lab_fail "lnet_ulp did not load"
echo "$expectations" | while read -r status eresends efailed ecount lloss ploss; do
	[ -n "$status" ] || continue
	before "$status"
	l0=2000 q0=2000
	add=$(lctl net_drop_add -s '*' -d '*' -p 20 -m PUT -r 1 -e "$status") || lab_fail "net_drop_add -e $status"
	case "$add" in
	*"Added drop rule <?>-><?> (1/1)"*) ;;
	*) lab_fail "net_drop_add said: $add" ;;
	esac
	dmesg -c >/dev/null
	echo "$p0" >/sys/module/lnet_ulp/parameters/flood_to || lab_fail "$status: flood_to"
	got=$(dmesg | sed -n 's/.*lnet_ulp: flood of 1 PUTs .*: \([0-9]*\) ok, \([0-9]*\) failed, 0 without a final event$/\1 \2/p')
	list=$(lctl net_drop_list)
	del=$(lctl net_drop_del -a) || lab_fail "net_drop_del"
	lab_expect_eq "$del" "Removed 1 drop rules" "net_drop_del"
	lab_expect_eq "$got" "0 1" "$status: PUT (ok failed)"
	snap "$status"
	lab_expect_eq $((resends - r0)) "$eresends" "$status: resends"
	lab_expect_eq $((failed - f0)) "$efailed" "$status: failed_resends"
	lab_expect_eq $((count - c0)) "$ecount" "$status: ${status}_count"
	lab_expect_eq $((l0 - lsum)) "$lloss" "$status: local NI health lost"
	lab_expect_eq $((q0 - psum)) "$ploss" "$status: peer NI health lost"
	sent=$((eresends + 1))
	case "$list" in
	*"(1/1 | 0) ptl 0x100000, msg 2, $sent/$sent, PUT $sent, ACK 0, GET 0, REP 0"*) ;;
	*) lab_fail "$status: net_drop_list counters: $list" ;;
	esac
	lab_log "$status: resent $eresends time(s), local health -$lloss, peer health -$ploss: as health.md §3"
done || exit 1
lab_rmmod lnet_ulp

# A single-NI node: a local failure costs health but is never resent; a
# remote one is still resent (the peer has two NIs).
lnetctl net del --net tcp1 || lab_fail "net del tcp1"
lnetctl net set --nid "$me0" --health 1000 || lab_fail "net set"
r0=$(stat resend_count)
lctl net_drop_add -s '*' -d '*' -p 20 -m PUT -r 1 -e local_dropped >/dev/null || lab_fail "net_drop_add"
lab_expect_eq "$(burst PUT 1)" "0 1" "single NI, local_dropped: PUT (ok failed)"
lctl net_drop_del -a >/dev/null
lab_expect_eq $(($(stat resend_count) - r0)) 0 "single NI, local_dropped: resends"
h=$(health_of net "$me0")
[ "$h" -lt 1000 ] || lab_fail "single NI: local health not lowered ($h)"
lab_log "single NI: local_dropped not resent, health of $me0 now $h"
lnetctl net add --net tcp1 --if eth1 || lab_fail "net add tcp1"
all_healthy

# A GET that fails on rail 0 and not on rail 1: exactly one resend. The
# peer NI on tcp1 is a little less healthy, so the first try is on tcp.
lnetctl peer set --nid "$p1" --health 950 || lab_fail "peer set 950"
r0=$(stat resend_count)
s0=$(stat successful_resends)
lctl net_drop_add -s '*@tcp' -d '*@tcp' -p 20 -m GET -r 1 -e remote_dropped >/dev/null || lab_fail "net_drop_add GET"
lab_expect_eq "$(burst GET 1)" "1 0" "GET failing on rail 0 (ok failed)"
lctl net_drop_del -a >/dev/null
lab_expect_eq $(($(stat resend_count) - r0)) 1 "GET: resends"
lab_expect_eq $(($(stat successful_resends) - s0)) 1 "GET: successful_resends"
lab_log "GET failing on tcp succeeded through one resend over tcp1"

# Status words (health.md §1, §9): a value set by hand marks an NI down
# at 0 and up at 1000, as lnet_ni_set_healthv does; a failure that brings
# health to 0 marks it down, in the ping buffer and in net show, until
# recovery brings it back to 1000.
ni_status() {
	lnetctl net show >/tmp/show || lab_fail "net show"
	awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "status:" && cur == nid { print $2; exit }' /tmp/show
}
lnetctl net set --nid "$me0" --health 0 || lab_fail "net set 0"
lab_expect_eq "$(ni_status "$me0")" down "$me0 status at manual health 0"
lnetctl net set --nid "$me0" --health 1000 || lab_fail "net set 1000"
lab_expect_eq "$(ni_status "$me0")" up "$me0 status at manual health 1000"
lnetctl net set --nid "$me0" --health 0 || lab_fail "net set 0"
lnetctl net set --nid "$me1" --health 100 || lab_fail "net set 100"
# Each flip of a status word posts a new ping buffer, pushed to the peer
# within a second (over tcp, its primary net), and the push's success
# raises $me0's health: let it go, then set the values again (no flip).
sleep 3
lnetctl net set --nid "$me0" --health 0 || lab_fail "net set 0 again"
lnetctl net set --nid "$me1" --health 100 || lab_fail "net set 100 again"
dmesg -c >/dev/null
lctl net_drop_add -s '*' -d '*' -p 20 -m PUT -r 1 -e local_error >/dev/null || lab_fail "net_drop_add local_error"
lab_expect_eq "$(burst PUT 1)" "0 1" "local_error on $me1: PUT (ok failed)"
lctl net_drop_del -a >/dev/null
# 0, or 100 once the push of that change has gone out over $me1 (the
# ping-buffer message below says it reached 0).
h=$(health_of net "$me1")
[ "$h" -le 100 ] || lab_fail "$me1 health after local_error: $h"
lab_expect_eq "$(ni_status "$me1")" down "$me1 status at health 0"
lab_expect_eq "$(ni_status "$me0")" down "$me0 status"
dmesg | grep -q "$me1: health 0, status down in the ping buffer" ||
	{ dmesg | tail -n 20; lab_fail "no ping-buffer status change for $me1"; }
lab_log "$me1 brought to health 0 by local_error: status down"

# Recovery: the held pings go out, succeed, and every NI climbs back
# (the pings that net del released meanwhile were held again).
lnetctl debug recovery --local >/tmp/rq || lab_fail "debug recovery --local"
lctl net_delay_list >/tmp/dlist
grep -q 'latency 3600' /tmp/dlist || { cat /tmp/dlist; lab_fail "delay rule gone"; }
lctl net_delay_del -a >/tmp/del || lab_fail "net_delay_del"
lab_expect_eq "$(cat /tmp/del)" "Removed 2 delay rules" "net_delay_del"
i=0
until [ "$(local_sum)" = 2000 ] && [ "$(peer_sum)" = 2000 ]; do
	i=$((i + 1))
	[ $i -lt 90 ] || { cat /tmp/show3; lab_fail "health did not recover"; }
	sleep 1
done
lab_log "recovery pings brought every NI back to 1000 in ${i}s"
lab_expect_eq "$(ni_status "$me1")" up "$me1 status back at 1000"
lab_expect_eq "$(ni_status "$me0")" up "$me0 status back at 1000"
dmesg | grep -q "$me1: health 1000, status up in the ping buffer" ||
	{ dmesg | tail -n 20; lab_fail "no ping-buffer status change back for $me1"; }

# A silent loss on receipt: the ACKs of the PUTs never arrive, so each PUT
# ends with its response timeout and response_timeout_count counts it.
# Each timeout costs the peer NI it went to 100 (health.md §5), and the
# REPLYs of the recovery pings that follow are dropped too: pings that
# were sent but never answered must not give that health back.
t0=$(stat response_timeout_count)
lctl net_drop_add -s '*' -d '*' -m ACK -r 1 >/dev/null || lab_fail "net_drop_add ACK"
lctl net_drop_add -s '*' -d '*' -m REPLY -r 1 >/dev/null || lab_fail "net_drop_add REPLY"
dmesg -c >/dev/null
modprobe lnet_ulp mode=burst peer="$p0" repeat=2 op_timeout=2 || lab_fail "burst"
lab_rmmod lnet_ulp
lctl net_drop_list | grep -q ', 2/2, PUT 0, ACK 2' || { lctl net_drop_list; lab_fail "ACK drops not counted"; }
dmesg | grep -q 'burst of 2 PUTs: 0 ok, 2 failed' || { dmesg | grep lnet_ulp; lab_fail "PUTs without ACK did not fail"; }
lab_expect_eq $(($(stat response_timeout_count) - t0)) 2 "response_timeout_count"
max=0
i=0
while [ $i -lt 6 ]; do
	h=$(peer_sum)
	[ "$h" -le "$max" ] || max=$h
	i=$((i + 1))
	sleep 1
done
[ "$max" -le 1800 ] || { cat /tmp/show3; lab_fail "peer NI health $max of 2000 after 2 response timeouts and unanswered recovery pings"; }
lab_expect_eq "$(local_sum)" 2000 "local NI health after response timeouts"
lctl net_drop_del -a >/dev/null
lab_log "ACKs dropped on receipt: 2 PUTs timed out; peer NI health at most $max of 2000 while recovery pings went unanswered"

# Bad rules are refused and change nothing.
lab_must_fail lctl net_drop_add -s '*' -d '*' -r 1 -i 1
lab_must_fail lctl net_drop_add -s '*' -d '*' -r 0
lab_must_fail lctl net_drop_add -s 'nonsense' -d '*' -r 1
lab_must_fail lctl net_drop_add -s '*' -d '*' -r 1 -e no_such_status
lab_must_fail lctl net_delay_add -s '*' -d '*' -r 1 -l 0
lab_expect_eq "$(lctl net_drop_list | tail -n 1)" "found total 0" "rules after refusals"

lab_server_done "$(lab_addr "$peer" 0)"
lnetctl peer del --prim_nid "$p0" || lab_fail "peer del"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
