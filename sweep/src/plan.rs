//! Sweep plans (`paver sweep PLAN.toml`): the TOML format, its validation, and its expansion
//! into an ordered list of runs, each with a content key that identifies its inputs.
//!
//! A plan is a cross product: kernels (PTX + launch file, globs allowed) x GPUs x TB
//! policies x RB-TS leaf rules (`rb-ts` only) x variant sets (PAVER policies only) x
//! stealing (PAVER policies only) x warp
//! policies x override sets. The expansion
//! order is the plan's own order, nested in that sequence, so that run `i` of a plan is the
//! same run on every machine; `--shard I/N` takes the runs whose index is `I` modulo `N`.
//!
//! The key of a run is the SHA-256 of its inputs' contents (PTX and launch bytes, the GPU
//! configuration after overrides, the policies, RB-TS's leaf rule, the budget and paver's
//! version and build), so a
//! resumed sweep recognises a run it has already made even if files moved, and re-runs it
//! when any input changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// A plan as written in TOML (see docs/SWEEP.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    /// GPU configurations: built-in names (`fermi`, `volta`, `titanv`, …) or `.toml` paths.
    gpus: Vec<String>,
    /// TB policies (`lrr`, `bcs`, `mst-ts`, `kway-ts`, `rb-ts`, `ld`, …).
    tb_policies: Vec<String>,
    /// Warp policies (`gto`, `lrr`); default `["gto"]`.
    #[serde(default = "default_warp")]
    warp_policies: Vec<String>,
    /// Task stealing for the PAVER policies (`mst-ts`, `kway-ts`, `rb-ts`, `ld`); absent:
    /// each policy's default (on for kway-ts and rb-ts). Other policies never steal and
    /// are run once whatever this says.
    #[serde(default)]
    steal: Option<Vec<bool>>,
    /// Sets of configuration overrides (`KEY=VALUE` as `paver simulate --set`); default one
    /// empty set.
    #[serde(default)]
    overrides: Option<Vec<Vec<String>>>,
    /// RB-TS leaf rules (`lt`: size < x, PAVER Algorithm 1; `le`: size <= x), one name or a
    /// list; default `lt`. Other policies do not read it and are run once.
    #[serde(default)]
    rb_leaf: Option<OneOrMany>,
    /// Sets of named departures from the papers (`experiment::Variant`: `at-least-lrr`,
    /// `steal-cap`) for the PAVER policies; default one empty set (the papers'
    /// algorithms). Other policies do not read them and are run once.
    #[serde(default)]
    variants: Option<Vec<Vec<String>>>,
    /// Budget of warp instructions per TB.
    #[serde(default = "default_budget")]
    max_instructions: u64,
    /// Sampled simulation (`paver simulate --sample` with its defaults) for every run;
    /// default false. Part of each run's key when true.
    #[serde(default)]
    sample: bool,
    /// Memory budget of each launch's static analysis, MiB (`paver analyze --max-memory`);
    /// absent: the analysis's default share of the available memory, divided among the
    /// workers (a sweep analyses up to `--jobs` launches at once).
    #[serde(default)]
    analysis_max_memory_mib: Option<u64>,
    /// The launches.
    #[serde(default)]
    kernels: Vec<KernelEntry>,
}

/// A plan value given as one string or a list of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

fn default_warp() -> Vec<String> {
    vec!["gto".into()]
}

fn default_budget() -> u64 {
    100_000_000
}

/// One `[[kernels]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KernelEntry {
    /// PTX file or glob; `{dir}` stands for the launch file's folder.
    ptx: String,
    /// Launch file (paver-launch/1) or glob.
    launch: String,
    /// Kernel name, when neither the launch file nor the module determines it.
    #[serde(default)]
    kernel: Option<String>,
}

/// What went wrong with a plan.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// Plan path.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown keys.
    #[error("{path}: {message}")]
    Syntax {
        /// Plan path.
        path: PathBuf,
        /// The TOML reader's message (with line and column).
        message: String,
    },
    /// A value is not acceptable.
    #[error("{path}: {message}")]
    Invalid {
        /// Plan path.
        path: PathBuf,
        /// What and where.
        message: String,
    },
}

/// One launch of the plan: a PTX file with a launch file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LaunchInput {
    /// PTX path as resolved (relative to the working directory or absolute).
    pub ptx: PathBuf,
    /// Launch file path.
    pub launch: PathBuf,
    /// `--kernel`, when the plan names one.
    pub kernel: Option<String>,
    /// SHA-256 of the PTX bytes (hex).
    pub ptx_sha256: String,
    /// SHA-256 of the launch file bytes (hex).
    pub launch_sha256: String,
}

/// One simulation of the plan.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Position in the expanded plan.
    pub index: usize,
    /// Index into [`Plan::launches`].
    pub launch: usize,
    /// GPU as the plan spells it (name or path): what [`gpu::GpuConfig::lookup`] takes.
    pub gpu: String,
    /// The configuration's canonical name (`titanv` for `volta`).
    pub gpu_name: String,
    /// TB policy, lower case.
    pub tb_policy: String,
    /// Warp policy, lower case.
    pub warp_policy: String,
    /// Task stealing, resolved: the plan's value for PAVER policies, else the policy's
    /// default; always false outside the PAVER runtime.
    pub steal: bool,
    /// Configuration overrides.
    pub overrides: Vec<String>,
    /// RB-TS's leaf rule (`lt` or `le`) for `rb-ts` runs; `None` for the other policies.
    pub rb_leaf: Option<String>,
    /// Named departures from the papers (`experiment::Variant` names, in their
    /// documentation order) for PAVER runs; empty for the other policies.
    pub variants: Vec<String>,
    /// Warp-instruction budget per TB.
    pub max_instructions: u64,
    /// Sampled simulation (`sim::timing::sample` with its defaults).
    pub sample: bool,
    /// Content key (hex SHA-256), see the module docs.
    pub key: String,
}

/// An expanded plan.
#[derive(Debug)]
pub struct Plan {
    /// Distinct launches, in plan order.
    pub launches: Vec<LaunchInput>,
    /// Every run, in plan order.
    pub runs: Vec<RunSpec>,
    /// The plan's `analysis_max_memory_mib`, in bytes.
    pub analysis_budget: Option<u64>,
}

/// Whether `policy` runs in the PAVER runtime from a schedule (and so can steal).
pub fn is_paver(policy: &str) -> bool {
    sim::timing::TbPolicy::parse(policy).is_some_and(|p| p.is_grouped())
}

fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The build that runs: the first 16 hex digits of the SHA-256 of paver's own executable
/// ("unknown" when it cannot be read). Part of every run's key, so that a sweep resumed
/// with a rebuilt simulator runs again instead of mixing the numbers of two builds.
pub fn build_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::read)
            .map(|b| sha256_hex(&b)[..16].to_string())
            .unwrap_or_else(|_| "unknown".into())
    })
}

/// SHA-256 of a file's bytes (hex).
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    Ok(sha256_hex(&std::fs::read(path)?))
}

/// The GPU configuration a run uses, after its overrides, as canonical JSON: its hash
/// makes a run's key change when a built-in configuration or a `.toml` file changes.
pub fn gpu_fingerprint(gpu: &str, overrides: &[String]) -> Result<String, String> {
    let base = gpu::GpuConfig::lookup(gpu).map_err(|e| e.to_string())?;
    let cfg = experiment::timing_config(base, None, None, overrides).map_err(|e| e.to_string())?;
    serde_json::to_string(&cfg).map_err(|e| e.to_string())
}

impl Plan {
    /// Reads and expands the plan at `path`. Relative paths inside it are relative to the
    /// plan's folder.
    pub fn read(path: &Path) -> Result<Plan, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Plan::from_toml(&text, path)
    }

    /// Expands plan text; `path` names it in errors and anchors its relative paths.
    pub fn from_toml(text: &str, path: &Path) -> Result<Plan, PlanError> {
        let file: PlanFile = toml::from_str(text).map_err(|e| PlanError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let invalid = |message: String| PlanError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
        for (what, list) in [
            ("gpus", &file.gpus),
            ("tb_policies", &file.tb_policies),
            ("warp_policies", &file.warp_policies),
        ] {
            if list.is_empty() {
                return Err(invalid(format!("`{what}` is empty")));
            }
        }
        if file.kernels.is_empty() {
            return Err(invalid("no [[kernels]] entry".into()));
        }
        if file.max_instructions == 0 {
            return Err(invalid("`max_instructions` must be at least 1".into()));
        }
        let tb_policies: Vec<String> = file
            .tb_policies
            .iter()
            .map(|p| {
                let p = p.to_ascii_lowercase();
                if sim::timing::TbPolicy::names().contains(&p.as_str()) {
                    Ok(p)
                } else {
                    Err(invalid(format!(
                        "tb_policies: unknown policy `{p}` (expected one of {})",
                        sim::timing::TbPolicy::names().join(", ")
                    )))
                }
            })
            .collect::<Result<_, _>>()?;
        let warp_policies: Vec<String> = file
            .warp_policies
            .iter()
            .map(|p| {
                let p = p.to_ascii_lowercase();
                if sim::timing::WarpPolicy::parse(&p).is_some() {
                    Ok(p)
                } else {
                    Err(invalid(format!(
                        "warp_policies: unknown policy `{p}` (expected {})",
                        sim::timing::WarpPolicy::names().join(", ")
                    )))
                }
            })
            .collect::<Result<_, _>>()?;
        let rb_leaves: Vec<String> = file
            .rb_leaf
            .clone()
            .map_or_else(|| vec!["lt".to_string()], OneOrMany::into_vec);
        if rb_leaves.is_empty() {
            return Err(invalid("`rb_leaf` is empty (leave it out for `lt`)".into()));
        }
        let rb_leaves: Vec<String> = rb_leaves
            .iter()
            .map(|r| {
                let r = r.to_ascii_lowercase();
                match experiment::groups::RbLeaf::parse(&r) {
                    Some(_) => Ok(r),
                    None => Err(invalid(format!(
                        "rb_leaf: unknown rule `{r}` (expected lt or le)"
                    ))),
                }
            })
            .collect::<Result<_, _>>()?;
        let variant_sets: Vec<Vec<String>> = match &file.variants {
            None => vec![Vec::new()],
            Some(sets) if sets.is_empty() => {
                return Err(invalid(
                    "`variants` is empty (use [[]] for none, or leave it out)".into(),
                ))
            }
            Some(sets) => sets
                .iter()
                .map(|set| variant_set(set).map_err(invalid))
                .collect::<Result<_, _>>()?,
        };
        let overrides = file.overrides.clone().unwrap_or_else(|| vec![Vec::new()]);
        if overrides.is_empty() {
            return Err(invalid(
                "`overrides` is empty (use [[]] for none, or leave it out)".into(),
            ));
        }
        // Resolve every GPU with every override set once: a bad name or key is a plan error,
        // reported before anything runs.
        let gpus: Vec<String> = file
            .gpus
            .iter()
            .map(|g| {
                let p = Path::new(g);
                if g.ends_with(".toml") && p.is_relative() {
                    base.join(p).to_string_lossy().into_owned()
                } else {
                    g.clone()
                }
            })
            .collect();
        let mut fingerprints = BTreeMap::new();
        let mut names = BTreeMap::new();
        for g in &gpus {
            let cfg = gpu::GpuConfig::lookup(g).map_err(|e| invalid(format!("gpu {g}: {e}")))?;
            names.insert(g.clone(), cfg.name);
            for set in &overrides {
                let fp = gpu_fingerprint(g, set).map_err(|e| invalid(format!("gpu {g}: {e}")))?;
                fingerprints.insert((g.clone(), set.clone()), sha256_hex(fp.as_bytes()));
            }
        }
        let launches = expand_kernels(&file.kernels, &base).map_err(invalid)?;
        let mut runs = Vec::new();
        for (li, l) in launches.iter().enumerate() {
            for g in &gpus {
                for p in &tb_policies {
                    let steals: Vec<bool> = if is_paver(p) {
                        file.steal
                            .clone()
                            .unwrap_or_else(|| vec![sim::timing::steals_by_default(p)])
                    } else {
                        vec![false]
                    };
                    let leaves: Vec<Option<String>> = if p == "rb-ts" {
                        rb_leaves.iter().cloned().map(Some).collect()
                    } else {
                        vec![None]
                    };
                    let sets: &[Vec<String>] = if is_paver(p) {
                        &variant_sets
                    } else {
                        &[Vec::new()]
                    };
                    for rb_leaf in &leaves {
                        for variants in sets {
                            for &steal in &steals {
                                for w in &warp_policies {
                                    for set in &overrides {
                                        let mut key = serde_json::json!({
                                            "paver": crate::PAVER_VERSION,
                                            "build": build_id(),
                                            "ptx": l.ptx_sha256,
                                            "launch": l.launch_sha256,
                                            "kernel": l.kernel,
                                            "gpu": fingerprints[&(g.clone(), set.clone())],
                                            "tb_policy": p,
                                            "warp_policy": w,
                                            "steal": steal,
                                            "max_instructions": file.max_instructions,
                                        });
                                        if let Some(r) = rb_leaf {
                                            key["rb_leaf"] = r.as_str().into();
                                        }
                                        if !variants.is_empty() {
                                            key["variants"] = variants.clone().into();
                                        }
                                        // Only when given, so that plans without it keep their
                                        // keys: the budget decides which loads are resolved.
                                        if let Some(m) = file.analysis_max_memory_mib {
                                            key["analysis_max_memory_mib"] = m.into();
                                        }
                                        if file.sample {
                                            key["sample"] = true.into();
                                        }
                                        runs.push(RunSpec {
                                            index: runs.len(),
                                            launch: li,
                                            gpu: g.clone(),
                                            gpu_name: names[g].clone(),
                                            tb_policy: p.clone(),
                                            warp_policy: w.clone(),
                                            steal,
                                            overrides: set.clone(),
                                            rb_leaf: rb_leaf.clone(),
                                            variants: variants.clone(),
                                            max_instructions: file.max_instructions,
                                            sample: file.sample,
                                            key: sha256_hex(key.to_string().as_bytes()),
                                        });
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(Plan {
            launches,
            runs,
            analysis_budget: file
                .analysis_max_memory_mib
                .map(|m| m.saturating_mul(1 << 20)),
        })
    }
}

impl Plan {
    /// One line for run `r` (`paver sweep --dry-run`): index, PTX and launch files, GPU,
    /// policies (with stealing for the PAVER policies) and overrides.
    pub fn describe(&self, r: &RunSpec) -> String {
        let l = &self.launches[r.launch];
        let steal = if is_paver(&r.tb_policy) {
            if r.steal {
                " +steal"
            } else {
                " -steal"
            }
        } else {
            ""
        };
        let sets = if r.overrides.is_empty() {
            String::new()
        } else {
            format!(" [{}]", r.overrides.join(" "))
        };
        let variants: String = r.variants.iter().map(|v| format!(" +{v}")).collect();
        format!(
            "{:>5}  {} {}  {}  {}{variants}{steal} {}{sets}",
            r.index,
            l.ptx.display(),
            l.launch.display(),
            r.gpu_name,
            r.tb_policy,
            r.warp_policy
        )
    }
}

/// A plan's set of variant names, checked and in [`experiment::Variant::ALL`]'s order
/// (so `["steal-cap", "at-least-lrr"]` and its reverse are one run).
fn variant_set(set: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for name in set {
        let v = experiment::Variant::parse(&name.to_ascii_lowercase()).ok_or_else(|| {
            let known: Vec<&str> = experiment::Variant::ALL.iter().map(|v| v.name()).collect();
            format!(
                "variants: unknown variant `{name}` (expected {})",
                known.join(", ")
            )
        })?;
        out.push(v);
    }
    out.sort();
    out.dedup();
    Ok(out.into_iter().map(|v| v.name().to_string()).collect())
}

/// Files matching `pattern` (a path or a glob), sorted; an error when none does.
fn matches(pattern: &str, what: &str) -> Result<Vec<PathBuf>, String> {
    let paths = glob::glob(pattern).map_err(|e| format!("{what} `{pattern}`: {e}"))?;
    let mut out: Vec<PathBuf> = paths
        .filter_map(Result::ok)
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(format!("{what} `{pattern}` matches no file"));
    }
    Ok(out)
}

fn expand_kernels(entries: &[KernelEntry], base: &Path) -> Result<Vec<LaunchInput>, String> {
    let anchor = |s: &str| -> String {
        if Path::new(s).is_absolute() || base.as_os_str().is_empty() {
            s.to_string()
        } else {
            base.join(s).to_string_lossy().into_owned()
        }
    };
    let mut out: Vec<LaunchInput> = Vec::new();
    for (n, e) in entries.iter().enumerate() {
        let what = format!("kernels[{n}].launch");
        for launch in matches(&anchor(&e.launch), &what)? {
            let dir = launch
                .parent()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default();
            let ptx_pattern = if e.ptx.contains("{dir}") {
                e.ptx.replace("{dir}", &dir)
            } else {
                anchor(&e.ptx)
            };
            for ptx in matches(&ptx_pattern, &format!("kernels[{n}].ptx"))? {
                let hash =
                    |p: &Path| file_sha256(p).map_err(|err| format!("{}: {err}", p.display()));
                let input = LaunchInput {
                    ptx_sha256: hash(&ptx)?,
                    launch_sha256: hash(&launch)?,
                    ptx,
                    launch: launch.clone(),
                    kernel: e.kernel.clone(),
                };
                if !out.contains(&input) {
                    out.push(input);
                }
            }
        }
    }
    Ok(out)
}

/// `I/N`: this process runs the runs whose index is `I` modulo `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` with `I < N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard {s}: expected I/N, e.g. 0/4"))?;
        let index: usize = i
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s}: `{i}` is not a shard index"))?;
        let count: usize = n
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s}: `{n}` is not a shard count"))?;
        if count == 0 || index >= count {
            return Err(format!(
                "--shard {s}: the index must be below the count (0/{count} .. {}/{count})",
                count.saturating_sub(1)
            ));
        }
        Ok(Shard { index, count })
    }

    /// Whether run `index` belongs to this shard.
    pub fn owns(&self, index: usize) -> bool {
        index % self.count == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Result<Plan, PlanError> {
        Plan::from_toml(text, Path::new("plan.toml"))
    }

    const KERNEL: &str = r#"
[[kernels]]
ptx = "kernels/mm_naive/mm_naive.compute_70.ptx"
launch = "kernels/mm_naive/small.json"
"#;

    /// The repository (the corpus's paths are relative to it).
    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    fn plan_at_root(text: &str) -> Result<Plan, PlanError> {
        Plan::from_toml(text, &root().join("plan.toml"))
    }

    #[test]
    fn expansion_counts_steal_only_for_paver_policies() {
        let p = plan_at_root(&format!(
            "gpus = [\"fermi\", \"volta\"]\ntb_policies = [\"lrr\", \"bcs\", \"mst-ts\", \"kway-ts\", \"rb-ts\"]\nsteal = [true, false]\n{KERNEL}"
        ))
        .expect("plan");
        // 2 GPUs x (2 plain policies + 3 PAVER policies x 2 steal values) = 2 x 8.
        assert_eq!(p.runs.len(), 16);
        assert_eq!(p.launches.len(), 1);
        let lrr: Vec<_> = p.runs.iter().filter(|r| r.tb_policy == "lrr").collect();
        assert_eq!(lrr.len(), 2);
        assert!(lrr.iter().all(|r| !r.steal));
        let keys: std::collections::BTreeSet<_> = p.runs.iter().map(|r| &r.key).collect();
        assert_eq!(keys.len(), p.runs.len(), "keys are distinct");
        assert!(p.runs.iter().enumerate().all(|(i, r)| r.index == i));
    }

    #[test]
    fn default_steal_is_the_policys() {
        let p = plan_at_root(&format!(
            "gpus = [\"volta\"]\ntb_policies = [\"mst-ts\", \"rb-ts\"]\n{KERNEL}"
        ))
        .expect("plan");
        let steal: Vec<(String, bool)> = p
            .runs
            .iter()
            .map(|r| (r.tb_policy.clone(), r.steal))
            .collect();
        assert_eq!(
            steal,
            vec![("mst-ts".to_string(), false), ("rb-ts".to_string(), true)]
        );
    }

    #[test]
    fn rb_leaf_expands_rb_ts_only_and_enters_the_key() {
        // Default: `lt`, on rb-ts runs only.
        let p = plan_at_root(&format!(
            "gpus = [\"volta\"]\ntb_policies = [\"lrr\", \"rb-ts\"]\n{KERNEL}"
        ))
        .expect("plan");
        let leaves: Vec<Option<&str>> = p.runs.iter().map(|r| r.rb_leaf.as_deref()).collect();
        assert_eq!(leaves, vec![None, Some("lt")]);
        // A list: rb-ts once per rule (after the policy, before stealing), lrr once.
        let both = plan_at_root(&format!(
            "gpus = [\"volta\"]\ntb_policies = [\"lrr\", \"rb-ts\"]\nrb_leaf = [\"lt\", \"LE\"]\nsteal = [true, false]\n{KERNEL}"
        ))
        .expect("plan");
        let runs: Vec<(&str, Option<&str>, bool)> = both
            .runs
            .iter()
            .map(|r| (r.tb_policy.as_str(), r.rb_leaf.as_deref(), r.steal))
            .collect();
        assert_eq!(
            runs,
            vec![
                ("lrr", None, false),
                ("rb-ts", Some("lt"), true),
                ("rb-ts", Some("lt"), false),
                ("rb-ts", Some("le"), true),
                ("rb-ts", Some("le"), false),
            ]
        );
        // The rule is in the key; lrr's key does not depend on it.
        assert_ne!(both.runs[1].key, both.runs[3].key);
        let one = plan_at_root(&format!(
            "gpus = [\"volta\"]\ntb_policies = [\"lrr\", \"rb-ts\"]\nrb_leaf = \"le\"\n{KERNEL}"
        ))
        .expect("plan");
        assert_eq!(one.runs[0].key, p.runs[0].key);
        assert_eq!(one.runs[1].rb_leaf.as_deref(), Some("le"));
        assert_eq!(one.runs[1].key, both.runs[3].key);
        for bad in ["rb_leaf = [\"lte\"]", "rb_leaf = []"] {
            let err = plan_at_root(&format!(
                "gpus = [\"volta\"]\ntb_policies = [\"rb-ts\"]\n{bad}\n{KERNEL}"
            ))
            .expect_err(bad)
            .to_string();
            assert!(err.contains("rb_leaf"), "{bad}: {err}");
        }
    }

    #[test]
    fn keys_follow_content_not_spelling() {
        let a = plan_at_root(&format!(
            "gpus = [\"volta\"]\ntb_policies = [\"lrr\"]\n{KERNEL}"
        ))
        .expect("plan");
        let b = plan_at_root(&format!(
            "gpus = [\"titanv\"]\ntb_policies = [\"LRR\"]\n{KERNEL}"
        ))
        .expect("plan");
        assert_eq!(a.runs[0].key, b.runs[0].key, "alias and case do not matter");
        let c = plan_at_root(&format!(
            "gpus = [\"volta\"]\ntb_policies = [\"lrr\"]\noverrides = [[\"l2.latency_cycles=100\"]]\n{KERNEL}"
        ))
        .expect("plan");
        assert_ne!(a.runs[0].key, c.runs[0].key, "an override changes the key");
    }

    #[test]
    fn globs_and_dir_placeholder() {
        let p = plan_at_root(
            "gpus = [\"volta\"]\ntb_policies = [\"lrr\"]\n[[kernels]]\nlaunch = \"kernels/mvt/small.*.json\"\nptx = \"{dir}/*.compute_70.ptx\"\n",
        )
        .expect("plan");
        assert_eq!(p.launches.len(), 2);
        assert!(p
            .launches
            .iter()
            .all(|l| l.ptx.ends_with("mvt.compute_70.ptx")));
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let cases = [
            ("gpus = []\ntb_policies = [\"lrr\"]\n", "`gpus` is empty"),
            (
                "gpus = [\"volta\"]\ntb_policies = [\"fastest\"]\n",
                "unknown policy `fastest`",
            ),
            (
                "gpus = [\"voodoo\"]\ntb_policies = [\"lrr\"]\n",
                "gpu voodoo: ",
            ),
            (
                "gpus = [\"volta\"]\ntb_policies = [\"lrr\"]\noverrides = [[\"l2.nope=1\"]]\n",
                "gpu volta: ",
            ),
            (
                "gpus = [\"volta\"]\ntb_policies = [\"lrr\"]\ncolour = 1\n",
                "unknown field `colour`",
            ),
        ];
        for (head, want) in cases {
            let err = plan_at_root(&format!("{head}{KERNEL}"))
                .expect_err(head)
                .to_string();
            assert!(err.contains(want), "{head}: {err}");
        }
        let err = plan("gpus = [\"volta\"]\ntb_policies = [\"lrr\"]\n[[kernels]]\nptx = \"x.ptx\"\nlaunch = \"nowhere/*.json\"\n")
            .expect_err("no match")
            .to_string();
        assert!(err.contains("matches no file"), "{err}");
    }

    #[test]
    fn shards_partition_the_runs() {
        let s = Shard::parse("1/3").expect("shard");
        assert_eq!((s.index, s.count), (1, 3));
        let owned: Vec<usize> = (0..7).filter(|&i| s.owns(i)).collect();
        assert_eq!(owned, vec![1, 4]);
        for bad in ["3/3", "1", "a/2", "0/0"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
