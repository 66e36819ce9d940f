// SPDX-License-Identifier: GPL-2.0
/* ksocklnd's C: the kapi helpers its sockets use. */
#include "../rust/kapi/kapi_helpers.c"
