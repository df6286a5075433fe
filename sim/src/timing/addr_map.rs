//! Address mapping: which L2 slice (memory sub-partition) holds a line, and which set of a
//! cache holds it, from hashed line-address bits as GPUs and GPGPU-Sim do it.
//!
//! Everything works on the *line number* `L = address / line_bytes` (128 B lines in every
//! shipped configuration, so the four 32 B sectors of a line stay together).
//!
//! * Slice ([`SliceMap`]), GPGPU-Sim `-gpgpu_memory_partition_indexing`: `linear` is
//!   `L mod S` (GPGPU-Sim `0`, consecutive). `ipoly` follows GPGPU-Sim `2` (IPOLY,
//!   `src/gpgpu-sim/addrdec.cc` + `hashing.cc`): the line number as a GF(2) polynomial modulo
//!   an irreducible polynomial (Rau, "Pseudo-randomly interleaved memory", ISCA 1991), which
//!   is conflict-free for every power-of-two stride. Every shipped slice count is not a power
//!   of two (12, 24, 48, 80 = `m * 2^k`, `m` = 3 or 5): the IPOLY value gives the `2^k` part
//!   and a hash of the higher line bits the odd part `m`. (GPGPU-Sim `2` and `6`,
//!   "IPOLY_Modulo", hash into the next power of two and take the result modulo S, which gives
//!   some slices twice the lines of others.)
//! * Set ([`SetMap`]), GPGPU-Sim `set_index_function`: `linear` (`L`), `xor` (`X`, GPGPU-Sim
//!   `bitwise_hash_function`), `ipoly` (`P`) and `fermi` (`H`, the Fermi L1 hash of Nugteren
//!   et al., "A Detailed GPU Cache Model Based on Reuse Distance Theory", HPCA 2014). In an L2
//!   slice the set function sees the line number with the slice choice taken out (GPGPU-Sim's
//!   L2 indexes the partition address likewise), so the set never re-uses the bits that chose
//!   the slice; with IPOLY slices and IPOLY sets (every shipped L2) slice and set bits come
//!   from one IPOLY hash of degree `k + log2(sets)`, a bijection of every aligned block of that
//!   many lines: rows walked sequentially and power-of-two column walks use every set of
//!   every slice evenly (the test `every_l2_set_of_every_slice_is_used_by_ordinary_streams`).

use gpu::config::{SetIndex, SliceIndex};

/// Irreducible (primitive) GF(2) polynomials by degree, bit `d` = x^d: the ones GPGPU-Sim
/// names for 16, 32, 64, 128 and 256 banks (IPOLY(19), (37), (67), (131), (283)) and
/// standard primitive trinomials / pentanomials for the others. `irreducible` in the tests
/// checks every entry.
const POLY: [u64; 17] = [
    0x1,     // degree 0: the constant (one set / one slice)
    0x3,     // x + 1
    0x7,     // x^2 + x + 1
    0xB,     // x^3 + x + 1
    0x13,    // x^4 + x + 1          (GPGPU-Sim IPOLY(19), 16 banks)
    0x25,    // x^5 + x^2 + 1        (IPOLY(37), 32 banks)
    0x43,    // x^6 + x + 1          (IPOLY(67), 64 banks)
    0x83,    // x^7 + x + 1          (IPOLY(131), 128 banks)
    0x11B,   // x^8 + x^4 + x^3 + x + 1 (IPOLY(283), 256 banks)
    0x211,   // x^9 + x^4 + 1
    0x409,   // x^10 + x^3 + 1
    0x805,   // x^11 + x^2 + 1
    0x1053,  // x^12 + x^6 + x^4 + x + 1
    0x201B,  // x^13 + x^4 + x^3 + x + 1
    0x4443,  // x^14 + x^10 + x^6 + x + 1
    0x8003,  // x^15 + x + 1
    0x1002D, // x^16 + x^5 + x^3 + x^2 + 1
];

/// `x(t) mod p(t)` over GF(2), table-driven: eight 256-entry tables, one per byte of the
/// 64-bit input, each holding `(b * t^(8k)) mod p`. The tables of a degree are built once
/// per process and shared (every L1 and L2 slice of a run uses the same few degrees; building
/// them per cache was most of the set-up time of a small launch).
#[derive(Clone, Debug)]
struct Gf2Mod {
    tables: &'static [[u32; 256]; 8],
}

/// The tables of each degree of [`POLY`], built on first use.
static GF2_TABLES: [std::sync::OnceLock<Box<[[u32; 256]; 8]>>; POLY.len()] =
    [const { std::sync::OnceLock::new() }; POLY.len()];

impl Gf2Mod {
    fn new(degree: u32) -> Gf2Mod {
        let tables = GF2_TABLES[degree as usize].get_or_init(|| Self::build(degree));
        Gf2Mod { tables }
    }

    fn build(degree: u32) -> Box<[[u32; 256]; 8]> {
        let p = POLY[degree as usize];
        let reduce = |mut x: u128| -> u32 {
            while degree < 128 && x >> degree != 0 {
                let top = 127 - x.leading_zeros();
                x ^= u128::from(p) << (top - degree);
            }
            x as u32
        };
        let mut tables = Box::new([[0u32; 256]; 8]);
        for (k, t) in tables.iter_mut().enumerate() {
            for (b, e) in t.iter_mut().enumerate() {
                *e = reduce((b as u128) << (8 * k));
            }
        }
        tables
    }

    fn apply(&self, x: u64) -> u32 {
        // A zero byte contributes nothing (`0 * t^(8k) = 0`), so the loop stops at the
        // highest non-zero byte: line numbers of real buffers fit in four or five bytes.
        let mut r = 0;
        let mut rest = x;
        for t in self.tables.iter() {
            if rest == 0 {
                break;
            }
            r ^= t[(rest & 0xFF) as usize];
            rest >>= 8;
        }
        r
    }
}

fn degree_for(n: u32) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

/// `S = m * 2^k` with `m` odd: (m, k).
fn split_odd(s: u32) -> (u64, u32) {
    let k = s.max(1).trailing_zeros();
    (u64::from(s.max(1) >> k), k)
}

/// Whether an L2 with these keys uses the joint hash (slice and set bits from one IPOLY).
pub fn is_joint(slice: SliceIndex, set: SetIndex, sets: u32) -> bool {
    slice == SliceIndex::Ipoly && set == SetIndex::Ipoly && sets.is_power_of_two()
}

/// SplitMix64's finaliser (Steele et al., OOPSLA 2014): a bijective 64-bit mixer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Line number -> L2 slice.
///
/// `S = m * 2^k` with `m` odd (12 = 3 * 4, 24 = 3 * 8, 48 = 3 * 16, 80 = 5 * 16). `ipoly`:
/// the power-of-two part `b` is the low `k` bits of `c = L(x) mod P(x)`, an IPOLY hash of the
/// line number of degree `d` (`d = k`, or `k + log2(sets)` when the slice's set index is
/// IPOLY too: then the set is the next bits of the same `c`, see [`SetMap`]); the odd part
/// `a` is a mixed hash of the line number above those `d` bits, reduced to `0..m`; slice =
/// `a * 2^k + b`. `c` is a bijection of every aligned block of `2^d` lines and conflict-free
/// for every power-of-two stride (Rau 1991), so rows and power-of-two column walks spread
/// exactly over the `2^k` slice groups (and sets); `a` spreads the blocks over the `m`
/// groups. A non-GF(2) part is unavoidable for an odd `m`, and an arithmetic one
/// (`L div 2^d mod m`) aliases with power-of-two strides, so it is a hash. `linear`:
/// `L mod S`.
#[derive(Clone, Debug)]
pub struct SliceMap {
    slices: u64,
    kind: SliceIndex,
    odd: u64,
    k: u32,
    /// Degree of the IPOLY part: bits below it are hashed, the rest choose the odd part.
    degree: u32,
    poly: Gf2Mod,
}

impl SliceMap {
    /// The slice map of an L2 with `slices` slices of `sets` sets indexed by `set`.
    pub fn new(kind: SliceIndex, slices: u32, set: SetIndex, sets: u32) -> SliceMap {
        let (odd, k) = split_odd(slices);
        let degree = if is_joint(kind, set, sets) {
            k + sets.trailing_zeros()
        } else {
            k
        };
        SliceMap {
            slices: u64::from(slices.max(1)),
            kind,
            odd,
            k,
            degree,
            poly: Gf2Mod::new(degree),
        }
    }

    /// The slice of line `line`.
    pub fn slice(&self, line: u64) -> u32 {
        match self.kind {
            SliceIndex::Linear => (line % self.slices) as u32,
            SliceIndex::Ipoly => {
                let b = u64::from(self.poly.apply(line)) & ((1 << self.k) - 1);
                // Consecutive groups of 2^k lines step through the m odd parts (a stream
                // keeps every slice, and so every DRAM channel, equally busy); the hash of
                // the block number breaks the aliasing of that count with power-of-two
                // strides.
                let a = if self.odd > 1 {
                    ((line >> self.k) + (mix(line >> self.degree) >> 32)) % self.odd
                } else {
                    0
                };
                (a * (1 << self.k) + b) as u32
            }
        }
    }

    /// The slice-local number of line `line`: the lines of one slice numbered densely in
    /// address order, what the DRAM channel behind the slice addresses its banks and rows by
    /// (GPGPU-Sim's partition address, the address with the partition bits taken out).
    /// `linear`: `L div S`. `ipoly`: each aligned group of `2^k` lines puts one line in each
    /// slice of one odd part, and consecutive groups step through the `m` odd parts, so the
    /// slice's lines are one per `m` groups: `(L >> k) div m`. Within a block of `2^degree`
    /// lines (the odd part's hash is constant there) this is one-to-one; where two blocks
    /// meet, two lines of one slice less than `m` groups apart can share a number (at most
    /// one pair per block per slice), which makes them neighbours in one DRAM row.
    pub fn local(&self, line: u64) -> u64 {
        match self.kind {
            SliceIndex::Linear => line / self.slices,
            SliceIndex::Ipoly => (line >> self.k) / self.odd,
        }
    }

    /// The number of slices.
    pub fn slices(&self) -> u32 {
        self.slices as u32
    }
}

/// Which part of the line number a cache's set function sees.
#[derive(Clone, Copy, Debug)]
enum Local {
    /// The line number divided by the slice count (`linear` slices: `L = Q*S + slice`).
    Div(u64),
    /// The line number without its low `k` bits (`ipoly` slices: the bits the IPOLY slice
    /// part starts from; the odd part is a hash of the rest).
    Shift(u32),
    /// Joint IPOLY: the IPOLY value's bits above the low `k` (slice) bits.
    Joint(u32),
}

/// Line number -> set of a cache.
///
/// An L1 indexes its line number. An L2 slice indexes the line number with the slice choice
/// taken out (GPGPU-Sim's L2 likewise indexes the partition address, the address without the
/// partition bits): `L div S` with `linear` slices, `L >> k` with `ipoly` ones; with IPOLY for
/// both slice and set ([`is_joint`]) the set is the bits of the slice's IPOLY value above the
/// slice bits, so slice and set come from one bijective GF(2) map and never share a bit.
#[derive(Clone, Debug)]
pub struct SetMap {
    sets: u64,
    bits: u32,
    kind: SetIndex,
    poly: Gf2Mod,
    local: Local,
}

impl SetMap {
    /// A map onto `sets` sets of lines dealt over `interleave` slices with slice function
    /// `slice` (`xor`, `ipoly`: a power of two of sets; `fermi`: 32 or 64, else it falls
    /// back to `linear`; the configuration check rejects those combinations).
    pub fn new(kind: SetIndex, sets: u32, interleave: u32, slice: SliceIndex) -> SetMap {
        let sets = sets.max(1);
        let ok = match kind {
            SetIndex::Linear => true,
            SetIndex::Xor | SetIndex::Ipoly => sets.is_power_of_two(),
            SetIndex::Fermi => sets == 32 || sets == 64,
        };
        let kind = if ok { kind } else { SetIndex::Linear };
        let bits = degree_for(sets);
        let k = split_odd(interleave).1;
        let local = match slice {
            _ if interleave <= 1 => Local::Div(1),
            SliceIndex::Linear => Local::Div(u64::from(interleave)),
            SliceIndex::Ipoly if is_joint(slice, kind, sets) => Local::Joint(k),
            SliceIndex::Ipoly => Local::Shift(k),
        };
        SetMap {
            sets: u64::from(sets),
            bits,
            kind,
            poly: Gf2Mod::new(match (kind, local) {
                (SetIndex::Ipoly, Local::Joint(k)) => k + bits,
                (SetIndex::Ipoly, _) => bits,
                _ => 0,
            }),
            local,
        }
    }

    /// The set of line `line`.
    pub fn set(&self, line: u64) -> usize {
        let q = match self.local {
            Local::Joint(k) => return (u64::from(self.poly.apply(line)) >> k) as usize,
            Local::Div(1) => line,
            Local::Div(d) => line / d,
            Local::Shift(k) => line >> k,
        };
        let s = match self.kind {
            SetIndex::Linear => q % self.sets,
            SetIndex::Xor => (q ^ (q >> self.bits)) & (self.sets - 1),
            SetIndex::Ipoly => u64::from(self.poly.apply(q)),
            SetIndex::Fermi => {
                // Byte-address bits 7-11 XOR bits 13, 14, 15, 17, 19; 64 sets prepend
                // bit 12. In line-number bits (128 B lines): 0-4 XOR 6, 7, 8, 10, 12; bit 5.
                let lower = q & 0x1F;
                let upper = ((q >> 6) & 0x7) | (((q >> 10) & 1) << 3) | (((q >> 12) & 1) << 4);
                let mut s = lower ^ upper;
                if self.sets == 64 {
                    s |= ((q >> 5) & 1) << 5;
                }
                s
            }
        };
        s as usize
    }
}

#[cfg(test)]
mod tests {
    use super::super::cache::{Cache, Geometry};
    use super::super::config::WritePolicy;
    use super::*;
    use gpu::GpuConfig;

    /// `p` has no factor of degree 1..=deg/2 (trial division over GF(2)).
    fn irreducible(p: u64) -> bool {
        let deg = 63 - p.leading_zeros();
        let rem = |mut a: u64, b: u64| {
            let db = 63 - b.leading_zeros();
            while a != 0 && 63 - a.leading_zeros() >= db {
                a ^= b << (63 - a.leading_zeros() - db);
            }
            a
        };
        (2u64..1 << (deg / 2 + 1)).all(|q| rem(p, q) != 0)
    }

    #[test]
    fn polynomials_are_irreducible() {
        for (d, &p) in POLY.iter().enumerate().skip(1) {
            assert_eq!(63 - p.leading_zeros(), d as u32, "degree of {p:#x}");
            assert!(irreducible(p), "{p:#x} factors");
        }
    }

    #[test]
    fn gf2_mod_matches_long_division() {
        let g = Gf2Mod::new(5);
        for x in [0u64, 1, 31, 32, 0x25, 0xdead_beef, u64::MAX] {
            let mut a = x;
            while a != 0 && 63 - a.leading_zeros() >= 5 {
                a ^= 0x25 << (63 - a.leading_zeros() - 5);
            }
            assert_eq!(u64::from(g.apply(x)), a, "{x:#x}");
        }
    }

    #[test]
    fn aligned_blocks_cover_the_power_of_two_part_exactly() {
        // The IPOLY part of the slice is a bijection of every aligned block of 2^k lines; the
        // odd part is a hash of the block number, so m blocks reach all slices over time.
        for s in [12u32, 24, 48, 80, 64] {
            let m = SliceMap::new(SliceIndex::Ipoly, s, SetIndex::Linear, 32);
            let (odd, k) = split_odd(s);
            let mut all = vec![false; s as usize];
            for block in [0u64, 1, 7, 1000, 123_456_789] {
                let mut seen = std::collections::BTreeSet::new();
                for r in 0..1u64 << k {
                    let sl = m.slice((block << k) + r);
                    seen.insert(sl % (1 << k));
                    assert_eq!(u64::from(sl >> k), u64::from(m.slice(block << k) >> k));
                }
                assert_eq!(seen.len(), 1 << k, "S = {s}");
            }
            for l in 0..64 * u64::from(s) {
                all[m.slice(l) as usize] = true;
            }
            assert!(all.iter().all(|&x| x) && odd >= 1, "S = {s}");
        }
    }

    #[test]
    fn ipoly_sets_are_conflict_free_for_power_of_two_strides() {
        // Rau 1991: 2^n consecutive multiples of any power-of-two stride hit 2^n sets.
        let m = SetMap::new(SetIndex::Ipoly, 32, 1, SliceIndex::Linear);
        for j in 0..20 {
            let mut seen = [false; 32];
            for i in 0..32u64 {
                seen[m.set(i << j)] = true;
            }
            assert!(seen.iter().all(|&x| x), "stride 2^{j}");
        }
    }

    /// Per (slice, set) of the L2 of `gpu`, how many distinct lines of `lines` map there,
    /// with the mapping the simulator uses (`SliceMap` + the slice cache's set function).
    fn l2_usage(gpu: &GpuConfig, lines: impl Iterator<Item = u64>) -> Vec<u64> {
        let g = Geometry::l2_slice(gpu, WritePolicy::WriteBack);
        let slices = SliceMap::new(
            gpu.l2.slice_index,
            gpu.l2.slices,
            gpu.l2.set_index,
            gpu.l2.sets_per_slice,
        );
        let cache: Cache<()> = Cache::new(g);
        let sets = g.sets as usize;
        let mut use_ = vec![0u64; slices.slices() as usize * sets];
        for l in lines {
            let s = slices.slice(l) as usize;
            use_[s * sets + cache.set_of(l * u64::from(g.line))] += 1;
        }
        use_
    }

    /// (min, max) of the usage relative to its mean.
    fn spread(u: &[u64]) -> (f64, f64) {
        let mean = u.iter().sum::<u64>() as f64 / u.len() as f64;
        let min = *u.iter().min().unwrap_or(&0) as f64;
        let max = *u.iter().max().unwrap_or(&0) as f64;
        (min / mean, max / mean)
    }

    /// Issue 11: every set of every L2 slice is reachable, and roughly evenly used, from
    /// ordinary address streams on all four shipped configurations: a row-major array walked
    /// sequentially, and column walks of row-major matrices with 4 KB and 64 KB rows (one
    /// line per row). Each stream touches 64 lines per (slice, set) on average.
    #[test]
    fn every_l2_set_of_every_slice_is_used_by_ordinary_streams() {
        // A buffer base as the launch binder places them (2^36 apart) plus an odd offset.
        let base = (3u64 << 36) / 128 + 7;
        for name in GpuConfig::builtin_names() {
            let gpu = GpuConfig::builtin(name).expect("builtin");
            let n = 64 * u64::from(gpu.l2.slices) * u64::from(gpu.l2.sets_per_slice);
            for (what, stride) in [
                ("sequential", 1u64),
                ("4 KB column", 32),
                ("64 KB column", 512),
            ] {
                let u = l2_usage(&gpu, (0..n).map(|k| base + k * stride));
                let (lo, hi) = spread(&u);
                assert!(
                    lo >= 0.5 && hi <= 1.5,
                    "{name} {what}: per-set use between {lo:.2} and {hi:.2} of the mean"
                );
            }
        }
    }

    /// The test above can fail: the old mapping (slice = line mod S, set = line mod sets)
    /// leaves a Volta slice 2 of its 32 sets on a sequential walk.
    #[test]
    fn the_old_modulo_mapping_fails_the_coverage_test() {
        let mut gpu = GpuConfig::builtin("titanv").expect("builtin");
        gpu.l2.slice_index = SliceIndex::Linear;
        gpu.l2.set_index = SetIndex::Linear;
        gpu.l2.slices = 1; // set from the whole line number, as before
        let slices = SliceMap::new(SliceIndex::Linear, 48, SetIndex::Linear, 32);
        let g = Geometry::l2_slice(&gpu, WritePolicy::WriteBack);
        let cache: Cache<()> = Cache::new(g);
        let mut sets_of_slice0 = std::collections::BTreeSet::new();
        for l in 0..48 * 32 * 4u64 {
            if slices.slice(l) == 0 {
                sets_of_slice0.insert(cache.set_of(l * 128));
            }
        }
        assert_eq!(sets_of_slice0.len(), 2);
    }

    #[test]
    fn fermi_hash_is_a_permutation_of_aligned_blocks() {
        for sets in [32u32, 64] {
            let m = SetMap::new(SetIndex::Fermi, sets, 1, SliceIndex::Linear);
            let mut seen = vec![false; sets as usize];
            for q in 4096..4096 + u64::from(sets) {
                seen[m.set(q)] = true;
            }
            assert!(seen.iter().all(|&x| x));
        }
    }
}
