// SPDX-License-Identifier: GPL-2.0

//! NID update callbacks (`LNetRegisterNIDUpdates`,
//! `LNetUnRegisterNIDUpdates`): upper layers (Lustre's targets, which
//! tell the MGS their NIDs) are told when `lnetctl net add` or `net del`
//! changed a net's NIs.
//!
//! What Lustre's callers rely on, and how it holds without a lock of ours
//! held during a call (Lustre holds its API mutex):
//! * Updates reach callbacks one at a time, in the order of the changes:
//!   each change takes a ticket while it still holds the API mutex, and
//!   its delivery waits for the ticket before it to be served.
//! * Once `LNetUnRegisterNIDUpdates` returns, its callback is neither
//!   running nor called again: it waits while that callback runs.
//!
//! Where this differs from Lustre: an update is told after the change, so
//! a net that keeps NIs after one was removed is told the NIDs it has
//! left; Lustre tells it before the removal, the removed NID included.
//! And a callback may call LNet (`LNetFetchNIDs`, even
//! `LNetUnRegisterNIDUpdates` for itself), which deadlocks in Lustre.

use crate::kapi::lnet_abi::nid_to_c;
use crate::kapi::lnet_c::{nid_update_info, Nui};
use crate::lnet_core::local_nids::{self, NetUpdate};
use crate::lnet_core::nid::Net;
use crate::state::TheLnet;
use core::ffi::{c_int, c_void};
use kernel::prelude::*;

/// A NID update callback.
type UpdateCb = unsafe extern "C" fn(*mut c_void, *mut nid_update_info) -> c_int;

struct Reg {
    id: u64,
    cb: UpdateCb,
    /// The caller's `cb_data`, the registration's key; only passed back.
    data: usize,
}

/// The registered callbacks and the order of deliveries, in
/// `TheLnet::nid_updates`.
pub(crate) struct NidUpdates {
    /// In registration order; ids grow along it.
    regs: KVec<Reg>,
    next_id: u64,
    /// Ticket of the next change, and of the change being delivered.
    next_ticket: u64,
    serving: u64,
    /// The registration whose callback runs, and the thread running it.
    calling: Option<(u64, kernel::bindings::pid_t)>,
}

impl NidUpdates {
    pub(crate) fn new() -> Self {
        NidUpdates {
            regs: KVec::new(),
            next_id: 1,
            next_ticket: 0,
            serving: 0,
            calling: None,
        }
    }
}

impl Drop for NidUpdates {
    fn drop(&mut self) {
        if !self.regs.is_empty() {
            // A module that registered is unloaded first: it forgot.
            pr_err!(
                "{} NID update callback(s) still registered\n",
                self.regs.len()
            );
        }
    }
}

/// An update to deliver, in its turn.
pub(crate) struct Pending {
    ticket: u64,
    nui: Nui,
}

fn current_pid() -> kernel::bindings::pid_t {
    kernel::current!().pid()
}

/// The update for a change of `net`'s NIs (`removed`: some were
/// removed), taken with the API mutex held, right after the change. None
/// when no callback is registered or there is nothing to tell.
pub(crate) fn prepare(lnet: &TheLnet, net: Net, removed: bool) -> Option<Pending> {
    if lnet.nid_updates.lock().regs.is_empty() {
        return None;
    }
    let nids = match crate::local_nids::snapshot(lnet) {
        Ok(n) => n,
        Err(_) => {
            pr_warn!("Can't tell the NIDs of {}: out of memory\n", net);
            return None;
        }
    };
    let update = local_nids::net_update(&nids, net, removed)?;
    let mut c = KVec::new();
    if let NetUpdate::Nids { count } = update {
        if c.reserve(count, GFP_KERNEL).is_err() {
            pr_warn!("Can't tell the {} NIDs of {}: out of memory\n", count, net);
            return None;
        }
        for nid in local_nids::update_nids(&nids, net) {
            // Cannot fail: reserved above.
            let _ = c.push(nid_to_c(nid), GFP_KERNEL);
        }
    }
    let Some(nui) = Nui::new(net.as_u32(), &c) else {
        pr_warn!("Can't tell the NIDs of {}: out of memory\n", net);
        return None;
    };
    let mut g = lnet.nid_updates.lock();
    let ticket = g.next_ticket;
    g.next_ticket = g.next_ticket.wrapping_add(1);
    Some(Pending { ticket, nui })
}

/// Calls every callback with `p`, after the updates before it; with no
/// lock of ours held by the caller.
pub(crate) fn deliver(lnet: &TheLnet, p: Option<Pending>) {
    let Some(p) = p else {
        return;
    };
    let mut g = lnet.nid_updates.lock();
    while g.serving != p.ticket {
        lnet.nid_update_done.wait(&mut g);
    }
    let mut last = 0;
    while let Some((id, cb, data)) = g
        .regs
        .iter()
        .find(|r| r.id > last)
        .map(|r| (r.id, r.cb, r.data))
    {
        g.calling = Some((id, current_pid()));
        drop(g);
        // Its return value means nothing to LNet, as in Lustre.
        // SAFETY: the registrant gave `cb` for `data`, callable until LNetUnRegisterNIDUpdates
        // returns, which waits while `calling` names it; `p.nui` lives.
        let _ = unsafe { cb(data as *mut c_void, p.nui.as_ptr()) };
        g = lnet.nid_updates.lock();
        g.calling = None;
        lnet.nid_update_done.notify_all();
        last = id;
    }
    g.serving = g.serving.wrapping_add(1);
    lnet.nid_update_done.notify_all();
}

/// Registers `cb` for `data`, or replaces the callback registered for it.
#[no_mangle]
extern "C" fn LNetRegisterNIDUpdates(cb: Option<UpdateCb>, data: *mut c_void) -> c_int {
    let Some(cb) = cb else {
        return EINVAL.to_errno();
    };
    let Some(lnet) = TheLnet::get() else {
        return ENODEV.to_errno();
    };
    let mut g = lnet.nid_updates.lock();
    let key = data as usize;
    if let Some(r) = g.regs.iter_mut().find(|r| r.data == key) {
        r.cb = cb;
        return 0;
    }
    let id = g.next_id;
    if g.regs.push(Reg { id, cb, data: key }, GFP_KERNEL).is_err() {
        return ENOMEM.to_errno();
    }
    g.next_id = id.wrapping_add(1);
    0
}

/// Unregisters `data`'s callback, waiting while it runs (unless this is
/// that callback's own thread).
#[no_mangle]
extern "C" fn LNetUnRegisterNIDUpdates(data: *mut c_void) {
    let Some(lnet) = TheLnet::get() else {
        return;
    };
    let mut g = lnet.nid_updates.lock();
    let key = data as usize;
    let Some(i) = g.regs.iter().position(|r| r.data == key) else {
        return;
    };
    let Some(Reg { id, .. }) = crate::kapi::vec::remove(&mut g.regs, i) else {
        return;
    };
    let me = current_pid();
    while matches!(g.calling, Some((c, pid)) if c == id && pid != me) {
        lnet.nid_update_done.wait(&mut g);
    }
}
