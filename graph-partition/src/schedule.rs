//! The schedule file, `paver-schedule/1`: TB groups in global-queue order plus what a TB
//! scheduler needs to replay them (SM count, TB slots, issue unit) and quality statistics.
//! JSON Schema: `graph-partition/schema/paver-schedule-1.schema.json`.

use crate::error::{Error, Result};
use crate::quality::Quality;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Value of the `format` field.
pub const FORMAT: &str = "paver-schedule/1";

/// A schedule: ordered TB groups for one kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Always [`FORMAT`].
    pub format: String,
    /// Kernel name.
    pub kernel: String,
    /// Grid dimensions in TBs; TB ids are `x + y*gx + z*gx*gy`.
    pub grid: [u32; 3],
    /// Block dimensions in threads.
    pub block: [u32; 3],
    /// Policy that produced the groups (`rb-ts`, `kway-ts`, ...).
    pub policy: String,
    /// SMs the groups were made for (N).
    pub num_sms: u32,
    /// Resident TBs per SM the groups were made for (x).
    pub tbs_per_sm: u32,
    /// TBs issued together from a group: 2 for the pair policies (BCS, distributed-block),
    /// which wait for two free TB contexts; 1 otherwise.
    #[serde(default = "one")]
    pub issue_unit: u32,
    /// SMs per cluster for the distributed policies (group c = cluster c's pool); 1 otherwise.
    #[serde(default = "one")]
    pub sms_per_cluster: u32,
    /// TB groups in global-queue order.
    pub groups: Vec<Vec<u32>>,
    /// Statistics; informative only, a consumer may ignore them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<ScheduleStats>,
}

fn one() -> u32 {
    1
}

/// Statistics stored with a schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleStats {
    /// TBs in the grid.
    pub num_tbs: u32,
    /// Undirected edges of the locality graph.
    pub num_edges: u64,
    /// Groups.
    pub num_groups: u32,
    /// Largest group.
    pub max_group_size: u32,
    /// Figures for this schedule (see [`crate::quality`]).
    pub quality: Quality,
    /// The same figures for LRR on the same graph and machine.
    pub lrr: Quality,
    /// Wall time of the grouping itself, in milliseconds.
    pub partition_ms: f64,
    /// METIS seed used.
    pub seed: i32,
    /// RB-TS leaf rule the groups were made with ([`crate::Params::strict_less`]): true =
    /// `size < x` (PAVER Algorithm 1, the default), false = `size <= x` (`--rb-leaf le`).
    /// Recorded for every policy, though only RB-TS reads it.
    pub strict_less: bool,
    /// The named departures from the paper the groups were made with (issue 39), as keys
    /// of this object.
    #[serde(flatten)]
    pub departures: Departures,
}

/// The named departures from the paper a schedule's groups were made with (issue 39; all
/// off by default, the paper's algorithms). A key absent from a schedule reads `false`:
/// schedules made before issue 39 omit them, though Kway-TS and RB-TS then always had the
/// LRR floor and LRR's groups on edgeless graphs, and groups shrank on sub-wave grids
/// unless `--fixed-group-size`. The simulator's stats copy them (`schedule`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Departures {
    /// Made with the LRR floor (`--at-least-lrr`, [`crate::Params::at_least_lrr`]).
    pub at_least_lrr: bool,
    /// The floor replaced the policy's groups with LRR's: the schedule's `policy` names the
    /// policy asked for, its groups are LRR's (`quality` equals `lrr`).
    pub lrr_floor_taken: bool,
    /// MST-TS's and RB-TS's groups shrank to one SM's share on a grid smaller than one wave
    /// (`--shrink-groups`, [`crate::Params::shrink_groups`]).
    pub shrink_groups: bool,
    /// The locality policies returned LRR's groups on a graph without edges
    /// (`--edgeless-lrr`, [`crate::Params::edgeless_lrr`]).
    pub edgeless_lrr: bool,
}

impl Schedule {
    /// Checks the invariants: format, positive counts, no empty group, and every TB of the
    /// grid in exactly one group.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidSchedule(m));
        if self.format != FORMAT {
            return bad(format!("format is `{}`, expected `{FORMAT}`", self.format));
        }
        for (name, v) in [
            ("num_sms", self.num_sms),
            ("tbs_per_sm", self.tbs_per_sm),
            ("issue_unit", self.issue_unit),
            ("sms_per_cluster", self.sms_per_cluster),
        ] {
            if v == 0 {
                return bad(format!("{name} must be at least 1"));
            }
        }
        let n: u64 = self.grid.iter().map(|&d| u64::from(d)).product();
        let mut seen = vec![usize::MAX; usize::try_from(n).unwrap_or(usize::MAX).min(1 << 32)];
        if seen.len() as u64 != n {
            return bad(format!("grid {:?} is too large", self.grid));
        }
        for (k, g) in self.groups.iter().enumerate() {
            if g.is_empty() {
                return bad(format!("group {k} is empty"));
            }
            for &tb in g {
                let Some(slot) = seen.get_mut(tb as usize) else {
                    return bad(format!("group {k}: TB {tb} is outside the grid ({n} TBs)"));
                };
                if *slot != usize::MAX {
                    return bad(format!("TB {tb} appears in group {} and group {k}", *slot));
                }
                *slot = k;
            }
        }
        if let Some(tb) = seen.iter().position(|&s| s == usize::MAX) {
            let missing = seen.iter().filter(|&&s| s == usize::MAX).count();
            return bad(format!("{missing} TB(s) in no group, the first is TB {tb}"));
        }
        Ok(())
    }

    /// Serialises to pretty JSON.
    pub fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    /// Parses and validates JSON.
    pub fn from_json(text: &str) -> Result<Schedule> {
        let s: Schedule = serde_json::from_str(text)?;
        s.validate()?;
        Ok(s)
    }

    /// Writes pretty JSON to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_json()? + "\n").map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Reads and validates a schedule file.
    pub fn read(path: &Path) -> Result<Schedule> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json(&text)
    }
}
