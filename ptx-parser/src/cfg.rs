//! Basic blocks and the control-flow graph of a [`Function`].
//!
//! Blocks start at the first instruction, at every labelled instruction and after every
//! terminator (`bra`, `brx.idx`, `ret`, `exit`, `trap`, guarded or not). Successors:
//! an unguarded `bra L` goes to `L`; a guarded one to `L` and the fall-through; `brx.idx` to
//! the labels of its `.branchtargets` list (all labels of the function when it cannot be
//! resolved); unguarded `ret`/`exit`/`trap` end the path; anything else falls through.

use crate::ir::*;
use crate::opcode::Opcode;
use std::ops::Range;

/// A basic block: a range of instructions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The label naming the first instruction, if any (the first such label).
    pub label: Option<LabelId>,
    /// The instructions, in order.
    pub insts: Range<InstId>,
    /// Successor blocks, without duplicates, in the order found.
    pub succs: Vec<BlockId>,
}

/// The control-flow graph: blocks in layout order, entry is block 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cfg {
    /// Blocks indexed by [`BlockId`].
    pub blocks: Vec<Block>,
    /// Predecessors of each block.
    pub preds: Vec<Vec<BlockId>>,
    /// Block of each instruction.
    pub block_of: Vec<BlockId>,
}

impl Cfg {
    /// Computes the CFG of `f` (empty for a declaration or an empty body).
    pub fn compute(f: &Function) -> Cfg {
        let n = f.insts.len();
        if n == 0 {
            return Cfg::default();
        }
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        let mut label_at: Vec<Option<LabelId>> = vec![None; n + 1];
        for (i, l) in f.labels.iter().enumerate() {
            let t = l.target.index().min(n);
            leader[t] = true;
            if label_at[t].is_none() {
                label_at[t] = Some(LabelId::new(i));
            }
        }
        for (i, inst) in f.insts.iter().enumerate() {
            if inst.op.is_terminator() {
                leader[i + 1] = true;
            }
        }
        // The body's end closes the last block, also when the kernel falls off its end
        // without `ret` (PTX allows it: the thread exits).
        leader[n] = true;
        let mut blocks = Vec::new();
        let mut block_of = vec![BlockId(0); n];
        let mut start = 0;
        for i in 1..=n {
            if leader[i] {
                let id = BlockId::new(blocks.len());
                block_of[start..i].fill(id);
                blocks.push(Block {
                    label: label_at[start],
                    insts: InstId::new(start)..InstId::new(i),
                    succs: Vec::new(),
                });
                start = i;
            }
        }
        // Block beginning at a label target (targets at `n` have no block).
        let target_block = |l: LabelId| -> Option<BlockId> {
            let t = f.labels.get(l.index())?.target.index();
            block_of.get(t).copied()
        };
        let nb = blocks.len();
        for (b, block) in blocks.iter_mut().enumerate() {
            let last = block.insts.end.index() - 1;
            let Some(inst) = f.insts.get(last) else {
                continue;
            };
            let mut succs = Vec::new();
            let falls = b + 1 < nb;
            match inst.op {
                Opcode::Bra => {
                    if let Some(t) = inst.operands.iter().find_map(|o| match o {
                        Operand::Label(l) => Some(*l),
                        _ => None,
                    }) {
                        succs.extend(target_block(t));
                    }
                    if inst.guard.is_some() && falls {
                        succs.push(BlockId::new(b + 1));
                    }
                }
                Opcode::BrxIdx => {
                    let list = inst.operands.iter().find_map(|o| match o {
                        Operand::Symbol(Symbol::Directive(d)) => f.directives.get(*d as usize),
                        _ => None,
                    });
                    match list {
                        Some(d) if !d.targets.is_empty() => {
                            succs.extend(d.targets.iter().filter_map(|l| target_block(*l)))
                        }
                        _ => succs.extend(
                            (0..f.labels.len()).filter_map(|l| target_block(LabelId::new(l))),
                        ),
                    }
                    if inst.guard.is_some() && falls {
                        succs.push(BlockId::new(b + 1));
                    }
                }
                Opcode::Ret | Opcode::Exit | Opcode::Trap => {
                    if inst.guard.is_some() && falls {
                        succs.push(BlockId::new(b + 1));
                    }
                }
                _ => {
                    if falls {
                        succs.push(BlockId::new(b + 1));
                    }
                }
            }
            let mut seen = Vec::with_capacity(succs.len());
            for s in succs {
                if !seen.contains(&s) {
                    seen.push(s);
                }
            }
            block.succs = seen;
        }
        let mut preds = vec![Vec::new(); nb];
        for (b, block) in blocks.iter().enumerate() {
            for s in &block.succs {
                if let Some(p) = preds.get_mut(s.index()) {
                    p.push(BlockId::new(b));
                }
            }
        }
        Cfg {
            blocks,
            preds,
            block_of,
        }
    }

    /// The block containing instruction `i`.
    pub fn block_of(&self, i: InstId) -> Option<BlockId> {
        self.block_of.get(i.index()).copied()
    }

    /// The block `b`.
    pub fn block(&self, b: BlockId) -> Option<&Block> {
        self.blocks.get(b.index())
    }
}

impl Function {
    /// The control-flow graph of this function; see [`Cfg::compute`].
    pub fn cfg(&self) -> Cfg {
        Cfg::compute(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_and_exit() {
        let m = crate::parse(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u32 n)\n{\n\
             .reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
             ld.param.u32 %r1, [n];\n\
             mov.u32 %r2, 0;\n\
             $L__BB0_1:\n\
             add.s32 %r2, %r2, 1;\n\
             setp.lt.s32 %p1, %r2, %r1;\n\
             @%p1 bra $L__BB0_1;\n\
             @!%p1 ret;\n\
             exit;\n}\n",
        )
        .unwrap();
        let f = m.kernel("k").unwrap();
        let cfg = f.cfg();
        let shape: Vec<(Option<LabelId>, Range<u32>, Vec<u32>)> = cfg
            .blocks
            .iter()
            .map(|b| {
                (
                    b.label,
                    b.insts.start.0..b.insts.end.0,
                    b.succs.iter().map(|s| s.0).collect(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (None, 0..2, vec![1]),
                (Some(LabelId(0)), 2..5, vec![1, 2]),
                (None, 5..6, vec![3]),
                (None, 6..7, vec![]),
            ]
        );
        assert_eq!(cfg.preds[1], vec![BlockId(0), BlockId(1)]);
        assert_eq!(cfg.block_of(InstId(3)), Some(BlockId(1)));
    }

    #[test]
    fn a_body_that_falls_off_its_end_is_a_block() {
        let m = crate::parse(
            ".version 8.0\n.entry k(.param .u32 n)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
             ld.param.u32 %r1, [n];\n\
             setp.lt.s32 %p1, %r1, 4;\n\
             @%p1 bra L;\n\
             add.s32 %r2, %r1, 1;\n\
             L:\n mov.u32 %r3, %r1;\n}\n",
        )
        .unwrap();
        let cfg = m.kernel("k").unwrap().cfg();
        let shape: Vec<(Range<u32>, Vec<u32>)> = cfg
            .blocks
            .iter()
            .map(|b| {
                (
                    b.insts.start.0..b.insts.end.0,
                    b.succs.iter().map(|s| s.0).collect(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            vec![(0..3, vec![2, 1]), (3..4, vec![2]), (4..5, vec![])]
        );
        assert_eq!(cfg.block_of(InstId(4)), Some(BlockId(2)));
    }

    #[test]
    fn unguarded_branch_and_brx() {
        let m = crate::parse(
            ".version 8.0\n.entry k()\n{\n.reg .b32 %r<2>;\n\
             ts: .branchtargets A, B;\n\
             brx.idx %r1, ts;\n\
             A:\n bra B;\n\
             mov.u32 %r0, 1;\n\
             B:\n ret;\n}\n",
        )
        .unwrap();
        let f = m.kernel("k").unwrap();
        let cfg = f.cfg();
        let succs: Vec<Vec<u32>> = cfg
            .blocks
            .iter()
            .map(|b| b.succs.iter().map(|s| s.0).collect())
            .collect();
        assert_eq!(succs, vec![vec![1, 3], vec![3], vec![3], vec![]]);
    }
}
