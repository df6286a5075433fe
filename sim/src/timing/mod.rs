//! The cycle-level timing model (issue 6), functional-first and timing-directed
//! (DESIGN §6): when the TB scheduler issues a TB, [`trace`] runs it in the interpreter and
//! records per-warp instruction streams (static instruction, active lanes, coalesced
//! blocks); the SMs ([`sm`]) consume those streams under a scoreboard and warp schedulers
//! ([`warp_sched`]), their L1s ([`cache`]) send misses over the interconnect ([`noc`]) to
//! L2 slices and DRAM channels ([`mem`], [`dram`]). TB placement is a [`tb_sched`] policy,
//! including the PAVER runtime fed by any schedule JSON with task stealing. Results are
//! [`Stats`] (serde, additive counters, byte-identical for identical inputs).
//!
//! The engine advances one core cycle at a time while anything can happen, and jumps to
//! the next event (a memory reply, a latency expiring) when every SM is stalled.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use sim::timing::{simulate, SimOptions, TbPolicy, TimingConfig};
//! let module = ptx_parser::parse_file("kernels/mm_naive/mm_naive.compute_70.ptx".as_ref())?;
//! let f = module.kernel("mm_naive").ok_or("no kernel")?;
//! let launch = launch::Launch::read("kernels/mm_naive/small.json".as_ref())?;
//! let bound = launch.bind("mm_naive", &sim::param_sigs(f), "kernels/mm_naive".as_ref())?;
//! let cfg = TimingConfig::new(gpu::GpuConfig::builtin("volta")?);
//! let stats = simulate(&module, f, &bound, &cfg, &SimOptions::new(TbPolicy::Lrr))?;
//! println!("{} cycles, IPC {:.2}", stats.cycles, stats.ipc);
//! # Ok(()) }
//! ```

pub mod cache;
pub mod coalesce;
pub mod config;
pub mod dram;
pub mod events;
pub mod mem;
pub mod noc;
pub mod sm;
pub mod stats;
pub mod tb_sched;
pub mod trace;
pub mod warp_sched;

pub use config::{TimingConfig, WritePolicy};
pub use stats::{SmStats, Stats};
pub use warp_sched::WarpPolicy;

use crate::interp::Program;
use crate::SimError;
use graph_partition::Schedule;
use launch::BoundLaunch;
use ptx_parser::{Function, Module};
use tb_sched::TbScheduler;

/// TB scheduling policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TbPolicy {
    /// Loose round robin (GPGPU-Sim default).
    Lrr,
    /// Block CTA scheduling: pairs, only with two free contexts.
    Bcs,
    /// Two-level round robin over clusters then SMs.
    TwoLevelRr,
    /// Global round robin.
    GlobalRr,
    /// Greedy clustering.
    Greedy,
    /// Distributed (per-cluster contiguous pools).
    Distributed,
    /// Distributed-block.
    DistributedBlock,
    /// The PAVER runtime over a schedule's groups (MST-TS, Kway-TS, RB-TS or any other).
    Paver,
}

impl TbPolicy {
    /// Parses a CLI name; PAVER policy names (`rb-ts`, `kway-ts`, `mst-ts`, `paver`) map to
    /// [`TbPolicy::Paver`].
    pub fn parse(s: &str) -> Option<TbPolicy> {
        Some(match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "lrr" => TbPolicy::Lrr,
            "bcs" => TbPolicy::Bcs,
            "two-level-rr" | "2lrr" | "two-level" => TbPolicy::TwoLevelRr,
            "global-rr" => TbPolicy::GlobalRr,
            "greedy" | "greedy-clustering" => TbPolicy::Greedy,
            "distributed" => TbPolicy::Distributed,
            "distributed-block" => TbPolicy::DistributedBlock,
            "paver" | "rb-ts" | "kway-ts" | "mst-ts" => TbPolicy::Paver,
            _ => return None,
        })
    }
}

/// How to run.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// TB policy.
    pub tb_policy: TbPolicy,
    /// Name reported in the stats (defaults to the policy's).
    pub policy_name: String,
    /// Warp policy.
    pub warp_policy: WarpPolicy,
    /// The schedule for [`TbPolicy::Paver`].
    pub schedule: Option<Schedule>,
    /// Task stealing in the PAVER runtime.
    pub steal: bool,
    /// Budget of warp instructions per TB (runaway loops).
    pub max_warp_instructions_per_tb: u64,
    /// Stop with an error after this many cycles.
    pub max_cycles: u64,
    /// The kernel's registers per thread and their source (ptxas, the launch file), for
    /// the occupancy; `None`: the liveness estimate from the PTX.
    pub registers: Option<gpu::Registers>,
}

impl SimOptions {
    /// Defaults: GTO warps, stealing on.
    pub fn new(tb_policy: TbPolicy) -> SimOptions {
        SimOptions {
            tb_policy,
            policy_name: format!("{tb_policy:?}").to_ascii_lowercase(),
            warp_policy: WarpPolicy::Gto,
            schedule: None,
            steal: true,
            max_warp_instructions_per_tb: 100_000_000,
            max_cycles: u64::MAX,
            registers: None,
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
    let threads =
        u32::try_from(bound.block.count()).map_err(|_| SimError::Setup("TB too large".into()))?;
    let registers = registers.cloned().unwrap_or_else(|| gpu::Registers {
        count: gpu::estimate::estimate_registers(module, f).registers,
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
    gpu::tbs_per_sm(&cfg.gpu, &k, &o).map_err(|e| SimError::Setup(format!("occupancy: {e}")))
}

fn make_scheduler(
    opts: &SimOptions,
    cfg: &TimingConfig,
    num_tbs: u32,
) -> Result<Box<dyn TbScheduler>, SimError> {
    let n = cfg.gpu.core.num_sms;
    let spc = cfg.gpu.interconnect.sms_per_cluster;
    Ok(match opts.tb_policy {
        TbPolicy::Lrr => Box::new(tb_sched::RoundRobin::lrr(num_tbs, n)),
        TbPolicy::GlobalRr => Box::new(tb_sched::global_rr(num_tbs, n)),
        TbPolicy::TwoLevelRr => Box::new(tb_sched::two_level_rr(num_tbs, n, spc)),
        TbPolicy::Bcs => Box::new(tb_sched::Bcs::new(num_tbs)),
        TbPolicy::Greedy => Box::new(tb_sched::Greedy::new(num_tbs, spc)),
        TbPolicy::Distributed => Box::new(tb_sched::Distributed::new(num_tbs, n, spc, 1)),
        TbPolicy::DistributedBlock => Box::new(tb_sched::distributed_block(num_tbs, n, spc)),
        TbPolicy::Paver => {
            let s = opts.schedule.as_ref().ok_or_else(|| {
                SimError::Setup("the PAVER runtime needs a schedule (groups of TBs)".into())
            })?;
            let mut seen = vec![false; num_tbs as usize];
            for &tb in s.groups.iter().flatten() {
                match seen.get_mut(tb as usize) {
                    Some(x) if !*x => *x = true,
                    _ => {
                        return Err(SimError::Setup(format!(
                            "schedule: TB {tb} out of range or repeated (grid has {num_tbs})"
                        )))
                    }
                }
            }
            if seen.iter().any(|x| !x) {
                return Err(SimError::Setup("schedule does not cover every TB".into()));
            }
            Box::new(tb_sched::Paver::new(s.groups.clone(), n, opts.steal))
        }
    })
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
    let prog = Program::from_function(module, f);
    let kernel = trace::Kernel::new(f);
    let l1_block = TimingConfig::block_bytes(cfg.gpu.l1.sectored, cfg.gpu.l1.line_bytes);
    let mut tracer = trace::Tracer::new(
        &prog,
        &kernel,
        bound,
        l1_block,
        cfg.pipeline.shared_banks,
        opts.max_warp_instructions_per_tb,
    )?;
    let num_tbs = u32::try_from(bound.grid.count())
        .map_err(|_| SimError::Setup("more than 2^32 TBs".into()))?;
    let threads =
        u32::try_from(bound.block.count()).map_err(|_| SimError::Setup("TB too large".into()))?;
    let warps_per_tb = threads.div_ceil(32);
    let occ = occupancy(cfg, module, f, bound, opts.registers.as_ref())?;
    let x = occ.tbs_per_sm;
    let mut sched = make_scheduler(opts, cfg, num_tbs)?;
    let n = cfg.gpu.core.num_sms.max(1);
    let mut sms: Vec<sm::Sm> = (0..n)
        .map(|i| sm::Sm::new(i, cfg, x, opts.warp_policy, kernel.num_regs))
        .collect();
    let mut memsys = mem::MemSystem::new(cfg);
    let mut now = 0u64;
    let mut done = 0u64;
    let mut replies = Vec::new();
    let mut assigned = Vec::new();
    let mut finished = Vec::new();
    let mut free = vec![0u32; n as usize];
    let mut busy = Vec::with_capacity(n as usize);
    let mut ask = true;
    while done < u64::from(num_tbs) {
        if now > opts.max_cycles {
            return Err(SimError::Setup(format!(
                "stopped after {} cycles (max_cycles)",
                opts.max_cycles
            )));
        }
        replies.clear();
        memsys.cycle(now, &mut replies);
        for r in &replies {
            sms[r.sm as usize].on_reply(r, now);
        }
        let mut launched = false;
        // A scheduler's answer depends on its state and the free contexts only, and both
        // change only when TBs launch or finish: otherwise the last (empty) answer holds.
        if sched.pending() > 0 && ask {
            for (f, s) in free.iter_mut().zip(&sms) {
                *f = s.free_contexts(warps_per_tb);
            }
            assigned.clear();
            sched.assign(&free, &mut assigned);
            for &(s, tb) in &assigned {
                let t = tracer.trace(u64::from(tb))?;
                sms[s as usize].launch(tb, t, now);
                launched = true;
            }
            ask = launched;
        }
        let mut active = launched;
        let mut wake = memsys.next_time().unwrap_or(u64::MAX);
        busy.clear();
        for (i, s) in sms.iter_mut().enumerate() {
            // An SM without TBs has nothing to do (and nothing in flight towards it), but a
            // TB it launched may have finished at once.
            if !s.is_busy() {
                s.take_finished(&mut finished);
                continue;
            }
            let (a, w) = s.cycle(now, &kernel, &mut memsys);
            active |= a;
            wake = wake.min(w);
            s.take_finished(&mut finished);
            if s.is_busy() {
                busy.push(i);
            }
        }
        done += finished.len() as u64;
        let freed = !finished.is_empty();
        ask |= freed;
        if freed {
            progress(done, u64::from(num_tbs), now);
        }
        finished.clear();
        let next = if active || (freed && sched.pending() > 0) || done >= u64::from(num_tbs) {
            now + 1
        } else if wake == u64::MAX {
            if memsys.is_idle() {
                return Err(SimError::Setup(format!(
                    "timing model deadlocked at cycle {now} ({done} of {num_tbs} TBs done)"
                )));
            }
            now + 1
        } else {
            wake.max(now + 1)
        };
        for &i in &busy {
            sms[i].stats_mut().busy_cycles += next - now;
        }
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
    for s in &sms {
        l1 += s.l1_stats();
        total += s.stats();
    }
    let cycles = now;
    Ok(Stats {
        kernel: f.name.clone(),
        tb_policy: opts.policy_name.clone(),
        warp_policy: format!("{:?}", opts.warp_policy).to_ascii_lowercase(),
        steal: opts.steal && opts.tb_policy == TbPolicy::Paver,
        tbs: u64::from(num_tbs),
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
        l1,
        l2: memsys.l2_stats(),
        noc: memsys.noc_stats(),
        dram: memsys.dram_stats(),
        sms: sms.iter().map(|s| s.stats().clone()).collect(),
        config: cfg.clone(),
    })
}
