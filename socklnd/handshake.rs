// SPDX-License-Identifier: GPL-2.0

//! Connection set-up on the wire (wire.md §4, §5.5): the active side's
//! acceptor request and hello, and the passive side's checks and reply.
//! Only hello V3 with NID4 headers is spoken so far, with typed
//! connections (V3 never sends on an untyped one).

use crate::kapi::sock::Socket;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::socklnd::{
    Accept, AcceptorRequest, ConnType, Hello, HelloHead, ProtoError, ACCEPTOR_MAGIC,
    OLD_ACCEPTOR_REPLY,
};
use crate::ni::SockNi;
use kernel::prelude::*;

/// The hello version we speak.
pub(crate) const VERSION: u32 = 3;
/// `LNET_PID_LUSTRE`: the pid of kernel LNet.
pub(crate) const PID: u32 = 12345;

/// What went wrong setting up a connection.
#[derive(Debug)]
pub(crate) enum SetupError {
    /// The socket failed (refused, reset, timed out...).
    Io(Error),
    /// The peer broke the protocol.
    Proto(ProtoError),
    /// The peer is not who it should be, or wants what we do not offer.
    Refused(&'static str),
    /// The peer answered with type NONE: it is connecting to us and wins
    /// the race, or already has this connection (`EALREADY`).
    Race,
    /// The hello's source NID is on another net than this NI: an LND
    /// carries one net, so nothing could be sent back to it here.
    OtherNet(Nid),
}

impl core::fmt::Display for SetupError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SetupError::Io(e) => write!(f, "socket error {}", e.to_errno()),
            SetupError::Proto(e) => write!(f, "protocol error: {}", e),
            SetupError::Refused(why) => f.write_str(why),
            SetupError::Race => f.write_str("refused: connection race or duplicate"),
            SetupError::OtherNet(nid) => write!(f, "hello from {}, on another net", nid),
        }
    }
}

impl From<Error> for SetupError {
    fn from(e: Error) -> Self {
        SetupError::Io(e)
    }
}

impl From<ProtoError> for SetupError {
    fn from(e: ProtoError) -> Self {
        SetupError::Proto(e)
    }
}

/// The peer's side of a finished handshake.
#[derive(Clone, Copy)]
pub(crate) struct Peer {
    pub(crate) nid: Nid,
    /// The peer writes its `ksock_msg` headers in the other byte order.
    pub(crate) flip: bool,
    /// The peer's NI start (`kshm_src_incarnation`).
    pub(crate) incarnation: u64,
    /// The connection's type as this side sees it.
    pub(crate) ctype: ConnType,
    /// Its pid: the hello's on the passive side; on the active side the
    /// one we connected to, kernel LNet's (Lustre's `ksnp_id`).
    pub(crate) pid: u32,
}

/// Reads a hello (and discards its IP entries).
fn recv_hello(sock: &Socket) -> Result<(Hello, bool), SetupError> {
    let mut b = [0u8; 80];
    sock.recv(b.get_mut(..8).ok_or(SetupError::Refused("buffer"))?)?;
    let head = HelloHead::parse(&b)?;
    sock.recv(
        b.get_mut(8..head.base_len)
            .ok_or(SetupError::Refused("buffer"))?,
    )?;
    let hello = Hello::decode(&head, &b)?;
    sock.discard(hello.nips * 4)?;
    Ok((hello, head.flip))
}

fn send_hello(sock: &Socket, hello: &Hello) -> Result<(), SetupError> {
    let mut b = [0u8; 80];
    let n = hello
        .encode(&mut b)
        .ok_or(SetupError::Refused("NID does not fit hello V3"))?;
    sock.send(b.get(..n).unwrap_or(&[]), false)?;
    Ok(())
}

/// Active side: after connecting, asks the peer's acceptor for `peer` and
/// exchanges hellos for a connection of type `ctype`.
pub(crate) fn active(
    sni: &SockNi,
    sock: &Socket,
    peer: Nid,
    ctype: ConnType,
) -> Result<Peer, SetupError> {
    let req = AcceptorRequest {
        version: 1,
        target: peer,
    };
    let mut b = [0u8; 28];
    let n = req
        .encode(&mut b)
        .ok_or(SetupError::Refused("peer NID does not fit a V1 request"))?;
    sock.send(b.get(..n).unwrap_or(&[]), true)?;
    send_hello(
        sock,
        &Hello {
            version: VERSION,
            src_nid: sni.nid,
            dst_nid: peer,
            src_pid: PID,
            dst_pid: 0,
            src_incarnation: sni.incarnation,
            dst_incarnation: 0,
            ctype,
            nips: 0,
        },
    )?;
    let (reply, flip) = recv_hello(sock)?;
    if reply.version != VERSION {
        return Err(SetupError::Refused("peer answered another hello version"));
    }
    if reply.src_nid != peer {
        return Err(SetupError::Refused("connected to the wrong peer"));
    }
    if reply.ctype == ConnType::None {
        return Err(SetupError::Race);
    }
    if reply.ctype != ctype.inverse() {
        return Err(SetupError::Refused("peer answered with the wrong type"));
    }
    Ok(Peer {
        nid: reply.src_nid,
        flip,
        incarnation: reply.src_incarnation,
        ctype,
        pid: PID,
    })
}

/// Passive side: reads the acceptor request and the hello and checks
/// them. The caller decides on the connection and answers with [`reply`].
pub(crate) fn passive(sni: &SockNi, sock: &Socket) -> Result<(Hello, Peer), SetupError> {
    let mut b = [0u8; 28];
    sock.recv(b.get_mut(..8).ok_or(SetupError::Refused("buffer"))?)?;
    let magic = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let version = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    let version = if magic == ACCEPTOR_MAGIC {
        version
    } else if magic == ACCEPTOR_MAGIC.swap_bytes() {
        version.swap_bytes()
    } else {
        0
    };
    if let Some(len) = AcceptorRequest::len(version) {
        sock.recv(b.get_mut(8..len).ok_or(SetupError::Refused("buffer"))?)?;
    }
    let req = match AcceptorRequest::decode(&b)? {
        Accept::Request(r) => r,
        Accept::TellOld => {
            let _ = sock.send(&OLD_ACCEPTOR_REPLY, false);
            return Err(SetupError::Refused("acceptor protocol version"));
        }
    };
    if req.target != sni.nid {
        return Err(SetupError::Refused("no matching NI"));
    }
    let (hello, flip) = recv_hello(sock)?;
    if hello.version != VERSION {
        return Err(SetupError::Refused("hello version not spoken"));
    }
    if hello.dst_nid != sni.nid && !hello.dst_nid.is_any() {
        return Err(SetupError::Refused("hello for another NID"));
    }
    if matches!(hello.ctype, ConnType::Any | ConnType::None) {
        return Err(SetupError::Refused("untyped connection on hello V3"));
    }
    // Stricter than Lustre, whose ksocknal_recv_hello takes any source
    // NID: a peer of another net on this NI would be a peer LNet never
    // selects it for, and its messages would claim a net they did not
    // come over.
    if hello.src_nid.net() != sni.nid.net() {
        return Err(SetupError::OtherNet(hello.src_nid));
    }
    let peer = Peer {
        nid: hello.src_nid,
        flip,
        incarnation: hello.src_incarnation,
        ctype: hello.ctype.inverse(),
        pid: hello.src_pid,
    };
    Ok((hello, peer))
}

/// Passive side: answers `hello` with this side's type, or with NONE to
/// refuse (the peer then retries or gives up).
pub(crate) fn reply(
    sni: &SockNi,
    sock: &Socket,
    hello: &Hello,
    accept: bool,
) -> Result<(), SetupError> {
    send_hello(
        sock,
        &Hello {
            version: VERSION,
            src_nid: sni.nid,
            dst_nid: hello.src_nid,
            src_pid: PID,
            // Lustre answers in the buffer it received, so these echo the
            // peer's (zero) values.
            dst_pid: hello.dst_pid,
            src_incarnation: sni.incarnation,
            dst_incarnation: hello.dst_incarnation,
            ctype: if accept {
                hello.ctype.inverse()
            } else {
                ConnType::None
            },
            nips: 0,
        },
    )
}
