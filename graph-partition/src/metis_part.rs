//! Bridge to METIS (the `metis` crate, vendored METIS 5): subgraphs in METIS's CSR, 2-way
//! and k-way partitioning with a fixed seed, and the fallbacks METIS needs.
//!
//! * Weights are `u64` here and `i32` in METIS. When the total weight could overflow METIS's
//!   32-bit sums, every weight is divided by a common factor (rounding up, so no edge
//!   vanishes); the partition objective is unchanged up to rounding.
//! * Recursive bisection works on [`SubGraph`]s: a part's TBs with their induced subgraph.
//!   [`Partitioner::split`] builds each half's subgraph from its parent's (the rows of the
//!   parent filtered to the half), never from the full graph, so a level of the bisection
//!   tree costs the edges left inside its parts, not all edges of the graph. The result is
//!   the same CSR, bit for bit, as inducing the half from the full graph (a test checks it):
//!   vertices in ascending TB order, each row in ascending neighbour order.
//! * A (sub)graph without edges, or a METIS answer with an empty side, is split into
//!   contiguous balanced ranges of its (sorted) vertex list instead; a disconnected one
//!   along its components in TB order when that balances ([`component_split`]).
//! * METIS is deterministic for a given seed; every call here passes the caller's seed, and
//!   METIS re-seeds its generator at the start of every call, so a call's answer depends on
//!   its input only. The generator's state is a process-global (vendored GKlib
//!   `random.c`: `static uint64_t mt[NN]; static int mti`, not `__thread` like GKlib's
//!   other globals), so two concurrent calls would race on it: every METIS call holds
//!   [`METIS_LOCK`].

use crate::error::{Error, Result};
use crate::graph::Graph;
use metis::option::Seed;
use metis::option::UFactor;
use metis::Idx;

/// A part of the graph: its TBs in ascending order and, unless built without edges, their
/// induced subgraph in METIS's CSR over local ids `0..tbs.len()` (row `k` is `tbs[k]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SubGraph {
    tbs: Vec<u32>,
    /// Empty when the subgraph was built without edges (a leaf, never bisected).
    xadj: Vec<Idx>,
    adjncy: Vec<Idx>,
    adjwgt: Vec<Idx>,
}

impl SubGraph {
    /// The part's TBs, ascending.
    #[cfg(test)]
    fn tbs(&self) -> &[u32] {
        &self.tbs
    }

    /// The part's TBs, ascending, dropping the edges.
    pub(crate) fn into_tbs(self) -> Vec<u32> {
        self.tbs
    }

    /// Number of TBs.
    pub(crate) fn len(&self) -> usize {
        self.tbs.len()
    }

    fn has_csr(&self) -> bool {
        self.xadj.len() == self.tbs.len() + 1
    }
}

/// Runs METIS on subgraphs of one graph with one seed and one weight scale.
pub(crate) struct Partitioner<'g> {
    g: &'g Graph,
    scale: u64,
    seed: i32,
    /// METIS part labels, reused between calls.
    labels: Vec<Idx>,
    /// Parent-local id -> child-local id, reused between calls.
    renumber: Vec<Idx>,
}

/// Serialises METIS calls (its random state is global).
static METIS_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn metis_guard() -> std::sync::MutexGuard<'static, ()> {
    // A panic while holding the lock leaves no METIS state behind worth protecting.
    METIS_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<'g> Partitioner<'g> {
    /// Prepares to partition subsets of `g` with METIS seed `seed`.
    pub(crate) fn new(g: &'g Graph, seed: i32) -> Partitioner<'g> {
        // Keep the sum of all directed weights below 2^30.
        let total: u128 = 2 * g.total_weight();
        let limit: u128 = 1 << 30;
        let scale = if total > limit {
            u64::try_from(total.div_ceil(limit)).unwrap_or(u64::MAX)
        } else {
            1
        };
        Partitioner {
            g,
            scale,
            seed,
            labels: Vec::new(),
            renumber: Vec::new(),
        }
    }

    fn metis_weight(&self, w: u64) -> Idx {
        w.div_ceil(self.scale).clamp(1, Idx::MAX as u64) as Idx
    }

    /// The whole graph as a [`SubGraph`] (TB ids are local ids).
    pub(crate) fn whole(&self) -> SubGraph {
        let n = self.g.num_tbs();
        let entries = usize::try_from(2 * self.g.num_edges()).unwrap_or(0);
        let mut xadj = Vec::with_capacity(n as usize + 1);
        let mut adjncy = Vec::with_capacity(entries);
        let mut adjwgt = Vec::with_capacity(entries);
        xadj.push(0);
        for tb in 0..n {
            for (ns, ws) in self.g.full_row(tb) {
                adjncy.extend(ns.iter().map(|&u| u as Idx));
                adjwgt.extend(ws.iter().map(|&w| self.metis_weight(w)));
            }
            xadj.push(adjncy.len() as Idx);
        }
        SubGraph {
            tbs: (0..n).collect(),
            xadj,
            adjncy,
            adjwgt,
        }
    }

    /// Splits `part` into two balanced halves minimising the cut weight (METIS 2-way
    /// recursive partitioning) and returns them as (left, right): the left half holds the
    /// part's smallest TB (METIS's 0/1 labels carry no meaning). Each half keeps ascending
    /// TB order; a half gets its subgraph's edges only if `needs_edges(its size)`, since
    /// only a half that will be split again needs them. A part of fewer than two TBs comes
    /// back whole as the left half.
    pub(crate) fn split(
        &mut self,
        part: SubGraph,
        needs_edges: impl Fn(usize) -> bool,
    ) -> Result<(SubGraph, SubGraph)> {
        let n = part.len();
        if n < 2 {
            return Ok((part, SubGraph::from_tbs(Vec::new())));
        }
        debug_assert!(part.has_csr(), "bisecting a part built without edges");
        self.labels.clear();
        self.labels.resize(n, 0);
        let mut contiguous = part.adjncy.is_empty();
        let by_components = !contiguous && component_split(&part, &mut self.labels);
        if !contiguous && !by_components {
            let _guard = metis_guard();
            let result = metis::Graph::new(1, 2, &part.xadj, &part.adjncy)
                .map_err(metis::Error::from)
                .map(|m| m.set_adjwgt(&part.adjwgt).set_option(Seed(self.seed)))
                .and_then(|m| m.part_recursive(&mut self.labels));
            if let Err(e) = result {
                return Err(Error::Metis {
                    num_tbs: n,
                    parts: 2,
                    message: e.to_string(),
                });
            }
            let ones = self.labels.iter().filter(|&&l| l != 0).count();
            contiguous = ones == 0 || ones == n;
        }
        if contiguous {
            let half = n.div_ceil(2);
            for (k, l) in self.labels.iter_mut().enumerate() {
                *l = Idx::from(k >= half);
            }
        }
        let left_label = self.labels[0];
        let left = self.half(&part, left_label, &needs_edges);
        let right = self.half(&part, 1 - left_label, &needs_edges);
        Ok((left, right))
    }

    /// The vertices of `part` labelled `label`, with their induced subgraph if
    /// `needs_edges(size)`.
    fn half(
        &mut self,
        part: &SubGraph,
        label: Idx,
        needs_edges: &impl Fn(usize) -> bool,
    ) -> SubGraph {
        let n = part.len();
        self.renumber.clear();
        self.renumber.resize(n, -1);
        let mut tbs = Vec::new();
        for k in 0..n {
            if self.labels[k] == label {
                self.renumber[k] = tbs.len() as Idx;
                tbs.push(part.tbs[k]);
            }
        }
        if !needs_edges(tbs.len()) {
            return SubGraph::from_tbs(tbs);
        }
        let mut xadj = Vec::with_capacity(tbs.len() + 1);
        let mut adjncy = Vec::new();
        let mut adjwgt = Vec::new();
        xadj.push(0);
        for k in 0..n {
            if self.labels[k] != label {
                continue;
            }
            let row = part.xadj[k] as usize..part.xadj[k + 1] as usize;
            for (&u, &w) in part.adjncy[row.clone()].iter().zip(&part.adjwgt[row]) {
                let lu = self.renumber[u as usize];
                if lu >= 0 {
                    adjncy.push(lu);
                    adjwgt.push(w);
                }
            }
            xadj.push(adjncy.len() as Idx);
        }
        adjncy.shrink_to_fit();
        adjwgt.shrink_to_fit();
        SubGraph {
            tbs,
            xadj,
            adjncy,
            adjwgt,
        }
    }

    /// Partitions the whole graph into `k` parts with METIS k-way (imbalance tolerance
    /// `ufactor`/1000), returning the part of every TB.
    pub(crate) fn kway(&mut self, k: u32, ufactor: u32) -> Result<Vec<u32>> {
        let n = self.g.num_tbs() as usize;
        if k <= 1 || n == 0 {
            return Ok(vec![0; n]);
        }
        if k as usize >= n {
            return Ok((0..n as u32).collect());
        }
        let csr = self.whole();
        if csr.adjncy.is_empty() {
            return Ok(contiguous_labels(n, k));
        }
        let mut part = vec![0 as Idx; n];
        let _guard = metis_guard();
        let result = metis::Graph::new(1, k as Idx, &csr.xadj, &csr.adjncy)
            .map_err(metis::Error::from)
            .map(|m| {
                m.set_adjwgt(&csr.adjwgt)
                    .set_option(Seed(self.seed))
                    .set_option(UFactor(ufactor as Idx))
            })
            .and_then(|m| m.part_kway(&mut part));
        if let Err(e) = result {
            return Err(Error::Metis {
                num_tbs: n,
                parts: k as usize,
                message: e.to_string(),
            });
        }
        Ok(part.iter().map(|&p| p as u32).collect())
    }
}

impl SubGraph {
    fn from_tbs(tbs: Vec<u32>) -> SubGraph {
        SubGraph {
            tbs,
            xadj: Vec::new(),
            adjncy: Vec::new(),
            adjwgt: Vec::new(),
        }
    }
}

/// Labels TBs `0..n` with `k` contiguous, balanced ranges (sizes differ by at most one,
/// larger ranges first).
/// Bisects a disconnected `part` along its connected components, when that can be balanced:
/// components in the order of their smallest TB, the first ones (left, label 0) up to half
/// of the TBs, accepted when the left side then holds `floor(n/2)` or `ceil(n/2)` TBs
/// (METIS's own balance for a bisection). Every such split cuts no edge, the minimum METIS
/// also reaches, but METIS picks one of the many zero-cut splits at random, which scatters
/// TBs that share nothing (backprop's pairs of TBs reading one line: groups such as
/// `[0, 1, 2100, 2101, 2209]`) and so moves each SM's requests to other L2 slices and DRAM
/// rows than LRR's for no locality gain; splitting along components in id order keeps such
/// TBs in LRR's order. Returns whether `labels` was filled.
fn component_split(part: &SubGraph, labels: &mut [Idx]) -> bool {
    let n = part.len();
    // Union-find over local ids; roots are the smallest id of each component.
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    for v in 0..n {
        let (a, b) = (part.xadj[v] as usize, part.xadj[v + 1] as usize);
        for &u in &part.adjncy[a..b] {
            let (ru, rv) = (root(&mut parent, u as usize), root(&mut parent, v));
            if ru != rv {
                let (lo, hi) = (ru.min(rv), ru.max(rv));
                parent[hi] = lo;
            }
        }
    }
    let mut size = vec![0usize; n];
    let mut roots = Vec::new();
    for v in 0..n {
        let r = root(&mut parent, v);
        if size[r] == 0 {
            roots.push(r);
        }
        size[r] += 1;
    }
    if roots.len() < 2 {
        return false;
    }
    // Roots are discovered in ascending order of their smallest member.
    let (lo, hi) = (n / 2, n.div_ceil(2));
    let mut left = 0;
    let mut side = vec![1 as Idx; n];
    for &r in &roots {
        if left >= lo {
            break;
        }
        if left + size[r] > hi {
            return false;
        }
        left += size[r];
        side[r] = 0;
    }
    if left < lo {
        return false;
    }
    for v in 0..n {
        labels[v] = side[root(&mut parent, v)];
    }
    true
}

pub(crate) fn contiguous_labels(n: usize, k: u32) -> Vec<u32> {
    let mut labels = Vec::with_capacity(n);
    for (p, range) in contiguous_ranges(n, k as usize).into_iter().enumerate() {
        labels.extend(range.map(|_| p as u32));
    }
    labels
}

/// `k` contiguous balanced ranges covering `0..n` (the first `n % k` are one longer);
/// empty ranges are omitted.
pub(crate) fn contiguous_ranges(n: usize, k: usize) -> Vec<std::ops::Range<usize>> {
    let k = k.max(1);
    let (base, extra) = (n / k, n % k);
    let mut out = Vec::with_capacity(k);
    let mut start = 0;
    for p in 0..k {
        let len = base + usize::from(p < extra);
        if len > 0 {
            out.push(start..start + len);
        }
        start += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The obvious reference: the subgraph induced by `tbs` (ascending), read from the full
    /// graph.
    fn induced(p: &Partitioner<'_>, tbs: &[u32]) -> SubGraph {
        let mut local = vec![-1; p.g.num_tbs() as usize];
        for (k, &v) in tbs.iter().enumerate() {
            local[v as usize] = k as Idx;
        }
        let mut sub = SubGraph::from_tbs(tbs.to_vec());
        sub.xadj.push(0);
        for &v in tbs {
            for (u, w) in p.g.neighbours(v) {
                if local[u as usize] >= 0 {
                    sub.adjncy.push(local[u as usize]);
                    sub.adjwgt.push(p.metis_weight(w));
                }
            }
            sub.xadj.push(sub.adjncy.len() as Idx);
        }
        sub
    }

    #[test]
    fn ranges_are_balanced() {
        assert_eq!(contiguous_ranges(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(contiguous_ranges(2, 4), vec![0..1, 1..2]);
        assert!(contiguous_ranges(0, 4).is_empty());
    }

    #[test]
    fn split_cuts_the_light_edge() {
        // Two heavy pairs {0,2} and {1,3} joined by light edges: the cut must separate them.
        let g = Graph::from_edges(4, &[(0, 2, 100), (1, 3, 100), (0, 1, 1), (2, 3, 1)]).unwrap();
        let mut p = Partitioner::new(&g, 1);
        let (a, b) = p.split(p.whole(), |_| true).unwrap();
        assert_eq!((a.tbs(), b.tbs()), (&[0, 2][..], &[1, 3][..]));
        assert_eq!(a, induced(&p, &[0, 2]));
        assert_eq!(b, induced(&p, &[1, 3]));
    }

    #[test]
    fn disconnected_part_splits_along_components_in_id_order() {
        // Pairs {0,1}, {2,3}, {4,5}, {6,7} that share nothing with each other: any split
        // along the pairs cuts nothing; the one that keeps TB order is {0..3}, {4..7}.
        let g = Graph::from_edges(8, &[(0, 1, 5), (2, 3, 5), (4, 5, 5), (6, 7, 5)]).unwrap();
        let mut p = Partitioner::new(&g, 1);
        let (a, b) = p.split(p.whole(), |_| true).unwrap();
        assert_eq!((a.tbs(), b.tbs()), (&[0, 1, 2, 3][..], &[4, 5, 6, 7][..]));
        // A component of 5 and one of 1 cannot be balanced this way: METIS decides.
        let g = Graph::from_edges(6, &[(0, 1, 9), (1, 2, 1), (2, 3, 9), (3, 4, 1)]).unwrap();
        let mut p = Partitioner::new(&g, 1);
        let (a, b) = p.split(p.whole(), |_| true).unwrap();
        assert_eq!(a.len() + b.len(), 6);
        assert!(a.len().abs_diff(b.len()) <= 1);
    }

    #[test]
    fn edgeless_graph_falls_back_to_contiguous() {
        let g = Graph::empty(5);
        let mut p = Partitioner::new(&g, 1);
        let (a, b) = p.split(p.whole(), |_| false).unwrap();
        assert_eq!((a.into_tbs(), b.into_tbs()), (vec![0, 1, 2], vec![3, 4]));
        assert_eq!(p.kway(2, 30).unwrap(), vec![0, 0, 0, 1, 1]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every half built from its parent equals the half induced from the full graph,
        /// down the whole bisection tree (so METIS sees the same input either way), with
        /// weights large enough to need scaling.
        #[test]
        fn halves_from_parent_equal_halves_from_full_graph(
            n in 0u32..60,
            edges in proptest::collection::vec((0u32..60, 0u32..60, 1u64..(1 << 40)), 0..200),
        ) {
            let edges: Vec<_> = edges.into_iter().filter(|e| e.0 < n && e.1 < n).collect();
            let g = Graph::from_edges(n, &edges).unwrap();
            let mut p = Partitioner::new(&g, 1);
            let mut stack = vec![p.whole()];
            while let Some(part) = stack.pop() {
                prop_assert_eq!(&part, &induced(&p, part.tbs()));
                if part.len() < 2 {
                    continue;
                }
                let (a, b) = p.split(part, |_| true).unwrap();
                prop_assert!(!a.tbs().is_empty() && !b.tbs().is_empty());
                prop_assert!(a.tbs()[0] < b.tbs()[0]);
                stack.extend([a, b]);
            }
        }
    }
}
