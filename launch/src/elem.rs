//! Element types of launch buffers and their little-endian encoding.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The element type of a buffer (what one element of the array is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum ElemType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F32,
    F64,
}

impl ElemType {
    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            ElemType::U8 | ElemType::I8 => 1,
            ElemType::U16 | ElemType::I16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    /// Whether elements are IEEE floats.
    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F32 | ElemType::F64)
    }

    /// Whether elements are signed integers.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            ElemType::I8 | ElemType::I16 | ElemType::I32 | ElemType::I64
        )
    }

    /// Appends `v` converted to this type (integers: truncating, saturating as Rust `as`).
    pub fn push_f64(self, out: &mut Vec<u8>, v: f64) {
        match self {
            ElemType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            ElemType::F64 => out.extend_from_slice(&v.to_le_bytes()),
            _ if self.is_signed_int() => self.push_u64(out, v as i64 as u64),
            _ => self.push_u64(out, v as u64),
        }
    }

    /// Appends integer `v` (two's complement bits, truncated to the element width; floats
    /// get the value converted).
    pub fn push_u64(self, out: &mut Vec<u8>, v: u64) {
        match self {
            ElemType::F32 => out.extend_from_slice(&(v as i64 as f32).to_le_bytes()),
            ElemType::F64 => out.extend_from_slice(&(v as i64 as f64).to_le_bytes()),
            _ => out.extend_from_slice(&v.to_le_bytes()[..self.size()]),
        }
    }

    /// All element type names, for error messages.
    pub const NAMES: &'static str = "u8, i8, u16, i16, u32, i32, u64, i64, f32, f64";
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ElemType::U8 => "u8",
            ElemType::I8 => "i8",
            ElemType::U16 => "u16",
            ElemType::I16 => "i16",
            ElemType::U32 => "u32",
            ElemType::I32 => "i32",
            ElemType::U64 => "u64",
            ElemType::I64 => "i64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        };
        f.write_str(s)
    }
}

impl FromStr for ElemType {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Ok(match s {
            "u8" => ElemType::U8,
            "i8" => ElemType::I8,
            "u16" => ElemType::U16,
            "i16" => ElemType::I16,
            "u32" => ElemType::U32,
            "i32" => ElemType::I32,
            "u64" => ElemType::U64,
            "i64" => ElemType::I64,
            "f32" => ElemType::F32,
            "f64" => ElemType::F64,
            _ => return Err(()),
        })
    }
}
