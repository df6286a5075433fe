//! Locality Descriptors: the Locality Descriptor paper's histo example (Figure 9), corpus
//! kernels with known shapes, and agreement of the z3 and enumeration paths.

mod common;

use analysis::descriptor::{self, DecidedBy, Descriptor};
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

fn descriptors(m: &ptx_parser::Module, b: &BoundLaunch, g: Granularity) -> Vec<Descriptor> {
    let f = m.kernel(&b.kernel).expect("kernel");
    let a = analysis::analyze(f, b, g).expect("analysis");
    descriptor::compute(f, &a, b)
}

#[test]
fn histo_figure_9() {
    let (m, b) = histo();
    let d = descriptors(&m, &b, Granularity::Element);
    assert_eq!(d.len(), 1);
    let d = &d[0];
    // D-Tile (X_tile, Y_len, 1), C-Tile (1, GridDim.y, 1), map (1, 0, 0), stride X_len.
    assert_eq!(d.d_tile, [16, 8, 1]);
    assert_eq!(d.c_tile, [1, 3, 1]);
    assert_eq!(d.compute_data_map, [1, 0, 0]);
    assert_eq!((d.pattern, d.stride_elements), ("REGULAR", Some(64)));
    assert_eq!(d.locality_type, "INTER-THREAD");
    assert_eq!(d.sharing, Some("COACCESSED"));
    assert!(!d.intra_thread_reuse);
    // The C-Tile -> D-Tile map: C-Tile x reads columns [16x, 16x + 16) of every row.
    assert_eq!(d.tile_map.len(), 4);
    for (x, e) in d.tile_map.iter().enumerate() {
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
    assert!(a.locality_type == "INTER-THREAD" && a.sharing == Some("COACCESSED"));
    // Output C is never loaded: no reuse, empty tile.
    assert_eq!(d[2].locality_type, "NO-REUSE");
    // transpose: every element read once.
    let (m, b) = load("transpose", "compute_70", "small.json");
    let d = descriptors(&m, &b, Granularity::Element);
    assert_eq!(d[0].locality_type, "NO-REUSE");
    assert_eq!(d[0].compute_data_map, [1, 1, 0]);
    // stencil2d: neighbouring TBs overlap in their halos.
    let (m, b) = load("stencil2d", "compute_70", "small.json");
    let d = descriptors(&m, &b, Granularity::Element);
    assert_eq!(
        (d[0].locality_type, d[0].sharing),
        ("INTER-THREAD", Some("NEARBY"))
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
        ("INTER-THREAD", Some("NEARBY"))
    );
    // spmv: data-dependent loads make the vector's pattern IRREGULAR.
    let (m, b) = load("spmv_csr", "compute_70", "small.spmv_csr_scalar.json");
    let d = descriptors(&m, &b, Granularity::Element);
    assert!(d.iter().any(|x| x.pattern == "IRREGULAR"));
}

#[test]
fn existence_paths_agree_on_the_corpus() {
    // Both paths on every small launch with resolved loads: the z3 answers (when the
    // feature is on) equal the enumeration's.
    let mut z3_answers = 0;
    for (dir, file) in [
        ("mm_naive", "small.json"),
        ("stencil2d", "small.json"),
        ("transpose", "small.json"),
        ("storegpu_hash", "small.storegpu_sliding_hash.json"),
        ("storegpu_hash", "small.storegpu_chunk_hash.json"),
        ("conv2d", "small.json"),
        ("syrk", "small.json"),
        ("blackscholes", "small.json"),
    ] {
        let (m, b) = load(dir, "compute_70", file);
        let f = m.kernel(&b.kernel).expect("kernel");
        let a = analysis::analyze(f, &b, Granularity::Element).expect("analysis");
        let e = descriptor::existence_by_enumeration(&a, &b).expect("within budget");
        let d = descriptor::compute(f, &a, &b);
        for x in &d {
            let want = e[x.param as usize];
            assert_eq!(
                (x.inter_tb_reuse, x.intra_thread_reuse),
                (want.inter_tb, want.intra_thread),
                "{dir} param {}: {:?}",
                x.param,
                x.decided_by
            );
            assert_ne!(x.decided_by, DecidedBy::Undecided);
            if cfg!(feature = "z3") && x.decided_by == DecidedBy::Z3 {
                z3_answers += 1;
            }
        }
    }
    if cfg!(feature = "z3") {
        assert!(z3_answers >= 12, "z3 decided only {z3_answers} parameters");
    }
}
