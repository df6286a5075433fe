//! Robustness: no input makes the parser panic or hang, and whatever parses also round-trips
//! through the printer.

use proptest::prelude::*;

const SMALL: &str = r#"
.version 8.4
.target sm_90
.address_size 64
.global .align 4 .b8 tbl[4] = {1, 2, 3, 4};
.func (.param .b32 r) f(.param .b32 a);
.visible .entry k(
	.param .u64 .ptr .global .align 8 k_param_0,
	.param .u32 k_param_1
)
.maxntid 128, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<5>;
	.shared .align 4 .b8 sm[512];
	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	mov.u32 	%r2, %tid.x;
	setp.ge.s32 	%p1, %r2, %r1;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.s32 	%rd3, %r2, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.nc.f32 	%r3, [%rd4+-4];
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0], %r3;
	.param .b32 retval0;
	call.uni (retval0), f, (param0);
	ld.param.b32 	%r4, [retval0];
	} // callseq 0
	st.shared.u32 	[sm+8], %r4;
	bar.sync 	0;
	st.global.f32 	[%rd4], 0f3F800000;
$L__BB0_2:
	ret;
}
"#;

fn check(src: &str) {
    if let Ok(m) = ptx_parser::parse(src) {
        let text = m.to_string();
        let m2 = ptx_parser::parse(&text)
            .unwrap_or_else(|e| panic!("printed text fails to parse: {e}\n{text}"));
        assert_eq!(m, m2, "reparse differs\n{text}");
        for f in &m.functions {
            let _ = f.cfg();
            let _ = f.instruction_mix();
        }
    }
}

#[test]
fn small_kernel_parses() {
    let m = ptx_parser::parse(SMALL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.entries().count(), 1);
    check(SMALL);
}

#[test]
fn every_truncation() {
    for (i, _) in SMALL.char_indices() {
        check(&SMALL[..i]);
    }
}

#[test]
fn every_single_byte_deletion() {
    let b = SMALL.as_bytes();
    for i in 0..b.len() {
        let mut v = b.to_vec();
        v.remove(i);
        check(&String::from_utf8_lossy(&v));
    }
}

fn token_soup() -> impl Strategy<Value = String> {
    let tok = prop::sample::select(vec![
        ".version 8.0",
        ".target sm_90",
        ".entry",
        ".func",
        ".visible",
        ".reg",
        ".b32",
        ".pred",
        ".param",
        ".u64",
        ".global",
        ".shared",
        ".align",
        "4",
        "%r<4>",
        "%r1",
        "%p1",
        "k",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ",",
        ":",
        "@",
        "!",
        "mov.u32",
        "ld.global.f32",
        "bra",
        "$L1",
        "ret",
        "0f3F800000",
        "-1",
        "+",
        "=",
        "\"s\"",
        ".loc 1 2 3",
        "/*",
        "*/",
        "//",
        "\n",
        ".section",
        ".debug_info",
        "call.uni",
        "_",
        "|",
        "<",
        ">",
        "0x",
        "1.5",
        ".maxntid",
    ]);
    prop::collection::vec(tok, 0..60).prop_map(|v| v.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings(s in ".{0,400}") {
        check(&s);
    }

    #[test]
    fn arbitrary_token_soup(s in token_soup()) {
        check(&s);
    }

    #[test]
    fn mutated_real_ptx(flips in prop::collection::vec((0usize..SMALL.len(), any::<u8>()), 1..8)) {
        let mut b = SMALL.as_bytes().to_vec();
        for (i, v) in flips {
            if let Some(x) = b.get_mut(i) {
                *x = v;
            }
        }
        check(&String::from_utf8_lossy(&b));
    }

    #[test]
    fn spliced_real_ptx(a in 0usize..SMALL.len(), b in 0usize..SMALL.len(), c in 0usize..SMALL.len()) {
        let s = SMALL.as_bytes();
        let (lo, hi) = (a.min(b), a.max(b));
        let mut v = s[..c].to_vec();
        v.extend_from_slice(&s[lo..hi]);
        v.extend_from_slice(&s[c..]);
        check(&String::from_utf8_lossy(&v));
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let deep = "{".repeat(100_000);
    check(&format!(".entry k() {deep}"));
    let list = "(".repeat(100_000);
    check(&format!(".entry k() {{ call {list} }}"));
    let init = "{".repeat(100_000);
    check(&format!(".global .b32 x[1] = {init};"));
    check(&"[".repeat(100_000));
    check(".reg .b32 %r<4000000000>;");
    check(".entry k() { .reg .b32 %r<4000000000>; }");
}
