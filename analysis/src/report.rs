//! The `paver-analysis/1` JSON document (schema: `analysis/schema/paver-analysis-1.schema.json`)
//! and the one-screen human summary.

use std::fmt::Write;

use launch::BoundLaunch;
use ptx_parser::Function;
use serde_json::{json, Value};

use crate::descriptor::{Derived, Sharing};
use crate::footprint::{count, Granularity, PARAM_SHIFT};
use crate::locality::{Graph, Stats};
use crate::reuse::Reuse;
use crate::Analysis;

pub use crate::region::region_name;

/// Format tag of the document.
pub const FORMAT: &str = "paver-analysis/1";

/// Builds the JSON document without the graph's edges (see [`write_json`], which adds
/// them), computing the reuse metrics ([`crate::reuse::compute`]). Deterministic: the same
/// input gives the same bytes.
pub fn document(
    f: &Function,
    launch: &BoundLaunch,
    gran: Granularity,
    a: &Analysis,
    g: &Graph,
    s: &Stats,
) -> Value {
    let r = crate::reuse::compute(a, launch, gran, g);
    let d = crate::descriptor::compute(f, a, launch);
    document_with(f, launch, gran, a, g, s, &r, &d)
}

/// [`document`] with the reuse metrics ([`crate::reuse::compute`]) and Locality
/// Descriptors ([`crate::descriptor::compute`]) computed by the caller, to print them too
/// ([`reuse_summary`], [`descriptor_summary`]) or to choose how descriptors are decided.
#[allow(clippy::too_many_arguments)]
pub fn document_with(
    f: &Function,
    launch: &BoundLaunch,
    gran: Granularity,
    a: &Analysis,
    g: &Graph,
    s: &Stats,
    reuse: &Reuse,
    descriptors: &[Derived],
) -> Value {
    let region = |r: Option<u32>| -> Value {
        match r {
            Some(r) => json!(r),
            None => Value::Null,
        }
    };
    let coverage = load_coverage(a);
    let loads: Vec<Value> = a
        .model
        .loads
        .iter()
        .zip(&a.unresolved)
        .zip(&coverage)
        .enumerate()
        .map(|(i, ((l, u), &c))| {
            // Byte ranges: the static evaluation's or what the interpreter saw (none for an
            // unresolved or guarded load of a static analysis: it was not evaluated).
            let rs = match c {
                Coverage::InGraph | Coverage::NeverExecuted => a.footprints.load_ranges.get(i),
                Coverage::Guarded | Coverage::Unresolved => None,
            };
            let (params, reads): (Vec<u64>, Vec<Value>) = match rs {
                Some(rs) => {
                    let mut ps: Vec<u64> = rs.iter().filter_map(|r| r.region).map(u64::from).collect();
                    ps.dedup();
                    let reads = rs
                        .iter()
                        .map(|r| json!({"param": region(r.region), "name": r.region.and_then(|x| region_name(f, launch, x)), "bytes": [r.lo, r.hi]}))
                        .collect();
                    (ps, reads)
                }
                None if c == Coverage::Guarded => (param_of(l, launch), Vec::new()),
                None => (Vec::new(), Vec::new()),
            };
            let reason = match c {
                Coverage::InGraph => None,
                Coverage::NeverExecuted => Some("never executed for this launch".to_string()),
                Coverage::Guarded => Some(format!("{} guard: a may-load, not in the footprints or the graph (--may-loads adds its may-footprint)", l.guard().as_str())),
                Coverage::Unresolved => u.clone(),
            };
            let mut v = json!({
                "line": l.line,
                "width_bytes": l.width,
                "coverage": c.as_str(),
                "resolved": c != Coverage::Unresolved,
                "reason": reason,
                "never_executed": c == Coverage::NeverExecuted,
                "loop_depth": l.loops.len(),
                "guard": l.guard().as_str(),
                "params": params.iter().map(|&p| json!({"index": p, "name": region_name(f, launch, p as u32)})).collect::<Vec<_>>(),
                "reads": reads,
            });
            // What the static analysis would have said of a load the run observed.
            if let (true, Some(u)) = (a.observed, u) {
                v["static_reason"] = json!(u);
            }
            v
        })
        .chain(a.model.unreachable_loads.iter().map(|(_, line)| {
            json!({"line": line, "coverage": Coverage::NeverExecuted.as_str(), "resolved": true, "reason": "never executed for this launch", "never_executed": true, "loop_depth": 0})
        }))
        .collect();
    let counts = CoverageCounts::of(a, &coverage);
    let never = counts.never_executed;
    let total = a.model.loads.len() + a.model.unreachable_loads.len();
    let resolved = total - counts.unresolved;
    let structures: Vec<Value> = a
        .footprints
        .params
        .iter()
        .map(|p| {
            let refs: u64 = p
                .classes
                .iter()
                .map(|c| count(&c.units) * c.members.len() as u64)
                .sum();
            let tbs: u64 = p.classes.iter().map(|c| c.members.len() as u64).sum();
            let lo = p
                .classes
                .iter()
                .filter_map(|c| c.units.first())
                .map(|x| x.0)
                .min()
                .unwrap_or(0);
            let hi = p
                .classes
                .iter()
                .filter_map(|c| c.units.last())
                .map(|x| x.1)
                .max()
                .unwrap_or(0);
            let mask = (1u64 << PARAM_SHIFT) - 1;
            json!({
                "param": p.param,
                "name": region_name(f, launch, p.param),
                "unit_bytes": p.unit_bytes,
                "tbs_reading": tbs,
                "distinct_footprints": p.classes.len(),
                "data_references": refs,
                "mean_units_per_tb": if tbs == 0 { 0.0 } else { refs as f64 / tbs as f64 },
                "unit_range": [lo & mask, hi & mask],
            })
        })
        .collect();
    let c = &s.categories;
    let tot = (c.unshared + c.intra_tb + c.inter_tb + c.both).max(1) as f64;
    json!({
        "format": FORMAT,
        "kernel": f.name,
        "grid": [launch.grid.x, launch.grid.y, launch.grid.z],
        "block": [launch.block.x, launch.block.y, launch.block.z],
        "launch": launch,
        "open_params": open_params(launch),
        "granularity": match gran { Granularity::Line(n) => format!("line:{n}"), Granularity::Sector => "sector".into(), Granularity::Element => "element".into() },
        "loads": loads,
        "loads_resolved": resolved,
        "loads_total": total,
        "loads_never_executed": never,
        "resolved_fraction": if total == 0 { 1.0 } else { resolved as f64 / total as f64 },
        "coverage": counts,
        "data_structures": structures,
        "graph": {
            "num_tbs": g.num_tbs(),
            "num_edges": g.num_edges(),
        },
        "stats": s,
        "categories": {
            "counts": c,
            "fractions": {
                "unshared": c.unshared as f64 / tot,
                "intra_tb": c.intra_tb as f64 / tot,
                "inter_tb": c.inter_tb as f64 / tot,
                "both": c.both as f64 / tot,
            }
        },
        "reuse": reuse,
        "locality_descriptors": descriptors,
    })
}

/// Where one global load stands (`coverage` of each load in the JSON; issue 41): only
/// loads *in the graph* shape the footprints, the locality graph and its statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// Its per-TB footprint is in the footprints and the graph: evaluated exactly by the
    /// static analysis (a guarded one with `--may-loads`, as a may-footprint), or observed
    /// in the interpreter's run (`--dynamic`).
    InGraph,
    /// Resolved, but under a guard on loaded data or floats: left out unless `--may-loads`.
    Guarded,
    /// Proved (or, with `--dynamic`, seen) never to execute for this launch.
    NeverExecuted,
    /// Its addresses are not known; the reason says why.
    Unresolved,
}

impl Coverage {
    /// The JSON word.
    pub fn as_str(self) -> &'static str {
        match self {
            Coverage::InGraph => "in_graph",
            Coverage::Guarded => "guarded",
            Coverage::NeverExecuted => "never_executed",
            Coverage::Unresolved => "unresolved",
        }
    }
}

/// Each load's [`Coverage`] (by index into `a.model.loads`; the statically unreachable
/// loads, `a.model.unreachable_loads`, never execute).
pub fn load_coverage(a: &Analysis) -> Vec<Coverage> {
    let ranged = a.footprints.load_ranges.len() == a.model.loads.len();
    (0..a.model.loads.len())
        .map(|i| {
            let ran = ranged && !a.footprints.load_ranges[i].is_empty();
            if a.observed {
                return if ran {
                    Coverage::InGraph
                } else {
                    Coverage::NeverExecuted
                };
            }
            if a.unresolved[i].is_some() {
                Coverage::Unresolved
            } else if !a.model.counts(i) && !ran {
                // A may-load left out of the footprints was not evaluated.
                Coverage::Guarded
            } else if ranged && !ran {
                Coverage::NeverExecuted
            } else {
                Coverage::InGraph
            }
        })
        .collect()
}

/// The loads of each [`Coverage`] (`coverage` in the JSON), with the unresolved ones by
/// kind of reason ([`crate::expr::reason_kind`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CoverageCounts {
    /// Loads in the footprints and the graph.
    pub in_graph: usize,
    /// Loads left out under a data or float guard (`--may-loads` adds them).
    pub guarded: usize,
    /// Loads that never execute for this launch.
    pub never_executed: usize,
    /// Loads whose addresses are not known.
    pub unresolved: usize,
    /// The unresolved loads by kind of reason.
    pub unresolved_reasons: std::collections::BTreeMap<&'static str, usize>,
}

impl CoverageCounts {
    /// The counts of `coverage` ([`load_coverage`] of `a`) and `a`'s unreachable loads.
    pub fn of(a: &Analysis, coverage: &[Coverage]) -> CoverageCounts {
        let mut c = CoverageCounts {
            never_executed: a.model.unreachable_loads.len(),
            ..CoverageCounts::default()
        };
        for (k, u) in coverage.iter().zip(&a.unresolved) {
            match k {
                Coverage::InGraph => c.in_graph += 1,
                Coverage::Guarded => c.guarded += 1,
                Coverage::NeverExecuted => c.never_executed += 1,
                Coverage::Unresolved => {
                    c.unresolved += 1;
                    let kind = u.as_deref().map_or("other", crate::expr::reason_kind);
                    *c.unresolved_reasons.entry(kind).or_default() += 1;
                }
            }
        }
        c
    }
}

/// The most edges `paver analyze` puts in the JSON document (`graph.edges`) unless asked
/// (`--edges-json`): about 20 MB of JSON. Larger graphs go to a graph file (`--graph
/// FILE.npz` or `FILE.graph`), which the document names.
pub const EDGES_IN_JSON_MAX: u64 = 1_000_000;

/// Rows of the graph formatted per parallel batch (bounds the memory held as text).
const WRITE_BATCH: usize = 32;

/// Writes `doc` (from [`document`]) as compact JSON with `graph.edges` = `[[i, j, w], ...]`
/// streamed from `g`: the edge list is formatted in parallel, row chunk by row chunk, and
/// never held as a JSON value.
pub fn write_json(out: &mut dyn std::io::Write, doc: &Value, g: &Graph) -> std::io::Result<()> {
    write_json_with(out, doc, Some(g))
}

/// [`write_json`], with the edge list streamed only when a graph is given (without one the
/// document is written as it is: `graph` keeps its other fields).
pub fn write_json_with(
    out: &mut dyn std::io::Write,
    doc: &Value,
    g: Option<&Graph>,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    let Some(g) = g else {
        return serde_json::to_writer(out, doc).map_err(std::io::Error::other);
    };
    let Value::Object(map) = doc else {
        return serde_json::to_writer(out, doc).map_err(std::io::Error::other);
    };
    out.write_all(b"{")?;
    for (k, (key, v)) in map.iter().enumerate() {
        if k > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, key).map_err(std::io::Error::other)?;
        out.write_all(b":")?;
        if key != "graph" {
            serde_json::to_writer(&mut *out, v).map_err(std::io::Error::other)?;
            continue;
        }
        out.write_all(b"{\"edges\":[")?;
        let chunks: Vec<(u32, u32)> = g.row_chunks().collect();
        let mut first = true;
        for batch in chunks.chunks(WRITE_BATCH) {
            let texts: Vec<Vec<u8>> = batch
                .par_iter()
                .map(|&(start, rows)| {
                    let mut t = Vec::new();
                    let mut b = itoa::Buffer::new();
                    for i in start..start + rows {
                        let (ns, ws) = g.row(i);
                        let si = b.format(i).as_bytes().to_vec();
                        for (&j, &w) in ns.iter().zip(ws) {
                            t.extend_from_slice(b",[");
                            t.extend_from_slice(&si);
                            t.push(b',');
                            t.extend_from_slice(b.format(j).as_bytes());
                            t.push(b',');
                            t.extend_from_slice(b.format(w).as_bytes());
                            t.push(b']');
                        }
                    }
                    t
                })
                .collect();
            for t in texts {
                if t.is_empty() {
                    continue;
                }
                // Each text starts with a separator; the first one of the list drops it.
                out.write_all(if first { &t[1..] } else { &t })?;
                first = false;
            }
        }
        out.write_all(b"]")?;
        if let Value::Object(gm) = v {
            for (gk, gv) in gm {
                out.write_all(b",")?;
                serde_json::to_writer(&mut *out, gk).map_err(std::io::Error::other)?;
                out.write_all(b":")?;
                serde_json::to_writer(&mut *out, gv).map_err(std::io::Error::other)?;
            }
        }
        out.write_all(b"}")?;
    }
    out.write_all(b"}")
}

/// The loads that read addresses lying in no data structure (before a buffer, past its end,
/// between buffers): `(PTX line, bytes)` per load, in program order. Such addresses are in
/// no footprint; on a real GPU they read whatever lies there. The usual cause is a launch
/// whose sizes were scaled (`--param n=...`) without its buffers.
pub fn reads_outside_buffers(a: &Analysis) -> Vec<(u32, u64)> {
    a.model
        .loads
        .iter()
        .zip(&a.footprints.load_ranges)
        .filter_map(|(l, rs)| {
            let bytes: u64 = rs
                .iter()
                .filter(|r| r.region.is_none())
                .map(|r| r.hi - r.lo)
                .sum();
            (bytes > 0).then_some((l.line, bytes))
        })
        .collect()
}

/// The parameters the launch left open (`open_params` in the JSON): by-value parameters
/// without a value that no analysed address, guard or loop bound depends on
/// ([`crate::open`]).
pub fn open_params(launch: &BoundLaunch) -> Value {
    launch
        .open_params()
        .iter()
        .map(|&i| json!({"index": i, "name": launch.params[i].name}))
        .collect()
}

/// The one-screen summary printed by `paver analyze`.
pub fn summary(f: &Function, launch: &BoundLaunch, a: &Analysis, s: &Stats) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "kernel {}: grid {} block {} ({} TBs)",
        f.name, launch.grid, launch.block, s.total_tbs
    );
    let open = launch.open_params();
    if !open.is_empty() {
        let names: Vec<String> = open
            .iter()
            .map(|&i| format!("{i} (`{}`)", launch.params[i].name))
            .collect();
        let _ = writeln!(
            o,
            "left open (no value given; no analysed address, guard or loop bound depends on it): parameter {}",
            names.join(", ")
        );
    }
    let coverage = load_coverage(a);
    let c = CoverageCounts::of(a, &coverage);
    let total = a.model.loads.len() + a.model.unreachable_loads.len();
    let reasons: Vec<String> = c
        .unresolved_reasons
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let reasons = if reasons.is_empty() {
        String::new()
    } else {
        format!(" ({})", reasons.join(", "))
    };
    let _ = writeln!(
        o,
        "global loads: {total}: in the graph {}, guarded {}, never executed {}, unresolved {}{reasons}",
        c.in_graph, c.guarded, c.never_executed, c.unresolved
    );
    for ((l, u), k) in a.model.loads.iter().zip(&a.unresolved).zip(&coverage) {
        match (k, u) {
            (Coverage::Unresolved, Some(u)) => {
                let _ = writeln!(o, "  line {}: unresolved: {u}", l.line);
            }
            (Coverage::Guarded, _) => {
                let _ = writeln!(
                    o,
                    "  line {}: guarded ({} guard): left out of the graph; --may-loads adds it",
                    l.line,
                    l.guard().as_str()
                );
            }
            _ => {}
        }
    }
    let _ = writeln!(
        o,
        "data references {}, distinct units {}, edges {}, SpScore {:.4}, shared TBs {}, degree of sharing {:.4}",
        s.total_data_references, s.distinct_units, s.edges, s.spscore, s.shared_tbs, s.degree_of_sharing
    );
    let c = &s.categories;
    let _ = writeln!(
        o,
        "units: unshared {}, intra-TB {}, inter-TB {}, both {}",
        c.unshared, c.intra_tb, c.inter_tb, c.both
    );
    o
}

/// Summary lines for the reuse metrics (appended to [`summary`] by the CLI).
pub fn reuse_summary(r: &Reuse) -> String {
    let mut o = String::new();
    let sample = if r.sampled_tbs < r.total_tbs {
        format!(" (sample of {} of {} TBs)", r.sampled_tbs, r.total_tbs)
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "reuse{sample}: self reuse ratio warp {:.4}, TB {:.4}; pair ratio histogram {:?} over {} TB pairs",
        r.warp.self_reuse_ratio, r.tb.self_reuse_ratio, r.pair_ratio_histogram, r.pairs
    );
    let _ = writeln!(
        o,
        "  LRU stack distance (bins 0, [1,2), [2,4), ...): warp {:?} cold {}; TB {:?} cold {}",
        r.warp.stack_distance_histogram,
        r.warp.cold_accesses,
        r.tb.stack_distance_histogram,
        r.tb.cold_accesses
    );
    o
}

/// Summary lines for the Locality Descriptors (one per pointer parameter).
pub fn descriptor_summary(ds: &[Derived]) -> String {
    let mut o = String::new();
    for derived in ds {
        let d = &derived.descriptor;
        let name = d.name.as_deref().unwrap_or("?");
        let stride = d
            .stride_elements
            .map_or(String::new(), |s| format!(" stride {s}"));
        let _ = writeln!(
            o,
            "  {name}: {} {} {}{stride}, D-Tile {:?}, C-Tile {:?}, map {:?} rank {:?}, priority {} ({:?})",
            d.locality_type,
            d.sharing.map_or("-", Sharing::as_str),
            d.pattern,
            d.d_tile,
            d.c_tile,
            d.compute_data_map,
            d.compute_data_rank,
            d.priority,
            derived.decided_by
        );
    }
    o
}

/// The parameter(s) a resolved load reads: its address evaluated for thread 0 of TB 0 (the
/// buffer of parameter `i` starts at `(i + 1) << 36`), when that thread runs the load.
fn param_of(l: &crate::addr::LoadSite, launch: &BoundLaunch) -> Vec<u64> {
    let mut v = Vec::new();
    l.addr.visit_leaves(&mut |_| {});
    if let Some(c) = const_base(&l.addr) {
        let p = (c >> 36) - 1;
        if p >= 0 && (p as usize) < launch.params.len() {
            v.push(p as u64);
        }
    }
    v
}

/// The largest constant term of an address sum (the buffer base).
fn const_base(e: &crate::expr::Expr) -> Option<i128> {
    use crate::expr::Expr;
    match e {
        Expr::Const(c) if *c >= 1 << 36 => Some(*c),
        Expr::Add(a, b) => const_base(a).or_else(|| const_base(b)),
        Expr::Sub(a, _) => const_base(a),
        _ => None,
    }
}
