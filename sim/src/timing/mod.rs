//! The cycle-level timing model (issue 6), functional-first and timing-directed
//! (DESIGN §6): when the TB scheduler issues a TB, [`trace`] runs it in the interpreter and
//! records per-warp instruction streams (static instruction, active lanes, coalesced
//! blocks); the SMs ([`sm`]) consume those streams under a scoreboard and warp schedulers
//! ([`warp_sched`]), their L1s ([`cache`]) send misses over the interconnect ([`noc`]) to
//! L2 slices and DRAM channels ([`mem`], [`dram`]). TB placement is a [`tb_sched`] policy,
//! including the PAVER runtime fed by any schedule JSON with task stealing. Results are
//! [`Stats`] (serde, additive counters, byte-identical for identical inputs).
//!
//! The engine advances one core cycle at a time while an SM issues, and jumps to the next
//! event (a memory reply, a latency expiring, a refused request admitted) when every SM is
//! stalled; within a cycle it visits only the SMs due then (issuing, woken by a reply or a
//! launch, or at the end of a latency), so a stalled SM costs nothing. Nothing polls: a
//! request an L1 or an L2 slice refuses waits for the fill that can admit it
//! ([`sm`], [`mem`]), and `reservation_fails` counts each refused request once.
//!
//! With several threads ([`SimOptions::threads`]) the SMs due in a cycle step in parallel and
//! a serial phase in SM order delivers their requests to the memory side ([`par`]); the
//! results are byte-identical at any thread count.
//!
//! Per-warp instruction streams are traced lazily, a chunk at a time ([`trace`]), so memory
//! is bounded by the resident TBs, not by the instructions executed ([`RunInfo`]).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use sim::timing::{simulate, SimOptions, TbPolicy, TimingConfig};
//! let module = ptx_parser::parse_file("kernels/mm_naive/mm_naive.compute_70.ptx".as_ref())?;
//! let f = module.kernel("mm_naive").ok_or("no kernel")?;
//! let launch = launch::Launch::read("kernels/mm_naive/small.json".as_ref())?;
//! let bound = launch.bind("mm_naive", &sim::param_sigs(f), "kernels/mm_naive".as_ref())?;
//! let cfg = TimingConfig::new(gpu::GpuConfig::builtin("volta")?);
//! let stats = simulate(&module, f, &bound, &cfg, &SimOptions::new(TbPolicy::LRR))?;
//! println!("{} cycles, IPC {:.2}", stats.cycles, stats.ipc);
//! # Ok(()) }
//! ```

pub mod addr_map;
pub mod block_map;
pub mod cache;
pub mod capacity;
pub mod coalesce;
pub mod config;
pub mod dp;
pub mod dram;
pub mod events;
pub mod hints;
pub mod icc;
pub mod inst;
pub mod issue_order;
pub mod ld_cache;
pub mod ledger;
pub mod mem;
pub mod named;
pub mod noc;
pub mod numa;
pub mod par;
pub mod prefetch;
pub mod sample;
pub mod sm;
pub mod stats;
pub mod tb_sched;
pub mod trace;
pub mod warp_sched;

pub use config::{TimingConfig, WritePolicy};
pub use stats::{SmStats, Stats};
pub use warp_sched::{WarpPolicy, WarpPolicyInfo, WARP_POLICIES};

use crate::SimError;
use graph_partition::Schedule;
use launch::BoundLaunch;
use ptx_parser::{Function, Module};
use std::collections::BTreeMap;
use tb_sched::TbScheduler;

pub use tb_sched::{steals_by_default, TbPolicy, TbPolicyInfo, TB_POLICIES};

/// `paver simulate`'s budget of warp instructions per launch: a runaway kernel stops with a
/// clear error within a minute on a 2-core machine (29 s for a one-warp spin loop on
/// Volta: 3.5 M warp instructions a second; the corpus runs 1-5 M; docs/PERFORMANCE.md),
/// while a legitimate launch beyond it asks for `--max-instructions`.
pub const DEFAULT_LAUNCH_BUDGET: u64 = 100_000_000;

/// Engine steps between two checks of [`SimOptions::stop_after_instructions`] (the check
/// sums a counter over every SM, too much for every step).
pub const STOP_CHECK_STEPS: u64 = 1024;

/// How to run.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// TB policy.
    pub tb_policy: TbPolicy,
    /// Name reported in the stats (defaults to the policy's).
    pub policy_name: String,
    /// Warp policy.
    pub warp_policy: WarpPolicy,
    /// The schedule for [`TbPolicy::PAVER`].
    pub schedule: Option<Schedule>,
    /// Task stealing in the PAVER runtime (PAVER §5.2): `Some` forces it on or off; `None`
    /// takes the schedule policy's default, [`steals_by_default`] (on for Kway-TS and
    /// RB-TS, off otherwise).
    pub steal: Option<bool>,
    /// Cap the TBs one steal moves at the recipient's free contexts (`--steal-cap`, a
    /// departure from PAVER Algorithm 2, off by default; see [`tb_sched::Paver`]).
    pub steal_cap: bool,
    /// Budget of warp instructions per TB (runaway loops).
    pub max_warp_instructions_per_tb: u64,
    /// Budget of warp instructions of the whole launch, counted as the TBs' instructions
    /// are traced (in the simulation's deterministic order, so the error is the same on
    /// every run); `u64::MAX`: none. `paver simulate` sets [`DEFAULT_LAUNCH_BUDGET`].
    pub max_warp_instructions: u64,
    /// Stop with an error after this many cycles.
    pub max_cycles: u64,
    /// End the run, without an error, once this many warp instructions have issued
    /// (`paver simulate --stop-after`; `u64::MAX`: never): the statistics are those of the
    /// prefix simulated, marked [`Stats::truncated`]. The count is checked whenever TBs
    /// finish and every [`STOP_CHECK_STEPS`] engine steps, so a run may go a little past
    /// it, at the same point on every run. For benchmarks and quick looks at launches too
    /// large to run whole.
    pub stop_after_instructions: u64,
    /// Threads a run may use (1 or more). With 2 or more, the launch's buffers are
    /// materialised on a second thread while the model is built, and the SMs due in a
    /// cycle step in parallel ([`par`]; serially with iPAWS, [`par::cycle_threads`]); the
    /// results are byte-identical whatever the count.
    pub threads: usize,
    /// The kernel's registers per thread and their source (ptxas, the launch file), for
    /// the occupancy; `None`: the liveness estimate from the PTX.
    pub registers: Option<gpu::Registers>,
    /// The occupancy the caller computed for this kernel on this configuration (the
    /// `experiment` crate does it once per launch and GPU); `None`: computed here from
    /// `registers` ([`occupancy`]).
    pub occupancy: Option<gpu::Occupancy>,
    /// The launch's Locality Descriptors ([`hints`]), for the mechanisms that use them at
    /// run time; empty: none of them is active.
    pub hints: hints::LocalityHints,
    /// Data placement on a multi-module GPU ([`numa`]; `None`: interleave there). A GPU
    /// with one module refuses one.
    pub placement: Option<numa::Placement>,
    /// Keep the locality ledger ([`ledger`], `paver simulate --explain`): per TB, its SM,
    /// its co-resident TBs and whose L1 lines served its reads, in [`Stats::ledger`].
    pub explain: bool,
    /// Sampled simulation ([`sample`], `--sample`); `None`: every TB in detail.
    pub sample: Option<sample::SampleOptions>,
    /// With several threads, the fewest SMs due without tracing, per thread, for a cycle
    /// to step in parallel ([`par::MIN_SMS_PER_THREAD`]); a speed knob only (tests set 1
    /// so that small launches exercise the parallel phase).
    pub par_min_sms_per_thread: usize,
}

impl SimOptions {
    /// Defaults: GTO warps, stealing as the schedule's policy says.
    pub fn new(tb_policy: TbPolicy) -> SimOptions {
        SimOptions {
            tb_policy,
            policy_name: format!("{tb_policy:?}").to_ascii_lowercase(),
            warp_policy: WarpPolicy::GTO,
            schedule: None,
            steal: None,
            steal_cap: false,
            max_warp_instructions_per_tb: 100_000_000,
            max_warp_instructions: u64::MAX,
            max_cycles: u64::MAX,
            stop_after_instructions: u64::MAX,
            threads: 1,
            registers: None,
            occupancy: None,
            hints: hints::LocalityHints::default(),
            placement: None,
            explain: false,
            sample: None,
            par_min_sms_per_thread: par::MIN_SMS_PER_THREAD,
        }
    }
}

/// Resident TBs per SM for kernel `f` of `module` over `bound` on `cfg`, through the one
/// occupancy computation every command uses ([`gpu::tbs_per_sm`]): `registers` is the
/// kernel's register count with its source as the caller resolved it (ptxas, the launch
/// file); without one, the liveness estimate from the PTX. `cfg.regs_per_thread` and
/// `cfg.tbs_per_sm` are the `--registers` / `--tbs-per-sm` overrides.
pub fn occupancy(
    cfg: &TimingConfig,
    module: &Module,
    f: &Function,
    bound: &BoundLaunch,
    registers: Option<&gpu::Registers>,
) -> Result<gpu::Occupancy, SimError> {
    let threads = u32::try_from(bound.block.count()).map_err(|_| SimError::TooLarge {
        what: "TB",
        value: bound.block.count(),
    })?;
    // With a `--registers` override the count is replaced in `gpu::tbs_per_sm` whatever it
    // was, so the liveness estimate (a pass over the kernel, a few percent of a tiny launch)
    // is not computed for it.
    let registers = registers.cloned().unwrap_or_else(|| gpu::Registers {
        count: if cfg.regs_per_thread.is_some() {
            0
        } else {
            gpu::estimate::estimate_registers(module, f).registers
        },
        source: gpu::RegisterSource::Estimate,
    });
    let k = gpu::KernelResources {
        threads_per_tb: threads,
        registers,
        static_shared_bytes: gpu::resources::declared_shared_bytes(module, f),
        dynamic_shared_bytes: bound.dynamic_shared_bytes,
    };
    let o = gpu::Overrides {
        registers: cfg.regs_per_thread,
        tbs_per_sm: cfg.tbs_per_sm,
    };
    Ok(gpu::tbs_per_sm(&cfg.gpu, &k, &o)?)
}

/// Resident TBs per SM of child kernel `func` of `prog` launched from the device with
/// geometry `geom` (issue 43): the kernel's own resources through the one occupancy
/// computation ([`gpu::tbs_per_sm`]): its block, its declared and dynamic shared memory,
/// and its registers from the PTX liveness estimate (a launch file records ptxas's count for
/// the host's kernel only), computed once per kernel into `regs`. The host's `--registers`
/// and `--tbs-per-sm` overrides do not apply to child kernels.
fn child_occupancy(
    cfg: &TimingConfig,
    prog: &crate::interp::Program,
    func: u32,
    geom: &crate::interp::Geometry,
    regs: &mut [Option<u32>],
) -> Result<gpu::Occupancy, SimError> {
    let (Some(module), Some(f)) = (prog.child_module(), prog.child_function(func)) else {
        return Err(SimError::Internal(format!(
            "child kernel {func} was not decoded"
        )));
    };
    let count = match regs.get(func as usize).copied().flatten() {
        Some(c) => c,
        None => {
            let c = gpu::estimate::estimate_registers(module, f).registers;
            if let Some(slot) = regs.get_mut(func as usize) {
                *slot = Some(c);
            }
            c
        }
    };
    let static_shared = gpu::resources::declared_shared_bytes(module, f);
    let k = gpu::KernelResources {
        threads_per_tb: geom.threads(),
        registers: gpu::Registers {
            count,
            source: gpu::RegisterSource::Estimate,
        },
        static_shared_bytes: static_shared,
        dynamic_shared_bytes: geom.dynamic_shared,
    };
    Ok(gpu::tbs_per_sm(&cfg.gpu, &k, &gpu::Overrides::default())?)
}

/// The L1 each SM gets with `x` resident TBs of `shared_per_tb` bytes of shared memory:
/// (L1 bytes, shared carveout bytes, the configuration with that L1's ways and size).
/// Shared memory in use counts each TB's allocation as the occupancy calculator does
/// ([`gpu::GpuConfig::shared_allocation_per_tb`]).
fn l1_for(cfg: &TimingConfig, x: u32, shared_per_tb: u64) -> (u64, u64, TimingConfig) {
    let in_use = u64::from(x) * cfg.gpu.shared_allocation_per_tb(shared_per_tb);
    let mut sm_cfg = cfg.clone();
    sm_cfg.gpu.l1.ways = cfg.gpu.l1_ways(in_use);
    sm_cfg.gpu.l1.size_bytes = cfg.gpu.l1_bytes(in_use);
    (
        sm_cfg.gpu.l1.size_bytes,
        cfg.gpu.shared_carveout_bytes(in_use),
        sm_cfg,
    )
}

impl SimOptions {
    /// Whether this run steals: the explicit choice, else the schedule policy's default;
    /// never outside the PAVER runtime.
    pub fn steals(&self) -> bool {
        self.tb_policy.is_grouped()
            && self.steal.unwrap_or_else(|| {
                self.schedule
                    .as_ref()
                    .is_some_and(|s| steals_by_default(&s.policy))
            })
    }
}

/// The launch a schedule must belong to.
struct LaunchShape<'a> {
    kernel: &'a str,
    grid: [u64; 3],
    block: [u64; 3],
}

/// Checks that schedule `s` was made for this kernel and launch: kernel name, grid, block
/// and TB count, then that its groups cover every TB exactly once.
fn check_schedule(s: &Schedule, l: &LaunchShape<'_>) -> Result<(), SimError> {
    let dims = |d: [u32; 3]| d.map(u64::from);
    let mismatch = |what: &'static str, schedule: String, launch: String| {
        Err(SimError::ScheduleMismatch {
            what,
            schedule,
            launch,
        })
    };
    if s.kernel != l.kernel {
        return mismatch(
            "kernel",
            format!("`{}`", s.kernel),
            format!("`{}`", l.kernel),
        );
    }
    if dims(s.grid) != l.grid {
        return mismatch("grid", format!("{:?}", s.grid), format!("{:?}", l.grid));
    }
    if dims(s.block) != l.block {
        return mismatch("block", format!("{:?}", s.block), format!("{:?}", l.block));
    }
    let num_tbs: u64 = l.grid.iter().product();
    let in_groups: u64 = s.groups.iter().map(|g| g.len() as u64).sum();
    if in_groups != num_tbs {
        return mismatch(
            "TB count",
            format!("{in_groups} TBs in its groups"),
            format!("{num_tbs} TBs"),
        );
    }
    let mut seen = vec![false; num_tbs as usize];
    for &tb in s.groups.iter().flatten() {
        match seen.get_mut(tb as usize) {
            Some(x) if !*x => *x = true,
            _ => return Err(SimError::ScheduleTb { tb, num_tbs }),
        }
    }
    Ok(())
}

fn make_scheduler(
    opts: &SimOptions,
    cfg: &TimingConfig,
    launch: &LaunchShape<'_>,
    tbs_per_sm: u32,
) -> Result<Box<dyn TbScheduler>, SimError> {
    let n = cfg.gpu.core.num_sms;
    let spc = cfg.gpu.interconnect.sms_per_cluster;
    let grid_tbs = launch.grid.iter().product::<u64>();
    let num_tbs = u32::try_from(grid_tbs).map_err(|_| SimError::TooLarge {
        what: "TB count",
        value: grid_tbs,
    })?;
    let schedule = if opts.tb_policy.is_grouped() {
        let s = opts.schedule.as_ref().ok_or(SimError::NoSchedule)?;
        check_schedule(s, launch)?;
        Some(s)
    } else {
        None
    };
    (opts.tb_policy.0.make)(&tb_sched::DispatchContext {
        num_tbs,
        num_sms: n,
        sms_per_cluster: spc,
        tbs_per_sm,
        schedule,
        steal: opts.steals(),
        steal_cap: opts.steal_cap,
    })
}

/// The placement of a run (issue 17): on a multi-module GPU the one asked for, else
/// interleave; on a GPU with one module none, and asking for one is an error.
fn numa_placement(
    cfg: &TimingConfig,
    opts: &SimOptions,
) -> Result<Option<numa::Placement>, SimError> {
    match (&cfg.gpu.numa, &opts.placement) {
        (Some(_), Some(p)) => Ok(Some(p.clone())),
        (Some(_), None) => Ok(Some(numa::Placement::of(numa::PlacementKind::Interleave))),
        (None, Some(p)) => Err(SimError::PlacementNeedsNuma {
            placement: named::Named::name(p.kind),
            gpu: cfg.gpu.name.clone(),
        }),
        (None, None) => Ok(None),
    }
}

/// Simulates kernel `f` of `module` over `bound` on `cfg`.
pub fn simulate(
    module: &Module,
    f: &Function,
    bound: &BoundLaunch,
    cfg: &TimingConfig,
    opts: &SimOptions,
) -> Result<Stats, SimError> {
    simulate_with_progress(module, f, bound, cfg, opts, &mut |_, _, _| {})
}

/// [`simulate`], calling `progress(tbs_done, tbs_total, cycle)` whenever TBs finish (for a
/// progress bar; it does not affect the results).
pub fn simulate_with_progress(
    module: &Module,
    f: &Function,
    bound: &BoundLaunch,
    cfg: &TimingConfig,
    opts: &SimOptions,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<Stats, SimError> {
    simulate_with_info(module, f, bound, cfg, opts, progress).map(|(s, _)| s)
}

/// What a run used, beside its statistics (not part of the stats JSON).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunInfo {
    /// An upper bound on the trace bytes held at once: the sum over SMs of the most each
    /// held (sampled when TBs launch and finish). Bounded by the resident warps times
    /// [`trace::CHUNK`] instructions, whatever the kernel executes.
    pub peak_trace_bytes: usize,
    /// Engine steps whose SMs stepped in parallel ([`par`]; 0 on one thread).
    pub parallel_steps: u64,
    /// SM steps taken on the pool, and those taken on the calling thread because they
    /// might trace, in the parallel steps.
    pub pooled_sm_steps: u64,
    /// See `pooled_sm_steps`.
    pub tracing_sm_steps: u64,
}

/// [`simulate_with_progress`], also returning what the run used ([`RunInfo`]).
pub fn simulate_with_info(
    module: &Module,
    f: &Function,
    bound: &BoundLaunch,
    cfg: &TimingConfig,
    opts: &SimOptions,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<(Stats, RunInfo), SimError> {
    let prog = trace::decoded(module, f);
    let kernel = trace::Kernel::new(f, cfg.pipeline.issue_order);
    // Kernels that launch kernels (issue 43, [`dp`]): every kernel of the module decoded as
    // a child grid's, with its static instructions, before the tracer borrows them.
    let child_progs = prog.child_programs();
    let child_kernels: Vec<Option<trace::Kernel>> = child_progs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.as_ref()
                .and_then(|_| prog.child_function(i as u32))
                .map(|g| trace::Kernel::new(g, cfg.pipeline.issue_order))
        })
        .collect();
    let l1_block = TimingConfig::block_bytes(cfg.gpu.l1.sectored, cfg.gpu.l1.line_bytes);
    let params = trace::Tracer::params(&prog, bound);
    // The tracer's set-up materialises the launch's buffers (for a small launch as long as
    // simulating it); with a second thread it runs beside the model's construction, which
    // does not need it. Either way the same tracer and model result.
    let make_tracer = || {
        trace::Tracer::new(
            &prog,
            &kernel,
            bound,
            &params,
            l1_block,
            cfg.pipeline.shared_banks,
            trace::Budget {
                per_tb: opts.max_warp_instructions_per_tb,
                launch: opts.max_warp_instructions,
            },
        )
    };
    let build = || -> Result<_, SimError> {
        let shared_bytes = trace::shared_bytes(&prog, bound)?;
        let num_tbs = u32::try_from(bound.grid.count()).map_err(|_| SimError::TooLarge {
            what: "TB count",
            value: bound.grid.count(),
        })?;
        let threads = u32::try_from(bound.block.count()).map_err(|_| SimError::TooLarge {
            what: "TB",
            value: bound.block.count(),
        })?;
        let warps_per_tb = threads.div_ceil(32);
        let occ = match &opts.occupancy {
            Some(o) => o.clone(),
            None => occupancy(cfg, module, f, bound, opts.registers.as_ref())?,
        };
        let x = occ.tbs_per_sm;
        let shape = LaunchShape {
            kernel: &f.name,
            grid: [bound.grid.x, bound.grid.y, bound.grid.z],
            block: [bound.block.x, bound.block.y, bound.block.z],
        };
        // NUMA (issue 17): a placement's own TB partition replaces the TB policy.
        let placement = numa_placement(cfg, opts)?;
        let sched: Box<dyn TbScheduler> = match placement
            .as_ref()
            .and_then(|p| numa::zone_scheduler(cfg, p, num_tbs))
        {
            Some(z) => Box::new(z),
            None => make_scheduler(opts, cfg, &shape, x)?,
        };
        let n = cfg.gpu.core.num_sms.max(1);
        // The carveout is chosen for the TBs an SM can actually hold (a grid smaller than the
        // GPU does not fill every context).
        let resident = x.min(num_tbs.div_ceil(n).max(1));
        let (l1_bytes, carveout, sm_cfg) = l1_for(cfg, resident, shared_bytes as u64);
        let decision = std::sync::Arc::new(warp_sched::KernelDecision::default());
        let ld_hints = std::sync::Arc::new(opts.hints.clone());
        // With grids launched from the device an SM may hold more TBs of a child kernel than
        // of the host's (its own occupancy, [`child_occupancy`]): contexts up to the TB slots,
        // the capacity ([`capacity::CAPACITY`]) keeping each kernel to its own limit.
        let contexts = if prog.calls_device_runtime() {
            x.max(cfg.gpu.core.max_tbs_per_sm)
        } else {
            x
        };
        let sms: Vec<sm::Sm> = (0..n)
            .map(|i| {
                let mut s = sm::Sm::new(
                    i,
                    &sm_cfg,
                    contexts,
                    opts.warp_policy,
                    kernel.num_regs,
                    &decision,
                );
                if opts.explain {
                    s.keep_ledger();
                }
                if cfg.ld.active() {
                    // `--cache-policy ld` / `--prefetch` (issue 17): the L1's LD state.
                    let line = u64::from(sm_cfg.gpu.l1.line_bytes);
                    s.set_ld(ld_cache::LdL1::new(
                        &cfg.ld,
                        ld_hints.clone(),
                        shape.grid,
                        l1_bytes,
                        line,
                    ));
                }
                s
            })
            .collect();
        let mut memsys = mem::MemSystem::new(cfg);
        if let Some(p) = &placement {
            memsys.set_numa(numa::Numa::new(cfg, p));
        }
        Ok((
            num_tbs,
            warps_per_tb,
            occ,
            x,
            sched,
            n,
            (l1_bytes, carveout),
            sms,
            memsys,
            decision,
        ))
    };
    let (tracer, model) = if opts.threads > 1 {
        std::thread::scope(|sc| {
            let helper = sc.spawn(make_tracer);
            let model = build();
            let tracer = helper
                .join()
                .unwrap_or_else(|_| Err(SimError::Internal("the tracer's set-up panicked".into())));
            (tracer, model)
        })
    } else {
        (make_tracer(), build())
    };
    let mut tracer = tracer?;
    tracer.set_num_sms(cfg.gpu.core.num_sms);
    let (
        num_tbs,
        warps_per_tb,
        occ,
        x,
        mut sched,
        n,
        (l1_bytes, carveout),
        mut sms,
        mut memsys,
        decision,
    ) = model?;
    // The launch's fixed cost (`core.launch_ns`): the first TB is dispatched after it.
    let mut now = cfg.gpu.core.launch_cycles();
    let host_block = [bound.block.x, bound.block.y, bound.block.z].map(|v| v as u32);
    let mut grids = dp::Grids::new(
        &child_progs,
        num_tbs,
        host_block,
        &cfg.dp,
        cfg.gpu.core.clock_mhz,
    );
    let mut launches = Vec::new();
    // A TB context must hold the widest TB of any grid dispatched so far, and the largest
    // share of an SM (the lowest occupancy) of any such grid.
    let mut max_warps = warps_per_tb;
    let mut max_weight = capacity::tb_weight(x);
    tracer.set_host_weight(max_weight);
    // Child kernels' register estimates (by function index) and occupancies (by kernel).
    let mut child_regs: Vec<Option<u32>> = vec![None; child_progs.len()];
    let mut child_occ: BTreeMap<(String, [u32; 3], u64), gpu::Occupancy> = BTreeMap::new();
    // The SM of each TB, for the policies that place a child by its parent.
    let mut sm_of: Vec<u32> = Vec::new();
    let dp_on = prog.calls_device_runtime();
    // A policy that watches the L1 reads (LASER's reuse monitor) gets them after each step.
    let watch_reads = dp_on && sched.observes_reads();
    if watch_reads {
        sms.iter_mut().for_each(sm::Sm::keep_reads);
    }
    let mut reads = Vec::new();
    // When the pending-launch queue next releases a grid by its latency alone.
    let mut dp_next = u64::MAX;
    let mut done = 0u64;
    let mut replies = Vec::new();
    let mut assigned = Vec::new();
    let mut finished = Vec::new();
    let mut free = vec![0u32; n as usize];
    // When each SM next needs a cycle: `now + 1` while it issues, its wake-up time while its
    // warps wait on latencies, `u64::MAX` while it waits for a reply (or has no TB). A
    // reply or a launch makes it due at once. An SM's cycle before its due time would do
    // nothing, so skipping it changes no result. The agenda visits the SMs due at a step in
    // SM order without a pass over the others.
    let mut due = events::SmAgenda::new(n as usize);
    // Since when each SM has had a resident TB (for `busy_cycles`).
    let mut busy_since: Vec<Option<u64>> = vec![None; n as usize];
    let mut phase = par::Phase::new(
        par::cycle_threads(opts.threads, opts.warp_policy).0,
        n as usize,
        opts.par_min_sms_per_thread,
    )?;
    let mut ask = true;
    if opts.sample.is_some() && opts.explain {
        return Err(SimError::Options(
            "sampled simulation (--sample) cannot keep the locality ledger (--explain): the \
             ledger lists every TB, and sampling skips most of them"
                .into(),
        ));
    }
    if opts.sample.is_some() && opts.stop_after_instructions != u64::MAX {
        return Err(SimError::Options(
            "sampled simulation (--sample) and --stop-after both end a run early; choose one"
                .into(),
        ));
    }
    if opts.sample.is_some() && dp_on {
        return Err(SimError::Options(
            "sampled simulation (--sample) does not support kernels that launch kernels: \
             the TBs it would skip launch the grids the simulated ones wait for"
                .into(),
        ));
    }
    let mut sampler = opts.sample.as_ref().map(|o| {
        let wave = u64::from(n) * u64::from(x.max(1));
        let l2 = &cfg.gpu.l2;
        let l2_blocks = l2.size_bytes / TimingConfig::block_bytes(l2.sectored, l2.line_bytes);
        sample::Sampler::new(o, u64::from(num_tbs), wave, l2_blocks)
    });
    // The counters sampling reads at the end of each window (totals over SMs and slices).
    let counters = |now: u64, sms: &[sm::Sm], memsys: &mem::MemSystem| {
        let mut l1 = cache::CacheStats::default();
        let mut total = SmStats::default();
        for s in sms {
            l1 += s.l1_stats();
            total += s.stats();
        }
        sample::Counters::of(
            now,
            &total,
            &l1,
            &memsys.l2_stats(),
            &memsys.noc_stats(),
            &memsys.dram_stats(),
        )
    };
    if let Some(s) = &mut sampler {
        s.observe(0, sched.pending(), counters(now, &sms, &memsys));
    }
    // TBs taken from the TB policy and never run (sampling's skips).
    let mut skipped = 0u64;
    let mut steps = 0u64;
    let mut truncated = false;
    // Without device-side launches (sampling refuses them) the grids are the host's alone:
    // sampling ends the run once every TB has finished or been skipped.
    while !(grids.all_done() || (skipped > 0 && done + skipped >= u64::from(num_tbs))) {
        if now > opts.max_cycles {
            return Err(SimError::MaxCycles(opts.max_cycles));
        }
        replies.clear();
        memsys.cycle(now, &mut replies);
        due.begin(now);
        for r in &replies {
            if sms[r.sm as usize].on_reply(r, now) {
                due.due_now(r.sm as usize, now);
            }
        }
        let mut launched = false;
        // A scheduler's answer depends on its state and the free contexts only, and both
        // change only when TBs launch or finish: otherwise the last (empty) answer holds.
        if sched.pending() > 0 && ask && skipped == 0 {
            for (f, s) in free.iter_mut().zip(&sms) {
                *f = s.free_contexts(max_warps, max_weight);
            }
            assigned.clear();
            sched.assign(&free, &mut assigned);
            for &(s, tb) in &assigned {
                let i = s as usize;
                if dp_on {
                    if sm_of.len() <= tb as usize {
                        sm_of.resize(tb as usize + 1, 0);
                    }
                    sm_of[tb as usize] = s;
                }
                sms[i].launch(tb, &mut tracer, now, sched.join_group(tb))?;
                busy_since[i].get_or_insert(now);
                due.due_now(i, now);
                launched = true;
            }
            ask = launched;
        }
        let mut active = launched;
        let mut wake = memsys.next_time().unwrap_or(u64::MAX);
        // The SMs due step (in parallel with several threads, [`par`]); their requests
        // reach the memory side and their finished TBs `finished` in SM order.
        let (a, w) = phase.run(
            now,
            par::Model {
                sms: &mut sms,
                due: &mut due,
                memsys: &mut memsys,
                tracer: &mut tracer,
                busy_since: &mut busy_since,
                finished: &mut finished,
            },
        )?;
        active |= a;
        wake = wake.min(w);
        wake = wake.min(due.first_due());
        done += finished.len() as u64;
        for &tb in &finished {
            grids.tb_done(tb, now);
        }
        if watch_reads {
            for (i, s) in sms.iter_mut().enumerate() {
                s.take_reads(&mut reads);
                for (tb, line) in reads.drain(..) {
                    sched.observe_read(i as u32, tb, line);
                }
            }
        }
        let mut released = false;
        if dp_on {
            tracer.take_launches(&mut launches);
            for (tb, l) in launches.drain(..) {
                if cfg.ld.active() {
                    return Err(SimError::DeviceLaunch {
                        why: "the Locality Descriptor's L1 mechanisms (--cache-policy ld, \
                              --prefetch) do not support grids launched from the device"
                            .into(),
                        loc: l.loc,
                    });
                }
                grids.launch(tb, l, now)?;
            }
            // The queue can release a grid only when a pending grid's latency has passed or
            // the queue changed (a launch, a completion): otherwise the last answer holds.
            if grids.has_pending() && (now >= dp_next || grids.take_changed()) {
                let known = grids.known_tbs();
                grids.release(now, &mut |r| {
                    let (Some(p), Some(k)) = (
                        child_progs.get(r.func as usize).and_then(Option::as_ref),
                        child_kernels.get(r.func as usize).and_then(Option::as_ref),
                    ) else {
                        return Err(SimError::Internal(format!(
                            "child kernel {} was not decoded",
                            r.func
                        )));
                    };
                    let occ = child_occupancy(cfg, &prog, r.func, &r.geom, &mut child_regs)?;
                    let weight = capacity::tb_weight(occ.tbs_per_sm);
                    tracer.add_grid(p, k, r.params.to_vec(), r.geom, r.tbs.start, weight);
                    max_warps = max_warps.max(r.geom.threads().div_ceil(32));
                    max_weight = max_weight.max(weight);
                    let kernel = prog
                        .child_function(r.func)
                        .map_or_else(String::new, |g| g.name.clone());
                    child_occ
                        .entry((kernel, r.geom.block, r.geom.dynamic_shared))
                        .or_insert(occ);
                    let origin = tb_sched::ChildOrigin {
                        parent_tb: r.parent_tb,
                        parent_sm: sm_of.get(r.parent_tb as usize).copied().unwrap_or(0),
                    };
                    match (sched.add_child_tbs(r.tbs.clone(), origin), r.loc) {
                        (true, _) => Ok(()),
                        (false, Some(loc)) => Err(SimError::DeviceLaunch {
                            why: format!(
                                "the {} TB policy cannot dispatch grids launched from the \
                                 device (its TBs are fixed at the launch); use lrr, \
                                 global-rr or greedy",
                                opts.policy_name
                            ),
                            loc: Box::new(loc.clone()),
                        }),
                        (false, None) => Err(SimError::Internal(
                            "a grid without a launch became dispatchable".into(),
                        )),
                    }
                })?;
                released = grids.known_tbs() > known;
                ask |= released;
                dp_next = grids.next_ready();
            }
            wake = wake.min(dp_next);
        }
        let freed = !finished.is_empty();
        ask |= freed;
        if let Some(s) = sampler.as_mut().filter(|s| freed && s.window_closed(done)) {
            let c = counters(now, &sms, &memsys);
            if s.observe(done, sched.pending(), c) == sample::Step::Stop {
                // Converged: nothing more is dispatched; what the policy holds is skipped.
                skipped = sched.pending();
                s.skipped(skipped);
                ask = false;
            }
        }
        if freed {
            progress(done + skipped, u64::from(grids.known_tbs()), now);
        }
        finished.clear();
        steps += 1;
        if opts.stop_after_instructions != u64::MAX
            && (freed || steps.is_multiple_of(STOP_CHECK_STEPS))
            && sms.iter().map(|s| s.stats().warp_instructions).sum::<u64>()
                >= opts.stop_after_instructions
        {
            truncated = true;
            break;
        }
        let next = if active
            || (freed && skipped == 0 && sched.pending() > 0)
            || released
            || grids.all_done()
            || (skipped > 0 && done + skipped >= u64::from(num_tbs))
        {
            now + 1
        } else if wake == u64::MAX {
            if memsys.is_idle() {
                // Nothing in flight and nothing due: either every SM is empty and the TB
                // scheduler will not issue what it still holds (a policy bug, named as
                // such), or resident warps wait on each other forever.
                let idle = sms.iter().all(|s| !s.is_busy());
                let why = if idle && sched.pending() > 0 {
                    format!(
                        "the {} TB scheduler holds {} TBs but issues none to {} idle SMs",
                        opts.policy_name,
                        sched.pending(),
                        n
                    )
                } else {
                    "resident warps wait with nothing in flight".to_string()
                };
                return Err(SimError::TimingDeadlock {
                    cycle: now,
                    done,
                    num_tbs: grids.known_tbs(),
                    why,
                });
            }
            now + 1
        } else {
            wake.max(now + 1)
        };
        now = next;
    }
    // Writes still on their way count in the L2 / DRAM statistics (the kernel made them);
    // `cycles` stays the time its last TB finished.
    let mut t = now;
    while let Some(next) = memsys.next_time() {
        t = t.max(next);
        replies.clear();
        memsys.cycle(t, &mut replies);
    }
    let mut l1 = cache::CacheStats::default();
    let mut total = SmStats::default();
    let mut ld = cfg.ld.active().then(ld_cache::LdStats::default);
    for s in &sms {
        l1 += s.l1_stats();
        total += s.stats();
        if let (Some(t), Some(x)) = (&mut ld, s.ld_stats()) {
            *t += x;
        }
    }
    let ledger = opts
        .explain
        .then(|| ledger::Ledger::new(sms.iter_mut().flat_map(sm::Sm::take_ledger).collect()));
    let cycles = now;
    let info = RunInfo {
        peak_trace_bytes: sms.iter().map(sm::Sm::peak_trace_bytes).sum(),
        parallel_steps: phase.counts().0,
        pooled_sm_steps: phase.counts().1,
        tracing_sm_steps: phase.counts().2,
    };
    let mut stats = Stats {
        kernel: f.name.clone(),
        tb_policy: opts.policy_name.clone(),
        warp_policy: format!("{:?}", opts.warp_policy).to_ascii_lowercase(),
        steal: opts.steals(),
        steal_cap: opts.steals() && opts.steal_cap,
        tbs: u64::from(grids.known_tbs()),
        tbs_per_sm: x,
        occupancy: occ,
        cycles,
        ipc: if cycles == 0 {
            0.0
        } else {
            total.warp_instructions as f64 / cycles as f64
        },
        warp_instructions: total.warp_instructions,
        thread_instructions: total.thread_instructions,
        stolen_tbs: sched.stolen(),
        truncated,
        schedule: opts
            .schedule
            .as_ref()
            .filter(|_| opts.tb_policy.is_grouped())
            .map(|s| stats::ScheduleShape {
                policy: s.policy.clone(),
                num_sms: s.num_sms,
                tbs_per_sm: s.tbs_per_sm,
                groups: s.groups.len(),
                departures: s.stats.as_ref().map(|st| st.departures).unwrap_or_default(),
            }),
        l1,
        l1_bytes,
        shared_carveout_bytes: carveout,
        l2: memsys.l2_stats(),
        noc: memsys.noc_stats(),
        dram: memsys.dram_stats(),
        sms: sms.iter().map(|s| s.stats().clone()).collect(),
        ipaws: opts
            .warp_policy
            .0
            .ipaws
            .then(|| decision.stats(sms.iter().filter_map(sm::Sm::warp_phases).collect())),
        icc: memsys.icc_stats(),
        ld,
        numa: memsys.numa_stats(&sms.iter().map(|s| s.stats().tbs).collect::<Vec<_>>()),
        ledger,
        sampling: None,
        device_launches: grids.stats().map(|mut d| {
            d.placement = sched.placement();
            d.occupancy = child_occ
                .into_iter()
                .map(
                    |((kernel, block, dynamic_shared_bytes), occupancy)| dp::ChildOccupancy {
                        kernel,
                        block,
                        dynamic_shared_bytes,
                        occupancy,
                    },
                )
                .collect();
            d
        }),
        config: cfg.clone(),
    };
    if let Some(s) = sampler {
        s.finish(&mut stats);
    }
    Ok((stats, info))
}
