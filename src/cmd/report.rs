//! `paver report DIR… -o OUT`: merges the records of one or more sweep folders (the shards
//! of a Slurm job array, or resumed sweeps) and writes the tables of the PAVER paper's
//! evaluation: `OUT/runs.jsonl`, `OUT/runs.csv`, `OUT/report.md`, one CSV per table in
//! `OUT/tables/` and the figures (SVG and PNG) in `OUT/figures/`, among them the TB
//! locality heat maps the sweeps saved (Fig. 5).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{write_atomic, CliError};
use crate::sweep::record::{dedup_sorted, read_jsonl, to_csv, to_jsonl, Record};
use crate::sweep::report::{heatmap_images, heatmap_table, markdown, tables};
use crate::sweep::{figures, heatmap};

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

/// The shards' manifests (`sweep.json`) agree on one plan and cover all its shards, or a
/// warning saying what is missing.
fn coverage(manifests: &[serde_json::Value]) -> Option<String> {
    let mut plans: BTreeMap<String, (usize, Vec<usize>)> = BTreeMap::new();
    for m in manifests {
        let sha = m["plan_sha256"].as_str().unwrap_or("").to_string();
        let shard = m["shard"].as_str().unwrap_or("0/1");
        let (i, n) = shard.split_once('/').unwrap_or(("0", "1"));
        let (i, n) = (i.parse().unwrap_or(0), n.parse().unwrap_or(1));
        let e = plans.entry(sha).or_insert((n, Vec::new()));
        e.1.push(i);
    }
    if plans.len() > 1 {
        return Some(format!(
            "the inputs come from {} different plans; their records are merged as they are",
            plans.len()
        ));
    }
    let (_, (n, mut have)) = plans.into_iter().next()?;
    have.sort_unstable();
    have.dedup();
    let missing: Vec<String> = (0..n)
        .filter(|i| have.binary_search(i).is_err())
        .map(|i| format!("{i}/{n}"))
        .collect();
    (!missing.is_empty()).then(|| format!("shards missing: {}", missing.join(", ")))
}

/// Runs `paver report`.
pub fn run(args: Args) -> Result<(), CliError> {
    let mut all: Vec<Record> = Vec::new();
    let mut manifests = Vec::new();
    let mut dirs = Vec::new();
    for input in &args.inputs {
        let (jsonl, manifest) = if input.is_dir() {
            dirs.push(input.clone());
            (input.join("runs.jsonl"), Some(input.join("sweep.json")))
        } else {
            (input.clone(), None)
        };
        if !jsonl.is_file() {
            return Err(CliError::Usage(format!(
                "{}: no runs.jsonl (give a `paver sweep` output folder or a runs.jsonl file)",
                input.display()
            )));
        }
        let (records, warnings) = read_jsonl(&jsonl).map_err(CliError::Usage)?;
        for w in warnings {
            eprintln!("warning: {w}");
        }
        all.extend(records);
        if let Some(m) = manifest.filter(|m| m.is_file()) {
            let text = std::fs::read_to_string(&m).map_err(|e| CliError::io(&m, e))?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| CliError::Io {
                path: m.clone(),
                message: e.to_string(),
            })?;
            manifests.push(v);
        }
    }
    if let Some(w) = coverage(&manifests) {
        eprintln!("warning: {w}");
    }
    let records = dedup_sorted(all);
    let (maps, warnings) = heatmap::read_all(&dirs);
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let mut ts = tables(&records);
    if !maps.is_empty() {
        ts.push(heatmap_table(&maps));
    }
    let mut md = markdown(&records, &ts);
    if !args.no_figures && !maps.is_empty() {
        md.push_str(&heatmap_images(&maps));
    }
    let out = &args.output;
    let tdir = out.join("tables");
    std::fs::create_dir_all(&tdir).map_err(|e| CliError::io(&tdir, e))?;
    write_atomic(&out.join("runs.jsonl"), &to_jsonl(&records))?;
    write_atomic(&out.join("runs.csv"), &to_csv(&records))?;
    write_atomic(&out.join("report.md"), &md)?;
    for t in &ts {
        write_atomic(&tdir.join(format!("{}.csv", t.name)), &t.csv())?;
    }
    let figures = if args.no_figures {
        Vec::new()
    } else {
        let dir = out.join("figures");
        let mut f = figures::write_all(&ts, &dir).map_err(CliError::Usage)?;
        f.extend(figures::write_heatmaps(&maps, &dir).map_err(CliError::Usage)?);
        f
    };
    if !args.quiet {
        eprintln!(
            "{}: {} records, {} tables, {} figures ({})",
            out.display(),
            records.len(),
            ts.len(),
            figures.len(),
            out.join("report.md").display()
        );
    }
    Ok(())
}
