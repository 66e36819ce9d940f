// SPDX-License-Identifier: GPL-2.0

//! Lustre's own /dev/lnet ioctls (`IOC_LIBCFS_*`,
//! include/uapi/linux/lnet/libcfs_ioctl.h), beside lnet-rs's (dev.rs), for
//! Lustre's `lctl` and `lnetctl`: `lctl list_nids` falls back to
//! `IOC_LIBCFS_GET_NI` when the kernel has no `lnet` netlink family; their
//! configure and unconfigure fall back to theirs only on an error that
//! family gives. The argument is copied in whole and checked as Lustre's
//! `lnet_psdev_ioctl` checks it (lnet-core's libcfs_ioctl), and copied back
//! whole after the command, as Lustre does even when it fails. A command
//! lnet-rs does not answer gets Lustre's answer to an unclaimed one, EINVAL.
//! Lustre's `lnetctl global show` and `stats show` read the NUMA range and
//! the message counters here (they have no netlink command); the values are
//! those lnet-rs's own ioctls give its `lnetctl`.

use crate::kapi::bindings::LNET_IOCTL_VERSION2;
use crate::kapi::bindings::{libcfs_ioctl_data, LIBCFS_IOC_DATA_MAX, LNET_IOCTL_VERSION};
use crate::kapi::bindings::{lnet_counters, lnet_ioctl_lnet_stats, lnet_ioctl_set_value};
use crate::kapi::errno;
use crate::kapi::lnet_abi::bytes_of;
use crate::lnet_core::libcfs_ioctl::{self as abi, lnet_stats, nr, off, set_value};
use crate::state::TheLnet;
use crate::{params, startup};
use core::mem::{offset_of, size_of};
use kernel::prelude::*;
use kernel::uaccess::UserSlice;

// lnet-core reads the argument at its own offsets: they are the C header's.
const _: () = {
    assert!(abi::VERSION == LNET_IOCTL_VERSION && abi::VERSION2 == LNET_IOCTL_VERSION2);
    assert!(abi::DATA_MAX == LIBCFS_IOC_DATA_MAX as usize);
    assert!(abi::DATA_LEN == size_of::<libcfs_ioctl_data>());
    assert!(off::NID == offset_of!(libcfs_ioctl_data, ioc_nid));
    assert!(off::FLAGS == offset_of!(libcfs_ioctl_data, ioc_flags));
    assert!(off::COUNT == offset_of!(libcfs_ioctl_data, ioc_count));
    assert!(off::INLLEN1 == offset_of!(libcfs_ioctl_data, ioc_inllen1));
    assert!(off::INLBUF1 == offset_of!(libcfs_ioctl_data, ioc_inlbuf1));
    assert!(off::INLLEN2 == offset_of!(libcfs_ioctl_data, ioc_inllen2));
    assert!(off::INLBUF2 == offset_of!(libcfs_ioctl_data, ioc_inlbuf2));
    assert!(off::PLEN1 == offset_of!(libcfs_ioctl_data, ioc_plen1));
    assert!(off::PBUF1 == offset_of!(libcfs_ioctl_data, ioc_pbuf1));
    assert!(off::PLEN2 == offset_of!(libcfs_ioctl_data, ioc_plen2));
    assert!(off::PBUF2 == offset_of!(libcfs_ioctl_data, ioc_pbuf2));
    assert!(set_value::LEN == size_of::<lnet_ioctl_set_value>());
    assert!(set_value::VALUE == offset_of!(lnet_ioctl_set_value, sv_value));
    assert!(lnet_stats::LEN == size_of::<lnet_ioctl_lnet_stats>());
    assert!(lnet_stats::CNTRS == offset_of!(lnet_ioctl_lnet_stats, st_cntrs));
    assert!(lnet_stats::CNTRS_LEN == size_of::<lnet_counters>());
};

/// A positive errno of lnet-core's checks as a kernel error.
fn errno_of(e: i32) -> Error {
    Error::from_errno(-e)
}

/// Lustre's command `cmd` (lnet-core's `is_libcfs`) with its argument at
/// user address `arg`. The caller has checked CAP_SYS_ADMIN.
pub(crate) fn ioctl(lnet: &'static TheLnet, cmd: u32, arg: usize) -> Result {
    let mut hdr = [0u8; abi::HDR_LEN];
    UserSlice::new(arg, hdr.len())
        .reader()
        .read_slice(&mut hdr)?;
    let (len, version) = abi::check_hdr(&hdr).map_err(errno_of)?;
    let mut buf = KVec::with_capacity(len, GFP_KERNEL)?;
    UserSlice::new(arg, len)
        .reader()
        .read_all(&mut buf, GFP_KERNEL)?;
    // The caller may have changed the header since it was first read.
    if abi::check_hdr(&buf) != Ok((len, version)) {
        return Err(EINVAL);
    }
    if version == abi::VERSION {
        abi::check_data(&buf).map_err(errno_of)?;
    }
    let r = command(lnet, abi::cmd_nr(cmd), version, &mut buf);
    let copied = UserSlice::new(arg, len).writer().write_slice(&buf);
    r.and(copied)
}

fn command(lnet: &'static TheLnet, nr: u32, version: u32, buf: &mut [u8]) -> Result {
    // Each command here takes the old-style argument.
    let old = version == abi::VERSION;
    match nr {
        nr::CONFIGURE if old => {
            let flags = abi::get_u32(buf, off::FLAGS).ok_or(EINVAL)?;
            startup::dev_configure(lnet, flags != 0)
        }
        nr::UNCONFIGURE => startup::dev_unconfigure(lnet),
        nr::GET_NI if old => {
            if !lnet.is_running() {
                return Err(errno::ENETDOWN());
            }
            let index = abi::get_u32(buf, off::COUNT).ok_or(EINVAL)?;
            let nid4 = {
                let nis = lnet.nis.lock();
                abi::nth_nid4(nis.nis.iter().map(|ni| &ni.nid), index)
            };
            let nid4 = nid4.ok_or(ENOENT)?;
            if abi::put_u64(buf, off::NID, nid4) {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
        nr::GET_NUMA_RANGE => {
            abi::check_get_numa_range(buf).map_err(errno_of)?;
            let range = params::snapshot().numa_range;
            if abi::put_u32(buf, set_value::VALUE, range) {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
        nr::GET_LNET_STATS => {
            abi::check_get_lnet_stats(buf, lnet.is_running()).map_err(errno_of)?;
            // The snapshot our own GET_STATS reports.
            let c = lnet.counters.snapshot();
            if abi::put_bytes(buf, lnet_stats::CNTRS, bytes_of(&c)) {
                Ok(())
            } else {
                Err(EINVAL)
            }
        }
        _ => Err(EINVAL),
    }
}
