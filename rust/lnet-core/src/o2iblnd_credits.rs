//! An o2iblnd connection's credits (wire.md §6.4, Lustre's
//! `kiblnd_post_tx_locked`, `kiblnd_need_noop`, `kiblnd_handle_rx`): when
//! a message may be posted, what it returns to the peer, when a NOOP must
//! carry credits back, and the peer's returns checked against the queue
//! depth. V2 (out-of-band NOOPs) only: lnet-rs speaks V2 on every
//! connection it makes and accepts.

use super::o2iblnd::MsgType;

/// Receive buffers a V2 connection posts for `queue_depth`: one set for
/// credited messages, one for the replies reserved credits cover, and two
/// for NOOPs (`IBLND_RX_MSGS`).
pub fn rx_msgs(queue_depth: u16) -> u32 {
    u32::from(queue_depth) * 2 + 2
}

/// Whether a message of type `t` takes a send credit (V2).
pub fn takes_credit(t: MsgType) -> bool {
    matches!(t, MsgType::Immediate | MsgType::PutReq | MsgType::GetReq)
}

/// Whether a message of type `t` waits for a reserved credit before it
/// may take a send credit (`ibc_tx_queue_rsrvd`): a PUT_REQ or GET_REQ,
/// whose answer (PUT_ACK, PUT_NAK, GET_DONE) the peer sends without a
/// credit, into one of the receive buffers reserved for answers. At most
/// `queue_depth` of them wait for an answer, so those buffers suffice.
pub fn needs_reserved(t: MsgType) -> bool {
    matches!(t, MsgType::PutReq | MsgType::GetReq)
}

/// What a received message gives back once its buffer is reposted
/// (`kiblnd_handle_rx`, `kiblnd_recv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxCredit {
    /// A credit owed to the peer (`IBLND_POSTRX_PEER_CREDIT`).
    Peer,
    /// One of our reserved credits back (`IBLND_POSTRX_RSRVD_CREDIT`): the
    /// answer to a PUT_REQ or GET_REQ of ours arrived.
    Reserved,
    /// Nothing (`IBLND_POSTRX_NO_CREDIT`): a NOOP, or a PUT_REQ we
    /// answered PUT_ACK, whose buffer stays reserved for the PUT_DONE the
    /// peer will send without a credit; that PUT_DONE returns the credit.
    No,
}

/// The credit a received message of type `t` gives back; a PUT_REQ's is
/// [`RxCredit::No`] instead when it is answered by PUT_ACK.
pub fn rx_credit(t: MsgType) -> RxCredit {
    match t {
        MsgType::Immediate | MsgType::PutReq | MsgType::GetReq | MsgType::PutDone => RxCredit::Peer,
        MsgType::PutNak | MsgType::PutAck | MsgType::GetDone => RxCredit::Reserved,
        _ => RxCredit::No,
    }
}

/// What to do with the message at the head of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Post {
    /// Post it now, returning `credits` to the peer in `ibm_credits`.
    Now {
        /// Credits the message carries back.
        credits: u8,
    },
    /// Leave it queued: no send credit, or `concurrent_sends` posted.
    Wait,
    /// A NOOP that is no longer needed: drop it.
    Drop,
}

/// The peer returned more credits than the queue depth allows (the
/// connection is closed with `-EPROTO`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditOverflow {
    /// Credits held before the return.
    pub credits: u16,
    /// Credits returned.
    pub returned: u8,
    /// The negotiated depth.
    pub queue_depth: u16,
}

/// One connection's credit state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credits {
    /// Negotiated depth (credits each side starts with).
    pub queue_depth: u16,
    /// Send credits left.
    pub credits: u16,
    /// Credits owed to the peer, returned with the next send.
    pub outstanding: u16,
    /// Sends posted and not completed.
    pub posted: u16,
    /// NOOPs among them.
    pub noops_posted: u16,
    /// Most sends posted at once.
    pub concurrent_sends: u16,
    /// Owed credits that make a NOOP worth sending.
    pub highwater: u16,
    /// PUT_REQs and GET_REQs that may still be sent before answers come
    /// (`ibc_reserved_credits`).
    pub reserved: u16,
}

impl Credits {
    /// A new connection's credits: `queue_depth` each way, the high-water
    /// mark scaled to the negotiated depth as Lustre's
    /// `kiblnd_credits_highwater` does (`peer_credits_hiw` of
    /// `peer_credits`).
    pub fn new(
        queue_depth: u16,
        concurrent_sends: u16,
        peer_credits: u16,
        peer_credits_hiw: u16,
    ) -> Credits {
        let hiw =
            u32::from(queue_depth) * u32::from(peer_credits_hiw) / u32::from(peer_credits.max(1));
        Credits {
            queue_depth,
            credits: queue_depth,
            outstanding: 0,
            posted: 0,
            noops_posted: 0,
            concurrent_sends: concurrent_sends.max(1),
            highwater: u16::try_from(hiw).unwrap_or(u16::MAX),
            reserved: queue_depth,
        }
    }

    /// Whether a NOOP should be sent (`kiblnd_need_noop`, V2): enough
    /// credits owed, or `keepalive_due`, and no queued credit-free message
    /// that could carry them (`nocred_queued`), and no credited message
    /// that could (`credited_queued` with a credit to send it).
    pub fn need_noop(
        &self,
        keepalive_due: bool,
        nocred_queued: bool,
        credited_queued: bool,
    ) -> bool {
        if self.outstanding < self.highwater && !keepalive_due {
            return false;
        }
        if nocred_queued {
            return false;
        }
        !credited_queued || self.credits == 0
    }

    /// [`Credits::need_noop`] for a NOOP at the head of the credit-free
    /// queue, which holds `nocred_queued` messages with it: asked as if it
    /// were already off the queue, as `kiblnd_post_tx_locked` takes it off
    /// before it asks. Counted, the NOOP would be the credit-free message
    /// that makes itself redundant, and no NOOP would ever be sent.
    pub fn queued_noop_needed(
        &self,
        keepalive_due: bool,
        nocred_queued: usize,
        credited_queued: bool,
    ) -> bool {
        self.need_noop(keepalive_due, nocred_queued > 1, credited_queued)
    }

    /// Decides for the message `t` at the head of its queue
    /// (`kiblnd_post_tx_locked`); on [`Post::Now`] the state counts it as
    /// posted. `need_noop` is [`Credits::need_noop`] as it stands.
    pub fn post(&mut self, t: MsgType, need_noop: bool) -> Post {
        if self.posted >= self.concurrent_sends {
            return Post::Wait;
        }
        let credit = takes_credit(t);
        if credit && self.credits == 0 {
            return Post::Wait;
        }
        if t == MsgType::Noop && (!need_noop || self.noops_posted >= 2) {
            return Post::Drop;
        }
        if credit {
            self.credits -= 1;
        }
        let credits = u8::try_from(self.outstanding).unwrap_or(u8::MAX);
        self.outstanding -= u16::from(credits);
        self.posted = self.posted.saturating_add(1);
        if t == MsgType::Noop {
            self.noops_posted = self.noops_posted.saturating_add(1);
        }
        Post::Now { credits }
    }

    /// A posted send completed.
    pub fn send_done(&mut self, t: MsgType) {
        self.posted = self.posted.saturating_sub(1);
        if t == MsgType::Noop {
            self.noops_posted = self.noops_posted.saturating_sub(1);
        }
    }

    /// A posting failed after [`Credits::post`] counted it: the credit and
    /// the owed credits come back.
    pub fn unpost(&mut self, t: MsgType, credits: u8) {
        self.send_done(t);
        if takes_credit(t) {
            self.credits = self.credits.saturating_add(1).min(self.queue_depth);
        }
        self.outstanding = self.outstanding.saturating_add(credits.into());
    }

    /// The peer returned `n` credits in a message.
    pub fn returned(&mut self, n: u8) -> Result<(), CreditOverflow> {
        let total = u32::from(self.credits) + u32::from(n);
        if total > u32::from(self.queue_depth) {
            return Err(CreditOverflow {
                credits: self.credits,
                returned: n,
                queue_depth: self.queue_depth,
            });
        }
        self.credits = total as u16;
        Ok(())
    }

    /// Takes a reserved credit for a PUT_REQ or GET_REQ about to queue for
    /// a send credit; false if none is left.
    pub fn take_reserved(&mut self) -> bool {
        if self.reserved == 0 {
            return false;
        }
        self.reserved -= 1;
        true
    }

    /// A received message was consumed and its buffer reposted, giving
    /// back `c`.
    pub fn rx_done(&mut self, c: RxCredit) {
        match c {
            RxCredit::Peer => {
                self.outstanding = self.outstanding.saturating_add(1).min(self.queue_depth)
            }
            RxCredit::Reserved => {
                self.reserved = self.reserved.saturating_add(1).min(self.queue_depth)
            }
            RxCredit::No => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rx_buffers_cover_credited_reserved_and_noops() {
        assert_eq!(rx_msgs(8), 18);
        assert_eq!(rx_msgs(255), 512);
    }

    #[test]
    fn highwater_scales_with_negotiated_depth() {
        // peer_credits 8, hiw 7 (Lustre's defaults): 7 at depth 8.
        assert_eq!(Credits::new(8, 8, 8, 7).highwater, 7);
        // Depth negotiated down to 4 of 32 with hiw 31: 3.
        assert_eq!(Credits::new(4, 4, 32, 31).highwater, 3);
    }

    #[test]
    fn immediate_takes_a_credit_and_returns_the_owed_ones() {
        let mut c = Credits::new(2, 8, 8, 7);
        c.rx_done(rx_credit(MsgType::Immediate));
        c.rx_done(rx_credit(MsgType::Noop));
        assert_eq!(c.outstanding, 1);
        assert_eq!(c.post(MsgType::Immediate, false), Post::Now { credits: 1 });
        assert_eq!((c.credits, c.outstanding, c.posted), (1, 0, 1));
        assert_eq!(c.post(MsgType::Immediate, false), Post::Now { credits: 0 });
        assert_eq!(c.post(MsgType::Immediate, false), Post::Wait);
        // Credit-free messages go on without credits.
        assert_eq!(c.post(MsgType::PutDone, false), Post::Now { credits: 0 });
        c.returned(2).unwrap();
        assert_eq!(c.credits, 2);
    }

    #[test]
    fn concurrent_sends_bound_postings() {
        let mut c = Credits::new(8, 1, 8, 7);
        assert!(matches!(
            c.post(MsgType::Immediate, false),
            Post::Now { .. }
        ));
        assert_eq!(c.post(MsgType::PutAck, false), Post::Wait);
        c.send_done(MsgType::Immediate);
        assert!(matches!(c.post(MsgType::PutAck, false), Post::Now { .. }));
    }

    #[test]
    fn noops_when_owed_enough_or_keepalive_and_nothing_to_carry_them() {
        let mut c = Credits::new(8, 8, 8, 7);
        assert!(!c.need_noop(false, false, false));
        assert!(c.need_noop(true, false, false));
        c.outstanding = 7;
        assert!(c.need_noop(false, false, false));
        // A queued credit-free message or a sendable credited one carries
        // them instead.
        assert!(!c.need_noop(false, true, false));
        assert!(!c.need_noop(false, false, true));
        c.credits = 0;
        assert!(c.need_noop(false, false, true));
        // A redundant NOOP is dropped, as is a third one in flight.
        assert_eq!(c.post(MsgType::Noop, false), Post::Drop);
        assert_eq!(c.post(MsgType::Noop, true), Post::Now { credits: 7 });
        c.outstanding = 7;
        assert!(matches!(c.post(MsgType::Noop, true), Post::Now { .. }));
        assert_eq!(c.post(MsgType::Noop, true), Post::Drop);
    }

    #[test]
    fn a_noop_queued_for_owed_credits_is_posted() {
        // The receiving end of a one-way stream: 7 credits owed, nothing
        // of its own to send. The NOOP queued for them is alone on the
        // credit-free queue and must go, or the sender stalls.
        let mut c = Credits::new(8, 8, 8, 7);
        c.outstanding = 7;
        assert!(c.need_noop(false, false, false));
        let need = c.queued_noop_needed(false, 1, false);
        assert_eq!(c.post(MsgType::Noop, need), Post::Now { credits: 7 });
        // Another credit-free message behind it would carry them: but the
        // NOOP is at the head, so it goes, and nothing is owed after it.
        c.outstanding = 7;
        assert!(!c.queued_noop_needed(false, 2, false));
        // Keepalive alone makes a queued NOOP needed too.
        c.outstanding = 0;
        assert!(c.queued_noop_needed(true, 1, false));
        assert!(!c.queued_noop_needed(false, 1, false));
    }

    #[test]
    fn returns_beyond_the_depth_are_a_protocol_error() {
        let mut c = Credits::new(8, 8, 8, 7);
        assert_eq!(
            c.returned(1),
            Err(CreditOverflow {
                credits: 8,
                returned: 1,
                queue_depth: 8
            })
        );
        c.post(MsgType::Immediate, false);
        assert!(c.returned(1).is_ok());
    }

    #[test]
    fn a_failed_post_gives_everything_back() {
        let mut c = Credits::new(8, 8, 8, 7);
        c.outstanding = 3;
        let Post::Now { credits } = c.post(MsgType::GetReq, false) else {
            panic!("not posted");
        };
        c.unpost(MsgType::GetReq, credits);
        assert_eq!(c, Credits::new(8, 8, 8, 7).with_outstanding(3));
    }

    impl Credits {
        fn with_outstanding(mut self, n: u16) -> Credits {
            self.outstanding = n;
            self
        }
    }

    #[test]
    fn put_req_credit_comes_back_with_put_done_and_answers_refill_reserved() {
        let mut c = Credits::new(2, 8, 8, 7);
        // A PUT_REQ we answer PUT_ACK keeps its buffer for the PUT_DONE.
        c.rx_done(RxCredit::No);
        assert_eq!(c.outstanding, 0);
        c.rx_done(rx_credit(MsgType::PutDone));
        assert_eq!(c.outstanding, 1);
        // Answered by PUT_NAK, it owes the credit at once.
        c.rx_done(rx_credit(MsgType::PutReq));
        assert_eq!(c.outstanding, 2);
        // Two requests may wait for answers at depth 2, not three.
        assert!(needs_reserved(MsgType::PutReq) && needs_reserved(MsgType::GetReq));
        assert!(!needs_reserved(MsgType::Immediate));
        assert!(c.take_reserved() && c.take_reserved());
        assert!(!c.take_reserved());
        c.rx_done(rx_credit(MsgType::GetDone));
        assert!(c.take_reserved());
        c.rx_done(rx_credit(MsgType::PutAck));
        c.rx_done(rx_credit(MsgType::PutNak));
        c.rx_done(rx_credit(MsgType::PutNak));
        assert_eq!(c.reserved, 2);
    }
}
