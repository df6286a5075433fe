//! TB (CTA) schedulers. Every cycle the engine tells the scheduler how many TB contexts each
//! SM has free and launches what it assigns. A new policy is one file implementing
//! [`TbScheduler`] with its [`TbPolicyInfo`], and one line in [`TB_POLICIES`]. Hardware issues at most one TB per SM per cycle in the round-robin
//! family (GPGPU-Sim's `issue_block2core`); BCS-style policies issue a pair at once.

mod bcs;
mod distributed;
mod distributed_block;
mod global_rr;
mod greedy;
pub mod laser;
mod lrr;
mod paver;
pub mod registry;
mod two_level;

pub use bcs::Bcs;
pub use distributed::Distributed;
pub use distributed_block::distributed_block;
pub use global_rr::global_rr;
pub use greedy::Greedy;
pub use laser::Laser;
pub use lrr::RoundRobin;
pub use paver::Paver;
pub use registry::{steals_by_default, TbPolicy, TB_POLICIES};
pub use two_level::two_level_rr;

use graph_partition::Schedule;

use crate::SimError;

/// What a TB policy's constructor is given about the launch and the GPU.
pub struct DispatchContext<'a> {
    /// TBs in the grid.
    pub num_tbs: u32,
    /// SMs of the GPU.
    pub num_sms: u32,
    /// SMs sharing one NoC port (a cluster).
    pub sms_per_cluster: u32,
    /// Resident TBs per SM (x).
    pub tbs_per_sm: u32,
    /// The schedule's groups, for the policies that run one ([`TbPolicyInfo::grouped`]).
    pub schedule: Option<&'a Schedule>,
    /// Whether the run steals (PAVER §5.2).
    pub steal: bool,
    /// Whether a steal moves at most the recipient's free contexts (`--steal-cap`).
    pub steal_cap: bool,
}

/// A TB policy: its names, what it does, and how to make its scheduler.
pub struct TbPolicyInfo {
    /// The name on the command line, in plans, stats and records.
    pub name: &'static str,
    /// Other spellings accepted.
    pub aliases: &'static [&'static str],
    /// One line for the help texts.
    pub description: &'static str,
    /// Whether it runs the TB groups of a schedule in the PAVER runtime (the groups are made
    /// by the grouping policy of the same name, or given with `--schedule`).
    pub grouped: bool,
    /// Whether a schedule of this policy steals by default (PAVER §5.2 uses task stealing
    /// with Kway-TS and RB-TS; MST-TS's later groups hold one TB each).
    pub steals_by_default: bool,
    /// The scheduler for one run.
    pub make: fn(&DispatchContext<'_>) -> Result<Box<dyn TbScheduler>, SimError>,
}

/// Where a grid launched from the device comes from ([`TbScheduler::add_child_tbs`]), for
/// the policies that place child TBs by their parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildOrigin {
    /// The launching (parent) TB, as the engine numbers TBs.
    pub parent_tb: u32,
    /// The SM the parent TB ran on when it launched the grid.
    pub parent_sm: u32,
}

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
    /// Makes the TBs of a grid launched from the device dispatchable: `tbs` are the ids
    /// right after every TB the scheduler has been given (the engine numbers a child grid's
    /// TBs after all earlier ones). `false`: the policy cannot dispatch child grids (its
    /// TB set is fixed at the launch, as a schedule's groups are), and the run stops with
    /// an error naming it.
    fn add_child_tbs(&mut self, tbs: std::ops::Range<u32>, origin: ChildOrigin) -> bool {
        let _ = (tbs, origin);
        false
    }
    /// Whether the policy watches the SMs' L1 reads ([`TbScheduler::observe_read`]; the
    /// engine collects them only then).
    fn observes_reads(&self) -> bool {
        false
    }
    /// An L1 read of `line` (128-byte line address) by TB `tb` on SM `sm`.
    fn observe_read(&mut self, sm: u32, tb: u32, line: u64) {
        let _ = (sm, tb, line);
    }
    /// The TB whose warp group TB `tb`'s warps join when it is resident on the same SM
    /// (LASER: a child predicted to reuse its parent's data joins its parent's group,
    /// `warp_sched::two_level`); `None`: a group of its own.
    fn join_group(&self, tb: u32) -> Option<u32> {
        let _ = tb;
        None
    }
    /// How the policy placed child TBs (LASER's decisions and monitors), for the stats.
    fn placement(&self) -> Option<laser::PlacementStats> {
        None
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
