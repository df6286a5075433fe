#!/usr/bin/env bash
# Regenerates lane_trips.ptx from lane_trips.cu with nvcc 13 (pip install nvidia-cuda-nvcc
# nvidia-cuda-crt nvidia-cuda-runtime nvidia-nvvm; NVCC= names the binary). histo_fig9.ptx
# is written by hand (its header says what it encodes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
NVCC="${NVCC:-nvcc}"
"$NVCC" -ptx -arch=sm_90 -O3 lane_trips.cu -o lane_trips.ptx
# nvcc writes the absolute source path into .file: keep the bare name.
sed -i 's|^\(\s*\.file\s\+[0-9]\+\s\+"\).*/lane_trips\.cu"|\1lane_trips.cu"|' lane_trips.ptx
# minkowski.ptx: NVRTC 12.9 through paver (pip install nvidia-cuda-nvrtc-cu12==12.9.86, or
# PAVER_NVRTC=/path/to/libnvrtc.so.12); PAVER= names the binary.
"${PAVER:-../../../target/release/paver}" compile minkowski.cu --arch compute_70 -o minkowski.ptx
