#!/usr/bin/env python3
"""Write the box arrays of lavamd's launches: box_str[boxes1d^3] (656 bytes each, little
endian) built as Rodinia 3.1's lavaMD host code (main.c) builds them, boxes in x-fastest
order, each with its in-bounds neighbours (of the 26 around it) in (z, y, x) offset order.

    boxes_small.bin   boxes1d = 2    (8 boxes, 7 neighbours each)
    boxes_paper.bin   boxes1d = 10   (1,000 boxes: Rodinia's `-boxes1d 10`)

Usage: make_boxes.py OUTDIR   (run by kernels/gen.py)
"""
import os
import struct
import sys

NUMBER_PAR_PER_BOX = 100
NEI = struct.Struct("<4iq")          # nei_str: int x, y, z, number; long offset (24 bytes)
BOX = struct.Struct("<4iqi4x")       # box_str head: int x, y, z, number; long offset; int nn
assert NEI.size == 24 and BOX.size == 32


def boxes(b1d):
    out = bytearray()
    nh = 0
    for i in range(b1d):              # z
        for j in range(b1d):          # y
            for k in range(b1d):      # x
                nei = []
                for l in (-1, 0, 1):
                    for m in (-1, 0, 1):
                        for n in (-1, 0, 1):
                            inside = 0 <= i + l < b1d and 0 <= j + m < b1d and 0 <= k + n < b1d
                            if inside and not (l == 0 and m == 0 and n == 0):
                                x, y, z = k + n, j + m, i + l
                                number = z * b1d * b1d + y * b1d + x
                                nei.append(NEI.pack(x, y, z, number, number * NUMBER_PAR_PER_BOX))
                out += BOX.pack(k, j, i, nh, nh * NUMBER_PAR_PER_BOX, len(nei))
                out += b"".join(nei) + bytes(NEI.size * (26 - len(nei)))
                nh += 1
    assert len(out) == 656 * b1d ** 3
    return bytes(out)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, b1d in (("boxes_small.bin", 2), ("boxes_paper.bin", 10)):
        with open(os.path.join(out, name), "wb") as f:
            f.write(boxes(b1d))


if __name__ == "__main__":
    main()
