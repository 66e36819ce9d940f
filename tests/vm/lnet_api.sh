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
lab_rmmod lnet_ulp
line=$(dmesg | grep 'lnet_ulp: unloaded:')
lab_log "$line"
case "$line" in
*"sends=18 finals=18 failures=0"*) ;;
*) dmesg | grep 'lnet_ulp: FAIL' ; lab_fail "unload under traffic: $line" ;;
esac
traffic=$(dmesg | grep 'lnet_ulp: traffic at unload:')
lab_log "$traffic"
[ -n "$traffic" ] || lab_fail "no traffic at unload"
dmesg | grep -q 'LNet down' || lab_fail "LNet did not shut down"
lab_rmmod lnet
