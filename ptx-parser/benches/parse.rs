//! Parse throughput: (a) the whole kernel corpus, (b) a multi-megabyte module made by
//! replicating the largest real kernel under fresh names (printer layout), (c) the 3.4 MB
//! NVRTC module of six fully unrolled GEMM kernels in `benches/data`, timed both to the IR
//! (the module dropped outside the timing) and including its drop.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::Path;

#[path = "../tests/common/walk.rs"]
mod walk;
use walk::collect_ptx as collect;

fn corpus() -> Vec<String> {
    let mut files = Vec::new();
    collect(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels"),
        &mut files,
    );
    files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

/// Replicates the entries of the largest corpus module until the text reaches `target` bytes.
fn synthetic(corpus: &[String], target: usize) -> String {
    let Some(base) = corpus
        .iter()
        .filter_map(|s| ptx_parser::parse(s).ok().map(|m| (s.len(), m)))
        .filter(|(_, m)| m.globals.is_empty())
        .max_by_key(|(n, _)| *n)
        .map(|(_, m)| m)
    else {
        return String::new();
    };
    let unit = base.to_string().len().max(1);
    let copies = target / unit + 1;
    let mut m = base.clone();
    m.functions.clear();
    m.items
        .retain(|i| !matches!(i, ptx_parser::Item::Function(_)));
    for k in 0..copies {
        for f in &base.functions {
            let mut f = f.clone();
            f.name = format!("{}_{k}", f.name);
            m.items
                .push(ptx_parser::Item::Function(m.functions.len() as u32));
            m.functions.push(f);
        }
    }
    m.to_string()
}

fn bench(c: &mut Criterion) {
    let files = corpus();
    let total: usize = files.iter().map(String::len).sum();
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(total as u64));
    g.bench_function("corpus", |b| {
        b.iter(|| {
            for f in &files {
                let _ = std::hint::black_box(ptx_parser::parse(f));
            }
        })
    });
    let big = synthetic(&files, 8 << 20);
    assert!(
        ptx_parser::parse(&big).is_ok(),
        "synthetic module must parse"
    );
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function("synthetic_8MiB", |b| {
        b.iter(|| std::hint::black_box(ptx_parser::parse(&big)))
    });
    let unrolled = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/unrolled_gemm.compute_90.ptx"),
    )
    .expect("benches/data/unrolled_gemm.compute_90.ptx (see benches/data/regenerate)");
    g.throughput(Throughput::Bytes(unrolled.len() as u64));
    g.bench_function("unrolled_gemm", |b| {
        b.iter_with_large_drop(|| ptx_parser::parse(&unrolled))
    });
    g.bench_function("unrolled_gemm_with_drop", |b| {
        b.iter(|| std::hint::black_box(ptx_parser::parse(&unrolled)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
