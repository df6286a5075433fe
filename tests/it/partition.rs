//! TB grouping on the corpus: RB-TS and Kway-TS capture at least as much locality-graph
//! weight as LRR on the kernels with inter-TB locality, on the static analysis graph
//! (`paver analyze -o`, then `paver partition --gpu volta`: 80 SMs, x from the kernel's
//! ptxas resources), comparing the two figures of the `paver-schedule/1` statistics:
//! `intra_group_weight` (weight inside groups) and `concurrent_weight` (weight between TBs
//! in one window of x TBs on one SM, `graph_partition::quality`).
//!
//! The small launches (a few dozen TBs, fewer than the 640 TB slots of the GPU) make LRR's
//! figures trivial, so the default test uses launches of 256 to 1,024 TBs. For the stencil
//! kernels the grid is 80 TBs wide: LRR runs TBs s, s+80, s+160, ... together on SM s, a
//! vertical strip sharing halos, so LRR's concurrent weight is not zero and the comparison
//! means something. LRR's weight inside groups is always zero (groups of one TB); the test
//! asserts it anyway, as the issue states both. The paper-size launches (4,096 to 131,072
//! TBs) run in the ignored test `..._paper_launches`.

use serde_json::Value;

use crate::common::{paver_ok, root, GEMM_256_BUFFERS};

/// One launch: kernel folder, launch file in it, flags overriding the file.
struct Case {
    dir: &'static str,
    launch: &'static str,
    flags: &'static [&'static str],
}

const fn case(dir: &'static str, launch: &'static str, flags: &'static [&'static str]) -> Case {
    Case { dir, launch, flags }
}

/// Both srad kernels at 80 x 8 TBs of 16 x 16: a 128 x 1,280 image in six buffers.
const SRAD_MEDIUM: &[&str] = &[
    "--grid",
    "80x8",
    "--param",
    "6=128",
    "--param",
    "7=1280",
    "--param",
    "0=buffer:f32:163840:zeros",
    "--param",
    "1=buffer:f32:163840:zeros",
    "--param",
    "2=buffer:f32:163840:zeros",
    "--param",
    "3=buffer:f32:163840:zeros",
    "--param",
    "4=buffer:f32:163840:zeros",
    "--param",
    "5=buffer:f32:163840:zeros",
];

/// Launches of 256 to 1,024 TBs of the kernels with inter-TB locality: the small launch
/// enlarged, its buffers with it (an address past a buffer's end belongs to no buffer).
const MEDIUM: &[Case] = &[
    case(
        "mm_naive",
        "small.json",
        &[
            "--grid",
            "32x32",
            "--param",
            "3=512",
            "--param",
            "0=buffer:f32:262144:zeros",
            "--param",
            "1=buffer:f32:262144:zeros",
            "--param",
            "2=buffer:f32:262144:zeros",
        ],
    ),
    case(
        "syrk",
        "small.json",
        &[
            "--grid",
            "8x32",
            "--param",
            "4=256",
            "--param",
            "5=256",
            "--param",
            "0=buffer:f32:65536:zeros",
            "--param",
            "1=buffer:f32:65536:zeros",
        ],
    ),
    case(
        "syr2k",
        "small.json",
        &[
            "--grid",
            "32x32",
            "--param",
            "5=512",
            "--param",
            "6=256",
            "--param",
            "0=buffer:f64:131072:zeros",
            "--param",
            "1=buffer:f64:131072:zeros",
            "--param",
            "2=buffer:f64:262144:zeros",
        ],
    ),
    // cols = 80 * 14 (14 x 14 tiles with a halo), rows = 8 * 14.
    case(
        "hotspot",
        "small.json",
        &[
            "--grid",
            "80x8",
            "--param",
            "3=1120",
            "--param",
            "4=112",
            "--param",
            "0=buffer:f32:125440:zeros",
            "--param",
            "1=buffer:f32:125440:zeros",
            "--param",
            "2=buffer:f32:125440:zeros",
        ],
    ),
    case("srad", "small.srad_diffusion_coeff.json", SRAD_MEDIUM),
    case("srad", "small.srad_update.json", SRAD_MEDIUM),
    // 32x8 blocks: nj = 80 * 32 columns, ni = 8 * 8 rows.
    case(
        "conv2d",
        "small.json",
        &[
            "--grid",
            "80x8",
            "--param",
            "2=64",
            "--param",
            "3=2560",
            "--param",
            "0=buffer:f32:163840:zeros",
            "--param",
            "1=buffer:f32:163840:zeros",
        ],
    ),
    // 32x4 blocks: nx = 80 * 32 columns, ny = 8 * 4 rows.
    case(
        "stencil2d",
        "small.json",
        &[
            "--grid",
            "80x8",
            "--param",
            "2=2560",
            "--param",
            "3=32",
            "--param",
            "0=buffer:f64:81920:zeros",
            "--param",
            "1=buffer:f64:81920:zeros",
        ],
    ),
];

/// The paper-size launches of the same kernels.
const PAPER: &[Case] = &[
    case("mm_naive", "paper.json", &[]),
    case("syrk", "paper.json", &[]),
    case("syr2k", "paper.json", &[]),
    case("hotspot", "paper.json", &[]),
    case("srad", "paper.srad_diffusion_coeff.json", &[]),
    case("srad", "paper.srad_update.json", &[]),
    case("conv2d", "paper.json", &[]),
    case("stencil2d", "paper.json", &[]),
];

/// A fresh path in the temporary folder (tests run in parallel).
fn temp(tag: &str) -> std::path::PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "paver-it-partition-{}-{n}-{tag}.json",
        std::process::id()
    ))
}

/// The schedules of `policies` for one launch (one analysis, one `paver partition` each).
fn schedules(c: &Case, policies: &[&str]) -> Vec<Value> {
    let dir = root().join("kernels").join(c.dir);
    let ptx = dir.join(format!("{}.compute_70.ptx", c.dir));
    let launch = dir.join(c.launch);
    let graph = temp("graph");
    let mut args = vec![
        "analyze",
        ptx.to_str().unwrap(),
        "--launch",
        launch.to_str().unwrap(),
        "--quiet",
        "-o",
        graph.to_str().unwrap(),
    ];
    args.extend_from_slice(c.flags);
    paver_ok(&args);
    let out: Vec<Value> = policies
        .iter()
        .map(|policy| {
            let path = temp(policy);
            paver_ok(&[
                "partition",
                graph.to_str().unwrap(),
                "--policy",
                policy,
                "--gpu",
                "volta",
                "--quiet",
                "-o",
                path.to_str().unwrap(),
            ]);
            let s = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let _ = std::fs::remove_file(&path);
            s
        })
        .collect();
    let _ = std::fs::remove_file(&graph);
    out
}

/// Runs RB-TS and Kway-TS on every case, prints a table, and asserts both policies capture
/// at least LRR's weight inside groups and concurrent weight. With `meaningful`, also
/// asserts the launches are large enough for LRR's concurrent weight to be non-zero.
fn compare_with_lrr(cases: &[Case], meaningful: bool) {
    let mut worse = Vec::new();
    println!(
        "{:<36} {:>7} {:>2} {:<7} {:>12} {:>12} {:>12} {:>12} {:>9}",
        "launch", "TBs", "x", "policy", "inside", "LRR inside", "concurrent", "LRR conc.", "ms"
    );
    for c in cases {
        let name = format!("{}/{}", c.dir, c.launch);
        for s in schedules(c, &["rb-ts", "kway-ts"]) {
            let st = &s["stats"];
            let fig = |who: &str, key: &str| st[who][key].as_u64().unwrap();
            let (inside, lrr_inside) = (
                fig("quality", "intra_group_weight"),
                fig("lrr", "intra_group_weight"),
            );
            let (conc, lrr_conc) = (
                fig("quality", "concurrent_weight"),
                fig("lrr", "concurrent_weight"),
            );
            let tbs = st["num_tbs"].as_u64().unwrap();
            let policy = s["policy"].as_str().unwrap();
            println!(
                "{name:<36} {tbs:>7} {:>2} {policy:<7} {inside:>12} {lrr_inside:>12} {conc:>12} {lrr_conc:>12} {:>9.1}",
                s["tbs_per_sm"],
                st["partition_ms"].as_f64().unwrap()
            );
            if meaningful {
                assert!(tbs >= 256, "{name}: only {tbs} TBs");
                assert!(lrr_conc > 0, "{name}: LRR's concurrent weight is 0");
            }
            if inside < lrr_inside || conc < lrr_conc {
                worse.push(format!(
                    "{name} {policy}: inside {inside} vs LRR {lrr_inside}, concurrent {conc} vs LRR {lrr_conc}"
                ));
            }
        }
    }
    assert!(worse.is_empty(), "below LRR:\n{}", worse.join("\n"));
}

#[test]
fn rb_ts_and_kway_ts_capture_at_least_lrrs_weight_on_the_corpus() {
    compare_with_lrr(MEDIUM, true);
}

/// Paper-size launches (minutes in release mode): `cargo test --release --test it --
/// --ignored --nocapture paper_launches`.
#[test]
#[ignore]
fn rb_ts_and_kway_ts_capture_at_least_lrrs_weight_on_the_paper_launches() {
    compare_with_lrr(PAPER, false);
}

#[test]
fn policy_ld_clusters_by_the_analysiss_descriptors() {
    // mm_naive on a 16x16 grid (n = 256): the analysis finds A (param 0) shared by a grid
    // row, C-Tile (16,1,1), and B (param 1) by a grid column, C-Tile (1,16,1), both
    // INTER-THREAD; C is written only (NO-REUSE, not clustered). B's D-Tile (32 x 256
    // elements) is twice A's (4096), so B ranks first. LD Algorithm 1 on Fermi (15 SMs):
    // 16 column tiles >= 15, no split; merging A gives (16,16,1), 1 cluster < 15, refused.
    // So the clusters are the 16 grid columns: group c = {c, c + 16, ..., c + 240}.
    let dir = root().join("kernels/mm_naive");
    let ptx = dir.join("mm_naive.compute_70.ptx");
    let launch = dir.join("small.json");
    let (doc, sched) = (temp("ld-analysis"), temp("ld-schedule"));
    let mut common = vec![
        ptx.to_str().unwrap(),
        "--launch",
        launch.to_str().unwrap(),
        "--grid",
        "16x16",
        "--param",
        "3=256",
        "--quiet",
    ];
    common.extend_from_slice(&GEMM_256_BUFFERS);
    let mut args = vec!["analyze"];
    args.extend_from_slice(&common);
    args.extend_from_slice(&["-o", doc.to_str().unwrap()]);
    paver_ok(&args);
    let a: Value = serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    let lds = a["locality_descriptors"].as_array().unwrap();
    assert_eq!(lds[0]["c_tile"], serde_json::json!([16, 1, 1]));
    assert_eq!(lds[1]["c_tile"], serde_json::json!([1, 16, 1]));
    // C is only stored: no descriptor.
    assert_eq!(lds.len(), 2);
    let columns: Vec<Vec<u32>> = (0..16).map(|c| (c..256).step_by(16).collect()).collect();
    // `paver partition --policy ld` on the analysis document ...
    paver_ok(&[
        "partition",
        doc.to_str().unwrap(),
        "--policy",
        "ld",
        "--gpu",
        "fermi",
        "--quiet",
        "-o",
        sched.to_str().unwrap(),
    ]);
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
    assert_eq!(s["policy"], "ld");
    let groups: Vec<Vec<u32>> = serde_json::from_value(s["groups"].clone()).unwrap();
    assert_eq!(groups, columns);
    // ... equals `paver analyze --policy ld`, which feeds the descriptors in memory ...
    let sched2 = temp("ld-schedule2");
    let mut args = vec!["analyze"];
    args.extend_from_slice(&common);
    args.extend_from_slice(&[
        "--policy",
        "ld",
        "--gpu",
        "fermi",
        "--schedule",
        sched2.to_str().unwrap(),
    ]);
    paver_ok(&args);
    let s2: Value = serde_json::from_str(&std::fs::read_to_string(&sched2).unwrap()).unwrap();
    assert_eq!(s2["groups"], s["groups"]);
    // ... and `paver simulate --tb-policy ld` derives descriptors and clusters itself (on
    // the small launch, whose buffers are real: 16 TBs, 15 SMs: every C-Tile splits to one
    // TB), then replays the groups without stealing (not a Kway-TS/RB-TS schedule).
    let stats: Value = serde_json::from_str(&paver_ok(&[
        "simulate",
        ptx.to_str().unwrap(),
        "--launch",
        launch.to_str().unwrap(),
        "--quiet",
        "--gpu",
        "fermi",
        "--tb-policy",
        "ld",
    ]))
    .unwrap();
    assert_eq!(stats["tbs"], 16);
    assert_eq!(stats["steal"], false);
    assert_eq!(stats["stolen_tbs"], 0);
    // Without a descriptor-carrying document, `--policy ld` is refused with a reason.
    let metis = temp("ld-metis").with_extension("graph");
    std::fs::write(&metis, "2 1\n2\n1\n").unwrap();
    let err = crate::common::paver_err(&["partition", metis.to_str().unwrap(), "--policy", "ld"]);
    assert!(err.contains("Locality Descriptors"), "{err}");
    for p in [doc, sched, sched2, metis] {
        let _ = std::fs::remove_file(p);
    }
}

/// RB-TS's leaf rule on every command that builds groups: `< x` (PAVER Algorithm 1) by
/// default, `--rb-leaf le` for `<= x`, `--strict-less` an alias of `--rb-leaf lt`; the
/// schedule records the rule (`stats.strict_less`). The graph: pairs {0,5},{1,4},{2,7},
/// {3,6} (weight 100), pairs of pairs joined by weight 10 ({0,5}+{1,4}, {2,7}+{3,6}), the
/// two halves by weight 1. With x = 4 (and the paper's fixed x, so the 8 TBs on Fermi's 15
/// SMs do not shrink the groups) the bisection cuts the weight-1 edges first: halves of 4,
/// leaves under `<= 4`; under `< 4` they are cut again along the weight-10 edges into the
/// four pairs.
#[test]
fn rb_leaf_rule_default_alias_and_record() {
    let graph = temp("hierarchy").with_extension("graph");
    // METIS format, 1-based, fmt 001 (edge weights): vertex i+1's neighbours and weights.
    std::fs::write(
        &graph,
        "8 10 001\n6 100 2 10\n5 100 1 10 3 1\n8 100 4 10 2 1\n7 100 3 10\n\
         2 100 6 10\n1 100 5 10 7 1\n4 100 8 10 6 1\n3 100 7 10\n",
    )
    .unwrap();
    let run = |extra: &[&str]| -> Value {
        let out = temp("rb-leaf");
        let mut args = vec![
            "partition",
            graph.to_str().unwrap(),
            "--policy",
            "rb-ts",
            "--gpu",
            "fermi",
            "--tbs-per-sm",
            "4",
            "--fixed-group-size",
            "--quiet",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        paver_ok(&args);
        let s: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let _ = std::fs::remove_file(&out);
        s
    };
    let pairs = serde_json::json!([[0, 5], [1, 4], [2, 7], [3, 6]]);
    let halves = serde_json::json!([[0, 1, 4, 5], [2, 3, 6, 7]]);
    for (extra, groups, strict) in [
        (&[][..], &pairs, true),
        (&["--rb-leaf", "lt"][..], &pairs, true),
        (&["--strict-less"][..], &pairs, true),
        (&["--rb-leaf", "le"][..], &halves, false),
    ] {
        let s = run(extra);
        assert_eq!(&s["groups"], groups, "{extra:?}");
        assert_eq!(s["stats"]["strict_less"], strict, "{extra:?}");
    }
    // The alias cannot contradict the new flag; a rule outside lt|le is refused.
    let e = crate::common::paver_err(&[
        "partition",
        graph.to_str().unwrap(),
        "--strict-less",
        "--rb-leaf",
        "le",
    ]);
    assert!(
        e.contains("--strict-less") && e.contains("--rb-leaf"),
        "{e}"
    );
    for cmd in [
        &["partition", graph.to_str().unwrap()][..],
        &[
            "analyze",
            "x.ptx",
            "--policy",
            "rb-ts",
            "--schedule",
            "s.json",
        ][..],
        &["simulate", "x.ptx", "--tb-policy", "rb-ts"][..],
    ] {
        let mut args = cmd.to_vec();
        args.extend_from_slice(&["--rb-leaf", "lte"]);
        let e = crate::common::paver_err(&args);
        assert!(e.contains("lt") && e.contains("le"), "{cmd:?}: {e}");
    }
    let _ = std::fs::remove_file(&graph);
}
