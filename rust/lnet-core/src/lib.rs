//! LNet policy that needs no kernel: parameter rules, and (as the project
//! grows) health arithmetic, failure classification, selection ranking and
//! wire codecs.
//!
//! The crate is `no_std` and has no panicking paths. It is compiled into the
//! kernel modules as a module (`#[path]`) and tested on the host with cargo.
#![no_std]
#![forbid(unsafe_code)]

pub mod adler32;
pub mod cpt;
pub mod credits;
pub mod crypto_hash;
pub mod debug;
pub mod discovery;
pub mod dist;
pub mod expr_list;
pub mod fault;
pub mod frag;
pub mod hdr;
pub mod health;
pub mod ip2nets;
pub mod kstrto;
pub mod libcfs_ioctl;
pub mod lnd_ctl;
pub mod lnd_params;
pub mod lnd_tunables;
pub mod lnet_nl;
pub mod lnet_nl_peer;
pub mod local_nids;
pub mod md;
pub mod msg_stats;
pub mod networks;
pub mod nid;
pub mod nid_index;
pub mod nidlist;
pub mod o2iblnd;
pub mod o2iblnd_credits;
pub mod o2iblnd_health;
pub mod o2iblnd_params;
pub mod o2iblnd_reject;
pub mod params;
pub mod peer_notify;
pub mod ping;
pub mod route;
pub mod router_check;
pub mod routes_param;
pub mod rtr_buf;
pub mod select;
pub mod socklnd;
pub mod socklnd_conns;
pub mod socklnd_params;
pub mod socklnd_path;
pub mod socklnd_sched;
pub mod udsp;
pub mod wire;
