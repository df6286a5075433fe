//! The TB locality graph and the sharing statistics (PAVER §3.2, Table 2, Fig. 2).
//!
//! Per parameter, one sweep over the interval endpoints of all footprint classes splits the
//! unit space into segments with a constant set of classes reading them (the inverted index
//! unit -> TBs, with units of equal TB sets collapsed). Each distinct class set with its
//! total unit count is a *group*; the graph's rows are then accumulated per TB from the
//! groups containing its class, in a dense per-thread scratch row, in parallel. No pair of
//! TBs is ever compared unless they share a group, so the cost is linear in the number of
//! edges produced.

use std::collections::{BTreeSet, HashMap};

use rayon::prelude::*;
use serde::Serialize;

use crate::footprint::{Footprints, ParamFootprint};

/// The locality graph: vertices are TBs, `w(i, j)` the number of distinct units both read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graph {
    /// Number of TBs.
    pub num_tbs: u32,
    /// Edges `(i, j, w)` with `i < j`, sorted.
    pub edges: Vec<(u32, u32, u64)>,
}

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
    /// Fraction of data references (TB, unit) whose unit is also read by another TB.
    pub degree_of_sharing: f64,
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

fn sweep(
    p: &ParamFootprint,
    num_tbs: u32,
    cats: &mut Categories,
    shared_refs: &mut u64,
    distinct: &mut u64,
) -> ParamGroups {
    let mut class_of = vec![u32::MAX; num_tbs as usize];
    for (k, c) in p.classes.iter().enumerate() {
        for &m in &c.members {
            class_of[m as usize] = k as u32;
        }
    }
    // Events: (position, is_start, kind (0 units, 1 multi-warp), class).
    let mut ev: Vec<(u64, bool, u8, u32)> = Vec::new();
    for (k, c) in p.classes.iter().enumerate() {
        for &(a, b) in &c.units {
            ev.push((a, true, 0, k as u32));
            ev.push((b, false, 0, k as u32));
        }
        for &(a, b) in &c.multi_warp {
            ev.push((a, true, 1, k as u32));
            ev.push((b, false, 1, k as u32));
        }
    }
    ev.sort_unstable();
    let mut active: BTreeSet<u32> = BTreeSet::new();
    let (mut tbs, mut multi) = (0u64, 0i64);
    let mut weights: HashMap<Vec<u32>, u64> = HashMap::new();
    let mut key: Vec<u32> = Vec::new();
    let mut prev = 0u64;
    let mut i = 0;
    while i < ev.len() {
        let pos = ev[i].0;
        let len = pos - prev;
        if len > 0 && tbs > 0 {
            *weights.entry(key.clone()).or_insert(0) += len;
            *distinct += len;
            if tbs >= 2 {
                *shared_refs += len * tbs;
            }
            let slot = match (tbs >= 2, multi > 0) {
                (false, false) => &mut cats.unshared,
                (false, true) => &mut cats.intra_tb,
                (true, false) => &mut cats.inter_tb,
                (true, true) => &mut cats.both,
            };
            *slot += len;
        }
        let mut changed = false;
        while i < ev.len() && ev[i].0 == pos {
            let (_, start, kind, c) = ev[i];
            let m = p.classes[c as usize].members.len() as u64;
            match (kind, start) {
                (0, true) => {
                    active.insert(c);
                    tbs += m;
                    changed = true;
                }
                (0, false) => {
                    active.remove(&c);
                    tbs -= m;
                    changed = true;
                }
                (_, true) => multi += 1,
                (_, false) => multi -= 1,
            }
            i += 1;
        }
        if changed {
            key = active.iter().copied().collect();
        }
        prev = pos;
    }
    let mut groups: Vec<(Vec<u32>, u64)> = weights.into_iter().collect();
    groups.sort_unstable();
    let mut groups_of = vec![Vec::new(); p.classes.len()];
    for (g, (cs, _)) in groups.iter().enumerate() {
        for &c in cs {
            groups_of[c as usize].push(g as u32);
        }
    }
    ParamGroups {
        class_of,
        groups,
        groups_of,
    }
}

/// Builds the locality graph and the statistics of `fp`.
pub fn build(fp: &Footprints) -> (Graph, Stats) {
    let n = fp.num_tbs;
    let mut cats = Categories::default();
    let (mut shared_refs, mut distinct) = (0u64, 0u64);
    let pgs: Vec<ParamGroups> = fp
        .params
        .iter()
        .map(|p| sweep(p, n, &mut cats, &mut shared_refs, &mut distinct))
        .collect();
    let rows: Vec<Vec<(u32, u64)>> = (0..n)
        .into_par_iter()
        .map_init(
            || (vec![0u64; n as usize], Vec::<u32>::new()),
            |(acc, touched), i| {
                for (pg, p) in pgs.iter().zip(&fp.params) {
                    let c = pg.class_of[i as usize];
                    if c == u32::MAX {
                        continue;
                    }
                    for &g in &pg.groups_of[c as usize] {
                        let (cs, w) = &pg.groups[g as usize];
                        for &c2 in cs {
                            let ms = &p.classes[c2 as usize].members;
                            let from = ms.partition_point(|&j| j <= i);
                            for &j in &ms[from..] {
                                if acc[j as usize] == 0 {
                                    touched.push(j);
                                }
                                acc[j as usize] += w;
                            }
                        }
                    }
                }
                touched.sort_unstable();
                let row = touched
                    .iter()
                    .map(|&j| (j, std::mem::take(&mut acc[j as usize])))
                    .collect();
                touched.clear();
                row
            },
        )
        .collect();
    let mut degree = vec![0u32; n as usize];
    let total_edges: usize = rows.iter().map(Vec::len).sum();
    let mut edges = Vec::with_capacity(total_edges);
    for (i, row) in rows.into_iter().enumerate() {
        for (j, w) in row {
            degree[i] += 1;
            degree[j as usize] += 1;
            edges.push((i as u32, j, w));
        }
    }
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
            1.0 - (2.0 * edges.len() as f64) / nn
        },
        shared_tbs: degree.iter().filter(|&&d| d > 0).count() as u64,
        degree_of_sharing: if total_refs == 0 {
            0.0
        } else {
            shared_refs as f64 / total_refs as f64
        },
        edges: edges.len() as u64,
        categories: cats,
    };
    (Graph { num_tbs: n, edges }, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut want = Vec::new();
        for i in 0..sets.len() {
            for j in i + 1..sets.len() {
                let w = all[i].intersection(&all[j]).count() as u64;
                if w > 0 {
                    want.push((i as u32, j as u32, w));
                }
            }
        }
        assert_eq!(g.edges, want);
        assert_eq!(s.shared_tbs, 4);
        assert_eq!(
            s.total_data_references,
            all.iter().map(|x| x.len() as u64).sum::<u64>()
        );
        // Units: 1,2 inter (one warp each); 3 both (2 warps in TB0/TB1); 4 inter+... TB0 w1,
        // TB1 w1, TB2 w0 -> inter; 5 inter (TB2 and TB5? no: TB5 reads param 1) -> unshared.
        assert_eq!(s.categories.both, 1);
    }
}
