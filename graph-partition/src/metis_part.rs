//! Bridge to METIS (the `metis` crate, vendored METIS 5): induced subgraphs in METIS's CSR,
//! 2-way and k-way partitioning with a fixed seed, and the fallbacks METIS needs.
//!
//! * Weights are `u64` here and `i32` in METIS. When the total weight could overflow METIS's
//!   32-bit sums, every weight is divided by a common factor (rounding up, so no edge
//!   vanishes); the partition objective is unchanged up to rounding.
//! * A (sub)graph without edges, or a METIS answer with an empty side, is split into
//!   contiguous balanced ranges of its (sorted) vertex list instead.
//! * METIS is deterministic for a given seed; every call here passes the caller's seed.
//!   Its random generator (GKlib) is process-global and not thread-safe, so concurrent
//!   calls would interleave their random streams: every METIS call holds [`METIS_LOCK`].

use crate::error::{Error, Result};
use crate::graph::Graph;
use metis::option::Seed;
use metis::option::UFactor;
use metis::Idx;

/// The induced subgraph of a vertex set in METIS's CSR arrays.
struct SubCsr {
    xadj: Vec<Idx>,
    adjncy: Vec<Idx>,
    adjwgt: Vec<Idx>,
}

/// Scratch space shared by repeated partitioning calls on one graph.
pub(crate) struct Partitioner<'g> {
    g: &'g Graph,
    local: Vec<u32>,
    scale: u64,
    seed: i32,
}

const NONE: u32 = u32::MAX;

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
            local: vec![NONE; g.num_tbs() as usize],
            scale,
            seed,
        }
    }

    fn induced(&mut self, vertices: &[u32]) -> SubCsr {
        for (k, &v) in vertices.iter().enumerate() {
            self.local[v as usize] = k as u32;
        }
        let mut xadj = Vec::with_capacity(vertices.len() + 1);
        let mut adjncy = Vec::new();
        let mut adjwgt = Vec::new();
        xadj.push(0);
        for &v in vertices {
            for (u, w) in self.g.neighbours(v) {
                let lu = self.local[u as usize];
                if lu != NONE {
                    adjncy.push(lu as Idx);
                    let scaled = w.div_ceil(self.scale).clamp(1, Idx::MAX as u64);
                    adjwgt.push(scaled as Idx);
                }
            }
            xadj.push(adjncy.len() as Idx);
        }
        for &v in vertices {
            self.local[v as usize] = NONE;
        }
        SubCsr {
            xadj,
            adjncy,
            adjwgt,
        }
    }

    /// Splits `vertices` (sorted) into two balanced halves minimising the cut weight.
    /// Each half keeps ascending TB order. METIS's part labels are arbitrary, so the half
    /// holding the smallest TB id is returned first (the left child).
    pub(crate) fn bisect(&mut self, vertices: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
        let n = vertices.len();
        if n < 2 {
            return Ok((vertices.to_vec(), Vec::new()));
        }
        let csr = self.induced(vertices);
        let fallback = || {
            let half = n.div_ceil(2);
            (vertices[..half].to_vec(), vertices[half..].to_vec())
        };
        if csr.adjncy.is_empty() {
            return Ok(fallback());
        }
        let mut part = vec![0 as Idx; n];
        let _guard = metis_guard();
        let result = metis::Graph::new(1, 2, &csr.xadj, &csr.adjncy)
            .map_err(metis::Error::from)
            .map(|m| m.set_adjwgt(&csr.adjwgt).set_option(Seed(self.seed)))
            .and_then(|m| m.part_recursive(&mut part));
        if let Err(e) = result {
            return Err(Error::Metis {
                num_tbs: n,
                parts: 2,
                message: e.to_string(),
            });
        }
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for (k, &v) in vertices.iter().enumerate() {
            if part[k] == 0 {
                left.push(v);
            } else {
                right.push(v);
            }
        }
        if left.is_empty() || right.is_empty() {
            return Ok(fallback());
        }
        if right[0] < left[0] {
            std::mem::swap(&mut left, &mut right);
        }
        Ok((left, right))
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
        let all: Vec<u32> = (0..n as u32).collect();
        let csr = self.induced(&all);
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

/// Labels TBs `0..n` with `k` contiguous, balanced ranges (sizes differ by at most one,
/// larger ranges first).
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

    #[test]
    fn ranges_are_balanced() {
        assert_eq!(contiguous_ranges(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(contiguous_ranges(2, 4), vec![0..1, 1..2]);
        assert!(contiguous_ranges(0, 4).is_empty());
    }

    #[test]
    fn bisect_cuts_the_light_edge() {
        // Two heavy pairs {0,2} and {1,3} joined by light edges: the cut must separate them.
        let g = Graph::from_edges(4, &[(0, 2, 100), (1, 3, 100), (0, 1, 1), (2, 3, 1)]).unwrap();
        let mut p = Partitioner::new(&g, 1);
        let (a, b) = p.bisect(&[0, 1, 2, 3]).unwrap();
        let mut sides = [a, b];
        sides.sort();
        assert_eq!(sides, [vec![0, 2], vec![1, 3]]);
    }

    #[test]
    fn edgeless_graph_falls_back_to_contiguous() {
        let g = Graph::empty(5);
        let mut p = Partitioner::new(&g, 1);
        assert_eq!(
            p.bisect(&[0, 1, 2, 3, 4]).unwrap(),
            (vec![0, 1, 2], vec![3, 4])
        );
        assert_eq!(p.kway(2, 30).unwrap(), vec![0, 0, 0, 1, 1]);
    }
}
