//! A new policy is its own code and one registry line (issue 36). Each toy policy below is
//! built here, in a test module, exactly as a file of `tb_sched/` or `warp_sched/` would
//! be: a scheduler, its `...PolicyInfo`, and nothing else of the simulator's touched. The
//! simulator runs it by its info; the registries' readers (parsing, names, help, the
//! stealing default) are checked against the shipped lists.

use sim::timing::tb_sched::{DispatchContext, TbScheduler};
use sim::timing::warp_sched::{WarpInfo, WarpScheduler};
use sim::timing::{
    simulate, steals_by_default, SimOptions, Stats, TbPolicy, TbPolicyInfo, TimingConfig,
    WarpPolicy, WarpPolicyInfo, TB_POLICIES, WARP_POLICIES,
};
use std::path::PathBuf;

/// Toy TB policy: every TB to SM 0 (in id order), the other SMs idle.
struct OneSm {
    next: u32,
    num_tbs: u32,
}

impl TbScheduler for OneSm {
    fn assign(&mut self, free: &[u32], out: &mut Vec<(u32, u32)>) {
        for _ in 0..free.first().copied().unwrap_or(0) {
            if self.next < self.num_tbs {
                out.push((0, self.next));
                self.next += 1;
            }
        }
    }
    fn pending(&self) -> u64 {
        u64::from(self.num_tbs - self.next)
    }
}

const ONE_SM: TbPolicyInfo = TbPolicyInfo {
    name: "one-sm",
    aliases: &[],
    description: "every TB on SM 0 (a test's toy)",
    grouped: false,
    steals_by_default: false,
    make: |c: &DispatchContext<'_>| {
        Ok(Box::new(OneSm {
            next: 0,
            num_tbs: c.num_tbs,
        }))
    },
};

/// Toy warp policy: always the youngest ready warp slot.
struct Highest;

impl WarpScheduler for Highest {
    fn pick(&mut self, ready: &[u32], _: &WarpInfo<'_>) -> u32 {
        *ready.last().expect("non-empty")
    }
}

const HIGHEST: WarpPolicyInfo = WarpPolicyInfo {
    name: "highest",
    aliases: &[],
    description: "the highest ready slot (a test's toy)",
    make: || Box::new(Highest),
    ipaws: false,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

/// `mm_naive`'s small launch (16 TBs) on Volta scaled to 4 SMs.
fn run(tb: TbPolicy, warp: WarpPolicy) -> Stats {
    let dir = root().join("kernels/mm_naive");
    let m = ptx_parser::parse_file(&dir.join("mm_naive.compute_70.ptx")).expect("ptx");
    let f = m.kernel("mm_naive").expect("kernel");
    let l = launch::Launch::read(&dir.join("small.json")).expect("launch");
    let b = l.bind("mm_naive", &sim::param_sigs(f), &dir).expect("bind");
    let mut cfg = TimingConfig::new(gpu::GpuConfig::builtin("volta").expect("volta"));
    cfg.set("core.num_sms", "4").expect("set");
    let mut opts = SimOptions::new(tb);
    opts.warp_policy = warp;
    simulate(&m, f, &b, &cfg, &opts).expect("simulate")
}

#[test]
fn a_toy_tb_policy_runs_from_its_info_alone() {
    let toy = run(TbPolicy(&ONE_SM), WarpPolicy::GTO);
    let lrr = run(TbPolicy::LRR, WarpPolicy::GTO);
    assert_eq!(toy.tb_policy, "one-sm");
    assert_eq!(toy.tbs, 16);
    // Every TB ran on SM 0, none elsewhere; the same work as LRR's, in more cycles.
    assert_eq!(toy.sms[0].tbs, 16);
    assert!(toy.sms[1..].iter().all(|s| s.tbs == 0));
    assert_eq!(toy.warp_instructions, lrr.warp_instructions);
    assert!(lrr.sms.iter().all(|s| s.tbs == 4));
    assert!(toy.cycles > lrr.cycles, "{} vs {}", toy.cycles, lrr.cycles);
}

#[test]
fn a_toy_warp_policy_runs_from_its_info_alone() {
    let toy = run(TbPolicy::LRR, WarpPolicy(&HIGHEST));
    let gto = run(TbPolicy::LRR, WarpPolicy::GTO);
    assert_eq!(toy.warp_policy, "highest");
    assert_eq!(toy.warp_instructions, gto.warp_instructions);
    assert_ne!(toy.cycles, gto.cycles, "another warp order, other timing");
}

#[test]
fn the_registries_parse_every_name_and_alias_and_nothing_else() {
    for p in TB_POLICIES {
        assert_eq!(TbPolicy::parse(p.name).map(|t| t.name()), Some(p.name));
        assert_eq!(
            TbPolicy::parse(&p.name.to_ascii_uppercase()).map(|t| t.name()),
            Some(p.name)
        );
        for a in p.aliases {
            assert_eq!(TbPolicy::parse(a).map(|t| t.name()), Some(p.name), "{a}");
        }
        assert!(TbPolicy::help().contains(&format!("{}: {}", p.name, p.description)));
        assert_eq!(steals_by_default(p.name), p.steals_by_default);
    }
    for p in WARP_POLICIES {
        assert_eq!(WarpPolicy::parse(p.name).map(|w| w.name()), Some(p.name));
        for a in p.aliases {
            assert_eq!(WarpPolicy::parse(a).map(|w| w.name()), Some(p.name), "{a}");
        }
        assert!(WarpPolicy::help().contains(&format!("{}: {}", p.name, p.description)));
    }
    let mut names = TbPolicy::names();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), TB_POLICIES.len(), "names are unique");
    assert!(TbPolicy::parse("one-sm").is_none());
    assert!(WarpPolicy::parse("highest").is_none());
    // PAVER §5.2: stealing with Kway-TS and RB-TS, not MST-TS.
    assert!(steals_by_default("rb-ts") && steals_by_default("kway-ts"));
    assert!(!steals_by_default("mst-ts") && !steals_by_default("lrr"));
    // The paper's policies lead the report's order.
    assert_eq!(
        &TbPolicy::names()[..6],
        &["lrr", "bcs", "mst-ts", "kway-ts", "rb-ts", "ld"]
    );
}
