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
///
/// Called for every shared-memory access a warp makes, so the common shapes (up to 8
/// words a lane, up to 64 banks) use arrays on the stack instead of two allocations; the
/// words are sorted and deduplicated either way, so the answer is the same.
pub fn bank_conflicts(mask: u32, addrs: &[u64; 32], size: u32, banks: u32) -> u32 {
    const MAX_WORDS: usize = 8;
    const MAX_BANKS: usize = 64;
    let n = size.div_ceil(4).max(1) as usize;
    let nb = banks.max(1) as usize;
    if n > MAX_WORDS || nb > MAX_BANKS {
        return bank_conflicts_heap(mask, addrs, size, banks);
    }
    let mut words = [0u64; 32 * MAX_WORDS];
    let mut len = 0;
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let w0 = addrs[l] / 4;
        for k in 0..n as u64 {
            words[len] = w0 + k;
            len += 1;
        }
    }
    let words = &mut words[..len];
    words.sort_unstable();
    let mut per = [0u32; MAX_BANKS];
    let mut prev = None;
    for &w in words.iter() {
        if prev != Some(w) {
            per[(w % nb as u64) as usize] += 1;
            prev = Some(w);
        }
    }
    per.into_iter().max().unwrap_or(0).max(1)
}

/// [`bank_conflicts`] for any word count and bank count (and its reference in the tests).
fn bank_conflicts_heap(mask: u32, addrs: &[u64; 32], size: u32, banks: u32) -> u32 {
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

    /// The stack version against the allocating one, over masks, strides, sizes and banks.
    #[test]
    fn banks_match_the_reference() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let stride = next() % 300;
            let base = next() % 4096;
            let jitter = next() % 3;
            let a = lanes(|l| base + stride * l + (l % 3) * jitter * 4);
            let mask = match next() % 3 {
                0 => u32::MAX,
                _ => next() as u32,
            };
            let size = [1, 2, 4, 8, 16, 32, 64][(next() % 7) as usize];
            let banks = [1, 16, 32, 64, 96][(next() % 5) as usize];
            assert_eq!(
                bank_conflicts(mask, &a, size, banks),
                bank_conflicts_heap(mask, &a, size, banks),
                "stride {stride} size {size} banks {banks} mask {mask:#x}"
            );
        }
    }
}
