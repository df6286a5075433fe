//! The PAVER runtime (PAVER §5.1-5.3): the schedule's groups wait in a global queue and are
//! handed to SMs round robin, each SM keeping its group in registers `next` / `tail`
//! (`nextTB` = the TB at `next`); when a context frees the SM issues `nextTB`, and when its
//! group is exhausted it takes the next group from the queue. With task stealing (§5.2,
//! Algorithm 2), an SM with a free context, an exhausted group and an empty global queue
//! picks the donor with the most waiting TBs (`tail - next`) and steals
//! `Max_waiting - Average_waiting` TBs from the donor's tail.

use super::TbScheduler;
use std::collections::VecDeque;

/// PAVER runtime state.
#[derive(Debug, Clone)]
pub struct Paver {
    queue: VecDeque<Vec<u32>>,
    /// Per SM: the waiting TBs of its group (front = `next`, back = `tail - 1`).
    local: Vec<VecDeque<u32>>,
    steal: bool,
    stolen: u64,
    pending: u64,
}

impl Paver {
    /// Groups in global-queue order over `num_sms` SMs; `steal` enables Algorithm 2.
    pub fn new(groups: Vec<Vec<u32>>, num_sms: u32, steal: bool) -> Paver {
        let pending = groups.iter().map(|g| g.len() as u64).sum();
        Paver {
            queue: groups.into_iter().filter(|g| !g.is_empty()).collect(),
            local: vec![VecDeque::new(); num_sms as usize],
            steal,
            stolen: 0,
            pending,
        }
    }

    /// Algorithm 2 for SM `sm`.
    fn steal_for(&mut self, sm: usize) {
        let n = self.local.len() as u64;
        let total: u64 = self.local.iter().map(|q| q.len() as u64).sum();
        let Some((donor, max)) = self
            .local
            .iter()
            .enumerate()
            .map(|(i, q)| (i, q.len() as u64))
            .rev()
            .max_by_key(|&(_, l)| l)
        else {
            return;
        };
        let take = max - total / n;
        if take == 0 || donor == sm {
            return;
        }
        let d = &mut self.local[donor];
        let moved: Vec<u32> = d.drain(d.len() - take as usize..).collect();
        self.stolen += moved.len() as u64;
        self.local[sm].extend(moved);
    }
}

impl TbScheduler for Paver {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        for (sm, &f) in free.iter().enumerate() {
            if f == 0 || sm >= self.local.len() {
                continue;
            }
            if self.local[sm].is_empty() {
                if let Some(g) = self.queue.pop_front() {
                    self.local[sm] = g.into();
                } else if self.steal {
                    self.steal_for(sm);
                }
            }
            if let Some(tb) = self.local[sm].pop_front() {
                out.push((sm as u32, tb));
                self.pending -= 1;
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
    fn algorithm_2_steals_from_donor_tail() {
        // The paper's example: the donor holds TB0..TB3 waiting, the recipient steals 2
        // (max 4, average 4/2 = 2): it gets TB2, TB3, the donor keeps TB0, TB1.
        let mut p = Paver::new(vec![vec![9, 0, 1, 2, 3], vec![8]], 2, true);
        let mut out = Vec::new();
        p.assign(&[1, 1], &mut out);
        assert_eq!(out, vec![(0, 9), (1, 8)]);
        out.clear();
        p.assign(&[0, 1], &mut out);
        assert_eq!(out, vec![(1, 2)]);
        assert_eq!(p.stolen(), 2);
        assert_eq!(p.local[0], VecDeque::from(vec![0, 1]));
        assert_eq!(p.local[1], VecDeque::from(vec![3]));
        let mut q = Paver::new(vec![vec![9, 0, 1, 2, 3], vec![8]], 2, false);
        out.clear();
        q.assign(&[1, 1], &mut out);
        out.clear();
        q.assign(&[0, 1], &mut out);
        assert!(out.is_empty());
    }
}
