// SPDX-License-Identifier: GPL-2.0

//! The "adler32" hash of the kernel crypto API, which the kernel lacks and
//! Lustre's bulk checksums use (`OBD_CKSUM_ADLER`): registered while lnet.ko
//! is loaded. The arithmetic is lnet-core's (`adler32.rs`).

use crate::kapi::crypto::{Checksum32, Checksum32Registration};
use crate::lnet_core::adler32;
use core::ffi::CStr;
use kernel::prelude::*;

struct Adler32;

impl Checksum32 for Adler32 {
    const NAME: &'static CStr = c"adler32";
    const DRIVER_NAME: &'static CStr = c"adler32-lnet";
    // Above nothing in particular: a faster implementation registered by
    // someone else may take over with a higher one.
    const PRIORITY: i32 = 100;
    const INIT: u32 = adler32::INIT;

    fn update(sum: u32, data: &[u8]) -> u32 {
        adler32::update(sum, data)
    }
}

/// Registers "adler32"; None (with a warning) if the crypto API refuses,
/// which leaves the other algorithms working, as Lustre does.
pub(crate) fn register() -> Option<Checksum32Registration> {
    match Checksum32Registration::register::<Adler32>() {
        Ok(r) => Some(r),
        Err(e) => {
            pr_warn!("adler32 checksum not registered: {:?}\n", e);
            None
        }
    }
}
