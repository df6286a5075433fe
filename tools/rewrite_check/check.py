#!/usr/bin/env python3
"""Checks `paver rewrite` on the corpus (issue 42): for every launch file of kernels/,

1. ptxas (PyPI wheel nvidia-cuda-nvcc-cu12; CPU only) accepts the rewritten PTX of the
   kernel's compute_70 PTX for sm_70 and its compute_90 PTX for sm_90; registers before
   and after;
2. `paver run` of the rewritten kernel with its work-list table writes outputs
   bit-identical to the original's;
3. in the simulator (`--sim`), the rewritten kernel under the hardware's plain LRR
   dispatch against the original under `--tb-policy rb-ts` with the same schedule: L2
   accesses (target: within 5 %), and on a launch smaller than a wave also with one
   worker per TB (`--workers TBs`); and the identity rewrite against the original under
   LRR: warp instructions (the worker loop's own cost) and L2 accesses.

Usage (from the repository root, after `cargo build --release`):

    python3 tools/rewrite_check/check.py [--ptxas PATH] [--sim] [--max-tbs N] \
        [--gpu volta] [--jobs 2] [--only NAME] > table.md

Launches with more than --max-tbs TBs (default 20000) are skipped for `paver run`; the
simulator runs the small, table2 and waves launches (--sim-launches) of at most
--max-sim-tbs TBs (default 2304). The table says what was skipped.
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAVER = os.environ.get("PAVER_BIN", os.path.join(ROOT, "target", "release", "paver"))


def sh(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}\n{r.stderr.strip()[-2000:]}")
    return r


def launches(only):
    for d in sorted(glob.glob(os.path.join(ROOT, "kernels", "*"))):
        ptx = glob.glob(os.path.join(d, "*.compute_70.ptx"))
        if len(ptx) != 1:
            continue
        for l in sorted(glob.glob(os.path.join(d, "*.json"))):
            if only and only not in l:
                continue
            yield ptx[0], l


def tbs(launch):
    g = json.load(open(launch))["grid"]
    return g[0] * g[1] * g[2]


def registers(ptxas, ptx, arch, kernel):
    r = sh([ptxas, f"-arch={arch}", "-v", ptx, "-o", os.devnull])
    # ptxas -v: "Compiling entry function 'k' for 'sm_70'" then "Used N registers".
    cur = None
    for line in r.stderr.splitlines():
        if "Compiling entry function" in line:
            cur = line.split("'")[1]
        if "Used" in line and "registers" in line and cur == kernel:
            return int(line.split("Used")[1].split()[0])
    return None


def stats(path):
    d = json.load(open(path))
    return {"cycles": d["cycles"], "warp": d["warp_instructions"], "l2": d["l2"]["accesses"]}


def compare(d1, d2):
    """The .npy files of d1 that differ in d2, and how many d1 has."""
    diff, n = [], 0
    for f in sorted(os.listdir(d1)):
        if f.endswith(".npy"):
            n += 1
            other = os.path.join(d2, f)
            if not os.path.exists(other) or open(os.path.join(d1, f), "rb").read() != open(other, "rb").read():
                diff.append(f)
    return diff, n


def check(ptx, launch, a):
    name = os.path.relpath(launch, os.path.join(ROOT, "kernels"))
    row = {"launch": name, "tbs": tbs(launch)}
    with tempfile.TemporaryDirectory() as t:
        j = lambda *p: os.path.join(t, *p)
        try:
            sh([PAVER, "analyze", ptx, "--launch", launch, "--policy", "rb-ts", "--gpu", a.gpu,
                "--schedule", j("s.json"), "-q"])
            sh([PAVER, "rewrite", ptx, "--launch", launch, "--schedule", j("s.json"),
                "-o", j("r.ptx"), "--launch-out", j("r.json"), "-q"])
            sh([PAVER, "rewrite", ptx, "--launch", launch, "--identity", "--gpu", a.gpu,
                "-o", j("i.ptx"), "--launch-out", j("i.json"), "-q"])
        except RuntimeError as e:
            row["error"] = str(e).splitlines()[-1]
            return row
        kernel = json.load(open(j("r.json")))["kernel"]
        row["kernel"] = kernel
        if a.ptxas:
            ptx90 = ptx.replace("compute_70", "compute_90")
            try:
                sh([PAVER, "rewrite", ptx90, "--launch", launch, "--identity", "--gpu", a.gpu,
                    "-o", j("r90.ptx"), "-q"])
                row["regs70"] = (registers(a.ptxas, ptx, "sm_70", kernel),
                                 registers(a.ptxas, j("r.ptx"), "sm_70", kernel))
                row["regs90"] = (registers(a.ptxas, ptx90, "sm_90", kernel),
                                 registers(a.ptxas, j("r90.ptx"), "sm_90", kernel))
            except RuntimeError as e:
                row["ptxas"] = str(e).splitlines()[-1]
        if row["tbs"] <= a.max_tbs:
            try:
                budget = ["--max-instructions", str(a.max_instructions)]
                sh([PAVER, "run", ptx, "--launch", launch, "-o", j("o1"), "-q"] + budget)
                sh([PAVER, "run", j("r.ptx"), "--launch", j("r.json"), "-o", j("o2"), "-q"] + budget)
                diff, n = compare(j("o1"), j("o2"))
                row["buffers"] = n
                row["run"] = "identical" if not diff else "DIFFERS: " + ", ".join(diff)
                if diff:
                    # Does the plain order differ too? Then the kernel reads what other TBs
                    # write (`paver run` gives a kernel without atomics a snapshot of the
                    # initial memory per TB, and the rewritten kernel, with atomics, one
                    # memory in the order the TBs run): a race on this input.
                    sh([PAVER, "run", j("i.ptx"), "--launch", j("i.json"), "-o", j("o3"), "-q"] + budget)
                    idiff, _ = compare(j("o1"), j("o3"))
                    if idiff == diff:
                        row["run"] += " (so does the identity order: an inter-TB race)"
            except RuntimeError as e:
                row["run"] = "ERROR: " + str(e).splitlines()[-1]
        base = os.path.basename(launch)
        if a.sim and row["tbs"] <= a.max_sim_tbs and base.startswith(tuple(a.sim_launches.split(","))):
            try:
                sh([PAVER, "simulate", ptx, "--launch", launch, "--gpu", a.gpu, "--tb-policy",
                    "rb-ts", "--schedule", j("s.json"), "-o", j("so.json"), "-q"])
                sh([PAVER, "simulate", j("r.ptx"), "--launch", j("r.json"), "--gpu", a.gpu,
                    "--tb-policy", "lrr", "-o", j("sr.json"), "-q"])
                sh([PAVER, "simulate", ptx, "--launch", launch, "--gpu", a.gpu, "--tb-policy",
                    "lrr", "-o", j("sl.json"), "-q"])
                sh([PAVER, "simulate", j("i.ptx"), "--launch", j("i.json"), "--gpu", a.gpu,
                    "--tb-policy", "lrr", "-o", j("si.json"), "-q"])
                so, sr, sl, si = (stats(j(x)) for x in ("so.json", "sr.json", "sl.json", "si.json"))
                row["sim"] = {"rbts": so, "rewritten": sr, "lrr": sl, "identity": si}
                workers = json.load(open(j("r.json")))["grid"][0]
                if workers > row["tbs"]:
                    # Smaller than a wave: also with one worker per TB (`--workers`).
                    sh([PAVER, "rewrite", ptx, "--launch", launch, "--schedule", j("s.json"),
                        "--workers", str(row["tbs"]), "-o", j("w.ptx"), "--launch-out", j("w.json"), "-q"])
                    sh([PAVER, "simulate", j("w.ptx"), "--launch", j("w.json"), "--gpu", a.gpu,
                        "--tb-policy", "lrr", "-o", j("sw.json"), "-q"])
                    row["sim"]["rewritten_per_tb"] = stats(j("sw.json"))
            except RuntimeError as e:
                row["sim_error"] = str(e).splitlines()[-1]
    return row


def fmt_regs(r):
    if not r or r[0] is None or r[1] is None:
        return "-"
    return f"{r[0]}" if r[0] == r[1] else f"{r[0]} -> {r[1]} (+{r[1] - r[0]})"


def table(rows, a):
    """The Markdown table of `rows`."""
    print("| launch | TBs | ptxas sm_70 regs | ptxas sm_90 regs | `paver run` outputs | "
          "L2 rewritten/RB-TS (one worker per TB) | identity: warp instr. | identity: L2 |")
    print("|---|---:|---|---|---|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['launch']} | {r['tbs']} | rewrite failed: {r['error']} | | | | | |")
            continue
        run = r.get("run", f"skipped (> {a.max_tbs} TBs)")
        if run == "identical":
            run = f"identical ({r['buffers']} buffers)" if r["buffers"] else \
                "nothing to compare (`paver run` writes no buffer of a by-value struct)"
        s = r.get("sim")
        if s:
            l2 = f"{s['rewritten']['l2'] / max(1, s['rbts']['l2']):.3f}"
            if "rewritten_per_tb" in s:
                l2 += f" ({s['rewritten_per_tb']['l2'] / max(1, s['rbts']['l2']):.3f})"
            wi = f"{s['identity']['warp'] / max(1, s['lrr']['warp']):.3f}"
            il2 = f"{s['identity']['l2'] / max(1, s['lrr']['l2']):.3f}"
        else:
            l2 = wi = il2 = r.get("sim_error", "-")
        regs70 = r.get("ptxas") or fmt_regs(r.get("regs70"))
        print(f"| {r['launch']} | {r['tbs']} | {regs70} | {fmt_regs(r.get('regs90'))} | {run} | {l2} | {wi} | {il2} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ptxas")
    p.add_argument("--sim", action="store_true")
    p.add_argument("--gpu", default="volta")
    p.add_argument("--max-tbs", type=int, default=20000)
    p.add_argument("--max-instructions", type=int, default=4_000_000_000,
                   help="`paver run`'s budget (paper launches exceed its default)")
    p.add_argument("--max-sim-tbs", type=int, default=2304)
    p.add_argument("--sim-launches", default="small,table2,waves",
                   help="simulate only launch files whose names start with one of these")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only")
    p.add_argument("--json", help="also write the rows as JSON here")
    p.add_argument("--from-json", help="only print the table of rows written before with --json")
    a = p.parse_args()
    if a.from_json:
        table(json.load(open(a.from_json)), a)
        return
    todo = list(launches(a.only))
    rows = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for row in ex.map(lambda x: check(*x, a), todo):
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    table(rows, a)

if __name__ == "__main__":
    main()
