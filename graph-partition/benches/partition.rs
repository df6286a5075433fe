//! Partitioning time of RB-TS, Kway-TS and MST-TS on synthetic GEMM-like (row + column
//! sharing) and stencil (4-neighbour) locality graphs of 4,096 / 16,384 / 65,536 TBs.
//! Volta-like machine: 80 SMs, 8 TBs per SM. `PAVER_BENCH_SIDES=64,128` limits the sizes.

#![allow(clippy::unwrap_used)] // bench code

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use graph_partition::policy::{KwayTs, MstTs, RbTs};
use graph_partition::{synthetic, Params, Policy};
use std::time::Duration;

fn sides() -> Vec<u32> {
    std::env::var("PAVER_BENCH_SIDES")
        .ok()
        .map(|s| s.split(',').filter_map(|t| t.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![64, 128, 256])
}

fn bench(c: &mut Criterion) {
    let params = Params::new(80, 8);
    let policies: [(&str, &dyn Policy); 3] =
        [("rb-ts", &RbTs), ("kway-ts", &KwayTs), ("mst-ts", &MstTs)];
    for (shape, make) in [
        ("gemm", synthetic::gemm as fn(u32) -> graph_partition::Graph),
        ("stencil", synthetic::stencil),
    ] {
        let mut group = c.benchmark_group(format!("partition/{shape}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(3));
        for side in sides() {
            let g = make(side);
            for (name, policy) in policies {
                group.bench_with_input(BenchmarkId::new(name, side * side), &g, |b, g| {
                    b.iter(|| policy.groups(g, &params).unwrap())
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
