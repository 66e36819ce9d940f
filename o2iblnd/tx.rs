// SPDX-License-Identifier: GPL-2.0

//! A tx: one o2iblnd message on its way out (an LNet message as an
//! IMMEDIATE, or a NOOP), its 4 KiB send buffer, and the one place where a
//! tx ends ([`Tx::done`]).

use crate::kapi::bindings::lnet_tx_desc;
use crate::kapi::kiov::{self, BioVec};
use crate::kapi::kthread;
use crate::kapi::rdma::DmaBuf;
use crate::lnd::Msg;
use crate::lnet_core::hdr::HDR_NID4_LEN;
use crate::lnet_core::health::Status;
use crate::lnet_core::nid::Nid;
use crate::lnet_core::o2iblnd::{self as wire, MsgType};
use crate::ni::IbNi;
use kernel::prelude::*;

/// What the tx carries.
pub(crate) enum Body {
    /// An LNet header (NID4, little-endian) and its payload.
    Immediate {
        hdr: [u8; HDR_NID4_LEN],
        payload_len: usize,
    },
    /// Credits and keepalive.
    Noop,
}

pub(crate) struct Tx {
    /// The LNet message (null for a NOOP).
    msg: Msg,
    pub(crate) body: Body,
    /// The peer NI it goes to.
    pub(crate) target: Nid,
    /// The message is built here when it is posted; an IMMEDIATE's
    /// payload is copied in at once, after the header's place.
    pub(crate) buf: DmaBuf,
    /// When it must have ended (ms), set when queued on a connection.
    pub(crate) deadline_ms: u64,
    /// Names the posted send in its completion.
    pub(crate) id: u64,
}

impl Tx {
    /// A tx for an LNet message, or the error LNet finalizes it with.
    pub(crate) fn from_lnet(
        ni: &IbNi,
        msg: Msg,
        d: &lnet_tx_desc,
    ) -> core::result::Result<Tx, (Error, Status)> {
        let target = crate::kapi::lnet_abi::nid_from_c(&d.target.nid)
            .map_err(|e| (e, Status::LocalError))?;
        if d.hdr_len as usize != HDR_NID4_LEN {
            // o2iblnd carries NID4 headers only (wire.md §7).
            return Err((crate::kapi::errno::EPROTO(), Status::LocalError));
        }
        let len = d.len as usize;
        if len > wire::IMMEDIATE_MAX_PAYLOAD {
            // RDMA bulk (PUT_REQ/GET_REQ) is not built yet.
            pr_warn!(
                "{}: {} byte payload for {} needs RDMA, which ko2iblnd does not do yet\n",
                ni.nid,
                len,
                target
            );
            return Err((crate::kapi::errno::EMSGSIZE(), Status::LocalError));
        }
        let mut hdr = [0u8; HDR_NID4_LEN];
        hdr.copy_from_slice(&d.hdr[..HDR_NID4_LEN]);
        let mut buf =
            DmaBuf::new(&ni.pd, wire::MSG_SIZE, true).map_err(|e| (e, Status::LocalError))?;
        if len > 0 {
            let at = wire::MSG_HDR_LEN + HDR_NID4_LEN;
            let dst = &mut buf.as_mut_slice()[at..at + len];
            let mut dv = KVec::<BioVec>::new();
            // SAFETY: a kmalloc'ed buffer we own, and LNet's fragments,
            // valid until the message is finalized.
            let copied = unsafe {
                kiov::push_kvaddr_range(&mut dv, dst.as_mut_ptr() as usize, len)
                    .map_err(|e| (e, Status::LocalError))?;
                let src = kiov::slice(d.kiov.cast_const().cast(), d.niov);
                kiov::copy(&dv, 0, src, d.offset, d.len)
            };
            if copied != d.len {
                return Err((EINVAL, Status::LocalError));
            }
        }
        Ok(Tx {
            msg,
            body: Body::Immediate {
                hdr,
                payload_len: len,
            },
            target,
            buf,
            deadline_ms: 0,
            id: 0,
        })
    }

    /// A NOOP to `target`.
    pub(crate) fn noop(ni: &IbNi, target: Nid) -> Result<Tx> {
        Ok(Tx {
            msg: Msg(core::ptr::null_mut()),
            body: Body::Noop,
            target,
            buf: DmaBuf::new(&ni.pd, wire::MSG_HDR_LEN, true)?,
            deadline_ms: kthread::now_ms(),
            id: 0,
        })
    }

    pub(crate) fn msg_type(&self) -> MsgType {
        match self.body {
            Body::Immediate { .. } => MsgType::Immediate,
            Body::Noop => MsgType::Noop,
        }
    }

    /// Builds the message in the send buffer for a connection: returns its
    /// length.
    pub(crate) fn pack(&mut self, h: &PackHead) -> Result<usize> {
        let (hdr, payload_len) = match &self.body {
            Body::Immediate { hdr, payload_len } => (Some(*hdr), *payload_len),
            Body::Noop => (None, 0),
        };
        let body = match hdr {
            Some(hdr) => wire::MsgBody::Immediate {
                hdr: crate::lnet_core::hdr::Hdr::decode_nid4(&hdr)
                    .map_err(|_| crate::kapi::errno::EPROTO())?,
                payload: &[],
            },
            None => wire::MsgBody::Noop,
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
        let n = m.encode(out).ok_or(crate::kapi::errno::EPROTO())?;
        // The payload was copied in already: grow ibm_nob over it.
        let nob = n + payload_len;
        if let Some(hdr) = hdr {
            // LNet's own bytes, not our re-encoding of them.
            out[wire::MSG_HDR_LEN..wire::MSG_HDR_LEN + HDR_NID4_LEN].copy_from_slice(&hdr);
        }
        out[8..12].copy_from_slice(&(nob as u32).to_le_bytes());
        if h.cksum {
            let sum = wire::cksum(&out[..nob]);
            out[12..16].copy_from_slice(&sum.to_le_bytes());
        }
        self.buf.sync_for_device();
        Ok(nob)
    }

    /// Ends the tx: LNet gets its message back with `status` and
    /// `hstatus`. Called with no lock held.
    pub(crate) fn done(self, status: i32, hstatus: Status) {
        let Tx { msg, .. } = self;
        msg.finalize(status, hstatus);
    }
}

/// What a connection puts in every message's header.
pub(crate) struct PackHead {
    pub(crate) credits: u8,
    pub(crate) src_nid: Nid,
    pub(crate) src_stamp: u64,
    pub(crate) dst_stamp: u64,
    pub(crate) cksum: bool,
}
