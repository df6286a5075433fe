//! `paver analyze FILE.ptx …`: locality analysis of one kernel for one launch. Writes the
//! `paver-analysis/1` JSON document (loads and why any is unresolved, per-structure
//! footprints, the TB locality graph, PAVER Table 2 statistics, Fig. 2 categories) and prints
//! a one-screen summary.
//!
//! Footprints come from the static analysis, or with `--dynamic` from running the kernel in
//! the interpreter (exact for data-dependent kernels too); everything after the footprints is
//! the same code either way. With `--policy` the TBs are also grouped (`paver partition`) and
//! the schedule written to `--schedule`.
//!
//! Kernels that launch kernels: `dynamic_parallelism` in the JSON lists the device-side launch
//! sites as the static analysis resolves them (`analysis::child_launch`), and with `--dynamic`
//! adds Tang et al.'s Eq. 1-3 over every grid of the run ([`crate::cmd::dp_trace`],
//! `analysis::reuse::dp`); the footprints and the graph stay the host grid's.
//!
//! The graph goes to a graph file with `--graph FILE.npz` (SciPy) or `--graph FILE.graph`
//! (METIS), which the JSON names; the JSON carries the edge list itself only up to
//! [`analysis::report::EDGES_IN_JSON_MAX`] edges or with `--edges-json`. The Locality
//! Descriptors (the fast tests, then z3 when the machine has it or enumeration; one thread)
//! are derived while the graph, the reuse metrics and the graph file are built on the other
//! threads. The JSON's `z3` says whether z3 was needed and whether it loaded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use analysis::footprint::{
    merge_ranges, unit_bytes, Footprints, Granularity, LoadRange, NO_BUFFER, PARAM_SHIFT,
};
use graph_partition::graph_file::{self, FileFormat};
use launch::BoundLaunch;
use ptx_parser::{Function, InstId, Module};
use serde_json::json;

use experiment::{Experiment, GpuSetup, GroupRequest, Workload};

use crate::cmd::partition::{self, LeafArgs};

use crate::error::{write_atomic, write_atomic_with, write_pending, CliError, PendingFile};
use crate::launch_args::KernelLaunchArgs;
use crate::progress::Progress;

/// Examples shown by `paver analyze --help`.
pub const EXAMPLES: &str = "Examples:
  paver analyze kernels/mm_naive/mm_naive.compute_70.ptx --grid 64x64 --block 16x16 --param 3=1024 \\
      --policy rb-ts --gpu volta --schedule schedule.json
  paver analyze kernels/mm_naive/mm_naive.compute_70.ptx --launch kernels/mm_naive/small.json \\
      --grid 256x256 --param 3=4096 -o a.json --graph g.npz     # scipy.sparse.load_npz('g.npz')
  paver analyze kernels/mm_naive/mm_naive.cu --launch kernels/mm_naive/small.json   # CUDA source, NVRTC";

/// Data-unit granularity of footprints and graph weights.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Gran {
    /// Cache lines of `--line-size` bytes.
    Line,
    /// 32-byte sectors.
    Sector,
    /// Elements of each buffer's type.
    Element,
}

/// Arguments of `paver analyze`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelLaunchArgs,
    /// Granularity of data units.
    #[arg(long, value_enum, default_value = "line")]
    granularity: Gran,
    /// Line size in bytes (with `--granularity line`).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..))]
    line_size: u64,
    /// Output file (paver-analysis/1 JSON). It carries the edge list when the graph has at
    /// most 1,000,000 edges (or with `--edges-json`); larger graphs go to `--graph`.
    #[arg(short, long, value_name = "FILE.json")]
    output: Option<PathBuf>,
    /// Write the TB locality graph to this file: `.npz` is a SciPy sparse matrix
    /// (`scipy.sparse.load_npz`: symmetric CSR, weight = shared data units), `.graph` a METIS
    /// graph file (`n m 001`, 1-based). The JSON names it; `paver partition` reads either.
    #[arg(long, value_name = "FILE.npz|FILE.graph")]
    graph: Option<PathBuf>,
    /// Put the edge list in the JSON (`graph.edges`) whatever its size.
    #[arg(long)]
    edges_json: bool,
    /// Print how long each phase took on standard error.
    #[arg(long)]
    timings: bool,
    /// Print nothing on stdout and no progress on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Skip the Locality Descriptors (`locality_descriptors` in the JSON and the summary):
    /// deciding their existence questions with z3 (when the machine has it) or enumeration
    /// takes tens to hundreds of milliseconds per pointer parameter.
    #[arg(long, conflicts_with = "descriptors")]
    no_descriptors: bool,
    /// Derive the Locality Descriptors (the default; kept for scripts written when they
    /// were opt-in).
    #[arg(long, hide = true)]
    descriptors: bool,
    /// Draw the TB adjacency matrix as a PNG (PAVER Fig. 5), at most 1024 pixels a side.
    #[arg(long, value_name = "FILE.png")]
    heatmap: Option<PathBuf>,
    /// Include every TB's footprint in the JSON (`footprints`: per data structure, the classes
    /// of TBs with identical footprints and their units as `[start, end)` intervals).
    #[arg(long)]
    footprints: bool,
    /// Build the footprints from the interpreter's actual accesses instead of the static
    /// analysis (needs real buffers for everything the kernel reads).
    #[arg(long)]
    dynamic: bool,
    /// Add the loads under a data-dependent or floating-point guard (`guard` in the JSON)
    /// to the footprints and graph as a may-footprint: their addresses as if the guard held.
    /// Without it the graph holds only the loads the launch determines exactly.
    #[arg(long)]
    may_loads: bool,
    /// Memory budget of the static analysis in MiB (default: three quarters of the
    /// available memory). Loads whose footprints do not fit are reported unresolved with
    /// reason `budget`; a launch whose graph alone does not fit is refused.
    #[arg(long, value_name = "MiB")]
    max_memory: Option<u64>,
    /// Interpreter instruction budget for `--dynamic` (warp instructions, whole launch;
    /// the same default as `paver run`: a runaway kernel stops with a clear error within a
    /// minute on a 2-core machine).
    #[arg(long, value_name = "N", default_value_t = sim::interp::runner::DEFAULT_LAUNCH_BUDGET)]
    max_instructions: u64,
    /// Also write the TB groups of this analysis (`--policy`, `--gpu`, ...) to this file.
    #[arg(long, value_name = "FILE.json", requires = "policy")]
    schedule: Option<PathBuf>,
    #[command(flatten)]
    partition: AnalyzePartition,
}

/// `--policy` and the other grouping flags; grouping runs only when `--policy` is given.
#[derive(clap::Args, Debug)]
struct AnalyzePartition {
    /// Group the TBs with this policy (see `paver partition`); needs `--schedule`.
    #[arg(long, requires = "schedule")]
    policy: Option<String>,
    /// GPU configuration for the grouping: fermi|gtx480, pascal|titanx_pascal,
    /// volta|titanv, hopper|h100, or a .toml path.
    #[arg(long, default_value = "volta")]
    gpu: String,
    /// TBs resident per SM (x); default: the CUDA occupancy calculator on the GPU's limits
    /// and the kernel's resources.
    #[arg(long, value_name = "N")]
    tbs_per_sm: Option<u32>,
    /// Registers per thread for the occupancy (default: ptxas, else the launch file's ptxas
    /// numbers, else the liveness estimate from the PTX).
    #[arg(long, value_name = "N")]
    registers: Option<u32>,
    /// The ptxas to run for the kernel's registers (default: $PAVER_PTXAS, else `ptxas` on
    /// PATH; without one, the launch file's numbers or the estimate).
    #[arg(long, value_name = "PATH")]
    ptxas: Option<PathBuf>,
    #[command(flatten)]
    leaf: LeafArgs,
}

/// Phase durations for `--timings`.
#[derive(Default)]
struct Timings(Vec<(&'static str, Duration)>);

impl Timings {
    fn add(&mut self, phase: &'static str, d: Duration) {
        self.0.push((phase, d));
    }
    fn since(&mut self, phase: &'static str, t: Instant) {
        self.add(phase, t.elapsed());
    }
    fn render(&self, total: Duration) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(p, d)| format!("{p} {:.3} s", d.as_secs_f64()))
            .collect();
        format!(
            "timings: {}; wall {:.3} s (descriptors beside the rest; the reuse walk beside the graph; the graph file beside the pair ratios and the JSON)",
            parts.join(", "),
            total.as_secs_f64()
        )
    }
}

/// Writes `graph` to `path` in `format`.
/// Writes the graph file, not yet in place. Its writers hand over batches of rows of
/// hundreds of kilobytes: a small buffer lets them go to the file without a copy.
fn write_graph_file(
    path: &Path,
    format: FileFormat,
    graph: &analysis::locality::Graph,
) -> Result<PendingFile, CliError> {
    Ok(write_pending(path, 1 << 16, |w| match format {
        FileFormat::Npz => graph_file::write_npz(w, graph),
        FileFormat::Metis => graph_file::write_metis(w, graph),
    })?)
}

/// The analysis JSON document: what [`analysis::report::document_with`] says, and what the
/// command adds (the demangled name, the graph file, the mode, the kernel's resources,
/// `--footprints`).
#[allow(clippy::too_many_arguments)]
fn analysis_json(
    args: &Args,
    loaded: &Workload,
    gran: Granularity,
    a: &analysis::Analysis,
    (graph, stats): (&analysis::locality::Graph, &analysis::locality::Stats),
    reuse: &analysis::reuse::Reuse,
    descriptors: Option<&[analysis::descriptor::Derived]>,
    graph_file: Option<&(PathBuf, FileFormat)>,
    out: &Path,
    dp: &serde_json::Value,
) -> serde_json::Value {
    let (module, f, bound) = (&loaded.module, loaded.kernel(), &loaded.bound);
    let mut doc = analysis::report::document_with(
        f,
        bound,
        gran,
        a,
        graph,
        stats,
        reuse,
        descriptors.unwrap_or(&[]),
    );
    if descriptors.is_none() {
        if let Some(obj) = doc.as_object_mut() {
            obj.remove("locality_descriptors");
        }
    } else {
        // Whether z3 was needed, and if so whether it loaded and from where (each
        // descriptor's `decided_by` says which engine decided it).
        doc["z3"] = json!(analysis::smt::SolverStatus::now());
    }
    if let Some(d) = crate::names::demangle(&f.name) {
        doc["demangled"] = json!(d);
    }
    if let Some((path, format)) = graph_file {
        doc["graph"]["file"] = json!(graph_file_name(path, out));
        doc["graph"]["file_format"] = json!(format.name());
    }
    let estimate = gpu::estimate::estimate_registers(module, f);
    let static_shared = gpu::resources::declared_shared_bytes(module, f);
    doc["mode"] = json!(if args.dynamic { "dynamic" } else { "static" });
    doc["resources"] = json!(loaded.launch.resources);
    doc["ptx_resources"] = json!({
        "registers": estimate.registers,
        "register_source": "estimate",
        "pressure": estimate.pressure,
        "scheduled_pressure": estimate.scheduled_pressure,
        "static_shared_bytes": static_shared,
        "dynamic_shared_bytes": bound.dynamic_shared_bytes,
        "shared_bytes": static_shared.saturating_add(bound.dynamic_shared_bytes),
    });
    if args.footprints {
        doc["footprints"] = footprints_json(&a.footprints);
    }
    doc["dynamic_parallelism"] = dp.clone();
    doc
}

/// How the JSON at `json` names the graph file at `graph`: relative to the JSON's folder
/// when it lies below it, else absolute.
fn graph_file_name(graph: &Path, json: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // The graph file may not be in place yet (both files are committed together): its
    // folder is canonical, its name is the one given.
    let g = match (graph.parent(), graph.file_name()) {
        (Some(d), Some(name)) if !d.as_os_str().is_empty() => abs(d).join(name),
        (_, Some(name)) => abs(Path::new(".")).join(name),
        _ => abs(graph),
    };
    let dir = match json.parent() {
        Some(d) if !d.as_os_str().is_empty() => abs(d),
        _ => abs(Path::new(".")),
    };
    match g.strip_prefix(&dir) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => g.display().to_string(),
    }
}

/// Runs `paver analyze`.
pub fn run(args: Args) -> Result<(), CliError> {
    let start = Instant::now();
    let mut times = Timings::default();
    let graph_file = match &args.graph {
        Some(p) => Some((
            p.clone(),
            FileFormat::from_path(p).ok_or_else(|| {
                CliError::Usage(format!(
                    "--graph {}: the file name must end in .npz (SciPy) or .graph (METIS)",
                    p.display()
                ))
            })?,
        )),
        None => None,
    };
    let progress = Progress::spinner(args.quiet, "loading");
    let t = Instant::now();
    // The static analysis needs values only for the parameters its addresses, guards and
    // loop bounds depend on (it says which); the interpreter needs every one.
    let options = analysis::Options {
        budget: args
            .max_memory
            .map_or_else(analysis::default_memory_budget, |m| {
                m.saturating_mul(1 << 20)
            }),
        may_loads: args.may_loads,
    };
    let loaded = args.target.load_with(!args.dynamic, options)?;
    times.since("load", t);
    let (module, bound, f) = (&loaded.module, &loaded.bound, loaded.kernel());
    // Child grids launched from the device are not analysed (issue 43): say so rather
    // than report the parent's footprints as the launch's.
    let launch_sites = f
        .insts
        .iter()
        .filter(|i| {
            ptx_parser::device_runtime::runtime_call(module, i)
                == Some(ptx_parser::DeviceRuntimeFn::LaunchDevice)
        })
        .count();
    if launch_sites > 0 && !args.dynamic {
        eprintln!(
            "warning: kernel {} launches kernels from the device ({launch_sites} \
             cudaLaunchDeviceV2 call site(s)); the analysis covers the host-launched grid \
             only: what its child grids read is in no footprint (--dynamic measures their \
             reuse ratios, `dynamic_parallelism` in the JSON)",
            crate::names::display(&f.name)
        );
    }
    let gran = match args.granularity {
        Gran::Line => Granularity::Line(args.line_size),
        Gran::Sector => Granularity::Sector,
        Gran::Element => Granularity::Element,
    };
    progress.phase("footprints");
    let t = Instant::now();
    let mut traces = None;
    let analysed = if args.dynamic {
        // Every grid's accesses are kept only for a kernel that can launch grids: on an
        // ordinary kernel they would double what the run holds, for no Eq. 2.
        let (a, grids) = dynamic_analysis(
            module,
            f,
            bound,
            gran,
            args.max_instructions,
            launch_sites > 0,
        )?;
        traces = grids;
        loaded.adopt_analysis(gran, a)
    } else {
        loaded.analysis(gran)?
    };
    let dp = traces.map(|g| analysis::reuse::dp::compute(&g));
    let sites = if launch_sites > 0 {
        analysis::child_launch::launch_sites(module, f, bound, &analysed.analysis.model)
    } else {
        Vec::new()
    };
    let mut dp_doc = dp_json(&f.name, launch_sites, gran, dp.as_ref());
    dp_doc["launches"] = json!(sites);
    dp_doc["launches_resolved"] = json!(sites.iter().filter(|s| s.resolved).count());
    let a = &analysed.analysis;
    times.since("footprints", t);
    progress.phase(if args.no_descriptors {
        "graph"
    } else {
        "graph and descriptors"
    });
    // The descriptors (z3, one thread) beside everything that needs only the footprints;
    // the reuse walk (one thread per sampled TB: a single one on large TBs) beside the
    // graph.
    let a_ref = a;
    let (descriptors, ((walked, t_walk), ((graph, stats), t_graph))) = rayon::join(
        || {
            let t = Instant::now();
            let d = (!args.no_descriptors).then(|| analysed.descriptors(&loaded));
            (d, t.elapsed())
        },
        || {
            rayon::join(
                || {
                    let t = Instant::now();
                    (analysis::reuse::walk(a_ref, bound, gran), t.elapsed())
                },
                || {
                    let t = Instant::now();
                    (analysed.graph(&loaded), t.elapsed())
                },
            )
        },
    );
    let (descriptors, t_desc) = descriptors;
    times.add("graph", t_graph);
    if !args.no_descriptors {
        times.add("descriptors", t_desc);
    }
    let edges_in_json = args.edges_json || graph.num_edges() <= analysis::report::EDGES_IN_JSON_MAX;
    if args.output.is_some() {
        progress.phase("writing the graph file and the JSON");
    }
    // The graph file beside the reuse pair ratios and the JSON (all three only read the
    // graph); the two files are put in place together once both are written.
    let (file, rest) = rayon::join(
        || -> Result<_, CliError> {
            let Some((path, format)) = &graph_file else {
                return Ok(None);
            };
            let t = Instant::now();
            let pending = write_graph_file(path, *format, graph)?;
            Ok(Some((pending, t.elapsed())))
        },
        || -> Result<_, CliError> {
            let t = Instant::now();
            let reuse = walked.finish(a_ref, graph);
            let t_reuse = t_walk + t.elapsed();
            let Some(out) = &args.output else {
                return Ok((reuse, t_reuse, None));
            };
            let t = Instant::now();
            let doc = analysis_json(
                &args,
                &loaded,
                gran,
                a_ref,
                (graph, stats),
                &reuse,
                descriptors,
                graph_file.as_ref(),
                out,
                &dp_doc,
            );
            let edges = edges_in_json.then_some(graph);
            let pending = write_pending(out, 1 << 20, |w| {
                analysis::report::write_json_with(w, &doc, edges)
            })?;
            Ok((reuse, t_reuse, Some((pending, t.elapsed()))))
        },
    );
    let (reuse, t_reuse, json) = rest?;
    let file = file?;
    if let Some((pending, t)) = file {
        pending.commit()?;
        times.add("graph file", t);
    }
    times.add("reuse", t_reuse);
    if let Some((pending, t)) = json {
        pending.commit()?;
        times.add("JSON", t);
    }
    if let (Some(out), None) = (&args.output, &graph_file) {
        if !edges_in_json {
            eprintln!(
                "note: the graph's {} edges are not in {} (more than {}): write them with \
                 --graph FILE.npz (or FILE.graph), or add --edges-json",
                graph.num_edges(),
                out.display(),
                analysis::report::EDGES_IN_JSON_MAX
            );
        }
    }
    if let Some(png) = &args.heatmap {
        progress.phase("heat map");
        write_atomic_with(png, |w| {
            analysis::heatmap::write_png(w, graph, 1024).map_err(std::io::Error::other)
        })?;
    }
    progress.finish();
    let outside = analysis::report::reads_outside_buffers(a);
    if let Some(&(line, bytes)) = outside.first() {
        eprintln!(
            "warning: {} global load(s) read addresses outside every buffer of the launch \
             (first: PTX line {line}, {bytes} bytes); those addresses are in no footprint. A \
             launch scaled with --param needs its buffers resized too \
             (--param INDEX=buffer:TYPE:LEN:INIT)",
            outside.len()
        );
    }
    let straddling: Vec<u32> = a
        .model
        .loads
        .iter()
        .zip(&a.unresolved)
        .filter(|(_, u)| u.as_deref().map(analysis::expr::reason_kind) == Some("straddle"))
        .map(|(l, _)| l.line)
        .collect();
    if let Some(line) = straddling.first() {
        eprintln!(
            "warning: {} global load(s) read across the end of a buffer (first: PTX line {line}): \
             one access's bytes lie in two data structures, or partly outside every buffer. \
             They are unresolved (reason `straddle`); on a GPU such a read returns whatever \
             lies past the end. Check the buffers' lengths against the kernel's sizes",
            straddling.len()
        );
    }
    if !args.quiet {
        let summary = analysis::report::summary(f, bound, a, stats);
        let shown = crate::names::display(&f.name);
        crate::out::print(&summary.replacen(
            &format!("kernel {}:", f.name),
            &format!("kernel {shown}:"),
            1,
        ))?;
        crate::out::print(&analysis::report::reuse_summary(&reuse))?;
        if let Some(ds) = descriptors {
            crate::out::print(&analysis::report::descriptor_summary(ds))?;
            crate::out::println(&format!(
                "  descriptors' solver: {}",
                analysis::smt::SolverStatus::now()
            ))?;
        }
        if args.dynamic {
            crate::out::println("footprints: dynamic (from the interpreter's accesses)")?;
        }
        crate::out::print(&dp_summary(&f.name, launch_sites, dp.as_ref()))?;
        crate::out::print(&sites_summary(&sites))?;
        if let Some((path, format)) = &graph_file {
            crate::out::println(&format!(
                "graph: {} edges written to {} ({})",
                graph.num_edges(),
                path.display(),
                format.name()
            ))?;
        }
    }
    if let (Some(policy), Some(path)) = (&args.partition.policy, &args.schedule) {
        let progress = Progress::spinner(args.quiet, &format!("grouping TBs ({policy})"));
        let t = Instant::now();
        let p = &args.partition;
        let setup = GpuSetup {
            registers: p.registers,
            tbs_per_sm: p.tbs_per_sm,
            ptxas: p.ptxas.clone(),
            ..GpuSetup::new(crate::cmd::lookup_gpu(&p.gpu)?)
        };
        let exp = Experiment::new(&loaded, &setup)?;
        for note in exp.notes() {
            eprintln!("warning: {note}");
        }
        let mut req = GroupRequest::new(policy);
        p.leaf.apply(&mut req);
        // The graph shown above (this command's granularity), not the GPU's lines.
        let schedule = exp.schedule_with(&analysed, &req)?;
        let occ = exp.occupancy();
        let text = crate::cmd::occupancy::schedule_json(&schedule, Some(occ)).map_err(|e| {
            CliError::Partition {
                path: path.clone(),
                message: e.to_string(),
            }
        })?;
        write_atomic(path, &text)?;
        progress.finish();
        times.since("partition", t);
        if !args.quiet {
            eprintln!("occupancy: {}", occ.reason());
            crate::out::print(&partition::human(&schedule, &occ.reason()))?;
            crate::out::println(&format!(
                "schedule: {} groups written to {}",
                schedule.groups.len(),
                path.display()
            ))?;
        }
    }
    if args.timings {
        eprintln!("{}", times.render(start.elapsed()));
    }
    // `run` is the process's last work: handing the graph's rows back to the allocator a
    // chunk at a time (300 MB on the 65,536-TB GEMM) cost 3 % of the command's time, and
    // the exit returns the memory at once.
    std::mem::forget(analysed);
    std::mem::forget(loaded);
    Ok(())
}

/// Every TB's footprint: per data structure, the classes of TBs with identical footprints
/// (ordered by their first TB) with the units they read as `[start, end)` intervals of unit
/// indices within the structure.
fn footprints_json(fp: &Footprints) -> serde_json::Value {
    let params: Vec<serde_json::Value> = fp
        .params
        .iter()
        .map(|p| {
            let base = u64::from(p.param) << PARAM_SHIFT;
            let mut classes: Vec<&analysis::footprint::Class> = p.classes.iter().collect();
            classes.sort_by_key(|c| c.members.first().copied());
            let classes: Vec<serde_json::Value> = classes
                .iter()
                .map(|c| {
                    let units: Vec<[u64; 2]> =
                        c.units.iter().map(|&(s, e)| [s - base, e - base]).collect();
                    json!({"tbs": c.members, "units": units})
                })
                .collect();
            json!({"param": p.param, "unit_bytes": p.unit_bytes, "classes": classes})
        })
        .collect();
    json!(params)
}

/// The `dynamic_parallelism` object of the JSON: the reuse ratios of the run's grids
/// (`--dynamic`), or why there are none.
fn dp_json(
    kernel: &str,
    launch_sites: usize,
    gran: Granularity,
    dp: Option<&analysis::reuse::dp::DpReuse>,
) -> serde_json::Value {
    let shown = crate::names::display(kernel);
    let Some(dp) = dp else {
        let note = if launch_sites == 0 {
            format!("kernel {shown} launches no kernel from the device (no cudaLaunchDeviceV2 call site)")
        } else {
            format!(
                "kernel {shown} has {launch_sites} cudaLaunchDeviceV2 call site(s); the static \
                 analysis covers the host's grid only: --dynamic measures the reuse ratios of \
                 the child grids"
            )
        };
        return json!({"measured": false, "launch_sites": launch_sites, "note": note});
    };
    let mut v = serde_json::to_value(dp).unwrap_or_default();
    v["measured"] = json!(true);
    v["launch_sites"] = json!(launch_sites);
    v["unit_bytes"] = json!(match gran {
        Granularity::Line(b) => json!(b),
        Granularity::Sector => json!(32),
        Granularity::Element => json!("element"),
    });
    v["access"] =
        json!("one warp instruction (ld, st, atom, red on global memory) touching one data unit");
    if dp.device_launches == 0 {
        v["note"] = json!(if launch_sites == 0 {
            format!("kernel {shown} launches no kernel from the device (no cudaLaunchDeviceV2 call site): only Eq. 1 and 3 apply")
        } else {
            format!(
                "kernel {shown} has {launch_sites} cudaLaunchDeviceV2 call site(s), none of which \
                 ran at this launch: only Eq. 1 and 3 apply"
            )
        });
    }
    v
}

/// The human summary of [`dp_json`].
fn dp_summary(
    kernel: &str,
    launch_sites: usize,
    dp: Option<&analysis::reuse::dp::DpReuse>,
) -> String {
    let Some(dp) = dp else {
        return if launch_sites == 0 {
            String::new()
        } else {
            format!(
                "dynamic parallelism: {} has {launch_sites} device-side launch site(s); \
                 --dynamic measures its child grids' reuse ratios\n",
                crate::names::display(kernel)
            )
        };
    };
    if dp.device_launches == 0 {
        return "dynamic parallelism: no grid launched from the device\n".to_string();
    }
    let r = |s: &analysis::reuse::dp::RatioStats| format!("{:.3} ({})", s.pooled, s.count);
    format!(
        "dynamic parallelism: {} grids ({} launched from the device, depth {})\n  \
         Eq. 1 self reuse (pooled, streams):     kernel {}, TB {}, warp {}\n  \
         Eq. 2 parent-child (pooled, children):  kernel {}, TB {}, warp {}\n  \
         Eq. 3 pairs (pooled, sharing pairs):    sibling kernels {}, intra-kernel TBs {}, \
         sibling TBs {}, warps of a TB {}\n",
        dp.grids,
        dp.device_launches,
        dp.max_depth,
        r(&dp.kernel.self_reuse),
        r(&dp.tb.self_reuse),
        r(&dp.warp.self_reuse),
        r(&dp.kernel.parent_child),
        r(&dp.tb.parent_child),
        r(&dp.warp.parent_child),
        r(&dp.kernel.sibling.sharing),
        r(&dp.tb.intra_kernel.sharing),
        r(&dp.tb.sibling.sharing),
        r(&dp.warp.inter_warp.sharing),
    )
}

/// One line per device-side launch site: the child kernel and its configuration, or what
/// the static analysis could not resolve.
fn sites_summary(sites: &[analysis::child_launch::LaunchSite]) -> String {
    use analysis::child_launch::Value;
    let show = |v: &Value| match v {
        Value::Const { value, .. } => value.to_string(),
        Value::PerTb { distinct, .. } => format!("per-TB ({distinct} values)"),
        Value::PerThread => "per-thread".to_string(),
        Value::Unresolved { .. } => "?".to_string(),
        Value::NeverReached => "never reached".to_string(),
    };
    let mut out = String::new();
    for s in sites {
        let dims = |d: &[Value; 3]| d.iter().map(show).collect::<Vec<_>>().join("x");
        let kernel = s
            .kernel
            .as_deref()
            .map_or_else(|| "?".to_string(), |k| crate::names::display(k).to_string());
        out.push_str(&format!(
            "device launch at line {}: {kernel}<<<{}, {}, {}>>> ({} argument(s)): {}\n",
            s.line,
            dims(&s.grid),
            dims(&s.block),
            show(&s.shared_bytes),
            s.params.len(),
            if s.resolved {
                "resolved"
            } else {
                "not resolved"
            }
        ));
        let named = [("grid", &s.grid), ("block", &s.block)];
        let mut why: Vec<String> = Vec::new();
        for (what, d) in named {
            for (k, v) in d.iter().enumerate() {
                if !v.is_resolved() {
                    why.push(format!("{what}.{}: {}", ["x", "y", "z"][k], reason(v)));
                }
            }
        }
        if !s.shared_bytes.is_resolved() {
            why.push(format!("shared memory: {}", reason(&s.shared_bytes)));
        }
        for p in &s.params {
            if !p.value.is_resolved() {
                why.push(format!(
                    "argument at byte {}: {}",
                    p.offset,
                    reason(&p.value)
                ));
            }
        }
        if s.kernel.is_none() {
            why.push("the kernel's address is not a `mov` of a kernel".to_string());
        } else if !s.all_params_stored {
            why.push("not every parameter of the child is stored".to_string());
        }
        for w in why {
            out.push_str(&format!("  {w}\n"));
        }
    }
    out
}

/// Why a launch value is not resolved.
fn reason(v: &analysis::child_launch::Value) -> String {
    use analysis::child_launch::Value;
    match v {
        Value::Unresolved { reason, line } => format!("{reason} (stored at line {line})"),
        Value::PerThread => "depends on the launching thread".to_string(),
        Value::NeverReached => "its store is never reached for this launch".to_string(),
        _ => "resolved".to_string(),
    }
}

/// The model of the static analysis with footprints taken from an interpreter run: every
/// global load's per-lane bytes, mapped to data units exactly as the static analysis maps
/// addresses (parameter in the top bits, offset / unit size below); and every grid of the
/// run, device-launched ones included, with each warp's accesses, when `trace_grids`
/// ([`crate::cmd::dp_trace`]).
fn dynamic_analysis(
    module: &Module,
    f: &Function,
    bound: &BoundLaunch,
    gran: Granularity,
    max_instructions: u64,
    trace_grids: bool,
) -> Result<
    (
        analysis::Analysis,
        Option<Vec<analysis::reuse::dp::GridTrace>>,
    ),
    CliError,
> {
    let needs = sim::MemoryNeeds::of(module, f, bound);
    needs.check_run(1, &crate::limits::budget()?)?;
    let prog = sim::Program::from_function(module, f);
    let regions = bound.region_ids().last().map_or(0, |m| m + 1) as u32;
    let units: Vec<u64> = (0..regions)
        .map(|p| unit_bytes(gran, bound, p, 1))
        .collect();
    let host = UnitCollector {
        bound,
        units: &units,
        tbs: Vec::new(),
        cur: Vec::new(),
        compact_at: Vec::new(),
        ranges: HashMap::new(),
    };
    let other_unit = match gran {
        Granularity::Line(b) => b,
        Granularity::Sector => 32,
        Granularity::Element => 4,
    };
    let opts = sim::RunOptions {
        threads: 1,
        max_warp_instructions: max_instructions,
    };
    let (mut obs, grids) = if trace_grids {
        let mut with_grids = crate::cmd::dp_trace::WithGrids::new(host, bound, &units, other_unit);
        sim::run(&prog, bound, &opts, &mut with_grids)?;
        let grids = std::mem::take(&mut with_grids.grids);
        (with_grids.host, Some(grids))
    } else {
        let mut host = host;
        sim::run(&prog, bound, &opts, &mut host)?;
        (host, None)
    };
    let num_tbs = bound.num_tbs() as usize;
    let mut per_tb: Vec<Vec<Vec<u64>>> = vec![Vec::new(); num_tbs];
    for (tb, warps) in obs.tbs {
        if let Some(slot) = per_tb.get_mut(tb as usize) {
            *slot = warps;
        }
    }
    let mut footprints =
        Footprints::from_warp_units(&per_tb, |p| units.get(p as usize).copied().unwrap_or(1));
    let model = analysis::addr::analyze_kernel(f, bound);
    // Each load's bytes as the interpreter saw them (none: it never ran), as the static
    // evaluation reports its loads': the descriptors ask which loads read a data structure.
    footprints.load_ranges = model
        .loads
        .iter()
        .map(|l| LoadRange::from_merged(obs.ranges.remove(&l.inst).unwrap_or_default()))
        .collect();
    let unresolved = model
        .loads
        .iter()
        .map(|l| l.unresolved(&model).map(|r| r.to_string()))
        .collect();
    Ok((
        analysis::Analysis {
            model,
            footprints,
            unresolved,
            observed: true,
        },
        grids,
    ))
}

/// Unit ids a warp collects before the first deduplication (8 MiB).
const COMPACT_AT: usize = 1 << 20;

/// Interpreter observer that records, per TB and warp, the data units its global loads read.
struct UnitCollector<'a> {
    bound: &'a BoundLaunch,
    units: &'a [u64],
    /// Finished TBs in id order: per warp, sorted distinct unit ids.
    tbs: Vec<(u64, Vec<Vec<u64>>)>,
    /// The TB being run: per warp, unit ids as they come.
    cur: Vec<Vec<u64>>,
    /// Per warp, the length of `cur` at which it is deduplicated next.
    compact_at: Vec<usize>,
    /// Per load instruction, the bytes it read per data structure ([`merge_ranges`]).
    ranges: HashMap<InstId, Vec<(u32, u64, u64)>>,
}

impl sim::MemObserver for UnitCollector<'_> {
    fn access(&mut self, a: &sim::MemAccess<'_>) {
        if a.kind != sim::AccessKind::Load || a.space != sim::Space::Global {
            return;
        }
        let w = a.warp as usize;
        let ranges = self.ranges.entry(a.inst).or_default();
        if self.cur.len() <= w {
            self.cur.resize(w + 1, Vec::new());
        }
        for lane in 0..32 {
            if a.mask & (1 << lane) == 0 {
                continue;
            }
            let size = u64::from(a.size.max(1));
            let Some((p, off)) = self.bound.buffer_at(a.addrs[lane]) else {
                let at = a.addrs[lane];
                merge_ranges(ranges, (NO_BUFFER, at, at.saturating_add(size)));
                continue;
            };
            merge_ranges(ranges, (p as u32, off, off + size));
            let ub = self.units.get(p).copied().unwrap_or(1);
            let key = (p as u64) << PARAM_SHIFT;
            for u in off / ub..=(off + size - 1) / ub {
                self.cur[w].push(key | u);
            }
        }
        // A warp that loops over the same data (a runaway loop until the budget stops it)
        // would grow its list without bound: past a threshold it is deduplicated, and the
        // threshold doubles with what remains, so memory stays within twice the distinct
        // units and the work amortised (issue 41: 4 GB and an allocation failure before).
        if self.compact_at.len() <= w {
            self.compact_at.resize(w + 1, COMPACT_AT);
        }
        let cur = &mut self.cur[w];
        if cur.len() >= self.compact_at[w] {
            cur.sort_unstable();
            cur.dedup();
            cur.shrink_to(2 * cur.len());
            self.compact_at[w] = COMPACT_AT.max(2 * cur.len());
        }
    }

    fn split(&self, _tb: u64) -> Self {
        UnitCollector {
            bound: self.bound,
            units: self.units,
            tbs: Vec::new(),
            cur: Vec::new(),
            compact_at: Vec::new(),
            ranges: HashMap::new(),
        }
    }

    fn merge(&mut self, tb: u64, mut part: Self) {
        for (inst, rs) in part.ranges {
            let mine = self.ranges.entry(inst).or_default();
            for r in rs {
                merge_ranges(mine, r);
            }
        }
        for w in &mut part.cur {
            w.sort_unstable();
            w.dedup();
        }
        self.tbs.push((tb, part.cur));
    }
}
