# lab: vms=2 nics=2 timeout=200
# Configuring LNet at runtime with lnetctl, as administrators do: nets
# added and deleted on the interfaces, a refused duplicate, peers, every
# global set and read back (global show and sysfs), invalid ones refused,
# then export (with a route), unconfigure, configure, import: the export
# reads the same.
# Then thousands of malformed ioctls, as root and as a user.
me0=$(lab_addr "$LAB_VM" 0)
me1=$(lab_addr "$LAB_VM" 1)
modprobe lnet || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure || lab_fail "configure"
lnetctl net show >/tmp/n0 || lab_fail "net show"
grep -q "@tcp" /tmp/n0 && { cat /tmp/n0; lab_fail "configure without --all started networks="; }
lnetctl net add --net tcp --if eth0 || lab_fail "net add tcp"
lnetctl net add --net tcp1 --if eth1 || lab_fail "net add tcp1"
lnetctl net show >/tmp/n1 || lab_fail "net show"
grep -q "nid: $me0@tcp" /tmp/n1 && grep -q "nid: $me1@tcp1" /tmp/n1 || { cat /tmp/n1; lab_fail "added NIs not shown"; }
if lnetctl net add --net tcp --if eth0 >/tmp/dup 2>&1; then
	lab_fail "a duplicate NI was added"
fi
grep -q "errno:" /tmp/dup || { cat /tmp/dup; lab_fail "no error block for the duplicate"; }
if lnetctl net add --net nosuchnet9 --if eth0 >/tmp/bad 2>&1; then
	lab_fail "a bad net name was accepted"
fi
lnetctl net del --net tcp1 || lab_fail "net del"
lnetctl net show >/tmp/n2 || lab_fail "net show"
grep -q "@tcp1" /tmp/n2 && { cat /tmp/n2; lab_fail "tcp1 still shown after net del"; }
lnetctl net add --net tcp1 --if eth1 || lab_fail "net add tcp1 again"
lnetctl peer add --prim_nid 10.1.0.9@tcp --nid 10.2.0.9@tcp1 || lab_fail "peer add"
# Each global: set, read back from global show and from sysfs.
P=/sys/module/lnet/parameters
setg() { # name value [sysfs-name sysfs-value]
	lnetctl set "$1" "$2" || lab_fail "set $1 $2"
	lnetctl global show >/tmp/g || lab_fail "global show"
	grep -q "^    $1: $2\$" /tmp/g || { cat /tmp/g; lab_fail "global show: $1 is not $2"; }
	if [ -n "$3" ]; then
		lab_read "$P/$3"
		lab_expect_eq "$LAB_V" "$4" "$P/$3"
	fi
}
setg retry_count 1 lnet_retry_count 1
setg transaction_timeout 30 lnet_transaction_timeout 30
setg health_sensitivity 50 lnet_health_sensitivity 50
setg recovery_limit 20 lnet_recovery_limit 20
setg max_recovery_ping_interval 64 lnet_max_recovery_ping_interval 64
setg response_tracking 1 lnet_response_tracking 1
setg max_interfaces 32 lnet_interfaces_max 32
setg discovery 0 lnet_peer_discovery_disabled 1
setg discovery 1 lnet_peer_discovery_disabled 0
setg drop_asym_route 1 lnet_drop_asym_route 1
setg numa_range 2
# Invalid values: refused with an error block, the old value kept.
bad() { # name value sysfs-name kept
	if lnetctl set "$1" "$2" >/tmp/bad 2>&1; then
		lab_fail "set $1 $2 was accepted"
	fi
	grep -q "errno:" /tmp/bad || { cat /tmp/bad; lab_fail "no error block for $1 $2"; }
	lab_read "$P/$3"
	lab_expect_eq "$LAB_V" "$4" "$P/$3 after a refused $1 $2"
}
bad health_sensitivity 1001 lnet_health_sensitivity 50
bad response_tracking 4 lnet_response_tracking 1
bad max_recovery_ping_interval 0 lnet_max_recovery_ping_interval 64
bad retry_count 31 lnet_retry_count 1
bad transaction_timeout 1 lnet_transaction_timeout 30
# A health value out of range is refused too (Lustre's ioctl would store
# 1000 instead: documented in lnet/dev.rs).
if lnetctl net set --nid "$me0@tcp" --health 1001 >/tmp/bad 2>&1; then
	lab_fail "health 1001 was accepted"
fi
grep -q "errno:" /tmp/bad || { cat /tmp/bad; lab_fail "no error block for health 1001"; }
# A route through the configured peer goes out and back in with the rest.
lnetctl route add --net tcp9 --gateway 10.1.0.9@tcp --hop 2 --priority 1 || lab_fail "route add"
lnetctl export >/tmp/a.yaml || lab_fail "export"
grep -q "^-  *net: tcp9$" /tmp/a.yaml || { cat /tmp/a.yaml; lab_fail "export without the route"; }
lnetctl lnet unconfigure || lab_fail "unconfigure"
lnetctl lnet configure || lab_fail "configure again"
# Peers went with LNet, as Lustre's: only the import brings one back.
lnetctl peer show >/tmp/p0 || lab_fail "peer show after configure"
! grep -q "primary nid:" /tmp/p0 || { cat /tmp/p0; lab_fail "peers outlived LNet"; }
lnetctl import /tmp/a.yaml || { cat /tmp/a.yaml; lab_fail "import"; }
lnetctl export >/tmp/b.yaml || lab_fail "export again"
# The configured peer has no node behind it: pushes to it (discovery
# turned off and on above) fail when its connect times out, so its state,
# counters and health move on their own, and so may the state of the
# route through it. Compare what configures them, and of the NIs all but
# their counters, which those sends move too.
for f in a b; do
	sed -i '/^peer:/,/^[a-z]/{/^peer:\|primary nid:\|Multi-Rail:\|peer ni:\|- nid:\|^[a-z]/!d}' /tmp/$f.yaml
	sed -i -E '/^ +(send|recv|drop)_count:|^ +(put_egress|get_rtt|put_ack)_[a-z_]+:|^ +(put|get|reply|ack|hello|interrupts|dropped|aborted|no route|timeouts|error|fatal_error|ping_count|next_ping):|^ +state: (up|down)$/d' /tmp/$f.yaml
done
if ! diff /tmp/a.yaml /tmp/b.yaml >/tmp/d; then
	cat /tmp/d
	lab_fail "export after import differs"
fi
lab_log "export round trip: $(wc -l </tmp/a.yaml) lines identical"
# The ping buffer (wire.md §3): RTE_DISABLED, as we do not route;
# DISCOVERY as the parameter says, switched in the posted buffer at once
# (same sequence number); a new buffer for each change of NIs, with the
# next sequence number.
pinginfo() { # prints "features sequence"
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=pinginfo || lab_fail "pinginfo"
	lab_rmmod lnet_ulp
	dmesg | sed -n 's/.*lnet_ulp: ping info: features \(0x[0-9a-f]*\) sequence \([0-9]*\).*/\1 \2/p'
}
set -- $(pinginfo)
f1=$1 s1=$2
lab_log "ping buffer: features $f1, sequence $s1"
[ $((f1 & 0x4)) -ne 0 ] || lab_fail "ping buffer features $f1: no RTE_DISABLED"
[ $((f1 & 0x10)) -ne 0 ] || lab_fail "ping buffer features $f1: no DISCOVERY"
echo 1 >/sys/module/lnet/parameters/lnet_peer_discovery_disabled || lab_fail "discovery off"
set -- $(pinginfo)
[ $(($1 & 0x10)) -eq 0 ] || lab_fail "discovery off: ping buffer features still $1"
lab_expect_eq "$2" "$s1" "sequence after a discovery change in place"
echo 0 >/sys/module/lnet/parameters/lnet_peer_discovery_disabled || lab_fail "discovery on"
set -- $(pinginfo)
lab_expect_eq "$1" "$f1" "features with discovery back on"
lnetctl net del --net tcp1 || lab_fail "net del"
lnetctl net add --net tcp1 --if eth1 || lab_fail "net add tcp1 again"
set -- $(pinginfo)
[ "$2" -gt "$s1" ] || lab_fail "sequence $2 after NIs changed, was $s1"
lab_log "discovery switched in place; NIs changed: sequence $s1 -> $2"
# Garbage ioctls, as root and while configured: all refused, no splat.
lnet_ioctl_garbage 4000 >/tmp/garbage || lab_fail "garbage ioctl program"
lab_log "$(cat /tmp/garbage)"
# A user cannot open /dev/lnet, and root without CAP_SYS_ADMIN has every
# call refused with EACCES: nothing changes.
if su lnetuser -s /bin/sh -c "lnet_ioctl_garbage 10" >/dev/null 2>&1; then
	lab_fail "a user opened /dev/lnet"
fi
lnet_ioctl_garbage --no-admin 1000 7 >/tmp/garbage || lab_fail "an ioctl without CAP_SYS_ADMIN was not refused"
lab_log "$(cat /tmp/garbage)"
lnetctl net show >/tmp/n3 || lab_fail "net show after garbage"
grep -q "nid: $me1@tcp1" /tmp/n3 || { cat /tmp/n3; lab_fail "the configuration changed under garbage"; }
lnetctl lnet unconfigure || lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
