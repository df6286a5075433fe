//! Timing configuration: a [`GpuConfig`] (the `configs/gpus/*.toml` files, shared with the
//! partitioner) with its pipeline and memory-path parameters (the files' `[pipeline]` and
//! `[mem]` tables; where a file leaves them out, GPGPU-Sim's Volta values), the occupancy
//! overrides and the seeds' mechanisms. Any field can be overridden by
//! a dotted key (`gpu.l1.latency_cycles=30`, `pipeline.sfu=16`, `l1.ways=8` for short).

use super::dp::DpConfig;
use super::icc::IccConfig;
use super::ld_cache::LdConfig;
pub use gpu::timing::{MemPathConfig, PipelineConfig, WritePolicy};
use gpu::GpuConfig;
use serde::{Deserialize, Serialize};

/// Everything the timing model is configured by; echoed in the stats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingConfig {
    /// The GPU.
    pub gpu: GpuConfig,
    /// Pipeline latencies.
    #[serde(default)]
    pub pipeline: PipelineConfig,
    /// Memory path.
    #[serde(default)]
    pub mem: MemPathConfig,
    /// Resident TBs per SM when set (otherwise the occupancy calculator's answer).
    #[serde(default)]
    pub tbs_per_sm: Option<u32>,
    /// Registers per thread for occupancy when set (`--registers`; otherwise the kernel's
    /// ptxas count, or the liveness estimate from the PTX).
    #[serde(default)]
    pub regs_per_thread: Option<u32>,
    /// Intra-cluster coalescing (`icc.*` keys, [`super::icc`]); omitted from the JSON while
    /// at its defaults, so runs without it echo the configuration they always did.
    #[serde(default, skip_serializing_if = "IccConfig::is_default")]
    pub icc: IccConfig,
    /// The Locality Descriptor's L1 mechanisms (`ld.*` keys, `--cache-policy`,
    /// `--prefetch`; [`super::ld_cache`]); omitted from the JSON while at its defaults.
    #[serde(default, skip_serializing_if = "LdConfig::is_default")]
    pub ld: LdConfig,
    /// The latency of device-side launches (`dp.*` keys, [`super::dp`]); omitted from the
    /// JSON while at its defaults.
    #[serde(default, skip_serializing_if = "DpConfig::is_default")]
    pub dp: DpConfig,
}

/// A bad override.
#[derive(Debug, thiserror::Error)]
#[error("--set {key}: {message}")]
pub struct SetError {
    /// The key.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl TimingConfig {
    /// `gpu` with its own pipeline and memory-path parameters (the defaults where its file
    /// gives none), no overrides and the seeds' mechanisms off.
    pub fn new(gpu: GpuConfig) -> TimingConfig {
        TimingConfig {
            pipeline: gpu.pipeline.clone().unwrap_or_default(),
            mem: gpu.mem.clone().unwrap_or_default(),
            tbs_per_sm: None,
            regs_per_thread: None,
            icc: IccConfig::default(),
            ld: LdConfig::default(),
            dp: DpConfig::default(),
            gpu,
        }
    }

    /// Overrides one field: `key` is a dotted path (`gpu.core.num_sms`, or without the
    /// `gpu.` prefix for GPU fields), `value` JSON (`30`, `true`, `"write-back"`) or a bare
    /// string.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SetError> {
        let err = |message: String| SetError {
            key: key.to_string(),
            message,
        };
        let mut root = serde_json::to_value(&*self).map_err(|e| err(e.to_string()))?;
        let parts: Vec<&str> = key.split('.').collect();
        let top = [
            "gpu",
            "pipeline",
            "mem",
            "tbs_per_sm",
            "regs_per_thread",
            "icc",
            "ld",
            "dp",
        ];
        if parts[0] == "icc" {
            // Left out of the JSON at its defaults: put it back to set one of its fields.
            if let Some(o) = root.as_object_mut() {
                let icc = serde_json::to_value(&self.icc).map_err(|e| err(e.to_string()))?;
                o.entry("icc").or_insert(icc);
            }
        }
        if parts[0] == "ld" {
            // The same for `ld.*`.
            if let Some(o) = root.as_object_mut() {
                let ld = serde_json::to_value(&self.ld).map_err(|e| err(e.to_string()))?;
                o.entry("ld").or_insert(ld);
            }
        }
        if parts[0] == "dp" {
            // The same for `dp.*`.
            if let Some(o) = root.as_object_mut() {
                let dp = serde_json::to_value(&self.dp).map_err(|e| err(e.to_string()))?;
                o.entry("dp").or_insert(dp);
            }
        }
        let path: Vec<&str> = if top.contains(&parts[0]) {
            parts
        } else {
            std::iter::once("gpu").chain(parts).collect()
        };
        let mut cur = &mut root;
        for p in &path {
            cur = cur
                .as_object_mut()
                .and_then(|o| o.get_mut(*p))
                .ok_or_else(|| err(format!("no field `{p}`")))?;
        }
        if path[..] == ["gpu", "dram", "bandwidth_gbps"] {
            return Err(err(
                "the DRAM bandwidth is derived (channels x bus_bytes_per_channel x clock_mhz x data_rate): set one of those, e.g. dram.clock_mhz".into(),
            ));
        }
        *cur = serde_json::from_str(value)
            .unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        *self = serde_json::from_value(root).map_err(|e| err(e.to_string()))?;
        // Keep the stated peak equal to the one the channels now run at.
        if path.len() == 3 && path[..2] == ["gpu", "dram"] {
            self.gpu.dram.bandwidth_gbps = self.gpu.dram.peak_gbps();
        }
        Ok(())
    }

    /// Checks the whole configuration after the overrides: the GPU
    /// ([`GpuConfig::validate`]) and the pipeline's positive counts. `origin` names the
    /// configuration in errors.
    pub fn validate(&self, origin: &str) -> Result<(), gpu::Error> {
        self.gpu.validate(origin)?;
        self.icc
            .check(self.gpu.interconnect.sms_per_cluster)
            .map_err(|message| gpu::Error::GpuConfig {
                name: origin.to_string(),
                message,
            })?;
        if let Some(field) = self.pipeline.zero_count() {
            return Err(gpu::Error::GpuConfig {
                name: origin.to_string(),
                message: format!("{field} = 0, but it must be positive"),
            });
        }
        for (field, v) in [
            ("tbs_per_sm", self.tbs_per_sm.unwrap_or(1)),
            ("regs_per_thread", self.regs_per_thread.unwrap_or(1)),
        ] {
            if v == 0 {
                return Err(gpu::Error::GpuConfig {
                    name: origin.to_string(),
                    message: format!("{field} = 0, but it must be positive"),
                });
            }
        }
        Ok(())
    }

    /// The fill unit of a cache level in bytes: a 32 B sector when sectored, else the line.
    pub fn block_bytes(sectored: bool, line: u32) -> u64 {
        if sectored {
            32
        } else {
            u64::from(line)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36: a GPU file sets the pipeline and the memory path; a zero count is refused
    /// when the file is read.
    #[test]
    fn a_gpu_file_sets_every_timing_parameter() {
        let text = include_str!("../../../configs/gpus/titanv.toml")
            .replace("sfu = 20", "sfu = 16")
            .replace("l2_write = \"write-back\"", "l2_write = \"write-through\"");
        let gpu = GpuConfig::from_toml_str(&text, "test.toml").expect("toml");
        let c = TimingConfig::new(gpu);
        assert_eq!(c.pipeline.sfu, 16);
        assert_eq!(c.mem.l2_write, WritePolicy::WriteThrough);
        let shipped = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
        assert_eq!(shipped.pipeline, PipelineConfig::default());
        assert_eq!(shipped.mem, MemPathConfig::default());
        let zero = include_str!("../../../configs/gpus/titanv.toml")
            .replace("lsu_queue = 2", "lsu_queue = 0");
        let e = GpuConfig::from_toml_str(&zero, "test.toml").expect_err("zero");
        assert!(e.to_string().contains("pipeline.lsu_queue = 0"), "{e}");
    }

    #[test]
    fn overrides() {
        let mut c = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
        c.set("gpu.l1.latency_cycles", "33").expect("set");
        c.set("core.num_sms", "4").expect("set");
        c.set("pipeline.sfu", "16").expect("set");
        c.set("mem.l2_write", "write-through").expect("set");
        c.set("tbs_per_sm", "3").expect("set");
        assert_eq!(c.gpu.l1.latency_cycles, 33);
        assert_eq!(c.gpu.core.num_sms, 4);
        assert_eq!(c.pipeline.sfu, 16);
        assert_eq!(c.mem.l2_write, WritePolicy::WriteThrough);
        assert_eq!(c.tbs_per_sm, Some(3));
        assert!(c.set("core.nope", "1").is_err());
        c.validate("volta").expect("valid");
        for (key, want) in [
            ("core.num_sms", "core.num_sms = 0"),
            ("pipeline.shared_banks", "pipeline.shared_banks = 0"),
            ("tbs_per_sm", "tbs_per_sm = 0"),
        ] {
            let mut bad = c.clone();
            bad.set(key, "0").expect("set");
            let e = bad.validate("volta").unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        assert!(c.set("core.num_sms", "\"x\"").is_err());
        // The DRAM peak is derived: setting it is refused (it used to be accepted and
        // ignored), changing a field it derives from updates it.
        let e = c
            .set("dram.bandwidth_gbps", "100000")
            .unwrap_err()
            .to_string();
        assert!(e.contains("derived"), "{e}");
        let before = c.gpu.dram.bandwidth_gbps;
        c.set("dram.clock_mhz", &(2 * c.gpu.dram.clock_mhz).to_string())
            .expect("set");
        assert!((c.gpu.dram.bandwidth_gbps - 2.0 * before).abs() < 0.01 * before);
        c.validate("volta").expect("valid");
        // The DRAM model's keys (issue 38): timing, geometry, scheduler, refresh.
        c.set("dram.t_rcd", "20").expect("set");
        c.set("dram.scheduler", "fifo").expect("set");
        c.set("dram.refresh", "all-bank").expect("set");
        c.set("dram.bank_hash", "linear").expect("set");
        assert_eq!(c.gpu.dram.t_rcd, 20);
        assert_eq!(c.gpu.dram.scheduler, gpu::config::DramScheduler::Fifo);
        assert_eq!(c.gpu.dram.refresh, gpu::config::Refresh::AllBank);
        assert_eq!(c.gpu.dram.bank_hash, gpu::config::BankHash::Linear);
        c.validate("volta").expect("valid");
        let e = c.set("dram.scheduler", "fcfs").unwrap_err().to_string();
        assert!(e.contains("dram.scheduler") && e.contains("fr-fcfs"), "{e}");
        c.set("dram.banks", "12").expect("set");
        let e = c.validate("volta").unwrap_err().to_string();
        assert!(e.contains("dram.banks = 12"), "{e}");
    }

    #[test]
    fn icc_keys_and_their_absence_from_the_json() {
        let mut c = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
        let plain = serde_json::to_string(&c).expect("json");
        assert!(
            !plain.contains("icc"),
            "default ICC settings are not echoed"
        );
        c.set("icc.merge_table", "true").expect("set");
        c.set("icc.coalesced_cache", "true").expect("set");
        c.set("icc.redundancy_window_cycles", "500").expect("set");
        assert!(c.icc.merge_table && c.icc.coalesced_cache);
        assert_eq!(c.icc.redundancy_window_cycles, 500);
        assert_eq!(c.icc.merge_table_entries, 48);
        c.validate("volta").expect("valid");
        let back: TimingConfig =
            serde_json::from_str(&serde_json::to_string(&c).expect("json")).expect("parse");
        assert_eq!(back, c);
        assert!(c.set("icc.nope", "1").is_err());
        let mut cc_alone = TimingConfig::new(GpuConfig::builtin("volta").expect("volta"));
        cc_alone.set("icc.coalesced_cache", "true").expect("set");
        assert!(cc_alone.validate("volta").is_err());
    }
}
