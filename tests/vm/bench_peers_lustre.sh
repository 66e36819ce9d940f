# lab: vms=2 nics=2 lustre=2 timeout=900
# Benchmark: bench_peers between two Lustre nodes (see there).
. /lab/tests/bench_peers.sh
