#!/usr/bin/env python3
"""PAVER Table 2 beside paver's: `paver analyze --granularity element` on the corpus's launches
of the paper's benchmarks (at the paper's Table 2 sizes where kernels/make_table2.py wrote them,
else the benchmark's paper launch), and the Markdown table of docs/REPRODUCTION.md §8.

    python3 kernels/table2_stats.py run     # analyses -> docs/reproduction/table2_element/stats.json
    python3 kernels/table2_stats.py table   # stats.json -> the Markdown table on stdout
    python3 kernels/table2_stats.py jit RUNS.csv   # speedups with the analysis time, from a
                                                   # sweep's runs.csv (committed reports have no
                                                   # runs.jsonl for `paver report` to redo)

`run` takes `--paver PATH` (default target/release/paver), `--timeout S` per launch (default 600)
and `--only NAME` (repeatable: a launch's `dir/stem`). It keeps the stats of launches it does
not run, so a slow launch can be run on its own. Each launch is analysed with

    paver analyze PTX --launch LAUNCH --granularity element --no-descriptors -q -o OUT.json

and its `stats`, grid, coverage and wall seconds are kept (the analysis JSON itself, with the
edge list, is not). Deterministic apart from `wall_s`.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "reproduction", "table2_element", "stats.json")

# The paper's Table 2: SpScore, Total TB, Total data references, Shared TB, Degree of sharing.
PAPER = [
    ("HS", "Hotspot", 0.995823097, 1849, 524288, 1849, 0.009194),
    ("PF", "Pathfinder", 0.995689675, 463, 2100000, 463, 0.036717),
    ("STO", "StoreGPU", 0.99480523, 384, 49164, 384, 0.044271),
    ("BFS", "Breadth first search", 0.006408691, 3907, 7811036, 3907, 0.066406),
    ("SRAD", "SRAD", 0.977020264, 16384, 4196352, 16384, 0.066406),
    ("TPACF", "TPACF", 0.745055815, 201, 148388, 201, 0.084577),
    ("MM", "Matrix-multiply", 0.857988166, 169, 1024, 169, 0.100592),
    ("SYR2K", "Symmetric rank-2k", 0.4140625, 256, 196608, 256, 0.265625),
    ("SYRK", "Symmetric rank-k", 0.4140625, 256, 131072, 256, 0.265625),
    ("HTW", "Heart Wall", 0.923875433, 51, 78135, 51, 0.333333),
    ("MGS", "Merge Sort", 0.939453125, 32768, 8454144, 32768, 0.375),
    ("BTR", "B+ Tree", 0.000167, 10000, 674287, 10000, 0.0017),
    ("DWT", "Discrete wavelet", 0.862603306, 4096, 65536, 4096, 0.386364),
    ("SPMV", "SpMV", 0.430555556, 765, 6981392, 765, 0.472222),
    ("MUM", "MummerGPU", 1, 196, 1055946, 0, None),
    ("SAD", "Sum of Absolute Differences", 1, 1584, 25344, 0, None),
    ("BLK", "Black scholes", 1, 480, 6000000, 0, None),
    ("BP", "Back-propagation", 1, 4096, 1114112, 0, None),
]

# Benchmark -> the corpus launches standing for it (kernels/DIR/STEM.json). Several launches
# of one benchmark are its kernels (averaged, as the paper averages over an application's
# kernels), except MM, whose two are two implementations of the one kernel.
LAUNCHES = {
    "HS": ["hotspot/table2"],
    "PF": ["pathfinder/paper"],
    "STO": ["storegpu_hash/paper.storegpu_chunk_hash", "storegpu_hash/paper.storegpu_sliding_hash"],
    "BFS": ["bfs/paper.bfs_expand", "bfs/paper.bfs_update"],
    "SRAD": ["srad/paper.srad_diffusion_coeff", "srad/paper.srad_update"],
    "TPACF": ["tpacf/paper"],
    "MM": ["mm_naive/table2", "mm_tiled/table2"],
    "SYR2K": ["syr2k/table2"],
    "SYRK": ["syrk/table2"],
    "MGS": ["mergesort_step/paper"],
    "BTR": ["btree_search/paper"],
    "DWT": ["dwt2d/paper"],
    "SPMV": ["spmv_csr/paper.spmv_csr_scalar", "spmv_csr/paper.spmv_csr_vector"],
    "SAD": ["sad/paper"],
    "BLK": ["blackscholes/paper"],
    "BP": ["backprop/paper"],
}
AVERAGED = {"STO", "BFS", "SRAD", "SPMV"}


def ptx_of(name):
    d = os.path.join(ROOT, "kernels", name.split("/")[0])
    (ptx,) = [f for f in os.listdir(d) if f.endswith(".compute_70.ptx")]
    return os.path.join(d, ptx)


def load():
    if os.path.exists(OUT):
        with open(OUT) as f:
            return json.load(f)
    return {}


def run(args):
    paver = os.path.join(ROOT, "target", "release", "paver")
    timeout, only = 600, []
    while args:
        a = args.pop(0)
        if a == "--paver":
            paver = args.pop(0)
        elif a == "--timeout":
            timeout = int(args.pop(0))
        elif a == "--only":
            only.append(args.pop(0))
        else:
            sys.exit(f"unknown argument {a}")
    stats = load()
    names = [n for ns in LAUNCHES.values() for n in ns if not only or n in only]
    for name in names:
        launch = os.path.join("kernels", name + ".json")
        ptx = os.path.relpath(ptx_of(name), ROOT)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "a.json")
            cmd = [paver, "analyze", ptx, "--launch", launch, "--granularity", "element",
                   "--no-descriptors", "-q", "-o", out]
            t = time.monotonic()
            try:
                p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
                wall = time.monotonic() - t
            except subprocess.TimeoutExpired:
                stats[name] = {"error": f"over {timeout} s", "launch": launch}
                print(f"{name}: over {timeout} s", file=sys.stderr)
                continue
            if p.returncode != 0:
                stats[name] = {"error": p.stderr.strip()[-400:], "launch": launch}
                print(f"{name}: failed: {p.stderr.strip()[-400:]}", file=sys.stderr)
                continue
            with open(out) as f:
                a = json.load(f)
        stats[name] = {
            "launch": launch,
            "ptx": ptx,
            "kernel": a["kernel"],
            "grid": a["grid"],
            "block": a["block"],
            "granularity": a["granularity"],
            "resolved_fraction": a["resolved_fraction"],
            "coverage": a["coverage"],
            "stats": a["stats"],
            "wall_s": round(wall, 2),
        }
        print(f"{name}: {wall:.1f} s", file=sys.stderr)
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w") as f:
            json.dump(stats, f, indent=1, sort_keys=True)
            f.write("\n")


def g(x, digits=4):
    if x is None:
        return "-"
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.{digits}f}"


def table():
    stats = load()
    head = ("| benchmark | launch (corpus) | SpScore paper / paver | Total TB paper / paver | "
            "Total data refs paper / paver distinct (Σ per TB) | Shared TB paper / paver | "
            "Degree of sharing paper | paver `degree_fraction` (mean degree) | "
            "paver `degree_of_sharing` |")
    print(head)
    print("|---|---|---|---|---|---|---:|---:|---:|")
    for (b, _, sp, tbs, refs, shared, dos) in PAPER:
        launches = LAUNCHES.get(b, [])
        rows = [(n, stats.get(n)) for n in launches]
        if not rows:
            print(f"| {b} | not in the corpus | {g(sp)} / - | {g(tbs)} / - | {g(refs)} / - | "
                  f"{g(shared)} / - | {g(dos, 6)} | - | - |")
            continue
        got = [(n, s) for n, s in rows if s and "stats" in s]
        for n, s in rows:
            if not s or "stats" not in s:
                why = (s or {}).get("error", "not run")
                print(f"| {b} | {n}: {why} | {g(sp)} / - | {g(tbs)} / - | {g(refs)} / - | "
                      f"{g(shared)} / - | {g(dos, 6)} | - | - |")
                continue
            st = s["stats"]
            print(f"| {b} | {n} | {g(sp)} / {g(st['spscore'])} | {g(tbs)} / {g(st['total_tbs'])} | "
                  f"{g(refs)} / {g(st['distinct_units'])} ({g(st['total_data_references'])}) | "
                  f"{g(shared)} / {g(st['shared_tbs'])} | {g(dos, 6)} | "
                  f"{g(st.get('degree_fraction'), 6)} ({g(st.get('mean_degree'), 2)}) | "
                  f"{g(st['degree_of_sharing'])} |")
        if b in AVERAGED and len(got) > 1:
            k = len(got)
            mean = lambda key: sum(s["stats"].get(key) or 0 for _, s in got) / k
            print(f"| {b} | mean of its {k} kernels | {g(sp)} / {g(mean('spscore'))} | "
                  f"{g(tbs)} / {g(mean('total_tbs'), 1)} | {g(refs)} / "
                  f"{g(mean('distinct_units'), 1)} ({g(mean('total_data_references'), 1)}) | "
                  f"{g(shared)} / {g(mean('shared_tbs'), 1)} | {g(dos, 6)} | "
                  f"{g(mean('degree_fraction'), 6)} ({g(mean('mean_degree'), 2)}) | "
                  f"{g(mean('degree_of_sharing'))} |")


def clock_mhz(gpu):
    """The core clock of configs/gpus/GPU.toml (its first `clock_mhz`, in `[core]`)."""
    import re
    with open(os.path.join(ROOT, "configs", "gpus", gpu + ".toml")) as f:
        return float(re.search(r"^clock_mhz\s*=\s*([0-9.]+)", f.read(), re.M).group(1))


def jit(path):
    """Geometric means per GPU, class and policy (default stealing, RB-TS `lt`) of LRR's kernel
    time over the policy's, without and with the analysis and partition seconds (PAVER §6.3's
    speedup; `paver report`'s `speedup_GPU` and `speedup_jit_GPU`), and the median kernel and
    JIT times."""
    import csv
    import math
    import statistics
    rows = [r for r in csv.DictReader(open(path)) if r["status"] == "ok"]
    paver = ("mst-ts", "kway-ts", "rb-ts")
    lrr = {(r["gpu"], r["launch"]): float(r["cycles"]) for r in rows if r["tb_policy"] == "lrr"}
    out = {}
    for r in rows:
        p, steal = r["tb_policy"], r["steal"] == "true"
        if (p == "mst-ts" and steal) or (p in ("kway-ts", "rb-ts") and not steal):
            continue
        if r.get("rb_leaf") not in ("", "lt", None) or (r["gpu"], r["launch"]) not in lrr:
            continue
        hz = clock_mhz(r["gpu"]) * 1e6
        base, t = lrr[(r["gpu"], r["launch"])] / hz, float(r["cycles"]) / hz
        j = float(r["analysis_s"]) + float(r["partition_s"]) if p in paver else 0.0
        for c in (r["locality_class"], "all"):
            out.setdefault((r["gpu"], c, p), []).append((base / t, base / (t + j), t, j))
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    print("| GPU | class | policy | launches | speedup | speedup with JIT | median kernel µs "
          "| median JIT ms |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    order = {"lrr": 0, "bcs": 1, "mst-ts": 2, "kway-ts": 3, "rb-ts": 4}
    for (gpu, c, p) in sorted(out, key=lambda k: (k[0], k[1], order.get(k[2], 9))):
        v = out[(gpu, c, p)]
        print(f"| {gpu} | {c} | {p} | {len(v)} | {gm([a for a, *_ in v]):.3f} | "
              f"{gm([b for _, b, *_ in v]):.4g} | {statistics.median(x[2] for x in v) * 1e6:.1f} | "
              f"{statistics.median(x[3] for x in v) * 1e3:.1f} |")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "table", "jit"):
        sys.exit(__doc__)
    if sys.argv[1] == "run":
        run(sys.argv[2:])
    elif sys.argv[1] == "jit":
        jit(sys.argv[2])
    else:
        table()


if __name__ == "__main__":
    main()
