//! Error reporting: exact positions, messages, rendering, recovery and the error cap.

use ptx_parser::{parse, parse_file, parse_named, ParseErrors};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Parses `HEAD` + an entry with `body`; the body starts on line 6.
fn body_errors(body: &str) -> ParseErrors {
    let src = format!("{HEAD}.visible .entry k()\n{{\n{body}\n}}\n");
    parse(&src).expect_err("expected errors")
}

fn positions(e: &ParseErrors) -> Vec<(u32, u32, &str)> {
    e.errors
        .iter()
        .map(|e| (e.line, e.col, e.message.as_str()))
        .collect()
}

#[test]
fn missing_semicolon() {
    let e = body_errors("\t.reg .b32 %r<3>;\n\tmov.u32 %r1, %r2\n\tadd.u32 %r1, %r1, 1;\n\tret;");
    assert_eq!(
        positions(&e),
        vec![(7, 18, "expected ';' after instruction")]
    );
    // One line per error; the CLI adds the source line and the caret from these fields.
    assert_eq!(
        e.to_string(),
        "<input>:7:18: error: expected ';' after instruction"
    );
    assert_eq!(e.errors[0].line_text, "\tmov.u32 %r1, %r2");
}

#[test]
fn unknown_directive() {
    let src = format!("{HEAD}.foo 3;\n.visible .entry k()\n{{\n  .bar .b32 x;\n  ret;\n}}\n");
    let e = parse(&src).unwrap_err();
    assert_eq!(
        positions(&e),
        vec![
            (4, 1, "unknown directive '.foo'"),
            (7, 3, "unknown directive '.bar'")
        ]
    );
}

#[test]
fn bad_register_declaration_and_use() {
    let e =
        body_errors(".reg .b32 %r<x>;\n.reg .b32 %s<2>;\nmov.u32 %s2, 1;\nmov.u32 %q, %s1;\nret;");
    assert_eq!(
        positions(&e),
        vec![
            (6, 14, "expected register count, found 'x'"),
            (8, 9, "undeclared register '%s2'"),
            (9, 9, "undeclared register '%q'"),
        ]
    );
}

#[test]
fn unterminated_comment() {
    let src = format!("{HEAD}.visible .entry k()\n{{\n  ret; /* never\nclosed\n");
    let e = parse(&src).unwrap_err();
    assert_eq!(
        positions(&e),
        vec![
            (6, 7, "expected '}' at end of function body"),
            (6, 8, "unterminated block comment")
        ]
    );
}

#[test]
fn undefined_label() {
    let e = body_errors(".reg .pred %p1;\n@%p1 bra $L__BB0_9;\nret;");
    assert_eq!(positions(&e), vec![(7, 10, "undefined label '$L__BB0_9'")]);
}

#[test]
fn undeclared_identifier() {
    let e =
        body_errors(".reg .b64 %rd1;\nmov.u64 %rd1, nosuch;\nld.global.u32 %rd1, [other+4];\nret;");
    assert_eq!(
        positions(&e),
        vec![
            (7, 15, "undeclared identifier 'nosuch'"),
            (8, 22, "undeclared identifier 'other'")
        ]
    );
}

#[test]
fn recovers_and_reports_several() {
    let e = body_errors("mov.u32 [%r1;\nfoo.bar %r1;\nadd.s32 %r1, , 2;\nret;");
    let lines: Vec<u32> = e.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![6, 7, 8]);
}

#[test]
fn error_cap() {
    let body: String = (0..50).map(|i| format!("mov.u32 %bad{i}, 1;\n")).collect();
    let e = body_errors(&body);
    assert_eq!(e.errors.len(), ParseErrors::MAX);
    assert_eq!(e.truncated, 30);
    assert!(e.to_string().ends_with("... and 30 more errors"));
}

#[test]
fn file_name_in_errors_and_io_error() {
    let e = parse_named("\n.bogus\n", Some("kernel.ptx".into())).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("kernel.ptx:2:1: error: unknown directive '.bogus'"),
        "{e}"
    );
    let e = parse_file(std::path::Path::new("/nonexistent/x.ptx")).unwrap_err();
    assert_eq!(e.errors[0].line, 0);
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.ptx: error: cannot read file"),
        "{e}"
    );
}

#[test]
fn unterminated_body_and_string() {
    let src = format!("{HEAD}.visible .entry k()\n{{\n ret;\n");
    let e = parse(&src).unwrap_err();
    assert_eq!(
        positions(&e),
        vec![(6, 6, "expected '}' at end of function body")]
    );
    let e = parse(".file 1 \"abc\n").unwrap_err();
    assert_eq!(
        positions(&e),
        vec![
            (1, 8, "expected file name, found end of input"),
            (1, 9, "unterminated string literal")
        ]
    );
}

/// Found by the fuzzer: a trailing comma in an address made a one-element list that printed
/// as a plain address, so print -> parse changed the IR.
#[test]
fn trailing_comma_in_address() {
    let e = body_errors(
        "\t.reg .b64 %rd<3>;\n\t.reg .f32 %f<2>;\n\tst.global.f32 [%rd2,], %f1;\n\tret;",
    );
    assert_eq!(
        positions(&e),
        vec![(8, 22, "expected an operand after ',', found ']'")]
    );
}
