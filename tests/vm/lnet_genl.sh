# lab: vms=2 nics=2 clnet=1 timeout=240
# Lustre's own lnetctl (a clnet lab's /opt/clnet/lnetctl) configuring
# lnet-rs over the lnet generic netlink family, which it tries before any
# ioctl: lnet configure, net add, net show (plain, -v, --net), net del,
# lnet unconfigure; peer add, set, del and show, ping and discover; and
# global show and stats show, which use Lustre's /dev/lnet ioctls. What it
# shows must read as what our lnetctl shows (it takes the same values from
# the kernel), and what it changes must show in ours; bad input must fail.
# Then stats reset and net set from Lustre's lnetctl, and fault rules,
# ping, which_nid, peer_list, conn_list and disconnect from Lustre's lctl
# (/usr/sbin/lctl here; ours is lnet-rs-lctl).
# Only VM 0 takes part: the Lustre node of the lab has nothing to do.
[ "${LAB_CLNET_NODE:-0}" = 1 ] && exit 0
LC=/opt/clnet/lnetctl
[ -x "$LC" ] || lab_fail "no Lustre lnetctl at $LC"
me0=$(lab_addr "$LAB_VM" 0)
modprobe lnet || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"

# same WHAT ARGS...: Lustre's and our lnetctl print the same YAML.
same() {
	what=$1
	shift
	"$LC" "$@" >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lnetctl $*: $what"; }
	lnetctl "$@" >/tmp/r.out 2>&1 || { cat /tmp/r.out; lab_fail "our lnetctl $*: $what"; }
	diff -u /tmp/r.out /tmp/c.out || lab_fail "$what: Lustre's lnetctl $* differs from ours"
}
# refused WHAT ARGS...: Lustre's lnetctl fails and says so.
refused() {
	what=$1
	shift
	if "$LC" "$@" >/tmp/e.out 2>&1; then
		cat /tmp/e.out
		lab_fail "Lustre's lnetctl $*: $what accepted"
	fi
	[ -s /tmp/e.out ] || lab_fail "Lustre's lnetctl $*: $what refused without a word"
}

# quiet_refused WHAT ARGS...: Lustre's lnetctl fails; what it says is
# logged with its exit status. Its peer add and del refusals (an
# LNET_CMD_PEERS error, sent with its message) have printed nothing on
# lnet-rs: not yet compared with what Lustre's own LNet makes it print.
quiet_refused() {
	what=$1
	shift
	rc=0
	"$LC" "$@" >/tmp/e.out 2>&1 || rc=$?
	[ "$rc" != 0 ] || { cat /tmp/e.out; lab_fail "Lustre's lnetctl $*: $what accepted"; }
	lab_log "Lustre's lnetctl $*: $what refused, status $rc: $(tr '\n' ' ' </tmp/e.out)"
}

"$LC" lnet configure || lab_fail "Lustre's lnetctl lnet configure"
lnetctl net show >/tmp/n0 || lab_fail "net show after Lustre's configure"
grep -q "nid: 0@lo" /tmp/n0 || { cat /tmp/n0; lab_fail "no 0@lo after configure"; }
grep -q "@tcp" /tmp/n0 && { cat /tmp/n0; lab_fail "configure without --all started networks="; }
same "lo only" net show

"$LC" net add --net tcp --if eth0 || lab_fail "Lustre's lnetctl net add --net tcp --if eth0"
lnetctl net show >/tmp/n1 || lab_fail "net show"
grep -q "nid: $me0@tcp" /tmp/n1 || { cat /tmp/n1; lab_fail "the NI Lustre's lnetctl added is not shown"; }
same "after net add" net show
same "net show -v" net show -v
same "net show -v 3" net show -v 3
same "net show --net tcp" net show --net tcp
grep -q "0@lo" /tmp/c.out && { cat /tmp/c.out; lab_fail "net show --net tcp shows lo"; }

refused "a duplicate NI" net add --net tcp --if eth0
refused "a missing interface" net add --net tcp1 --if nosuch0
refused "an unknown net" net del --net tcp9
refused "an interface the net does not have" net del --net tcp --if eth1
refused "a net show of a net that is not there" net show --net tcp7
lnetctl net show >/tmp/n2 || lab_fail "net show after refusals"
diff -u /tmp/n1 /tmp/n2 || lab_fail "a refused command changed the configuration"

# Peers over the family (LNET_CMD_PEERS, a dump): a Multi-Rail peer
# configured with our lnetctl (its NIDs belong to no VM, and nothing is
# sent to it, so its values hold still between the two tools' reads).
pa=10.9.0.1@tcp pb=10.9.0.2@tcp
lnetctl peer add --prim_nid "$pa" --nid "$pb" || lab_fail "our lnetctl peer add"
same "a configured peer" peer show
grep -q "primary nid: $pa" /tmp/c.out || { cat /tmp/c.out; lab_fail "Lustre's peer show lacks $pa"; }
same "peer show -v" peer show -v
same "peer show -v 4" peer show -v 4
same "peer show --nid of a secondary NID" peer show --nid "$pb"
# The dump ends with -ENOENT "cannot find peer", as Lustre's does; its
# lnetctl's reply parser can end without printing it, so only the exit.
if "$LC" peer show --nid 10.9.9.9@tcp >/tmp/e.out 2>&1; then
	cat /tmp/e.out
	lab_fail "Lustre's lnetctl peer show of a peer that is not there accepted"
fi
lab_log "Lustre's lnetctl peer show of a missing peer: refused, $(wc -c </tmp/e.out) bytes said"

# Ping (LNET_CMD_PING, a dump): our own NID answers through ksocklnd.
same "a ping of our own NID" ping "$me0@tcp"
grep -q "nid: $me0@tcp" /tmp/c.out || { cat /tmp/c.out; lab_fail "Lustre's ping lists no $me0@tcp"; }
# Lustre's lctl peer_list, conn_list and disconnect (IOC_LIBCFS_GET_PEER,
# GET_CONN and CLOSE_CONNECTION, which LNet hands to the LND of the NI on
# the argument's net): the ping went through ksocklnd, so we are our own
# peer, routed (we connected to its acceptor port, 988) and connected both
# ways: connections we made to port 988, and those we accepted, from a
# privileged port; between them every type (control, bulk in and out:
# ksocklnd counts the accepted ones by their mirrored type, so it makes
# only the control and bulk-in connections to itself). Lustre's lctl looks
# each address up (numeric here). conns_up waits (5 s at most) for the
# connector, which may still be at work when the ping returns.
conn="^12345-$me0@tcp *[CIO]\[0\]$me0->$me0"
conns_up() {
	i=0
	while :; do
		lctl --net tcp conn_list >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl conn_list"; }
		n=0
		for t in C I O; do
			grep -q "^12345-$me0@tcp *$t\[0\]$me0->$me0:[0-9]* [1-9][0-9]*/[1-9][0-9]* nonagle$" /tmp/c.out && n=$((n + 1))
		done
		[ $n = 3 ] && grep -q "$conn:988 " /tmp/c.out &&
			sed -n "s/$conn:\([0-9]*\) .*/\1/p" /tmp/c.out |
			awk '$1 < 1024 && $1 != 988 { f = 1 } END { exit !f }' && return 0
		i=$((i + 1))
		[ $i -lt 50 ] || { cat /tmp/c.out; lab_fail "conn_list $1: not every type, made to $me0:988 and accepted from a privileged port"; }
		sleep 0.1
	done
}
lctl --net tcp peer_list >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl peer_list"; }
lab_log "Lustre's lctl peer_list: $(tr '\n' ' ' </tmp/c.out)"
grep -q "^12345-$me0@tcp *\[1\]$me0->$me0:988 #[1-9][0-9]*$" /tmp/c.out ||
	{ cat /tmp/c.out; lab_fail "peer_list: no routed peer $me0@tcp with connections"; }
conns_up "after a ping"
lab_log "Lustre's lctl conn_list: $(tr '\n' ' ' </tmp/c.out)"
[ "$(grep -c "$conn:" /tmp/c.out)" = "$(wc -l </tmp/c.out)" ] || { cat /tmp/c.out; lab_fail "conn_list: a line of another form"; }
# disconnect by NID and address closes them all: conn_list is then empty
# (a closed connection leaves the list at once, as in Lustre's LNDs) until
# the next message connects again.
lctl --net tcp disconnect "$me0@tcp" "$me0" >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl disconnect"; }
lctl --net tcp conn_list >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl conn_list after disconnect"; }
lab_expect_eq "$(cat /tmp/c.out)" "<no connections>" "conn_list after disconnect"
"$LC" ping "$me0@tcp" >/dev/null 2>&1 || lab_fail "a ping after disconnect"
conns_up "after a ping that followed disconnect"
# disconnect of every peer; a net with no NI is refused (EINVAL, Lustre's
# LNet's answer without one): lctl says so, and its disconnect fails.
lctl --net tcp disconnect >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl disconnect of every peer"; }
lctl --net tcp conn_list >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl conn_list after disconnect"; }
lab_expect_eq "$(cat /tmp/c.out)" "<no connections>" "conn_list after disconnecting every peer"
lctl --net tcp9 peer_list >/tmp/e.out 2>&1
grep -q "^Error getting peer list: Invalid argument" /tmp/e.out || { cat /tmp/e.out; lab_fail "peer_list of a net with no NI"; }
lctl --net tcp9 conn_list >/tmp/e.out 2>&1
grep -q "^Error getting connection list: Invalid argument" /tmp/e.out || { cat /tmp/e.out; lab_fail "conn_list of a net with no NI"; }
if lctl --net tcp9 disconnect >/tmp/e.out 2>&1; then
	cat /tmp/e.out
	lab_fail "disconnect on a net with no NI accepted"
fi
grep -q "failed to remove connection: Invalid argument" /tmp/e.out || { cat /tmp/e.out; lab_fail "disconnect on a net with no NI"; }
# A target on no net of ours fails at once; the failure is an entry of the
# reply (errno, descr) and Lustre's lnetctl exits non-zero.
refused "a ping of a NID on no net of ours" ping 10.9.9.9@tcp9
grep -q "failed to ping 10.9.9.9@tcp9" /tmp/e.out || { cat /tmp/e.out; lab_fail "ping failure not described"; }
# Discover (LNET_CMD_PING with NLM_F_CREATE, a request with a multi-part
# reply): the same refusal for a NID no net of ours reaches.
refused "a discover of a NID on no net of ours" discover 10.9.9.9@tcp9
grep -q "failed to discover 10.9.9.9@tcp9" /tmp/e.out || { cat /tmp/e.out; lab_fail "discover failure not described"; }
lnetctl peer del --prim_nid "$pa" || lab_fail "our lnetctl peer del"

# peer add, set and del from Lustre's lnetctl (LNET_CMD_PEERS requests,
# which it sends before any ioctl), read back with ours.
pc=10.9.0.3@tcp pd=10.9.0.4@tcp
"$LC" peer add --prim_nid "$pc" --nid "$pd" || lab_fail "Lustre's lnetctl peer add"
lnetctl peer show --nid "$pc" >/tmp/p.out || { cat /tmp/p.out; lab_fail "our peer show of the added peer"; }
grep -q "primary nid: $pc" /tmp/p.out || { cat /tmp/p.out; lab_fail "Lustre's peer add: no peer $pc"; }
grep -q "nid: $pd" /tmp/p.out || { cat /tmp/p.out; lab_fail "Lustre's peer add: $pd not in the peer"; }
grep -qi "Multi-Rail: true" /tmp/p.out || { cat /tmp/p.out; lab_fail "Lustre's peer add: not Multi-Rail"; }
same "a peer Lustre's lnetctl added" peer show --nid "$pc"
quiet_refused "a NID another peer has" peer add --prim_nid 10.9.0.5@tcp --nid "$pd"
lnetctl peer show >/tmp/p2.out || lab_fail "peer show after a refused add"
grep -q "10.9.0.5@tcp" /tmp/p2.out && { cat /tmp/p2.out; lab_fail "a refused peer add left a peer"; }
"$LC" peer set --health 300 --nid "$pd" || lab_fail "Lustre's lnetctl peer set --health"
lnetctl peer show -v 4 --nid "$pd" >/tmp/p.out || lab_fail "peer show -v 4"
grep -q "health value: 300" /tmp/p.out || { cat /tmp/p.out; lab_fail "peer set --health 300 not shown"; }
"$LC" peer del --prim_nid "$pc" --nid "$pd" || lab_fail "Lustre's lnetctl peer del --nid"
lnetctl peer show --nid "$pc" >/tmp/p.out || lab_fail "peer show after deleting a NID"
grep -q "nid: $pd" /tmp/p.out && { cat /tmp/p.out; lab_fail "peer del --nid $pd left it"; }
"$LC" peer del --prim_nid "$pc" || lab_fail "Lustre's lnetctl peer del"
lnetctl peer show >/tmp/p.out 2>&1 || lab_fail "peer show after peer del"
grep -q "$pc" /tmp/p.out && { cat /tmp/p.out; lab_fail "Lustre's peer del left $pc"; }
quiet_refused "a peer del of a peer that is not there" peer del --prim_nid "$pc"

# global show: module parameters, debugfs's lnet_lnd_timeout and the NUMA
# range (IOC_LIBCFS_GET_NUMA_RANGE); stats show: the counters
# (IOC_LIBCFS_GET_LNET_STATS). The counters move with any message between
# the two reads, so their keys are compared, and each value is a number.
same "global show" global show
# export --backup (what sanity-lnet.sh imports back): its UDSP walk
# (IOC_LIBCFS_GET_UDSP_SIZE) ends at once with ENOENT, so no error entry
# ("show:", an errno) lands in the YAML.
"$LC" export --backup >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lnetctl export --backup"; }
grep -Eq "^show:|errno" /tmp/c.out && { cat /tmp/c.out; lab_fail "Lustre's lnetctl export --backup reports an error"; }
# set numa_range (IOC_LIBCFS_SET_NUMA_RANGE), as import sets it from
# export's global section.
range=$(lnetctl global show | sed -n 's/^ *numa_range: //p')
"$LC" set numa_range 7 || lab_fail "Lustre's lnetctl set numa_range"
lnetctl global show | grep -q "numa_range: 7" || lab_fail "Lustre's set numa_range 7 not shown"
"$LC" set numa_range "$range" || lab_fail "Lustre's lnetctl set numa_range back"
"$LC" stats show >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lnetctl stats show"; }
lnetctl stats show >/tmp/r.out 2>&1 || { cat /tmp/r.out; lab_fail "our lnetctl stats show"; }
sed 's/:.*//' /tmp/r.out >/tmp/r.keys
sed 's/:.*//' /tmp/c.out >/tmp/c.keys
diff -u /tmp/r.keys /tmp/c.keys || lab_fail "stats show: Lustre's keys differ from ours"
grep -Evq '^statistics:$|^    [a-z_]+: [0-9]+$' /tmp/c.out && { cat /tmp/c.out; lab_fail "stats show: a value is not a number"; }
grep -q "send_count: [1-9]" /tmp/c.out || { cat /tmp/c.out; lab_fail "stats show: nothing sent after the ping"; }
lnetctl peer show >/tmp/p.out 2>&1 || { cat /tmp/p.out; lab_fail "peer show after peer del"; }
rc=0
"$LC" peer show >/tmp/c.out 2>&1 || rc=$?
[ $rc = 0 ] || { cat /tmp/c.out; lab_fail "Lustre's lnetctl peer show: exit $rc"; }
diff -u /tmp/p.out /tmp/c.out || lab_fail "peer show after peer del differs"

# stats reset (IOC_LIBCFS_RESET_LNET_STATS): the node's counters start
# again; the ping above sent messages, and nothing sends between the reads.
sent() { lnetctl stats show | sed -n 's/^    send_count: //p'; }
before=$(sent)
"$LC" stats reset || lab_fail "Lustre's lnetctl stats reset"
after=$(sent)
[ "$before" -gt 0 ] && [ "$after" -lt "$before" ] ||
	lab_fail "stats reset: send_count $before before, $after after"

# net set (LNET_CMD_NETS with NLM_F_REPLACE, before any ioctl): a local
# NI's health value, by NID and with --all, read back with our lnetctl.
# Below 1000 the NI goes into recovery, saying so on the console as
# Lustre's LNet does; its pings of itself soon bring it back to 1000 (each
# message of the ping is +100), so the value is read only after --all 1000.
nih() { lnetctl net show -v 3 --net tcp | sed -n 's/^ *health value: //p'; }
"$LC" net set --health 500 --nid "$me0@tcp" || lab_fail "Lustre's lnetctl net set --health --nid"
dmesg | grep -q "manually adding local NI $me0@tcp to recovery" ||
	lab_fail "net set --health 500: the NI not put in recovery"
"$LC" net set --health 1000 --all || lab_fail "Lustre's lnetctl net set --health --all"
[ "$(nih)" = 1000 ] || lab_fail "net set --health 1000 --all: health value $(nih)"
refused "a NID that is no local NI" net set --health 500 --nid 10.9.9.9@tcp
refused "a health value over 1000" net set --health 5000 --nid "$me0@tcp"
refused "the loopback net" net set --health 500 --nid 0@lo
# conns_per_peer: ksocklnd runs one connection per peer, which may be
# asked for again; another number is refused.
"$LC" net set --conns-per-peer 1 --nid "$me0@tcp" || lab_fail "net set --conns-per-peer 1"
refused "a conns_per_peer ksocklnd cannot run" net set --conns-per-peer 4 --nid "$me0@tcp"
[ "$(nih)" = 1000 ] || lab_fail "a refused net set changed the health value: $(nih)"

# Fault rules from Lustre's lctl (IOC_LIBCFS_LNET_FAULT, after its
# LNET_CMD_FAULT request fails: it prints that failure, then takes the
# ioctl), listed by Lustre's lctl and ours alike. A delay rule on every GET
# to our own NID holds a ping of it for 1 to 2 s (whole seconds) and counts the GET.
faults() {
	lctl "net_$1_list" 2>&1 | grep -v '^failed to ' >/tmp/c.out || lab_fail "Lustre's lctl net_$1_list"
	lnet-rs-lctl "net_$1_list" >/tmp/r.out 2>&1 || lab_fail "our lctl net_$1_list"
	diff -u /tmp/r.out /tmp/c.out || lab_fail "net_$1_list: Lustre's lctl differs from ours"
}
lctl net_drop_add -s '*@tcp' -d 10.9.0.7@tcp -m GET -r 2 >/tmp/f.out 2>&1 || { cat /tmp/f.out; lab_fail "Lustre's lctl net_drop_add"; }
lab_log "Lustre's lctl net_drop_add: $(tr '\n' ' ' </tmp/f.out)"
grep -q "^Added drop rule 255.255.255.255@tcp->10.9.0.7@tcp (1/2)" /tmp/f.out || lab_fail "net_drop_add: not added"
lctl net_delay_add -s '*' -d "$me0@tcp" -m GET -r 1 -l 2 >/dev/null 2>&1 || lab_fail "Lustre's lctl net_delay_add"
faults drop
grep -q "^255.255.255.255@tcp->10.9.0.7@tcp (1/2 | 0) ptl 0, msg 4, 0/0," /tmp/r.out || lab_fail "net_drop_list: the rule as added"
faults delay
grep -q "^<?>->$me0@tcp (1/1 | 0, latency 2) ptl 0, msg 4, 0/0," /tmp/r.out || lab_fail "net_delay_list: the rule as added"
# Centiseconds since boot (the lab's date has no %N).
cs() { cut -d' ' -f1 /proc/uptime | tr -d .; }
t0=$(cs)
"$LC" ping "$me0@tcp" >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "a ping through a delay rule"; }
held=$(($(cs) - t0))
lab_log "a ping through a 2 s delay rule took ${held}0 ms"
[ "$held" -ge 90 ] || lab_fail "a ping through a 2 s delay rule took ${held}0 ms"
faults delay
grep -q ", [1-9][0-9]*/[1-9][0-9]*, PUT 0, ACK 0, GET [1-9][0-9]*, REP 0$" /tmp/r.out || lab_fail "net_delay_list: the GET held not counted"
lctl net_delay_reset >/dev/null 2>&1 || lab_fail "Lustre's lctl net_delay_reset"
faults delay
grep -q ", 0/0, PUT 0, ACK 0, GET 0, REP 0$" /tmp/r.out || lab_fail "net_delay_reset left counters"
lctl net_drop_reset >/dev/null 2>&1 || lab_fail "Lustre's lctl net_drop_reset"
# A portal mask with only ACKs left matches nothing: refused, none added.
if lctl net_drop_add -s '*' -d '*' -r 1 -p 4 -m ACK >/tmp/e.out 2>&1; then
	cat /tmp/e.out
	lab_fail "Lustre's lctl net_drop_add of a rule matching nothing accepted"
fi
lctl net_drop_del -s '*@tcp' -d 10.9.0.7@tcp 2>&1 | grep -q "^Removed 1 drop rules" || lab_fail "Lustre's lctl net_drop_del"
lctl net_delay_del -a 2>&1 | grep -q "^Removed 1 delay rules" || lab_fail "Lustre's lctl net_delay_del -a"
faults drop
grep -q "^found total 0" /tmp/r.out || lab_fail "drop rules left"
faults delay
grep -q "^found total 0" /tmp/r.out || lab_fail "delay rules left"
same "a ping once the rules are gone" ping "$me0@tcp"
# Lustre's lctl ping: LNET_CMD_PING, as its lnetctl's.
lctl ping "$me0@tcp" >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl ping"; }
grep -q "^\(12345-\)\?$me0@tcp$" /tmp/c.out || { cat /tmp/c.out; lab_fail "Lustre's lctl ping: no $me0@tcp"; }
if lctl ping 10.9.9.9@tcp9 >/tmp/e.out 2>&1; then
	cat /tmp/e.out
	lab_fail "Lustre's lctl ping of a NID on no net of ours accepted"
fi
[ -s /tmp/e.out ] || lab_fail "Lustre's lctl ping of a NID on no net of ours refused without a word"
lab_log "Lustre's lctl ping of a NID on no net of ours: $(tr '\n' ' ' </tmp/e.out)"
# Lustre's lctl which_nid (LNET_CMD_PEER_DIST): as Lustre's LNetDist
# writes its source over the target, the reply names the NID of ours a
# target is reached from; the unreachable and 0@lo are left out.
lctl which_nid 10.9.9.9@tcp9 0@lo "$(lab_addr 1 0)@tcp" >/tmp/c.out 2>&1 || { cat /tmp/c.out; lab_fail "Lustre's lctl which_nid"; }
lab_expect_eq "$(cat /tmp/c.out)" "$me0@tcp" "Lustre's lctl which_nid of a peer on tcp"
if lctl which_nid 10.9.9.9@tcp9 0@lo >/tmp/e.out 2>&1; then
	cat /tmp/e.out
	lab_fail "Lustre's lctl which_nid found a NID on no net of ours"
fi
grep -q "No reachable NID" /tmp/e.out || { cat /tmp/e.out; lab_fail "Lustre's lctl which_nid of nothing reachable"; }

"$LC" net del --net tcp --if eth0 || lab_fail "Lustre's lnetctl net del --net tcp --if eth0"
lnetctl net show >/tmp/n3 || lab_fail "net show after net del"
grep -q "@tcp" /tmp/n3 && { cat /tmp/n3; lab_fail "tcp still shown after net del"; }
"$LC" net add --net tcp --if eth0 || lab_fail "net add again"
"$LC" net del --net tcp || lab_fail "Lustre's lnetctl net del --net tcp (the whole net)"
lnetctl net show >/tmp/n4 || lab_fail "net show after net del of the net"
grep -q "@tcp" /tmp/n4 && { cat /tmp/n4; lab_fail "tcp still shown after deleting the net"; }

"$LC" lnet unconfigure || lab_fail "Lustre's lnetctl lnet unconfigure"
if lnetctl net show >/tmp/n5 2>&1; then
	cat /tmp/n5
	lab_fail "LNet still up after Lustre's unconfigure"
fi
refused "net show with LNet down" net show
refused "stats show with LNet down" stats show
same "global show with LNet down" global show
"$LC" lnet configure -a || lab_fail "Lustre's lnetctl lnet configure -a"
"$LC" lnet unconfigure || lab_fail "unconfigure after configure -a"
lab_rmmod ksocklnd
lab_rmmod lnet
