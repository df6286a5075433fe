//! The metrics over the walked streams: events ordered into warp and TB streams, LRU stack
//! distances by a Fenwick tree ([`stack_distances`]), self reuse and directed pair ratios
//! binned into [`RatioHistogram`]s.

use super::*;

/// Bin of a ratio in a 10-bin histogram.
pub fn ratio_bin(r: f64) -> usize {
    ((r * 10.0).floor().max(0.0) as usize).min(9)
}

/// Bin of a stack distance (0, then powers of two).
fn distance_bin(d: u64) -> usize {
    if d == 0 {
        0
    } else {
        64 - d.leading_zeros() as usize
    }
}

/// LRU stack distances of `stream` added to `hist`; returns the number of cold accesses.
/// A Fenwick tree marks, per unit, the time of its latest access; the distance of an
/// access is the number of marks after the unit's previous access.
pub fn stack_distances(stream: &[u64], hist: &mut Vec<u64>) -> u64 {
    let n = stream.len();
    let mut tree = vec![0i64; n + 1];
    let add = |tree: &mut Vec<i64>, mut i: usize, v: i64| {
        i += 1;
        while i <= n {
            tree[i] += v;
            i += i & i.wrapping_neg();
        }
    };
    let prefix = |tree: &Vec<i64>, mut i: usize| -> i64 {
        let mut s = 0;
        while i > 0 {
            s += tree[i];
            i -= i & i.wrapping_neg();
        }
        s
    };
    let mut last: crate::footprint::FxMap<u64, usize> = Default::default();
    let mut cold = 0;
    for (t, &u) in stream.iter().enumerate() {
        match last.insert(u, t) {
            Some(p) => {
                let d = (prefix(&tree, t) - prefix(&tree, p + 1)) as u64;
                let b = distance_bin(d);
                if hist.len() <= b {
                    hist.resize(b + 1, 0);
                }
                hist[b] += 1;
                add(&mut tree, p, -1);
            }
            None => cold += 1,
        }
        add(&mut tree, t, 1);
    }
    cold
}

/// Warp and TB streams of one TB's events: (per-warp streams, TB stream).
fn streams(mut ev: Vec<Event>) -> (Vec<Vec<u64>>, Vec<u64>) {
    if let Some(order) = PackedOrder::of(&ev) {
        return order.streams(ev);
    }
    // Equal events are identical, so the unstable sort's result is unique.
    rayon::slice::ParallelSliceMut::par_sort_unstable(&mut ev[..]);
    ev.dedup();
    let nw = ev.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0);
    let mut warps = vec![Vec::new(); nw];
    let mut tb = Vec::with_capacity(ev.len());
    for (_, w, u) in ev {
        warps[w as usize].push(u);
        tb.push(u);
    }
    (warps, tb)
}

/// Events as `u128`s that sort and compare as the events do, where they fit: a TB's events
/// are 80 bytes each (the inline key), and sorting them was most of a large TB's cost (the
/// GEMM at N=4096 walks 2^19 points of one TB). Key word `i` is stored as `word + 1` in the
/// bits the largest such value needs (0 past the end of a shorter key, so a key sorts
/// before its extensions, as slices do), then the warp and the unit.
struct PackedOrder {
    /// Bits of each key position.
    key_bits: Vec<u32>,
    warp_bits: u32,
    unit_bits: u32,
}

impl PackedOrder {
    /// The packing of `ev`, when its fields fit in 128 bits.
    fn of(ev: &[Event]) -> Option<PackedOrder> {
        let bits = |v: u64| 64 - v.leading_zeros();
        let mut top: Vec<u64> = Vec::new();
        let (mut warp, mut unit) = (0u32, 0u64);
        for (k, w, u) in ev {
            let s = k.as_slice();
            if top.len() < s.len() {
                top.resize(s.len(), 0);
            }
            for (t, &x) in top.iter_mut().zip(s) {
                *t = (*t).max(x.checked_add(1)?);
            }
            warp = warp.max(*w);
            unit = unit.max(*u);
        }
        let order = PackedOrder {
            key_bits: top.iter().map(|&t| bits(t)).collect(),
            warp_bits: bits(u64::from(warp)),
            unit_bits: bits(unit),
        };
        let total: u32 = order.key_bits.iter().sum::<u32>() + order.warp_bits + order.unit_bits;
        (total <= 128).then_some(order)
    }

    fn pack(&self, (k, w, u): &Event) -> u128 {
        let s = k.as_slice();
        let mut x = 0u128;
        for (i, &b) in self.key_bits.iter().enumerate() {
            x = (x << b) | u128::from(s.get(i).map_or(0, |&v| v + 1));
        }
        (((x << self.warp_bits) | u128::from(*w)) << self.unit_bits) | u128::from(*u)
    }

    /// [`streams`] of `ev` through the packed form.
    fn streams(&self, ev: Vec<Event>) -> (Vec<Vec<u64>>, Vec<u64>) {
        use rayon::prelude::*;
        let mut packed: Vec<u128> = ev.par_iter().map(|e| self.pack(e)).collect();
        drop(ev);
        // A thread's events of one load ascend (iterations in order): runs the stable sort
        // merges rather than sorting from scratch.
        packed.par_sort();
        packed.dedup();
        let unit_mask = (1u128 << self.unit_bits) - 1;
        let warp_mask = (1u128 << self.warp_bits) - 1;
        let warp = |x: u128| ((x >> self.unit_bits) & warp_mask) as usize;
        let nw = packed.iter().map(|&x| warp(x) + 1).max().unwrap_or(0);
        let mut warps = vec![Vec::new(); nw];
        let mut tb = Vec::with_capacity(packed.len());
        for x in packed {
            let u = (x & unit_mask) as u64;
            warps[warp(x)].push(u);
            tb.push(u);
        }
        (warps, tb)
    }
}

pub(super) fn add_stream(s: &mut StreamReuse, stream: &[u64]) {
    if stream.is_empty() {
        return;
    }
    let mut v = stream.to_vec();
    v.sort_unstable();
    v.dedup();
    s.streams += 1;
    s.accesses += stream.len() as u64;
    s.unique += v.len() as u64;
    s.self_reuse_histogram[ratio_bin(1.0 - v.len() as f64 / stream.len() as f64)] += 1;
    s.cold_accesses += stack_distances(stream, &mut s.stack_distance_histogram);
}

pub(super) fn finish(s: &mut StreamReuse) {
    s.self_reuse_ratio = if s.accesses == 0 {
        0.0
    } else {
        1.0 - s.unique as f64 / s.accesses as f64
    };
}

/// Accesses of the sorted `(unit, count)` list `counts` whose unit lies in the sorted
/// disjoint intervals `iv`.
pub(super) fn accesses_in(counts: &[(u64, u64)], iv: &[Interval]) -> u64 {
    let (mut j, mut shared) = (0usize, 0u64);
    for &(u, c) in counts {
        while j < iv.len() && iv[j].1 <= u {
            j += 1;
        }
        if j == iv.len() {
            break;
        }
        if iv[j].0 <= u {
            shared += c;
        }
    }
    shared
}

/// What one sampled TB contributes to the warp, TB and kernel streams.
pub(super) struct SampledTb {
    pub(super) warps: Vec<Vec<u64>>,
    pub(super) stream: Vec<u64>,
    /// The TB stream's distinct units, ascending, with their access counts.
    pub(super) counts: Vec<(u64, u64)>,
}

impl SampledTb {
    pub(super) fn new(ev: Vec<Event>) -> SampledTb {
        let (warps, stream) = streams(ev);
        let mut sorted = stream.clone();
        sorted.sort_unstable();
        let mut counts: Vec<(u64, u64)> = Vec::new();
        for u in sorted {
            match counts.last_mut() {
                Some((x, n)) if *x == u => *n += 1,
                _ => counts.push((u, 1)),
            }
        }
        SampledTb {
            warps,
            stream,
            counts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed sort gives the streams the sort of whole events gives: keys of different
    /// lengths (a key before its extensions), equal events removed, large units.
    #[test]
    fn packed_streams_equal_sorted_events() {
        let mut ev: Vec<Event> = Vec::new();
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..5000 {
            let len = (next() % 4) as usize;
            let words: Vec<u64> = (0..len).map(|_| next() % 5).collect();
            let key = Key::new(&words, next() % 3);
            let unit = ((next() % 4) << PARAM_SHIFT) | (next() % 300);
            ev.push((key, (next() % 4) as u32, unit));
        }
        ev.extend(ev.clone().into_iter().take(700));
        let order = PackedOrder::of(&ev).expect("fits");
        let packed = order.streams(ev.clone());
        let mut sorted = ev;
        sorted.sort_unstable();
        sorted.dedup();
        let nw = sorted.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0);
        let mut warps = vec![Vec::new(); nw];
        let tb: Vec<u64> = sorted.iter().map(|e| e.2).collect();
        for e in &sorted {
            warps[e.1 as usize].push(e.2);
        }
        assert_eq!(packed, (warps, tb));
        // Too wide for 128 bits: the whole events are sorted instead.
        let wide: Vec<Event> = (0..3)
            .map(|i| (Key::new(&[u64::MAX - 1, 1 << 40], i), 0, u64::MAX))
            .collect();
        assert!(PackedOrder::of(&wide).is_none());
    }

    /// Brute-force stack distance: distinct units since the previous access.
    fn naive(stream: &[u64]) -> (Vec<u64>, u64) {
        let mut hist = Vec::new();
        let mut cold = 0;
        for t in 0..stream.len() {
            match stream[..t].iter().rposition(|&u| u == stream[t]) {
                Some(p) => {
                    let mut d: Vec<u64> = stream[p + 1..t].to_vec();
                    d.sort_unstable();
                    d.dedup();
                    let b = distance_bin(d.len() as u64);
                    if hist.len() <= b {
                        hist.resize(b + 1, 0);
                    }
                    hist[b] += 1;
                }
                None => cold += 1,
            }
        }
        (hist, cold)
    }

    #[test]
    fn fenwick_stack_distances_match_naive() {
        let mut x = 12345u64;
        for len in [0usize, 1, 5, 100, 700] {
            let s: Vec<u64> = (0..len)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (x >> 33) % 37
                })
                .collect();
            let mut h = Vec::new();
            let c = stack_distances(&s, &mut h);
            assert_eq!((h, c), naive(&s));
        }
    }

    #[test]
    fn stack_distance_example() {
        // a b c a : distance 2 for the last access.
        let mut h = Vec::new();
        assert_eq!(stack_distances(&[1, 2, 3, 1, 1], &mut h), 3);
        assert_eq!(h, vec![1, 0, 1]);
    }

    #[test]
    fn ratio_bins() {
        assert_eq!(ratio_bin(0.0), 0);
        assert_eq!(ratio_bin(0.05), 0);
        assert_eq!(ratio_bin(0.1), 1);
        assert_eq!(ratio_bin(0.99), 9);
        assert_eq!(ratio_bin(1.0), 9);
    }
}
