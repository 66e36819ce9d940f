# lab: vms=2 nics=2 timeout=300
# Discovery and push with no `peer add` anywhere: tcp on eth0, tcp1 on
# eth1. VM 0's first PUTs to VM 1's primary NID wait while discovery pings
# VM 1 and learns its tcp1 NID; the PUTs then go over both rails. Both
# sides list the other as Multi-Rail and discovered (peer state bit 4)
# with both NIDs: VM 1 learnt VM 0's from the push that followed.
# `lnetctl discover` prints the same peer. VM 1's eth1 goes down: its
# push reports that NI down, and VM 0 stops sending to it at once (only
# recovery pings go that way) while its PUTs all succeed. VM 1 then
# deletes its tcp1 NI:
# its push tells VM 0, which stops using that NID at once and loses no
# PUT; VM 1 adds the NI back and VM 0 learns that too. VM 1 deletes it
# again with its push failing: `lnetctl discover` pings the peer, up to
# date as it seems, and learns that; VM 1's next push, once the NI is
# back, says so. Discovering a NID
# with no node behind it fails with an error while PUTs to VM 1 go on.
# VM 0 pushes VM 1 its ping buffer spoilt field by field: each is ACKed,
# refused with a reason and counted, and VM 1 pings VM 0 again instead;
# traffic goes on. Last, VM 1 turns discovery off: its push tells VM 0,
# which deletes the peer and rediscovers it as not Multi-Rail, with the NID
# it sends to only, and PUTs still flow.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
p1=$(lab_addr "$peer" 1)@tcp1
me0=$(lab_addr "$LAB_VM" 0)@tcp
me1=$(lab_addr "$LAB_VM" 1)@tcp1
dmesg -c >/dev/null
modprobe lnet networks="tcp(eth0),tcp1(eth1)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"

# Whether peer show lists NID $1 as a peer NI.
peer_lists() {
	lnetctl peer show >/tmp/peers || lab_fail "peer show"
	grep -q "nid: $1\$" /tmp/peers
}

# Waits up to 30 s until peer show lists NID $1 ($2 = yes) or not ($2 = no).
wait_listed() {
	tries=0
	while :; do
		if peer_lists "$1"; then now=yes; else now=no; fi
		[ "$now" = "$2" ] && return
		tries=$((tries + 1))
		[ "$tries" -lt 30 ] || { cat /tmp/peers; lab_fail "peer NI $1 listed: $now, wanted $2"; }
		sleep 1
	done
}

# rails N WHAT: N PUTs of 4 KiB to VM 1, one at a time, all ACKed (each
# given 20 s, as lnet_ulp's client checks give theirs); sets d0 and d1 to
# the sends they (and anything else meanwhile) added on our NIs $me0 and
# $me1. Only the first step below runs the client's checks of 1 MiB PUTs
# and GETs and their data: after it, what each step asserts is where the
# PUTs went and that none was lost, which small PUTs tell as well.
rails() {
	ni_sends
	s0=$n0 s1=$n1
	lab_expect_eq "$(lab_burst "$p0" PUT "$1" 20)" "$1 0" "$2: PUTs (ok failed)"
	ni_sends
	d0=$((n0 - s0)) d1=$((n1 - s1))
}
# Sets n0 and n1 to the sends of our NIs $me0 and $me1 (one net show -v).
ni_sends() {
	lnetctl net show -v >/tmp/nets || lab_fail "net show -v"
	# shellcheck disable=SC2046 # two numbers
	set -- $(awk -v a="$me0" -v b="$me1" '$1 == "-" && $2 == "nid:" { cur = $3; seen = 0 }
		$1 == "send_count:" && !seen { n[cur] = $2; seen = 1 }
		END { print n[a] + 0, n[b] + 0 }' /tmp/nets)
	n0=$1 n1=$2
}

# Multi-Rail of the peer whose primary NID is $1 (nothing if none).
peer_mr() {
	lnetctl peer show >/tmp/peers || lab_fail "peer show"
	awk -v nid="$1" '$2 == "primary" && $3 == "nid:" { cur = $4 } $1 == "Multi-Rail:" && cur == nid { print $2; exit }' /tmp/peers
}

if [ "$LAB_VM" = 1 ]; then
	client=$(lab_addr "$peer" 0)
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7000 -e /bin/true &
	ready=$!
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the client"
	lab_check_learnt "$p0" "$p1"
	ip link set eth1 down
	lab_tell "$client" 7008
	nc -l -p 7009 </dev/null >/dev/null || lab_fail "no word from the client"
	ip link set eth1 up
	lnetctl net del --net tcp1 || lab_fail "net del tcp1"
	lab_tell "$client" 7002
	nc -l -p 7003 </dev/null >/dev/null || lab_fail "no word from the client"
	lnetctl net add --net tcp1 --if eth1 || lab_fail "net add tcp1"
	lab_tell "$client" 7004
	# The push of the next delete fails at once (a drop rule with a
	# status); that of the add after it goes through.
	nc -l -p 7010 </dev/null >/dev/null || lab_fail "no word from the client"
	lctl net_drop_add -s '*' -d '*' -p 0 -m PUT -r 1 -e local_error >/dev/null ||
		lab_fail "net_drop_add for pushes"
	lnetctl net del --net tcp1 || lab_fail "net del tcp1 again"
	lab_tell "$client" 7011
	nc -l -p 7012 </dev/null >/dev/null || lab_fail "no word from the client"
	lctl net_drop_del -a >/dev/null || lab_fail "net_drop_del"
	lnetctl net add --net tcp1 --if eth1 || lab_fail "net add tcp1 again"
	lab_tell "$client" 7013
	dmesg -c >/dev/null
	nc -l -p 7005 </dev/null >/dev/null || lab_fail "no word from the client"
	# The client's spoilt pushes: seven refused as not a ping buffer, one
	# as not Multi-Rail; the whole one merged.
	# Each from whichever of the client's NIDs its selection took.
	bad=$(dmesg | grep -cE "Bad push from ($p0|$p1)" || true)
	nmr=$(dmesg | grep -cE "Push from non-Multi-Rail peer ($p0|$p1) dropped" || true)
	dmesg | grep -i push | sed 's/^/    /'
	lab_expect_eq "$bad $nmr" "7 1" "bad and non-Multi-Rail pushes"
	lnetctl set discovery 0 || lab_fail "set discovery 0"
	lab_tell "$client" 7006
	nc -l -p 7007 </dev/null >/dev/null || lab_fail "no word from the client"
	kill $ready
	lab_rmmod lnet_ulp
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ksocklnd
	lab_rmmod lnet
	exit 0
fi

server=$(lab_addr "$peer" 0)
lab_wait_server "$server"
peer_lists "$p1" && lab_fail "$p1 known before any traffic"
lab_client_rails "$p0" 40
lab_log "sends over $me0: $d0, over $me1: $d1"
[ "$d0" -ge 10 ] && [ "$d1" -ge 10 ] || lab_fail "traffic did not use both rails ($d0, $d1)"
lab_check_learnt "$p0" "$p1"
lnetctl discover "$p0" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $p0"; }
grep -q "^discover:" /tmp/disc && grep -q "primary nid: $p0" /tmp/disc &&
	grep -q "nid: $p1" /tmp/disc || { cat /tmp/disc; lab_fail "discover output"; }
lab_tell "$server" 7001

# VM 1's eth1 goes down: its push says so (the status change costs the
# peer NI one remote failure, as in Lustre), and selection leaves it.
nc -l -p 7008 </dev/null >/dev/null || lab_fail "no word from the server"
lab_wait_health "$p1" lt 1000 20 >/dev/null
rails 30 "$p1 reported down"
lab_log "$p1 reported down: sends over $me0: $d0, over $me1: $d1"
[ "$d0" -ge 20 ] && [ "$d1" -le 4 ] || lab_fail "traffic still chose $p1 ($d0, $d1)"
lab_tell "$server" 7009

# VM 1 deletes its tcp1 NI: its push takes p1 out of our peer.
nc -l -p 7002 </dev/null >/dev/null || lab_fail "no word from the server"
wait_listed "$p1" no
rails 20 "after the delete"
lab_log "after the delete: sends over $me0: $d0, over $me1: $d1"
[ "$d1" -eq 0 ] || lab_fail "$d1 sends still went over tcp1"
lab_tell "$server" 7003

# It adds the NI back: learnt by push, and used.
nc -l -p 7004 </dev/null >/dev/null || lab_fail "no word from the server"
wait_listed "$p1" yes
rails 40 "after the add"
lab_log "after the add: sends over $me0: $d0, over $me1: $d1"
[ "$d0" -ge 10 ] && [ "$d1" -ge 10 ] || lab_fail "traffic did not use both rails again ($d0, $d1)"

# It deletes the NI again, its push lost: we still list p1 until
# `lnetctl discover` pings it, as Lustre's does however up to date the
# peer seems.
lab_tell "$server" 7010
nc -l -p 7011 </dev/null >/dev/null || lab_fail "no word from the server"
peer_lists "$p1" || lab_fail "$p1 gone though the push was lost"
lnetctl discover "$p0" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $p0 after the lost push"; }
grep -q "nid: $p1\$" /tmp/disc && { cat /tmp/disc; lab_fail "discover $p0 still lists $p1"; }
peer_lists "$p1" && lab_fail "$p1 still listed after discover"
lab_tell "$server" 7012
nc -l -p 7013 </dev/null >/dev/null || lab_fail "no word from the server"
wait_listed "$p1" yes

# Nobody at this NID: discovery fails, and traffic to VM 1 goes on meanwhile.
ghost=$(lab_addr 9 0)@tcp
start=$(date +%s)
lnetctl discover "$ghost" >/tmp/ghost 2>&1 &
disc=$!
rails 20 "during a failing discovery"
[ "$d0" -ge 5 ] || lab_fail "traffic stalled during a failing discovery ($d0, $d1)"
if wait $disc; then
	cat /tmp/ghost
	lab_fail "discover of $ghost succeeded"
fi
grep -q "discover:" /tmp/ghost && grep -q "errno: -" /tmp/ghost || { cat /tmp/ghost; lab_fail "discover error output"; }
lab_log "discover $ghost failed after $(($(date +%s) - start)) s: $(grep descr /tmp/ghost)"

# Spoilt pushes, then traffic as before.
modprobe lnet_ulp mode=pushes peer="$p0" || lab_fail "pushes"
lab_rmmod lnet_ulp
rails 20 "after the pushes"
[ "$d0" -ge 5 ] && [ "$d1" -ge 5 ] || lab_fail "traffic after the pushes ($d0, $d1)"
lab_tell "$server" 7005

# VM 1 turns discovery off: its push marks it for deletion here, and
# traffic rediscovers it as not Multi-Rail.
nc -l -p 7006 </dev/null >/dev/null || lab_fail "no word from the server"
tries=0
until [ "$(peer_mr "$p0")" = false ] || [ "$(peer_mr "$p0")" = False ]; do
	# Traffic recreates the peer once the push deleted it.
	rails 4 "while discovery goes off"
	tries=$((tries + 1))
	[ "$tries" -lt 10 ] || { cat /tmp/peers; lab_fail "the peer stayed Multi-Rail"; }
done
rails 20 "discovery off at the peer"
lab_log "discovery off at the peer: sends over $me0: $d0, over $me1: $d1"
[ "$d0" -ge 10 ] && [ "$d1" -eq 0 ] || lab_fail "a non-Multi-Rail peer's traffic ($d0, $d1)"
peer_lists "$p1" && { cat /tmp/peers; lab_fail "$p1 still listed for a peer without discovery"; }
lab_tell "$server" 7007
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
