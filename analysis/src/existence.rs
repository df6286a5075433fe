//! The two existence questions of a Locality Descriptor, per data structure: do two
//! different TBs read a common address (inter-TB), does one thread read an address twice
//! (intra-thread); their answers ([`Existence`]), the data structure each load reads
//! ([`load_params`]), and the answers by enumerating every thread and iteration of the
//! launch ([`existence_by_enumeration`], up to [`ENUM_BUDGET`] points).
//!
//! Below both the descriptors and the z3 path (`smt`), which ask the same questions;
//! `descriptor` re-exports the public items at their public paths.

use launch::BoundLaunch;

use crate::expr::Expr;
use crate::footprint::{FxMap, Granularity, PARAM_SHIFT};
use crate::Analysis;

/// Largest number of (thread, load, iteration) points the enumeration path visits.
pub const ENUM_BUDGET: u64 = 1 << 24;

/// Answers to the existence questions for one parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Existence {
    /// Two different TBs read a common address.
    pub inter_tb: bool,
    /// One thread reads an address twice.
    pub intra_thread: bool,
}

pub(crate) fn elem_bytes(launch: &BoundLaunch, p: u32) -> Option<u64> {
    launch.region_elem_bytes(p as usize)
}

/// The data structure each load reads: from the bytes its evaluated addresses fall in
/// ([`crate::footprint::Footprints::load_ranges`], the first structure holding any), else
/// from the address's constant base for a load the footprints did not evaluate.
pub fn load_params(a: &Analysis) -> Vec<Option<u32>> {
    fn base(e: &Expr) -> Option<i128> {
        match e {
            Expr::Const(c) if *c >= 1 << 36 => Some(*c),
            Expr::Add(a, b) => base(a).or_else(|| base(b)),
            Expr::Sub(a, _) => base(a),
            _ => None,
        }
    }
    a.model
        .loads
        .iter()
        .enumerate()
        .map(|(i, l)| match a.footprints.load_ranges.get(i) {
            Some(v) if !v.is_empty() => v.iter().find_map(|r| r.region),
            _ if a.unresolved.get(i).is_some_and(Option::is_none) => None,
            _ => base(&l.addr).map(|c| ((c >> 36) - 1) as u32),
        })
        .collect()
}

/// The existence answers by enumerating every thread and iteration (`None` past
/// [`ENUM_BUDGET`] points), per parameter index.
pub fn existence_by_enumeration(a: &Analysis, launch: &BoundLaunch) -> Option<Vec<Existence>> {
    let ranges = crate::dependence::Ranges::new(a, launch);
    existence_of(a, launch, &ranges, Tables::Dense, ENUM_BUDGET, |_| true)
}

/// [`existence_by_enumeration`] answered by sorting every TB's events, without the dense
/// per-unit tables: the reference the tests compare the tables with.
#[doc(hidden)]
pub fn existence_by_sorting(a: &Analysis, launch: &BoundLaunch) -> Option<Vec<Existence>> {
    let ranges = crate::dependence::Ranges::new(a, launch);
    existence_of(a, launch, &ranges, Tables::Sorted, ENUM_BUDGET, |_| true)
}

/// How [`existence_of`] finds repeated units.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tables {
    /// [`DenseUnits`] where they apply, else sorting.
    Dense,
    /// Sorting every TB's events.
    Sorted,
}

/// [`existence_by_enumeration`] of the data structures `wanted` selects: only their loads are
/// walked (the answers of the others stay false), so a launch where one parameter is left
/// open walks that parameter's loads alone.
pub(crate) fn existence_of(
    a: &Analysis,
    launch: &BoundLaunch,
    ranges: &crate::dependence::Ranges,
    tables: Tables,
    budget: u64,
    wanted: impl Fn(u32) -> bool,
) -> Option<Vec<Existence>> {
    let n = launch.region_ids().last().map_or(0, |m| m + 1);
    let mut out = vec![Existence::default(); n];
    // element unit -> first TB reading it.
    let mut owner: FxMap<u64, u64> = FxMap::default();
    let params = load_params(a);
    let plan = crate::reuse::WalkPlan::of_loads(a, |i| {
        params.get(i).copied().flatten().is_some_and(&wanted)
    });
    let mut w = crate::reuse::Walker::new(a, launch, Granularity::Element, &plan);
    w.per_thread = true;
    w.limit = budget;
    // A walk visits each point of a load once, and the key of a point is its iterations
    // and its load's instruction, so when no two loads share an instruction no event
    // repeats and the sort that removed repeats (most of a small launch's enumeration) is
    // not needed.
    let mut insts: Vec<usize> = a.model.loads.iter().map(|l| l.inst.index()).collect();
    insts.sort_unstable();
    let unique_keys = insts.windows(2).all(|x| x[0] != x[1]);
    // A walk past the budget decides nothing: it is counted first (a fraction of the walk:
    // innermost loops are not visited) and not started, unless the launch's bound on its
    // points is within the budget.
    let bounded =
        crate::dependence::enumeration_points(a, launch, ranges).is_some_and(|x| x <= budget);
    let mut total = 0u64;
    for tb in (0..launch.num_tbs()).filter(|_| !bounded) {
        total = total.saturating_add(w.tb_points(tb).ok()?);
        if total > budget {
            return None;
        }
    }
    let mut dense = if unique_keys && tables == Tables::Dense {
        let widest = a.model.loads.iter().map(|l| u64::from(l.width)).max();
        DenseUnits::new(launch, n, widest.unwrap_or(1), &wanted)
    } else {
        None
    };
    // Buffers reused from TB to TB.
    let (mut ev, mut tu, mut units): (Vec<crate::reuse::Event>, _, _) =
        (Vec::new(), Vec::new(), Vec::new());
    for tb in 0..launch.num_tbs() {
        if let Some(d) = dense.as_mut() {
            units.clear();
            w.tb_events_into(tb, &mut units).ok()?;
            if w.points > budget || w.truncated {
                return None;
            }
            d.visit(tb, &units, &mut out);
            continue;
        }
        ev.clear();
        w.tb_events_into(tb, &mut ev).ok()?;
        if w.points > budget || w.truncated {
            return None;
        }
        if !unique_keys {
            ev.sort_unstable();
            ev.dedup();
        }
        // (thread, unit) pairs seen twice at different keys: intra-thread reuse.
        tu.clear();
        tu.extend(ev.iter().map(|e| (e.1, e.2)));
        tu.sort_unstable();
        for x in tu.windows(2) {
            if x[0] == x[1] {
                let p = (x[0].1 >> PARAM_SHIFT) as usize;
                if p < n {
                    out[p].intra_thread = true;
                }
            }
        }
        for &(_, _, u) in &ev {
            let p = (u >> PARAM_SHIFT) as usize;
            let first = *owner.entry(u).or_insert(tb);
            if first != tb && p < n {
                out[p].inter_tb = true;
            }
        }
    }
    Some(out)
}

/// The enumeration's two questions answered from dense per-unit tables instead of sorting
/// a TB's (thread, unit) pairs and hashing every unit's first TB (most of a small launch's
/// enumeration): the units of every data structure asked about are numbered consecutively,
/// and each keeps the last thread that read it (numbered across the launch) and the first
/// TB. Valid only where no two events of a walk repeat (no two loads share an
/// instruction): a unit read again by the same thread is then read at another point.
struct DenseUnits {
    /// Per data structure: the index of its unit 0 and its number of units (`None`: not
    /// asked about).
    base: Vec<Option<(usize, u64)>>,
    /// Per unit: the launch-wide number (1-based) of the last thread that read it.
    thread: Vec<u32>,
    /// Per unit: 1 + the first TB that read it, 0 when none has.
    owner: Vec<u32>,
    /// Threads per TB.
    tpb: u64,
}

impl DenseUnits {
    /// Most units the tables hold (two 4-byte words each: 32 MiB).
    const MAX_UNITS: u64 = 1 << 22;

    /// The tables for the data structures of ids `< n` that `wanted` selects, or `None`
    /// when one has no known size, the units pass [`Self::MAX_UNITS`] or the launch's
    /// threads do not fit the tables' words.
    fn new(
        launch: &BoundLaunch,
        n: usize,
        widest: u64,
        wanted: &impl Fn(u32) -> bool,
    ) -> Option<Self> {
        let tpb = launch.block.count();
        if launch.num_tbs().checked_mul(tpb)? >= u64::from(u32::MAX) {
            return None;
        }
        let mut base = vec![None; n];
        let mut total = 0u64;
        for (p, b) in base.iter_mut().enumerate() {
            if !wanted(p as u32) {
                continue;
            }
            let bytes = match launch.region_bytes(p) {
                Some(Some(bytes)) => bytes,
                // A buffer of unknown size (a synthetic pointer).
                Some(None) => return None,
                None => continue,
            };
            let ub = crate::footprint::unit_bytes(Granularity::Element, launch, p as u32, 1);
            // An access starting in the buffer's last bytes reaches past its end by at most
            // the widest load.
            let units = (bytes + widest).div_ceil(ub);
            *b = Some((usize::try_from(total).ok()?, units));
            total = total.checked_add(units)?;
            if total > Self::MAX_UNITS {
                return None;
            }
        }
        let len = usize::try_from(total).ok()?;
        Some(DenseUnits {
            base,
            thread: vec![0; len],
            owner: vec![0; len],
            tpb,
        })
    }

    /// Records TB `tb`'s (thread within the TB, unit) pairs into `out`'s flags.
    fn visit(&mut self, tb: u64, units: &[(u32, u64)], out: &mut [Existence]) {
        let first = tb * self.tpb + 1;
        for &(t, u) in units {
            let p = (u >> PARAM_SHIFT) as usize;
            let Some(Some((b, units))) = self.base.get(p).copied() else {
                continue;
            };
            let off = u & ((1 << PARAM_SHIFT) - 1);
            debug_assert!(off < units, "a unit past its buffer and the widest load");
            let i = b + off.min(units - 1) as usize;
            // Both fit: `new` checked the launch's threads against `u32::MAX`.
            let seq = (first + u64::from(t)) as u32;
            if self.thread[i] == seq {
                out[p].intra_thread = true;
            }
            self.thread[i] = seq;
            match self.owner[i] {
                0 => self.owner[i] = tb as u32 + 1,
                o if o != tb as u32 + 1 => out[p].inter_tb = true,
                _ => {}
            }
        }
    }
}

/// Every pair `(i, j)`, `i <= j`, of `loads`.
pub(crate) fn all_pairs(loads: &[usize]) -> Vec<(usize, usize)> {
    loads
        .iter()
        .enumerate()
        .flat_map(|(x, &i)| loads[x..].iter().map(move |&j| (i, j)))
        .collect()
}

/// Whether a block of each data structure is read twice at the granularity `gran` (the
/// L1's block: a 32 B sector or a line), per region id: by two warps (of one TB or of
/// two), or by one warp at two points (two iterations, or two loads of one iteration). The
/// threads of one warp reading a block at one point are one coalesced access, not a
/// reuse. This is the question a cache bypass asks (`--cache-policy ld`): an L1 fill that
/// no later access hits is wasted only when no block is read twice, whereas the
/// descriptor's NO-REUSE is about elements (a thread walking a row reads each element once
/// and each line 32 times).
///
/// Answered by walking whole TBs in order while the points stay within
/// [`BLOCK_REUSE_BUDGET`] (a reuse is a fact about the walked TBs, and an affine kernel's
/// TBs repeat one pattern). `None` for every structure when not even the first TB can be
/// walked (more points than the budget, an evaluation error), and for a structure an unresolved
/// load may read; structures no walked load reads stay `Some(false)`.
pub fn block_reuse(a: &Analysis, launch: &BoundLaunch, gran: Granularity) -> Vec<Option<bool>> {
    let n = launch.region_ids().last().map_or(0, |m| m + 1);
    let params = load_params(a);
    let unresolved = |i: usize| a.unresolved.get(i).is_some_and(Option::is_some);
    let plan = crate::reuse::WalkPlan::of_loads(a, |i| {
        params.get(i).copied().flatten().is_some() && !unresolved(i)
    });
    let mut w = crate::reuse::Walker::new(a, launch, gran, &plan);
    w.limit = BLOCK_REUSE_BUDGET;
    let mut out = vec![Some(false); n];
    // A structure an unresolved load may read is undecided (every one, for a load of
    // unknown target).
    let mut undecided = vec![false; n];
    for i in (0..a.model.loads.len()).filter(|&i| unresolved(i)) {
        match params.get(i).copied().flatten() {
            Some(p) => {
                if let Some(u) = undecided.get_mut(p as usize) {
                    *u = true;
                }
            }
            None => undecided.iter_mut().for_each(|u| *u = true),
        }
    }
    let mut owner: FxMap<u64, u64> = FxMap::default();
    let mut ev = HashedEvents::default();
    for tb in 0..launch.num_tbs() {
        ev.0.clear();
        if w.tb_events_into(tb, &mut ev).is_err() || w.truncated {
            if tb == 0 {
                return vec![None; n];
            }
            break;
        }
        // (unit, warp, point): a unit on two rows is read twice.
        ev.0.sort_unstable();
        ev.0.dedup();
        for x in ev.0.windows(2) {
            if x[0].0 == x[1].0 {
                if let Some(o) = out.get_mut((x[0].0 >> PARAM_SHIFT) as usize) {
                    *o = Some(true);
                }
            }
        }
        for &(u, _, _) in &ev.0 {
            if *owner.entry(u).or_insert(tb) != tb {
                if let Some(o) = out.get_mut((u >> PARAM_SHIFT) as usize) {
                    *o = Some(true);
                }
            }
        }
    }
    for (o, u) in out.iter_mut().zip(undecided) {
        if u {
            *o = None;
        }
    }
    out
}

/// Most points [`block_reuse`] walks, over all TBs (a TB's events are sorted in memory:
/// 24 B each).
pub const BLOCK_REUSE_BUDGET: u64 = 1 << 22;

/// Events as (unit, warp, a 64-bit hash of the point's key): a key is up to a few words
/// per enclosing loop, and only its identity matters here.
#[derive(Default)]
struct HashedEvents(Vec<(u64, u32, u64)>);

impl crate::reuse::EventSink for HashedEvents {
    const KEYED: bool = true;
    fn event(&mut self, prefix: &[u64], inst: u64, warp: u32, unit: u64) {
        // splitmix64's finaliser over the words.
        let mix = |mut z: u64| {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut h = mix(inst ^ 0x9e37_79b9_7f4a_7c15);
        for &x in prefix {
            h = mix(h.rotate_left(23) ^ x);
        }
        self.0.push((unit, warp, h));
    }
}
