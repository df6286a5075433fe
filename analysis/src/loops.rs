//! Natural loops: one per header, the union of the natural loops of all back edges into it
//! (a back edge `t -> h` is one whose target dominates its source), with the loop nest.

use std::fmt;

use ptx_parser::{BlockId, Cfg};

use crate::dom::DomTree;

/// A loop: index into [`LoopForest::loops`]. Displays as `L2` .
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct LoopId(pub u32);

impl LoopId {
    /// The index into [`LoopForest::loops`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for LoopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "loop{}", self.0)
    }
}

/// One natural loop.
#[derive(Clone, Debug)]
pub struct Loop {
    /// The header (dominates every block of the loop).
    pub header: BlockId,
    /// Sources of the back edges.
    pub latches: Vec<BlockId>,
    /// Blocks of the loop, nested loops included, sorted.
    pub blocks: Vec<BlockId>,
    /// The innermost enclosing loop.
    pub parent: Option<LoopId>,
    /// Nesting depth (1 for an outermost loop).
    pub depth: u32,
}

/// All natural loops of a function.
#[derive(Clone, Debug, Default)]
pub struct LoopForest {
    /// Loops, outer loops before the loops they contain.
    pub loops: Vec<Loop>,
    /// Innermost loop of each block.
    innermost: Vec<Option<LoopId>>,
}

impl LoopForest {
    /// Finds the natural loops of `cfg`.
    pub fn compute(cfg: &Cfg, dom: &DomTree) -> LoopForest {
        let n = cfg.blocks.len();
        let mut loops: Vec<Loop> = Vec::new();
        for &h in &dom.rpo {
            let latches: Vec<BlockId> = cfg.preds[h.index()]
                .iter()
                .copied()
                .filter(|&p| dom.dominates(h, p))
                .collect();
            if latches.is_empty() {
                continue;
            }
            let mut member = vec![false; n];
            member[h.index()] = true;
            let mut stack: Vec<BlockId> = latches.clone();
            while let Some(b) = stack.pop() {
                if member[b.index()] || !dom.is_reachable(b) {
                    continue;
                }
                member[b.index()] = true;
                stack.extend(cfg.preds[b.index()].iter().copied());
            }
            let blocks = (0..n).filter(|&b| member[b]).map(BlockId::new).collect();
            loops.push(Loop {
                header: h,
                latches,
                blocks,
                parent: None,
                depth: 1,
            });
        }
        // Outer loops come first in RPO of headers; a loop's parent is the smallest earlier
        // loop containing its header.
        for i in 0..loops.len() {
            let h = loops[i].header;
            let parent = (0..i)
                .filter(|&j| loops[j].blocks.binary_search(&h).is_ok())
                .min_by_key(|&j| loops[j].blocks.len());
            loops[i].parent = parent.map(|p| LoopId(p as u32));
            loops[i].depth = parent.map_or(1, |p| loops[p].depth + 1);
        }
        let mut innermost = vec![None; n];
        for (i, l) in loops.iter().enumerate() {
            for b in &l.blocks {
                let cur: &mut Option<LoopId> = &mut innermost[b.index()];
                if cur.is_none_or(|c| loops[c.index()].depth < l.depth) {
                    *cur = Some(LoopId(i as u32));
                }
            }
        }
        LoopForest { loops, innermost }
    }

    /// The innermost loop containing `b`.
    pub fn innermost(&self, b: BlockId) -> Option<LoopId> {
        self.innermost.get(b.index()).copied().flatten()
    }

    /// The loop `l`.
    pub fn get(&self, l: LoopId) -> &Loop {
        &self.loops[l.index()]
    }

    /// Whether block `b` is in loop `l` (nested loops included).
    pub fn is_in_loop(&self, b: BlockId, l: LoopId) -> bool {
        self.loops[l.index()].blocks.binary_search(&b).is_ok()
    }

    /// The loop whose header is `b`.
    pub fn loop_header(&self, b: BlockId) -> Option<LoopId> {
        self.loops
            .iter()
            .position(|l| l.header == b)
            .map(|i| LoopId(i as u32))
    }

    /// The loops containing `b`, outermost first.
    pub fn nest(&self, b: BlockId) -> Vec<LoopId> {
        let mut v = Vec::new();
        let mut cur = self.innermost(b);
        while let Some(l) = cur {
            v.push(l);
            cur = self.loops[l.index()].parent;
        }
        v.reverse();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_loops_of_real_ptx() {
        let m = ptx_parser::parse(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u32 n)\n{\n\
             .reg .pred %p<3>;\n.reg .b32 %r<4>;\n\
             ld.param.u32 %r1, [n];\nmov.u32 %r2, 0;\n\
             $O:\nmov.u32 %r3, 0;\n\
             $I:\nadd.s32 %r3, %r3, 1;\nsetp.lt.s32 %p1, %r3, %r1;\n@%p1 bra $I;\n\
             add.s32 %r2, %r2, 1;\nsetp.lt.s32 %p2, %r2, %r1;\n@%p2 bra $O;\nret;\n}\n",
        )
        .unwrap();
        let f = m.kernel("k").unwrap();
        let cfg = f.cfg();
        let dom = DomTree::compute(&cfg);
        let lf = LoopForest::compute(&cfg, &dom);
        assert_eq!(lf.loops.len(), 2);
        assert_eq!(lf.loops[1].parent, Some(LoopId(0)));
        assert_eq!(lf.loops[1].depth, 2);
        let inner_header = lf.loops[1].header;
        assert_eq!(lf.nest(inner_header), vec![LoopId(0), LoopId(1)]);
    }
}
