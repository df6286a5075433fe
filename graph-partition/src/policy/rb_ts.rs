//! RB-TS (PAVER §4.3, Algorithm 1): a FIFO queue of parts, each popped part bisected by
//! METIS (balanced, minimum cut); a half becomes a leaf when its size is below x (the
//! paper's `< maxTB`, [`Params::strict_less`], the default; at most x without it),
//! otherwise it goes to the back of the queue. The root is always bisected, as in Algorithm 1 (line 7); a part of one TB
//! is always a leaf (it cannot be split). On a grid smaller than one wave (fewer than N·x
//! TBs, with [`Params::shrink_groups`]) a leaf is also at most one SM's share,
//! [`Params::group_size`] = `ceil(n/N)`, and while there are fewer than N leaves the
//! largest leaf (the leftmost of equal ones) is bisected once more, so every SM gets a
//! group. The share bound is inclusive under either rule: a leaf of the share is the one
//! group its SM gets (halving it would hand each SM two unrelated groups); the `< x` rule
//! still holds, so a share of x (a grid just short of a wave) gives leaves below x, as a
//! full wave does.
//!
//! Leaf order: left to right in the bisection tree (the half holding the smaller TB id is
//! the left child, since METIS's 0/1 labels carry no meaning),
//! which the text asks for ("leaf nodes prioritised from left to right"). Algorithm 1 as
//! printed appends leaves in the order the queue finds them (breadth-first); the two agree
//! whenever all leaves sit at the same depth. TBs inside a leaf are in ascending id order.

use super::{Groups, Params, Policy};
use crate::error::Result;
use crate::graph::Graph;
use crate::metis_part::{Partitioner, SubGraph};
use std::collections::VecDeque;

/// Recursive bisection until a part fits on one SM.
#[derive(Debug, Clone, Copy, Default)]
pub struct RbTs;

impl Policy for RbTs {
    fn name(&self) -> &'static str {
        "rb-ts"
    }
    fn lrr_floor_applies(&self) -> bool {
        true
    }
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        p.validate()?;
        if let Some(groups) = super::without_locality(g, p) {
            return Ok(groups);
        }
        let n = g.num_tbs();
        if n == 0 {
            return Ok(Vec::new());
        }
        let x = p.tbs_per_sm.max(1) as usize;
        // One SM's share of a grid smaller than one wave, else x (see the module docs).
        let share = p.group_size(n) as usize;
        let is_leaf = |size: usize| size <= 1 || (size <= share && (!p.strict_less || size < x));
        let mut part = Partitioner::new(g, p.seed);
        // On a small grid leaves may be bisected again: keep their edges.
        let small = p.shrinks(n);
        let needs_edges = |size: usize| !is_leaf(size) || (small && size >= 2);
        // (tree path: false = left, true = right; part)
        let mut leaves: Vec<(Vec<bool>, SubGraph)> = Vec::new();
        let mut queue: VecDeque<(Vec<bool>, SubGraph)> = VecDeque::new();
        let root = part.whole();
        if root.len() <= 1 {
            leaves.push((Vec::new(), root));
        } else {
            queue.push_back((Vec::new(), root));
        }
        while let Some((path, vertices)) = queue.pop_front() {
            let (left, right) = part.split(vertices, needs_edges)?;
            // Both halves of a part of two or more TBs are non-empty.
            for (side, half) in [(false, left), (true, right)] {
                let mut child = path.clone();
                child.push(side);
                if is_leaf(half.len()) {
                    leaves.push((child, half));
                } else {
                    queue.push_back((child, half));
                }
            }
        }
        // Paths of leaves are prefix-free, so lexicographic order is left-to-right order.
        leaves.sort_by(|a, b| a.0.cmp(&b.0));
        while small && leaves.len() < p.num_sms as usize {
            let mut largest = 0;
            for (k, leaf) in leaves.iter().enumerate() {
                if leaf.1.len() > leaves[largest].1.len() {
                    largest = k;
                }
            }
            if leaves[largest].1.len() < 2 {
                break;
            }
            let (path, vertices) = leaves.remove(largest);
            let (left, right) = part.split(vertices, |size| size >= 2)?;
            let mut l = path.clone();
            l.push(false);
            let mut r = path;
            r.push(true);
            leaves.insert(largest, (r, right));
            leaves.insert(largest, (l, left));
        }
        let groups = leaves.into_iter().map(|(_, v)| v.into_tbs()).collect();
        Ok(groups)
    }
}
