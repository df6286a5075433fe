//! GPU configurations (`configs/gpus/*.toml`): PAVER Table 1 values plus cache, NoC and DRAM
//! geometry from the public GPGPU-Sim / Accel-Sim configurations. The four shipped files are
//! compiled in, so lookup by name works from any directory; any other file loads by path.
//! The simulator reuses [`GpuConfig`].

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use crate::dram::{BankHash, DramConfig, DramScheduler, Refresh};
use crate::timing::{MemPathConfig, PipelineConfig};

/// One GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// Canonical name (`titanv`).
    pub name: String,
    /// Architecture family (`volta`).
    pub arch: String,
    /// Human-readable description.
    pub description: String,
    /// Where the numbers come from.
    pub source: String,
    /// SM resources and limits.
    pub core: CoreConfig,
    /// Per-SM L1 data cache.
    pub l1: CacheConfig,
    /// Shared L2 (all slices together in `size_bytes`).
    pub l2: L2Config,
    /// SM <-> memory partition network.
    pub interconnect: InterconnectConfig,
    /// DRAM.
    pub dram: DramConfig,
    /// Multi-module (NUMA) organisation (`[numa]`; absent on a single-module GPU, and then
    /// left out of the JSON, so those configurations echo what they always did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<NumaConfig>,
    /// Pipeline latencies (`[pipeline]`), read by the timing model's configuration, which
    /// echoes them; left out of this echo. `None`: the defaults ([`PipelineConfig`]).
    #[serde(default, skip_serializing)]
    pub pipeline: Option<PipelineConfig>,
    /// Write policies and interconnect parameters (`[mem]`), as `pipeline`.
    #[serde(default, skip_serializing)]
    pub mem: Option<MemPathConfig>,
}

/// A multi-module GPU (seed paper 004 §5, after MCM-GPU): the SMs, L2 slices and DRAM
/// channels are split into `modules` equal consecutive groups (NUMA zones); a request to
/// memory owned by another module crosses the inter-module link (`sim::timing::numa`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumaConfig {
    /// Modules (zones), a power of two dividing the SMs, L2 slices and DRAM channels.
    pub modules: u32,
    /// Bandwidth of each module's link to the others, per direction, in GB/s.
    pub link_gbps: f64,
    /// One-way link latency in core cycles (on top of the serialisation).
    pub link_latency_cycles: u32,
    /// Page size in bytes (the granularity of interleaving and first-touch placement).
    pub page_bytes: u64,
}

/// SM resources and occupancy limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreConfig {
    /// Number of SMs.
    pub num_sms: u32,
    /// Core clock.
    pub clock_mhz: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// Resident TB limit per SM.
    pub max_tbs_per_sm: u32,
    /// Resident warp limit per SM.
    pub max_warps_per_sm: u32,
    /// Resident thread limit per SM.
    pub max_threads_per_sm: u32,
    /// Largest TB the architecture accepts.
    pub max_threads_per_tb: u32,
    /// 32-bit registers per SM.
    pub registers_per_sm: u32,
    /// Most registers one thread may use.
    pub max_registers_per_thread: u32,
    /// Registers are allocated per warp in multiples of this.
    pub register_alloc_unit: u32,
    /// Shared memory per SM in bytes (the shared side of the L1/shared split).
    pub shared_mem_per_sm: u32,
    /// Most shared memory one TB may use.
    pub max_shared_mem_per_tb: u32,
    /// Shared memory is allocated per TB in multiples of this.
    pub shared_alloc_unit: u32,
    /// Shared memory the driver reserves per TB (1 KB on cc >= 8.0).
    pub shared_reserved_per_tb: u32,
    /// Warp schedulers per SM.
    pub warp_schedulers_per_sm: u32,
    /// Fixed time from a kernel's start to its first TB's dispatch, in nanoseconds: the
    /// launch cost a GPU's elapsed-cycle counter includes (0: not modelled). Simulated
    /// cycles start at [`CoreConfig::launch_cycles`].
    #[serde(default)]
    pub launch_ns: u32,
}

impl CoreConfig {
    /// [`CoreConfig::launch_ns`] in core cycles (rounded up).
    pub fn launch_cycles(&self) -> u64 {
        (u64::from(self.launch_ns) * u64::from(self.clock_mhz)).div_ceil(1000)
    }
}

/// A set-associative cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Capacity = sets x ways x line.
    pub size_bytes: u64,
    /// Sets.
    pub sets: u32,
    /// Ways.
    pub ways: u32,
    /// Line size.
    pub line_bytes: u32,
    /// Sectored lines (32 B sectors) as in GPGPU-Sim's `S:` caches.
    pub sectored: bool,
    /// MSHR entries.
    pub mshr_entries: u32,
    /// Requests one MSHR entry can merge.
    pub mshr_max_merge: u32,
    /// Hit latency in core cycles.
    pub latency_cycles: u32,
    /// How the set is chosen from the line address (GPGPU-Sim's `set_index_function`).
    #[serde(default)]
    pub set_index: SetIndex,
    /// Bytes of the unified L1 / shared-memory array per SM (Volta 128 KB, Ampere and Hopper
    /// 256 KB); 0 = no unified array: the L1 is `size_bytes` whatever shared memory is used
    /// (Fermi and Pascal keep their fixed split).
    #[serde(default)]
    pub unified_bytes: u64,
    /// Shared-memory carveouts the architecture supports, in KB, ascending (CUDA C++
    /// Programming Guide / tuning guides); the L1 gets `unified_bytes` minus the smallest
    /// carveout that holds the shared memory in use. See [`GpuConfig::l1_bytes`].
    #[serde(default)]
    pub shared_carveouts_kb: Vec<u32>,
    /// Pins the carveout (KB of shared memory) instead of choosing it from the kernel's
    /// use, like `cudaFuncAttributePreferredSharedMemoryCarveout`; none = adaptive.
    #[serde(default)]
    pub shared_carveout_kb: Option<u32>,
}

/// How a cache picks the set of a line (GPGPU-Sim `set_index_function`, the last letter of
/// `<rep>:<wr>:<alloc>:<wr_alloc>:<set_index_fn>` in `-gpgpu_cache:dl1/dl2`). In an L2
/// slice it applies to the slice-local line number (the line address with the part that
/// chose the slice divided out), so the set never re-uses the bits that chose the slice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SetIndex {
    /// `L`: line number modulo the number of sets.
    #[default]
    Linear,
    /// `X`: the low set bits XOR the next set-width bits (GPGPU-Sim `bitwise_hash_function`).
    Xor,
    /// `P`: IPOLY, the line number as a GF(2) polynomial modulo an irreducible polynomial of
    /// degree log2(sets) (Rau, ISCA 1991; GPGPU-Sim `ipoly_hash_function`).
    Ipoly,
    /// `H`: the Fermi L1 hash of Nugteren et al., HPCA 2014 (32 or 64 sets, 128 B lines).
    Fermi,
}

/// How the L2 slice (memory sub-partition) of a line is chosen (GPGPU-Sim
/// `-gpgpu_memory_partition_indexing`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SliceIndex {
    /// `0` (consecutive): line number modulo the number of slices.
    Linear,
    /// `2` (IPOLY): the `2^k` part of `S = m * 2^k` from an IPOLY hash of the line number
    /// (Rau, ISCA 1991; GPGPU-Sim `ipoly_hash_function`), the odd part `m` from a hash of the
    /// line bits above it; with IPOLY sets, slice and set bits come from one IPOLY hash
    /// (`sim::timing::addr_map`).
    #[default]
    Ipoly,
}

/// The L2, split in slices (one per memory sub-partition).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Config {
    /// Total capacity = slices x sets_per_slice x ways x line.
    pub size_bytes: u64,
    /// Slices.
    pub slices: u32,
    /// Sets per slice.
    pub sets_per_slice: u32,
    /// Ways.
    pub ways: u32,
    /// Line size.
    pub line_bytes: u32,
    /// Sectored lines.
    pub sectored: bool,
    /// MSHR entries per slice.
    pub mshr_entries: u32,
    /// Requests one MSHR entry can merge.
    pub mshr_max_merge: u32,
    /// Access latency (GPGPU-Sim ROP latency) in core cycles.
    pub latency_cycles: u32,
    /// How the slice of a line is chosen.
    #[serde(default)]
    pub slice_index: SliceIndex,
    /// How the set inside a slice is chosen (from the slice-local line number).
    #[serde(default)]
    pub set_index: SetIndex,
}

/// The network between SM clusters and memory partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterconnectConfig {
    /// `crossbar`.
    pub topology: String,
    /// Clusters (network ports on the SM side).
    pub clusters: u32,
    /// SMs sharing one port.
    pub sms_per_cluster: u32,
    /// Flit size.
    pub flit_bytes: u32,
    /// Network clock.
    pub clock_mhz: u32,
}

/// Largest GPU configuration file read (1 MiB; the shipped ones are about 5 KB).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Upper limits [`GpuConfig::validate`] puts on sizes that the simulator allocates in
/// proportion to (per SM, per cache line, per port).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// SMs and interconnect clusters (an H100 has 132).
    pub sms: u64,
    /// TB slots, warp slots and warp schedulers per SM (GPUs have at most 64 warps).
    pub per_sm: u64,
    /// L1 bytes per SM (an H100 has 256 KB).
    pub l1_bytes: u64,
    /// L2 bytes (an H100 has 50 MB).
    pub l2_bytes: u64,
    /// MSHR entries per cache.
    pub mshr_entries: u64,
    /// L2 slices and DRAM channels (an H100 has 80 and 40).
    pub ports: u64,
}

/// The limits of [`GpuConfig::validate`].
pub const LIMITS: Limits = Limits {
    sms: 4096,
    per_sm: 1024,
    l1_bytes: 16 << 20,
    l2_bytes: 1 << 30,
    mshr_entries: 1 << 16,
    ports: 4096,
};

const BUILTIN: [(&str, &str); 6] = [
    ("gtx480", include_str!("../../configs/gpus/gtx480.toml")),
    (
        "titanx_pascal",
        include_str!("../../configs/gpus/titanx_pascal.toml"),
    ),
    ("titanv", include_str!("../../configs/gpus/titanv.toml")),
    ("h100", include_str!("../../configs/gpus/h100.toml")),
    // The clustered GPU of the ICC seed paper (002), `--gpu icc`.
    ("icc", include_str!("../../configs/gpus/icc.toml")),
    // The 4-module NUMA GPU of the Locality Descriptor seed paper (004 §5), `--gpu mcm4`.
    ("mcm4", include_str!("../../configs/gpus/mcm4.toml")),
];

const ALIASES: [(&str, &str); 4] = [
    ("fermi", "gtx480"),
    ("pascal", "titanx_pascal"),
    ("volta", "titanv"),
    ("hopper", "h100"),
];

impl NumaConfig {
    /// What a NUMA organisation of `g` needs: a power-of-two module count (the zone is a
    /// field of address bits, seed paper 004 §4.6) that divides the SMs, the L2 slices and
    /// the DRAM channels, a positive link bandwidth and a power-of-two page.
    fn check(&self, g: &GpuConfig) -> std::result::Result<(), String> {
        let m = self.modules;
        if !m.is_power_of_two() {
            return Err(format!("numa.modules = {m}, but it must be a power of two"));
        }
        for (field, n) in [
            ("core.num_sms", g.core.num_sms),
            ("l2.slices", g.l2.slices),
            ("dram.channels", g.dram.channels),
        ] {
            if n % m != 0 {
                return Err(format!(
                    "numa.modules = {m} does not divide {field} = {n}: every module owns an equal share"
                ));
            }
        }
        if !(self.link_gbps.is_finite() && self.link_gbps > 0.0) {
            return Err(format!(
                "numa.link_gbps = {}, but it must be a positive number",
                self.link_gbps
            ));
        }
        if !self.page_bytes.is_power_of_two() || self.page_bytes < 128 {
            return Err(format!(
                "numa.page_bytes = {}, but a page is a power of two of at least 128 bytes",
                self.page_bytes
            ));
        }
        Ok(())
    }
}

impl GpuConfig {
    /// Shared memory one TB of the kernel is allocated on an SM, in bytes: its static +
    /// dynamic `shared` plus the driver's `shared_reserved_per_tb`, rounded up to
    /// `shared_alloc_unit` (the CUDA occupancy calculator's rule; the occupancy limit and the
    /// L1/shared carveout both count shared memory this way).
    pub fn shared_allocation_per_tb(&self, shared: u64) -> u64 {
        let c = &self.core;
        let unit = u64::from(c.shared_alloc_unit.max(1));
        (shared + u64::from(c.shared_reserved_per_tb)).div_ceil(unit) * unit
    }

    /// Names of the built-in configurations.
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|b| b.0)
    }

    /// A built-in configuration by name or alias (`fermi`, `pascal`, `volta`, `hopper`).
    pub fn builtin(name: &str) -> Result<GpuConfig> {
        let lower = name.to_ascii_lowercase();
        let canonical = ALIASES
            .iter()
            .find(|a| a.0 == lower)
            .map_or(lower.as_str(), |a| a.1);
        let text = BUILTIN
            .iter()
            .find(|b| b.0 == canonical)
            .map(|b| b.1)
            .ok_or_else(|| Error::GpuConfig {
                name: name.to_string(),
                message: format!(
                    "unknown GPU; built-in: {} (aliases fermi, pascal, volta, hopper), or give a path to a .toml file",
                    BUILTIN.map(|b| b.0).join(", ")
                ),
            })?;
        Self::from_toml_str(text, canonical)
    }

    /// Parses TOML text; `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<GpuConfig> {
        let cfg: GpuConfig = toml::from_str(text).map_err(|e| Error::GpuConfig {
            name: origin.to_string(),
            message: e.to_string(),
        })?;
        cfg.validate(origin)?;
        Ok(cfg)
    }

    /// Loads a configuration file (a regular file or a pipe of at most
    /// [`MAX_CONFIG_BYTES`]).
    pub fn from_path(path: &Path) -> Result<GpuConfig> {
        let text = launch::budget::read_input_text(path, MAX_CONFIG_BYTES).map_err(|message| {
            Error::GpuConfig {
                name: path.display().to_string(),
                message,
            }
        })?;
        Self::from_toml_str(&text, &path.display().to_string())
    }

    /// Whether [`GpuConfig::lookup`] takes `spec` as a path (an existing file, or text
    /// with a `/` or ending in `.toml`) rather than a built-in name.
    pub fn names_file(spec: &str) -> bool {
        Path::new(spec).is_file() || spec.contains('/') || spec.ends_with(".toml")
    }

    /// A path if `spec` names an existing file or looks like one (contains `/` or ends in
    /// `.toml`), otherwise a built-in name or alias.
    pub fn lookup(spec: &str) -> Result<GpuConfig> {
        let p = Path::new(spec);
        if Self::names_file(spec) {
            Self::from_path(p)
        } else {
            Self::builtin(spec)
        }
    }

    /// The shared-memory carveout in bytes for `shared_in_use` bytes of shared memory per
    /// SM (resident TBs x their allocation): the pinned carveout if one is set, else the
    /// smallest supported carveout that holds `shared_in_use` (the largest one when none
    /// does). 0 without a unified array.
    pub fn shared_carveout_bytes(&self, shared_in_use: u64) -> u64 {
        let l1 = &self.l1;
        if l1.unified_bytes == 0 {
            return 0;
        }
        let kb = match l1.shared_carveout_kb {
            Some(k) => k,
            None => l1
                .shared_carveouts_kb
                .iter()
                .copied()
                .find(|&k| u64::from(k) * 1024 >= shared_in_use)
                .or_else(|| l1.shared_carveouts_kb.last().copied())
                .unwrap_or(0),
        };
        (u64::from(kb) * 1024).min(l1.unified_bytes)
    }

    /// L1 data-cache bytes per SM when `shared_in_use` bytes of shared memory are in use per
    /// SM: the unified array minus the carveout on Volta and later (CUDA C++ Programming
    /// Guide, compute capability 7.x / 9.0: "the portion of the L1 not used by shared
    /// memory"), else the fixed `l1.size_bytes`. Rounded down to whole ways.
    pub fn l1_bytes(&self, shared_in_use: u64) -> u64 {
        let l1 = &self.l1;
        if l1.unified_bytes == 0 {
            return l1.size_bytes;
        }
        let way = u64::from(l1.sets.max(1)) * u64::from(l1.line_bytes.max(1));
        let bytes = l1.unified_bytes - self.shared_carveout_bytes(shared_in_use);
        (bytes / way).max(1) * way
    }

    /// Ways of the L1 for [`GpuConfig::l1_bytes`]: the sets stay and the ways scale, as in
    /// GPGPU-Sim's adaptive L1 (`set_assoc` from the chosen `-gpgpu_shmem_option`): the set
    /// index bits are wired in hardware, the carveout enables or disables ways.
    pub fn l1_ways(&self, shared_in_use: u64) -> u32 {
        let way = u64::from(self.l1.sets.max(1)) * u64::from(self.l1.line_bytes.max(1));
        (self.l1_bytes(shared_in_use) / way).max(1) as u32
    }

    /// Checks that the configuration describes a GPU the occupancy calculator and the
    /// simulator can model: every count, size, clock and rate positive, warps of 32
    /// threads, cache capacities equal to their geometry, set-index functions that fit their
    /// set counts, and sizes below [`LIMITS`] (far beyond any GPU, so a typo cannot make the
    /// simulator allocate the machine's memory). Run it on every configuration, after every
    /// override; `origin` names the configuration in the error, which names the key.
    pub fn validate(&self, origin: &str) -> Result<()> {
        let bad = |message: String| Error::GpuConfig {
            name: origin.to_string(),
            message,
        };
        if let Some(field) = self.pipeline.as_ref().and_then(|p| p.zero_count()) {
            return Err(bad(format!("{field} = 0, but it must be positive")));
        }
        let c = &self.core;
        let (l1, l2, noc, dram) = (&self.l1, &self.l2, &self.interconnect, &self.dram);
        for (field, v) in [
            ("core.num_sms", c.num_sms),
            ("core.clock_mhz", c.clock_mhz),
            ("core.warp_size", c.warp_size),
            ("core.max_tbs_per_sm", c.max_tbs_per_sm),
            ("core.max_warps_per_sm", c.max_warps_per_sm),
            ("core.max_threads_per_sm", c.max_threads_per_sm),
            ("core.max_threads_per_tb", c.max_threads_per_tb),
            ("core.registers_per_sm", c.registers_per_sm),
            ("core.max_registers_per_thread", c.max_registers_per_thread),
            ("core.register_alloc_unit", c.register_alloc_unit),
            ("core.shared_alloc_unit", c.shared_alloc_unit),
            ("core.warp_schedulers_per_sm", c.warp_schedulers_per_sm),
            ("l1.sets", l1.sets),
            ("l1.ways", l1.ways),
            ("l1.line_bytes", l1.line_bytes),
            ("l1.mshr_entries", l1.mshr_entries),
            ("l1.mshr_max_merge", l1.mshr_max_merge),
            ("l2.slices", l2.slices),
            ("l2.sets_per_slice", l2.sets_per_slice),
            ("l2.ways", l2.ways),
            ("l2.line_bytes", l2.line_bytes),
            ("l2.mshr_entries", l2.mshr_entries),
            ("l2.mshr_max_merge", l2.mshr_max_merge),
            ("interconnect.clusters", noc.clusters),
            ("interconnect.sms_per_cluster", noc.sms_per_cluster),
            ("interconnect.flit_bytes", noc.flit_bytes),
            ("interconnect.clock_mhz", noc.clock_mhz),
            ("dram.channels", dram.channels),
            ("dram.clock_mhz", dram.clock_mhz),
            ("dram.bus_bytes_per_channel", dram.bus_bytes_per_channel),
            ("dram.data_rate", dram.data_rate),
        ] {
            if v == 0 {
                return Err(bad(format!("{field} = 0, but it must be positive")));
            }
        }
        if c.warp_size != 32 {
            return Err(bad(format!(
                "core.warp_size = {}: paver models 32-thread warps (every NVIDIA GPU), the only size supported",
                c.warp_size
            )));
        }
        if !(dram.bandwidth_gbps.is_finite() && dram.bandwidth_gbps > 0.0) {
            return Err(bad(format!(
                "dram.bandwidth_gbps = {}, but it must be a positive number",
                dram.bandwidth_gbps
            )));
        }
        // A stated bandwidth the model does not run at would be silently ignored: the
        // channels move `peak_gbps` (1 % tolerance for rounded figures in a file).
        let peak = dram.peak_gbps();
        if (dram.bandwidth_gbps - peak).abs() > 0.01 * peak {
            return Err(bad(format!(
                "dram.bandwidth_gbps = {} disagrees with channels x bus_bytes_per_channel x clock_mhz x data_rate = {} x {} x {} x {} = {peak} GB/s, the bandwidth the DRAM model runs at; change those fields (`--set dram.clock_mhz=...` updates bandwidth_gbps)",
                dram.bandwidth_gbps,
                dram.channels,
                dram.bus_bytes_per_channel,
                dram.clock_mhz,
                dram.data_rate
            )));
        }
        for (field, v) in [
            ("l1.line_bytes", l1.line_bytes),
            ("l2.line_bytes", l2.line_bytes),
        ] {
            if !v.is_power_of_two() || v < 32 {
                return Err(bad(format!(
                    "{field} = {v}, but a line is a power of two of at least 32 bytes (one sector)"
                )));
            }
        }
        dram.check(c.clock_mhz, l2.line_bytes).map_err(bad)?;
        for (field, v, max) in [
            ("core.num_sms", u64::from(c.num_sms), LIMITS.sms),
            (
                "core.max_tbs_per_sm",
                u64::from(c.max_tbs_per_sm),
                LIMITS.per_sm,
            ),
            (
                "core.max_warps_per_sm",
                u64::from(c.max_warps_per_sm),
                LIMITS.per_sm,
            ),
            (
                "core.warp_schedulers_per_sm",
                u64::from(c.warp_schedulers_per_sm),
                LIMITS.per_sm,
            ),
            ("l1.size_bytes", l1.size_bytes, LIMITS.l1_bytes),
            ("l1.unified_bytes", l1.unified_bytes, LIMITS.l1_bytes),
            (
                "l1.mshr_entries",
                u64::from(l1.mshr_entries),
                LIMITS.mshr_entries,
            ),
            ("l2.size_bytes", l2.size_bytes, LIMITS.l2_bytes),
            ("l2.slices", u64::from(l2.slices), LIMITS.ports),
            (
                "l2.mshr_entries",
                u64::from(l2.mshr_entries),
                LIMITS.mshr_entries,
            ),
            ("interconnect.clusters", u64::from(noc.clusters), LIMITS.sms),
            ("dram.channels", u64::from(dram.channels), LIMITS.ports),
        ] {
            if v > max {
                return Err(bad(format!(
                    "{field} = {v}, more than the {max} paver accepts (far beyond any GPU)"
                )));
            }
        }
        let l1 = u64::from(self.l1.sets) * u64::from(self.l1.ways) * u64::from(self.l1.line_bytes);
        if l1 != self.l1.size_bytes {
            return Err(bad(format!(
                "l1.size_bytes = {} but sets x ways x line = {l1}",
                self.l1.size_bytes
            )));
        }
        if self.l1.unified_bytes > 0 {
            let kb = &self.l1.shared_carveouts_kb;
            if kb.windows(2).any(|w| w[0] >= w[1]) || kb.is_empty() {
                return Err(bad(
                    "l1.shared_carveouts_kb must be a non-empty ascending list with a unified L1"
                        .to_string(),
                ));
            }
            let most = kb.iter().chain(&self.l1.shared_carveout_kb).max().copied();
            if most.is_some_and(|k| u64::from(k) * 1024 >= self.l1.unified_bytes) {
                return Err(bad(format!(
                    "a shared carveout leaves no L1 of l1.unified_bytes = {}",
                    self.l1.unified_bytes
                )));
            }
        }
        for (field, sets, f) in [
            ("l1", self.l1.sets, self.l1.set_index),
            ("l2", self.l2.sets_per_slice, self.l2.set_index),
        ] {
            let ok = match f {
                SetIndex::Linear => sets > 0,
                SetIndex::Xor | SetIndex::Ipoly => sets.is_power_of_two(),
                SetIndex::Fermi => sets == 32 || sets == 64,
            };
            if !ok {
                return Err(bad(format!(
                    "{field}.set_index = {f:?} does not work with {sets} sets (xor and ipoly need a power of two, fermi 32 or 64)"
                )));
            }
        }
        if let Some(n) = &self.numa {
            n.check(self).map_err(bad)?;
        }
        let l2 = u64::from(self.l2.slices)
            * u64::from(self.l2.sets_per_slice)
            * u64::from(self.l2.ways)
            * u64::from(self.l2.line_bytes);
        if l2 != self.l2.size_bytes {
            return Err(bad(format!(
                "l2.size_bytes = {} but slices x sets x ways x line = {l2}",
                self.l2.size_bytes
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_match_paper_table_1() {
        let f = GpuConfig::builtin("fermi").unwrap();
        assert_eq!(
            (
                f.core.num_sms,
                f.core.max_tbs_per_sm,
                f.core.max_warps_per_sm
            ),
            (15, 8, 48)
        );
        assert_eq!(
            (f.l1.size_bytes, f.core.shared_mem_per_sm, f.l2.size_bytes),
            (16 << 10, 48 << 10, 768 << 10)
        );
        assert_eq!(f.core.clock_mhz, 700);
        let p = GpuConfig::builtin("pascal").unwrap();
        assert_eq!(
            (
                p.core.num_sms,
                p.core.max_tbs_per_sm,
                p.core.max_threads_per_sm
            ),
            (28, 32, 2048)
        );
        assert_eq!(
            (p.l1.size_bytes, p.core.shared_mem_per_sm, p.l2.size_bytes),
            (48 << 10, 96 << 10, 3 << 20)
        );
        assert_eq!(p.core.clock_mhz, 1000);
        let v = GpuConfig::builtin("volta").unwrap();
        assert_eq!(
            (
                v.core.num_sms,
                v.core.max_tbs_per_sm,
                v.core.max_warps_per_sm
            ),
            (80, 32, 64)
        );
        assert_eq!(
            (v.l1.size_bytes, v.core.shared_mem_per_sm, v.l2.size_bytes),
            (32 << 10, 96 << 10, 4608 << 10)
        );
        assert_eq!(v.core.clock_mhz, 1200);
        let h = GpuConfig::builtin("hopper").unwrap();
        assert_eq!(h.core.num_sms, 132);
        assert_eq!(h.name, "h100");
        for name in GpuConfig::builtin_names() {
            let c = GpuConfig::builtin(name).unwrap();
            assert_eq!(c.name, name);
            let bw = c.dram.peak_gbps();
            assert!((bw - c.dram.bandwidth_gbps).abs() < 0.1, "{name}: {bw}");
        }
    }

    #[test]
    fn unified_l1_follows_the_carveout_rule() {
        const K: u64 = 1024;
        // Volta: 128 KB array, carveouts 0, 8, 16, 32, 64, 96 KB (CUDA programming guide).
        let v = GpuConfig::builtin("volta").unwrap();
        assert_eq!(v.l1_bytes(0), 128 * K);
        assert_eq!(v.l1_ways(0), 256); // 4 sets x 128 B lines
        assert_eq!(v.l1_bytes(1), 120 * K);
        assert_eq!(v.l1_bytes(64 * K), 64 * K);
        assert_eq!(v.l1_bytes(64 * K + 1), 32 * K);
        assert_eq!(v.l1_bytes(500 * K), 32 * K); // more than any carveout: the largest
        let mut pinned = v.clone();
        pinned.l1.shared_carveout_kb = Some(32);
        assert_eq!(pinned.l1_bytes(0), 96 * K);
        // Hopper: 256 KB array, carveouts 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KB.
        let h = GpuConfig::builtin("h100").unwrap();
        assert_eq!(h.l1_bytes(K), 248 * K);
        assert_eq!(h.l1_bytes(65 * K), 156 * K);
        assert_eq!(h.l1_bytes(164 * K), 92 * K);
        assert_eq!(h.l1_bytes(228 * K), 28 * K);
        // Fermi and Pascal: fixed split.
        for name in ["fermi", "pascal"] {
            let c = GpuConfig::builtin(name).unwrap();
            assert_eq!(c.l1_bytes(0), c.l1.size_bytes);
            assert_eq!(c.l1_bytes(40 * K), c.l1.size_bytes);
            assert_eq!(c.shared_carveout_bytes(40 * K), 0);
        }
    }

    #[test]
    fn lookup_by_path_and_unknown_name() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/gpus/titanv.toml");
        assert_eq!(
            GpuConfig::lookup(path).unwrap(),
            GpuConfig::builtin("titanv").unwrap()
        );
        let e = GpuConfig::lookup("kepler").unwrap_err();
        assert!(e.to_string().contains("unknown GPU"), "{e}");
        let e = GpuConfig::from_toml_str("name = 1", "x.toml").unwrap_err();
        assert!(e.to_string().contains("x.toml"), "{e}");
    }

    #[test]
    fn validation_names_the_key() {
        let volta = GpuConfig::builtin("volta").unwrap();
        type Edit = fn(&mut GpuConfig);
        let cases: [(Edit, &str); 11] = [
            (|g| g.dram.channels = 0, "dram.channels = 0"),
            (
                |g| g.core.warp_schedulers_per_sm = 0,
                "core.warp_schedulers_per_sm = 0",
            ),
            (|g| g.interconnect.clusters = 0, "interconnect.clusters = 0"),
            (|g| g.core.warp_size = 7, "core.warp_size = 7"),
            (|g| g.core.num_sms = 0, "core.num_sms = 0"),
            (
                |g| g.core.num_sms = 100_000_000,
                "core.num_sms = 100000000, more than the 4096",
            ),
            (|g| g.dram.bandwidth_gbps = f64::NAN, "dram.bandwidth_gbps"),
            (
                |g| g.dram.bandwidth_gbps = 10_000.0,
                "dram.bandwidth_gbps = 10000 disagrees with channels",
            ),
            (|g| g.l1.line_bytes = 96, "l1.line_bytes = 96"),
            (|g| g.l2.size_bytes = 1 << 40, "l2.size_bytes"),
            (
                |g| g.l1.ways = 3,
                "l1.size_bytes = 32768 but sets x ways x line = 1536",
            ),
        ];
        for (edit, want) in cases {
            let mut g = volta.clone();
            edit(&mut g);
            let e = g.validate("test").unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("test"), "{want}: {e}");
        }
        for name in GpuConfig::builtin_names() {
            GpuConfig::builtin(name).unwrap().validate(name).unwrap();
        }
    }

    /// The DRAM device and controller fields (issue 38): every shipped file passes, and each
    /// broken field is refused with its key.
    #[test]
    fn dram_fields_are_checked() {
        for name in GpuConfig::builtin_names() {
            let g = GpuConfig::builtin(name).unwrap();
            let d = &g.dram;
            assert_eq!(d.scheduler, DramScheduler::FrFcfs, "{name}");
            // Whole bursts on the bus, and an L2 block in one row.
            assert_eq!(
                d.burst_length % (d.pseudo_channels * d.data_rate),
                0,
                "{name}"
            );
            assert!(d.row_bytes >= g.l2.line_bytes, "{name}");
            assert!(
                d.pipeline_core_cycles(g.core.clock_mhz) > 0,
                "{name}: latency_cycles leaves no pipeline"
            );
        }
        let volta = GpuConfig::builtin("volta").unwrap();
        type Edit = fn(&mut GpuConfig);
        let cases: [(Edit, &str); 9] = [
            (
                |g| g.dram.banks = 12,
                "dram.banks = 12, but it must be a power of two",
            ),
            (|g| g.dram.banks = 0, "dram.banks = 0"),
            (
                |g| g.dram.bank_groups = 32,
                "each pseudo-channel needs whole bank groups",
            ),
            (
                |g| g.dram.burst_length = 3,
                "dram.burst_length = 3 must be a multiple",
            ),
            (|g| g.dram.row_bytes = 64, "dram.row_bytes = 64 is smaller"),
            (
                |g| g.dram.t_rc = 10,
                "dram.t_rc = 10 is less than dram.t_ras",
            ),
            (
                |g| (g.dram.write_low, g.dram.write_high) = (100, 50),
                "need write_low < write_high <= write_queue",
            ),
            (
                |g| g.dram.t_rfc = g.dram.t_refi,
                "dram.refresh = PerBank needs 0 < dram.t_rfc",
            ),
            (
                |g| g.dram.latency_cycles = 10,
                "dram.latency_cycles = 10 is less than",
            ),
        ];
        for (edit, want) in cases {
            let mut g = volta.clone();
            edit(&mut g);
            let e = g.validate("test").unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        // The FIFO model has no device part in its latency.
        let mut fifo = volta.clone();
        fifo.dram.scheduler = DramScheduler::Fifo;
        fifo.dram.latency_cycles = 10;
        fifo.validate("test").unwrap();
    }

    #[test]
    fn from_path_refuses_devices() {
        let e = GpuConfig::from_path(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("not a regular file"),
            "{e}"
        );
    }
}
