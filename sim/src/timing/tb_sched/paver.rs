//! The PAVER runtime (PAVER §5.1-5.3): the schedule's groups wait in a global queue and are
//! handed to SMs round robin, each SM keeping its group in registers `next` / `tail`
//! (`nextTB` = the TB at `next`); when a context frees the SM issues `nextTB`, and when its
//! group is exhausted it takes the next group from the queue.
//!
//! **Round robin.** §5.3: "TB scheduler assigns the TB groups from the global queue to the
//! SMs in a round-robin manner". When several SMs want a group in the same cycle they are
//! visited from the one after the SM that took a group last (a stolen share counts as
//! one), as LRR visits SMs from the one after the SM it served last
//! ([`super::RoundRobin`], GPGPU-Sim's rotating CTA issue), not from SM 0 every cycle.
//!
//! **Issue unit.** A schedule's `issue_unit` is how many TBs leave a group at once: 1 for
//! the PAVER policies (one TB per SM per cycle, as GPGPU-Sim's `issue_block2core`), 2 for
//! the pair policies (BCS, distributed-block), which issue a pair only when the SM has two
//! free contexts (a group's odd last TB waits for two as well, as [`super::Bcs`] does) —
//! the throttling PAVER §6 reports. An SM takes a new group only when it could issue from
//! it, so pairs go to the next SM with two free contexts. The unit is capped at the SM's TB
//! slots (x), so a pair schedule on a one-slot SM degrades to single issue instead of
//! never issuing.
//!
//! **Task stealing** (§5.2, Algorithm 2, §5.3), to the letter by default. It runs only when
//! the global queue is empty, for an SM (the recipient) that has a free context and an
//! exhausted group:
//! - *Waiting TBs* of an SM are Algorithm 2's `SM.tail - SM.next`, the unissued TBs of its
//!   group, read at the end of the cycle's issue: the TBs a free context takes this cycle
//!   (the hardware issues `nextTB` as soon as a context frees) have left the group by then,
//!   so the count is `max(0, (tail - next) - free)` while the SMs are visited. On a grid
//!   smaller than one wave, where every TB fits at once, nothing is ever stolen.
//! - Donor = the SM with the most waiting TBs (`Max_waiting`; ties: the lowest SM id, as
//!   the strict `>` of Algorithm 2 line 5), over every SM but the recipient (line 3 loops
//!   over all SMs: a group that holds stolen TBs may give them up again).
//! - `Average_waiting` = (sum of every SM's waiting TBs) / (number of SMs), **integer
//!   division rounding down** (the 16-bit registers and divider of §5.2); the count stolen
//!   is `Max_waiting - Average_waiting`, i.e. `ceil(Max - Sum/N)`: at least one TB
//!   whenever the donor has one waiting, and at most all of the donor's waiting TBs. The
//!   recipient may get more TBs than it has free contexts: they wait in its group (they
//!   are its waiting TBs now, and a later recipient may take them).
//! - The stolen TBs are the donor's tail, in their group order (the paper's example: the
//!   donor waits on TB0..TB3 and 2 are stolen: the donor keeps TB0, TB1 and the recipient
//!   gets TB2, TB3).
//! - `stolen` counts TBs moved (a TB moved twice counts twice).
//!
//! **`--steal-cap`** (a departure, off by default; the runtime's stealing from issue 12 to
//! issue 39): the count stolen is also capped at the recipient's free contexts, and a
//! group holding stolen TBs is never a donor (a TB moves at most once). Algorithm 2 leaves
//! open what a recipient does with more stolen TBs than it can start; taken literally
//! they wait on the recipient while other SMs drain, and the tail Algorithm 2 means to
//! remove can come back one level down (docs/VALIDATION.md, "TB grouping in the timing
//! simulator": RB-TS's tail on backprop, titanv, was 400 cycles uncapped and 200 capped
//! with the once-only rule). The paper's example (4 waiting, 2 stolen) is the same under
//! either rule for a recipient with two free contexts.

use super::{DispatchContext, TbPolicyInfo, TbScheduler};
use crate::SimError;
use std::collections::VecDeque;

/// PAVER runtime state.
#[derive(Debug, Clone)]
pub struct Paver {
    queue: VecDeque<Vec<u32>>,
    /// Per SM: the unissued TBs of its group (front = `next`, back = `tail`).
    local: Vec<VecDeque<u32>>,
    /// Per SM: its group holds stolen TBs (which never move again under `--steal-cap`).
    stolen_group: Vec<bool>,
    steal: bool,
    /// `--steal-cap`: a steal takes at most the recipient's free contexts, and stolen TBs
    /// never move again (see the module docs).
    steal_cap: bool,
    issue_unit: u32,
    stolen: u64,
    pending: u64,
    /// The SM visited first by the next [`TbScheduler::assign`]: the one after the SM that
    /// last took a group (or stole).
    ptr: usize,
}

impl Paver {
    /// Groups in global-queue order over `num_sms` SMs; `steal` enables Algorithm 2. TBs
    /// leave a group one at a time (see [`Paver::with_issue_unit`]).
    pub fn new(groups: Vec<Vec<u32>>, num_sms: u32, steal: bool) -> Paver {
        let pending = groups.iter().map(|g| g.len() as u64).sum();
        Paver {
            queue: groups.into_iter().filter(|g| !g.is_empty()).collect(),
            local: vec![VecDeque::new(); num_sms as usize],
            stolen_group: vec![false; num_sms as usize],
            steal,
            steal_cap: false,
            issue_unit: 1,
            stolen: 0,
            pending,
            ptr: 0,
        }
    }

    /// Issues `unit` TBs of a group at once, only when an SM has `unit` free contexts
    /// (the schedule's `issue_unit`; at least 1).
    #[must_use]
    pub fn with_issue_unit(mut self, unit: u32) -> Paver {
        self.issue_unit = unit.max(1);
        self
    }

    /// Caps each steal at the recipient's free contexts and moves a TB at most once
    /// (`--steal-cap`).
    #[must_use]
    pub fn with_steal_cap(mut self, cap: bool) -> Paver {
        self.steal_cap = cap;
        self
    }

    /// Algorithm 2 for recipient SM `sm`, with `free` the free contexts of every SM now.
    fn steal_for(&mut self, sm: usize, free: &[u32]) {
        let n = self.local.len() as u64;
        let waiting = |i: usize, q: &VecDeque<u32>| {
            (q.len() as u64).saturating_sub(u64::from(free.get(i).copied().unwrap_or(0)))
        };
        let mut total = 0u64;
        let mut donor = None;
        let mut max = 0u64;
        for (i, q) in self.local.iter().enumerate() {
            let w = waiting(i, q);
            total += w;
            if w > max && i != sm && !(self.steal_cap && self.stolen_group[i]) {
                max = w;
                donor = Some(i);
            }
        }
        let Some(donor) = donor else {
            return;
        };
        // Algorithm 2's count; under `--steal-cap` at most the recipient's free contexts.
        let mut take = max.saturating_sub(total / n.max(1)).min(max);
        if self.steal_cap {
            take = take.min(u64::from(free.get(sm).copied().unwrap_or(0)));
        }
        let take = take as usize;
        if take == 0 {
            return;
        }
        let d = &mut self.local[donor];
        let moved: Vec<u32> = d.drain(d.len() - take..).collect();
        self.stolen += moved.len() as u64;
        self.local[sm].extend(moved);
        self.stolen_group[sm] = true;
    }
}

impl TbScheduler for Paver {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        let n = self.local.len().min(free.len());
        let mut now: Vec<u32> = free[..n].to_vec();
        let start = self.ptr;
        for k in 0..n {
            let sm = (start + k) % n;
            if now[sm] == 0 || now[sm] < self.issue_unit {
                continue;
            }
            if self.local[sm].is_empty() {
                if let Some(g) = self.queue.pop_front() {
                    self.local[sm] = g.into();
                    self.stolen_group[sm] = false;
                    self.ptr = (sm + 1) % n;
                } else if self.steal {
                    self.steal_for(sm, &now);
                    if !self.local[sm].is_empty() {
                        self.ptr = (sm + 1) % n;
                    }
                }
            }
            for _ in 0..self.issue_unit {
                let Some(tb) = self.local[sm].pop_front() else {
                    break;
                };
                out.push((sm as u32, tb));
                self.pending -= 1;
                now[sm] -= 1;
            }
        }
    }

    fn pending(&self) -> u64 {
        self.pending
    }

    fn stolen(&self) -> u64 {
        self.stolen
    }
}

/// The PAVER runtime over a schedule's groups (PAVER §5.3), issuing at most x TBs of a
/// group at once.
fn runtime(c: &DispatchContext<'_>) -> Result<Box<dyn TbScheduler>, SimError> {
    let s = c.schedule.ok_or(SimError::NoSchedule)?;
    Ok(Box::new(
        Paver::new(s.groups.clone(), c.num_sms, c.steal)
            .with_issue_unit(s.issue_unit.min(c.tbs_per_sm))
            .with_steal_cap(c.steal_cap),
    ))
}

/// The grouped policies: each name's groups come from the grouping policy of that name.
const fn grouped(
    name: &'static str,
    description: &'static str,
    steals_by_default: bool,
) -> TbPolicyInfo {
    TbPolicyInfo {
        name,
        aliases: &[],
        description,
        grouped: true,
        steals_by_default,
        make: runtime,
    }
}

/// MST-TS.
pub const MST_TS: TbPolicyInfo = grouped(
    "mst-ts",
    "PAVER's runtime over maximum-spanning-tree groups (Prim on the TB locality graph)",
    false,
);
/// Kway-TS.
pub const KWAY_TS: TbPolicyInfo = grouped(
    "kway-ts",
    "PAVER's runtime over METIS k-way parts, one per SM; steals by default",
    true,
);
/// RB-TS.
pub const RB_TS: TbPolicyInfo = grouped(
    "rb-ts",
    "PAVER's runtime over recursive-bisection groups (Algorithm 1); steals by default",
    true,
);
/// Locality Descriptor CTA clustering.
pub const LD: TbPolicyInfo = grouped(
    "ld",
    "the Locality Descriptor's CTA clustering (its §4.3) run as groups",
    false,
);
/// `paver`: the PAVER runtime over a given schedule's groups, RB-TS when built here.
/// (Its stealing default is never read: a schedule names the grouping policy it came from.)
pub const PAVER: TbPolicyInfo = grouped(
    "paver",
    "PAVER's runtime over --schedule's groups (RB-TS's when built here)",
    false,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_round_robin_then_queue() {
        let mut p = Paver::new(vec![vec![0, 4], vec![1, 5], vec![2], vec![3]], 2, false);
        let mut out = Vec::new();
        p.assign(&[2, 2], &mut out);
        assert_eq!(out, vec![(0, 0), (1, 1)]);
        out.clear();
        p.assign(&[1, 1], &mut out);
        assert_eq!(out, vec![(0, 4), (1, 5)]);
        out.clear();
        p.assign(&[1, 0], &mut out);
        assert_eq!(out, vec![(0, 2)]);
        assert_eq!(p.pending(), 1);
    }

    #[test]
    fn algorithm_2_paper_example() {
        // §5.3: the donor waits on TB0..TB3 (its contexts all busy), the recipient's group
        // is exhausted and it has two free contexts. Max = 4, Average = 4 / 2 = 2, 2 TBs
        // stolen from the tail: the donor keeps TB0, TB1, the recipient gets TB2, TB3 and
        // issues TB2 at once (one TB per SM per cycle), TB3 next.
        let mut p = Paver::new(vec![vec![9, 0, 1, 2, 3], vec![8]], 2, true);
        let mut out = Vec::new();
        p.assign(&[1, 2], &mut out);
        assert_eq!(out, vec![(0, 9), (1, 8)]);
        out.clear();
        p.assign(&[0, 2], &mut out);
        assert_eq!(out, vec![(1, 2)]);
        assert_eq!(p.stolen(), 2);
        assert_eq!(p.local[0], VecDeque::from(vec![0, 1]));
        assert_eq!(p.local[1], VecDeque::from(vec![3]));
        // With one free context, Algorithm 2 still steals two: the recipient issues TB2 and
        // TB3 waits in its group.
        let mut p = Paver::new(vec![vec![9, 0, 1, 2, 3], vec![8]], 2, true);
        out.clear();
        p.assign(&[1, 1], &mut out);
        out.clear();
        p.assign(&[0, 1], &mut out);
        assert_eq!(out, vec![(1, 2)]);
        assert_eq!(p.stolen(), 2);
        assert_eq!(p.local[0], VecDeque::from(vec![0, 1]));
        assert_eq!(p.local[1], VecDeque::from(vec![3]));
        // Under `--steal-cap` the recipient takes one: TB3, the tail; TB2 stays on the
        // donor, where the next recipient can take it.
        let mut p = Paver::new(vec![vec![9, 0, 1, 2, 3], vec![8]], 2, true).with_steal_cap(true);
        out.clear();
        p.assign(&[1, 1], &mut out);
        out.clear();
        p.assign(&[0, 1], &mut out);
        assert_eq!(out, vec![(1, 3)]);
        assert_eq!(p.stolen(), 1);
        assert_eq!(p.local[0], VecDeque::from(vec![0, 1, 2]));
        // Without stealing the recipient idles.
        let mut q = Paver::new(vec![vec![9, 0, 1, 2, 3], vec![8]], 2, false);
        out.clear();
        q.assign(&[1, 1], &mut out);
        out.clear();
        q.assign(&[0, 1], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn average_rounds_down() {
        // 4 SMs: waiting 5, 0, 2, 0 (all contexts busy but SM 1's four). Sum 7, Average
        // floor(7 / 4) = 1, stolen 5 - 1 = 4 from SM 0's tail.
        let mut p = Paver::new(vec![vec![0, 1, 2, 3, 4], vec![], vec![5, 6]], 4, true);
        p.local[0] = VecDeque::from(vec![0, 1, 2, 3, 4]);
        p.local[2] = VecDeque::from(vec![5, 6]);
        p.queue.clear();
        let mut out = Vec::new();
        p.assign(&[0, 4, 0, 0], &mut out);
        assert_eq!(out, vec![(1, 1)]);
        assert_eq!(p.stolen(), 4);
        assert_eq!(p.local[0], VecDeque::from(vec![0]));
        assert_eq!(p.local[1], VecDeque::from(vec![2, 3, 4]));
    }

    #[test]
    fn no_stealing_while_groups_remain() {
        // SM 1's group runs out but the queue still holds one: it takes that group.
        let mut p = Paver::new(vec![vec![0, 1, 2, 3], vec![4], vec![5]], 2, true);
        let mut out = Vec::new();
        p.assign(&[1, 1], &mut out);
        out.clear();
        p.assign(&[0, 1], &mut out);
        assert_eq!(out, vec![(1, 5)]);
        assert_eq!(p.stolen(), 0);
    }

    #[test]
    fn a_grid_smaller_than_one_wave_steals_nothing() {
        // 2 SMs x 4 contexts, 5 TBs: every TB fits at once. SM 1's group (1 TB) is exhausted
        // after the first cycle while SM 0 still has TBs to issue, but free contexts will
        // take them: nothing waits, nothing is stolen.
        let mut p = Paver::new(vec![vec![0, 1, 2, 3], vec![4]], 2, true);
        let mut free = [4u32, 4];
        let mut out = Vec::new();
        while p.pending() > 0 {
            out.clear();
            p.assign(&free, &mut out);
            assert!(!out.is_empty(), "stalled");
            for &(sm, _) in &out {
                free[sm as usize] -= 1;
            }
        }
        assert_eq!(p.stolen(), 0);
        assert_eq!(free, [0, 3]);
    }

    #[test]
    fn stolen_tbs_may_be_stolen_again() {
        // Algorithm 2 to the letter. 3 SMs x 2 contexts. SM 0's group has 7 TBs, SMs 1 and
        // 2 one each.
        let mut p = Paver::new(vec![(0..7).collect(), vec![7], vec![8]], 3, true);
        let mut out = Vec::new();
        p.assign(&[2, 2, 2], &mut out);
        assert_eq!(out, vec![(0, 0), (1, 7), (2, 8)]);
        // SM 1's TB finishes (2 free): waiting 6, 0, 0; Average floor(6/3) = 2, 6 - 2 = 4
        // stolen: TBs 3..=6 (the tail); it issues TB 3.
        out.clear();
        p.assign(&[0, 2, 0], &mut out);
        assert_eq!(out, vec![(1, 3)]);
        assert_eq!(p.stolen(), 4);
        // SM 2's TB finishes: SM 0 waits on TBs 1, 2, SM 1 (no free context now) on 4, 5,
        // 6: the donor is SM 1, Average floor(5/3) = 1, 3 - 1 = 2 stolen: TBs 5, 6 move a
        // second time.
        out.clear();
        p.assign(&[0, 0, 2], &mut out);
        assert_eq!(out, vec![(2, 5)]);
        assert_eq!(p.stolen(), 6);
        assert_eq!(p.local[0], VecDeque::from(vec![1, 2]));
        assert_eq!(p.local[1], VecDeque::from(vec![4]));
        assert_eq!(p.local[2], VecDeque::from(vec![6]));
    }

    #[test]
    fn under_the_steal_cap_a_tb_moves_at_most_once() {
        // 3 SMs x 2 contexts. SM 0's group has 7 TBs, SMs 1 and 2 one each.
        let mut p =
            Paver::new(vec![(0..7).collect(), vec![7], vec![8]], 3, true).with_steal_cap(true);
        let mut out = Vec::new();
        p.assign(&[2, 2, 2], &mut out);
        assert_eq!(out, vec![(0, 0), (1, 7), (2, 8)]);
        // SM 1's TB finishes (2 free): waiting 6, 0, 0; Average floor(6/3) = 2, 4 to steal,
        // capped at SM 1's 2 free contexts: TBs 5, 6 (the tail); it issues TB 5.
        out.clear();
        p.assign(&[0, 2, 0], &mut out);
        assert_eq!(out, vec![(1, 5)]);
        assert_eq!(p.stolen(), 2);
        // SM 2's TB finishes; SM 1 (no free context now) waits on stolen TB 6, which does
        // not move again; SM 0 waits on TBs 1..=4: Average floor(5/3) = 1, 4 - 1 = 3 to
        // steal, capped at 2: TBs 3, 4.
        out.clear();
        p.assign(&[0, 0, 2], &mut out);
        assert_eq!(out, vec![(2, 3)]);
        assert_eq!(p.stolen(), 4);
        assert_eq!(p.local[1], VecDeque::from(vec![6]));
        assert_eq!(p.local[0], VecDeque::from(vec![1, 2]));
    }

    #[test]
    fn groups_go_round_robin_from_the_sm_after_the_last_taker() {
        // 3 SMs, one-TB groups 0..6. Launch: SMs 0, 1, 2 take groups 0, 1, 2; the next visit
        // starts at SM 0. SM 1 alone frees a context and takes group 3: the next visit
        // starts at SM 2. SMs 0 and 2 free one each in the same cycle: SM 2 is visited
        // first and takes group 4, SM 0 then takes group 5 (§5.3's round robin; from SM 0
        // every cycle SM 0 would take 4).
        let mut p = Paver::new((0..6).map(|t| vec![t]).collect(), 3, false);
        let mut out = Vec::new();
        p.assign(&[1, 1, 1], &mut out);
        assert_eq!(out, vec![(0, 0), (1, 1), (2, 2)]);
        out.clear();
        p.assign(&[0, 1, 0], &mut out);
        assert_eq!(out, vec![(1, 3)]);
        out.clear();
        p.assign(&[1, 0, 1], &mut out);
        assert_eq!(out, vec![(2, 4), (0, 5)]);
        assert_eq!(p.pending(), 0);
    }

    #[test]
    fn pairs_wait_for_two_contexts() {
        // A BCS schedule: pairs issue together and only into two free contexts.
        let mut p = Paver::new(vec![vec![0, 1], vec![2, 3], vec![4]], 2, false).with_issue_unit(2);
        let mut out = Vec::new();
        p.assign(&[1, 3], &mut out);
        assert_eq!(out, vec![(1, 0), (1, 1)]);
        out.clear();
        p.assign(&[1, 1], &mut out);
        assert!(out.is_empty(), "one free context each: nothing issues");
        out.clear();
        p.assign(&[2, 1], &mut out);
        assert_eq!(out, vec![(0, 2), (0, 3)]);
        out.clear();
        p.assign(&[1, 2], &mut out);
        assert_eq!(out, vec![(1, 4)]);
        assert_eq!(p.pending(), 0);
    }
}
