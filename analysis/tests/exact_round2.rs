//! Issue 13, part A: exact footprints on the kernels written for it (`kernels/guarded_loads`,
//! `mirror_boundary`, `float_bound`, `colwalk`), each reference mirroring its `.cu` file.
//! Guarded loads count with `may_loads` (their launch makes every guard true, so the
//! may-footprint is exact there) and not without; the mirrored walk and the `~` counter are
//! non-affine recurrences; the loop bound is `ceil((double)n / 512)`.
//!
//! `mirror_boundary` is slow to enumerate (every address is a stepped recurrence): only its
//! compute_70 variant runs by default; `cargo test --release -p analysis --test exact_round2
//! -- --ignored` runs compute_90 and nvcc 13 (unrolled by 4) too.

mod common;

use analysis::addr::Guard;
use common::*;
use launch::BoundLaunch;

fn run(
    dir: &str,
    launch_file: &str,
    variants: &[&str],
    esize: u64,
    may: bool,
    reference: impl Fn(&BoundLaunch, u64) -> RefSets,
) {
    for v in variants {
        for g in GRANS {
            let (m, b) = load(dir, v, launch_file);
            let f = m.kernel(&b.kernel).expect("kernel");
            let opts = analysis::Options {
                may_loads: may,
                ..analysis::Options::default()
            };
            let a = analysis::analyze_with(f, &b, g, &opts).expect("analysis");
            let want = reference(&b, unit(g, esize));
            assert_exact(&a, &want, &format!("{dir} {v} {g:?}"));
        }
    }
}

/// `u`: the unit of the 4-byte buffers; the u8 mask's unit is 1 byte at element
/// granularity (`u == 4`) and `u` otherwise.
fn guarded_reference(b: &BoundLaunch, u: u64, may: bool) -> RefSets {
    let n = scalar(b, 5);
    let mask_unit = if u == 4 { 1 } else { u };
    let masks = mirror(b, mask_unit, |c, t, touch| {
        if c[0] * 96 + t[0] < n {
            touch(0, c[0] * 96 + t[0], 1, 1);
        }
    });
    let rest = mirror(b, u, |c, t, touch| {
        let tid = c[0] * 96 + t[0];
        if tid < n && may {
            touch(1, 2 * tid, 4, 4);
            touch(1, 2 * tid + 1, 4, 4);
            touch(2, tid, 4, 4);
            touch(3, tid + 32, 4, 4);
        }
    });
    masks
        .into_iter()
        .zip(rest)
        .map(|(mut a, b)| {
            a.extend(b);
            a
        })
        .collect()
}

#[test]
fn guarded_loads_are_may_loads() {
    // With --may-loads: the address footprints of all five loads (the launch's mask is all
    // ones and its costs above 0.5, so every guard holds: the may-footprint is the exact one).
    run("guarded_loads", "small.json", &VARIANTS, 4, true, |b, u| {
        guarded_reference(b, u, true)
    });
    // Without: only the exactly determined load, mask[tid].
    run(
        "guarded_loads",
        "small.json",
        &VARIANTS,
        4,
        false,
        |b, u| guarded_reference(b, u, false),
    );
    // The guards' nature: mask[tid] under `tid < n`, nodes and cost under the loaded mask,
    // weight under a float comparison.
    for v in VARIANTS {
        let (m, b) = load("guarded_loads", v, "small.json");
        let f = m.kernel(&b.kernel).expect("kernel");
        let model = analysis::addr::analyze_kernel(f, &b);
        let mut g: Vec<Guard> = model.loads.iter().map(|l| l.guard()).collect();
        g.sort_by_key(|x| x.as_str());
        assert_eq!(
            g,
            [
                Guard::DataDependent,
                Guard::DataDependent,
                Guard::DataDependent,
                Guard::FloatingPoint,
                Guard::Static
            ],
            "{v}"
        );
    }
}

fn mirror_reference(b: &BoundLaunch, u: u64) -> RefSets {
    let (w, len) = (scalar(b, 3), scalar(b, 4));
    mirror(b, u, |c, t, touch| {
        let mut x = c[0] * 64 + t[0];
        let row = c[1];
        if x >= w {
            return;
        }
        let mut d = 1 + (t[0] & 1);
        let mut tt = t[0] as i32;
        for _ in 0..len {
            touch(0, row * w + x, 4, 4);
            touch(1, i64::from(tt & 63), 4, 4);
            x += d;
            if x >= w {
                x = 2 * (w - 1) - x;
                d = -d;
            } else if x < 0 {
                x = -x;
                d = -d;
            }
            tt = (!tt).wrapping_add(3);
        }
    })
}

#[test]
fn mirrored_boundary_and_not_counter() {
    run(
        "mirror_boundary",
        "small.json",
        &["compute_70"],
        4,
        false,
        mirror_reference,
    );
}

#[test]
#[ignore = "about three minutes on a loaded 2-core machine"]
fn mirrored_boundary_compute_90() {
    run(
        "mirror_boundary",
        "small.json",
        &["compute_90"],
        4,
        false,
        mirror_reference,
    );
}

#[test]
#[ignore = "about a minute: the nvcc 13 variant unrolls the mirror by 4"]
fn mirrored_boundary_nvcc13() {
    run(
        "mirror_boundary",
        "small.json",
        &["nvcc13.sm_90"],
        4,
        false,
        mirror_reference,
    );
}

#[test]
fn float_derived_loop_bound() {
    run("float_bound", "small.json", &VARIANTS, 4, false, |b, u| {
        let n = scalar(b, 2);
        // ceil((double)n / 512) and (int)(frac * 4.0f), from the launch file's values.
        let chunks = (n + 511) / 512;
        let skip = 2; // frac = 0.5
        mirror(b, u, |c, t, touch| {
            let tid = c[0] * 128 + t[0];
            for ch in skip..chunks {
                let i = ch * 512 + tid;
                if i < n {
                    touch(0, i, 4, 4);
                }
            }
        })
    });
}

fn colwalk_reference(b: &BoundLaunch, u: u64, col: bool) -> RefSets {
    let (rows, cols, ld) = (scalar(b, 3), scalar(b, 4), scalar(b, 5));
    mirror(b, u, |c, t, touch| {
        let me = c[0] * 128 + t[0];
        if col && me < cols {
            for i in 0..rows {
                touch(0, i * ld + me, 4, 4);
                touch(1, i, 4, 4);
            }
        } else if !col && me < rows {
            for j in 0..cols {
                touch(0, me * ld + j, 4, 4);
                touch(1, j, 4, 4);
            }
        }
    })
}

#[test]
fn column_and_row_walks() {
    run(
        "colwalk",
        "small.colwalk_col.json",
        &VARIANTS,
        4,
        false,
        |b, u| colwalk_reference(b, u, true),
    );
    run(
        "colwalk",
        "small.colwalk_row.json",
        &VARIANTS,
        4,
        false,
        |b, u| colwalk_reference(b, u, false),
    );
}

#[test]
fn float_constant_folding_matches_the_launch() {
    // The `frac` parameter is an f32 scalar: 0.5 * 4.0f = 2.0 exactly, so skip = 2.
    let (_, b) = load("float_bound", "compute_70", "small.json");
    assert_eq!(scalar(&b, 3) as u32, 0.5f32.to_bits());
}

/// Trip counts that differ from TB to TB and from thread to thread (scalar_prod with 40
/// vectors over 16 TBs and 1,000 elements over 256 threads): the footprints share the counts
/// that depend on no `%ctaid` across TBs (`footprint::SharedTrips`), and must not share the
/// others. Found by mutation: with every count shared, no other test failed.
#[test]
fn trip_counts_that_differ_across_tbs() {
    check(
        "scalar_prod",
        "../../analysis/tests/launches/scalar_prod_uneven.json",
        4,
        |b, u| {
            let (vectors, elements) = (scalar(b, 3), scalar(b, 4));
            let grid = i64::try_from(b.grid.x).expect("grid");
            mirror(b, u, |c, t, touch| {
                let mut v = c[0];
                while v < vectors {
                    let mut e = t[0];
                    while e < elements {
                        touch(1, v * elements + e, 4, 4);
                        touch(2, v * elements + e, 4, 4);
                        e += 256;
                    }
                    v += grid;
                }
            })
        },
    );
}

/// A launch of `analysis/tests/ptx/lane_trips.ptx`'s `kernel`: `a` of `len` floats, `out`
/// of `rows`, and the scalar `w`.
fn lane_trips_launch(
    kernel: &str,
    grid: i64,
    block: i64,
    w: i64,
) -> (ptx_parser::Module, BoundLaunch) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx");
    let m = ptx_parser::parse_file(&dir.join("lane_trips.ptx")).expect("parse");
    let l = launch::Launch::from_json(
        &format!(
            r#"{{"format": "paver-launch/1", "kernel": "{kernel}", "grid": [{grid}, 1, 1],
                "block": [{block}, 1, 1], "params": [
                  {{"index": 0, "buffer": {{"type": "f32", "len": {len}, "init": "zeros"}}}},
                  {{"index": 1, "buffer": {{"type": "f32", "len": {rows}, "init": "zeros"}}}},
                  {{"index": 2, "value": {w}}}]}}"#,
            rows = grid * block,
            len = grid * block * w,
        ),
        &dir.join("lane_trips.json"),
    )
    .expect("launch");
    let f = m.kernel(kernel).expect("kernel");
    let b = l
        .bind(kernel, &analysis::param_sigs(f), &dir)
        .expect("bind");
    (m, b)
}

/// Loops whose trip count differs between the lanes of a warp row
/// (`analysis/tests/ptx/lane_trips.cu`, compiled by nvcc 13): `lane_trips` runs `t % 37`
/// iterations (unrolled by 4, so growing along the lanes), `lane_breaks` leaves after one
/// iteration in every fourth lane. The lanes of a row are walked together only while their
/// counts agree. Found by mutation: with the first or the last lane's count taken for every
/// lane, no corpus test failed (tpacf's counts fall along the lanes, and its guards and the
/// TB union hide the error).
#[test]
fn trip_counts_that_differ_along_a_warp_row() {
    for (grid, block, w) in [(3, 64, 40), (2, 96, 37), (1, 45, 50)] {
        for kernel in ["lane_trips", "lane_breaks"] {
            let (m, b) = lane_trips_launch(kernel, grid, block, w);
            let f = m.kernel(kernel).expect("kernel");
            for g in GRANS {
                let a = analysis::analyze(f, &b, g).expect("analysis");
                let want = mirror(&b, unit(g, 4), |c, t, touch| {
                    let row = c[0] * block + t[0];
                    if kernel == "lane_trips" {
                        for j in 0..t[0] % 37 {
                            touch(0, row * w + j, 4, 4);
                        }
                        if t[0] % 3 == 0 {
                            touch(0, row * w + w - 1, 4, 4);
                        }
                    } else {
                        let n = if t[0] % 4 == 1 { 1 } else { w };
                        for k in 0..n {
                            touch(0, row * w + k, 4, 4);
                        }
                    }
                });
                let what = format!("{kernel} {grid}x{block} w {w} {g:?}");
                assert_exact(&a, &want, &what);
            }
        }
    }
}
