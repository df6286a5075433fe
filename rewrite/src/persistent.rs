//! A kernel rewritten into persistent workers that take their logical TBs from work lists.
//!
//! The rewritten kernel gains four parameters, the logical grid ([`GRID_PARAMS`]) and last
//! [`TABLE_PARAM`] (a pointer to a [`crate::WorkTable`]), and is launched with a grid of
//! workers (SMs x TBs per SM). Each worker loops:
//!
//! 1. **Take.** The CTA's first thread takes the next logical TB: from the head of the list
//!    of its SM (`%smid mod S`) with one 64-bit `atom.add` of 1 on the list's (head, tail)
//!    word (it owns index `head` when `head < tail`; a head that runs past the tail only
//!    marks the list empty, so the owners never retry), or, when that list is empty, from
//!    the tail of the list with the most TBs waiting with an `atom.cas` (PAVER Algorithm
//!    2's donor, one TB per steal; the next steal looks again; [`crate::table`] has the
//!    rules, and how the last worker makes sure no TB is left behind). It publishes the id
//!    (or "none") and the TB's coordinates in shared memory; `barrier.sync 0`; every
//!    thread reads them, and the worker exits when there was none.
//! 2. **Run.** The original body, with `%ctaid.{x,y,z}` read from registers that hold the
//!    logical TB's coordinates and `%nctaid.{x,y,z}` from parameters holding the logical
//!    grid ([`GRID_PARAMS`]). Every
//!    `ret` and `exit` becomes a branch to the end of the iteration.
//! 3. **Park.** A thread at the end of the iteration waits there until every thread of the
//!    CTA has arrived, then the worker goes back to 1. The barrier there also separates
//!    iterations that reuse shared memory.
//!
//! **Barriers.** In the original kernel a thread that returns early has exited, and a
//! CTA-wide barrier the others execute later no longer waits for it. In the loop it has
//! not exited: it waits at the park point. A kernel without CTA-wide barriers parks with
//! one `barrier.sync 0`. A kernel with them (`__syncthreads()`: `bar.sync 0`,
//! `barrier.sync 0`) parks in a loop of `barrier.red.and.pred` on barrier 0 contributing
//! *true*, and each of its own CTA-wide barriers becomes a `barrier.red.and.pred` on
//! barrier 0 contributing *false*: a parked thread thereby takes part in every barrier
//! the others still execute, and the reduction is true, letting everyone leave the park
//! loop, exactly when the whole CTA has parked. The non-`.aligned` `barrier` form is used
//! because the threads of a warp may now wait at different barrier instructions (PTX ISA
//! 9.7.13.1; sm_70 and later). Barriers with a thread count (`bar.sync 1, 64`) are left as
//! they are: parked threads never counted for them. `bar.arrive`, `bar.red` and
//! uncounted barriers other than 0 are refused in a kernel that also needs the park loop,
//! since parked threads cannot take part in them.
//!
//! **What the worker reads from the hardware.** `%smid` chooses the list only; which SM a
//! worker runs on never changes what a TB computes. Cluster registers are refused (a
//! cluster launch fixes CTAs to GPCs in a way a worker loop cannot follow).
//!
//! The transformation edits the IR (operands, `ret`s, barriers, one instruction in front
//! that marks where the prologue goes) and prints it; the prologue and epilogue are PTX
//! text written here, and the result is parsed again before it is returned.

use std::sync::Arc;

use ptx_parser::{
    Dim, Function, GlobalVar, Inst, InstId, Item, LabelId, LabelInfo, Modifiers, Module, Opcode,
    Operand, Operands, Param, RegDecl, RegId, RegInfo, ScalarType, ScopeId, Span, SpecialReg,
    StateSpace,
};

/// The name of the last parameter the rewrite appends: a `.u64` pointer to the work-list
/// table.
pub const TABLE_PARAM: &str = "__paver_worklist";

/// The parameters the rewrite appends before [`TABLE_PARAM`]: the logical grid, which
/// `%nctaid` reads return. Parameters live in the constant bank, so they cost the loop no
/// register across the body (the table's copy of the grid, in global memory, would).
pub const GRID_PARAMS: [&str; 3] = ["__paver_nctaid_x", "__paver_nctaid_y", "__paver_nctaid_z"];

/// The shared variable (`.u32[4]`) through which the CTA's first thread publishes the TB it
/// took and its coordinates.
const NEXT_VAR: &str = "__paver_next";

/// Prefix of every register, and of every label, the rewrite adds.
const REG_PREFIX: &str = "%paver_";
const LABEL_PREFIX: &str = "$PAVER_";

/// A rewritten kernel.
#[derive(Clone, Debug)]
pub struct Rewritten {
    /// The whole module, printed, with the kernel rewritten.
    pub ptx: String,
    /// The kernel's name.
    pub kernel: String,
    /// Whether the kernel has CTA-wide barriers, so threads park in the
    /// `barrier.red.and` loop (see the module's documentation).
    pub park_loop: bool,
    /// Reads of `%ctaid` and `%nctaid` replaced.
    pub ctaid_reads: usize,
    /// `ret` / `exit` instructions turned into branches to the end of the iteration.
    pub exits: usize,
    /// CTA-wide barriers turned into `barrier.red.and.pred`.
    pub barriers: usize,
}

/// Why a kernel cannot be rewritten.
#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    /// No such kernel, or a declaration without a body.
    #[error("kernel {0}: no body to rewrite")]
    NoBody(String),
    /// The kernel uses something the worker loop cannot preserve.
    #[error("kernel {kernel}, line {line}:{col}: {what}")]
    Unsupported {
        /// The kernel.
        kernel: String,
        /// Where (1-based line and column of the PTX; 0 when the IR was built by hand).
        line: u32,
        /// Column.
        col: u32,
        /// What and why.
        what: String,
    },
    /// The kernel as a whole cannot be rewritten: rewritten already, names the rewrite
    /// adds, a cluster launch.
    #[error("kernel {kernel}: {what}")]
    Refused {
        /// The kernel.
        kernel: String,
        /// Why.
        what: String,
    },
    /// The printed result did not parse back: a bug in the rewrite.
    #[error("internal error: the rewritten PTX of {kernel} does not parse: {message}")]
    Internal {
        /// The kernel.
        kernel: String,
        /// The parser's first error.
        message: String,
    },
}

/// Rewrites kernel `kernel` (an index into `module.functions`) into persistent workers
/// (see the module's documentation); the rest of the module is printed unchanged.
pub fn persistent(module: &Module, kernel: usize) -> Result<Rewritten, RewriteError> {
    let mut m = module.clone();
    let Some(f) = m.functions.get(kernel).filter(|f| f.has_body) else {
        let name = module
            .functions
            .get(kernel)
            .map_or("?", |f| f.name.as_str());
        return Err(RewriteError::NoBody(name.to_string()));
    };
    let name = f.name.clone();
    check_names(&m, f)?;
    let barriers = classify_barriers(f)?;
    let park_loop = !barriers.cta_wide.is_empty();
    if park_loop {
        if let Some(&(i, ref what)) = barriers.refused.first() {
            return Err(unsupported(f, i, what.clone()));
        }
    }
    if f.attributes.reqnctapercluster.is_some() || f.attributes.explicitcluster {
        return Err(RewriteError::Refused {
            kernel: name,
            what: "a kernel launched in clusters (.reqnctapercluster, .explicitcluster) cannot be \
                   rewritten: \
                   clusters pin CTAs to GPCs, which a worker loop cannot follow"
                .into(),
        });
    }

    let f = &mut m.functions[kernel];
    // Registers the body reads instead of %ctaid / %nctaid, and the predicates of the
    // barrier protocol, declared in the IR so that the edited instructions can name them.
    let ctaid = add_regs(f, "%paver_ctaid", ScalarType::U32, 3);
    let nctaid = add_regs(f, "%paver_nctaid", ScalarType::U32, 3);
    let pfalse = add_regs(f, "%paver_pfalse", ScalarType::Pred, 1);
    let pbar = add_regs(f, "%paver_pbar", ScalarType::Pred, 1);
    let ctaid_reads = replace_specials(f, ctaid, nctaid)?;

    // Every exit of the body becomes a branch to the park point at the end.
    let park = LabelId::new(f.labels.len());
    f.labels.push(LabelInfo {
        name: format!("{LABEL_PREFIX}park"),
        target: InstId::new(f.insts.len()),
        scope: ScopeId(0),
    });
    let bra = Arc::new(Modifiers::parse(&Opcode::Bra, ""));
    let mut exits = 0;
    for inst in &mut f.insts {
        if matches!(inst.op, Opcode::Ret | Opcode::Exit) {
            inst.op = Opcode::Bra;
            inst.mods = bra.clone();
            inst.operands = Operands::from(vec![Operand::Label(park)]);
            exits += 1;
        }
    }
    let red = Arc::new(Modifiers::parse(&Opcode::Barrier, "red.and.pred"));
    for &i in &barriers.cta_wide {
        let inst = &mut f.insts[i];
        inst.op = Opcode::Barrier;
        inst.mods = red.clone();
        inst.operands = Operands::from(vec![
            Operand::Reg(pbar),
            Operand::Imm(ptx_parser::Immediate::Int(0)),
            Operand::Reg(pfalse),
        ]);
    }

    // The marker: one instruction in front of the body, replaced by the prologue's text.
    let body = LabelId::new(f.labels.len());
    f.labels.push(LabelInfo {
        name: format!("{LABEL_PREFIX}body"),
        target: InstId(0),
        scope: ScopeId(0),
    });
    insert_front(
        f,
        Inst {
            guard: None,
            op: Opcode::Bra,
            mods: Arc::new(Modifiers::parse(&Opcode::Bra, "uni")),
            operands: Operands::from(vec![Operand::Label(body)]),
        },
    );
    for (name, ty) in GRID_PARAMS
        .iter()
        .map(|n| (*n, ScalarType::U32))
        .chain([(TABLE_PARAM, ScalarType::U64)])
    {
        f.params.push(Param {
            name: name.to_string(),
            space: StateSpace::Param,
            align: None,
            vec: None,
            ty,
            ptr: None,
            array: None,
        });
    }
    // The published TB id: a module-scope shared variable, as nvcc declares `__shared__`.
    let g = m.globals.len() as u32;
    m.globals.push(GlobalVar {
        name: NEXT_VAR.to_string(),
        linkage: None,
        space: StateSpace::Shared,
        align: Some(16),
        vec: None,
        ty: ScalarType::U32,
        dims: vec![Some(4)],
        init: None,
    });
    let at = m
        .items
        .iter()
        .position(|it| *it == Item::Function(kernel as u32))
        .unwrap_or(m.items.len());
    m.items.insert(at, Item::Global(g));

    let printed = m.to_string();
    let ptx = splice(&printed, park_loop).ok_or_else(|| RewriteError::Internal {
        kernel: name.clone(),
        message: "the printed kernel lacks the rewrite's markers".into(),
    })?;
    if let Err(e) = ptx_parser::parse(&ptx) {
        return Err(RewriteError::Internal {
            kernel: name,
            message: e.to_string(),
        });
    }
    Ok(Rewritten {
        ptx,
        kernel: name,
        park_loop,
        ctaid_reads,
        exits,
        barriers: barriers.cta_wide.len(),
    })
}

fn unsupported(f: &Function, i: usize, what: String) -> RewriteError {
    let s = f.spans.get(i).copied().unwrap_or_default();
    RewriteError::Unsupported {
        kernel: f.name.clone(),
        line: s.line,
        col: s.col,
        what,
    }
}

/// Refuses a kernel that already has the rewrite's names (rewritten twice).
fn check_names(m: &Module, f: &Function) -> Result<(), RewriteError> {
    let clash = |what: String| RewriteError::Refused {
        kernel: f.name.clone(),
        what,
    };
    if f.params.iter().any(|p| p.name == TABLE_PARAM) {
        return Err(clash(format!(
            "it has a parameter {TABLE_PARAM}: it was rewritten already"
        )));
    }
    if let Some(d) = f.reg_decls.iter().find(|d| d.name.starts_with(REG_PREFIX)) {
        return Err(clash(format!(
            "register {} uses the prefix {REG_PREFIX} the rewrite reserves",
            d.name
        )));
    }
    if let Some(l) = f.labels.iter().find(|l| l.name.starts_with(LABEL_PREFIX)) {
        return Err(clash(format!(
            "label {} uses the prefix {LABEL_PREFIX} the rewrite reserves",
            l.name
        )));
    }
    if m.globals.iter().any(|g| g.name == NEXT_VAR) {
        return Err(clash(format!(
            "the module declares {NEXT_VAR}, which the rewrite adds"
        )));
    }
    Ok(())
}

/// The kernel's barrier instructions, sorted by what the rewrite does with them.
struct Barriers {
    /// CTA-wide `bar.sync 0` / `barrier.sync 0` (no thread count).
    cta_wide: Vec<usize>,
    /// Barriers parked threads could not take part in, with why.
    refused: Vec<(usize, String)>,
}

fn classify_barriers(f: &Function) -> Result<Barriers, RewriteError> {
    let mut b = Barriers {
        cta_wide: Vec::new(),
        refused: Vec::new(),
    };
    for (i, inst) in f.insts.iter().enumerate() {
        if !matches!(inst.op, Opcode::Bar | Opcode::Barrier) {
            continue;
        }
        let words: Vec<&str> = inst.mods.other.iter().map(String::as_str).collect();
        let zero = |o: Option<&Operand>| {
            matches!(
                o,
                Some(Operand::Imm(
                    ptx_parser::Immediate::Int(0) | ptx_parser::Immediate::UInt(0)
                ))
            )
        };
        match words.as_slice() {
            [] if inst.operands.len() == 1 && zero(inst.operands.first()) => {
                b.cta_wide.push(i);
            }
            [] if inst.operands.len() == 1 => b.refused.push((
                i,
                "a barrier other than 0 without a thread count waits for the whole CTA, \
                 which parked threads do not reach; give it a count or use barrier 0"
                    .into(),
            )),
            [] | ["arrive"] => {}
            ["red", ..] if inst.operands.len() == 3 => b.refused.push((
                i,
                "bar.red (__syncthreads_count/_and/_or) in a kernel with CTA-wide barriers: \
                 parked threads would meet it with a different reduction"
                    .into(),
            )),
            ["red", ..] => {}
            _ => {
                return Err(unsupported(
                    f,
                    i,
                    format!(
                        "barrier form .{} is not known to the rewrite",
                        words.join(".")
                    ),
                ))
            }
        }
    }
    Ok(b)
}

/// Declares `count` registers `name0..` (or `name` alone when `count` is 1) of type `ty`
/// at the start of the body; returns the first.
fn add_regs(f: &mut Function, name: &str, ty: ScalarType, count: u32) -> RegId {
    let first = RegId::new(f.regs.len());
    let decl = f.reg_decls.len() as u32;
    f.reg_decls.push(RegDecl {
        name: name.to_string(),
        ty,
        vec: None,
        count: (count > 1).then_some(count),
        first,
        scope: ScopeId(0),
        at: InstId(0),
    });
    for k in 0..count {
        f.regs.push(RegInfo {
            ty,
            decl,
            index: (count > 1).then_some(k),
        });
    }
    first
}

/// Replaces `%ctaid.d` by register `ctaid + d` and `%nctaid.d` by `nctaid + d` in every
/// operand; refuses cluster registers. Returns the number of replacements.
fn replace_specials(f: &mut Function, ctaid: RegId, nctaid: RegId) -> Result<usize, RewriteError> {
    fn walk(
        o: &mut Operand,
        ctaid: RegId,
        nctaid: RegId,
        n: &mut usize,
    ) -> Result<(), &'static str> {
        let off = |d: Dim| match d {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        match o {
            Operand::Special(SpecialReg::Ctaid(d)) => {
                *o = Operand::Reg(RegId(ctaid.0 + off(*d)));
                *n += 1;
            }
            Operand::Special(SpecialReg::Nctaid(d)) => {
                *o = Operand::Reg(RegId(nctaid.0 + off(*d)));
                *n += 1;
            }
            Operand::Special(
                SpecialReg::Clusterid(_)
                | SpecialReg::Nclusterid(_)
                | SpecialReg::ClusterCtaid(_)
                | SpecialReg::ClusterNctaid(_)
                | SpecialReg::ClusterCtarank
                | SpecialReg::ClusterNctarank
                | SpecialReg::IsExplicitCluster,
            ) => {
                return Err(
                    "cluster special registers: a cluster launch pins CTAs to GPCs, \
                            which a worker loop cannot follow",
                )
            }
            Operand::Vector(v) | Operand::Brackets(v) | Operand::List(v) => {
                for x in v {
                    walk(x, ctaid, nctaid, n)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
    let mut n = 0;
    for i in 0..f.insts.len() {
        let mut ops = std::mem::take(&mut f.insts[i].operands);
        let r = ops
            .iter_mut()
            .try_for_each(|o| walk(o, ctaid, nctaid, &mut n));
        f.insts[i].operands = ops;
        if let Err(what) = r {
            return Err(unsupported(f, i, what.to_string()));
        }
    }
    Ok(n)
}

/// Inserts `inst` as instruction 0. Declarations of the body's own scope at 0 stay in
/// front of it; everything else that names an instruction moves up by one.
fn insert_front(f: &mut Function, inst: Inst) {
    f.insts.insert(0, inst);
    f.spans.insert(0, Span::default());
    let bump = |i: &mut InstId| i.0 += 1;
    for l in &mut f.labels {
        bump(&mut l.target);
    }
    for (k, s) in f.scopes.iter_mut().enumerate() {
        if k > 0 {
            bump(&mut s.start);
        }
        bump(&mut s.end);
    }
    let keep = |at: InstId, scope: ScopeId| at.0 == 0 && scope == ScopeId(0);
    for d in &mut f.reg_decls {
        if !keep(d.at, d.scope) {
            bump(&mut d.at);
        }
    }
    for v in &mut f.local_vars {
        if !keep(v.at, v.scope) {
            bump(&mut v.at);
        }
    }
    for d in &mut f.directives {
        if !keep(d.at, d.scope) {
            bump(&mut d.at);
        }
    }
    for (at, _) in &mut f.locs {
        bump(at);
    }
    for (at, _) in &mut f.pragmas {
        bump(at);
    }
}

/// Puts the prologue in place of the marker and the epilogue after the park label.
fn splice(printed: &str, park_loop: bool) -> Option<String> {
    let marker = format!("bra.uni \t{LABEL_PREFIX}body;");
    let start = printed.find(&marker)?;
    let line_start = printed[..start].rfind('\n').map_or(0, |k| k + 1);
    let line_end = start + marker.len() + 1; // the newline
    let park = format!("\n{LABEL_PREFIX}park:\n");
    let p = printed.find(&park)? + park.len();
    if p < line_end {
        return None;
    }
    let mut out = String::with_capacity(printed.len() + 4096);
    out.push_str(&printed[..line_start]);
    out.push_str(&prologue());
    out.push_str(&printed[line_end..p]);
    out.push_str(if park_loop {
        EPILOGUE_PARK_LOOP
    } else {
        EPILOGUE_PLAIN
    });
    out.push_str(&printed[p..]);
    Some(out)
}

/// The worker's set-up, once (PTX text, assembled by [`prologue`]).
const SETUP: &str = "\t// paver rewrite: persistent worker (see `paver rewrite --help`)
\t.reg .pred %paver_p<7>;
\t.reg .b32 %paver_r<14>;
\t.reg .b64 %paver_rd<10>;
\tmov.u32 \t%paver_r2, %tid.z;
\tmov.u32 \t%paver_r3, %ntid.y;
\tmov.u32 \t%paver_r4, %tid.y;
\tmad.lo.s32 \t%paver_r2, %paver_r2, %paver_r3, %paver_r4;
\tmov.u32 \t%paver_r3, %ntid.x;
\tmov.u32 \t%paver_r4, %tid.x;
\tmad.lo.s32 \t%paver_r2, %paver_r2, %paver_r3, %paver_r4;
\tsetp.ge.u32 \t%paver_p0, %paver_r2, 32;
\tsetp.ne.u32 \t%paver_p3, %paver_r2, 0;
\tsetp.eq.u32 \t%paver_p5, %paver_r2, %paver_r2;
\tsetp.ne.u32 \t%paver_pfalse, %paver_r2, %paver_r2;
\tsetp.ne.u32 \t%paver_p6, %paver_r2, %paver_r2;
\tld.param.u32 \t%paver_nctaid0, [__paver_nctaid_x];
\tld.param.u32 \t%paver_nctaid1, [__paver_nctaid_y];
\tld.param.u32 \t%paver_nctaid2, [__paver_nctaid_z];
";

/// The top of the loop: from finishing the take to the steal scan's reduction.
const TAKE: &str = "$PAVER_next:
\t@%paver_p0 bra \t$PAVER_wait;
\tmov.u32 \t%paver_r11, %ntid.x;
\tmov.u32 \t%paver_r4, %ntid.y;
\tmul.lo.s32 \t%paver_r11, %paver_r11, %paver_r4;
\tmov.u32 \t%paver_r4, %ntid.z;
\tmul.lo.s32 \t%paver_r11, %paver_r11, %paver_r4;
\tmin.u32 \t%paver_r11, %paver_r11, 32;
\tshl.b32 \t%paver_r12, 1, %paver_r11;
\tadd.s32 \t%paver_r12, %paver_r12, -1;
\tsetp.eq.u32 \t%paver_p1, %paver_r11, 32;
\tselp.b32 \t%paver_r12, -1, %paver_r12, %paver_p1;
\tmov.u32 \t%paver_r10, %laneid;
\tld.param.u64 \t%paver_rd0, [__paver_worklist];
\tcvta.to.global.u64 \t%paver_rd0, %paver_rd0;
\tld.global.u32 \t%paver_r0, [%paver_rd0];
\tmov.u32 \t%paver_r1, %smid;
\trem.u32 \t%paver_r1, %paver_r1, %paver_r0;
\tadd.s64 \t%paver_rd1, %paver_rd0, 64;
\tmov.b64 \t{%paver_r4, %paver_r5}, %paver_rd9;
\tshfl.sync.idx.b32 \t%paver_r4, %paver_r4, 0, 31, %paver_r12;
\tshfl.sync.idx.b32 \t%paver_r5, %paver_r5, 0, 31, %paver_r12;
\tsetp.ge.u32 \t%paver_p1, %paver_r4, %paver_r5;
\t@%paver_p1 bra \t$PAVER_steal;
\tmov.u32 \t%paver_r7, %paver_r4;
\tbra.uni \t$PAVER_load;
$PAVER_steal:
\tmov.u32 \t%paver_r7, -1;
\tld.volatile.global.u32 \t%paver_r8, [%paver_rd0+28];
\tshfl.sync.idx.b32 \t%paver_r8, %paver_r8, 0, 31, %paver_r12;
\tsetp.ne.u32 \t%paver_p1, %paver_r8, 0;
\t@%paver_p1 bra \t$PAVER_publish;
\tmov.u32 \t%paver_r8, 0;
\tmov.u32 \t%paver_r9, 0;
\tmov.u32 \t%paver_r6, %paver_r10;
$PAVER_scan:
\tsetp.ge.u32 \t%paver_p1, %paver_r6, %paver_r0;
\t@%paver_p1 bra \t$PAVER_reduce;
\tmul.wide.u32 \t%paver_rd7, %paver_r6, 8;
\tadd.s64 \t%paver_rd7, %paver_rd1, %paver_rd7;
\tld.volatile.global.u64 \t%paver_rd4, [%paver_rd7];
\tmov.b64 \t{%paver_r4, %paver_r5}, %paver_rd4;
\tsub.s32 \t%paver_r5, %paver_r5, %paver_r4;
\tsetp.gt.s32 \t%paver_p1, %paver_r5, %paver_r8;
\t@%paver_p1 mov.u32 \t%paver_r8, %paver_r5;
\t@%paver_p1 mov.u32 \t%paver_r9, %paver_r6;
\tadd.s32 \t%paver_r6, %paver_r6, 32;
\tbra.uni \t$PAVER_scan;
$PAVER_reduce:
";

/// From the reduction's result to the logical TB's coordinates in every thread.
const STEAL: &str = "\tsetp.eq.u32 \t%paver_p1, %paver_r8, 0;
\t@%paver_p1 bra \t$PAVER_done;
\tld.global.u32 \t%paver_r6, [%paver_rd0+24];
\tsetp.gt.u32 \t%paver_p1, %paver_r8, %paver_r6;
\t@%paver_p1 bra \t$PAVER_victim;
\tmov.u32 \t%paver_r4, %nctaid.x;
\tmov.u32 \t%paver_r5, %nctaid.y;
\tmul.lo.s32 \t%paver_r4, %paver_r4, %paver_r5;
\tmov.u32 \t%paver_r5, %nctaid.z;
\tmul.lo.s32 \t%paver_r4, %paver_r4, %paver_r5;
\t@%paver_p6 bra \t$PAVER_victim;
\t@!%paver_p3 atom.global.add.u32 \t%paver_r5, [%paver_rd0+32], 1;
\tshfl.sync.idx.b32 \t%paver_r5, %paver_r5, 0, 31, %paver_r12;
\tadd.s32 \t%paver_r5, %paver_r5, 1;
\tsetp.lt.u32 \t%paver_p1, %paver_r5, %paver_r4;
\t@%paver_p1 bra \t$PAVER_publish;
\tsetp.eq.u32 \t%paver_p6, %paver_r5, %paver_r5;
$PAVER_victim:
\tmul.wide.u32 \t%paver_rd7, %paver_r9, 8;
\tadd.s64 \t%paver_rd7, %paver_rd1, %paver_rd7;
\t@!%paver_p3 ld.volatile.global.u64 \t%paver_rd4, [%paver_rd7];
\tmov.b64 \t{%paver_r4, %paver_r5}, %paver_rd4;
\tshfl.sync.idx.b32 \t%paver_r4, %paver_r4, 0, 31, %paver_r12;
\tshfl.sync.idx.b32 \t%paver_r5, %paver_r5, 0, 31, %paver_r12;
\tsetp.ge.u32 \t%paver_p1, %paver_r4, %paver_r5;
\t@%paver_p1 bra \t$PAVER_steal;
\tadd.s32 \t%paver_r6, %paver_r5, -1;
\tmov.b64 \t%paver_rd4, {%paver_r4, %paver_r5};
\tmov.b64 \t%paver_rd5, {%paver_r4, %paver_r6};
\t@!%paver_p3 atom.global.cas.b64 \t%paver_rd6, [%paver_rd7], %paver_rd4, %paver_rd5;
\tsetp.ne.s64 \t%paver_p1, %paver_rd6, %paver_rd4;
\tselp.u32 \t%paver_r4, 1, 0, %paver_p1;
\tshfl.sync.idx.b32 \t%paver_r4, %paver_r4, 0, 31, %paver_r12;
\tsetp.ne.u32 \t%paver_p1, %paver_r4, 0;
\t@%paver_p1 bra \t$PAVER_steal;
\tmov.u32 \t%paver_r7, %paver_r6;
\tbra.uni \t$PAVER_load;
$PAVER_done:
\tmov.u32 \t%paver_r8, 1;
\t@!%paver_p3 st.volatile.global.u32 \t[%paver_rd0+28], %paver_r8;
\tbra.uni \t$PAVER_publish;
$PAVER_load:
\t@%paver_p3 bra \t$PAVER_wait;
\tmul.wide.u32 \t%paver_rd2, %paver_r0, 8;
\tadd.s64 \t%paver_rd2, %paver_rd1, %paver_rd2;
\tmul.wide.u32 \t%paver_rd8, %paver_r7, 4;
\tadd.s64 \t%paver_rd8, %paver_rd2, %paver_rd8;
\tld.global.u32 \t%paver_r7, [%paver_rd8];
\trem.u32 \t%paver_r8, %paver_r7, %paver_nctaid0;
\tdiv.u32 \t%paver_r10, %paver_r7, %paver_nctaid0;
\trem.u32 \t%paver_r9, %paver_r10, %paver_nctaid1;
\tdiv.u32 \t%paver_r10, %paver_r10, %paver_nctaid1;
$PAVER_publish:
\t@%paver_p3 bra \t$PAVER_wait;
\tst.shared.v4.u32 \t[__paver_next], {%paver_r7, %paver_r8, %paver_r9, %paver_r10};
$PAVER_wait:
\tbarrier.sync \t0;
\tld.shared.v4.u32 \t{%paver_r11, %paver_ctaid0, %paver_ctaid1, %paver_ctaid2}, [__paver_next];
\tsetp.eq.s32 \t%paver_p1, %paver_r11, -1;
\t@%paver_p1 bra \t$PAVER_exit;
";

/// Lane 0 issues the `atom.add` that takes the next TB of its SM's list; the result waits
/// in `rd9` (label suffix `n`: the snippet appears twice).
fn issue(n: u32) -> String {
    format!(
        "\t@%paver_p3 bra \t$PAVER_issued{n};
\tld.param.u64 \t%paver_rd0, [__paver_worklist];
\tcvta.to.global.u64 \t%paver_rd0, %paver_rd0;
\tld.global.u32 \t%paver_r0, [%paver_rd0];
\tmov.u32 \t%paver_r1, %smid;
\trem.u32 \t%paver_r1, %paver_r1, %paver_r0;
\tmul.wide.u32 \t%paver_rd3, %paver_r1, 8;
\tadd.s64 \t%paver_rd3, %paver_rd0, %paver_rd3;
\tatom.global.add.u64 \t%paver_rd9, [%paver_rd3+64], 1;
$PAVER_issued{n}:
"
    )
}

/// One round of the first warp's reduction of (TBs left `r8`, list `r9`): the pair of the
/// lane `off` away, when that lane exists (`r11` lanes), wins when it has more TBs left, or
/// as many and a lower list.
fn reduce_round(off: u32) -> String {
    format!(
        "\txor.b32 \t%paver_r13, %paver_r10, {off};
\tsetp.lt.u32 \t%paver_p1, %paver_r13, %paver_r11;
\tselp.b32 \t%paver_r13, %paver_r13, %paver_r10, %paver_p1;
\tshfl.sync.idx.b32 \t%paver_r4, %paver_r8, %paver_r13, 31, %paver_r12;
\tshfl.sync.idx.b32 \t%paver_r5, %paver_r9, %paver_r13, 31, %paver_r12;
\tsetp.gt.s32 \t%paver_p1, %paver_r4, %paver_r8;
\tsetp.eq.s32 \t%paver_p2, %paver_r4, %paver_r8;
\tsetp.lt.u32 \t%paver_p4, %paver_r5, %paver_r9;
\tand.pred \t%paver_p2, %paver_p2, %paver_p4;
\tor.pred \t%paver_p1, %paver_p1, %paver_p2;
\t@%paver_p1 mov.u32 \t%paver_r8, %paver_r4;
\t@%paver_p1 mov.u32 \t%paver_r9, %paver_r5;
"
    )
}

/// The worker's set-up (once) and the top of its loop, as PTX text: the take step and the
/// logical TB's id and coordinates (see the module's documentation). The take is split so
/// that its atomic's round trip overlaps the body: lane 0 of the CTA's first warp issues
/// the `atom.add` for the next TB as soon as the current one is known (`$PAVER_issued*`;
/// the result waits in `rd9`), and the first warp finishes the take after the park barrier. There, lane 0's
/// results are broadcast with `shfl`, and a steal scans the lists 32 at a time, one per
/// lane, then reduces (most TBs left, lowest list on ties) across the warp: one round trip
/// per 32 lists instead of one per list. Lane 0 publishes `{id, x, y, z}` in one 16-byte
/// shared word, which every thread reads with one vector load (no thread divides).
/// Registers: `rd0` the table, `rd1` the (head, tail) words, `r0` the lists, `r1` this
/// SM's list, `r7` the index taken, then the TB id, `r10` the lane, `r11` the lanes of the
/// first warp, `r12` their mask; `p0` "not in the first warp", `p3` "not the first thread",
/// `p5` true, `pfalse` false, `p6` "this worker is the last one and drains".
fn prologue() -> String {
    let mut t = String::from(SETUP);
    t += &issue(0);
    t += TAKE;
    for off in [16, 8, 4, 2, 1] {
        t += &reduce_round(off);
    }
    t += STEAL;
    // After the coordinates: the next take, so its round trip overlaps the body.
    t += &issue(1);
    t
}

/// The end of an iteration of a kernel without CTA-wide barriers.
const EPILOGUE_PLAIN: &str = "\tbarrier.sync \t0;
\tbra.uni \t$PAVER_next;
$PAVER_exit:
\tret;
";

/// The end of an iteration of a kernel with CTA-wide barriers: the park loop.
const EPILOGUE_PARK_LOOP: &str = "\tbarrier.red.and.pred \t%paver_p4, 0, %paver_p5;
\t@%paver_p4 bra \t$PAVER_next;
\tbra.uni \t$PAVER_park;
$PAVER_exit:
\tret;
";

#[cfg(test)]
mod tests {
    use super::*;

    const VECADD: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry vecadd(.param .u64 a, .param .u64 c, .param .u32 n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<6>;
$L_top:
	ld.param.u64 %rd1, [a];
	ld.param.u64 %rd2, [c];
	ld.param.u32 %r2, [n];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r1, %r3, %r4, %r5;
	setp.ge.s32 %p1, %r1, %r2;
	@%p1 bra $L_done;
	cvta.to.global.u64 %rd3, %rd1;
	mul.wide.s32 %rd4, %r1, 4;
	add.s64 %rd5, %rd3, %rd4;
	ld.global.f32 %f1, [%rd5];
$L_done:
	ret;
}
"#;

    #[test]
    fn the_body_runs_inside_the_worker_loop() {
        let src = VECADD.replace("ld.global.f32 %f1, [%rd5];", "ld.global.u32 %r4, [%rd5];");
        let m = ptx_parser::parse(&src).expect("parses");
        let k = m
            .functions
            .iter()
            .position(|f| f.name == "vecadd")
            .expect("kernel");
        let r = persistent(&m, k).expect("rewrites");
        assert_eq!((r.ctaid_reads, r.exits, r.barriers), (1, 1, 0));
        assert!(!r.park_loop);
        let out = ptx_parser::parse(&r.ptx).expect("reparses");
        let f = out.kernel("vecadd").expect("kernel");
        assert_eq!(f.params.last().map(|p| p.name.as_str()), Some(TABLE_PARAM));
        // The prologue sits after the declarations and before the body's own first label,
        // so the body's loop back to `$L_top` does not re-run it.
        let top = r.ptx.find("$L_top:").expect("label");
        let take = r.ptx.find("$PAVER_next:").expect("loop head");
        let decls = r.ptx.find(".reg .b64 %rd<6>;").expect("decl");
        assert!(decls < take && take < top, "{}", r.ptx);
        assert!(!r.ptx.contains("%ctaid"), "no %ctaid read is left");
        assert_eq!(
            r.ptx.matches("\tret;").count(),
            1,
            "the worker's own exit only"
        );
        // Twice is refused.
        let again = persistent(&out, 0).unwrap_err().to_string();
        assert!(again.contains("rewritten already"), "{again}");
    }

    #[test]
    fn kernels_with_cta_barriers_park_in_a_reduction_loop() {
        let src = VECADD
            .replace("ld.global.f32 %f1, [%rd5];", "bar.sync 0;")
            .replace("$L_top:\n", "");
        let m = ptx_parser::parse(&src).expect("parses");
        let r = persistent(&m, 0).expect("rewrites");
        assert!(r.park_loop);
        assert_eq!(r.barriers, 1);
        assert!(r
            .ptx
            .contains("barrier.red.and.pred \t%paver_pbar, 0, %paver_pfalse;"));
        assert!(!r.ptx.contains("bar.sync"));
        // A bar.red beside it cannot be kept.
        let red = src.replace(
            "bar.sync 0;",
            "bar.sync 0;\n\tbar.red.popc.u32 %r4, 0, %p1;",
        );
        let m = ptx_parser::parse(&red).expect("parses");
        let e = persistent(&m, 0).unwrap_err().to_string();
        assert!(e.contains("bar.red") && e.contains("line "), "{e}");
    }
}
