//! Exactness, continued: the remaining data-independent corpus kernels (and the
//! data-independent loads of `histogram`), each reference mirroring its `.cu` file.

mod common;

use common::*;
use launch::BoundLaunch;

fn dims(b: &BoundLaunch) -> ([i64; 3], [i64; 3]) {
    (
        [b.block.x as i64, b.block.y as i64, b.block.z as i64],
        [b.grid.x as i64, b.grid.y as i64, b.grid.z as i64],
    )
}

#[test]
fn hotspot() {
    check("hotspot", "small.json", 4, |b, u| {
        let (cols, rows) = (scalar(b, 3), scalar(b, 4));
        mirror(b, u, |c, t, touch| {
            let gx = c[0] * 14 + t[0] - 1;
            let gy = c[1] * 14 + t[1] - 1;
            let cx = gx.max(0).min(cols - 1);
            let cy = gy.max(0).min(rows - 1);
            touch(1, cy * cols + cx, 4, 4);
            touch(0, cy * cols + cx, 4, 4);
        })
    });
}

#[test]
fn sad() {
    check("sad", "small.json", 2, |b, u| {
        let (w, h) = (scalar(b, 3), scalar(b, 4));
        mirror(b, u, |c, t, touch| {
            let tt = t[1] * 16 + t[0];
            let (x0, y0) = (c[0] * 4, c[1] * 4);
            if tt < 16 {
                touch(0, (y0 + tt / 4) * w + x0 + tt % 4, 2, 2);
            }
            let (dx, dy) = (t[0] - 8, t[1] - 8);
            for r in 0..4 {
                let ry = (y0 + r + dy).max(0).min(h - 1);
                for cc in 0..4 {
                    let rx = (x0 + cc + dx).max(0).min(w - 1);
                    touch(1, ry * w + rx, 2, 2);
                }
            }
        })
    });
}

#[test]
fn mm_tiled() {
    check("mm_tiled", "small.json", 4, |b, u| {
        let n = scalar(b, 3);
        mirror(b, u, |c, t, touch| {
            let row = c[1] * 16 + t[1];
            let col = c[0] * 16 + t[0];
            for k in 0..(n + 15) / 16 {
                let (a_col, b_row) = (k * 16 + t[0], k * 16 + t[1]);
                if row < n && a_col < n {
                    touch(0, row * n + a_col, 4, 4);
                }
                if b_row < n && col < n {
                    touch(1, b_row * n + col, 4, 4);
                }
            }
        })
    });
}

#[test]
fn pathfinder() {
    check("pathfinder", "small.json", 4, |b, u| {
        let (cols, start, iters) = (scalar(b, 3), scalar(b, 4), scalar(b, 5));
        mirror(b, u, |c, t, touch| {
            let x = c[0] * (256 - 2 * iters) + t[0] - iters;
            let xc = x.max(0).min(cols - 1);
            touch(1, xc, 4, 4);
            for i in 0..iters {
                if t[0] > i && t[0] <= 254 - i {
                    touch(0, (start + i) * cols + xc, 4, 4);
                }
            }
        })
    });
}

#[test]
fn lud_step() {
    check("lud_step", "small.json", 4, |b, u| {
        let (md, off) = (scalar(b, 1), scalar(b, 2));
        mirror(b, u, |c, t, touch| {
            let grow = off + (c[1] + 1) * 16;
            let gcol = off + (c[0] + 1) * 16;
            for idx in [
                (off + t[1]) * md + gcol + t[0],
                (grow + t[1]) * md + off + t[0],
                (grow + t[1]) * md + gcol + t[0],
            ] {
                touch(0, idx, 4, 4);
            }
        })
    });
}

#[test]
fn fdtd3d() {
    check("fdtd3d", "small.json", 4, |b, u| {
        let (dx, dy, dz) = (scalar(b, 3), scalar(b, 4), scalar(b, 5));
        let (sx, sy) = (dx + 4, dy + 4);
        mirror(b, u, |c, t, touch| {
            let gx = c[0] * 32 + t[0];
            let gy = c[1] * 8 + t[1];
            for z in 0..dz {
                let ci = ((z + 2) * sy + gy + 2) * sx + gx + 2;
                let mut idx = vec![ci];
                if t[0] < 2 {
                    idx.extend([ci - 2, ci + 32]);
                }
                if t[1] < 2 {
                    idx.extend([ci - 2 * sx, ci + 8 * sx]);
                }
                for r in 1..=2 {
                    idx.extend([ci - r * sx * sy, ci + r * sx * sy]);
                }
                for i in idx {
                    touch(1, i, 4, 4);
                }
                for r in 0..3 {
                    touch(2, r, 4, 4);
                }
            }
        })
    });
}

#[test]
fn backprop() {
    check("backprop", "small.json", 4, |b, u| {
        let hid = scalar(b, 4);
        mirror(b, u, |c, t, touch| {
            let row = c[1] * 16 + t[1];
            let col = c[0] * 16 + t[0];
            if t[0] == 0 {
                touch(0, row, 4, 4);
            }
            touch(1, row * hid + col, 4, 4);
        })
    });
}

#[test]
fn storegpu_chunk_hash() {
    check(
        "storegpu_hash",
        "small.storegpu_chunk_hash.json",
        4,
        |b, u| {
            let (nc, cw) = (scalar(b, 2), scalar(b, 3));
            let (bd, _) = dims(b);
            mirror(b, u, |c, t, touch| {
                let ch = c[0] * bd[0] + t[0];
                if ch < nc {
                    for w in 0..cw {
                        touch(0, ch * cw + w, 4, 4);
                    }
                }
            })
        },
    );
}

#[test]
fn storegpu_sliding_hash() {
    check(
        "storegpu_hash",
        "small.storegpu_sliding_hash.json",
        1,
        |b, u| {
            let (nw, win) = (scalar(b, 2), scalar(b, 3));
            let (bd, _) = dims(b);
            mirror(b, u, |c, t, touch| {
                let i = c[0] * bd[0] + t[0];
                if i < nw {
                    for k in 0..win {
                        touch(0, i + k, 1, 1);
                    }
                }
            })
        },
    );
}

/// `for (i = blockIdx.x*blockDim.x + threadIdx.x; i < n; i += blockDim.x*gridDim.x)`.
fn grid_stride(b: &BoundLaunch, c: [i64; 3], t: [i64; 3], n: i64) -> impl Iterator<Item = i64> {
    let (bd, gd) = dims(b);
    (c[0] * bd[0] + t[0]..n).step_by((bd[0] * gd[0]) as usize)
}

#[test]
fn histogram() {
    for file in ["small.histogram_global.json", "small.histogram_shared.json"] {
        check("histogram", file, 1, |b, u| {
            let n = scalar(b, 2);
            mirror(b, u, |c, t, touch| {
                for i in grid_stride(b, c, t, n) {
                    touch(0, i, 1, 1);
                }
            })
        });
    }
}

#[test]
fn blackscholes() {
    check("blackscholes", "small.json", 4, |b, u| {
        let n = scalar(b, 7);
        mirror(b, u, |c, t, touch| {
            for i in grid_stride(b, c, t, n) {
                for p in [2, 3, 4] {
                    touch(p, i, 4, 4);
                }
            }
        })
    });
}

#[test]
fn scalar_prod() {
    check("scalar_prod", "small.json", 4, |b, u| {
        let (vn, en) = (scalar(b, 3), scalar(b, 4));
        let (_, gd) = dims(b);
        mirror(b, u, |c, t, touch| {
            for v in (c[0]..vn).step_by(gd[0] as usize) {
                for e in (t[0]..en).step_by(256) {
                    touch(1, v * en + e, 4, 4);
                    touch(2, v * en + e, 4, 4);
                }
            }
        })
    });
}
