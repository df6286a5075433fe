//! One TB in execution: its shared state ([`TbCtx`]), its warps, and the public stepping API
//! the interpreter's runner and the timing trace both use. A caller steps one warp
//! instruction at a time ([`TbExec::step_warp`], which reports the PC and the lanes that
//! executed; memory instructions also reach the [`MemObserver`] with their per-lane
//! addresses) and releases barriers ([`TbExec::release_barrier`]) when every live warp waits;
//! [`TbExec::run`] is the interpreter's own schedule of those two calls.

use launch::BoundLaunch;

use super::decode::Program;
use super::memory::GlobalMemory;
use super::observer::MemObserver;
use super::ops::BarRed;
use super::warp::{Control, TbCtx, Warp};
use crate::SimError;

/// Launch geometry, from a bound launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Grid shape in TBs.
    pub grid: [u32; 3],
    /// Block shape in threads.
    pub block: [u32; 3],
    /// Shared memory of one TB (static, or dynamic placed after the static part).
    pub shared_bytes: usize,
    /// Dynamic shared memory of the launch (`%dynamic_smem_size`).
    pub dynamic_shared: u64,
}

fn dim(v: u64, what: &str) -> Result<u32, SimError> {
    u32::try_from(v).map_err(|_| SimError::Setup(format!("{what} {v} too large")))
}

impl Geometry {
    /// The geometry of `bound` for `prog`; an error when a dimension is empty or too large.
    pub fn of(prog: &Program, bound: &BoundLaunch) -> Result<Geometry, SimError> {
        let l = &prog.layout;
        let g = Geometry {
            grid: [
                dim(bound.grid.x, "grid.x")?,
                dim(bound.grid.y, "grid.y")?,
                dim(bound.grid.z, "grid.z")?,
            ],
            block: [
                dim(bound.block.x, "block.x")?,
                dim(bound.block.y, "block.y")?,
                dim(bound.block.z, "block.z")?,
            ],
            shared_bytes: (l
                .shared_static
                .max(l.shared_dynamic_at + bound.dynamic_shared_bytes))
                as usize,
            dynamic_shared: bound.dynamic_shared_bytes,
        };
        if g.block.contains(&0) || g.grid.contains(&0) {
            return Err(SimError::Setup("empty grid or block".into()));
        }
        Ok(g)
    }

    /// Threads of one TB.
    pub fn threads(&self) -> u32 {
        self.block.iter().product()
    }
}

/// The kernel parameter block of `bound` for `prog` (what [`TbExec::new`] takes as
/// `params`): each parameter's value at its offset, buffers as their base addresses.
pub fn param_block(prog: &Program, bound: &BoundLaunch) -> Vec<u8> {
    super::memory::param_block(&prog.layout, bound)
}

/// One executed warp instruction, as [`TbExec::step_warp`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Index of the instruction in the kernel body (the IR's instruction index).
    pub pc: u32,
    /// Lanes that executed it: active after divergence, with a true guard.
    pub exec: u32,
    /// What the warp does next.
    pub control: Control,
}

/// A TB in execution: shared memory, parameters, counters and its warps.
pub struct TbExec<'p> {
    ctx: TbCtx<'p>,
    warps: Vec<Warp>,
    state: Vec<Control>,
}

impl<'p> TbExec<'p> {
    /// TB `tb` (linear id) of a launch of `prog` with shape `geom` and parameter block
    /// `params`, allowed `budget` warp instructions.
    pub fn new(
        prog: &'p Program,
        params: &'p [u8],
        geom: &Geometry,
        tb: u64,
        budget: u64,
    ) -> TbExec<'p> {
        let [gx, gy, _] = geom.grid;
        let (gx, gy) = (u64::from(gx), u64::from(gy));
        let ctx = TbCtx {
            prog,
            params,
            shared: vec![0u8; geom.shared_bytes],
            ctaid: [
                (tb % gx) as u32,
                ((tb / gx) % gy) as u32,
                (tb / (gx * gy)) as u32,
            ],
            nctaid: geom.grid,
            ntid: geom.block,
            linear: tb,
            counts: vec![0; prog.insts.len()],
            warp_insts: 0,
            thread_insts: 0,
            budget,
            red: (0, true, false),
            dynamic_shared: geom.dynamic_shared,
        };
        let warps = Warp::all_of(&ctx);
        let state = vec![Control::Continue; warps.len()];
        TbExec { ctx, warps, state }
    }

    /// Warps of the TB.
    pub fn num_warps(&self) -> usize {
        self.warps.len()
    }

    /// What warp `w` does next: [`Control::Continue`] (can step), [`Control::Barrier`]
    /// (waits for [`TbExec::release_barrier`]) or [`Control::Exited`].
    pub fn state(&self, w: usize) -> Control {
        self.state.get(w).copied().unwrap_or(Control::Exited)
    }

    /// Executes the next instruction of warp `w` if it can step. `None` when nothing was
    /// executed (the warp waits at a barrier, has exited, or has just run off the end of the
    /// body, which exits its remaining lanes).
    #[inline]
    pub fn step_warp<M: GlobalMemory, O: MemObserver>(
        &mut self,
        w: usize,
        mem: &mut M,
        obs: &mut O,
    ) -> Result<Option<Step>, SimError> {
        let (Some(warp), Some(st)) = (self.warps.get_mut(w), self.state.get_mut(w)) else {
            return Ok(None);
        };
        if *st != Control::Continue {
            return Ok(None);
        }
        let before = self.ctx.warp_insts;
        *st = warp.step(&mut self.ctx, mem, obs)?;
        if self.ctx.warp_insts == before {
            return Ok(None);
        }
        let (pc, exec) = warp.last();
        Ok(Some(Step {
            pc,
            exec,
            control: *st,
        }))
    }

    /// Runs warp `w` until it waits at a barrier or exits.
    #[inline]
    fn run_warp<M: GlobalMemory, O: MemObserver>(
        &mut self,
        w: usize,
        mem: &mut M,
        obs: &mut O,
    ) -> Result<(), SimError> {
        let (Some(warp), Some(st)) = (self.warps.get_mut(w), self.state.get_mut(w)) else {
            return Ok(());
        };
        if *st == Control::Continue {
            *st = warp.run(&mut self.ctx, mem, obs)?;
        }
        Ok(())
    }

    /// Whether every warp has exited.
    pub fn is_done(&self) -> bool {
        self.state.iter().all(|s| *s == Control::Exited)
    }

    /// When no warp can step: releases the warps waiting at the barrier (delivering `bar.red`
    /// results) and returns `true`; returns `false` when every warp has exited.
    pub fn release_barrier(&mut self) -> bool {
        if self.is_done() {
            return false;
        }
        let (popc, all, any) = self.ctx.red;
        for (w, st) in self.warps.iter_mut().zip(self.state.iter_mut()) {
            if *st == Control::Barrier {
                if let Some((k, d, mask)) = w.pending_red.take() {
                    let v = match k {
                        BarRed::Popc => popc,
                        BarRed::And => u64::from(all),
                        BarRed::Or => u64::from(any),
                    };
                    for lane in 0..32 {
                        if mask >> lane & 1 != 0 {
                            w.set_reg(d, lane, v);
                        }
                    }
                }
                *st = Control::Continue;
            }
        }
        self.ctx.red = (0, true, false);
        true
    }

    /// Runs the TB to completion: each warp in turn until it waits or exits, then the
    /// barrier is released, until every warp has exited.
    pub fn run<M: GlobalMemory, O: MemObserver>(
        &mut self,
        mem: &mut M,
        obs: &mut O,
    ) -> Result<(), SimError> {
        loop {
            for w in 0..self.warps.len() {
                self.run_warp(w, mem, obs)?;
            }
            if !self.release_barrier() {
                return Ok(());
            }
        }
    }

    /// Warp instructions executed so far.
    pub fn warp_instructions(&self) -> u64 {
        self.ctx.warp_insts
    }

    /// Thread instructions executed so far (lanes with a true guard).
    pub fn thread_instructions(&self) -> u64 {
        self.ctx.thread_insts
    }

    /// Executions of each instruction so far (warp level), by instruction index.
    pub fn counts(&self) -> &[u64] {
        &self.ctx.counts
    }

    /// The per-instruction counts, consuming the TB.
    pub fn into_counts(self) -> Vec<u64> {
        self.ctx.counts
    }
}
