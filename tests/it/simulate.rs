//! `paver simulate` end to end: stats JSON with the issue's fields, byte-identical across
//! runs, overrides applied and echoed, PAVER policies with or without a schedule, usage errors.

use serde_json::Value;

use crate::common::{paver_err, paver_ok};

const PTX: &str = "kernels/mm_naive/mm_naive.compute_70.ptx";
const LAUNCH: &str = "kernels/mm_naive/small.json";

fn stats(extra: &[&str]) -> (String, Value) {
    let mut args = vec!["simulate", PTX, "--launch", LAUNCH, "--quiet"];
    args.extend_from_slice(extra);
    let out = paver_ok(&args);
    let v: Value = serde_json::from_str(&out).unwrap();
    (out, v)
}

#[test]
fn simulate_writes_stats_with_the_issue_fields_deterministically() {
    let (a, v) = stats(&[
        "--gpu",
        "volta",
        "--set",
        "core.num_sms=4",
        "--tb-policy",
        "lrr",
    ]);
    for key in [
        "cycles",
        "ipc",
        "warp_instructions",
        "stolen_tbs",
        "l1",
        "l2",
        "noc",
        "dram",
        "sms",
        "config",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for key in [
        "accesses",
        "hits",
        "misses",
        "hit_reserve",
        "reservation_fails",
    ] {
        assert!(v["l1"].get(key).is_some(), "l1.{key}");
    }
    assert_eq!(v["sms"].as_array().unwrap().len(), 4);
    assert_eq!(v["config"]["gpu"]["core"]["num_sms"], 4);
    assert_eq!(v["tbs"], 16);
    let (b, _) = stats(&[
        "--gpu",
        "volta",
        "--set",
        "core.num_sms=4",
        "--tb-policy",
        "lrr",
    ]);
    assert_eq!(a, b, "same inputs, same bytes");
}

#[test]
fn simulate_runs_a_schedule_with_and_without_stealing() {
    let dir = std::env::temp_dir().join(format!("paver-it-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sched = dir.join("s.json");
    std::fs::write(
        &sched,
        r#"{"format":"paver-schedule/1","kernel":"mm_naive","grid":[4,4,1],"block":[16,16,1],
"policy":"kway-ts","num_sms":2,"tbs_per_sm":2,
"groups":[[0,1,2,3,4,5,6,7,8,9,10,11],[12,13,14,15]]}"#,
    )
    .unwrap();
    let s = sched.to_str().unwrap();
    let common = [
        "--set",
        "core.num_sms=2",
        "--set",
        "tbs_per_sm=2",
        "--tb-policy",
        "kway-ts",
        "--schedule",
        s,
    ];
    let (_, steal) = stats(&common);
    let mut no = common.to_vec();
    no.push("--no-steal");
    let (_, nosteal) = stats(&no);
    assert!(steal["stolen_tbs"].as_u64().unwrap() > 0);
    assert_eq!(nosteal["stolen_tbs"], 0);
    assert!(steal["cycles"].as_u64().unwrap() < nosteal["cycles"].as_u64().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without `--schedule`, a PAVER policy analyses and partitions first: the run equals one fed
/// the schedule `paver analyze --policy rb-ts` writes for the same GPU.
#[test]
fn simulate_partitions_by_itself_when_no_schedule_is_given() {
    let dir = std::env::temp_dir().join(format!("paver-it-sim-auto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sched = dir.join("s.json");
    paver_ok(&[
        "analyze",
        PTX,
        "--launch",
        LAUNCH,
        "--quiet",
        "--policy",
        "rb-ts",
        "--gpu",
        "volta",
        "--schedule",
        sched.to_str().unwrap(),
    ]);
    let (auto, v) = stats(&["--gpu", "volta", "--tb-policy", "rb-ts"]);
    let (given, _) = stats(&[
        "--gpu",
        "volta",
        "--tb-policy",
        "rb-ts",
        "--schedule",
        sched.to_str().unwrap(),
    ]);
    assert_eq!(auto, given);
    assert_eq!(
        v["warp_instructions"].as_u64().unwrap(),
        50_688,
        "as `paver run` counts for this launch"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 36: the groups built here are made for the GPU simulated, overrides included (they
/// were made for the unmodified GPU's 80 SMs), the stats say which, and groups made for
/// another GPU are refused.
#[test]
fn simulate_groups_for_the_gpu_after_its_overrides() {
    let dir = std::env::temp_dir().join(format!("paver-it-sim-set-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (_, v) = stats(&[
        "--gpu",
        "volta",
        "--set",
        "core.num_sms=4",
        "--set",
        "tbs_per_sm=3",
        "--tb-policy",
        "rb-ts",
    ]);
    assert_eq!(v["schedule"]["num_sms"], 4, "{}", v["schedule"]);
    assert_eq!(v["schedule"]["tbs_per_sm"], 3);
    assert_eq!(v["schedule"]["policy"], "rb-ts");
    assert_eq!(v["tbs_per_sm"], 3);
    let (_, lrr) = stats(&["--gpu", "volta", "--tb-policy", "lrr"]);
    assert!(
        lrr.get("schedule").is_none(),
        "only grouped policies run a schedule"
    );
    // `paver analyze --policy rb-ts --gpu volta` groups for 80 SMs: refused on 4.
    let sched = dir.join("volta.json");
    paver_ok(&[
        "analyze",
        PTX,
        "--launch",
        LAUNCH,
        "--quiet",
        "--policy",
        "rb-ts",
        "--gpu",
        "volta",
        "--schedule",
        sched.to_str().unwrap(),
    ]);
    let e = paver_err(&[
        "simulate",
        PTX,
        "--launch",
        LAUNCH,
        "--gpu",
        "volta",
        "--set",
        "core.num_sms=4",
        "--tb-policy",
        "rb-ts",
        "--schedule",
        sched.to_str().unwrap(),
    ]);
    assert!(
        e.contains("the schedule was made for SMs 80 but the GPU simulated (titanv) has 4"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn simulate_usage_errors() {
    let e = paver_err(&["simulate", PTX, "--launch", LAUNCH, "--tb-policy", "nope"]);
    assert!(e.contains("--tb-policy"), "{e}");
    let e = paver_err(&["simulate", PTX, "--launch", LAUNCH, "--set", "l1.nope=1"]);
    assert!(e.contains("nope"), "{e}");
}

/// `--gpu mcm4 --placement ld` through the CLI (issue 17): on stencil2d's small launch the
/// remote-access fraction must drop below interleave's.
///
/// Why it must: both 32 KB buffers (64 x 64 doubles) lie in the first 64 KB page of their
/// region, and region bases are multiples of 2^36, so interleave homes every byte at module
/// 0; LRR puts the 32 TBs on SMs 0-31, modules 0 and 1, with mirror-image work (rows 0-31
/// and 32-63), so exactly half the accesses, module 1's, are remote. With `ld`, Algorithm 2
/// spreads `in` over the 4 modules in 8 KB pieces (16 rows) and runs the TBs reading each
/// piece on its module: their reads of `in` are local but for halo rows; only the writes
/// to `out` (no read footprint: interleave, module 0) stay remote for 3 modules of 4.
#[test]
fn simulate_mcm4_ld_placement_has_fewer_remote_accesses_than_interleave() {
    let ptx = "kernels/stencil2d/stencil2d.compute_70.ptx";
    let launch = "kernels/stencil2d/small.json";
    let run = |p: &str| -> Value {
        let out = paver_ok(&[
            "simulate",
            ptx,
            "--launch",
            launch,
            "--gpu",
            "mcm4",
            "--placement",
            p,
            "--quiet",
        ]);
        serde_json::from_str(&out).unwrap()
    };
    let inter = run("interleave");
    let ld = run("ld");
    let frac = |v: &Value| v["numa"]["remote_fraction"].as_f64().unwrap();
    assert!((frac(&inter) - 0.5).abs() < 1e-9, "{}", frac(&inter));
    assert!(frac(&ld) < 0.4, "ld {} vs interleave 0.5", frac(&ld));
    assert_eq!(ld["numa"]["module_tbs"], serde_json::json!([8, 8, 8, 8]));
    assert_eq!(
        ld["numa"]["mapping"][0]["region"], 0,
        "in: mapped by Algorithm 2"
    );
    // A GPU with one module refuses a placement.
    let e = paver_err(&["simulate", ptx, "--launch", launch, "--placement", "ld"]);
    assert!(e.contains("one module"), "{e}");
    let e = paver_err(&[
        "simulate",
        ptx,
        "--launch",
        launch,
        "--gpu",
        "mcm4",
        "--placement",
        "nope",
    ]);
    assert!(e.contains("interleave, first-touch, ld"), "{e}");
}

/// `--max-instructions` bounds the whole launch (issue 41): the launch's own count of warp
/// instructions passes, one less stops with the budget error at a TB, thread and PTX line,
/// even though every single TB is far below it.
#[test]
fn simulate_budget_is_per_launch() {
    let (_, v) = stats(&["--set", "core.num_sms=4"]);
    let w = v["warp_instructions"].as_u64().unwrap();
    let tbs = v["tbs"].as_u64().unwrap_or(16);
    assert!(tbs > 1, "{v}");
    let exact = w.to_string();
    let (_, again) = stats(&["--set", "core.num_sms=4", "--max-instructions", &exact]);
    assert_eq!(again["warp_instructions"], w);
    let less = (w - 1).to_string();
    let e = paver_err(&[
        "simulate",
        PTX,
        "--launch",
        LAUNCH,
        "--quiet",
        "--set",
        "core.num_sms=4",
        "--max-instructions",
        &less,
    ]);
    assert!(
        e.contains(&format!("budget of {less} warp instructions")),
        "{e}"
    );
    assert!(e.contains("TB (") && e.contains("PTX line"), "{e}");
}

/// `--explain`'s ledger accounts for every L1 read of the run and changes nothing else:
/// its hits, merges and misses add up to the L1's own counters (computed by the cache, not
/// the ledger), every TB appears once, and the rest of the stats is byte-identical to a
/// run without it. `paver report --ledger` sets two runs side by side.
#[test]
fn explain_keeps_a_ledger_that_adds_up_to_the_l1_counters() {
    let base = ["--gpu", "fermi", "--set", "core.num_sms=2", "--tb-policy"];
    for policy in ["lrr", "rb-ts"] {
        let mut args = base.to_vec();
        args.push(policy);
        let (_, plain) = stats(&args);
        args.push("--explain");
        let (_, mut v) = stats(&args);
        let ledger = v.as_object_mut().unwrap().remove("ledger").unwrap();
        assert_eq!(v, plain);
        let s = &ledger["summary"];
        let n = |x: &Value, k: &str| x[k].as_u64().unwrap();
        let l1 = &v["l1"];
        assert_eq!(n(s, "tbs"), 16);
        assert_eq!(n(s, "reads") + n(l1, "writes"), n(l1, "accesses"));
        assert_eq!(n(s, "hits_own") + n(s, "hits_shared"), n(l1, "hits"));
        assert_eq!(
            n(s, "merges_own") + n(s, "merges_shared"),
            n(l1, "hit_reserve")
        );
        // mm_naive writes each C element once: the L1 (write-evict, no allocation on
        // Fermi) counts those writes among its misses.
        assert_eq!(n(s, "misses") + n(l1, "writes"), n(l1, "misses"));
        let tbs: Vec<u64> = ledger["tbs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| n(e, "tb"))
            .collect();
        assert_eq!(tbs, (0..16).collect::<Vec<_>>());
    }
    let dir = std::env::temp_dir().join(format!("paver-it-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<String> = ["lrr", "rb-ts"]
        .iter()
        .map(|p| {
            let f = dir.join(format!("{p}.json"));
            let mut args = vec!["simulate", PTX, "--launch", LAUNCH, "--quiet"];
            args.extend_from_slice(&base);
            args.extend_from_slice(&[p, "--explain", "-o", f.to_str().unwrap()]);
            paver_ok(&args);
            f.to_str().unwrap().to_string()
        })
        .collect();
    let table = paver_ok(&["report", "--ledger", &files[0], &files[1]]);
    assert!(table.contains("| misses (L2 reads) |"), "{table}");
    assert!(
        table.contains("A: lrr / gto warps | B: rb-ts / gto warps"),
        "{table}"
    );
    let e = paver_err(&[
        "report",
        "--ledger",
        &files[0],
        "kernels/mm_naive/small.json",
    ]);
    assert!(e.contains("not the stats of `paver simulate`"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `paver simulate` on each `kernels/dp/` launch (kernels that launch kernels, issue 43)
/// completes with the TBs and child grids `paver run` reports, twice byte-identical, under
/// the baseline and LASER.
#[test]
fn simulate_runs_the_child_grids_paver_run_runs() {
    for (dir, kernel) in [
        ("dp_bfs", "dp_bfs_level"),
        ("dp_quicksort", "dp_quicksort"),
        ("dp_quicksort", "dp_chain"),
        ("dp_tb_child", "dp_tb_parent"),
    ] {
        let ptx = format!("kernels/dp/{dir}/{dir}.nvcc13.sm_90.ptx");
        let launch = format!("kernels/dp/{dir}/small.{kernel}.json");
        let out = crate::common::paver(&["run", &ptx, "--launch", &launch]);
        assert!(out.status.success(), "paver run {kernel}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        // "grid 8x1x1, block 128x1x1 (238 TBs, ..." and "device-side launches: 230 child grid(s)".
        let number_before = |s: &str, marker: &str| -> u64 {
            let at = s
                .find(marker)
                .unwrap_or_else(|| panic!("{kernel}: no {marker:?}"));
            let head = &s[..at];
            let digits: String = head
                .chars()
                .rev()
                .skip_while(|c| c.is_whitespace())
                .take_while(char::is_ascii_digit)
                .collect();
            digits.chars().rev().collect::<String>().parse().unwrap()
        };
        let tbs = number_before(&text, " TBs,");
        let grids = number_before(&text, " child grid(s)");
        for policy in ["lrr", "laser"] {
            let args = [
                "simulate",
                ptx.as_str(),
                "--launch",
                launch.as_str(),
                "--gpu",
                "volta",
                "--tb-policy",
                policy,
                "--quiet",
            ];
            let a = paver_ok(&args);
            assert_eq!(a, paver_ok(&args), "{kernel} {policy}: a second run");
            let v: Value = serde_json::from_str(&a).unwrap();
            assert_eq!(v["tbs"], tbs, "{kernel} {policy}");
            assert_eq!(
                v["device_launches"]["child_grids"], grids,
                "{kernel} {policy}"
            );
        }
    }
}
