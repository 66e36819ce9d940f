# lab: vms=2 nics=2 timeout=240
# The node's own NIDs from C, as Lustre's targets and MGC ask for them:
# lnet_nids.ko checks LNetIsPeerLocal, LNetHasLocalNet, LNetFetchNIDs
# (with a callback that fills up) and lnet_genl_send_scalar_list at load,
# and registers a NID update callback. Then `lnetctl net add` and `net del`
# must each reach the callback once, after the change, with the net's
# NIDs now (none when the net is gone), and LNetFetchNIDs must follow;
# after unregistering, changes reach it no more.
peer=$(lab_peer)
me0=$(lab_addr "$LAB_VM" 0)@tcp
me1=$(lab_addr "$LAB_VM" 1)@tcp1
alt=$(lab_addr "$LAB_VM" 1)@tcp
modprobe lnet networks="tcp(eth0)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"
dmesg -c >/dev/null
if ! modprobe lnet_nids me="$me0" other="$(lab_addr "$peer" 0)@tcp" \
	notme="$(lab_addr "$LAB_VM" 0)@tcp7" expect="0@lo $me0"; then
	dmesg | grep 'lnet_nids\|lnet_genl' | tail -n 20
	lab_fail "lnet_nids checks failed at load"
fi
dmesg | grep 'lnet_nids:\|lnet_genl' | sed 's/^/  /'
dmesg | grep -q 'lnet_nids: all checks passed' || lab_fail "no pass line"

P=/sys/module/lnet_nids/parameters
# Each change: the update count it leaves, the line the callback logged,
# and the NIDs LNetFetchNIDs then gives.
change() { # count "update line" "NIDs" lnetctl-args...
	want=$1 line=$2 nids=$3
	shift 3
	lnetctl "$@" || lab_fail "lnetctl $*"
	got=$(cat $P/updates)
	[ "$got" = "$want" ] || { dmesg | grep lnet_nids | tail; lab_fail "lnetctl $*: $got updates, want $want"; }
	if [ -n "$line" ]; then
		dmesg | grep -q "lnet_nids: update $want $line\$" ||
			{ dmesg | grep lnet_nids | tail; lab_fail "lnetctl $*: no update '$line'"; }
	fi
	echo "$nids" >$P/expect || { dmesg | grep 'lnet_nids: FAIL' | tail; lab_fail "after lnetctl $*: LNetFetchNIDs is not '$nids'"; }
	lab_log "lnetctl $*: $(dmesg | grep "lnet_nids: update $want " | sed 's/.*lnet_nids: //')"
}
change 1 "net=tcp1 count=1 nids=$me1" "0@lo $me0 $me1" net add --net tcp1 --if eth1
change 2 "net=tcp1 count=0 nids=" "0@lo $me0" net del --net tcp1
change 3 "net=tcp count=2 nids=$me0 $alt" "0@lo $me0 $alt" net add --net tcp --if eth1
# Told after the removal: the NID that went is not in it.
change 4 "net=tcp count=1 nids=$me0" "0@lo $me0" net del --net tcp --if eth1
echo 1 >$P/unregister || lab_fail "unregister"
change 4 "" "0@lo $me0 $me1" net add --net tcp1 --if eth1
change 4 "" "0@lo $me0" net del --net tcp1
[ "$(cat $P/failures)" = 0 ] || { dmesg | grep 'lnet_nids: FAIL'; lab_fail "checks failed"; }
lab_rmmod lnet_nids
dmesg | grep -q 'lnet_nids: unloaded: updates=4 failures=0' || lab_fail "$(dmesg | grep 'lnet_nids: unloaded')"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
