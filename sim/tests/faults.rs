//! Bad input and faults: each stops with an error naming the TB, the thread, the PTX line and
//! the instruction. Kernels are small hand-written PTX.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use launch::Launch;
use sim::{NoObserver, Program, RunOptions, SimError};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs `body` as kernel `k(.param .u64 p)` with `p` a u32 buffer of `len` elements.
fn run_body(body: &str, grid: u64, block: u64, len: u64, max: u64) -> Result<Vec<u8>, SimError> {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 p)\n{{\n.reg .pred %p<8>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n\
         ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\n\
         add.s64 %rd4, %rd2, %rd3;\n{body}\n}}\n"
    );
    let m = ptx_parser::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let f = m.kernel("k").unwrap();
    let json = format!(
        r#"{{"format": "paver-launch/1", "grid": [{grid},1,1], "block": [{block},1,1],
            "params": [{{"index": 0, "buffer": {{"type": "u32", "len": {len}, "init": "zeros"}}}}]}}"#
    );
    let bound = Launch::from_json(&json, Path::new("t.json"))
        .unwrap()
        .bind("k", &sim::param_sigs(f), Path::new("."))
        .unwrap();
    let prog = Program::new(&m, "k")?;
    let opts = RunOptions {
        max_warp_instructions: max,
        ..RunOptions::default()
    };
    sim::run(&prog, &bound, &opts, &mut NoObserver).map(|r| r.buffer(0).unwrap().to_vec())
}

fn err(body: &str, grid: u64, block: u64, len: u64) -> String {
    match run_body(body, grid, block, len, 1_000_000) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// PTX line of the first line of `body` (the header above holds 13 lines).
const BODY_LINE: u32 = 14;

#[test]
fn out_of_bounds_store_names_buffer_tb_thread_and_line() {
    let e = err("st.global.u32 [%rd4], %r1;\nret;", 2, 64, 40);
    assert!(e.contains("out-of-bounds store"), "{e}");
    assert!(e.contains("buffer `p`"), "{e}");
    assert!(e.contains("TB (0,0,0), thread (40,0,0)"), "{e}");
    assert!(e.contains(&format!("PTX line {BODY_LINE}")), "{e}");
    assert!(e.contains("st.global.u32 [%rd4], %r1;"), "{e}");
}

#[test]
fn access_through_a_synthetic_pointer_or_wild_address_faults() {
    let e = err(
        "mov.u64 %rd5, 12345680;\nld.global.u32 %r2, [%rd5];\nret;",
        1,
        32,
        4,
    );
    assert!(
        e.contains("out-of-bounds load") && e.contains("0xbc6150"),
        "{e}"
    );
}

#[test]
fn misaligned_access() {
    let e = err("ld.global.u32 %r2, [%rd4+2];\nret;", 1, 32, 64);
    assert!(e.contains("misaligned load of 4 bytes"), "{e}");
    assert!(
        e.contains("thread (0,0,0)") && e.contains(&format!("PTX line {BODY_LINE}")),
        "{e}"
    );
}

#[test]
fn divergent_barrier() {
    // Lanes 0-15 skip the first barrier and wait for the others at the second: two
    // different barriers in one warp, undefined for `bar.sync` (aligned).
    let body =
        "setp.lt.u32 %p1, %r1, 16;\n@%p1 bra $L_end;\nbar.sync 0;\n$L_end:\nbar.sync 0;\nret;";
    let e = err(body, 1, 64, 64);
    assert!(e.contains("divergent barrier"), "{e}");
    assert!(e.contains("have neither exited nor arrived"), "{e}");
    assert!(
        e.contains("thread (0,0,0)") && e.contains(&format!("PTX line {}", BODY_LINE + 2)),
        "{e}"
    );
    // `if (tid < 16) return; __syncthreads();` as nvcc writes it: the returning lanes branch
    // to the `ret` block and wait there while the others pass the barrier. They never reach
    // a barrier again, so they do not hold it (a GPU runs this code).
    let early = "setp.lt.u32 %p1, %r1, 16;\n@%p1 bra $L_end;\nbar.sync 0;\n\
                 st.global.u32 [%rd4], %r1;\n$L_end:\nret;";
    let out = run_body(early, 1, 64, 64, 1_000_000).unwrap();
    let word = |i: usize| u32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(word(16), 16);
    assert_eq!(word(63), 63);
    // Threads that exited before the barrier do not count: this one is fine.
    let ok = "setp.ge.u32 %p1, %r1, 40;\n@%p1 ret;\nbar.sync 0;\nst.global.u32 [%rd4], %r1;\nret;";
    let out = run_body(ok, 1, 64, 64, 1_000_000).unwrap();
    assert_eq!(
        u32::from_le_bytes(out[4 * 39..4 * 40].try_into().unwrap()),
        39
    );
}

#[test]
fn runaway_loop_hits_the_budget() {
    let e = match run_body("$L_top:\nbra $L_top;", 3, 32, 4, 10_000) {
        Err(e @ SimError::Budget { .. }) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(
        e.contains("budget of 10000") && e.contains("TB (0,0,0)") && e.contains("bra $L_top;"),
        "{e}"
    );
}

#[test]
fn division_by_zero() {
    let e = err("sub.u32 %r3, %r1, 5;\ndiv.u32 %r2, 7, %r3;\nret;", 1, 32, 4);
    assert!(
        e.contains("division by zero") && e.contains("thread (5,0,0)"),
        "{e}"
    );
    assert!(e.contains(&format!("PTX line {}", BODY_LINE + 1)), "{e}");
    let e = err("rem.s32 %r2, 7, %r1;\nret;", 1, 32, 4);
    assert!(
        e.contains("division by zero") && e.contains("thread (0,0,0)"),
        "{e}"
    );
}

#[test]
fn unsupported_instruction_stops_with_name_and_line() {
    let e = err("addc.u32 %r2, %r1, %r1;\nret;", 1, 32, 4);
    assert!(
        e.contains("unsupported instruction") && e.contains("addc"),
        "{e}"
    );
    assert!(e.contains(&format!("PTX line {BODY_LINE}")), "{e}");
}

#[test]
fn trap() {
    let e = err("trap;", 1, 32, 4);
    assert!(e.contains("trap executed"), "{e}");
}

/// Warp-level instructions and SIMT: ballot, shuffles, bar.red, shared atomics, divergence.
#[test]
fn warp_collectives_and_reconvergence() {
    let body = "\
and.b32 %r2, %r1, 1;
setp.eq.u32 %p1, %r2, 1;
vote.sync.ballot.b32 %r3, %p1, -1;
shfl.sync.bfly.b32 %r4, %r1, 1, 31, -1;
shfl.sync.idx.b32 %r5, %r1, 3, 31, -1;
shfl.sync.up.b32 %r6|%p2, %r1, 2, 0, -1;
bar.red.popc.u32 %r7, 0, %p1;
@%p1 bra $L_odd;
add.u32 %r8, %r1, 1000;
bra.uni $L_join;
$L_odd:
add.u32 %r8, %r1, 2000;
$L_join:
add.u32 %r9, %r8, %r3;
add.u32 %r9, %r9, %r4;
add.u32 %r9, %r9, %r5;
add.u32 %r9, %r9, %r6;
add.u32 %r9, %r9, %r7;
st.global.u32 [%rd4], %r9;
ret;";
    let out = run_body(body, 1, 64, 64, 1_000_000).unwrap();
    for t in 0..64u32 {
        let lane = t % 32;
        let ballot = 0xAAAA_AAAAu32;
        let bfly = t ^ 1;
        let idx = (t / 32) * 32 + 3;
        let up = if lane >= 2 { t - 2 } else { t };
        let popc = 32;
        let br = if t % 2 == 1 { t + 2000 } else { t + 1000 };
        let want = br
            .wrapping_add(ballot)
            .wrapping_add(bfly)
            .wrapping_add(idx)
            .wrapping_add(up)
            .wrapping_add(popc);
        let got = u32::from_le_bytes(out[4 * t as usize..4 * t as usize + 4].try_into().unwrap());
        assert_eq!(got, want, "thread {t}");
    }
}

/// `match.any/all.sync`, `redux.sync` and `activemask` as nvcc emits them (`__match_any_sync`,
/// `__reduce_add_sync`, ...; PTX ISA 9.7.13.10-11), in a warp whose upper half has left.
#[test]
fn match_redux_and_activemask() {
    let body = "\
setp.ge.u32 %p3, %r1, 48;
@%p3 ret;
and.b32 %r2, %r1, 3;
activemask.b32 %r10;
match.any.sync.b32 %r3, %r2, %r10;
match.all.sync.b32 %r4|%p1, %r2, %r10;
shr.u32 %r11, %r1, 5;
match.all.sync.b32 %r12|%p2, %r11, %r10;
redux.sync.add.u32 %r5, %r1, %r10;
sub.s32 %r13, %r1, 40;
redux.sync.min.s32 %r6, %r13, %r10;
redux.sync.max.u32 %r7, %r1, %r10;
redux.sync.or.b32 %r8, %r2, %r10;
selp.u32 %r15, 1, 0, %p2;
mul.wide.u32 %rd5, %r1, 32;
add.s64 %rd6, %rd2, %rd5;
st.global.v4.u32 [%rd6], {%r3, %r4, %r5, %r6};
st.global.v4.u32 [%rd6+16], {%r7, %r8, %r12, %r15};
ret;";
    let out = run_body(body, 1, 64, 64 * 8, 1_000_000).unwrap();
    let word = |t: usize, k: usize| {
        let o = 32 * t + 4 * k;
        u32::from_le_bytes(out[o..o + 4].try_into().unwrap())
    };
    for t in 0..48usize {
        let (base, active) = if t < 32 {
            (0, 0xFFFF_FFFFu32)
        } else {
            (32, 0x0000_FFFFu32)
        };
        let lanes = base..base + active.count_ones() as usize;
        let same: u32 = (0..32)
            .filter(|&l| active >> l & 1 != 0 && l % 4 == t % 4)
            .fold(0, |m, l| m | 1 << l);
        assert_eq!(word(t, 0), same, "match.any, thread {t}");
        assert_eq!(word(t, 1), 0, "match.all of different values, thread {t}");
        assert_eq!(
            word(t, 2),
            lanes.clone().map(|l| l as u32).sum::<u32>(),
            "add {t}"
        );
        assert_eq!(word(t, 3) as i32, base as i32 - 40, "min.s32, thread {t}");
        assert_eq!(word(t, 4), lanes.end as u32 - 1, "max.u32, thread {t}");
        assert_eq!(word(t, 5), 3, "or, thread {t}");
        assert_eq!(word(t, 6), active, "match.all of equal values, thread {t}");
        assert_eq!(word(t, 7), 1, "match.all's predicate, thread {t}");
    }
}
