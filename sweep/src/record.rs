//! One record per run (`paver-run/1`): what went in (paths, content hashes, policies,
//! overrides, paver's version), what came out (every statistic, or the error), and how long
//! each phase took. Stored one JSON object per line in `runs.jsonl`, flattened into
//! `runs.csv` for pandas.
//!
//! Everything in a record is a function of the plan's inputs except `timing`, which holds
//! wall-clock seconds: two sweeps of the same plan give the same records once `timing` is
//! set aside, whatever the number of workers.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The record format's name.
pub const FORMAT: &str = "paver-run/1";

/// Wall-clock seconds of a run's phases. The analysis and the partition are shared by the
/// runs of one launch (and one GPU and policy); each record carries what its inputs cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Parsing, binding and the static analysis of the launch.
    pub analysis_s: f64,
    /// Building the TB groups (PAVER policies; 0 otherwise).
    pub partition_s: f64,
    /// The timing simulation.
    pub simulate_s: f64,
    /// CPU seconds of the timing simulation (the one thread it runs on), where the system
    /// has a thread CPU clock (Unix). Wall time counts the time a run waits for a
    /// core beside other work; this is what the run costs. Absent in records made before
    /// it existed and where it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulate_cpu_s: Option<f64>,
}

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// `paver-run/1`.
    pub format: String,
    /// Content key of the inputs (see [`crate::plan`]).
    pub key: String,
    /// Position in the plan that made it (records are listed in this order).
    pub index: usize,
    /// Kernel name as in the PTX (mangled C++ names stay mangled).
    pub kernel: String,
    /// PTX path as the plan resolved it.
    pub ptx: String,
    /// Launch file path.
    pub launch: String,
    /// SHA-256 of the PTX bytes.
    pub ptx_sha256: String,
    /// SHA-256 of the launch file bytes.
    pub launch_sha256: String,
    /// GPU configuration's canonical name.
    pub gpu: String,
    /// TB policy.
    pub tb_policy: String,
    /// Warp policy.
    pub warp_policy: String,
    /// Task stealing (PAVER policies; false for the others).
    pub steal: bool,
    /// Configuration overrides (`KEY=VALUE`).
    pub overrides: Vec<String>,
    /// RB-TS's leaf rule, `lt` (size < x, PAVER Algorithm 1) or `le` (size <= x), for
    /// `rb-ts` runs; absent for the other policies. An `rb-ts` record without it was made
    /// before the rule was recorded, when sweeps always used `le` (see [`Record::rb_leaf`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rb_leaf: Option<String>,
    /// Named departures from the papers the run was made with (`experiment::Variant`
    /// names: `at-least-lrr`, `steal-cap`); absent when none. Records of Kway-TS and RB-TS
    /// made before issue 39 had `at-least-lrr` and `steal-cap` without saying so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// Warp-instruction budget per TB.
    pub max_instructions: u64,
    /// Sampled simulation (the stats' `sampling` says what was skipped and the error
    /// bound); absent for a full run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sample: bool,
    /// PAVER §6.2 class of the launch: `high` (at least half of the data references are to
    /// data other TBs also read), `low` (some, less than half) or `none`.
    pub locality_class: Option<String>,
    /// Fraction of data references (TB, unit) to units other TBs also read: the analysis's
    /// degree of sharing.
    pub inter_tb_fraction: Option<f64>,
    /// The launch's PAVER Table 2 statistics and Fig. 2 categories (`paver analyze`'s
    /// `stats`), when the analysis ran.
    pub analysis: Option<Value>,
    /// paver's version.
    pub paver_version: String,
    /// The executable that made the record ([`super::plan::build_id`]).
    #[serde(default)]
    pub paver_build: String,
    /// `ok` or `error`.
    pub status: String,
    /// What went wrong, for `error`.
    pub error: Option<String>,
    /// Seconds per phase (the only field that varies between identical sweeps).
    pub timing: Timing,
    /// The simulator's statistics (`paver simulate`'s JSON), for `ok`.
    pub stats: Option<Value>,
}

impl Record {
    /// Whether the run succeeded.
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }

    /// RB-TS's leaf rule this record was made with: its `rb_leaf`, or `le` for an `rb-ts`
    /// record made before the rule was recorded (sweeps then built RB-TS groups with
    /// `<= x`); `None` for the other policies.
    pub fn rb_leaf(&self) -> Option<&str> {
        match (&self.rb_leaf, self.tb_policy.as_str()) {
            (Some(r), _) => Some(r),
            (None, "rb-ts") => Some("le"),
            (None, _) => None,
        }
    }

    /// A statistic by its dotted path (`l2.accesses`), as a number.
    pub fn stat(&self, path: &str) -> Option<f64> {
        let mut v = self.stats.as_ref()?;
        for part in path.split('.') {
            v = v.get(part)?;
        }
        v.as_f64()
    }
}

/// What makes a `runs.jsonl` unreadable.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A line is a record of another format.
    #[error("{}:{line}: format `{found}`, expected `{FORMAT}`", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The line's `format`.
        found: String,
    },
    /// A line that is not the last is not a record.
    #[error("{}:{line}: {source}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What the JSON reader said.
        source: serde_json::Error,
    },
}

/// Reads a `runs.jsonl`. A last line cut short (a sweep killed while writing) is dropped
/// with a warning in the returned list; a bad line elsewhere is an error.
pub fn read_jsonl(path: &Path) -> Result<(Vec<Record>, Vec<String>), ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let lines: Vec<String> = std::io::BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(io)?;
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) if r.format == FORMAT => records.push(r),
            Ok(r) => {
                return Err(ReadError::Format {
                    path: path.to_path_buf(),
                    line: n + 1,
                    found: r.format,
                })
            }
            Err(e) if Some(n) == last => warnings.push(format!(
                "{}:{}: dropped an unfinished last record ({e})",
                path.display(),
                n + 1
            )),
            Err(source) => {
                return Err(ReadError::Syntax {
                    path: path.to_path_buf(),
                    line: n + 1,
                    source,
                })
            }
        }
    }
    Ok((records, warnings))
}

/// One record per key (the last one read wins, so a retried run replaces its failure),
/// ordered by plan position, then key.
pub fn dedup_sorted(records: Vec<Record>) -> Vec<Record> {
    let mut by_key: BTreeMap<String, Record> = BTreeMap::new();
    for r in records {
        by_key.insert(r.key.clone(), r);
    }
    let mut out: Vec<Record> = by_key.into_values().collect();
    out.sort_by(|a, b| a.index.cmp(&b.index).then_with(|| a.key.cmp(&b.key)));
    out
}

/// The records as JSON lines.
pub fn to_jsonl(records: &[Record]) -> String {
    let mut s = String::new();
    for r in records {
        // A `Record` always serialises (plain data, finite numbers from the simulator).
        s.push_str(&serde_json::to_string(r).unwrap_or_default());
        s.push('\n');
    }
    s
}

/// Columns that come before the statistics in `runs.csv`.
const INPUT_COLUMNS: &[&str] = &[
    "kernel",
    "gpu",
    "tb_policy",
    "warp_policy",
    "steal",
    "rb_leaf",
    "variants",
    "overrides",
    "locality_class",
    "inter_tb_fraction",
    "status",
    "error",
    "ptx",
    "launch",
    "key",
    "analysis_s",
    "partition_s",
    "simulate_s",
    "simulate_cpu_s",
];

/// Statistics left out of the CSV: per-SM arrays and the whole configuration (both are in
/// `runs.jsonl`), and fields the input columns already hold.
const SKIPPED_STATS: &[&str] = &[
    "sms",
    "config",
    "kernel",
    "tb_policy",
    "warp_policy",
    "steal",
];

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                flatten(&name, v, out);
            }
        }
        Value::Array(_) | Value::Null => {}
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Bool(b) => out.push((prefix.to_string(), b.to_string())),
        Value::Number(n) => out.push((prefix.to_string(), n.to_string())),
    }
}

/// One CSV field, quoted as RFC 4180 says when it holds a comma, quote or line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The records as CSV (RFC 4180): input columns, then every scalar statistic flattened with
/// `_` (`l2.accesses` -> `l2_accesses`), in the order the statistics list them.
pub fn to_csv(records: &[Record]) -> String {
    let rows: Vec<Vec<(String, String)>> = records
        .iter()
        .map(|r| {
            let mut row: Vec<(String, String)> = vec![
                ("kernel".into(), r.kernel.clone()),
                ("gpu".into(), r.gpu.clone()),
                ("tb_policy".into(), r.tb_policy.clone()),
                ("warp_policy".into(), r.warp_policy.clone()),
                ("steal".into(), r.steal.to_string()),
                ("rb_leaf".into(), r.rb_leaf().unwrap_or("").to_string()),
                ("variants".into(), r.variants.join(";")),
                ("overrides".into(), r.overrides.join(";")),
                (
                    "locality_class".into(),
                    r.locality_class.clone().unwrap_or_default(),
                ),
                (
                    "inter_tb_fraction".into(),
                    r.inter_tb_fraction
                        .map(|f| f.to_string())
                        .unwrap_or_default(),
                ),
                ("status".into(), r.status.clone()),
                ("error".into(), r.error.clone().unwrap_or_default()),
                ("ptx".into(), r.ptx.clone()),
                ("launch".into(), r.launch.clone()),
                ("key".into(), r.key.clone()),
                ("analysis_s".into(), r.timing.analysis_s.to_string()),
                ("partition_s".into(), r.timing.partition_s.to_string()),
                ("simulate_s".into(), r.timing.simulate_s.to_string()),
                (
                    "simulate_cpu_s".into(),
                    r.timing
                        .simulate_cpu_s
                        .map(|s| s.to_string())
                        .unwrap_or_default(),
                ),
            ];
            if let Some(Value::Object(map)) = &r.stats {
                for (k, v) in map {
                    if !SKIPPED_STATS.contains(&k.as_str()) {
                        flatten(k, v, &mut row);
                    }
                }
            }
            row
        })
        .collect();
    let mut columns: Vec<String> = INPUT_COLUMNS.iter().map(|s| s.to_string()).collect();
    let mut seen: BTreeSet<String> = columns.iter().cloned().collect();
    for row in &rows {
        for (k, _) in row {
            if seen.insert(k.clone()) {
                columns.push(k.clone());
            }
        }
    }
    let mut s = columns
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    for row in rows {
        let map: BTreeMap<&str, &str> = row.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let line: Vec<String> = columns
            .iter()
            .map(|c| csv_field(map.get(c.as_str()).copied().unwrap_or("")))
            .collect();
        s.push_str(&line.join(","));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &str, index: usize, stats: Option<Value>) -> Record {
        Record {
            format: FORMAT.into(),
            key: key.into(),
            index,
            kernel: "k".into(),
            ptx: "a,b.ptx".into(),
            launch: "l.json".into(),
            ptx_sha256: String::new(),
            launch_sha256: String::new(),
            gpu: "titanv".into(),
            tb_policy: "lrr".into(),
            warp_policy: "gto".into(),
            steal: false,
            overrides: vec![],
            rb_leaf: None,
            variants: Vec::new(),
            max_instructions: 1,
            sample: false,
            locality_class: Some("high".into()),
            inter_tb_fraction: Some(0.75),
            analysis: None,
            paver_version: "0".into(),
            paver_build: "0".into(),
            status: if stats.is_some() { "ok" } else { "error" }.into(),
            error: stats.is_none().then(|| "boom \"x\"".to_string()),
            timing: Timing::default(),
            stats,
        }
    }

    #[test]
    fn csv_flattens_and_quotes() {
        let stats = serde_json::json!({"cycles": 10, "l2": {"accesses": 7, "hits": 3}, "sms": [1, 2], "kernel": "k"});
        let csv = to_csv(&[record("a", 0, Some(stats)), record("b", 1, None)]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        let header: Vec<&str> = lines[0].split(',').collect();
        assert!(
            header.ends_with(&["cycles", "l2_accesses", "l2_hits"]),
            "{header:?}"
        );
        assert!(!header.contains(&"sms"));
        // steal false, rb_leaf empty (not rb-ts), variants empty, overrides empty.
        assert!(lines[1].starts_with("k,titanv,lrr,gto,false,,,,high,0.75,ok,,\"a,b.ptx\""));
        assert!(lines[1].ends_with(",10,7,3"), "{}", lines[1]);
        assert!(lines[2].contains("\"boom \"\"x\"\"\""), "{}", lines[2]);
        assert!(
            lines[2].ends_with(",,,"),
            "an error row leaves the statistics empty"
        );
    }

    #[test]
    fn cpu_time_is_optional_so_older_records_still_read() {
        // A record made before `simulate_cpu_s` existed.
        let old = r#"{"analysis_s":1.5,"partition_s":0.0,"simulate_s":2.0}"#;
        let t: Timing = serde_json::from_str(old).expect("old timing");
        assert_eq!((t.simulate_s, t.simulate_cpu_s), (2.0, None));
        // Written only when known, and read back.
        assert!(!serde_json::to_string(&t).unwrap().contains("cpu"));
        let with = Timing {
            simulate_cpu_s: Some(1.25),
            ..t
        };
        let text = serde_json::to_string(&with).unwrap();
        assert!(text.contains(r#""simulate_cpu_s":1.25"#), "{text}");
        assert_eq!(serde_json::from_str::<Timing>(&text).unwrap(), with);
        // runs.csv has the column, empty where unknown.
        let mut a = record("a", 0, None);
        a.timing = with;
        let mut b = record("b", 1, None);
        // No quoted commas, so that a naive split finds the columns.
        (a.ptx, b.ptx) = ("k.ptx".into(), "k.ptx".into());
        (a.error, b.error) = (None, None);
        let csv = to_csv(&[a, b]);
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = header
            .iter()
            .position(|c| *c == "simulate_cpu_s")
            .expect("column");
        let cell = |line: usize| {
            csv.lines()
                .nth(line)
                .unwrap()
                .split(',')
                .nth(col)
                .unwrap()
                .to_string()
        };
        assert_eq!((cell(1), cell(2)), ("1.25".to_string(), String::new()));
    }

    #[test]
    fn jsonl_round_trip_and_unfinished_last_line() {
        let dir = std::env::temp_dir().join(format!("paver-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("runs.jsonl");
        let rs = vec![
            record("b", 1, None),
            record("a", 0, Some(serde_json::json!({"cycles": 3}))),
        ];
        let mut text = to_jsonl(&rs);
        text.push_str("{\"format\":\"paver-run/1\",\"ke");
        std::fs::write(&path, &text).expect("write");
        let (back, warnings) = read_jsonl(&path).expect("read");
        assert_eq!(back, rs);
        assert_eq!(warnings.len(), 1);
        let sorted = dedup_sorted(back);
        assert_eq!(sorted[0].key, "a");
        assert_eq!(sorted[0].stat("cycles"), Some(3.0));
        // A bad line in the middle is an error, not a silent skip.
        std::fs::write(&path, format!("garbage\n{}", to_jsonl(&rs))).expect("write");
        assert!(read_jsonl(&path)
            .expect_err("bad line")
            .to_string()
            .contains(":1:"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
