// SPDX-License-Identifier: GPL-2.0

//! The netdev and inetaddr notifiers that report the link under an LND's
//! NIs (link_watch.c, which each LND's C file includes).

use kernel::prelude::*;

extern "C" {
    fn kapi_link_notifiers_register() -> core::ffi::c_int;
    fn kapi_link_notifiers_unregister();
}

/// The link notifiers, registered while this lives. link_watch.c counts
/// registrations, so that each value pairs its register with one
/// unregister however many there are.
pub struct LinkNotifiers(());

impl LinkNotifiers {
    /// Registers the notifiers (the first registration does).
    pub fn register() -> Result<Self> {
        // SAFETY: registers static notifier blocks, counted in C; `drop`
        // drops this registration.
        kernel::error::to_result(unsafe { kapi_link_notifiers_register() })?;
        Ok(LinkNotifiers(()))
    }
}

impl Drop for LinkNotifiers {
    fn drop(&mut self) {
        // SAFETY: pairs with the registration `register` made (the last
        // one unregisters the static blocks).
        unsafe { kapi_link_notifiers_unregister() };
    }
}
