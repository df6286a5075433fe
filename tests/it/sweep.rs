//! `paver sweep` and `paver report` end to end: plan errors, records and CSV, resumption
//! after an interrupted sweep, shards whose union is the whole plan, determinism across
//! worker counts, failed runs recorded, the Slurm script, and the report's tables.

use std::path::{Path, PathBuf};

use crate::common::{paver, root};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("paver-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A plan of 2 GPUs x (lrr, bcs, rb-ts with and without stealing) over mm_naive and the two
/// mvt kernels (found by glob): 3 launches x 2 GPUs x 4 = 24 runs.
fn plan(dir: &Path) -> PathBuf {
    let k = root().join("kernels");
    let text = format!(
        "gpus = [\"fermi\", \"volta\"]\n\
         tb_policies = [\"lrr\", \"bcs\", \"rb-ts\"]\n\
         steal = [true, false]\n\
         [[kernels]]\n\
         ptx = \"{k}/mm_naive/mm_naive.compute_70.ptx\"\n\
         launch = \"{k}/mm_naive/small.json\"\n\
         [[kernels]]\n\
         launch = \"{k}/mvt/small.*.json\"\n\
         ptx = \"{{dir}}/mvt.compute_70.ptx\"\n",
        k = k.display()
    );
    let p = dir.join("plan.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn sweep(args: &[&str]) -> String {
    let out = paver(args);
    assert!(
        out.status.success(),
        "paver {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes `text` as `d/plan.toml` and sweeps it into `d/out`: the folder and the sweep's
/// standard error.
fn sweep_plan(d: &Path, text: &str) -> (PathBuf, String) {
    let plan = d.join("plan.toml");
    std::fs::write(&plan, text).unwrap();
    let out = d.join("out");
    let err = sweep(&["sweep", s(&plan), "-o", s(&out)]);
    (out, err)
}

/// The records of a sweep folder without their wall-clock timings, one JSON per line.
fn records(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("runs.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("timing");
            v
        })
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The sweep's heat map of mm_naive's small launch (a 4 x 4 grid of 16 x 16 TBs, n = 64,
/// f32, 128 B lines) against a hand count: TB (bx, by) reads the 16 rows of A of its row
/// band (16 x 256 B = 32 lines, shared with the TBs of the same `by`) and 16 columns of
/// B in every one of the 64 rows (64 B of a 128 B line, so the line is shared with the TB
/// whose `bx` differs only in the last bit: 64 lines). Weight = 32 [same by] + 64 [same
/// bx / 2]; no pooling at 16 TBs, and the diagonal is empty.
fn mm_naive_heatmap_by_hand(sweep_dir: &Path) {
    let maps: Vec<serde_json::Value> = std::fs::read_dir(sweep_dir.join("heatmaps"))
        .unwrap()
        .map(|e| {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            serde_json::from_str(&text).unwrap()
        })
        .collect();
    assert_eq!(maps.len(), 3, "one heat map per launch");
    let m = maps.iter().find(|m| m["kernel"] == "mm_naive").unwrap();
    assert_eq!(m["format"], "paver-heatmap/1");
    assert_eq!(
        (m["num_tbs"].as_u64(), m["side"].as_u64()),
        (Some(16), Some(16))
    );
    let cells: Vec<u64> = m["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    let mut edges = 0;
    for i in 0..16usize {
        for j in 0..16usize {
            let (bx, by, bx2, by2) = (i % 4, i / 4, j % 4, j / 4);
            let want = if i == j {
                0
            } else {
                32 * u64::from(by == by2) + 64 * u64::from(bx / 2 == bx2 / 2)
            };
            assert_eq!(cells[i * 16 + j], want, "cell ({i}, {j})");
            edges += u64::from(i < j && want > 0);
        }
    }
    assert_eq!(m["max_weight"], 96);
    assert_eq!(m["edges"], edges);
}

#[test]
fn sweep_records_resume_shards_and_report() {
    let d = tmp("main");
    let plan = plan(&d);
    let full = d.join("full");
    sweep(&["sweep", s(&plan), "-o", s(&full), "--jobs", "2", "--quiet"]);
    let all = records(&full);
    assert_eq!(all.len(), 24);
    assert!(all.iter().all(|r| r["status"] == "ok"), "{all:?}");
    for (i, r) in all.iter().enumerate() {
        assert_eq!(r["index"], i, "records in plan order");
    }
    // Stealing varies only for the PAVER policy.
    let lrr: Vec<_> = all.iter().filter(|r| r["tb_policy"] == "lrr").collect();
    assert_eq!(lrr.len(), 6);
    assert!(lrr.iter().all(|r| r["steal"] == false));
    // RB-TS's leaf rule is recorded on rb-ts runs (the default, `lt`), absent elsewhere.
    assert!(lrr.iter().all(|r| r.get("rb_leaf").is_none()));
    let rb: Vec<_> = all.iter().filter(|r| r["tb_policy"] == "rb-ts").collect();
    assert_eq!(rb.len(), 12);
    assert!(rb.iter().all(|r| r["rb_leaf"] == "lt"));
    // Every run carries its inputs' hashes and its statistics.
    let r0 = &all[0];
    assert_eq!(r0["kernel"], "mm_naive");
    assert_eq!(r0["gpu"], "gtx480");
    assert_eq!(r0["ptx_sha256"].as_str().unwrap().len(), 64);
    assert!(r0["stats"]["cycles"].as_u64().unwrap() > 0);
    assert_eq!(r0["locality_class"], "high");
    mm_naive_heatmap_by_hand(&full);
    // Each run's CPU time beside its wall time (Unix has a thread CPU clock): the
    // simulation runs on one thread, so it is positive and at most the wall time.
    if cfg!(unix) {
        let text = std::fs::read_to_string(full.join("runs.jsonl")).unwrap();
        for line in text.lines() {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            let (wall, cpu) = (&r["timing"]["simulate_s"], &r["timing"]["simulate_cpu_s"]);
            let (wall, cpu) = (
                wall.as_f64().unwrap(),
                cpu.as_f64().expect("simulate_cpu_s"),
            );
            assert!(
                cpu > 0.0 && cpu <= wall + 0.01,
                "cpu {cpu} s, wall {wall} s"
            );
        }
    }

    // runs.csv: a header with the documented columns, one row per record.
    let csv = std::fs::read_to_string(full.join("runs.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for c in [
        "kernel",
        "gpu",
        "tb_policy",
        "warp_policy",
        "steal",
        "rb_leaf",
        "cycles",
        "l2_accesses",
    ] {
        assert!(header.contains(&c), "column {c} in {header:?}");
    }
    assert_eq!(csv.lines().count(), 25);
    let cyc = header.iter().position(|c| *c == "cycles").unwrap();
    let row1: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row1.len(), header.len());
    assert_eq!(row1[cyc], r0["stats"]["cycles"].to_string());

    // The same plan on one worker gives the same records.
    let one = d.join("one");
    sweep(&["sweep", s(&plan), "-o", s(&one), "--jobs", "1", "--quiet"]);
    assert_eq!(
        records(&one),
        all,
        "records do not depend on the worker count"
    );

    // Interrupted: keep 5 records and half of a sixth; the resumed sweep makes the other 19.
    let cut = d.join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    let text = std::fs::read_to_string(full.join("runs.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut partial = lines[..5].join("\n");
    partial.push('\n');
    partial.push_str(&lines[5][..40]);
    std::fs::write(cut.join("runs.jsonl"), partial).unwrap();
    let err = sweep(&["sweep", s(&plan), "-o", s(&cut), "--jobs", "2"]);
    assert!(err.contains("dropped an unfinished last record"), "{err}");
    assert!(err.contains("5 already recorded; running 19"), "{err}");
    assert_eq!(
        records(&cut),
        all,
        "a resumed sweep ends with the whole plan"
    );
    let again = sweep(&["sweep", s(&plan), "-o", s(&cut)]);
    assert!(again.contains("running 0"), "{again}");

    // Three shards: disjoint, and their union (merged by `paver report`) is the plan.
    let mut shard_dirs = Vec::new();
    let mut sizes = 0;
    for i in 0..3 {
        let sd = d.join(format!("shard-{i}"));
        sweep(&[
            "sweep",
            s(&plan),
            "-o",
            s(&sd),
            "--shard",
            &format!("{i}/3"),
            "--quiet",
        ]);
        let rs = records(&sd);
        assert!(rs.iter().all(|r| r["index"].as_u64().unwrap() % 3 == i));
        sizes += rs.len();
        shard_dirs.push(sd);
    }
    assert_eq!(sizes, 24);
    let merged = d.join("merged");
    let mut args = vec!["report"];
    args.extend(shard_dirs.iter().map(|p| s(p)));
    args.extend(["-o", s(&merged)]);
    sweep(&args);
    assert_eq!(
        records(&merged),
        all,
        "the shards' union is the whole sweep"
    );

    // The report: one speedup table per GPU with LRR = 1 and a geometric mean per class.
    let t = std::fs::read_to_string(merged.join("tables/speedup_titanv.csv")).unwrap();
    let rows: Vec<Vec<&str>> = t.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows[0],
        vec!["kernel", "class", "lrr", "bcs", "rb-ts", "rb-ts no-steal"]
    );
    // 3 kernels, then geometric means for the high and low classes and for all.
    assert_eq!(rows.len(), 1 + 3 + 3, "{t}");
    assert!(rows[1..].iter().all(|r| r[2] == "1.000"), "{t}");
    assert_eq!(rows[4][0], "geomean (high)");
    let md = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(md.contains("24 runs: 24 ok, 0 failed."), "{md}");
    if cfg!(unix) {
        assert!(
            md.contains("of CPU in the 24 of 24 runs that record it."),
            "{md}"
        );
    }
    assert!(md.contains("### Effect of task stealing, gtx480 (PAVER Fig. 13)"));
    let t2 = std::fs::read_to_string(merged.join("tables/table2.csv")).unwrap();
    assert_eq!(t2.lines().count(), 4, "{t2}");
    // Figures: speedup, speedup with the analysis time, L2, L1 and stealing per GPU, Fig. 2,
    // and a heat map per launch (Fig. 5), each as SVG and PNG.
    let figs = std::fs::read_dir(merged.join("figures")).unwrap().count();
    assert_eq!(figs, 2 * (2 * 5 + 1) + 2 * 3);
    let jit = std::fs::read_to_string(merged.join("tables/speedup_jit_titanv.csv")).unwrap();
    assert!(jit.starts_with("kernel,class,lrr"), "{jit}");
    let hm = std::fs::read_to_string(merged.join("tables/heatmaps.csv")).unwrap();
    assert_eq!(hm.lines().count(), 1 + 3, "{hm}");
    assert!(md.contains("![mm_naive (small)](figures/heatmap_mm_naive.small."));
    let svg = std::fs::read_to_string(merged.join("figures/speedup_titanv.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("Speedup over LRR, titanv"));
    for label in [
        "mm_naive (small)",
        "mvt_kernel1 (small.mvt_kernel1)",
        "rb-ts no-steal",
    ] {
        assert!(svg.contains(label), "{label} in the SVG");
    }
    let png = std::fs::read(merged.join("figures/table2.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_failed_run_is_recorded_and_the_sweep_goes_on() {
    let d = tmp("fail");
    let k = root().join("kernels");
    // A launch for mm_naive given with a PTX that has no such kernel: every run of that
    // launch fails to bind; the other launch's runs succeed.
    let text = format!(
        "gpus = [\"volta\"]\ntb_policies = [\"lrr\", \"rb-ts\"]\n\
         [[kernels]]\nptx = \"{k}/mvt/mvt.compute_70.ptx\"\nlaunch = \"{k}/mm_naive/small.json\"\n\
         [[kernels]]\nptx = \"{k}/mm_naive/mm_naive.compute_70.ptx\"\nlaunch = \"{k}/mm_naive/small.json\"\n",
        k = k.display()
    );
    let (out, err) = sweep_plan(&d, &text);
    assert!(err.contains("2 failed now"), "{err}");
    let rs = records(&out);
    assert_eq!(rs.len(), 4);
    assert_eq!(rs[0]["status"], "error");
    assert!(
        rs[0]["error"].as_str().unwrap().contains("mm_naive"),
        "{:?}",
        rs[0]
    );
    assert_eq!(rs[0]["kernel"], "mm_naive");
    assert_eq!(rs[2]["status"], "ok");
    let md_dir = d.join("rep");
    sweep(&["report", s(&out), "-o", s(&md_dir)]);
    let md = std::fs::read_to_string(md_dir.join("report.md")).unwrap();
    assert!(md.contains("4 runs: 2 ok, 2 failed."), "{md}");
    assert!(md.contains("### Failed runs"));
    let _ = std::fs::remove_dir_all(&d);
}

/// A launch whose static analysis is refused (here a budget of 0 MiB, too small for the
/// TBs themselves) still runs under the policies that need no graph:
/// LRR and BCS simulate, the PAVER policy's run records the analysis's refusal.
#[test]
fn lrr_and_bcs_run_when_the_analysis_is_refused() {
    let d = tmp("budget");
    let k = root().join("kernels");
    let text = format!(
        "gpus = [\"volta\"]\ntb_policies = [\"lrr\", \"bcs\", \"rb-ts\"]\n\
         analysis_max_memory_mib = 0\n\
         [[kernels]]\nptx = \"{k}/mm_naive/mm_naive.compute_70.ptx\"\nlaunch = \"{k}/mm_naive/small.json\"\n",
        k = k.display()
    );
    let (out, err) = sweep_plan(&d, &text);
    assert!(err.contains("1 failed now"), "{err}");
    let rs = records(&out);
    assert_eq!(rs.len(), 3);
    for r in &rs[..2] {
        assert_eq!(r["status"], "ok", "{r:?}");
        assert!(r["stats"]["cycles"].as_u64().unwrap() > 0);
        assert!(r["locality_class"].is_null(), "{r:?}");
    }
    assert_eq!(rs[2]["tb_policy"], "rb-ts");
    assert_eq!(rs[2]["status"], "error");
    let e = rs[2]["error"].as_str().unwrap();
    assert!(
        e.starts_with("static analysis: ") && e.contains("budget of 0 MiB"),
        "{e}"
    );
    // No graph, no heat map.
    assert!(
        !out.join("heatmaps").exists()
            || std::fs::read_dir(out.join("heatmaps"))
                .unwrap()
                .next()
                .is_none()
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn plan_errors_are_usage_errors_with_the_plan_named() {
    let d = tmp("errors");
    let cases = [
        ("gpus = [\"volta\"]\ntb_policies = [\"lrr\"]\n", "no [[kernels]] entry"),
        ("gpus = [\"volta\"\n", "plan.toml"),
        (
            "gpus = [\"volta\"]\ntb_policies = [\"fifo\"]\n[[kernels]]\nptx = \"a\"\nlaunch = \"b\"\n",
            "unknown policy `fifo`",
        ),
        (
            "gpus = [\"volta\"]\ntb_policies = [\"lrr\"]\n[[kernels]]\nptx = \"a.ptx\"\nlaunch = \"none/*.json\"\n",
            "matches no file",
        ),
    ];
    for (text, want) in cases {
        let plan = d.join("plan.toml");
        std::fs::write(&plan, text).unwrap();
        let out = paver(&["sweep", s(&plan), "-o", s(&d.join("o"))]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(
            err.contains(want) && err.contains("plan.toml"),
            "{text}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = paver(&["sweep", s(&plan(&d)), "-o", "x", "--shard", "3/3"]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn emit_slurm_writes_a_job_array_over_the_shards() {
    let d = tmp("slurm");
    let plan = plan(&d);
    let out = d.join("out");
    sweep(&["sweep", s(&plan), "-o", s(&out), "--emit-slurm", "4"]);
    let script = std::fs::read_to_string(out.join("sweep.sbatch")).unwrap();
    assert!(script.starts_with("#!/bin/bash\n"));
    assert!(script.contains("#SBATCH --array=0-3\n"), "{script}");
    assert!(
        script.contains("--shard \"$SLURM_ARRAY_TASK_ID\"/4"),
        "{script}"
    );
    assert!(
        script.contains("shard-\"$SLURM_ARRAY_TASK_ID\""),
        "{script}"
    );
    assert!(!out.join("runs.jsonl").exists(), "nothing ran");
    let _ = std::fs::remove_dir_all(&d);
}

/// A real Slurm job array: `--emit-slurm 4`, `sbatch --wait`, `paver report` over the four
/// shards, and the merged records equal a single-machine sweep's. Needs a running cluster
/// (`SLURM_CONF`); `.ci/run` starts a one-node one with tests/slurm/cluster.sh and runs
/// this test, or says why it cannot:
///
/// ```sh
/// eval "$(tests/slurm/cluster.sh start /tmp/paver-slurm)"
/// cargo test --release --test it -- --ignored slurm_job_array
/// ```
#[test]
#[ignore = "needs a Slurm cluster: see .ci/run and tests/slurm/cluster.sh"]
fn slurm_job_array_equals_single_machine_sweep() {
    assert!(
        std::env::var_os("SLURM_CONF").is_some(),
        "SLURM_CONF is not set: start a cluster with tests/slurm/cluster.sh"
    );
    let d = tmp("slurm-array");
    let plan = plan(&d);
    let single = d.join("single");
    sweep(&["sweep", s(&plan), "-o", s(&single), "--quiet"]);
    let arr = d.join("array");
    sweep(&["sweep", s(&plan), "-o", s(&arr), "--emit-slurm", "4"]);
    let out = std::process::Command::new("sbatch")
        .arg("--wait")
        .arg(arr.join("sweep.sbatch"))
        .output()
        .expect("run sbatch");
    assert!(
        out.status.success(),
        "sbatch --wait: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let shards: Vec<PathBuf> = (0..4).map(|i| arr.join(format!("shard-{i}"))).collect();
    for sd in &shards {
        assert!(sd.join("runs.jsonl").is_file(), "{} missing", sd.display());
    }
    let merged = arr.join("merged");
    let mut args = vec!["report"];
    args.extend(shards.iter().map(|p| s(p)));
    args.extend(["-o", s(&merged)]);
    let err = sweep(&args);
    assert!(!err.contains("shards missing"), "{err}");
    assert_eq!(records(&merged), records(&single));
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 36: a plan's override runs the experiment `paver simulate` runs with the flag that
/// sets the same key (the sweep once left the Locality Descriptor hints out, so
/// `ld.cache_policy=ld` ran the plain cache).
#[test]
fn a_sweep_override_runs_what_simulate_runs() {
    let d = tmp("ld-override");
    let k = root().join("kernels");
    let text = format!(
        "gpus = [\"volta\"]\n\
         tb_policies = [\"lrr\"]\n\
         overrides = [[\"ld.cache_policy=ld\", \"ld.prefetch=ld\"]]\n\
         [[kernels]]\n\
         ptx = \"{k}/syrk/syrk.compute_70.ptx\"\n\
         launch = \"{k}/syrk/small.json\"\n",
        k = k.display()
    );
    let (out, _) = sweep_plan(&d, &text);
    let recs = records(&out);
    assert_eq!(recs.len(), 1);
    let sweep_stats = &recs[0]["stats"];
    let sim = crate::common::paver_ok(&[
        "simulate",
        "kernels/syrk/syrk.compute_70.ptx",
        "--launch",
        "kernels/syrk/small.json",
        "--gpu",
        "volta",
        "--tb-policy",
        "lrr",
        "--cache-policy",
        "ld",
        "--prefetch",
        "ld",
        "--max-instructions",
        &u64::MAX.to_string(),
        "-q",
    ]);
    let sim: serde_json::Value = serde_json::from_str(&sim).unwrap();
    assert!(
        sim["ld"]["prefetches_issued"].as_u64().unwrap() > 0,
        "{}",
        sim["ld"]
    );
    assert_eq!(sweep_stats, &sim);
    let _ = std::fs::remove_dir_all(&d);
}
