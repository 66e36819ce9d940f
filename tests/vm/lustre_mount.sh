# lab: vms=2 nics=2 lustrefs=1 timeout=1500 named=1
# Lustre itself on lnet-rs: both VMs run our lnet.ko and ksocklnd.ko with
# Lustre's own modules, built unchanged from its source against this
# kernel (scripts/build-lustre.sh), loaded on top: PtlRPC calls our
# LNetPut/LNetGet. VM 1 is the server: an MGS with its MDT and two OSTs
# on Lustre's memory-backed OSD (osd-wbcfs). VM 0 is the
# client: it mounts the file system over both rails (tcp and tcp1), checks
# `lfs df` and every import FULL, writes a large file and a thousand small
# ones, reads them back from the servers (its cache dropped) and compares,
# runs Lustre's fsx for a bounded number of operations, then unmounts.
# Both sides unload every module, Lustre's and ours: any splat, leak or
# module that stays fails the scenario. Named only (named=1) until it has
# passed in a whole run of the lab.
lab_interop_setup
srv=$(lab_addr 1 0)
cli=$(lab_addr 0 0)
mgs="$srv@tcp,$(lab_addr 1 1)@tcp1"
FS=lfs

lustre_unload() {
	# Dependents first, as many passes as the dependency chains are long.
	for pass in 1 2 3 4 5 6 7 8; do
		for m in $(lsmod | awk 'NR > 1 { print $1 }'); do
			case "$m" in lnet | ksocklnd | ko2iblnd) continue ;; esac
			rmmod "$m" 2>/dev/null
		done
	done
	left=$(lsmod | awk 'NR > 1 && $1 !~ /^(lnet|ksocklnd|ko2iblnd)$/ { print $1 }')
	[ -z "$left" ] || lab_fail "Lustre's modules will not unload: $left"
}

if [ "$LAB_VM" = 1 ]; then
	for m in ptlrpc osd_wbcfs mgs mgc mdt mdd lod osp ofd lfsck lquota; do
		modprobe "$m" || lab_fail "server: modprobe $m"
	done
	# Lustre's memory-backed OSD (scripts/build-lustre.sh says why not
	# ldiskfs): a target is named by the environment, as Lustre's tests
	# do it, and mounted from the device lustre-wbcfs.
	wbcfs_target() { # type index mountpoint
		mkdir -p "$3"
		OSD_WBC_TGT_TYPE=$1 OSD_WBC_INDEX=$2 OSD_WBC_MGS_NID=$mgs OSD_WBC_PRIMARY_MDT=1 \
			OSD_WBC_FSNAME=$FS mount.lustre lustre-wbcfs "$3" >/tmp/mount.out 2>&1 ||
			{ cat /tmp/mount.out; dmesg | tail -40; lab_fail "mount $1$2"; }
	}
	t0=$(date +%s)
	wbcfs_target MDT 0 /mnt/mdt
	wbcfs_target OST 0 /mnt/ost0
	wbcfs_target OST 1 /mnt/ost1
	lab_log "server: MGS, MDT and two OSTs up in $(($(date +%s) - t0)) s"
	lab_tell "$cli" 7101
	# Until the client has unmounted.
	nc -l -p 7102 </dev/null >/dev/null || lab_fail "no word from the client"
	lctl get_param -n obdfilter.*.num_exports mdt.*.num_exports 2>/dev/null | sed 's/^/  exports: /'
	umount /mnt/ost1 && umount /mnt/ost0 && umount /mnt/mdt || lab_fail "server: umount"
else
	nc -l -p 7101 </dev/null >/dev/null || lab_fail "no word from the server"
	modprobe lustre || lab_fail "client: modprobe lustre"
	mkdir -p /mnt/lustre
	t0=$(date +%s)
	mount.lustre "$mgs:/$FS" /mnt/lustre || { dmesg | tail -40; lab_fail "mount the client"; }
	lab_log "client: mounted in $(($(date +%s) - t0)) s"
	lfs df /mnt/lustre >/tmp/df || lab_fail "lfs df"
	sed 's/^/  /' /tmp/df
	[ "$(grep -c 'OST:' /tmp/df)" = 2 ] && grep -q 'MDT:' /tmp/df ||
		lab_fail "lfs df does not list one MDT and two OSTs"
	lctl get_param -n mdc.*.import osc.*.import >/tmp/imports || lab_fail "lctl get_param imports"
	full=$(grep -c 'state: FULL' /tmp/imports)
	[ "$full" = 3 ] || { cat /tmp/imports; lab_fail "$full of 3 imports FULL"; }

	# One large file striped over both OSTs, read back from the servers.
	lfs setstripe -c 2 /mnt/lustre/big || lab_fail "lfs setstripe"
	dd if=/dev/urandom of=/tmp/big bs=1M count=48 2>/dev/null
	t0=$(now_ms)
	cp /tmp/big /mnt/lustre/big && sync || lab_fail "write the large file"
	t1=$(now_ms)
	echo 3 >/proc/sys/vm/drop_caches
	lctl set_param -n ldlm.namespaces.*.lru_size=clear >/dev/null
	cmp /tmp/big /mnt/lustre/big || lab_fail "the large file reads back different"
	t2=$(now_ms)
	lab_log "client: 48 MiB written in $((t1 - t0)) ms, read back in $((t2 - t1)) ms"
	rm -f /tmp/big
	# A thousand small files, each its own content.
	mkdir /mnt/lustre/small || lab_fail "mkdir"
	i=0
	while [ $i -lt 1000 ]; do
		echo "file $i of lnet-rs" >"/mnt/lustre/small/f$i" || lab_fail "write small file $i"
		i=$((i + 1))
	done
	lctl set_param -n ldlm.namespaces.*.lru_size=clear >/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	i=0
	while [ $i -lt 1000 ]; do
		[ "$(cat "/mnt/lustre/small/f$i")" = "file $i of lnet-rs" ] || lab_fail "small file $i reads back different"
		i=$((i + 1))
	done
	[ "$(ls /mnt/lustre/small | wc -l)" = 1000 ] || lab_fail "the directory does not list 1000 files"
	lab_log "client: 1000 small files written and read back"
	fsx -N 2000 -S 1 -q /mnt/lustre/fsxfile >/tmp/fsx 2>&1 || { tail -30 /tmp/fsx; lab_fail "fsx"; }
	lab_log "client: fsx: $(tail -n 1 /tmp/fsx)"
	lctl get_param -n mdc.*.import osc.*.import >/tmp/imports
	[ "$(grep -c 'state: FULL' /tmp/imports)" = 3 ] || { cat /tmp/imports; lab_fail "an import left FULL"; }
	rm -rf /mnt/lustre/small /mnt/lustre/big /mnt/lustre/fsxfile
	umount /mnt/lustre || lab_fail "client: umount"
	lab_tell "$srv" 7102
fi
lustre_unload
dmesg | grep -E 'LustreError|evict|Connection (lost|restored)' | sed 's/^/  ptlrpc: /' | tail -20
lnetctl lnet unconfigure || lab_fail "unconfigure"
lab_rmmod ksocklnd
lab_rmmod lnet
