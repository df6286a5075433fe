#!/usr/bin/env python3
"""Results do not change: record every corpus launch's `paver analyze` and `paver simulate`
JSON with one binary, then compare two recordings field by field.

    tools/identical/check.py record OUT --paver target/release/paver [--only NAME] [-j N]
    tools/identical/check.py compare BEFORE AFTER [--added KEY ...]

`record` runs, for every `kernels/*/small*.json` launch (the launch files that bind on
their own), `paver analyze -o` (with `--policy rb-ts --gpu volta --schedule`), and `paver
simulate` on titanv under lrr, rb-ts (groups built in the run), the Locality Descriptor
cache and prefetch, and on mcm4 with `--placement ld` and rb-ts on fermi with `--set
core.num_sms=4`; then the sweep of `kernels/small.toml` (its records in plan order). A
command that fails is recorded with its exit status and standard error, so a refactor that
turns a result into an error (or back) is a difference too.

`compare` reports every file whose JSON differs, ignoring wall-clock fields (names ending
in `_ms` or `_s`, `timings`; the sweep's build stamp and run keys) and the keys named with
`--added` (fields a change adds on purpose, present only in AFTER). Exit status 1 when
anything differs.
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (name, extra simulate flags)
SIMULATIONS = [
    ("lrr", ["--gpu", "volta", "--tb-policy", "lrr"]),
    ("rbts", ["--gpu", "volta", "--tb-policy", "rb-ts"]),
    ("ld", ["--gpu", "volta", "--cache-policy", "ld", "--prefetch", "ld"]),
    ("mcm4", ["--gpu", "mcm4", "--placement", "ld"]),
    ("fermi4", ["--gpu", "fermi", "--tb-policy", "rb-ts", "--set", "core.num_sms=4"]),
]


def launches(only):
    out = []
    for launch in sorted(glob.glob(os.path.join(ROOT, "kernels", "*", "small*.json"))):
        d = os.path.dirname(launch)
        name = os.path.basename(d)
        if only and name not in only:
            continue
        ptx = sorted(glob.glob(os.path.join(d, "*.compute_70.ptx")))
        if not ptx:
            continue
        tag = name + "." + os.path.basename(launch)[: -len(".json")]
        out.append((tag, ptx[0], launch))
    return out


def run(cmd, out_file, status_file):
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    with open(status_file, "w") as f:
        json.dump({"status": p.returncode, "stderr": p.stderr if p.returncode else ""}, f)
    if p.returncode != 0 and os.path.exists(out_file):
        os.remove(out_file)


def jobs(paver, out, items):
    for tag, ptx, launch in items:
        base = [paver]
        a = os.path.join(out, tag + ".analyze.json")
        s = os.path.join(out, tag + ".schedule.json")
        yield (
            base + ["analyze", ptx, "--launch", launch, "-q", "-o", a,
                    "--policy", "rb-ts", "--gpu", "volta", "--schedule", s],
            a, a + ".status")
        for name, flags in SIMULATIONS:
            o = os.path.join(out, f"{tag}.sim.{name}.json")
            yield (base + ["simulate", ptx, "--launch", launch, "-q", "-o", o] + flags,
                   o, o + ".status")


def record(args):
    os.makedirs(args.out, exist_ok=True)
    paver = os.path.abspath(args.paver)
    items = launches(args.only)
    todo = list(jobs(paver, os.path.abspath(args.out), items))
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for f in [ex.submit(run, *j) for j in todo]:
            f.result()
    if not args.only:
        # The sweep of kernels/small.toml (every small launch on four GPUs, LRR and RB-TS):
        # its records, in plan order, as one JSON list.
        sweep = os.path.join(os.path.abspath(args.out), "sweep")
        p = subprocess.run([paver, "sweep", "kernels/small.toml", "-o", sweep, "-q"], cwd=ROOT,
                           capture_output=True, text=True)
        runs = []
        if p.returncode == 0:
            with open(os.path.join(sweep, "runs.jsonl")) as f:
                runs = [json.loads(line) for line in f]
            for r in runs:
                del r["key"]  # a hash that includes the build
        with open(os.path.join(args.out, "sweep.small.json"), "w") as f:
            json.dump({"status": p.returncode, "runs": runs}, f)
        subprocess.run(["rm", "-rf", sweep])
    print(f"{len(todo)} commands on {len(items)} launches recorded in {args.out}")


def volatile(key):
    # Wall-clock times, and the sweep records' build stamp.
    return (key.endswith("_ms") or key.endswith("_s")
            or key in ("timings", "wall", "paver_version", "paver_build"))


def strip(v, added, before):
    if isinstance(v, dict):
        return {k: strip(x, added, before) for k, x in v.items()
                if not volatile(k) and (before or k not in added)}
    if isinstance(v, list):
        return [strip(x, added, before) for x in v]
    return v


def diff(a, b, path, out):
    if type(a) is not type(b):
        out.append(f"{path}: {a!r:.80} -> {b!r:.80}")
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}.{k}: added")
            elif k not in b:
                out.append(f"{path}.{k}: removed")
            else:
                diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items -> {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {a!r:.80} -> {b!r:.80}")


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def compare(args):
    added = set(args.added or [])
    names = sorted(set(os.listdir(args.before)) | set(os.listdir(args.after)))
    bad = 0
    for n in names:
        a = load(os.path.join(args.before, n))
        b = load(os.path.join(args.after, n))
        out = []
        diff(strip(a, added, True), strip(b, added, False), "", out)
        if out:
            bad += 1
            print(f"{n}:")
            for line in out[:10]:
                print(f"  {line}")
            if len(out) > 10:
                print(f"  ... {len(out) - 10} more")
    print(f"{len(names)} files compared, {bad} differ")
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out")
    r.add_argument("--paver", default=os.path.join(ROOT, "target", "release", "paver"))
    r.add_argument("--only", nargs="*")
    r.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--added", nargs="*")
    args = p.parse_args()
    sys.exit(record(args) if args.cmd == "record" else compare(args))


if __name__ == "__main__":
    main()
