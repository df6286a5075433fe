//! MST-TS (PAVER §4.1): Prim's maximum spanning tree order from TB 0 (a new tree per
//! connected component, at the smallest unvisited TB; ties as documented in
//! [`crate::mst`]). Consecutive TBs of that order form the groups: the first group of each
//! of the N SMs holds x TBs, every later group one TB. With N = 2, x = 2 and MST order
//! 0,4,1,5,2,3,7,6 this gives (0,4), (1,5), (2), (3), (7), (6), the paper's example.
//! On a grid smaller than one wave (fewer than N·x TBs, with
//! [`Params::shrink_groups`]) the order is cut into exactly N consecutive groups of
//! `ceil(n/N)` or `floor(n/N)` TBs (the larger first), so every SM gets one group.

use super::{Groups, Params, Policy};
use crate::error::Result;
use crate::graph::Graph;
use crate::metis_part::contiguous_ranges;
use crate::mst::prim_order;

/// Maximum-spanning-tree order, first group per SM of x TBs, then single TBs.
#[derive(Debug, Clone, Copy, Default)]
pub struct MstTs;

impl Policy for MstTs {
    fn name(&self) -> &'static str {
        "mst-ts"
    }
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        p.validate()?;
        if let Some(groups) = super::without_locality(g, p) {
            return Ok(groups);
        }
        let order = prim_order(g).order;
        if p.shrinks(g.num_tbs()) {
            return Ok(contiguous_ranges(order.len(), p.num_sms as usize)
                .into_iter()
                .map(|r| order[r].to_vec())
                .collect());
        }
        Ok(group_mst_order(&order, p.num_sms, p.tbs_per_sm))
    }
}

/// The §4.1 grouping rule applied to an MST order.
pub(crate) fn group_mst_order(order: &[u32], num_sms: u32, x: u32) -> Groups {
    let head = (num_sms as usize)
        .saturating_mul(x as usize)
        .min(order.len());
    let mut groups: Groups = order[..head]
        .chunks(x as usize)
        .map(<[u32]>::to_vec)
        .collect();
    groups.extend(order[head..].iter().map(|&tb| vec![tb]));
    groups
}
