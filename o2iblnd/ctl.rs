// SPDX-License-Identifier: GPL-2.0

//! The NI as Lustre's `lctl --net o2ib peer_list`, `conn_list` and
//! `disconnect` see it (Lustre's `kiblnd_ctl`): its peer NIs with their
//! reference counts, its established connections with their path MTU,
//! and closing them. The answers' layout is lnet-core's `lnd_ctl`.

use crate::conn::Conn;
use crate::lnet_core::lnd_ctl::{self, nr, Close, IocData};
use crate::ni::IbNi;
use kernel::prelude::*;
use kernel::sync::Arc;

/// One of Lustre's LND commands for this NI; EINVAL for one ko2iblnd
/// does not answer.
pub(crate) fn ctl(ni: &IbNi, cmd: u32, d: &mut IocData<'_>) -> Result {
    match cmd {
        nr::GET_PEER => {
            // `kiblnd_get_peer_info`: the index'th peer NI.
            let (nid, refs) = {
                let g = ni.table.lock();
                let (nid, p) = g.peers.iter().nth(d.count() as usize).ok_or(ENOENT)?;
                (*nid, p.refcount())
            };
            d.set_nid(nid.to_nid4().ok_or(EINVAL)?);
            d.set_count(refs);
            Ok(())
        }
        nr::GET_CONN => {
            // `kiblnd_get_conn_by_idx`: the index'th established
            // connection, peer by peer.
            let c = {
                let g = ni.table.lock();
                lnd_ctl::nth_of(g.peers.values(), |p| p.conns().iter(), d.count()).cloned()
            };
            let c = c.ok_or(ENOENT)?;
            let mtu = c.inner.lock().path_mtu;
            d.set_nid(c.peer.to_nid4().ok_or(EINVAL)?);
            d.set_u32(0, mtu);
            Ok(())
        }
        nr::CLOSE_CONNECTION => {
            // ko2iblnd closes by NID only.
            let what = Close {
                ip: None,
                ..Close::of(d)
            };
            let n = close(ni, &what);
            what.o2ib_result(n).map_err(|e| Error::from_errno(-e))
        }
        _ => Err(EINVAL),
    }
}

/// Closes the established connections of the peer NIs `what` selects
/// (`kiblnd_close_matching_conns`), as a clean close; returns how many.
/// Taken from the table first: closing takes its lock.
fn close(ni: &IbNi, what: &Close) -> usize {
    let mut found: KVec<Arc<Conn>> = KVec::new();
    {
        let g = ni.table.lock();
        for (nid, p) in g.peers.iter() {
            if !what.matches(nid.to_nid4(), 0) {
                continue;
            }
            for c in p.conns() {
                // Without room, the rest stay open: the caller may ask
                // again.
                if found.push(c.clone(), GFP_ATOMIC).is_err() {
                    break;
                }
            }
        }
    }
    let n = found.len();
    for c in found {
        c.close(0);
    }
    n
}
