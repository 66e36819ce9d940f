// SPDX-License-Identifier: GPL-2.0
/*
 * ko2iblnd's parameter table (include/lnet_rs/param_table.h): parsing,
 * ranges and the live values are Rust (o2iblnd/params.rs, with the rules
 * in lnet-core's o2iblnd_params). Names and modes are Lustre's: the 0644
 * ones are those Lustre lets an administrator change at runtime.
 */
#include <lnet_rs/param_table.h>

LNET_RS_PARAM_OPS(kiblnd);

#define KIB_PARAM(name, mode, desc) LNET_RS_PARAM(kiblnd, name, mode, desc)

KIB_PARAM(service, 0444, "RDMA CM port to listen on and connect to (TCP port space)");
KIB_PARAM(cksum, 0644, "1 to checksum every message (RDMA payloads excluded)");
KIB_PARAM(timeout, 0644,
	  "seconds a connection attempt or transmit may take; 0 uses LNet's LND timeout");
KIB_PARAM(nscheds, 0444, "scheduler threads per CPT (0: half the CPT's CPUs)");
KIB_PARAM(conns_per_peer, 0444, "connections to each peer NI");
KIB_PARAM(ntx, 0444, "transmit descriptors per NI, shared by its CPTs");
KIB_PARAM(credits, 0444, "concurrent sends through one NI");
KIB_PARAM(peer_credits, 0444, "concurrent sends to one peer NI (8..255 in effect)");
KIB_PARAM(peer_credits_hiw, 0444,
	  "credits owed to a peer before a NOOP returns them (0: half of peer_credits)");
KIB_PARAM(peer_buffer_credits, 0444, "router buffer credits per peer");
KIB_PARAM(peer_timeout, 0444,
	  "seconds without news before a peer is declared dead (<= 0: never)");
/* A string, kept apart from the numbers by the Rust callbacks. */
KIB_PARAM(ipif_name, 0444, "interface of an o2ib net given none");
KIB_PARAM(retry_count, 0644, "transport retries of connections (0..7)");
KIB_PARAM(rnr_retry_count, 0644,
	  "retries when the peer has no receive buffer posted (0..7, 7: no limit)");
KIB_PARAM(keepalive, 0644, "idle seconds before a NOOP is sent to a peer (0: never)");
KIB_PARAM(ib_mtu, 0444, "path MTU: 256, 512, 1024, 2048 or 4096 (0: the path's own)");
KIB_PARAM(concurrent_sends, 0444,
	  "work requests in flight per connection (0: peer_credits)");
KIB_PARAM(use_fastreg_gaps, 0444, "no effect: gappy fast registration is not used");
KIB_PARAM(map_on_demand, 0444, "no effect: obsolete");
KIB_PARAM(fmr_pool_size, 0444, "no effect: the kernel has no FMR");
KIB_PARAM(fmr_flush_trigger, 0444, "no effect: the kernel has no FMR");
KIB_PARAM(fmr_cache, 0444, "no effect: the kernel has no FMR");
KIB_PARAM(dev_failover, 0444, "no effect: failover is LNet Health's, between NIs");
KIB_PARAM(require_privileged_port, 0644,
	  "1 to refuse connections from ports above 1023");
KIB_PARAM(use_privileged_port, 0644, "1 to connect from a port below 1024");
KIB_PARAM(wrq_sge, 0444, "scatter/gather entries per RDMA work request");
KIB_PARAM(tos, 0444, "type of service of connections (-1: the system's)");
