# lab: vms=2 nics=2 timeout=240
# Lustre's expression lists, NID lists and NID strings from C, as PtlRPC,
# the nodemap, nosquash_nids and NRS TBF call them: lnet_nidlist.ko checks
# every result at load (CPT patterns and their value arrays, kmalloc'ed or
# vmalloc'ed as Lustre frees them; NID lists parsed into the caller's
# list_head, matched, printed, spliced and freed; netmask length and base
# NID; libcfs_str2nid, libcfs_str2anynid, libcfs_net2str, libcfs_id2str).
# It parses and frees thousands of lists: kmemleak must find nothing left.
dmesg -c >/dev/null
modprobe lnet || lab_fail "lnet did not load"
lab_kmod_checks lnet_nidlist
lab_rmmod lnet_nidlist
# Objects must be 5 s old before kmemleak reports them.
sleep 6
lab_kmemleak_scan "lnet_nidlist's lists"
lab_rmmod lnet
