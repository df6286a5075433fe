//! Distributed CTA scheduling (MCM-GPU; ICC paper §4.1): the TBs are split into contiguous,
//! equal ranges, one pool per cluster; an SM takes the next TB of its cluster's pool
//! (round robin among the cluster's SMs). With `unit = 2` the SM takes a consecutive pair,
//! and only when two contexts are free (distributed-block, ICC §5), a pool's odd last TB
//! too (Fig. 6: CTA 5, alone in its pool, waits until CTAs 1 and 2 have both finished).

use super::{split_even, DispatchContext, TbPolicyInfo, TbScheduler};

/// Distributed state.
#[derive(Debug, Clone)]
pub struct Distributed {
    sms_per_cluster: u32,
    pools: Vec<std::ops::Range<u32>>,
    unit: u32,
}

impl Distributed {
    /// `num_sms` SMs in clusters of `sms_per_cluster`, issuing `unit` TBs at a time.
    pub fn new(num_tbs: u32, num_sms: u32, sms_per_cluster: u32, unit: u32) -> Distributed {
        let spc = sms_per_cluster.max(1);
        Distributed {
            sms_per_cluster: spc,
            pools: split_even(num_tbs, num_sms.div_ceil(spc)),
            unit: unit.max(1),
        }
    }
}

impl TbScheduler for Distributed {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        for (sm, &f) in free.iter().enumerate() {
            let c = sm / self.sms_per_cluster as usize;
            let Some(pool) = self.pools.get_mut(c) else {
                continue;
            };
            let left = pool.end - pool.start;
            let take = left.min(self.unit);
            // `unit` free contexts even for a shorter last take (ICC §5, Fig. 6).
            if take > 0 && f >= self.unit {
                for _ in 0..take {
                    out.push((sm as u32, pool.start));
                    pool.start += 1;
                }
            }
        }
    }

    fn pending(&self) -> u64 {
        self.pools.iter().map(|p| u64::from(p.end - p.start)).sum()
    }
}

/// Distributed TB ranges per cluster.
pub const DISTRIBUTED: TbPolicyInfo = TbPolicyInfo {
    name: "distributed",
    aliases: &[],
    description:
        "distributed CTA scheduling (MCM-GPU; ICC §4.1): one contiguous TB range per cluster",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| {
        Ok(Box::new(Distributed::new(
            c.num_tbs,
            c.num_sms,
            c.sms_per_cluster,
            1,
        )))
    },
};

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::*;

    #[test]
    fn per_cluster_pools() {
        // 10 TBs, 2 clusters of 2 SMs: cluster 0 owns 0..5, cluster 1 owns 5..10.
        let seq = drive(&mut Distributed::new(10, 4, 2, 1), 4, 2, 1);
        assert_eq!(seq, vec![vec![0], vec![1], vec![5], vec![6]]);
    }
}
