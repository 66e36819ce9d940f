# lab: vms=2 nics=2 clnet=1 timeout=900
# interop_railcut over rails of two LNDs, as the seeds' node with an
# InfiniBand and an Ethernet interface: tcp (ksocklnd) on eth0 and o2ib1
# (ko2iblnd over Soft-RoCE on eth1) on eth1. Every cut is of the o2ib1
# rail, on either node, and what fails on it is resent over tcp: no PUT
# fails where the ksocklnd rail is healthy.
LAB_RAIL_NETS="o2ib1 tcp"
. /lab/tests/interop_railcut.sh
