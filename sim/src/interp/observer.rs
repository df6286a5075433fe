//! Memory-access observers: a hook called for every global (and shared) warp access, in
//! execution order per warp, and a ready-made collector of per-TB / per-warp read footprints.
//!
//! Observers are split per TB ([`MemObserver::split`]) and merged back in TB-id order
//! ([`MemObserver::merge`]), so the result is the same whatever the thread count.
//!
//! Grids launched from the device reuse the TB ids of their own grid, so an observer sees
//! them only when it asks to ([`MemObserver::wants_device_grids`]); it is then told which
//! grid runs next ([`MemObserver::begin_grid`]) before that grid's first TB is split off.

use ptx_parser::InstId;

use super::ops::Space;

/// What an access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// `ld`, `ldu`.
    Load,
    /// `st`.
    Store,
    /// `atom`, `red` (reads and writes).
    Atomic,
}

/// One warp memory instruction.
#[derive(Clone, Copy, Debug)]
pub struct MemAccess<'a> {
    /// Linear TB id (`x + y * nx + z * nx * ny`).
    pub tb: u64,
    /// Warp index within the TB.
    pub warp: u32,
    /// The instruction.
    pub inst: InstId,
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// `Global` or `Shared` (generic accesses are resolved first).
    pub space: Space,
    /// Bytes per lane (a `.v4.f32` access is 16).
    pub size: u32,
    /// Lanes that access memory.
    pub mask: u32,
    /// Per-lane addresses (valid for lanes in `mask`).
    pub addrs: &'a [u64; 32],
}

/// Who launched a grid from the device: the launching thread's grid, TB and warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Launcher {
    /// Run-order id of the launching grid ([`GridStart::id`]).
    pub grid: u32,
    /// Linear id of the launching TB within that grid.
    pub tb: u64,
    /// Warp of the launching thread within its TB.
    pub warp: u32,
    /// 1-based PTX line of the `cudaLaunchDeviceV2` call (0 when unknown).
    pub line: u32,
}

/// A grid about to run: the host's launch (id 0), then each grid launched from the device,
/// in the order the interpreter runs them (`interp::device_runtime`).
#[derive(Clone, Copy, Debug)]
pub struct GridStart<'a> {
    /// Run-order id: 0 for the host's launch, then 1, 2, ...
    pub id: u32,
    /// The kernel's name.
    pub kernel: &'a str,
    /// Grid shape.
    pub grid: [u32; 3],
    /// Block shape.
    pub block: [u32; 3],
    /// Nesting depth below the host's launch (0: the host's launch).
    pub depth: u32,
    /// The thread that launched it (`None` for the host's launch).
    pub parent: Option<Launcher>,
    /// Launched into `cudaStreamTailLaunch`.
    pub tail: bool,
}

/// Receives every memory access of a run.
pub trait MemObserver: Send + Sync + Sized {
    /// Whether the grids launched from the device are observed too (default: no, only the
    /// host's launch). An observer that says yes gets [`MemObserver::begin_grid`] before
    /// every grid, the host's included, and must key what it records by grid.
    fn wants_device_grids(&self) -> bool {
        false
    }
    /// The grid whose TBs are split off and merged next (only with
    /// [`MemObserver::wants_device_grids`]).
    fn begin_grid(&mut self, _grid: &GridStart<'_>) {}
    /// Whether shared-memory accesses are wanted too (default: global only).
    fn wants_shared(&self) -> bool {
        false
    }
    /// Whether global accesses are wanted (default: yes). An observer that says no lets a
    /// full-warp global load skip materialising its per-lane addresses.
    fn wants_global(&self) -> bool {
        true
    }
    /// Called once per warp memory instruction, in execution order per warp.
    fn access(&mut self, a: &MemAccess<'_>);
    /// An empty observer for one TB.
    fn split(&self, tb: u64) -> Self;
    /// Takes back the observer of TB `tb` (called in TB-id order).
    fn merge(&mut self, tb: u64, part: Self);
}

/// An observer that ignores everything (compiles to nothing).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl MemObserver for NoObserver {
    #[inline(always)]
    fn wants_global(&self) -> bool {
        false
    }
    #[inline(always)]
    fn access(&mut self, _: &MemAccess<'_>) {}
    fn split(&self, _: u64) -> Self {
        NoObserver
    }
    fn merge(&mut self, _: u64, _: Self) {}
}

/// Collects the distinct global byte addresses each warp reads (loads and atomics), kept
/// sorted and deduplicated per (TB, warp); a TB's set is merged from its warps' on demand, so
/// no address is stored twice.
#[derive(Clone, Debug, Default)]
pub struct FootprintCollector {
    /// `(tb, per-warp sorted byte addresses)`, in TB order.
    tbs: Vec<(u64, Vec<Vec<u64>>)>,
    /// Scratch of the TB being collected: raw addresses per warp.
    cur: Vec<Vec<u64>>,
}

impl FootprintCollector {
    /// An empty collector.
    pub fn new() -> FootprintCollector {
        FootprintCollector::default()
    }

    /// TB ids that read anything, in order.
    pub fn tbs(&self) -> impl Iterator<Item = u64> + '_ {
        self.tbs.iter().map(|(t, _)| *t)
    }

    fn find(&self, tb: u64) -> Option<&Vec<Vec<u64>>> {
        self.tbs
            .binary_search_by_key(&tb, |(t, _)| *t)
            .ok()
            .map(|i| &self.tbs[i].1)
    }

    /// Sorted distinct global byte addresses warp `warp` of TB `tb` read.
    pub fn warp_reads(&self, tb: u64, warp: u32) -> &[u64] {
        self.find(tb)
            .and_then(|w| w.get(warp as usize))
            .map_or(&[], Vec::as_slice)
    }

    /// Number of warps recorded for TB `tb`.
    pub fn num_warps(&self, tb: u64) -> usize {
        self.find(tb).map_or(0, Vec::len)
    }

    /// Sorted distinct global byte addresses TB `tb` read (union of its warps').
    pub fn tb_reads(&self, tb: u64) -> Vec<u64> {
        let Some(ws) = self.find(tb) else {
            return Vec::new();
        };
        let mut out: Vec<u64> = ws.iter().flatten().copied().collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    fn compact(v: &mut Vec<u64>) {
        v.sort_unstable();
        v.dedup();
    }
}

impl MemObserver for FootprintCollector {
    fn access(&mut self, a: &MemAccess<'_>) {
        if a.space != Space::Global || a.kind == AccessKind::Store {
            return;
        }
        let w = a.warp as usize;
        if self.cur.len() <= w {
            self.cur.resize_with(w + 1, Vec::new);
        }
        let v = &mut self.cur[w];
        let mut m = a.mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let base = a.addrs[l];
            v.extend((0..u64::from(a.size)).map(|k| base + k));
        }
        // Keep the scratch bounded: deduplicate before it would have to grow.
        if v.len() > 1 << 20 && v.len() == v.capacity() {
            Self::compact(v);
        }
    }

    fn split(&self, _: u64) -> Self {
        FootprintCollector::default()
    }

    fn merge(&mut self, tb: u64, mut part: Self) {
        for v in &mut part.cur {
            Self::compact(v);
            v.shrink_to_fit();
        }
        if part.cur.iter().any(|v| !v.is_empty()) {
            self.tbs.push((tb, part.cur));
        }
    }
}
