# lab: vms=2 nics=2 timeout=600
# ko2iblnd under load, two VMs over rxe0/rxe1 with o2ib and o2ib1,
# ko2iblnd loaded with peer_credits=16 and conns_per_peer=2 on VM 0 and
# peer_credits=4 (raised to 8, as Lustre does) on VM 1, which requires
# privileged source ports:
# - VM 0's two connection requests ask a queue depth of 16, VM 1 rejects
#   them (MSG_QUEUE_SIZE, with its own depth), and VM 0 reconnects both
#   with 8;
# - 32 concurrent 64 KiB PUTs (RDMA, as 1 MiB ones: PUT_REQ, PUT_ACK,
#   RDMA WRITE, PUT_DONE, at a sixteenth of the time rxe under TCG takes;
#   all posted at once, they still wait for LNet's peer credits and the
#   connections' own) to VM 1's o2ib NID: every one gets its ACK,
#   every LNet peer credit is back afterwards, and both connections
#   carried them in turn (counted as they close);
# - VM 1 added as a Multi-Rail peer (o2ib + o2ib1): lnet_ulp's client
#   checks and 24 more PUTs use both rails;
# - a flood to o2ib1 while `rmmod ko2iblnd` is refused (its NIs hold it)
#   and `lnetctl net del` takes that NI away: every PUT gets exactly one
#   final event (OK or failed), and the node unloads with no leak and no
#   splat.
for nic in 0 1; do
	rdma link add "rxe$nic" type rxe netdev "eth$nic" || lab_fail "rxe$nic"
done
peer=$(lab_peer)
me0=$(lab_addr "$LAB_VM" 0)@o2ib
me1=$(lab_addr "$LAB_VM" 1)@o2ib1
p0=$(lab_addr "$peer" 0)@o2ib
p1=$(lab_addr "$peer" 1)@o2ib1
dmesg -c >/dev/null
modprobe lnet || lab_fail "lnet did not load"
# VM 1 also requires connections from privileged ports, which VM 0's
# use_privileged_port (on by default, as in Lustre) gives.
args="peer_credits=4 require_privileged_port=1"
[ "$LAB_VM" = 0 ] && args="peer_credits=16 conns_per_peer=2"
# shellcheck disable=SC2086 # a list of parameters
modprobe ko2iblnd $args || lab_fail "ko2iblnd did not load"
lnetctl lnet configure || lab_fail "configure"
lnetctl net add --net o2ib --if eth0 || lab_fail "net add o2ib"
lnetctl net add --net o2ib1 --if eth1 || lab_fail "net add o2ib1"

if [ "$LAB_VM" = 1 ]; then
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p 7000 -e /bin/true &
	up=$!
	nc -l -p 7001 </dev/null >/dev/null || lab_fail "no word from the client"
	kill $up
	lab_rxe_counters
	lab_rmmod lnet_ulp
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ko2iblnd
	lab_rmmod lnet
	for nic in 0 1; do rdma link delete "rxe$nic"; done
	exit 0
fi

lab_wait_server "$(lab_addr "$peer" 0)"
credit() { # nid key
	lnetctl peer show -v >/tmp/peer || lab_fail "peer show -v"
	awk -v nid="$1" -v k="$2:" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == k && cur == nid { print $2; exit }' /tmp/peer
}

# First a one-way stream: 96 PUTs of 1 KiB without ACKs, all posted at
# once, go as IMMEDIATEs, each taking a credit of its connection (8 each).
# VM 1 answers nothing, so only its NOOPs, sent as its owed credits reach
# the high-water mark, give them back; without those the stream stands
# still at 16 until the LND timeout closes both connections.
t0=$(date +%s)
modprobe lnet_ulp mode=flood peer="$p0" repeat=96 flood_bytes=1024 noack=1 op_timeout=120 ||
	lab_fail "one-way flood did not run"
lab_rmmod lnet_ulp
line=$(dmesg | grep 'lnet_ulp: flood' | tail -n 1)
lab_log "one-way: $line ($(($(date +%s) - t0))s)"
case "$line" in
*": 96 ok, 0 failed, 0 without a final event") ;;
*) lab_fail "one-way flood on o2ib: $line" ;;
esac
us=$(echo "$line" | sed -n 's/.* in \([0-9]*\) us:.*/\1/p')
# It also discovers the peer and connects (a reject and a reconnect
# each): well within 30 s, where a stall lasts the LND timeout (49 s).
[ "${us:-99999999}" -lt 30000000 ] || lab_fail "one-way flood took ${us} us: credits came back only with the LND timeout"
! dmesg | grep -q "timed out tx for $p0" || lab_fail "a connection to $p0 timed out under the one-way flood"

t0=$(date +%s)
modprobe lnet_ulp mode=flood peer="$p0" repeat=32 flood_bytes=65536 op_timeout=300 ||
	lab_fail "flood did not run"
lab_rmmod lnet_ulp
lab_rxe_counters
line=$(dmesg | grep 'lnet_ulp: flood' | tail -n 1)
lab_log "$line ($(($(date +%s) - t0))s)"
case "$line" in
*": 32 ok, 0 failed, 0 without a final event") ;;
*) lab_fail "flood on o2ib: $line" ;;
esac
dmesg | grep -q "rejected the connection.*MsgQueueSize.*Reconnect { queue_depth: 8" ||
	{ dmesg | grep ko2iblnd; lab_fail "no reconnect with the peer's queue depth"; }
max=$(credit "$p0" max_ni_tx_credits)
lab_expect_eq "$(credit "$p0" available_tx_credits)" "$max" "o2ib credits after the flood"
lab_expect_eq "$(credit "$p0" tx_q_num_of_buf)" 0 "o2ib bytes queued after the flood"
dmesg | grep -q "connected to $p0 (active, .*, 2 of the peer's)" ||
	{ dmesg | grep 'connected to'; lab_fail "not two connections to $p0"; }

# The flood's discovery of the peer learnt its o2ib1 NID.
lab_client_rails "$p0" 24
lab_log "Multi-Rail over o2ib: sends on $me0: $d0, on $me1: $d1"
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "not both rails used ($d0, $d1)"

# With ib_mtu left at 0, connections keep the path's MTU: rxe's 1024
# under a 1500-byte Ethernet MTU (o2iblnd_basic sets 512).
dmesg | grep 'ko2iblnd: .* connected to ' >/tmp/conns
grep -qE 'path MTU 1024[,)]' /tmp/conns && ! grep -vE 'path MTU 1024[,)]' /tmp/conns ||
	lab_fail "connections not all at the path's MTU 1024"
dmesg | grep "closing connection to $p0 " >/tmp/closed

dmesg -c >/dev/null
# A PUT whose bytes had all gone as o2ib1 went waits for an ACK the peer
# sends to our deleted NI, which never comes (a response goes to the NID
# its request came from, as in Lustre): its response timeout ends it.
# 24 s, over three times the flood's length under TCG and twice the time
# to the `net del` below (11 s on a loaded VM), not 120.
modprobe lnet_ulp mode=flood peer="$p1" repeat=16 flood_bytes=262144 op_timeout=24 &
flooding=$!
sleep 3
# Its running NIs hold ko2iblnd, as Lustre's nets hold theirs: rmmod under
# the flood is refused and the flood goes on.
lab_must_fail rmmod ko2iblnd
lnetctl net del --net o2ib1 --if eth1 || lab_fail "net del o2ib1"
wait $flooding || lab_fail "flood on o2ib1 did not run"
line=$(dmesg | grep 'lnet_ulp: flood' | tail -n 1)
lab_log "net del under a flood: $line"
case "$line" in
*", 0 without a final event") ;;
*) lab_fail "flood on o2ib1: $line" ;;
esac
lab_rmmod lnet_ulp
lab_expect_eq "$(cat /sys/kernel/debug/ko2iblnd/protocol_errors)" 0 "protocol errors"

lab_tell "$(lab_addr "$peer" 0)" 7001
lnetctl lnet unconfigure || lab_fail "unconfigure"
# The two connections to p0 took sends in turn: the 32 PUTs' PUT_REQs and
# PUT_DONEs alone make 64 messages, so each carried at least 20 (one only
# given credit-returning NOOPs would carry a few). Refused requests close
# with none.
dmesg | grep "closing connection to $p0 " >>/tmp/closed
sed 's/^/  /' /tmp/closed
sed -n 's/.* (\([0-9]*\) sent, .*/\1/p' /tmp/closed | grep -v '^0$' >/tmp/sent
[ "$(wc -l </tmp/sent)" = 2 ] ||
	lab_fail "connections to $p0 that carried sends: $(wc -l </tmp/sent), not 2: $(sed 's/.*closing connection/closing connection/' /tmp/closed | tr '\n' ';')"
while read -r n; do
	[ "$n" -ge 20 ] || lab_fail "a connection to $p0 carried only $n sends"
done </tmp/sent
lab_rmmod ko2iblnd
lab_rmmod lnet
for nic in 0 1; do rdma link delete "rxe$nic"; done
