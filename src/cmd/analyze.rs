//! `paver analyze FILE.ptx …`: locality analysis of one kernel for one launch. Writes the
//! `paver-analysis/1` JSON document (loads and why any is unresolved, per-structure
//! footprints, the TB locality graph, PAVER Table 2 statistics, Fig. 2 categories) and prints
//! a one-screen summary.
//!
//! Footprints come from the static analysis, or with `--dynamic` from running the kernel in
//! the interpreter (exact for data-dependent kernels too); everything after the footprints is
//! the same code either way. With `--policy` the TBs are also grouped (`paver partition`) and
//! the schedule written to `--schedule`.

use std::path::PathBuf;

use analysis::footprint::{unit_bytes, Footprints, Granularity, PARAM_SHIFT};
use launch::BoundLaunch;
use ptx_parser::{Function, Module};
use serde_json::json;

use crate::cmd::partition::{self, PartitionOpts};

use crate::error::{write_atomic, write_atomic_with, CliError};
use crate::launch_args::{KernelLaunchArgs, Loaded};

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
    /// Output file (paver-analysis/1 JSON).
    #[arg(short, long, value_name = "FILE.json")]
    output: Option<PathBuf>,
    /// Print nothing on stdout.
    #[arg(long)]
    quiet: bool,
    /// Skip the Locality Descriptors (`locality_descriptors` in the JSON and the summary):
    /// deciding their existence questions with z3 takes tens to hundreds of milliseconds per
    /// pointer parameter.
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
    /// Interpreter instruction budget for `--dynamic` (warp instructions).
    #[arg(long, default_value_t = 10_000_000_000)]
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
    /// GPU configuration for the grouping.
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
    /// RB-TS leaf rule `< x` (PAVER Algorithm 1 as printed).
    #[arg(long)]
    strict_less: bool,
    /// Keep groups of x TBs on grids smaller than one wave (see `paver partition`).
    #[arg(long)]
    fixed_group_size: bool,
}

/// Runs `paver analyze`.
pub fn run(args: Args) -> Result<(), CliError> {
    let loaded = args.target.load()?;
    let (module, launch, bound, f) = (
        &loaded.module,
        &loaded.launch,
        &loaded.bound,
        loaded.kernel(),
    );
    let gran = match args.granularity {
        Gran::Line => Granularity::Line(args.line_size),
        Gran::Sector => Granularity::Sector,
        Gran::Element => Granularity::Element,
    };
    let a = if args.dynamic {
        dynamic_analysis(module, f, bound, gran, args.max_instructions)?
    } else {
        analysis::analyze(f, bound, gran)?
    };
    let (graph, stats) = analysis::locality::build(&a.footprints);
    let estimate = gpu::estimate::estimate_registers(module, f);
    let static_shared = gpu::resources::declared_shared_bytes(module, f);
    let reuse = analysis::reuse::compute(&a, bound, gran, &graph);
    let descriptors = (!args.no_descriptors).then(|| analysis::descriptor::compute(f, &a, bound));
    if let Some(out) = &args.output {
        let mut doc = analysis::report::document_with(
            f,
            bound,
            gran,
            &a,
            &graph,
            &stats,
            &reuse,
            descriptors.as_deref().unwrap_or(&[]),
        );
        if descriptors.is_none() {
            if let Some(obj) = doc.as_object_mut() {
                obj.remove("locality_descriptors");
            }
        }
        doc["mode"] = json!(if args.dynamic { "dynamic" } else { "static" });
        doc["resources"] = json!(launch.resources);
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
        write_atomic_with(out, |w| analysis::report::write_json(w, &doc, &graph))?;
    }
    if let Some(png) = &args.heatmap {
        write_atomic_with(png, |w| {
            analysis::heatmap::write_png(w, &graph, 1024).map_err(std::io::Error::other)
        })?;
    }
    if !args.quiet {
        crate::out::print(&analysis::report::summary(f, bound, &a, &stats))?;
        crate::out::print(&analysis::report::reuse_summary(&reuse))?;
        if let Some(ds) = &descriptors {
            crate::out::print(&analysis::report::descriptor_summary(ds))?;
        }
        if args.dynamic {
            crate::out::println("footprints: dynamic (from the interpreter's accesses)")?;
        }
    }
    if let (Some(policy), Some(path)) = (&args.partition.policy, &args.schedule) {
        let opts = PartitionOpts {
            policy: policy.clone(),
            gpu: args.partition.gpu.clone(),
            tbs_per_sm: args.partition.tbs_per_sm,
            registers: args.partition.registers,
            shared_bytes: None,
            ptxas: args.partition.ptxas.clone(),
            strict_less: args.partition.strict_less,
            fixed_group_size: args.partition.fixed_group_size,
            sms_per_cluster: 1,
            seed: 1,
        };
        let lds = descriptors
            .as_ref()
            .map(|d| serde_json::to_value(d).unwrap_or_default());
        let (schedule, occ) = group_tbs(&loaded, &graph, lds, &opts, &args.target.file)?;
        let text = crate::cmd::occupancy::schedule_json(&schedule, Some(&occ)).map_err(|e| {
            CliError::Partition {
                path: path.clone(),
                message: e.to_string(),
            }
        })?;
        write_atomic(path, &text)?;
        if !args.quiet {
            eprintln!("occupancy: {}", occ.reason());
            crate::out::print(&partition::human(&schedule, &occ.reason()))?;
        }
    }
    Ok(())
}

/// Groups the TBs of a locality graph for `loaded`'s kernel and launch (`paver partition`
/// on the graph in memory), with the kernel's resources from ptxas, the launch file or the
/// liveness estimate for the occupancy, and the analysis's Locality Descriptors (as JSON)
/// for `--policy ld`; also says how x was computed.
pub(crate) fn group_tbs(
    loaded: &Loaded,
    graph: &analysis::locality::Graph,
    descriptors: Option<serde_json::Value>,
    opts: &PartitionOpts,
    origin: &std::path::Path,
) -> Result<(graph_partition::Schedule, gpu::Occupancy), CliError> {
    let gpu_cfg = crate::cmd::lookup_gpu(&opts.gpu)?;
    let resolved = crate::cmd::occupancy::launch_resources(
        &gpu_cfg,
        loaded,
        origin,
        opts.registers,
        opts.ptxas.as_ref(),
    );
    let bound = &loaded.bound;
    let edges: Vec<(u32, u32, u64)> = graph.edges().collect();
    let graph =
        graph_partition::Graph::from_edges(bound.num_tbs() as u32, &edges).map_err(|e| {
            CliError::Partition {
                path: origin.to_path_buf(),
                message: e.to_string(),
            }
        })?;
    drop(edges);
    let dim = |d: launch::Dim3| [d.x as u32, d.y as u32, d.z as u32];
    let input = partition::Input {
        graph,
        kernel: loaded.kernel().name.clone(),
        grid: dim(bound.grid),
        block: dim(bound.block),
        recorded: crate::cmd::occupancy::recorded(&loaded.launch),
        estimate: None,
        resolved: Some(resolved),
        descriptors,
    };
    partition::schedule(opts, &input, origin)
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

/// The model of the static analysis with footprints taken from an interpreter run: every
/// global load's per-lane bytes, mapped to data units exactly as the static analysis maps
/// addresses (parameter in the top bits, offset / unit size below).
fn dynamic_analysis(
    module: &Module,
    f: &Function,
    bound: &BoundLaunch,
    gran: Granularity,
    max_instructions: u64,
) -> Result<analysis::Analysis, CliError> {
    let needs = sim::MemoryNeeds::of(module, f, bound);
    needs.check_run(1, &crate::limits::budget()?)?;
    let prog = sim::Program::from_function(module, f);
    let units: Vec<u64> = (0..bound.params.len() as u32)
        .map(|p| unit_bytes(gran, bound, p, 1))
        .collect();
    let mut obs = UnitCollector {
        bound,
        units: &units,
        tbs: Vec::new(),
        cur: Vec::new(),
    };
    let opts = sim::RunOptions {
        threads: 1,
        max_warp_instructions: max_instructions,
    };
    sim::run(&prog, bound, &opts, &mut obs)?;
    let num_tbs = bound.num_tbs() as usize;
    let mut per_tb: Vec<Vec<Vec<u64>>> = vec![Vec::new(); num_tbs];
    for (tb, warps) in obs.tbs {
        if let Some(slot) = per_tb.get_mut(tb as usize) {
            *slot = warps;
        }
    }
    let footprints =
        Footprints::from_warp_units(&per_tb, |p| units.get(p as usize).copied().unwrap_or(1));
    let model = analysis::addr::analyze_kernel(f, bound);
    let unresolved = model
        .loads
        .iter()
        .map(|l| l.unresolved(&model).map(|r| r.to_string()))
        .collect();
    Ok(analysis::Analysis {
        model,
        footprints,
        unresolved,
    })
}

/// Interpreter observer that records, per TB and warp, the data units its global loads read.
struct UnitCollector<'a> {
    bound: &'a BoundLaunch,
    units: &'a [u64],
    /// Finished TBs in id order: per warp, sorted distinct unit ids.
    tbs: Vec<(u64, Vec<Vec<u64>>)>,
    /// The TB being run: per warp, unit ids as they come.
    cur: Vec<Vec<u64>>,
}

impl sim::MemObserver for UnitCollector<'_> {
    fn access(&mut self, a: &sim::MemAccess<'_>) {
        if a.kind != sim::AccessKind::Load || a.space != sim::Space::Global {
            return;
        }
        let w = a.warp as usize;
        if self.cur.len() <= w {
            self.cur.resize(w + 1, Vec::new());
        }
        for lane in 0..32 {
            if a.mask & (1 << lane) == 0 {
                continue;
            }
            let Some((p, off)) = self.bound.buffer_at(a.addrs[lane]) else {
                continue;
            };
            let ub = self.units.get(p).copied().unwrap_or(1);
            let key = (p as u64) << PARAM_SHIFT;
            for u in off / ub..=(off + u64::from(a.size.max(1)) - 1) / ub {
                self.cur[w].push(key | u);
            }
        }
    }

    fn split(&self, _tb: u64) -> Self {
        UnitCollector {
            bound: self.bound,
            units: self.units,
            tbs: Vec::new(),
            cur: Vec::new(),
        }
    }

    fn merge(&mut self, tb: u64, mut part: Self) {
        for w in &mut part.cur {
            w.sort_unstable();
            w.dedup();
        }
        self.tbs.push((tb, part.cur));
    }
}
