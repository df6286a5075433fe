//! The grids a kernel launches from the device, as the static analysis sees them: for each
//! `cudaGetParameterBufferV2` / `cudaLaunchDeviceV2` pair (`ptx_parser::device_runtime`),
//! the child kernel, its grid, block and dynamic shared memory, and each argument the parent
//! stores into the parameter buffer, each resolved from the launch where it follows from it.
//!
//! The values are the symbolic executor's ([`crate::addr`]: it records the value every
//! `st.param` and generic store writes, [`KernelModel::stores`]); a value is
//! - `const`: the same in every launching thread (a constant, a launch dimension, a
//!   parameter of the parent's launch; a pointer into a buffer says which);
//! - `per_tb`: an expression of `%ctaid` only, evaluated for every parent TB (the distinct
//!   values, at most [`PER_TB_LISTED`] listed);
//! - `per_thread`: depends on the launching thread's `%tid` (or a loop counter);
//! - `unresolved`: data-dependent, floating-point, path-dependent ... with the reason, as
//!   for an unresolved load;
//! - `never_reached`: no store of it is reached for this launch.
//!
//! The forms resolved are those the symbolic domain resolves (affine and the non-affine
//! integer operations it keeps); the kernel is found through the `mov` of its address into
//! the call's first argument.

use launch::BoundLaunch;
use ptx_parser::{
    AddrBase, DeviceRuntimeFn, Function, InstId, Module, Opcode, Operand, StateSpace, Symbol,
};
use serde::Serialize;

use crate::expr::{eval, Ctx, Expr, Var, E};
use crate::model::KernelModel;

/// Most distinct per-TB values listed in a [`Value::PerTb`].
pub const PER_TB_LISTED: usize = 16;
/// Most parent TBs a per-TB value is evaluated for.
const PER_TB_EVALUATED: u64 = 1 << 16;

/// A launch argument.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Value {
    /// The same in every launching thread.
    Const {
        /// The value (integers as such, floats as their IEEE bits).
        value: i128,
        /// A pointer into a buffer of the launch: the parent's parameter index and offset.
        #[serde(skip_serializing_if = "Option::is_none")]
        buffer: Option<(usize, u64)>,
    },
    /// Depends on the launching TB only.
    PerTb {
        /// Distinct values over the parent TBs evaluated, ascending (at most
        /// [`PER_TB_LISTED`]).
        values: Vec<i128>,
        /// Number of distinct values.
        distinct: u64,
    },
    /// Depends on the launching thread (or a loop iteration).
    PerThread,
    /// Not known statically.
    Unresolved {
        /// Why, as for an unresolved load.
        reason: String,
        /// PTX line of the store that writes it.
        line: u32,
    },
    /// No store of it is reached for this launch.
    NeverReached,
}

impl Value {
    /// Whether the value follows from the launch (constant or per TB).
    pub fn is_resolved(&self) -> bool {
        matches!(self, Value::Const { .. } | Value::PerTb { .. })
    }
}

/// One argument of the child kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChildParam {
    /// Byte offset in the parameter buffer.
    pub offset: u64,
    /// The child's parameter at that offset (`None`: none starts there).
    pub index: Option<usize>,
    /// Its value.
    pub value: Value,
}

/// One device-side launch site.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaunchSite {
    /// PTX line of `cudaGetParameterBufferV2`'s call.
    pub line: u32,
    /// PTX line of `cudaLaunchDeviceV2`'s call (0: none follows).
    pub launch_line: u32,
    /// The child kernel (`None`: its address is not a `mov` of a kernel).
    pub kernel: Option<String>,
    /// Grid x, y, z.
    pub grid: [Value; 3],
    /// Block x, y, z.
    pub block: [Value; 3],
    /// Dynamic shared memory, bytes.
    pub shared_bytes: Value,
    /// The arguments stored into the buffer, by offset.
    pub params: Vec<ChildParam>,
    /// Whether the child's parameters all have a store (every one is listed).
    pub all_params_stored: bool,
    /// Whether kernel, grid, block, shared memory and every argument follow from the launch.
    pub resolved: bool,
}

/// The value stored at `id` (`None`: not reached).
fn stored(m: &KernelModel, id: usize) -> Option<&E> {
    m.stores.get(&InstId::new(id))
}

/// Classifies the value stored at instruction `at` (PTX line `line`) for the launch `b`.
fn classify(at: Option<usize>, line: u32, m: &KernelModel, b: &BoundLaunch) -> Value {
    let Some(e) = at.and_then(|i| stored(m, i)) else {
        return Value::NeverReached;
    };
    if let Some(r) = e.unknown_reason() {
        return Value::Unresolved {
            reason: r.to_string(),
            line,
        };
    }
    let (mut tid, mut iter) = (false, false);
    e.visit_leaves(&mut |x| match x {
        Expr::Var(Var::Tid(_)) => tid = true,
        Expr::Var(Var::Iter(_) | Var::Phi(_)) | Expr::Trip(_) => iter = true,
        _ => {}
    });
    if tid || iter {
        return Value::PerThread;
    }
    let at = |ctaid: [i128; 3]| -> Result<i128, String> {
        let mut cx = Ctx::new(m.loops.len());
        cx.ctaid = ctaid;
        eval(e, &cx, m).map_err(|x| x.to_string())
    };
    if let Some(v) = e.as_const() {
        let buffer = u64::try_from(v).ok().and_then(|a| b.buffer_at(a));
        return Value::Const { value: v, buffer };
    }
    let [gx, gy, gz] = m.grid.map(i128::from);
    let n = (gx * gy * gz).min(i128::from(PER_TB_EVALUATED));
    let mut vals = Vec::new();
    for t in 0..n {
        match at([t % gx, (t / gx) % gy, t / (gx * gy)]) {
            Ok(v) => vals.push(v),
            Err(reason) => return Value::Unresolved { reason, line },
        }
    }
    vals.sort_unstable();
    vals.dedup();
    if vals.len() == 1 {
        let buffer = u64::try_from(vals[0]).ok().and_then(|a| b.buffer_at(a));
        return Value::Const {
            value: vals[0],
            buffer,
        };
    }
    let distinct = vals.len() as u64;
    vals.truncate(PER_TB_LISTED);
    Value::PerTb {
        values: vals,
        distinct,
    }
}

/// The `.param` locals a call passes (after the function symbol), and the one it returns.
fn call_params(inst: &ptx_parser::Inst) -> (Vec<u32>, Option<u32>) {
    let ops = inst.operands.as_slice();
    let Some(at) = ops
        .iter()
        .position(|o| matches!(o, Operand::Symbol(Symbol::Function(_))))
    else {
        return (Vec::new(), None);
    };
    let locals = |o: Option<&Operand>| -> Vec<u32> {
        match o {
            Some(Operand::List(v)) => v
                .iter()
                .filter_map(|x| match x {
                    Operand::Symbol(Symbol::Local(i)) => Some(*i),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let ret = if at == 0 {
        None
    } else {
        locals(ops.get(at - 1)).first().copied()
    };
    (locals(ops.get(at + 1)), ret)
}

/// The address operand of `inst` (a store's first, a load's second).
fn address(inst: &ptx_parser::Inst, k: usize) -> Option<&ptx_parser::Address> {
    match inst.operands.get(k) {
        Some(Operand::Address(a)) => Some(a),
        _ => None,
    }
}

/// Byte offset of each of `f`'s parameters in its parameter block.
fn param_offsets(f: &Function) -> Vec<u64> {
    let mut at = 0u64;
    f.params
        .iter()
        .map(|p| {
            let elem = u64::from(p.ty.size()) * p.vec.map_or(1, |v| v.lanes() as u64);
            let align = p.align.map_or(elem, u64::from).max(1);
            at = at.div_ceil(align) * align;
            let here = at;
            at += elem * u64::from(p.array.unwrap_or(1));
            here
        })
        .collect()
}

/// Every device-side launch site of `f` (in `module`), resolved for the launch `b` whose
/// symbolic execution is `m`.
pub fn launch_sites(
    module: &Module,
    f: &Function,
    b: &BoundLaunch,
    m: &KernelModel,
) -> Vec<LaunchSite> {
    let line = |i: usize| f.span(InstId::new(i)).map_or(0, |s| s.line);
    let mut out = Vec::new();
    for (c, inst) in f.insts.iter().enumerate() {
        if ptx_parser::device_runtime::runtime_call(module, inst)
            != Some(DeviceRuntimeFn::GetParameterBuffer)
        {
            continue;
        }
        let (args, ret) = call_params(inst);
        // The stores into the call's arguments, back to the previous call.
        let start = f.insts[..c]
            .iter()
            .rposition(|i| i.op == Opcode::Call)
            .map_or(0, |p| p + 1);
        let arg_store = |k: usize, off: i64| -> Option<usize> {
            let local = *args.get(k)?;
            (start..c).rev().find(|&i| {
                let s = &f.insts[i];
                s.op == Opcode::St
                    && address(s, 0).is_some_and(|a| {
                        a.base == AddrBase::Symbol(Symbol::Local(local)) && a.offset == off
                    })
            })
        };
        let value_of = |k: usize, off: i64| {
            let at = arg_store(k, off);
            classify(at, at.map_or(0, line), m, b)
        };
        // The kernel: the register stored into argument 0 holds a `mov` of its address.
        let kernel = arg_store(0, 0).and_then(|i| match f.insts[i].operands.get(1) {
            Some(Operand::Reg(r)) => f.insts[..i].iter().rev().find_map(|d| {
                match (&d.op, d.operands.first(), d.operands.get(1)) {
                    (
                        Opcode::Mov,
                        Some(Operand::Reg(x)),
                        Some(Operand::Symbol(Symbol::Function(k))),
                    ) if x == r => module.functions.get(*k as usize).map(|g| g.name.clone()),
                    _ => None,
                }
            }),
            _ => None,
        });
        let grid = [0, 4, 8].map(|o| value_of(1, o));
        let block = [0, 4, 8].map(|o| value_of(2, o));
        let shared_bytes = value_of(3, 0);
        // The buffer: the register loaded from the call's return value; its stores up to the
        // launch.
        let end = f.insts[c + 1..]
            .iter()
            .position(|i| {
                ptx_parser::device_runtime::runtime_call(module, i)
                    == Some(DeviceRuntimeFn::LaunchDevice)
            })
            .map(|p| c + 1 + p);
        let buf_reg = ret.and_then(|r| {
            f.insts[c + 1..end.unwrap_or(f.insts.len())]
                .iter()
                .find_map(|i| match (&i.op, i.operands.first(), address(i, 1)) {
                    (Opcode::Ld, Some(Operand::Reg(x)), Some(a))
                        if a.base == AddrBase::Symbol(Symbol::Local(r)) =>
                    {
                        Some(*x)
                    }
                    _ => None,
                })
        });
        let child = kernel.as_deref().and_then(|k| module.kernel(k));
        let offsets = child.map(param_offsets).unwrap_or_default();
        let mut params: Vec<ChildParam> = Vec::new();
        if let (Some(x), Some(e)) = (buf_reg, end) {
            for i in c + 1..e {
                let s = &f.insts[i];
                let Some(a) = address(s, 0) else { continue };
                if s.op != Opcode::St
                    || a.base != AddrBase::Reg(x)
                    || matches!(s.mods.space, Some(StateSpace::Global | StateSpace::Shared))
                {
                    continue;
                }
                let offset = u64::try_from(a.offset).unwrap_or(0);
                let index = offsets.iter().position(|&o| o == offset);
                let value = classify(Some(i), line(i), m, b);
                match params.iter_mut().find(|p| p.offset == offset) {
                    // A later store to the same offset wins.
                    Some(p) => p.value = value,
                    None => params.push(ChildParam {
                        offset,
                        index,
                        value,
                    }),
                }
            }
        }
        params.sort_by_key(|p| p.offset);
        let all_params_stored = child.is_some()
            && offsets
                .iter()
                .all(|o| params.iter().any(|p| p.offset == *o));
        let resolved = kernel.is_some()
            && all_params_stored
            && grid.iter().chain(&block).all(Value::is_resolved)
            && shared_bytes.is_resolved()
            && params.iter().all(|p| p.value.is_resolved());
        out.push(LaunchSite {
            line: line(c),
            launch_line: end.map_or(0, line),
            kernel,
            grid,
            block,
            shared_bytes,
            params,
            all_params_stored,
            resolved,
        });
    }
    out
}
