# lab: vms=2 nics=2 timeout=300
# A lazy portal over ksocklnd, as PtlRPC's request portals are: VM 0 PUTs
# 4 KiB to VM 1 where no buffer matches, so the request waits in LNet with
# ksocklnd's connection as its receive context. VM 0 then restarts LNet
# and connects again: VM 1 closes the connection the request came on
# (with its siblings as a send fails when VM 0 goes, or as stale when its
# new incarnation comes), and the reaper lets go of it. Only then does VM 1
# post the buffer; the request must end with -EIO (its payload went with
# the connection), with no use of the freed connection (KASAN). A second
# waiting request is dropped when VM 1 deletes the NI (`net del`). In
# between, the same for a request held by a delay rule with the buffer
# posted: VM 0 restarts while VM 1 holds it, and once the rule is deleted
# it ends with -EIO. Last, a request LNet has answered (its buffer just
# posted) when the NI goes, before the receive thread could read it: the
# close fails it, outside ksocklnd's receive lock (lnet_finalize's
# might_sleep reports a call under it).
peer=$(lab_peer)
paddr=$(lab_addr "$peer" 0)
dmesg -c >/dev/null
modprobe lnet networks="tcp(eth0)" || lab_fail "lnet did not load"
modprobe ksocklnd || lab_fail "ksocklnd did not load"
lnetctl lnet configure --all || lab_fail "configure"

if [ "$LAB_VM" = 1 ]; then
	me=$(lab_addr 1 0)@tcp
	modprobe lnet_ulp mode=server lazy=1 || lab_fail "server did not start"
	nc -ll -p 7000 -e /bin/true &
	ready=$!
	# stale WHAT: the connection the request came on, which stopped
	# reading while it waited, was closed: with its siblings when a send
	# on one of them failed as VM 0 went (as Lustre's
	# ksocknal_close_conn_and_siblings), or as stale (-116) when VM 0
	# came back; gives the reaper (once a second) time to let go of it.
	stale() {
		i=0
		while ! dmesg | grep -q "$me closed [a-z-]* connection with $paddr@tcp: -"; do
			i=$((i + 1))
			[ $i -lt 30 ] || lab_fail "the $1 request's connection was never closed"
			sleep 1
		done
		sleep 3
	}
	# ends_eio WHAT: the request, let go, ends with -EIO (its payload went
	# with the connection).
	ends_eio() {
		i=0
		until dmesg | grep -q 'lnet_ulp: lazy PUT ended'; do
			i=$((i + 1))
			[ $i -lt 10 ] || lab_fail "the $1 PUT never ended"
			sleep 1
		done
		dmesg | grep 'lazy PUT ended' | sed 's/^/  /'
		dmesg | grep -q 'lnet_ulp: lazy PUT ended: status -5,' ||
			lab_fail "the $1 PUT whose connection died did not end with -EIO"
	}
	nc -l -p 7003 </dev/null >/dev/null || lab_fail "no word from the client"
	stale waiting
	echo 1 >/sys/module/lnet_ulp/parameters/attach || lab_fail "attach"
	ends_eio waiting
	# A delay rule holds the next PUT from VM 0 (on the receive path, with
	# its connection as receive context), the buffer posted this time.
	dmesg -c >/dev/null
	lctl net_delay_add -s "$paddr@tcp" -d "$me" -p 20 -m PUT -r 1 -l 600 >/dev/null ||
		lab_fail "net_delay_add"
	echo 1 >/sys/module/lnet_ulp/parameters/attach || lab_fail "attach again"
	echo held | nc -w 5 "$paddr" 7007 || lab_fail "cannot tell the client"
	nc -l -p 7008 </dev/null >/dev/null || lab_fail "no word from the client"
	stale held
	# Deleting the rule releases the PUT: LNet asks the dead connection
	# for its payload.
	lctl net_delay_del -a >/dev/null || lab_fail "net_delay_del"
	ends_eio held
	echo attached | nc -w 5 "$paddr" 7005 || lab_fail "cannot tell the client"
	nc -l -p 7004 </dev/null >/dev/null || lab_fail "no word from the client"
	lnetctl net del --net tcp || lab_fail "net del"
	dmesg | grep -q "Dropping PUT from $paddr@tcp to $me on $me: its NI is going away" ||
		lab_fail "the request waiting on the deleted NI was not dropped"
	lnetctl net add --net tcp --if eth0 || lab_fail "net add"
	echo deleted | nc -w 5 "$paddr" 7006 || lab_fail "cannot tell the client"
	nc -l -p 7009 </dev/null >/dev/null || lab_fail "no word from the client"
	# The buffer is posted and the NI deleted by one real-time task: on
	# our one CPU the receive thread LNet wakes cannot run until that task
	# waits, and ksocklnd closes every connection before it waits for
	# anything. Neither RT throttling nor the fair server may let it run.
	rt=/proc/sys/kernel/sched_rt_runtime_us
	fs=/sys/kernel/debug/sched/fair_server/cpu0/runtime
	lab_read $rt
	rt_was=$LAB_V
	lab_read $fs
	fs_was=$LAB_V
	echo -1 >$rt && echo 0 >$fs || lab_fail "cannot let a real-time task keep the CPU"
	dmesg -c >/dev/null
	rc=0
	chrt -f 50 sh -c 'echo 1 >/sys/module/lnet_ulp/parameters/attach &&
		exec lnetctl net del --net tcp' || rc=$?
	echo "$fs_was" >$fs
	echo "$rt_was" >$rt
	[ $rc = 0 ] || lab_fail "attach and net del"
	dmesg | grep -q "$me fails the receive from $paddr@tcp with its connection" ||
		lab_fail "the receive thread got the answered request before the close"
	ends_eio answered
	echo done | nc -w 5 "$paddr" 7010 || lab_fail "cannot tell the client"
	kill $ready
	lab_rmmod lnet_ulp
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ksocklnd
	lab_rmmod lnet
	exit 0
fi

lazy_put() {
	modprobe lnet_ulp mode=burst lazy=1 repeat=1 op_timeout=5 peer="$paddr@tcp" ||
		lab_fail "burst did not run"
	# Waiting on the lazy portal, it is never acknowledged.
	dmesg | grep -q 'burst of 1 PUTs: 0 ok, 1 failed' ||
		lab_fail "the lazy PUT was answered"
	lab_rmmod lnet_ulp
}

# Restart: a new incarnation.
restart() {
	lnetctl lnet unconfigure || lab_fail "unconfigure"
	lab_rmmod ksocklnd
	lab_rmmod lnet
	dmesg -c >/dev/null
	modprobe lnet networks="tcp(eth0)" || lab_fail "lnet did not load again"
	modprobe ksocklnd || lab_fail "ksocklnd did not load again"
	lnetctl lnet configure --all || lab_fail "configure again"
	lnetctl ping "$paddr@tcp" --timeout 20 >/dev/null || lab_fail "no ping after the restart"
}

lab_wait_server "$paddr"
lazy_put
restart
echo restarted | nc -w 5 "$paddr" 7003 || lab_fail "cannot tell the server"
nc -l -p 7007 </dev/null >/dev/null || lab_fail "no word from the server"
# Held by VM 1's delay rule.
lazy_put
restart
echo restarted | nc -w 5 "$paddr" 7008 || lab_fail "cannot tell the server"
nc -l -p 7005 </dev/null >/dev/null || lab_fail "no word from the server"
dmesg -c >/dev/null
lazy_put
echo waiting | nc -w 5 "$paddr" 7004 || lab_fail "cannot tell the server"
nc -l -p 7006 </dev/null >/dev/null || lab_fail "no word from the server"
# VM 1 has its NI again; this one is answered as the NI goes.
lazy_put
echo waiting | nc -w 5 "$paddr" 7009 || lab_fail "cannot tell the server"
nc -l -p 7010 </dev/null >/dev/null || lab_fail "no word from the server"
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
