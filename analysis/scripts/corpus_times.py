#!/usr/bin/env python3
"""Times static and dynamic analysis of every corpus launch (issue 13, "no launch slower to
analyse statically than to run in the interpreter").

For every `kernels/K/{small,paper}*.json` it runs, one after the other,

    /usr/bin/time -f "%e %M" paver analyze kernels/K/K.compute_70.ptx --launch L --quiet -o S.json
    /usr/bin/time -f "%e %M" paver analyze kernels/K/K.compute_70.ptx --launch L --quiet --dynamic -o D.json

each under `timeout T` (default 120 s), and prints one row per launch: static seconds, static
max RSS (MiB), dynamic (interpreter) seconds and RSS, their ratio, the CPU seconds (user +
system) of both, and the static JSON's
`loads_total` / `loads_resolved` / `loads_never_executed`; a run stopped by the time-out shows
`>T`. The last lines give the resolved fraction over the whole corpus (launches whose static
run finished).

Usage: analysis/scripts/corpus_times.py [--paver target/release/paver] [--timeout 120]
       [--only small|paper] [--filter SUBSTRING] [--from kernels/K] [--markdown] [--repeat N]
Seconds are wall-clock around each process (milliseconds resolution); with `--repeat N` the
fastest of N runs, the static and interpreter runs alternating.
Run from the repository root. Times on a shared machine are inflated: compare the ratio of
the two columns (measured back to back), not absolute seconds.
"""
import argparse
import glob
import json
import os
import subprocess
import tempfile
import time


def timed(cmd, timeout):
    """(wall seconds, MiB, CPU seconds) of `cmd` and an error, or Nones and why (a time-out
    or a failure)."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".time") as tf:
        # `timeout` under `time`: the kill reaches paver itself, and `time` still reports.
        full = ["/usr/bin/time", "-o", tf.name, "-f", "%e %M %U %S", "timeout", "-s", "KILL",
                str(timeout)] + cmd
        t0 = time.perf_counter()
        p = subprocess.run(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        if p.returncode == 137 or p.returncode == 124:
            return None, None, None, "timeout"
        txt = open(tf.name).read().split()
        if p.returncode != 0:
            if "137" in txt or "signal" in txt:
                return None, None, None, "timeout"
            return None, None, None, (p.stderr.strip().splitlines() or ["failed"])[-1][:80]
        # `time`'s %e has a resolution of 10 ms; the launches of the corpus take 20-300 ms.
        # CPU time (user + system, 10 ms resolution) moves less with the machine's load than
        # wall time, which on the small launches swings by +-20 % between passes.
        return wall, int(txt[-3]) / 1024.0, float(txt[-2]) + float(txt[-1]), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paver", default="target/release/paver")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--only", choices=["small", "paper"])
    ap.add_argument("--filter", default="")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each command N times, static and interpreter alternating, and "
                         "keep the fastest (the usual guard against a loaded machine)")
    ap.add_argument("--from", dest="start", default="",
                    help="skip launches whose kernels/ path sorts before this")
    a = ap.parse_args()
    launches = sorted(glob.glob("kernels/*/small*.json") + glob.glob("kernels/*/paper*.json"))
    if a.only:
        launches = [l for l in launches if os.path.basename(l).startswith(a.only)]
    launches = [l for l in launches if a.filter in l and l >= a.start]
    tot = res = never = 0
    out = tempfile.mkdtemp(prefix="corpus_times.")
    sep = " | " if a.markdown else "  "
    hdr = ["launch", "static s", "static MiB", "interp s", "interp MiB", "static/interp",
           "static CPU s", "interp CPU s", "loads", "resolved", "never run"]
    print(("| " if a.markdown else "") + sep.join(hdr) + (" |" if a.markdown else ""))
    if a.markdown:
        print("|" + "---|" * len(hdr))
    for l in launches:
        k = l.split("/")[1]
        ptx = f"kernels/{k}/{k}.compute_70.ptx"
        name = f"{k}/{os.path.basename(l)}"
        s_json, d_json = os.path.join(out, "s.json"), os.path.join(out, "d.json")
        for f in (s_json, d_json):
            if os.path.exists(f):
                os.remove(f)
        base = [a.paver, "analyze", ptx, "--launch", l, "--quiet"]
        st = dt = sc = dc = None

        def least(x, y):
            return y if x is None or (y is not None and y < x) else x
        for _ in range(max(1, a.repeat)):
            t, sm, c, se = timed(base + ["-o", s_json], a.timeout)
            st, sc = least(st, t), least(sc, c)
            t, dm, c, de = timed(base + ["--dynamic", "--max-instructions", "100000000000", "-o", d_json], a.timeout)
            dt, dc = least(dt, t), least(dc, c)
            if se or de:
                break
        loads = ""
        if st is not None:
            j = json.load(open(s_json))
            t, r, n = j["loads_total"], j["loads_resolved"], j["loads_never_executed"]
            tot, res, never = tot + t, res + r, never + n
            loads = [str(t), str(r), str(n)]
        else:
            loads = ["-", "-", "-"]

        def fmt(t, m, e):
            if t is None:
                return (f">{a.timeout}" if e == "timeout" else f"error: {e}"), "-"
            return f"{t:.3f}", f"{m:.0f}"
        s1, s2 = fmt(st, sm, se)
        d1, d2 = fmt(dt, dm, de)
        ratio = f"{st / max(dt, 0.001):.2f}" if st is not None and dt is not None else "-"
        cpu = [f"{c:.2f}" if c is not None else "-" for c in (sc, dc)]
        row = [name, s1, s2, d1, d2, ratio] + cpu + loads
        print(("| " if a.markdown else "") + sep.join(row) + (" |" if a.markdown else ""),
              flush=True)
    if tot:
        print(f"\nloads {tot}, resolved {res} ({100.0 * res / tot:.1f} %), "
              f"of them never executed {never}")


if __name__ == "__main__":
    main()
