# lab: vms=2 nics=2 lustrefs=1 timeout=1500 named=1
# The baseline of lustre_railcut: the same cuts with Lustre's C LNet on
# both nodes, so that PtlRPC's events and the stalls have their
# side-by-side count.
. /lab/lib_lustre.sh
lfs_run c c cuts
