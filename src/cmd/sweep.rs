//! `paver sweep PLAN.toml -o DIR`: every combination of a plan's kernels, GPUs and policies
//! through the timing simulator, one record per run in `DIR/runs.jsonl` and `DIR/runs.csv`.
//! Resumable (runs already recorded in DIR are skipped), shardable (`--shard I/N`, and
//! `--emit-slurm N` writes a Slurm job-array script for it). See docs/SWEEP.md.

use std::path::PathBuf;

use sweep::exec::execute;
use sweep::folder::{Output, Pending};
use sweep::plan::{Plan, Shard};
use sweep::record::Record;

use crate::error::CliError;

/// `paver sweep --help` examples.
pub const EXAMPLES: &str = "Examples:
  paver sweep kernels/small.toml -o sweeps/small --jobs 2
  paver report sweeps/small -o sweeps/small/report
  paver sweep kernels/paper.toml -o sweeps/paper --emit-slurm 8   # then: sbatch sweeps/paper/sweep.sbatch";

/// Arguments of `paver sweep`.
#[derive(clap::Args)]
pub struct Args {
    /// The plan (TOML; docs/SWEEP.md).
    plan: PathBuf,
    /// Output folder (created; runs already recorded there are not run again).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: PathBuf,
    /// Worker threads (default: every core).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Run only the runs whose plan index is I modulo N.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    shard: Option<Shard>,
    /// Run again the runs recorded as failed.
    #[arg(long)]
    retry_failed: bool,
    /// List the runs the sweep would make, and run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Write DIR/sweep.sbatch, a Slurm job array of N shards of this plan (each writing
    /// DIR/shard-I), and run nothing.
    #[arg(long, value_name = "N")]
    emit_slurm: Option<usize>,
    /// No progress bar or summary on standard error.
    #[arg(short = 'q', long)]
    quiet: bool,
}

fn usage(m: impl Into<String>) -> CliError {
    CliError::Usage(m.into())
}

/// Runs `paver sweep`.
pub fn run(args: Args) -> Result<(), CliError> {
    let plan = Plan::read(&args.plan).map_err(sweep::Error::from)?;
    let out = Output {
        dir: args.output.clone(),
    };
    if let Some(n) = args.emit_slurm {
        if n == 0 {
            return Err(usage("--emit-slurm 0: at least one shard"));
        }
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("paver"));
        let script = out.write_slurm(&args.plan, n, &exe)?;
        if !args.quiet {
            eprintln!(
                "{}: {} runs in {n} shards; submit with `sbatch {}`",
                script.display(),
                plan.runs.len(),
                script.display()
            );
        }
        return Ok(());
    }
    let shard = args.shard.unwrap_or(Shard { index: 0, count: 1 });
    let warn = |w: &str| eprintln!("warning: {w}");
    let pending = Pending::read(&plan, &out, shard, args.retry_failed, &warn)?;
    let todo = &pending.todo;
    if args.dry_run {
        for r in todo {
            println!("{}", plan.describe(r));
        }
        eprintln!(
            "{} of {} runs to make ({} in shard {}/{}, {} already recorded in {})",
            todo.len(),
            plan.runs.len(),
            pending.in_shard.len(),
            shard.index,
            shard.count,
            pending.recorded(),
            out.dir.display()
        );
        return Ok(());
    }
    out.create()?;
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if jobs == 0 {
        return Err(usage("--jobs 0: at least one worker"));
    }
    if !args.quiet {
        eprintln!(
            "{}: {} runs, {} in shard {}/{}, {} already recorded; running {} on {jobs} workers",
            args.plan.display(),
            plan.runs.len(),
            pending.in_shard.len(),
            shard.index,
            shard.count,
            pending.recorded(),
            todo.len()
        );
    }
    let bar = crate::progress::Progress::bar(args.quiet, todo.len() as u64, "runs");
    let done = std::sync::atomic::AtomicU64::new(0);
    let progress = |r: &Record| {
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        bar.set(
            n,
            todo.len() as u64,
            Some(format!("{} {} {}", r.kernel, r.gpu, r.tb_policy)),
        );
    };
    let new = execute(
        &plan,
        todo,
        jobs,
        &out.jsonl(),
        Some(&out.heatmaps()),
        &progress,
    )?;
    bar.finish();
    let failed: Vec<&Record> = new.iter().filter(|r| !r.ok()).collect();
    let all = pending.finish(&plan, &args.plan, &out, shard, &new)?;
    if !args.quiet {
        eprintln!(
            "{}: {} records ({} new, {} failed now); {}",
            out.dir.display(),
            all,
            new.len(),
            failed.len(),
            out.csv().display()
        );
        for r in failed.iter().take(10) {
            eprintln!(
                "  failed: {} {} {}: {}",
                r.kernel,
                r.gpu,
                r.tb_policy,
                r.error.as_deref().unwrap_or("")
            );
        }
    }
    Ok(())
}
