# lab: vms=2 nics=2 lustrefs=1 timeout=900
# Lustre on lnet-rs: client and server both run our lnet.ko and ksocklnd.ko
# under Lustre's own modules (tests/vm/lib_lustre.sh), PtlRPC calling our
# LNetPut/LNetGet. In every run of the lab; its comparisons with Lustre's
# C LNet (lustre_mount_mixed, lustre_mount_clnet) run when named.
. /lab/lib_lustre.sh
lfs_run rs rs
