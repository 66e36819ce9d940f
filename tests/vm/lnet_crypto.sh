# lab: vms=2 nics=2 timeout=240
# lnet.ko's checksum and digest exports (cfs_crypto_hash_*) from C:
# lnet_crypto.ko checks every algorithm's digest of known data, hashing
# page by page as PtlRPC does, the size query and short buffers, unknown
# algorithms, the adler32 algorithm lnet.ko registers, and the speeds.
# lnet.ko registers adler32 with the crypto API while loaded, and an unload
# right after the load (speeds still being measured) succeeds at once.
crypto_has_adler32() {
	grep -q '^name *: adler32$' /proc/crypto
}

dmesg -c >/dev/null
t0=$(now_ms)
modprobe lnet || lab_fail "lnet did not load"
lab_log "lnet loaded in $(($(now_ms) - t0)) ms"
crypto_has_adler32 || lab_fail "adler32 not in /proc/crypto after the load"
t0=$(now_ms)
rmmod lnet || lab_fail "lnet would not unload during the speed measurements"
lab_log "lnet unloaded during the speed measurements in $(($(now_ms) - t0)) ms"
grep -q '^lnet ' /proc/modules && lab_fail "lnet still loaded"
lab_kmemleak_scan "rmmod lnet during the speed measurements"
crypto_has_adler32 && lab_fail "adler32 still in /proc/crypto after the unload"

modprobe lnet || lab_fail "lnet did not load again"
lab_kmod_checks lnet_crypto
lab_rmmod lnet_crypto
lab_rmmod lnet
crypto_has_adler32 && lab_fail "adler32 still in /proc/crypto at the end"
true
