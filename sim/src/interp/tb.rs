//! One TB in execution: its shared state ([`TbCtx`]), its warps, and the public stepping API
//! the interpreter's runner and the timing trace both use. A caller steps one warp
//! instruction at a time ([`TbExec::step_warp`], which reports the PC and the lanes that
//! executed; memory instructions also reach the [`MemObserver`] with their per-lane
//! addresses; barriers release warps as they complete) and asks [`TbExec::release_barrier`]
//! when no warp can step (finished, or a deadlock);
//! [`TbExec::run`] is the interpreter's own schedule of those two calls.

use launch::BoundLaunch;

use super::barrier::{ranges, BarrierArrival, Barriers, RedAcc};
use super::decode::Program;
use super::memory::GlobalMemory;
use super::observer::MemObserver;
use super::warp::{Control, TbCtx, Warp};
use crate::SimError;

/// Warp instructions a warp runs before the next warp of its TB gets its turn in
/// [`TbExec::run`]: large enough that switching costs nothing measurable, small enough that a
/// spinning warp hands over within microseconds.
pub const QUANTUM: u64 = 4096;

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

fn dim(v: u64, what: &'static str) -> Result<u32, SimError> {
    u32::try_from(v).map_err(|_| SimError::TooLarge { what, value: v })
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
            return Err(SimError::EmptyLaunch);
        }
        check_ntid(prog, g.block)?;
        Ok(g)
    }

    /// The geometry of a grid launched from the device (its configuration already checked
    /// by `cudaGetParameterBufferV2`).
    pub(crate) fn child(
        prog: &Program,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared: u64,
    ) -> Result<Geometry, SimError> {
        let l = &prog.layout;
        let g = Geometry {
            grid,
            block,
            shared_bytes: (l.shared_static.max(l.shared_dynamic_at + dynamic_shared)) as usize,
            dynamic_shared,
        };
        check_ntid(prog, block)?;
        Ok(g)
    }

    /// Threads of one TB.
    pub fn threads(&self) -> u32 {
        self.block.iter().product()
    }
}

fn check_ntid(prog: &Program, block: [u32; 3]) -> Result<(), SimError> {
    check_block_attributes(
        &prog.kernel,
        prog.maxntid.as_deref(),
        prog.reqntid.as_deref(),
        block,
    )
}

/// `.maxntid` / `.reqntid` (PTX ISA 11.4.2-3) of `kernel` against the launched block: the
/// driver refuses a launch whose block has more threads than `.maxntid` allows or differs
/// from `.reqntid`. Every command that binds a launch checks it.
pub fn check_block_attributes(
    kernel: &str,
    maxntid: Option<&[u32]>,
    reqntid: Option<&[u32]>,
    block: [u32; 3],
) -> Result<(), SimError> {
    let dims = |v: &[u32]| -> [u64; 3] {
        let d = |k: usize| u64::from(v.get(k).copied().unwrap_or(1));
        [d(0), d(1), d(2)]
    };
    let show = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let [bx, by, bz] = block;
    let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
    if let Some(m) = maxntid {
        let max: u64 = dims(m).iter().product();
        if threads > max {
            return Err(SimError::BlockDirective {
                kernel: kernel.to_string(),
                directive: ".maxntid",
                declared: show(m),
                why: format!(
                    "(at most {max} threads per TB) but the launch's block ({bx},{by},{bz}) has {threads} threads"
                ),
            });
        }
    }
    if let Some(r) = reqntid {
        let want = dims(r);
        if want != [u64::from(bx), u64::from(by), u64::from(bz)] {
            return Err(SimError::BlockDirective {
                kernel: kernel.to_string(),
                directive: ".reqntid",
                declared: show(r),
                why: format!("but the launch's block is ({bx},{by},{bz})"),
            });
        }
    }
    Ok(())
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
    /// The barrier it arrived at, when it executed a barrier instruction.
    pub barrier: Option<BarrierArrival>,
}

/// A TB in execution: shared memory, parameters, counters and its warps.
pub struct TbExec<'p> {
    ctx: TbCtx<'p>,
    warps: Vec<Warp>,
    state: Vec<Control>,
    /// Scratch list of warps a barrier released.
    released: Vec<(u32, RedAcc)>,
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
        Self::on_sm(prog, params, geom, tb, budget, [0, 1])
    }

    /// [`TbExec::new`] for a TB running on SM `sm[0]` of a GPU of `sm[1]` SMs, which its
    /// `%smid` and `%nsmid` read (persistent kernels pick their work by SM: `paver
    /// rewrite`).
    pub fn on_sm(
        prog: &'p Program,
        params: impl Into<std::borrow::Cow<'p, [u8]>>,
        geom: &Geometry,
        tb: u64,
        budget: u64,
        sm: [u32; 2],
    ) -> TbExec<'p> {
        let [gx, gy, _] = geom.grid;
        let (gx, gy) = (u64::from(gx), u64::from(gy));
        let mut ctx = TbCtx {
            prog,
            params: params.into(),
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
            barriers: Barriers::new(0),
            bar_last: None,
            dynamic_shared: geom.dynamic_shared,
            runtime: Default::default(),
            sm,
        };
        let warps = Warp::all_of(&ctx);
        ctx.barriers = Barriers::new(warps.len() as u32);
        let state = vec![Control::Continue; warps.len()];
        TbExec {
            ctx,
            warps,
            state,
            released: Vec::new(),
        }
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
        let control = *st;
        let (pc, exec) = warp.last();
        let barrier = self.ctx.bar_last.take();
        self.settle(w, control);
        if self.ctx.warp_insts == before {
            return Ok(None);
        }
        Ok(Some(Step {
            pc,
            exec,
            control,
            barrier,
        }))
    }

    /// The error of a budget of `limit` warp instructions that ran out at warp `w`'s last
    /// instruction (a caller's budget across TBs: `paver simulate`'s per launch).
    pub fn budget_error(&self, w: usize, limit: u64) -> SimError {
        let (pc, exec) = self.warps.get(w).map_or((0, 1), |x| x.last());
        SimError::Budget {
            limit,
            loc: self
                .ctx
                .loc(w as u32, exec.trailing_zeros().min(31) as usize, pc),
        }
    }

    /// After warp `w` stepped into `control`: counts an exit at the barriers and wakes the
    /// warps that barriers released (with their `bar.red` results).
    #[inline]
    fn settle(&mut self, w: usize, control: Control) {
        if control == Control::Exited && !self.exit_counted(w) {
            self.ctx.barriers.warp_exited();
        }
        if !self.ctx.barriers.has_released() {
            return;
        }
        self.ctx.barriers.take_released(&mut self.released);
        for &(x, r) in &self.released {
            let x = x as usize;
            if let (Some(warp), Some(st)) = (self.warps.get_mut(x), self.state.get_mut(x)) {
                if *st == Control::Barrier {
                    if let Some((k, d, lanes)) = warp.pending_red.take() {
                        warp.deliver_red(k, d, lanes, r);
                    }
                    *st = Control::Continue;
                }
            }
        }
    }

    /// Whether warp `w`'s exit was already counted; marks it counted.
    fn exit_counted(&mut self, w: usize) -> bool {
        match self.warps.get_mut(w) {
            Some(warp) => std::mem::replace(&mut warp.exit_counted, true),
            None => true,
        }
    }

    /// Runs warp `w` for one time slice ([`QUANTUM`] instructions), or until it waits at a
    /// barrier or exits.
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
            *st = warp.run(&mut self.ctx, mem, obs, QUANTUM)?;
            let control = *st;
            self.ctx.bar_last = None;
            self.settle(w, control);
        }
        Ok(())
    }

    /// Whether every warp has exited.
    pub fn is_done(&self) -> bool {
        self.state.iter().all(|s| *s == Control::Exited)
    }

    /// To call when no warp can step: `Ok(false)` when every warp has exited, `Ok(true)`
    /// when some warp can step again (barriers release warps as they complete, so this only
    /// happens after a warp was stepped), and a [`SimError::Deadlock`] naming the waiting
    /// warps, their threads and barriers when the warps that have not exited all wait at
    /// barriers that can never complete.
    pub fn release_barrier(&mut self) -> Result<bool, SimError> {
        if self.is_done() {
            return Ok(false);
        }
        if self.state.contains(&Control::Continue) {
            return Ok(true);
        }
        Err(self.deadlock())
    }

    /// The deadlock error of a TB whose live warps all wait.
    fn deadlock(&self) -> SimError {
        let threads: u32 = self.ctx.ntid.iter().product();
        let mut parts = Vec::new();
        for (id, arrived, need, waiting) in self.ctx.barriers.waits() {
            let mut lines: Vec<u32> = waiting
                .iter()
                .filter_map(|&w| self.warps.get(w as usize))
                .map(|w| {
                    self.ctx
                        .prog
                        .lines
                        .get(w.last().0 as usize)
                        .copied()
                        .unwrap_or(0)
                })
                .collect();
            lines.sort_unstable();
            lines.dedup();
            let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
            let first = waiting.iter().min().copied().unwrap_or(0);
            let last = waiting.iter().max().copied().unwrap_or(0);
            parts.push(format!(
                "warps {} (threads {}-{}) wait at barrier {id} (PTX line {}), {arrived} of {need} warps arrived",
                ranges(waiting),
                first * 32,
                ((last + 1) * 32).min(threads) - 1,
                lines.join(", ")
            ));
        }
        let exited = self.state.iter().filter(|s| **s == Control::Exited).count();
        if exited > 0 {
            parts.push(format!("{exited} warps have exited"));
        }
        SimError::Deadlock {
            kernel: self.ctx.prog.kernel.clone(),
            tb: self.ctx.ctaid,
            waits: parts.join("; "),
        }
    }

    /// Runs the TB to completion: warps in turn (round robin by warp id), each for a time
    /// slice or until it waits or exits, until every warp has exited. The slices make
    /// the order fair: a warp that spins on a flag another warp of its TB sets (a
    /// producer/consumer pair on named barriers and a volatile shared flag) cannot starve
    /// the producer, and the order depends on nothing but the program.
    pub fn run<M: GlobalMemory, O: MemObserver>(
        &mut self,
        mem: &mut M,
        obs: &mut O,
    ) -> Result<(), SimError> {
        loop {
            for w in 0..self.warps.len() {
                self.run_warp(w, mem, obs)?;
            }
            if !self.release_barrier()? {
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

    /// The grids the TB launched from the device, in launch order.
    pub fn take_launches(&mut self) -> Vec<super::device_runtime::ChildLaunch> {
        self.ctx.runtime.take_launches()
    }
}
