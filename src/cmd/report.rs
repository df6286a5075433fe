//! `paver report DIR… -o OUT`: merges the records of one or more sweep folders (the shards
//! of a Slurm job array, or resumed sweeps) and writes the tables of the PAVER paper's
//! evaluation: `OUT/runs.jsonl`, `OUT/runs.csv`, `OUT/report.md`, one CSV per table in
//! `OUT/tables/` and the figures (SVG and PNG) in `OUT/figures/`, among them the TB
//! locality heat maps the sweeps saved (Fig. 5).

use std::path::PathBuf;

use sweep::merge::Merged;

use crate::error::CliError;

/// `paver report --help` examples.
pub const EXAMPLES: &str = "Examples:
  paver report sweeps/small -o sweeps/small/report
  paver report sweeps/paper/shard-* -o sweeps/paper/report   # the shards of a Slurm job array";

/// Arguments of `paver report`.
#[derive(clap::Args)]
pub struct Args {
    /// Sweep folders (each with runs.jsonl), or runs.jsonl files.
    #[arg(required = true, value_name = "DIR")]
    inputs: Vec<PathBuf>,
    /// Output folder (created).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    /// Tables only: no SVG/PNG figures.
    #[arg(long)]
    no_figures: bool,
    /// No summary on standard error.
    #[arg(short = 'q', long)]
    quiet: bool,
}

/// Runs `paver report`.
pub fn run(args: Args) -> Result<(), CliError> {
    let warn = |w: &str| eprintln!("warning: {w}");
    let merged = Merged::read(&args.inputs, &warn)?;
    let out = &args.output;
    let written = merged.write(out, args.no_figures)?;
    if !args.quiet {
        eprintln!(
            "{}: {} records, {} tables, {} figures ({})",
            out.display(),
            merged.records.len(),
            written.tables,
            written.figures,
            out.join("report.md").display()
        );
    }
    Ok(())
}
