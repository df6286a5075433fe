//! `paver partition GRAPH --policy rb-ts --gpu volta -o schedule.json`: turns a TB locality
//! graph (a `paver analyze` JSON document, with its edges or naming its graph file; a SciPy
//! `.npz` sparse matrix; or a METIS `.graph` file) into ordered TB groups for a
//! locality-aware TB scheduler, written as a `paver-schedule/1` JSON file.
//!
//! TBs per SM (x) come from `gpu::tbs_per_sm`: `--tbs-per-sm`, else the CUDA occupancy
//! calculator on the GPU's limits and the kernel's resources: `--registers` /
//! `--shared-bytes`, else the `ptxas` numbers the analysis document carries from the launch
//! file (the architecture nearest the GPU's), else the liveness estimate the document
//! carries. The reason goes to stderr and into the schedule JSON (`occupancy`).
//!
//! RB-TS's leaf rule is PAVER Algorithm 1's `< x` unless `--rb-leaf le` (`--strict-less` is
//! the older spelling of `--rb-leaf lt`); the schedule records it in `stats.strict_less`.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use gpu::{GpuConfig, KernelResources, Occupancy, RegisterSource, Registers};
use graph_partition::{AnalysisGraph, Descriptor, Graph, Schedule};
use serde_json::Value;

use crate::error::{write_atomic, CliError};
use crate::progress::Progress;

/// Examples shown by `paver partition --help`.
pub const EXAMPLES: &str = "Examples:
  paver partition a.json --policy rb-ts --gpu volta -o schedule.json     # a `paver analyze -o` document
  paver partition g.npz --grid 256x256 --block 16x16 --registers 32 --policy kway-ts -o s.json
  paver partition mesh.graph --tbs-per-sm 8 --policy mst-ts              # any METIS graph";

/// Arguments of `paver partition`.
#[derive(clap::Args)]
pub struct Args {
    /// Locality graph: an analysis JSON document (`paver analyze -o`; with its edges, or
    /// naming the graph file it was written with), a SciPy sparse matrix `.npz`
    /// (`paver analyze --graph`, `scipy.sparse.save_npz`) or a METIS `.graph` file.
    input: PathBuf,
    #[command(flatten)]
    opts: PartitionOpts,
    /// For a .npz or METIS input: grid as X, XxY or XxYxZ (default: N x 1 x 1).
    #[arg(long, value_name = "XxYxZ", value_parser = launch::Dim3::parse)]
    grid: Option<launch::Dim3>,
    /// For a .npz or METIS input: block dimensions (default 1 x 1 x 1).
    #[arg(long, value_name = "XxYxZ", value_parser = launch::Dim3::parse)]
    block: Option<launch::Dim3>,
    /// Output schedule (paver-schedule/1 JSON).
    #[arg(short, long, value_name = "FILE.json")]
    output: Option<PathBuf>,
    /// Print nothing on stdout and no progress on stderr.
    #[arg(short, long)]
    quiet: bool,
}

/// Grouping settings shared by `paver partition` and `paver analyze --policy`.
#[derive(clap::Args, Clone, Debug)]
pub struct PartitionOpts {
    /// Grouping policy: lrr, bcs, mst-ts, kway-ts, rb-ts, distributed, distributed-block,
    /// or ld (Locality Descriptor CTA clustering from the analysis's descriptors).
    #[arg(long, default_value = "rb-ts")]
    pub policy: String,
    /// GPU configuration: fermi|gtx480, pascal|titanx_pascal, volta|titanv, hopper|h100, or a .toml path.
    #[arg(long, default_value = "volta")]
    pub gpu: String,
    /// TBs resident per SM (x); default: the CUDA occupancy calculator on the GPU's limits
    /// and the kernel's resources.
    #[arg(long, value_name = "N")]
    pub tbs_per_sm: Option<u32>,
    /// Registers per thread for the occupancy computation (default: ptxas, else the launch
    /// file's ptxas numbers, else the liveness estimate from the PTX).
    #[arg(long, value_name = "N")]
    pub registers: Option<u32>,
    /// Shared memory per TB in bytes (static + dynamic) for the occupancy computation.
    #[arg(long, value_name = "BYTES")]
    pub shared_bytes: Option<u64>,
    /// The ptxas to run for the kernel's registers (commands with a PTX file set it from
    /// their own `--ptxas`).
    #[arg(skip)]
    pub ptxas: Option<PathBuf>,
    #[command(flatten)]
    pub leaf: LeafArgs,
    /// SMs sharing one NoC port (distributed policies form one TB range per cluster).
    #[arg(long, default_value_t = 1)]
    pub sms_per_cluster: u32,
    /// METIS seed.
    #[arg(long, default_value_t = 1)]
    pub seed: i32,
}

impl PartitionOpts {
    /// The grouping these flags ask for.
    pub fn request(&self) -> experiment::GroupRequest {
        experiment::GroupRequest {
            policy: self.policy.clone(),
            strict_less: self.leaf.rule() == RbLeaf::Lt,
            at_least_lrr: self.leaf.at_least_lrr,
            shrink_groups: self.leaf.shrink_groups,
            edgeless_lrr: self.leaf.edgeless_lrr,
            sms_per_cluster: self.sms_per_cluster.max(1),
            seed: self.seed,
        }
    }

    /// The GPU these flags name, with their resource overrides.
    pub fn setup(&self) -> Result<experiment::GpuSetup, CliError> {
        Ok(experiment::GpuSetup {
            registers: self.registers,
            tbs_per_sm: self.tbs_per_sm,
            shared_bytes: self.shared_bytes,
            ptxas: self.ptxas.clone(),
            ..experiment::GpuSetup::new(crate::cmd::lookup_gpu(&self.gpu)?)
        })
    }
}

pub use experiment::groups::RbLeaf;

/// `--rb-leaf`'s values, with the help of each.
fn rb_leaf_values() -> impl clap::builder::TypedValueParser<Value = RbLeaf> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("lt").help(
            "A part is a leaf when its size is `< x`: PAVER Algorithm 1 (`< maxTB`) and §4.3",
        ),
        PossibleValue::new("le")
            .help("A part is a leaf when its size is `<= x` (the default before issue 12)"),
    ])
    .map(|s| RbLeaf::parse(&s).unwrap_or_default())
}

/// `--rb-leaf lt|le` and its older spelling `--strict-less`, `--at-least-lrr`,
/// `--shrink-groups` and `--edgeless-lrr`: the grouping variants every command that builds TB groups takes (`partition`, `analyze
/// --policy`, `simulate`).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct LeafArgs {
    /// RB-TS leaf rule: `lt`, a part is a leaf when its size is < x (PAVER Algorithm 1 and
    /// §4.3, the default); `le`, when its size is <= x (the default before issue 12).
    /// Recorded in the schedule as `stats.strict_less`.
    #[arg(long, value_name = "lt|le", default_value = "lt", value_parser = rb_leaf_values())]
    pub rb_leaf: RbLeaf,
    /// Same as `--rb-leaf lt` (kept for scripts written when `le` was the default).
    #[arg(long, conflicts_with = "rb_leaf")]
    pub strict_less: bool,
    /// Replace Kway-TS's or RB-TS's groups with LRR's when LRR's order keeps more
    /// co-running weight (a departure from the paper, off by default; the default of both
    /// before issue 39). Recorded in the schedule as `stats.at_least_lrr`, and whether it
    /// took LRR's groups as `stats.lrr_floor_taken`.
    #[arg(long)]
    pub at_least_lrr: bool,
    /// On a grid smaller than one wave, shrink MST-TS's and RB-TS's groups to one SM's
    /// share, ceil(TBs / SMs), so every SM gets work (a departure from the paper, off by
    /// default; the default before issue 39). Recorded in the schedule as
    /// `stats.shrink_groups`.
    #[arg(long, conflicts_with = "fixed_group_size")]
    pub shrink_groups: bool,
    /// Groups of x TBs on every grid, as PAVER publishes them: the default since issue 39
    /// (accepted for scripts written before).
    #[arg(long)]
    pub fixed_group_size: bool,
    /// On a locality graph without a single edge, MST-TS, Kway-TS and RB-TS return LRR's
    /// groups instead of partitioning it (a departure from the paper, off by default;
    /// always so before issue 39). Recorded in the schedule as `stats.edgeless_lrr`.
    #[arg(long)]
    pub edgeless_lrr: bool,
}

impl LeafArgs {
    /// Sets `req`'s leaf rule and LRR floor from these flags.
    pub fn apply(&self, req: &mut experiment::GroupRequest) {
        req.strict_less = self.rule() == RbLeaf::Lt;
        req.at_least_lrr = self.at_least_lrr;
        req.shrink_groups = self.shrink_groups;
        req.edgeless_lrr = self.edgeless_lrr;
    }

    /// The rule asked for.
    pub fn rule(&self) -> RbLeaf {
        if self.strict_less {
            RbLeaf::Lt
        } else {
            self.rb_leaf
        }
    }
}

fn gp_err(path: &Path, e: graph_partition::Error) -> CliError {
    CliError::Partition {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A graph with the launch it belongs to and any resource numbers for the occupancy.
pub struct Input {
    /// The locality graph.
    pub graph: Graph,
    /// Kernel name.
    pub kernel: String,
    /// Grid in TBs.
    pub grid: [u32; 3],
    /// Block in threads.
    pub block: [u32; 3],
    /// `ptxas` numbers recorded by architecture: (`sm_70`, registers, shared bytes).
    pub recorded: Vec<(String, u32, u64)>,
    /// The liveness estimate: (registers, static shared bytes, dynamic shared bytes).
    pub estimate: Option<(u32, u64, u64)>,
    /// The analysis's Locality Descriptors (`locality_descriptors` of a `paver-analysis/1`
    /// document), for `--policy ld`.
    pub descriptors: Option<Value>,
}

/// A graph file (`.npz` or METIS) with its notes printed on stderr; the size a METIS
/// header announces is checked against the memory budget first.
fn read_graph_file(path: &Path) -> Result<Graph, CliError> {
    graph_from_bytes(crate::limits::read_graph_bytes(path)?, path)
}

/// [`read_graph_file`] on contents already read.
fn graph_from_bytes(bytes: Vec<u8>, path: &Path) -> Result<Graph, CliError> {
    if !bytes.starts_with(b"PK") {
        if let Ok(text) = std::str::from_utf8(&bytes) {
            crate::limits::check_metis_header(text, path)?;
        }
    }
    let parsed = graph_partition::graph_file::read_bytes(bytes).map_err(|e| gp_err(path, e))?;
    for note in &parsed.notes {
        eprintln!("note: {}: {note}", path.display());
    }
    Ok(parsed.graph)
}

fn read_input(args: &Args) -> Result<Input, CliError> {
    let path = &args.input;
    let bytes = crate::limits::read_graph_bytes(path)?;
    let dim = |d: Option<launch::Dim3>, dflt: [u32; 3]| -> [u32; 3] {
        d.map_or(dflt, |d| [d.x as u32, d.y as u32, d.z as u32])
    };
    let is_json = bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{');
    if is_json {
        let text = String::from_utf8(bytes)
            .map_err(|e| CliError::Usage(format!("{}: not UTF-8 JSON: {e}", path.display())))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
        crate::limits::check_analysis_graph(&doc, path)?;
        let g = &doc["graph"];
        let AnalysisGraph {
            graph,
            kernel,
            grid,
            block,
        } = if g.get("edges").is_none() && g.get("file").is_some() {
            // The edges are in the graph file the analysis wrote (`--graph`), named relative
            // to the document's folder.
            let name = g["file"].as_str().unwrap_or_default();
            let dir = path.parent().unwrap_or(Path::new(""));
            let file = dir.join(name);
            let graph = read_graph_file(&file)?;
            let want = g["num_tbs"].as_u64();
            if want.is_some_and(|n| n != u64::from(graph.num_tbs())) {
                return Err(CliError::Partition {
                    path: file,
                    message: format!(
                        "has {} TBs but {} says graph.num_tbs = {}",
                        graph.num_tbs(),
                        path.display(),
                        want.unwrap_or(0)
                    ),
                });
            }
            let mut stub = doc.clone();
            stub["graph"] = serde_json::json!({"num_tbs": graph.num_tbs(), "edges": []});
            let mut a =
                Graph::from_analysis_json(&stub.to_string()).map_err(|e| gp_err(path, e))?;
            a.graph = graph;
            a
        } else if g.get("edges").is_none() && g.is_object() {
            return Err(CliError::Usage(format!(
                "{}: the document has no edge list (graph.edges) and names no graph file: \
                 re-run `paver analyze` with --graph FILE.npz or --edges-json",
                path.display()
            )));
        } else {
            Graph::from_analysis_json(&text).map_err(|e| gp_err(path, e))?
        };
        let recorded = doc["resources"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(arch, r)| {
                        Some((
                            arch.clone(),
                            u32::try_from(r["registers"].as_u64()?).ok()?,
                            r["shared_bytes"].as_u64()?,
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let pr = &doc["ptx_resources"];
        let estimate = pr["registers"].as_u64().map(|r| {
            let dynamic = pr["dynamic_shared_bytes"].as_u64().unwrap_or(0);
            let fixed = pr["static_shared_bytes"]
                .as_u64()
                .unwrap_or_else(|| pr["shared_bytes"].as_u64().unwrap_or(0));
            (u32::try_from(r).unwrap_or(u32::MAX), fixed, dynamic)
        });
        let n = graph.num_tbs();
        let descriptors = doc.get("locality_descriptors").cloned();
        Ok(Input {
            kernel: kernel.unwrap_or_else(|| "kernel".into()),
            grid: grid.unwrap_or(dim(args.grid, [n, 1, 1])),
            block: block.unwrap_or(dim(args.block, [1, 1, 1])),
            graph,
            recorded,
            estimate,
            descriptors,
        })
    } else {
        let graph = graph_from_bytes(bytes, path)?;
        let n = graph.num_tbs();
        let kernel = path
            .file_stem()
            .map_or("graph".into(), |s| s.to_string_lossy().into_owned());
        Ok(Input {
            kernel,
            grid: dim(args.grid, [n, 1, 1]),
            block: dim(args.block, [1, 1, 1]),
            graph,
            recorded: Vec::new(),
            estimate: None,
            descriptors: None,
        })
    }
}

/// Works out x (`gpu::tbs_per_sm`) with every limit and the register source.
fn occupancy(
    args: &PartitionOpts,
    input: &Input,
    gpu: &GpuConfig,
    origin: &Path,
) -> Result<Occupancy, CliError> {
    let threads = input.block.iter().product::<u32>();
    let dynamic = input.estimate.map_or(0, |e| e.2);
    let mut k = if let Some((arch, regs, shared)) =
        gpu::resources::recorded_arch(gpu, input.recorded.iter().map(|r| r.0.as_str()))
            .and_then(|a| input.recorded.iter().find(|r| r.0 == a))
    {
        KernelResources {
            threads_per_tb: threads,
            registers: Registers {
                count: *regs,
                source: RegisterSource::LaunchFile { arch: arch.clone() },
            },
            static_shared_bytes: *shared,
            dynamic_shared_bytes: dynamic,
        }
    } else if let Some((regs, fixed, dynamic)) = input.estimate {
        KernelResources {
            threads_per_tb: threads,
            registers: Registers {
                count: regs,
                source: RegisterSource::Estimate,
            },
            static_shared_bytes: fixed,
            dynamic_shared_bytes: dynamic,
        }
    } else if args.registers.is_some() || args.tbs_per_sm.is_some() {
        KernelResources {
            threads_per_tb: threads,
            registers: Registers {
                count: args.registers.unwrap_or(0),
                source: RegisterSource::Flag,
            },
            static_shared_bytes: 0,
            dynamic_shared_bytes: 0,
        }
    } else {
        return Err(CliError::Usage(format!(
            "{}: no register count for the occupancy computation; give --registers N (and --shared-bytes) or --tbs-per-sm N",
            origin.display()
        )));
    };
    if let Some(b) = args.shared_bytes {
        k.static_shared_bytes = b;
        k.dynamic_shared_bytes = 0;
    }
    let o = gpu::Overrides {
        registers: args.registers,
        tbs_per_sm: args.tbs_per_sm,
    };
    gpu::tbs_per_sm(gpu, &k, &o).map_err(|e| match e {
        gpu::Error::InvalidOverride(m) => CliError::Usage(m),
        e => CliError::Partition {
            path: origin.to_path_buf(),
            message: e.to_string(),
        },
    })
}

/// Runs `paver partition`.
pub fn run(args: Args) -> Result<(), CliError> {
    let progress = Progress::spinner(args.quiet, "reading the graph");
    let input = read_input(&args)?;
    progress.phase(&format!(
        "grouping {} TBs ({})",
        input.graph.num_tbs(),
        args.opts.policy
    ));
    let (schedule, occ) = schedule(&args.opts, &input, &args.input)?;
    progress.finish();
    if let Some(out) = &args.output {
        let text = crate::cmd::occupancy::schedule_json(&schedule, Some(&occ))
            .map_err(|e| gp_err(out, e.into()))?;
        write_atomic(out, &text)?;
    }
    if !args.quiet {
        eprintln!("occupancy: {}", occ.reason());
        crate::out::print(&human(&schedule, &occ.reason()))?;
    }
    Ok(())
}

/// Groups the TBs of `input` as `opts` says; also returns how x was computed. `origin`
/// names the input in error messages.
pub fn schedule(
    opts: &PartitionOpts,
    input: &Input,
    origin: &Path,
) -> Result<(Schedule, Occupancy), CliError> {
    let req = opts.request();
    // A partitioning error names the input, as `paver partition` always has.
    let named = |e: experiment::Error| match e {
        experiment::Error::Partition(e) => gp_err(origin, e),
        e => CliError::from(e),
    };
    let policy = experiment::groups::policy(&req, input.grid, || {
        let doc = input.descriptors.as_ref().ok_or_else(|| {
            experiment::Error::Invalid(format!(
                "{}: --policy ld needs the analysis's Locality Descriptors: give a `paver \
                 analyze` document made without --no-descriptors",
                origin.display()
            ))
        })?;
        Ok(Descriptor::from_analysis(doc)?)
    })
    .map_err(named)?;
    let gpu = crate::cmd::lookup_gpu(&opts.gpu)?;
    let occ = occupancy(opts, input, &gpu, origin)?;
    let launch = graph_partition::Launch {
        kernel: input.kernel.clone(),
        grid: input.grid,
        block: input.block,
    };
    let schedule = experiment::groups::make_groups(
        &input.graph,
        policy.as_ref(),
        &req,
        gpu.core.num_sms,
        occ.tbs_per_sm,
        &launch,
    )
    .map_err(named)?;
    Ok((schedule, occ))
}

fn pct(part: u64, total: u64) -> String {
    if total == 0 {
        "-".into()
    } else {
        format!("{:.1} %", 100.0 * part as f64 / total as f64)
    }
}

/// The one-screen summary of a schedule.
pub fn human(s: &Schedule, why: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} TBs -> {} groups with {} on {} SMs x {} TBs/SM ({why})",
        crate::names::display(&s.kernel),
        s.groups.iter().map(Vec::len).sum::<usize>(),
        s.groups.len(),
        s.policy,
        s.num_sms,
        s.tbs_per_sm
    );
    if let Some(st) = &s.stats {
        let q = &st.quality;
        let l = &st.lrr;
        let _ = writeln!(
            out,
            "graph weight {} over {} edges; partitioning {:.1} ms",
            q.total_weight, st.num_edges, st.partition_ms
        );
        let _ = writeln!(
            out,
            "captured inside groups {} ({}), among co-running TBs {} ({}); LRR co-running {} ({})",
            q.intra_group_weight,
            pct(q.intra_group_weight, q.total_weight),
            q.concurrent_weight,
            pct(q.concurrent_weight, q.total_weight),
            l.concurrent_weight,
            pct(l.concurrent_weight, l.total_weight)
        );
    }
    out
}
