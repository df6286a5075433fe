//! `paver analyze FILE.ptx …`: static locality analysis of one kernel for one launch. Writes
//! the `paver-analysis/1` JSON document (loads and why any is unresolved, per-structure
//! footprints, the TB locality graph, PAVER Table 2 statistics, Fig. 2 categories) and prints
//! a one-screen summary.

use std::path::PathBuf;

use analysis::footprint::Granularity;

use crate::cmd::{load_module, param_sigs, select_kernel};
use crate::error::{write_atomic_with, CliError};
use crate::launch_args::LaunchArgs;

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
    /// PTX file.
    file: PathBuf,
    /// Kernel (.entry) name; may be omitted when the file has one entry or the launch names it.
    #[arg(long)]
    kernel: Option<String>,
    #[command(flatten)]
    launch: LaunchArgs,
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
}

/// Runs `paver analyze`.
pub fn run(args: Args) -> Result<(), CliError> {
    let module = load_module(&args.file)?;
    let (launch, base_dir) = args.launch.build(args.kernel.clone())?;
    let f = select_kernel(&module, launch.kernel.as_deref(), &args.file)?;
    let bound = launch.bind(&f.name, &param_sigs(f), &base_dir)?;
    let gran = match args.granularity {
        Gran::Line => Granularity::Line(args.line_size),
        Gran::Sector => Granularity::Sector,
        Gran::Element => Granularity::Element,
    };
    let a = analysis::analyze(f, &bound, gran)?;
    let (graph, stats) = analysis::locality::build(&a.footprints);
    if let Some(out) = &args.output {
        let doc = analysis::report::document(f, &bound, gran, &a, &graph, &stats);
        write_atomic_with(out, |w| analysis::report::write_json(w, &doc, &graph))?;
    }
    if !args.quiet {
        print!("{}", analysis::report::summary(f, &bound, &a, &stats));
    }
    Ok(())
}
