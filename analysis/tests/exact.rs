//! Exactness: for data-independent kernels, every TB's footprint equals, unit for unit, a
//! brute-force enumeration written from the CUDA source's index arithmetic, for all three
//! PTX variants, at line, sector and element granularity.

mod common;

use common::*;
use launch::BoundLaunch;

#[test]
fn mm_naive() {
    check("mm_naive", "small.json", 4, |b, u| {
        let n = scalar(b, 3);
        mirror(b, u, |c, t, touch| {
            let col = c[0] * b.block.x as i64 + t[0];
            let row = c[1] * b.block.y as i64 + t[1];
            if row < n && col < n {
                for k in 0..n {
                    touch(0, row * n + k, 4, 4);
                    touch(1, k * n + col, 4, 4);
                }
            }
        })
    });
}

fn bx(b: &BoundLaunch) -> [i64; 3] {
    [b.block.x as i64, b.block.y as i64, b.block.z as i64]
}

#[test]
fn stencil2d() {
    check("stencil2d", "small.json", 8, |b, u| {
        let (nx, ny) = (scalar(b, 2), scalar(b, 3));
        mirror(b, u, |c, t, touch| {
            let i = c[0] * bx(b)[0] + t[0];
            let j = c[1] * bx(b)[1] + t[1];
            if i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1 {
                let k = j * nx + i;
                for idx in [k, k - 1, k + 1, k - nx, k + nx] {
                    touch(0, idx, 8, 8);
                }
            }
        })
    });
}

#[test]
fn transpose() {
    check("transpose", "small.json", 4, |b, u| {
        let (rows, cols) = (scalar(b, 2), scalar(b, 3));
        mirror(b, u, |c, t, touch| {
            let x = c[0] * bx(b)[0] + t[0];
            let y = c[1] * bx(b)[1] + t[1];
            if x < cols && y < rows {
                touch(0, y * cols + x, 4, 4);
            }
        })
    });
}

#[test]
fn conv2d() {
    check("conv2d", "small.json", 4, |b, u| {
        let (ni, nj) = (scalar(b, 2), scalar(b, 3));
        mirror(b, u, |c, t, touch| {
            let j = c[0] * bx(b)[0] + t[0];
            let i = c[1] * bx(b)[1] + t[1];
            if i > 0 && j > 0 && i < ni - 1 && j < nj - 1 {
                for di in -1..=1 {
                    for dj in -1..=1 {
                        touch(0, (i + di) * nj + (j + dj), 4, 4);
                    }
                }
            }
        })
    });
}

#[test]
fn gemv_unroll() {
    check("gemv_unroll", "small.json", 4, |b, u| {
        let (m, n, lda) = (scalar(b, 3), scalar(b, 4), scalar(b, 5));
        mirror(b, u, |c, t, touch| {
            let row = c[0] * bx(b)[0] + t[0];
            if row < m {
                for j in 0..n {
                    touch(0, row * lda + j, 4, 4);
                    touch(1, j, 4, 4);
                }
            }
        })
    });
}

#[test]
fn jacobi3d() {
    check("jacobi3d", "small.json", 4, |b, u| {
        let (nx, ny, nz) = (scalar(b, 2), scalar(b, 3), scalar(b, 4));
        mirror(b, u, |c, t, touch| {
            let x = c[0] * bx(b)[0] + t[0];
            let y = c[1] * bx(b)[1] + t[1];
            let z = c[2] * bx(b)[2] + t[2];
            if x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1 {
                let plane = nx * ny;
                let k = (z * ny + y) * nx + x;
                for idx in [k, k - 1, k + 1, k - nx, k + nx, k - plane, k + plane] {
                    touch(0, idx, 4, 4);
                }
            }
        })
    });
}

#[test]
fn syrk() {
    check("syrk", "small.json", 4, |b, u| {
        let (n, m) = (scalar(b, 4), scalar(b, 5));
        mirror(b, u, |c, t, touch| {
            let j = c[0] * bx(b)[0] + t[0];
            let i = c[1] * bx(b)[1] + t[1];
            if i < n && j < n {
                touch(1, i * n + j, 4, 4);
                for k in 0..m {
                    touch(0, i * m + k, 4, 4);
                    touch(0, j * m + k, 4, 4);
                }
            }
        })
    });
}

/// One thread per index along x: `i = ctaid.x * ntid.x + tid.x`.
fn gid(b: &BoundLaunch, c: [i64; 3], t: [i64; 3], d: usize) -> i64 {
    c[d] * bx(b)[d] + t[d]
}

#[test]
fn atax() {
    check("atax", "small.atax_kernel1.json", 4, |b, u| {
        let (nx, ny) = (scalar(b, 3), scalar(b, 4));
        mirror(b, u, |c, t, touch| {
            let i = gid(b, c, t, 0);
            if i < nx {
                for j in 0..ny {
                    touch(0, i * ny + j, 4, 4);
                    touch(1, j, 4, 4);
                }
            }
        })
    });
    check("atax", "small.atax_kernel2.json", 4, |b, u| {
        let (nx, ny) = (scalar(b, 3), scalar(b, 4));
        mirror(b, u, |c, t, touch| {
            let j = gid(b, c, t, 0);
            if j < ny {
                for i in 0..nx {
                    touch(0, i * ny + j, 4, 4);
                    touch(1, i, 4, 4);
                }
            }
        })
    });
}

#[test]
fn mvt() {
    for (file, transposed) in [
        ("small.mvt_kernel1.json", false),
        ("small.mvt_kernel2.json", true),
    ] {
        check("mvt", file, 4, |b, u| {
            let n = scalar(b, 3);
            mirror(b, u, |c, t, touch| {
                let i = gid(b, c, t, 0);
                if i < n {
                    touch(1, i, 4, 4);
                    for j in 0..n {
                        let a = if transposed { j * n + i } else { i * n + j };
                        touch(0, a, 4, 4);
                        touch(2, j, 4, 4);
                    }
                }
            })
        });
    }
}

#[test]
fn syr2k() {
    check("syr2k", "small.json", 8, |b, u| {
        let (n, m) = (scalar(b, 5), scalar(b, 6));
        mirror(b, u, |c, t, touch| {
            let j = gid(b, c, t, 0);
            let i = gid(b, c, t, 1);
            if i < n && j < n {
                touch(2, i * n + j, 8, 8);
                for k in 0..m {
                    for p in [0, 1] {
                        touch(p, i * m + k, 8, 8);
                        touch(p, j * m + k, 8, 8);
                    }
                }
            }
        })
    });
}

#[test]
fn dwt2d() {
    check("dwt2d", "small.json", 4, |b, u| {
        let (rows, cols) = (scalar(b, 2), scalar(b, 3));
        let (hr, hc) = (rows / 2, cols / 2);
        mirror(b, u, |c, t, touch| {
            let x = gid(b, c, t, 0);
            let y = gid(b, c, t, 1);
            if x < hc && y < hr {
                for (dy, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    touch(0, (2 * y + dy) * cols + 2 * x + dx, 4, 4);
                }
            }
        })
    });
}

#[test]
fn doitgen() {
    check("doitgen", "small.json", 8, |b, u| {
        let (nr, nq, np) = (scalar(b, 3), scalar(b, 4), scalar(b, 5));
        mirror(b, u, |c, t, touch| {
            let p = gid(b, c, t, 0);
            let q = gid(b, c, t, 1);
            let r = c[2];
            if p < np && q < nq && r < nr {
                for k in 0..np {
                    touch(0, (r * nq + q) * np + k, 8, 8);
                    touch(1, k * np + p, 8, 8);
                }
            }
        })
    });
}

#[test]
fn srad() {
    check("srad", "small.srad_diffusion_coeff.json", 4, |b, u| {
        let (rows, cols) = (scalar(b, 6), scalar(b, 7));
        mirror(b, u, |c, t, touch| {
            let cc = gid(b, c, t, 0);
            let r = gid(b, c, t, 1);
            if r < rows && cc < cols {
                let rn = if r > 0 { r - 1 } else { 0 };
                let rs = if r < rows - 1 { r + 1 } else { rows - 1 };
                let cw = if cc > 0 { cc - 1 } else { 0 };
                let ce = if cc < cols - 1 { cc + 1 } else { cols - 1 };
                for idx in [
                    r * cols + cc,
                    rn * cols + cc,
                    rs * cols + cc,
                    r * cols + cw,
                    r * cols + ce,
                ] {
                    touch(0, idx, 4, 4);
                }
            }
        })
    });
    check("srad", "small.srad_update.json", 4, |b, u| {
        let (rows, cols) = (scalar(b, 6), scalar(b, 7));
        mirror(b, u, |c, t, touch| {
            let cc = gid(b, c, t, 0);
            let r = gid(b, c, t, 1);
            if r < rows && cc < cols {
                let idx = r * cols + cc;
                let rs = if r < rows - 1 { r + 1 } else { rows - 1 };
                let ce = if cc < cols - 1 { cc + 1 } else { cols - 1 };
                for p in [0, 2, 3, 4, 5] {
                    touch(p, idx, 4, 4);
                }
                touch(1, idx, 4, 4);
                touch(1, rs * cols + cc, 4, 4);
                touch(1, r * cols + ce, 4, 4);
            }
        })
    });
}
