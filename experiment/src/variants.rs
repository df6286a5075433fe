//! Named departures from the papers' algorithms (issue 39). The defaults are the papers'
//! algorithms, to the letter where a paper is explicit; each variant here changes one
//! thing a paper does not say, is off unless asked for, and is recorded wherever its
//! results are: in the schedule (`stats.at_least_lrr`), the simulator's stats
//! (`steal_cap`, `schedule.at_least_lrr`) and a sweep's records (`variants`).
//!
//! On the command line each is a flag of its own (`--at-least-lrr`, `--shrink-groups`,
//! `--edgeless-lrr`, `--steal-cap`); a sweep
//! plan lists sets of them by name (`variants = [[], ["steal-cap"]]`, docs/SWEEP.md).

use crate::{GroupRequest, Run};

/// A named departure from the papers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// Kway-TS's or RB-TS's groups replaced by LRR's when LRR's order keeps more co-running
    /// weight ([`graph_partition::policy::at_least_lrr`]). Changes the groups.
    AtLeastLrr,
    /// On a grid smaller than one wave, MST-TS's and RB-TS's groups shrink to one SM's
    /// share ([`graph_partition::Params::shrink_groups`]). Changes the groups.
    ShrinkGroups,
    /// On a locality graph without edges, MST-TS, Kway-TS and RB-TS return LRR's groups
    /// ([`graph_partition::Params::edgeless_lrr`]). Changes the groups.
    EdgelessLrr,
    /// A steal takes at most the recipient's free contexts and a stolen TB never moves
    /// again (`sim::timing::tb_sched::Paver::with_steal_cap`). Changes the runtime only.
    StealCap,
}

impl Variant {
    /// Every variant, in documentation order.
    pub const ALL: [Variant; 4] = [
        Variant::AtLeastLrr,
        Variant::ShrinkGroups,
        Variant::EdgelessLrr,
        Variant::StealCap,
    ];

    /// The name on the command line (as a flag, `--NAME`), in plans and records.
    pub fn name(self) -> &'static str {
        match self {
            Variant::AtLeastLrr => "at-least-lrr",
            Variant::ShrinkGroups => "shrink-groups",
            Variant::EdgelessLrr => "edgeless-lrr",
            Variant::StealCap => "steal-cap",
        }
    }

    /// One line for help texts.
    pub fn description(self) -> &'static str {
        match self {
            Variant::AtLeastLrr => {
                "Kway-TS's and RB-TS's groups replaced by LRR's when LRR keeps more co-running weight"
            }
            Variant::ShrinkGroups => {
                "MST-TS's and RB-TS's groups shrink to one SM's share on a grid smaller than one wave"
            }
            Variant::EdgelessLrr => {
                "MST-TS, Kway-TS and RB-TS return LRR's groups on a locality graph without edges"
            }
            Variant::StealCap => {
                "task stealing takes at most the recipient's free contexts; a TB moves at most once"
            }
        }
    }

    /// The variant named `name`.
    pub fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Whether the variant changes the TB groups (so a schedule made without it differs).
    pub fn changes_groups(self) -> bool {
        matches!(
            self,
            Variant::AtLeastLrr | Variant::ShrinkGroups | Variant::EdgelessLrr
        )
    }

    /// Sets the variant in a grouping request.
    pub fn apply_to_groups(self, req: &mut GroupRequest) {
        match self {
            Variant::AtLeastLrr => req.at_least_lrr = true,
            Variant::ShrinkGroups => req.shrink_groups = true,
            Variant::EdgelessLrr => req.edgeless_lrr = true,
            Variant::StealCap => {}
        }
    }

    /// Sets the variant in a run.
    pub fn apply_to_run(self, run: &mut Run) {
        if self == Variant::StealCap {
            run.steal_cap = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_each_sets_one_thing() {
        for v in Variant::ALL {
            assert_eq!(Variant::parse(v.name()), Some(v));
            let mut req = GroupRequest::new("rb-ts");
            v.apply_to_groups(&mut req);
            assert_eq!(
                req != GroupRequest::new("rb-ts"),
                v.changes_groups(),
                "{v:?}"
            );
        }
        assert_eq!(Variant::parse("steal_cap"), None);
    }
}
