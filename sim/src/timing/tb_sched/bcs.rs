//! Block CTA scheduling (Lee et al., PAVER's BCS baseline): consecutive pairs of TBs go to
//! one SM together, and only when it has two free contexts — with an odd TB limit one
//! context stays idle, the throttling PAVER reports.

use super::TbScheduler;

/// BCS state.
#[derive(Debug, Clone)]
pub struct Bcs {
    next_tb: u32,
    num_tbs: u32,
    ptr: usize,
}

impl Bcs {
    /// Over `num_tbs` TBs.
    pub fn new(num_tbs: u32) -> Bcs {
        Bcs {
            next_tb: 0,
            num_tbs,
            ptr: 0,
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
            if free[sm] >= 2 {
                for _ in 0..left.min(2) {
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

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::*;

    #[test]
    fn pairs_and_throttling() {
        let seq = drive(&mut Bcs::new(8), 2, 2, 1);
        assert_eq!(seq, vec![vec![0, 1], vec![2, 3]]);
        // An SM with a single free context gets nothing.
        let seq = drive(&mut Bcs::new(8), 2, 1, 4);
        assert!(seq.iter().all(Vec::is_empty));
    }
}
