// SPDX-License-Identifier: GPL-2.0

//! lnet.ko's LND interface (include/linux/lnet/lnd.h) as an LND module
//! sees it: the [`Lnd`] trait each LND implements and the [`Registration`]
//! that puts it in LNet's table, its NIs, handing received headers to LNet
//! and ending messages. Built into the LNDs only (cfg `kapi_lnd`): lnet.ko
//! defines these functions.

use super::bindings::{
    bio_vec, lnet_lnd, lnet_msg, lnet_ni, lnet_ni_tunables, lnet_nid, lnet_tx_desc,
};
use super::kiov::{Kiov, KiovMut};
use crate::lnet_core::health::Status;
use crate::lnet_core::lnd_ctl::IocData;
use crate::lnet_core::nid::Nid;
use core::ffi::{c_char, c_int, c_uint, c_void};
use core::marker::PhantomData;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};
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
    fn lnet_ni_lnd_tunables(ni: *mut lnet_ni, t: *mut lnet_ni_tunables);
    fn lnet_notify(
        ni: *mut lnet_ni,
        peer: *mut lnet_nid,
        alive: bool,
        reset: bool,
        when: i64,
    ) -> c_int;
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
    fn lnet_get_lnd_timeout() -> c_uint;
}

/// LNet's derived LND timeout in seconds (`lnet_get_lnd_timeout`), for an
/// LND whose own timeout parameter is 0.
pub fn lnet_lnd_timeout() -> u32 {
    // SAFETY: a getter of lnet.ko's, callable in any context: it reads a
    // value and takes no argument.
    unsafe { lnet_get_lnd_timeout() }
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

/// An LND, as LNet drives it through its operations table
/// (`struct lnet_lnd`). Each LND module implements it once and holds a
/// [`Registration`] while it is loaded; the C calls are made here, so an
/// LND deals in its own types.
pub trait Lnd: Sized + 'static {
    /// The type LNet knows the LND by (`SOCKLND`, `O2IBLND`).
    const TYPE: u32;
    /// What the LND keeps for a started NI. LNet holds one reference as
    /// the NI's data, from `startup` until `shutdown` takes it back.
    type Ni: Send + Sync;
    /// The receive context the LND hands LNet with a header
    /// ([`LnetNi::parse`]) and gets back, once, in `recv`.
    type Rx: ForeignOwnable;

    /// The module's references on itself, one per running NI.
    fn refs() -> &'static ModuleRefs;
    /// Starts an NI (`lnd_startup`).
    fn startup(ni: LnetNi) -> Result<Arc<Self::Ni>>;
    /// Stops it (`lnd_shutdown`): LNet sends nothing more on it, and every
    /// message the LND holds is finalized before this returns.
    fn shutdown(ni: Arc<Self::Ni>);
    /// Sends a message (`lnd_send`). A refused one comes back with the
    /// error, and LNet finalizes it with the health status the LND may
    /// have set ([`Msg::set_hstatus`]). An LND implements this or
    /// [`Lnd::send_tx`]; this default refuses.
    fn send(_ni: ArcBorrow<'_, Self::Ni>, msg: Msg, _desc: &lnet_tx_desc) -> Result<(), Refused> {
        Err(msg.refuse(EINVAL, None))
    }
    /// Sends a message (`lnd_send`) that keeps its descriptor: what LNet
    /// calls. The default hands it to [`Lnd::send`].
    fn send_tx(ni: ArcBorrow<'_, Self::Ni>, tx: TxMsg) -> Result<(), Refused> {
        let desc = tx.desc;
        // SAFETY: by `TxMsg`'s invariant, LNet's descriptor of the message,
        // valid until it is finalized, which `send` does no sooner than it
        // last uses `desc` (it gets both for the call).
        Self::send(ni, tx.msg, unsafe { &*desc })
    }
    /// Receives what followed a header the LND parsed (`lnd_recv`); the
    /// LND finalizes the message once it is done. A refused one comes back
    /// with the error, and LNet finalizes it. An LND implements this or
    /// [`Lnd::recv_rx`]; this default refuses.
    fn recv(_rx: Self::Rx, recv: Recv) -> Result<(), Refused> {
        Err(recv.msg.refuse(EINVAL, None))
    }
    /// Receives what followed a parsed header (`lnd_recv`) into fragments
    /// that stay with the message: what LNet calls. The default hands it
    /// to [`Lnd::recv`].
    fn recv_rx(rx: Self::Rx, recv: RxMsg) -> Result<(), Refused> {
        Self::recv(rx, recv.0)
    }
    /// The LND's timeout in seconds, 0 for LNet's (`lnd_get_timeout`).
    fn timeout() -> u32;
    /// One of Lustre's /dev/lnet commands LNet passes on (`lnd_ctl`):
    /// `cmd` is its number (lnet-core `lnd_ctl::nr`), `data` the caller's
    /// argument, which the answer is written into. Process context, no
    /// LNet lock held; the NI stays started for the call. This default
    /// knows no command: EINVAL, as Lustre's LNet without the op.
    fn ctl(_ni: ArcBorrow<'_, Self::Ni>, _cmd: u32, _data: &mut IocData<'_>) -> Result {
        Err(EINVAL)
    }
}

/// A message the LND gives back to LNet with the errno it refused it
/// with: LNet finalizes it.
pub type Refused = (Msg, Error);

/// What `lnd_recv` is given: the message, and where its payload goes.
pub struct Recv {
    /// The message the payload is for.
    pub msg: Msg,
    /// Its fragments, valid until the message is finalized.
    pub kiov: *mut bio_vec,
    /// How many.
    pub niov: u32,
    /// Where in them the payload starts.
    pub offset: u32,
    /// Payload bytes to deliver.
    pub mlen: u32,
    /// Payload bytes that came (the rest is discarded).
    pub rlen: u32,
}

/// A message LNet gave `lnd_send`, with its descriptor.
///
/// # Invariants
///
/// `desc` is the non-null descriptor LNet passed with `msg` to `lnd_send`
/// (it lives in LNet's message), valid until `msg` is finalized; its
/// fragments are the message's MD's, held as long.
pub struct TxMsg {
    msg: Msg,
    desc: *const lnet_tx_desc,
}

// SAFETY: the message may be finalized from any thread (`Msg` is `Send`),
// and its descriptor, inside LNet's message, read from any.
unsafe impl Send for TxMsg {}

impl TxMsg {
    /// The message.
    pub fn msg(&self) -> &Msg {
        &self.msg
    }

    /// Its descriptor.
    pub fn desc(&self) -> &lnet_tx_desc {
        // SAFETY: non-null and valid until the message, which `self` holds,
        // is finalized (# Invariants).
        unsafe { &*self.desc }
    }

    /// Its payload's fragments, as many as the descriptor says.
    pub fn payload(&self) -> Kiov<'_> {
        let d = self.desc();
        // SAFETY: the descriptor's fragments belong to the MD the message
        // holds until it is finalized, no sooner than `self` goes
        // (# Invariants); LNet sends from them, only reading.
        unsafe { Kiov::from_raw(d.kiov.cast_const().cast(), d.niov) }
    }

    /// Ends the message (see [`Msg::finalize`]).
    pub fn finalize(self, status: i32, hstatus: Status) {
        self.msg.finalize(status, hstatus);
    }

    /// The message alone, giving up the descriptor.
    pub fn into_msg(self) -> Msg {
        self.msg
    }
}

/// What `lnd_recv` is given, with fragments that stay with the message.
///
/// # Invariants
///
/// Its `kiov` is null or points to the `niov` fragments LNet gave with `msg`
/// (those of the MD the message holds, for the LND to fill), valid until
/// `msg` is finalized.
pub struct RxMsg(Recv);

// SAFETY: the message may be finalized from any thread (`Msg` is `Send`),
// and its MD's pages written from any until then.
unsafe impl Send for RxMsg {}

impl RxMsg {
    /// The message the payload is for (none: discard it).
    pub fn msg(&self) -> &Msg {
        &self.0.msg
    }

    /// Where in the fragments the payload starts.
    pub fn offset(&self) -> u32 {
        self.0.offset
    }

    /// Payload bytes to deliver.
    pub fn mlen(&self) -> u32 {
        self.0.mlen
    }

    /// Payload bytes that came (the rest is discarded).
    pub fn rlen(&self) -> u32 {
        self.0.rlen
    }

    /// The fragments to fill, borrowed mutably: only one filler at a time.
    pub fn dest(&mut self) -> KiovMut<'_> {
        // SAFETY: LNet's fragments for the message, valid until it is
        // finalized, no sooner than `self` goes (# Invariants); LNet and
        // the ULP leave them to the LND meanwhile, and `&mut self` keeps
        // this the only borrow.
        unsafe { KiovMut::from_raw(self.0.kiov.cast_const().cast(), self.0.niov) }
    }

    /// Ends the message (see [`Msg::finalize`]).
    pub fn finalize(self, status: i32, hstatus: Status) {
        self.0.msg.finalize(status, hstatus);
    }
}

/// `T`'s operations table and the C entry points it names.
struct Adapter<T>(PhantomData<T>);

impl<T: Lnd> Adapter<T> {
    const TABLE: lnet_lnd = lnet_lnd {
        lnd_type: T::TYPE,
        lnd_startup: Some(Self::startup),
        lnd_shutdown: Some(Self::shutdown),
        lnd_send: Some(Self::send),
        lnd_recv: Some(Self::recv),
        lnd_get_timeout: Some(Self::get_timeout),
        lnd_ctl: Some(Self::ctl),
    };

    /// The NI's data: the reference `startup` gave LNet, null before it
    /// and after `shutdown`.
    fn data(ni: *mut lnet_ni) -> *const T::Ni {
        // SAFETY: LNet calls the table's entry points with its NI.
        unsafe { LnetNi::from_raw(ni) }
            .data()
            .cast::<T::Ni>()
            .cast_const()
    }

    /// # Safety
    ///
    /// Called by LNet only, for an NI being started.
    unsafe extern "C" fn startup(ni: *mut lnet_ni) -> c_int {
        if !T::refs().get() {
            return ENODEV.to_errno();
        }
        // SAFETY: the NI LNet is starting.
        let lni = unsafe { LnetNi::from_raw(ni) };
        match T::startup(lni) {
            Ok(n) => {
                // SAFETY: the reference is LNet's until `shutdown` takes
                // it back; `send` borrows it meanwhile.
                unsafe { lni.set_data(Arc::into_raw(n).cast_mut().cast()) };
                0
            }
            Err(e) => {
                // SAFETY: taken just above.
                unsafe { T::refs().put() };
                e.to_errno()
            }
        }
    }

    /// # Safety
    ///
    /// Called by LNet only, once per started NI, when it sends nothing
    /// more on it.
    unsafe extern "C" fn shutdown(ni: *mut lnet_ni) {
        let p = Self::data(ni);
        if p.is_null() {
            return;
        }
        // SAFETY: the NI LNet stops; clearing its data, so that the
        // reference is taken back once.
        unsafe { LnetNi::from_raw(ni).set_data(core::ptr::null_mut()) };
        // SAFETY: `p` is the reference `startup` gave LNet (`into_raw`),
        // taken back once: the data is cleared above.
        T::shutdown(unsafe { Arc::from_raw(p) });
        // SAFETY: the module reference `startup` took for this NI.
        unsafe { T::refs().put() };
    }

    /// # Safety
    ///
    /// Called by LNet only, for a started NI, with a message and its
    /// descriptor, valid until the message is finalized.
    unsafe extern "C" fn send(
        ni: *mut lnet_ni,
        msg: *mut lnet_msg,
        tx: *const lnet_tx_desc,
    ) -> c_int {
        let p = Self::data(ni);
        if p.is_null() || tx.is_null() {
            return super::errno::ENETDOWN().to_errno();
        }
        // SAFETY: `p` is the reference `startup` gave LNet, which keeps it
        // until `shutdown`, and LNet sends nothing once that has begun.
        let n = unsafe { ArcBorrow::from_raw(p) };
        // SAFETY: LNet hands the LND this message to send; it is the LND's
        // until finalized, or handed back with an error below.
        let msg = unsafe { Msg::from_raw(msg) };
        // INVARIANT: LNet's descriptor of `msg`, non-null (checked above),
        // inside the message and valid until it is finalized.
        match T::send_tx(n, TxMsg { msg, desc: tx }) {
            Ok(()) => 0,
            Err((msg, e)) => {
                msg.give_back();
                e.to_errno()
            }
        }
    }

    /// # Safety
    ///
    /// Called by LNet only, once for each header the LND parsed, with the
    /// context it gave with it and fragments valid until the message is
    /// finalized.
    #[allow(clippy::too_many_arguments)]
    unsafe extern "C" fn recv(
        _ni: *mut lnet_ni,
        private: *mut c_void,
        msg: *mut lnet_msg,
        _delayed: c_int,
        niov: c_uint,
        kiov: *mut bio_vec,
        offset: c_uint,
        mlen: c_uint,
        rlen: c_uint,
    ) -> c_int {
        // SAFETY: `private` came from `into_foreign` in `LnetNi::parse`, and LNet calls this
        // once per parsed header (include/linux/lnet/lnd.h): it is taken back once, here.
        let rx = unsafe { T::Rx::from_foreign(private.cast_const()) };
        // SAFETY: LNet hands the LND this message (or null, to discard) to
        // receive into: the LND's until finalized, or handed back below.
        let msg = unsafe { Msg::from_raw(msg) };
        // INVARIANT: the fragments LNet gave with `msg`, valid until it is
        // finalized.
        let r = RxMsg(Recv {
            msg,
            kiov,
            niov,
            offset,
            mlen,
            rlen,
        });
        match T::recv_rx(rx, r) {
            Ok(()) => 0,
            Err((msg, e)) => {
                msg.give_back();
                e.to_errno()
            }
        }
    }

    extern "C" fn get_timeout() -> c_uint {
        T::timeout()
    }

    /// # Safety
    ///
    /// Called by LNet only, for a started NI it keeps started for the
    /// call, with `len` writable bytes at `arg` that nothing else uses
    /// meanwhile.
    unsafe extern "C" fn ctl(
        ni: *mut lnet_ni,
        cmd: c_uint,
        arg: *mut c_void,
        len: c_uint,
    ) -> c_int {
        let p = Self::data(ni);
        if p.is_null() {
            return super::errno::ENETDOWN().to_errno();
        }
        if arg.is_null() {
            return EINVAL.to_errno();
        }
        // SAFETY: `p` is the reference `startup` gave LNet, which keeps it
        // until `shutdown`, and LNet keeps the NI started for the call.
        let n = unsafe { ArcBorrow::from_raw(p) };
        // SAFETY: non-null (checked above), and by # Safety `len` writable
        // bytes, ours alone for the call.
        let buf = unsafe { core::slice::from_raw_parts_mut(arg.cast::<u8>(), len as usize) };
        let Some(mut data) = IocData::new(buf) else {
            return EINVAL.to_errno();
        };
        match T::ctl(n, cmd, &mut data) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }
}

/// `T` registered with LNet (`lnet_register_lnd`) while this lives.
pub struct Registration<T: Lnd> {
    /// The table LNet keeps the address of, in a box that never moves it.
    table: KBox<lnet_lnd>,
    _lnd: PhantomData<T>,
}

impl<T: Lnd> Registration<T> {
    /// Registers `T`, whose running NIs hold references on `module`.
    pub fn new(module: &'static ThisModule) -> Result<Self> {
        T::refs().set(module);
        let table = KBox::new(Adapter::<T>::TABLE, GFP_KERNEL)?;
        // SAFETY: the table stays at this address until `drop`
        // unregisters it.
        kernel::error::to_result(unsafe { lnet_register_lnd(&*table) })?;
        Ok(Registration {
            table,
            _lnd: PhantomData,
        })
    }
}

impl<T: Lnd> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: registered by `new`; no NI of this LND runs (each holds a
        // reference on the module being unloaded).
        unsafe { lnet_unregister_lnd(&*self.table) };
    }
}

/// An NI as LNet knows it.
///
/// # Invariants
///
/// The pointer is an NI LNet started (or is starting) with this LND, which
/// LNet keeps until the LND's `shutdown` for it has returned: the LND holds
/// an `LnetNi` no longer than its NI data.
#[derive(Clone, Copy)]
pub struct LnetNi(*mut lnet_ni);

// SAFETY: LNet's NI may be used from any thread while it runs.
unsafe impl Send for LnetNi {}
// SAFETY: `&LnetNi` only copies the pointer into LNet's NI calls (lnet_ni_nid,
// lnet_ni_data, ...), which LNet allows from any thread at once: they read what
// is fixed at start or use atomics.
unsafe impl Sync for LnetNi {}

impl LnetNi {
    /// # Safety
    ///
    /// `ni` is an NI LNet is starting or runs with this LND, and the value
    /// is kept no longer than the LND keeps that NI's data (# Invariants).
    unsafe fn from_raw(ni: *mut lnet_ni) -> Self {
        // INVARIANT: as the caller promises.
        LnetNi(ni)
    }

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

    /// Tells LNet that the peer NI `peer` of this NI is down, as of
    /// `last_alive` (monotonic seconds of its last message, 0 if none):
    /// `lnet_notify`. Process context, with no lock held.
    pub fn notify_peer_down(&self, peer: &Nid, last_alive: i64) {
        let mut nid = super::lnet_abi::nid_to_c(peer);
        // SAFETY: a started NI and a NID LNet only reads during the call.
        let rc = unsafe { lnet_notify(self.0, &mut nid, false, false, last_alive) };
        // Refused only for a peer of another net, or while LNet stops:
        // nothing to do either way.
        let _ = rc;
    }

    /// `lnet_ni_lnd_tunables`: the LND tunables the administrator gave
    /// the NI into `t` (-1 where not given).
    pub fn lnd_tunables(&self, t: &mut lnet_ni_tunables) {
        // SAFETY: an NI being started, and a live struct LNet only writes.
        unsafe { lnet_ni_lnd_tunables(self.0, t) }
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
    /// the adapter takes it back as `L::Rx` (so the types match by
    /// construction); on error LNet never took it and it is returned with
    /// the errno. `rdma_req`: the LND writes a GET's REPLY data itself, so
    /// a matched GET comes back to `lnd_recv` as its REPLY.
    pub fn parse<L: Lnd>(
        &self,
        hdr: &[u8],
        from: &Nid,
        private: L::Rx,
        rdma_req: bool,
    ) -> core::result::Result<(), (c_int, L::Rx)> {
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
            return Err((rc, unsafe { L::Rx::from_foreign(p) }));
        }
        Ok(())
    }
}

/// A message LNet gave the LND, or none (the LND's own, or a receive to
/// discard). It goes back to LNet once: [`Msg::finalize`], or handed back
/// with a refusal ([`Refused`]). One dropped otherwise is finalized with
/// -EIO and a warning: a message is never lost.
///
/// # Invariants
///
/// The pointer is null, or a message LNet handed the LND and has not had
/// back: only this value holds it.
pub struct Msg(*mut lnet_msg);

// SAFETY: LNet's messages may be finalized from any thread.
unsafe impl Send for Msg {}

impl Msg {
    /// No message: the LND's own, which LNet knows nothing of.
    pub const fn none() -> Msg {
        // INVARIANT: null, no message of LNet's.
        Msg(core::ptr::null_mut())
    }

    /// # Safety
    ///
    /// `msg` is null, or a message LNet has just handed the LND (to send,
    /// to receive into, or as a GET's REPLY) and that nothing else holds.
    unsafe fn from_raw(msg: *mut lnet_msg) -> Msg {
        // INVARIANT: as the caller promises.
        Msg(msg)
    }

    /// Whether there is no LNet message (the LND's own, or a discard).
    pub fn is_none(&self) -> bool {
        self.0.is_null()
    }

    /// Takes the pointer out, leaving none (so that drop does nothing).
    fn take(&mut self) -> *mut lnet_msg {
        core::mem::take(&mut self.0)
    }

    /// Ends the message with `status` and the health status that says
    /// what went wrong.
    pub fn finalize(mut self, status: i32, hstatus: Status) {
        let m = self.take();
        if !m.is_null() {
            // SAFETY: a message LNet gave us and has not had back (#
            // Invariants); taken out above, so finalized once.
            unsafe { lnet_finalize(m, status, hstatus as c_uint) };
        }
    }

    /// Hands a refused message back: the caller returns an error to LNet,
    /// which finalizes it.
    fn give_back(mut self) {
        self.take();
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
            // SAFETY: LNet's REPLY for this GET, the LND's until finalized.
            reply: unsafe { Msg::from_raw(r) },
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

    /// Refuses the message with `e` (and `hstatus`, if any): for
    /// `lnd_send` and `lnd_recv` to return.
    pub fn refuse(self, e: Error, hstatus: Option<Status>) -> Refused {
        if let Some(h) = hstatus {
            self.set_hstatus(h);
        }
        (self, e)
    }
}

impl Drop for Msg {
    fn drop(&mut self) {
        let m = self.take();
        if !m.is_null() {
            // A bug of the LND's: LNet would wait for the message until
            // its deadline. End it now, loudly.
            kernel::pr_err!("LND dropped an LNet message: finalized with -EIO\n");
            // SAFETY: a message LNet gave us and has not had back (#
            // Invariants); taken out above, so finalized once.
            unsafe { lnet_finalize(m, EIO.to_errno(), Status::LocalError as c_uint) };
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
