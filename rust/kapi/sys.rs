// SPDX-License-Identifier: GPL-2.0

//! Small kernel services the 6.12 kernel crate lacks: random bytes and
//! the caller's capabilities.

use kernel::bindings;

/// Fills `buf` with random bytes (`get_random_bytes`).
pub fn random_bytes(buf: &mut [u8]) {
    // SAFETY: writes exactly `buf.len()` bytes into `buf`, which we borrow
    // mutably for the call; callable in any context.
    unsafe { bindings::get_random_bytes(buf.as_mut_ptr().cast(), buf.len()) };
}

/// Whether the current task may administer the system (`CAP_SYS_ADMIN`).
pub fn capable_sys_admin() -> bool {
    // SAFETY: checks the current task's credentials; takes no pointer.
    unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as _) }
}
