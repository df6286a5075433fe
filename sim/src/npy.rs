//! A minimal NumPy `.npy` (format 1.0) writer and reader for 1-D little-endian arrays: enough
//! to write a run's buffers and to read the reference outputs of the corpus.

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
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({len},), }}",
        dtype(e)
    );
    // Pad so that magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
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
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file".into());
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes.get(start..start + hlen).ok_or("truncated header")?;
    let header = std::str::from_utf8(header).map_err(|e| e.to_string())?;
    let field = |key: &str| -> Option<&str> {
        let i = header.find(&format!("'{key}'"))?;
        let rest = header[i + key.len() + 2..]
            .trim_start()
            .strip_prefix(':')?
            .trim_start();
        Some(rest)
    };
    let descr = field("descr")
        .and_then(|r| r.strip_prefix('\''))
        .and_then(|r| r.split('\'').next())
        .ok_or("no descr")?;
    if field("fortran_order").is_some_and(|r| r.starts_with("True")) {
        return Err("Fortran order not supported".into());
    }
    let shape_txt = field("shape")
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.split(')').next())
        .ok_or("no shape")?;
    let shape = shape_txt
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u64>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Npy {
        descr: descr.to_string(),
        shape,
        data: bytes[start + hlen..].to_vec(),
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
