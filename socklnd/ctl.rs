// SPDX-License-Identifier: GPL-2.0

//! The NI as Lustre's `lctl --net tcp peer_list`, `conn_list` and
//! `disconnect` see it (Lustre's `ksocknal_ctl`): its peers with their
//! connection routes, its connections, and closing them. The answers'
//! layout is lnet-core's `lnd_ctl`.

use crate::conn::Conn;
use crate::lnet_core::lnd_ctl::{self, nr, Close, IocData, SockConn, SockPeer, PID_LUSTRE};
use crate::lnet_core::socklnd::ACCEPTOR_PORT;
use crate::ni::SockNi;
use kernel::prelude::*;
use kernel::sync::Arc;

/// One of Lustre's LND commands for this NI; EINVAL for one socklnd does
/// not answer.
pub(crate) fn ctl(sni: &SockNi, cmd: u32, d: &mut IocData<'_>) -> Result {
    match cmd {
        nr::GET_PEER => {
            let p = peer_info(sni, d.count()).ok_or(ENOENT)??;
            p.put(d);
            Ok(())
        }
        nr::GET_CONN => {
            let c = nth_conn(sni, d.count()).ok_or(ENOENT)?;
            conn_info(sni, &c)?.put(d);
            Ok(())
        }
        nr::CLOSE_CONNECTION => {
            close(sni, &Close::of(d));
            // Lustre asks with any pid, and a wildcard always succeeds.
            Ok(())
        }
        _ => Err(EINVAL),
    }
}

/// The `index`'th peer (`ksocknal_get_peer_info`): with its route, our
/// address, its address and acceptor port, and its live connections
/// from that address; without one (a peer that only connected to us),
/// zeros there. EINVAL for a peer whose NID has no 64-bit form.
fn peer_info(sni: &SockNi, index: u32) -> Option<Result<SockPeer>> {
    let t = sni.table.lock();
    let (nid, p) = t.peers().nth(index as usize)?;
    let Some(nid4) = nid.to_nid4() else {
        return Some(Err(EINVAL));
    };
    let pid = p.live_conns().next().map_or(PID_LUSTRE, |c| c.pid);
    let info = match nid.addr4().filter(|_| p.routed()) {
        Some(ip) => SockPeer {
            nid4,
            pid,
            my_ip: sni.addr,
            peer_ip: ip,
            port: u32::from(ACCEPTOR_PORT),
            conn_count: p.live_conns().filter(|c| c.peer_addr.0 == ip).count() as u32,
            share_count: 1,
        },
        None => SockPeer {
            nid4,
            pid,
            ..SockPeer::default()
        },
    };
    Some(Ok(info))
}

/// The `index`'th live connection, peer by peer
/// (`ksocknal_get_conn_by_idx`).
fn nth_conn(sni: &SockNi, index: u32) -> Option<Arc<Conn>> {
    let t = sni.table.lock();
    lnd_ctl::nth_of(t.peers(), |(_, p)| p.live_conns(), index).cloned()
}

/// What `conn_list` prints of a connection; its socket is read outside
/// the table lock.
fn conn_info(sni: &SockNi, c: &Conn) -> Result<SockConn> {
    let (tx, rx, nagle) = c.sock_buffers();
    Ok(SockConn {
        nid4: c.peer.to_nid4().ok_or(EINVAL)?,
        pid: c.pid,
        ctype: c.ctype.to_i32() as u32,
        // Every scheduler serves the one CPU partition the LND knows
        // (sched.rs).
        cpt: 0,
        my_ip: sni.addr,
        peer_ip: c.peer_addr.0,
        peer_port: u32::from(c.peer_addr.1),
        tx_buf: tx.max(0) as u32,
        rx_buf: rx.max(0) as u32,
        nagle,
    })
}

/// Closes the live connections `what` selects
/// (`ksocknal_close_matching_conns`), as a clean close: their peers stay,
/// and the next message to one connects again. Taken from the table
/// first: closing finalizes messages, never under its lock.
fn close(sni: &SockNi, what: &Close) {
    let mut found: KVec<Arc<Conn>> = KVec::new();
    {
        let t = sni.table.lock();
        for (nid, p) in t.peers() {
            for c in p.live_conns() {
                if what.matches(nid.to_nid4(), c.peer_addr.0) {
                    // Without room, the rest stay open: the caller may ask
                    // again.
                    if found.push(c.clone(), GFP_ATOMIC).is_err() {
                        break;
                    }
                }
            }
        }
    }
    for c in found {
        c.close(0);
    }
}
