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

    /// The integers this type holds, `(min, max)`; `None` for floats.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            ElemType::U8 => (0, u8::MAX.into()),
            ElemType::I8 => (i8::MIN.into(), i8::MAX.into()),
            ElemType::U16 => (0, u16::MAX.into()),
            ElemType::I16 => (i16::MIN.into(), i16::MAX.into()),
            ElemType::U32 => (0, u32::MAX.into()),
            ElemType::I32 => (i32::MIN.into(), i32::MAX.into()),
            ElemType::U64 => (0, u64::MAX.into()),
            ElemType::I64 => (i64::MIN.into(), i64::MAX.into()),
            ElemType::F32 | ElemType::F64 => return None,
        })
    }

    /// Ok when the integer `v` is a value of this type (for floats: when it is finite in
    /// the type; large integers round to the nearest float as in CUDA's conversions).
    pub fn check_int(self, v: i128) -> Result<(), String> {
        match self.int_range() {
            Some((lo, hi)) if v < lo || v > hi => {
                Err(format!("{v} does not fit in {self} ({lo} to {hi})"))
            }
            Some(_) => Ok(()),
            None => self.check_f64(v as f64),
        }
    }

    /// Ok when `v` is a value of this type: for integer types a whole number in range, for
    /// `f32` a finite number within its range (rounding to the nearest `f32` is allowed).
    pub fn check_f64(self, v: f64) -> Result<(), String> {
        if !v.is_finite() {
            return Err(format!("{v} is not a finite number"));
        }
        match self {
            ElemType::F64 => Ok(()),
            ElemType::F32 if v.abs() > f64::from(f32::MAX) => {
                Err(format!("{v} is outside the range of f32 (±{:e})", f32::MAX))
            }
            ElemType::F32 => Ok(()),
            _ if v.fract() != 0.0 => Err(format!(
                "{v} is not an integer, but the elements are {self}"
            )),
            _ => self.check_int(v as i128),
        }
    }

    /// Appends `v` converted to this type (integers: truncating, saturating as Rust `as`;
    /// [`ElemType::check_f64`] first for an exact conversion).
    pub fn push_f64(self, out: &mut Vec<u8>, v: f64) {
        match self {
            ElemType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            ElemType::F64 => out.extend_from_slice(&v.to_le_bytes()),
            _ if self.is_signed_int() => self.push_u64(out, v as i64 as u64),
            _ => self.push_u64(out, v as u64),
        }
    }

    /// Appends integer `v` (two's complement bits, truncated to the element width; floats
    /// get the value converted; [`ElemType::check_int`] first for an exact conversion).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_conversions_only() {
        assert!(ElemType::U8.check_f64(255.0).is_ok());
        let e = ElemType::U8.check_f64(300.0).unwrap_err();
        assert!(e.contains("300 does not fit in u8 (0 to 255)"), "{e}");
        assert!(ElemType::U8
            .check_f64(-1.0)
            .unwrap_err()
            .contains("does not fit"));
        assert!(ElemType::I8.check_int(-128).is_ok());
        assert!(ElemType::I8.check_int(128).is_err());
        let e = ElemType::U32.check_f64(2.7).unwrap_err();
        assert!(e.contains("not an integer"), "{e}");
        assert!(ElemType::I32
            .check_f64(1e20)
            .unwrap_err()
            .contains("does not fit in i32"));
        assert!(ElemType::U64.check_f64(1.8e19).is_ok());
        assert!(ElemType::U64.check_f64(1.9e19).is_err());
        assert!(ElemType::F32.check_f64(2.7).is_ok());
        assert!(ElemType::F32.check_f64(1e39).unwrap_err().contains("f32"));
        assert!(ElemType::F64.check_f64(1e300).is_ok());
        assert!(ElemType::F64.check_f64(f64::NAN).is_err());
    }
}
