/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces lnet-rs binds beyond the 6.12 kernel crate. Only the
 * items named by the "allow" lines below are generated, and types named by
 * "opaque" lines are bound as opaque blobs (scripts/gen-bindings.sh).
 */
#include <linux/debugfs.h>
#include <linux/moduleparam.h>

// opaque dentry
// allow function debugfs_create_dir
// allow function debugfs_create_u32
// allow function debugfs_remove
