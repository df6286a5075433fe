//! CPU mirrors of the data-dependent kernels: graph traversal, sparse products, tree search,
//! merging, histograms with atomics, hashes, and the option pricer.

use super::{exact_i32, exact_u32, near_f32, near_f64, Ctx, Want};

/// f32 dot products with FMA contraction on the GPU (see `dense`).
const F32_DOT: f64 = 64.0 * f32::EPSILON as f64;

/// `bfs_expand(row_ptr, col_idx, frontier, updating, visited, cost, n)`. Deterministic:
/// `frontier` is cleared for every frontier node, `updating[id] = 1` for every unvisited
/// neighbour of a frontier node, `visited` unchanged, and a cost no thread writes keeps its
/// initial value. Racy: `cost[id] = cost[tid] + 1` reads a `cost[tid]` that another thread
/// may already have written (when the frontier node `tid` is itself an unvisited neighbour of
/// the frontier). So a written cost whose writers' own costs are never written is exactly
/// `initial cost of a writer + 1` (one of them); any other written cost is `c + 1` for a
/// writer's possible cost `c`, which lies between the smallest initial cost and that plus
/// the number of written frontier nodes (the longest chain of such writes).
pub fn bfs_expand(x: &Ctx) -> Vec<(usize, Want)> {
    let (row, col) = (x.i32(0), x.i32(1));
    let (mut frontier, mut updating, visited, cost0) = (x.u8(2), x.u8(3), x.u8(4), x.i32(5));
    let n = x.int(6) as usize;
    let active: Vec<usize> = (0..n).filter(|&t| frontier[t] != 0).collect();
    for &t in &active {
        frontier[t] = 0;
    }
    let mut writers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &t in &active {
        for e in row[t]..row[t + 1] {
            let id = col[e as usize] as usize;
            if visited[id] == 0 {
                updating[id] = 1;
                writers[id].push(t);
            }
        }
    }
    let written = |t: usize| !writers[t].is_empty();
    let chain = active.iter().filter(|&&t| written(t)).count() as i64;
    let lo = i64::from(cost0.iter().copied().min().unwrap_or(0));
    let mut cand: Vec<Option<Vec<i32>>> = Vec::with_capacity(n);
    let mut fixed = 0usize;
    for (id, w) in writers.iter().enumerate() {
        cand.push(if w.is_empty() {
            Some(vec![cost0[id]])
        } else if w.iter().all(|&t| !written(t)) {
            fixed += 1;
            Some(w.iter().map(|&t| cost0[t] + 1).collect())
        } else {
            None
        });
    }
    assert!(
        fixed > 0,
        "no deterministic cost: the check would be vacuous"
    );
    let check = move |got: &[u8]| {
        for (id, (g, c)) in super::i32s(got).iter().zip(&cand).enumerate() {
            let ok = match c {
                Some(c) => c.contains(g),
                None => (lo + 1..=lo + 1 + chain).contains(&i64::from(*g)),
            };
            if !ok {
                return Err(format!("cost[{id}] = {g}, expected one of {c:?}"));
            }
        }
        Ok(())
    };
    vec![
        (2, Want::Exact(frontier)),
        (3, Want::Exact(updating)),
        (4, Want::Exact(visited)),
        (5, Want::Check(Box::new(check))),
    ]
}

/// `bfs_update(frontier, updating, visited, over, n)`: every updating node joins the frontier
/// and the visited set, `over = 1` if any did, `updating` cleared. Exact.
pub fn bfs_update(x: &Ctx) -> Vec<(usize, Want)> {
    let (mut frontier, mut updating, mut visited, mut over) = (x.u8(0), x.u8(1), x.u8(2), x.i32(3));
    let n = x.int(4) as usize;
    for t in 0..n {
        if updating[t] != 0 {
            frontier[t] = 1;
            visited[t] = 1;
            over[0] = 1;
            updating[t] = 0;
        }
    }
    vec![
        (0, Want::Exact(frontier)),
        (1, Want::Exact(updating)),
        (2, Want::Exact(visited)),
        (3, exact_i32(&over)),
    ]
}

/// `spmv_csr_scalar(num_rows, row_ptr, col_idx, vals, x, y)`: one thread per row, sequential
/// sum over the row's non-zeros; products contract ([`F32_DOT`]).
pub fn spmv_csr_scalar(x: &Ctx) -> Vec<(usize, Want)> {
    let rows = x.int(0) as usize;
    let (rp, ci, vals, v) = (x.i32(1), x.i32(2), x.f32(3), x.f32(4));
    let mut y = x.f32(5);
    let mut sc = vec![0.0f32; y.len()];
    for r in 0..rows {
        let (mut sum, mut s) = (0.0f32, 0.0f32);
        for j in rp[r] as usize..rp[r + 1] as usize {
            sum += vals[j] * v[ci[j] as usize];
            s += (vals[j] * v[ci[j] as usize]).abs();
        }
        y[r] = sum;
        sc[r] = s;
    }
    vec![(5, near_f32(&y, &sc, F32_DOT))]
}

/// `spmv_csr_vector(...)`: one warp per row, lane `l` sums non-zeros `begin + l + 32 k`, then
/// `sum += __shfl_down_sync(sum, o)` for o = 16, 8, 4, 2, 1 (lanes past 31 read their own
/// value); lane 0's sum is stored. The shuffle tree is mirrored exactly; the lane sums
/// contract ([`F32_DOT`]).
pub fn spmv_csr_vector(x: &Ctx) -> Vec<(usize, Want)> {
    let rows = x.int(0) as usize;
    let (rp, ci, vals, v) = (x.i32(1), x.i32(2), x.f32(3), x.f32(4));
    let warps = (x.threads()[0] / 32) as usize;
    let mut y = x.f32(5);
    let mut sc = vec![0.0f32; y.len()];
    for r in 0..rows.min(warps) {
        let (begin, end) = (rp[r] as usize, rp[r + 1] as usize);
        let mut lane = [0.0f32; 32];
        let mut s = 0.0f32;
        for (l, sum) in lane.iter_mut().enumerate() {
            for j in (begin + l..end).step_by(32) {
                *sum += vals[j] * v[ci[j] as usize];
                s += (vals[j] * v[ci[j] as usize]).abs();
            }
        }
        for o in [16, 8, 4, 2, 1] {
            let old = lane;
            for (l, sum) in lane.iter_mut().enumerate() {
                *sum += if l + o < 32 { old[l + o] } else { old[l] };
            }
        }
        y[r] = lane[0];
        sc[r] = s;
    }
    vec![(5, near_f32(&y, &sc, F32_DOT))]
}

/// `btree_find_k(height, node_keys, node_child, records, queries, answers)`: one block per
/// query, one thread per key slot of a node (`order` = blockDim.x). At each internal level the
/// slot with `key[t] <= q < key[t + 1]` (the last slot's upper bound is INT_MAX) selects the
/// child; at the leaf the slot whose key equals `q` stores its record. Exact (the mirror
/// asserts the tree data makes each choice unique, so no race).
pub fn btree_find_k(x: &Ctx) -> Vec<(usize, Want)> {
    let height = x.int(0);
    let (keys, child, records, queries) = (x.i32(1), x.i32(2), x.i32(3), x.i32(4));
    let order = x.block()[0] as usize;
    let mut answers = x.i32(5);
    for (b, &q) in queries.iter().enumerate().take(x.grid()[0] as usize) {
        let mut cur = 0usize;
        for _ in 0..height {
            let base = cur * order;
            let hits: Vec<usize> = (0..order)
                .filter(|&t| {
                    let hi = if t + 1 < order {
                        keys[base + t + 1]
                    } else {
                        i32::MAX
                    };
                    keys[base + t] <= q && q < hi
                })
                .collect();
            assert!(hits.len() <= 1, "query {b}: several children match");
            if let Some(&t) = hits.first() {
                cur = child[base + t] as usize;
            }
        }
        let base = cur * order;
        let hits: Vec<usize> = (0..order).filter(|&t| keys[base + t] == q).collect();
        assert!(hits.len() <= 1, "query {b}: several leaf keys match");
        if let Some(&t) = hits.first() {
            answers[b] = records[child[base + t] as usize];
        }
    }
    vec![(5, exact_i32(&answers))]
}

/// `mergesort_step(in, out, n, width)`: thread `i` finds its rank in the partner run by
/// binary search (strict `<` from the left run, `<=` from the right) and stores `in[i]` at
/// `pair + rank`. On sorted runs the ranks are a permutation; the small launch's runs are
/// random, so several threads may store to one slot. Deterministic: a slot no thread targets
/// keeps its initial value, a slot exactly one thread (or only threads with equal values)
/// targets holds that value; racy: otherwise one of the stored values.
pub fn mergesort_step(x: &Ctx) -> Vec<(usize, Want)> {
    let (inp, out0) = (x.f32(0), x.f32(1));
    let (n, width) = (x.int(2), x.int(3));
    let mut cand: Vec<Vec<u64>> = Vec::new();
    cand.resize(out0.len(), Vec::new());
    for i in 0..n.min(x.threads()[0]) {
        let pair = (i / (2 * width)) * (2 * width);
        let right = (pair + width).min(n);
        let end = (pair + 2 * width).min(n);
        let v = inp[i as usize];
        let pos = if i < right {
            let (mut lo, mut hi) = (right, end);
            while lo < hi {
                let mid = (lo + hi) >> 1;
                if inp[mid as usize] < v {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            (i - pair) + (lo - right)
        } else {
            let (mut lo, mut hi) = (pair, right);
            while lo < hi {
                let mid = (lo + hi) >> 1;
                if inp[mid as usize] <= v {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            (i - right) + (lo - pair)
        };
        let c = &mut cand[(pair + pos) as usize];
        if !c.contains(&u64::from(v.to_bits())) {
            c.push(u64::from(v.to_bits()));
        }
    }
    let mut racy = 0;
    for (c, init) in cand.iter_mut().zip(&out0) {
        if c.is_empty() {
            c.push(u64::from(init.to_bits()));
        }
        racy += usize::from(c.len() > 1);
    }
    assert!(
        racy < cand.len(),
        "every slot racy: the check would be vacuous"
    );
    vec![(1, Want::OneOf { size: 4, cand })]
}

/// Byte histogram of `data[..n]` on top of `bins`.
fn histogram(x: &Ctx) -> Vec<(usize, Want)> {
    let data = x.u8(0);
    let n = x.int(2) as usize;
    let mut bins = x.u32(1);
    for &d in &data[..n] {
        bins[usize::from(d)] += 1;
    }
    vec![(1, exact_u32(&bins))]
}

/// `histogram_global(data, bins, n)`: grid-stride atomic increments; counts are exact.
pub fn histogram_global(x: &Ctx) -> Vec<(usize, Want)> {
    histogram(x)
}

/// `histogram_shared(data, bins, n)`: per-block shared histograms added atomically to
/// `bins`; the same counts, exact.
pub fn histogram_shared(x: &Ctx) -> Vec<(usize, Want)> {
    histogram(x)
}

/// `tpacf(x, y, z, n, bounds, hist)`: for every pair i < j, the dot product `d` of the two
/// points is binned by binary search over the (descending) `bounds` and counted atomically.
/// The counts are integers but `d` itself contracts on the GPU (`fma.rn`), so a pair whose `d`
/// lies within the rounding error (4 eps of `|x_i x_j| + |y_i y_j| + |z_i z_j|`) of a bin
/// boundary may land in the neighbouring bin: each bin's count may differ from the mirror's by
/// at most the number of such ambiguous pairs touching it, and the total is exact.
pub fn tpacf(x: &Ctx) -> Vec<(usize, Want)> {
    const BINS: usize = 32;
    let (px, py, pz, bounds) = (x.f32(0), x.f32(1), x.f32(2), x.f32(4));
    let n = x.int(3) as usize;
    let bin = |d: f32| {
        let (mut lo, mut hi) = (0usize, BINS);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if d < bounds[mid] {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let mut hist = x.u32(5);
    let mut slack = [0u32; BINS];
    for i in 0..n.min(x.threads()[0] as usize) {
        for j in i + 1..n {
            let d = px[i] * px[j] + py[i] * py[j] + pz[i] * pz[j];
            let err = 4.0
                * f32::EPSILON
                * ((px[i] * px[j]).abs() + (py[i] * py[j]).abs() + (pz[i] * pz[j]).abs());
            let b = bin(d);
            hist[b] += 1;
            let (lo, hi) = (bin(d + err), bin(d - err));
            if lo != hi {
                for s in &mut slack[lo.min(hi)..=lo.max(hi)] {
                    *s += 1;
                }
            }
        }
    }
    let want = hist.clone();
    Vec::from([(
        5,
        Want::Check(Box::new(move |got: &[u8]| {
            let got = super::u32s(got);
            let total = |h: &[u32]| h.iter().map(|v| u64::from(*v)).sum::<u64>();
            if total(&got) != total(&want) {
                return Err(format!("total {} != {}", total(&got), total(&want)));
            }
            for b in 0..BINS {
                if got[b].abs_diff(want[b]) > slack[b] {
                    return Err(format!(
                        "bin {b}: {} vs {} beyond {} ambiguous pairs",
                        got[b], want[b], slack[b]
                    ));
                }
            }
            Ok(())
        })),
    )])
}

fn rotl(v: u32, r: u32) -> u32 {
    v.rotate_left(r)
}

/// `storegpu_chunk_hash(data, digests, num_chunks, chunk_words)`: a MurmurHash3-style hash of
/// each chunk seeded with its index; u32 wrapping arithmetic, exact.
pub fn storegpu_chunk_hash(x: &Ctx) -> Vec<(usize, Want)> {
    let data = x.u32(0);
    let (chunks, words) = (x.int(2) as usize, x.int(3) as usize);
    let mut dig = x.u32(1);
    for (c, d) in dig.iter_mut().enumerate().take(chunks) {
        let mut h = 0x9747_b28c_u32 ^ c as u32;
        for &k0 in &data[c * words..(c + 1) * words] {
            let k = rotl(k0.wrapping_mul(0xcc9e_2d51), 15).wrapping_mul(0x1b87_3593);
            h = rotl(h ^ k, 13).wrapping_mul(5).wrapping_add(0xe654_6b64);
        }
        h ^= (words as u32).wrapping_mul(4);
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^= h >> 16;
        *d = h;
    }
    vec![(1, exact_u32(&dig))]
}

/// `storegpu_sliding_hash(bytes, hashes, num_windows, window)`: FNV-1a over each overlapping
/// window; exact.
pub fn storegpu_sliding_hash(x: &Ctx) -> Vec<(usize, Want)> {
    let bytes = x.u8(0);
    let (nw, window) = (x.int(2) as usize, x.int(3) as usize);
    let mut out = x.u32(1);
    for (i, o) in out.iter_mut().enumerate().take(nw) {
        *o = bytes[i..i + window]
            .iter()
            .fold(2_166_136_261_u32, |h, &b| {
                (h ^ u32::from(b)).wrapping_mul(16_777_619)
            });
    }
    vec![(1, exact_u32(&out))]
}

/// The cumulative normal approximation of the source (`bs_cnd`).
fn cnd(d: f32) -> f32 {
    let (a1, a2, a3, a4, a5) = (
        0.319_381_53_f32,
        -0.356_563_78_f32,
        1.781_477_9_f32,
        -1.821_256_f32,
        1.330_274_4_f32,
    );
    let rsqrt2pi = 0.398_942_3_f32;
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let c = rsqrt2pi * (-0.5 * d * d).exp() * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    if d > 0.0 {
        1.0 - c
    } else {
        c
    }
}

/// `blackscholes(call, put, S, X, T, R, V, n)`: the option formula with the CPU's libm
/// `expf`/`logf`/`sqrtf`. The GPU build uses `ex2.approx`/`lg2.approx` (a couple of ulp, and
/// the argument scaled by log2(e) in f32 first) and contracts the polynomial: relative error up
/// to 1e-5 (observed 5.6e-6) of the scale `|s cnd1| + |x e^-rt cnd2|`; for the put, whose
/// `1 - cnd` cancels, `|x e^-rt| (1 + |cnd2|) + |s| (1 + |cnd1|)`.
pub fn blackscholes(x: &Ctx) -> Vec<(usize, Want)> {
    let (s_, x_, t_) = (x.f32(2), x.f32(3), x.f32(4));
    let (r, v, n) = (x.float(5), x.float(6), x.int(7) as usize);
    let (mut call, mut put) = (x.f32(0), x.f32(1));
    let (mut sc_call, mut sc_put) = (vec![0.0f32; call.len()], vec![0.0f32; put.len()]);
    for i in 0..n {
        let (s, xx, t) = (s_[i], x_[i], t_[i]);
        let sqrt_t = t.sqrt();
        let d1 = ((s / xx).ln() + (r + 0.5 * v * v) * t) / (v * sqrt_t);
        let d2 = d1 - v * sqrt_t;
        let (c1, c2) = (cnd(d1), cnd(d2));
        let e = (-r * t).exp();
        call[i] = s * c1 - xx * e * c2;
        put[i] = xx * e * (1.0 - c2) - s * (1.0 - c1);
        sc_call[i] = (s * c1).abs() + (xx * e * c2).abs();
        // `1 - cnd` cancels: scale by the magnitudes before the subtraction.
        sc_put[i] = (xx * e).abs() * (1.0 + c2.abs()) + s.abs() * (1.0 + c1.abs());
    }
    vec![
        (0, near_f32(&call, &sc_call, 1e-5)),
        (1, near_f32(&put, &sc_put, 1e-5)),
    ]
}

/// lavaMD (`kernel_gpu_cuda`, Rodinia 3.1): per home box, each of its 100 particles against
/// every particle of the home box and its neighbours (in the kernel's order: boxes `k`, then
/// particles `j`), `alpha` from the `par_str` the test gives (the launch file leaves it open).
pub fn lavamd(x: &Ctx) -> Vec<(usize, Want)> {
    const PAR: usize = 100;
    const BOX_WORDS: usize = 656 / 4;
    let alpha = f64::from_le_bytes(x.struct_bytes(0)[..8].try_into().unwrap());
    let number_boxes = i64::from_le_bytes(x.struct_bytes(1)[16..24].try_into().unwrap()) as usize;
    let boxes = x.i32(2);
    let (rv, qv, mut fv) = (x.f64(3), x.f64(4), x.f64(5));
    let mut scale = vec![0.0f64; fv.len()];
    // box_str: offset (long) at byte 16, nn at 24, nei[26] from 32 (24 bytes, number at 12).
    let word = |b: usize, w: usize| boxes[b * BOX_WORDS + w];
    let offset = |b: usize| (word(b, 4) as u32 as i64 | i64::from(word(b, 5)) << 32) as usize;
    let a2 = 2.0 * alpha * alpha;
    for bx in 0..number_boxes {
        let first_i = offset(bx);
        for k in 0..1 + word(bx, 6) as usize {
            let pointer = if k == 0 {
                bx
            } else {
                word(bx, 8 + (k - 1) * 6 + 3) as usize
            };
            let first_j = offset(pointer);
            for wtx in 0..PAR {
                let ra = &rv[(first_i + wtx) * 4..][..4];
                for j in 0..PAR {
                    let rb = &rv[(first_j + j) * 4..][..4];
                    let r2 = ra[0] + rb[0] - (ra[1] * rb[1] + ra[2] * rb[2] + ra[3] * rb[3]);
                    let vij = (-(a2 * r2)).exp();
                    let fs = 2.0 * vij;
                    let q = qv[first_j + j];
                    let terms = [
                        q * vij,
                        q * fs * (ra[1] - rb[1]),
                        q * fs * (ra[2] - rb[2]),
                        q * fs * (ra[3] - rb[3]),
                    ];
                    for (c, t) in terms.iter().enumerate() {
                        fv[(first_i + wtx) * 4 + c] += t;
                        scale[(first_i + wtx) * 4 + c] += t.abs();
                    }
                }
            }
        }
    }
    vec![(5, near_f64(&fv, &scale, 1e-12))]
}
