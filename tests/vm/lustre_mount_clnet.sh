# lab: vms=2 nics=2 lustrefs=1 timeout=1500 named=1
# The baseline of lustre_mount: the same file system and IO with Lustre's
# C LNet on both nodes (tests/vm/lib_lustre.sh), so that every figure and
# every PtlRPC event of ours has its side-by-side count.
. /lab/lib_lustre.sh
lfs_run c c
