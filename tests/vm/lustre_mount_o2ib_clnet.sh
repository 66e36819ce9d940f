# lab: vms=2 nics=2 lustrefs=1 timeout=1500 named=1
# The baseline of lustre_mount_o2ib: Lustre's C LNet and its ko2iblnd on
# both nodes over the same Soft-RoCE rails (tests/vm/lib_lustre.sh).
. /lab/lib_lustre.sh
LFS_NET0=o2ib LFS_NET1=o2ib1
lfs_run c c
