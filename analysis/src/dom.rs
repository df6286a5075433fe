//! Reverse postorder and the dominator tree of a [`Cfg`] (Cooper, Harvey and Kennedy, "A
//! Simple, Fast Dominance Algorithm"), as a side table computed from the CFG.

use ptx_parser::{BlockId, Cfg};

/// Dominator tree and reverse postorder of the blocks reachable from the entry.
#[derive(Clone, Debug, Default)]
pub struct DomTree {
    /// Reachable blocks in reverse postorder (entry first).
    pub rpo: Vec<BlockId>,
    /// Position of each block in [`DomTree::rpo`] (`u32::MAX` when unreachable).
    rpo_index: Vec<u32>,
    /// Immediate dominator of each block (the entry and unreachable blocks have none).
    idom: Vec<Option<BlockId>>,
}

impl DomTree {
    /// Computes the dominator tree of `cfg`.
    pub fn compute(cfg: &Cfg) -> DomTree {
        let n = cfg.blocks.len();
        if n == 0 {
            return DomTree::default();
        }
        // Iterative DFS postorder.
        let mut post = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        seen[0] = true;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            let succs = &cfg.blocks[b].succs;
            if *next < succs.len() {
                let s = succs[*next].index();
                *next += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(BlockId::new(b));
                stack.pop();
            }
        }
        let rpo: Vec<BlockId> = post.into_iter().rev().collect();
        let mut rpo_index = vec![u32::MAX; n];
        for (i, b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = i as u32;
        }
        let mut idom: Vec<Option<u32>> = vec![None; n];
        idom[0] = Some(0);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new: Option<u32> = None;
                for p in &cfg.preds[b.index()] {
                    let p = p.index();
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p as u32,
                        Some(q) => intersect(&idom, &rpo_index, p as u32, q),
                    });
                }
                if new.is_some() && idom[b.index()] != new {
                    idom[b.index()] = new;
                    changed = true;
                }
            }
        }
        let idom = idom
            .iter()
            .enumerate()
            .map(|(b, d)| match d {
                Some(d) if b != 0 => Some(BlockId(*d)),
                _ => None,
            })
            .collect();
        DomTree {
            rpo,
            rpo_index,
            idom,
        }
    }

    /// The immediate dominator of `b` (`None` for the entry and unreachable blocks).
    pub fn idom(&self, b: BlockId) -> Option<BlockId> {
        self.idom.get(b.index()).copied().flatten()
    }

    /// Whether `b` is reachable from the entry.
    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.rpo_index
            .get(b.index())
            .is_some_and(|&i| i != u32::MAX)
    }

    /// Position of `b` in reverse postorder.
    pub fn rpo_position(&self, b: BlockId) -> Option<u32> {
        self.rpo_index
            .get(b.index())
            .copied()
            .filter(|&i| i != u32::MAX)
    }

    /// Whether `a` dominates `b` (every block dominates itself).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return false;
        }
        let mut x = b;
        loop {
            if x == a {
                return true;
            }
            match self.idom(x) {
                Some(d) => x = d,
                None => return false,
            }
        }
    }
}

fn intersect(idom: &[Option<u32>], order: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while order[a as usize] > order[b as usize] {
            a = idom[a as usize].unwrap_or(0);
        }
        while order[b as usize] > order[a as usize] {
            b = idom[b as usize].unwrap_or(0);
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_parser::Block;

    fn cfg(edges: &[&[u32]]) -> Cfg {
        let blocks: Vec<Block> = edges
            .iter()
            .map(|s| Block {
                label: None,
                insts: ptx_parser::InstId(0)..ptx_parser::InstId(0),
                succs: s.iter().map(|&x| BlockId(x)).collect(),
            })
            .collect();
        let mut preds = vec![Vec::new(); blocks.len()];
        for (b, bl) in blocks.iter().enumerate() {
            for s in &bl.succs {
                preds[s.index()].push(BlockId::new(b));
            }
        }
        Cfg {
            blocks,
            preds,
            block_of: Vec::new(),
        }
    }

    /// Slow reference: a dominates b iff b is unreachable from the entry without a.
    fn dominates_slow(c: &Cfg, a: usize, b: usize) -> bool {
        if a == b {
            return true;
        }
        let mut seen = vec![false; c.blocks.len()];
        let mut st = vec![0usize];
        if a == 0 {
            return true;
        }
        seen[0] = true;
        while let Some(x) = st.pop() {
            if x == b {
                return false;
            }
            for s in &c.blocks[x].succs {
                let s = s.index();
                if s != a && !seen[s] {
                    seen[s] = true;
                    st.push(s);
                }
            }
        }
        true
    }

    #[test]
    fn diamond_and_loop_agree_with_reference() {
        let graphs: Vec<Vec<&[u32]>> = vec![
            vec![&[1, 2], &[3], &[3], &[]],
            vec![&[1], &[2, 3], &[1], &[4, 1], &[]],
            vec![&[1, 4], &[2], &[3, 1], &[5], &[3], &[]],
        ];
        for g in graphs {
            let c = cfg(&g);
            let d = DomTree::compute(&c);
            for a in 0..g.len() {
                for b in 0..g.len() {
                    assert_eq!(
                        d.dominates(BlockId::new(a), BlockId::new(b)),
                        dominates_slow(&c, a, b),
                        "{a} dom {b} in {g:?}"
                    );
                }
            }
        }
    }
}
