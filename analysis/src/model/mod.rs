//! The kernel model: what symbolic execution (`addr`) finds in one kernel for one launch,
//! each global load's address, guard and loop nest ([`LoadSite`]) and each loop's exit
//! conditions ([`LoopInfo`]), together with the trip counts of its loops, evaluated per
//! thread from those conditions (`trips`, a [`TripPlan`] per loop kept in the model).
//!
//! It sits below both the symbolic execution that builds it and the induction-variable
//! analysis; `addr` and `ivs` re-export its items at their public paths.

use ptx_parser::InstId;

use crate::expr::*;
use crate::loops::LoopId;

mod trips;

pub use trips::*;

/// A global load as the analysis sees it.
#[derive(Clone, Debug)]
pub struct LoadSite {
    /// The instruction.
    pub inst: InstId,
    /// PTX source line.
    pub line: u32,
    /// Bytes read by one thread (vector loads included).
    pub width: u32,
    /// Byte address.
    pub addr: E,
    /// Conjunction of conditions under which the load runs (known, or holding an unknown
    /// other than loaded data and floating point: the load is then unresolved).
    pub cond: Vec<E>,
    /// Guard literals on loaded data or floating-point values, left out of `cond`: the
    /// load *may* run; its footprint assumes they hold (a may-footprint).
    pub may_cond: Vec<E>,
    /// Enclosing loops, outermost first.
    pub loops: Vec<LoopId>,
    /// `ld.global` rather than a generic `ld`.
    pub global_space: bool,
}

/// The nature of the condition under which a load runs (JSON `guard`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Guard {
    /// The load runs for every thread that reaches its loop nest.
    None,
    /// A condition on the launch (thread coordinates, parameters, loop counters).
    Static,
    /// A condition on loaded data (`if (mask[tid])`): the load *may* run.
    DataDependent,
    /// A condition on a floating-point value: the load *may* run.
    FloatingPoint,
}

impl Guard {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Guard::None => "none",
            Guard::Static => "static",
            Guard::DataDependent => "data-dependent",
            Guard::FloatingPoint => "floating-point",
        }
    }
}

/// Whether a guard literal's unknowns are all ones a may-footprint can drop (loaded data,
/// floating point), and which: `None` when it is fully known, `Some(Err(reason))` when it
/// holds another unknown (the load stays unresolved).
pub(crate) fn guard_unknowns(e: &Expr) -> Option<Result<Guard, Reason>> {
    let mut out: Option<Result<Guard, Reason>> = None;
    // Every unknown of the DAG (each shared node once).
    e.visit_unknowns(&mut |r| {
        let g = match r {
            Reason::DataDependent => Ok(Guard::DataDependent),
            Reason::Float => Ok(Guard::FloatingPoint),
            other => Err(other.clone()),
        };
        out = match (out.take(), g) {
            (Some(Err(x)), _) | (_, Err(x)) => Some(Err(x)),
            (Some(Ok(Guard::FloatingPoint)), _) | (_, Ok(Guard::FloatingPoint)) => {
                Some(Ok(Guard::FloatingPoint))
            }
            (_, Ok(g)) => Some(Ok(g)),
        };
    });
    out
}

impl LoadSite {
    /// Why the load cannot be resolved statically, if it cannot. A guard on loaded data or
    /// on a floating-point value does not make a load unresolved (its address is known; it
    /// *may* run, see [`LoadSite::guard`]); any other unknown in the guard does, with a
    /// reason that says it is the guard.
    pub fn unresolved(&self, model: &KernelModel) -> Option<Reason> {
        self.addr
            .unknown_reason()
            .or_else(|| self.loops.iter().find_map(|l| model.loop_reason(*l)))
            .or_else(|| {
                self.cond
                    .iter()
                    .find_map(|c| c.unknown_reason().map(|r| Reason::Guard(Box::new(r))))
            })
    }

    /// The nature of the load's guard: the most uncertain of its literals (floating point
    /// over loaded data over static).
    pub fn guard(&self) -> Guard {
        let mut g = Guard::None;
        for c in self.cond.iter().chain(&self.may_cond) {
            let mut lits = Vec::new();
            conjuncts(c, &mut lits);
            for l in &lits {
                let k = match guard_unknowns(l) {
                    None => Guard::Static,
                    Some(Ok(k)) => k,
                    Some(Err(_)) => Guard::DataDependent,
                };
                g = match (g, k) {
                    (Guard::FloatingPoint, _) | (_, Guard::FloatingPoint) => Guard::FloatingPoint,
                    (Guard::DataDependent, _) | (_, Guard::DataDependent) => Guard::DataDependent,
                    _ => Guard::Static,
                };
            }
        }
        g
    }

    /// Whether the load only *may* run: its guard depends on loaded data or floating point.
    pub fn may(&self) -> bool {
        !self.may_cond.is_empty()
    }
}

/// What the analysis knows about one loop.
#[derive(Clone, Debug, Default)]
pub struct LoopInfo {
    /// Each exit: condition (over this loop's counter) under which the loop leaves at that
    /// iteration.
    pub exits: Vec<E>,
    /// Why the trip count is not known, if it is not.
    pub unresolved: Option<Reason>,
    /// The enclosing loop.
    pub parent: Option<LoopId>,
    /// Position of the header's first instruction (orders loops in program order).
    pub header_inst: u32,
}

/// The result of symbolic execution: loads and loops of one kernel for one launch.
#[derive(Debug)]
pub struct KernelModel {
    /// Global loads reached for this launch, in instruction order.
    pub loads: Vec<LoadSite>,
    /// The value each reached non-global, non-shared store writes (`st.param` into a call's
    /// arguments, generic stores into a device-side launch's parameter buffer):
    /// [`crate::child_launch`] reads the launches' configurations and arguments from them.
    pub stores: std::collections::HashMap<InstId, E>,
    /// Global loads never reached for this launch (their branch is never taken).
    pub unreachable_loads: Vec<(InstId, u32)>,
    /// Per loop.
    pub loops: Vec<LoopInfo>,
    /// Whether the footprints include the loads that only *may* run ([`LoadSite::may`]):
    /// the may-footprint of `paver analyze --may-loads`. Off by default: the graph is
    /// built from the loads that run exactly as the launch says.
    pub include_may: bool,
    /// Per loop, its [`TripPlan`], made on first use from `loops` (which is not changed once
    /// [`analyze_kernel`](crate::addr::analyze_kernel) has returned): trip counts are
    /// evaluated per thread and iteration, their symbolic part once per loop.
    pub(crate) trip_plans: Vec<std::sync::OnceLock<TripPlan>>,
    /// Entries the loops' [`TripTable`]s may still take, together.
    pub(crate) trip_table_room: std::sync::atomic::AtomicU64,
    /// The launch's grid and block, by dimension (what "every thread" means for the exit
    /// conditions that hold in every thread, [`TripPlan::decisive`]).
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
}

impl KernelModel {
    /// Whether load `i` counts in the footprints (resolved loads only; a may-load only
    /// with [`KernelModel::include_may`]).
    pub fn counts(&self, i: usize) -> bool {
        self.loads
            .get(i)
            .is_some_and(|l| self.include_may || !l.may())
    }

    /// Loop `l`'s [`TripPlan`].
    pub(crate) fn trip_plan(&self, l: LoopId) -> &TripPlan {
        self.trip_plans[l.index()].get_or_init(|| TripPlan::new(self, l))
    }

    /// Why loop `l`'s trip count is unknown (this loop or an enclosing one).
    pub fn loop_reason(&self, l: LoopId) -> Option<Reason> {
        let info = self.loops.get(l.index())?;
        info.unresolved
            .clone()
            .or_else(|| info.exits.iter().find_map(|e| e.unknown_reason()))
    }
}
