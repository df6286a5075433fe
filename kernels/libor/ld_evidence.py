#!/usr/bin/env python3
"""The Locality Descriptor run-time evidence of docs/VALIDATION.md (issue 17): hard pinning
on libor_path (caching and prefetch variants, the unpin timer) and the full Locality
Descriptor (--tb-policy ld --cache-policy ld --prefetch ld) against LRR + plain + none on
the kernels of the caching/prefetch table. Prints the markdown tables.

    cargo build --release
    python3 kernels/libor/ld_evidence.py target/release/paver OUTDIR [libor|full|all]

Run from the repository root. Every run's stats JSON is kept in OUTDIR (a run already
there is not repeated). "2 SMs" runs use a copy of the configuration with `core.num_sms = 2`
written into OUTDIR, so that `--tb-policy ld` (Algorithm 1, which splits C-Tiles until
every SM has one) sees the SMs the run has; `--set core.num_sms=2` would leave the
schedule built for the full GPU.
"""
import json, os, re, subprocess, sys, math

P, OUT = sys.argv[1], sys.argv[2]
WHICH = sys.argv[3] if len(sys.argv) > 3 else "all"
os.makedirs(OUT, exist_ok=True)
for g in ("titanv", "gtx480"):
    with open(os.path.join("configs", "gpus", g + ".toml")) as f:
        text = re.sub(r"(?m)^num_sms = \d+", "num_sms = 2", f.read(), count=1)
    with open(os.path.join(OUT, "%s_2sm.toml" % g), "w") as f:
        f.write(text)

KERNELS = [
    ("histogram/histogram.compute_70.ptx", "histogram/small.histogram_global.json"),
    ("transpose/transpose.compute_70.ptx", "transpose/small.json"),
    ("mvt/mvt.compute_70.ptx", "mvt/small.mvt_kernel2.json"),
    ("mm_tiled/mm_tiled.compute_70.ptx", "mm_tiled/small.json"),
    ("syrk/syrk.compute_70.ptx", "syrk/small.json"),
    ("conv2d/conv2d.compute_70.ptx", "conv2d/small.json"),
    ("libor/libor.compute_70.ptx", "libor/small.json"),
]
LIBOR = KERNELS[-1]

def gpu_arg(g, sms):
    return g if sms == "full" else os.path.join(OUT, "%s_2sm.toml" % g)

def run(k, g, sms, flags):
    ptx, launch = k
    key = "%s__%s__%s__%s" % (launch.replace("/", "_"), g, sms, "_".join(flags).replace("-", "").replace("=", "").replace(".", "") or "base")
    path = os.path.join(OUT, key + ".json")
    if not os.path.exists(path):
        cmd = [P, "simulate", "kernels/" + ptx, "--launch", "kernels/" + launch, "--gpu", gpu_arg(g, sms), "--quiet", "-o", path] + flags
        subprocess.run(cmd, check=True)
    with open(path) as f:
        return json.load(f)

def hit(d):
    l1 = d["l1"]
    return 100.0 * l1["hits"] / max(l1["accesses"], 1)

def libor_L(d, launch="kernels/libor/small.json"):
    """Hit rate (%) of demand reads of L, the INTRA-THREAD structure, from the stats and the launch."""
    lf = json.load(open(launch))
    grid, block = lf["grid"][0], lf["block"][0]
    pv = {p["index"]: p.get("value") for p in lf["params"]}
    N, Nmat = pv[3], pv[4]
    warps = grid * block // 32
    l_lines = warps * (sum(N - n - 1 for n in range(Nmat)) + N)
    z_lines = warps * Nmat
    l1, l2 = d["l1"], d["l2"]
    reads = l1["accesses"] - l1["writes"]
    f = reads // (l_lines + z_lines)  # 1 (lines) or 4 (sectors)
    assert reads == f * (l_lines + z_lines), (reads, l_lines, z_lines)
    pf = d.get("ld", {}).get("prefetches_issued", 0)
    l2_reads = l2["accesses"] - l2["writes"] - pf
    l_miss = l2_reads - f * z_lines
    l_hits = f * l_lines - l_miss - l1["hit_reserve"]
    return 100.0 * l_hits / (f * l_lines)

def ldstats(d):
    ld = d.get("ld")
    if not ld:
        return "-"
    return "%d / %d / %d / %d / %d / %d/%d/%d/%d" % (ld["bypassed"], ld["pinned_insertions"], ld["pinned_evictions"], ld["unpin_resets"], ld["soft_pinned_insertions"], ld["prefetches_issued"], ld["prefetches_dropped"], ld["prefetches_useful"], ld["prefetches_late"])

VARIANTS = [[], ["--cache-policy", "ld"], ["--prefetch", "next-line"], ["--prefetch", "ld"], ["--cache-policy", "ld", "--prefetch", "ld"]]

if WHICH in ("all", "libor"):
    print("\n### libor: caching and prefetch\n")
    print("| gpu | SMs | plain | cache ld | prefetch next-line | prefetch ld | cache ld + prefetch ld | ld stats (cache ld): bypassed / pinned / way-0 evictions / unpin resets / soft / prefetch issued/dropped/useful/late |")
    print("|---|---|---|---|---|---|---|---|")
    for sms in ("full", "2"):
        for g in ("titanv", "gtx480"):
            base = run(LIBOR, g, sms, [])
            cells = []
            for v in VARIANTS:
                d = run(LIBOR, g, sms, v)
                s = "%d (%.1f; L %.1f)" % (d["cycles"], hit(d), libor_L(d))
                if v:
                    s += " %.3fx" % (base["cycles"] / d["cycles"])
                cells.append(s)
            cl = run(LIBOR, g, sms, ["--cache-policy", "ld"])
            print("| %s | %s | %s | %s |" % (g, sms, " | ".join(cells), ldstats(cl)))
    print("\n### libor: the unpin timer (--cache-policy ld --set ld.unpin_cycles=U)\n")
    US = [0, 5000, 10000, 20000, 50000, 100000, 200000]
    print("| gpu | SMs | plain | " + " | ".join("U=%d" % u for u in US) + " |")
    print("|---|---|---|" + "---|" * len(US))
    for sms in ("full", "2"):
        for g in ("titanv", "gtx480"):
            base = run(LIBOR, g, sms, [])
            cells = ["%d (L %.1f)" % (base["cycles"], libor_L(base))]
            for u in US:
                d = run(LIBOR, g, sms, ["--cache-policy", "ld", "--set", "ld.unpin_cycles=%d" % u])
                ld = d["ld"]
                cells.append("%d (L %.1f) %.3fx; %d pinned, %d way-0, %d resets" % (d["cycles"], libor_L(d), base["cycles"] / d["cycles"], ld["pinned_insertions"], ld["pinned_evictions"], ld["unpin_resets"]))
            print("| %s | %s | %s |" % (g, sms, " | ".join(cells)))

if WHICH in ("all", "full"):
    print("\n### The full Locality Descriptor (Fig. 14 LDesc): --tb-policy ld --cache-policy ld --prefetch ld\n")
    print("| launch | gpu | SMs | LRR + plain + none | tb ld | LRR + cache ld + prefetch ld | tb ld + cache ld + prefetch ld (full) |")
    print("|---|---|---|---|---|---|---|")
    speed = {}
    for sms in ("full", "2"):
        for g in ("titanv", "gtx480"):
            for k in KERNELS:
                base = run(k, g, sms, [])
                cells = ["%d (%.1f)" % (base["cycles"], hit(base))]
                for v in (["--tb-policy", "ld"], ["--cache-policy", "ld", "--prefetch", "ld"], ["--tb-policy", "ld", "--cache-policy", "ld", "--prefetch", "ld"]):
                    d = run(k, g, sms, v)
                    r = base["cycles"] / d["cycles"]
                    speed.setdefault((sms, g, " ".join(v)), []).append(r)
                    cells.append("%d (%.1f) %.3fx" % (d["cycles"], hit(d), r))
                print("| %s | %s | %s | %s |" % (k[1], g, sms, " | ".join(cells)))
    print()
    for key, rs in sorted(speed.items()):
        gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
        print("geomean %s: %.3fx over %d (min %.3f, max %.3f)" % (key, gm, len(rs), min(rs), max(rs)))
