# Lustre itself on a lab of two VMs (`vms=2 nics=2 lustrefs=1`): Lustre's
# own modules, built unchanged from its source against this kernel
# (scripts/build-lustre.sh), over lnet-rs or over Lustre's C LNet from the
# same build, chosen per node. VM 1 is the server: an MGS with its MDT and
# two OSTs on Lustre's memory-backed OSD (osd-wbcfs). VM 0 is the client:
# it mounts the file system over both rails (tcp and tcp1), checks `lfs df`
# and every import FULL, writes a striped file and many small ones, reads
# them back from the servers (its cache dropped) and compares, runs Lustre's
# fsx for a bounded number of operations, then unmounts. Both sides unload
# every module, Lustre's and LNet's; the scenario prints what PtlRPC saw
# (lost connections, reconnects, evictions, timed-out requests).

FS=lfs
# Sized for CI under TCG with the checkers on, where each MiB through the
# mount takes one to two seconds each way and each small file or fsx
# operation a few RPCs; bench.sh measures rates. The large file, striped
# over both OSTs in 1 MiB stripes: 4 MiB put 2 MiB in each OST object,
# written and read in one RPC of two 1 MiB bulks each (the OSTs' brw_size
# is 4 MiB; lfs_rpc_pages shows them). The cuts (lfs_io_cuts) write 8
# MiB in Lustre's default stripes (4 MiB), so that the write spans the
# cut. The first 40 operations of fsx's seed 1 hold all four of its kinds
# here, each several times: mapped reads and writes, direct reads and
# writes.
LFS_BIG_MIB=${LFS_BIG_MIB:-}
LFS_SMALL=${LFS_SMALL:-20}
LFS_FSX_OPS=${LFS_FSX_OPS:-40}
# The rails' nets: eth0's and eth1's (o2ib and o2ib1 run ko2iblnd on
# Soft-RoCE; LFS_NET1=none: eth0's rail alone).
LFS_NET0=${LFS_NET0:-tcp}
LFS_NET1=${LFS_NET1:-tcp1}

# lfs_run CLIENT SERVER [IO]: each `rs` (lnet-rs) or `c` (Lustre's C
# LNet); IO is `files` (unless given: a large file, small ones, fsx) or
# `cuts` (a write across each cut of the tcp1 rail, lfs_io_cuts) or
# `stream` (lfs_io_stream).
lfs_run() {
	lfs_io=${3:-files}
	if [ -z "$LFS_BIG_MIB" ] && [ "$lfs_io" = cuts ]; then
		LFS_BIG_MIB=8
	fi
	LFS_BIG_MIB=${LFS_BIG_MIB:-4}
	lfs_lnet=$1
	[ "$LAB_VM" = 1 ] && lfs_lnet=$2
	[ "$lfs_lnet" = c ] && lab_clnet_use
	# A failure leaves nothing mounted or loaded for the next scenario.
	trap lfs_cleanup EXIT TERM
	lab_interop_setup "$LFS_NET1" "$LFS_NET0"
	lab_log "$(hostname): $side, $lnd"
	srv=$(lab_addr 1 0)
	cli=$(lab_addr 0 0)
	mgs="$srv@$LFS_NET0"
	[ "$LFS_NET1" = none ] || mgs="$mgs,$(lab_addr 1 1)@$LFS_NET1"
	if [ "$LAB_VM" = 1 ]; then
		lfs_server
	else
		lfs_client
	fi
	lfs_unload
	lfs_ptlrpc_events
	lab_interop_teardown
	trap - EXIT TERM
}

# After a failure: every Lustre mount forced down, every module unloaded.
lfs_cleanup() {
	trap - EXIT TERM
	lab_log "$(hostname): unmounting and unloading after a failure"
	for m in /mnt/lustre /mnt/ost1 /mnt/ost0 /mnt/mdt; do
		grep -q " $m " /proc/mounts && umount -f "$m"
	done
	(lfs_unload) >/dev/null 2>&1
	lnetctl lnet unconfigure >/dev/null 2>&1
	for m in ksocklnd ko2iblnd lnet libcfs sunrpc_addr; do
		rmmod "$m" 2>/dev/null
	done
	exit 1
}

# Lustre's libcfs.ko, loaded after our lnet.ko, has its debugfs lnet/ (the
# debug tunables lctl drives) with our lnet_lnd_timeout in it, and cannot
# go while our lnet.ko is loaded (lnet/lnet_debugfs.c).
lfs_check_debugfs() {
	[ "$lfs_lnet" = rs ] || return 0
	lctl get_param -n debug_mb >/dev/null || lab_fail "$1: no libcfs debug_mb for lctl"
	lab_read /sys/kernel/debug/lnet/lnet_lnd_timeout
	[ -n "$LAB_V" ] || lab_fail "$1: lnet_lnd_timeout not in libcfs's lnet/"
	lab_must_fail rmmod libcfs
	# Lustre's lctl finds no lnet generic netlink family (it says so on
	# stderr) and falls back to its ioctls (lnet/libcfs_ioctl.rs): our
	# NIDs, as lnetctl lists them. That fallback of Lustre's exits with the
	# status of the ioctl that ended the list (ENOENT), not 0.
	lctl list_nids >/tmp/lctl_nids 2>/tmp/lctl_err || :
	lnetctl net show | sed -n 's/^[ -]*nid: //p' | grep -v '@lo$' | sort >/tmp/our_nids
	[ -s /tmp/our_nids ] || lab_fail "$1: lnetctl lists no NID"
	[ "$(sort /tmp/lctl_nids)" = "$(cat /tmp/our_nids)" ] ||
		{ cat /tmp/lctl_err; lab_fail "$1: Lustre's lctl list_nids: '$(cat /tmp/lctl_nids)', not our NIDs"; }
	lab_log "$1: Lustre's lctl list_nids: $(tr '\n' ' ' </tmp/lctl_nids)"
}

lfs_server() {
	for m in ptlrpc osd_wbcfs mgs mgc mdt mdd lod osp ofd lfsck lquota; do
		modprobe "$m" || lab_fail "server: modprobe $m"
	done
	lfs_check_debugfs server
	t0=$(date +%s)
	lfs_target MDT 0 /mnt/mdt
	lfs_target OST 0 /mnt/ost0
	lfs_target OST 1 /mnt/ost1
	lab_log "server: MGS, MDT and two OSTs up in $(($(date +%s) - t0)) s"
	# The MDT stripes a new file over the OSTs its OSPs can precreate on
	# and silently over fewer when one is still connecting (lod_qos.c):
	# the client mounts once both report a precreate status of 0.
	i=0
	while [ "$(lctl get_param -n "osp.$FS-OST000[01]-osc-MDT0000.prealloc_status" 2>/dev/null |
		grep -cx 0)" != 2 ]; do
		i=$((i + 1))
		[ $i -lt 240 ] || lab_fail "server: the MDT cannot precreate on both OSTs: $(lctl get_param "osp.*.prealloc_status" 2>&1 | tr '\n' ' ')"
		sleep 0.25
	done
	lab_log "server: the MDT precreates on both OSTs after $(($(date +%s) - t0)) s"
	lab_tell "$cli" 7101
	# The client's requests to cut and restore our tcp1 rail, until it has
	# unmounted.
	while :; do
		nc -l -p 7102 </dev/null >/tmp/ask || lab_fail "no word from the client"
		lab_read /tmp/ask
		case "$LAB_V" in
		down | up) ip link set eth1 "$LAB_V" ;;
		silent) tc qdisc add dev eth1 root netem loss 100% ;;
		heal) tc qdisc del dev eth1 root ;;
		*) break ;;
		esac || lab_fail "server: $LAB_V on eth1"
	done
	# The OSTs first: the MDT's OSPs then wait out their disconnects to
	# them (about 10 s; PUTs to a stopped target's portal are dropped for
	# want of an ME), but with the MDT (and its MGS) first, each OST's MGC
	# waits that long, twice the time in all.
	t0=$(date +%s)
	umount /mnt/ost1 && umount /mnt/ost0 && umount /mnt/mdt || lab_fail "server: umount"
	lab_log "server: unmounted in $(($(date +%s) - t0)) s"
}

# Lustre's memory-backed OSD (scripts/build-lustre.sh says why not
# ldiskfs): a target is named by the environment, as Lustre's tests do it,
# and mounted from the device lustre-wbcfs.
lfs_target() { # type index mountpoint
	mkdir -p "$3"
	OSD_WBC_TGT_TYPE=$1 OSD_WBC_INDEX=$2 OSD_WBC_MGS_NID=$mgs OSD_WBC_PRIMARY_MDT=1 \
		OSD_WBC_FSNAME=$FS mount.lustre lustre-wbcfs "$3" >/tmp/mount.out 2>&1 ||
		{ cat /tmp/mount.out; dmesg | tail -40; lab_fail "mount $1$2"; }
}

lfs_client() {
	# Its modules load while the server loads its own and starts its
	# targets (about 10 s of the client's, 40 of the server's), then it
	# waits for the server's word.
	modprobe lustre || lab_fail "client: modprobe lustre"
	lfs_check_debugfs client
	nc -l -p 7101 </dev/null >/dev/null || lab_fail "no word from the server"
	# libmount's utab, where mount.lustre records the mount's options.
	mkdir -p /mnt/lustre /run/mount
	t0=$(date +%s)
	mount.lustre "$mgs:/$FS" /mnt/lustre >/tmp/mount.out 2>&1 ||
		{ cat /tmp/mount.out; dmesg | tail -40; lab_fail "mount the client"; }
	lab_log "client: mounted in $(($(date +%s) - t0)) s"
	lfs df /mnt/lustre >/tmp/df || lab_fail "lfs df"
	sed 's/^/  /' /tmp/df
	[ "$(grep -c 'OST:' /tmp/df)" = 2 ] && grep -q 'MDT:' /tmp/df ||
		lab_fail "lfs df does not list one MDT and two OSTs"
	lfs_imports_full "after mount"
	dd if=/dev/urandom of=/tmp/big bs=1M count="$LFS_BIG_MIB" 2>/dev/null
	"lfs_io_$lfs_io"
	lfs_imports_full "after the IO"
	rm -f /tmp/big
	umount /mnt/lustre || lab_fail "client: umount"
	lab_tell "$srv" 7102
}

lfs_io_files() {
	# One large file striped over both OSTs, read back from the servers.
	lfs setstripe -c 2 -S 1M /mnt/lustre/big || lab_fail "lfs setstripe"
	lctl set_param -n osc.*.rpc_stats=0 || lab_fail "clear the OSCs' rpc_stats"
	t0=$(now_ms)
	cp /tmp/big /mnt/lustre/big && sync || lab_fail "write the large file"
	t1=$(now_ms)
	lfs_drop_cache
	cmp /tmp/big /mnt/lustre/big || lab_fail "the large file reads back different"
	t2=$(now_ms)
	rpcs=$(lfs_rpc_pages)
	lab_log "client: $LFS_BIG_MIB MiB written in $((t1 - t0)) ms, read back in $((t2 - t1)) ms; largest RPCs (pages, read write): $(echo "$rpcs" | tr '\n' ' ')"
	echo "$rpcs" | awk '$2 == 0 || $3 == 0 { bad = 1 } END { exit NR != 2 || bad }' ||
		lab_fail "the large file was not written to and read from both OSTs (its stripe count: $(lfs getstripe -c /mnt/lustre/big))"
	# Small files, each its own content.
	mkdir /mnt/lustre/small || lab_fail "mkdir"
	t0=$(now_ms)
	i=0
	while [ $i -lt "$LFS_SMALL" ]; do
		echo "file $i of lnet-rs" >"/mnt/lustre/small/f$i" || lab_fail "write small file $i"
		i=$((i + 1))
	done
	t1=$(now_ms)
	lfs_drop_cache
	i=0
	while [ $i -lt "$LFS_SMALL" ]; do
		lab_read "/mnt/lustre/small/f$i"
		[ "$LAB_V" = "file $i of lnet-rs" ] || lab_fail "small file $i reads back different"
		i=$((i + 1))
	done
	[ "$(ls /mnt/lustre/small | wc -l)" = "$LFS_SMALL" ] ||
		lab_fail "the directory does not list $LFS_SMALL files"
	lab_log "client: $LFS_SMALL small files written in $((t1 - t0)) ms, read back in $(($(now_ms) - t1)) ms"
	# Lustre's memory-backed OSD does not implement punch (osd-wbcfs's
	# osd_punch returns 0 and frees nothing): a file truncated down and
	# back up reads its old bytes from the OST, under either LNet. Shown,
	# not checked.
	dd if=/dev/urandom of=/mnt/lustre/punch bs=64k count=1 2>/dev/null && sync ||
		lab_fail "write the punch file"
	lfs_drop_cache
	truncate -s 0 /mnt/lustre/punch && truncate -s 65536 /mnt/lustre/punch ||
		lab_fail "truncate the punch file"
	lfs_drop_cache
	lab_log "client: 64 KiB truncated to 0 and back: $(tr -d '\000' </mnt/lustre/punch | wc -c) bytes read back non-zero (osd-wbcfs does not punch)"
	rm -f /mnt/lustre/punch
	# So fsx runs without truncates (-L: the file's size fixed), on a file
	# striped over both OSTs in 64 KiB stripes. Its reads and writes are direct
	# (with -L, fsx opens once, O_DIRECT at -Z1000's odds with seed 1) and
	# page-aligned, each a bulk transfer to the OSTs, between mapped reads
	# and writes through the page cache.
	lfs setstripe -c 2 -S 65536 /mnt/lustre/fsxfile || lab_fail "lfs setstripe fsxfile"
	dd if=/dev/zero of=/mnt/lustre/fsxfile bs=64k count=4 2>/dev/null || lab_fail "create fsxfile"
	t0=$(now_ms)
	fsx -L -Z1000 -r 4096 -w 4096 -N "$LFS_FSX_OPS" -S 1 -q /mnt/lustre/fsxfile >/tmp/fsx 2>&1 ||
		{ tail -n 400 /tmp/fsx; lab_fail "fsx"; }
	lab_log "client: fsx, $LFS_FSX_OPS operations in $(($(now_ms) - t0)) ms: $(tail -n 1 /tmp/fsx)"
	rm -rf /mnt/lustre/small /mnt/lustre/big /mnt/lustre/fsxfile
}

# Streaming IO for bench_lustre: LFS_STREAM_MIB written with dd (1 MiB
# writes, fsync at the end) into a file striped over both OSTs, then read
# back from the servers (the client's cache dropped). Appends "lnet
# rails write_ms read_ms" to /tmp/lfs_stream, which stays across runs.
LFS_STREAM_MIB=${LFS_STREAM_MIB:-256}
lfs_io_stream() {
	lfs setstripe -c 2 /mnt/lustre/stream || lab_fail "lfs setstripe stream"
	t0=$(now_ms)
	dd if=/dev/zero of=/mnt/lustre/stream bs=1M count="$LFS_STREAM_MIB" conv=fsync 2>/tmp/dd ||
		{ cat /tmp/dd; lab_fail "stream write"; }
	t1=$(now_ms)
	lfs_drop_cache
	dd if=/mnt/lustre/stream of=/dev/null bs=1M 2>/tmp/dd || { cat /tmp/dd; lab_fail "stream read"; }
	t2=$(now_ms)
	rails=2
	[ "$LFS_NET1" = none ] && rails=1
	echo "$lfs_lnet $rails $((t1 - t0)) $((t2 - t1))" >>/tmp/lfs_stream
	lab_log "client: $LFS_STREAM_MIB MiB streamed over $rails rail(s): written in $((t1 - t0)) ms, read in $((t2 - t1)) ms"
	rm -f /mnt/lustre/stream
}

# The cuts of bench_failover on the tcp1 rail, each during a write of the
# large file striped over both OSTs: our link down, our rail silent (netem,
# 100% loss: no link event), the server's link down, the server's rail
# silent. Each lasts LFS_CUT_SECS. The write must end without an error and
# read back identical; how long it took, against the uncut write, is the
# application's stall.
LFS_CUT_SECS=${LFS_CUT_SECS:-10}
lfs_io_cuts() {
	lfs_cut_write none
	base=$lfs_ms
	lfs_cut_write "our link down" "ip link set eth1 down" "ip link set eth1 up"
	lfs_cut_write "our rail silent" "tc qdisc add dev eth1 root netem loss 100%" "tc qdisc del dev eth1 root"
	lfs_cut_write "the server's link down" "lfs_ask down" "lfs_ask up"
	lfs_cut_write "the server's rail silent" "lfs_ask silent" "lfs_ask heal"
}

# lfs_cut_write WHAT [CUT RESTORE]: writes the large file with CUT made 2 s
# in and RESTORE LFS_CUT_SECS later; sets lfs_ms to the write's time.
lfs_cut_write() {
	rm -f /mnt/lustre/cut
	lfs setstripe -c 2 /mnt/lustre/cut || lab_fail "lfs setstripe"
	t0=$(now_ms)
	dd if=/tmp/big of=/mnt/lustre/cut bs=1M conv=fsync 2>/tmp/dd &
	w=$!
	if [ -n "${2:-}" ]; then
		sleep 2
		kill -0 $w 2>/dev/null || lab_log "client: the write ended before $1"
		$2 || lab_fail "client: $2"
		sleep "$LFS_CUT_SECS"
		$3 || lab_fail "client: $3"
	fi
	wait $w || { cat /tmp/dd; lab_fail "the write across $1 failed"; }
	lfs_ms=$(($(now_ms) - t0))
	lfs_drop_cache
	cmp /tmp/big /mnt/lustre/cut || lab_fail "the file written across $1 reads back different"
	lab_log "client: $LFS_BIG_MIB MiB written in $lfs_ms ms across $1${base:+ (uncut: $base ms)}, read back identical"
	echo "$lfs_lnet|$1|$lfs_ms" >>/tmp/lfs_cuts
}

# Asks the server to act on its tcp1 rail (lfs_server's loop).
lfs_ask() {
	lab_tell "$srv" 7102 "$1"
}

# Each OSC's largest read and write RPC since their rpc_stats were
# cleared, a line "OSTxxxx read write" each: the bound of its bucket in
# Lustre's histogram, in pages (512: 257 to 512, more than one bulk of
# LNet's 1 MiB MTU); 0: none.
lfs_rpc_pages() {
	lctl get_param osc.*.rpc_stats | awk '
		function flush() { if (ost != "") print ost, r + 0, w + 0 }
		/rpc_stats=$/ {
			flush()
			ost = $0; sub(/.*-OST/, "OST", ost); sub(/-.*/, "", ost)
			r = w = s = 0
			next
		}
		/^pages per rpc/ { s = 1; next }
		s && !NF { s = 0 }
		s && $1 ~ /^[0-9]+:$/ {
			n = $1 + 0
			if ($2 > 0 && n > r) r = n
			if ($6 > 0 && n > w) w = n
		}
		END { flush() }'
}

# The client's cache dropped: pages and DLM locks, so reads go to the servers.
lfs_drop_cache() {
	lctl set_param -n ldlm.namespaces.*.lru_size=clear >/dev/null
	echo 3 >/proc/sys/vm/drop_caches
}

lfs_imports_full() {
	lctl get_param -n mdc.*.import osc.*.import >/tmp/imports || lab_fail "lctl get_param imports"
	full=$(grep -c 'state: FULL' /tmp/imports || true)
	[ "$full" = 3 ] || { cat /tmp/imports; lab_fail "$full of 3 imports FULL $1"; }
}

# Lustre's modules, dependents first, as many passes as the dependency
# chains are long; LNet's (ours or Lustre's) stay for lab_interop_teardown.
lfs_unload() {
	keep='^(lnet|ksocklnd|ko2iblnd|libcfs|sunrpc_addr)$'
	for pass in 1 2 3 4 5 6 7 8; do
		for m in $(lsmod | awk -v k="$keep" 'NR > 1 && $1 !~ k { print $1 }'); do
			rmmod "$m" 2>/dev/null
		done
	done
	left=$(lsmod | awk -v k="$keep" 'NR > 1 && $1 !~ k { print $1 }')
	[ -z "$left" ] || lab_fail "Lustre's modules will not unload: $left"
}

# What PtlRPC saw, counted from its console lines.
lfs_ptlrpc_events() {
	dmesg >/tmp/dmesg
	# grep -c counts 0 with status 1, which set -e takes for a failure.
	lost=$(grep -c 'was lost' /tmp/dmesg || true)
	reconn=$(grep -c 'reconnecting\|Connection restored' /tmp/dmesg || true)
	evict=$(grep -c -i 'evict' /tmp/dmesg || true)
	timedout=$(grep -c 'timed out' /tmp/dmesg || true)
	lab_log "$(hostname) on $side: PtlRPC saw $lost lost connections, $reconn reconnects, $evict evictions, $timedout timed-out requests"
	echo "$lfs_lnet $lfs_io $lost $reconn $evict $timedout" >>/tmp/lfs_events
	grep -E 'LustreError|evict|was lost|reconnecting|restored|timed out' /tmp/dmesg | sed 's/^/  ptlrpc: /' | tail -20 || true
	# What LNet did below it: drops and resends (an LNet resend PtlRPC
	# never sees is a second delivery it did not ask for).
	lnetctl stats show 2>/dev/null | grep -E 'drop|resend|retry' | sed 's/^/  lnet: /' || true
}
