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
//! Input: [`LdDescriptor`]s, filled in by a caller or taken from the analysis's own
//! Locality Descriptors with [`LdDescriptor::from_analysis`] (the `locality_descriptors` of
//! a `paver-analysis/1` document). Only INTER-THREAD descriptors drive CTA scheduling (LD
//! §4.2, Figure 11: INTRA-THREAD and NO-REUSE data get cache policies, not clustering),
//! and the analysis has no programmer to set priorities, so it ranks them by the bytes the
//! C-Tile's sharing can save (see [`LdDescriptor::from_analysis`]). A kernel without an
//! INTER-THREAD descriptor is not clustered: its groups are the default scheduler's (LRR:
//! one TB per group in id order), as in the LD design, where only INTER-THREAD data
//! triggers CTA scheduling.

use super::{Groups, Params, Policy};
use crate::descriptor::LocalityType;
use crate::error::{Error, Result};
use crate::graph::Graph;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

impl LdDescriptor {
    /// The clustering inputs from an analysis document's Locality Descriptors (`doc` is the
    /// whole `paver-analysis/1` document or its `locality_descriptors` array): one per
    /// INTER-THREAD descriptor, its `c_tile` as is, and priorities ranking the descriptors
    /// by the bytes their sharing can save, `D-Tile elements x element bytes x (C-Tile TBs -
    /// 1)` (a D-Tile read once per C-Tile instead of once per TB), highest first; equal
    /// savings keep parameter order. Errors when the document has no descriptors (analysed
    /// with `--no-descriptors`) or one is malformed.
    pub fn from_analysis(doc: &Value) -> Result<Vec<LdDescriptor>> {
        let list = match doc.get("locality_descriptors") {
            Some(v) => v,
            None if doc.is_array() => doc,
            None => {
                return Err(Error::LocalityDescriptor(
                    "the analysis has no `locality_descriptors` (run `paver analyze` without \
                     --no-descriptors)"
                        .into(),
                ))
            }
        };
        let Some(list) = list.as_array() else {
            return Err(Error::LocalityDescriptor(
                "`locality_descriptors` is not an array".into(),
            ));
        };
        let mut inputs = Vec::new();
        for (i, d) in list.iter().enumerate() {
            if d["locality_type"].as_str() != Some(LocalityType::InterThread.as_str()) {
                continue;
            }
            let dims = |key: &str| -> Result<[u64; 3]> {
                let bad = || {
                    Error::LocalityDescriptor(format!(
                        "locality_descriptors[{i}].{key}: expected three non-negative integers"
                    ))
                };
                let a = d[key].as_array().ok_or_else(bad)?;
                if a.len() != 3 {
                    return Err(bad());
                }
                let mut out = [0u64; 3];
                for (o, v) in out.iter_mut().zip(a) {
                    *o = v.as_u64().ok_or_else(bad)?;
                }
                Ok(out)
            };
            inputs.push(LdInput {
                name: d["name"].as_str().map_or_else(
                    || format!("param {}", d["param"].as_u64().unwrap_or(i as u64)),
                    str::to_string,
                ),
                locality: LocalityType::InterThread,
                element_bytes: d["element_bytes"].as_u64().unwrap_or(1),
                c_tile: dims("c_tile")?,
                d_tile: dims("d_tile")?,
            });
        }
        Ok(LdDescriptor::ranked(inputs))
    }

    /// The clustering inputs of descriptors given as such: one per INTER-THREAD
    /// descriptor, in the given (parameter) order, ranked as [`LdDescriptor::from_analysis`]
    /// says.
    pub fn ranked(descriptors: impl IntoIterator<Item = LdInput>) -> Vec<LdDescriptor> {
        let mut found: Vec<(u128, LdDescriptor)> = descriptors
            .into_iter()
            .filter(|d| d.locality == LocalityType::InterThread)
            .map(|d| {
                let elem = u128::from(d.element_bytes);
                let tbs: u128 = d.c_tile.iter().map(|&c| u128::from(c.max(1))).product();
                let elems: u128 = d.d_tile.iter().map(|&e| u128::from(e)).product();
                let saved = elems * elem * (tbs - 1);
                let c_tile = d.c_tile.map(|c| u32::try_from(c).unwrap_or(u32::MAX));
                (
                    saved,
                    LdDescriptor {
                        name: d.name,
                        c_tile,
                        priority: 0,
                    },
                )
            })
            .collect();
        // Stable: equal savings keep parameter order.
        found.sort_by_key(|d| std::cmp::Reverse(d.0));
        let n = found.len();
        found
            .into_iter()
            .enumerate()
            .map(|(rank, (_, mut d))| {
                d.priority = i32::try_from(n - rank).unwrap_or(i32::MAX);
                d
            })
            .collect()
    }
}

/// What CTA clustering reads of one Locality Descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdInput {
    /// Data structure name, for messages.
    pub name: String,
    /// Its locality type (only INTER-THREAD structures are clustered).
    pub locality: LocalityType,
    /// Bytes of one element.
    pub element_bytes: u64,
    /// C-Tile dimensions in TBs.
    pub c_tile: [u64; 3],
    /// D-Tile dimensions in elements.
    pub d_tile: [u64; 3],
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
        if self.descriptors.is_empty() {
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
