#!/usr/bin/env python3
"""Runs paver over a seeded sample of public CUDA suites (HeCBench, Rodinia, PolyBench-ACC)
and summarises what happens (issue 41). The suites' sources stay theirs: give local
checkouts; nothing of them is written into the repository. See README.md here.

    tools/suite_sample/suite_sample.py --hecbench ~/src/HeCBench --rodinia ~/src/gpu-rodinia \
        --polybench ~/src/PolyBench-ACC --sample 30,10,10 --seed 1 --out /tmp/suite

Per sampled benchmark: every .cu with a __global__ is compiled to PTX with nvcc (-ptx,
--arch, the benchmark's folder and the suite's common folders on the include path); per
entry kernel of each PTX a launch is chosen by the rule in README.md; then `paver parse`,
`paver analyze` (static) and `paver analyze --dynamic` run with a time limit and a memory
limit. Every run's outcome goes to results.jsonl, the table to summary.md.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Where each suite keeps its CUDA benchmarks, and its shared include folders.
SUITES = {
    "hecbench": {"bench_glob": "src/*-cuda", "includes": ["src/include"]},
    "rodinia": {"bench_glob": "cuda/*", "includes": ["common", "cuda/util"]},
    "polybench": {"bench_glob": "CUDA/**/", "includes": ["common", "CUDA/utilities"]},
}

BUFFER_ELEMS = 1 << 20  # elements of every pointer's buffer (4 MiB of u32)
INT_VALUE = 64
DYNAMIC_SHARED = 16384  # bytes, for kernels with an `extern __shared__` array
# CUDA 13 removed the long-deprecated cudaThread* calls older suites still make.
COMPAT_DEFINES = ["-DcudaThreadSynchronize=cudaDeviceSynchronize"]
FLOAT_VALUE = 1.0


def benchmarks(suite, root):
    """The suite's benchmark folders that hold a .cu file, sorted."""
    out = []
    for d in sorted(set(root.glob(SUITES[suite]["bench_glob"]))):
        if d.is_dir() and any(d.glob("*.cu")):
            out.append(d)
    return out


def kernel_sources(bench):
    """The .cu files of a benchmark that define a __global__ function."""
    out = []
    for f in sorted(bench.glob("*.cu")):
        try:
            text = f.read_text(errors="replace")
        except OSError:
            continue
        if "__global__" in text:
            out.append(f)
    return out


def run(cmd, timeout, env=None, cwd=None):
    """(outcome, returncode, stdout, stderr, seconds): outcome is ok, error, timeout, crash
    or oom."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return "timeout", None, "", (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or ""), timeout
    dt = time.monotonic() - t0
    err = p.stderr
    if p.returncode == 0:
        outcome = "ok"
    elif "panicked" in err or p.returncode < 0 or p.returncode in (101, 134, 139):
        outcome = "oom" if p.returncode in (-9, 137) or "memory allocation" in err else "crash"
    else:
        outcome = "error"
    return outcome, p.returncode, p.stdout, err, dt


def first_error_line(err):
    for line in err.splitlines():
        if line.startswith("paver: error:") or "error" in line.lower():
            return line.strip()[:300]
    return (err.strip().splitlines() or [""])[0][:300]


def error_class(line):
    """The message with its location (kernel, TB, thread), numbers, paths and quoted names
    taken out, for counting kinds."""
    line = line.split(" at kernel ")[0]
    line = re.sub(r"`[^`]*`", "`_`", line)
    line = re.sub(r"/\S+", "PATH", line)
    line = re.sub(r"\b0x[0-9a-fA-F]+\b", "0xN", line)
    line = re.sub(r"\b\d+\b", "N", line)
    return line[:160]


def launch_flags(fn, ptx_text):
    """The launch rule (README.md): block from .reqntid/.maxntid or 256, grid 4; pointers
    get a zeroed buffer of 2^20 u32, integers 64, floats 1.0; by-value structs stay open."""
    name = re.escape(fn["name"])
    block = 256
    m = re.search(r"\.entry\s+" + name + r"\s*\([^)]*\)\s*([^{]*)\{", ptx_text, re.S)
    if m:
        d = re.search(r"\.(?:reqntid|maxntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", m.group(1))
        if d:
            block = "x".join(g for g in d.groups() if g)
    flags = ["--kernel", fn["name"], "--grid", "4", "--block", str(block)]
    if re.search(r"\.extern\s+\.shared", ptx_text):
        # `extern __shared__` arrays: the host gives their size at launch.
        flags += ["--dynamic-shared", str(DYNAMIC_SHARED)]
    for i, p in enumerate(fn["params"]):
        t = p["type"]
        if p.get("array"):
            continue  # a by-value struct: left open
        if p.get("pointer") or t in ("u64", "b64", "s64") and p.get("pointer") is not False:
            flags += ["--param", f"{i}=buffer:u32:{BUFFER_ELEMS}:zeros"]
        elif t in ("u64", "b64"):
            # nvcc's extern "C" kernels: no signature to tell a pointer from a size.
            flags += ["--param", f"{i}=buffer:u32:{BUFFER_ELEMS}:zeros"]
        elif t.startswith(("u", "s", "b")) and "[" not in t:
            flags += ["--param", f"{i}={INT_VALUE}"]
        elif t.startswith("f"):
            flags += ["--param", f"{i}={FLOAT_VALUE}"]
    return flags


def compare(st, dy):
    """Static against dynamic, load by load: agree, partial (loads left out, the rest
    agree), or disagree (a load in the graph read other bytes, or one proved never executed
    ran)."""
    sl, dl = st.get("loads", []), dy.get("loads", [])
    if len(sl) != len(dl):
        return "disagree", "load counts differ"
    partial = False
    for s, d in zip(sl, dl):
        c = s.get("coverage")
        if c == "in_graph":
            if s.get("reads") != d.get("reads"):
                return "disagree", f"line {s.get('line')}: reads {s.get('reads')} vs {d.get('reads')}"
        elif c == "never_executed":
            if d.get("coverage") != "never_executed":
                return "disagree", f"line {s.get('line')}: never executed, but ran"
        else:
            partial = True
    return ("partial" if partial else "exact"), ""


def process_kernel(args, suite, bench, ptx, fn, ptx_text, kdir):
    env = dict(os.environ, PAVER_MEMORY_LIMIT=args.memory)
    rec = {"suite": suite, "bench": bench.name, "ptx": ptx.name, "kernel": fn["name"]}
    flags = launch_flags(fn, ptx_text)
    rec["launch"] = " ".join(flags)
    st_path, dy_path = kdir / "static.json", kdir / "dynamic.json"
    o, _, _, err, dt = run([args.paver, "analyze", str(ptx), *flags, "-q", "-o", str(st_path)], args.timeout, env)
    rec["static"], rec["static_s"] = o, round(dt, 2)
    if o != "ok":
        rec["static_error"] = first_error_line(err)
    o, _, _, err, dt = run([args.paver, "analyze", str(ptx), *flags, "--dynamic", "-q", "-o", str(dy_path)], args.timeout, env)
    rec["dynamic"], rec["dynamic_s"] = o, round(dt, 2)
    if o != "ok":
        rec["dynamic_error"] = first_error_line(err)
    st = json.loads(st_path.read_text()) if rec["static"] == "ok" else None
    dy = json.loads(dy_path.read_text()) if rec["dynamic"] == "ok" else None
    if st:
        rec["coverage"] = st.get("coverage")
    if st and dy:
        rec["agreement"], rec["why"] = compare(st, dy)
    return rec


def process_bench(args, suite, root, bench, scratch):
    recs = []
    incs = [bench] + [root / i for i in SUITES[suite]["includes"]]
    for src in kernel_sources(bench):
        key = hashlib.sha256(str(src).encode()).hexdigest()[:10]
        d = scratch / suite / bench.name / f"{src.stem}-{key}"
        d.mkdir(parents=True, exist_ok=True)
        ptx = d / (src.stem + ".ptx")
        cmd = [args.nvcc, "-ptx", f"-arch={args.arch}", "-std=c++17", *COMPAT_DEFINES, "-o", str(ptx), str(src)]
        for i in incs:
            cmd[1:1] = ["-I", str(i)]
        o, _, _, err, dt = run(cmd, args.timeout * 2, cwd=str(bench))
        base = {"suite": suite, "bench": bench.name, "source": src.name}
        if o != "ok":
            recs.append(dict(base, compile="error", compile_error=first_error_line(err)))
            continue
        o, _, out, err, _ = run([args.paver, "parse", str(ptx), "--json"], args.timeout)
        if o != "ok":
            recs.append(dict(base, compile="ok", parse=o, parse_error=first_error_line(err)))
            continue
        recs.append(dict(base, compile="ok", parse="ok"))
        module = json.loads(out)
        text = ptx.read_text(errors="replace")
        for j, fn in enumerate(f for f in module["functions"] if f.get("entry")):
            kdir = d / f"k{j}"
            kdir.mkdir(exist_ok=True)
            recs.append(dict(base, **process_kernel(args, suite, bench, ptx, fn, text, kdir)))
    return recs


def summarise(recs, args):
    lines = []
    lines.append("| suite | benchmarks | .cu compiled | PTX parsed | kernels | static analysed | dynamic ran | exact | partial | disagree | crashes / timeouts / OOM |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for suite in SUITES:
        rs = [r for r in recs if r["suite"] == suite]
        if not rs:
            continue
        files = [r for r in rs if "kernel" not in r]
        ks = [r for r in rs if "kernel" in r]
        benches = len({r["bench"] for r in rs})
        comp = sum(r.get("compile") == "ok" for r in files)
        parsed = sum(r.get("parse") == "ok" for r in files)
        st = sum(r["static"] == "ok" for r in ks)
        dy = sum(r["dynamic"] == "ok" for r in ks)
        agree = {a: sum(r.get("agreement") == a for r in ks) for a in ("exact", "partial", "disagree")}
        bad = [sum(r[m] == o for r in ks for m in ("static", "dynamic")) for o in ("crash", "timeout", "oom")]
        lines.append(f"| {suite} | {benches} | {comp} of {len(files)} | {parsed} of {comp} | {len(ks)} | {st} | {dy} | {agree['exact']} | {agree['partial']} | {agree['disagree']} | {bad[0]} / {bad[1]} / {bad[2]} |")
    cov = {}
    for r in recs:
        for k, v in (r.get("coverage") or {}).items():
            if isinstance(v, int):
                cov[k] = cov.get(k, 0) + v
    if cov:
        lines.append("")
        lines.append("Loads over the statically analysed kernels: " + ", ".join(f"{k} {v}" for k, v in cov.items()) + ".")
    errs = {}
    for r in recs:
        for k in ("compile_error", "parse_error", "static_error", "dynamic_error"):
            if k in r:
                c = (k.replace("_error", ""), error_class(r[k]))
                errs[c] = errs.get(c, 0) + 1
    if errs:
        lines.append("")
        lines.append("| step | message (numbers, paths and quoted names elided) | runs |")
        lines.append("|---|---|---|")
        for (step, msg), n in sorted(errs.items(), key=lambda x: (-x[1], x[0])):
            cell = msg.replace("|", "\\|")
            lines.append(f"| {step} | {cell} | {n} |")
    dis = [r for r in recs if r.get("agreement") == "disagree"]
    if dis:
        lines.append("")
        lines.append("Disagreements: " + "; ".join(f"{r['suite']}/{r['bench']} {r['kernel']}: {r['why']}" for r in dis))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hecbench", type=Path)
    ap.add_argument("--rodinia", type=Path)
    ap.add_argument("--polybench", type=Path)
    ap.add_argument("--sample", default="30,10,10", help="benchmarks per suite, in the order hecbench,rodinia,polybench")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--paver", default=str(REPO / "target/release/paver"))
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
    ap.add_argument("--arch", default="compute_80")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per paver run")
    ap.add_argument("--memory", default="4G", help="PAVER_MEMORY_LIMIT of every run")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("suite-sample"))
    args = ap.parse_args()
    sizes = [int(x) for x in args.sample.split(",")]
    roots = {"hecbench": args.hecbench, "rodinia": args.rodinia, "polybench": args.polybench}
    work = []
    for (suite, root), n in zip(roots.items(), sizes):
        if root is None:
            continue
        all_b = benchmarks(suite, root)
        picked = sorted(random.Random(f"{args.seed}:{suite}").sample(all_b, min(n, len(all_b))))
        work += [(suite, root, b) for b in picked]
        print(f"{suite}: {len(picked)} of {len(all_b)} benchmarks", file=sys.stderr)
    scratch = args.out / "work"
    scratch.mkdir(parents=True, exist_ok=True)
    recs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = [pool.submit(process_bench, args, s, r, b, scratch) for s, r, b in work]
        for f in futs:
            recs += f.result()
            print(f"{len(recs)} records", file=sys.stderr, end="\r")
    with open(args.out / "results.jsonl", "w") as f:
        for r in recs:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    paver_rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    head = f"paver {paver_rev}, seed {args.seed}, sample {args.sample}, {args.arch}, {args.timeout} s and {args.memory} per run\n\n"
    (args.out / "summary.md").write_text(head + summarise(recs, args))
    print(head + summarise(recs, args))


if __name__ == "__main__":
    main()
