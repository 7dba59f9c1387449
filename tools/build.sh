#!/usr/bin/env bash
# Configures and builds neodb into ./build (Release). Extra arguments go to
# cmake's configure step. Used by tools/test.sh and tools/demo.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# nvcc lives outside PATH in the CUDA packages; CMake finds it through PATH.
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
BUILD_DIR=${NEODB_BUILD_DIR:-build}
JOBS=${NEODB_JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$BUILD_DIR" -j"$JOBS"
