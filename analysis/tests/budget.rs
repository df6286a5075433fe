//! A launch that would need more memory than the budget fails fast, before any per-TB work,
//! with the estimate and the budget in the message.

mod common;

use std::time::Instant;

use analysis::footprint::Granularity;
use common::*;
use launch::Dim3;

#[test]
fn huge_grid_errors_fast() {
    let (m, mut b) = load("mm_naive", "compute_70", "small.json");
    b.grid = Dim3 {
        x: 65535,
        y: 65535,
        z: 1,
    };
    let f = m.kernel(&b.kernel).expect("kernel");
    let t = Instant::now();
    let e = analysis::analyze(f, &b, Granularity::Line(128)).expect_err("too large");
    assert!(t.elapsed().as_secs_f64() < 0.5, "{:?}", t.elapsed());
    let msg = e.to_string();
    assert!(
        matches!(e, analysis::AnalysisError::OutOfMemory { .. }),
        "{msg}"
    );
    assert!(msg.contains("MiB") && msg.contains("budget"), "{msg}");
}

#[test]
fn graph_estimate_counts_against_the_budget() {
    // GEMM N = 4096 (65,536 TBs): fine with the default budget on this machine, refused
    // with 64 MiB because of the expected ~17 M edges.
    let (m, mut b) = load("mm_naive", "compute_70", "small.json");
    b.grid = Dim3 {
        x: 256,
        y: 256,
        z: 1,
    };
    let f = m.kernel(&b.kernel).expect("kernel");
    let model = analysis::addr::analyze_kernel(f, &b);
    let edges = analysis::estimate_edges(&model, &b);
    assert!((16_000_000..=70_000_000).contains(&edges), "{edges}");
    let e = analysis::analyze_within(f, &b, Granularity::Line(128), 64 << 20).expect_err("budget");
    assert!(e.to_string().contains("graph edges"), "{e}");
}

#[test]
fn zz_probe() {
    let (m, b) = load("colwalk", "compute_70", "small.colwalk_col.json");
    let f = m.kernel(&b.kernel).expect("kernel");
    let full = analysis::analyze(f, &b, Granularity::Line(128)).expect("full");
    println!("full {:?}", full.unresolved);
    for kb in [16u64, 32, 64, 128, 256, 512, 1024, 4096] {
        let r = analysis::analyze_within(f, &b, Granularity::Line(128), kb << 10);
        match r {
            Ok(a) => println!("{kb} KiB: {:?}", a.unresolved),
            Err(e) => println!("{kb} KiB: err {e}"),
        }
    }
}
