# lab: vms=2 nics=2 timeout=420
# The lab demo over ko2iblnd (scripts/demo.sh shows it live): demo.sh
# with o2ib on rxe0 (eth0) and o2ib1 on rxe1 (eth1). eth1 down takes
# rxe1's port down, whose PORT_ERR marks the o2ib1 NI fatal at once; the
# silent rail is a drop rule on o2ib1.
DEMO_LND=o2ib
. /lab/tests/demo.sh
