//! Times the analysis stages on naive GEMM at N = 4096 (65,536 TBs), line granularity:
//! `cargo run --release -p analysis --example reuse_timing [N]`.
use std::time::Instant;

use analysis::footprint::Granularity;
use launch::{BoundValue, Dim3};

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(4096, |s| s.parse().expect("N"));
    let d = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kernels/mm_naive");
    let m = ptx_parser::parse_file(&d.join("mm_naive.compute_70.ptx")).expect("parse");
    let l = launch::Launch::read(&d.join("small.json")).expect("launch");
    let f = m.kernel("mm_naive").expect("kernel");
    let mut b = l
        .bind("mm_naive", &analysis::param_sigs(f), &d)
        .expect("bind");
    b.grid = Dim3 {
        x: n / 16,
        y: n / 16,
        z: 1,
    };
    b.params[3].value = BoundValue::Scalar { bits: n };
    let g = Granularity::Line(128);
    let t = Instant::now();
    let a = analysis::analyze(f, &b, g).expect("analysis");
    let t1 = t.elapsed();
    let (graph, _) = analysis::locality::build(&a.footprints);
    let t2 = t.elapsed();
    let r = analysis::reuse::compute(&a, &b, g, &graph);
    let t3 = t.elapsed();
    let ds = analysis::descriptor::compute(f, &a, &b);
    let t4 = t.elapsed();
    let mut png = Vec::new();
    analysis::heatmap::write_png(&mut png, &graph, 1024).expect("png");
    let t5 = t.elapsed();
    println!(
        "N={n}: footprints {t1:.2?}, graph {:.2?} ({} edges), reuse {:.2?} (sample {} TBs, {} pairs), descriptors {:.2?}, heat map {:.2?} ({} B)",
        t2 - t1,
        graph.num_edges(),
        t3 - t2,
        r.sampled_tbs,
        r.pairs,
        t4 - t3,
        t5 - t4,
        png.len()
    );
    print!("{}", analysis::report::reuse_summary(&r));
    print!("{}", analysis::report::descriptor_summary(&ds));
}
