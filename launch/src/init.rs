//! Buffer initialisers: the `init` strings of a launch description (`zeros`, `rand(1)`,
//! `csr_row_ptr(…)`, …), their parsing, and turning them into bytes.
//!
//! Every generator is deterministic: the same initialiser gives the same bytes on every
//! machine, because later stages (dynamic footprints, simulation statistics) must be
//! byte-reproducible.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::elem::ElemType;
use crate::LaunchError;

/// How a buffer's initial contents are made.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// All elements zero.
    Zeros,
    /// All elements one (1 for integers, 1.0 for floats).
    Ones,
    /// Element `i` holds `i` (converted to the element type; every index must be a value of
    /// the type, so a `u8` buffer takes at most 256 elements).
    Iota,
    /// All elements hold the value.
    Fill(f64),
    /// All elements zero except element `index`, which is one.
    OneHot(u64),
    /// Seeded uniform random values in `[lo, hi)`; default `[0, 1)` for floats and
    /// `[0, 256)` for integers (`[0, 128)` for `i8`, the values it holds).
    Rand {
        /// SplitMix64 seed.
        seed: u64,
        /// Optional `[lo, hi)` range.
        range: Option<(f64, f64)>,
    },
    /// Raw little-endian elements read from a file (relative to the launch file's folder).
    File(PathBuf),
    /// Row pointers (`rows + 1` entries) of the seeded random CSR matrix described by `csr`.
    CsrRowPtr(CsrSpec),
    /// Column indices (`nnz` entries) of the seeded random CSR matrix described by `csr`.
    CsrColIdx(CsrSpec),
    /// Offsets: element 0 is 0, element `i + 1` is element `i` plus a seeded uniform
    /// integer in `[lo, hi)` (the exclusive prefix sum of random counts: the start of each
    /// segment of a scan, a bucket sort, a ragged array).
    PrefixSum {
        /// SplitMix64 seed.
        seed: u64,
        /// Smallest increment.
        lo: u64,
        /// One past the largest increment.
        hi: u64,
    },
    /// A singly linked list through every element, as indices: it starts at element 0 and
    /// visits the others in a seeded random order; each element holds the index of the
    /// next, the last holds `end` (-1 by default).
    LinkedList {
        /// SplitMix64 seed.
        seed: u64,
        /// What the last element holds.
        end: i64,
    },
}

/// A seeded random sparse matrix (or graph) in CSR form: each row has a random number of
/// distinct, sorted column indices, averaging `avg_nnz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsrSpec {
    /// Number of rows (graph nodes).
    pub rows: u64,
    /// Number of columns.
    pub cols: u64,
    /// Mean number of non-zeros per row; row degrees are uniform in `0..=2*avg_nnz`.
    pub avg_nnz: u64,
    /// SplitMix64 seed.
    pub seed: u64,
}

/// Largest CSR matrix the generator accepts, in rows and columns (keeps bad input from
/// exhausting memory before the buffer-size check can run, and bounds the time counting the
/// non-zeros takes: one draw per row, about a second for 2^28 rows).
const CSR_MAX_ROWS: u64 = 1 << 28;

impl CsrSpec {
    /// Generates the matrix: the row pointers (`rows + 1` values) and column indices.
    pub fn generate(&self) -> (Vec<u64>, Vec<u64>) {
        let mut row_ptr = Vec::with_capacity(self.rows as usize + 1);
        let mut col_idx = Vec::new();
        row_ptr.push(0);
        self.for_each_row(|cols| {
            col_idx.extend(cols);
            row_ptr.push(col_idx.len() as u64);
        });
        (row_ptr, col_idx)
    }

    /// Calls `row` with each row's sorted column indices, in row order, keeping only one
    /// row in memory (the buffers are written from it directly).
    pub fn for_each_row(&self, mut row: impl FnMut(&BTreeSet<u64>)) {
        let mut rng = SplitMix64::new(self.seed);
        let max_deg = self.avg_nnz.saturating_mul(2).saturating_add(1);
        let mut picked = BTreeSet::new();
        for _ in 0..self.rows {
            let deg = (rng.next_u64() % max_deg).min(self.cols);
            // Floyd's algorithm: `deg` distinct values of 0..cols with `deg` draws.
            picked.clear();
            for j in (self.cols - deg)..self.cols {
                let t = rng.next_u64() % (j + 1);
                if !picked.insert(t) {
                    picked.insert(j);
                }
            }
            row(&picked);
        }
    }

    /// Number of non-zeros, without generating the column indices: one draw per row, the
    /// row's `deg` column draws skipped in O(1) ([`SplitMix64::skip`]).
    pub fn nnz(&self) -> u64 {
        let mut rng = SplitMix64::new(self.seed);
        let max_deg = self.avg_nnz.saturating_mul(2).saturating_add(1);
        let mut nnz = 0u64;
        for _ in 0..self.rows {
            let deg = (rng.next_u64() % max_deg).min(self.cols);
            rng.skip(deg);
            nnz = nnz.saturating_add(deg);
        }
        nnz
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and fully specified, so the data a seed
/// produces can be reproduced by anyone from the docs.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Advances the generator by `n` outputs without computing them (the state is a
    /// counter advanced by a constant per output).
    pub fn skip(&mut self, n: u64) {
        self.0 = self.0.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }

    /// A uniform double in `[0, 1)` from the top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

impl Init {
    /// Parses an initialiser string such as `rand(7,-1,1)` or `file(data/a.bin)`.
    pub fn parse(text: &str) -> Result<Init, LaunchError> {
        let bad = |why: &str| LaunchError::BadInit {
            text: crate::budget::elide(text, 80),
            why: why.to_string(),
        };
        let t = text.trim();
        let (name, args) = match t.find('(') {
            None => (t, None),
            Some(open) => {
                if !t.ends_with(')') {
                    return Err(bad("missing closing ')'"));
                }
                (&t[..open], Some(&t[open + 1..t.len() - 1]))
            }
        };
        let nums = |n_min: usize, n_max: usize| -> Result<Vec<f64>, LaunchError> {
            let a = args.ok_or_else(|| bad("expected arguments in parentheses"))?;
            let v: Result<Vec<f64>, _> = a.split(',').map(|s| parse_number(s.trim())).collect();
            let v = v.map_err(|_| bad("arguments must be numbers"))?;
            if v.len() < n_min || v.len() > n_max {
                return Err(bad(&format!(
                    "expected {} argument{}",
                    if n_min == n_max {
                        n_min.to_string()
                    } else {
                        format!("{n_min} to {n_max}")
                    },
                    if n_max == 1 { "" } else { "s" }
                )));
            }
            Ok(v)
        };
        let uint = |x: f64, what: &str| -> Result<u64, LaunchError> {
            if x < 0.0 || x.fract() != 0.0 || x > u64::MAX as f64 {
                Err(bad(&format!("{what} must be a non-negative integer")))
            } else {
                Ok(x as u64)
            }
        };
        let no_args = |init: Init| {
            if args.is_some() {
                Err(bad("takes no arguments"))
            } else {
                Ok(init)
            }
        };
        match name {
            "zeros" => no_args(Init::Zeros),
            "ones" => no_args(Init::Ones),
            "iota" => no_args(Init::Iota),
            "fill" => Ok(Init::Fill(nums(1, 1)?[0])),
            "onehot" => Ok(Init::OneHot(uint(nums(1, 1)?[0], "index")?)),
            "rand" => {
                let v = nums(1, 3)?;
                let seed = uint(v[0], "seed")?;
                let range = match v.len() {
                    1 => None,
                    3 if v[1] < v[2] => Some((v[1], v[2])),
                    3 => return Err(bad("range must have LO < HI")),
                    _ => return Err(bad("expected rand(SEED) or rand(SEED,LO,HI)")),
                };
                Ok(Init::Rand { seed, range })
            }
            "file" => {
                let a = args.ok_or_else(|| bad("expected file(PATH)"))?.trim();
                if a.is_empty() {
                    return Err(bad("empty path"));
                }
                Ok(Init::File(PathBuf::from(a)))
            }
            "csr_row_ptr" | "csr_col_idx" => {
                let v = nums(4, 4)?;
                let spec = CsrSpec {
                    rows: uint(v[0], "ROWS")?,
                    cols: uint(v[1], "COLS")?,
                    avg_nnz: uint(v[2], "AVG_NNZ")?,
                    seed: uint(v[3], "SEED")?,
                };
                if spec.rows > CSR_MAX_ROWS || spec.cols > CSR_MAX_ROWS {
                    return Err(bad("ROWS and COLS must be at most 2^28 (268435456)"));
                }
                if spec.avg_nnz > spec.cols.max(1) {
                    return Err(bad("AVG_NNZ must not exceed COLS"));
                }
                Ok(if name == "csr_row_ptr" {
                    Init::CsrRowPtr(spec)
                } else {
                    Init::CsrColIdx(spec)
                })
            }
            "prefix_sum" => {
                let v = nums(3, 3)?;
                let (seed, lo, hi) = (uint(v[0], "SEED")?, uint(v[1], "LO")?, uint(v[2], "HI")?);
                if lo >= hi {
                    return Err(bad("prefix_sum(SEED,LO,HI) needs LO < HI"));
                }
                Ok(Init::PrefixSum { seed, lo, hi })
            }
            "linked_list" => {
                let v = nums(1, 2)?;
                let seed = uint(v[0], "SEED")?;
                let end = match v.get(1) {
                    None => -1,
                    Some(&e) if e.fract() == 0.0 && e.abs() < 2f64.powi(63) => e as i64,
                    Some(_) => return Err(bad("END must be an integer")),
                };
                Ok(Init::LinkedList { seed, end })
            }
            _ => Err(bad(
                "unknown initialiser (expected zeros, ones, iota, fill(V), onehot(I), rand(SEED[,LO,HI]), file(PATH), csr_row_ptr(R,C,AVG,SEED), csr_col_idx(R,C,AVG,SEED), prefix_sum(SEED,LO,HI) or linked_list(SEED[,END]))",
            )),
        }
    }

    /// The number of elements this initialiser implies by itself, if any (CSR generators).
    pub fn implied_len(&self) -> Option<u64> {
        match self {
            Init::CsrRowPtr(s) => Some(s.rows + 1),
            Init::CsrColIdx(s) => Some(s.nnz()),
            _ => None,
        }
    }

    /// Checks, without making the buffer, that this initialiser gives `len` elements of `ty`
    /// exactly: every value it generates is a value of `ty` (nothing wraps, saturates or
    /// loses a fraction), `onehot`'s index is inside the buffer, and a `file(…)` (relative to
    /// `base_dir`) is a regular file of exactly the buffer's size. The error says why, in
    /// terms of the initialiser as written.
    pub fn check(&self, ty: ElemType, len: u64, base_dir: &Path) -> Result<(), LaunchError> {
        let bad = |why: String| LaunchError::BadInit {
            text: crate::budget::elide(&self.to_string(), 200),
            why,
        };
        match self {
            Init::Zeros | Init::Ones => Ok(()),
            Init::Iota if len > 0 => ty
                .check_int(i128::from(len - 1))
                .map_err(|e| bad(format!("element {} would be {e}", len - 1))),
            Init::Iota => Ok(()),
            Init::Fill(v) => ty.check_f64(*v).map_err(bad),
            Init::OneHot(i) if *i >= len => Err(bad(format!(
                "index {i} is outside a buffer of {len} elements"
            ))),
            Init::OneHot(_) => Ok(()),
            Init::Rand { range, .. } => {
                let (lo, hi) = int_rand_range(ty, *range);
                match (ty.is_float(), range) {
                    (true, Some((lo, hi))) => ty
                        .check_f64(*lo)
                        .and_then(|()| ty.check_f64(*hi))
                        .map_err(bad),
                    (true, None) => Ok(()),
                    (false, _) => ty
                        .check_int(lo)
                        .and_then(|()| ty.check_int(hi - 1))
                        .map_err(|e| bad(format!("the range [{lo}, {hi}) of integers: {e}"))),
                }
            }
            Init::File(path) => {
                let full = base_dir.join(path);
                let meta = std::fs::metadata(&full).map_err(|e| LaunchError::Io {
                    path: full.clone(),
                    message: e.to_string(),
                })?;
                if !meta.is_file() {
                    return Err(LaunchError::Io {
                        path: full,
                        message: "not a regular file (file(…) reads the raw elements of a file)"
                            .into(),
                    });
                }
                let bytes = len.saturating_mul(ty.size() as u64);
                if meta.len() != bytes {
                    return Err(LaunchError::FileSize {
                        path: full,
                        expected: bytes,
                        found: meta.len(),
                    });
                }
                Ok(())
            }
            Init::CsrRowPtr(spec) => ty.check_int(i128::from(spec.nnz())).map_err(|e| {
                bad(format!(
                    "the last row pointer (the number of non-zeros): {e}"
                ))
            }),
            Init::CsrColIdx(spec) if spec.cols > 0 => ty
                .check_int(i128::from(spec.cols - 1))
                .map_err(|e| bad(format!("the largest column index: {e}"))),
            Init::CsrColIdx(_) => Ok(()),
            Init::PrefixSum { .. } => {
                let last = self.prefix_sums(len).last().unwrap_or(0);
                ty.check_int(i128::from(last))
                    .map_err(|e| bad(format!("the last offset: {e}")))
            }
            Init::LinkedList { end, .. } => ty
                .check_int(i128::from(*end))
                .and_then(|()| ty.check_int(i128::from(len.saturating_sub(1))))
                .map_err(|e| bad(format!("an index or the end marker: {e}"))),
        }
    }

    /// The values of [`Init::PrefixSum`] for `len` elements (empty for other initialisers).
    fn prefix_sums(&self, len: u64) -> impl Iterator<Item = u64> + '_ {
        let (mut rng, lo, span) = match *self {
            Init::PrefixSum { seed, lo, hi } => (SplitMix64::new(seed), lo, hi - lo),
            _ => (SplitMix64::new(0), 0, 1),
        };
        let n = if matches!(self, Init::PrefixSum { .. }) {
            len
        } else {
            0
        };
        let mut at = 0u64;
        (0..n).map(move |i| {
            if i > 0 {
                at = at.saturating_add(lo + rng.next_u64() % span);
            }
            at
        })
    }

    /// The successor of each element in [`Init::LinkedList`]'s list of `n` elements: the
    /// order is 0 followed by a Fisher-Yates shuffle of `1..n` (for `i` from `n - 1` down to
    /// 2: `j = 1 + x mod i`, swap the `i`-th and `j`-th), and `None` ends the list.
    fn linked_list(seed: u64, n: usize) -> Vec<Option<u64>> {
        let mut order: Vec<u64> = (0..n as u64).collect();
        let mut rng = SplitMix64::new(seed);
        for i in (2..n).rev() {
            let j = 1 + (rng.next_u64() % i as u64) as usize;
            order.swap(i, j);
        }
        let mut next = vec![None; n];
        for w in order.windows(2) {
            next[w[0] as usize] = Some(w[1]);
        }
        next
    }

    /// Makes the buffer's bytes: `len` elements of `ty`, little-endian. Runs
    /// [`Init::check`] first, so every value is exact.
    ///
    /// `base_dir` resolves relative `file(…)` paths.
    pub fn materialise(
        &self,
        ty: ElemType,
        len: u64,
        base_dir: &Path,
    ) -> Result<Vec<u8>, LaunchError> {
        let n = usize::try_from(len).map_err(|_| LaunchError::TooLarge { bytes: u64::MAX })?;
        let bytes = len
            .checked_mul(ty.size() as u64)
            .ok_or(LaunchError::TooLarge { bytes: u64::MAX })?;
        // CSR generators check their values while generating (their check counts nnz).
        if !matches!(self, Init::CsrRowPtr(_) | Init::CsrColIdx(_)) {
            self.check(ty, len, base_dir)?;
        }
        let mut out = Vec::new();
        out.try_reserve_exact(bytes as usize)
            .map_err(|_| LaunchError::TooLarge { bytes })?;
        match self {
            Init::Zeros => out.resize(bytes as usize, 0),
            Init::Ones => (0..n).for_each(|_| ty.push_f64(&mut out, 1.0)),
            Init::Iota => (0..len).for_each(|i| ty.push_u64(&mut out, i)),
            Init::Fill(v) => (0..n).for_each(|_| ty.push_f64(&mut out, *v)),
            Init::OneHot(i) => {
                if *i >= len {
                    return Err(LaunchError::BadInit {
                        text: format!("onehot({i})"),
                        why: format!("index out of range for a buffer of {len} elements"),
                    });
                }
                out.resize(bytes as usize, 0);
                let mut one = Vec::new();
                ty.push_f64(&mut one, 1.0);
                let at = *i as usize * ty.size();
                out[at..at + ty.size()].copy_from_slice(&one);
            }
            Init::Rand { seed, range } => {
                let mut rng = SplitMix64::new(*seed);
                if ty.is_float() {
                    let (lo, hi) = range.unwrap_or((0.0, 1.0));
                    let mut next = || lo + (hi - lo) * rng.next_f64();
                    // The paper launches' matrices are tens of millions of random floats:
                    // the element type is matched once and each value written in place,
                    // not through `push_f64`'s match and capacity check per element (a
                    // third of a short simulation's instructions). Same bytes.
                    match ty {
                        ElemType::F32 => {
                            out.resize(bytes as usize, 0);
                            for c in out.chunks_exact_mut(4) {
                                c.copy_from_slice(&(next() as f32).to_le_bytes());
                            }
                        }
                        ElemType::F64 => {
                            out.resize(bytes as usize, 0);
                            for c in out.chunks_exact_mut(8) {
                                c.copy_from_slice(&next().to_le_bytes());
                            }
                        }
                        _ => (0..n).for_each(|_| ty.push_f64(&mut out, next())),
                    }
                } else {
                    let (lo, hi) = int_rand_range(ty, *range);
                    let span = (hi - lo).max(1) as u128;
                    for _ in 0..n {
                        let v = lo + (rng.next_u64() as u128 % span) as i128;
                        ty.push_u64(&mut out, v as u64);
                    }
                }
            }
            Init::File(path) => {
                let full = base_dir.join(path);
                // Checked above: a regular file of `bytes` bytes; read no more than that even
                // if it grew since.
                let data =
                    crate::budget::read_input(&full, bytes).map_err(|message| LaunchError::Io {
                        path: full.clone(),
                        message,
                    })?;
                if data.len() as u64 != bytes {
                    return Err(LaunchError::FileSize {
                        path: full,
                        expected: bytes,
                        found: data.len() as u64,
                    });
                }
                out = data;
            }
            Init::CsrRowPtr(spec) => {
                check_len(self, len, spec.rows.saturating_add(1))?;
                let nnz = spec.nnz();
                ty.check_int(i128::from(nnz))
                    .map_err(|e| LaunchError::BadInit {
                        text: self.to_string(),
                        why: format!("the last row pointer (the number of non-zeros): {e}"),
                    })?;
                ty.push_u64(&mut out, 0);
                let mut at = 0u64;
                spec.for_each_row(|cols| {
                    at += cols.len() as u64;
                    ty.push_u64(&mut out, at);
                });
            }
            Init::CsrColIdx(spec) => {
                self.check(ty, len, base_dir)?;
                check_len(self, len, spec.nnz())?;
                spec.for_each_row(|cols| cols.iter().for_each(|&v| ty.push_u64(&mut out, v)));
            }
            Init::PrefixSum { .. } => self.prefix_sums(len).for_each(|v| ty.push_u64(&mut out, v)),
            Init::LinkedList { seed, end } => {
                for next in Init::linked_list(*seed, n) {
                    ty.push_u64(&mut out, next.unwrap_or(*end as u64));
                }
            }
        }
        Ok(out)
    }
}

/// The integers `rand` draws for an integer buffer, `[lo, hi)`: the range as written
/// rounded up to integers (`rand(1,0.5,3)` draws 1 and 2), by default `[0, 256)` cut to the
/// type (`[0, 128)` for `i8`).
fn int_rand_range(ty: ElemType, range: Option<(f64, f64)>) -> (i128, i128) {
    match range {
        Some((lo, hi)) => (lo.ceil() as i128, hi.ceil() as i128),
        None => {
            let max = ty.int_range().map_or(255, |r| r.1);
            (0, 256.min(max + 1))
        }
    }
}

fn check_len(init: &Init, len: u64, generated: u64) -> Result<(), LaunchError> {
    if len != generated {
        return Err(LaunchError::BadInit {
            text: init.to_string(),
            why: format!("generates {generated} elements but the buffer has {len}"),
        });
    }
    Ok(())
}

/// Parses a decimal or `0x` hexadecimal number (integers exactly up to 2^53).
pub(crate) fn parse_number(s: &str) -> Result<f64, ()> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).map_err(|_| ())? as f64
    } else {
        body.parse::<f64>().map_err(|_| ())?
    };
    if !v.is_finite() {
        return Err(());
    }
    Ok(if neg { -v } else { v })
}

impl fmt::Display for Init {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Init::Zeros => write!(f, "zeros"),
            Init::Ones => write!(f, "ones"),
            Init::Iota => write!(f, "iota"),
            Init::Fill(v) => write!(f, "fill({v})"),
            Init::OneHot(i) => write!(f, "onehot({i})"),
            Init::Rand { seed, range: None } => write!(f, "rand({seed})"),
            Init::Rand {
                seed,
                range: Some((lo, hi)),
            } => write!(f, "rand({seed},{lo},{hi})"),
            Init::File(p) => write!(f, "file({})", p.display()),
            Init::CsrRowPtr(s) => write!(
                f,
                "csr_row_ptr({},{},{},{})",
                s.rows, s.cols, s.avg_nnz, s.seed
            ),
            Init::CsrColIdx(s) => write!(
                f,
                "csr_col_idx({},{},{},{})",
                s.rows, s.cols, s.avg_nnz, s.seed
            ),
            Init::PrefixSum { seed, lo, hi } => write!(f, "prefix_sum({seed},{lo},{hi})"),
            Init::LinkedList { seed, end: -1 } => write!(f, "linked_list({seed})"),
            Init::LinkedList { seed, end } => write!(f, "linked_list({seed},{end})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(init: &str, ty: ElemType, len: u64) -> Vec<i64> {
        let bytes = Init::parse(init)
            .unwrap()
            .materialise(ty, len, Path::new("."))
            .unwrap();
        bytes
            .chunks_exact(ty.size())
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                let v = i64::from_le_bytes(b);
                let sh = 64 - 8 * c.len() as u32;
                if ty.is_signed_int() {
                    (v << sh) >> sh
                } else {
                    v
                }
            })
            .collect()
    }

    #[test]
    fn prefix_sums_are_offsets() {
        let v = ints("prefix_sum(7,2,5)", ElemType::I32, 1000);
        assert_eq!(v[0], 0);
        for w in v.windows(2) {
            assert!((2..5).contains(&(w[1] - w[0])), "{w:?}");
        }
        // Round trip and the same values for the same seed.
        assert_eq!(
            Init::parse("prefix_sum(7,2,5)").unwrap().to_string(),
            "prefix_sum(7,2,5)"
        );
        assert_eq!(v, ints("prefix_sum(7,2,5)", ElemType::I64, 1000));
        // The last offset must fit: 200 increments of at least 2 pass 255.
        let e = Init::parse("prefix_sum(1,2,3)")
            .unwrap()
            .check(ElemType::U8, 200, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the last offset") && e.contains("does not fit in u8"),
            "{e}"
        );
        assert!(Init::parse("prefix_sum(1,3,3)").is_err());
    }

    #[test]
    fn a_linked_list_visits_every_element_once_from_element_0() {
        for (init, end) in [("linked_list(3)", -1), ("linked_list(3,1000)", 1000)] {
            let next = ints(init, ElemType::I32, 1000);
            let (mut at, mut seen) = (0i64, vec![false; 1000]);
            for _ in 0..1000 {
                assert!(!seen[at as usize], "{at} visited twice");
                seen[at as usize] = true;
                at = next[at as usize];
            }
            assert_eq!(at, end);
            assert!(seen.iter().all(|&s| s));
            assert_eq!(Init::parse(init).unwrap().to_string(), init);
        }
        // -1 needs a signed type.
        let e = Init::parse("linked_list(3)")
            .unwrap()
            .check(ElemType::U32, 10, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains("end marker"), "{e}");
    }

    #[test]
    fn splitmix_reference_values() {
        // Reference outputs of SplitMix64 seeded with 0 (the published test vector of the
        // algorithm's C reference implementation).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
        let mut s = SplitMix64::new(0);
        s.skip(2);
        assert_eq!(s.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn parse_and_display_round_trip() {
        for s in [
            "zeros",
            "ones",
            "iota",
            "fill(2.5)",
            "onehot(3)",
            "rand(7)",
            "rand(7,-1,1)",
            "file(data/x.bin)",
            "csr_row_ptr(10,10,3,1)",
            "csr_col_idx(10,12,3,1)",
        ] {
            let init = Init::parse(s).unwrap();
            assert_eq!(init.to_string(), s);
            assert_eq!(Init::parse(&init.to_string()).unwrap(), init);
        }
    }

    #[test]
    fn parse_errors_say_why() {
        for (s, why) in [
            ("zero", "unknown initialiser"),
            ("rand", "expected arguments"),
            ("rand(1,2)", "expected rand(SEED)"),
            ("rand(1,5,2)", "LO < HI"),
            ("rand(-1)", "non-negative"),
            ("zeros(3)", "takes no arguments"),
            ("fill(1", "missing closing"),
            ("csr_row_ptr(4,4,9,1)", "AVG_NNZ"),
            ("file()", "empty path"),
        ] {
            let e = Init::parse(s).unwrap_err().to_string();
            assert!(e.contains(why), "{s}: {e}");
        }
    }

    #[test]
    fn csr_is_consistent_and_matches_nnz() {
        let spec = CsrSpec {
            rows: 200,
            cols: 50,
            avg_nnz: 6,
            seed: 9,
        };
        let (rp, ci) = spec.generate();
        assert_eq!(rp.len(), 201);
        assert_eq!(*rp.last().unwrap(), ci.len() as u64);
        assert_eq!(spec.nnz(), ci.len() as u64);
        // Materialised buffers hold the same values as `generate`.
        let d = Path::new(".");
        let rp_bytes = Init::CsrRowPtr(spec)
            .materialise(ElemType::U32, 201, d)
            .unwrap();
        let want: Vec<u8> = rp.iter().flat_map(|&v| (v as u32).to_le_bytes()).collect();
        assert_eq!(rp_bytes, want);
        let ci_bytes = Init::CsrColIdx(spec)
            .materialise(ElemType::U64, ci.len() as u64, d)
            .unwrap();
        let want: Vec<u8> = ci.iter().flat_map(|&v| v.to_le_bytes()).collect();
        assert_eq!(ci_bytes, want);
        for r in 0..200 {
            let row = &ci[rp[r] as usize..rp[r + 1] as usize];
            assert!(
                row.windows(2).all(|w| w[0] < w[1]),
                "row {r} sorted and distinct"
            );
            assert!(row.iter().all(|&c| c < 50));
            assert!(row.len() <= 13);
        }
        // Mean degree close to the requested one (200 rows, uniform 0..=12: sd of mean ~0.27).
        let mean = ci.len() as f64 / 200.0;
        assert!((mean - 6.0).abs() < 1.2, "mean degree {mean}");
    }

    #[test]
    fn materialise_values() {
        let d = Path::new(".");
        let b = Init::Iota.materialise(ElemType::I32, 4, d).unwrap();
        assert_eq!(b, [0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
        let b = Init::Ones.materialise(ElemType::F32, 2, d).unwrap();
        assert_eq!(b, [0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f]);
        let b = Init::OneHot(1).materialise(ElemType::U16, 3, d).unwrap();
        assert_eq!(b, [0, 0, 1, 0, 0, 0]);
        let b = Init::Rand {
            seed: 3,
            range: Some((-2.0, 2.0)),
        }
        .materialise(ElemType::F64, 1000, d)
        .unwrap();
        let vals: Vec<f64> = b
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert!(vals.iter().all(|v| (-2.0..2.0).contains(v)));
        assert!(vals.iter().any(|v| *v < -1.5) && vals.iter().any(|v| *v > 1.5));
        let b = Init::Rand {
            seed: 3,
            range: Some((10.0, 13.0)),
        }
        .materialise(ElemType::U8, 300, d)
        .unwrap();
        assert!(b.iter().all(|v| (10..13).contains(v)));
        assert!((10..13).all(|v| b.contains(&v)));
    }

    #[test]
    fn file_size_must_match() {
        let dir = std::env::temp_dir().join(format!("paver-launch-init-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.bin"), [1u8, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let init = Init::File("a.bin".into());
        assert_eq!(
            init.materialise(ElemType::U32, 2, &dir).unwrap(),
            [1, 2, 3, 4, 5, 6, 7, 8]
        );
        let e = init
            .materialise(ElemType::U32, 3, &dir)
            .unwrap_err()
            .to_string();
        assert!(e.contains("12 bytes") && e.contains("8"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
