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
