//! A launch that would need more memory than the budget fails fast, before any per-TB work,
//! with the estimate and the budget in the message; a launch that fits but whose footprints
//! do not reports the loads it cannot afford as unresolved with reason `budget`.

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
fn small_budget_leaves_the_costly_loads_unresolved_with_reason_budget() {
    // colwalk_col (kernels/colwalk): every thread walks a column of 500 rows with a pitch of
    // 522 floats, so each of its `A` loads records 500 separate points per thread (~2 MiB per
    // TB at 32 B a point), while its `x` loads record one interval per thread. Under a 4 MiB
    // footprint budget the column loads cannot all be afforded; the row-vector loads can.
    let (m, b) = load("colwalk", "compute_70", "small.colwalk_col.json");
    let f = m.kernel(&b.kernel).expect("kernel");
    let g = Granularity::Line(128);
    let full = analysis::analyze(f, &b, g).expect("analysis with the default budget");
    assert!(
        full.unresolved.iter().all(Option::is_none),
        "{:?}",
        full.unresolved
    );
    let opts = analysis::Options {
        budget: 4 << 20,
        ..analysis::Options::default()
    };
    let t = Instant::now();
    let a = analysis::analyze_with(f, &b, g, &opts).expect("no error, no OOM: loads refused");
    assert!(t.elapsed().as_secs_f64() < 60.0, "{:?}", t.elapsed());
    let refused: Vec<usize> = (0..a.unresolved.len())
        .filter(|&i| a.unresolved[i].is_some())
        .collect();
    assert!(!refused.is_empty(), "no load refused under 4 MiB");
    for &i in &refused {
        let r = a.unresolved[i].as_deref().unwrap_or_default();
        assert!(r.starts_with("budget"), "load {i}: {r}");
        assert!(
            a.footprints.load_ranges[i].is_empty(),
            "load {i} refused but has ranges"
        );
    }
    // The loads that fit are resolved, and read exactly what they read without a budget.
    let kept: Vec<usize> = (0..a.unresolved.len())
        .filter(|&i| a.unresolved[i].is_none() && a.model.counts(i))
        .collect();
    assert!(!kept.is_empty(), "every load refused under 4 MiB");
    for &i in &kept {
        assert_eq!(
            a.footprints.load_ranges[i], full.footprints.load_ranges[i],
            "load {i}"
        );
        assert!(
            !a.footprints.load_ranges[i].is_empty(),
            "load {i} read nothing"
        );
    }
}
