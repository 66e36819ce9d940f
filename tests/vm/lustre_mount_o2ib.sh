# lab: vms=2 nics=2 lustrefs=1 timeout=1500
# lustre_mount over ko2iblnd: both nodes on lnet-rs with the rails as o2ib
# and o2ib1 on Soft-RoCE (tests/vm/lib_lustre.sh), PtlRPC's bulk moving by
# RDMA through our ko2iblnd.
. /lab/lib_lustre.sh
LFS_NET0=o2ib LFS_NET1=o2ib1
lfs_run rs rs
