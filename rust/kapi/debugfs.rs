// SPDX-License-Identifier: GPL-2.0

//! debugfs directories and read-only value files.

use super::bindings;
use core::sync::atomic::AtomicU32;
use kernel::error::{from_err_ptr, Result};
use kernel::str::CStr;

/// A debugfs directory, removed with everything in it when dropped.
pub struct Dir(*mut bindings::dentry);

// SAFETY: a dentry pointer may be used and removed from any thread.
unsafe impl Send for Dir {}
// SAFETY: `Dir` exposes no interior mutability; creating files in it is
// serialised by debugfs itself.
unsafe impl Sync for Dir {}

impl Dir {
    /// Creates the directory `name` at the debugfs root.
    pub fn new(name: &CStr) -> Result<Self> {
        let root = core::ptr::null_mut();
        // SAFETY: `name` is NUL-terminated and outlives the call; a null
        // parent means the debugfs root.
        let dentry = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), root) };
        Ok(Dir(from_err_ptr(dentry)?))
    }

    /// Adds a file showing `value` in decimal. `value` is `'static` because
    /// debugfs reads it for as long as the file exists.
    pub fn add_u32(&self, name: &CStr, mode: u16, value: &'static AtomicU32) {
        // SAFETY: `self.0` is a live directory; `value` lives forever and an
        // `AtomicU32` has the layout of the `u32` debugfs reads.
        unsafe { bindings::debugfs_create_u32(name.as_char_ptr(), mode, self.0, value.as_ptr()) };
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by `debugfs_create_dir` and is removed
        // exactly once, here.
        unsafe { bindings::debugfs_remove(self.0) };
    }
}
