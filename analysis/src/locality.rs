//! The TB locality graph and the sharing statistics (PAVER §3.2, Table 2, Fig. 2).
//!
//! Per parameter, one sweep over the interval endpoints of all footprint classes splits the
//! unit space into segments with a constant set of classes reading them (the inverted index
//! unit -> TBs, with units of equal TB sets collapsed). Each distinct class set with its
//! total unit count is a *group*; the graph's rows are then accumulated per TB from the
//! groups containing its class, in a dense per-thread scratch row, in parallel. No pair of
//! TBs is ever compared unless they share a group, so the cost is linear in the number of
//! edges produced. The rows go straight into the partitioner's [`Graph`], TBs of identical
//! rows sharing one, so the grouping policies read the graph as built here.

use rayon::prelude::*;
use serde::Serialize;

use crate::footprint::{Footprints, FxMap, ParamFootprint};

/// The locality graph: vertices are TBs, `w(i, j)` the number of distinct units both read.
///
/// The partitioner's type, built here in place: TBs whose footprint classes lie in the same
/// sharing groups, parameter by parameter (GEMM's two TBs per 128 B column band and block
/// row), have the same neighbours and weights, so they share one stored row, which lists
/// them too (each weighing what the TB reads). See [`graph_partition::graph`].
pub use graph_partition::Graph;
use graph_partition::{RowChunk, SharedRows, ROW_CHUNK};

/// Fig. 2 of PAVER: data units by who reads them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Categories {
    /// Read by one warp of one TB.
    pub unshared: u64,
    /// Read by several warps of one TB only.
    pub intra_tb: u64,
    /// Read by several TBs, by one warp in each.
    pub inter_tb: u64,
    /// Read by several TBs, and by several warps in at least one of them.
    pub both: u64,
}

/// PAVER Table 2 statistics plus the Fig. 2 categories.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Number of TBs.
    pub total_tbs: u64,
    /// Data references: the sum over TBs of the number of distinct units each reads.
    pub total_data_references: u64,
    /// Distinct units read by the whole grid.
    pub distinct_units: u64,
    /// `1 - nonzeros / (n * n)` of the symmetric adjacency matrix (no diagonal).
    pub spscore: f64,
    /// TBs with at least one edge.
    pub shared_tbs: u64,
    /// Fraction of data references (TB, unit) whose unit is also read by another TB. Not the
    /// paper's column of that name (see [`Stats::degree_fraction`] and analysis/README.md);
    /// kept under this key because sweeps classify launches by it.
    pub degree_of_sharing: f64,
    /// Mean number of other TBs a shared TB shares at least one unit with: `2 * edges /
    /// shared_tbs` (0 without shared TBs). The paper's "shared blocks per shared TB".
    pub mean_degree: f64,
    /// [`Stats::mean_degree`] over the number of TBs: the paper's "ratio of shared blocks to
    /// shared TBs" put, as its Table 2 column is, as a fraction of the grid (`k / total TBs`).
    /// Equals `1 - spscore` when every TB is shared.
    pub degree_fraction: f64,
    /// Number of edges (`i < j`).
    pub edges: u64,
    /// Fig. 2 categories, in units.
    pub categories: Categories,
}

struct ParamGroups {
    /// Class of each TB (`u32::MAX`: reads nothing of this parameter).
    class_of: Vec<u32>,
    /// Groups: class set and the units they share.
    groups: Vec<(Vec<u32>, u64)>,
    /// Groups containing each class.
    groups_of: Vec<Vec<u32>>,
}

/// Per-parameter sums of the sweep.
#[derive(Default)]
struct SweepSums {
    cats: Categories,
    shared_refs: u64,
    distinct: u64,
}

fn sweep(p: &ParamFootprint, class_of: Vec<u32>) -> (ParamGroups, SweepSums) {
    sweep_packed(p, class_of, false)
}

/// [`sweep`], with the `u128` events forced by `wide` (tests compare both packings).
fn sweep_packed(p: &ParamFootprint, class_of: Vec<u32>, wide: bool) -> (ParamGroups, SweepSums) {
    // Events ordered by position, then ends before starts, then kind (0 units, 1 multi-warp)
    // and class. They are packed into one integer each, sorted, and scanned: into a `u64`
    // (position relative to the smallest, start bit, kind bit, class) when the parameter's
    // span of positions and its class count leave room, as they do on every corpus launch;
    // else into a `u128`. The narrow form halves the sort's memory traffic.
    let n_ev: usize = p
        .classes
        .iter()
        .map(|c| 2 * (c.units.len() + c.multi_warp.len()))
        .sum();
    // Classes whose every unit is read by several warps: their unit events count as
    // multi-warp events too.
    let all_multi: Vec<i64> = p
        .classes
        .iter()
        .map(|c| i64::from(c.multi_warp == c.units))
        .collect();
    let bounds = p
        .classes
        .iter()
        .flat_map(|c| c.units.iter().chain(&c.multi_warp))
        .fold((u64::MAX, 0u64), |(lo, hi), &(a, b)| (lo.min(a), hi.max(b)));
    let base = if bounds.0 == u64::MAX { 0 } else { bounds.0 };
    let bits = |v: u64| 64 - v.leading_zeros();
    let class_bits = bits(p.classes.len().saturating_sub(1) as u64);
    let pos_bits = bits(bounds.1.saturating_sub(base));
    let events = |push: &mut dyn FnMut(u64, bool, u64, u32)| {
        for (k, c) in p.classes.iter().enumerate() {
            for &(a, b) in &c.units {
                push(a, true, 0, k as u32);
                push(b, false, 0, k as u32);
            }
            if all_multi[k] == 1 {
                continue;
            }
            for &(a, b) in &c.multi_warp {
                push(a, true, 1, k as u32);
                push(b, false, 1, k as u32);
            }
        }
    };
    let (groups, sums) = if !wide && pos_bits + 2 + class_bits <= 64 {
        let mut ev: Vec<u64> = Vec::with_capacity(n_ev);
        let (sb, kb) = (class_bits + 1, class_bits);
        events(&mut |pos, start, kind, c| {
            ev.push(
                ((pos - base) << (class_bits + 2))
                    | (u64::from(start) << sb)
                    | (kind << kb)
                    | u64::from(c),
            )
        });
        // Each class's events ascend (its units are sorted and disjoint): the stable sort
        // finds those runs and merges them, where the unstable one sorts from scratch.
        ev.par_sort();
        let mask = (1u64 << class_bits) - 1;
        scan(p, &all_multi, &ev, |e| {
            (
                (e >> (class_bits + 2)) + base,
                (e >> sb) & 1 == 1,
                (e >> kb) & 1,
                (e & mask) as u32,
            )
        })
    } else {
        let mut ev: Vec<u128> = Vec::with_capacity(n_ev);
        events(&mut |pos, start, kind, c| {
            ev.push(
                (u128::from(pos) << 64)
                    | (u128::from(start) << 40)
                    | (u128::from(kind) << 32)
                    | u128::from(c),
            )
        });
        ev.par_sort_unstable();
        scan(p, &all_multi, &ev, |e| {
            (
                (e >> 64) as u64,
                (e >> 40) & 1 == 1,
                ((e >> 32) & 0xff) as u64,
                e as u32,
            )
        })
    };
    finish_groups(p, class_of, groups, sums)
}

/// The sweep over events sorted by position: each stretch between two positions goes to the
/// group of the classes active over it, and to the statistics. `decode` gives an event's
/// position, whether it starts an interval, its kind and its class.
fn scan<K: Copy>(
    p: &ParamFootprint,
    all_multi: &[i64],
    ev: &[K],
    decode: impl Fn(K) -> (u64, bool, u64, u32),
) -> (Vec<(Vec<u32>, u64)>, SweepSums) {
    let mut sums = SweepSums::default();
    let mut active: Vec<u32> = Vec::new();
    let (mut tbs, mut multi) = (0u64, 0i64);
    let mut index: FxMap<Vec<u32>, usize> = FxMap::default();
    let mut groups: Vec<(Vec<u32>, u64)> = Vec::new();
    let mut cur: Option<usize> = None;
    let mut prev = 0u64;
    let mut i = 0;
    while i < ev.len() {
        let pos = decode(ev[i]).0;
        let len = pos - prev;
        if len > 0 && tbs > 0 {
            let g = match cur {
                Some(g) => g,
                None => {
                    // Most segments meet a class set seen before: look it up without a copy.
                    let g = match index.get(active.as_slice()) {
                        Some(&g) => g,
                        None => {
                            groups.push((active.clone(), 0));
                            index.insert(active.clone(), groups.len() - 1);
                            groups.len() - 1
                        }
                    };
                    cur = Some(g);
                    g
                }
            };
            groups[g].1 += len;
            sums.distinct += len;
            if tbs >= 2 {
                sums.shared_refs += len * tbs;
            }
            let cats = &mut sums.cats;
            let slot = match (tbs >= 2, multi > 0) {
                (false, false) => &mut cats.unshared,
                (false, true) => &mut cats.intra_tb,
                (true, false) => &mut cats.inter_tb,
                (true, true) => &mut cats.both,
            };
            *slot += len;
        }
        while i < ev.len() {
            let (at_pos, start, kind, c) = decode(ev[i]);
            if at_pos != pos {
                break;
            }
            let m = p.classes[c as usize].members.len() as u64;
            let all_multi = all_multi[c as usize];
            match (kind, start) {
                (0, true) => {
                    let at = active.partition_point(|&x| x < c);
                    active.insert(at, c);
                    tbs += m;
                    multi += all_multi;
                    cur = None;
                }
                (0, false) => {
                    let at = active.partition_point(|&x| x < c);
                    active.remove(at);
                    tbs -= m;
                    multi -= all_multi;
                    cur = None;
                }
                (_, true) => multi += 1,
                (_, false) => multi -= 1,
            }
            i += 1;
        }
        prev = pos;
    }
    (groups, sums)
}

/// The sweep's groups sorted, with the groups of each class.
fn finish_groups(
    p: &ParamFootprint,
    class_of: Vec<u32>,
    mut groups: Vec<(Vec<u32>, u64)>,
    sums: SweepSums,
) -> (ParamGroups, SweepSums) {
    groups.sort_unstable();
    let mut groups_of = vec![Vec::new(); p.classes.len()];
    for (g, (cs, _)) in groups.iter().enumerate() {
        for &c in cs {
            groups_of[c as usize].push(g as u32);
        }
    }
    (
        ParamGroups {
            class_of,
            groups,
            groups_of,
        },
        sums,
    )
}

/// At most this many sorted member lists are merged directly; more go through a dense
/// scratch row.
const MERGE_LISTS: usize = 8;

/// Scratch rows for [`merge_lists`].
#[derive(Default)]
struct Scratch {
    a: (Vec<u32>, Vec<u64>),
    b: (Vec<u32>, Vec<u64>),
}

/// Appends the union of ascending lists of TB ids with weights, summing the weights of
/// equal ids. Two lists at a time, without branches on the data (GEMM has three: its `A`
/// block row, and the two `B` column classes sharing lines): the first lists into scratch
/// rows, the last merge into the output.
fn merge_lists(
    lists: &[(&[u32], u64)],
    scratch: &mut Scratch,
    nbrs: &mut Vec<u32>,
    weights: &mut Vec<u64>,
) {
    match lists {
        [] => {}
        [(a, wa)] => {
            nbrs.extend_from_slice(a);
            weights.extend(std::iter::repeat_n(*wa, a.len()));
        }
        [(a, wa), (b, wb)] => {
            let (wa, wb) = (*wa, *wb);
            merge_two(a, |_| wa, b, |_| wb, nbrs, weights);
        }
        [(a, wa), (b, wb), rest @ .., (last, wl)] => {
            let Scratch { a: acc, b: tmp } = scratch;
            let (wa, wb, wl) = (*wa, *wb, *wl);
            acc.0.clear();
            acc.1.clear();
            merge_two(a, |_| wa, b, |_| wb, &mut acc.0, &mut acc.1);
            for &(l, w) in rest {
                tmp.0.clear();
                tmp.1.clear();
                let ws = &acc.1;
                merge_two(&acc.0, |k| ws[k], l, |_| w, &mut tmp.0, &mut tmp.1);
                std::mem::swap(acc, tmp);
            }
            let ws = &acc.1;
            merge_two(&acc.0, |k| ws[k], last, |_| wl, nbrs, weights);
        }
    }
}

/// Appends the union of the ascending lists `a` and `b`, whose `k`-th entries weigh
/// `wa(k)` and `wb(k)`, weights summed where both hold an id. The loop has no branch on the
/// data: each step writes the smaller head and advances the list(s) it came from.
fn merge_two(
    a: &[u32],
    wa: impl Fn(usize) -> u64,
    b: &[u32],
    wb: impl Fn(usize) -> u64,
    nbrs: &mut Vec<u32>,
    weights: &mut Vec<u64>,
) {
    let start = nbrs.len();
    nbrs.resize(start + a.len() + b.len(), 0);
    weights.resize(start + a.len() + b.len(), 0);
    let (on, ow) = (&mut nbrs[start..], &mut weights[start..]);
    let (mut ia, mut ib, mut k) = (0usize, 0usize, 0usize);
    while ia < a.len() && ib < b.len() {
        let (x, y) = (a[ia], b[ib]);
        let (ta, tb) = (x <= y, y <= x);
        on[k] = x.min(y);
        ow[k] = u64::from(ta) * wa(ia) + u64::from(tb) * wb(ib);
        ia += usize::from(ta);
        ib += usize::from(tb);
        k += 1;
    }
    for (k2, &j) in a.iter().enumerate().skip(ia) {
        on[k] = j;
        ow[k] = wa(k2);
        k += 1;
    }
    for (k2, &j) in b.iter().enumerate().skip(ib) {
        on[k] = j;
        ow[k] = wb(k2);
        k += 1;
    }
    nbrs.truncate(start + k);
    weights.truncate(start + k);
}

/// What the shared rows of a chunk add to the graph's totals.
#[derive(Default)]
struct RowSums {
    /// Row entries of the TBs (each edge counted from both ends).
    entries: u64,
    /// TBs with at least one neighbour.
    shared_tbs: u64,
    /// The largest weight between two different TBs.
    max_weight: u64,
}

impl RowSums {
    /// Adds shared row `(ns, ws)` of the `m` TBs whose first is `rep`. Its TBs are among
    /// its entries (all or none of them, as they read the same classes), so each has the
    /// row's length less one; a TB alone in its row does not count its own entry towards
    /// the largest weight.
    fn add(&mut self, rep: u32, m: u64, ns: &[u32], ws: &[u64]) {
        let own = ns.binary_search(&rep);
        let len = ns.len() as u64 - u64::from(own.is_ok());
        self.entries += m * len;
        self.shared_tbs += if len > 0 { m } else { 0 };
        let top = match own {
            Ok(at) if m == 1 => ws[..at].iter().chain(&ws[at + 1..]).copied().max(),
            _ => ws.iter().copied().max(),
        };
        self.max_weight = self.max_weight.max(top.unwrap_or(0));
    }
}

/// Mean number of neighbours of the `shared` TBs with at least one of the `edges`.
fn mean_degree(edges: u64, shared: u64) -> f64 {
    if shared == 0 {
        0.0
    } else {
        2.0 * edges as f64 / shared as f64
    }
}

/// Builds the locality graph and the statistics of `fp`.
pub fn build(fp: &Footprints) -> (Graph, Stats) {
    let n = fp.num_tbs;
    let swept: Vec<(ParamGroups, SweepSums)> = fp
        .params
        .par_iter()
        .enumerate()
        .map(|(k, p)| sweep(p, fp.class_table(k)))
        .collect();
    let mut cats = Categories::default();
    let (mut shared_refs, mut distinct) = (0u64, 0u64);
    let mut pgs = Vec::with_capacity(swept.len());
    for (pg, s) in swept {
        cats.unshared += s.cats.unshared;
        cats.intra_tb += s.cats.intra_tb;
        cats.inter_tb += s.cats.inter_tb;
        cats.both += s.cats.both;
        shared_refs += s.shared_refs;
        distinct += s.distinct;
        pgs.push(pg);
    }
    // TBs whose classes lie in the same groups, parameter by parameter, share a row (GEMM's
    // two `B` column classes of one 128 B band are distinct classes in the same groups).
    // Classes are first numbered by their group lists; rows are numbered in the order of
    // their first TB, so the result does not depend on the thread count.
    let same_groups: Vec<Vec<u32>> = pgs
        .iter()
        .map(|pg| {
            let mut ids: FxMap<&[u32], u32> = FxMap::default();
            pg.groups_of
                .iter()
                .map(|gs| {
                    let next = ids.len() as u32;
                    *ids.entry(gs.as_slice()).or_insert(next)
                })
                .collect()
        })
        .collect();
    let mut row_of = Vec::with_capacity(n as usize);
    let mut reps: Vec<u32> = Vec::new();
    let mut sizes: Vec<u64> = Vec::new();
    let mut index: FxMap<Vec<u32>, u32> = FxMap::default();
    for i in 0..n {
        let key: Vec<u32> = pgs
            .iter()
            .zip(&same_groups)
            .map(|(pg, ids)| match pg.class_of[i as usize] {
                u32::MAX => u32::MAX,
                c => ids[c as usize],
            })
            .collect();
        let r = *index.entry(key).or_insert_with(|| {
            reps.push(i);
            sizes.push(0);
            (reps.len() - 1) as u32
        });
        sizes[r as usize] += 1;
        row_of.push(r);
    }
    drop(index);
    let num_rows = reps.len() as u32;
    let built: Vec<(RowChunk, RowSums)> = (0..num_rows.div_ceil(ROW_CHUNK))
        .into_par_iter()
        .map_init(
            || (Vec::<u64>::new(), Vec::<u32>::new(), Scratch::default()),
            |(acc, touched, scratch), ch| {
                let span = (ch * ROW_CHUNK) as usize..((ch + 1) * ROW_CHUNK).min(num_rows) as usize;
                let (rows, row_sizes) = (&reps[span.clone()], &sizes[span]);
                let mut sums = RowSums::default();
                let mut out = RowChunk::with_rows(rows.len());
                let mut lists: Vec<(&[u32], u64)> = Vec::new();
                for (k, &i) in rows.iter().enumerate() {
                    if k == 1 {
                        // Neighbouring rows are usually about as long as the first: size
                        // the chunk once instead of growing it row by row.
                        out.reserve(out.num_entries() * rows.len());
                    }
                    lists.clear();
                    for (pg, p) in pgs.iter().zip(&fp.params) {
                        let c = pg.class_of[i as usize];
                        if c == u32::MAX {
                            continue;
                        }
                        for &g in &pg.groups_of[c as usize] {
                            let (cs, w) = &pg.groups[g as usize];
                            for &c2 in cs {
                                lists.push((&p.classes[c2 as usize].members, *w));
                            }
                        }
                    }
                    let (nbrs, weights) = out.open_row();
                    if lists.len() <= MERGE_LISTS {
                        merge_lists(&lists, scratch, nbrs, weights);
                    } else {
                        if acc.is_empty() {
                            acc.resize(n as usize, 0);
                        }
                        for &(ms, w) in &lists {
                            for &j in ms {
                                if acc[j as usize] == 0 {
                                    touched.push(j);
                                }
                                acc[j as usize] += w;
                            }
                        }
                        touched.sort_unstable();
                        nbrs.extend_from_slice(touched);
                        weights.extend(
                            touched
                                .iter()
                                .map(|&j| std::mem::take(&mut acc[j as usize])),
                        );
                        touched.clear();
                    }
                    let (ns, ws) = out.end_row();
                    sums.add(i, row_sizes[k], ns, ws);
                }
                (out, sums)
            },
        )
        .collect();
    let mut sums = RowSums::default();
    let mut chunks = Vec::with_capacity(built.len());
    for (c, s) in built {
        sums.entries += s.entries;
        sums.shared_tbs += s.shared_tbs;
        sums.max_weight = sums.max_weight.max(s.max_weight);
        chunks.push(c);
    }
    let RowSums {
        entries,
        shared_tbs,
        max_weight,
    } = sums;
    let g = Graph::from_shared_rows(SharedRows {
        num_tbs: n,
        row_of,
        chunks,
        num_edges: entries / 2,
        max_weight,
    });
    let total_refs: u64 = fp
        .params
        .iter()
        .flat_map(|p| p.classes.iter())
        .map(|c| crate::footprint::count(&c.units) * c.members.len() as u64)
        .sum();
    let nn = f64::from(n) * f64::from(n);
    let stats = Stats {
        total_tbs: u64::from(n),
        total_data_references: total_refs,
        distinct_units: distinct,
        spscore: if n == 0 {
            1.0
        } else {
            1.0 - (2.0 * g.num_edges() as f64) / nn
        },
        shared_tbs,
        degree_of_sharing: if total_refs == 0 {
            0.0
        } else {
            shared_refs as f64 / total_refs as f64
        },
        mean_degree: mean_degree(g.num_edges(), shared_tbs),
        degree_fraction: if n == 0 {
            0.0
        } else {
            mean_degree(g.num_edges(), shared_tbs) / f64::from(n)
        },
        edges: g.num_edges(),
        categories: cats,
    };
    (g, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn pairwise_reference_agrees() {
        // 6 TBs, 2 warps each, overlapping unit sets.
        let sets: Vec<Vec<Vec<u64>>> = vec![
            vec![vec![1, 2, 3], vec![3, 4]],
            vec![vec![1, 2, 3], vec![3, 4]],
            vec![vec![4, 5], vec![]],
            vec![vec![10], vec![11]],
            vec![vec![], vec![]],
            vec![vec![1 << 40 | 5], vec![2]],
        ];
        let fp = Footprints::from_warp_units(&sets, |_| 128);
        let (g, s) = build(&fp);
        let all: Vec<BTreeSet<u64>> = sets
            .iter()
            .map(|w| w.iter().flatten().copied().collect())
            .collect();
        let want = pairwise(&sets);
        assert_eq!(g.edges().collect::<Vec<_>>(), want);
        // Full rows: row i holds every edge touching i, columns ascending.
        for i in 0..sets.len() as u32 {
            let mut row: Vec<(u32, u64)> = Vec::new();
            for (ns, ws) in g.full_row(i) {
                row.extend(ns.iter().copied().zip(ws.iter().copied()));
            }
            let mut expect: Vec<(u32, u64)> = want
                .iter()
                .filter_map(|&(a, b, w)| match (a == i, b == i) {
                    (true, _) => Some((b, w)),
                    (_, true) => Some((a, w)),
                    _ => None,
                })
                .collect();
            expect.sort_unstable();
            assert_eq!(row, expect, "row {i}");
            assert_eq!(g.degree(i), expect.len());
        }
        assert_eq!(s.shared_tbs, 4);
        assert_eq!(
            s.total_data_references,
            all.iter().map(|x| x.len() as u64).sum::<u64>()
        );
        // Units: 1,2 inter (one warp each); 3 both (2 warps in TB0/TB1); 4 inter+... TB0 w1,
        // TB1 w1, TB2 w0 -> inter; 5 inter (TB2 and TB5? no: TB5 reads param 1) -> unshared.
        assert_eq!(s.categories.both, 1);
    }
    #[test]
    fn table2_statistics_by_hand() {
        // 4 TBs, one warp each, one parameter (units 0..=9):
        //   TB0 {0, 1, 2}, TB1 {2, 3}, TB2 {3, 4, 5}, TB3 {9}.
        // Edges: (0,1) via unit 2, (1,2) via unit 3: 2 edges, nonzeros 4 of 16.
        // Shared TBs: 0, 1, 2 (TB3 shares nothing).
        // References: 3 + 2 + 3 + 1 = 9; distinct units 7 (0..=5, 9).
        // References to units read by >= 2 TBs: unit 2 twice, unit 3 twice = 4 of 9.
        // Mean degree of the shared TBs: (1 + 2 + 1) / 3 = 2 * 2 / 3 = 4/3; over 4 TBs: 1/3.
        let sets: Vec<Vec<Vec<u64>>> = vec![
            vec![vec![0, 1, 2]],
            vec![vec![2, 3]],
            vec![vec![3, 4, 5]],
            vec![vec![9]],
        ];
        let fp = Footprints::from_warp_units(&sets, |_| 128);
        let (_, s) = build(&fp);
        assert_eq!(s.total_tbs, 4);
        assert_eq!(s.total_data_references, 9);
        assert_eq!(s.distinct_units, 7);
        assert_eq!(s.edges, 2);
        assert_eq!(s.spscore, 1.0 - 4.0 / 16.0);
        assert_eq!(s.shared_tbs, 3);
        assert_eq!(s.degree_of_sharing, 4.0 / 9.0);
        assert!((s.mean_degree - 4.0 / 3.0).abs() < 1e-12);
        assert!((s.degree_fraction - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.categories.inter_tb, 2);
        assert_eq!(s.categories.unshared, 5);

        // Every TB shared (a 4-cycle), so degree_fraction = 1 - spscore: each TB has 2
        // neighbours, 2/4 = 0.5 = 1 - (1 - 8/16).
        let ring: Vec<Vec<Vec<u64>>> = (0..4u64).map(|i| vec![vec![i, (i + 1) % 4]]).collect();
        let (_, r) = build(&Footprints::from_warp_units(&ring, |_| 128));
        assert_eq!((r.edges, r.shared_tbs), (4, 4));
        assert_eq!(r.mean_degree, 2.0);
        assert_eq!(r.degree_fraction, 0.5);
        assert_eq!(r.degree_fraction, 1.0 - r.spscore);

        // Nothing shared, and nothing at all: no division by zero.
        let (_, z) = build(&Footprints::from_warp_units(
            &[vec![vec![1]], vec![vec![2]]],
            |_| 128,
        ));
        assert_eq!(
            (z.mean_degree, z.degree_fraction, z.spscore),
            (0.0, 0.0, 1.0)
        );
        let (_, e) = build(&Footprints::from_warp_units(&[], |_| 128));
        assert_eq!((e.mean_degree, e.degree_fraction), (0.0, 0.0));
    }

    /// The pairwise reference: `(i, j, |units(i) ∩ units(j)|)` for `i < j`, sorted.
    fn pairwise(sets: &[Vec<Vec<u64>>]) -> Vec<(u32, u32, u64)> {
        let all: Vec<BTreeSet<u64>> = sets
            .iter()
            .map(|w| w.iter().flatten().copied().collect())
            .collect();
        let mut want = Vec::new();
        for i in 0..sets.len() {
            for j in i + 1..sets.len() {
                let w = all[i].intersection(&all[j]).count() as u64;
                if w > 0 {
                    want.push((i as u32, j as u32, w));
                }
            }
        }
        want
    }

    #[test]
    fn shared_rows_agree_with_pairwise_reference() {
        // 96 TBs over two parameters from a fixed LCG: tiles of a small 2D space (TBs of
        // one tile column read the same units of parameter 1, as GEMM's B), some reading
        // their units with one warp and some with two (distinct classes in the same
        // groups, which share a row), a few reading nothing, a few alone, a few reading
        // private units too (their own entry outweighs every edge).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |m: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        let mut sets: Vec<Vec<Vec<u64>>> = Vec::new();
        for tb in 0..96u64 {
            let (bx, by) = (tb % 12, tb / 12);
            let mut a: Vec<u64> = (0..4).map(|k| by * 4 + k).collect();
            let b: Vec<u64> = (0..3).map(|k| (1 << 40) | ((bx / 2) * 3 + k)).collect();
            match rnd(8) {
                0 => sets.push(vec![vec![], vec![]]),
                1 => sets.push(vec![vec![1000 + tb], vec![]]),
                3 => {
                    // alone in its row, reading more than it shares with anyone
                    a.extend((0..10).map(|k| 2000 + tb * 10 + k));
                    sets.push(vec![a, b]);
                }
                2 => {
                    // two warps over the same units: a different class, the same groups
                    a.extend(&b);
                    sets.push(vec![a.clone(), a]);
                }
                _ => {
                    let split = a.len() / 2;
                    let tail = a.split_off(split);
                    a.extend(&b);
                    sets.push(vec![a, tail]);
                }
            }
        }
        let fp = Footprints::from_warp_units(&sets, |_| 128);
        let (g, s) = build(&fp);
        let want = pairwise(&sets);
        assert_eq!(g.edges().collect::<Vec<_>>(), want);
        assert_eq!(s.edges, want.len() as u64);
        assert_eq!(g.max_weight(), want.iter().map(|e| e.2).max().unwrap_or(0));
        let shared: BTreeSet<u32> = want.iter().flat_map(|e| [e.0, e.1]).collect();
        assert_eq!(s.shared_tbs, shared.len() as u64);
        // Rows really are shared: fewer stored rows than TBs.
        assert!(g.num_stored_rows() < 96, "{} rows", g.num_stored_rows());
        for i in 0..96u32 {
            let mut row: Vec<u32> = Vec::new();
            for (ns, _) in g.full_row(i) {
                row.extend_from_slice(ns);
            }
            let expect: Vec<u32> = want
                .iter()
                .filter_map(|&(a, b, _)| (a == i).then_some(b).or((b == i).then_some(a)))
                .collect::<BTreeSet<u32>>()
                .into_iter()
                .collect();
            assert_eq!(row, expect, "row {i}");
        }
        // The sweep's two event packings give the same groups and sums.
        for (k, p) in fp.params.iter().enumerate() {
            let (narrow, a) = sweep_packed(p, fp.class_table(k), false);
            let (wide, b) = sweep_packed(p, fp.class_table(k), true);
            assert!(!narrow.groups.is_empty());
            assert_eq!(narrow.groups, wide.groups);
            assert_eq!(narrow.groups_of, wide.groups_of);
            assert_eq!(narrow.class_of, wide.class_of);
            assert_eq!(a.cats, b.cats);
            assert_eq!((a.shared_refs, a.distinct), (b.shared_refs, b.distinct));
        }
    }
}
