// SPDX-License-Identifier: GPL-2.0

//! A tx: one o2iblnd message on its way out and what it waits for (an
//! LNet message as an IMMEDIATE; a PUT or REPLY too big for one as
//! PUT_REQ, then the RDMA WRITE and PUT_DONE once the sink's PUT_ACK
//! names its buffer; the sink's PUT_ACK over registered pages, waiting
//! for PUT_DONE; completions and NOOPs), its 4 KiB send buffer, and the
//! one place where a tx ends ([`Tx::done`]).

use crate::conn::Conn;
use crate::kapi::bindings::lnet_tx_desc;
use crate::kapi::lnd::Refused;
use crate::kapi::rdma::{Chain, CmId, DmaBuf, Frags, RdmaMap, RdmaSeg};
use crate::lnd::Msg;
use crate::lnet_core::hdr::{MsgBody as LBody, HDR_NID4_LEN};
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::o2iblnd::{self as wire, Completion, Frag, MsgType, RdmaDesc};
use crate::lnet_core::o2iblnd_health as health;
use crate::ni::IbNi;
use kernel::prelude::*;

/// Registers the first `len` bytes of `frags` for RDMA (the peer writes
/// into them when `remote_write`).
pub(crate) fn register(ni: &IbNi, frags: &Frags, len: u32, remote_write: bool) -> Result<RdmaMap> {
    let mut m = RdmaMap::new(&ni.pd, wire::MAX_RDMA_FRAGS)?;
    let r = m.map(frags, len, remote_write);
    if r == Err(crate::kapi::errno::EPROTONOSUPPORT()) {
        // Lustre refuses these too (unless its device maps gappy
        // registrations, which rxe cannot).
        crate::cerror!(
            "{}: {} bytes in {} fragments have gaps (a fragment starts or ends mid-page inside them): fast registration can't map them\n",
            ni.nid,
            len.min(frags.len()),
            frags.niov()
        );
    }
    r.map(|()| m)
}

/// What the tx carries, or waits for.
pub(crate) enum Body {
    /// An LNet header (NID4, little-endian) and its payload, copied in.
    Immediate {
        hdr: [u8; HDR_NID4_LEN],
        payload_len: usize,
    },
    /// Credits and keepalive.
    Noop,
    /// A PUT or REPLY whose payload goes by RDMA once the sink answers.
    PutReq { hdr: [u8; HDR_NID4_LEN], src: Frags },
    /// A GET whose REPLY data the target writes into `map` (the GET's MD,
    /// registered), then answers GET_DONE; `reply` ends with it.
    GetReq {
        hdr: [u8; HDR_NID4_LEN],
        reply: Msg,
        len: u32,
        map: RdmaMap,
    },
    /// The source's RDMA of the payload into the sink's buffer, then
    /// PUT_DONE (a PUT's source) or GET_DONE (a GET's target).
    RdmaDone {
        done: MsgType,
        dst_cookie: u64,
        len: u32,
        segs: KVec<RdmaSeg>,
        /// None when there is nothing to write.
        map: Option<RdmaMap>,
    },
    /// The sink's buffer for a PUT, registered, waiting for PUT_DONE.
    PutAck {
        src_cookie: u64,
        mlen: u32,
        map: RdmaMap,
    },
    /// A PUT_NAK or GET_DONE that ends nothing of ours.
    Completion {
        msg_type: MsgType,
        cookie: u64,
        status: i32,
    },
}

/// The peer's answer to a tx whose send completion had not come yet,
/// acted on when it comes.
pub(crate) enum Answered {
    /// End it with this status and health status.
    End(i32, Status),
    /// The target's GET_DONE: it wrote this many bytes of the REPLY.
    ReplyLen(u32),
    /// The sink's PUT_ACK: write into its fragments, then PUT_DONE.
    PutAck {
        dst_cookie: u64,
        key: u32,
        frags: KVec<Frag>,
    },
}

pub(crate) struct Tx {
    /// Declared before `msg`, so dropped first: its maps deregister and
    /// unmap the message's pages before the message's drop finalizes it
    /// and gives them back ([`Frags::new`]'s promise).
    pub(crate) body: Body,
    /// The LNet message (null for NOOPs and completions).
    msg: Msg,
    /// The peer NI it goes to.
    pub(crate) target: Nid,
    /// The message is built here when it is posted; an IMMEDIATE's
    /// payload is copied in at once, after the header's place.
    pub(crate) buf: DmaBuf,
    /// When it must have ended (ms), set when queued on a connection.
    pub(crate) deadline_ms: u64,
    /// Names its posted work requests and, for PUT_REQ and PUT_ACK, the
    /// cookie the peer echoes.
    pub(crate) id: u64,
    /// Its send completed; it waits for the peer (PUT_ACK or PUT_DONE).
    pub(crate) waiting: bool,
    /// The peer answered while its send was still posted.
    pub(crate) answered: Option<Answered>,
    /// The error of a post that failed part way along its chain
    /// ([`Self::posts_chain`]); 0 if none.
    pub(crate) post_failed: i32,
}

impl Tx {
    fn new(msg: Msg, body: Body, target: Nid, buf: DmaBuf) -> Tx {
        Tx {
            msg,
            body,
            target,
            buf,
            deadline_ms: 0,
            id: 0,
            waiting: false,
            answered: None,
            post_failed: 0,
        }
    }

    /// A tx for an LNet message, or the message refused with the error
    /// LNet finalizes it with. Refused before the tx holds the message:
    /// no health status, as Lustre's kiblnd_send leaves it (LNet then
    /// charges no NI).
    pub(crate) fn from_lnet(
        ni: &IbNi,
        msg: Msg,
        d: &lnet_tx_desc,
    ) -> core::result::Result<Tx, Refused> {
        let target = match crate::kapi::lnet_abi::nid_from_c(&d.target.nid) {
            Ok(t) => t,
            Err(e) => return Err(msg.refuse(e, None)),
        };
        if d.hdr_len as usize != HDR_NID4_LEN {
            // o2iblnd carries NID4 headers only (wire.md §7).
            return Err(msg.refuse(crate::kapi::errno::EPROTO(), None));
        }
        let mut hdr = [0u8; HDR_NID4_LEN];
        hdr.copy_from_slice(&d.hdr[..HDR_NID4_LEN]);
        let len = d.len as usize;
        let mut buf = match DmaBuf::new(&ni.pd, wire::MSG_SIZE, true) {
            Ok(b) => b,
            Err(e) => return Err(msg.refuse(e, None)),
        };
        match get_req(ni, &msg, &hdr) {
            Ok(Some(body)) => return Ok(Tx::new(msg, body, target, buf)),
            Ok(None) => {}
            Err(e) => return Err(msg.refuse(e, None)),
        }
        // The tx holding the fragments (and the map made of them) finalizes
        // `msg` only after dropping them; here they go at once unless a
        // PUT_REQ holds them.
        // SAFETY: LNet's fragments of `msg`, valid until it is finalized.
        let src = unsafe { Frags::new(d.kiov.cast_const().cast(), d.niov, d.offset, d.len) };
        if len > wire::IMMEDIATE_MAX_PAYLOAD {
            // Never a GET: it has no payload.
            return Ok(Tx::new(msg, Body::PutReq { hdr, src }, target, buf));
        }
        if len > 0 {
            // The payload goes after the header's place.
            if let Err(e) = copy_payload(&mut buf, src) {
                return Err(msg.refuse(e, None));
            }
        }
        let body = Body::Immediate {
            hdr,
            payload_len: len,
        };
        Ok(Tx::new(msg, body, target, buf))
    }

    /// A NOOP to `target`.
    pub(crate) fn noop(ni: &IbNi, target: Nid) -> Result<Tx> {
        Ok(Tx::new(
            Msg::none(),
            Body::Noop,
            target,
            DmaBuf::new(&ni.pd, wire::MSG_HDR_LEN, true)?,
        ))
    }

    /// A PUT_NAK or GET_DONE answering the peer's `cookie`.
    pub(crate) fn completion(
        ni: &IbNi,
        target: Nid,
        msg_type: MsgType,
        cookie: u64,
        status: i32,
    ) -> Result<Tx> {
        let buf = DmaBuf::new(&ni.pd, wire::MSG_HDR_LEN + wire::COMPLETION_LEN, true)?;
        let body = Body::Completion {
            msg_type,
            cookie,
            status,
        };
        Ok(Tx::new(Msg::none(), body, target, buf))
    }

    /// The sink's PUT_ACK for a PUT_REQ whose payload LNet wants in `dst`
    /// (`kiblnd_recv`): the pages are registered for the peer to write.
    pub(crate) fn put_ack(
        ni: &IbNi,
        msg: Msg,
        target: Nid,
        src_cookie: u64,
        dst: Frags,
    ) -> core::result::Result<Tx, (Msg, Error)> {
        let r = register(ni, &dst, dst.len(), true)
            .and_then(|map| Ok((map, DmaBuf::new(&ni.pd, wire::MSG_HDR_LEN + 40, true)?)));
        match r {
            Ok((map, buf)) => Ok(Tx::new(
                msg,
                Body::PutAck {
                    src_cookie,
                    mlen: dst.len(),
                    map,
                },
                target,
                buf,
            )),
            Err(e) => Err((msg, e)),
        }
    }

    /// The sink's PUT_ACK arrived for this PUT_REQ: register the payload
    /// and plan the writes into the sink's fragments (`kiblnd_init_rdma`),
    /// as many bytes as the sink offered.
    pub(crate) fn start_rdma(
        &mut self,
        ni: &IbNi,
        dst_cookie: u64,
        rd: &RdmaDesc<'_>,
        max_frags: u16,
    ) -> Result {
        let Body::PutReq { src, .. } = &self.body else {
            return Err(EINVAL);
        };
        // A sink never offers more than the PUT carries: refused below.
        let nob = u32::try_from(rd.total_nob()).unwrap_or(u32::MAX);
        let w = (MsgType::PutDone, dst_cookie, max_frags);
        self.body = rdma_body(ni, self.target, src, nob, rd, w)?;
        self.waiting = false;
        Ok(())
    }

    /// The target's side of an RDMA GET (`kiblnd_reply`): the REPLY's data
    /// in `src` goes into the sink the initiator's GET_REQ named, then
    /// GET_DONE with the bytes written; the REPLY message ends with it.
    pub(crate) fn get_reply(
        ni: &IbNi,
        msg: Msg,
        target: Nid,
        src: Frags,
        rd: &RdmaDesc<'_>,
        dst_cookie: u64,
        max_frags: u16,
    ) -> core::result::Result<Tx, (Msg, Error)> {
        let w = (MsgType::GetDone, dst_cookie, max_frags);
        let r = rdma_body(ni, target, &src, src.len(), rd, w).and_then(|body| {
            Ok((
                body,
                DmaBuf::new(&ni.pd, wire::MSG_HDR_LEN + wire::COMPLETION_LEN, true)?,
            ))
        });
        match r {
            Ok((body, buf)) => {
                crate::GETS_SERVED.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                Ok(Tx::new(msg, body, target, buf))
            }
            Err(e) => Err((msg, e)),
        }
    }

    pub(crate) fn msg_type(&self) -> MsgType {
        match &self.body {
            Body::Immediate { .. } => MsgType::Immediate,
            Body::Noop => MsgType::Noop,
            Body::PutReq { .. } => MsgType::PutReq,
            Body::GetReq { .. } => MsgType::GetReq,
            Body::RdmaDone { done, .. } => *done,
            Body::PutAck { .. } => MsgType::PutAck,
            Body::Completion { msg_type, .. } => *msg_type,
        }
    }

    /// Whether its LNet message's header already reached the peer: a
    /// PUT's or REPLY's RDMA and completion, or a sink's PUT_ACK.
    pub(crate) fn header_sent(&self) -> bool {
        matches!(self.body, Body::RdmaDone { .. } | Body::PutAck { .. })
    }

    /// Whether it posts a chain of work requests (registration, RDMA
    /// writes, then the message) naming its MR: a post that fails may
    /// have left the first of them on the send queue.
    pub(crate) fn posts_chain(&self) -> bool {
        matches!(
            self.body,
            Body::PutAck { .. } | Body::GetReq { .. } | Body::RdmaDone { map: Some(_), .. }
        )
    }

    /// Whether, once sent, it waits for the peer.
    pub(crate) fn waits_for_peer(&self) -> bool {
        matches!(
            self.body,
            Body::PutReq { .. } | Body::PutAck { .. } | Body::GetReq { .. }
        )
    }

    /// Builds the message in the send buffer for a connection: returns its
    /// length.
    pub(crate) fn pack(&mut self, h: &PackHead) -> Result<usize> {
        let eproto = crate::kapi::errno::EPROTO;
        let decode = |hdr: &[u8; HDR_NID4_LEN]| {
            crate::lnet_core::hdr::Hdr::decode_nid4(hdr).map_err(|_| eproto())
        };
        let frag;
        let (body, raw_hdr, payload_len) = match &self.body {
            Body::Immediate { hdr, payload_len } => (
                wire::MsgBody::Immediate {
                    hdr: decode(hdr)?,
                    payload: &[],
                },
                Some(*hdr),
                *payload_len,
            ),
            Body::Noop => (wire::MsgBody::Noop, None, 0),
            Body::PutReq { hdr, .. } => (
                wire::MsgBody::PutReq {
                    hdr: decode(hdr)?,
                    cookie: self.id,
                },
                Some(*hdr),
                0,
            ),
            Body::GetReq { hdr, len, map, .. } => {
                frag = [Frag {
                    nob: *len,
                    addr: map.iova(),
                }];
                (
                    wire::MsgBody::GetReq {
                        hdr: decode(hdr)?,
                        cookie: self.id,
                        rd: RdmaDesc::new(map.rkey(), &frag),
                    },
                    Some(*hdr),
                    0,
                )
            }
            Body::RdmaDone {
                done,
                dst_cookie,
                len,
                ..
            } => {
                let c = Completion {
                    cookie: *dst_cookie,
                    status: i32::try_from(*len).unwrap_or(i32::MAX),
                };
                let b = match done {
                    MsgType::GetDone => wire::MsgBody::GetDone(c),
                    _ => wire::MsgBody::PutDone(c),
                };
                (b, None, 0)
            }
            Body::PutAck {
                src_cookie,
                mlen,
                map,
            } => {
                frag = [Frag {
                    nob: *mlen,
                    addr: map.iova(),
                }];
                (
                    wire::MsgBody::PutAck {
                        src_cookie: *src_cookie,
                        dst_cookie: self.id,
                        rd: RdmaDesc::new(map.rkey(), &frag),
                    },
                    None,
                    0,
                )
            }
            Body::Completion {
                msg_type,
                cookie,
                status,
            } => {
                let c = Completion {
                    cookie: *cookie,
                    status: *status,
                };
                let b = match msg_type {
                    MsgType::GetDone => wire::MsgBody::GetDone(c),
                    MsgType::PutDone => wire::MsgBody::PutDone(c),
                    _ => wire::MsgBody::PutNak(c),
                };
                (b, None, 0)
            }
        };
        let m = wire::Msg {
            version: wire::VERSION,
            credits: h.credits,
            cksum: false,
            src_nid: h.src_nid,
            src_stamp: h.src_stamp,
            dst_nid: self.target,
            dst_stamp: h.dst_stamp,
            body,
        };
        let out = self.buf.as_mut_slice();
        let n = m.encode(out).ok_or(eproto())?;
        // An IMMEDIATE's payload was copied in already: grow ibm_nob over it.
        let nob = n + payload_len;
        out[8..12].copy_from_slice(&(nob as u32).to_le_bytes());
        if let Some(hdr) = raw_hdr {
            // LNet's own bytes, not our re-encoding of them.
            out[wire::MSG_HDR_LEN..wire::MSG_HDR_LEN + HDR_NID4_LEN].copy_from_slice(&hdr);
        }
        if h.cksum {
            let sum = wire::cksum(&out[..nob]);
            out[12..16].copy_from_slice(&sum.to_le_bytes());
        }
        self.buf.sync_for_device();
        Ok(nob)
    }

    /// Posts the packed message of `len` bytes with the work requests its
    /// body needs (a registration, RDMA writes).
    ///
    /// # Safety
    ///
    /// The tx must not be dropped or ended until each work request of the
    /// post completed or was flushed, or the QP was destroyed; after an
    /// error too if it [`Self::posts_chain`].
    pub(crate) unsafe fn post(&mut self, id: &mut CmId<Conn>, len: usize) -> Result {
        let Tx {
            body, buf, id: wr, ..
        } = self;
        let chain = match body {
            Body::PutAck { map, .. } | Body::GetReq { map, .. } => Chain::Reg(map),
            Body::RdmaDone {
                map: Some(map),
                segs,
                ..
            } => Chain::RegWrite(map, segs),
            _ => Chain::Send,
        };
        // SAFETY: the tx owns the map and the buffer, and the caller keeps
        // it as long as `post_chain` asks (# Safety).
        unsafe { id.post_chain(*wr, chain, buf, len) }
    }

    /// Ends a tx whose post failed with `err`, as a queued tx on a closed
    /// connection ([`health::post_failed`]).
    pub(crate) fn done_post_failed(self, err: i32) {
        let hs = health::post_failed(self.header_sent());
        self.done(err, hs);
    }

    /// Ends the tx: LNet gets its message back with `status` and
    /// `hstatus`; registrations are dropped first. Called with no lock
    /// held.
    pub(crate) fn done(self, status: i32, hstatus: Status) {
        let Tx { msg, body, .. } = self;
        let reply = match body {
            Body::GetReq { reply, map, .. } => {
                drop(map);
                Some(reply)
            }
            other => {
                drop(other);
                None
            }
        };
        // The GET's SEND event before its REPLY's, as Lustre orders them;
        // the GET alone carries the health status.
        msg.finalize(status, hstatus);
        if let Some(r) = reply {
            r.finalize(status, health::optimized_reply());
        }
    }

    /// The target's GET_DONE says it wrote `len` bytes of a GET_REQ's
    /// REPLY: false if that is more than the sink offered.
    pub(crate) fn set_reply_len(&self, ni: &IbNi, len: u32) -> bool {
        match &self.body {
            Body::GetReq { reply, .. } => reply.set_reply_len(ni.ni, len).is_ok(),
            _ => false,
        }
    }
}

/// Copies an IMMEDIATE's payload, LNet's fragments `src`, into `buf`
/// after the header's place.
fn copy_payload(buf: &mut DmaBuf, src: Frags) -> Result {
    let at = wire::MSG_HDR_LEN + HDR_NID4_LEN;
    if at.saturating_add(src.len() as usize) > buf.len() {
        return Err(EINVAL);
    }
    if src.copy_to(buf, at)? != src.len() {
        return Err(EINVAL);
    }
    Ok(())
}

/// A GET whose reply will not fit an IMMEDIATE goes as GET_REQ, its MD
/// registered for the target to write into (`kiblnd_send`); None when it
/// goes as an IMMEDIATE header (its sink fits one, or LNet has no REPLY
/// for it), or the error LNet finalizes it with.
fn get_req(ni: &IbNi, msg: &Msg, raw: &[u8; HDR_NID4_LEN]) -> Result<Option<Body>> {
    let Ok(hdr) = crate::lnet_core::hdr::Hdr::decode_nid4(raw) else {
        return Ok(None);
    };
    let LBody::Get { sink_length, .. } = hdr.msg else {
        return Ok(None);
    };
    if sink_length as usize <= wire::IMMEDIATE_MAX_PAYLOAD {
        return Ok(None);
    }
    let Some(sink) = msg.create_reply(ni.ni) else {
        return Ok(None);
    };
    // SAFETY: the MD's fragments, valid until the REPLY is finalized, which
    // the tx holding the map made of them does after dropping it.
    let dst = unsafe { Frags::new(sink.kiov.cast(), sink.niov, 0, sink.len) };
    let r = register(ni, &dst, dst.len(), true);
    drop(dst);
    match r {
        Ok(map) => {
            crate::GET_REQS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
            Ok(Some(Body::GetReq {
                hdr: *raw,
                reply: sink.reply,
                len: sink.len,
                map,
            }))
        }
        Err(e) => {
            crate::cerror!(
                "{}: can't register {} bytes for a GET: {:?}\n",
                ni.nid,
                sink.len,
                e
            );
            sink.reply.finalize(e.to_errno(), Status::LocalError);
            Err(e)
        }
    }
}

/// The writes of `nob` bytes of `src` into the peer's `rd`, registered,
/// and the completion that follows them: `(done, dst_cookie, max_frags)`,
/// its type, the cookie it echoes and the connection's `max_frags`.
fn rdma_body(
    ni: &IbNi,
    target: Nid,
    src: &Frags,
    nob: u32,
    rd: &RdmaDesc<'_>,
    (done, dst_cookie, max_frags): (MsgType, u64, u16),
) -> Result<Body> {
    // One write per fragment of the sink, at most the connection's
    // `max_frags` (`kiblnd_init_rdma`).
    let plan = match rd.writes(nob, usize::from(max_frags)) {
        Ok(p) if nob <= src.len() => p,
        Ok(_) => {
            crate::cneterr!(
                "{}: sink of {} bytes for a source of {}\n",
                target,
                nob,
                src.len()
            );
            return Err(crate::kapi::errno::EMSGSIZE());
        }
        Err(e) => {
            crate::cneterr!("{}: can't RDMA into its buffer: {}\n", target, e);
            return Err(crate::kapi::errno::EMSGSIZE());
        }
    };
    let mut segs = KVec::with_capacity(plan.clone().count(), GFP_KERNEL)?;
    for w in plan {
        segs.push(RdmaSeg::new(w.raddr, rd.key, w.loff, w.len), GFP_KERNEL)?;
    }
    let map = if nob == 0 {
        None
    } else {
        Some(register(ni, src, nob, false)?)
    };
    Ok(Body::RdmaDone {
        done,
        dst_cookie,
        len: nob,
        segs,
        map,
    })
}

/// What a connection puts in every message's header.
pub(crate) struct PackHead {
    pub(crate) credits: u8,
    pub(crate) src_nid: Nid,
    pub(crate) src_stamp: u64,
    pub(crate) dst_stamp: u64,
    pub(crate) cksum: bool,
}
