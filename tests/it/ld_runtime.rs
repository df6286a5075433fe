//! `paver simulate --cache-policy ld` / `--prefetch` (issue 17, the Locality Descriptor's
//! §4.4-4.5 at run time) end to end: the `ld` stats keys, properties that must hold, and
//! that runs without the flags echo no `ld` configuration or stats.

use serde_json::Value;

use crate::common::{paver_err, paver_ok};

fn stats(ptx: &str, launch: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "simulate",
        ptx,
        "--launch",
        launch,
        "--quiet",
        "--gpu",
        "volta",
        "--set",
        "core.num_sms=4",
    ];
    args.extend_from_slice(extra);
    serde_json::from_str(&paver_ok(&args)).unwrap()
}

const HISTO_PTX: &str = "kernels/histogram/histogram.compute_70.ptx";
const HISTO: &str = "kernels/histogram/small.histogram_global.json";

/// `histogram_global` reads only `data` (NO-REUSE by the analysis; the bins are atomics,
/// which do not read through the L1): under `--cache-policy ld` every L1 read is of the
/// NO-REUSE structure, so every one is bypassed, none can hit and no line is inserted.
#[test]
fn cache_policy_ld_bypasses_every_no_reuse_read() {
    let v = stats(HISTO_PTX, HISTO, &["--cache-policy", "ld"]);
    let ld = &v["ld"];
    for key in [
        "bypassed",
        "pinned_insertions",
        "soft_pinned_insertions",
        "pinned_evictions",
        "unpin_resets",
        "prefetches_issued",
        "prefetches_dropped",
        "prefetches_useful",
        "prefetches_late",
    ] {
        assert!(ld.get(key).is_some(), "ld.{key} missing: {ld}");
    }
    let l1 = &v["l1"];
    let reads = l1["accesses"].as_u64().unwrap() - l1["writes"].as_u64().unwrap();
    assert!(reads > 0);
    assert_eq!(ld["bypassed"].as_u64().unwrap(), reads);
    assert_eq!(l1["hits"], 0);
    assert_eq!(ld["pinned_insertions"], 0);
    assert_eq!(v["config"]["ld"]["cache_policy"], "ld");
    // Without the flags: no `ld` anywhere, and `plain` / `none` name that run.
    let p = stats(HISTO_PTX, HISTO, &[]);
    assert!(p.get("ld").is_none(), "no `ld` stats without the flags");
    assert!(
        p["config"].get("ld").is_none(),
        "no `ld` config without the flags"
    );
    let explicit = stats(
        HISTO_PTX,
        HISTO,
        &["--cache-policy", "plain", "--prefetch", "none"],
    );
    assert_eq!(p, explicit);
}

/// Next-line prefetching on a streaming read: prefetches are sent, and a prefetch is
/// counted useful or late at most once.
#[test]
fn prefetch_next_line_sends_prefetches() {
    let v = stats(HISTO_PTX, HISTO, &["--prefetch", "next-line"]);
    let ld = &v["ld"];
    let issued = ld["prefetches_issued"].as_u64().unwrap();
    assert!(issued > 0, "{ld}");
    let used = ld["prefetches_useful"].as_u64().unwrap() + ld["prefetches_late"].as_u64().unwrap();
    assert!(used <= issued, "{ld}");
    assert_eq!(ld["bypassed"], 0, "plain caching");
    // `ld` prefetching sends nothing for a kernel without an INTER-THREAD structure.
    let v = stats(HISTO_PTX, HISTO, &["--prefetch", "ld"]);
    assert_eq!(v["ld"]["prefetches_issued"], 0);
}

#[test]
fn bad_flag_values_are_usage_errors() {
    let e = paver_err(&[
        "simulate",
        HISTO_PTX,
        "--launch",
        HISTO,
        "--quiet",
        "--cache-policy",
        "lru",
    ]);
    assert!(e.contains("--cache-policy"), "{e}");
    let e = paver_err(&[
        "simulate",
        HISTO_PTX,
        "--launch",
        HISTO,
        "--quiet",
        "--prefetch",
        "stride",
    ]);
    assert!(e.contains("--prefetch"), "{e}");
}

// --- Hard pinning on an INTRA-THREAD kernel (kernels/libor) ---------------------------------

const LIBOR_PTX: &str = "kernels/libor/libor.compute_70.ptx";
const LIBOR: &str = "kernels/libor/small.json";

/// The shape of a reduced `libor_path` launch: `tbs` TBs of `threads` threads, `n` forward
/// rates per path, `nmat` time steps.
#[derive(Clone, Copy)]
struct Libor {
    tbs: u64,
    threads: u64,
    n: u64,
    nmat: u64,
}

impl Libor {
    fn warps(self) -> u64 {
        self.tbs * self.threads / 32
    }

    /// Warp-level reads of `L` (one 128 B line each, the layout puts a warp's 32 rates of
    /// one index in one line): per warp, step `s` reads rates `s+1..n`, then the portfolio
    /// reads all `n` once.
    fn l_reads(self) -> u64 {
        self.warps() * ((0..self.nmat).map(|s| self.n - s - 1).sum::<u64>() + self.n)
    }

    /// Distinct lines of `L`: `n` per warp.
    fn l_lines(self) -> u64 {
        self.warps() * self.n
    }

    /// Warp-level reads of the draws `z`: one line per warp and step, each read once.
    fn z_reads(self) -> u64 {
        self.warps() * self.nmat
    }

    /// `paver simulate` of this launch on `gpu` with `core.num_sms=sms` and `extra` flags.
    fn stats(self, gpu: &str, sms: u32, extra: &[&str]) -> Value {
        let nthreads = self.tbs * self.threads;
        let (grid, block) = (self.tbs.to_string(), self.threads.to_string());
        let l = format!("0=buffer:f32:{}:fill(0.05)", self.n * nthreads);
        let z = format!("1=buffer:f32:{}:fill(0.5)", self.nmat * nthreads);
        let v = format!("2=buffer:f32:{nthreads}:zeros");
        let (n, nmat) = (format!("3={}", self.n), format!("4={}", self.nmat));
        let sms = format!("core.num_sms={sms}");
        let mut args = vec![
            "simulate", LIBOR_PTX, "--launch", LIBOR, "--grid", &grid, "--block", &block,
            "--param", &l, "--param", &z, "--param", &v, "--param", &n, "--param", &nmat,
            "--quiet", "--gpu", gpu, "--set", &sms,
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&paver_ok(&args)).unwrap()
    }
}

fn u(v: &Value, path: &[&str]) -> u64 {
    let mut x = v;
    for k in path {
        x = &x[*k];
    }
    x.as_u64().unwrap_or_else(|| panic!("{path:?} in {v}"))
}

/// Demand reads of `L` that hit in the L1, from the counters and the launch alone: on the
/// GTX 480's L1 (lines, not sectors) every read miss that is not merged sends one read to the
/// L2, the draws `z` always miss (each line is read once) and nothing else is read, so the
/// L2's reads less the draws are `L`'s misses; merges (`hit_reserve`) are not hits.
fn libor_l_hits(v: &Value, k: Libor) -> u64 {
    let reads = u(v, &["l1", "accesses"]) - u(v, &["l1", "writes"]);
    assert_eq!(reads, k.l_reads() + k.z_reads(), "L1 reads: {}", v["l1"]);
    let l2_reads = u(v, &["l2", "accesses"]) - u(v, &["l2", "writes"]);
    let l_misses = l2_reads - k.z_reads();
    k.l_reads() - l_misses - u(v, &["l1", "hit_reserve"])
}

/// `libor_path`'s forward rates `L` are INTRA-THREAD (each thread rereads its own rates in
/// every time step), its draws `z` NO-REUSE. Under `--cache-policy ld`:
/// - where the L1s hold every line (Volta, 4 SMs, one 4-warp TB each), every line of `L`
///   is inserted hard-pinned exactly once: `pinned_insertions` = `n` lines per warp, no way-0
///   eviction, every read of `z` bypassed;
/// - where they do not (the GTX 480's 16 KB L1 on one SM against 4 warps x 48 lines of 128 B
///   = 24 KB), every miss of `L` inserts a pinned line, so `pinned_insertions` equals `L`'s
///   read misses counted at the L2, the way-0 rule fires, and `L`'s hits are at least the
///   plain LRU's (the pinned part survives the other warps' passes).
#[test]
fn cache_policy_ld_hard_pins_the_intra_thread_structure() {
    let k = Libor {
        tbs: 2,
        threads: 64,
        n: 48,
        nmat: 24,
    };
    // Everything fits: cold misses only.
    let v = k.stats("volta", 4, &["--cache-policy", "ld"]);
    let ld = &v["ld"];
    assert_eq!(u(ld, &["pinned_insertions"]), k.l_lines(), "{ld}");
    assert_eq!(u(ld, &["pinned_evictions"]), 0, "{ld}");
    assert_eq!(u(ld, &["soft_pinned_insertions"]), 0, "{ld}");
    // Volta's L1 is sectored: a warp's line is 4 sector reads.
    assert_eq!(u(ld, &["bypassed"]), 4 * k.z_reads(), "{ld}");

    // One SM of a GTX 480: L thrashes the plain LRU.
    let plain = k.stats("gtx480", 1, &[]);
    let ld = k.stats("gtx480", 1, &["--cache-policy", "ld"]);
    let s = &ld["ld"];
    let l_misses = k.l_reads() - libor_l_hits(&ld, k) - u(&ld, &["l1", "hit_reserve"]);
    assert!(u(s, &["pinned_insertions"]) > 0, "{s}");
    assert_eq!(u(s, &["pinned_insertions"]), l_misses, "{s} {}", ld["l2"]);
    assert!(
        u(s, &["pinned_evictions"]) > 0,
        "the way-0 rule never fired: {s}"
    );
    assert_eq!(u(s, &["bypassed"]), k.z_reads(), "{s}");
    let (hp, hl) = (libor_l_hits(&plain, k), libor_l_hits(&ld, k));
    assert!(
        hl >= hp,
        "L's hits under ld {hl} < plain {hp} of {} reads",
        k.l_reads()
    );
    // `ld.unpin_cycles=0`: the timer never fires.
    let never = k.stats(
        "gtx480",
        1,
        &["--cache-policy", "ld", "--set", "ld.unpin_cycles=0"],
    );
    assert_eq!(u(&never, &["ld", "unpin_resets"]), 0);
}
