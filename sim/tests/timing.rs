//! Evidence that the timing model measures what it is configured to (issue 6): pointer
//! chases give the configured L1 / L2 / DRAM latencies, a streaming kernel saturates the
//! configured DRAM bandwidth, TBs reading one line hit in the L2, and identical inputs give
//! byte-identical stats.

use gpu::GpuConfig;
use launch::{BoundLaunch, Launch};
use sim::timing::{simulate, SimOptions, Stats, TbPolicy, TimingConfig};
use std::path::Path;

const CHASE: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry chase(.param .u64 p, .param .u32 n, .param .u32 addv, .param .u32 xorv)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r1, [n];
  ld.param.u32 %r2, [addv];
  ld.param.u32 %r3, [xorv];
  mov.u32 %r4, 0;
  mov.u32 %r5, 0;
LOOP:
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r6, [%rd3];
  add.s32 %r5, %r5, 1;
  setp.lt.u32 %p1, %r5, %r1;
  add.s32 %r7, %r6, %r2;
  xor.b32 %r4, %r7, %r3;
  @%p1 bra LOOP;
  ret;
}
"#;

const STREAM: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry stream(.param .u64 p)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd2, %r4, 16;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.v4.u32 {%r5, %r6, %r7, %r1}, [%rd3];
  ret;
}
"#;

const ONE_LINE: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry oneline(.param .u64 p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  ret;
}
"#;

fn bind(m: &ptx_parser::Module, name: &str, launch: &str) -> BoundLaunch {
    let f = m.kernel(name).expect("kernel");
    Launch::from_json(launch, Path::new("."))
        .expect("launch")
        .bind(name, &sim::param_sigs(f), Path::new("."))
        .expect("bind")
}

fn run(src: &str, name: &str, launch: &str, cfg: &TimingConfig, policy: TbPolicy) -> Stats {
    let m = ptx_parser::parse(src).expect("parse");
    let b = bind(&m, name, launch);
    let f = m.kernel(name).expect("kernel");
    simulate(&m, f, &b, cfg, &SimOptions::new(policy)).expect("simulate")
}

fn volta(sets: &[(&str, &str)]) -> TimingConfig {
    let mut c = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
    c.set("core.num_sms", "4").expect("set");
    for (k, v) in sets {
        c.set(k, v).expect("set");
    }
    c
}

fn chase_launch(n: u32, addv: u32, xorv: u32) -> String {
    format!(
        r#"{{"format":"paver-launch/1","kernel":"chase","grid":[1,1,1],"block":[1,1,1],
        "params":[{{"index":0,"buffer":{{"type":"u32","len":65536,"init":"iota"}}}},
        {{"index":1,"value":{n}}},{{"index":2,"value":{addv}}},{{"index":3,"value":{xorv}}}]}}"#
    )
}

/// Cycles per iteration of a chase of `n` loads, from two runs (n and 2n) so the start-up
/// cost cancels.
fn per_iter(cfg: &TimingConfig, addv: u32, xorv: u32) -> f64 {
    let a = run(
        CHASE,
        "chase",
        &chase_launch(200, addv, xorv),
        cfg,
        TbPolicy::LRR,
    );
    let b = run(
        CHASE,
        "chase",
        &chase_launch(400, addv, xorv),
        cfg,
        TbPolicy::LRR,
    );
    (b.cycles - a.cycles) as f64 / 200.0
}

#[test]
fn pointer_chase_measures_configured_latencies() {
    // L1 hits: the chain stays on element 0 (iota: a[0] = 0).
    let base = volta(&[]);
    let l1 = per_iter(&base, 0, 0);
    let slower = volta(&[("l1.latency_cycles", "50")]);
    let l1_slow = per_iter(&slower, 0, 0);
    assert!(
        (l1_slow - l1 - 30.0).abs() < 0.01,
        "L1 latency +30 should add 30 cycles per load: {l1} -> {l1_slow}"
    );
    // The rest of the loop's dependence chain (4 integer ops + LSU issue) is fixed.
    let overhead = l1 - f64::from(base.gpu.l1.latency_cycles);
    assert!((15.0..=20.0).contains(&overhead), "overhead {overhead}");

    // L2 hits: a one-line L1 thrashed by alternating between elements 0 and 32 (two lines).
    // A fixed (non-unified) one-line L1.
    let tiny = &[
        ("l1.unified_bytes", "0"),
        ("l1.sets", "1"),
        ("l1.ways", "1"),
        ("l1.size_bytes", "128"),
    ];
    let l2 = per_iter(&volta(tiny), 0, 32);
    let g = &base.gpu;
    let noc = f64::from(base.mem.noc_latency);
    // Request (1 flit) + reply (header + 32 B sector: 1 flit of 40 B) serialisation.
    let expect_l2 =
        f64::from(g.l1.latency_cycles) + 2.0 * noc + 2.0 + f64::from(g.l2.latency_cycles);
    assert!(
        (l2 - overhead - expect_l2).abs() <= 1.0,
        "L2 hit latency {} vs configured path {expect_l2}",
        l2 - overhead
    );

    // DRAM: every load a new line (stride 32 elements = 128 B), never seen before. Refresh
    // off: the row states below are the mapping's alone.
    let mut no_refresh = tiny.to_vec();
    no_refresh.push(("dram.refresh", "none"));
    let dram = per_iter(&volta(&no_refresh), 32, 0);
    let expect_dram = expect_l2 + dram_extra(g);
    // Up to one DRAM cycle waiting for the DRAM clock, one core cycle for the core clock.
    let slack = 1.5 + f64::from(g.core.clock_mhz) / f64::from(g.dram.clock_mhz);
    assert!(
        dram - overhead >= expect_dram - 1.0 && dram - overhead <= expect_dram + slack,
        "DRAM latency {} vs configured path {expect_dram}",
        dram - overhead
    );
}

/// The configured DRAM part of the chase's measured loads (iterations 200 to 400, 128 B
/// apart from the buffer's start): the controller's pipeline, then for each load tCL and
/// its 32 B burst, after tRCD when its bank is closed (the first touch) and after tRP +
/// tRCD when another row is open, the banks' rows replayed from the configured mapping
/// (`sim::timing::dram::DramMap`).
fn dram_extra(g: &GpuConfig) -> f64 {
    let d = &g.dram;
    let map = sim::timing::dram::DramMap::new(g);
    let mut open = std::collections::HashMap::new();
    let mut device = 0u64;
    for k in 0..400u64 {
        let l = map.locate(launch::bind::buffer_base(0) + 128 * k);
        let extra = match open.insert((l.channel, l.bank), l.row) {
            Some(r) if r == l.row => 0,
            None => d.t_rcd,
            Some(_) => d.t_rp + d.t_rcd,
        };
        if k >= 200 {
            device += u64::from(d.t_cl + d.burst_cycles() + extra);
        }
    }
    f64::from(d.pipeline_core_cycles(g.core.clock_mhz))
        + device as f64 / 200.0 * f64::from(g.core.clock_mhz) / f64::from(d.clock_mhz)
}

#[test]
fn streaming_saturates_dram_bandwidth() {
    let mut cfg = TimingConfig::new(GpuConfig::builtin("fermi").expect("fermi"));
    cfg.set("core.num_sms", "15").expect("set");
    let tbs = 2048;
    let launch = format!(
        r#"{{"format":"paver-launch/1","kernel":"stream","grid":[{tbs},1,1],"block":[256,1,1],
        "params":[{{"index":0,"buffer":{{"type":"u32","len":{},"init":"zeros"}}}}]}}"#,
        tbs * 256 * 4
    );
    let s = run(STREAM, "stream", &launch, &cfg, TbPolicy::LRR);
    let g = &cfg.gpu;
    let peak = f64::from(g.dram.channels)
        * f64::from(g.dram.bus_bytes_per_channel)
        * f64::from(g.dram.data_rate)
        * f64::from(g.dram.clock_mhz)
        / f64::from(g.core.clock_mhz);
    let achieved = s.dram.bytes as f64 / s.cycles as f64;
    assert_eq!(s.dram.bytes, tbs * 256 * 16);
    assert!(
        achieved <= peak * 1.001 && achieved >= 0.8 * peak,
        "achieved {achieved:.1} B/cycle, peak {peak:.1}"
    );
}

#[test]
fn tbs_reading_one_line_hit_in_l2() {
    let cfg = volta(&[]);
    let launch = r#"{"format":"paver-launch/1","kernel":"oneline","grid":[64,1,1],"block":[32,1,1],
        "params":[{"index":0,"buffer":{"type":"u32","len":32,"init":"iota"}}]}"#;
    let s = run(ONE_LINE, "oneline", launch, &cfg, TbPolicy::LRR);
    // 4 sectors, fetched once from DRAM; every other L2 access hits or merges into the
    // MSHR of the first miss (the SMs start together, so merges dominate).
    assert_eq!(s.dram.reads, 4);
    assert_eq!(s.l2.misses, 4);
    assert!(s.l2.hits + s.l2.hit_reserve >= 12);
    assert_eq!(s.l2.hits + s.l2.hit_reserve + s.l2.misses, s.l2.accesses);
    assert_eq!(s.l2.accesses, s.noc.requests);
    // Each SM misses each sector once in its L1; the rest are L1 hits or merges.
    assert_eq!(s.l1.misses, 4 * 4);
    assert_eq!(s.tbs, 64);
    assert_eq!(s.sms.iter().map(|m| m.tbs).sum::<u64>(), 64);
}

#[test]
fn identical_inputs_give_identical_json() {
    let cfg = volta(&[]);
    let launch = r#"{"format":"paver-launch/1","kernel":"stream","grid":[64,1,1],"block":[128,1,1],
        "params":[{"index":0,"buffer":{"type":"u32","len":32768,"init":"zeros"}}]}"#;
    let a = run(STREAM, "stream", launch, &cfg, TbPolicy::BCS).to_json();
    let b = run(STREAM, "stream", launch, &cfg, TbPolicy::BCS).to_json();
    assert_eq!(a, b);
    let v: serde_json::Value = serde_json::from_str(&a).expect("json");
    for key in [
        "cycles",
        "ipc",
        "warp_instructions",
        "l1",
        "l2",
        "noc",
        "dram",
        "sms",
        "config",
        "stolen_tbs",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
}

fn corpus(name: &str) -> (ptx_parser::Module, BoundLaunch) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(name);
    let m = ptx_parser::parse_file(&root.join(format!("{name}.compute_70.ptx"))).expect("ptx");
    let l = Launch::read(&root.join("small.json")).expect("launch");
    let k = l.kernel.clone().expect("kernel");
    let b = l
        .bind(&k, &sim::param_sigs(m.kernel(&k).expect("kernel")), &root)
        .expect("bind");
    (m, b)
}

/// `STREAM` over `tbs` TBs of 256 threads (16 bytes a thread) under LRR and under BCS.
fn lrr_and_bcs(tbs: u32, cfg: &TimingConfig) -> (Stats, Stats) {
    let launch = format!(
        r#"{{"format":"paver-launch/1","kernel":"stream","grid":[{tbs},1,1],"block":[256,1,1],
        "params":[{{"index":0,"buffer":{{"type":"u32","len":{},"init":"zeros"}}}}]}}"#,
        tbs * 256 * 4
    );
    (
        run(STREAM, "stream", &launch, cfg, TbPolicy::LRR),
        run(STREAM, "stream", &launch, cfg, TbPolicy::BCS),
    )
}

#[test]
fn bcs_loses_to_lrr_with_odd_tb_limit() {
    // No inter-TB locality (streaming): BCS keeps one of three contexts idle.
    let cfg = volta(&[("core.num_sms", "2"), ("tbs_per_sm", "3")]);
    let (lrr, bcs) = lrr_and_bcs(96, &cfg);
    eprintln!(
        "stream, 2 SMs x 3 TBs: LRR {} cycles, BCS {} cycles",
        lrr.cycles, bcs.cycles
    );
    assert_eq!(lrr.warp_instructions, bcs.warp_instructions);
    assert!(bcs.cycles > lrr.cycles);
}

#[test]
fn bcs_issues_single_tbs_where_an_sm_holds_one() {
    // A pair never fits an SM that holds one TB (1,024-thread TBs on Fermi): BCS used to
    // wait for one forever ("timing model deadlocked at cycle 0").
    let cfg = volta(&[("core.num_sms", "2"), ("tbs_per_sm", "1")]);
    let (lrr, bcs) = lrr_and_bcs(5, &cfg);
    assert_eq!(bcs.tbs, 5);
    assert_eq!(bcs.warp_instructions, lrr.warp_instructions);
}

#[test]
fn mm_naive_speed() {
    let (m, b) = corpus("mm_naive");
    let f = m.kernel(&b.kernel).expect("kernel");
    let cfg = volta(&[("core.num_sms", "2"), ("tbs_per_sm", "3")]);
    let t = std::time::Instant::now();
    let lrr = simulate(&m, f, &b, &cfg, &SimOptions::new(TbPolicy::LRR)).expect("lrr");
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "mm_naive small, 2 SMs x 3 TBs: {} cycles, {} warp insts in {secs:.3} s = {:.2} M/s",
        lrr.cycles,
        lrr.warp_instructions,
        lrr.warp_instructions as f64 / secs / 1e6
    );
    assert_eq!(lrr.tbs, 16);
}

#[test]
fn paver_runtime_runs_any_schedule_and_steals() {
    let (m, b) = corpus("mm_naive");
    let f = m.kernel(&b.kernel).expect("kernel");
    let cfg = volta(&[("core.num_sms", "2"), ("tbs_per_sm", "2")]);
    // An unbalanced two-group schedule: SM 0 gets 12 TBs, SM 1 gets 4.
    let schedule = graph_partition::Schedule {
        format: graph_partition::FORMAT.to_string(),
        kernel: "mm_naive".into(),
        grid: [4, 4, 1],
        block: [16, 16, 1],
        policy: "kway-ts".into(),
        num_sms: 2,
        tbs_per_sm: 2,
        issue_unit: 1,
        sms_per_cluster: 1,
        groups: vec![(0..12).collect(), (12..16).collect()],
        stats: None,
    };
    let mut opts = SimOptions::new(TbPolicy::PAVER);
    opts.schedule = Some(schedule);
    let steal = simulate(&m, f, &b, &cfg, &opts).expect("steal");
    opts.steal = Some(false);
    let no = simulate(&m, f, &b, &cfg, &opts).expect("no steal");
    eprintln!(
        "stealing: {} cycles ({} stolen), none: {} cycles",
        steal.cycles, steal.stolen_tbs, no.cycles
    );
    assert!(steal.stolen_tbs > 0);
    assert_eq!(no.stolen_tbs, 0);
    assert!(steal.cycles < no.cycles);
    assert_eq!(steal.sms.iter().map(|s| s.tbs).sum::<u64>(), 16);
}

fn mm_schedule(policy: &str, issue_unit: u32, groups: Vec<Vec<u32>>) -> graph_partition::Schedule {
    graph_partition::Schedule {
        format: graph_partition::FORMAT.to_string(),
        kernel: "mm_naive".into(),
        grid: [4, 4, 1],
        block: [16, 16, 1],
        policy: policy.into(),
        num_sms: 2,
        tbs_per_sm: 3,
        issue_unit,
        sms_per_cluster: 1,
        groups,
        stats: None,
    }
}

#[test]
fn a_bcs_schedule_replays_in_pairs() {
    // 16 TBs on 2 SMs x 3 contexts. BCS's pairs issue only into two free contexts, so an SM
    // never holds more than 2 TBs: 8 TBs per SM take 4 rounds of 2 instead of 3 rounds of
    // (up to) 3 unpaired. Replayed by the runtime, the BCS schedule must throttle exactly
    // like the built-in BCS scheduler (same placement: pairs (0,1) and (2,3) first, then
    // the next pair to the SM that frees two contexts).
    let (m, b) = corpus("mm_naive");
    let f = m.kernel(&b.kernel).expect("kernel");
    // In the PTX issue order mm_naive's warps wait for one load at a time, so a third TB
    // per SM hides latency and the throttle shows in the cycles; with the loads hoisted
    // (the default order) two TBs already fill the L1's data stage and the two orders
    // tie within 0.2 %.
    let cfg = volta(&[
        ("core.num_sms", "2"),
        ("tbs_per_sm", "3"),
        ("pipeline.issue_order", "ptx"),
    ]);
    let pairs: Vec<Vec<u32>> = (0..8).map(|k| vec![2 * k, 2 * k + 1]).collect();
    let mut opts = SimOptions::new(TbPolicy::PAVER);
    opts.schedule = Some(mm_schedule("bcs", 2, pairs.clone()));
    let paired = simulate(&m, f, &b, &cfg, &opts).expect("paired");
    opts.schedule = Some(mm_schedule("bcs", 1, pairs));
    let unpaired = simulate(&m, f, &b, &cfg, &opts).expect("unpaired");
    let bcs = simulate(&m, f, &b, &cfg, &SimOptions::new(TbPolicy::BCS)).expect("bcs");
    eprintln!(
        "BCS schedule: paired {} cycles, unpaired {}, built-in BCS {}",
        paired.cycles, unpaired.cycles, bcs.cycles
    );
    assert!(paired.cycles > unpaired.cycles);
    assert_eq!(paired.cycles, bcs.cycles);
    assert_eq!(paired.l2, bcs.l2);
    assert!(
        !paired.steal,
        "BCS schedules run without stealing by default"
    );
}

#[test]
fn a_schedule_for_another_launch_is_refused() {
    let (m, b) = corpus("mm_naive");
    let f = m.kernel(&b.kernel).expect("kernel");
    let cfg = volta(&[]);
    let all: Vec<Vec<u32>> = (0..16).map(|tb| vec![tb]).collect();
    let mut opts = SimOptions::new(TbPolicy::PAVER);
    let mut s = mm_schedule("lrr", 1, all.clone());
    s.kernel = "syrk".into();
    opts.schedule = Some(s);
    let e = simulate(&m, f, &b, &cfg, &opts)
        .expect_err("kernel")
        .to_string();
    assert!(e.contains("`syrk`") && e.contains("`mm_naive`"), "{e}");
    let mut s = mm_schedule("lrr", 1, all.clone());
    s.grid = [16, 1, 1];
    opts.schedule = Some(s);
    let e = simulate(&m, f, &b, &cfg, &opts)
        .expect_err("grid")
        .to_string();
    assert!(
        e.contains("grid [16, 1, 1]") && e.contains("grid [4, 4, 1]"),
        "{e}"
    );
    let mut s = mm_schedule("lrr", 1, all.clone());
    s.block = [32, 8, 1];
    opts.schedule = Some(s);
    let e = simulate(&m, f, &b, &cfg, &opts)
        .expect_err("block")
        .to_string();
    assert!(e.contains("block [32, 8, 1]"), "{e}");
    let mut s = mm_schedule("lrr", 1, all);
    s.groups.pop();
    opts.schedule = Some(s);
    let e = simulate(&m, f, &b, &cfg, &opts)
        .expect_err("count")
        .to_string();
    assert!(e.contains("15 TBs") && e.contains("16 TBs"), "{e}");
}
