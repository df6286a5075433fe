//! The statistics of a timing run: plain serde structs whose counters add; the JSON is
//! byte-identical for identical inputs.

use super::cache::CacheStats;
use super::config::TimingConfig;
use super::dram::DramStats;
use super::noc::NocStats;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Per-SM counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmStats {
    /// Cycles with at least one resident TB.
    pub busy_cycles: u64,
    /// TBs run to completion.
    pub tbs: u64,
    /// Warp instructions issued.
    pub warp_instructions: u64,
    /// Thread instructions (lanes with a true guard).
    pub thread_instructions: u64,
}

impl AddAssign<&SmStats> for SmStats {
    fn add_assign(&mut self, o: &SmStats) {
        self.busy_cycles += o.busy_cycles;
        self.tbs += o.tbs;
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
    }
}

/// What a run's schedule was made for (`paver-schedule/1`'s policy, `num_sms`,
/// `tbs_per_sm`), with its number of groups.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleShape {
    /// The grouping policy.
    pub policy: String,
    /// SMs the groups were made for.
    pub num_sms: u32,
    /// TBs per SM (x) the groups were made for.
    pub tbs_per_sm: u32,
    /// Groups.
    pub groups: usize,
    /// The named departures from the paper the groups were made with (the schedule's
    /// `stats`; issue 39), as keys of this object.
    #[serde(flatten)]
    pub departures: graph_partition::Departures,
}

/// Everything a run reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Kernel name.
    pub kernel: String,
    /// TB scheduling policy.
    pub tb_policy: String,
    /// Warp scheduling policy.
    pub warp_policy: String,
    /// Task stealing enabled (PAVER policies).
    pub steal: bool,
    /// Stolen TBs capped at the recipient's free contexts (`--steal-cap`; a departure from
    /// PAVER Algorithm 2, off by default).
    #[serde(default)]
    pub steal_cap: bool,
    /// TBs run: the grid's, and those of every grid it launched from the device
    /// (`device_launches.child_tbs` of them).
    pub tbs: u64,
    /// Resident TBs per SM used.
    pub tbs_per_sm: u32,
    /// How `tbs_per_sm` was computed: every limit, the limiter and the registers' source.
    pub occupancy: gpu::Occupancy,
    /// Core cycles until the last TB finished.
    pub cycles: u64,
    /// Warp instructions per cycle over the whole GPU.
    pub ipc: f64,
    /// Warp instructions issued.
    pub warp_instructions: u64,
    /// Thread instructions.
    pub thread_instructions: u64,
    /// TBs moved by task stealing.
    pub stolen_tbs: u64,
    /// The run ended at [`super::SimOptions::stop_after_instructions`] with TBs still to
    /// run: every counter covers only the prefix simulated (absent from the JSON otherwise).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The schedule the PAVER runtime ran: its policy and the GPU its groups were made for
    /// (absent for the other TB policies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleShape>,
    /// L1 data caches, summed over SMs (block requests: 32 B sectors when sectored).
    /// `reservation_fails` counts each refused request once: it then waits for the fill
    /// that admits it instead of retrying.
    pub l1: CacheStats,
    /// L1 data-cache bytes per SM in this run: the unified array minus the shared-memory
    /// carveout on Volta and later ([`gpu::GpuConfig::l1_bytes`]), else the
    /// configured size.
    #[serde(default)]
    pub l1_bytes: u64,
    /// Shared-memory carveout per SM in bytes (0 without a unified L1 / shared array).
    #[serde(default)]
    pub shared_carveout_bytes: u64,
    /// L2, summed over slices (`reservation_fails` as for the L1).
    pub l2: CacheStats,
    /// Interconnect.
    pub noc: NocStats,
    /// DRAM.
    pub dram: DramStats,
    /// Per SM.
    pub sms: Vec<SmStats>,
    /// The iPAWS decision and phase times (`--warp-policy ipaws` only; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipaws: Option<super::warp_sched::IpawsStats>,
    /// Intra-cluster coalescing and the redundancy metric (present when an `icc` key is on,
    /// `--icc`; absent otherwise, so other runs' JSON is unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icc: Option<super::icc::IccStats>,
    /// The Locality Descriptor's L1 mechanisms (`--cache-policy ld`, `--prefetch`; absent
    /// when neither is on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ld: Option<super::ld_cache::LdStats>,
    /// Local and remote accesses per module of a multi-module GPU (`--gpu mcm4`, issue 17;
    /// absent on a GPU with one module, so other runs' JSON is unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<super::numa::NumaStats>,
    /// The locality ledger (`--explain`; absent otherwise): per TB, where and beside whom it
    /// ran and whose L1 lines served its reads ([`super::ledger`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<super::ledger::Ledger>,
    /// What sampled simulation did (`--sample`; absent on a full run): the totals above
    /// then include the skipped TBs' extrapolated share ([`super::sample`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingStats>,
    /// Grids launched from the device (issue 43, [`super::dp`]): their number, TBs, depth
    /// and per-grid timeline (absent when the kernel launches none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_launches: Option<super::dp::DeviceLaunchStats>,
    /// The configuration the run used.
    pub config: TimingConfig,
}

impl Stats {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// What sampling did, in the stats (key `sampling`; absent on a full run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingStats {
    /// TB completions per window.
    pub window_tbs: u64,
    /// Windows over which the rates had to stay within the tolerance.
    pub windows: u32,
    /// The tolerance (relative).
    pub tolerance: f64,
    /// Whether the rates converged (else the launch ran in full and nothing was skipped).
    pub converged: bool,
    /// TBs completed when the warm-up ended (the L2 having missed as many blocks as it
    /// holds; 0 if it never did).
    pub warm_after_tbs: u64,
    /// TBs completed when the rates converged (0 if they never did).
    pub converged_after_tbs: u64,
    /// TBs simulated in detail.
    pub detailed_tbs: u64,
    /// TBs skipped and extrapolated.
    pub skipped_tbs: u64,
    /// `detailed_tbs / tbs`.
    pub sampled_fraction: f64,
    /// Windows measured (warm-up windows excluded).
    pub measured_windows: u64,
    /// Cycles simulated (the extrapolated `cycles` adds the skipped TBs' share).
    pub simulated_cycles: u64,
    /// The criterion's observed drift (the largest relative move of cycles, L1 and L2
    /// accesses and DRAM bytes per instruction over the last `windows` windows) times the
    /// skipped
    /// fraction; 0 when nothing was skipped. Not a bound on a trend the first waves do
    /// not show (module docs).
    pub error_bound: f64,
    /// Every measured window, in order: what the convergence test and the extrapolation
    /// saw.
    pub measured: Vec<WindowRates>,
}

/// One measured window: its warp instructions, and the rates per warp instruction since
/// the warm-up at its end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowRates {
    /// Detailed TB completions at the window's end.
    pub end_tbs: u64,
    /// Warp instructions issued in the window.
    pub warp_instructions: u64,
    /// Cycles per warp instruction (1 / IPC).
    pub cycles: f64,
    /// L1 accesses per warp instruction.
    pub l1_accesses: f64,
    /// L2 accesses per warp instruction.
    pub l2_accesses: f64,
    /// DRAM reads per warp instruction.
    pub dram_reads: f64,
}
