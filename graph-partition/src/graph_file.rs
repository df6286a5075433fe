//! Graph files for other tools: the TB graph as a SciPy sparse matrix (`.npz`, read by
//! `scipy.sparse.load_npz`) and as a METIS `.graph` file, written from any symmetric
//! row source ([`Rows`]) and read back into a [`Graph`].
//!
//! `.npz` layout (what `scipy.sparse.save_npz(f, m, compressed=False)` writes for a CSR
//! matrix): a ZIP archive of `indices.npy`, `indptr.npy`, `format.npy` (`b'csr'`),
//! `shape.npy` (`[n, n]`, int64) and `data.npy`. The matrix is symmetric with an empty
//! diagonal, every row's columns ascending; indptr is int32 while the entry count and the
//! vertex count fit (int64 otherwise), indices uint16 up to 65,536 vertices (else as
//! indptr; SciPy converts them to its index type on loading), data the narrowest of int16,
//! int32 and int64 that holds every weight. Entries are stored, not deflated: a 25 M-edge
//! graph is written in a fraction of a second, where deflating would take seconds for a
//! 2-3x smaller file.
//!
//! Reading accepts what SciPy writes: `csr`, `csc` or `coo`, compressed or not, any integer,
//! boolean or whole-valued float dtype. The matrix must be symmetric, or triangular (one
//! side only, taken as the undirected graph it stands for); duplicate entries add up,
//! explicit zeros and the diagonal are dropped, as everywhere in this crate.
//!
//! Batches of rows are formatted (and their CRC-32 computed) in parallel by rayon while the
//! calling thread writes the previous batch.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::graph::{Graph, Parsed};
use crate::npz::{self, BadValue, Npy, ZipWriter};

/// A symmetric weighted graph given row by row: what the writers need.
pub trait Rows: Sync {
    /// Number of vertices.
    fn num_vertices(&self) -> u32;
    /// Row `i` (its neighbours; no diagonal) in two consecutive pieces, either possibly
    /// empty: neighbour ids ascending across both, and their (positive) weights.
    fn row(&self, i: u32) -> [(&[u32], &[u64]); 2];
    /// Number of entries in row `i`.
    fn row_len(&self, i: u32) -> usize {
        self.row(i).iter().map(|p| p.0.len()).sum()
    }
    /// The largest weight (0 without entries); sources that know it say so instead of the
    /// pass over every weight.
    fn max_weight(&self) -> u64 {
        (0..self.num_vertices())
            .into_par_iter()
            .map(|i| {
                self.row(i)
                    .iter()
                    .flat_map(|p| p.1.iter().copied())
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0)
    }
}

impl Rows for Graph {
    fn num_vertices(&self) -> u32 {
        self.num_tbs()
    }
    fn row(&self, i: u32) -> [(&[u32], &[u64]); 2] {
        self.full_row(i)
    }
    fn row_len(&self, i: u32) -> usize {
        self.degree(i)
    }
    fn max_weight(&self) -> u64 {
        Graph::max_weight(self)
    }
}

/// Appends `values` as little-endian integers of `size` bytes (2: i16, 4: i32, 8: i64);
/// the callers checked that every value fits.
fn put_ints<T: Copy + Into<u64>>(out: &mut Vec<u8>, values: &[T], size: usize) {
    let at = out.len();
    out.resize(at + values.len() * size, 0);
    let dst = &mut out[at..];
    if size == 2 {
        for (d, &v) in dst.chunks_exact_mut(2).zip(values) {
            d.copy_from_slice(&(v.into() as u16).to_le_bytes());
        }
    } else if size == 4 {
        for (d, &v) in dst.chunks_exact_mut(4).zip(values) {
            d.copy_from_slice(&(v.into() as u32).to_le_bytes());
        }
    } else {
        for (d, &v) in dst.chunks_exact_mut(8).zip(values) {
            d.copy_from_slice(&v.into().to_le_bytes());
        }
    }
}

/// Which file format a graph file is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// SciPy sparse matrix, `.npz`.
    Npz,
    /// METIS `.graph` text.
    Metis,
}

impl FileFormat {
    /// The format a path's extension names: `.npz`, or `.graph` / `.metis`.
    pub fn from_path(path: &Path) -> Option<FileFormat> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "npz" => Some(FileFormat::Npz),
            "graph" | "metis" => Some(FileFormat::Metis),
            _ => None,
        }
    }

    /// The name written in the analysis JSON (`graph.file_format`).
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Npz => "scipy-npz",
            FileFormat::Metis => "metis",
        }
    }
}

/// Rows per formatting job.
const ROWS_PER_JOB: u32 = 64;
/// Jobs per batch written at once (bounds the memory held as bytes).
const JOBS_PER_BATCH: usize = 64;

/// Formats rows `0..n` in batches of jobs, in parallel, and hands each job's bytes (with
/// their CRC-32) to `sink` on the calling thread, in row order: batch `k + 1` is formatted
/// (a job spawned in rayon's pool) while batch `k` is written. The calling thread never
/// blocks on work only the pool can do (an earlier version received the batches from a
/// formatting thread over a channel, and hung in a pool of one thread when called from
/// inside it): at the end of each scope it runs pool jobs itself while it waits.
fn stream_rows<R: Rows + ?Sized>(
    g: &R,
    fmt: &(dyn Fn(u32, u32, &mut Vec<u8>) + Sync),
    sink: &mut dyn FnMut(&[u8], crc32fast::Hasher) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let n = g.num_vertices();
    let jobs: Vec<(u32, u32)> = (0..n.div_ceil(ROWS_PER_JOB))
        .map(|k| (k * ROWS_PER_JOB, ((k + 1) * ROWS_PER_JOB).min(n)))
        .collect();
    let format = |batch: &[(u32, u32)]| -> Vec<(Vec<u8>, crc32fast::Hasher)> {
        batch
            .par_iter()
            .map(|&(a, b)| {
                let mut bytes = Vec::new();
                fmt(a, b, &mut bytes);
                let mut h = crc32fast::Hasher::new();
                h.update(&bytes);
                (bytes, h)
            })
            .collect()
    };
    let mut written: Vec<(Vec<u8>, crc32fast::Hasher)> = Vec::new();
    for batch in jobs.chunks(JOBS_PER_BATCH) {
        let mut next = Vec::new();
        let mut result = Ok(());
        rayon::in_place_scope(|s| {
            s.spawn(|_| next = format(batch));
            result = written.drain(..).try_for_each(|(bytes, h)| sink(&bytes, h));
        });
        result?;
        written = next;
    }
    written
        .into_iter()
        .try_for_each(|(bytes, h)| sink(&bytes, h))
}

/// Entries of rows `a..b`, from the row lengths `lens` (the size of a formatting job's
/// bytes, reserved at once rather than grown by copies).
fn entries(lens: &[u64], a: u32, b: u32) -> usize {
    lens[a as usize..b as usize].iter().sum::<u64>() as usize
}

/// Writes `g` as a SciPy CSR matrix in `.npz` form (see the module documentation).
pub fn write_npz<R: Rows + ?Sized>(out: &mut dyn Write, g: &R) -> std::io::Result<()> {
    let n = g.num_vertices();
    let lens: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|i| g.row_len(i) as u64)
        .collect();
    let nnz: u64 = lens.iter().sum();
    let max_w = g.max_weight();
    let wide_idx = nnz > i32::MAX as u64 || u64::from(n) > i32::MAX as u64;
    let (ptr_descr, ptr_size) = if wide_idx { ("<i8", 8) } else { ("<i4", 4) };
    // Column indices in uint16 while every TB id fits (up to 65,536 TBs): a third of the
    // bytes of the 25 M-edge GEMM's file, written, checksummed and copied to the page cache
    // in its time. SciPy's CSR constructor turns any integer index array into its own
    // index type on loading.
    let (idx_descr, idx_size) = if n <= 1 << 16 {
        ("<u2", 2)
    } else {
        (ptr_descr, ptr_size)
    };
    // The narrowest signed type that holds every weight: int16 halves the largest array of
    // the dense graphs (the 25 M-edge GEMM's weights are below 2^13).
    let (data_descr, data_size) = if max_w <= i16::MAX as u64 {
        ("<i2", 2)
    } else if max_w <= i32::MAX as u64 {
        ("<i4", 4)
    } else {
        ("<i8", 8)
    };
    let mut z = ZipWriter::new(out);

    let h = npz::npy_header(idx_descr, Some(nnz));
    z.start("indices.npy", h.len() as u64 + nnz * idx_size)?;
    z.write_small(&h)?;
    let lens = &lens;
    let fmt_idx = move |a: u32, b: u32, out: &mut Vec<u8>| {
        out.reserve(entries(lens, a, b) * idx_size as usize);
        for i in a..b {
            for (cols, _) in g.row(i) {
                put_ints(out, cols, idx_size as usize);
            }
        }
    };
    stream_rows(g, &fmt_idx, &mut |b, h| z.write(b, h))?;
    z.finish_entry()?;

    let h = npz::npy_header(ptr_descr, Some(u64::from(n) + 1));
    z.start("indptr.npy", h.len() as u64 + (u64::from(n) + 1) * ptr_size)?;
    let mut buf = h;
    let mut acc = 0u64;
    for l in std::iter::once(0).chain(lens.iter().copied()) {
        acc += l;
        if wide_idx {
            buf.extend_from_slice(&(acc as i64).to_le_bytes());
        } else {
            buf.extend_from_slice(&(acc as i32).to_le_bytes());
        }
    }
    z.write_small(&buf)?;
    z.finish_entry()?;

    let mut buf = npz::npy_header("|S3", None);
    buf.extend_from_slice(b"csr");
    z.start("format.npy", buf.len() as u64)?;
    z.write_small(&buf)?;
    z.finish_entry()?;

    let mut buf = npz::npy_header("<i8", Some(2));
    for _ in 0..2 {
        buf.extend_from_slice(&i64::from(n).to_le_bytes());
    }
    z.start("shape.npy", buf.len() as u64)?;
    z.write_small(&buf)?;
    z.finish_entry()?;

    let h = npz::npy_header(data_descr, Some(nnz));
    z.start("data.npy", h.len() as u64 + nnz * data_size)?;
    z.write_small(&h)?;
    let fmt_data = move |a: u32, b: u32, out: &mut Vec<u8>| {
        out.reserve(entries(lens, a, b) * data_size as usize);
        for i in a..b {
            for (_, ws) in g.row(i) {
                put_ints(out, ws, data_size as usize);
            }
        }
    };
    stream_rows(g, &fmt_data, &mut |b, h| z.write(b, h))?;
    z.finish()
}

/// Writes `g` as a METIS `.graph` file: header `n m 001` (edge weights), then one line per
/// vertex with its 1-based neighbours, each followed by the edge's weight.
pub fn write_metis<R: Rows + ?Sized>(out: &mut dyn Write, g: &R) -> std::io::Result<()> {
    let n = g.num_vertices();
    let entries: u64 = (0..n).into_par_iter().map(|i| g.row_len(i) as u64).sum();
    writeln!(out, "{n} {} 001", entries / 2)?;
    let fmt = move |a: u32, b: u32, out: &mut Vec<u8>| {
        let mut buf = itoa::Buffer::new();
        for i in a..b {
            let mut first = true;
            for (cols, ws) in g.row(i) {
                for (&c, &w) in cols.iter().zip(ws) {
                    if !first {
                        out.push(b' ');
                    }
                    first = false;
                    out.extend_from_slice(buf.format(u64::from(c) + 1).as_bytes());
                    out.push(b' ');
                    out.extend_from_slice(buf.format(w).as_bytes());
                }
            }
            out.push(b'\n');
        }
    };
    stream_rows(g, &fmt, &mut |b, _| out.write_all(b))?;
    out.flush()
}

/// Reads a graph file of either format, chosen by its first bytes (a ZIP archive is an
/// `.npz`; anything else is read as METIS text).
pub fn read_file(path: &Path) -> Result<Parsed> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })?;
    read_bytes(bytes)
}

/// A graph file's contents, of either format (see [`read_file`]).
pub fn read_bytes(bytes: Vec<u8>) -> Result<Parsed> {
    if bytes.starts_with(b"PK") {
        read_npz(&bytes)
    } else {
        let text = String::from_utf8(bytes).map_err(|e| Error::MetisFormat {
            line: 1,
            message: format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        })?;
        Graph::from_metis_str(&text)
    }
}

fn npz_err(message: impl Into<String>) -> Error {
    Error::Npz(message.into())
}

/// Reads a SciPy sparse matrix (`.npz` from `scipy.sparse.save_npz`) as an undirected graph.
pub fn read_npz(bytes: &[u8]) -> Result<Parsed> {
    let mut arrays: Vec<(String, Npy)> = Vec::new();
    for (name, data) in npz::read_zip(bytes).map_err(npz_err)? {
        let key = name.trim_end_matches(".npy").to_string();
        let a = npz::parse_npy(data).map_err(|m| npz_err(format!("{name}: {m}")))?;
        arrays.push((key, a));
    }
    let get = |key: &str| -> Result<&Npy> {
        arrays
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, a)| a)
            .ok_or_else(|| {
                npz_err(format!(
                    "no `{key}` array (not a scipy.sparse.save_npz file?)"
                ))
            })
    };
    let format = get("format")?
        .text()
        .ok_or_else(|| npz_err("`format` is not a string"))?;
    let shape = get("shape")?;
    let value = |a: &Npy, name: &str, k: usize| -> Result<u64> {
        a.get(k).map_err(|e| {
            npz_err(match e {
                BadValue::Negative(v) => format!("{name}[{k}] = {v} is negative"),
                BadValue::Fraction(v) => format!("{name}[{k}] = {v} is not a whole number"),
                BadValue::NotNumeric => format!("`{name}` is not numeric"),
            })
        })
    };
    if shape.len() != 2 {
        return Err(npz_err(format!(
            "`shape` has {} entries, expected 2",
            shape.len()
        )));
    }
    let (rows, cols) = (value(shape, "shape", 0)?, value(shape, "shape", 1)?);
    if rows != cols {
        return Err(npz_err(format!(
            "the matrix is {rows} x {cols}; a TB graph is square"
        )));
    }
    let n = u32::try_from(rows).map_err(|_| Error::TooManyTbs(rows))?;
    let data = get("data")?;
    let nnz = data.len();
    // Entries as (row, column) pairs of array positions.
    let mut triples: Vec<(u32, u32, u64)> = Vec::with_capacity(nnz);
    let check = |v: u64, what: &str, k: usize| -> Result<u32> {
        if v >= u64::from(n) {
            Err(npz_err(format!(
                "{what}[{k}] = {v} is out of range (the matrix is {n} x {n})"
            )))
        } else {
            Ok(v as u32)
        }
    };
    match format.as_str() {
        "csr" | "csc" => {
            let indptr = get("indptr")?;
            let indices = get("indices")?;
            if indptr.len() != n as usize + 1 {
                return Err(npz_err(format!(
                    "`indptr` has {} entries, expected {}",
                    indptr.len(),
                    n as usize + 1
                )));
            }
            if indices.len() != nnz {
                return Err(npz_err(format!(
                    "`indices` has {} entries but `data` has {nnz}",
                    indices.len()
                )));
            }
            let mut prev = 0u64;
            for r in 0..n as usize {
                let (a, b) = (value(indptr, "indptr", r)?, value(indptr, "indptr", r + 1)?);
                if a != prev || b < a || b > nnz as u64 {
                    return Err(npz_err(format!(
                        "`indptr` is not a valid offset array at position {r} ({a}, {b})"
                    )));
                }
                prev = b;
                for k in a as usize..b as usize {
                    let c = check(value(indices, "indices", k)?, "indices", k)?;
                    let w = value(data, "data", k)?;
                    if format == "csr" {
                        triples.push((r as u32, c, w));
                    } else {
                        triples.push((c, r as u32, w));
                    }
                }
            }
        }
        "coo" => {
            let (row, col) = (get("row")?, get("col")?);
            if row.len() != nnz || col.len() != nnz {
                return Err(npz_err(format!(
                    "`row`, `col` and `data` differ in length ({}, {}, {nnz})",
                    row.len(),
                    col.len()
                )));
            }
            for k in 0..nnz {
                let r = check(value(row, "row", k)?, "row", k)?;
                let c = check(value(col, "col", k)?, "col", k)?;
                triples.push((r, c, value(data, "data", k)?));
            }
        }
        f => {
            return Err(npz_err(format!(
                "sparse format `{f}` is not supported (csr, csc or coo; convert with .tocsr())"
            )))
        }
    }
    from_matrix_entries(n, &triples)
}

/// The undirected graph of a symmetric (or triangular) matrix given as entries.
fn from_matrix_entries(n: u32, entries: &[(u32, u32, u64)]) -> Result<Parsed> {
    let mut notes = Vec::new();
    let diagonal = entries.iter().filter(|e| e.0 == e.1 && e.2 > 0).count();
    if diagonal > 0 {
        notes.push(format!("{diagonal} diagonal entries (self loops) ignored"));
    }
    let upper = || entries.iter().filter(|e| e.0 < e.1).copied();
    let lower = || {
        entries
            .iter()
            .filter(|e| e.0 > e.1)
            .map(|&(i, j, w)| (j, i, w))
    };
    let has_upper = upper().any(|e| e.2 > 0);
    let has_lower = lower().any(|e| e.2 > 0);
    let graph = match (has_upper, has_lower) {
        (true, true) => {
            let up = Graph::from_checked_edges(n, upper());
            let low = Graph::from_checked_edges(n, lower());
            if up != low {
                let mismatch = up
                    .edges()
                    .map(|(i, j, w)| (i, j, w, low.weight(i, j)))
                    .chain(low.edges().map(|(i, j, w)| (j, i, up.weight(i, j), w)))
                    .find(|&(_, _, a, b)| a != b);
                let (i, j, a, b) = mismatch.unwrap_or((0, 0, 0, 0));
                return Err(npz_err(format!(
                    "the matrix is not symmetric: entry ({i}, {j}) is {a} but ({j}, {i}) is {b}"
                )));
            }
            up
        }
        (true, false) => {
            notes.push("upper-triangular matrix: read as the undirected graph".into());
            Graph::from_checked_edges(n, upper())
        }
        (false, true) => {
            notes.push("lower-triangular matrix: read as the undirected graph".into());
            Graph::from_checked_edges(n, lower())
        }
        (false, false) => Graph::empty(n),
    };
    Ok(Parsed { graph, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Graph {
        Graph::from_edges(5, &[(0, 1, 3), (1, 2, 1), (0, 4, 7), (3, 4, 1 << 20)]).unwrap()
    }

    #[test]
    fn npz_roundtrip() {
        let g = sample();
        let mut buf = Vec::new();
        write_npz(&mut buf, &g).unwrap();
        let p = read_npz(&buf).unwrap();
        assert_eq!(p.graph, g);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn npz_arrays_are_scipy_csr() {
        // Worked by hand from the sample: rows 0: [1, 4], 1: [0, 2], 2: [1], 3: [4], 4: [0, 3].
        let mut buf = Vec::new();
        write_npz(&mut buf, &sample()).unwrap();
        let entries = npz::read_zip(&buf).unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "indices.npy",
                "indptr.npy",
                "format.npy",
                "shape.npy",
                "data.npy"
            ]
        );
        let arr = |k: usize| npz::parse_npy(entries[k].1.clone()).unwrap();
        let vals = |a: &Npy| (0..a.len()).map(|k| a.get(k).unwrap()).collect::<Vec<_>>();
        assert_eq!(vals(&arr(0)), [1, 4, 0, 2, 1, 4, 0, 3]);
        assert_eq!(vals(&arr(1)), [0, 2, 4, 5, 6, 8]);
        assert_eq!(arr(2).text().as_deref(), Some("csr"));
        assert_eq!(vals(&arr(3)), [5, 5]);
        assert_eq!(vals(&arr(4)), [3, 7, 3, 1, 1, 1 << 20, 7, 1 << 20]);
        assert_eq!(
            arr(0).kind,
            npz::Kind::UInt(2),
            "indices of 5 vertices: uint16"
        );
        assert_eq!(arr(1).kind, npz::Kind::Int(4), "indptr: int32");
    }

    /// Indices are uint16 up to 65,536 vertices (the last id 65,535) and int32 past it.
    #[test]
    fn npz_index_type_follows_the_vertex_count() {
        for (n, kind) in [
            (1u32 << 16, npz::Kind::UInt(2)),
            ((1 << 16) + 1, npz::Kind::Int(4)),
        ] {
            let g = Graph::from_edges(n, &[(0, n - 1, 2), (5, n - 2, 1)]).unwrap();
            let mut buf = Vec::new();
            write_npz(&mut buf, &g).unwrap();
            let entries = npz::read_zip(&buf).unwrap();
            let indices = npz::parse_npy(entries[0].1.clone()).unwrap();
            assert_eq!(indices.kind, kind, "{n} vertices");
            // Rows 0 and 5 come first: their neighbours n - 1 and n - 2.
            assert_eq!(indices.get(0).unwrap(), u64::from(n - 1));
            assert_eq!(indices.get(1).unwrap(), u64::from(n - 2));
            assert_eq!(read_npz(&buf).unwrap().graph, g);
        }
    }

    #[test]
    fn metis_written_reads_back() {
        let g = sample();
        let mut buf = Vec::new();
        write_metis(&mut buf, &g).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(
            text,
            "5 4 001\n2 3 5 7\n1 3 3 1\n2 1\n5 1048576\n1 7 4 1048576\n"
        );
        assert_eq!(Graph::from_metis_str(&text).unwrap().graph, g);
    }

    #[test]
    fn triangular_and_asymmetric_matrices() {
        let p = from_matrix_entries(3, &[(0, 1, 2), (1, 2, 5), (2, 2, 9)]).unwrap();
        assert_eq!(p.graph.weight(1, 0), 2);
        assert_eq!(p.notes.len(), 2, "{:?}", p.notes);
        let e = from_matrix_entries(3, &[(0, 1, 2), (1, 0, 3)]).unwrap_err();
        assert!(e.to_string().contains("(0, 1) is 2 but (1, 0) is 3"), "{e}");
    }
}
