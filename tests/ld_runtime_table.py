#!/usr/bin/env python3
"""The Locality Descriptor runtime against the plain L1 on every corpus launch (issue 39).

For every `kernels/*/small*.json` and `kernels/*/paper*.json` on titanv and gtx480:

    paver simulate kernels/K/K.compute_70.ptx --launch L --gpu G --quiet -o plain.json
    paver simulate ... --cache-policy ld --prefetch ld -o ld.json

and prints a markdown table (cycles, L2 accesses, the `ld` prefetch counters) with each
kernel's locality class (PAVER Fig. 2: high when at least 50 % of its data references are
read by more than one TB, `paver analyze` at the kernel's small launch). Exits non-zero when
any launch that ran is more than 3 % slower under the LD runtime; runs past `--timeout` are
listed as not run. Results are cached in `--cache` (default target/ld-table/), so a second
invocation only runs what is missing.

    cargo build --release
    python3 tests/ld_runtime_table.py -j 2 --timeout 300 [--sets small,paper] [--only hotspot]
"""

import argparse
import concurrent.futures as cf
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = {"plain": [], "ld": ["--cache-policy", "ld", "--prefetch", "ld"]}
LIMIT = 1.03


def launches(sets, only):
    out = []
    for s in sets:
        for path in sorted(glob.glob(os.path.join(ROOT, "kernels", "*", f"{s}*.json"))):
            d = os.path.basename(os.path.dirname(path))
            if only and d not in only:
                continue
            ptx = os.path.join(ROOT, "kernels", d, f"{d}.compute_70.ptx")
            if not os.path.exists(ptx):
                cands = sorted(glob.glob(os.path.join(ROOT, "kernels", d, "*.compute_70.ptx")))
                if not cands:
                    continue
                ptx = cands[0]
            out.append((d, os.path.relpath(path, ROOT), os.path.relpath(ptx, ROOT)))
    return out


def key(launch, gpu, variant):
    return launch.replace("kernels/", "").replace("/", "__")[:-5] + f".{gpu}.{variant}.json"


def simulate(paver, cache, timeout, launch, ptx, gpu, variant):
    path = os.path.join(cache, key(launch, gpu, variant))
    if os.path.exists(path):
        return path
    skip = path + ".timeout"
    if os.path.exists(skip) and float(open(skip).read() or 0) >= timeout:
        return None
    cmd = [paver, "simulate", ptx, "--launch", launch, "--gpu", gpu, "--quiet", "-o",
           path + ".tmp"] + VARIANTS[variant]
    try:
        subprocess.run(cmd, cwd=ROOT, check=True, timeout=timeout, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    except subprocess.TimeoutExpired:
        with open(skip, "w") as f:
            f.write(str(timeout))
        return None
    except subprocess.CalledProcessError as e:
        sys.stderr.write(f"failed: {' '.join(cmd)}\n{e.stderr.decode()[-2000:]}\n")
        return None
    os.replace(path + ".tmp", path)
    return path


def locality(paver, cache, d, ptx, timeout):
    """Fraction of data references read by more than one TB at the kernel's small launch."""
    smalls = sorted(glob.glob(os.path.join(ROOT, "kernels", d, "small*.json")))
    fracs = []
    for s in smalls:
        path = os.path.join(cache, f"{d}.{os.path.basename(s)[:-5]}.analysis.json")
        if not os.path.exists(path):
            try:
                subprocess.run([paver, "analyze", ptx, "--launch", s, "-o", path + ".tmp"],
                               cwd=ROOT, check=True, timeout=timeout,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except (subprocess.TimeoutExpired, subprocess.CalledProcessError):
                continue
            os.replace(path + ".tmp", path)
        with open(path) as f:
            fr = json.load(f)["categories"]["fractions"]
        fracs.append(fr["inter_tb"] + fr["both"])
    return max(fracs) if fracs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--paver", default=os.path.join(ROOT, "target", "release", "paver"))
    ap.add_argument("--gpus", default="titanv,gtx480")
    ap.add_argument("--sets", default="small,paper")
    ap.add_argument("--only", default="", help="comma-separated kernel directories")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per simulation")
    ap.add_argument("--cache", default=os.path.join(ROOT, "target", "ld-table"))
    a = ap.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    todo = launches(a.sets.split(","), only)
    gpus = a.gpus.split(",")
    jobs = [(l, p, g, v) for (_, l, p) in todo for g in gpus for v in VARIANTS]
    done = {}
    with cf.ThreadPoolExecutor(a.j) as ex:
        futs = {ex.submit(simulate, a.paver, a.cache, a.timeout, l, p, g, v): (l, g, v)
                for (l, p, g, v) in jobs}
        for f in cf.as_completed(futs):
            done[futs[f]] = f.result()
    loc = {}
    for d, _, p in todo:
        if d not in loc:
            loc[d] = locality(a.paver, a.cache, d, p, a.timeout)
    print(f"`--cache-policy ld --prefetch ld` against plain; LRR TBs, GTO warps; limit "
          f"{LIMIT:.2f}x. ld counters: prefetches issued / useful / late / unguided / "
          "throttled, bypassed\n")
    print("| launch | inter-TB refs | gpu | plain cycles | ld cycles | ld / plain | plain L2 acc. "
          "| ld L2 acc. | ld counters |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst, bad, not_run = (0.0, None), [], []
    for d, l, _ in todo:
        for g in gpus:
            rp, rl = done.get((l, g, "plain")), done.get((l, g, "ld"))
            fr = loc.get(d)
            tag = "?" if fr is None else f"{fr:.0%}{' (high)' if fr >= 0.5 else ''}"
            name = l.replace("kernels/", "")
            if not rp or not rl:
                not_run.append(f"{name} {g}")
                print(f"| {name} | {tag} | {g} | {'-' if not rp else 'ran'} | "
                      f"{'-' if not rl else 'ran'} | not run (timeout {a.timeout:.0f} s) | | | |")
                continue
            sp, sl = json.load(open(rp)), json.load(open(rl))
            r = sl["cycles"] / sp["cycles"]
            ld = sl.get("ld", {})
            c = "/".join(str(ld.get(k, 0)) for k in (
                "prefetches_issued", "prefetches_useful", "prefetches_late",
                "prefetches_unguided", "prefetches_throttled")) + f", {ld.get('bypassed', 0)}"
            flag = " **> limit**" if r > LIMIT else ""
            print(f"| {name} | {tag} | {g} | {sp['cycles']} | {sl['cycles']} | {r:.3f}{flag} | "
                  f"{sp['l2']['accesses']} | {sl['l2']['accesses']} | {c} |")
            if r > worst[0]:
                worst = (r, f"{name} {g}")
            if r > LIMIT:
                bad.append(f"{name} {g} ({r:.3f})")
    ran = len(todo) * len(gpus) - len(not_run)
    print(f"\n{ran} runs compared; worst ld / plain {worst[0]:.3f} ({worst[1]}); "
          f"over {LIMIT:.2f}: {len(bad)}; not run: {len(not_run)}")
    for b in bad:
        print(f"  over: {b}")
    for n in not_run:
        print(f"  not run: {n}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
