#!/usr/bin/env python3
"""Writes kernels/<dir>/table2.json: the PAVER paper's own launch sizes (its Table 2, "Total
TB" and "Total data references") for the corpus kernels of its high-locality class whose
paper launch (`paper.json`) is larger than the paper's: SYRK, SYR2K, MM and HS. The
plan kernels/table2.toml runs them beside the paper launches that already have Table 2's
sizes (SRAD's two kernels, 16,384 TBs; BP, 4,096; PF, 463; BLK, 480).
docs/REPRODUCTION.md, section "The paper's Table 2 sizes", has the results.

Each launch is the kernel's paper launch (same parameters, initialisers and recorded ptxas
`resources`) with the problem set to Table 2's:
- SYRK: 256 TBs and 131,072 data references = A and C of 256 x 256 (n = m = 256; the
  corpus kernel's 32 x 8 TBs, as PolyBench/GPU's: 8 x 32 TBs);
- SYR2K: 256 TBs and 196,608 = A, B and C of 256 x 256 (n = m = 256, 16 x 16 TBs);
- MM: 169 TBs (13 x 13 TBs of 16 x 16 threads, n = 208; mm_naive and mm_tiled). Table 2's
  1,024 data references fit no square product of 169 such TBs and are not matched;
- HS: 524,288 data references = temperature and power of 512 x 512, Rodinia's temp_512.
  Table 2's 1,849 TBs (43 x 43) are Rodinia's pyramid height 2 (12 x 12 outputs per TB);
  the corpus kernel computes one step (14 x 14 outputs per 16 x 16 TB), so 512 x 512 is
  37 x 37 = 1,369 TBs.
Not written: TPACF (Parboil launches one TB per data set, 201 of them; the corpus kernel one
thread per point, so no TB count corresponds), DWT, BFS, SPMV, STO, MGS, SAD (low or no
locality, and structured differently from the benchmarks), BTR and HTW (not in the corpus).
Deterministic: run it again and nothing changes.

    python3 kernels/make_table2.py
"""
from derive_launch import derive, write

# dir, source launch, grid, {param index: ("value", v) or ("len", buffer elements)}
SPECS = [
    ("syrk", "paper.json", [8, 32, 1],
     {0: ("len", 256 * 256), 1: ("len", 256 * 256), 4: ("value", 256), 5: ("value", 256)}),
    ("syr2k", "paper.json", [16, 16, 1],
     {0: ("len", 256 * 256), 1: ("len", 256 * 256), 2: ("len", 256 * 256),
      5: ("value", 256), 6: ("value", 256)}),
    ("mm_naive", "paper.json", [13, 13, 1],
     {0: ("len", 208 * 208), 1: ("len", 208 * 208), 2: ("len", 208 * 208), 3: ("value", 208)}),
    ("mm_tiled", "paper.json", [13, 13, 1],
     {0: ("len", 208 * 208), 1: ("len", 208 * 208), 2: ("len", 208 * 208), 3: ("value", 208)}),
    # 14 x 14 outputs per 16 x 16 TB: ceil(512 / 14) = 37.
    ("hotspot", "paper.json", [37, 37, 1],
     {0: ("len", 512 * 512), 1: ("len", 512 * 512), 2: ("len", 512 * 512),
      3: ("value", 512), 4: ("value", 512)}),
]


def main():
    for d, src, grid, changes in SPECS:
        write(d, "table2.json", derive(d, src, grid, changes))


if __name__ == "__main__":
    main()
