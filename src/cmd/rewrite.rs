//! `paver rewrite kernel.ptx [launch flags] (--schedule s.json | --policy rb-ts --gpu G)
//! -o kernel.paver.ptx`: the kernel as persistent workers (one per TB context of the GPU)
//! that run a TB schedule on a real GPU, taking their logical TBs from per-SM work lists
//! (the `rewrite` crate; docs/REAL_GPU.md).
//!
//! The schedule is `--schedule` (a `paver partition` / `paver analyze --schedule` file for
//! this kernel and grid), or built here as `paver simulate` builds it (`--policy`, `--gpu`),
//! or, with `--identity`, the plain TB order (one list every worker shares). Its groups are
//! dealt to the lists round robin ([`rewrite::WorkTable::from_groups`]). Workers: the
//! schedule's SMs x TBs per SM ([`rewrite::WorkTable::workers`]), or `--workers`.
//!
//! `--launch-out FILE.json` writes the rewritten launch: the original launch with the
//! workers' grid, the logical grid in three appended parameters and the table appended as
//! the last parameter, a `u32` buffer read from
//! `FILE.worklist.bin` beside it (raw little-endian words), so `paver run`, `paver
//! simulate` and a CuPy or C++ host read the same files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use launch::{BufferSpec, Dim3, ElemType, Init, ParamArg, ParamKey, ParamSpec};
use rewrite::{WorkTable, TABLE_PARAM};

use experiment::{Experiment, GroupRequest, Workload};

use crate::cmd::partition::PartitionOpts;
use crate::error::{write_atomic, write_atomic_with, CliError};
use crate::launch_args::KernelLaunchArgs;

/// Examples shown by `paver rewrite --help`.
pub const EXAMPLES: &str = "Examples:
  paver rewrite kernels/hotspot/hotspot.compute_70.ptx --launch kernels/hotspot/small.json \\
      --policy rb-ts --gpu h100 -o hotspot.paver.ptx --launch-out hotspot.paver.json
  paver run hotspot.paver.ptx --launch hotspot.paver.json -o out/     # same outputs as the original
  paver rewrite k.ptx --launch k.json --schedule schedule.json -o k.paver.ptx
  paver rewrite k.ptx --launch k.json --identity --gpu h100 -o k.id.ptx --launch-out k.id.json";

/// Arguments of `paver rewrite`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelLaunchArgs,
    /// Schedule to run (paver-schedule/1 JSON for this kernel and grid); without it one is
    /// built here with --policy on --gpu.
    #[arg(long, value_name = "FILE.json", conflicts_with = "identity")]
    schedule: Option<PathBuf>,
    /// The plain TB order (one shared list in TB-id order), to measure what the worker loop
    /// itself costs.
    #[arg(long)]
    identity: bool,
    #[command(flatten)]
    opts: PartitionOpts,
    /// The rewritten PTX.
    #[arg(short, long, value_name = "FILE.ptx")]
    output: PathBuf,
    /// Write the rewritten launch (workers' grid, the table as the last parameter) as a
    /// paver launch file, with the table in FILE.worklist.bin beside it.
    #[arg(long, value_name = "FILE.json")]
    launch_out: Option<PathBuf>,
    /// Workers to launch (`--launch-out`'s grid) instead of the schedule's SMs x TBs per
    /// SM: fewer on a grid smaller than one wave, for one, saves the workers that would
    /// only find nothing to take. Any number runs every TB exactly once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    workers: Option<u32>,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
}

/// Runs `paver rewrite`.
pub fn run(args: Args) -> Result<(), CliError> {
    // By-value parameters may stay open (the schedule's analysis says when it needs them);
    // the rewritten launch then leaves them open too.
    let loaded = args.target.load_open()?;
    // The rewrite first: it is cheap, and a kernel it refuses needs no schedule.
    let r = rewrite::persistent(&loaded.module, loaded.kernel_index()).map_err(|error| {
        CliError::Rewrite {
            path: args.target.file.clone(),
            error,
        }
    })?;
    let b = &loaded.bound;
    let dim = |d: u64| {
        u32::try_from(d).map_err(|_| {
            CliError::Usage(format!(
                "grid dimension {d} is beyond the 32 bits of %nctaid"
            ))
        })
    };
    let grid = [dim(b.grid.x)?, dim(b.grid.y)?, dim(b.grid.z)?];
    let (table, workers, origin) = if let Some(path) = &args.schedule {
        let s = graph_partition::Schedule::read(path).map_err(|e| CliError::Partition {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if s.grid != grid || s.kernel != loaded.kernel().name {
            return Err(CliError::Partition {
                path: path.clone(),
                message: format!(
                    "the schedule is for kernel {} on a {}x{}x{} grid; this launch is {} on {}x{}x{}",
                    s.kernel, s.grid[0], s.grid[1], s.grid[2],
                    loaded.kernel().name, grid[0], grid[1], grid[2]
                ),
            });
        }
        let t = WorkTable::from_groups(&s.groups, s.num_sms, s.tbs_per_sm, grid);
        let workers = WorkTable::workers(s.num_sms, s.tbs_per_sm);
        (t, workers, format!("schedule {}", path.display()))
    } else {
        let exp = Experiment::new(&loaded, &args.opts.setup()?)?;
        for note in exp.notes() {
            eprintln!("warning: {note}");
        }
        let gpu = &args.opts.gpu;
        let occ = exp.occupancy().reason();
        let (s, t, why) = if args.identity {
            // Only the TB contexts are needed: no analysis.
            let s = exp.schedule_without_graph(&GroupRequest::new("lrr"))?;
            let why = format!("identity order; {occ} on {gpu}");
            (s, WorkTable::identity(grid), why)
        } else {
            let s = exp.schedule(&args.opts.request())?;
            let why = format!("{} on {gpu}, {occ}", s.policy);
            let t = WorkTable::from_groups(&s.groups, s.num_sms, s.tbs_per_sm, grid);
            (s, t, why)
        };
        (t, WorkTable::workers(s.num_sms, s.tbs_per_sm), why)
    };
    let workers = args.workers.unwrap_or(workers);
    table.check().map_err(|message| CliError::Partition {
        path: args.schedule.clone().unwrap_or_default(),
        message,
    })?;
    write_atomic(&args.output, &r.ptx)?;
    if let Some(out) = &args.launch_out {
        write_launch(&loaded, &table, workers, out)?;
    }
    if !args.quiet {
        eprint!("{}", summary(&r, &table, workers, &origin, &args));
    }
    Ok(())
}

/// The rewritten launch: the original's parameters, the workers' grid, the table.
fn write_launch(
    loaded: &Workload,
    table: &WorkTable,
    workers: u32,
    out: &Path,
) -> Result<(), CliError> {
    let mut l = crate::cmd::launch::normalise(&loaded.launch, &loaded.bound);
    crate::cmd::launch::rebase_files(&mut l, &loaded.bound.base_dir, out)?;
    l.grid = Dim3 {
        x: u64::from(workers.max(1)),
        y: 1,
        z: 1,
    };
    // ptxas numbers of the original do not describe the rewritten kernel.
    l.resources.clear();
    let bin = out.with_extension("worklist.bin");
    let bytes = table.to_le_bytes();
    write_atomic_with(&bin, |w| w.write_all(&bytes))?;
    let name = bin
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| bin.clone());
    let n = loaded.kernel().params.len();
    for (k, (name, d)) in rewrite::GRID_PARAMS.iter().zip(table.grid).enumerate() {
        l.params.push(ParamSpec {
            key: ParamKey::Index(n + k),
            comment: Some(format!(
                "{name}: the logical grid, which %nctaid reads return"
            )),
            arg: ParamArg::Value(launch::Scalar::Int(i128::from(d))),
        });
    }
    l.params.push(ParamSpec {
        key: ParamKey::Index(n + rewrite::GRID_PARAMS.len()),
        comment: Some(format!(
            "{TABLE_PARAM}: paver rewrite's work lists (rewrite::table); a fresh copy per launch"
        )),
        arg: ParamArg::Buffer(BufferSpec {
            ty: ElemType::U32,
            len: Some((bytes.len() / 4) as u64),
            len_of: None,
            init: Init::File(name),
        }),
    });
    Ok(write_atomic(out, &l.to_json())?)
}

fn summary(r: &rewrite::Rewritten, t: &WorkTable, workers: u32, origin: &str, a: &Args) -> String {
    let mut s = String::new();
    let sizes: Vec<usize> = t.lists.iter().map(Vec::len).collect();
    let (lo, hi) = (
        sizes.iter().min().copied().unwrap_or(0),
        sizes.iter().max().copied().unwrap_or(0),
    );
    let _ = writeln!(
        s,
        "{}: {} TBs in {} work lists ({lo}-{hi} TBs each; {origin}); launch {workers} workers",
        r.kernel,
        t.num_tbs(),
        t.lists.len(),
    );
    let _ = writeln!(
        s,
        "  replaced {} %ctaid/%nctaid reads, {} exits; {}",
        r.ctaid_reads,
        r.exits,
        if r.park_loop {
            format!(
                "{} CTA-wide barriers take part in the park loop (barrier.red.and)",
                r.barriers
            )
        } else {
            "no CTA-wide barrier: one barrier.sync ends each iteration".to_string()
        }
    );
    let _ = writeln!(s, "  wrote {}", a.output.display());
    if let Some(l) = &a.launch_out {
        let _ = writeln!(
            s,
            "  wrote {} and {} ({} is the last parameter)",
            l.display(),
            l.with_extension("worklist.bin").display(),
            TABLE_PARAM
        );
    }
    s
}
