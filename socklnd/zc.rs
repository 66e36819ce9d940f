// SPDX-License-Identifier: GPL-2.0

//! Zero-copy requests (`ksocknal_check_zc_req`, `ksocknal_handle_zcack`):
//! a message whose payload reaches `zc_min_payload` is sent with a cookie
//! asking the peer to acknowledge its receipt, and completes only then.
//! A peer that goes silent cannot let it complete unseen: once its
//! connection closes (a socket error, or the stale-request check after
//! the LND timeout) it fails, never resent since the peer may hold it,
//! with the health status the close's cause gives
//! (`socklnd::zc_aborted_status`). The data is copied, not sent from the
//! pages: the holding is what health needs.
//!
//! Requests sit on their peer under the NI's table lock, since the ACK
//! may come back on any connection to that peer.

use crate::conn::Conn;
use crate::kapi::kthread;
use crate::lnd::Msg;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::socklnd::{self, ZcAcks};
use crate::lnet_core::socklnd_params::SockParam;
use crate::ni::{SockNi, ZC_ABORTED, ZC_ACKED, ZC_REQUESTS};
use crate::params;
use crate::peer::Table;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;

/// One request a peer has not acknowledged yet.
pub(crate) struct ZcReq {
    cookie: u64,
    /// The connection it went on (its address: only compared).
    conn: usize,
    /// When it goes stale (ms): the LND timeout after its send started.
    deadline_ms: u64,
    /// The ACK came while its send was still running.
    acked: bool,
    /// The message, once its send is done.
    msg: Option<Msg>,
}

fn count(c: &AtomicU32) {
    c.fetch_add(1, Ordering::Relaxed);
}

fn conn_key(conn: &Conn) -> usize {
    core::ptr::from_ref(conn) as usize
}

/// Whether a message with `payload` bytes goes on `conn` as a request.
pub(crate) fn wanted(conn: &Conn, payload: u32) -> bool {
    socklnd::zc_request_wanted(
        payload,
        params::get(SockParam::ZcMinPayload),
        conn.zc_capable(),
    )
}

/// Records a request about to be sent on `conn`; its cookie, or None if it
/// cannot be recorded (it then goes as a plain message).
pub(crate) fn register(conn: &Conn) -> Option<u64> {
    let deadline_ms = kthread::now_ms().saturating_add(crate::peer::timeout_ms());
    let mut t = conn.sni().table.lock();
    // Checked under the lock `abort` takes: nothing is added after it ran.
    if conn.is_dead() {
        return None;
    }
    let p = t.peer_mut(&conn.peer)?;
    p.zc.reserve(1, GFP_ATOMIC).ok()?;
    let cookie = socklnd::take_zc_cookie(&mut p.zc_next);
    p.zc.push(
        ZcReq {
            cookie,
            conn: conn_key(conn),
            deadline_ms,
            acked: false,
            msg: None,
        },
        GFP_ATOMIC,
    )
    .ok()?;
    count(&ZC_REQUESTS);
    Some(cookie)
}

/// The requests of `peer` and where `cookie` is among them.
fn find<'a>(t: &'a mut Table, peer: &Nid, cookie: u64) -> Option<(&'a mut KVec<ZcReq>, usize)> {
    let reqs = &mut t.peer_mut(peer)?.zc;
    let i = reqs.iter().position(|z| z.cookie == cookie)?;
    Some((reqs, i))
}

/// The send of request `cookie` is done: `msg` completes now if the peer
/// has acknowledged it already, else waits for the ACK. A request aborted
/// meanwhile fails.
pub(crate) fn sent(conn: &Conn, cookie: u64, msg: Msg) {
    let acked = {
        let mut t = conn.sni().table.lock();
        match find(&mut t, &conn.peer, cookie) {
            // Aborted with its connection.
            None => false,
            Some((reqs, i)) => match reqs.get_mut(i) {
                Some(z) if !z.acked => {
                    z.msg = Some(msg);
                    return;
                }
                // Acknowledged while it was sending: no message stored.
                _ => {
                    let _ = crate::kapi::vec::remove(reqs, i);
                    true
                }
            },
        }
    };
    if acked {
        count(&ZC_ACKED);
        msg.finalize(0, Status::Ok);
    } else {
        count(&ZC_ABORTED);
        msg.finalize(EIO.to_errno(), Status::LocalError);
    }
}

/// The send of request `cookie` failed: forget it (the caller fails the
/// message).
pub(crate) fn unsent(conn: &Conn, cookie: u64) {
    let mut t = conn.sni().table.lock();
    if let Some((reqs, i)) = find(&mut t, &conn.peer, cookie) {
        // Not sent: its message is the caller's.
        let _ = crate::kapi::vec::remove(reqs, i);
    }
}

/// ACKs from `peer`: the requests they name complete. Returns how many of
/// the cookies matched no request (the peer acknowledged something we
/// never asked, or gave up on).
pub(crate) fn acked(sni: &SockNi, peer: &Nid, acks: ZcAcks) -> u64 {
    let mut left = acks.count();
    // One at a time, so that nothing is allocated under the lock.
    loop {
        let done = {
            let mut t = sni.table.lock();
            let Some(p) = t.peer_mut(peer) else {
                break;
            };
            let mut done = None;
            let mut i = 0;
            while let Some(z) = p.zc.get_mut(i) {
                if left == 0 {
                    break;
                }
                if z.acked || !acks.covers(z.cookie) {
                    i += 1;
                    continue;
                }
                left -= 1;
                if z.msg.is_some() {
                    done = crate::kapi::vec::remove(&mut p.zc, i).and_then(|z| z.msg);
                    break;
                }
                // Still sending: its sender completes it.
                z.acked = true;
                i += 1;
            }
            done
        };
        match done {
            Some(msg) => {
                count(&ZC_ACKED);
                msg.finalize(0, Status::Ok)
            }
            None => break,
        }
    }
    left
}

/// `conn` closed with `-err`: its requests fail, since the socket's
/// unsent and unacknowledged data went with it (`ksocknal_finalize_zcreq`).
pub(crate) fn abort(conn: &Conn, err: i32) {
    let hstatus = socklnd::zc_aborted_status(err);
    let key = conn_key(conn);
    loop {
        let msg = {
            let mut t = conn.sni().table.lock();
            let Some(p) = t.peer_mut(&conn.peer) else {
                return;
            };
            let Some(i) = p.zc.iter().position(|z| z.conn == key) else {
                return;
            };
            crate::kapi::vec::remove(&mut p.zc, i).and_then(|z| z.msg)
        };
        // One still sending is failed by its sender, which finds it gone.
        if let Some(msg) = msg {
            count(&ZC_ABORTED);
            msg.finalize(EIO.to_errno(), hstatus);
        }
    }
}

/// The requests of one peer past their deadline, for the reaper: how many
/// and how late the oldest is (ms), or None.
pub(crate) fn stale(reqs: &[ZcReq], now: u64) -> Option<(usize, u64)> {
    let late = reqs
        .iter()
        .filter(|z| z.msg.is_some() && now >= z.deadline_ms);
    let n = late.clone().count();
    let oldest = late.map(|z| z.deadline_ms).min()?;
    Some((n, now.saturating_sub(oldest)))
}

/// Fails requests left when their peer is dropped (the NI stops).
pub(crate) fn fail_all(reqs: &mut KVec<ZcReq>, err: i32) {
    while let Some(z) = crate::kapi::vec::pop(reqs) {
        if let Some(msg) = z.msg {
            count(&ZC_ABORTED);
            msg.finalize(err, Status::LocalError);
        }
    }
}
