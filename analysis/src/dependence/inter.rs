//! The inter-TB test, per parameter ([`inter_tb`]): loads identical along a grid dimension
//! without `%ctaid`, else the footprints' per-TB units (whole elements or larger, or element
//! footprints, [`inter_tb_by_element_footprints`]).

use super::*;

/// The `%ctaid` dimensions load `i`'s executions depend on (address, guards, the trip
/// counts of its loops and of any loop they refer to), or `None` when the model holds
/// something whose dependence is not visible (an unknown).
fn ctaid_dims(a: &Analysis, i: usize) -> Option<[bool; 3]> {
    let site = a.model.loads.get(i)?;
    let mut dims = [false; 3];
    let mut todo: Vec<LoopId> = site.loops.clone();
    let mut seen: Vec<LoopId> = Vec::new();
    let mut exprs: Vec<&E> = vec![&site.addr];
    exprs.extend(&site.cond);
    exprs.extend(&site.may_cond);
    let mut unknown = false;
    let mut visit = |e: &E, todo: &mut Vec<LoopId>| {
        e.visit_leaves(&mut |x| match x {
            Expr::Var(Var::Ctaid(d)) => dims[usize::from(*d).min(2)] = true,
            Expr::Trip(l) => todo.push(*l),
            _ => {}
        });
        e.visit_unknowns(&mut |_| unknown = true);
    };
    for e in exprs {
        visit(e, &mut todo);
    }
    while let Some(l) = todo.pop() {
        if seen.contains(&l) {
            continue;
        }
        seen.push(l);
        let info = a.model.loops.get(l.index())?;
        if info.unresolved.is_some() {
            return None;
        }
        if let Some(p) = info.parent {
            todo.push(p);
        }
        for e in &info.exits {
            visit(e, &mut todo);
        }
    }
    (!unknown).then_some(dims)
}

/// The fast answer to "can two different TBs read a common element of parameter `p`?"
/// over `loads` (the resolved loads of `p` that count in the footprints), or `None`.
pub fn inter_tb(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
    loads: &[usize],
) -> Option<bool> {
    let grid = [launch.grid.x, launch.grid.y, launch.grid.z];
    for &i in loads {
        let reads = a
            .footprints
            .load_ranges
            .get(i)
            .is_some_and(|v| v.iter().any(|r| r.region == Some(p) && r.lo < r.hi));
        if !reads {
            continue;
        }
        if let Some(dims) = ctaid_dims(a, i) {
            // Two TBs that differ along `d` only run this load identically.
            if (0..3).any(|d| !dims[d] && grid[d] >= 2) {
                return Some(true);
            }
        }
    }
    // The footprints first: they hold every counted load's units, so when they answer (no
    // two TBs share a unit, or the units are elements) a witness could only agree, and a
    // launch without inter-TB reuse would otherwise walk the witness's whole allowance
    // for nothing (gemv_unroll: a quarter of the analysis).
    let fp = a.footprints.params.iter().find(|x| x.param == p);
    if let Some(x) = fp.and_then(|fp| classes_meet(fp, eb)) {
        return Some(x);
    }
    // A parameter read by one load whose TBs read apart has no witness to find: walking
    // the witness's allowance first was a quarter of srad_update's small launch.
    if apart_by_address(a, launch, p, eb) {
        return Some(false);
    }
    if inter_tb_witness(a, launch, p, eb, loads) {
        return Some(true);
    }
    // No counted load reads the buffer: `Some(false)`.
    fp.map_or(Some(false), |_| None)
}

/// Whether two TBs' footprints of one parameter share a unit of `eb`-byte elements:
/// `Some` when the units are the elements themselves, or when no two TBs share any unit;
/// `None` when units of several elements meet (they may share a line, not an element).
fn classes_meet(fp: &crate::footprint::ParamFootprint, eb: u64) -> Option<bool> {
    // Units must be whole elements (or several), aligned on element boundaries.
    if fp.unit_bytes == 0 || !fp.unit_bytes.is_multiple_of(eb) {
        return None;
    }
    let mut meet = false;
    if fp
        .classes
        .iter()
        .any(|c| c.members.len() >= 2 && !c.units.is_empty())
    {
        meet = true;
    } else {
        let mut all: Vec<(u64, u64)> = fp
            .classes
            .iter()
            .flat_map(|c| c.units.iter().copied())
            .collect();
        all.sort_unstable();
        let mut end = 0u64;
        for (k, &(lo, hi)) in all.iter().enumerate() {
            // Each class's intervals are disjoint: an overlap is between two classes.
            if k > 0 && lo < end {
                meet = true;
                break;
            }
            end = end.max(hi);
        }
    }
    match (meet, fp.unit_bytes == eb) {
        (false, _) => Some(false),
        (true, true) => Some(true),
        (true, false) => None,
    }
}

/// Bytes the element-granularity footprints of [`inter_tb_by_element_footprints`] may take.
pub const ELEMENT_FOOTPRINT_BUDGET: u64 = 256 << 20;

/// Whether one load alone reads `p` and its TBs read apart ([`tbs_read_apart`]): [`inter_tb`]
/// asks before its witness walks (srad_update's paper launch spent a fifth of its analysis
/// walking five such parameters again at elements, its small launch a quarter on witnesses).
fn apart_by_address(a: &Analysis, launch: &BoundLaunch, p: u32, eb: u64) -> bool {
    let skip = loads_not_reading(a, p);
    let mut reading = (0..skip.len()).filter(|&i| !skip[i]);
    match (reading.next(), reading.next()) {
        (Some(i), None) => tbs_read_apart(a, &Ranges::new(a, launch), i, eb),
        _ => false,
    }
}

/// Per load, whether it is left out of `p`'s element question: it does not read `p`'s
/// buffer, is unresolved or does not count.
fn loads_not_reading(a: &Analysis, p: u32) -> Vec<bool> {
    (0..a.model.loads.len())
        .map(|i| {
            let reads = a
                .footprints
                .load_ranges
                .get(i)
                .is_some_and(|v| v.iter().any(|r| r.region == Some(p) && r.lo < r.hi));
            !reads || a.unresolved.get(i).is_some_and(Option::is_some) || !a.model.counts(i)
        })
        .collect()
}

/// Whether no two TBs read a common `eb`-byte element through load `i`: a load outside
/// loops whose address is affine in the thread and TB coordinates, exact over the launch
/// ([`lin`]), with coefficients that are whole elements, where any two threads of
/// different TBs access elements that never meet. Sorted by size, every coefficient must
/// step past all that the smaller ones span plus the elements one access covers (a mixed
/// radix): the highest coordinate in which two threads differ then parts their accesses.
/// A thread coordinate with coefficient 0 is left out (its threads are of one TB); a TB
/// coordinate with coefficient 0 along two or more TBs answers `false`. Guards only remove
/// threads, so they are not read.
pub fn tbs_read_apart(a: &Analysis, r: &Ranges, i: usize, eb: u64) -> bool {
    let Some(s) = a.model.loads.get(i) else {
        return false;
    };
    let Some(l) = lin(&s.addr, r).filter(|_| s.loops.is_empty()) else {
        return false;
    };
    let eb = i128::from(eb);
    if eb <= 0 {
        return false;
    }
    // Buffers start on element boundaries: the offset of every access in its element.
    let o = l.c.rem_euclid(eb);
    let covered = ((o + i128::from(s.width) + eb - 1) / eb).max(1);
    let mut terms = Vec::with_capacity(l.terms.len());
    for (atom, c) in &l.terms {
        let (n, tb) = match atom {
            Atom::Tid(d) => (r.block[usize::from(*d).min(2)], false),
            Atom::Ctaid(d) => (r.grid[usize::from(*d).min(2)], true),
            _ => return false,
        };
        if c % eb != 0 {
            return false;
        }
        terms.push((c / eb, n, tb));
    }
    // A coordinate the address does not read: its TBs read alike.
    for (d, &n) in r.grid.iter().enumerate() {
        let read = l.terms.iter().any(|(a, _)| *a == Atom::Ctaid(d as u8));
        if n >= 2 && !read {
            return false;
        }
    }
    affine_apart(&terms, covered)
}

/// Whether accesses of `covered` elements from `sum(c * x)`, over coordinates `x` in
/// `[0, n)` given as `(c, n, tb)` (`tb`: a TB coordinate), never meet between two points
/// that differ in a TB coordinate ([`tbs_read_apart`]).
fn affine_apart(terms: &[(i128, i128, bool)], covered: i128) -> bool {
    let mut steps: Vec<(i128, i128)> = Vec::with_capacity(terms.len());
    for &(c, n, tb) in terms {
        if n < 2 {
            continue;
        }
        if c == 0 {
            if tb {
                return false;
            }
            continue;
        }
        steps.push((c.abs(), n));
    }
    steps.sort_unstable();
    let mut span = 0i128;
    for (c, n) in steps {
        let Some(need) = span.checked_add(covered) else {
            return false;
        };
        if c < need {
            return false;
        }
        let Some(next) = c.checked_mul(n - 1).and_then(|x| x.checked_add(span)) else {
            return false;
        };
        span = next;
    }
    true
}

/// The inter-TB question of parameter `p` answered from footprints at element granularity,
/// for when [`inter_tb`] is left with units of several elements that meet (a column walk
/// whose row pitch is no multiple of a line: neighbouring TBs share lines, never elements).
/// Every counted resolved load that reads `p`'s buffer is evaluated again, at elements, for
/// `p` alone; `None` when that does not fit in [`ELEMENT_FOOTPRINT_BUDGET`].
pub fn inter_tb_by_element_footprints(
    a: &Analysis,
    launch: &BoundLaunch,
    p: u32,
    eb: u64,
) -> Option<bool> {
    use crate::footprint::{compute_within, Granularity};
    let skip = loads_not_reading(a, p);
    let (fp, errors) = compute_within(
        &a.model,
        launch,
        Granularity::Element,
        &skip,
        ELEMENT_FOOTPRINT_BUDGET,
    );
    if !errors.is_empty() {
        return None;
    }
    match fp.params.iter().find(|x| x.param == p) {
        Some(f) if f.unit_bytes == eb => classes_meet(f, eb),
        Some(_) => None,
        None => Some(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`affine_apart`] against every pair of points of small boxes: whenever it answers,
    /// no two points that differ in a TB coordinate have accesses that meet; and it
    /// answers for the row-major layouts it is for.
    #[test]
    fn affine_apart_is_sound_on_every_small_box() {
        let meet = |terms: &[(i128, i128, bool)], covered: i128| -> bool {
            let mut points: Vec<(Vec<i128>, i128)> = vec![(Vec::new(), 0)];
            for &(c, n, _) in terms {
                points = points
                    .into_iter()
                    .flat_map(|(xs, e)| {
                        (0..n).map(move |x| {
                            let mut xs = xs.clone();
                            xs.push(x);
                            (xs, e + c * x)
                        })
                    })
                    .collect();
            }
            points.iter().any(|(xa, ea)| {
                points.iter().any(|(xb, eb)| {
                    let other_tb = terms.iter().enumerate().any(|(k, t)| t.2 && xa[k] != xb[k]);
                    other_tb && (ea - eb).abs() < covered
                })
            })
        };
        let (mut answered, mut cases) = (0, 0);
        let coefs = [-5i128, -2, 0, 1, 2, 3, 4, 6, 8, 12];
        for &c0 in &coefs {
            for &c1 in &coefs {
                for &c2 in &coefs {
                    for (n0, n1, n2) in [(2, 3, 2), (4, 2, 3), (3, 1, 2), (2, 2, 4)] {
                        for covered in 1..=3 {
                            let terms = [(c0, n0, false), (c1, n1, true), (c2, n2, true)];
                            cases += 1;
                            if affine_apart(&terms, covered) {
                                answered += 1;
                                assert!(!meet(&terms, covered), "{terms:?} covering {covered}");
                            }
                        }
                    }
                }
            }
        }
        assert!(answered * 20 > cases, "answered {answered} of {cases}");
        // Row-major tiles: x = 16 bx + tx, y = 16 by + ty, element y * 64 + x.
        let tile = [
            (1, 16, false),
            (16, 4, true),
            (64, 16, false),
            (1024, 4, true),
        ];
        assert!(affine_apart(&tile, 1));
        assert!(
            !affine_apart(&tile, 2),
            "a two-element access meets its neighbour's"
        );
        assert!(
            !affine_apart(&[(1, 16, false), (0, 4, true)], 1),
            "every TB reads alike"
        );
        assert!(affine_apart(
            &[(1, 16, false), (0, 1, true), (16, 4, true)],
            1
        ));
    }
}
