//! The order in which a warp issues the instructions of a basic block: the PTX order, or
//! a list schedule of each block as the assembler makes one (`pipeline.issue_order`).
//!
//! Why: a GPU runs the SASS that ptxas made from the PTX, and ptxas schedules each block so
//! that long-latency loads issue as early as their operands allow, ahead of the arithmetic
//! that consumes them. An in-order warp issuing the PTX order stalls at the first consumer
//! of a load before it has issued the next load: on `gemm_naive` (NVRTC's loop body
//! `ld, ld, fma, ld, ld, fma, ...`) that serialises every L1 miss of an iteration, 256
//! round trips per thread where the SASS, whose loads all come first, pays 64 or fewer
//! (docs/VALIDATION.md, "The timing model against the H100's counters"). `ptxas
//! -arch=sm_90` on that PTX puts 32 of the loop's loads ahead of its first FMA.
//!
//! The schedule: blocks end after every control, barrier or warp-synchronous instruction
//! and begin at every branch target. Within a block, an instruction depends on an earlier
//! one that writes a register it reads or writes, or reads a register it writes (RAW, WAW,
//! WAR: registers are not renamed, so the per-register scoreboard stays exact); loads keep
//! their order relative to stores, atomics and fences, and those keep theirs relative to
//! every memory instruction (no alias analysis); the block's last instruction stays last.
//! Among the instructions whose predecessors are all placed, the next is the one with the
//! longest latency-weighted path to the block's end (ties: the earlier in the PTX), the
//! classic critical-path list scheduler. Loads weigh [`LOAD_WEIGHT`] cycles (a memory
//! access, whatever level serves it; only the order it produces matters).
//!
//! Loops: ptxas unrolls a loop whose body is one block by 4 more (ptxas 13.0, `sm_90`, on
//! the H100 reference's `gemm_naive`, `syrk` and `spmv_csr`: NVRTC's PTX loop bodies of
//! 8, 2 and 4 loads become SASS bodies of 32, 8 and 16 before any consumer), renaming the
//! registers of each copy. Here [`UNROLL`] consecutive executions of such a block are
//! scheduled as one: each copy but the last writes fresh registers (appended to the
//! kernel's, with a copy of the static instructions at new indices that the trace's
//! instructions are pointed to), the last writes the loop's own, so the code after the
//! loop and the next group read what they read in the PTX. The back branches of the
//! first copies stay (an issue slot each) but order nothing. Fewer than [`UNROLL`]
//! executions (the loop's tail) are scheduled block by block, as ptxas's remainder loop.
//!
//! What it does not model: the instruction count of the SASS (ptxas drops the copies'
//! branches and counter updates, and expands divisions and square roots).

use super::inst::{Class, DynInst, StaticInst};
pub use gpu::timing::IssueOrder;

/// The weight of a load on the critical path.
pub const LOAD_WEIGHT: u32 = 400;

/// Executions of a one-block loop scheduled together.
pub const UNROLL: usize = 4;

/// What a static instruction is to memory ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOrder {
    /// Not a memory instruction.
    None,
    /// Reads memory only; free to pass other loads.
    Load,
    /// Writes memory or orders it (stores, atomics, reductions, async copies).
    Store,
}

/// A one-block loop (a block ending in a branch to its own start), unrolled.
#[derive(Clone, Debug)]
pub struct Loop {
    /// Index of the first of the [`UNROLL`] renamed copies of the block.
    pub base: u32,
    /// The group's issue order: positions `0..UNROLL * len` (copy `u`, instruction `k`
    /// at `u * len + k`).
    pub order: Vec<u32>,
}

/// Per-block issue orders of a kernel.
#[derive(Clone, Debug, Default)]
pub struct BlockSchedule {
    /// Per instruction: the end (exclusive) of its block.
    pub block_end: Vec<u32>,
    /// Per instruction: whether a block starts there.
    pub leader: Vec<bool>,
    /// Per instruction index `start + k` of a block starting at `start`: the instruction
    /// issued `k`-th in that block.
    pub order: Vec<u32>,
    /// Per instruction: the loop starting there, an index into `loops`.
    pub loop_at: Vec<Option<u32>>,
    /// The one-block loops.
    pub loops: Vec<Loop>,
    /// Whether any block's order differs from the PTX's.
    pub reorders: bool,
}

impl BlockSchedule {
    /// The list schedule of every block of `insts` (`mem[i]`: instruction `i`'s memory
    /// ordering class; `ends_block[i]`: a block ends after it; `is_branch[i]`: a branch,
    /// which closes a loop when it targets its own block's start). The renamed copies of
    /// unrolled loops are appended to `insts` and `mem`, their fresh registers counted
    /// into `num_regs`.
    pub fn new(
        insts: &mut Vec<StaticInst>,
        mem: &mut Vec<MemOrder>,
        ends_block: &[bool],
        is_branch: &[bool],
        num_regs: &mut usize,
    ) -> BlockSchedule {
        let n = insts.len();
        let mut leader = vec![false; n];
        if n > 0 {
            leader[0] = true;
        }
        for (i, s) in insts.iter().enumerate() {
            if let Some(t) = s.target {
                if let Some(l) = leader.get_mut(t as usize) {
                    *l = true;
                }
            }
            if ends_block[i] && i + 1 < n {
                leader[i + 1] = true;
            }
        }
        let mut block_end = vec![0u32; n];
        let mut order: Vec<u32> = (0..n as u32).collect();
        let mut loop_at = vec![None; n];
        let mut loops = Vec::new();
        let mut reorders = false;
        let mut start = 0;
        while start < n {
            let mut end = start + 1;
            while end < n && !leader[end] {
                end += 1;
            }
            block_end[start..end].fill(end as u32);
            if end - start > 2 {
                let o = schedule_block(insts, mem, start, end);
                reorders |= o.iter().enumerate().any(|(k, &i)| i as usize != start + k);
                order[start..end].copy_from_slice(&o);
            }
            let closes = is_branch[end - 1] && insts[end - 1].target == Some(start as u32);
            let loads = mem[start..end].contains(&MemOrder::Load);
            if closes && loads {
                let base = insts.len();
                unroll(insts, mem, start, end, num_regs);
                let o = schedule_block(insts, mem, base, insts.len());
                loop_at[start] = Some(loops.len() as u32);
                loops.push(Loop {
                    base: base as u32,
                    order: o.iter().map(|&i| i - base as u32).collect(),
                });
                reorders = true;
            }
            start = end;
        }
        BlockSchedule {
            block_end,
            leader,
            order,
            loop_at,
            loops,
            reorders,
        }
    }

    /// Puts the instructions of `items` (in PTX execution order) into their issue order,
    /// in place: each group of [`UNROLL`] complete executions of a loop pointed to its
    /// renamed copies and scheduled as one, each other complete block instance in its
    /// block's order; an instance cut by the window's end stays as it is.
    pub fn apply(&self, items: &mut [DynInst], tmp: &mut Vec<DynInst>) {
        let whole = |items: &[DynInst], i: usize, start: usize, len: usize| {
            i + len <= items.len() && (0..len).all(|k| items[i + k].pc as usize == start + k)
        };
        let mut i = 0;
        while i < items.len() {
            let start = items[i].pc as usize;
            if !self.leader.get(start).copied().unwrap_or(false) {
                i += 1;
                continue;
            }
            let len = self.block_end[start] as usize - start;
            if let Some(l) = self.loop_at[start] {
                if (0..UNROLL).all(|u| whole(items, i + u * len, start, len)) {
                    let lp = &self.loops[l as usize];
                    let group = &mut items[i..i + UNROLL * len];
                    tmp.clear();
                    tmp.extend_from_slice(group);
                    for (k, d) in tmp.iter_mut().enumerate() {
                        d.pc = lp.base + k as u32;
                    }
                    for (slot, &o) in group.iter_mut().zip(&lp.order) {
                        *slot = tmp[o as usize];
                    }
                    i += UNROLL * len;
                    continue;
                }
            }
            if len > 2 && whole(items, i, start, len) {
                tmp.clear();
                tmp.extend_from_slice(&items[i..i + len]);
                for k in 0..len {
                    items[i + k] = tmp[self.order[start + k] as usize - start];
                }
                i += len;
                continue;
            }
            i += 1;
        }
    }

    /// Whether a window of `items` should go on: it ends inside a block, or after a
    /// number of executions of a one-block loop that is not a whole number of groups.
    pub fn wants_more(&self, items: &[DynInst]) -> bool {
        let Some(last) = items.last() else {
            return false;
        };
        let Some(&end) = self.block_end.get(last.pc as usize) else {
            return false;
        };
        if last.pc + 1 < end {
            return true;
        }
        // At a block's end: count the loop's complete executions ending here.
        let Some(start) = (0..=last.pc as usize).rev().find(|&s| self.leader[s]) else {
            return false;
        };
        if self.loop_at[start].is_none() {
            return false;
        }
        let len = end as usize - start;
        let mut count = 0;
        let mut at = items.len();
        while count < UNROLL
            && at >= len
            && (0..len).all(|k| items[at - len + k].pc as usize == start + k)
        {
            count += 1;
            at -= len;
        }
        count % UNROLL != 0
    }
}

/// Appends [`UNROLL`] renamed copies of block `start..end` to `insts` and `mem`.
fn unroll(
    insts: &mut Vec<StaticInst>,
    mem: &mut Vec<MemOrder>,
    start: usize,
    end: usize,
    num_regs: &mut usize,
) {
    // `cur[r]`: the name register `r` has where the copy being written reads it.
    let mut cur: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    for u in 0..UNROLL {
        let last = u + 1 == UNROLL;
        for i in start..end {
            let mut s = insts[i].clone();
            for r in &mut s.srcs {
                *r = cur.get(r).copied().unwrap_or(*r);
            }
            for r in &mut s.dsts {
                let name = if last {
                    *r
                } else {
                    let fresh = *num_regs as u32;
                    *num_regs += 1;
                    fresh
                };
                cur.insert(*r, name);
                *r = name;
            }
            // Only the group's last branch ends anything.
            if !last {
                s.target = None;
            }
            mem.push(mem[i]);
            insts.push(s);
        }
    }
}

fn weight(s: &StaticInst, m: MemOrder) -> u32 {
    match (s.class, m) {
        (_, MemOrder::Load) => LOAD_WEIGHT,
        (Class::Sfu, _) => 20,
        (Class::Dp, _) => 8,
        _ => 4,
    }
}

/// The list schedule of instructions `start..end`: their indices in issue order.
fn schedule_block(insts: &[StaticInst], mem: &[MemOrder], start: usize, end: usize) -> Vec<u32> {
    let len = end - start;
    // Predecessors as a list per instruction (local indices).
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); len];
    for j in 0..len {
        let b = &insts[start + j];
        let mj = mem[start + j];
        for i in 0..j {
            let a = &insts[start + i];
            let mi = mem[start + i];
            let raw = b.srcs.iter().any(|r| a.dsts.contains(r));
            let waw = b.dsts.iter().any(|r| a.dsts.contains(r));
            let war = b.dsts.iter().any(|r| a.srcs.contains(r));
            let memdep = !matches!(
                (mi, mj),
                (MemOrder::None, _) | (_, MemOrder::None) | (MemOrder::Load, MemOrder::Load)
            );
            if raw || waw || war || memdep || j == len - 1 {
                preds[j].push(i as u32);
            }
        }
    }
    // Longest latency-weighted path from each instruction to the block's end.
    let mut prio = vec![0u32; len];
    for j in (0..len).rev() {
        prio[j] += weight(&insts[start + j], mem[start + j]);
        let p = prio[j];
        for &i in &preds[j] {
            let i = i as usize;
            prio[i] = prio[i].max(p);
        }
    }
    let mut left: Vec<u32> = preds.iter().map(|p| p.len() as u32).collect();
    let mut succs: Vec<Vec<u32>> = vec![Vec::new(); len];
    for (j, p) in preds.iter().enumerate() {
        for &i in p {
            succs[i as usize].push(j as u32);
        }
    }
    let mut ready: Vec<u32> = (0..len as u32).filter(|&j| left[j as usize] == 0).collect();
    let mut out = Vec::with_capacity(len);
    while !ready.is_empty() {
        let (k, _) = ready
            .iter()
            .enumerate()
            .max_by(|(_, &a), (_, &b)| prio[a as usize].cmp(&prio[b as usize]).then(b.cmp(&a)))
            .expect("ready is not empty");
        let j = ready.swap_remove(k);
        out.push((start as u32) + j);
        for &s in &succs[j as usize] {
            left[s as usize] -= 1;
            if left[s as usize] == 0 {
                ready.push(s);
            }
        }
    }
    debug_assert_eq!(out.len(), len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(class: Class, dsts: &[u32], srcs: &[u32]) -> StaticInst {
        StaticInst {
            class,
            dsts: dsts.to_vec(),
            srcs: srcs.to_vec(),
            target: None,
            slots: 1,
        }
    }

    fn dyns(pcs: impl IntoIterator<Item = u32>) -> Vec<DynInst> {
        pcs.into_iter()
            .map(|pc| DynInst {
                pc,
                lanes: 32,
                mem: super::super::inst::NO_MEM,
                bar: 0,
            })
            .collect()
    }

    fn pcs(d: &[DynInst]) -> Vec<u32> {
        d.iter().map(|d| d.pc).collect()
    }

    fn build(
        insts: &[StaticInst],
        m: &[MemOrder],
        ends: &[bool],
        br: &[bool],
    ) -> (BlockSchedule, Vec<StaticInst>, usize) {
        let mut insts = insts.to_vec();
        let mut m = m.to_vec();
        let mut regs = 100;
        let s = BlockSchedule::new(&mut insts, &mut m, ends, br, &mut regs);
        (s, insts, regs)
    }

    /// NVRTC's `gemm_naive` body: `ld a0; ld b0; fma; ld a1; ld b1; fma; bra`, here not a
    /// loop (the branch goes elsewhere). Scheduled: the four loads first, in PTX order,
    /// then the two FMAs, then the branch.
    #[test]
    fn loads_move_ahead_of_their_consumers() {
        use Class::*;
        let mut insts = vec![
            inst(Mem, &[1], &[10]),
            inst(Mem, &[2], &[11]),
            inst(Fp, &[3], &[1, 2, 0]),
            inst(Mem, &[4], &[10]),
            inst(Mem, &[5], &[11]),
            inst(Fp, &[0], &[4, 5, 3]),
            inst(Ctrl, &[], &[]),
            inst(Int, &[9], &[9]),
        ];
        insts[6].target = Some(7);
        let l = MemOrder::Load;
        let o = MemOrder::None;
        let m = [l, l, o, l, l, o, o, o];
        let ends = [false, false, false, false, false, false, true, false];
        let br = [false, false, false, false, false, false, true, false];
        let (s, all, _) = build(&insts, &m, &ends, &br);
        assert_eq!(all.len(), 8, "not a loop: nothing unrolled");
        assert_eq!(&s.order[..7], &[0, 1, 3, 4, 2, 5, 6]);
        assert!(s.reorders);
        // Applied to a trace of two executions and a cut third.
        let mut items = dyns((0..7).chain(0..7).chain(0..3));
        s.apply(&mut items, &mut Vec::new());
        assert_eq!(
            pcs(&items),
            vec![0, 1, 3, 4, 2, 5, 6, 0, 1, 3, 4, 2, 5, 6, 0, 1, 2]
        );
        assert!(s.wants_more(&items));
        assert!(!s.wants_more(&dyns(0..7)));
    }

    /// A load never passes a store (no alias analysis), and a register read by an earlier
    /// instruction is not overwritten before it (WAR).
    #[test]
    fn stores_and_war_hold_loads_back() {
        use Class::*;
        let insts = vec![
            inst(Fp, &[3], &[1]),   // reads r1
            inst(Mem, &[], &[20]),  // store
            inst(Mem, &[1], &[21]), // load into r1: after the store and after the read
            inst(Fp, &[4], &[1]),
            inst(Ctrl, &[], &[]),
        ];
        let (o, l, st) = (MemOrder::None, MemOrder::Load, MemOrder::Store);
        let (s, _, _) = build(
            &insts,
            &[o, st, l, o, o],
            &[false, false, false, false, true],
            &[false; 5],
        );
        assert_eq!(s.order, vec![0, 1, 2, 3, 4]);
        assert!(!s.reorders);
    }

    /// Branch targets start blocks: nothing moves across one.
    #[test]
    fn branch_targets_split_blocks() {
        use Class::*;
        let mut insts = vec![
            inst(Fp, &[3], &[1]),
            inst(Fp, &[4], &[3]),
            inst(Mem, &[5], &[6]),
            inst(Fp, &[7], &[5]),
            inst(Ctrl, &[], &[]),
        ];
        insts[4].target = Some(0);
        let o = MemOrder::None;
        let (s, _, _) = build(
            &insts,
            &[o, o, MemOrder::Load, o, o],
            &[false, false, false, false, true],
            &[false, false, false, false, true],
        );
        assert_eq!(s.block_end, vec![5, 5, 5, 5, 5]);
        // `bra` to 0 closes a one-block loop over 0..5.
        assert!(s.loop_at[0].is_some());
    }

    /// A one-block loop `ld r1, [r10]; add r10, r10, 4; fma r0, r1, r0; bra`: four
    /// executions become one group whose four loads (reading renamed address registers)
    /// come before the FMAs, and whose last copy writes the loop's own registers.
    #[test]
    fn a_one_block_loop_is_unrolled_by_four_with_renamed_registers() {
        use Class::*;
        let mut insts = vec![
            inst(Mem, &[1], &[10]),
            inst(Int, &[10], &[10]),
            inst(Fp, &[0], &[1, 0]),
            inst(Ctrl, &[], &[]),
        ];
        insts[3].target = Some(0);
        let (o, l) = (MemOrder::None, MemOrder::Load);
        let (s, all, regs) = build(
            &insts,
            &[l, o, o, o],
            &[false, false, false, true],
            &[false, false, false, true],
        );
        assert_eq!(all.len(), 4 + 16);
        // Three copies write 3 fresh registers each (r1, r10, r0).
        assert_eq!(regs, 100 + 9);
        // The last copy writes the original names.
        assert_eq!(all[4 + 12].dsts, vec![1]);
        assert_eq!(all[4 + 13].dsts, vec![10]);
        assert_eq!(all[4 + 14].dsts, vec![0]);
        // Copy 1's load reads copy 0's renamed r10.
        assert_eq!(all[4 + 4].srcs, all[4 + 1].dsts);
        let lp = &s.loops[0];
        let order: Vec<u32> = lp.order.clone();
        let first_fma = order.iter().position(|&k| k % 4 == 2).unwrap_or(99);
        let last_load = order.iter().rposition(|&k| k % 4 == 0).unwrap_or(0);
        assert!(last_load < first_fma, "{order:?}");
        assert_eq!(
            *order.last().unwrap_or(&0),
            15,
            "the group's last branch stays last"
        );
        // Five executions: one group (pointed to the copies) and a tail of one.
        let mut items = dyns((0..5).flat_map(|_| 0..4));
        s.apply(&mut items, &mut Vec::new());
        assert!(items[..16].iter().all(|d| d.pc >= 4));
        assert_eq!(pcs(&items[16..]), vec![0, 1, 2, 3]);
        // A window ending after 2 executions wants the group completed; after 4 it does not.
        assert!(s.wants_more(&dyns((0..2).flat_map(|_| 0..4))));
        assert!(!s.wants_more(&dyns((0..4).flat_map(|_| 0..4))));
    }
}
