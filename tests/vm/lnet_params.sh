# lab: vms=2 nics=2 timeout=120
# lnet.ko loads and unloads; every core parameter reads back Lustre's
# default with Lustre's permissions; valid runtime writes take effect,
# invalid ones fail with EINVAL and keep the old value; the derived LND
# timeout follows its inputs.
P=/sys/module/lnet/parameters
LND=/sys/kernel/debug/lnet/lnet_lnd_timeout

expect() {
	lab_read "$P/$1"
	lab_expect_eq "$LAB_V" "$2" "$1"
}
expect_lnd() {
	lab_read $LND
	lab_expect_eq "$LAB_V" "$1" "lnet_lnd_timeout"
}

# A write that must be refused with the given error text, value unchanged.
# Brace groups, not subshells: forks are slow in the lab.
refused() {
	name=$1 value=$2 why=$3
	lab_read "$P/$name"
	before=$LAB_V
	if { echo "$value" >"$P/$name"; } 2>/tmp/err; then
		lab_fail "$name=$value was accepted"
	fi
	lab_read /tmp/err
	case "$LAB_V" in
	*"$why"*) ;;
	*) lab_fail "$name=$value: expected '$why', got '$LAB_V'" ;;
	esac
	expect "$name" "$before"
	lab_log "$name=$value refused ($why), still $before"
}

set_ok() {
	{ echo "$2" >"$P/$1"; } || lab_fail "$1=$2 refused"
	expect "$1" "$3"
}

modprobe lnet
grep -q '^lnet ' /proc/modules || lab_fail "lnet not loaded"

# Defaults and modes, as Lustre declares them.
while read -r name value mode; do
	expect "$name" "$value"
	lab_expect_eq "$(stat -c %a "$P/$name")" "$mode" "mode of $name"
done <<TABLE
lnet_health_sensitivity 100 644
lnet_recovery_interval 1 644
lnet_recovery_limit 0 644
lnet_max_recovery_ping_interval 900 644
lnet_interfaces_max 4096 644
lnet_peer_discovery_disabled 0 644
lnet_drop_asym_route 0 644
lnet_transaction_timeout 150 644
lnet_retry_count 2 644
lnet_response_tracking 3 644
lnet_numa_range 0 444
lock_prim_nid 1 444
router_sensitivity_percentage 100 644
rnet_htable_size 128 444
use_tcp_bonding 0 444
tiny_router_buffers 0 444
small_router_buffers 0 444
large_router_buffers 0 444
peer_buffer_credits 0 444
check_routers_before_use 0 444
avoid_asym_router_failure 1 644
dead_router_check_interval -2147483648 444
live_router_check_interval -2147483648 444
alive_router_check_interval 60 644
router_ping_timeout 50 644
cpu_npartitions 0 444
cpu_pattern N 444
TABLE
for name in networks ip2nets routes forwarding; do
	expect "$name" ""
	lab_expect_eq "$(stat -c %a "$P/$name")" 444 "mode of $name"
done
# Lustre's lnet.ko's 29 (its router's 11 included; not auto_down,
# unused in Lustre), and libcfs.ko's two
# CPU partition parameters, which lnet-rs's lnet.ko carries itself
# (lnet/lnet_params.c says why). libcfs.ko's debug mask (lnet_params.c
# says why it is lnet.ko's).
lab_expect_eq "$(ls $P | wc -l)" 32 "number of parameters"
lab_expect_eq "$(stat -c %a "$P/libcfs_debug")" 644 "mode of libcfs_debug"
# The lab's modprobe.d adds net to Lustre's default mask.
expect libcfs_debug 319686528
expect_lnd 49

# Health sensitivity: 0..1000.
set_ok lnet_health_sensitivity 1000 1000
refused lnet_health_sensitivity 1001 "Invalid argument"
refused lnet_health_sensitivity abc "Invalid argument"
refused lnet_health_sensitivity -1 "Invalid argument"
refused lnet_health_sensitivity "" "Invalid argument"
refused lnet_health_sensitivity 99999999999999999999 "Numerical result out of range"
dmesg | grep -q "lnet: Invalid health value. Maximum: 1000 value = 1001" ||
	lab_fail "no clear message in dmesg for sensitivity 1001"
set_ok lnet_health_sensitivity 0x64 100

# Transaction timeout and retry count constrain each other; the LND
# timeout is max((transaction_timeout - 1) / (retry_count + 1), 1).
refused lnet_transaction_timeout 2 "Invalid argument"
refused lnet_transaction_timeout 0 "Invalid argument"
set_ok lnet_transaction_timeout 61 61
expect_lnd 20
refused lnet_retry_count 62 "Invalid argument"
set_ok lnet_retry_count 0 0
expect_lnd 60
set_ok lnet_retry_count 5 5
expect_lnd 10
set_ok lnet_transaction_timeout 6 6
expect_lnd 1

# Sensitivity 0 turns health off, and with it resends.
set_ok lnet_health_sensitivity 0 0
expect lnet_retry_count 0
expect_lnd 5
refused lnet_retry_count 1 "Invalid argument"
dmesg | grep -q "Can not set lnet_retry_count when health feature is turned off" ||
	lab_fail "no message for retry_count without health"
set_ok lnet_health_sensitivity 100 100
set_ok lnet_transaction_timeout 150 150
set_ok lnet_retry_count 2 2
expect_lnd 49

# The rest.
refused lnet_response_tracking 4 "Invalid argument"
set_ok lnet_response_tracking 1 1
refused lnet_max_recovery_ping_interval 0 "Invalid argument"
set_ok lnet_max_recovery_ping_interval 60 60
set_ok lnet_interfaces_max 8 4096
set_ok lnet_interfaces_max 200 200
set_ok lnet_peer_discovery_disabled 5 1
refused lnet_drop_asym_route 2 "Invalid argument"
set_ok lnet_drop_asym_route 1 1
set_ok lnet_recovery_limit 30 30
refused lnet_recovery_limit 4294967296 "Numerical result out of range"
set_ok lnet_recovery_interval 7 1
dmesg | grep -q "lnet_recovery_interval' has been deprecated" || lab_fail "no deprecation warning"
# Deprecated and unused, but a percentage: 0..100.
set_ok router_sensitivity_percentage 0x32 50
refused router_sensitivity_percentage 101 "Invalid argument"
set_ok router_sensitivity_percentage 100 100
# The router checker's: any int, as Lustre's (0 or less: no checker).
set_ok alive_router_check_interval 0x5 5
set_ok alive_router_check_interval -1 -1
refused alive_router_check_interval soon "Invalid argument"
refused router_ping_timeout 2147483648 "Numerical result out of range"
dmesg | grep -q "Invalid module parameter value for 'router_ping_timeout': out of range" ||
	lab_fail "no clear message for router_ping_timeout out of range"
set_ok router_ping_timeout 7 7
set_ok avoid_asym_router_failure 0 0
set_ok alive_router_check_interval 60 60

# The debug mask: Lustre's class names, relative with + and -, absolute
# (keeping the classes no mask silences) without; a number as it is.
set_ok libcfs_debug "-ha" 319162240
set_ok libcfs_debug "net" 33949184
set_ok libcfs_debug "+neterror" 33949440
set_ok libcfs_debug 0 0
set_ok libcfs_debug default 319686016
refused libcfs_debug netz "Invalid argument"
refused libcfs_debug "+net +" "Invalid argument"
dmesg | grep -q "unknown mask 'netz'" || lab_fail "no message for an unknown class"

# Load-time-only parameters cannot be written at runtime, even by root.
for name in lnet_numa_range lock_prim_nid rnet_htable_size use_tcp_bonding networks \
	forwarding tiny_router_buffers peer_buffer_credits check_routers_before_use \
	dead_router_check_interval; do
	refused "$name" 1 "Permission denied"
done

lab_rmmod lnet
# A second load starts from the defaults again; the command line's mask
# comes after modprobe.d's.
modprobe lnet libcfs_debug=default
expect libcfs_debug 319686016
expect lnet_transaction_timeout 150
expect lnet_response_tracking 3
lab_rmmod lnet
# forwarding= takes only Lustre's words ("", enabled, disabled): another
# refuses LNet's startup, with Lustre's message.
modprobe lnet forwarding=maybe tiny_router_buffers=-1
expect forwarding maybe
expect tiny_router_buffers -1
if lnetctl lnet configure 2>/dev/null; then
	lab_fail "LNet started with forwarding=maybe"
fi
dmesg | grep -q "forwarding='maybe' not set to either 'enabled' or 'disabled'" ||
	lab_fail "no message for forwarding=maybe"
lab_rmmod lnet
# A negative pool size is refused when routing starts, as in Lustre.
modprobe lnet forwarding=enabled tiny_router_buffers=-1
if lnetctl lnet configure 2>/dev/null; then
	lab_fail "LNet started routing with tiny_router_buffers=-1"
fi
dmesg | grep -q "tiny_router_buffers=-1 invalid when routing enabled" ||
	lab_fail "no message for tiny_router_buffers=-1"
lab_rmmod lnet
