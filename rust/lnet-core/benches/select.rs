//! Selection cost on the host: what one send's path choice costs in
//! lnet-core, as `lnet/selection.rs` `select_path` uses it. A pick is the peer's
//! lookup in the peer table's NID index, then the rankings of the peer's
//! nets, the local NIs and the peer NIs (every NI on one net: the longest
//! rankings for a given count). The baseline, measured in the same run, is
//! the walk of every peer NI that the index replaced.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lnet_core::nid::{Net, Nid};
use lnet_core::nid_index::{self, NidSlot};
use lnet_core::select::{
    best_net, best_ni, best_peer_ni, NetCandidate, NiCandidate, PeerNiCandidate,
};
use std::hint::black_box;

fn nid(i: usize) -> Nid {
    Nid::new4(Net::new(2, (i % 4) as u16), 0x0a00_0000 + i as u32)
}

/// A peer table of `peers` peers with `per_peer` NIDs each, as its index
/// and as the table a walk goes through.
fn table(peers: usize, per_peer: usize) -> (Vec<NidSlot>, Vec<Vec<Nid>>) {
    let list: Vec<Vec<Nid>> = (0..peers)
        .map(|p| (0..per_peer).map(|k| nid(p * per_peer + k)).collect())
        .collect();
    let mut index: Vec<NidSlot> = list
        .iter()
        .enumerate()
        .flat_map(|(p, nis)| {
            nis.iter().enumerate().map(move |(k, n)| NidSlot {
                nid: *n,
                peer: p as u32,
                ni: k as u32,
            })
        })
        .collect();
    nid_index::sort(&mut index);
    (index, list)
}

fn walk(list: &[Vec<Nid>], dest: &Nid) -> Option<(usize, usize)> {
    list.iter()
        .enumerate()
        .find_map(|(p, nis)| nis.iter().position(|n| n == dest).map(|k| (p, k)))
}

struct Cands {
    nets: Vec<NetCandidate>,
    nis: Vec<NiCandidate>,
    lpnis: Vec<PeerNiCandidate>,
}

/// `n` local NIs and `n` peer NIs, healthy, credits and sequences varied
/// so that each ranking looks at every criterion.
fn cands(n: usize) -> Cands {
    Cands {
        nets: vec![NetCandidate {
            peer_net_health: 1000,
            peer_net_priority: u32::MAX,
            local_net_health: 1000,
            local_net_priority: u32::MAX,
            peer_net_seq: 7,
            local_net_seq: 3,
        }],
        nis: (0..n)
            .map(|i| NiCandidate {
                fatal: false,
                health: 1000,
                sel_priority: u32::MAX,
                dev_priority: u32::MAX,
                distance: 0,
                tx_credits: 8 - (i % 3) as i32,
                seq: (i * 7 % 5) as u64,
            })
            .collect(),
        lpnis: (0..n)
            .map(|i| PeerNiCandidate {
                health: 1000,
                sel_priority: u32::MAX,
                preferred: false,
                tx_credits: 8 - (i % 3) as i32,
                seq: (i * 5 % 7) as u64,
            })
            .collect(),
    }
}

fn pick(index: &[NidSlot], dest: &Nid, c: &Cands) -> Option<(NidSlot, usize, usize, usize)> {
    let s = nid_index::lookup(index, dest)?;
    Some((
        s,
        best_net(&c.nets)?,
        best_ni(&c.nis, 0, false)?,
        best_peer_ni(&c.lpnis)?,
    ))
}

fn pick_walk(
    list: &[Vec<Nid>],
    dest: &Nid,
    c: &Cands,
) -> Option<((usize, usize), usize, usize, usize)> {
    let s = walk(list, dest)?;
    Some((
        s,
        best_net(&c.nets)?,
        best_ni(&c.nis, 0, false)?,
        best_peer_ni(&c.lpnis)?,
    ))
}

fn by_ni_count(cr: &mut Criterion) {
    let mut g = cr.benchmark_group("pick_nis");
    for n in [1usize, 4, 16] {
        let (index, _) = table(1, n);
        let c = cands(n);
        let dest = nid(0);
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("{n}x{n}")),
            &n,
            |b, _| b.iter(|| pick(black_box(&index), black_box(&dest), black_box(&c))),
        );
    }
    g.finish();
}

fn by_peer_count(cr: &mut Criterion) {
    let mut g = cr.benchmark_group("pick_4x4_peers");
    for peers in [1usize, 1000, 100_000] {
        let (index, list) = table(peers, 4);
        let c = cands(4);
        // A peer in the middle of the table: half a walk.
        let dest = nid(peers / 2 * 4);
        g.bench_with_input(BenchmarkId::new("index", peers), &peers, |b, _| {
            b.iter(|| pick(black_box(&index), black_box(&dest), black_box(&c)))
        });
        g.bench_with_input(BenchmarkId::new("walk", peers), &peers, |b, _| {
            b.iter(|| pick_walk(black_box(&list), black_box(&dest), black_box(&c)))
        });
    }
    g.finish();
}

criterion_group!(benches, by_ni_count, by_peer_count);
criterion_main!(benches);
