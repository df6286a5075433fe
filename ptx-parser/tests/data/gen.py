"""Generates tests/data/*.ptx for ptx-parser; run through tests/data/regenerate."""

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

# (kernel, NVRTC options, output suffix)
NVRTC_JOBS = [
    ("mm_tiled", ["--gpu-architecture=compute_70", "-G"], "nvrtc.debug_G.compute_70"),
    ("histogram", ["--gpu-architecture=compute_50"], "nvrtc.compute_50"),
    ("spmv_csr", ["--gpu-architecture=compute_50"], "nvrtc.compute_50"),
    ("spmv_csr", ["--gpu-architecture=compute_90a", "--generate-line-info"], "nvrtc.compute_90a"),
    ("hotspot", ["--gpu-architecture=compute_90a"], "nvrtc.compute_90a"),
]
# (kernel, extra clang options, output suffix)
CLANG_JOBS = [
    ("mm_tiled", ["-O2"], "clang14.sm_70.O2"),
    ("spmv_csr", ["-O2"], "clang14.sm_70.O2"),
    ("histogram", ["-O2"], "clang14.sm_70.O2"),
    ("hotspot", ["-O2"], "clang14.sm_70.O2"),
    ("hotspot", ["-O0"], "clang14.sm_70.O0"),
    ("histogram", ["-O2", "-g"], "clang14.sm_70.O2g"),
]


def die(msg):
    print("gen.py: error: " + msg, file=sys.stderr)
    sys.exit(1)


def find_tool(rel):
    for p in sys.path:
        f = os.path.join(p, "nvidia", rel)
        if os.path.exists(f):
            return f
    die("cannot find site-packages/nvidia/%s (run kernels/regenerate)" % rel)


def nvrtc_compile(lib, src, name, options):
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None):
        die("nvrtcCreateProgram(%s)" % name)
    try:
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        rc = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        if rc != 0:
            die("NVRTC failed on %s %s:\n%s" % (name, " ".join(options), log.value.decode()))
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, buf)
        return buf.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def load_nvrtc():
    """NVRTC 12 from the venv's nvidia-cuda-nvrtc-cu12 wheel, with argument types set."""
    lib = ctypes.CDLL(find_tool("cuda_nvrtc/lib/libnvrtc.so.12"))
    for fn in ("nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetProgramLogSize",
               "nvrtcGetProgramLog", "nvrtcGetPTXSize", "nvrtcGetPTX", "nvrtcDestroyProgram"):
        getattr(lib, fn).restype = ctypes.c_int
    lib.nvrtcCreateProgram.argtypes = [
        ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
        ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]
    lib.nvrtcCompileProgram.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return lib


def ptxas_ok(ptxas, arch, text, label):
    with tempfile.TemporaryDirectory(prefix="paver-ptxas-") as td:
        src = os.path.join(td, "k.ptx")
        with open(src, "w") as f:
            f.write(text)
        r = subprocess.run([ptxas, "-arch=" + arch, src, "-o", os.path.join(td, "k.cubin")],
                           capture_output=True, text=True)
    if r.returncode != 0:
        print("skip %s: ptxas -arch=%s rejects it:\n%s" % (label, arch, r.stderr.strip()))
    return r.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clang", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernels", required=True)
    a = ap.parse_args()
    lib = load_nvrtc()
    ptxas = find_tool("cuda_nvcc/bin/ptxas")
    written = []

    def emit(kernel, suffix, text, arch):
        label = "%s.%s.ptx" % (kernel, suffix)
        if ptxas_ok(ptxas, arch, text, label):
            with open(os.path.join(a.out, label), "w") as f:
                f.write(text)
            written.append(label)

    for kernel, opts, suffix in NVRTC_JOBS:
        with open(os.path.join(a.kernels, kernel, kernel + ".cu")) as f:
            src = f.read()
        text = nvrtc_compile(lib, src, kernel + ".cu", opts)
        arch = next(o for o in opts if o.startswith("--gpu-architecture=")).split("=")[1]
        emit(kernel, suffix, text, arch.replace("compute_", "sm_"))

    shim = os.path.join(a.out, "cuda_shim.h")
    for kernel, opts, suffix in CLANG_JOBS:
        cu = os.path.join(a.kernels, kernel, kernel + ".cu")
        cmd = [a.clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
               "--cuda-gpu-arch=sm_70", "-Xclang", "-target-feature", "-Xclang", "+ptx64",
               "-fms-extensions", "-include", shim, "-S", "-o", "-"] + opts + [cu]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=a.out)
        if r.returncode != 0:
            die("clang failed on %s:\n%s" % (cu, r.stderr))
        # Absolute paths in debug info would make the output depend on the checkout.
        text = r.stdout.replace(os.path.dirname(a.kernels) + "/", "")
        emit(kernel, suffix, text, "sm_70")
    print("wrote %d files: %s" % (len(written), ", ".join(written)))


if __name__ == "__main__":
    main()
