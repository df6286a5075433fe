//! Running a plan: each launch is analysed once, its TB groups are built once per (GPU,
//! PAVER policy, TBs-per-SM override, RB-TS leaf rule), and every run of the launch is simulated from them.
//! Launches and runs are spread over a pool of worker threads; each finished run is
//! appended to `runs.jsonl` at once (so an interrupted sweep loses at most the runs in
//! flight), and the whole file is rewritten in plan order at the end.
//!
//! A run that fails (a launch that does not bind, a simulator error, even a panic) becomes a
//! record with `status = "error"` and the message; the sweep goes on.

use std::collections::BTreeMap;
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;

use experiment::groups::RbLeaf;
use experiment::{Experiment, GpuSetup, GroupRequest, Variant, Workload};
use graph_partition::Schedule;
use sim::timing::{TbPolicy, WarpPolicy};

use super::heatmap::Heatmap;
use super::plan::{LaunchInput, Plan, RunSpec};
use super::record::{Record, Timing, FORMAT};
use crate::Error;

/// What a schedule is built for: GPU (as the plan spells it), PAVER policy, RB-TS leaf
/// rule, the variants that change groups, and the SMs and TBs per SM of the GPU after the
/// run's overrides.
type ScheduleKey = (String, String, Option<String>, Vec<Variant>, u32, u32);

/// The schedule a PAVER run on `e` needs.
fn schedule_key(r: &RunSpec, e: &Experiment<'_>) -> ScheduleKey {
    (
        r.gpu.clone(),
        r.tb_policy.clone(),
        r.rb_leaf.clone(),
        variants(r).filter(|v| v.changes_groups()).collect(),
        e.gpu().core.num_sms,
        e.occupancy().tbs_per_sm,
    )
}

/// A launch once loaded and analysed: what every run of it shares.
struct Prepared {
    loaded: Workload,
    /// The analysis, or why it failed. Only the PAVER policies need it: LRR and BCS runs
    /// still simulate when it failed (a launch whose graph is beyond the memory budget, say).
    analysed: Result<Analysed, String>,
    analysis_s: f64,
}

/// What the static analysis gives a launch's records.
struct Analysed {
    locality_class: String,
    inter_tb_fraction: f64,
    stats: serde_json::Value,
}

/// PAVER §6.2: a kernel whose data references are at least 50 % to data other TBs also
/// read (Fig. 2's inter-TB and intra-and-inter-TB references, i.e. the analysis's degree of
/// sharing) is high-locality; fewer, low; none, none.
pub fn locality_class(s: &analysis::locality::Stats) -> (String, f64) {
    let frac = s.degree_of_sharing;
    let class = if frac <= 0.0 {
        "none"
    } else if frac >= 0.5 {
        "high"
    } else {
        "low"
    };
    (class.to_string(), frac)
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal error (panic): {msg}")
}

/// Runs `f`, turning a panic into an error message.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_text(p)))
}

/// The granularity of the records' locality statistics and of every GPU's mechanisms
/// (every configuration has 128-byte L2 lines; [`Experiment::granularity`]).
const RECORD_GRANULARITY: analysis::footprint::Granularity =
    analysis::footprint::Granularity::Line(128);

fn prepare(input: &LaunchInput, budget: u64) -> Result<Prepared, String> {
    let start = Instant::now();
    let options = analysis::Options {
        budget,
        may_loads: false,
    };
    let warn = |w: &str| eprintln!("paver: warning: NVRTC for {}:\n{w}", input.ptx.display());
    let loaded = experiment::load::open(
        &input.ptx,
        &input.launch,
        input.kernel.clone(),
        options,
        &warn,
    )
    .map_err(|e| e.to_string())?;
    let analysed = guarded(|| {
        let a = loaded
            .analysis(RECORD_GRANULARITY)
            .map_err(|e| format!("static analysis: {e}"))?;
        let (_, stats) = a.graph(&loaded);
        let (locality_class, inter_tb_fraction) = locality_class(stats);
        Ok(Analysed {
            locality_class,
            inter_tb_fraction,
            stats: serde_json::to_value(stats).unwrap_or_default(),
        })
    });
    Ok(Prepared {
        loaded,
        analysed,
        analysis_s: start.elapsed().as_secs_f64(),
    })
}

/// The run's GPU: the plan's configuration with the run's overrides.
fn experiment_for<'w>(w: &'w Workload, run: &RunSpec) -> Result<Experiment<'w>, String> {
    let gpu = gpu::GpuConfig::lookup(&run.gpu).map_err(|e| e.to_string())?;
    let setup = GpuSetup {
        sets: run.overrides.clone(),
        ..GpuSetup::new(gpu)
    };
    let e = Experiment::new(w, &setup).map_err(|e| e.to_string())?;
    for note in e.notes() {
        eprintln!("warning: {note}");
    }
    Ok(e)
}

/// The run's variants (names checked when the plan was read).
fn variants(r: &RunSpec) -> impl Iterator<Item = Variant> + '_ {
    r.variants.iter().filter_map(|v| Variant::parse(v))
}

fn schedule_for(e: &Experiment<'_>, run: &RunSpec) -> Result<Schedule, String> {
    let mut req = GroupRequest::new(&run.tb_policy);
    req.strict_less = run
        .rb_leaf
        .as_deref()
        .and_then(RbLeaf::parse)
        .unwrap_or_default()
        == RbLeaf::Lt;
    for v in variants(run) {
        v.apply_to_groups(&mut req);
    }
    e.schedule(&req).map_err(|e| match e {
        experiment::Error::Analysis(a) => format!("static analysis: {a}"),
        e => e.to_string(),
    })
}

fn simulate(
    e: &Experiment<'_>,
    run: &RunSpec,
    schedule: Option<Schedule>,
) -> Result<serde_json::Value, String> {
    let budget = launch::MemoryBudget::detect().map_err(|e| e.to_string())?;
    e.check_memory(&budget).map_err(|e| e.to_string())?;
    let policy = TbPolicy::parse(&run.tb_policy)
        .ok_or_else(|| format!("unknown TB policy `{}`", run.tb_policy))?;
    let mut r = experiment::Run::new(policy, &run.tb_policy);
    r.warp_policy = WarpPolicy::parse(&run.warp_policy)
        .ok_or_else(|| format!("unknown warp policy `{}`", run.warp_policy))?;
    r.steal = Some(run.steal);
    for v in variants(run) {
        v.apply_to_run(&mut r);
    }
    r.max_warp_instructions_per_tb = run.max_instructions;
    r.max_warp_instructions = u64::MAX;
    r.sample = run.sample.then(sim::timing::sample::SampleOptions::default);
    r.schedule = schedule;
    let opts = e.options(&r).map_err(|e| e.to_string())?;
    let stats = e
        .simulate(&opts, &mut |_, _, _| {})
        .map_err(|e| e.to_string())?;
    serde_json::to_value(&stats).map_err(|e| e.to_string())
}

fn record(
    run: &RunSpec,
    input: &LaunchInput,
    kernel: String,
    analysed: Option<&Analysed>,
    timing: Timing,
    result: Result<serde_json::Value, String>,
) -> Record {
    let (status, error, stats) = match result {
        Ok(v) => ("ok", None, Some(v)),
        Err(e) => ("error", Some(e), None),
    };
    Record {
        format: FORMAT.into(),
        key: run.key.clone(),
        index: run.index,
        kernel,
        ptx: input.ptx.to_string_lossy().into_owned(),
        launch: input.launch.to_string_lossy().into_owned(),
        ptx_sha256: input.ptx_sha256.clone(),
        launch_sha256: input.launch_sha256.clone(),
        gpu: run.gpu_name.clone(),
        tb_policy: run.tb_policy.clone(),
        warp_policy: run.warp_policy.clone(),
        steal: run.steal,
        overrides: run.overrides.clone(),
        rb_leaf: run.rb_leaf.clone(),
        variants: run.variants.clone(),
        max_instructions: run.max_instructions,
        sample: run.sample,
        locality_class: analysed.map(|a| a.locality_class.clone()),
        inter_tb_fraction: analysed.map(|a| a.inter_tb_fraction),
        analysis: analysed.map(|a| a.stats.clone()),
        paver_version: crate::PAVER_VERSION.into(),
        paver_build: super::plan::build_id().into(),
        status: status.into(),
        error,
        timing,
        stats,
    }
}

/// The kernel name for records of a launch that could not be loaded: the launch file's
/// `kernel`, else the plan's, else the PTX file's stem.
fn fallback_kernel(input: &LaunchInput) -> String {
    launch::Launch::read(&input.launch)
        .ok()
        .and_then(|l| l.kernel)
        .or_else(|| input.kernel.clone())
        .unwrap_or_else(|| {
            input
                .ptx
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

/// Runs every run of one launch, handing each record to `sink` as it is made; saves the
/// launch's heat map into `heatmaps` when given (a failure there is a warning: the records
/// are the sweep's product).
fn run_launch(
    input: &LaunchInput,
    runs: &[&RunSpec],
    budget: u64,
    heatmaps: Option<&Path>,
    sink: &(dyn Fn(Record) + Sync),
) {
    let start = Instant::now();
    let prepared = guarded(|| prepare(input, budget));
    let p = match prepared {
        Ok(p) => p,
        Err(e) => {
            let analysis_s = start.elapsed().as_secs_f64();
            let kernel = fallback_kernel(input);
            for run in runs {
                let timing = Timing {
                    analysis_s,
                    ..Timing::default()
                };
                sink(record(
                    run,
                    input,
                    kernel.clone(),
                    None,
                    timing,
                    Err(e.clone()),
                ));
            }
            return;
        }
    };
    if let (Some(dir), Ok(a)) = (heatmaps, &p.analysed) {
        if let Ok(an) = p.loaded.analysis(RECORD_GRANULARITY) {
            let (graph, _) = an.graph(&p.loaded);
            let map = Heatmap::new(input, &p.loaded.kernel().name, graph, &a.locality_class);
            if let Err(e) = super::heatmap::write(dir, &map) {
                eprintln!("warning: heat map of {}: {e}", map.label());
            }
        }
    }
    // Each run's GPU (configuration and overrides; the kernel's resources and occupancy).
    let experiments: Vec<Result<Experiment<'_>, String>> = runs
        .iter()
        .map(|r| guarded(|| experiment_for(&p.loaded, r)))
        .collect();
    // Groups once per (GPU, policy, leaf rule, SMs, x), in parallel; then every run.
    let mut schedule_keys: Vec<(ScheduleKey, usize)> = runs
        .iter()
        .zip(&experiments)
        .enumerate()
        .filter(|(_, (r, _))| super::plan::is_paver(&r.tb_policy))
        .filter_map(|(i, (r, e))| Some((schedule_key(r, e.as_ref().ok()?), i)))
        .collect();
    schedule_keys.sort();
    schedule_keys.dedup_by(|a, b| a.0 == b.0);
    let schedules: BTreeMap<ScheduleKey, (Result<Schedule, String>, f64)> = schedule_keys
        .par_iter()
        .map(|(k, i)| {
            let t = Instant::now();
            let s = match &experiments[*i] {
                Ok(e) => guarded(|| schedule_for(e, runs[*i])),
                Err(e) => Err(e.clone()),
            };
            (k.clone(), (s, t.elapsed().as_secs_f64()))
        })
        .collect();
    let kernel = p.loaded.kernel().name.clone();
    runs.par_iter().zip(&experiments).for_each(|(run, e)| {
        let e = match e {
            Ok(e) => e,
            Err(err) => {
                let timing = Timing {
                    analysis_s: p.analysis_s,
                    ..Timing::default()
                };
                let a = p.analysed.as_ref().ok();
                sink(record(
                    run,
                    input,
                    kernel.clone(),
                    a,
                    timing,
                    Err(err.clone()),
                ));
                return;
            }
        };
        let (schedule, partition_s) = if super::plan::is_paver(&run.tb_policy) {
            match schedules.get(&schedule_key(run, e)) {
                Some((Ok(s), t)) => (Ok(Some(s.clone())), *t),
                Some((Err(e), t)) => (Err(e.clone()), *t),
                None => (Err("internal error: schedule missing".to_string()), 0.0),
            }
        } else {
            (Ok(None), 0.0)
        };
        // The CPU interval lies inside the wall interval.
        let t = Instant::now();
        let cpu = thread_cpu_seconds();
        let result = schedule.and_then(|s| guarded(|| simulate(e, run, s)));
        let simulate_cpu_s = cpu.zip(thread_cpu_seconds()).map(|(a, b)| b - a);
        let timing = Timing {
            analysis_s: p.analysis_s,
            partition_s,
            simulate_s: t.elapsed().as_secs_f64(),
            simulate_cpu_s,
        };
        sink(record(
            run,
            input,
            kernel.clone(),
            p.analysed.as_ref().ok(),
            timing,
            result,
        ));
    });
}

/// CPU seconds the calling thread has run (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, exact
/// to the nanosecond, where `/proc/thread-self/schedstat` lags by up to a scheduler tick);
/// `None` where the system has no such clock. The simulation runs on the thread that calls
/// it (`SimOptions::threads` is 1), so the difference around it is its CPU time.
#[cfg(unix)]
fn thread_cpu_seconds() -> Option<f64> {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

#[cfg(not(unix))]
fn thread_cpu_seconds() -> Option<f64> {
    None
}

/// Runs `runs` of `plan` on `jobs` worker threads, appending each record to `append` and
/// calling `progress` after each; each analysed launch's heat map goes to `heatmaps`.
/// Returns the new records.
pub fn execute(
    plan: &Plan,
    runs: &[&RunSpec],
    jobs: usize,
    append: &Path,
    heatmaps: Option<&Path>,
    progress: &(dyn Fn(&Record) + Sync),
) -> Result<Vec<Record>, Error> {
    let append_error = |source| Error::Append {
        path: append.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(append)
        .map_err(append_error)?;
    let state = Mutex::new((file, Vec::<Record>::new(), None::<std::io::Error>));
    let sink = |r: Record| {
        let line = serde_json::to_string(&r).unwrap_or_default() + "\n";
        let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
        let (file, done, err) = &mut *guard;
        if err.is_none() {
            if let Err(e) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
                *err = Some(e);
            }
        }
        progress(&r);
        done.push(r);
    };
    let mut by_launch: BTreeMap<usize, Vec<&RunSpec>> = BTreeMap::new();
    for r in runs {
        by_launch.entry(r.launch).or_default().push(r);
    }
    let budget = plan
        .analysis_budget
        .unwrap_or_else(|| analysis::default_memory_budget() / jobs.max(1) as u64);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()?;
    pool.install(|| {
        by_launch
            .par_iter()
            .for_each(|(&li, rs)| run_launch(&plan.launches[li], rs, budget, heatmaps, &sink));
    });
    let (_, done, err) = state.into_inner().unwrap_or_else(|p| p.into_inner());
    match err {
        Some(e) => Err(append_error(e)),
        None => Ok(done),
    }
}
