//! GPU configurations (`configs/gpus/*.toml`): PAVER Table 1 values plus cache, NoC and DRAM
//! geometry from the public GPGPU-Sim / Accel-Sim configurations. The four shipped files are
//! compiled in, so lookup by name works from any directory; any other file loads by path.
//! The simulator reuses [`GpuConfig`].

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

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

/// DRAM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Technology (`GDDR5`, `HBM2`...).
    pub kind: String,
    /// Memory channels (controllers).
    pub channels: u32,
    /// Minimum DRAM latency in core cycles (GPGPU-Sim `dram_latency`).
    pub latency_cycles: u32,
    /// DRAM command clock.
    pub clock_mhz: u32,
    /// Bus width per channel.
    pub bus_bytes_per_channel: u32,
    /// Transfers per command clock (4 = QDR).
    pub data_rate: u32,
    /// Peak bandwidth = channels x bus bytes x clock x data rate.
    pub bandwidth_gbps: f64,
}

const BUILTIN: [(&str, &str); 4] = [
    ("gtx480", include_str!("../../configs/gpus/gtx480.toml")),
    (
        "titanx_pascal",
        include_str!("../../configs/gpus/titanx_pascal.toml"),
    ),
    ("titanv", include_str!("../../configs/gpus/titanv.toml")),
    ("h100", include_str!("../../configs/gpus/h100.toml")),
];

const ALIASES: [(&str, &str); 4] = [
    ("fermi", "gtx480"),
    ("pascal", "titanx_pascal"),
    ("volta", "titanv"),
    ("hopper", "h100"),
];

impl GpuConfig {
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
        cfg.check(origin)?;
        Ok(cfg)
    }

    /// Loads a configuration file.
    pub fn from_path(path: &Path) -> Result<GpuConfig> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_toml_str(&text, &path.display().to_string())
    }

    /// A path if `spec` names an existing file or looks like one (contains `/` or ends in
    /// `.toml`), otherwise a built-in name or alias.
    pub fn lookup(spec: &str) -> Result<GpuConfig> {
        let p = Path::new(spec);
        if p.is_file() || spec.contains('/') || spec.ends_with(".toml") {
            Self::from_path(p)
        } else {
            Self::builtin(spec)
        }
    }

    /// Internal consistency: cache capacities match their geometry, counts are positive.
    fn check(&self, origin: &str) -> Result<()> {
        let bad = |message: String| Error::GpuConfig {
            name: origin.to_string(),
            message,
        };
        let c = &self.core;
        for (field, v) in [
            ("core.num_sms", c.num_sms),
            ("core.warp_size", c.warp_size),
            ("core.max_tbs_per_sm", c.max_tbs_per_sm),
            ("core.max_warps_per_sm", c.max_warps_per_sm),
            ("core.max_threads_per_sm", c.max_threads_per_sm),
            ("core.register_alloc_unit", c.register_alloc_unit),
            ("core.shared_alloc_unit", c.shared_alloc_unit),
        ] {
            if v == 0 {
                return Err(bad(format!("{field} must be positive")));
            }
        }
        let l1 = u64::from(self.l1.sets) * u64::from(self.l1.ways) * u64::from(self.l1.line_bytes);
        if l1 != self.l1.size_bytes {
            return Err(bad(format!(
                "l1.size_bytes = {} but sets x ways x line = {l1}",
                self.l1.size_bytes
            )));
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
            let bw = f64::from(c.dram.channels)
                * f64::from(c.dram.bus_bytes_per_channel)
                * f64::from(c.dram.clock_mhz)
                * f64::from(c.dram.data_rate)
                / 1000.0;
            assert!((bw - c.dram.bandwidth_gbps).abs() < 0.1, "{name}: {bw}");
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
}
