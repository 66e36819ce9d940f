# lab: vms=2 nics=2 timeout=900
# interop_railcut_mixed between two lnet-rs nodes: tcp (ksocklnd) on eth0
# and o2ib1 (ko2iblnd over Soft-RoCE) on eth1, VM 1 in the Lustre node's
# part. Each node's o2ib1 rail is cut, downed and silenced under the
# other's PUTs, and flaps under its own: what fails there is resent over
# tcp, and no PUT fails where the ksocklnd rail is healthy.
LAB_RAIL_NETS="o2ib1 tcp"
LAB_RAILCUT_NODE=0
[ "$LAB_VM" = 1 ] && LAB_RAILCUT_NODE=1
. /lab/tests/interop_railcut.sh
