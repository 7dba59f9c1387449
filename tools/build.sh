#!/usr/bin/env bash
# Configures and builds neodb into ./build (Release). Extra arguments go to
# cmake's configure step (they come last, so -DNEODB_WITH_CUDA=OFF wins). Used
# by tools/test.sh and tools/demo.sh.
#   NEODB_BUILD_DIR  build directory (default build)
#   NEODB_JOBS       parallel jobs (default nproc)
#   NEODB_CUDA_PREFIX where tools/install_deps.sh put the CUDA toolkit from
#                    PyPI (default /opt/neodb-cuda; its toolkit/ is used)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${NEODB_BUILD_DIR:-build}
JOBS=${NEODB_JOBS:-$(nproc)}
# The CUDA backend is built whenever a toolkit is here: the system one
# (/usr/local/cuda, whose nvcc lives outside PATH) or the one install_deps
# assembled from NVIDIA's wheels. Named explicitly, so that a build dir first
# configured without a toolkit picks it up. No toolkit: a CPU build.
CUDA_ARGS=()
PYPI_TOOLKIT=${NEODB_CUDA_PREFIX:-/opt/neodb-cuda}/toolkit
for tk in /usr/local/cuda "$PYPI_TOOLKIT"; do
  if [ -x "$tk/bin/nvcc" ]; then
    export PATH="$tk/bin:$PATH"
    CUDA_ARGS=(-DNEODB_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$tk/bin/nvcc" -DCUDAToolkit_ROOT="$tk")
    echo "build.sh: CUDA toolkit $tk"
    break
  fi
done
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${CUDA_ARGS[@]}" "$@"
cmake --build "$BUILD_DIR" -j"$JOBS"
