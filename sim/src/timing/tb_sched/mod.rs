//! TB (CTA) schedulers. Every cycle the engine tells the scheduler how many TB contexts each
//! SM has free and launches what it assigns. A new policy is one file implementing
//! [`TbScheduler`] with its [`TbPolicyInfo`], and one line in [`TB_POLICIES`]. Hardware issues at most one TB per SM per cycle in the round-robin
//! family (GPGPU-Sim's `issue_block2core`); BCS-style policies issue a pair at once.

mod bcs;
mod distributed;
mod distributed_block;
mod global_rr;
mod greedy;
mod lrr;
mod paver;
pub mod registry;
mod two_level;

pub use bcs::Bcs;
pub use distributed::Distributed;
pub use distributed_block::distributed_block;
pub use global_rr::global_rr;
pub use greedy::Greedy;
pub use lrr::RoundRobin;
pub use paver::Paver;
pub use registry::{steals_by_default, DispatchContext, TbPolicy, TbPolicyInfo, TB_POLICIES};
pub use two_level::two_level_rr;

/// A TB scheduling policy.
pub trait TbScheduler: Send {
    /// Assigns TBs now: `free[sm]` is the number of free TB contexts of each SM; pushes
    /// `(sm, tb)` pairs (never more per SM than it has free).
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>);
    /// TBs not assigned yet.
    fn pending(&self) -> u64;
    /// TBs moved between SMs by task stealing.
    fn stolen(&self) -> u64 {
        0
    }
}

/// Contiguous ranges of `0..n` split evenly over `parts` (the first `n % parts` one longer).
pub(crate) fn split_even(n: u32, parts: u32) -> Vec<std::ops::Range<u32>> {
    let parts = parts.max(1);
    let (q, r) = (n / parts, n % parts);
    let mut start = 0;
    (0..parts)
        .map(|p| {
            let len = q + u32::from(p < r);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `s` with every SM holding `cap` contexts, the TBs of SM `sm` finishing in FIFO
    /// order one per step when `drain` says so; returns per-SM launch sequences.
    pub(crate) fn drive(
        s: &mut dyn TbScheduler,
        sms: usize,
        cap: u32,
        steps: usize,
    ) -> Vec<Vec<u32>> {
        let mut free = vec![cap; sms];
        let mut seq = vec![Vec::new(); sms];
        let mut out = Vec::new();
        for step in 0..steps {
            out.clear();
            s.assign(&free, &mut out);
            for &(sm, tb) in &out {
                assert!(free[sm as usize] > 0, "over-assigned SM {sm}");
                free[sm as usize] -= 1;
                seq[sm as usize].push(tb);
            }
            // SM (step % sms) finishes one TB.
            let f = step % sms;
            if free[f] < cap {
                free[f] += 1;
            }
        }
        seq
    }

    #[test]
    fn even_split() {
        assert_eq!(split_even(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(split_even(2, 4), vec![0..1, 1..2, 2..2, 2..2]);
    }
}
