//! TB grouping policies behind one trait. A policy turns the locality graph into an ordered
//! list of TB groups (the PAVER global queue, §5.1): every TB appears in exactly one group.
//!
//! | policy | file | source |
//! |---|---|---|
//! | LRR | `lrr.rs` | PAVER §6 baseline |
//! | BCS | `bcs.rs` | PAVER §4.1 / §6, block CTA scheduling |
//! | MST-TS | `mst_ts.rs` | PAVER §4.1 |
//! | Kway-TS | `kway_ts.rs` | PAVER §4.2 |
//! | RB-TS | `rb_ts.rs` | PAVER §4.3, Algorithm 1 |
//! | distributed, distributed-block | `distributed.rs` | ICC paper §4-5 |
//! | LD clustering | `ld.rs` | Locality Descriptor §4.3, Algorithm 1 |

mod bcs;
mod distributed;
mod kway_ts;
mod ld;
mod lrr;
mod mst_ts;
mod rb_ts;

pub use bcs::Bcs;
pub use distributed::{Distributed, DistributedBlock};
pub use kway_ts::{kway_cap, KwayTs};
pub use ld::{LdClustering, RankedCTile};
pub use lrr::Lrr;
pub use mst_ts::MstTs;
pub use rb_ts::RbTs;

use crate::error::{Error, Result};
use crate::graph::Graph;
use std::str::FromStr;

/// Ordered TB groups: the global queue of the PAVER runtime.
pub type Groups = Vec<Vec<u32>>;

/// Machine and algorithm parameters shared by all policies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// Number of SMs, N.
    pub num_sms: u32,
    /// TBs that can be resident on one SM at once, x (the `gpu` crate's occupancy calculator computes it).
    pub tbs_per_sm: u32,
    /// RB-TS leaf rule. `true` (the default): a part becomes a leaf when its size is `< x`,
    /// PAVER's rule, stated three times (Algorithm 1's `G_i^0.size() < maxTB`; §4.3 "until
    /// the partition size is less than the maximum allowed TBs in each SM (x)" and "If G_i
    /// is smaller than the TB capacity of an SM, we get one final TB group"). `false`: when
    /// its size is `<= x` (the project's default before issue 12, kept for comparison).
    /// On a grid smaller than one wave a leaf is also at most [`Params::group_size`] TBs
    /// (inclusive, whichever rule; see `rb_ts.rs`).
    pub strict_less: bool,
    /// SMs sharing one NoC port (ICC paper clusters); distributed policies form one TB range
    /// per cluster. 1 = a range per SM.
    pub sms_per_cluster: u32,
    /// METIS random seed (METIS option `seed`).
    pub seed: i32,
    /// Kway-TS imbalance tolerance in thousandths (METIS `ufactor`; 30 = 3 %, METIS's
    /// k-way default).
    pub kway_ufactor: u32,
    /// A departure from the papers, off by default (`--shrink-groups`): on a grid smaller
    /// than one wave, shrink the groups to one SM's share so every SM gets work (see
    /// [`Params::group_size`]). Off, the groups have the paper's size x whatever the grid
    /// (`--fixed-group-size`, the default since issue 39).
    pub shrink_groups: bool,
    /// A departure from the papers, off by default (`--at-least-lrr`): when a policy's
    /// groups keep less co-running weight than LRR's order, [`crate::make_schedule`]
    /// replaces them with LRR's groups and says so in the schedule (`stats.at_least_lrr`,
    /// `stats.lrr_floor_taken`). See [`at_least_lrr`].
    pub at_least_lrr: bool,
    /// A departure from the papers, off by default (`--edgeless-lrr`): on a locality graph
    /// without a single edge, MST-TS, Kway-TS and RB-TS return LRR's groups instead of
    /// partitioning it (see `without_locality`).
    pub edgeless_lrr: bool,
}

impl Params {
    /// Parameters for `num_sms` SMs with `tbs_per_sm` TB slots each, other fields default
    /// (RB-TS's leaf rule `< x`, one SM per cluster, METIS seed 1, 3 % k-way imbalance,
    /// the paper's group size x on every grid, no LRR floor).
    pub fn new(num_sms: u32, tbs_per_sm: u32) -> Params {
        Params {
            num_sms,
            tbs_per_sm,
            strict_less: true,
            sms_per_cluster: 1,
            seed: 1,
            kway_ufactor: 30,
            shrink_groups: false,
            at_least_lrr: false,
            edgeless_lrr: false,
        }
    }

    /// Whether a grid of `num_tbs` TBs is smaller than one wave (`N * x`) and its groups
    /// shrink (with `shrink_groups`).
    pub fn shrinks(&self, num_tbs: u32) -> bool {
        let wave = u64::from(self.num_sms) * u64::from(self.tbs_per_sm.max(1));
        self.shrink_groups && u64::from(num_tbs) < wave
    }

    /// The group size the graph policies (MST-TS's first groups, RB-TS's largest leaves) use for a
    /// grid of `num_tbs` TBs: x, the paper's. On a grid smaller than one wave groups of x
    /// leave SMs idle (256 TBs in groups of 8 occupy 32 of Volta's 80 SMs); with
    /// `shrink_groups` it shrinks there to `ceil(num_tbs / N)`, the share of one SM, and
    /// MST-TS then cuts its order into exactly N groups and RB-TS bisects leaves further
    /// until there are N (see their modules). Kway-TS needs no shrinking: it always makes
    /// `min(N, num_tbs)` parts.
    pub fn group_size(&self, num_tbs: u32) -> u32 {
        let x = self.tbs_per_sm.max(1);
        if self.shrinks(num_tbs) {
            num_tbs.div_ceil(self.num_sms.max(1)).clamp(1, x)
        } else {
            x
        }
    }

    /// Checks that every count is positive.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("num_sms", self.num_sms),
            ("tbs_per_sm", self.tbs_per_sm),
            ("sms_per_cluster", self.sms_per_cluster),
        ] {
            if v == 0 {
                return Err(Error::InvalidParam {
                    name,
                    message: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }
}

/// A TB grouping policy.
pub trait Policy {
    /// Short name used in the schedule JSON (`"rb-ts"`).
    fn name(&self) -> &'static str;
    /// How many TBs the hardware issues at once from a group: 2 for the block (pair)
    /// policies that wait for two free TB contexts, 1 otherwise.
    fn issue_unit(&self) -> u32 {
        1
    }
    /// Ordered groups covering every TB of `g` exactly once.
    fn groups(&self, g: &Graph, p: &Params) -> Result<Groups>;
    /// Whether [`Params::at_least_lrr`] may replace this policy's groups with LRR's (the
    /// METIS policies, Kway-TS and RB-TS, for which the floor was made).
    fn lrr_floor_applies(&self) -> bool {
        false
    }
}

/// `--edgeless-lrr` ([`Params::edgeless_lrr`]; a departure from the paper, off by default):
/// the groups of the locality policies (MST-TS, Kway-TS, RB-TS) on a graph without a single
/// edge are LRR's, one TB each in id order. There is no locality to group by, and the
/// paper's algorithms partition such a graph arbitrarily (METIS's parts of an edgeless graph
/// are contiguous TB ranges, which move each SM's requests to other L2 slices and DRAM
/// channels than LRR's and cost up to 2 % on a DRAM-bound kernel, blackscholes).
pub(crate) fn without_locality(g: &Graph, p: &Params) -> Option<Groups> {
    (p.edgeless_lrr && g.num_edges() == 0).then(|| (0..g.num_tbs()).map(|tb| vec![tb]).collect())
}

/// The LRR floor (`--at-least-lrr`, [`Params::at_least_lrr`]; off by default, not in the
/// paper): `Some(LRR's groups)` when `groups` keep less co-running weight than LRR's order
/// ([`crate::quality`]'s `concurrent_weight`: edges between TBs in one window of x TBs on
/// one SM), `ours` and `lrr` being those two weights. METIS balances parts and minimises
/// the cut of the whole graph, not the weight inside each SM's windows, and on some grids
/// LRR's fixed stride is already the best grouping: doitgen's paper launch on Volta (80
/// SMs, a multiple of the 8 TBs that share a column strip, so LRR's windows hold one class
/// each), or 25 TBs on Fermi's 15 SMs (LRR pairs TBs `s` and `s + 15`, one grid column
/// apart). With the floor a policy never captures less than the baseline it replaces; the
/// schedule records that it took LRR's groups, so a policy never silently becomes another.
pub fn at_least_lrr(num_tbs: u32, ours: u64, lrr: u64) -> Option<Groups> {
    (ours < lrr).then(|| (0..num_tbs).map(|tb| vec![tb]).collect())
}

/// The policies that need nothing but the graph and [`Params`], by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// Loose round-robin baseline.
    Lrr,
    /// Block CTA scheduling (consecutive pairs).
    Bcs,
    /// Maximum spanning tree order.
    MstTs,
    /// METIS k-way, one part per SM, MST order inside.
    KwayTs,
    /// Recursive bisection (Algorithm 1).
    RbTs,
    /// Contiguous TB ranges per cluster.
    Distributed,
    /// Contiguous ranges per cluster, issued in pairs.
    DistributedBlock,
}

impl PolicyKind {
    /// Every kind, in documentation order.
    pub const ALL: [PolicyKind; 7] = [
        PolicyKind::Lrr,
        PolicyKind::Bcs,
        PolicyKind::MstTs,
        PolicyKind::KwayTs,
        PolicyKind::RbTs,
        PolicyKind::Distributed,
        PolicyKind::DistributedBlock,
    ];

    /// The policy object.
    pub fn policy(self) -> Box<dyn Policy> {
        match self {
            PolicyKind::Lrr => Box::new(Lrr),
            PolicyKind::Bcs => Box::new(Bcs),
            PolicyKind::MstTs => Box::new(MstTs),
            PolicyKind::KwayTs => Box::new(KwayTs),
            PolicyKind::RbTs => Box::new(RbTs),
            PolicyKind::Distributed => Box::new(Distributed),
            PolicyKind::DistributedBlock => Box::new(DistributedBlock),
        }
    }

    /// Schedule-file name of the policy.
    pub fn name(self) -> &'static str {
        self.policy().name()
    }
}

impl FromStr for PolicyKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<PolicyKind> {
        PolicyKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| Error::InvalidParam {
                name: "policy",
                message: format!(
                    "unknown policy `{s}`; expected one of {}",
                    PolicyKind::ALL.map(PolicyKind::name).join(", ")
                ),
            })
    }
}
