//! Per-function summaries for the command line: instruction mix, global memory access counts
//! and register counts by type.

use crate::ir::Function;
use crate::opcode::Opcode;
use crate::types::{ScalarType, StateSpace};
use std::collections::BTreeMap;

/// Counts of memory instructions by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemCounts {
    /// `ld.global` (including `.nc`) and `ldu.global`.
    pub global_loads: usize,
    /// Of which `ld.global.nc`.
    pub global_nc_loads: usize,
    /// `st.global`.
    pub global_stores: usize,
    /// `ld` without a state space (generic addressing).
    pub generic_loads: usize,
    /// `st` without a state space.
    pub generic_stores: usize,
    /// `ld.shared*`.
    pub shared_loads: usize,
    /// `st.shared*`.
    pub shared_stores: usize,
    /// `atom`/`red` on global or generic memory.
    pub global_atomics: usize,
}

impl Function {
    /// Instruction counts by opcode name (`ld`, `cp.async`, ...; unknown opcodes by their word).
    pub fn instruction_mix(&self) -> BTreeMap<String, usize> {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for i in &self.insts {
            match m.get_mut(i.op.name()) {
                Some(c) => *c += 1,
                None => {
                    m.insert(i.op.name().to_string(), 1);
                }
            }
        }
        m
    }

    /// Memory access instruction counts.
    pub fn mem_counts(&self) -> MemCounts {
        let mut c = MemCounts::default();
        for i in &self.insts {
            let space = i.mods.space;
            match (&i.op, space) {
                (Opcode::Ld | Opcode::Ldu, Some(StateSpace::Global)) => {
                    c.global_loads += 1;
                    if i.mods.nc {
                        c.global_nc_loads += 1;
                    }
                }
                (Opcode::Ld, None) => c.generic_loads += 1,
                (Opcode::Ld, Some(s)) if s.is_shared() => c.shared_loads += 1,
                (Opcode::St, Some(StateSpace::Global)) => c.global_stores += 1,
                (Opcode::St, None) => c.generic_stores += 1,
                (Opcode::St, Some(s)) if s.is_shared() => c.shared_stores += 1,
                (Opcode::Atom | Opcode::Red, None | Some(StateSpace::Global)) => {
                    c.global_atomics += 1
                }
                _ => {}
            }
        }
        c
    }

    /// Number of declared registers per type.
    pub fn register_counts(&self) -> BTreeMap<ScalarType, usize> {
        let mut m = BTreeMap::new();
        for r in &self.regs {
            *m.entry(r.ty).or_insert(0) += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts() {
        let m = crate::parse(
            ".version 8.0\n.entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .f32 %f<3>;\n.reg .pred %p1;\n\
             ld.param.u64 %rd1, [p];\n\
             ld.global.nc.f32 %f1, [%rd1];\n\
             ld.global.f32 %f2, [%rd1+4];\n\
             ld.f32 %f2, [%rd1+8];\n\
             st.global.f32 [%rd1], %f1;\n\
             atom.global.add.f32 %f1, [%rd1], %f2;\n\
             ret;\n}\n",
        )
        .unwrap();
        let f = m.kernel("k").unwrap();
        let mix = f.instruction_mix();
        assert_eq!(mix.get("ld"), Some(&4));
        assert_eq!(mix.get("st"), Some(&1));
        let c = f.mem_counts();
        assert_eq!(
            (
                c.global_loads,
                c.global_nc_loads,
                c.generic_loads,
                c.global_stores,
                c.global_atomics
            ),
            (2, 1, 1, 1, 1)
        );
        let r = f.register_counts();
        use crate::types::ScalarType::*;
        assert_eq!(r.get(&B64), Some(&3));
        assert_eq!(r.get(&F32), Some(&3));
        assert_eq!(r.get(&Pred), Some(&1));
    }
}
