//! `paver run FILE.ptx …`: runs a kernel functionally over a launch with the interpreter
//! (`sim`), writes every buffer after the run as NumPy `.npy` plus a `summary.json`, and
//! prints instruction counts and the interpreter's speed.
//!
//! Outputs appear all at once: they are written to a temporary folder beside `--outputs`,
//! which is renamed at the end, so a failed run leaves nothing behind. `--outputs` must name
//! a new or empty folder: nothing already there is ever replaced.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use launch::{BoundLaunch, BoundValue};
use serde::Serialize;

use crate::error::CliError;
use crate::launch_args::KernelLaunchArgs;
use crate::progress::Progress;

/// Examples shown by `paver run --help`.
pub const EXAMPLES: &str = "Examples:
  paver run kernels/mm_naive/mm_naive.compute_70.ptx --launch kernels/mm_naive/small.json -o out/
  paver run kernels/mm_naive/mm_naive.cu --launch kernels/mm_naive/small.json -o out/   # via NVRTC
  python3 -c \"import numpy; print(numpy.load('out/p2_mm_naive_param_2.npy')[:4])\"";

/// Arguments of `paver run`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelLaunchArgs,
    /// Folder to write the buffers after the run (p<i>_<name>.npy) and summary.json into.
    #[arg(short = 'o', long, visible_alias = "output", value_name = "DIR")]
    outputs: Option<PathBuf>,
    /// Budget of warp instructions for the whole launch (stops a runaway kernel within a
    /// minute; raise it for larger launches).
    #[arg(long, value_name = "N", default_value_t = sim::interp::runner::DEFAULT_LAUNCH_BUDGET)]
    max_instructions: u64,
    /// Worker threads across thread blocks (results do not depend on it).
    #[arg(long, value_name = "N", default_value_t = 1)]
    threads: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Print nothing on stdout and no progress on stderr.
    #[arg(short, long)]
    quiet: bool,
}

/// What `summary.json` and `--json` hold.
#[derive(Serialize)]
struct Summary<'a> {
    kernel: &'a str,
    grid: [u64; 3],
    block: [u64; 3],
    memory_model: sim::MemoryModel,
    threads: usize,
    wall_seconds: f64,
    warp_instructions_per_second: f64,
    stats: &'a sim::RunStats,
    outputs: Vec<OutputFile>,
}

#[derive(Serialize)]
struct OutputFile {
    param: usize,
    name: String,
    file: String,
    dtype: &'static str,
    len: u64,
}

/// Runs `paver run`.
pub fn run(args: Args) -> Result<(), CliError> {
    let loaded = args.target.load()?;
    let (module, bound, f) = (&loaded.module, &loaded.bound, loaded.kernel());
    if args.threads == 0 {
        return Err(CliError::Usage("--threads must be at least 1".into()));
    }
    let threads = crate::limits::worker_threads(args.threads);
    if let Some(dir) = &args.outputs {
        check_output_dir(dir)?;
    }
    crate::limits::check_run_memory(&loaded, threads)?;
    let prog = sim::Program::from_function(module, f);
    let opts = sim::RunOptions {
        threads,
        max_warp_instructions: args.max_instructions,
    };
    let start = Instant::now();
    let progress = Progress::bar(args.quiet, bound.num_tbs(), "TBs");
    let mut counter = TbCounter(progress.handle());
    let result = sim::run(&prog, bound, &opts, &mut counter)?;
    progress.finish();
    let wall = start.elapsed().as_secs_f64();
    let outputs = output_files(bound);
    let summary = Summary {
        kernel: &f.name,
        grid: [bound.grid.x, bound.grid.y, bound.grid.z],
        block: [bound.block.x, bound.block.y, bound.block.z],
        memory_model: result.model,
        threads,
        wall_seconds: wall,
        warp_instructions_per_second: result.stats.warp_instructions as f64 / wall.max(1e-9),
        stats: &result.stats,
        outputs,
    };
    let json =
        serde_json::to_string_pretty(&summary).map_err(|e| CliError::Usage(e.to_string()))?;
    if let Some(dir) = &args.outputs {
        write_outputs(dir, bound, &result, &summary, &json)?;
    }
    if !args.quiet {
        if args.json {
            crate::out::println(&json)?;
        } else {
            crate::out::print(&human(&summary))?;
        }
    }
    Ok(())
}

/// Counts finished TBs for the progress bar; sees no memory access, so the interpreter keeps
/// its fast paths.
struct TbCounter(indicatif::ProgressBar);

impl sim::MemObserver for TbCounter {
    fn wants_global(&self) -> bool {
        false
    }
    fn access(&mut self, _: &sim::MemAccess<'_>) {}
    fn split(&self, _: u64) -> Self {
        TbCounter(self.0.clone())
    }
    fn merge(&mut self, _: u64, _: Self) {
        self.0.inc(1);
    }
}

fn output_files(b: &BoundLaunch) -> Vec<OutputFile> {
    b.params
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match &p.value {
            BoundValue::Buffer { elem, len, .. } => Some(OutputFile {
                param: i,
                name: p.name.clone(),
                file: format!("p{i}_{}.npy", sanitize(&p.name)),
                dtype: sim::npy::dtype(*elem),
                len: *len,
            }),
            _ => None,
        })
        .collect()
}

/// A parameter name made safe as a file name.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `--outputs` must be a new or empty folder, so a run never replaces a user's files.
fn check_output_dir(dir: &Path) -> Result<(), CliError> {
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(CliError::io(dir, e)),
        Ok(true) => Ok(()),
        Ok(false) => Err(CliError::Usage(format!(
            "{}: --outputs must be a new or empty folder (it holds files, which paver does not replace)",
            dir.display()
        ))),
    }
}

fn write_outputs(
    dir: &Path,
    b: &BoundLaunch,
    r: &sim::RunResult,
    s: &Summary<'_>,
    json: &str,
) -> Result<(), CliError> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "outputs".into());
    let tmp = parent.join(format!(".{name}.paver-tmp-{}", std::process::id()));
    let write_all = || -> Result<(), CliError> {
        std::fs::create_dir_all(&tmp).map_err(|e| CliError::io(&tmp, e))?;
        for o in &s.outputs {
            let elem = match &b.params[o.param].value {
                BoundValue::Buffer { elem, .. } => *elem,
                _ => continue,
            };
            let data = r.buffer(o.param).unwrap_or(&[]);
            let path = tmp.join(&o.file);
            std::fs::write(&path, sim::npy::encode(elem, o.len, data))
                .map_err(|e| CliError::io(&path, e))?;
        }
        let path = tmp.join("summary.json");
        std::fs::write(&path, format!("{json}\n")).map_err(|e| CliError::io(&path, e))?;
        check_output_dir(dir)?;
        if dir.exists() {
            // Empty (checked above): `remove_dir` refuses anything else.
            std::fs::remove_dir(dir).map_err(|e| CliError::io(dir, e))?;
        }
        std::fs::rename(&tmp, dir).map_err(|e| CliError::io(dir, e))
    };
    let res = write_all();
    if res.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    res
}

fn human(s: &Summary<'_>) -> String {
    let mut out = String::new();
    let st = s.stats;
    let _ = writeln!(
        out,
        "kernel {}: grid {}x{}x{}, block {}x{}x{} ({} TBs, {} warps), {:?} memory model, {} thread(s)",
        crate::names::display(s.kernel), s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2], st.tbs, st.warps, s.memory_model, s.threads
    );
    let _ = writeln!(
        out,
        "executed {} warp instructions, {} thread instructions in {:.3} s ({:.1} M warp-instr/s)",
        st.warp_instructions,
        st.thread_instructions,
        s.wall_seconds,
        s.warp_instructions_per_second / 1e6
    );
    if st.device_launches > 0 {
        let _ = writeln!(
            out,
            "device-side launches: {} child grid(s), nested up to {} deep (counted above)",
            st.device_launches, st.max_depth
        );
    }
    let mut ops: Vec<(&String, &u64)> = st.per_opcode.iter().collect();
    ops.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(out, "per instruction:");
    for (op, n) in ops {
        let _ = writeln!(out, "  {op:<28} {n:>14}");
    }
    for o in &s.outputs {
        let _ = writeln!(
            out,
            "output p{} {:<20} {} x {}",
            o.param, o.name, o.len, o.dtype
        );
    }
    out
}
