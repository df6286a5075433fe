//! Evidence for issues 12 and 39: on every corpus launch (`kernels/*/small*.json` and
//! `paper*.json`) and on the four GPU configurations (gtx480, titanx_pascal, titanv, h100),
//! RB-TS and Kway-TS, as the paper defines them (no LRR floor), capture at least LRR's
//! weight among co-running TBs (`concurrent_weight` of `graph_partition::quality`: edges
//! between TBs in one window of x TBs on one SM), except on the launches of
//! [`BELOW_LRR`], each explained there. LRR's weight is computed here from the graph's
//! edges, independently of the policy code (TB `t` runs on SM `t mod N` in window
//! `(t div N) div x`), and must equal what the schedule records. With `--at-least-lrr`
//! (a named departure, off by default) the exceptions, and only they, take LRR's groups.
//!
//! x comes from the launch file's recorded ptxas numbers (`resources`: registers and static
//! shared memory for `sm_70`, `sm_90` on H100) plus the launch's dynamic shared memory,
//! through the occupancy calculator; N is the configuration's SM count. Groups shrink on
//! grids smaller than one wave (the default, `Params::group_size`). The graph is the
//! static analysis's (128 B lines), as `paver analyze` builds it, one per launch for all
//! four GPUs.
//!
//! Cost (measured on the shared 2-core machine, analysis + graph + partitionings per
//! launch): most launches take well under a second, but the paper launches of the dense
//! kernels take 5-27 s each (syr2k 27 s, mm_tiled 20 s, lud_step 13 s, mm_naive 13 s,
//! fdtd3d 13 s, srad 10 s and 12 s, doitgen, dwt2d) and those above 20,000 TBs more. The
//! default test runs every small launch and the paper launches outside `HEAVY` of at
//! most `DEFAULT_MAX_TBS` TBs (about 20 s); the rest run in the ignored test:
//! `cargo test --release --test it -- --ignored --nocapture evidence_large`.
//!
//! The timing-simulator evidence (fewer L2 accesses, at most 2 % slower) is at the end.

use std::path::Path;
use std::time::Instant;

use analysis::footprint::Granularity;
use gpu::{occupancy, GpuConfig, KernelResources, RegisterSource, Registers};
use graph_partition::{make_schedule, Params, PolicyKind};

use crate::common::launch_files;

/// The GPU configurations of issue 12, with the ptxas architecture whose numbers they use.
const GPUS: [(&str, &str); 4] = [
    ("gtx480", "sm_70"),
    ("titanx_pascal", "sm_70"),
    ("titanv", "sm_70"),
    ("h100", "sm_90"),
];

/// Paper launches with more TBs than this run only in the ignored test.
const DEFAULT_MAX_TBS: u64 = 20_000;

/// Paper launches too slow for the default test (see the module documentation).
const HEAVY: [&str; 10] = [
    "syr2k/paper.json",
    // 8,192 TBs simulated on every GPU; its analysis times are in analysis/README.md.
    "mirror_boundary/paper.json",
    "mm_tiled/paper.json",
    "mm_naive/paper.json",
    "lud_step/paper.json",
    "fdtd3d/paper.json",
    "srad/paper.srad_diffusion_coeff.json",
    "srad/paper.srad_update.json",
    "doitgen/paper.json",
    "dwt2d/paper.json",
];

/// Where the paper's Kway-TS or RB-TS keeps less co-running weight than LRR: (launch,
/// GPU, policy). METIS balances parts and minimises the cut of the whole graph, not the
/// weight inside each SM's windows of x TBs, and on these grids LRR's fixed stride is
/// already the better grouping:
/// - doitgen's paper launch on titanv (in the ignored test): Volta's 80 SMs are a multiple
///   of the 8 TBs sharing a C4 column strip, so LRR's windows hold one class each: LRR is
///   optimal there, 15,519,744, while METIS reaches 98.8 % with Kway-TS and 80.6 % with
///   RB-TS.
///
/// (With `--shrink-groups`, the default before issue 39, RB-TS fell below LRR on mm_tiled's
/// small launch on gtx480 as well: 25 TBs on 15 SMs, leaves of one SM's share, 846 against
/// LRR's 864; with the paper's groups of x it keeps 1,890.) A launch that falls below LRR
/// and is not listed fails the test, and so does a listed one that no longer does.
const BELOW_LRR: &[(&str, &str, &str)] = &[
    ("doitgen/paper.json", "titanv", "kway-ts"),
    ("doitgen/paper.json", "titanv", "rb-ts"),
];

/// LRR's co-running weight on `g`, from its edges: TB `t` runs on SM `t mod n` in window
/// `(t div n) div x` (LRR hands TB `t` to SM `t mod n`, and each SM runs its TBs x at a
/// time in that order).
fn lrr_concurrent_weight(g: &graph_partition::Graph, n: u32, x: u32) -> u64 {
    let place = |t: u32| (t % n, (t / n) / x.max(1));
    g.edges()
        .filter(|&(i, j, _)| place(i) == place(j))
        .map(|(_, _, w)| w)
        .sum()
}

/// Analyses one launch and checks both policies on every GPU; returns the failures.
fn check_launch(path: &Path, failures: &mut Vec<String>) {
    let dir = path.parent().unwrap();
    let name = dir.file_name().unwrap().to_str().unwrap();
    let label = format!("{name}/{}", path.file_name().unwrap().to_str().unwrap());
    let module = ptx_parser::parse_file(&dir.join(format!("{name}.compute_70.ptx"))).unwrap();
    let l = launch::Launch::read(path).unwrap();
    let kernel = l.kernel.clone().unwrap();
    let f = module.kernel(&kernel).unwrap();
    // The static analysis's binding (lavamd's par_str stays open).
    let bound = l.bind_open(&kernel, &sim::param_sigs(f), dir).unwrap();
    let start = Instant::now();
    let a = match analysis::analyze(f, &bound, Granularity::Line(128)) {
        // A launch whose TBs alone do not fit this machine's memory budget: the analysis
        // refuses it, and so no policy can be compared. Reported, not failed. (Loads whose
        // graph would not fit are left unresolved instead, and the rest compared.)
        Err(e @ analysis::AnalysisError::OutOfMemory { .. }) => {
            println!("{label}: skipped, {e}");
            return;
        }
        r => r.unwrap(),
    };
    let (g, _) = analysis::locality::build(&a.footprints);
    let n = g.num_tbs();
    let graph_s = start.elapsed().as_secs_f64();
    let dim = |d: launch::Dim3| [d.x as u32, d.y as u32, d.z as u32];
    let launch = graph_partition::Launch {
        kernel: kernel.clone(),
        grid: dim(bound.grid),
        block: dim(bound.block),
    };
    for (gpu_name, arch) in GPUS {
        let gpu = GpuConfig::builtin(gpu_name).unwrap();
        let r = &l.resources[arch];
        let k = KernelResources {
            threads_per_tb: bound.block.count() as u32,
            registers: Registers {
                count: r.registers,
                source: RegisterSource::LaunchFile {
                    arch: arch.to_string(),
                },
            },
            static_shared_bytes: r.shared_bytes,
            dynamic_shared_bytes: bound.dynamic_shared_bytes,
        };
        let x = occupancy(&gpu, &k).unwrap().tbs_per_sm;
        let params = Params::new(gpu.core.num_sms, x);
        let lrr = lrr_concurrent_weight(&g, gpu.core.num_sms, x);
        for kind in [PolicyKind::RbTs, PolicyKind::KwayTs] {
            let t = Instant::now();
            let s = make_schedule(&g, kind.policy().as_ref(), &params, &launch).unwrap();
            let st = s.stats.unwrap();
            let conc = st.quality.concurrent_weight;
            assert_eq!(
                st.lrr.concurrent_weight, lrr,
                "{label} on {gpu_name}: LRR's weight"
            );
            assert_eq!(st.departures, graph_partition::Departures::default());
            println!(
                "{label:<48} {n:>7} {:>9} {gpu_name:<14} {x:>2} {:<8} {conc:>12} {lrr:>12} {graph_s:>7.2} {:>7.2}",
                g.num_edges(),
                kind.name(),
                t.elapsed().as_secs_f64()
            );
            let listed = BELOW_LRR.contains(&(label.as_str(), gpu_name, kind.name()));
            if (conc < lrr) != listed {
                failures.push(format!(
                    "{label} on {gpu_name} (x = {x}), {}: co-running weight {conc}, LRR's {lrr}, {}",
                    kind.name(),
                    if listed { "listed in BELOW_LRR" } else { "not listed in BELOW_LRR" }
                ));
            }
            // The floor (`--at-least-lrr`) takes LRR's groups exactly there.
            let floored = Params {
                at_least_lrr: true,
                ..params.clone()
            };
            let f = make_schedule(&g, kind.policy().as_ref(), &floored, &launch).unwrap();
            let fs = f.stats.unwrap();
            assert_eq!(
                fs.departures.lrr_floor_taken,
                conc < lrr,
                "{label} on {gpu_name}"
            );
            if fs.departures.lrr_floor_taken {
                assert_eq!(f.groups, (0..n).map(|tb| vec![tb]).collect::<Vec<_>>());
            } else {
                assert_eq!(f.groups, s.groups);
            }
        }
    }
}

/// Every corpus launch with `keep(TBs, is a paper launch, is in HEAVY)`.
fn run(keep: &dyn Fn(u64, bool, bool) -> bool) {
    println!(
        "{:<48} {:>7} {:>9} {:<14} {:>2} {:<8} {:>12} {:>12} {:>7} {:>7}",
        "launch", "TBs", "edges", "gpu", "x", "policy", "co-running", "LRR", "graph s", "part s"
    );
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in launch_files() {
        let l = launch::Launch::read(&path).unwrap();
        let tbs = l.grid.x * l.grid.y * l.grid.z;
        let paper = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("paper"));
        let dir = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|d| d.to_str());
        let file = path.file_name().and_then(|n| n.to_str());
        let label = format!("{}/{}", dir.unwrap_or(""), file.unwrap_or(""));
        if keep(tbs, paper, HEAVY.contains(&label.as_str())) {
            check_launch(&path, &mut failures);
            ran += 1;
        }
    }
    assert!(ran > 0);
    assert!(failures.is_empty(), "below LRR:\n{}", failures.join("\n"));
}

#[test]
fn rb_ts_and_kway_ts_keep_at_least_lrrs_co_running_weight_except_where_listed() {
    run(&|tbs, paper, heavy| !paper || (tbs <= DEFAULT_MAX_TBS && !heavy));
}

/// The paper launches above `DEFAULT_MAX_TBS` TBs or in `HEAVY` (minutes):
/// `cargo test --release --test it -- --ignored --nocapture evidence_large`.
#[test]
#[ignore]
fn evidence_large_paper_launches() {
    run(&|tbs, paper, heavy| paper && (tbs > DEFAULT_MAX_TBS || heavy));
}

/// `paver simulate` of `launch` on `gpu` with TB policy `policy` (stealing as the policy's
/// default): (cycles, L2 accesses, TBs per SM).
fn simulate(launch: &str, gpu: &str, policy: &str) -> (u64, u64, u64) {
    let dir = Path::new(launch).parent().unwrap();
    let name = dir.file_name().unwrap().to_str().unwrap();
    let variant = if gpu == "h100" {
        "compute_90"
    } else {
        "compute_70"
    };
    let ptx = dir.join(format!("{name}.{variant}.ptx"));
    let out = crate::common::paver_ok(&[
        "simulate",
        ptx.to_str().unwrap(),
        "--launch",
        launch,
        "--gpu",
        gpu,
        "--tb-policy",
        policy,
        "--quiet",
    ]);
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    (
        s["cycles"].as_u64().unwrap(),
        s["l2"]["accesses"].as_u64().unwrap(),
        s["tbs_per_sm"].as_u64().unwrap(),
    )
}

/// The timing simulator on a launch of many waves (syrk, 2,304 TBs: 38 waves of 15 SMs x 4
/// TBs on Fermi). SYRK is one of PAVER's high inter-TB locality kernels (§6): RB-TS, whose
/// groups keep TBs that read the same rows of A on one SM, must make fewer L2 accesses
/// than LRR and must not be slower than LRR by more than 2 % (PAVER: locality without
/// load imbalance). The whole grid of kernels, GPUs and policies is the ignored test
/// below (docs/VALIDATION.md, "TB grouping in the timing simulator").
#[test]
fn simulator_rb_ts_fewer_l2_accesses_and_not_slower_than_lrr_on_syrk_fermi() {
    let launch = "kernels/syrk/waves.json";
    let (lrr_cycles, lrr_l2, x) = simulate(launch, "gtx480", "lrr");
    let (rb_cycles, rb_l2, _) = simulate(launch, "gtx480", "rb-ts");
    assert!(2304 > 15 * x * 3, "not several waves: x = {x}");
    assert!(rb_l2 < lrr_l2, "RB-TS {rb_l2} L2 accesses, LRR {lrr_l2}");
    assert!(
        rb_cycles * 100 <= lrr_cycles * 102,
        "RB-TS {rb_cycles} cycles, LRR {lrr_cycles}"
    );
}

/// Every `kernels/*/waves*.json` on gtx480, titanx_pascal, titanv and h100 with LRR, BCS,
/// MST-TS, Kway-TS and RB-TS: `tests/evid_sweep.py` prints the table of docs/VALIDATION.md
/// and fails when RB-TS makes at least LRR's L2 accesses on a high-locality kernel or is
/// more than 2 % slower than LRR anywhere. Tens of minutes:
/// `cargo test --release --test it -- --ignored --nocapture evidence_simulator_sweep`.
#[test]
#[ignore]
fn evidence_simulator_sweep() {
    let root = crate::common::root();
    let out = std::process::Command::new("python3")
        .arg(root.join("tests/evid_sweep.py"))
        .args(["-j", "2", "--paver", env!("CARGO_BIN_EXE_paver")])
        .current_dir(&root)
        .output()
        .expect("python3");
    println!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
