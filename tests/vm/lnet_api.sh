# lab: vms=2 nics=2 timeout=240
# The LNet API from C, as PtlRPC uses it, over 0@lo: lnet_ulp.ko checks PUT
# with ACK and GET with REPLY (4 KiB kmalloc, 1 MiB page vectors), match
# misses, truncation, unlink, responses that never come (own and
# transaction timeouts, with response_timeout_count) and bad arguments at
# load, lazy portals, LNetDist, NID strings, peers made and looked up as
# PtlRPC does (LNetAddPeer, LNetPrimaryNID...) and lnet_cpt_of_nid; at
# unload it calls LNetNIFini with GETs in flight and a thread still
# sending, and every send must still end in exactly one final event. Then
# LNetNIFini from an rmmod with a signal pending must still wait for a
# message whose handler is slow.
dmesg -c >/dev/null
modprobe lnet networks=lo lnet_transaction_timeout=4 || lab_fail "lnet did not load"
if ! modprobe lnet_ulp inflight=8 traffic=1; then
	dmesg | grep 'lnet_ulp' | tail -n 20
	lab_fail "lnet_ulp checks failed"
fi
dmesg | grep 'lnet_ulp:' | sed 's/^/  /'
dmesg | grep -q 'lnet_ulp: all checks passed' || lab_fail "no pass line"
# The peer lnet_ulp's LNetAddPeer calls made, as lnetctl sees it: one
# Multi-Rail peer, primary 10.9.0.1@tcp, the server's other NIDs in it.
lnetctl peer show >/tmp/peers || lab_fail "peer show"
awk '/primary nid:/ { p = ($NF == "10.9.0.1@tcp") } p' /tmp/peers >/tmp/peer1
grep -q 'Multi-Rail: true' /tmp/peer1 || { cat /tmp/peers; lab_fail "LNetAddPeer: not Multi-Rail"; }
for nid in 10.9.0.1@tcp 10.9.0.2@tcp1 10.9.0.3@tcp; do
	grep -q "nid: $nid\$" /tmp/peer1 || { cat /tmp/peers; lab_fail "LNetAddPeer: $nid not in the peer"; }
done
lab_rmmod lnet_ulp
line=$(dmesg | grep 'lnet_ulp: unloaded:')
lab_log "$line"
case "$line" in
*"sends=21 finals=21 failures=0"*) ;;
*) dmesg | grep 'lnet_ulp: FAIL' ; lab_fail "unload under traffic: $line" ;;
esac
traffic=$(dmesg | grep 'lnet_ulp: traffic at unload:')
lab_log "$traffic"
[ -n "$traffic" ] || lab_fail "no traffic at unload"
dmesg | grep -q 'LNet down' || lab_fail "LNet did not shut down"

# Shutdown waits for every message, whatever signal its caller has: the
# traffic thread's ACK handler sleeps 4 s, so a message is in flight when
# rmmod's LNetNIFini takes LNet down, and rmmod gets SIGTERM meanwhile
# (SIGINT is ignored by a background job of a script).
# LNet must go down only after that handler returned.
dmesg -c >/dev/null
modprobe lnet_ulp mode=traffic slow_ms=4000 || lab_fail "lnet_ulp mode=traffic"
sleep 1
rmmod lnet_ulp &
unload=$!
sleep 1
kill -TERM $unload 2>/dev/null || lab_fail "rmmod ended before the signal"
wait $unload || true
lsmod | grep -q '^lnet_ulp ' && lab_fail "lnet_ulp still loaded"
dmesg | grep -n 'slow handler returned\|LNet down\|lnet_ulp: unloaded' | sed 's/^/  /'
back=$(dmesg | grep -n 'slow handler returned' | head -n 1 | cut -d: -f1)
down=$(dmesg | grep -n 'LNet down' | head -n 1 | cut -d: -f1)
[ -n "$back" ] && [ -n "$down" ] || lab_fail "no slow handler during the unload, or no LNet down"
[ "$back" -lt "$down" ] || lab_fail "LNet went down while a handler still held a message"
dmesg | grep 'lnet_ulp: unloaded:' | grep -q 'failures=0' || lab_fail "unload under a slow handler: $(dmesg | grep 'lnet_ulp: unloaded:')"
lab_rmmod lnet
