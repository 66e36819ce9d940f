// SPDX-License-Identifier: GPL-2.0

//! The node's own NIDs as upper layers see them (`LNetIsPeerLocal`,
//! `LNetHasLocalNet`, `LNetFetchNIDs`) and what a NID update callback
//! (`LNetRegisterNIDUpdates`) is told after a net's NIs changed.
//!
//! The module keeps its NIs in one list in the order they started; Lustre
//! keeps nets, each with its NIs, and upper layers see that grouping:
//! every NID of a net comes before those of the next net, nets in the
//! order their first NI started.

use super::nid::{Net, Nid};

/// Whether `nid` is one of `nids` (`LNetIsPeerLocal`). `LNET_ANY_NID` is
/// no NI's.
pub fn is_local(nids: impl IntoIterator<Item = Nid>, nid: &Nid) -> bool {
    !nid.is_any() && nids.into_iter().any(|n| n == *nid)
}

/// Whether one of `nids` is on `net` (`LNetHasLocalNet`); never for
/// `LNET_NET_ANY`.
pub fn has_net(nids: impl IntoIterator<Item = Nid>, net: Net) -> bool {
    net != Net::ANY && nids.into_iter().any(|n| n.net() == net)
}

/// The NIDs of `nids` on `net` (all of them for `Net::ANY`), grouped by
/// net as `LNetFetchNIDs` gives them.
pub fn fetch_order(nids: &[Nid], net: Net) -> FetchOrder<'_> {
    FetchOrder {
        nids,
        net,
        group: 0,
        next: 0,
    }
}

/// The iterator of [`fetch_order`]. Quadratic in the number of NIs, which
/// is small (`lnet_interfaces_max`), and it needs no allocation.
pub struct FetchOrder<'a> {
    nids: &'a [Nid],
    net: Net,
    /// Index of the first NID of the net being walked.
    group: usize,
    /// Where the walk of that net goes on.
    next: usize,
}

impl<'a> FetchOrder<'a> {
    /// Whether the NID at `i` starts its net's group: no NID before it is
    /// on its net.
    fn starts_group(&self, i: usize) -> bool {
        let Some(n) = self.nids.get(i) else {
            return false;
        };
        let before = self.nids.get(..i).unwrap_or(&[]);
        (self.net == Net::ANY || n.net() == self.net) && !before.iter().any(|b| b.net() == n.net())
    }
}

impl<'a> Iterator for FetchOrder<'a> {
    type Item = &'a Nid;

    fn next(&mut self) -> Option<&'a Nid> {
        loop {
            let head = self.nids.get(self.group)?;
            if self.starts_group(self.group) {
                while let Some(n) = self.nids.get(self.next) {
                    self.next = self.next.saturating_add(1);
                    if n.net() == head.net() {
                        return Some(n);
                    }
                }
            }
            self.group = self.group.saturating_add(1);
            self.next = self.group;
        }
    }
}

/// What the NID update callbacks are told after the NIs of a net changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetUpdate {
    /// The net's NIDs now (see [`update_nids`]).
    Nids {
        /// How many.
        count: usize,
    },
    /// The net has no NI left (`nui_count` 0).
    Gone,
}

/// The update for `net` given the NIDs the node has after the change, or
/// None when there is nothing to tell: NIs were added yet none is listed
/// (as Lustre, which tells nothing then). `0@lo` is never told.
pub fn net_update(nids: &[Nid], net: Net, removed: bool) -> Option<NetUpdate> {
    let count = update_nids(nids, net).count();
    if count > 0 {
        Some(NetUpdate::Nids { count })
    } else if removed {
        Some(NetUpdate::Gone)
    } else {
        None
    }
}

/// The NIDs a [`NetUpdate::Nids`] carries, in order.
pub fn update_nids(nids: &[Nid], net: Net) -> impl Iterator<Item = &Nid> {
    nids.iter()
        .filter(move |n| n.net() == net && **n != Nid::LO)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    fn nids(s: &[&str]) -> Vec<Nid> {
        s.iter().map(|n| Nid::parse(n).unwrap()).collect()
    }

    fn order(list: &[Nid], net: Net) -> Vec<std::string::String> {
        use std::string::ToString;
        fetch_order(list, net).map(|n| n.to_string()).collect()
    }

    #[test]
    fn fetch_groups_by_net_in_start_order() {
        let l = nids(&[
            "0@lo",
            "10.1.0.1@tcp",
            "10.2.0.1@tcp1",
            "10.3.0.1@tcp",
            "10.4.0.1@tcp1",
            "10.5.0.1@o2ib",
        ]);
        assert_eq!(
            order(&l, Net::ANY),
            [
                "0@lo",
                "10.1.0.1@tcp",
                "10.3.0.1@tcp",
                "10.2.0.1@tcp1",
                "10.4.0.1@tcp1",
                "10.5.0.1@o2ib"
            ]
        );
        let tcp1 = Net::parse("tcp1").unwrap();
        assert_eq!(order(&l, tcp1), ["10.2.0.1@tcp1", "10.4.0.1@tcp1"]);
        assert_eq!(order(&l, Net::LO), ["0@lo"]);
        assert!(order(&l, Net::parse("tcp9").unwrap()).is_empty());
        assert!(order(&[], Net::ANY).is_empty());
    }

    #[test]
    fn local_and_nets() {
        let l = nids(&["0@lo", "10.1.0.1@tcp"]);
        let it = || l.iter().copied();
        assert!(is_local(it(), &Nid::LO));
        assert!(is_local(it(), &Nid::parse("10.1.0.1@tcp").unwrap()));
        assert!(!is_local(it(), &Nid::parse("10.1.0.1@tcp1").unwrap()));
        assert!(!is_local(it(), &Nid::parse("10.1.0.2@tcp").unwrap()));
        assert!(!is_local(it(), &Nid::ANY));
        assert!(has_net(it(), Net::parse("tcp").unwrap()));
        assert!(has_net(it(), Net::LO));
        assert!(!has_net(it(), Net::parse("tcp1").unwrap()));
        assert!(!has_net(it(), Net::ANY));
    }

    #[test]
    fn updates() {
        let tcp = Net::parse("tcp").unwrap();
        let tcp1 = Net::parse("tcp1").unwrap();
        let l = nids(&["0@lo", "10.1.0.1@tcp", "10.2.0.1@tcp1", "10.3.0.1@tcp"]);
        assert_eq!(
            net_update(&l, tcp, false),
            Some(NetUpdate::Nids { count: 2 })
        );
        assert_eq!(
            net_update(&l, tcp, true),
            Some(NetUpdate::Nids { count: 2 })
        );
        assert_eq!(
            update_nids(&l, tcp).copied().collect::<Vec<_>>(),
            nids(&["10.1.0.1@tcp", "10.3.0.1@tcp"])
        );
        let o2ib = Net::parse("o2ib").unwrap();
        assert_eq!(net_update(&l, o2ib, true), Some(NetUpdate::Gone));
        assert_eq!(net_update(&l, o2ib, false), None);
        assert_eq!(net_update(&l, Net::LO, false), None);
        assert_eq!(
            net_update(&l, tcp1, true),
            Some(NetUpdate::Nids { count: 1 })
        );
    }

    proptest! {
        /// The grouped order is a permutation of the NIDs asked for, each
        /// net's NIDs together and in their own order.
        #[test]
        fn fetch_order_is_a_grouping(raw in proptest::collection::vec((0u16..4, 1u32..50), 0..24)) {
            let list: Vec<Nid> = raw
                .iter()
                .map(|(net, a)| Nid::new4(Net::new(super::super::nid::lnd::SOCK, *net), *a))
                .collect();
            let got: Vec<Nid> = fetch_order(&list, Net::ANY).copied().collect();
            let mut a = got.clone();
            let mut b = list.clone();
            a.sort();
            b.sort();
            prop_assert_eq!(a, b);
            // Each net appears as one run, in its NIs' own order.
            let mut seen: Vec<Net> = Vec::new();
            for w in got.windows(2) {
                if w[0].net() != w[1].net() {
                    prop_assert!(!seen.contains(&w[1].net()));
                    seen.push(w[0].net());
                }
            }
            for net in got.iter().map(|n| n.net()) {
                let mine: Vec<Nid> = fetch_order(&list, net).copied().collect();
                let theirs: Vec<Nid> = list.iter().filter(|n| n.net() == net).copied().collect();
                prop_assert_eq!(mine, theirs);
            }
        }
    }
}
