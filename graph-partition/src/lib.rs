//! Weighted TB locality graph -> ordered TB groups for a locality-aware TB scheduler.
//!
//! Data flow: a [`Graph`] (built by the locality analysis, or read from an edge list, the
//! analysis JSON, a METIS or `.npz` file) and
//! [`Params`] (SMs N and TB slots x, plain numbers: the `gpu` crate computes x) go into a
//! [`Policy`] (LRR, BCS, MST-TS, Kway-TS, RB-TS, distributed, distributed-block, LD
//! clustering), which returns TB groups in global-queue order. [`make_schedule`] times the
//! policy, scores the groups with [`quality`] against LRR, and packs everything into a
//! [`Schedule`] (`paver-schedule/1` JSON) that any simulator's TB scheduler can replay.
//!
//! The crate knows nothing of PTX: any weighted graph over TBs `0..n` works. Every policy is
//! deterministic; METIS runs with a fixed seed ([`Params::seed`]).

#![warn(missing_docs)]

pub mod descriptor;
pub mod error;
pub mod graph;
pub mod graph_file;
mod metis_part;
pub mod mst;
pub mod npy;
mod npz;
pub mod policy;
pub mod quality;
pub mod schedule;
pub mod synthetic;

pub use descriptor::Descriptor;
pub use error::{Error, Result};
pub use graph::{AnalysisGraph, Graph, Parsed, RowChunk, RowPart, SharedRows, ROW_CHUNK};
pub use policy::{Groups, LdClustering, Params, Policy, PolicyKind, RankedCTile};
pub use quality::Quality;
pub use schedule::{Departures, Schedule, ScheduleStats, FORMAT};

/// The launch a schedule is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// Kernel name.
    pub kernel: String,
    /// Grid dimensions (TBs).
    pub grid: [u32; 3],
    /// Block dimensions (threads).
    pub block: [u32; 3],
}

/// Runs `policy` on `g` and builds a validated schedule with statistics.
pub fn make_schedule(
    g: &Graph,
    policy: &dyn Policy,
    params: &Params,
    launch: &Launch,
) -> Result<Schedule> {
    let n: u64 = launch.grid.iter().map(|&d| u64::from(d)).product();
    if n != u64::from(g.num_tbs()) {
        return Err(Error::InvalidParam {
            name: "grid",
            message: format!(
                "grid {:?} has {n} TBs but the graph has {}",
                launch.grid,
                g.num_tbs()
            ),
        });
    }
    let start = std::time::Instant::now();
    let mut groups = policy.groups(g, params)?;
    let mut ours = quality::quality(g, &groups, params.num_sms, params.tbs_per_sm);
    let lrr = quality::lrr_quality(g, params.num_sms, params.tbs_per_sm);
    let floor = params.at_least_lrr && policy.lrr_floor_applies();
    let mut lrr_floor_taken = false;
    if let Some(lrr_groups) = floor
        .then(|| policy::at_least_lrr(g.num_tbs(), ours.concurrent_weight, lrr.concurrent_weight))
        .flatten()
    {
        groups = lrr_groups;
        ours = lrr;
        lrr_floor_taken = true;
    }
    let partition_ms = start.elapsed().as_secs_f64() * 1e3;
    let stats = ScheduleStats {
        num_tbs: g.num_tbs(),
        num_edges: g.num_edges(),
        num_groups: groups.len() as u32,
        max_group_size: groups.iter().map(Vec::len).max().unwrap_or(0) as u32,
        quality: ours,
        lrr,
        partition_ms,
        seed: params.seed,
        strict_less: params.strict_less,
        departures: Departures {
            at_least_lrr: params.at_least_lrr,
            lrr_floor_taken,
            shrink_groups: params.shrink_groups,
            edgeless_lrr: params.edgeless_lrr,
        },
    };
    let schedule = Schedule {
        format: FORMAT.to_string(),
        kernel: launch.kernel.clone(),
        grid: launch.grid,
        block: launch.block,
        policy: policy.name().to_string(),
        num_sms: params.num_sms,
        tbs_per_sm: params.tbs_per_sm,
        issue_unit: policy.issue_unit(),
        sms_per_cluster: params.sms_per_cluster,
        groups,
        stats: Some(stats),
    };
    schedule.validate()?;
    Ok(schedule)
}
