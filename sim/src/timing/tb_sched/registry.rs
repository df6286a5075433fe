//! The one list of TB policies. Everything that names a TB policy reads it: parsing
//! (`paver simulate --tb-policy`, sweep plans), the help texts, stealing defaults, the
//! report's column order. A new policy is its file (a [`super::TbScheduler`] and its
//! [`TbPolicyInfo`]) and one line in [`TB_POLICIES`].

use super::TbPolicyInfo;
use crate::timing::named;

/// Every TB policy, in the order of the papers' figures and the report's columns (the
/// papers' baselines and PAVER's, then the rest alphabetically).
pub const TB_POLICIES: &[&TbPolicyInfo] = &[
    &super::lrr::LRR,
    &super::bcs::BCS,
    &super::paver::MST_TS,
    &super::paver::KWAY_TS,
    &super::paver::RB_TS,
    &super::paver::LD,
    &super::distributed::DISTRIBUTED,
    &super::distributed_block::DISTRIBUTED_BLOCK,
    &super::global_rr::GLOBAL_RR,
    &super::greedy::GREEDY,
    &super::laser::LASER,
    &super::paver::PAVER,
    &super::two_level::TWO_LEVEL_RR,
];

/// A TB policy of [`TB_POLICIES`] (or of a caller's own [`TbPolicyInfo`]).
#[derive(Clone, Copy)]
pub struct TbPolicy(pub &'static TbPolicyInfo);

impl TbPolicy {
    /// Loose round robin.
    pub const LRR: TbPolicy = TbPolicy(&super::lrr::LRR);
    /// Block CTA scheduling.
    pub const BCS: TbPolicy = TbPolicy(&super::bcs::BCS);
    /// Distributed-block.
    pub const DISTRIBUTED_BLOCK: TbPolicy = TbPolicy(&super::distributed_block::DISTRIBUTED_BLOCK);
    /// PAVER's runtime over a schedule's groups (RB-TS when the groups are built here).
    pub const PAVER: TbPolicy = TbPolicy(&super::paver::PAVER);

    /// The policy named `s` (a name or an alias, any case, `_` for `-`).
    pub fn parse(s: &str) -> Option<TbPolicy> {
        named::find(TB_POLICIES.iter().copied(), s).map(TbPolicy)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// Whether it runs a schedule's groups in the PAVER runtime.
    pub fn is_grouped(self) -> bool {
        self.0.grouped
    }

    /// Every policy's name, in [`TB_POLICIES`] order.
    pub fn names() -> Vec<&'static str> {
        TB_POLICIES.iter().map(|p| p.name).collect()
    }

    /// The help text: each name with its description.
    pub fn help() -> String {
        named::help("TB scheduling policy", TB_POLICIES.iter().copied())
    }
}

named::registry_handle!(TbPolicy, TbPolicyInfo);

/// Whether the PAVER runtime steals by default for schedules of grouping policy `policy`
/// (its [`TbPolicyInfo::steals_by_default`]; a name not in the list does not).
pub fn steals_by_default(policy: &str) -> bool {
    TbPolicy::parse(policy).is_some_and(|p| p.0.steals_by_default)
}
