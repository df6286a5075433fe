#!/usr/bin/env python3
"""Writes kernels/<dir>/waves*.json: launches of several waves for the timing simulator's
TB-grouping evidence (docs/VALIDATION.md, "TB grouping in the timing simulator").

Each launch is the kernel's small launch (`small*.json`: same parameters, initialisers and
recorded ptxas `resources`) with the problem enlarged so that the grid holds more TBs than
every configuration runs at once (SMs x TBs per SM: gtx480 15 x 3-8, titanx_pascal 28 x 6-8,
titanv 80 x 6-8, h100 132 x 8 for 256-thread TBs; 16 per SM for 128-thread TBs) -- about
2,300 TBs of 256 threads (2.2 waves on H100, 3.6 on Volta, 10 on Pascal, 38+ on Fermi) --
while keeping the per-thread work small enough for the simulator (inner dimensions of the
matrix kernels stay small). Deterministic: run it again and nothing changes.

    python3 kernels/make_waves.py
"""
from derive_launch import derive, write

# dir, small launch, output, grid, {param index: new value or buffer len}, comment
SPECS = [
    ("conv2d", "small.json", "waves.json", [48, 48, 1],
     {0: ("len", 384 * 1536), 1: ("len", 384 * 1536), 2: ("value", 384), 3: ("value", 1536)}),
    ("srad", "small.srad_update.json", "waves.srad_update.json", [48, 48, 1],
     {**{i: ("len", 768 * 768) for i in range(6)}, 6: ("value", 768), 7: ("value", 768)}),
    ("srad", "small.srad_diffusion_coeff.json", "waves.srad_diffusion_coeff.json", [48, 48, 1],
     {**{i: ("len", 768 * 768) for i in range(6)}, 6: ("value", 768), 7: ("value", 768)}),
    # 14x14 output tiles per 16x16 TB.
    ("hotspot", "small.json", "waves.json", [48, 48, 1],
     {0: ("len", 672 * 672), 1: ("len", 672 * 672), 2: ("len", 672 * 672),
      3: ("value", 672), 4: ("value", 672)}),
    ("jacobi3d", "small.json", "waves.json", [16, 16, 9],
     {0: ("len", 128 * 128 * 36), 1: ("len", 128 * 128 * 36),
      2: ("value", 128), 3: ("value", 128), 4: ("value", 36)}),
    # 128-thread TBs: 16 per SM, so twice the TBs.
    ("stencil2d", "small.json", "waves.json", [32, 160, 1],
     {0: ("len", 1024 * 640), 1: ("len", 1024 * 640), 2: ("value", 1024), 3: ("value", 640)}),
    ("transpose", "small.json", "waves.json", [48, 48, 1],
     {0: ("len", 768 * 768), 1: ("len", 768 * 768), 2: ("value", 768), 3: ("value", 768)}),
    # One thread per 2x2 input block.
    ("dwt2d", "small.json", "waves.json", [48, 48, 1],
     {0: ("len", 1536 * 1536), 1: ("len", 1536 * 1536), 2: ("value", 1536), 3: ("value", 1536)}),
    # n x n output, inner dimension m kept small.
    ("syrk", "small.json", "waves.json", [24, 96, 1],
     {0: ("len", 768 * 16), 1: ("len", 768 * 768), 4: ("value", 768), 5: ("value", 16)}),
    ("syr2k", "small.json", "waves.json", [48, 48, 1],
     {0: ("len", 768 * 8), 1: ("len", 768 * 8), 2: ("len", 768 * 768),
      5: ("value", 768), 6: ("value", 8)}),
    ("backprop", "small.json", "waves.json", [1, 2304, 1],
     {0: ("len", 36864), 1: ("len", 36864 * 16), 2: ("len", 2304 * 16), 3: ("value", 36864)}),
    # 256 - 2 * iters = 248 columns per TB.
    ("pathfinder", "small.json", "waves.json", [2304, 1, 1],
     {0: ("len", 5 * 571392), 1: ("len", 571392), 2: ("len", 571392), 3: ("value", 571392)}),
    # The k loop is n long: n = 576 (36 x 36 TBs, 1.2 waves on H100) is what the simulator
    # affords.
    ("mm_tiled", "small.json", "waves.json", [36, 36, 1],
     {0: ("len", 576 * 576), 1: ("len", 576 * 576), 2: ("len", 576 * 576), 3: ("value", 576)}),
]


def main():
    for d, src, dst, grid, changes in SPECS:
        write(d, dst, derive(d, src, grid, changes))


if __name__ == "__main__":
    main()
