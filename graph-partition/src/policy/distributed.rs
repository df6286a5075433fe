//! Distributed and distributed-block CTA scheduling (Wang et al., ICC paper §4 and §5).
//!
//! Distributed (MCM-GPU style): the TBs are split evenly into one contiguous id range per
//! cluster of SMs (`num_sms / sms_per_cluster` clusters, rounded up); a cluster refills from
//! its own range. Each range is one group, so group c is cluster c's pool.
//! Distributed-block: the same ranges, but inside a cluster TBs are issued two consecutive
//! TBs at a time to one SM, once two contexts are free (`issue_unit() == 2`, as BCS).

use super::{Groups, Params, Policy};
use crate::error::Result;
use crate::graph::Graph;
use crate::metis_part::contiguous_ranges;

/// Contiguous balanced TB ranges, one per cluster.
#[derive(Debug, Clone, Copy, Default)]
pub struct Distributed;

/// Distributed ranges, issued in consecutive pairs inside each cluster.
#[derive(Debug, Clone, Copy, Default)]
pub struct DistributedBlock;

fn cluster_ranges(g: &Graph, p: &Params) -> Result<Groups> {
    p.validate()?;
    let clusters = p.num_sms.div_ceil(p.sms_per_cluster) as usize;
    Ok(contiguous_ranges(g.num_tbs() as usize, clusters)
        .into_iter()
        .map(|r| (r.start as u32..r.end as u32).collect())
        .collect())
}

impl Policy for Distributed {
    fn name(&self) -> &'static str {
        "distributed"
    }
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        cluster_ranges(g, p)
    }
}

impl Policy for DistributedBlock {
    fn name(&self) -> &'static str {
        "distributed-block"
    }
    fn issue_unit(&self) -> u32 {
        2
    }
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        cluster_ranges(g, p)
    }
}
