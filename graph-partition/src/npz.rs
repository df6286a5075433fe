//! The container formats under a SciPy `.npz` graph file: a ZIP archive (PKWARE APPNOTE
//! 6.3) of NumPy `.npy` arrays (NumPy's `format.py`, NEP 1).
//!
//! Writing: *stored* (uncompressed) entries only, streamed through any [`Write`]: each entry
//! has general-purpose flag bit 3, so its CRC-32 and sizes follow the data in a data
//! descriptor and nothing is ever seeked back to. Entries, offsets or sizes past 4 GiB get
//! ZIP64 records. Timestamps are fixed (1980-01-01 00:00), so the same graph gives the same
//! bytes. Reading: stored and deflated entries (what `numpy.savez` and
//! `numpy.savez_compressed` write), ZIP64 included, every entry's CRC-32 checked.

use std::io::{Read, Write};

/// A failure to read the archive or one of its arrays, said in words (the caller adds the
/// file name).
pub(crate) type Fault = String;

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const DESCRIPTOR_SIG: u32 = 0x0807_4b50;
const EOCD_SIG: u32 = 0x0605_4b50;
const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
/// MS-DOS date of 1980-01-01 (day 1, month 1, year 0 = 1980); the time is 00:00:00.
const DOS_DATE: u16 = (1 << 5) | 1;
/// Bit 3: CRC and sizes are in the data descriptor after the data.
const FLAG_DESCRIPTOR: u16 = 1 << 3;
const U32_MAX: u64 = 0xFFFF_FFFF;

/// One finished entry, for the central directory.
struct Entry {
    name: String,
    crc: u32,
    size: u64,
    offset: u64,
    zip64: bool,
}

/// A ZIP archive of stored entries written front to back.
pub(crate) struct ZipWriter<'w> {
    out: &'w mut dyn Write,
    offset: u64,
    entries: Vec<Entry>,
    current: Option<(String, u64, bool, crc32fast::Hasher, u64)>,
}

fn put16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn put32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn put64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

impl<'w> ZipWriter<'w> {
    /// An empty archive writing to `out`.
    pub(crate) fn new(out: &'w mut dyn Write) -> ZipWriter<'w> {
        ZipWriter {
            out,
            offset: 0,
            entries: Vec::new(),
            current: None,
        }
    }

    fn emit(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Starts entry `name`, which will hold exactly `size` bytes.
    pub(crate) fn start(&mut self, name: &str, size: u64) -> std::io::Result<()> {
        let zip64 = size >= U32_MAX || self.offset >= U32_MAX;
        let mut h = Vec::with_capacity(64);
        put32(&mut h, LOCAL_SIG);
        put16(&mut h, if zip64 { 45 } else { 20 }); // version needed to extract
        put16(&mut h, FLAG_DESCRIPTOR);
        put16(&mut h, 0); // stored
        put16(&mut h, 0); // time 00:00:00
        put16(&mut h, DOS_DATE);
        put32(&mut h, 0); // CRC-32: in the data descriptor
        let sz = if zip64 { U32_MAX as u32 } else { 0 };
        put32(&mut h, sz);
        put32(&mut h, sz);
        put16(&mut h, name.len() as u16);
        put16(&mut h, if zip64 { 20 } else { 0 });
        h.extend_from_slice(name.as_bytes());
        if zip64 {
            put16(&mut h, 1); // ZIP64 extended information
            put16(&mut h, 16);
            put64(&mut h, 0);
            put64(&mut h, 0);
        }
        let offset = self.offset;
        self.emit(&h)?;
        self.current = Some((
            name.to_string(),
            size,
            zip64,
            crc32fast::Hasher::new(),
            offset,
        ));
        Ok(())
    }

    /// Appends data to the current entry; `crc` is the CRC-32 of `bytes` (computed by the
    /// caller, possibly in parallel).
    pub(crate) fn write(&mut self, bytes: &[u8], crc: crc32fast::Hasher) -> std::io::Result<()> {
        self.emit(bytes)?;
        if let Some(cur) = &mut self.current {
            cur.3.combine(&crc);
        }
        Ok(())
    }

    /// Appends data to the current entry, computing its CRC-32 here.
    pub(crate) fn write_small(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut h = crc32fast::Hasher::new();
        h.update(bytes);
        self.write(bytes, h)
    }

    /// Ends the current entry with its data descriptor.
    pub(crate) fn finish_entry(&mut self) -> std::io::Result<()> {
        let Some((name, size, zip64, hasher, offset)) = self.current.take() else {
            return Ok(());
        };
        let written = self.offset - offset;
        let crc = hasher.finalize();
        let mut d = Vec::with_capacity(24);
        put32(&mut d, DESCRIPTOR_SIG);
        put32(&mut d, crc);
        if zip64 {
            put64(&mut d, size);
            put64(&mut d, size);
        } else {
            put32(&mut d, size as u32);
            put32(&mut d, size as u32);
        }
        // The size was promised in `start`; a mismatch is a bug in the caller.
        debug_assert!(written >= size);
        self.emit(&d)?;
        self.entries.push(Entry {
            name,
            crc,
            size,
            offset,
            zip64,
        });
        Ok(())
    }

    /// Writes the central directory and the end records.
    pub(crate) fn finish(mut self) -> std::io::Result<()> {
        self.finish_entry()?;
        let cd_start = self.offset;
        let mut cd = Vec::new();
        for e in &self.entries {
            let big_size = e.size >= U32_MAX;
            let big_off = e.offset >= U32_MAX;
            let mut extra = Vec::new();
            if big_size || big_off {
                let mut body = Vec::new();
                if big_size {
                    put64(&mut body, e.size);
                    put64(&mut body, e.size);
                }
                if big_off {
                    put64(&mut body, e.offset);
                }
                put16(&mut extra, 1);
                put16(&mut extra, body.len() as u16);
                extra.extend_from_slice(&body);
            }
            let version = if e.zip64 || big_off { 45 } else { 20 };
            put32(&mut cd, CENTRAL_SIG);
            put16(&mut cd, version); // made by (MS-DOS attributes)
            put16(&mut cd, version); // needed
            put16(&mut cd, FLAG_DESCRIPTOR);
            put16(&mut cd, 0);
            put16(&mut cd, 0);
            put16(&mut cd, DOS_DATE);
            put32(&mut cd, e.crc);
            let sz = if big_size {
                U32_MAX as u32
            } else {
                e.size as u32
            };
            put32(&mut cd, sz);
            put32(&mut cd, sz);
            put16(&mut cd, e.name.len() as u16);
            put16(&mut cd, extra.len() as u16);
            put16(&mut cd, 0); // comment
            put16(&mut cd, 0); // disk
            put16(&mut cd, 0); // internal attributes
            put32(&mut cd, 0); // external attributes
            put32(
                &mut cd,
                if big_off {
                    U32_MAX as u32
                } else {
                    e.offset as u32
                },
            );
            cd.extend_from_slice(e.name.as_bytes());
            cd.extend_from_slice(&extra);
        }
        self.emit(&cd)?;
        let cd_size = cd.len() as u64;
        let n = self.entries.len() as u64;
        let mut end = Vec::new();
        if cd_start >= U32_MAX {
            let zip64_eocd = self.offset;
            put32(&mut end, ZIP64_EOCD_SIG);
            put64(&mut end, 44);
            put16(&mut end, 45);
            put16(&mut end, 45);
            put32(&mut end, 0);
            put32(&mut end, 0);
            put64(&mut end, n);
            put64(&mut end, n);
            put64(&mut end, cd_size);
            put64(&mut end, cd_start);
            put32(&mut end, ZIP64_LOCATOR_SIG);
            put32(&mut end, 0);
            put64(&mut end, zip64_eocd);
            put32(&mut end, 1);
        }
        put32(&mut end, EOCD_SIG);
        put16(&mut end, 0);
        put16(&mut end, 0);
        put16(&mut end, n as u16);
        put16(&mut end, n as u16);
        put32(&mut end, cd_size as u32);
        put32(&mut end, cd_start.min(U32_MAX) as u32);
        put16(&mut end, 0);
        self.emit(&end)?;
        self.out.flush()
    }
}

pub(crate) use crate::npy::header as npy_header;

fn rd16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn rd32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn rd64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Reads every entry of a ZIP archive: `(name, contents)`.
pub(crate) fn read_zip(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, Fault> {
    let trunc = || "truncated ZIP archive".to_string();
    // The end record is in the last 64 KiB + 22 bytes (its comment is at most 65,535 bytes).
    let lo = bytes.len().saturating_sub(22 + 65_535);
    let eocd = (lo..=bytes.len().saturating_sub(22))
        .rev()
        .find(|&k| rd32(bytes, k) == Some(EOCD_SIG))
        .ok_or("not a ZIP archive (no end-of-central-directory record)")?;
    let mut count = u64::from(rd16(bytes, eocd + 10).ok_or_else(trunc)?);
    let mut cd_size = u64::from(rd32(bytes, eocd + 12).ok_or_else(trunc)?);
    let mut cd_start = u64::from(rd32(bytes, eocd + 16).ok_or_else(trunc)?);
    if eocd >= 20 && rd32(bytes, eocd - 20) == Some(ZIP64_LOCATOR_SIG) {
        let at = rd64(bytes, eocd - 12).ok_or_else(trunc)? as usize;
        if rd32(bytes, at) != Some(ZIP64_EOCD_SIG) {
            return Err("bad ZIP64 end-of-central-directory record".into());
        }
        count = rd64(bytes, at + 32).ok_or_else(trunc)?;
        cd_size = rd64(bytes, at + 40).ok_or_else(trunc)?;
        cd_start = rd64(bytes, at + 48).ok_or_else(trunc)?;
    }
    let mut at = usize::try_from(cd_start).map_err(|_| trunc())?;
    let cd_end = at.saturating_add(usize::try_from(cd_size).map_err(|_| trunc())?);
    if cd_end > bytes.len() {
        return Err(trunc());
    }
    let mut out = Vec::new();
    for _ in 0..count {
        if rd32(bytes, at) != Some(CENTRAL_SIG) {
            return Err(format!("bad central directory entry at byte {at}"));
        }
        let method = rd16(bytes, at + 10).ok_or_else(trunc)?;
        let crc = rd32(bytes, at + 16).ok_or_else(trunc)?;
        let mut csize = u64::from(rd32(bytes, at + 20).ok_or_else(trunc)?);
        let mut usize_ = u64::from(rd32(bytes, at + 24).ok_or_else(trunc)?);
        let name_len = usize::from(rd16(bytes, at + 28).ok_or_else(trunc)?);
        let extra_len = usize::from(rd16(bytes, at + 30).ok_or_else(trunc)?);
        let comment_len = usize::from(rd16(bytes, at + 32).ok_or_else(trunc)?);
        let mut offset = u64::from(rd32(bytes, at + 42).ok_or_else(trunc)?);
        let name_bytes = bytes.get(at + 46..at + 46 + name_len).ok_or_else(trunc)?;
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        let extra = bytes
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or_else(trunc)?;
        // ZIP64 extended information: the fields that are 0xFFFFFFFF above, in order.
        let mut e = 0;
        while e + 4 <= extra.len() {
            let tag = rd16(extra, e).unwrap_or(0);
            let len = usize::from(rd16(extra, e + 2).unwrap_or(0));
            if tag == 1 {
                let mut f = e + 4;
                for field in [&mut usize_, &mut csize, &mut offset] {
                    if *field == U32_MAX {
                        *field = rd64(extra, f).ok_or_else(trunc)?;
                        f += 8;
                    }
                }
            }
            e += 4 + len;
        }
        at += 46 + name_len + extra_len + comment_len;
        let lh = usize::try_from(offset).map_err(|_| trunc())?;
        if rd32(bytes, lh) != Some(LOCAL_SIG) {
            return Err(format!("{name}: bad local header"));
        }
        let data_at = lh
            + 30
            + usize::from(rd16(bytes, lh + 26).ok_or_else(trunc)?)
            + usize::from(rd16(bytes, lh + 28).ok_or_else(trunc)?);
        let end = usize::try_from(csize)
            .ok()
            .and_then(|c| data_at.checked_add(c))
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| format!("{name}: truncated entry"))?;
        let raw = &bytes[data_at..end];
        let data = match method {
            0 => raw.to_vec(),
            8 => {
                let mut v = Vec::with_capacity(usize::try_from(usize_).unwrap_or(0).min(1 << 32));
                flate2::read::DeflateDecoder::new(raw)
                    .read_to_end(&mut v)
                    .map_err(|e| format!("{name}: {e}"))?;
                v
            }
            m => {
                return Err(format!(
                    "{name}: compression method {m} is not supported (stored or deflate)"
                ))
            }
        };
        if data.len() as u64 != usize_ {
            return Err(format!(
                "{name}: {} bytes, the directory says {usize_}",
                data.len()
            ));
        }
        let mut h = crc32fast::Hasher::new();
        h.update(&data);
        if h.finalize() != crc {
            return Err(format!("{name}: CRC-32 mismatch (corrupt file)"));
        }
        out.push((name, data));
    }
    Ok(out)
}

/// Element types a graph array can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Signed integer of this many bytes.
    Int(usize),
    /// Unsigned integer of this many bytes.
    UInt(usize),
    /// IEEE float of this many bytes (4 or 8).
    Float(usize),
    /// `numpy.bool_`.
    Bool,
    /// Byte string of this length (`|S3`).
    Bytes(usize),
    /// UCS-4 string of this many characters (`<U3`).
    Unicode(usize),
}

/// A decoded `.npy` array.
#[derive(Debug)]
pub(crate) struct Npy {
    pub(crate) kind: Kind,
    big_endian: bool,
    /// Shape (empty for a 0-d array).
    pub(crate) shape: Vec<u64>,
    data: Vec<u8>,
}

/// Parses a `.npy` file (versions 1 to 3).
pub(crate) fn parse_npy(bytes: Vec<u8>) -> Result<Npy, Fault> {
    let crate::npy::Header {
        descr,
        shape,
        shape_text,
        data_start: start,
        ..
    } = crate::npy::parse_header(&bytes)?;
    let descr = descr.as_str();
    if shape.len() > 1 {
        return Err(format!("expected a 1-D array, found shape ({shape_text})"));
    }
    let (order, code) = descr.split_at(1.min(descr.len()));
    let (big_endian, code) = match order {
        "<" | "|" | "=" => (false, code),
        ">" => (true, code),
        _ => (false, descr),
    };
    let size = |s: &str| s[1..].parse::<usize>().ok();
    let kind = match (code.chars().next(), size(code)) {
        (Some('i'), Some(n @ (1 | 2 | 4 | 8))) => Kind::Int(n),
        (Some('u'), Some(n @ (1 | 2 | 4 | 8))) => Kind::UInt(n),
        (Some('f'), Some(n @ (4 | 8))) => Kind::Float(n),
        (Some('b'), Some(1)) | (Some('?'), None) => Kind::Bool,
        (Some('S'), Some(n)) => Kind::Bytes(n),
        (Some('U'), Some(n)) => Kind::Unicode(n),
        _ => return Err(format!("unsupported dtype '{descr}'")),
    };
    let mut data = bytes;
    data.drain(..start);
    let count = shape.first().copied().unwrap_or(1);
    let need = count.saturating_mul(kind.size() as u64);
    if (data.len() as u64) < need {
        return Err(format!(
            "array data is {} bytes, its shape needs {need}",
            data.len()
        ));
    }
    data.truncate(need as usize);
    Ok(Npy {
        kind,
        big_endian,
        shape,
        data,
    })
}

impl Kind {
    fn size(self) -> usize {
        match self {
            Kind::Int(n) | Kind::UInt(n) | Kind::Float(n) | Kind::Bytes(n) => n,
            Kind::Bool => 1,
            Kind::Unicode(n) => 4 * n,
        }
    }
}

/// What a value of a graph array is, when it is not a non-negative integer.
#[derive(Debug, PartialEq)]
pub(crate) enum BadValue {
    /// Below zero.
    Negative(f64),
    /// Not a whole number (or not finite).
    Fraction(f64),
    /// The array holds strings.
    NotNumeric,
}

impl Npy {
    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        // `parse_npy` cut the data to exactly the shape's elements.
        self.shape.first().map_or(1, |&n| n as usize)
    }

    /// Element `k` as a non-negative integer.
    pub(crate) fn get(&self, k: usize) -> Result<u64, BadValue> {
        let n = self.kind.size();
        let raw = &self.data[k * n..k * n + n];
        let mut b = [0u8; 8];
        if self.big_endian {
            for (d, s) in b.iter_mut().zip(raw.iter().rev()) {
                *d = *s;
            }
        } else {
            b[..n.min(8)].copy_from_slice(&raw[..n.min(8)]);
        }
        let u = u64::from_le_bytes(b);
        match self.kind {
            Kind::UInt(_) | Kind::Bool => Ok(u),
            Kind::Int(n) => {
                let shift = 64 - 8 * n as u32;
                let v = ((u << shift) as i64) >> shift;
                u64::try_from(v).map_err(|_| BadValue::Negative(v as f64))
            }
            Kind::Float(n) => {
                let v = if n == 4 {
                    f64::from(f32::from_bits(u as u32))
                } else {
                    f64::from_bits(u)
                };
                if v < 0.0 {
                    Err(BadValue::Negative(v))
                } else if v.fract() != 0.0 || !v.is_finite() || v >= 1.8e19 {
                    Err(BadValue::Fraction(v))
                } else {
                    Ok(v as u64)
                }
            }
            Kind::Bytes(_) | Kind::Unicode(_) => Err(BadValue::NotNumeric),
        }
    }

    /// A string array's (first) value: `|S3` bytes or `<U3` UCS-4 characters.
    pub(crate) fn text(&self) -> Option<String> {
        match self.kind {
            Kind::Bytes(n) => Some(
                String::from_utf8_lossy(&self.data[..n.min(self.data.len())])
                    .trim_end_matches('\0')
                    .to_string(),
            ),
            Kind::Unicode(n) => Some(
                self.data
                    .chunks_exact(4)
                    .take(n)
                    .filter_map(|c| {
                        let b: [u8; 4] = c.try_into().ok()?;
                        let v = if self.big_endian {
                            u32::from_be_bytes(b)
                        } else {
                            u32::from_le_bytes(b)
                        };
                        char::from_u32(v)
                    })
                    .collect::<String>()
                    .trim_end_matches('\0')
                    .to_string(),
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_aligned_and_parses_back() {
        for len in [Some(0), Some(7), Some(123_456_789), None] {
            let h = npy_header("<i4", len);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(h.last(), Some(&b'\n'));
            let mut bytes = h.clone();
            bytes.extend(std::iter::repeat_n(0u8, 4 * len.unwrap_or(1) as usize));
            let a = parse_npy(bytes).unwrap();
            assert_eq!(a.kind, Kind::Int(4));
            assert_eq!(a.shape, len.map_or(vec![], |n| vec![n]));
        }
    }

    #[test]
    fn zip_roundtrip_stored() {
        let mut buf = Vec::new();
        let mut z = ZipWriter::new(&mut buf);
        z.start("a.npy", 5).unwrap();
        z.write_small(b"hel").unwrap();
        z.write_small(b"lo").unwrap();
        z.finish_entry().unwrap();
        z.start("b.npy", 0).unwrap();
        z.finish().unwrap();
        let entries = read_zip(&buf).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0], ("a.npy".to_string(), b"hello".to_vec()));
        assert_eq!(entries[1], ("b.npy".to_string(), Vec::new()));
        // A flipped data byte is caught by the CRC.
        let pos = buf.windows(5).position(|w| w == b"hello").unwrap();
        buf[pos] = b'j';
        assert!(read_zip(&buf).unwrap_err().contains("CRC"));
    }

    #[test]
    fn values_are_checked() {
        let mut b = npy_header("<f8", Some(3));
        for v in [2.0f64, -1.0, 0.5] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let a = parse_npy(b).unwrap();
        assert_eq!(a.get(0), Ok(2));
        assert_eq!(a.get(1), Err(BadValue::Negative(-1.0)));
        assert_eq!(a.get(2), Err(BadValue::Fraction(0.5)));
        let mut b = npy_header(">i2", Some(1));
        b.extend_from_slice(&[0xff, 0xfe]);
        assert_eq!(parse_npy(b).unwrap().get(0), Err(BadValue::Negative(-2.0)));
        let mut b = npy_header("|S3", None);
        b.extend_from_slice(b"csr");
        assert_eq!(parse_npy(b).unwrap().text().as_deref(), Some("csr"));
    }
}
