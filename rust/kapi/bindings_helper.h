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
#include <uapi/linux/lnet/libcfs_ioctl.h>
#include <uapi/linux/lnet/lnet-dlc.h>
#include <uapi/linux/lnet/lnetctl.h>
#include <crypto/hash.h>
#include <crypto/internal/hash.h>
#include "crypto_helpers.h"

// opaque dentry
// allow function debugfs_create_dir
// allow function debugfs_lookup
// allow function dput
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
// allow type libcfs_ioctl_data
// allow type lnet_ioctl_config_data
// allow type lnet_ioctl_set_value
// allow type lnet_fault_attr
// allow type lnet_fault_stat
// allow type lnet_ioctl_lnet_stats
// allow type lnet_ioctl_pool_cfg
// allow var LNET_IOCTL_VERSION.*
// allow var LIBCFS_IOC_DATA_MAX
// allow function lnet_kvaddr_to_page
// allow function lnet_inet_addr
// allow function lnet_inet_addrs
// allow function crypto_alloc_ahash
// allow function crypto_ahash_setkey
// allow function crypto_ahash_init
// allow function crypto_register_shash
// allow function crypto_unregister_shash
// allow type shash_alg
// allow type shash_desc
// allow var CRYPTO_ALG_ASYNC
// allow var CRYPTO_ALG_OPTIONAL_KEY
// allow var CRYPTO_MAX_ALG_NAME
// allow function kapi_ahash_.*
// allow function kapi_crypto_free_ahash
// allow function kapi_shash_.*
