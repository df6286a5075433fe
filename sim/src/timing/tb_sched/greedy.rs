//! Greedy clustering (ICC paper §4.1): fill the first cluster's SMs (round robin inside the
//! cluster) until none can take more, then the next cluster; TBs from one global pool.

use super::{DispatchContext, TbPolicyInfo, TbScheduler};

/// Greedy clustering state.
#[derive(Debug, Clone)]
pub struct Greedy {
    sms_per_cluster: u32,
    next_tb: u32,
    num_tbs: u32,
}

impl Greedy {
    /// Over clusters of `sms_per_cluster` SMs.
    pub fn new(num_tbs: u32, sms_per_cluster: u32) -> Greedy {
        Greedy {
            sms_per_cluster: sms_per_cluster.max(1),
            next_tb: 0,
            num_tbs,
        }
    }
}

impl TbScheduler for Greedy {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        let mut free = free.to_vec();
        let spc = self.sms_per_cluster as usize;
        for c in 0..free.len().div_ceil(spc) {
            let sms = c * spc..((c + 1) * spc).min(free.len());
            loop {
                let mut any = false;
                for sm in sms.clone() {
                    if self.next_tb < self.num_tbs && free[sm] > 0 {
                        free[sm] -= 1;
                        out.push((sm as u32, self.next_tb));
                        self.next_tb += 1;
                        any = true;
                    }
                }
                if !any {
                    break;
                }
            }
        }
    }

    fn pending(&self) -> u64 {
        u64::from(self.num_tbs - self.next_tb)
    }

    /// The baseline for child grids: their TBs join the end of the one pool, in id order.
    fn add_child_tbs(&mut self, tbs: std::ops::Range<u32>, _: super::ChildOrigin) -> bool {
        if tbs.start != self.num_tbs {
            return false;
        }
        self.num_tbs = tbs.end;
        true
    }
}

/// Greedy clustering.
pub const GREEDY: TbPolicyInfo = TbPolicyInfo {
    name: "greedy",
    aliases: &["greedy-clustering"],
    description: "greedy clustering (ICC §4.1): fill one cluster's SMs before the next cluster's",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| Ok(Box::new(Greedy::new(c.num_tbs, c.sms_per_cluster))),
};

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::*;

    #[test]
    fn fills_first_cluster() {
        let seq = drive(&mut Greedy::new(6, 2), 4, 2, 1);
        assert_eq!(seq, vec![vec![0, 2], vec![1, 3], vec![4], vec![5]]);
    }
}
