//! `paver analyze` end to end: static footprints equal the interpreter's dynamic ones TB by
//! TB on every corpus kernel whose loads are all resolved; the JSON carries what
//! `paver partition` needs; `--policy` writes a valid schedule.

use serde_json::Value;

use crate::common::{launch_files, paver_err, paver_ok, root};

fn analyze(ptx: &str, launch: &str, extra: &[&str]) -> Value {
    // Tests run in parallel: every call gets its own file.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out =
        std::env::temp_dir().join(format!("paver-it-analyze-{}-{n}.json", std::process::id()));
    let mut args = vec![
        "analyze",
        ptx,
        "--launch",
        launch,
        "--quiet",
        "--footprints",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    paver_ok(&args);
    let v = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    v
}

/// Every TB's footprint from the `footprints` key: (param, TB) -> unit intervals. Classes
/// may group TBs differently; the footprints themselves must not differ.
fn per_tb(doc: &Value) -> std::collections::BTreeMap<(u64, u64), Value> {
    let mut out = std::collections::BTreeMap::new();
    for p in doc["footprints"].as_array().unwrap() {
        for c in p["classes"].as_array().unwrap() {
            for tb in c["tbs"].as_array().unwrap() {
                out.insert(
                    (p["param"].as_u64().unwrap(), tb.as_u64().unwrap()),
                    c["units"].clone(),
                );
            }
        }
    }
    out
}

/// Static and dynamic footprints agree TB by TB (and so do the graph and every statistic) on
/// every small launch whose global loads the static analysis resolves completely.
#[test]
fn static_footprints_equal_dynamic_ones_on_the_corpus() {
    let mut compared = Vec::new();
    let mut partial = Vec::new();
    for launch in launch_files().iter().filter(|p| {
        p.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("small")
    }) {
        let dir = launch.parent().unwrap();
        let stem = dir.file_name().unwrap().to_str().unwrap();
        let ptx = dir.join(format!("{stem}.compute_70.ptx"));
        let (ptx, launch_s) = (ptx.to_str().unwrap(), launch.to_str().unwrap());
        let st = analyze(ptx, launch_s, &[]);
        // A load under a guard on data or floats (`guard`) is resolved but only in the
        // graph with `--may-loads`: such launches are compared in analysis/tests.
        let may = st["loads"].as_array().is_some_and(|ls| {
            ls.iter()
                .any(|l| l["guard"] == "data-dependent" || l["guard"] == "floating-point")
        });
        if st["loads_resolved"] != st["loads_total"] || may {
            partial.push(launch.display().to_string());
            continue;
        }
        let dy = analyze(ptx, launch_s, &["--dynamic"]);
        assert_eq!(st["mode"], "static");
        assert_eq!(dy["mode"], "dynamic");
        assert_eq!(per_tb(&st), per_tb(&dy), "{}: footprints", launch.display());
        assert_eq!(st["graph"], dy["graph"], "{}: graph", launch.display());
        assert_eq!(st["stats"], dy["stats"], "{}: stats", launch.display());
        compared.push(launch.display().to_string());
    }
    // The data-dependent kernels (bfs, spmv, btree, mergesort, tpacf, histogram) are the only
    // ones not compared; everything else must be.
    assert!(
        compared.len() >= 24,
        "compared {} launches: {compared:?}\nnot fully resolved: {partial:?}",
        compared.len()
    );
    for p in &partial {
        assert!(
            [
                "bfs",
                "spmv_csr",
                "btree_search",
                "mergesort_step",
                "tpacf",
                "histogram",
                "blackscholes",
                "scalar_prod",
                "guarded_loads"
            ]
            .iter()
            .any(|k| p.contains(&format!("/{k}/"))),
            "{p} is not fully resolved"
        );
    }
}

#[test]
fn analysis_json_feeds_partition_and_policy_writes_a_schedule() {
    let ptx = "kernels/mm_naive/mm_naive.compute_70.ptx";
    let launch = "kernels/mm_naive/small.json";
    let v = analyze(ptx, launch, &[]);
    assert_eq!(v["format"], "paver-analysis/1");
    assert_eq!(
        v["resources"]["sm_70"]["registers"], 32,
        "ptxas numbers from the launch file"
    );
    assert!(v["ptx_resources"]["registers"].as_u64().unwrap() > 0);
    // Independent check of one edge: TBs 0 and 1 share the 32 lines of A's rows 0..16 and
    // the 64 lines holding B's columns 0..32 (one 128 B line per row): 96.
    let edges = v["graph"]["edges"].as_array().unwrap();
    assert!(
        edges.iter().any(|e| e == &serde_json::json!([0, 1, 96])),
        "{edges:?}"
    );

    let dir = std::env::temp_dir().join(format!("paver-it-sched-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sched = dir.join("s.json");
    let out = paver_ok(&[
        "analyze",
        ptx,
        "--launch",
        launch,
        "--policy",
        "rb-ts",
        "--gpu",
        "volta",
        "--schedule",
        sched.to_str().unwrap(),
    ]);
    assert!(out.contains("rb-ts on 80 SMs x 8 TBs/SM"), "{out}");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
    assert_eq!(s["format"], "paver-schedule/1");
    let mut tbs: Vec<u64> = s["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g.as_array().unwrap())
        .map(|t| t.as_u64().unwrap())
        .collect();
    tbs.sort_unstable();
    assert_eq!(tbs, (0..16).collect::<Vec<_>>(), "every TB exactly once");
    let e = paver_err(&["analyze", ptx, "--launch", launch, "--policy", "rb-ts"]);
    assert!(e.contains("--schedule"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    let _ = root();
}

#[test]
fn heatmap_is_a_png_of_the_adjacency_matrix() {
    let png = std::env::temp_dir().join(format!("paver-it-heat-{}.png", std::process::id()));
    let out = paver_ok(&[
        "analyze",
        "kernels/mm_naive/mm_naive.compute_70.ptx",
        "--launch",
        "kernels/mm_naive/small.json",
        "--heatmap",
        png.to_str().unwrap(),
    ]);
    assert!(out.contains("kernel mm_naive"), "{out}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: 16 x 16 pixels, one per TB.
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 16);
    assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 16);
    let _ = std::fs::remove_file(&png);
}

/// What `paver analyze -o` writes follows the published schema, with and without the
/// optional Locality Descriptors.
#[test]
fn analysis_json_follows_its_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("analysis/schema/paver-analysis-1.schema.json"))
            .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let ptx = "kernels/hotspot/hotspot.compute_70.ptx";
    let launch = "kernels/hotspot/small.json";
    for extra in [&["--no-descriptors"][..], &[][..], &["--descriptors"][..]] {
        let doc = analyze(ptx, launch, extra);
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{extra:?}: {}", errors.join("; "));
        assert_eq!(
            doc.get("locality_descriptors").is_some(),
            extra != ["--no-descriptors"]
        );
        assert!(doc["reuse"].is_object());
    }
}
