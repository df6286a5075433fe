#!/usr/bin/env python3
"""The papers' algorithms beside the named variants (issue 39): reads the `runs.csv` of
`paver sweep kernels/variants.toml` and prints, per launch and GPU, each Kway-TS / RB-TS
variant set's cycles and L2 accesses relative to LRR's, then per GPU and variant set the
geometric means and the counts the issue's targets name (high-locality launches with
fewer L2 accesses than LRR, faster than LRR; launches more than 2 % and 5 % slower).

    python3 tools/variants_table.py docs/reproduction/variants/runs.csv
"""
import csv
import math
import os
import sys
from collections import defaultdict

COLUMNS = [
    ("kway-ts", ""),
    ("kway-ts", "steal-cap"),
    ("kway-ts", "at-least-lrr;steal-cap"),
    ("rb-ts", ""),
    ("rb-ts", "steal-cap"),
    ("rb-ts", "at-least-lrr;steal-cap"),
]


def label(policy, variants):
    return f"{policy} {variants.replace(';', '+') or '(paper)'}"


def main(path):
    runs = defaultdict(dict)
    classes = {}
    for r in csv.DictReader(open(path, newline="")):
        if r["status"] != "ok":
            print(f"not ok: {r['launch']} {r['gpu']} {r['tb_policy']} {r['variants']}: {r['error']}")
            continue
        launch = os.path.join(os.path.basename(os.path.dirname(r["launch"])), os.path.basename(r["launch"]))
        key = (launch, r["gpu"])
        classes[key] = r["locality_class"]
        runs[key][(r["tb_policy"], r["variants"])] = (int(r["cycles"]), int(r["l2_accesses"]))
    head = " | ".join(f"{label(*c)}: cycles / L2" for c in COLUMNS)
    print(f"| launch | gpu | class | LRR cycles / L2 accesses | {head} |")
    print("|" + "---|" * (4 + len(COLUMNS)))
    ratios = defaultdict(list)
    for key in sorted(runs):
        d = runs[key]
        if ("lrr", "") not in d:
            continue
        lc, ll = d[("lrr", "")]
        cells = []
        for c in COLUMNS:
            if c not in d:
                cells.append("-")
                continue
            cy, l2 = d[c]
            cells.append(f"{cy / lc:.3f} / {l2 / ll:.3f}")
            ratios[(key[1], c)].append((cy / lc, l2 / ll, classes[key]))
        print(f"| {key[0]} | {key[1]} | {classes[key]} | {lc:,} / {ll:,} | " + " | ".join(cells) + " |")
    print()
    print("| gpu | policy | launches | geomean cycles | geomean L2 | high: fewer L2 | high: faster | > 2 % slower | > 5 % slower |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (gpu, c), xs in sorted(ratios.items()):
        gm = lambda v: math.exp(sum(math.log(a) for a in v) / len(v))
        high = [x for x in xs if x[2] == "high"]
        print(
            f"| {gpu} | {label(*c)} | {len(xs)} | {gm([x[0] for x in xs]):.3f} | {gm([x[1] for x in xs]):.3f} "
            f"| {sum(x[1] < 1 for x in high)} of {len(high)} | {sum(x[0] < 1 for x in high)} of {len(high)} "
            f"| {sum(x[0] > 1.02 for x in xs)} | {sum(x[0] > 1.05 for x in xs)} |"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/reproduction/variants/runs.csv")
