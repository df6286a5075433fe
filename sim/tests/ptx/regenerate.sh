#!/usr/bin/env bash
# Regenerates prodcons.ptx and spin3.ptx from their .cu with the project's own front door (NVRTC, loaded
# at run time: pip install nvidia-cuda-nvrtc-cu12==12.9.86 into the active environment, or
# PAVER_NVRTC=/path/to/libnvrtc.so.12). Run from anywhere; needs a built paver.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
PAVER="${PAVER:-../../../target/release/paver}"
"$PAVER" compile prodcons.cu --arch compute_70 -o prodcons.ptx
"$PAVER" compile spin3.cu --arch compute_70 -o spin3.ptx
