//! The NumPy `.npy` array format (NumPy's `format.py`, NEP 1): the header of a 1-D (or 0-d)
//! array, written and parsed. The project's one codec: the `.npz` graph files
//! ([`crate::graph_file`]) and the interpreter's buffers (`sim::npy`) both use it.

/// The `.npy` (format 1.0) header of a 1-D array of `len` elements of `descr`, or of a 0-d
/// array when `len` is `None`; padded so the data starts at a multiple of 64 bytes.
pub fn header(descr: &str, len: Option<u64>) -> Vec<u8> {
    let shape = match len {
        Some(n) => format!("({n},)"),
        None => "()".to_string(),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let total = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat((64 - total % 64) % 64));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// A parsed `.npy` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The dtype string (`<f4`).
    pub descr: String,
    /// Whether the array is in Fortran order.
    pub fortran_order: bool,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<u64>,
    /// The shape as written, for messages.
    pub shape_text: String,
    /// Where the data starts in the file.
    pub data_start: usize,
}

fn rd16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn rd32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Parses the header of a `.npy` file (versions 1 to 3).
pub fn parse_header(bytes: &[u8]) -> Result<Header, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy array".into());
    }
    let (hlen, start) = match bytes[6] {
        1 => (usize::from(rd16(bytes, 8).unwrap_or(0)), 10),
        2 | 3 => (rd32(bytes, 8).ok_or("truncated .npy header")? as usize, 12),
        v => return Err(format!(".npy version {v} is not supported")),
    };
    let header = bytes
        .get(start..start + hlen)
        .ok_or("truncated .npy header")?;
    let header = String::from_utf8_lossy(header).into_owned();
    let field = |key: &str| -> Option<&str> {
        let k = header.find(&format!("'{key}'"))?;
        let rest = header[k + key.len() + 2..].trim_start().strip_prefix(':')?;
        Some(rest.trim_start())
    };
    let descr = field("descr")
        .and_then(|r| {
            let q = r.chars().next()?;
            let r = &r[1..];
            Some(&r[..r.find(q)?])
        })
        .ok_or("no 'descr' in the .npy header")?;
    let fortran_order = field("fortran_order").is_some_and(|r| r.starts_with("True"));
    let shape_text = field("shape")
        .and_then(|r| Some(&r[r.find('(')? + 1..r.find(')')?]))
        .ok_or("no 'shape' in the .npy header")?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<u64>())
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|_| format!("bad shape ({shape_text}) in the .npy header"))?;
    Ok(Header {
        descr: descr.to_string(),
        fortran_order,
        shape,
        shape_text: shape_text.to_string(),
        data_start: start + hlen,
    })
}
