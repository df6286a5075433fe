#!/usr/bin/env python3
"""Regenerate the PTX of the paver kernel corpus and the "resources" of its launch files.

Run through kernels/regenerate (which sets up the venv); it can also be run directly
with a Python that has the pinned NVIDIA packages installed:

    python kernels/gen.py            # regenerate everything
    python kernels/gen.py --check    # regenerate in memory, fail if any committed file differs

For every kernels/<name>/<name>.cu it writes

    <name>.compute_70.ptx      NVRTC 12.x, --gpu-architecture=compute_70
    <name>.compute_90.ptx      NVRTC 12.x, --gpu-architecture=compute_90 --generate-line-info

NVRTC runs through `paver compile` ($PAVER_BIN, else the repository's release build, built
with cargo when this script starts), the path every paver command takes for a .cu input.
    <name>.nvcc13.sm_90.ptx    nvcc 13.x, -ptx -arch=sm_90 -O3 -lineinfo

checks every PTX with ptxas (CUDA 12 ptxas -arch=sm_70 / sm_90 for the NVRTC files,
CUDA 13 ptxas -arch=sm_90 for the nvcc13 file), records the registers and shared
memory of every entry (sm_70 from the compute_70 PTX, sm_90 from the NVRTC compute_90
PTX) into the "resources" of the entry's launch files, validates the launch files
against the PTX entry signatures and prints a summary table.

Before compiling, any kernels/<name>/make_*.py script is run (in its folder) to
regenerate deterministic input files (e.g. the B+tree of btree_search).

Everything is deterministic: the same sources and compilers give byte-identical output.
nvcc writes the absolute path of the source into the `.file` directive; gen.py rewrites
that single path to the bare file name "<name>.cu". Because nvcc also hashes the absolute
source path into internal names in the debug strings (_INTERNAL_<hash>_...), nvcc always
compiles a copy of the source at the fixed path /tmp/paver-kernels-nvcc13/<name>/<name>.cu. NVRTC records "<cwd>/<program name>";
gen.py compiles from the kernel's folder and strips the same absolute path. CUDA 13 headers
named by nvcc's .file directives (e.g. device_atomic_functions.hpp) are rewritten from
<site-packages>/nvidia/cu13/bin/../include/... to nvidia/cu13/include/...
"""

import fcntl
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

LAUNCH_FORMAT = "paver-launch/1"
BUFFER_TYPES = {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64"}
INIT_RE = re.compile(
    r"^(zeros|ones|iota|fill\([^()]+\)|onehot\(\d+\)|rand\(\d+\)|rand\(\d+,[^,()]+,[^,()]+\)"
    r"|file\([^()]+\)|csr_row_ptr\(\d+,\d+,\d+,\d+\)|csr_col_idx\(\d+,\d+,\d+,\d+\))$"
)


def die(msg):
    print("gen.py: error: " + msg, file=sys.stderr)
    sys.exit(1)


# ----------------------------------------------------------------------------- tools

def site_nvidia_dirs():
    """All site-packages/nvidia folders visible to this interpreter."""
    out = []
    for p in sys.path:
        d = os.path.join(p, "nvidia")
        if os.path.isdir(d):
            out.append(d)
    return out


def find_tool(rel):
    for d in site_nvidia_dirs():
        p = os.path.join(d, rel)
        if os.path.exists(p):
            return p
    die("cannot find site-packages/nvidia/%s (run kernels/regenerate to install the compilers)" % rel)


class Nvrtc:
    """NVRTC through `paver compile`, the path every paver command takes for a .cu input
    (the pinned wheel's libnvrtc named with --nvrtc, so no other NVRTC is picked up)."""

    def __init__(self):
        self.lib = find_tool("cuda_nvrtc/lib/libnvrtc.so.12")
        self.paver = paver_binary()
        probe = os.path.join(tempfile.mkdtemp(prefix="paver-gen-"), "probe.cu")
        with open(probe, "w") as f:
            f.write('extern "C" __global__ void probe() {}\n')
        _, info = self._paver([probe, "--verbose"], os.path.dirname(probe))
        shutil.rmtree(os.path.dirname(probe))
        m = re.search(r"^paver: NVRTC (\d+\.\d+) ", info, re.M)
        if not m:
            die("paver compile --verbose did not name its NVRTC:\n" + info)
        self.version = m.group(1)

    def _paver(self, args, cwd):
        cmd = [self.paver, "compile", "--nvrtc", self.lib] + args
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            die("command failed (rc=%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
        return p.stdout, p.stderr

    def compile(self, name, cwd, arch, line_info=False):
        """The PTX of `cwd`/`name` for `arch`; paver's warnings (NVRTC's log without the
        deprecation note of pre-sm_75 architectures) are errors: the corpus compiles cleanly."""
        args = [name, "--arch", arch] + (["--nvrtc-opt=--generate-line-info"] if line_info else [])
        ptx, warnings = self._paver(args, cwd)
        if warnings.strip():
            die("NVRTC warnings for %s %s (the corpus must compile cleanly):\n%s"
                % (name, " ".join(args[1:]), warnings))
        return ptx


def paver_binary():
    """$PAVER_BIN, else the repository's release build (built with cargo if needed)."""
    exe = os.environ.get("PAVER_BIN")
    if exe:
        return exe
    repo = os.path.dirname(HERE)
    run(["cargo", "build", "--release", "-q", "--bin", "paver"], cwd=repo)
    return os.path.join(repo, "target", "release", "paver")


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        die("command failed (rc=%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stdout))
    return p.stdout


def tool_version(exe):
    out = run([exe, "--version"])
    m = re.search(r"release [0-9.]+, (V[0-9.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1]


# ----------------------------------------------------------------------------- PTX helpers

ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)", re.S)


def ptx_entries(ptx):
    """{entry name: number of params} in PTX order."""
    out = {}
    for m in ENTRY_RE.finditer(ptx):
        params = [p for p in m.group(2).split(",") if p.strip()]
        out[m.group(1)] = len(params)
    return out


def ptx_header(ptx):
    ver = re.search(r"^\.version\s+(\S+)", ptx, re.M).group(1)
    tgt = re.search(r"^\.target\s+(.+)$", ptx, re.M).group(1).strip()
    return ver, tgt


def ptxas_resources(ptxas, arch, ptx_text, label, extra=()):
    """Assemble PTX text (`extra`: more ptxas options); return {entry: {"registers": r,
    "shared_bytes": s}}."""
    with tempfile.TemporaryDirectory(prefix="paver-ptxas-") as td:
        src = os.path.join(td, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx_text)
        out = run([ptxas, "-arch=" + arch, "-v", "-warn-spills", "-Werror"] + list(extra) + [src,
                   "-o", os.path.join(td, "k.cubin")])
    res = {}
    cur = None
    for line in out.splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for '(\w+)'", line)
        if m:
            cur = m.group(1)
            res[cur] = {"registers": 0, "shared_bytes": 0}
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            cur = m.group(1) if m.group(1) in res else cur
            continue
        if cur is not None and "Used" in line:
            r = re.search(r"Used (\d+) registers", line)
            s = re.search(r"(\d+) bytes smem", line)
            res[cur]["registers"] = int(r.group(1)) if r else 0
            res[cur]["shared_bytes"] = int(s.group(1)) if s else 0
    if not res:
        die("could not parse ptxas -v output for %s:\n%s" % (label, out))
    return res


# ----------------------------------------------------------------------------- launch files

def dump_launch(obj):
    """Deterministic pretty form: one top-level key per line, one param per line."""
    def j(v):
        return json.dumps(v, separators=(", ", ": "), ensure_ascii=True)
    lines = ["{"]
    keys = list(obj.keys())
    for i, k in enumerate(keys):
        comma = "," if i + 1 < len(keys) else ""
        v = obj[k]
        if k == "params":
            lines.append('  "params": [')
            for pi, p in enumerate(v):
                lines.append("    " + j(p) + ("," if pi + 1 < len(v) else ""))
            lines.append("  ]" + comma)
        else:
            lines.append("  %s: %s%s" % (j(k), j(v), comma))
    lines.append("}")
    return "\n".join(lines) + "\n"


def validate_launch(path, lf, nparams):
    def bad(msg):
        die("%s: %s" % (os.path.relpath(path, HERE), msg))
    if lf.get("format") != LAUNCH_FORMAT:
        bad("format must be %s" % LAUNCH_FORMAT)
    for key in ("grid", "block"):
        v = lf.get(key)
        if not (isinstance(v, list) and len(v) == 3 and all(isinstance(x, int) and x >= 1 for x in v)):
            bad("%s must be three positive integers" % key)
    b = lf["block"]
    if b[0] * b[1] * b[2] > 1024 or b[2] > 64:
        bad("block too large")
    if lf["grid"][1] > 65535 or lf["grid"][2] > 65535:
        bad("grid y/z too large")
    if not isinstance(lf.get("dynamic_shared_bytes"), int):
        bad("dynamic_shared_bytes must be an integer")
    idx = sorted(p["index"] for p in lf["params"])
    # An index left out is a pointer without a buffer or a by-value parameter left open
    # (static analysis only, e.g. lavamd's par_str); none may be listed twice.
    if len(set(idx)) != len(idx) or not set(idx) <= set(range(nparams)):
        bad("params must list indices of 0..%d at most once (got %s)" % (nparams - 1, idx))
    by_index = {p["index"]: p for p in lf["params"]}
    for p in lf["params"]:
        if sum(k in p for k in ("value", "buffer", "bytes", "fields")) != 1:
            bad("param %d needs exactly one of value/buffer/bytes/fields" % p["index"])
        # by-value struct fields: their buffers are checked like parameters' buffers
        for fld in p.get("fields", []):
            if "buffer" in fld:
                validate_buffer(bad, path, p["index"], fld["buffer"], by_index)
        if "buffer" in p:
            validate_buffer(bad, path, p["index"], p["buffer"], by_index)


def validate_buffer(bad, path, index, buf, by_index):
    """Checks one buffer description (of a parameter or of a struct field)."""
    p = {"index": index}
    if buf.get("type") not in BUFFER_TYPES:
        bad("param %d: bad buffer type" % p["index"])
    init = buf.get("init", "")
    if not INIT_RE.match(init):
        bad("param %d: bad init %r" % (p["index"], init))
    if "len" in buf:
        if init.startswith("csr_col_idx") or "len_of" in buf:
            bad("param %d: len must be omitted for csr_col_idx / len_of" % p["index"])
        if not (isinstance(buf["len"], int) and buf["len"] >= 1):
            bad("param %d: bad len" % p["index"])
    elif "len_of" in buf:
        if buf["len_of"] not in by_index or "buffer" not in by_index[buf["len_of"]]:
            bad("param %d: len_of must name a buffer param" % p["index"])
    elif not init.startswith("csr_col_idx"):
        bad("param %d: len missing" % p["index"])
    m = re.match(r"csr_row_ptr\((\d+),", init)
    if m and buf.get("len") != int(m.group(1)) + 1:
        bad("param %d: csr_row_ptr len must be ROWS+1" % p["index"])
    m = re.match(r"file\((.+)\)$", init)
    if m:
        fp = os.path.join(os.path.dirname(path), m.group(1))
        esz = int(re.sub(r"\D", "", buf["type"])) // 8
        if not os.path.isfile(fp):
            bad("param %d: missing file %s" % (p["index"], m.group(1)))
        if os.path.getsize(fp) != esz * buf["len"]:
            bad("param %d: file %s has %d bytes, expected %d"
                % (p["index"], m.group(1), os.path.getsize(fp), esz * buf["len"]))


# ----------------------------------------------------------------------------- main

class Writer:
    def __init__(self, check):
        self.check = check
        self.diffs = []

    def write(self, path, text):
        old = None
        if os.path.exists(path):
            with open(path, "r", newline="") as f:
                old = f.read()
        if old == text:
            return
        if self.check:
            self.diffs.append(os.path.relpath(path, HERE))
            return
        with open(path, "w", newline="") as f:
            f.write(text)


# Fixed (not per-run) scratch folder for nvcc, see below; guarded by a lock file.
NVCC_DIR = "/tmp/paver-kernels-nvcc13"


def main():
    check = "--check" in sys.argv[1:]
    wr = Writer(check)
    os.makedirs(NVCC_DIR, exist_ok=True)
    lock = open(os.path.join(NVCC_DIR, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)

    nvrtc = Nvrtc()
    ptxas12 = find_tool("cuda_nvcc/bin/ptxas")
    nvcc13 = find_tool("cu13/bin/nvcc")
    ptxas13 = find_tool("cu13/bin/ptxas")
    versions = {
        "nvrtc": nvrtc.version,
        "ptxas12": tool_version(ptxas12),
        "nvcc13": tool_version(nvcc13),
        "ptxas13": tool_version(ptxas13),
    }
    print("NVRTC %(nvrtc)s, CUDA 12 ptxas %(ptxas12)s, nvcc %(nvcc13)s, CUDA 13 ptxas %(ptxas13)s" % versions)

    dirs = sorted(d for d in glob.glob(os.path.join(HERE, "*"))
                  if os.path.isdir(d) and os.path.isfile(os.path.join(d, os.path.basename(d) + ".cu")))
    if not dirs:
        die("no kernels found")

    rows = []
    seen_entries = {}
    headers = set()
    for d in dirs:
        name = os.path.basename(d)
        for script in sorted(glob.glob(os.path.join(d, "make_*.py"))):
            if check:
                # regenerate into a scratch copy and compare
                with tempfile.TemporaryDirectory(prefix="paver-make-") as td:
                    run([sys.executable, os.path.abspath(script), td], cwd=d)
                    for f in sorted(os.listdir(td)):
                        with open(os.path.join(td, f), "rb") as a:
                            new = a.read()
                        tgt = os.path.join(d, f)
                        if not os.path.exists(tgt) or open(tgt, "rb").read() != new:
                            wr.diffs.append(os.path.relpath(tgt, HERE))
            else:
                run([sys.executable, os.path.abspath(script), d], cwd=d)

        src_path = os.path.join(d, name + ".cu")

        # NVRTC records "<cwd>/<program name>" in .file: compile from the kernel's folder so
        # that this is the absolute source path, then strip it like nvcc's below.
        ptx70 = nvrtc.compile(name + ".cu", d, "compute_70")
        ptx90 = nvrtc.compile(name + ".cu", d, "compute_90", line_info=True)
        # nvcc derives the _INTERNAL_<hash> names in its debug strings from the absolute
        # source path, so it always compiles a copy at the same fixed path.
        nv_dir = os.path.join(NVCC_DIR, name)
        os.makedirs(nv_dir, exist_ok=True)
        nv_src = os.path.join(nv_dir, name + ".cu")
        shutil.copyfile(src_path, nv_src)
        out_ptx = os.path.join(nv_dir, name + ".ptx")
        run([nvcc13, "-ptx", "-arch=sm_90", "-O3", "-lineinfo", "-Werror", "all-warnings",
             name + ".cu", "-o", out_ptx], cwd=nv_dir)
        with open(out_ptx) as f:
            ptx13 = f.read()
        abs_src = os.path.abspath(src_path)
        if abs_src not in ptx90:
            die("PTX of %s does not name %s in its .file directive" % (name, abs_src))
        if nv_src not in ptx13:
            die("PTX of %s does not name %s in its .file directive" % (name, nv_src))
        ptx90 = ptx90.replace('"%s"' % abs_src, '"%s.cu"' % name)
        ptx13 = ptx13.replace('"%s"' % nv_src, '"%s.cu"' % name)
        # nvcc also names the CUDA 13 headers it inlined from (atomics...) by absolute path
        # inside the venv: make those relative to site-packages.
        ptx13 = re.sub(r'"[^"]*/nvidia/cu13/bin/\.\./include/', '"nvidia/cu13/include/', ptx13)
        for ptx in (ptx70, ptx90, ptx13):
            if HERE in ptx or "/tmp" in ptx or re.search(r'^\s*\.file\s+\d+\s+"/', ptx, re.M):
                die("PTX of %s still contains a machine-specific path" % name)

        variants = [
            ("compute_70", ptx70, ptxas12, "sm_70"),
            ("compute_90", ptx90, ptxas12, "sm_90"),
            ("nvcc13.sm_90", ptx13, ptxas13, "sm_90"),
        ]
        res = {}
        ents = None
        for tag, ptx, ptxas, arch in variants:
            wr.write(os.path.join(d, "%s.%s.ptx" % (name, tag)), ptx)
            headers.add((tag,) + ptx_header(ptx))
            res[tag] = ptxas_resources(ptxas, arch, ptx, "%s.%s.ptx" % (name, tag))
            e = ptx_entries(ptx)
            if ents is None:
                ents = e
            elif e != ents:
                die("%s: entries differ between PTX variants: %s vs %s" % (name, ents, e))
            if set(res[tag]) != set(e):
                die("%s.%s: ptxas entries %s != PTX entries %s" % (name, tag, sorted(res[tag]), sorted(e)))

        multi = len(ents) > 1
        for entry in sorted(ents):
            if entry in seen_entries:
                die("entry %s defined in both %s and %s" % (entry, seen_entries[entry], name))
            seen_entries[entry] = name
            for size in ("small", "paper"):
                fn = "%s.%s.json" % (size, entry) if multi else "%s.json" % size
                lp = os.path.join(d, fn)
                if not os.path.isfile(lp):
                    die("missing launch file %s/%s" % (name, fn))
                with open(lp) as f:
                    lf = json.load(f)
                if lf.get("kernel") != entry:
                    die("%s/%s: kernel must be %s" % (name, fn, entry))
                validate_launch(lp, lf, ents[entry])
                lf["resources"] = {
                    "sm_70": res["compute_70"][entry],
                    "sm_90": res["compute_90"][entry],
                }
                wr.write(lp, dump_launch(lf))
                if size == "small":
                    grid, block = lf["grid"], lf["block"]
            # stray launch files for entries that do not exist
            rows.append((name, entry, grid, block, res["compute_70"][entry], res["compute_90"][entry],
                         res["nvcc13.sm_90"][entry]))
        for lp in sorted(glob.glob(os.path.join(d, "*.json"))):
            b = os.path.basename(lp)
            ok = {"small.json", "paper.json"} if not multi else \
                {"%s.%s.json" % (s, e) for s in ("small", "paper") for e in ents}
            # waves*.json: make_waves.py; table2.json: make_table2.py
            if b not in ok and not b.startswith(("waves", "table2")):
                die("%s/%s does not belong to any entry" % (name, b))

    # kernels that launch kernels (kernels/dp/, compiled with -rdc=true): gen_dp.py
    import gen_dp
    gen_dp.main(wr, nvcc13, ptxas13)

    # summary
    print()
    print("%-16s %-26s %-14s %-12s %-11s %-11s %-11s" % (
        "dir", "entry", "small grid", "block", "sm_70 r/smem", "sm_90 r/smem", "nvcc13 r/smem"))
    print("-" * 108)
    for name, entry, grid, block, r70, r90, r13 in rows:
        def rs(r):
            return "%d/%d" % (r["registers"], r["shared_bytes"])
        print("%-16s %-26s %-14s %-12s %-12s %-12s %-11s" % (
            name, entry, "x".join(map(str, grid)), "x".join(map(str, block)), rs(r70), rs(r90), rs(r13)))
    print("-" * 108)
    print("%d kernel dirs, %d entries" % (len(dirs), len(rows)))
    for h in sorted(headers):
        print("PTX %-13s .version %s .target %s" % h)
    if check:
        if wr.diffs:
            die("generated output differs from the committed files:\n  " + "\n  ".join(wr.diffs))
        print("check: all generated files are identical to the committed ones")


if __name__ == "__main__":
    main()
