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
//! The analysis that derives descriptors from PTX does not exist yet; [`LdDescriptor`] is
//! the input a caller (or that analysis) fills in.

use super::{Groups, Params, Policy};
use crate::error::{Error, Result};
use crate::graph::Graph;
use serde::{Deserialize, Serialize};

/// The part of a Locality Descriptor CTA clustering needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LdDescriptor {
    /// Data structure (kernel parameter) name, for messages.
    pub name: String,
    /// C-Tile dimensions in TBs; 0 in a dimension means the whole grid extent (e.g. histo's
    /// `(1, GridDim.y, 1)` is `[1, 0, 1]`). Clamped to the grid.
    pub c_tile: [u32; 3],
    /// Higher runs first; equal priorities keep input order.
    pub priority: i32,
}

/// LD clustering over a grid, with the descriptors of the kernel's data structures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LdClustering {
    /// Grid dimensions in TBs.
    pub grid: [u32; 3],
    /// One descriptor per data structure, any order.
    pub descriptors: Vec<LdDescriptor>,
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
        if self.descriptors.is_empty() {
            return Err(Error::LocalityDescriptor("no descriptors given".into()));
        }
        let mut descs: Vec<&LdDescriptor> = self.descriptors.iter().collect();
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
        "ld-clustering"
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
