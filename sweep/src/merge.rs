//! `paver report DIR… -o OUT`: the records of one or more sweep folders (the shards of a
//! Slurm job array, or resumed sweeps) merged, with the heat maps the sweeps saved, and the
//! report folder written from them: `OUT/runs.jsonl`, `OUT/runs.csv`, `OUT/report.md`, one
//! CSV per table in `OUT/tables/` and the figures in `OUT/figures/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use experiment::output::write_atomic;

use crate::heatmap::{self, Heatmap};
use crate::record::{dedup_sorted, read_jsonl, to_csv, to_jsonl, Record};
use crate::report::{heatmap_images, heatmap_table, markdown, tables};
use crate::{figures, Error};

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

/// The merged records and heat maps of a report's inputs.
pub struct Merged {
    /// Every record once, in plan order.
    pub records: Vec<Record>,
    /// Every heat map once, by label.
    pub maps: Vec<Heatmap>,
}

/// What [`Merged::write`] wrote.
pub struct Written {
    /// Tables (each in `report.md` and as a CSV).
    pub tables: usize,
    /// Figure files (SVG and PNG).
    pub figures: usize,
}

impl Merged {
    /// Reads the inputs (sweep folders, or `runs.jsonl` files); what is dropped or
    /// missing (an unfinished last record, shards of the plan not given, an unreadable
    /// heat map) goes to `warn`.
    pub fn read(inputs: &[PathBuf], warn: &dyn Fn(&str)) -> Result<Merged, Error> {
        let mut all: Vec<Record> = Vec::new();
        let mut manifests = Vec::new();
        let mut dirs = Vec::new();
        for input in inputs {
            let (jsonl, manifest) = if input.is_dir() {
                dirs.push(input.clone());
                (input.join("runs.jsonl"), Some(input.join("sweep.json")))
            } else {
                (input.clone(), None)
            };
            if !jsonl.is_file() {
                return Err(Error::NoRecords {
                    path: input.clone(),
                });
            }
            let (records, warnings) = read_jsonl(&jsonl)?;
            for w in warnings {
                warn(&w);
            }
            all.extend(records);
            if let Some(m) = manifest.filter(|m| m.is_file()) {
                let bad = |message: String| Error::Manifest {
                    path: m.clone(),
                    message,
                };
                let text = std::fs::read_to_string(&m).map_err(|e| bad(e.to_string()))?;
                let v: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
                manifests.push(v);
            }
        }
        if let Some(w) = coverage(&manifests) {
            warn(&w);
        }
        let records = dedup_sorted(all);
        let (maps, warnings) = heatmap::read_all(&dirs);
        for w in warnings {
            warn(&w);
        }
        Ok(Merged { records, maps })
    }

    /// Writes the report into `out` (created), with its figures unless `no_figures`.
    pub fn write(&self, out: &Path, no_figures: bool) -> Result<Written, Error> {
        let (records, maps) = (&self.records, &self.maps);
        let mut ts = tables(records);
        if !maps.is_empty() {
            ts.push(heatmap_table(maps));
        }
        let mut md = markdown(records, &ts);
        if !no_figures && !maps.is_empty() {
            md.push_str(&heatmap_images(maps));
        }
        let tdir = out.join("tables");
        std::fs::create_dir_all(&tdir).map_err(|source| Error::Folder {
            path: tdir.clone(),
            source,
        })?;
        write_atomic(&out.join("runs.jsonl"), &to_jsonl(records))?;
        write_atomic(&out.join("runs.csv"), &to_csv(records))?;
        write_atomic(&out.join("report.md"), &md)?;
        for t in &ts {
            write_atomic(&tdir.join(format!("{}.csv", t.name)), &t.csv())?;
        }
        let figures = if no_figures {
            Vec::new()
        } else {
            let dir = out.join("figures");
            let mut f = figures::write_all(&ts, &dir)?;
            f.extend(figures::write_heatmaps(maps, &dir)?);
            f
        };
        Ok(Written {
            tables: ts.len(),
            figures: figures.len(),
        })
    }
}
