//! BCS, block CTA scheduling (Lee et al., cited by PAVER §4.1 and §6): consecutive TBs in
//! pairs, `(0,1), (2,3), ...`; an odd last TB forms a group of one. The pair is issued only
//! when two TB contexts are free (`issue_unit() == 2`), which is what throttles BCS when the
//! per-SM limit is odd (PAVER §6: STO and HS with 3 TBs/SM).

use super::{Groups, Params, Policy};
use crate::error::Result;
use crate::graph::Graph;

/// Block CTA scheduling: consecutive pairs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bcs;

impl Policy for Bcs {
    fn name(&self) -> &'static str {
        "bcs"
    }
    fn issue_unit(&self) -> u32 {
        2
    }
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        p.validate()?;
        let all: Vec<u32> = (0..g.num_tbs()).collect();
        Ok(all.chunks(2).map(<[u32]>::to_vec).collect())
    }
}
