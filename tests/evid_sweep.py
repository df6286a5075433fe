#!/usr/bin/env python3
"""TB grouping in the timing simulator: LRR, BCS, MST-TS, Kway-TS and RB-TS on launches of
several waves (`kernels/*/waves*.json`, written by kernels/make_waves.py) for the four GPU
configurations of issue 12, with the `paver` binary as a user runs it:

    paver analyze PTX --launch L -o A.json                      # locality class (once)
    paver analyze PTX --launch L --policy P --gpu G --schedule S.json -o /dev/null
    paver simulate PTX --launch L --gpu G --tb-policy P [--schedule S.json] -o stats.json

(stealing as each policy's default: on for kway-ts and rb-ts, off for mst-ts; RB-TS with
`--rb-leaf lt`, the leaf rule of PAVER Algorithm 1 and §4.3, "until the partition size is
less than" x and the CLI's default, unless `--rb-leaf le`, `<= x`, the CLI's default before
issue 12). Prints the
Markdown table of docs/VALIDATION.md and, at the end, the checks of issue 12: RB-TS makes
fewer L2 accesses than LRR on every high-locality kernel (PAVER §6: at least 50 % of the
data references inter-TB, Fig. 2's "inter-TB" + "intra-TB and inter-TB"), and is not slower
than LRR by more than 2 % anywhere. Exit status 1 when a check fails.

    cargo build --release && python3 tests/evid_sweep.py [-j JOBS] [--gpus g1,g2] [FILTER...]

FILTER: only launch files whose path contains one of these strings. `--policies lrr,rb-ts`
runs only those (LRR and RB-TS are always run: the checks need them; the others' cells
read "-"). Results are cached in target/evid-sweep/ (delete it to rerun).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = ["gtx480", "titanx_pascal", "titanv", "h100"]
POLICIES = ["lrr", "bcs", "mst-ts", "kway-ts", "rb-ts"]
PAVER = ["mst-ts", "kway-ts", "rb-ts"]


def launches(filters):
    out = []
    kdir = os.path.join(ROOT, "kernels")
    for d in sorted(os.listdir(kdir)):
        p = os.path.join(kdir, d)
        if not os.path.isdir(p):
            continue
        for f in sorted(os.listdir(p)):
            if f.startswith("waves") and f.endswith(".json"):
                path = os.path.join("kernels", d, f)
                if not filters or any(x in path for x in filters):
                    out.append((d, path))
    return out


def ptx_for(d, gpu):
    variant = "compute_90" if gpu == "h100" else "compute_70"
    return os.path.join("kernels", d, f"{d}.{variant}.ptx")


def run(cmd):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stderr}")
    return r


def one(paver, cache, d, launch, gpu, policy, rb_leaf="lt"):
    """Runs one simulation (and its partition); returns the row's numbers."""
    tag = os.path.basename(launch)[:-5]
    # `.lt` for the paper's rule; `<= x` runs keep the names they had before the suffix.
    suffix = ".lt" if policy == "rb-ts" and rb_leaf == "lt" else ""
    base = os.path.join(cache, f"{d}.{tag}.{gpu}.{policy}{suffix}")
    stats_path = base + ".stats.json"
    sched_path = base + ".schedule.json"
    ptx = ptx_for(d, gpu)
    if not os.path.exists(stats_path):
        cmd = [paver, "simulate", ptx, "--launch", launch, "--gpu", gpu,
               "--tb-policy", policy, "--quiet", "-o", stats_path + ".tmp"]
        if policy in PAVER:
            analyze = [paver, "analyze", ptx, "--launch", launch, "--policy", policy,
                       "--gpu", gpu, "--schedule", sched_path, "-o", os.devnull]
            if policy == "rb-ts":
                analyze += ["--rb-leaf", rb_leaf]
            run(analyze)
            cmd[cmd.index("--quiet"):cmd.index("--quiet")] = ["--schedule", sched_path]
        run(cmd)
        os.replace(stats_path + ".tmp", stats_path)
    with open(stats_path) as f:
        s = json.load(f)
    groups = None
    if policy in PAVER:
        with open(sched_path) as f:
            groups = len(json.load(f)["groups"])
    return {
        "cycles": s["cycles"],
        "l2": s["l2"]["accesses"],
        "x": s["tbs_per_sm"],
        "tbs": s["tbs"],
        "stolen": s["stolen_tbs"],
        "groups": groups,
    }


def locality(paver, cache, d, launch):
    """Fraction of data references shared between TBs (PAVER Fig. 2) at this launch."""
    tag = os.path.basename(launch)[:-5]
    path = os.path.join(cache, f"{d}.{tag}.analysis.json")
    if not os.path.exists(path):
        run([paver, "analyze", ptx_for(d, "titanv"), "--launch", launch, "-o", path + ".tmp"])
        os.replace(path + ".tmp", path)
    with open(path) as f:
        fr = json.load(f)["categories"]["fractions"]
    return fr["inter_tb"] + fr["both"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--gpus", default=",".join(GPUS))
    ap.add_argument("--paver", default=os.path.join(ROOT, "target", "release", "paver"))
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--rb-leaf", choices=["lt", "le"], default="lt",
                    help="RB-TS leaf rule, passed to `paver analyze --rb-leaf`: lt = size < x "
                         "(PAVER Algorithm 1, the CLI default), le = size <= x")
    ap.add_argument("filters", nargs="*")
    a = ap.parse_args()
    gpus = a.gpus.split(",")
    chosen = set(a.policies.split(",")) | {"lrr", "rb-ts"}
    skipped = {"cycles": "-", "l2": "-", "groups": "-"}
    cache = os.path.join(ROOT, "target", "evid-sweep")
    os.makedirs(cache, exist_ok=True)
    todo = launches(a.filters)
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for d, launch in todo:
            jobs[(d, launch, "loc")] = ex.submit(locality, a.paver, cache, d, launch)
            for gpu in gpus:
                for p in POLICIES:
                    if p in chosen:
                        jobs[(d, launch, gpu, p)] = ex.submit(one, a.paver, cache, d, launch, gpu, p, a.rb_leaf)
    failures = []
    print("| kernel (launch) | inter-TB refs | GPU | TBs | TBs/SM | waves | groups (MST/Kway/RB) | "
          + " | ".join(f"{p} L2 acc." for p in POLICIES) + " | "
          + " | ".join(f"{p} cycles" for p in POLICIES) + " | RB-TS/LRR L2 | RB-TS/LRR cycles |")
    print("|" + "---|" * (10 + 2 * len(POLICIES)))
    for d, launch in todo:
        loc = jobs[(d, launch, "loc")].result()
        high = loc >= 0.5
        for gpu in gpus:
            r = {p: jobs[(d, launch, gpu, p)].result() if p in chosen else skipped
                 for p in POLICIES}
            lrr, rb = r["lrr"], r["rb-ts"]
            sms = {"gtx480": 15, "titanx_pascal": 28, "titanv": 80, "h100": 132}[gpu]
            waves = lrr["tbs"] / (sms * lrr["x"])
            l2r = rb["l2"] / max(lrr["l2"], 1)
            cyr = rb["cycles"] / max(lrr["cycles"], 1)
            name = f"{os.path.basename(os.path.dirname(launch))}/{os.path.basename(launch)}"
            print(f"| {name} | {loc:.0%}{' (high)' if high else ''} | {gpu} | {lrr['tbs']} | "
                  f"{lrr['x']} | {waves:.1f} | "
                  + "/".join(str(r[p]["groups"]) for p in PAVER) + " | "
                  + " | ".join(str(r[p]["l2"]) for p in POLICIES) + " | "
                  + " | ".join(str(r[p]["cycles"]) for p in POLICIES)
                  + f" | {l2r:.3f} | {cyr:.3f} |")
            if high and rb["l2"] >= lrr["l2"]:
                failures.append(f"{name} on {gpu}: RB-TS {rb['l2']} L2 accesses >= LRR's {lrr['l2']}")
            if cyr > 1.02:
                failures.append(f"{name} on {gpu}: RB-TS {rb['cycles']} cycles, {cyr - 1:.1%} slower than LRR")
    print()
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("all checks hold")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
