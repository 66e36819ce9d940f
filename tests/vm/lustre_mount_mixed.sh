# lab: vms=2 nics=2 lustrefs=1 timeout=1500 named=1
# A client on lnet-rs mounts from a server on Lustre's C LNet, both under
# the same Lustre modules (tests/vm/lib_lustre.sh): our wire against
# Lustre's, under PtlRPC's own traffic.
. /lab/lib_lustre.sh
lfs_run rs c
