//! Round robin over SMs in a fixed visiting order, TBs in id order from one global pool:
//! each call, every SM with a free context (visited from the one after the SM served last)
//! gets the next TB. With the identity order this is LRR (GPGPU-Sim's default): TB `i` to
//! SM `i mod N` at launch, then the next TB to whichever SM frees a context.

use super::{DispatchContext, TbPolicyInfo, TbScheduler};

/// Round robin over `order`.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    order: Vec<u32>,
    next_tb: u32,
    num_tbs: u32,
    ptr: usize,
}

impl RoundRobin {
    /// LRR over `num_sms` SMs.
    pub fn lrr(num_tbs: u32, num_sms: u32) -> RoundRobin {
        RoundRobin::with_order(num_tbs, (0..num_sms).collect())
    }

    /// Round robin visiting SMs in `order`.
    pub fn with_order(num_tbs: u32, order: Vec<u32>) -> RoundRobin {
        RoundRobin {
            order,
            next_tb: 0,
            num_tbs,
            ptr: 0,
        }
    }
}

impl TbScheduler for RoundRobin {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        let n = self.order.len();
        let start = self.ptr;
        for k in 0..n {
            if self.next_tb >= self.num_tbs {
                return;
            }
            let i = (start + k) % n;
            let sm = self.order[i];
            if free.get(sm as usize).copied().unwrap_or(0) > 0 {
                out.push((sm, self.next_tb));
                self.next_tb += 1;
                self.ptr = (i + 1) % n;
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

/// LRR: TB `i` to SM `i mod N` at launch, then the next TB to whichever SM frees a context.
pub const LRR: TbPolicyInfo = TbPolicyInfo {
    name: "lrr",
    aliases: &[],
    description: "loose round robin (GPGPU-Sim's default): TBs in id order to the SMs in turn",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| Ok(Box::new(RoundRobin::lrr(c.num_tbs, c.num_sms))),
};

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::*;

    #[test]
    fn tb_i_to_sm_i_mod_n() {
        let seq = drive(&mut RoundRobin::lrr(8, 2), 2, 2, 1);
        assert_eq!(seq, vec![vec![0], vec![1]]);
        let seq = drive(&mut RoundRobin::lrr(8, 2), 2, 2, 8);
        assert_eq!(seq[0][..2], [0, 2]);
        assert_eq!(seq[1][..2], [1, 3]);
        assert_eq!(seq.iter().map(Vec::len).sum::<usize>(), 8);
    }
}
