//! The DRAM of a GPU configuration (`[dram]` of `configs/gpus/*.toml`): channels and their
//! bus, and the device behind each channel (banks, bank groups, rows, the JEDEC timing
//! parameters, refresh), the memory controller's queues and scheduler, and the bank hash of
//! its address mapping. The simulator's DRAM model (`sim::timing::dram`) reads it; the
//! parameters and their sources are in docs/MEMORY.md and next to each value in the files.
//!
//! Timing parameters count cycles of `clock_mhz`, GPGPU-Sim's DRAM clock domain (the
//! command clock of GDDR5 and HBM2; for GDDR5X and HBM3 the files say which clock their
//! `clock_mhz` is and convert the standard's nanoseconds to it).

use serde::{Deserialize, Serialize};

/// How a channel's controller picks the next request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DramScheduler {
    /// First-ready, first-come-first-served (Rixner et al., ISCA 2000; GPGPU-Sim
    /// `-gpgpu_dram_scheduler 1`): the oldest request whose column command can issue (a row
    /// hit) first, then the oldest; a read queue and a write queue per channel, writes
    /// drained between watermarks. Banks, rows and the timing parameters are modelled.
    #[default]
    #[serde(rename = "fr-fcfs")]
    FrFcfs,
    /// The model before issue 38: each channel serves requests in arrival order at its peak
    /// bandwidth and returns data `latency_cycles` after the transfer; no banks, rows or
    /// timing parameters.
    #[serde(rename = "fifo")]
    Fifo,
}

/// How the bank of an address is chosen inside its channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BankHash {
    /// Bank bits XOR the low row bits (permutation-based interleaving, Zhang, Zhu and Zhang,
    /// MICRO 2000; GPGPU-Sim `-dram_bnk_indexing_policy 1`): rows a power-of-two stride
    /// apart fall in different banks.
    #[default]
    Xor,
    /// The bank bits as they are (GPGPU-Sim `-dram_bnk_indexing_policy 0`).
    Linear,
}

/// How the device is refreshed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refresh {
    /// No refresh.
    #[default]
    None,
    /// Every `t_refi` all banks of the channel close their rows and take no command for
    /// `t_rfc` (REFab); the channels are staggered.
    AllBank,
    /// Each bank is refreshed once per `t_refi`, the banks of a channel evenly staggered
    /// (REFpb / REFSB of HBM2 and HBM3): that bank closes its row and takes no command for
    /// `t_rfc` (then tRFCpb), the others work on.
    PerBank,
}

/// DRAM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Technology (`GDDR5`, `HBM2`...).
    pub kind: String,
    /// Memory channels (controllers).
    pub channels: u32,
    /// Unloaded latency in core cycles beyond the L2 of a read that misses the row buffer of
    /// a precharged bank, without its data transfer (GPGPU-Sim `-dram_latency`). The FIFO
    /// model returns data this long after its transfer; the FR-FCFS model spends
    /// `latency_cycles - (t_rcd + t_cl)` (in core cycles) in the controller's pipeline and
    /// the rest in the device, so that access costs the same in both and a row hit costs
    /// `t_rcd` less, a row conflict `t_rp` more ([`DramConfig::pipeline_core_cycles`]).
    pub latency_cycles: u32,
    /// The DRAM clock the timing parameters count (GPGPU-Sim's DRAM clock domain).
    pub clock_mhz: u32,
    /// Bus width per channel.
    pub bus_bytes_per_channel: u32,
    /// Transfers per DRAM clock (4 = QDR).
    pub data_rate: u32,
    /// Peak bandwidth = channels x bus bytes x clock x data rate ([`DramConfig::peak_gbps`]).
    /// Stated in the file for the reader and checked against the four fields it derives
    /// from; the simulator uses those fields.
    pub bandwidth_gbps: f64,
    /// The controller's scheduler (`"fr-fcfs"`, the default, or `"fifo"`, the old model).
    #[serde(default)]
    pub scheduler: DramScheduler,
    /// Independent sub-channels sharing one model channel (HBM pseudo-channels): the banks
    /// and bank groups are split evenly among them, and tCCD_S, tRRD and tFAW hold per
    /// pseudo-channel; their data buses are modelled as one at the combined rate.
    pub pseudo_channels: u32,
    /// Banks per channel (all pseudo-channels together), a power of two.
    pub banks: u32,
    /// Bank groups per channel (all pseudo-channels together), a power of two dividing
    /// `banks`; tCCD_L holds inside a group.
    pub bank_groups: u32,
    /// Bytes of one row of one bank (the page the row buffer holds), a power of two of at
    /// least one L2 line.
    pub row_bytes: u32,
    /// Transfers of one column access on one pseudo-channel's bus (a burst moves
    /// `bus_bytes_per_channel / pseudo_channels x burst_length` bytes).
    pub burst_length: u32,
    /// Bank hash of the address mapping (`"xor"`, the default, or `"linear"`).
    #[serde(default)]
    pub bank_hash: BankHash,
    /// ACTIVATE to READ or WRITE (tRCD), DRAM cycles.
    pub t_rcd: u32,
    /// PRECHARGE to ACTIVATE (tRP).
    pub t_rp: u32,
    /// ACTIVATE to PRECHARGE (tRAS).
    pub t_ras: u32,
    /// ACTIVATE to ACTIVATE of one bank (tRC).
    pub t_rc: u32,
    /// READ to its first data (CAS latency, tCL).
    pub t_cl: u32,
    /// WRITE to its first data (write latency, tWL / tCWL).
    pub t_wl: u32,
    /// Column command to column command of one pseudo-channel, different bank groups
    /// (tCCD_S; GPGPU-Sim `CCD`).
    pub t_ccd_s: u32,
    /// Column command to column command in one bank group (tCCD_L; GPGPU-Sim `CCDL`).
    pub t_ccd_l: u32,
    /// ACTIVATE to ACTIVATE of one pseudo-channel (tRRD).
    pub t_rrd: u32,
    /// At most four ACTIVATEs of one pseudo-channel in this window (tFAW).
    pub t_faw: u32,
    /// End of write data to READ (tWTR; GPGPU-Sim `CDLR`).
    pub t_wtr: u32,
    /// End of write data to PRECHARGE (write recovery, tWR).
    pub t_wr: u32,
    /// READ to PRECHARGE (tRTP; GPGPU-Sim `RTPL`).
    pub t_rtp: u32,
    /// Refresh (`"none"`, `"all-bank"`, `"per-bank"`).
    #[serde(default)]
    pub refresh: Refresh,
    /// Refresh interval of each bank (tREFI); 0 with `refresh = "none"`.
    #[serde(default)]
    pub t_refi: u32,
    /// Refresh duration (tRFC, or tRFCpb with per-bank refresh).
    #[serde(default)]
    pub t_rfc: u32,
    /// Requests the scheduler chooses among, per channel, for reads (GPGPU-Sim
    /// `-gpgpu_frfcfs_dram_sched_queue_size`); later reads wait in order behind them.
    pub read_queue: u32,
    /// Write queue entries per channel (GPGPU-Sim `-dram_write_queue_size`, first field).
    pub write_queue: u32,
    /// Pending writes at which the channel starts draining writes (second field).
    pub write_high: u32,
    /// Pending writes at which a drain stops (third field).
    pub write_low: u32,
}

/// Largest bank count, queue depth and timing value accepted (far beyond any device).
const MAX_BANKS: u32 = 4096;
const MAX_QUEUE: u32 = 1 << 16;
const MAX_TIMING: u32 = 1 << 24;

impl DramConfig {
    /// Peak bandwidth in GB/s from the fields the DRAM model uses: channels x bus bytes x
    /// DRAM clock x data rate.
    pub fn peak_gbps(&self) -> f64 {
        f64::from(self.channels)
            * f64::from(self.bus_bytes_per_channel)
            * f64::from(self.clock_mhz)
            * f64::from(self.data_rate)
            / 1000.0
    }

    /// Bytes one column access moves (one pseudo-channel's bus x the burst length).
    pub fn burst_bytes(&self) -> u32 {
        self.bus_bytes_per_channel / self.pseudo_channels.max(1) * self.burst_length
    }

    /// DRAM cycles one burst occupies the channel's (combined) data bus.
    pub fn burst_cycles(&self) -> u32 {
        self.burst_length / (self.pseudo_channels.max(1) * self.data_rate.max(1))
    }

    /// Core cycles of `dram` DRAM cycles, rounded to the nearest (`core_mhz`: the core clock).
    pub fn core_cycles(&self, dram: u32, core_mhz: u32) -> u32 {
        let num = u64::from(dram) * u64::from(core_mhz);
        let den = u64::from(self.clock_mhz.max(1));
        ((2 * num + den) / (2 * den)) as u32
    }

    /// The controller's pipeline latency of the FR-FCFS model in core cycles:
    /// `latency_cycles` less the device's part of a row miss on a precharged bank,
    /// tRCD + tCL, in core cycles (rounded to the nearest).
    pub fn pipeline_core_cycles(&self, core_mhz: u32) -> u32 {
        self.latency_cycles
            .saturating_sub(self.core_cycles(self.t_rcd + self.t_cl, core_mhz))
    }

    /// Checks the fields the DRAM model relies on; `core_mhz` and `l2_line` are the GPU's
    /// core clock and L2 line. The message names the key.
    pub fn check(&self, core_mhz: u32, l2_line: u32) -> std::result::Result<(), String> {
        for (field, v) in [
            ("dram.pseudo_channels", self.pseudo_channels),
            ("dram.banks", self.banks),
            ("dram.bank_groups", self.bank_groups),
            ("dram.row_bytes", self.row_bytes),
            ("dram.burst_length", self.burst_length),
            ("dram.t_rcd", self.t_rcd),
            ("dram.t_cl", self.t_cl),
            ("dram.t_ccd_s", self.t_ccd_s),
            ("dram.read_queue", self.read_queue),
            ("dram.write_queue", self.write_queue),
            ("dram.write_high", self.write_high),
        ] {
            if v == 0 {
                return Err(format!("{field} = 0, but it must be positive"));
            }
        }
        for (field, v) in [
            ("dram.pseudo_channels", self.pseudo_channels),
            ("dram.banks", self.banks),
            ("dram.bank_groups", self.bank_groups),
            ("dram.row_bytes", self.row_bytes),
        ] {
            if !v.is_power_of_two() {
                return Err(format!(
                    "{field} = {v}, but it must be a power of two (the address mapping takes it from address bits)"
                ));
            }
        }
        if self.banks > MAX_BANKS {
            return Err(format!(
                "dram.banks = {}, more than the {MAX_BANKS} paver accepts",
                self.banks
            ));
        }
        if !self.banks.is_multiple_of(self.bank_groups)
            || !self.bank_groups.is_multiple_of(self.pseudo_channels)
        {
            return Err(format!(
                "dram.banks = {}, dram.bank_groups = {}, dram.pseudo_channels = {}: each pseudo-channel needs whole bank groups of whole banks",
                self.banks, self.bank_groups, self.pseudo_channels
            ));
        }
        if !self
            .bus_bytes_per_channel
            .is_multiple_of(self.pseudo_channels)
        {
            return Err(format!(
                "dram.bus_bytes_per_channel = {} does not split into dram.pseudo_channels = {}",
                self.bus_bytes_per_channel, self.pseudo_channels
            ));
        }
        let per_cycle = self.pseudo_channels * self.data_rate;
        if !self.burst_length.is_multiple_of(per_cycle) {
            return Err(format!(
                "dram.burst_length = {} must be a multiple of pseudo_channels x data_rate = {per_cycle} (a burst takes whole DRAM cycles on the channel's bus)",
                self.burst_length
            ));
        }
        if self.row_bytes < l2_line || self.row_bytes < self.burst_bytes() {
            return Err(format!(
                "dram.row_bytes = {} is smaller than an L2 line ({l2_line} B) or a burst ({} B)",
                self.row_bytes,
                self.burst_bytes()
            ));
        }
        let burst_time = self.burst_length / self.data_rate;
        if self.t_ccd_s < burst_time || self.t_ccd_l < self.t_ccd_s {
            return Err(format!(
                "dram.t_ccd_s = {} and dram.t_ccd_l = {}: need t_ccd_l >= t_ccd_s >= burst_length / data_rate = {burst_time} (a pseudo-channel's bus carries one burst at a time)",
                self.t_ccd_s, self.t_ccd_l
            ));
        }
        if self.t_rc < self.t_ras {
            return Err(format!(
                "dram.t_rc = {} is less than dram.t_ras = {}",
                self.t_rc, self.t_ras
            ));
        }
        for (field, v) in [
            ("dram.t_rcd", self.t_rcd),
            ("dram.t_rp", self.t_rp),
            ("dram.t_ras", self.t_ras),
            ("dram.t_rc", self.t_rc),
            ("dram.t_cl", self.t_cl),
            ("dram.t_wl", self.t_wl),
            ("dram.t_ccd_l", self.t_ccd_l),
            ("dram.t_rrd", self.t_rrd),
            ("dram.t_faw", self.t_faw),
            ("dram.t_wtr", self.t_wtr),
            ("dram.t_wr", self.t_wr),
            ("dram.t_rtp", self.t_rtp),
            ("dram.t_refi", self.t_refi),
            ("dram.t_rfc", self.t_rfc),
        ] {
            if v > MAX_TIMING {
                return Err(format!(
                    "{field} = {v}, more than the {MAX_TIMING} DRAM cycles paver accepts"
                ));
            }
        }
        for (field, v) in [
            ("dram.read_queue", self.read_queue),
            ("dram.write_queue", self.write_queue),
        ] {
            if v > MAX_QUEUE {
                return Err(format!(
                    "{field} = {v}, more than the {MAX_QUEUE} paver accepts"
                ));
            }
        }
        if !(self.write_low < self.write_high && self.write_high <= self.write_queue) {
            return Err(format!(
                "dram.write_low = {}, dram.write_high = {}, dram.write_queue = {}: need write_low < write_high <= write_queue",
                self.write_low, self.write_high, self.write_queue
            ));
        }
        if self.refresh != Refresh::None && !(self.t_rfc > 0 && self.t_rfc < self.t_refi) {
            return Err(format!(
                "dram.refresh = {:?} needs 0 < dram.t_rfc ({}) < dram.t_refi ({})",
                self.refresh, self.t_rfc, self.t_refi
            ));
        }
        let device = self.core_cycles(self.t_rcd + self.t_cl, core_mhz);
        if self.scheduler == DramScheduler::FrFcfs && self.latency_cycles < device {
            return Err(format!(
                "dram.latency_cycles = {} is less than the device's tRCD + tCL = {} + {} DRAM cycles = {device} core cycles it includes",
                self.latency_cycles, self.t_rcd, self.t_cl
            ));
        }
        Ok(())
    }
}
