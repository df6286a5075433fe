//! Locality Descriptors: the Locality Descriptor paper's histo example (Figure 9), corpus
//! kernels with known shapes, and agreement of the z3 and enumeration paths (the z3 parts
//! run when this process loads z3, `native::z3`; they are required under `CI=true`).

mod common;

use analysis::descriptor::{self, DecidedBy, Derived, Descriptor, LocalityType, Pattern, Sharing};
use analysis::footprint::Granularity;
use common::*;
use launch::{BoundLaunch, Launch};

/// X_len = 64, Y_len = 8, X_tile = blockDim.x = 16; grid (4, 3): 3 TBs share each strip.
fn histo() -> (ptx_parser::Module, BoundLaunch) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx");
    let m = ptx_parser::parse_file(&dir.join("histo_fig9.ptx")).expect("parse");
    let l = Launch::from_json(
        r#"{"format": "paver-launch/1", "kernel": "histo_fig9", "grid": [4, 3, 1],
            "block": [16, 1, 1], "params": [
              {"index": 0, "buffer": {"type": "u32", "len": 512, "init": "zeros"}},
              {"index": 1, "value": 64}, {"index": 2, "value": 8}]}"#,
        &dir.join("histo.json"),
    )
    .expect("launch");
    let f = m.kernel("histo_fig9").expect("kernel");
    let b = l
        .bind("histo_fig9", &analysis::param_sigs(f), &dir)
        .expect("bind");
    (m, b)
}

fn derived(m: &ptx_parser::Module, b: &BoundLaunch, g: Granularity) -> Vec<Derived> {
    let f = m.kernel(&b.kernel).expect("kernel");
    let a = analysis::analyze(f, b, g).expect("analysis");
    descriptor::compute(f, &a, b)
}

fn descriptors(m: &ptx_parser::Module, b: &BoundLaunch, g: Granularity) -> Vec<Descriptor> {
    descriptor::descriptors(&derived(m, b, g))
}

#[test]
fn histo_figure_9() {
    let (m, b) = histo();
    let d = derived(&m, &b, Granularity::Element);
    assert_eq!(d.len(), 1);
    let evidence = &d[0];
    let d = &evidence.descriptor;
    // D-Tile (X_tile, Y_len, 1), C-Tile (1, GridDim.y, 1), map (1, 0, 0), stride X_len.
    assert_eq!(d.d_tile, [16, 8, 1]);
    assert_eq!(d.c_tile, [1, 3, 1]);
    assert_eq!(d.compute_data_map, [1, 0, 0]);
    assert_eq!((d.pattern, d.stride_elements), (Pattern::Regular, Some(64)));
    assert_eq!(d.locality_type, LocalityType::InterThread);
    assert_eq!(d.sharing, Some(Sharing::Coaccessed));
    assert_eq!(evidence.intra_thread_reuse, Some(false));
    // The C-Tile -> D-Tile map: C-Tile x reads columns [16x, 16x + 16) of every row.
    assert_eq!(evidence.tile_map.len(), 4);
    for (x, e) in evidence.tile_map.iter().enumerate() {
        let x = x as u64;
        assert_eq!(e.c_tile, [x, 0, 0]);
        let want: Vec<[u64; 2]> = (0..8)
            .map(|y| [y * 64 + 16 * x, y * 64 + 16 * x + 16])
            .collect();
        assert_eq!(e.d_tile, want);
    }
}

#[test]
fn corpus_shapes() {
    // mm_naive: A[row*n + k] depends on ctaid.y only, B[k*n + col] on ctaid.x only.
    let (m, b) = load("mm_naive", "compute_70", "small.json");
    let n = scalar(&b, 3) as u64;
    let d = descriptors(&m, &b, Granularity::Element);
    let (a, bb) = (&d[0], &d[1]);
    assert_eq!(a.compute_data_map, [0, 1, 0]);
    assert_eq!(a.c_tile, [b.grid.x, 1, 1]);
    assert_eq!(a.d_tile, [16 * n, 1, 1]);
    assert_eq!(bb.compute_data_map, [1, 0, 0]);
    assert_eq!((bb.d_tile, bb.stride_elements), ([16, n, 1], Some(n)));
    assert!(a.locality_type == LocalityType::InterThread && a.sharing == Some(Sharing::Coaccessed));
    // Output C is never loaded: no descriptor (A and B only).
    assert_eq!(d.iter().map(|x| x.param).collect::<Vec<_>>(), [0, 1]);
    // Rank form: A's C-Tiles follow ctaid.y only, B's ctaid.x only.
    assert_eq!(
        (a.compute_data_rank, bb.compute_data_rank),
        ([0, 1, 0], [1, 0, 0])
    );
    // Priority: both INTER-THREAD; A (16 rows of n per TB) and B (n rows of 16) carry
    // equal data references, so the lower index wins.
    assert_eq!((a.priority, bb.priority), (1, 2));
    // transpose: every element read once.
    let (m, b) = load("transpose", "compute_70", "small.json");
    let d = descriptors(&m, &b, Granularity::Element);
    assert_eq!(d[0].locality_type, LocalityType::NoReuse);
    assert_eq!(d[0].compute_data_map, [1, 1, 0]);
    // in[y*cols + x]: a ctaid.x step moves 16 elements, a ctaid.y step 16 rows: X first.
    assert_eq!(d[0].compute_data_rank, [1, 2, 0]);
    // A question left open is UNDECIDED with unknown flags, never NO-REUSE.
    let f = m.kernel(&b.kernel).expect("kernel");
    let a = analysis::analyze(f, &b, Granularity::Element).expect("analysis");
    let open = vec![(descriptor::Existence::default(), DecidedBy::Undecided); b.params.len()];
    let u = descriptor::describe(f, &a, &b, &open);
    assert_eq!(
        (
            u[0].descriptor.locality_type,
            u[0].descriptor.sharing,
            u[0].inter_tb_reuse
        ),
        (LocalityType::Undecided, None, None)
    );
    // stencil2d: neighbouring TBs overlap in their halos.
    let (m, b) = load("stencil2d", "compute_70", "small.json");
    let d = descriptors(&m, &b, Granularity::Element);
    assert_eq!(
        (d[0].locality_type, d[0].sharing),
        (LocalityType::InterThread, Some(Sharing::Nearby))
    );
    // storegpu_sliding_hash: a thread reads each byte once, overlapping windows of
    // neighbouring threads are shared across TB boundaries.
    let (m, b) = load(
        "storegpu_hash",
        "compute_70",
        "small.storegpu_sliding_hash.json",
    );
    let d = descriptors(&m, &b, Granularity::Element);
    assert_eq!(
        (d[0].locality_type, d[0].sharing),
        (LocalityType::InterThread, Some(Sharing::Nearby))
    );
    // spmv: data-dependent loads make the vector's pattern IRREGULAR.
    let (m, b) = load("spmv_csr", "compute_70", "small.spmv_csr_scalar.json");
    let d = descriptors(&m, &b, Granularity::Element);
    assert!(d.iter().any(|x| x.pattern == Pattern::Irregular));
}

/// Naive GEMM at N = 1024 (4,096 TBs): far past the enumeration budget. Every row of A is
/// read by a whole block row and every column band of B by a whole block column (both
/// INTER-THREAD, COACCESSED), and no thread reads an element of either twice. The default
/// path decides it without z3 (`analytic`: A's loads do not use `%ctaid.x`, B's not
/// `%ctaid.y`; the unrolled loop's loads are 4 bytes apart with a 16-byte stride for A and
/// a 4 n-byte stride for B, which the dependence test excludes); z3 alone agrees.
#[test]
fn gemm_1024_decided_without_enumeration() {
    let (m, mut b) = load("mm_naive", "compute_70", "small.json");
    let n = 1024u64;
    b.grid = launch::Dim3 {
        x: n / 16,
        y: n / 16,
        z: 1,
    };
    b.params[3].value = launch::BoundValue::Scalar { bits: n };
    for p in 0..3 {
        if let launch::BoundValue::Buffer { len, .. } = &mut b.params[p].value {
            *len = n * n;
        }
    }
    let f = m.kernel(&b.kernel).expect("kernel");
    let a = analysis::analyze(f, &b, Granularity::Element).expect("analysis");
    // Enumeration would visit 4,096 TBs x 256 threads x 1,024 iterations x 2 loads = 2^31
    // points, 128 times `ENUM_BUDGET`.
    assert!(b.num_tbs() * 256 * n * 2 > descriptor::ENUM_BUDGET);
    let mut paths = vec![
        (descriptor::compute(f, &a, &b), DecidedBy::Analytic),
        (
            descriptor::compute_with(f, &a, &b, false),
            DecidedBy::Analytic,
        ),
    ];
    if let Some(z3) = z3_or_skip("gemm_1024_decided_without_enumeration") {
        // z3 alone decides both within its budget on CI's pinned 5.4.1.0; 4.8.12 (Debian's
        // libz3-4) runs out on `B` (measured 2026-11-28), so only the pinned version's
        // reach is asserted here.
        if z3.version() == "5.4.1.0" {
            paths.push((descriptor::compute_z3(f, &a, &b, z3), DecidedBy::Z3));
        } else {
            eprintln!(
                "gemm_1024_decided_without_enumeration: z3 {} not pinned, its reach unchecked",
                z3.version()
            );
        }
    }
    for (d, by) in paths {
        for (x, map, c_tile) in [
            (&d[0], [0, 1, 0], [64, 1, 1]),
            (&d[1], [1, 0, 0], [1, 64, 1]),
        ] {
            assert_eq!(x.decided_by, by, "param {}", x.descriptor.param);
            assert_eq!(
                (
                    x.descriptor.locality_type,
                    x.descriptor.sharing,
                    x.intra_thread_reuse
                ),
                (
                    LocalityType::InterThread,
                    Some(Sharing::Coaccessed),
                    Some(false)
                )
            );
            assert_eq!(
                (x.descriptor.compute_data_map, x.descriptor.c_tile),
                (map, c_tile)
            );
        }
        assert_eq!(
            (d[1].descriptor.d_tile, d[1].descriptor.stride_elements),
            ([16, n, 1], Some(n))
        );
    }
}

/// The fast paths against concrete enumeration (and z3, when it loads), on every load
/// pair of every data structure of every small corpus launch: wherever the dependence test
/// answers an intra-thread pair, a per-pair enumeration of every thread and iteration (and
/// z3 where it answers) gives the same answer; wherever the footprint test answers the
/// inter-TB question, the whole-launch enumeration gives the same.
#[test]
fn fast_paths_agree_with_enumeration_and_z3() {
    use analysis::dependence;
    let (mut pairs_fast, mut pairs_open, mut inter_fast, mut inter_open) = (0, 0, 0, 0);
    let mut z3_checked = 0;
    let z3 = z3_or_skip("fast_paths_agree_with_enumeration_and_z3");
    let mut open: Vec<String> = Vec::new();
    for (dir, file) in &small_launches() {
        let (m, b) = load(dir, "compute_70", file);
        let f = m.kernel(&b.kernel).expect("kernel");
        let a = analysis::analyze(f, &b, Granularity::Element).expect("analysis");
        let e = descriptor::existence_by_enumeration(&a, &b).expect("within budget");
        let lp = descriptor::load_params(&a);
        let r = dependence::Ranges::new(&a, &b);
        for p in descriptor_params_fully_resolved(&a) {
            let Some(eb) = b.region_elem_bytes(p as usize) else {
                continue;
            };
            let loads = dependence::param_loads(&a, &lp, p);
            match dependence::inter_tb(&a, &b, p, eb, &loads) {
                Some(x) => {
                    assert_eq!(x, e[p as usize].inter_tb, "{dir}/{file} param {p} inter-TB");
                    inter_fast += 1;
                }
                None => {
                    inter_open += 1;
                    open.push(format!("{dir} {p} inter"));
                }
            }
            let mut pairs_here = 0;
            for (x, &i) in loads.iter().enumerate() {
                for &j in &loads[x..] {
                    let Some(fast) = dependence::intra_pair(&a, &r, p, eb, i, j) else {
                        pairs_open += 1;
                        continue;
                    };
                    let truth =
                        dependence::intra_pair_by_enumeration(&a, &b, p, eb, (i, j), 1 << 24)
                            .expect("pair enumeration within budget");
                    pairs_fast += 1;
                    assert_eq!(fast, truth, "{dir}/{file} param {p} loads {i}, {j}");
                    // z3 on the first four decided pairs of each parameter (each query
                    // costs tens of milliseconds; the enumeration above checks them all).
                    if let Some(z3) = z3.filter(|_| pairs_here < 4) {
                        if let Some(z) = analysis::smt::pair(z3, &a, &b, (p, eb), (i, j), true) {
                            assert_eq!(fast, z, "{dir}/{file} param {p} loads {i}, {j}: z3");
                            z3_checked += 1;
                        }
                    }
                    pairs_here += 1;
                }
            }
        }
    }
    eprintln!(
        "pairs decided fast {pairs_fast}, open {pairs_open} (z3 agreed on {z3_checked}); \
         inter-TB decided fast {inter_fast}, open {inter_open}: {open:?}"
    );
    // Most pairs of the corpus are plain strided loads the test decides.
    assert!(
        pairs_fast >= 100 && pairs_fast > pairs_open,
        "{pairs_fast} vs {pairs_open}"
    );
    assert!(inter_fast > 3 * inter_open, "{inter_fast} vs {inter_open}");
    if z3.is_some() {
        assert!(z3_checked >= 100, "z3 answered only {z3_checked} pairs");
    }
}

#[test]
fn existence_paths_agree_on_the_corpus() {
    // Every path on every small launch of the corpus: for every pointer parameter whose
    // loads are all resolved, the default path's answers (fast tests, then enumeration on
    // these small launches) and z3's alone (when z3 loads) equal the enumeration's, and z3
    // alone decides every one of them but the pinned list. The default path never asks z3
    // on launches this small: its descriptors with z3 switched off are the same, field for
    // field.
    let launches = small_launches();
    let z3 = z3_or_skip("existence_paths_agree_on_the_corpus");
    let (mut checked, mut not_z3, mut not_fast) = (0, Vec::new(), Vec::new());
    let mut report = String::new();
    for (dir, file) in &launches {
        let (m, b) = load(dir, "compute_70", file);
        let f = m.kernel(&b.kernel).expect("kernel");
        let a = analysis::analyze(f, &b, Granularity::Element).expect("analysis");
        let e = descriptor::existence_by_enumeration(&a, &b).expect("within budget");
        let params = descriptor_params_fully_resolved(&a);
        let t = std::time::Instant::now();
        let d = descriptor::compute(f, &a, &b);
        let t_fast = t.elapsed();
        assert_eq!(
            d,
            descriptor::compute_with(f, &a, &b, false),
            "{dir}/{file}: the default path without z3"
        );
        let t = std::time::Instant::now();
        let dz = z3.map(|z3| descriptor::compute_z3(f, &a, &b, z3));
        report.push_str(&format!(
            "{dir}/{file}: default {t_fast:.2?} {:?}; z3 {:.2?} {:?}\n",
            d.iter()
                .map(|x| (x.descriptor.param, x.decided_by))
                .collect::<Vec<_>>(),
            t.elapsed(),
            dz.iter()
                .flatten()
                .map(|x| (x.descriptor.param, x.decided_by))
                .collect::<Vec<_>>()
        ));
        for (k, x) in d.iter().enumerate() {
            if !params.contains(&x.descriptor.param) {
                continue;
            }
            let y = dz.as_ref().map(|dz| &dz[k]);
            let want = e[x.descriptor.param as usize];
            for z in std::iter::once(x).chain(y) {
                assert_eq!(
                    (z.inter_tb_reuse, z.intra_thread_reuse),
                    (Some(want.inter_tb), Some(want.intra_thread)),
                    "{dir}/{file} param {}: {:?}",
                    z.descriptor.param,
                    z.decided_by
                );
                assert_ne!(z.decided_by, DecidedBy::Undecided);
            }
            checked += 1;
            if let Some(y) = y.filter(|y| y.decided_by != DecidedBy::Z3) {
                not_z3.push(format!("{dir} {}", y.descriptor.param));
            }
            if x.decided_by != DecidedBy::Analytic {
                not_fast.push(format!("{dir} {}", x.descriptor.param));
            }
        }
    }
    eprint!("{report}");
    eprintln!("left open by the fast tests: {not_fast:?}");
    // The parameters the fast tests (`decided_by: analytic`) leave to enumeration or z3,
    // pinned so that a change either way shows. A thread that rereads an element is shown
    // by a concrete witness (`dependence::intra_thread_witness_at`; on these small launches
    // in the first and last warp of the grid's first and last TB: fdtd3d, mirror_boundary,
    // sad, srad's two kernels, ...), and units of several elements that meet are settled by
    // element footprints (`dependence::inter_tb_by_element_footprints`: colwalk's column-walked
    // matrix). Left: gemv_unroll's two parameters (no reuse in one thread by enumeration;
    // the remainder loop starts at 4 * the unrolled loop's trip count, a relation the
    // dependence test's ranges do not carry).
    assert_eq!(
        not_fast,
        ["gemv_unroll 0", "gemv_unroll 1"],
        "the fast tests left other parameters open:\n{report}"
    );
    eprint!("{report}");
    assert!(checked >= 60, "only {checked} parameters checked");
    let Some(z3) = z3 else {
        return;
    };
    // The parameters z3 leaves to enumeration, pinned so that a change either way shows:
    // jacobi3d's input (seven stencil loads: a query runs out of `smt::RLIMIT`) and sad's
    // two frames, module_array's input and libor's forward rates (17, 16 and 17 loads: the
    // unrolled time-step and portfolio loops; past `smt::MAX_PAIRS` load pairs); module
    // variables (ids 3, 4 of module_array) and struct fields' buffers (id 1024) are not
    // modelled by z3; mirror_boundary's addresses are loop recurrences (`Expr::Rec`, stepped
    // concretely, which z3 is not given); colwalk's column-walked matrix is not decided by z3
    // within its limits; rr_friendly's window and sync entries have 11 and 20 loads (past
    // `smt::MAX_PAIRS`) and its table walk is not decided by z3 within its limits either.
    let mut want = vec![
        "colwalk 0",
        "jacobi3d 0",
        "libor 0",
        "mirror_boundary 0",
        "mirror_boundary 1",
        "module_array 0",
        "module_array 3",
        "module_array 4",
        "rr_friendly 0",
        "rr_friendly 0",
        "rr_friendly 0",
        "sad 0",
        "sad 1",
        "struct_param 1024",
    ];
    // How far the budget reaches depends on z3's version (and on how the terms are
    // numbered: the `z3` crate's reference-counted contexts decided srad_update's 1 and 5
    // with 4.8.12): the versions tested are pinned, CI's first (`.ci/run` pins its wheel).
    let out_of_budget: &[&str] = match z3.version() {
        "5.4.1.0" => &[
            "atax 0",
            "dwt2d 0",
            "mm_tiled 1",
            "mvt 0",
            "srad 0",
            "srad 2",
            "srad 3",
            "transpose 0",
        ],
        // scalar_prod's second vector since issue 41's join rule (fewer guard literals
        // outside the loops, a different query) with Debian's 4.8.12 only.
        "4.8.12.0" => &["scalar_prod 1", "srad 1", "srad 5"],
        v => {
            eprintln!("z3 {v}: no pinned list; left to enumeration: {not_z3:?}");
            return;
        }
    };
    want.extend_from_slice(out_of_budget);
    want.sort_unstable();
    not_z3.sort_unstable();
    assert_eq!(
        not_z3,
        want,
        "z3 {} left other parameters to enumeration:\n{report}",
        z3.version()
    );
}

/// The corpus kernel whose open questions the default path gives z3 (gemv_unroll: its
/// remainder loop starts where the unrolled one ends, which the dependence test's ranges do
/// not carry; every other launch of the corpus is decided by the fast tests, or by
/// enumeration when small), on a launch past `SMALL_LAUNCH_POINTS` and within
/// `ENUM_BUDGET` (n = 1,022: 2^19 thread-iterations): with z3 switched off it gets the same
/// descriptors but for `decided_by`, enumeration deciding instead. (Its paper launch, 2^26
/// thread-iterations, is past enumeration's budget: there only z3 decides, and a machine
/// without it reports UNDECIDED.)
#[test]
fn descriptors_without_z3_equal_those_with_it() {
    let (m, mut b) = load("gemv_unroll", "compute_70", "small.json");
    let (n, lda) = (1022u64, 1024u64);
    b.params[4].value = launch::BoundValue::Scalar { bits: n };
    b.params[5].value = launch::BoundValue::Scalar { bits: lda };
    for (p, want) in [(0, 512 * lda), (1, n)] {
        if let launch::BoundValue::Buffer { len, .. } = &mut b.params[p].value {
            *len = want;
        }
    }
    let f = m.kernel(&b.kernel).expect("kernel");
    let a = analysis::analyze(f, &b, Granularity::Element).expect("analysis");
    let off = descriptor::compute_with(f, &a, &b, false);
    assert_eq!(off.len(), 2);
    for x in &off {
        assert_eq!(
            x.decided_by,
            DecidedBy::Enumeration,
            "param {}",
            x.descriptor.param
        );
    }
    let Some(_) = z3_or_skip("descriptors_without_z3_equal_those_with_it") else {
        return;
    };
    let mut on = descriptor::compute_with(f, &a, &b, true);
    for x in &mut on {
        assert_eq!(x.decided_by, DecidedBy::Z3, "param {}", x.descriptor.param);
        x.decided_by = DecidedBy::Enumeration;
    }
    assert_eq!(on, off);
}

/// The default path's answers on footprints of 128-byte lines equal the enumeration's on
/// every small launch: there a structure whose TBs share lines but not elements (a column
/// walk's pitch, a stencil's halo) is not answered by the footprints, and the address test,
/// the inter-TB witness and the element footprints decide it (at element granularity the
/// footprints answer every inter-TB question themselves).
#[test]
fn existence_at_line_granularity_equals_enumeration() {
    let mut checked = 0;
    for (dir, file) in &small_launches() {
        let (m, b) = load(dir, "compute_70", file);
        let f = m.kernel(&b.kernel).expect("kernel");
        let a = analysis::analyze(f, &b, Granularity::Line(128)).expect("analysis");
        let e = descriptor::existence_by_enumeration(&a, &b).expect("within budget");
        let params = descriptor_params_fully_resolved(&a);
        for x in descriptor::compute(f, &a, &b)
            .iter()
            .filter(|x| params.contains(&x.descriptor.param))
        {
            let want = e[x.descriptor.param as usize];
            assert_eq!(
                (x.inter_tb_reuse, x.intra_thread_reuse),
                (Some(want.inter_tb), Some(want.intra_thread)),
                "{dir}/{file} param {}: {:?}",
                x.descriptor.param,
                x.decided_by
            );
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked} structures compared");
    // A GEMM's guards hide that its TBs' rows do not depend on `%ctaid.x`; on its paper
    // launch (65,536 TBs: the element footprints are past their budget) the witness finds
    // the shared row in the first threads of two neighbours.
    let (m, b) = load("mm_naive", "compute_70", "paper.json");
    let f = m.kernel(&b.kernel).expect("kernel");
    let a = analysis::analyze(f, &b, Granularity::Line(128)).expect("analysis");
    for x in descriptor::compute(f, &a, &b) {
        assert_eq!(
            x.decided_by,
            DecidedBy::Analytic,
            "mm_naive param {}",
            x.descriptor.param
        );
        assert_eq!(
            x.inter_tb_reuse,
            Some(true),
            "mm_naive param {}",
            x.descriptor.param
        );
    }
}

/// Pointer parameters every one of whose loads is resolved (the others' answers come from
/// the resolved part only, on both paths).
fn descriptor_params_fully_resolved(a: &analysis::Analysis) -> Vec<u32> {
    let lp = descriptor::load_params(a);
    let mut bad: Vec<u32> = Vec::new();
    let mut all: Vec<u32> = Vec::new();
    for (u, p) in a.unresolved.iter().zip(&lp) {
        match (u, p) {
            (None, Some(p)) => all.push(*p),
            (Some(_), Some(p)) => bad.push(*p),
            (Some(_), None) => return Vec::new(),
            (None, None) => {}
        }
    }
    all.retain(|p| !bad.contains(p));
    all.sort_unstable();
    all.dedup();
    all
}

/// The element question's affine answer (`dependence::tbs_read_apart`: one load, outside
/// loops, whose TBs' accesses never meet) agrees with the element footprints wherever it
/// answers, on every small launch of the corpus analysed at lines (where units of several
/// elements meet and the question is asked), and it answers for the loop-free stencils'
/// one-load arrays (srad_update's image and its four derivative arrays among them).
#[test]
fn affine_element_answers_agree_with_element_footprints() {
    use analysis::dependence::{inter_tb_by_element_footprints, tbs_read_apart, Ranges};
    let mut answered = Vec::new();
    for (dir, file) in small_launches() {
        let (m, b) = load(&dir, "compute_70", &file);
        let f = m.kernel(&b.kernel).expect("kernel");
        let a = analysis::analyze(f, &b, Granularity::Line(128)).expect("analysis");
        let ranges = Ranges::new(&a, &b);
        for p in b.region_ids() {
            let Some(eb) = b.region_elem_bytes(p) else {
                continue;
            };
            let reading: Vec<usize> = (0..a.model.loads.len())
                .filter(|&i| {
                    a.model.counts(i)
                        && a.unresolved.get(i).is_some_and(Option::is_none)
                        && a.footprints.load_ranges.get(i).is_some_and(|v| {
                            v.iter().any(|r| r.region == Some(p as u32) && r.lo < r.hi)
                        })
                })
                .collect();
            let [i] = reading[..] else {
                continue;
            };
            if !tbs_read_apart(&a, &ranges, i, eb) {
                continue;
            }
            let want = inter_tb_by_element_footprints(&a, &b, p as u32, eb);
            assert_eq!(want, Some(false), "{dir}/{file} param {p}");
            answered.push(format!("{dir}/{file} {p}"));
        }
    }
    for p in [0, 2, 3, 4, 5] {
        let want = format!("srad/small.srad_update.json {p}");
        assert!(
            answered.contains(&want),
            "{want} not answered: {answered:?}"
        );
    }
    eprintln!("answered: {answered:?}");
}

/// The concrete witness of intra-thread reuse (`dependence::intra_thread_witness`, the
/// fast path's proof of presence on launches too large to enumerate) is sound on every
/// small launch of the corpus: where it finds a reread element the enumeration finds
/// intra-thread reuse too (the enumeration's dense tables checked against sorting first). It finds the rereads of the corpus's stencils and recurrences,
/// pinned (a witness that finds nothing, or one that reports a single read, fails this).
#[test]
fn witnesses_are_sound_and_found_on_the_corpus() {
    use analysis::dependence::{intra_thread_witness, param_loads};
    let mut found = Vec::new();
    for (dir, file) in small_launches() {
        let (m, b) = load(&dir, "compute_70", &file);
        let f = m.kernel(&b.kernel).expect("kernel");
        let a = analysis::analyze(f, &b, Granularity::Element).expect("analysis");
        let Some(e) = descriptor::existence_by_enumeration(&a, &b) else {
            continue;
        };
        // The dense per-unit tables answer as sorting every TB's events does.
        assert_eq!(
            Some(&e),
            descriptor::existence_by_sorting(&a, &b).as_ref(),
            "{dir}/{file}"
        );
        let params = descriptor::load_params(&a);
        for p in descriptor_params_fully_resolved(&a) {
            let Some(eb) = b.region_elem_bytes(p as usize) else {
                continue;
            };
            let loads = param_loads(&a, &params, p);
            if intra_thread_witness(&a, &b, p, eb, &loads) {
                assert!(
                    e[p as usize].intra_thread,
                    "{dir}/{file} param {p}: a witness where enumeration finds no reuse"
                );
                found.push(format!("{dir} {p}"));
            }
        }
    }
    for want in [
        "fdtd3d 1",
        "fdtd3d 2",
        "mirror_boundary 0",
        "mirror_boundary 1",
        "sad 1",
        "srad 0",
        "srad 1",
    ] {
        assert!(
            found.iter().any(|x| x == want),
            "no witness for {want}: {found:?}"
        );
    }
}

/// The bypass question at the L1's block (issue 39). mvt_kernel1's thread `i` reads
/// `a[i*n + j]` for `j` in `0..n`: every element once (NO-REUSE), but each 128 B line 32
/// times and each 32 B sector 8 times, at 32 (8) successive iterations of one thread. Its
/// `y1[j]` is read by every warp. blackscholes's grid-stride loop reads `S[i + 4096 k]`:
/// each warp one whole line per iteration, no line twice (NO-REUSE at every granularity).
/// mvt_kernel2 reads `a[j*n + i]`: warp `w` reads line `j*n/32 + w` at iteration `j` alone.
#[test]
fn block_reuse_at_the_l1_block() {
    for g in [Granularity::Line(128), Granularity::Sector] {
        let (m, b) = load("mvt", "compute_70", "small.mvt_kernel1.json");
        let a = analysis::analyze(m.kernel(&b.kernel).unwrap(), &b, Granularity::Element)
            .expect("analysis");
        let d = descriptor::compute(m.kernel(&b.kernel).unwrap(), &a, &b);
        assert_eq!(d[0].descriptor.locality_type, LocalityType::NoReuse);
        let r = descriptor::block_reuse(&a, &b, g);
        assert_eq!(r[0], Some(true), "{g:?}: a row walk re-reads each block");
        assert_eq!(r[2], Some(true), "{g:?}: y1 is read by every warp");

        let (m, b) = load("mvt", "compute_70", "small.mvt_kernel2.json");
        let a = analysis::analyze(m.kernel(&b.kernel).unwrap(), &b, Granularity::Element)
            .expect("analysis");
        let d = descriptor::compute(m.kernel(&b.kernel).unwrap(), &a, &b);
        assert_eq!(d[0].descriptor.locality_type, LocalityType::NoReuse);
        assert_eq!(descriptor::block_reuse(&a, &b, g)[0], Some(false), "{g:?}");

        let (m, b) = load("blackscholes", "compute_70", "small.json");
        let a = analysis::analyze(m.kernel(&b.kernel).unwrap(), &b, Granularity::Element)
            .expect("analysis");
        let d = descriptor::compute(m.kernel(&b.kernel).unwrap(), &a, &b);
        let s = d.iter().find(|x| x.descriptor.param == 2).expect("S");
        assert_eq!(s.descriptor.locality_type, LocalityType::NoReuse);
        let r = descriptor::block_reuse(&a, &b, g);
        for p in [2, 3, 4] {
            assert_eq!(r[p], Some(false), "{g:?}: S, X, T stream");
        }
    }
}
