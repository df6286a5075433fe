//! Kway-TS (PAVER §4.2): METIS k-way partitioning into one part per SM (k = N), balanced,
//! minimising the edge cut (= maximising the weight kept inside parts); then the TBs of
//! each part are re-ordered by Prim's maximum spanning tree (started at the part's smallest
//! TB), so the TBs of a part that run together share the most. Groups = parts, ordered by
//! their smallest TB id (METIS's part labels carry no meaning); empty parts are dropped.
//!
//! METIS honours its imbalance tolerance (`ufactor`) on large graphs but may exceed it on
//! small or odd ones. A deterministic repair pass then moves TBs out of any part larger than
//! `cap = max(ceil(n/k), floor(n/k * (1 + ufactor/1000)))`, each time the TB (and target
//! part below the cap) with the best gain in internal weight; so parts never exceed `cap`.

use super::{Groups, Params, Policy};
use crate::error::Result;
use crate::graph::Graph;
use crate::metis_part::Partitioner;
use crate::mst::PrimWorkspace;

/// METIS k-way into N parts, MST order inside each.
#[derive(Debug, Clone, Copy, Default)]
pub struct KwayTs;

/// Largest part size Kway-TS allows for `n` TBs in `k` parts.
pub fn kway_cap(n: u32, k: u32, ufactor: u32) -> u32 {
    let k = u64::from(k.max(1));
    let n = u64::from(n);
    let tolerant = n * (1000 + u64::from(ufactor)) / (1000 * k);
    n.div_ceil(k).max(tolerant) as u32
}

impl Policy for KwayTs {
    fn name(&self) -> &'static str {
        "kway-ts"
    }
    fn lrr_floor_applies(&self) -> bool {
        true
    }
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        p.validate()?;
        if let Some(groups) = super::without_locality(g, p) {
            return Ok(groups);
        }
        let n = g.num_tbs();
        let k = p.num_sms.min(n.max(1));
        let mut labels = Partitioner::new(g, p.seed).kway(k, p.kway_ufactor)?;
        repair_balance(g, &mut labels, k, kway_cap(n, k, p.kway_ufactor));
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); k as usize];
        for tb in 0..n {
            members[labels[tb as usize] as usize].push(tb);
        }
        members.retain(|m| !m.is_empty());
        members.sort_by_key(|m| m[0]);
        let mut ws = PrimWorkspace::new(n);
        let groups = members
            .into_iter()
            .map(|m| ws.run(g, &m, Some(&labels)).order)
            .collect();
        Ok(groups)
    }
}

/// Moves TBs out of parts above `cap` into parts below it, greedily by gain
/// (weight to the target part minus weight kept in the source part); ties to the smaller
/// TB id, then the smaller part id.
fn repair_balance(g: &Graph, labels: &mut [u32], k: u32, cap: u32) {
    let mut size = vec![0u32; k as usize];
    for &l in labels.iter() {
        size[l as usize] += 1;
    }
    for src in 0..k {
        while size[src as usize] > cap {
            let mut best: Option<(i128, u32, u32)> = None;
            for tb in 0..g.num_tbs() {
                if labels[tb as usize] != src {
                    continue;
                }
                let mut conn: Vec<(u32, u64)> = Vec::new();
                for (u, w) in g.neighbours(tb) {
                    let l = labels[u as usize];
                    match conn.iter_mut().find(|c| c.0 == l) {
                        Some(c) => c.1 += w,
                        None => conn.push((l, w)),
                    }
                }
                let inside = conn.iter().find(|c| c.0 == src).map_or(0, |c| c.1);
                for dst in 0..k {
                    if dst == src || size[dst as usize] >= cap {
                        continue;
                    }
                    let to = conn.iter().find(|c| c.0 == dst).map_or(0, |c| c.1);
                    let gain = i128::from(to) - i128::from(inside);
                    if best.is_none_or(|b| gain > b.0) {
                        best = Some((gain, tb, dst));
                    }
                }
            }
            let Some((_, tb, dst)) = best else { break };
            labels[tb as usize] = dst;
            size[src as usize] -= 1;
            size[dst as usize] += 1;
        }
    }
}
