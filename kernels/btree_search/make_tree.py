#!/usr/bin/env python3
"""Deterministically build the B+tree and query files used by btree_search.

Usage: make_tree.py OUTDIR   (run by kernels/gen.py)

Writes little-endian int32 files:
  node_keys.bin    num_nodes * ORDER
  node_child.bin   num_nodes * ORDER
  records.bin      NUM_KEYS
  queries_small.bin  64 queries
  queries_paper.bin  65536 queries
Layout: see btree_search.cu. Nodes are numbered level by level from the root (node 0).
"""
import os
import struct
import sys

ORDER = 64
NUM_KEYS = 100000
INT_MIN = -2**31
INT_MAX = 2**31 - 1


class SplitMix64:
    def __init__(self, seed):
        self.s = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n


def build():
    rng = SplitMix64(2024)
    # distinct sorted keys: random gaps in [1, 20]
    keys = []
    k = 0
    for _ in range(NUM_KEYS):
        k += 1 + rng.below(20)
        keys.append(k)
    records = [(x * 7 + 3) & 0x7FFFFFFF for x in keys]

    # leaves: ORDER keys each
    levels = []  # each level: list of (keys list, child list, min key)
    leaves = []
    for i in range(0, NUM_KEYS, ORDER):
        ks = keys[i:i + ORDER]
        leaves.append((ks, list(range(i, i + len(ks)))))
    levels.append(leaves)
    while len(levels[-1]) > 1:
        below = levels[-1]
        level = []
        for i in range(0, len(below), ORDER):
            group = below[i:i + ORDER]
            level.append(([g[0][0] for g in group], list(range(i, i + len(group)))))
        levels.append(level)
    levels.reverse()  # root first
    height = len(levels) - 1

    # number nodes level by level; child indices are relative to the next level
    node_keys, node_child = [], []
    first = 0
    for li, level in enumerate(levels):
        next_first = first + len(level)
        for ks, ch in level:
            ks = list(ks)
            if li < height:
                ks[0] = INT_MIN
                ch = [next_first + c for c in ch]
            pad = ORDER - len(ks)
            node_keys += ks + [INT_MAX] * pad
            node_child += list(ch) + [0] * pad
        first = next_first

    def queries(n, seed):
        r = SplitMix64(seed)
        out = []
        for _ in range(n):
            if r.below(8) == 0:
                out.append(r.below(keys[-1] + 100))  # mostly misses
            else:
                out.append(keys[r.below(NUM_KEYS)])
        return out

    return height, node_keys, node_child, records, queries(64, 1), queries(65536, 2)


def write(path, vals):
    with open(path, "wb") as f:
        f.write(struct.pack("<%di" % len(vals), *vals))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    height, nk, nc, rec, qs, qp = build()
    assert height == 2, height
    write(os.path.join(out, "node_keys.bin"), nk)
    write(os.path.join(out, "node_child.bin"), nc)
    write(os.path.join(out, "records.bin"), rec)
    write(os.path.join(out, "queries_small.bin"), qs)
    write(os.path.join(out, "queries_paper.bin"), qp)


if __name__ == "__main__":
    main()
