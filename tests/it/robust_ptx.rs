//! Issue 14, the PTX side: invalid PTX is rejected as `ptxas` rejects it (family 4), barriers
//! follow the PTX ISA (family 3), the interpreter wraps 32-bit shared addresses and gives the
//! canonical NaN (family 8), and no message carries Rust debug text (family 9).
//!
//! Every PTX text in this file is hand-written test input, not compiler output: each is the
//! smallest kernel that shows one behaviour, written from the PTX ISA. Expected values are
//! worked out by hand in the comments next to them.

use std::path::{Path, PathBuf};

use crate::common::{paver, paver_err, paver_ok};

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// A scratch folder for this test (removed first).
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("paver-it-robust-ptx-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `text` to `dir/name` and returns the path as a string.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// A kernel `k(.param .u64 p)` with a few registers declared and `body` (one line) on line 12.
fn kernel_with(body: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 p)\n{{\n.reg .pred %p<3>;\n.reg .b32 %r<10>;\n\
         .reg .f32 %f<5>;\n.reg .b64 %rd<5>;\n.shared .align 4 .b8 sm[256];\n\
         ld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
    )
}

/// Rust debug text that must never reach a user.
const DEBUG_TEXT: [&str; 8] = [
    "Some(", "None", "Imm(", "Int(", "Reg(", "RegId", "Operand", "\"}",
];

fn assert_no_debug_text(msg: &str) {
    for d in DEBUG_TEXT {
        assert!(!msg.contains(d), "debug text {d:?} in: {msg}");
    }
}

/// Family 4: each invalid instruction is rejected by `paver parse` (and `analyze`) with the
/// file, line and column, and a message in the words ptxas uses (CUDA 12.9 ptxas rejects
/// every one of these; its message is quoted in the comment).
#[test]
fn invalid_instructions_are_rejected_with_their_location() {
    let dir = scratch("invalid");
    let cases = [
        // ptxas: Unknown modifier '.glbal'
        ("ld.glbal.u32 %r1, [%rd1];", "unknown modifier '.glbal'"),
        // ptxas: Unexpected number of state spaces specified in instruction 'ld'
        ("ld.global.shared.u32 %r1, [%rd1];", "takes one state space"),
        // ptxas: Unexpected instruction types specified for 'ld'
        ("ld.global.u32.f32 %r1, [%rd1];", "takes one type"),
        // ptxas: Arguments mismatch for instruction 'st'
        ("st.global.u32 [%rd1], %r1, %r2;", "'st' takes 2 operands"),
        // ptxas: Predicate expression expected
        ("@%r1 ret;", "a guard must be a .pred register"),
        // ptxas: Argument vector size mismatch for instruction 'ld'
        (
            "ld.global.v4.u32 {%r1, %r2}, [%rd1];",
            "vector operand has 2 elements",
        ),
        // ptxas: Barrier number '16' out of range, expected to be in range [0..15]
        ("bar.sync 16;", "barrier number 16 out of range"),
        // ptxas: Number of threads participating in barrier must be in multiple of warp size
        ("bar.sync 1, 48;", "multiple of the warp size"),
        // ptxas: Instruction 'bar.arrive' requires a non-zero thread count argument
        ("bar.arrive 1;", "'bar.arrive' takes 2 operands"),
        // ptxas: Constant overflow
        ("mov.u32 %r1, 99999999999999999999999;", "invalid number"),
    ];
    for (k, (body, want)) in cases.iter().enumerate() {
        let file = write(&dir, &format!("bad{k}.ptx"), &kernel_with(body));
        let err = paver_err(&["parse", &file]);
        // The instruction's column, or the literal's for the constant that does not fit.
        let col = if body.starts_with("mov") { 14 } else { 1 };
        assert!(
            err.contains(&format!("{file}:12:{col}: error: ")),
            "{body}: {err}"
        );
        assert!(err.contains(want), "{body}: {err}");
        assert_no_debug_text(&err);
    }
    // `analyze` used to count `ld.glbal` as a resolved global load; now it stops.
    let file = write(&dir, "glbal.ptx", &kernel_with("ld.glbal.u32 %r1, [%rd1];"));
    let err = paver_err(&[
        "analyze",
        &file,
        "--grid",
        "1",
        "--block",
        "32",
        "--param",
        "p=buffer:u32:32:zeros",
    ]);
    assert!(err.contains("unknown modifier '.glbal'"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Family 4: an empty file is not "PTX 0.0"; two kernels of one name are an error.
#[test]
fn empty_files_and_duplicate_kernels_are_rejected() {
    let dir = scratch("module");
    let empty = write(&dir, "empty.ptx", "");
    let err = paver_err(&["parse", &empty]);
    assert!(err.contains("missing .version directive"), "{err}");
    assert!(!err.contains("0.0"), "{err}");
    let dup = write(
        &dir,
        "dup.ptx",
        &format!("{HEAD}.entry k()\n{{\nret;\n}}\n.entry k()\n{{\nret;\n}}\n"),
    );
    let err = paver_err(&["parse", &dup]);
    assert!(
        err.contains(&format!(
            "{dup}:8:8: error: duplicate definition of kernel 'k'"
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Family 4: `.maxntid` / `.reqntid` smaller than (or different from) the launched block
/// stop the launch, naming the directive.
#[test]
fn maxntid_and_reqntid_are_checked_at_launch() {
    let dir = scratch("ntid");
    let ptx = format!(
        "{HEAD}.visible .entry m(.param .u64 p) .maxntid 64, 1, 1\n{{\nret;\n}}\n\
         .visible .entry r(.param .u64 p) .reqntid 32, 2, 1\n{{\nret;\n}}\n"
    );
    let file = write(&dir, "ntid.ptx", &ptx);
    let args = |cmd: &'static str, k: &'static str, block: &'static str| -> Vec<String> {
        [
            cmd,
            file.as_str(),
            "--kernel",
            k,
            "--grid",
            "1",
            "--block",
            block,
            "--param",
            "p=buffer:u32:4:zeros",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    fn strs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    for (k, block, want) in [
        ("m", "128", ".maxntid 64, 1, 1 (at most 64 threads per TB)"),
        (
            "r",
            "64",
            ".reqntid 32, 2, 1 but the launch's block is (64,1,1)",
        ),
    ] {
        for cmd in ["run", "simulate", "analyze", "launch"] {
            let a = args(cmd, k, block);
            let err = paver_err(&strs(&a));
            assert!(err.contains(want), "{cmd}: {err}");
        }
    }
    // Blocks that fit run.
    for (k, block) in [("m", "64"), ("m", "8x8"), ("r", "32x2")] {
        paver_ok(&strs(&args("run", k, block)));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hand-written test input: producer/consumer pairs on named barriers. In `pc_literal` (64
/// threads) warp 0 waits with `bar.sync 1, 64` while warp 1 fills `buf` and signals with
/// `bar.arrive 1, 64`; `pc_named` (128 threads) runs two such pairs on barriers 1 and 2
/// chosen by register. Producer thread p writes `buf[p - 32] = 3p + 1`, so consumer thread
/// t reads `3(t + 32) + 1 = 3t + 97` and stores it to `out[t]`; producers store nothing.
const PRODUCER_CONSUMER: &str = "\
.visible .entry pc_literal(.param .u64 out)
{
.reg .pred %p<2>;
.reg .b32 %r<8>;
.reg .b64 %rd<4>;
.shared .align 4 .b32 buf[64];
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r1, %tid.x;
setp.ge.u32 %p1, %r1, 32;
@%p1 bra PRODUCE;
bar.sync 1, 64;
mov.u32 %r5, buf;
shl.b32 %r6, %r1, 2;
add.u32 %r5, %r5, %r6;
ld.shared.u32 %r7, [%r5];
mul.wide.u32 %rd2, %r1, 4;
add.u64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r7;
ret;
PRODUCE:
mad.lo.u32 %r7, %r1, 3, 1;
sub.u32 %r6, %r1, 32;
shl.b32 %r6, %r6, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r6;
st.shared.u32 [%r5], %r7;
bar.arrive 1, 64;
ret;
}
.visible .entry pc_named(.param .u64 out)
{
.reg .pred %p<2>;
.reg .b32 %r<8>;
.reg .b64 %rd<4>;
.shared .align 4 .b32 buf[128];
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r1, %tid.x;
shr.u32 %r2, %r1, 5;
and.b32 %r3, %r2, 1;
shr.u32 %r4, %r1, 6;
add.u32 %r4, %r4, 1;
setp.eq.u32 %p1, %r3, 1;
@%p1 bra PRODUCE;
bar.sync %r4, 64;
mov.u32 %r5, buf;
shl.b32 %r6, %r1, 2;
add.u32 %r5, %r5, %r6;
ld.shared.u32 %r7, [%r5];
mul.wide.u32 %rd2, %r1, 4;
add.u64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r7;
ret;
PRODUCE:
mad.lo.u32 %r7, %r1, 3, 1;
sub.u32 %r6, %r1, 32;
shl.b32 %r6, %r6, 2;
mov.u32 %r5, buf;
add.u32 %r5, %r5, %r6;
st.shared.u32 [%r5], %r7;
bar.arrive %r4, 64;
ret;
}
";

/// Hand-written test input: half the TB waits at barrier 0, the other half at barrier 1;
/// neither can complete (a hang on a GPU). After the 3 header lines, `bar.sync 1` is on line 11
/// of the file and `bar.sync 0` on line 14.
const DEADLOCK: &str = "\
.visible .entry deadlock(.param .u64 out)
{
.reg .pred %p<2>;
.reg .b32 %r<4>;
mov.u32 %r1, %tid.x;
setp.lt.u32 %p1, %r1, 64;
@%p1 bra LOW;
bar.sync 1;
ret;
LOW:
bar.sync 0;
ret;
}
";

/// Reads `len` little-endian u32 values from a 1-D .npy file.
fn npy_u32(path: &Path, len: usize) -> Vec<u32> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..6], b"\x93NUMPY");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let data = &b[10 + hlen..];
    assert_eq!(data.len(), len * 4);
    data.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Family 3: legal named-barrier kernels run correctly in `run` and `simulate`.
#[test]
fn producer_consumer_barriers_run_and_simulate() {
    let dir = scratch("pc");
    let file = write(&dir, "pc.ptx", &format!("{HEAD}{PRODUCER_CONSUMER}"));
    for (kernel, threads) in [("pc_literal", 64usize), ("pc_named", 128)] {
        let out = dir.join(kernel);
        let block = threads.to_string();
        let param = format!("out=buffer:u32:{threads}:zeros");
        let summary = paver_ok(&[
            "run",
            &file,
            "--kernel",
            kernel,
            "--grid",
            "2",
            "--block",
            &block,
            "--param",
            &param,
            "--outputs",
            out.to_str().unwrap(),
            "--json",
        ]);
        let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
        let got = npy_u32(&out.join("p0_out.npy"), threads);
        let want: Vec<u32> = (0..threads as u32)
            .map(|t| if (t / 32) % 2 == 0 { 3 * t + 97 } else { 0 })
            .collect();
        assert_eq!(got, want, "{kernel}");
        let stats = paver_ok(&[
            "simulate", &file, "--kernel", kernel, "--grid", "2", "--block", &block, "--param",
            &param, "--quiet",
        ]);
        let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
        assert_eq!(v["tbs"], 2, "{stats}");
        // The timing model executes the same instructions as the interpreter.
        assert_eq!(
            v["warp_instructions"], summary["stats"]["warp_instructions"],
            "{kernel}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Family 3: a TB that deadlocks on hardware ends with an error naming the TB, the warps
/// and threads, the barriers and their PTX lines, in `run` and in `simulate`.
#[test]
fn barrier_deadlock_is_reported() {
    let dir = scratch("deadlock");
    let file = write(&dir, "dl.ptx", &format!("{HEAD}{DEADLOCK}"));
    for cmd in ["run", "simulate"] {
        let err = paver_err(&[
            cmd,
            &file,
            "--grid",
            "1",
            "--block",
            "128",
            "--param",
            "out=buffer:u32:4:zeros",
        ]);
        assert!(
            err.contains("barrier deadlock in kernel deadlock, TB (0,0,0)"),
            "{err}"
        );
        // Threads 0-63 (warps 0-1) branch to `bar.sync 0`, threads 64-127 wait at `bar.sync 1`.
        assert!(
            err.contains(
                "warps 0-1 (threads 0-63) wait at barrier 0 (PTX line 14), 2 of 4 warps arrived"
            ),
            "{err}"
        );
        assert!(
            err.contains(
                "warps 2-3 (threads 64-127) wait at barrier 1 (PTX line 11), 2 of 4 warps arrived"
            ),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Family 3: barrier operands in registers are checked when they execute.
#[test]
fn invalid_barrier_operands_in_registers_stop_the_run() {
    let dir = scratch("barops");
    for (k, (setup, bar, want)) in [
        (
            "mov.u32 %r1, 16;",
            "bar.sync %r1;",
            "barrier number 16 out of range",
        ),
        (
            "mov.u32 %r1, 48;",
            "bar.sync 0, %r1;",
            "thread count 48 is not a positive multiple of the warp size (32)",
        ),
        (
            "mov.u32 %r1, 2048;",
            "bar.sync 0, %r1;",
            "waits for 2048 threads but the TB has 64",
        ),
        (
            "mov.u32 %r1, %tid.x;",
            "bar.sync %r1;",
            "barrier operand differs between lanes",
        ),
    ]
    .iter()
    .enumerate()
    {
        let ptx = format!(
            "{HEAD}.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<3>;\n{setup}\n{bar}\nret;\n}}\n"
        );
        let file = write(&dir, &format!("b{k}.ptx"), &ptx);
        let err = paver_err(&[
            "run",
            &file,
            "--grid",
            "1",
            "--block",
            "64",
            "--param",
            "p=buffer:u32:4:zeros",
        ]);
        assert!(err.contains(want), "{bar}: {err}");
        assert!(err.contains("PTX line 8"), "{bar}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hand-written test input, the Rodinia pattern: thread t forms the base `sm + 4t - 64` in a
/// 32-bit register (below zero, so it wraps, for t < 16) and addresses `[%r4+64]` (its own
/// slot) and `[%r4+68]` (the next one). A GPU keeps the low 32 bits of a shared address.
/// Thread t stores `7t + 5`; after the barrier it reads slot t + 1 (t < 31) or its own
/// (t = 31): out[t] = 7(t + 1) + 5 for t < 31, out[31] = 7 * 31 + 5 = 222.
const SHARED_WRAP: &str = "\
.visible .entry shared_wrap(.param .u64 out)
{
.reg .pred %p<2>;
.reg .b32 %r<10>;
.reg .b64 %rd<4>;
.shared .align 4 .b32 sm[32];
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r1, %tid.x;
mov.u32 %r2, sm;
shl.b32 %r3, %r1, 2;
add.u32 %r4, %r2, %r3;
sub.u32 %r4, %r4, 64;
mad.lo.u32 %r5, %r1, 7, 5;
st.shared.u32 [%r4+64], %r5;
bar.sync 0;
setp.lt.u32 %p1, %r1, 31;
@%p1 ld.shared.u32 %r6, [%r4+68];
@!%p1 ld.shared.u32 %r6, [%r4+64];
mul.wide.u32 %rd2, %r1, 4;
add.u64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r6;
ret;
}
";

/// Family 8: wrapping 32-bit shared addresses work in `run`, `simulate` and
/// `analyze --dynamic`.
#[test]
fn shared_addresses_wrap_at_32_bits() {
    let dir = scratch("wrap");
    let file = write(&dir, "wrap.ptx", &format!("{HEAD}{SHARED_WRAP}"));
    let launch = [
        "--grid",
        "1",
        "--block",
        "32",
        "--param",
        "out=buffer:u32:32:zeros",
    ];
    let out = dir.join("out");
    let mut args = vec!["run", file.as_str()];
    args.extend(launch);
    args.extend(["--outputs", out.to_str().unwrap()]);
    paver_ok(&args);
    let want: Vec<u32> = (0..32)
        .map(|t| if t < 31 { 7 * (t + 1) + 5 } else { 222 })
        .collect();
    assert_eq!(npy_u32(&out.join("p0_out.npy"), 32), want);
    let mut sim = vec!["simulate", file.as_str(), "--quiet"];
    sim.extend(launch);
    paver_ok(&sim);
    let mut an = vec!["analyze", file.as_str(), "--dynamic"];
    an.extend(launch);
    paver_ok(&an);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hand-written test input: f32 operations whose result is NaN store `0x7fffffff`, the
/// canonical NaN of NVIDIA GPUs (x86 gives `0xffc00000` for the same operations):
/// 0/0 (div.rn and div.approx), sqrt(-1) (rn and approx), inf - inf, 0 * inf,
/// fma(0, inf, -1), rsqrt(-1), lg2(-1); then two that are not arithmetic and keep their bits:
/// neg of the canonical NaN (0xffffffff) and abs of -1 (0x3f800000).
const NANS: &str = "\
.visible .entry nans(.param .u64 out)
{
.reg .f32 %f<20>;
.reg .b64 %rd<3>;
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mov.f32 %f1, 0f00000000;
mov.f32 %f2, 0fBF800000;
mov.f32 %f3, 0f7F800000;
div.rn.f32 %f4, %f1, %f1;
div.approx.f32 %f5, %f1, %f1;
sqrt.rn.f32 %f6, %f2;
sqrt.approx.f32 %f7, %f2;
sub.f32 %f8, %f3, %f3;
mul.f32 %f9, %f1, %f3;
fma.rn.f32 %f10, %f1, %f3, %f2;
rsqrt.approx.f32 %f11, %f2;
lg2.approx.f32 %f12, %f2;
neg.f32 %f13, %f4;
abs.f32 %f14, %f2;
st.global.v4.f32 [%rd1], {%f4, %f5, %f6, %f7};
st.global.v4.f32 [%rd1+16], {%f8, %f9, %f10, %f11};
st.global.v4.f32 [%rd1+32], {%f12, %f13, %f14, %f1};
ret;
}
";

/// Family 8: NaN-producing f32 operations give the canonical NaN 0x7fffffff.
#[test]
fn f32_nans_are_canonical() {
    let dir = scratch("nan");
    let file = write(&dir, "nan.ptx", &format!("{HEAD}{NANS}"));
    let out = dir.join("out");
    paver_ok(&[
        "run",
        &file,
        "--grid",
        "1",
        "--block",
        "1",
        "--param",
        "out=buffer:u32:12:zeros",
        "--outputs",
        out.to_str().unwrap(),
    ]);
    let c = 0x7fff_ffff;
    assert_eq!(
        npy_u32(&out.join("p0_out.npy"), 12),
        vec![c, c, c, c, c, c, c, c, c, 0xffff_ffff, 0x3f80_0000, 0]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Family 9: the messages of bad inputs to the parser and the interpreter carry no Rust
/// debug text (`Some(..)`, `Imm(Int(5))`, `modifiers .` for `add.cc`).
#[test]
fn messages_carry_no_debug_text() {
    let dir = scratch("messages");
    // Instructions the parser accepts but the interpreter cannot run, and malformed ones.
    let bodies = [
        "add.cc.u32 %r1, %r2, %r3;",
        "testp.nan.f32 %p1, %f1;",
        "testp.f32 %p1, %f1;",
        "mov.u32 5, %r1;",
        "add.u32 5, %r1, %r2;",
        "ld.global.u32 %r1, 5;",
        "cvta.u64 %rd2, %rd1;",
        "frobnicate.u32 %r1;",
        "mov.u32 %r1, ;",
        "ld.global.u32 %r1, [%rd1+];",
        "st.global.u32 [%rd1], {%r1};",
        "bar.sync;",
        "bar.red.popc.u32 %r1;",
    ];
    for (k, body) in bodies.iter().enumerate() {
        let file = write(&dir, &format!("m{k}.ptx"), &kernel_with(body));
        let runs = [
            vec!["parse", file.as_str()],
            vec![
                "run",
                file.as_str(),
                "--grid",
                "1",
                "--block",
                "32",
                "--param",
                "p=buffer:u32:64:zeros",
            ],
        ];
        for args in &runs {
            let cmd = args[0];
            let out = paver(args);
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!text.contains("panicked"), "{cmd} {body}: {text}");
            assert_no_debug_text(&text);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
