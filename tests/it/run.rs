//! `paver run` end to end: outputs as .npy that match the H100 reference, summary.json, the
//! same results whatever the thread count, and nothing written when the run fails.

use serde_json::Value;

use crate::common::{paver_err, paver_ok, root};

/// Data of a 1-D .npy file written by `paver run` (header checked loosely: dtype and shape).
fn npy_data(bytes: &[u8], dtype: &str, len: usize) -> Vec<u8> {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(header.contains(&format!("'descr': '{dtype}'")), "{header}");
    assert!(header.contains(&format!("'shape': ({len},)")), "{header}");
    assert_eq!((10 + hlen) % 64, 0, "header padded to 64 bytes");
    bytes[10 + hlen..].to_vec()
}

#[test]
fn run_writes_buffers_matching_the_gpu_and_a_summary() {
    let dir = std::env::temp_dir().join(format!("paver-it-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = paver_ok(&[
        "run",
        "kernels/mm_naive/mm_naive.compute_70.ptx",
        "--launch",
        "kernels/mm_naive/small.json",
        "--outputs",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.contains("warp instructions") && out.contains("fma.rn.f32"),
        "{out}"
    );
    let c = std::fs::read(dir.join("p2_mm_naive_param_2.npy")).unwrap();
    let want = std::fs::read(root().join("kernels/mm_naive/reference/small/p2.npy")).unwrap();
    let data = npy_data(&c, "<f4", 4096);
    assert_eq!(
        data,
        npy_data(&want, "<f4", 4096),
        "C equals the H100's bit for bit"
    );
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["kernel"], "mm_naive");
    assert_eq!(summary["stats"]["tbs"], 16);
    assert_eq!(summary["outputs"].as_array().unwrap().len(), 3);
    // 64 iterations of the k loop per thread, each with one fma.
    assert_eq!(
        summary["stats"]["per_opcode"]["fma.rn.f32"]
            .as_u64()
            .unwrap()
            * 32,
        64 * 64 * 64
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_results_do_not_depend_on_threads() {
    let json = |threads: &str| -> Value {
        let v: Value = serde_json::from_str(&paver_ok(&[
            "run",
            "kernels/hotspot/hotspot.compute_90.ptx",
            "--launch",
            "kernels/hotspot/small.json",
            "--threads",
            threads,
            "--json",
        ]))
        .unwrap();
        v["stats"].clone()
    };
    assert_eq!(json("1"), json("3"));
}

#[test]
fn a_failing_run_reports_the_fault_and_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("paver-it-run-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("oob.ptx");
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<8>;\nld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\n\
         mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\n\
         st.global.u32 [%rd4], %r1;\nret;\n}\n",
    )
    .unwrap();
    let outputs = dir.join("out");
    let p = ptx.to_str().unwrap();
    let err = paver_err(&[
        "run",
        p,
        "--grid",
        "2",
        "--block",
        "64",
        "--param",
        "p=buffer:u32:40:zeros",
        "--outputs",
        outputs.to_str().unwrap(),
    ]);
    assert!(
        err.contains("out-of-bounds store") && err.contains("TB (0,0,0), thread (40,0,0)"),
        "{err}"
    );
    assert!(err.contains("line 13"), "{err}");
    assert!(!outputs.exists(), "nothing written on error");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    let err = paver_err(&[
        "run",
        p,
        "--grid",
        "1",
        "--block",
        "32",
        "--param",
        "p=buffer:u32:32:zeros",
        "--max-instructions",
        "3",
    ]);
    assert!(err.contains("budget of 3"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn outputs_never_replace_existing_files() {
    let dir = std::env::temp_dir().join(format!("paver-it-run-keep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let e = paver_err(&[
        "run",
        "kernels/mm_naive/mm_naive.compute_70.ptx",
        "--launch",
        "kernels/mm_naive/small.json",
        "--outputs",
        dir.to_str().unwrap(),
    ]);
    assert!(e.contains("must be a new or empty folder"), "{e}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel that calls device functions nvcc kept out of line (`__noinline__`; NVRTC's PTX in
/// `ptx-parser/tests/data/calls_nvrtc.cu`): the calls are inlined at load
/// (`ptx_parser::calls`), so `run` computes what the CUDA source says, the static analysis
/// resolves the loads inside the callee exactly as the interpreter sees them, and the
/// `printf` that cannot run is named when a thread reaches it.
#[test]
fn calls_to_device_functions_run_and_analyse() {
    let dir = std::env::temp_dir().join(format!("paver-it-calls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ptx = "ptx-parser/tests/data/calls_nvrtc.ptx";
    let launch = [
        "--grid",
        "2",
        "--block",
        "64",
        "--param",
        "0=buffer:f32:256:iota",
        "--param",
        "1=buffer:f32:256:zeros",
        "--param",
        "2=120",
    ];
    let mut args = vec!["run", ptx];
    args.extend(launch);
    args.extend(["--param", "3=5", "--outputs", dir.to_str().unwrap()]);
    paver_ok(&args);
    let out = std::fs::read(dir.join("p1_r_param_1.npy")).unwrap();
    let data = npy_data(&out, "<f4", 256);
    for i in 0..256usize {
        let got = f32::from_le_bytes(data[4 * i..4 * i + 4].try_into().unwrap());
        // out[i] = a[i] + a[i+1] + a[i+2] + a[i+3] + fact(5), a = iota, for i < n.
        let want = if i < 120 {
            (4 * i + 6) as f32 + 120.0
        } else {
            0.0
        };
        assert_eq!(got, want, "out[{i}]");
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Static and dynamic footprints agree through the calls.
    let summary = |dynamic: bool| {
        let mut a = vec!["analyze", ptx];
        a.extend(launch);
        a.extend(["--param", "3=5"]);
        if dynamic {
            a.push("--dynamic");
        }
        let s = paver_ok(&a);
        s.lines().take(3).collect::<Vec<_>>().join("\n")
    };
    let st = summary(false);
    assert!(
        st.contains("global loads: 4: in the graph 4, guarded 0, never executed 0, unresolved 0"),
        "{st}"
    );
    assert_eq!(st, summary(true));
    // d > 20 reaches the printf, which runs and prints nothing (it was an error: many
    // public kernels keep debug printfs); fact(25) wraps in 32 bits as on the GPU.
    let mut a = vec!["run", ptx];
    a.extend(launch);
    a.extend(["--param", "3=25", "--outputs", dir.to_str().unwrap()]);
    paver_ok(&a);
    let out = std::fs::read(dir.join("p1_r_param_1.npy")).unwrap();
    let data = npy_data(&out, "<f4", 256);
    let fact25 = 2_076_180_480i32 as f32; // 25! mod 2^32, as an int
    for i in 0..120usize {
        let got = f32::from_le_bytes(data[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(got, (4 * i + 6) as f32 + fact25, "out[{i}]");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
