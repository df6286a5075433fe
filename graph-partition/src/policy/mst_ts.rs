//! MST-TS (PAVER §4.1): Prim's maximum spanning tree order from TB 0 (a new tree per
//! connected component, at the smallest unvisited TB; ties as documented in
//! [`crate::mst`]). Consecutive TBs of that order form the groups: the first group of each
//! of the N SMs holds x TBs, every later group one TB. With N = 2, x = 2 and MST order
//! 0,4,1,5,2,3,7,6 this gives (0,4), (1,5), (2), (3), (7), (6), the paper's example.
//! On a grid smaller than one wave (fewer than N·x TBs) the first groups hold
//! [`Params::group_size`] TBs instead of x, so every SM gets one.

use super::{Groups, Params, Policy};
use crate::error::Result;
use crate::graph::Graph;
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
        if let Some(groups) = super::without_locality(g) {
            return Ok(groups);
        }
        let order = prim_order(g).order;
        Ok(group_mst_order(
            &order,
            p.num_sms,
            p.group_size(g.num_tbs()),
        ))
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
