#!/usr/bin/env python3
"""Run every corpus kernel at its small launch on a real NVIDIA GPU and keep the results.

For each launch file kernels/<dir>/small*.json this script
  * builds the input buffers from the launch description, with an implementation of the
    initialisers written from docs/LAUNCH.md independently of the Rust one (launch/src/init.rs),
  * records an FNV-1a 64 digest of every initial buffer (the Rust tests recompute them, so the
    two implementations check each other),
  * loads the kernel's compute_90 PTX with CuPy, launches it on the GPU, copies every buffer
    back and writes each one the kernel changed as NumPy .npy under
    kernels/<dir>/reference/<launch-name>/p<i>.npy,
  * writes kernels/<dir>/reference/<launch-name>/meta.json (GPU, driver, digests, time).

The outputs are the real-hardware oracle for the PTX interpreter (see docs/VALIDATION.md).
Needs a GPU, CuPy and NumPy; nothing in the tests or CI runs this script.

    python3 kernels/gpu_reference.py [KERNEL_DIR ...]

--ncu mode (issue 11, timing-model fidelity): profiles every corpus small launch with Nsight
Compute and writes one CSV row per launch (kernels/ncu_<gpu>.csv, or --out PATH):

    python3 kernels/gpu_reference.py --ncu [--out kernels/ncu_h100.csv] [KERNEL_DIR ...]

Each launch runs in its own process under `ncu` (NCU env var, default `ncu` on PATH) with
ncu's defaults, which the comparison relies on: --cache-control all (caches flushed before
the kernel) and --clock-control base (clocks locked to base). Metrics (METRICS below):
sm__cycles_elapsed.max, smsp__inst_executed.sum, the L1 and L2 sector hit rates
(l1tex__t_sector_hit_rate.pct, lts__t_sector_hit_rate.pct), lts__t_sectors_op_read.sum and
dram__bytes_read.sum. Written without a GPU at hand: it has not been run yet.
"""
import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
DTYPES = {
    "u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32,
    "i32": np.int32, "u64": np.uint64, "i64": np.int64, "f32": np.float32, "f64": np.float64,
}
BUFFER_SPACING_LOG2 = 36


def splitmix_block(seed, n, skip=0):
    """Outputs skip+1 .. skip+n of SplitMix64(seed): its state advances by GAMMA each draw,
    so draw k uses state seed + k*GAMMA (mod 2^64), which vectorises."""
    with np.errstate(over="ignore"):
        k = np.arange(skip + 1, skip + n + 1, dtype=np.uint64)
        z = np.uint64(seed) + k * np.uint64(GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


class SplitMix:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + GAMMA) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def csr(rows, cols, avg, seed):
    rng = SplitMix(seed)
    row_ptr, col_idx = [0], []
    for _ in range(rows):
        deg = min(rng.next() % (2 * avg + 1), cols)
        picked = set()
        for j in range(cols - deg, cols):
            t = rng.next() % (j + 1)
            picked.add(j if t in picked else t)
        col_idx.extend(sorted(picked))
        row_ptr.append(len(col_idx))
    return row_ptr, col_idx


def parse_init(text):
    m = re.fullmatch(r"\s*([a-z_]+)\s*(?:\((.*)\))?\s*", text)
    name, args = m.group(1), m.group(2)
    return name, ([a.strip() for a in args.split(",")] if args is not None else [])


def to_type(values_f64, ty):
    """Rust `f64 as T` for the element type: integers truncate toward zero and saturate
    (signed via i64, unsigned via u64), then keep the low bits of the element width."""
    dt = DTYPES[ty]
    if ty.startswith("f"):
        return np.asarray(values_f64, dtype=np.float64).astype(dt)
    lo, hi = (-(2**63), 2**63 - 1) if ty.startswith("i") else (0, 2**64 - 1)
    ints = [0 if math.isnan(v) else min(max(int(v), lo), hi) for v in np.asarray(values_f64, dtype=np.float64).tolist()]
    return ints_to_type(ints, ty)


def ints_to_type(values, ty):
    """Two's-complement truncation of Python ints (Rust `push_u64`); floats get the value."""
    dt = DTYPES[ty]
    if ty.startswith("f"):
        return np.array([float(v if v < 2**63 else v - 2**64) for v in values], dtype=dt)
    bits = 8 * np.dtype(dt).itemsize
    unsigned = np.dtype("u%d" % (bits // 8))
    return np.array([v & ((1 << bits) - 1) for v in values], dtype=np.uint64).astype(unsigned).view(dt)


def materialise(buf, base_dir, lengths):
    ty, init = buf["type"], buf["init"]
    name, args = parse_init(init)
    n = lengths
    dt = DTYPES[ty]
    if name == "zeros":
        return np.zeros(n, dtype=dt)
    if name == "ones":
        return np.ones(n, dtype=dt)
    if name == "iota":
        return ints_to_type(range(n), ty)
    if name == "fill":
        return to_type(np.full(n, float(args[0])), ty)
    if name == "onehot":
        a = np.zeros(n, dtype=dt)
        a[int(args[0])] = 1
        return a
    if name == "rand":
        seed = int(args[0])
        x = splitmix_block(seed, n)
        if ty.startswith("f"):
            lo, hi = (float(args[1]), float(args[2])) if len(args) == 3 else (0.0, 1.0)
            u = (x >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
            return (lo + (hi - lo) * u).astype(dt)
        lo, hi = (float(args[1]), float(args[2])) if len(args) == 3 else (0.0, 256.0)
        lo, hi = math.ceil(lo), math.ceil(hi)
        span = max(hi - lo, 1)
        return ints_to_type([lo + int(v) % span for v in x.tolist()], ty)
    if name == "file":
        return np.fromfile(base_dir / args[0], dtype=np.dtype(dt).newbyteorder("<"))
    if name in ("csr_row_ptr", "csr_col_idx"):
        rp, ci = csr(*(int(a) for a in args))
        return ints_to_type(rp if name == "csr_row_ptr" else ci, ty)
    if name == "prefix_sum":
        rng, lo, hi = SplitMix(int(args[0])), int(args[1]), int(args[2])
        out, at = [], 0
        for i in range(n):
            if i > 0:
                at += lo + rng.next() % (hi - lo)
            out.append(at)
        return ints_to_type(out, ty)
    if name == "linked_list":
        rng, end = SplitMix(int(args[0])), (int(args[1]) if len(args) == 2 else -1)
        order = list(range(n))
        for i in range(n - 1, 1, -1):
            j = 1 + rng.next() % i
            order[i], order[j] = order[j], order[i]
        nxt = [end] * n
        for a, b in zip(order, order[1:]):
            nxt[a] = b
        return ints_to_type(nxt, ty)
    raise ValueError("unknown initialiser " + init)


def buffer_len(buf, params_by_index):
    if "len" in buf:
        return buf["len"]
    if "len_of" in buf:
        return buffer_len(params_by_index[buf["len_of"]]["buffer"], params_by_index)
    name, args = parse_init(buf["init"])
    if name == "csr_row_ptr":
        return int(args[0]) + 1
    if name == "csr_col_idx":
        return len(csr(*(int(a) for a in args))[1])
    raise ValueError("buffer without len: " + buf["init"])


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    arr = np.frombuffer(data, dtype=np.uint8)
    # Plain loop in chunks: small launches only.
    for b in arr.tolist():
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def ptx_params(ptx_text, entry):
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\((.*?)\)", ptx_text, re.S)
    if not m:
        raise ValueError("entry %s not in PTX" % entry)
    out = []
    for line in m.group(1).split(","):
        t = re.search(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)", line)
        out.append(t.group(1))
    return out


SCALAR = {"u32": np.uint32, "b32": np.uint32, "s32": np.int32, "u64": np.uint64, "b64": np.uint64,
          "s64": np.int64, "f32": np.float32, "f64": np.float64, "u16": np.uint16, "s16": np.int16,
          "u8": np.uint8, "s8": np.int8}


def run_launch(launch_path: Path):
    import cupy as cp

    launch = json.loads(launch_path.read_text())
    kdir = launch_path.parent
    entry = launch["kernel"]
    ptx_candidates = sorted(kdir.glob("*.compute_90.ptx"))
    ptx_path = next(p for p in ptx_candidates if (".entry " + entry) in p.read_text())
    types = ptx_params(ptx_path.read_text(), entry)
    by_index = {p["index"]: p for p in launch["params"]}
    host, digests, args = {}, {}, []
    for i, ty in enumerate(types):
        p = by_index[i]
        if "buffer" in p:
            n = buffer_len(p["buffer"], by_index)
            a = materialise(p["buffer"], kdir, n)
            assert a.size == n, (launch_path, i, a.size, n)
            host[i] = a
            digests[str(i)] = "%016x" % fnv1a64(a.tobytes())
            args.append(cp.asarray(a))
        else:
            args.append(SCALAR[ty](p["value"]))
    mod = cp.RawModule(path=str(ptx_path))
    fn = mod.get_function(entry)
    grid = tuple(launch["grid"]) + (1,) * (3 - len(launch["grid"]))
    block = tuple(launch["block"]) + (1,) * (3 - len(launch["block"]))
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    fn(grid, block, tuple(args), shared_mem=launch.get("dynamic_shared_bytes", 0))
    cp.cuda.Device().synchronize()
    elapsed = time.perf_counter() - t0
    out_dir = kdir / "reference" / launch_path.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    outputs = {}
    for i, a in enumerate(args):
        if i in host:
            after = cp.asnumpy(a)
            # Only buffers the kernel changed are kept; inputs are rebuilt from the launch.
            if after.tobytes() != host[i].tobytes():
                np.save(out_dir / ("p%d.npy" % i), after)
                outputs[str(i)] = "%016x" % fnv1a64(after.tobytes())
    props = cp.cuda.runtime.getDeviceProperties(0)
    meta = {
        "launch": launch_path.name,
        "ptx": ptx_path.name,
        "gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "driver": cp.cuda.runtime.driverGetVersion(),
        "input_fnv1a64": digests,
        "output_fnv1a64": outputs,
        "kernel_seconds": round(elapsed, 6),
    }
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return meta


METRICS = [
    "sm__cycles_elapsed.max",
    "smsp__inst_executed.sum",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct",
    "lts__t_sectors_op_read.sum",
    "dram__bytes_read.sum",
]


def launch_only(launch_path: Path):
    """Builds the inputs and runs the kernel once, keeping nothing (the process ncu profiles)."""
    import cupy as cp

    launch = json.loads(launch_path.read_text())
    kdir = launch_path.parent
    entry = launch["kernel"]
    ptx_path = next(p for p in sorted(kdir.glob("*.compute_90.ptx")) if (".entry " + entry) in p.read_text())
    types = ptx_params(ptx_path.read_text(), entry)
    by_index = {p["index"]: p for p in launch["params"]}
    args = []
    for i, ty in enumerate(types):
        p = by_index[i]
        if "buffer" in p:
            a = materialise(p["buffer"], kdir, buffer_len(p["buffer"], by_index))
            args.append(cp.asarray(a))
        else:
            args.append(SCALAR[ty](p["value"]))
    fn = cp.RawModule(path=str(ptx_path)).get_function(entry)
    grid = tuple(launch["grid"]) + (1,) * (3 - len(launch["grid"]))
    block = tuple(launch["block"]) + (1,) * (3 - len(launch["block"]))
    cp.cuda.Device().synchronize()
    fn(grid, block, tuple(args), shared_mem=launch.get("dynamic_shared_bytes", 0))
    cp.cuda.Device().synchronize()


def ncu_one(launch_path: Path, root: Path):
    """Profiles one launch under ncu; returns {metric: value} of the launch's kernel."""
    import csv
    import io
    import os
    import subprocess

    entry = json.loads(launch_path.read_text())["kernel"]
    cmd = [
        os.environ.get("NCU", "ncu"),
        "--csv", "--page", "raw",
        "--metrics", ",".join(METRICS),
        "--kernel-name", "regex:^%s$" % re.escape(entry),
        "--launch-count", "1",
        sys.executable, str(Path(__file__).resolve()), "--launch-only", str(launch_path),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=str(root)).stdout
    # ncu prints its own "==PROF==" lines before the CSV; the CSV starts at the header row.
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
    # rows[0] holds the units, the kernel's values follow.
    data = [r for r in rows[1:] if r.get("Kernel Name", "").split("(")[0] == entry]
    if not data:
        raise RuntimeError("ncu reported no %s kernel" % entry)
    return {m: data[0][m].replace(",", "") for m in METRICS}


def ncu_main(args):
    import os

    root = Path(__file__).resolve().parent
    out = None
    if "--out" in args:
        k = args.index("--out")
        out = Path(args[k + 1])
        del args[k:k + 2]
    dirs = [root / d for d in args] or sorted(p for p in root.iterdir() if p.is_dir())
    rows, failed = [], 0
    for d in dirs:
        for launch in sorted(d.glob("small*.json")):
            try:
                m = ncu_one(launch, root)
                rows.append([d.name, launch.name, json.loads(launch.read_text())["kernel"]] + [m[k] for k in METRICS])
                print("ok   %s" % launch.relative_to(root))
            except Exception as e:  # report and go on with the other kernels
                failed += 1
                print("FAIL %-40s %s: %s" % (launch.relative_to(root), type(e).__name__, e))
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    gpu = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    if out is None:
        out = root / ("ncu_%s.csv" % re.sub(r"[^a-z0-9]+", "_", gpu.lower()).strip("_"))
    with open(out, "w") as f:
        f.write("# %s, driver %s, ncu defaults (--cache-control all, --clock-control base)\n"
                % (gpu, cp.cuda.runtime.driverGetVersion()))
        f.write(",".join(["dir", "launch", "kernel"] + METRICS) + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    print("wrote %s (%d launches, %d failed)" % (out, len(rows), failed))
    sys.exit(1 if failed else 0)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--launch-only":
        launch_only(Path(sys.argv[2]))
        return
    if len(sys.argv) >= 2 and sys.argv[1] == "--ncu":
        ncu_main(sys.argv[2:])
        return
    root = Path(__file__).resolve().parent
    dirs = [root / d for d in sys.argv[1:]] or sorted(p for p in root.iterdir() if p.is_dir())
    failed = 0
    for d in dirs:
        for launch in sorted(d.glob("small*.json")):
            try:
                meta = run_launch(launch)
                print("ok   %-40s %.3f ms" % (launch.relative_to(root), meta["kernel_seconds"] * 1e3))
            except Exception as e:  # report and go on with the other kernels
                failed += 1
                print("FAIL %-40s %s: %s" % (launch.relative_to(root), type(e).__name__, e))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
