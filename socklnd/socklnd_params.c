// SPDX-License-Identifier: GPL-2.0
/*
 * ksocklnd's parameter table (include/lnet_rs/param_table.h): parsing,
 * ranges and the live values are Rust (socklnd/params.rs, with the rules
 * in lnet-core's socklnd_params). Names and modes are Lustre's.
 */
#include <lnet_rs/param_table.h>

LNET_RS_PARAM_OPS(ksocknal);

#define KSOCK_PARAM(name, mode, desc) LNET_RS_PARAM(ksocknal, name, mode, desc)

KSOCK_PARAM(sock_timeout, 0644,
	    "dead socket timeout (seconds); 0 uses LNet's LND timeout");
KSOCK_PARAM(credits, 0444, "# concurrent sends");
KSOCK_PARAM(peer_credits, 0444, "# concurrent sends to 1 peer");
KSOCK_PARAM(peer_buffer_credits, 0444, "# per-peer router buffer credits");
KSOCK_PARAM(peer_timeout, 0444,
	    "Seconds without aliveness news to declare peer dead (<=0 to disable)");
KSOCK_PARAM(keepalive_idle, 0644, "# idle seconds before probe");
KSOCK_PARAM(keepalive_count, 0644, "# missed probes == dead");
KSOCK_PARAM(keepalive_intvl, 0644, "seconds between probes");
KSOCK_PARAM(nagle, 0644, "enable NAGLE?");
KSOCK_PARAM(tx_buffer_size, 0644,
	    "socket tx buffer size (0 for system default)");
KSOCK_PARAM(rx_buffer_size, 0644,
	    "socket rx buffer size (0 for system default)");
KSOCK_PARAM(tos, 0444, "Set the type of service (-1 to disable)");
KSOCK_PARAM(keepalive, 0644, "# seconds before send keepalive");
KSOCK_PARAM(min_reconnectms, 0644, "min connection retry interval (mS)");
KSOCK_PARAM(max_reconnectms, 0644, "max connection retry interval (mS)");
KSOCK_PARAM(min_bulk, 0644, "smallest 'large' message");
KSOCK_PARAM(typed_conns, 0444, "use different sockets for bulk");
KSOCK_PARAM(zc_min_payload, 0644, "minimum payload size to zero copy");
KSOCK_PARAM(silent_path, 0644,
	    "resend what is queued on a connection TCP's retransmissions find silent, before sock_timeout (0: sock_timeout only, as Lustre)");
KSOCK_PARAM(nscheds, 0444,
	    "# scheduler daemons in each pool while starting");
