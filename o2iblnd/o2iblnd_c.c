// SPDX-License-Identifier: GPL-2.0
/*
 * ko2iblnd's C: the kapi RDMA helpers (static inlines and macros of the
 * verbs and RDMA CM interfaces), built into this module only, and the
 * common ones every module built with rust/kapi links.
 */
#include "../rust/kapi/kapi_helpers.c"
#include "../rust/kapi/rdma_helpers.c"
