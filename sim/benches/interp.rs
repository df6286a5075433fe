//! Interpreter speed on the corpus: mm_naive at N=256, hotspot and bfs_expand at their small
//! launches, single-threaded and with rayon across TBs. Throughput is reported in warp
//! instructions (criterion's "elements").
//!
//! `CARGO_TARGET_DIR=/tmp/tgt-sim cargo bench -p sim --bench interp`

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use launch::{BoundLaunch, Launch};
use sim::{NoObserver, Program, RunOptions};

fn kernels() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

fn load(
    dir: &str,
    kernel: &str,
    launch_json: Option<&str>,
    launch_file: &str,
) -> (Program, BoundLaunch) {
    let d = kernels().join(dir);
    let m = ptx_parser::parse_file(&d.join(format!("{dir}.compute_90.ptx"))).expect("parse");
    let f = m.kernel(kernel).expect("kernel");
    let l = match launch_json {
        Some(j) => Launch::from_json(j, Path::new("bench.json")).expect("launch"),
        None => Launch::read(&d.join(launch_file)).expect("launch"),
    };
    let bound = l.bind(kernel, &sim::param_sigs(f), &d).expect("bind");
    (Program::new(&m, kernel).expect("decode"), bound)
}

const MM256: &str = r#"{"format": "paver-launch/1", "grid": [16,16,1], "block": [16,16,1], "params": [
  {"index": 0, "buffer": {"type": "f32", "len": 65536, "init": "rand(1)"}},
  {"index": 1, "buffer": {"type": "f32", "len": 65536, "init": "rand(2)"}},
  {"index": 2, "buffer": {"type": "f32", "len": 65536, "init": "zeros"}},
  {"index": 3, "value": 256}]}"#;

fn bench(c: &mut Criterion) {
    let cases = [
        (
            "mm_naive_n256",
            load("mm_naive", "mm_naive", Some(MM256), ""),
        ),
        (
            "hotspot_small",
            load("hotspot", "hotspot", None, "small.json"),
        ),
        (
            "bfs_expand_small",
            load("bfs", "bfs_expand", None, "small.bfs_expand.json"),
        ),
    ];
    for (name, (prog, bound)) in &cases {
        let one = RunOptions::default();
        let insts = sim::run(prog, bound, &one, &mut NoObserver)
            .expect("run")
            .stats
            .warp_instructions;
        let mut g = c.benchmark_group(*name);
        g.throughput(Throughput::Elements(insts));
        g.sample_size(10);
        for threads in [1, 2] {
            let opts = RunOptions {
                threads,
                ..RunOptions::default()
            };
            g.bench_function(format!("threads{threads}"), |b| {
                b.iter(|| sim::run(prog, bound, &opts, &mut NoObserver).expect("run"))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
