//! Where every symbol lives: the kernel parameter block, static and dynamic (`.extern`)
//! shared memory, per-thread local memory, and module-level `.global` / `.const` variables.
//!
//! Address map (all spaces share one 64-bit generic address space):
//! - global: parameter `i`'s buffer at `(i + 1) << 36` (the launch crate's map); module
//!   variable `k` at region `nparams + k`, i.e. `(nparams + k + 1) << 36`;
//! - shared: offsets from 0 in the `.shared` space, seen at [`SHARED_WINDOW`] + offset
//!   through generic addresses;
//! - local: offsets from 0 in the `.local` space, seen at [`LOCAL_WINDOW`] + offset;
//! - param: offsets from 0 in the kernel parameter block (only `ld.param` reaches it).

use ptx_parser::{Function, GlobalVar, Immediate, Init, Linkage, Module, StateSpace, Symbol};

use super::ops::Space;

/// Generic address of shared offset 0.
pub const SHARED_WINDOW: u64 = 0xFE00_0000_0000_0000;
/// Generic address of local offset 0.
pub const LOCAL_WINDOW: u64 = 0xFF00_0000_0000_0000;
/// log2 of the distance between two global regions (the launch crate's buffer spacing).
pub const REGION_LOG2: u32 = launch::bind::BUFFER_SPACING_LOG2;

/// A module-level `.global` / `.const` variable placed in global memory.
#[derive(Clone, Debug)]
pub(crate) struct GlobalVarImage {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The memory layout of one kernel.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layout {
    /// Offset of each kernel parameter in the parameter block.
    pub param_offsets: Vec<u64>,
    /// Size of each kernel parameter.
    pub param_sizes: Vec<u64>,
    /// Size of the parameter block.
    pub param_bytes: u64,
    /// Shared offset of each module global that is `.shared` (by module index).
    pub shared_globals: Vec<(u32, u64)>,
    /// Shared / local offset of each function-scope variable (by index), with its space.
    pub local_vars: Vec<Option<(Space, u64)>>,
    /// Global region of each module `.global`/`.const` variable (by module index).
    pub global_regions: Vec<(u32, usize)>,
    /// Images of the module variables, in region order after the parameters.
    pub global_images: Vec<GlobalVarImage>,
    /// Static shared bytes per TB.
    pub shared_static: u64,
    /// Offset of dynamic (`.extern .shared`) shared memory.
    pub shared_dynamic_at: u64,
    /// Local bytes per thread.
    pub local_bytes: u64,
    /// Number of kernel parameters (the first global regions).
    pub nparams: usize,
}

fn align_up(v: u64, a: u64) -> u64 {
    let a = a.max(1);
    v.div_ceil(a) * a
}

fn var_align(v: &GlobalVar) -> u64 {
    u64::from(
        v.align
            .unwrap_or(v.ty.size() * v.vec.map_or(1, |w| w.lanes()))
            .max(1),
    )
}

fn is_dynamic(v: &GlobalVar) -> bool {
    v.linkage == Some(Linkage::Extern) || v.dims.iter().any(Option::is_none)
}

impl Layout {
    /// Lays out kernel `f` of module `m`.
    pub fn compute(m: &Module, f: &Function) -> Layout {
        let mut l = Layout {
            nparams: f.params.len(),
            ..Layout::default()
        };
        let mut off = 0;
        for p in &f.params {
            let size = u64::from(p.ty.size())
                * u64::from(p.vec.map_or(1, |w| w.lanes()))
                * u64::from(p.array.unwrap_or(1));
            let align = u64::from(p.align.unwrap_or(p.ty.size()).max(1));
            off = align_up(off, align);
            l.param_offsets.push(off);
            l.param_sizes.push(size);
            off += size;
        }
        l.param_bytes = off;

        // Shared: module-scope then function-scope statics; dynamic arrays after them.
        let mut sh = 0u64;
        let mut max_align = 16;
        let mut dyn_users = Vec::new();
        for (k, g) in m.globals.iter().enumerate() {
            if g.space.is_shared() {
                if is_dynamic(g) {
                    dyn_users.push(Err(k as u32));
                    max_align = max_align.max(var_align(g));
                } else {
                    sh = align_up(sh, var_align(g));
                    l.shared_globals.push((k as u32, sh));
                    sh += g.size_bytes().unwrap_or(0);
                }
            }
        }
        let mut loc = 0u64;
        l.local_vars = vec![None; f.local_vars.len()];
        for (k, v) in f.local_vars.iter().enumerate() {
            if v.space.is_shared() {
                if is_dynamic(v) {
                    dyn_users.push(Ok(k));
                    max_align = max_align.max(var_align(v));
                } else {
                    sh = align_up(sh, var_align(v));
                    l.local_vars[k] = Some((Space::Shared, sh));
                    sh += v.size_bytes().unwrap_or(0);
                }
            } else if matches!(v.space, StateSpace::Local | StateSpace::Param) {
                // A function-scope `.param` variable (a call's argument or return value,
                // `ptx_parser::calls`) is per-thread memory like `.local`.
                loc = align_up(loc, var_align(v));
                l.local_vars[k] = Some((Space::Local, loc));
                loc += v.size_bytes().unwrap_or(0);
            }
        }
        l.shared_static = sh;
        l.shared_dynamic_at = align_up(sh, max_align);
        for u in dyn_users {
            match u {
                Ok(k) => l.local_vars[k] = Some((Space::Shared, l.shared_dynamic_at)),
                Err(k) => l.shared_globals.push((k, l.shared_dynamic_at)),
            }
        }
        l.local_bytes = align_up(loc, 8);

        // Module `.global` / `.const` variables get their own regions.
        for (k, g) in m.globals.iter().enumerate() {
            if matches!(g.space, StateSpace::Global | StateSpace::Const) {
                let region = l.nparams + l.global_images.len();
                l.global_regions.push((k as u32, region));
                l.global_images.push(GlobalVarImage {
                    name: g.name.clone(),
                    bytes: Vec::new(),
                });
            }
        }
        let images: Vec<Vec<u8>> = m
            .globals
            .iter()
            .filter(|g| matches!(g.space, StateSpace::Global | StateSpace::Const))
            .map(|g| l.image(m, g))
            .collect();
        for (img, bytes) in l.global_images.iter_mut().zip(images) {
            img.bytes = bytes;
        }
        l
    }

    /// Region base address of global region `r`.
    pub fn region_base(r: usize) -> u64 {
        (r as u64 + 1) << REGION_LOG2
    }

    /// The bytes of a module variable: its initialiser, zero-filled to its size.
    fn image(&self, m: &Module, g: &GlobalVar) -> Vec<u8> {
        let size = g.size_bytes().unwrap_or(0) as usize;
        let mut out = Vec::with_capacity(size);
        if let Some(init) = &g.init {
            self.push_init(m, init, g.ty.size() as usize, &mut out);
        }
        out.resize(size, 0);
        out
    }

    fn push_init(&self, m: &Module, init: &Init, elem: usize, out: &mut Vec<u8>) {
        let mut push = |v: u64| out.extend_from_slice(&v.to_le_bytes()[..elem.min(8)]);
        match init {
            Init::Imm(i) => {
                let v = match (elem, *i) {
                    (4, Immediate::F64(b)) => u64::from((f64::from_bits(b) as f32).to_bits()),
                    (8, Immediate::F32(b)) => f64::from(f32::from_bits(b)).to_bits(),
                    (_, i) => i.bits(),
                };
                push(v)
            }
            Init::Symbol { name, offset } | Init::Generic { name, offset } => {
                let addr = m
                    .globals
                    .iter()
                    .position(|g| &g.name == name)
                    .and_then(|k| self.symbol(Symbol::Global(k as u32)))
                    .map_or(0, |(_, a)| a);
                push(addr.wrapping_add(*offset as u64))
            }
            Init::List(items) => {
                for it in items {
                    self.push_init(m, it, elem, out);
                }
            }
        }
    }

    /// The state space and address (offset in that space) of a symbol.
    pub fn symbol(&self, s: Symbol) -> Option<(Space, u64)> {
        match s {
            Symbol::Param(i) => self
                .param_offsets
                .get(i as usize)
                .map(|o| (Space::Param, *o)),
            Symbol::Local(i) => self.local_vars.get(i as usize).copied().flatten(),
            Symbol::Global(k) => {
                if let Some((_, off)) = self.shared_globals.iter().find(|(g, _)| *g == k) {
                    return Some((Space::Shared, *off));
                }
                self.global_regions
                    .iter()
                    .find(|(g, _)| *g == k)
                    .map(|(_, r)| (Space::Global, Self::region_base(*r)))
            }
            _ => None,
        }
    }
}
