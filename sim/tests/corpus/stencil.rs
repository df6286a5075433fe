//! CPU mirrors of the grid stencils and image kernels.
//!
//! Sums of neighbours without products are bit for bit (same additions in the same order);
//! where a product feeds an add the compiler may contract it to `fma.rn`, so the check allows
//! a few roundings of the terms' magnitudes (`F32_FEW`).

use super::{exact_f32, exact_f64, exact_i32, exact_u32, near_f32, Ctx, Want};

/// A handful of f32 roundings of the scale: FMA contraction of a short expression.
const F32_FEW: f64 = 8.0 * f32::EPSILON as f64;

fn clamp(v: i32, lo: i32, hi: i32) -> i32 {
    v.max(lo).min(hi)
}

/// `hotspot(power, temp_src, temp_dst, cols, rows, cap, rx, ry, rz, step, amb_temp)`:
/// overlapping 16x16 tiles with a one-cell halo, so every cell sees its clamped neighbours;
/// `step / cap * (...)` added to `c` contracts (and `- 2 c` may), hence [`F32_FEW`].
pub fn hotspot(x: &Ctx) -> Vec<(usize, Want)> {
    let (power, t) = (x.f32(0), x.f32(1));
    let (cols, rows) = (x.int(3), x.int(4));
    let (cap, rx, ry, rz, step, amb) = (
        x.float(5),
        x.float(6),
        x.float(7),
        x.float(8),
        x.float(9),
        x.float(10),
    );
    let mut out = x.f32(2);
    let mut sc = vec![0.0f32; out.len()];
    let at = |y: i32, xx: i32| t[(clamp(y, 0, rows - 1) * cols + clamp(xx, 0, cols - 1)) as usize];
    for gy in 0..rows {
        for gx in 0..cols {
            let c = at(gy, gx);
            let (north, south, west, east) = (
                at(gy - 1, gx),
                at(gy + 1, gx),
                at(gy, gx - 1),
                at(gy, gx + 1),
            );
            let sdc = step / cap;
            let p = power[(gy * cols + gx) as usize];
            let v = c + sdc
                * (p + (south + north - 2.0 * c) / ry
                    + (east + west - 2.0 * c) / rx
                    + (amb - c) / rz);
            let i = (gy * cols + gx) as usize;
            out[i] = v;
            sc[i] = c.abs()
                + sdc.abs()
                    * (p.abs()
                        + (south.abs() + north.abs() + 2.0 * c.abs()) / ry.abs()
                        + (east.abs() + west.abs() + 2.0 * c.abs()) / rx.abs()
                        + (amb.abs() + c.abs()) / rz.abs());
        }
    }
    vec![(2, near_f32(&out, &sc, F32_FEW))]
}

/// `pathfinder(wall, src, dst, cols, start_row, iters)`: `iters` rows of the dynamic
/// programme per launch. A block's shared row holds one virtual cell per thread (cells left of
/// 0 or right of `cols - 1` read the clamped column), and the pyramid keeps every output cell's
/// dependencies inside its block, so the result is the same DP on the virtual line. Exact.
pub fn pathfinder(x: &Ctx) -> Vec<(usize, Want)> {
    let (wall, src) = (x.i32(0), x.i32(1));
    let (cols, start, iters) = (x.int(3), x.int(4), x.int(5));
    let w = |row: i32, p: i32| wall[(row * cols + clamp(p, 0, cols - 1)) as usize];
    // Virtual positions -iters .. cols + iters.
    let span = (cols + 2 * iters) as usize;
    let mut prev: Vec<i32> = (0..span as i32)
        .map(|k| src[clamp(k - iters, 0, cols - 1) as usize])
        .collect();
    for i in 0..iters {
        let mut next = prev.clone();
        for k in 1..span - 1 {
            let m = prev[k - 1].min(prev[k].min(prev[k + 1]));
            next[k] = m + w(start + i, k as i32 - iters);
        }
        prev = next;
    }
    let mut dst = x.i32(2);
    for (xx, d) in dst.iter_mut().enumerate().take(cols as usize) {
        *d = prev[xx + iters as usize];
    }
    vec![(2, exact_i32(&dst))]
}

/// `srad_diffusion_coeff(J, C, dN, dS, dW, dE, rows, cols, q0sqr)`: the four differences to
/// the clamped neighbours are exact; the coefficient `C` in [0, 1] goes through squares,
/// divisions and `1 / (1 + (q - q0) / (q0 (1 + q0)))` whose derivative reaches about
/// `1 / 0.0525` = 19, on contracted sums of squares: absolute error up to 2e-5 allowed.
pub fn srad_diffusion_coeff(x: &Ctx) -> Vec<(usize, Want)> {
    let j = x.f32(0);
    let (rows, cols, q0) = (x.int(6), x.int(7), x.float(8));
    let mut outs: Vec<Vec<f32>> = (1..=5).map(|i| x.f32(i)).collect();
    for r in 0..rows {
        for c in 0..cols {
            let idx = (r * cols + c) as usize;
            let rn = if r > 0 { r - 1 } else { 0 };
            let rs = if r < rows - 1 { r + 1 } else { rows - 1 };
            let cw = if c > 0 { c - 1 } else { 0 };
            let ce = if c < cols - 1 { c + 1 } else { cols - 1 };
            let jc = j[idx];
            let n = j[(rn * cols + c) as usize] - jc;
            let s = j[(rs * cols + c) as usize] - jc;
            let w = j[(r * cols + cw) as usize] - jc;
            let e = j[(r * cols + ce) as usize] - jc;
            let g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
            let l = (n + s + w + e) / jc;
            let num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
            let den = 1.0 + 0.25 * l;
            let qsqr = num / (den * den);
            let den = (qsqr - q0) / (q0 * (1.0 + q0));
            let coeff = 1.0 / (1.0 + den);
            // The source's `c < 0 ? 0 : (c > 1 ? 1 : c)`; NaN passes through either way.
            let coeff = coeff.clamp(0.0, 1.0);
            for (o, v) in outs.iter_mut().zip([coeff, n, s, w, e]) {
                o[idx] = v;
            }
        }
    }
    let ones = vec![1.0f32; outs[0].len()];
    let mut wants = vec![(1, near_f32(&outs[0], &ones, 2e-5))];
    for (k, o) in outs.iter().enumerate().skip(1) {
        wants.push((k + 1, exact_f32(o)));
    }
    wants
}

/// `srad_update(J, C, dN, dS, dW, dE, rows, cols, lambda)`: `J += 0.25 lambda (c_n dN + c_s dS
/// + c_w dW + c_e dE)` with `c_w = C[idx]` as in the source; products contract.
pub fn srad_update(x: &Ctx) -> Vec<(usize, Want)> {
    let mut j = x.f32(0);
    let (cf, dn, ds, dw, de) = (x.f32(1), x.f32(2), x.f32(3), x.f32(4), x.f32(5));
    let (rows, cols, lambda) = (x.int(6), x.int(7), x.float(8));
    let mut sc = vec![0.0f32; j.len()];
    for r in 0..rows {
        for c in 0..cols {
            let idx = (r * cols + c) as usize;
            let rs = if r < rows - 1 { r + 1 } else { rows - 1 };
            let ce = if c < cols - 1 { c + 1 } else { cols - 1 };
            let (c_n, c_s, c_w, c_e) = (
                cf[idx],
                cf[(rs * cols + c) as usize],
                cf[idx],
                cf[(r * cols + ce) as usize],
            );
            let d = c_n * dn[idx] + c_s * ds[idx] + c_w * dw[idx] + c_e * de[idx];
            let ad = (c_n * dn[idx]).abs()
                + (c_s * ds[idx]).abs()
                + (c_w * dw[idx]).abs()
                + (c_e * de[idx]).abs();
            sc[idx] = j[idx].abs() + (0.25 * lambda).abs() * ad;
            j[idx] += 0.25 * lambda * d;
        }
    }
    vec![(0, near_f32(&j, &sc, F32_FEW))]
}

/// `conv2d(A, B, ni, nj)`: 3x3 weighted sum over the interior, in the source's term order;
/// products contract into the running sum.
pub fn conv2d(x: &Ctx) -> Vec<(usize, Want)> {
    let a = x.f32(0);
    let (ni, nj) = (x.int(2), x.int(3));
    let c: [[f32; 3]; 3] = [[0.2, -0.3, 0.4], [0.5, 0.6, 0.7], [-0.8, -0.9, 0.10]];
    let mut b = x.f32(1);
    let mut sc = vec![0.0f32; b.len()];
    for i in 1..ni - 1 {
        for j in 1..nj - 1 {
            let (mut v, mut s) = (0.0f32, 0.0f32);
            // Source order: column j-1 (rows i-1, i, i+1), then j, then j+1.
            for (dj, cj) in (-1..=1).zip(0..3) {
                for (di, ci) in (-1..=1).zip(0..3) {
                    let term = c[cj][ci] * a[((i + di) * nj + j + dj) as usize];
                    v = if dj == -1 && di == -1 { term } else { v + term };
                    s += term.abs();
                }
            }
            b[(i * nj + j) as usize] = v;
            sc[(i * nj + j) as usize] = s;
        }
    }
    vec![(1, near_f32(&b, &sc, F32_FEW))]
}

/// `dwt2d_haar(in, out, rows, cols)`: one Haar level, sums times 0.5; bit for bit.
pub fn dwt2d_haar(x: &Ctx) -> Vec<(usize, Want)> {
    let inp = x.f32(0);
    let (rows, cols) = (x.int(2) as usize, x.int(3) as usize);
    let (hr, hc) = (rows / 2, cols / 2);
    let mut out = x.f32(1);
    for y in 0..hr {
        for xx in 0..hc {
            let a = inp[(2 * y) * cols + 2 * xx];
            let b = inp[(2 * y) * cols + 2 * xx + 1];
            let c = inp[(2 * y + 1) * cols + 2 * xx];
            let d = inp[(2 * y + 1) * cols + 2 * xx + 1];
            out[y * cols + xx] = (a + b + c + d) * 0.5;
            out[y * cols + xx + hc] = (a - b + c - d) * 0.5;
            out[(y + hr) * cols + xx] = (a + b - c - d) * 0.5;
            out[(y + hr) * cols + xx + hc] = (a - b - c + d) * 0.5;
        }
    }
    vec![(1, exact_f32(&out))]
}

/// `fdtd3d(out, in, coeff, dimx, dimy, dimz)`: radius-2 star stencil over the padded volume,
/// marching z; the shared tile holds exactly the `in` values around the cell. The neighbour
/// sums are exact, `v += coeff[r] * sum` contracts.
pub fn fdtd3d(x: &Ctx) -> Vec<(usize, Want)> {
    const R: i32 = 2;
    let (inp, coeff) = (x.f32(1), x.f32(2));
    let (dimx, dimy, dimz) = (x.int(3), x.int(4), x.int(5));
    let t = x.threads();
    let (sx, sy) = (dimx + 2 * R, dimy + 2 * R);
    let sz = sx * sy;
    let mut out = x.f32(0);
    let mut sc = vec![0.0f32; out.len()];
    let at = |k: i32| inp[k as usize];
    for z in 0..dimz {
        for gy in 0..t[1] {
            for gx in 0..t[0] {
                let c = ((z + R) * sy + gy + R) * sx + gx + R;
                let mut v = coeff[0] * at(c);
                let mut s = v.abs();
                for r in 1..=R {
                    let sum = at(c - r)
                        + at(c + r)
                        + at(c - r * sx)
                        + at(c + r * sx)
                        + at(c - r * sz)
                        + at(c + r * sz);
                    v += coeff[r as usize] * sum;
                    s += (coeff[r as usize] * sum).abs();
                }
                out[c as usize] = v;
                sc[c as usize] = s;
            }
        }
    }
    vec![(0, near_f32(&out, &sc, F32_FEW))]
}

/// `jacobi3d_7pt(in, out, nx, ny, nz)`: `(1/7) * (sum of 7 points)`, a sum then one multiply;
/// bit for bit.
pub fn jacobi3d_7pt(x: &Ctx) -> Vec<(usize, Want)> {
    let inp = x.f32(0);
    let (nx, ny, nz) = (x.int(2), x.int(3), x.int(4));
    let plane = nx * ny;
    let mut out = x.f32(1);
    let at = |k: i32| inp[k as usize];
    for z in 1..nz - 1 {
        for y in 1..ny - 1 {
            for xx in 1..nx - 1 {
                let c = (z * ny + y) * nx + xx;
                out[c as usize] = (1.0f32 / 7.0)
                    * (at(c)
                        + at(c - 1)
                        + at(c + 1)
                        + at(c - nx)
                        + at(c + nx)
                        + at(c - plane)
                        + at(c + plane));
            }
        }
    }
    vec![(1, exact_f32(&out))]
}

/// `stencil2d_5pt(in, out, nx, ny)` in f64: `0.2 * (5-point sum)`; bit for bit.
pub fn stencil2d_5pt(x: &Ctx) -> Vec<(usize, Want)> {
    let inp = x.f64(0);
    let (nx, ny) = (x.int(2), x.int(3));
    let mut out = x.f64(1);
    let at = |k: i32| inp[k as usize];
    for j in 1..ny - 1 {
        for i in 1..nx - 1 {
            let c = j * nx + i;
            out[c as usize] = 0.2 * (at(c) + at(c - 1) + at(c + 1) + at(c - nx) + at(c + nx));
        }
    }
    vec![(1, exact_f64(&out))]
}

/// `sad_4x4(cur, ref, sads, width, height)`: per 4x4 macroblock and each of the 16x16
/// displacements in [-8, 8), the sum of absolute differences against the clamped reference
/// frame; integers, exact.
pub fn sad_4x4(x: &Ctx) -> Vec<(usize, Want)> {
    const MB: i32 = 4;
    const RANGE: i32 = 8;
    let (cur, refr) = (x.u16(0), x.u16(1));
    let (width, height) = (x.int(3), x.int(4));
    let g = x.grid();
    let mut sads = x.u32(2);
    for by in 0..g[1] {
        for bx in 0..g[0] {
            let (x0, y0) = (bx * MB, by * MB);
            let mb = by * g[0] + bx;
            for ty in 0..2 * RANGE {
                for tx in 0..2 * RANGE {
                    let (dx, dy) = (tx - RANGE, ty - RANGE);
                    let mut s = 0u32;
                    for r in 0..MB {
                        let ry = clamp(y0 + r + dy, 0, height - 1);
                        for c in 0..MB {
                            let rx = clamp(x0 + c + dx, 0, width - 1);
                            let a = i32::from(cur[((y0 + r) * width + x0 + c) as usize]);
                            let b = i32::from(refr[(ry * width + rx) as usize]);
                            s = s.wrapping_add((a - b).unsigned_abs());
                        }
                    }
                    sads[(mb * 4 * RANGE * RANGE + ty * 2 * RANGE + tx) as usize] = s;
                }
            }
        }
    }
    vec![(2, exact_u32(&sads))]
}
