//! Fuzz target: reading a GPU configuration (TOML) never panics or hangs; whatever reads
//! passes validation, writes back to TOML that reads as the same configuration, and gives
//! the occupancy calculator and the L1/shared carveout rule something they answer without
//! panicking.
#![no_main]

use gpu::{GpuConfig, KernelResources, RegisterSource, Registers};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(cfg) = GpuConfig::from_toml_str(&text, "fuzz.toml") else {
        return;
    };
    cfg.validate("fuzz.toml").expect("a configuration that reads is valid");
    let written = toml::to_string(&cfg).expect("a configuration serialises");
    match GpuConfig::from_toml_str(&written, "again.toml") {
        Ok(again) => assert!(again == cfg, "round trip differs:\n{written}"),
        Err(e) => panic!("written configuration does not read: {e}\n{written}"),
    }
    for (threads, regs, shared) in [
        (256, 32, 0),
        (1024, 255, 48 << 10),
        (32, 0, 1 << 40),
        (1, u32::MAX, u64::MAX),
        (u32::MAX, 1, 0),
    ] {
        let k = KernelResources {
            threads_per_tb: threads,
            registers: Registers {
                count: regs,
                source: RegisterSource::Flag,
            },
            static_shared_bytes: shared,
            dynamic_shared_bytes: shared / 2,
        };
        if let Ok(o) = gpu::occupancy(&cfg, &k) {
            assert!(o.tbs_per_sm >= 1 && o.tbs_per_sm <= cfg.core.max_tbs_per_sm);
        }
        let in_use = cfg.shared_allocation_per_tb(shared.min(1 << 40));
        let l1 = cfg.l1_bytes(in_use);
        assert!(l1 >= 1);
        assert!(cfg.l1_ways(in_use) >= 1);
    }
});
