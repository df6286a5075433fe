"""Launch files derived from a corpus launch (kernels/make_waves.py, kernels/make_table2.py):
the source launch with a new grid and some parameters changed, written in the corpus's
layout (one key per line, one parameter per line)."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def derive(d, src, grid, changes):
    """kernels/<d>/<src> with `grid` and `changes` ({param index: ("value", v) or ("len",
    buffer elements)}); every changed parameter must exist."""
    with open(os.path.join(HERE, d, src)) as f:
        launch = json.load(f)
    launch["grid"] = grid
    seen = set()
    for p in launch["params"]:
        c = changes.get(p["index"])
        if c is None:
            continue
        seen.add(p["index"])
        kind, v = c
        if kind == "value":
            p["value"] = v
        else:
            p["buffer"]["len"] = v
    missing = set(changes) - seen
    if missing:
        raise SystemExit(f"{d}/{src}: no parameter {sorted(missing)}")
    return launch


def write(d, dst, launch):
    """Writes kernels/<d>/<dst> and prints its TB count."""
    lines = ["{"]
    keys = list(launch.keys())
    for i, k in enumerate(keys):
        end = "," if i + 1 < len(keys) else ""
        if k == "params":
            lines.append('  "params": [')
            for j, p in enumerate(launch["params"]):
                pend = "," if j + 1 < len(launch["params"]) else ""
                lines.append("    " + json.dumps(p) + pend)
            lines.append("  ]" + end)
        else:
            lines.append("  " + json.dumps(k) + ": " + json.dumps(launch[k]) + end)
    lines.append("}")
    with open(os.path.join(HERE, d, dst), "w") as f:
        f.write("\n".join(lines) + "\n")
    g = launch["grid"]
    print(f"{d}/{dst}: {g[0] * g[1] * g[2]} TBs")
