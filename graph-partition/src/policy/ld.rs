//! CTA clustering driven by Locality Descriptors (Vijaykumar et al., ISCA 2018, §4.3,
//! Algorithm 1).
//!
//! Input: the grid and, per data structure, the C-Tile shape in TBs (the set of TBs that
//! share one D-Tile) and a priority. Step 1: while a descriptor has fewer C-Tiles than SMs
//! and its C-Tile is not (1,1,1), halve (rounding up) its C-Tile along its largest
//! dimension (ties: X before Y before Z). Step 2: clusters start as the highest-priority
//! descriptor's C-Tile; each lower-priority descriptor merges them along each dimension,
//! `MCLS_d = CLS_d * max(floor(CT_d / CLS_d), 1)`, kept only if there are still at least as
//! many clusters as SMs. The grid is then tiled by the cluster shape; clusters are listed
//! X, then Y, then Z, and each cluster's TBs in linear id order (`x + y*gx + z*gx*gy`).
//! Each cluster is one group, to be run on one SM.
//!
//! Input: the kernel's [`Descriptor`]s, the analysis's own Locality Descriptors (or those
//! of a `paver-analysis/1` document, [`Descriptor::from_analysis`]). Only INTER-THREAD
//! descriptors drive CTA scheduling (LD §4.2, Figure 11: INTRA-THREAD and NO-REUSE data get
//! cache policies, not clustering), and the analysis has no programmer to set priorities
//! for clustering, so [`LdClustering::new`] ranks them by the bytes the C-Tile's sharing can
//! save. A kernel without an INTER-THREAD descriptor is not clustered: its groups are the
//! default scheduler's (LRR: one TB per group in id order), as in the LD design, where only
//! INTER-THREAD data triggers CTA scheduling.

use super::{Groups, Params, Policy};
use crate::descriptor::{Descriptor, LocalityType};
use crate::error::{Error, Result};
use crate::graph::Graph;

/// What Algorithm 1 reads of one INTER-THREAD descriptor: its C-Tile and its rank among
/// the kernel's, derived by [`LdClustering::new`] (or given, to run the algorithm on
/// shapes of one's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedCTile {
    /// The descriptor's data structure name, for messages.
    pub name: String,
    /// C-Tile dimensions in TBs; 0 in a dimension means the whole grid extent (e.g. histo's
    /// `(1, GridDim.y, 1)` is `[1, 0, 1]`). Clamped to the grid.
    pub c_tile: [u32; 3],
    /// Higher runs first; equal priorities keep input order.
    pub priority: i32,
}

/// LD clustering over a grid, with the ranked C-Tiles of the kernel's INTER-THREAD data
/// structures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdClustering {
    /// Grid dimensions in TBs.
    pub grid: [u32; 3],
    /// One per INTER-THREAD data structure, any order.
    pub c_tiles: Vec<RankedCTile>,
}

impl LdClustering {
    /// Clustering of `grid` by `descriptors`: one C-Tile per INTER-THREAD descriptor, in
    /// the given (parameter) order, its `c_tile` as is (clamped to `u32`), with priorities
    /// ranking the descriptors by the bytes their sharing can save, `D-Tile elements x
    /// element bytes x (C-Tile TBs - 1)` (a D-Tile read once per C-Tile instead of once per
    /// TB), highest first; equal savings keep parameter order. The analysis's own
    /// `priority` (§3.3.5) is not read: it orders all descriptors by traffic, not by what
    /// clustering saves.
    pub fn new(grid: [u32; 3], descriptors: &[Descriptor]) -> LdClustering {
        let mut found: Vec<(u128, RankedCTile)> = descriptors
            .iter()
            .filter(|d| d.locality_type == LocalityType::InterThread)
            .map(|d| {
                let elem = u128::from(d.element_bytes);
                let tbs: u128 = d.c_tile.iter().map(|&c| u128::from(c.max(1))).product();
                let elems: u128 = d.d_tile.iter().map(|&e| u128::from(e)).product();
                let saved = elems * elem * (tbs - 1);
                let c_tile = d.c_tile.map(|c| u32::try_from(c).unwrap_or(u32::MAX));
                (
                    saved,
                    RankedCTile {
                        name: d.display_name(),
                        c_tile,
                        priority: 0,
                    },
                )
            })
            .collect();
        // Stable: equal savings keep parameter order.
        found.sort_by_key(|d| std::cmp::Reverse(d.0));
        let n = found.len();
        let c_tiles = found
            .into_iter()
            .enumerate()
            .map(|(rank, (_, mut t))| {
                t.priority = i32::try_from(n - rank).unwrap_or(i32::MAX);
                t
            })
            .collect();
        LdClustering { grid, c_tiles }
    }
}

fn ct_num(grid: [u32; 3], ct: [u32; 3]) -> u64 {
    (0..3).map(|d| u64::from(grid[d].div_ceil(ct[d]))).product()
}

impl LdClustering {
    /// Cluster dimensions chosen by Algorithm 1 for `num_sms` SMs.
    pub fn cluster_dims(&self, num_sms: u32) -> Result<[u32; 3]> {
        if self.grid.contains(&0) {
            return Err(Error::LocalityDescriptor(format!(
                "grid {:?} has a zero dimension",
                self.grid
            )));
        }
        if self.c_tiles.is_empty() {
            return Err(Error::LocalityDescriptor("no descriptors given".into()));
        }
        let mut descs: Vec<&RankedCTile> = self.c_tiles.iter().collect();
        descs.sort_by_key(|d| std::cmp::Reverse(d.priority));
        // Step 1: split each C-Tile until there are enough for all SMs.
        let mut tiles = Vec::with_capacity(descs.len());
        for d in descs {
            let ct_dim = |k: usize| match d.c_tile[k] {
                0 => self.grid[k],
                c => c.min(self.grid[k]),
            };
            let mut ct = [ct_dim(0), ct_dim(1), ct_dim(2)];
            while ct_num(self.grid, ct) < u64::from(num_sms) && ct != [1, 1, 1] {
                let mut largest = 0;
                for k in 1..3 {
                    if ct[k] > ct[largest] {
                        largest = k;
                    }
                }
                ct[largest] = ct[largest].div_ceil(2);
            }
            tiles.push(ct);
        }
        // Step 2: merge lower-priority C-Tiles into the clusters.
        let mut cls = tiles[0];
        for ct in &tiles[1..] {
            let mut merged = cls;
            for k in 0..3 {
                merged[k] = cls[k] * (ct[k] / cls[k]).max(1);
            }
            if ct_num(self.grid, merged) >= u64::from(num_sms) {
                cls = merged;
            }
        }
        Ok(cls)
    }
}

impl Policy for LdClustering {
    fn name(&self) -> &'static str {
        "ld"
    }
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        p.validate()?;
        let [gx, gy, gz] = self.grid;
        let total = u64::from(gx) * u64::from(gy) * u64::from(gz);
        if total != u64::from(g.num_tbs()) {
            return Err(Error::LocalityDescriptor(format!(
                "grid {:?} has {total} TBs but the graph has {}",
                self.grid,
                g.num_tbs()
            )));
        }
        if self.c_tiles.is_empty() {
            // No INTER-THREAD data: nothing to cluster for; the default scheduler's order.
            return Ok((0..g.num_tbs()).map(|tb| vec![tb]).collect());
        }
        let [cx, cy, cz] = self.cluster_dims(p.num_sms)?;
        let mut groups = Vec::new();
        for bz in 0..gz.div_ceil(cz) {
            for by in 0..gy.div_ceil(cy) {
                for bx in 0..gx.div_ceil(cx) {
                    let mut group = Vec::new();
                    for z in bz * cz..((bz + 1) * cz).min(gz) {
                        for y in by * cy..((by + 1) * cy).min(gy) {
                            for x in bx * cx..((bx + 1) * cx).min(gx) {
                                group.push(x + y * gx + z * gx * gy);
                            }
                        }
                    }
                    groups.push(group);
                }
            }
        }
        Ok(groups)
    }
}
