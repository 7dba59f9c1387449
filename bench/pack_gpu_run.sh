#!/usr/bin/env bash
# Collects what a GPU machine needs to run the CUDA tests and bench without
# building there: the binaries from BUILD (default: build) and every shared
# library they load that is neither part of the C runtime nor of CUDA (the GPU
# machine has CUDA 13: the driver's libcuda and cuBLASLt come from there).
# Output: .device-carry/ (git-ignored), to be named in the device tool's carry.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DEST=.device-carry
BINS=(
  "$BUILD/bench/cuda_encoder_bench"
  "$BUILD/tests/encoder/cuda_kernels_test"
  "$BUILD/tests/encoder/cuda_backend_test"
  "$BUILD/tests/encoder/cuda_unavailable_test"
)
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/lib"
for b in "${BINS[@]}"; do
  [[ -x "$b" ]] || { echo "missing $b: build it first (see bench/GPU_RUN.md)" >&2; exit 1; }
  cp "$b" "$DEST/bin/"
  # Resolved libraries, minus glibc/libstdc++/libgcc (the same Debian/Ubuntu
  # era on both sides) and CUDA's own.
  ldd "$b" | awk '/=> \//{print $3}' |
    grep -v -E '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|libcu(da|blas|blasLt|dart)\.so' |
    while read -r lib; do cp -L "$lib" "$DEST/lib/"; done
done
cp bench/torch_baseline.py bench/run_gpu_bench.sh "$DEST/"
du -sh "$DEST" "$DEST/bin" "$DEST/lib"
