//! LRR, the baseline: TBs in id order, one per group. With groups handed out round-robin
//! this is TB i on SM i mod N at launch, then the next TB in id order to whichever SM frees
//! a slot (PAVER §6, GPGPU-Sim's default).

use super::{Groups, Params, Policy};
use crate::error::Result;
use crate::graph::Graph;

/// Loose round-robin: groups of one TB in id order.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lrr;

impl Policy for Lrr {
    fn name(&self) -> &'static str {
        "lrr"
    }
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        p.validate()?;
        Ok((0..g.num_tbs()).map(|tb| vec![tb]).collect())
    }
}
