//! Binding a [`Launch`] to a kernel's parameter list: names resolved to indices, every
//! parameter given a value, scalars checked against their PTX type, buffer lengths settled,
//! and every pointer given a global address.
//!
//! Addresses: the buffer (or synthetic pointer) of parameter `i` starts at
//! `(i + 1) << BUFFER_SPACING_LOG2`. Bases are therefore distinct, aligned far beyond any
//! line or page size, and an address maps back to its parameter with one shift. A pointer
//! parameter given no buffer still gets such a base, so static analysis can run on a launch
//! that names only the scalars.
//!
//! The types of a bound launch and their queries are here; the binding itself
//! ([`Launch::bind`], [`Launch::bind_open`]: resolution, checks, scalar encoding) is in the
//! child module `resolve`.

use std::path::PathBuf;

use serde::Serialize;

use crate::format::{Dim3, Launch};
use crate::{ElemType, LaunchError};

mod resolve;

use resolve::missing_value;

/// log2 of the distance between two parameters' buffers (64 GiB: more than any buffer this
/// machine class can hold, so buffers never overlap).
pub const BUFFER_SPACING_LOG2: u32 = 36;

/// CUDA's launch limits (CUDA C Programming Guide, "Features and Technical
/// Specifications", compute capability 3.0 and later).
pub const MAX_GRID: Dim3 = Dim3 {
    x: (1 << 31) - 1,
    y: 65_535,
    z: 65_535,
};
/// Largest block extent per dimension.
pub const MAX_BLOCK: Dim3 = Dim3 {
    x: 1024,
    y: 1024,
    z: 64,
};
/// Largest number of threads in one block.
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// A kernel parameter as the launch needs to know it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSig {
    /// Name in the PTX.
    pub name: String,
    /// Its type.
    pub ty: SigType,
}

/// The type of a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SigType {
    /// `.u*`, `.s*`, `.b*` of the given width; 64-bit ones may hold pointers.
    Int {
        /// Width in bits.
        bits: u32,
        /// `.s*`.
        signed: bool,
    },
    /// `.f32` / `.f64` (and `.f16` at 16 bits).
    Float {
        /// Width in bits.
        bits: u32,
    },
    /// A by-value byte array or struct (`.param .align 8 .b8 p[24]`), `bytes` long.
    Bytes {
        /// Size in bytes.
        bytes: u64,
    },
}

/// A launch bound to a kernel: everything resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoundLaunch {
    /// Entry name.
    pub kernel: String,
    /// Grid in TBs.
    pub grid: Dim3,
    /// Block in threads.
    pub block: Dim3,
    /// Dynamic shared memory per TB, bytes.
    pub dynamic_shared_bytes: u64,
    /// One per kernel parameter, in PTX order.
    pub params: Vec<BoundParam>,
    /// Folder that relative `file(…)` initialisers are read from.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The module's `.global` / `.const` variables, each its own data structure after the
    /// parameters' buffers (set by [`BoundLaunch::with_module`]; empty when the launch was
    /// bound without its module).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub module_vars: Vec<ModuleVar>,
}

/// A module-scope `.global` / `.const` variable placed in global memory: region
/// `nparams + j` for the `j`-th such variable in module order (the interpreter's layout).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModuleVar {
    /// Its name in the PTX.
    pub name: String,
    /// Index in the module's variable list (`Symbol::Global`).
    pub module_index: u32,
    /// Global address of byte 0.
    pub base: u64,
    /// Size in bytes, from its declaration.
    pub bytes: u64,
    /// Bytes of one element of its declared type (vector lanes included).
    pub elem_bytes: u64,
}

/// One parameter's resolved value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoundParam {
    /// PTX name.
    pub name: String,
    /// PTX type.
    #[serde(rename = "type")]
    pub ty: SigType,
    /// Its value.
    pub value: BoundValue,
}

/// The value a parameter receives.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BoundValue {
    /// A scalar: its bits, zero-extended to 64 (floats as their IEEE bits).
    Scalar {
        /// The encoded value.
        bits: u64,
    },
    /// The address of a buffer that the launch describes.
    Buffer {
        /// Global address of element 0.
        base: u64,
        /// Element type.
        elem: ElemType,
        /// Number of elements.
        len: u64,
        /// Initialiser, as written.
        init: String,
    },
    /// A pointer the launch gave no buffer for: a distinct address with no memory behind it.
    Synthetic {
        /// Global address it points to.
        base: u64,
    },
    /// A by-value struct / byte array: its bytes (field buffers' addresses written in).
    Bytes {
        /// The parameter's bytes, exactly its size.
        bytes: Vec<u8>,
        /// Buffers that fields point to.
        buffers: Vec<FieldBuffer>,
    },
    /// A by-value parameter (scalar or struct) the launch gives no value, bound by
    /// [`Launch::bind_open`] only: the static analysis treats its value as unknown and
    /// refuses a kernel whose analysed addresses, guards or loop bounds depend on it. A
    /// launch holding one cannot be run ([`BoundLaunch::require_values`]).
    Open,
}

/// A buffer a field of a by-value struct parameter points to: data structure
/// [`STRUCT_REGION0`]` + k` for the launch's `k`-th such buffer (parameter order, then
/// field order).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldBuffer {
    /// Byte offset of the pointer field in the struct.
    pub offset: u64,
    /// Global address of element 0.
    pub base: u64,
    /// Element type.
    pub elem: ElemType,
    /// Number of elements.
    pub len: u64,
    /// Initialiser, as written.
    pub init: String,
}

/// First data-structure (region) id of the buffers that struct fields point to: far above
/// any parameter or module variable, so their addresses do not depend on the module.
pub const STRUCT_REGION0: usize = 1024;

impl BoundLaunch {
    /// Number of thread blocks.
    pub fn num_tbs(&self) -> u64 {
        self.grid.count()
    }

    /// The parameters left open ([`BoundValue::Open`]), by index.
    pub fn open_params(&self) -> Vec<usize> {
        self.params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.value == BoundValue::Open)
            .map(|(i, _)| i)
            .collect()
    }

    /// Fails, naming the first one, when a parameter was left open: running the kernel
    /// (the interpreter, the simulator, `analyze --dynamic`) needs every value. The
    /// message is the one [`Launch::bind`] gives for the same launch.
    pub fn require_values(&self) -> Result<(), LaunchError> {
        match self.open_params().first() {
            None => Ok(()),
            Some(&i) => {
                let p = &self.params[i];
                Err(LaunchError::Param {
                    param: format!("{i} (`{}`)", p.name),
                    why: missing_value(p.ty),
                })
            }
        }
    }

    /// Bytes of global memory the described buffers need.
    pub fn buffer_bytes(&self) -> u64 {
        self.params
            .iter()
            .map(|p| match &p.value {
                BoundValue::Buffer { elem, len, .. } => len.saturating_mul(elem.size() as u64),
                BoundValue::Bytes { buffers, .. } => buffers
                    .iter()
                    .map(|b| b.len.saturating_mul(b.elem.size() as u64))
                    .fold(0u64, u64::saturating_add),
                _ => 0,
            })
            .fold(0u64, u64::saturating_add)
    }

    /// The data structure holding `addr`, with the byte offset into it: a parameter's
    /// buffer (index `< params.len()`) or module variable `j` (index `params.len() + j`).
    /// An address past a buffer's end (or before its start) belongs to none.
    pub fn buffer_at(&self, addr: u64) -> Option<(usize, u64)> {
        let idx = (addr >> BUFFER_SPACING_LOG2).checked_sub(1)? as usize;
        let offset = addr - buffer_base(idx);
        match self.region_bytes(idx)? {
            Some(n) if offset >= n => None,
            _ => Some((idx, offset)),
        }
    }

    /// Number of data structures: parameters, then module variables.
    pub fn num_regions(&self) -> usize {
        self.params.len() + self.module_vars.len()
    }

    /// The buffers struct fields point to, in region order from [`STRUCT_REGION0`].
    pub fn field_buffers(&self) -> impl Iterator<Item = &FieldBuffer> {
        self.params.iter().flat_map(|p| match &p.value {
            BoundValue::Bytes { buffers, .. } => buffers.as_slice(),
            _ => &[],
        })
    }

    /// Every data structure id with memory or an address: parameters' buffers and pointers,
    /// module variables, struct fields' buffers.
    pub fn region_ids(&self) -> Vec<usize> {
        (0..self.num_regions())
            .filter(|&i| self.region_bytes(i).is_some())
            .chain((0..self.field_buffers().count()).map(|k| STRUCT_REGION0 + k))
            .collect()
    }

    /// Size in bytes of data structure `idx` (`Some(None)`: a synthetic pointer, unbounded;
    /// `None`: a scalar parameter or no such structure).
    pub fn region_bytes(&self, idx: usize) -> Option<Option<u64>> {
        if idx >= STRUCT_REGION0 {
            let b = self.field_buffers().nth(idx - STRUCT_REGION0)?;
            return Some(Some(b.len * b.elem.size() as u64));
        }
        if let Some(p) = self.params.get(idx) {
            return match p.value {
                BoundValue::Buffer { elem, len, .. } => Some(Some(len * elem.size() as u64)),
                BoundValue::Synthetic { .. } => Some(None),
                _ => None,
            };
        }
        let v = self.module_vars.get(idx - self.params.len())?;
        Some(Some(v.bytes))
    }

    /// Element size of data structure `idx` (1 for a synthetic pointer).
    pub fn region_elem_bytes(&self, idx: usize) -> Option<u64> {
        if idx >= STRUCT_REGION0 {
            return self
                .field_buffers()
                .nth(idx - STRUCT_REGION0)
                .map(|b| b.elem.size() as u64);
        }
        match self.params.get(idx) {
            Some(p) => match p.value {
                BoundValue::Buffer { elem, .. } => Some(elem.size() as u64),
                BoundValue::Synthetic { .. } => Some(1),
                _ => None,
            },
            None => self
                .module_vars
                .get(idx - self.params.len())
                .map(|v| v.elem_bytes.max(1)),
        }
    }

    /// The base address of module variable `module_index` (`Symbol::Global`), if it is a
    /// `.global` / `.const` variable this launch knows.
    pub fn module_var_base(&self, module_index: u32) -> Option<u64> {
        self.module_vars
            .iter()
            .find(|v| v.module_index == module_index)
            .map(|v| v.base)
    }

    /// Places module `m`'s `.global` / `.const` variables after the parameters, as the
    /// interpreter lays them out, so that analyses resolve addresses into them.
    pub fn with_module(mut self, m: &ptx_parser::Module) -> BoundLaunch {
        let n = self.params.len();
        self.module_vars = m
            .globals
            .iter()
            .enumerate()
            .filter(|(_, g)| {
                matches!(
                    g.space,
                    ptx_parser::StateSpace::Global | ptx_parser::StateSpace::Const
                )
            })
            .enumerate()
            .map(|(j, (k, g))| ModuleVar {
                name: g.name.clone(),
                module_index: k as u32,
                base: buffer_base(n + j),
                bytes: g.size_bytes().unwrap_or(0),
                elem_bytes: u64::from(g.ty.size()) * u64::from(g.vec.map_or(1, |w| w.lanes())),
            })
            .collect();
        self
    }
}

/// The base address given to parameter `index`'s buffer.
pub fn buffer_base(index: usize) -> u64 {
    (index as u64 + 1) << BUFFER_SPACING_LOG2
}
