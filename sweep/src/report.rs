//! Tables from sweep records, in the forms of the PAVER paper's evaluation: L2 accesses and
//! speedup normalised to LRR per kernel and GPU (Fig. 11), L1 miss rates (Fig. 12), the
//! effect of task stealing (Fig. 13), the analysis-plus-partition time against the
//! simulated kernel time (Fig. 10), Table 2's statistics and Fig. 2's reference categories,
//! with geometric means per locality class (high / low / none, PAVER §6.2).
//!
//! A table is a plain grid of strings, written as Markdown (for docs) and CSV (for
//! spreadsheets). Only successful runs enter the tables; a kernel without an LRR run on a
//! GPU has no normalised row there.

use std::collections::{BTreeMap, BTreeSet};

use super::heatmap::Heatmap;
use super::plan::is_paver;
use super::record::csv_field;
use super::record::Record;

/// A titled table.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// File stem (`speedup_titanv`).
    pub name: String,
    /// Heading.
    pub title: String,
    /// What the numbers mean.
    pub note: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// GitHub-flavoured Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!("### {}\n\n{}\n\n", self.title, self.note);
        s.push_str(&format!("| {} |\n", self.header.join(" | ")));
        s.push_str(&format!(
            "|{}\n",
            self.header
                .iter()
                .enumerate()
                .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
                .collect::<String>()
        ));
        for r in &self.rows {
            s.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        s.push('\n');
        s
    }

    /// RFC 4180 CSV.
    pub fn csv(&self) -> String {
        let mut s = String::new();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            s.push_str(&r.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(","));
            s.push('\n');
        }
        s
    }
}

/// The kernel and launch a record measures: `kernel (launch file stem)`.
fn launch_label(r: &Record) -> String {
    let stem = std::path::Path::new(&r.launch)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{} ({stem})", r.kernel)
}

/// The policy as a column: RB-TS's leaf rule, the variants and stealing are named only
/// where they depart from the defaults (`rb-ts` steals with leaves `< x`; `rb-ts le` has
/// leaves `<= x`, as every `rb-ts` record made before the rule was recorded; `rb-ts
/// +steal-cap` ran with that variant; `rb-ts no-steal` does not steal; `mst-ts steal`
/// does).
pub fn policy_label(r: &Record) -> String {
    let mut label = r.tb_policy.clone();
    if let Some(rule) = r.rb_leaf().filter(|&rule| rule != "lt") {
        label.push(' ');
        label.push_str(rule);
    }
    for v in &r.variants {
        label.push_str(" +");
        label.push_str(v);
    }
    if is_paver(&r.tb_policy) && r.steal != sim::timing::steals_by_default(&r.tb_policy) {
        label.push_str(if r.steal { " steal" } else { " no-steal" });
    }
    label
}

/// The setting a table compares policies under: GPU, warp policy, overrides.
fn setting(r: &Record) -> String {
    let mut s = r.gpu.clone();
    if r.warp_policy != "gto" {
        s.push_str(&format!(" {}", r.warp_policy));
    }
    if !r.overrides.is_empty() {
        s.push_str(&format!(" [{}]", r.overrides.join(" ")));
    }
    s
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .trim_matches('_')
        .to_string()
}

fn geomean(xs: &[f64]) -> Option<f64> {
    let xs: Vec<f64> = xs
        .iter()
        .copied()
        .filter(|x| *x > 0.0 && x.is_finite())
        .collect();
    (!xs.is_empty()).then(|| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

fn fmt3(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
}

/// Policy columns in the registry's order ([`sim::timing::TB_POLICIES`]: the papers',
/// then the rest alphabetically), names it does not know last.
fn ordered_policies(labels: BTreeSet<String>) -> Vec<String> {
    let order = sim::timing::TbPolicy::names();
    let mut v: Vec<String> = labels.into_iter().collect();
    v.sort_by_key(|l| {
        let base = l.split(' ').next().unwrap_or(l);
        (
            order.iter().position(|o| *o == base).unwrap_or(order.len()),
            l.clone(),
        )
    });
    v
}

/// Per setting: kernel -> policy -> record.
type Grid<'a> = BTreeMap<String, BTreeMap<String, BTreeMap<String, &'a Record>>>;

fn grid(records: &[Record]) -> (Grid<'_>, BTreeMap<String, String>) {
    let mut g: Grid = BTreeMap::new();
    let mut class = BTreeMap::new();
    for r in records.iter().filter(|r| r.ok()) {
        let k = launch_label(r);
        if let Some(c) = &r.locality_class {
            class.insert(k.clone(), c.clone());
        }
        g.entry(setting(r))
            .or_default()
            .entry(k)
            .or_default()
            .insert(policy_label(r), r);
    }
    (g, class)
}

/// A table of `value(record, lrr record)` per kernel and policy for one setting, with
/// geometric means per locality class when `means`.
fn normalised(
    name: &str,
    title: String,
    note: &str,
    kernels: &BTreeMap<String, BTreeMap<String, &Record>>,
    class: &BTreeMap<String, String>,
    value: impl Fn(&Record, Option<&Record>) -> Option<f64>,
    means: bool,
) -> Table {
    let policies = ordered_policies(kernels.values().flat_map(|m| m.keys().cloned()).collect());
    let mut header = vec!["kernel".to_string(), "class".to_string()];
    header.extend(policies.iter().cloned());
    let mut rows = Vec::new();
    let mut per_class: BTreeMap<&str, Vec<Vec<f64>>> = BTreeMap::new();
    for (k, by_policy) in kernels {
        let lrr = by_policy.get("lrr").copied();
        let c = class.get(k).map(String::as_str).unwrap_or("-");
        let vals: Vec<Option<f64>> = policies
            .iter()
            .map(|p| by_policy.get(p).and_then(|r| value(r, lrr)))
            .collect();
        let mut row = vec![k.clone(), c.to_string()];
        row.extend(vals.iter().map(|v| fmt3(*v)));
        rows.push(row);
        let slot = per_class
            .entry(c)
            .or_insert_with(|| vec![Vec::new(); policies.len()]);
        for (i, v) in vals.iter().enumerate() {
            if let Some(v) = v {
                slot[i].push(*v);
            }
        }
    }
    if means {
        for (c, cols) in &per_class {
            let mut row = vec![format!("geomean ({c})"), c.to_string()];
            row.extend(cols.iter().map(|xs| fmt3(geomean(xs))));
            rows.push(row);
        }
        let all: Vec<Vec<f64>> = (0..policies.len())
            .map(|i| {
                per_class
                    .values()
                    .flat_map(|cols| cols[i].clone())
                    .collect()
            })
            .collect();
        let mut row = vec!["geomean (all)".to_string(), "all".to_string()];
        row.extend(all.iter().map(|xs| fmt3(geomean(xs))));
        rows.push(row);
    }
    Table {
        name: name.to_string(),
        title,
        note: note.to_string(),
        header,
        rows,
    }
}

/// The run's kernel time in seconds: simulated cycles / the GPU's core clock (PAVER §6.3:
/// "kernel execution cycles and core frequency (from Table 1)").
fn kernel_seconds(r: &Record) -> Option<f64> {
    let mhz = r.stat("config.gpu.core.clock_mhz")?;
    if mhz <= 0.0 {
        return None;
    }
    Some(r.stat("cycles")? / (mhz * 1e6))
}

/// The JIT time a run pays, PAVER §6.3: the analysis and partition seconds that made a
/// PAVER policy's groups; 0 for the policies without groups (LRR, BCS, ...).
fn jit_seconds(r: &Record) -> f64 {
    if is_paver(&r.tb_policy) {
        r.timing.analysis_s + r.timing.partition_s
    } else {
        0.0
    }
}

/// Every table the records support.
pub fn tables(records: &[Record]) -> Vec<Table> {
    let (g, class) = grid(records);
    let mut out = Vec::new();
    for (set, kernels) in &g {
        let s = slug(set);
        out.push(normalised(
            &format!("speedup_{s}"),
            format!("Speedup over LRR, {set} (PAVER Fig. 11)"),
            "LRR cycles / policy cycles (simulated kernel time; the analysis and partition \
             time is in the Fig. 10 table). Above 1 is faster than LRR.",
            kernels,
            &class,
            |r, lrr| Some(lrr?.stat("cycles")? / r.stat("cycles")?),
            true,
        ));
        out.push(normalised(
            &format!("l2_accesses_{s}"),
            format!("L2 accesses normalised to LRR, {set} (PAVER Fig. 11)"),
            "policy L2 accesses / LRR L2 accesses. Below 1 is fewer accesses than LRR.",
            kernels,
            &class,
            |r, lrr| Some(r.stat("l2.accesses")? / lrr?.stat("l2.accesses")?),
            true,
        ));
        out.push(normalised(
            &format!("l1_miss_rate_{s}"),
            format!("L1 miss rate, {set} (PAVER Fig. 12)"),
            "L1 misses / L1 accesses (MSHR merges count as hits).",
            kernels,
            &class,
            |r, _| {
                let a = r.stat("l1.accesses")?;
                (a > 0.0).then(|| r.stat("l1.misses").unwrap_or(0.0) / a)
            },
            false,
        ));
        out.push(normalised(
            &format!("speedup_jit_{s}"),
            format!("Speedup over LRR with the analysis time, {set} (PAVER Fig. 11's definition)"),
            "LRR kernel time / (policy kernel time + analysis and partition time), kernel time = \
             simulated cycles / core clock, PAVER §6.3's speedup: the PAVER policies pay the \
             wall-clock seconds of the analysis and partition that made their groups on the \
             machine that ran the sweep (so it varies between sweeps); LRR and BCS pay none.",
            kernels,
            &class,
            |r, lrr| {
                let base = kernel_seconds(lrr?)?;
                let t = kernel_seconds(r)? + jit_seconds(r);
                (t > 0.0).then(|| base / t)
            },
            true,
        ));
        out.push(normalised(
            &format!("jit_overhead_{s}"),
            format!("Analysis and partition time against kernel time, {set} (PAVER Fig. 10)"),
            "(analysis + partition seconds on this machine) / (simulated cycles / core clock). \
             Wall-clock on the machine that ran the sweep, so it varies between sweeps.",
            kernels,
            &class,
            |r, _| {
                let kernel_s = kernel_seconds(r)?;
                (kernel_s > 0.0).then(|| jit_seconds(r) / kernel_s)
            },
            false,
        ));
        // Fig. 13: for each PAVER policy run both with and without stealing.
        let mut steal_rows = Vec::new();
        for (k, by_policy) in kernels {
            // RB-TS once per leaf rule (`rb-ts`, `rb-ts le`), as in the other tables.
            let variants = [
                ("mst-ts", None),
                ("kway-ts", None),
                ("rb-ts", Some("lt")),
                ("rb-ts", Some("le")),
                ("ld", None),
            ];
            for (p, rule) in variants {
                let find = |steal: bool| {
                    by_policy.values().find(|r| {
                        r.tb_policy == p
                            && r.steal == steal
                            && r.rb_leaf() == rule
                            && r.variants.is_empty()
                    })
                };
                if let (Some(w), Some(n)) = (find(true), find(false)) {
                    let name = match rule {
                        Some("le") => format!("{p} le"),
                        _ => p.to_string(),
                    };
                    steal_rows.push(vec![
                        k.clone(),
                        name,
                        fmt3(n.stat("cycles").zip(w.stat("cycles")).map(|(a, b)| a / b)),
                        w.stat("stolen_tbs").map_or("-".into(), |v| format!("{v}")),
                        fmt3(
                            w.stat("l2.accesses")
                                .zip(n.stat("l2.accesses"))
                                .map(|(a, b)| a / b),
                        ),
                    ]);
                }
            }
        }
        if !steal_rows.is_empty() {
            out.push(Table {
                name: format!("stealing_{s}"),
                title: format!("Effect of task stealing, {set} (PAVER Fig. 13)"),
                note: "speedup = cycles without stealing / cycles with; L2 ratio = L2 accesses \
                       with / without."
                    .into(),
                header: [
                    "kernel",
                    "policy",
                    "speedup from stealing",
                    "TBs stolen",
                    "L2 ratio",
                ]
                .map(String::from)
                .to_vec(),
                rows: steal_rows,
            });
        }
    }
    // Table 2 and Fig. 2: one row per launch, from any record that carries the analysis.
    let mut seen = BTreeSet::new();
    let mut t2 = Vec::new();
    for r in records {
        let Some(a) = &r.analysis else { continue };
        let k = launch_label(r);
        if !seen.insert(k.clone()) {
            continue;
        }
        let n = |key: &str| a.get(key).and_then(|v| v.as_f64());
        let c = |key: &str| {
            a.get("categories")
                .and_then(|v| v.get(key))
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0)
        };
        let total = c("unshared") + c("intra_tb") + c("inter_tb") + c("both");
        let pct = |x: f64| {
            if total > 0.0 {
                format!("{:.1}", 100.0 * x / total)
            } else {
                "-".into()
            }
        };
        t2.push(vec![
            k,
            r.locality_class.clone().unwrap_or_else(|| "-".into()),
            n("total_tbs").map_or("-".into(), |v| format!("{v}")),
            n("total_data_references").map_or("-".into(), |v| format!("{v}")),
            fmt3(n("spscore")),
            fmt3(n("degree_of_sharing")),
            n("edges").map_or("-".into(), |v| format!("{v}")),
            pct(c("unshared")),
            pct(c("intra_tb")),
            pct(c("inter_tb")),
            pct(c("both")),
        ]);
    }
    if !t2.is_empty() {
        out.push(Table {
            name: "table2".into(),
            title: "Launch statistics (PAVER Table 2) and data-reference categories (Fig. 2)"
                .into(),
            note: "Categories in % of data units: read by one warp of one TB (unshared), by \
                   several warps of one TB (intra), by several TBs (inter), by several TBs and \
                   several warps of one (both). Class: high when at least 50 % of the data \
                   references are to units other TBs read (the degree of sharing)."
                .into(),
            header: [
                "kernel",
                "class",
                "TBs",
                "data refs",
                "SPscore",
                "sharing",
                "edges",
                "unshared %",
                "intra %",
                "inter %",
                "both %",
            ]
            .map(String::from)
            .to_vec(),
            rows: t2,
        });
    }
    out
}

/// The heat maps' table (PAVER Fig. 5): one row per analysed launch, naming its figure.
pub fn heatmap_table(maps: &[Heatmap]) -> Table {
    Table {
        name: "heatmaps".into(),
        title: "TB locality heat maps (PAVER Fig. 5)".into(),
        note: format!(
            "The locality graph of each launch as a matrix of TB pairs, max-pooled to at \
             most {} cells a side; the figures are under `figures/`.",
            super::heatmap::MAX_SIDE
        ),
        header: [
            "kernel",
            "class",
            "TBs",
            "edges",
            "max weight",
            "cells a side",
            "figure",
        ]
        .map(String::from)
        .to_vec(),
        rows: maps
            .iter()
            .map(|m| {
                vec![
                    m.label(),
                    m.locality_class.clone(),
                    m.num_tbs.to_string(),
                    m.edges.to_string(),
                    m.max_weight.to_string(),
                    m.side.to_string(),
                    format!("figures/{}.svg", m.figure_stem()),
                ]
            })
            .collect(),
    }
}

/// Markdown images of the heat maps, two to a row of text.
pub fn heatmap_images(maps: &[Heatmap]) -> String {
    let mut s = String::from("### Heat maps\n\n");
    for m in maps {
        s.push_str(&format!(
            "![{}](figures/{}.svg)\n",
            m.label(),
            m.figure_stem()
        ));
    }
    s.push('\n');
    s
}

/// What the runs' simulations cost, summed over the records: wall time, and CPU time where
/// the records have it (records of builds before `simulate_cpu_s` do not).
fn cost(records: &[Record]) -> String {
    let wall: f64 = records.iter().map(|r| r.timing.simulate_s).sum();
    let cpu: Vec<f64> = records
        .iter()
        .filter_map(|r| r.timing.simulate_cpu_s)
        .collect();
    let mut s = format!(
        "Simulation time summed over the runs: {} of wall clock",
        duration(wall)
    );
    if cpu.is_empty() {
        s.push_str(" (no record has its CPU time).");
    } else {
        s.push_str(&format!(
            ", {} of CPU in the {} of {} runs that record it.",
            duration(cpu.iter().sum()),
            cpu.len(),
            records.len()
        ));
    }
    s
}

/// Seconds as a person reads them: `42.0 s`, `12.5 min`, `3.25 h`.
fn duration(secs: f64) -> String {
    if secs < 120.0 {
        format!("{secs:.1} s")
    } else if secs < 7200.0 {
        format!("{:.1} min", secs / 60.0)
    } else {
        format!("{:.2} h", secs / 3600.0)
    }
}

/// The Markdown report: every table, and the failed runs.
pub fn markdown(records: &[Record], tables: &[Table]) -> String {
    let ok = records.iter().filter(|r| r.ok()).count();
    let mut s = format!(
        "# paver sweep report\n\n{} runs: {ok} ok, {} failed.\n\n{}\n\n",
        records.len(),
        records.len() - ok,
        cost(records)
    );
    for t in tables {
        s.push_str(&t.markdown());
    }
    let failed: Vec<&Record> = records.iter().filter(|r| !r.ok()).collect();
    if !failed.is_empty() {
        s.push_str("### Failed runs\n\n| kernel | gpu | policy | error |\n|---|---|---|---|\n");
        for r in failed {
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                launch_label(r),
                r.gpu,
                policy_label(r),
                r.error
                    .as_deref()
                    .unwrap_or("")
                    .replace('|', "\\|")
                    .replace('\n', " ")
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Timing, FORMAT};

    fn rec(kernel: &str, policy: &str, steal: bool, cycles: u64, l2: u64) -> Record {
        Record {
            format: FORMAT.into(),
            key: format!("{kernel}{policy}{steal}"),
            index: 0,
            kernel: kernel.into(),
            ptx: "k.ptx".into(),
            launch: "small.json".into(),
            ptx_sha256: String::new(),
            launch_sha256: String::new(),
            gpu: "titanv".into(),
            tb_policy: policy.into(),
            warp_policy: "gto".into(),
            steal,
            overrides: vec![],
            rb_leaf: (policy == "rb-ts").then(|| "lt".into()),
            variants: Vec::new(),
            max_instructions: 1,
            sample: false,
            locality_class: Some(if kernel == "a" { "high" } else { "low" }.into()),
            inter_tb_fraction: None,
            analysis: None,
            paver_version: "0".into(),
            paver_build: "0".into(),
            status: "ok".into(),
            error: None,
            timing: Timing::default(),
            stats: Some(serde_json::json!({
                "cycles": cycles, "stolen_tbs": 2,
                "l1": {"accesses": 10, "misses": 4}, "l2": {"accesses": l2},
                "config": {"gpu": {"core": {"clock_mhz": 1000}}}
            })),
        }
    }

    #[test]
    fn cost_sums_wall_and_the_cpu_time_records_have() {
        let mut a = rec("a", "lrr", false, 100, 10);
        let mut b = rec("a", "bcs", false, 100, 10);
        let c = rec("a", "rb-ts", true, 100, 10);
        a.timing.simulate_s = 8400.0;
        a.timing.simulate_cpu_s = Some(1800.0);
        b.timing.simulate_s = 600.0;
        b.timing.simulate_cpu_s = Some(540.0);
        assert_eq!(
            cost(&[a, b, c.clone()]),
            "Simulation time summed over the runs: 2.50 h of wall clock, 39.0 min of CPU in \
             the 2 of 3 runs that record it."
        );
        assert_eq!(
            cost(&[c]),
            "Simulation time summed over the runs: 0.0 s of wall clock (no record has its CPU \
             time)."
        );
    }

    #[test]
    fn rb_ts_leaf_rule_named_where_it_is_not_the_default() {
        let lt = rec("a", "rb-ts", true, 800, 50);
        assert_eq!(policy_label(&lt), "rb-ts");
        let mut le = rec("a", "rb-ts", false, 800, 50);
        le.rb_leaf = Some("le".into());
        assert_eq!(policy_label(&le), "rb-ts le no-steal");
        // A record from before the rule was recorded was made with `<= x`.
        let mut old = rec("a", "rb-ts", true, 800, 50);
        old.rb_leaf = None;
        assert_eq!(policy_label(&old), "rb-ts le");
        let line = serde_json::to_string(&old).unwrap();
        assert!(!line.contains("rb_leaf"));
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back.rb_leaf(), Some("le"));
        assert_eq!(policy_label(&rec("a", "kway-ts", true, 1, 1)), "kway-ts");
    }

    #[test]
    fn speedup_and_l2_normalised_to_lrr_with_class_means() {
        let rs = vec![
            rec("a", "lrr", false, 1000, 100),
            rec("a", "rb-ts", true, 800, 50),
            rec("a", "rb-ts", false, 900, 60),
            rec("b", "lrr", false, 1000, 100),
            rec("b", "rb-ts", true, 1250, 200),
        ];
        let ts = tables(&rs);
        let speed = ts
            .iter()
            .find(|t| t.name == "speedup_titanv")
            .expect("speedup");
        assert_eq!(
            speed.header,
            vec!["kernel", "class", "lrr", "rb-ts", "rb-ts no-steal"]
        );
        assert_eq!(
            speed.rows[0],
            vec!["a (small)", "high", "1.000", "1.250", "1.111"]
        );
        assert_eq!(
            speed.rows[1],
            vec!["b (small)", "low", "1.000", "0.800", "-"]
        );
        let all = speed.rows.last().expect("mean row");
        // Geometric mean of 1.25 and 0.8 is 1.
        assert_eq!(
            all,
            &vec!["geomean (all)", "all", "1.000", "1.000", "1.111"]
        );
        let l2 = ts
            .iter()
            .find(|t| t.name == "l2_accesses_titanv")
            .expect("l2");
        assert_eq!(l2.rows[0][3], "0.500");
        let st = ts
            .iter()
            .find(|t| t.name == "stealing_titanv")
            .expect("steal");
        assert_eq!(
            st.rows,
            vec![vec!["a (small)", "rb-ts", "1.125", "2", "0.833"]]
        );
        let l1 = ts
            .iter()
            .find(|t| t.name == "l1_miss_rate_titanv")
            .expect("l1");
        assert_eq!(l1.rows[0][2], "0.400");
        let md = markdown(&rs, &ts);
        assert!(
            md.contains("| a (small) | high | 1.000 | 1.250 | 1.111 |"),
            "{md}"
        );
        assert_eq!(speed.csv().lines().count(), 1 + speed.rows.len());
    }

    #[test]
    fn speedup_with_the_analysis_time_as_the_paper_defines_it() {
        // 1000 MHz: LRR 1000 cycles = 1 us. RB-TS 800 cycles = 0.8 us, plus 0.15 us of
        // analysis and 0.05 us of partition = 1 us: speedup 1.0 (0.8 us alone: 1.25).
        // BCS pays no JIT time even when its record carries an analysis time.
        let lrr = rec("a", "lrr", false, 1000, 100);
        let mut rb = rec("a", "rb-ts", true, 800, 50);
        rb.timing.analysis_s = 0.15e-6;
        rb.timing.partition_s = 0.05e-6;
        let mut bcs = rec("a", "bcs", false, 500, 100);
        bcs.timing.analysis_s = 1.0;
        // Kernel b at 2000 MHz: LRR 4000 cycles = 2 us; Kway-TS 2000 cycles = 1 us + 3 us
        // of analysis = 4 us: 0.5.
        let mut lrr_b = rec("b", "lrr", false, 4000, 100);
        let mut kway = rec("b", "kway-ts", true, 2000, 100);
        for r in [&mut lrr_b, &mut kway] {
            r.stats.as_mut().unwrap()["config"]["gpu"]["core"]["clock_mhz"] = 2000.into();
        }
        kway.timing.analysis_s = 3e-6;
        let ts = tables(&[lrr, rb, bcs, lrr_b, kway]);
        let jit = ts
            .iter()
            .find(|t| t.name == "speedup_jit_titanv")
            .expect("speedup with JIT");
        assert_eq!(
            jit.header,
            vec!["kernel", "class", "lrr", "bcs", "kway-ts", "rb-ts"]
        );
        assert_eq!(
            jit.rows[0],
            vec!["a (small)", "high", "1.000", "2.000", "-", "1.000"]
        );
        assert_eq!(
            jit.rows[1],
            vec!["b (small)", "low", "1.000", "-", "0.500", "-"]
        );
        // The plain speedup beside it is unchanged.
        let plain = ts.iter().find(|t| t.name == "speedup_titanv").unwrap();
        assert_eq!(
            plain.rows[0],
            vec!["a (small)", "high", "1.000", "2.000", "-", "1.250"]
        );
        // b: 4000 / 2000 cycles.
        assert_eq!(plain.rows[1][4], "2.000");
    }
}
