//! Block CTA scheduling (Lee et al., PAVER's BCS baseline): consecutive pairs of TBs go to
//! one SM together, and only when it has two free contexts — with an odd TB limit one
//! context stays idle, the throttling PAVER reports. Where an SM holds a single TB (a
//! 1,024-thread TB on Fermi, say) no pair ever fits: BCS then issues TBs one at a time, in
//! order, as LRR would (Lee et al. define BCS for SMs that hold pairs; waiting for a pair
//! that never fits would leave the GPU idle forever).

use super::{DispatchContext, TbPolicyInfo, TbScheduler};

/// BCS state.
#[derive(Debug, Clone)]
pub struct Bcs {
    next_tb: u32,
    num_tbs: u32,
    ptr: usize,
    /// TBs issued together: 2, or 1 where an SM holds one TB.
    unit: u32,
}

impl Bcs {
    /// Over `num_tbs` TBs, on SMs that hold `tbs_per_sm` TBs each.
    pub fn new(num_tbs: u32, tbs_per_sm: u32) -> Bcs {
        Bcs {
            next_tb: 0,
            num_tbs,
            ptr: 0,
            unit: tbs_per_sm.clamp(1, 2),
        }
    }
}

impl TbScheduler for Bcs {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        let n = free.len();
        let start = self.ptr;
        for k in 0..n {
            let sm = (start + k) % n;
            let left = self.num_tbs - self.next_tb;
            if left == 0 {
                return;
            }
            if free[sm] >= self.unit {
                for _ in 0..left.min(self.unit) {
                    out.push((sm as u32, self.next_tb));
                    self.next_tb += 1;
                }
                self.ptr = (sm + 1) % n;
            }
        }
    }

    fn pending(&self) -> u64 {
        u64::from(self.num_tbs - self.next_tb)
    }
}

/// Block CTA scheduling.
pub const BCS: TbPolicyInfo = TbPolicyInfo {
    name: "bcs",
    aliases: &[],
    description: "block CTA scheduling (Lee et al.; PAVER's baseline): consecutive TB pairs, only to an SM with two free contexts",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| Ok(Box::new(Bcs::new(c.num_tbs, c.tbs_per_sm))),
};

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::*;

    #[test]
    fn pairs_and_throttling() {
        let seq = drive(&mut Bcs::new(8, 2), 2, 2, 1);
        assert_eq!(seq, vec![vec![0, 1], vec![2, 3]]);
        // An SM with a single free context (of two) gets nothing.
        let seq = drive(&mut Bcs::new(8, 2), 2, 1, 4);
        assert!(seq.iter().all(Vec::is_empty));
        // Three contexts: one stays idle.
        let seq = drive(&mut Bcs::new(8, 3), 1, 3, 1);
        assert_eq!(seq, vec![vec![0, 1]]);
    }

    #[test]
    fn single_tb_sms_get_single_tbs() {
        // SMs that hold one TB each: BCS issues one at a time instead of waiting forever.
        let seq = drive(&mut Bcs::new(5, 1), 2, 1, 8);
        assert_eq!(seq, vec![vec![0, 2, 4], vec![1, 3]]);
    }
}
