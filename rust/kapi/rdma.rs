// SPDX-License-Identifier: GPL-2.0

//! RDMA CM identifiers and the verbs objects of an RDMA connection: the
//! protection domain, completion queues, the queue pair a cm_id carries,
//! posted sends and receives, and DMA-mapped message buffers. The calls go
//! through rdma_helpers.c; each object here owns its kernel object and
//! releases it on drop.
//!
//! The contexts the RDMA core hands back to our handlers are owned
//! references: a [`CmId`], [`Cq`] or [`AsyncEvents`] holds an `Arc` of
//! what its events go to ([`CmEvents`], [`CqEvents`], [`IbAsyncEvents`])
//! as the C context, and releases it only once the kernel object is gone
//! and no handler call can come; a handler borrows it.
//!
//! Lifetimes the types cannot show, which the user keeps:
//! - the RDMA device stays registered while a cm_id is bound to it (the CM
//!   waits for every such id before it lets the device go), so a [`Pd`],
//!   [`Cq`] or [`DmaBuf`] made on a device must be dropped before the last
//!   [`CmId`] bound to it;
//! - a [`CmId`] must not be dropped from its own event handler (the CM
//!   would wait for the handler that is running); the handler returns
//!   [`CmIdRef::DESTROY`] instead.

use super::kiov::{self, BioVec};
use core::cell::Cell;
use core::ffi::{c_char, c_int, c_void};
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

/// `struct rdma_cm_id *`, opaque.
type RawCmId = *mut c_void;
/// `struct rdma_cm_event *`, opaque.
type RawCmEvent = *mut c_void;
/// `struct ib_cq *`, opaque.
type RawCq = *mut c_void;
/// `struct ib_event *`, opaque.
type RawIbEvent = *mut c_void;
type RawDev = *mut c_void;
type RawPd = *mut c_void;

/// A CM event handler: `int (*)(struct rdma_cm_id *, struct rdma_cm_event *)`.
type CmHandler = unsafe extern "C" fn(RawCmId, RawCmEvent) -> c_int;
/// A completion handler: `void (*)(struct ib_cq *, void *ctx)`.
type CqCompHandler = unsafe extern "C" fn(RawCq, *mut c_void);
/// A CQ or QP event handler: `void (*)(struct ib_event *, void *ctx)`.
type IbEventHandler = unsafe extern "C" fn(RawIbEvent, *mut c_void);

extern "C" {
    fn kapi_rdma_create_id(handler: CmHandler, ctx: *mut c_void) -> RawCmId;
    fn kapi_rdma_destroy_id(id: RawCmId);
    fn kapi_rdma_id_context(id: RawCmId) -> *mut c_void;
    fn kapi_rdma_id_set_handler(id: RawCmId, handler: CmHandler, ctx: *mut c_void);
    fn kapi_rdma_id_device(id: RawCmId) -> RawDev;
    fn kapi_rdma_id_port(id: RawCmId) -> u32;
    fn kapi_rdma_bind4(id: RawCmId, addr: u32, port: u16) -> c_int;
    fn kapi_rdma_listen(id: RawCmId, backlog: c_int) -> c_int;
    fn kapi_rdma_resolve_addr4(
        id: RawCmId,
        src: u32,
        dst: u32,
        port: u16,
        timeout_ms: c_int,
    ) -> c_int;
    fn kapi_rdma_resolve_route(id: RawCmId, timeout_ms: c_int) -> c_int;
    fn kapi_rdma_set_tos(id: RawCmId, tos: c_int);
    fn kapi_rdma_path_mtu(id: RawCmId, mtu: c_int) -> c_int;
    fn kapi_rdma_peer4(id: RawCmId, addr: *mut u32, port: *mut u16) -> c_int;
    fn kapi_rdma_connect(
        id: RawCmId,
        p: *const c_void,
        len: u8,
        retry: c_int,
        rnr_retry: c_int,
    ) -> c_int;
    fn kapi_rdma_accept(id: RawCmId, p: *const c_void, len: u8, rnr_retry: c_int) -> c_int;
    fn kapi_rdma_reject(id: RawCmId, p: *const c_void, len: u8) -> c_int;
    fn kapi_rdma_disconnect(id: RawCmId) -> c_int;
    fn kapi_rdma_notify_established(id: RawCmId) -> c_int;
    fn kapi_cm_event_type(ev: RawCmEvent) -> c_int;
    fn kapi_cm_event_status(ev: RawCmEvent) -> c_int;
    fn kapi_cm_event_private(ev: RawCmEvent, len: *mut u8) -> *const c_void;
    fn kapi_cm_reject_data(id: RawCmId, ev: RawCmEvent, len: *mut u8) -> *const c_void;
    fn kapi_ib_device_name(dev: RawDev) -> *const c_char;
    fn kapi_ib_device_max_qp_wr(dev: RawDev) -> c_int;
    fn kapi_ib_alloc_pd(dev: RawDev) -> RawPd;
    fn kapi_ib_dealloc_pd(pd: RawPd);
    fn kapi_ib_pd_lkey(pd: RawPd) -> u32;
    fn kapi_ib_create_cq(
        dev: RawDev,
        comp: CqCompHandler,
        event: IbEventHandler,
        ctx: *mut c_void,
        cqe: c_int,
        vector: c_int,
    ) -> RawCq;
    fn kapi_ib_destroy_cq(cq: RawCq) -> c_int;
    fn kapi_ib_req_notify_cq(cq: RawCq) -> c_int;
    fn kapi_ib_poll_cq(cq: RawCq, wc: *mut Wc, n: c_int) -> c_int;
    fn kapi_rdma_create_qp(
        id: RawCmId,
        pd: RawPd,
        cq: RawCq,
        event: IbEventHandler,
        ctx: *mut c_void,
        send_wr: *mut c_int,
        recv_wr: c_int,
        send_sge: c_int,
    ) -> c_int;
    fn kapi_rdma_destroy_qp(id: RawCmId);
    fn kapi_ib_qp_error(id: RawCmId) -> c_int;
    fn kapi_ib_post_recv(id: RawCmId, wr_id: u64, sge: *const Sge) -> c_int;
    fn kapi_ib_post_send(id: RawCmId, wr_id: u64, sge: *const Sge, nsge: c_int) -> c_int;
    fn kapi_ib_event_type(ev: RawIbEvent) -> c_int;
    fn kapi_rdma_map_alloc(pd: RawPd, max_frags: c_int) -> *mut c_void;
    fn kapi_ib_register_event_handler(
        dev: RawDev,
        f: AsyncHandler,
        ctx: *mut c_void,
    ) -> *mut c_void;
    fn kapi_ib_unregister_event_handler(e: *mut c_void);
    fn kapi_ib_port_active(dev: RawDev, port: u32) -> c_int;
    fn kapi_rdma_map_kiov(
        m: *mut c_void,
        kiov: *const c_void,
        niov: c_int,
        offset: u32,
        len: u32,
        remote_write: c_int,
    ) -> c_int;
    fn kapi_rdma_map_free(m: *mut c_void);
    fn kapi_rdma_map_rkey(m: *const c_void) -> u32;
    fn kapi_rdma_map_iova(m: *const c_void) -> u64;
    fn kapi_ib_post_reg_send(id: RawCmId, wr_id: u64, m: *mut c_void, send: *const Sge) -> c_int;
    fn kapi_ib_post_reg_write_send(
        id: RawCmId,
        wr_id: u64,
        m: *mut c_void,
        seg: *const RdmaSeg,
        nseg: c_int,
        send: *const Sge,
    ) -> c_int;
    fn kapi_ib_dma_map(
        dev: RawDev,
        va: *mut c_void,
        len: usize,
        to_dev: c_int,
        err: *mut c_int,
    ) -> u64;
    fn kapi_ib_dma_unmap(dev: RawDev, addr: u64, len: usize, to_dev: c_int);
    fn kapi_ib_dma_sync(dev: RawDev, addr: u64, len: usize, for_dev: c_int, to_dev: c_int);
}

fn check(rc: c_int) -> Result {
    if rc < 0 {
        Err(Error::from_errno(rc))
    } else {
        Ok(())
    }
}

/// A device's async event handler: `void (*)(void *ctx, int event, u32 port)`.
type AsyncHandler = unsafe extern "C" fn(*mut c_void, c_int, u32);

fn from_err_ptr(p: *mut c_void) -> Result<NonNull<c_void>> {
    let p = kernel::error::from_err_ptr(p)?;
    NonNull::new(p).ok_or(ENOMEM)
}

/// `enum rdma_cm_event_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmEventType {
    /// Address resolution finished.
    AddrResolved,
    /// Address resolution failed.
    AddrError,
    /// Route resolution finished.
    RouteResolved,
    /// Route resolution failed.
    RouteError,
    /// A peer asks to connect (on a new id).
    ConnectRequest,
    /// Only for ids without a QP.
    ConnectResponse,
    /// The connection could not be made.
    ConnectError,
    /// The peer did not answer.
    Unreachable,
    /// The peer or its CM refused.
    Rejected,
    /// The connection is up.
    Established,
    /// The connection went down.
    Disconnected,
    /// The RDMA device is going away.
    DeviceRemoval,
    /// Multicast (not used by LNet).
    MulticastJoin,
    /// Multicast (not used by LNet).
    MulticastError,
    /// The id's address moved to another device.
    AddrChange,
    /// The connection's time-wait ended.
    TimewaitExit,
    /// A value this kernel does not define.
    Unknown(i32),
}

impl CmEventType {
    fn from_raw(v: c_int) -> CmEventType {
        use CmEventType::*;
        const ALL: [CmEventType; 16] = [
            AddrResolved,
            AddrError,
            RouteResolved,
            RouteError,
            ConnectRequest,
            ConnectResponse,
            ConnectError,
            Unreachable,
            Rejected,
            Established,
            Disconnected,
            DeviceRemoval,
            MulticastJoin,
            MulticastError,
            AddrChange,
            TimewaitExit,
        ];
        usize::try_from(v)
            .ok()
            .and_then(|i| ALL.get(i).copied())
            .unwrap_or(Unknown(v))
    }
}

/// An event passed to a CM handler, valid for that call.
///
/// # Invariants
///
/// `ev` is the event of the running handler call ([`cm_event`] makes it),
/// valid until that call returns, which `'a` does not outlive.
pub struct CmEvent<'a> {
    ev: RawCmEvent,
    _p: core::marker::PhantomData<&'a ()>,
}

impl<'a> CmEvent<'a> {
    /// What happened.
    pub fn event(&self) -> CmEventType {
        // SAFETY: a live event (type invariant).
        CmEventType::from_raw(unsafe { kapi_cm_event_type(self.ev) })
    }

    /// The event's status (an errno or a CM reject reason).
    pub fn status(&self) -> i32 {
        // SAFETY: a live event.
        unsafe { kapi_cm_event_status(self.ev) }
    }

    /// The peer's private data of a CONNECT_REQUEST or ESTABLISHED.
    pub fn private_data(&self) -> &'a [u8] {
        let mut len = 0u8;
        // SAFETY: a live event; the data lives as long as the event.
        let p = unsafe { kapi_cm_event_private(self.ev, &mut len) };
        if p.is_null() {
            return &[];
        }
        // SAFETY: the CM gives `len` readable bytes at `p` for the call.
        unsafe { core::slice::from_raw_parts(p.cast(), len.into()) }
    }

    /// The peer's consumer reject data of a REJECTED event, if any.
    pub fn reject_data(&self, id: &CmIdRef<'a>) -> &'a [u8] {
        let mut len = 0u8;
        // SAFETY: the id and event of the running handler.
        let p = unsafe { kapi_cm_reject_data(id.id, self.ev, &mut len) };
        if p.is_null() {
            return &[];
        }
        // SAFETY: `len` bytes at `p`, valid for the call.
        unsafe { core::slice::from_raw_parts(p.cast(), len.into()) }
    }
}

/// Connection parameters of `rdma_connect`.
#[derive(Clone, Copy)]
pub struct ConnectParams {
    /// Transport retries (3 bits).
    pub retry_count: u8,
    /// Receiver-not-ready retries (3 bits, 7 is infinite).
    pub rnr_retry_count: u8,
}

/// The id passed to a running CM handler.
///
/// # Invariants
///
/// `id` is the live id of the running handler call ([`cm_event`] makes
/// it), whose handler mutex the CM holds; `request` is true while it is a
/// connection request's new id nobody took yet ([`CmIdRef::adopt`]).
pub struct CmIdRef<'a> {
    id: RawCmId,
    request: Cell<bool>,
    adopted: Cell<bool>,
    _p: core::marker::PhantomData<&'a ()>,
}

/// What a cm_id's events go to: the id holds an `Arc<Self>` as its context
/// ([`CmId::new`], [`CmIdRef::adopt`]); a connection request's new id
/// starts with its listener's handler and context.
pub trait CmEvents: Send + Sync + Sized {
    /// One event of `id`, in process context, the id's events one at a
    /// time. Returns 0, or non-zero to refuse a connection request (the
    /// CM then destroys its new id); a request's new id not adopted is
    /// refused whatever this returns, and an adopted one is kept. For any
    /// other event the value is ignored: the CM destroys an id whose
    /// handler fails, and this id's [`CmId`] owns its destruction.
    ///
    /// Dropping the [`CmId`] adopted here, inside this call, would wait
    /// for this very handler: keep it.
    fn event(this: ArcBorrow<'_, Self>, id: &CmIdRef<'_>, ev: &CmEvent<'_>) -> c_int;
}

/// The CM handler of every id whose context is an `Arc<T>`.
///
/// # Safety
///
/// Called by the RDMA CM only, with the id and event of the call, for an
/// id whose handler was set with this function and `T` ([`CmId::new`],
/// [`CmIdRef::adopt`]) or inherited from such a listener.
unsafe extern "C" fn cm_event<T: CmEvents>(id: RawCmId, ev: RawCmEvent) -> c_int {
    if id.is_null() {
        return 0;
    }
    // SAFETY: the id of this call, live while it runs (# Safety).
    let ctx = unsafe { kapi_rdma_id_context(id) };
    if ctx.is_null() {
        return 0;
    }
    // SAFETY: the id's context is the `Arc::into_raw` of a `T` its `CmId`
    // holds (`CmId::new`, `CmIdRef::adopt` set it with this handler), and
    // releases only after `rdma_destroy_id`, which waits for this call; a
    // request's new id carries its listener's, and the CM holds the
    // listener's handler mutex, which its destruction takes, around it.
    let this = unsafe { ArcBorrow::<T>::from_raw(ctx.cast_const().cast()) };
    // INVARIANT: the event of this call, valid while it runs.
    let ev = CmEvent {
        ev,
        _p: core::marker::PhantomData,
    };
    let request = ev.event() == CmEventType::ConnectRequest;
    // INVARIANT: the id of this call; the CM holds its handler mutex.
    let idr = CmIdRef {
        id,
        request: Cell::new(request),
        adopted: Cell::new(false),
        _p: core::marker::PhantomData,
    };
    let r = T::event(this, &idr, &ev);
    if idr.adopted.get() || !request {
        // Its `CmId` destroys it: a non-zero return would have the CM
        // free it under its owner.
        0
    } else if r == 0 {
        // Nobody holds it: the CM must destroy it, and its events must
        // not find the listener's context after the listener is gone.
        CmIdRef::DESTROY
    } else {
        r
    }
}

/// An IPv4 address and port, host order.
pub type Addr4 = (u32, u16);

impl<'a> CmIdRef<'a> {
    /// What a handler returns to have the CM destroy the id it was called
    /// for (a refused connection request).
    pub const DESTROY: c_int = -(kernel::bindings::ECONNREFUSED as c_int);

    /// Takes ownership of a connection request's new id, whose next
    /// events go to `ctx`: the handler's return value no longer matters
    /// (the id is kept), and the owner destroys it. None for any other
    /// id, or one already taken.
    #[must_use = "dropping the adopted id in its own handler waits for that handler"]
    pub fn adopt<C: CmEvents>(&self, ctx: Arc<C>) -> Option<CmId<C>> {
        let id = NonNull::new(self.id)?;
        if !self.request.replace(false) {
            return None;
        }
        self.adopted.set(true);
        let ctx = Arc::into_raw(ctx);
        // SAFETY: the live id of the running handler, whose handler mutex
        // the CM holds (type invariant): the CM reads the handler and
        // context under it, so its next event sees both; `ctx` is owned by
        // the `CmId` made below, which outlives the id.
        unsafe { kapi_rdma_id_set_handler(self.id, cm_event::<C>, ctx.cast_mut().cast()) };
        // INVARIANT: a connection request's new id, which the CM leaves to
        // us when its handler returns 0 (`cm_event` makes it for an adopted
        // id); its context is `ctx`, with `cm_event::<C>`.
        Some(CmId { id, ctx })
    }

    /// The peer's address.
    pub fn peer(&self) -> Result<Addr4> {
        peer4(self.id)
    }

    /// Starts route resolution (after ADDR_RESOLVED).
    pub fn resolve_route(&self, timeout_ms: i32) -> Result {
        // SAFETY: a live id.
        check(unsafe { kapi_rdma_resolve_route(self.id, timeout_ms) })
    }

    /// Sets the IP type of service of the connection.
    pub fn set_tos(&self, tos: u8) {
        // SAFETY: a live id.
        unsafe { kapi_rdma_set_tos(self.id, tos.into()) }
    }

    /// Sets the route's path MTU to the IB MTU enum `mtu` (`IB_MTU_256`
    /// = 1 ... `IB_MTU_4096` = 5) when given, before the QP is made; the
    /// path's MTU in bytes (0: the route has no path record).
    pub fn path_mtu(&self, mtu: Option<u8>) -> u32 {
        // SAFETY: a live id, under its handler: the route is not resolved
        // again meanwhile.
        let r = unsafe { kapi_rdma_path_mtu(self.id, mtu.map_or(0, c_int::from)) };
        r.max(0) as u32
    }

    /// Sends a connection request carrying `private` (from the handler
    /// of ROUTE_RESOLVED, with a QP created on the id).
    pub fn connect(&self, private: &[u8], p: ConnectParams) -> Result {
        let len = u8::try_from(private.len()).map_err(|_| EINVAL)?;
        // SAFETY: a live id; the CM copies the private data.
        check(unsafe {
            kapi_rdma_connect(
                self.id,
                private.as_ptr().cast(),
                len,
                p.retry_count.into(),
                p.rnr_retry_count.into(),
            )
        })
    }

    /// Accepts the connection request this id came with.
    pub fn accept(&self, private: &[u8], rnr_retry_count: u8) -> Result {
        let len = u8::try_from(private.len()).map_err(|_| EINVAL)?;
        // SAFETY: a live id; the CM copies the private data.
        check(unsafe {
            kapi_rdma_accept(
                self.id,
                private.as_ptr().cast(),
                len,
                rnr_retry_count.into(),
            )
        })
    }

    /// Creates the id's RC queue pair on `pd`, both queues completing on
    /// `cq`, its events going to the CQ's context ([`CqEvents::qp_event`]).
    /// `send_wr` is lowered to what the device gave. The QP lives until
    /// [`NewQp::destroy`], [`CmId::destroy_qp`] or the id's destruction.
    ///
    /// # Safety
    ///
    /// `pd` must outlive the QP (the verbs core frees a PD in use); and
    /// until the returned [`NewQp`] is dropped, nothing else posts on,
    /// moves or destroys this id's QP.
    pub unsafe fn create_qp<T: CqEvents>(
        &self,
        pd: &Pd,
        cq: &Cq<T>,
        send_wr: &mut i32,
        recv_wr: i32,
    ) -> Result<NewQp<'_>> {
        // SAFETY: a live id (type invariant), PD and CQ; the QP's context is
        // the CQ's, which the CQ releases only once it is destroyed, which
        // the core refuses while a QP uses it; the PD by the caller.
        check(unsafe {
            kapi_rdma_create_qp(
                self.id,
                pd.raw(),
                cq.raw(),
                qp_event::<T>,
                cq.ctx.cast_mut().cast(),
                send_wr,
                recv_wr,
                4,
            )
        })?;
        Ok(NewQp { id: self })
    }

    /// Refuses the connection request with `private` as the reason.
    pub fn reject(&self, private: &[u8]) -> Result {
        let len = u8::try_from(private.len()).map_err(|_| EINVAL)?;
        // SAFETY: a live id; the CM copies the private data.
        check(unsafe { kapi_rdma_reject(self.id, private.as_ptr().cast(), len) })
    }
}

/// The QP [`CmIdRef::create_qp`] just made, which nothing else uses
/// until this is dropped (the contract of `create_qp`). Dropping it keeps
/// the QP.
pub struct NewQp<'a> {
    id: &'a CmIdRef<'a>,
}

impl NewQp<'_> {
    /// Posts a receive into `buf` before the connection is up.
    ///
    /// # Safety
    ///
    /// As [`CmId::post_recv`].
    pub unsafe fn post_recv(&self, wr_id: u64, buf: &DmaBuf) -> Result {
        let sge = buf.sge(buf.len());
        // SAFETY: a live id whose QP only this handler uses yet (the
        // contract of `create_qp`); the caller keeps the buffer mapped
        // until its completion.
        check(unsafe { kapi_ib_post_recv(self.id.id, wr_id, &sge) })
    }

    /// Destroys the QP, when setting up the connection failed after it.
    pub fn destroy(self) {
        // SAFETY: a live id whose QP nothing else uses or destroys while
        // `self` lives (the contract of `create_qp`).
        unsafe { kapi_rdma_destroy_qp(self.id.id) }
    }
}

fn peer4(id: RawCmId) -> Result<Addr4> {
    let (mut a, mut p) = (0u32, 0u16);
    // SAFETY: a live id and two out-parameters.
    check(unsafe { kapi_rdma_peer4(id, &mut a, &mut p) })?;
    Ok((a, p))
}

/// An RDMA CM identifier we own (RDMA_PS_TCP, RC), whose events go to
/// its context.
///
/// # Invariants
///
/// `id` is a live cm_id, destroyed only by `drop`, whose handler is
/// `cm_event::<T>` and whose context is `ctx`, an `Arc::into_raw` this
/// owns and releases in `drop` after the id is destroyed.
pub struct CmId<T: CmEvents> {
    id: NonNull<c_void>,
    ctx: *const T,
}

// SAFETY: the CM serialises operations on an id internally; posting and
// destroying the QP are `&mut self` so they do not race each other; the
// context is an `Arc` of a `Send + Sync` type.
unsafe impl<T: CmEvents> Send for CmId<T> {}
// SAFETY: the `&self` methods (bind, listen, resolve_addr, disconnect, queries)
// are RDMA CM calls that lock the id themselves; posting to and tearing down
// the QP take `&mut self`; `context` lends a `Sync` context.
unsafe impl<T: CmEvents> Sync for CmId<T> {}

impl<T: CmEvents> CmId<T> {
    /// A new id whose events go to `ctx` ([`CmEvents::event`]).
    pub fn new(ctx: Arc<T>) -> Result<CmId<T>> {
        let ctx = Arc::into_raw(ctx);
        // SAFETY: `cm_event::<T>` has the CM's signature and takes `ctx`,
        // an `Arc<T>`, as the context; `ctx` is only stored.
        let id = unsafe { kapi_rdma_create_id(cm_event::<T>, ctx.cast_mut().cast()) };
        match from_err_ptr(id) {
            // INVARIANT: a new id with `cm_event::<T>` and `ctx`.
            Ok(id) => Ok(CmId { id, ctx }),
            Err(e) => {
                // SAFETY: the reference `into_raw` made above; no id took it.
                drop(unsafe { Arc::from_raw(ctx) });
                Err(e)
            }
        }
    }

    fn raw(&self) -> RawCmId {
        self.id.as_ptr()
    }

    /// What the id's events go to.
    pub fn context(&self) -> ArcBorrow<'_, T> {
        // SAFETY: `ctx` is an `Arc::into_raw` this owns until it is dropped
        // (type invariant).
        unsafe { ArcBorrow::from_raw(self.ctx) }
    }

    /// Binds to a local IPv4 address (and port, 0 for any); this finds the
    /// RDMA device that owns the address.
    pub fn bind(&self, addr: u32, port: u16) -> Result {
        // SAFETY: a live id.
        check(unsafe { kapi_rdma_bind4(self.raw(), addr, port) })
    }

    /// Listens for connection requests (after `bind`).
    pub fn listen(&self, backlog: i32) -> Result {
        // SAFETY: a live id.
        check(unsafe { kapi_rdma_listen(self.raw(), backlog) })
    }

    /// Starts resolving `dst` from the source address `src`.
    pub fn resolve_addr(&self, src: u32, dst: Addr4, timeout_ms: i32) -> Result {
        // SAFETY: a live id.
        check(unsafe { kapi_rdma_resolve_addr4(self.raw(), src, dst.0, dst.1, timeout_ms) })
    }

    /// The RDMA device the id is bound to, once bound or resolved.
    pub fn device(&self) -> Option<Device> {
        // SAFETY: a live id.
        NonNull::new(unsafe { kapi_rdma_id_device(self.raw()) }).map(|d| Device { dev: d })
    }

    /// The device port the id uses.
    pub fn port_num(&self) -> u32 {
        // SAFETY: a live id.
        unsafe { kapi_rdma_id_port(self.raw()) }
    }

    /// The peer's address.
    pub fn peer(&self) -> Result<Addr4> {
        peer4(self.raw())
    }

    /// Destroys the id's QP, if any; nothing is posted on it afterwards.
    pub fn destroy_qp(&mut self) {
        // SAFETY: a live id; `&mut self` excludes a concurrent post.
        unsafe { kapi_rdma_destroy_qp(self.raw()) }
    }

    /// Moves the QP to the error state so every posted request completes
    /// (flushed).
    pub fn qp_error(&mut self) -> Result {
        // SAFETY: a live id.
        check(unsafe { kapi_ib_qp_error(self.raw()) })
    }

    /// Starts a disconnect (the QP goes to the error state).
    pub fn disconnect(&self) -> Result {
        // SAFETY: a live id.
        check(unsafe { kapi_rdma_disconnect(self.raw()) })
    }

    /// Tells the CM a receive arrived before ESTABLISHED (QP COMM_EST).
    pub fn notify_established(&self) -> Result {
        // SAFETY: a live id.
        check(unsafe { kapi_rdma_notify_established(self.raw()) })
    }

    /// Posts a receive into `buf`, reported with `wr_id`.
    ///
    /// # Safety
    ///
    /// `buf` must not be dropped until the receive completed or was
    /// flushed, or the QP was destroyed (an error means nothing was
    /// queued).
    pub unsafe fn post_recv(&mut self, wr_id: u64, buf: &DmaBuf) -> Result {
        let sge = buf.sge(buf.len());
        // SAFETY: a live id; the caller keeps the buffer mapped until its
        // completion.
        check(unsafe { kapi_ib_post_recv(self.raw(), wr_id, &sge) })
    }

    /// Posts a signalled SEND of the first `len` bytes of `buf`, after
    /// the work requests `chain` asks for: `map`'s registration for the
    /// peer to write into (a PUT_ACK or GET_REQ naming it), or its
    /// registration and the RDMA writes of `segs` (a PUT_DONE or GET_DONE),
    /// in that order.
    ///
    /// # Safety
    ///
    /// `buf` and the map must not be dropped until each work request of
    /// the post has completed or been flushed, or the QP was destroyed; an
    /// error means nothing was queued for [`Chain::Send`], but may come
    /// after a registration was queued, which then holds the `ib_mr`
    /// itself.
    pub unsafe fn post_chain(
        &mut self,
        wr_id: u64,
        chain: Chain<'_>,
        buf: &DmaBuf,
        len: usize,
    ) -> Result {
        let sge = buf.sge(len.min(buf.len()));
        let nseg = match &chain {
            Chain::RegWrite(_, segs) => c_int::try_from(segs.len()).map_err(|_| EINVAL)?,
            _ => 0,
        };
        // SAFETY: a live id (type invariant) and a mapped registration and
        // buffer, which the caller keeps as the function's contract says;
        // the segments are read during the call.
        check(unsafe {
            match chain {
                Chain::Send => kapi_ib_post_send(self.raw(), wr_id, &sge, 1),
                Chain::Reg(map) => kapi_ib_post_reg_send(self.raw(), wr_id, map.m.as_ptr(), &sge),
                Chain::RegWrite(map, segs) => kapi_ib_post_reg_write_send(
                    self.raw(),
                    wr_id,
                    map.m.as_ptr(),
                    segs.as_ptr(),
                    nseg,
                    &sge,
                ),
            }
        })
    }
}

/// The work requests a SEND follows ([`CmId::post_chain`]).
pub enum Chain<'a> {
    /// None.
    Send,
    /// The registration of a map.
    Reg(&'a mut RdmaMap),
    /// The registration of a map and RDMA writes from it.
    RegWrite(&'a mut RdmaMap, &'a [RdmaSeg]),
}

impl<T: CmEvents> Drop for CmId<T> {
    fn drop(&mut self) {
        // SAFETY: live by the type invariant and not used after; not from
        // its own handler (module doc). The QP goes first.
        unsafe { kapi_rdma_destroy_id(self.raw()) };
        // SAFETY: the reference the id held (type invariant): destroyed,
        // it runs no handler any more.
        drop(unsafe { Arc::from_raw(self.ctx) });
    }
}
/// An RDMA device, as a bound cm_id found it. Valid while that id lives
/// (module doc).
#[derive(Clone, Copy)]
pub struct Device {
    dev: NonNull<c_void>,
}

// SAFETY: verbs may be called on a device from any thread.
unsafe impl Send for Device {}
// SAFETY: `&Device` only gives queries (name, port state, limits) and the
// device to verbs that create objects on it, all of which the RDMA core allows
// from any thread at once.
unsafe impl Sync for Device {}

impl Device {
    /// The device's name ("rxe0").
    pub fn name(&self) -> &CStr {
        // SAFETY: the device's name lives as long as the device.
        unsafe { CStr::from_char_ptr(kapi_ib_device_name(self.dev.as_ptr()).cast()) }
    }

    /// Whether `port` is ACTIVE.
    pub fn port_active(&self, port: u32) -> Result<bool> {
        // SAFETY: a registered device.
        let rc = unsafe { kapi_ib_port_active(self.dev.as_ptr(), port) };
        check(rc)?;
        Ok(rc > 0)
    }

    /// The most work requests one queue of a QP may hold.
    pub fn max_qp_wr(&self) -> i32 {
        // SAFETY: a registered device.
        unsafe { kapi_ib_device_max_qp_wr(self.dev.as_ptr()) }
    }
}

/// A protection domain.
///
/// INVARIANT: `pd` is live until drop; `dev` is its device.
pub struct Pd {
    pd: NonNull<c_void>,
    dev: Device,
}

// SAFETY: a PD is used read-only after allocation.
unsafe impl Send for Pd {}
// SAFETY: after allocation a PD is only read: `&Pd` gives its lkey, its device
// and the PD to verbs that create objects on it, which the RDMA core allows
// from any thread at once.
unsafe impl Sync for Pd {}

impl Pd {
    /// A new PD on `dev`.
    pub fn new(dev: Device) -> Result<Pd> {
        // SAFETY: a registered device.
        let pd = from_err_ptr(unsafe { kapi_ib_alloc_pd(dev.dev.as_ptr()) })?;
        Ok(Pd { pd, dev })
    }

    fn raw(&self) -> RawPd {
        self.pd.as_ptr()
    }

    /// The device the PD is on.
    pub fn device(&self) -> Device {
        self.dev
    }

    /// The key for local DMA through this PD.
    pub fn local_dma_lkey(&self) -> u32 {
        // SAFETY: a live PD.
        unsafe { kapi_ib_pd_lkey(self.raw()) }
    }
}

impl Drop for Pd {
    fn drop(&mut self) {
        // Everything made on it is gone: MRs and DMA buffers borrow it,
        // and the LND destroys each QP (made with `&Pd`) in its
        // connection's teardown, before the NI holding the PD goes.
        // SAFETY: live by the type invariant, and unused from here.
        unsafe { kapi_ib_dealloc_pd(self.raw()) }
    }
}

/// A work completion (`struct kapi_wc`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Wc {
    /// The id the request was posted with.
    pub wr_id: u64,
    /// `enum ib_wc_status`: 0 success, 5 flushed, others errors.
    pub status: u32,
    /// `enum ib_wc_opcode`.
    pub opcode: u32,
    /// Bytes received (receives only).
    pub byte_len: u32,
    /// The device's own error code.
    pub vendor_err: u32,
}

impl Wc {
    /// `IB_WC_WR_FLUSH_ERR`: flushed when the QP went to the error state.
    pub const FLUSH_ERR: u32 = 5;

    /// The request succeeded.
    pub fn ok(&self) -> bool {
        self.status == 0
    }
}

#[repr(C)]
struct Sge {
    addr: u64,
    length: u32,
    lkey: u32,
}

/// What a CQ's completions and events, and those of the QPs completing
/// on it, go to: the CQ holds an `Arc<Self>` as their context.
pub trait CqEvents: Send + Sync + Sized {
    /// Completions may be ready. Any context, hard IRQ included.
    fn completion(this: ArcBorrow<'_, Self>);
    /// A CQ event (`enum ib_event_type`).
    fn cq_event(this: ArcBorrow<'_, Self>, event: i32);
    /// An event of a QP completing on the CQ (`enum ib_event_type`). HCA
    /// drivers call this in hard IRQ.
    fn qp_event(this: ArcBorrow<'_, Self>, event: i32);
}

/// # Safety
///
/// Called by the verbs core only, with the context of a `Cq<T>`.
unsafe extern "C" fn cq_completion<T: CqEvents>(_cq: RawCq, ctx: *mut c_void) {
    // SAFETY: the CQ's context is the `Arc::into_raw` its `Cq<T>` holds
    // until the CQ is destroyed, after which no call comes.
    T::completion(unsafe { ArcBorrow::from_raw(ctx.cast_const().cast()) })
}

/// # Safety
///
/// Called by the verbs core only, with its event and the context of a
/// `Cq<T>`.
unsafe extern "C" fn cq_event<T: CqEvents>(ev: RawIbEvent, ctx: *mut c_void) {
    // SAFETY: the event of this call.
    let t = unsafe { kapi_ib_event_type(ev) };
    // SAFETY: as in `cq_completion`.
    T::cq_event(unsafe { ArcBorrow::from_raw(ctx.cast_const().cast()) }, t)
}

/// # Safety
///
/// Called by the verbs core only, with its event and the context of a QP
/// made by [`CmIdRef::create_qp`]: the context of its `Cq<T>`.
unsafe extern "C" fn qp_event<T: CqEvents>(ev: RawIbEvent, ctx: *mut c_void) {
    // SAFETY: the event of this call.
    let t = unsafe { kapi_ib_event_type(ev) };
    // SAFETY: the CQ's context, which its `Cq<T>` releases only once the
    // CQ is destroyed, which the core refuses while this QP uses it.
    T::qp_event(unsafe { ArcBorrow::from_raw(ctx.cast_const().cast()) }, t)
}

/// A completion queue, whose completions and events go to its context.
///
/// # Invariants
///
/// `cq` is live until drop, made with the handlers for `T` and `ctx`, an
/// `Arc::into_raw` this owns: released once the CQ is destroyed.
pub struct Cq<T: CqEvents> {
    cq: NonNull<c_void>,
    ctx: *const T,
}

// SAFETY: polling and re-arming are thread-safe verbs; the user polls one
// CQ from one thread at a time; the context is an `Arc` of a `Send + Sync`
// type.
unsafe impl<T: CqEvents> Send for Cq<T> {}
// SAFETY: `&Cq` gives only `poll` and `arm` (ib_poll_cq, ib_req_notify_cq),
// which providers make safe to call at once (rxe and siw take the CQ's lock);
// the LNDs also poll each CQ from one thread.
unsafe impl<T: CqEvents> Sync for Cq<T> {}

impl<T: CqEvents> Cq<T> {
    /// A CQ of `cqe` entries on `dev` whose completions and events go to
    /// `ctx`, until it is dropped.
    pub fn new(dev: Device, ctx: Arc<T>, cqe: i32) -> Result<Cq<T>> {
        let ctx = Arc::into_raw(ctx);
        // SAFETY: a registered device; the handlers take `ctx`, an
        // `Arc<T>`, which is only stored.
        let raw = unsafe {
            kapi_ib_create_cq(
                dev.dev.as_ptr(),
                cq_completion::<T>,
                cq_event::<T>,
                ctx.cast_mut().cast(),
                cqe,
                0,
            )
        };
        match from_err_ptr(raw) {
            // INVARIANT: made with `T`'s handlers and `ctx`.
            Ok(cq) => Ok(Cq { cq, ctx }),
            Err(e) => {
                // SAFETY: the reference made above; no CQ took it.
                drop(unsafe { Arc::from_raw(ctx) });
                Err(e)
            }
        }
    }

    fn raw(&self) -> RawCq {
        self.cq.as_ptr()
    }

    /// Takes up to `out.len()` completions; returns how many.
    pub fn poll(&self, out: &mut [Wc]) -> Result<usize> {
        let n = c_int::try_from(out.len()).unwrap_or(c_int::MAX);
        // SAFETY: a live CQ and room for `n` entries.
        let rc = unsafe { kapi_ib_poll_cq(self.raw(), out.as_mut_ptr(), n) };
        check(rc)?;
        Ok(usize::try_from(rc).unwrap_or(0))
    }

    /// Asks for the next completion's call; true when completions may have
    /// arrived since the last poll (poll again).
    pub fn arm(&self) -> Result<bool> {
        // SAFETY: a live CQ.
        let rc = unsafe { kapi_ib_req_notify_cq(self.raw()) };
        check(rc)?;
        Ok(rc > 0)
    }
}

impl<T: CqEvents> Drop for Cq<T> {
    fn drop(&mut self) {
        // SAFETY: live by the type invariant and not used after.
        let rc = unsafe { kapi_ib_destroy_cq(self.raw()) };
        if rc == 0 {
            // SAFETY: the reference the CQ held (type invariant); destroyed,
            // it and its QPs call no handler any more.
            drop(unsafe { Arc::from_raw(self.ctx) });
        }
        // Else a QP still uses it (refused, and warned about, by the core):
        // the CQ stays, and so does the context its handlers may be given.
    }
}

/// `IB_EVENT_QP_FATAL`.
pub const IB_EVENT_QP_FATAL: i32 = 1;
/// `IB_EVENT_QP_REQ_ERR`.
pub const IB_EVENT_QP_REQ_ERR: i32 = 2;
/// `IB_EVENT_QP_ACCESS_ERR`.
pub const IB_EVENT_QP_ACCESS_ERR: i32 = 3;
/// `IB_EVENT_COMM_EST`.
pub const IB_EVENT_COMM_EST: i32 = 4;

/// A kmalloc'ed buffer mapped for DMA by one device, in one direction.
///
/// INVARIANT: `buf` is mapped at `addr` for `dir_to_dev` until drop.
pub struct DmaBuf {
    buf: KVec<u8>,
    addr: u64,
    pd: Arc<Pd>,
    to_dev: bool,
}

impl DmaBuf {
    /// A zeroed buffer of `len` bytes mapped for sends (`to_dev`) or
    /// receives.
    pub fn new(pd: &Arc<Pd>, len: usize, to_dev: bool) -> Result<DmaBuf> {
        let mut buf = KVec::from_elem(0u8, len, GFP_KERNEL)?;
        let mut err = 0;
        // SAFETY: a registered device and a kmalloc'ed buffer of `len`
        // bytes that stays put while mapped.
        let addr = unsafe {
            kapi_ib_dma_map(
                pd.dev.dev.as_ptr(),
                buf.as_mut_ptr().cast(),
                len,
                to_dev.into(),
                &mut err,
            )
        };
        check(err)?;
        Ok(DmaBuf {
            buf,
            addr,
            pd: pd.clone(),
            to_dev,
        })
    }

    /// The buffer's size.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether the buffer has no bytes.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn sge(&self, len: usize) -> Sge {
        Sge {
            addr: self.addr,
            length: u32::try_from(len).unwrap_or(u32::MAX),
            lkey: self.pd.local_dma_lkey(),
        }
    }

    /// The bytes, for the CPU (after [`DmaBuf::sync_for_cpu`] on receives).
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// The bytes to fill before a send ([`DmaBuf::sync_for_device`] after).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// Makes what the device wrote visible to the CPU.
    pub fn sync_for_cpu(&self) {
        // SAFETY: a live mapping (type invariant).
        unsafe {
            kapi_ib_dma_sync(
                self.pd.dev.dev.as_ptr(),
                self.addr,
                self.buf.len(),
                0,
                self.to_dev.into(),
            )
        }
    }

    /// Makes what the CPU wrote visible to the device.
    pub fn sync_for_device(&self) {
        // SAFETY: a live mapping.
        unsafe {
            kapi_ib_dma_sync(
                self.pd.dev.dev.as_ptr(),
                self.addr,
                self.buf.len(),
                1,
                self.to_dev.into(),
            )
        }
    }
}

impl Drop for DmaBuf {
    fn drop(&mut self) {
        // SAFETY: mapped by `new` with these arguments; the device is still
        // registered (module doc).
        unsafe {
            kapi_ib_dma_unmap(
                self.pd.dev.dev.as_ptr(),
                self.addr,
                self.buf.len(),
                self.to_dev.into(),
            )
        }
    }
}

/// One RDMA WRITE of a registration (`struct kapi_rdma_seg`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct RdmaSeg {
    /// The peer's address.
    pub raddr: u64,
    /// The peer's key.
    pub rkey: u32,
    /// Offset in the local registration.
    pub loff: u32,
    /// Bytes.
    pub len: u32,
    pad: u32,
}

impl RdmaSeg {
    /// A write of `len` bytes from `loff` to `raddr` under `rkey`.
    pub fn new(raddr: u64, rkey: u32, loff: u32, len: u32) -> RdmaSeg {
        RdmaSeg {
            raddr,
            rkey,
            loff,
            len,
            pad: 0,
        }
    }
}

/// Pages registered for RDMA through a fast-registration MR: one
/// virtually contiguous region under one key. The registration itself is
/// a work request ([`CmId::post_chain`]). It holds the fragments it maps.
///
/// # Invariants
///
/// `m` is a live `kapi_rdma_map` until drop; `pd` is its PD; the pages it
/// maps are those of `frags`, valid while it holds them.
pub struct RdmaMap {
    m: NonNull<c_void>,
    _pd: Arc<Pd>,
    frags: Option<Frags>,
}

// SAFETY: used by one owner at a time; the verbs calls are thread-safe.
unsafe impl Send for RdmaMap {}

impl RdmaMap {
    /// An MR on `pd` for up to `max_frags` pages.
    pub fn new(pd: &Arc<Pd>, max_frags: u32) -> Result<RdmaMap> {
        let max = c_int::try_from(max_frags).map_err(|_| EINVAL)?;
        // SAFETY: a live PD.
        let m = from_err_ptr(unsafe { kapi_rdma_map_alloc(pd.raw(), max) })?;
        // INVARIANT: maps nothing yet.
        Ok(RdmaMap {
            m,
            _pd: pd.clone(),
            frags: None,
        })
    }

    /// Maps the first `len` bytes of `frags` (all of them if fewer; for
    /// the peer to write into when `remote_write`) under a new key, keeping
    /// the fragments until dropped. Bytes with gaps (a fragment but the
    /// first starting mid-page, or one but the last ending mid-page) fail
    /// with `EPROTONOSUPPORT`: one registration maps pages in a row. A map
    /// maps once (`EINVAL` after).
    pub fn map(&mut self, frags: &Frags, len: u32, remote_write: bool) -> Result {
        if self.frags.is_some() {
            return Err(EINVAL);
        }
        let kiov = frags.slice();
        let n = c_int::try_from(kiov.len()).map_err(|_| EINVAL)?;
        // SAFETY: a live map (type invariant); valid pages: `Frags::new`'s
        // caller promised them valid until every map made of them is
        // dropped, and `self` is such a map (it keeps a copy to name them).
        check(unsafe {
            kapi_rdma_map_kiov(
                self.m.as_ptr(),
                kiov.as_ptr().cast(),
                n,
                frags.offset,
                len.min(frags.len),
                remote_write.into(),
            )
        })?;
        // INVARIANT: the pages just mapped.
        self.frags = Some(frags.dup());
        Ok(())
    }

    /// The key the peer names the region with.
    pub fn rkey(&self) -> u32 {
        // SAFETY: a live map.
        unsafe { kapi_rdma_map_rkey(self.m.as_ptr()) }
    }

    /// The region's address for the peer.
    pub fn iova(&self) -> u64 {
        // SAFETY: a live map.
        unsafe { kapi_rdma_map_iova(self.m.as_ptr()) }
    }
}

impl Drop for RdmaMap {
    fn drop(&mut self) {
        // `kapi_rdma_map_free` deregisters the MR before it unmaps the pages, so
        // the peer's late RDMA into a sink fails at the device, not in freed
        // memory. Our own work requests naming it are done by now: the post
        // functions' contract.
        // SAFETY: `m` is live by the type invariant and not used after this.
        unsafe { kapi_rdma_map_free(self.m.as_ptr()) }
    }
}

/// `IB_EVENT_DEVICE_FATAL`.
pub const IB_EVENT_DEVICE_FATAL: i32 = 8;
/// `IB_EVENT_PORT_ACTIVE`.
pub const IB_EVENT_PORT_ACTIVE: i32 = 9;
/// `IB_EVENT_PORT_ERR`.
pub const IB_EVENT_PORT_ERR: i32 = 10;

/// What a device's asynchronous events go to ([`AsyncEvents`]).
pub trait IbAsyncEvents: Send + Sync + Sized {
    /// `event` (`enum ib_event_type`) on `port`, in process context.
    fn async_event(this: ArcBorrow<'_, Self>, event: i32, port: u32);
}

/// # Safety
///
/// Called by `kapi_ib_evh_call` only, with the context of an
/// `AsyncEvents<T>`.
unsafe extern "C" fn async_event<T: IbAsyncEvents>(ctx: *mut c_void, event: c_int, port: u32) {
    // SAFETY: the `Arc::into_raw` the `AsyncEvents<T>` holds until it has
    // unregistered the handler, which waits for a running call.
    T::async_event(
        unsafe { ArcBorrow::from_raw(ctx.cast_const().cast()) },
        event,
        port,
    )
}

/// A device's asynchronous events (`ib_register_event_handler`) going to
/// its context in process context until dropped.
///
/// # Invariants
///
/// `e` is a registered handler until drop, calling `async_event::<T>`
/// with `ctx`, an `Arc::into_raw` this owns: released once unregistered.
pub struct AsyncEvents<T: IbAsyncEvents> {
    e: NonNull<c_void>,
    ctx: *const T,
}

// SAFETY: unregistering may happen from any thread; the context is an `Arc`
// of a `Send + Sync` type.
unsafe impl<T: IbAsyncEvents> Send for AsyncEvents<T> {}
// SAFETY: no method uses `&self`.
unsafe impl<T: IbAsyncEvents> Sync for AsyncEvents<T> {}

impl<T: IbAsyncEvents> AsyncEvents<T> {
    /// Registers `ctx` for `dev`'s events.
    pub fn new(dev: Device, ctx: Arc<T>) -> Result<AsyncEvents<T>> {
        let ctx = Arc::into_raw(ctx);
        // SAFETY: a registered device; `async_event::<T>` takes `ctx`, an
        // `Arc<T>`, which is only stored.
        let e = unsafe {
            kapi_ib_register_event_handler(
                dev.dev.as_ptr(),
                async_event::<T>,
                ctx.cast_mut().cast(),
            )
        };
        match from_err_ptr(e) {
            // INVARIANT: registered with `async_event::<T>` and `ctx`.
            Ok(e) => Ok(AsyncEvents { e, ctx }),
            Err(err) => {
                // SAFETY: the reference made above; nothing took it.
                drop(unsafe { Arc::from_raw(ctx) });
                Err(err)
            }
        }
    }
}

impl<T: IbAsyncEvents> Drop for AsyncEvents<T> {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant); waits for a running call.
        unsafe { kapi_ib_unregister_event_handler(self.e.as_ptr()) };
        // SAFETY: the reference the handler held (type invariant), which no
        // call uses any more.
        drop(unsafe { Arc::from_raw(self.ctx) });
    }
}

/// Page fragments of an LNet message (an MD's, or a receive's sink) for
/// RDMA and copies: bytes `[offset, offset + len)` of `niov` fragments.
///
/// There is one such value for the fragments, besides the copies the maps
/// made of them keep ([`RdmaMap::map`]), which touch no byte: so no two
/// copies into them run at once.
///
/// # Invariants
///
/// `ptr` is null or points to `niov` fragments, each naming a valid page
/// and lying within it, that stay valid (and whose bytes nothing else
/// writes while they are copied into) while this value or a copy of it
/// a map keeps exists ([`Frags::new`]).
pub struct Frags {
    ptr: *const BioVec,
    niov: u32,
    offset: u32,
    len: u32,
}

// SAFETY: by the type invariant the fragments are valid pages, which may be
// used from any thread while the value exists.
unsafe impl Send for Frags {}
// SAFETY: `&Frags` only reads the fragments and copies out of their pages.
unsafe impl Sync for Frags {}

/// Nothing to release: its end is made explicit where it must come before
/// its message's.
impl Drop for Frags {
    fn drop(&mut self) {}
}

impl Frags {
    /// Bytes `[offset, offset + len)` of the `niov` fragments at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` is null or points to `niov` fragments, each naming a valid page
    /// and lying within it, that stay valid (and whose bytes nothing else
    /// writes while they are copied into) until the returned value and
    /// every map made of it are dropped: an LNet message's fragments, until
    /// the message is finalized. One value is made for them.
    pub unsafe fn new(ptr: *const BioVec, niov: u32, offset: u32, len: u32) -> Frags {
        // INVARIANT: the caller's promise (# Safety).
        Frags {
            ptr,
            niov,
            offset,
            len,
        }
    }

    fn slice(&self) -> &[BioVec] {
        // SAFETY: null or `niov` fragments, valid while `self` exists (type
        // invariant).
        unsafe { kiov::slice(self.ptr, self.niov) }
    }

    /// Bytes.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fragments.
    pub fn niov(&self) -> u32 {
        self.niov
    }

    /// The copy a map keeps, which copies no byte.
    fn dup(&self) -> Frags {
        // INVARIANT: the same fragments, kept by a map while it maps them.
        Frags {
            ptr: self.ptr,
            niov: self.niov,
            offset: self.offset,
            len: self.len,
        }
    }

    /// Copies the bytes into `buf` from byte `at` on: how many were
    /// copied, fewer than [`Self::len`] if either ends first.
    pub fn copy_to(&self, buf: &mut DmaBuf, at: usize) -> Result<u32> {
        let dst = buf.buf.get_mut(at..).ok_or(EINVAL)?;
        let n = u32::try_from(dst.len()).unwrap_or(u32::MAX).min(self.len);
        let mut dv = KVec::<BioVec>::new();
        // SAFETY: the buffer is kmalloc'ed (lowmem), borrowed mutably for
        // the copy, so nothing else uses it.
        unsafe { kiov::push_kvaddr_range(&mut dv, dst.as_mut_ptr() as usize, n as usize)? };
        // SAFETY: valid fragments (type invariant) and the buffer's pages;
        // nothing else writes the buffer while it is borrowed.
        Ok(unsafe { kiov::copy(&dv, 0, self.slice(), self.offset, n) })
    }

    /// Copies `len` bytes of `buf` from byte `at` on into the fragments,
    /// whose only handle this is (a map's copy copies nothing): how many
    /// were copied, fewer if either ends first.
    pub fn copy_from(self, buf: &DmaBuf, at: usize, len: usize) -> Result<u32> {
        let src = buf.buf.get(at..).ok_or(EINVAL)?;
        let n = u32::try_from(src.len().min(len))
            .unwrap_or(u32::MAX)
            .min(self.len);
        let mut sv = KVec::<BioVec>::new();
        // SAFETY: the buffer is kmalloc'ed (lowmem) and borrowed for the copy.
        unsafe { kiov::push_kvaddr_range(&mut sv, src.as_ptr() as usize, n as usize)? };
        // SAFETY: valid fragments whose bytes nothing else writes during the
        // copy (type invariant), and the buffer's pages, only read.
        Ok(unsafe { kiov::copy(self.slice(), self.offset, &sv, 0, n) })
    }
}
