//! CPU mirrors of the dense linear-algebra kernels: products, reductions, transposition.
//!
//! Tolerances: a sum `acc += a * b` over `n` terms that the compiler contracts to `fma.rn`
//! differs from the CPU's rounded multiply-then-add by at most one rounding of each product,
//! i.e. `n * eps * sum |a * b|` in the worst case and about `sqrt(n) * eps * sum |a * b|`
//! typically. The checks allow `F32_DOT * scale` (f32, `eps` = 6e-8) and `F64_DOT * scale`
//! (f64, `eps` = 1.1e-16), scale = the sum of the terms' magnitudes.

use super::{exact_f32, near_f32, near_f64, Ctx, Want};

/// f32 dot products with FMA contraction on the GPU: 64 f32 roundings of the scale.
const F32_DOT: f64 = 64.0 * f32::EPSILON as f64;
/// f64 dot products with FMA contraction on the GPU: 64 f64 roundings of the scale.
const F64_DOT: f64 = 64.0 * f64::EPSILON;

/// `init + sum a_i * b_i` in order with separate roundings, and `|init| + sum |a_i * b_i|`.
fn dot32(init: f32, terms: impl Iterator<Item = (f32, f32)>) -> (f32, f32) {
    let (mut acc, mut scale) = (init, init.abs());
    for (a, b) in terms {
        acc += a * b;
        scale += (a * b).abs();
    }
    (acc, scale)
}

/// `C = A * B` for `n x n` row-major matrices (the plain k-ordered sum).
fn matmul(a: &[f32], b: &[f32], n: usize, rows: usize, cols: usize) -> (Vec<f32>, Vec<f32>) {
    let mut c = vec![0.0f32; n * n];
    let mut s = vec![0.0f32; n * n];
    for row in 0..n.min(rows) {
        for col in 0..n.min(cols) {
            let (v, sc) = dot32(0.0, (0..n).map(|k| (a[row * n + k], b[k * n + col])));
            c[row * n + col] = v;
            s[row * n + col] = sc;
        }
    }
    (c, s)
}

/// `mm_naive(A, B, C, n)`: one thread per `C[row][col]`, k-ordered sum.
pub fn mm_naive(x: &Ctx) -> Vec<(usize, Want)> {
    let n = x.int(3) as usize;
    let t = x.threads();
    let (c, s) = matmul(&x.f32(0), &x.f32(1), n, t[1] as usize, t[0] as usize);
    vec![(2, near_f32(&c, &s, F32_DOT))]
}

/// `mm_tiled(A, B, C, n)`: 16x16 shared tiles; the sum runs over k in the same order as the
/// naive kernel, the zero padding of partial tiles adds `0 * 0` terms that leave it unchanged.
pub fn mm_tiled(x: &Ctx) -> Vec<(usize, Want)> {
    let n = x.int(3) as usize;
    let t = x.threads();
    let (c, s) = matmul(&x.f32(0), &x.f32(1), n, t[1] as usize, t[0] as usize);
    vec![(2, near_f32(&c, &s, F32_DOT))]
}

/// `syrk(A, C, alpha, beta, n, m)`: `C[i][j] = beta C[i][j] + sum_k alpha A[i][k] A[j][k]`.
pub fn syrk(x: &Ctx) -> Vec<(usize, Want)> {
    let (a, mut c) = (x.f32(0), x.f32(1));
    let (alpha, beta) = (x.float(2), x.float(3));
    let (n, m) = (x.int(4) as usize, x.int(5) as usize);
    let mut s = c.iter().map(|v| v.abs()).collect::<Vec<_>>();
    for i in 0..n {
        for j in 0..n {
            let (v, sc) = dot32(
                c[i * n + j] * beta,
                (0..m).map(|k| (alpha * a[i * m + k], a[j * m + k])),
            );
            c[i * n + j] = v;
            s[i * n + j] = sc;
        }
    }
    vec![(1, near_f32(&c, &s, F32_DOT))]
}

/// `syr2k(A, B, C, alpha, beta, n, m)` in f64:
/// `C[i][j] = beta C[i][j] + sum_k (alpha A[i][k] B[j][k] + alpha B[i][k] A[j][k])`.
pub fn syr2k(x: &Ctx) -> Vec<(usize, Want)> {
    let (a, b, mut c) = (x.f64(0), x.f64(1), x.f64(2));
    let (alpha, beta) = (x.double(3), x.double(4));
    let (n, m) = (x.int(5) as usize, x.int(6) as usize);
    let mut s = c.iter().map(|v| v.abs()).collect::<Vec<_>>();
    for i in 0..n {
        for j in 0..n {
            let mut acc = c[i * n + j] * beta;
            let mut sc = acc.abs();
            for k in 0..m {
                let p = alpha * a[i * m + k] * b[j * m + k];
                let q = alpha * b[i * m + k] * a[j * m + k];
                acc += p + q;
                sc += p.abs() + q.abs();
            }
            c[i * n + j] = acc;
            s[i * n + j] = sc;
        }
    }
    vec![(2, near_f64(&c, &s, F64_DOT))]
}

/// `atax_kernel1(A, x, tmp, nx, ny)`: `tmp[i] = sum_j A[i][j] x[j]`.
pub fn atax_kernel1(x: &Ctx) -> Vec<(usize, Want)> {
    let (a, v) = (x.f32(0), x.f32(1));
    let (nx, ny) = (x.int(3) as usize, x.int(4) as usize);
    let mut out = x.f32(2);
    let mut s = vec![0.0; out.len()];
    for i in 0..nx.min(x.threads()[0] as usize) {
        (out[i], s[i]) = dot32(0.0, (0..ny).map(|j| (a[i * ny + j], v[j])));
    }
    vec![(2, near_f32(&out, &s, F32_DOT))]
}

/// `atax_kernel2(A, tmp, y, nx, ny)`: `y[j] = sum_i A[i][j] tmp[i]` (column traversal).
pub fn atax_kernel2(x: &Ctx) -> Vec<(usize, Want)> {
    let (a, tmp) = (x.f32(0), x.f32(1));
    let (nx, ny) = (x.int(3) as usize, x.int(4) as usize);
    let mut out = x.f32(2);
    let mut s = vec![0.0; out.len()];
    for j in 0..ny.min(x.threads()[0] as usize) {
        (out[j], s[j]) = dot32(0.0, (0..nx).map(|i| (a[i * ny + j], tmp[i])));
    }
    vec![(2, near_f32(&out, &s, F32_DOT))]
}

/// `mvt_kernel1(a, x1, y1, n)`: `x1[i] += sum_j a[i][j] y1[j]`.
pub fn mvt_kernel1(x: &Ctx) -> Vec<(usize, Want)> {
    let (a, y) = (x.f32(0), x.f32(2));
    let n = x.int(3) as usize;
    let mut out = x.f32(1);
    let mut s = out.iter().map(|v| v.abs()).collect::<Vec<_>>();
    for i in 0..n.min(x.threads()[0] as usize) {
        (out[i], s[i]) = dot32(out[i], (0..n).map(|j| (a[i * n + j], y[j])));
    }
    vec![(1, near_f32(&out, &s, F32_DOT))]
}

/// `mvt_kernel2(a, x2, y2, n)`: `x2[i] += sum_j a[j][i] y2[j]` (column traversal).
pub fn mvt_kernel2(x: &Ctx) -> Vec<(usize, Want)> {
    let (a, y) = (x.f32(0), x.f32(2));
    let n = x.int(3) as usize;
    let mut out = x.f32(1);
    let mut s = out.iter().map(|v| v.abs()).collect::<Vec<_>>();
    for i in 0..n.min(x.threads()[0] as usize) {
        (out[i], s[i]) = dot32(out[i], (0..n).map(|j| (a[j * n + i], y[j])));
    }
    vec![(1, near_f32(&out, &s, F32_DOT))]
}

/// `gemv_unroll4(A, x, y, m, n, lda)`: `y[row] = sum_j A[row * lda + j] x[j]`; the 4x
/// unrolling keeps the sequential order (no fast-math reassociation).
pub fn gemv_unroll4(x: &Ctx) -> Vec<(usize, Want)> {
    let (a, v) = (x.f32(0), x.f32(1));
    let (m, n, lda) = (x.int(3) as usize, x.int(4) as usize, x.int(5) as usize);
    let mut out = x.f32(2);
    let mut s = vec![0.0; out.len()];
    for row in 0..m.min(x.threads()[0] as usize) {
        (out[row], s[row]) = dot32(0.0, (0..n).map(|j| (a[row * lda + j], v[j])));
    }
    vec![(2, near_f32(&out, &s, F32_DOT))]
}

/// `doitgen(A, C4, sum, nr, nq, np)` in f64: `sum[r][q][p] = sum_s A[r][q][s] C4[s][p]`.
pub fn doitgen(x: &Ctx) -> Vec<(usize, Want)> {
    let (a, c4) = (x.f64(0), x.f64(1));
    let (nr, nq, np) = (x.int(3) as usize, x.int(4) as usize, x.int(5) as usize);
    let t = x.threads();
    let mut out = x.f64(2);
    let mut sc = vec![0.0; out.len()];
    for r in 0..nr.min(x.grid()[2] as usize) {
        for q in 0..nq.min(t[1] as usize) {
            for p in 0..np.min(t[0] as usize) {
                let (mut acc, mut s) = (0.0f64, 0.0f64);
                for k in 0..np {
                    let prod = a[(r * nq + q) * np + k] * c4[k * np + p];
                    acc += prod;
                    s += prod.abs();
                }
                out[(r * nq + q) * np + p] = acc;
                sc[(r * nq + q) * np + p] = s;
            }
        }
    }
    vec![(2, near_f64(&out, &sc, F64_DOT))]
}

/// `lud_internal(m, matrix_dim, offset)`: every 16x16 block right of and below the
/// `offset` diagonal block gets `m[i][j] -= sum_k m[i][offset + k] m[offset + k][j]`; the
/// blocks read (the `offset` row and column bands) are disjoint from those written.
pub fn lud_internal(x: &Ctx) -> Vec<(usize, Want)> {
    const BS: usize = 16;
    let m0 = x.f32(0);
    let (dim, off) = (x.int(1) as usize, x.int(2) as usize);
    let g = x.grid();
    let mut m = m0.clone();
    let mut sc = m0.iter().map(|v| v.abs()).collect::<Vec<_>>();
    for by in 0..g[1] as usize {
        for bx in 0..g[0] as usize {
            let (grow, gcol) = (off + (by + 1) * BS, off + (bx + 1) * BS);
            for ty in 0..BS {
                for tx in 0..BS {
                    let (sum, s) = dot32(
                        0.0,
                        (0..BS).map(|k| {
                            (
                                m0[(grow + ty) * dim + off + k],
                                m0[(off + k) * dim + gcol + tx],
                            )
                        }),
                    );
                    let at = (grow + ty) * dim + gcol + tx;
                    m[at] = m0[at] - sum;
                    sc[at] = m0[at].abs() + s;
                }
            }
        }
    }
    vec![(0, near_f32(&m, &sc, F32_DOT))]
}

/// `transpose_naive(in, out, rows, cols)`: `out[x][y] = in[y][x]`, bit for bit.
pub fn transpose_naive(x: &Ctx) -> Vec<(usize, Want)> {
    let inp = x.f32(0);
    let (rows, cols) = (x.int(2) as usize, x.int(3) as usize);
    let mut out = x.f32(1);
    for y in 0..rows {
        for c in 0..cols {
            out[c * rows + y] = inp[y * cols + c];
        }
    }
    vec![(1, exact_f32(&out))]
}

/// `scalar_prod(C, A, B, vector_n, element_n)`: per vector, each of 256 threads sums a
/// 256-strided slice, then a shared-memory tree halves the partial sums. The tree is mirrored
/// exactly; only the per-thread sums contract (tolerance [`F32_DOT`] of the total scale).
pub fn scalar_prod(x: &Ctx) -> Vec<(usize, Want)> {
    const THREADS: usize = 256;
    let (a, b) = (x.f32(1), x.f32(2));
    let (vn, en) = (x.int(3) as usize, x.int(4) as usize);
    let mut c = x.f32(0);
    let mut sc = vec![0.0; c.len()];
    for v in 0..vn {
        let base = v * en;
        let mut acc = [0.0f32; THREADS];
        let mut total = 0.0;
        for (tid, slot) in acc.iter_mut().enumerate() {
            let (sum, s) = dot32(
                0.0,
                (tid..en)
                    .step_by(THREADS)
                    .map(|e| (a[base + e], b[base + e])),
            );
            *slot = sum;
            total += s;
        }
        let mut stride = THREADS / 2;
        while stride > 0 {
            for tid in 0..stride {
                acc[tid] += acc[tid + stride];
            }
            stride >>= 1;
        }
        c[v] = acc[0];
        sc[v] = total;
    }
    vec![(0, near_f32(&c, &sc, F32_DOT))]
}

/// `backprop_layerforward(input, weights, partial, in_n, hid_n)`: products `w * in` stored
/// to shared memory, then a tree over `ty` (`w[ty] += w[ty + s]` for `ty % 2s == 0`). No
/// multiply feeds an add directly, so nothing contracts: bit for bit.
pub fn backprop_layerforward(x: &Ctx) -> Vec<(usize, Want)> {
    const B: usize = 16;
    let (input, w) = (x.f32(0), x.f32(1));
    let hid = x.int(4) as usize;
    let g = x.grid();
    let mut partial = x.f32(2);
    for by in 0..g[1] as usize {
        for bx in 0..g[0] as usize {
            for tx in 0..B {
                let col = bx * B + tx;
                let mut ws = [0.0f32; B];
                for (ty, slot) in ws.iter_mut().enumerate() {
                    let row = by * B + ty;
                    *slot = w[row * hid + col] * input[row];
                }
                let mut s = 1;
                while s < B {
                    for ty in (0..B).step_by(2 * s) {
                        ws[ty] += ws[ty + s];
                    }
                    s *= 2;
                }
                partial[by * hid + col] = ws[0];
            }
        }
    }
    vec![(2, exact_f32(&partial))]
}
