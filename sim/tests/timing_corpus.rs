//! The PAVER trend on the corpus (issue 6), with schedules built from the interpreter's
//! dynamic footprints (edge weight = 128 B lines two TBs both read) until the static analysis
//! is wired in.
//!
//! * High inter-TB locality (mm_naive, syrk, syr2k, hotspot, srad): RB-TS and Kway-TS, as
//!   the paper defines them, both reduce L2 accesses versus LRR, except RB-TS on SYRK
//!   (`PAPER_ABOVE_LRR`, explained there; `--rb-leaf le` reduces them). The corpus' small launches are too small for the question
//!   (9-25 TBs), and they keep their GPU reference outputs. On them, with 2 SMs x 2 TBs and a
//!   4 KB L1, RB-TS lost on syr2k (+3.8 %: its 3 x 3 grid gives a one-TB leaf, so the PAVER
//!   runtime pairs every later leaf's first TB with the previous leaf's second) and srad
//!   (+3.5 %: 83 % of its L2 accesses are write-through stores, its reads under LRR within
//!   3 % of compulsory, and the 128 B-line graph overstates what TBs share in 32 B sectors).
//!   So this test runs the same kernels with each dimension of the data doubled
//!   (`tests/timing_launches/*.json`: 64-100 TBs, `resources` copied from the small
//!   launches) on the Volta configuration with its real 32 KB L1 (4 sets x 64 ways), 8 SMs and
//!   4 TBs per SM (two or more waves). `config_sweep` (ignored) runs other SM counts, TB
//!   limits and L1 sizes.
//! * No inter-TB locality (every small launch whose locality graph has no edge): RB-TS and
//!   Kway-TS cost at most 1 % cycles versus LRR, same configuration, except where
//!   `PAPER_ABOVE_1_PERCENT` lists (the paper's algorithms partition an edgeless graph
//!   arbitrarily: METIS's contiguous parts cost blackscholes +2.0 % before issue 39, each
//!   SM's requests meeting other L2 slices and DRAM channels than under LRR). With
//!   `--edgeless-lrr` (`graph_partition::policy::without_locality`) every one of these
//!   launches runs exactly LRR's cycles, which also shows the runtime's hand-out adds
//!   nothing.
//! * The PAVER runtime itself costs nothing: fed LRR's placement as groups it reproduces
//!   LRR cycle for cycle.

#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod common;

use graph_partition::{make_schedule, Graph, Params, PolicyKind, Schedule};
use launch::BoundLaunch;
use sim::timing::{simulate, SimOptions, Stats, TbPolicy, TimingConfig};
use sim::{FootprintCollector, Program, RunOptions};
use std::path::{Path, PathBuf};

const SMS: u32 = 8;
const X: u32 = 4;

fn kernels() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

/// Kernel `dir`'s compute_70 PTX bound to the launch file `launch`.
fn load(dir: &str, launch: &Path) -> (ptx_parser::Module, BoundLaunch) {
    let root = kernels().join(dir);
    let m = ptx_parser::parse_file(&root.join(format!("{dir}.compute_70.ptx"))).expect("ptx");
    // Running needs the values the launch files leave open (lavamd's par_str).
    let l = common::runnable(launch);
    let k = l.kernel.clone().expect("kernel");
    let b = l
        .bind(&k, &sim::param_sigs(m.kernel(&k).expect("kernel")), &root)
        .expect("bind");
    (m, b)
}

fn corpus(dir: &str, launch: &str) -> (ptx_parser::Module, BoundLaunch) {
    load(dir, &kernels().join(dir).join(launch))
}

/// The dynamic locality graph: shared 128 B lines per TB pair.
fn graph(m: &ptx_parser::Module, b: &BoundLaunch) -> Graph {
    let prog = Program::new(m, &b.kernel).expect("program");
    let mut fc = FootprintCollector::new();
    sim::run(&prog, b, &RunOptions::default(), &mut fc).expect("run");
    let n = b.grid.count() as u32;
    let lines: Vec<Vec<u64>> = (0..u64::from(n))
        .map(|tb| {
            let mut v: Vec<u64> = fc.tb_reads(tb).iter().map(|a| a / 128).collect();
            v.dedup();
            v
        })
        .collect();
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let (a, c) = (&lines[i as usize], &lines[j as usize]);
            let (mut p, mut q, mut w) = (0, 0, 0u64);
            while p < a.len() && q < c.len() {
                match a[p].cmp(&c[q]) {
                    std::cmp::Ordering::Less => p += 1,
                    std::cmp::Ordering::Greater => q += 1,
                    std::cmp::Ordering::Equal => {
                        w += 1;
                        p += 1;
                        q += 1;
                    }
                }
            }
            if w > 0 {
                edges.push((i, j, w));
            }
        }
    }
    Graph::from_edges(n, &edges).expect("graph")
}

fn schedule(g: &Graph, kind: PolicyKind, b: &BoundLaunch) -> Schedule {
    schedule_with(g, kind, b, &Params::new(SMS, X))
}

/// The schedule of `kind` with parameters `p`.
fn schedule_with(g: &Graph, kind: PolicyKind, b: &BoundLaunch, p: &Params) -> Schedule {
    let launch = graph_partition::Launch {
        kernel: b.kernel.clone(),
        grid: [b.grid.x as u32, b.grid.y as u32, b.grid.z as u32],
        block: [b.block.x as u32, b.block.y as u32, b.block.z as u32],
    };
    make_schedule(g, kind.policy().as_ref(), p, &launch).expect("schedule")
}

/// Volta (its 32 KB L1 included) scaled down to `SMS` SMs with `X` TBs each.
fn sim(m: &ptx_parser::Module, b: &BoundLaunch, policy: TbPolicy, s: Option<Schedule>) -> Stats {
    sim_with(m, b, policy, s, true)
}

fn sim_with(
    m: &ptx_parser::Module,
    b: &BoundLaunch,
    policy: TbPolicy,
    s: Option<Schedule>,
    steal: bool,
) -> Stats {
    sim_on(m, b, policy, s, steal, &volta(SMS, X, 32768))
}

/// Volta with `sms` SMs, `x` TBs each and an L1 of `l1` bytes (4 sets, ways to match).
fn volta(sms: u32, x: u32, l1: u32) -> TimingConfig {
    let mut cfg = TimingConfig::new(gpu::GpuConfig::builtin("volta").expect("volta"));
    cfg.set("core.num_sms", &sms.to_string()).expect("set");
    cfg.set("tbs_per_sm", &x.to_string()).expect("set");
    // A fixed L1 of `l1` bytes, not the unified array's carveout rule.
    cfg.set("l1.unified_bytes", "0").expect("set");
    cfg.set("l1.ways", &(l1 / 512).to_string()).expect("set");
    cfg.set("l1.size_bytes", &l1.to_string()).expect("set");
    cfg
}

fn sim_on(
    m: &ptx_parser::Module,
    b: &BoundLaunch,
    policy: TbPolicy,
    s: Option<Schedule>,
    steal: bool,
    cfg: &TimingConfig,
) -> Stats {
    let mut opts = SimOptions::new(policy);
    opts.schedule = s;
    opts.steal = Some(steal);
    let f = m.kernel(&b.kernel).expect("kernel");
    simulate(m, f, b, cfg, &opts).expect("simulate")
}

fn pct(a: u64, b: u64) -> f64 {
    100.0 * (a as f64 / b as f64 - 1.0)
}

/// Where the papers' algorithms (RB-TS's `< x` leaf rule, Algorithm 1; no LRR floor) make
/// at least LRR's L2 accesses in this test.
///
/// SYRK's 8 x 8 grid with x = 4: RB-TS's leaves are pairs, so each SM runs two unrelated
/// pairs, while LRR puts TB `t` on SM `t mod 8`, a grid column, whose four co-running TBs
/// all read the A band of that column. The ledger (`paver simulate --explain` with this
/// test's configuration, docs/EXPLAIN.md, measured before issue 38's issue order): no
/// refetches under either policy; RB-TS's TBs hit other TBs' lines 441,135 times against
/// LRR's 567,432, 8,192 misses against 7,264. RB-TS with `--rb-leaf le` (2 x 2 squares:
/// four bands for four TBs, against the column's five) makes fewer than LRR: asserted
/// below.
///
/// mm_naive, both policies (since issue 38's issue order, 2026-11-29: before it RB-TS made
/// 42 % fewer than LRR here): the same column placement under LRR, whose four co-running TBs
/// read the same B line at the same step. With the loads hoisted as ptxas hoists them
/// (`pipeline.issue_order`), those four requests reach the L1 together and merge in its
/// MSHRs: LRR 66,644 hits / 135,530 merges / 62,018 misses, RB-TS 97,261 / 103,617 /
/// 63,314 (+2.1 %), Kway-TS (2 x 2 squares) 102,314 / 97,666 / 64,212 (+3.5 %). The L1
/// thrashes in this configuration either way (62,018 misses against 32,768 for every TB
/// reading its own two bands once), so what each policy saves depends on which TBs'
/// requests arrive together; cycles are within 0.4 % (RB-TS) and +5.2 % (Kway-TS).
const PAPER_ABOVE_LRR: &[(&str, PolicyKind)] = &[
    ("mm_naive", PolicyKind::RbTs),
    ("mm_naive", PolicyKind::KwayTs),
    ("syrk", PolicyKind::RbTs),
];

/// Of `PAPER_ABOVE_LRR`'s RB-TS entries, those where `--rb-leaf le` makes fewer L2 accesses
/// than LRR: syrk (8,432 against 9,280). Not mm_naive, where the 2 x 2 squares make more
/// (68,594 against 62,018): its loss is not the leaf rule's (see above).
const LE_BELOW_LRR: &[&str] = &["syrk"];

#[test]
fn rb_ts_and_kway_ts_reduce_l2_accesses_on_high_locality_kernels() {
    let launches = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/timing_launches");
    let mut report = String::new();
    let mut worse = Vec::new();
    for (dir, launch) in [
        ("mm_naive", "mm_naive.json"),
        ("syrk", "syrk.json"),
        ("syr2k", "syr2k.json"),
        ("hotspot", "hotspot.json"),
        ("srad", "srad_diffusion_coeff.json"),
    ] {
        let (m, b) = load(dir, &launches.join(launch));
        let g = graph(&m, &b);
        let lrr = sim(&m, &b, TbPolicy::LRR, None);
        for kind in [PolicyKind::RbTs, PolicyKind::KwayTs] {
            let s = sim(&m, &b, TbPolicy::PAVER, Some(schedule(&g, kind, &b)));
            report.push_str(&format!(
                "{dir} ({} TBs) {kind:?}: L2 accesses {} vs LRR {} ({:+.1} %), cycles {} vs {} ({:+.1} %); L1 hits / merges / misses {} / {} / {} vs {} / {} / {}\n",
                b.grid.count(),
                s.l2.accesses,
                lrr.l2.accesses,
                pct(s.l2.accesses, lrr.l2.accesses),
                s.cycles,
                lrr.cycles,
                pct(s.cycles, lrr.cycles),
                s.l1.hits,
                s.l1.hit_reserve,
                s.l1.misses,
                lrr.l1.hits,
                lrr.l1.hit_reserve,
                lrr.l1.misses,
            ));
            assert_eq!(s.warp_instructions, lrr.warp_instructions);
            let listed = PAPER_ABOVE_LRR.contains(&(dir, kind));
            if (s.l2.accesses >= lrr.l2.accesses) != listed {
                worse.push(format!("{dir} {kind:?} (listed: {listed})"));
            }
        }
        if PAPER_ABOVE_LRR.contains(&(dir, PolicyKind::RbTs)) {
            let mut le = Params::new(SMS, X);
            le.strict_less = false;
            let s = sim(
                &m,
                &b,
                TbPolicy::PAVER,
                Some(schedule_with(&g, PolicyKind::RbTs, &b, &le)),
            );
            report.push_str(&format!(
                "{dir} RbTs --rb-leaf le: L2 accesses {} vs LRR {}\n",
                s.l2.accesses, lrr.l2.accesses
            ));
            let fixed = LE_BELOW_LRR.contains(&dir);
            if (s.l2.accesses < lrr.l2.accesses) != fixed {
                worse.push(format!(
                    "{dir} RbTs --rb-leaf le (listed in LE_BELOW_LRR: {fixed})"
                ));
            }
        }
    }
    eprint!("{report}");
    assert!(
        worse.is_empty(),
        "L2 accesses not as listed (PAPER_ABOVE_LRR, LE_BELOW_LRR): {worse:?}\n{report}"
    );
}

/// The L2 comparison on other configurations (reported, not asserted): SM count, TB limit
/// and L1 size around the asserted point. `cargo test -p sim --release --test timing_corpus
/// -- --ignored --nocapture config_sweep`
#[test]
#[ignore = "about a minute; a report"]
fn config_sweep() {
    let launches = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/timing_launches");
    let kernels = [
        ("mm_naive", "mm_naive.json"),
        ("syrk", "syrk.json"),
        ("syr2k", "syr2k.json"),
        ("hotspot", "hotspot.json"),
        ("srad", "srad_diffusion_coeff.json"),
    ];
    let loaded: Vec<_> = kernels
        .iter()
        .map(|(dir, l)| {
            let (m, b) = load(dir, &launches.join(l));
            let g = graph(&m, &b);
            (*dir, m, b, g)
        })
        .collect();
    let mut losses = 0;
    for (sms, x, l1) in [
        (8, 4, 32768),
        (4, 4, 32768),
        (16, 4, 32768),
        (8, 2, 32768),
        (8, 8, 32768),
        (8, 4, 16384),
    ] {
        let cfg = volta(sms, x, l1);
        let mut line = format!("{sms} SMs x {x} TBs, L1 {} KB:", l1 / 1024);
        for (dir, m, b, g) in &loaded {
            let lrr = sim_on(m, b, TbPolicy::LRR, None, true, &cfg);
            for kind in [PolicyKind::RbTs, PolicyKind::KwayTs] {
                let launch = graph_partition::Launch {
                    kernel: b.kernel.clone(),
                    grid: [b.grid.x as u32, b.grid.y as u32, b.grid.z as u32],
                    block: [b.block.x as u32, b.block.y as u32, b.block.z as u32],
                };
                let sched = make_schedule(g, kind.policy().as_ref(), &Params::new(sms, x), &launch)
                    .expect("schedule");
                let s = sim_on(m, b, TbPolicy::PAVER, Some(sched), true, &cfg);
                let d = pct(s.l2.accesses, lrr.l2.accesses);
                losses += usize::from(s.l2.accesses >= lrr.l2.accesses);
                let k = if kind == PolicyKind::RbTs { "RB" } else { "Kw" };
                line.push_str(&format!(" {dir} {k} {d:+.1}%"));
            }
        }
        eprintln!("{line}");
    }
    eprintln!("{losses} of {} comparisons without an L2 reduction", 6 * 10);
}

/// Small launches whose dynamic locality graph has no edge (no 128 B line read by two TBs):
/// the streaming and element-wise kernels of the corpus.
fn no_locality_launches() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (dir, launch) in small_launches() {
        let (m, b) = corpus(&dir, &launch);
        if b.grid.count() >= 2 && graph(&m, &b).num_edges() == 0 {
            out.push((dir, launch));
        }
    }
    out
}

/// The launches without inter-TB locality on which the paper's RB-TS or Kway-TS cost more
/// than 1 % cycles against LRR (8 SMs x 4 TBs here). Two causes, measured 2026-11-29 with
/// issue 38's issue order and banked FR-FCFS DRAM:
/// - RB-TS on grids of 4-8 TBs (noret: 4; gto_friendly, libor, rr_friendly's two,
///   storegpu_chunk_hash: 8), smaller than one wave: Algorithm 1 bisects to leaves below
///   x = 4, so 8 TBs make four groups of 2 and four SMs idle while two TBs share each busy
///   SM (noret +88.9 %, rr_friendly_window +79.6 %, storegpu +51.0 %, libor +44.0 %,
///   rr_friendly_sync +9.7 %, gto_friendly +2.7 %). `--shrink-groups` gives each SM one.
/// - negoff and dwt2d (16 TBs), both policies (+2.2 %, +1.9 %): METIS's parts of an edgeless
///   graph are contiguous TB ranges, two TBs per SM either way, contiguous pairs (0, 1)
///   against LRR's (0, 8), so each SM's requests meet other L2 slices, DRAM channels and
///   banks than under LRR's stride.
///
/// With the FIFO DRAM model (`--set dram.scheduler=fifo`, the model before issue 38's DRAM
/// work) the same build gives float_bound's RB-TS +3.4 % and mergesort_step +3.2 % (both
/// now within 1 %: -0.0 %, -0.3 %), dwt2d +0.3 % (now +1.9 %), negoff +13.3 %.
///
/// `--edgeless-lrr` (a named departure, off by default) keeps LRR's groups on an edgeless
/// graph and is held to 1 % everywhere below (it runs exactly LRR's cycles).
const PAPER_ABOVE_1_PERCENT: &[(&str, PolicyKind)] = &[
    ("dwt2d", PolicyKind::RbTs),
    ("dwt2d", PolicyKind::KwayTs),
    ("gto_friendly", PolicyKind::RbTs),
    ("libor", PolicyKind::RbTs),
    ("negoff", PolicyKind::RbTs),
    ("negoff", PolicyKind::KwayTs),
    ("noret", PolicyKind::RbTs),
    ("rr_friendly", PolicyKind::RbTs),
    ("storegpu_hash", PolicyKind::RbTs),
];

#[test]
fn rb_ts_and_kway_ts_cost_at_most_1_percent_without_inter_tb_locality() {
    let picked = no_locality_launches();
    assert!(picked.len() >= 5, "{picked:?}");
    let mut report = String::new();
    let mut slower = Vec::new();
    let edgeless = Params {
        edgeless_lrr: true,
        ..Params::new(SMS, X)
    };
    for (dir, launch) in &picked {
        let (m, b) = corpus(dir, launch);
        let g = graph(&m, &b);
        assert_eq!(g.num_edges(), 0);
        let lrr = sim(&m, &b, TbPolicy::LRR, None);
        for kind in [PolicyKind::RbTs, PolicyKind::KwayTs] {
            let s = sim(&m, &b, TbPolicy::PAVER, Some(schedule(&g, kind, &b)));
            let e = sim(
                &m,
                &b,
                TbPolicy::PAVER,
                Some(schedule_with(&g, kind, &b, &edgeless)),
            );
            report.push_str(&format!(
                "{dir}/{launch} ({} TBs) {kind:?}: cycles {} vs LRR {} ({:+.2} %), --edgeless-lrr {} ({:+.2} %)\n",
                b.grid.count(),
                s.cycles,
                lrr.cycles,
                pct(s.cycles, lrr.cycles),
                e.cycles,
                pct(e.cycles, lrr.cycles),
            ));
            let bound = 1.01;
            let listed = PAPER_ABOVE_1_PERCENT.contains(&(dir.as_str(), kind));
            if (s.cycles as f64 > bound * lrr.cycles as f64) != listed {
                slower.push(format!("{dir}/{launch} {kind:?} (listed: {listed})"));
            }
            // With LRR's groups what is left is the PAVER runtime's hand-out against the
            // LRR scheduler's.
            if e.cycles as f64 > bound * lrr.cycles as f64 {
                slower.push(format!("{dir}/{launch} {kind:?} --edgeless-lrr"));
            }
        }
    }
    eprint!("{report}");
    assert!(
        slower.is_empty(),
        "not as PAPER_ABOVE_1_PERCENT lists: {slower:?}\n{report}"
    );
}

#[test]
fn paver_runtime_with_lrr_groups_is_lrr() {
    // LRR's placement when every TB takes as long: SM s runs s, s + N, s + 2N, ... The
    // runtime adds no cycle of its own (groups are handed out as contexts free).
    let (m, b) = corpus("blackscholes", "small.json");
    let g = graph(&m, &b);
    let n = b.grid.count() as u32;
    let mut s = schedule(&g, PolicyKind::KwayTs, &b);
    s.groups = (0..SMS)
        .map(|sm| (sm..n).step_by(SMS as usize).collect())
        .collect();
    let lrr = sim(&m, &b, TbPolicy::LRR, None);
    let paver = sim(&m, &b, TbPolicy::PAVER, Some(s));
    assert_eq!(paver.cycles, lrr.cycles);
    assert_eq!(paver.l2, lrr.l2);
}

#[test]
fn task_stealing_shortens_the_kway_ts_tail() {
    // Kway-TS's parts are balanced in TBs, not in time: hotspot's border TBs do less work.
    let launches = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/timing_launches");
    let (m, b) = load("hotspot", &launches.join("hotspot.json"));
    let s = schedule(&graph(&m, &b), PolicyKind::KwayTs, &b);
    let steal = sim_with(&m, &b, TbPolicy::PAVER, Some(s.clone()), true);
    let none = sim_with(&m, &b, TbPolicy::PAVER, Some(s), false);
    eprintln!(
        "hotspot Kway-TS: {} cycles with stealing ({} TBs stolen), {} without",
        steal.cycles, steal.stolen_tbs, none.cycles
    );
    assert!(steal.stolen_tbs > 0);
    assert!(steal.cycles < none.cycles);
}

fn small_launches() -> Vec<(String, String)> {
    let mut dirs: Vec<_> = std::fs::read_dir(kernels())
        .expect("kernels")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for d in dirs {
        let dir = d.file_name().expect("name").to_string_lossy().to_string();
        let mut launches: Vec<String> = std::fs::read_dir(&d)
            .expect("dir")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|f| f.starts_with("small") && f.ends_with(".json"))
            .collect();
        launches.sort();
        out.extend(launches.into_iter().map(|l| (dir.clone(), l)));
    }
    out
}

/// Every small launch of the corpus runs to completion in the timing model, which issues
/// exactly the warp and thread instructions the interpreter executes (the traces recover
/// every instruction of every warp).
#[test]
fn every_corpus_launch_issues_what_the_interpreter_executes() {
    let mut n = 0;
    for (dir, launch) in small_launches() {
        let (m, b) = corpus(&dir, &launch);
        let prog = Program::new(&m, &b.kernel).expect("program");
        let want = sim::run(&prog, &b, &RunOptions::default(), &mut sim::NoObserver)
            .expect("run")
            .stats;
        let mut cfg = TimingConfig::new(gpu::GpuConfig::builtin("volta").expect("volta"));
        cfg.set("core.num_sms", "8").expect("set");
        let f = m.kernel(&b.kernel).expect("kernel");
        let got = simulate(&m, f, &b, &cfg, &SimOptions::new(TbPolicy::LRR))
            .unwrap_or_else(|e| panic!("{dir}/{launch}: {e}"));
        assert_eq!(
            (got.warp_instructions, got.thread_instructions),
            (want.warp_instructions, want.thread_instructions),
            "{dir}/{launch}"
        );
        assert_eq!(got.sms.iter().map(|s| s.tbs).sum::<u64>(), want.tbs);
        n += 1;
    }
    assert!(n >= 30, "only {n} launches");
}

#[test]
fn no_stealing_on_a_grid_smaller_than_one_wave() {
    // syrk's small launch has 16 TBs; on Fermi (15 SMs; ptxas: 32 registers x 256 threads,
    // so 4 TBs per SM by registers) one wave holds 60. Every TB is resident as soon as it
    // is issued, none waits for a context, so nothing may be stolen: before Algorithm 2's
    // "waiting" meant TBs waiting for a context, this launch reported 24 TBs stolen (TBs
    // moving back and forth at launch).
    let (m, b) = corpus("syrk", "small.json");
    let g = graph(&m, &b);
    let mut cfg = TimingConfig::new(gpu::GpuConfig::builtin("gtx480").expect("fermi"));
    cfg.regs_per_thread = Some(32);
    let launch = graph_partition::Launch {
        kernel: b.kernel.clone(),
        grid: [b.grid.x as u32, b.grid.y as u32, b.grid.z as u32],
        block: [b.block.x as u32, b.block.y as u32, b.block.z as u32],
    };
    for (kind, fixed) in [
        (PolicyKind::KwayTs, false),
        (PolicyKind::RbTs, false),
        (PolicyKind::RbTs, true),
    ] {
        let mut p = Params::new(15, 4);
        p.shrink_groups = !fixed;
        let s = make_schedule(&g, kind.policy().as_ref(), &p, &launch).expect("schedule");
        let st = sim_on(&m, &b, TbPolicy::PAVER, Some(s), true, &cfg);
        assert_eq!(st.tbs_per_sm, 4);
        assert_eq!(st.stolen_tbs, 0, "{kind:?} (fixed group size: {fixed})");
        assert!(st.steal);
    }
}
