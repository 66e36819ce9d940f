// SPDX-License-Identifier: GPL-2.0

//! lnet.ko's LND interface (include/linux/lnet/lnd.h) as an LND module
//! calls it: registration, its NIs, handing received headers to LNet and
//! ending messages. Built into the LNDs only (cfg `kapi_lnd`): lnet.ko
//! defines these functions.

use super::bindings::{bio_vec, lnet_lnd, lnet_msg, lnet_ni, lnet_ni_tunables, lnet_nid};
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use core::ffi::{c_char, c_int, c_uint, c_void};
use kernel::prelude::*;
use kernel::types::ForeignOwnable;

extern "C" {
    // `struct module *` as an opaque pointer: bindgen's struct is not
    // FFI-safe on kernels without lockdep (an empty `lockdep_map`).
    fn try_module_get(module: *mut c_void) -> bool;
    fn module_put(module: *mut c_void);
    fn lnet_register_lnd(lnd: *const lnet_lnd) -> c_int;
    fn lnet_unregister_lnd(lnd: *const lnet_lnd);
    fn lnet_ni_nid(ni: *mut lnet_ni, nid: *mut lnet_nid);
    fn lnet_ni_set_data(ni: *mut lnet_ni, data: *mut c_void);
    fn lnet_ni_data(ni: *mut lnet_ni) -> *mut c_void;
    fn lnet_ni_iface(ni: *mut lnet_ni) -> *const c_char;
    fn lnet_ni_default_tunables(ni: *mut lnet_ni, t: *mut lnet_ni_tunables);
    fn lnet_parse(
        ni: *mut lnet_ni,
        hdr: *const c_void,
        hdr_len: c_uint,
        from: *const lnet_nid,
        private: *mut c_void,
        rdma_req: c_int,
    ) -> c_int;
    fn lnet_finalize(msg: *mut lnet_msg, status: c_int, hstatus: c_uint);
    fn lnet_msg_set_hstatus(msg: *mut lnet_msg, hstatus: c_uint);
    fn lnet_set_link_fatal_state(ni: *mut lnet_ni, fatal: c_uint);
    fn lnet_create_reply_msg(
        ni: *mut lnet_ni,
        get: *mut lnet_msg,
        niov: *mut c_uint,
        kiov: *mut *mut bio_vec,
        len: *mut c_uint,
    ) -> *mut lnet_msg;
    fn lnet_set_reply_msg_len(ni: *mut lnet_ni, reply: *mut lnet_msg, len: c_uint) -> c_int;
}

/// A REPLY whose data the target writes into the GET's MD, and that MD's
/// fragments: valid until the REPLY is finalized.
pub struct ReplySink {
    /// The REPLY message, finalized by the LND.
    pub reply: Msg,
    /// The MD's fragments.
    pub kiov: *const bio_vec,
    /// How many.
    pub niov: u32,
    /// Bytes the MD holds, from offset 0.
    pub len: u32,
}

/// Registers a static LND table.
pub fn register(lnd: &'static lnet_lnd) -> Result {
    // SAFETY: a static table, unregistered before the module goes.
    kernel::error::to_result(unsafe { lnet_register_lnd(lnd) })
}

/// Unregisters a table `register` registered.
pub fn unregister(lnd: &'static lnet_lnd) {
    // SAFETY: registered by `register`.
    unsafe { lnet_unregister_lnd(lnd) };
}

/// An NI as LNet knows it.
#[derive(Clone, Copy)]
pub struct LnetNi(pub *mut lnet_ni);

// SAFETY: LNet's NI may be used from any thread while it runs.
unsafe impl Send for LnetNi {}
// SAFETY: `&LnetNi` only copies the pointer into LNet's NI calls (lnet_ni_nid,
// lnet_ni_data, ...), which LNet allows from any thread at once: they read what
// is fixed at start or use atomics.
unsafe impl Sync for LnetNi {}

impl LnetNi {
    /// The NI's NID.
    pub fn nid(&self) -> Result<Nid> {
        let mut c = lnet_nid::default();
        // SAFETY: a started NI and an out-parameter.
        unsafe { lnet_ni_nid(self.0, &mut c) };
        super::lnet_abi::nid_from_c(&c)
    }

    /// The NI's interface name, "" for none.
    pub fn iface(&self) -> &CStr {
        // SAFETY: LNet returns a NUL-terminated name that lives with the NI.
        unsafe { CStr::from_char_ptr(lnet_ni_iface(self.0).cast()) }
    }

    /// The LND's data for the NI (null until set).
    pub fn data(&self) -> *mut c_void {
        // SAFETY: a started NI.
        unsafe { lnet_ni_data(self.0) }
    }

    /// Sets the LND's data for the NI.
    ///
    /// # Safety
    ///
    /// `data` must stay valid until it is cleared: the LND's callbacks
    /// read it back through [`LnetNi::data`].
    pub unsafe fn set_data(&self, data: *mut c_void) {
        // SAFETY: a started NI; the pointer is only stored.
        unsafe { lnet_ni_set_data(self.0, data) }
    }

    /// The link under the NI went down (`fatal`) or came back: selection
    /// avoids it meanwhile and pings report it down. Any context.
    pub fn set_link_fatal(&self, fatal: bool) {
        // SAFETY: a started NI; only a flag is set.
        unsafe { lnet_set_link_fatal_state(self.0, fatal.into()) }
    }

    /// `lnet_ni_default_tunables`: completes `t` from the NI's and stores
    /// the LND's own.
    pub fn default_tunables(&self, t: &mut lnet_ni_tunables) {
        // SAFETY: an NI being started, and a live struct.
        unsafe { lnet_ni_default_tunables(self.0, t) }
    }

    /// Hands a received header from `from` to LNet with `private` as its
    /// receive context. On success LNet owns `private` and gives it back
    /// through exactly one `lnd_recv` (include/linux/lnet/lnd.h), where
    /// the LND takes it back with `P::from_foreign`; on error LNet never
    /// took it and it is returned with the errno. `rdma_req`: the LND
    /// writes a GET's REPLY data itself, so a matched GET comes back to
    /// `lnd_recv` as its REPLY.
    pub fn parse<P: ForeignOwnable>(
        &self,
        hdr: &[u8],
        from: &Nid,
        private: P,
        rdma_req: bool,
    ) -> core::result::Result<(), (c_int, P)> {
        let from = super::lnet_abi::nid_to_c(from);
        let p = private.into_foreign();
        // SAFETY: a started NI; the header and NID outlive the call.
        let rc = unsafe {
            lnet_parse(
                self.0,
                hdr.as_ptr().cast(),
                hdr.len() as c_uint,
                &from,
                p.cast_mut(),
                c_int::from(rdma_req),
            )
        };
        if rc < 0 {
            // SAFETY: from `into_foreign` above, and LNet refused the
            // header without calling `lnd_recv`: it is ours again.
            return Err((rc, unsafe { P::from_foreign(p) }));
        }
        Ok(())
    }
}

/// A message LNet gave the LND (or null, for the LND's own); it goes back
/// through [`Msg::finalize`] once.
pub struct Msg(pub *mut lnet_msg);

// SAFETY: LNet's messages may be finalized from any thread.
unsafe impl Send for Msg {}

impl Msg {
    /// Ends the message with `status` and the health status that says
    /// what went wrong.
    pub fn finalize(self, status: i32, hstatus: Status) {
        if !self.0.is_null() {
            // SAFETY: LNet gave us the message and it is finalized only here.
            unsafe { lnet_finalize(self.0, status, hstatus as c_uint) };
        }
    }

    /// From `lnd_send` of a GET on `ni`: its REPLY, to be written by the
    /// target straight into the GET's MD (`lnet_create_reply_msg`). None:
    /// send the GET as usual.
    pub fn create_reply(&self, ni: LnetNi) -> Option<ReplySink> {
        if self.0.is_null() {
            return None;
        }
        let (mut niov, mut kiov, mut len) = (0, core::ptr::null_mut(), 0);
        // SAFETY: a GET being sent, not finalized yet; live out pointers.
        let r = unsafe { lnet_create_reply_msg(ni.0, self.0, &mut niov, &mut kiov, &mut len) };
        (!r.is_null()).then(|| ReplySink {
            reply: Msg(r),
            kiov: kiov.cast_const(),
            niov,
            len,
        })
    }

    /// The target wrote `len` bytes of this REPLY (from
    /// [`Msg::create_reply`]): EPROTO if that is more than the sink.
    pub fn set_reply_len(&self, ni: LnetNi, len: u32) -> Result {
        // SAFETY: a REPLY from `create_reply`, not finalized yet.
        kernel::error::to_result(unsafe { lnet_set_reply_msg_len(ni.0, self.0, len) })
    }

    /// From `lnd_send`, before refusing the message: the health status
    /// LNet finalizes it with.
    pub fn set_hstatus(&self, hstatus: Status) {
        if !self.0.is_null() {
            // SAFETY: a message being sent, not finalized yet.
            unsafe { lnet_msg_set_hstatus(self.0, hstatus as c_uint) };
        }
    }
}

/// The references an LND module holds on itself, one per running NI, so
/// that it cannot be unloaded under LNet.
pub struct ModuleRefs(core::sync::atomic::AtomicPtr<c_void>);

impl Default for ModuleRefs {
    fn default() -> Self {
        Self::new()
    }
}

impl ModuleRefs {
    /// No module yet: `set` at registration.
    pub const fn new() -> Self {
        ModuleRefs(core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()))
    }

    /// The module the references are taken on.
    pub fn set(&self, module: &'static ThisModule) {
        self.0.store(
            module.as_ptr().cast(),
            core::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Takes a reference; false while the module is being unloaded.
    pub fn get(&self) -> bool {
        // SAFETY: `set`'s module is loaded while its code runs; a null
        // module (not set) is the kernel's own, always there.
        unsafe { try_module_get(self.0.load(core::sync::atomic::Ordering::Relaxed)) }
    }

    /// Drops a reference.
    ///
    /// # Safety
    ///
    /// Pairs with an earlier `get` that returned true.
    pub unsafe fn put(&self) {
        // SAFETY: this call pairs with an earlier `get` that returned true
        // (# Safety), so the module reference module_put drops is one we hold.
        unsafe { module_put(self.0.load(core::sync::atomic::Ordering::Relaxed)) };
    }
}
