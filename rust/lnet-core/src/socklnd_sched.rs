//! ksocklnd's scheduler policy: how many scheduler threads an NI runs, which
//! of them takes a new connection, and the framing of a connection's
//! non-blocking receive and send, which advance by whatever the socket
//! gives or takes at a time and resume where they stopped.

use super::hdr::HDR_NID4_LEN;
use super::socklnd::{KsockMsg, MsgKind, ProtoError, KSOCK_MSG_LEN};

/// Scheduler threads per CPT when `nscheds` is 0: at least this many
/// (`SOCKNAL_NSCHEDS`)...
pub const NSCHEDS: u32 = 3;
/// ...and, at start, at most this many (`SOCKNAL_NSCHEDS_HIGH`).
pub const NSCHEDS_HIGH: u32 = NSCHEDS * 2;

/// Scheduler threads an NI starts on `cpus` CPUs: `nscheds` if set (at
/// most one per CPU), else half the CPUs, the other half left to the
/// layers above, no fewer than [`NSCHEDS`] and no more than
/// [`NSCHEDS_HIGH`]; never more than there are CPUs, never none.
pub fn sched_threads(nscheds: i32, cpus: u32) -> u32 {
    let cpus = cpus.max(1);
    match u32::try_from(nscheds) {
        Ok(n) if n > 0 => n.min(cpus),
        _ => (cpus / 2).max(NSCHEDS).min(cpus).min(NSCHEDS_HIGH),
    }
    .max(1)
}

/// The scheduler a new connection goes to: the one serving the fewest
/// connections (the first of those), None if there is none.
pub fn least_loaded<I: IntoIterator<Item = u32>>(loads: I) -> Option<usize> {
    loads
        .into_iter()
        .enumerate()
        .min_by_key(|&(i, n)| (n, i))
        .map(|(i, _)| i)
}

/// Bytes of the two headers an LNET frame starts with.
pub const FRAME_HDRS_LEN: usize = KSOCK_MSG_LEN + HDR_NID4_LEN;

/// Where a connection's receive stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The `ksock_msg` header.
    Head,
    /// The LNet header of an LNET message.
    LnetHdr,
    /// LNet has the header; its `lnd_recv` has not come yet (a lazy
    /// portal may hold it for long). Nothing is read meanwhile.
    Parked,
    /// The payload LNet wants, into its fragments.
    Payload,
    /// Payload bytes nobody wants.
    Discard,
}

/// What to read next.
#[derive(Debug, PartialEq, Eq)]
pub enum RxWant<'a> {
    /// Into this part of the header buffer.
    Buf(&'a mut [u8]),
    /// `len` bytes into the message's fragments, `done` bytes into the
    /// payload.
    Payload {
        /// Bytes of the payload already received.
        done: u32,
        /// Bytes still to come.
        len: u32,
    },
    /// Up to this many bytes to drop.
    Discard(u32),
    /// Nothing until LNet answers for the header.
    Parked,
}

/// What a receive completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxEvent {
    /// Nothing yet: read on.
    More,
    /// A `ksock_msg` header. A NOOP ends its frame here; an LNET message
    /// goes on with its LNet header.
    Header(KsockMsg),
    /// The LNet header is in ([`RxFrame::lnet_hdr`]): hand it to LNet; the
    /// receive is parked until [`RxFrame::recv`].
    LnetHdr,
    /// The frame is complete: its payload delivered (or dropped); `zc` is
    /// the zero-copy request cookie to acknowledge (0: none).
    Done {
        /// The sender's zero-copy request cookie.
        zc: u64,
    },
}

/// The receive of one connection, frame after frame: `ksock_msg` header,
/// then for an LNET message its LNet header, a park until LNet says where
/// the payload goes, the payload and what of it nobody wants. Each step
/// takes any number of bytes.
#[derive(Clone, Debug)]
pub struct RxFrame {
    phase: Phase,
    /// Bytes of the current phase received.
    got: u32,
    /// Bytes the current phase needs.
    want: u32,
    /// Bytes to drop after the payload.
    discard: u32,
    /// The frame's zero-copy request cookie.
    zc: u64,
    buf: [u8; FRAME_HDRS_LEN],
}

impl Default for RxFrame {
    fn default() -> Self {
        Self::new()
    }
}

impl RxFrame {
    /// Waiting for a frame.
    pub const fn new() -> RxFrame {
        RxFrame {
            phase: Phase::Head,
            got: 0,
            want: KSOCK_MSG_LEN as u32,
            discard: 0,
            zc: 0,
            buf: [0; FRAME_HDRS_LEN],
        }
    }

    /// What to read next.
    pub fn want(&mut self) -> RxWant<'_> {
        let left = self.want.saturating_sub(self.got);
        match self.phase {
            Phase::Head => RxWant::Buf(
                self.buf
                    .get_mut(self.got as usize..KSOCK_MSG_LEN)
                    .unwrap_or(&mut []),
            ),
            Phase::LnetHdr => RxWant::Buf(
                self.buf
                    .get_mut(KSOCK_MSG_LEN.saturating_add(self.got as usize)..)
                    .unwrap_or(&mut []),
            ),
            Phase::Parked => RxWant::Parked,
            Phase::Payload => RxWant::Payload {
                done: self.got,
                len: left,
            },
            Phase::Discard => RxWant::Discard(left),
        }
    }

    /// Bytes of a frame have come and more are due: the socket's timeout
    /// applies. Not between frames, nor while LNet holds the header.
    pub fn mid_frame(&self) -> bool {
        match self.phase {
            Phase::Head => self.got > 0,
            Phase::Parked => false,
            Phase::LnetHdr | Phase::Payload | Phase::Discard => true,
        }
    }

    /// Whether LNet's answer for the header is awaited.
    pub fn parked(&self) -> bool {
        self.phase == Phase::Parked
    }

    /// The LNet header, once [`RxEvent::LnetHdr`] said it is in.
    pub fn lnet_hdr(&self) -> &[u8] {
        self.buf.get(KSOCK_MSG_LEN..).unwrap_or(&[])
    }

    fn start(&mut self, phase: Phase, want: u32) {
        self.phase = phase;
        self.got = 0;
        self.want = want;
    }

    /// The frame ends: the next one starts with its header.
    fn next_frame(&mut self) -> RxEvent {
        let zc = self.zc;
        self.zc = 0;
        self.discard = 0;
        self.start(Phase::Head, KSOCK_MSG_LEN as u32);
        RxEvent::Done { zc }
    }

    /// `n` bytes of what [`RxFrame::want`] asked for came; `flip` says the
    /// peer writes headers in the other byte order.
    pub fn received(&mut self, n: u32, flip: bool) -> Result<RxEvent, ProtoError> {
        self.got = self.got.saturating_add(n).min(self.want);
        if self.got < self.want {
            return Ok(RxEvent::More);
        }
        match self.phase {
            Phase::Head => {
                let m = KsockMsg::decode(&self.buf, flip)?;
                match m.kind {
                    MsgKind::Noop => {
                        self.start(Phase::Head, KSOCK_MSG_LEN as u32);
                    }
                    MsgKind::Lnet => {
                        self.zc = m.zc_cookies[0];
                        self.start(Phase::LnetHdr, HDR_NID4_LEN as u32);
                    }
                }
                Ok(RxEvent::Header(m))
            }
            Phase::LnetHdr => {
                self.start(Phase::Parked, 0);
                Ok(RxEvent::LnetHdr)
            }
            Phase::Parked => Ok(RxEvent::More),
            Phase::Payload => Ok(self.after_payload()),
            Phase::Discard => Ok(self.next_frame()),
        }
    }

    /// LNet's answer (`lnd_recv`): `rlen` payload bytes came, of which
    /// the first `mlen` go to the message (none if `deliver` is false).
    /// Ignored unless parked.
    pub fn recv(&mut self, mlen: u32, rlen: u32, deliver: bool) -> RxEvent {
        if self.phase != Phase::Parked {
            return RxEvent::More;
        }
        let mlen = if deliver { mlen.min(rlen) } else { 0 };
        self.discard = rlen.saturating_sub(mlen);
        if mlen > 0 {
            self.start(Phase::Payload, mlen);
            RxEvent::More
        } else {
            self.after_payload()
        }
    }

    fn after_payload(&mut self) -> RxEvent {
        if self.discard > 0 {
            let d = self.discard;
            self.start(Phase::Discard, d);
            RxEvent::More
        } else {
            self.next_frame()
        }
    }
}

/// How far the send of one frame has gone: its headers (`hdr_len` bytes)
/// and then `payload` bytes from the message's fragments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxProgress {
    hdr_len: u32,
    payload: u32,
    sent: u32,
}

/// What to send next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxWant {
    /// The headers from this byte on; `more`: a payload follows.
    Hdr {
        /// First header byte not yet sent.
        from: usize,
        /// A payload follows the headers.
        more: bool,
    },
    /// `len` payload bytes, `done` already sent.
    Payload {
        /// Payload bytes sent.
        done: u32,
        /// Payload bytes left.
        len: u32,
    },
    /// The frame is on the socket.
    Done,
}

impl TxProgress {
    /// Nothing sent yet.
    pub const fn new(hdr_len: u32, payload: u32) -> TxProgress {
        TxProgress {
            hdr_len,
            payload,
            sent: 0,
        }
    }

    /// What to send next.
    pub fn want(&self) -> TxWant {
        if self.sent < self.hdr_len {
            TxWant::Hdr {
                from: self.sent as usize,
                more: self.payload > 0,
            }
        } else {
            let done = self.sent - self.hdr_len;
            match self.payload.saturating_sub(done) {
                0 => TxWant::Done,
                len => TxWant::Payload { done, len },
            }
        }
    }

    /// `n` more bytes went.
    pub fn sent(&mut self, n: u32) {
        let total = self.hdr_len.saturating_add(self.payload);
        self.sent = self.sent.saturating_add(n).min(total);
    }

    /// Whether anything of the frame has been sent: a frame begun must be
    /// finished before another starts.
    pub fn begun(&self) -> bool {
        self.sent > 0
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::socklnd::{ZcAcks, KEEPALIVE_PING};
    use super::*;
    use std::vec::Vec;

    #[test]
    fn thread_count() {
        // Lustre's rule on one CPT: half the CPUs, 3 to 6, within the CPUs.
        assert_eq!(sched_threads(0, 1), 1);
        assert_eq!(sched_threads(0, 2), 2);
        assert_eq!(sched_threads(0, 4), 3);
        assert_eq!(sched_threads(0, 8), 4);
        assert_eq!(sched_threads(0, 64), 6);
        assert_eq!(sched_threads(0, 0), 1);
        // nscheds: that many, at most one per CPU.
        assert_eq!(sched_threads(2, 8), 2);
        assert_eq!(sched_threads(16, 8), 8);
        assert_eq!(sched_threads(-1, 8), 4);
    }

    #[test]
    fn least_loaded_first_of_fewest() {
        assert_eq!(least_loaded([]), None);
        assert_eq!(least_loaded([3, 1, 2, 1]), Some(1));
        assert_eq!(least_loaded([0, 0]), Some(0));
        assert_eq!(least_loaded([u32::MAX, 7]), Some(1));
    }

    fn msg(kind: MsgKind, c0: u64, c1: u64) -> [u8; KSOCK_MSG_LEN] {
        let mut b = [0u8; KSOCK_MSG_LEN];
        KsockMsg {
            kind,
            csum: 0,
            zc_cookies: [c0, c1],
        }
        .encode(&mut b)
        .unwrap();
        b
    }

    /// Feeds `bytes` to `rx` `chunk` at a time (headers and discards;
    /// payload bytes are only counted), collecting the events.
    fn feed(rx: &mut RxFrame, bytes: &[u8], chunk: usize) -> Vec<RxEvent> {
        let mut ev = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let n = match rx.want() {
                RxWant::Buf(b) => {
                    let n = b.len().min(chunk).min(bytes.len() - at);
                    b[..n].copy_from_slice(&bytes[at..at + n]);
                    n
                }
                RxWant::Payload { len, .. } | RxWant::Discard(len) => {
                    (len as usize).min(chunk).min(bytes.len() - at)
                }
                RxWant::Parked => break,
            };
            at += n;
            match rx.received(n as u32, false).unwrap() {
                RxEvent::More => {}
                e => ev.push(e),
            }
        }
        ev
    }

    #[test]
    fn noop_in_pieces() {
        let mut rx = RxFrame::new();
        assert!(!rx.mid_frame());
        let b = msg(MsgKind::Noop, 0, KEEPALIVE_PING);
        let ev = feed(&mut rx, &b[..5], 5);
        assert!(ev.is_empty());
        assert!(rx.mid_frame());
        let ev = feed(&mut rx, &b[5..], 3);
        assert_eq!(ev.len(), 1);
        let RxEvent::Header(m) = ev[0] else { panic!() };
        assert_eq!(m.kind, MsgKind::Noop);
        assert_eq!(m.zc_acks(), ZcAcks::Keepalive);
        // Back between frames.
        assert!(!rx.mid_frame());
        assert!(matches!(rx.want(), RxWant::Buf(b) if b.len() == KSOCK_MSG_LEN));
    }

    #[test]
    fn lnet_frame_payload_and_discard() {
        let mut rx = RxFrame::new();
        let mut wire = msg(MsgKind::Lnet, 42, 0).to_vec();
        let hdr: Vec<u8> = (0..HDR_NID4_LEN as u8).collect();
        wire.extend_from_slice(&hdr);
        let ev = feed(&mut rx, &wire, 7);
        assert!(matches!(ev[0], RxEvent::Header(m) if m.kind == MsgKind::Lnet));
        assert_eq!(ev[1], RxEvent::LnetHdr);
        assert_eq!(rx.lnet_hdr(), &hdr[..]);
        assert!(rx.parked());
        assert!(!rx.mid_frame());
        assert_eq!(rx.want(), RxWant::Parked);
        // LNet takes 100 of 150 bytes.
        assert_eq!(rx.recv(100, 150, true), RxEvent::More);
        assert!(rx.mid_frame());
        assert_eq!(rx.want(), RxWant::Payload { done: 0, len: 100 });
        assert_eq!(rx.received(60, false), Ok(RxEvent::More));
        assert_eq!(rx.want(), RxWant::Payload { done: 60, len: 40 });
        assert_eq!(rx.received(40, false), Ok(RxEvent::More));
        assert_eq!(rx.want(), RxWant::Discard(50));
        assert_eq!(rx.received(50, false), Ok(RxEvent::Done { zc: 42 }));
        assert!(!rx.mid_frame());
        // The next frame carries no request.
        let ev = feed(&mut rx, &msg(MsgKind::Lnet, 0, 0), 24);
        assert_eq!(ev.len(), 1);
        let ev = feed(&mut rx, &hdr, 72);
        assert_eq!(ev, [RxEvent::LnetHdr]);
        assert_eq!(rx.recv(0, 0, true), RxEvent::Done { zc: 0 });
    }

    #[test]
    fn discarded_and_empty_messages() {
        let mut rx = RxFrame::new();
        let mut wire = msg(MsgKind::Lnet, 9, 0).to_vec();
        wire.extend_from_slice(&[0; HDR_NID4_LEN]);
        feed(&mut rx, &wire, 96);
        // No MD: all of it dropped, the request still acknowledged.
        assert_eq!(rx.recv(10, 30, false), RxEvent::More);
        assert_eq!(rx.want(), RxWant::Discard(30));
        assert_eq!(rx.received(30, false), Ok(RxEvent::Done { zc: 9 }));
        // An answer when not parked changes nothing.
        assert_eq!(rx.recv(1, 1, true), RxEvent::More);
        assert!(matches!(rx.want(), RxWant::Buf(b) if b.len() == KSOCK_MSG_LEN));
        // mlen beyond rlen is held to rlen.
        feed(&mut rx, &wire, 96);
        assert_eq!(rx.recv(50, 20, true), RxEvent::More);
        assert_eq!(rx.want(), RxWant::Payload { done: 0, len: 20 });
    }

    #[test]
    fn bad_header_is_a_protocol_error() {
        let mut rx = RxFrame::new();
        let mut b = msg(MsgKind::Noop, 0, 0);
        b[0] = 0x77;
        let RxWant::Buf(buf) = rx.want() else {
            panic!()
        };
        buf.copy_from_slice(&b);
        assert_eq!(
            rx.received(KSOCK_MSG_LEN as u32, false),
            Err(ProtoError::BadMsgType(0x77))
        );
    }

    #[test]
    fn flipped_header() {
        let mut rx = RxFrame::new();
        let mut b = msg(MsgKind::Lnet, 5, 0);
        // The peer's order is the other one: every field swapped.
        b[..4].reverse();
        b[4..8].reverse();
        b[8..16].reverse();
        b[16..24].reverse();
        let RxWant::Buf(buf) = rx.want() else {
            panic!()
        };
        buf.copy_from_slice(&b);
        let ev = rx.received(KSOCK_MSG_LEN as u32, true).unwrap();
        assert!(matches!(ev, RxEvent::Header(m) if m.zc_cookies == [5, 0]));
    }

    #[test]
    fn tx_resumes() {
        let mut tx = TxProgress::new(96, 1000);
        assert!(!tx.begun());
        assert_eq!(
            tx.want(),
            TxWant::Hdr {
                from: 0,
                more: true
            }
        );
        tx.sent(50);
        assert!(tx.begun());
        assert_eq!(
            tx.want(),
            TxWant::Hdr {
                from: 50,
                more: true
            }
        );
        tx.sent(46);
        assert_eq!(tx.want(), TxWant::Payload { done: 0, len: 1000 });
        tx.sent(999);
        assert_eq!(tx.want(), TxWant::Payload { done: 999, len: 1 });
        tx.sent(5);
        assert_eq!(tx.want(), TxWant::Done);
        let mut noop = TxProgress::new(24, 0);
        assert_eq!(
            noop.want(),
            TxWant::Hdr {
                from: 0,
                more: false
            }
        );
        noop.sent(24);
        assert_eq!(noop.want(), TxWant::Done);
    }
}
