//! `paver simulate FILE.ptx …`: runs a kernel launch through the cycle-level timing model
//! (`sim::timing`) on a GPU configuration with a TB scheduling policy and writes the
//! statistics as JSON.
//!
//! PAVER policies (`rb-ts`, `kway-ts`, `mst-ts`, `paver`) and `ld` take their TB groups
//! from `--schedule` (the `paver partition` output); without one, the static analysis and
//! the partition run here first (`paver` meaning RB-TS; `ld` also derives the Locality
//! Descriptors), on the same GPU configuration. The schedule must be for this kernel, grid
//! and block. Task stealing follows the schedule's policy (on for kway-ts and rb-ts) unless
//! `--steal` or `--no-steal` says otherwise. On a terminal, runs longer than a second
//! show a progress bar (TBs done) on standard error.

use std::path::PathBuf;
use std::time::Instant;

use experiment::{Experiment, GpuSetup, GroupRequest, Run};
use graph_partition::Schedule;
use sim::timing::ld_cache::CachePolicy;
use sim::timing::named::Named;
use sim::timing::numa::PlacementKind;
use sim::timing::prefetch::PrefetchPolicy;
use sim::timing::{TbPolicy, WarpPolicy};

use crate::cmd::partition::{self, LeafArgs};
use crate::error::CliError;
use crate::launch_args::KernelLaunchArgs;
use crate::progress::Progress;

/// Examples shown by `paver simulate --help`.
pub const EXAMPLES: &str = "Examples:
  paver simulate kernels/mm_naive/mm_naive.compute_70.ptx --launch kernels/mm_naive/small.json \\
      --gpu volta --tb-policy rb-ts -o stats.json          # analyses and groups the TBs first
  paver simulate kernels/mm_naive/mm_naive.compute_70.ptx --launch kernels/mm_naive/small.json \\
      --tb-policy rb-ts --schedule schedule.json --set l1.latency_cycles=30
  paver simulate kernels/syrk/syrk.compute_70.ptx --launch kernels/syrk/small.json \\
      --cache-policy ld --prefetch ld       # Locality Descriptor caching and prefetch (stats key `ld`)
  paver simulate kernels/stencil2d/stencil2d.compute_70.ptx --launch kernels/stencil2d/small.json \\
      --gpu mcm4 --placement ld                            # NUMA: Algorithm 2's placement
  paver simulate kernels/syrk/syrk.cu --launch kernels/syrk/small.json --gpu volta   # CUDA source, NVRTC";

/// Arguments of `paver simulate`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelLaunchArgs,
    /// GPU: gtx480|titanx_pascal|titanv|h100|icc|mcm4 (aliases fermi, pascal, volta, hopper;
    /// icc: the clustered GPU of the ICC paper; mcm4: the 4-module NUMA GPU of the Locality
    /// Descriptor paper) or a .toml.
    #[arg(long, default_value = "volta")]
    gpu: String,
    /// TB scheduling policy (the grouped ones build their groups here, or take
    /// --schedule's).
    #[arg(long, alias = "policy", default_value = "lrr", long_help = TbPolicy::help())]
    tb_policy: String,
    /// Schedule JSON (paver-schedule/1) for the PAVER runtime.
    #[arg(long, value_name = "FILE.json")]
    schedule: Option<PathBuf>,
    /// Warp scheduling policy.
    #[arg(long, default_value = "gto", long_help = WarpPolicy::help())]
    warp_policy: String,
    /// Task stealing in the PAVER runtime (PAVER §5.2) even where the schedule's policy
    /// runs without it (default: on for kway-ts and rb-ts schedules, off otherwise).
    #[arg(long, conflicts_with = "no_steal")]
    steal: bool,
    /// No task stealing in the PAVER runtime, even for kway-ts and rb-ts schedules.
    #[arg(long)]
    no_steal: bool,
    /// Cap each steal at the recipient's free contexts, and never move a stolen TB again
    /// (a departure from PAVER Algorithm 2, off by default; the runtime's stealing before
    /// issue 39). Recorded in the stats as `steal_cap`.
    #[arg(long)]
    steal_cap: bool,
    /// RB-TS leaf rule and the LRR floor for the groups built here (without `--schedule`);
    /// see `paver partition`.
    #[command(flatten)]
    leaf: LeafArgs,
    /// Threads the run may use (results do not depend on it): the launch's buffers are
    /// materialised beside the model's set-up, and the SMs step in parallel each cycle
    /// (serially with `--warp-policy ipaws`, with a note).
    #[arg(long, value_name = "N", default_value_t = 1)]
    threads: usize,
    /// Registers per thread for the occupancy limit (default: ptxas, else the launch file's
    /// ptxas numbers, else the liveness estimate from the PTX).
    #[arg(long, value_name = "N")]
    registers: Option<u32>,
    /// TBs resident per SM (x), overriding the occupancy calculator (same as
    /// `--set tbs_per_sm=N`).
    #[arg(long, value_name = "N")]
    tbs_per_sm: Option<u32>,
    /// The ptxas to run for the kernel's registers (default: $PAVER_PTXAS, else `ptxas` on
    /// PATH; without one, the launch file's numbers or the estimate).
    #[arg(long, value_name = "PATH")]
    ptxas: Option<PathBuf>,
    /// Intra-cluster coalescing: the merge table (48 entries per cluster) keeps a read miss
    /// already in flight from the cluster from being sent again (same as `--set
    /// icc.merge_table=true`; stats key `icc`).
    #[arg(long)]
    icc: bool,
    /// The coalesced cache beside the merge table (24 lines per cluster; same as `--set
    /// icc.coalesced_cache=true`).
    #[arg(long, requires = "icc")]
    coalesced_cache: bool,
    /// L1 replacement (same as `--set ld.cache_policy=...`).
    #[arg(long, value_name = "plain|ld", default_value = "plain", long_help = CachePolicy::help())]
    cache_policy: String,
    /// L1 prefetcher on read misses (same as `--set ld.prefetch=...`).
    #[arg(long, value_name = "none|next-line|ld", default_value = "none", long_help = PrefetchPolicy::help())]
    prefetch: String,
    /// Data placement on a multi-module GPU (`--gpu mcm4`; refused on a GPU with one
    /// module; stats key `numa`).
    #[arg(long, value_name = "KIND", long_help = PlacementKind::help())]
    placement: Option<String>,
    /// Override a configuration field: KEY=VALUE (`l1.latency_cycles=30`,
    /// `pipeline.sfu=16`, `mem.noc_latency=4`, `tbs_per_sm=3`); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Budget of warp instructions for the whole launch (stops a runaway kernel within
    /// about a minute; raise it for launches larger than that).
    #[arg(long = "max-instructions", value_name = "N", default_value_t = sim::timing::DEFAULT_LAUNCH_BUDGET)]
    max_instructions: u64,
    /// End the run once about N warp instructions have issued and report the statistics of
    /// that prefix (key `truncated`: true), instead of running every TB; for benchmarks and
    /// quick looks at large launches (checked every 1,024 engine steps and when TBs finish,
    /// so a run goes a little past N, the same on every run).
    #[arg(long = "stop-after", value_name = "N")]
    stop_after: Option<u64>,
    /// Budget of warp instructions per TB (before issue 41 this was what
    /// `--max-instructions` meant).
    #[arg(
        long = "max-instructions-per-tb",
        value_name = "N",
        default_value_t = 100_000_000
    )]
    max_instructions_per_tb: u64,
    /// Add the locality ledger to the statistics (key `ledger`): per TB, its SM, start and
    /// end, the TBs resident beside it when it started, and its L1 reads split into hits and
    /// MSHR merges on its own lines and on other TBs' lines (naming them), and misses (the
    /// L2 reads it caused); with totals. `paver report --ledger A.json B.json` sets two
    /// runs. ledgers side by side. See docs/EXPLAIN.md.
    #[arg(long)]
    explain: bool,
    #[command(flatten)]
    sample: SampleArgs,
    /// Write the statistics here (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE.json")]
    output: Option<PathBuf>,
    /// No summary and no progress on standard error.
    #[arg(short, long)]
    quiet: bool,
}

/// Sampled simulation (docs/SAMPLING.md).
#[derive(clap::Args)]
pub struct SampleArgs {
    /// Sampled simulation: simulate in detail until cycles, L1 and L2 accesses and DRAM
    /// bytes per warp instruction (measured since the L2 has filled) have stayed within
    /// 0.5 % over six waves, then dispatch no more TBs, let the resident ones finish, and extrapolate
    /// cycles and counters to the TBs not run. The stats gain `sampling` (detailed and
    /// skipped TBs, the windows' rates, an error bound). For launches whose TBs do not
    /// communicate and whose first waves are like the rest; see docs/SAMPLING.md.
    #[arg(long)]
    sample: bool,
    /// How far the rates may move over the last windows (relative).
    #[arg(long, value_name = "F", default_value_t = 0.005, requires = "sample")]
    sample_tolerance: f64,
    /// Windows over which the rates must stay within the tolerance.
    #[arg(long, value_name = "N", default_value_t = 6, requires = "sample")]
    sample_windows: u32,
    /// TB completions per window (default: one wave, SMs x resident TBs per SM).
    #[arg(long, value_name = "N", requires = "sample")]
    sample_window_tbs: Option<u64>,
}

impl SampleArgs {
    /// The sampling options asked for (`None` without `--sample`).
    pub fn options(&self) -> Result<Option<sim::timing::sample::SampleOptions>, CliError> {
        if !self.sample {
            return Ok(None);
        }
        if !(self.sample_tolerance > 0.0 && self.sample_tolerance < 1.0) {
            return Err(CliError::Usage(format!(
                "--sample-tolerance {}: expected a fraction between 0 and 1 (0.005 = 0.5 %)",
                self.sample_tolerance
            )));
        }
        if self.sample_windows == 0 || self.sample_window_tbs == Some(0) {
            return Err(CliError::Usage(
                "--sample-windows and --sample-window-tbs must be at least 1".into(),
            ));
        }
        Ok(Some(sim::timing::sample::SampleOptions {
            window_tbs: self.sample_window_tbs,
            windows: self.sample_windows,
            tolerance: self.sample_tolerance,
        }))
    }
}

impl Args {
    /// How the groups are built here (without `--schedule`).
    fn group_request(&self) -> GroupRequest {
        let mut req = GroupRequest::new(&self.tb_policy);
        self.leaf.apply(&mut req);
        req
    }
}

/// The `--set` keys of `--cache-policy P` and `--prefetch Q` (none at their defaults).
fn ld_flag_sets(cache_policy: &str, prefetch: &str) -> Result<Vec<String>, CliError> {
    let mut out = Vec::new();
    match CachePolicy::parse(cache_policy) {
        Some(CachePolicy::Plain) => {}
        Some(p) => out.push(format!("ld.cache_policy={}", p.name())),
        None => {
            return Err(CliError::Usage(format!(
                "--cache-policy {cache_policy}: expected one of {}",
                CachePolicy::names().join(", ")
            )))
        }
    }
    match PrefetchPolicy::parse(prefetch) {
        Some(PrefetchPolicy::None) => {}
        Some(q) => out.push(format!("ld.prefetch={}", q.name())),
        None => {
            return Err(CliError::Usage(format!(
                "--prefetch {prefetch}: expected one of {}",
                PrefetchPolicy::names().join(", ")
            )))
        }
    }
    Ok(out)
}

/// Runs `paver simulate`.
pub fn run(args: Args) -> Result<(), CliError> {
    let loaded = args.target.load()?;
    let gpu = crate::cmd::lookup_gpu(&args.gpu)?;
    // `--icc` / `--coalesced-cache` are their keys set first (a later `--set` wins).
    let flags = [
        (args.icc, "icc.merge_table=true"),
        (args.coalesced_cache, "icc.coalesced_cache=true"),
    ];
    // `--cache-policy` / `--prefetch` likewise (only when not the default, so that a run
    // without them validates and echoes exactly what it did before).
    let ld_flags = ld_flag_sets(&args.cache_policy, &args.prefetch)?;
    let sets: Vec<String> = flags
        .iter()
        .filter(|f| f.0)
        .map(|f| f.1.to_string())
        .chain(ld_flags)
        .chain(args.set.iter().cloned())
        .collect();
    let setup = GpuSetup {
        gpu,
        registers: args.registers,
        tbs_per_sm: args.tbs_per_sm,
        shared_bytes: None,
        sets,
        ptxas: args.ptxas.clone(),
    };
    let exp = Experiment::new(&loaded, &setup)?;
    for note in exp.notes() {
        eprintln!("warning: {note}");
    }
    exp.check_memory(&crate::limits::budget()?)?;
    let policy = TbPolicy::parse(&args.tb_policy).ok_or_else(|| {
        CliError::Usage(format!(
            "--tb-policy {}: expected one of {}",
            args.tb_policy,
            TbPolicy::names().join(", ")
        ))
    })?;
    let warp = WarpPolicy::parse(&args.warp_policy).ok_or_else(|| {
        CliError::Usage(format!(
            "--warp-policy {}: expected one of {}",
            args.warp_policy,
            WarpPolicy::names().join(", ")
        ))
    })?;
    if args.threads == 0 {
        return Err(CliError::Usage("--threads must be at least 1".into()));
    }
    let mut run = Run::new(policy, &args.tb_policy);
    run.threads = crate::limits::worker_threads(args.threads);
    if let (_, Some(why)) = sim::timing::par::cycle_threads(run.threads, warp) {
        crate::out::eprintln(&format!("paver: note: --threads {}: {why}", run.threads));
    }
    run.explain = args.explain;
    run.sample = args.sample.options()?;
    run.warp_policy = warp;
    run.steal_cap = args.steal_cap;
    run.steal = match (args.steal, args.no_steal) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    run.max_warp_instructions_per_tb = args.max_instructions_per_tb;
    run.max_warp_instructions = args.max_instructions;
    run.stop_after_instructions = args.stop_after.unwrap_or(u64::MAX);
    run.placement = args.placement.clone();
    run.schedule = match &args.schedule {
        Some(path) => Some(Schedule::read(path).map_err(|e| CliError::Partition {
            path: path.clone(),
            message: e.to_string(),
        })?),
        None if policy.is_grouped() => {
            // Analysed and grouped here, on the GPU simulated (what `paver analyze … --policy
            // P --gpu G --schedule S` would write with the same overrides).
            let s = exp.schedule(&args.group_request())?;
            if !args.quiet {
                let why = exp.occupancy().reason();
                eprintln!("{}", partition::human(&s, &why).trim_end());
            }
            Some(s)
        }
        None => None,
    };
    let opts = exp.options(&run)?;
    let start = Instant::now();
    let progress = Progress::bar(args.quiet, loaded.bound.num_tbs(), "TBs");
    let mut bar = |done: u64, total: u64, cycle: u64| {
        progress.set(done, total, Some(format!("cycle {cycle}")));
    };
    let stats = exp.simulate(&opts, &mut bar)?;
    progress.finish();
    let wall = start.elapsed().as_secs_f64();
    let json = stats.to_json();
    match &args.output {
        Some(p) => crate::error::write_atomic(p, &json)?,
        None => crate::out::print(&json)?,
    }
    if !args.quiet {
        // Instructions the host simulated (with `--sample`, `warp_instructions` adds the
        // skipped TBs' extrapolated share).
        let simulated: u64 = stats.sms.iter().map(|s| s.warp_instructions).sum();
        eprintln!("occupancy: {}", stats.occupancy.reason());
        eprintln!(
            "{}: {} TBs, {} cycles, IPC {:.2}, {} warp instructions, L1 hits {}/{}, L2 hits {}/{}, DRAM reads {}, {} stolen; {:.2} s ({:.0} simulated warp instructions/s)",
            crate::names::display(&stats.kernel),
            stats.tbs,
            stats.cycles,
            stats.ipc,
            stats.warp_instructions,
            stats.l1.hits,
            stats.l1.accesses,
            stats.l2.hits,
            stats.l2.accesses,
            stats.dram.reads,
            stats.stolen_tbs,
            wall,
            simulated as f64 / wall.max(1e-9)
        );
        if let Some(s) = &stats.sampling {
            eprintln!(
                "sampled: {} of {} TBs in detail ({:.1} %), {} skipped, {} windows of {} TBs measured{}; cycles {} simulated, error bound {:.2} %",
                s.detailed_tbs,
                stats.tbs,
                100.0 * s.sampled_fraction,
                s.skipped_tbs,
                s.measured_windows,
                s.window_tbs,
                match (s.converged, s.warm_after_tbs) {
                    (true, _) => "",
                    (false, 0) => " (the L2 never filled, so the warm-up never ended: ran in full)",
                    (false, _) => " (rates never converged: ran in full)",
                },
                s.simulated_cycles,
                100.0 * s.error_bound
            );
        }
        if let Some(d) = &stats.device_launches {
            eprintln!(
                "device-side launches: {} child grid(s), {} TBs, nested up to {} deep (counted above); host TBs done at cycle {}",
                d.child_grids, d.child_tbs, d.max_depth, d.host_tbs_done
            );
            if let Some(p) = &d.placement {
                let [pc, sib, own] = p.monitor_hit_rates;
                eprintln!(
                    "child placement: {} grid(s) on the parent's SM, {} global; {} child TBs ran on their parent's SM, {} stolen; monitor hit rates parent-child {:.2}, sibling {:.2}, self {:.2}",
                    p.grids_on_parent_sm, p.grids_global, p.tbs_on_parent_sm, p.tbs_stolen, pc, sib, own
                );
            }
        }
        if let Some(ld) = &stats.ld {
            eprintln!(
                "ld: {} bypassed, {} pinned ({} way-0 evictions, {} unpin resets), {} soft-pinned; prefetches {} issued, {} dropped, {} useful, {} late",
                ld.bypassed,
                ld.pinned_insertions,
                ld.pinned_evictions,
                ld.unpin_resets,
                ld.soft_pinned_insertions,
                ld.prefetches_issued,
                ld.prefetches_dropped,
                ld.prefetches_useful,
                ld.prefetches_late
            );
        }
    }
    Ok(())
}
