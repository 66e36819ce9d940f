# lab: vms=2 nics=2 clnet=1 timeout=420
# lnetctl's YAML on both sides, key by key: the Lustre node runs `net show
# -v 3`, `peer show -v 3`, `global show`, `stats show`, `export`, and
# `ping` and `discover` of the other node, and
# sends what they print to the lnet-rs node, which runs the same commands
# and compares their shapes line by line: indentation column for column
# (Lustre prints what it reads over netlink in libyaml's layout, the rest
# in cYAML's), list dashes, keys in their order, and whether each value is
# a number, text or absent. Values may differ.
# Each side has the same nets (tcp on eth0, tcp1 on eth1) and, with no
# `peer add`, one Multi-Rail peer with both of the other's NIDs: the
# Lustre node's by discovering us, ours from the push that discovery ends
# with. The Lustre node connects first; on a rail it connected on, our
# pings back must open no connection of ours.
lab_interop_setup
# PEER stands for the other node's primary NID.
cmds="net_show_-v_3 peer_show_-v_3 global_show stats_show export ping_PEER discover_PEER"
collect() { # DIR
	mkdir -p "$1"
	for c in $cmds; do
		# shellcheck disable=SC2046 # the command's words
		lnetctl $(echo "$c" | tr _ ' ' | sed "s/PEER/$p0/") >"$1/$c" 2>&1 || lab_fail "$side: lnetctl $c"
	done
}
if [ "$LAB_LUSTRE" = 1 ]; then
	nc -ll -p 7000 -e /bin/true &
	up=$!
	nc -l -p 7042 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
	kill $up
	lnetctl discover "$p0" >/dev/null || lab_fail "Lustre: discover $p0"
	lnetctl ping "$p1" >/dev/null || lab_fail "Lustre: ping $p1"
	lab_tell "$(lab_addr "$peer" 0)" 7043
	collect /tmp/y
	tries=0
	until { for c in $cmds; do echo "=== $c"; cat "/tmp/y/$c"; done; echo "=== end"; } |
		nc -w 5 "$(lab_addr "$peer" 0)" 7040; do
		tries=$((tries + 1))
		[ "$tries" -lt 30 ] || lab_fail "cannot send the YAML"
		sleep 2
	done
	nc -l -p 7041 </dev/null >/dev/null || lab_fail "no word from lnet-rs"
else
	lab_wait_server "$(lab_addr "$peer" 0)"
	nc -l -p 7043 </dev/null >/dev/null &
	connected=$!
	lab_tell "$(lab_addr "$peer" 0)" 7042
	wait $connected
	# Lustre's discovery pushed its ping buffer to us: the peer it made
	# here is Multi-Rail with both NIDs.
	tries=0
	until lnetctl peer show --nid "$p0" >/tmp/peer 2>&1 &&
		grep -q "Multi-Rail: [Tt]rue" /tmp/peer && grep -q "nid: $p1" /tmp/peer; do
		tries=$((tries + 1))
		[ "$tries" -lt 10 ] || { cat /tmp/peer; lab_fail "the Lustre node's push did not teach us $p1"; }
		sleep 1
	done
	lab_log "learnt the Lustre node's NIDs from its push"
	# Where the Lustre node connected to us, we answer over its
	# connections and open none of ours, not even of a type it is still
	# opening (which it would refuse as a race). A rail it had not
	# connected on yet, our push back (Multi-Rail selection, as Lustre's)
	# may open.
	lnetctl ping "$p0" >/dev/null || lab_fail "ping $p0"
	lnetctl ping "$p1" >/dev/null || lab_fail "ping $p1"
	for n in "$p0" "$p1"; do
		if dmesg | grep -q "accepted [a-z-]* connection from $n\$" &&
			dmesg | grep "opened [a-z-]* connection to $n\$"; then
			lab_fail "connected to a Lustre node that had connected to us on $n"
		fi
	done
	# nc ends the sender's side as soon as ours is closed: its input stays
	# open (a FIFO we also hold for writing) until the YAML has all come.
	rm -f /tmp/hold && mkfifo /tmp/hold
	nc -l -p 7040 <>/tmp/hold >/tmp/lustre.all || lab_fail "no YAML from the Lustre node"
	tail -n 1 /tmp/lustre.all | grep -q "^=== end" || lab_fail "the Lustre node's YAML came cut short"
	collect /tmp/y
	lab_tell "$(lab_addr "$peer" 0)" 7041
	mkdir -p /tmp/l
	awk '/^=== / { f = "/tmp/l/" $2; next } { print > f }' /tmp/lustre.all
	for c in $cmds; do [ -s "/tmp/l/$c" ] || lab_fail "no output of lnetctl $c from the Lustre node"; done
	# One line per YAML line: indentation, "- " for a list item, the key,
	# and the value's kind (n number, s text, nothing when absent).
	shape() {
		awk '{
			match($0, /^ */); ind = RLENGTH; rest = substr($0, ind + 1)
			dash = ""; if (rest ~ /^- /) { dash = "- "; rest = substr(rest, 3) }
			if (match(rest, /^[^:]*:( |$)/)) {
				key = substr(rest, 1, RLENGTH); v = substr(rest, RLENGTH + 1)
				sub(/ $/, "", key)
			} else { key = ""; v = rest }
			kind = v == "" ? "" : (v ~ /^-?[0-9]+(\.[0-9]+)?$/ ? " n" : " s")
			printf "%" ind "s%s%s%s\n", "", dash, key, kind
		}' "$1"
	}
	differ=0
	for c in $cmds; do
		shape "/tmp/l/$c" >/tmp/shape-l
		shape "/tmp/y/$c" >/tmp/shape-y
		if diff /tmp/shape-l /tmp/shape-y >/tmp/d; then
			lab_log "lnetctl $(echo "$c" | tr _ ' '): same shape ($(wc -l </tmp/y/$c) lines)"
		else
			differ=$((differ + 1))
			lab_log "lnetctl $(echo "$c" | tr _ ' '): shapes differ (< Lustre, > lnet-rs):"
			sed 's/^/    /' /tmp/d
			lab_log "Lustre printed:"; sed 's/^/    /' "/tmp/l/$c"
			lab_log "lnet-rs printed:"; sed 's/^/    /' "/tmp/y/$c"
		fi
	done
	[ "$differ" = 0 ] || lab_fail "$differ lnetctl command(s) print another shape than Lustre's"
fi
lab_interop_teardown
