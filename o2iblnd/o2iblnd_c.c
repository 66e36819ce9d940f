// SPDX-License-Identifier: GPL-2.0
/*
 * ko2iblnd's C: the kapi RDMA helpers (static inlines and macros of the
 * verbs and RDMA CM interfaces), built into this module only, the common
 * ones every module built with rust/kapi links, and the watch that makes
 * an NI fatal while its interface is down or lacks the NI's address (what
 * that does is Rust: kapi_link_event in rust/kapi/rdma_ni.rs calls the
 * NI's LinkEvents in ni.rs).
 */
#include "../rust/kapi/kapi_helpers.c"
#include "../rust/kapi/rdma_helpers.c"
#include "../rust/kapi/link_watch.c"
