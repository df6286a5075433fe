//! A sweep folder (`paver sweep PLAN.toml -o DIR`): the runs already recorded there and
//! those left to make (resumable: a recorded run is not made again; shardable: `--shard
//! I/N`), the Slurm job array of a sharded sweep, and the folder written back once the runs
//! are made: every record in plan order, `runs.csv`, and the manifest `sweep.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use experiment::output::write_atomic;

use crate::plan::{Plan, RunSpec, Shard};
use crate::record::{dedup_sorted, read_jsonl, to_csv, to_jsonl, Record};
use crate::Error;

/// Where a sweep writes: `DIR/runs.jsonl` (appended as runs finish, rewritten in order at the
/// end), `DIR/runs.csv`, `DIR/sweep.json` (the plan, shard and counts) and `DIR/heatmaps/`.
pub struct Output {
    /// The sweep folder.
    pub dir: PathBuf,
}

impl Output {
    /// `DIR/runs.jsonl`.
    pub fn jsonl(&self) -> PathBuf {
        self.dir.join("runs.jsonl")
    }
    /// `DIR/runs.csv`.
    pub fn csv(&self) -> PathBuf {
        self.dir.join("runs.csv")
    }
    /// `DIR/sweep.json`.
    pub fn manifest(&self) -> PathBuf {
        self.dir.join("sweep.json")
    }
    /// `DIR/heatmaps`: one [`crate::heatmap::Heatmap`] per analysed launch.
    pub fn heatmaps(&self) -> PathBuf {
        super::heatmap::dir_of(&self.dir)
    }
    /// `DIR/sweep.sbatch`: the Slurm job array of [`Output::write_slurm`].
    pub fn slurm(&self) -> PathBuf {
        self.dir.join("sweep.sbatch")
    }

    /// Makes the folder.
    pub fn create(&self) -> Result<(), Error> {
        std::fs::create_dir_all(&self.dir).map_err(|source| Error::Folder {
            path: self.dir.clone(),
            source,
        })
    }

    /// Writes `DIR/sweep.sbatch`, a Slurm job array of `n` shards of the plan at `plan`,
    /// each running `exe` into `DIR/shard-I`; returns the script's path.
    pub fn write_slurm(&self, plan: &Path, n: usize, exe: &Path) -> Result<PathBuf, Error> {
        self.create()?;
        let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let script = self.slurm();
        write_atomic(&script, &slurm_script(&abs(plan), &abs(&self.dir), n, exe))?;
        Ok(script)
    }
}

/// The sbatch script of a job array over `n` shards of `plan`.
fn slurm_script(plan: &Path, dir: &Path, n: usize, exe: &Path) -> String {
    let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    format!(
        "#!/bin/bash\n\
         # paver sweep as a Slurm job array: task I runs shard I/{n} of the plan into\n\
         # {dir}/shard-I. Submit with `sbatch {script}`; when every task has ended, merge with\n\
         # `paver report {dir}/shard-* -o {dir}/report`.\n\
         #SBATCH --job-name=paver-sweep\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --output={dir}/slurm-%A_%a.out\n\
         set -euo pipefail\n\
         exec {exe} sweep {plan} -o {dirq}/shard-\"$SLURM_ARRAY_TASK_ID\" \\\n    \
         --shard \"$SLURM_ARRAY_TASK_ID\"/{n} --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\" --quiet\n",
        last = n - 1,
        dir = dir.display(),
        dirq = q(dir),
        script = dir.join("sweep.sbatch").display(),
        exe = q(exe),
        plan = q(plan),
    )
}

/// What a sweep folder holds of a plan's shard, and what is left to run.
pub struct Pending<'p> {
    /// The records already in the folder (any plan's).
    pub existing: Vec<Record>,
    /// The shard's runs.
    pub in_shard: Vec<&'p RunSpec>,
    /// The shard's runs not recorded yet, or recorded as failed when they are retried.
    pub todo: Vec<&'p RunSpec>,
}

impl<'p> Pending<'p> {
    /// Reads the folder's records (their warnings go to `warn`) and finds what is left of
    /// `shard` of `plan`.
    pub fn read(
        plan: &'p Plan,
        out: &Output,
        shard: Shard,
        retry_failed: bool,
        warn: &dyn Fn(&str),
    ) -> Result<Pending<'p>, Error> {
        let existing: Vec<Record> = if out.jsonl().is_file() {
            let (records, warnings) = read_jsonl(&out.jsonl())?;
            for w in warnings {
                warn(&w);
            }
            records
        } else {
            Vec::new()
        };
        let recorded: BTreeMap<&str, bool> =
            existing.iter().map(|r| (r.key.as_str(), r.ok())).collect();
        let in_shard: Vec<&RunSpec> = plan.runs.iter().filter(|r| shard.owns(r.index)).collect();
        let todo: Vec<&RunSpec> = in_shard
            .iter()
            .copied()
            .filter(|r| match recorded.get(r.key.as_str()) {
                None => true,
                Some(ok) => !ok && retry_failed,
            })
            .collect();
        Ok(Pending {
            existing,
            in_shard,
            todo,
        })
    }

    /// The shard's runs already recorded.
    pub fn recorded(&self) -> usize {
        self.in_shard.len() - self.todo.len()
    }

    /// Writes the folder back with the `new` records: every record once, in plan order, in
    /// `runs.jsonl` and `runs.csv`, and the manifest of the plan at `plan_path`. Returns
    /// how many records the folder holds.
    pub fn finish(
        self,
        plan: &Plan,
        plan_path: &Path,
        out: &Output,
        shard: Shard,
        new: &[Record],
    ) -> Result<usize, Error> {
        // Plan order: records of this plan take their index in it; others keep theirs.
        let index_of: BTreeMap<&str, usize> = plan
            .runs
            .iter()
            .map(|r| (r.key.as_str(), r.index))
            .collect();
        let all: Vec<Record> = self
            .existing
            .into_iter()
            .chain(new.iter().cloned())
            .map(|mut r| {
                if let Some(&i) = index_of.get(r.key.as_str()) {
                    r.index = i;
                }
                r
            })
            .collect();
        let all = dedup_sorted(all);
        write_atomic(&out.jsonl(), &to_jsonl(&all))?;
        write_atomic(&out.csv(), &to_csv(&all))?;
        let manifest = serde_json::json!({
            "format": "paver-sweep/1",
            "plan": plan_path.to_string_lossy(),
            "plan_sha256": crate::plan::file_sha256(plan_path).unwrap_or_default(),
            "shard": format!("{}/{}", shard.index, shard.count),
            "runs_in_plan": plan.runs.len(),
            "runs_in_shard": self.in_shard.len(),
            "paver_version": crate::PAVER_VERSION,
            "paver_build": crate::plan::build_id(),
        });
        write_atomic(
            &out.manifest(),
            &(serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n"),
        )?;
        Ok(all.len())
    }
}
