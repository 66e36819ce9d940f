/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces lnet-rs binds beyond the 6.12 kernel crate, and our
 * own C ABI (include/linux/lnet/, include/uapi/linux/lnet/). Only the items named by the "allow" lines below
 * are generated, and types named by "opaque" lines are bound as opaque blobs
 * (scripts/gen-bindings.sh).
 */
#include <linux/debugfs.h>
#include <linux/moduleparam.h>
#include <linux/lnet/api.h>
#include <linux/lnet/lnd.h>
#include <linux/lnet/lib-types.h>
#include <uapi/linux/lnet/lnet-rs-ioctl.h>

// opaque dentry
// allow function debugfs_create_dir
// allow function debugfs_create_u32
// allow function debugfs_remove
// allow type lnet_md
// allow type lnet_me
// allow type lnet_nid
// allow type lnet_ni
// allow type lnet_msg
// allow type lnet_counters
// allow type lnet_event
// allow type lnet_processid
// allow type lnet_process_id
// allow type cfs_expr_list
// allow type cfs_range_expr
// allow type lnet_handle_md
// allow type lnet_lnd
// allow type lnet_tx_desc
// allow type lnet_ni_tunables
// allow type lnet_msg_hstatus
// allow type lnet_ack_req
// allow type lnet_unlink
// allow type lnet_ins_pos
// allow var LNET_.*
// allow type lnet_ioc_.*
// allow var LNET_IOC_.*
// allow function lnet_kvaddr_to_page
// allow function lnet_inet_addr
// allow function lnet_inet_addrs
