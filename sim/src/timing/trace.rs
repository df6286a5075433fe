//! Functional execution feeding the timing model: when the TB scheduler issues a TB, it is
//! run here by the interpreter, warp by warp, and recorded as per-warp instruction streams
//! (static instruction, active-lane count, coalesced blocks of each memory access, shared
//! bank-conflict degree). Register dependences and instruction classes come from the IR
//! ([`Kernel`]), keyed by the instruction's index.
//!
//! Only the interpreter's public stepping API is used: a [`TbExec`] steps one warp
//! instruction at a time and reports its PC and executing lanes ([`Step`]); memory
//! instructions reach a [`MemObserver`] with their per-lane addresses, in the same step.
//!
//! Tracing is lazy, so memory is bounded by what is in flight rather than by what has
//! executed: a TB starts ([`Tracer::start`]) when it is issued, and each of its warps is
//! traced a chunk ([`CHUNK`] instructions) at a time, when the timing model has consumed
//! the previous one ([`Tracer::refill`]). A warp's chunk ends at a barrier; the barrier is
//! released functionally when the timing model needs the instructions after it, which is
//! after every warp has issued it. All TBs run on one copy of global memory, in the
//! (deterministic) order the timing model consumes them, so kernels whose warps and TBs do
//! not race see the same values as `sim::run`.
//!
//! Kernels that launch kernels (issue 43): the tracer starts TBs of several grids, the host's
//! launch (grid 0) and each grid launched from the device that the engine has made
//! dispatchable ([`Tracer::add_grid`]); TB ids run on across grids (a child grid's TBs are
//! numbered after every earlier grid's). The launches a traced TB executes are collected
//! ([`Tracer::take_launches`]) when its warps are traced, so at most a chunk ahead of the
//! warp's issue.

use super::coalesce::{bank_conflicts, coalesce};
pub use super::inst::{Class, DynInst, StaticInst, NO_MEM};
use super::issue_order::{BlockSchedule, IssueOrder, MemOrder};
use crate::interp::device_runtime::ChildLaunch;
use crate::interp::{
    param_block, AccessKind, Control, Geometry, Globals, MemAccess, MemObserver, Program, Space,
    Step, TbExec,
};
use crate::SimError;
use launch::BoundLaunch;
use ptx_parser::{Function, Module, Opcode, Operand};
use std::borrow::Cow;
use std::sync::Arc;

/// The SASS instructions a warp issues for one PTX instruction on the common path, for
/// the instructions ptxas expands into a sequence (the rest: 1). Measured with ptxas 13.0
/// for sm_90 (`tools/sass/expansion.py`, which also gives sm_75, within 3 of these; table
/// in docs/VALIDATION.md, "The timing model against the H100's counters"); slow paths
/// for special operands (denormals, zero, infinity) are not counted.
pub fn sass_slots(op: &Opcode, words: &[String]) -> u8 {
    use Opcode::*;
    let has = |w: &str| words.iter().any(|x| x == w);
    let ftz = has("ftz");
    let approx = has("approx");
    let f64 = has("f64");
    let int64 = has("s64") || has("u64") || has("b64");
    let signed = has("s32") || has("s64");
    match op {
        Div if f64 => 17,
        Div if has("f32") && approx => {
            if ftz {
                2
            } else {
                5
            }
        }
        Div if has("f32") && has("full") => 8,
        Div if has("f32") => 9,
        Div if int64 => {
            if signed {
                88
            } else {
                72
            }
        }
        Div => {
            if signed {
                24
            } else {
                18
            }
        }
        Rem if int64 => {
            if signed {
                82
            } else {
                68
            }
        }
        Rem => {
            if signed {
                22
            } else {
                17
            }
        }
        Rcp if f64 => 12,
        Rcp if approx && ftz => 1,
        Rcp if approx => 8,
        Rcp => 10,
        Sqrt if f64 => 17,
        Sqrt if approx && ftz => 1,
        Sqrt if approx => 4,
        Sqrt => 10,
        Rsqrt | Ex2 | Lg2 if has("f32") && !ftz => 4,
        Sin | Cos => 2,
        _ => 1,
    }
}

/// The static instructions of a kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Per instruction index; beyond `ptx_len`, the renamed copies of unrolled loops
    /// ([`BlockSchedule`]).
    pub insts: Vec<StaticInst>,
    /// The PTX's instructions (the interpreter's program).
    pub ptx_len: usize,
    /// Registers of the kernel (scoreboard size).
    pub num_regs: usize,
    /// The blocks' issue orders when they differ from the PTX's
    /// ([`IssueOrder::Scheduled`]).
    pub schedule: Option<BlockSchedule>,
}

fn regs_of(o: &Operand, out: &mut Vec<u32>) {
    match o {
        Operand::Reg(r) | Operand::PredNeg(r) => out.push(r.0),
        Operand::PredPair(a, b) => out.extend([a.0, b.0]),
        Operand::Address(a) => {
            if let ptx_parser::AddrBase::Reg(r) = a.base {
                out.push(r.0);
            }
        }
        Operand::Vector(v) | Operand::Brackets(v) | Operand::List(v) => {
            v.iter().for_each(|o| regs_of(o, out))
        }
        _ => {}
    }
}

impl Kernel {
    /// Classes and register operands of `f`'s instructions, issued in `order`.
    pub fn new(f: &Function, order: IssueOrder) -> Kernel {
        let insts: Vec<StaticInst> = f
            .insts
            .iter()
            .map(|i| {
                use Opcode::*;
                let words = i.mods.words();
                let has = |w: &str| words.iter().any(|x| x == w);
                let class = match &i.op {
                    Ld | Ldu | St | Atom | Red | Prefetch | Prefetchu | CpAsync => Class::Mem,
                    Bar | Barrier => Class::Barrier,
                    Bra | BrxIdx | Call | Ret | Exit | Trap | Shfl | Vote | Match | Activemask
                    | Redux | Membar | Fence | BarWarpSync => Class::Ctrl,
                    Div | Rem | Rcp | Sqrt | Rsqrt | Sin | Cos | Lg2 | Ex2 | Tanh => {
                        if has("f64") && matches!(i.op, Div | Rem) {
                            Class::Dp
                        } else {
                            Class::Sfu
                        }
                    }
                    _ if has("f64") => Class::Dp,
                    _ if has("f32") || has("f16") || has("bf16") => Class::Fp,
                    _ => Class::Int,
                };
                let no_dst = matches!(
                    i.op,
                    St | Red
                        | Bra
                        | BrxIdx
                        | Ret
                        | Exit
                        | Trap
                        | Bar
                        | Barrier
                        | BarWarpSync
                        | Membar
                        | Fence
                        | Prefetch
                        | Prefetchu
                        | CpAsync
                );
                let mut dsts = Vec::new();
                let mut srcs = Vec::new();
                for (k, o) in i.operands.iter().enumerate() {
                    if k == 0 && !no_dst {
                        regs_of(o, &mut dsts);
                    } else {
                        regs_of(o, &mut srcs);
                    }
                }
                if let Some(g) = i.guard {
                    srcs.push(g.reg.0);
                }
                let target = i.operands.iter().find_map(|o| match o {
                    Operand::Label(l) => f.labels.get(l.index()).map(|l| l.target.index() as u32),
                    _ => None,
                });
                StaticInst {
                    class,
                    dsts,
                    srcs,
                    target,
                    slots: sass_slots(&i.op, &words),
                }
            })
            .collect();
        let ptx_len = insts.len();
        let mut insts = insts;
        let mut num_regs = f.regs.len();
        let schedule = match order {
            IssueOrder::Ptx => None,
            IssueOrder::Scheduled => {
                use Opcode::*;
                let mut mem: Vec<MemOrder> = f
                    .insts
                    .iter()
                    .map(|i| match i.op {
                        Ld | Ldu | Prefetch | Prefetchu => MemOrder::Load,
                        St | Atom | Red | CpAsync => MemOrder::Store,
                        _ => MemOrder::None,
                    })
                    .collect();
                let ends: Vec<bool> = insts
                    .iter()
                    .map(|s| matches!(s.class, Class::Ctrl | Class::Barrier))
                    .collect();
                let branch: Vec<bool> = f.insts.iter().map(|i| i.op == Bra).collect();
                Some(BlockSchedule::new(
                    &mut insts,
                    &mut mem,
                    &ends,
                    &branch,
                    &mut num_regs,
                ))
                .filter(|s| s.reorders)
            }
        };
        Kernel {
            insts,
            ptx_len,
            num_regs,
            schedule,
        }
    }
}

/// One executed memory instruction.
#[derive(Clone, Copy, Debug)]
pub struct MemOp {
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// Global or shared.
    pub space: Space,
    /// Global: the range of [`WarpTrace::blocks`] it touches. Shared: `len` is the
    /// bank-conflict degree.
    pub start: u32,
    /// See `start`.
    pub len: u32,
}

/// The window of one warp's instruction stream that has been traced and not yet consumed:
/// a chunk of at most [`CHUNK`] instructions, refilled by [`Tracer::refill`] when the timing
/// model has issued them all.
#[derive(Clone, Debug, Default)]
pub struct WarpTrace {
    /// Instructions in execution order.
    pub insts: Vec<DynInst>,
    /// Memory instructions.
    pub mems: Vec<MemOp>,
    /// Coalesced block addresses.
    pub blocks: Vec<u64>,
    /// The warp has exited: no instruction follows the window.
    pub ended: bool,
}

impl WarpTrace {
    /// Bytes the window holds (its vectors' capacities).
    pub fn bytes(&self) -> usize {
        self.insts.capacity() * std::mem::size_of::<DynInst>()
            + self.mems.capacity() * std::mem::size_of::<MemOp>()
            + self.blocks.capacity() * std::mem::size_of::<u64>()
    }
}

/// Instructions a warp's window is refilled with at most (fewer at a barrier or the exit).
/// Trace memory is then bounded by the resident warps, whatever the kernel executes.
pub const CHUNK: usize = 256;

/// One TB in execution, traced on demand: the interpreter's [`TbExec`], stepped warp by
/// warp as the timing model consumes the windows.
pub struct TbStream<'p> {
    exec: TbExec<'p>,
    /// The TB's id (across grids).
    tb: u32,
    /// The static instructions of its kernel.
    kernel: &'p Kernel,
    /// The share of an SM it takes ([`super::capacity::CAPACITY`] units).
    weight: u64,
}

impl<'p> TbStream<'p> {
    /// The share of an SM the TB takes, in [`super::capacity::CAPACITY`] units.
    pub fn weight(&self) -> u64 {
        self.weight
    }

    /// Warps of the TB.
    pub fn num_warps(&self) -> usize {
        self.exec.num_warps()
    }

    /// The static instructions of the TB's kernel.
    pub fn kernel(&self) -> &'p Kernel {
        self.kernel
    }
}

#[derive(Default)]
struct Recorder {
    block: u64,
    banks: u32,
    got: Vec<MemOp>,
    blocks: Vec<u64>,
}

impl MemObserver for Recorder {
    fn wants_shared(&self) -> bool {
        true
    }
    fn access(&mut self, a: &MemAccess<'_>) {
        let op = if a.space == Space::Shared {
            MemOp {
                kind: a.kind,
                space: a.space,
                start: 0,
                len: bank_conflicts(a.mask, a.addrs, a.size, self.banks),
            }
        } else {
            let start = self.blocks.len();
            coalesce(a.mask, a.addrs, a.size, self.block, &mut self.blocks);
            MemOp {
                kind: a.kind,
                space: a.space,
                start: start as u32,
                len: (self.blocks.len() - start) as u32,
            }
        };
        self.got.push(op);
    }
    fn split(&self, _: u64) -> Self {
        Recorder {
            block: self.block,
            banks: self.banks,
            ..Recorder::default()
        }
    }
    fn merge(&mut self, _: u64, _: Self) {}
}

/// Warp instructions a [`Tracer`] runs before it stops with [`SimError::Budget`].
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Each TB's.
    pub per_tb: u64,
    /// All TBs' together.
    pub launch: u64,
}

/// A grid whose TBs the tracer starts.
struct GridSrc<'p> {
    prog: &'p Program,
    kernel: &'p Kernel,
    /// Borrowed for the host's launch, owned for a child grid (its parameter buffer).
    params: Cow<'p, [u8]>,
    geom: Geometry,
    /// The id of its TB 0.
    first_tb: u32,
    /// The share of an SM one of its TBs takes, in [`super::capacity::CAPACITY`] units (its
    /// kernel's own occupancy).
    weight: u64,
}

/// Runs TBs functionally on demand and records their streams.
pub struct Tracer<'p> {
    /// Grid 0 (the host's launch), then the child grids in the order they were added.
    grids: Vec<GridSrc<'p>>,
    globals: Globals,
    budget: u64,
    /// The launch's budget ([`SimOptions::max_warp_instructions`](super::SimOptions)) and
    /// the warp instructions traced so far.
    launch_budget: u64,
    traced: u64,
    rec: Recorder,
    /// SMs of the simulated GPU (`%nsmid`).
    num_sms: u32,
    /// Scratch space for applying a kernel's block issue orders.
    tmp: Vec<DynInst>,
    /// Whether the host's kernel calls the device runtime (only then are launches
    /// collected).
    collects: bool,
    /// Launches traced TBs executed and the engine has not taken: (TB id, launch).
    launched: Vec<(u32, ChildLaunch)>,
}

/// The last kernel [`decoded`] decoded on this thread: its module, its index there, and the
/// program.
struct ProgramCache {
    module: Module,
    index: usize,
    prog: Arc<Program>,
}

thread_local! {
    static PROGRAM_CACHE: std::cell::RefCell<Option<ProgramCache>> =
        const { std::cell::RefCell::new(None) };
}

/// [`Program::from_function`], decoded once per kernel and thread: a `simulate` call for
/// the same kernel of an equal module as the previous call on this thread shares the program
/// decoded then. Decoding (operands, the reconvergence points, the instruction texts kept
/// for error messages) was about 5 % of a tiny launch's run on a large GPU, and a program is
/// a function of its module and kernel only. `f` must be one of `module`'s functions (by
/// address) to be kept; any other is decoded every time.
pub(crate) fn decoded(module: &Module, f: &Function) -> Arc<Program> {
    let Some(index) = module.functions.iter().position(|g| std::ptr::eq(g, f)) else {
        return Arc::new(Program::from_function(module, f));
    };
    let hit = PROGRAM_CACHE.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|e| e.index == index && e.module == *module)
            .map(|e| Arc::clone(&e.prog))
    });
    if let Some(p) = hit {
        return p;
    }
    let prog = Arc::new(Program::from_function(module, f));
    PROGRAM_CACHE.with(|c| {
        *c.borrow_mut() = Some(ProgramCache {
            module: module.clone(),
            index,
            prog: Arc::clone(&prog),
        });
    });
    prog
}

/// The last launch whose global memory [`launch_globals`] generated, with that memory as
/// generated (before any TB ran).
struct GlobalsCache {
    bound: BoundLaunch,
    nparams: usize,
    images: Vec<(String, Vec<u8>)>,
    globals: Globals,
}

/// Launches whose generated buffers take more bytes than this are not kept (the copy would
/// hold their memory after the run).
const GLOBALS_CACHE_BYTES: usize = 64 << 20;

thread_local! {
    static GLOBALS_CACHE: std::cell::RefCell<Option<GlobalsCache>> =
        const { std::cell::RefCell::new(None) };
}

/// [`Globals::from_launch`], generated once per launch and thread: a `simulate` call that
/// repeats the previous call's launch (the same bound launch and module variables) starts
/// from a copy of the memory generated then. Generating a launch's buffers (random values,
/// CSR matrices) took about 10 % of a small launch's run, and a copy of the bytes is what
/// generating them again gives, since every initialiser is a function of its description,
/// except a `file(...)` one, whose file may change between calls: launches reading a file
/// are never kept.
fn launch_globals(prog: &Program, bound: &BoundLaunch) -> Result<Globals, SimError> {
    let images = &prog.layout.global_images;
    let hit = GLOBALS_CACHE.with(|c| {
        c.borrow().as_ref().and_then(|e| {
            let same = e.nparams == prog.layout.nparams
                && e.bound == *bound
                && e.images.len() == images.len()
                && e.images
                    .iter()
                    .zip(images)
                    .all(|((n, b), g)| *n == g.name && *b == g.bytes);
            same.then(|| e.globals.clone())
        })
    });
    if let Some(g) = hit {
        return Ok(g);
    }
    let globals = Globals::from_launch(prog, bound)?;
    let reads_file = bound
        .params
        .iter()
        .filter_map(|p| match &p.value {
            launch::BoundValue::Buffer { init, .. } => Some(init.as_str()),
            _ => None,
        })
        .chain(bound.field_buffers().map(|b| b.init.as_str()))
        .any(|init| match launch::init::Init::parse(init) {
            Ok(launch::init::Init::File(_)) | Err(_) => true,
            Ok(_) => false,
        });
    let bytes: usize = globals
        .regions
        .iter()
        .filter_map(|r| r.bytes.as_ref().map(Vec::len))
        .sum();
    let entry = (!reads_file && bytes <= GLOBALS_CACHE_BYTES).then(|| GlobalsCache {
        bound: bound.clone(),
        nparams: prog.layout.nparams,
        images: images
            .iter()
            .map(|g| (g.name.clone(), g.bytes.clone()))
            .collect(),
        globals: globals.clone(),
    });
    GLOBALS_CACHE.with(|c| *c.borrow_mut() = entry);
    Ok(globals)
}

impl<'p> Tracer<'p> {
    /// A tracer of `prog` (whose IR gave `kernel`) over `bound`, whose parameter block
    /// ([`param_block`]) is `params`; global accesses coalesce into `block_bytes` blocks,
    /// shared ones into `banks` banks; `budget` bounds the warp instructions.
    pub fn new(
        prog: &'p Program,
        kernel: &'p Kernel,
        bound: &BoundLaunch,
        params: &'p [u8],
        block_bytes: u64,
        banks: u32,
        budget: Budget,
    ) -> Result<Tracer<'p>, SimError> {
        if kernel.ptx_len != prog.len() {
            return Err(SimError::Internal(format!(
                "the static instructions ({}) do not match the program ({})",
                kernel.ptx_len,
                prog.len()
            )));
        }
        let globals = launch_globals(prog, bound)?;
        let geom = Geometry::of(prog, bound)?;
        Ok(Tracer {
            grids: vec![GridSrc {
                prog,
                kernel,
                params: Cow::Borrowed(params),
                geom,
                first_tb: 0,
                weight: super::capacity::CAPACITY,
            }],
            globals,
            budget: budget.per_tb,
            launch_budget: budget.launch,
            traced: 0,
            rec: Recorder {
                block: block_bytes,
                banks,
                ..Recorder::default()
            },
            num_sms: 1,
            tmp: Vec::new(),
            collects: prog.calls_device_runtime(),
            launched: Vec::new(),
        })
    }

    /// Adds a grid launched from the device whose TBs are `first_tb..`: `prog` (whose IR
    /// gave `kernel`) with the parameter block `params` and the shape `geom`.
    pub(crate) fn add_grid(
        &mut self,
        prog: &'p Program,
        kernel: &'p Kernel,
        params: Vec<u8>,
        geom: Geometry,
        first_tb: u32,
        weight: u64,
    ) {
        self.collects |= prog.calls_device_runtime();
        self.grids.push(GridSrc {
            prog,
            kernel,
            params: Cow::Owned(params),
            geom,
            first_tb,
            weight,
        });
    }

    /// Sets the share of an SM one TB of the host's grid takes ([`super::capacity::tb_weight`] of
    /// its occupancy; the whole SM until set).
    pub(crate) fn set_host_weight(&mut self, weight: u64) {
        self.grids[0].weight = weight;
    }

    /// Moves the launches traced since the last call to `out`, as (launching TB, launch), in
    /// the order they were traced.
    pub fn take_launches(&mut self, out: &mut Vec<(u32, ChildLaunch)>) {
        out.append(&mut self.launched);
    }

    /// The parameter block of `bound` for `prog` (what [`Tracer::new`] takes).
    pub fn params(prog: &Program, bound: &BoundLaunch) -> Vec<u8> {
        param_block(prog, bound)
    }

    /// Shared memory one TB of the host's launch uses.
    pub fn shared_bytes(&self) -> usize {
        self.grids[0].geom.shared_bytes
    }

    /// The GPU's SM count, which `%nsmid` reads (1 until set).
    pub fn set_num_sms(&mut self, n: u32) {
        self.num_sms = n.max(1);
    }

    /// Starts TB `tb` (its id across grids; in grid 0 its linear id): its warps' windows are
    /// empty until [`Tracer::refill`], on SM `sm` (its `%smid`).
    pub fn start(&mut self, tb: u32, sm: u32) -> TbStream<'p> {
        let sm = [sm, self.num_sms];
        // Grids are added in increasing `first_tb` order, and grid 0 starts at 0.
        let g = self.grids.partition_point(|g| g.first_tb <= tb).max(1) - 1;
        let grid = &self.grids[g];
        let local = u64::from(tb - grid.first_tb);
        TbStream {
            exec: TbExec::on_sm(
                grid.prog,
                grid.params.clone(),
                &grid.geom,
                local,
                self.budget,
                sm,
            ),
            tb,
            kernel: grid.kernel,
            weight: grid.weight,
        }
    }

    /// Replaces warp `w`'s window (`windows[w]`, one per warp of `tb`) with its next
    /// instructions: up to [`CHUNK`], ending early after a barrier or at the exit. A warp
    /// waiting at a barrier is released first (the timing model asks only once every warp
    /// has reached it; a warp still short of it is run there, its instructions appended to
    /// its own window).
    pub fn refill(
        &mut self,
        tb: &mut TbStream<'p>,
        w: usize,
        windows: &mut [WarpTrace],
    ) -> Result<(), SimError> {
        let r = self.refill_window(tb, w, windows);
        if self.collects {
            self.launched
                .extend(tb.exec.take_launches().into_iter().map(|l| (tb.tb, l)));
        }
        r
    }

    fn refill_window(
        &mut self,
        tb: &mut TbStream<'p>,
        w: usize,
        windows: &mut [WarpTrace],
    ) -> Result<(), SimError> {
        let schedule = tb.kernel.schedule.as_ref();
        let exec = &mut tb.exec;
        let t = &mut windows[w];
        t.insts.clear();
        t.mems.clear();
        t.blocks.clear();
        loop {
            match exec.state(w) {
                Control::Exited => {
                    windows[w].ended = true;
                    return Ok(());
                }
                Control::Barrier => {
                    for (x, other) in windows.iter_mut().enumerate() {
                        let from = other.insts.len();
                        while exec.state(x) == Control::Continue {
                            self.step(exec, x, other)?;
                        }
                        self.reorder(schedule, other, from);
                    }
                    exec.release_barrier()?;
                }
                Control::Continue => {}
            }
            let t = &mut windows[w];
            let from = t.insts.len();
            // A window ends at a block's end, so that the block can be issued in its
            // scheduled order (`issue_order`); a block is at most the kernel long.
            while (t.insts.len() < CHUNK || mid_block(schedule, t))
                && exec.state(w) == Control::Continue
            {
                self.step(exec, w, t)?;
            }
            self.reorder(schedule, t, from);
            if exec.state(w) != Control::Continue {
                // Stopped at a barrier or exited: when no warp of the TB can step any more
                // the TB is deadlocked, reported here with who waits where.
                exec.release_barrier()?;
            }
            if !t.insts.is_empty() || exec.state(w) == Control::Exited {
                t.ended = exec.state(w) == Control::Exited;
                return Ok(());
            }
        }
    }

    /// Puts the blocks of `t.insts[from..]` in their issue order.
    fn reorder(&mut self, schedule: Option<&BlockSchedule>, t: &mut WarpTrace, from: usize) {
        if let Some(s) = schedule {
            s.apply(&mut t.insts[from..], &mut self.tmp);
        }
    }

    /// Steps warp `w` once, appending what it executed to `t`.
    fn step(&mut self, exec: &mut TbExec<'p>, w: usize, t: &mut WarpTrace) -> Result<(), SimError> {
        let rec = &mut self.rec;
        rec.got.clear();
        rec.blocks.clear();
        if let Some(step) = exec.step_warp(w, &mut self.globals, rec)? {
            record(t, rec, step);
            self.traced += 1;
            if self.traced > self.launch_budget {
                return Err(exec.budget_error(w, self.launch_budget));
            }
        }
        Ok(())
    }
}

/// Whether `t` ends inside a block or a loop group that `schedule` reorders as one.
fn mid_block(schedule: Option<&BlockSchedule>, t: &WarpTrace) -> bool {
    schedule.is_some_and(|s| s.wants_more(&t.insts))
}

/// Shared memory one TB of `bound` uses ([`Tracer::shared_bytes`] without building the
/// tracer).
pub fn shared_bytes(prog: &Program, bound: &BoundLaunch) -> Result<usize, SimError> {
    Ok(Geometry::of(prog, bound)?.shared_bytes)
}

/// Appends the executed instruction `step` (whose memory accesses `rec` observed) to `t`.
fn record(t: &mut WarpTrace, rec: &Recorder, step: Step) {
    let mem = match rec.got.first() {
        Some(&op) => {
            let base = t.blocks.len() as u32;
            t.blocks.extend_from_slice(&rec.blocks);
            let len = if op.space == Space::Shared {
                rec.got.iter().map(|o| o.len).max().unwrap_or(1)
            } else {
                rec.blocks.len() as u32
            };
            t.mems.push(MemOp {
                start: if op.space == Space::Shared { 0 } else { base },
                len,
                ..op
            });
            (t.mems.len() - 1) as u32
        }
        None => NO_MEM,
    };
    t.insts.push(DynInst {
        pc: step.pc,
        lanes: step.exec.count_ones() as u8,
        mem,
        bar: step.barrier.map_or(0, |b| b.pack()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const COPY: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry copy(.param .u64 a, .param .u64 b)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r2;
  ret;
}
"#;

    fn bound(m: &ptx_parser::Module, a_init: &str, dir: &Path) -> BoundLaunch {
        let f = m.kernel("copy").expect("kernel");
        let json = format!(
            r#"{{"format":"paver-launch/1","kernel":"copy","grid":[1,1,1],"block":[32,1,1],
            "params":[{{"index":0,"buffer":{{"type":"u32","len":32,"init":"{a_init}"}}}},
                      {{"index":1,"buffer":{{"type":"u32","len":32,"init":"zeros"}}}}]}}"#
        );
        launch::Launch::from_json(&json, dir)
            .expect("launch")
            .bind("copy", &crate::param_sigs(f), dir)
            .expect("bind")
    }

    fn bytes(g: &Globals) -> Vec<Option<Vec<u8>>> {
        g.regions.iter().map(|r| r.bytes.clone()).collect()
    }

    /// A repeated launch starts from the memory as generated, not as the last run left it,
    /// and a different launch gets its own memory (expected values: a fresh
    /// `Globals::from_launch`, and the initialisers' definitions).
    #[test]
    fn kept_globals_are_the_generated_ones() {
        let m = ptx_parser::parse(COPY).expect("parse");
        let prog = Program::from_function(&m, m.kernel("copy").expect("kernel"));
        let b1 = bound(&m, "rand(1)", Path::new("."));
        let mut g = launch_globals(&prog, &b1).expect("globals");
        let fresh = Globals::from_launch(&prog, &b1).expect("globals");
        assert_eq!(bytes(&g), bytes(&fresh));
        // What a run does to its copy (stores) must not reach the next run's memory.
        for r in &mut g.regions {
            if let Some(b) = &mut r.bytes {
                b.fill(0xAB);
            }
        }
        let again = launch_globals(&prog, &b1).expect("globals");
        assert_eq!(bytes(&again), bytes(&fresh));
        let b2 = bound(&m, "ones", Path::new("."));
        let other = launch_globals(&prog, &b2).expect("globals");
        let a = other.region(0).expect("buffer a");
        assert_eq!(a.len(), 128);
        assert!(a.chunks(4).all(|w| w == 1u32.to_le_bytes()));
    }

    /// A `file(...)` buffer is read again at every call: the file may change in between.
    #[test]
    fn file_buffers_are_read_at_every_call() {
        let m = ptx_parser::parse(COPY).expect("parse");
        let prog = Program::from_function(&m, m.kernel("copy").expect("kernel"));
        let dir = std::env::temp_dir().join(format!("paver-globals-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("a.bin");
        std::fs::write(&path, [7u8; 128]).expect("write");
        let b = bound(&m, "file(a.bin)", &dir);
        let first = launch_globals(&prog, &b).expect("globals");
        assert_eq!(first.region(0), Some(&[7u8; 128][..]));
        std::fs::write(&path, [9u8; 128]).expect("write");
        let second = launch_globals(&prog, &b).expect("globals");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(second.region(0), Some(&[9u8; 128][..]));
    }
}
