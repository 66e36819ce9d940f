# lab: vms=2 nics=2 timeout=180
# Parameters given at load time go through the same validation: a bad one
# refuses the load with a clear message, good ones take effect.
P=/sys/module/lnet/parameters

bad_load() {
	dmesg -c >/dev/null
	if modprobe lnet "$@" 2>/tmp/err; then
		lab_fail "lnet loaded with bad arguments: $*"
	fi
	grep -q '^lnet ' /proc/modules && lab_fail "lnet loaded after refusing $*"
	msg=$(dmesg | grep 'lnet:' | head -n 2 | tr '\n' '|')
	[ -n "$msg" ] || lab_fail "no message in dmesg for: $*"
	lab_log "load refused for '$*': $msg"
}

bad_load lnet_health_sensitivity=1001
dmesg | grep -q "Invalid health value. Maximum: 1000 value = 1001" || lab_fail "sensitivity message"
bad_load lnet_transaction_timeout=abc
dmesg | grep -q "Invalid module parameter value for 'lnet_transaction_timeout': not a number" || lab_fail "nan message"
bad_load lnet_retry_count=151
dmesg | grep -q "Has to be smaller than lnet_transaction_timeout (150)" || lab_fail "retry message"
# A bare name is refused by the kernel's parser before our setter runs.
bad_load lnet_retry_count
dmesg | grep -q "lnet: \`' invalid for parameter \`lnet_retry_count'" || lab_fail "bare name message"
bad_load lnet_response_tracking=9
bad_load lnet_numa_range=-1
bad_load lnet_transaction_timeout=2

# networks= is checked at load time; a bad one refuses the load and says
# what is wrong where. ip2nets= is checked at load time too, and matched
# against the interfaces' addresses when LNet starts.
bad_load networks="tcp(eth0"
dmesg | grep -q "Invalid networks=\"tcp(eth0\": '(' without ')' at offset 3" || lab_fail "unclosed paren message"
bad_load networks="tcp(eth0,eth0)"
dmesg | grep -q "interface named twice" || lab_fail "duplicate interface message"
bad_load networks="tcp(eth0),bogus"
dmesg | grep -q "unknown network type at offset 10" || lab_fail "unknown net message"
bad_load networks="tcp(eth0) junk"
bad_load ip2nets="tcp(eth0) 10.1.0.x"
dmesg | grep -q "bad address pattern at offset 10" || lab_fail "ip2nets pattern message"
bad_load ip2nets="tcp(eth0)"
dmesg | grep -q "entry without an address pattern at offset 0" || lab_fail "ip2nets pattern-less message"
bad_load networks=tcp ip2nets="tcp(eth0) 10.*.*.*"
dmesg | grep -q "EITHER 'networks' or 'ip2nets'" || lab_fail "networks and ip2nets message"

# Each rail's entry matches its address; the o2ib entry matches nothing.
dmesg -c >/dev/null
# (busybox modprobe quotes a value with spaces for the kernel itself.)
modprobe lnet ip2nets="tcp(eth0) 10.1.0.*; tcp1(eth1) 10.2.0.[1-9] # rail 2; o2ib 192.168.*.*" ||
	lab_fail "good ip2nets refused"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure with ip2nets"
dmesg | grep -q 'ip2nets selects networks="tcp(eth0),tcp1(eth1)"' || lab_fail "ip2nets selection not logged"
lnetctl net show >/tmp/nets || lab_fail "net show"
for nid in "$(lab_addr "$LAB_VM" 0)@tcp" "$(lab_addr "$LAB_VM" 1)@tcp1"; do
	grep -q "nid: $nid\$" /tmp/nets || lab_fail "no NI $nid from ip2nets"
done
grep -q "o2ib" /tmp/nets && lab_fail "an o2ib NI from an entry that matches nothing"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
# Matching nothing: the load succeeds, starting LNet does not.
dmesg -c >/dev/null
modprobe lnet ip2nets="tcp 192.168.0.*" || lab_fail "ip2nets load"
lab_must_fail lnetctl lnet configure --all
dmesg | grep -q "ip2nets does not match any local IP interfaces" || lab_fail "no-match message"
lab_rmmod lnet
dmesg -c >/dev/null
modprobe lnet
dmesg | grep -q 'networks="tcp": 1 NI' || lab_fail "default networks should be tcp"
lab_rmmod lnet

# Order matters as it does for Lustre: the timeout first, then the count.
modprobe lnet lnet_transaction_timeout=61 lnet_retry_count=3 lnet_numa_range=5 lock_prim_nid=0 \
	networks="tcp(eth0,eth1)" || lab_fail "valid arguments refused"
lab_expect_eq "$(cat $P/lnet_transaction_timeout)" 61 transaction_timeout
lab_expect_eq "$(cat $P/lnet_retry_count)" 3 retry_count
lab_expect_eq "$(cat $P/lnet_numa_range)" 5 numa_range
lab_expect_eq "$(cat $P/lock_prim_nid)" 0 lock_prim_nid
lab_expect_eq "$(cat $P/networks)" "tcp(eth0,eth1)" networks
lab_expect_eq "$(cat /sys/kernel/debug/lnet/lnet_lnd_timeout)" 15 lnd_timeout
dmesg | grep -q "NI on tcp over eth1" || lab_fail "NIs of networks= not listed"
lab_rmmod lnet
