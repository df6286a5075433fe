//! Shared helpers: load a corpus kernel with a launch file and analyse it.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use analysis::footprint::{Footprints, Granularity, PARAM_SHIFT};
use launch::{BoundLaunch, BoundValue, Launch};

pub const VARIANTS: [&str; 3] = ["compute_70", "compute_90", "nvcc13.sm_90"];

pub fn kdir(dir: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels")
        .join(dir)
}

pub fn load(dir: &str, variant: &str, launch_file: &str) -> (ptx_parser::Module, BoundLaunch) {
    load_with(dir, variant, launch_file, Vec::new())
}

/// [`load`] with `extra` parameters added to the launch file's.
pub fn load_with(
    dir: &str,
    variant: &str,
    launch_file: &str,
    extra: Vec<launch::ParamSpec>,
) -> (ptx_parser::Module, BoundLaunch) {
    let d = kdir(dir);
    let m = ptx_parser::parse_file(&d.join(format!("{dir}.{variant}.ptx"))).expect("parse");
    let mut l = Launch::read(&d.join(launch_file)).expect("launch");
    l.params.extend(extra);
    let name = l.kernel.clone().expect("kernel named");
    let f = m.kernel(&name).expect("kernel");
    // The static analysis's binding: by-value parameters without a value stay open
    // (lavamd's `par_str`).
    let b = l
        .bind_open(&name, &analysis::param_sigs(f), &d)
        .expect("bind")
        .with_module(&m);
    (m, b)
}

/// Base address of parameter `p`.
pub fn base(b: &BoundLaunch, p: usize) -> u64 {
    match &b.params[p].value {
        BoundValue::Buffer { base, .. } | BoundValue::Synthetic { base } => *base,
        _ => panic!("not a pointer"),
    }
}

/// Reference footprints: for every TB, the set of unit ids its threads read.
pub type RefSets = Vec<BTreeSet<u64>>;

/// Adds an access of `width` bytes at element `idx` of parameter `p` (elements of `esize`).
pub fn touch(
    set: &mut BTreeSet<u64>,
    b: &BoundLaunch,
    p: usize,
    idx: i64,
    esize: u64,
    width: u64,
    unit: u64,
) {
    let a = base(b, p) + (idx as u64).wrapping_mul(esize);
    let off = a & ((1u64 << 36) - 1);
    for u in off / unit..=(off + width - 1) / unit {
        set.insert(((p as u64) << PARAM_SHIFT) | u);
    }
}

/// Per-TB sets of the analysis.
pub fn analysis_sets(fp: &Footprints) -> RefSets {
    let mut out = vec![BTreeSet::new(); fp.num_tbs as usize];
    for p in &fp.params {
        for c in &p.classes {
            for &tb in &c.members {
                for &(a, b) in &c.units {
                    out[tb as usize].extend(a..b);
                }
            }
        }
    }
    out
}

pub fn analyse(
    dir: &str,
    variant: &str,
    launch_file: &str,
    g: Granularity,
) -> (analysis::Analysis, BoundLaunch) {
    let (m, b) = load(dir, variant, launch_file);
    let f = m.kernel(&b.kernel).expect("kernel");
    (analysis::analyze(f, &b, g).expect("analysis"), b)
}

/// Iterates TBs and threads: (tb id, ctaid, tid).
pub fn threads(b: &BoundLaunch) -> Vec<(usize, [i64; 3], [i64; 3])> {
    let (g, k) = (b.grid, b.block);
    let mut v = Vec::new();
    for bz in 0..g.z {
        for by in 0..g.y {
            for bx in 0..g.x {
                let tb = (bx + by * g.x + bz * g.x * g.y) as usize;
                for tz in 0..k.z {
                    for ty in 0..k.y {
                        for tx in 0..k.x {
                            v.push((
                                tb,
                                [bx as i64, by as i64, bz as i64],
                                [tx as i64, ty as i64, tz as i64],
                            ));
                        }
                    }
                }
            }
        }
    }
    v
}

pub fn scalar(b: &BoundLaunch, p: usize) -> i64 {
    match b.params[p].value {
        BoundValue::Scalar { bits } => bits as i64,
        _ => panic!("not a scalar"),
    }
}

/// Granularities every exactness test runs at.
pub const GRANS: [Granularity; 3] = [
    Granularity::Line(128),
    Granularity::Sector,
    Granularity::Element,
];

pub fn unit(g: Granularity, esize: u64) -> u64 {
    match g {
        Granularity::Line(n) => n,
        Granularity::Sector => 32,
        Granularity::Element => esize,
    }
}

/// Asserts that the analysis of `dir` with `launch_file` resolves every load and that every
/// TB's footprint and every graph weight equal the `reference` enumeration's, for all three
/// PTX variants at every granularity (`esize`: element size of the loaded buffers).
pub fn check(
    dir: &str,
    launch_file: &str,
    esize: u64,
    reference: impl Fn(&BoundLaunch, u64) -> RefSets,
) {
    for v in VARIANTS {
        for g in GRANS {
            let (a, b) = analyse(dir, v, launch_file, g);
            let want = reference(&b, unit(g, esize));
            let stats = assert_exact(&a, &want, &format!("{dir} {v} {g:?}"));
            assert_eq!(
                stats.total_data_references,
                want.iter().map(|s| s.len() as u64).sum::<u64>()
            );
        }
    }
}

/// A reference enumeration: runs `body` for every thread of the launch with its `%ctaid`
/// and `%tid`; `touch(param, element, esize, width)` adds an access of that thread to its
/// TB's set. Returns the per-TB unit sets at `unit` bytes a unit.
pub fn mirror(
    b: &BoundLaunch,
    unit: u64,
    body: impl Fn([i64; 3], [i64; 3], &mut dyn FnMut(usize, i64, u64, u64)),
) -> RefSets {
    let mut s = vec![BTreeSet::new(); b.num_tbs() as usize];
    for (tb, c, t) in threads(b) {
        body(c, t, &mut |p, idx, esize, width| {
            touch(&mut s[tb], b, p, idx, esize, width, unit)
        });
    }
    s
}

/// Asserts that `a` resolves every load and that every TB's footprint and every graph weight
/// equal the reference sets' (`what` names the case); returns the graph's statistics.
pub fn assert_exact(
    a: &analysis::Analysis,
    want: &RefSets,
    what: &str,
) -> analysis::locality::Stats {
    assert!(
        a.unresolved.iter().all(Option::is_none),
        "{what}: unresolved {:?}",
        a.unresolved
    );
    let got = analysis_sets(&a.footprints);
    assert_eq!(got.len(), want.len(), "{what}");
    for (tb, (x, y)) in got.iter().zip(want).enumerate() {
        assert_eq!(x, y, "{what}: TB {tb} differs");
    }
    // Graph weights equal the pairwise intersections of the reference sets.
    let (graph, stats) = analysis::locality::build(&a.footprints);
    let mut edges = Vec::new();
    for i in 0..want.len() {
        for j in i + 1..want.len() {
            let w = want[i].intersection(&want[j]).count() as u64;
            if w > 0 {
                edges.push((i as u32, j as u32, w));
            }
        }
    }
    assert_eq!(
        graph.edges().collect::<Vec<_>>(),
        edges,
        "{what}: graph differs"
    );
    stats
}

/// Every small launch of the corpus, as (kernel directory, launch file).
pub fn small_launches() -> Vec<(String, String)> {
    let kernels = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let mut launches: Vec<(String, String)> = Vec::new();
    for d in std::fs::read_dir(&kernels).expect("kernels") {
        let d = d.expect("entry").path();
        if !d.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&d).expect("kernel dir") {
            let f = f.expect("entry").path();
            let name = f
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            if name.starts_with("small") && name.ends_with(".json") {
                let dir = d
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("")
                    .to_string();
                launches.push((dir, name));
            }
        }
    }
    launches.sort();
    launches
}

/// The z3 of this process ([`native::z3::solver`]), or `None` on a machine without it (the
/// caller skips its z3 part and says so); under CI (`CI=true`, where `.ci/run` installs the
/// `z3-solver` wheel) a missing z3 fails the test.
pub fn z3_or_skip(test: &str) -> Option<&'static native::z3::Z3> {
    match native::z3::solver() {
        Ok(z) => Some(z),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{test}: z3 is required in CI: {e}")
        }
        Err(e) => {
            eprintln!("{test}: z3 part SKIPPED (z3 not loaded: {e})");
            None
        }
    }
}
