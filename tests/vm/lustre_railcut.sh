# lab: vms=2 nics=2 lustrefs=1 timeout=1500 named=1
# Lustre on lnet-rs across rail cuts: with both nodes on lnet-rs, each cut
# of the tcp1 rail (ours and the server's, link down and silent) during a
# write through the mount (tests/vm/lib_lustre.sh, lfs_io_cuts): no
# application error, the data read back identical, and what PtlRPC saw.
. /lab/lib_lustre.sh
lfs_run rs rs cuts
