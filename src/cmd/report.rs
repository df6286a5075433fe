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
  paver report sweeps/paper/shard-* -o sweeps/paper/report   # the shards of a Slurm job array
  paver report --ledger lrr.json rb-ts.json                  # two `paver simulate --explain` runs";

/// Arguments of `paver report`.
#[derive(clap::Args)]
pub struct Args {
    /// Sweep folders (each with runs.jsonl), or runs.jsonl files.
    #[arg(required_unless_present = "ledger", value_name = "DIR")]
    inputs: Vec<PathBuf>,
    /// Output folder (created); with `--ledger`, the Markdown file (default: standard
    /// output).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT",
        required_unless_present = "ledger"
    )]
    output: Option<PathBuf>,
    /// Set the locality ledgers of two runs of one launch side by side (the stats of
    /// `paver simulate --explain`, e.g. under two TB policies): totals of hits and merges
    /// on own and other TBs' lines, misses and refetches, and the TBs that refetched most.
    #[arg(long, num_args = 2, value_names = ["A.json", "B.json"], conflicts_with = "inputs")]
    ledger: Option<Vec<PathBuf>>,
    /// Tables only: no SVG/PNG figures.
    #[arg(long)]
    no_figures: bool,
    /// No summary on standard error.
    #[arg(short = 'q', long)]
    quiet: bool,
}

/// Runs `paver report`.
pub fn run(args: Args) -> Result<(), CliError> {
    if let Some(files) = &args.ledger {
        return ledgers(files, args.output.as_deref());
    }
    let warn = |w: &str| eprintln!("warning: {w}");
    let merged = Merged::read(&args.inputs, &warn)?;
    let Some(out) = &args.output else {
        return Err(CliError::Usage("paver report: -o OUT is required".into()));
    };
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

/// `paver report --ledger A B [-o OUT.md]`.
fn ledgers(files: &[PathBuf], output: Option<&std::path::Path>) -> Result<(), CliError> {
    let read = |p: &PathBuf| -> Result<sweep::ledger::Explained, CliError> {
        let text = std::fs::read_to_string(p).map_err(|e| CliError::io(p, e))?;
        serde_json::from_str(&text).map_err(|e| CliError::Io {
            path: p.clone(),
            message: format!("not the stats of `paver simulate`: {e}"),
        })
    };
    let (a, b) = (read(&files[0])?, read(&files[1])?);
    let names = [
        files[0].display().to_string(),
        files[1].display().to_string(),
    ];
    let text = sweep::ledger::compare(&a, &b, [&names[0], &names[1]])
        .map_err(|e| CliError::Usage(e.to_string()))?;
    match output {
        Some(p) => crate::error::write_atomic(p, &text)?,
        None => crate::out::print(&text)?,
    }
    Ok(())
}
