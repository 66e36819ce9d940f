// SPDX-License-Identifier: GPL-2.0
/*
 * ksocklnd's C: the kapi helpers its sockets use, and the watch that tells
 * each NI when its interface's link goes down or comes back (health.md §8;
 * what a link change does is Rust, kapi_link_event in ni.rs).
 */
#include "../rust/kapi/kapi_helpers.c"
#include "../rust/kapi/link_watch.c"
