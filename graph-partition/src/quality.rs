//! Quality figures of a grouping: how much of the locality graph's weight a schedule keeps
//! close together, under an abstract model of the PAVER runtime (§5.1).
//!
//! Model. Every TB takes one unit of time. Groups leave the global queue in order; the next
//! group goes to the SM with the fewest TBs assigned so far (ties: lowest SM id). With equal
//! group sizes this is plain round-robin (group i on SM i mod N), and it is what the runtime
//! does when an SM takes a new group as soon as its current one is exhausted. Each SM runs
//! its TBs in the order received, x at a time. "At the same time" means: in the same
//! consecutive window of x TBs of one SM's sequence (TBs 0..x, x..2x, ...), i.e. the TBs
//! that share the L1 in one "wave" of that SM. LRR under the same model is groups of one
//! in id order: SM s runs TBs s, s+N, s+2N, ...
//!
//! Figures: total graph weight; weight inside groups; weight between TBs on the same SM (at
//! any time); weight between TBs in the same window (concurrent).

use crate::graph::Graph;
use serde::{Deserialize, Serialize};

/// Captured weights of one grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Quality {
    /// Sum of all edge weights.
    pub total_weight: u64,
    /// Weight of edges with both ends in one group.
    pub intra_group_weight: u64,
    /// Weight of edges with both ends on one SM.
    pub same_sm_weight: u64,
    /// Weight of edges with both ends in one window of x TBs on one SM.
    pub concurrent_weight: u64,
}

/// TB sequence of every SM under the model above.
pub fn assign_to_sms(groups: &[Vec<u32>], num_sms: u32) -> Vec<Vec<u32>> {
    let mut sms: Vec<Vec<u32>> = vec![Vec::new(); num_sms.max(1) as usize];
    for g in groups {
        let mut target = 0;
        for (s, seq) in sms.iter().enumerate() {
            if seq.len() < sms[target].len() {
                target = s;
            }
        }
        sms[target].extend_from_slice(g);
    }
    sms
}

/// Weight of edges whose ends carry the same label (`u32::MAX` = unlabelled).
fn same_label_weight(g: &Graph, label: &[u32]) -> u64 {
    let mut w = 0u64;
    for (i, j, wt) in g.edges() {
        let l = label[i as usize];
        if l != u32::MAX && l == label[j as usize] {
            w = w.saturating_add(wt);
        }
    }
    w
}

/// Quality of `groups` on `num_sms` SMs with `x` TB slots each.
pub fn quality(g: &Graph, groups: &[Vec<u32>], num_sms: u32, x: u32) -> Quality {
    let n = g.num_tbs() as usize;
    let x = x.max(1) as usize;
    let mut label = vec![u32::MAX; n];
    for (k, grp) in groups.iter().enumerate() {
        for &tb in grp {
            label[tb as usize] = k as u32;
        }
    }
    let intra_group_weight = same_label_weight(g, &label);
    let sms = assign_to_sms(groups, num_sms);
    for (s, seq) in sms.iter().enumerate() {
        for &tb in seq {
            label[tb as usize] = s as u32;
        }
    }
    let same_sm_weight = same_label_weight(g, &label);
    let mut window = 0u32;
    for seq in &sms {
        for chunk in seq.chunks(x) {
            for &tb in chunk {
                label[tb as usize] = window;
            }
            window += 1;
        }
    }
    let concurrent_weight = same_label_weight(g, &label);
    Quality {
        total_weight: u64::try_from(g.total_weight()).unwrap_or(u64::MAX),
        intra_group_weight,
        same_sm_weight,
        concurrent_weight,
    }
}

/// The LRR baseline on the same graph and machine.
pub fn lrr_quality(g: &Graph, num_sms: u32, x: u32) -> Quality {
    let groups: Vec<Vec<u32>> = (0..g.num_tbs()).map(|tb| vec![tb]).collect();
    quality(g, &groups, num_sms, x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_loaded_assignment() {
        // Groups of sizes 3,1,1,1 on 2 SMs: SM0 <- g0 (3), SM1 <- g1, g2, g3 (1 each, SM1
        // stays the least loaded until it reaches 3).
        let groups = vec![vec![0, 1, 2], vec![3], vec![4], vec![5]];
        assert_eq!(
            assign_to_sms(&groups, 2),
            vec![vec![0, 1, 2], vec![3, 4, 5]]
        );
    }

    #[test]
    fn windows_and_lrr() {
        // Path 0-1-2-3 with weights 1, 10, 100; 2 SMs, x = 2.
        let g = Graph::from_edges(4, &[(0, 1, 1), (1, 2, 10), (2, 3, 100)]).unwrap();
        // LRR: SM0 runs 0,2 and SM1 runs 1,3: nothing shared on one SM.
        assert_eq!(
            lrr_quality(&g, 2, 2),
            Quality {
                total_weight: 111,
                ..Quality::default()
            }
        );
        // Groups (2,3),(0,1): SM0 runs {2,3}, SM1 runs {0,1}.
        let q = quality(&g, &[vec![2, 3], vec![0, 1]], 2, 2);
        assert_eq!(
            (q.intra_group_weight, q.same_sm_weight, q.concurrent_weight),
            (101, 101, 101)
        );
        // One SM, x = 2, group (1,2,3,0): windows {1,2} and {3,0}: concurrent 10, same SM 111.
        let q = quality(&g, &[vec![1, 2, 3, 0]], 1, 2);
        assert_eq!(
            (q.intra_group_weight, q.same_sm_weight, q.concurrent_weight),
            (111, 111, 10)
        );
    }
}
