# lab: vms=2 nics=2 timeout=240
# CPU partitions: lnet.ko builds cfs_cpt_tab at load from its
# cpu_npartitions and cpu_pattern parameters; lnet_cpt.ko calls every
# cfs_cpt_*/cfs_percpt_* export as Lustre's modules do (service threads
# bound to partitions, per-partition data under kmemleak, a private table
# built node by node). Layouts beyond the VM's CPUs are covered on the host
# (lnet-core cpt.rs).
ncpu=$(grep -c '^processor' /proc/cpuinfo)

# Loads lnet with the arguments given, checks the table with lnet_cpt
# expecting $1 partitions, and unloads both.
cpt_run() { # expected lnet-arguments...
	want=$1
	shift
	dmesg -c >/dev/null
	modprobe lnet "$@" || lab_fail "lnet $* did not load"
	dmesg | grep -q "npartitions: $want\$" || { dmesg | tail -n 5; lab_fail "lnet $*: not $want partitions"; }
	if ! modprobe lnet_cpt expect="$want"; then
		dmesg | grep 'lnet_cpt' | tail -n 20
		lab_fail "lnet_cpt checks failed with lnet $*"
	fi
	lab_log "$* -> $(dmesg | grep 'lnet_cpt: all checks passed')"
	# One kmemleak scan at the end, not one per unload: each costs seconds
	# under KASAN, and a leak of any run is still there then.
	rmmod lnet_cpt || lab_fail "lnet_cpt will not unload"
	rmmod lnet || lab_fail "lnet will not unload"
}

# Refused at load with a clear message naming the problem.
cpt_refused() { # message lnet-arguments...
	msg=$1
	shift
	dmesg -c >/dev/null
	if modprobe lnet "$@" 2>/dev/null; then
		rmmod lnet
		lab_fail "lnet $* loaded"
	fi
	dmesg | grep "can't build the CPU partition table" | grep -q "$msg" ||
		{ dmesg | tail -n 5; lab_fail "lnet $*: no error saying '$msg'"; }
	lab_log "refused: $(dmesg | grep "can't build the CPU partition table")"
}

# Lustre's default: cpu_pattern="N", one partition per node (one here).
cpt_run 1
modprobe lnet || lab_fail "lnet"
lab_expect_eq "$(cat /sys/module/lnet/parameters/cpu_pattern)" "N" "default cpu_pattern"
lab_expect_eq "$(cat /sys/module/lnet/parameters/cpu_npartitions)" "0" "default cpu_npartitions"
echo 2 >/sys/module/lnet/parameters/cpu_npartitions 2>/dev/null && lab_fail "cpu_npartitions is writable"
lab_rmmod lnet
cpt_run 1 cpu_npartitions=1
cpt_run 1 cpu_pattern=
cpt_run 1 'cpu_pattern="0[0]"'
cpt_run 1 'cpu_pattern="N 0[0]"'
if [ "$ncpu" -ge 2 ]; then
	cpt_run 2 cpu_npartitions=2
else
	cpt_refused "2 partitions asked for, 1 possible" cpu_npartitions=2
fi
cpt_refused "without its ']'" 'cpu_pattern="0[0"'
# A partition named twice is refused as such once there are CPUs enough
# for two partitions; on one CPU the count is refused first.
if [ "$ncpu" -ge 2 ]; then
	cpt_refused "given twice" 'cpu_pattern="0[0] 0[0]"'
else
	cpt_refused "2 partitions asked for, 1 possible" 'cpu_pattern="0[0] 0[0]"'
fi
cpt_refused "number range" 'cpu_pattern="0[0-x]"'
cpt_refused "expected 1 partitions, found 0" 'cpu_pattern="N "'
lab_kmemleak_scan "the partition tables"
