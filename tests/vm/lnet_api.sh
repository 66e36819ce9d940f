# lab: vms=2 nics=2 timeout=240
# The LNet API from C, as PtlRPC uses it, over 0@lo: lnet_ulp.ko checks PUT
# with ACK and GET with REPLY (4 KiB kmalloc, 1 MiB page vectors), match
# misses, truncation, unlink, responses that never come (own and
# transaction timeouts, with response_timeout_count) and bad arguments at
# load, lazy portals, LNetDist, NID strings, peers made and looked up as
# PtlRPC does (LNetAddPeer, LNetPrimaryNID...) and lnet_cpt_of_nid; at
# unload it calls LNetNIFini with GETs in flight and a thread still
# sending, and every send must still end in exactly one final event.
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
lab_rmmod lnet
