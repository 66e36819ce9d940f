# lab: vms=2 nics=2 timeout=600
# LNet send credits and ksocklnd's parameters. ksocklnd is loaded with
# peer_credits=4 (a bad value first: refused), its sysfs parameters are
# read, written and refused as they should be, and the NIs report the
# tunables they run with: tcp from the parameters, tcp1 from
# `lnetctl net add --peer-credits 2 --credits 16`. VM 0 then floods VM 1
# with 32 concurrent PUTs on each net (64 KiB on tcp, 1 MiB on tcp1):
# - on tcp, every PUT gets its ACK, the peer NI's credits went below zero
#   (messages waited) and are all back afterwards;
# - on tcp1, with all of eth1's traffic lost by netem, two PUTs are with
#   the LND and exactly thirty wait for a peer credit (available -30, 32
#   MiB queued); deleting the NI ends every one of them with an error
#   event and gives every credit back.
peer=$(lab_peer)
p0=$(lab_addr "$peer" 0)@tcp
p1=$(lab_addr "$peer" 1)@tcp1
P=/sys/module/ksocklnd/parameters
dmesg -c >/dev/null
# Discovery off: each net's flood stays on its own NID (a discovered
# Multi-Rail peer would spread a flood to either NID over both nets).
modprobe lnet lnet_peer_discovery_disabled=1 || lab_fail "lnet did not load"
lab_must_fail modprobe ksocklnd tos=256
dmesg | grep -q "Invalid value 256 for 'tos': must be -1..255" || lab_fail "no message for tos=256"
# silent_path=0: tcp1's silenced link below must hold its PUTs until they
# are ended by hand, as Lustre's sock_timeout alone would.
modprobe ksocklnd peer_credits=4 sock_timeout=20 silent_path=0 || lab_fail "ksocklnd did not load"

# Parameters: values, a runtime write, refused writes that change nothing.
for kv in peer_credits=4 credits=256 sock_timeout=20 keepalive_idle=30 keepalive_count=5 \
	keepalive_intvl=5 peer_timeout=180 peer_buffer_credits=0 nagle=0 tos=-1 silent_path=0; do
	lab_read "$P/${kv%%=*}"
	lab_expect_eq "$LAB_V" "${kv#*=}" "${kv%%=*}"
done
lab_must_fail sh -c "echo -1 > $P/sock_timeout"
lab_must_fail sh -c "echo soon > $P/keepalive_idle"
lab_must_fail sh -c "echo 2 > $P/nagle"
lab_must_fail sh -c "echo 16 > $P/peer_credits"
lab_read "$P/sock_timeout"
lab_expect_eq "$LAB_V" 20 "sock_timeout after refused writes"
lab_read "$P/peer_credits"
lab_expect_eq "$LAB_V" 4 "peer_credits after a write to a read-only parameter"
echo 25 >"$P/sock_timeout" || lab_fail "sock_timeout write"
lab_read "$P/sock_timeout"
lab_expect_eq "$LAB_V" 25 "sock_timeout"

# NI tunables.
lnetctl lnet configure || lab_fail "configure"
lnetctl net add --net tcp --if eth0 || lab_fail "net add tcp"
lab_must_fail lnetctl net add --net tcp1 --if eth1 --peer-credits 0
lnetctl net add --net tcp1 --if eth1 --peer-credits 2 --credits 16 || lab_fail "net add tcp1"
lnetctl net show -v >/tmp/net || lab_fail "net show -v"
tun() { # nid key: the NI's value of a tunable
	awk -v nid="$1" -v k="$2:" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == k && cur == nid { print $2; exit }' /tmp/net
}
me0=$(lab_addr "$LAB_VM" 0)@tcp
me1=$(lab_addr "$LAB_VM" 1)@tcp1
lab_expect_eq "$(tun "$me0" peer_credits)" 4 "tcp peer_credits"
lab_expect_eq "$(tun "$me0" credits)" 256 "tcp credits"
lab_expect_eq "$(tun "$me0" peer_timeout)" 180 "tcp peer_timeout"
lab_expect_eq "$(tun "$me0" timeout)" 25 "tcp LND timeout"
lab_expect_eq "$(tun "$me1" peer_credits)" 2 "tcp1 peer_credits"
lab_expect_eq "$(tun "$me1" credits)" 16 "tcp1 credits"
# Messages wait for credits within their deadline (sock_timeout x 3 + 1):
# room for a 32 MiB flood under TCG.
echo 50 >"$P/sock_timeout" || lab_fail "sock_timeout write"

lab_serve_if_server

lab_wait_server "$(lab_addr "$peer" 0)"
credit() { # nid key
	lnetctl peer show -v >/tmp/peer || lab_fail "peer show -v"
	awk -v nid="$1" -v k="$2:" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == k && cur == nid { print $2; exit }' /tmp/peer
}
flood() { # nid count [bytes]: runs the flood, prints its result line
	# 32 MiB takes 40-70 s under TCG, and ACKs may lag until the bulk is
	# sent: the deadline leaves room, the outcome is what is checked.
	modprobe lnet_ulp mode=flood peer="$1" repeat="$2" op_timeout=300 flood_bytes="${3:-1048576}" ||
		lab_fail "flood did not run"
	lab_rmmod lnet_ulp
	dmesg | grep 'lnet_ulp: flood' | tail -n 1
}

# tcp: messages wait for credits and all get through.
dmesg -c >/dev/null
# As many messages as on tcp1, a sixteenth of the bytes: what waits for a
# credit is a message, whatever its size (and all 32 are released at once
# when the peer's discovery ping returns).
line=$(flood "$p0" 32 65536)
lab_log "$line"
case "$line" in
*": 32 ok, 0 failed, 0 without a final event") ;;
*) lab_fail "flood on tcp: $line" ;;
esac
lab_expect_eq "$(credit "$p0" max_ni_tx_credits)" 4 "tcp max credits"
lab_expect_eq "$(credit "$p0" available_tx_credits)" 4 "tcp credits after the flood"
lab_expect_eq "$(credit "$p0" tx_q_num_of_buf)" 0 "tcp bytes queued after the flood"
min=$(credit "$p0" min_tx_credits)
lab_log "tcp: min_tx_credits $min"
[ "$min" -lt 0 ] || lab_fail "no PUT waited for a credit (min_tx_credits $min)"

# tcp1: a silent link; waiters are ended when their NI goes. The peer is
# pinged first (discovery pings a peer once even when off), or the PUTs
# would wait for that ping instead of for credits.
lnetctl discover "$p1" >/dev/null || lab_fail "discover $p1"
tc qdisc add dev eth1 root netem loss 100% || lab_fail "netem"
dmesg -c >/dev/null
modprobe lnet_ulp mode=flood peer="$p1" repeat=32 op_timeout=60 &
flooding=$!
tries=0
while [ "$(credit "$p1" available_tx_credits)" != -30 ]; do
	tries=$((tries + 1))
	[ "$tries" -lt 60 ] || lab_fail "thirty PUTs never waited (credits $(credit "$p1" available_tx_credits))"
	sleep 1
done
lab_expect_eq "$(credit "$p1" max_ni_tx_credits)" 2 "tcp1 max credits"
lab_expect_eq "$(credit "$p1" tx_q_num_of_buf)" $((32 * (1048576 + 72))) "tcp1 bytes queued"
lnetctl net del --net tcp1 --if eth1 || lab_fail "net del tcp1"
wait $flooding || lab_fail "flood on tcp1 did not run"
line=$(dmesg | grep 'lnet_ulp: flood' | tail -n 1)
lab_log "$line"
case "$line" in
*": 0 ok, 32 failed, 0 without a final event") ;;
*) lab_fail "flood on tcp1: $line" ;;
esac
lab_expect_eq "$(credit "$p1" available_tx_credits)" 2 "tcp1 credits after net del"
lab_expect_eq "$(credit "$p1" tx_q_num_of_buf)" 0 "tcp1 bytes queued after net del"
tc qdisc del dev eth1 root || lab_fail "netem del"
lab_rmmod lnet_ulp

# A message that waits for credits past its deadline is dropped when its
# turn comes (lnet_check_message_drop): -ETIMEDOUT, counted in
# drop_count, no health lost. One peer credit on tcp1, a deadline of
# 5 x 1 + 1 = 6 s, and eth1 shaped so that a 1 MiB PUT takes about 3 s
# (inside the 5 s a zero-copy request may wait for its ACK): from the
# third PUT on, each has waited past its deadline when its turn comes.
echo 5 >"$P/sock_timeout" || lab_fail "sock_timeout write"
tc qdisc add dev eth1 root tbf rate 2800kbit burst 32kbit latency 400ms || lab_fail "tbf"
lnetctl set retry_count 0 || lab_fail "set retry_count"
lnetctl net add --net tcp1 --if eth1 --peer-credits 1 || lab_fail "net add tcp1 again"
stat() { lnetctl stats show | awk -v k="$1:" '$1 == k { print $2 }'; }
drops0=$(stat drop_count)
dmesg -c >/dev/null
line=$(flood "$p1" 12)
lab_log "$line"
ok=$(echo "$line" | sed -n 's/.*: \([0-9]*\) ok, \([0-9]*\) failed, 0 without a final event$/\1/p')
failed=$(echo "$line" | sed -n 's/.*: \([0-9]*\) ok, \([0-9]*\) failed, 0 without a final event$/\2/p')
[ -n "$ok" ] && [ "$failed" -ge 1 ] || lab_fail "no PUT dropped past its deadline: $line"
dropped=$(dmesg | grep -c "exceeded message deadline") || true
[ "$dropped" -ge 1 ] || { dmesg | tail -n 20; lab_fail "no deadline drop logged"; }
[ $(($(stat drop_count) - drops0)) -ge "$dropped" ] || lab_fail "drop_count did not count the deadline drops"
lab_log "one credit, 6 s deadlines: $ok of 12 PUTs sent, $dropped dropped past their deadline"
tc qdisc del dev eth1 root || lab_fail "tbf del"
lnetctl set retry_count 2 || lab_fail "set retry_count"

lab_server_done "$(lab_addr "$peer" 0)"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
