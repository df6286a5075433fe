#!/usr/bin/env python3
"""Regenerate the PTX of the dynamic-parallelism corpus, kernels/dp/<name>/<name>.cu.

Called by kernels/gen.py (so kernels/regenerate and `gen.py --check` cover it); runnable
alone with a Python that has the pinned CUDA 13 wheels:

    python kernels/gen_dp.py [--check]

Kernels that launch kernels need relocatable device code: nvcc 13 compiles them with
-rdc=true (CDP2, the only device runtime of CUDA 12+/13; its entry points are the
`.extern .func __cudaCDP2*` declarations in the PTX), and NVRTC's corpus variants
(compute_70 / compute_90) are not made for them. For every kernels/dp/<name>/<name>.cu
it writes

    <name>.nvcc13.sm_90.ptx    nvcc 13.x, -ptx -rdc=true -arch=sm_90 -O3 -lineinfo

checks it with CUDA 13 ptxas --compile-only (the device runtime is linked later, so the
__cudaCDP2* functions stay unresolved), records registers and shared memory in the
"resources" (sm_90) of the launch files small.<entry>.json and validates them against the
entry signatures. Only entries the host launches have launch files; the others are
launched from the device. Paths are made machine-independent as gen.py does.
"""

import glob
import json
import os
import re
import shutil
import sys

import gen

HERE = os.path.dirname(os.path.abspath(__file__))
DP = os.path.join(HERE, "dp")
NVCC_DIR = "/tmp/paver-kernels-nvcc13-dp"


def main(wr=None, nvcc13=None, ptxas13=None):
    check = "--check" in sys.argv[1:]
    wr = wr or gen.Writer(check)
    nvcc13 = nvcc13 or gen.find_tool("cu13/bin/nvcc")
    ptxas13 = ptxas13 or gen.find_tool("cu13/bin/ptxas")
    dirs = sorted(d for d in glob.glob(os.path.join(DP, "*"))
                  if os.path.isfile(os.path.join(d, os.path.basename(d) + ".cu")))
    if not dirs:
        gen.die("no kernels under kernels/dp")
    rows = []
    for d in dirs:
        name = os.path.basename(d)
        nv_dir = os.path.join(NVCC_DIR, name)
        os.makedirs(nv_dir, exist_ok=True)
        nv_src = os.path.join(nv_dir, name + ".cu")
        shutil.copyfile(os.path.join(d, name + ".cu"), nv_src)
        out_ptx = os.path.join(nv_dir, name + ".ptx")
        gen.run([nvcc13, "-ptx", "-rdc=true", "-arch=sm_90", "-O3", "-lineinfo", "-Werror",
                 "all-warnings", name + ".cu", "-o", out_ptx], cwd=nv_dir)
        with open(out_ptx) as f:
            ptx = f.read()
        if nv_src not in ptx:
            gen.die("PTX of %s does not name %s in its .file directive" % (name, nv_src))
        ptx = ptx.replace('"%s"' % nv_src, '"%s.cu"' % name)
        ptx = re.sub(r'"[^"]*/nvidia/cu13/bin/\.\./include/', '"nvidia/cu13/include/', ptx)
        if HERE in ptx or "/tmp" in ptx or re.search(r'^\s*\.file\s+\d+\s+"/', ptx, re.M):
            gen.die("PTX of %s still contains a machine-specific path" % name)
        if "__cudaCDP2LaunchDeviceV2" not in ptx:
            gen.die("%s launches no kernel from the device" % name)
        wr.write(os.path.join(d, "%s.nvcc13.sm_90.ptx" % name), ptx)
        res = gen.ptxas_resources(ptxas13, "sm_90", ptx, name, ["--compile-only"])
        ents = gen.ptx_entries(ptx)
        launches = sorted(glob.glob(os.path.join(d, "*.json")))
        if not launches:
            gen.die("%s has no launch file" % name)
        for lp in launches:
            m = re.match(r"small\.(\w+)\.json$", os.path.basename(lp))
            if not m or m.group(1) not in ents:
                gen.die("%s: launch files are small.<entry>.json" % os.path.relpath(lp, HERE))
            entry = m.group(1)
            with open(lp) as f:
                lf = json.load(f)
            if lf.get("kernel") != entry:
                gen.die("%s: kernel must be %s" % (os.path.relpath(lp, HERE), entry))
            gen.validate_launch(lp, lf, ents[entry])
            lf["resources"] = {"sm_90": res[entry]}
            wr.write(lp, gen.dump_launch(lf))
            rows.append((name, entry, lf["grid"], lf["block"], res[entry]))
    for name, entry, grid, block, r in rows:
        print("dp/%-16s %-22s %-10s %-10s nvcc13 -rdc %d/%d" % (
            name, entry, "x".join(map(str, grid)), "x".join(map(str, block)),
            r["registers"], r["shared_bytes"]))
    return wr


if __name__ == "__main__":
    w = main()
    if w.check and w.diffs:
        gen.die("generated output differs from the committed files:\n  " + "\n  ".join(w.diffs))
