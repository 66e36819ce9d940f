// SPDX-License-Identifier: GPL-2.0

//! Forwarding (Lustre's router.c and lib-move.c): with routing on, a
//! message whose destination is another node is received into a router
//! buffer and sent on toward its destination, the buffer going back to
//! its pool when the send ends. The counting rules are lnet-core's
//! `rtr_buf.rs`; this file keeps the pools, the buffers and the messages
//! waiting for them, under `TheLnet.rtr`.
//!
//! Lustre's rules followed here:
//! - A forwarded message takes a router credit of the peer NI it came
//!   from, then a buffer credit of the pool its payload fits
//!   (`lnet_post_routed_recv_locked`); it waits in order for either, its
//!   payload left with the LND, which is asked to receive it once both
//!   are held (a delayed receive).
//! - It is sent on with its header's source kept (`lnet_handle_send`),
//!   through selection as any message: to its destination on a local
//!   net, else to the next gateway. No deadline drops it: a router
//!   cannot know the upper layer's timeouts (`lnet_check_message_drop`).
//! - It is counted in `route_count`/`route_length` once sent, not in the
//!   send and receive counts (`lnet_msg_decommit_tx`).
//! - Routing off: the ping buffer says `RTE_DISABLED`, waiting messages
//!   are dropped and the pools' free buffers freed; lent buffers are
//!   freed as their messages end (`lnet_rtrpools_free`,
//!   `lnet_return_rx_credits_locked`).
//!
//! Unlike Lustre, `lnetctl set routing 1` starts forwarding at once and
//! `set routing 0` stops it at once: Lustre's STARTING and STOPPING
//! states wait a check interval plus `router_ping_timeout` first, so that
//! end nodes' router checkers (router_check.rs) see the change. Pools are one
//! per node, not one per CPU partition (their sizes are still divided by
//! the partitions, as Lustre sizes each of its own).

use crate::kapi::rtr_pages::RtrPages;
use crate::kapi::vec;
use crate::lnet_core::credits::TxCredits;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::rtr_buf::{self, Forwarding, PoolCount, Returned, NPOOLS};
use crate::msg::{finalize, Msg};
use crate::ni::{Ni, NiState};
use crate::parse::drop_incoming;
use crate::state::TheLnet;
use core::ffi::c_void;
use core::sync::atomic::Ordering::Relaxed;
use kernel::page::PAGE_SIZE;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Where a forwarded message stands with one of its two credits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Credit {
    None,
    /// Counted, waiting in its queue for one to come back.
    Awaited,
    Held,
}

/// What a forwarded message holds of the router (`msg_rtrcredit`,
/// `msg_peerrtrcredit` and its buffer).
pub(crate) struct Fwd {
    pool: usize,
    buf: Option<RtrPages>,
    pool_credit: Credit,
    peer_credit: Credit,
    /// The pools' generation its credits were taken in: after routing
    /// stopped (and perhaps started again) they count for nothing.
    gen: u32,
}

/// A forwarded message waiting for a router credit or a buffer.
///
/// # Invariants
///
/// `private` is the context the LND of `msg.ni` gave `lnet_parse` with
/// the message, not yet handed back by `lnd_recv`.
struct Blocked {
    msg: KBox<Msg>,
    private: *mut c_void,
}

// SAFETY: the message is `Send`, and the LND's private pointer (the type
// invariant) is not tied to a thread: the LND expects lnd_recv from any
// thread.
unsafe impl Send for Blocked {}

/// A pool (`struct lnet_rtrbufpool`).
struct Pool {
    count: PoolCount,
    npages: u32,
    /// Free buffers; room for `count.nbuffers` is kept, so giving one back
    /// never allocates. A `KVVec`: big pools outgrow kmalloc, and it is
    /// freed only outside the lock (vfree may sleep).
    free: KVVec<RtrPages>,
    /// Messages waiting for a buffer, oldest first.
    blocked: KVec<Blocked>,
}

/// A peer NI's router credits (`lpni_rtrcredits`), kept by NID as
/// credits.rs keeps send credits.
struct PeerRtr {
    nid: Nid,
    credits: TxCredits,
}

/// Everything under `TheLnet.rtr`.
pub(crate) struct Router {
    /// `ln_routing`.
    routing: bool,
    /// Bumped each time the pools are emptied.
    gen: u32,
    /// Routing started since LNet came up: the pools exist, as Lustre's
    /// `ln_rtrpools`, though perhaps empty.
    made: bool,
    pools: [Pool; NPOOLS],
    peers: KVec<PeerRtr>,
    /// Messages waiting for a router credit of the peer NI they came
    /// from, oldest first.
    peer_blocked: KVec<Blocked>,
}

impl Default for Router {
    fn default() -> Router {
        let pool = |i| Pool {
            count: PoolCount::default(),
            npages: rtr_buf::pool_pages(i, PAGE_SIZE as u32),
            free: KVVec::new(),
            blocked: KVec::new(),
        };
        Router {
            routing: false,
            gen: 0,
            made: false,
            pools: [
                pool(rtr_buf::TINY),
                pool(rtr_buf::SMALL),
                pool(rtr_buf::LARGE),
            ],
            peers: KVec::new(),
            peer_blocked: KVec::new(),
        }
    }
}

/// One pool as `lnetctl routing show` prints it
/// (`struct lnet_ioctl_pool_cfg`).
#[derive(Clone, Copy, Default)]
pub(crate) struct PoolShow {
    pub(crate) npages: u32,
    pub(crate) nbuffers: u32,
    pub(crate) credits: i32,
    pub(crate) mincredits: i32,
}

/// The router credits of peer NI `nid` (`lpni_rtrcredits`,
/// `lpni_minrtrcredits`), if it sent us a message to forward since
/// routing started.
pub(crate) fn peer_credits(lnet: &TheLnet, nid: &Nid) -> Option<TxCredits> {
    let r = lnet.rtr.lock();
    r.peers.iter().find(|p| p.nid == *nid).map(|p| p.credits)
}

/// Whether this node forwards.
pub(crate) fn routing(lnet: &TheLnet) -> bool {
    lnet.rtr.lock().routing
}

/// The pools now, and whether routing is on (`lnet_get_rtr_pool_cfg`);
/// None if routing never started since LNet came up (Lustre has no pools
/// then).
pub(crate) fn show(lnet: &TheLnet) -> Option<([PoolShow; NPOOLS], bool)> {
    let r = lnet.rtr.lock();
    if !r.made {
        return None;
    }
    let mut out = [PoolShow::default(); NPOOLS];
    for (o, p) in out.iter_mut().zip(r.pools.iter()) {
        *o = PoolShow {
            npages: p.npages,
            nbuffers: p.count.nbuffers,
            credits: p.count.credits,
            mincredits: p.count.mincredits,
        };
    }
    Some((out, r.routing))
}

/// `lnetctl set tiny_buffers|small_buffers|large_buffers`
/// (`lnet_rtrpools_adjust`): `counts` per pool, negative for none; with
/// routing off, nothing changes, as in Lustre.
pub(crate) fn adjust_buffers(lnet: &TheLnet, counts: [i32; NPOOLS]) -> Result {
    if !routing(lnet) {
        return Ok(());
    }
    adjust(lnet, counts)
}

/// The three pool parameters now.
fn params_now() -> [i32; NPOOLS] {
    let t = crate::params::snapshot();
    [
        t.tiny_router_buffers,
        t.small_router_buffers,
        t.large_router_buffers,
    ]
}

/// Sets the pools to `counts` (negative: leave that pool alone),
/// `lnet_rtrpools_adjust_helper`: each parameter takes the count asked
/// for, then its pool grows to it (a smaller count frees buffers as they
/// come back). Stops at the first pool that fails, as Lustre does.
fn adjust(lnet: &TheLnet, counts: [i32; NPOOLS]) -> Result {
    for (i, &n) in counts.iter().enumerate() {
        if n < 0 {
            continue;
        }
        crate::params::set_router_buffers(i, n);
        let want = pool_size(i, n)?;
        grow_logged(lnet, i, want)?;
    }
    Ok(())
}

/// Gives the pools their parameters' sizes as routing starts
/// (`lnet_rtrpools_alloc`): all three checked before any is made, a
/// negative one refused.
fn alloc(lnet: &TheLnet) -> Result {
    let counts = params_now();
    let mut want = [0u32; NPOOLS];
    for ((w, &n), i) in want.iter_mut().zip(counts.iter()).zip(0..) {
        *w = pool_size(i, n)?;
    }
    for (i, &w) in want.iter().enumerate() {
        grow_logged(lnet, i, w)?;
    }
    Ok(())
}

/// How many buffers pool `i` gets for the parameter value `n`
/// (`lnet_nrb_*_calculate`), logged as Lustre logs it.
fn pool_size(i: usize, n: i32) -> Result<u32> {
    let ncpts = crate::cpt::number();
    let name = ["tiny", "small", "large"].get(i).copied().unwrap_or("");
    let Some(s) = rtr_buf::sizing(i, n, ncpts) else {
        crate::cerror!(
            "{}_router_buffers={} invalid when routing enabled\n",
            name,
            n
        );
        return Err(EINVAL);
    };
    if s.below_min {
        crate::cwarn!(
            "{}_router_buffers={} less than recommended minimum\n",
            name,
            n
        );
    }
    // Lustre has a pool per partition, each of this many.
    Ok(s.per_cpt.saturating_mul(ncpts.max(1)))
}

fn grow_logged(lnet: &TheLnet, i: usize, want: u32) -> Result {
    grow(lnet, i, want).inspect_err(|_| {
        crate::cerror!(
            "lnet: error allocating {} {}-page router buffers\n",
            want,
            rtr_buf::pool_pages(i, PAGE_SIZE as u32)
        );
    })
}

/// Makes pool `i` hold `want` buffers (`lnet_rtrpool_adjust_bufs`): new
/// ones are made outside the lock, all or none, with the pool's new free
/// list and room for the waiters they wake, so nothing under the lock
/// allocates and no waiter is lost.
fn grow(lnet: &TheLnet, i: usize, want: u32) -> Result {
    let (add, old, npages, have) = {
        let mut r = lnet.rtr.lock();
        let Some(p) = r.pools.get_mut(i) else {
            return Err(EINVAL);
        };
        let old = p.count.req_nbuffers;
        (p.count.request(want), old, p.npages, p.count.nbuffers)
    };
    if add == 0 {
        return Ok(());
    }
    let fail = |lnet: &TheLnet| {
        let mut r = lnet.rtr.lock();
        if let Some(p) = r.pools.get_mut(i) {
            p.count.request_failed(old);
        }
    };
    // Sized from an ioctl: a failure is an error returned, not a WARN.
    let flags = GFP_KERNEL | __GFP_NOWARN;
    let n = add as usize;
    let room = (have as usize).saturating_add(n);
    let (Ok(mut made), Ok(mut free), Ok(mut ready)) = (
        KVVec::<RtrPages>::with_capacity(n, flags),
        KVVec::<RtrPages>::with_capacity(room, flags),
        KVVec::<Blocked>::with_capacity(n, flags),
    ) else {
        fail(lnet);
        return Err(ENOMEM);
    };
    for _ in 0..add {
        match RtrPages::new(npages) {
            Ok(b) => {
                // Room was made: no allocation.
                let _ = made.push(b, GFP_KERNEL);
            }
            Err(_) => {
                fail(lnet);
                return Err(ENOMEM);
            }
        }
    }
    let mut r = lnet.rtr.lock();
    let grown = match r.pools.get_mut(i) {
        // Only grow (under the `api` mutex, as this) adds buffers, so the
        // room made above still fits; checked all the same.
        Some(p) if free.capacity() >= (p.count.nbuffers as usize).saturating_add(n) => {
            let wake = p.count.added(add);
            while let Some(b) = vec::pop(&mut p.free).or_else(|| vec::pop(&mut made)) {
                // Within the room made: no allocation.
                let _ = free.push(b, GFP_ATOMIC);
            }
            core::mem::swap(&mut p.free, &mut free);
            // Messages that waited for a buffer of this pool take the new
            // ones; `ready` has room for `add`, at least `wake`.
            for _ in 0..wake {
                if ready.len() >= ready.capacity() {
                    break;
                }
                let Some(mut b) = vec::remove(&mut p.blocked, 0) else {
                    break;
                };
                if let Some(f) = b.msg.fwd.as_mut() {
                    f.pool_credit = Credit::Held;
                    f.buf = vec::pop(&mut p.free);
                }
                let _ = ready.push(b, GFP_ATOMIC);
            }
            Ok(())
        }
        Some(p) => {
            p.count.request_failed(old);
            Err(ENOMEM)
        }
        None => Err(EINVAL),
    };
    drop(r);
    // The old free list (now empty) and any buffers left: freed here.
    drop(free);
    drop(made);
    for b in ready {
        // One that got no buffer is dropped by `receive`, never received.
        receive(lnet, b.msg, b.private, true);
    }
    grown
}

/// Starts forwarding (`lnet_rtrpools_alloc`, `lnet_rtrpools_enable`):
/// the pools get their buffers, then the ping buffer stops saying
/// `RTE_DISABLED`. Called under the `api` mutex.
pub(crate) fn enable(lnet: &TheLnet) -> Result {
    if routing(lnet) {
        return Ok(());
    }
    lnet.rtr.lock().made = true;
    if let Err(e) = alloc(lnet) {
        free_pools(lnet);
        return Err(e);
    }
    let pings = lnet.pings.lock();
    lnet.rtr.lock().routing = true;
    crate::ping::set_features(lnet, crate::lnet_core::ping::features::RTE_DISABLED, false);
    drop(pings);
    crate::router_check::routing_changed(lnet);
    // The buffer changed in place, its sequence unchanged: the Multi-Rail
    // peers are pushed it, as Lustre's router checker does once routing
    // is on. At startup the first buffer is new to them anyway.
    if lnet.is_running() {
        crate::discovery::push_update(lnet, true);
    }
    pr_info!("Message forwarding enabled\n");
    Ok(())
}

/// Stops forwarding (`lnet_rtrpools_disable`, at once: module doc).
pub(crate) fn disable(lnet: &TheLnet) {
    {
        let pings = lnet.pings.lock();
        let mut r = lnet.rtr.lock();
        if !r.routing {
            return;
        }
        r.routing = false;
        drop(r);
        crate::ping::set_features(lnet, crate::lnet_core::ping::features::RTE_DISABLED, true);
        drop(pings);
    }
    crate::router_check::routing_changed(lnet);
    free_pools(lnet);
    pr_info!("Message forwarding disabled\n");
}

/// Starts forwarding if the `forwarding` parameter says so, as LNet
/// comes up (`lnet_rtrpools_alloc` from `LNetNIInit`). A value other than
/// Lustre's refuses the startup.
pub(crate) fn start(lnet: &TheLnet) -> Result {
    let f = crate::params::forwarding();
    let Some(fwd) = Forwarding::parse(f.as_bytes()) else {
        crate::cerror!(
            "lnet: forwarding='{}' not set to either 'enabled' or 'disabled': rc = {}\n",
            f,
            EINVAL.to_errno()
        );
        return Err(EINVAL);
    };
    // lnet-rs's routes= takes no route through one of our own NIDs, so
    // an unset parameter means no forwarding.
    if fwd.starts_routing(false) {
        enable(lnet)?;
    }
    Ok(())
}

/// Drops the waiting messages and frees the free buffers; lent ones are
/// freed as they come back. Used when routing stops and LNet goes down.
fn free_pools(lnet: &TheLnet) {
    let mut gone: [KVVec<RtrPages>; NPOOLS] = [KVVec::new(), KVVec::new(), KVVec::new()];
    let peers = loop {
        let mut r = lnet.rtr.lock();
        let b = vec::remove(&mut r.peer_blocked, 0).or_else(|| {
            r.pools
                .iter_mut()
                .find_map(|p| vec::remove(&mut p.blocked, 0))
        });
        if let Some(b) = b {
            drop(r);
            drop_blocked(lnet, b, "routing is off");
            continue;
        }
        // Emptied with no waiter left, in the same hold: a credit given
        // back while dropping may have queued another.
        for (p, g) in r.pools.iter_mut().zip(gone.iter_mut()) {
            p.count.clear();
            core::mem::swap(&mut p.free, g);
        }
        r.gen = r.gen.wrapping_add(1);
        break core::mem::take(&mut r.peers);
    };
    // Freed outside the lock.
    drop(gone);
    drop(peers);
}

/// LNet is going down: forwarding stops, the ping buffer going with it.
pub(crate) fn shutdown(lnet: &TheLnet) {
    lnet.rtr.lock().routing = false;
    free_pools(lnet);
    lnet.rtr.lock().made = false;
}

/// Drops the messages from `ni` waiting for the router, before its LND
/// stops: their payloads go back to it. `ni` is already Deleting, so
/// `forward` queues no more behind this.
pub(crate) fn drop_waiting_on(lnet: &TheLnet, ni: &Arc<Ni>) {
    let on = |b: &Blocked| b.msg.ni.as_ref().is_some_and(|n| Arc::ptr_eq(n, ni));
    loop {
        let mut r = lnet.rtr.lock();
        let b = match r.peer_blocked.iter().position(on) {
            Some(i) => vec::remove(&mut r.peer_blocked, i),
            None => r.pools.iter_mut().find_map(|p| {
                let i = p.blocked.iter().position(on)?;
                vec::remove(&mut p.blocked, i)
            }),
        };
        drop(r);
        let Some(b) = b else {
            return;
        };
        drop_blocked(lnet, b, "its NI is going away");
    }
}

/// Ends a message that will not be received into a router buffer: its
/// credits go back (a granted one to the next message waiting for it),
/// its payload goes back to the LND, and it is counted as dropped. A
/// waiter a granted credit wakes with no memory to wait on is dropped in
/// turn, in this loop rather than by recursion.
fn drop_blocked(lnet: &TheLnet, b: Blocked, why: &str) {
    let mut next = Some(b);
    let mut why = why;
    while let Some(Blocked { mut msg, private }) = next.take() {
        next = give_back(lnet, &mut msg);
        let hdr = msg.hdr;
        let ni = msg.ni.clone();
        Msg::free(lnet, msg);
        if let Some(ni) = ni {
            drop_incoming(lnet, &ni, private, hdr.payload_length, why, &hdr);
        }
        why = "no memory to forward it";
    }
}

/// Where a message stands after asking for its credits and buffer.
enum Admit {
    /// It holds a buffer: receive it.
    Go(Blocked),
    Waits,
    /// No memory to wait.
    Fail(Blocked),
}

/// Takes the router credit of the peer NI `b` came from (`max` of them
/// for a peer NI not seen yet), then a buffer of its pool
/// (`lnet_post_routed_recv_locked`).
fn admit(r: &mut Router, mut b: Blocked, max: i32) -> Admit {
    let from = b.msg.from;
    let gen = r.gen;
    let Some(f) = b.msg.fwd.as_mut() else {
        return Admit::Fail(b);
    };
    let pool = f.pool;
    f.gen = gen;
    if f.peer_credit == Credit::None {
        let i = match r.peers.iter().position(|p| p.nid == from) {
            Some(i) => i,
            None => {
                let fresh = PeerRtr {
                    nid: from,
                    credits: TxCredits::new(max),
                };
                if r.peers.push(fresh, GFP_ATOMIC).is_err() {
                    return Admit::Fail(b);
                }
                r.peers.len() - 1
            }
        };
        if r.peer_blocked.reserve(1, GFP_ATOMIC).is_err() {
            return Admit::Fail(b);
        }
        let Some(p) = r.peers.get_mut(i) else {
            return Admit::Fail(b);
        };
        if p.credits.take() {
            f.peer_credit = Credit::Held;
        } else {
            f.peer_credit = Credit::Awaited;
            // Room was reserved: this cannot fail.
            let _ = r.peer_blocked.push(b, GFP_ATOMIC);
            return Admit::Waits;
        }
    }
    admit_pool(r, b, pool)
}

/// The pool half of [`admit`].
fn admit_pool(r: &mut Router, mut b: Blocked, pool: usize) -> Admit {
    let Some(p) = r.pools.get_mut(pool) else {
        return Admit::Fail(b);
    };
    let Some(f) = b.msg.fwd.as_mut() else {
        return Admit::Fail(b);
    };
    if f.pool_credit == Credit::None {
        if p.blocked.reserve(1, GFP_ATOMIC).is_err() {
            return Admit::Fail(b);
        }
        if p.count.take() {
            f.pool_credit = Credit::Held;
        } else {
            f.pool_credit = Credit::Awaited;
            // Room was reserved: this cannot fail.
            let _ = p.blocked.push(b, GFP_ATOMIC);
            return Admit::Waits;
        }
    }
    match vec::pop(&mut p.free) {
        Some(buf) => {
            f.buf = Some(buf);
            Admit::Go(b)
        }
        // A credit with no free buffer: the counts are wrong. Dropped
        // rather than waiting for a buffer that may never come.
        None => Admit::Fail(b),
    }
}

/// Asks the LND to receive a message's payload into its router buffer;
/// a refusal ends the message. One without a buffer (the counts were
/// off) is dropped: the LND would write its payload through nothing.
fn receive(lnet: &TheLnet, m: KBox<Msg>, private: *mut c_void, delayed: bool) {
    let Some(ni) = m.ni.clone() else {
        finalize(lnet, m, EINVAL.to_errno(), Status::Ok);
        return;
    };
    let Some((kiov, niov)) = m
        .fwd
        .as_ref()
        .and_then(|f| f.buf.as_ref())
        .map(|b| (b.kiov(), b.niov()))
    else {
        // INVARIANT: `private` came from the LND with `m`, not handed back.
        drop_blocked(lnet, Blocked { msg: m, private }, "no router buffer for it");
        return;
    };
    let len = m.hdr.payload_length;
    crate::parse::recv(lnet, &ni, private, m, delayed, (kiov, niov, 0), len, len);
}

/// Forwards a message received on `ni` for another node
/// (`lnet_parse_forward_locked`). `m` was made for it, committed for
/// receive on `ni`; `private` is the LND's context for its payload.
pub(crate) fn forward(lnet: &TheLnet, ni: &Arc<Ni>, mut m: KBox<Msg>, private: *mut c_void) {
    let hdr = m.hdr;
    let Some(pool) = rtr_buf::pool_of(hdr.payload_length, PAGE_SIZE as u32) else {
        Msg::free(lnet, m);
        drop_incoming(
            lnet,
            ni,
            private,
            hdr.payload_length,
            "payload above LNET_MTU",
            &hdr,
        );
        return;
    };
    m.fwd = Some(Fwd {
        pool,
        buf: None,
        pool_credit: Credit::None,
        peer_credit: Credit::None,
        gen: 0,
    });
    // A router does not resend: the sender's LNet does, end to end.
    m.no_resend = true;
    let t = ni.net_tunables();
    let max = rtr_buf::peer_buffer_credits(
        t.peer_buffer_credits,
        crate::params::snapshot().peer_buffer_credits,
        ni.tunables.peer_credits.load(Relaxed),
    );
    let mut r = lnet.rtr.lock();
    // Checked under the lock `drop_waiting_on` and `free_pools` take:
    // nothing waits behind them with the payload of an NI going away (its
    // LND may be gone when the message is dropped later).
    let going = ni.state.load(Relaxed) == NiState::Deleting as u32;
    if !r.routing || going || !lnet.is_running() {
        let why = if !r.routing {
            "routing is off"
        } else if going {
            "its NI is going away"
        } else {
            "LNet is not running"
        };
        drop(r);
        Msg::free(lnet, m);
        drop_incoming(lnet, ni, private, hdr.payload_length, why, &hdr);
        return;
    }
    // INVARIANT: `private` came from the LND with `m`, not handed back.
    let admitted = admit(&mut r, Blocked { msg: m, private }, max);
    drop(r);
    match admitted {
        Admit::Go(b) => receive(lnet, b.msg, b.private, false),
        Admit::Waits => {}
        Admit::Fail(b) => drop_blocked(lnet, b, "no memory to forward it"),
    }
}

/// A forwarded message's LND is done with it (from `lnet_finalize`):
/// once received, it is sent on; once sent, or on any failure, its
/// buffer and credits go back.
pub(crate) fn finished(lnet: &TheLnet, mut m: KBox<Msg>, status: i32) {
    if m.rx && status == 0 && lnet.is_running() {
        let (kiov, niov) = m
            .fwd
            .as_ref()
            .and_then(|f| f.buf.as_ref())
            .map_or((core::ptr::null_mut(), 0), |b| (b.kiov(), b.niov()));
        // INVARIANT: the fragments are the message's own router buffer,
        // which it keeps until it is freed here.
        m.desc.kiov = kiov.cast();
        m.desc.niov = niov;
        m.desc.offset = 0;
        m.desc.len = m.hdr.payload_length;
        crate::send::send(lnet, m);
        return;
    }
    if !m.rx && status == 0 {
        crate::counters::Counters::add(&lnet.counters.route_count);
        crate::counters::Counters::add_len(&lnet.counters.route_length, m.hdr.payload_length);
    }
    let failed = give_back(lnet, &mut m);
    Msg::free(lnet, m);
    if let Some(b) = failed {
        drop_blocked(lnet, b, "no memory to forward it");
    }
}

/// Gives back a message's buffer and router credits; the messages that
/// were waiting for them are received (`lnet_return_rx_credits_locked`).
/// A credit still awaited only leaves its count. Returns a woken message
/// to drop: it had no memory to wait for its buffer.
fn give_back(lnet: &TheLnet, m: &mut Msg) -> Option<Blocked> {
    let from = m.from;
    let f = m.fwd.as_mut()?;
    let pool = core::mem::replace(&mut f.pool_credit, Credit::None);
    let peer = core::mem::replace(&mut f.peer_credit, Credit::None);
    let buf = f.buf.take();
    let mut ready: [Option<Blocked>; 2] = [None, None];
    let mut freed = None;
    let mut failed = None;
    let mut r = lnet.rtr.lock();
    if f.gen != r.gen {
        // Counted in pools since emptied: the buffer just goes.
        drop(r);
        drop(buf);
        return None;
    }
    let routing = r.routing;
    match (r.pools.get_mut(f.pool), pool, buf) {
        (Some(p), Credit::Held, Some(buf)) => match p.count.give_back(routing) {
            Returned::Free => freed = Some(buf),
            Returned::Keep => {
                // Room for every buffer of the pool is kept: no
                // allocation, so this cannot fail.
                let _ = p.free.push(buf, GFP_ATOMIC);
            }
            Returned::Wake => match vec::remove(&mut p.blocked, 0) {
                Some(mut b) => {
                    if let Some(wf) = b.msg.fwd.as_mut() {
                        wf.pool_credit = Credit::Held;
                        wf.buf = Some(buf);
                    }
                    ready[0] = Some(b);
                }
                None => freed = Some(buf),
            },
        },
        // Granted, but no buffer came with it.
        (Some(p), Credit::Held, None) => p.count.cancel_held(),
        (Some(p), Credit::Awaited, buf) => {
            p.count.cancel();
            freed = buf;
        }
        (_, _, buf) => freed = buf,
    }
    match peer {
        Credit::Held => match peer_credit_back(&mut r, from) {
            Some(Admit::Go(b)) => ready[1] = Some(b),
            Some(Admit::Fail(b)) => failed = Some(b),
            Some(Admit::Waits) | None => {}
        },
        Credit::Awaited => {
            if let Some(p) = r.peers.iter_mut().find(|p| p.nid == from) {
                p.credits.cancel();
            }
        }
        Credit::None => {}
    }
    drop(r);
    drop(freed);
    for b in ready.into_iter().flatten() {
        receive(lnet, b.msg, b.private, true);
    }
    failed
}

/// A granted router credit of peer NI `from` comes back: the first
/// message waiting for one takes it and asks for its buffer.
fn peer_credit_back(r: &mut Router, from: Nid) -> Option<Admit> {
    let wakes = r
        .peers
        .iter_mut()
        .find(|p| p.nid == from)
        .is_some_and(|p| p.credits.give());
    if !wakes {
        return None;
    }
    let i = r.peer_blocked.iter().position(|b| b.msg.from == from)?;
    let mut b = vec::remove(&mut r.peer_blocked, i)?;
    let pool = match b.msg.fwd.as_mut() {
        Some(f) => {
            f.peer_credit = Credit::Held;
            f.pool
        }
        None => 0,
    };
    Some(admit_pool(r, b, pool))
}
