#!/usr/bin/env python3
"""The ICC table of docs/VALIDATION.md ("Intra-cluster coalescing") from a sweep of
kernels/icc.toml:

    paver sweep kernels/icc.toml -o sweeps/icc
    python3 tests/icc_table.py sweeps/icc

Per launch: the locality class, the redundancy (ICL, seed 002 Eq. 1, 2,000-cycle window)
under distributed and distributed-block scheduling with the model unchanged, and under
distributed-block the NoC requests (`noc.requests`) and cycles without ICC, with the merge
table (--icc) and with the merge table and the coalesced cache (--icc --coalesced-cache),
with the merges and coalesced-cache hits. Exits 1 when a high-locality launch with redundant
requests under distributed-block sends at least as many NoC requests with ICC + CC as
without (the issue's criterion; a launch whose sharing distributed-block already keeps
inside one SM has nothing left for ICC, and is listed apart)."""

import json
import sys
from pathlib import Path

STENCILS = {"hotspot", "stencil2d", "jacobi3d", "conv2d", "srad", "pathfinder"}


def variant(overrides):
    o = set(overrides)
    if "icc.coalesced_cache=true" in o:
        return "icc+cc"
    if "icc.merge_table=true" in o:
        return "icc"
    return "base"


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "sweeps/icc")
    runs = {}
    classes = {}
    for line in (root / "runs.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r.get("status") != "ok":
            print(f"not ok: {r.get('launch')} {r.get('tb_policy')}: {r.get('error')}", file=sys.stderr)
            continue
        launch = Path(r["launch"])
        label = f"{launch.parent.name}/{launch.name}"
        classes[label] = (r.get("locality_class"), r.get("inter_tb_fraction"))
        runs[(label, r["tb_policy"], variant(r["overrides"]))] = r["stats"]
    labels = sorted(classes)
    print("| launch | locality (inter-TB fraction) | redundancy, distributed | redundancy, distributed-block "
          "| NoC requests: D-B | D-B + ICC | D-B + ICC + CC | change | merges | CC hits "
          "| cycles: D-B | D-B + ICC + CC |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    failures = []
    nothing_left = []
    red = {}
    for label in labels:
        cls, frac = classes[label]
        d = runs.get((label, "distributed", "base"))
        b = runs.get((label, "distributed-block", "base"))
        i = runs.get((label, "distributed-block", "icc"))
        c = runs.get((label, "distributed-block", "icc+cc"))
        if not (d and b and i and c):
            print(f"| {label} | incomplete |")
            continue
        rd, rb = d["icc"]["redundancy"], b["icc"]["redundancy"]
        red[label] = rd
        nb, ni, nc = b["noc"]["requests"], i["noc"]["requests"], c["noc"]["requests"]
        change = (nc - nb) / nb * 100 if nb else 0.0
        print(f"| {label} | {cls} ({frac:.2f}) | {rd * 100:.1f} % | {rb * 100:.1f} % | {nb} | {ni} | {nc} "
              f"| {change:+.1f} % | {c['icc']['merges']} | {c['icc']['coalesced_cache_hits']} "
              f"| {b['cycles']} | {c['cycles']} |")
        if cls == "high" and nc >= nb:
            (failures if b["icc"]["redundant_requests"] > 0 else nothing_left).append(label)
    if red:
        mean = sum(red.values()) / len(red)
        st = [v for k, v in red.items() if k.split("/")[0] in STENCILS]
        other = [v for k, v in red.items() if k.split("/")[0] not in STENCILS]
        top = max(red, key=red.get)
        print()
        print(f"redundancy under distributed: mean {mean * 100:.1f} % over {len(red)} launches; "
              f"stencils {sum(st) / max(len(st), 1) * 100:.1f} % ({len(st)}), "
              f"others {sum(other) / max(len(other), 1) * 100:.1f} % ({len(other)}); highest {top} "
              f"{red[top] * 100:.1f} %")
    if nothing_left:
        print(f"high-locality launches without redundancy under distributed-block (nothing to "
              f"coalesce): {nothing_left}")
    if failures:
        print(f"high-locality launches without fewer NoC requests: {failures}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
