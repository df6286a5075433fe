#!/usr/bin/env python3
"""Simulation speed at the papers' sizes (issue 40): every corpus paper launch
(`kernels/*/paper*.json` with its directory's `*.compute_70.ptx`, the launches of
`kernels/paper.toml`) on each configuration, under LRR TBs and GTO warps, as a user runs it:

    paver simulate PTX --launch L --gpu G --tb-policy lrr -q --stop-after N -o OUT.json

The rate is the warp instructions the run issued (`warp_instructions` of its stats) per
second of the whole process's wall time (start, PTX parse, launch and buffer set-up,
simulation, JSON), so set-up counts against it; the rate per second of the process's own
CPU time (user + system) is printed beside it, for machines shared with other work. A launch larger than `--stop-after`
warp instructions is measured on its first N (a bounded prefix: `truncated` in its stats,
marked `*` in the table); the others run whole. Prints one line per run and, per
configuration, the slowest and the median rate and how many runs reach 1 M/s.

    tools/speed/paper_rate.py --paver target/release/paver [--configs volta,pascal,fermi,h100]
        [--stop-after 2000000] [--only SUBSTRING] [--csv OUT.csv]

Runs one simulation at a time (the rate is per core). On a machine shared with other
work, wall time includes what the others take: note the load average with the numbers.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def launches(only):
    """(name, ptx, launch) of every paper launch, sorted."""
    out = []
    for launch in sorted(glob.glob(os.path.join(ROOT, "kernels", "*", "paper*.json"))):
        d = os.path.dirname(launch)
        ptx = sorted(glob.glob(os.path.join(d, "*.compute_70.ptx")))
        if not ptx:
            continue
        name = os.path.basename(d) + "/" + os.path.basename(launch)
        if only and only not in name:
            continue
        out.append((name, ptx[0], launch))
    return out


def run_one(paver, ptx, launch, gpu, stop_after, tmp):
    """(warp instructions, wall seconds, CPU seconds, truncated, error or None)."""
    out = os.path.join(tmp, "stats.json")
    cmd = [paver, "simulate", ptx, "--launch", launch, "--gpu", gpu, "--tb-policy", "lrr",
           "-q", "--max-instructions", "100000000000", "--stop-after", str(stop_after),
           "-o", out]
    err = os.path.join(tmp, "stderr")
    with open(err, "w") as e:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=e)
        # wait4 gives the child's own CPU time (user + system), which other processes on
        # a loaded machine do not inflate as they do the wall time.
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    cpu = ru.ru_utime + ru.ru_stime
    if os.waitstatus_to_exitcode(status) != 0:
        with open(err) as e:
            last = e.read().strip().splitlines()[-1:]
        return 0, wall, cpu, False, last or ["exit status %d" % status]
    with open(out) as f:
        s = json.load(f)
    return s["warp_instructions"], wall, cpu, bool(s.get("truncated")), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--paver", default=os.path.join(ROOT, "target", "release", "paver"))
    ap.add_argument("--configs", default="volta,pascal,fermi,h100")
    ap.add_argument("--stop-after", type=int, default=2_000_000)
    ap.add_argument("--only", default="")
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for gpu in a.configs.split(","):
            for name, ptx, launch in launches(a.only):
                n, wall, cpu, trunc, err = run_one(a.paver, ptx, launch, gpu, a.stop_after, tmp)
                rate = n / wall / 1e6 if wall > 0 else 0.0
                cpu_rate = n / cpu / 1e6 if cpu > 0 else 0.0
                rows.append((gpu, name, n, wall, trunc, rate, err, cpu, cpu_rate))
                mark = "*" if trunc else " "
                msg = " ERROR " + err[0] if err else ""
                print(f"{gpu:7} {name:48} {n:>11,}{mark} {wall:8.2f} s {rate:6.2f} M/s"
                      f"  (CPU {cpu:7.2f} s {cpu_rate:6.2f} M/s){msg}", flush=True)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("config,launch,warp_instructions,wall_s,truncated,m_per_s,error,"
                    "cpu_s,m_per_cpu_s\n")
            for gpu, name, n, wall, trunc, rate, err, cpu, cpu_rate in rows:
                f.write(f"{gpu},{name},{n},{wall:.3f},{int(trunc)},{rate:.3f},"
                        f"{(err or [''])[0].replace(',', ';')},{cpu:.3f},{cpu_rate:.3f}\n")
    print()
    print("| config | slowest (M warp-instr/s of wall time) | median | >= 1 M/s "
          "| slowest / median per CPU second | errors |")
    print("|---|---|---:|---:|---|---:|")
    for gpu in a.configs.split(","):
        ok = [r for r in rows if r[0] == gpu and r[6] is None]
        errs = sum(1 for r in rows if r[0] == gpu and r[6] is not None)
        if not ok:
            print(f"| {gpu} | - | - | 0/0 | {errs} |")
            continue
        slow = min(ok, key=lambda r: r[5])
        med = statistics.median(r[5] for r in ok)
        fast = sum(1 for r in ok if r[5] >= 1.0)
        cslow = min(ok, key=lambda r: r[8])
        cmed = statistics.median(r[8] for r in ok)
        print(f"| {gpu} | {slow[5]:.2f} ({slow[1]}) | {med:.2f} | {fast}/{len(ok)} "
              f"| {cslow[8]:.2f} ({cslow[1]}) / {cmed:.2f} | {errs} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
