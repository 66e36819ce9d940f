# lab: vms=2 nics=2 lustrefs=1 timeout=1500 named=1
# Lustre on lnet-rs: client and server both run our lnet.ko and ksocklnd.ko
# under Lustre's own modules (tests/vm/lib_lustre.sh), PtlRPC calling our
# LNetPut/LNetGet. Named only (named=1) until it has passed in a whole run
# of the lab.
. /lab/lib_lustre.sh
lfs_run rs rs
