//! Global (one-level) round robin (ICC paper §4.1): all SMs of the first cluster, then the
//! next cluster, and so on; with SMs numbered cluster by cluster this is the identity order.

use super::RoundRobin;
use super::{DispatchContext, TbPolicyInfo};

/// Global RR over `num_sms` SMs numbered cluster-major.
pub fn global_rr(num_tbs: u32, num_sms: u32) -> RoundRobin {
    RoundRobin::with_order(num_tbs, (0..num_sms).collect())
}

/// Global round robin.
pub const GLOBAL_RR: TbPolicyInfo = TbPolicyInfo {
    name: "global-rr",
    aliases: &[],
    description: "global round robin (ICC §4.1): the SMs of one cluster, then the next cluster's",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| Ok(Box::new(global_rr(c.num_tbs, c.num_sms))),
};
