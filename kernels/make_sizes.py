#!/usr/bin/env python3
"""Writes kernels/<dir>/sizes<TBS>[.<kernel>].json: every high-locality corpus kernel at six
launch sizes, from below one wave on every configuration to eight waves or more on Volta,
for the size sweep of issue 39 (kernels/sizes.toml, docs/REPRODUCTION.md).

The kernels are §1's high-locality set (docs/REPRODUCTION.md: at least half of the data
references go to units other TBs read) plus mm_naive, the paper's canonical kernel. Each
launch is the kernel's small launch (`small*.json`: same initialisers and recorded ptxas
`resources`) with the problem grown with the grid, as kernels/make_waves.py grows it (the
`waves` launch is the 2,304-TB point of the same family, rewritten here under this name).

TB counts (2-D grids of side s = 4, 8, 16, 32, 48, 72): 16, 64, 256, 1,024, 2,304, 5,184.
One wave of 256-thread TBs is 15 x 3-8 TBs on gtx480, 28 x 6-8 on titanx_pascal, 80 x 6-8
on titanv, so 16 TBs is below one wave everywhere and 5,184 is 8.1 waves or more on titanv
(43 or more on gtx480). stencil2d's 128-thread TBs (16 per SM) get twice the TBs at each
step (2 x 16 to 2 x 5,184); jacobi3d's grid grows in depth past 256 TBs (5,120 at the
last step). Deterministic: run it again and nothing changes.

    python3 kernels/make_sizes.py
"""
from derive_launch import derive, write

SIDES = [4, 8, 16, 32, 48, 72]


def conv2d(s):
    r, c = 8 * s, 32 * s
    return [s, s, 1], {0: ("len", r * c), 1: ("len", r * c), 2: ("value", r), 3: ("value", c)}


def srad(s):
    n = 16 * s
    return [s, s, 1], {**{i: ("len", n * n) for i in range(6)}, 6: ("value", n), 7: ("value", n)}


def hotspot(s):
    # 14 x 14 output tiles per 16 x 16 TB.
    n = 14 * s
    return [s, s, 1], {0: ("len", n * n), 1: ("len", n * n), 2: ("len", n * n),
                       3: ("value", n), 4: ("value", n)}


def jacobi3d(s):
    # 16 x 16 x 4 TBs over an n x n x depth volume; the 2,304-TB point is the waves launch
    # (16 x 16 x 9). Sides below 16 shrink the plane, larger ones add depth.
    a = min(s, 16)
    z = max(1, round(s * s / 256))
    n, depth = 8 * a, 4 * z
    return [a, a, z], {0: ("len", n * n * depth), 1: ("len", n * n * depth),
                       2: ("value", n), 3: ("value", n), 4: ("value", depth)}


def stencil2d(s):
    # 128-thread TBs of 32 x 4 outputs (16 per SM where 256-thread TBs fit 8): 2 s^2 TBs,
    # twice a 256-thread kernel's at side s.
    gx, gy = s, 2 * s
    cols, rows = 32 * gx, 4 * gy
    return [gx, gy, 1], {0: ("len", cols * rows), 1: ("len", cols * rows),
                         2: ("value", cols), 3: ("value", rows)}


def transpose(s):
    n = 16 * s
    return [s, s, 1], {0: ("len", n * n), 1: ("len", n * n), 2: ("value", n), 3: ("value", n)}


def syrk(s):
    # 32 x 8 threads per TB: grid (n / 32) x (n / 8), TBs = n^2 / 256 = s^2; m = 16.
    n = 16 * s
    return [n // 32, n // 8, 1], {0: ("len", n * 16), 1: ("len", n * n),
                                  4: ("value", n), 5: ("value", 16)}


def syr2k(s):
    n = 16 * s
    return [s, s, 1], {0: ("len", n * 8), 1: ("len", n * 8), 2: ("len", n * n),
                       5: ("value", n), 6: ("value", 8)}


def square(s):
    # mm_tiled, mm_naive: n x n matrices, one 16 x 16 tile per TB; the k loop is n long.
    n = 16 * s
    return [s, s, 1], {0: ("len", n * n), 1: ("len", n * n), 2: ("len", n * n), 3: ("value", n)}


# dir, small launch, output suffix, launch of side s
SPECS = [
    ("conv2d", "small.json", "", conv2d),
    ("srad", "small.srad_update.json", ".srad_update", srad),
    ("srad", "small.srad_diffusion_coeff.json", ".srad_diffusion_coeff", srad),
    ("hotspot", "small.json", "", hotspot),
    ("jacobi3d", "small.json", "", jacobi3d),
    ("stencil2d", "small.json", "", stencil2d),
    ("transpose", "small.json", "", transpose),
    ("syrk", "small.json", "", syrk),
    ("syr2k", "small.json", "", syr2k),
    ("mm_tiled", "small.json", "", square),
    ("mm_naive", "small.json", "", square),
]


def main():
    for d, src, suffix, f in SPECS:
        for s in SIDES:
            grid, changes = f(s)
            tbs = grid[0] * grid[1] * grid[2]
            write(d, f"sizes{tbs:04d}{suffix}.json", derive(d, src, grid, changes))


if __name__ == "__main__":
    main()
