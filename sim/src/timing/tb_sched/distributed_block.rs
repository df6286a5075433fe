//! Distributed-block scheduling (ICC paper §5): distributed at the cluster level, BCS pairs
//! at the SM level (a pair only when two contexts are free).

use super::Distributed;
use super::{DispatchContext, TbPolicyInfo};

/// Distributed-block over `num_sms` SMs in clusters of `sms_per_cluster`, holding
/// `tbs_per_sm` TBs each: pairs, or single TBs where an SM holds only one (a pair would
/// never find two free contexts there).
pub fn distributed_block(
    num_tbs: u32,
    num_sms: u32,
    sms_per_cluster: u32,
    tbs_per_sm: u32,
) -> Distributed {
    Distributed::new(num_tbs, num_sms, sms_per_cluster, tbs_per_sm.clamp(1, 2))
}

/// Distributed-block.
pub const DISTRIBUTED_BLOCK: TbPolicyInfo = TbPolicyInfo {
    name: "distributed-block",
    aliases: &[],
    description: "distributed-block (ICC §5): distributed ranges per cluster, BCS pairs per SM",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| {
        Ok(Box::new(distributed_block(
            c.num_tbs,
            c.num_sms,
            c.sms_per_cluster,
            c.tbs_per_sm,
        )))
    },
};

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::super::TbScheduler;
    use super::*;

    #[test]
    fn pairs_in_cluster() {
        let seq = drive(&mut distributed_block(10, 4, 2, 2), 4, 2, 1);
        assert_eq!(seq, vec![vec![0, 1], vec![2, 3], vec![5, 6], vec![7, 8]]);
        // With one free context an SM waits.
        let seq = drive(&mut distributed_block(10, 2, 2, 2), 2, 1, 3);
        assert!(seq.iter().all(Vec::is_empty));
    }

    /// ICC paper Fig. 6 (bottom): 10 CTAs, 2 clusters of 2 SMs, 2 CTAs per SM. CTA 5 (here
    /// TB 4), the last of cluster 0's pool, goes to SM 0 only when both CTAs 1 and 2 have
    /// finished, not when the first of them does.
    #[test]
    fn the_odd_last_tb_waits_for_two_contexts() {
        let mut d = distributed_block(10, 4, 2, 2);
        let mut out = Vec::new();
        d.assign(&[2, 2, 2, 2], &mut out);
        assert_eq!(
            out,
            vec![
                (0, 0),
                (0, 1),
                (1, 2),
                (1, 3),
                (2, 5),
                (2, 6),
                (3, 7),
                (3, 8)
            ]
        );
        out.clear();
        d.assign(&[1, 0, 0, 0], &mut out);
        assert!(out.is_empty(), "one free context: TB 4 waits");
        d.assign(&[2, 0, 0, 0], &mut out);
        assert_eq!(out, vec![(0, 4)]);
        // An SM that holds one TB takes single TBs instead of waiting forever.
        let mut one = distributed_block(4, 2, 2, 1);
        out.clear();
        one.assign(&[1, 1], &mut out);
        assert_eq!(out, vec![(0, 0), (1, 1)]);
    }
}
