# lab: vms=2 nics=2 timeout=60
# The lab can fail: a module that leaks on purpose is reported by kmemleak.
# (The console judge itself is unit-tested on the host: tests/lab/test_lab.py.)
lab_kmemleak_wait_idle
insmod "$MODDIR/lab_leak.ko"
sleep 6
# The scan's own console line would fail this scenario; keep it in dmesg only.
# The module leaks 16 objects; stale pointer copies can hide one of them, and
# a fresh leak may need a second scan, so scan up to four times.
dmesg -n 1
found=
for try in 1 2 3 4; do
	echo scan >"$KMEMLEAK" || lab_fail "kmemleak scan refused: is kmemleak disabled?"
	report=$(cat "$KMEMLEAK")
	case "$report" in
	*"unreferenced object"*lab_leak_lose*)
		found=$try
		break
		;;
	esac
	sleep 1
done
# lib.sh's report confirms what one scan found with a second scan: a real
# leak must stay (its output kept off the console, which it would fail).
LAB_RESCAN="echo scan >$KMEMLEAK" lab_kmemleak_report "the deliberate leak" >/tmp/lab_report
dmesg -n 7
[ -z "$found" ] || grep -q "^LAB-LEAK after the deliberate leak:" /tmp/lab_report ||
	lab_fail "a second scan did not confirm the deliberate leak: $(head -n 1 /tmp/lab_report)"
# The report names the allocator while the module is loaded (the size shown
# is the slab object's, 256, not the 200 asked for).
[ -n "$found" ] || lab_fail "kmemleak did not report the deliberate leak from lab_leak_lose"
dmesg | grep -q "new suspected memory leak" || lab_fail "no kmemleak line in dmesg"
lab_log "kmemleak reported the deliberate leak from lab_leak_lose (scan $found)"
rmmod lab_leak
