# lab: vms=2 nics=2 timeout=240 debs=1
# A node installs lnet-rs from its Debian packages (scripts/build-deb.sh)
# and brings LNet up as Lustre's lnet.service does: on each VM, with the
# lab's own lnet, ksocklnd, ko2iblnd and lnetctl out of the way, dpkg -i
# of the modules and the tools, an /etc/lnet.conf with a tcp net on eth0,
# then the ExecStart lines of the installed lnet.service, run as they are
# written. LNet must be up with that NI and ping the other VM; the
# ExecStop lines take it down; dpkg -r then --purge leave nothing behind.
# The lab's files come back for the scenarios after this one.
rel=$(uname -r)
me=$(lab_addr "$LAB_VM" 0)@tcp
peer=$(lab_addr "$(lab_peer)" 0)@tcp
saved=/tmp/install_deb.saved
updates=/lib/modules/$rel/updates/kernel/net/lustre
pkgs="lnet-rs-utils lnet-rs-modules-$rel"
# Real dpkg (lab.py's add_debs), not busybox's applet of that name.
dpkg() { /usr/bin/dpkg "$@"; }

# The lab's modules and lnetctl back in place (on any exit).
restore() {
	[ -d "$saved" ] || return 0
	for f in "$saved"/*.ko "$saved/lnetctl"; do
		if [ -e "$f" ]; then
			case "$f" in
			*.ko) mv "$f" "$MODDIR/" ;;
			*) mv "$f" /usr/sbin/ ;;
			esac
		fi
	done
	rmdir "$saved"
	/sbin/depmod -a "$rel"
}
trap restore EXIT
trap 'exit 1' TERM INT

mkdir "$saved"
for m in lnet ksocklnd ko2iblnd; do
	if [ -e "$MODDIR/$m.ko" ]; then
		mv "$MODDIR/$m.ko" "$saved/"
	fi
done
mv /usr/sbin/lnetctl "$saved/"
/sbin/depmod -a "$rel"
/sbin/modprobe -n lnet 2>/dev/null && lab_fail "lnet still found with the lab's copy moved away"

# Both packages, as an administrator installs them.
dpkg -i /lab/debs/*.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; lab_fail "dpkg -i"; }
for p in $pkgs; do
	dpkg -s "$p" | grep -qx 'Status: install ok installed' || { dpkg -s "$p"; lab_fail "$p not installed"; }
done
for f in /usr/sbin/lnetctl /usr/sbin/lnet-rs-lctl /lib/systemd/system/lnet.service /etc/lnet.conf \
	/usr/share/man/man8/lnetctl.8.gz /usr/share/bash-completion/completions/lnetctl \
	"$updates/lnet.ko" "$updates/ksocklnd.ko"; do
	[ -e "$f" ] || lab_fail "$f not installed"
done
# Our lctl does only fault injection: Lustre's name stays free.
dpkg -L lnet-rs-utils | grep -qx /usr/sbin/lctl && lab_fail "lnet-rs-utils installs /usr/sbin/lctl"
lnet-rs-lctl net_drop_list >/dev/null 2>&1 && lab_fail "lnet-rs-lctl runs without LNet"
lnet-rs-lctl 2>&1 | grep -q net_drop_add || lab_fail "lnet-rs-lctl prints no usage"
# modprobe now finds the packaged modules, and only them.
for m in lnet ksocklnd; do
	path=$(/sbin/modinfo -n "$m") || lab_fail "modinfo $m"
	lab_expect_eq "$path" "$updates/$m.ko" "$m's module"
done

cat >/etc/lnet.conf <<EOF
net:
    - net type: tcp
      local NI(s):
        - interfaces:
              0: eth0
EOF

# lnet.service as systemd would run it: its condition, then each
# ExecStart line in order, as written.
unit=/lib/systemd/system/lnet.service
cond=$(sed -n 's/^ConditionPathExists=!//p' "$unit")
[ -n "$cond" ] || lab_fail "lnet.service has no ConditionPathExists=!"
[ -e "$cond" ] && lab_fail "lnet.service would not start: $cond exists before LNet is up"
sed -n 's/^ExecStart=//p' "$unit" >/tmp/execstart
want="/sbin/modprobe lnet
/usr/sbin/lnetctl lnet configure
/usr/sbin/lnetctl import /etc/lnet.conf"
lab_expect_eq "$(cat /tmp/execstart)" "$want" "lnet.service's ExecStart lines (Lustre's, in /usr/sbin)"
while read -r cmd; do
	lab_log "ExecStart=$cmd"
	# shellcheck disable=SC2086 # the unit's command line, split as systemd splits it
	$cmd || lab_fail "lnet.service: '$cmd' failed"
	# lnet comes alone: its LND is loaded by LNet, as the net is added.
	case "$cmd" in
	*"modprobe lnet") ! grep -q "^ksocklnd " /proc/modules || lab_fail "ksocklnd loaded with lnet" ;;
	esac
done </tmp/execstart

lnetctl net show >/tmp/nets || lab_fail "net show"
grep -q "nid: $me\$" /tmp/nets || { cat /tmp/nets; lab_fail "the NI of /etc/lnet.conf is not up"; }
grep -q "^ksocklnd " /proc/modules || lab_fail "ksocklnd not loaded by LNet as the tcp net came"
lab_sync 1
i=0
until lnetctl ping "$peer" --timeout 10 >/tmp/ping 2>&1; do
	i=$((i + 1))
	[ $i -lt 5 ] || { cat /tmp/ping; lab_fail "no ping reply from $peer"; }
	sleep 2
done
grep -q "nid: $peer" /tmp/ping || { cat /tmp/ping; lab_fail "ping reply from $peer lacks its NID"; }
lab_log "LNet up from /etc/lnet.conf as $me; pinged $peer"
lab_sync 2

# ExecStop, as written ('-': its failure is ignored).
sed -n 's/^ExecStop=//p' "$unit" >/tmp/execstop
while read -r cmd; do
	lab_log "ExecStop=$cmd"
	case "$cmd" in
	-*) ${cmd#-} || true ;;
	*) $cmd || lab_fail "lnet.service: '$cmd' failed" ;;
	esac
done </tmp/execstop
for m in lnet ksocklnd; do
	grep -q "^$m " /proc/modules && lab_fail "$m still loaded after ExecStop"
done

# Removed, the conffiles stay; purged, nothing stays.
# shellcheck disable=SC2086 # a list of packages
dpkg -r $pkgs >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; lab_fail "dpkg -r"; }
for f in /usr/sbin/lnetctl /usr/sbin/lnet-rs-lctl "$unit" "$updates/lnet.ko" "$updates/ksocklnd.ko"; do
	[ -e "$f" ] && lab_fail "$f left after dpkg -r"
done
[ -e /etc/lnet.conf ] || lab_fail "dpkg -r removed the conffile /etc/lnet.conf"
/sbin/modinfo -n lnet >/dev/null 2>&1 && lab_fail "modprobe still finds lnet after dpkg -r"
# shellcheck disable=SC2086 # a list of packages
dpkg --purge $pkgs >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; lab_fail "dpkg --purge"; }
[ -e /etc/lnet.conf ] && lab_fail "/etc/lnet.conf left after dpkg --purge"
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 && lab_fail "$p still known to dpkg after --purge"
done
lab_log "dpkg -r and --purge left nothing behind"
