// SPDX-License-Identifier: GPL-2.0
/*
 * lnet.ko's parameter table (include/lnet_rs/param_table.h): parsing and
 * validation are done in Rust (lnet/params.rs, with the rules
 * in lnet-core). Names and modes are Lustre's.
 */
#include <lnet_rs/param_table.h>

const char *lnet_param_networks(void);
const char *lnet_param_ip2nets(void);
const char *lnet_param_routes(void);
const char *lnet_param_forwarding(void);

LNET_RS_PARAM_OPS(lnet);

#define LNET_PARAM(name, mode, desc) LNET_RS_PARAM(lnet, name, mode, desc)

/* Network configuration strings, parsed when NIs are configured. */
static char *ip2nets = "";
module_param(ip2nets, charp, 0444);
MODULE_PARM_DESC(ip2nets, "LNET network <- IP table");

static char *networks = "";
module_param(networks, charp, 0444);
MODULE_PARM_DESC(networks, "local networks");

static char *routes = "";
module_param(routes, charp, 0444);
MODULE_PARM_DESC(routes, "routes to non-local networks");

static char *forwarding = "";
module_param(forwarding, charp, 0444);
MODULE_PARM_DESC(forwarding, "Explicitly enable/disable forwarding between networks");

/*
 * CPU partitions (lnet/cpt.rs): Lustre's names, types, defaults and
 * meaning. In Lustre these two variables are libcfs.ko's, exported, and
 * its lnet.ko attaches parameters to them, so `options libcfs ...` and
 * `options lnet ...` both set them. lnet.ko keeps its own, static: a
 * second export of libcfs.ko's symbols would stop a module from loading,
 * and libcfs.ko exports them without _GPL, which symbol_get() refuses, so
 * lnet.ko cannot read libcfs.ko's either. On lnet-rs they are set with
 * `options lnet ...` only.
 */
static int cpu_npartitions;
module_param(cpu_npartitions, int, 0444);
MODULE_PARM_DESC(cpu_npartitions, "# of CPU partitions");

static char *cpu_pattern = "N";
module_param(cpu_pattern, charp, 0444);
MODULE_PARM_DESC(cpu_pattern, "CPU partitions pattern");

int lnet_param_cpu_npartitions(void);
const char *lnet_param_cpu_pattern(void);

int lnet_param_cpu_npartitions(void)
{
	return cpu_npartitions;
}

const char *lnet_param_cpu_pattern(void)
{
	return cpu_pattern;
}

/* The strings are fixed once loaded (0444): no lock is needed to read them. */
const char *lnet_param_networks(void)
{
	return networks;
}

const char *lnet_param_ip2nets(void)
{
	return ip2nets;
}

const char *lnet_param_routes(void)
{
	return routes;
}

const char *lnet_param_forwarding(void)
{
	return forwarding;
}

LNET_PARAM(rnet_htable_size, 0444, "size of remote network hash table");
LNET_PARAM(use_tcp_bonding, 0444, "use_tcp_bonding parameter has been removed");
LNET_PARAM(lnet_numa_range, 0444,
	   "NUMA range to consider during Multi-Rail selection");
LNET_PARAM(lnet_health_sensitivity, 0644,
	   "Value to decrement the health value by on error");
LNET_PARAM(lnet_recovery_interval, 0644,
	   "DEPRECATED - Interval to recover unhealthy interfaces in seconds");
LNET_PARAM(lnet_recovery_limit, 0644,
	   "How long to attempt recovery of unhealthy peer interfaces in seconds. Set to 0 to allow indefinite recovery");
LNET_PARAM(lnet_max_recovery_ping_interval, 0644,
	   "The max interval between LNet recovery pings, in seconds");
LNET_PARAM(lnet_interfaces_max, 0644,
	   "Maximum number of interfaces in a node.");
LNET_PARAM(lnet_peer_discovery_disabled, 0644,
	   "Set to 1 to disable peer discovery on this node.");
LNET_PARAM(lnet_drop_asym_route, 0644,
	   "Set to 1 to drop asymmetrical route messages.");
LNET_PARAM(lnet_transaction_timeout, 0644,
	   "Maximum number of seconds to wait for a peer response.");
LNET_PARAM(lnet_retry_count, 0644,
	   "Maximum number of times to retry transmitting a message");
LNET_PARAM(lnet_response_tracking, 0644,
	   "(0|1|2|3) LNet Internal Only|GET Reply only|PUT ACK only|Full Tracking (default)");
LNET_PARAM(lock_prim_nid, 0444,
	   "Whether nid passed down by Lustre is locked as primary");
LNET_PARAM(router_sensitivity_percentage, 0644,
	   "(Deprecated) How healthy a gateway should be to be used in percent");
/* Router buffers (lnet/router.rs), Lustre's router.c parameters. */
LNET_PARAM(tiny_router_buffers, 0444,
	   "# of 0 payload messages to buffer in the router");
LNET_PARAM(small_router_buffers, 0444,
	   "# of small (1 page) messages to buffer in the router");
LNET_PARAM(large_router_buffers, 0444,
	   "# of large messages to buffer in the router");
LNET_PARAM(peer_buffer_credits, 0444, "# router buffer credits per peer");
/* The router checker (lnet/router_check.rs), Lustre's router.c parameters. */
LNET_PARAM(check_routers_before_use, 0444,
	   "Assume routers are down and ping them before use");
LNET_PARAM(avoid_asym_router_failure, 0644,
	   "Avoid asymmetrical router failures (0 to disable)");
LNET_PARAM(dead_router_check_interval, 0444,
	   "(DEPRECATED - Use alive_router_check_interval)");
LNET_PARAM(live_router_check_interval, 0444,
	   "(DEPRECATED - Use alive_router_check_interval)");
LNET_PARAM(alive_router_check_interval, 0644,
	   "Seconds between live router health checks (<= 0 to disable)");
LNET_PARAM(router_ping_timeout, 0644,
	   "Seconds to wait for the reply to a router health query");

/*
 * The debug mask (rust/kapi/debug.rs): which classes of LNet's and the
 * LNDs' lines reach the console, with Lustre's class bits and text forms.
 * In Lustre it is libcfs.ko's libcfs_debug, which lnet.ko cannot share
 * (see cpu_npartitions above); here it is lnet.ko's, named alike, and the
 * LNDs read it through the export. Read as an int, as Lustre's.
 */
extern unsigned int lnet_debug_mask;
EXPORT_SYMBOL_GPL(lnet_debug_mask);

int lnet_debug_param_set(const char *val, const struct kernel_param *kp);
int lnet_debug_param_get(char *buffer, const struct kernel_param *kp);

static const struct kernel_param_ops lnet_debug_ops = {
	.set = lnet_debug_param_set,
	.get = lnet_debug_param_get,
};

module_param_cb(libcfs_debug, &lnet_debug_ops, &lnet_debug_mask, 0644);
MODULE_PARM_DESC(libcfs_debug, "Lustre kernel debug mask");
