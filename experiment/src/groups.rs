//! TB groups: a grouping policy by name, with its settings, run on a locality graph for a
//! GPU's SMs and TBs per SM. Shared by [`crate::Experiment::schedule`] and `paver
//! partition` (a graph file without its kernel).

use graph_partition::{Descriptor, Graph, LdClustering, Params, Policy, PolicyKind, Schedule};

use crate::error::{Error, Result};

/// How to group a launch's TBs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRequest {
    /// Grouping policy: a [`PolicyKind`] name (`rb-ts`, `kway-ts`, `mst-ts`, `lrr`, ...),
    /// `paver` (RB-TS), or `ld` (Locality Descriptor CTA clustering).
    pub policy: String,
    /// RB-TS's leaf rule: a part is a leaf when its size is `< x` (PAVER Algorithm 1; the
    /// default) rather than `<= x`.
    pub strict_less: bool,
    /// The LRR floor ([`graph_partition::Params::at_least_lrr`]; off by default, not the
    /// paper's).
    pub at_least_lrr: bool,
    /// Shrink the groups to one SM's share on grids smaller than one wave
    /// ([`graph_partition::Params::shrink_groups`]; off by default, not the paper's).
    pub shrink_groups: bool,
    /// LRR's groups on a locality graph without edges
    /// ([`graph_partition::Params::edgeless_lrr`]; off by default, not the paper's).
    pub edgeless_lrr: bool,
    /// SMs sharing one NoC port (the distributed policies form one TB range per cluster).
    pub sms_per_cluster: u32,
    /// METIS seed.
    pub seed: i32,
}

impl GroupRequest {
    /// `policy` with the papers' settings: leaf rule `< x`, groups of x on every grid, no
    /// LRR floor, one SM per cluster, seed 1.
    pub fn new(policy: &str) -> GroupRequest {
        GroupRequest {
            policy: policy.to_string(),
            strict_less: true,
            at_least_lrr: false,
            shrink_groups: false,
            edgeless_lrr: false,
            sms_per_cluster: 1,
            seed: 1,
        }
    }

    /// The grouping policy's name with `paver` meaning RB-TS.
    pub fn policy_name(&self) -> String {
        match self.policy.to_ascii_lowercase().as_str() {
            "paver" => "rb-ts".to_string(),
            p => p.to_string(),
        }
    }

    /// Whether the policy is Locality Descriptor clustering (it needs the descriptors).
    pub fn is_ld(&self) -> bool {
        matches!(self.policy_name().as_str(), "ld" | "ld-clustering")
    }
}

/// RB-TS's leaf rule (`--rb-leaf`, a sweep plan's `rb_leaf`): [`GroupRequest::strict_less`]
/// by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RbLeaf {
    /// A part is a leaf when its size is `< x`: PAVER Algorithm 1 (`< maxTB`) and §4.3.
    #[default]
    Lt,
    /// A part is a leaf when its size is `<= x` (the default before issue 12).
    Le,
}

impl RbLeaf {
    /// The rule named `lt` or `le` (as on the command line and in sweep plans and records).
    pub fn parse(s: &str) -> Option<RbLeaf> {
        match s {
            "lt" => Some(RbLeaf::Lt),
            "le" => Some(RbLeaf::Le),
            _ => None,
        }
    }
}

/// The policy `req` names; `descriptors` gives the launch's Locality Descriptors when the
/// policy is `ld` (only then called).
pub fn policy(
    req: &GroupRequest,
    grid: [u32; 3],
    descriptors: impl FnOnce() -> Result<Vec<Descriptor>>,
) -> Result<Box<dyn Policy>> {
    if req.is_ld() {
        return Ok(Box::new(LdClustering::new(grid, &descriptors()?)));
    }
    let kind: PolicyKind = req
        .policy_name()
        .parse()
        .map_err(|e: graph_partition::Error| Error::Invalid(format!("{e}, ld")))?;
    Ok(kind.policy())
}

/// Groups the TBs of `graph` (the launch `launch`) with `policy` as `req` says, for
/// `num_sms` SMs holding `tbs_per_sm` TBs each.
pub fn make_groups(
    graph: &Graph,
    policy: &dyn Policy,
    req: &GroupRequest,
    num_sms: u32,
    tbs_per_sm: u32,
    launch: &graph_partition::Launch,
) -> Result<Schedule> {
    let mut params = Params::new(num_sms, tbs_per_sm);
    params.strict_less = req.strict_less;
    params.at_least_lrr = req.at_least_lrr;
    params.shrink_groups = req.shrink_groups;
    params.edgeless_lrr = req.edgeless_lrr;
    params.sms_per_cluster = req.sms_per_cluster.max(1);
    params.seed = req.seed;
    Ok(graph_partition::make_schedule(
        graph, policy, &params, launch,
    )?)
}
