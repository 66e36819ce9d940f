// SPDX-License-Identifier: GPL-2.0

//! Incoming connections: the acceptor's checks, the hello, the race,
//! restart and duplicate rules (lnet-core `socklnd_conns::judge`), then a
//! connection handed to a scheduler.

use crate::conn::Conn;
use crate::handshake::{self, Peer, SetupError};
use crate::kapi::errno;
use crate::kapi::sock::Socket;
use crate::lnet_core::socklnd::{self, Hello};
use crate::lnet_core::socklnd_conns::{self as rules, Incoming, Verdict};
use crate::ni::SockNi;
use kernel::prelude::*;

/// `accept_timeout`: seconds a peer has to finish the handshake.
const ACCEPT_TIMEOUT_MS: u32 = 5000;
/// Ports below this are privileged (`accept="secure"`).
const PRIVILEGED: u16 = 1024;

/// Sets up a connection the listener accepted, or refuses it.
pub(crate) fn accept(sni: &SockNi, sock: Socket) {
    sock.set_timeouts(ACCEPT_TIMEOUT_MS, ACCEPT_TIMEOUT_MS);
    let Ok((ip, port)) = sock.peer() else {
        sni.count_refused();
        return;
    };
    let [a, b, c, d] = ip.to_be_bytes();
    // Lustre's default accept="secure": only privileged source ports.
    if port >= PRIVILEGED {
        crate::cerror!(
            "refusing connection from {}.{}.{}.{}: insecure port {}\n",
            a,
            b,
            c,
            d,
            port
        );
        sni.count_refused();
        return;
    }
    match handshake::passive(sni, &sock) {
        Ok((hello, peer)) => decide(sni, sock, &hello, peer, [a, b, c, d]),
        Err(e) => {
            if matches!(e, SetupError::Proto(_)) {
                sni.count_protocol_error();
            }
            sni.count_refused();
            crate::cerror!(
                "refusing connection from {}.{}.{}.{} to {}: {}\n",
                a,
                b,
                c,
                d,
                sni.nid,
                e
            );
        }
    }
}

/// Takes or refuses a connection whose hello checked out
/// (`ksocknal_create_conn`, passive side).
fn decide(sni: &SockNi, sock: Socket, hello: &Hello, peer: Peer, ip: [u8; 4]) {
    let [a, b, c, d] = ip;
    let verdict = {
        let mut t = sni.table.lock();
        let incoming = Incoming {
            peer: peer.nid,
            me: sni.nid,
            connecting: t.peer_mut(&peer.nid).is_some_and(|p| p.connecting),
            known_incarnation: if t.connected(&peer.nid) {
                t.peer_mut(&peer.nid).and_then(|p| p.incarnation)
            } else {
                None
            },
            incarnation: peer.incarnation,
            duplicate: t.duplicate(&peer.nid, peer.ctype),
            // The listener is bound to the NI's address: a connection
            // from that address is the NI reaching its own NID.
            loopback: u32::from_be_bytes(ip) == sni.addr && peer.nid == sni.nid,
        };
        let v = if t.closed {
            Err(errno::ESHUTDOWN())
        } else {
            Ok(rules::judge(&incoming))
        };
        if v == Ok(Verdict::Accept) {
            // Messages for the peer wait for this connection rather than
            // fail while it is set up.
            match t.peer_or_insert(peer.nid) {
                Ok(p) => p.accepting += 1,
                Err(e) => return refuse(sni, &ip, peer.nid, e),
            }
        }
        v
    };
    let verdict = match verdict {
        Ok(v) => v,
        Err(e) => return refuse(sni, &ip, peer.nid, e),
    };
    if verdict != Verdict::Accept {
        if verdict == Verdict::Stale {
            // The peer restarted: what we had with it is gone.
            let old = {
                let mut t = sni.table.lock();
                if let Some(p) = t.peer_mut(&peer.nid) {
                    p.incarnation = None;
                }
                t.conns_of(&peer.nid)
            };
            for c in old {
                c.close(errno::ESTALE().to_errno());
            }
        }
        sni.count_refused();
        // NONE tells the peer to retry later rather than fail.
        let _ = handshake::reply(sni, &sock, hello, false);
        crate::cnet!(
            "{}: not creating {} connection from {} ({}.{}.{}.{}): {}\n",
            sni.nid,
            crate::conn::type_name(peer.ctype),
            peer.nid,
            a,
            b,
            c,
            d,
            match verdict {
                Verdict::LostRace => "connection race resolution",
                Verdict::Stale => "peer rebooted",
                _ => "duplicate",
            }
        );
        return;
    }
    let r = handshake::reply(sni, &sock, hello, true)
        .map_err(|e| match e {
            SetupError::Io(e) => e,
            _ => errno::EPROTO(),
        })
        .and_then(|()| Conn::start(sni, sock, peer, false));
    let orphans = {
        let mut t = sni.table.lock();
        if let Some(p) = t.peer_mut(&peer.nid) {
            p.accepting = p.accepting.saturating_sub(1);
        }
        match &r {
            Ok(()) => KVec::new(),
            Err(_) => t.orphans(&peer.nid),
        }
    };
    if let Err(e) = r {
        crate::cneterr!("no connection for {}.{}.{}.{}: {:?}\n", a, b, c, d, e);
        crate::peer::fail_all(orphans, e.to_errno(), socklnd::txlist_status(e.to_errno()));
    }
}

fn refuse(sni: &SockNi, ip: &[u8; 4], nid: crate::lnet_core::nid::Nid, e: Error) {
    sni.count_refused();
    crate::cerror!(
        "refusing connection from {}.{}.{}.{} ({}): {:?}\n",
        ip[0],
        ip[1],
        ip[2],
        ip[3],
        nid,
        e
    );
}
