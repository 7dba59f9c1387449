#!/usr/bin/env bash
# Collects what a GPU machine needs to run issue 50's proof (training on
# CUDA, bench/run_gpu_train.sh) without building there: the training tests
# and benches from BUILD (default: build) and every shared library they load
# that is neither part of the C runtime nor of CUDA, as bench/pack_gpu_run.sh
# does for inference, and the neodb CLI. They are ~200 MB unpacked (oneDNN,
# OpenBLAS, gRPC), over the device tool's 64 MiB carry, so they travel as one
# gzip-compressed tarball (about 45 MB) that run_gpu_train.sh unpacks on the
# device.
# Output: .device-carry/train.tar.gz (git-ignored), to be named in carry.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DEST=.device-carry
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
BINS=(
  "$BUILD/tests/encoder/cuda_train_kernels_test"
  "$BUILD/tests/encoder/cuda_train_test"
  "$BUILD/tests/encoder/train_device_test"
  "$BUILD/bench/train_bench"
  "$BUILD/bench/cuda_encoder_bench"
  "$BUILD/tools/neodb/neodb"
)
mkdir -p "$DEST" "$STAGE/train/bin" "$STAGE/train/lib"
for b in "${BINS[@]}"; do
  [[ -x "$b" ]] || { echo "missing $b: build it first (bench/GPU_TRAIN.md)" >&2; exit 1; }
  cp "$b" "$STAGE/train/bin/"
  strip --strip-unneeded "$STAGE/train/bin/$(basename "$b")"
  ldd "$b" | awk '/=> \//{print $3}' |
    grep -v -E '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|libcu(da|blas|blasLt|dart)\.so' |
    while read -r lib; do cp -L "$lib" "$STAGE/train/lib/"; done
done
tar -C "$STAGE" -czf "$DEST/train.tar.gz" train
du -sh "$STAGE/train" "$DEST/train.tar.gz"
