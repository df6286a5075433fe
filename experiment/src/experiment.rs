//! One launch on one configured GPU: the timing configuration with every override applied,
//! the kernel's resources (ptxas at most once) and its occupancy, computed when the
//! experiment is made; TB groups, Locality Descriptor hints, a NUMA placement and the
//! simulation as methods, all on that one GPU.

use std::path::PathBuf;

use analysis::footprint::Granularity;
use gpu::{GpuConfig, KernelResources, Occupancy};
use graph_partition::{Descriptor, Schedule};
use sim::timing::hints::LocalityHints;
use sim::timing::numa::Placement;
use sim::timing::{SimOptions, Stats, TbPolicy, TimingConfig};

use crate::error::{Error, Result};
use crate::groups::{self, GroupRequest};
use crate::workload::{Analysed, Workload};

/// The GPU an experiment runs on, as asked for.
#[derive(Clone, Debug)]
pub struct GpuSetup {
    /// The configuration (built in or read from a TOML file).
    pub gpu: GpuConfig,
    /// Registers per thread for the occupancy, replacing ptxas's (`--registers`).
    pub registers: Option<u32>,
    /// TBs resident per SM, replacing the occupancy calculator's (`--tbs-per-sm`).
    pub tbs_per_sm: Option<u32>,
    /// Shared memory per TB in bytes (static and dynamic together), replacing the
    /// kernel's for the occupancy (`paver partition --shared-bytes`).
    pub shared_bytes: Option<u64>,
    /// `KEY=VALUE` overrides of the timing configuration, applied in order (`--set`).
    pub sets: Vec<String>,
    /// The ptxas to run (else `$PAVER_PTXAS`, else `ptxas` on `PATH`).
    pub ptxas: Option<PathBuf>,
}

impl GpuSetup {
    /// `gpu` as configured, without overrides.
    pub fn new(gpu: GpuConfig) -> GpuSetup {
        GpuSetup {
            gpu,
            registers: None,
            tbs_per_sm: None,
            shared_bytes: None,
            sets: Vec::new(),
            ptxas: None,
        }
    }
}

/// The timing configuration of `gpu` with a register count and TBs per SM forced (or left
/// to the occupancy calculator) and `KEY=VALUE` overrides applied in order.
pub fn timing_config(
    gpu: GpuConfig,
    registers: Option<u32>,
    tbs_per_sm: Option<u32>,
    sets: &[String],
) -> Result<TimingConfig> {
    let mut cfg = TimingConfig::new(gpu);
    cfg.regs_per_thread = registers;
    cfg.tbs_per_sm = tbs_per_sm;
    for kv in sets {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| Error::Invalid(format!("--set {kv}: expected KEY=VALUE")))?;
        cfg.set(k.trim(), v.trim())
            .map_err(|e| Error::Invalid(e.to_string()))?;
    }
    if !sets.is_empty() || tbs_per_sm.is_some() || registers.is_some() {
        // The overrides may break what the file's own validation accepted.
        let origin = if sets.is_empty() {
            cfg.gpu.name.clone()
        } else {
            format!("{} with --set {}", cfg.gpu.name, sets.join(" --set "))
        };
        cfg.validate(&origin)
            .map_err(|e| Error::Invalid(e.to_string()))?;
    }
    Ok(cfg)
}

/// One run's settings beside the GPU: the policies and the budgets.
#[derive(Clone, Debug)]
pub struct Run {
    /// TB scheduling.
    pub tb_policy: TbPolicy,
    /// The policy's name as asked for (reported in the stats).
    pub policy_name: String,
    /// Warp scheduling.
    pub warp_policy: sim::timing::WarpPolicy,
    /// Task stealing forced on or off; `None`: the schedule policy's default.
    pub steal: Option<bool>,
    /// Cap each steal at the recipient's free contexts (`--steal-cap`, a departure from
    /// PAVER Algorithm 2, off by default; [`crate::Variant::StealCap`]).
    pub steal_cap: bool,
    /// The TB groups of the PAVER runtime (required by [`TbPolicy::PAVER`]).
    pub schedule: Option<Schedule>,
    /// Data placement on a multi-module GPU (`interleave`, `first-touch`, `ld`).
    pub placement: Option<String>,
    /// Budget of warp instructions per TB.
    pub max_warp_instructions_per_tb: u64,
    /// Budget of warp instructions of the launch.
    pub max_warp_instructions: u64,
    /// End the run cleanly after about this many warp instructions issued (`u64::MAX`:
    /// never; [`SimOptions::stop_after_instructions`]).
    pub stop_after_instructions: u64,
    /// Threads the run may use (results do not depend on it).
    pub threads: usize,
    /// Keep the locality ledger (`sim::timing::ledger`) in the stats.
    pub explain: bool,
    /// Sampled simulation (`sim::timing::sample`); `None`: every TB in detail.
    pub sample: Option<sim::timing::sample::SampleOptions>,
}

impl Run {
    /// `tb_policy` (named `name`) with GTO warps, the schedule's stealing default, no
    /// placement, the default budgets and one thread.
    pub fn new(tb_policy: TbPolicy, name: &str) -> Run {
        let d = SimOptions::new(tb_policy);
        Run {
            tb_policy,
            policy_name: name.to_ascii_lowercase(),
            warp_policy: d.warp_policy,
            steal: None,
            steal_cap: false,
            schedule: None,
            placement: None,
            max_warp_instructions_per_tb: d.max_warp_instructions_per_tb,
            max_warp_instructions: sim::timing::DEFAULT_LAUNCH_BUDGET,
            stop_after_instructions: d.stop_after_instructions,
            threads: 1,
            explain: false,
            sample: None,
        }
    }
}

/// A launch on a configured GPU.
pub struct Experiment<'w> {
    workload: &'w Workload,
    cfg: TimingConfig,
    resources: KernelResources,
    occupancy: Occupancy,
    notes: Vec<String>,
}

impl<'w> Experiment<'w> {
    /// The launch `workload` on `setup`'s GPU: the overrides applied, the kernel's
    /// resources found (ptxas when no register count is forced, else the launch file's
    /// numbers, else the liveness estimate) and its occupancy computed, once.
    pub fn new(workload: &'w Workload, setup: &GpuSetup) -> Result<Experiment<'w>> {
        let cfg = timing_config(
            setup.gpu.clone(),
            setup.registers,
            setup.tbs_per_sm,
            &setup.sets,
        )?;
        // ptxas runs only when no register override makes its answer moot.
        let ptxas = setup
            .registers
            .is_none()
            .then(|| gpu::ptxas::find(setup.ptxas.as_deref()))
            .flatten();
        let (mut resources, warning) = workload.resources(&cfg.gpu, ptxas);
        let notes: Vec<String> = warning.into_iter().collect();
        if let Some(b) = setup.shared_bytes {
            resources.static_shared_bytes = b;
            resources.dynamic_shared_bytes = 0;
        }
        // A TB beyond the GPU's shared memory per TB is a wrong launch (a CUDA launch with
        // it fails), said as such before the occupancy calculator refuses it.
        check_shared_per_tb(workload, &cfg.gpu)?;
        let o = gpu::Overrides {
            registers: cfg.regs_per_thread,
            tbs_per_sm: cfg.tbs_per_sm,
        };
        let occupancy = gpu::tbs_per_sm(&cfg.gpu, &resources, &o).map_err(|e| match e {
            gpu::Error::InvalidOverride(m) => Error::Invalid(m),
            e => Error::Occupancy(e),
        })?;
        Ok(Experiment {
            workload,
            cfg,
            resources,
            occupancy,
            notes,
        })
    }

    /// The launch.
    pub fn workload(&self) -> &'w Workload {
        self.workload
    }

    /// The timing configuration, every override applied.
    pub fn config(&self) -> &TimingConfig {
        &self.cfg
    }

    /// The GPU, every override applied.
    pub fn gpu(&self) -> &GpuConfig {
        &self.cfg.gpu
    }

    /// The kernel's resources and where its register count came from.
    pub fn resources(&self) -> &KernelResources {
        &self.resources
    }

    /// TBs per SM and what limits them.
    pub fn occupancy(&self) -> &Occupancy {
        &self.occupancy
    }

    /// Warnings from finding the resources (a ptxas that failed, and the source used
    /// instead), for the caller to show.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The granularity of the analysis this GPU's mechanisms use: its L2 lines.
    pub fn granularity(&self) -> Granularity {
        Granularity::Line(u64::from(self.cfg.gpu.l2.line_bytes.max(1)))
    }

    /// The launch's TBs grouped as `req` says on this GPU (its SMs after the overrides,
    /// its TBs per SM), from the static analysis's locality graph (and, for `ld`, its
    /// Locality Descriptors).
    pub fn schedule(&self, req: &GroupRequest) -> Result<Schedule> {
        let a = self.workload.analysis(self.granularity())?;
        self.schedule_with(&a, req)
    }

    /// [`Experiment::schedule`] from the analysis `a` of this launch (at a granularity of
    /// the caller's choice, or from the interpreter's accesses).
    pub fn schedule_with(&self, a: &Analysed, req: &GroupRequest) -> Result<Schedule> {
        let w = self.workload;
        // The analysis's graph is the partitioner's: grouped as it is, not copied.
        let (graph, _) = a.graph(w);
        self.group(graph, req, || {
            Ok(analysis::descriptor::descriptors(a.descriptors(w)))
        })
    }

    /// The launch's TBs grouped by a policy that reads no graph (LRR's order, for `paver
    /// rewrite --identity`): no analysis runs.
    pub fn schedule_without_graph(&self, req: &GroupRequest) -> Result<Schedule> {
        let num_tbs = u32::try_from(self.workload.bound.num_tbs())
            .map_err(|_| Error::Invalid("more than 2^32 TBs".into()))?;
        self.group(&graph_partition::Graph::empty(num_tbs), req, || {
            Ok(Vec::new())
        })
    }

    fn group(
        &self,
        graph: &graph_partition::Graph,
        req: &GroupRequest,
        descriptors: impl FnOnce() -> Result<Vec<Descriptor>>,
    ) -> Result<Schedule> {
        let bound = &self.workload.bound;
        let dim = |d: launch::Dim3| [d.x as u32, d.y as u32, d.z as u32];
        let launch = graph_partition::Launch {
            kernel: self.workload.kernel().name.clone(),
            grid: dim(bound.grid),
            block: dim(bound.block),
        };
        let policy = groups::policy(req, launch.grid, descriptors)?;
        groups::make_groups(
            graph,
            policy.as_ref(),
            req,
            self.cfg.gpu.core.num_sms,
            self.occupancy.tbs_per_sm,
            &launch,
        )
    }

    /// The launch's Locality Descriptors in the simulator's terms, for the run-time
    /// mechanisms of the Locality Descriptor paper (§4.4-4.6).
    /// The C-Tile -> D-Tile maps come from an analysis at 32 B sectors, the smallest block
    /// an L1 fetches, so that the guided prefetcher can tell a sector a resident TB reads
    /// from its neighbour in the same line that only another TB reads.
    /// Block reuse is walked at the L1's fill unit (a 32 B sector on a sectored L1, else its
    /// line), the block a bypass declines to keep.
    pub fn hints(&self) -> Result<LocalityHints> {
        let w = self.workload;
        let a = w.analysis(self.granularity())?;
        let fine = w.analysis(Granularity::Sector)?;
        let l1 = &self.cfg.gpu.l1;
        let block = if l1.sectored {
            Granularity::Sector
        } else {
            Granularity::Line(u64::from(l1.line_bytes.max(32)))
        };
        let reuse = analysis::descriptor::block_reuse(&a.analysis, &w.bound, block);
        Ok(crate::hints::hints(
            a.descriptors(w),
            fine.descriptors(w),
            &reuse,
            &w.bound,
        ))
    }

    /// The data placement `name` asks for on this (multi-module) GPU, with Algorithm 2's
    /// plan for `ld`; `policy` is the run's TB policy (the partitioning placements replace
    /// it, so it must be LRR).
    pub fn placement(&self, name: &str, policy: TbPolicy) -> Result<Placement> {
        crate::placement::placement(self, name, policy)
    }

    /// The simulator's options for `run` on this GPU: the occupancy and resources found
    /// here, the Locality Descriptor hints when a mechanism reads them, the placement.
    pub fn options(&self, run: &Run) -> Result<SimOptions> {
        let mut opts = SimOptions::new(run.tb_policy);
        opts.policy_name = run.policy_name.clone();
        opts.warp_policy = run.warp_policy;
        opts.steal = run.steal;
        opts.steal_cap = run.steal_cap;
        opts.max_warp_instructions_per_tb = run.max_warp_instructions_per_tb;
        opts.max_warp_instructions = run.max_warp_instructions;
        opts.stop_after_instructions = run.stop_after_instructions;
        opts.threads = run.threads.max(1);
        opts.explain = run.explain;
        opts.sample = run.sample.clone();
        opts.registers = Some(self.resources.registers.clone());
        opts.occupancy = Some(self.occupancy.clone());
        if self.cfg.ld.active() {
            opts.hints = self.hints()?;
        }
        if run.tb_policy.is_grouped() {
            let s = run.schedule.clone().ok_or_else(|| {
                Error::Invalid("the PAVER runtime needs a schedule (groups of TBs)".into())
            })?;
            self.check_schedule(&s)?;
            opts.schedule = Some(s);
        } else if run.schedule.is_some() {
            return Err(Error::Invalid(
                "--schedule is only used by the PAVER policies (rb-ts, kway-ts, mst-ts, paver, ld)"
                    .into(),
            ));
        }
        if let Some(p) = &run.placement {
            opts.placement = Some(self.placement(p, run.tb_policy)?);
        }
        Ok(opts)
    }

    /// A schedule must have been made for this GPU: its groups are sized for the SMs and
    /// TBs per SM it names.
    pub fn check_schedule(&self, s: &Schedule) -> Result<()> {
        let gpu = || self.cfg.gpu.name.clone();
        if s.num_sms != self.cfg.gpu.core.num_sms {
            return Err(Error::ScheduleGpu {
                what: "SMs",
                schedule: s.num_sms,
                simulated: self.cfg.gpu.core.num_sms,
                gpu: gpu(),
            });
        }
        if s.tbs_per_sm != self.occupancy.tbs_per_sm {
            return Err(Error::ScheduleGpu {
                what: "TBs per SM",
                schedule: s.tbs_per_sm,
                simulated: self.occupancy.tbs_per_sm,
                gpu: gpu(),
            });
        }
        Ok(())
    }

    /// Checks that a simulation fits in memory with every TB slot of every SM filled,
    /// against `budget` (the TB's shared memory was checked against the GPU's per-TB limit
    /// when the experiment was made).
    pub fn check_memory(&self, budget: &launch::MemoryBudget) -> Result<()> {
        let w = self.workload;
        let gpu = &self.cfg.gpu;
        let needs = check_shared_per_tb(w, gpu)?;
        let resident = (u64::from(gpu.core.num_sms) * u64::from(gpu.core.max_tbs_per_sm))
            .min(w.bound.num_tbs());
        needs
            .check_simulation(resident, budget)
            .map_err(|e| match e {
                sim::SimError::Launch(launch::LaunchError::Budget { message }) => {
                    Error::TooLarge(message)
                }
                e => Error::Sim(e),
            })
    }

    /// Simulates the launch with `opts` (from [`Experiment::options`]), calling
    /// `progress(tbs_done, tbs_total, cycle)` as TBs finish.
    pub fn simulate(
        &self,
        opts: &SimOptions,
        progress: &mut dyn FnMut(u64, u64, u64),
    ) -> Result<Stats> {
        let w = self.workload;
        Ok(sim::timing::simulate_with_progress(
            &w.module,
            w.kernel(),
            &w.bound,
            &self.cfg,
            opts,
            progress,
        )?)
    }
}

/// A TB's shared memory against `gpu`'s per-TB limit; the launch's memory needs.
fn check_shared_per_tb(w: &Workload, gpu: &GpuConfig) -> Result<sim::MemoryNeeds> {
    let needs = sim::MemoryNeeds::of(&w.module, w.kernel(), &w.bound);
    let max = u64::from(gpu.core.max_shared_mem_per_tb);
    if needs.shared_per_tb > max {
        return Err(Error::Launch(launch::LaunchError::Dims {
            why: format!(
                "a TB of kernel {} needs {} of shared memory ({} dynamic), more than the {} one TB may have on {}",
                w.bound.kernel,
                launch::human_bytes(needs.shared_per_tb),
                launch::human_bytes(w.bound.dynamic_shared_bytes),
                launch::human_bytes(max),
                gpu.name
            ),
        }));
    }
    Ok(needs)
}

/// The ptxas numbers a launch file records, as (architecture, registers, shared bytes).
pub fn recorded(launch: &launch::Launch) -> Vec<(String, u32, u64)> {
    launch
        .resources
        .iter()
        .map(|(arch, r)| (arch.clone(), r.registers, r.shared_bytes))
        .collect()
}
