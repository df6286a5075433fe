//! Static analysis at scale: naive GEMM (N = 1024, 2048, 4096; 16x16 blocks: 4,096 to
//! 65,536 TBs) and a 2D stencil with 16,384 TBs, split into footprints (symbolic model +
//! per-TB footprints) and graph (inverted index + rows), so the share of each shows.
//! `cargo bench -p analysis --bench analyze`.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};

use analysis::footprint::Granularity;
use launch::{parse_param_flag, BoundLaunch, Dim3, Launch};

fn setup(
    dir: &str,
    grid: [u64; 2],
    block: [u64; 2],
    params: &[&str],
) -> (ptx_parser::Module, BoundLaunch) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(dir);
    let m = ptx_parser::parse_file(&root.join(format!("{dir}.compute_70.ptx"))).expect("parse");
    let dim = |v: [u64; 2]| Dim3 {
        x: v[0],
        y: v[1],
        z: 1,
    };
    let mut l = Launch::new(dim(grid), dim(block));
    for p in params {
        l.params.push(parse_param_flag(p).expect("param"));
    }
    let name = m
        .functions
        .iter()
        .find(|f| f.is_entry && f.has_body)
        .expect("entry")
        .name
        .clone();
    let f = m.kernel(&name).expect("kernel");
    let b = l
        .bind(&name, &analysis::param_sigs(f), &root)
        .expect("bind");
    (m, b)
}

fn bench(c: &mut Criterion) {
    let mut cases: Vec<(String, ptx_parser::Module, BoundLaunch)> = Vec::new();
    for n in [1024u64, 2048, 4096] {
        let (m, b) = setup("mm_naive", [n / 16, n / 16], [16, 16], &[&format!("3={n}")]);
        cases.push((format!("gemm_n{n}"), m, b));
    }
    let (m, b) = setup("stencil2d", [128, 128], [16, 16], &["2=2048", "3=2048"]);
    cases.push(("stencil2d_16384tbs".into(), m, b));
    let mut g = c.benchmark_group("analyze");
    g.sample_size(10);
    for (name, m, b) in &cases {
        let f = m.kernel(&b.kernel).expect("kernel");
        let gran = Granularity::Line(128);
        g.bench_function(format!("{name}/footprints"), |x| {
            x.iter(|| analysis::analyze(f, b, gran).expect("analysis"))
        });
        let a = analysis::analyze(f, b, gran).expect("analysis");
        g.bench_function(format!("{name}/graph"), |x| {
            x.iter(|| analysis::locality::build(&a.footprints))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
