//! Running a whole launch: TBs in TB-id order, each TB's warps interleaved at barriers, with
//! optional parallelism across TBs.
//!
//! # Memory model and parallelism
//! CUDA gives no ordering between TBs. The interpreter picks one of two models per kernel,
//! from the kernel alone (never from the thread count), so results are identical whatever
//! `threads` is:
//! - **Snapshot** (kernels without global atomics): every TB reads the launch's initial global
//!   memory plus its own writes; its writes go to a private overlay, committed in TB-id order
//!   after it finishes (later TBs win on overlapping writes). TBs are then independent and run
//!   in parallel on a rayon pool when `threads > 1`.
//! - **Serial** (kernels with global or generic atomics, whose results depend on seeing other
//!   TBs' updates): TBs run one after the other on one memory, in TB-id order, whatever
//!   `threads` says.
//!
//! Grids launched from the device run after their parent grid, depth first, tail launches
//! last (`interp::device_runtime` says why that order is one CUDA allows); they share the
//! launch's memory and budget. An observer that asks for them sees them, each announced
//! with its run-order id and launcher ([`super::observer::GridStart`]).
//!
//! The instruction budget is per launch, charged in TB-id order. A parallel TB runs with the
//! budget left before its chunk; if in TB order it overruns (or fails), it is run again alone
//! with the exact budget left, so errors are the same as in a serial run.

use std::collections::BTreeMap;

use launch::BoundLaunch;
use rayon::prelude::*;
use serde::Serialize;

use super::decode::Program;
use super::device_runtime::{ChildLaunch, Stream, MAX_NESTING_DEPTH};
use super::memory::{param_block, GlobalMemory, Globals, Overlay, SnapshotView};
use super::observer::{GridStart, Launcher, MemObserver, NoObserver};
use super::tb::{Geometry, TbExec};
use crate::SimError;

/// The interpreter's default budget of warp instructions per launch (`paver run`, `paver
/// analyze --dynamic`): a runaway kernel stops within a minute on a 2-core machine (a
/// one-warp float loop runs 7.7 M warp instructions a second there, the GEMM 12 M;
/// docs/VALIDATION.md, issue 41), and `--max-instructions` raises it.
pub const DEFAULT_LAUNCH_BUDGET: u64 = 300_000_000;

/// How to run a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Worker threads across TBs (1: serial). Results do not depend on it.
    pub threads: usize,
    /// Budget of warp instructions for the whole launch (a runaway-loop guard).
    pub max_warp_instructions: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 1,
            max_warp_instructions: DEFAULT_LAUNCH_BUDGET,
        }
    }
}

/// Which memory model ran (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryModel {
    /// TBs read the initial memory plus their own writes; parallel-safe.
    Snapshot,
    /// TBs run one after the other on one memory (global atomics).
    Serial,
}

/// Counters of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunStats {
    /// TBs run.
    pub tbs: u64,
    /// Warps run.
    pub warps: u64,
    /// Warp instructions executed.
    pub warp_instructions: u64,
    /// Thread instructions executed (lanes whose guard was true).
    pub thread_instructions: u64,
    /// Warp instructions per instruction word (`ld.global.f32`, `fma.rn.f32`, ...).
    pub per_opcode: BTreeMap<String, u64>,
    /// Grids launched from the device and run (`interp::device_runtime`; the counters above
    /// include their TBs and instructions; observers see them only when they ask to).
    #[serde(skip_serializing_if = "is_zero")]
    pub device_launches: u64,
    /// Deepest nesting of those grids below the host's launch (0: none).
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub max_depth: u32,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// The outcome of a launch.
#[derive(Debug)]
pub struct RunResult {
    /// Global memory after the run.
    pub globals: Globals,
    /// Counters.
    pub stats: RunStats,
    /// The memory model used.
    pub model: MemoryModel,
}

impl RunResult {
    /// The bytes of parameter `i`'s buffer after the run (`None` for scalars and synthetic
    /// pointers).
    pub fn buffer(&self, i: usize) -> Option<&[u8]> {
        self.globals.region(i)
    }
}

struct TbOut {
    launches: Vec<ChildLaunch>,
    warp_insts: u64,
    thread_insts: u64,
    warps: u64,
    counts: Vec<u64>,
}

/// Runs `prog` over the launch `bound`, calling `obs` for memory accesses.
pub fn run<O: MemObserver>(
    prog: &Program,
    bound: &BoundLaunch,
    opts: &RunOptions,
    obs: &mut O,
) -> Result<RunResult, SimError> {
    // Each TB runs with what is left of the launch's budget; report the launch's limit.
    run_launch(prog, bound, opts, obs).map_err(|e| match e {
        SimError::Budget { loc, .. } => SimError::Budget {
            limit: opts.max_warp_instructions,
            loc,
        },
        e => e,
    })
}

fn run_launch<O: MemObserver>(
    prog: &Program,
    bound: &BoundLaunch,
    opts: &RunOptions,
    obs: &mut O,
) -> Result<RunResult, SimError> {
    let globals = Globals::from_launch(prog, bound)?;
    let params = param_block(&prog.layout, bound);
    let geom = Geometry::of(prog, bound)?;
    let mut stats = RunStats::default();
    let mut left = opts.max_warp_instructions;
    if obs.wants_device_grids() {
        obs.begin_grid(&GridStart {
            id: 0,
            kernel: &prog.kernel,
            grid: geom.grid,
            block: geom.block,
            depth: 0,
            parent: None,
            tail: false,
        });
    }
    let (mut globals, model, launches) = run_grid(
        prog,
        &params,
        &geom,
        globals,
        opts.threads,
        &mut left,
        &mut stats,
        obs,
    )?;
    if let Some(children) = &prog.children {
        let mut run = Children {
            children,
            programs: BTreeMap::new(),
            threads: opts.threads,
            left,
            stats,
            next_grid: 1,
        };
        globals = run.run(launches, globals, 1, 0, obs)?;
        stats = run.stats;
    }
    Ok(RunResult {
        globals,
        stats,
        model,
    })
}

/// Runs the grids launched from the device, in the order `interp::device_runtime` fixes.
struct Children<'a> {
    children: &'a std::sync::Arc<super::decode::Children>,
    /// The programs of the kernels launched so far, by function index.
    programs: BTreeMap<u32, Program>,
    threads: usize,
    left: u64,
    stats: RunStats,
    /// Run-order id of the next grid to run.
    next_grid: u32,
}

impl Children<'_> {
    /// Runs `launches` (made by grid `parent`, at nesting depth `depth - 1`) and their
    /// descendants: the other launches in launch order, each with its descendants, then the
    /// tail launches.
    fn run<O: MemObserver>(
        &mut self,
        launches: Vec<ChildLaunch>,
        mut globals: Globals,
        depth: u32,
        parent: u32,
        obs: &mut O,
    ) -> Result<Globals, SimError> {
        let (tail, other): (Vec<_>, Vec<_>) = launches
            .into_iter()
            .partition(|l| l.stream == Stream::TailLaunch);
        for l in other.into_iter().chain(tail) {
            let name = self
                .children
                .module
                .functions
                .get(l.kernel as usize)
                .map_or("?", |g| g.name.as_str())
                .to_string();
            let fail = |why: String| SimError::DeviceLaunch {
                why,
                loc: l.loc.clone(),
            };
            if depth > MAX_NESTING_DEPTH {
                return Err(fail(format!(
                    "launching `{name}` would nest grids {depth} deep, beyond the limit of \
                     {MAX_NESTING_DEPTH} (the hardware's maximum nesting depth)"
                )));
            }
            if !self.programs.contains_key(&l.kernel) {
                let p = Program::child(self.children, l.kernel)
                    .ok_or_else(|| fail(format!("`{name}` is not a kernel with a body")))?;
                if !p.layout.global_images.is_empty() {
                    // Module variables live in the regions after a kernel's parameters,
                    // which differ between parent and child (TODO(issue 43): one map).
                    return Err(fail(format!(
                        "child kernel `{name}` uses module-scope .global/.const variables, \
                         which device-side launches do not support yet"
                    )));
                }
                self.programs.insert(l.kernel, p);
            }
            let Some(prog) = self.programs.get(&l.kernel).cloned() else {
                return Err(fail(format!("`{name}` could not be decoded")));
            };
            let geom = Geometry::child(&prog, l.grid, l.block, l.dynamic_shared)
                .map_err(|e| fail(format!("child kernel `{name}`: {e}")))?;
            if geom.shared_bytes as u64 > MAX_SHARED_BYTES {
                return Err(fail(format!(
                    "child kernel `{name}` needs {} bytes of shared memory per TB, more than \
                     any GPU offers ({MAX_SHARED_BYTES})",
                    geom.shared_bytes
                )));
            }
            self.stats.device_launches += 1;
            self.stats.max_depth = self.stats.max_depth.max(depth);
            let id = self.next_grid;
            self.next_grid += 1;
            let (g, _, grandchildren) = if obs.wants_device_grids() {
                obs.begin_grid(&GridStart {
                    id,
                    kernel: &name,
                    grid: l.grid,
                    block: l.block,
                    depth,
                    parent: Some(Launcher {
                        grid: parent,
                        tb: l.tb,
                        warp: l.warp,
                        line: l.loc.line,
                    }),
                    tail: l.stream == Stream::TailLaunch,
                });
                run_grid(
                    &prog,
                    &l.params,
                    &geom,
                    globals,
                    self.threads,
                    &mut self.left,
                    &mut self.stats,
                    obs,
                )?
            } else {
                run_grid(
                    &prog,
                    &l.params,
                    &geom,
                    globals,
                    self.threads,
                    &mut self.left,
                    &mut self.stats,
                    &mut NoObserver,
                )?
            };
            globals = self.run(grandchildren, g, depth + 1, id, obs)?;
        }
        Ok(globals)
    }
}

/// Shared memory per TB beyond which a child launch is refused (the H100's 227 KiB).
pub(crate) const MAX_SHARED_BYTES: u64 = 227 * 1024;

/// Runs every TB of one grid on `globals`; adds to `stats`, charges `left`; returns the
/// memory after the grid, the model used and the grids its TBs launched (TB-id order).
#[allow(clippy::too_many_arguments)]
fn run_grid<O: MemObserver>(
    prog: &Program,
    params: &[u8],
    geom: &Geometry,
    globals: Globals,
    threads: usize,
    left: &mut u64,
    stats: &mut RunStats,
    obs: &mut O,
) -> Result<(Globals, MemoryModel, Vec<ChildLaunch>), SimError> {
    let ntbs = geom.grid.iter().map(|&v| u64::from(v)).product::<u64>();
    stats.tbs += ntbs;
    let mut counts = vec![0u64; prog.insts.len()];
    let mut launches = Vec::new();
    let mut account = |out: TbOut, left: &mut u64| {
        *left -= out.warp_insts;
        stats.warp_instructions += out.warp_insts;
        stats.thread_instructions += out.thread_insts;
        stats.warps += out.warps;
        for (c, n) in counts.iter_mut().zip(&out.counts) {
            *c += n;
        }
        launches.extend(out.launches);
    };
    let model;
    let globals = if prog.has_global_atomics {
        model = MemoryModel::Serial;
        let mut g = globals;
        for tb in 0..ntbs {
            let mut part = obs.split(tb);
            let out = run_tb(prog, params, geom, tb, &mut g, *left, &mut part)?;
            obs.merge(tb, part);
            account(out, left);
        }
        g
    } else {
        model = MemoryModel::Snapshot;
        let base = globals;
        let mut out_mem = base.clone();
        let serial_tb = |tb: u64, budget: u64, obs: &O| -> Result<(TbOut, Overlay, O), SimError> {
            let mut part = obs.split(tb);
            let mut view = SnapshotView::new(&base);
            let out = run_tb(prog, params, geom, tb, &mut view, budget, &mut part)?;
            Ok((out, view.into_overlay(), part))
        };
        if threads <= 1 {
            for tb in 0..ntbs {
                let (out, ov, part) = serial_tb(tb, *left, obs)?;
                ov.commit(&mut out_mem);
                obs.merge(tb, part);
                account(out, left);
            }
        } else {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| SimError::Threads {
                    threads,
                    why: e.to_string(),
                })?;
            let chunk = (threads as u64) * 8;
            let mut start = 0;
            while start < ntbs {
                let end = (start + chunk).min(ntbs);
                let budget = *left;
                let obs_ref: &O = obs;
                let results: Vec<Result<(TbOut, Overlay, O), SimError>> = pool.install(|| {
                    (start..end)
                        .into_par_iter()
                        .map(|tb| serial_tb(tb, budget, obs_ref))
                        .collect()
                });
                for (tb, r) in (start..end).zip(results) {
                    let (out, ov, part) = match r {
                        Ok(x) if x.0.warp_insts <= *left => x,
                        _ => serial_tb(tb, *left, obs)?,
                    };
                    ov.commit(&mut out_mem);
                    obs.merge(tb, part);
                    account(out, left);
                }
                start = end;
            }
        }
        out_mem
    };
    for (i, n) in counts.iter().enumerate() {
        if *n > 0 {
            *stats.per_opcode.entry(prog.opcodes[i].clone()).or_default() += n;
        }
    }
    Ok((globals, model, launches))
}

fn run_tb<M: GlobalMemory, O: MemObserver>(
    prog: &Program,
    params: &[u8],
    geom: &Geometry,
    tb: u64,
    mem: &mut M,
    budget: u64,
    obs: &mut O,
) -> Result<TbOut, SimError> {
    let mut exec = TbExec::new(prog, params, geom, tb, budget);
    exec.run(mem, obs)?;
    Ok(TbOut {
        launches: exec.take_launches(),
        warp_insts: exec.warp_instructions(),
        thread_insts: exec.thread_instructions(),
        warps: exec.num_warps() as u64,
        counts: exec.into_counts(),
    })
}
