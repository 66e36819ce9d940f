//! Peer discovery (selection.md §8): the peer state bits Lustre keeps in
//! `lp_state`, which message waits for discovery, what the discovery
//! thread does next for a peer, and how a ping reply or a push changes a
//! peer's state.

use super::ping::{self, features};

/// `lp_state` bits (`LNET_PEER_*`), with Lustre's values: `lnetctl peer
/// show -v 3` prints the mask as is.
pub mod state {
    /// Multi-Rail aware.
    pub const MULTI_RAIL: u32 = 1 << 0;
    /// The peer has discovery disabled.
    pub const NO_DISCOVERY: u32 = 1 << 1;
    /// Routing enabled at the peer.
    pub const ROUTER_ENABLED: u32 = 1 << 2;
    /// Configured by `lnetctl peer add`.
    pub const CONFIGURED: u32 = 1 << 3;
    /// Discovery completed.
    pub const DISCOVERED: u32 = 1 << 4;
    /// Discovery must run again (it failed, or was off).
    pub const REDISCOVER: u32 = 1 << 5;
    /// Queued for, or in, discovery.
    pub const DISCOVERING: u32 = 1 << 6;
    /// A REPLY or a push brought data not merged yet.
    pub const DATA_PRESENT: u32 = 1 << 7;
    /// The NIDs are those the peer last told us.
    pub const NIDS_UPTODATE: u32 = 1 << 8;
    /// Waiting for the REPLY to a ping.
    pub const PING_SENT: u32 = 1 << 9;
    /// Waiting for the ACK of a push.
    pub const PUSH_SENT: u32 = 1 << 10;
    /// A ping failed; its error ends discovery.
    pub const PING_FAILED: u32 = 1 << 11;
    /// A push failed; its error ends discovery.
    pub const PUSH_FAILED: u32 = 1 << 12;
    /// Ping whatever the state says.
    pub const FORCE_PING: u32 = 1 << 13;
    /// Push whatever the state says.
    pub const FORCE_PUSH: u32 = 1 << 14;
    /// The peer is to be deleted (it turned discovery off).
    pub const MARK_DELETION: u32 = 1 << 18;
    /// The primary NID is locked (`LNetAddPeer` with `lock_prim_nid`).
    pub const LOCK_PRIMARY: u32 = 1 << 20;
}

/// What the discovery thread knows of one peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// `lp_state`.
    pub state: u32,
    /// The sequence number of our ping buffer the peer has seen
    /// (`lp_node_seqno`).
    pub node_seqno: u32,
    /// Our ping buffer's sequence number (`ln_ping_target_seqno`).
    pub target_seqno: u32,
    /// `lnet_peer_discovery_disabled`.
    pub discovery_disabled: bool,
}

/// The discovery thread's next action for a peer, in Lustre's order
/// (selection.md §8.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The peer turned discovery off: delete it (traffic recreates it).
    Delete,
    /// Merge the data a REPLY or push brought.
    Merge,
    /// A ping failed: end discovery with its error.
    PingFailed,
    /// A push failed: end discovery with its error.
    PushFailed,
    /// A ping or push is out: its event queues the peer again.
    Wait,
    /// Send a ping.
    Ping,
    /// Send a push.
    Push,
    /// Discovery is complete.
    Discovered,
}

/// Whether our latest ping buffer must be pushed to the peer
/// (`lnet_peer_needs_push`).
pub fn needs_push(v: &View) -> bool {
    let s = v.state;
    if s & state::MULTI_RAIL == 0 || s & state::PUSH_SENT != 0 {
        return false;
    }
    if s & state::FORCE_PUSH != 0 {
        return true;
    }
    if s & state::NO_DISCOVERY != 0 || v.discovery_disabled {
        return false;
    }
    v.node_seqno < v.target_seqno
}

/// Whether the peer must be pinged (`lnet_peer_needs_ping`).
pub fn needs_ping(s: u32) -> bool {
    s & state::FORCE_PING != 0 || s & state::NIDS_UPTODATE == 0
}

/// Whether messages may go to the peer without discovery first
/// (`lnet_peer_is_uptodate_locked`).
pub fn is_uptodate(v: &View) -> bool {
    let s = v.state;
    if s & (state::DISCOVERING | state::FORCE_PING | state::FORCE_PUSH | state::REDISCOVER) != 0 {
        return false;
    }
    if needs_push(v) {
        return false;
    }
    s & state::DISCOVERED != 0 && s & state::NIDS_UPTODATE != 0
}

/// The next step for a peer being discovered (`lnet_peer_discovery`).
pub fn next_step(v: &View) -> Step {
    let s = v.state;
    if s & state::MARK_DELETION != 0 {
        Step::Delete
    } else if s & state::DATA_PRESENT != 0 {
        Step::Merge
    } else if s & state::PING_FAILED != 0 {
        Step::PingFailed
    } else if s & state::PUSH_FAILED != 0 {
        Step::PushFailed
    } else if s & (state::PING_SENT | state::PUSH_SENT) != 0 {
        Step::Wait
    } else if needs_ping(s) {
        Step::Ping
    } else if needs_push(v) {
        Step::Push
    } else {
        Step::Discovered
    }
}

/// Whether a message may wait for its peer's discovery
/// (`lnet_msg_discovery`): not on the reserved portal (pings, pushes),
/// not an ACK or REPLY.
pub fn msg_waits(reserved_portal: bool, response: bool) -> bool {
    !reserved_portal && !response
}

/// Something a ping reply or push says that contradicts how the peer was
/// configured; logged as Lustre does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// The peer says Multi-Rail; `peer add` said not.
    SaysMultiRail,
    /// `peer add` said Multi-Rail; the peer says not.
    SaysNotMultiRail,
    /// A peer learnt as Multi-Rail says it is not any more.
    MultiRailVanished,
}

/// What a ping reply's feature bits do to a peer's state
/// (`lnet_discovery_event_reply`): NO_DISCOVERY and MULTI_RAIL follow the
/// peer's word, except where `peer add` or our own discovery setting
/// decides. A peer learnt by discovery that turns discovery off is marked
/// for deletion.
pub fn apply_reply_features(
    s: u32,
    feats: u32,
    discovery_disabled: bool,
) -> (u32, Option<Conflict>) {
    let mut s = s;
    if feats & features::DISCOVERY == 0 || discovery_disabled {
        if s & (state::CONFIGURED | state::NO_DISCOVERY) == 0
            && s & (state::DISCOVERED | state::MULTI_RAIL) != 0
        {
            s |= state::MARK_DELETION;
        }
        s |= state::NO_DISCOVERY;
    } else {
        s &= !state::NO_DISCOVERY;
    }
    let mut conflict = None;
    if feats & features::MULTI_RAIL != 0 {
        if s & state::MULTI_RAIL == 0 {
            if s & state::CONFIGURED != 0 {
                conflict = Some(Conflict::SaysMultiRail);
            } else if !discovery_disabled && s & state::NO_DISCOVERY == 0 {
                s |= state::MULTI_RAIL;
            }
        }
    } else if s & state::MULTI_RAIL != 0 {
        if s & state::CONFIGURED != 0 {
            conflict = Some(Conflict::SaysNotMultiRail);
        } else {
            conflict = Some(Conflict::MultiRailVanished);
            s &= !state::MULTI_RAIL;
        }
    }
    (s, conflict)
}

/// What a push does to its sender's peer (`lnet_peer_push_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushOutcome {
    /// Keep the data and queue the peer for merging; the new state.
    Store(u32),
    /// The push cannot be used: ping the peer instead; the new state.
    Ping(u32),
    /// Dropped: a peer that is not Multi-Rail cannot push.
    NotMultiRail,
}

/// Decides on a push whose buffer parsed (`valid`) and arrived whole
/// (`complete`), with feature bits `feats`.
pub fn apply_push(
    s: u32,
    valid: bool,
    complete: bool,
    feats: u32,
    discovery_disabled: bool,
) -> PushOutcome {
    let mut s = s;
    if !valid || !complete {
        return PushOutcome::Ping((s & !state::NIDS_UPTODATE) | state::FORCE_PING);
    }
    if feats & features::MULTI_RAIL == 0 {
        return PushOutcome::NotMultiRail;
    }
    if feats & features::DISCOVERY == 0 {
        if s & (state::NO_DISCOVERY | state::DISCOVERING) == 0 && s & state::DISCOVERED != 0 {
            s |= state::MARK_DELETION;
        }
        s |= state::NO_DISCOVERY;
    } else {
        s &= !state::NO_DISCOVERY;
    }
    if s & (state::MULTI_RAIL | state::CONFIGURED | state::NO_DISCOVERY) == 0 && !discovery_disabled
    {
        s |= state::MULTI_RAIL;
    }
    PushOutcome::Store(s | state::DATA_PRESENT)
}

/// Whether a push's buffer (sequence `push_seq`) replaces one a REPLY or
/// an earlier push left unmerged (sequence `pending_seq`): only a newer one
/// does, as in Lustre's ping/push race; the older one is dropped. With
/// nothing pending, a push is taken whatever its sequence number (Lustre
/// "always assumes new data": a rebooted peer starts its count again).
pub fn push_replaces(pending_seq: Option<u32>, push_seq: u32) -> bool {
    pending_seq.map_or(true, |p| push_seq > p)
}

/// How a peer NI's status in a merged buffer changes its health
/// (`handle_disc_lpni_health`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusHealth {
    /// Nothing to do.
    Unchanged,
    /// UP to DOWN: a remote failure on the peer NI.
    RemoteFailure,
    /// First seen UP and never heard from: full health.
    Full,
}

/// `old` and `new` are status words (`ping::STATUS_UP`/`STATUS_DOWN`);
/// `heard_from` whether a message ever came from the NID.
pub fn status_health(old: u32, new: u32, heard_from: bool) -> StatusHealth {
    if old != new {
        if new == ping::STATUS_DOWN {
            StatusHealth::RemoteFailure
        } else {
            StatusHealth::Unchanged
        }
    } else if new == ping::STATUS_UP && !heard_from {
        StatusHealth::Full
    } else {
        StatusHealth::Unchanged
    }
}

/// The status a merged buffer gives one of the peer's NIDs
/// (`lnet_peer_merge_data`): `listed` is its entry's status word, `None`
/// when the buffer does not list it. A NID the buffer leaves out is kept as
/// down (a configured peer's NID, or the primary, that the merge may not
/// delete); with discovery disabled for the peer, the merge stops before
/// those and the NID keeps the status it had (`None`).
pub fn merged_status(listed: Option<u32>, discovery_disabled: bool) -> Option<u32> {
    match listed {
        Some(ping::STATUS_UP) => Some(ping::STATUS_UP),
        Some(_) => Some(ping::STATUS_DOWN),
        None if discovery_disabled => None,
        None => Some(ping::STATUS_DOWN),
    }
}

/// Bytes of a push buffer (`ln_push_target_nbytes`): `nbytes` is the
/// current size (0 before any), `rlength` a push's whole length when one
/// arrived truncated (0 otherwise). It starts at `ping::MIN_SIZE` and
/// grows to a truncated push's length, so that the next push from that
/// node fits, up to `max`, the largest buffer `lnet_interfaces_max` NIs
/// make.
pub fn push_target_bytes(nbytes: usize, rlength: usize, max: usize) -> usize {
    nbytes
        .max(rlength)
        .clamp(ping::MIN_SIZE, max.max(ping::MIN_SIZE))
}

/// Bytes to receive a ping reply into (`max(lp_data_bytes,
/// LNET_PING_INFO_MIN_SIZE)`), at most `LNET_PING_BUFFER_MAX`.
pub fn reply_bytes(data_bytes: usize) -> usize {
    data_bytes.clamp(ping::MIN_SIZE, ping::PING_BUFFER_MAX)
}

#[cfg(test)]
mod tests {
    use super::state::*;
    use super::*;

    fn view(state: u32) -> View {
        View {
            state,
            node_seqno: 1,
            target_seqno: 1,
            discovery_disabled: false,
        }
    }

    #[test]
    fn a_new_peer_is_pinged_then_pushed_then_discovered() {
        let mut v = view(MULTI_RAIL | DISCOVERING);
        v.node_seqno = 0;
        assert!(!is_uptodate(&v));
        assert_eq!(next_step(&v), Step::Ping);
        v.state |= NIDS_UPTODATE;
        assert_eq!(next_step(&v), Step::Push);
        v.state |= PUSH_SENT;
        // Not done until the ACK clears PUSH_SENT.
        assert_eq!(next_step(&v), Step::Wait);
        v.state &= !PUSH_SENT;
        v.node_seqno = 1;
        assert_eq!(next_step(&v), Step::Discovered);
        v.state = (v.state & !DISCOVERING) | DISCOVERED;
        assert!(is_uptodate(&v));
    }

    #[test]
    fn steps_come_in_lustres_order() {
        let all = MARK_DELETION | DATA_PRESENT | PING_FAILED | PUSH_FAILED | FORCE_PING;
        assert_eq!(next_step(&view(all)), Step::Delete);
        assert_eq!(next_step(&view(all & !MARK_DELETION)), Step::Merge);
        assert_eq!(
            next_step(&view(PING_FAILED | PUSH_FAILED | NIDS_UPTODATE)),
            Step::PingFailed
        );
        assert_eq!(
            next_step(&view(PUSH_FAILED | NIDS_UPTODATE)),
            Step::PushFailed
        );
        assert_eq!(next_step(&view(NIDS_UPTODATE | FORCE_PING)), Step::Ping);
    }

    #[test]
    fn a_non_mr_peer_is_never_pushed() {
        let mut v = view(NIDS_UPTODATE | DISCOVERED);
        v.node_seqno = 0;
        assert!(!needs_push(&v));
        v.state |= FORCE_PUSH;
        assert!(!needs_push(&v));
        assert!(!is_uptodate(&v), "FORCE_PUSH still holds messages");
    }

    #[test]
    fn a_newer_buffer_of_ours_makes_mr_peers_stale() {
        let mut v = view(MULTI_RAIL | NIDS_UPTODATE | DISCOVERED);
        assert!(is_uptodate(&v));
        v.target_seqno = 2;
        assert!(needs_push(&v));
        assert!(!is_uptodate(&v));
        // Not while discovery is off here or at the peer.
        v.discovery_disabled = true;
        assert!(is_uptodate(&v));
        v.discovery_disabled = false;
        v.state |= NO_DISCOVERY;
        assert!(is_uptodate(&v));
        // FORCE_PUSH beats both.
        v.state |= FORCE_PUSH;
        assert!(needs_push(&v));
    }

    #[test]
    fn a_failed_discovery_is_redone() {
        assert!(!is_uptodate(&view(NIDS_UPTODATE | DISCOVERED | REDISCOVER)));
    }

    #[test]
    fn only_requests_off_the_reserved_portal_wait() {
        assert!(msg_waits(false, false));
        assert!(!msg_waits(true, false));
        assert!(!msg_waits(false, true));
    }

    #[test]
    fn reply_features() {
        let both = features::DISCOVERY | features::MULTI_RAIL | features::NI_STATUS;
        assert_eq!(apply_reply_features(0, both, false), (MULTI_RAIL, None));
        // Discovery off here: learnt as not Multi-Rail.
        assert_eq!(apply_reply_features(0, both, true), (NO_DISCOVERY, None));
        // Off at the peer, first time: not Multi-Rail, nothing to delete.
        let (s, c) = apply_reply_features(0, features::MULTI_RAIL, false);
        assert_eq!((s, c), (NO_DISCOVERY, None));
        // Off at a peer learnt as Multi-Rail: deleted.
        let (s, c) = apply_reply_features(MULTI_RAIL | DISCOVERED, features::MULTI_RAIL, false);
        assert_eq!(
            s & (MARK_DELETION | NO_DISCOVERY),
            MARK_DELETION | NO_DISCOVERY
        );
        assert_eq!(c, None);
        // A configured peer is never deleted, and keeps what DLC said.
        let (s, c) = apply_reply_features(CONFIGURED, both, false);
        assert_eq!((s, c), (CONFIGURED, Some(Conflict::SaysMultiRail)));
        let (s, c) = apply_reply_features(CONFIGURED | MULTI_RAIL, features::NI_STATUS, false);
        assert_eq!(s & (MULTI_RAIL | MARK_DELETION), MULTI_RAIL);
        assert_eq!(c, Some(Conflict::SaysNotMultiRail));
        // A learnt one loses it.
        let (s, c) = apply_reply_features(MULTI_RAIL, features::DISCOVERY, false);
        assert_eq!(s & MULTI_RAIL, 0);
        assert_eq!(c, Some(Conflict::MultiRailVanished));
    }

    #[test]
    fn pushes() {
        let both = features::DISCOVERY | features::MULTI_RAIL;
        assert_eq!(
            apply_push(0, true, true, both, false),
            PushOutcome::Store(MULTI_RAIL | DATA_PRESENT)
        );
        assert_eq!(
            apply_push(NIDS_UPTODATE, false, true, both, false),
            PushOutcome::Ping(FORCE_PING)
        );
        assert_eq!(
            apply_push(NIDS_UPTODATE, true, false, both, false),
            PushOutcome::Ping(FORCE_PING)
        );
        assert_eq!(
            apply_push(0, true, true, features::DISCOVERY, false),
            PushOutcome::NotMultiRail
        );
        // Discovery turned off at a discovered peer: deleted.
        assert_eq!(
            apply_push(
                DISCOVERED | MULTI_RAIL,
                true,
                true,
                features::MULTI_RAIL,
                false
            ),
            PushOutcome::Store(
                DISCOVERED | MULTI_RAIL | NO_DISCOVERY | MARK_DELETION | DATA_PRESENT
            )
        );
        // A peer configured non-MR stays so.
        assert_eq!(
            apply_push(CONFIGURED, true, true, both, false),
            PushOutcome::Store(CONFIGURED | DATA_PRESENT)
        );
        // Discovery off here: not made Multi-Rail.
        assert_eq!(
            apply_push(0, true, true, both, true),
            PushOutcome::Store(DATA_PRESENT)
        );
    }

    #[test]
    fn reported_status_and_health() {
        use super::super::ping::{STATUS_DOWN, STATUS_UP};
        assert_eq!(
            status_health(STATUS_UP, STATUS_DOWN, true),
            StatusHealth::RemoteFailure
        );
        assert_eq!(
            status_health(STATUS_DOWN, STATUS_UP, true),
            StatusHealth::Unchanged
        );
        assert_eq!(
            status_health(STATUS_UP, STATUS_UP, false),
            StatusHealth::Full
        );
        assert_eq!(
            status_health(STATUS_UP, STATUS_UP, true),
            StatusHealth::Unchanged
        );
        assert_eq!(
            status_health(STATUS_DOWN, STATUS_DOWN, false),
            StatusHealth::Unchanged
        );
    }

    #[test]
    fn reply_buffer_sizes() {
        assert_eq!(reply_bytes(0), ping::MIN_SIZE);
        assert_eq!(reply_bytes(1000), 1000);
        assert_eq!(reply_bytes(1 << 20), ping::PING_BUFFER_MAX);
    }

    #[test]
    fn a_push_replaces_pending_data_only_when_newer() {
        assert!(push_replaces(None, 0));
        assert!(push_replaces(None, 7));
        assert!(push_replaces(Some(4), 5));
        assert!(!push_replaces(Some(5), 5));
        assert!(!push_replaces(Some(9), 5));
    }

    #[test]
    fn merged_status_leaves_unlisted_nids_alone_with_discovery_disabled() {
        use super::ping::{STATUS_DOWN, STATUS_UP};
        assert_eq!(merged_status(Some(STATUS_UP), false), Some(STATUS_UP));
        assert_eq!(merged_status(Some(STATUS_UP), true), Some(STATUS_UP));
        assert_eq!(merged_status(Some(STATUS_DOWN), true), Some(STATUS_DOWN));
        // Any status word but UP reads as down, as `handle_disc_lpni_health`.
        assert_eq!(merged_status(Some(0), false), Some(STATUS_DOWN));
        assert_eq!(merged_status(None, false), Some(STATUS_DOWN));
        assert_eq!(merged_status(None, true), None);
    }

    #[test]
    fn push_target_starts_small_and_grows_to_a_truncated_push() {
        let max = 16_456;
        assert_eq!(push_target_bytes(0, 0, max), ping::MIN_SIZE);
        assert_eq!(push_target_bytes(ping::MIN_SIZE, 0, max), ping::MIN_SIZE);
        assert_eq!(push_target_bytes(ping::MIN_SIZE, 1_000, max), 1_000);
        // Never shrinks, never past the largest buffer.
        assert_eq!(push_target_bytes(1_000, 400, max), 1_000);
        assert_eq!(push_target_bytes(1_000, 1 << 30, max), max);
        assert_eq!(push_target_bytes(0, 0, 16), ping::MIN_SIZE);
    }
}
