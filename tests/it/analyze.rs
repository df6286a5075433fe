//! `paver analyze` end to end: static footprints equal the interpreter's dynamic ones TB by
//! TB on every corpus kernel whose loads are all resolved; the JSON carries what
//! `paver partition` needs; `--policy` writes a valid schedule.

use serde_json::Value;

use crate::common::{launch_files, paver_err, paver_ok, root, GEMM_256_BUFFERS};

pub(crate) fn analyze(ptx: &str, launch: &str, extra: &[&str]) -> Value {
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
pub(crate) fn per_tb(doc: &Value) -> std::collections::BTreeMap<(u64, u64), Value> {
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

/// Static and dynamic footprints agree TB by TB (and so do the graph, every statistic, each
/// load's byte ranges and the Locality Descriptors) on every small launch whose global loads
/// the static analysis resolves completely.
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
        // Each load's byte ranges as the interpreter saw them, and the descriptors, which
        // ask which loads read a structure (dynamic runs once reported none, and every
        // structure read by all TBs was described as NO-REUSE).
        assert_eq!(st["loads"], dy["loads"], "{}: loads", launch.display());
        assert_eq!(
            st["loads_never_executed"],
            dy["loads_never_executed"],
            "{}",
            launch.display()
        );
        assert_eq!(
            st["locality_descriptors"],
            dy["locality_descriptors"],
            "{}: descriptors",
            launch.display()
        );
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
                "guarded_loads",
                "lavamd"
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
    let valid = |doc: &Value, extra: &[&str]| {
        let errors: Vec<String> = validator
            .iter_errors(doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{extra:?}: {}", errors.join("; "));
    };
    let ptx = "kernels/hotspot/hotspot.compute_70.ptx";
    let launch = "kernels/hotspot/small.json";
    for extra in [&["--no-descriptors"][..], &[][..], &["--descriptors"][..]] {
        let doc = analyze(ptx, launch, extra);
        valid(&doc, extra);
        assert_eq!(
            doc.get("locality_descriptors").is_some(),
            extra != ["--no-descriptors"]
        );
        assert!(doc["reuse"].is_object());
    }
    // A kernel that launches kernels, statically and with its child grids' reuse ratios.
    let ptx = "kernels/dp/dp_bfs/dp_bfs.nvcc13.sm_90.ptx";
    let launch = "kernels/dp/dp_bfs/small.dp_bfs_level.json";
    for extra in [
        &["--no-descriptors"][..],
        &["--dynamic", "--no-descriptors"][..],
    ] {
        let doc = analyze(ptx, launch, extra);
        valid(&doc, extra);
        assert_eq!(doc["dynamic_parallelism"]["launch_sites"], 1);
    }
}

/// Issue 13 part B kernels (module arrays, a by-value struct, a kernel ending in `exit`, a
/// negative offset): on every PTX variant and at element granularity, static footprints
/// equal the interpreter's TB by TB, every load is resolved, and each load's byte range is
/// the one its CUDA source implies (computed by hand from the launch sizes).
#[test]
fn part_b_kernels_static_equals_dynamic_with_byte_ranges() {
    // (dir, [(data structure name, first byte, one past the last byte)] per load kind)
    type Want<'a> = &'a [(&'a str, u64, u64)];
    let cases: [(&str, Want); 4] = [
        // in[i + k], k < 16, i < n = 1000: bytes [0, (999 + 15 + 1) * 4); taps[k]: 16 floats;
        // weight[i % 256]: all 256 floats.
        (
            "module_array",
            &[
                ("module_array_param_0", 0, 4060),
                ("taps", 0, 64),
                ("weight", 0, 1024),
            ],
        ),
        // src[y * 72 + x + 8], x < 64, y < 48: [8 * 4, (47 * 72 + 63 + 8 + 1) * 4).
        ("struct_param", &[("struct_param_param_0+0", 32, 13824)]),
        // a[r * 32 + c], r < 250, c < 32: the whole 8000 floats.
        ("noret", &[("noret_param_0", 0, 32000)]),
        // lo[i], i < 4096; (mid - 2048)[i] for 2048 <= i < 4096: mid's first 2048 floats.
        (
            "negoff",
            &[("negoff_param_0", 0, 16384), ("negoff_param_2", 0, 8192)],
        ),
    ];
    for (dir, want) in cases {
        let d = root().join("kernels").join(dir);
        let launch = d.join("small.json");
        for variant in ["compute_70", "compute_90", "nvcc13.sm_90"] {
            let ptx = d.join(format!("{dir}.{variant}.ptx"));
            let (ptx, launch) = (ptx.to_str().unwrap(), launch.to_str().unwrap());
            let what = format!("{dir} {variant}");
            let st = analyze(ptx, launch, &["--granularity", "element"]);
            assert_eq!(st["loads_resolved"], st["loads_total"], "{what}: {st:#}");
            // noret's column loop is unrolled by 4 with a remainder loop, whose load never
            // runs for cols = 32; every other load of these kernels runs.
            let never = u64::from(dir == "noret");
            assert_eq!(st["loads_never_executed"], never, "{what}");
            let dy = analyze(ptx, launch, &["--granularity", "element", "--dynamic"]);
            assert_eq!(per_tb(&st), per_tb(&dy), "{what}: footprints");
            assert_eq!(st["graph"], dy["graph"], "{what}: graph");
            assert_eq!(st["stats"], dy["stats"], "{what}: stats");
            // Per data structure, the union of the loads' byte ranges.
            let mut got: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
            for l in st["loads"].as_array().unwrap() {
                // A load that never runs reads nothing (and has no `reads`).
                for r in l["reads"].as_array().into_iter().flatten() {
                    let name = r["name"].as_str().expect("in a data structure").to_string();
                    let (lo, hi) = (
                        r["bytes"][0].as_u64().unwrap(),
                        r["bytes"][1].as_u64().unwrap(),
                    );
                    let e = got.entry(name).or_insert((lo, hi));
                    *e = (e.0.min(lo), e.1.max(hi));
                }
            }
            let want: std::collections::BTreeMap<String, (u64, u64)> = want
                .iter()
                .map(|(n, lo, hi)| (n.to_string(), (*lo, *hi)))
                .collect();
            assert_eq!(got, want, "{what}: byte ranges");
            // Only data structures some load reads get a Locality Descriptor.
            let mut described: Vec<String> = st["locality_descriptors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["name"].as_str().unwrap().to_string())
                .collect();
            described.sort();
            assert_eq!(
                described,
                want.keys().cloned().collect::<Vec<_>>(),
                "{what}"
            );
        }
    }
}

/// mm_naive's small launch scaled to n = 256 without its buffers (4,096 floats each) reads
/// past their ends: `paver analyze` says so, the JSON gives those reads no parameter, and
/// with the buffers resized the warning and the unattributed reads are gone.
#[test]
fn reads_outside_every_buffer_are_reported() {
    let ptx = "kernels/mm_naive/mm_naive.compute_70.ptx";
    let launch = "kernels/mm_naive/small.json";
    let scaled = ["--grid", "16x16", "--param", "3=256"];
    let json = std::env::temp_dir().join(format!("paver-it-outside-{}.json", std::process::id()));
    let run = |extra: &[&str]| {
        let mut args = vec!["analyze", ptx, "--launch", launch, "-q"];
        args.extend_from_slice(&["-o", json.to_str().unwrap()]);
        args.extend_from_slice(&scaled);
        args.extend_from_slice(extra);
        let out = crate::common::paver(&args);
        assert!(out.status.success());
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let outside = doc["loads"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|l| l["reads"].as_array().into_iter().flatten())
            .filter(|r| r["param"].is_null())
            .count();
        (String::from_utf8_lossy(&out.stderr).into_owned(), outside)
    };
    let (err, outside) = run(&[]);
    assert!(
        err.contains("read addresses outside every buffer of the launch"),
        "{err}"
    );
    assert!(outside > 0);
    let (err, outside) = run(&GEMM_256_BUFFERS);
    assert!(!err.contains("outside every buffer"), "{err}");
    assert_eq!(outside, 0);
    let _ = std::fs::remove_file(&json);
}

/// `paver analyze --graph` in a pool of one thread (`RAYON_NUM_THREADS=1`) finishes and
/// writes what two threads write. The graph file's formatting used to wait, on the pool's
/// only thread, for work only that thread could do: a hang from 65 TBs on (two formatting
/// jobs). 256 TBs here; a run past 120 s counts as the hang.
#[test]
fn one_thread_writes_the_same_files_as_two() {
    let dir = std::env::temp_dir().join(format!("paver-it-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for threads in ["1", "2"] {
        let (json, npz) = (
            dir.join(format!("a{threads}.json")),
            dir.join(format!("g{threads}.npz")),
        );
        let mut args = vec![
            "analyze",
            "kernels/mm_naive/mm_naive.compute_70.ptx",
            "--launch",
            "kernels/mm_naive/small.json",
            "--grid",
            "16x16",
            "--param",
            "3=256",
            "--quiet",
            "-o",
            json.to_str().unwrap(),
            "--graph",
            npz.to_str().unwrap(),
        ];
        args.extend_from_slice(&GEMM_256_BUFFERS);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_paver"))
            .args(&args)
            .current_dir(root())
            .env("RAYON_NUM_THREADS", threads)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("run paver");
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if start.elapsed() > std::time::Duration::from_secs(120) {
                let _ = child.kill();
                panic!("paver analyze --graph with {threads} thread(s) hung");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert!(status.success(), "{threads} thread(s): {status}");
        // The graph's JSON names its file: compare the file's bytes and the JSON without it.
        let mut doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        doc["graph"]["file"] = Value::Null;
        files.push((doc, std::fs::read(&npz).unwrap()));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(files[0].1.len() > 1000, "a graph file with edges");
    assert_eq!(
        files[0], files[1],
        "one thread and two wrote different files"
    );
}

/// A load under a data-dependent or floating-point guard is not evaluated by default: it is
/// reported as a may-load, not as never executed; with `--may-loads` its byte ranges are its
/// may-footprint, which on guarded_loads' launch (every guard true) are exactly the bytes
/// the interpreter saw it read.
#[test]
fn may_loads_are_not_reported_as_never_executed() {
    let ptx = "kernels/guarded_loads/guarded_loads.compute_70.ptx";
    let launch = "kernels/guarded_loads/small.json";
    let guarded = |l: &Value| l["guard"] == "data-dependent" || l["guard"] == "floating-point";
    let st = analyze(ptx, launch, &[]);
    let loads = st["loads"].as_array().unwrap();
    assert!(
        loads.iter().filter(|l| guarded(l)).count() >= 2,
        "{loads:?}"
    );
    assert_eq!(st["loads_never_executed"], 0);
    for l in loads.iter().filter(|l| guarded(l) && l["resolved"] == true) {
        assert_eq!(l["never_executed"], false, "{l}");
        assert!(l["reason"].as_str().unwrap().contains("may-load"), "{l}");
        assert_eq!(l["reads"], serde_json::json!([]), "{l}");
    }
    let may = analyze(ptx, launch, &["--may-loads"]);
    let dy = analyze(ptx, launch, &["--dynamic"]);
    for (m, d) in may["loads"]
        .as_array()
        .unwrap()
        .iter()
        .zip(dy["loads"].as_array().unwrap())
    {
        if guarded(m) && m["resolved"] == true {
            assert!(!m["reads"].as_array().unwrap().is_empty(), "{m}");
            assert_eq!(m["reads"], d["reads"], "line {}", m["line"]);
            assert_eq!(d["never_executed"], false);
        }
    }
}

/// lavaMD's launch leaves `par_str` open (`alpha`: arithmetic only): `analyze` runs and
/// says so, in the summary and the JSON; everything that runs the kernel (`--dynamic`,
/// `run`, `simulate`) needs the value and names the parameter.
#[test]
fn lavamd_analyses_with_par_str_open_and_runs_only_with_it() {
    let ptx = "kernels/lavamd/lavamd.compute_70.ptx";
    let launch = "kernels/lavamd/small.json";
    let v = analyze(ptx, launch, &[]);
    assert_eq!(
        v["open_params"],
        serde_json::json!([{"index": 0, "name": "kernel_gpu_cuda_param_0"}])
    );
    assert_eq!(v["launch"]["params"][0]["value"]["kind"], "open");
    let human = paver_ok(&["analyze", ptx, "--launch", launch, "--no-descriptors"]);
    assert!(
        human.contains("left open") && human.contains("parameter 0 (`kernel_gpu_cuda_param_0`)"),
        "{human}"
    );
    // The paper launch (Rodinia's -boxes1d 10: 1,000 boxes) too.
    let v = analyze(ptx, "kernels/lavamd/paper.json", &["--no-descriptors"]);
    assert_eq!(v["graph"]["num_tbs"], 1000);
    let want = "parameter 0 (`kernel_gpu_cuda_param_0`): no value given for this 8-byte by-value parameter";
    for args in [
        vec!["analyze", ptx, "--launch", launch, "--dynamic"],
        vec!["run", ptx, "--launch", launch],
        vec!["simulate", ptx, "--launch", launch, "--gpu", "volta"],
    ] {
        let e = paver_err(&args);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // With the value in a launch file, it runs.
    let dir = std::env::temp_dir().join(format!("paver-it-lavamd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut l: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(launch)).unwrap()).unwrap();
    for p in l["params"].as_array_mut().unwrap() {
        if let Some(init) = p["buffer"]["init"].as_str() {
            let abs = root().join("kernels/lavamd/boxes_small.bin");
            if init.starts_with("file(") {
                p["buffer"]["init"] = Value::from(format!("file({})", abs.display()));
            }
        }
    }
    l["params"].as_array_mut().unwrap().push(serde_json::json!(
        {"index": 0, "fields": [{"offset": 0, "type": "f64", "value": 0.5}]}
    ));
    let valued = dir.join("valued.json");
    std::fs::write(&valued, l.to_string()).unwrap();
    let out = dir.join("out");
    paver_ok(&[
        "run",
        ptx,
        "--launch",
        valued.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let v = analyze(ptx, valued.to_str().unwrap(), &[]);
    assert_eq!(v["open_params"], serde_json::json!([]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A parameter an address, guard or loop bound depends on still needs its value: mm_naive
/// without `n` names it, the load and the flag.
#[test]
fn an_open_parameter_an_address_needs_is_named() {
    let e = paver_err(&[
        "analyze",
        "kernels/mm_naive/mm_naive.compute_70.ptx",
        "--grid",
        "4x4",
        "--block",
        "16x16",
    ]);
    assert!(
        e.contains("parameter 3 (`mm_naive_param_3`) needs a value: ")
            && e.contains("load at PTX line")
            && e.contains("give it with --param 3=VALUE"),
        "{e}"
    );
    // A struct: struct_param's geometry.
    let e = paver_err(&[
        "analyze",
        "kernels/struct_param/struct_param.compute_70.ptx",
        "--grid",
        "4x3",
        "--block",
        "16x16",
    ]);
    assert!(
        e.contains("parameter 0 (`struct_param_param_0`) needs a value: ")
            && e.contains("\"fields\""),
        "{e}"
    );
}

/// Minkowski distance with `powf` in the loop (issue 41; `analysis/tests/ptx/minkowski.cu`):
/// powf's special cases branch on the loaded values, and all reconverge before the loop's
/// pointers step. The join's path condition covers every case of those branches, so the
/// loop's exit and both loads are known: resolved, and equal to the interpreter's
/// footprints. (They were "floating-point value" unresolved: the or of the six paths'
/// conditions was kept as an opaque literal.)
#[test]
fn loads_after_branches_on_loaded_floats_that_reconverge_are_resolved() {
    let ptx = "analysis/tests/ptx/minkowski.ptx";
    let launch = "analysis/tests/launches/minkowski.json";
    let st = analyze(ptx, launch, &[]);
    assert_eq!(st["coverage"]["in_graph"], 2, "{}", st["loads"]);
    let dy = analyze(ptx, launch, &["--dynamic"]);
    assert_eq!(per_tb(&st), per_tb(&dy));
    assert_eq!(st["stats"], dy["stats"]);
    assert_eq!(st["loads"], dy["loads"]);
}
