//! A PTX kernel's parameter list as the binder sees it: names and types from the
//! `ptx-parser` IR (`.s*` signed, `.f*` float, by-value arrays as bytes, everything else
//! unsigned; 64-bit integers may hold pointers).

use ptx_parser::{Function, ScalarType};

use crate::bind::{ParamSig, SigType};

/// The parameter signature of kernel `f`, for [`crate::Launch::bind`].
pub fn param_sigs(f: &Function) -> Vec<ParamSig> {
    f.params
        .iter()
        .map(|p| {
            let bits = p.ty.size() * 8;
            let ty = match (p.array, p.ty) {
                (Some(n), t) => SigType::Bytes {
                    bytes: u64::from(n) * u64::from(t.size()),
                },
                (None, ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64) => {
                    SigType::Int { bits, signed: true }
                }
                (None, ScalarType::F16 | ScalarType::F32 | ScalarType::F64 | ScalarType::Bf16) => {
                    SigType::Float { bits }
                }
                _ => SigType::Int {
                    bits,
                    signed: false,
                },
            };
            ParamSig {
                name: p.name.clone(),
                ty,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_map_to_signatures() {
        let m = ptx_parser::parse(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 a, .param .s32 n, \
             .param .f32 x, .param .b32 m, .param .align 8 .b8 s[24])\n{\nret;\n}\n",
        )
        .unwrap();
        let sigs = param_sigs(m.kernel("k").unwrap());
        let tys: Vec<SigType> = sigs.iter().map(|s| s.ty).collect();
        assert_eq!(
            tys,
            [
                SigType::Int {
                    bits: 64,
                    signed: false
                },
                SigType::Int {
                    bits: 32,
                    signed: true
                },
                SigType::Float { bits: 32 },
                SigType::Int {
                    bits: 32,
                    signed: false
                },
                SigType::Bytes { bytes: 24 },
            ]
        );
        assert_eq!(sigs[1].name, "n");
    }
}
