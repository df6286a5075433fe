//! RB-TS (PAVER §4.3, Algorithm 1): a FIFO queue of parts, each popped part bisected by
//! METIS (balanced, minimum cut); a half becomes a leaf when its size is at most x (or
//! below x with `strict_less`, the printed `< maxTB`), otherwise it goes to the back of
//! the queue. The root is always bisected, as in Algorithm 1 (line 7); a part of one TB
//! is always a leaf (it cannot be split). On a grid smaller than one wave (fewer than N·x
//! TBs) the leaf size is [`Params::group_size`] instead of x, so there are at least N
//! leaves and every SM gets work.
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
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups> {
        p.validate()?;
        if let Some(groups) = super::without_locality(g) {
            return Ok(groups);
        }
        let n = g.num_tbs();
        if n == 0 {
            return Ok(Vec::new());
        }
        let x = p.group_size(n) as usize;
        let is_leaf = |size: usize| size <= 1 || if p.strict_less { size < x } else { size <= x };
        let mut part = Partitioner::new(g, p.seed);
        // (tree path: false = left, true = right; part)
        let mut leaves: Vec<(Vec<bool>, Vec<u32>)> = Vec::new();
        let mut queue: VecDeque<(Vec<bool>, SubGraph)> = VecDeque::new();
        let root = part.whole();
        if root.len() <= 1 {
            leaves.push((Vec::new(), root.into_tbs()));
        } else {
            queue.push_back((Vec::new(), root));
        }
        while let Some((path, vertices)) = queue.pop_front() {
            let (left, right) = part.split(vertices, |size| !is_leaf(size))?;
            // Both halves of a part of two or more TBs are non-empty.
            for (side, half) in [(false, left), (true, right)] {
                let mut child = path.clone();
                child.push(side);
                if is_leaf(half.len()) {
                    leaves.push((child, half.into_tbs()));
                } else {
                    queue.push_back((child, half));
                }
            }
        }
        // Paths of leaves are prefix-free, so lexicographic order is left-to-right order.
        leaves.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(leaves.into_iter().map(|(_, v)| v).collect())
    }
}
