//! Static locality analysis of PTX kernels.
//!
//! Data flows in one direction:
//! 1. [`dom`] and [`loops`]: dominator tree and natural loops of the kernel's CFG.
//! 2. [`addr`]: symbolic execution over the CFG in the value domain of [`expr`]; loops are
//!    summarised by [`ivs`] (induction variables, per-thread trip counts). The result, a
//!    [`addr::KernelModel`], holds each global load's address expression, guard and loop nest.
//!    The model's types and its loops' trip counts live in the private `model` module, below
//!    both `addr` and `ivs`, which re-export them.
//!    [`open`] then checks that no load depends on a parameter the launch left without a
//!    value (`launch::BoundValue::Open`), else the analysis stops naming it.
//! 3. [`footprint`]: exact per-TB sets of data units (line / sector / element) read, as
//!    interval lists shared by TBs with equal footprints; also built from explicit address
//!    sets (the interpreter's dynamic footprints).
//! 4. [`locality`]: the TB locality graph from an inverted index (units grouped by the set of
//!    TB classes reading them), PAVER Table 2 statistics and the Fig. 2 sharing categories.
//! 5. [`heatmap`]: the graph's adjacency matrix as a PNG (PAVER Fig. 5).
//! 6. [`reuse`]: LASER reuse metrics over the access streams of a sample of TBs.
//! 7. [`child_launch`]: the grids the kernel launches from the device (kernel, grid, block,
//!    arguments), resolved from the stores the symbolic execution records.
//! 8. [`descriptor`]: Locality Descriptors per pointer parameter; their existence questions
//!    (private `existence` module) are answered by the fast tests of [`dependence`], by z3
//!    ([`smt`]) or by enumeration.
//!
//! Private helpers below the pipeline: `fx` (the internal hash maps, re-exported by
//! [`footprint`]) and `region` (data structure names, re-exported by [`report`]).
#![warn(missing_docs)]

pub mod addr;
pub mod child_launch;
pub mod dependence;
pub mod descriptor;
pub mod dom;
mod existence;
pub mod expr;
pub mod float;
pub mod footprint;
mod fx;
pub mod heatmap;
pub mod ivs;
pub mod locality;
pub mod loops;
mod model;
pub mod open;
mod region;
pub mod report;
pub mod reuse;
pub mod smt;

use launch::BoundLaunch;
use ptx_parser::Function;

pub use launch::param_sigs;

/// One kernel analysed for one launch: the symbolic model, the footprints and the loads
/// whose evaluation failed.
#[derive(Debug)]
pub struct Analysis {
    /// Loads, loops and their expressions.
    pub model: addr::KernelModel,
    /// Per-TB footprints of the resolved loads.
    pub footprints: footprint::Footprints,
    /// Per load (index into `model.loads`): why it is unresolved, if it is.
    pub unresolved: Vec<Option<String>>,
    /// Footprints and each load's byte ranges come from an interpreter run (`paver analyze
    /// --dynamic`): every load that ran is in the graph, whatever the static verdict in
    /// `unresolved`, and one that did not run never executed.
    pub observed: bool,
}

/// Everything that stops an analysis before it starts.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The launch is larger than the analysis can represent or this machine can hold.
    #[error("kernel {kernel}: {why}")]
    TooLarge {
        /// The kernel.
        kernel: String,
        /// What is too large.
        why: String,
    },
    /// The analysis would need more memory than the budget allows.
    #[error(
        "kernel {kernel}: the analysis would need about {} MiB ({why}), more than the budget of {} MiB",
        estimate >> 20,
        budget >> 20
    )]
    OutOfMemory {
        /// The kernel.
        kernel: String,
        /// Estimated peak bytes.
        estimate: u64,
        /// Allowed bytes.
        budget: u64,
        /// What the estimate counts.
        why: String,
    },
    /// The function is a declaration without a body.
    #[error("kernel {kernel}: no body to analyse")]
    NoBody {
        /// The kernel.
        kernel: String,
    },
    /// A parameter the launch leaves open is needed after all: a load the analysis
    /// evaluates depends on it ([`open`]).
    #[error(
        "kernel {kernel}: parameter {} (`{}`) needs a value: {}; {}",
        need.index, need.name, need.why, need.how
    )]
    NeedsValue {
        /// The kernel.
        kernel: String,
        /// Which parameter, what needs it, how to give it.
        need: open::NeedsValue,
    },
}

/// The reason of a load left out because the graph edges its footprint would add do not
/// fit the memory budget (it starts as the footprints' own budget reason does).
pub const GRAPH_BUDGET: &str =
    "budget: the locality graph this load's footprint adds would exceed the memory budget";

/// Largest number of TBs analysed (the locality graph's ids are `u32`, its rows dense).
pub const MAX_TBS: u64 = 1 << 24;

/// Bytes the analysis holds per TB whatever the kernel (class membership, graph row
/// offsets, per-TB scratch of the sweep), measured on the corpus with margin.
pub const BYTES_PER_TB: u64 = 256;
/// Bytes per expected graph edge while it is built (neighbour, weight, merge scratch).
pub const BYTES_PER_EDGE: u64 = 32;

/// The default memory budget: three quarters of `MemAvailable` in `/proc/meminfo` (8 GiB
/// where that cannot be read).
pub fn default_memory_budget() -> u64 {
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    });
    avail.map_or(8 << 30, |kib| kib.saturating_mul(1024) / 4 * 3)
}

/// Expected graph edges: each evaluated load's footprint is shared by the TBs that agree on
/// the `%ctaid` dimensions its address and loop bounds use (guards only cut the grid's
/// edge), a clique of `Π grid[d]` over the other dimensions `d`; edges are summed over the
/// distinct sets of dimensions and doubled for halos and lines straddling tiles. Loads left
/// unresolved (data-dependent addresses, ...) add nothing: their footprints are not built.
pub fn estimate_edges(model: &addr::KernelModel, launch: &BoundLaunch) -> u64 {
    let masks = load_masks(model);
    edges_of(&masks, launch)
}

/// Per load, the `%ctaid` dimensions its footprint depends on as a mask (bit `d` for
/// dimension `d`), or `None` for a load whose footprint is not built (unresolved, or a
/// may-load left out).
fn load_masks(model: &addr::KernelModel) -> Vec<Option<usize>> {
    model
        .loads
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if l.unresolved(model).is_some() || !model.counts(i) {
                return None;
            }
            let mut dims = [false; 3];
            let mut mark = |e: &expr::Expr| {
                if let expr::Expr::Var(expr::Var::Ctaid(d)) = e {
                    dims[usize::from(*d).min(2)] = true;
                }
            };
            l.addr.visit_leaves(&mut mark);
            for lp in &l.loops {
                if let Some(info) = model.loops.get(lp.index()) {
                    for e in &info.exits {
                        e.visit_leaves(&mut mark);
                    }
                }
            }
            Some(usize::from(dims[0]) | usize::from(dims[1]) << 1 | usize::from(dims[2]) << 2)
        })
        .collect()
}

/// The edges of [`estimate_edges`] for loads of the dimension masks `masks`.
fn edges_of(masks: &[Option<usize>], launch: &BoundLaunch) -> u64 {
    let grid = [launch.grid.x, launch.grid.y, launch.grid.z];
    let tbs = launch.num_tbs();
    let mut seen = [false; 8];
    for m in masks.iter().flatten() {
        seen[*m & 7] = true;
    }
    let mut total = 0u64;
    for mask in (0..8).filter(|&m| seen[m]) {
        total = total.saturating_add(clique_edges(mask, grid, tbs));
    }
    total
        .saturating_mul(2)
        .min(tbs.saturating_mul(tbs.saturating_sub(1)) / 2)
}

/// The edges of the cliques that loads of dimension mask `mask` make: TBs that agree on
/// the mask's dimensions share them.
fn clique_edges(mask: usize, grid: [u64; 3], tbs: u64) -> u64 {
    let clique: u64 = (0..3)
        .filter(|&d| mask & (1 << d) == 0)
        .map(|d| grid[d])
        .fold(1u64, u64::saturating_mul);
    tbs.saturating_mul(clique.saturating_sub(1)) / 2
}

fn check_memory(
    f: &Function,
    estimate: u64,
    budget: u64,
    why: String,
) -> Result<(), AnalysisError> {
    if estimate > budget {
        return Err(AnalysisError::OutOfMemory {
            kernel: f.name.clone(),
            estimate,
            budget,
            why,
        });
    }
    Ok(())
}

/// Analyses kernel `f` under `launch` at granularity `gran`, within
/// [`default_memory_budget`].
pub fn analyze(
    f: &Function,
    launch: &BoundLaunch,
    gran: footprint::Granularity,
) -> Result<Analysis, AnalysisError> {
    analyze_within(f, launch, gran, default_memory_budget())
}

/// [`analyze`] with an explicit memory budget in bytes: the estimate is checked before
/// any per-TB work (first from the TB count alone, then from the expected graph size once
/// the launch-independent symbolic model is built).
pub fn analyze_within(
    f: &Function,
    launch: &BoundLaunch,
    gran: footprint::Granularity,
    budget: u64,
) -> Result<Analysis, AnalysisError> {
    analyze_with(
        f,
        launch,
        gran,
        &Options {
            budget,
            may_loads: false,
        },
    )
}

/// Options of [`analyze_with`].
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Memory budget in bytes ([`default_memory_budget`]).
    pub budget: u64,
    /// Add the loads under a data-dependent or floating-point guard to the footprints as a
    /// may-footprint (`paver analyze --may-loads`).
    pub may_loads: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            budget: default_memory_budget(),
            may_loads: false,
        }
    }
}

/// [`analyze_within`] with every option.
pub fn analyze_with(
    f: &Function,
    launch: &BoundLaunch,
    gran: footprint::Granularity,
    opts: &Options,
) -> Result<Analysis, AnalysisError> {
    let budget = opts.budget;
    if !f.has_body {
        return Err(AnalysisError::NoBody {
            kernel: f.name.clone(),
        });
    }
    let tbs = launch
        .grid
        .x
        .saturating_mul(launch.grid.y)
        .saturating_mul(launch.grid.z);
    check_memory(
        f,
        tbs.saturating_mul(BYTES_PER_TB),
        budget,
        format!("{tbs} thread blocks x {BYTES_PER_TB} B"),
    )?;
    if tbs > MAX_TBS {
        return Err(AnalysisError::TooLarge {
            kernel: f.name.clone(),
            why: format!("{tbs} thread blocks, more than the {MAX_TBS} the analysis supports"),
        });
    }
    let mut model = addr::analyze_kernel(f, launch);
    open::check(f, &model, launch).map_err(|need| AnalysisError::NeedsValue {
        kernel: f.name.clone(),
        need,
    })?;
    model.include_may = opts.may_loads;
    let mut unresolved: Vec<Option<String>> = model
        .loads
        .iter()
        .map(|l| l.unresolved(&model).map(|r| r.to_string()))
        .collect();
    // The graph the footprints would make must fit beside the TBs: the loads whose cliques
    // do not fit are left unresolved with reason `budget`, the largest cliques first (every
    // TB reading one tree root: 2^31 edges at 65,536 TBs), and the others analysed.
    let mut masks = load_masks(&model);
    let grid = [launch.grid.x, launch.grid.y, launch.grid.z];
    let spent = loop {
        let edges = edges_of(&masks, launch);
        let need = tbs
            .saturating_mul(BYTES_PER_TB)
            .saturating_add(edges.saturating_mul(BYTES_PER_EDGE));
        let largest = masks
            .iter()
            .flatten()
            .copied()
            .max_by_key(|&m| (clique_edges(m, grid, tbs), std::cmp::Reverse(m)));
        match largest {
            Some(m) if need > budget => {
                for (i, x) in masks.iter_mut().enumerate() {
                    if *x == Some(m) {
                        *x = None;
                        unresolved[i] = Some(GRAPH_BUDGET.to_string());
                    }
                }
            }
            _ => break need,
        }
    };
    let skip: Vec<bool> = unresolved
        .iter()
        .enumerate()
        .map(|(i, u)| u.is_some() || !model.counts(i))
        .collect();
    let (footprints, errors) =
        footprint::compute_within(&model, launch, gran, &skip, budget.saturating_sub(spent));
    for e in errors {
        unresolved[e.load] = Some(e.error);
    }
    Ok(Analysis {
        model,
        footprints,
        unresolved,
        observed: false,
    })
}
