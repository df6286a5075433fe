//! SIMT reconvergence: immediate post-dominators of the CFG and the per-warp reconvergence
//! stack (PTX ISA leaves reconvergence to the implementation; this is the classic
//! immediate-post-dominator scheme of GPGPU-Sim / Fung et al., MICRO 2007).
//!
//! A divergent branch in block `B` sets the current stack entry to continue at the first
//! instruction of `ipdom(B)` and pushes one entry per path, each to run until it reaches that
//! instruction. Blocks whose paths never meet again (both reach `exit`) reconverge at the
//! virtual exit ([`EXIT_PC`]): the paths run one after the other to completion.

use ptx_parser::{BlockId, Cfg, Function, Opcode};

/// Reconvergence "PC" of paths that only meet at the kernel's exit.
pub const EXIT_PC: u32 = u32::MAX;

/// Immediate post-dominator of every block (`None`: only the virtual exit post-dominates it,
/// or it cannot reach an exit).
pub fn post_dominators(f: &Function, cfg: &Cfg) -> Vec<Option<BlockId>> {
    let nb = cfg.blocks.len();
    let exit = nb; // the virtual exit node
    let leaves: Vec<bool> = cfg
        .blocks
        .iter()
        .map(|b| {
            let last = b
                .insts
                .end
                .index()
                .checked_sub(1)
                .and_then(|i| f.insts.get(i));
            b.succs.is_empty()
                || last.is_some_and(|i| matches!(i.op, Opcode::Ret | Opcode::Exit | Opcode::Trap))
        })
        .collect();
    // The reverse graph: exit -> blocks that leave the kernel, b -> preds(b); its
    // predecessors are the CFG's successors (and the exit for leaving blocks).
    let d = ptx_parser::dom::dominance(
        nb + 1,
        exit,
        |n, out| {
            if n == exit {
                out.extend((0..nb).filter(|&b| leaves[b]));
            } else {
                out.extend(cfg.preds[n].iter().map(|p| p.index()));
            }
        },
        |n, out| {
            if n < nb {
                out.extend(cfg.blocks[n].succs.iter().map(|s| s.index()));
                if leaves[n] {
                    out.push(exit);
                }
            }
        },
    );
    (0..nb)
        .map(|b| (d.idom[b] < nb).then(|| BlockId::new(d.idom[b])))
        .collect()
}

/// For every instruction: the reconvergence PC of a branch there (first instruction of the
/// immediate post-dominator of its block), [`EXIT_PC`] when none.
pub fn reconvergence_points(f: &Function) -> Vec<u32> {
    let cfg = Cfg::compute(f);
    let ipdom = post_dominators(f, &cfg);
    (0..f.insts.len())
        .map(|i| {
            cfg.block_of
                .get(i)
                .and_then(|b| ipdom.get(b.index()).copied().flatten())
                .and_then(|p| cfg.blocks.get(p.index()))
                .map_or(EXIT_PC, |b| b.insts.start.0)
        })
        .collect()
}

/// For every instruction: whether a thread there may still execute a CTA barrier (`bar`,
/// `barrier`) before it exits, on some path of the CFG. Threads parked where this is false
/// (typically at the `ret` block that an early `return` branched to) will never arrive at a
/// barrier, so a barrier need not wait for them: on a GPU they exit first.
pub fn reaches_barrier(f: &Function) -> Vec<bool> {
    let cfg = Cfg::compute(f);
    let is_bar = |i: usize| {
        f.insts
            .get(i)
            .is_some_and(|x| matches!(x.op, Opcode::Bar | Opcode::Barrier))
    };
    let nb = cfg.blocks.len();
    let has_bar: Vec<bool> = cfg
        .blocks
        .iter()
        .map(|b| (b.insts.start.index()..b.insts.end.index()).any(is_bar))
        .collect();
    // Backward reachability to a block with a barrier: iterate to the fixed point.
    let mut reach = has_bar.clone();
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            if !reach[b] && cfg.blocks[b].succs.iter().any(|s| reach[s.index()]) {
                reach[b] = true;
                changed = true;
            }
        }
    }
    let mut out = vec![false; f.insts.len()];
    for block in &cfg.blocks {
        let after = block.succs.iter().any(|s| reach[s.index()]);
        let mut seen = after;
        for i in (block.insts.start.index()..block.insts.end.index()).rev() {
            seen |= is_bar(i);
            if let Some(o) = out.get_mut(i) {
                *o = seen;
            }
        }
    }
    out
}

/// One entry of a warp's reconvergence stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Next instruction of these threads.
    pub pc: u32,
    /// Where they wait for the rest ([`EXIT_PC`] for the kernel's end).
    pub rpc: u32,
    /// The threads.
    pub mask: u32,
}

/// The per-warp reconvergence stack.
#[derive(Clone, Debug, Default)]
pub(crate) struct SimtStack {
    pub entries: Vec<Entry>,
}

impl SimtStack {
    /// A stack with all `mask` threads at instruction 0.
    pub fn new(mask: u32) -> SimtStack {
        SimtStack {
            entries: vec![Entry {
                pc: 0,
                rpc: EXIT_PC,
                mask,
            }],
        }
    }

    /// Pops finished entries; returns the PC and active mask to run next, or `None` when every
    /// thread has exited.
    #[inline]
    pub fn current(&mut self, exited: u32) -> Option<(u32, u32)> {
        while let Some(top) = self.entries.last() {
            let m = top.mask & !exited;
            if m == 0 || top.pc == top.rpc {
                self.entries.pop();
                continue;
            }
            return Some((top.pc, m));
        }
        None
    }

    /// Moves the current entry's threads to `pc`.
    #[inline]
    pub fn goto(&mut self, pc: u32) {
        if let Some(top) = self.entries.last_mut() {
            top.pc = pc;
        }
    }

    /// Where the threads of `lanes` that are not running resume: the PC of every entry below
    /// the top that holds some of them.
    pub fn parked_pcs(&self, lanes: u32) -> impl Iterator<Item = u32> + '_ {
        let below = self.entries.len().saturating_sub(1);
        self.entries[..below]
            .iter()
            .filter(move |e| e.mask & lanes != 0)
            .map(|e| e.pc)
    }

    /// A branch where `taken` threads of `active` go to `target`, the rest to `next`.
    #[inline]
    pub fn branch(&mut self, active: u32, taken: u32, target: u32, next: u32, rpc: u32) {
        if taken == active {
            self.goto(target);
        } else if taken == 0 {
            self.goto(next);
        } else {
            self.goto(rpc);
            self.entries.push(Entry {
                pc: next,
                rpc,
                mask: active & !taken,
            });
            self.entries.push(Entry {
                pc: target,
                rpc,
                mask: taken,
            });
        }
    }
}
