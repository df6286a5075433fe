//! Reverse postorder and the dominator tree of a [`Cfg`], as a side table computed from the
//! CFG by the project's one dominance algorithm ([`ptx_parser::dom`]).

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
    /// Computes the dominator tree of `cfg` ([`ptx_parser::dom::dominance`] from the entry).
    pub fn compute(cfg: &Cfg) -> DomTree {
        let d = ptx_parser::dom::dominance(
            cfg.blocks.len(),
            0,
            |b, out| out.extend(cfg.blocks[b].succs.iter().map(|s| s.index())),
            |b, out| out.extend(cfg.preds[b].iter().map(|p| p.index())),
        );
        let narrow = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        DomTree {
            rpo: d.rpo.iter().map(|&b| BlockId::new(b)).collect(),
            rpo_index: d.rpo_index.iter().map(|&i| narrow(i)).collect(),
            idom: d
                .idom
                .iter()
                .enumerate()
                .map(|(b, &i)| (b != 0 && i != usize::MAX).then(|| BlockId::new(i)))
                .collect(),
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
