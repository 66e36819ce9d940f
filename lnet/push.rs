// SPDX-License-Identifier: GPL-2.0

//! The push target: a peer that runs discovery PUTs its ping buffer to the
//! reserved portal with the ping match bits and wants an ACK (wire.md §3).
//! Our ping buffer advertises discovery and Multi-Rail, so Lustre peers
//! push to us, and fail what they queued behind discovery if the ACK never
//! comes.
//!
//! Each push lands in a buffer of its own: an MD of threshold 1, so that
//! concurrent pushes cannot mix. Buffers start at 272 bytes, as Lustre's
//! push target, and those posted after a push arrived truncated take its
//! whole length (discovery pings that peer for what was cut). The pushed
//! buffer is checked and counted in the MD's handler; the discovery thread,
//! woken by it, posts a fresh buffer for each one used (as Lustre's
//! `pb_needs_post`), and the monitor thread catches any it missed. What a push says about the peer
//! goes to discovery (discovery.rs).

use crate::api;
use crate::kapi::bindings::lnet_event;
use crate::kapi::lnet_abi::nid_from_c;
use crate::lnet_core::md::{options, EventKind};
use crate::lnet_core::nid::Nid;
use crate::lnet_core::ping::{self, PingInfo};
use crate::own_md::{self, MdMemory, MdOwner};
use crate::params;
use crate::state::TheLnet;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Push buffers posted at once: pushes arriving while all are in use are
/// dropped until the monitor posts more (within 100 ms).
const PUSH_MDS: usize = 4;

/// A slot being posted into: taken before the post, so that two posters
/// never use one slot.
const CLAIMED: u64 = u64::MAX;

/// Bytes of a NID entry of the largest kind a ping buffer carries.
const ENTRY_MAX: usize = 40;

/// The posted push buffers, and what pushes brought.
#[derive(Default)]
pub(crate) struct Pushes {
    /// Cookie of each posted push MD (0: slot free, `CLAIMED`: being
    /// posted).
    posted: [u64; PUSH_MDS],
    /// Pushes taken, and those refused as not a ping buffer.
    pub(crate) received: u32,
    pub(crate) refused: u32,
    /// Older than the buffer still waiting to be merged.
    pub(crate) stale: u32,
    /// Bytes of the next buffer posted (`ln_push_target_nbytes`; 0 before
    /// any): small until a push arrives truncated.
    nbytes: usize,
}

/// One push buffer, held by its MD until its final event.
struct PushBuf {
    slot: usize,
    mem: MdMemory,
}

/// Checks a pushed ping buffer (`lnet_peer_push_event`): what discovery
/// will read from it.
fn check(lnet: &TheLnet, from: Nid, data: &[u8], rlength: u32) {
    let max = u32::try_from(params::snapshot().interfaces_max.max(16)).unwrap_or(16);
    let outcome = PingInfo::parse(data, max);
    if rlength as usize > data.len() {
        // Discovery pings this peer for what was cut.
        grow(lnet, rlength as usize);
    }
    let mut p = lnet.pushes.lock();
    match outcome {
        Ok(info) => {
            p.received = p.received.wrapping_add(1);
            drop(p);
            if rlength as usize > data.len() {
                // Lustre's "Truncated Push" (D_NET): a peer with more NIs
                // than the buffer holds, which discovery then pings.
                crate::cdebug_limit!(
                    crate::lnet_core::debug::D_NET,
                    "Push from {} truncated to {} of {} bytes\n",
                    from,
                    data.len(),
                    rlength
                );
            }
            crate::cnet!(
                "Push from {}: primary {}, features {:#x}, sequence {}\n",
                from,
                info.primary().unwrap_or(from),
                info.features,
                info.sequence()
            );
            crate::discovery::push_received(lnet, from, data, Some(info));
        }
        Err(e) => {
            p.refused = p.refused.wrapping_add(1);
            drop(p);
            // Lustre's "Corrupted Push" (D_NET); rate-limited, as a peer
            // can send any number.
            crate::cdebug_limit!(
                crate::lnet_core::debug::D_NET,
                "Bad push from {}: {}\n",
                from,
                e
            );
            crate::discovery::push_received(lnet, from, data, None);
        }
    }
}

impl MdOwner for PushBuf {
    fn memory(&self) -> &MdMemory {
        &self.mem
    }

    fn event(&self, lnet: &TheLnet, ev: &lnet_event) {
        if ev.type_ == EventKind::Put as _ && ev.status == 0 {
            // SAFETY: the PUT that filled it has ended, and no other can
            // come (threshold 1): nothing writes into the bytes.
            let data = unsafe { self.mem.bytes(ev.mlength as usize) };
            // The NID it came from (`lnet_peer_push_event` looks up
            // `ev->source`).
            let from = nid_from_c(&ev.source.nid).unwrap_or(Nid::ANY);
            check(lnet, from, data, ev.rlength);
        }
        if ev.unlinked != 0 {
            // Only this MD's own slot entry: a slot still `CLAIMED` is
            // settled by its poster.
            if let Some(c) = lnet
                .pushes
                .lock()
                .posted
                .get_mut(self.slot)
                .filter(|c| **c == ev.md_handle.cookie)
            {
                *c = 0;
            }
            crate::discovery::wake(lnet);
        }
    }
}

/// A push or ping reply of `needed` bytes arrived truncated: buffers posted
/// from now on take the whole of it (`ln_push_target_nbytes`). Those
/// already posted keep their size until a push uses them (unlike Lustre,
/// which posts a larger push target at once), so a node that grew may need
/// a few pushes and pings before its pushes fit. Called with `peers`
/// held (`pushes` comes after it in the lock order, state.rs).
pub(crate) fn grow(lnet: &TheLnet, needed: usize) {
    let mut p = lnet.pushes.lock();
    p.nbytes = crate::lnet_core::discovery::push_target_bytes(p.nbytes, needed, largest_buffer());
}

/// The largest ping buffer `lnet_interfaces_max` NIs make.
fn largest_buffer() -> usize {
    let nis = usize::try_from(params::snapshot().interfaces_max.max(16)).unwrap_or(16);
    ping::HDR_LEN + nis.saturating_add(1).saturating_mul(ENTRY_MAX)
}

/// Posts a push buffer of `size` bytes in `slot`, after the ping target's
/// ME, which takes only GETs; its MD's cookie.
fn post_one(lnet: &TheLnet, slot: usize, size: usize) -> Result<u64> {
    let mem = MdMemory::zeroed(size)?;
    let pb = Arc::new(PushBuf { slot, mem }, GFP_KERNEL)?;
    own_md::post_reserved(lnet, pb, 1, options::OP_PUT | options::TRUNCATE, true)
}

/// Posts push buffers into the free slots (at LNet start, and from the
/// monitor thread after pushes used some).
pub(crate) fn top_up(lnet: &TheLnet) {
    for slot in 0..PUSH_MDS {
        if !lnet.is_running() {
            return;
        }
        let size = {
            let mut p = lnet.pushes.lock();
            let size =
                crate::lnet_core::discovery::push_target_bytes(p.nbytes, 0, largest_buffer());
            match p.posted.get_mut(slot) {
                Some(c) if *c == 0 => {
                    *c = CLAIMED;
                    Some(size)
                }
                _ => None,
            }
        };
        let Some(size) = size else {
            continue;
        };
        let posted = post_one(lnet, slot, size);
        let mut p = lnet.pushes.lock();
        let Some(c) = p.posted.get_mut(slot) else {
            continue;
        };
        match posted {
            // A push may already have used it and run its final event:
            // then the slot is free again. (pushes, then res.)
            Ok(cookie) if lnet.res.lock().mds.get(&cookie).is_some() => *c = cookie,
            Ok(_) => *c = 0,
            Err(e) => {
                *c = 0;
                drop(p);
                pr_err!("Can't post a push buffer: {:?}\n", e);
                return;
            }
        }
    }
}

/// Takes the push buffers down (LNet stopping, nothing in flight): each
/// MD's final event frees its buffer.
pub(crate) fn stop(lnet: &TheLnet) {
    // The next start begins small again.
    lnet.pushes.lock().nbytes = 0;
    for slot in 0..PUSH_MDS {
        let cookie = lnet
            .pushes
            .lock()
            .posted
            .get_mut(slot)
            .map_or(0, core::mem::take);
        if cookie != 0 && cookie != CLAIMED {
            let _ = api::md_unlink(lnet, cookie, false, 0);
        }
    }
}
