# lab: vms=2 nics=2 timeout=300
# User Defined Selection Policies (udsp.md) steering Multi-Rail selection,
# checked by per-NI send counters. Two NIs on tcp each (eth0, eth1), health
# sensitivity 0 so that a health value set by hand stays put. VM 0 sends
# bursts of PUTs to the peer's primary NID:
#  - no rule: both local NIs carry them;
#  - udsp add --src <NI 1> --priority 0: only NI 1 sends; net show -v 4
#    shows the priority;
#  - NI 1 less healthy than NI 0: health outranks the priority, NI 0 sends;
#  - udsp del: both carry again, the priority shows unset;
#  - udsp add --dst <peer NI 1> --priority 0: only peer NI 1 receives;
#  - a net rule on the peer net shows as its net priority; del --all clears.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
p1=$(lab_addr "$peer" 1)@tcp
dmesg -c >/dev/null
lab_two_rails "lnet_health_sensitivity=0" "" tcp
lab_serve_if_server

me0=$(lab_addr 0 0)@tcp
me1=$(lab_addr 0 1)@tcp
# burst N: N PUTs to the peer, all acknowledged.
burst() { lab_expect_eq "$(lab_burst "$p0" PUT "$1")" "$1 0" "burst of $1 (ok failed)"; }
# field SHOW NID KEY: KEY ("net priority", "nid priority") under NID in
# "lnetctl SHOW show -v 4".
field() {
	lnetctl "$1" show -v 4 >/tmp/show4 || lab_fail "$1 show -v 4"
	awk -v nid="$2" -v k="$3:" '$1 == "-" && $2 == "nid:" { cur = $3 }
		cur == nid && ($1 " " $2) == k { print $3; exit }' /tmp/show4
}
# counts: the sends of our NIs $me0 and $me1 (c0, c1), of the peer NIs
# $p0 and $p1 (e0, e1) and of our own NIDs as peer NIs (o0, o1), from one
# net show -v and one peer show -v 2 (each lnetctl run costs a fork and an
# exec under TCG); 0 for an NI not listed.
counts() {
	lnetctl net show -v >/tmp/nets || lab_fail "net show -v"
	lnetctl peer show -v 2 >/tmp/peers || lab_fail "peer show -v 2"
	# shellcheck disable=SC2046 # six numbers
	set -- $(awk -v a="$me0" -v b="$me1" -v c="$p0" -v d="$p1" '
		FNR == 1 { f++ }
		$1 == "-" && $2 == "nid:" { cur = $3; seen = 0 }
		$1 == "send_count:" && !seen { n[f ":" cur] = $2; seen = 1 }
		END { print n[1 ":" a] + 0, n[1 ":" b] + 0, n[2 ":" c] + 0, n[2 ":" d] + 0, n[2 ":" a] + 0, n[2 ":" b] + 0 }' /tmp/nets /tmp/peers)
	c0=$1 c1=$2 e0=$3 e1=$4 o0=$5 o1=$6
}
# sends N: runs a burst of N and sets d0/d1 (sends per local NI), q0/q1
# (sends per peer NI) and own (sends to our own NIDs: a local NI's
# recovery pings and their REPLYs, which go through the NIs too).
sends() {
	counts
	a0=$c0 a1=$c1 b0=$e0 b1=$e1 m0=$o0 m1=$o1
	burst "$1"
	counts
	d0=$((c0 - a0)) d1=$((c1 - a1))
	q0=$((e0 - b0)) q1=$((e1 - b1))
	own=$((o0 + o1 - m0 - m1))
}

lab_wait_server "$(lab_addr "$peer" 0)"
sends 20
lab_log "no rule: $me0 sent $d0, $me1 sent $d1"
[ "$d0" -ge 3 ] && [ "$d1" -ge 3 ] || lab_fail "no rule: both NIs should send ($d0, $d1)"

lnetctl udsp add --src "$me1" --priority 0 || lab_fail "udsp add --src"
lnetctl udsp show >/tmp/udsp || lab_fail "udsp show"
lab_expect_eq "$(cat /tmp/udsp)" "udsp:
    - idx: 0
      src: $me1
      action:
          priority: 0" "udsp show"
lab_expect_eq "$(field net "$me1" "nid priority")" 0 "$me1 nid priority"
lab_expect_eq "$(field net "$me0" "nid priority")" -1 "$me0 nid priority"
sends 20
lab_log "--src $me1 --priority 0: $me0 sent $d0, $me1 sent $d1"
lab_expect_eq "$d0 $d1" "0 20" "sends with $me1 preferred"

lnetctl net set --nid "$me1" --health 900 || lab_fail "net set --health 900"
sends 10
# $me1's recovery pings (to its own NID, through the NIs and their LND)
# move the local NIs' counts too: the ten PUTs must leave from $me0, and
# $me1 send no more than the traffic to our own NIDs.
lab_log "$me1 at health 900: $me0 sent $d0, $me1 sent $d1, $own of them to our own NIDs"
[ "$d0" -ge 10 ] && [ "$d1" -le "$own" ] ||
	lab_fail "sends with the preferred NI less healthy: $me0 $d0, $me1 $d1, $own to our own NIDs"
lnetctl net set --nid "$me1" --health 1000 || lab_fail "net set --health 1000"

lnetctl udsp del --idx 0 || lab_fail "udsp del --idx 0"
lab_expect_eq "$(lnetctl udsp show)" "" "udsp show after del"
lab_expect_eq "$(field net "$me1" "nid priority")" -1 "$me1 nid priority after del"
sends 20
lab_log "rule deleted: $me0 sent $d0, $me1 sent $d1"
[ "$d0" -ge 3 ] && [ "$d1" -ge 3 ] || lab_fail "after del: both NIs should send ($d0, $d1)"

lnetctl udsp add --dst "$p1" --priority 0 || lab_fail "udsp add --dst"
lab_expect_eq "$(field peer "$p1" "nid priority")" 0 "$p1 nid priority"
sends 20
lab_log "--dst $p1 --priority 0: to $p0 $q0, to $p1 $q1"
lab_expect_eq "$q0 $q1" "0 20" "sends with peer NI $p1 preferred"

# A net rule on the destination, inserted before the NID rule.
lnetctl udsp add --dst tcp --priority 5 --idx 0 || lab_fail "udsp add --dst tcp"
lab_expect_eq "$(field peer "$p0" "net priority")" 5 "$p0 net priority"
lab_expect_eq "$(lnetctl udsp show --idx 1 | grep -c "dst: $p1")" 1 "rule moved to index 1"
# Refused: same criteria and priority; src with rte.
lab_must_fail lnetctl udsp add --dst tcp --priority 5
lab_must_fail lnetctl udsp add --src tcp --rte tcp
lnetctl udsp del --all || lab_fail "udsp del --all"
lab_expect_eq "$(field peer "$p0" "net priority")" -1 "$p0 net priority after del --all"
lab_expect_eq "$(field peer "$p1" "nid priority")" -1 "$p1 nid priority after del --all"
lab_log "udsp: NI and peer NI priorities steered the traffic; health came first"

lab_server_done "$(lab_addr "$peer" 0)"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
