//! `paver sweep PLAN.toml -o DIR`: every combination of a plan's kernels, GPUs and policies
//! through the timing simulator, one record per run in `DIR/runs.jsonl` and `DIR/runs.csv`.
//! Resumable (runs already recorded in DIR are skipped), shardable (`--shard I/N`, and
//! `--emit-slurm N` writes a Slurm job-array script for it). See docs/SWEEP.md.

use std::path::{Path, PathBuf};

use crate::error::{write_atomic, CliError};
use crate::sweep::exec::{execute, Output};
use crate::sweep::plan::{Plan, RunSpec, Shard};
use crate::sweep::record::{dedup_sorted, read_jsonl, to_csv, to_jsonl, Record};

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

/// The sbatch script of a job array over `n` shards of `plan`.
fn slurm_script(plan: &Path, dir: &Path, n: usize, exe: &Path) -> String {
    let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    format!(
        "#!/bin/bash\n\
         # paver sweep as a Slurm job array: task I runs shard I/{n} of the plan into\n\
         # {dir}/shard-I. Submit with `sbatch {script}`; when every task has ended, merge with\n\
         # `paver report {dir}/shard-* -o {dir}/report`.\n\
         #SBATCH --job-name=paver-sweep\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --output={dir}/slurm-%A_%a.out\n\
         set -euo pipefail\n\
         exec {exe} sweep {plan} -o {dirq}/shard-\"$SLURM_ARRAY_TASK_ID\" \\\n    \
         --shard \"$SLURM_ARRAY_TASK_ID\"/{n} --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\" --quiet\n",
        last = n - 1,
        dir = dir.display(),
        dirq = q(dir),
        script = dir.join("sweep.sbatch").display(),
        exe = q(exe),
        plan = q(plan),
    )
}

fn describe(plan: &Plan, r: &RunSpec) -> String {
    let l = &plan.launches[r.launch];
    let steal = if crate::sweep::plan::is_paver(&r.tb_policy) {
        if r.steal {
            " +steal"
        } else {
            " -steal"
        }
    } else {
        ""
    };
    let sets = if r.overrides.is_empty() {
        String::new()
    } else {
        format!(" [{}]", r.overrides.join(" "))
    };
    format!(
        "{:>5}  {} {}  {}  {}{steal} {}{sets}",
        r.index,
        l.ptx.display(),
        l.launch.display(),
        r.gpu_name,
        r.tb_policy,
        r.warp_policy
    )
}

/// Runs `paver sweep`.
pub fn run(args: Args) -> Result<(), CliError> {
    let plan = Plan::read(&args.plan).map_err(|e| usage(e.to_string()))?;
    let out = Output {
        dir: args.output.clone(),
    };
    if let Some(n) = args.emit_slurm {
        if n == 0 {
            return Err(usage("--emit-slurm 0: at least one shard"));
        }
        std::fs::create_dir_all(&out.dir).map_err(|e| CliError::io(&out.dir, e))?;
        let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("paver"));
        let script = out.dir.join("sweep.sbatch");
        write_atomic(
            &script,
            &slurm_script(&abs(&args.plan), &abs(&out.dir), n, &exe),
        )?;
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
    let existing: Vec<Record> = if out.jsonl().is_file() {
        let (records, warnings) = read_jsonl(&out.jsonl()).map_err(usage)?;
        for w in warnings {
            eprintln!("warning: {w}");
        }
        records
    } else {
        Vec::new()
    };
    let recorded: std::collections::BTreeMap<&str, bool> =
        existing.iter().map(|r| (r.key.as_str(), r.ok())).collect();
    let in_shard: Vec<&RunSpec> = plan.runs.iter().filter(|r| shard.owns(r.index)).collect();
    let todo: Vec<&RunSpec> = in_shard
        .iter()
        .copied()
        .filter(|r| match recorded.get(r.key.as_str()) {
            None => true,
            Some(ok) => !ok && args.retry_failed,
        })
        .collect();
    if args.dry_run {
        for r in &todo {
            println!("{}", describe(&plan, r));
        }
        eprintln!(
            "{} of {} runs to make ({} in shard {}/{}, {} already recorded in {})",
            todo.len(),
            plan.runs.len(),
            in_shard.len(),
            shard.index,
            shard.count,
            in_shard.len() - todo.len(),
            out.dir.display()
        );
        return Ok(());
    }
    std::fs::create_dir_all(&out.dir).map_err(|e| CliError::io(&out.dir, e))?;
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
            in_shard.len(),
            shard.index,
            shard.count,
            in_shard.len() - todo.len(),
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
        &todo,
        jobs,
        &out.jsonl(),
        Some(&out.heatmaps()),
        &progress,
    )
    .map_err(usage)?;
    bar.finish();
    let failed: Vec<&Record> = new.iter().filter(|r| !r.ok()).collect();
    // Plan order: records of this plan take their index in it; others keep theirs.
    let index_of: std::collections::BTreeMap<&str, usize> = plan
        .runs
        .iter()
        .map(|r| (r.key.as_str(), r.index))
        .collect();
    let all: Vec<Record> = existing
        .into_iter()
        .chain(new.iter().cloned())
        .map(|mut r| {
            if let Some(&i) = index_of.get(r.key.as_str()) {
                r.index = i;
            }
            r
        })
        .collect();
    let all = dedup_sorted(all);
    write_atomic(&out.jsonl(), &to_jsonl(&all))?;
    write_atomic(&out.csv(), &to_csv(&all))?;
    let manifest = serde_json::json!({
        "format": "paver-sweep/1",
        "plan": args.plan.to_string_lossy(),
        "plan_sha256": crate::sweep::plan::file_sha256(&args.plan).unwrap_or_default(),
        "shard": format!("{}/{}", shard.index, shard.count),
        "runs_in_plan": plan.runs.len(),
        "runs_in_shard": in_shard.len(),
        "paver_version": env!("CARGO_PKG_VERSION"),
        "paver_build": crate::sweep::plan::build_id(),
    });
    write_atomic(
        &out.manifest(),
        &(serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n"),
    )?;
    if !args.quiet {
        eprintln!(
            "{}: {} records ({} new, {} failed now); {}",
            out.dir.display(),
            all.len(),
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
