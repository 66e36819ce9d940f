// SPDX-License-Identifier: GPL-2.0

//! Incoming connections: the acceptor's checks, then a connection with its
//! threads.

use crate::conn::Conn;
use crate::handshake::{self, SetupError};
use crate::kapi::sock::Socket;
use crate::ni::SockNi;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// `accept_timeout`: seconds a peer has to finish the handshake.
const ACCEPT_TIMEOUT_MS: u32 = 5000;
/// Ports below this are privileged (`accept="secure"`).
const PRIVILEGED: u16 = 1024;

/// Sets up a connection the listener accepted, or refuses it.
pub(crate) fn accept(sni: &SockNi, sock: Socket) {
    sock.set_timeouts(ACCEPT_TIMEOUT_MS, ACCEPT_TIMEOUT_MS);
    let Ok((ip, port)) = sock.peer() else {
        sni.refused.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let [a, b, c, d] = ip.to_be_bytes();
    // Lustre's default accept="secure": only privileged source ports.
    if port >= PRIVILEGED {
        pr_warn!(
            "refusing connection from {}.{}.{}.{}: insecure port {}\n",
            a,
            b,
            c,
            d,
            port
        );
        sni.refused.fetch_add(1, Ordering::Relaxed);
        return;
    }
    match handshake::passive(sni, &sock) {
        Ok(peer) => {
            if let Err(e) = Conn::start_passive(sni, sock, peer) {
                pr_warn!("no connection for {}.{}.{}.{}: {:?}\n", a, b, c, d, e);
            }
        }
        Err(e) => {
            if matches!(e, SetupError::Proto(_)) {
                sni.protocol_errors.fetch_add(1, Ordering::Relaxed);
            }
            sni.refused.fetch_add(1, Ordering::Relaxed);
            pr_warn!(
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
