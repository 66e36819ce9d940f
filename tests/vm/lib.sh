# Helpers for lab scenarios (sourced inside the VM by /init).
# A scenario is a shell script run with `set -e` in a subshell; any failing
# command or `lab_fail` fails it. LAB_VM is this VM's index (0-based),
# LAB_NVMS the number of VMs, LAB_NICS the NICs per VM. LAB_LUSTRE is 1 in
# a VM that runs Lustre's own kernel, modules and lnetctl: it has no
# kmemleak (Lustre's node is the reference, not the code under test).
# LAB_PERF is 1 on the perf kernel of scripts/bench.sh: no checkers either.
# LAB_CLNET_NODE is 1 in the Lustre node of a `clnet=1` lab: our kernel,
# Lustre's C LNet (LAB_LUSTRE is 1 there too; lab_interop_setup loads it).

KMEMLEAK=/sys/kernel/debug/kmemleak

# Debian's static busybox runs its own applets in preference to PATH, and it
# has a small `ip` and `tc` of its own: call iproute2's by path.
ip() { /usr/sbin/ip "$@"; }
tc() { /usr/sbin/tc "$@"; }
# kmod's modprobe and insmod too: busybox's load a module a second time
# when its init fails, so a failed test module would run twice.
# Where Lustre's C LNet runs, lnet_ulp is the one built against its
# headers, loaded by path (its names are ours).
modprobe() {
	if [ "$1" = lnet_ulp ] && [ "${LAB_CLNET:-0}" = 1 ]; then
		shift
		/sbin/insmod /opt/clnet/lnet_ulp.ko "$@"
		return
	fi
	/sbin/modprobe "$@"
}
insmod() { /sbin/insmod "$@"; }
MODDIR=/lib/modules/$(uname -r)/extra

lab_fail() {
	echo "LAB-FAIL: $*"
	exit 1
}

lab_log() {
	echo "lab: $*"
}

# Milliseconds since boot (busybox's date has no %N).
now_ms() {
	# Without forking an awk: /proc/uptime has two decimals.
	read -r _now_up _ </proc/uptime
	_now_c=${_now_up#*.}
	echo $((${_now_up%.*} * 1000 + ${_now_c#0} * 10))
}

# Writes mark $1 into the kernel log, so that a kernel line after it can
# be timed on the kernel's own clock (lab_kmsg_ms).
lab_kmsg_mark() {
	echo "<6>lab-mark: $1" >/dev/kmsg
}

# Milliseconds from kernel log mark $1 to the first kernel line after it
# that matches $2 (awk pattern); empty if there is none.
lab_kmsg_ms() {
	dmesg | awk -v m="lab-mark: $1" -v pat="$2" '
		function ts(l) { sub(/^\[ */, "", l); sub(/\].*/, "", l); return l * 1000 }
		index($0, m) { t0 = ts($0); next }
		t0 != "" && $0 ~ pat { printf "%d\n", ts($0) - t0; exit }'
}

# Address of NIC $2 (0-based) on VM $1.
lab_addr() {
	echo "10.$(($2 + 1)).0.$(($1 + 1))"
}

# The scenario barrier of a multi-VM lab. A scenario that fails ends at
# different times on each VM, and a VM still in the previous scenario must
# not answer for the next one (its LNet, nets and listeners are the old
# ones). Each VM serves on port 6999 the step it has reached (ten times
# the scenario's index in lab.run, LAB_STEP, plus the last lab_sync point
# within it) and the step of the last scenario it failed (LAB_FAILED).
# Before each scenario and at each lab_sync, it waits until every other VM
# has reached that step too (300 s at most, then goes on alone); while a
# scenario runs, lab_watch ends it if another VM failed it.
lab_barrier_serve() {
	[ "$LAB_NVMS" -gt 1 ] && [ "$LAB_NICS" -gt 0 ] || return 0
	echo "0 0" >/tmp/lab_at
	# One exec per query (cat), not a shell and a cat: the other VMs ask
	# every second while they wait, and each fork and exec costs this VM,
	# busy with its side of the scenario, about 0.1 s under TCG.
	nc -ll -p 6999 -e cat /tmp/lab_at &
}

# What VM $1 serves on port 6999: "STEP FAILED", or nothing.
lab_at() {
	nc -w 2 "$(lab_addr "$1" 0)" 6999 </dev/null 2>/dev/null
}

lab_barrier() { # step
	[ "$LAB_NVMS" -gt 1 ] && [ "$LAB_NICS" -gt 0 ] || return 0
	echo "$1 ${LAB_FAILED:-0}" >/tmp/lab_at
	v=0
	while [ "$v" -lt "$LAB_NVMS" ]; do
		if [ "$v" != "$LAB_VM" ]; then
			tries=0
			while :; do
				at=$(lab_at "$v")
				at=${at%% *}
				case "$at" in
				'' | *[!0-9]*) ;;
				*) [ "$at" -ge "$1" ] && break ;;
				esac
				tries=$((tries + 1))
				if [ "$tries" -ge 300 ]; then
					echo "lab: vm$v never reached step $1; going on alone"
					break
				fi
				sleep 1
			done
		fi
		v=$((v + 1))
	done
}

# The scenario at LAB_STEP failed here: the other VMs' watchdogs end
# theirs.
lab_failed() {
	LAB_FAILED=$LAB_STEP
	[ -f /tmp/lab_at ] || return 0
	read -r at _ </tmp/lab_at
	echo "${at:-$LAB_STEP} $LAB_FAILED" >/tmp/lab_at
}

# Ends the running scenario (its session leader's pid in /tmp/lab_scenario)
# once another VM has failed this same scenario: it would otherwise wait
# for that VM until its time limit, and the VMs would fall out of step.
# Runs until killed.
lab_watch() {
	[ "$LAB_NVMS" -gt 1 ] && [ "$LAB_NICS" -gt 0 ] || return 0
	# Every 10 s: each round forks and execs on this VM and on the one it
	# asks (about 0.3 s of a VM's CPU in all under TCG); a failure seen
	# 10 s late costs nothing.
	while :; do
		sleep 10
		v=0
		while [ "$v" -lt "$LAB_NVMS" ]; do
			if [ "$v" != "$LAB_VM" ]; then
				failed=$(lab_at "$v")
				case "$failed" in
				*" "*) failed=${failed#* } ;;
				*) failed= ;;
				esac
				read -r scenario 2>/dev/null </tmp/lab_scenario || scenario=
				if [ "$failed" = "$LAB_STEP" ] && [ -n "$scenario" ]; then
					echo "lab: vm$v failed this scenario; ending it here too"
					kill -TERM -- "-$scenario" 2>/dev/null
					return 0
				fi
			fi
			v=$((v + 1))
		done
	done
}

# The processes of session $1 still running.
lab_session_pids() {
	ps -o pid,sid | awk -v s="$1" '$2 == s { print $1 }'
}

# Ends what a scenario (session $1) left running, a background flood or
# server, and waits until it has exited: a module whose init still runs
# cannot be unloaded, and the next scenario would find it. A process in
# the kernel exits only once its call returns (lnet_ulp's flood gives up
# after its op_timeout), so this may take minutes. Fails if something is
# still running after 300 s.
lab_end_session() {
	[ -n "$1" ] || return 0
	left=$(lab_session_pids "$1")
	[ -n "$left" ] || return 0
	echo "lab: ending what the scenario left running: $(for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo ";"; done | tr '\n' ' ')"
	kill -TERM -- "-$1" 2>/dev/null
	i=0
	while [ -n "$(lab_session_pids "$1")" ] && [ "$i" -lt 300 ]; do
		sleep 1
		i=$((i + 1))
	done
	[ -z "$(lab_session_pids "$1")" ] && return 0
	echo "LAB-FAIL: still running ${i}s after the scenario: $(lab_session_pids "$1" | tr '\n' ' ')"
	return 1
}

# lab_sync K (1..9): the scenario's K-th meeting point of all the VMs.
lab_sync() {
	lab_barrier $((LAB_STEP + $1))
}

# The other VM of a two-VM lab (labs of three or more use lab_addr).
lab_peer() {
	echo $((1 - LAB_VM))
}

# Runs a command that must fail; prints what it said.
lab_must_fail() {
	if "$@" 2>/tmp/lab_err; then
		lab_fail "succeeded but should have failed: $*"
	fi
	lab_log "refused as expected: $* ($(cat /tmp/lab_err))"
}

# Reads a one-line file into $LAB_V without forking (forks are slow here).
lab_read() {
	LAB_V=
	read -r LAB_V <"$1" || true
}

lab_expect_eq() {
	[ "$1" = "$2" ] || lab_fail "${3:-value}: expected '$2', got '$1'"
}

# Scans for leaks now and prints any report (the harness fails on it).
lab_kmemleak_scan() {
	[ "$LAB_LUSTRE" = 1 ] || [ "${LAB_PERF:-0}" = 1 ] && return 0
	[ -w "$KMEMLEAK" ] || lab_fail "no kmemleak in this kernel"
	echo scan >"$KMEMLEAK" || lab_fail "kmemleak scan refused: kmemleak disabled itself?"
	LAB_RESCAN="echo scan >$KMEMLEAK" lab_kmemleak_report "$@"
}

# Prints the report of the scan just made as "LAB-LEAK after $*:", in one
# write (an idle scan's may land amid the next scenario's lines).
# A scan that reports objects is confirmed by a second one ($LAB_RESCAN):
# an object whose only pointer moved while the scan ran (a list relinked by
# the network stack: CI once saw IPv6's boot-time ff01::1 group after a
# rail cut's link up) is unreferenced for that one scan, and kmemleak's
# report lists only objects its latest scan still found unreferenced
# (kmemleak_seq_show), so a real leak stays. One a second scan took back
# is printed as LAB-LEAK-TRANSIENT, which lab.py notes and fails nothing.
lab_kmemleak_report() {
	# debugfs files report size 0: read the report to see if there is one.
	leaks=$(cat "$KMEMLEAK")
	[ -n "$leaks" ] || return 0
	sh -c "$LAB_RESCAN" || lab_fail "kmemleak scan refused: kmemleak disabled itself?"
	again=$(cat "$KMEMLEAK")
	if [ -n "$again" ]; then
		echo "LAB-LEAK after $*:
$again"
	else
		echo "LAB-LEAK-TRANSIENT after $*: $(echo "$leaks" | grep -c '^unreferenced object') object(s) a second scan found referenced:
$(echo "$leaks" | sed 's/^/~ /')"
	fi
	echo clear >"$KMEMLEAK"
}

# Loads the test module $1 with the arguments that follow and fails the
# scenario unless it logs "$1: all checks passed"; its lines are shown.
lab_kmod_checks() {
	m=$1
	if ! modprobe "$@"; then
		dmesg | grep "$m" | tail -n 40
		lab_fail "$m checks failed"
	fi
	dmesg | grep "$m:" | sed 's/^/  /'
	dmesg | grep -q "$m: all checks passed" || lab_fail "$m: no pass line"
}

# Unloads a module; one that will not unload fails the scenario. Leaks are
# scanned for after the scenario (lab_kmemleak_scan_idle): a leaked object
# stays unreferenced until then.
lab_rmmod() {
	rmmod "$1" || lab_fail "module $1 will not unload"
	if grep -q "^$1 " /proc/modules; then
		lab_fail "module $1 still loaded after rmmod"
	fi
}

# The leak scan that follows scenarios $*, once all their modules are gone.
# /init runs it in the background at idle priority (SCHED_IDLE): a scan
# takes 4 to 10 s of the VM's one CPU, which the next scenario's waits
# leave idle, and 40 of them in a row made a sixth of the lab's time. The
# kernel has no preemption, so a starved scan holds no RCU read section:
# it yields only at cond_resched(), between blocks. Its report names the
# scenarios (lab.py fails each of them).
lab_kmemleak_scan_idle() {
	[ "$LAB_LUSTRE" = 1 ] || [ "${LAB_PERF:-0}" = 1 ] && return 0
	LAB_RESCAN="chrt -i 0 sh -c 'echo scan >$KMEMLEAK'"
	sh -c "$LAB_RESCAN" || lab_fail "kmemleak scan refused: kmemleak disabled itself?"
	lab_kmemleak_report "scenarios $*"
}

# Our modules still loaded, most dependent first.
lab_our_modules() {
	for ko in "$MODDIR"/*.ko; do
		m=$(basename "$ko" .ko)
		grep -q "^$m " /proc/modules && echo "$m"
	done
}

# After a scenario: unload what it left loaded. Leaving a module loaded
# fails a scenario that otherwise passed.
lab_unload_leftovers() {
	left=$(lab_our_modules)
	# A scenario that failed (or was ended) half-way leaves LNet up, its
	# users loaded, fault rules, rxe links and downed or shaped NICs, or
	# some of them, even once its modules are gone: undo them so that the
	# next scenario starts clean instead of failing too.
	[ -n "$left" ] || [ "$1" != 0 ] || return 0
	[ -n "$left" ] && [ "$1" = 0 ] && echo "LAB-FAIL: scenario left modules loaded: $left"
	for m in lnet_ulp lnet_selftest; do
		rmmod "$m" 2>/dev/null
	done
	lctl net_drop_reset >/dev/null 2>&1
	lctl net_delay_reset >/dev/null 2>&1
	lnetctl lnet unconfigure >/dev/null 2>&1
	# The Lustre node of a clnet lab may have Lustre's LNet loaded, which
	# only its own lnetctl can take down.
	if [ "${LAB_CLNET_NODE:-0}" = 1 ] && [ -x /opt/clnet/lnetctl ]; then
		/opt/clnet/lnetctl lnet unconfigure >/dev/null 2>&1
	fi
	# In the background: a device's removal waits for an o2ib NI still
	# running on it (a flood kept LNet busy).
	for link in $(rdma link show 2>/dev/null | awk '{ print $2 }' | cut -d/ -f1 | sort -u); do
		rdma link delete "$link" 2>/dev/null &
	done
	sleep 1
	for dev in /sys/class/net/eth*; do
		dev=${dev##*/}
		tc qdisc del dev "$dev" root 2>/dev/null
		ip link set "$dev" up 2>/dev/null
	done
	# Dependents first; a second pass catches any order the list missed.
	for pass in 1 2; do
		for m in $(lab_our_modules); do
			rmmod "$m" 2>/dev/null
		done
	done
	for m in $(lab_our_modules); do
		echo "LAB-FAIL: module $m will not unload"
	done
	# A removal still waiting fails the next scenario's `rdma link add`:
	# say so here, with the stacks of what blocks it.
	i=0
	while [ -n "$(rdma link show 2>/dev/null)" ] && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	if [ -n "$(rdma link show 2>/dev/null)" ]; then
		for p in /proc/[0-9]*; do
			[ "$(cat "$p/comm" 2>/dev/null)" = rdma ] &&
				sed "s/^/lab: rdma ${p#/proc/}: /" "$p/stack"
		done
		echo "LAB-FAIL: rdma link delete still waits 10 s on: $(rdma link show 2>/dev/null | awk '{ print $2 }' | tr '\n' ' ')"
	fi
	[ -z "$left" ]
}

# Waits for the idle scan of the scenarios before: one that starts late
# (starved, or queued behind a scan of ours) would report this scenario's
# deliberate leak as theirs.
lab_kmemleak_wait_idle() {
	while [ -e /tmp/lab_scanning ]; do
		sleep 0.5
	done
}

# kmemleak only reports objects at least 5 s old when a scan starts, and a
# stale pointer copy can hide a leak from one scan: at the end of the boot,
# every scenario has two scans. $*: scenarios whose idle scan never started
# (the one before ran on), named in the report; without them the last
# scenario's idle scan, 5 s after it, was the first of its two.
# (Modules left loaded are already caught after each scenario.)
lab_final_leak_check() {
	[ "$LAB_LUSTRE" = 1 ] || [ "${LAB_PERF:-0}" = 1 ] && return 0
	if [ $# -gt 0 ]; then
		sleep 6
		echo scan >"$KMEMLEAK"
		lab_kmemleak_scan "scenarios $*"
	else
		lab_kmemleak_scan "the last scenario"
	fi
}

# Two rails to the other VM: tcp on eth0 and, on eth1, the net $3 (tcp1
# unless given: tcp puts both NIs on one net), LNet started with the extra
# lnet.ko parameters $1 and ksocklnd.ko parameters $2. No `peer add`: the
# client's lab_wait_server discovers the other VM as a Multi-Rail peer
# with a NID on each (and the other VM learns ours from our push).
lab_two_rails() {
	net1=${3:-tcp1}
	if [ "$net1" = tcp ]; then nets="tcp(eth0,eth1)"; else nets="tcp(eth0),$net1(eth1)"; fi
	# shellcheck disable=SC2086 # $1 and $2 are lists of parameters
	modprobe lnet networks="$nets" $1 || lab_fail "lnet did not load"
	# shellcheck disable=SC2086
	modprobe ksocklnd $2 || lab_fail "ksocklnd did not load"
	lnetctl lnet configure --all || lab_fail "configure"
	LAB_DISCOVER=$(lab_addr "$(lab_peer)" 1)@$net1
}

# Sends counted by the local NI with NID $1 (lnetctl net show -v).
lab_ni_sends() {
	lnetctl net show -v >/tmp/nets || lab_fail "net show -v"
	awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "send_count:" && cur == nid { print $2; exit }' /tmp/nets
}

# lab_elem_stat FILE NID SECTION KEY: KEY of SECTION (statistics,
# sent_stats...) of the NI or peer NI with NID NID in FILE, the output of
# `net show -v 3` or `peer show -v 3`.
lab_elem_stat() {
	awk -v nid="$2" -v sec="$3" -v key="$4:" '
		$1 == "-" && $2 == "nid:" { cur = $3; s = "" }
		NF == 1 && $1 ~ /:$/ { s = substr($1, 1, length($1) - 1) }
		cur == nid && s == sec && $1 == key { print $2; exit }' "$1"
}

# Receives counted by the local NI with NID $1 (lnetctl net show -v).
lab_ni_recvs() {
	lnetctl net show -v >/tmp/nets || lab_fail "net show -v"
	awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "recv_count:" && cur == nid { print $2; exit }' /tmp/nets
}

# lab_burst PEER OP COUNT [SECONDS]: COUNT PUTs (OP PUT) or GETs (OP GET)
# to PEER, one at a time through lnet_ulp, each given SECONDS (10) for its
# ACK or REPLY; prints "ok failed".
lab_burst() {
	dmesg -c >/dev/null
	if [ "$2" = GET ]; then g=1; else g=0; fi
	modprobe lnet_ulp mode=burst peer="$1" repeat="$3" get=$g op_timeout="${4:-10}" || lab_fail "burst did not run"
	lab_rmmod lnet_ulp
	dmesg | sed -n 's/.*lnet_ulp: burst of [0-9]* [A-Z]*s: \([0-9]*\) ok, \([0-9]*\) failed.*/\1 \2/p'
}

# lab_client_rails PEER REPEAT [ARGS]: lnet_ulp's client checks (and ARGS, e.g.
# sweep=1) against the server
# PEER, then REPEAT more PUTs; sets d0 and d1 to the sends they added on
# this node's NIs $me0 and $me1.
lab_client_rails() {
	s0=$(lab_ni_sends "$me0")
	s1=$(lab_ni_sends "$me1")
	if ! modprobe lnet_ulp mode=client peer="$1" repeat="$2" $3; then
		dmesg | grep -E 'lnet_ulp|LNet|lnet:|socklnd|o2iblnd' | tail -n 30
		lab_fail "client checks against $1 failed"
	fi
	lab_rmmod lnet_ulp
	d0=$(($(lab_ni_sends "$me0") - s0))
	d1=$(($(lab_ni_sends "$me1") - s1))
}

# The health value of the NI or peer NI with NID $2 in FILE $1, the
# output of `net show -v 3` or `peer show -v 3`.
lab_health_in() {
	awk -v nid="$2" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "health" && $2 == "value:" && cur == nid { print $3; exit }' "$1"
}

# The health value of the peer NI with NID $1 (lnetctl peer show -v 3).
lab_peer_ni_health() {
	lnetctl peer show -v 3 >/tmp/peer3 || lab_fail "peer show -v 3"
	lab_health_in /tmp/peer3 "$1"
}

# The health value of our NI with NID $1 (lnetctl net show -v 3).
lab_ni_health() {
	lnetctl net show -v 3 >/tmp/nets3 || lab_fail "net show -v 3"
	lab_health_in /tmp/nets3 "$1"
}

# lab_flood N [OP_TIMEOUT [WINDOW]]: N PUTs of $LAB_FLOOD_BYTES (1 MiB) to
# $p0 in the background (lnet_ulp's flood), each given OP_TIMEOUT (200)
# seconds, at most WINDOW at a time (0: all at once).
lab_flood() {
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=flood peer="$p0" repeat="$1" op_timeout="${2:-200}" \
		window="${3:-0}" flood_bytes="${LAB_FLOOD_BYTES:-1048576}" &
	flooding=$!
}

# lab_flood_end WHAT: waits for the flood (not in a subshell: it waits
# for its job), logs its outcome and sets ok, failed and unended.
lab_flood_end() {
	wait $flooding || lab_fail "flood did not run"
	line=$(dmesg | grep 'lnet_ulp: flood of' | tail -n 1)
	lab_log "$1: $line"
	lab_rmmod lnet_ulp
	# shellcheck disable=SC2046 # three numbers
	set -- $(echo "$line" | sed -n 's/.*: \([0-9]*\) ok, \([0-9]*\) failed, \([0-9]*\) without a final event$/\1 \2 \3/p')
	ok=${1:?no flood result}
	failed=$2
	unended=$3
}

# The peer whose primary NID is $1 was learnt by discovery with its NID
# $2 too: Multi-Rail, DISCOVERED and not configured in its peer state.
lab_check_learnt() {
	lnetctl peer show --nid "$1" -v 3 >/tmp/peer3 || lab_fail "peer show --nid $1 -v 3"
	grep -q "primary nid: $1\$" /tmp/peer3 || { cat /tmp/peer3; lab_fail "no peer with primary NID $1"; }
	grep -q "nid: $2\$" /tmp/peer3 || { cat /tmp/peer3; lab_fail "$2 was not learnt"; }
	grep -q "Multi-Rail: [Tt]rue" /tmp/peer3 || { cat /tmp/peer3; lab_fail "peer $1 is not Multi-Rail"; }
	state=$(awk '$1 == "peer" && $2 == "state:" { print $3; exit }' /tmp/peer3)
	[ $((state & 16)) -ne 0 ] || { cat /tmp/peer3; lab_fail "peer $1: state $state lacks DISCOVERED"; }
	[ $((state & 8)) -eq 0 ] || lab_fail "peer $1: state $state says configured"
	lab_log "peer $1: both NIDs, Multi-Rail, state $state"
}

# lab_wait_ni_health NID SECONDS: waits until the health of our NI NID is
# 1000, for SECONDS at most; prints the seconds it took.
lab_wait_ni_health() {
	n=0
	until [ "$(lab_ni_health "$1")" = 1000 ]; do
		n=$((n + 1))
		[ "$n" -lt "$2" ] || lab_fail "$1 at health $(lab_ni_health "$1") after $2 s" >&2
		sleep 1
	done
	echo "$n"
}

# lab_wait_health NID lt|eq VALUE SECONDS: waits until the health of the
# peer NI NID is below (lt) or at (eq) VALUE, for SECONDS at most; prints
# the seconds it took.
lab_wait_health() {
	n=0
	until [ "$(lab_peer_ni_health "$1")" -"$2" "$3" ]; do
		n=$((n + 1))
		# To stderr: callers read the seconds from stdout.
		[ "$n" -lt "$4" ] || { cat /tmp/peer3 >&2; lab_fail "$1 at health $(lab_peer_ni_health "$1"), not $2 $3 after ${4}s" >&2; }
		sleep 1
	done
	echo "$n"
}

# Sends to the peer NI with NID $1 (lnetctl peer show -v 2).
lab_peer_ni_sends() {
	lnetctl peer show -v 2 >/tmp/peers || lab_fail "peer show -v 2"
	awk -v nid="$1" '$1 == "-" && $2 == "nid:" { cur = $3 } $1 == "send_count:" && cur == nid { print $2; exit }' /tmp/peers
}

# Waits until the other VMs answer pings on every NIC.
lab_wait_peers() {
	v=0
	while [ "$v" -lt "$LAB_NVMS" ]; do
		if [ "$v" != "$LAB_VM" ]; then
			n=0
			while [ "$n" -lt "$LAB_NICS" ]; do
				a=$(lab_addr "$v" "$n")
				tries=0
				until ping -c 1 -W 1 "$a" >/dev/null 2>&1; do
					tries=$((tries + 1))
					[ "$tries" -lt 60 ] || lab_fail "vm$v not reachable at $a"
				done
				n=$((n + 1))
			done
		fi
		v=$((v + 1))
	done
}

# lab_serve_ulp [READY [DONE]]: serves lnet_ulp's buffers, answers "up?"
# on port READY (7000) until the client says "done" on port DONE (7001),
# then unloads lnet_ulp. The client uses lab_wait_server / lab_server_done.
lab_serve_ulp() {
	modprobe lnet_ulp mode=server || lab_fail "server did not start"
	nc -ll -p "${1:-7000}" -e /bin/true &
	ready=$!
	nc -l -p "${2:-7001}" </dev/null >/dev/null || lab_fail "no word from the client"
	kill $ready
	lab_rmmod lnet_ulp
}

# The server side of a two-VM scenario: lab_serve_ulp, then takes LNet
# down and unloads.
lab_serve_until_done() {
	lab_serve_ulp
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ksocklnd
	lab_rmmod lnet
}

# In VM 1 (the server of a two-VM scenario): serves until the client is
# done, then ends the scenario.
lab_serve_if_server() {
	if [ "$LAB_VM" = 1 ]; then
		lab_serve_until_done
		exit 0
	fi
}

# Waits until the server at address $1 answers (on port $2, 7000 unless
# given); after lab_two_rails, discovers it and checks that its second NID
# was learnt.
lab_wait_server() {
	tries=0
	# Every quarter of a second, 480 tries: the server is often a module
	# load away.
	until nc -w 1 "$1" "${2:-7000}" </dev/null >/dev/null 2>&1; do
		tries=$((tries + 1))
		[ "$tries" -lt 480 ] || lab_fail "the server never came up"
		sleep 0.25
	done
	if [ -n "$LAB_DISCOVER" ]; then
		lnetctl discover "$1@tcp" >/tmp/disc || { cat /tmp/disc; lab_fail "discover $1@tcp"; }
		grep -q "nid: $LAB_DISCOVER\$" /tmp/disc || { cat /tmp/disc; lab_fail "discovery did not learn $LAB_DISCOVER"; }
	fi
}

# Tells the server at address $1 that the client is done.
lab_server_done() {
	lab_tell "$1" 7001
}

# Tells the VM at address $1, listening with `nc -l -p $2`, to go on, or
# the word $3 (retrying while it is not listening yet).
lab_tell() {
	tries=0
	until echo "${3:-done}" | nc -w 5 "$1" "$2"; do
		tries=$((tries + 1))
		[ "$tries" -lt 30 ] || lab_fail "cannot tell $1 (port $2)${3:+: $3}"
		sleep 2
	done
}

# A node of a mixed lab (lnet-rs, or Lustre's own with LAB_LUSTRE=1) set
# up as its administrator would: net $2 (tcp unless given) on eth0, and on
# eth1 the net $1 (tcp1 unless given), defaults. o2ib nets run on
# Soft-RoCE (rxe0 on eth0, rxe1 on eth1) with ko2iblnd, loaded with
# $LAB_LND_ARGS (as is ksocklnd), lnet.ko with $LAB_LNET_ARGS. Sets side, peer,
# lnd, me0/me1 (this node's NIDs) and p0/p1 (the other node's).
lab_interop_setup() {
	[ "${LAB_CLNET_NODE:-0}" = 1 ] && lab_clnet_use
	net1=${1:-tcp1}
	net0=${2:-tcp}
	peer=$(lab_peer)
	me0=$(lab_addr "$LAB_VM" 0)@$net0
	me1=$(lab_addr "$LAB_VM" 1)@$net1
	p0=$(lab_addr "$peer" 0)@$net0
	p1=$(lab_addr "$peer" 1)@$net1
	side=lnet-rs
	[ "$LAB_LUSTRE" = 1 ] && side=Lustre
	[ "${LAB_CLNET:-0}" = 1 ] && side="Lustre's LNet"
	# Each rail's LND (both, for rails of two kinds): lnd names the first,
	# lnds all of them; an o2ib rail runs over its NIC's rxe device.
	lnds= rxes=
	nic=0
	for n in "$net0" "$net1"; do
		l=ksocklnd
		case "$n" in
		none) continue ;;
		o2ib*) l=ko2iblnd rxes="$rxes $nic" ;;
		esac
		case " $lnds " in *" $l "*) ;; *) lnds="$lnds $l" ;; esac
		nic=1
	done
	lnds=${lnds# }
	lnd=${lnds%% *}
	dmesg -c >/dev/null
	for nic in $rxes; do
		rdma link add "rxe$nic" type rxe netdev "eth$nic" || lab_fail "$side: rxe$nic"
	done
	# LAB_LNET_ARGS: lnet.ko's parameters, split, on either LNet.
	if [ "${LAB_CLNET:-0}" != 1 ] && [ -n "${LAB_LNET_ARGS:-}" ]; then
		# shellcheck disable=SC2086 # a list of parameters
		modprobe lnet $LAB_LNET_ARGS || lab_fail "$side: lnet did not load"
	fi
	for l in $lnds; do
		# LAB_LND_ARGS: parameters of the first LND, split.
		args=
		[ "$l" = "$lnd" ] && args=${LAB_LND_ARGS:-}
		if [ "${LAB_CLNET:-0}" = 1 ]; then
			# shellcheck disable=SC2086 # a list of parameters
			insmod "/opt/clnet/$l.ko" $args || lab_fail "$side: $l did not load"
		else
			# shellcheck disable=SC2086 # a list of parameters
			modprobe "$l" $args || lab_fail "$side: $l did not load"
		fi
	done
	lnetctl lnet configure || lab_fail "$side: configure"
	if [ "$net1" = "$net0" ]; then
		lnetctl net add --net "$net0" --if eth0,eth1 || lab_fail "$side: net add $net0 on eth0,eth1"
	elif [ "$net1" = none ]; then
		# One rail: eth0's.
		lnetctl net add --net "$net0" --if eth0 || lab_fail "$side: net add $net0"
	else
		lnetctl net add --net "$net0" --if eth0 || lab_fail "$side: net add $net0"
		lnetctl net add --net "$net1" --if eth1 || lab_fail "$side: net add $net1"
	fi
}

# Once both nodes are up (each answers on port 7000 until it kills
# $ready), pings both NIDs of the other, each reply listing both.
lab_interop_ping_all() {
	nc -ll -p 7000 -e /bin/true &
	ready=$!
	lab_wait_server "$(lab_addr "$peer" 0)"
	for n in "$p0" "$p1"; do
		i=0
		until lnetctl ping "$n" --timeout 10 >/tmp/ping 2>&1; do
			i=$((i + 1))
			[ $i -lt 5 ] || { cat /tmp/ping; lab_fail "$side: no ping reply from $n"; }
			sleep 2
		done
		grep -q "nid: $p0" /tmp/ping && grep -q "nid: $p1" /tmp/ping ||
			{ cat /tmp/ping; lab_fail "$side: ping reply from $n lacks the peer's NIDs"; }
	done
	lab_log "$side pinged $p0 and $p1"
}

# lab_interop_serve READY DONE: serves lnet_ulp's buffers, says so on port
# READY until the client says it is done on port DONE.
lab_interop_serve() {
	modprobe lnet_ulp mode=server || lab_fail "$side: server did not start"
	nc -ll -p "$1" -e /bin/true &
	up=$!
	nc -l -p "$2" </dev/null >/dev/null || lab_fail "$side: no word from the client"
	kill $up
	dmesg | grep -q 'lnet_ulp: peer done' || lab_fail "$side: the client's last PUT never came"
	lab_rmmod lnet_ulp
}

# lab_interop_client READY DONE [ARGS]: waits for the other node's server, runs
# lnet_ulp's client checks and 24 more PUTs against $p0, checks that both
# of this node's NIs sent, and tells the server.
lab_interop_client() {
	lab_wait_server "$(lab_addr "$peer" 0)" "$1"
	t0=$(date +%s)
	lab_client_rails "$p0" 24 "$3"
	lab_log "$side client: PUT/GET 4 KiB and 1 MiB and 24 PUTs in $(($(date +%s) - t0))s; sends on $me0: $d0, on $me1: $d1"
	[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] || lab_fail "$side client: not both rails used ($d0, $d1)"
	lab_tell "$(lab_addr "$peer" 0)" "$2"
}

# In a lab with Lustre's file system (lustrefs=1): Lustre's own C LNet
# from the same build, in place of ours, for this scenario: its lnet.ko by
# path (its names are ours, so modprobe cannot tell them apart), its
# lnetctl first on PATH. lab_interop_setup then loads its LND.
lab_clnet_use() {
	side="Lustre's LNet"
	modprobe libcfs || lab_fail "$side: libcfs did not load"
	# sunrpc_addr may stay from a scenario before: it is the same module.
	grep -q "^sunrpc_addr " /proc/modules || insmod /opt/clnet/sunrpc_addr.ko ||
		lab_fail "$side: sunrpc_addr did not load"
	# shellcheck disable=SC2086 # a list of parameters
	insmod /opt/clnet/lnet.ko ${LAB_LNET_ARGS:-} || lab_fail "$side: lnet did not load"
	LAB_CLNET=1
	PATH=/opt/clnet:$PATH
	export LAB_CLNET PATH
}

# Takes down what lab_interop_setup started, and Lustre's modules too.
lab_interop_teardown() {
	lnetctl lnet unconfigure || lab_fail "$side: unconfigure"
	for l in $lnds; do
		lab_rmmod "$l"
	done
	lab_rmmod lnet
	for nic in $rxes; do
		rdma link delete "rxe$nic"
	done
	# Lustre's libcfs: Lustre's LNet depends on it, and ours pins it while
	# its lnet_lnd_timeout sits in libcfs's debugfs lnet/ (lnet_debugfs.c).
	if grep -q "^libcfs " /proc/modules; then
		lab_rmmod libcfs
	fi
	if [ "$LAB_LUSTRE" = 1 ] || [ "${LAB_CLNET:-0}" = 1 ]; then
		lab_rmmod sunrpc_addr
	fi
}

# lab_one_rail: LNet and ksocklnd on tcp over eth0 alone, configured.
lab_one_rail() {
	modprobe lnet networks="tcp(eth0)" || lab_fail "lnet did not load"
	modprobe ksocklnd || lab_fail "ksocklnd did not load"
	lnetctl lnet configure --all || lab_fail "configure"
}

# Failover benchmarks (bench_failover): steady traffic to VM 1 while a
# rail is cut, sampled as series for the plots.

# lab_bench_sample TAG: one point of the health series: the time, the
# sends of $me0 and $me1, and the health of $me1 and of the peer's $p1. A
# hung lnetctl is reported, not waited on.
lab_bench_sample() {
	timeout 30 lnetctl net show -v 3 >/tmp/bench_nets || lab_fail "net show -v 3 failed or hung"
	timeout 30 lnetctl peer show -v 3 >/tmp/bench_peers || lab_fail "peer show -v 3 failed or hung"
	lab_log "bench-series $1 $(now_ms)" \
		"$(lab_elem_stat /tmp/bench_nets "$me0" statistics send_count)" \
		"$(lab_elem_stat /tmp/bench_nets "$me1" statistics send_count)" \
		"$(lab_health_in /tmp/bench_nets "$me1")" \
		"$(lab_health_in /tmp/bench_peers "$p1")"
}

# lab_bench_watch TAG HOW UNTIL_MS: the health series every 0.5 s until
# UNTIL_MS (over LNet; MPTCP has none).
lab_bench_watch() {
	while [ "$(now_ms)" -lt "$3" ]; do
		[ "$2" = lnet ] && lab_bench_sample "$1"
		sleep 0.5
	done
}

# lab_rail_bytes FROM_MS TO_MS COLUMN: bytes rail_sample saw sent on
# COLUMN's rail (2: eth0, 3: eth1) between the two times.
lab_rail_bytes() {
	awk -v a="$1" -v b="$2" -v c="$3" '$1 >= a && $1 <= b { if (!n++) f = $c; l = $c }
		END { print l - f }' /tmp/rails
}

# The time given to a cut's traffic: 5 s before the cut, then long enough
# for an operation caught on the cut rail to end (the LND's timeout, then
# its resend or the 30 s deadline of its ACK).
BENCH_CUT_SECS=50

# lab_bench_cut TAG NAME HOW COMMAND...: steady traffic to VM 1 (HOW: lnet,
# 8 PUTs of 64 KiB always in flight, to $p0; or mptcp, one MPTCP stream
# to tcp_bench on $paddr:7100) for BENCH_CUT_SECS, COMMAND 5 s into it.
# The bytes each rail sends are sampled every 100 ms (rail_sample; LNet's
# o2ib goes out through the same interfaces), and over LNet the health
# every 0.5 s. Rail 1 must carry traffic before the cut and rail 0 after
# it; the figures are the flow's longest stall (the longest time without
# an operation ending well, or a write waiting), the longest PUT and the
# failures the ULP saw.
lab_bench_cut() {
	tag=$1 name=$2 how=$3
	shift 3
	dmesg -c >/dev/null
	t0=$(now_ms)
	rail_sample 100 $((BENCH_CUT_SECS + 2)) eth0 eth1 >/tmp/rails &
	rs=$!
	if [ "$how" = lnet ]; then
		modprobe lnet_ulp mode=steady peer="$p0" window=8 flood_bytes=65536 \
			seconds=$BENCH_CUT_SECS op_timeout=30 >/tmp/traffic 2>&1 &
	else
		tcp_bench steady "$paddr" 7100 $BENCH_CUT_SECS mptcp >/tmp/traffic 2>&1 &
	fi
	tr=$!
	lab_bench_watch "$tag" "$how" $((t0 + 5000))
	"$@" || lab_fail "$name: cut failed"
	cut_ms=$(now_ms)
	lab_log "bench-cut $tag $cut_ms"
	lab_log "bench cut: $name"
	lab_bench_watch "$tag" "$how" $((t0 + BENCH_CUT_SECS * 1000))
	wait $tr || lab_fail "$name: the traffic failed: $(cat /tmp/traffic)"
	wait $rs
	awk -v t="$tag" '{ print "lab: bench-rails", t, $1, $2, $3 }' /tmp/rails
	before=$(lab_rail_bytes $((t0 + 1000)) "$cut_ms" 3)
	after=$(lab_rail_bytes $((cut_ms + 30000)) $((t0 + BENCH_CUT_SECS * 1000)) 2)
	lab_log "$name: rail 1 sent $before bytes in the 4 s before the cut, rail 0 $after bytes from 30 s after it"
	[ "$after" -gt 1000000 ] || lab_fail "$name: eth0 carries nothing after the cut"
	if [ "$how" = lnet ]; then
		[ "$before" -gt 100000 ] || lab_fail "$name: eth1 carries nothing before the cut"
		lab_rmmod lnet_ulp
		line=$(dmesg | grep 'lnet_ulp: steady PUTs' | tail -n 1)
		[ -n "$line" ] || lab_fail "$name: no word from the steady PUTs"
		set -- $(echo "$line" | sed 's/.*: \([0-9]*\) ok, \([0-9]*\) failed, \([0-9]*\) lost, longest \([0-9]*\) ms, longest stall \([0-9]*\) ms from \([0-9]*\) ms.*/\1 \2 \3 \4 \5 \6/')
		[ $# = 6 ] || lab_fail "$name: cannot read '$line'"
		[ "$3" = 0 ] || lab_fail "$name: $3 PUTs never ended"
		lab_log "bench: failover after $name: longest stall of the flow $5 ms ($(($6 - cut_ms)) ms from the cut), longest PUT $4 ms, $2 ULP-visible PUT failures, $1 PUTs ok (8 of 64 KiB in flight)"
	else
		line=$(cat /tmp/traffic)
		set -- $(echo "$line" | sed -n 's/.*longest stall \([0-9]*\) ms from \([0-9]*\) ms.*/\1 \2/p')
		[ $# = 2 ] || lab_fail "$name: cannot read '$line'"
		lab_log "bench: failover after $name: longest stall of the flow $1 ms ($(($2 - cut_ms)) ms from the cut), no failures (one MPTCP stream over two subflows: ${line#*: })"
	fi
}

# The nonzero hardware counters of every rxe port (retries, RNR, sequence
# errors): what Soft-RoCE saw under a failure.
lab_rxe_counters() {
	for d in /sys/class/infiniband/rxe*/ports/1/hw_counters; do
		[ -d "$d" ] || continue
		dev=${d#/sys/class/infiniband/}
		dev=${dev%%/*}
		# One grep for the device, not a cat per counter (a fork costs
		# about 0.1 s under TCG).
		grep -H . "$d"/* 2>/dev/null | while IFS=: read -r f v; do
			[ "$v" = 0 ] || printf '  %s %s %s\n' "$dev" "${f##*/}" "$v"
		done
	done
}

# lab_bench_flood PEER MIB [ARG...]: MIB 1 MiB PUTs to PEER at once
# (lnet_ulp's flood, timed from the first post to the last ACK; ARGs go to
# lnet_ulp: window=N, get=1); every one must end well. Sets rate: MB/s
# (10^6 bytes). Called as a command, not in $(...): lab_fail and leak
# reports must reach the console.
lab_bench_flood() {
	fpeer=$1 fmib=$2
	shift 2
	dmesg -c >/dev/null
	modprobe lnet_ulp mode=flood peer="$fpeer" repeat="$fmib" op_timeout=300 "$@" ||
		lab_fail "flood did not run"
	lab_rmmod lnet_ulp
	line=$(dmesg | grep 'lnet_ulp: flood of' | tail -n 1)
	case "$line" in
	*": $fmib ok, 0 failed, 0 without a final event") ;;
	*) lab_fail "flood: $line" ;;
	esac
	us=$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "us:") print $(i - 1) }')
	rate=$(awk -v b=$((fmib * 1048576)) -v u="$us" 'BEGIN { printf "%.2f", b / u }')
}

# lab_bench_point PLOT SERIES X Y: a point of a benchmark's plot
# (scripts/bench_report.py draws each PLOT, one line per SERIES).
lab_bench_point() {
	lab_log "bench-point $1 $2 $3 $4"
}

# lab_rxe_links add|delete: Soft-RoCE rxe0 on eth0 and rxe1 on eth1.
lab_rxe_links() {
	for nic in 0 1; do
		if [ "$1" = add ]; then
			rdma link add "rxe$nic" type rxe netdev "eth$nic" || lab_fail "rxe$nic"
		else
			rdma link delete "rxe$nic"
		fi
	done
}
