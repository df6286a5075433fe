//! The timing model's pipeline and memory-path parameters, which a GPU configuration file
//! carries in its `[pipeline]` and `[mem]` tables (`sim::timing::TimingConfig` reads them;
//! where a file leaves a table out, the defaults below, GPGPU-Sim's SM7_TITANV values).

use serde::{Deserialize, Serialize};

/// Write policy of a cache level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritePolicy {
    /// Writes update a present line and always go to the next level; no allocation on a
    /// write miss (GPGPU-Sim `T` with no-write-allocate; the L1 of every shipped GPU).
    WriteThrough,
    /// Writes allocate (without fetch, sector-wise) and mark the line dirty; dirty victims go
    /// to the next level (GPGPU-Sim `B`; the L2 of every shipped GPU).
    WriteBack,
}

fn one() -> u32 {
    1
}

/// How warps order the instructions of a basic block (`pipeline.issue_order`;
/// `sim::timing::issue_order` builds the schedule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IssueOrder {
    /// Each block list-scheduled, loads hoisted ahead of their consumers as far as
    /// dependences allow, as ptxas schedules the SASS a GPU runs (the default).
    #[default]
    Scheduled,
    /// The PTX order as written (the model before 2026-11-29).
    Ptx,
}

/// Issue-to-result latencies per instruction class, in core cycles (GPGPU-Sim
/// `-ptx_opcode_latency_*` of SM7_TITANV, rounded).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// Integer and logic ops, moves, comparisons, conversions.
    pub int: u32,
    /// Single-precision add / mul / fma.
    pub fp: u32,
    /// Double precision.
    pub dp: u32,
    /// Special functions and divisions (`sin`, `rcp`, `div`, `sqrt`...).
    pub sfu: u32,
    /// Branches, barriers, exits, shuffles and votes.
    pub ctrl: u32,
    /// Shared-memory access without bank conflicts (each extra conflict adds one cycle).
    pub shared: u32,
    /// Loads from `.param` / `.const` and local accesses (modelled as constant-cache hits).
    pub constant: u32,
    /// Sectors (or lines) the load/store unit sends to the L1 per cycle.
    pub lsu_blocks_per_cycle: u32,
    /// Distinct L1 lines whose blocks the L1's data stage serves per cycle (one wavefront
    /// per 128 B line: a gather of 32 lanes over 32 lines takes 32 cycles).
    #[serde(default = "one")]
    pub l1_lines_per_cycle: u32,
    /// Memory instructions the load/store unit queues per SM.
    pub lsu_queue: u32,
    /// Shared-memory banks (4-byte words).
    pub shared_banks: u32,
    /// The order a warp issues a block's instructions in.
    #[serde(default)]
    pub issue_order: IssueOrder,
}

impl PipelineConfig {
    /// The counts that must be positive, with their keys: the first that is not.
    pub fn zero_count(&self) -> Option<&'static str> {
        [
            ("pipeline.lsu_blocks_per_cycle", self.lsu_blocks_per_cycle),
            ("pipeline.l1_lines_per_cycle", self.l1_lines_per_cycle),
            ("pipeline.lsu_queue", self.lsu_queue),
            ("pipeline.shared_banks", self.shared_banks),
        ]
        .into_iter()
        .find(|(_, v)| *v == 0)
        .map(|(k, _)| k)
    }
}

impl Default for PipelineConfig {
    /// GPGPU-Sim SM7_TITANV's `-ptx_opcode_latency_*` (rounded), its LSU and 32 banks.
    fn default() -> Self {
        PipelineConfig {
            int: 4,
            fp: 4,
            dp: 8,
            sfu: 20,
            ctrl: 2,
            shared: 24,
            constant: 8,
            lsu_blocks_per_cycle: 4,
            l1_lines_per_cycle: 1,
            lsu_queue: 2,
            shared_banks: 32,
            issue_order: IssueOrder::Scheduled,
        }
    }
}

/// Memory-path parameters beyond the GPU file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemPathConfig {
    /// L1 write policy.
    pub l1_write: WritePolicy,
    /// L2 write policy.
    pub l2_write: WritePolicy,
    /// One-way interconnect latency in core cycles (on top of flit serialisation).
    pub noc_latency: u32,
    /// Bytes of a request header (a read request is one header; a write adds its data).
    pub header_bytes: u32,
}

impl Default for MemPathConfig {
    /// Write-through L1 and write-back L2 (every shipped GPU), GPGPU-Sim's interconnect.
    fn default() -> Self {
        MemPathConfig {
            l1_write: WritePolicy::WriteThrough,
            l2_write: WritePolicy::WriteBack,
            noc_latency: 8,
            header_bytes: 8,
        }
    }
}
