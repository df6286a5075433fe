//! The verifier: rules a PTX assembler (`ptxas`) enforces that the grammar alone does not.
//!
//! The parser is deliberately lenient about instruction words (unknown opcodes and modifier
//! words are kept, so new PTX still parses), which let wrong programs through: `ld.glbal.u32`
//! parsed as a load from an unknown space, `ld.global.shared.u32` as a global load. This
//! pass runs once the module is lowered without errors and rejects, with the instruction's
//! location, what `ptxas` (CUDA 12.9) rejects for these cases; its messages are the guide:
//!
//! - the file: a `.version` directive is required; two definitions of one function, or one
//!   name used for an `.entry` and a `.func` or for a variable and a function;
//! - guards: `@%r1` where `%r1` is not a `.pred` register;
//! - `ld` / `ldu` / `st` (PTX ISA 9.7.9.8-10): unknown or inapplicable modifiers, more than
//!   one state space, anything but one type, the wrong number or kind of operands, and a
//!   vector operand whose element count differs from `.v2` / `.v4` / `.v8`;
//! - value-producing instructions (`mov`, `add`, `setp`, ...): a destination that is an
//!   immediate, an address or a name rather than a register;
//! - `bar` / `barrier` (PTX ISA 9.7.13.1): a barrier number outside 0..=15, a thread count
//!   that is not a multiple of the warp size, `bar.arrive` without a non-zero thread count.
//!
//! Errors are `(byte offset, line, message)` triples like every other stage's.

use crate::ir::{Function, Immediate, Inst, Module, Operand, Span};
use crate::opcode::{Opcode, Slot};
use crate::syntax::{Ast, AstItem};
use crate::types::ScalarType;
use std::collections::HashMap;

/// Number of named barriers per CTA (PTX ISA 9.7.13.1: barrier numbers 0..15).
pub const NUM_BARRIERS: u64 = 16;

/// The warp size that `bar` thread counts must be a multiple of.
pub const WARP_SIZE: u64 = 32;

/// A verifier error: byte offset, 1-based line, message.
pub(crate) type Raw = (u32, u32, String);

/// Checks of the module as a whole that need the syntax tree (source positions of
/// declarations): the `.version` directive and duplicate definitions.
pub(crate) fn check_module(
    ast: &Ast<'_>,
    module: &Module,
    src: &str,
    line_starts: &[u32],
) -> Vec<Raw> {
    let mut out = Vec::new();
    if module.version == (0, 0) {
        let has = ast.items.iter().any(|i| matches!(i, AstItem::Version(..)));
        let msg = if has {
            ".version 0.0 is not a PTX version"
        } else {
            "missing .version directive at the start of the file"
        };
        out.push((0, 1, msg.to_string()));
    }
    // Functions: first definition (or declaration) of each name, in source order.
    let mut seen: HashMap<&str, (bool, bool)> = HashMap::new();
    let mut vars: HashMap<&str, ()> = HashMap::new();
    for item in &ast.items {
        match item {
            AstItem::Var(v) => {
                for d in &v.decls {
                    vars.insert(d.name, ());
                    if seen.contains_key(d.name) {
                        out.push((
                            d.tok.start,
                            d.tok.line,
                            format!(
                                "'{}' is declared both as a function and as a variable",
                                d.name
                            ),
                        ));
                    }
                }
            }
            AstItem::Func(f) => {
                let offset = offset_in(src, f.name);
                let line = line_of(line_starts, offset);
                let has_body = f.body.is_some();
                if vars.contains_key(f.name) {
                    out.push((
                        offset,
                        line,
                        format!(
                            "'{}' is declared both as a variable and as a function",
                            f.name
                        ),
                    ));
                }
                match seen.get_mut(f.name) {
                    None => {
                        seen.insert(f.name, (f.is_entry, has_body));
                    }
                    Some((is_entry, defined)) => {
                        if *is_entry != f.is_entry {
                            out.push((
                                offset,
                                line,
                                format!(
                                    "'{}' is declared both as an .entry and as a .func",
                                    f.name
                                ),
                            ));
                        } else if *defined && has_body {
                            let what = if f.is_entry { "kernel" } else { "function" };
                            out.push((
                                offset,
                                line,
                                format!("duplicate definition of {what} '{}'", f.name),
                            ));
                        }
                        *defined |= has_body;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Byte offset of `part` (a slice of `src`) in `src`; 0 when it is not one.
fn offset_in(src: &str, part: &str) -> u32 {
    let (s, p) = (src.as_ptr() as usize, part.as_ptr() as usize);
    if p >= s && p <= s + src.len() {
        u32::try_from(p - s).unwrap_or(0)
    } else {
        0
    }
}

/// 1-based line of byte `offset`.
fn line_of(line_starts: &[u32], offset: u32) -> u32 {
    let k = line_starts.partition_point(|&s| s <= offset);
    k.max(1) as u32
}

/// Checks every instruction of every function body.
pub(crate) fn check_instructions(module: &Module) -> Vec<Raw> {
    let mut out = Vec::new();
    for f in module.functions.iter().filter(|f| f.has_body) {
        for (i, span) in f.insts.iter().zip(&f.spans) {
            check_inst(f, i, *span, &mut out);
        }
    }
    out
}

fn check_inst(f: &Function, i: &Inst, span: Span, out: &mut Vec<Raw>) {
    let mut err = |msg: String| out.push((span.start, span.line, msg));
    if let Some(g) = i.guard {
        match f.reg_type(g.reg) {
            Some(ScalarType::Pred) | None => {}
            Some(t) => err(format!(
                "guard '{}' is a .{t} register; a guard must be a .pred register",
                f.reg_name(g.reg)
            )),
        }
    }
    match i.op {
        Opcode::Ld | Opcode::Ldu | Opcode::St => check_memory(i, &mut err),
        Opcode::Bar | Opcode::Barrier => check_barrier(i, &mut err),
        _ => {}
    }
    if writes_first_operand(&i.op)
        && matches!(
            i.operands.first(),
            Some(Operand::Imm(_) | Operand::Address(_) | Operand::Symbol(_) | Operand::Label(_))
        )
    {
        err(format!(
            "the destination (first operand) of '{}' must be a register",
            i.op.name()
        ));
    }
}

/// Instructions whose first operand is the register they write (PTX ISA 9.7): an
/// immediate, address or name there is an argument mismatch for ptxas.
fn writes_first_operand(op: &Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Mov | Add
            | Addc
            | Sub
            | Subc
            | Mul
            | Mad
            | Madc
            | Mul24
            | Mad24
            | Sad
            | Div
            | Rem
            | Abs
            | Neg
            | Min
            | Max
            | And
            | Or
            | Xor
            | Not
            | Cnot
            | Shl
            | Shr
            | Shf
            | Selp
            | Setp
            | Set
            | Slct
            | Cvt
            | Cvta
            | Fma
            | Rcp
            | Sqrt
            | Rsqrt
            | Sin
            | Cos
            | Lg2
            | Ex2
            | Tanh
            | Prmt
            | Bfe
            | Bfi
            | Bfind
            | Popc
            | Clz
            | Brev
            | Copysign
            | Testp
            | Lop3
            | Dp4a
            | Dp2a
            | Atom
            | Shfl
            | Vote
            | Activemask
            | Redux
    )
}

/// Modifier words of `ld`/`st` that the typed [`crate::Modifiers`] fields do not model but
/// PTX allows: cache eviction and prefetch qualifiers (`.L1::evict_last`, `.L2::128B`,
/// `.L2::cache_hint`, `.level::...`) all contain `::`; `.unified` marks a unified address.
fn known_memory_word(w: &str) -> bool {
    w.contains("::") || w == "unified"
}

fn check_memory(i: &Inst, err: &mut impl FnMut(String)) {
    let m = &i.mods;
    let name = i.op.name();
    let mut other = m.other.iter();
    for slot in m.order.iter() {
        let bad = match slot {
            Slot::Space | Slot::Space2 | Slot::Cache | Slot::Type | Slot::Vec | Slot::Scope => None,
            Slot::Sem => None,
            Slot::Nc if i.op == Opcode::Ld => None,
            Slot::Other => match other.next() {
                Some(w) if known_memory_word(w) => None,
                Some(w) => Some(w.clone()),
                None => None,
            },
            _ => Some(slot_word(i, *slot)),
        };
        if let Some(w) = bad {
            err(format!("unknown modifier '.{w}' for instruction '{name}'"));
        }
    }
    if let (Some(a), Some(b)) = (m.space, m.space2) {
        err(format!(
            "'{name}' takes one state space, found .{a} and .{b}"
        ));
    }
    match m.types.len() {
        1 => {}
        0 => err(format!("'{name}' needs a type (.u32, .f32, .b64, ...)")),
        _ => {
            let t: Vec<String> = m.types.iter().map(|t| format!(".{t}")).collect();
            err(format!("'{name}' takes one type, found {}", t.concat()));
        }
    }
    let ops = i.operands.as_slice();
    let policy = m.other.iter().any(|w| w == "L2::cache_hint");
    let (addr_at, data_at, want) = if i.op == Opcode::St {
        (0, 1, 2)
    } else {
        (1, 0, 2)
    };
    let want_max = if policy { want + 1 } else { want };
    if ops.len() < want || ops.len() > want_max {
        let what = if i.op == Opcode::St {
            "an address and a value"
        } else {
            "a destination and an address"
        };
        err(format!(
            "'{name}' takes {want} operands ({what}), found {}",
            ops.len()
        ));
        return;
    }
    if !matches!(ops.get(addr_at), Some(Operand::Address(_))) {
        let nth = if addr_at == 0 { "first" } else { "second" };
        err(format!(
            "the {nth} operand of '{name}' must be an address [...]"
        ));
    }
    let data = ops.get(data_at);
    if i.op != Opcode::St
        && !matches!(
            data,
            Some(Operand::Reg(_) | Operand::Vector(_) | Operand::Sink)
        )
    {
        err(format!(
            "the destination of '{name}' must be a register or a vector of registers"
        ));
    }
    match (m.vec, data) {
        (Some(w), Some(Operand::Vector(v))) if v.len() != w.lanes() as usize => {
            err(format!(
                "vector operand has {} elements but '{name}.{w}' moves {}",
                v.len(),
                w.lanes()
            ));
        }
        (Some(_), Some(Operand::Vector(_))) => {}
        (Some(w), _) => err(format!(
            "'{name}.{w}' needs a vector operand of {} elements {{a, b, ...}}",
            w.lanes()
        )),
        (None, Some(Operand::Vector(v))) if matches!(v.len(), 2 | 4 | 8) => err(format!(
            "a vector operand of {} elements needs a .v{} modifier on '{name}'",
            v.len(),
            v.len()
        )),
        (None, Some(Operand::Vector(v))) => err(format!(
            "'{name}' moves a scalar or a vector of 2, 4 or 8 elements (.v2, .v4, .v8), found a vector of {}",
            v.len()
        )),
        _ => {}
    }
}

/// The word a modifier slot holds (for messages).
fn slot_word(i: &Inst, slot: Slot) -> String {
    let m = &i.mods;
    let s: Option<String> = match slot {
        Slot::Rounding => m.rounding.map(|r| r.to_string()),
        Slot::Ftz => Some("ftz".into()),
        Slot::Sat => Some("sat".into()),
        Slot::Precision => m.precision.map(|p| p.to_string()),
        Slot::Cmp => m.cmp.map(|c| c.to_string()),
        Slot::BoolOp => m.bool_op.map(|c| c.to_string()),
        Slot::Mul => m.mul.map(|c| c.to_string()),
        Slot::Uni => Some("uni".into()),
        Slot::Sync => Some("sync".into()),
        Slot::Aligned => Some("aligned".into()),
        Slot::Cc => Some("cc".into()),
        Slot::To => Some("to".into()),
        Slot::Nc => Some("nc".into()),
        Slot::Atom => m.atom.map(|c| c.to_string()),
        Slot::Shfl => m.shfl.map(|c| c.to_string()),
        Slot::Vote => m.vote.map(|c| c.to_string()),
        _ => None,
    };
    s.unwrap_or_else(|| "?".into())
}

/// The value of an integer immediate operand (`None` for registers and everything else).
fn imm_value(o: Option<&Operand>) -> Option<u64> {
    match o {
        Some(Operand::Imm(Immediate::Int(v))) => Some(*v as u64),
        Some(Operand::Imm(Immediate::UInt(v))) => Some(*v),
        _ => None,
    }
}

/// `bar{.cta}.sync a{, b}`, `bar{.cta}.arrive a, b`, `bar{.cta}.red.op.type d, a{, b}, {!}c`
/// and the `barrier` spellings (PTX ISA 9.7.13.1).
fn check_barrier(i: &Inst, err: &mut impl FnMut(String)) {
    let m = &i.mods;
    let has = |w: &str| m.other.iter().any(|x| x == w);
    let (form, id_at, count_at, counted) = if has("red") {
        ("bar.red", 1, 2, i.operands.len() == 4)
    } else if has("arrive") {
        ("bar.arrive", 0, 1, true)
    } else {
        ("bar.sync", 0, 1, i.operands.len() >= 2)
    };
    let (min, max) = match form {
        "bar.red" => (3, 4),
        "bar.arrive" => (2, 2),
        _ => (1, 2),
    };
    let n = i.operands.len();
    if n < min || n > max {
        let want = if min == max {
            format!("{min}")
        } else {
            format!("{min} or {max}")
        };
        err(format!("'{form}' takes {want} operands, found {n}"));
        return;
    }
    if let Some(id) = imm_value(i.operands.get(id_at)) {
        if id >= NUM_BARRIERS {
            err(format!(
                "barrier number {id} out of range, expected 0..{}",
                NUM_BARRIERS - 1
            ));
        }
    }
    if counted {
        if let Some(c) = imm_value(i.operands.get(count_at)) {
            if c % WARP_SIZE != 0 {
                err(format!(
                    "the number of threads taking part in a barrier must be a multiple of the warp size ({WARP_SIZE}), found {c}"
                ));
            } else if c == 0 && form == "bar.arrive" {
                err("'bar.arrive' needs a non-zero thread count".to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

    /// The first error message of a kernel with `body`, or `None` if it parses.
    fn first_error(body: &str) -> Option<String> {
        let src = format!(
            "{HEAD}.visible .entry k(.param .u64 p)\n{{\n.reg .pred %p<3>;\n.reg .b32 %r<10>;\n\
             .reg .f32 %f<5>;\n.reg .b64 %rd<5>;\n.shared .align 4 .b8 sm[256];\n\
             ld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
        );
        let direct = crate::parse(&src);
        let two = crate::parse_two_pass(&src);
        assert_eq!(
            direct.as_ref().err(),
            two.as_ref().err(),
            "paths differ on {body}"
        );
        direct.err().map(|e| {
            let first = e.first().expect("an error");
            assert_eq!(first.line, 12, "{e}");
            first.message.clone()
        })
    }

    #[test]
    fn memory_instructions() {
        let cases = [
            ("ld.glbal.u32 %r1, [%rd1];", "unknown modifier '.glbal'"),
            ("ld.global.shared.u32 %r1, [%rd1];", "one state space"),
            (
                "ld.global.u32.f32 %r1, [%rd1];",
                "takes one type, found .u32.f32",
            ),
            ("ld.global %r1, [%rd1];", "needs a type"),
            ("st.global.u32 [%rd1], %r1, %r2;", "takes 2 operands"),
            ("st.global.u32 [%rd1];", "takes 2 operands"),
            ("ld.global.u32 %r1, %rd1;", "must be an address"),
            (
                "ld.global.v4.u32 {%r1, %r2}, [%rd1];",
                "has 2 elements but 'ld.v4' moves 4",
            ),
            ("ld.global.v2.u32 %r1, [%rd1];", "needs a vector operand"),
            ("ld.global.u32 {%r1, %r2}, [%rd1];", "needs a .v2 modifier"),
            ("st.global.u32 [%rd1], {%r1};", "found a vector of 1"),
            (
                "mov.u32 5, %r1;",
                "destination (first operand) of 'mov' must be a register",
            ),
            (
                "add.u32 sm, %r1, %r2;",
                "destination (first operand) of 'add'",
            ),
            ("st.shared.v2.u32 [sm], {%r1, %r2, %r3};", "has 3 elements"),
            ("ld.global.rn.u32 %r1, [%rd1];", "unknown modifier '.rn'"),
            (
                "ld.global.v3.u32 {%r1, %r2, %r3}, [%rd1];",
                "unknown modifier '.v3'",
            ),
        ];
        for (body, want) in cases {
            let e = first_error(body).unwrap_or_else(|| panic!("{body} parsed"));
            assert!(e.contains(want), "{body}: {e}");
        }
        for ok in [
            "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];",
            "ld.global.L1::evict_last.L2::128B.u32 %r1, [%rd1];",
            "ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;",
            "st.relaxed.gpu.global.u32 [%rd1], 5;",
            "ld.volatile.shared.u32 %r1, [sm+4];",
            "ldu.global.v2.f32 {%f1, _}, [%rd1];",
            "st.global.v2.f32 [%rd1], {%f1, %f2};",
        ] {
            assert_eq!(first_error(ok), None, "{ok}");
        }
    }

    #[test]
    fn guards_must_be_predicates() {
        let e = first_error("@%r1 bra $L1;\n$L1:").expect("rejected");
        assert!(e.contains("guard '%r1' is a .b32 register"), "{e}");
        let e = first_error("@!%rd1 ret;").expect("rejected");
        assert!(e.contains("guard '%rd1' is a .b64 register"), "{e}");
        assert_eq!(first_error("@!%p1 bra $L1;\n$L1:"), None);
    }

    #[test]
    fn barriers() {
        let cases = [
            (
                "bar.sync 16;",
                "barrier number 16 out of range, expected 0..15",
            ),
            ("barrier.sync 99999999999;", "out of range"),
            (
                "bar.sync 1, 48;",
                "multiple of the warp size (32), found 48",
            ),
            ("barrier.sync.aligned 3, 65;", "found 65"),
            ("bar.arrive 1;", "takes 2 operands"),
            ("bar.arrive 1, 0;", "non-zero thread count"),
            ("bar.arrive 16, 64;", "barrier number 16"),
            ("bar.red.and.pred %p1, 17, 64, %p2;", "barrier number 17"),
            ("bar.red.popc.u32 %r1, 1, 40, %p2;", "found 40"),
        ];
        for (body, want) in cases {
            let e = first_error(body).unwrap_or_else(|| panic!("{body} parsed"));
            assert!(e.contains(want), "{body}: {e}");
        }
        for ok in [
            "bar.sync 0;",
            "bar.sync 15;",
            "bar.sync 1, 64;",
            "barrier.sync.aligned 3, 64;",
            "bar.arrive 1, 64;",
            "bar.sync %r1, %r2;",
            "bar.red.popc.u32 %r1, 1, 64, %p2;",
            "bar.red.or.pred %p1, 0, !%p2;",
            "bar.cta.sync 2;",
        ] {
            assert_eq!(first_error(ok), None, "{ok}");
        }
    }

    #[test]
    fn module_rules() {
        let e = crate::parse("").unwrap_err();
        assert!(e.to_string().contains("missing .version directive"), "{e}");
        let e = crate::parse("// only a comment\n").unwrap_err();
        assert!(e.to_string().contains("missing .version directive"), "{e}");
        let e = crate::parse(".version 0.0\n.target sm_80\n").unwrap_err();
        assert!(e.to_string().contains("0.0 is not a PTX version"), "{e}");
        let dup = format!("{HEAD}.entry k()\n{{\nret;\n}}\n.entry k()\n{{\nret;\n}}\n");
        let e = crate::parse(&dup).unwrap_err();
        let first = e.first().expect("one error");
        assert_eq!((first.line, first.col), (8, 8), "{e}");
        assert!(
            first.message.contains("duplicate definition of kernel 'k'"),
            "{e}"
        );
        let mixed = format!("{HEAD}.func f()\n{{\nret;\n}}\n.entry f()\n{{\nret;\n}}\n");
        let e = crate::parse(&mixed).unwrap_err();
        assert!(
            e.to_string().contains("both as an .entry and as a .func"),
            "{e}"
        );
        let var = format!("{HEAD}.global .u32 g;\n.entry g()\n{{\nret;\n}}\n");
        let e = crate::parse(&var).unwrap_err();
        assert!(
            e.to_string()
                .contains("both as a variable and as a function"),
            "{e}"
        );
        // A declaration followed by its definition is legal PTX.
        let decl = format!("{HEAD}.func f();\n.func f()\n{{\nret;\n}}\n.entry k()\n{{\nret;\n}}\n");
        assert!(crate::parse(&decl).is_ok());
    }
}
