//! `.npy` files of 1-D little-endian arrays: a run's buffers written and the reference
//! outputs of the corpus read, through the project's one `.npy` codec
//! ([`graph_partition::npy`]).

use launch::ElemType;

/// The NumPy dtype string of an element type (`<f4`, `<i4`, `|u1`, ...).
pub fn dtype(e: ElemType) -> &'static str {
    match e {
        ElemType::U8 => "|u1",
        ElemType::I8 => "|i1",
        ElemType::U16 => "<u2",
        ElemType::I16 => "<i2",
        ElemType::U32 => "<u4",
        ElemType::I32 => "<i4",
        ElemType::U64 => "<u8",
        ElemType::I64 => "<i8",
        ElemType::F32 => "<f4",
        ElemType::F64 => "<f8",
    }
}

/// Encodes `data` (raw little-endian elements) as a 1-D `.npy` file of `len` elements.
pub fn encode(e: ElemType, len: u64, data: &[u8]) -> Vec<u8> {
    let mut out = graph_partition::npy::header(dtype(e), Some(len));
    out.extend_from_slice(data);
    out
}

/// A decoded `.npy` array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Npy {
    /// The dtype string (`<f4`).
    pub descr: String,
    /// The shape.
    pub shape: Vec<u64>,
    /// The raw data.
    pub data: Vec<u8>,
}

/// Parses a `.npy` file (versions 1 to 3, C order).
pub fn decode(bytes: &[u8]) -> Result<Npy, String> {
    let h = graph_partition::npy::parse_header(bytes)?;
    if h.fortran_order {
        return Err("Fortran order not supported".into());
    }
    Ok(Npy {
        descr: h.descr,
        shape: h.shape,
        data: bytes[h.data_start..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let data: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let enc = encode(ElemType::F32, 2, &data);
        assert_eq!((enc.len() - data.len()) % 64, 0);
        let npy = decode(&enc).unwrap();
        assert_eq!(npy.descr, "<f4");
        assert_eq!(npy.shape, vec![2]);
        assert_eq!(npy.data, data);
    }
}
