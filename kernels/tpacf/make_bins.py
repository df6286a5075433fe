#!/usr/bin/env python3
"""Write bounds.bin for tpacf: 33 little-endian float32 dot-product boundaries, descending,
cos of angles spaced logarithmically from 0.01 to 180 degrees (bounds[0] = 1, bounds[32] = -1).

Usage: make_bins.py OUTDIR   (run by kernels/gen.py)
"""
import math
import os
import struct
import sys

BINS = 32


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    vals = [1.0]
    lo, hi = math.log10(0.01), math.log10(180.0)
    for k in range(1, BINS):
        deg = 10.0 ** (lo + (hi - lo) * k / BINS)
        vals.append(round(math.cos(math.radians(deg)), 6))
    vals.append(-1.0)
    with open(os.path.join(out, "bounds.bin"), "wb") as f:
        f.write(struct.pack("<%df" % len(vals), *vals))


if __name__ == "__main__":
    main()
