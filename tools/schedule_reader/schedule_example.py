"""Reading a paver schedule (paver-schedule/1) and TB graph from Python, e.g. in a notebook.

    python3 tools/schedule_reader/schedule_example.py schedule.json [CYCLES] [--graph g.npz]

Part 1 needs only the standard library: it replays the schedule on the toy GPU of
replay.cpp (N SMs x x TB contexts, every TB running CYCLES cycles, one TB per SM per cycle,
groups from a global queue as the PAVER runtime hands them out, no stealing) and prints
the same lines. Part 2 (with --graph) loads the locality graph that `paver analyze --graph
g.npz` wrote with SciPy and reports how much of its weight the groups keep together.
"""

import json
import sys
from collections import deque


def replay(schedule, cycles=3):
    """Yields (cycle, sm, tb) in issue order."""
    queue = deque(schedule["groups"])
    local = [deque() for _ in range(schedule["num_sms"])]
    running = [[] for _ in range(schedule["num_sms"])]
    gx, gy, gz = schedule["grid"]
    total, issued, cycle = gx * gy * gz, 0, 0
    while issued < total:
        running = [[end for end in r if end > cycle] for r in running]
        for sm in range(schedule["num_sms"]):
            if len(running[sm]) >= schedule["tbs_per_sm"]:
                continue
            if not local[sm]:
                if not queue:
                    continue
                local[sm] = deque(queue.popleft())
            tb = local[sm].popleft()
            running[sm].append(cycle + cycles)
            issued += 1
            yield cycle, sm, tb
        cycle += 1


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    graph = argv[argv.index("--graph") + 1] if "--graph" in argv else None
    if graph in args:
        args.remove(graph)
    with open(args[0]) as f:
        schedule = json.load(f)
    assert schedule["format"] == "paver-schedule/1", schedule["format"]
    cycles = int(args[1]) if len(args) > 1 else 3
    gx, gy, _ = schedule["grid"]
    last, count = 0, 0
    for cycle, sm, tb in replay(schedule, cycles):
        print(cycle, sm, tb, tb % gx, (tb // gx) % gy, tb // (gx * gy))
        last, count = cycle, count + 1
    print(f"done: {count} TBs in {last + 1} cycles")
    if graph:
        import scipy.sparse  # only part 2 needs SciPy

        a = scipy.sparse.load_npz(graph).tocoo()
        group = {tb: g for g, members in enumerate(schedule["groups"]) for tb in members}
        inside = sum(int(w) for i, j, w in zip(a.row, a.col, a.data) if group[i] == group[j])
        print(f"graph: {a.shape[0]} TBs, weight {int(a.data.sum()) // 2}, inside groups {inside // 2}")


if __name__ == "__main__":
    main(sys.argv)
