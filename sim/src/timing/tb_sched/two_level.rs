//! Two-level round robin (ICC paper §2.3): one TB per cluster first (the first SM of each
//! cluster), then the second SM of each cluster, and so on.

use super::RoundRobin;
use super::{DispatchContext, TbPolicyInfo};

/// Two-level RR over `num_sms` SMs in clusters of `sms_per_cluster`.
pub fn two_level_rr(num_tbs: u32, num_sms: u32, sms_per_cluster: u32) -> RoundRobin {
    let spc = sms_per_cluster.max(1);
    let clusters = num_sms.div_ceil(spc);
    let order = (0..spc)
        .flat_map(|i| (0..clusters).map(move |c| c * spc + i))
        .filter(|&sm| sm < num_sms)
        .collect();
    RoundRobin::with_order(num_tbs, order)
}

/// Two-level round robin.
pub const TWO_LEVEL_RR: TbPolicyInfo = TbPolicyInfo {
    name: "two-level-rr",
    aliases: &["2lrr", "two-level"],
    description: "two-level round robin (ICC §2.3): one TB per cluster, then the next SM of each",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| {
        Ok(Box::new(two_level_rr(
            c.num_tbs,
            c.num_sms,
            c.sms_per_cluster,
        )))
    },
};

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::*;

    #[test]
    fn clusters_first() {
        // 4 SMs in 2 clusters: order SM0, SM2, SM1, SM3.
        let seq = drive(&mut two_level_rr(4, 4, 2), 4, 1, 1);
        assert_eq!(seq, vec![vec![0], vec![2], vec![1], vec![3]]);
    }
}
