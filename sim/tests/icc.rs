//! Intra-cluster coalescing (issue 16, seed paper 002) on a corpus kernel: on the paper's
//! clustered GPU (`--gpu icc`, clusters of 5 SMs) under distributed-block scheduling, the
//! merge table and the coalesced cache send fewer NoC requests than distributed-block alone,
//! and the model is unchanged while only the redundancy is measured. The table over the
//! corpus is `kernels/icc.toml` + `tests/icc_table.py` (docs/VALIDATION.md, "Intra-cluster
//! coalescing").

use launch::{BoundLaunch, Launch};
use sim::timing::{simulate, SimOptions, Stats, TbPolicy, TimingConfig};
use std::path::Path;

/// Kernel `dir`'s compute_70 PTX bound to its launch file `file`.
fn load(dir: &str, file: &str) -> (ptx_parser::Module, BoundLaunch) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(dir);
    let m = ptx_parser::parse_file(&root.join(format!("{dir}.compute_70.ptx"))).expect("ptx");
    let l = Launch::read(&root.join(file)).expect("launch");
    let k = l.kernel.clone().expect("kernel");
    let b = l
        .bind(&k, &sim::param_sigs(m.kernel(&k).expect("kernel")), &root)
        .expect("bind");
    (m, b)
}

/// The ICC GPU cut to `clusters` clusters of its 5 SMs, with `sets` applied.
fn icc_gpu(clusters: u32, sets: &[(&str, &str)]) -> TimingConfig {
    let mut cfg = TimingConfig::new(gpu::GpuConfig::builtin("icc").expect("icc"));
    cfg.set("interconnect.clusters", &clusters.to_string())
        .expect("set");
    cfg.set("core.num_sms", &(clusters * 5).to_string())
        .expect("set");
    for (k, v) in sets {
        cfg.set(k, v).expect("set");
    }
    cfg.validate("icc").expect("valid");
    cfg
}

fn run(m: &ptx_parser::Module, b: &BoundLaunch, cfg: &TimingConfig, p: TbPolicy) -> Stats {
    let f = m.kernel(&b.kernel).expect("kernel");
    simulate(m, f, b, cfg, &SimOptions::new(p)).expect("simulate")
}

/// hotspot (the paper's HS, its most redundant kernel): each TB reads its tile of `temp`
/// and `power` plus a halo its neighbours read too. 2 clusters of 5 SMs, distributed-block.
#[test]
fn icc_and_coalesced_cache_send_fewer_noc_requests_on_hotspot() {
    let (m, b) = load("hotspot", "small.json");
    let p = TbPolicy::DISTRIBUTED_BLOCK;
    let measured = run(&m, &b, &icc_gpu(2, &[("icc.redundancy", "true")]), p);
    let plain = run(&m, &b, &icc_gpu(2, &[]), p);
    // Measuring changes nothing in the model.
    assert_eq!(measured.cycles, plain.cycles);
    assert_eq!(measured.noc, plain.noc);
    assert!(plain.icc.is_none());
    let base = measured.icc.expect("icc stats");
    assert_eq!(base.merges + base.coalesced_cache_hits, 0);
    // Without the merge table every read miss goes out.
    assert_eq!(base.noc_read_requests, base.read_requests);
    assert!(base.redundant_requests > 0, "{base:?}");
    let icc = run(
        &m,
        &b,
        &icc_gpu(
            2,
            &[("icc.merge_table", "true"), ("icc.coalesced_cache", "true")],
        ),
        p,
    );
    let s = icc.icc.expect("icc stats");
    // Same instructions, same L1 misses; fewer of them reach the NoC.
    assert_eq!(icc.warp_instructions, plain.warp_instructions);
    assert_eq!(s.read_requests, base.read_requests);
    assert_eq!(
        s.noc_read_requests + s.merges + s.coalesced_cache_hits,
        s.read_requests
    );
    assert!(s.merges + s.coalesced_cache_hits > 0, "{s:?}");
    assert!(
        icc.noc.requests < plain.noc.requests,
        "NoC requests: {} with ICC + CC, {} without",
        icc.noc.requests,
        plain.noc.requests
    );
    assert_eq!(
        plain.noc.requests - icc.noc.requests,
        s.merges + s.coalesced_cache_hits
    );
}
