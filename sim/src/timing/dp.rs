//! Kernels that launch kernels in the timing model (issue 43): the grids launched from the
//! device, their pending-launch queue and launch latency, the order CDP2 imposes on them,
//! and when a grid is complete.
//!
//! When a traced parent TB executes `cudaLaunchDeviceV2` ([`super::trace`] collects the
//! launch when it traces the warp, at most a chunk ahead of the warp's issue), the child grid
//! enters the pending-launch queue. It becomes dispatchable, its TBs numbered after every
//! earlier grid's and handed to the TB scheduler ([`super::tb_sched::TbScheduler::add_child_tbs`];
//! the baseline appends them to the dispatch order), once
//! - its launch latency has passed: `b + A * k` for the `k`-th launch (from 1) of the
//!   launching warp, the linear model Tang et al. use (Table 1: `b` = 20,210 and `A` =
//!   1,721 cycles at 1.4 GHz, "x is number of child kernels launched per wavefront", after
//!   Wang and Yalamanchili's measurements on a Kepler K20c); [`DpConfig`] holds them in
//!   nanoseconds, converted at the simulated GPU's clock;
//! - and the ordering CDP2 asks for allows it (`interp::device_runtime`): a launch into
//!   the NULL stream or a stream the parent TB created waits for the previous launch into
//!   that stream of that TB to complete; a tail launch waits for its parent grid's TBs and
//!   all its other children to complete; fire-and-forget launches wait for nothing.
//!
//! A grid is complete when its TBs have finished and all its children are complete; the
//! launch ends when the host's grid is. Each grid's TBs take a share of an SM by their own
//! kernel's occupancy (`super::capacity::CAPACITY`: a kernel with `x` TBs per SM takes `1/x`;
//! the child kernel's registers from the PTX liveness estimate, its block and shared
//! memory; `device_launches.occupancy`), and their own warp slots.
//!
//! The interpreter runs each child grid after its parent grid, depth first
//! (`interp::runner`); here children run as soon as they are ready, beside their parent.
//! Programs that CUDA's rules make race-free compute the same either way, and so launch
//! the same grids: the tests compare the counts with `paver run`'s.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::interp::device_runtime::{ChildLaunch, Stream, MAX_NESTING_DEPTH};
use crate::interp::runner::MAX_SHARED_BYTES;
use crate::interp::{Geometry, Program};
use crate::{Loc, SimError};

/// The device-side launch latency (`dp.*` keys); left out of the configuration's JSON while
/// at its defaults, so runs of ordinary kernels echo what they always did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpConfig {
    /// Fixed latency of a device-side launch, ns (`b`): 20,210 cycles at 1.4 GHz (Tang et
    /// al., POMACS 2018, Table 1, after Wang and Yalamanchili, IISWC 2014).
    #[serde(default = "default_launch_ns")]
    pub device_launch_ns: u32,
    /// Added per earlier launch of the same parent warp, ns (`A`): 1,721 cycles at 1.4 GHz
    /// (the same source).
    #[serde(default = "default_step_ns")]
    pub device_launch_step_ns: u32,
}

fn default_launch_ns() -> u32 {
    14_436
}

fn default_step_ns() -> u32 {
    1_229
}

impl Default for DpConfig {
    fn default() -> Self {
        DpConfig {
            device_launch_ns: default_launch_ns(),
            device_launch_step_ns: default_step_ns(),
        }
    }
}

impl DpConfig {
    /// Whether every field has its default.
    pub fn is_default(&self) -> bool {
        *self == DpConfig::default()
    }

    /// The latency of a warp's `k`-th launch (from 1) in cycles at `clock_mhz`.
    pub fn latency_cycles(&self, k: u64, clock_mhz: u32) -> u64 {
        let ns = u64::from(self.device_launch_ns)
            + u64::from(self.device_launch_step_ns) * k.saturating_sub(1);
        (ns * u64::from(clock_mhz)).div_ceil(1000)
    }
}

/// One child grid's timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridTiming {
    /// The child's kernel.
    pub kernel: String,
    /// The launching TB (engine numbering: the host's TBs first, then each child grid's in
    /// the order they became dispatchable).
    pub parent_tb: u32,
    /// Nesting depth below the host's launch (1: launched by the host's grid).
    pub depth: u32,
    /// TBs.
    pub tbs: u32,
    /// Id of its TB 0 (engine numbering).
    pub first_tb: u32,
    /// Cycle the parent executed the launch.
    pub launched: u64,
    /// Cycle its TBs became dispatchable (latency and stream order).
    pub dispatchable: u64,
    /// Cycle it completed (its TBs and all its children).
    pub completed: u64,
}

/// Device-side launches of a run (absent from the stats of a kernel that launches none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceLaunchStats {
    /// Child grids launched (and run), at every depth.
    pub child_grids: u64,
    /// Their TBs (included in the stats' `tbs`).
    pub child_tbs: u64,
    /// TBs of the host's grid.
    pub host_tbs: u64,
    /// Deepest nesting below the host's launch.
    pub max_depth: u32,
    /// Cycle the host grid's last TB finished (its children may run on).
    pub host_tbs_done: u64,
    /// Sum over child grids of launch-to-dispatchable cycles (latency and stream waits).
    pub pending_cycles: u64,
    /// Sum over child grids of dispatchable-to-complete cycles.
    pub run_cycles: u64,
    /// How the TB policy placed child TBs (LASER's decisions and monitor hit rates; absent
    /// for the baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<super::tb_sched::laser::PlacementStats>,
    /// Per child grid, in launch order.
    pub grids: Vec<GridTiming>,
    /// The child kernels' own occupancies, per kernel, block shape and dynamic shared
    /// memory (sorted by them); their TBs share an SM with the host's by these.
    #[serde(default)]
    pub occupancy: Vec<ChildOccupancy>,
}

/// A child kernel's occupancy at one launch shape (`device_launches.occupancy`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildOccupancy {
    /// The child's kernel.
    pub kernel: String,
    /// Its block, in threads.
    pub block: [u32; 3],
    /// Dynamic shared memory per TB of those launches.
    pub dynamic_shared_bytes: u64,
    /// Resident TBs per SM by its own resources ([`gpu::tbs_per_sm`]; registers from the
    /// PTX liveness estimate).
    pub occupancy: gpu::Occupancy,
}

/// What a grid waits for before it can be dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gate {
    /// Only its latency.
    Latency,
    /// The grid before it in its stream to complete.
    After(usize),
    /// Its parent's TBs and other children (a tail launch).
    Tail,
}

struct Grid {
    /// Function index of its kernel (the host's: `u32::MAX`).
    func: u32,
    name: String,
    parent: Option<(usize, u32)>,
    depth: u32,
    geom: Geometry,
    params: Vec<u8>,
    ntbs: u32,
    first_tb: u32,
    tbs_done: u32,
    /// Non-tail children not complete.
    open_children: u32,
    /// Tail launches: held until the TBs and the other children are done.
    tails: Vec<usize>,
    open_tails: u32,
    tails_released: bool,
    is_tail: bool,
    gate: Gate,
    launched: u64,
    ready_at: u64,
    dispatchable: Option<u64>,
    completed: Option<u64>,
    /// Where the parent launched it.
    loc: Option<Box<Loc>>,
}

impl Grid {
    /// A grid of `ntbs` TBs launched at `launched`, behind `gate`, nothing of it run yet
    /// (depth 0, ready at 0, not dispatchable, no location: the caller sets what differs).
    #[allow(clippy::too_many_arguments)]
    fn new(
        func: u32,
        name: String,
        parent: Option<(usize, u32)>,
        geom: Geometry,
        params: Vec<u8>,
        ntbs: u32,
        gate: Gate,
        launched: u64,
    ) -> Grid {
        Grid {
            func,
            name,
            parent,
            depth: 0,
            geom,
            params,
            ntbs,
            first_tb: 0,
            tbs_done: 0,
            open_children: 0,
            tails: Vec::new(),
            open_tails: 0,
            tails_released: false,
            is_tail: gate == Gate::Tail,
            gate,
            launched,
            ready_at: 0,
            dispatchable: None,
            completed: None,
            loc: None,
        }
    }
}

/// The grids of one launch: the host's (grid 0) and those launched from the device.
pub(crate) struct Grids<'p> {
    programs: &'p [Option<Program>],
    cfg: DpConfig,
    clock_mhz: u32,
    grids: Vec<Grid>,
    /// Grids launched and not dispatchable yet, in launch order.
    pending: Vec<usize>,
    /// (first TB, grid) of the dispatchable grids, in TB order.
    by_tb: Vec<(u32, usize)>,
    /// The last grid launched into each (parent TB, stream).
    last_in_stream: BTreeMap<(u32, u64), usize>,
    /// Launches per parent (TB, warp) so far.
    per_warp: BTreeMap<(u32, u32), u64>,
    next_tb: u32,
    host_tbs_done: u64,
    /// A launch or a completion since [`Grids::take_changed`].
    changed: bool,
}

/// A grid that became dispatchable.
pub(crate) struct Ready<'a> {
    /// Its kernel's function index.
    pub func: u32,
    /// Its TB ids.
    pub tbs: std::ops::Range<u32>,
    /// The launching TB.
    pub parent_tb: u32,
    /// Its parameter block and shape.
    pub params: &'a [u8],
    /// Its shape.
    pub geom: Geometry,
    /// Where the parent launched it.
    pub loc: Option<&'a Loc>,
}

impl<'p> Grids<'p> {
    /// The host's grid of `ntbs` TBs; `programs` are the module's kernels decoded as
    /// children (`Program::child_programs`).
    /// `block` is the host launch's block shape.
    pub fn new(
        programs: &'p [Option<Program>],
        ntbs: u32,
        block: [u32; 3],
        cfg: &DpConfig,
        clock_mhz: u32,
    ) -> Self {
        Grids {
            programs,
            cfg: cfg.clone(),
            clock_mhz,
            grids: vec![Grid {
                dispatchable: Some(0),
                ..Grid::new(
                    u32::MAX,
                    String::new(),
                    None,
                    Geometry {
                        grid: [1; 3],
                        block,
                        shared_bytes: 0,
                        dynamic_shared: 0,
                    },
                    Vec::new(),
                    ntbs,
                    Gate::Latency,
                    0,
                )
            }],
            pending: Vec::new(),
            by_tb: vec![(0, 0)],
            last_in_stream: BTreeMap::new(),
            per_warp: BTreeMap::new(),
            next_tb: ntbs,
            host_tbs_done: 0,
            changed: false,
        }
    }

    /// TB ids handed out so far (every dispatchable grid's TBs).
    pub fn known_tbs(&self) -> u32 {
        self.next_tb
    }

    /// Whether the host's grid, and with it every grid, is complete.
    pub fn all_done(&self) -> bool {
        self.grids[0].completed.is_some()
    }

    /// Whether grids wait in the pending-launch queue.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether a grid was launched or completed since the last call.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn grid_of(&self, tb: u32) -> usize {
        let i = self.by_tb.partition_point(|&(f, _)| f <= tb).max(1) - 1;
        self.by_tb[i].1
    }

    /// Records the launch `l` that TB `tb` executed at `now`.
    pub fn launch(&mut self, tb: u32, l: ChildLaunch, now: u64) -> Result<(), SimError> {
        let parent = self.grid_of(tb);
        let depth = self.grids[parent].depth + 1;
        let name = self
            .programs
            .get(l.kernel as usize)
            .and_then(Option::as_ref)
            .map_or_else(|| "?".to_string(), |p| p.kernel.clone());
        let at = l.loc.clone();
        let fail = |why: String| SimError::DeviceLaunch {
            why,
            loc: at.clone(),
        };
        if depth > MAX_NESTING_DEPTH {
            return Err(fail(format!(
                "launching `{name}` would nest grids {depth} deep, beyond the limit of \
                 {MAX_NESTING_DEPTH} (the hardware's maximum nesting depth)"
            )));
        }
        let Some(prog) = self
            .programs
            .get(l.kernel as usize)
            .and_then(Option::as_ref)
        else {
            return Err(fail(format!("`{name}` is not a kernel with a body")));
        };
        if !prog.layout.global_images.is_empty() {
            return Err(fail(format!(
                "child kernel `{name}` uses module-scope .global/.const variables, which \
                 device-side launches do not support yet"
            )));
        }
        let geom = Geometry::child(prog, l.grid, l.block, l.dynamic_shared)
            .map_err(|e| fail(format!("child kernel `{name}`: {e}")))?;
        if geom.shared_bytes as u64 > MAX_SHARED_BYTES {
            return Err(fail(format!(
                "child kernel `{name}` needs {} bytes of shared memory per TB, more than any \
                 GPU offers ({MAX_SHARED_BYTES})",
                geom.shared_bytes
            )));
        }
        let ntbs64: u64 = l.grid.iter().map(|&v| u64::from(v)).product();
        let total = u64::from(self.next_tb) + ntbs64;
        let ntbs = u32::try_from(ntbs64)
            .ok()
            .filter(|_| total <= u64::from(u32::MAX))
            .ok_or(SimError::TooLarge {
                what: "TB count",
                value: total,
            })?;
        let [bx, by, _] = self.grids[parent].geom.block;
        let [tx, ty, tz] = l.loc.thread;
        let warp = (tx + bx * (ty + by * tz)) / 32;
        let k = self.per_warp.entry((tb, warp)).or_default();
        *k += 1;
        let ready_at = now + self.cfg.latency_cycles(*k, self.clock_mhz);
        let id = self.grids.len();
        let gate = match l.stream {
            Stream::TailLaunch => Gate::Tail,
            Stream::FireAndForget => Gate::Latency,
            Stream::Null | Stream::Created(_) => {
                let h = match l.stream {
                    Stream::Created(h) => h,
                    _ => 0,
                };
                match self.last_in_stream.insert((tb, h), id) {
                    Some(prev) if self.grids[prev].completed.is_none() => Gate::After(prev),
                    _ => Gate::Latency,
                }
            }
        };
        let is_tail = gate == Gate::Tail;
        self.changed = true;
        let loc = Some(l.loc);
        self.grids.push(Grid {
            depth,
            ready_at,
            loc,
            ..Grid::new(
                l.kernel,
                name,
                Some((parent, tb)),
                geom,
                l.params,
                ntbs,
                gate,
                now,
            )
        });
        let p = &mut self.grids[parent];
        if is_tail {
            p.open_tails += 1;
            p.tails.push(id);
        } else {
            p.open_children += 1;
            self.pending.push(id);
        }
        Ok(())
    }

    /// Whether pending grid `g` may be dispatched at `now`.
    fn ready(&self, g: usize, now: u64) -> bool {
        let x = &self.grids[g];
        x.ready_at <= now
            && match x.gate {
                Gate::After(p) => self.grids[p].completed.is_some(),
                Gate::Latency | Gate::Tail => true,
            }
    }

    /// The earliest time a pending grid whose order allows it becomes ready (`u64::MAX`:
    /// none; the others wait for a completion, which a TB's end brings).
    pub fn next_ready(&self) -> u64 {
        self.pending
            .iter()
            .map(|&g| &self.grids[g])
            .filter(|x| match x.gate {
                Gate::After(p) => self.grids[p].completed.is_some(),
                _ => true,
            })
            .map(|x| x.ready_at)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Makes the pending grids that are ready at `now` dispatchable, in launch order,
    /// calling `each` with each one.
    pub fn release(
        &mut self,
        now: u64,
        each: &mut dyn FnMut(Ready<'_>) -> Result<(), SimError>,
    ) -> Result<(), SimError> {
        let mut i = 0;
        while i < self.pending.len() {
            let g = self.pending[i];
            if !self.ready(g, now) {
                i += 1;
                continue;
            }
            self.pending.remove(i);
            let first = self.next_tb;
            let x = &mut self.grids[g];
            x.first_tb = first;
            x.dispatchable = Some(now);
            self.next_tb += x.ntbs;
            self.by_tb.push((first, g));
            let x = &self.grids[g];
            each(Ready {
                func: x.func,
                tbs: first..first + x.ntbs,
                parent_tb: x.parent.map_or(0, |p| p.1),
                params: &x.params,
                geom: x.geom,
                loc: x.loc.as_deref(),
            })?;
            // A grid of no TBs cannot exist (`cudaGetParameterBufferV2` refuses it).
        }
        Ok(())
    }

    /// TB `tb` finished at `now`.
    pub fn tb_done(&mut self, tb: u32, now: u64) {
        let g = self.grid_of(tb);
        self.grids[g].tbs_done += 1;
        if g == 0 && self.grids[0].tbs_done == self.grids[0].ntbs {
            self.host_tbs_done = now;
        }
        self.settle(g, now);
    }

    /// Completes grid `g` and its ancestors as far as their work allows.
    fn settle(&mut self, mut g: usize, now: u64) {
        loop {
            let x = &mut self.grids[g];
            if x.completed.is_some() || x.tbs_done < x.ntbs || x.open_children > 0 {
                return;
            }
            if !x.tails_released {
                x.tails_released = true;
                let tails = std::mem::take(&mut x.tails);
                self.pending.extend(tails);
                self.pending.sort_unstable();
            }
            let x = &mut self.grids[g];
            if x.open_tails > 0 {
                return;
            }
            x.completed = Some(now);
            self.changed = true;
            let is_tail = x.is_tail;
            let Some((p, _)) = x.parent else {
                return;
            };
            let px = &mut self.grids[p];
            if is_tail {
                px.open_tails -= 1;
            } else {
                px.open_children -= 1;
            }
            g = p;
        }
    }

    /// The statistics of the run (`None` when no grid was launched from the device).
    pub fn stats(&self) -> Option<DeviceLaunchStats> {
        if self.grids.len() == 1 {
            return None;
        }
        let mut s = DeviceLaunchStats {
            host_tbs: u64::from(self.grids[0].ntbs),
            host_tbs_done: self.host_tbs_done,
            ..DeviceLaunchStats::default()
        };
        for x in &self.grids[1..] {
            let disp = x.dispatchable.unwrap_or(x.launched);
            let done = x.completed.unwrap_or(disp);
            s.child_grids += 1;
            s.child_tbs += u64::from(x.ntbs);
            s.max_depth = s.max_depth.max(x.depth);
            s.pending_cycles += disp - x.launched;
            s.run_cycles += done - disp;
            s.grids.push(GridTiming {
                kernel: x.name.clone(),
                parent_tb: x.parent.map_or(0, |p| p.1),
                depth: x.depth,
                tbs: x.ntbs,
                first_tb: x.first_tb,
                launched: x.launched,
                dispatchable: disp,
                completed: done,
            });
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The linear launch-latency model at 1.4 GHz gives back the paper's cycles.
    #[test]
    fn latency_model_in_cycles() {
        let c = DpConfig::default();
        assert_eq!(c.latency_cycles(1, 1400), 20_211); // 14,436 ns: 20,210.4 cycles
        assert_eq!(c.latency_cycles(2, 1400) - c.latency_cycles(1, 1400), 1_720);
    }
}
