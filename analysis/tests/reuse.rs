//! LASER reuse metrics against counts derived by hand from the CUDA source.

mod common;

use analysis::footprint::Granularity;
use common::*;

#[test]
fn mm_naive_element_streams() {
    // 16x16 blocks, warps = 2 rows of 16 threads. Per k, a warp reads 2 elements of A
    // (its two rows) and 16 of B (shared by both rows): no reuse within a warp. A TB's 8
    // warps read the same 16 B elements per k: TB accesses 8 * 18 * n, distinct 32 * n.
    for v in VARIANTS {
        let (a, b) = analyse("mm_naive", v, "small.json", Granularity::Element);
        let n = scalar(&b, 3) as u64;
        assert_eq!(b.grid.x * 16, n, "full tiles");
        let (g, _) = analysis::locality::build(&a.footprints);
        let r = analysis::reuse::compute(&a, &b, Granularity::Element, &g);
        // The sample: evenly spaced TBs (all of them when they fit the point budget).
        let t = r.sampled_tbs;
        assert!(t >= 1 && t <= r.total_tbs && !r.truncated);
        assert_eq!(r.pair_sampled_tbs, t);
        assert_eq!(r.warp.self_reuse_ratio, 0.0, "{v}");
        assert_eq!(r.warp.accesses, t * 8 * 18 * n);
        assert_eq!(r.tb.accesses, t * 8 * 18 * n);
        assert_eq!(r.tb.unique, t * 32 * n);
        assert!((r.tb.self_reuse_ratio - (1.0 - 32.0 / 144.0)).abs() < 1e-12);
        // Every TB shares with the TBs of its block row (A) and column (B): with a g x g
        // grid, 2 (g - 1) neighbours; it reads the shared row or column in 1/9 of its
        // accesses (2 of 18 per warp and k are A, 16 of 18 are B).
        let gx = b.grid.x;
        assert_eq!(r.pairs, t * 2 * (gx - 1));
        let mut want = [0u64; 10];
        want[analysis::reuse::ratio_bin(2.0 / 18.0)] += t * (gx - 1);
        want[analysis::reuse::ratio_bin(16.0 / 18.0)] += t * (gx - 1);
        assert_eq!(r.pair_ratio_histogram, want, "{v}");
    }
}

#[test]
fn transpose_has_no_reuse() {
    for v in VARIANTS {
        let (a, b) = analyse("transpose", v, "small.json", Granularity::Element);
        let (g, _) = analysis::locality::build(&a.footprints);
        let r = analysis::reuse::compute(&a, &b, Granularity::Element, &g);
        assert_eq!(r.warp.self_reuse_ratio, 0.0);
        assert_eq!(r.tb.self_reuse_ratio, 0.0);
        assert_eq!(r.kernel_cold_accesses, r.tb.accesses);
        assert_eq!(r.pairs, 0);
    }
}

/// The walk that steps addresses affine in the innermost loop's counter against the walk
/// that evaluates every iteration, on every small corpus launch, at line and element
/// granularity: the same metrics, the same points counted, the same truncation.
#[test]
fn stepped_walk_equals_per_iteration_walk() {
    let mut compared = 0;
    for (dir, file) in &small_launches() {
        for g in [Granularity::Line(128), Granularity::Element] {
            let (a, b) = analyse(dir, "compute_70", file, g);
            let (fast, slow) = (
                analysis::reuse::walk(&a, &b, g),
                analysis::reuse::walk_per_iteration(&a, &b, g),
            );
            let (gr, _) = analysis::locality::build(&a.footprints);
            assert_eq!(
                fast.finish(&a, &gr),
                slow.finish(&a, &gr),
                "{dir}/{file} {g:?}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 90, "{compared} launches");
}

/// The count that lets the descriptors' enumeration stop before walking past its budget
/// equals the points the walk visits, TB by TB, on every small corpus launch.
#[test]
fn counted_points_equal_walked_points() {
    let mut compared = 0;
    for (dir, file) in &small_launches() {
        let (a, b) = analyse(dir, "compute_70", file, Granularity::Element);
        let Ok(pts) = analysis::reuse::counted_and_walked_points(&a, &b, 16) else {
            continue;
        };
        for (tb, (counted, walked)) in pts.iter().enumerate() {
            assert_eq!(counted, walked, "{dir}/{file}: sampled TB {tb}");
        }
        compared += usize::from(pts.iter().any(|p| p.1 > 0));
    }
    assert!(compared >= 45, "{compared} launches");
}
