//! The interpreter observer behind `paver analyze --dynamic`'s `dynamic_parallelism`: every
//! grid of the run (the host's and those launched from the device), who launched it, and
//! each warp's global accesses as data units, handed to `analysis::reuse::dp` for Eq. 1-3.
//!
//! One *access* is one warp instruction (`ld`, `st`, `atom`, `red` on global memory: the
//! paper's traces are every memory access after coalescing) touching one data unit: its
//! active lanes' bytes mapped to units as the static analysis maps them (the parameter's
//! buffer in the top bits, the offset over the unit size below), each unit once per
//! instruction.

use analysis::footprint::{FxMap, NO_BUFFER, PARAM_SHIFT};
use analysis::reuse::dp::{Counts, GridTrace, Parent};
use launch::BoundLaunch;

/// Collects [`GridTrace`]s; wraps the observer `H` that sees the host's grid only.
pub struct WithGrids<'a, H> {
    /// The host grid's observer.
    pub host: H,
    bound: &'a BoundLaunch,
    /// Unit size in bytes per buffer region.
    units: &'a [u64],
    /// Unit size for addresses outside every buffer.
    other_unit: u64,
    /// The grids so far, in run order.
    pub grids: Vec<GridTrace>,
    /// Run-order id of the grid running.
    grid: u32,
    /// The TB being run: per warp, access count per unit.
    cur: Vec<FxMap<u64, u64>>,
    /// One instruction's units.
    scratch: Vec<u64>,
}

impl<'a, H> WithGrids<'a, H> {
    /// A collector for a run of `bound` with unit sizes `units` (per region) around `host`.
    pub fn new(host: H, bound: &'a BoundLaunch, units: &'a [u64], other_unit: u64) -> Self {
        WithGrids {
            host,
            bound,
            units,
            other_unit: other_unit.max(1),
            grids: Vec::new(),
            grid: 0,
            cur: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn part(&self, host: H) -> Self {
        WithGrids {
            host,
            bound: self.bound,
            units: self.units,
            other_unit: self.other_unit,
            grids: Vec::new(),
            grid: self.grid,
            cur: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl<H: sim::MemObserver> sim::MemObserver for WithGrids<'_, H> {
    fn wants_device_grids(&self) -> bool {
        true
    }

    fn wants_shared(&self) -> bool {
        self.host.wants_shared()
    }

    fn begin_grid(&mut self, g: &sim::GridStart<'_>) {
        self.grid = g.id;
        let ntbs = g.grid.iter().map(|&v| v as usize).product::<usize>();
        self.grids.push(GridTrace {
            kernel: g.kernel.to_string(),
            grid: g.grid,
            block: g.block,
            depth: g.depth,
            parent: g.parent.map(|p| Parent {
                grid: p.grid,
                tb: p.tb,
                warp: p.warp,
                line: p.line,
            }),
            tail: g.tail,
            tbs: vec![Vec::new(); ntbs],
        });
    }

    fn access(&mut self, a: &sim::MemAccess<'_>) {
        if self.grid == 0 {
            self.host.access(a);
        }
        if a.space != sim::Space::Global {
            return;
        }
        self.scratch.clear();
        let size = u64::from(a.size.max(1));
        let mut m = a.mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let at = a.addrs[lane];
            let (key, off, ub) = match self.bound.buffer_at(at) {
                Some((p, off)) => (
                    (p as u64) << PARAM_SHIFT,
                    off,
                    self.units.get(p).copied().unwrap_or(1).max(1),
                ),
                // Outside every buffer: units of the whole address space, apart.
                None => (u64::from(NO_BUFFER) << PARAM_SHIFT, at, self.other_unit),
            };
            let mask = (1u64 << PARAM_SHIFT) - 1;
            for u in off / ub..=(off + size - 1) / ub {
                self.scratch.push(key | (u & mask));
            }
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        let w = a.warp as usize;
        if self.cur.len() <= w {
            self.cur.resize_with(w + 1, FxMap::default);
        }
        for &u in &self.scratch {
            *self.cur[w].entry(u).or_default() += 1;
        }
    }

    fn split(&self, tb: u64) -> Self {
        self.part(self.host.split(tb))
    }

    fn merge(&mut self, tb: u64, part: Self) {
        if self.grid == 0 {
            self.host.merge(tb, part.host);
        }
        let Some(g) = self.grids.last_mut() else {
            return;
        };
        // Every warp of the TB, those that touched no global memory included (empty).
        let threads = g.block.iter().map(|&v| v as usize).product::<usize>();
        let mut warps: Vec<Counts> = part
            .cur
            .into_iter()
            .map(|m| {
                let mut c: Counts = m.into_iter().collect();
                c.sort_unstable();
                c
            })
            .collect();
        warps.resize(warps.len().max(threads.div_ceil(32)), Counts::new());
        if let Some(slot) = g.tbs.get_mut(tb as usize) {
            *slot = warps;
        }
    }
}
