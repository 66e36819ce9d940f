# lab: vms=2 nics=2 timeout=240
# lnetctl over /dev/lnet with ksocklnd on two nets, one per rail
# (tcp on eth0, tcp1 on eth1): configure, net show, ping the other VM over
# each rail (the reply lists both its NIs), stats, bad ioctls refused,
# unconfigure.
peer=$(lab_peer)
modprobe lnet networks="tcp(eth0),tcp1(eth1)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"
lnetctl net show >/tmp/nets || lab_fail "net show"
me0=$(lab_addr "$LAB_VM" 0)@tcp
me1=$(lab_addr "$LAB_VM" 1)@tcp1
grep -q "nid: $me0" /tmp/nets || { cat /tmp/nets; lab_fail "net show lacks $me0"; }
grep -q "nid: $me1" /tmp/nets || { cat /tmp/nets; lab_fail "net show lacks $me1"; }
p0=$(lab_addr "$peer" 0)@tcp
p1=$(lab_addr "$peer" 1)@tcp1
# The other VM may still be starting: retry the first ping for a while.
i=0
until lnetctl ping "$p0" >/tmp/ping0 2>&1; do
	i=$((i + 1))
	[ $i -lt 30 ] || { cat /tmp/ping0; lab_fail "no ping reply from $p0"; }
	sleep 2
done
lnetctl ping "$p1" --timeout 10 >/tmp/ping1 2>&1 || { cat /tmp/ping1; lab_fail "no ping reply from $p1"; }
for f in /tmp/ping0 /tmp/ping1; do
	grep -q "nid: $p0" $f && grep -q "nid: $p1" $f || { cat $f; lab_fail "ping reply lacks the peer's NIs"; }
done
lab_log "ping over both rails:"
sed 's/^/  /' /tmp/ping1
lnetctl stats show >/tmp/stats || lab_fail "stats show"
grep -q "send_count: [1-9]" /tmp/stats || { cat /tmp/stats; lab_fail "no sends counted"; }
# A ping to nobody fails with Lustre's error block, not a hang.
if lnetctl ping 10.1.0.99@tcp --timeout 2 >/tmp/noping 2>&1; then
	lab_fail "ping to nobody succeeded"
fi
grep -q "errno:" /tmp/noping || { cat /tmp/noping; lab_fail "no error block"; }
# Unprivileged users may look but not change.
su lnetuser -s /bin/sh -c "lnetctl net show" >/dev/null || lab_fail "net show refused to a user"
if su lnetuser -s /bin/sh -c "lnetctl lnet unconfigure" 2>/dev/null; then
	lab_fail "a user unconfigured LNet"
fi
# Let the other VM finish its pings before going down.
sleep 8
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
