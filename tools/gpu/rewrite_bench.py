#!/usr/bin/env python3
"""TB groups on a real GPU: times `paver rewrite`'s persistent-worker kernels against the
original launch and the identity rewrite (issue 42; docs/REAL_GPU.md).

Two steps, so the GPU machine needs no Rust toolchain:

    # anywhere (CPU only): builds the launches, schedules and rewritten kernels
    python3 tools/gpu/rewrite_bench.py prepare --gpu h100 [--out target/rewrite_bench] [NAME ...]
    # on the GPU (CuPy, NumPy; `ncu` on PATH for --ncu)
    python3 tools/gpu/rewrite_bench.py run [--out target/rewrite_bench] [--reps 20] [--ncu] [NAME ...]

`prepare` writes, per benchmark NAME (the table BENCHES below: corpus kernels with
inter-TB reuse at sizes well beyond an H100's 50 MB L2), `original.json` (a paver launch
file), and for each order in ORDERS a schedule (`paver analyze --policy P --gpu G
--schedule`) and the rewritten kernel and launch (`paver rewrite`): `<order>.ptx`,
`<order>.json`, `<order>.worklist.bin`. Every kernel is the corpus's compute_90 PTX.

`run` builds the inputs from the launch files with kernels/gpu_reference.py's
initialisers (the same bytes paver builds), runs each variant once and checks its outputs
bit-identical to the original's, then times it with the protocol of
../shared/reference/h100 (3 warm-up and --reps timed launches, CUDA events, median; inputs
and the work-list table restored before every launch, outside the timed region; no L2
flush). With --ncu, every variant is also profiled once under Nsight Compute for its L2
and DRAM counters (METRICS). Results: `<out>/results.json` and a Markdown table on stdout
with each order's time relative to the identity rewrite (the loop's own cost cancels) and
the identity rewrite's relative to the original (the loop's cost).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "kernels"))

ORDERS = ["identity", "rb-ts", "kway-ts", "mst-ts"]
METRICS = [
    "gpu__time_duration.sum",
    "lts__t_sectors_op_read.sum",
    "lts__t_sector_hit_rate.pct",
    "dram__bytes_read.sum",
]


def buf(init, n, ty="f32"):
    return {"buffer": {"type": ty, "len": n, "init": init}}


def launch(kernel, grid, block, params):
    return {
        "format": "paver-launch/1",
        "kernel": kernel,
        "grid": list(grid) + [1] * (3 - len(grid)),
        "block": list(block) + [1] * (3 - len(block)),
        "dynamic_shared_bytes": 0,
        "params": [dict(index=i, **p) for i, p in enumerate(params)],
    }


def v(x):
    return {"value": x}


def benches():
    """name -> (corpus folder, launch). Sizes: every footprint is several times the L2."""
    n, m = 4096, 8192
    return {
        "mm_naive": ("mm_naive", launch("mm_naive", (n // 16, n // 16), (16, 16),
                                        [buf("rand(1)", n * n), buf("rand(2)", n * n), buf("zeros", n * n), v(n)])),
        "mm_tiled": ("mm_tiled", launch("mm_tiled", (n // 16, n // 16), (16, 16),
                                        [buf("rand(1)", n * n), buf("rand(2)", n * n), buf("zeros", n * n), v(n)])),
        "transpose": ("transpose", launch("transpose_naive", (m // 16, m // 16), (16, 16),
                                          [buf("rand(1)", m * m), buf("zeros", m * m), v(m), v(m)])),
        "stencil2d": ("stencil2d", launch("stencil2d_5pt", (m // 32, m // 4), (32, 4),
                                          [buf("rand(1)", m * m), buf("zeros", m * m), v(m), v(m)])),
        "conv2d": ("conv2d", launch("conv2d", (m // 32, m // 8), (32, 8),
                                    [buf("rand(1)", m * m), buf("zeros", m * m), v(m), v(m)])),
        "hotspot": ("hotspot", launch("hotspot", (-(-m // 14), -(-m // 14)), (16, 16),
                                      [buf("rand(1)", m * m), buf("rand(2,300,340)", m * m), buf("zeros", m * m),
                                       v(m), v(m), v(0.5), v(1.0), v(1.0), v(4.0), v(0.001), v(80.0)])),
        "srad": ("srad", launch("srad_diffusion_coeff", (m // 16, m // 16), (16, 16),
                                [buf("rand(1,1,2)", m * m)] + [buf("zeros", m * m)] * 5 + [v(m), v(m), v(0.05)])),
        "jacobi3d": ("jacobi3d", launch("jacobi3d_7pt", (64, 64, 128), (8, 8, 4),
                                        [buf("rand(1)", 512 ** 3), buf("zeros", 512 ** 3), v(512), v(512), v(512)])),
    }


def paver():
    p = ROOT / "target" / "release" / "paver"
    return str(p) if p.exists() else "paver"


def sh(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, args))}\n{r.stderr}")
    return r


def prepare(a):
    for name, (folder, l) in benches().items():
        if a.names and name not in a.names:
            continue
        d = Path(a.out) / name
        d.mkdir(parents=True, exist_ok=True)
        ptx = next((ROOT / "kernels" / folder).glob("*.compute_90.ptx"))
        (d / "original.json").write_text(json.dumps(l, indent=1) + "\n")
        (d / "original.ptx").write_text(ptx.read_text())
        for order in ORDERS:
            out = ["-o", d / f"{order}.ptx", "--launch-out", d / f"{order}.json", "-q"]
            if order == "identity":
                sh([paver(), "rewrite", ptx, "--launch", d / "original.json", "--identity",
                    "--gpu", a.gpu] + out)
            else:
                s = d / f"{order}.schedule.json"
                sh([paver(), "analyze", ptx, "--launch", d / "original.json", "--policy", order,
                    "--gpu", a.gpu, "--schedule", s, "-q"])
                sh([paver(), "rewrite", ptx, "--launch", d / "original.json", "--schedule", s] + out)
        print(f"prepared {name} in {d}", file=sys.stderr)


def load(ptx_path, launch_path):
    """The kernel, its argument list (device arrays and scalars) and the host copies."""
    import cupy as cp
    import gpu_reference as g

    l = json.loads(Path(launch_path).read_text())
    types = g.ptx_params(Path(ptx_path).read_text(), l["kernel"])
    by_index = {p["index"]: p for p in l["params"]}
    host, args = {}, []
    for i, ty in enumerate(types):
        p = by_index[i]
        if "buffer" in p:
            host[i] = g.materialise(p["buffer"], Path(launch_path).parent, g.buffer_len(p["buffer"], by_index))
            args.append(cp.asarray(host[i]))
        else:
            args.append(g.SCALAR[ty](p["value"]))
    fn = cp.RawModule(path=str(ptx_path)).get_function(l["kernel"])
    return fn, l, args, host


def time_variant(ptx, launch_path, reps):
    import cupy as cp

    fn, l, args, host = load(ptx, launch_path)
    grid, block = tuple(l["grid"]), tuple(l["block"])

    def restore():
        for i, h in host.items():
            args[i].set(h)

    def once():
        fn(grid, block, tuple(args), shared_mem=l.get("dynamic_shared_bytes", 0))

    restore()
    once()
    cp.cuda.Device().synchronize()
    outputs = {i: cp.asnumpy(args[i]) for i in host}
    times = []
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for k in range(3 + reps):
        restore()
        cp.cuda.Device().synchronize()
        start.record()
        once()
        stop.record()
        stop.synchronize()
        if k >= 3:
            times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times), outputs


def ncu(ptx, launch_path):
    """One profiled launch in a child process: {metric: value}."""
    import csv
    import io

    cmd = [os.environ.get("NCU", "ncu"), "--csv", "--metrics", ",".join(METRICS), sys.executable,
           __file__, "once", str(ptx), str(launch_path)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    rows = [row for row in csv.DictReader(io.StringIO(r.stdout[r.stdout.find('"ID"'):]))]
    return {row["Metric Name"]: float(row["Metric Value"].replace(",", "")) for row in rows}


def run(a):
    results = {}
    for name in benches():
        if a.names and name not in a.names:
            continue
        d = Path(a.out) / name
        if not (d / "original.json").exists():
            print(f"{name}: not prepared (run `prepare` first)", file=sys.stderr)
            continue
        r = {}
        base_ms, base_out = time_variant(d / "original.ptx", d / "original.json", a.reps)
        r["original"] = {"ms": base_ms}
        if a.ncu:
            r["original"]["ncu"] = ncu(d / "original.ptx", d / "original.json")
        for order in ORDERS:
            ms, out = time_variant(d / f"{order}.ptx", d / f"{order}.json", a.reps)
            same = all(out[i].tobytes() == base_out[i].tobytes() for i in base_out)
            r[order] = {"ms": ms, "outputs_identical": same}
            if a.ncu:
                r[order]["ncu"] = ncu(d / f"{order}.ptx", d / f"{order}.json")
            print(f"{name} {order}: {ms:.3f} ms, outputs {'identical' if same else 'DIFFER'}", file=sys.stderr)
        results[name] = r
    (Path(a.out) / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print("| kernel | original ms | identity rewrite / original | rb-ts / identity | kway-ts / identity | mst-ts / identity | outputs |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, r in results.items():
        ident = r["identity"]["ms"]
        rel = " | ".join(f"{r[o]['ms'] / ident:.3f}" for o in ORDERS[1:])
        ok = all(r[o]["outputs_identical"] for o in ORDERS)
        print(f"| {name} | {r['original']['ms']:.3f} | {ident / r['original']['ms']:.3f} | {rel} | "
              f"{'identical' if ok else 'DIFFER'} |")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "once":
        # The child ncu profiles: one launch of one variant.
        import cupy as cp

        fn, l, args, _ = load(sys.argv[2], sys.argv[3])
        fn(tuple(l["grid"]), tuple(l["block"]), tuple(args), shared_mem=l.get("dynamic_shared_bytes", 0))
        cp.cuda.Device().synchronize()
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prepare")
    pp.add_argument("--gpu", default="h100")
    pr = sub.add_parser("run")
    pr.add_argument("--reps", type=int, default=20)
    pr.add_argument("--ncu", action="store_true")
    for q in (pp, pr):
        q.add_argument("--out", default=str(ROOT / "target" / "rewrite_bench"))
        q.add_argument("names", nargs="*")
    a = p.parse_args()
    prepare(a) if a.cmd == "prepare" else run(a)


if __name__ == "__main__":
    main()
