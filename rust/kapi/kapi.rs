// SPDX-License-Identifier: GPL-2.0

//! kapi: the kernel interfaces lnet-rs needs that the 6.12 kernel crate does
//! not offer, as our own bindgen output and small safe types over it.
//!
//! Each module includes this tree with `#[path]`; it is the one place with
//! non-trivial `unsafe`.

// A lock-free stack of references, for the LNDs' schedulers.
pub mod arcstack;
pub mod bindings;
pub mod clist;
// CPU and node masks for lnet.ko's partition table; only lnet.ko links
// their C helpers (its Kbuild sets the cfg).
#[cfg(kapi_cpumask)]
pub mod cpumask;
// Only lnet.ko links the crypto helpers (its Kbuild sets the cfg).
#[cfg(kapi_crypto)]
pub mod crypto;
pub mod debug;
pub mod debugfs;
pub mod errno;
// Argument types of exported C functions.
pub mod ffi;
// Lustre's lnet generic netlink family (lnet_genl.c), lnet.ko's.
#[cfg(kapi_lnet)]
pub mod genl;
pub mod kiov;
pub mod kthread;
// The LNDs' side of lnet.ko's LND interface; lnet.ko defines it.
#[cfg(kapi_lnd)]
pub mod lnd;
// The link notifiers of link_watch.c, which only the LNDs build.
#[cfg(kapi_lnd)]
pub mod link;
// The parameter callbacks of the LNDs' integer parameters.
#[cfg(kapi_lnd)]
pub mod lnd_param;
pub mod lnet_abi;
// lnet.ko's own C helpers (lnet_exports.c, lnet_dev.c, ...).
#[cfg(kapi_lnet)]
pub mod lnet_c;
// The memory of lnet.ko's own MDs.
#[cfg(kapi_lnet)]
pub mod md_memory;
pub mod param;
// Only lnet.ko forwards (its Kbuild sets the cfg).
#[cfg(kapi_lnet)]
pub mod rtr_pages;
// Only ko2iblnd links the RDMA helpers (its Kbuild sets the cfg): lnet.ko
// and ksocklnd.ko must load on nodes without RDMA.
#[cfg(kapi_rdma)]
pub mod rdma;
// Threads, link watch and scheduling stack of an RDMA NI (ko2iblnd only:
// it alone calls lnet_get_lnd_timeout through it).
#[cfg(kapi_rdma)]
pub mod rdma_ni;
pub mod sock;
pub mod sys;
pub mod vec;
pub mod waitq;
