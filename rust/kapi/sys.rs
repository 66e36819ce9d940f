// SPDX-License-Identifier: GPL-2.0

//! Small kernel services the 6.12 kernel crate lacks: random bytes, the
//! caller's capabilities, module loading and the CPU count.

use kernel::bindings;
use kernel::c_str;
use kernel::str::CStr;

/// Fills `buf` with random bytes (`get_random_bytes`).
pub fn random_bytes(buf: &mut [u8]) {
    // SAFETY: writes exactly `buf.len()` bytes into `buf`, which we borrow
    // mutably for the call; callable in any context.
    unsafe { bindings::get_random_bytes(buf.as_mut_ptr().cast(), buf.len()) };
}

/// A random `u32` (`get_random_u32`).
pub fn random_u32() -> u32 {
    // SAFETY: takes no arguments; callable from any context.
    unsafe { bindings::get_random_u32() }
}

/// Whether the current task may administer the system (`CAP_SYS_ADMIN`).
pub fn capable_sys_admin() -> bool {
    // SAFETY: checks the current task's credentials; takes no pointer.
    unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as _) }
}

/// Loads module `name` through modprobe and waits until it has loaded or
/// failed (`request_module`): `Err` holds the kernel's error or modprobe's
/// exit status. Sleeps; the module's init must need no lock the caller
/// holds, and the caller's own module must have finished its init.
pub fn request_module(name: &CStr) -> core::result::Result<(), i32> {
    // SAFETY: a "%s" format with one NUL-terminated string argument, both
    // living through the call; `wait` is true, which process context allows.
    let rc =
        unsafe { bindings::__request_module(true, c_str!("%s").as_char_ptr(), name.as_char_ptr()) };
    match rc {
        0 => Ok(()),
        e => Err(e),
    }
}

/// The number of possible CPUs (`nr_cpu_ids`).
pub fn nr_cpu_ids() -> u32 {
    // SAFETY: a plain read of a value set once at boot.
    unsafe { bindings::nr_cpu_ids }
}
