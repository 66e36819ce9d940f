# lab: vms=1 nics=2 lustrefs=1 lustretests=1 named=1 timeout=2100
# Lustre's own sanity-lnet.sh (its tree's lustre/tests, unchanged, in
# /opt/lustre: lab.py's add_lustre_tests) against lnet-rs: our lnet.ko and
# ksocklnd.ko driven by Lustre's lnetctl (/opt/clnet/lnetctl) and lctl
# (/usr/sbin/lctl), one node, the tests that need no router, no Lustre
# file system and no second node. Not in the default run (named=1): it
# takes minutes under TCG. doc/sanity-lnet.md lists each test's result
# and reason; this fails only when a test listed there as passing
# (SANITY_LNET_PASS below) does not pass.
#
# What the run needs beside Lustre's scripts, none of them edited:
# - LUSTRE_RMMOD: a wrapper around Lustre's lustre_rmmod, which unloads
#   the modules that depend on libcfs; our lnet.ko does not depend on
#   Lustre's libcfs.ko, so the wrapper then unloads ksocklnd and lnet.
# - udevadm: a stub (the lab has no udev; the framework reloads rules);
#   hostname: busybox's, with -I added; /dev/fd for bash.
# - KMEMLEAK=disabled: the framework and lustre_rmmod would clear
#   kmemleak's list, which the lab reads after each scenario.
# - FAIL_ON_ERROR=false: the framework goes on after a failed test.
# SANITY_LNET_ONLY=... (test numbers) narrows the run, for a quick look.
[ "${LAB_CLNET_NODE:-0}" = 1 ] && exit 0

# The tests that pass against lnet-rs (doc/sanity-lnet.md).
SANITY_LNET_PASS="0 1 7 14 18b 21 27 28 99a 104 150 199 245"
# Not run: they need routers or a second node (the framework's remote
# nodes, reached by pdsh), Lustre's file system modules (40 loads
# ptlrpc, which then holds LNet for every later test), another LND (o2ib,
# kfi), a compiler, or test Lustre's lnet_legacy2yaml (a Python
# converter with no LNet under it).
SANITY_LNET_SKIP="40 100 101 102 103 105 106 111 180 203 204 205 206 207 209 212 219
220 221 222 223 224 225 226 227 228 233 236 237 238 251 252 253 254 256 257 300 303
311 312 501 502 550"
i=600
while [ $i -le 629 ]; do
	SANITY_LNET_SKIP="$SANITY_LNET_SKIP $i"
	i=$((i + 1))
done
# A test that shows no progress for this long is taken as hung: the run
# is stopped and started again without it. The whole run stops after
# BUDGET_SECS, within the header's timeout.
HUNG_SECS=300
BUDGET_SECS=1800

S=/tmp/sanity
rm -rf "$S"
mkdir -p "$S/bin"
cat >"$S/bin/udevadm" <<'EOF'
#!/bin/sh
exit 0
EOF
cat >"$S/bin/lustre_rmmod" <<'EOF'
#!/bin/sh
# Our LND and LNet first (LNet unconfigured first, as lustre_rmmod does):
# our lnet.ko pins Lustre's libcfs.ko, which lustre_rmmod unloads with
# what depends on it, and ours does not show as depending on it.
case "$*" in
"" | ldiskfs)
	# Lustre's own modules over our LNet first, as lustre_rmmod would.
	if grep -q "^ptlrpc " /proc/modules; then
		/opt/lustre/scripts/lustre_rmmod ptlrpc || exit 1
	fi
	if grep -q "^lnet " /proc/modules; then
		lnetctl lnet unconfigure >/dev/null 2>&1
	fi
	for m in ksocklnd lnet; do
		if grep -q "^$m " /proc/modules; then
			rmmod "$m" || exit 1
		fi
	done
	;;
esac
exec /opt/lustre/scripts/lustre_rmmod "$@"
EOF
# The framework asks for the node's addresses the way net-tools does;
# busybox's hostname has no -I.
cat >"$S/bin/hostname" <<'EOF'
#!/bin/sh
if [ "$1" = -I ]; then
	/usr/sbin/ip -o addr show scope global | awk '{ sub("/.*", "", $4); printf "%s ", $4 } END { print "" }'
	exit 0
fi
exec /bin/busybox hostname "$@"
EOF
chmod +x "$S/bin/udevadm" "$S/bin/lustre_rmmod" "$S/bin/hostname"
# bash's process substitution reads /dev/fd, which devtmpfs lacks.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd

all=$(awk '$1 == "run_test" { print $2 }' /opt/lustre/tests/sanity-lnet.sh)
todo=
for t in ${SANITY_LNET_ONLY:-$all}; do
	case " $(echo $SANITY_LNET_SKIP) " in *" $t "*) continue ;; esac
	todo="$todo $t"
done
lab_log "sanity-lnet.sh: running$todo"

# run N TESTS: one run of sanity-lnet.sh over TESTS in $S/N, each result
# logged as it comes; a watchdog stops it when its output has not grown
# for HUNG_SECS, or when the budget is spent.
t0=$(cut -d. -f1 /proc/uptime)
run() {
	n=$1
	shift
	mkdir -p "$S/$n"
	(
		cd /opt/lustre/tests
		export PATH="$S/bin:/opt/clnet:$PATH" LUSTRE=/opt/lustre NAME=local \
			LNETCTL=/opt/clnet/lnetctl LCTL=/usr/sbin/lctl LUSTRE_RMMOD="$S/bin/lustre_rmmod" \
			KMEMLEAK=disabled TMP="$S/$n" ONLY="$*" SLOW=yes FAIL_ON_ERROR=false
		exec setsid bash ./sanity-lnet.sh
	) >"$S/$n/out" 2>&1 &
	pid=$!
	last=0 still=0 shown=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 10
		if [ -e "$S/$n/sanity-lnet.log" ]; then
			lines=$(grep -Ec '^(PASS|FAIL|SKIP) ' "$S/$n/sanity-lnet.log" || :)
			if [ "$lines" -gt "$shown" ]; then
				grep -E '^(PASS|FAIL|SKIP) ' "$S/$n/sanity-lnet.log" | tail -n $((lines - shown)) |
					sed 's/^/lab: sanity-lnet.sh: /'
				shown=$lines
			fi
		fi
		size=$(wc -c <"$S/$n/out")
		if [ "$size" = "$last" ]; then
			still=$((still + 10))
		else
			still=0 last=$size
		fi
		if [ "$still" -ge "$HUNG_SECS" ]; then
			lab_log "sanity-lnet.sh: no progress for ${HUNG_SECS}s, stopped"
			kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid"
			echo "HUNG" >"$S/$n/hung"
			break
		fi
		if [ $(($(cut -d. -f1 /proc/uptime) - t0)) -ge "$BUDGET_SECS" ]; then
			lab_log "sanity-lnet.sh: ${BUDGET_SECS}s spent, stopped"
			kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid"
			echo "BUDGET" >"$S/$n/budget"
			break
		fi
	done
	wait "$pid" 2>/dev/null || true
}

# result T: PASS, FAIL, SKIP or the empty string, from any run's log.
result() {
	cat "$S"/*/sanity-lnet.log 2>/dev/null | sed -En "s/^(PASS|FAIL|SKIP|HUNG|ABORT) $1( .*)?$/\1/p" | tail -n 1
}

n=0
while [ -n "$todo" ] && [ $n -lt 8 ]; do
	n=$((n + 1))
	run "$n" $todo
	left=
	hung=
	done=0
	for t in $todo; do
		if [ -n "$(result "$t")" ]; then
			done=$((done + 1))
		elif [ -e "$S/$n/budget" ]; then
			left="$left $t"
		elif [ -e "$S/$n/hung" ] && [ -z "$hung" ]; then
			# The first test without a result is the one that hung.
			hung=$t
			echo "HUNG $t" >>"$S/$n/sanity-lnet.log"
		else
			left="$left $t"
		fi
	done
	# A run that ended with tests left ran no further: its output's end
	# says why; without one result it would stop there again.
	if [ ! -e "$S/$n/hung" ] && [ ! -e "$S/$n/budget" ] && [ -n "$left" ]; then
		lab_log "sanity-lnet.sh stopped before$left; its output's end:"
		tail -n 40 "$S/$n/out"
		if [ "$done" = 0 ]; then
			break
		fi
		t=${left# }
		t=${t%% *}
		echo "ABORT $t" >>"$S/$n/sanity-lnet.log"
		left=${left# }
		left=${left#"$t"}
	fi
	todo=$left
	if [ -e "$S/$n/budget" ]; then
		lab_log "sanity-lnet.sh: not run, out of time:$todo"
		break
	fi
done

# Each test's result, and for a failure the framework's reason and the
# end of the test's log.
pass= fail=
for t in $(echo $all); do
	r=$(result "$t")
	if [ -z "$r" ]; then
		continue
	fi
	echo "SANITY-LNET $t $r"
	if [ "$r" = PASS ]; then
		pass="$pass $t"
	elif [ "$r" != SKIP ]; then
		fail="$fail $t"
		grep -h "test_$t: @@@@@@" "$S"/*/sanity-lnet.log "$S"/*/out 2>/dev/null | head -n 3
		for l in "$S"/*/test_logs/*/sanity-lnet.test_"$t".test_log.*.log; do
			if [ -e "$l" ]; then
				tail -n 30 "$l" | sed "s/^/  $t| /"
			fi
		done
	else
		grep -h "test_$t: SKIP\|SKIP: sanity-lnet test_$t" "$S"/*/out 2>/dev/null | head -n 1
	fi
done
# What the last test left: LNet down, our modules and Lustre's libcfs out.
"$S/bin/lustre_rmmod" >/dev/null 2>&1 || lab_log "sanity-lnet.sh: lustre_rmmod failed at the end"
lab_log "sanity-lnet.sh: passed:$pass"
lab_log "sanity-lnet.sh: not passed:$fail"
for t in $SANITY_LNET_PASS; do
	case " $(echo ${SANITY_LNET_ONLY:-$all}) " in *" $t "*) ;; *) continue ;; esac
	[ "$(result "$t")" = PASS ] || lab_fail "sanity-lnet test $t, listed as passing, did not pass"
done
