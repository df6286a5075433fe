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
    // GEMM N = 4096 (65,536 TBs): its `A` loads are shared along grid rows and its `B`
    // loads along columns, about 8.4 M expected edges each (doubled for halos). With the
    // default budget both are analysed; with room for one clique the other is left
    // unresolved with reason `budget`; with 64 MiB both are, and the analysis still
    // answers (no error, no graph).
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
    // The matrices of N = 4096 (the small launch's read nothing past its own N).
    let n = 4096;
    b.params[3].value = launch::BoundValue::Scalar { bits: n };
    for p in 0..3 {
        if let launch::BoundValue::Buffer { len, .. } = &mut b.params[p].value {
            *len = n * n;
        }
    }
    let g = Granularity::Line(128);
    let refused = |budget: u64| {
        let a = analysis::analyze_within(f, &b, g, budget).expect("loads refused, no error");
        let r: Vec<usize> = (0..a.unresolved.len())
            .filter(|&i| a.unresolved[i].as_deref() == Some(analysis::GRAPH_BUDGET))
            .collect();
        for &i in &r {
            assert!(a.footprints.load_ranges[i].is_empty(), "load {i}");
        }
        (a, r)
    };
    let tbs_bytes = b.num_tbs() * analysis::BYTES_PER_TB;
    let one_clique = edges / 2 * analysis::BYTES_PER_EDGE;
    let (_, none) = refused(tbs_bytes + 3 * one_clique);
    assert!(none.is_empty(), "{none:?}");
    let (all, both) = refused(64 << 20);
    let resolved: Vec<usize> = (0..model.loads.len())
        .filter(|&i| model.loads[i].unresolved(&model).is_none())
        .collect();
    assert_eq!(both, resolved, "{:?}", all.unresolved);
    assert_eq!(all.footprints.params.len(), 0);
    // Room for one clique: the other's loads are refused, the kept ones read what they
    // read with the whole budget.
    let (full, _) = refused(tbs_bytes + 3 * one_clique);
    let (a, one) = refused(tbs_bytes + one_clique + one_clique / 2);
    assert!(
        !one.is_empty() && one.len() < resolved.len(),
        "{one:?} of {resolved:?}"
    );
    let kept: Vec<usize> = resolved
        .iter()
        .copied()
        .filter(|i| !one.contains(i))
        .collect();
    for &i in &kept {
        assert_eq!(
            a.footprints.load_ranges[i], full.footprints.load_ranges[i],
            "load {i}"
        );
    }
    assert!(
        kept.iter()
            .all(|&i| !a.footprints.load_ranges[i].is_empty()),
        "{kept:?} read nothing"
    );
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

#[test]
fn unresolved_loads_add_no_edges_to_the_estimate() {
    // The paper launches of btree_search and mergesort_step (65,536 TBs): their
    // data-dependent and loop-carried loads read addresses free of `%ctaid`, a clique of
    // every TB had they counted (2^31 edges: both launches were refused up front), but
    // their footprints are never built. What is resolved makes a graph of a few million
    // edges at most.
    for k in ["btree_search", "mergesort_step"] {
        let (m, b) = load(k, "compute_70", "paper.json");
        let f = m.kernel(&b.kernel).expect("kernel");
        let model = analysis::addr::analyze_kernel(f, &b);
        let edges = analysis::estimate_edges(&model, &b);
        assert!(edges < 1 << 22, "{k}: {edges}");
        let a = analysis::analyze(f, &b, Granularity::Line(128)).expect("analysed");
        assert!(
            a.unresolved
                .iter()
                .flatten()
                .all(|r| !r.starts_with("budget")),
            "{k}: {:?}",
            a.unresolved
        );
        // (btree_search's keys are read by neighbouring TBs alike: 1 M edges.)
        let (graph, _) = analysis::locality::build(&a.footprints);
        assert!(graph.edges().count() < 1 << 22, "{k}");
    }
}
