//! Serial and parallel runs write byte-identical JSON documents.

mod common;

use analysis::footprint::Granularity;
use common::*;

fn document_bytes(threads: usize, dir: &str, file: &str) -> Vec<u8> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    pool.install(|| {
        let (m, b) = load(dir, "compute_70", file);
        let f = m.kernel(&b.kernel).expect("kernel");
        let g = Granularity::Line(128);
        let a = analysis::analyze(f, &b, g).expect("analysis");
        let (graph, stats) = analysis::locality::build(&a.footprints);
        let doc = analysis::report::document(f, &b, g, &a, &graph, &stats);
        let mut out = Vec::new();
        analysis::report::write_json(&mut out, &doc, &graph).expect("write");
        out
    })
}

#[test]
fn one_thread_and_two_threads_agree() {
    for (dir, file) in [
        ("mm_naive", "small.json"),
        ("stencil2d", "small.json"),
        ("hotspot", "small.json"),
        ("spmv_csr", "small.spmv_csr_scalar.json"),
    ] {
        let one = document_bytes(1, dir, file);
        let two = document_bytes(2, dir, file);
        assert!(one == two, "{dir}: documents differ");
        let v: serde_json::Value = serde_json::from_slice(&one).expect("valid JSON");
        assert_eq!(v["format"], "paver-analysis/1");
        let edges = v["graph"]["edges"].as_array().expect("edges");
        assert_eq!(
            edges.len() as u64,
            v["stats"]["edges"].as_u64().expect("count")
        );
    }
}
