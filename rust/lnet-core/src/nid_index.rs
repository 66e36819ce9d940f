//! The peer table's index: NIDs sorted, each with where its peer NI sat
//! (the peer's place in the table and the NI's place in the peer), so that
//! a send finds its peer by binary search instead of a walk over every
//! peer NI (Lustre hashes its peer NIs by NID for the same reason).
//!
//! The table stays the truth. An entry is a hint that its user checks
//! against the table, so the many places that change the table need not
//! keep the index; a wrong hint costs the user a walk and a rebuild.

use super::nid::Nid;

/// Where the peer NI of `nid` was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NidSlot {
    /// The peer NI's NID.
    pub nid: Nid,
    /// The peer's place in the peer table.
    pub peer: u32,
    /// The NI's place in its peer.
    pub ni: u32,
}

/// The entry of `nid` in `index` (sorted by NID), if it has one.
pub fn lookup(index: &[NidSlot], nid: &Nid) -> Option<NidSlot> {
    let i = position(index, nid).ok()?;
    index.get(i).copied()
}

/// Where `nid` is in `index`: `Ok(i)`, its entry; `Err(i)`, where a new
/// one belongs.
pub fn position(index: &[NidSlot], nid: &Nid) -> Result<usize, usize> {
    index.binary_search_by(|s| s.nid.cmp(nid))
}

/// After a new entry was pushed at the end of `index` for a NID that
/// `position` placed at `at`: moves it there, keeping the order.
pub fn settle_last(index: &mut [NidSlot], at: usize) {
    if let Some(tail) = index.get_mut(at..) {
        tail.rotate_right(1);
    }
}

/// Orders an index filled in table order. A heapsort, in place: core's
/// sorts end in a panic if the order is inconsistent, a call the 6.12
/// kernel's objtool does not know never returns (it warns that the sort
/// "falls through"); a module should hold no panic path anyway.
pub fn sort(index: &mut [NidSlot]) {
    let len = index.len();
    for root in (0..len / 2).rev() {
        sift_down(index, root, len);
    }
    for end in (1..len).rev() {
        index.swap(0, end);
        sift_down(index, 0, end);
    }
}

/// Moves `index[root]` down the heap held in `index[..end]` until neither
/// child is greater.
fn sift_down(index: &mut [NidSlot], mut root: usize, end: usize) {
    let nid = |index: &[NidSlot], i: usize| index.get(i).map(|s| s.nid);
    loop {
        // No overflow: root < end <= len, and a slice is at most isize::MAX long.
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && nid(index, child) < nid(index, child + 1) {
            child += 1;
        }
        if nid(index, root) >= nid(index, child) {
            return;
        }
        index.swap(root, child);
        root = child;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::nid::Net;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    fn nid(a: u32) -> Nid {
        Nid::new4(Net::new(2, 0), a)
    }

    fn slot(a: u32, peer: u32) -> NidSlot {
        NidSlot {
            nid: nid(a),
            peer,
            ni: 0,
        }
    }

    /// Adds as the module does: overwrite, or push and settle.
    fn upsert(index: &mut Vec<NidSlot>, s: NidSlot) {
        match position(index, &s.nid) {
            Ok(i) => index[i] = s,
            Err(i) => {
                index.push(s);
                settle_last(index, i);
            }
        }
    }

    #[test]
    fn finds_what_was_added_and_nothing_else() {
        let mut index = Vec::new();
        for (k, a) in [7u32, 3, 9, 1, 5].into_iter().enumerate() {
            upsert(&mut index, slot(a, k as u32));
        }
        assert!(index.windows(2).all(|w| w[0].nid < w[1].nid));
        assert_eq!(lookup(&index, &nid(9)), Some(slot(9, 2)));
        assert_eq!(lookup(&index, &nid(4)), None);
        // A NID seen again elsewhere: its entry moves, none is added.
        upsert(&mut index, slot(9, 8));
        assert_eq!(index.len(), 5);
        assert_eq!(lookup(&index, &nid(9)).map(|s| s.peer), Some(8));
        assert_eq!(lookup(&[], &nid(1)), None);
    }

    #[test]
    fn settle_at_either_end() {
        let mut index = vec_of(&[2, 4]);
        upsert(&mut index, slot(1, 0));
        upsert(&mut index, slot(5, 0));
        let order: Vec<Nid> = index.iter().map(|s| s.nid).collect();
        assert_eq!(order, [nid(1), nid(2), nid(4), nid(5)]);
        // Out of range: nothing moves.
        settle_last(&mut index, 9);
        assert_eq!(index.len(), 4);
    }

    fn vec_of(addrs: &[u32]) -> Vec<NidSlot> {
        let mut v: Vec<NidSlot> = addrs.iter().map(|&a| slot(a, a)).collect();
        sort(&mut v);
        v
    }

    proptest! {
        /// Built by upserts or by a sort of the table, the index answers
        /// as a walk of the table does.
        #[test]
        fn agrees_with_a_walk(adds in proptest::collection::vec((0u32..64, 0u32..8), 0..80),
                              probes in proptest::collection::vec(0u32..70, 0..40)) {
            let mut index = Vec::new();
            let mut table: Vec<NidSlot> = Vec::new();
            for (a, p) in adds {
                let s = slot(a, p);
                upsert(&mut index, s);
                match table.iter_mut().find(|t| t.nid == s.nid) {
                    Some(t) => *t = s,
                    None => table.push(s),
                }
            }
            let mut sorted = table.clone();
            sort(&mut sorted);
            prop_assert_eq!(&sorted, &index);
            for a in probes {
                let walk = table.iter().find(|t| t.nid == nid(a)).copied();
                prop_assert_eq!(lookup(&index, &nid(a)), walk);
            }
        }

        /// The heapsort orders as core's sort does, repeated NIDs too.
        #[test]
        fn sorts_as_core_does(addrs in proptest::collection::vec(0u32..300, 0..600)) {
            let mut ours: Vec<NidSlot> = addrs.iter().map(|&a| slot(a, 0)).collect();
            let mut core = ours.clone();
            sort(&mut ours);
            core.sort_by_key(|s| s.nid);
            prop_assert_eq!(ours, core);
        }
    }
}
