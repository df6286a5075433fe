//! The direct lowering (`ptx-parser/src/lower/direct.rs`) against the two-pass reference, on
//! the corpus, `tests/data` and the benchmark's unrolled GEMM module (`benches/data`):
//! [`ptx_parser::parse`] and [`ptx_parser::parse_two_pass`] must give equal modules, equal
//! spans and identical error messages on every input, and the direct path must actually be
//! taken on compiler output (otherwise the comparison would prove nothing).

use std::path::{Path, PathBuf};

#[path = "common/walk.rs"]
mod walk;

fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = Vec::new();
    walk::collect_ptx(&root.join("../kernels"), &mut v);
    let corpus = v.len();
    walk::collect_ptx(&root.join("tests/data"), &mut v);
    let data = v.len();
    walk::collect_ptx(&root.join("benches/data"), &mut v);
    assert!(
        corpus > 0 && data > corpus && v.len() > data,
        "corpus, tests/data or benches/data missing"
    );
    v
}

/// Parses `src` both ways and fails on any difference. Returns whether it parsed.
fn same(src: &str, what: &str) -> bool {
    match (ptx_parser::parse(src), ptx_parser::parse_two_pass(src)) {
        (Ok(a), Ok(b)) => {
            assert!(a == b, "{what}: modules differ");
            for (fa, fb) in a.functions.iter().zip(&b.functions) {
                // `Function`'s equality ignores spans.
                assert_eq!(fa.spans, fb.spans, "{what}: spans of {} differ", fa.name);
            }
            true
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{what}: errors differ");
            false
        }
        (a, b) => panic!(
            "{what}: direct {} but two-pass {}",
            if a.is_ok() { "parses" } else { "fails" },
            if b.is_ok() { "parses" } else { "fails" }
        ),
    }
}

#[test]
fn compiler_output_is_lowered_directly_and_identically() {
    for path in files() {
        let src = std::fs::read_to_string(&path).expect("readable");
        let what = path.display().to_string();
        assert!(same(&src, &what), "{what} does not parse");
        let m = ptx_parser::parse(&src).expect("parses");
        let bodies = m.functions.iter().filter(|f| f.has_body).count();
        assert!(bodies > 0, "{what}: no function body");
        assert_eq!(
            ptx_parser::direct_bodies(&src),
            bodies,
            "{what}: not every body was lowered directly"
        );
        // The printer's layout differs from the compilers' (tabs, operand lists).
        let printed = m.to_string();
        assert!(same(&printed, &format!("{what}, printed")));
        assert_eq!(
            ptx_parser::direct_bodies(&printed),
            bodies,
            "{what}, printed"
        );
    }
}

const HEAD: &str = ".version 8.4\n.target sm_90\n.address_size 64\n\
    .global .align 4 .b32 g[4];\n.func (.param .b32 r) f(.param .b32 a);\n";

/// Bodies exercising every corner where the direct path hands over to the parser or gives up.
const BODIES: &[&str] = &[
    // forward and backward labels, a label that shadows a symbol, labels in scopes
    "{\n.reg .pred %p<2>;\nbra $L1;\n$L0:\n@%p1 bra $L0;\n$L1 :\n@!%p0 bra.uni g;\ng:\nret;\n}",
    "{\n.reg .b32 %r<3>;\n{\nL: mov.u32 %r1, 1;\nbra L;\n}\n{\nL: bra L;\n}\nbra L;\nret;\n}",
    // a name that is only a symbol; an undefined label; a duplicate label
    "{\n.reg .b64 %rd<3>;\nmov.u64 %rd1, g;\nld.param.u32 %rd1, [k_a+4];\nret;\n}",
    "{\nbra nowhere;\n}",
    "{\nA:\nA:\nret;\n}",
    // operands: pairs, vectors, sinks, immediates, negations, addresses, specials
    "{\n.reg .pred %p<3>;\n.reg .b32 %r<9>;\n.reg .f32 %f<4>;\n\
     shfl.sync.down.b32 %r1|%p1, %r2, 1, 31, -1;\n\
     setp.lt.and.s32 %p1|%p2, %r4, 0xFFFFFFFFU, !%p0;\n\
     ld.global.v2.f32 {%f1, _}, [%r1+-4];\nld.global.v4.f32 {%f1,%f2 ,%f3, %f0}, [%r1 - 8];\n\
     mov.b32 %f2, 0f3F800000;\nmov.f32 %f2, 1.5e-3;\nadd.s32 %r1, %r2, - 7;\n\
     st.global.u32 [%r1 + 0x10], %tid.x;\nld.global.u32 %r3, [16];\nld.global.u32 %r3, [-16+4];\n\
     mov.u32 %r5, WARP_SZ;\nmov.u32 %r6, %nctaid.y;\nld.u8 %r1, [%r2+0x8000000000000001];\n\
     ld.u8 %r1, [%r2+-18446744073709551615];\nld.u8 %r1, [%r2+0x7FFFFFFFFFFFFFFF];\nret;\n}",
    // statements the parser handles: declarations, pragmas, calls, multi-line operands
    "{\n.reg .b32 %r<3>, %x;\n.shared .align 4 .b8 sm[64];\n.local .u32 l;\n.pragma \"nounroll\";\n\
     {\n.param .b32 p0;\nst.param.b32 [p0], %r1;\n.param .b32 r0;\ncall.uni (r0), f, (p0);\n\
     ld.param.b32 %r2, [r0];\n}\nmov.u32 %r1,\n  %r2;\nadd.u32 %x,\n%r1, %r2;\nst.shared.u32 [sm+4], %x;\nret;\n}",
    // comments everywhere, .loc with trailing words, an instruction without `;` at the end
    "{\n// c\n.reg .b32 %r<3>; /* a\nb */ mov.u32 %r1, 1; // x\n.loc 1 2 3\n.loc\t1 4 5, function_name $Lx, inlined_at 1 2 3\n\
     mov.u32 %r2, %r1 /* mid */ ;\n.loc 1 07 0x3\nret\n}",
    "{\n.reg .b32 %r<3>;\nmov.u32 %r1 %r2;\nret;\n}",
    // numbers at the edges of the plain-decimal fast path
    "{\n.reg .b64 %rd<3>;\n.loc 1 4294967295 0\nmov.u64 %rd1, 123456789012345678;\n\
     mov.u64 %rd1, 1234567890123456789;\nmov.u64 %rd1, -9223372036854775808;\nmov.u64 %rd1, 007;\n\
     mov.u64 %rd1, -0;\nmov.u64 %rd1, 18446744073709551615;\nld.u8 %rd1, [%rd2+999999999999999999];\n\
     mov.f64 %rd1, 1.;\nmov.f64 %rd1, 1e5;\nmov.f64 %rd1, 1E+5;\nmov.u64 %rd1, 1U;\nret;\n}",
    "{\n.loc 1 4294967296 0\nret;\n}",
    "{\n.loc 1 00 1\nret;\n}",
    "{\nmov.u64 %rd1, 12ab;\n}",
    // registers: out of range, leading zeros, shadowing, undeclared, non-% names
    "{\n.reg .b32 %r<3>;\nmov.u32 %r3, %r01;\n}",
    "{\n.reg .b32 %r<3>;\n{\n.reg .b32 %r<2>;\nmov.u32 %r1, %r2;\n}\n.reg .pred p;\n@p ret;\n@!p exit;\n}",
    "{\nmov.u32 %q, 1;\n}",
    // labelled directives, odd bytes, deep nesting
    "{\n.reg .b64 %rd<2>;\np1 : .callprototype (.param .b32 _) _ (.param .b64 _);\n\
     ts: .branchtargets $A, $B;\nbrx.idx %rd1, ts;\n$A:\n$B:\nret;\n}",
    "{\nret; \u{e9}\n}",
    "{\nret; #\n}",
    "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{ret;}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}",
    "{\nfrobnicate.sync.aligned.m16n8k16.x4.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z 1;\n}",
    "{\nmov.u32 %r1, \"s\";\n}",
    "{\n.reg .b32 %r<2>;\nlabel\n: mov.u32 %r1, 1;\nret;\n}",
];

#[test]
fn corner_cases_match_the_reference() {
    let mut parsed = 0;
    for (k, body) in BODIES.iter().enumerate() {
        let src = format!("{HEAD}.visible .entry k(.param .u32 k_a)\n{body}\n");
        parsed += usize::from(same(&src, &format!("body {k}:\n{src}")));
    }
    // Both outcomes must be exercised.
    assert!(parsed >= 6 && parsed < BODIES.len(), "{parsed} parsed");
}

/// More distinct instruction words than the parser caches (4,096): the uncached ones must
/// still be lowered directly, and the same way.
#[test]
fn words_past_the_cache_are_lowered_directly() {
    let body: String = (0..4200).map(|k| format!("frob.w{k} 1;\n")).collect();
    let src = format!("{HEAD}.visible .entry k()\n{{\n{body}ret;\n}}\n");
    assert!(same(&src, "4,200 distinct words"));
    assert_eq!(ptx_parser::direct_bodies(&src), 1);
    let m = ptx_parser::parse(&src).expect("parses");
    assert_eq!(m.kernel("k").map(|f| f.insts.len()), Some(4201));
}

/// A small deterministic generator (xorshift), so the mutants are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SNIPPETS: &[&str] = &[
    ";",
    ",",
    "}",
    "{",
    "//",
    "/*",
    "*/",
    "\"",
    "%r01",
    "%r1",
    "%rd99999",
    "|",
    "[",
    "]",
    "+",
    "-",
    "@",
    "!",
    ":",
    "_",
    " ",
    "\n",
    "\t",
    ".loc 1 2 3",
    ".loc 1 2",
    "0f3F80",
    "0d3FF0000000000000",
    "$L__BB0_1",
    "$L__BB0_1:",
    "%tid.x",
    ".reg .b32 %q<3>;",
    "{ }",
    "0x",
    "1.5e+",
    "WARP_SZ",
    ".pragma \"x\";",
    "bra $L__BB0_1;",
    "ret;",
    "(",
    ")",
    "<",
    ">",
    "=",
    "\u{e9}",
    "#",
    ".reg",
];

/// Damaged copies of every corpus file: deletions, insertions, duplicated and swapped lines,
/// truncations. Both lowerings must agree on each, whether it parses or not.
#[test]
fn damaged_inputs_match_the_reference() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut failed) = (0, 0);
    for path in files() {
        let src = std::fs::read_to_string(&path).expect("readable");
        let lines: Vec<&str> = src.lines().collect();
        for round in 0..12 {
            let mut text = src.clone();
            for _ in 0..1 + rng.below(3) {
                // Edit at a char boundary inside the body-heavy second half more often.
                let mut at = rng.below(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                match rng.below(5) {
                    0 => {
                        let mut end = (at + 1 + rng.below(24)).min(text.len());
                        while !text.is_char_boundary(end) {
                            end -= 1;
                        }
                        text.replace_range(at..end, "");
                    }
                    1 | 2 => text.insert_str(at, SNIPPETS[rng.below(SNIPPETS.len())]),
                    3 => {
                        let l = lines[rng.below(lines.len())];
                        text.insert_str(at, &format!("\n{l}\n"));
                    }
                    _ => text.truncate(at),
                }
            }
            let what = format!("{} mutant {round}", path.display());
            if same(&text, &what) {
                ok += 1;
            } else {
                failed += 1;
            }
        }
    }
    // The mutants must exercise both outcomes in quantity.
    assert!(ok > 50 && failed > 50, "{ok} parsed, {failed} rejected");
}
