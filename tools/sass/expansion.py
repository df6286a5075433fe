#!/usr/bin/env python3
"""How many SASS instructions one PTX instruction becomes: the table behind
`sim::timing::trace::sass_slots` (docs/VALIDATION.md, "The timing model against the H100's counters").

For each PTX instruction below, a kernel that loads its operands, executes it once and
stores the result is assembled by ptxas for sm_90 and sm_75 (Turing: CUDA 13 neither assembles nor disassembles sm_70; sm_75 shares Volta's SASS generation) and disassembled by cuobjdump
(both from the PyPI wheels `nvidia-cuda-nvcc` / `nvidia-cuda-cuobjdump`, CPU only). The
count is the instructions a warp issues on the common path: the kernel body up to EXIT,
minus the same kernel with a plain `mov` (or `add` for two operands, less one), minus a slow-path call that only special
operands take (`@P BRA` over `MOV R, imm; CALL`), plus the callee up to RET where the
call is unconditional (64-bit integer division).

    python3 tools/sass/expansion.py [--ptxas PATH] [--ptxas-sm75 PATH] [--cuobjdump PATH]
"""
import argparse, os, re, shutil, subprocess, sys, tempfile

OPS = [
    # (name, register type, operand count, instruction)
    ("div.rn.f32", "f32", 2, "div.rn.f32 %v3, %v1, %v2;"),
    ("div.full.f32", "f32", 2, "div.full.f32 %v3, %v1, %v2;"),
    ("div.approx.f32", "f32", 2, "div.approx.f32 %v3, %v1, %v2;"),
    ("div.approx.ftz.f32", "f32", 2, "div.approx.ftz.f32 %v3, %v1, %v2;"),
    ("rcp.rn.f32", "f32", 1, "rcp.rn.f32 %v3, %v1;"),
    ("rcp.approx.f32", "f32", 1, "rcp.approx.f32 %v3, %v1;"),
    ("rcp.approx.ftz.f32", "f32", 1, "rcp.approx.ftz.f32 %v3, %v1;"),
    ("sqrt.rn.f32", "f32", 1, "sqrt.rn.f32 %v3, %v1;"),
    ("sqrt.approx.f32", "f32", 1, "sqrt.approx.f32 %v3, %v1;"),
    ("sqrt.approx.ftz.f32", "f32", 1, "sqrt.approx.ftz.f32 %v3, %v1;"),
    ("rsqrt.approx.f32", "f32", 1, "rsqrt.approx.f32 %v3, %v1;"),
    ("rsqrt.approx.ftz.f32", "f32", 1, "rsqrt.approx.ftz.f32 %v3, %v1;"),
    ("ex2.approx.f32", "f32", 1, "ex2.approx.f32 %v3, %v1;"),
    ("ex2.approx.ftz.f32", "f32", 1, "ex2.approx.ftz.f32 %v3, %v1;"),
    ("lg2.approx.f32", "f32", 1, "lg2.approx.f32 %v3, %v1;"),
    ("lg2.approx.ftz.f32", "f32", 1, "lg2.approx.ftz.f32 %v3, %v1;"),
    ("sin.approx.f32", "f32", 1, "sin.approx.f32 %v3, %v1;"),
    ("cos.approx.f32", "f32", 1, "cos.approx.f32 %v3, %v1;"),
    ("div.rn.f64", "f64", 2, "div.rn.f64 %v3, %v1, %v2;"),
    ("rcp.rn.f64", "f64", 1, "rcp.rn.f64 %v3, %v1;"),
    ("sqrt.rn.f64", "f64", 1, "sqrt.rn.f64 %v3, %v1;"),
    ("div.s32", "s32", 2, "div.s32 %v3, %v1, %v2;"),
    ("div.u32", "u32", 2, "div.u32 %v3, %v1, %v2;"),
    ("rem.s32", "s32", 2, "rem.s32 %v3, %v1, %v2;"),
    ("rem.u32", "u32", 2, "rem.u32 %v3, %v1, %v2;"),
    ("div.s64", "s64", 2, "div.s64 %v3, %v1, %v2;"),
    ("div.u64", "u64", 2, "div.u64 %v3, %v1, %v2;"),
    ("rem.s64", "s64", 2, "rem.s64 %v3, %v1, %v2;"),
    ("rem.u64", "u64", 2, "rem.u64 %v3, %v1, %v2;"),
]

PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .{t} %v<4>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.{t} %v1, [%rd2];
  {second}
  {op}
  st.global.{t} [%rd2+16], %v3;
  ret;
}}
"""

LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def sass(ptxas, cuobjdump, arch, t, n, op, tmp):
    second = f"ld.global.{t} %v2, [%rd2+8];" if n == 2 else ""
    src = os.path.join(tmp, "k.ptx")
    with open(src, "w") as f:
        f.write(PTX.format(arch=arch, t=t, second=second, op=op))
    cubin = os.path.join(tmp, "k.cubin")
    subprocess.run([ptxas, f"-arch={arch}", "-O3", src, "-o", cubin], check=True)
    out = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True, text=True).stdout
    return [(int(m.group(1), 16), m.group(2)) for m in map(LINE.match, out.splitlines()) if m]


def common_path(insts):
    """Instructions issued on the common path: the body up to EXIT without a guarded
    slow-path call, plus the callee of an unconditional call."""
    body = []
    for addr, text in insts:
        body.append((addr, text))
        if text.split()[0] == "EXIT":
            break
    count = 0
    i = 0
    while i < len(body):
        text = body[i][1]
        if "CALL" in text:
            guarded = any(re.match(r"@!?P\d+ BRA", body[j][1]) for j in range(max(0, i - 6), i))
            if not guarded:
                target = int(re.search(r"0x([0-9a-f]+)", text).group(1), 16)
                callee = [t for a, t in insts if a >= target]
                for t in callee:
                    count += 1
                    if t.split()[0] == "RET.REL.NODEC" or t.startswith("RET"):
                        break
                count += 1  # the call itself
            else:
                count -= 1  # the MOV of the return address before the call, not issued
            i += 1
            continue
        if text.split()[0] == "NOP":
            i += 1
            continue
        count += 1
        i += 1
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "ptxas",
                    help="a ptxas for sm_90 (CUDA 13's has no sm_70)")
    ap.add_argument("--ptxas-sm75", default=None,
                    help="a ptxas that still targets sm_70 (nvidia-cuda-nvcc-cu12); default --ptxas")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "cuobjdump")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print("| PTX | sm_75 | sm_90 |")
        print("|---|---:|---:|")
        base = {}
        for name, t, n, op in OPS:
            row = []
            for arch in ("sm_75", "sm_90"):
                px = (a.ptxas_sm75 or a.ptxas) if arch == "sm_75" else a.ptxas
                c = common_path(sass(px, a.cuobjdump, arch, t, n, op, tmp))
                # The same kernel with one plain instruction in its place (a `mov`, which
                # ptxas folds away, or with two operands an `add`, one instruction, so that
                # the second load stays live): loads, store and exit.
                key = (arch, t, n)
                if key not in base:
                    plain = (f"add.{t} %v3, %v1, %v2;" if n == 2
                             else f"mov.{'b' + t[1:] if t[0] in 'su' else t} %v3, %v1;")
                    base[key] = common_path(sass(px, a.cuobjdump, arch, t, n, plain, tmp)) - (n == 2)
                row.append(c - base[key])
            print(f"| `{name}` | {row[0]} | {row[1]} |")


if __name__ == "__main__":
    sys.exit(main())
