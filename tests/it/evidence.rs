//! Evidence for issue 12: on every corpus launch (`kernels/*/small*.json` and `paper*.json`)
//! and on the four GPU configurations (gtx480, titanx_pascal, titanv, h100), RB-TS and
//! Kway-TS capture at least LRR's weight among co-running TBs (`concurrent_weight` of
//! `graph_partition::quality`: edges between TBs in one window of x TBs on one SM).
//!
//! x comes from the launch file's recorded ptxas numbers (`resources`: registers and static
//! shared memory for `sm_70`, `sm_90` on H100) plus the launch's dynamic shared memory,
//! through the occupancy calculator; N is the configuration's SM count. Groups shrink on
//! grids smaller than one wave (the default, `Params::group_size`). The graph is the
//! static analysis's (128 B lines), as `paver analyze` builds it, one per launch for all
//! four GPUs.
//!
//! Cost: the small launches and the paper launches up to `DEFAULT_MAX_TBS` TBs run by
//! default; the larger paper launches (dense graphs, up to 131,072 TBs) run in the ignored
//! test: `cargo test --release --test it -- --ignored --nocapture evidence_large`.

use std::path::Path;
use std::time::Instant;

use analysis::footprint::Granularity;
use gpu::{occupancy, GpuConfig, KernelResources, RegisterSource, Registers};
use graph_partition::{make_schedule, Graph, Params, PolicyKind};

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

/// Analyses one launch and checks both policies on every GPU; returns the failures.
fn check_launch(path: &Path, failures: &mut Vec<String>) {
    let dir = path.parent().unwrap();
    let name = dir.file_name().unwrap().to_str().unwrap();
    let label = format!("{name}/{}", path.file_name().unwrap().to_str().unwrap());
    let module = ptx_parser::parse_file(&dir.join(format!("{name}.compute_70.ptx"))).unwrap();
    let l = launch::Launch::read(path).unwrap();
    let kernel = l.kernel.clone().unwrap();
    let f = module.kernel(&kernel).unwrap();
    let bound = l.bind(&kernel, &sim::param_sigs(f), dir).unwrap();
    let start = Instant::now();
    let a = analysis::analyze(f, &bound, Granularity::Line(128)).unwrap();
    let (graph, _) = analysis::locality::build(&a.footprints);
    let edges: Vec<(u32, u32, u64)> = graph.edges().collect();
    let n = bound.num_tbs() as u32;
    let g = Graph::from_edges(n, &edges).unwrap();
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
        for kind in [PolicyKind::RbTs, PolicyKind::KwayTs] {
            let t = Instant::now();
            let s = make_schedule(&g, kind.policy().as_ref(), &params, &launch).unwrap();
            let st = s.stats.unwrap();
            let (conc, lrr) = (st.quality.concurrent_weight, st.lrr.concurrent_weight);
            println!(
                "{label:<48} {n:>7} {:>9} {gpu_name:<14} {x:>2} {:<8} {conc:>12} {lrr:>12} {graph_s:>7.2} {:>7.2}",
                edges.len(),
                kind.name(),
                t.elapsed().as_secs_f64()
            );
            if conc < lrr {
                failures.push(format!(
                    "{label} on {gpu_name} (x = {x}), {}: co-running weight {conc} < LRR's {lrr}",
                    kind.name()
                ));
            }
        }
    }
}

/// Every corpus launch with `keep(TBs, is a paper launch)`.
fn run(keep: &dyn Fn(u64, bool) -> bool) {
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
        if keep(tbs, paper) {
            check_launch(&path, &mut failures);
            ran += 1;
        }
    }
    assert!(ran > 0);
    assert!(failures.is_empty(), "below LRR:\n{}", failures.join("\n"));
}

#[test]
fn rb_ts_and_kway_ts_keep_at_least_lrrs_co_running_weight_on_four_gpus() {
    run(&|tbs, paper| !paper || tbs <= DEFAULT_MAX_TBS);
}

/// The paper launches above `DEFAULT_MAX_TBS` TBs (minutes):
/// `cargo test --release --test it -- --ignored --nocapture evidence_large`.
#[test]
#[ignore]
fn evidence_large_paper_launches() {
    run(&|tbs, paper| paper && tbs > DEFAULT_MAX_TBS);
}
