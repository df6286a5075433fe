//! Data-dependent kernels: the loads whose address comes from loaded data are reported
//! unresolved with the reason, the fraction of resolved loads is reported, and the
//! footprints of the resolved loads stay exact.

mod common;

use std::collections::BTreeSet;

use analysis::footprint::Granularity;
use common::*;

/// (kernel dir, launch file): every one has at least one data-dependent load.
const DATA_DEPENDENT: [(&str, &str); 6] = [
    ("bfs", "small.bfs_expand.json"),
    ("spmv_csr", "small.spmv_csr_scalar.json"),
    ("spmv_csr", "small.spmv_csr_vector.json"),
    ("btree_search", "small.json"),
    ("mergesort_step", "small.json"),
    ("tpacf", "small.json"),
];

#[test]
fn data_dependent_loads_are_reported() {
    for (dir, file) in DATA_DEPENDENT {
        for v in VARIANTS {
            let (a, _) = analyse(dir, v, file, Granularity::Line(128));
            let bad: Vec<&String> = a.unresolved.iter().flatten().collect();
            assert!(!bad.is_empty(), "{dir} {v}: every load resolved");
            // Binary searches (mergesort, tpacf) step their bounds on a comparison of the
            // loaded key with a float: the probe index is carried from a floating-point
            // value; the B+tree's descent carries its node index from loaded data. Neither
            // is reported as a mere "loop-carried value that is not an induction variable".
            assert!(
                bad.iter()
                    .all(|r| r.starts_with("data-dependent") || r.starts_with("floating-point")),
                "{dir} {v}: unexpected reasons: {bad:?}"
            );
        }
    }
}

#[test]
fn spmv_scalar_resolved_part_is_exact() {
    for v in VARIANTS {
        for g in [
            Granularity::Line(128),
            Granularity::Sector,
            Granularity::Element,
        ] {
            let (a, b) = analyse("spmv_csr", v, "small.spmv_csr_scalar.json", g);
            let resolved = a.unresolved.iter().filter(|u| u.is_none()).count();
            assert_eq!((resolved, a.unresolved.len()), (2, 17), "{v}");
            // The resolved loads: row_ptr[row] and row_ptr[row + 1].
            let u = match g {
                Granularity::Line(n) => n,
                Granularity::Sector => 32,
                Granularity::Element => 4,
            };
            let n = scalar(&b, 0);
            let mut want = vec![BTreeSet::new(); b.num_tbs() as usize];
            for (tb, c, t) in threads(&b) {
                let row = c[0] * b.block.x as i64 + t[0];
                if row < n {
                    touch(&mut want[tb], &b, 1, row, 4, 4, u);
                    touch(&mut want[tb], &b, 1, row + 1, 4, 4, u);
                }
            }
            assert_eq!(analysis_sets(&a.footprints), want, "{v} {g:?}");
        }
    }
}

/// tpacf's resolved loads: `x[i]`, `y[i]`, `z[i]` and, in the loop `j = i + 1 .. n`,
/// `x[j]`, `y[j]`, `z[j]`; the bin search's `bounds[mid]` stays unresolved. The `j` loop's
/// trip count differs from lane to lane of every warp: the footprints' walk of a warp row's
/// lanes together must fall back to each lane's own count (with the first lane's count for
/// all of them, the other lanes read past `x`).
#[test]
fn tpacf_resolved_part_is_exact() {
    for v in VARIANTS {
        for g in GRANS {
            let (a, b) = analyse("tpacf", v, "small.json", g);
            let n = scalar(&b, 3);
            let want = mirror(&b, unit(g, 4), |c, t, touch| {
                let i = c[0] * b.block.x as i64 + t[0];
                if i < n {
                    for j in std::iter::once(i).chain(i + 1..n) {
                        for p in 0..3 {
                            touch(p, j, 4, 4);
                        }
                    }
                }
            });
            assert_eq!(analysis_sets(&a.footprints), want, "{v} {g:?}");
            // Every resolved load reads inside x, y or z (nothing past their ends).
            for (i, r) in a.footprints.load_ranges.iter().enumerate() {
                if a.unresolved[i].is_none() && !r.is_empty() {
                    let bytes = 4 * n as u64;
                    assert!(
                        r.iter()
                            .all(|r| r.region.is_some_and(|p| p < 3) && r.hi <= bytes),
                        "{v} {g:?}: load {i} reads {r:?}"
                    );
                }
            }
        }
    }
}
