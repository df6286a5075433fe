//! Dominance on any directed graph (Cooper, Harvey and Kennedy, "A Simple, Fast Dominance
//! Algorithm"): the one implementation behind the analysis's dominator tree of a [`Cfg`]
//! (`analysis::dom`) and the interpreter's post-dominators (the same algorithm on the
//! reversed CFG with a virtual exit, `sim::interp::simt`).
//!
//! [`Cfg`]: crate::Cfg

/// The nodes reachable from a root, in reverse postorder, with their immediate dominators.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dominance {
    /// Reachable nodes in reverse postorder (the root first).
    pub rpo: Vec<usize>,
    /// Position of each node in `rpo` (`usize::MAX` when unreachable).
    pub rpo_index: Vec<usize>,
    /// Immediate dominator of each node: the root's is itself, an unreachable node's
    /// `usize::MAX`.
    pub idom: Vec<usize>,
}

/// Dominance from `root` in the graph of `n` nodes whose successors and predecessors
/// `succs(v, out)` and `preds(v, out)` push onto `out` (depth-first search in successor
/// order; the dominators do not depend on it).
pub fn dominance(
    n: usize,
    root: usize,
    succs: impl Fn(usize, &mut Vec<usize>),
    preds: impl Fn(usize, &mut Vec<usize>),
) -> Dominance {
    if n == 0 || root >= n {
        return Dominance::default();
    }
    // Iterative DFS postorder.
    let mut post = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<(usize, Vec<usize>, usize)> = Vec::new();
    let mut out = Vec::new();
    succs(root, &mut out);
    stack.push((root, std::mem::take(&mut out), 0));
    seen[root] = true;
    while let Some((v, next, k)) = stack.last_mut() {
        if *k < next.len() {
            let s = next[*k];
            *k += 1;
            if !seen[s] {
                seen[s] = true;
                succs(s, &mut out);
                stack.push((s, std::mem::take(&mut out), 0));
            }
        } else {
            post.push(*v);
            stack.pop();
        }
    }
    let rpo: Vec<usize> = post.into_iter().rev().collect();
    let mut rpo_index = vec![usize::MAX; n];
    for (i, &v) in rpo.iter().enumerate() {
        rpo_index[v] = i;
    }
    let mut idom = vec![usize::MAX; n];
    idom[root] = root;
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while rpo_index[a] > rpo_index[b] {
                a = idom[a];
            }
            while rpo_index[b] > rpo_index[a] {
                b = idom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in rpo.iter().skip(1) {
            out.clear();
            preds(v, &mut out);
            let mut new = usize::MAX;
            for &p in &out {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != usize::MAX && idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    Dominance {
        rpo,
        rpo_index,
        idom,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diamond with a loop back to the top: 0 -> 1 -> {2, 3} -> 4 -> 1, 4 -> 5.
    #[test]
    fn diamond_with_a_loop() {
        let succ: Vec<Vec<usize>> = vec![vec![1], vec![2, 3], vec![4], vec![4], vec![1, 5], vec![]];
        let mut pred = vec![Vec::new(); succ.len()];
        for (v, ss) in succ.iter().enumerate() {
            for &s in ss {
                pred[s].push(v);
            }
        }
        let d = dominance(6, 0, |v, o| o.extend(&succ[v]), |v, o| o.extend(&pred[v]));
        assert_eq!(d.idom, vec![0, 0, 1, 1, 1, 4]);
        assert_eq!(d.rpo[0], 0);
        assert_eq!(d.rpo.len(), 6);
    }

    #[test]
    fn unreachable_nodes_have_no_dominator() {
        let succ: Vec<Vec<usize>> = vec![vec![1], vec![], vec![1]];
        let d = dominance(
            3,
            0,
            |v, o| o.extend(&succ[v]),
            |v, o| o.extend((0..3).filter(|&u| succ[u].contains(&v))),
        );
        assert_eq!(d.idom, vec![0, 0, usize::MAX]);
        assert_eq!(d.rpo_index[2], usize::MAX);
    }
}
