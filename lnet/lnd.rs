// SPDX-License-Identifier: GPL-2.0

//! The LND interface (include/linux/lnet/lnd.h): the registry of LNDs, and the
//! calls LNet makes into an LND through its operations table.

use crate::kapi::bindings::{lnet_lnd, lnet_tx_desc};
use crate::kapi::kiov::BioVec;
use crate::ni::Ni;
use kernel::prelude::*;

/// `struct lnet_ni` and `struct lnet_msg` as LNDs see them: opaque; really
/// an [`Ni`] and a [`crate::msg::Msg`].
pub(crate) use crate::kapi::bindings::{lnet_msg, lnet_ni};

/// A registered LND's operations table. It lives in the LND's module, which
/// unregisters it before unloading, and LNet stops every NI of an LND
/// before the LND can be unregistered.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct LndRef(*const lnet_lnd);

// SAFETY: the table is immutable while registered and its operations may be
// called from any thread (an LND requirement, as in Lustre).
unsafe impl Send for LndRef {}
// SAFETY: `&LndRef` only reads the pointer and calls the registered table's
// operations, which LNDs must allow from any thread at once; nothing writes the
// table while it is registered.
unsafe impl Sync for LndRef {}

impl LndRef {
    pub(crate) fn new(lnd: *const lnet_lnd) -> Option<LndRef> {
        if lnd.is_null() {
            None
        } else {
            Some(LndRef(lnd))
        }
    }

    fn ops(&self) -> &lnet_lnd {
        // SAFETY: non-null and valid while registered (see the type).
        unsafe { &*self.0 }
    }

    pub(crate) fn lnd_type(&self) -> u32 {
        self.ops().lnd_type
    }

    /// The LND's timeout now, if it has one (`lnd_get_timeout`).
    pub(crate) fn timeout(&self) -> Option<u32> {
        let f = self.ops().lnd_get_timeout?;
        // SAFETY: a getter of the registered table, callable anywhere.
        Some(unsafe { f() })
    }

    pub(crate) fn startup(&self, ni: &Ni) -> Result {
        let Some(f) = self.ops().lnd_startup else {
            return Err(EINVAL);
        };
        // SAFETY: `ni` outlives the call and stays valid until shutdown.
        kernel::error::to_result(unsafe { f(ni.as_c().cast()) })
    }

    pub(crate) fn shutdown(&self, ni: &Ni) {
        if let Some(f) = self.ops().lnd_shutdown {
            // SAFETY: the NI was started by this LND.
            unsafe { f(ni.as_c().cast()) };
        }
    }

    /// Hands `msg` to the LND; on error the caller finalizes it.
    pub(crate) fn send(&self, ni: &Ni, msg: *mut lnet_msg, tx: *const lnet_tx_desc) -> Result {
        let Some(f) = self.ops().lnd_send else {
            return Err(EINVAL);
        };
        // SAFETY: `msg` and `tx` stay valid until the message is finalized.
        kernel::error::to_result(unsafe { f(ni.as_c().cast(), msg.cast(), tx) })
    }

    /// Asks the LND to receive (or, with a null `msg`, discard) a payload.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn recv(
        &self,
        ni: &Ni,
        private: *mut core::ffi::c_void,
        msg: *mut lnet_msg,
        delayed: bool,
        kiov: *mut BioVec,
        niov: u32,
        offset: u32,
        mlen: u32,
        rlen: u32,
    ) -> Result {
        let Some(f) = self.ops().lnd_recv else {
            return Err(EINVAL);
        };
        // SAFETY: the LND gave `private` to lnet_parse; `kiov` belongs to an
        // MD the message holds a reference on.
        kernel::error::to_result(unsafe {
            f(
                ni.as_c().cast(),
                private,
                msg.cast(),
                delayed.into(),
                niov,
                kiov.cast(),
                offset,
                mlen,
                rlen,
            )
        })
    }
}
