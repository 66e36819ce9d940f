// SPDX-License-Identifier: GPL-2.0

//! Lustre's `lnet` generic netlink family (lnet_genl.c holds the family,
//! its commands and its multicast groups as static C data) as safe
//! Rust: the registration, a request's header fields and attributes, and
//! the messages a dump or a multi-part reply appends. The codec is lnet-core's `lnet_nl`.
//! Built into lnet.ko only (cfg `kapi_lnet`).

use core::ffi::{c_char, c_int, c_void, CStr};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::error::{code::EBUSY, code::EINVAL, Result};

extern "C" {
    fn lnet_genl_register() -> c_int;
    fn lnet_genl_unregister();
    fn lnet_genl_dump_put(
        dump: *mut Dump,
        flags: c_int,
        cmd: u8,
        data: *const u8,
        len: u32,
    ) -> c_int;
}

/// Whether the family is registered ([`GenlRegistration`]).
static GENL_REGISTERED: AtomicBool = AtomicBool::new(false);

/// The `lnet` family registered while this lives.
///
/// # Invariants
///
/// Exists only once `lnet_genl_register` has succeeded, and only one at a
/// time (`GENL_REGISTERED` is set while it lives).
pub struct GenlRegistration(());

impl GenlRegistration {
    /// Registers the family; `EBUSY` if it is registered already (or
    /// another module holds the name: `EEXIST` from the core).
    pub fn new() -> Result<Self> {
        if GENL_REGISTERED.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        // SAFETY: registers lnet_genl.c's static family, which is not
        // registered: the flag was clear and is now ours.
        let r = kernel::error::to_result(unsafe { lnet_genl_register() });
        if let Err(e) = r {
            GENL_REGISTERED.store(false, Ordering::Release);
            return Err(e);
        }
        // INVARIANT: registered above; the flag is set.
        Ok(GenlRegistration(()))
    }
}

impl Drop for GenlRegistration {
    fn drop(&mut self) {
        // The core waits for the family's running handlers before it
        // returns; dumps in flight hold the module.
        // SAFETY: registered (the type invariant) by this one instance,
        // unregistered once.
        unsafe { lnet_genl_unregister() };
        GENL_REGISTERED.store(false, Ordering::Release);
    }
}

/// A request to the family (`struct lnet_genl_req` of lnet_genl.c), lent
/// by lnet_genl.c to one handler call.
///
/// # Invariants
///
/// Never made in Rust (private fields, no constructor): only received from
/// lnet_genl.c, which fills it from a request the netlink core checked
/// (`attrs` points at `len` readable bytes of the request's buffer, which
/// outlives the call) and reads `errmsg` back after the call.
#[repr(C)]
pub struct Request {
    attrs: *const u8,
    len: u32,
    flags: u16,
    cmd: u8,
    version: u8,
    errmsg: *const c_char,
}

const _: () = assert!(core::mem::size_of::<Request>() == 24);

impl Request {
    /// The request's attributes (after the genl header).
    pub fn attrs(&self) -> &[u8] {
        if self.attrs.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: by the type invariant `attrs` points at `len` bytes of
        // the request, which nothing writes and which outlive `&self`.
        unsafe { core::slice::from_raw_parts(self.attrs, self.len as usize) }
    }

    /// The netlink message flags (`NLM_F_*`).
    pub fn flags(&self) -> u16 {
        self.flags
    }

    /// The command (`LNET_CMD_*`).
    pub fn cmd(&self) -> u8 {
        self.cmd
    }

    /// The genl header's version, which lnetctl sets to the detail asked.
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The message of the extended ack lnetctl prints with the error.
    pub fn set_err_msg(&mut self, msg: &'static CStr) {
        self.errmsg = msg.as_ptr();
    }
}

/// One call of a dump, or the reply of a request answered with several
/// messages (`struct lnet_genl_dump` of lnet_genl.c), lent to the handler.
///
/// # Invariants
///
/// Never made in Rust (private fields, no constructor): only received from
/// lnet_genl.c, where `skb` is the message buffer, which only this call
/// writes until it returns; `attrs` points at `len` readable bytes of the
/// request, which outlive the call; `portid` and `seq` are the requester's.
#[repr(C)]
pub struct Dump {
    skb: *mut c_void,
    attrs: *const u8,
    len: u32,
    portid: u32,
    seq: u32,
    _pad0: u32,
    state: u64,
    errmsg: *const c_char,
    flags: u16,
    version: u8,
    cmd: u8,
    _pad: [u8; 4],
}

const _: () = assert!(core::mem::size_of::<Dump>() == 56);

impl Dump {
    /// Appends one message of the family: command `cmd` with `flags`
    /// (`NLM_F_*`) and the attributes `payload`. `EMSGSIZE` if it does not
    /// fit; then nothing of it is left in the buffer.
    pub fn put(&mut self, flags: u16, cmd: u8, payload: &[u8]) -> Result {
        let len = u32::try_from(payload.len()).map_err(|_| EINVAL)?;
        let flags = c_int::from(flags);
        // SAFETY: `self` is lnet_genl.c's dump (type invariant): its skb is ours to write;
        // `payload` is `len` readable bytes, copied before the call returns.
        let rc = unsafe { lnet_genl_dump_put(self, flags, cmd, payload.as_ptr(), len) };
        kernel::error::to_result(rc)
    }

    /// The request's attributes (after the genl header).
    pub fn attrs(&self) -> &[u8] {
        if self.attrs.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: by the type invariant `attrs` points at `len` bytes of
        // the request, which nothing writes and which outlive `&self`.
        unsafe { core::slice::from_raw_parts(self.attrs, self.len as usize) }
    }

    /// The request's command (`LNET_CMD_*`).
    pub fn cmd(&self) -> u8 {
        self.cmd
    }

    /// The dump's own state, kept between its calls.
    pub fn state(&self) -> u64 {
        self.state
    }

    /// Sets the state the next call sees.
    pub fn set_state(&mut self, s: u64) {
        self.state = s;
    }

    /// The request's netlink message flags.
    pub fn flags(&self) -> u16 {
        self.flags
    }

    /// The request's genl version (the detail lnetctl asks).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The message of the extended ack.
    pub fn set_err_msg(&mut self, msg: &'static CStr) {
        self.errmsg = msg.as_ptr();
    }
}
