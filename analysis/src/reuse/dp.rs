//! Reuse ratios of kernels that launch kernels (dynamic parallelism, Tang et al., POMACS
//! 2018 §4): Eq. 1 (self reuse), Eq. 2 (parent-child) and Eq. 3 (directed pair) at kernel,
//! TB and warp granularity, each with the paper's 10-bin histogram.
//!
//! The input is what a run observed ([`GridTrace`]: every grid of the run, the host's and
//! those launched from the device, with who launched it and each warp's accesses as a
//! multiset of data units); the ratios need no order, so a stream is its sorted
//! `(unit, count)` list ([`Counts`]). The paper's definitions, with `M` a trace of
//! data-block accesses:
//! - Eq. 1, `R_k = 1 - uniq(M_k) / size(M_k)`, per grid, per TB, per warp;
//! - Eq. 2, `R_p-c = size(x in M_c | x in uniq(M_p) ∩ uniq(M_c)) / size(M_c)`: the share of
//!   the child's accesses whose block the parent also touched. Kernel: a child grid against
//!   the grid that launched it (a grandchild's parent is the child, §4.1). TB: each TB of a
//!   child grid against the parent TB that launched that grid (§4.2). Warp: each warp of a
//!   child grid against the warp of the launching thread (the paper stops at TBs for Eq. 2;
//!   this is the same definition one level down);
//! - Eq. 3, `R_cx-cy = size(x in M_cx | x in uniq(M_cx) ∩ uniq(M_cy)) / size(M_cx)`, over
//!   ordered pairs. Kernel: sibling grids (launched by the same parent TB, §4.1). TB: pairs
//!   of TBs of one grid (intra-kernel-WG) and pairs of TBs of two sibling grids
//!   (sibling-WG, §4.2). Warp: pairs of warps of one TB (inter-wavefront, §4.3, within the
//!   TB, the warps a scheduler can bring together).
//!
//! Pair histograms count the ordered pairs that share at least one unit; the pairs that share
//! none (ratio 0, bin b0) are counted beside them (`pairs_without_sharing`), since on large
//! grids they are almost all pairs. A stream with no access has no ratio (`empty`). Groups of
//! pairs whose inverted index would cost more than [`super::PAIR_BUDGET`] unit comparisons
//! are skipped and counted (`groups_skipped`).

use serde::Serialize;

use super::{ratio_bin, RatioHistogram, PAIR_BUDGET};
use crate::footprint::FxMap;

/// A stream's accesses as sorted distinct units with their access counts.
pub type Counts = Vec<(u64, u64)>;

/// The thread that launched a grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parent {
    /// Index of the launching grid in the run's grids.
    pub grid: u32,
    /// Linear id of the launching TB.
    pub tb: u64,
    /// Warp of the launching thread.
    pub warp: u32,
    /// PTX line of the launch (0 when unknown).
    pub line: u32,
}

/// What a run observed of one grid.
#[derive(Clone, Debug, Default)]
pub struct GridTrace {
    /// Kernel name.
    pub kernel: String,
    /// Grid shape.
    pub grid: [u32; 3],
    /// Block shape.
    pub block: [u32; 3],
    /// Nesting depth below the host's launch.
    pub depth: u32,
    /// Who launched it (`None`: the host).
    pub parent: Option<Parent>,
    /// A tail launch.
    pub tail: bool,
    /// Per TB (linear id), per warp, the accesses.
    pub tbs: Vec<Vec<Counts>>,
}

/// Ratios of one kind over a set of streams (or ordered pairs of streams).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct RatioStats {
    /// Streams (or pairs) with a ratio: the histogram's total.
    pub count: u64,
    /// Streams with no access (no ratio).
    pub empty: u64,
    /// Accesses summed over the counted streams (`size(M)` of the equation).
    pub accesses: u64,
    /// The equation's numerator summed (Eq. 1: `size - uniq`; Eq. 2 and 3: the accesses to
    /// shared units).
    pub reused: u64,
    /// `reused / accesses` (0 without accesses): the ratio of the streams pooled.
    pub pooled: f64,
    /// Mean of the per-stream ratios (0 without any).
    pub mean: f64,
    /// Per-stream ratios in 10 bins of 0.1 (b9 includes 1).
    pub histogram: RatioHistogram,
}

impl RatioStats {
    fn add(&mut self, reused: u64, accesses: u64) {
        if accesses == 0 {
            self.empty += 1;
            return;
        }
        let r = reused as f64 / accesses as f64;
        self.count += 1;
        self.accesses += accesses;
        self.reused += reused;
        self.mean += r;
        self.histogram[ratio_bin(r)] += 1;
    }

    fn finish(&mut self) {
        if self.accesses > 0 {
            self.pooled = self.reused as f64 / self.accesses as f64;
        }
        if self.count > 0 {
            self.mean /= self.count as f64;
        }
    }
}

/// Eq. 3 over ordered pairs.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PairStats {
    /// The pairs sharing at least one unit.
    #[serde(flatten)]
    pub sharing: RatioStats,
    /// Ordered pairs `(x, y)`, `x` with accesses, that share no unit (ratio 0).
    pub pairs_without_sharing: u64,
    /// Groups not counted because their pairs cost too much.
    pub groups_skipped: u64,
}

/// Kernel (grid) granularity.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct KernelLevel {
    /// Eq. 1 per grid.
    pub self_reuse: RatioStats,
    /// Eq. 2 per child grid against its parent grid.
    pub parent_child: RatioStats,
    /// Eq. 3 over ordered pairs of sibling grids.
    pub sibling: PairStats,
}

/// TB granularity.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TbLevel {
    /// Eq. 1 per TB of every grid.
    pub self_reuse: RatioStats,
    /// Eq. 3 over ordered pairs of TBs of one grid.
    pub intra_kernel: PairStats,
    /// Eq. 2 per TB of a child grid against the launching TB.
    pub parent_child: RatioStats,
    /// Eq. 3 over ordered pairs of TBs of two sibling grids.
    pub sibling: PairStats,
}

/// Warp granularity.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct WarpLevel {
    /// Eq. 1 per warp of every grid.
    pub self_reuse: RatioStats,
    /// Eq. 3 over ordered pairs of warps of one TB.
    pub inter_warp: PairStats,
    /// Eq. 2 per warp of a child grid against the launching warp.
    pub parent_child: RatioStats,
}

/// One kernel's grids summed.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct KernelSummary {
    /// Kernel name.
    pub kernel: String,
    /// Grids of the kernel that ran.
    pub grids: u64,
    /// TBs of those grids.
    pub tbs: u64,
    /// Eq. 1 over its grids.
    pub self_reuse: RatioStats,
    /// Eq. 2 over its grids launched from the device.
    pub parent_child: RatioStats,
}

/// One grid.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct GridSummary {
    /// Run-order index (0: the host's launch).
    pub id: u32,
    /// Kernel name.
    pub kernel: String,
    /// Grid shape.
    pub grid: [u32; 3],
    /// Block shape.
    pub block: [u32; 3],
    /// Nesting depth.
    pub depth: u32,
    /// Launching grid, TB, warp and PTX line (`None`: the host).
    pub parent: Option<[u64; 4]>,
    /// A tail launch.
    pub tail: bool,
    /// Accesses of the grid.
    pub accesses: u64,
    /// Distinct units.
    pub unique: u64,
    /// Eq. 1.
    pub self_reuse_ratio: f64,
    /// Eq. 2 against the parent grid (`None` for the host's launch or without accesses).
    pub parent_child_ratio: Option<f64>,
}

/// Most grids listed one by one in [`DpReuse::grid_list`].
pub const GRIDS_LISTED: usize = 64;

/// The reuse ratios of one run with its device launches.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DpReuse {
    /// Grids run, the host's included.
    pub grids: u64,
    /// Grids launched from the device.
    pub device_launches: u64,
    /// Deepest nesting below the host's launch.
    pub max_depth: u32,
    /// Kernel granularity.
    pub kernel: KernelLevel,
    /// TB granularity.
    pub tb: TbLevel,
    /// Warp granularity.
    pub warp: WarpLevel,
    /// Per kernel, in order of first run.
    pub per_kernel: Vec<KernelSummary>,
    /// The first [`GRIDS_LISTED`] grids in run order.
    pub grid_list: Vec<GridSummary>,
}

/// The multiset union of `parts`.
pub fn merge_counts<'a>(parts: impl IntoIterator<Item = &'a Counts>) -> Counts {
    let mut all: Vec<(u64, u64)> = parts.into_iter().flatten().copied().collect();
    all.sort_unstable();
    let mut out: Counts = Vec::with_capacity(all.len());
    for (u, c) in all {
        match out.last_mut() {
            Some((x, n)) if *x == u => *n += c,
            _ => out.push((u, c)),
        }
    }
    out
}

/// Accesses of `c`.
fn size(c: &Counts) -> u64 {
    c.iter().map(|x| x.1).sum()
}

/// Accesses of `child` to units `parent` holds (Eq. 2's numerator).
pub fn shared_accesses(child: &Counts, parent: &Counts) -> u64 {
    let (mut j, mut n) = (0usize, 0u64);
    for &(u, c) in child {
        while j < parent.len() && parent[j].0 < u {
            j += 1;
        }
        if j == parent.len() {
            break;
        }
        if parent[j].0 == u {
            n += c;
        }
    }
    n
}

/// Eq. 3 over the ordered pairs `(x, y)` of `items` with `class[x] != class[y]`, from an
/// inverted index unit -> items (pairs sharing nothing are never compared).
fn directed_pairs(items: &[&Counts], class: &[u32], out: &mut PairStats) {
    let n = items.len();
    if n < 2 {
        if let Some(x) = items.first() {
            if x.is_empty() {
                out.sharing.empty += 1;
            }
        }
        return;
    }
    let mut index: FxMap<u64, Vec<(u32, u64)>> = FxMap::default();
    for (i, c) in items.iter().enumerate() {
        for &(u, k) in c.iter() {
            index.entry(u).or_default().push((i as u32, k));
        }
    }
    let cost: u64 = index.values().map(|o| (o.len() as u64).pow(2)).sum();
    if cost > PAIR_BUDGET {
        out.groups_skipped += 1;
        return;
    }
    let mut per_class: FxMap<u32, u64> = FxMap::default();
    for &c in class {
        *per_class.entry(c).or_default() += 1;
    }
    let mut shared: FxMap<(u32, u32), u64> = FxMap::default();
    for owners in index.values() {
        for &(x, k) in owners {
            for &(y, _) in owners {
                if class[x as usize] != class[y as usize] {
                    *shared.entry((x, y)).or_default() += k;
                }
            }
        }
    }
    let sizes: Vec<u64> = items.iter().map(|c| size(c)).collect();
    let mut candidates = 0u64;
    for (x, &s) in sizes.iter().enumerate() {
        if s == 0 {
            out.sharing.empty += 1;
        } else {
            candidates += n as u64 - per_class[&class[x]];
        }
    }
    // Sorted so the float sums do not depend on the hash order.
    let mut pairs: Vec<((u32, u32), u64)> = shared.into_iter().collect();
    pairs.sort_unstable();
    for ((x, _), k) in &pairs {
        out.sharing.add(*k, sizes[*x as usize]);
    }
    // `add` counted no empty stream: every pair has accesses on its `x` side.
    out.pairs_without_sharing += candidates - pairs.len() as u64;
}

/// Eq. 1's numerator and denominator of `c`.
fn self_terms(c: &Counts) -> (u64, u64) {
    let s = size(c);
    (s - c.len() as u64, s)
}

/// The ratios of a run's grids (`grids[0]` the host's launch, the others in run order, each
/// parent before its children).
pub fn compute(grids: &[GridTrace]) -> DpReuse {
    let mut out = DpReuse {
        grids: grids.len() as u64,
        device_launches: grids.iter().filter(|g| g.parent.is_some()).count() as u64,
        max_depth: grids.iter().map(|g| g.depth).max().unwrap_or(0),
        ..DpReuse::default()
    };
    // Per grid: per TB merged counts, and the grid's.
    let tb_counts: Vec<Vec<Counts>> = grids
        .iter()
        .map(|g| g.tbs.iter().map(merge_counts).collect())
        .collect();
    let grid_counts: Vec<Counts> = tb_counts.iter().map(merge_counts).collect();
    let empty = Counts::new();
    let mut kernel_index: Vec<(String, usize)> = Vec::new();
    for (gi, g) in grids.iter().enumerate() {
        let gc = &grid_counts[gi];
        let (r, s) = self_terms(gc);
        out.kernel.self_reuse.add(r, s);
        let k = match kernel_index.iter().find(|(n, _)| *n == g.kernel) {
            Some(&(_, k)) => k,
            None => {
                kernel_index.push((g.kernel.clone(), out.per_kernel.len()));
                out.per_kernel.push(KernelSummary {
                    kernel: g.kernel.clone(),
                    ..KernelSummary::default()
                });
                out.per_kernel.len() - 1
            }
        };
        let ks = &mut out.per_kernel[k];
        ks.grids += 1;
        ks.tbs += g.tbs.len() as u64;
        ks.self_reuse.add(r, s);
        let mut pc_ratio = None;
        if let Some(p) = g.parent {
            let pg = p.grid as usize;
            let num = shared_accesses(gc, grid_counts.get(pg).unwrap_or(&empty));
            out.kernel.parent_child.add(num, s);
            ks.parent_child.add(num, s);
            pc_ratio = (s > 0).then(|| num as f64 / s as f64);
            let ptb = grids
                .get(pg)
                .and_then(|pgr| pgr.tbs.get(p.tb as usize))
                .map(|_| &tb_counts[pg][p.tb as usize])
                .unwrap_or(&empty);
            let pwarp = grids
                .get(pg)
                .and_then(|pgr| pgr.tbs.get(p.tb as usize))
                .and_then(|ws| ws.get(p.warp as usize))
                .unwrap_or(&empty);
            for (t, ws) in g.tbs.iter().enumerate() {
                let tc = &tb_counts[gi][t];
                out.tb.parent_child.add(shared_accesses(tc, ptb), size(tc));
                for w in ws {
                    out.warp
                        .parent_child
                        .add(shared_accesses(w, pwarp), size(w));
                }
            }
        }
        for (t, ws) in g.tbs.iter().enumerate() {
            let (r, s) = self_terms(&tb_counts[gi][t]);
            out.tb.self_reuse.add(r, s);
            for w in ws {
                let (r, s) = self_terms(w);
                out.warp.self_reuse.add(r, s);
            }
            let warps: Vec<&Counts> = ws.iter().collect();
            let class: Vec<u32> = (0..warps.len() as u32).collect();
            directed_pairs(&warps, &class, &mut out.warp.inter_warp);
        }
        let tbs: Vec<&Counts> = tb_counts[gi].iter().collect();
        let class: Vec<u32> = (0..tbs.len() as u32).collect();
        directed_pairs(&tbs, &class, &mut out.tb.intra_kernel);
        if gi < GRIDS_LISTED {
            out.grid_list.push(GridSummary {
                id: gi as u32,
                kernel: g.kernel.clone(),
                grid: g.grid,
                block: g.block,
                depth: g.depth,
                parent: g.parent.map(|p| {
                    [
                        u64::from(p.grid),
                        p.tb,
                        u64::from(p.warp),
                        u64::from(p.line),
                    ]
                }),
                tail: g.tail,
                accesses: s,
                unique: gc.len() as u64,
                self_reuse_ratio: if s == 0 { 0.0 } else { r as f64 / s as f64 },
                parent_child_ratio: pc_ratio,
            });
        }
    }
    // Siblings: the grids each parent TB launched, in run order.
    let mut families: Vec<((u32, u64), Vec<usize>)> = Vec::new();
    let mut family_of: FxMap<(u32, u64), usize> = FxMap::default();
    for (gi, g) in grids.iter().enumerate() {
        if let Some(p) = g.parent {
            let key = (p.grid, p.tb);
            let f = *family_of.entry(key).or_insert_with(|| {
                families.push((key, Vec::new()));
                families.len() - 1
            });
            families[f].1.push(gi);
        }
    }
    for (_, kids) in &families {
        if kids.len() < 2 {
            continue;
        }
        let items: Vec<&Counts> = kids.iter().map(|&g| &grid_counts[g]).collect();
        let class: Vec<u32> = (0..items.len() as u32).collect();
        directed_pairs(&items, &class, &mut out.kernel.sibling);
        let mut items: Vec<&Counts> = Vec::new();
        let mut class: Vec<u32> = Vec::new();
        for (k, &g) in kids.iter().enumerate() {
            for c in &tb_counts[g] {
                items.push(c);
                class.push(k as u32);
            }
        }
        directed_pairs(&items, &class, &mut out.tb.sibling);
    }
    for s in [
        &mut out.kernel.self_reuse,
        &mut out.kernel.parent_child,
        &mut out.kernel.sibling.sharing,
        &mut out.tb.self_reuse,
        &mut out.tb.intra_kernel.sharing,
        &mut out.tb.parent_child,
        &mut out.tb.sibling.sharing,
        &mut out.warp.self_reuse,
        &mut out.warp.inter_warp.sharing,
        &mut out.warp.parent_child,
    ] {
        s.finish();
    }
    for k in &mut out.per_kernel {
        k.self_reuse.finish();
        k.parent_child.finish();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(units: &[u64]) -> Counts {
        let v: Vec<Counts> = units.iter().map(|&u| vec![(u, 1)]).collect();
        merge_counts(&v)
    }

    /// The paper's Fig. 6 example (§4.1): c1 has 100 accesses, c2 50; 30 accesses of c2 and
    /// 40 of c1 go to the blocks they share, so R(c2->c1) = 0.6 and R(c1->c2) = 0.4.
    #[test]
    fn sibling_pair_example_of_the_paper() {
        // Shared blocks 0..10: c1 reads each 4 times (40), c2 3 times (30); c1 reads 60
        // other blocks once, c2 20 others once.
        let mut c1: Vec<u64> = (0..10).flat_map(|u| [u; 4]).collect();
        c1.extend(100..160);
        let mut c2: Vec<u64> = (0..10).flat_map(|u| [u; 3]).collect();
        c2.extend(200..220);
        let (c1, c2) = (counts(&c1), counts(&c2));
        let mut p = PairStats::default();
        directed_pairs(&[&c1, &c2], &[0, 1], &mut p);
        p.sharing.finish();
        assert_eq!(p.sharing.count, 2);
        assert_eq!(p.sharing.histogram[4], 1);
        assert_eq!(p.sharing.histogram[6], 1);
        assert_eq!((p.sharing.reused, p.sharing.accesses), (70, 150));
        assert_eq!(shared_accesses(&c2, &c1), 30);
        assert_eq!(shared_accesses(&c1, &c2), 40);
    }

    /// A parent grid of one TB (one warp) and one child grid of two TBs: Eq. 1, 2, 3 by hand.
    #[test]
    fn parent_child_by_hand() {
        let parent = GridTrace {
            kernel: "p".into(),
            tbs: vec![vec![counts(&[1, 2, 2, 3])]],
            ..GridTrace::default()
        };
        let child = GridTrace {
            kernel: "c".into(),
            depth: 1,
            parent: Some(Parent {
                grid: 0,
                tb: 0,
                warp: 0,
                line: 0,
            }),
            // TB 0 reads 1, 1, 9 (2 of 3 accesses reuse the parent's); TB 1 reads 9, 8.
            tbs: vec![vec![counts(&[1, 1, 9])], vec![counts(&[9, 8])]],
            ..GridTrace::default()
        };
        let r = compute(&[parent, child]);
        assert_eq!(r.device_launches, 1);
        // Grid self reuse: parent 1 - 3/4, child 1 - 3/5.
        assert_eq!(r.kernel.self_reuse.histogram[2], 1);
        assert_eq!(r.kernel.self_reuse.histogram[4], 1);
        // Child grid vs parent grid: 2 of 5.
        assert_eq!(
            (r.kernel.parent_child.reused, r.kernel.parent_child.accesses),
            (2, 5)
        );
        // Child TBs vs the parent TB: 2/3 and 0/2.
        assert_eq!(r.tb.parent_child.histogram[6], 1);
        assert_eq!(r.tb.parent_child.histogram[0], 1);
        assert_eq!(r.warp.parent_child, r.tb.parent_child);
        // Intra-kernel TB pairs of the child: R(0->1) = 1/3, R(1->0) = 1/2.
        assert_eq!(r.tb.intra_kernel.sharing.histogram[3], 1);
        assert_eq!(r.tb.intra_kernel.sharing.histogram[5], 1);
        assert_eq!(r.tb.intra_kernel.pairs_without_sharing, 0);
        assert_eq!(r.per_kernel.len(), 2);
    }
}
