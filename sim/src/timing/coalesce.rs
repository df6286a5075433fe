//! The coalescer: a warp's per-lane accesses become the distinct blocks (32 B sectors or
//! 128 B lines) they touch, and shared-memory accesses a bank-conflict degree.

/// Appends to `out` the distinct `block`-aligned addresses the lanes of `mask` touch
/// (`size` bytes from each lane's address; an access may straddle two blocks), ascending.
pub fn coalesce(mask: u32, addrs: &[u64; 32], size: u32, block: u64, out: &mut Vec<u64>) {
    let start = out.len();
    // Block sizes are powers of two in every configuration; masking beats dividing.
    let align = |a: u64| {
        if block.is_power_of_two() {
            a & !(block - 1)
        } else {
            a - a % block
        }
    };
    let extent = u64::from(size.max(1)) - 1;
    if mask == u32::MAX && block.is_power_of_two() {
        // Every lane active (the common case): align all 32 at once (vectorises), then
        // keep the changes, unless some lane straddles two blocks.
        let m = !(block - 1);
        let first: [u64; 32] = std::array::from_fn(|l| addrs[l] & m);
        let straddles = (0..32).fold(false, |s, l| s | ((addrs[l] + extent) & m != first[l]));
        if !straddles {
            let mut sorted = true;
            out.push(first[0]);
            for l in 1..32 {
                let (p, b) = (first[l - 1], first[l]);
                if p != b {
                    sorted &= p < b;
                    out.push(b);
                }
            }
            if !sorted {
                sort_dedup(out, start);
            }
            return;
        }
    }
    // Lanes usually walk blocks in order (unit stride, broadcasts): skip repeats of the
    // last block and sort only when a lane went backwards.
    let mut sorted = true;
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = addrs[l];
        let mut b = align(a);
        let last = align(a + extent);
        loop {
            if out.len() == start {
                out.push(b);
            } else {
                let p = out[out.len() - 1];
                if p != b {
                    sorted &= p < b;
                    out.push(b);
                }
            }
            if b >= last {
                break;
            }
            b += block;
        }
    }
    if !sorted {
        sort_dedup(out, start);
    }
}

/// Sorts `out[start..]` and removes its duplicates.
fn sort_dedup(out: &mut Vec<u64>, start: usize) {
    out[start..].sort_unstable();
    let mut w = start;
    for r in start..out.len() {
        if w == start || out[w - 1] != out[r] {
            out[w] = out[r];
            w += 1;
        }
    }
    out.truncate(w);
}

/// Cycles a shared-memory access needs: the largest number of distinct 4-byte words that
/// fall in one of `banks` banks (lanes reading the same word are served by a broadcast).
pub fn bank_conflicts(mask: u32, addrs: &[u64; 32], size: u32, banks: u32) -> u32 {
    let mut words: Vec<u64> = Vec::with_capacity(64);
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let n = u64::from(size.div_ceil(4).max(1));
        for k in 0..n {
            words.push(addrs[l] / 4 + k);
        }
    }
    words.sort_unstable();
    words.dedup();
    let banks = u64::from(banks.max(1));
    let mut per = vec![0u32; banks as usize];
    for w in words {
        per[(w % banks) as usize] += 1;
    }
    per.into_iter().max().unwrap_or(0).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(mut f: impl FnMut(u64) -> u64) -> [u64; 32] {
        std::array::from_fn(|l| f(l as u64))
    }

    #[test]
    fn unit_stride_f32() {
        let mut out = Vec::new();
        coalesce(u32::MAX, &lanes(|l| 0x1000 + 4 * l), 4, 32, &mut out);
        assert_eq!(out, vec![0x1000, 0x1020, 0x1040, 0x1060]);
        out.clear();
        coalesce(u32::MAX, &lanes(|l| 0x1000 + 4 * l), 4, 128, &mut out);
        assert_eq!(out, vec![0x1000]);
    }

    #[test]
    fn strided_and_straddling() {
        let mut out = Vec::new();
        coalesce(0b11, &lanes(|l| 0x1000 + 1024 * l), 4, 128, &mut out);
        assert_eq!(out, vec![0x1000, 0x1400]);
        out.clear();
        coalesce(1, &lanes(|_| 0x101e), 4, 32, &mut out);
        assert_eq!(out, vec![0x1000, 0x1020]);
        out.clear();
        coalesce(0, &lanes(|_| 0), 4, 32, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn matches_sort_and_dedup() {
        // Random-ish lane patterns (an LCG): the fast path gives what sorting every lane's
        // blocks and removing duplicates gives.
        let mut r = 0x2545_f491_4f6c_dd1du64;
        for case in 0..2000u64 {
            let mut next = || {
                r = r
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                r >> 33
            };
            let stride = [0, 4, 8, 128, 256][(case % 5) as usize];
            let base = next() % 4096;
            let scatter = case % 3 == 0;
            let addrs = lanes(|l| {
                if scatter {
                    next() % 2048
                } else {
                    base + stride * l
                }
            });
            let mask = if case % 7 == 0 {
                next() as u32
            } else {
                u32::MAX
            };
            let size = [1, 4, 8, 16][(case % 4) as usize];
            let block = if case % 2 == 0 { 32 } else { 128 };
            let mut out = vec![7];
            coalesce(mask, &addrs, size, block, &mut out);
            let mut want: Vec<u64> = (0..32)
                .filter(|l| mask >> l & 1 != 0)
                .flat_map(|l| {
                    let a = addrs[l];
                    (a / block..=(a + u64::from(size) - 1) / block).map(move |b| b * block)
                })
                .collect();
            want.sort_unstable();
            want.dedup();
            want.insert(0, 7);
            assert_eq!(out, want, "case {case}");
        }
    }

    #[test]
    fn banks() {
        assert_eq!(bank_conflicts(u32::MAX, &lanes(|l| 4 * l), 4, 32), 1);
        assert_eq!(bank_conflicts(u32::MAX, &lanes(|_| 64), 4, 32), 1);
        assert_eq!(bank_conflicts(u32::MAX, &lanes(|l| 8 * l), 4, 32), 2);
        assert_eq!(bank_conflicts(u32::MAX, &lanes(|l| 128 * l), 4, 32), 32);
    }
}
