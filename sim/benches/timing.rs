//! Simulated warp instructions per second of the timing model (functional tracing
//! included) on corpus kernels — GEMM, two stencils, BFS — at their small launch sizes,
//! Volta configuration, LRR TBs, GTO warps. Prints each kernel's warp instructions and
//! simulated cycles per run, so cycles per second follow from the reported time.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sim::timing::{simulate, SimOptions, TbPolicy, TimingConfig};
use std::path::Path;

fn load(name: &str, launch: &str) -> Option<(ptx_parser::Module, launch::BoundLaunch)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(name);
    let m = ptx_parser::parse_file(&root.join(format!("{name}.compute_70.ptx"))).ok()?;
    let l = launch::Launch::read(&root.join(launch)).ok()?;
    let kname = l.kernel.clone().unwrap_or_else(|| name.to_string());
    let f = m.kernel(&kname)?;
    let b = l.bind(&kname, &sim::param_sigs(f), &root).ok()?;
    Some((m, b))
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("timing");
    g.sample_size(10);
    let Ok(gpu) = gpu::GpuConfig::builtin("volta") else {
        return;
    };
    let cfg = TimingConfig::new(gpu);
    let opts = SimOptions::new(TbPolicy::LRR);
    for (name, launch) in [
        ("mm_naive", "small.json"),
        ("hotspot", "small.json"),
        ("stencil2d", "small.json"),
        ("bfs", "small.bfs_expand.json"),
    ] {
        let Some((m, b)) = load(name, launch) else {
            eprintln!("{name}: cannot load {launch}");
            continue;
        };
        let Some(f) = m.kernel(&b.kernel) else {
            continue;
        };
        let s = match simulate(&m, f, &b, &cfg, &opts) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{name}: {e}");
                continue;
            }
        };
        eprintln!(
            "{name}: {} warp instructions, {} cycles per run",
            s.warp_instructions, s.cycles
        );
        g.throughput(Throughput::Elements(s.warp_instructions));
        g.bench_function(name, |bch| {
            bch.iter(|| simulate(&m, f, &b, &cfg, &opts).map(|s| s.cycles))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
