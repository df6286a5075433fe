//! Parameters left open (issue 37): the static analysis runs without the values no analysed
//! address, guard or loop bound depends on, gives the same result as with any value, and
//! refuses, naming the parameter and the load, when one does depend on it.

mod common;

use std::path::Path;

use analysis::footprint::Granularity;
use analysis::AnalysisError;
use common::*;
use launch::{
    BoundLaunch, Dim3, ElemType, FieldArg, FieldSpec, Launch, ParamArg, ParamKey, ParamSpec, Scalar,
};

/// lavaMD's `par_str` with `alpha` set.
fn alpha(v: f64) -> ParamSpec {
    ParamSpec {
        key: ParamKey::Index(0),
        comment: None,
        arg: ParamArg::Struct(vec![FieldSpec {
            offset: 0,
            comment: None,
            arg: FieldArg::Value(ElemType::F64, Scalar::Float(v)),
        }]),
    }
}

/// The analysis document without what says how the launch was given.
fn document(m: &ptx_parser::Module, b: &BoundLaunch) -> serde_json::Value {
    let f = m.kernel(&b.kernel).expect("kernel");
    let g = Granularity::Line(128);
    let a = analysis::analyze(f, b, g).expect("analysis");
    let (graph, stats) = analysis::locality::build(&a.footprints);
    let r = analysis::reuse::compute(&a, b, g, &graph);
    let d = analysis::descriptor::compute_enumerated(f, &a, b);
    let mut doc = analysis::report::document_with(f, b, g, &a, &graph, &stats, &r, &d);
    let obj = doc.as_object_mut().expect("object");
    obj.remove("launch");
    obj.remove("open_params");
    doc
}

#[test]
fn lavamd_analyses_with_par_str_open_as_with_any_alpha() {
    for v in VARIANTS {
        let (m, open) = load_with("lavamd", v, "small.json", Vec::new());
        assert_eq!(open.open_params(), [0], "{v}");
        let f = m.kernel(&open.kernel).expect("kernel");
        let a = analysis::analyze(f, &open, Granularity::Line(128))
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        // The box offsets are read exactly; everything after them is data-dependent.
        assert!(a.unresolved.iter().any(|u| u.is_none()), "{v}");
        let (graph, stats) = analysis::locality::build(&a.footprints);
        let r = analysis::reuse::compute(&a, &open, Granularity::Line(128), &graph);
        let doc = analysis::report::document_with(
            f,
            &open,
            Granularity::Line(128),
            &a,
            &graph,
            &stats,
            &r,
            &[],
        );
        assert_eq!(
            doc["open_params"],
            serde_json::json!([{"index": 0, "name": "kernel_gpu_cuda_param_0"}]),
            "{v}"
        );
        assert_eq!(doc["launch"]["params"][0]["value"]["kind"], "open", "{v}");
        let summary = analysis::report::summary(f, &open, &a, &stats);
        assert!(
            summary.contains("left open")
                && summary.contains("parameter 0 (`kernel_gpu_cuda_param_0`)"),
            "{v}: {summary}"
        );
        // The same analysis as with alpha given, whatever alpha.
        let want = document(&m, &open);
        for x in [0.5, -3.0, 0.0] {
            let (m2, valued) = load_with("lavamd", v, "small.json", vec![alpha(x)]);
            assert!(valued.open_params().is_empty());
            assert_eq!(document(&m2, &valued), want, "{v}: alpha {x}");
        }
    }
}

/// One-kernel module `src` bound with the given parameters, the others open.
fn bind(src: &str, params: &[&str]) -> (ptx_parser::Module, BoundLaunch) {
    let m = ptx_parser::parse(src).expect("parse");
    let f = &m.functions[0];
    let mut l = Launch::new(Dim3 { x: 4, y: 1, z: 1 }, Dim3 { x: 32, y: 1, z: 1 });
    l.params = params
        .iter()
        .map(|p| launch::parse_param_flag(p).expect("flag"))
        .collect();
    let b = l
        .bind_open(&f.name, &analysis::param_sigs(f), Path::new("."))
        .expect("bind")
        .with_module(&m);
    (m, b)
}

fn needs(src: &str, params: &[&str]) -> (usize, String, String) {
    let (m, b) = bind(src, params);
    match analysis::analyze(&m.functions[0], &b, Granularity::Line(128)) {
        Err(e @ AnalysisError::NeedsValue { .. }) => {
            let AnalysisError::NeedsValue { need, .. } = &e else {
                unreachable!()
            };
            (need.index, need.why.clone(), e.to_string())
        }
        other => panic!("expected NeedsValue, got {other:?}"),
    }
}

/// `a[i * s]` with `i` the global thread index; `s` (parameter 1) an `.s32`, `n`
/// (parameter 2) an `.s32` bound of a guard, `x` (parameter 3) an `.f32` stored only.
const SCALED: &str = r#"
.version 8.8
.target sm_70
.address_size 64
.visible .entry scaled(
	.param .u64 scaled_a,
	.param .u32 scaled_s,
	.param .u32 scaled_n,
	.param .f32 scaled_x
)
{
	.reg .pred %p<2>;
	.reg .f32 %f<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [scaled_a];
	ld.param.u32 %r1, [scaled_s];
	ld.param.u32 %r2, [scaled_n];
	ld.param.f32 %f1, [scaled_x];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r3, 32, %r4;
	setp.ge.s32 %p1, %r5, %r2;
	@%p1 bra DONE;
	mul.lo.s32 %r6, %r5, %r1;
	mul.wide.s32 %rd2, %r6, 4;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.f32 %f2, [%rd3];
	mul.f32 %f3, %f2, %f1;
	st.global.f32 [%rd3], %f3;
DONE:
	ret;
}
"#;

#[test]
fn a_scalar_in_an_address_or_a_guard_needs_its_value() {
    // `s` scales the address.
    let (p, why, msg) = needs(SCALED, &["2=128"]);
    assert_eq!(p, 1);
    assert!(
        why.contains("the address of the load at PTX line 28"),
        "{why}"
    );
    assert!(
        msg.contains("parameter 1 (`scaled_s`) needs a value")
            && msg.contains("give it with --param 1=VALUE"),
        "{msg}"
    );
    // `n` decides whether the load runs.
    let (p, why, _) = needs(SCALED, &["1=1"]);
    assert_eq!(p, 2);
    assert!(why.contains("load at PTX line 28"), "{why}");
    // With both, `x` (arithmetic only) stays open and changes nothing.
    let (m, b) = bind(SCALED, &["1=1", "2=128"]);
    assert_eq!(b.open_params(), [3]);
    let a = analysis::analyze(&m.functions[0], &b, Granularity::Line(128)).expect("analysis");
    assert!(a.unresolved.iter().all(|u| u.is_none()));
    let (m2, b2) = bind(SCALED, &["1=1", "2=128", "3=2.5"]);
    assert_eq!(document(&m, &b), document(&m2, &b2));
}

/// A loop `for (k = 0; k < n; k++) s += a[k]` with `n` an open parameter, and a load after
/// a floating-point test of an open `.f32`.
const BOUNDS: &str = r#"
.version 8.8
.target sm_70
.address_size 64
.visible .entry bounds(
	.param .u64 bounds_a,
	.param .u32 bounds_n,
	.param .f32 bounds_t
)
{
	.reg .pred %p<4>;
	.reg .f32 %f<8>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [bounds_a];
	ld.param.u32 %r1, [bounds_n];
	ld.param.f32 %f1, [bounds_t];
	mov.u32 %r2, 0;
	mov.f32 %f2, 0f00000000;
	setp.lt.s32 %p1, %r1, 1;
	@%p1 bra AFTER;
LOOP:
	mul.wide.s32 %rd2, %r2, 4;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.f32 %f3, [%rd3];
	add.f32 %f2, %f2, %f3;
	add.s32 %r2, %r2, 1;
	setp.lt.s32 %p2, %r2, %r1;
	@%p2 bra LOOP;
AFTER:
	setp.gt.f32 %p3, %f1, 0f3F000000;
	@!%p3 bra DONE;
	ld.global.f32 %f4, [%rd1+4];
	st.global.f32 [%rd1], %f4;
DONE:
	ret;
}
"#;

#[test]
fn a_loop_bound_or_a_floating_point_guard_needs_its_value() {
    let (p, why, _) = needs(BOUNDS, &["2=1.0"]);
    assert_eq!(p, 1);
    assert!(why.contains("load at PTX line 25"), "{why}");
    // With the bound given, the float test on `t` still decides the last load: with a value
    // it folds (the load runs, or never does); open, it would silently become a may-load.
    let (p, why, msg) = needs(BOUNDS, &["1=8"]);
    assert_eq!(p, 2);
    assert!(why.contains("load at PTX line 33"), "{why}");
    assert!(msg.contains("`bounds_t`"), "{msg}");
    let (m, b) = bind(BOUNDS, &["1=8", "2=1.0"]);
    analysis::analyze(&m.functions[0], &b, Granularity::Line(128)).expect("analysis");
}

#[test]
fn a_struct_field_in_an_address_needs_the_struct() {
    // struct_param reads rows, cols, pitch and shift from its by-value struct: open, the
    // analysis names it and says how to give it.
    let d = kdir("struct_param");
    for v in VARIANTS {
        let m = ptx_parser::parse_file(&d.join(format!("struct_param.{v}.ptx"))).expect("parse");
        let f = m.kernel("struct_param").expect("kernel");
        let l = Launch::new(Dim3 { x: 4, y: 3, z: 1 }, Dim3 { x: 16, y: 16, z: 1 });
        let b = l
            .bind_open("struct_param", &analysis::param_sigs(f), &d)
            .expect("bind")
            .with_module(&m);
        assert_eq!(b.open_params(), [0]);
        let e = analysis::analyze(f, &b, Granularity::Line(128))
            .expect_err("the addresses need the struct")
            .to_string();
        assert!(
            e.contains("parameter 0 (`struct_param_param_0`) needs a value")
                && e.contains("load at PTX line")
                && e.contains("\"fields\""),
            "{v}: {e}"
        );
    }
}

/// A three-way join on a branch of open `t` and one on `%tid.x`: the load after the join
/// does not depend on `t` in the program, but the symbolic execution explores both sides of
/// the branch it cannot fold and or-s their conditions at the join, which need not fold back.
/// Left open, the analysis must be the one any value gives, or refuse.
const JOIN3: &str = r#"
.version 8.8
.target sm_70
.address_size 64
.visible .entry join3(
	.param .u64 join3_a,
	.param .u32 join3_t
)
{
	.reg .pred %p<4>;
	.reg .f32 %f<4>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [join3_a];
	ld.param.u32 %r1, [join3_t];
	mov.u32 %r2, %tid.x;
	setp.gt.s32 %p1, %r1, 0;
	@%p1 bra A;
	setp.lt.s32 %p2, %r2, 5;
	@%p2 bra B;
	mov.f32 %f1, 0f3F800000;
	bra.uni J;
A:
	mov.f32 %f1, 0f40000000;
	bra.uni J;
B:
	mov.f32 %f1, 0f40400000;
J:
	mul.wide.s32 %rd2, %r2, 4;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.f32 %f2, [%rd3];
	add.f32 %f3, %f2, %f1;
	st.global.f32 [%rd3], %f3;
	ret;
}
"#;

/// A three-way join whose sides cover every case (`t > 0`; `t <= 0 && tid < 5`; the rest)
/// is reached whenever the block before it is: the load after it is unguarded whatever `t`,
/// so `t` stays open. (Until issue 41 the or of the three conditions kept `t`, and the
/// analysis refused the launch for want of a value the program does not need.)
#[test]
fn a_join_whose_sides_cover_every_case_needs_no_value() {
    let mut answers = Vec::new();
    for t in [&["1=1"][..], &["1=-1"], &[]] {
        let (m, b) = bind(JOIN3, t);
        let a = analysis::analyze(&m.functions[0], &b, Granularity::Line(128)).expect("analyses");
        assert!(a.unresolved.iter().all(|u| u.is_none()), "{t:?}");
        assert!(
            a.model.loads[0].cond.is_empty(),
            "{t:?}: {:?}",
            a.model.loads[0].cond
        );
        answers.push(a.footprints);
    }
    let (_, b) = bind(JOIN3, &[]);
    assert_eq!(b.open_params(), [1]);
    assert_eq!(answers[0], answers[2]);
    assert_eq!(answers[1], answers[2]);
}
